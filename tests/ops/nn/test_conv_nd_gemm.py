"""conv_nd_gemm: the N-d convolution and its gradients lowered to matrix products, in
both im2col layouts (transposed for few channels, row-major otherwise), both forms of
the input gradient, and in one block or many, against float64 NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.ops.nn import conv_nd_gemm
from tensorweave.ops.nn.conv_ops import make_window

RNG = np.random.RandomState(7)
# this module tests the NumPy lowering; ops/onednn.py has its own tests (test_onednn.py)
pytestmark = pytest.mark.usefixtures("numpy_kernels")


# --- references (float64, per-tap sums over an explicitly padded input) ------------------
def _geometry(size, k, stride, rate, padding):
    """(outputs, pad before) of one dimension, TF's rule."""
    eff = (k - 1) * rate + 1
    if padding == "SAME":
        out = -(-size // stride)
        return out, max((out - 1) * stride + eff - size, 0) // 2
    return (size - eff) // stride + 1, 0


def _tap_slices(x_shape, w_shape, strides, rates, padding):
    """(geometry, padded shape, [(tap, index into the padded input)])."""
    geo = [_geometry(x_shape[i + 1], w_shape[i], strides[i], rates[i], padding)
           for i in range(3)]
    padded = [x_shape[i + 1] + geo[i][1] + w_shape[i] * rates[i] + strides[i] * geo[i][0]
              for i in range(3)]
    taps = []
    for tap in np.ndindex(*w_shape[:3]):
        index = tuple(slice(tap[i] * rates[i], tap[i] * rates[i] + strides[i] * geo[i][0],
                            strides[i]) for i in range(3))
        taps.append((tap, (slice(None),) + index))
    return geo, padded, taps


def _pad(x, geo, padded):
    out = np.zeros((x.shape[0],) + tuple(padded) + (x.shape[-1],))
    out[(slice(None),) + tuple(slice(g[1], g[1] + s) for g, s in zip(geo, x.shape[1:4]))] = x
    return out


def ref_conv(x, w, strides, rates, padding):
    geo, padded, taps = _tap_slices(x.shape, w.shape, strides, rates, padding)
    xp = _pad(x.astype(np.float64), geo, padded)
    return sum(xp[index] @ w[tap].astype(np.float64) for tap, index in taps)


def ref_backprop_filter(x, w_shape, dy, strides, rates, padding):
    geo, padded, taps = _tap_slices(x.shape, w_shape, strides, rates, padding)
    xp = _pad(x.astype(np.float64), geo, padded)
    dw = np.zeros(w_shape)
    for tap, index in taps:
        dw[tap] = np.tensordot(xp[index], dy, axes=([0, 1, 2, 3], [0, 1, 2, 3]))
    return dw


def ref_backprop_input(x_shape, w, dy, strides, rates, padding):
    geo, padded, taps = _tap_slices(x_shape, w.shape, strides, rates, padding)
    dxp = np.zeros((x_shape[0],) + tuple(padded) + (x_shape[-1],))
    for tap, index in taps:
        dxp[index] += dy @ w[tap].T
    return dxp[(slice(None),) + tuple(slice(g[1], g[1] + s)
                                      for g, s in zip(geo, x_shape[1:4]))]


# --- the lowering itself ----------------------------------------------------------------------
# (x shape, filter shape, strides, rates, padding, im2col transposed?)
CASES = [
    ([3, 5, 6, 7, 2], [3, 2, 3, 2, 4], [1, 1, 1], [1, 1, 1], "SAME", True),
    ([2, 6, 5, 8, 3], [2, 3, 3, 3, 5], [1, 2, 1], [2, 1, 2], "VALID", True),
    ([3, 5, 6, 7, 2], [3, 2, 3, 2, 4], [2, 1, 2], [1, 1, 1], "SAME", False),  # w stride 2
    ([2, 5, 4, 6, 6], [2, 3, 2, 6, 3], [1, 1, 1], [1, 1, 1], "SAME", False),  # 6 channels
    ([2, 6, 5, 7, 5], [3, 2, 2, 5, 4], [2, 1, 3], [1, 1, 1], "VALID", False),
]
# bytes of im2col per block: one block, one plane of one image per block, whole images
CHUNKS = [None, 1, 4000]


def _windows(xs, fs, strides, rates, padding):
    return [make_window(xs[i + 1], fs[i], strides[i], rates[i], padding) for i in range(3)]


@pytest.mark.parametrize("xs,fs,strides,rates,padding,transposed", CASES)
@pytest.mark.parametrize("chunk", CHUNKS)
def test_conv_and_gradients_match_references(monkeypatch, xs, fs, strides, rates, padding,
                                             transposed, chunk):
    if chunk is not None:
        monkeypatch.setattr(conv_nd_gemm, "_IM2COL_CHUNK_BYTES", chunk)
    x = RNG.randn(*xs).astype(np.float32)
    w = RNG.randn(*fs).astype(np.float32)
    wins = _windows(xs, fs, strides, rates, padding)
    cols = conv_nd_gemm.Columns(x, wins)
    assert cols.transposed == transposed
    if chunk == 1:  # a block per output plane of each image
        assert len(cols.plan.blocks) == xs[0] * wins[0].out
    y = conv_nd_gemm.conv_nd(x, w, wins)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, ref_conv(x, w, strides, rates, padding), rtol=1e-5,
                               atol=1e-4)
    dy = RNG.randn(*y.shape).astype(np.float32)
    dw = conv_nd_gemm.conv_nd_backprop_filter(x, fs, dy, wins)
    np.testing.assert_allclose(dw, ref_backprop_filter(x, fs, dy, strides, rates, padding),
                               rtol=1e-5, atol=1e-4)
    dx = conv_nd_gemm.conv_nd_backprop_input(xs, w, dy, wins)
    assert dx.flags.c_contiguous and dx.shape == tuple(xs)
    np.testing.assert_allclose(dx, ref_backprop_input(xs, w, dy, strides, rates, padding),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("channels,form", [(2, "_backprop_input_few_channels"),
                                           (5, "_backprop_input_by_tap")])
def test_the_input_gradient_form_follows_the_channels(monkeypatch, channels, form):
    called = []
    real = getattr(conv_nd_gemm, form)
    monkeypatch.setattr(conv_nd_gemm, form, lambda *a: called.append(form) or real(*a))
    wins = _windows([1, 3, 3, 3, channels], [2, 2, 2], [1] * 3, [1] * 3, "SAME")
    conv_nd_gemm.conv_nd_backprop_input([1, 3, 3, 3, channels],
                                        np.ones([2, 2, 2, channels, 3], np.float32),
                                        np.ones([1, 3, 3, 3, 3], np.float32), wins)
    assert called == [form]


@pytest.mark.parametrize("n,planes,plane_bytes,chunk", [(5, 4, 100, 1000), (3, 7, 300, 1000),
                                                        (2, 3, 5000, 1000), (4, 0, 10, 100),
                                                        (0, 3, 10, 100)])
def test_plane_blocks_cover_every_plane_once(monkeypatch, n, planes, plane_bytes, chunk):
    monkeypatch.setattr(conv_nd_gemm, "_IM2COL_CHUNK_BYTES", chunk)
    blocks = conv_nd_gemm.plane_blocks(n, planes, plane_bytes)
    seen = [(i, d) for b in blocks for i in range(b.first, b.stop) for d in range(b.lo, b.hi)]
    assert sorted(seen) == [(i, d) for i in range(n) for d in range(planes)]
    # a block's planes are contiguous among all images' planes, in order
    starts = [b.first_plane(planes) for b in blocks]
    assert starts == sorted(starts)
    assert all(b.planes() * plane_bytes <= max(chunk, plane_bytes) for b in blocks)


def test_empty_outputs_and_batches():
    wins = _windows([2, 2, 2, 2, 1], [3, 3, 3], [1] * 3, [1] * 3, "VALID")  # window too big
    x = np.ones([2, 2, 2, 2, 1], np.float32)
    w = np.ones([3, 3, 3, 1, 2], np.float32)
    assert conv_nd_gemm.conv_nd(x, w, wins).shape == (2, 0, 0, 0, 2)
    dy = np.ones((2, 0, 0, 0, 2), np.float32)
    np.testing.assert_array_equal(conv_nd_gemm.conv_nd_backprop_filter(x, w.shape, dy, wins),
                                  np.zeros(w.shape))
    np.testing.assert_array_equal(conv_nd_gemm.conv_nd_backprop_input(x.shape, w, dy, wins),
                                  np.zeros(x.shape))


# --- through the graph: numeric gradients of Conv3D in every form -------------------------------
@pytest.mark.parametrize("xs,fs,strides,padding", [
    ([2, 3, 4, 3, 2], [2, 2, 2, 2, 3], [1, 1, 1], "SAME"),   # transposed, few-channel dx
    ([2, 3, 4, 5, 2], [2, 2, 3, 2, 3], [1, 1, 2], "VALID"),  # row-major, few-channel dx
    ([1, 3, 3, 4, 5], [2, 2, 2, 5, 2], [1, 2, 1], "SAME"),   # row-major, by-tap dx
])
def test_conv3d_numeric_gradients_in_many_blocks(monkeypatch, graph, xs, fs, strides, padding):
    monkeypatch.setattr(conv_nd_gemm, "_IM2COL_CHUNK_BYTES", 1)
    x0, w0 = RNG.randn(*xs), RNG.randn(*fs)
    x, w = tf.constant(x0), tf.constant(w0)
    y = tf.nn.conv3d(x, w, [1] + strides + [1], padding)
    with tf.Session():
        assert compute_gradient_error([x, w], [x0.shape, w0.shape], y, y.shape.as_list(),
                                      x_init_value=[x0, w0]) < 1e-6
