"""The reduction kernels' fast paths: blocked sums over leading axes (bias gradients of
NHWC activations) and the cache of normalised reduction axes, against float64 / exact
NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.math import reduction_ops

# shapes large enough for the blocked path (>= _BLOCKED_MIN_SIZE elements, short kept part)
LEADING_CASES = [
    ((64, 28, 28, 32), 3),   # cnn_train's first bias gradient
    ((64, 14, 14, 64), 3),
    ((50001, 3), 1),         # a prime-ish row count: blocks plus a remainder
    ((1001, 37, 3), 2),
    ((257, 11, 13), 1),      # kept part [11, 13]
]


def _uses_blocked_path(shape, k):
    x = np.zeros(shape, np.float32)
    return reduction_ops._blocked_leading_sum(x, tuple(range(k)), np.float32,
                                              False) is not None


@pytest.mark.parametrize("shape,k", LEADING_CASES)
def test_cases_take_the_blocked_path(shape, k):
    assert np.prod(shape) >= reduction_ops._BLOCKED_MIN_SIZE
    assert _uses_blocked_path(shape, k)


@pytest.mark.parametrize("shape,k", LEADING_CASES)
@pytest.mark.parametrize("keep", [False, True])
def test_leading_sum_float32_matches_float64_reference(sess, shape, k, keep):
    rs = np.random.RandomState(1)
    x0 = rs.randn(*shape).astype(np.float32)
    x = tf.placeholder(tf.float32, shape)
    axis = list(range(k))
    y = tf.reduce_sum(x, axis=axis, keepdims=keep)
    want_shape = [1] * k + list(shape[k:]) if keep else list(shape[k:])
    assert y.shape.as_list() == want_shape
    got = sess.run(y, {x: x0})
    assert type(got) is np.ndarray and got.dtype == np.float32
    assert list(got.shape) == want_shape
    ref = x0.astype(np.float64).sum(axis=tuple(axis), keepdims=keep)
    # a two-level sum: well inside float32's error of a running sum of this length
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(x0).max() * 10)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
def test_leading_sum_integers_are_exact_and_wrap_like_numpy(sess, dtype):
    # same modular arithmetic as one running sum: the order of additions cannot matter
    rs = np.random.RandomState(2)
    info = np.iinfo(dtype)
    x0 = rs.randint(max(info.min, -1000), min(info.max, 1000), size=(401, 9, 11)) \
        .astype(dtype)
    got = sess.run(tf.reduce_sum(tf.constant(x0), axis=[0, 1]))
    np.testing.assert_array_equal(got, np.add.reduce(x0, axis=(0, 1), dtype=dtype))
    assert got.dtype == dtype


def test_leading_sum_half_precision_accumulates_in_float32(sess):
    x0 = np.full((4096, 2, 8), 0.1, np.float16)  # a float16 running sum would stall at 256
    got = sess.run(tf.reduce_sum(tf.constant(x0), axis=[0, 1]))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), np.full(8, 8192 * 0.1),
                               rtol=2e-3)
    bf = tf.cast(tf.constant(x0.astype(np.float32)), tf.bfloat16)
    got = sess.run(tf.cast(tf.reduce_sum(bf, axis=[0, 1]), tf.float32))
    np.testing.assert_allclose(got, np.full(8, 8192 * 0.1), rtol=1e-2)


def test_leading_mean_uses_the_same_sum(sess):
    rs = np.random.RandomState(3)
    x0 = rs.rand(128, 16, 16, 8).astype(np.float32)
    got = sess.run(tf.reduce_mean(tf.constant(x0), axis=[0, 1, 2]))
    np.testing.assert_allclose(got, x0.astype(np.float64).mean(axis=(0, 1, 2)), rtol=1e-5)
    assert got.dtype == np.float32 and got.shape == (8,)


def test_special_values_propagate(sess):
    x0 = np.ones((300, 200, 2), np.float32)
    x0[7, 3, 0] = np.inf
    x0[9, 9, 1] = np.nan
    got = sess.run(tf.reduce_sum(tf.constant(x0), axis=[0, 1]))
    assert got[0] == np.inf and np.isnan(got[1])
    x0[8, 1, 0] = -np.inf
    assert np.isnan(sess.run(tf.reduce_sum(tf.constant(x0), axis=[0, 1]))[0])


@pytest.mark.parametrize("axis", [[1, 0], [0, 1, -2], [-3, -2]])
def test_unordered_and_negative_leading_axes(sess, axis):
    rs = np.random.RandomState(4)
    x0 = rs.randint(-50, 50, size=(300, 20, 7)).astype(np.float32)  # exact sums
    got = sess.run(tf.reduce_sum(tf.constant(x0), axis=axis[:2]))
    want = x0.astype(np.float64).sum(axis=tuple(a % 3 for a in axis[:2]))
    np.testing.assert_array_equal(got, want)


def test_other_layouts_fall_back_to_the_plain_reduction(sess):
    rs = np.random.RandomState(5)
    x0 = rs.randint(-50, 50, size=(200, 30, 8)).astype(np.float32)
    x = tf.constant(x0)
    # middle axes, a non-contiguous (transposed) input, a long kept row, a kept row of 1
    assert reduction_ops._blocked_leading_sum(x0, (1,), np.float32, False) is None
    assert reduction_ops._blocked_leading_sum(np.zeros((40, 2048), np.float32), (0,),
                                              np.float32, False) is None
    assert reduction_ops._blocked_leading_sum(np.zeros((40000, 1), np.float32), (0,),
                                              np.float32, False) is None
    got = sess.run([tf.reduce_sum(x, axis=1), tf.reduce_sum(tf.transpose(x, [2, 0, 1]),
                                                            axis=[0, 1]),
                    tf.reduce_sum(x, axis=[0, 2])])
    np.testing.assert_array_equal(got[0], x0.sum(axis=1))
    np.testing.assert_array_equal(got[1], x0.transpose(2, 0, 1).sum(axis=(0, 1)))
    np.testing.assert_array_equal(got[2], x0.sum(axis=(0, 2)))


def test_input_is_not_mutated(sess):
    x0 = np.random.RandomState(6).rand(500, 70, 3).astype(np.float32)
    keep = x0.copy()
    p = tf.placeholder(tf.float32, [None, 70, 3])
    sess.run(tf.reduce_sum(p, axis=[0, 1]), {p: x0})
    np.testing.assert_array_equal(x0, keep)


# --- the axes cache -----------------------------------------------------------------------
def test_axes_cache_keeps_errors_and_depends_on_rank(sess):
    p = tf.placeholder(tf.float32)
    ax = tf.placeholder(tf.int32)
    y = tf.reduce_sum(p, axis=ax)
    x2 = np.ones((2, 3), np.float32)
    x3 = np.ones((2, 3, 4), np.float32)
    # the same axes, valid for one rank and not for another, in either order
    assert sess.run(y, {p: x3, ax: [2]}).shape == (2, 3)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Invalid reduction dimension \(2 for input with 2 "):
        sess.run(y, {p: x2, ax: [2]})
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Invalid reduction dimension \(-3 for input with 2 "):
        sess.run(y, {p: x2, ax: [-3]})
    assert sess.run(y, {p: x3, ax: [-3]}).shape == (3, 4)
    for _ in range(2):  # raised again once the valid axes are cached
        with pytest.raises(errors.InvalidArgumentError,
                           match="Axes contains duplicate dimension: 1"):
            sess.run(y, {p: x2, ax: [1, -1]})
    # scalar and empty axes
    np.testing.assert_array_equal(sess.run(y, {p: x2, ax: 1}), [3, 3])
    np.testing.assert_array_equal(sess.run(y, {p: x2, ax: np.zeros(0, np.int32)}), x2)
    assert sess.run(y, {p: x2, ax: [-1, 0]}) == 6


def test_axes_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(reduction_ops, "_AXES_CACHE", {})
    monkeypatch.setattr(reduction_ops, "_AXES_CACHE_LIMIT", 3)
    x = np.zeros((1,) * 6)
    for a in range(6):
        assert reduction_ops._kernel_axes(None, x, np.array([a], np.int32)) == (a,)
    assert len(reduction_ops._AXES_CACHE) == 3
    assert reduction_ops._kernel_axes(None, x, np.array([-1, 0], np.int64)) == (5, 0)


class _Ctx:
    xp = np
    op = None
    attrs = {"keep_dims": False}


@pytest.mark.parametrize("op_type", ["Sum", "Mean", "Max", "Min", "Prod"])
def test_kernels_return_arrays_for_full_reductions(op_type):
    from tensorweave.framework import registry
    fn = registry.get_kernel(op_type).fn
    x0 = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    got = fn(_Ctx(), x0, np.array([0, 1], np.int32))
    assert type(got) is np.ndarray and got.shape == () and got.dtype == np.float32
    want = {"Sum": 78, "Mean": 6.5, "Max": 12, "Min": 1, "Prod": 479001600}[op_type]
    assert got == np.float32(want)
    got = fn(_Ctx(), x0, np.array([1], np.int32))
    assert type(got) is np.ndarray and got.shape == (3,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.float16])
@pytest.mark.parametrize("width", [2, 3, 7])
def test_short_last_axis_sums_are_numpys_bits(sess, dtype, width):
    # a short last axis is summed column by column: the same bits as NumPy's sum
    rng = np.random.RandomState(width)
    x = (rng.randn(64, 32, 20, width) * 10.0 ** rng.randint(-4, 4, (64, 32, 20, width)))
    x = x.astype(dtype)
    p = tf.placeholder(tf.as_dtype(dtype))
    for keep in (False, True):
        got = sess.run(tf.reduce_sum(p, -1, keepdims=keep), {p: x})
        acc = np.float32 if dtype == np.float16 else dtype
        want = np.add.reduce(x, axis=-1, dtype=acc, keepdims=keep).astype(dtype)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    mean = sess.run(tf.reduce_mean(p, axis=[3]), {p: x})
    if dtype in (np.float32, np.float64):
        np.testing.assert_array_equal(mean, np.add.reduce(x, axis=-1) / width)


@pytest.mark.parametrize("op_type,values", [
    ("Sum", np.array([[1.5, -0.0], [np.nan, 3e38]], np.float32)),
    ("Mean", np.array([[7, -3], [0, 1]], np.int32)),
    ("Prod", np.array([1 + 2j, -0.0], np.complex64)),
    ("Max", np.array([np.nan, -np.inf], np.float64)),
    ("Min", np.array([[np.inf, 2.0]], np.float16)),
    ("Any", np.array([True, False])),
    ("All", np.array([[False, True]])),
])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_a_reduction_over_no_axis_is_its_input(sess, op_type, values, keep_dims):
    # each value reduced alone: the input itself, not a copy (TF forwards the buffer)
    from tensorweave.framework import registry
    fn = registry.get_kernel(op_type).fn

    class Ctx:
        xp = np
        attrs = {"keep_dims": keep_dims}
    assert fn(Ctx(), values, np.zeros(0, np.int32)) is values
    reduce = getattr(tf, "reduce_" + op_type.lower())
    got = sess.run(reduce(tf.constant(values), axis=[], keepdims=keep_dims))
    assert got.dtype == values.dtype and got.shape == values.shape
    np.testing.assert_array_equal(got, values)
