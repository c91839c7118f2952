"""tensorweave.distribute: clusters of tasks (OSDI 2016 §3.3). `cluster.py` holds
`tf.train.ClusterSpec` and the TF_CONFIG resolver that schedulers launching TF1 jobs
rely on."""
