"""QR, SVD and self-adjoint eigendecompositions, least squares, and norms.

Kernels call NumPy's batched LAPACK routines (float16 through float32). Gradients:
  Qr         M >= N: dA = [dQ + Q copyltu(M)] R^-H with M = R dR^H - dQ^H Q (written as
             TF's two triangular-solve terms); M < N splits A = [X | Y].
  Svd        real inputs, reduced factors (or square full ones): Townsend's formula with
             F_ij = 1 / (s_j^2 - s_i^2) and the projections onto the complements of U, V.
  SelfAdjointEigV2  V (diag(dE) + F o V^H dV) V^H, F_ij = 1 / (e_j - e_i), folded onto
             the lower triangle the kernel reads.
  MatrixSolveLs (fast)  from the normal equations (derived in the gradient's comment).
"""
from __future__ import annotations

import collections
import numbers
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, unknown_shape
from tensorweave.ops.linalg import matrix_ops
from tensorweave.ops.math import clip_ops
from tensorweave.ops.linalg.linalg_ops import _LINALG_TYPES, _check_square, _invalid, \
    _matrix_dims, _mm, _work, cholesky, cholesky_solve


def _mb():
    from tensorweave.ops.math import math_binary
    return math_binary


def _mu():
    from tensorweave.ops.math import math_unary
    return math_unary


def _expand(t: Tensor, axis: int) -> Tensor:
    from tensorweave.ops.array import array_ops
    return array_ops.expand_dims(t, axis)


QrOutput = collections.namedtuple("Qr", ["q", "r"])


# --- Qr -------------------------------------------------------------------------------------
def _qr_shape(op):
    m = _matrix_dims(op.inputs[0].shape)
    if m is None:
        return [unknown_shape(), unknown_shape()]
    batch, rows, cols = m
    if op._get_attr("full_matrices"):
        return [TensorShape(batch + [rows, rows]), TensorShape(batch + [rows, cols])]
    p = None if rows is None or cols is None else min(rows, cols)
    return [TensorShape(batch + [rows, p]), TensorShape(batch + [p, cols])]


register_op("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
            attrs={"T": TypeAttr(_LINALG_TYPES), "full_matrices": False}, shape=_qr_shape)


@kernel("Qr", cheap=False)
def _qr_kernel(ctx, x):
    if x.ndim < 2:
        raise _invalid(ctx, "Input tensor 0 must have rank >= 2, got %d" % x.ndim)
    mode = "complete" if ctx.attrs["full_matrices"] else "reduced"
    q, r = np.linalg.qr(_work(x), mode=mode)
    return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)


def _qr_grad_deep(q, r, grad_q, grad_r):
    """The QR gradient of a square or tall matrix (reduced factors)."""
    mb = _mb()
    qdq = _mm(q, grad_q, adjoint_a=True)
    qdq_ = mb.subtract(qdq, matrix_ops.adjoint(qdq))
    rdr = _mm(r, grad_r, adjoint_b=True)
    rdr_ = mb.subtract(rdr, matrix_ops.adjoint(rdr))
    tril = matrix_ops.band_part(mb.add(qdq_, rdr_), -1, 0)

    def times_r_inv_h(x):  # x R^-H
        from tensorweave.ops.linalg.linalg_ops import triangular_solve
        return matrix_ops.adjoint(triangular_solve(r, matrix_ops.adjoint(x), lower=False))
    grad_a = _mm(q, mb.add(grad_r, times_r_inv_h(tril)))
    grad_b = times_r_inv_h(mb.subtract(grad_q, _mm(q, qdq)))
    return mb.add(grad_a, grad_b)


