"""Plan-time graph passes over the pruned step graph (OSDI §5).

The passes work on `StepGraph`, a light copy of the pruned ops (the user's Graph is
never changed), and are pure functions of (step graph, options). They never change
results:
  * `remove_dead_noops`  - NoOps and Identities that order nothing are removed
                            (TF's dependency optimizer does the same);
  * `eliminate_common_subexpressions` - identical stateless nodes are merged;
  * `materialize_shapes` - Shape, Size and Rank of values whose static shapes are
                            fully known become constants (Grappler's MaterializeShapes);
  * `fold_constants`     - stateless nodes whose inputs are all constants are evaluated
                            once, with the same kernels the executor would use;
  * `fuse_conv_bias_relu` - Conv2D (Conv3D), then its bias, then ReLU become one
                            _FusedConv2D (_FusedConv3D) node (Grappler's remapper
                            does the same);
  * `fuse_batch_norm_relu` - a training FusedBatchNormV3, then ReLU, become one
                            _FusedBatchNormEx node (likewise);
  * `fuse_count_true`    - a Sum of a Cast of bool that only Sums read becomes a
                            _CountTrue node (not Grappler's: the counts without the
                            cast array, the same values);
  * `mark_temporaries`   - an AssignVariableOp whose value a fresh elementwise result
                            made for it alone is told it may keep that array instead
                            of a copy, an elementwise op that it may write its result
                            into such an input (TF's executor forwards such buffers).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import registry as _reg
from tensorweave.runtime.policy import CONTROL_FLOW_OPS

# Ops never folded: their value depends on more than their inputs, or folding them
# would only copy memory.
_NO_FOLD = frozenset({"Placeholder", "PlaceholderWithDefault", "_Feed", "NoOp", "Const",
                      "VarHandleOp", "ReadVariableOp", "Print", "PrintV2", "Assert",
                      "CheckNumerics"})
_MAX_FOLD_ELEMENTS = 1 << 20


class Node:
    """One op of the step graph. `inputs` are (Node, output index) pairs."""

    __slots__ = ("op", "type", "attrs", "inputs", "control_inputs", "device", "n_out",
                 "value", "name", "stateful", "feed_index", "keep")

    def __init__(self, op, op_type, attrs, n_out, name, stateful, device=""):
        self.op = op
        self.type = op_type
        self.attrs = attrs
        self.inputs: List[Tuple["Node", int]] = []
        self.control_inputs: List["Node"] = []
        self.device = device
        self.n_out = n_out
        self.value = None      # folded constant outputs (a list), for type "Const"
        self.name = name
        self.stateful = stateful
        self.feed_index = -1
        self.keep = False      # fetched or targeted: never removed

    def __repr__(self):
        return "<Node %s %s>" % (self.type, self.name)

    def device_values(self) -> list:
        """The values of a Const node as its device keeps them. A device whose memory
        is not host memory (a GPU, the simulated accelerator) gets its copy once, when
        the step is lowered, so every executor (a Const kernel, a value preset in a
        compiled loop) hands the kernels the same device-resident value."""
        values = self.value if self.value is not None else [self.attrs["value"]]
        if not self.device.host_memory:
            values = [self.device.device_constant(v) for v in values]
        return values


class StepGraph:
    """The pruned graph of one step: nodes in a topological order, fetch refs, targets."""

    def __init__(self, nodes: List[Node], fetches: List[Tuple[Node, int]],
                 targets: List[Node]):
        self.nodes = nodes
        self.fetches = fetches
        self.targets = targets


def stable_topological_indices(preds: List[set]) -> Optional[List[int]]:
    """Kahn's algorithm over items 0..n-1 given each item's predecessor set, stable with
    respect to item order; None if the items form a cycle."""
    pending = [len(p) for p in preds]
    succ: List[List[int]] = [[] for _ in preds]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    ready = [i for i in range(len(preds)) if pending[i] == 0]
    ready.reverse()
    out = []
    while ready:
        i = ready.pop()
        out.append(i)
        for s in reversed(succ[i]):
            pending[s] -= 1
            if pending[s] == 0:
                ready.append(s)
    return out if len(out) == len(preds) else None


def topological_order(nodes: List[Node]) -> List[Node]:
    """The nodes in a dataflow order, stable with respect to the input order."""
    index = {id(n): i for i, n in enumerate(nodes)}
    order = stable_topological_indices(
        [{index[id(p)] for p, _ in n.inputs} | {index[id(c)] for c in n.control_inputs}
         for n in nodes])
    if order is None:
        raise ValueError("The step graph has a cycle (control flow without a frame?)")
    return [nodes[i] for i in order]


def _replace_refs(sg: StepGraph, mapping: Dict[Tuple[int, int], Tuple[Node, int]],
                  ctrl_mapping: Dict[int, List[Node]]) -> None:
    for n in sg.nodes:
        if mapping:
            n.inputs = [mapping.get((id(p), i), (p, i)) for p, i in n.inputs]
        if ctrl_mapping:
            new = []
            for c in n.control_inputs:
                for r in ctrl_mapping.get(id(c), (c,)):
                    if r is not n and r not in new:
                        new.append(r)
            n.control_inputs = new
    if mapping:
        sg.fetches = [mapping.get((id(p), i), (p, i)) for p, i in sg.fetches]


def remove_dead_noops(sg: StepGraph) -> StepGraph:
    """Removes NoOps with no inputs (they order nothing) and forwards Identities that
    are not fetched and stay on their input's device. An Identity with control inputs
    (gate_gradients' tuple() makes one per gradient) hands them to its readers, which
    then wait for them as the Identity did (TF's dependency optimizer does the same)."""
    mapping: Dict[Tuple[int, int], Tuple[Node, int]] = {}
    gates: Dict[Tuple[int, int], List[Node]] = {}  # forwarded output -> what it waited for
    ctrl: Dict[int, List[Node]] = {}
    kept = []
    for n in sg.nodes:  # topological order: inputs were rewritten already
        waits = list(n.control_inputs)
        if gates:
            for p, i in n.inputs:
                waits.extend(gates.get((id(p), i), ()))
        n.inputs = [mapping.get((id(p), i), (p, i)) for p, i in n.inputs]
        new_ctrl: List[Node] = []
        for c in waits:
            for r in ctrl.get(id(c), (c,)):
                if r not in new_ctrl:
                    new_ctrl.append(r)
        n.control_inputs = new_ctrl
        if n.keep:
            kept.append(n)
            continue
        if n.type == "NoOp" and not n.inputs:
            ctrl[id(n)] = list(n.control_inputs)
            continue
        if n.type == "Identity" and n.inputs[0][0].device == n.device:
            src = n.inputs[0]
            mapping[(id(n), 0)] = src
            if n.control_inputs:
                gates[(id(n), 0)] = list(n.control_inputs)
            ctrl[id(n)] = [src[0]] + [c for c in n.control_inputs if c is not src[0]]
            continue
        kept.append(n)
    sg.nodes = kept
    sg.fetches = [mapping.get((id(p), i), (p, i)) for p, i in sg.fetches]
    return sg


def _attrs_key(attrs) -> Optional[tuple]:
    items = []
    for k in sorted(attrs):
        v = attrs[k]
        if isinstance(v, np.ndarray):
            if v.size > 64:
                return None
            v = (v.dtype.str, v.shape, v.tobytes() if v.dtype != object else repr(v.tolist()))
        elif isinstance(v, list):
            v = tuple(v) if all(isinstance(x, (int, float, str, bool)) for x in v) else repr(v)
        try:
            hash(v)
        except TypeError:
            return None
        items.append((k, v))
    return tuple(items)


# Never merged: the loop and branch machinery, whose nodes stand for their places in
# the frame structure, not for values (Grappler's dedup leaves Enter and Exit alone)
_NOT_MERGED = CONTROL_FLOW_OPS | {"RefExit", "_Feed", "Placeholder",
                                  "PlaceholderWithDefault"}


def eliminate_common_subexpressions(sg: StepGraph) -> StepGraph:
    """Merges stateless nodes with the same type, inputs, attrs and device. Also in
    steps with control flow: nodes with the same inputs (data and control) are in the
    same frame and the same branch, so they compute the same value in every iteration
    and are dead together (per_image_standardization in a tf.map_fn body took its
    image's mean twice each iteration)."""
    seen: Dict[tuple, Node] = {}
    mapping: Dict[Tuple[int, int], Tuple[Node, int]] = {}
    ctrl: Dict[int, List[Node]] = {}
    kept = []
    for n in sg.nodes:
        n.inputs = [mapping.get((id(p), i), (p, i)) for p, i in n.inputs]
        if ctrl:
            n.control_inputs = [ctrl.get(id(c), [c])[0] for c in n.control_inputs]
        if n.stateful or n.type in _NOT_MERGED:
            kept.append(n)
            continue
        ak = _attrs_key(n.attrs)
        if ak is None:
            kept.append(n)
            continue
        key = (n.type, n.device, tuple((id(p), i) for p, i in n.inputs),
               tuple(sorted(id(c) for c in n.control_inputs)), ak)
        first = seen.get(key)
        if first is None or n.keep and first.keep:
            seen.setdefault(key, n)
            kept.append(n)
            continue
        if n.keep and not first.keep:
            # keep the fetched/targeted node itself; the earlier one is redirected
            seen[key] = n
            kept.append(n)
            continue
        for i in range(n.n_out):
            mapping[(id(n), i)] = (first, i)
        ctrl[id(n)] = [first]
    sg.nodes = kept
    _replace_refs(sg, mapping, ctrl)
    return sg


# what a shape op's value is, from the static shape's dimensions
_SHAPE_VALUES = {"Shape": lambda dims: dims, "Size": lambda dims: int(np.prod(dims)),
                 "Rank": len}


def materialize_shapes(sg: StepGraph) -> StepGraph:
    """Shape, Size and Rank nodes whose input has a fully known static shape become Const
    nodes, as Grappler's MaterializeShapes makes them, so that the arithmetic on them
    folds (a tf.map_fn body's per_image_standardization and random_crop recomputed their
    image's size every iteration). The constant keeps a control input from the input's
    node, so it still runs in that node's frame and branch, after it; inputs made by a
    control-flow op (whose outputs differ in liveness) are left alone, and so are shape
    ops placed on accelerators (whose outputs stay in host memory, where a constant's
    would not)."""
    for n in sg.nodes:
        value_of = _SHAPE_VALUES.get(n.type)
        if value_of is None or len(n.inputs) != 1 or n.n_out != 1 or \
                getattr(n.device, "device_type", "CPU") != "CPU":
            continue
        p, i = n.inputs[0]
        if p.type in CONTROL_FLOW_OPS:
            continue
        shape = _static_shape(p, i)
        if shape is None or not shape.is_fully_defined():
            continue
        out_type = n.attrs.get("out_type", _dt.int32).as_numpy_dtype
        value = np.array(value_of(shape.as_list()), dtype=np.int64)
        if value.size and (value.max() > np.iinfo(out_type).max):
            continue   # the kernel reports the overflow at run time
        n.type = "Const"
        n.value = [value.astype(out_type)]
        n.inputs = []
        if p not in n.control_inputs:
            n.control_inputs = [p] + n.control_inputs
    return sg


def fold_constants(sg: StepGraph, run_kernel: Callable[[Node, list], list]) -> StepGraph:
    """Evaluates stateless nodes whose data inputs are all constants; they become Const
    nodes. A folded node keeps its control inputs and takes over those of its constant
    inputs, so it still runs after everything its inputs waited for: a constant chain
    behind gradient gating (gate_gradients' Identities with control inputs, then the
    Reshape/BroadcastTo of a sum's gradient) folds to one gated Const, as Grappler's."""
    for n in sg.nodes:
        if n.type == "Const" and n.value is None:
            n.value = [n.attrs["value"]]
        if n.stateful or n.type in _NO_FOLD or n.type in CONTROL_FLOW_OPS or \
                not n.inputs or n.n_out == 0:
            continue
        if not all(p.type == "Const" for p, _ in n.inputs):
            continue
        if not _reg.has_kernel(n.type, "CPU"):
            continue
        try:
            outs = run_kernel(n, [p.value[i] for p, i in n.inputs])
        except Exception:  # leave it to the executor to report at run time
            continue
        if any(getattr(o, "size", 0) > _MAX_FOLD_ELEMENTS for o in outs):
            continue
        control = list(n.control_inputs)
        for p, _ in n.inputs:
            control.extend(c for c in p.control_inputs if c not in control)
        n.type = "Const"
        n.value = list(outs)
        n.inputs = []
        n.control_inputs = control
    return sg


# --- remapping: Conv2D -> bias -> Relu as one _FusedConv2D (Grappler's remapper) -------------
_BIAS_ADDS = ("BiasAdd", "Add", "AddV2")
# convolution type -> (its fused type, the filter's rank); TF has both fused ops
FUSED_CONVS = {"Conv2D": ("_FusedConv2D", 4), "Conv3D": ("_FusedConv3D", 5)}


def _static_shape(node: Node, index: int):
    """The graph's static shape of output `index` of `node` (None when it has no op)."""
    return node.op.outputs[index].shape if node.op is not None else None


def _bias_of(add: Node, conv_at: int) -> Optional[Tuple[Node, int]]:
    """The bias input of `add` (whose input `conv_at` is a convolution) when it adds one
    value per output channel, channels last: a BiasAdd, or an Add of a vector as long as
    the filter's last dimension (so the sum has the convolution's shape)."""
    bias = add.inputs[1 - conv_at]
    if add.type == "BiasAdd":
        return bias if conv_at == 0 and add.attrs.get("data_format", "NHWC") == "NHWC" \
            else None
    conv = add.inputs[conv_at][0]
    shape = _static_shape(*bias)
    filt = _static_shape(*conv.inputs[1])
    if shape is None or filt is None or shape.ndims != 1 or \
            filt.ndims != FUSED_CONVS[conv.type][1]:
        return None
    channels = filt.as_list()[-1]
    return bias if channels is not None and shape.as_list() == [channels] else None


# ops that read only the shape of their input: the shape of a fused chain's output is its
# convolution's, so they may read that instead
_SHAPE_READERS = frozenset({"Shape", "Size", "Rank"})


def fuse_conv_bias_relu(sg: StepGraph, fusable: Callable[[Node], bool]) -> StepGraph:
    """Fuses Conv2D -> bias -> Relu (or Conv2D -> bias) into one _FusedConv2D node, and
    Conv3D's chains into a _FusedConv3D, named and placed as the chain's last node,
    whose kernel adds the bias and applies ReLU while each block of the result is in
    cache (oneDNN's post-ops): two passes over the activations and their two
    intermediate arrays go.

    A chain is fused only where nothing else reads its intermediates (no other data or
    control reader, not fetched or targeted) but ops that read their shape only (the
    gradient of the bias add takes the convolution's shape where the batch size is not
    static), which then read the fused node's (the same shape) and must come after it;
    all of it is on one device, and `fusable(conv)` allows it (float32 channels last on
    a device with the fused kernel). The gradient ops read the convolution's inputs and
    the Relu's output, which stay."""
    readers, control_readers = _readers(sg)
    position = {id(n): k for k, n in enumerate(sg.nodes)}

    def data_readers(n: Node) -> list:
        return [r for r in readers.get((id(n), 0), ()) if r is None or
                r.type not in _SHAPE_READERS]

    def inner(n: Node) -> bool:  # an intermediate the fused node may swallow
        return not n.keep and id(n) not in control_readers and \
            len(data_readers(n)) == 1 and n.n_out == 1

    replaced: Dict[int, Node] = {}  # id(last node of a chain) -> its fused node
    mapping: Dict[Tuple[int, int], Tuple[Node, int]] = {}
    dropped = set()
    for add in sg.nodes:
        if add.type not in _BIAS_ADDS or len(add.inputs) != 2:
            continue
        at = next((k for k, (p, i) in enumerate(add.inputs)
                   if p.type in FUSED_CONVS and i == 0), None)
        if at is None:
            continue
        conv = add.inputs[at][0]
        if not inner(conv) or conv.device is not add.device or not fusable(conv):
            continue
        bias = _bias_of(add, at)
        if bias is None:
            continue
        relu = data_readers(add)[0] if inner(add) else None
        if relu is not None and (relu.type != "Relu" or relu.device is not add.device):
            relu = None
        last = relu or add
        chain = [conv, add] + ([relu] if relu else [])
        if any(position[id(r)] < position[id(last)] for n in chain[:-1]
               for r in readers.get((id(n), 0), ()) if r is not None and r not in chain):
            continue  # a shape reader before the fused node's place
        fused = Node(last.op, FUSED_CONVS[conv.type][0],
                     {**conv.attrs, "num_args": 1, "epsilon": 0.0001, "leakyrelu_alpha": 0.2,
                      "fused_ops": ["BiasAdd", "Relu"] if relu else ["BiasAdd"]},
                     1, last.name, False, last.device)
        fused.inputs = [conv.inputs[0], conv.inputs[1], bias]
        for n in chain:
            fused.control_inputs.extend(c for c in n.control_inputs
                                        if c not in fused.control_inputs)
            mapping[(id(n), 0)] = (fused, 0)
        fused.keep = last.keep
        replaced[id(last)] = fused
        dropped.update(id(n) for n in chain[:-1])
    return _swap_in(sg, replaced, dropped, mapping)


def _swap_in(sg: StepGraph, replaced: Dict[int, Node], dropped: set,
             mapping: Dict[Tuple[int, int], Tuple[Node, int]]) -> StepGraph:
    """`sg` with each fused node in the place of the chain's last node (`replaced`: its
    id -> the fused node), the other nodes of the chains (`dropped` ids) gone, and every
    reader of their outputs reading the fused node's (`mapping`)."""
    if not replaced:
        return sg
    sg.nodes = [replaced.get(id(n), n) for n in sg.nodes if id(n) not in dropped]
    _replace_refs(sg, mapping, {k: [f] for k, f in replaced.items()})
    sg.targets = [replaced.get(id(n), n) for n in sg.targets]
    return sg


def _readers(sg: StepGraph) -> Tuple[Dict[Tuple[int, int], List[Node]], set]:
    """(node id, output) -> its data readers (a fetch counts as a None reader), and the
    ids of nodes some node waits for (control readers)."""
    readers: Dict[Tuple[int, int], List[Node]] = {}
    control_readers = set()
    for n in sg.nodes:
        for p, i in n.inputs:
            readers.setdefault((id(p), i), []).append(n)
        control_readers.update(id(c) for c in n.control_inputs)
    for p, i in sg.fetches:
        readers.setdefault((id(p), i), []).append(None)
    return readers, control_readers


def fuse_batch_norm_relu(sg: StepGraph, fusable: Callable[[Node], bool]) -> StepGraph:
    """Fuses a training FusedBatchNormV3 whose y only a Relu reads, and that Relu, into
    one _FusedBatchNormEx node (activation_mode "Relu"), named and placed as the Relu,
    whose kernel applies ReLU in the normalization's pass (oneDNN's fused ReLU): a pass
    over the activations and an intermediate array go. The batch statistics and
    reserves are the fused node's outputs 1-5, for whatever read them; the gradient
    (ReluGrad of the Relu's output, FusedBatchNormGradV3) is unchanged, as in TF, whose
    remapper fuses the forward ops only on the CPU.

    A pair is fused only where the normalization is not fetched, targeted or waited for,
    both are on one device, and `fusable(bn)` allows it (float32, NHWC or NCHW, on a
    device with the fused kernel)."""
    readers, control_readers = _readers(sg)
    replaced: Dict[int, Node] = {}  # id(Relu) -> its fused node
    mapping: Dict[Tuple[int, int], Tuple[Node, int]] = {}
    dropped = set()
    for relu in sg.nodes:
        if relu.type != "Relu" or len(relu.inputs) != 1:
            continue
        bn, i = relu.inputs[0]
        if bn.type != "FusedBatchNormV3" or i != 0 or bn.keep or id(bn) in control_readers \
                or readers.get((id(bn), 0)) != [relu] or bn.device is not relu.device or \
                not bn.attrs.get("is_training", True) or not fusable(bn):
            continue
        fused = Node(relu.op, "_FusedBatchNormEx",
                     {**bn.attrs, "num_side_inputs": 0, "activation_mode": "Relu"}, 6,
                     relu.name, False, relu.device)
        fused.inputs = list(bn.inputs)
        fused.control_inputs = list(bn.control_inputs) + \
            [c for c in relu.control_inputs if c not in bn.control_inputs]
        fused.keep = relu.keep
        replaced[id(relu)] = fused
        dropped.add(id(bn))
        mapping[(id(relu), 0)] = (fused, 0)
        mapping.update({(id(bn), k): (fused, k) for k in range(1, 6)})
    return _swap_in(sg, replaced, dropped, mapping)


def fuse_count_true(sg: StepGraph, fusable: Callable[[Node], bool]) -> StepGraph:
    """Fuses a Cast of bool whose output only Sums read (one or more: common
    subexpressions merge equal casts), and each of those Sums, into a _CountTrue node
    named and placed as the Sum (ops/math/reduction_ops.py: the counts of True values,
    which are the sums' values). A Cast is fused only where it is not fetched, targeted
    or waited for, its Sums are on its device, and `fusable(cast)` allows it (a type
    the counts are exact in, on a device with the kernel)."""
    readers, control_readers = _readers(sg)
    replaced: Dict[int, Node] = {}  # id(Sum) -> its fused node
    mapping: Dict[Tuple[int, int], Tuple[Node, int]] = {}
    dropped = set()
    for cast in sg.nodes:
        if cast.type != "Cast" or cast.keep or id(cast) in control_readers:
            continue
        sums = readers.get((id(cast), 0), [])
        if not sums or not all(
                total is not None and total.type == "Sum" and len(total.inputs) == 2 and
                total.inputs[0] == (cast, 0) and total.inputs[1] != (cast, 0) and
                total.device is cast.device for total in sums) or not fusable(cast):
            continue
        for total in sums:
            fused = Node(total.op, "_CountTrue",
                         {"T": total.attrs["T"], "Tidx": total.attrs["Tidx"],
                          "keep_dims": total.attrs["keep_dims"]}, 1, total.name, False,
                         total.device)
            fused.inputs = [cast.inputs[0], total.inputs[1]]
            fused.control_inputs = list(cast.control_inputs) + \
                [c for c in total.control_inputs if c not in cast.control_inputs]
            fused.keep = total.keep
            replaced[id(total)] = fused
            mapping[(id(total), 0)] = (fused, 0)
        dropped.add(id(cast))
    return _swap_in(sg, replaced, dropped, mapping)


# elementwise kernels that may write their result into an input array that is a fresh
# result no other node reads (KernelDef.in_place)
_IN_PLACE_OPS = frozenset({"Mul", "AddV2", "Sub", "RealDiv", "Maximum", "Minimum", "Neg",
                           "Square", "Sqrt", "Exp", "Log", "Tanh", "ReluGrad"})
# the inputs an op of _IN_PLACE_OPS may write into where not all (oneDNN's ReLU passes
# write a gradient over the incoming one, never over the features)
_IN_PLACE_INPUTS = {"ReluGrad": (0,)}
# kernels whose output is an array of their own: never a value another node holds, a view
# of one, or a value kept from run to run
_FRESH_OUTPUT_OPS = _IN_PLACE_OPS | {"MatMul", "Relu", "MaxPoolGrad"}
TEMPORARY_VALUE_ATTR = "_value_is_temporary"
IN_PLACE_ATTR = "_overwrite_input"  # (plan.py binds such nodes to KernelDef.in_place)
# below this many values a new array costs no more than writing in place
IN_PLACE_MIN_SIZE = 1 << 15


def mark_temporaries(sg: StepGraph) -> StepGraph:
    """Marks the nodes that may take over an input array, a result of a kernel of
    `_FRESH_OUTPUT_OPS` on their device that no other node reads (nor a fetch), as
    TF's executor forwards such buffers:
      * an AssignVariableOp gets the attr TEMPORARY_VALUE_ATTR: its kernel may keep
        that array as the variable's value, read-only, where it would copy it (TF1
        Adam's sparse update assigns `m * beta1` to its slot before a scatter_add: a
        copy of the whole slot each step);
      * a node of `_IN_PLACE_OPS` gets IN_PLACE_ATTR, the index of such an
        input: its kernel may write its result into that array (TF1 sparse Adam's
        passes over whole slots: a fresh array written is a third more memory traffic
        than the one just read).
    The attrs go on copies of the attrs (they are the graph op's own dicts)."""
    readers, _ = _readers(sg)
    for n in sg.nodes:
        if n.type == "AssignVariableOp" and len(n.inputs) == 2:
            if _sole_fresh_input(n, 1, readers):
                n.attrs = dict(n.attrs, **{TEMPORARY_VALUE_ATTR: True})
        elif n.type in _IN_PLACE_OPS:
            for k in _IN_PLACE_INPUTS.get(n.type, range(len(n.inputs))):
                if _sole_fresh_input(n, k, readers) and not _statically_small(n.inputs[k]):
                    n.attrs = dict(n.attrs, **{IN_PLACE_ATTR: k})
                    break
    return sg


def _statically_small(edge) -> bool:
    """Whether the value of `edge` (a (Node, output) pair) has a fully known static
    shape of fewer than IN_PLACE_MIN_SIZE values: its node keeps its plain kernel, with
    no test per call (a map_fn body of small images calls it thousands of times)."""
    shape = _static_shape(*edge)
    return shape is not None and shape.is_fully_defined() and \
        shape.num_elements() < IN_PLACE_MIN_SIZE


def _sole_fresh_input(n: Node, k: int, readers) -> bool:
    producer, i = n.inputs[k]
    return producer.type in _FRESH_OUTPUT_OPS and producer.device is n.device and \
        readers.get((id(producer), i)) == [n]
