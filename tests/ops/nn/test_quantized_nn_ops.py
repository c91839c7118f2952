"""tf.nn.quantized_avg_pool / quantized_max_pool / quantized_conv2d / quantized_relu_x and the
raw QuantizedRelu, QuantizedRelu6, QuantizedBiasAdd: against NumPy loops written here and
values recorded from TF 2.21 (CPU, TF_ENABLE_ONEDNN_OPTS=0: TF's reference kernels) by
running the same graphs through `tensorflow.compat.v1` (tf.nn.quantized_* and
tf.raw_ops.Quantized*), quoted as literals. The probe behind them compared 203 cases
(every op, 8-bit and 32-bit types, SAME/VALID, strides 1-4, ranges with zero inside, below
and above, errors) with TF: every value and range equal.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

U8, I8, I32 = tf.quint8, tf.qint8, tf.qint32
R = tf.raw_ops


def _ints(value):
    """A fetched quantized array as plain integers."""
    value = np.asarray(value)
    return value[value.dtype.names[0]] if value.dtype.names else value


def _run(outputs, feed=None):
    with tf.Session() as sess:
        values = sess.run(list(outputs), feed)
    return [_ints(v) for v in values]


def _check(outputs, expected):
    """Fetches (levels, min, max) and compares with TF's recorded triple."""
    levels, lo, hi = _run(outputs)
    np.testing.assert_array_equal(levels, np.array(expected[0]))
    assert (float(lo), float(hi)) == (expected[1], expected[2])
    return levels


def pool_input(dtype):
    x = (np.arange(2 * 4 * 5 * 2) * 37 % 256).reshape(2, 4, 5, 2)
    return (x - 128).astype(np.int8) if dtype == I8 else x.astype(np.uint8)


def conv_input(shape, mult):
    return (np.arange(np.prod(shape)) * mult % 256).reshape(shape).astype(np.uint8)


def round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def level_of(value, lo, hi, lowest=0, highest=255):
    """The level of a float in [lo, hi] (8-bit): TF's documented linear mapping."""
    scale = (highest - lowest) / (hi - lo)
    return int(np.clip(round_away(value * scale) - round_away(lo * scale) + lowest,
                       lowest, highest))


# --- TF 2.21's outputs: (levels, min, max) -------------------------------------------------
AVG_U8_SAME = (
    [[[[108, 102], [119, 128], [117, 111]], [[130, 103], [134, 128], [96, 133]]],
     [[[137, 132], [120, 129], [146, 140]], [[138, 111], [163, 115], [168, 141]]]],
    -1.5, 3.25)

AVG_I8_VALID = (
    [[[[-34, 3], [-24, 13], [-14, -41], [-4, -31]],
      [[16, -11], [-38, -1], [-28, 9], [-18, 19]], [[2, -25], [12, -15], [22, -5], [-32, 5]]],
     [[[-26, 11], [-16, 21], [-6, 31], [4, -23]], [[24, -3], [34, 7], [-20, 17], [-10, 27]],
      [[10, -17], [20, -7], [30, 3], [40, 13]]]],
    -1.5, 3.25)

MAX_U8_SAME = (
    [[[[228, 225], [222, 231], [222, 231]], [[228, 197], [234, 231], [194, 231]]],
     [[[246, 237], [246, 243], [240, 249]], [[246, 209], [252, 215], [252, 249]]]],
    -1.5, 3.25)

MAX_I8_VALID = (
    [[[[60, 97], [60, 97], [94, 57], [94, 63]], [[100, 97], [60, 97], [66, 103], [66, 103]],
      [[100, 69], [106, 69], [106, 103], [66, 103]]],
     [[[72, 109], [78, 115], [78, 115], [112, 75]],
      [[118, 81], [118, 115], [78, 115], [84, 121]],
      [[118, 81], [118, 87], [124, 87], [124, 121]]]],
    -1.5, 3.25)

RELU_U8_0 = (
    [59, 59, 59, 59, 59, 59, 59, 59, 59, 63, 70, 77, 84, 91, 98, 105, 112, 119, 126, 133, 140,
     147, 154, 161, 168, 175, 182, 189, 196, 203, 210, 217, 224, 231, 238, 245, 252],
    -3.0, 10.0)

RELU6_U8_0 = (
    [59, 59, 59, 59, 59, 59, 59, 59, 59, 63, 70, 77, 84, 91, 98, 105, 112, 119, 126, 133, 140,
     147, 154, 161, 168, 175, 177, 177, 177, 177, 177, 177, 177, 177, 177, 177, 177],
    -3.0, 10.0)

