"""Operators built from other operators: the adjoint A^H, the inverse A^-1, the
composition A1 A2 ... Ak, and the low-rank update L + U D V^H.

None of them forms a matrix: each method is expressed through the methods of the
operators it wraps (a product through solves, a solve through products, and the
low-rank update's solve and determinant through the Woodbury identity and the matrix
determinant lemma, which need only solves with L and an r x r capacitance matrix).
"""
from __future__ import annotations

from typing import Optional, Sequence

from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.linalg import linear_operator_util as util
from tensorweave.ops.linalg.linear_operator import LinearOperator
from tensorweave.ops.linalg.linear_operator_identity import LinearOperatorIdentity
from tensorweave.ops.linalg.linear_operator_matrix import LinearOperatorDiag
from tensorweave.ops.linalg.linear_operator_util import ops

_HINTS = ("is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square")


def _inherited_hints(operator: LinearOperator, relation: str, **provided) -> dict:
    """Hints of an operator derived from `operator` by `relation` ("adjoint", "inverse"),
    which shares all four of its hints; the provided ones may not contradict them."""
    words = {"is_non_singular": "non-singular", "is_self_adjoint": "self-adjoint",
             "is_positive_definite": "positive-definite", "is_square": "square"}
    return {hint: util.use_operator_or_provided_hint_unless_contradicting(
        operator, hint, provided[hint],
        "An operator is %s if and only if its %s is %s." % (words[hint], relation,
                                                              words[hint]))
        for hint in _HINTS}


def _conj(x, dtype):
    return ops().math.conj(x) if dtype.is_complex else x


