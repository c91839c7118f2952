"""tf.quantization.fake_quant_*: against a NumPy reference of the nudge-and-round formula
written here, hand-computed values at the nudged bounds, NumPy masks for the
straight-through gradients, and numeric gradient checks of the clamp those gradients
stand for.

Checked against TF 2.15 (CPU) on 3.2M inputs (num_bits 2..16, narrow_range both ways,
21 ranges and 12 degenerate ones for the Vars ops, the nudged bounds, their float
neighbours and every tie; per channel up to rank 5): outputs and input gradients bit for
bit, the min/max gradient sums to 1e-8 of sum(|g|), the errors with TF's classes and
messages. Values of TF quoted below: min=1, max=-1 gives 0.9960785 everywhere; min=max=1
gives NaN.
"""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

F32 = np.float32
q = tf.quantization

# --- the reference: the formula of TF's kernels, written out in NumPy ----------------------


def ref_nudge(lo, hi, num_bits, narrow_range):
    """(nudged_min, nudged_max, scale) in float32, as TF's Nudge() computes them."""
    qmin, qmax = (1 if narrow_range else 0), 2 ** num_bits - 1
    lo, hi = F32(lo), F32(hi)
    scale = (hi - lo) / F32(qmax - qmin)
    from_min = F32(qmin) - lo / scale
    zero_point = min(max(math.floor(float(from_min) + 0.5), qmin), qmax)  # ties away from 0
    return F32(qmin - zero_point) * scale, F32(qmax - zero_point) * scale, scale


def ref_fake_quant(x, lo, hi, num_bits, narrow_range):
    """floor((clamp(x) - nudged_min) / scale + 0.5) * scale + nudged_min, in float64 from
    the float32 nudged range; also the fractional step of each x (ties are at 0.5)."""
    nmin, nmax, scale = (float(v) for v in ref_nudge(lo, hi, num_bits, narrow_range))
    steps = (np.clip(x.astype(np.float64), nmin, nmax) - nmin) / scale
    return np.floor(steps + 0.5) * scale + nmin, steps - np.floor(steps)


def ref_masks(x, lo, hi, num_bits, narrow_range):
    """(inside, below, above) the nudged range: where the gradient goes."""
    nmin, nmax, _ = ref_nudge(lo, hi, num_bits, narrow_range)
    return (x >= nmin) & (x <= nmax), x < nmin, x > nmax


RANGES = [(-6.0, 6.0), (-1.0, 1.0), (0.0, 1.0), (-0.1, 0.9), (-2.3, 0.7), (0.5, 2.0),
          (-3.0, -1.0), (-128.0, 127.0), (-1e-3, 1e-3), (-100.3, 57.1)]


def _grid(lo, hi):
    rs = np.random.RandomState(int(abs(lo * 1000 + hi)) % 1000)
    return np.concatenate([np.linspace(lo - 1, hi + 1, 801),
                           rs.uniform(lo - 0.5, hi + 0.5, 400)]).astype(F32)


def _check_against_reference(got, x, lo, hi, num_bits, narrow_range):
    want, frac = ref_fake_quant(x, lo, hi, num_bits, narrow_range)
    nmin, nmax, scale = ref_nudge(lo, hi, num_bits, narrow_range)
    # float32 rounding (of x - nudged_min, in steps) may move a value near a tie across it
    magnitude = max(abs(float(nmin)), abs(float(nmax)))
    rounding = 4 * np.finfo(F32).eps * magnitude / float(scale)  # in steps
    away_from_ties = np.abs(frac - 0.5) > rounding
    tol = 4e-7 * magnitude
    np.testing.assert_allclose(got[away_from_ties], want[away_from_ties], rtol=0, atol=tol)
    steps = (got.astype(np.float64) - float(nmin)) / float(scale)  # every output on the grid
    np.testing.assert_allclose(steps, np.round(steps), rtol=0, atol=rounding)
    assert got.min() >= nmin and got.max() <= nmax


