"""tf.train.replica_device_setter and the ps strategies (issue 15).

The expected device strings are what TensorFlow 2.21 (`tf.compat.v1`, graph mode) gives
for the same graphs, recorded here as literals. TF builds reference variables there
("VariableV2"), tensorweave resource variables ("VarHandleOp"): the variable op, its
initial value, its assign and the ops around it get the same devices. Greedy placements
(TF1's tf.contrib.training, absent from TF 2.21) are computed by hand.
"""
import logging
import types

import pytest

import tensorweave as tf
from tensorweave.framework.shapes import TensorShape
from tensorweave.train.device_setter import (STANDARD_PS_OPS, GreedyLoadBalancingStrategy,
                                             _RoundRobinStrategy, byte_size_load_fn)

rds = tf.train.replica_device_setter


def _dev(x):
    """The device of a Tensor's, Variable's or Operation's op."""
    return (x if isinstance(x, tf.Operation) else x.op).device


# --- round robin, clusters, merging (devices recorded from TF) --------------------------

def test_round_robin_over_three_ps_tasks_for_seven_variables(graph):
    with tf.device(rds(ps_tasks=3)):
        vs = [tf.Variable(float(i), name="v%d" % i) for i in range(7)]
        total = tf.add_n(vs)
    assert [_dev(v) for v in vs] == ["/job:ps/task:%d" % t for t in (0, 1, 2, 0, 1, 2, 0)]
    assert [_dev(v.initial_value) for v in vs] == ["/job:worker"] * 7
    assert [v.initializer.device for v in vs] == [_dev(v) for v in vs]
    assert _dev(total) == "/job:worker"
    assert vs[0].op.type == "VarHandleOp"


def test_resource_variables_with_cluster_dict(graph):
    with tf.device(rds(cluster={"ps": ["a:1", "b:1"], "worker": ["w:1"]})):
        w = tf.Variable(tf.zeros([3, 4]), name="w", use_resource=True)
        b = tf.get_variable("b", shape=[4], use_resource=True,
                            initializer=tf.zeros_initializer())
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.matmul(x, w) + b
    assert graph.get_operation_by_name("zeros").device == "/job:worker"
    assert (_dev(w), _dev(b)) == ("/job:ps/task:0", "/job:ps/task:1")
    assert (w.initializer.device, b.initializer.device) == ("/job:ps/task:0",
                                                            "/job:ps/task:1")
    assert _dev(x) == "/job:worker"
    assert graph.get_operation_by_name("MatMul").device == "/job:worker"
    assert _dev(y) == "/job:worker"


def test_cluster_spec_and_inner_device_scopes(graph):
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1", "w:2"]})
    with tf.device(rds(cluster=cluster, worker_device="/job:worker/task:1")):
        v0 = tf.Variable(1.0, name="v0")
        with tf.device("/job:ps/task:2"):
            v1 = tf.Variable(2.0, name="v1")
        with tf.device("/job:foo"):
            v2 = tf.Variable(3.0, name="v2")
        with tf.device("/cpu:0"):
            v3 = tf.Variable(4.0, name="v3")
            c = tf.constant(1.0, name="c_cpu")
        with tf.device("/job:worker/task:0/device:GPU:1"):
            d = tf.identity(c, name="d_gpu")
        with tf.device("/gpu:0"):
            e = tf.identity(c, name="e_gpu")
        with tf.colocate_with(v0):
            f = tf.identity(c, name="f_coloc")
        with tf.colocate_with(v3.op):
            h = tf.identity(c, name="h_coloc")
    # v1's own task wins; under another job no ps task is chosen; v3 gets task 2
    # because the strategy was also called for v1 and v2
    assert [_dev(v) for v in (v0, v1, v2, v3)] == [
        "/job:ps/task:0", "/job:ps/task:2", "/job:foo", "/job:ps/task:2/device:CPU:0"]
    assert [_dev(v.initial_value) for v in (v0, v1, v2, v3)] == [
        "/job:worker/task:1", "/job:ps/task:2", "/job:foo/task:1",
        "/job:worker/task:1/device:CPU:0"]
    assert [v.initializer.device for v in (v0, v1, v2, v3)] == [
        _dev(v) for v in (v0, v1, v2, v3)]
    assert [_dev(t) for t in (c, d, e, f, h)] == [
        "/job:worker/task:1/device:CPU:0", "/job:worker/task:0/device:GPU:1",
        "/job:worker/task:1/device:GPU:0", "/job:ps/task:0", "/job:ps/task:2/device:CPU:0"]


