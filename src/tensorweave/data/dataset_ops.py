"""tf.data datasets in graph mode: each Dataset is an op whose (variant) value describes
the pipeline, built when an iterator is initialized, and read element by element by
IteratorGetNext (iterator_ops.py).

An element is a nested structure (a tensor, tuple or dict) of components; a dataset
carries the structure with the dtypes and static shapes of its components
(`output_types`, `output_shapes`, `output_classes`). The ops and what their values yield:

  TensorSliceDataset / TensorDataset  slices of the components along their first
                          dimension / the components once (evaluated when the iterator
                          is initialized: a placeholder is fed to the initializer, as in
                          TF1)
  RangeDataset            start, start + step, ... < stop (int64, or its output_type)
  TFRecordDataset / TextLineDataset  the records / lines (without line ends) of the
                          files, in order
  ZipDataset, ConcatenateDataset, RepeatDataset (count < 0: forever), TakeDataset,
  SkipDataset (the elements as they are), PrefetchDataset (read ahead by a thread,
                          prefetch.py)
  BatchDatasetV2          consecutive elements stacked (the last batch may be short
                          unless drop_remainder)
  ShuffleDataset          TF's buffer shuffle: fill a buffer, then yield a random buffer
                          element and put the next input element in its place; a new
                          order each epoch of an enclosing repeat when
                          reshuffle_each_iteration (unseeded: orders drawn from the
                          iterator pass's seed, see PipelineContext)
  MapDataset / FilterDataset  `map_func` / `predicate` applied to each element
  FlatMapDataset / InterleaveDataset  the elements of the datasets a function gives for
                          each element, one after another / `block_length` at a time
                          from `cycle_length` open ones in turn (TF's order)
  PaddedBatchDatasetV2, UnbatchDataset, CacheDataset (in memory: an enclosing repeat
                          replays the first complete pass; or in a file, file_cache.py)

A SparseTensor component (a parse_example of VarLenFeatures, say) travels as one variant
component holding its three arrays; its structure leaf is a SparseSpec (values dtype,
dense shape), and functions and get_next see a SparseTensor again. Batching stacks such
components (a new first dimension, as TF), unbatch and from_tensor_slices take their
rows; padded_batch of them is a TypeError, as in TF. A RaggedTensor component travels
the same way (data/ragged_elements.py: a RaggedSpec leaf; a batch is a RaggedTensor of
one more ragged dimension, as TF 2.x's). `window` makes elements whose
components are datasets in the same way (a DatasetSpec leaf, a Dataset again in
functions).

A function (`map_func`, `predicate`) is traced once when the dataset is built, into ops
of the same graph that read placeholders for the element's components; the kernel runs
them per element with a nested `Session.run` of the session running the pipeline. So a
function may use what the graph holds (lookup tables, variables, constants). The tensors
it uses from outside (its captures: a placeholder, a variable's value, a random draw) are,
as TF's captured inputs, extra inputs of the dataset op: evaluated once when the iterator
is initialized (with that run's feeds) and fed to every per-element run.

An element a function fails on is that get_next's error and the pass goes on (TF's
iterators go on after an error): iterators read `elements_with_errors`, in which such an
element (or a batch that cannot be made, a generator's element of the wrong type) is an
ElementError that every transformation hands on in TF's way (a batch or window holding
one fails whole; zip fails that step; interleave, flat_map, concatenate, cache, scan,
grouping and the others pass it through and go on); ignore_errors drops those that
reach it. Those that do not (group_by_reducer) end the pass at the error.

Where the parts are: this module has the Dataset classes, element structures and traced
functions (what a program builds); file_datasets.py the datasets of files (TFRecord, text
lines, fixed-length records); dataset_kernels.py the ops' registrations and kernels;
pipeline.py, pipeline_transforms.py and pipeline_batching.py the values the kernels
return (what an iterator's pass reads); the other modules of this package one
transformation family each.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.framework.tensor_spec import SparseTensorSpec, TensorSpec
from tensorweave.framework.type_spec_from_value import register_converter
from tensorweave.runtime.values import element
from tensorweave.data.dataset_kernels import AUTOTUNE, captured_inputs, \
    register_function, runs_functions, unique
from tensorweave.data.padding import flat_padding_values, flatten_shapes, padded_shape, \
    padding_value
from tensorweave.data import ragged_elements
from tensorweave.data.dataset_methods import TwinMethods
from tensorweave.data.dataset_spec import DatasetSpec
from tensorweave.data.structure import joinable, joined_shapes, joined_structure
from tensorweave.data.ragged_elements import RaggedSpec


# --- functions traced into the graph ----------------------------------------------------------
class DatasetFunction:
    """A function of an element, traced once into ops of the dataset's graph: `inputs`
    are placeholders of the element's components, `outputs` the flat result tensors,
    `structure` its nesting."""

    def __init__(self, fn: Callable, in_structure, in_types, in_shapes, name: str,
                 unpack: bool):
        g = _graph.get_default_graph()
        first_op = len(g._ops)
        # summaries made in a function stay in it, as in TF's function graph (merge_all
        # must not fetch a per-element op)
        summaries = list(g.get_collection_ref(_graph.GraphKeys.SUMMARIES))
        from tensorweave.ops.random.random_ops import function_seed_count
        # TF traces the function into a graph of its own, whose op seeds count apart
        with _graph.name_scope(name), function_seed_count(g):
            self.inputs = [_placeholder(t, s, "arg%d" % k)
                           for k, (t, s) in enumerate(zip(in_types, in_shapes))]
            element = pack_element(in_structure, self.inputs)
            # a plain tuple is spread over the arguments; a namedtuple (like a dict)
            # is one argument, as TF's
            if unpack and type(element) is tuple:
                result = fn(*element)
            else:
                result = fn(element)
            result = _function_result(result)
            # a function giving a dataset (flat_map, interleave) gives its variant value
            self.dataset = result if isinstance(result, Dataset) else None
            self.structure, self.outputs = flatten_element(result)
        g.get_collection_ref(_graph.GraphKeys.SUMMARIES)[:] = summaries
        self.graph = g
        self.captures = _captures(g._ops[first_op:])
        # the state it reads from outside (a table's or a variable's handle, also in the
        # functions of datasets it makes): what a one-shot iterator cannot capture
        self.resources = _outside_inputs(g._ops[first_op:], (_dt.resource,))
        # a function that only rearranges its arguments (splitting a label off a dict,
        # say) needs no run: which argument each output is
        ids = {id(t): k for k, t in enumerate(self.inputs)}
        self.passthrough = [ids[id(t)] for t in self.outputs] \
            if all(id(t) in ids for t in self.outputs) else None

    def feed_of(self, components, outer: Optional[dict] = None) -> dict:
        """The feeds of a run for one element: its arguments, and those of the enclosing
        functions (`outer`)."""
        feed = dict(outer or {})
        feed.update(zip(self.inputs, components))
        return feed

    def run(self, ctx, components, outer: Optional[dict] = None) -> list:
        """The outputs for one element (a nested run of the pipeline's session)."""
        if self.passthrough is not None:
            return [components[k] for k in self.passthrough]
        # a fetch gives a string scalar as bytes (as TF's Session.run): back to the
        # run-time value, a 0-d object array, which batching stacks as strings
        return [element(v) for v in
                ctx.session.run(self.outputs, feed_dict=self.feed_of(components, outer))]


def trace_with_state(trace: Callable[[list], DatasetFunction], shapes) -> DatasetFunction:
    """`trace(state_shapes)`, a function whose first outputs are a new state (reduce's,
    scan's), traced for the initial state's `shapes` and, while a step changes them (a
    growing vector, say), again for the shapes both fit, as TF's."""
    while True:
        fn = trace(shapes)
        relaxed = [s.most_specific_compatible_shape(t.shape)
                   for s, t in zip(shapes, fn.outputs)]
        if [_dims(s) for s in relaxed] == [_dims(s) for s in shapes]:
            return fn
        shapes = relaxed


def _dims(shape):
    """A shape's dimensions as a comparable value (None: unknown rank)."""
    return None if shape.ndims is None else tuple(shape.as_list())


def _captures(ops) -> list:
    """The tensors from outside that the ops a function traced (`ops`) read, in order;
    their values are taken once, when the dataset op runs (TF's captured inputs: a
    placeholder fed to the initializer, say). Resources and variants (a variable's or
    table's handle, a dataset) are not: a variable read inside reads the variable as it
    is when each element is made, as TF's."""
    inside = set(ops)
    return unique(t for op in ops for t in op.inputs if t.op not in inside and
                   t.dtype.base_dtype not in (_dt.resource, _dt.variant))


def _outside_inputs(ops, dtypes) -> list:
    """The tensors of these `dtypes` from outside that `ops` read, in order."""
    inside = set(ops)
    return unique(t for op in ops for t in op.inputs if t.op not in inside and
                   t.dtype.base_dtype in dtypes)


def _function_result(x):
    """A function's result as TF's tf.data takes it: a list at the top is a tuple (as
    decode_csv gives its columns); a list anywhere below is one tensor."""
    return _lists_as_tensors(tuple(x) if isinstance(x, list) else x)


def _placeholder(dtype, shape, name):
    from tensorweave.ops.array.constant_op import placeholder
    return placeholder(dtype, shape, name=name)


_FUNCTIONS = "_tw_dataset_functions"

INFINITE_CARDINALITY = export(-1, "data.INFINITE_CARDINALITY",
                              "data.experimental.INFINITE_CARDINALITY")
UNKNOWN_CARDINALITY = export(-2, "data.UNKNOWN_CARDINALITY",
                             "data.experimental.UNKNOWN_CARDINALITY")


def spec_attrs(types, shapes) -> dict:
    return {"output_types": list(types), "output_shapes": list(shapes)}


class ElementSpec:
    """What an element is, for datasets and iterators: `_structure` (the nesting, leaves
    0), `_types`, `_shapes` and `_names` (one per component; a name is that of the
    component's tf.TensorSpec, given by from_generator's `output_signature` or
    Optional.empty's spec, else None)."""

    def _set_spec(self, structure, types, shapes, names=None) -> None:
        self._structure = structure
        self._types = list(types)
        self._shapes = [TensorShape(s) for s in shapes]
        self._names = list(names) if names is not None else [None] * len(self._types)

    def _leaves(self, dense, composite) -> object:
        """The structure with each component's `dense(k)`, or `composite(spec)` for a
        SparseTensor's or RaggedTensor's."""
        return map_leaves(self._structure, dense, composite)

    @property
    def output_types(self):
        return self._leaves(lambda k: self._types[k], lambda m: m.dtype)

    @property
    def output_shapes(self):
        return self._leaves(lambda k: self._shapes[k], lambda m: m.shape)

    @property
    def output_classes(self):
        """Tensor, SparseTensor, or (as TF) a RaggedTensor's tf.RaggedTensorSpec."""
        from tensorweave.framework.sparse_tensor import SparseTensor
        return self._leaves(lambda k: _graph.Tensor, lambda m: m.spec if
                            isinstance(m, RaggedSpec) else SparseTensor)

    @property
    def element_spec(self):
        """The type of an element, as TF's: a tf.TensorSpec per dense component, a
        tf.SparseTensorSpec, tf.RaggedTensorSpec or DatasetSpec per composite one, in the
        element's structure."""
        return element_spec_of(self._structure, self._types, self._shapes, self._names)


@tf_export("data.Dataset")
class Dataset(ElementSpec, TwinMethods):
    """A pipeline of elements (TF1 `tf.data.Dataset` in graph mode; see the module
    docstring). Built by the static constructors and transformations below; read through
    an iterator (`make_one_shot_iterator`, `make_initializable_iterator`). The methods
    that are a tf.data.experimental twin under another name come from TwinMethods
    (dataset_methods.py)."""

    _options = None  # a tf.data.Options set by with_options, carried to derived datasets

    def __init__(self, variant: _graph.Tensor, structure, types, shapes, inputs=(),
                 names=None):
        self._variant = variant
        self._set_spec(structure, types, shapes, names)
        for source in inputs:  # a dataset made from others has their options, merged
            if source._options is not None:
                self._options = source._options if self._options is None else \
                    self._options.merge(source._options)

    def options(self):
        """The options of this dataset (`tf.data.Options`): those set by `with_options`
        on it or on the datasets it is made from."""
        from tensorweave.data.options import Options
        return Options().merge(self._options) if self._options is not None else Options()

    def with_options(self, options) -> "Dataset":
        """This dataset with `options` set (over the options it has).

        Raises:
          TypeError: `options` is not a `tf.data.Options`.
        """
        out = Dataset(self._variant, self._structure, self._types, self._shapes,
                      names=self._names)
        out._options = self.options().merge(options)
        return out

    def _derive(self, op_type: str, inputs, attrs=None, structure=None, types=None,
                shapes=None, others=(), names=None) -> "Dataset":
        """A dataset of op `op_type` on this one, `inputs` and attrs, of this one's
        element spec where not given; `others`: the other datasets it reads (their
        options carry over too). The components' spec names are this one's when it
        keeps this one's spec (as TF's unchanged-structure datasets), else `names`."""
        if names is None and structure is None and types is None and shapes is None:
            names = self._names
        structure = self._structure if structure is None else structure
        types = self._types if types is None else types
        shapes = self._shapes if shapes is None else shapes
        inputs = [self._variant] + list(inputs)
        captured = captured_inputs(attrs or {})
        if captured or runs_functions(attrs or {}):
            inputs.append(captured)
        op = apply_op(op_type, inputs, dict(spec_attrs(types, shapes), **(attrs or {})),
                      name=op_type)
        return Dataset(op.outputs[0], structure, types, shapes, [self] + list(others),
                       names)

    # -- sources --
    @staticmethod
    def from_tensor_slices(tensors) -> "Dataset":
        """The slices of `tensors` (a nested structure) along their first dimension.

        Raises:
          ValueError: components whose first dimensions differ statically, or a scalar.
        """
        structure, flat = structure_of(tensors)
        leaves = nest.flatten(structure)
        # a SparseTensor's dense shape (a RaggedTensor's shape) stands for its component's
        full = [m.shape if isinstance(m, COMPOSITE_SPECS) else t.shape
                for m, t in zip(leaves, flat)]
        for s in full:
            if s.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        dims = {s.as_list()[0] for s in full if s.ndims and s.as_list()[0] is not None}
        if len(dims) > 1:
            raise ValueError("Dimensions %s in the components of from_tensor_slices must be "
                             "equal" % sorted(dims))
        shapes = [TensorShape([]) if isinstance(m, COMPOSITE_SPECS) else
                  s[1:] if s.ndims is not None else unknown_shape()
                  for m, s in zip(leaves, full)]
        return _source("TensorSliceDataset", flat, _unbatched_leaves(structure),
                       [t.dtype for t in flat], shapes)

    @staticmethod
    def from_tensors(tensors) -> "Dataset":
        """One element: `tensors`."""
        structure, flat = structure_of(tensors)  # a SparseTensor is one variant component
        return _source("TensorDataset", flat, structure, [t.dtype for t in flat],
                       [t.shape for t in flat])

    @staticmethod
    def range(*args, output_type=_dt.int64, name: Optional[str] = None) -> "Dataset":
        """Elements like Python's range(stop), range(start, stop[, step]), of
        `output_type` (int64 by default; the arguments are int64 either way)."""
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise ValueError("Invalid arguments to range: %s" % (args,))
        inputs = [convert_to_tensor(v, dtype=_dt.int64) for v in (start, stop, step)]
        dtype = _dt.as_dtype(output_type)
        op = apply_op("RangeDataset", inputs, spec_attrs([dtype], [TensorShape([])]),
                      name=name or "RangeDataset")
        return Dataset(op.outputs[0], 0, [dtype], [TensorShape([])])

    @staticmethod
    def random(seed: Optional[int] = None, rerandomize_each_iteration: Optional[bool] = None,
               name: Optional[str] = None) -> "Dataset":
        """An endless dataset of random int64 values (see
        `tf.data.experimental.RandomDataset`)."""
        from tensorweave.data.sources import RandomDataset
        return RandomDataset(seed, rerandomize_each_iteration, name)

    @staticmethod
    def zip(datasets) -> "Dataset":
        """Elements of `datasets` (a nested structure of datasets: tuples and dicts, not
        lists) side by side.

        Raises:
          TypeError: a list, or a leaf that is not a Dataset.
        """
        if has_list(datasets):  # tf.data's nest takes a list for a leaf, not a nesting
            raise TypeError("The argument to `Dataset.zip()` must be a (nested) structure "
                            "of `Dataset` objects. Python `list` is not supported, please "
                            "use a `tuple` instead.")
        flat = nest.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError("The argument to `Dataset.zip()` must be a (nested) "
                                "structure of `Dataset` objects, got %r." % (d,))
        structure = nest.pack_sequence_as(datasets, [d._structure for d in flat])
        types = [t for d in flat for t in d._types]
        shapes = [s for d in flat for s in d._shapes]
        op = apply_op("ZipDataset", [[d._variant for d in flat]], spec_attrs(types, shapes),
                      name="ZipDataset")
        return Dataset(op.outputs[0], structure, types, shapes, flat,
                       [n for d in flat for n in d._names])

    # -- transformations --
    def concatenate(self, dataset: "Dataset") -> "Dataset":
        """This dataset's elements, then `dataset`'s (of the same structure and types).

        Raises:
          TypeError: the two have different element structures or types.
        """
        if not joinable(self, dataset):
            raise TypeError("Incompatible dataset elements:\n  %s vs.   %s" % (
                self.element_spec, dataset.element_spec))
        return self._derive("ConcatenateDataset", [dataset._variant],
                            structure=joined_structure([self, dataset]),
                            shapes=joined_shapes([self, dataset]), others=[dataset],
                            names=self._names)

    def repeat(self, count=None) -> "Dataset":
        """The elements `count` times (None or -1: forever)."""
        return self._derive("RepeatDataset", [_count(count)])

    def take(self, count) -> "Dataset":
        """At most the first `count` elements (-1: all)."""
        return self._derive("TakeDataset", [_count(count)])

    def skip(self, count) -> "Dataset":
        """All but the first `count` elements (-1: none)."""
        return self._derive("SkipDataset", [_count(count)])

    def prefetch(self, buffer_size) -> "Dataset":
        """The same elements, read ahead by a thread of their own into a buffer of
        `buffer_size` (AUTOTUNE: 2; 0: no thread), so that reading overlaps the consumer's
        work (data/prefetch.py)."""
        return self._derive("PrefetchDataset", [_count(buffer_size)])

    def batch(self, batch_size, drop_remainder: bool = False) -> "Dataset":
        """Consecutive elements stacked into batches of `batch_size` (the last one
        shorter unless `drop_remainder`)."""
        return batched(self, batch_size, drop_remainder, "BatchDatasetV2")

    def ragged_batch(self, batch_size, drop_remainder: bool = False,
                     row_splits_dtype=_dt.int64, name: Optional[str] = None) -> "Dataset":
        """Batches as `batch` makes them, dense components of varying shape batched
        into RaggedTensors (data/ragged_batching.py)."""
        from tensorweave.data.ragged_batching import ragged_batch
        return ragged_batch(self, batch_size, drop_remainder, row_splits_dtype)

    def shuffle(self, buffer_size, seed: Optional[int] = None,
                reshuffle_each_iteration: Optional[bool] = None) -> "Dataset":
        """The elements in a random order drawn through a buffer of `buffer_size`: TF's
        order for the same (graph seed, op seed), each pass of a `repeat` reshuffled
        unless `reshuffle_each_iteration` is False."""
        from tensorweave.ops.random.random_ops import get_seed
        if isinstance(seed, _graph.Tensor):  # the op seed, of the graph's (or the default)
            s1, _ = get_seed(0)
            s2 = seed
        else:
            s1, s2 = get_seed(seed)
            s1, s2 = (0, 0) if s1 is None else (s1, s2)
        return self._derive("ShuffleDataset", [_count(buffer_size),
                                               convert_to_tensor(s1, _dt.int64),
                                               convert_to_tensor(s2, _dt.int64)],
                            {"reshuffle_each_iteration": True if
                             reshuffle_each_iteration is None else
                             bool(reshuffle_each_iteration)})

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder: bool = False) -> "Dataset":
        """Batches of `batch_size` whose components are padded to `padded_shapes` (a
        None dimension: the batch's longest) with `padding_values` (default zeros, or
        empty strings).

        Raises:
          ValueError: a padded shape of another rank than its component, or smaller
            than a static dimension; no `padded_shapes` for a component of unknown rank.
        """
        for m in nest.flatten(self._structure):
            if isinstance(m, COMPOSITE_SPECS):
                raise TypeError(
                    "`padded_batch` is only supported for datasets that produce tensor "
                    "elements but type spec of elements in the input dataset is not a "
                    "subclass of TensorSpec: %s" % ("`%r`." % m.spec if isinstance(
                        m, RaggedSpec) else "a SparseTensor component"))
        if padded_shapes is None:
            for k, shape in enumerate(self._shapes):
                if shape.ndims is None:
                    raise ValueError("You must provide `padded_shapes` argument because "
                                     "component %d has unknown rank." % k)
            padded_shapes = self.output_shapes
        padded = [padded_shape(g) for g in flatten_shapes(self._structure, padded_shapes)]
        flat_shapes = [shape for shape, _ in padded]
        for want, have in zip(flat_shapes, self._shapes):
            if have.ndims is not None and want.ndims != have.ndims:
                raise ValueError("The padded shape %s is not compatible with the shape %s "
                                 "of the corresponding input component." % (want, have))
            for a, b in zip(want.as_list(), have.as_list() if have.ndims else []):
                if a is not None and b is not None and a < b:
                    raise ValueError("The padded shape %s is not compatible with the "
                                     "shape %s of the corresponding input component."
                                     % (want, have))
        flat_values = [padding_value(v, t) for v, t in zip(
            flat_padding_values(self._structure, padding_values), self._types)]
        shape_tensors = [tensor for _, tensor in padded]
        size = _count(batch_size)
        static = _batch_dim(size, drop_remainder)
        out_shapes = [TensorShape([static]).concatenate(s) for s in flat_shapes]
        return self._derive("PaddedBatchDatasetV2",
                            [size, shape_tensors, flat_values,
                             convert_to_tensor(drop_remainder, _dt.bool)],
                            {"Toutput_types": list(self._types)}, shapes=out_shapes)

    def window(self, size, shift=None, stride=1, drop_remainder: bool = False
               ) -> "Dataset":
        """Windows of the elements: one every `shift` (default `size`) elements, each of
        the next `size` elements `stride` apart (fewer at the end unless
        `drop_remainder`). An element of the result has the input's structure with a
        Dataset in place of each component (read it with flat_map, e.g.
        `ds.window(3).flat_map(lambda w: w.batch(3))`); a SparseTensor or RaggedTensor
        component's dataset has elements of that kind.
        """
        leaves = [dataset_spec_of(m if isinstance(m, COMPOSITE_SPECS) else 0, [t], [s])
                  for m, t, s in zip(nest.flatten(self._structure), self._types,
                                     self._shapes)]
        structure = nest.pack_sequence_as(self._structure, leaves)
        return self._derive("WindowDataset", [
            _count(size), _count(size if shift is None else shift), _count(stride),
            convert_to_tensor(drop_remainder, _dt.bool)], structure=structure,
            types=[_dt.variant] * len(leaves), shapes=[TensorShape([])] * len(leaves))

    def unbatch(self) -> "Dataset":
        """Each element split along its first dimension into elements.

        Raises:
          ValueError: a component is a scalar, or components whose first dimensions
            are known to differ.
        """
        for s, t in zip(self._shapes, self._types):
            if t != _dt.variant and s.ndims == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        firsts = sorted({s.as_list()[0] for s, t in zip(self._shapes, self._types)
                         if t != _dt.variant and s.ndims} - {None})
        if len(firsts) > 1:
            raise ValueError("`unbatch()` is only supported for datasets of elements whose "
                             "components have a matching leading dimension. Encountered "
                             "both %d and %d." % tuple(firsts[:2]))
        return self._derive("UnbatchDataset", [], structure=_unbatched_leaves(self._structure),
                            shapes=[s if t == _dt.variant else s[1:] if s.ndims else s
                                    for s, t in zip(self._shapes, self._types)])

    def cache(self, filename="") -> "Dataset":
        """The elements, kept after the first complete pass: in memory (an enclosing
        repeat replays them), or with a `filename` in a file that later passes,
        iterators, sessions and processes read instead of the input (data/file_cache.py;
        only a complete pass leaves one).

        Args:
          filename: "" (memory) or a path prefix (a string or a string tensor).
        """
        return self._derive("CacheDataset", [convert_to_tensor(filename, dtype=_dt.string,
                                                               name="filename")])

    def flat_map(self, map_func: Callable) -> "Dataset":
        """The elements of the datasets `map_func` gives for each element, in order."""
        fn = self._dataset_function(map_func, "flat_map_fn")
        return self._derive("FlatMapDataset", [], {"f": register_function(fn)},
                            structure=fn.dataset._structure, types=fn.dataset._types,
                            shapes=fn.dataset._shapes, names=fn.dataset._names)

    def interleave(self, map_func: Callable, cycle_length=None, block_length=None,
                   num_parallel_calls=None) -> "Dataset":
        """The elements of the datasets `map_func` gives, `block_length` (default 1) at a
        time from each of `cycle_length` (default: the number of CPU cores) open ones in
        turn (TF's order). With `num_parallel_calls` each open dataset is read ahead on a
        thread of its own; the order stays the same."""
        fn = self._dataset_function(map_func, "interleave_fn")
        cycle = AUTOTUNE if cycle_length is None else cycle_length
        return self._derive("InterleaveDataset", [_count(cycle), _count(
            1 if block_length is None else block_length)], {
                "f": register_function(fn),
                "read_ahead": num_parallel_calls not in (None, 1)},
            structure=fn.dataset._structure, types=fn.dataset._types,
            shapes=fn.dataset._shapes, names=fn.dataset._names)

    def _dataset_function(self, map_func: Callable, name: str) -> "DatasetFunction":
        fn = DatasetFunction(map_func, self._structure, self._types, self._shapes, name,
                             unpack=True)
        if fn.dataset is None:
            raise TypeError("`map_func` must return a `Dataset` object. Got %s."
                            % (fn.outputs,))
        return fn

    @staticmethod
    def list_files(file_pattern, shuffle: Optional[bool] = None,
                   seed: Optional[int] = None) -> "Dataset":
        """The files matching `file_pattern` (a pattern or a list of them), shuffled unless
        `shuffle=False`; initializing an iterator with no match raises
        InvalidArgumentError."""
        from tensorweave.ops.control_flow.structure import identity
        from tensorweave.ops.debug.debug_ops import Assert
        from tensorweave.ops.string.string_ops import matching_files
        from tensorweave.framework.graph import control_dependencies
        from tensorweave.ops.array import array_ops
        pattern = convert_to_tensor(file_pattern, dtype=_dt.string, name="file_pattern")
        files = matching_files(pattern)
        found = array_ops.size(files) > 0
        with control_dependencies([Assert(found, ["No files matched pattern: ", pattern],
                                          summarize=1)]):
            files = identity(files)
        ds = Dataset.from_tensor_slices(files)
        if shuffle is None or shuffle:
            from tensorweave.ops.math.math_ops import cast
            ds = ds.shuffle(cast(array_ops.size(files), _dt.int64), seed=seed)
        return ds

    def map(self, map_func: Callable, num_parallel_calls=None) -> "Dataset":
        """`map_func` applied to each element (a tuple element is passed as arguments).
        With `num_parallel_calls` (a count or AUTOTUNE: the number of cores), that many
        elements are mapped at once on threads (data/parallel_map.py) and handed out in
        input order; otherwise one at a time."""
        fn = DatasetFunction(map_func, self._structure, self._types, self._shapes,
                             "map_fn", unpack=True)
        spec = dict(structure=fn.structure, types=[t.dtype for t in fn.outputs],
                    shapes=[t.shape for t in fn.outputs])
        if num_parallel_calls is None or (isinstance(num_parallel_calls, int) and
                                          num_parallel_calls == 1):
            return self._derive("MapDataset", [], {"f": register_function(fn)}, **spec)
        return self._derive("ParallelMapDataset", [convert_to_tensor(
            num_parallel_calls, _dt.int64, name="num_parallel_calls")],
            {"f": register_function(fn)}, **spec)

    def filter(self, predicate: Callable) -> "Dataset":
        """The elements for which `predicate` gives True (a scalar bool tensor).

        Raises:
          ValueError: `predicate` does not return a scalar bool tensor.
        """
        fn = DatasetFunction(predicate, self._structure, self._types, self._shapes,
                             "filter_fn", unpack=True)
        if len(fn.outputs) != 1 or fn.outputs[0].dtype != _dt.bool or \
                fn.outputs[0].shape.ndims not in (None, 0):
            raise ValueError("`predicate` return type must be convertible to a scalar "
                             "boolean tensor. Was %s." % (fn.outputs,))
        return self._derive("FilterDataset", [], {"predicate": register_function(fn)})

    def map_with_legacy_function(self, map_func: Callable, num_parallel_calls=None
                                 ) -> "Dataset":
        """TF1's `map` through a legacy Defun: `map` here (functions are traced alike)."""
        return self.map(map_func, num_parallel_calls)

    def filter_with_legacy_function(self, predicate: Callable) -> "Dataset":
        """TF1's `filter` through a legacy Defun: `filter` here."""
        return self.filter(predicate)

    def apply(self, transformation_func: Callable) -> "Dataset":
        """transformation_func(self).

        Raises:
          TypeError: it does not give a Dataset.
        """
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError("`transformation_func` must return a `tf.data.Dataset` object. "
                            "Got %s." % type(dataset))
        return dataset

    @staticmethod
    def from_generator(generator: Callable, output_types=None, output_shapes=None,
                       args=None, output_signature=None,
                       name: Optional[str] = None) -> "Dataset":
        """The elements `generator(*args)` yields, called again by each initialization of
        an iterator (data/generators.py).

        Args:
          generator: a callable returning an iterable.
          output_types: the elements' structure of dtypes.
          output_shapes: their static shapes (default unknown).
          args: tensors (or values) passed to `generator`, evaluated by the initializer.
          output_signature: instead of `output_types` and `output_shapes`, the
            elements' structure of tf.TensorSpec (their names stay in element_spec),
            tf.SparseTensorSpec and tf.RaggedTensorSpec (the generator yields
            tf.SparseTensorValue and tf.ragged.RaggedTensorValue for those).
          name: unused (TF names the dataset's ops with it).

        Returns:
          A Dataset. A yielded element is converted as TF does: cast with NumPy (1.5
          becomes 1 for int64) unless it is one component of unknown rank (then 1.5
          fails), or without casts where the signature holds composite specs
          (data/generator_specs.py). An element that does not convert or fit fails its
          get_next with InvalidArgumentError (a number for a string with
          InternalError); an exception in the generator with py_func's classes.

        Raises:
          TypeError: `generator` is not callable, neither `output_types` nor
            `output_signature` is given, or both are, `output_signature` holds
            something else than specs, or the elements have no component.
          ValueError: the elements nest only empty structures (`((), {})`).
          NotImplementedError: `output_signature` holds another kind of spec (a
            tf.data.DatasetSpec, say).
        """
        from tensorweave.data import generators
        return generators.from_generator(generator, output_types, output_shapes, args,
                                         output_signature)

    def shard(self, num_shards, index) -> "Dataset":
        """Every `num_shards`-th element, from element `index` on (the elements of one of
        `num_shards` workers); its run raises InvalidArgumentError unless
        0 <= index < num_shards."""
        from tensorweave.data import transforms
        return transforms.shard(self, num_shards, index)

    def enumerate(self, start=0) -> "Dataset":
        """(index, element) pairs, the int64 index counting from `start`."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def reduce(self, initial_state, reduce_func: Callable):
        """The fold of every element into a state: `reduce_func(state, element)` gives the
        next state (same structure and dtypes); the result is the last state, as tensors
        in `initial_state`'s structure.

        Raises:
          TypeError: a new state of other dtypes or structure.
        """
        from tensorweave.data import transforms
        return transforms.reduce(self, initial_state, reduce_func)

    # -- iterators (TF1) --
    def make_one_shot_iterator(self):
        """An iterator over this dataset that needs no initialization."""
        from tensorweave.data import iterator_ops
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: Optional[str] = None):
        """An iterator whose `initializer` (re)starts it on this dataset."""
        from tensorweave.data import iterator_ops
        return iterator_ops.make_initializable_iterator(self, shared_name)

    def __iter__(self):
        raise RuntimeError("__iter__() is only supported inside of tf.function or when "
                           "eager execution is enabled.")


def _lists_as_tensors(x):
    """`x` with every list a tensor (so mixed dtypes are a TypeError) and every
    SparseTensorValue a SparseTensor: in tf.data a list is one component, not a nesting
    (tuples, namedtuples and dicts are)."""
    from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
    if isinstance(x, list):
        return convert_to_tensor(x)
    if isinstance(x, SparseTensorValue):
        return SparseTensor.from_value(x)
    from tensorweave.ops.ragged import ragged_tensor, ragged_tensor_value
    if isinstance(x, ragged_tensor_value.RaggedTensorValue):
        return ragged_tensor.convert_to_tensor_or_ragged_tensor(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_lists_as_tensors(v) for v in x])
    if isinstance(x, tuple):
        return tuple(_lists_as_tensors(v) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _lists_as_tensors(v)) for k, v in x.items())
    return x


def structure_of(tensors):
    """(structure, flat component tensors) of an element given as tensors (a SparseTensor
    one variant component).

    Raises:
      TypeError: a variant or resource component.
    """
    tensors = _lists_as_tensors(tensors)
    from tensorweave.framework.sparse_tensor import SparseTensor
    # each leaf is converted once: a NumPy array becomes one Const in the graph, as in TF
    from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
    composites = (SparseTensor, RaggedTensor)
    tensors = nest.map_structure(
        lambda t: t if isinstance(t, composites) else convert_to_tensor(t), tensors)
    for t in nest.flatten(tensors):
        if isinstance(t, composites):
            continue
        if t.dtype == _dt.variant or t.dtype == _dt.resource:
            raise TypeError("tf.data components must be tensors of data, got %s" % t)
    return flatten_element(tensors)


# --- SparseTensor components -----------------------------------------------------------------
class SparseSpec:
    """The structure leaf of a SparseTensor component: its values' dtype and dense shape
    (the component itself is one variant tensor)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = _dt.as_dtype(dtype)
        self.shape = TensorShape(shape)

    def __eq__(self, other):  # structures agree on kind and dtype; shapes may differ
        return isinstance(other, SparseSpec) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("SparseSpec", self.dtype))

    def __repr__(self):
        return "SparseSpec(%s, %s)" % (self.dtype.name, self.shape)

    @property
    def spec(self) -> SparseTensorSpec:
        """The tf.SparseTensorSpec TF gives for this component (element_spec)."""
        return SparseTensorSpec(self.shape, self.dtype)

    def batched(self, dim: Optional[int]) -> "SparseSpec":
        """The leaf of a batch of these (first dimension `dim`)."""
        return SparseSpec(self.dtype, TensorShape([dim]).concatenate(self.shape))

    def unbatched(self) -> "SparseSpec":
        """The leaf of a row of this."""
        return SparseSpec(self.dtype, self.shape[1:] if self.shape.ndims else self.shape)


