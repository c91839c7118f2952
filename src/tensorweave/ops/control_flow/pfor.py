"""`tf.vectorized_map`: runs `fn` on every slice of `elems` along dimension 0 by
vectorizing its ops (TF's pfor, "Auto-Vectorizing TensorFlow Graphs", Agarwal 2019).

`fn` is called once, on the slices `elems[i]` of a loop index `i` (a
PlaceholderWithDefault the ops of `fn` are built on). Then each op `fn` built is
converted, in creation order and only as far as the outputs need it, into ops over the
whole batch: a value is either *loop invariant* (the same in every iteration, kept as
it is) or *stacked* (every iteration's value, stacked on a new leading dimension of the
batch size). An op none of whose inputs is stacked is loop invariant and kept; the
others go through the converter registered for their type (pfor_converters.py), which
builds the batched computation (an elementwise op on stacked inputs with their ranks
aligned, a reduction with its axes shifted, MatMul as BatchMatMulV2, ...).

What a converter cannot vectorize falls back, as TF's does, to a while_loop that runs
that one op once per iteration on the iteration's slices of its inputs and stacks its
outputs (a warning names it when `warn`); with `fallback_to_while_loop=False` it is a
ValueError. A `fn` that builds control flow (cond, while_loop, TensorArrays) runs whole
in such a loop, one call of `fn` per iteration: TF vectorizes some of those, with the
same results. Stateful ops run once per iteration (random ops draw one value per
iteration), variable reads once.

Every output has the static shape `[batch] + fn's output shape`, batch known when all
first dimensions of `elems` are.
"""
from __future__ import annotations

import logging
from typing import Callable, Dict, List, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor, get_default_graph, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape

_log = logging.getLogger("tensorflow")

# Ops whose presence in fn makes the whole fn run in a while_loop (control flow and the
# resources that only make sense inside one iteration)
_WHOLE_FN_LOOP = frozenset((
    "Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "RefSwitch",
    "RefMerge", "RefEnter", "RefExit", "RefNextIteration", "ControlTrigger",
    "TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3",
    "TensorArrayScatterV3", "TensorArrayConcatV3", "TensorArraySplitV3",
    "TensorArraySizeV3", "TensorArrayCloseV3", "TensorArrayGradV3", "StackV2",
    "StackPushV2", "StackPopV2", "StackCloseV2"))

# Stateful ops that are loop invariant when their inputs are (TF's passthrough list)
_PASSTHROUGH_STATEFUL = frozenset(("VarHandleOp", "VariableShape", "ReadVariableOp",
                                   "Placeholder", "PlaceholderWithDefault", "Const"))


class ConversionNotImplemented(Exception):
    """Raised by a converter for inputs it does not vectorize (the op falls back)."""


class _NeedsWholeLoop(Exception):
    """fn builds ops that are vectorized only by running fn in a while_loop."""


class PForInput:
    """What a converter gets: the op and its converted inputs, (tensor, stacked) each."""

    __slots__ = ("pfor", "op", "inputs")

    def __init__(self, pfor: "PFor", op: Operation, inputs: List[Tuple[Tensor, bool]]):
        self.pfor, self.op, self.inputs = pfor, op, inputs

    @property
    def op_type(self) -> str:
        return self.op.type

    def is_stacked(self, i: int) -> bool:
        return self.inputs[i][1]

    def any_stacked(self) -> bool:
        return any(s for _, s in self.inputs)

    def stacked_input(self, i: int) -> Tensor:
        """Input i with the batch dimension (loop invariants tiled)."""
        t, stacked = self.inputs[i]
        return t if stacked else self.pfor.tile(t)

    def unstacked_input(self, i: int) -> Tensor:
        """Input i, which must be loop invariant (else the op falls back)."""
        t, stacked = self.inputs[i]
        if stacked:
            raise ConversionNotImplemented("input %d of %s (%s) is not loop invariant"
                                           % (i, self.op.name, self.op.type))
        return t

    def input(self, i: int) -> Tensor:
        return self.inputs[i][0]

    def attr(self, name: str):
        return self.op._get_attr(name)


