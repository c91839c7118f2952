"""Every tf.linalg.LinearOperator class (ops/linalg/linear_operator*) against NumPy on
batched inputs: to_dense, matmul (adjoint / adjoint_arg), matvec, solve, solvevec,
determinant, log_abs_determinant, trace and diag_part.

Each case builds an operator and the dense NumPy matrix it stands for; the arguments
have batch shape (3, 1) so they broadcast against the operators' batch shape (2,).
"""
import numpy as np
import pytest

import tensorweave as tf

rng = np.random.RandomState(7)
B = (2,)           # operators' batch shape
XB = (3, 1)        # arguments' batch shape (broadcasts with B to (3, 2))


def _mat(shape, dtype=np.float64, shift=3.0):
    a = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.uniform(-1, 1, shape)
    if shape[-1] == shape[-2]:
        a = a + shift * np.eye(shape[-1])
    return a.astype(dtype)


def _spd(shape):
    a = rng.uniform(-1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _adj(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _circulant_dense(spectrum, block_shape):
    """The dense matrix of a (block) circulant operator: column j is
    ifftn(spectrum * fftn(e_j)) over the block axes."""
    n = int(np.prod(block_shape))
    axes = tuple(range(-len(block_shape), 0))
    eye = np.eye(n).reshape((n,) + tuple(block_shape))
    cols = np.fft.ifftn(np.expand_dims(spectrum, -len(block_shape) - 1)
                        * np.fft.fftn(eye, axes=axes), axes=axes)
    return np.swapaxes(cols.reshape(cols.shape[:-len(block_shape)] + (n,)), -1, -2)


def _toeplitz_dense(col, row):
    n = col.shape[-1]
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return np.where(i >= j, col[..., np.abs(i - j)], row[..., np.abs(i - j)])


def _block_diag(*mats):
    rows = sum(m.shape[-2] for m in mats)
    cols = sum(m.shape[-1] for m in mats)
    batch = np.broadcast_shapes(*[m.shape[:-2] for m in mats])
    out = np.zeros(batch + (rows, cols), dtype=np.result_type(*mats))
    r = c = 0
    for m in mats:
        out[..., r:r + m.shape[-2], c:c + m.shape[-1]] = m
        r, c = r + m.shape[-2], c + m.shape[-1]
    return out


def _kron(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out = a[..., :, None, :, None] * b[..., None, :, None, :]
    m, n = a.shape[-2] * b.shape[-2], a.shape[-1] * b.shape[-1]
    return np.broadcast_to(out, batch + out.shape[-4:]).reshape(batch + (m, n))


# --- the cases: name -> () -> (operator, dense, checks) ----------------------------------
# checks: "solve" (square, invertible), "det" (determinants).
ALL = ("solve", "det")


def case_full():
    a = _mat(B + (4, 4))
    return tf.linalg.LinearOperatorFullMatrix(a), a, ALL


def case_full_complex():
    a = _mat(B + (3, 3), np.complex128)
    return tf.linalg.LinearOperatorFullMatrix(a), a, ALL


def case_full_spd():
    a = _spd(B + (4, 4))
    op = tf.linalg.LinearOperatorFullMatrix(a, is_self_adjoint=True,
                                            is_positive_definite=True)
    return op, a, ALL


def case_full_rect():
    a = _mat(B + (4, 3))
    return tf.linalg.LinearOperatorFullMatrix(a), a, ()


def case_lower_triangular():
    a = _mat(B + (4, 4))
    return tf.linalg.LinearOperatorLowerTriangular(a), np.tril(a), ALL


def case_diag():
    d = rng.uniform(0.5, 2.0, B + (4,)) * rng.choice([-1, 1], B + (4,))
    return tf.linalg.LinearOperatorDiag(d), d[..., None] * np.eye(4), ALL


def case_diag_complex():
    d = (rng.uniform(0.5, 2, B + (3,)) + 1j * rng.uniform(-1, 1, B + (3,)))
    return tf.linalg.LinearOperatorDiag(d), d[..., None] * np.eye(3), ALL


def case_identity():
    op = tf.linalg.LinearOperatorIdentity(4, batch_shape=B, dtype=tf.float64)
    return op, np.broadcast_to(np.eye(4), B + (4, 4)), ALL


def case_scaled_identity():
    m = np.array([2.0, -0.5])
    return (tf.linalg.LinearOperatorScaledIdentity(4, m),
            m[:, None, None] * np.eye(4), ALL)


def case_zeros():
    op = tf.linalg.LinearOperatorZeros(4, batch_shape=B, dtype=tf.float64)
    return op, np.zeros(B + (4, 4)), ()


def case_zeros_rect():
    op = tf.linalg.LinearOperatorZeros(4, 3, batch_shape=B, dtype=tf.float64,
                                       is_square=False, is_self_adjoint=False)
    return op, np.zeros(B + (4, 3)), ()


def _tridiag_parts(n=5):
    sup, diag, sub = (rng.uniform(-1, 1, B + (n,)), rng.uniform(3, 4, B + (n,)),
                      rng.uniform(-1, 1, B + (n,)))
    dense = np.zeros(B + (n, n))
    idx = np.arange(n)
    dense[..., idx, idx] = diag
    dense[..., idx[:-1], idx[1:]] = sup[..., :-1]
    dense[..., idx[1:], idx[:-1]] = sub[..., 1:]
    return sup, diag, sub, dense


def case_tridiag_compact():
    sup, diag, sub, dense = _tridiag_parts()
    return tf.linalg.LinearOperatorTridiag(np.stack([sup, diag, sub], -2)), dense, ALL


def case_tridiag_sequence():
    sup, diag, sub, dense = _tridiag_parts()
    op = tf.linalg.LinearOperatorTridiag([sup, diag, sub], diagonals_format="sequence")
    return op, dense, ALL


def case_tridiag_matrix():
    _, _, _, dense = _tridiag_parts()
    return tf.linalg.LinearOperatorTridiag(dense, diagonals_format="matrix"), dense, ALL


def case_circulant_complex():
    s = rng.uniform(1, 2, B + (5,)) * np.exp(1j * rng.uniform(0, 6, B + (5,)))
    op = tf.linalg.LinearOperatorCirculant(s, input_output_dtype=tf.complex128)
    return op, _circulant_dense(s, (5,)), ALL


def case_circulant_real():
    # A real even kernel has a real spectrum and a real symmetric operator.
    kernel = rng.uniform(-1, 1, B + (6,))
    kernel = kernel + np.roll(kernel[..., ::-1], 1, axis=-1)
    kernel[..., 0] += 6.0
    s = np.fft.fft(kernel).real
    op = tf.linalg.LinearOperatorCirculant(s, input_output_dtype=tf.float64)
    return op, _circulant_dense(s, (6,)).real, ALL


def case_circulant_2d():
    s = rng.uniform(1, 2, B + (2, 3)) * np.exp(1j * rng.uniform(0, 6, B + (2, 3)))
    op = tf.linalg.LinearOperatorCirculant2D(s, input_output_dtype=tf.complex128)
    return op, _circulant_dense(s, (2, 3)), ALL


def case_circulant_3d():
    s = rng.uniform(1, 2, (2, 2, 2)) * np.exp(1j * rng.uniform(0, 6, (2, 2, 2)))
    op = tf.linalg.LinearOperatorCirculant3D(s, input_output_dtype=tf.complex128)
    return op, _circulant_dense(s, (2, 2, 2)), ALL


def case_toeplitz():
    col, row = rng.uniform(-1, 1, B + (5,)), rng.uniform(-1, 1, B + (5,))
    col[..., 0] = 4.0
    return tf.linalg.LinearOperatorToeplitz(col, row), _toeplitz_dense(col, row), ALL


def case_householder():
    v = rng.uniform(-1, 1, B + (4,))
    u = v / np.linalg.norm(v, axis=-1, keepdims=True)
    dense = np.eye(4) - 2 * u[..., :, None] * u[..., None, :]
    return tf.linalg.LinearOperatorHouseholder(v), dense, ALL


def case_permutation():
    perm = np.stack([rng.permutation(5) for _ in range(B[0])])
    dense = (np.arange(5) == perm[..., None]).astype(np.float64)
    return tf.linalg.LinearOperatorPermutation(perm, dtype=tf.float64), dense, ALL


def case_adjoint():
    a = _mat(B + (3, 3), np.complex128)
    base = tf.linalg.LinearOperatorFullMatrix(a)
    return tf.linalg.LinearOperatorAdjoint(base), _adj(a), ALL


def case_adjoint_rect():
    a = _mat(B + (4, 3))
    return tf.linalg.LinearOperatorFullMatrix(a).adjoint(), _adj(a), ()


def case_inversion():
    a = _mat(B + (4, 4))
    return (tf.linalg.LinearOperatorInversion(tf.linalg.LinearOperatorFullMatrix(a)),
            np.linalg.inv(a), ALL)


def case_composition():
    a, d = _mat((4, 4)), rng.uniform(1, 2, B + (4,))
    op = tf.linalg.LinearOperatorComposition([tf.linalg.LinearOperatorFullMatrix(a),
                                              tf.linalg.LinearOperatorDiag(d)])
    return op, a @ (d[..., None] * np.eye(4)), ALL


def case_composition_rect():
    a, b = _mat(B + (4, 3)), _mat((3, 2))
    op = tf.linalg.LinearOperatorFullMatrix(a).matmul(tf.linalg.LinearOperatorFullMatrix(b))
    return op, a @ b, ()


def case_block_diag():
    a, b = _mat(B + (2, 2)), _mat((3, 3))
    op = tf.linalg.LinearOperatorBlockDiag([tf.linalg.LinearOperatorFullMatrix(a),
                                            tf.linalg.LinearOperatorFullMatrix(b)])
    return op, _block_diag(a, np.broadcast_to(b, B + (3, 3))), ALL


def case_kronecker():
    a, b = _mat(B + (2, 2)), _mat((3, 3))
    op = tf.linalg.LinearOperatorKronecker([tf.linalg.LinearOperatorFullMatrix(a),
                                            tf.linalg.LinearOperatorFullMatrix(b)])
    return op, _kron(a, b), ALL


def case_kronecker_complex():
    a, b = _mat((2, 2), np.complex128), _mat(B + (2, 2), np.complex128)
    c = _mat((2, 2), np.complex128)
    op = tf.linalg.LinearOperatorKronecker([tf.linalg.LinearOperatorFullMatrix(m)
                                            for m in (a, b, c)])
    return op, _kron(_kron(a[None], b), c[None]), ALL


def case_kronecker_rect():
    a, b = _mat(B + (2, 3)), _mat((3, 2))
    op = tf.linalg.LinearOperatorKronecker([tf.linalg.LinearOperatorFullMatrix(a),
                                            tf.linalg.LinearOperatorFullMatrix(b)])
    return op, _kron(a, b), ()


def case_low_rank_update_spd():
    d, u, e = rng.uniform(1, 2, B + (5,)), rng.uniform(-1, 1, B + (5, 2)), \
        rng.uniform(0.5, 1, (2,))
    op = tf.linalg.LinearOperatorLowRankUpdate(
        tf.linalg.LinearOperatorDiag(d, is_positive_definite=True), u, diag_update=e,
        is_diag_update_positive=True)
    assert op.is_positive_definite and op._use_cholesky
    return op, d[..., None] * np.eye(5) + (u * e) @ _adj(u), ALL


def case_low_rank_update_general():
    a, u, v = _mat(B + (4, 4), np.complex128), _mat((4, 2), np.complex128), \
        _mat(B + (4, 2), np.complex128)
    e = rng.uniform(-1, 1, (2,)) + 1j * rng.uniform(-1, 1, (2,))
    op = tf.linalg.LinearOperatorLowRankUpdate(tf.linalg.LinearOperatorFullMatrix(a), u,
                                               diag_update=e, v=v)
    return op, a + (u * e) @ _adj(v), ALL


def case_low_rank_update_identity_diag():
    a, u = _mat(B + (4, 4)), rng.uniform(-1, 1, (4, 3))
    op = tf.linalg.LinearOperatorLowRankUpdate(tf.linalg.LinearOperatorFullMatrix(a), u)
    return op, a + u @ u.T, ALL


def case_block_lower_triangular():
    a, b, c = _mat(B + (2, 2)), _mat((3, 2)), _mat(B + (3, 3))
    full = tf.linalg.LinearOperatorFullMatrix
    op = tf.linalg.LinearOperatorBlockLowerTriangular([[full(a)], [full(b), full(c)]])
    dense = np.zeros(B + (5, 5))
    dense[..., :2, :2], dense[..., 2:, :2], dense[..., 2:, 2:] = a, b, c
    return op, dense, ALL


def case_block_lower_triangular_complex3():
    full = tf.linalg.LinearOperatorFullMatrix
    m = [[_mat((2, 2), np.complex128)],
         [_mat((1, 2), np.complex128), _mat(B + (1, 1), np.complex128)],
         [_mat((2, 2), np.complex128), _mat((2, 1), np.complex128),
          _mat((2, 2), np.complex128)]]
    op = tf.linalg.LinearOperatorBlockLowerTriangular([[full(x) for x in row] for row in m])
    dense = np.zeros(B + (5, 5), np.complex128)
    offs = [0, 2, 3, 5]
    for i, row in enumerate(m):
        for j, x in enumerate(row):
            dense[..., offs[i]:offs[i + 1], offs[j]:offs[j + 1]] = x
    return op, dense, ALL


CASES = {name[5:]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}


def _arg(shape, dtype):
    x = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    return x.astype(dtype)


def _build(op, dense, checks):
    """(fetches dict, expected dict) for one operator."""
    dt = op.dtype.as_numpy_dtype
    m, n = dense.shape[-2:]
    fetches, expected = {}, {}
    fetches["dense"], expected["dense"] = op.to_dense(), dense
    fetches["diag"], expected["diag"] = op.diag_part(), np.diagonal(dense, 0, -2, -1)
    fetches["trace"], expected["trace"] = op.trace(), np.trace(dense, 0, -2, -1)
    for adjoint in (False, True):
        a = _adj(dense) if adjoint else dense
        for adjoint_arg in (False, True):
            x = _arg(XB + (a.shape[-1], 2), dt)
            key = "matmul_%d%d" % (adjoint, adjoint_arg)
            fetches[key] = op.matmul(_adj(x) if adjoint_arg else x, adjoint=adjoint,
                                     adjoint_arg=adjoint_arg)
            expected[key] = a @ x
        v = _arg(XB + (a.shape[-1],), dt)
        fetches["matvec_%d" % adjoint] = op.matvec(v, adjoint=adjoint)
        expected["matvec_%d" % adjoint] = (a @ v[..., None])[..., 0]
        if "solve" in checks:
            inv = np.linalg.inv(a)
            for adjoint_arg in (False, True):
                r = _arg(XB + (m, 3), dt)
                key = "solve_%d%d" % (adjoint, adjoint_arg)
                fetches[key] = op.solve(_adj(r) if adjoint_arg else r, adjoint=adjoint,
                                        adjoint_arg=adjoint_arg)
                expected[key] = inv @ r
            fetches["solvevec_%d" % adjoint] = op.solvevec(v, adjoint=adjoint)
            expected["solvevec_%d" % adjoint] = (inv @ v[..., None])[..., 0]
    if "det" in checks:
        fetches["det"], expected["det"] = op.determinant(), np.linalg.det(dense)
        fetches["logdet"] = op.log_abs_determinant()
        expected["logdet"] = np.linalg.slogdet(dense)[1]
    assert op.shape.as_list() == list(dense.shape)
    return fetches, expected


def test_all_operators_against_numpy(sess):
    fetches, expected = {}, {}
    for name, fn in CASES.items():
        op, dense, checks = fn()
        f, e = _build(op, dense, checks)
        fetches[name], expected[name] = f, e
    got = sess.run(fetches)
    failures = []
    for name in CASES:
        for key, want in expected[name].items():
            have = np.asarray(got[name][key])
            if have.shape != np.shape(want):
                failures.append("%s.%s: shape %s, expected %s"
                                % (name, key, have.shape, np.shape(want)))
            elif not np.allclose(have, want, rtol=1e-8, atol=1e-8):
                failures.append("%s.%s: max error %g" % (name, key,
                                                         np.max(np.abs(have - want))))
    assert not failures, "\n".join(failures)


def test_cases_cover_every_class():
    classes = {n for n in dir(tf.linalg) if n.startswith("LinearOperator")}
    built = set()
    with tf.Graph().as_default():
        for fn in CASES.values():
            op = fn()[0]
            built.add(type(op).__name__)
            for o in getattr(op, "operators", []):
                built.add(type(o).__name__)
    assert classes - built == {"LinearOperator"}


@pytest.mark.parametrize("name", ["full_spd", "diag", "circulant_real",
                                  "low_rank_update_spd", "kronecker"])
def test_dynamic_shapes_match_static(sess, name):
    op, dense, _ = CASES[name]()
    got = sess.run([op.shape_tensor(), op.batch_shape_tensor(),
                    op.domain_dimension_tensor(), op.range_dimension_tensor(),
                    op.tensor_rank_tensor()])
    assert list(got[0]) == list(dense.shape)
    assert list(got[1]) == list(dense.shape[:-2])
    assert (got[2], got[3], got[4]) == (dense.shape[-1], dense.shape[-2], dense.ndim)
