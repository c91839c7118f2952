"""Checkpoints of an input pipeline's position (TF1's
`tf.data.experimental.make_saveable_from_iterator`): a Saver saves and restores where an
iterator is, with the variables.

    saveable = tf.data.experimental.make_saveable_from_iterator(iterator)
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, saveable)  # or Saver([saveable])
    saver = tf.train.Saver()

What a checkpoint holds, under TF's key "<iterator resource tensor>_STATE" (e.g.
"IteratorV2:0_STATE", "OneShotIterator:0_STATE"): one string tensor (TF: a variant),
the JSON text of

    {"format": "tensorweave.iterator_state", "version": 1,
     "pipeline": "BatchDatasetV2(MapDataset(RangeDataset))",   # the dataset ops
     "element": ["int64[?]"],                                  # the element's spec
     "seed": 1234,          # the pass's seed
     "produced": 17,        # elements get_next handed out since the iterator started
     "ended": false}        # the pass has ended

Nothing is pickled. TensorFlow cannot read this state, nor tensorweave TensorFlow's
(a variant tensor: the Saver reports the dtype mismatch, InvalidArgumentError).

Design: a restore replays. TF saves each transformation's internal state (buffers,
file offsets, random generators); tensorweave's transformations are Python generators,
whose state cannot be written out, so the state is instead what makes the pass again:
every random choice in a pass derives from one seed drawn when the iterator starts
(dataset_ops.PipelineContext: an unseeded shuffle, sample_from_datasets,
rejection_resample, RandomDataset draw from the pass's seed, keyed by their op's name
and how many times they started in the pass; a dataset that flat_map, interleave or
group_by_window makes for an element reads in a child context whose seed derives from
the transformation and the element's index), so a pass is a function of its dataset
and its seed. Restoring starts a new pass of the iterator's dataset with the saved seed
and fast-forwards it by the saved count (`DatasetValue.elements_after`), then reads the
next element. That is exact for every deterministic pipeline, TF's random
transformations included (an unseeded shuffle goes on with the same permutation: no
element of the epoch repeated or lost, and later epochs in the same orders as without
the restore, where TF draws new ones), and needs no per-transformation state format.

The cost is O(position): the elements before the position are read again, within the
restore. Transformations skip what they can: a source seeks (range, from_tensor_slices),
batch and padded_batch skip size * n input elements, take/skip/zip/shard/prefetch pass
the count on, and a map (any num_parallel_calls) does not run its function for the
skipped elements; a shuffle, filter, interleave, cache, repeat or unbatch reads its
input's elements again. So for the usual "records -> shuffle -> repeat -> map -> batch
-> prefetch" only the records and the shuffle are replayed, not the map's function.

What is not exact, and why:

* External state (TF's term): a function (map, filter, flat_map, ...) with stateful ops
  (random ops like tf.random_uniform, resource variable reads, py_func, queue or
  variable updates) or from_generator. A replay reruns them, or skips them, so their
  values and side effects are not those of the saved pass. As in TF, saving fails
  (FailedPreconditionError "<op> is stateful.") unless `external_state_policy` is
  "warn" (saves and logs a warning) or "ignore". TF1 reference variables and lookup
  tables read in functions count as state TF allows; their values at restore are used.
* A dataset whose source changed between save and restore (other files, other fed
  values for the initializer): the replay reads what is there now. The pipeline's
  structure and element types are checked (NotFoundError, TF's class, on a mismatch);
  changed constants (a batch size, a range's bounds) are not, as in TF, and the position
  then counts elements of the changed pipeline.
* Restoring an iterator initialized with other feeds than the saved pass replays the
  iterator's current dataset.
* A dataset value read twice in one pass from two threads (a shuffled dataset zipped
  with a prefetched copy of itself): which of its two readings draws which randomness
  depends on the threads' timing.

An error while replaying (a file gone since) is raised by the next get_next, as an error
of the next element would be; the restore itself succeeds, and the pass then ends, as
any pass does after an error.

Restoring an iterator that was never initialized: TF 1.x rebuilt the dataset from the
graph its checkpoints held, so a restore initialized the iterator; TF 2.x checkpoints
hold no graph and its restore raises FailedPreconditionError. Here a one-shot iterator
initializes itself, an iterator of make_initializable_iterator is initialized by running
its initializer (in a nested run: an initializer that needs feeds must be run by the
program first), and an iterator of Iterator.from_structure, whose dataset is not known
until an initializer runs, raises TF 2.x's FailedPreconditionError. Saving an
uninitialized iterator raises FailedPreconditionError, as in TF.
"""
from __future__ import annotations