@gradient("Qr")
def _qr_grad(op, grad_q, grad_r):
    a = op.inputs[0]
    q, r = op.outputs
    if a.dtype.is_complex:
        raise NotImplementedError("Qr gradient is not implemented for complex inputs")
    rows, cols = a.shape.as_list()[-2:] if a.shape.ndims else (None, None)
    if rows is None or cols is None:
        raise NotImplementedError("Qr gradient needs the matrix dimensions statically known")
    if op._get_attr("full_matrices") and rows > cols:
        raise NotImplementedError("QrGrad not implemented when nrows > ncols and "
                                  "full_matrices is true. Received r.shape=%s with nrows=%s"
                                  " and ncols=%s." % (r.shape, rows, cols))
    if rows >= cols:
        return [_qr_grad_deep(q, r, grad_q, grad_r)]
    # wide: A = [X | Y] with X square, R = [U | V]; X = Q U, Y = Q V
    from tensorweave.ops.array import array_join_ops
    y = a[..., :, rows:]
    u = r[..., :, :rows]
    dv = grad_r[..., :, rows:]
    dq = _mb().add(grad_q, _mm(y, dv, adjoint_b=True))
    dx = _qr_grad_deep(q, u, dq, grad_r[..., :, :rows])
    dy = _mm(q, dv)
    return [array_join_ops.concat([dx, dy], -1)]


@tf_export("linalg.qr", "qr")
def qr(input, full_matrices: bool = False, name: Optional[str] = None):  # noqa: A002
    """Computes the QR decomposition of each innermost matrix (TF1 `tf.linalg.qr`).

    Args:
      input: a Tensor [..., M, N] of float16/32/64 or complex64/128.
      full_matrices: compute the full Q [..., M, M] and R [..., M, N] instead of the
        reduced Q [..., M, P] and R [..., P, N], P = min(M, N).
      name: op name (default "Qr").

    Returns:
      A namedtuple (q, r) of Tensors.
    """
    op = apply_op("Qr", [input], {"full_matrices": bool(full_matrices)}, name=name or "Qr")
    return QrOutput(*op.outputs)


# --- Svd ------------------------------------------------------------------------------------
def _svd_shape(op):
    m = _matrix_dims(op.inputs[0].shape)
    if m is None:
        return [unknown_shape()] * 3
    batch, rows, cols = m
    p = None if rows is None or cols is None else min(rows, cols)
    s = TensorShape(batch + [p])
    if not op._get_attr("compute_uv"):
        return [s, TensorShape([0]), TensorShape([0])]
    if op._get_attr("full_matrices"):
        return [s, TensorShape(batch + [rows, rows]), TensorShape(batch + [cols, cols])]
    return [s, TensorShape(batch + [rows, p]), TensorShape(batch + [cols, p])]


register_op("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
            attrs={"T": TypeAttr(_LINALG_TYPES), "compute_uv": True,
                   "full_matrices": False}, shape=_svd_shape)


@kernel("Svd", cheap=False)
def _svd_kernel(ctx, x):
    if x.ndim < 2:
        raise _invalid(ctx, "Input tensor 0 must have rank >= 2, got %d" % x.ndim)
    a = _work(x)
    # a matrix holding NaN or inf gets NaN results, as TF's (LAPACK would not converge)
    bad = ~np.isfinite(a).all(axis=(-2, -1))
    if bad.any():
        a = np.where(bad[..., None, None], 0, a)
    if not ctx.attrs["compute_uv"]:
        empty = np.zeros([0], x.dtype)
        s = np.linalg.svd(a, compute_uv=False)
        return _nan_where(bad, s).astype(x.dtype), empty, empty
    u, s, vh = np.linalg.svd(a, full_matrices=ctx.attrs["full_matrices"])
    v = np.conj(np.swapaxes(vh, -1, -2))
    return tuple(_nan_where(bad, r).astype(x.dtype, copy=False) for r in (s, u, v))


def _nan_where(bad: np.ndarray, out: np.ndarray) -> np.ndarray:
    """`out` with the results of the matrices flagged `bad` set to NaN."""
    if not bad.any():
        return out
    return np.where(bad.reshape(bad.shape + (1,) * (out.ndim - bad.ndim)), np.nan, out)


@gradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    mb, mu = _mb(), _mu()
    a = op.inputs[0]
    s, u, v = op.outputs
    if not op._get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True, full_matrices=False)
        return [_mm(mb.multiply(u, _expand(grad_s, -2)), v, adjoint_b=True)]
    rows, cols = a.shape.as_list()[-2:] if a.shape.ndims else (None, None)
    u2 = grad_u2 = v2 = grad_v2 = None
    if op._get_attr("full_matrices") and rows != cols:
        if rows is None or cols is None or abs(rows - cols) > 1:
            raise NotImplementedError("svd gradient is not implemented for abs(m - n) > 1 "
                                      "when full_matrices is True (or the matrix dims are "
                                      "unknown); got %s" % a.shape)
        # the one extra column of the longer side is fixed, up to sign, by the others
        if rows > cols:
            u, u2, grad_u, grad_u2 = u[..., :cols], u[..., cols:], grad_u[..., :cols], \
                grad_u[..., cols:]
        else:
            v, v2, grad_v, grad_v2 = v[..., :rows], v[..., rows:], grad_v[..., :rows], \
                grad_v[..., rows:]
    from tensorweave.ops.array import array_fill_ops
    s2 = mu.square(s)
    diff = mb.subtract(_expand(s2, -2), _expand(s2, -1))  # [i, j] = s_j^2 - s_i^2
    zeros = array_fill_ops.zeros_like(s)
    f = matrix_ops.matrix_set_diag(
        mu.reciprocal(matrix_ops.matrix_set_diag(diff, array_fill_ops.ones_like(s))), zeros)
    s_inv = mu.reciprocal(s)
    ut_gu = _mm(u, grad_u, adjoint_a=True)
    vt_gv = _mm(v, grad_v, adjoint_a=True)
    j = mb.multiply(f, mb.subtract(ut_gu, matrix_ops.adjoint(ut_gu)))
    k = mb.multiply(f, mb.subtract(vt_gv, matrix_ops.adjoint(vt_gv)))
    inner = mb.add(matrix_ops.matrix_diag(grad_s),
                   mb.add(mb.multiply(j, _expand(s, -2)), mb.multiply(_expand(s, -1), k)))
    grad_a = _mm(_mm(u, inner), v, adjoint_b=True)
    # the parts of dU, dV outside the spans of U, V (zero for square matrices)
    u_perp = mb.subtract(grad_u, _mm(u, ut_gu))
    v_perp = mb.subtract(grad_v, _mm(v, vt_gv))
    grad_a = mb.add(grad_a, _mm(mb.multiply(u_perp, _expand(s_inv, -2)), v, adjoint_b=True))
    grad_a = mb.add(grad_a, _mm(mb.multiply(u, _expand(s_inv, -2)), v_perp, adjoint_b=True))
    if a.dtype.is_complex:  # the phase freedom of each (u_i, v_i) pair: Im diag(v^H dv)
        l_diag = matrix_ops.matrix_diag(matrix_ops.matrix_diag_part(vt_gv))
        term = _mm(_mm(u, mb.multiply(_expand(s_inv, -1),
                                      mb.subtract(matrix_ops.adjoint(l_diag), l_diag))),
                   v, adjoint_b=True)
        grad_a = mb.add(grad_a, mb.multiply(term, 0.5))
    if u2 is not None:  # d(u2) through u2 u2^T = I - u u^T
        grad_a = mb.subtract(grad_a, _mm(_mm(u2, _mm(grad_u2, u, adjoint_a=True)),
                                         mb.multiply(v, _expand(s_inv, -2)), adjoint_b=True))
    if v2 is not None:
        grad_a = mb.subtract(grad_a, _mm(mb.multiply(u, _expand(s_inv, -2)),
                                         _mm(_mm(v, grad_v2, adjoint_a=True), v2,
                                             adjoint_b=True)))
    return [grad_a]


@tf_export("linalg.svd", "svd")
def svd(tensor, full_matrices: bool = False, compute_uv: bool = True,
        name: Optional[str] = None):
    """Computes the singular value decomposition tensor = u diag(s) v^H of each innermost
    matrix (TF1 `tf.linalg.svd`).

    Args:
      tensor: a Tensor [..., M, N] of float16/32/64 or complex64/128.
      full_matrices: u [..., M, M] and v [..., N, N] instead of [..., M, P], [..., N, P]
        (P = min(M, N)).
      compute_uv: also compute u and v.
      name: op name (default "Svd").

    Returns:
      s [..., P] (descending; real, also for complex input) when `compute_uv` is False,
      else the tuple (s, u, v).
    """
    op = apply_op("Svd", [tensor], {"full_matrices": bool(full_matrices),
                                    "compute_uv": bool(compute_uv)}, name=name or "Svd")
    s, u, v = op.outputs
    if s.dtype.is_complex:
        from tensorweave.ops.math import complex_ops
        s = complex_ops.real(s)  # singular values are real, as TF returns them
    return (s, u, v) if compute_uv else s


