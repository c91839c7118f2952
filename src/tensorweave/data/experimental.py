"""tf.data.experimental: the transformations TF1 programs apply with `dataset.apply(...)`
(shuffle_and_repeat, map_and_batch, parallel_interleave, unbatch, enumerate_dataset,
ignore_errors, take_while, unique, scan, bucket_by_sequence_length,
parse_example_dataset, copy_to_device, prefetch_to_device),
dataset combinators (choose_from_datasets, sample_from_datasets, Counter),
get_single_element and TFRecordWriter. Readers of files (CSV, Example records) are in
readers.py, keyed grouping in grouping.py, the other sources in sources.py,
dense_to_sparse_batch in sparse_batching.py.

The fused transformations of TF (map_and_batch, shuffle_and_repeat,
parallel_interleave) are their plain compositions here. map_and_batch's parallelism goes
to the map (parallel_map.py); parallel_interleave reads each open input ahead on a
thread of its own, in TF's deterministic order, so its `sloppy` and buffer sizes change
nothing.
"""
from __future__ import annotations

import typing
from typing import Callable

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeListAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data import pipeline_batching as _batching
from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.pipeline import DatasetValue
from tensorweave.data.structure import joinable, joined_shapes, joined_structure
from tensorweave.data.padding import flat_padding_values, flatten_shapes, padded_shape, \
    padding_value

_LARGEST = np.iinfo(np.int64).max


# --- transformations (for Dataset.apply) ------------------------------------------------------
@tf_export("data.experimental.shuffle_and_repeat")
def shuffle_and_repeat(buffer_size, count=None, seed: typing.Optional[int] = None) -> Callable:
    """`shuffle(buffer_size, seed)` then `repeat(count)`, each epoch in a new order."""
    return lambda ds: ds.shuffle(buffer_size, seed).repeat(count)


@tf_export("data.experimental.map_and_batch")
def map_and_batch(map_func: Callable, batch_size, num_parallel_batches=None,
                  drop_remainder: bool = False, num_parallel_calls=None) -> Callable:
    """`map(map_func)` then `batch(batch_size, drop_remainder)`; the map runs
    `num_parallel_calls` elements at once, or `num_parallel_batches` batches' worth.

    Raises:
      ValueError: both `num_parallel_batches` and `num_parallel_calls` are set.
    """
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("`map_and_batch` allows only one of `num_parallel_batches` and "
                         "`num_parallel_calls` to be set, but `num_parallel_batches` was "
                         "set to %s and `num_parallel_calls` was set to %s."
                         % (num_parallel_batches, num_parallel_calls))
    calls = num_parallel_calls
    if calls is None and num_parallel_batches is not None:
        calls = int(num_parallel_batches) * int(batch_size)
    return lambda ds: _ds.batched(ds.map(map_func, num_parallel_calls=calls), batch_size,
                                  drop_remainder, "MapAndBatchBatchDataset")


@tf_export("data.experimental.map_and_batch_with_legacy_function")
def map_and_batch_with_legacy_function(map_func: Callable, batch_size,
                                       num_parallel_batches=None,
                                       drop_remainder: bool = False,
                                       num_parallel_calls=None) -> Callable:
    """`map_and_batch`: TF1 traced every dataset function the legacy way, as tensorweave
    does."""
    return map_and_batch(map_func, batch_size, num_parallel_batches, drop_remainder,
                         num_parallel_calls)


@tf_export("data.experimental.parse_example_dataset")
def parse_example_dataset(features: dict, num_parallel_calls=1,
                          deterministic: typing.Optional[bool] = None) -> Callable:
    """A transformation parsing a dataset of vectors of serialized Example protos into
    dicts of tensors, as `tf.io.parse_example` parses each vector (`num_parallel_calls`
    of them at once, results in input order).

    Raises:
      ValueError: no `features`.
      TypeError: the dataset's elements are not vectors of strings.
    """
    if features is None:
        raise ValueError("Argument `features` is required, but not specified.")
    from tensorweave.ops.io.parsing_ops import parse_example

    def apply(ds: Dataset) -> Dataset:
        if ds._structure != 0 or ds._types[0] != _dt.string or \
                not ds._shapes[0].is_compatible_with([None]):
            raise TypeError("Input dataset should be a dataset of vectors of strings. "
                            "Instead it is `%s`." % (ds.element_spec,))
        return ds.map(lambda serialized: parse_example(serialized, features),
                      num_parallel_calls=num_parallel_calls)
    return apply


