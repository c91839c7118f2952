"""tf.train.Example parsing: ParseExample and ParseSingleExample, the feature
descriptions FixedLenFeature and VarLenFeature, and the tf.train.Example protos.

The proto classes (tf.train.Example, Features, Feature, BytesList, FloatList, Int64List,
FeatureList, FeatureLists, SequenceExample) are declared in example_proto.py, which
imports protobuf; to keep `import tensorweave` fast the names exported here are light
placeholders that load it on first use and then behave as the message classes
(construction, class attributes such as FromString, isinstance).
"""
from __future__ import annotations

import collections
from typing import Dict, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeListAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.io import example_wire, ragged_feature


# --- the protos, loaded on first use ---------------------------------------------------
def _messages() -> Dict[str, type]:
    from tensorweave.ops.io import example_proto
    return example_proto.MESSAGES


class _LazyProtoClass(type):
    """Metaclass of the placeholders: everything is forwarded to the real class."""

    def _real(cls) -> type:
        return _messages()[cls.__name__]

    def __call__(cls, *args, **kwargs):
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._real(), name)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, cls._real())

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls or issubclass(sub, cls._real())


def _lazy(name: str, doc: str) -> type:
    return _LazyProtoClass(name, (), {"__doc__": doc, "__module__": "tensorweave.train"})


BytesList = tf_export("train.BytesList")(_lazy("BytesList", "repeated bytes value = 1."))
FloatList = tf_export("train.FloatList")(_lazy("FloatList", "repeated float value = 1."))
Int64List = tf_export("train.Int64List")(_lazy("Int64List", "repeated int64 value = 1."))
Feature = tf_export("train.Feature")(_lazy(
    "Feature", "oneof kind: bytes_list = 1, float_list = 2, int64_list = 3."))
Features = tf_export("train.Features")(_lazy("Features",
                                             "map<string, Feature> feature = 1."))
FeatureList = tf_export("train.FeatureList")(_lazy("FeatureList",
                                                   "repeated Feature feature = 1."))
FeatureLists = tf_export("train.FeatureLists")(_lazy(
    "FeatureLists", "map<string, FeatureList> feature_list = 1."))
Example = tf_export("train.Example")(_lazy("Example", "Features features = 1."))
SequenceExample = tf_export("train.SequenceExample")(_lazy(
    "SequenceExample", "Features context = 1; FeatureLists feature_lists = 2."))


# --- feature descriptions ----------------------------------------------------------------
@tf_export("FixedLenFeature", "io.FixedLenFeature")
class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature with a fixed number of values, parsed to a dense tensor (TF1).

    Args:
      shape: the shape of the feature in one example.
      dtype: float32, int64 or string.
      default_value: used when an example lacks the feature; None makes it required.
    """

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


@tf_export("VarLenFeature", "io.VarLenFeature")
class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values, parsed to a SparseTensor (TF1).

    Args:
      dtype: float32, int64 or string.
    """


@tf_export("io.FixedLenSequenceFeature", "FixedLenSequenceFeature")
class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature with any number of values, each step of a fixed shape (TF1).

    In an Example (`parse_example`) it parses to a dense [batch, steps, *shape] tensor,
    padded to the longest example with `default_value`; in a SequenceExample feature list
    (`parse_sequence_example`) to a dense tensor padded with zeros.

    Args:
      shape: the shape of one step.
      dtype: float32, int64 or string.
      allow_missing: a missing feature parses as zero steps instead of failing (must be
        True in Example parsing).
      default_value: the scalar padding in Example parsing (None: 0 or ""); must be None
        in SequenceExample parsing.
    """

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


@tf_export("SparseFeature", "io.SparseFeature")
class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature stored as features of the Example, its indices (one feature per
    dimension) and its values, parsed to one SparseTensor of dense shape [batch] + size
    (TF1).

    Args:
      index_key: the name of the int64 feature holding the indices, or a list of names,
        one per sparse dimension.
      value_key: the name of the feature holding the values.
      dtype: the values' type (float32, int64 or string).
      size: the size of the sparse dimension (a list of sizes for a list of index_key).
      already_sorted: the indices are sorted within each example (skips the reorder).
    """

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _sparse_keys_of(key: str, f) -> List[str]:
    """The sparse (VarLen) keys a plain feature reads: none for a dense one."""
    if isinstance(f, SparseFeature):
        return _index_keys(f) + [f.value_key]
    return [key] if isinstance(f, VarLenFeature) else []


