"""tf.quantization.quantize_and_dequantize(_v2): against a NumPy reference of the scale
rule written here, values recorded from TF 2.21 (CPU) quoted as literals, masks for the
two gradients and numeric checks of the clamp they stand for. The probe behind them
compared 7 ranges x 500 random inputs x 32 attr combinations, per-axis ranges and the
errors with TF.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

F32 = np.float32
q = tf.quantization
X = np.array([-1.5, -1.0, -0.5, -0.25, 0.0, 0.1, 0.5, 0.75, 1.0, 2.0, 3.7, 6.0, 7.0, 0.3333,
              -0.3333, 2.5], F32)


def ref_quantize_dequantize(x, lo, hi, num_bits=8, signed=True, narrow=False,
                            range_given=True, half_up=False):
    """The largest scale keeping 0 at 0 that maps [lo, hi] into the levels, in float64."""
    if signed:
        low_level = -2 ** (num_bits - 1) + (1 if narrow else 0)
        high_level = 2 ** (num_bits - 1) - 1
    else:
        low_level, high_level = 0, 2 ** num_bits - 1
    from_min = low_level / lo if low_level * lo > 0 else np.inf
    from_max = high_level / hi if high_level * hi > 0 else np.inf
    if from_min < from_max:
        scale, lo, hi = from_min, lo, high_level * lo / low_level
    else:
        scale, lo, hi = from_max, low_level * hi / high_level, hi
    if range_given:
        x = np.clip(x, lo, hi)
    levels = np.floor(x * scale + 0.5) if half_up else np.rint(x * scale)
    return levels / scale


@pytest.mark.parametrize("num_bits,signed,narrow", [(8, True, False), (8, True, True),
                                                     (4, False, False), (3, True, False)])
def test_given_range_against_the_scale_rule(sess, num_bits, signed, narrow):
    x = np.linspace(-2.2, 6.6, 89).astype(F32) + F32(1e-3)  # away from the ties
    for fn in (q.quantize_and_dequantize, q.quantize_and_dequantize_v2):
        for half_up in (False, True):
            out = sess.run(fn(x, -1.0, 6.0, signed_input=signed, num_bits=num_bits,
                              range_given=True, narrow_range=narrow,
                              round_mode="HALF_UP" if half_up else "HALF_TO_EVEN"))
            ref = ref_quantize_dequantize(x, -1.0, 6.0, num_bits, signed, narrow, True,
                                          half_up)
            np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_input_range_and_per_axis_ranges(sess):
    x = np.random.RandomState(0).uniform(-3, 5, (4, 6)).astype(F32)
    out = sess.run(q.quantize_and_dequantize_v2(x, 0.0, 0.0, num_bits=5))
    np.testing.assert_allclose(out, ref_quantize_dequantize(x, x.min(), x.max(), 5,
                                                            range_given=False), atol=1e-6)
    per_column = sess.run(q.quantize_and_dequantize(x, [0.0] * 6, [0.0] * 6, num_bits=5,
                                                    axis=1))
    for j in range(6):
        col = x[:, j]
        np.testing.assert_allclose(per_column[:, j], ref_quantize_dequantize(
            col, col.min(), col.max(), 5, range_given=False), atol=1e-6)


def test_values_recorded_from_tf(sess):
    x = tf.constant(X)
    got = sess.run([q.quantize_and_dequantize_v2(x, -1.0, 6.0, range_given=True, num_bits=4),
                    q.quantize_and_dequantize(x, -1.0, 6.0, range_given=True, num_bits=3,
                                              narrow_range=True),
                    q.quantize_and_dequantize(tf.constant([0.0, 0.0]), 0.0, 0.0,
                                              range_given=True),
                    q.quantize_and_dequantize(x, -7.77, -7.0, range_given=True,
                                              signed_input=False)])
    np.testing.assert_allclose(got[0], [-1.714286, -0.857143, -0.857143, 0.0, 0.0, 0.0,
                                        0.857143, 0.857143, 0.857143, 1.714286, 3.428571, 6.0,
                                        6.0, 0.0, 0.0, 2.571429], atol=1e-6)
    np.testing.assert_allclose(got[1], [-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0,
                                        4.0, 6.0, 6.0, 0.0, 0.0, 2.0], atol=1e-6)
    # a zero range: scale FLT_MAX times 0 (and 0.0 is not clamped to -0.0)
    assert np.signbit(got[2]).tolist() == [False, False]
    # no level above 0 for a range below it, unsigned: every value ends at +-0
    assert np.all(got[3] == 0.0)


def test_v2_gradient_passes_through_and_v4_gradient_is_masked(sess):
    x = tf.constant(X)
    w = np.arange(16, dtype=F32)
    grads = sess.run([tf.gradients(tf.reduce_sum(fn(x, -1.0, 2.0, range_given=given) * w),
                                   x)[0]
                      for fn, given in ((q.quantize_and_dequantize, True),
                                        (q.quantize_and_dequantize_v2, True),
                                        (q.quantize_and_dequantize_v2, False))])
    np.testing.assert_array_equal(grads[0], w)
    inside = (X >= -1.0) & (X <= 2.0)  # the given bounds, even when range_given is False
    np.testing.assert_array_equal(grads[1], w * inside)
    np.testing.assert_array_equal(grads[2], w * inside)
    lo, hi = tf.constant(-1.0), tf.constant(2.0)
    g_lo, g_hi = tf.gradients(tf.reduce_sum(q.quantize_and_dequantize_v2(x, lo, hi)), [lo, hi])
    assert sess.run([g_lo, g_hi]) == [0.0, 0.0]


def _straight_through(quantized, clamped):
    """Forward: the clamp (smooth enough for central differences); backward: the op's
    registered gradient (the clamp term is cut off by stop_gradient)."""
    return quantized + tf.stop_gradient(clamped - quantized)


# x at least 0.05 from the bounds -1 and 2
_X = np.array([[-2.6, -0.7, 0.2], [1.1, 2.4, -0.05]], F32)


def test_quantize_and_dequantize_gradient_is_the_identitys(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    y = _straight_through(q.quantize_and_dequantize(x, -1.0, 2.0, range_given=True), x)
    assert compute_gradient_error(x, [2, 3], y, [2, 3], x_init_value=_X) < 2e-3


def test_quantize_and_dequantize_v2_gradient_is_the_clamps_derivative(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    y = _straight_through(q.quantize_and_dequantize_v2(x, -1.0, 2.0, range_given=True),
                          tf.clip_by_value(x, -1.0, 2.0))
    assert compute_gradient_error(x, [2, 3], y, [2, 3], x_init_value=_X) < 2e-3


def test_v4_gradient_op_has_no_gradient(graph):
    # as in TF, which registers none: tf.gradients, and so the numeric check, raise
    x = tf.placeholder(tf.float32, [3])
    g = tf.gradients(q.quantize_and_dequantize_v2(x, -1.0, 1.0), x)[0]
    with pytest.raises(LookupError, match=r"\(op type: QuantizeAndDequantizeV4Grad\)"):
        compute_gradient_error(x, [3], g, [3], x_init_value=np.zeros(3, F32))


def test_errors(sess):
    x = tf.constant([1.0])
    with pytest.raises(ValueError, match="Attr 'round_mode' of 'QuantizeAndDequantizeV2' Op "
                       "passed string 'X' not in"):
        q.quantize_and_dequantize(x, -1.0, 1.0, round_mode="X")
    with pytest.raises(TypeError, match="Expected bool for argument 'range_given' not 1"):
        q.quantize_and_dequantize(x, -1.0, 1.0, range_given=1)
    ones = tf.ones([2, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        q.quantize_and_dequantize_v2(ones, [-1.0] * 2, [1.0] * 2, axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid range: input_min 2 > "
                       "input_max -1"):
        sess.run(q.quantize_and_dequantize(x, 2.0, -1.0, range_given=True))
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_bits is out of range: 0 "
                       "with signed_input_ 1"):
        sess.run(q.quantize_and_dequantize(x, -1.0, 1.0, num_bits=0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_bits is out of range: 63 "
                       "with signed_input_ 0"):
        sess.run(q.quantize_and_dequantize_v2(x, -1.0, 1.0, num_bits=63, signed_input=False))
    # TF 2.21 takes only a scalar range as given, even with `axis`
    with pytest.raises(tf.errors.InvalidArgumentError, match="input_min must be a scalar"):
        sess.run(q.quantize_and_dequantize(ones, [-1.0] * 3, [1.0] * 3, range_given=True,
                                           axis=1))
    half = tf.constant([0.5], tf.float16)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to "
                       r"support Op 'QuantizeAndDequantizeV4' with these attrs: \[T=DT_HALF"):
        sess.run(q.quantize_and_dequantize_v2(half, tf.constant(-1.0, tf.float16),
                                              tf.constant(1.0, tf.float16), range_given=True))
