"""runtime/recv_scheduling.py: Recvs start as late as their consumers allow (white
paper §5.2), which lowers the receiving device's peak memory."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import recv_scheduling
from tensorweave.runtime.partitioned_plan import PartitionedPlan

SIZE = 1 << 14            # float32 elements per transferred tensor (64 KiB: below the
                          # size from which elementwise ops write into their inputs)
NBYTES = SIZE * 4
STAGES = 6
_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _chain_model():
    """STAGES large tensors made on CPU:0, each consumed by a different stage of a chain
    on CPU:1."""
    with tf.device("/cpu:0"):
        p = tf.placeholder(tf.float32, [SIZE], name="p")
        bigs = [tf.add(p, float(k + 1), name="big%d" % k) for k in range(STAGES)]
    with tf.device("/cpu:1"):
        q = tf.placeholder(tf.float32, [SIZE], name="q")
        x = q
        for k in range(STAGES):
            x = tf.multiply(tf.tanh(x) + bigs[k], 0.5, name="stage%d" % k)
        out = tf.reduce_sum(x, name="out")
    return p, q, out


def _feeds(p, q):
    rng = np.random.RandomState(0)
    return {p: rng.rand(SIZE).astype(np.float32), q: rng.rand(SIZE).astype(np.float32)}


def _expected(fd, p, q):
    x = fd[q]
    for k in range(STAGES):
        x = (np.tanh(x) + (fd[p] + np.float32(k + 1))) * np.float32(0.5)
    return x.sum(dtype=np.float32)


def _traced_peak(graph, out, fd, **config):
    cfg = tf.ConfigProto(device_count={"CPU": 2}, **config)
    with tf.Session(graph=graph, config=cfg) as sess:
        md = tf.RunMetadata()
        v = sess.run(out, fd, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
        peaks = {d.device[-5:]: d.peak_bytes for d in md.step_stats.dev_stats}
        order = [n.node_name for d in md.step_stats.dev_stats if d.device.endswith("CPU:1")
                 for n in d.node_stats]
        return v, peaks, order


def test_late_recvs_lower_the_receiving_device_peak(graph, monkeypatch):
    p, q, out = _chain_model()
    fd = _feeds(p, q)
    v, peaks, order = _traced_peak(graph, out, fd)
    monkeypatch.setattr(recv_scheduling, "schedule_recvs_late", lambda parts: 0)
    v0, peaks0, order0 = _traced_peak(graph, out, fd)
    np.testing.assert_allclose(v, _expected(fd, p, q), rtol=1e-5)
    assert v == v0
    # without: all six Recvs at the start, all six tensors live at once on CPU:1
    assert peaks0["CPU:1"] >= (STAGES + 1) * NBYTES
    # with: at most the received tensor, the chain value and one temporary
    assert peaks["CPU:1"] <= 3 * NBYTES + 64
    assert peaks["CPU:1"] < peaks0["CPU:1"]
    # each Recv runs right after the stage before its consumer
    recvs = [i for i, n in enumerate(order) if "_recv_from_CPU_0" in n]
    assert len(recvs) == STAGES
    for k, i in enumerate(recvs):
        if k:
            assert order[i - 1] == "stage%d" % (k - 1) or \
                order[i - 1].startswith("Tanh"), order


def test_partition_graph_shows_the_gates(graph):
    p, q, out = _chain_model()
    cfg = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(config=cfg) as sess:
        md = tf.RunMetadata()
        sess.run(out, _feeds(p, q), options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=md)
    nodes = {n.name: n for g in md.partition_graphs for n in g.node}
    recv = nodes["big3_0/_recv_from_CPU_0"]
    assert recv.op == "_Recv"
    # gated by the other producer of its consumer (Tanh of the previous stage's value)
    assert list(recv.input) == ["^Tanh_3"]
    first = nodes["big0_0/_recv_from_CPU_0"]
    assert list(first.input) == ["^Tanh"]


def test_a_device_limit_that_early_recvs_exceed_is_met(graph):
    """A tracking allocator with a limit charges real lifetimes: the dataflow scheduler
    (the path of traced and threaded partitions) fits CPU:1 in 7 tensors (CPU:0 holds
    its 6) only with late Recvs."""
    p, q, out = _chain_model()
    fd = _feeds(p, q)
    limit_mb = (STAGES + 1) * NBYTES / float(1 << 20)
    cfg = tf.ConfigProto(device_count={"CPU": 2},
                         device_memory_limit_mb={"CPU": limit_mb})
    with tf.Session(config=cfg) as sess:
        np.testing.assert_allclose(sess.run(out, fd, options=_TRACE,
                                            run_metadata=tf.RunMetadata()),
                                   _expected(fd, p, q), rtol=1e-5)
        np.testing.assert_allclose(sess.run(out, fd), _expected(fd, p, q), rtol=1e-5)


def test_a_device_limit_that_early_recvs_exceed_fails_without_scheduling(graph,
                                                                        monkeypatch):
    monkeypatch.setattr(recv_scheduling, "schedule_recvs_late", lambda parts: 0)
    p, q, out = _chain_model()
    limit_mb = (STAGES + 1) * NBYTES / float(1 << 20)
    cfg = tf.ConfigProto(device_count={"CPU": 2},
                         device_memory_limit_mb={"CPU": limit_mb})
    with tf.Session(config=cfg) as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError, match="CPU:1"):
            sess.run(out, _feeds(p, q), options=_TRACE, run_metadata=tf.RunMetadata())


def _spread_mlp(n_devices):
    counter = itertools.count()
    with tf.Graph().as_default() as g:
        tf.set_random_seed(0)
        with tf.device(lambda op: "/cpu:%d" % (next(counter) % n_devices)):
            x = tf.placeholder(tf.float32, [5, 4], name="x")
            h = x
            for k in range(3):
                w = tf.constant(np.random.RandomState(k).rand(4, 4).astype(np.float32))
                h = tf.tanh(tf.matmul(h, w) + tf.reduce_mean(h, 0) * float(k))
            y = tf.reduce_sum(h * x)
            gx = tf.gradients(y, x)[0]
    return g, x, y, gx


@pytest.mark.parametrize("n_devices", [2, 3])
def test_round_robin_spread_graph_is_unchanged_in_value(n_devices):
    """Cross-device dependencies in both directions: gates never make a wait cycle."""
    xv = np.random.RandomState(1).rand(5, 4).astype(np.float32)
    g1, x1, y1, gx1 = _spread_mlp(1)
    with tf.Session(graph=g1) as s:
        want = s.run([y1, gx1], {x1: xv})
    g, x, y, gx = _spread_mlp(n_devices)
    cfg = tf.ConfigProto(device_count={"CPU": n_devices}, allow_soft_placement=True)
    with tf.Session(graph=g, config=cfg) as s:
        plan = s._get_plan((y, gx), (), (x,))
        assert isinstance(plan, PartitionedPlan)
        got = s.run([y, gx], {x: xv})
        traced = s.run([y, gx], {x: xv},
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=tf.RunMetadata())
    assert got[0] == want[0] and np.array_equal(got[1], want[1])
    assert traced[0] == want[0] and np.array_equal(traced[1], want[1])


def test_gates_that_would_form_a_cycle_are_dropped():
    """Two Recvs whose gates depend on each other through another device: none added."""
    from tensorweave.runtime import optimizer as _opt
    from tensorweave.runtime.partition import Partition, Partitions, TransferOp

    class Dev:
        def __init__(self, name):
            self.name = name

    A, B = Dev("A"), Dev("B")

    def node(name, typ, dev, inputs=(), key=""):
        n = _opt.Node(TransferOp(name, typ, dev.name, key), typ, {}, 1, name, False, dev)
        n.inputs = [(p, 0) for p in inputs]
        return n

    # on B: r1 (from A), r2 (from A); c1 = f(r1, x1), c2 = f(r2, x2);
    # x1 depends on r2 through A (r2 -> z -> send k3 -> recv on B -> x1), and
    # x2 depends on r1 the same way: gating r1 on x1 and r2 on x2 would be a cycle
    a_src = node("a_src", "Const", A)
    s1, s2 = node("s1", "_Send", A, [a_src], "k1"), node("s2", "_Send", A, [a_src], "k2")
    r1, r2 = node("r1", "_Recv", B, (), "k1"), node("r2", "_Recv", B, (), "k2")
    z1, z2 = node("z1", "Identity", B, [r1]), node("z2", "Identity", B, [r2])
    s3, s4 = node("s3", "_Send", B, [z2], "k3"), node("s4", "_Send", B, [z1], "k4")
    ra3, ra4 = node("ra3", "_Recv", A, (), "k3"), node("ra4", "_Recv", A, (), "k4")
    sa3, sa4 = node("sa3", "_Send", A, [ra3], "k5"), node("sa4", "_Send", A, [ra4], "k6")
    x1, x2 = node("x1", "_Recv", B, (), "k5"), node("x2", "_Recv", B, (), "k6")
    y1, y2 = node("y1", "Identity", B, [x1]), node("y2", "Identity", B, [x2])
    c1, c2 = node("c1", "Add", B, [r1, y1]), node("c2", "Add", B, [r2, y2])
    # a dataflow order of each partition where c1 and c2 are the first readers of r1, r2
    pa = Partition(A, _opt.StepGraph([a_src, s1, s2, ra3, ra4, sa3, sa4], [], []), (), ())
    b_nodes = [r1, r2, x1, x2, y1, y2, c1, c2, z1, z2, s3, s4]
    pb = Partition(B, _opt.StepGraph(list(b_nodes), [], []), (), ())
    parts = Partitions([pa, pb], ())
    # y1 depends on r2 only, y2 on r1 only: each gate alone is legal, both a cycle
    assert recv_scheduling.schedule_recvs_late(parts) == 0
    assert r1.control_inputs == [] and r2.control_inputs == []
    # without the second path (y2 no longer reads through r1) r2 is gated, r1 too
    y2.inputs = [(node("k", "Const", B), 0)]
    pb.graph.nodes = [y2.inputs[0][0]] + list(b_nodes)
    assert recv_scheduling.schedule_recvs_late(parts) >= 1
    assert y2 in r2.control_inputs
