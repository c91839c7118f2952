"""Tridiagonal matrices: TridiagonalMatMul and TridiagonalSolve, TF1's builders with
their three diagonal formats, and eigh_tridiagonal (a composite over eigh, as TF's is a
composite of its own ops).

Diagonals come in TF's compact layout [..., 3, M]: row 0 the superdiagonal (its last
element unused), row 1 the main diagonal, row 2 the subdiagonal (its first element
unused). The solve kernel assembles the dense matrices and calls NumPy's batched LU
solver (partial pivoting; O(M^3), meant for the moderate sizes of TF1 programs); a
singular matrix gives NaN/inf as in TF. Gradients, for X = A^-1 B:
dB = A^-H G and dA = -dB X^H restricted to the three diagonals; for C = A B: dB = A^H G
and dA = G B^H restricted to the three diagonals.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, broadcast_shapes, merge_dim, \
    unknown_shape
from tensorweave.ops.linalg.linalg_ops import _invalid

_TYPES = (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128)


def _dense(superdiag, maindiag, subdiag) -> np.ndarray:
    """[..., M] diagonals -> [..., M, M] matrices."""
    m = maindiag.shape[-1]
    out = np.zeros(maindiag.shape + (m,), dtype=np.result_type(superdiag, maindiag, subdiag))
    idx = np.arange(m)
    out[..., idx, idx] = maindiag
    out[..., idx[:-1], idx[1:]] = superdiag[..., :-1]
    out[..., idx[1:], idx[:-1]] = subdiag[..., 1:]
    return out


# --- TridiagonalMatMul ----------------------------------------------------------------------
def _matmul_shape(op):
    rhs = op.inputs[3].shape
    diag_shapes = [t.shape for t in op.inputs[:3]]
    if rhs.ndims is None:
        return unknown_shape()
    batch = rhs.as_list()[:-2]
    for s in diag_shapes:
        if s.ndims is not None:
            merge_dim(s.as_list()[-1], rhs.as_list()[-2])
            batch = broadcast_shapes(TensorShape(batch), TensorShape(s.as_list()[:-2])) \
                .as_list()
    return TensorShape(batch + rhs.as_list()[-2:])


register_op("TridiagonalMatMul", inputs=["superdiag: T", "maindiag: T", "subdiag: T",
                                         "rhs: T"],
            outputs=["output: T"], attrs={"T": TypeAttr(_TYPES)}, shape=_matmul_shape)


@kernel("TridiagonalMatMul")
def _tridiagonal_matmul_kernel(ctx, superdiag, maindiag, subdiag, rhs):
    m = rhs.shape[-2]
    for d in (superdiag, maindiag, subdiag):
        if d.ndim < 2 or d.shape[-2] != 1 or d.shape[-1] != m:
            raise _invalid(ctx, "Expected diagonals of shape [..., 1, %d], got [%s]"
                           % (m, ",".join(map(str, d.shape))))
    sup, main, sub = (np.swapaxes(d, -1, -2) for d in (superdiag, maindiag, subdiag))
    out = main * rhs
    out[..., :-1, :] += sup[..., :-1, :] * rhs[..., 1:, :]
    out[..., 1:, :] += sub[..., 1:, :] * rhs[..., :-1, :]
    return out.astype(rhs.dtype, copy=False)


def _shift(t: Tensor, up: bool) -> Tensor:
    """t[..., i] <- t[..., i + 1] (up) or t[..., i - 1], zero filled, along the last axis."""
    from tensorweave.ops.array import array_fill_ops, array_join_ops
    zero = array_fill_ops.zeros_like(t[..., :1])
    if up:
        return array_join_ops.concat([t[..., 1:], zero], -1)
    return array_join_ops.concat([zero, t[..., :-1]], -1)


def _row_dots(a: Tensor, b: Tensor, offset: int) -> Tensor:
    """sum_k a[..., i, k] * conj(b[..., i + offset, k]) as [..., 1, M] (0 past the ends)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_unary, reduction_ops
    if offset:
        b = array_ops.transpose(_shift(array_ops.transpose(b, _last_two(b)), offset > 0),
                                _last_two(b))
    product = math_binary.multiply(a, math_unary._conj(b))
    return array_ops.expand_dims(reduction_ops.reduce_sum(product, -1), -2)


def _last_two(t: Tensor):
    rank = t.shape.ndims
    if rank is None:
        raise NotImplementedError("Tridiagonal gradients need inputs of known rank")
    return list(range(rank - 2)) + [rank - 1, rank - 2]


