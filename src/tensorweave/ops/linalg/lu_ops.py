"""LU decomposition with partial pivoting (op Lu) and the solves built on it: lu_solve,
lu_matrix_inverse, lu_reconstruct.

The kernel eliminates one column per step, each step vectorised over the batch and the
trailing submatrix (NumPy has no batched LU). Permutations are applied in graphs as
one-hot permutation matrices: P = one_hot(perm), P A = gather(A, perm) row-wise.
Gradient (A_p = P A = L U): dA_p = L^-H [tril_strict(L^H dL) + triu(dU U^H)] U^-H and
dA = P^T dA_p.
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
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.linalg import matrix_ops
from tensorweave.ops.linalg.linalg_ops import _LINALG_TYPES, _check_square, _matrix_dims, \
    _mm, _work, triangular_solve

LuOutput = collections.namedtuple("Lu", ["lu", "p"])


def _lu_shape(op):
    m = _matrix_dims(op.inputs[0].shape, square=True)
    if m is None:
        return [unknown_shape(), unknown_shape()]
    batch, n, _ = m
    return [TensorShape(batch + [n, n]), TensorShape(batch + [n])]


register_op("Lu", inputs=["input: T"], outputs=["lu: T", "p: output_idx_type"],
            attrs={"T": TypeAttr(_LINALG_TYPES),
                   "output_idx_type": TypeAttr((_dt.int32, _dt.int64), default=_dt.int32)},
            shape=_lu_shape)


@kernel("Lu", cheap=False)
def _lu_kernel(ctx, x):
    _check_square(ctx, x)
    n = x.shape[-1]
    batch_shape = x.shape[:-2]
    lu = np.array(_work(x), copy=True).reshape((-1, n, n))
    batch = np.arange(lu.shape[0])
    perm = np.tile(np.arange(n), (lu.shape[0], 1))
    for k in range(n):
        pivot = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        if np.any(lu[batch, pivot, k] == 0):
            raise errors.InvalidArgumentError(None, ctx.op, "Input is not invertible.")
        row_k, row_p = lu[batch, k].copy(), lu[batch, pivot].copy()
        lu[batch, k], lu[batch, pivot] = row_p, row_k
        perm_k = perm[batch, k].copy()
        perm[batch, k] = perm[batch, pivot]
        perm[batch, pivot] = perm_k
        lu[:, k + 1:, k] /= lu[:, k, k][:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k, None] * lu[:, k, None, k + 1:]
    out_type = ctx.attrs["output_idx_type"].as_numpy_dtype
    return (lu.reshape(x.shape).astype(x.dtype, copy=False),
            perm.reshape(batch_shape + (n,)).astype(out_type))


def _factors(lower_upper: Tensor):
    """(L with its unit diagonal, U) from the packed factors."""
    from tensorweave.ops.array import array_fill_ops
    diag = matrix_ops.matrix_diag_part(lower_upper)
    lower = matrix_ops.matrix_set_diag(matrix_ops.band_part(lower_upper, -1, 0),
                                       array_fill_ops.ones_like(diag))
    return lower, matrix_ops.band_part(lower_upper, 0, -1)


def _permutation_matrix(perm: Tensor, like: Tensor) -> Tensor:
    """P with P[..., i, perm[i]] = 1, of the dtype of `like`: P X = X[perm] row-wise."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing import indexing_gather
    n = like.shape.as_list()[-1] if like.shape.ndims else None
    if n is None:
        n = array_ops.shape(like)[-1]
    return indexing_gather.one_hot(perm, n, dtype=like.dtype)


@gradient("Lu")
def _lu_grad(op, grad_lu, _):
    from tensorweave.ops.math import math_binary
    lower_upper, perm = op.outputs
    lower, upper = _factors(lower_upper)
    grad_l = matrix_ops.band_part(grad_lu, -1, 0)
    grad_l = math_binary.subtract(grad_l, matrix_ops.band_part(grad_l, 0, 0))  # strict
    grad_u = matrix_ops.band_part(grad_lu, 0, -1)
    l_h_grad = _mm(lower, grad_l, adjoint_a=True)
    strict = math_binary.subtract(matrix_ops.band_part(l_h_grad, -1, 0),
                                  matrix_ops.band_part(l_h_grad, 0, 0))
    middle = math_binary.add(strict, matrix_ops.band_part(_mm(grad_u, upper, adjoint_b=True),
                                                          0, -1))
    # L^-H middle U^-H
    left = triangular_solve(lower, middle, lower=True, adjoint=True)
    grad_perm_a = matrix_ops.adjoint(triangular_solve(upper, matrix_ops.adjoint(left),
                                                      lower=False, adjoint=False))
    p = _permutation_matrix(perm, lower_upper)
    return [_mm(p, grad_perm_a, adjoint_a=True)]