RELU_U8_1 = (
    [0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98, 105, 112, 119, 126, 133, 140,
     147, 154, 161, 168, 175, 182, 189, 196, 203, 210, 217, 224, 231, 238, 245, 252],
    1.0, 5.0)

RELU6_U8_1 = (
    [0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98, 105, 112, 119, 126, 133, 140,
     147, 154, 161, 168, 175, 182, 189, 196, 203, 210, 217, 224, 231, 238, 245, 252],
    1.0, 5.0)

RELU_U8_2 = (
    [255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
     255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
     255],
    -10.0, -2.0)

RELU6_U8_2 = (
    [255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
     255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
     255],
    -10.0, -2.0)

RELU_I32 = (
    [-715827883, -715827883, -1000, -1, 0, 1, 1000, 268435456, 1073741824, 2147483647],
    -4.0, 8.0)

RELU6_I32 = (
    [-715827883, -715827883, -1000, -1, 0, 1, 1000, 268435456, 1073741824, 1431655765],
    -4.0, 8.0)

CONV_SAME_S1 = (
    [[[[10256, 8156, -9304], [35688, 3780, 3104], [-30016, 13484, 3736], [-15336, -1644, 5392],
       [24208, -8270, 4052]],
      [[712, 20324, -4608], [-28896, 588, 32120], [9848, 9524, -7696], [35280, 5148, 4712],
       [-24396, 10174, 16840]],
      [[-15744, -276, 7000], [16344, 2004, 26064], [304, 21692, -3000], [-29304, 1956, 33728],
       [23256, -6198, -5188]],
      [[34872, 6516, 6320], [-30832, 16220, 6952], [-16152, 1092, 8608], [15936, 3372, 27672],
       [-5124, -7210, 14000]],
      [[-21914, -4744, 37258], [10466, 5820, -11882], [-930, 24320, -1374],
       [-20518, 8772, 14766], [-12927, -3736, 5455]]]],
    -693535.6875, 693535.6875)

CONV_VALID_S2 = (
    [[[[28644, -30490], [20024, 1804]], [[30684, 20426], [30768, -29968]]],
     [[[7116, 30866], [34848, 8120]], [[9156, 4214], [5656, 15772]]]],
    -66051.0234375, 66051.0234375)

CONV_SAME_S4 = (
    [[[[4905, 360], [-11227, -824]], [[3597, 264], [-12535, -920]]]],
    -693535.6875, 693535.6875)

CONV_VALID_S3 = (
    [[[[9265, 680], [-2834, -208]], [[-7521, -552], [8284, 608]]]],
    -693535.6875, 693535.6875)

CONV_ZERO_BELOW = (
    [[[[-52593], [-98452], [-72373], [-73335]], [[-46003], [-121302], [-162713], [-130602]],
      [[-94607], [-155874], [-177061], [-125022]],
      [[-27475], [-104480], [-107011], [-80593]]]],
    -185768.5, 185768.5)

CONV_ZERO_ABOVE = (
    [[[[-80193], [-66607], [-45356], [-80307]], [[-55938], [-39777], [-70254], [-78491]],
      [[-51150], [-30613], [-77218], [-92223]], [[-39223], [-72281], [-79640], [-82209]]]],
    -495382.65625, 495382.65625)

BIAS_U8 = (
    [[[-21824, -10794, 235, -10665], [-12315, -1285, 9744, -17605],
      [-19254, -8224, 2805, -8095]],
     [[-9745, 1285, -4134, -15035], [-16684, -5654, 5375, -5525],
      [-7175, -12593, -1564, -12465]]],
    -393216.0, 393216.0)

BIAS_I8 = (
    [[[-20416, -5951, 8514, -9919], [-14473, -8, 14457, -14256],
      [-18810, -4345, 10120, -8312]],
     [[-12867, 1598, 5783, -12649], [-17203, -2739, 11726, -6706],
      [-11260, -7076, 7389, -11043]]],
    -262144.0, 262144.0)