def _index_keys(f: SparseFeature) -> List[str]:
    return [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)


def _with_sparse_features(features) -> tuple:
    """(the plain features to parse, {key: SparseFeature}): each SparseFeature's index
    and value features join the plain ones, as VarLenFeatures."""
    if not features:
        return features, {}
    plain = {k: f for k, f in features.items() if not isinstance(f, SparseFeature)}
    composite = {k: f for k, f in features.items() if isinstance(f, SparseFeature)}
    for key, f in composite.items():
        wanted = [(k, VarLenFeature(_dt.int64)) for k in _index_keys(f)]
        wanted.append((f.value_key, VarLenFeature(_dt.as_dtype(f.dtype))))
        for k, want in wanted:
            have = plain.setdefault(k, want)
            if have != want:
                raise ValueError("Conflicting type %s vs %s for feature %s."
                                 % (getattr(have, "dtype", have), want.dtype, k))
    return plain, composite


def _merge_sparse_features(result: dict, features, composite: dict) -> dict:
    """`result` with each SparseFeature built from its parsed index and value features
    (which stay only if asked for themselves)."""
    if not composite:
        return result
    from tensorweave.ops.sparse.sparse_select_ops import sparse_merge
    for key, f in composite.items():
        ids = (result[f.index_key] if isinstance(f.index_key, str) else
               [result[k] for k in f.index_key])
        result[key] = sparse_merge(ids, result[f.value_key], f.size,
                                   already_sorted=f.already_sorted)
    for f in composite.values():
        for k in _index_keys(f) + [f.value_key]:
            if k not in features:
                result.pop(k, None)
    return result


_PARSE_TYPES = (_dt.float32, _dt.int64, _dt.string)
# example_wire costs about 0.25 ms of NumPy steps whatever the batch, the exact path about
# 2.2 us per feature and example: they break even near 128 feature values (32 examples
# of 4 features)
_WIRE_MIN_BATCH = 8
_WIRE_MIN_READS = 128  # examples * requested features
_KIND = {_dt.float32: "float_list", _dt.int64: "int64_list", _dt.string: "bytes_list"}
_KIND_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string",
              None: "unknown"}
_VALUE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "bytes"}


# --- the shared parser ---------------------------------------------------------------------
def _shape_str(dims) -> str:
    return "[%s]" % ",".join("?" if d is None else str(int(d)) for d in dims)


class _Spec:
    """What a kernel needs to know of its features (from the op's attrs): `sparse`
    (key, dtype) pairs, `dense` (key, dtype, shape) triples, and per dense feature its
    dims and element count (`dense_dims`, `dense_sizes`). A dense shape whose first
    dimension is unknown is a FixedLenSequenceFeature (`dense_variable`): its size is the
    element count of one step, and its default input is the scalar padding."""

    def __init__(self, sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes):
        self.sparse = [(k.decode() if isinstance(k, bytes) else k, t)
                       for k, t in zip(sparse_keys, sparse_types)]
        self.dense = [(k.decode() if isinstance(k, bytes) else k, t, as_shape(s))
                      for k, t, s in zip(dense_keys, dense_types, dense_shapes)]
        self.dense_dims = [shape.as_list() for _, _, shape in self.dense]
        self.dense_variable = [bool(dims) and dims[0] is None for dims in self.dense_dims]
        self.dense_sizes = [shape[1:].num_elements() if variable else shape.num_elements()
                            for (_, _, shape), variable in zip(self.dense,
                                                               self.dense_variable)]