# --- forward ops against the reference -----------------------------------------------------


@pytest.mark.parametrize("narrow_range", [False, True])
def test_args_against_the_reference(sess, narrow_range):
    x = tf.placeholder(tf.float32, [None])
    cases = [(lo, hi, bits) for lo, hi in RANGES for bits in range(2, 17)]
    ys = [q.fake_quant_with_min_max_args(x, min=lo, max=hi, num_bits=bits,
                                         narrow_range=narrow_range) for lo, hi, bits in cases]
    for lo, hi in RANGES:
        values = _grid(lo, hi)
        got = sess.run(ys, {x: values})
        for (c_lo, c_hi, bits), out in zip(cases, got):
            if (c_lo, c_hi) == (lo, hi):
                assert out.dtype == np.float32 and out.shape == values.shape
                _check_against_reference(out, values, lo, hi, bits, narrow_range)


@pytest.mark.parametrize("narrow_range", [False, True])
def test_vars_against_the_reference(sess, narrow_range):
    x = tf.placeholder(tf.float32, [None])
    lo_t, hi_t = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
    ys = {bits: tf.fake_quant_with_min_max_vars(x, lo_t, hi_t, num_bits=bits,
                                                narrow_range=narrow_range)
          for bits in range(2, 17)}
    for lo, hi in RANGES:
        values = _grid(lo, hi)
        got = sess.run(ys, {x: values, lo_t: lo, hi_t: hi})
        for bits, out in got.items():
            _check_against_reference(out, values, lo, hi, bits, narrow_range)


@pytest.mark.parametrize("shape", [[5], [7, 5], [2, 3, 5], [2, 2, 3, 5], [2, 1, 2, 1, 5]])
def test_per_channel_quantizes_each_channel_with_its_range(sess, shape):
    lo = np.array([-6.0, 0.0, -2.3, 0.5, -3.0], F32)
    hi = np.array([6.0, 1.0, 0.7, 2.0, -1.0], F32)
    rs = np.random.RandomState(len(shape))
    x = (rs.uniform(-1.3, 1.3, shape) * np.maximum(np.abs(lo), np.abs(hi))).astype(F32)
    for bits, narrow_range in [(8, False), (4, True), (16, False), (2, True)]:
        got = sess.run(q.fake_quant_with_min_max_vars_per_channel(
            x, lo, hi, num_bits=bits, narrow_range=narrow_range))
        assert got.shape == tuple(shape)
        for c in range(5):
            _check_against_reference(got[..., c].ravel(), x[..., c].ravel(), lo[c], hi[c],
                                     bits, narrow_range)


# --- hand-computed ranges: the nudged bounds, the ties, the gradient masks -----------------

# (min, max, num_bits, narrow_range) -> (nudged_min, nudged_max), worked out by hand with
# a scale of exactly 1 (0.25 for the last), so every value below is exact in float32
HAND = [
    ((0.0, 255.0, 8, False), (0.0, 255.0)),  # zero point 0
    ((-128.0, 127.0, 8, False), (-128.0, 127.0)),  # zero point 128
    ((-1.0, 2.0, 2, False), (-1.0, 2.0)),
    ((-0.25, 2.75, 2, False), (0.0, 3.0)),  # zero point 0.25 rounds to 0: range moves up
    ((-0.75, 2.25, 2, False), (-1.0, 2.0)),  # 0.75 rounds to 1: range moves down
    ((-0.5, 2.5, 2, False), (-1.0, 2.0)),  # 0.5: away from zero (np.rint would give 0)
    ((-1.0, 1.0, 2, True), (-1.0, 1.0)),  # narrow: levels 1..3, zero point 2
    ((0.5, 3.5, 2, False), (0.0, 3.0)),  # min > 0: zero point clamps to 0
    ((-3.5, -0.5, 2, False), (-3.0, 0.0)),  # max < 0: zero point clamps to 3
    ((-2.0, 1.75, 4, False), (-2.0, 1.75)),  # 16 levels, scale 0.25
]