# the leaves of components that are one variant at run time and a composite tensor in
# functions and get_next
COMPOSITE_SPECS = (SparseSpec, RaggedSpec)


def _unbatched_leaves(structure):
    """`structure` with each composite leaf that of one of its rows."""
    return nest.map_structure(lambda m: m.unbatched() if isinstance(m, COMPOSITE_SPECS)
                              else m, structure)


def dataset_spec_of(structure, types, shapes, names=None) -> DatasetSpec:
    """The tf.data.DatasetSpec of a dataset of this element structure and components'
    `types`, `shapes` and spec `names`."""
    return DatasetSpec.with_parts(element_spec_of(structure, types, shapes, names),
                                  structure, types, shapes, names)


def map_leaves(structure, dense, composite) -> object:
    """`structure` (an element structure) with each dense component's leaf replaced by
    `dense(k)` (k: its index among the components), a SparseTensor's or RaggedTensor's
    by `composite(leaf)`; a dataset's leaf stays (as TF: its spec for all properties)."""
    leaves = nest.flatten(structure)
    return nest.pack_sequence_as(structure, [
        composite(m) if isinstance(m, COMPOSITE_SPECS) else
        m if isinstance(m, DatasetSpec) else dense(k)
        for k, m in enumerate(leaves)])


def element_spec_of(structure, types, shapes, names=None):
    """The element spec of an element structure and its components' `types`, `shapes`
    and spec `names` (None: unnamed): a tf.TensorSpec per dense component, a composite's
    tf spec."""
    return map_leaves(structure, lambda k: TensorSpec(shapes[k], types[k],
                                                      names[k] if names else None),
                      lambda m: m.spec)


