"""tf.data iterators in graph mode (TF1 `tf.data.Iterator`, `make_one_shot_iterator`,
`make_initializable_iterator`).

An iterator is a resource of the device (IteratorV2): MakeIterator starts it on a
dataset's value (re-running it restarts), IteratorGetNext yields the next element's
components and raises OutOfRangeError("End of sequence") once the dataset is done. A
one-shot iterator (OneShotDatasetIterator, tensorweave's op: TF's OneShotIterator builds
its dataset from a function) starts itself on its dataset input the first time a
session runs it.

Feedable iterators: IteratorToStringHandle gives a string naming an iterator among the
device's resources, IteratorFromStringHandleV2 the iterator a fed string names, so one
`get_next` reads from whichever iterator (training or validation) the step feeds.
"""
from __future__ import annotations

import itertools
import threading
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeListAttr, get_op_def, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data import optional_ops
from tensorweave.data.dataset_ops import Dataset, ElementSpec

_UNIQUE = itertools.count()


class IteratorResource:
    """One iterator's state: the generator of its dataset's elements (None until
    initialized), guarded by `lock`.

    For checkpoints (iterator_checkpoint.py) it also keeps what makes the current pass
    again: the dataset's value and the op that made it, the pass's seed (every random
    transformation's randomness derives from it), the number of elements handed out and
    whether the pass has ended. A restore starts the pass again with the saved seed and
    fast-forwards it; the next element, already read then, waits in `pending`."""

    def __init__(self, types, shapes):
        self.lock = threading.Lock()
        self.types, self.shapes = list(types), list(shapes)
        self.elements = None
        self.dataset = None      # the DatasetValue of the current pass
        self.dataset_op = None   # the graph op that made it
        self.seed = None         # the pass's seed
        self.produced = 0        # elements handed out in the pass
        self.ended = False       # the pass has ended (at its end, or by an error)
        self.pending = None      # after a restore: ("element", e) or ("error", exc)

    def start(self, ctx, dataset) -> None:
        with self.lock:
            self._close()
            self._begin(dataset, _pass_seed(ctx))
            self.dataset_op = _dataset_op(ctx)
            self.elements = dataset.elements_with_errors(_pipe.PipelineContext(ctx, self.seed))

    def _begin(self, dataset, seed: int) -> None:
        self.dataset, self.seed = dataset, seed
        self.produced, self.ended, self.pending = 0, False, None

    def restore(self, ctx, seed: int, produced: int, ended: bool) -> None:
        """Makes the pass the one a checkpoint describes: the pass of seed `seed` after
        `produced` elements (or ended). The elements before are read again (or skipped,
        where a transformation can: elements_after), now, and the next one too."""
        with self.lock:
            self._close()
            self._begin(self.dataset, seed)
            self.produced, self.ended = produced, ended
            if ended:
                self.elements = iter(())
                return
            self.elements = iter(())
            try:
                self.elements = self.dataset.elements_after(
                    _pipe.PipelineContext(ctx, seed), produced)
                self.pending = ("element", next(self.elements))
            except StopIteration:
                self.elements = iter(())
            except Exception as e:  # noqa: BLE001 - raised by the next get_next (as by
                self.pending = ("error", e)  # the saved pass, for the next element's)

    def release(self) -> None:
        """Ends the current pass now (its cleanups run: a partial cache file is
        removed); the resource manager calls this when it drops the iterator."""
        with self.lock:
            self._close()
            self.elements = None

    def _close(self) -> None:
        close = getattr(self.elements, "close", None)
        if close is not None:
            close()
        self.pending = None

    def next(self, ctx):
        with self.lock:
            if self.elements is None:
                raise errors.FailedPreconditionError(
                    None, ctx.op, "GetNext() failed because the iterator has not been "
                    "initialized. Ensure that you have run the initializer operation for "
                    "this iterator before getting the next element.")
            try:
                if self.pending is not None:
                    kind, value = self.pending
                    self.pending = None
                    if kind == "error":
                        raise value
                    element = value
                else:
                    element = next(self.elements)
            except StopIteration:
                self.elements, self.ended = iter(()), True
                raise errors.OutOfRangeError(None, ctx.op, "End of sequence") from None
            except BaseException:
                self.ended = True  # the generator is done: later reads end the sequence
                raise
            self.produced += 1
            if isinstance(element, _pipe.ElementError):
                # this element's error; the pass goes on with the next, as TF's
                raise element.error
            return element