class PFor:
    """Converts the ops of one loop body (see the module docstring).

    Invariants: `_values` maps each tensor of a converted op to (its converted tensor,
    stacked); `_ops` maps each converted op to the op standing for it (for control
    dependencies); ops outside `new_ops` are loop invariant and never converted.
    """

    def __init__(self, loop_var: Tensor, loop_len: Tensor, new_ops: List[Operation],
                 fallback_to_while_loop: bool, warn: bool):
        from tensorweave.ops.math import math_ops
        self.loop_var = loop_var
        self.loop_len = loop_len
        value = tensor_util.constant_value(loop_len)
        self.loop_len_static: Optional[int] = None if value is None else int(value)
        self.new_ops = set(new_ops)
        self.fallback_to_while_loop = fallback_to_while_loop
        self.warn = warn
        self.loop_indices = math_ops.range(loop_len, name="loop_var")  # i, stacked
        self._values: Dict[Tensor, Tuple[Tensor, bool]] = {
            loop_var: (self.loop_indices, True)}
        self._ops: Dict[Operation, Operation] = {loop_var.op: loop_var.op}

    # --- helpers for converters ---------------------------------------------------------
    def tile(self, t: Tensor) -> Tensor:
        """The loop invariant `t` stacked: `loop_len` copies along a new dimension 0."""
        from tensorweave.ops.array import array_join_ops, array_ops
        ones = [1] * t.shape.ndims if t.shape.ndims is not None else None
        if ones is not None and self.loop_len_static is not None:
            multiples = [self.loop_len_static] + ones
        elif ones is not None:
            multiples = array_join_ops.stack([self.loop_len] + ones)
        else:
            from tensorweave.ops.array import array_fill_ops
            multiples = array_join_ops.concat(
                [array_ops.reshape(self.loop_len, [1]),
                 array_fill_ops.ones_like(array_ops.shape(t))], 0)
        out = array_join_ops.tile(array_ops.expand_dims(t, 0), multiples)
        out.set_shape(TensorShape([self.loop_len_static]).concatenate(t.shape))
        return out

    # --- conversion ---------------------------------------------------------------------
    def convert(self, y):
        """The batched value of the loop body's tensor (stacked, loop invariants tiled)
        or Operation `y`."""
        if isinstance(y, Operation):
            self._convert_op_and_inputs(y)
            return self._ops.get(y, y)
        t, stacked = self._value(y)
        return t if stacked else self.tile(t)

    def _value(self, t: Tensor) -> Tuple[Tensor, bool]:
        if t in self._values:
            return self._values[t]
        if t.op not in self.new_ops:
            return t, False
        self._convert_op_and_inputs(t.op)
        return self._values[t]

    def _convert_op_and_inputs(self, root: Operation) -> None:
        """Converts `root` after every op of the loop body it depends on (iteratively:
        bodies can be deep)."""
        stack = [root]
        while stack:
            op = stack[-1]
            if op in self._ops:
                stack.pop()
                continue
            pending = [t.op for t in op.inputs if t.op in self.new_ops and
                       t.op not in self._ops]
            pending += [c for c in op.control_inputs if c in self.new_ops and
                        c not in self._ops]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self._convert_op(op)

    def _convert_op(self, op: Operation) -> None:
        inputs = [self._value(t) for t in op.inputs]
        control = [self._ops[c] for c in op.control_inputs if c in self.new_ops]
        control_changed = any(self._ops[c] is not c for c in op.control_inputs
                              if c in self.new_ops)
        stateful = op.op_def is not None and op.op_def.stateful and \
            op.type not in _PASSTHROUGH_STATEFUL
        if not any(s for _, s in inputs) and not stateful:
            if not control_changed:
                new_outputs, new_op = list(op.outputs), op
            else:  # the same op, after the converted ops it waited for
                new_op = recreate(op, [t for t, _ in inputs], control)
                new_outputs = list(new_op.outputs)
            self._record(op, new_op, [(t, False) for t in new_outputs])
            return
        from tensorweave.ops.control_flow import pfor_converters
        converter = pfor_converters.CONVERTERS.get(op.type)
        g = get_default_graph()
        with name_scope(op.name + "/pfor/"):
            pin = PForInput(self, op, inputs)
            try:
                if converter is None:
                    raise ConversionNotImplemented("there is no registered converter for "
                                                   "this op.")
                with g.control_dependencies(control):
                    result = converter(pin)
            except ConversionNotImplemented as e:
                if not self.fallback_to_while_loop:
                    raise ValueError(
                        "No pfor vectorization defined for %s\n%s\n inputs: %s. Consider "
                        "enabling the fallback_to_while_loop option to pfor, which may "
                        "run slower." % (op.type, op.name, [t for t, _ in inputs])) \
                        from None
                result = self._fallback(pin, str(e), control)
        if isinstance(result, Operation):
            self._record(op, result, [])
            return
        new_op = result[0][0].op if result else op
        self._record(op, new_op, result)

    def _record(self, op: Operation, new_op: Operation, outputs) -> None:
        self._ops[op] = new_op
        for old, (t, stacked) in zip(op.outputs, outputs):
            inner = old.shape
            shape = TensorShape([self.loop_len_static]).concatenate(inner) if stacked \
                else inner
            t.set_shape(shape)
            self._values[old] = (t, stacked)

    def _fallback(self, pin: PForInput, cause: str, control: List[Operation]):
        """The op run once per iteration in a while_loop (started after `control`), its
        outputs stacked."""
        op = pin.op
        (_log.warning if self.warn else _log.debug)(
            "Using a while_loop for converting %s cause %s", op.type, cause)
        from tensorweave.ops.indexing import indexing_gather

        def body(i):
            args = [indexing_gather.gather(t, i) if stacked else t for t, stacked in
                    pin.inputs]
            return recreate(op, args, [])
        dtypes = [t.dtype for t in op.outputs]
        outputs = for_loop(body, dtypes, self.loop_len, self.loop_len_static, control)
        if not op.outputs:
            return outputs
        return [(t, True) for t in outputs]