# --- SelfAdjointEigV2 -----------------------------------------------------------------------
def _eig_shape(op):
    m = _matrix_dims(op.inputs[0].shape, square=True)
    if m is None:
        return [unknown_shape(), unknown_shape()]
    batch, n, _ = m
    e = TensorShape(batch + [n])
    if not op._get_attr("compute_v"):
        return [e, TensorShape([0])]
    return [e, TensorShape(batch + [n, n])]


register_op("SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
            attrs={"T": TypeAttr(_LINALG_TYPES), "compute_v": True}, shape=_eig_shape)


@kernel("SelfAdjointEigV2", cheap=False)
def _eig_kernel(ctx, x):
    _check_square(ctx, x)
    a = _work(x)
    if not np.isfinite(np.tril(a)).all():  # the triangle read; LAPACK gives garbage for it
        raise _invalid(ctx, "Self-adjoint eigen decomposition was not successful. The input "
                       "might not be valid.")
    if not ctx.attrs["compute_v"]:
        return np.linalg.eigvalsh(a, UPLO="L").astype(x.dtype), np.zeros([0], x.dtype)
    e, v = np.linalg.eigh(a, UPLO="L")  # reads the lower triangle, as TF
    return e.astype(x.dtype), v.astype(x.dtype, copy=False)


@gradient("SelfAdjointEigV2")
def _eig_grad(op, grad_e, grad_v):
    from tensorweave.ops.array import array_fill_ops
    mb = _mb()
    e, v = op.outputs
    if not op._get_attr("compute_v"):
        _, v = eigh(op.inputs[0])
        inner = matrix_ops.matrix_diag(grad_e)
    else:
        diff = mb.subtract(_expand(e, -2), _expand(e, -1))  # [i, j] = e_j - e_i
        f = matrix_ops.matrix_set_diag(
            _mu().reciprocal(matrix_ops.matrix_set_diag(diff, array_fill_ops.ones_like(e))),
            array_fill_ops.zeros_like(e))
        inner = mb.add(matrix_ops.matrix_diag(grad_e),
                       mb.multiply(f, _mm(v, grad_v, adjoint_a=True)))
    grad_a = _mm(v, _mm(inner, v, adjoint_b=True))
    # the kernel reads only the lower triangle: fold the symmetric gradient onto it
    grad_a = matrix_ops.band_part(mb.add(grad_a, matrix_ops.adjoint(grad_a)), -1, 0)
    half = convert_to_tensor(0.5, dtype=grad_a.dtype)
    return [matrix_ops.matrix_set_diag(
        grad_a, mb.multiply(half, matrix_ops.matrix_diag_part(grad_a)))]


@tf_export("linalg.eigh", "self_adjoint_eig")
def eigh(tensor, name: Optional[str] = None):
    """Computes the eigenvalues (ascending) and eigenvectors of each self-adjoint matrix,
    reading its lower triangle (TF1 `tf.linalg.eigh`).

    Args:
      tensor: a Tensor [..., N, N] of float16/32/64 or complex64/128.
      name: op name (default "SelfAdjointEigV2").

    Returns:
      The tuple (e [..., N], v [..., N, N]), v[..., :, i] the eigenvector of e[..., i].
    """
    op = apply_op("SelfAdjointEigV2", [tensor], {"compute_v": True},
                  name=name or "SelfAdjointEigV2")
    return op.outputs[0], op.outputs[1]


@tf_export("linalg.eigvalsh", "self_adjoint_eigvals")
def eigvalsh(tensor, name: Optional[str] = None) -> Tensor:
    """The eigenvalues (ascending) of each self-adjoint matrix (TF1
    `tf.linalg.eigvalsh`); see `eigh`.

    Returns:
      A Tensor [..., N].
    """
    return apply_op("SelfAdjointEigV2", [tensor], {"compute_v": False},
                    name=name or "SelfAdjointEigV2").outputs[0]


