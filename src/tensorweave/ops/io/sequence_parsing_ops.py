"""Parsing tf.train.SequenceExample protos: `tf.io.parse_sequence_example`,
`tf.io.parse_single_sequence_example` and `tf.io.FixedLenSequenceFeature`.

One op, ParseSequenceExampleV2 (as TF 2's builders use for both), parses a batch: context
features like an Example's (FixedLenFeature -> dense, VarLenFeature -> SparseTensor), and
feature lists: a FixedLenSequenceFeature becomes a dense [batch, steps, *shape] tensor
padded with zeros (its lengths in a third result), a VarLenFeature a SparseTensor
[batch, steps, values]. The single-example builder parses a batch of one and drops the
batch dimension. Ragged features are not supported (ValueError at build time).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeListAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.io import parsing_ops as _p


# declared with the Example features, which also parse it; exported from there
FixedLenSequenceFeature = _p.FixedLenSequenceFeature


def _fl_shapes(op):
    a = lambda k: op._get_attr(k)  # noqa: E731
    batch = op.inputs[0].shape.with_rank(1)
    nc = a("Ncontext_sparse")
    nf = a("Nfeature_list_sparse")
    c_dense = [batch.concatenate(as_shape(s)) for s in a("context_dense_shapes")]
    f_dense = [batch.concatenate(TensorShape([None])).concatenate(as_shape(s))
               for s in a("feature_list_dense_shapes")]
    return ([TensorShape([None, 2])] * nc + [TensorShape([None])] * nc +
            [TensorShape([2])] * nc + c_dense +
            [TensorShape([None, 3])] * nf + [TensorShape([None])] * nf +
            [TensorShape([3])] * nf + f_dense + [batch] * len(f_dense))


register_op("ParseSequenceExampleV2",
            inputs=["serialized: string", "debug_name: string",
                    "context_dense_defaults: Tcontext_dense"],
            outputs=["context_sparse_indices: Ncontext_sparse * int64",
                     "context_sparse_values: context_sparse_types",
                     "context_sparse_shapes: Ncontext_sparse * int64",
                     "context_dense_values: Tcontext_dense",
                     "feature_list_sparse_indices: Nfeature_list_sparse * int64",
                     "feature_list_sparse_values: feature_list_sparse_types",
                     "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
                     "feature_list_dense_values: feature_list_dense_types",
                     "feature_list_dense_lengths: Nfeature_list_dense * int64"],
            attrs={"Ncontext_sparse": 0, "Nfeature_list_sparse": 0,
                   "Nfeature_list_dense": 0,
                   "context_sparse_keys": [], "context_dense_keys": [],
                   "feature_list_sparse_keys": [], "feature_list_dense_keys": [],
                   "feature_list_dense_missing_assumed_empty": [],
                   "context_sparse_types": TypeListAttr(default=[]),
                   "Tcontext_dense": TypeListAttr(default=[]),
                   "feature_list_dense_types": TypeListAttr(default=[]),
                   "feature_list_sparse_types": TypeListAttr(default=[]),
                   "context_dense_shapes": [], "feature_list_dense_shapes": []},
            shape=_fl_shapes)
not_differentiable("ParseSequenceExampleV2")


def _sparse_out(rows, dtype, batch: int, rank: int):
    """(indices, values, shape) of a SparseTensor [batch, (steps,) values] from per-example
    lists of value lists (rank 2) or of per-step value lists (rank 3)."""
    idx, vals = [], []
    longest_steps, longest = 0, 0
    for b, r in enumerate(rows):
        if rank == 2:
            idx.extend((b, j) for j in range(len(r)))
            vals.extend(r)
            longest = max(longest, len(r))
        else:
            longest_steps = max(longest_steps, len(r))
            for t, step in enumerate(r):
                idx.extend((b, t, j) for j in range(len(step)))
                vals.extend(step)
                longest = max(longest, len(step))
    indices = np.array(idx, np.int64).reshape(-1, rank)
    shape = [batch, longest] if rank == 2 else [batch, longest_steps, longest]
    return indices, _p._values_array(vals, dtype, len(vals)), np.array(shape, np.int64)


def _empty(dtype, shape):
    """Zeros of `dtype` ("" for strings): the padding of dense feature lists."""
    if dtype is _dt.string:
        out = np.empty(shape, object)
        out.fill(b"")
        return out
    return np.zeros(shape, dtype.as_numpy_dtype)


def _context_dense(ctx, key, dtype, shape, default, found, name):
    """One dense context feature of a batch, from each example's values (None: missing),
    checked as TF's fast parser does: first the largest count against the shape, then each
    example."""
    n = shape.num_elements()
    most = max((len(v) for v in found if v is not None), default=0)
    if most != n and not (most == 0 and default.size):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Inconsistent max number of elements for feature %s: expected %d, "
            "but found %d" % (key, n, most))
    out = _empty(dtype, [len(found), n])
    for i, vals in enumerate(found):
        if vals is None:
            if default.size == 0:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Feature: %s (data type: %s) is required but could not be "
                    "found." % (key, _p._KIND_NAME[_p._KIND[dtype]]))
            out[i] = np.asarray(default).reshape(-1)
        elif len(vals) != n:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Unexpected number of elements in example %s" % name(i))
        else:
            out[i] = vals
    return out.reshape([len(found)] + shape.as_list())


@kernel("ParseSequenceExampleV2", cheap=False)
def _parse_sequence_kernel(ctx, serialized, debug_name, *defaults):
    from google.protobuf.message import DecodeError
    a = ctx.attrs
    cls = _p._messages()["SequenceExample"]
    names = debug_name.reshape(-1).tolist()
    items = serialized.reshape(-1).tolist()
    batch = len(items)

    def name(i):
        return names[i].decode("utf-8", "replace") if names else "<unknown>"

    def who(i):
        return "Name: %s, " % name(i)

    def check_kind(i, key, f, dtype, where):
        """The values of feature `f`; `where` names it in TF's message ("Context feature:
        k" or "Feature list: k, Index: i")."""
        have = f.WhichOneof("kind")
        if have is not None and have != _p._KIND[dtype]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "%s%s.  Data types don't match. Expected type: %s"
                % (who(i), where, _p._KIND_NAME[_p._KIND[dtype]]))
        return list(getattr(f, _p._KIND[dtype]).value) if have else []

    msgs = []
    for i, s in enumerate(items):
        try:
            msgs.append(cls.FromString(s if isinstance(s, bytes) else str(s).encode()))
        except DecodeError:
            raise errors.InvalidArgumentError(None, ctx.op, "Invalid protocol message input, "
                                              "example id: %s" % name(i)) from None
    c_sparse_t = [_dt.as_dtype(t) for t in a["context_sparse_types"]]
    c_dense_t = [_dt.as_dtype(t) for t in a["Tcontext_dense"]]
    f_sparse_t = [_dt.as_dtype(t) for t in a["feature_list_sparse_types"]]
    f_dense_t = [_dt.as_dtype(t) for t in a["feature_list_dense_types"]]
    c_dense_s = [as_shape(s) for s in a["context_dense_shapes"]]
    f_dense_s = [as_shape(s) for s in a["feature_list_dense_shapes"]]
    missing_ok = set(k.decode() if isinstance(k, bytes) else k
                     for k in a["feature_list_dense_missing_assumed_empty"])
    outs_i, outs_v, outs_s = [], [], []
    for key, dtype in zip(a["context_sparse_keys"], c_sparse_t):
        rows = []
        for i, m in enumerate(msgs):
            fmap = m.context.feature
            rows.append(check_kind(i, key, fmap[key], dtype, "Context feature: %s" % key)
                        if key in fmap else [])
        ind, val, shp = _sparse_out(rows, dtype, batch, 2)
        outs_i.append(ind), outs_v.append(val), outs_s.append(shp)
    dense = []
    for key, dtype, shape, default in zip(a["context_dense_keys"], c_dense_t, c_dense_s,
                                          defaults):
        n = shape.num_elements()
        found = [check_kind(i, key, m.context.feature[key], dtype, "Context feature: %s" % key)
                 if key in m.context.feature else None for i, m in enumerate(msgs)]
        dense.append(_context_dense(ctx, key, dtype, shape, default, found, name))
    f_i, f_v, f_s = [], [], []
    for key, dtype in zip(a["feature_list_sparse_keys"], f_sparse_t):
        rows = []
        for i, m in enumerate(msgs):
            fl = m.feature_lists.feature_list
            steps = fl[key].feature if key in fl else []
            rows.append([check_kind(i, key, f, dtype, "Feature list: %s, Index: %d" % (key, j))
                         for j, f in enumerate(steps)])
        ind, val, shp = _sparse_out(rows, dtype, batch, 3)
        f_i.append(ind), f_v.append(val), f_s.append(shp)
    f_dense, f_len = [], []
    for key, dtype, shape in zip(a["feature_list_dense_keys"], f_dense_t, f_dense_s):
        n = shape.num_elements()
        per = []
        for i, m in enumerate(msgs):
            fl = m.feature_lists.feature_list
            if key not in fl:
                if key not in missing_ok:
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "%sFeature list '%s' is required but could not be "
                        "found.  Did you mean to include it in "
                        "feature_list_dense_missing_assumed_empty or "
                        "feature_list_dense_defaults?" % (who(i), key))
                per.append([])
                continue
            steps = []
            for f in fl[key].feature:
                vals = check_kind(i, key, f, dtype,
                                  "Feature list: %s, Index: %d" % (key, len(steps)))
                if len(vals) != n:
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "%sKey: %s, Index: %d.  Number of values != expected.  "
                        "values size: %d but output shape: %s"
                        % (who(i), key, len(steps), len(vals),
                           _p._shape_str(shape.as_list())))
                steps.append(vals)
            per.append(steps)
        lengths = np.array([len(p) for p in per], np.int64)
        longest = int(lengths.max()) if batch else 0
        out = _empty(dtype, [batch, longest, n])
        for i, steps in enumerate(per):
            if steps:
                out[i, :len(steps)] = steps
        f_dense.append(out.reshape([batch, longest] + shape.as_list()))
        f_len.append(lengths)
    outs = outs_i + outs_v + outs_s + dense + f_i + f_v + f_s + f_dense + f_len
    return outs[0] if len(outs) == 1 else outs