def _parse_batch(ctx, spec: _Spec, serialized: List[bytes], names: List[bytes],
                 defaults, single: bool):
    """Parses serialized Examples; returns the flat op outputs (sparse indices, sparse
    values, sparse shapes, dense values)."""
    example_cls = _messages()["Example"]
    from google.protobuf.message import DecodeError

    def where(i):  # the prefix of TF's error messages
        if single:
            return ""
        name = names[i].decode("utf-8", "replace") if names else "<unknown>"
        return "Name: %s, " % name

    def key_where(i, key):
        return ("Key: %s.  " % key) if single else "%sKey: %s, Index: %d.  " % (where(i),
                                                                                key, i)
    # values are gathered flat per feature (list.extend of each repeated field): building
    # arrays row by row from the protobuf containers costs several times more
    sparse_flat = [[] for _ in spec.sparse]
    sparse_counts = [[] for _ in spec.sparse]
    dense_flat = [[] for _ in spec.dense]
    dense_steps = [[] for _ in spec.dense]  # per example, of FixedLenSequenceFeatures
    flat_defaults = [np.asarray(d).reshape(-1) for d in defaults]
    # a batch in the layout every serializer writes is read by NumPy over the whole
    # batch (example_wire); a batch of few examples, and any other, one by one here
    fast = None
    if (len(serialized) >= _WIRE_MIN_BATCH and not any(spec.dense_variable)
            and len(serialized) * (len(spec.sparse) + len(spec.dense)) >= _WIRE_MIN_READS):
        fast = example_wire.gather(
            serialized, [(key, _KIND[dtype]) for key, dtype in spec.sparse],
            [(key, _KIND[dtype]) for key, dtype, _ in spec.dense], spec.dense_sizes,
            flat_defaults)
    if fast is not None:
        sparse_flat, sparse_counts, dense_flat = fast
    else:
        dense_defaults = [d.tolist() for d in flat_defaults]
    for i, s in enumerate(serialized if fast is None else ()):
        try:
            fmap = example_cls.FromString(s).features.feature
        except DecodeError:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Could not parse example input, value: '%s'"
                % s.decode("utf-8", "backslashreplace")) from None
        for j, (key, dtype) in enumerate(spec.sparse):
            if key not in fmap:
                sparse_counts[j].append(0)
                continue
            f = fmap[key]
            kind = _KIND[dtype]
            values = getattr(f, kind).value
            if not values:  # empty, absent, or of another kind (its own list is empty)
                have = f.WhichOneof("kind")
                if have is not None and have != kind:
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "%sData types don't match. Expected type: %s, Actual "
                        "type: %s" % (key_where(i, key), _KIND_NAME[kind], _KIND_NAME[have]))
            sparse_counts[j].append(len(values))
            sparse_flat[j].extend(values)
        for j, (key, dtype, shape) in enumerate(spec.dense):
            kind = _KIND[dtype]
            f = fmap[key] if key in fmap else None
            if spec.dense_variable[j]:
                values = _sequence_values(ctx, f, kind, dtype, shape, spec.dense_sizes[j],
                                          key, key_where(i, key), single)
                dense_steps[j].append(len(values) // max(spec.dense_sizes[j], 1))
                dense_flat[j].extend(values)
                continue
            if f is not None:
                values = getattr(f, kind).value
                if len(values) == spec.dense_sizes[j] and values:
                    dense_flat[j].extend(values)  # the common case: no more checks
                    continue
            have = f.WhichOneof("kind") if f is not None else None
            if have is None:
                if defaults[j].size == 0:
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "%sFeature: %s (data type: %s) is required but could "
                        "not be found." % (where(i), key, _KIND_NAME[kind]))
                dense_flat[j].extend(dense_defaults[j])
                continue
            if have != kind:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "%sData types don't match. Data type: %s but expected "
                    "type: %s" % (key_where(i, key), _KIND_NAME[have], _KIND_NAME[kind]))
            values = getattr(f, kind).value
            if len(values) != spec.dense_sizes[j]:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "%sNumber of %s values != expected.  Values size: %d but "
                    "output shape: %s" % (key_where(i, key), _VALUE_NAME[kind], len(values),
                                          _shape_str(shape.as_list())))
            dense_flat[j].extend(values)
    batch = len(serialized)
    outs_idx, outs_val, outs_shape = [], [], []
    for (key, dtype), flat, counts in zip(spec.sparse, sparse_flat, sparse_counts):
        counts = np.array(counts, dtype=np.int64)
        total = len(flat)
        values = _values_array(flat, dtype, total)
        pos = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        longest = int(counts.max()) if batch else 0
        if single:
            outs_idx.append(pos.reshape(-1, 1))
            outs_shape.append(np.array([longest], np.int64))
        else:
            rows_i = np.repeat(np.arange(batch, dtype=np.int64), counts)
            outs_idx.append(np.stack([rows_i, pos], axis=1) if total else
                            np.zeros((0, 2), np.int64))
            outs_shape.append(np.array([batch, longest], np.int64))
        outs_val.append(values)
    dense_out = []
    for j, (key, dtype, shape) in enumerate(spec.dense):
        dims, n, flat = spec.dense_dims[j], spec.dense_sizes[j], dense_flat[j]
        if spec.dense_variable[j]:
            out = _padded_steps(flat, dense_steps[j], dtype, n, defaults[j])
            dense_out.append(out.reshape(out.shape[1:2] + tuple(dims[1:]) if single else
                                         out.shape[:2] + tuple(dims[1:])))
            continue
        out = _values_array(flat, dtype, batch * n)
        dense_out.append(out.reshape(dims if single else [batch] + dims))
    outs = outs_idx + outs_val + outs_shape + dense_out
    return outs[0] if len(outs) == 1 else outs  # the executor takes one output bare


