"""Operators given by a shape alone: the identity, a scaled identity and the zero
operator. None of them builds a matrix: products are the argument itself, a scaling,
or zeros, broadcast to the operator's batch shape.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.linalg import linear_operator_util as util
from tensorweave.ops.linalg.linear_operator import LinearOperator
from tensorweave.ops.linalg.linear_operator_matrix import LinearOperatorDiag
from tensorweave.ops.linalg.linear_operator_util import ops


def _dimension_arg(value, arg_name: str, assert_proper_shapes: bool):
    """A num_rows/num_columns argument as an int32 scalar Tensor and its static value.

    Raises:
      TypeError: not an integer.
      ValueError: statically not a scalar or negative.
    """
    t = ops()
    tensor = util.shape_tensor(value, name=arg_name)
    if not tensor.dtype.is_integer:
        raise TypeError("Argument %s must be integer type.  Found: %s" % (arg_name, tensor))
    if assert_proper_shapes:
        tensor = util.with_dependencies(
            [t.debugging.assert_rank(tensor, 0, message="Argument %s must be a 0-D Tensor."
                                     % arg_name),
             t.debugging.assert_non_negative(tensor, message="Argument %s must be "
                                             "non-negative." % arg_name)], tensor)
    static = util.static_value(tensor)
    if static is not None:
        if static.ndim != 0:
            raise ValueError("Argument %s must be a 0-D Tensor.  Found: %s"
                             % (arg_name, static))
        if static < 0:
            raise ValueError("Argument %s must be non-negative.  Found: %s"
                             % (arg_name, static))
        static = int(static)
    return tensor, static


def _batch_shape_arg(batch_shape, assert_proper_shapes: bool):
    """The batch_shape argument as an int32 vector Tensor and its static value (None
    for either when not given).

    Raises:
      TypeError: not integers.
      ValueError: statically not a vector or negative.
    """
    if batch_shape is None:
        return None, None
    t = ops()
    tensor = util.shape_tensor(batch_shape, name="batch_shape_arg")
    if not tensor.dtype.is_integer:
        raise TypeError("Argument batch_shape must be integer type.  Found: %s" % tensor)
    if assert_proper_shapes:
        tensor = util.with_dependencies(
            [t.debugging.assert_rank(tensor, 1, message="Argument batch_shape must be a "
                                     "1-D Tensor."),
             t.debugging.assert_non_negative(tensor, message="Argument batch_shape must "
                                             "be non-negative.")], tensor)
    static = util.static_value(tensor)
    if static is not None:
        if static.ndim != 1:
            raise ValueError("Argument batch_shape must be a 1-D Tensor.  Found: %s"
                             % static)
        if np.any(static < 0):
            raise ValueError("Argument batch_shape must be non-negative.  Found:%s"
                             % static)
        static = [int(s) for s in static]
    return tensor, static


class _ShapeOnlyOperator(LinearOperator):
    """What identity-like operators share: a shape given by num_rows / num_columns and an
    optional batch_shape, and the broadcasting of results to that batch shape."""

    _batch_shape_tensor_arg = None
    _batch_shape_static = None
    _assert_proper_shapes = False

    def _init_shape(self, num_rows, num_columns, batch_shape, assert_proper_shapes):
        self._assert_proper_shapes = assert_proper_shapes
        self._num_rows, self._num_rows_static = _dimension_arg(
            num_rows, "num_rows", assert_proper_shapes)
        if num_columns is None:
            self._num_columns, self._num_columns_static = (self._num_rows,
                                                           self._num_rows_static)
        else:
            self._num_columns, self._num_columns_static = _dimension_arg(
                num_columns, "num_columns", assert_proper_shapes)
        self._batch_shape_tensor_arg, self._batch_shape_static = _batch_shape_arg(
            batch_shape, assert_proper_shapes)

    def _matrix_batch_shape(self) -> TensorShape:
        if self._batch_shape_tensor_arg is None:
            return TensorShape([])
        return TensorShape(self._batch_shape_static)

    def _shape(self) -> TensorShape:
        return self._matrix_batch_shape().concatenate(
            [self._num_rows_static, self._num_columns_static])

    def _shape_tensor(self):
        t = ops()
        matrix = t.stack([self._num_rows, self._num_columns], axis=0)
        if self._batch_shape_tensor_arg is None:
            return matrix
        return t.concat([self._batch_shape_tensor_arg, matrix], 0)

    def _min_matrix_dim(self) -> Optional[int]:
        rows, cols = self.range_dimension.value, self.domain_dimension.value
        return None if rows is None or cols is None else min(rows, cols)

    def _min_matrix_dim_tensor(self):
        return ops().reduce_min(self.shape_tensor()[-2:])

    def _batch_filled(self, value: float):
        """A Tensor of the batch shape filled with `value`."""
        t = ops()
        shape = (self.batch_shape.as_list() if self.batch_shape.is_fully_defined()
                 else self.batch_shape_tensor())
        return t.fill(shape, t.constant(value, dtype=self.dtype))

    def _diag_filled(self, value: float):
        """A Tensor [batch..., min(M, N)] filled with `value`."""
        t = ops()
        if self.shape.is_fully_defined():
            shape = self.batch_shape.as_list() + [self._min_matrix_dim()]
        else:
            shape = t.concat([self.batch_shape_tensor(), [self._min_matrix_dim_tensor()]], 0)
        return t.fill(shape, t.constant(value, dtype=self.dtype))

    def _min_dim_as_dtype(self):
        t = ops()
        n = self._min_matrix_dim()
        if n is not None:
            return t.constant(n, dtype=self.dtype)
        return t.cast(self._min_matrix_dim_tensor(), self.dtype)

    def _possibly_broadcast_batch_shape(self, x):
        """`x` broadcast against the operator's batch shape (when one was given)."""
        t = ops()
        if self._batch_shape_tensor_arg is None:
            return x
        special = self.batch_shape.concatenate([1, 1])
        if special.is_fully_defined():
            if util.broadcast_batch_shape([x.shape, special]) == x.shape:
                return x
            return x + t.zeros(special.as_list(), dtype=x.dtype)
        special = t.concat([self.batch_shape_tensor(), [1, 1]], 0)
        return x + t.zeros(special, dtype=x.dtype)

    def _proper_shape_checked(self, x):
        if not self._assert_proper_shapes:
            return x
        t = ops()
        check = t.debugging.assert_equal(
            t.shape(x)[-2], self.domain_dimension_tensor(),
            message="Dimensions are not compatible.  shape[-2] of argument to be the same "
                    "as this operator")
        return util.with_dependencies([check], x)


