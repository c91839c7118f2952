"""tf.matmul with RaggedTensor operands (as TF 2.x dispatches it).

`a` and `b` have the same rank; the outer rank - 2 dimensions are batch dimensions.
  rank 2     each ragged operand must be uniform in fact: its dense form multiplies (a
             run-time check that to_tensor added no padding), a dense Tensor.
  rank 3     `a` ragged in its rows only ([B, (I), J]) times a dense `b` ([B, J, K]):
             each row of `a` times its batch's matrix of `b`, in one dense matmul
             ([B, (I), K]); otherwise a map over the batch (a RaggedTensor).
  rank > 3   the batch dimensions fold into one: the values of the outermost ragged
             dimension multiply (their row_splits must agree).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.graph import control_dependencies, name_scope
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.array import array_ops
from tensorweave.ops.array.array_rearrange_ops import repeat
from tensorweave.ops.control_flow.structure import with_dependencies
from tensorweave.ops.debug import check_ops
from tensorweave.ops.math.matmul_ops import matmul as dense_matmul
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor, \
    convert_to_tensor_or_ragged_tensor
from tensorweave.ops.ragged.ragged_tensor_spec import RaggedTensorSpec


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: Optional[str] = None):
    """The product of the innermost matrices of `a` and `b` (either or both
    RaggedTensors; see the module docstring).

    Raises:
      ValueError: both transpose and adjoint of one operand, other dtypes, other ranks
        (or both unknown).
      InvalidArgumentError (run time): a rank 2 operand ragged in fact, or batch
        dimensions of other sizes.
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    flags = dict(transpose_a=transpose_a, transpose_b=transpose_b, adjoint_a=adjoint_a,
                 adjoint_b=adjoint_b, a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse)
    with name_scope(name, "RaggedMatMul", [a, b]):
        a = convert_to_tensor_or_ragged_tensor(a, name="a")
        b = convert_to_tensor_or_ragged_tensor(b, name="b")
        if not isinstance(a, RaggedTensor) and not isinstance(b, RaggedTensor):
            return dense_matmul(a, b, **flags)
        if a.dtype != b.dtype:
            raise ValueError("`a` and `b` must have the same dtype.")
        rank = _common_rank(a, b)
        if rank > 3:
            return _matmul_folded_batch(a, b, flags)
        if rank == 2:
            return _matmul_2d(a, b, flags)
        if isinstance(a, RaggedTensor) and a.ragged_rank == 1 and \
                not (isinstance(b, RaggedTensor) or transpose_a or adjoint_a):
            return _matmul_rows(a, b, flags)
        return _matmul_mapped(a, b, flags)


def _common_rank(a, b) -> int:
    ra, rb = a.shape.rank, b.shape.rank
    if ra is None and rb is None:
        raise ValueError("matmul requires at least one input to have known rank if "
                         "either input is ragged.")
    if ra is not None and rb is not None and ra != rb:
        raise ValueError("`a` and `b` must have the same rank.")
    rank = ra if ra is not None else rb
    if rank < 2:  # a ragged operand has rank >= 2: the other's rank differs
        raise ValueError("`a` and `b` must have the same rank.")
    return rank


def _matmul_folded_batch(a, b, flags: dict) -> RaggedTensor:
    """Rank > 3: the outermost dimension folded into the next (their row_splits must
    agree), multiplied, and restored."""
    if not isinstance(a, RaggedTensor):
        a = RaggedTensor.from_tensor(a, ragged_rank=1)
    if not isinstance(b, RaggedTensor):
        b = RaggedTensor.from_tensor(b, ragged_rank=1)
    same = check_ops.assert_equal(
        a.row_splits, b.row_splits,
        message="Batch dimensions of `a` and `b` do not have the same size.")
    with control_dependencies([same]):
        return a.with_values(matmul(a.values, b.values, **flags))


def _matmul_2d(a, b, flags: dict):
    """Rank 2: the dense forms multiplied, after a check that each ragged operand was
    uniform (its dense form holds no padding)."""
    checks = []
    a, b = [_uniform_dense(x, checks) for x in (a, b)]
    with_checks = [with_dependencies(checks, x) for x in (a, b)] if checks else [a, b]
    return dense_matmul(with_checks[0], with_checks[1], **flags)


def _uniform_dense(x, checks: list):
    if not isinstance(x, RaggedTensor):
        return x
    dense = x.to_tensor()
    checks.append(check_ops.assert_equal(
        array_ops.size(x.flat_values), array_ops.size(dense),
        message="The matrices in `a` and `b` may not be ragged in their innermost "
                "dimension."))
    return dense


def _matmul_rows(a: RaggedTensor, b, flags: dict) -> RaggedTensor:
    """[B, (I), J] x [B, J, K]: each row of `a` (a [1, J] matrix) times its batch's
    matrix of `b`, all in one dense matmul."""
    rows = array_ops.expand_dims(a.values, 1)
    matrices = repeat(b, a.row_lengths(), axis=0)
    return a.with_values(array_ops.squeeze(dense_matmul(rows, matrices, **flags), [1]))


def _matmul_mapped(a, b, flags: dict) -> RaggedTensor:
    """Rank 3, other cases: a map over the batch of the rank 2 products."""
    from tensorweave.ops.control_flow.functional_ops import map_fn
    ragged_columns = isinstance(b, RaggedTensor) and (
        b.ragged_rank == 2 or flags["transpose_b"] or flags["adjoint_b"])
    splits_dtype = (a if isinstance(a, RaggedTensor) else b).row_splits.dtype

    def product(pair):
        out = _matmul_2d(pair[0], pair[1], flags)
        return RaggedTensor.from_tensor(out) if ragged_columns else out
    spec = RaggedTensorSpec(None, a.dtype, 1 if ragged_columns else 0, splits_dtype)
    result = map_fn(product, (a, b), fn_output_signature=spec)
    return _with_static_shape(result, a, b, flags, ragged_columns)


def _with_static_shape(result: RaggedTensor, a, b, flags: dict,
                       ragged_columns: bool) -> RaggedTensor:
    """`result` with the batch size and the number of columns the operands tell (the
    map loses them)."""
    batch = a.shape[:1].merge_with(b.shape[:1]).as_list()[0]
    if batch is not None:
        result.row_splits.set_shape([batch + 1])
    if not ragged_columns:
        columns = b.shape[-2] if flags["transpose_b"] or flags["adjoint_b"] else b.shape[-1]
        result.values.set_shape(TensorShape([None]).concatenate([columns]))
    else:
        result.flat_values.set_shape([None])
    return result