def _reduce_like(grad: Tensor, like: Tensor) -> Tensor:
    from tensorweave.ops.linalg.linalg_ops import _reduce_to_shape
    return _reduce_to_shape(grad, like)


@gradient("TridiagonalMatMul")
def _tridiagonal_matmul_grad(op, grad):
    from tensorweave.ops.math import math_unary
    superdiag, maindiag, subdiag, rhs = op.inputs
    conj = math_unary._conj
    # A^H in compact form: its superdiagonal is conj(sub) shifted up, its subdiagonal
    # conj(super) shifted down
    grad_rhs = tridiagonal_matmul_op(conj(_shift(subdiag, True)), conj(maindiag),
                                     conj(_shift(superdiag, False)), grad)
    return [_reduce_like(_row_dots(grad, rhs, 1), superdiag),
            _reduce_like(_row_dots(grad, rhs, 0), maindiag),
            _reduce_like(_row_dots(grad, rhs, -1), subdiag),
            _reduce_like(grad_rhs, rhs)]


def tridiagonal_matmul_op(superdiag, maindiag, subdiag, rhs,
                          name: Optional[str] = None) -> Tensor:
    """The raw TridiagonalMatMul op on [..., 1, M] diagonals."""
    return apply_op("TridiagonalMatMul", [superdiag, maindiag, subdiag, rhs],
                    name=name or "TridiagonalMatMul").outputs[0]


# --- TridiagonalSolve -----------------------------------------------------------------------
def _solve_shape(op):
    diags, rhs = op.inputs[0].shape, op.inputs[1].shape
    if diags.ndims is not None and diags.as_list()[-2] not in (None, 3):
        raise ValueError("Expected 3 diagonals got %d" % diags.as_list()[-2])
    if rhs.ndims is None:
        return unknown_shape()
    if diags.ndims is None:
        return rhs
    merge_dim(diags.as_list()[-1], rhs.as_list()[-2])
    batch = broadcast_shapes(TensorShape(diags.as_list()[:-2]),
                             TensorShape(rhs.as_list()[:-2])).as_list()
    return TensorShape(batch + rhs.as_list()[-2:])


register_op("TridiagonalSolve", inputs=["diagonals: T", "rhs: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_TYPES), "partial_pivoting": True,
                   "perturb_singular": False}, shape=_solve_shape)


@kernel("TridiagonalSolve", cheap=False)
def _tridiagonal_solve_kernel(ctx, diagonals, rhs):
    if diagonals.ndim < 2 or diagonals.shape[-2] != 3:
        raise _invalid(ctx, "Expected diagonals to have shape [..., 3, M], got [%s]"
                       % ",".join(map(str, diagonals.shape)))
    if rhs.ndim < 2 or rhs.shape[-2] != diagonals.shape[-1]:
        raise _invalid(ctx, "Expected rhs of shape [..., %d, K], got [%s]"
                       % (diagonals.shape[-1], ",".join(map(str, rhs.shape))))
    matrices = _dense(diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :])
    batch = np.broadcast_shapes(matrices.shape[:-2], rhs.shape[:-2])
    matrices = np.broadcast_to(matrices, batch + matrices.shape[-2:])
    b = np.broadcast_to(rhs, batch + rhs.shape[-2:])
    if b.size == 0 or matrices.shape[-1] == 0:
        return np.zeros(b.shape, dtype=rhs.dtype)
    try:
        out = np.linalg.solve(matrices, b)
    except np.linalg.LinAlgError:  # singular somewhere: NaN there, as TF
        flat_a = matrices.reshape((-1,) + matrices.shape[-2:])
        flat_b = b.reshape((-1,) + b.shape[-2:])
        out = np.empty(flat_b.shape, dtype=np.result_type(flat_a, flat_b))
        for i in range(flat_a.shape[0]):
            try:
                out[i] = np.linalg.solve(flat_a[i], flat_b[i])
            except np.linalg.LinAlgError:
                out[i] = np.nan
        out = out.reshape(b.shape)
    return out.astype(rhs.dtype, copy=False)


def _transposed_compact(diagonals: Tensor) -> Tensor:
    """The compact diagonals of A^H from those of A."""
    from tensorweave.ops.array import array_join_ops
    from tensorweave.ops.math import math_unary
    sup, main, sub = diagonals[..., 0:1, :], diagonals[..., 1:2, :], diagonals[..., 2:3, :]
    return math_unary._conj(array_join_ops.concat([_shift(sub, True), main,
                                                   _shift(sup, False)], -2))


