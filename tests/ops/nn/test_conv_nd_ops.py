"""Conv3D, depthwise, 3-D/1-D pooling and the composite convolutions against direct
NumPy references (explicit loops over output positions), with numeric gradients."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

# every test runs on the installed kernels (oneDNN's where present) and on NumPy's
pytestmark = pytest.mark.usefixtures("conv_kernels")


# --- references ------------------------------------------------------------------------
def _geometry(size, k, stride, rate, padding):
    eff = (k - 1) * rate + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2
    return (size - eff) // stride + 1, 0


def ref_conv(x, w, strides, padding, rates=None, depthwise=False):
    """Channels-last N-d convolution by explicit loops over output positions."""
    nsp = x.ndim - 2
    rates = rates or [1] * nsp
    geo = [_geometry(x.shape[i + 1], w.shape[i], strides[i], rates[i], padding)
           for i in range(nsp)]
    ci = x.shape[-1]
    co = ci * w.shape[-1] if depthwise else w.shape[-1]
    out = np.zeros((x.shape[0],) + tuple(g[0] for g in geo) + (co,))
    for pos in itertools.product(*(range(g[0]) for g in geo)):
        acc = np.zeros((x.shape[0], co))
        for tap in itertools.product(*(range(k) for k in w.shape[:nsp])):
            idx = [pos[i] * strides[i] + tap[i] * rates[i] - geo[i][1] for i in range(nsp)]
            if any(j < 0 or j >= x.shape[i + 1] for i, j in enumerate(idx)):
                continue
            v = x[(slice(None),) + tuple(idx)]  # [n, ci]
            if depthwise:
                acc += (v[:, :, None] * w[tap][None]).reshape(x.shape[0], -1)
            else:
                acc += v @ w[tap]
        out[(slice(None),) + pos] = acc
    return out


def ref_pool(x, ks, strides, padding, op):
    nsp = x.ndim - 2
    geo = [_geometry(x.shape[i + 1], ks[i], strides[i], 1, padding) for i in range(nsp)]
    out = np.zeros((x.shape[0],) + tuple(g[0] for g in geo) + (x.shape[-1],))
    for pos in itertools.product(*(range(g[0]) for g in geo)):
        sl = []
        for i in range(nsp):
            a = pos[i] * strides[i] - geo[i][1]
            sl.append(slice(max(a, 0), min(a + ks[i], x.shape[i + 1])))
        win = x[(slice(None),) + tuple(sl)].reshape(x.shape[0], -1, x.shape[-1])
        out[(slice(None),) + pos] = win.max(1) if op == "max" else win.mean(1)
    return out


RNG = np.random.RandomState(0)


# --- Conv3D ----------------------------------------------------------------------------
@pytest.mark.parametrize("padding,strides,rates", [("SAME", [1, 1, 1], [1, 1, 1]),
                                                   ("VALID", [2, 1, 2], [1, 1, 1]),
                                                   ("SAME", [1, 1, 1], [2, 1, 2])])
def test_conv3d_matches_reference(sess, padding, strides, rates):
    x = RNG.randn(2, 5, 4, 6, 3)
    w = RNG.randn(2, 3, 2, 3, 4)
    y = tf.nn.conv3d(x.astype(np.float32), w.astype(np.float32), [1] + strides + [1],
                     padding, dilations=[1] + rates + [1])
    expected = ref_conv(x, w, strides, padding, rates)
    assert y.dtype == tf.float32 and y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(sess.run(y), expected, rtol=1e-4, atol=1e-4)


def test_conv3d_ncdhw_and_unknown_dims(sess):
    x = RNG.randn(1, 4, 4, 4, 2)
    w = RNG.randn(2, 2, 2, 2, 3)
    p = tf.placeholder(tf.float64, [None, 2, None, 4, 4])
    y = tf.nn.conv3d(p, w, [1, 1, 1, 1, 1], "VALID", data_format="NCDHW")
    assert y.shape.as_list() == [None, 3, None, 3, 3]
    got = sess.run(y, {p: np.moveaxis(x, -1, 1)})
    np.testing.assert_allclose(np.moveaxis(got, 1, -1), ref_conv(x, w, [1] * 3, "VALID"))


def test_conv3d_errors(sess):
    with pytest.raises(ValueError, match="rank 5"):
        tf.nn.conv3d(tf.zeros([1, 2, 2, 2]), tf.zeros([1, 1, 1, 2, 2]), [1] * 5, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.conv3d(tf.zeros([1, 2, 2, 2, 1]), tf.zeros([3, 1, 1, 1, 1]), [1] * 5, "VALID")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv3d(tf.zeros([1, 2, 2, 2, 1]), tf.zeros([1, 1, 1, 1, 1]), [1] * 5, "FULL")
    p = tf.placeholder(tf.float32, [1, 2, 2, 2, None])
    y = tf.nn.conv3d(p, tf.zeros([1, 1, 1, 2, 2]), [1] * 5, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="filter in depth"):
        sess.run(y, {p: np.zeros([1, 2, 2, 2, 3], np.float32)})


def test_conv3d_gradients(graph):
    x0, w0 = RNG.randn(1, 3, 4, 3, 2), RNG.randn(2, 2, 2, 2, 3)
    x = tf.constant(x0)
    w = tf.constant(w0)
    y = tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME")
    with tf.Session():
        assert compute_gradient_error([x, w], [x0.shape, w0.shape], y,
                                      y.shape.as_list(), x_init_value=[x0, w0]) < 1e-6


def test_conv3d_transpose_is_the_input_gradient(sess):
    dy = RNG.randn(2, 2, 3, 2, 4)
    w = RNG.randn(2, 2, 2, 3, 4)
    y = tf.nn.conv3d_transpose(dy, w, [2, 4, 6, 4, 3], [1, 2, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [2, 4, 6, 4, 3]
    # <conv3d(x), dy> == <x, conv3d_transpose(dy)> for every x
    x = RNG.randn(2, 4, 6, 4, 3)
    fwd = ref_conv(x, w, [2, 2, 2], "SAME")
    np.testing.assert_allclose(np.sum(fwd * dy), np.sum(x * sess.run(y)), rtol=1e-10)


def test_conv3d_backprop_filter_v2(sess):
    x, dy = RNG.randn(1, 3, 3, 3, 2), RNG.randn(1, 2, 2, 2, 3)
    dw = tf.nn.conv3d_backprop_filter_v2(x, [2, 2, 2, 2, 3], dy, [1] * 5, "VALID")
    assert dw.shape.as_list() == [2, 2, 2, 2, 3]
    w = RNG.randn(2, 2, 2, 2, 3)
    np.testing.assert_allclose(np.sum(ref_conv(x, w, [1] * 3, "VALID") * dy),
                               np.sum(w * sess.run(dw)), rtol=1e-10)
    assert tf.nn.conv3d_backprop_filter is tf.nn.conv3d_backprop_filter_v2


# --- depthwise / separable / atrous ------------------------------------------------------
@pytest.mark.parametrize("padding,stride,rate", [("SAME", 1, 1), ("VALID", 2, 1),
                                                 ("SAME", 1, 2)])
def test_depthwise_conv2d(sess, padding, stride, rate):
    x, w = RNG.randn(2, 7, 6, 3), RNG.randn(3, 2, 3, 2)
    y = tf.nn.depthwise_conv2d(x.astype(np.float32), w.astype(np.float32),
                               [1, stride, stride, 1], padding, rate=[rate, rate])
    expected = ref_conv(x, w, [stride] * 2, padding, [rate] * 2, depthwise=True)
    assert y.op.type == "DepthwiseConv2dNative" and y.op.name == "depthwise"
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(sess.run(y), expected, rtol=1e-4, atol=1e-4)


def test_depthwise_native_nchw_and_backprops(sess):
    x, w = RNG.randn(1, 5, 5, 2), RNG.randn(3, 3, 2, 2)
    y = tf.nn.depthwise_conv2d_native(np.moveaxis(x, -1, 1), w, [1, 1, 1, 1], "SAME",
                                      data_format="NCHW")
    assert y.shape.as_list() == [1, 4, 5, 5]
    expected = ref_conv(x, w, [1, 1], "SAME", depthwise=True)
    np.testing.assert_allclose(np.moveaxis(sess.run(y), 1, -1), expected)
    dy = RNG.randn(*expected.shape)
    dx = tf.nn.depthwise_conv2d_native_backprop_input([1, 5, 5, 2], w, dy, [1, 1, 1, 1],
                                                      "SAME")
    dw = tf.nn.depthwise_conv2d_native_backprop_filter(x, [3, 3, 2, 2], dy, [1, 1, 1, 1],
                                                       "SAME")
    dxv, dwv = sess.run([dx, dw])
    x2, w2 = RNG.randn(*x.shape), RNG.randn(*w.shape)
    np.testing.assert_allclose(np.sum(ref_conv(x2, w, [1, 1], "SAME", depthwise=True) * dy),
                               np.sum(x2 * dxv), rtol=1e-10)
    np.testing.assert_allclose(np.sum(ref_conv(x, w2, [1, 1], "SAME", depthwise=True) * dy),
                               np.sum(w2 * dwv), rtol=1e-10)


def test_depthwise_errors(graph):
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.nn.depthwise_conv2d_native(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 2, 1]),
                                      [1, 1, 1, 1], "SAME")


def test_depthwise_gradients(graph):
    x0, w0 = RNG.randn(1, 4, 5, 2), RNG.randn(2, 3, 2, 2)
    x, w = tf.constant(x0), tf.constant(w0)
    y = tf.nn.depthwise_conv2d(x, w, [1, 2, 1, 1], "SAME")
    with tf.Session():
        assert compute_gradient_error([x, w], [x0.shape, w0.shape], y,
                                      y.shape.as_list(), x_init_value=[x0, w0]) < 1e-6


def test_separable_conv2d(sess):
    x, dw, pw = RNG.randn(2, 5, 5, 3), RNG.randn(3, 3, 3, 2), RNG.randn(1, 1, 6, 4)
    y = tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "VALID")
    assert y.op.name == "separable_conv2d" and y.shape.as_list() == [2, 3, 3, 4]
    mid = ref_conv(x, dw, [1, 1], "VALID", depthwise=True)
    np.testing.assert_allclose(sess.run(y), mid @ pw[0, 0], rtol=1e-10)
    with pytest.raises(ValueError, match=r"\[1, 1"):
        tf.nn.separable_conv2d(x, dw, RNG.randn(2, 1, 6, 4), [1, 1, 1, 1], "VALID")


def test_atrous_conv2d_and_convolution(sess):
    x, w = RNG.randn(1, 7, 7, 2), RNG.randn(3, 3, 2, 3)
    y = tf.nn.atrous_conv2d(x, w, 2, "SAME")
    np.testing.assert_allclose(sess.run(y), ref_conv(x, w, [1, 1], "SAME", [2, 2]),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="less than one"):
        tf.nn.atrous_conv2d(x, w, 0, "SAME")
    x1, w1 = RNG.randn(2, 9, 3), RNG.randn(3, 3, 4)
    y1 = tf.nn.convolution(x1, w1, "VALID", strides=[2])
    np.testing.assert_allclose(sess.run(y1), ref_conv(x1, w1, [2], "VALID"), rtol=1e-10)
    x3, w3 = RNG.randn(1, 4, 4, 4, 1), RNG.randn(2, 2, 2, 1, 2)
    y3 = tf.nn.convolution(x3, w3, "SAME", dilation_rate=[1, 2, 1])
    np.testing.assert_allclose(sess.run(y3), ref_conv(x3, w3, [1] * 3, "SAME", [1, 2, 1]),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="dilation_rate"):
        tf.nn.convolution(x1, w1, "VALID", strides=[2], dilation_rate=[2])


def test_conv1d(sess):
    x, w = RNG.randn(2, 9, 3), RNG.randn(3, 3, 4)
    y = tf.nn.conv1d(x, w, 2, "SAME")
    assert y.op.name == "conv1d/Squeeze" and y.op.inputs[0].op.type == "Conv2D"
    np.testing.assert_allclose(sess.run(y), ref_conv(x, w, [2], "SAME"), rtol=1e-10)
    yc = tf.nn.conv1d(np.moveaxis(x, -1, 1), w, 1, "VALID", data_format="NCW")
    np.testing.assert_allclose(np.moveaxis(sess.run(yc), 1, -1),
                               ref_conv(x, w, [1], "VALID"), rtol=1e-10)
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.conv1d(x, w, 1, "SAME", data_format="NHCW")


# --- pooling ---------------------------------------------------------------------------
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool3d(sess, padding):
    x = RNG.randn(2, 5, 4, 3, 2).astype(np.float32)
    mx = tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 1, 2, 1], padding)
    av = tf.nn.avg_pool3d(x, 2, [2, 1, 2], padding)
    for t, op in ((mx, "max"), (av, "avg")):
        expected = ref_pool(x.astype(np.float64), [2, 2, 2], [2, 1, 2], padding, op)
        assert t.dtype == tf.float32 and t.shape.as_list() == list(expected.shape)
        np.testing.assert_allclose(sess.run(t), expected, rtol=1e-5, atol=1e-6)


def test_pool3d_ncdhw(sess):
    x = RNG.randn(1, 4, 4, 4, 3)
    y = tf.nn.max_pool3d(np.moveaxis(x, -1, 1), 2, 2, "VALID", data_format="NCDHW")
    assert y.shape.as_list() == [1, 3, 2, 2, 2]
    np.testing.assert_allclose(np.moveaxis(sess.run(y), 1, -1),
                               ref_pool(x, [2] * 3, [2] * 3, "VALID", "max"))
    with pytest.raises(ValueError, match="depth"):
        tf.nn.max_pool3d(x, [1, 1, 1, 1, 2], 1, "VALID")


def test_pool3d_gradients(graph):
    x0 = RNG.permutation(48).reshape(1, 4, 3, 4, 1) / 10.0  # distinct: no max ties
    x = tf.constant(x0)
    with tf.Session():
        for fn in (tf.nn.max_pool3d, tf.nn.avg_pool3d):
            y = fn(x, 2, [1, 2, 1, 2, 1], "SAME")
            assert compute_gradient_error(x, x0.shape, y, y.shape.as_list(),
                                          x_init_value=x0) < 1e-6


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_avg_pool3d_gradient_of_float32(sess, padding):
    """AvgPool3DGrad (oneDNN's where installed) against the transposed reference: the
    pool is linear, so the gradient is the matrix of ref_pool's unit responses, transposed,
    times dy."""
    shape, ks, strides = (2, 3, 5, 4, 2), [2, 3, 2], [1, 2, 2]
    x = tf.placeholder(tf.float32, shape)
    y = tf.nn.avg_pool3d(x, [1] + ks + [1], [1] + strides + [1], padding)
    dy = RNG.randn(*y.shape.as_list()).astype(np.float32)
    (dx,) = tf.gradients(y, [x], dy)
    unit = np.eye(int(np.prod(shape))).reshape((-1,) + shape)
    jacobian = np.stack([ref_pool(u, ks, strides, padding, "avg").ravel() for u in unit])
    got = sess.run(dx, {x: np.zeros(shape, np.float32)})
    np.testing.assert_allclose(got, (jacobian @ dy.ravel()).reshape(shape), rtol=1e-5,
                               atol=1e-6)


def test_max_pool3d_of_nan_and_minus_inf_follows_tf_eigen_kernel(sess):
    """A window of -inf gives -inf and a NaN in a window's last cell NaN (TF's Eigen
    MaxPool3D; with oneDNN TF gives the lowest float and skips NaN): such inputs stay on
    the NumPy kernel, on any install."""
    x = np.arange(16, dtype=np.float32).reshape(1, 2, 2, 4, 1)
    x[0, 1, 1, 1, 0] = np.nan                      # the last cell of the first window
    x[..., 2:, :] = -np.inf                         # the second window all -inf
    y = sess.run(tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"))
    assert np.isnan(y[0, 0, 0, 0, 0]) and y[0, 0, 0, 1, 0] == -np.inf


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool1d(sess, padding):
    x = RNG.randn(2, 7, 3)
    mx = tf.nn.max_pool1d(x, 3, 2, padding)
    av = tf.nn.avg_pool1d(x, [3], [2], padding)
    assert mx.op.name == "MaxPool1d/Squeeze" and av.op.name == "AvgPool1D/Squeeze"
    np.testing.assert_allclose(sess.run(mx), ref_pool(x, [3], [2], padding, "max"))
    np.testing.assert_allclose(sess.run(av), ref_pool(x, [3], [2], padding, "avg"))
    yc = tf.nn.max_pool1d(np.moveaxis(x, -1, 1), 3, 2, padding, data_format="NCW")
    np.testing.assert_allclose(np.moveaxis(sess.run(yc), 1, -1),
                               ref_pool(x, [3], [2], padding, "max"))


def test_pool(sess):
    x2 = RNG.randn(1, 5, 5, 2)
    y = tf.nn.pool(x2, [2, 2], "MAX", "SAME", strides=[2, 2])
    assert y.op.name == "max_pool" and y.op.type == "MaxPool"
    np.testing.assert_allclose(sess.run(y), ref_pool(x2, [2, 2], [2, 2], "SAME", "max"))
    x1 = RNG.randn(2, 6, 3)
    np.testing.assert_allclose(sess.run(tf.nn.pool(x1, [2], "AVG", "VALID")),
                               ref_pool(x1, [2], [1], "VALID", "avg"))
    x3 = RNG.randn(1, 4, 4, 4, 1)
    np.testing.assert_allclose(sess.run(tf.nn.pool(x3, [2, 2, 2], "AVG", "VALID",
                                                   strides=[2, 2, 2])),
                               ref_pool(x3, [2] * 3, [2] * 3, "VALID", "avg"))
    with pytest.raises(ValueError, match="2-D MIN pooling is not supported"):
        tf.nn.pool(x2, [2, 2], "MIN", "SAME")
    with pytest.raises(ValueError, match="'SAME' padding is not implemented for "
                                         "`dilation_rate` > 1"):
        tf.nn.pool(x2, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])


def test_conv1d_transpose_is_the_input_gradient(sess):
    dy, w = RNG.randn(2, 5, 4), RNG.randn(3, 3, 4)
    y = tf.nn.conv1d_transpose(dy, w, [2, 10, 3], 2, "SAME")
    assert y.shape.as_list() == [2, 10, 3] and y.op.name == "conv1d_transpose/Squeeze"
    x = RNG.randn(2, 10, 3)
    np.testing.assert_allclose(np.sum(ref_conv(x, w, [2], "SAME") * dy),
                               np.sum(x * sess.run(y)), rtol=1e-10)
    shape = tf.placeholder(tf.int32, [3])
    yd = tf.nn.conv1d_transpose(np.moveaxis(dy, -1, 1), w, shape, 2, "SAME",
                                data_format="NCW")
    got = sess.run(yd, {shape: [2, 3, 10]})
    np.testing.assert_allclose(np.moveaxis(got, 1, -1), sess.run(y), rtol=1e-10)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_atrous_conv2d_transpose_is_the_input_gradient(sess, padding):
    w = RNG.randn(3, 2, 2, 4)
    out = [1, 7, 6, 2]
    fwd_shape = ref_conv(np.zeros(out), w, [1, 1], padding, [2, 2]).shape
    dy = RNG.randn(*fwd_shape)
    y = tf.nn.atrous_conv2d_transpose(dy, w, out, 2, padding)
    x = RNG.randn(*out)
    np.testing.assert_allclose(np.sum(ref_conv(x, w, [1, 1], padding, [2, 2]) * dy),
                               np.sum(x * sess.run(y)), rtol=1e-10)
    with pytest.raises(ValueError, match="rate"):
        tf.nn.atrous_conv2d_transpose(dy, w, out, 0, padding)
    with pytest.raises(ValueError, match="channel count"):
        tf.nn.atrous_conv2d_transpose(RNG.randn(1, 7, 6, 3), w, out, 2, padding)


def test_pool_v2_dispatches_on_rank(sess):
    x1, x3 = RNG.randn(2, 6, 3), RNG.randn(1, 4, 4, 4, 2)
    m1 = tf.nn.max_pool_v2(x1, 2, 2, "VALID")
    a3 = tf.nn.avg_pool_v2(x3, 2, 2, "VALID")
    assert m1.op.name == "MaxPool1d/Squeeze" and a3.op.type == "AvgPool3D"
    np.testing.assert_allclose(sess.run(m1), ref_pool(x1, [2], [2], "VALID", "max"))
    np.testing.assert_allclose(sess.run(a3), ref_pool(x3, [2] * 3, [2] * 3, "VALID", "avg"))
    with pytest.raises(ValueError, match="unknown rank"):
        tf.nn.max_pool_v2(tf.placeholder(tf.float32), 2, 2, "VALID")


def test_depthwise_explicit_padding(sess):
    x, w = RNG.randn(1, 4, 5, 2), RNG.randn(3, 3, 2, 1)
    pads = [[0, 0], [1, 1], [1, 1], [0, 0]]  # as SAME for a 3x3 window at stride 1
    y = tf.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], pads)
    assert y.op.get_attr("padding") == b"EXPLICIT" and y.shape.as_list() == [1, 4, 5, 2]
    np.testing.assert_allclose(sess.run(y), ref_conv(x, w, [1, 1], "SAME", depthwise=True))


def _transpose_reference(x, f, out_shape, stride, padding):
    """conv_transpose, channels last, one input element at a time: each scatters
    x * filter into the output window the forward convolution would have read."""
    n = x.ndim - 2
    out = np.zeros(out_shape)
    k = f.shape[:n]
    pads = [max((x.shape[1 + a] - 1) * stride + k[a] - out_shape[1 + a], 0) // 2
            if padding == "SAME" else 0 for a in range(n)]
    for b in range(x.shape[0]):
        for p in np.ndindex(*x.shape[1:1 + n]):
            for d in np.ndindex(*k):
                q = tuple(p[a] * stride + d[a] - pads[a] for a in range(n))
                if all(0 <= q[a] < out_shape[1 + a] for a in range(n)):
                    out[(b,) + q] += f[d] @ x[(b,) + p]
    return out


@pytest.mark.parametrize("x_shape,f_shape,out_shape,padding", [
    ((1, 3, 2), (2, 4, 2), (1, 6, 4), "VALID"),
    ((2, 3, 3, 2), (3, 2, 4, 2), (2, 6, 6, 4), "SAME"),
    ((1, 2, 3, 2, 2), (2, 2, 2, 3, 2), (1, 4, 6, 4, 3), "SAME"),
])
def test_conv_transpose_dispatches_on_the_output_rank(sess, x_shape, f_shape, out_shape,
                                                      padding):
    rs = np.random.RandomState(len(x_shape))
    x, f = rs.rand(*x_shape), rs.rand(*f_shape)
    y = tf.nn.conv_transpose(x, f, list(out_shape), 2, padding=padding)
    assert y.name.startswith("conv_transpose") and y.shape.as_list() == list(out_shape)
    np.testing.assert_allclose(sess.run(y), _transpose_reference(x, f, out_shape, 2, padding),
                               rtol=1e-12)
    shaped = tf.nn.conv_transpose(x, f, tf.constant(out_shape), [2] * (len(out_shape) - 2),
                                  padding=padding)
    np.testing.assert_allclose(sess.run(shaped), sess.run(y))


def test_conv_transpose_errors_and_depthwise_backprop_names(graph):
    x = tf.zeros([1, 3, 3, 2])
    with pytest.raises(ValueError, match="must be of length 3, 4 or 5"):
        tf.nn.conv_transpose(x, tf.zeros([2, 2, 4, 2]), [1, 6], 2)
    with pytest.raises(ValueError, match="must be a tensor or sized collection"):
        tf.nn.conv_transpose(x, tf.zeros([2, 2, 4, 2]), 5, 2)
    assert tf.nn.depthwise_conv2d_backprop_input is \
        tf.nn.depthwise_conv2d_native_backprop_input
    assert tf.nn.depthwise_conv2d_backprop_filter is \
        tf.nn.depthwise_conv2d_native_backprop_filter


@pytest.mark.parametrize("padding,rate,data_format", [
    ("SAME", [2, 3], None), ("VALID", [2, 3], None), ("SAME", [1, 1], None),
    ("VALID", [2, 1], None), ("SAME", [2, 2], "NCHW")])
def test_with_space_to_batch_is_the_dilated_op(sess, padding, rate, data_format):
    """A VALID convolution run through with_space_to_batch at a rate is the convolution
    dilated by that rate (TF's definition of atrous convolution)."""
    rs = np.random.RandomState(0)
    x = rs.rand(2, 3, 9, 8) if data_format else rs.rand(2, 9, 8, 3)
    f = rs.rand(3, 2, 3, 4)
    calls = []

    def op(inp, num_spatial_dims, pad):
        calls.append((num_spatial_dims, pad))
        return tf.nn.convolution(inp, f, pad, data_format=data_format)
    y = tf.nn.with_space_to_batch(x, rate, padding, op, filter_shape=f.shape,
                                  data_format=data_format)
    want = tf.nn.convolution(x, f, padding, dilation_rate=rate, data_format=data_format)
    assert calls == [(2, padding if rate == [1, 1] else "VALID")]
    np.testing.assert_allclose(sess.run(y), sess.run(want), rtol=1e-12)


def test_with_space_to_batch_errors(graph):
    x = tf.zeros([1, 4, 4, 1])
    op = lambda inp, n, pad: inp  # noqa: E731
    with pytest.raises(ValueError, match="`filter_shape` must be specified for "
                                         "`padding='SAME'`"):
        tf.nn.with_space_to_batch(x, [2, 2], "SAME", op)
    with pytest.raises(ValueError, match="`padding` must be one of 'SAME' or 'VALID'. "
                                         "Received: padding=FULL"):
        tf.nn.with_space_to_batch(x, [2, 2], "FULL", op)
    with pytest.raises(ValueError, match="monotonically increasing"):
        tf.nn.with_space_to_batch(x, [2, 2], "VALID", op, spatial_dims=[2, 1])


def test_max_pool3d_gradient_goes_to_every_tied_maximum(sess):
    """TF's CPU MaxPool3DGrad gives each tied maximum of a window the window's gradient;
    its MaxPool3DGradGrad reads the first maximum only."""
    x = tf.constant([1.0, 1.0, 0.5, 0.5, 2.0, 2.0, 2.0, 0.0], shape=[1, 1, 2, 4, 1])
    y = tf.nn.max_pool3d(x, [1, 1, 2, 2, 1], [1, 1, 1, 2, 1], "VALID")
    dy = tf.constant([3.0, 5.0], shape=[1, 1, 1, 2, 1])
    dx = tf.gradients(tf.reduce_sum(y * dy), x)[0]
    # window 1 is [[1, 1], [2, 2]]: both 2s get 3; window 2 is [[.5, .5], [2, 0]]
    assert sess.run(dx).ravel().tolist() == [0, 0, 0, 0, 3, 3, 5, 0]
    w = tf.constant(np.arange(1.0, 9.0, dtype=np.float32), shape=[1, 1, 2, 4, 1])
    ddy = tf.gradients(tf.reduce_sum(dx * w), dy)[0]
    assert sess.run(ddy).ravel().tolist() == [5, 7]  # w at each window's first maximum


def test_depthwise_with_rate_and_strides_strides_the_space_to_batch_form(sess):
    """TF 2 accepts rate > 1 with strides > 1 and runs the strided op on each interleaved
    sub-image of the space-to-batch form: with SAME padding a 6x6 input keeps 4x4. The
    values are TensorFlow 2.21's; the gradient is checked numerically."""
    x0 = np.arange(1, 37, dtype=np.float64).reshape(1, 6, 6, 1)
    f0 = np.arange(1, 9, dtype=np.float64).reshape(2, 2, 1, 2)
    x, f = tf.constant(x0), tf.constant(f0)
    same = tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME", rate=[2, 2])
    valid = tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "VALID", rate=[2, 2])
    assert same.shape.as_list() == [1, 4, 4, 2] and valid.shape.as_list() == [1, 2, 2, 2]
    assert sess.run(same)[0, :, :, 0].tolist() == [[56, 98, 134, 55], [104, 180, 228, 90],
                                                   [284, 468, 516, 198], [78, 106, 118, 29]]
    assert sess.run(valid)[0, :, :, 0].tolist() == [[180, 196], [276, 292]]
    sep = tf.nn.separable_conv2d(x, f, tf.ones([1, 1, 2, 3], tf.float64), [1, 2, 2, 1],
                                 "VALID", rate=[2, 2])
    assert sess.run(sep)[0, :, :, 0].tolist() == [[392, 428], [608, 644]]
    err = compute_gradient_error([x, f], [[1, 6, 6, 1], [2, 2, 1, 2]], same, [1, 4, 4, 2],
                                 x_init_value=[x0 / 36, f0 / 8])
    assert err < 1e-8
