"""tf.CriticalSection and its mutex ops: concurrent Session.run calls executing through
one section never interleave (and lose updates without it), executions in one step,
the mutex given back on errors, cancellation and pruned consumers, and TF's
graph-construction checks (nested execute, resources shared between sections)."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import registry
from tensorweave.ops.data_flow import critical_section

GUARD = tf.RunOptions(timeout_in_ms=5000)  # a leaked mutex fails the test, never hangs it


def _slow_increment(v, log=None):
    """fn: reads v, waits 2 ms outside the GIL, writes v + 1; returns what it read."""
    def fn():
        value = v.read_value()

        def slow(x):
            time.sleep(0.002)
            return x
        waited = tf.py_func(slow, [value], tf.float32)
        with tf.control_dependencies([v.assign(waited + 1.0)]):
            return tf.identity(value)
    return fn


def _run_threads(sess, fetch, threads=4, steps=10):
    seen, errors = [], []

    def worker():
        try:
            for _ in range(steps):
                seen.append(float(sess.run(fetch, options=GUARD)))
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert not errors, errors
    return seen


def test_concurrent_runs_lose_updates_without_a_critical_section(graph):
    # the read-modify-write itself, run by 4 threads: some updates get lost (retried a
    # few times, 40 increments each, so a lucky schedule cannot make this flaky)
    v = tf.get_variable("v", initializer=0.0, use_resource=True)
    increment = _slow_increment(v)()
    lost = False
    with tf.Session() as sess:
        for _ in range(5):
            sess.run(v.initializer)
            seen = _run_threads(sess, increment)
            if sess.run(v.read_value()) < 40 or len(set(seen)) < 40:
                lost = True
                break
    assert lost


def test_concurrent_runs_through_a_critical_section_never_interleave(graph):
    v = tf.get_variable("v", initializer=0.0, use_resource=True)
    cs = tf.CriticalSection()
    increment = cs.execute(_slow_increment(v))
    with tf.Session() as sess:
        sess.run(v.initializer)
        started = time.time()
        seen = _run_threads(sess, increment)
        assert time.time() - started < 20
        assert sess.run(v.read_value()) == 40.0
        # every execution read a different value: 0, 1, ..., 39 in some order
        assert sorted(seen) == [float(i) for i in range(40)]


def test_two_executions_in_one_step_run_one_after_the_other(sess):
    v = tf.get_variable("v", initializer=0.0, use_resource=True)

    def count():
        value = v.read_value()
        with tf.control_dependencies([value]):
            with tf.control_dependencies([v.assign_add(1.0)]):
                return tf.identity(value)
    cs = tf.CriticalSection()
    f1, f2 = cs.execute(count), cs.execute(count)
    sess.run(v.initializer)
    a, b = sess.run([f1, f2], options=GUARD)
    assert sorted([a, b]) == [0.0, 1.0]  # never both 0
    assert sess.run(f1 + f2, options=GUARD) == 2.0 + 3.0
    assert sess.run(v.read_value()) == 4.0


def test_structures_names_and_collections(graph):
    cs = tf.CriticalSection()
    assert cs.name == "CriticalSection"
    assert cs._handle.op.type == "MutexV2"
    assert cs._handle.op.get_attr("shared_name") == b"CriticalSection/"
    assert cs._signature == ("", "CriticalSection/", None)
    named = tf.CriticalSection(name="foo", shared_name="bar")
    assert named.name == "foo" and named._handle.op.get_attr("shared_name") == b"bar"
    assert tf.CriticalSection(name="foo").name == "foo_1"
    assert tf.get_collection("critical_sections") == [cs, named,
                                                      tf.get_collection(
                                                          "critical_sections")[2]]
    v = tf.get_variable("v", initializer=1.0, use_resource=True)
    out = cs.execute(lambda: (v.read_value() * 2.0, {"a": tf.constant([1, 2])}),
                     name="myexec")
    assert isinstance(out, tuple) and set(out[1]) == {"a"}
    assert out[0].name.startswith("myexec/") and out[0].op.type == "Identity"
    assert out[0].op.control_inputs[0].type == "ConsumeMutexLock"
    op_out = cs.execute(lambda: tf.no_op())
    assert isinstance(op_out, tf.Operation)
    (sig,) = tf.get_collection("critical_section_executions")[:1]
    assert sig.op.type == "MutexLock" and sig.handle is cs._handle
    assert sig.resources == [v.handle] and sig.exclusive_resource_access is True
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(out, options=GUARD)
        assert got[0] == 2.0 and list(got[1]["a"]) == [1, 2]
        assert sess.run(op_out, options=GUARD) is None


def test_lock_waits_for_what_fn_reads_from_outside(graph):
    x = tf.placeholder(tf.float32, [])
    y = x * 3.0
    cs = tf.CriticalSection()
    out = cs.execute(lambda: y + 1.0)
    lock = tf.get_collection("critical_section_executions")[0].op
    waited = lock.control_inputs[0]
    assert waited.type == "NoOp" and y.op in waited.control_inputs
    with tf.Session() as sess:
        assert sess.run(out, {x: 2.0}, options=GUARD) == 7.0


def test_failed_execution_gives_the_mutex_back(sess):
    x = tf.placeholder(tf.float32, [])
    cs = tf.CriticalSection()
    out = cs.execute(lambda: tf.debugging.check_numerics(x, "bad value") * 2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad value"):
        sess.run(out, {x: np.nan}, options=GUARD)
    assert sess.run(out, {x: 2.0}, options=GUARD) == 4.0


def test_pruned_consumer_gives_the_mutex_back_when_the_step_ends(sess):
    inside = []

    def fn():
        inside.append(tf.constant(5.0) * 2.0)
        return inside[0] + 1.0
    cs = tf.CriticalSection()
    out = cs.execute(fn)
    # fetching an op of fn runs the MutexLock but not the ConsumeMutexLock
    assert sess.run(inside[0], options=GUARD) == 10.0
    assert sess.run(out, options=GUARD) == 11.0


def test_waiting_step_is_cancelled_by_its_deadline(sess):
    q = tf.FIFOQueue(2, tf.float32)
    cs = tf.CriticalSection()
    blocked = cs.execute(lambda: q.dequeue() + 1.0)  # holds the mutex while it waits
    quick = cs.execute(lambda: tf.constant(1.0))
    holder = threading.Thread(target=lambda: sess.run(blocked, options=GUARD))
    holder.start()
    try:
        time.sleep(0.2)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(quick, options=tf.RunOptions(timeout_in_ms=100))
    finally:
        sess.run(q.enqueue(1.0))
        holder.join(10)
    assert not holder.is_alive()
    assert sess.run(quick, options=GUARD) == 1.0  # the cancelled waiter left the line


def test_mutex_is_given_back_when_the_session_closes_the_holding_step(graph):
    q = tf.FIFOQueue(2, tf.float32)
    cs = tf.CriticalSection()
    blocked = cs.execute(lambda: q.dequeue())
    sess = tf.Session()
    failures = []

    def hold():
        try:
            sess.run(blocked)
        except tf.errors.CancelledError as e:
            failures.append(e)
    holder = threading.Thread(target=hold)
    holder.start()
    time.sleep(0.2)
    sess.close()
    holder.join(10)
    assert not holder.is_alive() and len(failures) == 1


def test_nested_execute_raises(graph):
    cs = tf.CriticalSection()
    with pytest.raises(ValueError, match="Attempting to lock a CriticalSection .* in which "
                                         "we are already running"):
        cs.execute(lambda: cs.execute(lambda: tf.constant(1.0)))
    # a MutexLock of the same shared mutex built inside fn is found among fn's ops
    from tensorweave.ops.data_flow import mutex_ops
    same = tf.CriticalSection(shared_name="CriticalSection/")
    with pytest.raises(ValueError, match="in which we are already running"):
        cs.execute(lambda: mutex_ops.mutex_lock(same._handle))
    assert critical_section._STACK.signatures == []
    other = tf.CriticalSection()
    assert other.execute(lambda: cs.execute(lambda: tf.constant(1.0))) is not None


def test_resources_used_by_two_sections(graph):
    v = tf.get_variable("v", initializer=0.0, use_resource=True)
    w = tf.get_variable("w", initializer=0.0, use_resource=True)
    cs1, cs2, cs3 = tf.CriticalSection(), tf.CriticalSection(), tf.CriticalSection()
    cs1.execute(lambda: v.assign_add(1.0).op)
    cs1.execute(lambda: v.read_value())  # the same section: allowed
    with pytest.raises(ValueError, match=r"This execution would access resources: "
                                         r"\[<tf.Tensor 'v:0'.*exclusive_resource_access=False"):
        cs2.execute(lambda: v.read_value())
    # the other execution asked for exclusive access: not allowed either
    with pytest.raises(ValueError, match="would access resources"):
        cs2.execute(lambda: v.read_value(), exclusive_resource_access=False)
    # read-only from two sections, neither exclusive
    cs2.execute(lambda: w.read_value(), exclusive_resource_access=False)
    cs3.execute(lambda: w.read_value(), exclusive_resource_access=False)
    with pytest.raises(ValueError, match="would access resources"):
        cs1.execute(lambda: w.read_value())
    # only resources fn's own ops use count: a read made outside is not one
    read_outside = v.read_value()
    cs3.execute(lambda: read_outside * 2.0)


def test_constructor_arguments(graph):
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.CriticalSection(name="a", critical_section_def=object())
    with pytest.raises(ValueError, match="`critical_section_def` is not supported"):
        tf.CriticalSection(critical_section_def=object())
    with tf.container("box"):
        cs = tf.CriticalSection()
    assert cs._handle.op.get_attr("container") == b"box"
    with tf.control_dependencies([tf.no_op()]):
        cs = tf.CriticalSection()
    assert cs._handle.op.control_inputs == []  # built in init_scope


def test_gradients_flow_through_an_execution(graph):
    for op_type in ("MutexV2", "MutexLock", "ConsumeMutexLock"):
        assert registry.get_gradient(op_type) == (True, None)
    x = tf.constant(2.0)
    out = tf.CriticalSection().execute(lambda: x * x)
    assert tf.gradients(out, x)[0] is not None
    with tf.Session() as sess:
        assert sess.run(tf.gradients(out, x)[0], options=GUARD) == 4.0
