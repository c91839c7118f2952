"""The dataset ops: their registrations and kernels (each kernel checks its arguments
and returns the op's value, a pipeline description of pipeline*.py), and the table of
functions traced for them (a function attr names a DatasetFunction of the op's graph).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import export
from tensorweave.framework.registry import TypeAttr, TypeListAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.data.pipeline import COMPOSITES, FixedLengthRecords, Once, Range, \
    Records, Slices, SparseComponent, TracedFunction, component_rows
from tensorweave.data.pipeline_batching import Batch, PaddedBatch, Unbatch, Windows
from tensorweave.data.pipeline_transforms import Cache, Concatenate, Filter, FlatMap, \
    Interleave, Map, Repeat, Shuffle, Skip, Take, Zip

# the parallelism the runtime chooses (cycle_length, num_parallel_calls, buffer_size)
AUTOTUNE = export(-1, "data.AUTOTUNE", "data.experimental.AUTOTUNE")


def functions_of(op) -> list:
    """The traced functions of a dataset op (its function attrs)."""
    table = op.graph.__dict__.get(_FUNCTIONS, {})
    return [table[v] for v in op.attrs.values() if isinstance(v, str) and v in table]


def unique(tensors) -> list:
    """`tensors` without repeats, in order (a graph's tensors compare by identity)."""
    return list(dict.fromkeys(tensors))



_FUNCTIONS = "_tw_dataset_functions"


class _FunctionKey(str):
    """A function attr's value (the key naming the function in its graph), carrying the
    function itself while its op is built (for its captured inputs)."""
    function: TracedFunction


def register_function(fn: TracedFunction) -> str:
    """A key naming `fn` in its graph (the op's `f` attr)."""
    table = fn.graph.__dict__.setdefault(_FUNCTIONS, {})
    key = _FunctionKey("%s_%d" % (fn.inputs[0].op.name.rsplit("/", 1)[0] if fn.inputs
                                  else "fn", len(table)))
    key.function = fn
    table[key] = fn
    return key


def runs_functions(attrs: dict) -> bool:
    """Whether an op of these `attrs` runs traced functions (so takes captured inputs)."""
    return any(isinstance(v, _FunctionKey) for v in attrs.values())


def captured_inputs(attrs: dict) -> list:
    """The captured tensors of the functions in `attrs` (an op's), each once: the op's
    `captured` input."""
    return unique(t for v in attrs.values() if isinstance(v, _FunctionKey)
                   for t in v.function.captures)


def captured_feed(ctx, captured) -> dict:
    """The feed of the captured tensors (the last inputs of the kernel's op) with their
    `captured` values. A variable's value read outside is copied: later assignments
    must not reach a pipeline initialized before them (a read may share the variable's
    buffer)."""
    tensors = ctx.op.inputs[len(ctx.op.inputs) - len(captured):]
    return {t: (np.array(v) if t.op.type in ("ReadVariableOp", "Identity") else v)
            for t, v in zip(tensors, captured)}


def function_kernel(op_type: str):
    """`kernel` for a dataset op that runs functions: the kernel body gets the op's
    inputs less the captured ones, which feed the runs of the value it returns."""
    def deco(body):
        def run(ctx, *args):
            n = len(args) - len(ctx.attrs["Tcaptured"])
            value = body(ctx, *args[:n])
            if n < len(args):
                value.feed = {**(value.feed or {}), **captured_feed(ctx, args[n:])}
            return value
        kernel(op_type)(run)
        return body
    return deco


def function_of(ctx, key: str) -> TracedFunction:
    fn = ctx.op.graph.__dict__.get(_FUNCTIONS, {}).get(key)
    if fn is None:
        raise errors.FailedPreconditionError(
            None, ctx.op, "The tf.data function %s is not in this graph: tensorweave traces "
            "dataset functions into the graph that builds the dataset, and a GraphDef does "
            "not carry them" % key)
    return fn


def _scalar(op):
    return TensorShape([])


def dataset_op(name: str, inputs, attrs=None, functions: bool = False):
    """Registers dataset op `name`; `functions`: it runs traced functions, whose
    captured tensors are its last input (`captured`, see `function_kernel`)."""
    attrs = dict({"output_types": TypeListAttr(), "output_shapes": []}, **(attrs or {}))
    if functions:
        inputs = list(inputs) + ["captured: Tcaptured"]
        attrs["Tcaptured"] = TypeListAttr()
    register_op(name, inputs=inputs, outputs=["handle: variant"], attrs=attrs,
                shape=_scalar, stateful=True)
    not_differentiable(name)


register_op("SparseTensorToVariant", inputs=["indices: int64", "values: T",
                                             "dense_shape: int64"],
            outputs=["component: variant"], attrs={"T": TypeAttr()}, shape=_scalar)
register_op("VariantToSparseTensor", inputs=["component: variant"],
            outputs=["indices: int64", "values: dtype", "dense_shape: int64"],
            attrs={"dtype": TypeAttr(), "static_shape": []},
            shape=lambda op: [TensorShape([None, None]), TensorShape([None]),
                              TensorShape([None])])
not_differentiable("SparseTensorToVariant")
not_differentiable("VariantToSparseTensor")


@tensor_util.register_static_value("VariantToSparseTensor")
def _static_dense_shape(op, index):
    """The dense shape when the dataset's spec knows it whole (so a SparseTensor from
    get_next has the static shape TF gives it)."""
    shape = op._get_attr("static_shape")
    if index != 2 or not shape or min(shape) < 0:
        return None
    return np.array(shape[1:], np.int64)


@kernel("SparseTensorToVariant")
def _sparse_to_variant_kernel(ctx, indices, values, dense_shape):
    return SparseComponent(indices, values, dense_shape)


@kernel("VariantToSparseTensor")
def _variant_to_sparse_kernel(ctx, component):
    if not isinstance(component, SparseComponent):
        raise errors.InvalidArgumentError(None, ctx.op, "Expected a SparseTensor component, "
                                          "got %s" % type(component).__name__)
    return component.indices, component.values, component.dense_shape


dataset_op("TensorSliceDataset", ["components: Toutput_types"],
            {"Toutput_types": TypeListAttr()})
dataset_op("TensorDataset", ["components: Toutput_types"], {"Toutput_types": TypeListAttr()})
dataset_op("RangeDataset", ["start: int64", "stop: int64", "step: int64"])
dataset_op("TFRecordDataset", ["filenames: string", "compression_type: string",
                                "buffer_size: int64"])
dataset_op("TextLineDataset", ["filenames: string", "compression_type: string",
                                "buffer_size: int64"])
dataset_op("FixedLengthRecordDatasetV2", ["filenames: string", "header_bytes: int64",
                                           "record_bytes: int64", "footer_bytes: int64",
                                           "buffer_size: int64", "compression_type: string"])
dataset_op("ZipDataset", ["input_datasets: N * variant"], {"N": 1})
dataset_op("ConcatenateDataset", ["input_dataset: variant", "another_dataset: variant"])
dataset_op("RepeatDataset", ["input_dataset: variant", "count: int64"])
dataset_op("TakeDataset", ["input_dataset: variant", "count: int64"])
dataset_op("SkipDataset", ["input_dataset: variant", "count: int64"])
dataset_op("PrefetchDataset", ["input_dataset: variant", "buffer_size: int64"])
dataset_op("BatchDatasetV2", ["input_dataset: variant", "batch_size: int64",
                               "drop_remainder: bool"])
dataset_op("ShuffleDataset", ["input_dataset: variant", "buffer_size: int64", "seed: int64",
                               "seed2: int64"], {"reshuffle_each_iteration": True})
dataset_op("PaddedBatchDatasetV2", ["input_dataset: variant", "batch_size: int64",
                                     "padded_shapes: N * int64",
                                     "padding_values: Toutput_types",
                                     "drop_remainder: bool"],
            {"N": 1, "Toutput_types": TypeListAttr()})
dataset_op("UnbatchDataset", ["input_dataset: variant"])
dataset_op("WindowDataset", ["input_dataset: variant", "size: int64", "shift: int64",
                             "stride: int64", "drop_remainder: bool"])
dataset_op("CacheDataset", ["input_dataset: variant", "filename: string"])
dataset_op("FlatMapDataset", ["input_dataset: variant"], {"f": ""}, functions=True)
dataset_op("InterleaveDataset", ["input_dataset: variant", "cycle_length: int64",
                                  "block_length: int64"], {"f": "", "read_ahead": False},
           functions=True)
dataset_op("MapDataset", ["input_dataset: variant"], {"f": ""}, functions=True)
dataset_op("FilterDataset", ["input_dataset: variant"], {"predicate": ""}, functions=True)


def int_arg(x) -> int:
    return int(np.asarray(x))


def _components(ctx, components):
    return [c if isinstance(c, (np.ndarray,) + COMPOSITES) else np.asarray(c)
            for c in components]


@kernel("TensorSliceDataset")
def _slices_kernel(ctx, *components):
    comps = _components(ctx, components)
    for c in comps:
        if not isinstance(c, COMPOSITES) and c.ndim == 0:
            raise errors.InvalidArgumentError(None, ctx.op, "Unbatching a tensor is only "
                                              "supported for rank >= 1")
        if component_rows(c) != component_rows(comps[0]):
            raise errors.InvalidArgumentError(
                None, ctx.op, "All components must have the same size in the 0th "
                "dimension: %d vs %d" % (component_rows(comps[0]), component_rows(c)))
    return Slices(comps)


kernel("TensorDataset")(lambda ctx, *components: Once(_components(ctx, components)))
kernel("RangeDataset")(lambda ctx, start, stop, step: Range(
    int_arg(start), int_arg(stop), _nonzero(ctx, int_arg(step)),
    _dt.as_dtype(ctx.attrs["output_types"][0]).as_numpy_dtype))


def _nonzero(ctx, step: int) -> int:
    if step == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "step must be a non-zero integer.")
    return step


