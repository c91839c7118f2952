"""Tracing (RunOptions.trace_level -> RunMetadata.step_stats) on every executor: one
record per kernel execution, per iteration inside loops with the frame name and the
iteration number, the thread that ran it, its output bytes, and nothing when off."""
import collections
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import frames
from tensorweave.runtime import policy as P

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def traced(sess, fetches, feed_dict=None):
    """(result, [NodeExecStats]) of one traced run."""
    md = tf.RunMetadata()
    out = sess.run(fetches, feed_dict, options=FULL, run_metadata=md)
    return out, [n for d in md.step_stats.dev_stats for n in d.node_stats]


def executor_of(sess):
    return {p.executor for p in sess._plans.values()}


def frame_of(graph, loop_var_name):
    """The frame name of the loop whose Enter reads the tensor `loop_var_name`."""
    return next(op._get_attr("frame_name") for op in graph.get_operations()
                if op.type == "Enter" and op.inputs[0].name == loop_var_name)


def by_name(records):
    out = collections.defaultdict(list)
    for r in records:
        out[r.node_name].append(r)
    return out


def test_sequential_records_each_op_once(graph):
    x = tf.placeholder(tf.float32, [4, 8], name="x")
    y = tf.reduce_sum(tf.multiply(x, 2.0, name="twice"), axis=1, name="rows")
    with tf.Session() as sess:
        out, recs = traced(sess, y, {x: np.ones((4, 8), np.float32)})
        assert executor_of(sess) == {P.SEQUENTIAL}
    np.testing.assert_allclose(out, np.full(4, 16.0))
    names = by_name(recs)
    assert len(names["twice"]) == len(names["rows"]) == 1
    twice, rows = names["twice"][0], names["rows"][0]
    assert twice.timeline_label == "twice = Mul(x, twice/y)"
    assert (twice.output_bytes, rows.output_bytes) == (4 * 8 * 4, 4 * 4)
    assert twice.thread_id == rows.thread_id == threading.get_ident()
    assert (twice.frame_name, twice.iteration) == ("", 0)
    assert twice.all_start_micros <= rows.all_start_micros
    assert 0 <= twice.op_end_rel_micros == twice.all_end_rel_micros


def test_untraced_run_fills_nothing(graph, sess):
    md = tf.RunMetadata()
    sess.run(tf.constant(1.0) + 1.0, options=tf.RunOptions(), run_metadata=md)
    assert md.step_stats.dev_stats == []


@pytest.fixture(params=[P.STRUCTURED, P.TAGGED])
def loop_executor(request, monkeypatch):
    """Both control-flow executors (the policy reads TW_EXECUTOR when a session starts)."""
    if request.param == P.TAGGED:
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    return request.param


def test_loop_ops_are_recorded_per_iteration_with_frame(graph, loop_executor):
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    _, a = tf.while_loop(lambda i, a: tf.less(i, 3, name="below"),
                         lambda i, a: (i + 1, tf.tanh(tf.matmul(a, x, name="mm"), name="th")),
                         [tf.constant(0), x])
    frame = frame_of(graph, "x:0")
    with tf.Session() as sess:
        out, recs = traced(sess, a, {x: np.eye(2, dtype=np.float32)})
        assert executor_of(sess) == {loop_executor}
    want = np.eye(2)
    for _ in range(3):
        want = np.tanh(want @ np.eye(2))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    names = by_name(recs)
    for body_op in ("while/mm", "while/th"):
        rs = names[body_op]
        assert [(r.frame_name, r.iteration) for r in rs] == [(frame, k) for k in range(3)]
        assert all(r.output_bytes == 16 for r in rs)
    # the predicate runs once more than the body: iteration 3 ends the loop
    assert [r.iteration for r in names["while/below"]] == [0, 1, 2, 3]
    assert names["while/mm"][0].timeline_label.startswith("while/mm = MatMul(")
    # no record stands for the loop as a whole
    assert not any(r.node_name.endswith("Enter") and r.frame_name == "" for r in recs)