# --- MatrixSolveLs --------------------------------------------------------------------------
def _solve_ls_shape(op):
    m = _matrix_dims(op.inputs[0].shape)
    r = _matrix_dims(op.inputs[1].shape)
    if op.inputs[2].shape.ndims not in (None, 0):
        raise ValueError("Shape must be rank 0 but is rank %d" % op.inputs[2].shape.ndims)
    if m is None or r is None:
        return unknown_shape()
    if len(m[0]) != len(r[0]):
        raise ValueError("Shapes must be equal rank, but are %d and %d"
                         % (len(m[0]) + 2, len(r[0]) + 2))
    merge_dim(m[1], r[1])
    batch = [merge_dim(x, y) for x, y in zip(m[0], r[0])]
    return TensorShape(batch + [m[2], r[2]])


register_op("MatrixSolveLs", inputs=["matrix: T", "rhs: T", "l2_regularizer: double"],
            outputs=["output: T"], attrs={"T": TypeAttr(_LINALG_TYPES), "fast": True},
            shape=_solve_ls_shape)


@kernel("MatrixSolveLs", cheap=False)
def _solve_ls_kernel(ctx, a, b, l2):
    if a.ndim < 2 or b.ndim < 2 or a.shape[:-2] != b.shape[:-2] or \
            a.shape[-2] != b.shape[-2]:
        raise _invalid(ctx, "Input matrix and right-hand side must have the same number of "
                       "rows and batch dimensions: [%s] vs [%s]"
                       % (",".join(map(str, a.shape)), ",".join(map(str, b.shape))))
    wa, wb = _work(a), _work(b)
    rows, cols = a.shape[-2:]
    if not ctx.attrs["fast"]:
        return (np.linalg.pinv(wa) @ wb).astype(a.dtype, copy=False)  # minimum norm
    ah = np.conj(np.swapaxes(wa, -1, -2))
    try:
        if rows >= cols:
            gram = ah @ wa + float(l2) * np.eye(cols, dtype=wa.dtype)
            chol = np.linalg.cholesky(gram)
            out = _chol_solve(chol, ah @ wb)
        else:
            gram = wa @ ah + float(l2) * np.eye(rows, dtype=wa.dtype)
            chol = np.linalg.cholesky(gram)
            out = ah @ _chol_solve(chol, wb)
    except np.linalg.LinAlgError:
        raise _invalid(ctx, "Input matrix was rank deficient or ill-conditioned. Try "
                       "setting fast=False or provide a larger l2_regularizer > 0.") from None
    return out.astype(a.dtype, copy=False)


def _chol_solve(chol: np.ndarray, b: np.ndarray) -> np.ndarray:
    y = np.linalg.solve(chol, b)
    return np.linalg.solve(np.conj(np.swapaxes(chol, -1, -2)), y)


@gradient("MatrixSolveLs")
def _solve_ls_grad(op, grad):
    # Overdetermined (M >= N): x = K^-1 A^H b, K = A^H A + l2 I, z = K^-1 g:
    #   dA = (b - A x) z^H - A z x^H, db = A z.
    # Underdetermined: x = A^H y, y = K^-1 b, K = A A^H + l2 I, z = K^-1 A g:
    #   dA = y g^H - z x^H - y z^H A, db = z.
    if not op._get_attr("fast"):
        raise ValueError("Gradient not defined for fast=False")
    from tensorweave.ops.linalg.linalg_ops import solve
    from tensorweave.ops.math import math_ops
    mb = _mb()
    a, b, l2 = op.inputs
    x = op.outputs[0]
    rows, cols = a.shape.as_list()[-2:] if a.shape.ndims else (None, None)
    if rows is None or cols is None:
        raise NotImplementedError("MatrixSolveLs gradient needs the matrix dimensions "
                                  "statically known")
    reg = math_ops.cast(l2, a.dtype)
    if rows >= cols:
        gram = _regularized(_mm(a, a, adjoint_a=True), reg, cols, a.dtype)
        z = solve(gram, grad)
        az = _mm(a, z)
        grad_a = mb.subtract(_mm(mb.subtract(b, _mm(a, x)), z, adjoint_b=True),
                             _mm(az, x, adjoint_b=True))
        return [grad_a, az, None]
    gram = _regularized(_mm(a, a, adjoint_b=True), reg, rows, a.dtype)
    y = solve(gram, b)
    z = solve(gram, _mm(a, grad))
    grad_a = mb.subtract(mb.subtract(_mm(y, grad, adjoint_b=True), _mm(z, x, adjoint_b=True)),
                         _mm(_mm(y, z, adjoint_b=True), a))
    return [grad_a, z, None]