# --- pooling --------------------------------------------------------------------------------
def _pool_reference(x, k, s, padding, reduce):
    """Loops over the windows of the real cells (SAME: TF's padding split)."""
    n, h, w, c = x.shape
    def bounds(size):
        out = -(-size // s) if padding == "SAME" else (size - k) // s + 1
        pad = max((out - 1) * s + k - size, 0) // 2 if padding == "SAME" else 0
        return [(max(o * s - pad, 0), min(o * s - pad + k, size)) for o in range(out)]
    rows, cols = bounds(h), bounds(w)
    out = np.zeros((n, len(rows), len(cols), c), np.int64)
    for i, (r0, r1) in enumerate(rows):
        for j, (c0, c1) in enumerate(cols):
            out[:, i, j] = reduce(x[:, r0:r1, c0:c1].astype(np.int64).reshape(n, -1, c))
    return out


def _trunc_mean(cells):
    total, count = cells.sum(axis=1), cells.shape[1]
    return np.sign(total) * (np.abs(total) // count)


@pytest.mark.parametrize("expected,dtype,k,s,padding", [
    (AVG_U8_SAME, U8, 3, 2, "SAME"), (AVG_I8_VALID, I8, 2, 1, "VALID")])
def test_quantized_avg_pool_matches_tf(expected, dtype, k, s, padding):
    x = pool_input(dtype)
    out = tf.nn.quantized_avg_pool(tf.constant(x, dtype), -1.5, 3.25, [1, k, k, 1],
                                   [1, s, s, 1], padding)
    assert out.output.dtype == dtype and out.output.shape.as_list() == \
        list(np.shape(expected[0]))
    levels = _check(out, expected)
    np.testing.assert_array_equal(levels, _pool_reference(x, k, s, padding, _trunc_mean))


@pytest.mark.parametrize("expected,dtype,k,s,padding", [
    (MAX_U8_SAME, U8, 3, 2, "SAME"), (MAX_I8_VALID, I8, 2, 1, "VALID")])
def test_quantized_max_pool_matches_tf(expected, dtype, k, s, padding):
    x = pool_input(dtype)
    out = tf.nn.quantized_max_pool(tf.constant(x, dtype), -1.5, 3.25, [1, k, k, 1],
                                   [1, s, s, 1], padding)
    levels = _check(out, expected)
    np.testing.assert_array_equal(
        levels, _pool_reference(x, k, s, padding, lambda cells: cells.max(axis=1)))


def test_quantized_pool_errors():
    x = tf.constant(pool_input(U8), U8)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.nn.quantized_max_pool(x, [0.], 1., [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="AvgPool requires the ksize attribute to contain 4 "
                                         "values, but got: 3"):
        tf.nn.quantized_avg_pool(x, 0., 1., [1, 2, 2], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 5 "
                                         "from 4"):
        tf.nn.quantized_max_pool(x, 0., 1., [1, 5, 2, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="Stride must be > 0, but got 0"):
        tf.nn.quantized_max_pool(x, 0., 1., [1, 2, 2, 1], [1, 0, 1, 1], "VALID")
    with pytest.raises(ValueError, match="passed string 'EXPLICIT' not in"):
        tf.nn.quantized_max_pool(x, 0., 1., [1, 2, 2, 1], [1, 1, 1, 1], "EXPLICIT")
    with pytest.raises(tf.errors.UnimplementedError,
                       match="Pooling is not yet supported on the batch dimension."):
        _run(tf.nn.quantized_max_pool(x, 0., 1., [2, 2, 2, 1], [1, 1, 1, 1], "VALID"))
    with pytest.raises(tf.errors.UnimplementedError, match="exactly one of pooling across "
                                                           "depth or pooling across"):
        _run(tf.nn.quantized_avg_pool(x, 0., 1., [1, 2, 2, 2], [1, 1, 1, 2], "VALID"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                                                             "support Op 'QuantizedMaxPool'"):
        _run(tf.nn.quantized_max_pool(tf.constant(np.zeros((1, 2, 2, 1), np.int32), I32),
                                      0., 1., [1, 2, 2, 1], [1, 1, 1, 1], "VALID"))


def test_quantized_pool_run_time_ranks():
    levels = tf.placeholder(U8)
    low = tf.placeholder(tf.float32)
    pooled = tf.nn.quantized_avg_pool(levels, low, 1., [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="min_input shape must be rank 0 "
                       r"but is rank 1, received shape: \[2\]"):
        _run(pooled, {levels: pool_input(U8), low: [0., 1.]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="tensor_in_shape must have 2 spatial dimensions. 3 0"):
        _run(pooled, {levels: pool_input(U8)[0], low: 0.})


# --- activations ----------------------------------------------------------------------------
FEATURES = np.arange(0, 256, 7).astype(np.uint8)
Q32 = np.array([-2**31, -2**30, -1000, -1, 0, 1, 1000, 2**28, 2**30, 2**31 - 1], np.int32)


@pytest.mark.parametrize("case,lo,hi", [(0, -3., 10.), (1, 1., 5.), (2, -10., -2.)])
def test_quantized_relu_and_relu6_match_tf(case, lo, hi):
    features = tf.constant(FEATURES, U8)
    relu = R.QuantizedRelu(features=features, min_features=lo, max_features=hi)
    relu6 = R.QuantizedRelu6(features=features, min_features=lo, max_features=hi)
    relu_levels = _check(relu, globals()["RELU_U8_%d" % case])
    relu6_levels = _check(relu6, globals()["RELU6_U8_%d" % case])
    zero, six = level_of(0., lo, hi), level_of(6., lo, hi)
    np.testing.assert_array_equal(relu_levels, np.maximum(FEATURES, zero))
    np.testing.assert_array_equal(relu6_levels, np.minimum(np.maximum(FEATURES, zero), six))


def test_quantized_relu_qint32_matches_tf():
    features = tf.constant(Q32, I32)
    _check(R.QuantizedRelu(features=features, min_features=-4., max_features=8.,
                           out_type=I32), RELU_I32)
    _check(R.QuantizedRelu6(features=features, min_features=-4., max_features=8.,
                            out_type=I32), RELU6_I32)


@pytest.mark.parametrize("case,lo,hi", [(0, -3., 10.), (1, 1., 5.), (2, -10., -2.)])
def test_quantized_relu_x_is_relu6_at_six(case, lo, hi):
    # TF 2.21 ships no QuantizedReluX kernel; TF 1.x's is QuantizedRelu6's with max_value
    out = tf.nn.quantized_relu_x(tf.constant(FEATURES, U8), 6., lo, hi)
    assert out._fields == ("activations", "min_activations", "max_activations")
    _check(out, globals()["RELU6_U8_%d" % case])
    capped = tf.nn.quantized_relu_x(tf.constant(FEATURES, U8), 2.5, lo, hi)
    levels = _run(capped)[0]
    zero, top = level_of(0., lo, hi), level_of(2.5, lo, hi)
    np.testing.assert_array_equal(levels, np.minimum(np.maximum(FEATURES, zero), top))
    out32 = tf.nn.quantized_relu_x(tf.constant(Q32, I32), 6., -4., 8., out_type=I32)
    _check(out32, RELU6_I32)


def test_quantized_relu_errors():
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.nn.quantized_relu_x(tf.constant(FEATURES, U8), [5., 2.], 0., 10.)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                       "support Op 'QuantizedRelu'.*out_type=DT_QINT32"):
        _run(R.QuantizedRelu(features=tf.constant(FEATURES, U8), min_features=-1.,
                             max_features=1., out_type=I32))
    low = tf.placeholder(tf.float32)
    relu = R.QuantizedRelu(features=tf.constant(FEATURES, U8), min_features=low,
                           max_features=10.)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="`min_input` must be rank 0 but is rank 1"):
        _run(relu, {low: [0., 1.]})


# --- QuantizedConv2D ------------------------------------------------------------------------
def _conv_reference(x, w, ranges, stride, padding):
    """Direct loops: (x - zero level) * (w - zero level) summed, zero-padded (SAME)."""
    x0 = x.astype(np.int64) - level_of(0., ranges[0], ranges[1])
    w0 = w.astype(np.int64) - level_of(0., ranges[2], ranges[3])
    n, h, wd, _ = x.shape
    kh, kw, _, co = w.shape
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-wd // stride)
        top = max((oh - 1) * stride + kh - h, 0) // 2
        left = max((ow - 1) * stride + kw - wd, 0) // 2
    else:
        oh, ow, top, left = (h - kh) // stride + 1, (wd - kw) // stride + 1, 0, 0
    padded = np.zeros((n, h + 2 * kh, wd + 2 * kw, x.shape[3]), np.int64)
    padded[:, top:top + h, left:left + wd] = x0
    out = np.zeros((n, oh, ow, co), np.int64)
    for i in range(oh):
        for j in range(ow):
            patch = padded[:, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, i, j] = np.tensordot(patch, w0, axes=3)
    return out


CONV_CASES = [
    (CONV_SAME_S1, (1, 5, 5, 2), (2, 2, 2, 3), 1, "SAME", (-1., 2., -3., 4.)),
    (CONV_VALID_S2, (2, 6, 6, 3), (3, 3, 3, 2), 2, "VALID", (0., 1., -1., 1.)),
    # TF's window origin: a SAME stride overshooting the input by 2 starts a cell in
    (CONV_SAME_S4, (1, 7, 7, 1), (1, 1, 1, 2), 4, "SAME", (-1., 2., -3., 4.)),
    (CONV_VALID_S3, (1, 6, 6, 1), (1, 1, 1, 2), 3, "VALID", (-1., 2., -3., 4.)),
    # zero below the input's range (a negative zero level) and above it (the im2col border
    # holds the zero level's low byte)
    (CONV_ZERO_BELOW, (1, 4, 4, 1), (3, 3, 1, 1), 1, "SAME", (0.5, 3., -2., 0.25)),
    (CONV_ZERO_ABOVE, (1, 4, 4, 1), (3, 3, 1, 1), 1, "SAME", (-6., -1., -1., 2.))]


@pytest.mark.parametrize("expected,xs,fs,stride,padding,ranges", CONV_CASES)
def test_quantized_conv2d_matches_tf(expected, xs, fs, stride, padding, ranges):
    x, w = conv_input(xs, 37), conv_input(fs, 101)
    out = tf.nn.quantized_conv2d(tf.constant(x, U8), tf.constant(w, U8), *ranges,
                                 strides=[1, stride, stride, 1], padding=padding)
    assert out.output.dtype == I32
    assert out.output.shape.as_list() == list(np.shape(expected[0]))
    levels = _check(out, expected)
    if expected in (CONV_SAME_S1, CONV_VALID_S2):  # zero inside, no overshoot
        np.testing.assert_array_equal(levels, _conv_reference(x, w, ranges, stride, padding))


def test_quantized_conv2d_errors():
    x = tf.constant(conv_input((1, 5, 5, 2), 37), U8)
    w = tf.constant(conv_input((2, 2, 2, 3), 101), U8)

    def conv(inp=x, **kwargs):
        kwargs.setdefault("strides", [1, 1, 1, 1])
        kwargs.setdefault("padding", "VALID")
        return tf.nn.quantized_conv2d(inp, w, -1., 2., -3., 4., **kwargs)
    run_errors = [
        (dict(strides=[1, 1, 2, 1]), "only supports equal length strides in the row and column"),
        (dict(strides=[2, 1, 1, 1]), "does not yet support strides in the batch and depth"),
        (dict(dilations=[1, 2, 2, 1]), "only supports dilated rate as 1 in the row and column"),
        (dict(out_type=tf.qint8), "No OpKernel was registered to support Op 'QuantizedConv2D'")]
    for kwargs, message in run_errors:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            _run(conv(**kwargs))
    with pytest.raises(ValueError, match="Conv2D on data format NHWC requires the stride "
                                         "attribute to contain 4 values, but got: 3"):
        conv(strides=[1, 1, 1])
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        conv(inp=tf.constant(conv_input((5, 5, 2), 37), U8))
    levels = tf.placeholder(U8)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="input must be rank 4 but is rank 3"):
        _run(conv(inp=levels), {levels: conv_input((5, 5, 2), 37)})
    low = tf.placeholder(tf.float32)
    out = tf.nn.quantized_conv2d(x, w, low, 2., -3., 4., strides=[1, 1, 1, 1],
                                 padding="VALID")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="min_input must be rank 0 but is rank 1"):
        _run(out, {low: [1., 2.]})


# --- QuantizedBiasAdd -----------------------------------------------------------------------
def test_quantized_bias_add_matches_tf():
    x, bias = conv_input((2, 3, 4), 37), conv_input((4,), 101)
    out = R.QuantizedBiasAdd(input=tf.constant(x, U8), bias=tf.constant(bias, U8),
                             min_input=-1., max_input=2., min_bias=-3., max_bias=1.,
                             out_type=I32)
    _check(out, BIAS_U8)
    # the range: the widest input magnitude (3) times 2^17, symmetric
    assert BIAS_U8[2] == 3 * 2 ** 17
    signed = (x.astype(np.int16) - 128).astype(np.int8)
    signed_bias = (bias.astype(np.int16) - 128).astype(np.int8)
    _check(R.QuantizedBiasAdd(input=tf.constant(signed, I8), bias=tf.constant(signed_bias, I8),
                              min_input=-0.5, max_input=0.75, min_bias=-2., max_bias=2.,
                              out_type=I32), BIAS_I8)


def test_quantized_bias_add_errors():
    x = tf.constant(conv_input((2, 3), 37), U8)
    common = dict(min_input=0., max_input=1., min_bias=0., max_bias=1., out_type=I32)
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        R.QuantizedBiasAdd(input=tf.constant(conv_input((3,), 1), U8),
                           bias=tf.constant(conv_input((3,), 1), U8), **common)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        R.QuantizedBiasAdd(input=x, bias=tf.constant(conv_input((2,), 1), U8), **common)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                       "support Op 'QuantizedBiasAdd'.*out_type=DT_QUINT8"):
        _run(R.QuantizedBiasAdd(input=x, bias=tf.constant(conv_input((3,), 1), U8),
                                **dict(common, out_type=U8)))
    levels = tf.placeholder(U8)
    out = R.QuantizedBiasAdd(input=levels, bias=tf.constant(conv_input((3,), 1), U8), **common)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input tensor must be at least 2D: \[3\]"):
        _run(out, {levels: conv_input((3,), 1)})


def _each_nn_op(low):
    """One op of each type, `low` its input's range minimum."""
    x4 = tf.constant(pool_input(U8), U8)
    w = tf.constant(conv_input((2, 2, 2, 3), 101), U8)
    feats = tf.constant(FEATURES, U8)
    return {
        "QuantizedMaxPool": tf.nn.quantized_max_pool(x4, low, 1., [1, 2, 2, 1], [1, 1, 1, 1],
                                                     "VALID").min_output,
        "QuantizedAvgPool": tf.nn.quantized_avg_pool(x4, low, 1., [1, 2, 2, 1], [1, 1, 1, 1],
                                                     "VALID").min_output,
        "QuantizedRelu": R.QuantizedRelu(features=feats, min_features=low,
                                         max_features=1.).min_activations,
        "QuantizedRelu6": R.QuantizedRelu6(features=feats, min_features=low,
                                           max_features=1.).min_activations,
        "QuantizedReluX": tf.nn.quantized_relu_x(feats, 6., low, 1.).min_activations,
        "QuantizedConv2D": tf.nn.quantized_conv2d(x4, w, low, 1., -1., 1., [1, 1, 1, 1],
                                                  "VALID").min_output,
        "QuantizedBiasAdd": R.QuantizedBiasAdd(
            input=x4, bias=tf.constant(conv_input((2,), 1), U8), min_input=low, max_input=1.,
            min_bias=0., max_bias=1., out_type=I32).min_out}


def test_quantized_nn_ops_have_no_gradient():
    # TF registers none: tf.gradients, and so the numeric check, raise LookupError
    low = tf.placeholder(tf.float32, [])
    for op_type, output in _each_nn_op(low).items():
        with pytest.raises(LookupError, match=r"No gradient defined .*\(op type: %s\)"
                           % op_type):
            compute_gradient_error(low, [], output, [],
                                   x_init_value=np.array(-1., np.float32))


def test_quantized_graph_round_trips_through_graph_def():
    # quantized constants are written as TF writes them (TF 2.21's make_tensor_proto:
    # tensor_content for several values, int_val for one) and read back
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(np.array([3, 200, 7], np.uint8), U8, name="weights")
        tf.constant(np.array(5, np.int32), I32, name="level")
        x = tf.constant(conv_input((1, 5, 5, 2), 37), U8)
        w = tf.constant(conv_input((2, 2, 2, 3), 101), U8)
        conv = tf.nn.quantized_conv2d(x, w, -1., 2., -3., 4., [1, 1, 1, 1], "SAME",
                                      name="conv")
        shrunk = R.QuantizeDownAndShrinkRange(input=conv.output, input_min=conv.min_output,
                                              input_max=conv.max_output, out_type=U8,
                                              name="shrunk")
        with tf.Session() as sess:
            expected = [_ints(v) for v in sess.run(list(shrunk))]
    graph_def = graph.as_graph_def()
    protos = {n.name: n.attr["value"].tensor for n in graph_def.node if n.op == "Const"}
    assert protos["weights"].tensor_content == b"\x03\xc8\x07"
    assert list(protos["level"].int_val) == [5]
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            got = [_ints(v) for v in sess.run(["shrunk:0", "shrunk:1", "shrunk:2",
                                               "weights:0"])]
    for a, b in zip(got[:3], expected):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got[3], [3, 200, 7])