def recreate(op: Operation, inputs: List[Tensor], control: List[Operation],
             attrs: Optional[dict] = None) -> Operation:
    """An op of the type and attrs of `op` on `inputs` (flat, as `op.inputs`)."""
    from tensorweave.framework.op_builder import infer_shapes, output_dtypes
    g = get_default_graph()
    new_attrs = {k: v for k, v in op._attrs.items() if k != "_class"}
    if attrs:
        new_attrs.update(attrs)
    op_def = op.op_def
    with g.control_dependencies(control) if control else _NoScope():
        new = g._create_op_raw(op.type, list(inputs), output_dtypes(op_def, new_attrs),
                               new_attrs, op_def, op.name.split("/")[-1])
    infer_shapes(new)
    return new


class _NoScope:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def for_loop(body: Callable[[Tensor], object], dtypes: List[_dt.DType], n: Tensor,
             n_static: Optional[int] = None, control: Optional[List[Operation]] = None):
    """Runs `body(i)` for i in [0, n) in a while_loop, started once the ops `control`
    ran, and stacks what it returns (an Operation when `dtypes` is empty: the loop, run
    for its effects)."""
    from tensorweave.ops.control_flow import control_flow_ops, structure
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray

    def step(i, *tas):
        result = body(i)
        if not dtypes:
            with get_default_graph().control_dependencies(
                    [result] if isinstance(result, Operation) else nest.flatten(result)):
                return (i + 1,)
        flat = list(result.outputs) if isinstance(result, Operation) else \
            nest.flatten(result)
        return (i + 1,) + tuple(ta.write(i, v) for ta, v in zip(tas, flat))
    g = get_default_graph()
    # the loop starts after `control` and the active control dependencies; the ops
    # inside it do not carry them (an op of the loop's frame cannot wait for one outside)
    control = list(control or []) + (g._current_control_inputs([]) if g._control_stack
                                     else [])
    with g.control_dependencies(None):
        tas = [TensorArray(dtype=dt, size=n, dynamic_size=False, infer_shape=True)
               for dt in dtypes]
        i0 = convert_to_tensor(0, name="Const")
        if control:
            i0 = structure.with_dependencies(control, i0)
        out = control_flow_ops.while_loop(lambda i, *_: i < n, step, [i0] + tas)
    if not dtypes:
        return structure.group(out[0] if isinstance(out, (list, tuple)) else out)
    stacked = [ta.stack() for ta in out[1:]]
    for t in stacked:
        if t.shape.ndims is not None:
            t.set_shape(TensorShape([n_static]).concatenate(t.shape[1:]))
    return stacked


