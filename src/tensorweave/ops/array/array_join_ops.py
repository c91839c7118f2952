"""Joining and splitting: ConcatV2, ConcatOffset, Split, SplitV, Pack, Unpack, Tile and
the composite meshgrid."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (TypeAttr, gradient, kernel, not_differentiable,
                                             register_op)
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.array import array_util as _u
from tensorweave.runtime.values import element


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


def _dims_text(shape) -> str:
    return "[%s]" % ",".join(str(int(d)) for d in shape)


def _fill_none_grads(op, grads):
    """Output gradients with None replaced by zeros (multi-output ops)."""
    from tensorweave.ops.array import array_ops
    return [g if g is not None else array_ops.zeros_like(op.outputs[i])
            for i, g in enumerate(grads)]


# --- ConcatV2 ---------------------------------------------------------------------------
def _concat_shape(op):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    _u.with_rank(_u.dims_of(axis_t.shape), 0)
    shapes = [_u.dims_of(v.shape) for v in values]
    rank = next((len(s) for s in shapes if s is not None), None)
    if rank is not None:
        for s in shapes:
            _u.with_rank(s, rank)
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use tf.stack instead)")
    axis = _u.const_int(axis_t)
    if axis is None:
        return unknown_shape() if rank is None else unknown_shape(rank)
    min_rank = -axis if axis < 0 else axis + 1

    def parts(s):
        _u.with_rank_at_least(s, min_rank)
        if s is None:
            return None, None, None
        a = axis + len(s) if axis < 0 else axis
        return s[:a], s[a], s[a + 1:]

    before, middle, after = parts(shapes[-1])
    for s in reversed(shapes[:-1]):
        b, m, a = parts(s)
        before = _u.merge_shapes(b, before)
        middle = _u.dim_add(middle, m)
        after = _u.merge_shapes(a, after)
    if before is None or after is None:
        return unknown_shape()
    return TensorShape(before + [middle] + after)


register_op("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
            attrs={"Tidx": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_concat_shape)


@kernel("ConcatV2")
def _concat_kernel(ctx, *args):
    values, axis = args[:-1], args[-1]
    if np.ndim(axis) != 0:
        raise _invalid(ctx, "axis tensor should be a scalar integer, but got shape %s"
                       % _dims_text(np.shape(axis)))
    first = values[0]
    r = np.ndim(first)
    a = int(axis)
    if a < -r or a >= r:
        raise _invalid(ctx, "ConcatOp : Expected concatenating dimensions in the range "
                       "[%d, %d), but got %d" % (-r, r, a))
    a = a + r if a < 0 else a
    for i, v in enumerate(values[1:], 1):
        if np.ndim(v) != r:
            raise _invalid(ctx, "ConcatOp : Ranks of all input tensors should match: "
                           "shape[0] = %s vs. shape[%d] = %s"
                           % (_dims_text(first.shape), i, _dims_text(np.shape(v))))
        for j in range(r):
            if j != a and v.shape[j] != first.shape[j]:
                raise _invalid(ctx, "ConcatOp : Dimension %d in both shapes must be equal: "
                               "shape[0] = %s vs. shape[%d] = %s"
                               % (j, _dims_text(first.shape), i, _dims_text(v.shape)))
    return ctx.xp.concatenate(values, axis=a)


@tensor_util.register_static_value("ConcatV2")
def _concat_value(op, index):
    axis = tensor_util.constant_value(op.inputs[-1])
    if axis is None:
        return None
    vals = [tensor_util.constant_value(t) for t in op.inputs[:-1]]
    if any(v is None for v in vals):
        return None
    return np.concatenate(vals, axis=int(axis))


register_op("ConcatOffset", inputs=["concat_dim: int32", "shape: N * shape_type"],
            outputs=["offset: N * shape_type"],
            attrs={"shape_type": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=lambda op: [t.shape for t in op.inputs[1:]])


@kernel("ConcatOffset")
def _concat_offset_kernel(ctx, concat_dim, *shapes):
    r = shapes[0].shape[0]
    d = int(concat_dim)
    if d < -r or d >= r:
        raise _invalid(ctx, "Concat dim is out of range: %d vs. %d" % (d, r))
    d = d + r if d < 0 else d
    offsets, pos = [], 0
    for s in shapes:
        off = np.zeros(r, dtype=s.dtype)
        off[d] = pos
        pos += int(s[d])
        offsets.append(off)
    return offsets


not_differentiable("ConcatOffset")


@gradient("ConcatV2")
def _concat_grad(op, grad):
    from tensorweave.ops.array import array_ops
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    axis = _u.const_int(axis_t)
    r = values[0].shape.ndims
    if axis is not None and (r is not None or axis >= 0):
        axis = axis % r if r is not None else axis
        sizes = [_u.dims_of(v.shape)[axis] if v.shape.ndims is not None else None
                 for v in values]
        if all(s is not None for s in sizes):
            return split(grad, sizes, axis=axis) + [None]
    else:
        from tensorweave.ops.math import math_binary
        axis = math_binary.floormod(axis_t, array_ops.rank(values[0]))
    from tensorweave.ops.indexing import indexing_ops
    sizes = array_ops.shape_n(values)
    offsets = apply_op("ConcatOffset", [axis, sizes]).outputs
    return [indexing_ops.slice(grad, b, s) for b, s in zip(offsets, sizes)] + [None]


@tf_export("concat")
def concat(values, axis, name: str = "concat") -> Tensor:
    """Concatenates tensors along one dimension (TF1 `tf.concat`).

    Args:
      values: a list of Tensors of one dtype and rank (a single tensor is returned
        through an Identity).
      axis: scalar int32; negative counts from the end.
      name: op name.

    Returns:
      A Tensor.

    Raises:
      ValueError: static shapes that cannot be concatenated.
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if not values:
        raise ValueError("List argument 'values' to 'ConcatV2' Op with length 0 shorter than "
                         "minimum length 2.")
    if len(values) == 1:
        from tensorweave.ops.control_flow import structure
        with name_scope(name):
            convert_to_tensor(axis, name="concat_dim", dtype=_dt.int32).shape \
                .assert_has_rank(0)
            return structure.identity(values[0], name=name)
    return apply_op("ConcatV2", [list(values), axis], name=name).outputs[0]