def _pass_seed(ctx) -> int:
    """A new pass's seed: drawn from the OS; in the deterministic mode a function of the
    iterator op's name and how many passes it started in this session."""
    from tensorweave.runtime import determinism
    if ctx.op is not None and determinism.of_session(ctx.session):
        passes = ctx.state.get("passes", 0)
        ctx.state["passes"] = passes + 1
        return _pipe.mix_seed(determinism.name_seed(ctx.op.name)[0], passes)
    return _pipe.fresh_seed()


def _dataset_op(ctx):
    """The op whose value an iterator starts on (MakeIterator's and OneShot's input)."""
    inputs = getattr(ctx.op, "inputs", None)
    return inputs[0].op if inputs else None


_SPEC = {"output_types": TypeListAttr(), "output_shapes": []}
register_op("IteratorV2", outputs=["handle: resource"],
            attrs=dict(_SPEC, shared_name="", container=""),
            shape=lambda op: TensorShape([]), stateful=True)
register_op("OneShotDatasetIterator", inputs=["dataset: variant"],
            outputs=["handle: resource"], attrs=dict(_SPEC),
            shape=lambda op: TensorShape([]), stateful=True)
register_op("MakeIterator", inputs=["dataset: variant", "iterator: resource"], stateful=True)
register_op("IteratorToStringHandle", inputs=["resource_handle: resource"],
            outputs=["string_handle: string"], shape=lambda op: TensorShape([]),
            stateful=True)
register_op("IteratorFromStringHandleV2", inputs=["string_handle: string"],
            outputs=["resource_handle: resource"], attrs=dict(_SPEC),
            shape=lambda op: TensorShape([]), stateful=True)
register_op("IteratorGetNext", inputs=["iterator: resource"],
            outputs=["components: output_types"], attrs=dict(_SPEC),
            shape=lambda op: [TensorShape(s) for s in op._get_attr("output_shapes")],
            stateful=True)
for _op in ("IteratorV2", "OneShotDatasetIterator", "MakeIterator", "IteratorGetNext",
            "IteratorToStringHandle", "IteratorFromStringHandleV2"):
    not_differentiable(_op)


def _resource(ctx, name: str) -> IteratorResource:
    a = ctx.attrs
    return ctx.resources.lookup_or_create(a.get("container", ""), name,
                                          lambda: IteratorResource(a["output_types"],
                                                                   a["output_shapes"]))


@kernel("IteratorV2")
def _iterator_kernel(ctx):
    name = ctx.state.get("name")
    if name is None:
        name = ctx.state["name"] = ctx.attrs["shared_name"] or "_%d_%s" % (next(_UNIQUE),
                                                                            ctx.op.name)
    return _resource(ctx, name)


@kernel("OneShotDatasetIterator")
def _one_shot_kernel(ctx, dataset):
    it = ctx.state.get("iterator")
    if it is None:  # the first run in this session starts it; later runs read on
        name = "_%d_%s" % (next(_UNIQUE), ctx.op.name)
        it = ctx.state["iterator"] = _resource(ctx, name)
        it.start(ctx, dataset)
    return it


_HANDLES = "_tw_iterator_handles"  # device resource: string handle -> iterator


def _handles(ctx) -> dict:
    return ctx.resources.lookup_or_create("", _HANDLES, dict)


@kernel("IteratorToStringHandle")
def _to_string_handle_kernel(ctx, iterator):
    handles = _handles(ctx)
    for key, value in list(handles.items()):
        if value is iterator:
            return np.array(key, dtype=object)
    key = ("%s:iterator:%d" % (ctx.device.name, len(handles))).encode()
    handles[key] = iterator
    return np.array(key, dtype=object)


@kernel("IteratorFromStringHandleV2")
def _from_string_handle_kernel(ctx, string_handle):
    key = np.asarray(string_handle, dtype=object).item()
    it = _handles(ctx).get(key if isinstance(key, bytes) else str(key).encode())
    if it is None:
        raise errors.InvalidArgumentError(None, ctx.op, "Could not find an iterator for "
                                          "string handle %r in this session" % (key,))
    _check_fed_iterator(ctx, it)
    return it


def _check_fed_iterator(ctx, it: IteratorResource) -> None:
    """The iterator a string handle names must give what the reading op expects: the
    same dtypes, compatible shapes (TF's messages)."""
    wanted = list(zip(ctx.attrs["output_types"], ctx.attrs["output_shapes"]))
    if len(wanted) != len(it.types):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Number of components does not match: expected %d types but got "
            "%d." % (len(wanted), len(it.types)))
    for i, ((dtype, shape), have_type, have_shape) in enumerate(
            zip(wanted, it.types, it.shapes)):
        if _dt.as_dtype(have_type) != _dt.as_dtype(dtype):
            raise errors.InvalidArgumentError(
                None, ctx.op, "Data type mismatch at component %d: expected %s but got %s."
                % (i, _dt.as_dtype(dtype).name, _dt.as_dtype(have_type).name))
        if not TensorShape(shape).is_compatible_with(TensorShape(have_shape)):
            raise errors.InvalidArgumentError(
                None, ctx.op, "Incompatible shapes at component %d: expected %s but got %s."
                % (i, _shape_text(shape), _shape_text(have_shape)))