@tf_export("data.experimental.copy_to_device")
def copy_to_device(target_device: str, source_device: str = "/cpu:0") -> Callable:
    """The dataset unchanged: tensorweave's pipelines run on the host, and an element
    reaches `target_device` when the ops that read it run there (the executor copies
    it), so there is nothing to move ahead of time."""
    return lambda ds: ds


@tf_export("data.experimental.prefetch_to_device")
def prefetch_to_device(device: str, buffer_size=None) -> Callable:
    """`prefetch(buffer_size)` (default AUTOTUNE): elements are read ahead on the host
    and reach `device` when the ops that read them run there (see `copy_to_device`)."""
    return lambda ds: ds.prefetch(_kernels.AUTOTUNE if buffer_size is None else buffer_size)


@tf_export("data.experimental.parallel_interleave")
def parallel_interleave(map_func: Callable, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None
                        ) -> Callable:
    """`interleave(map_func, cycle_length, block_length)` in TF's deterministic order,
    each open input read ahead on a thread of its own (`sloppy` and the buffer sizes
    change nothing)."""
    return lambda ds: ds.interleave(map_func, cycle_length, block_length,
                                    num_parallel_calls=cycle_length)


@tf_export("data.experimental.unbatch")
def unbatch() -> Callable:
    """`Dataset.unbatch`."""
    return lambda ds: ds.unbatch()


@tf_export("data.experimental.enumerate_dataset")
def enumerate_dataset(start=0) -> Callable:
    """Each element as (its index from `start`, the element)."""
    return lambda ds: Dataset.zip((Dataset.range(start, _LARGEST), ds))


@tf_export("data.experimental.ignore_errors")
def ignore_errors(log_warning: bool = False) -> Callable:
    """The elements whose `map`/`filter` functions succeed; the others are dropped."""
    return lambda ds: _derive_simple(ds, "IgnoreErrorsDataset", {"log_warning":
                                                                  bool(log_warning)})




@tf_export("data.experimental.take_while")
def take_while(predicate: Callable) -> Callable:
    """The elements up to the first for which `predicate` gives False."""
    def apply(ds: Dataset) -> Dataset:
        fn = _ds.DatasetFunction(predicate, ds._structure, ds._types, ds._shapes,
                                 "take_while_fn", unpack=True)
        if len(fn.outputs) != 1 or fn.outputs[0].dtype != _dt.bool:
            raise ValueError("`predicate` return type must be convertible to a scalar "
                             "boolean tensor. Was %s." % (fn.outputs,))
        return ds._derive("TakeWhileDataset", [], {"predicate": _kernels.register_function(fn)})
    return apply


@tf_export("data.experimental.unique")
def unique() -> Callable:
    """Each distinct element once, at its first occurrence (elements of one int or
    string component).

    Raises:
      TypeError: elements of several components or another dtype than int32, int64 or
        string.
    """
    def apply(ds: Dataset) -> Dataset:
        if len(ds._types) != 1:  # TF finds it when the iterator starts; we, now
            raise TypeError("`tf.data.Dataset.unique` only supports datasets with a single "
                            "`tf.int32`, `tf.int64`, or `tf.string` component.")
        if ds._types[0] not in (_dt.int32, _dt.int64, _dt.string):
            raise TypeError("`tf.data.Dataset.unique` does not support type %s -- only "
                            "`tf.int32`, `tf.int64`, and `tf.string` are supported."
                            % ds._types[0])
        return _derive_simple(ds, "UniqueDataset")
    return apply


def _derive_simple(ds: Dataset, op_type: str, attrs=None) -> Dataset:
    return ds._derive(op_type, [], attrs)


