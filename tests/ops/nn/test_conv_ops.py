"""Tests of conv2d, its backprop ops, conv2d_transpose, max_pool and avg_pool.

References are direct loops over output positions and window taps (independent of the
im2col/col2im kernels); a few fixed values and all static shapes were taken from
TensorFlow 2.21 (tf.compat.v1).
"""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

# every test runs on the installed kernels (oneDNN's where present) and on NumPy's
pytestmark = pytest.mark.usefixtures("conv_kernels")


# --- direct-loop references (NHWC) ------------------------------------------------------
def _geometry(size, k, stride, dilation, padding, pair=None):
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return (size - eff) // stride + 1, 0
    if padding == "SAME":
        out = math.ceil(size / stride)
        return out, max((out - 1) * stride + eff - size, 0) // 2
    return (size + pair[0] + pair[1] - eff) // stride + 1, pair[0]


def _windows(in_hw, k_hw, strides, dilations, padding):
    """Yields (oh, ow, [(a, b, r, c)...]) with r, c the input position of tap (a, b)
    (None when the tap falls in padding)."""
    pairs = padding if isinstance(padding, list) else [None, None]
    geo = [_geometry(in_hw[d], k_hw[d], strides[d], dilations[d],
                     padding if isinstance(padding, str) else "EXPLICIT", pairs[d])
           for d in range(2)]
    for oh in range(geo[0][0]):
        for ow in range(geo[1][0]):
            taps = []
            for a in range(k_hw[0]):
                for b in range(k_hw[1]):
                    r = oh * strides[0] + a * dilations[0] - geo[0][1]
                    c = ow * strides[1] + b * dilations[1] - geo[1][1]
                    inside = 0 <= r < in_hw[0] and 0 <= c < in_hw[1]
                    taps.append((a, b, r if inside else None, c if inside else None))
            yield oh, ow, taps
    return


def _out_hw(in_hw, k_hw, strides, dilations, padding):
    pairs = padding if isinstance(padding, list) else [None, None]
    return [_geometry(in_hw[d], k_hw[d], strides[d], dilations[d],
                      padding if isinstance(padding, str) else "EXPLICIT", pairs[d])[0]
            for d in range(2)]


def ref_conv(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    n, h, wd, _ = x.shape
    kh, kw, _, co = w.shape
    oh, ow = _out_hw((h, wd), (kh, kw), strides, dilations, padding)
    out = np.zeros((n, oh, ow, co), dtype=np.float64)
    for i, j, taps in _windows((h, wd), (kh, kw), strides, dilations, padding):
        for a, b, r, c in taps:
            if r is not None:
                out[:, i, j] += x[:, r, c].astype(np.float64) @ w[a, b].astype(np.float64)
    return out


def ref_conv_backprop(x_shape, w, dy, strides=(1, 1), padding="SAME", dilations=(1, 1),
                      x=None):
    """(d input, d filter) of sum(conv(x, w) * dy)."""
    dx = np.zeros(x_shape)
    dw = np.zeros(w.shape)
    for i, j, taps in _windows(x_shape[1:3], w.shape[:2], strides, dilations, padding):
        for a, b, r, c in taps:
            if r is not None:
                dx[:, r, c] += dy[:, i, j] @ w[a, b].T
                if x is not None:
                    dw[a, b] += x[:, r, c].T @ dy[:, i, j]
    return dx, dw


def ref_pool(x, k, s, padding, kind):
    n, h, w, c = x.shape
    oh, ow = _out_hw((h, w), k, s, (1, 1), padding)
    out = np.zeros((n, oh, ow, c))
    for i, j, taps in _windows((h, w), k, s, (1, 1), padding):
        vals = np.stack([x[:, r, cc] for _, _, r, cc in taps if r is not None])
        out[:, i, j] = vals.max(0) if kind == "max" else vals.mean(0)
    return out


def ref_max_pool_grad(x, dy, k, s, padding):
    dx = np.zeros(x.shape)
    n, _, _, c = x.shape
    for i, j, taps in _windows(x.shape[1:3], k, s, (1, 1), padding):
        real = [(r, cc) for _, _, r, cc in taps if r is not None]
        for b in range(n):
            for ch in range(c):
                vals = [x[b, r, cc, ch] for r, cc in real]
                r, cc = real[int(np.argmax(vals))]  # argmax: the first maximum
                dx[b, r, cc, ch] += dy[b, i, j, ch]
    return dx


def _run(sess, t, feed=None):
    return sess.run(t, feed_dict=feed)


# --- conv2d forward -----------------------------------------------------------------------
CONV_CASES = [
    # x shape, filter shape, strides, padding, dilations
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 2, 3, 4), (2, 2), "SAME", (1, 1)),
    ((1, 8, 8, 2), (4, 4, 2, 3), (2, 3), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), "VALID", (1, 1)),
    ((2, 9, 8, 2), (3, 2, 2, 5), (2, 2), "VALID", (1, 1)),
    ((1, 9, 9, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 2)),
    ((1, 10, 9, 2), (2, 3, 2, 2), (2, 1), "VALID", (2, 3)),
    ((2, 5, 6, 3), (3, 3, 3, 2), (1, 2), [[1, 2], [0, 3]], (1, 1)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,ws,strides,padding,dilations", CONV_CASES)
def test_conv2d_matches_direct_loops(sess, dtype, xs, ws, strides, padding, dilations):
    x = np.random.randn(*xs).astype(dtype)
    w = np.random.randn(*ws).astype(dtype)
    pad_arg = [[0, 0]] + padding + [[0, 0]] if isinstance(padding, list) else padding
    y = tf.nn.conv2d(x, w, strides=list(strides), padding=pad_arg, dilations=list(dilations))
    got = _run(sess, y)
    want = ref_conv(x, w, strides, padding, dilations)
    assert got.dtype == dtype and got.shape == want.shape
    assert tuple(y.shape.as_list()) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-4 if dtype == np.float32 else 1e-10)


