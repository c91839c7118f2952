"""tf.linalg.LinearOperator hints, errors, operator algebra (adjoint / inverse / matmul of
operators) and gradients (ops/linalg/linear_operator*)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

rng = np.random.RandomState(3)
la = tf.linalg


def _mat(shape):
    return rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])


# --- hints -------------------------------------------------------------------------------
def test_hints_are_implied_and_checked(graph):
    op = la.LinearOperatorFullMatrix(_mat((3, 3)), is_positive_definite=True)
    assert op.is_non_singular and op.is_square
    with pytest.raises(ValueError, match="always non-singular"):
        la.LinearOperatorFullMatrix(_mat((3, 3)), is_positive_definite=True,
                                    is_non_singular=False)
    with pytest.raises(ValueError, match="always square"):
        la.LinearOperatorFullMatrix(_mat((3, 3)), is_self_adjoint=True, is_square=False)
    with pytest.raises(ValueError, match="is_square hint to False"):
        la.LinearOperatorFullMatrix(_mat((3, 3)), is_square=False).is_square
    assert la.LinearOperatorFullMatrix(np.ones((2, 3))).is_square is False
    assert la.LinearOperatorDiag([1.0, 2.0]).is_self_adjoint is True
    with pytest.raises(ValueError, match="always self adjoint"):
        la.LinearOperatorDiag([1.0, 2.0], is_self_adjoint=False)
    with pytest.raises(ValueError, match="always self adjoint"):
        la.LinearOperatorHouseholder([1.0, 2.0], is_self_adjoint=False)
    with pytest.raises(ValueError, match="always non-singular"):
        la.LinearOperatorIdentity(3, is_non_singular=False)
    with pytest.raises(ValueError, match="always singular"):
        la.LinearOperatorZeros(3, is_non_singular=True)


def test_properties(graph):
    op = la.LinearOperatorDiag(np.ones((2, 3)), name="D")
    assert op.name == "D" and op.dtype == tf.float64 and op.graph_parents == []
    assert op.batch_shape.as_list() == [2] and op.tensor_rank == 3
    assert op.domain_dimension.value == 3 and op.range_dimension.value == 3
    assert op.parameters["name"] == "D"
    assert op.matmul(np.ones((3, 1))).name.startswith("D/matmul/")
    assert isinstance(op, la.LinearOperator)


def test_placeholder_shapes_give_dynamic_shape_tensors(sess):
    m = tf.placeholder(tf.float64, [None, 3, 3])
    op = la.LinearOperatorFullMatrix(m)
    assert op.batch_shape.as_list() == [None]
    got = sess.run([op.shape_tensor(), op.batch_shape_tensor(), op.to_dense()],
                   {m: np.ones((4, 3, 3))})
    assert list(got[0]) == [4, 3, 3] and list(got[1]) == [4]


# --- errors ------------------------------------------------------------------------------
def test_bad_arguments(graph):
    with pytest.raises(TypeError):
        la.LinearOperatorFullMatrix(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        la.LinearOperatorFullMatrix([1.0, 2.0])
    with pytest.raises(ValueError, match="at least 1 dimension"):
        la.LinearOperatorDiag(1.0)
    with pytest.raises(ValueError, match="mismatched dimensions"):
        la.LinearOperatorToeplitz([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="unique integers"):
        la.LinearOperatorPermutation([0, 0, 1])
    with pytest.raises(TypeError, match="integer"):
        la.LinearOperatorPermutation([0.0, 1.0])
    with pytest.raises(ValueError, match="non-negative"):
        la.LinearOperatorIdentity(-1)
    with pytest.raises(TypeError, match="integer"):
        la.LinearOperatorIdentity(2.5)
    with pytest.raises(ValueError, match="diagonals_format"):
        la.LinearOperatorTridiag(np.ones((3, 3)), diagonals_format="banded")
    with pytest.raises(ValueError, match="non-empty"):
        la.LinearOperatorComposition([])
    with pytest.raises(TypeError, match="same dtype"):
        la.LinearOperatorBlockDiag([la.LinearOperatorDiag(np.ones(1)),
                                    la.LinearOperatorDiag(np.ones(1, np.float32))])
    with pytest.raises(ValueError, match="must contain 2 blocks"):
        d = la.LinearOperatorDiag([1.0])
        la.LinearOperatorBlockLowerTriangular([[d], [d]])


def test_mismatched_shapes_are_value_errors_at_build_time(graph):
    op = la.LinearOperatorFullMatrix(_mat((3, 3)))
    with pytest.raises(ValueError):
        op.matmul(np.ones((4, 2)))
    with pytest.raises(ValueError):
        op.matvec(np.ones(4))
    with pytest.raises(ValueError):
        op.solve(np.ones((2, 2)))
    with pytest.raises(ValueError):
        la.LinearOperatorDiag(np.ones(3)).matmul(np.ones((2, 2)), adjoint_arg=False)
    with pytest.raises(ValueError, match="incompatible"):
        la.LinearOperatorComposition([op, la.LinearOperatorFullMatrix(np.ones((2, 2)))])
    with pytest.raises(ValueError, match="incompatible"):
        op.matmul(la.LinearOperatorDiag(np.ones(2)))
    with pytest.raises(ValueError):  # batch shapes (2,) and (3,) do not broadcast
        la.LinearOperatorLowRankUpdate(la.LinearOperatorDiag(np.ones((2, 3))),
                                       np.ones((3, 3, 1)))
    with pytest.raises(ValueError):  # u has 2 rows, the operator 3 columns
        la.LinearOperatorLowRankUpdate(la.LinearOperatorDiag(np.ones(3)), np.ones((2, 1)))


def test_wrong_dtype_is_type_error(graph):
    op = la.LinearOperatorDiag(np.ones(3))
    with pytest.raises(TypeError, match="dtype"):
        op.matmul(np.ones((3, 1), np.float32))
    with pytest.raises(TypeError, match="dtype"):
        op.solvevec(np.ones(3, np.float32))


def test_unsupported_requests(graph):
    rect = la.LinearOperatorFullMatrix(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="not be square"):
        rect.solve(np.ones((2, 1)))
    with pytest.raises(NotImplementedError, match="not be square"):
        rect.determinant()
    with pytest.raises(ValueError, match="non square"):
        rect.inverse()
    with pytest.raises(NotImplementedError, match="singular"):
        la.LinearOperatorZeros(2).solve(np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="Cholesky"):
        la.LinearOperatorFullMatrix(_mat((2, 2))).cholesky()
    with pytest.raises(NotImplementedError, match="self-adjoint"):
        la.LinearOperatorFullMatrix(_mat((2, 2))).eigvals()
    with pytest.raises(ValueError, match="is_non_singular"):
        la.LinearOperatorInversion(la.LinearOperatorZeros(2))


def test_run_time_assertions(sess):
    singular = la.LinearOperatorDiag(tf.placeholder_with_default([1.0, 0.0], [2]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(singular.assert_non_singular())
    not_pd = la.LinearOperatorFullMatrix(np.array([[1.0, 0.0], [0.0, -1.0]]),
                                         is_self_adjoint=True)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(not_pd.assert_positive_definite())
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(la.LinearOperatorFullMatrix(np.array([[1.0, 2.0], [0.0, 1.0]]))
                 .assert_self_adjoint())
    ok = la.LinearOperatorFullMatrix(np.array([[2.0, 1.0], [1.0, 2.0]]),
                                     is_self_adjoint=True, is_positive_definite=True)
    sess.run([ok.assert_non_singular(), ok.assert_positive_definite(),
              ok.assert_self_adjoint()])


# --- operator algebra ---------------------------------------------------------------------
def test_derived_operators_keep_structure(sess):
    d = la.LinearOperatorDiag(np.array([1.0, 2.0, 4.0]))
    assert isinstance(d.inverse(), la.LinearOperatorDiag)
    assert isinstance(d.matmul(d), la.LinearOperatorDiag)
    assert d.adjoint() is d and d.H is d
    ident = la.LinearOperatorIdentity(3, dtype=tf.float64)
    assert d.matmul(ident) is d and ident.matmul(d) is d
    full = la.LinearOperatorFullMatrix(_mat((3, 3)))
    assert isinstance(full.H, la.LinearOperatorAdjoint) and full.H.H is full
    assert isinstance(full.inverse(), la.LinearOperatorInversion)
    assert full.inverse().inverse() is full
    assert isinstance(full @ d, la.LinearOperatorComposition)
    c = la.LinearOperatorCirculant(np.array([1.0, 2.0, 3.0]), input_output_dtype=tf.float64)
    assert isinstance(c.matmul(c), la.LinearOperatorCirculant)
    h = la.LinearOperatorHouseholder([1.0, 2.0])
    assert h.inverse() is h
    k = la.LinearOperatorKronecker([d, d])
    assert isinstance(k.inverse(), la.LinearOperatorKronecker)
    spd = la.LinearOperatorFullMatrix(np.array([[4.0, 2.0], [2.0, 3.0]]),
                                      is_self_adjoint=True, is_positive_definite=True)
    chol = spd.cholesky()
    assert isinstance(chol, la.LinearOperatorLowerTriangular)
    got = sess.run([d.inverse().to_dense(), (full @ d).to_dense(), chol.to_dense(),
                    d.solve(d).to_dense(), d.eigvals(), spd.cond()])
    np.testing.assert_allclose(got[0], np.diag([1, 0.5, 0.25]))
    np.testing.assert_allclose(got[2], np.linalg.cholesky([[4.0, 2.0], [2.0, 3.0]]))
    np.testing.assert_allclose(got[3], np.eye(3))
    np.testing.assert_allclose(got[4], [1.0, 2.0, 4.0])
    np.testing.assert_allclose(got[5], np.linalg.cond([[4.0, 2.0], [2.0, 3.0]]))


def test_add_to_tensor_and_identity_to_dense(sess):
    x = rng.uniform(size=(2, 3, 3))
    ops = [la.LinearOperatorDiag(np.ones((2, 3))),
           la.LinearOperatorIdentity(3, batch_shape=[2], dtype=tf.float64),
           la.LinearOperatorScaledIdentity(3, np.array([1.0, 1.0])),
           la.LinearOperatorFullMatrix(np.broadcast_to(np.eye(3), (2, 3, 3)))]
    for got in sess.run([o.add_to_tensor(x) for o in ops]):
        np.testing.assert_allclose(got, x + np.eye(3))


# --- gradients ----------------------------------------------------------------------------
def _grad_err(param_shape, param_value, build):
    p = tf.placeholder(tf.float64, param_shape)
    y = build(p)
    return compute_gradient_error(p, list(param_shape), y, y.shape.as_list(),
                                  x_init_value=param_value, delta=1e-6)


RHS = rng.uniform(-1, 1, (2, 3, 2))


@pytest.mark.parametrize("method", ["solve", "logdet", "matmul"])
def test_gradients_full_matrix(graph, method):
    build = {"solve": lambda op: op.solve(RHS, adjoint=True),
             "logdet": lambda op: op.log_abs_determinant(),
             "matmul": lambda op: op.matmul(RHS, adjoint_arg=False)}[method]
    err = _grad_err((2, 3, 3), _mat((2, 3, 3)),
                    lambda m: build(la.LinearOperatorFullMatrix(m)))
    assert err < 1e-6


@pytest.mark.parametrize("method", ["solve", "logdet"])
def test_gradients_diag(graph, method):
    build = {"solve": lambda op: op.solve(RHS),
             "logdet": lambda op: op.log_abs_determinant()}[method]
    err = _grad_err((2, 3), rng.uniform(1, 2, (2, 3)),
                    lambda d: build(la.LinearOperatorDiag(d)))
    assert err < 1e-6


@pytest.mark.parametrize("method", ["solve", "logdet"])
@pytest.mark.parametrize("spd", [True, False])
def test_gradients_low_rank_update(graph, method, spd):
    build = {"solve": lambda op: op.solve(RHS),
             "logdet": lambda op: op.log_abs_determinant()}[method]
    diag = rng.uniform(1, 2, (2, 3))

    def make(u):
        if spd:
            base = la.LinearOperatorDiag(diag, is_positive_definite=True)
            return la.LinearOperatorLowRankUpdate(base, u, diag_update=np.array([0.5, 1.0]),
                                                  is_diag_update_positive=True)
        base = la.LinearOperatorFullMatrix(_mat((3, 3)))
        return la.LinearOperatorLowRankUpdate(base, u, v=u[..., ::-1] * 0.5)
    err = _grad_err((2, 3, 2), rng.uniform(-0.5, 0.5, (2, 3, 2)),
                    lambda u: build(make(u)))
    assert err < 1e-6
