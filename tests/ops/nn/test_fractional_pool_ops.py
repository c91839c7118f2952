"""tf.nn.fractional_max_pool / fractional_avg_pool and their gradient ops
(ops/nn/fractional_pool_ops.py): the pooling sequences and outputs against TensorFlow
2.21's for the same seeds, outputs and gradients against TF's for the same sequences
(bit for bit) and against a loop-by-loop reference, the structure of the drawn
sequences, seeds, numeric gradient checks, static shapes and TF's errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework.op_builder import apply_op
from tensorweave.ops.nn import fractional_pool_ops
from tensorweave.ops.random import philox
from tensorweave.runtime import determinism


def _ties(shape, dtype):
    """Quarters from -2.75 to 2.75: many ties within a cell."""
    return ((((np.arange(np.prod(shape)) * 37) % 23) - 11) / 4).reshape(shape).astype(dtype)


def _quarters(shape, dtype):
    return (((np.arange(np.prod(shape)) * 37) % 23) - 11).reshape(shape).astype(dtype)


def _smooth(shape, dtype):
    """Values in [-3, 3) whose float32 sums round."""
    n = int(np.prod(shape))
    return (((np.arange(n) * 7919) % 1009) / 1009 * 6 - 3).reshape(shape).astype(dtype)


def _weights(shape, dtype):
    """The output gradient: d(sum(output * weights)) / d(value) is what is recorded."""
    n = int(np.prod(shape))
    return ((((np.arange(n) * 13) % 11) - 5) * 0.3).reshape(shape).astype(dtype)


# TensorFlow 2.21: tf.compat.v1.nn.fractional_{max,avg}_pool(value, pooling_ratio,
# pseudo_random, overlapping, deterministic=True, seed, seed2) -> rows, cols, output, and
# tf.gradients(reduce_sum(output * _weights), value) (both ops drew the same sequences)
TIES_OVERLAPPING = dict(
    value=_ties((1, 5, 7, 2), np.float32), pooling_ratio=[1.0, 1.44, 1.73, 1.0],
    pseudo_random=True, overlapping=True,
    rows=[0, 1, 3, 5], cols=[0, 2, 4, 5, 7],
    max_output=[
        2.75, 2.0, 2.75, 1.75, 2.25, 1.25, 2.0, 2.5, 2.75, 2.25, 2.75, 2.0, 2.5, 1.5, 2.25, 2.75,
        1.75, 2.5, 2.75, 2.0, 2.75, 1.75, 2.25, 1.75],
    max_grad=[
        0.0, 0.0, 0.0, -0.9, 0.0, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0, 1.5, 0.0, -0.6, 0.0, 0.0, 0.0, 0.0,
        -0.5999999, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, -1.2, 0.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.0,
        0.0, 0.0, -0.9, 0.0, 0.0, -0.3, 0.0, 0.9, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 0.0, -1.5, 0.0,
        0.0, 0.0, 0.0, -1.2, 0.0, 0.0, 0.0, 0.0, -1.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.30000007, 0.0, 0.0],
    avg_output=[
        0.0, -0.33333334, 0.5833333, -0.7083333, 0.0625, -0.75, -0.125, 0.5, 0.027777778,
        -0.30555555, -0.027777778, -0.3611111, 0.25, -1.0416666, 0.5416667, 0.20833333, -0.5833333,
        0.041666668, 0.0, -0.33333334, 0.4375, -0.375, 0.25, -0.5625],
    avg_grad=[
        -0.25, -0.14999999, -0.25, -0.14999999, -0.3, -0.099999994, -0.05, 0.05, 0.175, 0.425,
        -0.07500002, 0.225, -0.3, -0.15, -0.25, -0.08333333, -0.25, -0.08333333, -0.16666666,
        -0.19999999, 0.083333336, -0.11666667, 0.15833333, 0.20833333, -0.17500001, 0.325, -0.25,
        -9.934108e-09, 0.0, 0.06666667, 0.0, 0.06666667, 0.13333334, -0.099999994, 0.13333334,
        -0.16666667, -0.016666658, -0.21666667, -0.099999994, 0.099999994, 0.05, 0.14999999, 0.25,
        -0.13333334, 0.25, -0.13333334, 0.28333333, -0.3, 0.033333335, -0.16666667, 0.033333346,
        0.08333334, -0.325, 0.17500001, -0.325, -0.074999996, 0.25, -0.2, 0.25, -0.2, 0.14999999,
        -0.2, -0.1, 0.0, 0.05, 0.3, -0.225, 0.07500002, -0.375, -0.225],
)

TIES_DISJOINT = dict(
    value=_ties((1, 5, 7, 2), np.float32), pooling_ratio=[1.0, 1.44, 1.73, 1.0],
    pseudo_random=False, overlapping=False,
    rows=[0, 2, 4, 5], cols=[0, 2, 4, 5, 7],
    max_output=[
        1.5, 2.0, 2.75, 1.75, 2.25, 0.0, 2.0, 2.5, 1.75, 2.25, 1.25, 2.0, 2.5, 0.25, 2.25, 2.75,
        -1.0, 2.5, 1.5, -0.75, 2.75, 0.5, -0.5, 1.75],
    max_grad=[
        0.0, 0.0, 0.0, -0.9, 0.0, 0.0, 0.0, 0.0, 0.9, 1.5, 0.0, 0.0, 0.0, -0.6, 0.0, 0.0, -1.5,
        0.0, -0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, -1.2, 0.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.0, 1.2,
        0.0, -0.9, -0.3, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.5, 0.0, 0.0,
        0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 1.5, -1.2, 0.0, 0.0, -0.6, 0.0, 0.6, 1.2, 0.0, -0.9, -1.5,
        0.0],
    avg_output=[
        -0.625, 0.0, 0.4375, -0.375, 0.875, -1.375, -0.125, 0.5, -0.375, 0.25, -0.75, -0.125,
        1.125, -1.125, 0.125, 0.75, -1.625, 1.875, 0.875, -1.375, 2.75, 0.5, -1.125, -0.5],
    avg_grad=[
        -0.375, -0.225, -0.375, -0.225, -0.075, 0.075, -0.075, 0.075, 0.45, 0.75, -0.3, -0.15,
        -0.3, -0.15, -0.375, -0.225, -0.375, -0.225, -0.075, 0.075, -0.075, 0.075, 0.45, 0.75,
        -0.3, -0.15, -0.3, -0.15, 0.0, 0.15, 0.0, 0.15, 0.3, -0.375, 0.3, -0.375, -0.45, -0.15,
        0.075, 0.225, 0.075, 0.225, 0.0, 0.15, 0.0, 0.15, 0.3, -0.375, 0.3, -0.375, -0.45, -0.15,
        0.075, 0.225, 0.075, 0.225, 0.75, -0.6, 0.75, -0.6, -0.3, 0.0, -0.3, 0.0, 0.6, 1.2, -0.75,
        -0.45, -0.75, -0.45],
)

SMOOTH_F32 = dict(
    value=_smooth((1, 9, 9, 1), np.float32), pooling_ratio=[1.0, 2.5, 2.5, 1.0],
    pseudo_random=False, overlapping=True,
    rows=[0, 3, 6, 9], cols=[0, 3, 6, 9],
    avg_output=[
        0.22782458, -0.25161052, 0.34886026, 0.037908826, -0.06652628, 0.7839444, 0.31714568,
        0.08771056, -0.020151986],
    avg_grad=[
        -0.09375, -0.09375, -0.09375, -0.15, -0.05625, -0.05625, -0.08125, -0.025, -0.025,
        -0.09375, -0.09375, -0.09375, -0.15, -0.05625, -0.05625, -0.08125, -0.025, -0.025,
        -0.09375, -0.09375, -0.09375, -0.15, -0.05625, -0.05625, -0.08125, -0.025, -0.025, -0.075,
        -0.075, -0.075, -0.075, 0.0, 0.0, 0.1, 0.1, 0.1, 0.01875, 0.01875, 0.01875, 0.075, 0.05625,
        0.05625, 0.18125, 0.125, 0.125, 0.01875, 0.01875, 0.01875, 0.075, 0.05625, 0.05625,
        0.18125, 0.125, 0.125, -0.081250004, -0.081250004, -0.081250004, -0.075, 0.0062499964,
        0.0062499964, 0.13125, 0.125, 0.125, -0.1, -0.1, -0.1, -0.15, -0.05, -0.05, -0.05, 0.0,
        0.0, -0.1, -0.1, -0.1, -0.15, -0.05, -0.05, -0.05, 0.0, 0.0],
)

SMOOTH_F64 = dict(
    value=_smooth((1, 8, 7, 1), np.float64), pooling_ratio=[1.0, 2.5, 1.5, 1.0],
    pseudo_random=True, overlapping=True,
    rows=[0, 2, 5, 8], cols=[0, 2, 4, 6, 7],
    max_output=[
        2.631318136769078, 1.1803766105054505, 2.8037661050545095, 2.8037661050545095,
        2.262636273538156, 0.4430128840436076, 2.976214073339941, 2.8037661050545095,
        1.1565906838453914, 2.7799801783944496, 2.7799801783944496, 1.6977205153617447],
    max_grad=[
        0.0, 0.0, -0.8999999999999999, 0.0, 0.0, 0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.8999999999999999, 0.0, 1.5, 0.0, 0.0, 0.0, -0.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, -1.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.7999999999999998, 0.0, 0.0],
    avg_output=[
        1.0548397753551368, -0.09811694747274534, -1.2510736703006278, -0.8275520317145689,
        0.7998017839444994, -1.0198216055500495, 0.16055500495540143, 2.2507433102081267,
        -0.12190287413280479, -1.274859596960687, 0.9055170135447638, 1.3290386521308228],
    avg_grad=[
        -0.16666666666666666, -0.16666666666666666, -0.26666666666666666, -0.09999999999999999,
        -0.13333333333333333, -0.03333333333333333, 0.06666666666666665, -0.16666666666666666,
        -0.16666666666666666, -0.26666666666666666, -0.09999999999999999, -0.13333333333333333,
        -0.03333333333333333, 0.06666666666666665, -0.09166666666666666, -0.09166666666666666,
        -0.06666666666666665, 0.02500000000000001, -0.10833333333333332, -0.13333333333333333,
        -0.18333333333333335, 0.075, 0.075, 0.2, 0.125, 0.02500000000000001, -0.09999999999999999,
        -0.25, 0.075, 0.075, 0.2, 0.125, 0.02500000000000001, -0.09999999999999999, -0.25, 0.075,
        0.075, 0.26666666666666666, 0.19166666666666665, 0.225, 0.03333333333333334,
        -0.6166666666666667, 0.0, 0.0, 0.06666666666666667, 0.06666666666666667, 0.2,
        0.13333333333333333, -0.3666666666666667, 0.0, 0.0, 0.06666666666666667,
        0.06666666666666667, 0.2, 0.13333333333333333, -0.3666666666666667],
)

INT32 = dict(
    value=_quarters((1, 9, 7, 2), np.int32), pooling_ratio=[1.0, 2.5, 2.2, 1.0],
    pseudo_random=False, overlapping=True,
    rows=[0, 3, 6, 9], cols=[0, 2, 4, 7],
    max_output=[11, 9, 11, 8, 10, 11, 8, 11, 11, 9, 11, 8, 9, 11, 8, 10, 11, 9],
    avg_output=[-1, 0, 0, -2, 1, 0, -1, 0, -1, 0, 0, -2, -1, 0, -1, 0, -1, 0],
)

INT64 = dict(
    value=_quarters((1, 9, 7, 1), np.int64), pooling_ratio=[1.0, 2.2, 1.6, 1.0],
    pseudo_random=True, overlapping=False,
    rows=[0, 2, 4, 7, 9], cols=[0, 2, 4, 5, 7],
    max_output=[9, 8, 5, 10, 7, 6, 11, 8, 10, 9, 6, 11, 8, 10, 1, 9],
    avg_output=[-1, -1, 2, 0, 0, -1, 2, 0, 0, 0, -1, 0, 0, 0, -2, 1],
)


TF_CASES = {"ties_overlapping": TIES_OVERLAPPING, "ties_disjoint": TIES_DISJOINT,
            "smooth_f32": SMOOTH_F32, "smooth_f64": SMOOTH_F64, "int32": INT32,
            "int64": INT64}
POOLS = {"max": tf.nn.fractional_max_pool, "avg": tf.nn.fractional_avg_pool}


def _use_sequences(monkeypatch, rows, cols):
    """Makes the kernels pool with the given sequences instead of drawing them."""
    def given(ctx, height, width, n_rows, n_cols):
        assert (n_rows, n_cols) == (len(rows) - 1, len(cols) - 1)
        return np.array(rows, np.int64), np.array(cols, np.int64)
    monkeypatch.setattr(fractional_pool_ops, "_sequences", given)


# --- a loop-by-loop reference --------------------------------------------------------------
def _cell_bounds(seq, size, overlapping):
    """(first, last) index of every cell, inclusive."""
    return [(seq[i], min(seq[i + 1] if overlapping else seq[i + 1] - 1, size - 1))
            for i in range(len(seq) - 1)]


def _cells(x, rows, cols, overlapping):
    """Yields (b, i, j, d, [(row, col) of the cell in row-major order])."""
    n, h, w, c = x.shape
    for b in range(n):
        for i, (r0, r1) in enumerate(_cell_bounds(rows, h, overlapping)):
            for j, (c0, c1) in enumerate(_cell_bounds(cols, w, overlapping)):
                for d in range(c):
                    yield b, i, j, d, [(r, q) for r in range(r0, r1 + 1)
                                       for q in range(c0, c1 + 1)]


def _reference(x, rows, cols, overlapping, grad):
    """(max output, avg output, max gradient, avg gradient) given the sequences."""
    shape = (x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3])
    out_max, out_avg = np.zeros(shape, x.dtype), np.zeros(shape, x.dtype)
    g_max, g_avg = np.zeros(x.shape, x.dtype), np.zeros(x.shape, np.float64)
    for b, i, j, d, cell in _cells(x, rows, cols, overlapping):
        values = [x[b, r, q, d] for r, q in cell]
        first = int(np.argmax(values))  # argmax: the first maximum
        out_max[b, i, j, d] = values[first]
        total = x.dtype.type(0)
        for v in values:  # one add at a time, in x's type
            total = total + v
        if x.dtype.kind == "f":
            out_avg[b, i, j, d] = total / x.dtype.type(len(cell))
        else:  # truncated toward zero
            out_avg[b, i, j, d] = int(total / len(cell)) if abs(total) < 2 ** 52 else 0
        g = grad[b, i, j, d]
        r, q = cell[first]
        g_max[b, r, q, d] = g_max[b, r, q, d] + g
        for r, q in cell:
            g_avg[b, r, q, d] += float(g) / len(cell)
    return out_max, out_avg, g_max, g_avg.astype(x.dtype)


# --- against TensorFlow ---------------------------------------------------------------------
@pytest.mark.parametrize("case,kind", [(case, kind) for case in sorted(TF_CASES)
                                       for kind in POOLS if kind + "_output" in TF_CASES[case]])
def test_matches_tensorflow_for_its_sequences(graph, monkeypatch, case, kind):
    rec = TF_CASES[case]
    _use_sequences(monkeypatch, rec["rows"], rec["cols"])
    x0 = rec["value"]
    x = tf.constant(x0)
    result = POOLS[kind](x, rec["pooling_ratio"], rec["pseudo_random"], rec["overlapping"],
                         deterministic=True, seed=1, seed2=2)
    fetches = list(result)
    if kind + "_grad" in rec:
        weights = _weights(result.output.shape.as_list(), x0.dtype)
        fetches.append(tf.gradients(tf.reduce_sum(result.output * weights), x)[0])
    with tf.Session() as sess:
        got = sess.run(fetches)
    assert got[1].tolist() == rec["rows"] and got[2].tolist() == rec["cols"]
    assert got[0].dtype == x0.dtype
    np.testing.assert_array_equal(got[0].reshape(-1),
                                  np.array(rec[kind + "_output"], x0.dtype))
    if kind + "_grad" in rec:
        np.testing.assert_array_equal(got[3].reshape(-1),
                                      np.array(rec[kind + "_grad"], x0.dtype))


def test_loop_reference_matches_tensorflow():
    # the reference of the tests below agrees with TF on every recorded case
    for rec in TF_CASES.values():
        x = rec["value"]
        shape = (x.shape[0], len(rec["rows"]) - 1, len(rec["cols"]) - 1, x.shape[3])
        out_max, out_avg, g_max, g_avg = _reference(x, rec["rows"], rec["cols"],
                                                    rec["overlapping"], _weights(shape, x.dtype))
        for kind, out, grad in (("max", out_max, g_max), ("avg", out_avg, g_avg)):
            if kind + "_output" in rec:
                np.testing.assert_array_equal(out.reshape(-1),
                                              np.array(rec[kind + "_output"], x.dtype))
            if kind + "_grad" in rec:
                np.testing.assert_array_equal(grad.reshape(-1),
                                              np.array(rec[kind + "_grad"], x.dtype))


def test_documented_overlapping_example(graph, monkeypatch):
    # TF's docstring: values [20, 5, 16, 3, 7], sequence [0, 2, 4], overlapping -> [20, 16]
    _use_sequences(monkeypatch, [0, 1], [0, 2, 4])
    x = np.float32([20, 5, 16, 3, 7]).reshape(1, 1, 5, 1)
    with tf.Session() as sess:
        got_max = sess.run(tf.nn.fractional_max_pool(x, [1, 1, 2.5, 1], overlapping=True))
        got_avg = sess.run(tf.nn.fractional_avg_pool(x, [1, 1, 2.5, 1], overlapping=True))
    assert got_max.output.reshape(-1).tolist() == [20, 16]
    np.testing.assert_allclose(got_avg.output.reshape(-1), [41 / 3, 26 / 3], rtol=1e-6)


# --- against the loop reference, on drawn sequences ---------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("pseudo_random,overlapping", [(False, False), (False, True),
                                                       (True, False), (True, True)])
def test_against_the_loop_reference(sess, dtype, pseudo_random, overlapping):
    rs = np.random.RandomState(3)
    x0 = rs.randint(-4, 5, (2, 9, 11, 3)).astype(dtype)  # integers: many ties
    if np.dtype(dtype).kind == "f":
        x0 = x0 + rs.uniform(-0.5, 0.5, x0.shape).astype(dtype) * (rs.rand(*x0.shape) < 0.5)
    x = tf.constant(x0)
    ratio = [1.0, 1.6, 2.3, 1.0]
    out_max, rows, cols = tf.nn.fractional_max_pool(x, ratio, pseudo_random, overlapping)
    assert out_max.shape.as_list() == [2, 5, 4, 3]
    out_avg, rows_avg, cols_avg = tf.nn.fractional_avg_pool(x, ratio, pseudo_random,
                                                            overlapping)
    dy = rs.randint(-3, 4, (2, 5, 4, 3)).astype(dtype) * (0.7 if np.dtype(dtype).kind == "f"
                                                          else 1)
    fetches = [out_max, rows, cols, out_avg, rows_avg, cols_avg]
    if np.dtype(dtype).kind == "f":
        fetches += [tf.gradients(out_max, x, grad_ys=dy)[0],
                    tf.gradients(out_avg, x, grad_ys=dy)[0]]
    got = sess.run(fetches)
    want_max, _, want_g_max, _ = _reference(x0, got[1], got[2], overlapping, dy)
    _, want_avg, _, want_g_avg = _reference(x0, got[4], got[5], overlapping, dy)
    np.testing.assert_array_equal(got[0], want_max)
    np.testing.assert_array_equal(got[3], want_avg)
    assert got[0].dtype == got[3].dtype == dtype
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal(got[6], want_g_max)
        np.testing.assert_array_equal(got[7], want_g_avg)


def test_gradient_ops_against_the_loop_reference_for_every_type(sess):
    rs = np.random.RandomState(4)
    rows, cols = [0, 2, 3, 5, 7], [0, 1, 3, 4, 6, 8]
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        x = rs.randint(-3, 4, (2, 7, 8, 2)).astype(dtype)
        dy = rs.randint(-9, 10, (2, 4, 5, 2)).astype(dtype)
        for overlapping in (False, True):
            y = fractional_pool_ops.max_pool(x, np.array(rows), np.array(cols), overlapping)
            g_max = apply_op("FractionalMaxPoolGrad", [x, y, dy, rows, cols],
                             {"overlapping": overlapping}).outputs[0]
            g_avg = apply_op("FractionalAvgPoolGrad", [np.int64(x.shape), dy, rows, cols],
                             {"overlapping": overlapping}).outputs[0]
            assert g_avg.shape.as_list() == list(x.shape)
            got_max, got_avg = sess.run([g_max, g_avg])
            _, _, want_max, want_avg = _reference(x, rows, cols, overlapping, dy)
            np.testing.assert_array_equal(got_max, want_max)
            np.testing.assert_array_equal(got_avg, want_avg)  # ints: shares truncated


# --- the pooling sequences ------------------------------------------------------------------
def _pseudo_random_u_range(seq, n, m):
    """The interval of u for which seq[i] = ceil(alpha (i + u)) - 1 (0 < i < m), and
    TF's bound u_max."""
    alpha, k = n / m, n // m
    lo, hi = 0.0, np.inf
    for i in range(1, m):
        lo, hi = max(lo, seq[i] / alpha - i), min(hi, (seq[i] + 1) / alpha - i)
    return lo, hi, min((k + 2) / alpha - 1, (n + 1 - k) / alpha - (m - 1))