def _sequence_values(ctx, f, kind: str, dtype, shape: TensorShape, stride: int, key: str,
                     where: str, single: bool):
    """The values of one example's FixedLenSequenceFeature: empty when the feature is
    absent (allow_missing), else a whole number of steps of `stride` values."""
    have = f.WhichOneof("kind") if f is not None else None
    if have is None:
        return ()
    if have != kind:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%sData types don't match. Data type: %s but expected type: %s"
            % (where, _KIND_NAME[have], _KIND_NAME[kind]))
    values = getattr(f, kind).value
    if len(values) % max(stride, 1) or (stride == 0 and values):
        if single:  # TF's one-example path words it differently
            raise errors.InvalidArgumentError(
                None, ctx.op, "Error while parsing feature with key %s: number of elements "
                "should be divisible by %d, found %d instead"
                % (key, stride, len(values)))
        raise errors.InvalidArgumentError(
            None, ctx.op, "%sNumber of %s values is not a multiple of stride length. Saw %d "
            "values but output shape is: %s" % (where, _VALUE_NAME[kind], len(values),
                                                _shape_str(shape.as_list())))
    return values


def _padded_steps(flat, steps, dtype, stride: int, padding) -> np.ndarray:
    """[batch, longest, stride]: each example's steps, padded with `padding`."""
    steps = np.array(steps, dtype=np.int64)
    longest = int(steps.max()) if steps.size else 0
    pad = np.asarray(padding).reshape(-1)
    pad = pad[0] if pad.size else (b"" if dtype is _dt.string else 0)
    out = np.full([steps.size, longest, stride], pad,
                  dtype=object if dtype is _dt.string else dtype.as_numpy_dtype)
    rows = np.repeat(np.arange(steps.size), steps)
    at = np.arange(rows.size) - np.repeat(np.cumsum(steps) - steps, steps)
    if flat:  # (a step of no values has no rows to fill)
        out[rows, at] = _values_array(flat, dtype, len(flat)).reshape(-1, stride)
    return out


def _values_array(items, dtype, total) -> np.ndarray:
    if dtype is _dt.string:
        out = np.empty(total, dtype=object)
        out[:] = items
        return out
    # (asarray: example_wire's arrays are used as they are, not copied)
    return np.asarray(items, dtype=dtype.as_numpy_dtype).reshape(total)


# --- ParseExample ---------------------------------------------------------------------------
def _outputs_shapes(op, batch_shape: TensorShape, single: bool):
    nsparse = len(op._get_attr("sparse_types"))
    dense_shapes = [as_shape(s) for s in op._get_attr("dense_shapes")]
    rank = 1 if single else 2
    return ([TensorShape([None, rank])] * nsparse + [TensorShape([None])] * nsparse +
            [TensorShape([rank])] * nsparse +
            [batch_shape.concatenate(s) for s in dense_shapes])


def _parse_example_shape(op):
    serialized = op.inputs[0].shape.with_rank(1)
    op.inputs[1].shape.with_rank_at_most(1)
    return _outputs_shapes(op, serialized, single=False)


register_op("ParseExample",
            inputs=["serialized: string", "names: string", "sparse_keys: Nsparse * string",
                    "dense_keys: Ndense * string", "dense_defaults: Tdense"],
            outputs=["sparse_indices: Nsparse * int64", "sparse_values: sparse_types",
                     "sparse_shapes: Nsparse * int64", "dense_values: Tdense"],
            attrs={"Nsparse": REQUIRED, "Ndense": REQUIRED, "sparse_types": TypeListAttr(),
                   "Tdense": TypeListAttr(), "dense_shapes": REQUIRED},
            shape=_parse_example_shape)
