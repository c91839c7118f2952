"""Reductions, argmax/argmin and cumsum/cumprod against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient, compute_gradient_error

REDUCTIONS = {
    "sum": (tf.reduce_sum, np.sum),
    "mean": (tf.reduce_mean, np.mean),
    "max": (tf.reduce_max, np.max),
    "min": (tf.reduce_min, np.min),
    "prod": (tf.reduce_prod, np.prod),
}
AXES = [None, 0, -1, 1, (0, 2), [2, 0], [], [-3, -2, -1]]


def _ref(np_fn, x, axis, keepdims):
    ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    if x.dtype == np.float16:
        return np_fn(x.astype(np.float32), axis=ax, keepdims=keepdims).astype(np.float16)
    if np_fn is np.mean and x.dtype.kind == "i":
        s = np.sum(x, axis=ax, keepdims=keepdims)
        n = x.size // max(np.size(s), 1)
        return (np.trunc(s / n)).astype(x.dtype)
    return np.asarray(np_fn(x, axis=ax, keepdims=keepdims)).astype(x.dtype)


@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
def test_reduction_values_and_static_shapes(sess, kind, dtype):
    tf_fn, np_fn = REDUCTIONS[kind]
    x = (np.random.randn(2, 3, 4) * 3).astype(dtype)
    if kind == "prod":
        x = (np.random.rand(2, 3, 4) + 0.5).astype(dtype) if dtype not in (np.int32, np.int64)\
            else np.random.randint(-3, 4, size=(2, 3, 4)).astype(dtype)
    fetches, refs = [], []
    for axis in AXES:
        for keep in (False, True):
            y = tf_fn(tf.constant(x), axis=axis, keepdims=keep)
            ref = _ref(np_fn, x, axis, keep)
            assert y.dtype == tf.as_dtype(dtype)
            assert y.shape.as_list() == list(ref.shape), (axis, keep)
            fetches.append(y)
            refs.append(ref)
    for got, ref in zip(sess.run(fetches), refs):
        assert got.dtype == ref.dtype
        tol = 1e-2 if dtype == np.float16 else 1e-5
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def test_complex_sum_mean_prod(sess):
    x = (np.random.randn(3, 4) + 1j * np.random.randn(3, 4)).astype(np.complex64)
    got = sess.run([tf.reduce_sum(x, 1), tf.reduce_mean(x, 0), tf.reduce_prod(x, 1)])
    np.testing.assert_allclose(got[0], x.sum(1), rtol=1e-5)
    np.testing.assert_allclose(got[1], x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(got[2], x.prod(1), rtol=1e-4)
    assert got[0].dtype == np.complex64


def test_integer_mean_truncates_toward_zero(sess):
    x = np.array([[-1, -2], [3, 4], [-7, 0]], np.int32)
    got = sess.run(tf.reduce_mean(x, 1))
    np.testing.assert_array_equal(got, [-1, 3, -3])
    assert got.dtype == np.int32
    assert sess.run(tf.reduce_mean(np.array([5, 6, 6], np.uint8))) == 5


def test_integer_sum_keeps_dtype_and_wraps(sess):
    x = np.array([2**31 - 1, 1], np.int32)
    got = sess.run(tf.reduce_sum(x))
    assert got.dtype == np.int32 and got == -2**31


def test_empty_reductions(sess):
    e = np.zeros([0, 3], np.float32)
    got = sess.run([tf.reduce_max(e, 0), tf.reduce_min(np.zeros([0], np.int32)),
                    tf.reduce_prod(e), tf.reduce_sum(e, 0), tf.reduce_mean(e),
                    tf.reduce_mean(np.zeros([0], np.int32)), tf.reduce_any(np.zeros([0], bool)),
                    tf.reduce_all(np.zeros([0], bool))])
    np.testing.assert_array_equal(got[0], [-np.inf] * 3)
    assert got[1] == np.iinfo(np.int32).max
    assert got[2] == 1.0
    np.testing.assert_array_equal(got[3], [0, 0, 0])
    assert np.isnan(got[4])
    assert got[5] == 0
    assert got[6] == False and got[7] == True  # noqa: E712


def test_half_precision_accumulates_in_float32(sess):
    ones = np.ones(4096, np.float16)
    assert sess.run(tf.reduce_sum(ones)) == 4096
    assert sess.run(tf.reduce_mean(np.full(8192, 0.1, np.float16))) == np.float16(0.1)
    bf = tf.constant(np.ones(1000), dtype=tf.bfloat16)
    assert float(sess.run(tf.reduce_sum(bf))) == 1000.0


def test_any_all(sess):
    x = np.random.rand(3, 4, 5) > 0.7
    for axis in (None, 0, -1, (0, 2), []):
        for keep in (False, True):
            ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
            a, b = sess.run([tf.reduce_any(x, axis, keepdims=keep),
                             tf.reduce_all(x, axis, keepdims=keep)])
            np.testing.assert_array_equal(a, np.any(x, axis=ax, keepdims=keep))
            np.testing.assert_array_equal(b, np.all(x, axis=ax, keepdims=keep))
            assert a.dtype == np.bool_


STATIC_SHAPE_CASES = [
    # (input shape, axis, keepdims, expected static shape (None: unknown rank))
    ([None, 3, 4], None, False, []),
    ([None, 3, 4], None, True, [1, 1, 1]),
    (None, None, False, []),
    (None, None, True, None),
    (None, 1, False, None),
    ([None, 3, 4], "placeholder", False, None),
    ([None, 3, 4], "placeholder", True, [None, None, None]),
    ([None, 3, 4], -1, False, [None, 3]),
    ([None, 3, 4], [0, 2], True, [1, 3, 1]),
    ([None, 3, 4], [], False, [None, 3, 4]),
    ([None, 3, 4], [0, 0], False, [3, 4]),
]


@pytest.mark.parametrize("shape,axis,keep,expected", STATIC_SHAPE_CASES)
def test_static_shapes_match_tf1(graph, shape, axis, keep, expected):
    x = tf.placeholder(tf.float32, shape)
    if axis == "placeholder":
        axis = tf.placeholder(tf.int32)
    for fn in (tf.reduce_sum, tf.reduce_max, tf.reduce_mean, tf.reduce_prod):
        y = fn(x, axis, keepdims=keep)
        assert (y.shape.ndims is None if expected is None else y.shape.as_list() == expected)


def test_axis_fed_at_run_time_and_unknown_shapes(sess):
    x = tf.placeholder(tf.float32, [None, None])
    ax = tf.placeholder(tf.int32)
    u = tf.placeholder(tf.float32)
    v = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = tf.reduce_sum(x, ax)
    np.testing.assert_array_equal(sess.run(y, {x: v, ax: 1}), v.sum(1))
    np.testing.assert_array_equal(sess.run(y, {x: v, ax: [0, -1]}), v.sum())
    np.testing.assert_array_equal(sess.run(y, {x: v, ax: [[0]]}), v.sum(0))
    np.testing.assert_array_equal(sess.run(tf.reduce_max(u), {u: v}), v.max())
    np.testing.assert_array_equal(sess.run(tf.reduce_mean(u, keepdims=True), {u: v}),
                                  v.mean(keepdims=True))
    ax64 = tf.constant([1], tf.int64)
    y64 = tf.reduce_sum(x, ax64)
    assert y64.op.get_attr("Tidx") == tf.int64
    np.testing.assert_array_equal(sess.run(y64, {x: v}), v.sum(1))


def test_deprecated_aliases(sess):
    x = np.arange(6.0).reshape(2, 3)
    y = tf.reduce_sum(x, reduction_indices=[1], keep_dims=True)
    assert y.shape.as_list() == [2, 1]
    np.testing.assert_array_equal(sess.run(y), x.sum(1, keepdims=True))


def test_names(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.reduce_sum(x).name == "Sum:0"
    assert tf.reduce_mean(x).name == "Mean:0"
    assert tf.reduce_sum(x, name="total").name == "total:0"
    assert tf.reduce_any(tf.placeholder(tf.bool, [2])).name == "Any:0"
    assert tf.argmax(x).name == "ArgMax:0"
    assert tf.cumsum(x).name == "Cumsum:0"
    assert tf.reduce_sum(x).op.type == "Sum"


def test_build_errors(graph):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    with pytest.raises(ValueError, match="Invalid reduction dimension 3 for input with 3 "
                                         "dimensions"):
        tf.reduce_sum(x, 3)
    with pytest.raises(ValueError, match="Invalid reduction dimension -4"):
        tf.reduce_max(x, -4)
    with pytest.raises(ValueError, match="at most rank 1 but is rank 2"):
        tf.reduce_sum(x, [[0]])
    with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and 'axis'"):
        tf.reduce_sum(x, 0, reduction_indices=0)
    with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and 'keepdims'"):
        tf.reduce_sum(x, 0, keepdims=True, keep_dims=True)
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.reduce_sum(x, 1.0)
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.reduce_sum(tf.placeholder(tf.bool, [2]))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.reduce_max(tf.constant([1j]))
    with pytest.raises(TypeError, match="bool"):
        tf.reduce_any(x)
    with pytest.raises(TypeError):
        tf.reduce_sum(tf.constant(["a"]))


def test_run_errors(sess):
    c = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    ax = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Invalid reduction dimension \(5 for input with 2 dimension"):
        sess.run(tf.reduce_sum(c, ax), {ax: 5})
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicate dimension: 0"):
        sess.run(tf.reduce_mean(c, ax), {ax: [0, -2]})


# --- composites -----------------------------------------------------------------------------
def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def test_reduce_logsumexp(sess):
    x = np.random.randn(3, 4) * 50
    for axis in (None, 0, -1, [0, 1]):
        for keep in (False, True):
            y = tf.reduce_logsumexp(x, axis, keepdims=keep)
            ax = tuple(axis) if isinstance(axis, list) else axis
            ref = _logsumexp(x, ax, keep)
            assert y.shape.as_list() == list(ref.shape)
            np.testing.assert_allclose(sess.run(y), ref, rtol=1e-10)
    big = np.array([1000.0, 1000.0], np.float32)
    np.testing.assert_allclose(sess.run(tf.reduce_logsumexp(big)), 1000 + np.log(2), rtol=1e-6)
    got = sess.run(tf.reduce_logsumexp(np.array([[-np.inf, -np.inf], [np.inf, 1.0]]), 1))
    assert got[0] == -np.inf and got[1] == np.inf


def test_reduce_logsumexp_name_and_unknown_rank(sess):
    u = tf.placeholder(tf.float32)
    y = tf.reduce_logsumexp(u)
    assert y.name == "ReduceLogSumExp:0"
    assert y.shape.as_list() == []
    x = np.random.randn(2, 3).astype(np.float32)
    np.testing.assert_allclose(sess.run(y, {u: x}), _logsumexp(x), rtol=1e-5)


def test_count_nonzero(sess):
    x = np.array([[0.0, 1.5, 0.0], [2.0, -1.0, 0.0]])
    y = tf.count_nonzero(x)
    assert y.dtype == tf.int64 and y.name == "count_nonzero/Sum:0"
    assert sess.run(y) == 3
    y1 = tf.count_nonzero(x, axis=1, keepdims=True, dtype=tf.int32)
    assert y1.dtype == tf.int32 and y1.shape.as_list() == [2, 1]
    np.testing.assert_array_equal(sess.run(y1), [[1], [2]])
    assert sess.run(tf.count_nonzero(np.array([True, False, True]))) == 2
    assert sess.run(tf.count_nonzero(tf.constant(["", "a", "bc"]))) == 2
    assert sess.run(tf.count_nonzero(input=np.array([0, 3, 4], np.int32), axis=0)) == 2


def test_moments_and_norm(sess):
    x = np.random.randn(4, 5)
    got = sess.run([tf.math.reduce_variance(x, 1), tf.math.reduce_std(x, 0, keepdims=True),
                    tf.math.reduce_euclidean_norm(x), tf.math.reduce_variance(x)])
    np.testing.assert_allclose(got[0], x.var(1))
    np.testing.assert_allclose(got[1], x.std(0, keepdims=True))
    np.testing.assert_allclose(got[2], np.sqrt((x ** 2).sum()))
    np.testing.assert_allclose(got[3], x.var())
    with pytest.raises(TypeError, match="integer"):
        tf.math.reduce_variance(np.array([1, 2], np.int32))
    # TF's order: the mean first, so a bad axis is the ValueError even for integers
    with pytest.raises(ValueError, match="Invalid reduction dimension 2"):
        tf.math.reduce_std(np.array([[1, 2]], np.int32), axis=2)


def test_variance_squares_deviations_as_tf_does(sess):
    # real: Square(x - mean), no Abs before it (TF 2.21's graph); complex: conj(d) * d
    with tf.Graph().as_default():
        tf.math.reduce_variance(tf.placeholder(tf.float32, [3, 4]), 1)
        types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "Square" in types and "Abs" not in types
    z = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]], np.complex64)
    got = sess.run(tf.math.reduce_variance(z, 0))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.var(z, 0), rtol=1e-6)


# --- argmax / argmin ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16,
                                   np.uint8])
def test_argmax_argmin(sess, dtype):
    x = np.random.randint(0, 5, size=(3, 4, 5)).astype(dtype)  # many ties: first index wins
    fetches, refs = [], []
    for axis in (0, 1, 2, -1):
        fetches += [tf.argmax(x, axis), tf.argmin(x, axis)]
        refs += [np.argmax(x, axis), np.argmin(x, axis)]
    for got, ref in zip(sess.run(fetches), refs):
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, ref)


def test_argmax_options_and_shapes(sess):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.argmax(x).shape.as_list() == [3, 4]  # axis defaults to 0
    assert tf.argmax(x, -1).shape.as_list() == [None, 3]
    assert tf.argmax(x, tf.placeholder(tf.int32)).shape.as_list() == [None, None]
    assert tf.argmax(tf.placeholder(tf.float32)).shape.ndims is None
    assert tf.argmax(x, 1, output_type=tf.int32).dtype == tf.int32
    assert tf.argmin(x, dimension=1).shape.as_list() == [None, 4]
    v = np.random.rand(2, 3, 4).astype(np.float32)
    got = sess.run(tf.argmax(x, 2, output_type=tf.int32), {x: v})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, v.argmax(2))
    b = np.array([[False, True], [True, True]])
    np.testing.assert_array_equal(sess.run(tf.argmax(b, 1)), [1, 0])
    np.testing.assert_array_equal(sess.run(tf.arg_max(v, 1)), v.argmax(1))
    np.testing.assert_array_equal(sess.run(tf.arg_min(v, 0)), v.argmin(0))


def test_argmax_errors(sess):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    with pytest.raises(ValueError, match=r"Dimension \(3\) must be in the range \[-3, 3\)"):
        tf.argmax(x, 3)
    with pytest.raises(ValueError, match="Cannot specify both 'dimension' and 'axis'"):
        tf.argmax(x, 1, dimension=1)
    with pytest.raises(TypeError, match="axis must be int"):
        tf.argmax(x, [1])
    # TF checks argmin's Python axis only in the op: a list is the shape function's
    # ValueError, a float the op's TypeError
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.argmin(x, [1])
    with pytest.raises(TypeError, match="DataType float32 not in list"):
        tf.argmin(x, 1.0)
    with pytest.raises(TypeError, match="output_type"):
        tf.argmax(x, 1, output_type=tf.float32)
    for complex_dtype in (tf.complex64, tf.complex128):  # TF has no complex ArgMax/ArgMin
        with pytest.raises(TypeError, match="DataType %s not in list" % complex_dtype.name):
            tf.argmax(tf.constant([1, 2], complex_dtype))
        with pytest.raises(TypeError, match="DataType %s not in list" % complex_dtype.name):
            tf.argmin(tf.constant([1, 2], complex_dtype))
    ax = tf.placeholder(tf.int32)
    c = tf.constant(np.ones((2, 3), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected dimension in the range \[-2, 2\), but got 3"):
        sess.run(tf.argmax(c, ax), {ax: 3})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Reduction axis 0 is empty in "
                                                             r"shape \[0,3\]"):
        sess.run(tf.argmax(np.zeros([0, 3], np.float32)))


# --- cumsum / cumprod ----------------------------------------------------------------------------
def _scan_ref(fn, x, axis, exclusive, reverse):
    y = np.flip(x, axis) if reverse else x
    out = fn(y, axis=axis, dtype=x.dtype)
    if exclusive:
        ident = np.ones_like if fn is np.cumprod else np.zeros_like
        first = ident(np.take(out, [0], axis=axis))
        out = np.concatenate([first, np.delete(out, -1, axis=axis)], axis=axis)
    return (np.flip(out, axis) if reverse else out).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64])
def test_cumsum_cumprod(sess, dtype):
    x = (np.random.rand(3, 4, 2) * 2 + 0.5).astype(dtype)
    if np.dtype(dtype).kind == "i":
        x = np.random.randint(-3, 4, size=(3, 4, 2)).astype(dtype)
    fetches, refs = [], []
    for tf_fn, np_fn in ((tf.cumsum, np.cumsum), (tf.cumprod, np.cumprod)):
        for axis in (0, 1, -1):
            for exclusive in (False, True):
                for reverse in (False, True):
                    y = tf_fn(x, axis, exclusive=exclusive, reverse=reverse)
                    assert y.shape.as_list() == [3, 4, 2]
                    fetches.append(y)
                    refs.append(_scan_ref(np_fn, x, axis % 3, exclusive, reverse))
    for got, ref in zip(sess.run(fetches), refs):
        assert got.dtype == ref.dtype
        np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_cumsum_known_values_and_errors(sess):
    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(tf.cumsum(c, 1, exclusive=True, reverse=True)),
                                  [[3, 2, 0], [9, 5, 0]])
    np.testing.assert_array_equal(sess.run(tf.cumprod(c, 0, exclusive=True)),
                                  [[1, 1, 1], [0, 1, 2]])
    assert tf.cumsum(tf.placeholder(tf.float32)).shape.ndims is None
    ax = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected scan axis in the range \[-2, 2\), but got 3"):
        sess.run(tf.cumsum(c, ax), {ax: 3})
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis must be a scalar"):
        sess.run(tf.cumsum(c, ax), {ax: [1]})
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.cumsum(np.array([True]))
    assert sess.run(tf.cumsum(np.ones(2048, np.float16)))[-1] == 2048


def test_exports():
    assert tf.math.reduce_sum is tf.reduce_sum
    assert tf.math.reduce_logsumexp is tf.reduce_logsumexp
    assert tf.math.count_nonzero is tf.count_nonzero
    assert tf.math.argmax is tf.argmax and tf.math.argmin is tf.argmin
    assert tf.math.cumsum is tf.cumsum and tf.math.cumprod is tf.cumprod
    for n in ("reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
              "reduce_all"):
        assert getattr(tf.math, n) is getattr(tf, n)


# --- gradients ------------------------------------------------------------------------------
def _grad_err(build, shape, x_init=None, feed=None, x_shape=None):
    x = tf.placeholder(tf.float64, x_shape if x_shape is not None else shape)
    y = build(x)
    y_shape = y.shape.as_list() if y.shape.is_fully_defined() else None
    if y_shape is None:
        with tf.Session() as s:
            init = x_init if x_init is not None else np.random.rand(*shape)
            y_shape = list(s.run(y, {x: init, **(feed or {})}).shape)
    return compute_gradient_error(x, shape, y, y_shape, x_init_value=x_init,
                                  extra_feed_dict=feed)


@pytest.mark.parametrize("fn", [tf.reduce_sum, tf.reduce_mean, tf.reduce_prod])
@pytest.mark.parametrize("axis,keep", [(None, False), (1, False), (-1, True), ([0, 2], False),
                                       ([0, 2], True), ([], False)])
def test_sum_mean_prod_gradients(graph, fn, axis, keep):
    x0 = np.random.rand(2, 3, 4) + 0.5
    err = _grad_err(lambda x: fn(x, axis, keepdims=keep), [2, 3, 4], x0)
    assert err < 1e-6


@pytest.mark.parametrize("fn", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_prod])
def test_reduction_gradients_unknown_dims(graph, fn):
    x0 = np.random.rand(3, 4) + 0.5
    err = _grad_err(lambda x: fn(x, 1), [3, 4], x0, x_shape=[None, 4])
    assert err < 1e-6
    err = _grad_err(lambda x: fn(x, 0, keepdims=True), [3, 4], x0, x_shape=[None, None])
    assert err < 1e-6


@pytest.mark.parametrize("fn", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max])
def test_reduction_gradients_runtime_axes(graph, fn):
    ax = tf.placeholder(tf.int32)
    x0 = np.random.rand(3, 4, 2) + 0.5
    for axis_value, keep in (([0, 2], False), (-2, True)):
        err = _grad_err(lambda x: fn(x, ax, keepdims=keep), [3, 4, 2], x0,
                        feed={ax: axis_value}, x_shape=None)
        assert err < 1e-6


def test_max_min_gradient_splits_ties(sess):
    x = tf.placeholder(tf.float64, [2, 3])
    v = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    gmax = tf.gradients(tf.reduce_max(x, 1), x)[0]
    gmin = tf.gradients(tf.reduce_min(x), x)[0]
    np.testing.assert_allclose(sess.run(gmax, {x: v}), [[0, .5, .5], [1 / 3] * 3])
    np.testing.assert_allclose(sess.run(gmin, {x: v}), [[1, 0, 0], [0, 0, 0]])
    for fn in (tf.reduce_max, tf.reduce_min):
        err = _grad_err(lambda t: fn(t, [0, 2], keepdims=True), [2, 3, 4])
        assert err < 1e-6


def test_prod_gradient_with_zeros(sess):
    x = tf.placeholder(tf.float64, [3, 3])
    v = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    g = sess.run(tf.gradients(tf.reduce_prod(x, 1), x)[0], {x: v})
    np.testing.assert_allclose(g, [[0, 6, 0], [0, 0, 0], [8, 4, 2]])
    g0 = sess.run(tf.gradients(tf.reduce_prod(x), x)[0], {x: v})
    np.testing.assert_allclose(g0, np.zeros((3, 3)))
    assert compute_gradient_error(x, [3, 3], tf.reduce_prod(x, 0), [3], x_init_value=v) < 1e-6


def test_prod_gradient_with_axes_computed_at_run_time(sess):
    # more cases in test_reduction_grad.py
    x = tf.placeholder(tf.float64, [2, 3])
    ax = tf.placeholder(tf.int32)
    (g,) = tf.gradients(tf.reduce_prod(x, ax), x)
    x0 = np.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_allclose(sess.run(g, {x: x0, ax: 1}), x0.prod(1, keepdims=True) / x0)


def test_logsumexp_and_variance_gradients(graph):
    assert _grad_err(lambda x: tf.reduce_logsumexp(x, 1), [3, 4]) < 1e-6
    assert _grad_err(lambda x: tf.reduce_logsumexp(x, keepdims=True), [3, 4]) < 1e-6
    assert _grad_err(lambda x: tf.math.reduce_variance(x, 0), [3, 4]) < 1e-6
    assert _grad_err(lambda x: tf.math.reduce_euclidean_norm(x, 1), [3, 4]) < 1e-6


@pytest.mark.parametrize("fn", [tf.cumsum, tf.cumprod])
@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_scan_gradients(graph, fn, exclusive, reverse):
    x0 = np.random.rand(3, 4) + 0.5
    err = _grad_err(lambda x: fn(x, 1, exclusive=exclusive, reverse=reverse), [3, 4], x0)
    assert err < 1e-6


def test_mean_gradient_value(sess):
    x = tf.placeholder(tf.float32, [None, 4])
    g = tf.gradients(tf.reduce_mean(x), x)[0]
    np.testing.assert_allclose(sess.run(g, {x: np.ones((2, 4), np.float32)}),
                               np.full((2, 4), 1 / 8))


def test_theoretical_jacobian_of_sum(graph):
    x = tf.placeholder(tf.float64, [2, 3])
    theo, _ = compute_gradient(x, [2, 3], tf.reduce_sum(x, 0), [3])
    np.testing.assert_array_equal(theo, np.tile(np.eye(3), (2, 1)))


def test_integer_mean_accumulates_in_64_bits_and_truncates(sess):
    # TF 2.21's values: a uint8 image's mean is not its wrapped sum's; int64 sums wrap
    got = sess.run([tf.reduce_mean(tf.constant(np.full((4, 4, 3), 200, np.uint8))),
                    tf.reduce_mean(tf.constant([2 ** 30] * 3)),
                    tf.reduce_mean(tf.constant([30000, 30000], tf.int16)),
                    tf.reduce_mean(tf.constant([[250, 255], [1, 2]], tf.uint8), axis=1),
                    tf.reduce_mean(tf.constant([-1, 0])), tf.reduce_mean(tf.constant([-3, 0])),
                    tf.reduce_mean(tf.constant([2 ** 62, 2 ** 62], tf.int64))])
    assert [np.asarray(g).tolist() for g in got] == [
        200, 2 ** 30, 30000, [252, 1], 0, -1, -2 ** 62]
    assert got[0].dtype == np.uint8 and got[3].dtype == np.uint8


def test_argmax_and_argmin_skip_nans_as_tf(sess):
    # TF 2.21's results: a NaN never wins; an all-NaN slice gives 0
    x = tf.constant([[np.nan, np.nan, np.nan], [np.nan, 1.0, np.nan],
                     [-np.inf, np.nan, -np.inf], [np.inf, np.nan, 1.0],
                     [1.0, np.nan, 5.0], [np.nan, 2.0, 3.0]])
    got = sess.run([tf.argmax(x, 1), tf.argmin(x, 1)])
    assert [g.tolist() for g in got] == [[0, 1, 0, 0, 2, 2], [0, 1, 0, 2, 0, 1]]


def test_reduce_euclidean_norm_of_integers_truncates(sess):
    x = tf.constant([[1, 1], [3, 4]])
    norm = tf.math.reduce_euclidean_norm(x, axis=1)
    assert norm.dtype == tf.int32
    assert sess.run(norm).tolist() == [1, 5]  # sqrt(2) truncates, as TF's kernel
    assert sess.run(tf.math.reduce_euclidean_norm(x)) == 5  # sqrt(27) = 5.196