def test_cluster_as_cluster_def_and_strategy_calls(graph):
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]})
    calls = []

    def strategy(op):
        calls.append(op.name)
        return 7

    with tf.device(rds(cluster=cluster.as_cluster_def(), ps_strategy=strategy)):
        v0 = tf.Variable(1.0, name="v0")
        with tf.device("/job:ps/task:1"):
            v1 = tf.Variable(1.0, name="v1")
        with tf.device("/job:other/task:1"):
            v2 = tf.Variable(1.0, name="v2")
    # called for an op with its own task in the ps job, not for one in another job
    assert calls == ["v0", "v1"]
    assert [_dev(v) for v in (v0, v1, v2)] == [
        "/job:ps/task:7", "/job:ps/task:1", "/job:other/task:1"]
    assert [_dev(v.initial_value) for v in (v0, v1, v2)] == [
        "/job:worker", "/job:ps/task:1", "/job:other/task:1"]


def test_ps_and_worker_device_fields(graph):
    calls = []

    def strategy(op):
        calls.append(op.name)
        return 1

    with tf.device(rds(ps_tasks=2, ps_device="/job:ps/task:5/device:GPU:1",
                       worker_device="/job:worker/replica:0/task:2/device:GPU:0")):
        v3 = tf.Variable(1.0, name="v3")
        c3 = tf.constant(1.0, name="c3")
    # a ps_device without a job: no task is chosen, the strategy is not called
    with tf.device(rds(ps_tasks=2, ps_device="/cpu:0", ps_strategy=strategy)):
        v4 = tf.Variable(1.0, name="v4")
    # nested setters: the inner one decides, the outer one's fields are already set
    with tf.device(rds(ps_tasks=2, ps_device="/job:ps")):
        with tf.device(rds(ps_tasks=3, ps_device="/job:ps2")):
            v5 = tf.Variable(1.0, name="v5")
            v6 = tf.Variable(1.0, name="v6")
            c6 = tf.constant(1.0, name="c6")
    # tf.device(None) hides the device function
    with tf.device(rds(ps_tasks=2, worker_device="/job:worker/task:3")):
        with tf.device(None):
            v7 = tf.Variable(1.0, name="v7")
    assert calls == []
    assert [(_dev(v), _dev(v.initial_value)) for v in (v3, v4, v5, v6, v7)] == [
        ("/job:ps/task:0/device:GPU:1", "/job:worker/replica:0/task:2/device:GPU:0"),
        ("/device:CPU:0", "/job:worker"),
        ("/job:ps2/task:0", "/job:worker"),
        ("/job:ps2/task:1", "/job:worker"),
        ("", "")]
    assert _dev(c3) == "/job:worker/replica:0/task:2/device:GPU:0"
    assert _dev(c6) == "/job:worker"