not_differentiable("ParseExample")


def _scalar_bytes(x) -> bytes:
    return x.reshape(()).item() if isinstance(x, np.ndarray) else x


@kernel("ParseExample", cheap=False)
def _parse_example_kernel(ctx, serialized, names, *rest):
    a = ctx.attrs
    ns, nd = a["Nsparse"], a["Ndense"]
    sparse_keys = [_scalar_bytes(k) for k in rest[:ns]]
    dense_keys = [_scalar_bytes(k) for k in rest[ns:ns + nd]]
    defaults = rest[ns + nd:]
    spec = _Spec(sparse_keys, a["sparse_types"], dense_keys, a["Tdense"], a["dense_shapes"])
    if serialized.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected serialized to be a vector, "
                                          "got shape: %s" % _shape_str(serialized.shape))
    names_l = names.reshape(-1).tolist()
    if names_l and len(names_l) != serialized.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected len(names) == len(serialized), but got: %d vs. %d"
            % (len(names_l), serialized.shape[0]))
    return _parse_batch(ctx, spec, serialized.tolist(), names_l, defaults, single=False)


register_op("ParseSingleExample",
            inputs=["serialized: string", "dense_defaults: Tdense"],
            outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
                     "sparse_shapes: num_sparse * int64", "dense_values: Tdense"],
            attrs={"num_sparse": REQUIRED, "sparse_keys": REQUIRED, "dense_keys": REQUIRED,
                   "sparse_types": TypeListAttr(), "Tdense": TypeListAttr(),
                   "dense_shapes": REQUIRED},
            shape=lambda op: (op.inputs[0].shape.with_rank(0),
                              _outputs_shapes(op, TensorShape([]), single=True))[1])
not_differentiable("ParseSingleExample")


@kernel("ParseSingleExample", cheap=False)
def _parse_single_example_kernel(ctx, serialized, *defaults):
    a = ctx.attrs
    spec = ctx.state.get("spec")  # the attrs are the op's: one spec per kernel context
    if spec is None:
        spec = ctx.state["spec"] = _Spec(a["sparse_keys"], a["sparse_types"],
                                         a["dense_keys"], a["Tdense"], a["dense_shapes"])
    if serialized.ndim != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected serialized to be a scalar, "
                                          "got shape: %s" % _shape_str(serialized.shape))
    return _parse_batch(ctx, spec, [_scalar_bytes(serialized)], [], defaults, single=True)


# --- ParseExampleV2 (what TF 2 writes for tf.io.parse_example): keys as string vectors --
def _parse_example_v2_shape(op):
    if op._get_attr("ragged_value_types"):
        raise NotImplementedError("ParseExampleV2 %s: ragged features are not supported"
                                  % op.name)
    serialized = op.inputs[0].shape.with_rank_at_most(1)
    shapes = _outputs_shapes(op, serialized, single=serialized.ndims == 0)
    if serialized.ndims == 0:
        n = len(op._get_attr("sparse_types"))
        shapes[:n] = [TensorShape([None, 1])] * n
        shapes[2 * n:3 * n] = [TensorShape([1])] * n
    return shapes


register_op("ParseExampleV2",
            inputs=["serialized: string", "names: string", "sparse_keys: string",
                    "dense_keys: string", "ragged_keys: string", "dense_defaults: Tdense"],
            outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
                     "sparse_shapes: num_sparse * int64", "dense_values: Tdense",
                     "ragged_values: ragged_value_types",
                     "ragged_row_splits: ragged_split_types"],
            attrs={"num_sparse": REQUIRED, "sparse_types": TypeListAttr(),
                   "Tdense": TypeListAttr(), "ragged_value_types": TypeListAttr(),
                   "ragged_split_types": TypeListAttr(), "dense_shapes": REQUIRED},
            shape=_parse_example_v2_shape)
not_differentiable("ParseExampleV2")