@pytest.mark.parametrize("pseudo_random", [False, True])
def test_sequences_have_tensorflows_structure(sess, pseudo_random):
    value = tf.placeholder(tf.float32, [1, None, None, 1])
    ratios = [1.0, 1.1, 1.44, 1.5, 2.0, 2.3, 3.7, 6.5]
    ops = [tf.nn.fractional_max_pool(value, [1.0, r, r, 1.0], pseudo_random)[1:]
           for r in ratios]
    for n in range(1, 42, 2):
        m_ = n + 3
        for r, seqs in zip(ratios, ops):
            if n < r:
                continue
            for size, seq in zip((n, m_), sess.run(seqs, {value: np.zeros((1, n, m_, 1))})):
                cells = int(np.floor(np.float32(size) / np.float32(r)))
                k = size // cells
                steps = np.diff(seq)
                assert seq.dtype == np.int64 and len(seq) == cells + 1
                assert seq[0] == 0 and seq[-1] == size
                assert set(steps.tolist()) <= {k, k + 1}
                assert (steps == k + 1).sum() == size % cells
                if pseudo_random:
                    lo, hi, u_max = _pseudo_random_u_range(seq, size, cells)
                    assert lo <= hi + 1e-12 and lo < u_max + 1e-12


def test_random_sequences_vary_and_cover_the_arrangements(sess):
    # 10 rows into 4 cells: steps are a shuffle of [3, 3, 2, 2], 6 arrangements
    rows = tf.nn.fractional_max_pool(tf.placeholder_with_default(np.zeros((1, 10, 4, 1)),
                                                                 None), [1, 2.5, 1, 1])[1]
    seen = {tuple(sess.run(rows)) for _ in range(200)}
    assert len(seen) == 6
    pseudo = tf.nn.fractional_max_pool(tf.placeholder_with_default(np.zeros((1, 100, 4, 1)),
                                                                   None), [1, 1.7, 1, 1],
                                       pseudo_random=True)[1]
    assert len({tuple(sess.run(pseudo)) for _ in range(20)}) > 1