def test_conv2d_fixed_values_from_tensorflow(sess):
    # SAME with stride 2 and an even filter pads after only: values from TF 2.21.
    w = (np.arange(4.0) + 1).reshape(2, 2, 1, 1)
    out4 = _run(sess, tf.nn.conv2d(np.arange(16.0).reshape(1, 4, 4, 1), w, 2, "SAME"))
    np.testing.assert_array_equal(out4[0, :, :, 0], [[34, 54], [114, 134]])
    out5 = _run(sess, tf.nn.conv2d(np.arange(25.0).reshape(1, 5, 5, 1), w, 2, "SAME"))
    np.testing.assert_array_equal(out5[0, :, :, 0],
                                  [[41, 61, 31], [141, 161, 71], [62, 68, 24]])


def test_conv2d_nchw_equals_nhwc(sess):
    x = np.random.randn(2, 7, 6, 3).astype(np.float32)
    w = np.random.randn(3, 3, 3, 4).astype(np.float32)
    nhwc = tf.nn.conv2d(x, w, strides=[1, 2, 1, 1], padding="SAME")
    nchw = tf.nn.conv2d(x.transpose(0, 3, 1, 2), w, strides=[1, 1, 2, 1], padding="SAME",
                        data_format="NCHW")
    a, b = _run(sess, [nhwc, nchw])
    assert nchw.shape.as_list() == [2, 4, 4, 6]
    np.testing.assert_allclose(b.transpose(0, 2, 3, 1), a, rtol=1e-5, atol=1e-5)


def test_conv2d_other_dtypes(sess):
    x = np.random.randint(-3, 4, (1, 5, 5, 2)).astype(np.int32)
    w = np.random.randint(-3, 4, (3, 3, 2, 2)).astype(np.int32)
    got = _run(sess, tf.nn.conv2d(x, w, 1, "SAME"))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref_conv(x, w).astype(np.int32))
    got16 = _run(sess, tf.nn.conv2d(x.astype(np.float16), w.astype(np.float16), 1, "VALID"))
    assert got16.dtype == np.float16
    np.testing.assert_allclose(got16, ref_conv(x, w, padding="VALID"), rtol=1e-3)


def test_conv2d_1x1_and_filters_alias(sess):
    x = np.random.randn(2, 3, 3, 4).astype(np.float32)
    w = np.random.randn(1, 1, 4, 5).astype(np.float32)
    y = tf.nn.conv2d(x, filters=w, strides=1, padding="VALID")
    np.testing.assert_allclose(_run(sess, y), x @ w[0, 0], rtol=1e-5, atol=1e-5)
    assert y.op.type == "Conv2D" and y.op.name == "Conv2D"
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.nn.conv2d(x, w, 1, "SAME", filters=w)


def test_conv2d_placeholder_feed_and_empty_batch(sess):
    x = tf.placeholder(tf.float32, [None, 5, 5, 4])
    w = np.random.randn(3, 3, 4, 8).astype(np.float32)
    y = tf.nn.conv2d(x, w, 1, "SAME")
    assert sess.run(y, {x: np.zeros((0, 5, 5, 4), np.float32)}).shape == (0, 5, 5, 8)


