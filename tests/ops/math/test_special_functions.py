"""tf.math.special (ops/math/special_functions.py and the I Bessel ops of
special_math_ops): the namespace, op names and dtypes, values against tabulated values
(Abramowitz & Stegun), closed forms, series and identities rather than SciPy itself, the
values TF defines at the edges of each domain, gradients, and the error without SciPy."""
import math
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

S = tf.math.special
NAMES = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_j0", "bessel_j1",
         "bessel_k0", "bessel_k0e", "bessel_k1", "bessel_k1e", "bessel_y0", "bessel_y1",
         "dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence"]
OP_TYPES = ["BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselJ0", "BesselJ1",
            "BesselK0", "BesselK0e", "BesselK1", "BesselK1e", "BesselY0", "BesselY1",
            "Dawsn", "Expint", "FresnelCos", "FresnelSin", "Spence"]
ON_SCIPY = [n for n in NAMES if not n.startswith("bessel_i")]
EULER = 0.5772156649015329


def _run(sess, fn, x, dtype=tf.float64):
    return sess.run(fn(tf.constant(np.asarray(x, dtype=np.float64), dtype)))


# --- namespace, ops, dtypes (no SciPy needed: nothing runs) ------------------------------------


def test_namespace_is_tfs():
    assert sorted(n for n in dir(S) if not n.startswith("_")) == NAMES
    for n in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
        assert getattr(S, n) is getattr(tf.math, n)


@pytest.mark.parametrize("name,op_type", list(zip(NAMES, OP_TYPES)))
def test_op_names_and_dtypes(graph, name, op_type):
    fn = getattr(S, name)
    assert fn(tf.constant(1.0)).op.name == "%s/%s" % (name, op_type)
    assert fn(tf.constant(1.0), name="mine").op.name == "mine/" + op_type
    for dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64):
        y = fn(tf.placeholder(dtype, [2, None]))
        assert y.op.type == op_type and y.dtype == dtype
        assert y.shape.as_list() == [2, None]
    with pytest.raises(TypeError):
        fn(tf.constant([1, 2]))


def test_import_does_not_load_scipy():
    code = "import sys, tensorweave; sys.exit('scipy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_without_scipy_the_kernel_says_what_to_install(sess, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    y = S.bessel_j0(tf.constant([1.0]))
    with pytest.raises(tf.errors.UnimplementedError,
                       match=r"BesselJ0 needs SciPy.*pip install 'tensorweave\[special\]'"):
        sess.run(y)
    # the I Bessel functions are NumPy only
    np.testing.assert_allclose(sess.run(S.bessel_i0([1.0])), [1.2660658777520082])


# --- values -------------------------------------------------------------------------------------


@pytest.fixture
def scipy():
    return pytest.importorskip("scipy")


# A&S tables 9.1, 9.8, 7.1 (Dawson), 5.1 (Ei), 7.7 (Fresnel) at x = 1
AT_ONE = {
    "bessel_j0": 0.7651976865579666, "bessel_j1": 0.4400505857449335,
    "bessel_y0": 0.0882569642156769, "bessel_y1": -0.7812128213002887,
    "bessel_k0": 0.4210244382407083, "bessel_k1": 0.6019072301972346,
    "bessel_k0e": 0.4210244382407083 * math.e, "bessel_k1e": 0.6019072301972346 * math.e,
    "bessel_i0": 1.2660658777520082, "bessel_i1": 0.5651591039924851,
    "dawsn": 0.5380795069127684, "expint": 1.8951178163559368,
    "fresnel_cos": 0.7798934003768228, "fresnel_sin": 0.4382591473903548,
    "spence": 0.0,
}


@pytest.mark.parametrize("name", sorted(AT_ONE))
def test_tabulated_values(sess, scipy, name):
    got = _run(sess, getattr(S, name), [1.0])
    np.testing.assert_allclose(got, [AT_ONE[name]], rtol=1e-14, atol=1e-16)


def test_zeros_and_closed_forms(sess, scipy):
    # first zeros of J0, J1, Y0; the zero of Ei (Ramanujan-Soldner constant)
    assert abs(_run(sess, S.bessel_j0, [2.404825557695773])[0]) < 1e-15
    assert abs(_run(sess, S.bessel_j1, [3.8317059702075125])[0]) < 1e-15
    assert abs(_run(sess, S.bessel_y0, [0.8935769662791675])[0]) < 1e-15
    assert abs(_run(sess, S.expint, [0.37250741078136663])[0]) < 1e-15
    # spence(x) = Li2(1 - x): Li2(1) = pi^2/6, Li2(0) = 0, Li2(-1) = -pi^2/12,
    # Li2(1/2) = pi^2/12 - log(2)^2/2
    np.testing.assert_allclose(_run(sess, S.spence, [0.0, 1.0, 2.0, 0.5]),
                               [math.pi ** 2 / 6, 0.0, -math.pi ** 2 / 12,
                                math.pi ** 2 / 12 - math.log(2) ** 2 / 2],
                               rtol=1e-14, atol=1e-16)
    # Dawson's integral has its maximum 0.5410442246 at 0.9241388730
    np.testing.assert_allclose(_run(sess, S.dawsn, [0.924138873004]), [0.541044224635],
                               rtol=1e-11)