import json
import logging
from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.data.dataset_kernels import functions_of
from tensorweave.data.options import ExternalStatePolicy

_log = logging.getLogger("tensorflow")

FORMAT, VERSION = "tensorweave.iterator_state", 1

register_op("SerializeIterator", inputs=["resource_handle: resource"],
            outputs=["serialized: string"], attrs={"external_state_policy": 0},
            shape=lambda op: TensorShape([]), stateful=True)
# initializer: tensorweave's; the op that initializes the iterator, if it has one
register_op("DeserializeIterator", inputs=["resource_handle: resource",
                                           "serialized: string"],
            attrs={"initializer": ""}, stateful=True)
not_differentiable("SerializeIterator")
not_differentiable("DeserializeIterator")

_CHANGED = ("Make sure the dataset definition has not changed between the process that "
            "saved the checkpoint and the process that is restoring it.")


# --- what identifies a pipeline -----------------------------------------------------------
def pipeline_of(op) -> str:
    """The dataset ops of the pipeline `op` makes, outermost first, e.g.
    "BatchDatasetV2(MapDataset(RangeDataset))"."""
    if op is None:
        return "?"
    inner = [pipeline_of(t.op) for t in op.inputs if t.dtype == _dt.variant]
    return op.type + ("(%s)" % ", ".join(inner) if inner else "")


def element_of(op) -> List[str]:
    """The element spec of the dataset `op` makes: "dtype[dims]" per component."""
    if op is None:
        return []
    try:
        types, shapes = op._get_attr("output_types"), op._get_attr("output_shapes")
    except (KeyError, ValueError):
        return []
    return ["%s%s" % (_dt.as_dtype(t).name, _shape_text(s)) for t, s in zip(types, shapes)]


def _shape_text(shape) -> str:
    shape = TensorShape(shape)
    if shape.ndims is None:
        return "[<unknown>]"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


# --- external state ----------------------------------------------------------------------
# stateful ops a function may hold without a replay differing (TF allows the lookups, Assert
# and Print; the others hold per-run state of their own or only describe a resource)
_ALLOWED = frozenset([
    "Assert", "_AssertCompare", "_AssertNear", "_AssertRank", "Print", "PrintV2",
    "CheckNumerics", "GuaranteeConst", "ControlTrigger", "VariableShape",
    "VarIsInitializedOp", "LookupTableFindV2", "LookupTableSizeV2", "LookupTableExportV2",
    "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"])
_VARIABLE_READS = ("ReadVariableOp", "_ReadVariableOrDefault")


def _is_dataset_op(op) -> bool:
    """A dataset op (TF's rule: one variant output, a name ending in Dataset)."""
    return len(op.outputs) == 1 and op.outputs[0].dtype == _dt.variant and (
        op.type.endswith(("Dataset", "DatasetV2", "Datasets")))


def _stateful_problem(op) -> Optional[str]:
    """Why `op`, run per element inside a function, is external state (None if not)."""
    if op.type == "GeneratorDataset":
        return "PyFunc is stateful."
    if _is_dataset_op(op):
        return None
    op_def = getattr(op, "_op_def", None)
    if op_def is None or not op_def.stateful or op.type in _ALLOWED or \
            op.type.startswith("TensorArray"):
        return None
    if op.type in _VARIABLE_READS:
        handle = op.inputs[0]
        while handle.op.type == "Identity":
            handle = handle.op.inputs[0]
        if handle.op._attrs.get(REF_VARIABLE_ATTR):
            return None  # a TF1 reference variable: TF does not count its reads
    elif op.outputs and all(t.dtype == _dt.resource for t in op.outputs):
        return None  # a resource's handle (a variable, a table): what uses it counts
    return "%s is stateful." % op.type


def external_state(dataset_op) -> Optional[str]:
    """The first external state of the pipeline `dataset_op` makes, described (None if
    it has none): a stateful op in one of its functions, or a generator source."""
    seen, functions = set(), set()
    stack = [dataset_op] if dataset_op is not None else []
    while stack:  # the pipeline: its dataset ops, made once when the iterator starts
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "GeneratorDataset":
            return "PyFunc is stateful. (Dataset.from_generator %r: tensorweave cannot " \
                   "replay a Python generator)" % op.name
        for fn in functions_of(op):
            if id(fn) not in functions:
                functions.add(id(fn))
                found = _function_state(fn, op, functions)
                if found:
                    return found
        stack.extend(t.op for t in op.inputs if t.dtype == _dt.variant)
    return None