@tf_export("linalg.lu")
def lu(input, output_idx_type=_dt.int32, name: Optional[str] = None):  # noqa: A002
    """Computes the LU decomposition with partial pivoting of each square matrix (TF1
    `tf.linalg.lu`): input[..., p, :] = L U.

    Args:
      input: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      output_idx_type: int32 or int64, the dtype of `p`.
      name: op name (default "Lu").

    Returns:
      A namedtuple (lu, p): `lu` [..., M, M] packs L (below the diagonal, whose unit
      diagonal is implied) and U (on and above it); `p` [..., M] is the row permutation.

    Raises:
      InvalidArgumentError (at run time): "Input is not invertible." for a zero pivot.
    """
    op = apply_op("Lu", [input], {"output_idx_type": _dt.as_dtype(output_idx_type)},
                  name=name or "Lu")
    return LuOutput(*op.outputs)


@tf_export("linalg.lu_solve")
def lu_solve(lower_upper, perm, rhs, validate_args: bool = False,
             name: Optional[str] = None) -> Tensor:
    """Solves A X = rhs from the LU decomposition of A (TF1 `tf.linalg.lu_solve`).

    Args:
      lower_upper: the `lu` output of `tf.linalg.lu(A)`.
      perm: its `p` output.
      rhs: a Tensor [..., M, K].
      validate_args: unused.
      name: name scope (default "lu_solve").

    Returns:
      A Tensor [..., M, K].
    """
    del validate_args
    with _graph.name_scope(name, "lu_solve", [lower_upper, perm, rhs]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        rhs = convert_to_tensor(rhs, dtype=lower_upper.dtype, name="rhs")
        permuted = _mm(_permutation_matrix(perm, lower_upper), rhs)
        lower, _ = _factors(lower_upper)
        return triangular_solve(lower_upper, triangular_solve(lower, permuted),
                                lower=False)


@tf_export("linalg.lu_matrix_inverse")
def lu_matrix_inverse(lower_upper, perm, validate_args: bool = False,
                      name: Optional[str] = None) -> Tensor:
    """The inverse of A from its LU decomposition (TF1 `tf.linalg.lu_matrix_inverse`).

    Args:
      lower_upper: the `lu` output of `tf.linalg.lu(A)`.
      perm: its `p` output.
      validate_args: unused.
      name: name scope (default "lu_matrix_inverse").

    Returns:
      A Tensor [..., M, M].
    """
    from tensorweave.ops.array import array_fill_ops
    with _graph.name_scope(name, "lu_matrix_inverse", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        eye = matrix_ops.matrix_set_diag(array_fill_ops.zeros_like(lower_upper),
                                         array_fill_ops.ones_like(
                                             matrix_ops.matrix_diag_part(lower_upper)))
        return lu_solve(lower_upper, perm, eye, validate_args=validate_args)


@tf_export("linalg.lu_reconstruct")
def lu_reconstruct(lower_upper, perm, validate_args: bool = False,
                   name: Optional[str] = None) -> Tensor:
    """Rebuilds A = P^T L U from its LU decomposition (TF1 `tf.linalg.lu_reconstruct`).

    Args:
      lower_upper: the `lu` output of `tf.linalg.lu(A)`.
      perm: its `p` output.
      validate_args: unused.
      name: name scope (default "lu_reconstruct").

    Returns:
      A Tensor [..., M, M].
    """
    del validate_args
    with _graph.name_scope(name, "lu_reconstruct", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        lower, upper = _factors(lower_upper)
        return _mm(_permutation_matrix(perm, lower_upper), _mm(lower, upper),
                   adjoint_a=True)
