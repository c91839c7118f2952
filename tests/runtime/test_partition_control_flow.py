"""A step with control flow over several devices: the control flow on one device with
live root-frame values crossing devices, and loops and conds split across devices
(EuroSys 2018 §4.4: deadness over Send/Recv, keys tagged with frame and iteration, the
control-loop state machine of Figure 6 on every device of a split loop)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.partitioned_plan import PartitionedPlan
from tensorweave.runtime.plan import TaggedPlan

DEV = "/job:localhost/replica:0/task:0/device:CPU:%d"


@pytest.fixture(autouse=True)
def _partitioned(monkeypatch):
    """These tests are of the partitioned machinery, which a step spanning CPU devices
    of one process skips by default (partitioned_plan.runs_fused; tested in
    test_fused_partitions.py)."""
    monkeypatch.setenv("TW_FUSE_HOST_PARTITIONS", "0")


def _model(spread):
    d = (lambda k: "/cpu:%d" % k) if spread else (lambda k: "")
    with tf.device(d(1)):
        n = tf.placeholder(tf.int32, [], name="n")
        x = tf.placeholder(tf.float32, [4], name="x")
        x2 = x * 2.0
    with tf.device(d(0)):
        _, r = tf.while_loop(lambda i, v: i < n,
                             lambda i, v: (i + 1, tf.tanh(v) * 1.5), [0, x2])
        c = tf.cond(n > 2, lambda: r * 2.0, lambda: r - 1.0)
    with tf.device(d(2)):
        y = tf.reduce_sum(c * x) + 1.0
    with tf.device(d(0)):
        g = tf.gradients(y, x)[0]
    return n, x, y, g


def _run(spread, n_value, trace=False):
    with tf.Graph().as_default():
        n, x, y, g = _model(spread)
        cfg = tf.ConfigProto(device_count={"CPU": 3})
        with tf.Session(config=cfg) as sess:
            fd = {n: n_value, x: np.arange(4, dtype=np.float32) / 4}
            kw = {}
            if trace:
                kw = dict(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=tf.RunMetadata())
            out = sess.run([y, g], fd, **kw)
            plan = sess._get_plan((y, g), (), (n, x))
            return out, plan, kw.get("run_metadata")


@pytest.mark.parametrize("n_value", [1, 4])
def test_loop_cond_and_gradient_equal_one_device_bit_for_bit(n_value):
    want, plan1, _ = _run(False, n_value)
    got, plan, _ = _run(True, n_value)
    traced, _, md = _run(True, n_value, trace=True)
    assert not isinstance(plan1, PartitionedPlan)
    assert isinstance(plan, PartitionedPlan) and len(plan.plans) == 3
    # the partition holding the control flow runs on the tagged executor
    assert sum(isinstance(p, TaggedPlan) for p in plan.plans) == 1
    assert plan.inline_order is None
    for out in (got, traced):
        assert type(out[0]) is type(want[0]) and out[0] == want[0]
        assert out[1].dtype == np.float32 and np.array_equal(out[1], want[1])
    devices = {d.device for d in md.step_stats.dev_stats}
    assert devices == {DEV % 0, DEV % 1, DEV % 2}


@pytest.mark.parametrize("pred", [True, False])
def test_a_cond_whose_branches_sit_on_different_devices(graph, pred):
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [], name="x")

    def true_branch():
        with tf.device("/cpu:1"):
            return tf.identity(x * 3.0, name="in_true")

    def false_branch():
        with tf.device("/cpu:2"):
            return tf.identity(x - 1.0, name="in_false")
    with tf.device("/cpu:0"):
        r = tf.cond(p, true_branch, false_branch)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
        # the untaken branch's device receives a dead value and finishes: no hang
        out = sess.run(r, {p: pred, x: 2.0},
                       options=tf.RunOptions(timeout_in_ms=20000))
        assert type(out) is np.float32 and out == (6.0 if pred else 1.0)
        plan = sess._get_plan((r,), (), (p, x))
        assert isinstance(plan, PartitionedPlan) and len(plan.plans) == 3
        assert all(isinstance(q, TaggedPlan) for q in plan.plans)


def test_an_untaken_branch_fetched_from_the_control_flow_partition(graph):
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [], name="x")
        x2 = x + 1.0
    with tf.device("/cpu:0"):
        p = tf.placeholder(tf.bool, [], name="p")
        _, sw_t = _switch(x2, p)
        t = tf.identity(sw_t, name="taken_if_true")
    with tf.device("/cpu:2"):
        z = x2 * 2.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
        assert sess.run([t, z], {x: 1.0, p: True}) == [2.0, 4.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
            sess.run([z, t], {x: 1.0, p: False})


def _switch(data, pred):
    from tensorweave.ops.control_flow import control_flow_ops
    return control_flow_ops.switch(data, pred)


def test_a_failing_partition_cancels_the_control_flow_partition(graph):
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [], name="x")
        bad = tf.check_numerics(x, "no nan here")
    with tf.device("/cpu:0"):
        r = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + bad), [0, 0.0])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        assert sess.run(r, {x: 1.0})[1] == 3.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="no nan here"):
            sess.run(r, {x: np.nan})


def _config(n):
    return tf.ConfigProto(device_count={"CPU": n})


_OPTS = dict(options=tf.RunOptions(timeout_in_ms=20000))


def _matmul_loop(width, spread=True, parallel_iterations=10, unsized=False):
    """A loop whose counter is on CPU:0 and whose body's width-1 matmuls sit on CPU:1..
    CPU:width-1 (all on the default device unless `spread`); with `unsized` the
    matmuls' shapes are unknown (kernels that may be heavy: the thread pool)."""
    d = (lambda k: "/cpu:%d" % k) if spread else (lambda k: "")
    rng = np.random.RandomState(0)
    with tf.device(d(0)):
        w = tf.constant(rng.randn(6, 6).astype(np.float32) / 3, name="w")
        x0 = tf.constant(rng.randn(3, 6).astype(np.float32), name="x0")
        if unsized:
            x0 = tf.placeholder_with_default(x0, [None, 6])
        n = tf.placeholder(tf.int32, [], name="n")

        def body(i, x):
            y = x
            for k in range(1, width):
                with tf.device(d(k % width)):
                    y = tf.tanh(tf.matmul(y, w)) + tf.cast(i, tf.float32) * 0.01
            return i + 1, y
        r = tf.while_loop(lambda i, x: i < n, body, [0, x0],
                          parallel_iterations=parallel_iterations)
    return n, r


