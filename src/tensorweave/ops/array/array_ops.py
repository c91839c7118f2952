"""Shape-manipulating array ops: shape queries, reshape, transpose.

The family is split by sub-family: this module holds the shape queries (Shape, ShapeN,
Rank, Size), Reshape, ExpandDims, Squeeze, Transpose and InvertPermutation;
`array_fill_ops` holds the fills (Fill, zeros, ones, ZerosLike, OnesLike),
`array_join_ops` concat/split/stack/unstack/tile/meshgrid and `array_pad_ops`
pad/broadcast_to/reverse. Their public names are imported here, so `array_ops.concat`
etc. work as in TF.
"""
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
from tensorweave.ops.array.constant_op import constant
# The family's other modules, so that `array_ops.concat` etc. work as in TF (they
# import nothing from this module at load time).
from tensorweave.ops.array.array_fill_ops import (  # noqa: F401
    fill, ones, ones_like, zeros, zeros_like)
from tensorweave.ops.array.array_join_ops import (  # noqa: F401
    concat, meshgrid, split, stack, tile, unstack)
from tensorweave.ops.array.array_pad_ops import broadcast_to, pad, reverse  # noqa: F401


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


def _shape_text(shape) -> str:
    return "[%s]" % ",".join(str(int(d)) for d in shape)


# --- Shape, ShapeN, Rank, Size ---------------------------------------------------------
_OUT_INDEX = TypeAttr(_u.INDEX_TYPES, default=_dt.int32)

register_op("Shape", inputs=["input: T"], outputs=["output: out_type"],
            attrs={"out_type": _OUT_INDEX},
            shape=lambda op: TensorShape([op.inputs[0].shape.ndims]))


@kernel("Shape")
def _shape_kernel(ctx, x):
    return np.asarray(x.shape, dtype=ctx.attrs["out_type"].as_numpy_dtype)


not_differentiable("Shape")


@tensor_util.register_static_value("Shape")
def _shape_value(op, index):
    s = op.inputs[0].shape
    if not s.is_fully_defined():
        return None
    return np.asarray(s.as_list(), dtype=op._get_attr("out_type").as_numpy_dtype)


register_op("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
            attrs={"out_type": _OUT_INDEX},
            shape=lambda op: [TensorShape([t.shape.ndims]) for t in op.inputs])


@kernel("ShapeN")
def _shape_n_kernel(ctx, *xs):
    dt = ctx.attrs["out_type"].as_numpy_dtype
    return [np.asarray(x.shape, dtype=dt) for x in xs]


not_differentiable("ShapeN")

register_op("Rank", inputs=["input: T"], outputs=["output: int32"],
            shape=lambda op: TensorShape([]))


@kernel("Rank")
def _rank_kernel(ctx, x):
    return np.asarray(np.ndim(x), dtype=np.int32)


not_differentiable("Rank")


@tensor_util.register_static_value("Rank")
def _rank_value(op, index):
    n = op.inputs[0].shape.ndims
    return None if n is None else np.asarray(n, dtype=np.int32)


register_op("Size", inputs=["input: T"], outputs=["output: out_type"],
            attrs={"out_type": _OUT_INDEX}, shape=lambda op: TensorShape([]))


@kernel("Size")
def _size_kernel(ctx, x):
    return np.asarray(np.size(x), dtype=ctx.attrs["out_type"].as_numpy_dtype)


not_differentiable("Size")


@tensor_util.register_static_value("Size")
def _size_value(op, index):
    n = op.inputs[0].shape.num_elements()
    return None if n is None else np.asarray(n, dtype=op._get_attr("out_type").as_numpy_dtype)


def _dense_shape_of(value):
    """A SparseTensor's dense_shape (what tf.shape, size and rank of one read), else
    None."""
    from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    return value.dense_shape if isinstance(value, SparseTensor) else None