def test_small_argument_series(sess, scipy):
    x = np.array([1e-3, 2e-3, -1e-3])
    ax = np.abs(x)
    np.testing.assert_allclose(_run(sess, S.bessel_j0, x), 1 - x ** 2 / 4 + x ** 4 / 64,
                               rtol=1e-15)
    np.testing.assert_allclose(_run(sess, S.bessel_j1, x),
                               x / 2 - x ** 3 / 16 + x ** 5 / 384, rtol=1e-15)
    np.testing.assert_allclose(_run(sess, S.dawsn, x), x - 2 * x ** 3 / 3 + 4 * x ** 5 / 15,
                               rtol=1e-15)
    np.testing.assert_allclose(_run(sess, S.fresnel_cos, x),
                               x - (math.pi / 2) ** 2 * x ** 5 / 10, rtol=1e-15)
    np.testing.assert_allclose(_run(sess, S.fresnel_sin, x),
                               math.pi * x ** 3 / 6 - (math.pi / 2) ** 3 * x ** 7 / 42,
                               rtol=1e-15)
    np.testing.assert_allclose(_run(sess, S.expint, ax),
                               EULER + np.log(ax) + ax + ax ** 2 / 4 + ax ** 3 / 18 + ax ** 4 / 96,
                               rtol=1e-14)
    np.testing.assert_allclose(_run(sess, S.bessel_y0, ax),
                               2 / math.pi * (np.log(ax / 2) + EULER) *
                               (1 - ax ** 2 / 4) + ax ** 2 / (2 * math.pi), rtol=1e-10)
    np.testing.assert_allclose(_run(sess, S.bessel_k0, ax),
                               -(np.log(ax / 2) + EULER) * (1 + ax ** 2 / 4) + ax ** 2 / 4,
                               rtol=1e-10)


def test_wronskians_and_scaling(sess, scipy):
    x = np.linspace(0.1, 40.0, 400)
    j0, j1, y0, y1, i0, i1, k0, k1, k0e, k1e = sess.run(
        [getattr(S, n)(tf.constant(x)) for n in
         ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "bessel_i0", "bessel_i1",
          "bessel_k0", "bessel_k1", "bessel_k0e", "bessel_k1e")])
    np.testing.assert_allclose((j1 * y0 - j0 * y1) * x, 2 / math.pi, rtol=1e-13)
    np.testing.assert_allclose((i0 * k1 + i1 * k0) * x, 1.0, rtol=1e-13)
    np.testing.assert_allclose(k0e, np.exp(x) * k0, rtol=1e-14)
    np.testing.assert_allclose(k1e, np.exp(x) * k1, rtol=1e-14)
    # J0^2 + 2 sum J_n^2 = 1 truncated to J0^2 + 2 J1^2 <= 1
    assert np.all(j0 ** 2 + 2 * j1 ** 2 <= 1 + 1e-15)


def test_large_argument_limits(sess, scipy):
    # Fresnel integrals tend to 1/2 (odd functions); TF returns exactly +-0.5 beyond 36974
    big = [40000.0, 1e10, 1e300, np.inf, -np.inf, -1e10]
    for fn in (S.fresnel_cos, S.fresnel_sin):
        np.testing.assert_array_equal(_run(sess, fn, big), [0.5] * 4 + [-0.5] * 2)
        got = _run(sess, fn, [1000.5, 3000.25])
        np.testing.assert_allclose(got, 0.5, atol=1 / (math.pi * 1000))
    # Dawson ~ 1/(2x), J0 ~ sqrt(2/(pi x)) cos(x - pi/4), K0e ~ sqrt(pi/(2x))
    np.testing.assert_allclose(_run(sess, S.dawsn, [1e4, -1e4]), [5e-5, -5e-5], rtol=1e-8)
    x = 1e4
    np.testing.assert_allclose(_run(sess, S.bessel_j0, [x]),
                               [math.sqrt(2 / (math.pi * x)) * math.cos(x - math.pi / 4)],
                               rtol=1e-4)
    np.testing.assert_allclose(_run(sess, S.bessel_k0e, [x]),
                               [math.sqrt(math.pi / (2 * x)) * (1 - 1 / (8 * x))], rtol=1e-8)