@pytest.mark.parametrize("case,bounds", HAND, ids=[str(c) for c, _ in HAND])
def test_nudged_bounds_by_hand(sess, case, bounds):
    lo, hi, bits, narrow_range = case
    nmin, nmax = bounds
    step = 0.25 if bits == 4 else 1.0
    assert ref_nudge(*case)[:2] == (nmin, nmax)  # the reference agrees with the hand
    x = np.array([nmin - step, nmin, nmin + 0.5 * step, nmin + 0.4 * step, nmax,
                  nmax + 1.0], F32)
    want = [nmin, nmin, nmin + step, nmin, nmax, nmax]  # the tie goes up
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], F32)
    kw = dict(num_bits=bits, narrow_range=narrow_range)
    got = sess.run([
        q.fake_quant_with_min_max_args(x, min=lo, max=hi, **kw),
        q.fake_quant_with_min_max_vars(x, lo, hi, **kw),
        q.fake_quant_with_min_max_vars_per_channel(x[:, None], [lo], [hi], **kw),
        q.fake_quant_with_min_max_args_gradient(g, x, min=lo, max=hi, **kw),
        q.fake_quant_with_min_max_vars_gradient(g, x, lo, hi, **kw),
        q.fake_quant_with_min_max_vars_per_channel_gradient(g[:, None], x[:, None], [lo],
                                                            [hi], **kw)])
    for out in got[:2]:
        assert out.tolist() == want
    assert got[2][:, 0].tolist() == want
    inside = [0.0, 2.0, 3.0, 4.0, 5.0, 0.0]  # both bounds belong to the range
    assert got[3].tolist() == inside
    assert got[4].backprops_wrt_input.tolist() == inside
    assert (got[4].backprop_wrt_min, got[4].backprop_wrt_max) == (1.0, 6.0)
    assert got[5].backprops_wrt_input[:, 0].tolist() == inside
    assert (got[5].backprop_wrt_min.tolist(), got[5].backprop_wrt_max.tolist()) == \
        ([1.0], [6.0])


def test_default_range_is_minus_six_to_six(sess):
    y = q.fake_quant_with_min_max_args([-7.0, 0.0, 7.0])
    assert (y.op.get_attr("min"), y.op.get_attr("max")) == (-6.0, 6.0)
    assert y.op.get_attr("num_bits") == 8 and y.op.get_attr("narrow_range") is False
    nmin, nmax, _ = ref_nudge(-6.0, 6.0, 8, False)
    assert sess.run(y).tolist() == [nmin, 0.0, nmax]


def test_nan_and_infinite_inputs(sess):
    x = np.array([np.nan, np.inf, -np.inf, -0.0], F32)
    nmin, nmax, _ = ref_nudge(-1.0, 1.0, 8, False)
    y, dx = sess.run([q.fake_quant_with_min_max_args(x, -1.0, 1.0),
                      q.fake_quant_with_min_max_args_gradient(np.ones(4, F32), x, -1.0, 1.0)])
    assert np.isnan(y[0]) and y[1:].tolist() == [nmax, nmin, 0.0]
    assert dx.tolist() == [0.0, 0.0, 0.0, 1.0]


# --- the Vars ops at run time: any min and max, as TF ---------------------------------------


