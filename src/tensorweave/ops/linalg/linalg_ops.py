"""Dense linear algebra on batches of matrices: inverse, determinants, Cholesky, QR, SVD,
self-adjoint eigendecomposition and linear solves, with TF1's gradients.

Every kernel works on [..., M, N] arrays through NumPy's batched `numpy.linalg`
(LAPACK); float16 is computed in float32 and cast back. Run-time failures raise TF's
InvalidArgumentError messages. Gradient formulas:
  inverse      dA = -Y^H G Y^H (Y = A^-1)
  determinant  dA = g conj(det) A^-H; log|det|: dA = g A^-H
  Cholesky     Murray (2016): A^-H Phi(L^H G) L^-1, symmetrised
  QR, SVD, eigh  the standard spectral formulas (M >= N for QR)
  solves       dB = A^-H G, dA = -dB X^H (lower/upper triangle kept for triangular)
"""
from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, unknown_shape, \
    with_rank_at_least
from tensorweave.ops.linalg import matrix_ops

_LINALG_TYPES = (_dt.float64, _dt.float32, _dt.float16, _dt.complex64, _dt.complex128)


def _invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, message)


def _work(x: np.ndarray) -> np.ndarray:
    """float16 is not a LAPACK type: compute in float32."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


# --- shapes ---------------------------------------------------------------------------------
def _matrix_dims(shape: TensorShape, square: bool = False):
    """(batch dims, rows, cols) of a [..., M, N] shape, or None for an unknown rank."""
    if shape.ndims is None:
        return None
    dims = with_rank_at_least(shape, 2).as_list()
    rows, cols = dims[-2], dims[-1]
    if square:
        rows = cols = merge_dim(rows, cols)
    return dims[:-2], rows, cols


def _square_shape(op):
    m = _matrix_dims(op.inputs[0].shape, square=True)
    return unknown_shape() if m is None else TensorShape(m[0] + [m[1], m[2]])


def _batch_scalar_shape(op):
    m = _matrix_dims(op.inputs[0].shape, square=True)
    return unknown_shape() if m is None else TensorShape(m[0])


def _check_square(ctx, x: np.ndarray) -> None:
    if x.ndim < 2:
        raise _invalid(ctx, "Input tensor 0 must have rank >= 2, got %d" % x.ndim)
    if x.shape[-1] != x.shape[-2]:
        raise _invalid(ctx, "Input matrix must be square.")


def _register(op_type: str, inputs, outputs, shape, attrs=None, types=_LINALG_TYPES):
    all_attrs = {"T": TypeAttr(types)}
    all_attrs.update(attrs or {})
    register_op(op_type, inputs=inputs, outputs=outputs, attrs=all_attrs, shape=shape)


# --- MatrixInverse --------------------------------------------------------------------------
_register("MatrixInverse", ["input: T"], ["output: T"], _square_shape, {"adjoint": False})


@kernel("MatrixInverse", cheap=False)
def _matrix_inverse_kernel(ctx, x):
    _check_square(ctx, x)
    a = _work(x)
    if ctx.attrs["adjoint"]:
        a = np.conj(np.swapaxes(a, -1, -2))
    try:
        if not np.isfinite(a).all():  # no pivot of TF's LU is then usable
            raise np.linalg.LinAlgError
        return np.linalg.inv(a).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise _invalid(ctx, "Input is not invertible.") from None


@gradient("MatrixInverse")
def _matrix_inverse_grad(op, grad):
    from tensorweave.ops.math import math_unary
    y = op.outputs[0]
    if op._get_attr("adjoint"):
        return [math_unary.negative(_mm(y, _mm(grad, y, adjoint_a=True)))]
    return [math_unary.negative(_mm(y, _mm(grad, y, adjoint_b=True), adjoint_a=True))]


def _mm(a, b, adjoint_a=False, adjoint_b=False):
    from tensorweave.ops.math import matmul_ops
    return matmul_ops.matmul(a, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


@tf_export("linalg.inv", "matrix_inverse")
def inv(input, adjoint: bool = False, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Computes the inverse of each square matrix (TF1 `tf.linalg.inv`).

    Args:
      input: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      adjoint: invert the adjoint (conjugate transpose) instead.
      name: op name (default "MatrixInverse").

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      ValueError: rank < 2 or non-square (statically known).
      InvalidArgumentError (at run time): "Input is not invertible." for a singular matrix.
    """
    return apply_op("MatrixInverse", [input], {"adjoint": bool(adjoint)},
                    name=name or "MatrixInverse").outputs[0]