def test_outer_device_scope_merges_under_the_setter(graph):
    with tf.device("/job:worker/task:1/cpu:0"):
        with tf.device(rds(ps_tasks=2)):
            v0 = tf.Variable(1.0, name="v0")
            v1 = tf.Variable(tf.ones([2]), name="v1", use_resource=True)
            y = v0 * 2.0
    assert _dev(v0) == "/job:ps/task:0/device:CPU:0"
    assert _dev(v0.initial_value) == "/job:worker/task:1/device:CPU:0"
    assert v0.initializer.device == "/job:ps/task:0/device:CPU:0"
    assert _dev(v1) == "/job:ps/task:1/device:CPU:0"
    assert v1.initializer.device == "/job:ps/task:1/device:CPU:0"
    assert graph.get_operation_by_name("ones").device == "/job:worker/task:1/device:CPU:0"
    assert _dev(y) == "/job:worker/task:1/device:CPU:0"
    assert graph.get_operation_by_name("mul/y").device == "/job:worker/task:1/device:CPU:0"


def test_merge_devices_false_keeps_devices_as_they_are(graph, caplog):
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        fn = rds(ps_tasks=2, merge_devices=False)
    assert "It is recommended to set merge_devices=true" in caplog.text
    with tf.device(fn):
        v0 = tf.Variable(1.0, name="v0")
        with tf.device("/cpu:0"):
            v1 = tf.Variable(2.0, name="v1")
            k = tf.constant(3.0, name="k")
        v2 = tf.Variable(3.0, name="v2")
        z = k + 1.0
    # v1 had a device: the strategy was not called for it, so v2 gets task 1
    assert [_dev(v) for v in (v0, v1, v2)] == [
        "/job:ps/task:0", "/device:CPU:0", "/job:ps/task:1"]
    assert [_dev(v.initial_value) for v in (v0, v1, v2)] == [
        "/job:worker", "/device:CPU:0", "/job:worker"]
    assert (_dev(k), _dev(z)) == ("/device:CPU:0", "/job:worker")


def test_ps_ops_override(graph):
    with tf.device(rds(ps_tasks=2, ps_ops=["Const", "Placeholder"],
                       ps_device="/job:param/cpu:0", worker_device="")):
        a = tf.constant(1.0, name="a")
        p = tf.placeholder(tf.float32, name="p")
        v = tf.Variable(2.0, name="v")
        m = a * p
    assert [_dev(t) for t in (a, p, v.initial_value)] == [
        "/job:param/task:0/device:CPU:0", "/job:param/task:1/device:CPU:0",
        "/job:param/task:0/device:CPU:0"]
    # not a ps op, and no worker device
    assert (_dev(v), v.initializer.device, _dev(m)) == ("", "", "")


def test_optimizer_slots_go_with_their_variables(graph):
    with tf.device(rds(ps_tasks=2)):
        gs = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", shape=[2], initializer=tf.ones_initializer())
        loss = tf.reduce_sum(w * w)
        opt = tf.train.MomentumOptimizer(0.1, 0.9)
        train = opt.minimize(loss, global_step=gs)
    assert (_dev(gs), _dev(w)) == ("/job:ps/task:0", "/job:ps/task:1")
    assert _dev(opt.get_slot(w, "momentum")) == "/job:ps/task:1"
    assert _dev(loss) == "/job:worker"
    assert graph.get_operation_by_name("Momentum/learning_rate").device == "/job:worker"
    applies = [op for op in graph.get_operations() if "ApplyMomentum" in op.type]
    assert [op.device for op in applies] == ["/job:ps/task:1"]
    assert train.device == "/job:ps/task:0"  # the global step's increment
    grads = [op for op in graph.get_operations() if op.name.startswith("gradients/")]
    assert grads and {op.device for op in grads} == {"/job:worker"}


def test_device_function_takes_node_defs(graph):
    fn = rds(ps_tasks=2)
    node = type(tf.constant(1.0).op.node_def)()
    node.name, node.op = "x", "VariableV2"
    assert (fn(node), fn(node)) == ("/job:ps/task:0", "/job:ps/task:1")
    node.op, node.device = "Const", "/device:GPU:0"
    assert fn(node) == "/job:worker/device:GPU:0"


