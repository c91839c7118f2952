"""Summary ops for numbers and tensors: ScalarSummary, HistogramSummary, TensorSummaryV2
(and the older TensorSummary), MergeSummary, and the TF1 builders
`tf.summary.scalar/histogram/text/tensor_summary/merge/merge_all` and
`get_summary_description`.

Each kernel returns one serialized `Summary` protocol buffer (TensorBoard's
`summary_pb2`, imported on first run) as a scalar string. Histograms use TF's default
buckets: limits growing by 10% from 1e-12 to 1e20, mirrored for negative values, with
0 in the middle and +-DBL_MAX at the ends; runs of empty buckets are written as one.
"""
from __future__ import annotations

import functools
import sys
from typing import List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor, get_collection, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.summary import summary_util as _util

# TF's RealNumberTypes, the dtypes ScalarSummary and HistogramSummary accept.
REAL_NUMBER_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.uint8, _dt.int16, _dt.int8,
                     _dt.int64, _dt.bfloat16, _dt.uint16, _dt.float16, _dt.uint32,
                     _dt.uint64)
_DBL_MAX = sys.float_info.max


def _scalar_shape(op) -> TensorShape:
    return TensorShape([])


register_op("ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
            attrs={"T": TypeAttr(REAL_NUMBER_TYPES)}, shape=_scalar_shape)
register_op("HistogramSummary", inputs=["tag: string", "values: T"],
            outputs=["summary: string"],
            attrs={"T": TypeAttr(REAL_NUMBER_TYPES, default=_dt.float32)}, shape=_scalar_shape)
register_op("TensorSummaryV2", inputs=["tag: string", "tensor: T",
                                       "serialized_summary_metadata: string"],
            outputs=["summary: string"], attrs={"T": TypeAttr()}, shape=_scalar_shape)
register_op("TensorSummary", inputs=["tensor: T"], outputs=["summary: string"],
            attrs={"T": TypeAttr(), "description": "", "labels": [], "display_name": ""},
            shape=_scalar_shape)
register_op("MergeSummary", inputs=["inputs: N * string"], outputs=["summary: string"],
            attrs={"N": 1}, shape=_scalar_shape)
for _op_type in ("ScalarSummary", "HistogramSummary", "TensorSummaryV2", "TensorSummary",
                 "MergeSummary"):
    not_differentiable(_op_type)


# --- kernels ------------------------------------------------------------------------------
@kernel("ScalarSummary")
def _scalar_summary_kernel(ctx, tags, values):
    if np.shape(tags) != np.shape(values):
        single = (" (tag '%s')" % _util.as_text(np.asarray(tags, dtype=object).item())
                  if np.ndim(tags) == 0 else "")
        raise errors.InvalidArgumentError(
            None, ctx.op, "tags and values are not the same shape: %s != %s%s"
            % (_util.shape_str(np.shape(tags)), _util.shape_str(np.shape(values)), single))
    pb = _util.summary_pb2()
    summary = pb.Summary()
    flat_values = np.asarray(values, dtype=np.float64).reshape(-1).tolist()
    for tag, value in zip(np.asarray(tags, dtype=object).reshape(-1), flat_values):
        summary.value.add(tag=_util.as_text(tag), simple_value=value)
    return _util.serialized(summary)


@functools.lru_cache(maxsize=1)
def default_bucket_limits() -> np.ndarray:
    """TF's default histogram bucket limits (float64, ascending, 1551 of them)."""
    positive = []
    v = 1.0e-12
    while v < 1.0e20:  # each limit is the previous times 1.1, in double arithmetic
        positive.append(v)
        v *= 1.1
    positive.append(_DBL_MAX)
    pos = np.array(positive, dtype=np.float64)
    limits = np.concatenate([-pos[::-1], [0.0], pos])
    limits.setflags(write=False)
    return limits


