"""Elementwise binary ops: values vs NumPy, broadcasting, dtype rules, errors, gradients."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int32, np.int64]
COMPLEX = [np.complex64, np.complex128]


def _floor_div_ref(x, y):
    if np.dtype(x.dtype).kind in "iu":
        return np.floor_divide(x, y)
    return np.floor(x / y)


def _trunc_div_ref(x, y):
    if np.dtype(x.dtype).kind in "iu":
        return (np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))).astype(x.dtype)
    return np.trunc(x / y)


def _sqdiff_ref(x, y):
    d = x - y
    return d * np.conj(d)


# name, builder, reference, dtypes, divisor-like second operand (nonzero)
_CASES = [
    ("add", tf.add, np.add, FLOATS + INTS + COMPLEX + [np.uint8, np.int8], False),
    ("subtract", tf.subtract, np.subtract, FLOATS + INTS + COMPLEX + [np.uint8], False),
    ("multiply", tf.multiply, np.multiply, FLOATS + INTS + COMPLEX + [np.int16], False),
    ("realdiv", tf.realdiv, np.true_divide, FLOATS + COMPLEX, True),
    ("floordiv", tf.floordiv, _floor_div_ref, FLOATS + INTS + [np.uint8], True),
    ("floormod", tf.floormod, np.remainder, FLOATS + INTS + [np.uint8], True),
    ("truncatediv", tf.truncatediv, _trunc_div_ref, FLOATS + INTS, True),
    ("truncatemod", tf.truncatemod, np.fmod, FLOATS + INTS, True),
    ("pow", tf.pow, np.power, FLOATS + COMPLEX, False),
    ("maximum", tf.maximum, np.maximum, FLOATS + INTS + [np.uint8], False),
    ("minimum", tf.minimum, np.minimum, FLOATS + INTS + [np.uint16], False),
    ("squared_difference", tf.squared_difference, _sqdiff_ref, FLOATS + INTS + COMPLEX,
     False),
    ("div_no_nan", tf.div_no_nan, np.true_divide, FLOATS + COMPLEX, True),
]


def _operands(dtype, nonzero, pow_safe=False):
    rng = np.random.RandomState(1)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        lo = 0 if kind == "u" else -20
        x = rng.randint(lo, 20, size=(3, 4)).astype(dtype)
        y = rng.randint(1 if kind == "u" else -6, 7, size=(4,)).astype(dtype)
        if nonzero:
            y[y == 0] = 3
        return x, y
    x = rng.uniform(-5, 5, size=(3, 4))
    y = rng.uniform(-3, 3, size=(4,))
    if pow_safe:
        x = np.abs(x) + 0.5
    if nonzero:
        y = np.where(np.abs(y) < 0.3, 1.5, y)
    if kind == "c":
        x = x + 1j * rng.uniform(-2, 2, size=(3, 4))
        y = y + 1j * rng.uniform(-2, 2, size=(4,))
    return x.astype(dtype), y.astype(dtype)


@pytest.mark.parametrize("name,fn,ref,dtypes,nonzero", _CASES, ids=[c[0] for c in _CASES])
def test_values_match_numpy_with_broadcasting(sess, name, fn, ref, dtypes, nonzero):
    for dtype in dtypes:
        x, y = _operands(dtype, nonzero, pow_safe=name == "pow")
        z = fn(tf.constant(x), tf.constant(y))
        assert z.dtype == tf.as_dtype(dtype)
        assert z.shape.as_list() == [3, 4]
        out = sess.run(z)
        assert out.dtype == np.dtype(dtype), (name, dtype)
        kind = np.dtype(dtype).kind
        if kind in "iu":
            np.testing.assert_array_equal(out, ref(x, y), err_msg="%s %s" % (name, dtype))
            continue
        wide = np.complex128 if kind == "c" else np.float64
        expect = ref(x.astype(wide), y.astype(wide))
        tol = {np.float16: 4e-3, np.float32: 1e-5, np.complex64: 1e-5}.get(dtype, 1e-12)
        if dtype == np.float16 and name in ("floordiv", "floormod", "truncatemod",
                                            "truncatediv"):
            # float16 rounding of x / y can move a value across an integer boundary
            expect = ref(x, y).astype(np.float64)
        np.testing.assert_allclose(out.astype(wide), expect, rtol=tol, atol=tol * 10,
                                   err_msg="%s %s" % (name, dtype))


@pytest.mark.parametrize("fn,ref", [(tf.equal, np.equal), (tf.not_equal, np.not_equal),
                                    (tf.less, np.less), (tf.less_equal, np.less_equal),
                                    (tf.greater, np.greater),
                                    (tf.greater_equal, np.greater_equal)])
def test_comparisons(sess, fn, ref):
    for dtype in [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8]:
        x = np.array([[1, 2, 3], [3, 2, 1]], dtype=dtype)
        y = np.array([2, 2, 2], dtype=dtype)
        z = fn(tf.constant(x), tf.constant(y))
        assert z.dtype == tf.bool and z.shape.as_list() == [2, 3]
        np.testing.assert_array_equal(sess.run(z), ref(x, y))


def test_equality_of_strings_and_complex(sess):
    s = tf.constant(["a", "b"])
    assert sess.run(tf.equal(s, "a")).tolist() == [True, False]
    c = tf.constant([1 + 1j, 2j])
    assert sess.run(tf.not_equal(c, 2j)).tolist() == [True, False]
    with pytest.raises(TypeError):
        tf.less(c, c)


def test_logical_ops(sess):
    a = tf.constant([True, True, False, False])
    b = tf.constant([True, False, True, False])
    assert sess.run(tf.logical_and(a, b)).tolist() == [True, False, False, False]
    assert sess.run(tf.logical_or(a, b)).tolist() == [True, True, True, False]
    xor = tf.logical_xor(a, b)
    assert xor.op.name == "LogicalXor"
    assert sess.run(xor).tolist() == [False, True, True, False]
    with pytest.raises(TypeError):
        tf.logical_and(tf.constant([1]), tf.constant([1]))


def test_string_add_concatenates(sess):
    z = tf.add(tf.constant(["a", "b"]), tf.constant("c"))
    assert z.op.type == "Add" and z.dtype == tf.string
    assert sess.run(z).tolist() == [b"ac", b"bc"]
    assert tf.add(tf.constant([1.0]), 1.0).op.type == "AddV2"


def test_two_scalar_strings_added_feed_string_ops(sess):
    # a scalar sum is a string tensor like any other (it was a bare bytes object, which
    # string kernels failed on with an InternalError)
    joined = tf.constant("ab") + tf.constant("c1")
    got = sess.run([joined, tf.strings.length(joined), tf.strings.upper(joined),
                    tf.strings.regex_replace(joined, "b", "-")])
    assert got == [b"abc1", 4, b"ABC1", b"a-c1"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert"):
        sess.run(tf.strings.to_number(joined))


@pytest.mark.parametrize("dtype", FLOATS + INTS + COMPLEX + [ml_dtypes.bfloat16, np.uint8])
def test_raw_add_op_adds_numbers_in_their_dtype(sess, dtype):
    # the Add op (imported graphs; tf.add builds AddV2 for numbers) is numeric addition
    from tensorweave.framework.op_builder import apply_op
    x = np.array([[1, 2, 3], [4, 5, 6]]).astype(dtype)
    y = np.array([10, 20, 30]).astype(dtype)
    z = apply_op("Add", [x, y], {}, name="Add").outputs[0]
    out = sess.run(z)
    assert out.dtype == np.dtype(dtype) and out.shape == (2, 3)
    np.testing.assert_array_equal(out, x + y)
    s = apply_op("Add", [np.array([b"a", b"b"], dtype=object), b"c"], {}).outputs[0]
    assert sess.run(s).tolist() == [b"ac", b"bc"]


def test_static_shapes_broadcast_with_unknown_dims(graph):
    a = tf.placeholder(tf.float32, [2, None])
    assert tf.add(a, tf.zeros([3, 1, 1])).shape.as_list() == [3, 2, None]
    b = tf.placeholder(tf.float32, [None, 3])
    assert tf.multiply(b, tf.placeholder(tf.float32, [2, 1])).shape.as_list() == [2, 3]
    assert tf.add(a, tf.placeholder(tf.float32)).shape.ndims is None
    assert tf.less(a, 1.0).shape.as_list() == [2, None]
    assert tf.maximum(tf.placeholder(tf.float32, [None]),
                      tf.placeholder(tf.float32, [None])).shape.as_list() == [None]


def test_incompatible_static_shapes_raise_value_error(graph):
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.add(tf.zeros([2, 3]), tf.zeros([4]))
    with pytest.raises(ValueError):
        tf.equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))


def test_incompatible_shapes_at_run_time(sess):
    a = tf.placeholder(tf.float32, [None])
    b = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs"):
        sess.run(tf.add(a, b), {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})
    eq = tf.equal(a, b)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        sess.run(eq, {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})


def test_mixed_dtypes_are_type_errors(graph):
    f = tf.placeholder(tf.float32, [2])
    i = tf.placeholder(tf.int32, [2])
    with pytest.raises(TypeError, match="does not match"):
        tf.add(f, i)
    with pytest.raises(TypeError):
        tf.multiply(i, 2.5)
    with pytest.raises(TypeError):
        tf.subtract(f, tf.placeholder(tf.float64, [2]))
    with pytest.raises(TypeError):
        tf.truediv(i, f)
    with pytest.raises(TypeError):
        tf.maximum(tf.constant([True]), tf.constant([False]))


def test_python_scalars_take_the_tensor_dtype(sess):
    f = tf.constant([1.0, 2.0], tf.float16)
    z = tf.add(f, 1)
    assert z.dtype == tf.float16
    assert tf.multiply(tf.constant([1, 2], tf.int64), 3).dtype == tf.int64
    assert sess.run(tf.subtract(10, tf.constant([1, 2], tf.int64))).tolist() == [9, 8]


@pytest.mark.parametrize("dtype,expect", [(tf.int8, tf.float32), (tf.uint8, tf.float32),
                                          (tf.int16, tf.float32), (tf.uint16, tf.float32),
                                          (tf.int32, tf.float64), (tf.int64, tf.float64),
                                          (tf.float16, tf.float16), (tf.float32, tf.float32),
                                          (tf.complex64, tf.complex64)])
def test_truediv_casts_integers(sess, dtype, expect):
    z = tf.truediv(tf.constant([1, 3], dtype), tf.constant(2, dtype))
    assert z.dtype == expect and z.op.type == "RealDiv" and z.op.name == "truediv"
    np.testing.assert_allclose(sess.run(z), [0.5, 1.5])
    assert tf.divide(tf.constant([1, 3], dtype), tf.constant(2, dtype)).dtype == expect


def test_truediv_of_bool_is_type_error(graph):
    with pytest.raises(TypeError, match="Invalid dtype"):
        tf.truediv(tf.constant([True]), tf.constant([True]))


def test_div_is_floor_for_ints_and_real_for_floats(sess):
    zi = tf.div(tf.constant([-7, 7]), tf.constant(2))
    assert zi.op.type == "FloorDiv" and zi.dtype == tf.int32 and zi.op.name == "div"
    assert sess.run(zi).tolist() == [-4, 3]
    zf = tf.div(tf.constant([-7.0, 7.0]), 2.0)
    assert zf.op.type == "RealDiv"
    assert sess.run(zf).tolist() == [-3.5, 3.5]


def test_signed_division_semantics(sess):
    x = tf.constant([-7, 7, -7, 7])
    y = tf.constant([2, -2, -2, 2])
    fd, fm, td, tm = sess.run([tf.floordiv(x, y), tf.floormod(x, y), tf.truncatediv(x, y),
                               tf.truncatemod(x, y)])
    assert fd.tolist() == [-4, -4, 3, 3]
    assert fm.tolist() == [1, -1, -1, 1]
    assert td.tolist() == [-3, -3, 3, 3]
    assert tm.tolist() == [-1, 1, -1, 1]
    xf = tf.constant([-7.0, 7.0, -7.0, 7.0, 5.0])
    yf = tf.constant([2.0, -2.0, -2.0, 2.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod, div = sess.run([tf.floormod(xf, yf), tf.floordiv(xf, yf)])
    assert mod[:4].tolist() == [1, -1, -1, 1] and np.isnan(mod[4])
    assert div.tolist() == [-4, -4, 3, 3, np.inf]
    assert sess.run(tf.floordiv(tf.constant([-2**31]), -1)).tolist() == [-2**31]


@pytest.mark.parametrize("fn, dtype", [
    (fn, dtype) for fn in (tf.floordiv, tf.floormod, tf.truncatediv, tf.truncatemod, tf.div)
    for dtype in (tf.int32, tf.int64, tf.uint8)
    if not (fn is tf.truncatemod and dtype is tf.uint8)])  # TF has no uint8 TruncateMod
def test_integer_division_by_zero(sess, fn, dtype):
    z = fn(tf.constant([1, 2], dtype), tf.constant([0, 1], dtype))
    if fn in (tf.truncatediv, tf.truncatemod):
        # TF 2.21's TruncateDiv and TruncateMod kernels do not check the divisor: its
        # binary-op kernel reports the failure as an internal error
        with pytest.raises(tf.errors.InternalError, match="only integer div and mod"):
            sess.run(z)
        return
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        sess.run(z)


def test_float_division_by_zero_is_quiet(sess):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sess.run(tf.constant([1.0, -1.0, 0.0]) / 0.0)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


def test_integer_pow(sess):
    assert sess.run(tf.pow(tf.constant([2, 3]), tf.constant([10, 2]))).tolist() == [1024, 9]
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        sess.run(tf.pow(tf.constant([2, 3]), tf.constant([-1, 2])))
    out = sess.run(tf.pow(tf.constant([0.0, 0.0, 2.0]), tf.constant([0.0, -1.0, 0.5])))
    np.testing.assert_allclose(out, [1.0, np.inf, np.sqrt(2.0)])


def test_maximum_minimum_propagate_nan(sess):
    a = tf.constant([np.nan, 1.0])
    b = tf.constant([1.0, np.nan])
    assert np.isnan(sess.run(tf.maximum(a, b))).all()
    assert np.isnan(sess.run(tf.minimum(a, b))).all()


def test_div_no_nan(sess):
    out = sess.run(tf.div_no_nan(tf.constant([1.0, 2.0, 0.0]), tf.constant([0.0, 4.0, 0.0])))
    assert out.tolist() == [0.0, 0.5, 0.0]
    assert tf.math.divide_no_nan is tf.div_no_nan


def test_exports():
    both = ["add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod",
            "pow", "maximum", "minimum", "squared_difference", "equal", "not_equal", "less",
            "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
            "logical_xor"]
    for name in both:
        assert getattr(tf, name) is getattr(tf.math, name), name
    for name in ("realdiv", "div", "truncatediv", "truncatemod"):
        assert callable(getattr(tf, name))
    assert tf.mod is tf.floormod


@pytest.mark.parametrize("fn", [tf.add, tf.subtract, tf.multiply, tf.realdiv, tf.floordiv,
                                tf.floormod, tf.truncatediv, tf.truncatemod, tf.pow,
                                tf.maximum, tf.squared_difference, tf.div_no_nan, tf.equal,
                                tf.less])
def test_scalars(sess, fn):
    for dtype in (np.float32, np.float64, np.int32):
        if fn is tf.div_no_nan and dtype is np.int32:
            continue
        x, y = dtype(7), dtype(2)
        out = sess.run(fn(tf.constant(x), tf.constant(y)))
        assert np.shape(out) == ()
        if out.dtype != np.bool_:
            assert out.dtype == np.dtype(dtype)


def test_inputs_are_not_mutated(sess):
    a = tf.placeholder(tf.float64, [3])
    b = tf.placeholder(tf.float64, [3])
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([2.0, 0.5, -1.0])
    ak, bk = av.copy(), bv.copy()
    sess.run([a + b, a * b, a / b, a // b, a % b, a ** 2, tf.maximum(a, b),
              tf.squared_difference(a, b)], {a: av, b: bv})
    np.testing.assert_array_equal(av, ak)
    np.testing.assert_array_equal(bv, bk)


# --- BroadcastGradientArgs ---------------------------------------------------------------
@pytest.mark.parametrize("s0,s1,r0,r1", [([1], [1], [], []), ([2, 3], [3], [], [0]),
                                         ([2, 1, 4], [3, 1], [1], [0, 2]),
                                         ([], [2, 2], [0, 1], []),
                                         ([1, 1], [1], [0, 1], [0, 1]),
                                         ([0, 3], [1, 3], [], [0])])
def test_broadcast_gradient_args(sess, s0, s1, r0, r1):
    from tensorweave.ops.math.math_grad_util import broadcast_gradient_args
    a, b = broadcast_gradient_args(tf.constant(s0, tf.int32, shape=[len(s0)]),
                                   tf.constant(s1, tf.int32, shape=[len(s1)]))
    out = sess.run([a, b])
    assert out[0].tolist() == r0 and out[1].tolist() == r1
    assert out[0].dtype == np.int32


def test_broadcast_gradient_args_incompatible(sess):
    from tensorweave.ops.math.math_grad_util import broadcast_gradient_args
    a, _ = broadcast_gradient_args(tf.constant([2, 3]), tf.constant([4]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\]"):
        sess.run(a)


# --- gradients ----------------------------------------------------------------------------
_GRAD_CASES = [
    ("add", tf.add), ("subtract", tf.subtract), ("multiply", tf.multiply),
    ("realdiv", tf.realdiv), ("truediv", tf.truediv), ("pow", tf.pow),
    ("maximum", tf.maximum), ("minimum", tf.minimum),
    ("squared_difference", tf.squared_difference), ("floormod", tf.floormod),
    ("div_no_nan", tf.div_no_nan),
]


def _grad_inputs(xs, ys):
    rng = np.random.RandomState(2)
    x = rng.uniform(0.5, 2.0, size=xs)
    y = rng.uniform(0.5, 2.0, size=ys)
    return x, y


def _check(fn, xs, ys, zs, feed_shapes=None):
    xv, yv = _grad_inputs(xs, ys)
    x = tf.placeholder(tf.float64, feed_shapes[0] if feed_shapes else xs)
    y = tf.placeholder(tf.float64, feed_shapes[1] if feed_shapes else ys)
    z = fn(x, y)
    ex = compute_gradient_error(x, xs, z, zs, x_init_value=xv, delta=1e-6,
                                extra_feed_dict={y: yv})
    ey = compute_gradient_error(y, ys, z, zs, x_init_value=yv, delta=1e-6,
                                extra_feed_dict={x: xv})
    return ex, ey


@pytest.mark.parametrize("name,fn", _GRAD_CASES, ids=[c[0] for c in _GRAD_CASES])
def test_gradient_same_shape(graph, name, fn):
    ex, ey = _check(fn, [2, 3], [2, 3], [2, 3])
    assert ex < 1e-6 and ey < 1e-6, (name, ex, ey)


@pytest.mark.parametrize("name,fn", _GRAD_CASES, ids=[c[0] for c in _GRAD_CASES])
def test_gradient_static_broadcast(graph, name, fn):
    ex, ey = _check(fn, [2, 1, 3], [4, 1], [2, 4, 3])
    assert ex < 1e-6 and ey < 1e-6, (name, ex, ey)


@pytest.mark.parametrize("name,fn", _GRAD_CASES, ids=[c[0] for c in _GRAD_CASES])
def test_gradient_dynamic_broadcast(graph, name, fn):
    ex, ey = _check(fn, [2, 3], [3], [2, 3], feed_shapes=([None, None], [None]))
    assert ex < 1e-6 and ey < 1e-6, (name, ex, ey)


def test_unbroadcast_adds_no_op_for_equal_static_shapes(graph):
    from tensorweave.ops.math.math_grad_util import unbroadcast
    x = tf.placeholder(tf.float32, [2, 3])
    g = tf.placeholder(tf.float32, [2, 3])
    n = len(graph.get_operations())
    gx, gy = unbroadcast(g, x, tf.placeholder(tf.float32, [2, 3]))
    assert gx is g and gy is g
    assert len(graph.get_operations()) == n + 1  # only the placeholder above
    gx, gy = unbroadcast(g, x, tf.placeholder(tf.float32, [3]))
    assert gx is g and gy.shape.as_list() == [3]
    assert unbroadcast(None, x, x) == (None, None)


def test_dynamic_unbroadcast_uses_broadcast_gradient_args(graph):
    x = tf.placeholder(tf.float64, [None, 3])
    y = tf.placeholder(tf.float64, [3])
    gx, gy = tf.gradients(x * y, [x, y])
    types = {op.type for op in graph.get_operations()}
    assert "BroadcastGradientArgs" in types
    with tf.Session() as s:
        out = s.run(gy, {x: np.ones([4, 3]), y: np.ones(3)})
    assert out.tolist() == [4.0, 4.0, 4.0]


def test_pow_gradient_at_zero(sess):
    x = tf.constant([0.0, 0.0, 2.0, -1.0], tf.float64)
    y = tf.constant([0.0, 2.0, 0.0, 2.0], tf.float64)
    gx, gy = sess.run(tf.gradients(tf.pow(x, y), [x, y]))
    # d/dy is 0 where x <= 0 (log undefined); d/dx follows y * x^(y-1)
    np.testing.assert_allclose(gy, [0.0, 0.0, np.log(2.0), 0.0])
    assert np.isnan(gx[0]) and gx[1:].tolist() == [0.0, 0.0, -2.0]


def test_maximum_minimum_gradient_ties(sess):
    x = tf.constant([0.0, 0.0, 2.0, -1.0], tf.float64)
    y = tf.constant([0.0, 2.0, 0.0, 2.0], tf.float64)
    mx, my = sess.run(tf.gradients(tf.maximum(x, y), [x, y]))
    nx, ny = sess.run(tf.gradients(tf.minimum(x, y), [x, y]))
    assert mx.tolist() == [1, 0, 1, 0] and my.tolist() == [0, 1, 0, 1]
    assert nx.tolist() == [1, 1, 0, 1] and ny.tolist() == [0, 0, 1, 0]


def test_non_differentiable_binary_ops(graph):
    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [2])
    assert tf.gradients(tf.floordiv(x, y), [x, y]) == [None, None]
    assert tf.gradients(tf.truncatediv(x, y), [x, y]) == [None, None]
    assert tf.gradients(tf.cast(tf.less(x, y), tf.float64), [x, y]) == [None, None]
    # as in TF: gradient functions giving None (not NotDifferentiable), like Floor's
    from tensorweave.framework import registry
    for op_type in ("FloorDiv", "TruncateDiv"):
        found, fn = registry.get_gradient(op_type)
        assert found and fn is not None


def test_truncatemod_gradient(sess):
    # TF1 has none (LookupError); it is FloorMod's with truncation: d/dy = -trunc(x / y)
    x = tf.constant([-3.5, 3.5, 7.25], tf.float64)
    y = tf.constant([2.0, -2.0, 2.0], tf.float64)
    gx, gy = sess.run(tf.gradients(tf.truncatemod(x, y), [x, y]))
    assert gx.tolist() == [1.0, 1.0, 1.0]
    assert gy.tolist() == [1.0, 1.0, -3.0]


def test_complex_multiply_gradient(sess):
    x = tf.constant([1 + 2j], tf.complex128)
    y = tf.constant([3 - 1j], tf.complex128)
    with pytest.raises(TypeError, match="Gradients of complex tensors .* must set grad_ys"):
        tf.gradients(x * y, [x, y])  # TF: complex ys need an explicit direction
    gx, gy = sess.run(tf.gradients(x * y, [x, y], grad_ys=tf.ones([1], tf.complex128)))
    # TF convention: grad * conj(other operand)
    np.testing.assert_allclose(gx, [3 + 1j])
    np.testing.assert_allclose(gy, [1 - 2j])


def test_div_no_nan_of_integers_divides_in_floating_point(sess):
    """As truediv: int32/int64 in float64, int8/int16/uint8/uint16 in float32."""
    q = tf.div_no_nan(tf.constant([1, 2, 7]), tf.constant([0, 2, 2]))
    assert q.dtype == tf.float64 and q.op.type == "DivNoNan"
    assert sess.run(q).tolist() == [0.0, 1.0, 3.5]
    small = tf.div_no_nan(tf.constant([3], tf.uint8), tf.constant([2], tf.uint8))
    assert small.dtype == tf.float32 and sess.run(small).tolist() == [1.5]
    with pytest.raises(TypeError):
        tf.div_no_nan(tf.constant([1]), tf.constant([1.0]))


def test_float_floormod_zeros_keep_the_sign_of_x(sess):
    """TF's kernel is C's fmod moved by y where the signs differ: a zero result has
    x's sign (NumPy's remainder gives y's)."""
    x = tf.constant([0.0, -0.0, 3.0, -3.0, 5.5, -5.5])
    y = tf.constant([-3.0, -3.0, -3.0, 3.0, 2.0, 2.0])
    got = sess.run(tf.floormod(x, y))
    assert got.tolist() == [0.0, 0.0, 0.0, 0.0, 1.5, 0.5]
    assert np.signbit(got).tolist() == [False, True, False, True, False, False]