def _filenames(x) -> list:
    return [f for f in np.asarray(x, dtype=object).reshape(-1).tolist()]


def _compression(x) -> str:
    v = np.asarray(x, dtype=object).item()
    return v.decode() if isinstance(v, bytes) else str(v)


kernel("TFRecordDataset")(lambda ctx, f, c, b: Records(_filenames(f), _compression(c),
                                                        False))
kernel("TextLineDataset")(lambda ctx, f, c, b: Records(_filenames(f), _compression(c), True))
kernel("FixedLengthRecordDatasetV2")(
    lambda ctx, f, header, record, footer, b, c: FixedLengthRecords(
        _filenames(f), int_arg(header), positive_arg(ctx, int_arg(record), "record_bytes"),
        int_arg(footer), _compression(c)))
kernel("ZipDataset")(lambda ctx, *inputs: Zip(list(inputs)))


def cpu_cores() -> int:
    """The CPU cores this process may run on (TF's AUTOTUNE cycle length, parallelism)."""
    import os
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def positive_arg(ctx, v: int, what: str) -> int:
    if v <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be greater than zero."
                                          % what)
    return v
kernel("ConcatenateDataset")(lambda ctx, a, b: Concatenate(a, b))
kernel("RepeatDataset")(lambda ctx, d, count: Repeat(d, int_arg(count)))
kernel("TakeDataset")(lambda ctx, d, count: Take(d, int_arg(count)))
kernel("SkipDataset")(lambda ctx, d, count: Skip(d, int_arg(count)))


