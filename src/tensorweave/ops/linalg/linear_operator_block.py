"""Operators assembled from blocks: block diagonal, block lower triangular, and Kronecker
products.

Each acts block by block and never forms the full matrix: a block-diagonal product or
solve splits the argument and applies each block; a block lower-triangular solve is a
block forward (or, for the adjoint, backward) substitution; a Kronecker product
A1 x ... x Ak applies each factor along its own axis of the reshaped argument, so
products, solves and determinants cost what they cost for the small factors.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import Dimension, TensorShape
from tensorweave.ops.linalg import linear_operator_util as util
from tensorweave.ops.linalg.linear_operator import LinearOperator
from tensorweave.ops.linalg.linear_operator_util import ops


_HINTS = ("is_non_singular", "is_self_adjoint", "is_positive_definite")


def _from_operators(operators, provided: dict, messages: Sequence[str], joiner: str,
                    empty_message: str, name: Optional[str]):
    """What the direct sum and the Kronecker product check alike: (the operators as a
    non-empty list of one dtype, the three hints that every operator passes on to the
    result, each with TF's message for one given as False, the default name joining the
    operators' names)."""
    operators = util.operator_list(operators, empty_message)
    util.check_same_dtype(operators)
    hints = {hint: util.all_hint(operators, hint, provided[hint], message)
             for hint, message in zip(_HINTS, messages)}
    return operators, hints, name or joiner.join(o.name for o in operators)


def _sum_dims(dims: Sequence[Dimension]) -> Dimension:
    values = [d.value for d in dims]
    return Dimension(None if None in values else sum(values))


def _split_sizes(dims: Sequence[Dimension], dim_tensors):
    """Split sizes: the static dimensions when all are known, else Tensors."""
    values = [d.value for d in dims]
    if None not in values:
        return values
    return ops().stack([fn() for fn in dim_tensors])


def _concat_broadcast(tensors: List, axis: int):
    """Concatenation along `axis` after broadcasting the matrices' batch dimensions."""
    return ops().concat(util.broadcast_matrix_batch_dims(tensors), axis=axis)


def _dense_from_blocks(rows: List[List], row_dims, col_dims, batch, dtype):
    """The dense matrix of a grid of dense blocks; None marks a zero block."""
    t = ops()
    dense_rows = []
    for i, row in enumerate(rows):
        blocks = []
        for j, block in enumerate(row):
            if block is None:
                block = t.zeros(t.concat([batch, t.stack([row_dims[i], col_dims[j]])], 0),
                                dtype=dtype)
            blocks.append(block)
        dense_rows.append(blocks)
    flat = util.broadcast_matrix_batch_dims(
        [b for row in dense_rows for b in row] + [t.zeros(t.concat([batch, [0, 0]], 0),
                                                          dtype=dtype)])
    width = len(col_dims)
    return t.concat([t.concat(flat[i * width:(i + 1) * width], axis=-1)
                     for i in range(len(rows))], axis=-2)


class _DiagonalBlocks:
    """What a block-triangular operator takes from its diagonal blocks alone: the
    determinant is their product, the trace their sum, the diagonal (and the
    eigenvalues) theirs side by side."""

    _diagonal_operators: list

    def _determinant(self):
        det = self._diagonal_operators[0].determinant()
        for o in self._diagonal_operators[1:]:
            det = det * o.determinant()
        return det

    def _log_abs_determinant(self):
        lad = self._diagonal_operators[0].log_abs_determinant()
        for o in self._diagonal_operators[1:]:
            lad = lad + o.log_abs_determinant()
        return lad

    def _trace(self):
        tr = self._diagonal_operators[0].trace()
        for o in self._diagonal_operators[1:]:
            tr = tr + o.trace()
        return tr

    def _side_by_side(self, part: str):
        t = ops()
        parts = [t.expand_dims(getattr(o, part)(), -2) for o in self._diagonal_operators]
        return t.squeeze(_concat_broadcast(parts, axis=-1), axis=[-2])

    def _diag_part(self):
        return self._side_by_side("diag_part")

    def _eigvals(self):
        return self._side_by_side("eigvals")


@tf_export("linalg.LinearOperatorBlockDiag")
class LinearOperatorBlockDiag(_DiagonalBlocks, LinearOperator):
    """`LinearOperator` acting like the block-diagonal matrix diag(A1, ..., Ak)."""

    def __init__(self, operators: Sequence[LinearOperator],
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: Optional[str] = None):
        """Initializes diag(operators).

        Raises:
          TypeError: the operators have different dtypes.
          ValueError: no operators, or hints contradicting the blocks'.
        """
        parameters = dict(operators=operators, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        provided = dict(is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                        is_positive_definite=is_positive_definite)
        operators, hints, name = _from_operators(
            operators, provided,
            ("The direct sum of non-singular operators is always non-singular.",
             "The direct sum of self-adjoint operators is always self-adjoint.",
             "The direct sum of positive definite operators is always positive definite."),
            "_ds_", "Expected a non-empty list of operators. Found: %s", name)
        self._operators = self._diagonal_operators = operators
        with ops().name_scope(name):
            super().__init__(dtype=operators[0].dtype, is_square=is_square,
                             parameters=parameters, name=name, **hints)

    @property
    def operators(self) -> List[LinearOperator]:
        return self._operators

    def _shape(self) -> TensorShape:
        batch = util.broadcast_batch_shape([o.batch_shape for o in self._operators])
        return batch.concatenate([_sum_dims([o.range_dimension for o in self._operators]),
                                  _sum_dims([o.domain_dimension for o in self._operators])])

    def _shape_tensor(self):
        t = ops()
        batch = util.broadcast_batch_shape_tensor(
            [o.batch_shape_tensor() for o in self._operators])
        rows = t.add_n([o.range_dimension_tensor() for o in self._operators])
        cols = t.add_n([o.domain_dimension_tensor() for o in self._operators])
        return t.concat([batch, t.stack([rows, cols])], 0)

    def _block_sizes(self, domain: bool):
        ops_ = self._operators
        if domain:
            return _split_sizes([o.domain_dimension for o in ops_],
                                [o.domain_dimension_tensor for o in ops_])
        return _split_sizes([o.range_dimension for o in ops_],
                            [o.range_dimension_tensor for o in ops_])

    def _blockwise(self, x, adjoint: bool, adjoint_arg: bool, method: str):
        """Applies each block's `method` (matmul or solve) to its slice of x."""
        t = ops()
        # A product reads x by the blocks' domain dimensions (range for the adjoint); a
        # solve the other way round.
        by_domain = (method == "matmul") != adjoint
        sizes = self._block_sizes(domain=by_domain)
        parts = t.split(x, sizes, axis=-1 if adjoint_arg else -2)
        results = [getattr(o, method)(p, adjoint=adjoint, adjoint_arg=adjoint_arg)
                   for o, p in zip(self._operators, parts)]
        return _concat_broadcast(results, axis=-2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._blockwise(x, adjoint, adjoint_arg, "matmul")

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._blockwise(rhs, adjoint, adjoint_arg, "solve")

    def _to_dense(self):
        ops_ = self._operators
        rows = [[o.to_dense() if i == j else None for j, o in enumerate(ops_)]
                for i in range(len(ops_))]
        return _dense_from_blocks(rows, [o.range_dimension_tensor() for o in ops_],
                                  [o.domain_dimension_tensor() for o in ops_],
                                  self.batch_shape_tensor(), self.dtype)

    def _assert_non_singular(self):
        return ops().group(*[o.assert_non_singular() for o in self._operators])

    def _assert_positive_definite(self):
        return ops().group(*[o.assert_positive_definite() for o in self._operators])

    def _assert_self_adjoint(self):
        return ops().group(*[o.assert_self_adjoint() for o in self._operators])

    def _linop_adjoint(self):
        return LinearOperatorBlockDiag([o.adjoint() for o in self._operators],
                                       **self._same_hints())

    def _linop_inverse(self):
        return LinearOperatorBlockDiag([o.inverse() for o in self._operators],
                                       **self._same_hints())

    def _linop_cholesky(self):
        return LinearOperatorBlockDiag([o.cholesky() for o in self._operators],
                                       is_non_singular=True, is_self_adjoint=None,
                                       is_square=True)


@tf_export("linalg.LinearOperatorBlockLowerTriangular")
class LinearOperatorBlockLowerTriangular(_DiagonalBlocks, LinearOperator):
    """`LinearOperator` acting like a square block lower-triangular matrix.

    `operators` is a list of rows; row i holds the i + 1 blocks L_i0 ... L_ii, the
    diagonal blocks L_ii square.
    """

    def __init__(self, operators: Sequence[Sequence[LinearOperator]],
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None,
                 name: str = "LinearOperatorBlockLowerTriangular"):
        """Initializes the operator from its rows of blocks.

        Raises:
          TypeError: the blocks have different dtypes.
          ValueError: no rows, a row of the wrong length, statically incompatible block
            dimensions, or contradictory hints.
        """
        parameters = dict(operators=operators, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        rows = [list(row) for row in operators]
        if not rows:
            raise ValueError("Argument `operators` must be a list of >=1 operators. "
                             "Received: %s." % operators)
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError("Argument `operators[%d]` must contain %d blocks. "
                                 "Received: %d blocks." % (i, i + 1, len(row)))
        self._operators = rows
        self._diagonal_operators = [row[i] for i, row in enumerate(rows)]
        util.check_same_dtype([o for row in rows for o in row])
        self._check_block_dims()
        is_non_singular = util.all_hint(
            self._diagonal_operators, "is_non_singular", is_non_singular,
            "A blockwise lower-triangular operator with non-singular operators on the "
            "main diagonal is always non-singular.")
        if is_square is False:
            raise ValueError("A blockwise lower-triangular operator is always square.")
        with ops().name_scope(name):
            super().__init__(dtype=rows[0][0].dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             parameters=parameters, name=name)

    def _check_block_dims(self) -> None:
        diag = self._diagonal_operators
        for i, row in enumerate(self._operators):
            for j, block in enumerate(row):
                if not (block.range_dimension.is_compatible_with(diag[i].range_dimension)
                        and block.domain_dimension.is_compatible_with(
                            diag[j].domain_dimension)):
                    raise ValueError(
                        "Argument `operators[%d][%d]` must have range dimension %s and "
                        "domain dimension %s (those of the diagonal blocks of its row and "
                        "column). Received: %s." % (i, j, diag[i].range_dimension,
                                                    diag[j].domain_dimension, block.shape))

    @property
    def operators(self) -> List[List[LinearOperator]]:
        return self._operators

    def _shape(self) -> TensorShape:
        batch = util.broadcast_batch_shape(
            [o.batch_shape for row in self._operators for o in row])
        diag = self._diagonal_operators
        return batch.concatenate([_sum_dims([o.range_dimension for o in diag]),
                                  _sum_dims([o.domain_dimension for o in diag])])

    def _shape_tensor(self):
        t = ops()
        batch = util.broadcast_batch_shape_tensor(
            [o.batch_shape_tensor() for row in self._operators for o in row])
        diag = self._diagonal_operators
        rows = t.add_n([o.range_dimension_tensor() for o in diag])
        cols = t.add_n([o.domain_dimension_tensor() for o in diag])
        return t.concat([batch, t.stack([rows, cols])], 0)

    def _split(self, x, adjoint_arg: bool):
        diag = self._diagonal_operators
        sizes = _split_sizes([o.domain_dimension for o in diag],
                             [o.domain_dimension_tensor for o in diag])
        return ops().split(x, sizes, axis=-1 if adjoint_arg else -2)

    def _block(self, i: int, j: int, adjoint: bool):
        """Block (i, j) of A (adjoint False) or of A^H: (A^H)_ij = (A_ji)^H, with the
        flag telling the caller to apply it adjointed. None above the diagonal."""
        if adjoint:
            return self._operators[j][i] if j >= i else None
        return self._operators[i][j] if j <= i else None

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        parts = self._split(x, adjoint_arg)
        n = len(parts)
        rows = []
        for i in range(n):
            terms = [self._block(i, j, adjoint).matmul(parts[j], adjoint=adjoint,
                                                       adjoint_arg=adjoint_arg)
                     for j in range(n) if self._block(i, j, adjoint) is not None]
            total = terms[0]
            for term in terms[1:]:
                total = total + term  # `+` broadcasts the blocks' batch shapes; add_n not
            rows.append(total)
        return _concat_broadcast(rows, axis=-2)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        # Block substitution: forward for A (row i needs x_0..x_{i-1}), backward for A^H.
        rhs = util.adjoint_if(rhs, adjoint_arg)
        parts = self._split(rhs, False)
        n = len(parts)
        solution = [None] * n
        order = range(n - 1, -1, -1) if adjoint else range(n)
        for i in order:
            residual = parts[i]
            for j in range(n):
                block = self._block(i, j, adjoint)
                if j != i and block is not None:
                    residual = residual - block.matmul(solution[j], adjoint=adjoint)
            solution[i] = self._diagonal_operators[i].solve(residual, adjoint=adjoint)
        return _concat_broadcast(solution, axis=-2)

    def _to_dense(self):
        n = len(self._operators)
        rows = [[self._operators[i][j].to_dense() if j <= i else None for j in range(n)]
                for i in range(n)]
        diag = self._diagonal_operators
        return _dense_from_blocks(rows, [o.range_dimension_tensor() for o in diag],
                                  [o.domain_dimension_tensor() for o in diag],
                                  self.batch_shape_tensor(), self.dtype)

    def _assert_non_singular(self):
        return ops().group(*[o.assert_non_singular() for o in self._diagonal_operators])


@tf_export("linalg.LinearOperatorKronecker")
class LinearOperatorKronecker(LinearOperator):
    """`LinearOperator` acting like the Kronecker product A1 x A2 x ... x Ak."""

    def __init__(self, operators: Sequence[LinearOperator],
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None):
        """Initializes the Kronecker product of `operators`.

        Raises:
          TypeError: the operators have different dtypes.
          ValueError: no operators, or hints contradicting the factors'.
        """
        parameters = dict(operators=operators, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        provided = dict(is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                        is_positive_definite=is_positive_definite)
        operators, hints, name = _from_operators(
            operators, provided,
            ("The Kronecker product of non-singular operators is always non-singular.",
             "The Kronecker product of self-adjoint operators is always self-adjoint.",
             "The Kronecker product of positive-definite operators is always "
             "positive-definite."),
            "_x_", "Argument `operators` must be a list of >=1 operators. Received: %s.",
            name)
        self._operators = operators
        with ops().name_scope(name):
            super().__init__(dtype=operators[0].dtype, is_square=is_square,
                             parameters=parameters, name=name, **hints)

    @property
    def operators(self) -> List[LinearOperator]:
        return self._operators

    def _shape(self) -> TensorShape:
        rows, cols = self._operators[0].range_dimension, self._operators[0].domain_dimension
        for o in self._operators[1:]:
            rows, cols = rows * o.range_dimension, cols * o.domain_dimension
        batch = util.broadcast_batch_shape([o.batch_shape for o in self._operators])
        return batch.concatenate([rows, cols])

    def _shape_tensor(self):
        t = ops()
        rows = self._operators[0].range_dimension_tensor()
        cols = self._operators[0].domain_dimension_tensor()
        for o in self._operators[1:]:
            rows = rows * o.range_dimension_tensor()
            cols = cols * o.domain_dimension_tensor()
        batch = util.broadcast_batch_shape_tensor(
            [o.batch_shape_tensor() for o in self._operators])
        return t.concat([batch, t.stack([rows, cols])], 0)

    def _factorwise(self, x, adjoint: bool, adjoint_arg: bool, method: str):
        """Applies (A1 x ... x Ak) (or its inverse, method="solve") to x [..., N, R].

        With x^T [..., R, n1 ... nk] seen as a matrix [..., R n1 ... n(k-1), nk], the
        last factor acts on its rows: Ak M^T is [..., mk, R n1 ... n(k-1)]. Its leading
        axis is now the finished one and the next factor's axis is last, so repeating
        this for A(k-1), ..., A1 leaves [..., m1, ..., mk, R] = the result, with one
        product of each small factor and no transposes in between.
        """
        t = ops()
        y = t.linalg.matrix_transpose(x, conjugate=True) if not adjoint_arg else x
        # y holds the conjugate of x^T: every step below applies the factor to the
        # adjoint of its argument, so conjugating first (and each step's output, which
        # the next step adjoints again) keeps the values unconjugated.
        for o in reversed(self._operators):
            dim = o.range_dimension_tensor() if adjoint else o.domain_dimension_tensor()
            batch = t.shape(y)[:-2]
            y = t.reshape(y, t.concat([batch, t.stack([-1, dim])], 0))
            y = getattr(o, method)(y, adjoint=adjoint, adjoint_arg=True)
            if self.dtype.is_complex:
                y = t.math.conj(y)
        if self.dtype.is_complex:
            y = t.math.conj(y)
        out_rows = self.domain_dimension_tensor() if adjoint else self.range_dimension_tensor()
        cols = t.shape(x)[-2] if adjoint_arg else t.shape(x)[-1]
        y = t.reshape(y, t.concat([t.shape(y)[:-2], t.stack([out_rows, cols])], 0))
        return y

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._factorwise(x, adjoint, adjoint_arg, "matmul")

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._factorwise(rhs, adjoint, adjoint_arg, "solve")

    def _determinant(self):
        # det(A1 x ... x Ak) = prod det(Ai)^(N / ni).
        t = ops()
        total = self.domain_dimension_tensor()
        det = None
        for o in self._operators:
            power = t.cast(total // o.domain_dimension_tensor(), self.dtype)
            term = o.determinant() ** power
            det = term if det is None else det * term
        return det

    def _log_abs_determinant(self):
        t = ops()
        total = self.domain_dimension_tensor()
        lad = None
        for o in self._operators:
            term = o.log_abs_determinant() * t.cast(total // o.domain_dimension_tensor(),
                                                    o.log_abs_determinant().dtype)
            lad = term if lad is None else lad + term
        return lad

    def _factors_square(self) -> bool:
        # diag(A x B) = diag(A) x diag(B) and tr(A x B) = tr(A) tr(B) need square
        # factors; otherwise the diagonal mixes off-diagonal entries of the factors.
        return all(o.is_square for o in self._operators)

    def _trace(self):
        if not self._factors_square():
            return super()._trace()
        tr = self._operators[0].trace()
        for o in self._operators[1:]:
            tr = tr * o.trace()
        return tr

    def _outer_flat(self, vectors: List):
        """The flattened outer product of [..., n_i] vectors (Kronecker of vectors)."""
        t = ops()
        out = vectors[0]
        for v in vectors[1:]:
            out = out[..., :, None] * v[..., None, :]
            out = t.reshape(out, t.concat([t.shape(out)[:-2], [-1]], 0))
        return out

    def _diag_part(self):
        if not self._factors_square():
            return super()._diag_part()
        return self._outer_flat([o.diag_part() for o in self._operators])

    def _eigvals(self):
        return self._outer_flat([o.eigvals() for o in self._operators])

    def _to_dense(self):
        t = ops()
        product = self._operators[0].to_dense()
        for o in self._operators[1:]:
            # (A x B)[(i, k), (j, l)] = A[i, j] B[k, l]
            product = product[..., :, None, :, None] * o.to_dense()[..., None, :, None, :]
            s = t.shape(product)
            product = t.reshape(product, t.concat([s[:-4], t.stack([s[-4] * s[-3],
                                                                    s[-2] * s[-1]])], 0))
        return product

    def _assert_non_singular(self):
        if all(o.is_square for o in self._operators):
            return ops().group(*[o.assert_non_singular() for o in self._operators])
        raise errors.InvalidArgumentError(
            None, None, "All Kronecker factors must be square for the product to be "
                        "invertible. Expected hint `is_square` to be True for every "
                        "operator in argument `operators`.")

    def _assert_self_adjoint(self):
        if all(o.is_square for o in self._operators):
            return ops().group(*[o.assert_self_adjoint() for o in self._operators])
        raise errors.InvalidArgumentError(
            None, None, "All Kronecker factors must be square for the product to be "
                        "self-adjoint. Expected hint `is_square` to be True for every "
                        "operator in argument `operators`.")

    def _linop_adjoint(self):
        return LinearOperatorKronecker([o.adjoint() for o in self._operators],
                                       **self._same_hints())

    def _linop_inverse(self):
        return LinearOperatorKronecker([o.inverse() for o in self._operators],
                                       **self._same_hints())

    def _linop_cholesky(self):
        return LinearOperatorKronecker([o.cholesky() for o in self._operators],
                                       is_non_singular=True, is_self_adjoint=None,
                                       is_square=True)