def _regularized(gram: Tensor, reg: Tensor, n: int, dtype) -> Tensor:
    eye = matrix_ops.eye(n, dtype=dtype)
    return _mb().add(gram, _mb().multiply(reg, eye))


@tf_export("linalg.lstsq", "matrix_solve_ls")
def lstsq(matrix, rhs, l2_regularizer=0.0, fast: bool = True,
          name: Optional[str] = None) -> Tensor:
    """Solves the (regularised) linear least-squares problems min ||matrix X - rhs||^2 +
    l2_regularizer ||X||^2 (TF1 `tf.linalg.lstsq`).

    fast=True uses the normal equations through a Cholesky factorisation (composed of
    Cholesky and triangular solves when the matrix dimensions are static, as TF);
    fast=False the minimum-norm solution from the pseudo-inverse (`l2_regularizer` is
    then ignored).

    Args:
      matrix: a Tensor [..., M, N] of float16/32/64 or complex64/128.
      rhs: a Tensor [..., M, K] of the same dtype and batch dimensions.
      l2_regularizer: a scalar float64.
      fast: the algorithm (see above).
      name: name scope (default "matrix_solve_ls").

    Returns:
      A Tensor [..., N, K].

    Raises:
      InvalidArgumentError (at run time): a rank-deficient matrix with fast=True and
        l2_regularizer 0 (the Cholesky factorisation fails).
    """
    from tensorweave.ops.math import math_ops
    with _graph.name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]):
        matrix = convert_to_tensor(matrix, name="matrix")
        rhs = convert_to_tensor(rhs, dtype=matrix.dtype, name="rhs")
        l2 = convert_to_tensor(l2_regularizer, dtype=_dt.float64, name="l2_regularizer")
        dims = matrix.shape.as_list()[-2:] if matrix.shape.ndims else [None, None]
        if not fast or None in dims:
            return apply_op("MatrixSolveLs", [matrix, rhs, l2], {"fast": bool(fast)},
                            name="MatrixSolveLs").outputs[0]
        rows, cols = dims
        reg = math_ops.cast(l2, matrix.dtype)
        if rows >= cols:
            gram = _regularized(_mm(matrix, matrix, adjoint_a=True), reg, cols,
                                matrix.dtype)
            return cholesky_solve(cholesky(gram), _mm(matrix, rhs, adjoint_a=True))
        gram = _regularized(_mm(matrix, matrix, adjoint_b=True), reg, rows, matrix.dtype)
        return _mm(matrix, cholesky_solve(cholesky(gram), rhs), adjoint_a=True)


# --- norm -----------------------------------------------------------------------------------
def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