@kernel("ParseExampleV2", cheap=False)
def _parse_example_v2_kernel(ctx, serialized, names, sparse_keys, dense_keys, ragged_keys,
                             *defaults):
    a = ctx.attrs
    if ragged_keys.size:
        raise errors.UnimplementedError(None, ctx.op, "ragged features are not supported")
    spec = _Spec(sparse_keys.reshape(-1).tolist(), a["sparse_types"],
                 dense_keys.reshape(-1).tolist(), a["Tdense"], a["dense_shapes"])
    names_l = names.reshape(-1).tolist()
    if serialized.ndim == 0:
        return _parse_batch(ctx, spec, [_scalar_bytes(serialized)], [], defaults,
                            single=True)
    if names_l and len(names_l) != serialized.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected len(names) == len(serialized), but got: %d vs. %d"
            % (len(names_l), serialized.shape[0]))
    return _parse_batch(ctx, spec, serialized.tolist(), names_l, defaults, single=False)


# --- builders -------------------------------------------------------------------------------
def _split_features(features):
    """(sparse [(key, dtype)], dense [(key, dtype, shape, default-or-None)]) sorted by key."""
    if not features:
        raise ValueError("Argument `features` cannot be None or falsy. Got %s" % (features,))
    sparse, dense = [], []
    for key in sorted(features):
        f = features[key]
        if isinstance(f, VarLenFeature):
            dtype = _dt.as_dtype(f.dtype)
            if dtype not in _PARSE_TYPES:
                raise TypeError("Value passed to parameter 'sparse_types' has DataType %s not "
                                "in list of allowed values: float32, int64, string"
                                % dtype.name)
            sparse.append((key, dtype))
        elif isinstance(f, FixedLenSequenceFeature):
            if not f.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires "
                                 "allow_missing to be True.")
            dtype = _dt.as_dtype(f.dtype)
            if dtype not in _PARSE_TYPES:
                raise TypeError("Value passed to parameter 'dense_defaults' has DataType %s "
                                "not in list of allowed values: float32, int64, string"
                                % dtype.name)
            shape = TensorShape([None]).concatenate(f.shape)
            if not shape[1:].is_fully_defined():
                raise ValueError("dense_shapes[%d] has unknown rank or unknown inner "
                                 "dimensions: %s" % (len(dense), _shape_str(shape.as_list())))
            # the op's convention: an unknown first dimension is a variable step count
            dense.append((key, dtype, shape, f.default_value))
        elif isinstance(f, FixedLenFeature):
            dtype = _dt.as_dtype(f.dtype)
            if dtype not in _PARSE_TYPES:
                raise TypeError("Value passed to parameter 'dense_defaults' has DataType %s "
                                "not in list of allowed values: float32, int64, string"
                                % dtype.name)
            shape = as_shape(f.shape)
            if not shape.is_fully_defined():
                raise ValueError("First dimension of shape for feature %s unknown. Consider "
                                 "using FixedLenSequenceFeature. Received feature=%s."
                                 % (key, f))
            dense.append((key, dtype, shape, f.default_value))
        else:
            raise ValueError("Unsupported %s %s for key '%s' (tensorweave parses "
                             "FixedLenFeature, FixedLenSequenceFeature and VarLenFeature)"
                             % (type(f).__name__, f, key))
    return sparse, dense


def _dense_default(key, dtype, shape: TensorShape, value):
    """The default input of one dense feature: its value reshaped to `shape`, or an empty
    tensor meaning "required". A FixedLenSequenceFeature's (first dimension unknown) is
    its scalar padding, 0 or "" unless given."""
    if shape.ndims and shape.dims[0].value is None:
        shape = TensorShape([])
        if value is None:
            value = "" if dtype is _dt.string else 0
    if value is None:
        return convert_to_tensor(np.zeros([0], dtype=object if dtype is _dt.string
                                          else dtype.as_numpy_dtype), dtype=dtype,
                                 name="key_" + key.replace("/", "_"))
    if hasattr(value, "op") and hasattr(value, "dtype"):  # already a Tensor
        from tensorweave.ops.array import array_ops
        return array_ops.reshape(value, shape.as_list())
    t = convert_to_tensor(value, dtype=dtype, name="key_" + key.replace("/", "_"))
    n = t.shape.num_elements()
    want = shape.num_elements()
    if n is not None and n != want:
        raise ValueError("Cannot reshape a tensor with %d elements to shape %s (%d elements) "
                         "for the default value of feature %s" % (n, shape.as_list(), want, key))
    if t.shape != shape:
        from tensorweave.ops.array import array_ops
        t = array_ops.reshape(t, shape.as_list())
    return t