# --- static shapes (expected values from TF 2.21 compat.v1) -------------------------------
def test_static_shapes_match_tensorflow(graph):
    P = tf.placeholder
    x = P(tf.float32, [None, 7, None, 3])
    w = P(tf.float32, [3, 3, 3, 8])
    cases = [
        (tf.nn.conv2d(x, w, 2, "SAME"), [None, 4, None, 8]),
        (tf.nn.conv2d(x, w, [1, 2, 2, 1], "VALID"), [None, 3, None, 8]),
        (tf.nn.conv2d(x, w, 1, "VALID", dilations=2), [None, 3, None, 8]),
        (tf.nn.conv2d(x, w, 1, [[0, 0], [1, 2], [3, 4], [0, 0]]), [None, 8, None, 8]),
        (tf.nn.conv2d(P(tf.float32, [1, 5, 5, 6]), w, 1, "VALID"), [1, 3, 3, 8]),
        (tf.nn.conv2d(P(tf.float32, [2, 3, 9, 9]), w, [1, 1, 2, 2], "SAME",
                      data_format="NCHW"), [2, 8, 5, 5]),
        (tf.nn.conv2d(x, w, [2, 1, 1, 1], "VALID"), [None, 5, None, 8]),
        (tf.nn.conv2d_backprop_input([2, 9, 9, 3], w, P(tf.float32, [2, 5, 5, 8]),
                                     [1, 2, 2, 1], "SAME"), [2, 9, 9, 3]),
        (tf.nn.conv2d_backprop_input(P(tf.int32, [4]), w, P(tf.float32, [2, 5, 5, 8]),
                                     [1, 2, 2, 1], "SAME"), [2, None, None, None]),
        (tf.nn.conv2d_backprop_filter(P(tf.float32, [2, 9, 9, 3]), [3, 3, 3, 8],
                                      P(tf.float32, [2, 5, 5, 8]), [1, 2, 2, 1], "SAME"),
         [3, 3, 3, 8]),
        (tf.nn.conv2d_backprop_filter(P(tf.float32, [2, 9, 9, 3]), P(tf.int32, [4]),
                                      P(tf.float32, [2, 5, 5, 8]), [1, 2, 2, 1], "SAME"),
         [None, None, None, None]),
        (tf.nn.conv2d_transpose(P(tf.float32, [2, 5, 5, 8]), w, [2, 9, 9, 3], 2),
         [2, 9, 9, 3]),
        (tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"), [None, 4, None, 3]),
        (tf.nn.max_pool(x, 2, 2, "VALID"), [None, 3, None, 3]),
        (tf.nn.max_pool(x, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]), [None, 4, None, 3]),
        (tf.nn.max_pool(x, [2, 2, 2, 1], [1, 1, 1, 1], "VALID"), [None, 6, None, 3]),
        (tf.nn.max_pool(x, [1, 2, 2, 3], [1, 1, 1, 3], "VALID"), [None, 6, None, 1]),
        (tf.nn.max_pool(P(tf.float32, [2, 3, 9, 9]), 3, 2, "SAME", data_format="NCHW"),
         [2, 3, 5, 5]),
        (tf.nn.max_pool(P(tf.float32, [1, 4, 4, 1]), 5, 1, "SAME"), [1, 4, 4, 1]),
        (tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID"), [None, 3, None, 3]),
    ]
    for t, want in cases:
        assert t.shape.as_list() == want, (t.op.type, t.shape, want)
    assert tf.nn.conv2d(P(tf.float32), w, 1, "SAME").shape.as_list() == [None, None, None, 8]
    assert tf.nn.conv2d(P(tf.float32), P(tf.float32), 1, "SAME").shape.ndims == 4
    assert tf.nn.avg_pool(P(tf.float32), 2, 2, "SAME").shape.as_list() == [None] * 4
    n = P(tf.int32, [])
    t = tf.nn.conv2d_transpose(P(tf.float32, [None, 5, 5, 8]), w, tf.stack([n, 9, 9, 3]), 2)
    assert t.shape.as_list() == [None, 9, 9, 3]


def test_transpose_batch_comes_from_out_backprop(graph):
    # TF 2.21: Conv2DBackpropInput takes its static batch from out_backprop, not from a
    # constant input_sizes, and checks the two against each other when both are known
    P = tf.placeholder
    w = P(tf.float32, [3, 3, 5, 3])
    unknown_batch = P(tf.float32, [None, 4, 5, 3])
    cases = [
        (tf.nn.conv2d_transpose(unknown_batch, w, [2, 8, 10, 5], [1, 2, 2, 1], "SAME"),
         [None, 8, 10, 5]),
        (tf.nn.conv2d_transpose(P(tf.float32, [None, 3, 4, 5]), w, [2, 5, 8, 10],
                                [1, 1, 2, 2], "SAME", data_format="NCHW"),
         [None, 5, 8, 10]),
        (tf.nn.conv2d_backprop_input([2, 8, 10, 5], w, P(tf.float32, None), [1, 2, 2, 1],
                                     "SAME"), [None, 8, 10, 5]),
        (tf.nn.conv1d_transpose(P(tf.float32, [None, 6, 3]), P(tf.float32, [3, 5, 3]),
                                [2, 12, 5], 2, "SAME"), [None, 12, 5]),
        (tf.nn.atrous_conv2d_transpose(P(tf.float32, [None, 7, 9, 3]), w, [2, 11, 13, 5], 2,
                                       "VALID"), [None, 11, 13, 5]),
    ]
    for tensor, expected in cases:
        assert tensor.shape.as_list() == expected
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.nn.conv2d_backprop_input([2, 8, 10, 5], w, P(tf.float32, [3, 4, 5, 3]),
                                    [1, 2, 2, 1], "SAME")

def test_op_names_and_attrs(graph):
    x = tf.placeholder(tf.float32, [1, 6, 6, 3])
    w = tf.placeholder(tf.float32, [3, 3, 3, 8])
    assert tf.nn.conv2d(x, w, 1, "SAME").op.get_attr("strides") == [1, 1, 1, 1]
    c = tf.nn.conv2d(tf.placeholder(tf.float32, [1, 3, 6, 6]), w, [2, 3], "SAME",
                     data_format="NCHW")
    assert c.op.get_attr("strides") == [1, 1, 2, 3]
    assert tf.nn.conv2d_transpose(tf.placeholder(tf.float32, [1, 3, 3, 8]), w, [1, 6, 6, 3],
                                  2).name == "conv2d_transpose:0"
    assert tf.nn.max_pool(x, 2, 2, "SAME").name == "MaxPool:0"
    assert tf.nn.max_pool(x, 2, 2, "SAME", name="mp").name == "mp:0"
    assert tf.nn.avg_pool(x, 2, 2, "SAME").op.type == "AvgPool"
    assert tf.nn.max_pool2d(x, 2, 2, "SAME").name == "MaxPool2d:0"
    assert tf.nn.max_pool_v2(x, 2, 2, "SAME").op.type == "MaxPool"
    assert tf.nn.avg_pool2d(x, 2, 2, "SAME").op.type == "AvgPool"
    assert tf.nn.avg_pool_v2(x, 2, 2, "SAME").op.type == "AvgPool"


# --- build-time errors (classes and messages as TF 2.21) ---------------------------------
def test_build_errors(graph):
    P = tf.placeholder
    x = P(tf.float32, [None, 7, None, 3])
    w = P(tf.float32, [3, 3, 3, 8])
    with pytest.raises(ValueError, match=r"Depth of input \(4\) is not a multiple of input "
                                         r"depth of filter \(3\)"):
        tf.nn.conv2d(P(tf.float32, [1, 5, 5, 4]), w, 1, "VALID")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 3 "
                                         "from 2"):
        tf.nn.conv2d(P(tf.float32, [1, 2, 2, 3]), w, 1, "VALID")
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.nn.conv2d(P(tf.float32, [5, 5, 3]), w, 1, "VALID")
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.nn.conv2d(x, P(tf.float32, [3, 3, 3]), 1, "VALID")
    with pytest.raises(ValueError, match="strides should be of length 1, 2 or 4"):
        tf.nn.conv2d(x, w, [1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="not in: \"SAME\", \"VALID\", \"EXPLICIT\""):
        tf.nn.conv2d(x, w, 1, "FOO")
    with pytest.raises(ValueError, match="Nonzero explicit padding in the batch or depth"):
        tf.nn.conv2d(x, w, 1, [[1, 0], [1, 2], [3, 4], [0, 0]])
    with pytest.raises(TypeError, match="Input 'filter' of 'Conv2D' Op has type float32"):
        tf.nn.conv2d(P(tf.float64, [1, 5, 5, 3]), w, 1, "SAME")
    with pytest.raises(TypeError, match="Expected list for 'strides'"):
        tf.nn.conv2d_backprop_input([2, 9, 9, 3], w, P(tf.float32, [2, 5, 5, 8]), 2, "SAME")
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 7 and 8"):
        tf.nn.conv2d_transpose(P(tf.float32, [2, 5, 5, 7]), w, [2, 9, 9, 3], 2)
    with pytest.raises(ValueError, match="`ksize` cannot be zero"):
        tf.nn.max_pool(x, 0, 2, "VALID")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 3 "
                                         "from 2"):
        tf.nn.max_pool(P(tf.float32, [1, 2, 2, 1]), 3, 1, "VALID")
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.nn.max_pool(P(tf.float32, [4, 4, 1]), 2, 2, "SAME")
    with pytest.raises(TypeError, match="int32 not in list of allowed values"):
        tf.nn.avg_pool(P(tf.int32, [1, 4, 4, 1]), 2, 2, "VALID")
    with pytest.raises(ValueError, match="`input.shape.rank` must be 3, 4 or 5"):
        tf.nn.max_pool_v2(P(tf.float32, [1, 4, 4, 4, 4, 1]), 2, 2, "VALID")
    # a failing shape function leaves no op behind
    assert not [op for op in graph.get_operations() if op.type == "Conv2D"]