@gradient("TridiagonalSolve")
def _tridiagonal_solve_grad(op, grad):
    from tensorweave.ops.array import array_join_ops
    from tensorweave.ops.math import math_unary
    diagonals, rhs = op.inputs
    x = op.outputs[0]
    grad_rhs = apply_op("TridiagonalSolve", [_transposed_compact(diagonals), grad],
                        {"partial_pivoting": op._get_attr("partial_pivoting"),
                         "perturb_singular": op._get_attr("perturb_singular")}).outputs[0]
    grad_diags = math_unary.negative(array_join_ops.concat(
        [_row_dots(grad_rhs, x, 1), _row_dots(grad_rhs, x, 0), _row_dots(grad_rhs, x, -1)],
        -2))
    return [_reduce_like(grad_diags, diagonals), _reduce_like(grad_rhs, rhs)]


# --- builders -------------------------------------------------------------------------------
def _compact(diagonals, diagonals_format: str, m_hint=None) -> Tensor:
    """The diagonals in compact [..., 3, M] form."""
    from tensorweave.ops.array import array_join_ops
    if diagonals_format == "compact":
        return convert_to_tensor(diagonals, name="diagonals")
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        sup, main, sub = (convert_to_tensor(d) for d in diagonals)
        return array_join_ops.stack([sup, main, sub], axis=-2)
    if diagonals_format == "matrix":
        from tensorweave.ops.linalg import matrix_ops
        matrix = convert_to_tensor(diagonals, name="diagonals")
        return matrix_ops.matrix_diag_part(matrix, k=(-1, 1), align="LEFT_RIGHT")
    raise ValueError("Unrecognized diagonals_format: %s" % diagonals_format)