@pytest.mark.parametrize("width", [2, 3])
@pytest.mark.parametrize("n_iter", [0, 1, 5])
@pytest.mark.parametrize("unsized", [False, True])
def test_a_loop_body_spanning_devices_equals_one_device_bit_for_bit(width, n_iter, unsized,
                                                                    numpy_kernels):
    with tf.Graph().as_default():
        n, r = _matmul_loop(width, spread=False, unsized=unsized)
        with tf.Session(config=_config(width)) as sess:
            want = sess.run(r, {n: n_iter})
            assert not isinstance(sess._get_plan(tuple(r), (), (n,)), PartitionedPlan)
    with tf.Graph().as_default():
        n, r = _matmul_loop(width, unsized=unsized)
        cfg = _config(width)
        cfg.inter_op_parallelism_threads = 2
        with tf.Session(config=cfg) as sess:
            got = sess.run(r, {n: n_iter}, **_OPTS)
            again = sess.run(r, {n: n_iter}, **_OPTS)
            plan = sess._get_plan(tuple(r), (), (n,))
    assert isinstance(plan, PartitionedPlan) and len(plan.plans) == width
    assert all(isinstance(q, TaggedPlan) for q in plan.plans)
    # cheap kernels: the partitions take turns on the calling thread; kernels that may
    # be heavy: each partition on its own thread, heavy kernels on the pool
    assert plan.interleaved is not unsized
    for out in (got, again):
        assert type(out) is tuple and len(out) == 2
        assert out[0] == want[0] == n_iter
        assert out[1].dtype == np.float32 and np.array_equal(out[1], want[1])


def test_iterations_in_flight_never_mix(graph):
    """With many iterations in flight at once, each Recv takes its own iteration's value
    (the keys carry frame and iteration)."""
    with tf.device("/cpu:0"):
        n = tf.placeholder(tf.int32, [], name="n")

        def body(i, acc):
            with tf.device("/cpu:1"):
                sq = tf.cast(i * i, tf.float32)  # independent of the previous iteration
            return i + 1, acc + sq
        r = tf.while_loop(lambda i, acc: i < n, body, [0, 0.0], parallel_iterations=32)
    with tf.Session(config=_config(2)) as sess:
        for k in (0, 1, 7, 40):
            out = sess.run(r, {n: k}, **_OPTS)
            assert out[0] == k and out[1] == float(sum(i * i for i in range(k)))