def test_output_length_divides_in_float32(graph):
    # float32(49) / float32(4.9) is 10; in float64 it would be 9.99999...
    out, rows, cols = tf.nn.fractional_avg_pool(np.zeros((1, 49, 5, 1)), [1, 4.9, 1, 1])
    assert out.shape.as_list() == [1, 10, 5, 1] and rows.shape.as_list() == [11]
    with tf.Session() as sess:
        assert sess.run(out).shape == (1, 10, 5, 1)
    assert fractional_pool_ops.pooled_length(49, 4.9) == 10


def test_deterministic_seeds_repeat_the_sequences():
    x = np.zeros((1, 50, 40, 1), np.float32)

    def draw(runs=2, **kwargs):
        with tf.Graph().as_default():
            value = tf.placeholder_with_default(x, None)   # not a constant: never folded
            seqs = tf.nn.fractional_max_pool(value, [1, 1.7, 1.3, 1], **kwargs)[1:]
            with tf.Session() as sess:
                return [tuple(np.concatenate(sess.run(seqs))) for _ in range(runs)]

    seeded = draw(deterministic=True, seed=5, seed2=7)
    assert seeded[0] == seeded[1] == draw(deterministic=True, seed=5, seed2=7)[0]
    assert draw(deterministic=True, seed=6, seed2=7)[0] != seeded[0]
    assert draw(deterministic=True, seed=5, seed2=0, pseudo_random=True)[0] != seeded[0]
    # no seeds: fixed per op and plan (TF draws them when the kernel is made)
    first, second = draw(deterministic=True), draw(deterministic=True)
    assert first[0] == first[1] and second[0] == second[1] and first[0] != second[0]
    assert len(set(draw(runs=5))) > 1  # not deterministic: new sequences at every run


