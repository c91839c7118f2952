"""The CuPy GPU device (runtime/gpu.py): skipped without CuPy and a GPU.

Each test compares a GPU session's results with a CPU-only session's
(`device_count={'GPU': 0}`) on the same graph.
"""
import importlib.util
import os
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.runtime import gpu

pytestmark = pytest.mark.skipif(gpu.gpu_count() == 0, reason="needs CuPy and a GPU")

CPU_ONLY = dict(device_count={"GPU": 0})


def _run(fetches, feeds=None, steps=1, init=True, **config):
    """The values of `fetches` after `steps` runs, in a fresh session of the default
    graph."""
    with tf.Session(config=tf.ConfigProto(**config)) as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            out = sess.run(fetches, feeds)
        return out


def test_list_devices_names_the_gpu(graph):
    with tf.Session() as sess:
        devs = {d.name: d for d in sess.list_devices()}
    d = devs["/job:localhost/replica:0/task:0/device:GPU:0"]
    assert d.device_type == "GPU" and d.memory_limit_bytes > 1 << 30


def test_ops_prefer_the_gpu_and_host_ops_stay_on_the_cpu(graph):
    x = tf.placeholder(tf.float32, [4, 3])
    w = tf.Variable(np.full((3, 2), 0.5, np.float32))
    y = tf.nn.relu(tf.matmul(x, w))
    s = tf.strings.as_string(tf.reduce_sum(y))
    feed = {x: np.arange(12, dtype=np.float32).reshape(4, 3)}
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(w.initializer)
        got_y, got_s = sess.run([y, s], feed, options=tf.RunOptions(
            output_partition_graphs=True), run_metadata=meta)
    placed = {n.name: n.device for g in meta.partition_graphs for n in g.node}
    assert placed["MatMul"].endswith("GPU:0") and placed["Relu"].endswith("GPU:0")
    assert placed["AsString"].endswith("CPU:0")
    assert type(got_y) is np.ndarray  # fetched back to host memory
    want = np.maximum(feed[x] @ np.full((3, 2), 0.5, np.float32), 0)
    np.testing.assert_allclose(got_y, want, rtol=1e-6)
    assert float(got_s) == pytest.approx(want.sum(), rel=1e-5)


def test_explicit_gpu_request_for_a_host_op(graph):
    with tf.device("/device:GPU:0"):
        s = tf.strings.as_string(tf.constant(1.5), name="as_str")
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError) as e:
        sess.run(s)
    assert "as_str" in str(e.value) and "GPU" in str(e.value)
    assert _run(s, init=False, allow_soft_placement=True) == b"1.500000"


def _mlp_training(optimizer):
    rng = np.random.RandomState(0)
    x_val = rng.randn(64, 10).astype(np.float32)
    y_val = rng.randint(0, 3, 64)
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 10])
    labels = tf.placeholder(tf.int64, [None])
    h = tf.layers.dense(x, 32, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    train = optimizer.minimize(loss)
    return [loss, train], {x: x_val, labels: y_val}


@pytest.mark.parametrize("make_opt", [
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    lambda: tf.train.AdamOptimizer(0.01),
    lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5),
    lambda: tf.train.RMSPropOptimizer(0.01, centered=True),
], ids=["sgd", "momentum", "adam", "rmsprop", "rmsprop_centered"])
def test_training_on_the_gpu_matches_the_cpu(graph, make_opt):
    fetches, feed = _mlp_training(make_opt())
    on_gpu = _run(fetches, feed, steps=20)[0]
    on_cpu = _run(fetches, feed, steps=20, **CPU_ONLY)[0]
    np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-4)


