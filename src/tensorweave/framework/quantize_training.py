"""`tf.train.do_quantize_training_on_graphdef`: TF's quantize-training GraphDef rewrite.

As TF's (core/common_runtime/quantize_training.cc, DoQuantizeTraining, which TF's Python
wrapper runs with QuantizeAndDequantizeV2), each data input of the forward MatMul and
Conv2D nodes (those whose name does not start with "gradients") is replaced by a
QuantizeAndDequantizeV2 of it (range_given; signed_input unless the source is a Relu,
Relu6 or Sigmoid), made once per source node S and named after it. Its range is

  - where S's op bounds its output (Relu6 [0, 6], Sigmoid [0, 1], Tanh [-1, 1]): the
    Consts S/InputMin and S/InputMax;
  - else estimated: S/Min and S/Max reduce S over all its axes (S/ReductionAxes/...),
    and for each, a float32 VariableV2 S/Min/Variable takes the batch value on the
    first step (S/Min/IsInitialized, S/Min/Switch) and then its exponential moving
    average with decay 0.999 (S/Decay, S/Min/EMA/...), through S/Min/Merge into the
    Assign S/Min/AssignValue, whose output is the range QuantizeAndDequantizeV2 uses.

The moving-average variables join the graph's Saver (its one SaveV2 and restore_all):
a RestoreV2 and an Assign each, and the SaveV2 rebuilt with them (moved last, with its
data inputs only, as TF's rebuild). Nodes keep their order and the new ones follow;
control inputs are deduplicated and sorted, as TF's Graph::ToGraphDef writes them.

As in TF, the value quantized is output 0 of the source node (TF's rewrite takes the
node, not the tensor), and at most two inputs may come from ops whose range is unknown:
ops other than Const, variables, the activations above, and Identity, Reshape,
ConcatV2 and pooling ops over one of those. TF 2.x counts ReadVariableOp as unknown; a
read of a TF1 reference variable (REF_VARIABLE_ATTR: what tf.Variable makes here) counts
as the variable it is in TF1, so a TF1 model reading several variables rewrites here as
it does in TF1. Default attrs are not added to the input's own nodes (TF's
ConvertGraphDefToGraph adds them; tensorweave's importer fills them in the same way).

Errors are those of TF's wrapper, which raises built-in exceptions: AttributeError for
an `input_graph` with no SerializeToString, TypeError for a `num_bits` that is not a
32-bit integer, IndexError for one outside [1, 63], NotImplementedError for too many
inputs of unknown range, ValueError for a malformed graph or an input that is not
float32, RuntimeError for an op type not registered.
"""
from __future__ import annotations

import functools
import logging
import operator
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors as _errors
from tensorweave.framework import graph_def_proto as _gp
from tensorweave.framework import serialize as _ser
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR, REF_VARIABLE_OPS
from tensorweave.framework.shapes import TensorShape

_log = logging.getLogger("tensorflow")

_QUANTIZED_OPS = frozenset(("MatMul", "Conv2D"))
_GRADIENT_PREFIX = "gradients"  # TF's test for a node of the backward pass
_MAX_UNKNOWN_INPUTS = 2
_EMA_DECAY = 0.999
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


class _Range(NamedTuple):
    """What is known of one quantized input's range: whether it is `signed`, and its
    (min, max) `bounds` where its source op fixes them (else moving averages find it)."""
    signed: bool
    bounds: Optional[Tuple[float, float]] = None


_SIGNED_UNBOUNDED = _Range(True)
_STORED_OPS = frozenset(("Const", "Variable", "VariableV2"))
_ACTIVATION_RANGES = {"Relu": _Range(False), "Relu6": _Range(False, (0.0, 6.0)),
                      "Sigmoid": _Range(False, (0.0, 1.0)),
                      "Tanh": _Range(True, (-1.0, 1.0))}
# ops whose range is their first input's, and ops with one data input that keep its range
_FIRST_INPUT_OPS = frozenset(("Reshape", "ConcatV2"))
_ONE_INPUT_OPS = frozenset(("Identity", "MaxPool", "AvgPool", "MaxPool3D", "AvgPool3D"))