# --- MatrixDeterminant, LogMatrixDeterminant ------------------------------------------------
_register("MatrixDeterminant", ["input: T"], ["output: T"], _batch_scalar_shape)


@kernel("MatrixDeterminant", cheap=False)
def _det_kernel(ctx, x):
    _check_square(ctx, x)
    return np.asarray(np.linalg.det(_work(x))).astype(x.dtype, copy=False)


def _batch_matrix_multiplier(g: Tensor) -> Tensor:
    """g [...] as [..., 1, 1], to scale a batch of matrices."""
    from tensorweave.ops.array import array_ops
    return array_ops.expand_dims(array_ops.expand_dims(g, -1), -1)


@gradient("MatrixDeterminant")
def _det_grad(op, grad):
    from tensorweave.ops.math import math_binary, math_unary
    a, det = op.inputs[0], op.outputs[0]
    scale = math_binary.multiply(grad, math_unary.conj(det))
    return [math_binary.multiply(_batch_matrix_multiplier(scale), inv(a, adjoint=True))]


_register("LogMatrixDeterminant", ["input: T"], ["sign: T", "log_abs_determinant: T"],
          lambda op: [_batch_scalar_shape(op)] * 2)


@kernel("LogMatrixDeterminant", cheap=False)
def _slogdet_kernel(ctx, x):
    _check_square(ctx, x)
    sign, logabs = np.linalg.slogdet(_work(x))
    return (np.asarray(sign).astype(x.dtype, copy=False),
            np.asarray(logabs).astype(x.dtype, copy=False))


@gradient("LogMatrixDeterminant")
def _slogdet_grad(op, _, grad_logabs):
    from tensorweave.ops.math import math_binary, math_unary
    if grad_logabs.dtype.is_complex:
        # log|det| is real: only the real part of its gradient counts
        half = convert_to_tensor(0.5, dtype=grad_logabs.dtype)
        grad_logabs = math_binary.multiply(half, math_binary.add(
            grad_logabs, math_unary.conj(grad_logabs)))
    return [math_binary.multiply(_batch_matrix_multiplier(grad_logabs),
                                 inv(op.inputs[0], adjoint=True))]


SlogdetOutput = collections.namedtuple("LogMatrixDeterminant",
                                       ["sign", "log_abs_determinant"])


