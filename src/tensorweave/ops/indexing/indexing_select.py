"""Selections: Where, Select, SelectV2, boolean_mask, sequence_mask, Unique,
UniqueWithCounts, TopKV2 (part of the indexing family)."""
from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, broadcast_shapes, unknown_shape
from tensorweave.ops.group_fold import stable_order
from tensorweave.ops.select_bits import select
from tensorweave.ops.indexing.indexing_gather import gather, scatter_nd
from tensorweave.ops.indexing.indexing_ops import invalid, merge_shapes, shape_str, shape_tensor, \
    with_rank, with_rank_at_least

# --- Where (coordinates of true elements) ------------------------------------------------
register_op("Where", inputs=["input: T"], outputs=["index: int64"],
            attrs={"T": TypeAttr(_dt.NUMBERS + (_dt.bool,), default=_dt.bool)},
            shape=lambda op: TensorShape([None, op.inputs[0].shape.ndims]))


@kernel("Where")
def _where_kernel(ctx, x):
    if x.ndim == 0:  # TF's kernel has no coordinates of a scalar
        raise invalid(ctx, "WhereOp : Unhandled input dimensions: 0")
    if type(x) is np.ndarray:
        # what np.argwhere computes (the nonzero coordinates, transposed), without its
        # Python-level layers: the kernel runs once per sparse feature per step
        return np.array(x.nonzero()).T.astype(np.int64, copy=False)
    return ctx.xp.argwhere(x).astype(np.int64, copy=False)


not_differentiable("Where")


def _where_coordinates(condition, name):
    with _graph.name_scope(name, "Where", [condition]) as scope:
        condition = convert_to_tensor(condition, preferred_dtype=_dt.bool, name="condition")
        return apply_op("Where", [condition], name=scope).outputs[0]


# --- Select (TF1 semantics) --------------------------------------------------------------
def _select_shape(op):
    cond, t, e = (x.shape for x in op.inputs)
    data = merge_shapes(t, e)
    if cond.ndims is None or data.ndims is None or cond.ndims == 0:
        return data
    if cond.ndims != 1 or data.ndims == 0:
        return merge_shapes(data, cond)
    merge_shapes(cond, TensorShape([data[0]]))
    return data


register_op("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
            shape=_select_shape)


@kernel("Select")
def _select_kernel(ctx, cond, t, e):
    xp = ctx.xp
    if cond.ndim == 0 or (cond.ndim == 1 and t.ndim > 1):
        if t.shape != e.shape:
            raise invalid(ctx, "'then' and 'else' must have the same size.  but received: %s "
                          "vs. %s" % (shape_str(t.shape), shape_str(e.shape)))
        if cond.ndim == 0:
            return t if cond else e
        if cond.shape[0] != t.shape[0]:
            raise invalid(ctx, "Number of batches of 'then' must match size of 'cond', but "
                          "saw: %d vs. %d" % (t.shape[0], cond.shape[0]))
        return xp.where(cond.reshape((-1,) + (1,) * (t.ndim - 1)), t, e)
    for k, other in ((1, t), (2, e)):
        if cond.shape != other.shape:
            raise invalid(ctx, "Inputs to operation %s of type Select must have the same size "
                          "and shape.  Input 0: %s != input %d: %s" % (
                              ctx.op.name if ctx.op is not None else "Select",
                              shape_str(cond.shape), k, shape_str(other.shape)))
    return select(cond, t, e, xp)


@gradient("Select")
def _select_grad(op, grad):
    from tensorweave.ops.array import array_ops
    c, x = op.inputs[0], op.inputs[1]
    zeros = array_ops.zeros_like(x)
    return [None, _select(c, grad, zeros), _select(c, zeros, grad)]


def _select(condition, x, y, name=None):
    return apply_op("Select", [condition, x, y], name=name or "Select").outputs[0]


@tf_export("where")
def where(condition, x=None, y=None, name: Optional[str] = None) -> Tensor:
    """Coordinates of true elements, or elements from `x` or `y` (TF1 `tf.where`).

    With only `condition`: an int64 Tensor [num_true, rank(condition)] of the
    coordinates of its true (non-zero) elements, in row-major order. With `x` and `y`
    (TF1 Select): `x` and `y` have the same shape and `condition` is a scalar, has their
    shape, or is a vector matching their first dimension (choosing whole rows).

    Args:
      condition: a bool Tensor.
      x, y: Tensors of the same type and shape, or both None.
      name: op name.

    Returns:
      A Tensor.

    Raises:
      ValueError: exactly one of x and y is None, or the shapes do not fit.
    """
    if x is None and y is None:
        return _where_coordinates(condition, name)
    if x is not None and y is not None:
        return _select(condition, x, y, name)
    raise ValueError("x and y must both be non-None or both be None.")