def test_deterministic_mode_repeats_unseeded_sequences():
    def draw():
        with tf.Graph().as_default():
            value = tf.placeholder_with_default(np.zeros((1, 60, 60, 1)), None)
            seqs = tf.nn.fractional_avg_pool(value, [1, 1.5, 1.5, 1])[1:]
            config = tf.ConfigProto(experimental={"deterministic": True})
            with tf.Session(config=config) as sess:
                return [np.concatenate(sess.run(seqs)).tolist() for _ in range(2)]
    first = draw()
    assert first == draw() and first[0] != first[1]


def test_a_constant_is_pooled_once_per_plan_as_tensorflow_folds_it(graph):
    # TF 2.21: FractionalMaxPool and FractionalAvgPool are not stateful, so Grappler folds
    # a pool of a constant: a non-deterministic one repeats its sequences at every run of
    # the same fetches, and other fetches (folded anew) draw other sequences
    x = np.zeros((1, 40, 40, 1), np.float32)
    for pool in POOLS.values():
        _, rows, cols = pool(x, [1, 1.5, 1.5, 1])
        with tf.Session() as sess:
            alone = {tuple(sess.run(rows)) for _ in range(3)}
            with_cols = {tuple(sess.run([rows, cols])[0]) for _ in range(3)}
        assert len(alone) == 1 and len(with_cols) == 1 and alone != with_cols