def test_no_ps_tasks_gives_none():
    assert rds() is None
    assert rds(ps_tasks=0) is None
    assert rds(cluster={"worker": ["w:1"]}) is None  # no ps job
    assert rds(cluster={"ps": ["a:1"]}, ps_device="") is None
    # the cluster's count wins over ps_tasks
    assert callable(rds(cluster={"ps": ["a:1"]}, ps_tasks=0))
    assert callable(rds(cluster={"myps": ["a:1", "b:2"]}, ps_device="/job:myps"))
    assert rds(cluster=tf.train.ClusterSpec({"worker": ["w:1"]})) is None


def test_cluster_ps_task_count_drives_round_robin(graph):
    fn = rds(cluster=tf.train.ClusterSpec({"ps": ["a:1", "b:1"], "worker": ["w:1"]}),
             ps_tasks=5)
    with tf.device(fn):
        vs = [tf.Variable(1.0) for _ in range(3)]
    assert [_dev(v) for v in vs] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]


def test_errors():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        rds(ps_tasks=1, ps_strategy=3)
    with pytest.raises(TypeError, match="must be a dictionary mapping one or more job"):
        rds(cluster=[1, 2])
    fn = rds(ps_tasks=1, ps_device="/foo:1")
    with pytest.raises(ValueError, match="Unknown attribute 'foo' is encountered"):
        fn(types.SimpleNamespace(type="VarHandleOp", device=""))


def test_standard_ps_ops_and_round_robin():
    assert STANDARD_PS_OPS == (
        "Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
        "MutableHashTableV2", "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
        "MutableDenseHashTable", "MutableDenseHashTableV2", "VarHandleOp",
        "BoostedTreesEnsembleResourceHandleOp",
        "BoostedTreesQuantileStreamResourceHandleOp", "ResourceConditionalAccumulator",
        "DecisionTreeResource")
    rr = _RoundRobinStrategy(3)
    assert [rr(None) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]


# --- greedy load balancing (hand-computed) -------------------------------------------------

def test_greedy_by_variable_bytes(graph):
    sizes = [("a", tf.float32, [1000]), ("b", tf.float32, [10]), ("c", tf.float64, [100]),
             ("d", tf.int32, [5]), ("e", tf.float32, [300]), ("f", tf.float32, [1]),
             ("g", tf.float32, [1000]), ("h", tf.int8, [2, 3])]
    strategy = GreedyLoadBalancingStrategy(3, byte_size_load_fn)
    with tf.device(rds(ps_tasks=3, ps_strategy=strategy)):
        vs = [tf.get_variable(n, shape=s, dtype=d, initializer=tf.zeros_initializer())
              for n, d, s in sizes]
    # bytes 4000, 40, 800, 20, 1200, 4, 4000, 6; loads after each:
    # [4000,0,0] [4000,40,0] [4000,40,800] [4000,60,800] [4000,1260,800]
    # [4000,1260,804] [4000,1260,4804] [4000,1266,4804]
    assert [_dev(v) for v in vs] == ["/job:ps/task:%d" % t
                                     for t in (0, 1, 2, 1, 1, 2, 2, 1)]
    assert strategy._ps_loads == [4000, 1266, 4804]


def test_greedy_by_output_bytes_of_other_ops(graph):
    strategy = GreedyLoadBalancingStrategy(2, byte_size_load_fn)
    with tf.device(rds(ps_tasks=2, ps_ops=["Placeholder"], ps_strategy=strategy)):
        ps = [tf.placeholder(tf.float32, [100]), tf.placeholder(tf.float64, [10]),
              tf.placeholder(tf.int8, [50]), tf.placeholder(tf.float32, [2, 3]),
              tf.placeholder(tf.float16, [200]), tf.placeholder(tf.bool, [])]
    # bytes 400, 80, 50, 24, 400, 1; loads [400,0] [400,80] [400,130] [400,154]
    # [400,554] [401,554]
    assert [_dev(p) for p in ps] == ["/job:ps/task:%d" % t for t in (0, 1, 1, 1, 1, 0)]


