"""Matrix functions: the exponential, square root and logarithm (ops MatrixExponential,
MatrixSquareRoot and MatrixLogarithm, TF1's op names for them).

expm: scaling and squaring with the degree-13 Pade approximant (Higham 2005): A is
scaled by 2^-s so that its 1-norm is at most 5.37, the approximant is solved for, and
the result squared s times (s per matrix; the squarings run for the whole batch with a
mask). Gradient: the adjoint of the Frechet derivative, read from the exponential of a
block matrix: dA = expm([[A^H, G], [0, A^H]])[:n, n:].

sqrtm and logm work, as TF's kernels do, on a complex Schur form A = Q T Q^H (built
here from LAPACK's eigensolvers, see "Schur forms"): the square root of T by the
Bjorck-Hammarling recurrence, its logarithm by inverse scaling and squaring. Gradient
of sqrtm: the solution of a Sylvester equation; logm has none, as in TF.
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
from tensorweave.ops.linalg import matrix_ops
from tensorweave.ops.linalg.linalg_ops import _LINALG_TYPES, _check_square, _square_shape, \
    _work

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152

register_op("MatrixExponential", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_LINALG_TYPES)}, shape=_square_shape)


def _expm(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    eye = np.eye(n, dtype=a.dtype)
    norm1 = np.abs(a).sum(axis=-2).max(axis=-1) if n else np.zeros(a.shape[:-2])
    with np.errstate(divide="ignore"):
        squarings = np.maximum(0, np.ceil(np.log2(norm1 / _THETA13))).astype(np.int64)
    squarings = np.where(np.isfinite(norm1), squarings, 0)
    a = a / (2.0 ** squarings)[..., None, None].astype(a.real.dtype)
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 +
             b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + \
        b[2] * a2 + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for step in range(int(squarings.max()) if squarings.size else 0):
        more = (squarings > step)[..., None, None]
        r = np.where(more, r @ r, r)
    return r


@kernel("MatrixExponential", cheap=False)
def _expm_kernel(ctx, x):
    _check_square(ctx, x)
    if x.size == 0:
        return x.copy()
    return _expm(_work(x)).astype(x.dtype, copy=False)


@gradient("MatrixExponential")
def _expm_grad(op, grad):
    from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
    a = op.inputs[0]
    a_h = matrix_ops.adjoint(a)
    top = array_join_ops.concat([a_h, grad], -1)
    bottom = array_join_ops.concat([array_fill_ops.zeros_like(a_h), a_h], -1)
    block = expm(array_join_ops.concat([top, bottom], -2))
    n = a.shape.as_list()[-1] if a.shape.ndims else None
    if n is None:
        n = array_ops.shape(a)[-1]
    return [block[..., :n, n:]]


@tf_export("linalg.expm")
def expm(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """Computes the matrix exponential of each square matrix (TF1 `tf.linalg.expm`).

    Args:
      input: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      name: name scope (default "matrix_exponential").

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      ValueError: `input` is not a float or complex tensor.
    """
    with _graph.name_scope(name, "matrix_exponential", [input]):
        input = convert_to_tensor(input, name="input")
        if input.dtype not in _LINALG_TYPES:
            raise ValueError("tf.linalg.expm does not support matrices of type %s"
                             % input.dtype)
        return apply_op("MatrixExponential", [input], name="MatrixExponential").outputs[0]


# --- Schur forms ----------------------------------------------------------------------------
# TF computes sqrtm and logm from a Schur form A = Q T Q^H (Eigen's MatrixSquareRoot and
# MatrixLogarithm). NumPy has no Schur decomposition, so it is built here, per matrix of a
# batch, by one of three routes, all giving a unitary Q and an upper triangular T:
#   * Hermitian matrices (covariances, the common case): eigh; T is diagonal.
#   * other matrices: eig, then Q from the QR decomposition of the eigenvector matrix
#     (its leading k columns span the invariant subspace of the first k eigenvalues, so
#     Q^H A Q is triangular up to rounding). This is as cheap as LAPACK's Schur, but its
#     backward error grows with the conditioning of the eigenvectors, so it is checked:
#     the part of Q^H A Q below the diagonal must be at most _SCHUR_TOL * n * eps * |A|
#     (random and SPD-product matrices measure < 1 here, defective ones ~1e8).
#   * matrices failing that check (defective or nearly so): the Schur form is built one
#     eigenvalue at a time, deflating with an eigenvector of the trailing block that is
#     left. This is backward stable for any matrix, defective or singular, but costs
#     O(n^4) (one eig per eigenvalue), which is why it is the fallback only.
# Iterations without a Schur form (Denman-Beavers, Newton) were not used: they need
# inverses, so they fail on singular matrices, and they do not converge for eigenvalues
# on the negative real axis, cases for which TF's Schur method returns defined results
# that are followed here.
_SCHUR_TOL = 16.0


def _eig(a: np.ndarray):
    """np.linalg.eig, with NaN for the matrices where LAPACK does not converge (a batched
    call fails as a whole)."""
    try:
        return np.linalg.eig(a)
    except np.linalg.LinAlgError:
        ctype = np.result_type(a.dtype, np.complex64)
        w = np.full(a.shape[:-1], np.nan, ctype)
        v = np.full(a.shape, np.nan, ctype)
        for i in range(a.shape[0]):
            try:
                w[i], v[i] = np.linalg.eig(a[i])
            except np.linalg.LinAlgError:
                pass
        return w, v


def _adj(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _schur_by_deflation(a: np.ndarray):
    """(q, t) for a batch of complex matrices a [b, n, n], one eigenvalue at a time."""
    n = a.shape[-1]
    t = a.copy()
    q = np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape).copy()
    for k in range(n - 1):
        # an eigenpair of the trailing block itself, not of A: a defective eigenvalue is
        # only known to eps^(1/multiplicity), so A's computed eigenvalues need not be
        # (nearly) eigenvalues of the block left after deflating some of them, while
        # LAPACK's pair for the block has a residual of order eps |A|
        vector = _eig(t[:, k:, k:])[1][:, :, 0]
        # a unitary whose first column is that eigenvector (up to phase)
        house = np.linalg.qr(vector[:, :, None], mode="complete")[0]
        t[:, :, k:] = t[:, :, k:] @ house
        t[:, k:, :] = _adj(house) @ t[:, k:, :]
        q[:, :, k:] = q[:, :, k:] @ house
    return q, np.triu(t)


def _schur(a: np.ndarray):
    """Complex Schur forms of a batch a [b, n, n] of finite matrices.

    Returns:
      (q, t, w, w_real): a = q t q^H with q unitary and t upper triangular (complex);
      w [b, n] the eigenvalues LAPACK computed from `a` in its own field, and w_real
      which of them are real. For a real `a` these are the 1x1 blocks of its real Schur
      form (LAPACK's real eigenvalues have an imaginary part of exactly 0), which is what
      TF's real kernels take square roots of.
    """
    b, n = a.shape[0], a.shape[-1]
    ctype = np.result_type(a.dtype, np.complex64)
    q = np.empty(a.shape, ctype)
    t = np.zeros(a.shape, ctype)
    w = np.empty((b, n), ctype)
    w_real = np.ones((b, n), bool)
    hermitian = np.all(a == _adj(a), axis=(-2, -1))
    diag = np.arange(n)
    if hermitian.any():
        e, q[hermitian] = np.linalg.eigh(a[hermitian])
        w[hermitian] = e
        t_h = np.zeros((len(e), n, n), ctype)
        t_h[:, diag, diag] = e
        t[hermitian] = t_h
    general = ~hermitian
    if general.any():
        a_g = a[general].astype(ctype)
        w_g, v_g = _eig(a[general])
        q_g = np.linalg.qr(v_g.astype(ctype))[0]
        t_g = _adj(q_g) @ a_g @ q_g
        eps = np.finfo(a.dtype).eps
        below = np.linalg.norm(np.tril(t_g, -1), axis=(-2, -1))
        # NaN (no convergence) compares False: those stay NaN and are not retried
        retry = below > _SCHUR_TOL * n * eps * np.linalg.norm(a_g, axis=(-2, -1))
        if retry.any():
            q_g[retry], t_g[retry] = _schur_by_deflation(a_g[retry])
        q[general], t[general] = q_g, np.triu(t_g)
        w[general] = w_g
        if np.iscomplexobj(w_g) and not np.iscomplexobj(a):
            w_real[general] = w_g.imag == 0
    return q, t, w, w_real


def _principal_sqrt(d: np.ndarray) -> np.ndarray:
    """sqrt of complex scalars, with +i sqrt(|x|) for x on the negative real axis whatever
    the sign of its zero imaginary part (a computed eigenvalue may carry -0.0)."""
    root = np.sqrt(d)
    on_cut = (d.imag == 0) & (d.real < 0)
    return np.where(on_cut, 1j * np.sqrt(np.abs(d.real)), root).astype(d.dtype, copy=False)


def _principal_log(d: np.ndarray) -> np.ndarray:
    """log of complex scalars, with +i pi on the negative real axis (as _principal_sqrt)."""
    with np.errstate(divide="ignore"):
        out = np.log(d)
    on_cut = (d.imag == 0) & (d.real < 0)
    return np.where(on_cut, out.real + 1j * np.pi, out).astype(d.dtype, copy=False)


def _sqrt_triangular(t: np.ndarray) -> np.ndarray:
    """The principal square root R of each upper triangular t [b, n, n] (Bjorck and
    Hammarling): R_ii = sqrt(t_ii), then one superdiagonal at a time,
    R_ij = (t_ij - sum_{i<k<j} R_ik R_kj) / (R_ii + R_jj).
    Two zero eigenvalues make a 0/0 (NaN), as in TF."""
    n = t.shape[-1]
    diag = np.arange(n)
    r = np.zeros_like(t)
    d = _principal_sqrt(t[:, diag, diag])
    r[:, diag, diag] = d
    if not np.count_nonzero(np.triu(t, 1)):
        # diagonal (Hermitian input): the recurrence gives 0 off it, or 0/0 for a pair
        # of zero eigenvalues (R_ii + R_jj = 0 needs both zero)
        r[np.count_nonzero(d == 0, axis=-1) > 1] = np.nan
        return r
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(1, n):
            i = diag[:n - k]
            # sum_m R[i, m] R[m, i + k]; the terms m = i, i + k are still 0 in R
            inner = np.einsum("bim,bmi->bi", r[:, :n - k, :], r[:, :, k:])
            r[:, i, i + k] = (t[:, i, i + k] - inner) / (d[:, i] + d[:, i + k])
    return r


def _nan_where(x: np.ndarray, bad: np.ndarray) -> np.ndarray:
    x[bad] = complex(np.nan, np.nan) if np.iscomplexobj(x) else np.nan  # TF: nan+nanj
    return x


def _finite_or_identity(flat: np.ndarray):
    """(flat with its non-finite matrices replaced by I, which matrices were finite):
    LAPACK rejects inf/NaN, and TF returns NaN for them."""
    finite = np.all(np.isfinite(flat), axis=(-2, -1))
    if not finite.all():
        flat = flat.copy()
        flat[~finite] = np.eye(flat.shape[-1], dtype=flat.dtype)
    return flat, finite


# --- MatrixSquareRoot -----------------------------------------------------------------------
register_op("MatrixSquareRoot", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_LINALG_TYPES)}, shape=_square_shape)


@kernel("MatrixSquareRoot", cheap=False)
def _sqrtm_kernel(ctx, x):
    _check_square(ctx, x)
    if x.size == 0:
        return x.copy()
    a = _work(x)
    flat, finite = _finite_or_identity(a.reshape((-1,) + a.shape[-2:]))
    q, t, w, w_real = _schur(flat)
    r = _sqrt_triangular(t)
    out = q @ r @ _adj(q)
    bad = ~finite | ~np.all(np.isfinite(r), axis=(-2, -1))
    if not np.iscomplexobj(a):
        # TF's real kernel takes real square roots of the real Schur form's 1x1 blocks: a
        # negative real eigenvalue gives NaN, which spreads over the whole matrix
        bad |= np.any(w_real & (w.real < 0), axis=-1)
        out = out.real
    return _nan_where(out, bad).reshape(x.shape).astype(x.dtype, copy=False)


@gradient("MatrixSquareRoot")
def _sqrtm_grad(op, grad):
    # R = sqrtm(A) satisfies R R = A, so dR solves the Sylvester equation R dR + dR R = dA
    # and the gradient X of A solves the adjoint equation R^H X + X R^H = G. Row-major
    # vectorised, that is (R^H (x) I + I (x) conj(R)) vec(X) = vec(G): one n^2 x n^2 solve
    # per matrix (TF solves the same Kronecker system), built from differentiable ops.
    from tensorweave.ops.array import array_join_ops, array_ops
    from tensorweave.ops.linalg.linalg_ops import solve
    from tensorweave.ops.math import math_binary, math_unary
    r = op.outputs[0]
    shape = array_ops.shape(r)
    n = shape[-1]
    eye = matrix_ops.eye(n, dtype=r.dtype)
    kron_shape = array_join_ops.concat([shape[:-2], array_join_ops.stack([n * n, n * n])], 0)

    def kron(left, right):  # [..., i, k, j, l] = left[..., i, j] * right[..., k, l]
        left = array_ops.expand_dims(array_ops.expand_dims(left, -1), -3)
        right = array_ops.expand_dims(array_ops.expand_dims(right, -2), -4)
        return array_ops.reshape(math_binary.multiply(left, right), kron_shape)

    system = math_binary.add(kron(matrix_ops.adjoint(r), eye), kron(eye, math_unary._conj(r)))
    column_shape = array_join_ops.concat([shape[:-2], array_join_ops.stack([n * n, 1])], 0)
    x = solve(system, array_ops.reshape(grad, column_shape))
    return [array_ops.reshape(x, shape)]


@tf_export("linalg.sqrtm", "matrix_square_root")
def sqrtm(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """Computes the principal square root of each square matrix (TF1 `tf.linalg.sqrtm`).

    The principal square root R of A satisfies R R = A and has its eigenvalues in the
    right half plane. It is computed, as in TF, from a Schur form A = Q T Q^H.

    Like TF: a real matrix with a negative real eigenvalue (it has no real principal
    root) gives NaN, and so does a matrix with more than one zero eigenvalue; a single
    zero eigenvalue is fine. A complex matrix with a negative real eigenvalue -x gets
    the root i sqrt(x) for it.

    Args:
      input: a Tensor [..., M, M] of float32/64 or complex64/128 (float16 is computed
        in float32).
      name: op name (default "MatrixSquareRoot").

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      TypeError: `input` is not a float or complex tensor.
      ValueError: rank < 2 or non-square (statically known).
      InvalidArgumentError (at run time): rank < 2 or non-square.
    """
    return apply_op("MatrixSquareRoot", [input], name=name or "MatrixSquareRoot").outputs[0]


# --- MatrixLogarithm ------------------------------------------------------------------------
_LOG_THETA = 0.25  # |X|_1 bound for the Pade step: with 8 nodes its error is < eps
_LOG_NODES, _LOG_WEIGHTS = np.polynomial.legendre.leggauss(8)
_MAX_SQUARE_ROOTS = 64  # |log t_ii| <= 710 in float64 needs ~12

register_op("MatrixLogarithm", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr((_dt.complex64, _dt.complex128))}, shape=_square_shape)


def _norm1(x: np.ndarray) -> np.ndarray:
    return np.abs(x).sum(axis=-2).max(axis=-1)


def _log_triangular(t: np.ndarray) -> np.ndarray:
    """The principal logarithm of each upper triangular t [b, n, n] with a nonzero
    diagonal, by inverse scaling and squaring (Higham, Functions of Matrices, 11.5):
    take s square roots until R = t^(1/2^s) is within _LOG_THETA of I, then
    log t = 2^s log(I + X), X = R - I, with log(I + X) = int_0^1 X (I + uX)^-1 du by
    Gauss-Legendre quadrature (the [8/8] Pade approximant). The diagonal is then set to
    the exact scalar logarithms, which the square roots would only approximate."""
    n = t.shape[-1]
    diag = np.arange(n)
    log_diag = _principal_log(t[:, diag, diag])
    out = np.zeros_like(t)
    if not np.count_nonzero(np.triu(t, 1)):
        out[:, diag, diag] = log_diag
        return out
    eye = np.eye(n, dtype=t.dtype)
    r = t.copy()
    roots = np.zeros(t.shape[0])
    for _ in range(_MAX_SQUARE_ROOTS):
        far = _norm1(r - eye) > _LOG_THETA
        if not far.any():
            break
        r[far] = _sqrt_triangular(r[far])
        roots[far] += 1
    x = r - eye
    for node, weight in zip(_LOG_NODES, _LOG_WEIGHTS):  # nodes on [-1, 1] -> u on [0, 1]
        u = t.real.dtype.type((node + 1) / 2)
        out += t.real.dtype.type(weight / 2) * np.linalg.solve(eye + u * x, x)
    out *= (2.0 ** roots)[:, None, None].astype(t.real.dtype)
    out[:, diag, diag] = log_diag
    return out


@kernel("MatrixLogarithm", cheap=False)
def _logm_kernel(ctx, x):
    _check_square(ctx, x)
    if x.size == 0:
        return x.copy()
    flat, finite = _finite_or_identity(x.reshape((-1,) + x.shape[-2:]))
    q, t, _, _ = _schur(flat)
    n = x.shape[-1]
    # a zero eigenvalue has no logarithm: TF returns NaN for the whole matrix
    singular = np.any(t[:, np.arange(n), np.arange(n)] == 0, axis=-1)
    t[singular] = np.eye(n, dtype=t.dtype)
    log_t = _log_triangular(t)
    out = q @ log_t @ _adj(q)
    bad = ~finite | singular | ~np.all(np.isfinite(log_t), axis=(-2, -1))
    return _nan_where(out, bad).reshape(x.shape).astype(x.dtype, copy=False)


@gradient("MatrixLogarithm")
def _logm_grad(op, grad):
    # TF registers no gradient for MatrixLogarithm, so tf.gradients raises LookupError;
    # registered here so that the registry knows the op's gradient status
    raise LookupError("No gradient defined for operation '%s' (op type: MatrixLogarithm)"
                      % op.name)


@tf_export("linalg.logm")
def logm(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """Computes the principal logarithm of each square matrix (TF1 `tf.linalg.logm`).

    The principal logarithm L of A satisfies expm(L) = A and has eigenvalues with
    imaginary parts in (-pi, pi] (a negative real eigenvalue -x gives log(x) + i pi).
    A singular matrix has no logarithm: the result is NaN, as in TF. Computed from a
    Schur form A = Q T Q^H by inverse scaling and squaring. Not differentiable (TF
    registers no gradient for it).

    Args:
      input: a Tensor [..., M, M] of complex64/128 (TF has no real MatrixLogarithm).
      name: op name (default "MatrixLogarithm").

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      TypeError: `input` is not complex.
      ValueError: rank < 2 or non-square (statically known).
      InvalidArgumentError (at run time): rank < 2 or non-square.
    """
    return apply_op("MatrixLogarithm", [input], name=name or "MatrixLogarithm").outputs[0]
