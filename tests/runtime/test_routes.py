"""The tagged executor's generated value passing in loop frames (runtime/routes.py): the
tables it makes, and runs that take it giving the outcomes of the generic path (a traced
run takes the generic path) and of NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import plan as plan_module
from tensorweave.runtime import routes as routes_module
from tensorweave.runtime import policy as P
from tensorweave.runtime import tagged


@pytest.fixture(autouse=True)
def _tagged(monkeypatch):
    monkeypatch.setenv("TW_EXECUTOR", "tagged")
    monkeypatch.setattr(tagged, "ROUTES_AFTER", 0)  # routes from the first run


def compiled(sess, fetches, feeds=()):
    sg = plan_module.prune(fetches, [], list(feeds))
    plan_module.place(sg, sess._device_manager, False)
    return tagged.compile_tagged(sg, sess._binder, P.ExecutionPolicy(2))


def traced(sess, fetches, feeds):
    """A run on the generic path (traced runs never take the generated routes)."""
    md = tf.RunMetadata()
    return sess.run(fetches, feeds, options=tf.RunOptions(
        trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)


def test_tables_cover_the_loop_frames_only(graph, sess):
    n = tf.placeholder(tf.int32, [], name="n")
    x = tf.placeholder(tf.float32, [], name="x")
    i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * x + 1.0),
                         [tf.constant(0), tf.constant(0.0)])
    out = tf.identity(a) * 2.0  # root frame
    prog = compiled(sess, [i, out], [n, x]).fused
    calls = []
    runs, routes, invariants = routes_module.generate(prog)(
        calls.append, *([lambda *a: None] * 6), None, lambda it: "", lambda *a: None)
    names = {prog.op[k].name for k, fn in enumerate(runs) if fn is not None}
    # the predicate's island, the counter's, the body's kernels; none of the root frame
    assert {"while/Less", "while/Identity", "while/mul", "while/add_1"} <= names
    assert not any(name.startswith(("mul", "Identity")) for name in names)
    assert all(runs[k] is None for k, kd in enumerate(prog.kind) if not prog.in_loop[k])
    # n and x enter the loop as invariants: delivered by generated functions
    assert sorted(prog.op[k].name for k, fn in enumerate(invariants) if fn is not None) \
        == ["while/Enter_2", "while/mul/Enter"]
    # generated runs of island members would be dead code: none are made
    members = {m for ms in prog.islands.values() for m in ms[1:]}
    assert not any(runs[m] or routes[m] for m in members)
    got = sess.run([i, out], {n: 4, x: 3.0})
    want = 0.0
    for _ in range(4):
        want = want * 3.0 + 1.0
    assert int(got[0]) == 4 and float(got[1]) == want * 2.0


def test_no_loop_frame_no_routes(graph, sess):
    x = tf.placeholder(tf.float32, [3])
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
    prog = compiled(sess, [y], [x])
    assert routes_module.generate(prog.fused or prog) is None
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, -1.0]}), [2.0, 4.0, -2.0])


def test_routes_are_written_once_the_loops_ran_enough_iterations(graph, sess, monkeypatch):
    monkeypatch.setattr(tagged, "ROUTES_AFTER", 30)
    n = tf.placeholder(tf.int32, [])
    i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + 2.0),
                         [tf.constant(0), tf.constant(0.0)])
    sess.run([i, a], {n: 20})
    (plan,) = sess._plans.values()
    prog = plan.program.fused
    assert prog.make_routes is None and prog.iterations == 21  # the last tests the end
    traced(sess, [i, a], {n: 50})  # traced runs neither count nor take routes
    assert prog.make_routes is None and prog.iterations == 21
    assert [float(v) for v in sess.run([i, a], {n: 20})] == [20.0, 40.0]
    assert prog.make_routes is None and prog.iterations == 42
    assert [float(v) for v in sess.run([i, a], {n: 7})] == [7.0, 14.0]  # routed
    assert prog.make_routes is not None


def _nested_program():
    """A loop holding a cond (both branches taken in turn), an inner loop and
    invariants; parallel_iterations=1 on the outer loop defers each NextIteration."""
    n = tf.placeholder(tf.int32, [], name="n")
    v = tf.placeholder(tf.float32, [2], name="v")

    def outer(i, acc):
        even = tf.equal(tf.floormod(i, 2), 0)
        step = tf.cond(even, lambda: acc * 2.0 + v, lambda: acc - v * 0.5)
        _, inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + v),
                                 [tf.constant(0), step])
        return i + 1, inner

    i, acc = tf.while_loop(lambda i, acc: i < n, outer, [tf.constant(0), tf.zeros([2])],
                           parallel_iterations=1)
    return n, v, i, acc


def _nested_reference(n, v):
    acc = np.zeros(2, np.float32)
    for i in range(n):
        acc = acc * np.float32(2.0) + v if i % 2 == 0 else acc - v * np.float32(0.5)
        for _ in range(i):
            acc = acc + v
    return acc


@pytest.mark.parametrize("count", [0, 1, 6])
def test_nested_loops_and_conds_match_the_generic_path(graph, sess, count):
    n, v, i, acc = _nested_program()
    vv = np.array([1.5, -0.25], np.float32)
    got = sess.run([i, acc], {n: count, v: vv})
    generic = traced(sess, [i, acc], {n: count, v: vv})
    assert int(got[0]) == count
    np.testing.assert_array_equal(got[1], generic[1])
    np.testing.assert_allclose(got[1], _nested_reference(count, vv), rtol=1e-6)


def test_loop_in_an_untaken_branch(graph, sess):
    p = tf.placeholder(tf.bool, [])

    def looped():
        return tf.while_loop(lambda k, s: k < 5, lambda k, s: (k + 1, s * 3.0),
                             [tf.constant(0), tf.constant(1.0)])[1]
    y = tf.cond(p, looped, lambda: tf.constant(-1.0))
    assert float(sess.run(y, {p: True})) == 243.0
    assert float(sess.run(y, {p: False})) == -1.0


def test_failure_in_a_routed_iteration_names_the_op_and_iteration(graph, sess):
    table = tf.constant([10.0, 20.0, 30.0])
    n = tf.placeholder(tf.int32, [])
    _, s = tf.while_loop(
        lambda i, s: i < n,
        lambda i, s: (i + 1, s + tf.gather(table, i, name="lookup")),
        [tf.constant(0), tf.constant(0.0)])
    assert float(sess.run(s, {n: 3})) == 60.0
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        sess.run(s, {n: 5})
    assert e.value.op.name == "while/lookup"
    assert "iteration 3" in str(e.value)


def test_heavy_kernels_on_the_pool_complete_through_routes(graph, numpy_kernels):
    rs = np.random.RandomState(0)
    xv = rs.rand(160, 160)
    m = tf.constant(xv)
    ta = tf.TensorArray(tf.float64, size=6)

    def body(k, ta):
        prod = tf.matmul(m, m * tf.cast(k + 1, tf.float64))
        return k + 1, ta.write(k, tf.reduce_sum(prod))
    _, ta = tf.while_loop(lambda k, ta: k < 6, body, [tf.constant(0), ta],
                          parallel_iterations=4)
    sums = ta.stack()
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        got = sess.run(sums)
        assert sess._plans and all(p.executor == P.TAGGED for p in sess._plans.values())
    want = [(xv @ (xv * (k + 1))).sum() for k in range(6)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_partitioned_loop_transfers_through_routes(graph, monkeypatch):
    monkeypatch.setenv("TW_FUSE_HOST_PARTITIONS", "0")
    n = tf.placeholder(tf.int32, [])
    with tf.device("/cpu:0"):
        def body(i, a, b):
            with tf.device("/cpu:1"):
                b2 = b * 2.0 + 1.0
            return i + 1, a + b2, b2
        r = tf.while_loop(lambda i, a, b: i < n, body,
                          [tf.constant(0), tf.constant(0.0), tf.constant(1.0)])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        got = sess.run(r, {n: 7})
        generic = traced(sess, r, {n: 7})
    a, b = 0.0, 1.0
    for _ in range(7):
        b = b * 2.0 + 1.0
        a += b
    assert [int(got[0]), float(got[1]), float(got[2])] == [7, a, b]
    assert [float(x) for x in generic[1:]] == [a, b]


def test_concurrent_runs_of_one_routed_program(graph, sess):
    import threading
    n = tf.placeholder(tf.int32, [])
    start = tf.placeholder(tf.float32, [])
    i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 0.5 + 1.0),
                         [tf.constant(0), start])
    sess.run([i, a], {n: 1, start: 0.0})  # one plan, routed from here on (ROUTES_AFTER 0)

    def want(count, s):
        for _ in range(count):
            s = np.float32(s * np.float32(0.5) + np.float32(1.0))
        return s
    failures = []

    def worker(seed):
        rs = np.random.RandomState(seed)
        for _ in range(30):
            count, s = int(rs.randint(0, 40)), float(rs.randint(-50, 50))
            got = sess.run([i, a], {n: count, start: s})
            if int(got[0]) != count or float(got[1]) != want(count, np.float32(s)):
                failures.append((count, s, got))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads) and not failures
    (plan,) = sess._plans.values()
    assert plan.program.fused.make_routes is not None