# --- Split, SplitV ------------------------------------------------------------------------
def _split_shape(op):
    dim_t, value = op.inputs
    in_dims = _u.dims_of(value.shape)
    n = op._get_attr("num_split")
    d = _u.scalar_axis(dim_t, None if in_dims is None else len(in_dims))
    if d is None:
        out = _u.to_shape(None if in_dims is None else [None] * len(in_dims))
    else:
        _u.with_rank_at_least(in_dims, d + 1)
        if in_dims is None:
            out = unknown_shape()
        else:
            size = in_dims[d]
            if size is not None and size % n:
                raise ValueError("Dimension size must be evenly divisible by %d but is %d\n\t"
                                 "Number of ways to split should evenly divide the split "
                                 "dimension" % (n, size))
            out = TensorShape(in_dims[:d] + [None if size is None else size // n]
                              + in_dims[d + 1:])
    return [out] * n


register_op("Split", inputs=["split_dim: int32", "value: T"],
            outputs=["output: num_split * T"], shape=_split_shape)


def _split_axis(ctx, x, split_dim):
    r = np.ndim(x)
    d = int(split_dim)
    if d < -r or d >= r:
        raise _invalid(ctx, "-input rank(-%d) <= split_dim < input rank (%d), but got %d"
                       % (r, r, d))
    return d + r if d < 0 else d


def _split_views(x, sizes, axis: int) -> list:
    """Views of `x` cut along `axis` into pieces of `sizes` (what xp.split returns, by
    plain slicing: split's own setup costs more than the slices for small tensors)."""
    lead = (slice(None),) * axis
    pieces, start = [], 0
    for size in sizes:
        pieces.append(x[lead + (slice(start, start + size),)])
        start += size
    return pieces


@kernel("Split")
def _split_kernel(ctx, split_dim, x):
    d = _split_axis(ctx, x, split_dim)
    n = ctx.attrs["num_split"]
    if x.shape[d] % n:
        raise _invalid(ctx, "Number of ways to split should evenly divide the split dimension, "
                       "but got split_dim %d (size = %d) and num_split %d"
                       % (d, x.shape[d], n))
    return _split_views(x, [x.shape[d] // n] * n, d)


@gradient("Split")
def _split_grad(op, *grads):
    return [None, concat(_fill_none_grads(op, grads), op.inputs[0])]


def _split_v_shape(op):
    value, sizes_t, dim_t = op.inputs
    n = op._get_attr("num_split")
    in_dims = _u.dims_of(value.shape)
    d = _u.scalar_axis(dim_t, None if in_dims is None else len(in_dims))
    if d is None:
        return [_u.to_shape(None if in_dims is None else [None] * len(in_dims))] * n
    _u.with_rank_at_least(in_dims, d + 1)
    if in_dims is None:
        return [unknown_shape()] * n
    sizes = _u.const_ints(sizes_t)
    if sizes is None:
        return [TensorShape(in_dims[:d] + [None] + in_dims[d + 1:])] * n
    if len(sizes) != n:
        raise ValueError("Length of size_splits should be equal to num_outputs")
    if sizes.count(-1) > 1:
        raise ValueError("size_splits can only have one -1")
    total = sum(s for s in sizes if s != -1)
    dim = in_dims[d]
    outs = []
    for i, s in enumerate(sizes):
        if s == -1 and dim is not None:
            s = dim - total
        if s < -1 or (s == -1 and dim is not None):
            raise ValueError("Split size at index %d must be >= 0. Got: %d" % (i, s))
        outs.append(TensorShape(in_dims[:d] + [None if s == -1 else s] + in_dims[d + 1:]))
    if dim is not None and (total > dim if -1 in sizes else total != dim):
        raise ValueError("can't split axis of size %d into pieces of size [%s]"
                         % (dim, ",".join(map(str, sizes))))
    return outs


register_op("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
            outputs=["output: num_split * T"],
            attrs={"Tlen": TypeAttr(_u.INDEX_TYPES, default=_dt.int64)},
            shape=_split_v_shape)


@kernel("SplitV")
def _split_v_kernel(ctx, x, size_splits, split_dim):
    d = _split_axis(ctx, x, split_dim)
    n = ctx.attrs["num_split"]
    sizes = [int(s) for s in np.reshape(size_splits, -1).tolist()]
    if len(sizes) != n:
        raise _invalid(ctx, "Number of split sizes (%d) must match num_split (%d)"
                       % (len(sizes), n))
    if sizes.count(-1) > 1:
        raise _invalid(ctx, "There can only be one -1 in the input.")
    dim = x.shape[d]
    known = sum(s for s in sizes if s != -1)
    if -1 in sizes:
        if known > dim:
            raise _invalid(ctx, "Determined shape must either match input shape along "
                           "split_dim exactly if fully specified, or be less than the size of "
                           "the input along split_dim if not fully specified.  Got: %d"
                           % known)
        sizes[sizes.index(-1)] = dim - known
    elif known != dim:
        raise _invalid(ctx, "Determined shape must either match input shape along split_dim "
                       "exactly if fully specified, or be less than the size of the input "
                       "along split_dim if not fully specified.  Got: %d" % known)
    if any(s < 0 for s in sizes):
        raise _invalid(ctx, "Split size at index %d must be >= 0. Got: %d"
                       % (next(i for i, s in enumerate(sizes) if s < 0), min(sizes)))
    return _split_views(x, sizes, d)


@gradient("SplitV")
def _split_v_grad(op, *grads):
    return [concat(_fill_none_grads(op, grads), op.inputs[2]), None, None]


@tf_export("split")
def split(value, num_or_size_splits, axis=0, num: Optional[int] = None,
          name: str = "split") -> list:
    """Splits a tensor into sub-tensors (TF1 `tf.split`).

    Args:
      value: the Tensor to split.
      num_or_size_splits: an int (that many equal pieces; op Split) or a 1-D list/tensor
        of sizes, one of which may be -1 (op SplitV).
      axis: scalar int32 dimension to split along.
      num: number of outputs when it cannot be inferred from `num_or_size_splits`.
      name: op name.

    Returns:
      A list of Tensors.

    Raises:
      ValueError: `num` is needed and cannot be inferred, a rank-0 size tensor, or fewer
        than one piece.
    """
    if isinstance(num_or_size_splits, (int, np.integer)) and \
            not isinstance(num_or_size_splits, bool):
        _check_num_split("Split", int(num_or_size_splits))
        return list(apply_op("Split", [axis, value], {"num_split": int(num_or_size_splits)},
                             name=name).outputs)
    if hasattr(num_or_size_splits, "value") and not isinstance(num_or_size_splits, Tensor):
        return split(value, int(num_or_size_splits.value), axis, num, name)  # a Dimension
    size_splits = convert_to_tensor(num_or_size_splits)
    if size_splits.shape.ndims == 0:
        raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument "
                         "to split. Argument provided: %s" % (num_or_size_splits,))
    if num is None:
        if size_splits.shape.ndims is not None:
            num = size_splits.shape[0].value
        if num is None:
            raise ValueError("Cannot infer argument `num` from shape %s"
                             % (num_or_size_splits,))
    _check_num_split("SplitV", num)
    return list(apply_op("SplitV", [value, size_splits, axis], {"num_split": num},
                         name=name).outputs)


def _check_num_split(op_type: str, num_split: int) -> None:
    if num_split < 1:
        raise ValueError("Attr 'num_split' of '%s' Op passed %d less than minimum 1."
                         % (op_type, num_split))


# --- Pack, Unpack -----------------------------------------------------------------------
def _pack_axis(axis: int, rank: int) -> int:
    if axis < -rank or axis >= rank:
        raise ValueError("Invalid axis: %d; must be in [%d,%d)" % (axis, -rank, rank))
    return axis + rank if axis < 0 else axis


def _pack_shape(op):
    cur = _u.dims_of(op.inputs[-1].shape)
    for i in range(len(op.inputs) - 2, -1, -1):
        try:
            cur = _u.merge_shapes(_u.dims_of(op.inputs[i].shape), cur)
        except ValueError as e:
            raise ValueError("%s\n\tFrom merging shape %d with other shapes." % (e, i)) \
                from None
    if cur is None:
        return unknown_shape()
    a = _pack_axis(op._get_attr("axis"), len(cur) + 1)
    return TensorShape(cur[:a] + [len(op.inputs)] + cur[a:])


register_op("Pack", inputs=["values: N * T"], outputs=["output: T"], attrs={"axis": 0},
            shape=_pack_shape)


@kernel("Pack")
def _pack_kernel(ctx, *values):
    # (a NumPy array's own shape: np.shape's dispatch costs more per input than the copy)
    first = values[0].shape if type(values[0]) is np.ndarray else np.shape(values[0])
    for i, v in enumerate(values[1:], 1):
        if (v.shape if type(v) is np.ndarray else np.shape(v)) != first:
            raise _invalid(ctx, "Shapes of all inputs must match: values[0].shape = %s != "
                           "values[%d].shape = %s" % (_dims_text(first), i,
                                                      _dims_text(np.shape(v))))
    a = ctx.attrs["axis"]
    r = len(first) + 1
    if a < -r or a >= r:
        raise _invalid(ctx, "axis = %d not in [%d, %d)" % (a, -r, r))
    if ctx.xp is np and getattr(values[0], "dtype", None) != object:
        # one copy into a new leading axis, then moved into place: np.stack's Python
        # work per input costs more than the copy when many small inputs are packed.
        # Not for strings: np.array of 0-d object arrays holds the arrays as elements
        packed = np.array(values)
        if a == 0 or a == -r:  # already in place (and contiguous)
            return packed
        return np.ascontiguousarray(np.moveaxis(packed, 0, a))
    return ctx.xp.stack(values, axis=a)


@gradient("Pack")
def _pack_grad(op, grad):
    return unstack(grad, num=op._get_attr("N"), axis=op._get_attr("axis"))


@tensor_util.register_static_value("Pack")
def _pack_value(op, index):
    if not op.inputs or op._get_attr("axis") != 0:
        return None
    vals = [tensor_util.constant_value(t) for t in op.inputs]
    if any(v is None for v in vals):
        return None
    return np.array(vals, dtype=op._get_attr("T").as_numpy_dtype)


@tf_export("stack")
def stack(values, axis: int = 0, name: str = "stack") -> Tensor:
    """Stacks rank-R tensors into one rank-(R+1) tensor (TF1 `tf.stack`).

    Args:
      values: a list of Tensors (or convertible values) of one shape and dtype.
      axis: where the new dimension goes; in [-(R+1), R+1).
      name: op name.

    Returns:
      A Tensor (a Const when `axis` is 0 and every value is constant Python/NumPy data).

    Raises:
      ValueError: `axis` out of range.
    """
    if axis == 0 and (isinstance(values, Tensor) or not _u_contains_tensor(values)):
        try:
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass
    # a Python value takes the dtype of the tensors among `values` where it can, as
    # TF's Pack infers its type attr (tf.stack([2, int64_tensor]) is int64)
    hint = next((v.dtype.base_dtype for v in values if isinstance(v, Tensor)), None)
    first = convert_to_tensor(values[0], name=name, dtype_hint=hint)
    if first.shape.ndims is not None:
        n = first.shape.ndims + 1
        if axis < -n or axis >= n:
            raise ValueError("Argument `axis` = %d not in range [%d, %d)" % (axis, -n, n))
    return apply_op("Pack", [[first] + list(values[1:])], {"axis": axis},
                    name=name).outputs[0]


def _u_contains_tensor(x) -> bool:
    if isinstance(x, Tensor) or hasattr(x, "_as_graph_element"):
        return True
    if isinstance(x, (list, tuple)):
        return any(_u_contains_tensor(v) for v in x)
    return False


def _unpack_shape(op):
    dims = _u.dims_of(op.inputs[0].shape)
    n = op._get_attr("num")
    if dims is None:
        return [unknown_shape()] * n
    a = _pack_axis(op._get_attr("axis"), len(dims))
    if dims[a] is not None and dims[a] != n:
        raise ValueError("Dimension must be %d but is %d" % (n, dims[a]))
    return [TensorShape(dims[:a] + dims[a + 1:])] * n


register_op("Unpack", inputs=["value: T"], outputs=["output: num * T"], attrs={"axis": 0},
            shape=_unpack_shape)


@kernel("Unpack")
def _unpack_kernel(ctx, x):
    r = np.ndim(x)
    a = ctx.attrs["axis"]
    if a < -r or a >= r:
        raise _invalid(ctx, "axis = %d not in [%d, %d)" % (a, -r, r))
    a = a + r if a < 0 else a
    n = ctx.attrs["num"]
    if x.shape[a] != n:
        raise _invalid(ctx, "Input shape axis %d must equal %d, got shape %s"
                       % (a, n, _dims_text(x.shape)))
    lead = (slice(None),) * a
    if x.ndim == 1 and x.dtype == object:  # a string vector's elements: bare bytes
        return [element(x[i]) for i in range(n)]
    return [x[lead + (i,)] for i in range(n)]


@gradient("Unpack")
def _unpack_grad(op, *grads):
    return [stack(_fill_none_grads(op, grads), axis=op._get_attr("axis"))]


@tensor_util.register_static_value("Unpack")
def _unpack_value(op, index):
    if op._get_attr("axis") != 0:
        return None
    v = tensor_util.constant_value(op.inputs[0])
    return None if v is None else v[index]


@tf_export("unstack")
def unstack(value, num: Optional[int] = None, axis: int = 0,
            name: str = "unstack") -> list:
    """Unpacks a rank-R tensor into rank-(R-1) tensors along `axis` (TF1 `tf.unstack`).

    Args:
      value: a Tensor.
      num: the length of `axis`; inferred from the static shape when None.
      axis: the dimension to unstack along.
      name: op name.

    Returns:
      A list of `num` Tensors.

    Raises:
      ValueError: `num` is None and cannot be inferred, or `axis` out of range.
    """
    if num is None:
        value = convert_to_tensor(value)
        s = value.shape
        if s.ndims is not None:
            if axis < -s.ndims or axis >= s.ndims:
                raise ValueError("Argument `axis` = %d not in range [%d, %d)"
                                 % (axis, -s.ndims, s.ndims))
            num = s[axis].value
        if num is None:
            raise ValueError("Cannot infer argument `num` from shape %s" % (s,))
    if num < 0:
        raise ValueError("Attr 'num' of 'Unpack' Op passed %d less than minimum 0." % num)
    return list(apply_op("Unpack", [value], {"num": num, "axis": axis}, name=name).outputs)


# --- Tile ---------------------------------------------------------------------------------
def _tile_shape(op):
    x, multiples_t = op.inputs
    in_dims = _u.dims_of(x.shape)
    mult = _u.shape_from_tensor(multiples_t)
    mult = _u.dims_of(mult)
    if in_dims is not None:
        mult = _u.with_rank(mult, len(in_dims))
        _u.merge_shapes(_u.dims_of(multiples_t.shape), [len(in_dims)])
    if mult is None:
        return unknown_shape()
    in_dims = _u.with_rank(in_dims, len(mult))
    return TensorShape([_u.dim_mul(a, b) for a, b in zip(in_dims, mult)])


register_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
            attrs={"Tmultiples": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_tile_shape)


@kernel("Tile")
def _tile_kernel(ctx, x, multiples):
    r = np.ndim(x)
    if np.ndim(multiples) != 1 or multiples.shape[0] != r:
        raise _invalid(ctx, "Expected multiples argument to be a vector of length %d but got "
                       "length %d" % (r, np.size(multiples)))
    m = [int(v) for v in multiples.tolist()]
    for i, v in enumerate(m):
        if v < 0:
            raise _invalid(ctx, "Expected multiples[%d] >= 0, but got %d" % (i, v))
    return ctx.xp.tile(x, m) if r else x


@gradient("Tile")
def _tile_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import reduction_ops
    x, multiples = op.inputs
    r = x.shape.ndims
    mult = _u.const_ints(multiples)
    if x.shape.is_fully_defined() and mult is not None:
        split_shape = [d for pair in zip(mult, x.shape.as_list()) for d in pair]
    else:
        input_shape = array_ops.shape(x, out_type=multiples.dtype)
        split_shape = array_ops.reshape(
            array_ops.transpose(stack([multiples, input_shape])), [-1])
    if r is not None:
        axes = list(range(0, 2 * r, 2))
    else:
        from tensorweave.ops.math import math_ops
        axes = math_ops.range(0, array_ops.size(split_shape), 2)
    g = reduction_ops.reduce_sum(array_ops.reshape(grad, split_shape), axes)
    g.set_shape(x.shape)
    return [g, None]


@tf_export("tile", "manip.tile")
def tile(input, multiples, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Repeats a tensor `multiples[i]` times along dimension i (TF1 `tf.tile`).

    Args:
      input: a Tensor.
      multiples: 1-D int32/int64, one entry per dimension of `input`.
      name: op name.

    Returns:
      A Tensor.
    """
    return apply_op("Tile", [input, multiples], name=name or "Tile").outputs[0]


# --- meshgrid (composite) ----------------------------------------------------------------
@tf_export("meshgrid")
def meshgrid(*args, **kwargs) -> list:
    """Broadcasts 1-D coordinate vectors to N-D grids (TF1 `tf.meshgrid`).

    Args:
      *args: 1-D Tensors (or lists).
      indexing: "xy" (Cartesian, default; swaps the first two output dims) or "ij".
      name: op name.

    Returns:
      A list of N Tensors of rank N.

    Raises:
      TypeError: an unknown keyword argument.
      ValueError: `indexing` is not "xy" or "ij".
    """
    from tensorweave.ops.array import array_ops
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError("'%s' is an invalid keyword argument for this function"
                        % next(iter(kwargs)))
    if indexing not in ("xy", "ij"):
        raise ValueError("Argument `indexing` parameter must be either 'xy' or 'ij', got '%s'"
                         % (indexing,))
    with name_scope(name, "meshgrid", args):
        ndim = len(args)
        if not ndim:
            return []
        ones = (1,) * ndim
        output = [array_ops.reshape(stack(x), ones[:i] + (-1,) + ones[i + 1:])
                  for i, x in enumerate(args)]
        shapes = [array_ops.size(x) for x in args]
        if indexing == "xy" and ndim > 1:
            output[0] = array_ops.reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = array_ops.reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        target = stack(shapes)
        return [array_ops.broadcast_to(x, target) for x in output]
