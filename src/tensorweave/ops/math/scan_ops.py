"""ArgMax/ArgMin and the scans Cumsum/Cumprod (part of the reduction family)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape

_INDEX_TYPES = (_dt.int32, _dt.int64)
_LOW_PRECISION = (np.dtype(np.float16), np.dtype(_dt.bfloat16.as_numpy_dtype))


# --- ArgMax / ArgMin ---------------------------------------------------------------------
def _arg_shape(op) -> TensorShape:
    x_shape = op.inputs[0].shape
    dim_t = op.inputs[1]
    if dim_t.shape.ndims is not None and dim_t.shape.ndims != 0:
        raise ValueError("Shape must be rank 0 but is rank %d" % dim_t.shape.ndims)
    rank = x_shape.ndims
    dim = tensor_util.constant_value(dim_t)
    if rank is None:
        return unknown_shape()
    if rank == 0:
        return TensorShape([])
    if dim is None:
        return unknown_shape(rank - 1)
    d = int(dim)
    if d < -rank or d >= rank:
        raise ValueError("Dimension (%d) must be in the range [%d, %d), where %d is the number "
                         "of dimensions in the input." % (d, -rank, rank, rank))
    dims = x_shape.as_list()
    del dims[d % rank]
    return TensorShape(dims)


def _register_arg(op_type: str, np_fn, loser: float) -> None:
    register_op(op_type, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                # TF registers no complex ArgMax/ArgMin: complex inputs fail at build time
                attrs={"T": TypeAttr(_dt.REAL_NUMBERS + (_dt.bool,)),
                       "Tidx": TypeAttr(_INDEX_TYPES + (_dt.int16,), default=_dt.int32),
                       "output_type": TypeAttr((_dt.int16, _dt.uint16, _dt.int32, _dt.int64),
                                               default=_dt.int64)},
                shape=_arg_shape)

    def _kernel(ctx, x, dim):
        if np.ndim(dim) != 0:
            raise errors.InvalidArgumentError(
                None, ctx.op, "dim must be a scalar, but received tensor of shape: %s"
                % list(np.shape(dim)))
        d = int(dim)
        rank = x.ndim
        if d < -rank or d >= rank:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Expected dimension in the range [%d, %d), but got %d"
                % (-rank, rank, d))
        d %= rank
        if x.shape[d] == 0:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Reduction axis %d is empty in shape [%s]"
                % (d, ",".join(str(s) for s in x.shape)))
        out_dtype = ctx.attrs["output_type"].as_numpy_dtype
        if x.dtype.kind == "f":
            # TF's comparisons never pick a NaN (an all-NaN slice gives 0): NaNs count
            # as the value that loses
            nan = ctx.xp.isnan(x)
            if nan.any():
                x = ctx.xp.where(nan, x.dtype.type(loser), x)
        return ctx.xp.asarray(np_fn(x, axis=d)).astype(out_dtype, copy=False)
    kernel(op_type)(_kernel)
    not_differentiable(op_type)


_register_arg("ArgMax", np.argmax, -np.inf)
_register_arg("ArgMin", np.argmin, np.inf)


def _arg(op_type, input, axis, name, dimension, output_type):  # noqa: A002
    if axis is not None and dimension is not None:
        raise ValueError("Cannot specify both 'dimension' and 'axis'.")
    axis = dimension if axis is None else axis
    if axis is None:
        axis = 0
    if not (isinstance(axis, Tensor) or hasattr(axis, "_as_graph_element")):
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
            # TF checks argmax's Python axis only: argmin's goes to the op, whose
            # shape function rejects a list (ValueError)
            if op_type == "ArgMax":
                raise TypeError("axis must be int or Tensor with integer datatype")
        else:
            axis = np.int64(axis) if not -2**31 <= int(axis) < 2**31 else np.int32(axis)
    return apply_op(op_type, [input, axis], {"output_type": output_type},
                    name=name or op_type).outputs[0]


@tf_export("argmax", "math.argmax")
def argmax(input, axis=None, name: Optional[str] = None, dimension=None,  # noqa: A002
           output_type=_dt.int64) -> Tensor:
    """Returns the index of the largest value across an axis (TF1 `tf.argmax`).

    Ties resolve to the smallest index.

    Args:
      input: a real numeric or bool tensor.
      axis: the axis to reduce (int or scalar int tensor); defaults to 0.
      name: a name for the operation.
      dimension: the deprecated name of `axis`.
      output_type: int16, uint16, int32 or int64 (default).

    Returns:
      A tensor of `output_type` with `axis` removed.

    Raises:
      ValueError: both `axis` and `dimension`, or an axis out of range at build time.
      TypeError: `axis` is not an int or an integer tensor.
    """
    return _arg("ArgMax", input, axis, name, dimension, output_type)


@tf_export("argmin", "math.argmin")
def argmin(input, axis=None, name: Optional[str] = None, dimension=None,  # noqa: A002
           output_type=_dt.int64) -> Tensor:
    """Returns the index of the smallest value across an axis (TF1 `tf.argmin`).

    Takes the arguments of `argmax`.
    """
    return _arg("ArgMin", input, axis, name, dimension, output_type)


@tf_export("arg_max")
def arg_max(input, dimension, output_type=_dt.int64,  # noqa: A002
            name: Optional[str] = None) -> Tensor:
    """The raw ArgMax op (TF1 `tf.arg_max`, deprecated): index of the largest value."""
    return apply_op("ArgMax", [input, dimension], {"output_type": _dt.as_dtype(output_type)},
                    name=name or "ArgMax").outputs[0]


@tf_export("arg_min")
def arg_min(input, dimension, output_type=_dt.int64,  # noqa: A002
            name: Optional[str] = None) -> Tensor:
    """The raw ArgMin op (TF1 `tf.arg_min`, deprecated): index of the smallest value."""
    return apply_op("ArgMin", [input, dimension], {"output_type": _dt.as_dtype(output_type)},
                    name=name or "ArgMin").outputs[0]


# --- Cumsum / Cumprod ---------------------------------------------------------------------
def _scan_shape(op) -> TensorShape:
    ax = op.inputs[1].shape
    if ax.ndims is not None and ax.ndims > 1:
        raise ValueError("Shape must be at most rank 1 but is rank %d" % ax.ndims)
    return op.inputs[0].shape


def _register_scan(op_type: str, np_fn, identity, types=_dt.NUMBERS) -> None:
    register_op(op_type, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                attrs={"T": TypeAttr(types),
                       "Tidx": TypeAttr(_INDEX_TYPES, default=_dt.int32),
                       "exclusive": False, "reverse": False},
                shape=_scan_shape)

    def _kernel(ctx, x, axis):
        xp = ctx.xp
        if np.ndim(axis) != 0:
            raise errors.InvalidArgumentError(
                None, ctx.op, "ScanOp: axis must be a scalar, not [%s]"
                % ",".join(str(s) for s in np.shape(axis)))
        a = int(axis)
        rank = x.ndim
        if a < -rank or a >= rank:
            raise errors.InvalidArgumentError(
                None, ctx.op, "ScanOp: Expected scan axis in the range [%d, %d), but got %d"
                % (-rank, rank, a))
        a %= rank
        reverse, exclusive = ctx.attrs["reverse"], ctx.attrs["exclusive"]
        acc = np.float32 if x.dtype in _LOW_PRECISION else x.dtype
        y = xp.flip(x, a) if reverse else x
        if exclusive:
            # the scan of [identity, y[:-1]]
            out = xp.empty(y.shape, dtype=acc)
            first = [slice(None)] * rank
            rest = list(first)
            first[a] = slice(0, 1)
            rest[a] = slice(1, None)
            head = list(first)
            head[a] = slice(0, -1)
            out[tuple(first)] = identity
            np_fn(y[tuple(head)], axis=a, dtype=acc, out=out[tuple(rest)])
        else:
            out = np_fn(y, axis=a, dtype=acc)
        if reverse:
            out = xp.flip(out, a)
        return out.astype(x.dtype, copy=False)
    kernel(op_type)(_kernel)


_register_scan("Cumsum", np.cumsum, 0)
_register_scan("Cumprod", np.cumprod, 1)
# log(sum(exp)) scan: logaddexp never overflows; the empty sum is log(0) = -inf
_register_scan("CumulativeLogsumexp", np.logaddexp.accumulate, -np.inf,
               (_dt.float16, _dt.float32, _dt.float64))


def _scan(op_type, x, axis, exclusive, reverse, name):
    x = convert_to_tensor(x, name="x")
    if not (isinstance(axis, Tensor) or hasattr(axis, "_as_graph_element")):
        axis = np.asarray(axis)
        if axis.dtype.kind in "iu" and axis.dtype != np.int64:
            axis = axis.astype(np.int32)
    return apply_op(op_type, [x, axis], {"exclusive": bool(exclusive),
                                         "reverse": bool(reverse)},
                    name=name or op_type).outputs[0]


@tf_export("cumsum", "math.cumsum")
def cumsum(x, axis=0, exclusive: bool = False, reverse: bool = False,
           name: Optional[str] = None) -> Tensor:
    """Computes the cumulative sum of `x` along `axis` (TF1 `tf.cumsum`).

    `exclusive=True` shifts the sums by one (the first output is 0); `reverse=True` sums
    from the end.

    Args:
      x: a numeric tensor.
      axis: a scalar int32/int64 axis in `[-rank(x), rank(x))`; default 0.
      exclusive: exclusive scan.
      reverse: scan in the opposite direction.
      name: a name for the operation.

    Returns:
      A tensor of the shape and dtype of `x`.
    """
    return _scan("Cumsum", x, axis, exclusive, reverse, name)


@tf_export("cumprod", "math.cumprod")
def cumprod(x, axis=0, exclusive: bool = False, reverse: bool = False,
            name: Optional[str] = None) -> Tensor:
    """Computes the cumulative product of `x` along `axis` (TF1 `tf.cumprod`).

    `exclusive=True` shifts the products by one (the first output is 1); `reverse=True`
    multiplies from the end. Takes the arguments of `cumsum`.
    """
    return _scan("Cumprod", x, axis, exclusive, reverse, name)


@gradient("Cumsum")
def _cumsum_grad(op, grad):
    return [cumsum(grad, op.inputs[1], exclusive=op._get_attr("exclusive"),
                   reverse=not op._get_attr("reverse")), None]


@gradient("Cumprod")
def _cumprod_grad(op, grad):
    # TF's rule: d/dx_i of prod_j<=i x_j is (prod_j<=i x_j) / x_i, 0 where x_i is 0
    # (div_no_nan, as TF: wrong there, but finite); conjugated for complex inputs, as
    # every complex gradient (TF forgets it here)
    from tensorweave.ops.math import math_binary, math_unary
    x, axis = op.inputs[0], op.inputs[1]
    exclusive, reverse = op._get_attr("exclusive"), op._get_attr("reverse")
    prod = math_unary._conj(op.outputs[0])
    out = cumsum(math_binary.multiply(prod, grad), axis, exclusive=exclusive,
                 reverse=not reverse)
    return [math_binary.div_no_nan(out, math_unary._conj(x)), None]


@tf_export("math.cumulative_logsumexp")
def cumulative_logsumexp(x, axis=0, exclusive: bool = False, reverse: bool = False,
                         name: Optional[str] = None) -> Tensor:
    """Computes log(cumsum(exp(x))) along `axis` without overflow
    (TF1 `tf.math.cumulative_logsumexp`).

    `exclusive=True` shifts the results by one (the first output is -inf);
    `reverse=True` scans from the end.

    Args:
      x: a float16/float32/float64 tensor.
      axis: a scalar int32/int64 axis in `[-rank(x), rank(x))`; default 0.
      exclusive: exclusive scan.
      reverse: scan in the opposite direction.
      name: a name for the operation.

    Returns:
      A tensor of the shape and dtype of `x`.

    Raises:
      TypeError: `x` is not a float16/float32/float64 tensor.
    """
    return _scan("CumulativeLogsumexp", x, axis, exclusive, reverse, name)


@gradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(op, grad):
    # y_i = log sum_{j in scan(i)} exp(x_j), so dx_j = exp(x_j) sum_{i: j in scan(i)}
    # grad_i exp(-y_i): a reversed scan, done in log space separately for the positive
    # and the negative part of grad so that nothing overflows.
    from tensorweave.ops.indexing import indexing_select
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_unary
    x, axis = op.inputs[0], op.inputs[1]
    y = op.outputs[0]
    exclusive, reverse = op._get_attr("exclusive"), op._get_attr("reverse")
    zero = convert_to_tensor(0, dtype=grad.dtype)
    minus_inf = array_ops.fill(array_ops.shape(grad), convert_to_tensor(-np.inf,
                                                                        dtype=grad.dtype))
    # an output of -inf (an empty exclusive prefix) depends on no finite input
    empty = math_binary.equal(y, convert_to_tensor(-np.inf, dtype=y.dtype))
    parts = []
    for mask, magnitude in ((math_binary.greater(grad, zero), grad),
                            (math_binary.less(grad, zero), math_unary.negative(grad))):
        safe = indexing_select.where(mask, magnitude, array_ops.ones_like(grad))
        log_g = indexing_select.where(mask, math_unary.log(safe), minus_inf)
        log_g = indexing_select.where(empty, minus_inf, math_binary.subtract(log_g, y))
        scanned = cumulative_logsumexp(log_g, axis,
                                       exclusive=exclusive, reverse=not reverse)
        parts.append(math_unary.exp(math_binary.add(scanned, x)))
    return [math_binary.subtract(parts[0], parts[1]), None]