def test_run_time_errors(sess):
    w = np.ones((3, 3, 4, 8), np.float32)
    x = np.ones((1, 6, 6, 4), np.float32)
    with pytest.raises(tf.errors.UnimplementedError, match="strides in the batch"):
        sess.run(tf.nn.conv2d(x, w, [2, 1, 1, 1], "SAME"))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Size of out_backprop doesn't match computed: actual = 6, "
                             "computed = 9"):
        sess.run(tf.nn.conv2d_backprop_input([1, 9, 9, 4], w, np.ones((1, 6, 6, 8),
                                                                      np.float32),
                                             [1, 1, 1, 1], "SAME"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="actual = 5, computed = 6"):
        sess.run(tf.nn.conv2d_backprop_filter(x, [3, 3, 4, 8], np.ones((1, 5, 6, 8),
                                                                       np.float32),
                                              [1, 1, 1, 1], "SAME"))
    with pytest.raises(tf.errors.UnimplementedError, match="batch dimension"):
        sess.run(tf.nn.max_pool(np.ones((2, 3, 3, 1)), [2, 1, 1, 1], [1, 1, 1, 1], "VALID"))
    p = tf.placeholder(tf.float32, [1, 6, 6, None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="input depth must be evenly divisible by filter depth: 6 vs 4"):
        sess.run(tf.nn.conv2d(p, w, 1, "SAME"), {p: np.ones((1, 6, 6, 6), np.float32)})


def test_grouped_convolution_and_its_gradients(sess):
    """TF's grouped convolution: input depth 6 with a filter of input depth 2 is 3
    groups, each group's 3 output channels computed from its 2 input channels."""
    rs = np.random.RandomState(5)
    x0 = rs.rand(2, 5, 4, 6)
    w0 = rs.rand(3, 2, 2, 9) - 0.5
    want = np.concatenate([ref_conv(x0[..., 2 * g:2 * g + 2], w0[..., 3 * g:3 * g + 3],
                                    (1, 2), "SAME") for g in range(3)], axis=3)
    x = tf.constant(x0)
    w = tf.constant(w0)
    y = tf.nn.conv2d(x, w, [1, 1, 2, 1], "SAME")
    assert y.shape.as_list() == [2, 5, 2, 9]
    np.testing.assert_allclose(sess.run(y), want, rtol=1e-10)
    nchw = tf.nn.conv2d(tf.transpose(x, [0, 3, 1, 2]), w, [1, 1, 1, 2], "SAME",
                        data_format="NCHW")
    np.testing.assert_allclose(sess.run(nchw).transpose(0, 2, 3, 1), want, rtol=1e-10)
    err = compute_gradient_error([x, w], [list(x0.shape), list(w0.shape)], y,
                                 list(want.shape), x_init_value=[x0, w0])
    assert err < 1e-8
    with pytest.raises(ValueError, match=r"Depth of output \(8\) is not a multiple of the "
                                         r"number of groups \(3\)"):
        tf.nn.conv2d(x, tf.ones([3, 3, 2, 8], tf.float64), 1, "SAME")


# --- one input channel (grayscale images: the kernels build their columns transposed) ---
ONE_CHANNEL_CASES = [
    ((3, 9, 8, 1), (5, 5, 1, 4), (1, 1), "SAME", (1, 1)),
    ((2, 9, 8, 1), (3, 2, 1, 3), (2, 3), "VALID", (1, 1)),
    ((2, 10, 9, 1), (2, 3, 1, 2), (1, 2), "SAME", (2, 2)),
    ((2, 5, 6, 1), (3, 3, 1, 2), (2, 1), [[1, 2], [0, 3]], (1, 1)),
]


def _backprop_case(xs, ws, strides, padding, dilations):
    """Random input, filter and output gradient of one case, and its padding, strides
    and dilations as the ops take them."""
    x = np.random.randn(*xs)
    w = np.random.randn(*ws)
    oh, ow = _out_hw(xs[1:3], ws[:2], strides, dilations, padding)
    dy = np.random.randn(xs[0], oh, ow, ws[3])
    pad_arg = [[0, 0]] + padding + [[0, 0]] if isinstance(padding, list) else padding
    return x, w, dy, pad_arg, [1, *strides, 1], [1, *dilations, 1]


@pytest.mark.parametrize("chunk_bytes", [None, 256])  # 256 bytes: one image per chunk
@pytest.mark.parametrize("xs,ws,strides,padding,dilations", ONE_CHANNEL_CASES)
def test_one_input_channel_matches_direct_loops(sess, monkeypatch, chunk_bytes, xs, ws,
                                                strides, padding, dilations):
    from tensorweave.ops.nn import conv_ops
    if chunk_bytes:
        monkeypatch.setattr(conv_ops, "_IM2COL_CHUNK_BYTES", chunk_bytes)
    x, w, dy, pad_arg, s4, d4 = _backprop_case(xs, ws, strides, padding, dilations)
    want_y = ref_conv(x, w, strides, padding, dilations)
    want_dx, want_dw = ref_conv_backprop(xs, w, dy, strides, padding, dilations, x=x)
    for dtype, tol in ((np.float64, 1e-10), (np.float32, 1e-4)):
        xd, wd, dyd = x.astype(dtype), w.astype(dtype), dy.astype(dtype)
        y = tf.nn.conv2d(xd, wd, strides=s4, padding=pad_arg, dilations=d4)
        bf = tf.nn.conv2d_backprop_filter(xd, list(ws), dyd, s4, pad_arg, dilations=d4)
        bi = tf.nn.conv2d_backprop_input(list(xs), wd, dyd, s4, pad_arg, dilations=d4)
        got_y, got_dw, got_dx = _run(sess, [y, bf, bi])
        for got, want in ((got_y, want_y), (got_dw, want_dw), (got_dx, want_dx)):
            assert type(got) is np.ndarray and got.dtype == dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_one_input_channel_nchw_and_half(sess):
    x = np.random.randn(2, 7, 6, 1)
    w = np.random.randn(3, 3, 1, 4)
    dy = np.random.randn(2, 4, 3, 4)
    t = (0, 3, 1, 2)
    y = tf.nn.conv2d(x.transpose(t), w, [1, 1, 2, 2], "SAME", data_format="NCHW")
    bf = tf.nn.conv2d_backprop_filter(x.transpose(t), [3, 3, 1, 4], dy.transpose(t),
                                      [1, 1, 2, 2], "SAME", data_format="NCHW")
    got_y, got_dw = _run(sess, [y, bf])
    np.testing.assert_allclose(got_y, ref_conv(x, w, (2, 2)).transpose(t), rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(got_dw, ref_conv_backprop(x.shape, w, dy, (2, 2), x=x)[1],
                               rtol=1e-10, atol=1e-10)
    yh = _run(sess, tf.nn.conv2d(x.astype(np.float16), w.astype(np.float16), 1, "VALID"))
    assert yh.dtype == np.float16
    np.testing.assert_allclose(yh, ref_conv(x.astype(np.float16).astype(np.float64),
                                            w.astype(np.float16).astype(np.float64),
                                            padding="VALID"), rtol=2e-2, atol=2e-2)
    bf16 = tf.bfloat16.as_numpy_dtype
    yb = _run(sess, tf.nn.conv2d(x.astype(bf16), w.astype(bf16), 1, "SAME"))
    assert yb.dtype == bf16
    np.testing.assert_allclose(yb.astype(np.float64),
                               ref_conv(x.astype(bf16).astype(np.float64),
                                        w.astype(bf16).astype(np.float64)),
                               rtol=5e-2, atol=5e-2)
    xi = np.random.randint(-3, 4, (2, 6, 5, 1)).astype(np.int32)
    wi = np.random.randint(-3, 4, (3, 2, 1, 3)).astype(np.int32)
    yi = _run(sess, tf.nn.conv2d(xi, wi, [1, 2, 1, 1], "SAME"))
    assert yi.dtype == np.int32
    np.testing.assert_array_equal(yi, ref_conv(xi, wi, (2, 1)).astype(np.int32))


@pytest.mark.parametrize("channels", [1, 3])
def test_im2col_rows_are_window_taps(channels):
    from tensorweave.ops.nn.conv_ops import _im2col, make_window, pad_nhwc
    x = np.random.randn(2, 6, 7, channels).astype(np.float32)
    wh, ww = make_window(6, 3, 2, 1, "SAME"), make_window(7, 2, 1, 2, "VALID")
    xp = pad_nhwc(x, wh, ww)
    got = _im2col(xp, wh, ww)
    want = np.array([[xp[n, i * 2 + a, j + b * 2, c] for a in range(3) for b in range(2)
                      for c in range(channels)]
                     for n in range(2) for i in range(wh.out) for j in range(ww.out)])
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


# --- backprop ops and conv2d_transpose ----------------------------------------------------
BACKPROP_CASES = [CONV_CASES[i] for i in (1, 2, 4, 6, 7)]


@pytest.mark.parametrize("xs,ws,strides,padding,dilations", BACKPROP_CASES)
def test_backprop_ops_match_direct_loops(sess, xs, ws, strides, padding, dilations):
    x, w, dy, pad_arg, s4, d4 = _backprop_case(xs, ws, strides, padding, dilations)
    bi = tf.nn.conv2d_backprop_input(list(xs), w, dy, s4, pad_arg, dilations=d4)
    bf = tf.nn.conv2d_backprop_filter(x, list(ws), dy, s4, pad_arg, dilations=d4)
    got_dx, got_dw = _run(sess, [bi, bf])
    want_dx, want_dw = ref_conv_backprop(xs, w, dy, strides, padding, dilations, x=x)
    np.testing.assert_allclose(got_dx, want_dx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-10, atol=1e-10)


def test_backprop_ops_nchw(sess):
    x = np.random.randn(2, 7, 6, 3)
    w = np.random.randn(3, 3, 3, 4)
    dy = np.random.randn(2, 4, 3, 4)
    t = (0, 3, 1, 2)
    bi = tf.nn.conv2d_backprop_input([2, 3, 7, 6], w, dy.transpose(t), [1, 1, 2, 2], "SAME",
                                     data_format="NCHW")
    bf = tf.nn.conv2d_backprop_filter(x.transpose(t), [3, 3, 3, 4], dy.transpose(t),
                                      [1, 1, 2, 2], "SAME", data_format="NCHW")
    got_dx, got_dw = _run(sess, [bi, bf])
    want_dx, want_dw = ref_conv_backprop(x.shape, w, dy, (2, 2), "SAME", x=x)
    np.testing.assert_allclose(got_dx, want_dx.transpose(t), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-10, atol=1e-10)


def test_conv2d_transpose_values(sess):
    w = (np.arange(4.0) + 1).reshape(2, 2, 1, 1)
    y = tf.nn.conv2d_transpose(np.ones((1, 2, 2, 1)), w, [1, 4, 4, 1], 2, "SAME")
    np.testing.assert_array_equal(_run(sess, y)[0, :, :, 0],
                                  [[1, 2, 1, 2], [3, 4, 3, 4]] * 2)  # from TF 2.21
    v = np.random.randn(2, 3, 3, 4).astype(np.float32)
    w2 = np.random.randn(3, 3, 2, 4).astype(np.float32)
    y2 = tf.nn.conv2d_transpose(v, w2, [2, 6, 6, 2], [1, 2, 2, 1], "SAME")
    want, _ = ref_conv_backprop((2, 6, 6, 2), w2, v, (2, 2), "SAME")
    got = _run(sess, y2)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# --- pooling forward ----------------------------------------------------------------------
POOL_CASES = [
    ((2, 6, 6, 3), (2, 2), (2, 2), "VALID"),
    ((2, 7, 5, 3), (2, 2), (2, 2), "SAME"),
    ((1, 7, 7, 2), (3, 3), (2, 2), "SAME"),
    ((1, 7, 8, 2), (3, 2), (1, 2), "VALID"),
    ((1, 5, 5, 1), (1, 1), (3, 3), "SAME"),
    ((1, 4, 4, 2), (5, 5), (1, 1), "SAME"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,k,s,padding", POOL_CASES)
def test_pools_match_direct_loops(sess, dtype, xs, k, s, padding):
    x = np.random.randn(*xs).astype(dtype)
    mp = tf.nn.max_pool(x, [1, *k, 1], [1, *s, 1], padding)
    ap = tf.nn.avg_pool(x, [1, *k, 1], [1, *s, 1], padding)
    got_m, got_a = _run(sess, [mp, ap])
    want_m, want_a = ref_pool(x, k, s, padding, "max"), ref_pool(x, k, s, padding, "avg")
    assert got_m.dtype == dtype and got_a.dtype == dtype
    assert mp.shape.as_list() == list(want_m.shape) == ap.shape.as_list()
    np.testing.assert_array_equal(got_m, want_m.astype(dtype))
    np.testing.assert_allclose(got_a, want_a, rtol=1e-6, atol=1e-6)


def test_pool_fixed_values_and_dtypes(sess):
    x = np.arange(16.0).reshape(1, 4, 4, 1)
    np.testing.assert_array_equal(_run(sess, tf.nn.avg_pool(x, 3, 2, "SAME"))[0, :, :, 0],
                                  [[5.0, 6.5], [11.0, 12.5]])  # from TF 2.21
    np.testing.assert_array_equal(
        _run(sess, tf.nn.max_pool(x[:, ::-1], 3, 2, "SAME"))[0, :, :, 0],
        [[14, 15], [6, 7]])
    xi = np.random.randint(-100, 100, (2, 5, 5, 3)).astype(np.int32)
    got = _run(sess, tf.nn.max_pool(xi, 2, 2, "SAME"))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref_pool(xi, (2, 2), (2, 2), "SAME", "max"))
    xh = np.random.randn(1, 4, 4, 2).astype(np.float16)
    got = _run(sess, tf.nn.avg_pool(xh, 2, 2, "VALID"))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, ref_pool(xh, (2, 2), (2, 2), "VALID", "avg"), rtol=2e-3)


def test_pool_nchw(sess):
    x = np.random.randn(2, 3, 7, 6).astype(np.float32)
    xn = x.transpose(0, 2, 3, 1)
    mp = tf.nn.max_pool(x, 3, 2, "SAME", data_format="NCHW")
    ap = tf.nn.avg_pool(x, 3, 2, "SAME", data_format="NCHW")
    got_m, got_a = _run(sess, [mp, ap])
    np.testing.assert_array_equal(got_m.transpose(0, 2, 3, 1),
                                  ref_pool(xn, (3, 3), (2, 2), "SAME", "max"))
    np.testing.assert_allclose(got_a.transpose(0, 2, 3, 1),
                               ref_pool(xn, (3, 3), (2, 2), "SAME", "avg"), rtol=1e-5)


def test_max_pool_explicit_padding(sess):
    x = -np.abs(np.random.randn(1, 4, 4, 1)) - 1  # all negative: padding must never win
    y = tf.nn.max_pool(x, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])
    xp = np.full((1, 6, 6, 1), -np.inf)
    xp[:, 1:5, 1:5] = x
    np.testing.assert_array_equal(_run(sess, y), ref_pool(xp, (2, 2), (2, 2), "VALID", "max"))


# --- pooling gradient ops -----------------------------------------------------------------
def test_max_pool_grad_routes_ties_to_first_max(sess):
    # from TF 2.21: ties go to the first maximum in row-major window order
    c = tf.constant(np.array([[1, 3], [3, 2]], np.float32).reshape(1, 2, 2, 1))
    g = tf.gradients(tf.nn.max_pool(c, 2, 2, "VALID"), c)[0]
    np.testing.assert_array_equal(_run(sess, g).ravel(), [0, 1, 0, 0])
    c3 = tf.constant(np.array([[1, 3, 3], [3, 2, 3], [1, 3, 0]], np.float32).reshape(
        1, 3, 3, 1))
    g3 = tf.gradients(tf.nn.max_pool(c3, 2, 1, "VALID"), c3)[0]
    assert g3.op.type == "MaxPoolGrad"
    np.testing.assert_array_equal(_run(sess, g3).ravel(), [0, 2, 0, 1, 0, 1, 0, 0, 0])


@pytest.mark.parametrize("xs,k,s,padding", POOL_CASES[:4])
def test_max_pool_grad_matches_direct_loops(sess, xs, k, s, padding):
    x = np.round(np.random.randn(*xs), 1)  # rounding makes ties likely
    xt = tf.constant(x)
    yt = tf.nn.max_pool(xt, [1, *k, 1], [1, *s, 1], padding)
    dy = np.random.randn(*yt.shape.as_list())
    g = tf.gradients(yt, xt, grad_ys=tf.constant(dy))[0]
    np.testing.assert_allclose(_run(sess, g), ref_max_pool_grad(x, dy, k, s, padding),
                               rtol=1e-12, atol=1e-12)


def test_avg_pool_grad_op(sess):
    x = tf.placeholder(tf.float64, [2, 7, 5, 3])
    y = tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 2, 1], "SAME")
    g = tf.gradients(y, x)[0]
    assert g.op.type == "AvgPoolGrad" and g.shape.as_list() == [2, 7, 5, 3]
    # d sum(avg_pool(x) * dy) / dx, by linearity: sum over windows of dy / count
    x0 = np.random.randn(2, 7, 5, 3)
    got = sess.run(g, {x: x0})
    want = np.zeros_like(x0)
    for i, j, taps in _windows((7, 5), (3, 2), (2, 2), (1, 1), "SAME"):
        real = [(r, c) for _, _, r, c in taps if r is not None]
        for r, c in real:
            want[:, r, c] += 1.0 / len(real)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# --- numeric gradient checks (float64) ----------------------------------------------------
