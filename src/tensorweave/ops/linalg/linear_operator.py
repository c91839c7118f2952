"""`tf.linalg.LinearOperator`: the abstract base of operators that act like [batch]
matrices without necessarily storing one.

A subclass defines `_shape` (static), `_shape_tensor` (dynamic, used only when the
static shape is not fully known) and `_matmul`; everything else has a dense default
(to_dense through matmul with an identity, det/slogdet/solve on the dense matrix, with
Cholesky when the hints say self-adjoint positive definite). Subclasses override what
their structure makes cheap; that is the point of the library.

Hints (`is_non_singular`, `is_self_adjoint`, `is_positive_definite`, `is_square`) are
True, False or None (unknown), never checked against values; contradictory ones are a
ValueError at construction, as in TF. Methods build ops inside the name scope
"<operator name>/<method>".
"""
from __future__ import annotations

import abc
import contextlib
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import Dimension, TensorShape
from tensorweave.ops.linalg import linear_operator_util as util
from tensorweave.ops.linalg.linear_operator_util import ops


def _dim_at(shape: TensorShape, index: int) -> Dimension:
    return shape[index] if shape.ndims is not None else Dimension(None)


@tf_export("linalg.LinearOperator")
class LinearOperator(metaclass=abc.ABCMeta):
    """Base class defining a [batch of] linear operator[s] (TF1 `tf.linalg.LinearOperator`).

    An operator of shape [B1, ..., Bb, M, N] acts on `x` of shape [C1, ..., Cc, N, R]
    where the batch shapes broadcast.
    """

    def __init__(self, dtype, graph_parents=None, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None,
                 parameters: Optional[dict] = None):
        """Initializes the operator's dtype, hints and name.

        Args:
          dtype: the dtype of the operator's matrix and of the arguments it accepts.
          graph_parents: deprecated; a list of Tensors this operator depends on.
          is_non_singular: hint that the operator is invertible.
          is_self_adjoint: hint that the operator equals its Hermitian transpose.
          is_positive_definite: hint that real(x^H A x) > 0 for every nonzero x.
          is_square: hint that the operator is square.
          name: the operator's name (default: its class name).
          parameters: the constructor's arguments (`self.parameters`).

        Raises:
          ValueError: hints that contradict each other.
        """
        # Implied hints: positive definite => non-singular => square; self-adjoint =>
        # square.
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._is_square_set_or_implied_by_hints = is_square
        self._graph_parents = []
        if graph_parents is not None:
            self._set_graph_parents(graph_parents)
        self._dtype = _dt.as_dtype(dtype).base_dtype if dtype else dtype
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._parameters = dict(parameters or {})
        self._name = name or type(self).__name__

    @contextlib.contextmanager
    def _name_scope(self, name: Optional[str] = None):
        full_name = self.name if name is None else self.name + "/" + name
        with ops().name_scope(full_name) as scope:
            yield scope

    def _set_graph_parents(self, graph_parents) -> None:
        for i, t in enumerate(graph_parents):
            if t is None or not ops().is_tensor(t):
                raise ValueError("Graph parent item %d is not a Tensor; %s." % (i, t))
        self._graph_parents = list(graph_parents)

    # --- properties ---------------------------------------------------------------------
    @property
    def parameters(self) -> dict:
        """The constructor's arguments, as a dict."""
        return dict(self._parameters)

    @property
    def dtype(self):
        """The DType of the Tensors this operator handles."""
        return self._dtype

    @property
    def name(self) -> str:
        """The name given at construction."""
        return self._name

    @property
    def graph_parents(self) -> list:
        """(Deprecated) the Tensors given as graph parents."""
        return self._graph_parents

    @property
    def is_non_singular(self) -> Optional[bool]:
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> Optional[bool]:
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> Optional[bool]:
        return self._is_positive_definite

    @property
    def is_square(self) -> Optional[bool]:
        """True when the operator is square (from the hints or the static shape).

        Raises:
          ValueError: the hint said not square but the shape is square.
        """
        auto = self.domain_dimension == self.range_dimension
        if self._is_square_set_or_implied_by_hints is False and auto:
            raise ValueError("User set is_square hint to False, but the operator was "
                             "square.")
        if self._is_square_set_or_implied_by_hints is None:
            return auto
        return self._is_square_set_or_implied_by_hints

    # --- shapes -------------------------------------------------------------------------
    @abc.abstractmethod
    def _shape(self) -> TensorShape:
        raise NotImplementedError("_shape is not implemented.")

    def _shape_tensor(self):
        raise NotImplementedError("_shape_tensor is not implemented.")

    @property
    def shape(self) -> TensorShape:
        """The static TensorShape [B1, ..., Bb, M, N]."""
        return self._shape()

    def shape_tensor(self, name: str = "shape_tensor"):
        """The shape as an int32 Tensor (a constant when statically known)."""
        with self._name_scope(name):
            if self.shape.is_fully_defined():
                return util.shape_tensor(self.shape.as_list())
            return self._shape_tensor()

    @property
    def batch_shape(self) -> TensorShape:
        """The static batch shape [B1, ..., Bb]."""
        return self.shape[:-2]

    def batch_shape_tensor(self, name: str = "batch_shape_tensor"):
        """The batch shape as an int32 Tensor."""
        with self._name_scope(name):
            return self._batch_shape_tensor()

    def _batch_shape_tensor(self, shape=None):
        if self.batch_shape.is_fully_defined():
            return util.shape_tensor(self.batch_shape.as_list(), name="batch_shape")
        shape = self.shape_tensor() if shape is None else shape
        return shape[:-2]

    @property
    def tensor_rank(self) -> Optional[int]:
        """The static rank b + 2 (None if unknown)."""
        return self.shape.ndims

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor"):
        """The rank as an int32 Tensor."""
        with self._name_scope(name):
            if self.tensor_rank is not None:
                return ops().convert_to_tensor(self.tensor_rank)
            return ops().size(self.shape_tensor())

    @property
    def domain_dimension(self) -> Dimension:
        """The static N (columns) as a Dimension."""
        return _dim_at(self.shape, -1)

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor"):
        """N as an int32 Tensor."""
        with self._name_scope(name):
            return self._domain_dimension_tensor()

    def _domain_dimension_tensor(self, shape=None):
        return self._dimension_tensor(-1, shape)

    @property
    def range_dimension(self) -> Dimension:
        """The static M (rows) as a Dimension."""
        return _dim_at(self.shape, -2)

    def range_dimension_tensor(self, name: str = "range_dimension_tensor"):
        """M as an int32 Tensor."""
        with self._name_scope(name):
            return self._range_dimension_tensor()

    def _range_dimension_tensor(self, shape=None):
        return self._dimension_tensor(-2, shape)

    def _dimension_tensor(self, axis: int, shape=None):
        """Dimension `axis` of the shape: a constant when static, else read from `shape`
        (the operator's shape tensor when not given)."""
        value = _dim_at(self.shape, axis).value
        if value is not None:
            return ops().convert_to_tensor(value)
        shape = self.shape_tensor() if shape is None else shape
        return shape[axis]

    # --- assertions ---------------------------------------------------------------------
    def _max_condition_number_to_be_non_singular(self):
        """1 / (max(100, M, N) * eps): above it a matrix counts as singular."""
        t = ops()
        eps = float(np.finfo(self.dtype.real_dtype.as_numpy_dtype).eps)
        size = t.reduce_max([100.0,
                             t.cast(self.range_dimension_tensor(), _dt.float64),
                             t.cast(self.domain_dimension_tensor(), _dt.float64)])
        return t.cast(1.0 / (size * eps), self.dtype.real_dtype)

    def _assert_non_singular(self):
        t = ops()
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        s = t.linalg.svd(self.to_dense(), compute_uv=False)
        cond = t.reduce_max(s, axis=-1) / t.reduce_min(s, axis=-1)
        return t.debugging.assert_less(cond, self._max_condition_number_to_be_non_singular(),
                                       message="Singular matrix up to precision epsilon.")

    def assert_non_singular(self, name: str = "assert_non_singular"):
        """An op that fails when the operator is singular (condition number above
        1 / eps by default).

        Returns:
          An assertion Operation.
        """
        with self._name_scope(name):
            return self._assert_non_singular()

    def _assert_positive_definite(self):
        if self.is_self_adjoint:
            t = ops()
            diag = t.linalg.diag_part(t.linalg.cholesky(self.to_dense()))
            return t.debugging.assert_positive(t.math.real(diag),
                                               message="Matrix was not positive definite.")
        raise NotImplementedError("assert_positive_definite is not implemented.")

    def assert_positive_definite(self, name: str = "assert_positive_definite"):
        """An op that fails when the operator is not positive definite.

        Raises:
          NotImplementedError: the default needs the operator to be self-adjoint.
        """
        with self._name_scope(name):
            return self._assert_positive_definite()

    def _assert_self_adjoint(self):
        t = ops()
        dense = self.to_dense()
        return t.debugging.assert_equal(dense, t.linalg.adjoint(dense),
                                        message="Matrix was not equal to its adjoint.")

    def assert_self_adjoint(self, name: str = "assert_self_adjoint"):
        """An op that fails when the operator is not equal to its adjoint."""
        with self._name_scope(name):
            return self._assert_self_adjoint()

    def _check_input_dtype(self, arg) -> None:
        util.check_dtype(arg, self.dtype)

    # --- products and solves ------------------------------------------------------------
    @abc.abstractmethod
    def _matmul(self, x, adjoint: bool = False, adjoint_arg: bool = False):
        raise NotImplementedError("_matmul is not implemented.")

    def _check_operator_pair(self, left, right, what: str) -> None:
        m, n = right.range_dimension.value, left.domain_dimension.value
        if m is not None and n is not None and m != n:
            raise ValueError("Operators are incompatible. Expected `%s` to have dimension "
                             "%d but got %d." % (what, n, m))

    def matmul(self, x, adjoint: bool = False, adjoint_arg: bool = False,
               name: str = "matmul"):
        """Transforms the [batch] matrix `x` with left multiplication: x --> A x.

        Args:
          x: a Tensor [..., N, R] of this operator's dtype (or a LinearOperator, giving
            the composed operator).
          adjoint: use A^H instead of A.
          adjoint_arg: use x^H instead of x.
          name: name scope.

        Returns:
          A Tensor [..., M, R] (batch shapes broadcast), or a LinearOperator.

        Raises:
          TypeError: `x` has another dtype.
          ValueError: the inner dimensions are statically incompatible.
        """
        return self._apply(x, adjoint, adjoint_arg, name, "x", -2 if adjoint else -1,
                           lambda left, right: left._linop_matmul(left, right),
                           self._matmul)

    def _apply(self, x, adjoint: bool, adjoint_arg: bool, name: str, what: str,
               own_axis: int, combine, dense):
        """matmul's and solve's shared part: an operator argument gives
        `combine(left, right)` of the (adjointed) operators, a tensor `dense(x, ...)`
        after the dtype and the inner dimension (this operator's `own_axis`) checks."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            self._check_operator_pair(left, right, what)
            with self._name_scope(name):
                return combine(left, right)
        with self._name_scope(name):
            x = ops().convert_to_tensor(x, name=what)
            self._check_input_dtype(x)
            _dim_at(self.shape, own_axis).assert_is_compatible_with(
                _dim_at(x.shape, -1 if adjoint_arg else -2))
            return dense(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _linop_matmul(self, left: "LinearOperator", right: "LinearOperator"
                      ) -> "LinearOperator":
        """left @ right as an operator; subclasses return a cheaper structure."""
        if getattr(right, "_is_identity", False):
            return left
        if getattr(right, "_is_zeros", False):
            if not right.is_square or not left.is_square:
                raise ValueError("Matmul with non-square `LinearOperator`s or non-square "
                                 "`LinearOperatorZeros` not supported at this time.")
            return right
        from tensorweave.ops.linalg.linear_operator_combine import (
            LinearOperatorComposition)
        return LinearOperatorComposition([left, right], **_product_hints(left, right))

    def __matmul__(self, other):
        return self.matmul(other)

    def _matvec(self, x, adjoint: bool = False):
        t = ops()
        return t.squeeze(self.matmul(t.expand_dims(x, -1), adjoint=adjoint), axis=[-1])

    def matvec(self, x, adjoint: bool = False, name: str = "matvec"):
        """Transforms the [batch] vector `x` [..., N] with left multiplication.

        Returns:
          A Tensor [..., M].

        Raises:
          TypeError: `x` has another dtype.
          ValueError: the dimensions are statically incompatible.
        """
        with self._name_scope(name):
            x = ops().convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            _dim_at(self.shape, -2 if adjoint else -1).assert_is_compatible_with(
                _dim_at(x.shape, -1))
            return self._matvec(x, adjoint=adjoint)

    def _can_use_cholesky(self) -> bool:
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def _dense_solve(self, rhs, adjoint: bool = False, adjoint_arg: bool = False):
        if self.is_square is False:
            raise NotImplementedError("Solve is not yet implemented for non-square "
                                      "operators.")
        t = ops()
        rhs = util.adjoint_if(rhs, adjoint_arg)
        if self._can_use_cholesky():
            chol, rhs = util.broadcast_matrix_batch_dims(
                [t.linalg.cholesky(self.to_dense()), rhs])
            return t.linalg.cholesky_solve(chol, rhs)
        return util.matrix_solve_with_broadcast(self.to_dense(), rhs, adjoint=adjoint)

    def _solve(self, rhs, adjoint: bool = False, adjoint_arg: bool = False):
        return self._dense_solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _check_solvable(self) -> None:
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that "
                                      "is expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that "
                                      "is expected to not be square.")

    def solve(self, rhs, adjoint: bool = False, adjoint_arg: bool = False,
              name: str = "solve"):
        """Solves A X = rhs (or A^H X = rhs) for X.

        Args:
          rhs: a Tensor [..., M, R] (or a LinearOperator, giving A^-1 rhs as one).
          adjoint: solve with A^H.
          adjoint_arg: use rhs^H.
          name: name scope.

        Returns:
          A Tensor [..., N, R].

        Raises:
          NotImplementedError: the hints say singular or not square.
          TypeError: `rhs` has another dtype.
          ValueError: the dimensions are statically incompatible.
        """
        self._check_solvable()
        return self._apply(rhs, adjoint, adjoint_arg, name, "rhs", -1 if adjoint else -2,
                           lambda left, right: left._linop_solve(left, right),
                           self._solve)

    def _linop_solve(self, left: "LinearOperator", right: "LinearOperator"
                     ) -> "LinearOperator":
        if getattr(right, "_is_identity", False):
            return left.inverse()
        from tensorweave.ops.linalg.linear_operator_combine import (
            LinearOperatorComposition, LinearOperatorInversion)
        return LinearOperatorComposition([LinearOperatorInversion(left), right],
                                         **_product_hints(left, right))

    def _solvevec(self, rhs, adjoint: bool = False):
        t = ops()
        return t.squeeze(self.solve(t.expand_dims(rhs, -1), adjoint=adjoint), axis=[-1])

    def solvevec(self, rhs, adjoint: bool = False, name: str = "solve"):
        """Solves A x = rhs for the [batch] vector x.

        Returns:
          A Tensor [..., N].

        Raises:
          NotImplementedError: the hints say singular or not square.
          TypeError, ValueError: as `solve`.
        """
        self._check_solvable()
        with self._name_scope(name):
            rhs = ops().convert_to_tensor(rhs, name="rhs")
            self._check_input_dtype(rhs)
            _dim_at(self.shape, -1 if adjoint else -2).assert_is_compatible_with(
                _dim_at(rhs.shape, -1))
            return self._solvevec(rhs, adjoint=adjoint)

    # --- scalar summaries ---------------------------------------------------------------
    def _check_square_for(self, what: str) -> None:
        if self.is_square is False:
            raise NotImplementedError("%s not implemented for an operator that is "
                                      "expected to not be square." % what)

    def _determinant(self):
        t = ops()
        if self._can_use_cholesky():
            return t.exp(self.log_abs_determinant())
        return t.linalg.det(self.to_dense())

    def determinant(self, name: str = "det"):
        """det(A) for every batch member.

        Returns:
          A Tensor [B1, ..., Bb] of this operator's dtype.

        Raises:
          NotImplementedError: the operator is hinted not square.
        """
        self._check_square_for("Determinant")
        with self._name_scope(name):
            return self._determinant()

    def _log_abs_determinant(self):
        t = ops()
        if self._can_use_cholesky():
            diag = t.linalg.diag_part(t.linalg.cholesky(self.to_dense()))
            return 2.0 * t.reduce_sum(t.log(diag), axis=[-1])
        _, log_abs_det = t.linalg.slogdet(self.to_dense())
        return log_abs_det

    def log_abs_determinant(self, name: str = "log_abs_det"):
        """log|det(A)| for every batch member.

        Returns:
          A Tensor [B1, ..., Bb] of this operator's dtype.

        Raises:
          NotImplementedError: the operator is hinted not square.
        """
        self._check_square_for("Determinant")
        with self._name_scope(name):
            return self._log_abs_determinant()

    def _trace(self):
        return ops().reduce_sum(self.diag_part(), axis=-1)

    def trace(self, name: str = "trace"):
        """The sum of the main diagonal, [B1, ..., Bb]."""
        with self._name_scope(name):
            return self._trace()

    def _diag_part(self):
        return ops().linalg.diag_part(self.to_dense())

    def diag_part(self, name: str = "diag_part"):
        """The main diagonal, [B1, ..., Bb, min(M, N)]."""
        with self._name_scope(name):
            return self._diag_part()

    def _to_dense(self):
        t = ops()
        if self.batch_shape.is_fully_defined():
            batch_shape = self.batch_shape.as_list()
        else:
            batch_shape = self.batch_shape_tensor()
        n = self.domain_dimension.value
        if n is None:
            n = self.domain_dimension_tensor()
        eye = t.eye(num_rows=n, batch_shape=batch_shape, dtype=self.dtype)
        return self.matmul(eye)

    def to_dense(self, name: str = "to_dense"):
        """The operator as a dense Tensor [B1, ..., Bb, M, N]."""
        with self._name_scope(name):
            return self._to_dense()

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def add_to_tensor(self, x, name: str = "add_to_tensor"):
        """A + x for a Tensor `x` of the operator's shape.

        Raises:
          TypeError: `x` has another dtype.
        """
        with self._name_scope(name):
            x = ops().convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            return self._add_to_tensor(x)

    def _eigvals(self):
        return ops().linalg.eigvalsh(self.to_dense())

    def eigvals(self, name: str = "eigvals"):
        """The eigenvalues, [B1, ..., Bb, N] (self-adjoint operators only, as in TF).

        Raises:
          NotImplementedError: the operator is not hinted self-adjoint.
        """
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        with self._name_scope(name):
            return self._eigvals()

    def _cond(self):
        t = ops()
        if not self.is_self_adjoint:
            vals = t.linalg.svd(self.to_dense(), compute_uv=False)
        else:
            vals = t.abs(self._eigvals())
        return t.reduce_max(vals, axis=-1) / t.reduce_min(vals, axis=-1)

    def cond(self, name: str = "cond"):
        """The condition number (ratio of largest to smallest singular value)."""
        with self._name_scope(name):
            return self._cond()

    # --- derived operators --------------------------------------------------------------
    def adjoint(self, name: str = "adjoint") -> "LinearOperator":
        """The operator's adjoint A^H (itself when hinted self-adjoint)."""
        if self.is_self_adjoint is True:
            return self
        with self._name_scope(name):
            return self._linop_adjoint()

    H = property(adjoint, None)

    def _linop_adjoint(self) -> "LinearOperator":
        from tensorweave.ops.linalg.linear_operator_combine import LinearOperatorAdjoint
        return LinearOperatorAdjoint(self, **self._same_hints())

    def inverse(self, name: str = "inverse") -> "LinearOperator":
        """The operator's inverse A^-1 (a LinearOperatorInversion by default).

        Raises:
          ValueError: the operator is hinted not square or singular.
        """
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non "
                             "square matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a "
                             "singular matrix.")
        with self._name_scope(name):
            return self._linop_inverse()

    def _linop_inverse(self) -> "LinearOperator":
        from tensorweave.ops.linalg.linear_operator_combine import LinearOperatorInversion
        return LinearOperatorInversion(self, **self._same_hints())

    def cholesky(self, name: str = "cholesky") -> "LinearOperator":
        """The lower-triangular Cholesky factor L (A = L L^H) as an operator.

        Raises:
          ValueError: the operator is not hinted self-adjoint positive definite.
        """
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive "
                             "definite self adjoint matrix.")
        with self._name_scope(name):
            return self._linop_cholesky()

    def _linop_cholesky(self) -> "LinearOperator":
        from tensorweave.ops.linalg.linear_operator_matrix import (
            LinearOperatorLowerTriangular)
        return LinearOperatorLowerTriangular(ops().linalg.cholesky(self.to_dense()),
                                             is_non_singular=True, is_self_adjoint=False,
                                             is_square=True)

    def _same_hints(self) -> dict:
        return dict(is_non_singular=self.is_non_singular,
                    is_self_adjoint=self.is_self_adjoint,
                    is_positive_definite=self.is_positive_definite,
                    is_square=self.is_square)

    def __repr__(self):
        if not hasattr(self, "_name"):  # a constructor that raised before naming it
            return "<tf.linalg.%s>" % type(self).__name__
        return "<tf.linalg.%s '%s' shape=%s dtype=%s>" % (
            type(self).__name__, self.name, self.shape,
            self.dtype.name if self.dtype else None)


def _product_hints(left: LinearOperator, right: LinearOperator) -> dict:
    """Hints of left @ right (or left^-1 @ right) known from the factors' hints."""
    is_square = util.is_square_product(left, right)
    hints = dict(is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=is_square)
    if is_square:
        hints["is_non_singular"] = util.combined_non_singular_hint(left, right)
    elif is_square is False:
        hints.update(is_non_singular=False, is_self_adjoint=False,
                     is_positive_definite=False)
    return hints
