"""Elementwise unary math ops: values vs NumPy, dtypes, static shapes, errors, gradients."""
import math
import warnings

import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

FLOATS = [np.float16, np.float32, np.float64]
SIGNED_INTS = [np.int32, np.int64]
COMPLEX = [np.complex64, np.complex128]

_erf_ref = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid_ref(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x)))


# name, builder, NumPy reference (in float64/complex128), dtypes, input domain
_CASES = [
    ("negative", tf.negative, np.negative, FLOATS + SIGNED_INTS + COMPLEX, "any"),
    ("abs", tf.abs, np.abs, FLOATS + SIGNED_INTS, "any"),
    ("sign", tf.sign, np.sign, FLOATS + SIGNED_INTS + COMPLEX, "any"),
    ("square", tf.square, np.square, FLOATS + SIGNED_INTS + [np.uint8] + COMPLEX, "any"),
    ("sqrt", tf.sqrt, np.sqrt, FLOATS + COMPLEX, "pos"),
    ("rsqrt", tf.math.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS + COMPLEX, "pos"),
    ("exp", tf.exp, np.exp, FLOATS + COMPLEX, "any"),
    ("expm1", tf.math.expm1, np.expm1, FLOATS + COMPLEX, "any"),
    ("log", tf.log, np.log, FLOATS + COMPLEX, "pos"),
    ("log1p", tf.math.log1p, np.log1p, FLOATS + COMPLEX, "pos"),
    ("sin", tf.sin, np.sin, FLOATS + COMPLEX, "any"),
    ("cos", tf.cos, np.cos, FLOATS + COMPLEX, "any"),
    ("tan", tf.tan, np.tan, FLOATS + COMPLEX, "small"),
    ("tanh", tf.tanh, np.tanh, FLOATS + COMPLEX, "any"),
    ("sigmoid", tf.sigmoid, _sigmoid_ref, FLOATS + COMPLEX, "any"),
    ("erf", tf.math.erf, _erf_ref, FLOATS, "any"),
    ("floor", tf.floor, np.floor, FLOATS, "any"),
    ("ceil", tf.math.ceil, np.ceil, FLOATS, "any"),
    ("round", tf.round, np.rint, FLOATS, "any"),
    ("reciprocal", tf.math.reciprocal, np.reciprocal, FLOATS + COMPLEX, "pos"),
]


def _values(dtype, domain, shape=(3, 4)):
    rng = np.random.RandomState(0)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        lo = 0 if kind == "u" else -9
        return rng.randint(lo, 10, size=shape).astype(dtype)
    lo, hi = {"any": (-3, 3), "pos": (0.1, 4), "small": (-1.2, 1.2)}[domain]
    x = rng.uniform(lo, hi, size=shape)
    if kind == "c":
        x = x + 1j * rng.uniform(lo if domain != "pos" else -1, hi, size=shape)
    return x.astype(dtype)


def _tol(dtype):
    return {np.float16: 2e-3, np.float32: 2e-6, np.complex64: 2e-6}.get(dtype, 1e-12)


@pytest.mark.parametrize("name,fn,ref,dtypes,domain", _CASES, ids=[c[0] for c in _CASES])
def test_values_match_numpy_for_every_dtype(sess, name, fn, ref, dtypes, domain):
    for dtype in dtypes:
        x = _values(dtype, domain)
        y = fn(tf.constant(x))
        assert y.dtype == tf.as_dtype(dtype)
        assert y.shape.as_list() == [3, 4]
        out = sess.run(y)
        assert out.dtype == np.dtype(dtype), (name, dtype)
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        expect = ref(x.astype(wide) if np.dtype(dtype).kind not in "iu" else x)
        if np.dtype(dtype).kind in "iu":
            np.testing.assert_array_equal(out, expect.astype(dtype))
        else:
            tol = _tol(dtype)
            np.testing.assert_allclose(out.astype(wide), expect, rtol=tol * 4,
                                       atol=tol * 4, err_msg="%s %s" % (name, dtype))


@pytest.mark.parametrize("fn", [tf.negative, tf.abs, tf.square, tf.sqrt, tf.exp, tf.log,
                                tf.tanh, tf.sigmoid, tf.erf, tf.floor, tf.sin])
def test_bfloat16_is_kept(sess, fn):
    x = np.array([0.5, 1.25, 2.0], dtype=ml_dtypes.bfloat16)
    out = sess.run(fn(tf.constant(x)))
    assert out.dtype == ml_dtypes.bfloat16