@tf_export("linalg.det", "matrix_determinant")
def det(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Computes the determinant of each square matrix (TF1 `tf.linalg.det`).

    Args:
      input: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      name: op name (default "MatrixDeterminant").

    Returns:
      A Tensor [...] of the dtype of `input`.

    Raises:
      ValueError: rank < 2 or non-square (statically known).
    """
    return apply_op("MatrixDeterminant", [input],
                    name=name or "MatrixDeterminant").outputs[0]


@tf_export("linalg.slogdet")
def slogdet(input, name: Optional[str] = None):  # noqa: A002
    """Computes the sign and log(|det|) of each square matrix (TF1 `tf.linalg.slogdet`).

    Args:
      input: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      name: op name (default "LogMatrixDeterminant").

    Returns:
      A namedtuple (sign, log_abs_determinant) of Tensors [...] of the dtype of `input`;
      a singular matrix gives sign 0 and log_abs_determinant -inf.
    """
    op = apply_op("LogMatrixDeterminant", [input], name=name or "LogMatrixDeterminant")
    return SlogdetOutput(*op.outputs)


@tf_export("linalg.logdet")
def logdet(matrix, name: Optional[str] = None) -> Tensor:
    """log(det(matrix)) of Hermitian positive definite matrices, through their Cholesky
    factor: 2 sum(log(diag(chol))) (TF1 `tf.linalg.logdet`).

    Args:
      matrix: a Tensor [..., M, M], Hermitian positive definite.
      name: name scope (default "logdet").

    Returns:
      A Tensor [...] of the dtype of `matrix` (its real dtype for complex input).
    """
    from tensorweave.ops.math import math_binary, math_unary, reduction_ops
    with _graph.name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        diag = matrix_ops.matrix_diag_part(chol)
        # the diagonal of the factor is real and positive: |d| is its real part
        log_diag = math_unary.log(math_unary.abs(diag)) if chol.dtype.is_complex \
            else math_unary.log(diag)
        total = reduction_ops.reduce_sum(log_diag, axis=[-1])  # real, as TF
        return math_binary.multiply(convert_to_tensor(2, dtype=total.dtype), total)


# --- Cholesky -------------------------------------------------------------------------------
_register("Cholesky", ["input: T"], ["output: T"], _square_shape)


@kernel("Cholesky", cheap=False)
def _cholesky_kernel(ctx, x):
    _check_square(ctx, x)
    if x.size == 0:
        return x.copy()
    try:
        return np.linalg.cholesky(_work(x)).astype(x.dtype, copy=False)  # reads the lower half
    except np.linalg.LinAlgError:
        raise _invalid(ctx, "Cholesky decomposition was not successful. The input might "
                       "not be valid.") from None


@gradient("Cholesky")
def _cholesky_grad(op, grad):
    from tensorweave.ops.math import math_binary
    chol = op.outputs[0]
    # Phi(L^H G): the lower triangle with half the diagonal
    middle = _mm(chol, grad, adjoint_a=True)
    middle = matrix_ops.matrix_set_diag(middle, math_binary.multiply(
        convert_to_tensor(0.5, dtype=middle.dtype), matrix_ops.matrix_diag_part(middle)))
    middle = matrix_ops.band_part(middle, -1, 0)
    # L^-H middle L^-1 by two triangular solves
    left = triangular_solve(chol, middle, lower=True, adjoint=True)
    grad_a = matrix_ops.adjoint(triangular_solve(chol, matrix_ops.adjoint(left),
                                                 lower=True, adjoint=True))
    grad_a = math_binary.add(grad_a, matrix_ops.adjoint(grad_a))
    return [math_binary.multiply(convert_to_tensor(0.5, dtype=grad_a.dtype), grad_a)]


@tf_export("linalg.cholesky", "cholesky")
def cholesky(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Computes the Cholesky factor L (A = L L^H) of each Hermitian positive definite
    matrix, reading only its lower triangle (TF1 `tf.linalg.cholesky`).

    Args:
      input: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      name: op name (default "Cholesky").

    Returns:
      A lower-triangular Tensor of the shape and dtype of `input`.

    Raises:
      InvalidArgumentError (at run time): a matrix is not positive definite (TF1
        behaviour; TF 2 returns NaNs instead).
    """
    return apply_op("Cholesky", [input], name=name or "Cholesky").outputs[0]


@tf_export("linalg.cholesky_solve", "cholesky_solve")
def cholesky_solve(chol, rhs, name: Optional[str] = None) -> Tensor:
    """Solves A X = rhs given the Cholesky factor of A (TF1 `tf.linalg.cholesky_solve`).

    Args:
      chol: a Tensor [..., M, M], the lower Cholesky factor of A.
      rhs: a Tensor [..., M, K].
      name: name scope (default "cholesky_solve").

    Returns:
      A Tensor [..., M, K].
    """
    with _graph.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = triangular_solve(chol, rhs, adjoint=False, lower=True)
        return triangular_solve(chol, y, adjoint=True, lower=True)


# --- MatrixTriangularSolve, MatrixSolve -----------------------------------------------------
def _solve_shape(op, broadcast: bool):
    m = _matrix_dims(op.inputs[0].shape, square=True)
    r = _matrix_dims(op.inputs[1].shape)
    if m is None or r is None:
        if r is not None:
            return TensorShape([None] * len(r[0]) + [r[1], r[2]]) if broadcast \
                else TensorShape(r[0] + [r[1], r[2]])
        return unknown_shape()
    rows = merge_dim(m[1], r[1])
    if broadcast:
        from tensorweave.framework.shapes import broadcast_shapes
        batch = broadcast_shapes(TensorShape(m[0]), TensorShape(r[0])).as_list()
    else:
        if len(m[0]) != len(r[0]):
            raise ValueError("Shapes must be equal rank, but are %d and %d"
                             % (len(m[0]) + 2, len(r[0]) + 2))
        batch = [merge_dim(a, b) for a, b in zip(m[0], r[0])]
    return TensorShape(batch + [rows, r[2]])


_TRSOLVE_TYPES = (_dt.bfloat16,) + _LINALG_TYPES
_register("MatrixTriangularSolve", ["matrix: T", "rhs: T"], ["output: T"],
          lambda op: _solve_shape(op, broadcast=True), {"lower": True, "adjoint": False},
          _TRSOLVE_TYPES)
_register("MatrixSolve", ["matrix: T", "rhs: T"], ["output: T"],
          lambda op: _solve_shape(op, broadcast=False), {"adjoint": False})


def _check_solve_inputs(ctx, a, b, broadcast: bool) -> None:
    _check_square(ctx, a)
    if b.ndim < 2:
        raise _invalid(ctx, "Input tensor 1 must have rank >= 2, got %d" % b.ndim)
    if a.shape[-1] != b.shape[-2]:
        raise _invalid(ctx, "Input matrix and right-hand side must have the same number of "
                       "rows.")
    if not broadcast and a.shape[:-2] != b.shape[:-2]:
        raise _invalid(ctx, "Input matrix and right-hand side must have the same batch "
                       "dimensions.")


def _batch_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if b.shape[-1] == 0 or a.shape[-1] == 0:
        return np.zeros(batch + b.shape[-2:], dtype=np.result_type(a, b))
    return np.linalg.solve(a, b)


@kernel("MatrixTriangularSolve", cheap=False)
def _triangular_solve_kernel(ctx, a, b):
    _check_solve_inputs(ctx, a, b, broadcast=True)
    work_a, work_b = _work(a), _work(b)
    if a.dtype.name == "bfloat16":
        work_a, work_b = a.astype(np.float32), b.astype(np.float32)
    lower = ctx.attrs["lower"]
    tri = np.tril(work_a) if lower else np.triu(work_a)
    if ctx.attrs["adjoint"]:
        tri = np.conj(np.swapaxes(tri, -1, -2))
    # a zero on the diagonal gives inf/NaN, as TF (no error)
    # substitution, as TF's solver: backward stable, O(n^2) per right-hand side where a
    # general LU would take O(n^3) and ignore the zeros (64 systems of 64x64 with 64
    # right-hand sides: 5.1 -> 3.3 ms); a zero on the diagonal gives inf/NaN, as in TF
    out = _substitute(tri, work_b, lower != ctx.attrs["adjoint"])
    return out.astype(a.dtype, copy=False)


def _substitute(tri: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """Forward/back substitution: one step per row, each vectorised over the batch and
    the right-hand sides."""
    batch = np.broadcast_shapes(tri.shape[:-2], b.shape[:-2])
    tri = np.broadcast_to(tri, batch + tri.shape[-2:])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(tri, b))
    n = tri.shape[-1]
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        done = slice(0, i) if lower else slice(i + 1, n)
        acc = tri[..., i:i + 1, done] @ x[..., done, :]
        x[..., i, :] = (x[..., i, :] - acc[..., 0, :]) / tri[..., i, i][..., None]
    return x


@kernel("MatrixSolve", cheap=False)
def _matrix_solve_kernel(ctx, a, b):
    _check_solve_inputs(ctx, a, b, broadcast=False)
    work_a = _work(a)
    if ctx.attrs["adjoint"]:
        work_a = np.conj(np.swapaxes(work_a, -1, -2))
    try:
        if not np.isfinite(work_a).all():  # as MatrixInverse
            raise np.linalg.LinAlgError
        return _batch_solve(work_a, _work(b)).astype(a.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise _invalid(ctx, "Input matrix is not invertible.") from None


def _reduce_to_shape(grad: Tensor, like: Tensor) -> Tensor:
    """Sums a broadcast batch gradient back to the batch shape of `like`."""
    if grad.shape.is_fully_defined() and like.shape.is_fully_defined() and \
            grad.shape.as_list() == like.shape.as_list():
        return grad
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_grad_util
    return array_ops.reshape(math_grad_util.unbroadcast(grad, like, grad)[0],
                             array_ops.shape(like))


def _solve_grad(op, grad, solve_fn):
    """Shared gradient of X = A^-1 B (or A^-H B): dB = A^-H G (or A^-1 G), dA = -dB X^H
    (or -X dB^H)."""
    from tensorweave.ops.math import math_unary
    a, b = op.inputs
    x = op.outputs[0]
    adjoint_attr = op._get_attr("adjoint")
    grad_b = solve_fn(a, grad, not adjoint_attr)
    if adjoint_attr:
        grad_a = math_unary.negative(_mm(x, grad_b, adjoint_b=True))
    else:
        grad_a = math_unary.negative(_mm(grad_b, x, adjoint_b=True))
    return grad_a, grad_b


@gradient("MatrixSolve")
def _matrix_solve_grad(op, grad):
    grad_a, grad_b = _solve_grad(op, grad, lambda a, g, adj: solve(a, g, adjoint=adj))
    return [grad_a, grad_b]


@gradient("MatrixTriangularSolve")
def _triangular_solve_grad(op, grad):
    lower = op._get_attr("lower")
    grad_a, grad_b = _solve_grad(op, grad, lambda a, g, adj: triangular_solve(
        a, g, lower=lower, adjoint=adj))
    grad_a = matrix_ops.band_part(grad_a, -1, 0) if lower else \
        matrix_ops.band_part(grad_a, 0, -1)
    a, b = op.inputs
    return [_reduce_to_shape(grad_a, a), _reduce_to_shape(grad_b, b)]


@tf_export("linalg.triangular_solve", "matrix_triangular_solve")
def triangular_solve(matrix, rhs, lower: bool = True, adjoint: bool = False,
                     name: Optional[str] = None) -> Tensor:
    """Solves triangular systems matrix X = rhs (TF1 `tf.linalg.triangular_solve`); only
    the lower (or upper) triangle of `matrix` is read. Batch dimensions broadcast.

    Args:
      matrix: a Tensor [..., M, M].
      rhs: a Tensor [..., M, K] of the same dtype.
      lower: `matrix` is lower (True) or upper (False) triangular.
      adjoint: solve with the adjoint of `matrix`.
      name: name scope (default "triangular_solve").

    Returns:
      A Tensor [..., M, K] (broadcast batch dimensions); a zero on the diagonal gives
      inf/NaN, as in TF.
    """
    with _graph.name_scope(name, "triangular_solve", [matrix, rhs]):
        return apply_op("MatrixTriangularSolve", [matrix, rhs],
                        {"lower": bool(lower), "adjoint": bool(adjoint)},
                        name="MatrixTriangularSolve").outputs[0]


@tf_export("linalg.solve", "matrix_solve")
def solve(matrix, rhs, adjoint: bool = False, name: Optional[str] = None) -> Tensor:
    """Solves matrix X = rhs for square matrices (TF1 `tf.linalg.solve`).

    Args:
      matrix: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      rhs: a Tensor [..., M, K] of the same dtype and batch dimensions.
      adjoint: solve with the adjoint of `matrix`.
      name: op name (default "MatrixSolve").

    Returns:
      A Tensor [..., M, K].

    Raises:
      InvalidArgumentError (at run time): "Input matrix is not invertible.".
    """
    return apply_op("MatrixSolve", [matrix, rhs], {"adjoint": bool(adjoint)},
                    name=name or "MatrixSolve").outputs[0]