@pytest.mark.parametrize("pred", [True, False])
def test_a_split_loop_inside_a_cond_and_a_cond_inside_a_split_loop(graph, pred):
    with tf.device("/cpu:0"):
        p = tf.placeholder(tf.bool, [], name="p")
        x = tf.placeholder(tf.float32, [], name="x")

        def looping():
            def body(i, v):
                with tf.device("/cpu:1"):
                    v = tf.cond(v > 4.0, lambda: v - 3.0, lambda: v * 2.0)
                return i + 1, v
            return tf.while_loop(lambda i, v: i < 5, body, [0, x])[1]
        r = tf.cond(p, looping, lambda: x + 100.0)
    want = 1.0
    for _ in range(5):
        want = want - 3.0 if want > 4.0 else want * 2.0
    with tf.Session(config=_config(2)) as sess:
        out = sess.run(r, {p: pred, x: 1.0}, **_OPTS)
        assert out == (want if pred else 101.0)


def test_nested_loops_across_devices_equal_one_device():
    def build(spread):
        d = (lambda k: "/cpu:%d" % k) if spread else (lambda k: "")
        with tf.device(d(0)):
            n = tf.placeholder(tf.int32, [], name="n")
            x0 = tf.constant(np.linspace(-1, 1, 4).astype(np.float32))

            def outer(i, x):
                def inner(j, y):
                    with tf.device(d(1)):
                        z = tf.sin(y) * 1.5 + tf.cast(j, tf.float32)
                    with tf.device(d(2)):
                        z = z * 0.5
                    return j + 1, z
                _, y = tf.while_loop(lambda j, y: j < i, inner, [0, x])
                with tf.device(d(1)):
                    y = y - 0.25
                return i + 1, y
            return n, tf.while_loop(lambda i, x: i < n, outer, [0, x0])
    results = []
    for spread in (False, True):
        with tf.Graph().as_default():
            n, r = build(spread)
            with tf.Session(config=_config(3)) as sess:
                results.append([sess.run(r, {n: k}, **_OPTS) for k in (0, 1, 4)])
    for want, got in zip(*results):
        assert got[0] == want[0] and got[1].dtype == np.float32
        assert np.array_equal(got[1], want[1])


def test_the_gradient_of_a_loop_spanning_devices_equals_one_device():
    def build(spread):
        d = (lambda k: "/cpu:%d" % k) if spread else (lambda k: "")
        with tf.device(d(0)):
            x = tf.placeholder(tf.float32, [3, 4], name="x")
            w = tf.constant(np.random.RandomState(1).randn(4, 4).astype(np.float32) / 2)

            def body(i, y):
                with tf.device(d(1)):
                    y = tf.tanh(tf.matmul(y, w))
                return i + 1, y
            _, y = tf.while_loop(lambda i, y: i < 4, body, [0, x])
            loss = tf.reduce_sum(y * y)
            g = tf.gradients(loss, [x, w])
        return x, loss, g
    feed = np.random.RandomState(2).randn(3, 4).astype(np.float32)
    outs, plans = [], []
    for spread in (False, True):
        with tf.Graph().as_default():
            x, loss, g = build(spread)
            with tf.Session(config=_config(2)) as sess:
                outs.append(sess.run([loss, g], {x: feed}, **_OPTS))
                plans.append(sess._get_plan((loss, g[0], g[1]), (), (x,)))
    assert not isinstance(plans[0], PartitionedPlan)
    assert isinstance(plans[1], PartitionedPlan)
    (l1, g1), (l2, g2) = outs
    assert l1 == l2
    for a, b in zip(g1, g2):
        assert a.dtype == b.dtype == np.float32 and np.array_equal(a, b)


