"""The quantized inference arithmetic of QuantizedMatMul, Requantize, RequantizationRange
and QuantizeDownAndShrinkRange (tf.raw_ops): against NumPy formulas written here and values
recorded from TF 2.21 (CPU, TF_ENABLE_ONEDNN_OPTS=0: TF's reference kernels) by running the
same tf.raw_ops graphs through `tensorflow.compat.v1`, quoted as literals. The probe behind
them compared these ops over 7 ranges x 189 qint32 values, both output types and 20
matrix products with TF: every value and range equal (RequantizationRange also over 235
single values, which pins TF's float rounding of qint32 levels).
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.ops.math.quantized_math_ops import float_to_quantized, product_range, \
    quantized_to_float

U8, I8, I32 = tf.quint8, tf.qint8, tf.qint32
R = tf.raw_ops


def _ints(value):
    value = np.asarray(value)
    return value[value.dtype.names[0]] if value.dtype.names else value


def _run(outputs, feed=None):
    with tf.Session() as sess:
        return [_ints(v) for v in sess.run(list(outputs), feed)]


def _check(outputs, expected):
    levels, lo, hi = _run(outputs)
    np.testing.assert_array_equal(levels, np.array(expected[0]))
    assert (float(lo), float(hi)) == (expected[1], expected[2])
    return levels


def matrix(shape, mult):
    return (np.arange(np.prod(shape)) * mult % 256).reshape(shape).astype(np.uint8)


def zero_level(lo, hi):
    """The quint8 level of 0.0 in [lo, hi], unclamped (TF's linear mapping)."""
    scaled = lo * 255.0 / (hi - lo)
    return -int(np.sign(scaled) * np.floor(abs(scaled) + 0.5))  # rounded half away from 0


R32 = np.array([-2**31, -2**24, -1000000, -65536, -1, 0, 1, 65536, 1000000, 2**24, 123456789,
                2**31 - 1], np.int32)


# --- TF 2.21's outputs: (levels, min, max) -------------------------------------------------
MATMUL = (
    [[3982, 4352], [9006, 5424], [4302, 10592]],
    -693535.6875, 693535.6875)

MATMUL_T = (
    [[51504, 72002], [93152, 109698], [69264, 95682]],
    -412818944.0, 412818944.0)

REQUANT_U8_0 = (
    [0, 78, 85, 85, 85, 85, 85, 85, 85, 92, 134, 255],
    -1.0, 2.0)

REQUANT_I8_0 = (
    [-128, -50, -43, -43, -43, -43, -43, -43, -43, -36, 6, 127],
    -1.0, 2.0)

REQUANT_U8_1 = (
    [0, 0, 0, 0, 127, 128, 128, 255, 255, 255, 255, 255],
    -3.0, 3.0)

REQUANT_I8_1 = (
    [-128, -128, -128, -128, 0, 0, 0, 127, 127, 127, 127, 127],
    -3.0, 3.0)

REQUANT_U8_2 = (
    [0, 0, 112, 127, 127, 128, 128, 128, 143, 255, 255, 255],
    -1.0, 1.0)

REQUANT_I8_2 = (
    [-128, -128, -15, -1, 0, 0, 0, 1, 15, 127, 127, 127],
    -1.0, 1.0)

RANGE = (-0.00030517345294356346, 0.004656615201383829)

RANGE_EMPTY = (0.0, -3.0)

SHRINK = (
    [0, 16, 16, 16, 31, 255],
    -0.00030517345294356346, 0.004656615201383829)

SHRINK_WIDE = (
    [0, 127, 127, 127, 127, 128, 128, 128, 128, 128, 135, 255],
    -1.5, 7.0)



# --- QuantizedMatMul ------------------------------------------------------------------------
@pytest.mark.parametrize("expected,ranges,transposed", [
    (MATMUL, (-1., 2., -3., 4.), False), (MATMUL_T, (0.5, 3., -1e-3, 5e3), True)])
def test_quantized_matmul_matches_tf(expected, ranges, transposed):
    a, b = matrix((3, 4), 37), matrix((4, 2), 101)
    out = R.QuantizedMatMul(a=tf.constant(a.T if transposed else a, U8),
                            b=tf.constant(b.T if transposed else b, U8),
                            min_a=ranges[0], max_a=ranges[1], min_b=ranges[2],
                            max_b=ranges[3], transpose_a=transposed, transpose_b=transposed)
    levels = _check(out, expected)
    centred = (a.astype(np.int64) - zero_level(*ranges[:2])) @ \
        (b.astype(np.int64) - zero_level(*ranges[2:]))
    np.testing.assert_array_equal(levels, centred)
    # one output level is the product of one level of each input
    step = (ranges[1] - ranges[0]) / 255 * (ranges[3] - ranges[2]) / 255
    np.testing.assert_allclose(expected[2], step * (2 ** 31 - 1), rtol=1e-6)


def test_quantized_matmul_wraps_like_tf_int32_accumulators():
    # zero levels of +-2.55e8 (ranges far from 0): the exact sums overflow int32 and wrap
    a, b = matrix((3, 4), 37), matrix((4, 2), 101)
    out = R.QuantizedMatMul(a=tf.constant(a, U8), b=tf.constant(b, U8), min_a=1e6,
                            max_a=1e6 + 1, min_b=-2e6, max_b=-2e6 + 2)
    levels = _check(out, ([[-1004257988, -1918950702], [-784870420, -1699567086],
                           [1145432732, 230745938]], -66051.0234375, 66051.0234375))
    exact = (a.astype(np.int64) + 255000000) @ (b.astype(np.int64) - 255000000)
    np.testing.assert_array_equal(levels, exact.astype(np.int32))


def test_quantized_matmul_errors():
    a = tf.constant(matrix((2, 3), 37), U8)
    b = tf.constant(matrix((3, 2), 37), U8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_a must be larger than min_a."):
        _run(R.QuantizedMatMul(a=a, b=b, min_a=1., max_a=1., min_b=0., max_b=1.))
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_b must be larger than min_b."):
        _run(R.QuantizedMatMul(a=a, b=b, min_a=0., max_a=1., min_b=2., max_b=1.))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        R.QuantizedMatMul(a=a, b=a, min_a=0., max_a=1., min_b=0., max_b=1.)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        R.QuantizedMatMul(a=a, b=b, min_a=[0.], max_a=1., min_b=0., max_b=1.)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                       "support Op 'QuantizedMatMul'.*T1=DT_QINT8"):
        _run(R.QuantizedMatMul(a=tf.constant(matrix((2, 3), 1).astype(np.int8), I8), b=b,
                               min_a=0., max_a=1., min_b=0., max_b=1.))
    vector = tf.placeholder(U8)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\] is not a matrix"):
        _run(R.QuantizedMatMul(a=vector, b=b, min_a=0., max_a=1., min_b=0., max_b=1.),
             {vector: matrix((3,), 1)})