def _split(context_features, sequence_features):
    for key, f in sorted((context_features or {}).items()):
        if isinstance(f, FixedLenSequenceFeature):  # a context holds single features
            raise ValueError("Unsupported FixedLenSequenceFeature %s for key '%s'" % (f, key))
    c_sparse, c_dense = _p._split_features(context_features) if context_features else ([], [])
    f_sparse, f_dense = [], []
    for key in sorted(sequence_features or {}):
        f = sequence_features[key]
        if isinstance(f, _p.VarLenFeature):
            f_sparse.append((key, _dt.as_dtype(f.dtype)))
        elif isinstance(f, FixedLenSequenceFeature):
            if f.default_value is not None:
                raise ValueError("Value feature_list.dense_defaults[%s] must be None" % key)
            dtype = _dt.as_dtype(f.dtype)
            if dtype not in _p._PARSE_TYPES:
                raise TypeError("Unsupported dtype %s for feature list %s" % (dtype.name, key))
            f_dense.append((key, dtype, as_shape(f.shape), bool(f.allow_missing)))
        else:
            raise ValueError("Unsupported %s %s for key '%s'" % (type(f).__name__, f, key))
    if not (c_sparse or c_dense or f_sparse or f_dense):
        raise ValueError("Both context_features and sequence_features are None, but at "
                         "least one should have values.")
    return c_sparse, c_dense, f_sparse, f_dense