@tf_export("linalg.LinearOperatorIdentity")
class LinearOperatorIdentity(_ShapeOnlyOperator):
    """`LinearOperator` acting like a [batch] identity matrix; stores no matrix."""

    _is_identity = True

    def __init__(self, num_rows, batch_shape=None, dtype=None,
                 is_non_singular: bool = True, is_self_adjoint: bool = True,
                 is_positive_definite: bool = True, is_square: bool = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorIdentity"):
        """Initializes an identity of `num_rows` rows.

        Args:
          num_rows: a non-negative int (or int32 scalar Tensor), N.
          batch_shape: None, or a list of non-negative ints: the batch shape.
          dtype: the dtype (default float32).
          is_non_singular, is_self_adjoint, is_positive_definite, is_square: hints,
            which must be True.
          assert_proper_shapes: add run-time checks of the shapes and arguments.
          name: the operator's name.

        Raises:
          ValueError: a hint is not True, or a bad num_rows / batch_shape.
          TypeError: num_rows / batch_shape are not integers.
        """
        parameters = dict(num_rows=num_rows, batch_shape=batch_shape, dtype=dtype,
                          is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          assert_proper_shapes=assert_proper_shapes, name=name)
        dtype = _dt.as_dtype(dtype or _dt.float32)
        with ops().name_scope(name):
            if not is_self_adjoint:
                raise ValueError("An identity operator is always self adjoint.")
            if not is_non_singular:
                raise ValueError("An identity operator is always non-singular.")
            if not is_positive_definite:
                raise ValueError("An identity operator is always positive-definite.")
            if not is_square:
                raise ValueError("An identity operator is always square.")
            super().__init__(dtype=dtype, is_non_singular=True, is_self_adjoint=True,
                             is_positive_definite=True, is_square=True,
                             parameters=parameters, name=name)
            self._init_shape(num_rows, None, batch_shape, assert_proper_shapes)

    def _assert_non_singular(self):
        return ops().no_op("assert_non_singular")

    def _assert_positive_definite(self):
        return ops().no_op("assert_positive_definite")

    def _assert_self_adjoint(self):
        return ops().no_op("assert_self_adjoint")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = self._proper_shape_checked(util.adjoint_if(x, adjoint_arg))
        return self._possibly_broadcast_batch_shape(x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return self._batch_filled(1)

    def _log_abs_determinant(self):
        return self._batch_filled(0)

    def _trace(self):
        return self._min_dim_as_dtype() * self._batch_filled(1)

    def _diag_part(self):
        return self._diag_filled(1)

    def _to_dense(self):
        n = self._num_rows_static if self._num_rows_static is not None else self._num_rows
        batch = None
        if self._batch_shape_tensor_arg is not None:
            batch = (self._batch_shape_static if self._batch_shape_static is not None
                     else self._batch_shape_tensor_arg)
        return ops().eye(n, batch_shape=batch, dtype=self.dtype)

    def add_to_tensor(self, mat, name: str = "add_to_tensor"):
        """mat + I (only the diagonal of `mat` changes)."""
        t = ops()
        with self._name_scope(name):
            mat = t.convert_to_tensor(mat, name="mat")
            return t.linalg.set_diag(mat, 1 + t.linalg.diag_part(mat))

    def _eigvals(self):
        return self._diag_filled(1)

    def _cond(self):
        return self._batch_filled(1)

    def _linop_adjoint(self) -> "LinearOperatorIdentity":
        return self

    def _linop_inverse(self) -> "LinearOperatorIdentity":
        return self

    def _linop_cholesky(self) -> "LinearOperatorIdentity":
        return self

    def _linop_matmul(self, left, right) -> LinearOperator:
        return right

    def _linop_solve(self, left, right) -> LinearOperator:
        return right


@tf_export("linalg.LinearOperatorScaledIdentity")
class LinearOperatorScaledIdentity(_ShapeOnlyOperator):
    """`LinearOperator` acting like c I for a [batch] scalar c (`multiplier`)."""

    def __init__(self, num_rows, multiplier, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 assert_proper_shapes: bool = False,
                 name: str = "LinearOperatorScaledIdentity"):
        """Initializes c I with c = `multiplier` [B1, ..., Bb] and I of size `num_rows`.

        Raises:
          ValueError: `is_square` is False, a real multiplier hinted not self-adjoint,
            or a bad num_rows.
          TypeError: num_rows is not an integer.
        """
        parameters = dict(num_rows=num_rows, multiplier=multiplier,
                          is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          assert_proper_shapes=assert_proper_shapes, name=name)
        with ops().name_scope(name):
            self._multiplier = util.convert_nonref_to_tensor(multiplier, name="multiplier")
            if not self._multiplier.dtype.is_complex:
                if is_self_adjoint is False:
                    raise ValueError("A real diagonal operator is always self adjoint.")
                is_self_adjoint = True
            if not is_square:
                raise ValueError("A ScaledIdentity operator is always square.")
            super().__init__(dtype=self._multiplier.dtype.base_dtype,
                             is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             parameters=parameters, name=name)
            self._init_shape(num_rows, None, None, assert_proper_shapes)

    @property
    def multiplier(self):
        return self._multiplier

    def _matrix_batch_shape(self) -> TensorShape:
        return self._multiplier.shape

    def _shape_tensor(self):
        t = ops()
        return t.concat([t.shape(self._multiplier),
                         t.stack([self._num_rows, self._num_rows])], 0)

    def _assert_non_singular(self):
        t = ops()
        return t.debugging.assert_positive(t.abs(self._multiplier),
                                           message="LinearOperator was singular")

    def _assert_positive_definite(self):
        t = ops()
        return t.debugging.assert_positive(t.math.real(self._multiplier),
                                           message="LinearOperator was not positive "
                                                   "definite.")

    def _assert_self_adjoint(self):
        return util.assert_zero_imag_part(self._multiplier,
                                          message="LinearOperator was not self-adjoint")

    def _multiplier_matrix(self, conjugate: bool = False):
        t = ops()
        m = self._multiplier
        if conjugate and m.dtype.is_complex:
            m = t.math.conj(m)
        return m[..., None, None]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = self._proper_shape_checked(util.adjoint_if(x, adjoint_arg))
        return x * self._multiplier_matrix(conjugate=adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = self._proper_shape_checked(util.adjoint_if(rhs, adjoint_arg))
        return rhs / self._multiplier_matrix(conjugate=adjoint)

    def _determinant(self):
        return self._multiplier ** ops().cast(self._num_rows, self.dtype)

    def _log_abs_determinant(self):
        t = ops()
        # As TF: real-valued even for a complex multiplier.
        return t.cast(self._num_rows, self.dtype.real_dtype) * t.log(t.abs(self._multiplier))

    def _trace(self):
        return self._multiplier * self._min_dim_as_dtype() * self._batch_filled(1)

    def _diag_part(self):
        return self._diag_filled(1) * self._multiplier[..., None]

    def add_to_tensor(self, mat, name: str = "add_to_tensor"):
        """mat + c I (only the diagonal of `mat` changes)."""
        t = ops()
        with self._name_scope(name):
            mat = t.convert_to_tensor(mat, name="mat")
            return t.linalg.set_diag(mat, self._multiplier[..., None]
                                     + t.linalg.diag_part(mat))

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        t = ops()
        zero = t.equal(self._multiplier, t.zeros_like(self._multiplier))
        return t.where(zero, t.fill(t.shape(self._multiplier),
                                    t.constant(np.nan, dtype=self.dtype)),
                       t.ones_like(self._multiplier))

    def _linop_adjoint(self) -> "LinearOperatorScaledIdentity":
        m = self._multiplier
        if m.dtype.is_complex:
            m = ops().math.conj(m)
        return LinearOperatorScaledIdentity(self._num_rows, m, **self._same_hints())

    def _linop_inverse(self) -> "LinearOperatorScaledIdentity":
        return LinearOperatorScaledIdentity(self._num_rows, 1.0 / self._multiplier,
                                            **self._same_hints())

    def _linop_cholesky(self) -> "LinearOperatorScaledIdentity":
        return LinearOperatorScaledIdentity(self._num_rows, ops().sqrt(self._multiplier),
                                            is_non_singular=True, is_self_adjoint=True,
                                            is_positive_definite=True, is_square=True)

    def _linop_matmul(self, left, right) -> LinearOperator:
        hints = util.commuting_product_hints(left, right)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorScaledIdentity(left.domain_dimension_tensor(),
                                                left.multiplier * right.multiplier, **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(right.diag * left.multiplier[..., None], **hints)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left, right) -> LinearOperator:
        hints = util.commuting_product_hints(left, right)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorScaledIdentity(left.domain_dimension_tensor(),
                                                right.multiplier / left.multiplier, **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(right.diag / left.multiplier[..., None], **hints)
        return super()._linop_solve(left, right)


@tf_export("linalg.LinearOperatorZeros")
class LinearOperatorZeros(_ShapeOnlyOperator):
    """`LinearOperator` acting like a [batch] zero matrix [..., M, N]; stores nothing."""

    _is_zeros = True

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular: bool = False, is_self_adjoint: bool = True,
                 is_positive_definite: bool = False, is_square: bool = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorZeros"):
        """Initializes a zero operator of shape batch_shape + [num_rows, num_columns].

        Raises:
          ValueError: contradictory hints (a zero operator is singular, not positive
            definite, and self-adjoint when square), is_square with num_rows !=
            num_columns, or bad dimensions.
          TypeError: dimensions that are not integers.
        """
        parameters = dict(num_rows=num_rows, num_columns=num_columns,
                          batch_shape=batch_shape, dtype=dtype,
                          is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          assert_proper_shapes=assert_proper_shapes, name=name)
        dtype = _dt.as_dtype(dtype or _dt.float32)
        with ops().name_scope(name):
            if not is_self_adjoint and is_square:
                raise ValueError("A zero operator is always self adjoint.")
            if is_non_singular:
                raise ValueError("A zero operator is always singular.")
            if is_positive_definite:
                raise ValueError("A zero operator is always not positive-definite.")
            super().__init__(dtype=dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite,
                             is_square=is_square, parameters=parameters, name=name)
            self._init_shape(num_rows, num_columns, batch_shape, assert_proper_shapes)
            rows, cols = self._num_rows_static, self._num_columns_static
            if is_square and rows is not None and cols is not None and rows != cols:
                raise ValueError("LinearOperatorZeros initialized as is_square=True, but "
                                 "got num_rows({}) != num_columns({})".format(rows, cols))

    def _assert_non_singular(self):
        raise errors.InvalidArgumentError(None, None,
                                          "Zero operators are always non-invertible.")

    def _assert_positive_definite(self):
        raise errors.InvalidArgumentError(None, None,
                                          "Zero operators are always non-positive "
                                          "definite.")

    def _assert_self_adjoint(self):
        return ops().no_op("assert_self_adjoint")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        t = ops()
        if self._assert_proper_shapes:
            self._proper_shape_checked(util.adjoint_if(x, adjoint_arg))
        x_shape = t.shape(x)
        rows = self._num_columns if adjoint else self._num_rows
        cols = x_shape[-2] if adjoint_arg else x_shape[-1]
        out_shape = t.concat([x_shape[:-2], t.stack([rows, cols])], 0)
        return self._possibly_broadcast_batch_shape(t.zeros(out_shape, dtype=x.dtype))

    def _determinant(self):
        return self._batch_filled(0)

    def _trace(self):
        return self._batch_filled(0)

    def _diag_part(self):
        return self._diag_filled(0)

    def _to_dense(self):
        t = ops()
        if self.shape.is_fully_defined():
            return t.zeros(self.shape.as_list(), dtype=self.dtype)
        return t.zeros(self.shape_tensor(), dtype=self.dtype)

    def add_to_tensor(self, mat, name: str = "add_to_tensor"):
        """mat + 0: `mat` broadcast to the operator's batch shape."""
        with self._name_scope(name):
            return self._possibly_broadcast_batch_shape(ops().convert_to_tensor(mat))

    def _eigvals(self):
        return self._diag_filled(0)

    def _linop_adjoint(self) -> "LinearOperatorZeros":
        if self.is_square:
            return self
        return LinearOperatorZeros(self._num_columns, self._num_rows,
                                   batch_shape=self._batch_shape_tensor_arg,
                                   dtype=self.dtype, is_non_singular=False,
                                   is_self_adjoint=False, is_positive_definite=False,
                                   is_square=False)

    def _linop_matmul(self, left, right) -> LinearOperator:
        if not left.is_square or not right.is_square:
            raise ValueError("Matmul with non-square `LinearOperator`s or non-square "
                             "`LinearOperatorZeros` not supported at this time.")
        return left