class _Target(NamedTuple):
    """One data input to quantize: `node.input[index]`, from node `source`."""
    node: object  # the MatMul / Conv2D NodeDef message
    index: int
    source: str
    range: _Range


@tf_export("train.do_quantize_training_on_graphdef")
def do_quantize_training_on_graphdef(input_graph, num_bits: int):
    """Rewrites a GraphDef for quantized training: the inputs of its forward MatMul and
    Conv2D nodes pass through QuantizeAndDequantizeV2, with their ranges fixed by their
    source op or tracked by moving-average variables (see the module docstring).

    Args:
      input_graph: a `GraphDef` (TF's protobuf message, or ours).
      num_bits: the number of bits of the quantized values, in [1, 63].

    Returns:
      A new `GraphDef` message; `input_graph` is unchanged.

    Raises:
      AttributeError: `input_graph` has no `SerializeToString` (it is not a GraphDef).
      TypeError: `num_bits` is not a 32-bit integer.
      IndexError: `num_bits` is outside [1, 63].
      NotImplementedError: more than two quantized inputs come from ops of unknown range.
      ValueError: a malformed graph (an input naming no node, ...), a quantized input
        that is not float32, several SaveV2 ops, or a SaveV2 with no restore_all.
      RuntimeError: an op type that is not registered.
    """
    _warn_deprecated()
    graph_def = _graph_def_message(input_graph)
    num_bits = _checked_num_bits(num_bits)
    nodes = {n.name: n for n in graph_def.node}
    dtype_of = _output_dtypes(graph_def, nodes)
    if not 1 <= num_bits <= 63:
        raise IndexError("num_bits should be in range [1, 63] but is: %d" % num_bits)
    targets = _targets(graph_def, nodes)
    variables = _quantize_targets(graph_def, targets, num_bits, dtype_of)
    _add_to_saver(graph_def, nodes, variables)
    for node in graph_def.node:
        _write_inputs_as_tf(node)
    graph_def.library.SetInParent()  # (TF's result always has one, maybe empty)
    return graph_def


@functools.lru_cache(maxsize=None)
def _warn_deprecated() -> None:
    """Logs TF's deprecation notice, once."""
    _log.warning("From do_quantize_training_on_graphdef: (from tensorflow.python.training."
                 "quantize_training) is deprecated and will be removed in a future "
                 "version.\nInstructions for updating:\nGraphDef quantized training "
                 "rewriter is deprecated in the long term.")


def _graph_def_message(input_graph):
    """A new GraphDef message (of `input_graph`'s class if it is one) holding it."""
    data = input_graph.SerializeToString()  # TF's AttributeError for a non-GraphDef
    if _gp.is_graph_def_proto(input_graph):
        message = type(input_graph)()
        message.ParseFromString(data)
        return message
    try:
        return _gp.graph_def_to_proto(_gp.parse_graph_def(data))
    except ValueError:
        raise ValueError("input_graph_string is not a serialized GraphDef protocol "
                         "buffer") from None


def _checked_num_bits(num_bits) -> int:
    """`num_bits` as an int: what TF's binding accepts (an integer that fits in int32)."""
    try:
        value = operator.index(num_bits)
    except TypeError:
        value = None
    if value is None or not _INT32_MIN <= value <= _INT32_MAX:
        raise TypeError("do_quantize_training_on_graphdef(): num_bits must be a 32-bit "
                        "integer, got %r of type %s" % (num_bits, type(num_bits).__name__))
    return value


# TF's binding raises these built-in exceptions for the codes of the errors it passes on
_BUILTIN_ERRORS = {_errors.INVALID_ARGUMENT: ValueError, _errors.OUT_OF_RANGE: IndexError,
                   _errors.UNIMPLEMENTED: NotImplementedError}