def _parse(serialized, names, context_features, sequence_features):
    c_sparse, c_dense, f_sparse, f_dense = _split(context_features, sequence_features)
    defaults = [_p._dense_default(k, t, s, v) for k, t, s, v in c_dense]
    op = apply_op("ParseSequenceExampleV2", [serialized, names, defaults], {
        "Ncontext_sparse": len(c_sparse), "Nfeature_list_sparse": len(f_sparse),
        "Nfeature_list_dense": len(f_dense),
        "context_sparse_keys": [k for k, _ in c_sparse],
        "context_dense_keys": [k for k, _, _, _ in c_dense],
        "feature_list_sparse_keys": [k for k, _ in f_sparse],
        "feature_list_dense_keys": [k for k, _, _, _ in f_dense],
        "feature_list_dense_missing_assumed_empty": [k for k, _, _, m in f_dense if m],
        "context_sparse_types": [t for _, t in c_sparse],
        "feature_list_dense_types": [t for _, t, _, _ in f_dense],
        "feature_list_sparse_types": [t for _, t in f_sparse],
        "context_dense_shapes": [s for _, _, s, _ in c_dense],
        "feature_list_dense_shapes": [s for _, _, s, _ in f_dense]},
        name="ParseSequenceExampleV2")
    out = list(op.outputs)
    nc, nd, nf, nfd = len(c_sparse), len(c_dense), len(f_sparse), len(f_dense)
    context = {}
    for j, (k, _) in enumerate(c_sparse):
        context[k] = SparseTensor(out[j], out[nc + j], out[2 * nc + j])
    for j, (k, _, _, _) in enumerate(c_dense):
        context[k] = out[3 * nc + j]
    base = 3 * nc + nd
    lists = {}
    for j, (k, _) in enumerate(f_sparse):
        lists[k] = SparseTensor(out[base + j], out[base + nf + j], out[base + 2 * nf + j])
    base += 3 * nf
    lengths = {}
    for j, (k, _, _, _) in enumerate(f_dense):
        lists[k] = out[base + j]
        lengths[k] = out[base + nfd + j]
    return context, lists, lengths