@tf_export("linalg.LinearOperatorAdjoint")
class LinearOperatorAdjoint(LinearOperator):
    """`LinearOperator` representing the adjoint A^H of another operator A."""

    def __init__(self, operator: LinearOperator, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None):
        """Initializes A^H.

        Raises:
          ValueError: a hint contradicts the operator's.
        """
        parameters = dict(operator=operator, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        self._operator = operator
        hints = _inherited_hints(operator, "adjoint", is_non_singular=is_non_singular,
                                 is_self_adjoint=is_self_adjoint,
                                 is_positive_definite=is_positive_definite,
                                 is_square=is_square)
        name = name or operator.name + "_adjoint"
        with ops().name_scope(name):
            super().__init__(dtype=operator.dtype, parameters=parameters, name=name,
                             **hints)

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _shape(self) -> TensorShape:
        s = self._operator.shape
        if s.ndims is None:
            return s
        return s[:-2].concatenate([s[-1], s[-2]])

    def _shape_tensor(self):
        t = ops()
        s = self._operator.shape_tensor()
        return t.concat([s[:-2], s[-1:], s[-2:-1]], 0)

    def _assert_non_singular(self):
        return self._operator.assert_non_singular()

    def _assert_positive_definite(self):
        return self._operator.assert_positive_definite()

    def _assert_self_adjoint(self):
        return self._operator.assert_self_adjoint()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return self._operator.matvec(x, adjoint=not adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False):
        return self._operator.solvevec(rhs, adjoint=not adjoint)

    def _determinant(self):
        return _conj(self._operator.determinant(), self.dtype)

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _trace(self):
        return _conj(self._operator.trace(), self.dtype)

    def _diag_part(self):
        return _conj(self._operator.diag_part(), self.dtype)

    def _to_dense(self):
        return ops().linalg.adjoint(self._operator.to_dense())

    def _eigvals(self):
        return _conj(self._operator.eigvals(), self.dtype)

    def _cond(self):
        return self._operator.cond()

    def _linop_adjoint(self) -> LinearOperator:
        return self._operator


@tf_export("linalg.LinearOperatorInversion")
class LinearOperatorInversion(LinearOperator):
    """`LinearOperator` representing the inverse A^-1 of a square non-singular operator:
    its products are A's solves and its solves A's products."""

    def __init__(self, operator: LinearOperator, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None):
        """Initializes A^-1.

        Raises:
          ValueError: `operator` is hinted singular or not square, or a hint
            contradicts the operator's.
        """
        parameters = dict(operator=operator, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        self._operator = operator
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError("operator and supplied hints must have is_non_singular "
                             "equal to True or None. Found %s, %s"
                             % (operator.is_non_singular, is_non_singular))
        if operator.is_square is False or is_square is False:
            raise ValueError("operator and supplied hints must have is_square equal to "
                             "True or None. Found %s, %s" % (operator.is_square, is_square))
        hints = _inherited_hints(operator, "inverse", is_non_singular=is_non_singular,
                                 is_self_adjoint=is_self_adjoint,
                                 is_positive_definite=is_positive_definite,
                                 is_square=is_square)
        name = name or operator.name + "_inv"
        with ops().name_scope(name):
            super().__init__(dtype=operator.dtype, parameters=parameters, name=name,
                             **hints)

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _shape(self) -> TensorShape:
        return self._operator.shape

    def _shape_tensor(self):
        return self._operator.shape_tensor()

    def _assert_non_singular(self):
        return self._operator.assert_non_singular()

    def _assert_positive_definite(self):
        return self._operator.assert_positive_definite()

    def _assert_self_adjoint(self):
        return self._operator.assert_self_adjoint()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return self._operator.solvevec(x, adjoint=adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False):
        return self._operator.matvec(rhs, adjoint=adjoint)

    def _determinant(self):
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self):
        return -1.0 * self._operator.log_abs_determinant()

    def _linop_inverse(self) -> LinearOperator:
        return self._operator


@tf_export("linalg.LinearOperatorComposition")
class LinearOperatorComposition(LinearOperator):
    """`LinearOperator` representing the product A1 A2 ... Ak of operators (batch shapes
    broadcast)."""

    def __init__(self, operators: Sequence[LinearOperator],
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None):
        """Initializes the composition of `operators` (applied right to left).

        Raises:
          TypeError: the operators have different dtypes.
          ValueError: no operators, statically incompatible inner dimensions, or a
            hint contradicting non-singular factors.
        """
        parameters = dict(operators=operators, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        operators = util.operator_list(operators,
                                       "Expected a non-empty list of operators. Found: %s")
        self._operators = operators
        util.check_same_dtype(operators)
        dtype = operators[0].dtype
        for left, right in zip(operators[:-1], operators[1:]):
            n, m = left.domain_dimension.value, right.range_dimension.value
            if n is not None and m is not None and n != m:
                raise ValueError("Operators are incompatible: %s has domain dimension %d "
                                 "but %s has range dimension %d."
                                 % (left.name, n, right.name, m))
        is_non_singular = util.all_hint(
            operators, "is_non_singular", is_non_singular,
            "The composition of non-singular operators is always non-singular.")
        name = name or "_o_".join(o.name for o in operators)
        with ops().name_scope(name):
            super().__init__(dtype=dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite,
                             is_square=is_square, parameters=parameters, name=name)

    @property
    def operators(self):
        return self._operators

    def _shape(self) -> TensorShape:
        first, last = self._operators[0], self._operators[-1]
        batch = util.broadcast_batch_shape([o.batch_shape for o in self._operators])
        return batch.concatenate([first.range_dimension, last.domain_dimension])

    def _shape_tensor(self):
        t = ops()
        batch = util.broadcast_batch_shape_tensor(
            [o.batch_shape_tensor() for o in self._operators])
        return t.concat([batch, t.stack([self._operators[0].range_dimension_tensor(),
                                         self._operators[-1].domain_dimension_tensor()])],
                        0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        # A x = A1 (A2 (... (Ak x))); A^H x = Ak^H (... (A1^H x)).
        order = self._operators if adjoint else list(reversed(self._operators))
        y = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for o in order[1:]:
            y = o.matmul(y, adjoint=adjoint)
        return y

    def _all_square(self) -> bool:
        return all(o.is_square for o in self._operators)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if not self._all_square():
            return super()._solve(rhs, adjoint, adjoint_arg)
        # A^-1 = Ak^-1 ... A1^-1; A^-H = A1^-H ... Ak^-H.
        order = list(reversed(self._operators)) if adjoint else self._operators
        y = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for o in order[1:]:
            y = o.solve(y, adjoint=adjoint)
        return y

    def _determinant(self):
        if not self._all_square():
            return super()._determinant()
        det = self._operators[0].determinant()
        for o in self._operators[1:]:
            det = det * o.determinant()
        return det

    def _log_abs_determinant(self):
        if not self._all_square():
            return super()._log_abs_determinant()
        lad = self._operators[0].log_abs_determinant()
        for o in self._operators[1:]:
            lad = lad + o.log_abs_determinant()
        return lad

    def _assert_non_singular(self):
        if self._all_square():
            return ops().group(*[o.assert_non_singular() for o in self._operators])
        return super()._assert_non_singular()


@tf_export("linalg.LinearOperatorLowRankUpdate")
class LinearOperatorLowRankUpdate(LinearOperator):
    """`LinearOperator` representing L + U D V^H: a base operator L [..., M, N], U
    [..., M, K], V [..., N, K] (default U) and D = diag(diag_update) [..., K] (default
    the identity).

    Solves use the Woodbury identity and determinants the matrix determinant lemma,
    with the K x K capacitance C = D^-1 + V^H L^-1 U; so they cost solves with L plus
    O(K^3), never O(N^3). When L is self-adjoint positive definite, D positive and V = U,
    C is self-adjoint positive definite and factored by Cholesky.
    """

    def __init__(self, base_operator: LinearOperator, u, diag_update=None, v=None,
                 is_diag_update_positive: Optional[bool] = None,
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None,
                 name: str = "LinearOperatorLowRankUpdate"):
        """Initializes L + U D V^H.

        Raises:
          ValueError: hints contradicting what the arguments imply, or statically
            incompatible shapes.
        """
        parameters = dict(base_operator=base_operator, u=u, diag_update=diag_update, v=v,
                          is_diag_update_positive=is_diag_update_positive,
                          is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        dtype = base_operator.dtype
        if diag_update is None:
            if is_diag_update_positive is False:
                raise ValueError("Default diagonal is the identity, which is positive.  "
                                 "However, user set 'is_diag_update_positive' to False.")
            is_diag_update_positive = True
        self._use_cholesky = bool(base_operator.is_positive_definite
                                  and base_operator.is_self_adjoint
                                  and is_diag_update_positive and v is None)
        if base_operator.is_self_adjoint and v is None and not dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A = L + UDU^H, with L self-adjoint and D real diagonal.  "
                                 "Since UDU^H is self-adjoint, this must be a self-adjoint "
                                 "operator.")
            is_self_adjoint = True
        if self._use_cholesky:
            if (is_positive_definite is False or is_self_adjoint is False
                    or is_non_singular is False):
                raise ValueError("Arguments imply this is self-adjoint positive-definite "
                                 "operator.")
            is_positive_definite = True
            is_self_adjoint = True
        with ops().name_scope(name):
            self._u = util.convert_nonref_to_tensor(u, name="u")
            self._v = self._u if v is None else util.convert_nonref_to_tensor(v, name="v")
            self._diag_update = util.convert_nonref_to_tensor(diag_update,
                                                              name="diag_update")
            self._base_operator = base_operator
            self._is_diag_update_positive = is_diag_update_positive
            super().__init__(dtype=dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite,
                             is_square=is_square, parameters=parameters, name=name)
            if self._diag_update is not None:
                self._diag_operator = LinearOperatorDiag(
                    self._diag_update, is_positive_definite=is_diag_update_positive)
            else:
                r = self._u.shape[-1].value
                self._diag_operator = LinearOperatorIdentity(
                    r if r is not None else ops().shape(self._u)[-1], dtype=dtype)
            self._check_shapes()

    def _check_shapes(self) -> None:
        for arg in (self._u, self._v) + ((self._diag_update,) if self._diag_update
                                         is not None else ()):
            util.check_dtype(arg, self.dtype)
        uv = util.broadcast_batch_shape([self._u.shape, self._v.shape])
        batch = util.broadcast_batch_shape([self._base_operator.batch_shape, uv[:-2]])
        self._base_operator.domain_dimension.assert_is_compatible_with(uv[-2])
        if self._diag_update is not None:
            uv[-1].assert_is_compatible_with(self._diag_update.shape[-1])
            util.broadcast_batch_shape([batch, self._diag_update.shape[:-1]])

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._v

    @property
    def diag_update(self):
        return self._diag_update

    @property
    def is_diag_update_positive(self) -> Optional[bool]:
        return self._is_diag_update_positive

    @property
    def diag_operator(self) -> LinearOperator:
        return self._diag_operator

    @property
    def base_operator(self) -> LinearOperator:
        return self._base_operator

    def _shape(self) -> TensorShape:
        batch = util.broadcast_batch_shape([
            self._base_operator.batch_shape, self._diag_operator.batch_shape,
            self._u.shape[:-2], self._v.shape[:-2]])
        return batch.concatenate(self._base_operator.shape[-2:])

    def _shape_tensor(self):
        t = ops()
        batch = util.broadcast_batch_shape_tensor([
            self._base_operator.batch_shape_tensor(),
            self._diag_operator.batch_shape_tensor(),
            t.shape(self._u)[:-2], t.shape(self._v)[:-2]])
        return t.concat([batch, self._base_operator.shape_tensor()[-2:]], 0)

    def _assert_self_adjoint(self):
        if self._u is self._v and self._diag_update is None:
            return self._base_operator.assert_self_adjoint()
        return super()._assert_self_adjoint()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        # A x = L x + U (D (V^H x));  A^H x = L^H x + V (D^H (U^H x)).
        t = ops()
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        leading = self._base_operator.matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        rh_x = t.matmul(right, x, adjoint_a=True, adjoint_b=adjoint_arg)
        return leading + t.matmul(left, self._diag_operator.matmul(rh_x, adjoint=adjoint))

    def _capacitance(self):
        """C = D^-1 + V^H L^-1 U, [..., K, K]."""
        t = ops()
        vh_linv_u = t.matmul(self._v, self._base_operator.solve(self._u), adjoint_a=True)
        return self._diag_operator.inverse().add_to_tensor(vh_linv_u)

    def _determinant(self):
        # det(L + U D V^H) = det(C) det(D) det(L) (matrix determinant lemma).
        t = ops()
        if self.is_positive_definite:
            return t.exp(self.log_abs_determinant())
        return (t.linalg.det(self._capacitance()) * self._diag_operator.determinant()
                * self._base_operator.determinant())

    def _log_abs_determinant(self):
        t = ops()
        lad_d = self._diag_operator.log_abs_determinant()
        lad_l = self._base_operator.log_abs_determinant()
        if self._use_cholesky:
            chol_diag = t.linalg.diag_part(t.linalg.cholesky(self._capacitance()))
            lad_c = 2.0 * t.reduce_sum(t.log(chol_diag), axis=[-1])
        else:
            _, lad_c = t.linalg.slogdet(self._capacitance())
        return lad_c + lad_d + lad_l

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        # Woodbury: A^-1 r = L^-1 r - L^-1 U C^-1 V^H L^-1 r; for A^H = L^H + V D^H U^H
        # the roles of U and V swap and the capacitance becomes C^H.
        t = ops()
        if self._base_operator.is_non_singular is False:
            raise ValueError("Solve not implemented unless this is a perturbation of a "
                             "non-singular LinearOperator.")
        base = self._base_operator
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        linv_rhs = base.solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        rh_linv_rhs = t.matmul(right, linv_rhs, adjoint_a=True)
        capacitance = self._capacitance()
        if self._use_cholesky:
            chol, rh_linv_rhs = util.broadcast_matrix_batch_dims(
                [t.linalg.cholesky(capacitance), rh_linv_rhs])
            z = t.linalg.cholesky_solve(chol, rh_linv_rhs)
        else:
            z = util.matrix_solve_with_broadcast(capacitance, rh_linv_rhs,
                                                 adjoint=adjoint)
        return linv_rhs - base.solve(t.matmul(left, z), adjoint=adjoint)

    def _diag_part(self):
        # diag(U D V^H)_i = sum_k U_ik d_k conj(V_ik).
        t = ops()
        product = self._u * t.math.conj(self._v) if self.dtype.is_complex else (
            self._u * self._v)
        if self._diag_update is not None:
            product = product * t.expand_dims(self._diag_update, -2)
        return t.reduce_sum(product, axis=-1) + self._base_operator.diag_part()