def test_unseeded_deterministic_seeds_are_fixed_per_set_of_fetches(sess):
    # TF 2.21 (the op is not stateful: a kernel per set of fetches and feeds, each
    # drawing its seeds): rows repeat over runs of the same fetches, and rows fetched
    # alone differ from rows fetched with cols
    x = tf.placeholder(tf.float32, [1, 40, 40, 1])
    _, rows, cols = tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], deterministic=True)
    feed = {x: np.zeros((1, 40, 40, 1))}
    alone = {tuple(sess.run(rows, feed)) for _ in range(3)}
    with_cols = {tuple(sess.run([rows, cols], feed)[0]) for _ in range(3)}
    assert len(alone) == 1 and len(with_cols) == 1 and alone != with_cols


def test_identical_pools_are_merged_as_in_tensorflow(sess):
    # TF 2.21: two identical non-deterministic pools of one input draw the same
    # sequences (Grappler merges them); a third with other attrs draws its own
    x = tf.placeholder(tf.float32, [1, 40, 40, 1])
    a, b, c = (tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], overlapping=o)[1]
               for o in (False, False, True))
    got = sess.run([tf.identity(a), tf.identity(b), tf.identity(c)],
                   {x: np.zeros((1, 40, 40, 1))})
    assert got[0].tolist() == got[1].tolist() != got[2].tolist()


# --- TensorFlow's draws ------------------------------------------------------------------
# TensorFlow 2.21 (2.15 draws the same): in a tf.Graph, tf.compat.v1.nn.fractional_max_pool
# and fractional_avg_pool(_smooth((1,) + size + (1,), np.float32) (batch 2 for (50, 31)),
# [1.0] + ratio + [1.0], pseudo_random, overlapping, deterministic=True, seed=seed,
# seed2=seed2), both run twice in one session: both ops, both runs and both values of
# `overlapping` gave these rows and cols. (5, 5) pools its rows to 1 cell, (100, 64)
# reserves 23 blocks for its rows; seed2=-3 and seed=2**40 + 11 use all 64 bits.
SEQUENCE_CASES = [
    dict(size=(9, 7), ratio=[1.44, 1.73], seed=1, seed2=2, pseudo_random=False,
         rows=[0, 1, 3, 4, 6, 7, 9],
         cols=[0, 2, 4, 6, 7]),
    dict(size=(50, 31), ratio=[1.7, 1.3], seed=5, seed2=7, pseudo_random=False,
         rows=[
             0, 1, 2, 3, 5, 6, 8, 10, 12, 14, 16, 18, 19, 21, 23, 25, 26, 28, 30, 32, 34, 36, 38,
             40, 42, 44, 45, 47, 49, 50],
         cols=[
             0, 1, 3, 4, 5, 6, 8, 9, 11, 12, 14, 16, 17, 19, 20, 21, 23, 24, 26, 27, 28, 29, 30,
             31]),
    dict(size=(100, 64), ratio=[1.1, 2.0], seed=123456789, seed2=-3, pseudo_random=False,
         rows=[
             0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 13, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
             26, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
             48, 49, 51, 52, 53, 54, 55, 56, 57, 59, 60, 61, 62, 63, 64, 66, 67, 68, 69, 70, 71,
             72, 73, 74, 75, 77, 78, 79, 81, 82, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
             96, 97, 98, 99, 100],
         cols=[
             0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42,
             44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 64]),
    dict(size=(17, 23), ratio=[3.7, 6.5], seed=1099511627787, seed2=0, pseudo_random=False,
         rows=[0, 4, 8, 12, 17],
         cols=[0, 7, 15, 23]),
    dict(size=(5, 5), ratio=[3.0, 2.5], seed=0, seed2=9, pseudo_random=False,
         rows=[0, 5],
         cols=[0, 2, 5]),
    dict(size=(9, 7), ratio=[1.44, 1.73], seed=1, seed2=2, pseudo_random=True,
         rows=[0, 1, 3, 4, 6, 7, 9],
         cols=[0, 2, 3, 5, 7]),
    dict(size=(50, 31), ratio=[1.7, 1.3], seed=5, seed2=7, pseudo_random=True,
         rows=[
             0, 2, 4, 5, 7, 9, 11, 12, 14, 16, 17, 19, 21, 23, 24, 26, 28, 30, 31, 33, 35, 36, 38,
             40, 42, 43, 45, 47, 49, 50],
         cols=[
             0, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26, 27, 29, 30,
             31]),
    dict(size=(100, 64), ratio=[1.1, 2.0], seed=123456789, seed2=-3, pseudo_random=True,
         rows=[
             0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 22, 23, 24,
             25, 26, 27, 28, 30, 31, 32, 33, 34, 35, 36, 37, 38, 40, 41, 42, 43, 44, 45, 46, 47,
             48, 50, 51, 52, 53, 54, 55, 56, 57, 58, 60, 61, 62, 63, 64, 65, 66, 67, 68, 70, 71,
             72, 73, 74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90, 91, 92, 93, 94,
             95, 96, 97, 98, 100],
         cols=[
             0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42,
             44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 64]),
    dict(size=(17, 23), ratio=[3.7, 6.5], seed=1099511627787, seed2=0, pseudo_random=True,
         rows=[0, 4, 9, 13, 17],
         cols=[0, 8, 15, 23]),
    dict(size=(5, 5), ratio=[3.0, 2.5], seed=0, seed2=9, pseudo_random=True,
         rows=[0, 5],
         cols=[0, 3, 5]),
]