# --- SelectV2 (broadcasting) -------------------------------------------------------------
def _select_v2_shape(op):
    cond, t, e = (x.shape for x in op.inputs)
    return broadcast_shapes(cond, broadcast_shapes(t, e))


register_op("SelectV2", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
            shape=_select_v2_shape)


@kernel("SelectV2")
def _select_v2_kernel(ctx, cond, t, e):
    try:
        return select(cond, t, e, ctx.xp)
    except ValueError:
        raise invalid(ctx, "condition %s, then %s, and else %s must be broadcastable" % (
            shape_str(cond.shape), shape_str(t.shape), shape_str(e.shape))) from None


@gradient("SelectV2")
def _select_v2_grad(op, grad):
    from tensorweave.ops.math.math_grad_util import unbroadcast
    c, x, y = op.inputs
    out = op.outputs[0]
    zero = convert_to_tensor(np.zeros((), dtype=grad.dtype.as_numpy_dtype))
    # Each branch was broadcast to the output's shape (by the condition as well as by
    # the other branch): sum its gradient back to its own shape.
    gx = unbroadcast(_select_v2(c, grad, zero), x, out)[0]
    gy = unbroadcast(_select_v2(c, zero, grad), y, out)[0]
    return [None, gx, gy]


def _select_v2(condition, x, y, name=None):
    return apply_op("SelectV2", [condition, x, y], name=name or "SelectV2").outputs[0]


@tf_export("where_v2")
def where_v2(condition, x=None, y=None, name: Optional[str] = None) -> Tensor:
    """Coordinates of true elements, or a broadcasting select (TF `tf.where_v2`).

    Like `where`, but `condition`, `x` and `y` are broadcast against each other.

    Raises:
      ValueError: exactly one of x and y is None, or the shapes do not broadcast.
    """
    if x is None and y is None:
        return _where_coordinates(condition, name)
    if x is not None and y is not None:
        return _select_v2(condition, x, y, name)
    raise ValueError("x and y must both be non-None or both be None.")


