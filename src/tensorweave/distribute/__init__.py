"""tensorweave.distribute: clusters of tasks (OSDI 2016 §3.3) and tf.distribute's
strategies over local devices.

Clusters: `cluster.py` holds `tf.train.ClusterSpec` and the TF_CONFIG resolver that
schedulers launching TF1 jobs rely on; cluster_resolver.py, server.py (tf.train.Server),
master.py / worker.py / wire.py (steps over gRPC), launch.py and ray.py start tasks.

Strategies (tf.distribute in graph mode): distribute_lib.py (Strategy, ReplicaContext,
merge_call, the default strategy), one_device.py and mirrored.py (the strategies),
mirrored_run.py (a function built once per replica), values.py (PerReplica, Mirrored and
sync-on-read variables), cross_device_ops.py, input_lib.py (distributed datasets),
distributed_apply.py (an optimizer's all-reduced update), reduce_util.py."""