# --- Requantize -----------------------------------------------------------------------------
REQUANT_RANGES = [(-10., 10., -1., 2.), (-1e6, 1e6, -3., 3.), (-256., 256., -1., 1.)]


@pytest.mark.parametrize("case", range(3))
def test_requantize_matches_tf(case):
    lo, hi, out_lo, out_hi = REQUANT_RANGES[case]
    for out_type, expected in ((U8, globals()["REQUANT_U8_%d" % case]),
                               (I8, globals()["REQUANT_I8_%d" % case])):
        out = R.Requantize(input=tf.constant(R32, I32), input_min=lo, input_max=hi,
                           requested_output_min=out_lo, requested_output_max=out_hi,
                           out_type=out_type)
        levels = _check(out, expected)
        # each level lands within one step of the float it stands for
        floats = quantized_to_float(R32, lo, hi, I32).astype(np.float64)
        lowest = -128 if out_type == I8 else 0
        step = (out_hi - out_lo) / 255
        target = np.clip((floats - out_lo) / step + lowest, lowest, lowest + 255)
        assert np.abs(levels - target).max() <= 1.0


def test_requantize_errors():
    q = tf.constant(R32, I32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="requested_output_min must be <= 0, but got 0.01"):
        _run(R.Requantize(input=q, input_min=-1., input_max=1., requested_output_min=0.01,
                          requested_output_max=2., out_type=U8))
    with pytest.raises(tf.errors.InvalidArgumentError, match="requested_output_max must be >= "
                       "requested_output_min, but got -11 and -10"):
        _run(R.Requantize(input=q, input_min=-1., input_max=1., requested_output_min=-10.,
                          requested_output_max=-11., out_type=U8))
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        R.Requantize(input=q, input_min=[-1.], input_max=1., requested_output_min=-1.,
                     requested_output_max=1., out_type=U8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                       "support Op 'Requantize'.*Tinput=DT_QUINT8"):
        _run(R.Requantize(input=tf.constant(matrix((3,), 1), U8), input_min=-1., input_max=1.,
                          requested_output_min=-1., requested_output_max=1., out_type=U8))