# --- the API ----------------------------------------------------------------------------------
def _broadcasting_gather(x: Tensor, i: Tensor) -> Tensor:
    """x[i], or x[0] along a first dimension of 1 (elems broadcast, as TF's)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing import indexing_gather, indexing_select
    from tensorweave.ops.math import math_binary
    first = x.shape[0].value if x.shape.ndims else None
    if first == 1:
        i = 0
    elif first is None:
        i = indexing_select.where_v2(math_binary.greater(array_ops.shape(x)[0], 1), i, 0)
    return indexing_gather.gather(x, i)


def _as_outputs(outputs):
    """fn's results with values that are neither Tensors nor Operations converted."""
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.framework.sparse_tensor import SparseTensor
    flat = []
    for y in nest.flatten(outputs):
        if isinstance(y, SparseTensor):
            raise ValueError("vectorized_map: fn returned a SparseTensor (%s), which is not "
                             "supported; return its indices, values and dense_shape "
                             "instead." % (y,))
        if y is not None and not isinstance(y, (Tensor, Operation)):
            if isinstance(y, IndexedSlices):
                _log.warning("Converting %s to a dense representation may make it slow. "
                             "Alternatively, output the indices and values of the "
                             "IndexedSlices separately, and handle the vectorized outputs "
                             "directly.", y)
            y = convert_to_tensor(y)
        flat.append(y)
    return flat


def pfor(loop_fn: Callable[[Tensor], object], iters, fallback_to_while_loop: bool = True,
         warn: bool = False, whole_loop_fn: Optional[Callable[[Tensor], object]] = None):
    """Runs `loop_fn(i)` for i in [0, iters) vectorized; its stacked results.

    `whole_loop_fn` (default `loop_fn`) is what a while_loop calls per iteration when
    the body cannot be converted op by op (control flow in it)."""
    from tensorweave.ops.array import constant_op
    g = get_default_graph()
    first_id = g._id_counter
    with name_scope("loop_body"):
        loop_var = constant_op.placeholder_with_default(0, shape=[])
        outputs = loop_fn(loop_var)
        flat = _as_outputs(outputs)
    new_ops = _created_after(g, first_id)
    iters = convert_to_tensor(iters, dtype=_dt.int32)
    try:
        for op in new_ops:  # (loops are also the only cycles of a graph)
            if op.type in _WHOLE_FN_LOOP:
                raise _NeedsWholeLoop(op.type)
        with name_scope("pfor"):
            converter = PFor(loop_var, iters, new_ops, fallback_to_while_loop, warn)
            results = [None if y is None else converter.convert(y) for y in flat]
    except _NeedsWholeLoop as e:
        if not fallback_to_while_loop:
            raise ValueError("No pfor vectorization defined for %s (control flow in the "
                             "loop body). Consider enabling the fallback_to_while_loop "
                             "option to pfor, which may run slower." % e.args[0]) from None
        (_log.warning if warn else _log.debug)(
            "Using a while_loop for the whole loop body cause it builds %s", e.args[0])
        results = _whole_loop(whole_loop_fn or loop_fn, flat, iters)
    return nest.pack_sequence_as(outputs, results) if nest.is_sequence(outputs) else \
        results[0]