def _shape_internal(input, name=None, optimize=True, out_type=_dt.int32):  # noqa: A002
    with name_scope(name, "Shape", [input]) as name:
        dense_shape = _dense_shape_of(input)
        if dense_shape is not None:
            from tensorweave.ops.math.math_ops import cast
            return cast(dense_shape, out_type, name=name)
        input = convert_to_tensor(input)
        s = input.shape
        if optimize and s.is_fully_defined():
            return constant(s.as_list(), dtype=out_type, name=name)
        return apply_op("Shape", [input], {"out_type": _dt.as_dtype(out_type)},
                        name=name).outputs[0]


@tf_export("shape")
def shape(input, name: Optional[str] = None, out_type=None) -> Tensor:  # noqa: A002
    """Returns the shape of a tensor (TF1 `tf.shape`).

    A constant when the static shape is fully defined, as in TF1.

    Args:
      input: a Tensor or SparseTensor (its dense shape).
      name: op name.
      out_type: int32 (default) or int64.

    Returns:
      A 1-D Tensor of type `out_type`.
    """
    return _shape_internal(input, name, True, _dt.int32 if out_type is None else out_type)


@tf_export("shape_n")
def shape_n(input, out_type=_dt.int32, name: Optional[str] = None) -> list:  # noqa: A002
    """Returns the shapes of a list of tensors (TF1 `tf.shape_n`).

    Args:
      input: a list of Tensors of one dtype.
      out_type: int32 or int64.
      name: op name.

    Returns:
      A list of 1-D Tensors.
    """
    return list(apply_op("ShapeN", [list(input)], {"out_type": _dt.as_dtype(out_type)},
                         name=name or "ShapeN").outputs)