def _results(sparse, dense, outputs) -> dict:
    ns = len(sparse)
    result = {}
    for j, (key, _) in enumerate(sparse):
        result[key] = SparseTensor(outputs[j], outputs[ns + j], outputs[2 * ns + j])
    for j, (key, _, _, _) in enumerate(dense):
        result[key] = outputs[3 * ns + j]
    return result


@tf_export("parse_example", "io.parse_example")
def parse_example(serialized, features, name: Optional[str] = None, example_names=None):
    """Parses a batch of serialized tf.train.Example protos (TF1 `tf.io.parse_example`).

    Args:
      serialized: 1-D string tensor of serialized Examples.
      features: dict key -> FixedLenFeature (dense [batch] + shape result),
        FixedLenSequenceFeature (dense [batch, max steps] + shape, padded with its
        default value), VarLenFeature (SparseTensor [batch, max values] result),
        SparseFeature (SparseTensor [batch] + size result) or tf.io.RaggedFeature
        (RaggedTensor [batch, (rows...)] result; see ragged_feature.py).
      name: name scope.
      example_names: optional 1-D string tensor naming the examples in error messages.

    Returns:
      A dict key -> Tensor, SparseTensor or RaggedTensor.

    Raises:
      ValueError / TypeError: bad feature descriptions (a FixedLenSequenceFeature must
        allow missing; a RaggedFeature's keys may not be sparse or dense keys too).
      InvalidArgumentError (at run time): unparsable bytes, a required feature missing, a
        feature of the wrong type or length.
    """
    to_parse, ragged = ragged_feature.split_ragged(features, VarLenFeature, _sparse_keys_of)
    plain, composite = _with_sparse_features(to_parse)
    sparse, dense = _split_features(plain)
    with name_scope(name, "ParseExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=_dt.string, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names,
                                  dtype=_dt.string, name="names")
        defaults = [_dense_default(k, t, s, v) for k, t, s, v in dense]
        sparse_keys = [convert_to_tensor(k, dtype=_dt.string, name="sparse_keys")
                       for k, _ in sparse]
        dense_keys = [convert_to_tensor(k, dtype=_dt.string, name="dense_keys")
                      for k, _, _, _ in dense]
        op = apply_op("ParseExample", [serialized, names, sparse_keys, dense_keys, defaults],
                      {"sparse_types": [t for _, t in sparse],
                       "dense_shapes": [s for _, _, s, _ in dense]},
                      name="ParseExample")
    # (outside the scope, as TF names the SparseMerge ops)
    result = _merge_sparse_features(_results(sparse, dense, op.outputs), to_parse, composite)
    return ragged_feature.merge_ragged(result, features, ragged, serialized.shape)


@tf_export("parse_single_example", "io.parse_single_example")
def parse_single_example(serialized, features, name: Optional[str] = None,
                         example_names=None):
    """Parses one serialized tf.train.Example (TF1 `tf.io.parse_single_example`).

    Like `parse_example` for a scalar `serialized`: dense results have the feature's
    shape, sparse ones are 1-D SparseTensors.

    Args:
      serialized: scalar string tensor.
      features: dict key -> FixedLenFeature, FixedLenSequenceFeature (a [steps] + shape
        result), VarLenFeature, SparseFeature or tf.io.RaggedFeature (a RaggedTensor of
        its partitions; a 1-D Tensor without partitions).
      name: name scope.
      example_names: accepted for compatibility (a scalar name).

    Returns:
      A dict key -> Tensor or SparseTensor.

    Raises:
      ValueError: `serialized` is not a scalar, or bad feature descriptions.
    """
    to_parse, ragged = ragged_feature.split_ragged(features, VarLenFeature, _sparse_keys_of)
    plain, composite = _with_sparse_features(to_parse)
    sparse, dense = _split_features(plain)
    with name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=_dt.string, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError("Input serialized must be a scalar")
        defaults = [_dense_default(k, t, s, v) for k, t, s, v in dense]
        op = apply_op("ParseSingleExample", [serialized, defaults],
                      {"num_sparse": len(sparse), "sparse_keys": [k for k, _ in sparse],
                       "dense_keys": [k for k, _, _, _ in dense],
                       "sparse_types": [t for _, t in sparse],
                       "dense_shapes": [s for _, _, s, _ in dense]},
                      name="ParseSingleExample")
        result = _merge_sparse_features(_results(sparse, dense, op.outputs), to_parse,
                                        composite)
        return ragged_feature.merge_ragged(result, features, ragged, None)