def _output_dtypes(graph_def, nodes) -> Callable[[str], _dt.DType]:
    """Checks `graph_def` by importing it into a scratch graph, as TF checks it by making
    its Graph, and gives the dtype of a node's output 0 (a reference variable's value
    dtype, which NodeBuilder gives a QuantizeAndDequantizeV2 of it)."""
    try:
        graph = _gp.graph_from_proto(graph_def)
    except _errors.OpError as e:
        raise _BUILTIN_ERRORS.get(e.error_code, RuntimeError)(e.message) from None

    def dtype_of(name: str) -> _dt.DType:
        if nodes[name].op in REF_VARIABLE_OPS:
            return _gp.dtype_from_enum(nodes[name].attr["dtype"].type)
        return graph.get_operation_by_name(name).outputs[0].dtype
    return dtype_of


# --- which inputs, and what is known of their ranges --------------------------------------
def _data_sources(node) -> List[str]:
    """The source node of each data input of `node`, in input order."""
    return [_ser.parse_input(s)[0] for s in node.input if not s.startswith("^")]


def _is_ref_variable_read(node, nodes) -> bool:
    """Whether `node` reads a variable made as a TF1 reference variable, which TF1's
    graph reads through an Identity of its VariableV2."""
    if node.op != "ReadVariableOp" or not node.input:
        return False
    handle = nodes.get(_ser.parse_input(node.input[0])[0])
    if handle is None or handle.op != "VarHandleOp":
        return False
    flag = handle.attr.get(REF_VARIABLE_ATTR)
    return flag is not None and flag.b


def _source_range(name: str, nodes) -> Tuple[_Range, bool]:
    """(what is known of the range of node `name`'s output, whether its op is known),
    as TF's FindType: pass-through ops are known whatever their input is."""
    node = nodes[name]
    if node.op in _STORED_OPS or _is_ref_variable_read(node, nodes):
        return _SIGNED_UNBOUNDED, True
    if node.op in _ACTIVATION_RANGES:
        return _ACTIVATION_RANGES[node.op], True
    if node.op in _FIRST_INPUT_OPS or node.op in _ONE_INPUT_OPS:
        found = _Range(False)  # (TF's starting values, kept if no data input is found)
        sources = _data_sources(node)
        for source in sources[:1] if node.op in _FIRST_INPUT_OPS else sources:
            found = _source_range(source, nodes)[0]
        return found, True
    return _SIGNED_UNBOUNDED, False


def _targets(graph_def, nodes) -> List[_Target]:
    """The data inputs of the forward MatMul and Conv2D nodes, in node and input order.

    Raises:
      NotImplementedError: more than two come from ops of unknown range (TF counts
        inputs, not source nodes).
    """
    targets, unknown = [], 0
    for node in graph_def.node:
        if node.op not in _QUANTIZED_OPS or node.name.startswith(_GRADIENT_PREFIX):
            continue
        for index, tensor in enumerate(node.input):
            if tensor.startswith("^"):
                continue
            source = _ser.parse_input(tensor)[0]
            source_range, known = _source_range(source, nodes)
            if not known:
                unknown += 1
                if unknown > _MAX_UNKNOWN_INPUTS:
                    raise NotImplementedError(
                        "Found an unknown op: %s with type: %s; Unknown ops are considered "
                        "as model input for now and only %d inputs are supported currently."
                        % (source, nodes[source].op, _MAX_UNKNOWN_INPUTS))
            targets.append(_Target(node, index, source, source_range))
    return targets


# --- the nodes the rewrite adds ----------------------------------------------------------
def _add_node(graph_def, name: str, op: str, inputs=(), **attrs) -> str:
    """Appends a node to `graph_def`; returns its name."""
    _gp.node_def_to_proto(_ser.NodeDef(name, op, list(inputs), attr=attrs),
                          graph_def.node.add())
    return name


def _add_scalar(graph_def, name: str, value, dtype: _dt.DType) -> str:
    return _add_node(graph_def, name, "Const", dtype=dtype,
                     value=np.array(value, dtype.as_numpy_dtype))


def _quantize_targets(graph_def, targets: List[_Target], num_bits: int,
                      dtype_of: Callable[[str], _dt.DType]) -> List[str]:
    """Rewires each target to a QuantizeAndDequantizeV2 of its source (one per source
    node); returns the names of the moving-average variables made."""
    quantized: Dict[str, str] = {}  # source node -> its QuantizeAndDequantizeV2
    variables: List[str] = []
    for t in targets:
        if t.source not in quantized:
            _check_float32(t, dtype_of(t.source))
            quantized[t.source] = _add_quantize(graph_def, t, num_bits, variables)
        t.node.input[t.index] = quantized[t.source]
    return variables