def _function_state(fn, owner, functions: set) -> Optional[str]:
    """The external state of the traced function `fn` of dataset op `owner`: every op its
    outputs need runs per element, except what computes its captures (inputs of the
    dataset op, evaluated once when the iterator starts)."""
    captured = {id(t) for t in fn.captures}
    seen = set()
    stack = [t.op for t in fn.outputs if id(t) not in captured]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        problem = _stateful_problem(op)
        if problem:
            return "%s (op %r in the function of %s %r)" % (problem, op.name, owner.type,
                                                          owner.name)
        if _is_dataset_op(op):
            for inner in functions_of(op):
                if id(inner) not in functions:
                    functions.add(id(inner))
                    found = _function_state(inner, op, functions)
                    if found:
                        return found
        stack.extend(t.op for t in op.inputs if id(t) not in captured)
        stack.extend(op.control_inputs)
    return None


# --- the kernels -------------------------------------------------------------------------
@kernel("SerializeIterator")
def _serialize_kernel(ctx, iterator):
    with iterator.lock:
        if iterator.dataset is None:
            raise errors.FailedPreconditionError(
                None, ctx.op, "Save() failed because the iterator has not been "
                "initialized. Ensure that you have run the initializer operation for this "
                "iterator before saving it.")
        dataset_op, seed = iterator.dataset_op, iterator.seed
        produced, ended = iterator.produced, iterator.ended
    policy = ctx.attrs["external_state_policy"]
    if policy != ExternalStatePolicy.IGNORE.value:
        cached = ctx.state.get("external")
        if cached is None or cached[0] is not dataset_op:
            cached = ctx.state["external"] = (dataset_op, external_state(dataset_op))
        problem = cached[1]
        if problem and policy == ExternalStatePolicy.FAIL.value:
            raise errors.FailedPreconditionError(
                None, ctx.op, "%s tensorweave restores an iterator by replaying its "
                "pipeline, and this state would not be replayed; pass "
                "external_state_policy='warn' or 'ignore' to make_saveable_from_iterator to "
                "save the position anyway" % problem)
        if problem:
            _log.warning("Saving the position of an iterator whose input pipeline holds "
                         "external state; a restore will not restore that state. %s",
                         problem)
    text = json.dumps({"format": FORMAT, "version": VERSION,
                       "pipeline": pipeline_of(dataset_op),
                       "element": element_of(dataset_op), "seed": int(seed),
                       "produced": int(produced), "ended": bool(ended)}, sort_keys=True)
    return np.array(text.encode("utf-8"), dtype=object)


def _parse(ctx, serialized) -> dict:
    value = np.asarray(serialized, dtype=object).reshape(-1)
    state = None
    if value.size == 1:
        raw = value[0]
        try:
            state = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else str(raw))
        except (ValueError, UnicodeDecodeError):
            state = None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise errors.DataLossError(
            None, ctx.op, "Failed to restore dataset iterator from checkpoint: the tensor "
            "is not a tensorweave iterator state (a checkpoint written by TensorFlow holds "
            "its own, which tensorweave cannot read)")
    if state.get("version") != VERSION:
        raise errors.UnimplementedError(
            None, ctx.op, "Failed to restore dataset iterator from checkpoint: iterator "
            "state version %r; this tensorweave reads version %d"
            % (state.get("version"), VERSION))
    try:
        state["seed"], state["produced"] = int(state["seed"]), int(state["produced"])
        state["ended"] = bool(state["ended"])
    except (KeyError, TypeError, ValueError):
        raise errors.DataLossError(None, ctx.op, "Failed to restore dataset iterator from "
                                   "checkpoint: an incomplete iterator state") from None
    return state


def _initialized(iterator) -> bool:
    with iterator.lock:
        return iterator.dataset is not None


@kernel("DeserializeIterator")
def _deserialize_kernel(ctx, iterator, serialized):
    state = _parse(ctx, serialized)
    initializer = ctx.attrs.get("initializer")
    if not _initialized(iterator) and initializer:
        # TF1 rebuilt the dataset from the checkpoint; an iterator with an initializer of
        # its own (make_initializable_iterator) is initialized by running it
        try:
            ctx.session.run(ctx.op.graph.get_operation_by_name(initializer))
        except errors.OpError as e:
            raise errors.FailedPreconditionError(
                None, ctx.op, "Failed to restore dataset iterator from checkpoint: the "
                "iterator has not been initialized, and running its initializer %r failed "
                "(%s: %s). Run the initializer, with its feeds, before restoring."
                % (initializer, type(e).__name__, e.message)) from None
    if not _initialized(iterator):
        raise errors.FailedPreconditionError(
            None, ctx.op, "Failed to restore dataset iterator from checkpoint: Restore() "
            "failed because the iterator has not been initialized. Ensure that you have "
            "run the initializer operation for this iterator before restoring it. "
            + _CHANGED)
    with iterator.lock:
        dataset_op = iterator.dataset_op
    have = (pipeline_of(dataset_op), element_of(dataset_op))
    saved = (state.get("pipeline"), state.get("element"))
    if have != saved:
        raise errors.NotFoundError(
            None, ctx.op, "Failed to restore dataset iterator from checkpoint: the "
            "checkpoint holds the position of an iterator over %s with elements %s, but "
            "this iterator reads %s with elements %s. %s"
            % (saved[0], saved[1], have[0], have[1], _CHANGED))
    iterator.restore(ctx, state["seed"], state["produced"], state["ended"])