# --- combinators and sources ------------------------------------------------------------------
@tf_export("data.experimental.Counter")
def Counter(start=0, step=1, dtype=_dt.int64) -> Dataset:  # noqa: N802 - TF's name
    """start, start + step, ... without end."""
    end = _LARGEST if int(np.asarray(step)) > 0 else -_LARGEST
    ds = Dataset.range(start, end, step)
    dtype = _dt.as_dtype(dtype)
    if dtype != _dt.int64:
        from tensorweave.ops.math.math_ops import cast
        ds = ds.map(lambda v: cast(v, dtype))
    return ds


@tf_export("data.experimental.choose_from_datasets")
def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset: bool = False
                         ) -> Dataset:
    """For each int64 `k` of `choice_dataset`, the next element of `datasets[k]`; an
    exhausted one is passed over (or, with `stop_on_empty_dataset`, ends the dataset).

    Raises:
      TypeError: the datasets' elements differ, or the choices are not int64 scalars.
    """
    datasets = list(datasets)
    _check_same(datasets)
    if choice_dataset._types != [_dt.int64] or choice_dataset._shapes[0].ndims not in (0,
                                                                                        None):
        raise TypeError("`choice_dataset` must be a dataset of scalar `tf.int64` tensors.")
    first = datasets[0]
    op = apply_op("ChooseFromDatasets", [choice_dataset._variant,
                                         [d._variant for d in datasets]],
                  dict(_ds.spec_attrs(first._types, joined_shapes(datasets)),
                       stop_on_empty_dataset=bool(stop_on_empty_dataset)),
                  name="ChooseFromDatasets")
    return _joined(op, datasets)