# TF 2.21, as above: the outputs of the (17, 23) case (max, avg) for (pseudo_random,
# overlapping)
OUTPUTS_17x23 = {
    (False, False): (
        [2.5837462, 2.9762142, 2.952428, 2.8810704, 2.9286423, 2.9048562, 2.8334985, 2.8572845,
         2.6372647, 2.9821606, 2.9583747, 2.9345887],
        [-0.26079568, 0.12097371, 0.15498018, 0.036528386, 0.04329783, -0.110195756, -0.094718955,
         -0.034378104, -0.00037166476, -0.060229357, -0.11238847, 0.2591179]),
    (False, True): (
        [2.9286423, 2.9762142, 2.952428, 2.9286423, 2.9286423, 2.9048562, 2.9821606, 2.8572845,
         2.7859266, 2.9821606, 2.9583747, 2.9345887],
        [-0.035678886, 0.20740005, 0.11714568, -0.038354803, 0.10472414, -0.03553023, -0.19103071,
         0.0020482275, 0.11179385, -0.19370663, 0.03270567, 0.2591179]),
    (True, False): (
        [2.7799802, 2.9762142, 2.952428, 2.9286423, 2.8572845, 2.9048562, 2.9821606, 2.8097126,
         2.7859266, 2.5659068, 2.9583747, 2.9345887],
        [-0.07284442, -0.03928926, 0.15498018, -0.038354803, 0.12377175, -0.03553023, -0.15386519,
         -0.0131672025, 0.07395935, -0.23154116, 0.06987118, 0.18378347]),
    (True, True): (
        [2.9286423, 2.9762142, 2.952428, 2.9286423, 2.8572845, 2.9048562, 2.9821606, 2.9583747,
         2.7859266, 2.9108028, 2.9583747, 2.9345887],
        [0.0427486, 0.03582756, 0.11714568, 0.010571513, 0.14531715, -0.09836473, -0.02160555,
         0.10480674, 0.03612487, -0.061446957, 0.17746532, 0.18378347]),
}


@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("case", range(len(SEQUENCE_CASES)))
def test_sequences_are_tensorflows(case, overlapping):
    rec = SEQUENCE_CASES[case]
    x = np.zeros((1,) + rec["size"] + (1,), np.float32)
    with tf.Graph().as_default():
        seqs = [pool(x, [1.0] + rec["ratio"] + [1.0], rec["pseudo_random"], overlapping,
                     deterministic=True, seed=rec["seed"], seed2=rec["seed2"])[1:]
                for pool in POOLS.values()]
        with tf.Session() as sess:
            runs = [sess.run(seqs) for _ in range(2)]   # later runs restart, as TF's
    for run in runs:
        for rows, cols in run:
            assert rows.tolist() == rec["rows"] and cols.tolist() == rec["cols"]


@pytest.mark.parametrize("pseudo_random,overlapping", sorted(OUTPUTS_17x23))
def test_outputs_are_tensorflows(graph, pseudo_random, overlapping):
    x = _smooth((1, 17, 23, 1), np.float32)
    outs = [pool(x, [1.0, 3.7, 6.5, 1.0], pseudo_random, overlapping, deterministic=True,
                 seed=2 ** 40 + 11, seed2=0).output for pool in POOLS.values()]
    with tf.Session() as sess:
        got = sess.run(outs)
    for out, want in zip(got, OUTPUTS_17x23[pseudo_random, overlapping]):
        np.testing.assert_array_equal(out.reshape(-1), np.array(want, np.float32))


def test_the_graph_seed_does_not_seed_the_v1_ops(graph):
    # TF 2.21: after tf.set_random_seed(7), tf.compat.v1.nn.fractional_max_pool gets
    # seed = seed2 = 0 and deterministic False, and draws new sequences at every run
    tf.set_random_seed(7)
    x = tf.placeholder(tf.float32, [1, 40, 40, 1])
    out, rows, _ = tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1])
    assert [out.op.get_attr(a) for a in ("seed", "seed2", "deterministic")] == [0, 0, False]
    with tf.Session() as sess:
        seen = {tuple(sess.run(rows, {x: np.zeros((1, 40, 40, 1))})) for _ in range(5)}
    assert len(seen) > 1


