"""Operators given by their entries: a full matrix, a lower triangle, a diagonal, and the
three diagonals of a tridiagonal matrix.

Their structure decides the algorithms (as in TF): a lower-triangular solve is a
triangular substitution, a diagonal one a division, a tridiagonal one the Thomas-style
TridiagonalSolve kernel; determinants of triangular and diagonal operators are products
of the diagonal.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.linalg import linear_operator_util as util
from tensorweave.ops.linalg.linear_operator import LinearOperator
from tensorweave.ops.linalg.linear_operator_util import ops

_FLOAT_TYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.complex64, _dt.complex128)


def check_float_dtype(tensor, arg_name: str, allowed=_FLOAT_TYPES) -> None:
    """Raises TypeError when `tensor` is not of a floating or complex dtype."""
    if tensor.dtype not in allowed:
        raise TypeError("Argument %s must have dtype in %s. Found: %s"
                        % (arg_name, [d.name for d in allowed], tensor.dtype))


def check_rank_at_least(tensor, rank: int, arg_name: str) -> None:
    """Raises ValueError when `tensor` statically has rank below `rank`."""
    if tensor.shape.ndims is not None and tensor.shape.ndims < rank:
        raise ValueError("Argument %s must have at least %d dimension%s.  Found: %s"
                         % (arg_name, rank, "s" if rank > 1 else "", tensor))


def real_log_abs_det(log_abs_det, dtype):
    """log|det| (a real Tensor) in the operator's dtype, as TF returns it."""
    return ops().cast(log_abs_det, dtype) if dtype.is_complex else log_abs_det


def diag_log_abs_det(diag, dtype):
    """sum(log|d|) over the last axis: log|det| of a triangular or diagonal matrix."""
    t = ops()
    return real_log_abs_det(t.reduce_sum(t.log(t.abs(diag)), axis=[-1]), dtype)


def real_dtype_self_adjoint_hint(dtype, is_self_adjoint, what: str):
    """A real diagonal-like operator is self-adjoint; the hint may not say otherwise."""
    if dtype.is_complex:
        return is_self_adjoint
    if is_self_adjoint is False:
        raise ValueError("A real %s operator is always self adjoint." % what)
    return True


