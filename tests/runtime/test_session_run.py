"""Session.run semantics (OSDI §3.2): pruning, feeds, plan caching, partial runs,
callables, concurrent steps on shared state."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import plan as plan_module


def test_pruning_runs_only_what_fetches_need(graph, sess):
    v = tf.Variable(0.0)
    bump = v.assign_add(1.0)
    x = tf.constant(2.0)
    y = x * 3.0
    sess.run(v.initializer)
    assert sess.run(y) == 6.0
    assert sess.run(v) == 0.0  # the side-effecting op was not needed, so it did not run
    sess.run(bump)
    assert sess.run(v) == 1.0


def test_bad_feed_raises_before_anything_runs(graph, sess):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.float32, [2])
    bump = v.assign_add(1.0)
    sess.run(v.initializer)
    with pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run([bump, p * 2.0], {p: np.zeros(3, np.float32)})
    with pytest.raises(ValueError):
        sess.run([bump, p * 2.0], {p: ["a", "b"]})
    assert sess.run(v) == 0.0


def test_feed_dtype_rules(graph, sess):
    p = tf.placeholder(tf.int32, [2])
    np.testing.assert_array_equal(sess.run(p + 1, {p: [1, 2]}), [2, 3])
    # floats fed to an integer tensor are truncated, as TF1's Session.run does
    out = sess.run(p, {p: np.array([1.5, -2.5])})
    assert out.dtype == np.int32 and out.tolist() == [1, -2]
    with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
        sess.run(p, {p: tf.constant([1, 2])})


def test_repeated_run_reuses_the_plan(graph, sess, monkeypatch):
    x = tf.placeholder(tf.float32, [None])
    y = tf.reduce_sum(x * x)
    built = []
    real = plan_module.build_plan
    monkeypatch.setattr(plan_module, "build_plan",
                        lambda *a, **k: built.append(1) or real(*a, **k))
    for i in range(5):
        assert sess.run(y, {x: [1.0, float(i)]}) == 1.0 + i * i
    assert len(built) == 1
    tf.constant(0.0)  # new ops elsewhere cannot change this step: the plan stays valid
    sess.run(y, {x: [1.0]})
    assert len(built) == 1
    y.op._add_control_input(tf.no_op())  # a change to an op in the step invalidates it
    sess.run(y, {x: [1.0]})
    assert len(built) == 2


def test_make_callable(graph, sess):
    x = tf.placeholder(tf.float32, [2])
    y = x * 2.0
    f = sess.make_callable([y, tf.no_op()], feed_list=[x])
    out, none = f(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(out, [2.0, 4.0])
    assert none is None
    g = sess.make_callable(y, feed_list=[x])
    np.testing.assert_array_equal(g([3.0, 4.0]), [6.0, 8.0])
    with pytest.raises(ValueError):
        g()


def test_partial_run_reuses_earlier_values(graph, sess):
    a = tf.placeholder(tf.float32, [])
    b = tf.placeholder(tf.float32, [])
    c = tf.placeholder(tf.float32, [])
    r1 = a + b
    r2 = r1 * c
    h = sess.partial_run_setup([r1, r2], [a, b, c])
    assert sess.partial_run(h, r1, {a: 1.0, b: 2.0}) == 3.0
    assert sess.partial_run(h, r2, {c: 3.0}) == 9.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="already been fed"):
        sess.partial_run(h, r2, {a: 1.0})


def test_interactive_session_is_default(graph):
    sess = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is sess
        assert (tf.constant(2.0) * 3.0).eval() == 6.0
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_concurrent_locked_assign_add_is_exact(graph):
    v = tf.Variable(0.0)
    inc = v.assign_add(1.0, use_locking=True)
    with tf.Session() as sess:
        sess.run(v.initializer)

        def worker():
            for _ in range(1000):
                sess.run(inc.op)
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sess.run(v) == 4000.0


def test_failed_step_leaves_variables_intact(graph, sess):
    v = tf.Variable([1.0, 2.0])
    idx = tf.placeholder(tf.int32, [])
    # the update depends on a failing gather, so the variable must stay as it was
    bad = v.assign(tf.gather(v.value(), [idx, idx]))
    sess.run(v.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(bad, {idx: 7})
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_device_names_and_multiple_cpus(graph):
    cfg = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:1"):
        a = tf.constant(3.0)
        b = a * 2.0
    with tf.Session(config=cfg) as sess:
        names = [d.name for d in sess.list_devices()]
        assert "/job:localhost/replica:0/task:0/device:CPU:0" in names
        assert "/job:localhost/replica:0/task:0/device:CPU:1" in names
        assert sess.run(b) == 6.0
    with tf.device("/gpu:0"):
        c = tf.constant(1.0) + 1.0
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
            sess.run(c)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(c) == 2.0


def test_a_fetch_structure_rebuilt_every_run_is_mapped_once(graph, sess, monkeypatch):
    """MonitoredSession merges its hooks' fetches into a new dict every step: a structure
    equal in shape and elements reuses its compiled mapping, and still gets its own
    result containers; other structures, defaultdicts and handles are mapped afresh."""
    import collections
    from tensorweave.runtime import session as session_module
    v = tf.Variable(1.0)
    x = tf.constant([1.0, 2.0])
    tf.constant(3.0, name="three")
    sess.run(v.initializer)
    made = []
    real = session_module._FetchMapper

    def counting(*args, **kwargs):
        made.append(args[1])
        return real(*args, **kwargs)
    monkeypatch.setattr(session_module, "_FetchMapper", counting)
    pair = collections.namedtuple("pair", "a b")
    for i in range(3):
        out = sess.run({"hook": v, "caller": [x, pair(v, "three:0")], "op": v.initializer})
        assert out["hook"] == 1.0 and out["op"] is None
        np.testing.assert_array_equal(out["caller"][0], [1.0, 2.0])
        assert out["caller"][1] == pair(1.0, 3.0)
        out["caller"].append("mine")  # the next run's list is its own
    assert len(made) == 1
    # other keys, another order of the same keys, or another element: a new mapping
    sess.run({"caller": [x, pair(v, "three:0")], "hook": v, "op": v.initializer})
    sess.run({"hook": x, "caller": [x, pair(v, "three:0")], "op": v.initializer})
    assert len(made) == 3
    # a defaultdict keeps its factory per run: never cached
    for _ in range(2):
        out = sess.run(collections.defaultdict(int, {"x": x}))
        assert isinstance(out, collections.defaultdict) and out["missing"] == 0
    assert len(made) == 5


def test_a_tuple_key_feeds_each_of_its_tensors(sess):
    # the PTB pattern: {model.initial_state: state} with an RNN cell's state tuple
    a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    assert sess.run(a + b, {(a, b): (1.0, 2.0)}) == 3.0
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2)])
    zero = cell.zero_state(1, tf.float32)
    _, state = cell(tf.ones([1, 3]), zero)
    sess.run(tf.global_variables_initializer())
    first = sess.run(state)
    again = sess.run(state, {zero: first})  # one more step from the fed state
    direct = sess.run(cell(tf.ones([1, 3]), state)[1])
    np.testing.assert_allclose(again[0].h, direct[0].h, rtol=1e-6)
    with pytest.raises(ValueError, match="must have the same structure"):
        sess.run(a + b, {(a, b): (1.0,)})


def test_feeding_a_reference_variables_read_feeds_its_readers(sess):
    # TF1: every reader consumes "v/read:0", so feeding it replaces the variable's value
    v = tf.Variable([1.0, 2.0], name="v")
    y = v * 2.0
    sess.run(v.initializer)
    assert sess.run(y, {"v/read:0": [5.0, 5.0]}).tolist() == [10.0, 10.0]
    assert sess.run(y, {v.value(): [7.0, 7.0]}).tolist() == [14.0, 14.0]
    assert sess.run(y).tolist() == [2.0, 4.0]
    # a resource variable's read is only that read (TF's resource semantics)
    r = tf.Variable([1.0, 2.0], use_resource=True)
    z = r * 2.0
    sess.run(r.initializer)
    assert sess.run(z, {r.value(): [3.0, 3.0]}).tolist() == [2.0, 4.0]
