"""tf.nn.lrn and tf.nn.fused_batch_norm against NumPy references (ops/nn/norm_ops.py).

Both ops exist for float16/bfloat16/float32 only (as in TF), so their gradients are
checked numerically in float32."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


def _lrn_reference(x, radius, bias, alpha, beta):
    x = x.astype(np.float64)
    depth = x.shape[-1]
    sq = np.zeros_like(x)
    for d in range(depth):
        lo, hi = max(0, d - radius), min(depth, d + radius + 1)
        sq[..., d] = (x[..., lo:hi] ** 2).sum(-1)
    return x / (bias + alpha * sq) ** beta


@pytest.mark.parametrize("radius,bias,alpha,beta", [(5, 1.0, 1.0, 0.5), (2, 1.5, 0.3, 0.75),
                                                    (0, 2.0, 0.1, 1.0), (9, 1.0, 0.5, 0.5)])
def test_lrn_values(sess, radius, bias, alpha, beta):
    x0 = np.random.RandomState(0).randn(2, 3, 2, 7).astype(np.float32)
    y = tf.nn.lrn(x0, depth_radius=radius, bias=bias, alpha=alpha, beta=beta)
    assert y.op.type == "LRN" and y.dtype == tf.float32
    out = sess.run(y)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, _lrn_reference(x0, radius, bias, alpha, beta), rtol=2e-6,
                               atol=1e-6)
    assert tf.nn.local_response_normalization is tf.nn.lrn


def test_lrn_half_and_shapes(sess):
    x0 = np.random.RandomState(1).randn(1, 2, 2, 4).astype(np.float16)
    out = sess.run(tf.nn.lrn(x0, 1))
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, _lrn_reference(x0, 1, 1.0, 1.0, 0.5), rtol=2e-3)
    x = tf.placeholder(tf.float32, [None, 3, None, 5])
    assert tf.nn.lrn(x).shape.as_list() == [None, 3, None, 5]
    assert tf.nn.lrn(tf.placeholder(tf.float32)).shape.as_list() == [None] * 4


def test_lrn_errors(sess):
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.lrn(tf.zeros([2, 3]))
    with pytest.raises(TypeError):
        tf.nn.lrn(tf.zeros([1, 1, 1, 2], tf.float64))
    x = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="4-dimensional"):
        sess.run(tf.nn.lrn(x), {x: np.zeros([2, 2], np.float32)})


@pytest.mark.parametrize("radius", [0, 2, 5])
def test_lrn_gradient(graph, radius):
    x0 = np.random.RandomState(2).randn(1, 2, 2, 6).astype(np.float32)
    x = tf.placeholder(tf.float32, x0.shape)
    y = tf.nn.lrn(x, depth_radius=radius, bias=1.2, alpha=0.4, beta=0.75)
    with tf.Session():
        err = compute_gradient_error(x, list(x0.shape), y, list(x0.shape), x_init_value=x0,
                                     delta=1e-3)
    assert err < 4e-3


def _bn_reference(x, scale, offset, mean, var, eps, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * \
        scale.reshape(shape) + offset.reshape(shape)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW", "NDHWC", "NCDHW"])
def test_fused_batch_norm_training(sess, data_format):
    rng = np.random.RandomState(3)
    shape = {"NHWC": (2, 3, 3, 2), "NCHW": (2, 2, 3, 3), "NDHWC": (2, 2, 2, 2, 2),
             "NCDHW": (2, 2, 2, 2, 2)}[data_format]
    axis = 1 if data_format.startswith("NC") else len(shape) - 1
    x0 = rng.randn(*shape).astype(np.float32)
    scale, offset = np.array([1.0, 2.0], np.float32), np.array([0.5, -0.5], np.float32)
    out = tf.nn.fused_batch_norm(x0, scale, offset, data_format=data_format)
    assert isinstance(out, tuple) and len(out) == 3
    assert out[0].op.type == "FusedBatchNormV3" and len(out[0].op.outputs) == 6
    assert [o.shape.as_list() for o in out] == [list(shape), [2], [2]]
    y, mean, var = sess.run(out)
    axes = tuple(i for i in range(len(shape)) if i != axis)
    n = x0.size // 2
    m, v = x0.mean(axes), x0.var(axes)
    np.testing.assert_allclose(mean, m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, v * n / (n - 1), rtol=1e-5)  # unbiased, as TF
    np.testing.assert_allclose(y, _bn_reference(x0, scale, offset, m, v, 0.001, axis),
                               rtol=1e-4, atol=1e-5)


def test_fused_batch_norm_running_averages_and_inference(sess):
    rng = np.random.RandomState(4)
    x0 = rng.randn(2, 3, 3, 2).astype(np.float32)
    scale, offset = np.array([1.0, 2.0], np.float32), np.array([0.5, -0.5], np.float32)
    mean0, var0 = np.array([0.1, 0.2], np.float32), np.array([1.0, 2.0], np.float32)
    _, mean, var = sess.run(tf.nn.fused_batch_norm(
        x0, scale, offset, mean=mean0, variance=var0, exponential_avg_factor=0.5))
    m, v = x0.mean((0, 1, 2)), x0.var((0, 1, 2)) * 18 / 17
    np.testing.assert_allclose(mean, 0.5 * mean0 + 0.5 * m, rtol=1e-5)
    np.testing.assert_allclose(var, 0.5 * var0 + 0.5 * v, rtol=1e-5)
    y, mean, var = sess.run(tf.nn.fused_batch_norm(x0, scale, offset, mean=mean0,
                                                   variance=var0, is_training=False,
                                                   epsilon=1e-3))
    np.testing.assert_allclose(y, _bn_reference(x0, scale, offset, mean0, var0, 1e-3, 3),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(mean, mean0)
    np.testing.assert_array_equal(var, var0)
    # a single value per channel: the unbiased variance divides by max(n - 1, 1)
    _, _, var = sess.run(tf.nn.fused_batch_norm(np.ones([1, 1, 1, 2], np.float32), scale,
                                                offset))
    np.testing.assert_array_equal(var, [0.0, 0.0])


def test_fused_batch_norm_half_and_errors(sess):
    x0 = np.random.RandomState(5).randn(2, 2, 2, 2).astype(np.float16)
    y, _, _ = tf.nn.fused_batch_norm(x0, [1.0, 1.0], [0.0, 0.0])
    assert y.dtype == tf.float16 and sess.run(y).dtype == np.float16
    with pytest.raises(ValueError, match="must be a 1D tensor when `is_training` is False"):
        tf.nn.fused_batch_norm(x0, [1.0, 1.0], [0.0, 0.0], is_training=False)
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.fused_batch_norm(tf.zeros([2, 3]), [1.0], [0.0])
    with pytest.raises(ValueError):
        tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), [1.0, 1.0], [0.0, 0.0])
    x = tf.placeholder(tf.float32, [None, 2, 2, None])
    s = tf.placeholder(tf.float32, [None])
    y, m, _ = tf.nn.fused_batch_norm(x, s, s)
    assert y.shape.as_list() == [None, 2, 2, None] and m.shape.as_list() == [None]
    with pytest.raises(tf.errors.InvalidArgumentError, match="scale must have the same number"):
        sess.run(y, {x: np.zeros([1, 2, 2, 3], np.float32), s: np.ones([2], np.float32)})


@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_gradient(graph, is_training, data_format):
    rng = np.random.RandomState(6)
    shape = (2, 2, 2, 3) if data_format == "NHWC" else (2, 3, 2, 2)
    x0 = rng.randn(*shape).astype(np.float32)
    s0, o0 = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.randn(3).astype(np.float32)
    x = tf.placeholder(tf.float32, shape)
    s = tf.placeholder(tf.float32, [3])
    o = tf.placeholder(tf.float32, [3])
    kw = {} if is_training else {"mean": [0.1, -0.2, 0.3], "variance": [1.0, 0.5, 2.0]}
    y, _, _ = tf.nn.fused_batch_norm(x, s, o, data_format=data_format,
                                     is_training=is_training, **kw)
    grads = tf.gradients(y, [x, s, o])
    assert all(g is not None for g in grads)
    with tf.Session():
        err = compute_gradient_error([x, s, o], [list(shape), [3], [3]], y, list(shape),
                                     x_init_value=[x0, s0, o0], delta=1e-2)
    assert err < 2e-2


def test_fused_batch_norm_statistics_inputs_get_no_gradient(graph):
    x = tf.placeholder(tf.float32, [2, 1, 1, 2])
    mean, var = tf.constant([0.0, 0.0]), tf.constant([1.0, 1.0])
    y, _, _ = tf.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0], mean=mean, variance=var,
                                     is_training=False)
    assert tf.gradients(y, [mean, var]) == [None, None]


def test_fused_batch_norm_second_derivative_follows_the_batch_statistics(sess):
    """The training gradient recomputes the batch mean and variance from x (as TF's
    _BatchNormGrad), so its own gradient is the derivative of the true first derivative
    (central differences of its NumPy formula here). (tf.nn.moments stops the mean's
    gradient inside the variance, as TF's does, so the composite graph's second
    derivative is another.)"""
    rs = np.random.RandomState(0)
    x0, w0 = rs.rand(2, 2, 3, 2), rs.rand(2, 2, 3, 2)
    scale0, offset0, eps = np.array([1.5, -0.5]), np.array([0.1, 0.2]), 0.001
    x, w = tf.constant(x0, tf.float32), tf.constant(w0, tf.float32)
    y = tf.nn.fused_batch_norm(x, scale0.astype(np.float32), offset0.astype(np.float32),
                               epsilon=eps)[0]
    gx = tf.gradients(tf.reduce_sum(y * w), x)[0]
    got = sess.run(tf.gradients(tf.reduce_sum(gx * w), x)[0])

    def first(xv):  # d/dx sum(y * w) of batch norm with the batch's statistics
        mean = xv.mean((0, 1, 2))
        rstd = 1 / np.sqrt(((xv - mean) ** 2).mean((0, 1, 2)) + eps)
        xhat = (xv - mean) * rstd
        return scale0 * rstd * (w0 - w0.mean((0, 1, 2)) - xhat * (w0 * xhat).mean((0, 1, 2)))

    want = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        step = np.zeros_like(x0)
        step[i] = 1e-6
        want[i] = ((first(x0 + step) - first(x0 - step)) * w0).sum() / 2e-6
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_batch_normalization_op_names_are_tfs(graph):
    """TF's expression operator for operator: frozen graphs name "batchnorm/add_1"."""
    x = tf.placeholder(tf.float32, [None, 3])
    mean, var = tf.nn.moments(x, [0])
    y = tf.nn.batch_normalization(x, mean, var, tf.constant([0.0, 1.0, 2.0]),
                                  tf.constant([1.0, 2.0, 3.0]), 1e-3)
    assert y.name == "batchnorm/add_1:0"
    assert sorted(op.name for op in graph.get_operations()
                  if op.name.startswith("batchnorm/")) == [
        "batchnorm/Rsqrt", "batchnorm/add", "batchnorm/add/y", "batchnorm/add_1",
        "batchnorm/mul", "batchnorm/mul_1", "batchnorm/mul_2", "batchnorm/sub"]