def _check(x, x_shape, y, x_init=None, tol=1e-6):
    err = compute_gradient_error(x, x_shape, y, y.shape.as_list(), x_init_value=x_init)
    assert err < tol, err


@pytest.mark.parametrize("strides,padding,dilations",
                         [([1, 2, 2, 1], "SAME", [1, 1, 1, 1]),
                          ([1, 1, 1, 1], "VALID", [1, 2, 1, 1])])
def test_conv2d_numeric_gradients(graph, strides, padding, dilations):
    with tf.Session(graph=graph):
        x = tf.placeholder(tf.float64, [1, 5, 4, 2])
        w = tf.placeholder(tf.float64, [2, 3, 2, 2])
        x0, w0 = np.random.randn(1, 5, 4, 2), np.random.randn(2, 3, 2, 2)
        y = tf.nn.conv2d(x, w, strides, padding, dilations=dilations)
        err = compute_gradient_error(x, [1, 5, 4, 2], y, y.shape.as_list(), x_init_value=x0,
                                     extra_feed_dict={w: w0})
        assert err < 1e-6
        err = compute_gradient_error(w, [2, 3, 2, 2], y, y.shape.as_list(), x_init_value=w0,
                                     extra_feed_dict={x: x0})
        assert err < 1e-6


def test_conv2d_transpose_numeric_gradients(graph):
    with tf.Session(graph=graph):
        v = tf.placeholder(tf.float64, [1, 2, 3, 2])
        w = tf.placeholder(tf.float64, [3, 3, 1, 2])
        v0, w0 = np.random.randn(1, 2, 3, 2), np.random.randn(3, 3, 1, 2)
        y = tf.nn.conv2d_transpose(v, w, [1, 4, 5, 1], [1, 2, 2, 1], "SAME")
        assert compute_gradient_error(v, [1, 2, 3, 2], y, [1, 4, 5, 1], x_init_value=v0,
                                      extra_feed_dict={w: w0}) < 1e-6
        assert compute_gradient_error(w, [3, 3, 1, 2], y, [1, 4, 5, 1], x_init_value=w0,
                                      extra_feed_dict={v: v0}) < 1e-6