def _whole_loop(loop_fn, template_flat, iters):
    """loop_fn run once per iteration in a while_loop (a body with control flow): its
    tensors stacked, its Operations standing for the whole loop."""
    n_static = tensor_util.constant_value(iters)
    n_static = None if n_static is None else int(n_static)
    tensors = [k for k, y in enumerate(template_flat) if isinstance(y, Tensor)]
    ops = [k for k, y in enumerate(template_flat) if isinstance(y, Operation)]

    def body(i):
        flat = _as_outputs(loop_fn(i))
        waits = [flat[k] for k in ops]
        if not tensors:
            return _ops_group(waits)
        with get_default_graph().control_dependencies(waits):
            return [_identity(flat[k]) for k in tensors]
    with name_scope("pfor_loop"):
        out = for_loop(body, [template_flat[k].dtype for k in tensors], iters, n_static)
    results: list = [None] * len(template_flat)
    if tensors:
        for k, t in zip(tensors, out):
            t.set_shape(TensorShape([n_static]).concatenate(template_flat[k].shape))
            results[k] = t
        loop_done = _ops_group([t.op for t in out]) if ops else None
    else:
        loop_done = out
    for k in ops:
        results[k] = loop_done
    return results


def _identity(t: Tensor) -> Tensor:
    from tensorweave.ops.control_flow import structure
    return structure.identity(t)


def _ops_group(ops: List[Operation]) -> Operation:
    from tensorweave.ops.control_flow import structure
    return structure.group(*ops)


def _created_after(g, first_id: int) -> List[Operation]:
    created = []
    for op in reversed(g._ops):
        if op._id <= first_id:
            break
        created.append(op)
    created.reverse()
    return created


@tf_export("vectorized_map")
def vectorized_map(fn: Callable, elems, fallback_to_while_loop: bool = True,
                   warn: bool = True):
    """Parallel map on the list of tensors unpacked from `elems` on dimension 0.

    Like `tf.map_fn`, but `fn` is called once and its ops are vectorized over the batch
    (see the module docstring): usually much faster, with more memory. `fn` must not
    depend on the order of the iterations, and the shapes and dtypes of its intermediate
    values must not depend on its input.

    Args:
      fn: a callable taking one argument, nested like `elems`, and returning a (nested)
        structure of Tensors and Operations (with no outputs).
      elems: a Tensor or (nested) sequence of Tensors, unpacked along dimension 0. Each
        has a first dimension of either B or 1, for one batch size B >= 1 (those of 1
        are broadcast).
      fallback_to_while_loop: if True, an op that cannot be vectorized runs once per
        iteration in a while_loop; if False, it raises ValueError.
      warn: whether to warn (tensorflow logger) when an op falls back to a while_loop.

    Returns:
      The results of `fn` stacked along a new dimension 0, nested like `fn`'s results.

    Raises:
      ValueError: an op cannot be vectorized and `fallback_to_while_loop` is False, or
        `fn` returns a SparseTensor.
    """
    from tensorweave.framework.sparse_tensor import SparseTensor
    from tensorweave.ops.array import array_join_ops, array_ops
    from tensorweave.ops.math import reduction_ops

    def convert(x):
        if isinstance(x, SparseTensor):
            raise ValueError("vectorized_map: SparseTensor elems (%s) are not supported."
                             % (x,))
        return convert_to_tensor(x)
    elems = nest.map_structure(convert, elems)
    flat_elems = nest.flatten(elems)
    static = [None if e.shape.ndims is None else e.shape.as_list()[0] for e in flat_elems]
    if any(s is None for s in static):
        batch_size = reduction_ops.reduce_max(
            array_join_ops.stack([array_ops.shape(e)[0] for e in flat_elems]))
    else:
        batch_size = max(static)

    def loop_fn(i):
        return fn(nest.map_structure(lambda x: _broadcasting_gather(x, i), elems))
    return pfor(loop_fn, batch_size, fallback_to_while_loop=fallback_to_while_loop,
                warn=warn)