def _shape_text(shape) -> str:
    """A shape as TF's kernels write it: [2,?] or <unknown>."""
    shape = TensorShape(shape)
    if shape.dims is None:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


@kernel("MakeIterator")
def _make_iterator_kernel(ctx, dataset, iterator):
    iterator.start(ctx, dataset)


@kernel("IteratorGetNext")
def _get_next_kernel(ctx, iterator):
    return list(iterator.next(ctx))


_GLOBAL_ITERATORS = "iterators"


@tf_export("data.Iterator")
class Iterator(ElementSpec):
    """Reads the elements of a dataset (see the module docstring).

    Built by `make_one_shot_iterator`, `make_initializable_iterator` or
    `Iterator.from_structure` (then started on a dataset by `make_initializer`).
    """

    def __init__(self, handle, initializer, structure, types, shapes):
        self._handle = handle
        self._initializer = initializer
        self._set_spec(structure, types, shapes)
        # as TF1's Iterator: every iterator resource is in the "iterators" collection
        # (exported with meta graphs)
        if handle not in handle.graph.get_collection(_GLOBAL_ITERATORS):
            handle.graph.add_to_collection(_GLOBAL_ITERATORS, handle)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name: Optional[str] = None,
                       output_classes=None) -> "Iterator":
        """An iterator for elements of this structure, started by `make_initializer`.

        Raises:
          TypeError: `output_shapes` nest differently than `output_types`.
        """
        structure, flat_types, flat_shapes = _ds.element_structure(
            output_types, output_shapes, output_classes)
        handle = apply_op("IteratorV2", [], {"output_types": flat_types,
                                             "output_shapes": flat_shapes,
                                             "shared_name": shared_name or ""},
                          name="IteratorV2").outputs[0]
        return Iterator(handle, None, structure, flat_types, flat_shapes)

    @property
    def initializer(self) -> _graph.Operation:
        """The op that (re)starts the iterator on its dataset.

        Raises:
          ValueError: the iterator has no dataset of its own (from_structure).
        """
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def string_handle(self, name: Optional[str] = None) -> _graph.Tensor:
        """A scalar string naming this iterator, for `Iterator.from_string_handle`
        (valid in the session that evaluates it)."""
        return apply_op("IteratorToStringHandle", [self._handle],
                        name=name or "IteratorToStringHandle").outputs[0]

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None) -> "Iterator":
        """An iterator that reads from whichever iterator `string_handle` (a fed string
        tensor, from `string_handle()`) names; its elements are of the given structure."""
        from tensorweave.framework.op_builder import convert_to_tensor
        structure, flat_types, flat_shapes = _ds.element_structure(
            output_types, output_shapes, output_classes)
        handle = apply_op("IteratorFromStringHandleV2",
                          [convert_to_tensor(string_handle, _dt.string)],
                          {"output_types": flat_types, "output_shapes": flat_shapes},
                          name="IteratorFromStringHandleV2").outputs[0]
        return Iterator(handle, None, structure, flat_types, flat_shapes)

    def make_initializer(self, dataset: Dataset, name: Optional[str] = None
                         ) -> _graph.Operation:
        """The op that starts this iterator on `dataset`.

        Raises:
          ValueError: `dataset`'s elements nest differently from the iterator's.
          TypeError: their types differ, or their shapes are not compatible.
        """
        nest.assert_same_structure(self._structure, dataset._structure)
        if dataset._types != self._types:
            raise TypeError("Expected output types %s but got dataset with output types %s."
                            % (self.output_types, dataset.output_types))
        for mine, theirs in zip(self._shapes, dataset._shapes):
            if not mine.is_compatible_with(theirs):
                raise TypeError("Expected output shapes compatible with %s but got dataset "
                                "with output shapes %s." % (self.output_shapes,
                                                            dataset.output_shapes))
        return apply_op("MakeIterator", [dataset._variant, self._handle],
                        name=name or "MakeIterator")

    def get_next(self, name: Optional[str] = None):
        """The next element, in the dataset's structure; its run raises
        OutOfRangeError once the dataset is done."""
        return _ds.read_element("IteratorGetNext", [self._handle], self,
                                name or "IteratorGetNext")

    def get_next_as_optional(self) -> "optional_ops.Optional":
        """The next element as a `tf.data.experimental.Optional`, without a value once
        the dataset is done (where `get_next` raises OutOfRangeError)."""
        return get_next_as_optional(self)