@pytest.mark.parametrize("threaded", [False, True])
def test_an_error_in_one_partitions_loop_body_aborts_the_others(graph, threaded,
                                                                 numpy_kernels):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [], name="x")
        n = tf.placeholder(tf.int32, [], name="n")
        shape = [None, None] if threaded else [1, 1]
        m = tf.placeholder_with_default(tf.ones([1, 1]), shape)

        def body(i, v):
            with tf.device("/cpu:1"):
                # nan from the third iteration on when x is nan
                bad = tf.check_numerics(tf.where(i >= 2, x, 1.0), "no nan in the body")
                one = tf.reduce_sum(tf.matmul(m, m))  # unsized when threaded: the pool
            return i + 1, v + bad * one
        r = tf.while_loop(lambda i, v: i < n, body, [0, 0.0])
    cfg = _config(2)
    cfg.inter_op_parallelism_threads = 2
    with tf.Session(config=cfg) as sess:
        plan = sess._get_plan(tuple(r), (), (x, n))
        assert plan.interleaved is not threaded
        assert sess.run(r, {x: np.nan, n: 2}, **_OPTS) == (2, 2.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="no nan in the body"):
            sess.run(r, {x: np.nan, n: 10}, **_OPTS)
        assert sess.run(r, {x: 1.0, n: 10}, **_OPTS) == (10, 10.0)


def test_partition_graphs_show_the_replicated_control_loop(graph):
    with tf.device("/cpu:0"):
        n = tf.placeholder(tf.int32, [], name="n")

        def body(i, v):
            with tf.device("/cpu:1"):
                v = v * 2.0
            return i + 1, v
        r = tf.while_loop(lambda i, v: i < n, body, [0, 1.0], parallel_iterations=7,
                          name="loop")
    with tf.Session(config=_config(2)) as sess:
        md = tf.RunMetadata()
        assert sess.run(r, {n: 3}, options=tf.RunOptions(
            output_partition_graphs=True, trace_level=tf.RunOptions.FULL_TRACE,
            timeout_in_ms=20000), run_metadata=md) == (3, 8.0)
    stats = {d.device: [x.node_name for x in d.node_stats] for d in md.step_stats.dev_stats}
    assert sorted(stats) == [DEV % 0, DEV % 1]
    # the body's multiply ran once per iteration on CPU:1
    assert sum(1 for x in stats[DEV % 1] if x == "loop/mul") == 3
    by_dev = {}
    for g in md.partition_graphs:
        devs = {x.device for x in g.node}
        assert len(devs) == 1
        by_dev[devs.pop()] = list(g.node)
    assert sorted(by_dev) == [DEV % 0, DEV % 1]
    cond_dev, body_dev = by_dev[DEV % 0], by_dev[DEV % 1]
    for nodes in (cond_dev, body_dev):
        types = {x.op for x in nodes}
        assert {"Enter", "Merge", "Switch", "NextIteration", "Exit"} <= types
        enters = [x for x in nodes if x.op == "Enter"]
        assert {x.attr["parallel_iterations"].i for x in enters} == {7}
    frames = {x.attr["frame_name"].s for nodes in (cond_dev, body_dev) for x in nodes
              if x.op == "Enter"}
    assert len(frames) == 1
    # the body's device has no LoopCond: it receives the predicate of each iteration
    assert "LoopCond" in {x.op for x in cond_dev}
    assert "LoopCond" not in {x.op for x in body_dev}
    loop_cond = [x for x in cond_dev if x.op == "LoopCond"][0].name
    recvs = [x for x in body_dev if x.op == "_Recv"]
    assert any(x.attr["tensor_name"].s == ("%s:0" % loop_cond).encode() for x in recvs)
    sends = [x for x in cond_dev if x.op == "_Send"]
    assert any(x.attr["tensor_name"].s == ("%s:0" % loop_cond).encode() for x in sends)
    cloop = [x for x in body_dev if "_cloop_" in x.name]
    assert {x.op for x in cloop} >= {"Enter", "Merge", "Switch", "Identity",
                                     "NextIteration", "Exit"}


