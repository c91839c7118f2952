"""The local executor: parallel dispatch, memory release, tracing, error context."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.plan import DataflowPlan


def _raw_config(**kw):
    cfg = tf.ConfigProto(**kw)
    cfg.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    return cfg


def test_independent_heavy_ops_run_on_the_pool(graph):
    # 2 * 500**3 = 2.5e8 FLOPs each: heavy (policy.DEFAULT_HEAVY_FLOPS is 2e8), and the
    # four products are independent, so with two threads they go to the pool
    rng = np.random.RandomState(0)
    a_np, b_np = rng.rand(500, 500), rng.rand(500, 500)
    # fed, not constant: constant folding would compute the products at plan time
    a, b = tf.placeholder(tf.float64, [500, 500]), tf.placeholder(tf.float64, [500, 500])
    products = [tf.matmul(a, b), tf.matmul(b, a), tf.matmul(a, a), tf.matmul(b, b)]
    total = tf.add_n(products)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        out = sess.run(total, {a: a_np, b: b_np})
        md = tf.RunMetadata()
        sess.run(total, {a: a_np, b: b_np},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
        thread_names = {t.ident: t.name for t in threading.enumerate()}
    np.testing.assert_allclose(out, a_np @ b_np + b_np @ a_np + a_np @ a_np + b_np @ b_np)
    ran_on = {n.node_name: thread_names.get(n.thread_id, "?")
              for ds in md.step_stats.dev_stats for n in ds.node_stats}
    for p in products:
        assert ran_on[p.op.name].startswith("tw-inter-op-"), ran_on
    # cheap kernels stay on the calling thread
    assert ran_on[total.op.name] == threading.current_thread().name


def test_heavy_ops_without_a_second_thread_run_on_the_caller(graph):
    a = tf.placeholder(tf.float64, [500, 500])
    products = [tf.matmul(a, a), tf.matmul(a, a, transpose_a=True)]
    total = tf.add_n(products)
    a_np = np.random.RandomState(0).rand(500, 500)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=1)) as sess:
        md = tf.RunMetadata()
        out = sess.run(total, {a: a_np},
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=md)
    np.testing.assert_allclose(out, a_np @ a_np + a_np.T @ a_np)
    tids = {n.thread_id for ds in md.step_stats.dev_stats for n in ds.node_stats}
    assert tids == {threading.get_ident()}


def test_results_independent_of_thread_count(graph):
    rng = np.random.RandomState(1)
    x = tf.constant(rng.rand(64, 64).astype(np.float32))
    branches = [tf.reduce_sum(tf.matmul(x, x * float(i))) for i in range(8)]
    total = tf.add_n(branches)
    outs = []
    for threads in (1, 2, 4):
        with tf.Session(config=_raw_config(inter_op_parallelism_threads=threads)) as sess:
            outs.append(sess.run(total))
    assert outs[0] == outs[1] == outs[2]


def test_intermediates_are_released_after_last_consumer(graph):
    # A chain of 1 MB intermediates: the peak is a few live tensors, not the sum.
    x = tf.placeholder(tf.float64, [128, 1024])
    y = x
    for _ in range(20):
        y = y * 1.0001 + 1.0
    with tf.Session(config=_raw_config()) as sess:
        md = tf.RunMetadata()
        sess.run(y, {x: np.ones((128, 1024))},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    peak = max(ds.peak_bytes for ds in md.step_stats.dev_stats)
    one = 128 * 1024 * 8
    assert one <= peak <= 6 * one


def test_runtime_error_names_op_and_user_line(graph):
    x = tf.placeholder(tf.float32, [None], name="needs_feed")
    y = tf.identity(x, name="consumer")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
    msg = str(info.value)
    assert "needs_feed" in msg and "test_executor.py" in msg


def test_concurrent_runs_from_many_threads(graph):
    x = tf.placeholder(tf.float32, [3])
    y = x * 2.0 + 1.0
    errors = []
    with tf.Session() as sess:
        def worker(k):
            try:
                for _ in range(200):
                    v = np.full(3, k, np.float32)
                    np.testing.assert_array_equal(sess.run(y, {x: v}), v * 2 + 1)
            except Exception as e:  # collected and re-raised in the main thread
                errors.append(e)
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


def test_optimizations_never_change_results(graph):
    a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    p = tf.placeholder(tf.float32, [2, 3])
    e1 = tf.exp(a) + p
    e2 = tf.exp(a) + p  # a CSE candidate
    folded = tf.reduce_sum(a * 2.0)  # fully constant
    fetch = [e1, e2, folded, tf.group(tf.no_op(), tf.no_op())]
    feed = {p: np.ones((2, 3), np.float32)}
    with tf.Session() as s1, tf.Session(config=_raw_config()) as s2:
        r1, r2 = s1.run(fetch, feed), s2.run(fetch, feed)
    for u, v in zip(r1[:3], r2[:3]):
        np.testing.assert_array_equal(u, v)


def test_list_output_op_with_one_output_fetches_the_value(graph):
    from tensorweave.framework.op_builder import apply_op
    from tensorweave.framework.registry import kernel, not_differentiable, register_op
    register_op("TestSplitRows", inputs=["x: T"], outputs=["y: N * T"], attrs={"N": 1},
                shape=lambda op: [op.inputs[0].shape[1:]] * op.get_attr("N"))
    not_differentiable("TestSplitRows")
    kernel("TestSplitRows")(lambda ctx, x: list(x))  # one array per row: a list
    one = apply_op("TestSplitRows", [np.array([[1.0, 2.0]])], {"N": 1}).outputs
    two = apply_op("TestSplitRows", [np.array([[1.0], [2.0]])], {"N": 2}).outputs
    with tf.Session() as sess:
        out = sess.run([one[0], two[0], two[1]])
    np.testing.assert_array_equal(out[0], [1.0, 2.0])
    assert out[1].tolist() == [1.0] and out[2].tolist() == [2.0]


def test_heavy_kernel_runs_inline_beside_an_async_one(graph):
    # a dequeue (asynchronous) needs the dataflow executor, but with nothing heavy to
    # overlap the matmul runs on the calling thread, not through the pool; with two
    # independent heavy matmuls both go to the pool
    q = tf.FIFOQueue(4, tf.float64, shapes=[[500, 500]])
    x = q.dequeue()
    y = tf.matmul(x, x)
    z = tf.matmul(x, x, transpose_a=True) + tf.matmul(x, x, transpose_b=True)
    a = np.random.RandomState(2).rand(500, 500)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        sess.run(q.enqueue_many([np.stack([a, a])]))
        np.testing.assert_allclose(sess.run(y), a @ a)
        np.testing.assert_allclose(sess.run(z), a.T @ a + a @ a.T)
        plans = [p for p in sess._plans.values() if isinstance(p, DataflowPlan) and
                 any(s.op is not None and s.op.type == "MatMul" for s in p.steps)]
    assert len(plans) == 2
    by_fetch = {tuple(s.op.name for s in p.steps if s.op is not None and
                      s.op.type == "MatMul"): p for p in plans}
    one = by_fetch[(y.op.name,)]
    assert [s.on_pool for s in one.steps if s.op is y.op] == [False]
    assert one.inline and not one.needs_pool
    two = next(p for k, p in by_fetch.items() if len(k) == 2)
    assert [s.on_pool for s in two.steps if s.op is not None and s.op.type == "MatMul"] \
        == [True, True]
    assert not two.inline and two.needs_pool
