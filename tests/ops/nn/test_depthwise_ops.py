"""The depthwise kernels (forward, input and filter gradients) against plain NumPy loops
over output positions and taps, for multipliers 1 to 3 and strides, dilations, paddings
and both data formats."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.nn import depthwise_ops

# every test runs on the installed kernels (oneDNN's where present) and on NumPy's
pytestmark = pytest.mark.usefixtures("conv_kernels")

RNG = np.random.RandomState(0)


# --- references ---------------------------------------------------------------------------
def _pads(size, k, stride, dilation, padding):
    """(before, after) padding of one dimension, as TF computes it."""
    if isinstance(padding, list):
        return tuple(padding)
    if padding == "VALID":
        return 0, 0
    eff = (k - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2


def _geometry(x_shape, w_shape, strides, dilations, padding):
    """Pads and output sizes of H and W (NHWC x_shape; padding a string or 2 pairs)."""
    pads, outs = [], []
    for d in range(2):
        p = padding[d] if isinstance(padding, list) else padding
        before, after = _pads(x_shape[d + 1], w_shape[d], strides[d], dilations[d], p)
        eff = (w_shape[d] - 1) * dilations[d] + 1
        pads.append((before, after))
        outs.append((x_shape[d + 1] + before + after - eff) // strides[d] + 1)
    return pads, outs


def _taps(w_shape):
    return itertools.product(range(w_shape[0]), range(w_shape[1]))


def ref_forward(x, w, strides, dilations, padding):
    pads, (oh, ow) = _geometry(x.shape, w.shape, strides, dilations, padding)
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    n, c, m = x.shape[0], w.shape[2], w.shape[3]
    out = np.zeros((n, oh, ow, c, m))
    for i, j in itertools.product(range(oh), range(ow)):
        for a, b in _taps(w.shape):
            v = xp[:, i * strides[0] + a * dilations[0], j * strides[1] + b * dilations[1]]
            out[:, i, j] += v[:, :, None] * w[a, b]
    return out.reshape(n, oh, ow, c * m)


def ref_backprop_input(x_shape, w, dy, strides, dilations, padding):
    pads, (oh, ow) = _geometry(x_shape, w.shape, strides, dilations, padding)
    n, h, wd, c = x_shape
    dxp = np.zeros((n, h + sum(pads[0]), wd + sum(pads[1]), c))
    dy5 = dy.reshape(n, oh, ow, c, -1)
    for i, j in itertools.product(range(oh), range(ow)):
        for a, b in _taps(w.shape):
            r, s = i * strides[0] + a * dilations[0], j * strides[1] + b * dilations[1]
            dxp[:, r, s] += (dy5[:, i, j] * w[a, b]).sum(-1)
    return dxp[:, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + wd]


def ref_backprop_filter(x, w_shape, dy, strides, dilations, padding):
    pads, (oh, ow) = _geometry(x.shape, w_shape, strides, dilations, padding)
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    dy5 = dy.reshape(x.shape[0], oh, ow, w_shape[2], w_shape[3])
    dw = np.zeros(w_shape)
    for i, j in itertools.product(range(oh), range(ow)):
        for a, b in _taps(w_shape):
            v = xp[:, i * strides[0] + a * dilations[0], j * strides[1] + b * dilations[1]]
            dw[a, b] += (v[:, :, None] * dy5[:, i, j]).sum(0)
    return dw


# --- the kernels against the references ---------------------------------------------------
# (strides, dilations, padding of H and W; a padding list is explicit [before, after] pairs)
GEOMETRIES = [
    ([1, 1], [1, 1], "SAME"),
    ([1, 1], [1, 1], "VALID"),
    ([2, 2], [1, 1], "SAME"),
    ([2, 3], [1, 1], "VALID"),
    ([1, 2], [1, 1], "SAME"),
    ([1, 1], [2, 2], "SAME"),
    ([1, 1], [2, 1], "VALID"),
    ([2, 1], [1, 3], "SAME"),
    ([1, 1], [1, 1], [[1, 2], [0, 3]]),
    ([2, 2], [1, 2], [[2, 0], [1, 1]]),
]


def _attrs4(pair, fmt):
    return [1, 1] + pair if fmt == "NCHW" else [1] + pair + [1]


def _padding4(padding, fmt):
    if not isinstance(padding, list):
        return padding
    return [[0, 0], [0, 0]] + padding if fmt == "NCHW" else [[0, 0]] + padding + [[0, 0]]


def _to_format(a, fmt):
    return np.moveaxis(a, -1, 1) if fmt == "NCHW" else a


def _from_format(a, fmt):
    return np.moveaxis(a, 1, -1) if fmt == "NCHW" else a


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("multiplier", [1, 2, 3])
def test_kernels_match_loop_references(sess, multiplier, fmt):
    ops, expected = [], []
    for (strides, dilations, padding), kshape in itertools.product(
            GEOMETRIES, [(3, 3), (2, 4)]):
        x = RNG.randn(2, 7, 9, 3)
        w = RNG.randn(kshape[0], kshape[1], 3, multiplier)
        y = ref_forward(x, w, strides, dilations, padding)
        dy = RNG.randn(*y.shape)
        args = dict(strides=_attrs4(strides, fmt), padding=_padding4(padding, fmt),
                    data_format=fmt, dilations=_attrs4(dilations, fmt))
        xf, dyf = _to_format(x, fmt), _to_format(dy, fmt)
        ops += [tf.nn.depthwise_conv2d_native(xf, w, **args),
                tf.nn.depthwise_conv2d_native_backprop_input(list(xf.shape), w, dyf, **args),
                tf.nn.depthwise_conv2d_native_backprop_filter(xf, list(w.shape), dyf, **args)]
        expected += [y, ref_backprop_input(x.shape, w, dy, strides, dilations, padding),
                     ref_backprop_filter(x, w.shape, dy, strides, dilations, padding)]
    for k, (got, want) in enumerate(zip(sess.run(ops), expected)):
        got = got if k % 3 == 2 else _from_format(got, fmt)
        assert got.shape == want.shape, (k, GEOMETRIES[k // 6])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                   err_msg=str(GEOMETRIES[k // 6]))


def test_forward_in_blocks_of_rows_and_images(sess, monkeypatch):
    """Tiny blocks: the forward kernel splits the batch and each image's rows."""
    monkeypatch.setattr(depthwise_ops, "_BLOCK_ELEMENTS", 40)
    x, w = RNG.randn(3, 9, 6, 2), RNG.randn(3, 2, 2, 2)
    for strides, dilations, padding in GEOMETRIES[:6]:
        y = tf.nn.depthwise_conv2d_native(x, w, _attrs4(strides, "NHWC"), padding,
                                          dilations=_attrs4(dilations, "NHWC"))
        np.testing.assert_allclose(sess.run(y), ref_forward(x, w, strides, dilations,
                                                            padding), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_matches_float64(sess, dtype):
    x, w = RNG.randn(2, 6, 5, 4), RNG.randn(3, 3, 4, 2)
    y = tf.nn.depthwise_conv2d_native(x.astype(dtype), w.astype(dtype), [1, 1, 1, 1],
                                      "SAME")
    dy = RNG.randn(2, 6, 5, 8)
    dx = tf.nn.depthwise_conv2d_native_backprop_input([2, 6, 5, 4], w.astype(dtype),
                                                      dy.astype(dtype), [1, 1, 1, 1], "SAME")
    dw = tf.nn.depthwise_conv2d_native_backprop_filter(x.astype(dtype), [3, 3, 4, 2],
                                                       dy.astype(dtype), [1, 1, 1, 1], "SAME")
    tol = 1e-2 if dtype == np.float16 else 1e-5
    got = sess.run([y, dx, dw])
    want = [ref_forward(x, w, [1, 1], [1, 1], "SAME"),
            ref_backprop_input(x.shape, w, dy, [1, 1], [1, 1], "SAME"),
            ref_backprop_filter(x, w.shape, dy, [1, 1], [1, 1], "SAME")]
    for g, e in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol * np.abs(e).max())


def test_empty_batch_and_zero_multiplier(sess):
    y = tf.nn.depthwise_conv2d_native(np.zeros((0, 4, 4, 2)), RNG.randn(3, 3, 2, 2),
                                      [1, 1, 1, 1], "SAME")
    dw = tf.nn.depthwise_conv2d_native_backprop_filter(np.zeros((0, 4, 4, 2)), [3, 3, 2, 2],
                                                       np.zeros((0, 4, 4, 4)), [1, 1, 1, 1],
                                                       "SAME")
    dx = tf.nn.depthwise_conv2d_native_backprop_input([2, 4, 4, 2], np.zeros((3, 3, 2, 0)),
                                                      np.zeros((2, 4, 4, 0)), [1, 1, 1, 1],
                                                      "SAME")
    yv, dwv, dxv = sess.run([y, dw, dx])
    assert yv.shape == (0, 4, 4, 4)
    np.testing.assert_array_equal(dwv, np.zeros((3, 3, 2, 2)))
    np.testing.assert_array_equal(dxv, np.zeros((2, 4, 4, 2)))