@tf_export("norm", "linalg.norm")
def norm(tensor, ord="euclidean", axis=None, keepdims=None,  # noqa: A002 - TF's name
         name: Optional[str] = None, keep_dims=None) -> Tensor:
    """Computes a vector or matrix norm (TF1 `tf.norm`).

    Args:
      tensor: a float or complex Tensor.
      ord: vector norms: "euclidean" (= 2), 1, np.inf or any real p > 0; matrix norms
        (axis a pair): "euclidean"/"fro" (Frobenius), 1, 2 (largest singular value),
        np.inf.
      axis: None (all elements as one vector), an int (vector norms) or a pair of ints
        (matrix norms).
      keepdims: keep the reduced dimensions with size 1.
      name: name scope (default "norm").
      keep_dims: deprecated alias of `keepdims`.

    Returns:
      A Tensor: of the dtype of `tensor` for the Euclidean/Frobenius norms (complex for
      complex input, as TF), else real.

    Raises:
      ValueError: an unsupported `ord` or `axis`.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import reduction_ops
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    is_matrix_norm = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix_norm:
        axis = tuple(axis)
        if not all(isinstance(i, numbers.Integral) for i in axis) or axis[0] == axis[1]:
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             "integers, got %s" % (axis,))
        supported = ["euclidean", "fro", 1, 2, np.inf]
        if ord not in supported:
            raise ValueError("'ord' must be a supported matrix norm in %s, got %s"
                             % (supported, ord))
    else:
        if not (axis is None or (isinstance(axis, numbers.Integral) and
                                 not isinstance(axis, bool))):
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             "integers, got %s" % (axis,))
        if ord not in ("euclidean", 1, 2, np.inf) and not (_is_number(ord) and ord > 0):
            raise ValueError("'ord' must be a supported vector norm, got %s" % (ord,))
        if axis is not None:
            axis = (int(axis),)
    mb, mu = _mb(), _mu()
    with _graph.name_scope(name, "norm", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        magnitude = mu.abs(tensor)  # real, also for complex tensors
        if ord in ("fro", "euclidean", 2, 2.0) and not (is_matrix_norm and ord == 2):
            # sqrt(sum(x conj(x))): of the dtype of `tensor`, complex included (as TF)
            result = mu.sqrt(reduction_ops.reduce_sum(
                mb.multiply(tensor, mu.conj(tensor)), axis, keepdims=True))
        elif is_matrix_norm and ord == 2:
            result = _spectral_norm(tensor, axis)
        elif ord == 1:
            result = reduction_ops.reduce_sum(magnitude, None if axis is None else axis[0],
                                              keepdims=True)
            if is_matrix_norm:
                result = reduction_ops.reduce_max(result, axis[-1], keepdims=True)
        elif ord == np.inf:
            result = magnitude
            if is_matrix_norm:
                result = reduction_ops.reduce_sum(result, axis[1], keepdims=True)
            result = reduction_ops.reduce_max(result, None if axis is None else axis[0],
                                              keepdims=True)
        else:
            p = convert_to_tensor(float(ord), dtype=magnitude.dtype)
            total = reduction_ops.reduce_sum(mb.pow(magnitude, p), axis, keepdims=True)
            result = mb.pow(total, mb.realdiv(convert_to_tensor(1.0, dtype=p.dtype), p))
        if not keepdims:
            result = array_ops.squeeze(result, axis)
        return result


def _spectral_norm(tensor: Tensor, axis) -> Tensor:
    """The largest singular value over the matrix axes `axis`, keeping them (size 1)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import reduction_ops
    rank = tensor.shape.ndims
    if rank is None:
        raise ValueError("The matrix 2-norm needs a tensor of known rank")
    a0, a1 = (i % rank for i in axis)
    rest = [i for i in range(rank) if i not in (a0, a1)]
    moved = array_ops.transpose(tensor, perm=rest + [a0, a1])
    s = svd(moved, compute_uv=False)  # real singular values
    top = reduction_ops.reduce_max(s, -1)
    for i in sorted((a0, a1)):
        top = array_ops.expand_dims(top, i)
    return top


# --- compositions: pinv, matrix_rank, normalize; global_norm ----------------------------------
export(clip_ops.global_norm, "linalg.global_norm")  # TF1 has it in both namespaces
def _float_input(a, name: str) -> Tensor:
    a = convert_to_tensor(a, name=name)
    if not (a.dtype.is_floating or a.dtype.is_complex):
        raise TypeError("Input `a` must have `float`-like `dtype` (saw %s)." % a.dtype.name)
    return a


