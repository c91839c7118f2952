"""Matrix square roots and logarithms (ops/linalg/matrix_function_ops) and the eigenvalues
of tridiagonal matrices (ops/linalg/tridiagonal_ops.eigh_tridiagonal).

References: R @ R == A and expm(logm(A)) == A; the eigenvalues of the dense tridiagonal
matrix from numpy.linalg.eigvalsh; values TF 2.x (tf.compat.v1) returned for the same
inputs, recorded as constants where TF's own choices (NaN cases, selection ends) matter.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

REAL_3 = np.array([[4.0, 1, 0], [1, 3, 1], [0.5, 1, 5]])  # non-symmetric, eigenvalues > 0
ROTATING_3 = np.array([[1.0, -2, 0.3], [2, 1, 0.1], [0.2, 0.1, 0.5]])  # a complex pair
COMPLEX_3 = (np.array([[1.0, 2, 0], [0.5, 3, 1], [-1, 0.2, 2]]) +
             1j * np.array([[0.3, 0, 0.1], [0, -0.2, 0], [0.4, 0, 0.5]]))

# what TF returned for them
TF_SQRTM_REAL_3 = np.array([
    [1.9822526634145006, 0.27326814071276917, -0.01667724311538371],
    [0.26492951915507734, 1.6923072795863483, 0.25659089759738546],
    [0.10327958412561702, 0.24825227603969363, 2.2221663178965025]])
TF_SQRTM_ROTATING_3 = np.array([
    [1.2695309485774673, -0.7909470008356653, 0.14883454311999517],
    [0.7865776096642255, 1.2739003397489088, -0.00864703457919204],
    [0.0700937542704015, 0.07874078884959386, 0.7001774792376393]])
TF_SQRTM_COMPLEX_3 = np.array([
    [0.9237810669708836 + 0.22292711428980433j, 0.7709544881766845 - 0.06396699002051848j,
     -0.09398523772883285 + 0.07812219058178614j],
    [0.23694376889700391 - 0.0540764023179017j, 1.665272379829128 - 0.033686229628368626j,
     0.32994362263786003 - 0.02644385591510723j],
    [-0.3954697604777514 + 0.2567393220954703j, 0.15439901823323787 - 0.08145808080856609j,
     1.4062397154280495 + 0.20835144373204822j]])
TF_LOGM_COMPLEX_3 = np.array([
    [-0.22128287860455934 + 0.6688305551197784j, 1.2383006899993692 - 0.31258913795536253j,
     -0.2675503267478126 + 0.2499293472099369j],
    [0.4254959863728468 - 0.22743689912512874j, 0.8961558181485594 + 0.055603329035083485j,
     0.4463768963183101 - 0.10307146190005723j],
    [-0.5837024863648568 + 0.6426303988217148j, 0.3211170070096713 - 0.3191935216525879j,
     0.6784477984467082 + 0.38872354339027426j]])
# d sum(G * sqrtm(A)) / dA for REAL_3, G = arange(9).reshape(3, 3)
TF_SQRTM_GRAD_REAL_3 = np.array([
    [-0.08692149205672832, 0.14340888959887277, 0.3618742568787844],
    [0.6717402352302922, 0.9237892394444603, 1.0727644066535817],
    [1.2924421242110256, 1.5343867798234658, 1.6237253551446738]])

TOL = {np.float32: 2e-5, np.complex64: 2e-5, np.float64: 1e-12, np.complex128: 1e-12}


def _batch(dtype, rng, n=4):
    """A batch [3, n, n]: SPD, general with eigenvalues in the right half plane, and
    upper triangular (complex parts added for complex dtypes)."""
    x = rng.randn(n, 2 * n)
    general = rng.randn(n, n) + 2.0 * np.sqrt(n) * np.eye(n)
    upper = np.triu(rng.randn(n, n)) + 3.0 * np.eye(n)
    out = np.stack([x @ x.T / n, general, upper])
    if np.dtype(dtype).kind == "c":
        out = out + 0.5j * rng.randn(3, n, n)
    return out.astype(dtype)


def _dense_tridiagonal(alpha, beta):
    return (np.diag(np.real(alpha)).astype(np.result_type(alpha, beta)) + np.diag(beta, 1) +
            np.diag(np.conj(beta), -1))


# --- sqrtm ----------------------------------------------------------------------------------


def test_sqrtm_op_alias_and_static_shapes(sess):
    r = tf.linalg.sqrtm(np.eye(2) * 4.0)
    assert tf.matrix_square_root is tf.linalg.sqrtm
    assert r.op.type == "MatrixSquareRoot" and r.op.name == "MatrixSquareRoot"
    assert r.dtype == tf.float64 and r.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(sess.run(r), np.eye(2) * 2.0)
    assert tf.linalg.sqrtm(tf.placeholder(tf.float32, [None, 3, 3]), name="root") \
        .shape.as_list() == [None, 3, 3]
    assert tf.linalg.sqrtm(tf.placeholder(tf.float32)).shape.ndims is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_sqrtm_squares_back_to_the_input_and_is_principal(sess, dtype):
    a = _batch(dtype, np.random.RandomState(0))
    got = sess.run(tf.linalg.sqrtm(a))
    assert got.dtype == dtype and got.shape == a.shape
    for root, matrix in zip(got.astype(np.complex128), a.astype(np.complex128)):
        residual = np.abs(root @ root - matrix).max() / np.abs(matrix).max()
        assert residual < TOL[dtype]
        assert np.all(np.linalg.eigvals(root).real > 0)  # the principal root


@pytest.mark.parametrize("matrix,expected", [(REAL_3, TF_SQRTM_REAL_3),
                                             (ROTATING_3, TF_SQRTM_ROTATING_3),
                                             (COMPLEX_3, TF_SQRTM_COMPLEX_3)])
def test_sqrtm_matches_tf(sess, matrix, expected):
    np.testing.assert_allclose(sess.run(tf.linalg.sqrtm(matrix)), expected, rtol=0,
                               atol=1e-13)
    low = matrix.astype(np.complex64 if matrix.dtype.kind == "c" else np.float32)
    np.testing.assert_allclose(sess.run(tf.linalg.sqrtm(low)), expected, rtol=0, atol=2e-6)


def test_sqrtm_of_defective_and_triangular_matrices(sess):
    # a Jordan block in a random basis: its eigenvectors are numerically dependent, so
    # the Schur form is built by deflation; a Jordan block itself has a closed form root
    rng = np.random.RandomState(1)
    n = 12
    jordan = 2.0 * np.eye(n) + np.eye(n, k=1)
    basis = rng.randn(n, n)
    similar = basis @ jordan @ np.linalg.inv(basis)
    got_similar, got_jordan, got_2 = sess.run([
        tf.linalg.sqrtm(similar), tf.linalg.sqrtm(jordan),
        tf.linalg.sqrtm(np.array([[4.0, 1.0], [0.0, 4.0]]))])
    assert np.abs(got_similar @ got_similar - similar).max() < 1e-12 * np.abs(similar).max()
    # sqrt(2 + N) = sqrt(2) (1 + N/4 - N^2/32 + N^3/128 - ...) for the nilpotent N
    coefficients = [1.0, 0.25, -1.0 / 32, 1.0 / 128, -5.0 / 2048]
    for k, c in enumerate(coefficients):
        np.testing.assert_allclose(np.diagonal(got_jordan, k), np.sqrt(2.0) * c, rtol=1e-13)
    np.testing.assert_allclose(got_2, [[2.0, 0.25], [0.0, 2.0]], rtol=1e-15)


def test_sqrtm_follows_tf_where_no_principal_root_exists(sess):
    nan2 = np.full((2, 2), np.nan)
    # real input with a negative real eigenvalue: NaN for that matrix (TF's real Schur
    # kernel takes a real square root of it); complex input: i sqrt(x)
    negative = np.array([[-1.0, 0.0], [0.0, 4.0]])
    got = sess.run(tf.linalg.sqrtm(np.stack([negative, np.eye(2) * 9.0])))
    np.testing.assert_array_equal(got, [nan2, np.eye(2) * 3.0])
    np.testing.assert_array_equal(sess.run(tf.linalg.sqrtm(np.array([[1.0, 2], [2, 1]]))), nan2)
    np.testing.assert_allclose(sess.run(tf.linalg.sqrtm(negative.astype(np.complex128))),
                               [[1j, 0], [0, 2]], atol=1e-15)
    np.testing.assert_allclose(sess.run(tf.linalg.sqrtm(np.array([[-1.0, 1], [0, -1]],
                                                                 np.complex128))),
                               [[1j, -0.5j], [0, 1j]], atol=1e-15)
    # a rotation has no real eigenvalue: its real root is the rotation by half the angle
    np.testing.assert_allclose(sess.run(tf.linalg.sqrtm(np.array([[0.0, -1], [1, 0]]))),
                               np.array([[1.0, -1], [1, 1]]) / np.sqrt(2), atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_sqrtm_of_singular_matrices_follows_tf(sess, dtype):
    # one zero eigenvalue is fine; two give 0/0 in the Schur recurrence: NaN, as in TF
    rank_one = np.array([[1.0, 2.0], [2.0, 4.0]])
    rank_two = np.array([[2.0, 1, 0], [1, 2, 0], [0, 0, 0]])
    fine = sess.run([tf.linalg.sqrtm(rank_one.astype(dtype)),
                     tf.linalg.sqrtm(rank_two.astype(dtype))])
    np.testing.assert_allclose(fine[0], rank_one / np.sqrt(5.0), rtol=1e-6, atol=1e-6)
    root_two = np.array([[1.0 + np.sqrt(3), np.sqrt(3) - 1, 0], [np.sqrt(3) - 1,
                                                                  1 + np.sqrt(3), 0],
                         [0, 0, 0]]) / 2
    np.testing.assert_allclose(fine[1], root_two, rtol=1e-6, atol=1e-6)
    for matrix in (np.zeros((2, 2)), np.diag([1.0, 0, 0]), np.eye(3, k=1),
                   np.array([[0.0, 1.0], [0.0, 0.0]])):
        assert np.isnan(sess.run(tf.linalg.sqrtm(matrix.astype(dtype)))).all(), matrix


def test_sqrtm_non_finite_input_and_empty_shapes(sess):
    got = sess.run(tf.linalg.sqrtm(np.array([[[np.nan, 1.0], [0, 1]], [[np.inf, 1.0], [0, 1]],
                                             [[1.0, 0.0], [0.0, 1.0]]])))
    assert np.isnan(got[:2]).all()
    np.testing.assert_array_equal(got[2], np.eye(2))
    x = tf.placeholder(tf.complex64)
    root = tf.linalg.sqrtm(x)
    for shape in [(2, 0, 0), (0, 3, 3)]:
        out = sess.run(root, {x: np.zeros(shape)})
        assert out.shape == shape and out.dtype == np.complex64


def test_sqrtm_errors(sess):
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.linalg.sqrtm(tf.ones([2, 2], tf.int32))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.linalg.sqrtm(tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.linalg.sqrtm(tf.ones([3]))
    x = tf.placeholder(tf.float64)
    root = tf.linalg.sqrtm(x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix must be square"):
        sess.run(root, {x: np.ones((2, 3))})
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank >= 2"):
        sess.run(root, {x: np.ones(3)})


def test_sqrtm_float16_is_computed_in_float32(sess):
    # TF declares float16 but has no kernel for it; here it is computed in float32
    got = sess.run(tf.linalg.sqrtm(REAL_3.astype(np.float16)))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, TF_SQRTM_REAL_3, atol=2e-3)


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128, tf.float32, tf.complex64])
def test_sqrtm_gradient(graph, dtype):
    rng = np.random.RandomState(2)
    x0 = rng.uniform(-0.5, 0.5, (2, 3, 3)) + 2.0 * np.eye(3)
    if dtype.is_complex:
        x0 = x0 + 1j * rng.uniform(-0.5, 0.5, (2, 3, 3))
    x = tf.placeholder(dtype, [2, 3, 3])
    low = dtype in (tf.float32, tf.complex64)
    err = compute_gradient_error(x, [2, 3, 3], tf.linalg.sqrtm(x), [2, 3, 3], x_init_value=x0,
                                 delta=1e-3 if low else 1e-6)
    assert err < (2e-3 if low else 1e-8)


def test_sqrtm_gradient_matches_tf_and_needs_no_static_shape(sess):
    x = tf.constant(REAL_3)
    grad = tf.gradients(tf.linalg.sqrtm(x), x, grad_ys=tf.constant(np.arange(9.0)
                                                                     .reshape(3, 3)))[0]
    np.testing.assert_allclose(sess.run(grad), TF_SQRTM_GRAD_REAL_3, rtol=0, atol=1e-13)
    p = tf.placeholder(tf.float64)
    grad = tf.gradients(tf.reduce_sum(tf.linalg.sqrtm(p)), p)[0]
    # R = sqrt(2) I: R^H X + X R^H = ones gives X = ones / (2 sqrt(2))
    np.testing.assert_allclose(sess.run(grad, {p: 2.0 * np.eye(2)[None]}),
                               np.full((1, 2, 2), 0.25 * np.sqrt(2.0)), rtol=1e-14)


def test_sqrtm_second_derivative(graph):
    # the gradient is built from differentiable ops (a Kronecker system and a solve)
    x0 = np.array([[2.0, 0.3], [0.1, 3.0]])
    x = tf.placeholder(tf.float64, [2, 2])
    grad = tf.gradients(tf.reduce_sum(tf.sin(tf.linalg.sqrtm(x))), x)[0]
    assert compute_gradient_error(x, [2, 2], grad, [2, 2], x_init_value=x0,
                                  delta=1e-5) < 1e-7


# --- logm -----------------------------------------------------------------------------------


def test_logm_op_and_static_shapes(sess):
    y = tf.linalg.logm(tf.constant(np.eye(2) * np.e, tf.complex128))
    assert y.op.type == "MatrixLogarithm" and y.op.name == "MatrixLogarithm"
    np.testing.assert_allclose(sess.run(y), np.eye(2), rtol=1e-15)
    assert tf.linalg.logm(tf.placeholder(tf.complex64, [None, 4, 4])).shape.as_list() == \
        [None, 4, 4]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_logm_inverts_expm(sess, dtype):
    rng = np.random.RandomState(3)
    a = _batch(dtype, rng)
    # exponentials of matrices whose eigenvalues have |imaginary part| < pi: logm must
    # return the very matrix (the principal logarithm)
    small = (0.4 * (rng.randn(2, 4, 4) + 1j * rng.randn(2, 4, 4))).astype(dtype)
    log_a = tf.linalg.logm(a)
    got = sess.run([tf.linalg.expm(log_a), tf.linalg.logm(tf.linalg.expm(small)), log_a])
    tol = 1e-4 if dtype == np.complex64 else 1e-12
    assert np.abs(got[0] - a).max() <= tol * np.abs(a).max()
    assert np.abs(got[1] - small).max() <= tol * 10
    assert got[2].dtype == dtype
    assert np.all(np.abs(np.linalg.eigvals(got[2].astype(np.complex128)).imag) <= np.pi)


def test_logm_matches_tf(sess):
    got = sess.run([tf.linalg.logm(COMPLEX_3), tf.linalg.logm(COMPLEX_3.astype(np.complex64))])
    np.testing.assert_allclose(got[0], TF_LOGM_COMPLEX_3, rtol=0, atol=1e-13)
    np.testing.assert_allclose(got[1], TF_LOGM_COMPLEX_3, rtol=0, atol=2e-6)


def test_logm_special_spectra(sess):
    cases = [np.diag([-1.0, 4.0]),  # negative eigenvalue: log(1) + i pi, as TF
             np.array([[2.0, 1.0], [0.0, 2.0]]),  # defective
             np.array([[0.0, -1.0], [1.0, 0.0]]),  # eigenvalues +-i
             np.diag([1e10, 1e-10]),
             np.array([[1e3, 1e4], [0.0, 1e-3]])]  # needs many square roots
    got = sess.run([tf.linalg.logm(c.astype(np.complex128)) for c in cases])
    np.testing.assert_allclose(got[0], [[1j * np.pi, 0], [0, np.log(4.0)]], atol=1e-15)
    np.testing.assert_allclose(got[1], [[np.log(2.0), 0.5], [0, np.log(2.0)]], atol=1e-15)
    np.testing.assert_allclose(got[2], [[0, -np.pi / 2], [np.pi / 2, 0]], atol=1e-15)
    np.testing.assert_allclose(got[3], np.diag([np.log(1e10), np.log(1e-10)]), rtol=1e-15)
    # log of [[a, b], [0, c]] is [[log a, b (log a - log c) / (a - c)], [0, log c]]
    a, b, c = 1e3, 1e4, 1e-3
    np.testing.assert_allclose(got[4], [[np.log(a), b * (np.log(a) - np.log(c)) / (a - c)],
                                        [0, np.log(c)]], rtol=1e-13)


def test_logm_of_singular_or_non_finite_matrices_is_nan(sess):
    batch = np.array([np.zeros((2, 2)), np.diag([0.0, 2.0]), [[0.0, 1.0], [0.0, 0.0]],
                      [[np.nan, 1.0], [0.0, 1.0]], np.eye(2)], np.complex128)
    got = sess.run(tf.linalg.logm(batch))
    assert np.isnan(got[:4].real).all() and np.isnan(got[:4].imag).all()
    np.testing.assert_array_equal(got[4], np.zeros((2, 2)))


def test_logm_errors_and_empty_shapes(sess):
    with pytest.raises(TypeError, match="DataType float64 not in list of allowed values: "
                                        "complex64, complex128"):
        tf.linalg.logm(np.eye(2))
    with pytest.raises(TypeError, match="DataType float32 not in list"):
        tf.linalg.logm(tf.eye(2))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.linalg.logm(tf.ones([2, 3], tf.complex64))
    x = tf.placeholder(tf.complex128)
    y = tf.linalg.logm(x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix must be square"):
        sess.run(y, {x: np.ones((2, 3))})
    for shape in [(2, 0, 0), (0, 3, 3)]:
        assert sess.run(y, {x: np.zeros(shape)}).shape == shape


def test_logm_has_no_gradient(graph):
    # TF registers no gradient for MatrixLogarithm: tf.gradients, and so the numeric
    # gradient check, raise LookupError
    x = tf.placeholder(tf.complex128, [2, 2])
    y = tf.linalg.logm(x)
    message = r"No gradient defined for operation 'MatrixLogarithm' \(op type: MatrixLogarithm\)"
    with pytest.raises(LookupError, match=message):
        tf.gradients(y, x, grad_ys=tf.ones_like(y))
    with pytest.raises(LookupError, match=message):
        compute_gradient_error(x, [2, 2], y, [2, 2], x_init_value=np.eye(2) * 2.0)


# --- eigh_tridiagonal -----------------------------------------------------------------------


def test_eigh_tridiagonal_doc_example(sess):
    e = tf.linalg.eigh_tridiagonal([0.0, 0.0, 0.0], [1.0, 1.0])
    assert e.dtype == tf.float32 and e.shape.as_list() == [3]
    assert e.op.name.startswith("eigh_tridiagonal/")
    np.testing.assert_allclose(sess.run(e), [-np.sqrt(2.0), 0.0, np.sqrt(2.0)], atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eigh_tridiagonal_against_dense_eigvalsh(sess, dtype):
    rng = np.random.RandomState(4)
    alpha, beta = rng.randn(7), rng.randn(6)
    if np.dtype(dtype).kind == "c":
        alpha = alpha + 1j * rng.randn(7)  # the imaginary part is ignored
        beta = beta + 1j * rng.randn(6)
    alpha, beta = alpha.astype(dtype), beta.astype(dtype)
    values, (values2, vectors) = sess.run([
        tf.linalg.eigh_tridiagonal(alpha, beta),
        tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)])
    real = np.float32 if dtype in (np.float32, np.complex64) else np.float64
    assert values.dtype == real and vectors.dtype == dtype and vectors.shape == (7, 7)
    dense = _dense_tridiagonal(alpha.astype(np.complex128), beta.astype(np.complex128))
    tol = 1e-5 if real == np.float32 else 1e-13
    np.testing.assert_allclose(values, np.linalg.eigvalsh(dense), atol=tol * 10)
    np.testing.assert_allclose(values2, values, atol=tol * 10)
    assert np.all(np.diff(values) >= 0)
    v = vectors.astype(np.complex128)
    assert np.abs(dense @ v - v * values2).max() < tol * 10
    assert np.abs(v.conj().T @ v - np.eye(7)).max() < tol * 10


def test_eigh_tridiagonal_matches_tf_values(sess):
    got = sess.run([
        tf.linalg.eigh_tridiagonal(np.array([1.0, 2, 3, 4]), np.array([0.5, -1, 2])),
        tf.linalg.eigh_tridiagonal(np.array([1 + 5j, 2, 3]), np.array([1 + 1j, 2 - 1j]))])
    np.testing.assert_allclose(got[0], [0.5875622478550292, 1.16456936961771,
                                        2.5771823752799983, 5.670686007247262], rtol=1e-14)
    np.testing.assert_allclose(got[1], [-0.6180339887498947, 1.6180339887498945, 5.0],
                               rtol=1e-14)


def test_eigh_tridiagonal_select_by_index(sess):
    alpha, beta = np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0])
    e, (ev, v) = sess.run([
        tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=(1, 2)),
        tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False, select="i",
                                   select_range=[0, 0])])
    np.testing.assert_allclose(e, [0.0, np.sqrt(2.0)], atol=1e-15)
    np.testing.assert_allclose(ev, [-np.sqrt(2.0)], atol=1e-15)
    assert v.shape == (3, 1)
    np.testing.assert_allclose(np.abs(v[:, 0]), [0.5, np.sqrt(0.5), 0.5], atol=1e-15)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Got empty index range in select_range"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=(2, 1))
    # out of range: an error (TF returns meaningless values there)
    bounds = tf.placeholder(tf.int32, [2])
    e = tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=bounds)
    np.testing.assert_allclose(sess.run(e, {bounds: [2, 2]}), [np.sqrt(2.0)], atol=1e-15)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in"):
        sess.run(e, {bounds: [1, 5]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Got empty index range"):
        sess.run(e, {bounds: [2, 1]})


def test_eigh_tridiagonal_select_by_value(sess):
    alpha, beta = np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0])
    r2 = np.sqrt(2.0)
    # TF keeps an eigenvalue on either end: the ends are widened by n * 2.1 * eps * |T|
    got = sess.run([tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=rng)
                    for rng in [(0.0, 2.0), (-2.0, 0.0), (-r2, 0.5), (5.0, 6.0)]])
    np.testing.assert_allclose(got[0], [0.0, r2], atol=1e-15)
    np.testing.assert_allclose(got[1], [-r2, 0.0], atol=1e-15)
    np.testing.assert_allclose(got[2], [-r2, 0.0], atol=1e-15)
    assert got[3].shape == (0,)
    e, v = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False, select="v",
                                      select_range=(-1.0, 2.0))
    assert v.shape.as_list() == [3, None]
    e, v = sess.run([e, v])
    np.testing.assert_allclose(e, [0.0, r2], atol=1e-15)
    dense = _dense_tridiagonal(alpha, beta)
    np.testing.assert_allclose(dense @ v, v * e, atol=1e-14)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Got empty interval in select_range"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=(2.0, 1.0))


def test_eigh_tridiagonal_small_and_dynamic_shapes(sess):
    one = tf.linalg.eigh_tridiagonal(np.array([2.0 + 1j]), np.zeros(0, np.complex128))
    none, vectors = tf.linalg.eigh_tridiagonal(np.zeros(0), np.zeros(0), eigvals_only=False)
    got = sess.run([one, none, vectors])
    np.testing.assert_array_equal(got[0], [2.0])
    assert got[1].shape == (0,) and got[2].shape == (0, 0)
    alpha = tf.placeholder(tf.float64)
    beta = tf.placeholder(tf.float64, [None])
    e = tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=(0.5, 2.0))
    np.testing.assert_allclose(sess.run(e, {alpha: np.zeros(3), beta: np.ones(2)}),
                               [np.sqrt(2.0)], rtol=1e-15)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(e, {alpha: np.zeros((3, 1)), beta: np.ones(2)})


def test_eigh_tridiagonal_errors():
    alpha, beta = np.zeros(3), np.ones(2)
    with pytest.raises(ValueError, match="'select must have a value in"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="x")
    with pytest.raises(ValueError, match="needs a select_range"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="v")
    with pytest.raises(ValueError, match="'alpha' and 'beta' must have the same type"):
        tf.linalg.eigh_tridiagonal(alpha, beta.astype(np.float32))
    with pytest.raises(ValueError, match="must be float32, float64, complex64 or complex128"):
        tf.linalg.eigh_tridiagonal([1, 2, 3], [1, 1])
    with pytest.raises(ValueError, match="'beta' must have 2 elements"):
        tf.linalg.eigh_tridiagonal(alpha, np.ones(3))
    with pytest.raises(ValueError, match="'alpha' must be a vector"):
        tf.linalg.eigh_tridiagonal(np.zeros((2, 3)), np.ones((2, 2)))


def test_eigh_tridiagonal_gradient(graph):
    # differentiable through eigh (TF's bisection gives no meaningful gradient)
    rng = np.random.RandomState(5)
    a0, b0 = np.array([1.0, 2.5, 4.0, 6.0]), rng.uniform(0.3, 0.8, 3)
    alpha = tf.placeholder(tf.float64, [4])
    beta = tf.placeholder(tf.float64, [3])
    values, vectors = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    err = compute_gradient_error([alpha, beta], [[4], [3]], values, [4],
                                 x_init_value=[a0, b0], delta=1e-6)
    assert err < 1e-8
    # eigenvector signs are a choice; their squares are smooth
    err = compute_gradient_error([alpha, beta], [[4], [3]], tf.square(vectors), [4, 4],
                                 x_init_value=[a0, b0], delta=1e-6)
    assert err < 1e-7