@tf_export("rank")
def rank(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Returns the rank of a tensor (TF1 `tf.rank`); a constant when it is known.

    Args:
      input: a Tensor.
      name: op name.

    Returns:
      A scalar int32 Tensor.
    """
    with name_scope(name, "Rank", [input]) as name:
        dense_shape = _dense_shape_of(input)
        if dense_shape is not None:
            return apply_op("Size", [dense_shape], {"out_type": _dt.int32},
                            name=name).outputs[0]
        input = convert_to_tensor(input)
        n = input.shape.ndims
        if n is not None:
            return constant(n, dtype=_dt.int32, name=name)
        return apply_op("Rank", [input], name=name).outputs[0]


@tf_export("size")
def size(input, name: Optional[str] = None, out_type=None) -> Tensor:  # noqa: A002
    """Returns the number of elements of a tensor (TF1 `tf.size`).

    Args:
      input: a Tensor.
      name: op name.
      out_type: int32 (default) or int64.

    Returns:
      A scalar Tensor of type `out_type`; a constant when the count is known statically.
    """
    out_type = _dt.int32 if out_type is None else _dt.as_dtype(out_type)
    with name_scope(name, "Size", [input]) as name:
        dense_shape = _dense_shape_of(input)
        if dense_shape is not None:
            from tensorweave.ops.math.math_ops import cast
            from tensorweave.ops.math.reduction_ops import reduce_prod
            return reduce_prod(cast(dense_shape, out_type), 0, name=name)
        input = convert_to_tensor(input)
        s = input.shape
        if s.is_fully_defined():
            return constant(s.num_elements(), dtype=out_type, name=name)
        if s.ndims is not None and 0 in s.as_list():
            return constant(0, dtype=out_type, name=name)
        return apply_op("Size", [input], {"out_type": out_type}, name=name).outputs[0]


# --- Reshape ----------------------------------------------------------------------------
def _reshape_shape(op):
    in_dims = _u.dims_of(op.inputs[0].shape)
    out = _u.shape_from_tensor(op.inputs[1])
    if out.ndims is None or in_dims is None:
        return out
    out_dims = out.as_list()

    def known_product(dims):
        """(product of known dims, index of the one unknown dim or -1, too many unknown);
        a known 0 dim makes the count a known 0 (InferenceContext::NumElements)."""
        if 0 in dims:
            return 0, -1, False
        prod, unknown = 1, -1
        for i, d in enumerate(dims):
            if d is None:
                if unknown >= 0:
                    return prod, unknown, True
                unknown = i
            else:
                prod *= d
        return prod, unknown, False

    out_prod, out_unknown, many_out = known_product(out_dims)
    in_prod, in_unknown, many_in = known_product(in_dims)
    if many_out or many_in:
        return TensorShape(out_dims)
    if in_unknown < 0 and out_unknown < 0:
        if in_prod != out_prod:
            raise ValueError("Cannot reshape a tensor with %d elements to shape %s (%d "
                             "elements)" % (in_prod, _u.shape_str(out_dims), out_prod))
    elif in_unknown < 0 and out_prod > 0:
        if in_prod % out_prod:
            raise ValueError("Dimension size must be evenly divisible by %d but is %d"
                             % (out_prod, in_prod))
        out_dims[out_unknown] = in_prod // out_prod
    elif out_unknown < 0 and in_unknown >= 0 and in_prod != 0:
        if out_prod % in_prod:
            raise ValueError("Dimension size must be evenly divisible by %d but is %d"
                             % (in_prod, out_prod))
    elif in_unknown >= 0 and out_unknown >= 0 and in_prod == out_prod:
        out_dims[out_unknown] = in_dims[in_unknown]
    return TensorShape(out_dims)


register_op("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
            attrs={"Tshape": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_reshape_shape)


@kernel("Reshape")
def _reshape_kernel(ctx, x, sizes):
    host = type(x) is np.ndarray
    if sizes.ndim == 1 and (x.size if host else np.size(x)):
        # Fast path: for non-empty inputs NumPy accepts exactly the shapes TF does; the
        # checks below only produce TF's messages (and TF's zero-size rules). A NumPy
        # array reshapes by its method: np.reshape's dispatch costs more than the work.
        try:
            return x.reshape(sizes.tolist()) if host else ctx.xp.reshape(x, sizes.tolist())
        except ValueError:
            pass
    if sizes.ndim > 1:
        raise _invalid(ctx, "sizes input must be 1-D, not %s" % _shape_text(sizes.shape))
    dims = [int(s) for s in sizes.reshape(-1).tolist()]
    unknown, product, has_zero = -1, 1, False
    for i, d in enumerate(dims):
        if d == -1:
            if unknown != -1:
                raise _invalid(ctx, "Only one input size may be -1, not both %d and %d"
                               % (unknown, i))
            unknown = i
        elif d < 0:
            raise _invalid(ctx, "Size %d must be non-negative, not %d" % (i, d))
        elif d == 0:
            has_zero = True
        else:
            product *= d
    n = int(np.size(x))
    if unknown != -1:
        # Zero-size input dims are left out when the target has a zero dim, so the
        # other dims can still be inferred (TF's rule).
        in_count, in_has_zero = 1, False
        for d in np.shape(x):
            if d > 0 or not has_zero:
                in_count *= d
            else:
                in_has_zero = True
        missing = in_count // product
        if not in_has_zero and missing * product != in_count:
            raise _invalid(ctx, "Input to reshape is a tensor with %d values, but the "
                           "requested shape requires a multiple of %d" % (n, product))
        dims[unknown] = missing
    want = int(np.prod(dims, dtype=np.int64)) if dims else 1
    if want != n:
        raise _invalid(ctx, "Input to reshape is a tensor with %d values, but the requested "
                       "shape has %d" % (n, want))
    return ctx.xp.reshape(x, dims)


@gradient("Reshape")
def _reshape_grad(op, grad):
    from tensorweave.framework.indexed_slices import IndexedSlices
    if isinstance(grad, IndexedSlices):
        # densified without the memory warning, as TF1's reshape gradient does (a sharded
        # embedding lookup's result is reshaped: its rows, not the table, are densified)
        from tensorweave.ops.math import segment_ops
        grad = segment_ops.unsorted_segment_sum(grad.values, grad.indices,
                                                grad.dense_shape[0])
    return [reshape(grad, shape(op.inputs[0])), None]


@tf_export("reshape", "manip.reshape")
def reshape(tensor, shape, name: Optional[str] = None) -> Tensor:  # noqa: F811
    """Reshapes a tensor (TF1 `tf.reshape`).

    Args:
      tensor: a Tensor.
      shape: a 1-D int32/int64 Tensor or list; one entry may be -1 (inferred).
      name: op name.

    Returns:
      A Tensor with the values of `tensor` in the new shape.

    Raises:
      ValueError: the element counts are known to differ at build time.
    """
    return apply_op("Reshape", [tensor, shape], name=name or "Reshape").outputs[0]


# --- ExpandDims, Squeeze -----------------------------------------------------------------
def _expand_dims_shape(op):
    dim = _u.const_value(op.inputs[1])
    if dim is not None and np.size(dim) != 1:
        raise ValueError("'dim' input must be a tensor with a single value")
    in_dims = _u.dims_of(op.inputs[0].shape)
    if dim is None or in_dims is None:
        return unknown_shape()
    d, r = int(np.asarray(dim).reshape(())), len(in_dims)
    if d < -r - 1 or d > r:
        raise ValueError("dim %d not in the interval [%d, %d]." % (d, -r - 1, r))
    if d < 0:
        d += r + 1
    return TensorShape(in_dims[:d] + [1] + in_dims[d:])


register_op("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
            attrs={"Tdim": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_expand_dims_shape)


@kernel("ExpandDims")
def _expand_dims_kernel(ctx, x, dim):
    if np.size(dim) != 1:
        raise _invalid(ctx, "'dim' must be a tensor with a single value")
    d, r = int(np.asarray(dim).reshape(())), np.ndim(x)
    if d < -1 - r or d > r:
        raise _invalid(ctx, "Tried to expand dim index %d for tensor with %d dimensions."
                       % (d, r))
    return ctx.xp.expand_dims(x, d if d >= 0 else d + r + 1)


@gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [reshape(grad, shape(op.inputs[0])), None]


def _lookup_deprecated(name, value, old_name, old_value):
    if value is not None and old_value is not None:
        raise ValueError("Cannot specify both '%s' and '%s'." % (old_name, name))
    return value if value is not None else old_value


@tf_export("expand_dims")
def expand_dims(input, axis=None, name: Optional[str] = None, dim=None) -> Tensor:  # noqa: A002
    """Inserts a dimension of size 1 (TF1 `tf.expand_dims`).

    Args:
      input: a Tensor.
      axis: scalar index in [-rank(input) - 1, rank(input)].
      name: op name.
      dim: deprecated alias of `axis`.

    Returns:
      A Tensor with one more dimension.

    Raises:
      ValueError: neither or both of `axis` and `dim` given.
    """
    axis = _lookup_deprecated("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", [input, axis], name=name or "ExpandDims").outputs[0]


def _squeeze_shape(op):
    in_dims = _u.dims_of(op.inputs[0].shape)
    if in_dims is None:
        return unknown_shape()
    r = len(in_dims)
    wanted = []
    for d in op._get_attr("squeeze_dims"):
        if d < -r or d >= r:
            raise ValueError("squeeze_dims[%d] not in [%d,%d)." % (len(wanted), -r, r))
        wanted.append(d + r if d < 0 else d)
    out = []
    for i, d in enumerate(in_dims):
        explicit = i in wanted
        if d is None:
            if explicit:
                continue
            if not wanted:
                return unknown_shape()
        elif d == 1:
            if explicit or not wanted:
                continue
        elif explicit:
            raise ValueError("Can not squeeze dim[%d], expected a dimension of 1, got %d"
                             % (i, d))
        out.append(d)
    return TensorShape(out)


register_op("Squeeze", inputs=["input: T"], outputs=["output: T"],
            attrs={"squeeze_dims": []}, shape=_squeeze_shape)


@kernel("Squeeze")
def _squeeze_kernel(ctx, x):
    r = np.ndim(x)
    dims = []
    for d in ctx.attrs["squeeze_dims"]:
        if d < -r or d >= r:
            raise _invalid(ctx, "Tried to squeeze dim index %d for tensor with %d dimensions."
                           % (d, r))
        d = d + r if d < 0 else d
        if x.shape[d] != 1:
            raise _invalid(ctx, "Can not squeeze dim[%d], expected a dimension of 1, got %d"
                           % (d, x.shape[d]))
        dims.append(d)
    if not ctx.attrs["squeeze_dims"]:
        dims = [i for i, n in enumerate(np.shape(x)) if n == 1]
    return ctx.xp.squeeze(x, axis=tuple(sorted(set(dims))))


@gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [reshape(grad, shape(op.inputs[0]))]


@tf_export("squeeze")
def squeeze(input, axis=None, name: Optional[str] = None,  # noqa: A002
            squeeze_dims=None) -> Tensor:
    """Removes dimensions of size 1 (TF1 `tf.squeeze`).

    Args:
      input: a Tensor.
      axis: an int or list of ints; only these dims are removed (each must be 1).
        All size-1 dims are removed when empty or None.
      name: op name.
      squeeze_dims: deprecated alias of `axis`.

    Returns:
      A Tensor.

    Raises:
      ValueError: both `axis` and `squeeze_dims` given, or a named dim is not 1.
    """
    axis = _lookup_deprecated("axis", axis, "squeeze_dims", squeeze_dims)
    if axis is None:
        axis = []
    elif np.isscalar(axis):
        axis = [axis]
    return apply_op("Squeeze", [input], {"squeeze_dims": [int(a) for a in axis]},
                    name=name or "Squeeze").outputs[0]


# --- Transpose, ConjugateTranspose, InvertPermutation -----------------------------------
def _transpose_shape(op):
    in_dims = _u.dims_of(op.inputs[0].shape)
    perm_t = op.inputs[1]
    perm_dims = _u.dims_of(perm_t.shape)
    perm_len = perm_dims[0] if perm_dims is not None and len(perm_dims) == 1 else None
    perm = _u.const_ints(perm_t)
    if in_dims is None and perm_len is None and perm is None:
        return unknown_shape()
    r = len(in_dims) if in_dims is not None else perm_len if perm_len is not None \
        else len(perm)
    if in_dims is None and r < 2:
        return op.inputs[0].shape
    in_dims = _u.with_rank(in_dims, r)
    perm_dims = _u.with_rank(perm_dims, 1)
    if perm_dims[0] is not None and perm_dims[0] != r:
        raise ValueError("Dimension must be %d but is %d" % (r, perm_dims[0]))
    if perm is None:
        return unknown_shape(r)
    out = []
    for p in perm[:r]:
        if p >= r or p < -r:
            raise ValueError("perm dim %d is out of range of input rank %d" % (p, r))
        out.append(in_dims[p])
    return TensorShape(out)


_TPERM = TypeAttr(_u.INDEX_TYPES, default=_dt.int32)
for _name in ("Transpose", "ConjugateTranspose"):
    register_op(_name, inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                attrs={"Tperm": _TPERM}, shape=_transpose_shape)


def _check_perm(ctx, x, perm):
    r = np.ndim(x)
    if np.ndim(perm) != 1:
        raise _invalid(ctx, "perm must be rank 1, got shape %s" % _shape_text(perm.shape))
    if perm.shape[0] != r:
        raise _invalid(ctx, "transpose expects a vector of size %d. But input(1) is a vector "
                       "of size %d" % (r, perm.shape[0]))
    # like TF's kernel, a negative entry counts from the end (the shape function agrees)
    p = [int(v) + r if int(v) < 0 else int(v) for v in perm.tolist()]
    for d in p:
        if d < 0 or d >= r:
            raise _invalid(ctx, "%d is out of range [0 .. %d)" % (d, r))
    for i in range(r):
        if i not in p:
            raise _invalid(ctx, "%d is missing from {%s}." % (i, ",".join(map(str, p))))
    return p


@kernel("Transpose")
def _transpose_kernel(ctx, x, perm):
    return ctx.xp.transpose(x, _check_perm(ctx, x, perm))


@kernel("ConjugateTranspose")
def _conjugate_transpose_kernel(ctx, x, perm):
    return ctx.xp.conj(ctx.xp.transpose(x, _check_perm(ctx, x, perm)))


@gradient("Transpose")
def _transpose_grad(op, grad):
    return [transpose(grad, invert_permutation(op.inputs[1])), None]


@gradient("ConjugateTranspose")
def _conjugate_transpose_grad(op, grad):
    return [transpose(grad, invert_permutation(op.inputs[1]), conjugate=True), None]


@tf_export("transpose")
def transpose(a, perm=None, name: str = "transpose", conjugate: bool = False) -> Tensor:
    """Permutes the dimensions of a tensor (TF1 `tf.transpose`).

    Args:
      a: a Tensor.
      perm: a permutation of the dimensions; reverses them when None.
      name: op name.
      conjugate: if True and `a` is complex, also conjugates (ConjugateTranspose).

    Returns:
      The transposed Tensor.
    """
    with name_scope(name, "transpose", [a]) as name:
        a = convert_to_tensor(a, name="a")
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        if perm is not None:
            return apply_op(op_type, [a, perm], name=name).outputs[0]
        ndims = a.shape.ndims
        if ndims is None:
            from tensorweave.ops.math import math_binary, math_ops
            r = rank(a)
            perm = math_binary.subtract(math_binary.subtract(r, 1), math_ops.range(0, r, 1))
        else:
            perm = np.arange(ndims - 1, -1, -1, dtype=np.int32)
        ret = apply_op(op_type, [a, perm], name=name).outputs[0]
        if ndims is not None:
            ret.set_shape(a.shape.as_list()[::-1])
        return ret


def _invert_permutation_shape(op):
    return TensorShape(_u.with_rank(_u.dims_of(op.inputs[0].shape), 1))


register_op("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
            attrs={"T": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_invert_permutation_shape)


@kernel("InvertPermutation")
def _invert_permutation_kernel(ctx, x):
    if np.ndim(x) != 1:
        raise _invalid(ctx, "invert_permutation expects a 1D vector.")
    n = x.shape[0]
    bad = (x < 0) | (x >= n)
    if bad.any():
        raise _invalid(ctx, "%d is not between 0 and %d" % (int(x[bad][0]), n))
    out = np.full(n, -1, dtype=x.dtype)
    out[x] = np.arange(n, dtype=x.dtype)
    if (out < 0).any():
        counts = np.bincount(x, minlength=n)
        raise _invalid(ctx, "%d is duplicated in the input." % int(np.argmax(counts > 1)))
    return out


not_differentiable("InvertPermutation")


@tf_export("invert_permutation", "math.invert_permutation")
def invert_permutation(x, name: Optional[str] = None) -> Tensor:
    """Computes the inverse permutation of a 1-D int32/int64 tensor.

    Args:
      x: a 1-D Tensor holding a permutation of 0..n-1.
      name: op name.

    Returns:
      A Tensor `y` with `y[x[i]] = i`.
    """
    return apply_op("InvertPermutation", [x], name=name or "InvertPermutation").outputs[0]


# TF keeps these in array_ops too; other families call them through this module.
def where(condition, x=None, y=None, name: Optional[str] = None) -> Tensor:
    """Forwards to `tf.where` (defined with the selection ops)."""
    from tensorweave.ops.indexing import indexing_select
    return indexing_select.where(condition, x, y, name=name)


def cast(x, dtype, name: Optional[str] = None) -> Tensor:
    """Forwards to `tf.cast` (defined with the math ops)."""
    from tensorweave.ops.math import math_ops
    return math_ops.cast(x, dtype, name=name)