@tf_export("io.parse_sequence_example")
def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name: Optional[str] = None):
    """Parses a batch of serialized SequenceExample protos.

    Args:
      serialized: a 1-D string Tensor.
      context_features: dict key -> FixedLenFeature or VarLenFeature of the context.
      sequence_features: dict key -> FixedLenSequenceFeature or VarLenFeature of the
        feature lists.
      example_names: a 1-D string Tensor naming the protos in error messages.
      name: name scope.

    Returns:
      (context dict, feature list dict, lengths dict): dense feature lists are
      [batch, max steps, *shape], zero-padded, with their step counts in the lengths.

    Raises:
      ValueError: no features, unsupported features or a FixedLenSequenceFeature with a
        default value.
    """
    with name_scope(name, "ParseSequenceExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=_dt.string, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names,
                                  dtype=_dt.string, name="debug_name")
        return _parse(serialized, names, context_features, sequence_features)


@tf_export("io.parse_single_sequence_example", "parse_single_sequence_example")
def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name: Optional[str] = None):
    """Parses one serialized SequenceExample: as `parse_sequence_example` on a batch of
    one, without the batch dimension and without the lengths.

    Args:
      serialized: a scalar string Tensor.
      context_features, sequence_features: as in `parse_sequence_example`.
      example_name: a scalar string naming the proto in error messages.
      name: name scope.

    Returns:
      (context dict, feature list dict).

    Raises:
      ValueError: `serialized` is not a scalar, or bad features.
    """
    from tensorweave.ops.array import array_ops
    with name_scope(name, "ParseSingleSequenceExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=_dt.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError("Input serialized must be a scalar")
        names = convert_to_tensor([] if example_name is None else [example_name],
                                  dtype=_dt.string, name="debug_name")
        context, lists, _ = _parse(array_ops.reshape(serialized, [1]), names,
                                   context_features, sequence_features)

        def unbatch(v):
            if isinstance(v, SparseTensor):
                return SparseTensor(v.indices[:, 1:], v.values, v.dense_shape[1:])
            return array_ops.squeeze(v, [0])
        return ({k: unbatch(v) for k, v in context.items()},
                {k: unbatch(v) for k, v in lists.items()})
