"""`tf.raw_ops`: every registered op as a function of keyword arguments.

`tf.raw_ops.MatMul(a=x, b=y, transpose_b=True)` adds one op of the type with exactly
the inputs and attrs given, as TF's generated wrappers do: the arguments are the op's
inputs and the attrs that are not inferred from the inputs' dtypes and list lengths,
spelled as TF's Python API spells them (`axis` for the reduction indices of `Sum`).
The functions are made from the op registry on first use, so an op family needs no
code here; `dir(tf.raw_ops)` lists the public op types.
"""
from __future__ import annotations

import collections
from typing import Any, Callable, Dict, List

from tensorweave.framework import registry as _registry
from tensorweave.framework.op_builder import apply_op as _apply_op

# Where TF's Python name of an input or attr differs from its OpDef name (TF's api_defs):
# op type -> {python name: OpDef name}.
_PYTHON_NAMES: Dict[str, Dict[str, str]] = {
    "Split": {"axis": "split_dim"},
    "SplitV": {"axis": "split_dim"},
    "ExpandDims": {"axis": "dim"},
    "Squeeze": {"axis": "squeeze_dims"},
    "Where": {"condition": "input"},
    "Select": {"x": "t", "y": "e"},
    "Conj": {"input": "x"},
    "NextAfter": {"x1": "x", "x2": "y"},
    "EluGrad": {"outputs": "features"},
    "SeluGrad": {"outputs": "features"},
    "StringToHashBucket": {"string_tensor": "input"},
}
for _reduction in ("Sum", "Mean", "Prod", "Max", "Min", "Any", "All"):
    _PYTHON_NAMES[_reduction] = {"axis": "reduction_indices"}

# Attrs newer TensorFlow versions added, accepted at the value that means the behaviour
# implemented here; another value is refused by name.
_LATER_ATTRS: Dict[str, Any] = {
    "bad_indices_policy": "", "debug_name": "", "grad_a": False, "grad_b": False,
    "grad_x": False, "grad_y": False, "sparse_gradient": False,
}


def _inferred_attrs(op_def) -> set:
    """The attrs TF infers from the inputs (their dtypes and list lengths)."""
    inferred = set()
    for arg in op_def.inputs:
        inferred.update(a for a in (arg.type_attr, arg.number_attr, arg.type_list_attr)
                        if a is not None)
    return inferred


def _output_structure(op, op_def):
    """The op's outputs as TF's wrapper returns them: the Operation when there are none,
    the tensor (or list) when there is one output argument, else a namedtuple of them."""
    values, start = [], 0
    for arg in op_def.outputs:
        if arg.number_attr is not None:
            count = op.get_attr(arg.number_attr)
        elif arg.type_list_attr is not None:
            count = len(op.get_attr(arg.type_list_attr))
        else:
            values.append(op.outputs[start])
            start += 1
            continue
        values.append(list(op.outputs[start:start + count]))
        start += count
    if not values:
        return op
    if len(values) == 1:
        return values[0]
    return collections.namedtuple(op_def.name, [a.name for a in op_def.outputs])(*values)


def _make(op_type: str) -> Callable:
    op_def = _registry.get_op_def(op_type)
    to_opdef = _PYTHON_NAMES.get(op_type, {})
    from_opdef = {v: k for k, v in to_opdef.items()}
    input_names = [from_opdef.get(a.name, a.name) for a in op_def.inputs]
    inferred = _inferred_attrs(op_def)
    attr_names = [from_opdef.get(n, n) for n in op_def.attrs if n not in inferred
                  and not n.startswith("_")]
    keys = input_names + attr_names + ["name"]

    def raw_op(*args, **kwargs):
        if args:
            raise TypeError("%s only takes keyword args (possible keys: %s). Please pass "
                            "these args as kwargs instead." % (op_type, keys))
        name = kwargs.pop("name", None)
        for later, default in _LATER_ATTRS.items():
            if later in kwargs:
                value = kwargs.pop(later)
                if value != default:
                    raise ValueError("%s: attr %s=%r is not supported (only %r)"
                                     % (op_type, later, value, default))
        unknown = sorted(set(kwargs) - set(keys))
        if unknown:
            raise TypeError("%s got unexpected keyword arguments: %s (possible keys: %s)"
                            % (op_type, ", ".join(unknown), keys))
        missing = [n for n in input_names if n not in kwargs]
        if missing:
            raise TypeError("%s missing required arguments: %s" % (op_type, ", ".join(missing)))
        inputs: List[Any] = [kwargs.pop(n) for n in input_names]
        attrs = {to_opdef.get(k, k): v for k, v in kwargs.items()}
        op = _apply_op(op_type, inputs, attrs=attrs, name=name or op_type)
        return _output_structure(op, op_def)

    raw_op.__name__ = raw_op.__qualname__ = op_type
    raw_op.__doc__ = "The %s op (keyword arguments: %s)." % (op_type, ", ".join(keys))
    return raw_op


def __getattr__(name: str) -> Callable:
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        fn = _make(name)
    except ValueError:
        raise AttributeError("module 'tf.raw_ops' has no attribute %r" % name) from None
    globals()[name] = fn
    return fn


def __dir__() -> List[str]:
    return sorted(n for n in _registry.registered_ops() if not n.startswith("_"))