def flatten_element(element):
    """(structure, flat component tensors): SparseTensors, RaggedTensors and Datasets
    become one variant component each, with a SparseSpec, RaggedSpec or DatasetSpec leaf."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
    leaves, flat = [], []
    for x in nest.flatten(element):
        if isinstance(x, RaggedTensor):
            leaf, component = ragged_elements.encode_ragged(x)
            flat.append(component)
            leaves.append(leaf)
        elif isinstance(x, Dataset):
            flat.append(x._variant)
            leaves.append(DatasetSpec.from_value(x))
        elif isinstance(x, SparseTensor):
            flat.append(apply_op("SparseTensorToVariant", [x.indices, x.values,
                                                           x.dense_shape],
                                 name="SparseTensorToVariant").outputs[0])
            leaves.append(SparseSpec(x.dtype, x.get_shape()))
        else:
            flat.append(convert_to_tensor(x))
            leaves.append(0)
    return nest.pack_sequence_as(element, leaves), flat


def pack_element(structure, tensors):
    """The element of `structure` from its flat component tensors (a SparseTensor again
    for each SparseSpec leaf, a RaggedTensor for each RaggedSpec)."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    out = []
    for leaf, t in zip(nest.flatten(structure), tensors):
        if isinstance(leaf, SparseSpec):
            # static_shape: [rank, dims...] (-1 unknown), so that [0] is always there
            known = leaf.shape.as_list() if leaf.shape.ndims is not None else None
            static = [] if known is None else [len(known)] + [
                -1 if d is None else d for d in known]
            op = apply_op("VariantToSparseTensor", [t], {"dtype": leaf.dtype,
                                                          "static_shape": static},
                          name="VariantToSparseTensor")
            indices, values, dense_shape = op.outputs
            indices.set_shape([None, leaf.shape.ndims])
            dense_shape.set_shape([leaf.shape.ndims])
            t = SparseTensor(indices, values, dense_shape)
        elif isinstance(leaf, RaggedSpec):
            t = ragged_elements.decode(t, leaf)
        elif isinstance(leaf, DatasetSpec):
            t = Dataset(t, leaf.structure, leaf.types, leaf.shapes, names=leaf.names)
        out.append(t)
    return nest.pack_sequence_as(structure, out)