def test_vars_with_min_above_max_or_empty_range_as_tf(sess):
    x = np.linspace(-3, 3, 13).astype(F32)
    lo_t, hi_t = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
    y = q.fake_quant_with_min_max_vars(x, lo_t, hi_t)
    grads = q.fake_quant_with_min_max_vars_gradient(np.ones(13, F32), x, lo_t, hi_t)

    def run(lo, hi):
        return sess.run([y, grads], {lo_t: lo, hi_t: hi})
    # min > max: a negative scale; every x clamps to nudged_min (TF: 0.9960785, i.e.
    # 127 * 2/255: the float32 2/255 puts the zero point at 127, not 128)
    out, g = run(1.0, -1.0)
    assert out.tolist() == [F32(127) * F32(2.0 / 255)] * 13
    nmin, nmax, _ = ref_nudge(1.0, -1.0, 8, False)
    assert g.backprops_wrt_input.tolist() == [0.0] * 13  # never >= nmin and <= nmax
    assert g.backprop_wrt_min == np.sum(x < nmin) and g.backprop_wrt_max == np.sum(x > nmax)
    assert run(2.0, -1.0)[0].tolist() == [2.0] * 13
    out = run(-1.0, -3.0)[0]  # zero point 0, nudged [0, -2]: -0.0 (scale < 0), as TF
    assert out.tolist() == [0.0] * 13 and np.all(np.signbit(out))
    # min == max == 0: no range yet, zeros out and the gradient passes through
    out, g = run(0.0, 0.0)
    assert out.tolist() == [0.0] * 13 and g.backprops_wrt_input.tolist() == [1.0] * 13
    assert (g.backprop_wrt_min, g.backprop_wrt_max) == (0.0, 0.0)
    assert np.all(np.isnan(run(1.0, 1.0)[0]))  # a zero scale otherwise: NaN, as TF


def test_per_channel_zero_range_channel_passes_the_gradient(sess):
    x = np.array([[0.3, 0.3, 0.3], [-2.0, 0.5, 2.0]], F32)
    g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], F32)
    lo, hi = [0.0, -1.0, 0.0], [0.0, 1.0, 1.0]
    y, grads = sess.run([q.fake_quant_with_min_max_vars_per_channel(x, lo, hi),
                         q.fake_quant_with_min_max_vars_per_channel_gradient(g, x, lo, hi)])
    assert y[:, 0].tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(y[:, 1:], sess.run(
        q.fake_quant_with_min_max_vars_per_channel(x[:, 1:], lo[1:], hi[1:])))
    assert grads.backprops_wrt_input.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]
    assert grads.backprop_wrt_min.tolist() == [0.0, 0.0, 0.0]
    assert grads.backprop_wrt_max.tolist() == [0.0, 0.0, 6.0]


# --- the gradient ops against NumPy masks --------------------------------------------------


@pytest.mark.parametrize("narrow_range", [False, True])
def test_gradient_ops_against_numpy_masks(sess, narrow_range):
    rs = np.random.RandomState(3)
    for (lo, hi), bits in zip(RANGES, [8, 2, 5, 16, 8, 3, 8, 7, 12, 8]):
        x = _grid(lo, hi)
        g = rs.uniform(-1, 1, x.shape).astype(F32)
        inside, below, above = ref_masks(x, lo, hi, bits, narrow_range)
        kw = dict(num_bits=bits, narrow_range=narrow_range)
        dx, grads = sess.run([q.fake_quant_with_min_max_args_gradient(g, x, lo, hi, **kw),
                              q.fake_quant_with_min_max_vars_gradient(g, x, lo, hi, **kw)])
        np.testing.assert_array_equal(dx, np.where(inside, g, 0))
        np.testing.assert_array_equal(grads.backprops_wrt_input, np.where(inside, g, 0))
        np.testing.assert_allclose(grads.backprop_wrt_min, g[below].sum(dtype=np.float64),
                                   atol=1e-5)
        np.testing.assert_allclose(grads.backprop_wrt_max, g[above].sum(dtype=np.float64),
                                   atol=1e-5)


def test_per_channel_gradient_against_numpy_masks(sess):
    lo = np.array([-6.0, 0.0, -2.3, 0.5], F32)
    hi = np.array([6.0, 1.0, 0.7, 2.0], F32)
    rs = np.random.RandomState(5)
    x = (rs.uniform(-1.4, 1.4, [3, 5, 4]) * np.maximum(np.abs(lo), np.abs(hi))).astype(F32)
    g = rs.uniform(-1, 1, x.shape).astype(F32)
    got = sess.run(q.fake_quant_with_min_max_vars_per_channel_gradient(g, x, lo, hi,
                                                                       num_bits=6))
    for c in range(4):
        inside, below, above = ref_masks(x[..., c], lo[c], hi[c], 6, False)
        np.testing.assert_array_equal(got.backprops_wrt_input[..., c],
                                      np.where(inside, g[..., c], 0))
        np.testing.assert_allclose(got.backprop_wrt_min[c], g[..., c][below].sum(), atol=1e-5)
        np.testing.assert_allclose(got.backprop_wrt_max[c], g[..., c][above].sum(), atol=1e-5)