# --- the oneDNN kernels (ops/onednn.py) and NumPy's, on the same cases ----------------------
def _bn_gradient_reference(g, x, scale, mean, var, eps, axis, training):
    """dx, d_scale, d_offset of batch normalization in float64 (TF's formula)."""
    axes = tuple(i for i in range(x.ndim) if i != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    g, x = g.astype(np.float64), x.astype(np.float64)
    rstd = 1 / np.sqrt(var.astype(np.float64) + eps)
    xhat = (x - mean.reshape(shape)) * rstd.reshape(shape)
    d_offset, d_scale = g.sum(axes), (g * xhat).sum(axes)
    if training:
        n = x.size / x.shape[axis]
        g = g - (d_offset / n).reshape(shape) - xhat * (d_scale / n).reshape(shape)
    return g * (scale * rstd).reshape(shape), d_scale, d_offset


@pytest.mark.usefixtures("conv_kernels")
@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_of_large_inputs_and_its_gradient(sess, is_training, data_format):
    # 32768 values and more go to oneDNN's kernels where they are installed
    rng = np.random.RandomState(8)
    shape = (8, 16, 16, 32) if data_format == "NHWC" else (8, 32, 16, 16)
    axis = 3 if data_format == "NHWC" else 1
    x0 = (rng.randn(*shape) * 2 + 0.5).astype(np.float32)
    g0 = rng.randn(*shape).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, 32).astype(np.float32)
    offset = rng.randn(32).astype(np.float32)
    axes = tuple(i for i in range(4) if i != axis)
    if is_training:
        mean, var = x0.astype(np.float64).mean(axes), x0.astype(np.float64).var(axes)
        kw = {}
    else:
        mean, var = rng.randn(32).astype(np.float32), rng.uniform(0.5, 2, 32).astype(np.float32)
        kw = {"mean": mean, "variance": var}
    x = tf.constant(x0)
    y, batch_mean, batch_var = tf.nn.fused_batch_norm(
        x, scale, offset, epsilon=1e-3, data_format=data_format, is_training=is_training, **kw)
    grads = tf.gradients(y, [x], grad_ys=tf.constant(g0))
    d_scale, d_offset = tf.gradients(y, [batch_mean.op.inputs[1], batch_mean.op.inputs[2]],
                                     grad_ys=tf.constant(g0))
    got = sess.run([y, batch_mean, batch_var, grads[0], d_scale, d_offset])
    np.testing.assert_allclose(got[0], _bn_reference(x0, scale, offset, mean, var, 1e-3, axis),
                               rtol=1e-4, atol=1e-4)
    n = x0.size // 32
    want_var = var * n / (n - 1) if is_training else var
    np.testing.assert_allclose(got[1], mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2], want_var, rtol=1e-5, atol=1e-5)
    want = _bn_gradient_reference(g0, x0, scale, mean, var, 1e-3, axis, is_training)
    for a, b in zip(got[3:], want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-3)