def test_nested_loops_and_cond_inside_a_loop(graph, loop_executor):
    x = tf.placeholder(tf.float32, [], name="x")

    def outer(i, s):
        def inner(j, t):
            t = tf.cond(j < 1, lambda: tf.multiply(t, 2.0, name="dbl"),
                        lambda: tf.add(t, 1.0, name="inc"))
            return j + 1, t
        return i + 1, tf.while_loop(lambda j, t: j < 2, inner, [0, s])[1]
    _, s = tf.while_loop(lambda i, s: i < 3, outer, [0, x])
    with tf.Session() as sess:
        out, recs = traced(sess, s, {x: 1.0})
        assert executor_of(sess) == {loop_executor}
    assert out == ((1 * 2 + 1) * 2 + 1) * 2 + 1
    names = by_name(recs)
    dbl = [n for n in names if n.endswith("/dbl")]
    inc = [n for n in names if n.endswith("/inc")]
    assert len(dbl) == len(inc) == 1
    inner_frame = names[dbl[0]][0].frame_name
    outer_frame = frame_of(graph, "x:0")
    assert inner_frame and inner_frame != outer_frame
    # the inner loop runs twice per outer iteration, each branch once per inner run
    assert [(r.frame_name, r.iteration) for r in names[dbl[0]]] == [(inner_frame, 0)] * 3
    assert [(r.frame_name, r.iteration) for r in names[inc[0]]] == [(inner_frame, 1)] * 3
    outer_add = [r for r in recs if r.node_name == "while/add"]
    assert [(r.frame_name, r.iteration) for r in outer_add] == [(outer_frame, k)
                                                               for k in range(3)]


def test_traced_loop_variant_is_compiled_on_first_traced_run(graph, monkeypatch):
    monkeypatch.delenv("TW_EXECUTOR", raising=False)
    progs = []
    real = frames.StructuredCompiler.compile_loop

    def spy(self, frame):
        progs.append(real(self, frame))
        return progs[-1]
    monkeypatch.setattr(frames.StructuredCompiler, "compile_loop", spy)
    n = tf.placeholder(tf.int32, [])
    i = tf.while_loop(lambda i: i < n, lambda i: i + 1, [0])
    with tf.Session() as sess:
        assert sess.run(i, {n: 5}) == 5
        assert len(progs) == 1 and progs[0]._traced is None  # untraced runs: not built
        out, recs = traced(sess, i, {n: 4})
        assert out == 4 and progs[0]._traced is not None
        assert sess.run(i, {n: 6}) == 6  # the untraced variant is unchanged
    adds = [r for r in recs if r.node_name == "while/add"]
    assert [r.iteration for r in adds] == [0, 1, 2, 3]


def test_tagged_heavy_loop_kernels_run_on_the_pool_per_iteration(graph, monkeypatch):
    # a heavy matmul in a loop with parallel_iterations > 1 and two threads: the tagged
    # executor, and the matmuls of the iterations run on pool threads
    monkeypatch.delenv("TW_EXECUTOR", raising=False)
    xs = tf.placeholder(tf.float64, [3, 500, 500])
    w = tf.placeholder(tf.float64, [500, 500])
    ta = tf.TensorArray(tf.float64, size=3)

    def body(i, acc):
        return i + 1, acc.write(i, tf.reduce_sum(tf.matmul(tf.gather(xs, i), w,
                                                           name="big"), axis=0))
    _, acc = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), ta])
    rs = np.random.RandomState(0)
    xv, wv = rs.rand(3, 500, 500), rs.rand(500, 500)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        out, recs = traced(sess, acc.stack(), {xs: xv, w: wv})
        assert executor_of(sess) == {P.TAGGED}
        names = {t.ident: t.name for t in threading.enumerate()}
    np.testing.assert_allclose(out, np.stack([np.sum(xv[k] @ wv, axis=0) for k in range(3)]))
    big = [r for r in recs if r.node_name == "while/big"]
    assert sorted(r.iteration for r in big) == [0, 1, 2]
    assert all(names.get(r.thread_id, "").startswith("tw-inter-op-") for r in big)
    assert all(r.output_bytes == 500 * 500 * 8 for r in big)


def test_dataflow_inline_steps_are_traced(graph):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[3]])
    x = q.dequeue(name="deq")
    y = tf.multiply(x, 2.0, name="twice")
    with tf.Session() as sess:
        sess.run(q.enqueue([np.ones(3, np.float32)]))
        out, recs = traced(sess, y)
        assert executor_of(sess) == {P.DATAFLOW}  # the enqueue and the dequeue step
    np.testing.assert_allclose(out, [2.0, 2.0, 2.0])
    names = by_name(recs)
    assert len(names["deq"]) == len(names["twice"]) == 1
    assert names["deq"][0].output_bytes == 12
    assert names["twice"][0].thread_id == threading.get_ident()