@pytest.mark.parametrize("swap", [False, True])
def test_while_loop_gradient_on_the_gpu(graph, swap):
    w = tf.Variable(np.linspace(-0.5, 0.5, 16).reshape(4, 4).astype(np.float32))
    x0 = tf.constant(np.eye(4, dtype=np.float32))

    def body(i, x):
        return i + 1, tf.tanh(tf.matmul(x, w))

    _, x = tf.while_loop(lambda i, x: i < 6, body, [0, x0], swap_memory=swap)
    g = tf.gradients(tf.reduce_sum(x), w)[0]
    on_gpu = _run([x, g])
    on_cpu = _run([x, g], **CPU_ONLY)
    for a, b in zip(on_gpu, on_cpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_map_fn_and_scan_use_tensor_arrays_on_the_gpu(graph):
    xs = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    m = tf.map_fn(lambda r: tf.reduce_sum(r * r), xs)
    c = tf.scan(lambda a, r: a + r, xs)
    on_gpu = _run([m, c], init=False)
    np.testing.assert_allclose(on_gpu[0], (np.arange(12.0).reshape(4, 3) ** 2).sum(1))
    np.testing.assert_allclose(on_gpu[1], np.cumsum(np.arange(12.0).reshape(4, 3), 0))


def test_cross_device_edges_copy_between_host_and_gpu(graph):
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, [6], name="a")
    with tf.device("/gpu:0"):
        b = tf.square(a, name="b")
    with tf.device("/cpu:0"):
        c = tf.add(b, 1.0, name="c")
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        got = sess.run(c, {a: np.arange(6, dtype=np.float32)},
                       options=tf.RunOptions(output_partition_graphs=True),
                       run_metadata=meta)
    np.testing.assert_array_equal(got, np.arange(6.0) ** 2 + 1)
    types = sorted(n.op for g in meta.partition_graphs for n in g.node)
    assert types.count("_Send") == 2 and types.count("_Recv") == 2


def test_feeding_a_placeholder_on_the_gpu(graph):
    with tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32, [3])
        y = x * 2.0
    got = _run(y, {x: np.array([1.0, 2.0, 3.0], np.float32)}, init=False)
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, [2.0, 4.0, 6.0])


def test_gpu_memory_limit_raises_resource_exhausted_naming_the_op(graph):
    with tf.device("/gpu:0"):
        big = tf.fill([4096, 4096], 1.0, name="big_fill")  # 64 MiB of float32
        s = tf.reduce_sum(big)
    config = tf.ConfigProto(device_memory_limit_mb={"GPU": 16})
    try:
        with tf.Session(config=config) as sess, \
                pytest.raises(errors.ResourceExhaustedError) as e:
            sess.run(s)
        assert "GPU:0" in str(e.value)
    finally:
        import cupy
        cupy.get_default_memory_pool().set_limit(size=0)  # no limit for the next tests


def test_log_device_placement_prints_gpu_lines(graph, capfd):
    x = tf.placeholder(tf.float32, [2, 2])
    y = tf.matmul(x, x, name="mm")
    _run(y, {x: np.ones((2, 2), np.float32)}, init=False, log_device_placement=True)
    out = capfd.readouterr().out
    assert re.search(r"^mm: \(MatMul\): /job:localhost/replica:0/task:0/device:GPU:0$",
                     out, re.M)


# --- the table is true: every gradient-registry case, placed by the default rules -------
def _registry_cases():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "ops", "test_gradient_registry.py")
    spec = importlib.util.spec_from_file_location("gradient_registry_cases", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_CASES = _registry_cases() if gpu.gpu_count() else None


@pytest.mark.parametrize("op_type", sorted(_CASES.TABLE) if _CASES else [])
def test_gradient_registry_case_on_the_gpu(graph, op_type):
    row = _CASES.TABLE[op_type]
    dtypes = _CASES._dtypes(op_type, row)
    dtype = next((d for d in (tf.float32, tf.complex64, tf.float64) if d in dtypes), None)
    if dtype is None or row.variable:
        pytest.skip("no float32/complex64/float64 case")
    values = _CASES._values(op_type, row, dtype)
    xs, y = _CASES._build(op_type, row, dtype, values)
    grads = [g for g in tf.gradients(y, xs) if g is not None]
    fetches = [y]
    for g in grads:
        f = _CASES._fetchable(g)
        fetches.extend(f if isinstance(f, list) else [f])
    feed = dict(zip(xs, values))
    on_gpu = _run(fetches, feed, init=False)
    on_cpu = _run(fetches, feed, init=False, **CPU_ONLY)
    for a, b in zip(on_gpu, on_cpu):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