@pytest.mark.usefixtures("conv_kernels")
@pytest.mark.parametrize("radius", [0, 2, 40])
def test_lrn_and_its_gradient(sess, radius):
    # radius 0 stays on NumPy's kernel (a one-channel window crashes oneDNN 3.2's)
    rng = np.random.RandomState(9)
    x0 = rng.randn(4, 6, 5, 24).astype(np.float32)
    g0 = rng.randn(4, 6, 5, 24).astype(np.float32)
    x = tf.constant(x0)
    y = tf.nn.lrn(x, radius, bias=1.0, alpha=0.3, beta=0.75)
    dx = tf.gradients(y, x, grad_ys=tf.constant(g0))[0]
    got_y, got_dx = sess.run([y, dx])
    np.testing.assert_allclose(got_y, _lrn_reference(x0, radius, 1.0, 0.3, 0.75), rtol=1e-5,
                               atol=1e-6)
    # the gradient by central differences of the float64 reference, at a sample of points
    x64 = x0.astype(np.float64)
    for i in list(np.ndindex(x0.shape))[::97]:
        step = np.zeros_like(x64)
        step[i] = 1e-5
        want = ((_lrn_reference(x64 + step, radius, 1.0, 0.3, 0.75) -
                 _lrn_reference(x64 - step, radius, 1.0, 0.3, 0.75)) * g0).sum() / 2e-5
        assert abs(got_dx[i] - want) < 1e-4 * max(1.0, abs(want)), (i, got_dx[i], want)