@kernel("BatchDatasetV2")
def _batch_kernel(ctx, d, size, drop):
    return Batch(d, positive_arg(ctx, int_arg(size), "Batch size"), bool(np.asarray(drop)))


# map_and_batch's batching: TF fuses map and batch into one op, whose batch fails whole
# when an element of it does; tensorweave maps with MapDataset (or its parallel form)
# and batches with this
dataset_op("MapAndBatchBatchDataset", ["input_dataset: variant", "batch_size: int64",
                                       "drop_remainder: bool"])
kernel("MapAndBatchBatchDataset")(lambda ctx, d, size, drop: Batch(
    d, positive_arg(ctx, int_arg(size), "Batch size"), bool(np.asarray(drop)), whole=True))


@kernel("ShuffleDataset")
def _shuffle_kernel(ctx, d, buffer_size, seed, seed2):
    if int_arg(buffer_size) <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "buffer_size must be greater than "
                                          "zero.")
    seeds = int_arg(seed), int_arg(seed2)   # (0, 0): unseeded
    return Shuffle(d, int_arg(buffer_size), None if seeds == (0, 0) else seeds,
                   ctx.attrs["reshuffle_each_iteration"], ctx.op.name)


function_kernel("MapDataset")(lambda ctx, d: Map(d, function_of(ctx, ctx.attrs["f"])))
function_kernel("FlatMapDataset")(lambda ctx, d: FlatMap(d, function_of(ctx, ctx.attrs["f"]),
                                                  ctx.op.name))
kernel("UnbatchDataset")(lambda ctx, d: Unbatch(d))


@kernel("WindowDataset")
def _window_kernel(ctx, d, size, shift, stride, drop_remainder):
    size, shift, stride = int_arg(size), int_arg(shift), int_arg(stride)
    for name, v in (("size", size), ("shift", shift), ("stride", stride)):
        if v <= 0:
            raise errors.InvalidArgumentError(None, ctx.op, "Window %s must be greater than "
                                              "zero, but got %d." % (name, v))
    return Windows(d, size, shift, stride, bool(np.asarray(drop_remainder)))
@kernel("CacheDataset")
def _cache_kernel(ctx, d, filename):
    name = np.asarray(filename).reshape(()).item()
    name = name.decode() if isinstance(name, bytes) else str(name)
    if not name:
        return Cache(d)
    from tensorweave.data.file_cache import FileCache
    return FileCache(d, name, ctx.op)


@function_kernel("InterleaveDataset")
def _interleave_kernel(ctx, d, cycle_length, block_length):
    cycle, block = int_arg(cycle_length), int_arg(block_length)
    return Interleave(d, function_of(ctx, ctx.attrs["f"]),
                       positive_arg(ctx, cpu_cores() if cycle == AUTOTUNE else cycle,
                                 "cycle_length"), positive_arg(ctx, block, "block_length"),
                       ctx.attrs["read_ahead"], ctx.op.name)


@kernel("PaddedBatchDatasetV2")
def _padded_batch_kernel(ctx, d, size, *rest):
    n = len(ctx.attrs["Toutput_types"])
    shapes = [np.asarray(s).reshape(-1).tolist() for s in rest[:n]]
    values = [np.asarray(v) for v in rest[n:2 * n]]
    if int_arg(size) <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Batch size must be greater than "
                                          "zero.")
    return PaddedBatch(d, int_arg(size), shapes, values, bool(np.asarray(rest[2 * n])))
function_kernel("FilterDataset")(lambda ctx, d: Filter(d, function_of(ctx, ctx.attrs["predicate"])))