# --- the saveable ------------------------------------------------------------------------
class _SaveSpec:
    """One tensor a saveable saves (TF's SaveSpec: tensor, slice_spec, name, dtype,
    device)."""

    def __init__(self, tensor, slice_spec: str, name: str, device: str = ""):
        self.tensor, self.slice_spec, self.name = tensor, slice_spec, name
        self.dtype, self.device = tensor.dtype, device


class _IteratorSaveable:
    """An iterator as a Saver sees it (TF's _IteratorSaveable): its SerializeIterator
    output saved under "<resource name>_STATE", restored by DeserializeIterator."""

    def __init__(self, iterator_resource: _graph.Tensor, name: str,
                 external_state_policy: ExternalStatePolicy = ExternalStatePolicy.FAIL,
                 initializer: Optional[_graph.Operation] = None):
        g = iterator_resource.graph
        with g.as_default(), g.colocate_with(iterator_resource.op):
            serialized = apply_op("SerializeIterator", [iterator_resource], {
                "external_state_policy": external_state_policy.value},
                name="SerializeIterator").outputs[0]
        self.handle = iterator_resource
        # the iterator's op (TF's `op` is the resource tensor): a MetaGraphDef names a
        # saveable by its op, as it names a table's
        self.op = iterator_resource.op
        self.name = name
        self.device = iterator_resource.device
        self.specs = [_SaveSpec(serialized, "", name + "_STATE", self.device)]
        self._initializer = initializer

    def restore(self, restored_tensors, restored_shapes):
        with self.op.graph.colocate_with(self.op):
            return apply_op("DeserializeIterator", [
                self.handle, convert_to_tensor(restored_tensors[0], _dt.string)], {
                    "initializer": "" if self._initializer is None else
                    self._initializer.name}, name="DeserializeIterator")


def _policy(external_state_policy) -> ExternalStatePolicy:
    if isinstance(external_state_policy, ExternalStatePolicy):
        return external_state_policy
    named = {"warn": ExternalStatePolicy.WARN, "ignore": ExternalStatePolicy.IGNORE,
             "fail": ExternalStatePolicy.FAIL}
    if isinstance(external_state_policy, str) and external_state_policy in named:
        return named[external_state_policy]
    raise ValueError("Invalid `ExternalStatePolicy.` Supported values include 'warn', "
                     "'ignore', and 'fail.' Received %s." % (external_state_policy,))


@tf_export("data.experimental.make_saveable_from_iterator")
def make_saveable_from_iterator(iterator, external_state_policy=None):
    """A saveable of `iterator`'s position, for `tf.train.Saver` (put it in
    SAVEABLE_OBJECTS, or in a Saver's var_list): see the module docstring.

    Args:
      iterator: a `tf.data.Iterator` (one-shot, initializable or from_structure).
      external_state_policy: what saving does when the pipeline holds external state
        (stateful ops in its functions, a generator): "fail" (the default, as TF's:
        FailedPreconditionError), "warn" (saves, logging a warning) or "ignore"; or a
        `tf.data.experimental.ExternalStatePolicy`.

    Returns:
      The saveable: it saves the string tensor "<iterator resource name>_STATE".

    Raises:
      ValueError: `external_state_policy` is none of these, or `iterator` is not an
        iterator.
    """
    policy = _policy("fail" if external_state_policy is None else external_state_policy)
    handle = getattr(iterator, "_handle", None)
    if not isinstance(handle, _graph.Tensor) or handle.dtype != _dt.resource:
        raise ValueError("make_saveable_from_iterator needs a tf.data iterator, got %r"
                         % (iterator,))
    return _IteratorSaveable(handle, handle.name, external_state_policy=policy,
                             initializer=getattr(iterator, "_initializer", None))