def test_tf_gradients_build_the_gradient_ops(sess):
    x = tf.placeholder(tf.float32, [5])
    lo, hi = tf.constant(-1.0), tf.constant(1.0)
    y_args = q.fake_quant_with_min_max_args(x, -1.0, 1.0, num_bits=5, narrow_range=True)
    y_vars = q.fake_quant_with_min_max_vars(x, lo, hi, num_bits=5, narrow_range=True)
    grad_args = tf.gradients(y_args, x)[0]
    grad_vars = tf.gradients(y_vars, [x, lo, hi])
    assert grad_args.op.type == "FakeQuantWithMinMaxArgsGradient"
    assert grad_args.op.name == "gradients/FakeQuantWithMinMaxArgs_grad/" \
                                "FakeQuantWithMinMaxArgsGradient"
    assert [grad_args.op.get_attr(k) for k in ("min", "max", "num_bits", "narrow_range")] \
        == [-1.0, 1.0, 5, True]
    assert {t.op.type for t in grad_vars} == {"FakeQuantWithMinMaxVarsGradient"}
    assert [t.value_index for t in grad_vars] == [0, 1, 2]
    values = np.array([-2.0, -1.0, 0.3, 1.0, 3.0], F32)
    got = sess.run([grad_args] + grad_vars, {x: values})
    assert got[0].tolist() == got[1].tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert (got[2], got[3]) == (1.0, 1.0)


def test_quantization_aware_training_moves_min_and_max(sess):
    # TF1 QAT keeps min and max in (reference) variables trained with the model
    x = tf.constant([-3.0, -0.5, 0.25, 2.0, 5.0])
    lo, hi = tf.Variable(-2.0), tf.Variable(1.75)
    loss = tf.reduce_sum(tf.fake_quant_with_min_max_vars(x, lo, hi, num_bits=4))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    sess.run(tf.global_variables_initializer())
    assert sess.run(loss) == -2.0 - 0.5 + 0.25 + 1.75 + 1.75
    sess.run(train)
    # one value below the range, two above: d loss / d min = 1, d loss / d max = 2
    assert sess.run([lo, hi]) == [-2.5, 0.75]


# --- numeric gradient checks: the straight-through gradient is the clamp's derivative ------


def _straight_through(quantized, clamped):
    """Forward: the clamp (smooth enough for central differences); backward: the op's
    registered gradient (the clamp term is cut off by stop_gradient)."""
    return quantized + tf.stop_gradient(clamped - quantized)


# x at least 0.05 from the bounds of [-2, 1.75] (exact nudging at num_bits=4), both sides
_X = np.array([[-2.6, -1.3, 0.2], [1.1, 2.4, -0.05]], F32)