def test_static_shapes_follow_input(graph):
    p = tf.placeholder(tf.float32, [None, 3])
    for fn in (tf.exp, tf.sigmoid, tf.is_nan, tf.abs, tf.round, tf.erf):
        assert fn(p).shape.as_list() == [None, 3]
    u = tf.placeholder(tf.float32)
    assert tf.exp(u).shape.ndims is None
    c = tf.placeholder(tf.complex64, [2, None])
    assert tf.abs(c).shape.as_list() == [2, None]


@pytest.mark.parametrize("fn,dtype", [(tf.sqrt, tf.int32), (tf.abs, tf.uint8),
                                      (tf.negative, tf.uint8), (tf.erf, tf.complex64),
                                      (tf.floor, tf.int32), (tf.is_nan, tf.int32),
                                      (tf.logical_not, tf.float32), (tf.exp, tf.bool)])
def test_unsupported_dtype_is_type_error(graph, fn, dtype):
    with pytest.raises(TypeError):
        fn(tf.placeholder(dtype, [2]))


def test_op_types_and_default_names(graph):
    x = tf.placeholder(tf.float32, [2])
    assert tf.negative(x).op.type == "Neg"
    assert tf.sigmoid(x).op.name == "Sigmoid"
    assert tf.math.reciprocal(x).op.type == "Reciprocal"
    assert tf.exp(x, name="e").op.name == "e"
    assert (-x).op.type == "Neg" and abs(x).op.type == "Abs"


def test_exports():
    for name in ("negative", "abs", "sign", "square", "sqrt", "rsqrt", "exp", "expm1", "log",
                 "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "floor", "ceil",
                 "round", "reciprocal", "is_nan", "is_inf", "is_finite", "logical_not",
                 "conj"):
        assert getattr(tf, name) is getattr(tf.math, name), name
    assert tf.nn.sigmoid is tf.sigmoid and tf.nn.tanh is tf.tanh
    assert not hasattr(tf, "neg")


def test_erf_float64_accuracy(sess):
    x = np.concatenate([np.linspace(-7, 7, 4001), np.logspace(-30, 0.8, 500),
                        -np.logspace(-30, 0.8, 500), [0.0, 2.5, -2.5, 2.4999999]])
    out = sess.run(tf.erf(tf.constant(x)))
    ref = _erf_ref(x)
    rel = np.abs(out - ref) / np.maximum(np.abs(ref), 1e-300)
    assert rel.max() < 3e-15
    special = sess.run(tf.erf(tf.constant([np.inf, -np.inf, np.nan])))
    np.testing.assert_array_equal(special[:2], [1.0, -1.0])
    assert np.isnan(special[2])


def test_sigmoid_extremes_are_accurate_and_quiet(sess):
    x = np.array([-1000.0, -100.0, -30.0, 0.0, 30.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sess.run(tf.sigmoid(tf.constant(x)))
        out16 = sess.run(tf.sigmoid(tf.constant([-20.0, 0.0, 20.0], tf.float16)))
    np.testing.assert_allclose(out[1:-1], _sigmoid_ref(x[1:-1]), rtol=1e-14)
    assert out[0] == 0.0 and out[-1] == 1.0
    np.testing.assert_allclose(out16.astype(np.float64), [0.0, 0.5, 1.0], atol=1e-3)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 3e-7), (np.float64, 1e-15)])
def test_sigmoid_of_many_values_of_random_sign(sess, dtype, rtol):
    # float32/float64 take a branch-free path; every value must stay correctly rounded
    # (within an ulp or so) against an extended-precision reference, specials included
    special = [-745, -740, -100, -88, -30, -1e-30, -0.0, 0.0, 1e-30, 30, 88, 100,
               np.inf, -np.inf, np.nan]
    x = np.concatenate([np.random.RandomState(3).randn(6000) * 25, special]).astype(dtype)
    y = tf.sigmoid(tf.constant(x.reshape(-1, 3)))
    got = sess.run(y)
    assert type(got) is np.ndarray and got.dtype == dtype and got.shape == (2005, 3)
    assert y.shape.as_list() == [2005, 3]
    xl = x.astype(np.longdouble)
    want = (np.exp(np.minimum(xl, 0)) / (1 + np.exp(-np.abs(xl)))).astype(dtype)
    got = got.reshape(-1)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=np.finfo(dtype).tiny * 4)
    assert np.isnan(got[-1]) and got[-2] == 0 and got[-3] == 1
    assert got[-9] == got[-8] == 0.5