def test_tf_values_at_the_edges(sess, scipy):
    inf, nan = np.inf, np.nan
    x = [0.0, -1.0, inf, -inf, nan]
    want = {  # what TF 2.21's kernels return (float64)
        "bessel_j0": [1.0, 0.7651976865579666, nan, nan, nan],
        "bessel_j1": [0.0, -0.4400505857449335, nan, nan, nan],
        "bessel_y0": [-inf, -inf, nan, -inf, nan],
        "bessel_y1": [-inf, -inf, nan, -inf, nan],
        "bessel_k0": [inf, inf, 0.0, inf, nan],
        "bessel_k0e": [inf, inf, 0.0, inf, nan],
        "bessel_k1": [inf, inf, 0.0, inf, nan],
        "bessel_k1e": [inf, inf, 0.0, inf, nan],
        "bessel_i0": [1.0, 1.2660658777520082, nan, nan, nan],
        "bessel_i1": [0.0, -0.5651591039924851, nan, nan, nan],
        "dawsn": [0.0, -0.5380795069127684, 0.0, 0.0, nan],
        "expint": [-inf, nan, nan, nan, nan],
        "fresnel_cos": [0.0, -0.7798934003768228, 0.5, -0.5, nan],
        "fresnel_sin": [0.0, -0.4382591473903548, 0.5, -0.5, nan],
        "spence": [math.pi ** 2 / 6, nan, nan, nan, nan],
    }
    for name, ref in want.items():
        np.testing.assert_allclose(_run(sess, getattr(S, name), x), ref, rtol=1e-14,
                                   err_msg=name)


@pytest.mark.parametrize("name", ON_SCIPY)
def test_dtypes_keep_their_type_and_round_the_float64_value(sess, scipy, name):
    x = np.array([0.25, 0.5, 1.5, 3.0, 7.0])
    ref = _run(sess, getattr(S, name), x)
    for dtype, rtol in ((tf.float32, 1e-6), (tf.float16, 1e-3), (tf.bfloat16, 8e-3)):
        got = _run(sess, getattr(S, name), x, dtype)
        assert got.dtype == dtype.as_numpy_dtype
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=rtol, atol=rtol * 1e-2)
    # a scalar keeps its rank
    assert sess.run(getattr(S, name)(1.5)).shape == ()


# --- gradients ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_central_differences(graph, scipy, name):
    x0 = np.array([[0.3, 0.9, 1.7], [2.5, 4.0, 7.5]])
    x = tf.placeholder(tf.float64, [2, 3])
    y = getattr(S, name)(x)
    scale = max(1.0, float(np.max(np.abs(np.exp(x0))))) if name in (
        "bessel_i0", "bessel_i1", "expint") else 1.0
    assert compute_gradient_error(x, [2, 3], y, [2, 3], x_init_value=x0,
                                  delta=1e-6) < 1e-6 * scale


@pytest.mark.parametrize("f,df", [("bessel_j0", "-bessel_j1"), ("bessel_y0", "-bessel_y1"),
                                  ("bessel_k0", "-bessel_k1")])
def test_derivative_identities(sess, scipy, f, df):
    # J0' = -J1, Y0' = -Y1, K0' = -K1, by central differences of the kernels
    x = np.linspace(0.5, 20.0, 60)
    h = 1e-5
    plus, minus, d = sess.run([getattr(S, f)(tf.constant(x + h)),
                               getattr(S, f)(tf.constant(x - h)),
                               getattr(S, df[1:])(tf.constant(x))])
    np.testing.assert_allclose((plus - minus) / (2 * h), -d, atol=1e-9)


def test_gradients_at_the_points_tf_imputes(sess, scipy):
    x = tf.constant([0.0, 1.0])

    def grad(fn):
        return sess.run(tf.gradients(fn(x), x)[0])
    np.testing.assert_allclose(grad(S.bessel_j1), [0.5, 0.3251471008130331], rtol=1e-6)
    np.testing.assert_allclose(grad(S.bessel_i1), [1.0, 0.7009067737595233], rtol=1e-6)
    np.testing.assert_allclose(grad(S.spence), [-np.inf, -1.0])
    np.testing.assert_allclose(grad(S.fresnel_cos), [1.0, math.cos(math.pi / 2)], atol=1e-7)
    np.testing.assert_allclose(grad(S.fresnel_sin), [0.0, 1.0], atol=1e-7)
    np.testing.assert_allclose(grad(S.dawsn), [1.0, 1 - 2 * 0.5380795069127684], rtol=1e-6)
    np.testing.assert_allclose(grad(S.expint), [np.inf, math.e], rtol=1e-6)
    assert np.isnan(grad(S.bessel_k1e)[0]) or np.isinf(grad(S.bessel_k1e)[0])