@tf_export("data.experimental.sample_from_datasets")
def sample_from_datasets(datasets, weights=None, seed: typing.Optional[int] = None,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    """Elements drawn from `datasets` at random with probabilities `weights` (default
    uniform); an exhausted dataset is passed over when drawn (or, with
    `stop_on_empty_dataset`, ends the dataset).

    TF's composition, so TF's draws: the k-th choice is a `stateless_categorical` draw
    from `log(weights)` seeded by values 2k and 2k + 1 of `Dataset.random(seed)`.
    `weights` may also be a dataset of weight vectors, one for each element drawn.

    Raises:
      TypeError: the datasets' elements differ, or the weights are not float32/float64.
      ValueError: no datasets, or `weights` of another length than `datasets`.
    """
    return sampled_datasets(datasets, weights, seed, stop_on_empty_dataset)


def sampled_datasets(datasets, weights=None, seed: typing.Optional[int] = None,
                     stop_on_empty_dataset: bool = False,
                     rerandomize_each_iteration: typing.Optional[bool] = None) -> Dataset:
    """`sample_from_datasets` with `Dataset.sample_from_datasets`'s
    `rerandomize_each_iteration`: the seeds are those of
    `Dataset.random(seed, rerandomize_each_iteration)`, so each pass of a `repeat` draws
    anew (see sources.RandomDataset).

    Raises:
      As `sample_from_datasets`.
    """
    datasets = list(datasets)
    _check_same(datasets)
    if isinstance(weights, Dataset):
        choices = _varying_weight_choices(weights, seed, rerandomize_each_iteration)
        return choose_from_datasets(datasets, choices, stop_on_empty_dataset)
    datasets, logits = _constant_logits(datasets, weights)
    if len(datasets) == 1:
        return datasets[0]
    return _sampled(datasets, logits, Dataset.random(seed, rerandomize_each_iteration),
                    stop_on_empty_dataset)


def _sampled(datasets: list, logits, random: Dataset, stop_on_empty_dataset: bool):
    """TF's `choose_from_datasets(datasets, random.batch(2).map(draw))`, `draw` the
    stateless categorical draw from `logits` seeded by the pair, as one op whose kernel
    makes many draws at once (a map would run a function per element, 50x slower)."""
    from tensorweave.ops.math.math_ops import cast
    op = apply_op("SampleFromDatasets", [random._variant, cast(logits, _dt.float64),
                                         [d._variant for d in datasets]],
                  dict(_ds.spec_attrs(datasets[0]._types, joined_shapes(datasets)),
                       stop_on_empty_dataset=bool(stop_on_empty_dataset)),
                  name="SampleFromDatasets")
    return _joined(op, datasets)


def _constant_logits(datasets: list, weights):
    """(datasets, logits [n]) of fixed `weights`, as TF's: Python weights drop the
    datasets they weigh 0 (all 0: an empty dataset)."""
    from tensorweave.framework.graph import Tensor
    from tensorweave.ops.math.math_unary import log
    if weights is None:
        return datasets, convert_to_tensor([1.0] * len(datasets))
    if isinstance(weights, Tensor):
        if not weights.shape.is_compatible_with([len(datasets)]):
            raise ValueError("Invalid `weights`. The shape of `weights` should be compatible "
                             "with `[len(datasets)]` but is %s." % weights.shape)
    else:
        if len(datasets) != len(weights):
            raise ValueError("Invalid `weights`. `weights` should have the same length as "
                             "`datasets` but got `len(weights)=%d` vs. `len(datasets)=%d`."
                             % (len(weights), len(datasets)))
        kept = [(d, w) for d, w in zip(datasets, weights) if w > 0]
        datasets, weights = ([d for d, _ in kept], [w for _, w in kept]) if kept else \
            ([datasets[0].take(0)], [1.0])
    weights = convert_to_tensor(weights, name="weights")
    if weights.dtype not in (_dt.float32, _dt.float64):
        raise TypeError("Invalid `weights`. `weights` type must be either `tf.float32` or "
                        "`tf.float64` but is %s." % weights.dtype)
    return datasets, log(weights, name="logits")


def _draw_one(logits, seed):
    """The class a `stateless_categorical` draw from `logits` [1, n] picks, a scalar."""
    from tensorweave.ops.array.array_ops import squeeze
    from tensorweave.ops.random.stateless_random_ops import stateless_categorical
    return squeeze(stateless_categorical(logits, 1, seed), axis=[0, 1])


def _varying_weight_choices(weights: Dataset, seed, rerandomize: typing.Optional[bool]
                            ) -> Dataset:
    """The index drawn for each weight vector of `weights`, seeded by pairs of values of
    `Dataset.random(seed, rerandomize)`, made after the logits as TF's (with a graph
    seed only, the op seed counts the ops made before)."""
    from tensorweave.ops.math.math_unary import log
    if len(weights._types) != 1 or weights._types[0] not in (_dt.float32, _dt.float64):
        raise TypeError("`weights` must be a dataset of `tf.float32` or `tf.float64` "
                        "vectors, got %s." % (weights.output_types,))
    logits = weights.map(lambda w: log([w], name="logits"))
    random = Dataset.random(seed, rerandomize)
    return Dataset.zip((logits, random.batch(2))).map(_draw_one)


def _check_same(datasets) -> None:
    """TF's check that `datasets` have a common element spec.

    Raises:
      ValueError: no datasets.
      TypeError: two differ in nesting, dtypes or spec names.
    """
    if not datasets:
        raise ValueError("`datasets` must be a non-empty list of datasets.")
    first = datasets[0]
    for k, d in enumerate(datasets[1:], 1):
        if not joinable(first, d):
            raise TypeError("Invalid `datasets`. `datasets` must have compatible element "
                            "specs.\n Dataset 0 element_spec=%s.\nDataset %d element_spec="
                            "%s." % (first.element_spec, k, d.element_spec))


def _joined(op, datasets) -> Dataset:
    """The dataset of `op`, whose elements are those of `datasets` (checked by
    _check_same): of their common element spec, as TF's."""
    first = datasets[0]
    return Dataset(op.outputs[0], joined_structure(datasets), first._types,
                   joined_shapes(datasets), datasets, first._names)


@tf_export("data.experimental.get_single_element")
def get_single_element(dataset: Dataset):
    """The one element of `dataset` (its run raises InvalidArgumentError if the dataset
    has none or more than one).

    Raises:
      TypeError: `dataset` is not a Dataset.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError("Invalid `dataset`. Expected a `tf.data.Dataset` object but got "
                        "%s." % type(dataset))
    return _ds.read_element("DatasetToSingleElement", [dataset._variant], dataset,
                            "DatasetToSingleElement")


@tf_export("data.experimental.TFRecordWriter")
class TFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file.

    Args:
      filename: the file to write.
      compression_type: "", "GZIP" or "ZLIB".
    """

    def __init__(self, filename, compression_type=None):
        self._filename = convert_to_tensor(filename, _dt.string, name="filename")
        self._compression = convert_to_tensor(compression_type or "", _dt.string,
                                              name="compression_type")

    def write(self, dataset: Dataset):
        """The op that writes every element of `dataset` (scalar strings).

        Raises:
          TypeError: the elements are not scalar strings.
        """
        if dataset._types != [_dt.string] or dataset._shapes[0].ndims not in (0, None):
            raise TypeError("`dataset` must produce scalar `DT_STRING` tensors whereas it "
                            "produces shape %s and types %s" % (dataset.output_shapes,
                                                                dataset.output_types))
        return apply_op("DatasetToTFRecord", [dataset._variant, self._filename,
                                              self._compression], name="DatasetToTFRecord")


# --- the ops and their values -------------------------------------------------------------
_kernels.dataset_op("IgnoreErrorsDataset", ["input_dataset: variant"], {"log_warning": False})
_kernels.dataset_op("TakeWhileDataset", ["input_dataset: variant"], {"predicate": ""},
               functions=True)
_kernels.dataset_op("UniqueDataset", ["input_dataset: variant"])
_kernels.dataset_op("ChooseFromDatasets", ["selector_input_dataset: variant",
                                      "data_input_datasets: N * variant"],
               {"N": 1, "stop_on_empty_dataset": False})
_kernels.dataset_op("SampleFromDatasets", ["random_dataset: variant", "logits: double",
                                           "input_datasets: N * variant"],
                    {"N": 1, "stop_on_empty_dataset": False})
register_op("DatasetToSingleElement", inputs=["dataset: variant"],
            outputs=["components: output_types"],
            attrs={"output_types": TypeListAttr(), "output_shapes": []},
            shape=lambda op: [TensorShape(s) for s in op._get_attr("output_shapes")],
            stateful=True)
register_op("DatasetToTFRecord", inputs=["input_dataset: variant", "filename: string",
                                         "compression_type: string"], stateful=True)
not_differentiable("DatasetToSingleElement")
not_differentiable("DatasetToTFRecord")


class _TakeWhile(DatasetValue):
    def __init__(self, source, fn):
        self.source, self.fn = source, fn

    def _elements(self, ctx, with_errors: bool):
        for e in _pipe.read(self.source, ctx, with_errors):
            if isinstance(e, _pipe.ElementError):
                yield e
                continue
            if not bool(np.asarray(self.fn.run(ctx, e, self.feed)[0])):
                return
            yield e


class _Unique(DatasetValue):
    def __init__(self, source):
        self.source = source

    def _elements(self, ctx, with_errors: bool):
        seen = set()
        for e in _pipe.read(self.source, ctx, with_errors):
            if isinstance(e, _pipe.ElementError):
                yield e
                continue
            key = np.asarray(e[0]).item()
            if key not in seen:
                seen.add(key)
                yield e


class _Choose(DatasetValue):
    def __init__(self, selector, inputs, stop: bool):
        self.selector, self.inputs, self.stop = selector, inputs, stop

    def _elements(self, ctx, with_errors: bool):
        choices = (c if isinstance(c, _pipe.ElementError) else int(np.asarray(c[0]))
                   for c in _pipe.read(self.selector, ctx, with_errors))
        return _directed(ctx, [_pipe.read(d, ctx, with_errors) for d in self.inputs],
                         choices, self.stop)


def _directed(ctx, inputs: list, choices, stop: bool):
    """TF's DirectedInterleave: for each choice k, the next element of `inputs[k]`; an
    exhausted input is passed over when chosen (or, with `stop`, ends it all)."""
    done = [False] * len(inputs)
    for k in choices:
        if isinstance(k, _pipe.ElementError):
            yield k
            continue
        if not 0 <= k < len(inputs):
            raise errors.InvalidArgumentError(
                None, ctx.op, "Selector index out of range: %d >= %d" % (k, len(inputs)))
        if done[k]:
            continue
        try:
            yield next(inputs[k])
        except StopIteration:
            done[k] = True
            if stop or all(done):
                return


class _Sample(DatasetValue):
    """TF's sample_from_datasets of fixed weights: choice k is the class TF's
    StatelessMultinomial(logits, 1) draws seeded by values 2k and 2k + 1 of `random`
    (a RandomDataset), computed for many choices at once."""

    _PAIRS = 256   # choices computed at a time

    def __init__(self, random, logits: np.ndarray, inputs, stop: bool):
        self.random, self.logits, self.inputs, self.stop = random, logits, inputs, stop

    def _elements(self, ctx, with_errors: bool):
        return _directed(ctx, [_pipe.read(d, ctx, with_errors) for d in self.inputs],
                         self._choices(ctx), self.stop)

    def _choices(self, ctx):
        from tensorweave.ops.random.tf_sampling import categorical_of_seeds
        values = (int(v[0]) for v in self.random.elements(ctx))
        while True:
            seeds = np.fromiter(values, np.int64, 2 * self._PAIRS).reshape(-1, 2)
            yield from categorical_of_seeds(self.logits, seeds).tolist()


class _IgnoreErrors(DatasetValue):
    """The input's elements less those that failed (TF's ignore_errors drops the errors
    that reach it: a batch with a failed element is dropped whole)."""

    def __init__(self, source):
        self.source = source
        _skip_errors_below_enders(source)

    def elements(self, ctx):
        for e in self.source.elements_with_errors(ctx):
            if not isinstance(e, _pipe.ElementError):
                yield e


def _passes_errors_on(value: DatasetValue) -> bool:
    """Whether `value` reads its input with errors on an iterator's pass: it defines
    `_elements` or `elements_with_errors`, not `elements` alone (DatasetValue)."""
    kind = type(value)
    return kind._elements is not DatasetValue._elements or \
        kind.elements_with_errors is not DatasetValue.elements_with_errors


def _skip_errors_below_enders(value: DatasetValue) -> None:
    """Below a transformation that ends its pass at an error (it hands no failed
    elements on), the functions drop the elements they fail on instead: the nearest
    to TF's dropping of that error there is."""
    if not _passes_errors_on(value):
        _skip_errors_everywhere(value)
        return
    for child in _children(value):
        _skip_errors_below_enders(child)


def _skip_errors_everywhere(value: DatasetValue) -> None:
    value.skip_errors = True
    for child in _children(value):
        _skip_errors_everywhere(child)


def _children(value: DatasetValue) -> list:
    return [c for c in [getattr(value, k, None) for k in ("source", "first", "second",
                                                          "selector")] +
            list(getattr(value, "inputs", ())) if isinstance(c, DatasetValue)]


kernel("IgnoreErrorsDataset")(lambda ctx, d: _IgnoreErrors(d))
_kernels.function_kernel("TakeWhileDataset")(lambda ctx, d: _TakeWhile(d, _kernels.function_of(
    ctx, ctx.attrs["predicate"])))
kernel("UniqueDataset")(lambda ctx, d: _Unique(d))
kernel("ChooseFromDatasets")(lambda ctx, selector, *inputs: _Choose(
    selector, list(inputs), ctx.attrs["stop_on_empty_dataset"]))
kernel("SampleFromDatasets")(lambda ctx, random, logits, *inputs: _Sample(
    random, np.asarray(logits, np.float64).reshape(-1), list(inputs),
    ctx.attrs["stop_on_empty_dataset"]))


@kernel("DatasetToSingleElement")
def _single_element_kernel(ctx, dataset):
    it = dataset.elements(_pipe.PipelineContext(ctx))
    first = next(it, None)
    if first is None:
        raise errors.InvalidArgumentError(None, ctx.op, "Dataset was empty.")
    if next(it, None) is not None:
        raise errors.InvalidArgumentError(None, ctx.op, "Dataset had more than one "
                                          "element.")
    return list(first)


@kernel("DatasetToTFRecord")
def _to_tfrecord_kernel(ctx, dataset, filename, compression):
    from tensorweave.ops.io import record_io
    name = np.asarray(filename, dtype=object).item()
    comp = np.asarray(compression, dtype=object).item()
    path = name.decode() if isinstance(name, bytes) else str(name)
    comp = comp.decode() if isinstance(comp, bytes) else str(comp)
    with record_io.TFRecordWriter(path, comp or None) as w:
        for e in dataset.elements(_pipe.PipelineContext(ctx)):
            w.write(np.asarray(e[0], dtype=object).item())


# --- scan and bucketing -------------------------------------------------------------------
@tf_export("data.experimental.scan")
def scan(initial_state, scan_func: Callable) -> Callable:
    """A transformation carrying a state: `scan_func(state, element)` gives (new state,
    output element); the state starts as `initial_state` (evaluated when the iterator
    starts).

    Raises:
      TypeError: the new state's structure or dtypes differ from `initial_state`'s.
    """
    def apply(ds: Dataset) -> Dataset:
        state_structure, state_flat = _ds.structure_of(initial_state)
        types = [t.dtype for t in state_flat]
        n = len(state_flat)

        def trace(shapes) -> _ds.DatasetFunction:
            fn = _ds.DatasetFunction(scan_func, (state_structure, ds._structure),
                                     types + ds._types, list(shapes) + ds._shapes,
                                     "scan_fn", unpack=True)
            if not isinstance(fn.structure, tuple) or len(fn.structure) != 2:
                raise TypeError("The scan function must return a pair (new state, "
                                "output).")
            new_state = fn.outputs[:n]
            if nest.flatten(fn.structure[0]) != nest.flatten(state_structure) or \
                    [t.dtype for t in new_state] != types:
                raise TypeError("The element types for the new state must match the "
                                "initial state. Expected %s; got %s."
                                % (types, [t.dtype for t in new_state]))
            return fn

        fn = _ds.trace_with_state(trace, [t.shape for t in state_flat])
        outs = fn.outputs[n:]
        attrs = dict(_ds.spec_attrs([t.dtype for t in outs], [t.shape for t in outs]),
                     f=_kernels.register_function(fn), Tstate=types)
        return Dataset(apply_op("ScanDataset", [ds._variant, state_flat,
                                                _kernels.captured_inputs(attrs)],
                                attrs, name="ScanDataset").outputs[0],
                       fn.structure[1], [t.dtype for t in outs], [t.shape for t in outs],
                       [ds])
    return apply


@tf_export("data.experimental.bucket_by_sequence_length")
def bucket_by_sequence_length(element_length_func: Callable, bucket_boundaries,
                              bucket_batch_sizes, padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                              drop_remainder: bool = False) -> Callable:
    """Batches of elements of similar length: an element of length L goes to the bucket
    of the first boundary above L (the last bucket takes the rest); a bucket is emitted,
    padded, when it holds its batch size, and what remains at the end in bucket order
    (unless `drop_remainder`). With `pad_to_bucket_boundary`, batches are padded to their
    bucket's boundary less one (an element of length >= the largest boundary is then an
    InvalidArgumentError).

    Raises:
      ValueError: `bucket_batch_sizes` is not one longer than `bucket_boundaries`.
    """
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError("len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1")

    def apply(ds: Dataset) -> Dataset:
        fn = _ds.DatasetFunction(element_length_func, ds._structure, ds._types, ds._shapes,
                                 "element_length_fn", unpack=True)
        padded = [padded_shape(s) for s in flatten_shapes(
            ds._structure, ds.output_shapes if padded_shapes is None else padded_shapes)]
        shapes, shape_tensors = [s for s, _ in padded], [t for _, t in padded]
        # padded_batch's padding values: scalars of the components' dtypes
        values = [padding_value(v, t) for v, t in zip(
            flat_padding_values(ds._structure, padding_values), ds._types)]
        out_shapes = [TensorShape([None]).concatenate(
            s if not no_padding else ds_s) for s, ds_s in zip(shapes, ds._shapes)]
        if pad_to_bucket_boundary:
            out_shapes = [TensorShape([None]).concatenate(
                TensorShape([None] * len(s)) if s.ndims else s) for s in shapes]
        return ds._derive("BucketBySequenceLengthDataset", [shape_tensors, values],
                          {"f": _kernels.register_function(fn), "bucket_boundaries": boundaries,
                           "bucket_batch_sizes": sizes, "no_padding": bool(no_padding),
                           "pad_to_bucket_boundary": bool(pad_to_bucket_boundary),
                           "drop_remainder": bool(drop_remainder),
                           "Toutput_types": list(ds._types)}, shapes=out_shapes)
    return apply


_kernels.dataset_op("ScanDataset", ["input_dataset: variant", "initial_state: Tstate"],
               {"f": "", "Tstate": TypeListAttr()}, functions=True)
_kernels.dataset_op("BucketBySequenceLengthDataset",
               ["input_dataset: variant", "padded_shapes: N * int64",
                "padding_values: Toutput_types"],
               {"N": 1, "Toutput_types": TypeListAttr(), "f": "", "bucket_boundaries": [],
                "bucket_batch_sizes": [], "no_padding": False, "pad_to_bucket_boundary": False,
                "drop_remainder": False}, functions=True)


class _Scan(DatasetValue):
    def __init__(self, source, fn, state):
        self.source, self.fn, self.state = source, fn, list(state)

    def _elements(self, ctx, with_errors: bool):
        state = list(self.state)
        n = len(state)
        for e in _pipe.read(self.source, ctx, with_errors):
            if isinstance(e, _pipe.ElementError):  # handed on; the state stays
                yield e
                continue
            out = self.fn.run(ctx, state + list(e), self.feed)
            state, element = out[:n], out[n:]
            yield element


class _Buckets(DatasetValue):
    def __init__(self, source, fn, boundaries, sizes, shapes, values, pad_to_boundary: bool,
                 no_padding: bool, drop: bool):
        self.source, self.fn = source, fn
        self.boundaries, self.sizes = boundaries, sizes
        self.shapes, self.values = shapes, values
        self.pad_to_boundary, self.no_padding, self.drop = pad_to_boundary, no_padding, drop

    def _emit(self, ctx, k, batch):
        if self.no_padding:
            return _batching.stack(ctx, batch)
        shapes = self.shapes
        if self.pad_to_boundary:
            length = self.boundaries[k] - 1
            shapes = [[length if d < 0 else d for d in s][:1] + list(s[1:]) if len(s) else s
                      for s in shapes]
        return _batching.pad_batch(ctx, batch, shapes, self.values)

    def _elements(self, ctx, with_errors: bool):
        import bisect
        buckets = [[] for _ in self.sizes]
        for e in _pipe.read(self.source, ctx, with_errors):
            if isinstance(e, _pipe.ElementError):
                yield e
                continue
            length = int(np.asarray(self.fn.run(ctx, e, self.feed)[0]))
            if self.pad_to_boundary and length >= self.boundaries[-1]:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "When pad_to_bucket_boundary=True, elements must have "
                    "length < max(bucket_boundaries).")
            k = bisect.bisect_right(self.boundaries, length)
            buckets[k].append(e)
            if len(buckets[k]) == self.sizes[k]:
                yield self._emit(ctx, k, buckets[k])
                buckets[k] = []
        if not self.drop:
            for k, batch in enumerate(buckets):
                if batch:
                    yield self._emit(ctx, k, batch)


@_kernels.function_kernel("ScanDataset")
def _scan_kernel(ctx, d, *state):
    return _Scan(d, _kernels.function_of(ctx, ctx.attrs["f"]), [np.asarray(s) for s in state])


@_kernels.function_kernel("BucketBySequenceLengthDataset")
def _buckets_kernel(ctx, d, *rest):
    a = ctx.attrs
    n = len(a["Toutput_types"])
    shapes = [np.asarray(s).reshape(-1).tolist() for s in rest[:n]]
    values = [np.asarray(v) for v in rest[n:2 * n]]
    return _Buckets(d, _kernels.function_of(ctx, a["f"]), list(a["bucket_boundaries"]),
                    list(a["bucket_batch_sizes"]), shapes, values,
                    a["pad_to_bucket_boundary"], a["no_padding"], a["drop_remainder"])