def read_element(op_type: str, inputs, spec: "ElementSpec", name: str):
    """The element an op of `op_type` outputs as its components (IteratorGetNext and its
    kin), built on `inputs`, in `spec`'s structure with its static shapes."""
    op = apply_op(op_type, inputs, spec_attrs(spec._types, spec._shapes), name=name)
    outs = list(op.outputs)
    for t, s in zip(outs, spec._shapes):
        t.set_shape(s)
    return pack_element(spec._structure, outs)


def element_structure(output_types, output_shapes=None, output_classes=None):
    """(structure, flat types, flat shapes) of an iterator's declared elements; a leaf
    whose class is SparseTensor (or a tf.RaggedTensorSpec) is one variant component."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    types = [_dt.as_dtype(t) for t in nest.flatten(output_types)]
    if output_shapes is None:
        shapes = [TensorShape(None)] * len(types)
    else:
        shapes = [TensorShape(s) for s in flatten_shapes(output_types, output_shapes)]
    classes = [None] * len(types) if output_classes is None else \
        nest.flatten(output_classes)
    leaves = [SparseSpec(t, s) if c is SparseTensor else
              ragged_elements.as_ragged_spec(c, t, s) or 0
              for t, s, c in zip(types, shapes, classes)]
    flat_types = [_dt.variant if isinstance(m, COMPOSITE_SPECS) else t
                  for m, t in zip(leaves, types)]
    flat_shapes = [TensorShape([]) if isinstance(m, COMPOSITE_SPECS) else s
                   for m, s in zip(leaves, shapes)]
    return nest.pack_sequence_as(output_types, leaves), flat_types, flat_shapes


def _source(op_type, flat, structure, types, shapes) -> Dataset:
    op = apply_op(op_type, [flat], dict(spec_attrs(types, shapes),
                                        Toutput_types=list(types)), name=op_type)
    return Dataset(op.outputs[0], structure, types, shapes)


def has_list(structure) -> bool:
    """Whether `structure` holds a list (tf.data's nest takes a list for a leaf)."""
    if isinstance(structure, list):
        return True
    if isinstance(structure, dict):
        return any(has_list(v) for v in structure.values())
    if isinstance(structure, tuple):
        return any(has_list(v) for v in structure)
    return False


def _count(value):
    if value is None:
        value = -1
    return convert_to_tensor(value, dtype=_dt.int64, name="count")


def _graph_static_int(t) -> Optional[int]:
    from tensorweave.framework.tensor_util import constant_value
    v = constant_value(t)
    return None if v is None else int(v)


def batched(ds: Dataset, batch_size, drop_remainder, op_type: str) -> Dataset:
    """`ds` batched by `op_type` (BatchDatasetV2, or map_and_batch's batching)."""
    size = _count(batch_size)
    if size.shape.ndims not in (None, 0):
        raise ValueError("Invalid `batch_size`: expected a scalar, got shape %s."
                         % size.shape)
    static = _batch_dim(size, drop_remainder)
    shapes = [s if t == _dt.variant else TensorShape([static]).concatenate(s)
              for s, t in zip(ds._shapes, ds._types)]
    structure = nest.map_structure(lambda m: m.batched(static) if isinstance(
        m, COMPOSITE_SPECS) else m, ds._structure)
    return ds._derive(op_type, [size, convert_to_tensor(drop_remainder, _dt.bool)],
                      structure=structure, shapes=shapes)


def _batch_dim(size: _graph.Tensor, drop_remainder) -> Optional[int]:
    """The static first dimension of a batch: the batch size where it is known and
    the remainder is known to be dropped (a bool or a bool tensor), else None."""
    if isinstance(drop_remainder, _graph.Tensor):
        from tensorweave.framework.tensor_util import constant_value
        drop_remainder = constant_value(drop_remainder)
    return _graph_static_int(size) if drop_remainder is not None and \
        bool(drop_remainder) else None


register_converter(Dataset, DatasetSpec.from_value, allow_subclass=True)