def test_args_gradient_is_the_clamps_derivative(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    y = _straight_through(q.fake_quant_with_min_max_args(x, -2.0, 1.75, num_bits=4),
                          tf.clip_by_value(x, -2.0, 1.75))
    err = compute_gradient_error(x, [2, 3], y, [2, 3], x_init_value=_X)
    assert err < 2e-3


def test_vars_gradient_is_the_clamps_derivative(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    lo, hi = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
    y = _straight_through(q.fake_quant_with_min_max_vars(x, lo, hi, num_bits=4),
                          tf.minimum(tf.maximum(x, lo), hi))
    err = compute_gradient_error([x, lo, hi], [[2, 3], [], []], y, [2, 3],
                                 x_init_value=[_X, F32(-2.0), F32(1.75)])
    assert err < 2e-3


def test_per_channel_gradient_is_the_clamps_derivative(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    lo, hi = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [3])
    y = _straight_through(q.fake_quant_with_min_max_vars_per_channel(x, lo, hi, num_bits=4),
                          tf.minimum(tf.maximum(x, lo), hi))
    lo_value = np.array([-2.0, -2.0, -1.0], F32)  # -1 .. 0.875 is also exact at 4 bits
    hi_value = np.array([1.75, 1.75, 0.875], F32)
    err = compute_gradient_error([x, lo, hi], [[2, 3], [3], [3]], y, [2, 3],
                                 x_init_value=[_X, lo_value, hi_value])
    assert err < 2e-3


def test_gradient_ops_have_no_gradient(graph):
    # as in TF, which registers none: tf.gradients, and so the numeric check, raise
    g, x = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [3])
    ys = [q.fake_quant_with_min_max_args_gradient(g, x),
          q.fake_quant_with_min_max_vars_gradient(g, x, -1.0, 1.0).backprops_wrt_input,
          q.fake_quant_with_min_max_vars_per_channel_gradient(g, x, [-1.0] * 3, [1.0] * 3)
          .backprop_wrt_min]
    for y in ys:
        message = r"No gradient defined for operation .*\(op type: %s\)" % y.op.type
        with pytest.raises(LookupError, match=message):
            tf.gradients(y, g)
        with pytest.raises(LookupError, match=message):
            compute_gradient_error(g, [3], y, [3], x_init_value=np.ones(3, F32))


# --- errors: TF checks the attrs when the op runs, the shapes when it is built -------------


def test_attrs_are_checked_when_the_op_runs(sess):
    x = tf.constant([0.5])
    bad = [q.fake_quant_with_min_max_args(x, min=2.0, max=1.5),
           q.fake_quant_with_min_max_args_gradient(x, x, min=1.0, max=1.0),
           q.fake_quant_with_min_max_args(x, min=1.0, max=0.0, num_bits=1),
           q.fake_quant_with_min_max_args(x, num_bits=1),
           q.fake_quant_with_min_max_vars(x, -1.0, 1.0, num_bits=17),
           q.fake_quant_with_min_max_vars_gradient(x, x, -1.0, 1.0, num_bits=1).backprop_wrt_min,
           q.fake_quant_with_min_max_vars_per_channel(x, [-1.0], [1.0], num_bits=17)]
    messages = ["min has to be smaller than max, was: 2 >= 1.5",
                "min has to be smaller than max, was: 1 >= 1",
                "min has to be smaller than max, was: 1 >= 0"] + \
        ["num_bits must be between 2 and 16, inclusive"] * 4
    for y, message in zip(bad, messages):  # the graph builds; the run fails
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(y)
    for bits in (2, 16):
        sess.run(q.fake_quant_with_min_max_args(x, num_bits=bits))


def test_static_shapes_and_their_errors(graph):
    def ph(shape):
        return tf.placeholder(tf.float32, shape)
    assert q.fake_quant_with_min_max_args(ph([None, 3])).shape.as_list() == [None, 3]
    # TF's gradient op takes the gradients' shape without merging (the run checks)
    assert q.fake_quant_with_min_max_args_gradient(ph([2]), ph([2, 3])).shape.as_list() == [2]
    grads = q.fake_quant_with_min_max_vars_gradient(ph([None, 3]), ph([2, None]), 0.0, 1.0)
    assert [t.shape.as_list() for t in grads] == [[2, 3], [], []]
    assert q.fake_quant_with_min_max_vars_per_channel(
        ph([2, None]), [0.0] * 3, [1.0] * 3).shape.as_list() == [2, None]
    grads = q.fake_quant_with_min_max_vars_per_channel_gradient(ph([2, None]), ph([None, 3]),
                                                                ph(None), [1.0] * 3)
    assert [t.shape.as_list() for t in grads] == [[2, 3], [3], [3]]
    grads = q.fake_quant_with_min_max_vars_per_channel_gradient(ph(None), ph(None), ph(None),
                                                                ph(None))
    assert grads[0].shape.ndims is None and grads[1].shape.as_list() == [None]
    failing = [
        (lambda: q.fake_quant_with_min_max_vars(ph([3]), [0.0], 1.0),
         "Shape must be rank 0 but is rank 1"),
        (lambda: q.fake_quant_with_min_max_vars_gradient(ph([3]), ph([3]), 0.0, [1.0]),
         "Shapes must be equal rank, but are 0 and 1"),
        (lambda: q.fake_quant_with_min_max_vars_gradient(ph([2, 3]), ph([3, 3]), 0.0, 1.0),
         r"Dimension 0 in both shapes must be equal, but are 2 and 3"),
        (lambda: q.fake_quant_with_min_max_vars_per_channel(ph([]), [0.0], [1.0]),
         "Shape must be at least rank 1 but is rank 0"),
        (lambda: q.fake_quant_with_min_max_vars_per_channel(ph([2, 3]), 0.0, [1.0] * 3),
         "Shape must be rank 1 but is rank 0"),
        (lambda: q.fake_quant_with_min_max_vars_per_channel(ph([2, 3]), [0.0] * 2, [1.0] * 2),
         "Dimensions must be equal, but are 3 and 2"),
        (lambda: q.fake_quant_with_min_max_vars_per_channel(ph([2, None]), [0.0] * 2,
                                                            [1.0] * 3),
         "Dimensions must be equal, but are 2 and 3"),
        (lambda: q.fake_quant_with_min_max_vars_per_channel_gradient(
            ph([1, 1, 1, 1, 3]), ph(None), [0.0] * 3, [1.0] * 3),
         "Shape must be at most rank 4 but is rank 5"),
        (lambda: q.fake_quant_with_min_max_vars_per_channel_gradient(
            ph([2, 3]), ph([2, 3]), [0.0] * 2, [1.0] * 2),
         r"but are 2 and 3. Shapes are \[2\] and \[3\]"),
    ]
    for build, message in failing:
        with pytest.raises(ValueError, match=message):
            build()


def test_shapes_are_checked_when_the_op_runs(sess):
    x, g = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    lo, hi = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    cases = [
        (q.fake_quant_with_min_max_vars(x, lo, hi), {x: [0.0], lo: [-1.0], hi: 1.0},
         "`min` must be rank 0 but is rank 1"),
        (q.fake_quant_with_min_max_vars_gradient(g, x, lo, hi)[0],
         {g: [1.0], x: [0.0], lo: -1.0, hi: [1.0]}, "`max` must be rank 0 but is rank 1"),
        (q.fake_quant_with_min_max_vars_gradient(g, x, lo, hi)[0],
         {g: [1.0, 1.0], x: [0.0], lo: -1.0, hi: 1.0},
         "gradient and input must be the same size"),
        (q.fake_quant_with_min_max_args_gradient(g, x), {g: [[1.0, 1.0]], x: [0.0, 0.0]},
         r"must have the same size and shape.  Input 0: \[1,2\] != input 1: \[2\]"),
        (q.fake_quant_with_min_max_vars_per_channel(x, lo, hi),
         {x: [[0.0, 0.0, 0.0]], lo: [-1.0, 1.0], hi: [1.0, 2.0, 3.0]},
         "min has incorrect size, expected 3 was 2"),
        (q.fake_quant_with_min_max_vars_per_channel(x, lo, hi),
         {x: [[0.0, 0.0, 0.0]], lo: [[-1.0, 1.0, 1.0]], hi: [1.0, 2.0, 3.0]},
         "`min` must be rank 1 but is rank 2"),
        (q.fake_quant_with_min_max_vars_per_channel(x, lo, hi), {x: 0.0, lo: [0.0], hi: [1.0]},
         "`inputs` must be rank at least 1 but is rank 0"),  # TF aborts the process here
        (q.fake_quant_with_min_max_vars_per_channel_gradient(g, x, lo, hi)[0],
         {g: [[0.0, 0.0, 0.0]], x: [[0.0, 0.0, 0.0]], lo: [0.0] * 3, hi: [1.0, 2.0]},
         "max has incorrect size, expected 3 was 2"),
    ]
    for y, feed, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(y, feed)
    # a scalar and an empty input are fine
    y = q.fake_quant_with_min_max_vars(x, lo, hi)
    assert sess.run(y, {x: 0.3, lo: -1.0, hi: 1.0}) == ref_fake_quant(
        np.array([0.3], F32), -1.0, 1.0, 8, False)[0][0].astype(F32)
    grads = q.fake_quant_with_min_max_vars_per_channel_gradient(g, x, lo, hi)
    got = sess.run(grads, {g: np.zeros([0, 2]), x: np.zeros([0, 2]), lo: [-1.0, 0.0],
                           hi: [1.0, 1.0]})
    assert got[0].shape == (0, 2) and got[1].tolist() == got[2].tolist() == [0.0, 0.0]


def test_arguments_are_converted_as_tf(graph):
    y = q.fake_quant_with_min_max_args([1, 2], min=-1, max=3, num_bits=8.0)
    assert y.dtype == tf.float32 and y.op.get_attr("min") == -1.0
    assert y.op.get_attr("num_bits") == 8
    assert q.fake_quant_with_min_max_args([1.0], min=0.1).op.get_attr("min") == float(F32(0.1))
    assert q.fake_quant_with_min_max_args([1.0], min=None, narrow_range=None) \
        .op.get_attr("narrow_range") is False
    with pytest.raises(TypeError, match="has type float64 that does not match expected type "
                                        "of float32"):
        q.fake_quant_with_min_max_args(tf.constant([1.0], tf.float64))
    with pytest.raises(TypeError, match="Input 'min' of 'FakeQuantWithMinMaxVars' Op has "
                                        "type int32"):
        q.fake_quant_with_min_max_vars([1.0], tf.constant(0), 1.0)
    with pytest.raises(TypeError, match="Expected int for argument 'num_bits' not '8'."):
        q.fake_quant_with_min_max_args([1.0], num_bits="8")
    with pytest.raises(TypeError, match="Expected float for argument 'min' not 'a'."):
        q.fake_quant_with_min_max_args([1.0], min="a")
    with pytest.raises(TypeError, match="Expected bool for argument 'narrow_range' not 1."):
        q.fake_quant_with_min_max_vars([1.0], 0.0, 1.0, narrow_range=1)


def test_names_outputs_and_aliases(graph):
    x = tf.placeholder(tf.float32, [3])
    assert q.fake_quant_with_min_max_args(x).op.name == "FakeQuantWithMinMaxArgs"
    assert q.fake_quant_with_min_max_args(x, name="fq").op.name == "fq"
    y = q.fake_quant_with_min_max_vars(x, -1.0, 1.0)
    assert [t.name for t in y.op.inputs[1:]] == ["FakeQuantWithMinMaxVars/min:0",
                                                 "FakeQuantWithMinMaxVars/max:0"]
    for fn in (q.fake_quant_with_min_max_vars_gradient,
               q.fake_quant_with_min_max_vars_per_channel_gradient):
        out = fn(x, x, [-1.0] * 3 if "channel" in fn.__name__ else -1.0,
                 [1.0] * 3 if "channel" in fn.__name__ else 1.0)
        assert type(out).__name__ == out[0].op.type
        assert out._fields == ("backprops_wrt_input", "backprop_wrt_min", "backprop_wrt_max")
    for name in ("args", "args_gradient", "vars", "vars_gradient", "vars_per_channel",
                 "vars_per_channel_gradient"):
        full = "fake_quant_with_min_max_" + name
        assert getattr(tf, full) is getattr(tf.quantization, full)
