"""Segment reductions over rows picked by indices: SparseSegmentSum/Mean/SqrtN and their
WithNumSegments forms, with SparseSegmentMeanGrad and SparseSegmentSqrtNGrad (TF1
`tf.sparse.segment_sum`, `segment_mean`, `segment_sqrt_n`)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.array import array_util as _u
from tensorweave.ops.indexing.indexing_ops import outside
from tensorweave.ops.sparse import sparse_util as _su

_INDEX = TypeAttr(_u.INDEX_TYPES, default=_dt.int32)
_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def _segment_shape(op):
    data, indices, ids = op.inputs[:3]
    indices.shape.with_rank(1)
    ids.shape.with_rank(1)
    if data.shape.ndims is None:
        return unknown_shape()
    rows = None
    if len(op.inputs) == 4:
        op.inputs[3].shape.with_rank(0)
        rows = _u.const_int(op.inputs[3])
    return TensorShape([rows]).concatenate(data.shape.with_rank_at_least(1)[1:])


def _check(ctx, data, indices, ids) -> bool:
    """Raises TF's error for bad inputs; returns whether the segment ids rise strictly
    (one row per segment)."""
    if indices.ndim != 1:
        raise _su.invalid(ctx, "indices should be a vector.")
    if ids.ndim != 1:
        raise _su.invalid(ctx, "segment_ids should be a vector.")
    if indices.shape[0] != ids.shape[0]:
        raise _su.invalid(ctx, "segment_ids and indices should have same size.")
    if data.ndim < 1:
        raise _su.invalid(ctx, "Shape must be at least rank 1")
    if outside(indices, data.shape[0]):
        i = int(np.flatnonzero((indices < 0) | (indices >= data.shape[0]))[0])
        raise _su.invalid(ctx, "Bad: indices[%d] == %d out of range [0, %d)"
                          % (i, int(indices[i]), data.shape[0]))
    if ids.size < 2 or (ids[1:] > ids[:-1]).all():
        return True
    if (ids[1:] < ids[:-1]).any():
        raise _su.invalid(ctx, "segment ids are not increasing")
    return False


def _segment_kernel(kind: str):
    def body(ctx, data, indices, ids, num=None):
        one_row_each = _check(ctx, data, indices, ids)
        n = int(ids[-1]) + 1 if ids.size else 0
        if num is not None:
            n_given = int(num)
            if ids.size and (ids[-1] >= n_given or ids[0] < 0):
                bad = int(ids[-1] if ids[-1] >= n_given else ids[0])
                raise _su.invalid(ctx, "Segment id %d out of range [0, %d), possibly because "
                                  "'segment_ids' input is not sorted." % (bad, n_given))
            n = n_given
        elif ids.size and ids[0] < 0:
            raise _su.invalid(ctx, "segment ids must be >= 0")
        out = np.zeros((n,) + data.shape[1:], dtype=data.dtype)
        if one_row_each:
            # one row per segment (one id per example): each output row is 0 + its data
            # row (the 0 + turns -0.0 into 0.0, as the sum does) and every count is 1,
            # so the mean's and sqrt-n's division by 1 leaves it as it is
            out[ids] = data[indices] + data.dtype.type(0)
            return ctx.xp.asarray(out)
        np.add.at(out, ids, data[indices])
        if kind != "Sum":
            count = np.bincount(ids, minlength=n).astype(np.float64)
            scale = np.maximum(count, 1.0) if kind == "Mean" else \
                np.sqrt(np.maximum(count, 1.0))
            out = (out / scale.reshape((-1,) + (1,) * (data.ndim - 1))).astype(data.dtype)
        return ctx.xp.asarray(out)
    return body


for _kind, _types in (("Sum", _dt.REAL_NUMBERS), ("Mean", _FLOATS), ("SqrtN", _FLOATS)):
    _attrs = {"T": TypeAttr(_types), "Tidx": _INDEX, "Tsegmentids": _INDEX}
    _in = ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"]
    register_op("SparseSegment" + _kind, inputs=_in, outputs=["output: T"], attrs=_attrs,
                shape=_segment_shape)
    register_op("SparseSegment%sWithNumSegments" % _kind,
                inputs=_in + ["num_segments: Tnumsegments"], outputs=["output: T"],
                attrs=dict(_attrs, Tnumsegments=_INDEX), shape=_segment_shape)
    kernel("SparseSegment" + _kind)(_segment_kernel(_kind))
    kernel("SparseSegment%sWithNumSegments" % _kind)(_segment_kernel(_kind))


# --- gradients ------------------------------------------------------------------------------
def _scaled_grad_kernel(kind: str):
    def body(ctx, grad, indices, ids, output_dim0):
        rows = int(output_dim0)
        if indices.shape != ids.shape or indices.ndim != 1:
            raise _su.invalid(ctx, "segment_ids and indices should have same size.")
        if outside(ids, grad.shape[0]):
            raise _su.invalid(ctx, "Segment id out of range [0, %d)" % grad.shape[0])
        if outside(indices, rows):
            raise _su.invalid(ctx, "Index out of range [0, %d)" % rows)
        part = grad[ids]
        count = np.bincount(ids, minlength=grad.shape[0])
        if kind != "Sum" and count.size and count.max() > 1:
            # (with no segment of more than one row every scale is 1: nothing to divide)
            scale = np.maximum(count.astype(np.float64), 1.0)
            if kind == "SqrtN":
                scale = np.sqrt(scale)
            part = part / scale[ids].reshape((-1,) + (1,) * (grad.ndim - 1))
            part = part.astype(grad.dtype)
        out = np.zeros((rows,) + grad.shape[1:], dtype=grad.dtype)
        np.add.at(out, indices, part)
        return ctx.xp.asarray(out)
    return body


# (SumGrad is the op TF 2's gradient builds: graphs TF wrote hold it; ours adds a
# segment sum instead)
for _kind in ("Sum", "Mean", "SqrtN"):
    register_op("SparseSegment%sGrad" % _kind,
                inputs=["grad: T", "indices: Tidx", "segment_ids: Tsegmentids",
                        "output_dim0: int32"],
                outputs=["output: T"],
                attrs={"T": TypeAttr(_FLOATS), "Tidx": _INDEX, "Tsegmentids": _INDEX},
                shape=lambda op: TensorShape([_u.const_int(op.inputs[3])]).concatenate(
                    op.inputs[0].shape[1:]) if op.inputs[0].shape.ndims is not None
                else unknown_shape())
    kernel("SparseSegment%sGrad" % _kind)(_scaled_grad_kernel(_kind))
    not_differentiable("SparseSegment%sGrad" % _kind)


def _rows_of(data) -> Tensor:
    from tensorweave.ops.array import array_ops
    return array_ops.shape(data, out_type=_dt.int32)[0]


def _sum_grad(op, grad):
    from tensorweave.ops.indexing.indexing_gather import gather
    from tensorweave.ops.math.segment_ops import unsorted_segment_sum
    data, indices, ids = op.inputs[:3]
    dx = unsorted_segment_sum(gather(grad, ids), indices, _rows_of(data))
    return [dx, None, None] + [None] * (len(op.inputs) - 3)


def _scaled_grad(kind):
    def grad_fn(op, grad):
        data, indices, ids = op.inputs[:3]
        dx = apply_op("SparseSegment%sGrad" % kind, [grad, indices, ids,
                                                     _rows_of(data)]).outputs[0]
        return [dx, None, None] + [None] * (len(op.inputs) - 3)
    return grad_fn


for _suffix in ("", "WithNumSegments"):
    gradient("SparseSegmentSum" + _suffix)(_sum_grad)
    gradient("SparseSegmentMean" + _suffix)(_scaled_grad("Mean"))
    gradient("SparseSegmentSqrtN" + _suffix)(_scaled_grad("SqrtN"))


# --- builders ---------------------------------------------------------------------------
def _segment_builder(kind: str, data, indices, segment_ids, name, num_segments):
    data = convert_to_tensor(data, name="data")
    if num_segments is None:
        return apply_op("SparseSegment" + kind, [data, indices, segment_ids],
                        name=name or "SparseSegment" + kind).outputs[0]
    op_type = "SparseSegment%sWithNumSegments" % kind
    return apply_op(op_type, [data, indices, segment_ids, num_segments],
                    name=name or op_type).outputs[0]


_DOC = """The {what} of `data[indices]` within each segment of `segment_ids` (TF1
    `tf.sparse.segment_{name}`).

    Args:
      data: a Tensor of rank >= 1.
      indices: 1-D int32/int64: the rows of `data` taken.
      segment_ids: 1-D int32/int64 of the size of `indices`, sorted: the segment of each
        taken row.
      name: op name.
      num_segments: optional scalar: the number of output rows (default: the last
        segment id + 1).

    Returns:
      A Tensor [segments] + data.shape[1:]; an empty segment is 0.

    Raises:
      InvalidArgumentError (at run time): an index out of range or unsorted segment ids.
    """


def _export(kind: str, py: str, what: str, names):
    def build(data, indices, segment_ids, name: Optional[str] = None,
              num_segments=None) -> Tensor:
        return _segment_builder(kind, data, indices, segment_ids, name, num_segments)
    build.__name__ = build.__qualname__ = "sparse_segment_" + py
    build.__doc__ = _DOC.format(what=what, name=py)
    return tf_export(*names)(build)


sparse_segment_sum = _export("Sum", "sum", "sum",
                             ("sparse.segment_sum", "sparse_segment_sum"))
sparse_segment_mean = _export("Mean", "mean", "mean",
                              ("sparse.segment_mean", "sparse_segment_mean"))
sparse_segment_sqrt_n = _export("SqrtN", "sqrt_n", "sum divided by sqrt(count)",
                                ("sparse.segment_sqrt_n", "sparse_segment_sqrt_n"))