def test_no_replica_or_pivot_transfer_where_the_loop_has_its_own(graph):
    # the LoopCond's device Recvs depend on the loop's own Merge (no replica there), and
    # the body's constants on other devices take their control edge from the pivot
    # from their device's replica (no transfer of the control edge)
    with tf.device("/cpu:0"):
        n = tf.placeholder(tf.int32, [], name="n")

        def body(i, *xs):
            out = []
            for k, x in enumerate(xs):
                with tf.device("/cpu:%d" % k):
                    out.append(tf.add(x, 1.0) * 3.0)
            return [i + 1] + out
        r = tf.while_loop(lambda i, *xs: i < n, body, [0, 1.0, 2.0, 3.0], name="loop")
    with tf.Session(config=_config(3)) as sess:
        for k in (0, 1, 4):
            want = [float(v) for v in (1.0, 2.0, 3.0)]
            for _ in range(k):
                want = [(v + 1.0) * 3.0 for v in want]
            assert sess.run(r, {n: k}, **_OPTS) == [k] + want
        md = tf.RunMetadata()
        sess.run(r, {n: 3}, options=tf.RunOptions(
            output_partition_graphs=True, trace_level=tf.RunOptions.FULL_TRACE,
            timeout_in_ms=20000), run_metadata=md)
    by_dev = {g.node[0].device: [x.name for x in g.node] for g in md.partition_graphs}
    assert sorted(by_dev) == [DEV % 0, DEV % 1, DEV % 2]
    assert not [x for x in by_dev[DEV % 0] if "_cloop_" in x]
    for d in (DEV % 1, DEV % 2):
        assert "loop/_cloop_CPU_%s/Identity" % d[-1] in by_dev[d]
    assert not [x for names in by_dev.values() for x in names if "_control_to_" in x]
    # each device's body constants ran once per iteration
    stats = {d.device: [x.node_name for x in d.node_stats] for d in md.step_stats.dev_stats}
    assert stats[DEV % 2].count("loop/mul_2/y") == 3


def test_a_pivot_the_predicate_does_not_read_is_transferred_not_replicated(graph):
    # The gradient of a map_fn of scan: the inner loop's stacks hold the values of every
    # outer iteration, so its forward counter starts in the next outer iteration only
    # after the outer forward counter's Identity, which waits for this iteration's
    # pushes. With that counter's start on another device, the edge cannot be taken
    # from that device's control-loop replica (live with the predicate, which does not
    # read the counter): the inner loops of two outer iterations would push onto one
    # stack at once (found as a TensorArray index read twice).
    def place(op):
        return DEV % 1 if op.name.endswith("scan/while_grad/f_count/init") else DEV % 0
    with tf.device(place):
        e = tf.placeholder(tf.float64, [4, 3])
        rows = tf.map_fn(lambda row: tf.reduce_sum(tf.scan(
            lambda a, v: a * v + tf.sin(v), row,
            initializer=tf.constant(1.0, tf.float64)) ** 2), e)
        g = tf.gradients(tf.reduce_sum(rows), e)[0]
    ev = np.arange(12.0).reshape(4, 3) * 0.1 + 0.2

    def f(v):  # the scan of every row at once
        a, total = np.ones(len(v)), 0.0
        for column in v.T:
            a = a * column + np.sin(column)
            total += np.sum(a * a)
        return total
    want = np.zeros_like(ev)
    for k in range(ev.size):
        d = np.zeros_like(ev)
        d.flat[k] = 1e-6
        want.flat[k] = (f(ev + d) - f(ev - d)) / 2e-6
    md = tf.RunMetadata()
    with tf.Session(config=_config(2)) as sess:
        got = sess.run(g, {e: ev}, options=tf.RunOptions(
            output_partition_graphs=True, timeout_in_ms=20000), run_metadata=md)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    names = [x.name for pg in md.partition_graphs for x in pg.node]
    counter = "gradients/map/while_grad/f_count/Identity"
    assert counter + "/_control_to_CPU_1" in names


def test_a_pivot_the_predicate_does_not_read_is_replicated_where_no_state_follows(graph):
    # the body's constants on CPU:1 wait for the pivot, the first loop variable's
    # Identity, which the predicate does not read; nothing stateful depends on them, so
    # running them with the replica's Identity changes nothing and costs no transfer
    with tf.device("/cpu:0"):
        n = tf.placeholder(tf.int32, [], name="n")

        def body(a, i):
            with tf.device("/cpu:1"):
                a = (a * 2.0 + 1.0) * 0.5
            return a, i + 1
        r = tf.while_loop(lambda a, i: i < n, body, [1.0, 0], name="loop")
    md = tf.RunMetadata()
    with tf.Session(config=_config(2)) as sess:
        got = sess.run(r, {n: 3}, options=tf.RunOptions(
            output_partition_graphs=True, timeout_in_ms=20000), run_metadata=md)
    assert got == (2.5, 3)  # a -> a + 0.5, three times from 1.0
    names = [x.name for pg in md.partition_graphs for x in pg.node]
    assert "loop/_cloop_CPU_1/Identity" in names
    assert not [x for x in names if "_control_to_" in x]