@pytest.mark.parametrize("pseudo_random", [False, True])
def test_unseeded_runs_continue_one_stream(pseudo_random):
    # TF seeds every run of a non-deterministic op afresh; here the runs of one plan
    # continue one stream, seeded by the op's name in the deterministic mode: the first
    # run draws what a deterministic op of those seeds draws (TF's, tested above), the
    # second from the blocks after those the first reserved
    x = np.zeros((1, 50, 31, 1), np.float32)
    ratio = [1.0, 1.7, 1.3, 1.0]
    seeds = determinism.name_seed("pool")
    with tf.Graph().as_default():
        drawn = tf.nn.fractional_max_pool(tf.placeholder_with_default(x, None), ratio,
                                          pseudo_random, name="pool")[1:]
        fixed = tf.nn.fractional_max_pool(x, ratio, pseudo_random, deterministic=True,
                                          seed=seeds[0], seed2=seeds[1])[1:]
        config = tf.ConfigProto(experimental={"deterministic": True})
        with tf.Session(config=config) as sess:
            first, second, want_first = sess.run(drawn), sess.run(drawn), sess.run(fixed)
    for got, want in zip(first, want_first):
        np.testing.assert_array_equal(got, want)
    key, counter = philox.key_counter_of_seeds(*seeds)
    row_blocks = fractional_pool_ops.sequence_blocks(29, pseudo_random)
    counter = philox.skip(counter, row_blocks + fractional_pool_ops.sequence_blocks(
        23, pseudo_random))
    want_second = (
        fractional_pool_ops.pooling_sequence(50, 29, key, counter, pseudo_random),
        fractional_pool_ops.pooling_sequence(31, 23, key, philox.skip(counter, row_blocks),
                                             pseudo_random))
    for got, want in zip(second, want_second):
        np.testing.assert_array_equal(got, want)
    assert first[0].tolist() != second[0].tolist()


def test_sequence_blocks_are_tensorflows_reservations():
    # ReserveSamples32(2) for the pseudo-random u, ReserveSamples32(cells) for a shuffle
    assert [fractional_pool_ops.sequence_blocks(m, True) for m in (1, 4, 90)] == [1, 1, 1]
    assert [fractional_pool_ops.sequence_blocks(m, False) for m in (1, 4, 5, 90)] == [
        1, 1, 2, 23]


# --- gradients --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tolerance", [(tf.float64, 1e-8), (tf.float32, 2e-3)])
@pytest.mark.parametrize("pseudo_random,overlapping", [(False, False), (True, True)])
def test_numeric_gradients(graph, dtype, tolerance, pseudo_random, overlapping):
    # distinct values 0.1 apart, so the numeric perturbation never changes a maximum
    x0 = (np.random.RandomState(5).permutation(2 * 7 * 8 * 2) * 0.1 - 11).reshape(2, 7, 8, 2)
    x = tf.constant(x0, dtype=dtype)
    for pool in POOLS.values():
        y = pool(x, [1.0, 1.5, 1.8, 1.0], pseudo_random, overlapping, deterministic=True,
                 seed=3, seed2=4).output
        with tf.Session():
            err = compute_gradient_error(x, list(x0.shape), y, y.shape.as_list(),
                                         x_init_value=x0)
        assert err < tolerance, (pool.__name__, err)


def test_sequences_and_gradient_ops_are_not_differentiable(graph):
    x = tf.constant(np.random.RandomState(6).rand(1, 6, 6, 1))
    out, rows, cols = tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1])
    dx = tf.gradients(out, x)[0]
    assert dx.op.type == "FractionalMaxPoolGrad"
    assert tf.gradients(dx, x) == [None]
    avg = tf.nn.fractional_avg_pool(x, [1, 1.5, 1.5, 1]).output
    dx_avg = tf.gradients(avg, x)[0]
    assert dx_avg.op.type == "FractionalAvgPoolGrad"
    assert tf.gradients(dx_avg, x) == [None]


# --- shapes and errors ----------------------------------------------------------------------
def test_static_shapes_and_names(graph):
    value = tf.placeholder(tf.float32, [None, None, 7, 2])
    out, rows, cols = tf.nn.fractional_max_pool(value, [1, 1.5, 1.5, 1], name="fmp")
    assert out.name == "fmp:0" and rows.name == "fmp:1" and out.op.type == "FractionalMaxPool"
    assert out.shape.as_list() == [None, None, 4, 2]
    assert rows.shape.as_list() == [None] and cols.shape.as_list() == [5]
    assert rows.dtype == cols.dtype == tf.int64
    result = tf.nn.fractional_avg_pool(tf.placeholder(tf.float64), [1, 1.5, 1.5, 1])
    assert type(result).__name__ == "FractionalAvgPool"
    assert result.output.shape.as_list() == [None] * 4 and result.output.dtype == tf.float64
    grad = apply_op("FractionalMaxPoolGrad", [tf.placeholder(tf.float32, [None, 6, None, 1]),
                                              np.ones((1, 3, 3, 1), np.float32),
                                              np.ones((1, 3, 3, 1), np.float32),
                                              [0, 2, 4, 6], [0, 2, 4, 6]]).outputs[0]
    assert grad.shape.as_list() == [None, 6, None, 1]
    grad = apply_op("FractionalAvgPoolGrad", [tf.placeholder(tf.int64, [4]),
                                              np.ones((1, 3, 3, 1), np.float32),
                                              [0, 2, 4, 6], [0, 2, 4, 6]]).outputs[0]
    assert grad.shape.as_list() == [None] * 4


@pytest.mark.parametrize("pooling_ratio,value_shape,error,match", [
    ([1, 1.5, 1.73], (2, 10, 9, 3), ValueError, "list of length 3 less than minimum 4"),
    ([1, 1.5, 1.73, 1, 1], (2, 10, 9, 3), ValueError, "must specify 4 dimensions"),
    ([1, 0.5, 1.73, 1], (2, 10, 9, 3), ValueError, "cannot be smaller than 1, got: 0.5"),
    ([1, 1.5, 1.5, 1], (10, 9, 3), ValueError, "Shape must be rank 4 but is rank 3"),
    (1.5, (2, 10, 9, 3), TypeError, "Expected list for 'pooling_ratio'"),
    ([1, "a", 1, 1], (2, 10, 9, 3), TypeError, "Expected float"),
])
def test_build_time_errors(graph, pooling_ratio, value_shape, error, match):
    for pool in POOLS.values():
        with pytest.raises(error, match=match):
            pool(np.zeros(value_shape, np.float32), pooling_ratio)