def _check_float32(target: _Target, dtype: _dt.DType) -> None:
    """Raises TF's ValueError where a quantized input is not float32, which the float32
    range nodes (constants or moving-average variables) it is paired with require."""
    if dtype == _dt.float32:
        return
    have = "DT_" + _dt.type_string(dtype).upper()
    if target.range.bounds is not None:
        raise ValueError("Inconsistent values for attr 'T' %s vs. DT_FLOAT while building "
                         "NodeDef '%s/QuantizeAndDequantizeV2': its input_min and input_max "
                         "are float32" % (have, target.source))
    raise ValueError("Inconsistent values for attr 'T' DT_FLOAT vs. %s while building "
                     "NodeDef '%s/Min/EMA/ValueDiff': the moving-average range variables "
                     "are float32" % (have, target.source))


def _add_quantize(graph_def, target: _Target, num_bits: int, variables: List[str]) -> str:
    """Adds the QuantizeAndDequantizeV2 of `target.source`, and its range's nodes."""
    prefix = target.source
    if target.range.bounds is not None:
        low, high = target.range.bounds
        range_min = _add_scalar(graph_def, prefix + "/InputMin", low, _dt.float32)
        range_max = _add_scalar(graph_def, prefix + "/InputMax", high, _dt.float32)
    else:
        range_min, range_max = _add_moving_range(graph_def, prefix, variables)
    return _add_node(graph_def, prefix + "/QuantizeAndDequantizeV2", "QuantizeAndDequantizeV2",
                     [prefix, range_min, range_max], T=_dt.float32, axis=-1,
                     narrow_range=False, num_bits=num_bits, range_given=True,
                     round_mode="HALF_TO_EVEN", signed_input=target.range.signed)


def _add_moving_range(graph_def, source: str, variables: List[str]) -> Tuple[str, str]:
    """Adds the batch min and max of `source` (over all its axes) and the variables that
    track their moving averages; returns the nodes giving the updated (min, max)."""
    decay = _add_scalar(graph_def, source + "/Decay", _EMA_DECAY, _dt.float32)
    axes = source + "/ReductionAxes"
    start = _add_scalar(graph_def, axes + "/RangeStart", 0, _dt.int32)
    delta = _add_scalar(graph_def, axes + "/RangeDelta", 1, _dt.int32)
    rank = _add_node(graph_def, axes + "/InputRank", "Rank", [source], T=_dt.float32)
    axes = _add_node(graph_def, axes + "/ReductionAxes", "Range", [start, rank, delta],
                     Tidx=_dt.int32)
    batch = [_add_node(graph_def, source + "/" + op, op, [source, axes], T=_dt.float32,
                       Tidx=_dt.int32, keep_dims=False) for op in ("Min", "Max")]
    return tuple(_add_moving_average(graph_def, name, decay, variables) for name in batch)


def _add_moving_average(graph_def, value: str, decay: str, variables: List[str]) -> str:
    """Adds the variable "<value>/Variable" holding the moving average of node `value`:
    assigned `value` itself while uninitialized, else var - (var - value) * (1 - decay).
    Returns the Assign node, whose output is the new average."""
    f32 = _dt.float32
    var = _add_node(graph_def, value + "/Variable", "VariableV2", container="", dtype=f32,
                    shape=TensorShape([]), shared_name="")
    variables.append(var)
    ready = _add_node(graph_def, value + "/IsInitialized", "IsVariableInitialized", [var],
                      dtype=f32)
    switch = _add_node(graph_def, value + "/Switch", "Switch", [value, ready], T=f32)
    ema = value + "/EMA"
    one = _add_scalar(graph_def, ema + "/OneConst", 1.0, f32)
    keep = _add_node(graph_def, ema + "/DecayComplement", "Sub", [one, decay], T=f32)
    diff = _add_node(graph_def, ema + "/ValueDiff", "Sub", [var, switch + ":1"], T=f32)
    step = _add_node(graph_def, ema + "/UpdateValue", "Mul", [diff, keep], T=f32)
    average = _add_node(graph_def, ema + "/EMAValue", "Sub", [var, step], T=f32)
    merged = _add_node(graph_def, value + "/Merge", "Merge", [switch, average], N=2, T=f32)
    return _add_node(graph_def, value + "/AssignValue", "Assign", [var, merged], T=f32,
                     use_locking=True, validate_shape=True)


