"""tf.quantization.quantize / dequantize / quantized_concat: against NumPy references of
the mappings written here, and values recorded from TF 2.21 (CPU, oneDNN off, which is
TF's reference kernel) quoted as literals. The probe behind them compared 96 + 47 cases
(every mode and quantized type, narrow_range, axis, 7 ranges x 500 random inputs, errors)
bit for bit with TF.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

F32 = np.float32
q = tf.quantization
X = np.array([-1.5, -1.0, -0.5, -0.25, 0.0, 0.1, 0.5, 0.75, 1.0, 2.0, 3.7, 6.0, 7.0, 0.3333,
              -0.3333, 2.5], F32)
_LIMITS = {tf.quint8: (0, 255), tf.qint8: (-128, 127), tf.quint16: (0, 65535),
           tf.qint16: (-32768, 32767)}


def _ints(value):
    """A fetched quantized array as plain integers (structured or not)."""
    value = np.asarray(value)
    return value[value.dtype.names[0]] if value.dtype.names else value


# --- references: the documented mappings, in float64 ---------------------------------------


def ref_min_combined(x, lo, hi, dtype):
    """[lo, hi] onto lowest..highest linearly; ties away from zero (half up unsigned)."""
    lowest, highest = _LIMITS[dtype]
    levels = (np.clip(x, lo, hi) - lo) * (highest - lowest) / (hi - lo) + lowest
    return np.sign(levels) * np.floor(np.abs(levels) + 0.5)


def ref_scaled(x, lo, hi, dtype, narrow=False):
    """The widest symmetric scale keeping 0 at 0 (SCALED mode), and its range."""
    lowest, highest = _LIMITS[dtype]
    lowest += 1 if narrow else 0
    scale = min(lowest / lo if lowest * lo > 0 else np.inf, highest / hi)
    lo, hi = lowest / scale, highest / scale
    return np.rint(np.clip(x, lo, hi) * scale), lo, hi


# --- QuantizeV2 -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [tf.quint8, tf.qint8, tf.quint16, tf.qint16])
def test_min_combined_against_the_linear_map(sess, dtype):
    # x keeps away from the ties (exact half levels) where float32 and float64 could differ
    x = np.linspace(-1.3, 6.4, 97).astype(F32) + F32(1e-3)
    out = sess.run(q.quantize(x, -1.0, 6.0, dtype))
    np.testing.assert_array_equal(_ints(out.output), ref_min_combined(x, -1.0, 6.0, dtype))
    assert (out.output_min, out.output_max) == (-1.0, 6.0)


@pytest.mark.parametrize("dtype", [tf.qint8, tf.qint16])
def test_scaled_against_the_symmetric_scale(sess, dtype):
    x = np.linspace(-3.1, 6.7, 101).astype(F32) + F32(1e-3)
    for narrow in (False, True):
        out = sess.run(q.quantize(x, -2.0, 6.0, dtype, mode="SCALED", narrow_range=narrow))
        levels, lo, hi = ref_scaled(x, -2.0, 6.0, dtype, narrow)
        np.testing.assert_array_equal(_ints(out.output), levels)
        np.testing.assert_allclose([out.output_min, out.output_max], [lo, hi], rtol=1e-6)


def test_values_recorded_from_tf(sess):
    x = tf.constant(X)
    got = sess.run([q.quantize(x, -1.0, 6.0, tf.qint8),
                    q.quantize(x, -1.0, 6.0, tf.quint8, mode="MIN_FIRST"),
                    q.quantize(x, -1.0, 6.0, tf.qint8, mode="SCALED"),
                    q.quantize(x, -1.0, 6.0, tf.qint32, mode="MIN_FIRST"),
                    q.quantize(x, -2.0, 2.0, tf.qint8, mode="SCALED", narrow_range=True)])
    assert _ints(got[0].output).tolist() == [-128, -128, -110, -101, -92, -88, -73, -64, -55,
                                             -19, 43, 127, 127, -79, -104, -1]
    assert _ints(got[1].output).tolist() == [0, 0, 18, 27, 36, 40, 54, 63, 72, 109, 171, 255,
                                             255, 48, 24, 127]
    assert _ints(got[2].output).tolist() == [-32, -21, -11, -5, 0, 2, 11, 16, 21, 42, 78, 127,
                                             127, 7, -7, 53]
    assert got[2].output_min == F32(-6.047244) and got[2].output_max == 6.0
    # qint32: MIN_FIRST clamps to TF's int32-safe bound 2147483520
    assert _ints(got[3].output).tolist() == [
        -2147483648, -2147483648, -1840700288, -1687308672, -1533916928, -1472560256,
        -1227133568, -1073741824, -920350144, -306783360, 736280320, 2147483520, 2147483520,
        -1329415168, -1738418688, 0]
    assert _ints(got[4].output).tolist() == [-95, -64, -32, -16, 0, 6, 32, 48, 64, 127, 127,
                                             127, 127, 21, -21, 127]


def test_qint32_overflow_converts_as_x86(sess):
    # MIN_COMBINED's top level 2^31 does not fit int32: TF's cast gives int32's lowest
    out = sess.run(q.quantize(tf.constant([6.0, 0.0, np.nan]), -1.0, 6.0, tf.qint32))
    assert _ints(out.output).tolist() == [-2147483648, -1533916928, -2147483648]
    assert _ints(sess.run(q.quantize(tf.constant([np.nan, np.inf, -np.inf, 0.5]), -1.0, 1.0,
                                     tf.quint8)).output).tolist() == [0, 255, 0, 191]


def test_round_modes_of_scaled(sess):
    x = tf.constant([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5])
    even = sess.run(q.quantize(x, -128.0, 127.0, tf.qint8, mode="SCALED",
                               round_mode="HALF_TO_EVEN"))
    away = sess.run(q.quantize(x, -128.0, 127.0, tf.qint8, mode="SCALED"))
    assert _ints(even.output).tolist() == [0, 2, 2, 0, -2, -2, 126, 127]
    assert _ints(away.output).tolist() == [1, 2, 3, -1, -2, -3, 127, 127]


def test_the_range_is_widened_to_hold_zero_and_a_minimum_width(sess):
    # [0, 0] becomes [0, 0.01]; [0, 0.003] stays with ensure_minimum_range=0
    zero = sess.run(q.quantize(tf.constant([0.5, 0.0, -3.0]), 0.0, 0.0, tf.quint8))
    assert _ints(zero.output).tolist() == [255, 0, 0]
    assert zero.output_min == 0.0 and zero.output_max == F32(0.01)
    x = tf.constant([0.001, 0.002, 0.0])
    widths = sess.run([q.quantize(x, 0.0, 0.003, tf.quint8, ensure_minimum_range=e)
                       for e in (0.01, 0.0, 0.5)])
    assert [_ints(w.output).tolist() for w in widths] == [[26, 51, 0], [85, 170, 0], [1, 1, 0]]
    assert [w.output_max for w in widths] == [F32(0.01), F32(0.003), F32(0.5)]
    # a range below 0 is extended up to 0: SCALED then scales from the min side
    neg = sess.run(q.quantize(tf.constant([0.5, -3.0, -5.0, -9.0]), -8.0, -2.0, tf.qint8,
                              mode="SCALED"))
    assert _ints(neg.output).tolist() == [8, -48, -80, -128]
    assert (neg.output_min, neg.output_max) == (-8.0, 7.9375)


def test_axis_quantizes_each_slice_with_its_range(sess):
    x = np.arange(24, dtype=F32).reshape(2, 3, 4) - 10.0
    lo, hi = np.array([-12.0, -1.0, -5.0], F32), np.array([3.0, 14.0, 9.0], F32)
    for mode in ("MIN_COMBINED", "SCALED"):
        out = sess.run(q.quantize(x, lo, hi, tf.qint8, mode=mode, axis=1))
        for i in range(3):
            one = sess.run(q.quantize(x[:, i], lo[i], hi[i], tf.qint8, mode=mode))
            np.testing.assert_array_equal(_ints(out.output)[:, i], _ints(one.output))
            assert (out.output_min[i], out.output_max[i]) == (one.output_min, one.output_max)
    first = sess.run(q.quantize(x, [-12.0, -1.0], [3.0, 14.0], tf.qint8, axis=0))
    assert _ints(first.output)[0, 0].tolist() == [-94, -77, -60, -43]  # TF's
    assert q.quantize(x, lo, hi, tf.qint8, axis=-2).output_min.shape.as_list() == [3]


def test_quantize_errors(sess):
    x = tf.constant([0.5])
    with pytest.raises(ValueError, match="Attr 'mode' of 'QuantizeV2' Op passed string "
                       "'FOO' not in"):
        q.quantize(x, -1.0, 1.0, tf.qint8, mode="FOO")
    with pytest.raises(TypeError, match="parameter 'T' has DataType float32 not in list"):
        q.quantize(x, -1.0, 1.0, tf.float32)
    ones = tf.ones([2, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        q.quantize(ones, [-1.0] * 3, [1.0] * 3, tf.quint8, axis=0)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        q.quantize(ones, [-1.0, -1.0], [1.0, 1.0], tf.quint8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Round mode 'HALF_TO_EVEN' only "
                       "supported for mode 'SCALED', but mode is 'MIN_COMBINED'"):
        sess.run(q.quantize(x, -1.0, 1.0, tf.qint8, round_mode="HALF_TO_EVEN"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="input_max_range must be larger "
                       "than input_min_range"):
        sess.run(q.quantize(x, 1.0, -1.0, tf.qint8))
    with pytest.raises(tf.errors.UnimplementedError, match="MIN_FIRST mode is not "
                       "implemented for Quantize with axis != -1"):
        sess.run(q.quantize(ones, [-1.0, -1.0], [1.0, 1.0], tf.quint8, mode="MIN_FIRST",
                            axis=0))
    lo, hi = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="If axis is specified, min_range "
                       "must be a 1-D tensor whose size matches"):
        sess.run(q.quantize(ones, lo, hi, tf.qint8, axis=1), {lo: [-1.0] * 2, hi: [1.0] * 2})
    with pytest.raises(tf.errors.InvalidArgumentError, match="If axis is not specified, "
                       "min_range must contain a single float element, but it contains 2"):
        sess.run(q.quantize(ones, lo, hi, tf.qint8), {lo: [-1.0] * 2, hi: [1.0] * 2})


# --- Dequantize -------------------------------------------------------------------------------


def test_dequantize_inverts_quantize_within_half_a_level(sess):
    x = np.linspace(-0.99, 5.99, 61).astype(F32)
    for dtype in (tf.quint8, tf.qint8, tf.qint16):
        for mode in ("MIN_COMBINED", "MIN_FIRST", "SCALED"):
            qx = q.quantize(x, -1.0, 6.0, dtype, mode=mode)
            back, lo, hi = sess.run([q.dequantize(qx.output, qx.output_min, qx.output_max,
                                                  mode=mode), qx.output_min, qx.output_max])
            lowest, highest = _LIMITS[dtype]
            step = (hi - lo) / (highest - lowest)
            # SCALED of an unsigned type covers [0, max] only
            assert np.abs(back - np.clip(x, lo, hi)).max() <= step * 0.5 + 1e-6, (dtype, mode)


def test_dequantize_values_recorded_from_tf(sess):
    p = tf.placeholder(tf.quint8, [4])
    got = sess.run([q.dequantize(p, -1.0, 1.0, mode=m)
                    for m in ("MIN_COMBINED", "MIN_FIRST", "SCALED")],
                   {p: np.array([0, 1, 128, 255], np.uint8)})
    np.testing.assert_allclose(got, [[-1.0, -0.992157, 0.003922, 1.0],
                                     [-0.996078, -0.988235, 0.007843, 1.003922],
                                     [0.0, 0.003922, 0.501961, 1.0]], atol=1e-6)
    # SCALED qint32: TF goes through float and back, so the highest level overflows
    p32 = tf.placeholder(tf.qint32, [4])
    scaled = sess.run(q.dequantize(p32, -10.0, 10.0, mode="SCALED"),
                      {p32: np.array([-2 ** 31, -5, 1000, 2 ** 31 - 1], np.int32)})
    np.testing.assert_allclose(scaled, [-10.0, -2.328306e-08, 4.656613e-06, -10.0],
                               rtol=1e-6)


def test_dequantize_axis_bfloat16_and_errors(sess):
    p = tf.placeholder(tf.qint8, [2, 3])
    levels = np.arange(6, dtype=np.int8).reshape(2, 3)
    out = sess.run(q.dequantize(p, [-1.0, -2.0, -3.0], [1.0, 2.0, 3.0], axis=-1,
                                mode="SCALED"), {p: levels})
    np.testing.assert_allclose(out, levels * np.array([1.0, 2.0, 3.0]) / 127, rtol=1e-6)
    qx = q.quantize(tf.constant([0.5, -0.2]), -1.0, 1.0, tf.qint8)
    half = q.dequantize(qx.output, qx.output_min, qx.output_max, dtype=tf.bfloat16)
    assert half.dtype == tf.bfloat16
    np.testing.assert_allclose(sess.run(tf.cast(half, tf.float32)), [0.498047, -0.200195],
                               atol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="When output type is bfloat16, "
                       "Mode string must be 'MIN_COMBINED', is 'SCALED'"):
        sess.run(q.dequantize(qx.output, qx.output_min, qx.output_max, dtype=tf.bfloat16,
                              mode="SCALED"))
    with pytest.raises(TypeError, match="parameter 'input' has DataType float32 not in"):
        q.dequantize(tf.constant([1.0]), -1.0, 1.0)
    with pytest.raises(ValueError, match="input should have known rank to use negative axis"):
        q.dequantize(tf.placeholder(tf.qint8), [-1.0], [1.0], axis=-1)
    with pytest.raises(ValueError, match=r"Axis must be less than input dimension\(-1\), "
                       "got 1"):
        q.dequantize(tf.placeholder(tf.qint8), [-1.0], [1.0], axis=1)


# --- QuantizedConcat ------------------------------------------------------------------------


def test_quantized_concat_moves_inputs_to_a_common_range(sess):
    a = q.quantize(tf.constant([[0.5, -0.2], [1.0, 0.0]]), -1.0, 1.0, tf.quint8)
    b = q.quantize(tf.constant([[3.0, -2.0]]), -2.0, 4.0, tf.quint8)
    c = sess.run(q.quantized_concat(0, [a.output, b.output], [a.output_min, b.output_min],
                                    [a.output_max, b.output_max]))
    assert _ints(c.output).tolist() == [[106, 77], [128, 85], [213, 0]]  # TF's
    assert (c.output_min, c.output_max) == (-2.0, 4.0)
    # the requantized values stand for the same floats, within a level of the new range
    back = sess.run(q.dequantize(c.output, c.output_min, c.output_max, mode="MIN_FIRST"))
    np.testing.assert_allclose(back, [[0.5, -0.2], [1.0, 0.0], [3.0, -2.0]], atol=6 / 255)
    # a signed type gets a range symmetric around 0
    a32 = q.quantize(tf.constant([[0.5], [-0.25]]), -1.0, 1.0, tf.qint32)
    b32 = q.quantize(tf.constant([[3.0, -2.0], [1.0, 1.0]]), -2.0, 4.0, tf.qint32)
    c32 = sess.run(q.quantized_concat(1, [a32.output, b32.output],
                                      [a32.output_min, b32.output_min],
                                      [a32.output_max, b32.output_max]))
    assert _ints(c32.output).tolist() == [[268435456, 1610612864, -1073741824],
                                          [-134217728, 536870912, 536870912]]  # TF's
    assert (c32.output_min, c32.output_max) == (-4.0, 4.0)


def test_quantized_concat_errors(sess):
    a = q.quantize(tf.constant([[0.5, -0.25]]), -1.0, 1.0, tf.quint8)
    with pytest.raises(ValueError, match="List argument 'input_mins' to 'quantized_concat' "
                       "Op with length 1 must match length 2"):
        q.quantized_concat(0, [a.output, a.output], [a.output_min],
                           [a.output_max, a.output_max])
    b = q.quantize(tf.constant([[0.5, -0.25, 1.0]]), -1.0, 1.0, tf.quint8)
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        q.quantized_concat(0, [a.output, b.output], [a.output_min, b.output_min],
                           [a.output_max, b.output_max])
    s = q.quantize(tf.constant([0.5]), -1.0, 1.0, tf.qint8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                       r"support Op 'QuantizedConcat' with these attrs: \[N=2, T=DT_QINT8\]"):
        sess.run(q.quantized_concat(0, [s.output, s.output], [s.output_min] * 2,
                                    [s.output_max] * 2))


def test_quantize_ops_have_no_gradient(graph):
    # as in TF, which registers none: tf.gradients, and so the numeric check, raise
    x = tf.placeholder(tf.float32, [3])
    qx = q.quantize(x, -1.0, 1.0, tf.quint8)
    ys = [qx.output_max, q.dequantize(qx.output, qx.output_min, qx.output_max),
          q.quantized_concat(0, [qx.output], [qx.output_min], [qx.output_max]).output_min]
    for y, op_type in zip(ys, ("QuantizeV2", "Dequantize", "QuantizedConcat")):
        message = r"No gradient defined for operation .*\(op type: %s\)" % op_type
        with pytest.raises(LookupError, match=message):
            compute_gradient_error(x, [3], y, y.shape.as_list(),
                                   x_init_value=np.zeros(3, F32))