def test_greedy_ties_go_to_the_lowest_task():
    strategy = GreedyLoadBalancingStrategy(3, lambda op: op)
    # loads [5,0,0] [5,5,0] [5,5,5] [6,5,5] [6,5,5] [6,8,5] [6,8,5]
    assert [strategy(load) for load in (5, 5, 5, 1, 0, 3, 0)] == [0, 1, 2, 0, 1, 1, 2]
    assert strategy._ps_loads == [6, 8, 5]
    assert type(strategy(0)) is int
    with pytest.raises(ValueError, match="empty"):
        GreedyLoadBalancingStrategy(0, lambda op: 1)(None)


def test_byte_size_load_fn(graph):
    assert byte_size_load_fn(tf.constant([[1.0, 2.0, 3.0]] * 2).op) == 24
    assert byte_size_load_fn(tf.placeholder(tf.float64, [4, 5]).op) == 160
    assert byte_size_load_fn(tf.placeholder(tf.int16, []).op) == 2
    v = tf.Variable(tf.zeros([3, 4], tf.float64))
    assert byte_size_load_fn(v.op) == 96  # the variable, not its resource handle
    with pytest.raises(ValueError, match="must have a single output"):
        byte_size_load_fn(tf.no_op(name="nothing"))
    with pytest.raises(ValueError, match="must have a single output"):
        byte_size_load_fn(tf.split(tf.zeros([4]), 2)[0].op)
    with pytest.raises(ValueError, match="Shape <unknown> is not fully defined"):
        byte_size_load_fn(tf.placeholder(tf.float32).op)
    with pytest.raises(ValueError, match=r"is not fully defined"):
        byte_size_load_fn(tf.placeholder(tf.float32, [None, 3]).op)
    partial = tf.identity(tf.placeholder(tf.float32, [None, 3]), name="partial")
    with pytest.raises(ValueError, match="has no attr named 'shape'"):
        byte_size_load_fn(partial.op)
    unshaped = tf.Variable(tf.placeholder_with_default(tf.zeros([2]), [None]),
                           validate_shape=False)
    with pytest.raises(ValueError, match="is not fully defined"):
        byte_size_load_fn(unshaped.op)


def test_byte_size_load_fn_falls_back_to_the_shape_attr():
    # a legacy "Variable" op whose output shape is not yet set
    out = types.SimpleNamespace(dtype=tf.float32, get_shape=lambda: TensorShape(None))
    op = types.SimpleNamespace(type="Variable", outputs=[out],
                               get_attr={"shape": TensorShape([2, 5])}.__getitem__)
    assert byte_size_load_fn(op) == 40


def test_importable_places_and_not_exported():
    from tensorweave.distribute import strategies
    assert strategies.GreedyLoadBalancingStrategy is GreedyLoadBalancingStrategy
    assert strategies.byte_size_load_fn is byte_size_load_fn
    assert not hasattr(tf.train, "GreedyLoadBalancingStrategy")
    assert not hasattr(tf.train, "byte_size_load_fn")
    assert tf.train.replica_device_setter is rds
    assert rds.__module__ == "tensorweave.train.device_setter"


def test_variables_inside_colocate_with_still_advance_the_round_robin(graph):
    # TF1's variables are made under init_scope, which brings back the device functions
    # colocate_with sets aside: the setter is called (its round robin moves on), then
    # the variable takes the device of the op it is colocated with.
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        a = tf.Variable(1.0, name="a")          # ps 0
        with tf.colocate_with(a):
            b = tf.Variable(2.0, name="b")      # counted (ps 1), placed with a
        c = tf.Variable(3.0, name="c")          # ps 2
        with tf.init_scope():
            d = tf.Variable(4.0, name="d")      # ps 0
    assert [v.op.device for v in (a, b, c, d)] == [
        "/job:ps/task:0", "/job:ps/task:0", "/job:ps/task:2", "/job:ps/task:0"]
    assert b.op.colocation_groups() == [b"loc:@a"]