def test_frame_keys():
    from tensorweave.runtime.rendezvous import create_key, parse_key
    from tensorweave.runtime.send_recv_ops import frame_key
    k = create_key("/device:CPU:0", 1, "/device:CPU:1", "a:0")
    tagged = frame_key(k, 12345, 7)
    parsed = parse_key(tagged)
    assert (parsed.frame_id, parsed.iter_id) == (12345, 7)
    assert parsed.tensor_name == "a:0" and tagged.startswith(k[:-3])


@pytest.mark.parametrize("pred", [True, False])
def test_a_dead_control_edge_across_devices_keeps_its_target_dead(graph, pred):
    from tensorweave.ops.control_flow import control_flow_ops
    with tf.device("/cpu:0"):
        p = tf.placeholder(tf.bool, [], name="p")
        x = tf.placeholder(tf.float32, [], name="x")
        sw_f, sw_t = control_flow_ops.switch(x, p)
    with tf.device("/cpu:1"):
        pivot_f = tf.identity(sw_f, name="pivot_f")  # dead when p is true
    with tf.device("/cpu:0"):
        with tf.control_dependencies([pivot_f]):
            c = tf.constant(42.0, name="only_if_false")
        r = control_flow_ops.merge([c, tf.identity(sw_t)])[0]
    with tf.Session(config=_config(2)) as sess:
        assert sess.run(r, {p: pred, x: 3.0}, **_OPTS) == (3.0 if pred else 42.0)
        if pred:  # the constant ordered after a dead value is dead: it has no value
            with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
                sess.run(c, {p: pred, x: 3.0}, **_OPTS)
        else:
            assert sess.run(c, {p: pred, x: 3.0}, **_OPTS) == 42.0


def test_interleaved_partitions_wake_for_a_value_another_thread_sends(graph):
    """Partitions that take turns on one thread (a task's share of a loop spanning
    tasks) wait for values sent from other threads: the turn goes to whichever gets
    one. Here cpu:0 plays the other task, on a thread of its own: it sends the
    predicate to cpu:1 and cpu:2 at once, the counter to cpu:2 only after a delay;
    cpu:1 waits for cpu:2's value meanwhile, so only cpu:2's queue gets the late one."""
    import threading
    import time
    from tensorweave.runtime import tagged as _tagged
    from tensorweave.runtime.rendezvous import LocalRendezvous
    from tensorweave.runtime.send_recv_ops import TransferStepState

    def late(i):
        time.sleep(0.05)
        return i

    with tf.device("/cpu:0"):
        n = tf.placeholder(tf.int32, [], name="n")

        def body(i, acc):
            delayed = tf.reshape(tf.py_func(late, [i], tf.int32, stateful=True), [])
            with tf.device("/cpu:2"):
                x = tf.cast(delayed, tf.float32) * 2.0
            with tf.device("/cpu:1"):
                y = x + 1.0
            return i + 1, acc + y
        r = tf.while_loop(lambda i, acc: i < n, body, [0, 0.0])
    with tf.Session(config=_config(3)) as sess:
        assert sess.run(r, {n: 3}, **_OPTS) == (3, 9.0)  # (0*2+1) + (1*2+1) + (2*2+1)
        plan = sess._get_plan(tuple(r), (), (n,))
        devices = [d.name.rsplit(":", 1)[1] for d in plan.devices]
        remote = devices.index("0")
        # cpu:1 first: the turn the runner gave when none could go on was the first's
        local = [devices.index("1"), devices.index("2")]
        mine = PartitionedPlan([plan.plans[k] for k in local],
                               [plan.devices[k] for k in local], [(), ()], [],
                               [plan.step_graphs[k] for k in local])
        assert mine.interleaved
        rdv = LocalRendezvous()
        result = []

        def other_task():
            state = TransferStepState(rdv, time.monotonic() + 10)
            result.append(_tagged.run_tagged(plan.plans[remote].program, [3],
                                             sess._env.pool, None, state))
        thread = threading.Thread(target=other_task)
        thread.start()
        try:
            mine.run([], sess._env, options=tf.RunOptions(timeout_in_ms=5000),
                     rendezvous=rdv)
        finally:
            rdv.abort(tf.errors.CancelledError(None, None, "test over"))
            thread.join(10)
    assert [tuple(v) for v in result] == [(3, 9.0)]