def bucket_of(values: np.ndarray) -> np.ndarray:
    """`np.searchsorted(default_bucket_limits(), values, side="right")` of finite float64
    values, without a binary search (which mispredicts a branch at most of its eleven
    levels: 32K activations 774 us). The positive limits are 10% apart, so a table over
    the top 16 bits of |v| (its exponent and 5 mantissa bits: cells 3% wide) gives the
    last limit <= the cell's start, and one comparison with the next limit settles the
    index: 197 us."""
    pos, first_limit = _bucket_table()
    top = pos.size - 1
    a = np.abs(values)
    k = first_limit[a.view(np.int64) >> 47]
    k += pos[np.minimum(k + 1, top)] <= a
    # side="right" over [-pos reversed, 0, pos]: v > 0 passes every negative limit, zero
    # and the positive ones <= v; v < 0 passes the negative limits -p <= v, i.e. all but
    # the p < |v| (k + 1 of them, less one where |v| is a limit); v == 0 passes the
    # negative limits and zero
    n = pos.size
    negative = n - k - 1 + ((k >= 0) & (pos[np.maximum(k, 0)] == a))
    return np.where(values > 0, n + 2 + k, np.where(values < 0, negative, n + 1))


@functools.lru_cache(maxsize=1)
def _bucket_table():
    """(positive limits, for each value of the top 16 bits of a positive double the
    index of the last positive limit <= the smallest double with those bits, -1 for
    none)."""
    limits = default_bucket_limits()
    pos = limits[limits.size // 2 + 1:]
    starts = (np.arange(1 << 16, dtype=np.int64) << 47).view(np.float64)
    with np.errstate(invalid="ignore"):
        table = np.searchsorted(pos, starts, side="right").astype(np.intp) - 1
    return pos, table


def fill_histogram(values: np.ndarray, histo) -> None:
    """Fills a `HistogramProto` with the finite float64 `values` as TF does: bucket i
    counts the values v with limit[i-1] <= v < limit[i]; a run of empty buckets is
    written as one bucket (the run's last limit, count 0)."""
    limits = default_bucket_limits()
    values = values.reshape(-1)
    n = values.size
    histo.min = float(values.min()) if n else _DBL_MAX
    histo.max = float(values.max()) if n else -_DBL_MAX
    histo.num = float(n)
    # TF adds the values one by one; cumsum keeps that order (and so its rounding).
    histo.sum = float(np.cumsum(values)[-1]) if n else 0.0
    histo.sum_squares = float(np.cumsum(values * values)[-1]) if n else 0.0
    counts = np.bincount(bucket_of(values), minlength=limits.size).astype(np.float64)
    full = counts > 0
    keep = full | np.append(full[1:], True)   # non-empty, or the last of an empty run
    histo.bucket_limit.extend(limits[keep].tolist())
    histo.bucket.extend(counts[keep].tolist())


def _check_finite(ctx, values: np.ndarray) -> None:
    """TF's error for the first value that is NaN or infinite (its wording per kind)."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        template = ("Nan in summary histogram for: %s" if np.isnan(values[bad[0]])
                    else "Infinity in Histogram for: %s")
        raise errors.InvalidArgumentError(None, ctx.op, template % ctx.op.name)


@kernel("HistogramSummary")
def _histogram_summary_kernel(ctx, tag, values):
    tag_text = _util.scalar_string(ctx, tag, "tags must be scalar")
    flat = np.asarray(values).astype(np.float64).reshape(-1)
    _check_finite(ctx, flat)
    pb = _util.summary_pb2()
    summary = pb.Summary()
    value = summary.value.add(tag=tag_text)
    fill_histogram(flat, value.histo)
    return _util.serialized(summary)


@kernel("TensorSummaryV2")
def _tensor_summary_kernel(ctx, tag, tensor, serialized_summary_metadata):
    from tensorweave.framework import graph_def_proto
    tag_text = _util.scalar_string(ctx, tag, "tag must be scalar")
    meta = np.asarray(serialized_summary_metadata, dtype=object).item()
    pb = _util.summary_pb2()
    summary = pb.Summary()
    value = summary.value.add(tag=tag_text)
    try:
        value.metadata.ParseFromString(meta if isinstance(meta, bytes) else meta.encode())
    except Exception:  # protobuf's DecodeError
        raise errors.InvalidArgumentError(
            None, ctx.op, "Could not parse serialized_summary_metadata") from None
    graph_def_proto.array_to_tensor_proto(np.asarray(tensor), value.tensor, content=True)
    value.tensor.dtype = ctx.op._get_attr("T").as_datatype_enum
    return _util.serialized(summary)


@kernel("TensorSummary")
def _tensor_summary_v1_kernel(ctx, tensor):
    from tensorweave.framework import graph_def_proto
    pb = _util.summary_pb2()
    summary = pb.Summary()
    value = summary.value.add(node_name=ctx.op.name)  # the old op has no tag, only its node
    graph_def_proto.array_to_tensor_proto(np.asarray(tensor), value.tensor, content=True)
    value.tensor.dtype = ctx.op._get_attr("T").as_datatype_enum
    return _util.serialized(summary)


@kernel("MergeSummary")
def _merge_summary_kernel(ctx, *inputs):
    pb = _util.summary_pb2()
    merged = pb.Summary()
    seen = set()
    for tensor in inputs:
        for data in np.asarray(tensor, dtype=object).reshape(-1):
            one = pb.Summary()
            try:
                one.ParseFromString(data if isinstance(data, bytes) else data.encode())
            except Exception:  # protobuf's DecodeError
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Could not parse one of the summary inputs") from None
            for value in one.value:
                if value.tag in seen:
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "Duplicate tag %s found in summary inputs " % value.tag)
                seen.add(value.tag)
                merged.value.add().CopyFrom(value)
    return _util.serialized(merged)


# --- builders -----------------------------------------------------------------------------
@tf_export("summary.scalar")
def scalar(name: str, tensor, collections: Optional[Sequence[str]] = None,
           family: Optional[str] = None) -> Tensor:
    """Outputs a `Summary` protocol buffer containing a single scalar value.

    Args:
      name: a name for the op; also the summary's tag (inside the current name scope).
      tensor: a real numeric Tensor containing a single value.
      collections: graph collection keys the summary is added to; defaults to
        `[GraphKeys.SUMMARIES]`.
      family: optional; a prefix of the tag, and the tab TensorBoard shows it under.

    Returns:
      A scalar Tensor of type `string`: the serialized `Summary`.

    Raises:
      TypeError: `tensor` is not of a real numeric type.
    """
    with _util.summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = apply_op("ScalarSummary", [tag, tensor], name=scope).outputs[0]
        _util.collect(val, collections)
    return val


@tf_export("summary.histogram")
def histogram(name: str, values, collections: Optional[Sequence[str]] = None,
              family: Optional[str] = None) -> Tensor:
    """Outputs a `Summary` protocol buffer with a histogram of `values`.

    Running the op raises `InvalidArgumentError` if any value is not finite.

    Args:
      name: a name for the op; also the summary's tag.
      values: a real numeric Tensor of any shape.
      collections: graph collection keys; defaults to `[GraphKeys.SUMMARIES]`.
      family: optional; a prefix of the tag, and the tab TensorBoard shows it under.

    Returns:
      A scalar Tensor of type `string`: the serialized `Summary`.
    """
    with _util.summary_scope(name, family, values=[values]) as (tag, scope):
        val = apply_op("HistogramSummary", [tag, values], name=scope).outputs[0]
        _util.collect(val, collections)
    return val


@tf_export("summary.tensor_summary")
def tensor_summary(name: str, tensor, summary_description=None,
                   collections: Optional[Sequence[str]] = None, summary_metadata=None,
                   family: Optional[str] = None, display_name: Optional[str] = None
                   ) -> Tensor:
    """Outputs a `Summary` protocol buffer holding a whole tensor.

    Args:
      name: a name for the op; also the summary's tag.
      tensor: a Tensor of any type and shape.
      summary_description: optional; text stored as the metadata's
        `summary_description`.
      collections: graph collection keys; defaults to `[GraphKeys.SUMMARIES]`.
      summary_metadata: optional `SummaryMetadata` message (plugin data for TensorBoard).
      family: optional; a prefix of the tag.
      display_name: optional; the name TensorBoard shows.

    Returns:
      A scalar Tensor of type `string`: the serialized `Summary`.
    """
    pb = _util.summary_pb2()
    metadata = pb.SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with _util.summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = apply_op("TensorSummaryV2", [tag, tensor, metadata.SerializeToString()],
                       name=scope).outputs[0]
        _util.collect(val, collections)
    return val


@tf_export("summary.text")
def text(name: str, tensor, collections: Optional[Sequence[str]] = None) -> Tensor:
    """Outputs a `Summary` protocol buffer with string data for TensorBoard's text tab.

    Args:
      name: a name for the op; also the summary's tag.
      tensor: a string Tensor (any shape).
      collections: graph collection keys; defaults to `[GraphKeys.SUMMARIES]`.

    Returns:
      A scalar Tensor of type `string`: the serialized `Summary`.

    Raises:
      ValueError: `tensor` is not of type string.
    """
    tensor = convert_to_tensor(tensor)
    if tensor.dtype is not _dt.string:
        raise ValueError("Expected tensor %s to have dtype string, got %s"
                         % (tensor.name, tensor.dtype))
    pb = _util.summary_pb2()
    metadata = pb.SummaryMetadata(
        plugin_data=pb.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name=name, tensor=tensor, summary_metadata=metadata,
                          collections=collections)


@tf_export("summary.merge")
def merge(inputs: List, collections: Optional[Sequence[str]] = None,
          name: Optional[str] = None) -> Tensor:
    """Merges summaries into one `Summary` protocol buffer.

    Running the op raises `InvalidArgumentError` if two inputs use the same tag.

    Args:
      inputs: a list of string Tensors holding serialized `Summary` protocol buffers.
      collections: graph collection keys the merged summary is added to (none by
        default).
      name: a name for the operation.

    Returns:
      A scalar Tensor of type `string`: the serialized merged `Summary`.

    Raises:
      ValueError: `inputs` is empty (TF's MergeSummary takes at least one).
    """
    if not list(inputs):
        raise ValueError("List argument 'inputs' to 'MergeSummary' Op with length 0 "
                         "shorter than minimum length 1.")
    name = _util.clean_tag(name)
    with name_scope(name, "Merge", inputs):
        val = apply_op("MergeSummary", [list(inputs)], name=name or "MergeSummary").outputs[0]
        _util.collect(val, collections, [])
    return val


@tf_export("summary.merge_all")
def merge_all(key: str = GraphKeys.SUMMARIES, scope: Optional[str] = None,
              name: Optional[str] = None) -> Optional[Tensor]:
    """Merges all summaries collected in the default graph.

    Args:
      key: the graph collection holding the summaries; defaults to
        `GraphKeys.SUMMARIES`.
      scope: optional; a regular expression the summaries' names must match.
      name: a name for the operation.

    Returns:
      The merged summary Tensor (as `merge`), or None if the collection is empty.
    """
    summary_ops = get_collection(key, scope=scope)
    if not summary_ops:
        return None
    return merge(summary_ops, name=name)


# The collection TF's V2-style summary ops (tf.contrib.summary, TF2's tf.summary) join.
_V2_SUMMARY_COLLECTION = "_SUMMARY_V2"


@tf_export("summary.all_v2_summary_ops")
def all_v2_summary_ops() -> List:
    """Returns the V2-style summary ops defined in the default graph (TF1's
    `tf.summary.all_v2_summary_ops`): the ones in TF's `_SUMMARY_V2` collection. The
    TF1 ops of this module (`scalar`, `histogram`, ...) are not among them.

    Returns:
      A list of summary ops (empty when the graph has none).
    """
    return get_collection(_V2_SUMMARY_COLLECTION)


@tf_export("summary.get_summary_description")
def get_summary_description(node_def):
    """The `SummaryDescription` stored in the `description` attr (JSON) of a
    TensorSummary node.

    Args:
      node_def: the NodeDef of a TensorSummary op (`op.node_def`, ours or TF's proto).

    Returns:
      A `SummaryDescription` message.

    Raises:
      ValueError: the node is not a TensorSummary op.
    """
    if node_def.op != "TensorSummary":
        raise ValueError("Can't get_summary_description on %s" % node_def.op)
    description = node_def.attr["description"]
    if not isinstance(description, (str, bytes)):  # a protobuf AttrValue
        description = description.s
    if isinstance(description, bytes):
        description = description.decode("utf-8")
    from google.protobuf import json_format
    out = _util.summary_pb2().SummaryDescription()
    json_format.Parse(description, out)
    return out