def _default_tolerance(a: Tensor, s: Tensor, scale: float) -> Tensor:
    """scale * max(M, N) * eps * max(s): the cut-off below which singular values count as
    zero."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops, reduction_ops
    eps = float(np.finfo(s.dtype.as_numpy_dtype).eps)
    dims = a.shape.as_list()[-2:] if a.shape.ndims else [None, None]
    if None in dims:
        shape = array_ops.shape(a)
        size = math_ops.cast(reduction_ops.reduce_max(shape[-2:]), s.dtype)
    else:
        size = convert_to_tensor(float(max(dims)), dtype=s.dtype)
    factor = _mb().multiply(size, convert_to_tensor(scale * eps, dtype=s.dtype))
    return _mb().multiply(factor, reduction_ops.reduce_max(s, -1, keepdims=True))


@tf_export("linalg.pinv")
def pinv(a, rcond=None, validate_args: bool = False, name: Optional[str] = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each innermost matrix, from its SVD (TF1
    `tf.linalg.pinv`).

    Singular values at most rcond * max(s) count as zero; the default rcond is
    10 * max(M, N) * eps.

    Args:
      a: a float or complex Tensor [..., M, N].
      rcond: the relative cut-off (a Python float or Tensor), or None.
      validate_args: unused (the kernels validate their inputs).
      name: name scope (default "pinv").

    Returns:
      A Tensor [..., N, M] of the dtype of `a`.

    Raises:
      TypeError: `a` is not a float or complex tensor.
    """
    from tensorweave.ops.array import array_fill_ops
    from tensorweave.ops.indexing import indexing_select
    from tensorweave.ops.math import complex_ops
    del validate_args
    with _graph.name_scope(name, "pinv", [a, rcond]):
        a = _float_input(a, "a")
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        if rcond is None:
            cutoff = _default_tolerance(a, s, 10.0)
        else:
            from tensorweave.ops.math import reduction_ops
            cutoff = _mb().multiply(convert_to_tensor(rcond, dtype=s.dtype),
                                    reduction_ops.reduce_max(s, -1, keepdims=True))
        keep = _mb().greater(s, cutoff)
        safe = indexing_select.where(keep, s, array_fill_ops.ones_like(s))
        s_inv = indexing_select.where(keep, _mu().reciprocal(safe),
                                      array_fill_ops.zeros_like(s))
        if a.dtype.is_complex:
            s_inv = complex_ops.complex(s_inv, array_fill_ops.zeros_like(s_inv))
        return _mm(_mb().multiply(v, _expand(s_inv, -2)), u, adjoint_b=True)


@tf_export("linalg.matrix_rank")
def matrix_rank(a, tol=None, validate_args: bool = False,
                name: Optional[str] = None) -> Tensor:
    """The number of singular values above `tol` of each innermost matrix (TF1
    `tf.linalg.matrix_rank`); the default tol is max(M, N) * eps * max(s).

    Args:
      a: a float or complex Tensor [..., M, N].
      tol: the absolute threshold (a Python float or Tensor), or None.
      validate_args: unused.
      name: name scope (default "matrix_rank").

    Returns:
      An int32 Tensor [...].

    Raises:
      TypeError: `a` is not a float or complex tensor.
    """
    from tensorweave.ops.math import math_ops, reduction_ops
    del validate_args
    with _graph.name_scope(name, "matrix_rank", [a, tol]):
        a = _float_input(a, "a")
        s = svd(a, compute_uv=False)
        if tol is None:
            tol = _default_tolerance(a, s, 1.0)
        else:
            tol = convert_to_tensor(tol, dtype=s.dtype, name="tol")
        return reduction_ops.reduce_sum(math_ops.cast(_mb().greater(s, tol), _dt.int32),
                                        axis=-1)


@tf_export("linalg.normalize")
def normalize(tensor, ord="euclidean", axis=None,  # noqa: A002 - TF's name
              name: Optional[str] = None):
    """Divides `tensor` by its norm (TF1 `tf.linalg.normalize`); see `norm` for `ord`
    and `axis`.

    Args:
      tensor: a float or complex Tensor.
      ord: the norm.
      axis: None, an int or a pair of ints.
      name: name scope (default "normalize").

    Returns:
      The tuple (normalized tensor, norm with the reduced dimensions kept).
    """
    from tensorweave.ops.math import math_ops
    with _graph.name_scope(name, "normalize", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        n = norm(tensor, ord=ord, axis=axis, keepdims=True)
        n = math_ops.cast(n, tensor.dtype)
        return _mb().divide(tensor, n), n