def test_sigmoid_of_strided_and_0d_inputs():
    from tensorweave.ops.math.math_unary import _sigmoid
    x = np.random.RandomState(4).randn(40, 30).astype(np.float32) * 8
    keep = x.copy()
    for v in (x.T, x[:, ::3], np.asarray(x[1, 2])):
        got = _sigmoid(v)
        want = (1 / (1 + np.exp(-v.astype(np.float64)))).astype(np.float32)
        assert type(got) is np.ndarray and got.shape == v.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=3e-7)
    np.testing.assert_array_equal(x, keep)


def test_domain_errors_give_nan_inf_without_warnings(sess):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sess.run([tf.sqrt(tf.constant([-1.0, 0.0])), tf.log(tf.constant([0.0, -1.0])),
                        tf.math.rsqrt(tf.constant([0.0])), tf.exp(tf.constant([1000.0]))])
    assert np.isnan(out[0][0]) and out[0][1] == 0
    assert out[1][0] == -np.inf and np.isnan(out[1][1])
    assert out[2][0] == np.inf and out[3][0] == np.inf


def test_round_is_half_to_even_and_identity_for_ints(sess):
    x = tf.constant([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6])
    np.testing.assert_array_equal(sess.run(tf.round(x)), [0, 2, 2, -0, -2, 2, -3])
    i = tf.constant([1, 2])
    assert tf.round(i) is i


def test_abs_of_complex_is_real(sess):
    for cdt, rdt in ((tf.complex64, tf.float32), (tf.complex128, tf.float64)):
        y = tf.abs(tf.constant([3 + 4j, -1j], cdt))
        assert y.op.type == "ComplexAbs" and y.dtype == rdt
        np.testing.assert_allclose(sess.run(y), [5.0, 1.0])
    assert sess.run(tf.abs(tf.constant([-2**31, -3]))).tolist() == [-2**31, 3]


def test_sign_of_complex_and_nan(sess):
    np.testing.assert_allclose(sess.run(tf.sign(tf.constant([3 + 4j, 0j]))), [0.6 + 0.8j, 0])
    out = sess.run(tf.sign(tf.constant([-2.0, 0.0, np.nan, 3.0])))
    assert out[0] == -1 and out[1] == 0 and np.isnan(out[2]) and out[3] == 1