def test_unsupported_dtype(graph):
    for pool in POOLS.values():
        with pytest.raises(TypeError):
            pool(np.zeros((1, 4, 4, 1), np.float16), [1, 1.5, 1.5, 1])


@pytest.mark.parametrize("kwargs,value_shape,error,match", [
    (dict(pooling_ratio=[2, 1.5, 1.5, 1]), (2, 10, 9, 3), tf.errors.UnimplementedError,
     "not yet supported on the batch nor channel dimension"),
    (dict(pooling_ratio=[1, 1.5, 1.5, 1.5]), (2, 10, 9, 3), tf.errors.UnimplementedError,
     "not yet supported on the batch nor channel dimension"),
    (dict(pooling_ratio=[1, 1.5, 1.5, 1], seed=3), (2, 10, 9, 3),
     tf.errors.InvalidArgumentError, "Both seed and seed2 should be 0 if deterministic"),
    (dict(pooling_ratio=[1, 11, 1.5, 1]), (2, 10, 9, 3), tf.errors.InvalidArgumentError,
     "higher than input dimension size for dimension 1. Input dim size: 10 pooling ratio: "
     "11"),
    (dict(pooling_ratio=[1, 1.5, 1.5, 1]), (0, 4, 4, 1), tf.errors.InvalidArgumentError,
     "dimension 0. Input dim size: 0 pooling ratio: 1"),
    (dict(pooling_ratio=[1, 1.5, 1.5, 1]), (4, 4, 1), tf.errors.InvalidArgumentError,
     "tensor_in must be 4-dimensional"),
])
def test_run_time_errors(sess, kwargs, value_shape, error, match):
    for pool in POOLS.values():
        value = tf.placeholder(tf.float32)
        result = pool(value, **kwargs)
        with pytest.raises(error, match=match):
            sess.run(result, {value: np.zeros(value_shape, np.float32)})


X6 = np.arange(36, dtype=np.float32).reshape(1, 6, 6, 1)
SEQ = [0, 2, 4, 6]


@pytest.mark.parametrize("rows,x,y,dy,match", [
    ([0, 2, 4], X6, np.ones((1, 3, 3, 1)), np.ones((1, 3, 3, 1)),
     "row_pooling_sequence must be a vector of 4 elements"),
    ([0, 2, 4, 6, 6], X6, np.ones((1, 3, 3, 1)), np.ones((1, 3, 3, 1)),
     "row_pooling_sequence must be a vector of 4 elements"),
    ([0, 4, 2, 6], X6, np.ones((1, 3, 3, 1)), np.ones((1, 3, 3, 1)), "strictly increasing"),
    ([0, 2, 6, 8], X6, np.ones((1, 3, 3, 1)), np.ones((1, 3, 3, 1)),
     "starting inside the input's 6 rows"),
    ([-2, 2, 4, 6], X6, np.ones((1, 3, 3, 1)), np.ones((1, 3, 3, 1)), "must not be negative"),
    (SEQ, X6, np.ones((1, 3, 2, 1)), np.ones((1, 3, 2, 1)), "col_pooling_sequence must be"),
    (SEQ, X6, np.ones((1, 3, 3, 1)), np.ones((1, 3, 2, 1)), "out_backprop must have"),
    (SEQ, X6, np.ones((2, 3, 3, 1)), np.ones((2, 3, 3, 1)), "out_backprop must have"),
    (SEQ, X6[0], np.ones((1, 3, 3, 1)), np.ones((1, 3, 3, 1)), "orig_input must be 4-dim"),
    (SEQ, np.zeros((0, 6, 6, 1)), np.ones((0, 3, 3, 1)), np.ones((0, 3, 3, 1)),
     "orig_input must not be empty"),
])
def test_max_pool_grad_errors(sess, rows, x, y, dy, match):
    feeds = [tf.placeholder(tf.float32), tf.placeholder(tf.float32),
             tf.placeholder(tf.float32), tf.placeholder(tf.int64), tf.placeholder(tf.int64)]
    grad = apply_op("FractionalMaxPoolGrad", feeds).outputs[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        sess.run(grad, dict(zip(feeds, [x, y, dy, rows, SEQ])))


@pytest.mark.parametrize("shape,dy,rows,match", [
    ([1, 6, 6], np.ones((1, 3, 3, 1)), SEQ, "must be1?-dimensional and 4 elements|1-dim"),
    ([1, 6, 6, 1], np.ones((3, 3, 1)), SEQ, "out_backprop must be 4-dimensional"),
    ([0, 6, 6, 1], np.ones((0, 3, 3, 1)), SEQ, "out_backprop must be positive"),
    ([2, 6, 6, 1], np.ones((1, 3, 3, 1)), SEQ, "does not match out_backprop"),
    ([1, 6, 6, 2], np.ones((1, 3, 3, 1)), SEQ, "does not match out_backprop"),
    ([1, 6, 6, 1], np.ones((1, 3, 3, 1)), [0, 2, 4], "must be a vector of 4 elements"),
    ([1, 6, 6, 1], np.ones((1, 3, 3, 1)), [-2, 2, 4, 6], "Row sequence tensor values must "
     "not be negative"),
    ([1, 6, 6, 1], np.ones((1, 3, 3, 1)), [0, 2, 2, 6], "strictly increasing"),
])
def test_avg_pool_grad_errors(sess, shape, dy, rows, match):
    feeds = [tf.placeholder(tf.int64), tf.placeholder(tf.float32), tf.placeholder(tf.int64),
             tf.placeholder(tf.int64)]
    grad = apply_op("FractionalAvgPoolGrad", feeds).outputs[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        sess.run(grad, dict(zip(feeds, [shape, dy, rows, SEQ])))