@tf_export("linalg.LinearOperatorFullMatrix")
class LinearOperatorFullMatrix(LinearOperator):
    """`LinearOperator` acting like a [batch] dense matrix [B1, ..., Bb, M, N]."""

    def __init__(self, matrix, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorFullMatrix"):
        """Initializes the operator from `matrix`.

        Args:
          matrix: a float or complex Tensor [B1, ..., Bb, M, N].
          is_non_singular, is_self_adjoint, is_positive_definite, is_square: hints.
          name: the operator's name.

        Raises:
          TypeError: `matrix` is not float16/32/64 or complex64/128.
          ValueError: `matrix` has rank < 2, or the hints contradict.
        """
        parameters = dict(matrix=matrix, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        with ops().name_scope(name):
            self._matrix = util.convert_nonref_to_tensor(matrix, name="matrix")
            check_float_dtype(self._matrix, "matrix")
            check_rank_at_least(self._matrix, 2, "matrix")
            super().__init__(dtype=self._matrix.dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite,
                             is_square=is_square, parameters=parameters, name=name)

    @property
    def matrix(self):
        return self._matrix

    def _shape(self) -> TensorShape:
        return self._matrix.shape

    def _shape_tensor(self):
        return ops().shape(self._matrix)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return ops().matmul(self._matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _to_dense(self):
        return self._matrix


@tf_export("linalg.LinearOperatorLowerTriangular")
class LinearOperatorLowerTriangular(LinearOperator):
    """`LinearOperator` acting like a [batch] lower-triangular square matrix; only the
    lower triangle (diagonal included) of `tril` is read."""

    def __init__(self, tril, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None,
                 name: str = "LinearOperatorLowerTriangular"):
        """Initializes the operator from `tril` [B1, ..., Bb, N, N].

        Raises:
          TypeError: `tril` is not a float or complex Tensor.
          ValueError: `tril` has rank < 2, or `is_square` is False.
        """
        parameters = dict(tril=tril, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this "
                             "time.")
        with ops().name_scope(name):
            self._tril = util.convert_nonref_to_tensor(tril, name="tril")
            check_float_dtype(self._tril, "tril")
            check_rank_at_least(self._tril, 2, "tril")
            super().__init__(dtype=self._tril.dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             parameters=parameters, name=name)

    @property
    def tril(self):
        return self._tril

    def _get_tril(self):
        # The strict upper triangle of the argument is ignored, never read.
        return ops().linalg.band_part(self._tril, -1, 0)

    def _get_diag(self):
        return ops().linalg.diag_part(self._tril)

    def _shape(self) -> TensorShape:
        return self._tril.shape

    def _shape_tensor(self):
        return ops().shape(self._tril)

    def _assert_non_singular(self):
        return util.assert_no_entries_with_modulus_zero(
            self._get_diag(), message="Singular operator:  Diagonal contained zero values.")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return ops().matmul(self._get_tril(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _determinant(self):
        return ops().reduce_prod(self._get_diag(), axis=[-1])

    def _log_abs_determinant(self):
        return diag_log_abs_det(self._get_diag(), self.dtype)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = util.adjoint_if(rhs, adjoint_arg)
        return ops().linalg.triangular_solve(self._get_tril(), rhs, lower=True,
                                             adjoint=adjoint)

    def _to_dense(self):
        return self._get_tril()

    def _diag_part(self):
        return self._get_diag()

    def _eigvals(self):
        return self._get_diag()


@tf_export("linalg.LinearOperatorDiag")
class LinearOperatorDiag(LinearOperator):
    """`LinearOperator` acting like a [batch] square diagonal matrix diag(d)."""

    def __init__(self, diag, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorDiag"):
        """Initializes the operator from the diagonal `diag` [B1, ..., Bb, N].

        Raises:
          TypeError: `diag` is not a float or complex Tensor.
          ValueError: `diag` has rank < 1, `is_square` is False, or a real `diag` with
            `is_self_adjoint=False`.
        """
        parameters = dict(diag=diag, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        with ops().name_scope(name):
            self._diag = util.convert_nonref_to_tensor(diag, name="diag")
            check_float_dtype(self._diag, "diag")
            check_rank_at_least(self._diag, 1, "diag")
            is_self_adjoint = real_dtype_self_adjoint_hint(self._diag.dtype,
                                                           is_self_adjoint, "diagonal")
            if is_square is False:
                raise ValueError("Only square diagonal operators currently supported.")
            super().__init__(dtype=self._diag.dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             parameters=parameters, name=name)

    @property
    def diag(self):
        return self._diag

    def _shape(self) -> TensorShape:
        d = self._diag.shape
        return d.concatenate(d[-1:])

    def _shape_tensor(self):
        t = ops()
        d = t.shape(self._diag)
        return t.concat([d, d[-1:]], 0)

    def _assert_non_singular(self):
        return util.assert_no_entries_with_modulus_zero(
            self._diag, message="Singular operator:  Diagonal contained zero values.")

    def _assert_positive_definite(self):
        t = ops()
        return t.debugging.assert_positive(
            t.math.real(self._diag),
            message="Operator was not positive definite: a diagonal entry was not "
                    "positive.")

    def _assert_self_adjoint(self):
        return util.assert_zero_imag_part(
            self._diag, message="This diagonal operator contained non-zero imaginary "
                                "values.  Thus it was not self-adjoint.")

    def _diag_column(self, adjoint: bool):
        t = ops()
        d = t.math.conj(self._diag) if adjoint and self.dtype.is_complex else self._diag
        return t.expand_dims(d, -1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._diag_column(adjoint) * util.adjoint_if(x, adjoint_arg)

    def _matvec(self, x, adjoint=False):
        t = ops()
        d = t.math.conj(self._diag) if adjoint and self.dtype.is_complex else self._diag
        return d * x

    def _determinant(self):
        return ops().reduce_prod(self._diag, axis=[-1])

    def _log_abs_determinant(self):
        return diag_log_abs_det(self._diag, self.dtype)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return util.adjoint_if(rhs, adjoint_arg) / self._diag_column(adjoint)

    def _to_dense(self):
        return ops().linalg.diag(self._diag)

    def _diag_part(self):
        return self._diag

    def _add_to_tensor(self, x):
        t = ops()
        return t.linalg.set_diag(x, t.linalg.diag_part(x) + self._diag)

    def _eigvals(self):
        return self._diag

    def _cond(self):
        t = ops()
        abs_diag = t.abs(self._diag)
        return t.reduce_max(abs_diag, axis=-1) / t.reduce_min(abs_diag, axis=-1)

    # --- operators of the same structure -------------------------------------------------
    def _linop_adjoint(self) -> "LinearOperatorDiag":
        return LinearOperatorDiag(ops().math.conj(self._diag), **self._same_hints())

    def _linop_inverse(self) -> "LinearOperatorDiag":
        return LinearOperatorDiag(1.0 / self._diag, **self._same_hints())

    def _linop_cholesky(self) -> "LinearOperatorDiag":
        return LinearOperatorDiag(ops().sqrt(self._diag), is_non_singular=True,
                                  is_self_adjoint=True, is_positive_definite=True,
                                  is_square=True)

    def _linop_matmul(self, left, right) -> LinearOperator:
        if not isinstance(right, LinearOperatorDiag):
            return super()._linop_matmul(left, right)
        return LinearOperatorDiag(left.diag * right.diag,
                                  **util.commuting_product_hints(left, right))

    def _linop_solve(self, left, right) -> LinearOperator:
        if not isinstance(right, LinearOperatorDiag):
            return super()._linop_solve(left, right)
        return LinearOperatorDiag(right.diag / left.diag,
                                  **util.commuting_product_hints(left, right))


_TRIDIAG_FORMATS = ("compact", "matrix", "sequence")


@tf_export("linalg.LinearOperatorTridiag")
class LinearOperatorTridiag(LinearOperator):
    """`LinearOperator` acting like a [batch] square tridiagonal matrix.

    `diagonals_format` is that of `tf.linalg.tridiagonal_solve`: "compact" ([..., 3, N]:
    superdiagonal (last entry ignored), diagonal, subdiagonal (first entry ignored)),
    "sequence" (those three as a list of [..., N] Tensors) or "matrix" ([..., N, N]).
    """

    def __init__(self, diagonals, diagonals_format: str = "compact",
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorTridiag"):
        """Initializes the operator from its diagonals.

        Raises:
          ValueError: an unknown `diagonals_format`.
        """
        parameters = dict(diagonals=diagonals, diagonals_format=diagonals_format,
                          is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        if diagonals_format not in _TRIDIAG_FORMATS:
            raise ValueError("Argument `diagonals_format` must be one of compact, matrix, "
                             "or sequence. Received : %s." % diagonals_format)
        with ops().name_scope(name):
            if diagonals_format == "sequence":
                self._diagonals = [util.convert_nonref_to_tensor(d, name="diag_%d" % i)
                                   for i, d in enumerate(diagonals)]
                dtype = self._diagonals[0].dtype
            else:
                self._diagonals = util.convert_nonref_to_tensor(diagonals,
                                                                name="diagonals")
                dtype = self._diagonals.dtype
            self._diagonals_format = diagonals_format
            super().__init__(dtype=dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite,
                             is_square=is_square, parameters=parameters, name=name)

    @property
    def diagonals(self):
        return self._diagonals

    @property
    def diagonals_format(self) -> str:
        return self._diagonals_format

    def _shape(self) -> TensorShape:
        if self._diagonals_format == "matrix":
            return self._diagonals.shape
        if self._diagonals_format == "compact":
            d = self._diagonals.shape
            vec = d[:-2].concatenate(d[-1:])
        else:
            batch = util.broadcast_batch_shape([d.shape[:-1] for d in self._diagonals])
            vec = batch.concatenate(self._diagonals[1].shape[-1:])
        return vec.concatenate(vec[-1:])

    def _shape_tensor(self):
        t = ops()
        if self._diagonals_format == "matrix":
            return t.shape(self._diagonals)
        if self._diagonals_format == "compact":
            vec = t.shape(self._diagonals[..., 0, :])
        else:
            batch = util.broadcast_batch_shape_tensor(
                [t.shape(d)[:-1] for d in self._diagonals])
            vec = t.concat([batch, t.shape(self._diagonals[1])[-1:]], 0)
        return t.concat([vec, vec[-1:]], 0)

    def _assert_self_adjoint(self):
        t = ops()
        if self._diagonals_format == "matrix":
            return super()._assert_self_adjoint()
        if self._diagonals_format == "compact":
            sup, diag, sub = t.unstack(self._diagonals, num=3, axis=-2)
        else:
            sup, diag, sub = self._diagonals
        # The superdiagonal (its first N-1 entries) must be the conjugate of the
        # subdiagonal (its last N-1).
        return t.group(
            util.assert_zero_imag_part(diag, message="This tridiagonal operator contained "
                                                     "non-zero imaginary values on the "
                                                     "diagonal."),
            t.debugging.assert_equal(t.math.conj(sub[..., 1:]), sup[..., :-1],
                                     message="This tridiagonal operator has non-conjugate "
                                             "subdiagonal and superdiagonal."))

    def _adjoint_diagonals(self):
        """The diagonals of A^H in this operator's format: conjugated, the sub- and
        superdiagonal swapped (shifted by one, as each format pads them at
        opposite ends)."""
        t = ops()
        if self._diagonals_format == "matrix":
            return t.linalg.adjoint(self._diagonals)
        if self._diagonals_format == "compact":
            sup, diag, sub = t.unstack(t.math.conj(self._diagonals), num=3, axis=-2)
            return t.stack([t.roll(sub, shift=-1, axis=-1), diag,
                            t.roll(sup, shift=1, axis=-1)], axis=-2)
        sup, diag, sub = [t.math.conj(d) for d in self._diagonals]
        return [t.roll(sub, shift=-1, axis=-1), diag, t.roll(sup, shift=1, axis=-1)]

    def _broadcast_diagonals(self, diagonals, batch):
        """`diagonals` broadcast to the batch shape `batch` (the kernels want equal
        batch shapes)."""
        t = ops()
        n = self._shape_tensor()[-1]
        if self._diagonals_format == "matrix":
            return t.broadcast_to(diagonals, t.concat([batch, [n, n]], 0))
        if self._diagonals_format == "compact":
            return t.broadcast_to(diagonals, t.concat([batch, [3, n]], 0))
        return [t.broadcast_to(d, t.concat([batch, [n]], 0)) for d in diagonals]

    def _with_rhs(self, x, adjoint: bool):
        t = ops()
        diagonals = self._adjoint_diagonals() if adjoint else self._diagonals
        batch = t.broadcast_dynamic_shape(self._shape_tensor()[:-2], t.shape(x)[:-2])
        x = t.broadcast_to(x, t.concat([batch, t.shape(x)[-2:]], 0))
        return self._broadcast_diagonals(diagonals, batch), x

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        t = ops()
        diagonals, x = self._with_rhs(util.adjoint_if(x, adjoint_arg), adjoint)
        return t.linalg.tridiagonal_matmul(diagonals, x,
                                           diagonals_format=self._diagonals_format)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        t = ops()
        diagonals, rhs = self._with_rhs(util.adjoint_if(rhs, adjoint_arg), adjoint)
        return t.linalg.tridiagonal_solve(diagonals, rhs,
                                          diagonals_format=self._diagonals_format)

    def _diag_part(self):
        t = ops()
        if self._diagonals_format == "matrix":
            return t.linalg.diag_part(self._diagonals)
        if self._diagonals_format == "sequence":
            return t.broadcast_to(self._diagonals[1], self.shape_tensor()[:-1])
        return self._diagonals[..., 1, :]

    def _to_dense(self):
        t = ops()
        if self._diagonals_format == "matrix":
            return self._diagonals
        diagonals = self._diagonals
        if self._diagonals_format == "sequence":
            batch = self._shape_tensor()[:-1]
            diagonals = t.stack([t.broadcast_to(d, batch) for d in diagonals], axis=-2)
        # LEFT_RIGHT: the superdiagonal uses its first N-1 entries, the subdiagonal its
        # last N-1, which is exactly the compact format's padding.
        return t.linalg.diag(diagonals, k=(-1, 1), align="LEFT_RIGHT")