def test_reciprocal_of_integers(sess):
    np.testing.assert_array_equal(sess.run(tf.math.reciprocal(tf.constant([2, 1, -1, 5]))),
                                  [0, 1, -1, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        sess.run(tf.math.reciprocal(tf.constant([0])))


def test_predicates(sess):
    x = tf.constant([np.inf, -np.inf, np.nan, 1.0, 0.0])
    nan, inf, fin = sess.run([tf.is_nan(x), tf.is_inf(x), tf.is_finite(x)])
    assert nan.tolist() == [False, False, True, False, False]
    assert inf.tolist() == [True, True, False, False, False]
    assert fin.tolist() == [False, False, False, True, True]
    assert tf.is_nan(x).dtype == tf.bool
    assert sess.run(tf.logical_not(tf.constant([True, False]))).tolist() == [False, True]
    assert sess.run(~tf.constant([True, False])).tolist() == [False, True]


def test_conj(sess):
    np.testing.assert_array_equal(sess.run(tf.conj(tf.constant([1 + 2j]))), [1 - 2j])
    r = tf.constant([1.0])
    assert tf.conj(r) is r
    with pytest.raises(TypeError):
        tf.conj(tf.constant(["a"]))


@pytest.mark.parametrize("name,fn,ref,dtypes,domain", _CASES, ids=[c[0] for c in _CASES])
def test_scalars(sess, name, fn, ref, dtypes, domain):
    for dtype in dtypes:
        x = _values(dtype, domain, shape=())
        out = sess.run(fn(tf.constant(x)))
        assert np.shape(out) == () and out.dtype == np.dtype(dtype), (name, dtype)


def test_inputs_are_not_mutated(sess):
    p = tf.placeholder(tf.float64, [4])
    value = np.array([0.5, -1.0, 2.0, 3.0])
    keep = value.copy()
    sess.run([tf.exp(p), tf.sigmoid(p), tf.erf(p), tf.round(p), tf.abs(p), -p], {p: value})
    np.testing.assert_array_equal(value, keep)


# --- gradients ----------------------------------------------------------------------------
_GRAD_CASES = [
    ("negative", tf.negative, "any"), ("abs", tf.abs, "nonzero"), ("square", tf.square, "any"),
    ("sqrt", tf.sqrt, "pos"), ("rsqrt", tf.math.rsqrt, "pos"), ("exp", tf.exp, "any"),
    ("expm1", tf.math.expm1, "any"), ("log", tf.log, "pos"), ("log1p", tf.math.log1p, "pos"),
    ("sin", tf.sin, "any"), ("cos", tf.cos, "any"), ("tan", tf.tan, "small"),
    ("tanh", tf.tanh, "any"), ("sigmoid", tf.sigmoid, "any"), ("erf", tf.erf, "any"),
    ("reciprocal", tf.math.reciprocal, "pos"), ("sign", tf.sign, "nonzero"),
]


def _grad_point(domain):
    rng = np.random.RandomState(3)
    if domain == "pos":
        return rng.uniform(0.5, 2.0, size=(2, 3))
    if domain == "small":
        return rng.uniform(-1.0, 1.0, size=(2, 3))
    x = rng.uniform(-2.0, 2.0, size=(2, 3))
    if domain == "nonzero":
        x = np.where(np.abs(x) < 0.2, 0.5, x)
    return x


@pytest.mark.parametrize("name,fn,domain", _GRAD_CASES, ids=[c[0] for c in _GRAD_CASES])
def test_gradient_numeric(graph, name, fn, domain):
    x = tf.placeholder(tf.float64, [2, 3])
    y = fn(x)
    err = compute_gradient_error(x, [2, 3], y, [2, 3], x_init_value=_grad_point(domain),
                                 delta=1e-6)
    assert err < 1e-6, (name, err)


@pytest.mark.parametrize("fn,domain", [(tf.tanh, "any"), (tf.sigmoid, "any"),
                                       (tf.sqrt, "pos"), (tf.math.rsqrt, "pos"),
                                       (tf.math.reciprocal, "pos")])
def test_second_derivative_through_fused_grad_ops(graph, fn, domain):
    x = tf.placeholder(tf.float64, [2, 3])
    dy = tf.placeholder(tf.float64, [2, 3])
    g = tf.gradients(fn(x), x, grad_ys=dy)[0]
    assert g.op.type.endswith("Grad")
    value = _grad_point(domain)
    seed = np.random.RandomState(5).uniform(-1, 1, size=(2, 3))
    err = compute_gradient_error(x, [2, 3], g, [2, 3], x_init_value=value, delta=1e-6,
                                 extra_feed_dict={dy: seed})
    assert err < 1e-6
    err = compute_gradient_error(dy, [2, 3], g, [2, 3], x_init_value=seed, delta=1e-6,
                                 extra_feed_dict={x: value})
    assert err < 1e-6


def test_rounding_ops_have_no_gradient(graph):
    x = tf.placeholder(tf.float64, [3])
    for fn in (tf.floor, tf.math.ceil, tf.round):
        assert tf.gradients(fn(x), x) == [None]


def test_complex_abs_gradient(sess):
    x = tf.constant([3 + 4j, 0j], tf.complex128)
    g = tf.gradients(tf.abs(x), x)[0]
    np.testing.assert_allclose(sess.run(g), [0.6 + 0.8j, 0])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
def test_fused_grad_kernels_values_and_dtype(sess, dtype):
    """TanhGrad/SigmoidGrad/SqrtGrad/RsqrtGrad/ReciprocalGrad against their formulas, in
    the input's dtype (float32/float64 arrays skip the conversion calls; float16 and
    0-d inputs take them)."""
    rs = np.random.RandomState(3)
    y = rs.uniform(0.2, 0.9, (4, 5)).astype(dtype)
    dy = rs.uniform(-1, 1, (4, 5)).astype(dtype)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    y64, dy64 = y.astype(wide), dy.astype(wide)
    refs = {"TanhGrad": dy64 * (1 - y64 * y64), "SigmoidGrad": dy64 * y64 * (1 - y64),
            "SqrtGrad": 0.5 * dy64 / y64, "RsqrtGrad": -0.5 * dy64 * y64 ** 3,
            "ReciprocalGrad": -dy64 * y64 * y64}
    tol = 2e-3 if dtype == np.float16 else 1e-5
    for name, ref in refs.items():
        op = getattr(tf.raw_ops, name)
        got, got0 = sess.run([op(y=y, dy=dy), op(y=y[0, 0], dy=dy[0, 0])])
        assert got.dtype == dtype and got0.dtype == dtype and got0.shape == ()
        np.testing.assert_allclose(got, ref.astype(dtype), rtol=tol, atol=tol)
        np.testing.assert_allclose(got0, ref[0, 0].astype(dtype), rtol=tol, atol=tol)