# --- RequantizationRange, QuantizeDownAndShrinkRange ---------------------------------------
def test_requantization_range_matches_tf():
    levels = R32[3:9]
    lo, hi = _run(R.RequantizationRange(input=tf.constant(levels, I32), input_min=-10.,
                                        input_max=10.))
    assert (float(lo), float(hi)) == RANGE
    # the floats of the extreme levels, the minimum held at or below 0
    np.testing.assert_allclose(RANGE, [min(0., levels.min() * 20 / 2 ** 32),
                                       levels.max() * 20 / 2 ** 32], atol=1e-8)
    # an empty tensor: the scan starts from the type's extremes
    assert tuple(float(v) for v in _run(R.RequantizationRange(
        input=tf.constant(R32[:0], I32), input_min=-3., input_max=10.))) == RANGE_EMPTY


def test_quantize_down_and_shrink_range_matches_tf():
    out = R.QuantizeDownAndShrinkRange(input=tf.constant(R32[3:9], I32), input_min=-10.,
                                       input_max=10., out_type=U8)
    _check(out, SHRINK)
    assert SHRINK[1:] == RANGE  # the range RequantizationRange finds
    _check(R.QuantizeDownAndShrinkRange(input=tf.constant(R32, I32), input_min=-1.5,
                                        input_max=7., out_type=U8), SHRINK_WIDE)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                       "support Op 'QuantizeDownAndShrinkRange'.*out_type=DT_QINT8"):
        _run(R.QuantizeDownAndShrinkRange(input=tf.constant(R32, I32), input_min=-1.,
                                          input_max=1., out_type=I8))


def test_range_arithmetic_helpers():
    # the level of 0.0 and of 6.0 in [-3, 10] (quint8): round(v * 255 / 13) - round(-3 * ...)
    assert float_to_quantized(np.array([0., 6., 100.]), -3., 10., U8).tolist() == [59, 177, 255]
    # level 0 of a symmetric qint32 range is 0.0, within a step of (hi - lo) / 2^32
    middle = quantized_to_float(np.array([0, 2 ** 30], np.int32), -10., 10., I32)
    assert abs(middle[0]) <= 20 / 2 ** 32 and abs(middle[1] - 5.) <= 20 / 2 ** 32
    lo, hi = product_range((-1., 2.), U8, (-3., 4.), U8, I32)
    assert (float(lo), float(hi)) == MATMUL[1:]


def test_quantized_math_ops_have_no_gradient():
    # TF registers none: tf.gradients, and so the numeric check, raise LookupError
    low = tf.placeholder(tf.float32, [])
    q = tf.constant(R32, I32)
    a = tf.constant(matrix((2, 2), 37), U8)
    outputs = {
        "QuantizedMatMul": R.QuantizedMatMul(a=a, b=a, min_a=low, max_a=1., min_b=0.,
                                             max_b=1.).min_out,
        "Requantize": R.Requantize(input=q, input_min=low, input_max=10.,
                                   requested_output_min=-1., requested_output_max=1.,
                                   out_type=U8).output_min,
        "RequantizationRange": R.RequantizationRange(input=q, input_min=low,
                                                     input_max=10.).output_min,
        "QuantizeDownAndShrinkRange": R.QuantizeDownAndShrinkRange(
            input=q, input_min=low, input_max=10., out_type=U8).output_min}
    for op_type, output in outputs.items():
        with pytest.raises(LookupError, match=r"\(op type: %s\)" % op_type):
            compute_gradient_error(low, [], output, [],
                                   x_init_value=np.array(-10., np.float32))