def test_conv2d_backprop_filter_numeric_gradients(graph):
    with tf.Session(graph=graph):
        x = tf.placeholder(tf.float64, [1, 4, 4, 1])
        dy = tf.placeholder(tf.float64, [1, 2, 2, 2])
        x0, dy0 = np.random.randn(1, 4, 4, 1), np.random.randn(1, 2, 2, 2)
        y = tf.nn.conv2d_backprop_filter(x, [3, 3, 1, 2], dy, [1, 2, 2, 1], "SAME")
        assert compute_gradient_error(x, [1, 4, 4, 1], y, [3, 3, 1, 2], x_init_value=x0,
                                      extra_feed_dict={dy: dy0}) < 1e-6
        assert compute_gradient_error(dy, [1, 2, 2, 2], y, [3, 3, 1, 2], x_init_value=dy0,
                                      extra_feed_dict={x: x0}) < 1e-6


def test_pool_numeric_gradients(graph):
    with tf.Session(graph=graph):
        x = tf.placeholder(tf.float64, [1, 5, 4, 2])
        # distinct values far apart: no ties, no switching of the max under perturbation
        x0 = np.random.permutation(40).reshape(1, 5, 4, 2).astype(np.float64) / 4.0
        _check(x, [1, 5, 4, 2], tf.nn.max_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME"), x0)
        _check(x, [1, 5, 4, 2], tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 2, 1], "SAME"), x0)
        _check(x, [1, 5, 4, 2], tf.nn.avg_pool(x, 2, 1, "VALID"), x0)