@tf_export("linalg.tridiagonal_solve")
def tridiagonal_solve(diagonals, rhs, diagonals_format: str = "compact",
                      transpose_rhs: bool = False, conjugate_rhs: bool = False,
                      name: Optional[str] = None, partial_pivoting: bool = True,
                      perturb_singular: bool = False) -> Tensor:
    """Solves tridiagonal systems A X = rhs (TF1 `tf.linalg.tridiagonal_solve`).

    Args:
      diagonals: "compact": [..., 3, M] (superdiagonal, main diagonal, subdiagonal);
        "sequence": a tuple of those three [..., M] Tensors; "matrix": [..., M, M].
      rhs: [..., M, K] (or [..., K, M] with `transpose_rhs`; [..., M] is treated as one
        column).
      diagonals_format: "compact", "sequence" or "matrix".
      transpose_rhs: transpose the last two dimensions of `rhs` first.
      conjugate_rhs: conjugate `rhs` first.
      name: op name (default "TridiagonalSolve").
      partial_pivoting: pivot (the kernel always pivots; recorded on the op).
      perturb_singular: recorded on the op; singular systems give NaN/inf.

    Returns:
      A Tensor [..., M, K].

    Raises:
      ValueError: an unknown format or not three diagonals.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_unary
    diagonals = _compact(diagonals, diagonals_format)
    rhs = convert_to_tensor(rhs, dtype=diagonals.dtype, name="rhs")
    if diagonals.shape.ndims is not None and diagonals.shape.as_list()[-2] not in (None, 3):
        raise ValueError("Expected 3 diagonals got %d" % diagonals.shape.as_list()[-2])
    if transpose_rhs:
        from tensorweave.ops.linalg import matrix_ops
        rhs = matrix_ops.matrix_transpose(rhs)
    if conjugate_rhs:
        rhs = math_unary._conj(rhs)
    one_column = rhs.shape.ndims is not None and diagonals.shape.ndims is not None and \
        rhs.shape.ndims == diagonals.shape.ndims - 1
    if one_column:
        rhs = array_ops.expand_dims(rhs, -1)
    out = apply_op("TridiagonalSolve", [diagonals, rhs],
                   {"partial_pivoting": bool(partial_pivoting),
                    "perturb_singular": bool(perturb_singular)},
                   name=name or "TridiagonalSolve").outputs[0]
    return array_ops.squeeze(out, [-1]) if one_column else out


@tf_export("linalg.tridiagonal_matmul")
def tridiagonal_matmul(diagonals, rhs, diagonals_format: str = "compact",
                       name: Optional[str] = None) -> Tensor:
    """Multiplies tridiagonal matrices by `rhs` (TF1 `tf.linalg.tridiagonal_matmul`).

    Args:
      diagonals: in the formats of `tridiagonal_solve`.
      rhs: a Tensor [..., M, N].
      diagonals_format: "compact", "sequence" or "matrix".
      name: op name (default "TridiagonalMatMul").

    Returns:
      A Tensor [..., M, N].

    Raises:
      ValueError: an unknown format.
    """
    from tensorweave.ops.array import array_ops
    diagonals = _compact(diagonals, diagonals_format)
    rhs = convert_to_tensor(rhs, dtype=diagonals.dtype, name="rhs")
    sup, main, sub = (array_ops.expand_dims(diagonals[..., i, :], -2) for i in range(3))
    return tridiagonal_matmul_op(sup, main, sub, rhs, name=name)


# --- eigh_tridiagonal -----------------------------------------------------------------------
def _check_tridiagonal_vectors(alpha: Tensor, beta: Tensor) -> None:
    """Static checks: alpha [n] and beta [n - 1] (TF has no batch dimensions here)."""
    for t, what in ((alpha, "alpha"), (beta, "beta")):
        if t.shape.ndims is not None and t.shape.ndims != 1:
            raise ValueError("eigh_tridiagonal: '%s' must be a vector, got shape %s"
                             % (what, t.shape))
    if alpha.shape.ndims == 1 and beta.shape.ndims == 1:
        n, m = alpha.shape.as_list()[0], beta.shape.as_list()[0]
        if n is not None and m is not None and m != max(n - 1, 0):
            raise ValueError("eigh_tridiagonal: 'beta' must have %d elements (one fewer than "
                             "'alpha'), got %d" % (max(n - 1, 0), m))


@tf_export("linalg.eigh_tridiagonal")
def eigh_tridiagonal(alpha, beta, eigvals_only: bool = True, select: str = "a",
                     select_range=None, tol=None, name: Optional[str] = None):
    """Eigenvalues (and eigenvectors) of a Hermitian tridiagonal matrix (TF1
    `tf.linalg.eigh_tridiagonal`).

    The matrix has `alpha` on its diagonal, `beta` above it and conj(`beta`) below it.
    TF bisects Sturm sequences (eigenvalues) and runs inverse iteration (eigenvectors);
    here the dense matrix is formed and handed to `tf.linalg.eigh`, which gives the same
    eigenvalues to full precision (tighter than any `tol`), and is differentiable.

    Args:
      alpha: a float32/64 or complex64/128 Tensor [n], the diagonal (the imaginary part
        of a complex `alpha` is ignored, as the matrix is Hermitian).
      beta: a Tensor [n - 1] of the dtype of `alpha`: the superdiagonal.
      eigvals_only: return the eigenvalues only (default), else also the eigenvectors.
      select: "a" all eigenvalues; "v" those in the interval (select_range[0],
        select_range[1]] (widened by n * 2.1 * eps * |T|_2 at both ends, as TF's
        bisection widens it); "i" those with indices select_range[0] .. select_range[1]
        (inclusive) of the ascending order.
      select_range: a pair (Python numbers or a Tensor [2]) for "v" and "i".
      tol: TF's bisection tolerance; accepted for compatibility and not needed (the
        eigenvalues are computed to full precision).
      name: name scope (default "eigh_tridiagonal").

    Returns:
      The eigenvalues [k] in ascending order, of the real dtype of `alpha`; with
      `eigvals_only=False` the pair (eigenvalues, eigenvectors [n, k]) whose column i is
      the unit eigenvector of eigenvalue i, of the dtype of `alpha` (its sign, or phase,
      may differ from TF's, whose inverse iteration starts from random vectors).

    Raises:
      ValueError: an unknown `select`, no `select_range` where one is needed, `alpha` and
        `beta` of different or non-floating dtypes, or shapes that are not [n], [n - 1].
      InvalidArgumentError: select_range[0] > select_range[1] for "i" or >= for "v" (at
        build time when known, as TF's assertions); for "i", an index outside [0, n) (at
        run time; TF returns meaningless values there).
    """
    from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
    from tensorweave.ops.linalg import matrix_ops, spectral_ops
    from tensorweave.ops.math import complex_ops, math_ops, math_unary
    if select not in ("a", "v", "i"):
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    if select != "a" and select_range is None:
        raise ValueError("eigh_tridiagonal: select=%r needs a select_range" % select)
    with _graph.name_scope(name, "eigh_tridiagonal", [alpha, beta]):
        alpha = convert_to_tensor(alpha, name="alpha")
        # a Python list takes alpha's dtype (so [] fits any alpha); arrays and Tensors
        # keep theirs and must match, as in TF
        hint = None if isinstance(beta, (Tensor, np.ndarray)) else alpha.dtype
        beta = convert_to_tensor(beta, name="beta", preferred_dtype=hint)
        if alpha.dtype != beta.dtype:
            raise ValueError("'alpha' and 'beta' must have the same type.")
        if alpha.dtype not in _TYPES:
            raise ValueError("eigh_tridiagonal: 'alpha' and 'beta' must be float32, float64, "
                             "complex64 or complex128, got %s" % alpha.dtype.name)
        _check_tridiagonal_vectors(alpha, beta)
        if alpha.shape.ndims is None:  # checked at run time: the selections need rank 1
            from tensorweave.ops.array.array_shape_ops import ensure_shape
            alpha = ensure_shape(alpha, [None])
        main = complex_ops.real(alpha)
        if alpha.dtype.is_complex:
            main = math_ops.cast(main, alpha.dtype)
        # compact [3, n] rows: superdiagonal (last entry unused), diagonal, subdiagonal
        # (first entry unused); alpha[:1] pads, so that n = 0 gives empty rows
        pad = array_fill_ops.zeros_like(alpha[:1])
        rows = array_join_ops.stack([array_join_ops.concat([beta, pad], 0), main,
                                     array_join_ops.concat([pad, math_unary._conj(beta)], 0)])
        matrix = matrix_ops.matrix_diag(rows, k=(-1, 1), align="LEFT_RIGHT")
        if eigvals_only:
            values, vectors = spectral_ops.eigvalsh(matrix), None
        else:
            values, vectors = spectral_ops.eigh(matrix)
        values = complex_ops.real(values)
        if select == "i":
            keep = _index_selection(select_range)
        elif select == "v":
            keep = _interval_selection(values, select_range, array_ops.size(alpha))
        if select != "a":
            values = keep(values, 0)
            vectors = None if vectors is None else keep(vectors, 1)
        return values if eigvals_only else (values, vectors)


def _range_ends(select_range, dtype):
    """The two ends of select_range as scalar Tensors; a pair of Python values gives two
    constants, so that the assertions on them fail at build time, as TF's do."""
    if isinstance(select_range, Tensor):
        select_range = convert_to_tensor(select_range, dtype=dtype, name="select_range")
    return (convert_to_tensor(select_range[0], dtype=dtype, name="select_min"),
            convert_to_tensor(select_range[1], dtype=dtype, name="select_max"))


def _index_selection(select_range):
    """fn(t, axis): the entries select_range[0] .. select_range[1] of t along axis."""
    from tensorweave.ops.debug import check_ops
    from tensorweave.ops.indexing import indexing_gather
    from tensorweave.ops.math import math_ops
    first, last = _range_ends(select_range, None)
    check = check_ops.assert_less_equal(first, last,
                                        message="Got empty index range in select_range.")
    with _graph.control_dependencies([check]):
        # gather, not a slice: an index outside [0, n) is an error, not silently dropped
        indices = math_ops.range(first, last + 1)
    return lambda t, axis: indexing_gather.gather(t, indices, axis=axis)


def _interval_selection(values: Tensor, select_range, n: Tensor):
    """fn(t, axis): the entries of t along axis whose eigenvalue is in
    (select_range[0], select_range[1]], both ends moved out by n * 2.1 * eps * |T|: TF's
    bisection counts the eigenvalues from there, so that an eigenvalue on the lower end
    (an exact 0 for (0, 1], say) is kept."""
    from tensorweave.ops.debug import check_ops
    from tensorweave.ops.indexing import indexing_select
    from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops
    low, high = _range_ends(select_range, values.dtype)
    check = check_ops.assert_less(low, high, message="Got empty interval in select_range.")
    eps = np.finfo(values.dtype.as_numpy_dtype).eps
    slack = math_binary.multiply(math_ops.cast(n, values.dtype) * (2.1 * eps),
                                 reduction_ops.reduce_max(math_unary.abs(values)))
    with _graph.control_dependencies([check]):
        mask = math_binary.logical_and(math_binary.greater(values, low - slack),
                                       math_binary.less_equal(values, high + slack))
    return lambda t, axis: indexing_select.boolean_mask(t, mask, axis=axis)