@tf_export("data.experimental.get_next_as_optional")
def get_next_as_optional(iterator: Iterator) -> optional_ops.Optional:
    """The next element of `iterator` as an Optional, which has no value once the
    dataset is done (instead of the OutOfRangeError of `get_next`)."""
    op = apply_op("IteratorGetNextAsOptional", [iterator._handle],
                  _ds.spec_attrs(iterator._types, iterator._shapes),
                  name="IteratorGetNextAsOptional")
    return optional_ops.Optional(op.outputs[0], iterator._structure, iterator._types,
                                 iterator._shapes)


@tf_export("data.make_one_shot_iterator")
def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """An iterator over `dataset` that starts itself on first use.

    Raises:
      ValueError: the dataset depends on a placeholder or a stateful op (TF captures
        a one-shot iterator's dataset by value: use an initializable iterator).
    """
    _check_capturable(dataset._variant)
    from tensorweave.ops.random.random_ops import get_seed
    # TF's takes an op seed (the graph seed of the function it rebuilds the dataset in,
    # which changes nothing already built): later ops derive theirs after it
    get_seed(None)
    handle = apply_op("OneShotDatasetIterator", [dataset._variant],
                      {"output_types": dataset._types, "output_shapes": dataset._shapes},
                      name="OneShotIterator").outputs[0]
    return Iterator(handle, None, dataset._structure, dataset._types, dataset._shapes)


def _check_capturable(variant) -> None:
    """TF captures a one-shot iterator's dataset by value: what it depends on must have
    a value without a run (no placeholder) and no state (no variable, table, random
    draw); the dataset ops themselves are fine."""
    for op in _data_upstream(variant.op):
        if op.type in ("Placeholder", "PlaceholderV2"):
            raise ValueError("Cannot capture a placeholder (name:%s, type:%s) by value: a "
                             "one-shot iterator's dataset cannot depend on a placeholder; "
                             "use make_initializable_iterator() and feed it to the "
                             "initializer." % (op.name, op.type))
        if _is_state(op):
            raise ValueError("Cannot capture a stateful node (name:%s, type:%s) by value.: "
                             "A likely cause of this error is that the dataset for which "
                             "you are calling `make_one_shot_iterator()` captures a "
                             "stateful object, such as a `tf.Variable` or "
                             "`tf.lookup.StaticHashTable`, which is not supported. Use "
                             "`make_initializable_iterator()` instead." % (op.name, op.type))


def _data_upstream(op) -> list:
    """`op` and the ops it reads through data inputs and the state its functions read,
    sorted by name (TF copies what a captured value computes from, not its control
    dependencies: list_files's Assert)."""
    seen, stack = set(), [op]
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(t.op for fn in _kernels.functions_of(op) for t in fn.resources)
    return sorted(seen, key=lambda op: op.name)


def _is_state(op) -> bool:
    """A stateful op that is not itself a dataset (dataset ops are registered stateful
    here, so that they are never folded or merged, but TF's are not)."""
    try:
        stateful = get_op_def(op.type).stateful
    except ValueError:  # an op of no registered type (a graph imported as is)
        return False
    return stateful and not any(t.dtype == _dt.variant for t in op.outputs)


@tf_export("data.make_initializable_iterator")
def make_initializable_iterator(dataset: Dataset, shared_name: Optional[str] = None
                                ) -> Iterator:
    """An iterator over `dataset` whose `initializer` (re)starts it."""
    it = Iterator.from_structure(dataset.output_types, dataset.output_shapes, shared_name,
                                 dataset.output_classes)
    it._initializer = it.make_initializer(dataset)
    return it


def _spec_of(dataset_or_iterator, what: str):
    return getattr(dataset_or_iterator, what)


@tf_export("data.get_output_types")
def get_output_types(dataset_or_iterator):
    """The dtypes of the elements, in their structure."""
    return _spec_of(dataset_or_iterator, "output_types")


@tf_export("data.get_output_shapes")
def get_output_shapes(dataset_or_iterator):
    """The static shapes of the elements, in their structure."""
    return _spec_of(dataset_or_iterator, "output_shapes")


@tf_export("data.get_output_classes")
def get_output_classes(dataset_or_iterator):
    """tf.Tensor for each component, in the elements' structure."""
    return _spec_of(dataset_or_iterator, "output_classes")