# --- boolean_mask ------------------------------------------------------------------------
@tf_export("boolean_mask")
def boolean_mask(tensor, mask, name: str = "boolean_mask", axis=None) -> Tensor:
    """The elements (or slices) of `tensor` where `mask` is true (TF1 `tf.boolean_mask`).

    `mask` covers dimensions axis .. axis + rank(mask) - 1 of `tensor`; they are
    flattened into one dimension holding the selected entries in row-major order.

    Args:
      tensor: a Tensor.
      mask: a bool Tensor of known rank >= 1.
      name: name scope.
      axis: the first dimension the mask covers (default 0).

    Returns:
      A Tensor of rank rank(tensor) - rank(mask) + 1.

    Raises:
      ValueError: the mask is a scalar, has unknown rank, or does not fit the tensor.
    """
    with _graph.name_scope(name, "boolean_mask", [tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        shape_mask = mask.shape
        ndims_mask = shape_mask.ndims
        static = tensor.shape
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None "
                             "is not.")
        axis = 0 if axis is None else axis
        axis_value = tensor_util.constant_value(axis)
        if axis_value is not None:
            axis = int(axis_value)
            static[axis:axis + ndims_mask].assert_is_compatible_with(shape_mask)
        # a reshape even for a vector mask, as TF: the gradient (through the reshape) is
        # then dense, which optimizers with slots (momentum) update differently
        tensor = _merge_mask_dims(tensor, axis, axis_value, ndims_mask)
        if ndims_mask > 1:
            from tensorweave.ops.array import array_ops
            mask = array_ops.reshape(mask, [-1])
        coords = _where_coordinates(mask, None)
        return gather(tensor, coords[:, 0], axis=axis)


def _merge_mask_dims(tensor: Tensor, axis, axis_value, ndims_mask: int) -> Tensor:
    """Reshapes `tensor` so that the dimensions the mask covers become one."""
    from tensorweave.ops.array import array_ops
    static = tensor.shape
    if axis_value is not None and static.is_fully_defined():
        dims = static.as_list()
        merged = int(np.prod(dims[axis:axis + ndims_mask], dtype=np.int64))
        new_shape = np.asarray(dims[:axis] + [merged] + dims[axis + ndims_mask:], np.int32)
        return array_ops.reshape(tensor, new_shape)
    from tensorweave.ops.math import reduction_ops
    full = shape_tensor(tensor)
    leading = reduction_ops.reduce_prod(full[axis:axis + ndims_mask], [0], keepdims=True)
    out = array_ops.reshape(tensor, array_ops.concat(
        [full[:axis], leading, full[axis + ndims_mask:]], 0))
    if axis_value is not None and static.ndims is not None:
        first = static[axis:axis + ndims_mask].num_elements()
        out.set_shape(TensorShape(static.as_list()[:axis] + [first] +
                                  static.as_list()[axis + ndims_mask:]))
    return out


# --- sequence_mask -----------------------------------------------------------------------
@tf_export("sequence_mask")
def sequence_mask(lengths, maxlen=None, dtype=_dt.bool, name: Optional[str] = None) -> Tensor:
    """A mask of the first `lengths[i]` positions of each row (TF1 `tf.sequence_mask`).

    `result[i..., j] = j < lengths[i...]` for j in [0, maxlen).

    Args:
      lengths: integer Tensor of any shape.
      maxlen: scalar integer, the size of the last dimension (default max(lengths)).
      dtype: the output type (default bool).
      name: name scope.

    Returns:
      A Tensor of shape lengths.shape + [maxlen].

    Raises:
      ValueError: maxlen is not a scalar.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    with _graph.name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            known = tensor_util.constant_value(lengths)
            if known is not None:
                top = int(known.max()) if known.size else 0
                maxlen = convert_to_tensor(np.asarray(max(top, 0),
                                                      lengths.dtype.as_numpy_dtype))
            else:
                maxlen = reduction_ops.reduce_max(lengths)
                maxlen = math_binary.maximum(
                    convert_to_tensor(np.zeros((), maxlen.dtype.as_numpy_dtype)), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError("Argument `maxlen` must be scalar for sequence_mask, received "
                             "`maxlen` = %s with shape '%s' instead" % (maxlen, maxlen.shape))
        row_vector = math_ops.range(0, maxlen, 1, dtype=maxlen.dtype)
        matrix = math_ops.cast(array_ops.expand_dims(lengths, -1), maxlen.dtype)
        result = math_binary.less(row_vector, matrix)
        dtype = _dt.as_dtype(dtype) if dtype is not None else None
        if dtype is None or result.dtype == dtype:
            return result
        return math_ops.cast(result, dtype)


# --- Unique ------------------------------------------------------------------------------
UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCountsOutput = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
_OUT_IDX = TypeAttr((_dt.int32, _dt.int64), default=_dt.int32)


def _unique_shape(op):
    x = with_rank(op.inputs[0].shape, 1) if op.inputs[0].shape.ndims is not None else None
    idx = x if x is not None else unknown_shape()
    n = len(op.outputs)
    return [TensorShape([None]), idx] + [TensorShape([None])] * (n - 2)


register_op("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"],
            attrs={"out_idx": _OUT_IDX}, shape=_unique_shape)
register_op("UniqueWithCounts", inputs=["x: T"], outputs=["y: T", "idx: out_idx",
                                                          "count: out_idx"],
            attrs={"out_idx": _OUT_IDX}, shape=_unique_shape)


# below this many elements a dict of first appearances beats sorting (128 ids: 14.9 us
# against 13.9; 16 ids: 3.1 against 12.5)
_SMALL_UNIQUE = 127


def _object_array(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _unique(ctx, x, with_counts: bool = True):
    """(y, idx, count) with y in order of first appearance; count is None unless
    `with_counts` (Unique drops it)."""
    if x.ndim != 1:
        raise invalid(ctx, "unique expects a 1D vector.")
    out_idx = ctx.attrs["out_idx"].as_numpy_dtype
    if x.size <= _SMALL_UNIQUE:
        # a dict keeps first appearances in order: for the ids of a batch this beats
        # np.unique's sort and its argument handling several times (NaNs stay distinct,
        # 0.0 and -0.0 one value, as in np.unique)
        # (dict.fromkeys and map over a bound method: no Python-level call per item)
        items = x.tolist()
        first = list(dict.fromkeys(items))
        position = dict(zip(first, range(len(first))))
        idx = np.array(list(map(position.__getitem__, items)), dtype=out_idx)
        y = np.array(first, dtype=x.dtype) if x.dtype != object else _object_array(first)
        return y, idx, _counts(idx, len(first), out_idx, with_counts)
    if x.dtype.kind in "iu":
        return _unique_integers(x, out_idx, with_counts)
    kwargs = {} if x.dtype == object else {"equal_nan": False}
    _, first, inverse = np.unique(x, return_index=True, return_inverse=True, **kwargs)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    idx = rank[inverse.reshape(-1)]
    return x[first[order]], idx.astype(out_idx), _counts(idx, order.size, out_idx, with_counts)


def _counts(idx: np.ndarray, n: int, out_idx, wanted: bool) -> Optional[np.ndarray]:
    return np.bincount(idx, minlength=n).astype(out_idx) if wanted else None


def _unique_integers(x: np.ndarray, out_idx, with_counts: bool):
    """`_unique` of integers from one stable sort (group_fold.stable_order: one call of
    NumPy's vectorized quicksort over (value, position) keys where they fit in 62 bits):
    the first of each run of equal values is that value's first appearance, and the
    runs are put in order of first appearance. 5120 ids of 100,000 (an
    embedding_lookup_sparse batch): 614 us with a dict, 445 us with np.unique, 94 us."""
    order = stable_order(x)
    ordered = x[order]
    starts = np.empty(x.size, dtype=bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    run = np.cumsum(starts) - 1                     # each sorted element's run
    first = order[starts]                           # each run's first appearance
    by_first = np.argsort(first)                    # (distinct positions: any sort)
    rank = np.empty(first.size, dtype=np.intp)
    rank[by_first] = np.arange(first.size)
    idx = np.empty(x.size, dtype=out_idx)
    idx[order] = rank[run]
    return x[first[by_first]], idx, _counts(idx, first.size, out_idx, with_counts)


@kernel("Unique")
def _unique_kernel(ctx, x):
    y, idx, _ = _unique(ctx, x, with_counts=False)
    return y, idx


@kernel("UniqueWithCounts")
def _unique_with_counts_kernel(ctx, x):
    return _unique(ctx, x)


not_differentiable("Unique")
not_differentiable("UniqueWithCounts")


@tf_export("unique")
def unique(x, out_idx=_dt.int32, name: Optional[str] = None) -> UniqueOutput:
    """The distinct elements of a 1-D tensor, in order of first appearance (TF1
    `tf.unique`).

    Returns:
      A namedtuple (y, idx): y the distinct values, idx (of type `out_idx`) the position
      in y of each element of x, so that x == gather(y, idx).
    """
    op = apply_op("Unique", [x], {"out_idx": _dt.as_dtype(out_idx)}, name=name or "Unique")
    return UniqueOutput(*op.outputs)


@tf_export("unique_with_counts")
def unique_with_counts(x, out_idx=_dt.int32,
                       name: Optional[str] = None) -> UniqueWithCountsOutput:
    """Like `unique`, also returning how often each distinct value occurs (TF1
    `tf.unique_with_counts`).

    Returns:
      A namedtuple (y, idx, count).
    """
    op = apply_op("UniqueWithCounts", [x], {"out_idx": _dt.as_dtype(out_idx)},
                  name=name or "UniqueWithCounts")
    return UniqueWithCountsOutput(*op.outputs)


# --- TopKV2 ------------------------------------------------------------------------------
TopKOutput = collections.namedtuple("TopKV2", ["values", "indices"])
TOP_K_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.uint8, _dt.int16, _dt.int8, _dt.int64,
               _dt.bfloat16, _dt.uint16, _dt.float16, _dt.uint32, _dt.uint64)


def _top_k_shape(op):
    x = with_rank_at_least(op.inputs[0].shape, 1)
    k = op.inputs[1]
    with_rank(k.shape, 0)
    kv = tensor_util.constant_value(k)
    if kv is not None:
        kv = int(kv)
        if kv < 0:
            raise ValueError("Dimension size, given by scalar input 1, must be non-negative "
                             "but is %d" % kv)
        if x.ndims is not None and x[-1].value is not None and x[-1].value < kv:
            raise ValueError("input must have last dimension >= k = %d but is %d"
                             % (kv, x[-1].value))
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    out = TensorShape(x.as_list()[:-1] + [kv])
    return [out, out]


_TOP_K_INDEX_TYPES = (_dt.int16, _dt.int32, _dt.int64)
register_op("TopKV2", inputs=["input: T", "k: Tk"], outputs=["values: T", "indices: index_type"],
            attrs={"T": TypeAttr(TOP_K_TYPES), "sorted": True,
                   "Tk": TypeAttr(_TOP_K_INDEX_TYPES, default=_dt.int32),
                   "index_type": TypeAttr(_TOP_K_INDEX_TYPES, default=_dt.int32)},
            shape=_top_k_shape)


@kernel("TopKV2")
def top_k_kernel(ctx, x, k):
    xp = ctx.xp
    k = int(k)
    if k < 0:
        raise invalid(ctx, "Need k >= 0, got %d" % k)
    if x.ndim < 1:
        raise invalid(ctx, "input must be >= 1-D, got shape %s" % shape_str(x.shape))
    n = x.shape[-1]
    if n < k:
        raise invalid(ctx, "input must have at least k columns. Had %d, needed %d" % (n, k))
    key = x
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        nan = xp.isnan(x)
        if nan.any():  # NaN sorts below every number, as in TF
            key = xp.where(nan, -xp.inf, x).astype(x.dtype)
    if 0 < k and 8 * k <= n and xp is np:
        indices = _top_k_indices_partitioned(key, k)
    else:
        indices = (n - 1) - _descending_order(key, xp)[..., :k]
    values = xp.take_along_axis(x, indices, axis=-1)
    # TopK (TF1's, k an attr) has int32 indices only
    index_type = ctx.attrs.get("index_type", _dt.int32)
    return values, indices.astype(index_type.as_numpy_dtype)


def _descending_order(key, xp=np):
    """Positions of each row's values, largest first, ties in index order (TF's order):
    a stable ascending sort of the reversed rows, read backwards (as reversed indices)."""
    return xp.argsort(key[..., ::-1], axis=-1, kind="stable")[..., ::-1]


def _top_k_indices_partitioned(key: np.ndarray, k: int) -> np.ndarray:
    """The indices of each row's k largest values in TF's order, without sorting whole
    rows: the k-th largest value t comes from a partition, every value above t is kept,
    and of the values equal to t the lowest indices fill the rest; only the k chosen
    ones are sorted."""
    n = key.shape[-1]
    t = np.partition(key, n - k, axis=-1)[..., n - k:n - k + 1]
    chosen = key >= t
    # rows with more values equal to t than places left keep the lowest-indexed ones
    # (rare for floats: the cumulative count only runs on those rows)
    extra = chosen.sum(axis=-1) > k
    if extra.any():
        rows = key[extra]
        ties = rows == t[extra]
        need = k - (rows > t[extra]).sum(axis=-1, keepdims=True)
        chosen[extra] = (rows > t[extra]) | (ties & (np.cumsum(ties, axis=-1) <= need))
    idx = np.nonzero(chosen.reshape(-1, n))[1].reshape(key.shape[:-1] + (k,))
    order = _descending_order(np.take_along_axis(key, idx, axis=-1))
    # the reversed positions of the k-wide rows index `idx` from its end
    return np.take_along_axis(idx, (k - 1) - order, axis=-1)


@gradient("TopKV2")
def top_k_gradient(op, grad, _):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = shape_tensor(x)
    if indices.dtype != in_shape.dtype:  # index_type int16/int64
        indices = math_ops.cast(indices, in_shape.dtype)
    ind_shape = shape_tensor(indices)
    n = in_shape[-1]
    ind_2d = array_ops.reshape(indices, array_ops.stack([-1, ind_shape[-1]]))
    outer = shape_tensor(ind_2d)[0]
    offsets = array_ops.expand_dims(
        math_ops.range(0, math_binary.multiply(outer, n), n), -1)
    flat = array_ops.reshape(math_binary.add(ind_2d, offsets), [-1, 1])
    total = array_ops.reshape(reduction_ops.reduce_prod(in_shape), [1])
    dx = scatter_nd(flat, array_ops.reshape(grad, [-1]), total)
    return [array_ops.reshape(dx, in_shape), None]


@tf_export("math.top_k", "nn.top_k")
def top_k(input, k=1, sorted: bool = True, index_type=_dt.int32,  # noqa: A002
          name: Optional[str] = None) -> TopKOutput:
    """The `k` largest entries of the last dimension and their indices (TF1
    `tf.nn.top_k`).

    Equal values keep their order (the lower index comes first).

    Args:
      input: a real Tensor of rank >= 1 whose last dimension has at least k entries.
      k: scalar int16/int32/int64, the number of entries to find.
      sorted: if True the k entries are in descending order (always the case here).
      index_type: the type of the indices: int16, int32 or int64.
      name: op name.

    Returns:
      A namedtuple (values, indices) of shape input.shape[:-1] + [k]; indices of
      `index_type`.

    Raises:
      ValueError: k < 0 or larger than a statically known last dimension.
    """
    op = apply_op("TopKV2", [input, k], {"sorted": bool(sorted),
                                         "index_type": _dt.as_dtype(index_type)},
                  name=name or "TopKV2")
    return TopKOutput(*op.outputs)