# --- the Saver ---------------------------------------------------------------------------
def _add_to_saver(graph_def, nodes, variables: List[str]) -> None:
    """Makes the graph's Saver save and restore `variables`, as TF's AddSaveAndRestore
    (which runs, and rebuilds the SaveV2, even when there are none).

    Raises:
      ValueError: several SaveV2 nodes, or none named "<scope>/restore_all" next to it.
    """
    saves = [i for i, n in enumerate(graph_def.node) if n.op == "SaveV2"]
    if not saves:
        return
    if len(saves) > 1:
        raise ValueError("Input graph has multiple SaveV2 ops.")
    save = graph_def.node[saves[0]]
    scope = save.name[:save.name.rfind("/")] if "/" in save.name else save.name
    restore_all = nodes.get(scope + "/restore_all")
    if restore_all is None:
        raise ValueError("graph has SaveOp, but no restore_all NoOp")
    # TF's rebuild takes each input's node, so output 0 of it
    inputs = _data_sources(save)
    _add_restores(graph_def, scope, inputs[0], variables, restore_all)
    _append_strings(nodes[inputs[1]], variables)  # tensor_names
    _append_strings(nodes[inputs[2]], [""] * len(variables))  # shape_and_slices
    dtypes = [_gp.dtype_from_enum(t) for t in save.attr["dtypes"].list.type]
    dtypes += [_dt.float32] * len(variables)
    name = save.name
    del graph_def.node[saves[0]]
    _add_node(graph_def, name, "SaveV2", inputs + variables, dtypes=dtypes)


def _add_restores(graph_def, scope: str, prefix: str, variables: List[str],
                  restore_all) -> None:
    """Adds a RestoreV2 and an Assign for each variable, run by `restore_all`; named as
    TF's Graph::NewName names them, one counter for both."""
    for i, var in enumerate(variables):
        restore = "%s/RestoreV2/_%d_qt" % (scope, 2 * i)
        names = _add_node(graph_def, restore + "/tensor_names", "Const", dtype=_dt.string,
                          value=np.array([var.encode()], object))
        slices = _add_node(graph_def, restore + "/shape_and_slices", "Const",
                           dtype=_dt.string, value=np.array([b""], object))
        _add_node(graph_def, restore, "RestoreV2", [prefix, names, slices],
                  dtypes=[_dt.float32])
        assign = _add_node(graph_def, "%s/Assign/_%d_qt" % (scope, 2 * i + 1), "Assign",
                           [var, restore], T=_dt.float32, use_locking=True,
                           validate_shape=True)
        restore_all.input.append("^" + assign)


def _append_strings(const, strings: List[str]) -> None:
    """Appends `strings` to the 1-D string tensor of the Const node `const`.

    Raises:
      RuntimeError: `const` has no "value" attr (TF's NotFound status).
    """
    if "value" not in const.attr:
        raise RuntimeError("No attr named 'value' in NodeDef: {{node %s}}" % const.name)
    value = const.attr["value"]
    old = list(_gp.tensor_proto_to_array(value.tensor).reshape(-1))
    value.Clear()
    _gp.attr_to_proto(np.array(old + [s.encode() for s in strings], object), value)


def _write_inputs_as_tf(node) -> None:
    """Rewrites `node`'s inputs as TF's Graph::ToGraphDef writes them: "op" for output 0,
    then the control inputs without repeats, sorted by name."""
    data, controls = [], set()
    for s in node.input:
        if s.startswith("^"):
            controls.add(s)
        else:
            name, index = _ser.parse_input(s)
            data.append(name if index == 0 else s)
    del node.input[:]
    node.input.extend(data + sorted(controls))