def test_second_order_gradients(graph):
    with tf.Session(graph=graph):
        x = tf.placeholder(tf.float64, [1, 4, 4, 2])
        w = tf.placeholder(tf.float64, [2, 2, 2, 2])
        x0, w0 = np.random.randn(1, 4, 4, 2), np.random.randn(2, 2, 2, 2)
        y = tf.nn.conv2d(x, w, [1, 2, 1, 1], "SAME")
        loss = tf.reduce_sum(tf.square(y))
        gw = tf.gradients(loss, w)[0]   # Conv2DBackpropFilter(x, ., y)
        gx = tf.gradients(loss, x)[0]   # Conv2DBackpropInput(., w, y)
        assert gw.op.type == "Conv2DBackpropFilter" and gx.op.type == "Conv2DBackpropInput"
        assert compute_gradient_error(x, [1, 4, 4, 2], gw, [2, 2, 2, 2], x_init_value=x0,
                                      extra_feed_dict={w: w0}) < 1e-5
        assert compute_gradient_error(w, [2, 2, 2, 2], gx, [1, 4, 4, 2], x_init_value=w0,
                                      extra_feed_dict={x: x0}) < 1e-5
        # max pool: d(MaxPoolGrad)/d(grad) is MaxPoolGradGrad, and back again
        p = tf.placeholder(tf.float64, [1, 4, 4, 1])
        p0 = np.random.permutation(16).reshape(1, 4, 4, 1).astype(np.float64)
        dy = tf.placeholder(tf.float64, [1, 2, 2, 1])
        mpg = tf.gradients(tf.nn.max_pool(p, 2, 2, "VALID"), p, grad_ys=dy)[0]
        assert mpg.op.type == "MaxPoolGrad"
        assert compute_gradient_error(dy, [1, 2, 2, 1], mpg, [1, 4, 4, 1],
                                      extra_feed_dict={p: p0}) < 1e-8
        ddx = tf.placeholder(tf.float64, [1, 4, 4, 1])
        mpgg = tf.gradients(mpg, dy, grad_ys=ddx)[0]
        assert mpgg.op.type == "MaxPoolGradGrad"
        assert compute_gradient_error(ddx, [1, 4, 4, 1], mpgg, [1, 2, 2, 1],
                                      extra_feed_dict={p: p0, dy: np.ones((1, 2, 2, 1))}) < 1e-8
        # avg pool: the gradient of AvgPoolGrad is avg_pool
        ag = tf.gradients(tf.nn.avg_pool(p, 2, 1, "SAME"), p, grad_ys=ddx)[0]
        assert compute_gradient_error(ddx, [1, 4, 4, 1], ag, [1, 4, 4, 1],
                                      extra_feed_dict={p: p0}) < 1e-8
