"""Building ops from their declarations: `apply_op` and `convert_to_tensor`.

`apply_op` does for every op what TF's `_apply_op_helper` does: converts Python and
NumPy inputs to tensors with the dtype the op's type attrs call for, infers and checks
type and length attrs, fills attr defaults, creates the Operation under the current
scopes and runs its shape function. A failing shape function leaves the graph as it was.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import op_callbacks as _op_callbacks
from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import Operation, Tensor, _graph_of, get_default_graph
from tensorweave.framework.shapes import Dimension, TensorShape

_constant_builder: Optional[Callable] = None  # set by ops/array/constant_op.py
_conversion_functions: List[tuple] = []  # (type, fn(value, dtype, name, as_ref))


def register_tensor_conversion_function(base_type, conversion_func, priority: int = 100):
    """Registers `conversion_func(value, dtype=None, name=None, as_ref=False)` for
    instances of `base_type` (TF1 `tf.register_tensor_conversion_function`)."""
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda e: e[0])


def _shape_dtype(what: str, dtype, large: bool) -> _dt.DType:
    """The dtype a static shape or dimension converts to: int32, or int64 when a
    dimension does not fit int32; only these two may be asked for (TF's rule)."""
    if dtype is None:
        return _dt.int64 if large else _dt.int32
    dtype = _dt.as_dtype(dtype)
    if dtype not in (_dt.int32, _dt.int64):
        raise TypeError("Cannot convert %s to dtype %s. Allowed dtypes are tf.int32 and "
                        "tf.int64." % (what, dtype))
    if dtype is _dt.int32 and large:
        raise ValueError("Cannot convert %s to dtype int32; a dimension is too large. "
                         "Consider using tf.int64." % what)
    return dtype


def _tensor_shape_to_tensor(s: TensorShape, dtype=None, name=None, as_ref=False):
    """A fully known TensorShape as an int vector constant ("shape_as_tensor")."""
    if not s.is_fully_defined():
        raise ValueError("Cannot convert a partially known TensorShape %s to a Tensor." % s)
    dims = s.as_list()
    dtype = _shape_dtype("TensorShape %s" % s, dtype, any(d >= 2**31 for d in dims))
    return _constant_builder(dims, dtype=dtype, name=name or "shape_as_tensor")


def _dimension_to_tensor(d: Dimension, dtype=None, name=None, as_ref=False):
    """A known Dimension as an int scalar constant ("shape_as_tensor")."""
    if d.value is None:
        raise ValueError("Cannot convert unknown Dimension %s to a Tensor." % d)
    dtype = _shape_dtype("Dimension %s" % d, dtype, False)
    return _constant_builder(d.value, dtype=dtype, name=name or "shape_as_tensor")


register_tensor_conversion_function(TensorShape, _tensor_shape_to_tensor)
register_tensor_conversion_function(Dimension, _dimension_to_tensor)


def convert_to_tensor(value, dtype=None, name: Optional[str] = None,
                      preferred_dtype=None, dtype_hint=None) -> Tensor:
    """Converts Tensors, Variables, NumPy arrays, Python scalars and nested lists to a
    Tensor.

    Args:
      value: the object to convert.
      dtype: if set, the result must have this dtype (Python values are converted to
        it; a Tensor of another dtype raises ValueError).
      name: name of a new Const op, if one is created.
      preferred_dtype: dtype to try when `dtype` is None (falls back silently).

    Returns:
      A Tensor.

    Raises:
      ValueError: a Tensor's dtype differs from `dtype`.
      TypeError: the value cannot be converted.
    """
    if type(value) is Tensor:
        if dtype is not None and value._dtype is not _dt.as_dtype(dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: "
                             "%r" % (_dt.as_dtype(dtype).name, value._dtype.name, value))
        return value
    preferred_dtype = preferred_dtype or dtype_hint
    for _, base, fn in _conversion_functions:
        if isinstance(value, base):
            t = fn(value, dtype=dtype, name=name, as_ref=False)
            if dtype is not None and t.dtype is not _dt.as_dtype(dtype):
                raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype "
                                 "%s: %r" % (_dt.as_dtype(dtype).name, t.dtype.name, value))
            return t
    if isinstance(value, Operation):
        raise TypeError("Can't convert Operation '%s' to Tensor (target dtype=%s, name=%s, "
                        "as_ref=False)" % (value.name, dtype, name))
    if isinstance(value, (list, tuple)) and any(_contains_tensor(v) for v in value):
        return _pack_nested(value, dtype, name)
    if dtype is None and preferred_dtype is not None:
        try:
            return _constant_builder(value, dtype=preferred_dtype, name=name or "Const",
                                     allow_cast=False)
        except (TypeError, ValueError):
            pass
    return _constant_builder(value, dtype=dtype, name=name or "Const", allow_cast=False)


def _contains_tensor(v) -> bool:
    if isinstance(v, Tensor) or hasattr(v, "_as_graph_element"):
        return True
    if isinstance(v, (list, tuple)):
        return any(_contains_tensor(x) for x in v)
    return False


def _pack_nested(value, dtype, name):
    """A nested list holding tensors, stacked (TF's autopacking): of `dtype`, else of the
    first tensor's dtype; a tensor of another dtype, or a Python value that does not
    convert to it, is a TypeError (no implicit cast)."""
    from tensorweave.ops.array import array_ops
    if dtype is None:
        dtype = _first_tensor_dtype(value)
    dtype = _dt.as_dtype(dtype).base_dtype
    items = []
    for v in value:
        if isinstance(v, (list, tuple)):
            items.append(_pack_nested(v, dtype, None) if _contains_tensor(v) else
                         convert_to_tensor(v, dtype=dtype))
        elif _contains_tensor(v):
            t = convert_to_tensor(v)
            if t.dtype.base_dtype != dtype:
                raise TypeError("Cannot convert a list containing a tensor of dtype %s to "
                                "%s (Tensor is: %r)" % (t.dtype, dtype, t))
            items.append(t)
        else:
            items.append(convert_to_tensor(v, dtype=dtype))
    return array_ops.stack(items, name=name or "packed")


def _first_tensor_dtype(value):
    """The dtype of the first tensor in the nested list `value`, depth first."""
    for v in value:
        if isinstance(v, (list, tuple)):
            if _contains_tensor(v):
                return _first_tensor_dtype(v)
        elif _contains_tensor(v):
            return convert_to_tensor(v).dtype.base_dtype
    return None


def _allows(op_def, type_attr: str, dtype) -> bool:
    """Whether the op's type attr `type_attr` takes `dtype`."""
    allowed = getattr(op_def.attrs.get(type_attr), "allowed", None)
    return allowed is None or dtype in allowed


def _dtype_hint(value):
    """The dtype a value will convert to, if it is already tensor-like."""
    if isinstance(value, Tensor):
        return value._dtype
    d = getattr(value, "dtype", None)
    if isinstance(d, _dt.DType) and hasattr(value, "_as_graph_element"):
        return d
    return None


def _array_dtype_hint(value):
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype != object:
        try:
            return _dt.as_dtype(value.dtype)
        except TypeError:
            return None
    return None


def apply_op(op_type: str, inputs: List[Any], attrs: Optional[Dict[str, Any]] = None,
             name: Optional[str] = None) -> Operation:
    """Creates an op of a registered type. See the module docstring.

    Args:
      op_type: registered op type.
      inputs: one entry per declared input (a list for list inputs).
      attrs: attr values; missing ones take their declared defaults.
      name: the op's name (made unique; defaults to the op type).

    Returns:
      The new Operation.

    Raises:
      TypeError: wrong input dtype or missing attr.
      ValueError: incompatible static shapes (from the shape function).
    """
    op_def = _reg.get_op_def(op_type)
    given_attrs = attrs
    # as TF's op wrappers: a type attr given as None is not given (its default applies)
    attrs = dict(attrs) if attrs else {}
    for key in op_def.type_attrs:
        if key in attrs and attrs[key] is None:
            del attrs[key]
    specs = op_def.inputs
    if len(inputs) != len(specs):
        raise TypeError("%s takes %d inputs, got %d" % (op_type, len(specs), len(inputs)))
    # 1. bind type attrs from inputs that already have a dtype: tensors first, then
    # NumPy arrays (whose dtype TF keeps rather than the attr's default, when the attr
    # allows it; else the array is cast to the default, as TF's preferred dtype does:
    # a float64 shape for Reshape becomes int32).
    for hint in (_dtype_hint, _array_dtype_hint):
        for spec, value in zip(specs, inputs):
            ta = spec.type_attr
            if ta is None or ta in attrs:
                continue
            for v in (value if spec.number_attr is not None else (value,)):
                d = hint(v)
                if d is not None:
                    if hint is _array_dtype_hint and not _allows(op_def, ta, d) and \
                            _type_default(op_def, spec) is not None:
                        continue
                    attrs[ta] = d
                    break
    # 2. convert every input. As in TF, Python values become constants named after the
    # argument inside the op's own name scope ("mul/y"), and the op takes the scope name.
    values = [v for spec, value in zip(specs, inputs)
              for v in (value if spec.is_list and isinstance(value, (list, tuple))
                        else [value])]
    g = _graph_of(values)
    scope = _NO_SCOPE
    if any(_dtype_hint(v) is None for v in values):
        if not (name and name.endswith("/")):  # "x/" is a scope the caller already opened
            name = g.unique_name(name or op_type) + "/"
        scope = g.name_scope(name)
    if g is not get_default_graph():  # as TF, an op is built in its inputs' graph
        scope = _within(g, scope)
    with scope:
        try:
            flat = _convert_inputs(op_type, op_def, specs, inputs, attrs)
        except TypeError:
            read = _read_reference_tensors(inputs)
            if read is None:
                raise
            return apply_op(op_type, read, given_attrs, name=name)
    # 3. the container scope, then attr defaults and checks.
    if g._container and "container" in op_def.attrs and not attrs.get("container"):
        attrs["container"] = g._container
    for k, default in op_def.attrs.items():
        if k in attrs:
            continue
        d = default.default if isinstance(default, (_reg.TypeAttr, _reg.TypeListAttr)) \
            else default
        if d is _reg.REQUIRED:
            raise TypeError("Missing required attr '%s' for op %s" % (k, op_type))
        attrs[k] = d
    for k in op_def.type_attrs:
        v = attrs[k]
        if not isinstance(v, _dt.DType):
            attrs[k] = v = _dt.as_dtype(v)
        allowed = op_def.attrs[k].allowed
        if allowed is not None and v not in allowed:
            # a TF1 reference tensor (`g.get_tensor_by_name("w:0")`) used as a value:
            # read its variable, as TF1 dereferences a ref input (off the hot path)
            read = _read_reference_tensors(inputs) if v is _dt.resource else None
            if read is not None:
                return apply_op(op_type, read, given_attrs, name=name)
            raise TypeError("Value passed to parameter '%s' has DataType %s not in list of "
                            "allowed values: %s" % (_param_of(op_def, k), v.name,
                                                    ", ".join(a.name for a in allowed)))
    # 4. outputs.
    return create_op(g, op_type, flat, attrs, op_def, name)


def create_op(g, op_type: str, inputs: List[Tensor], attrs: Dict[str, Any], op_def,
              name: Optional[str]) -> Operation:
    """The op of `op_type` in `g` with converted `inputs` and complete `attrs` (every
    attr set, type attrs as DTypes): its outputs' dtypes from `attrs`, its static
    shapes inferred, then the op callbacks (apply_op's last step, and builders' that
    skip its conversions).

    Raises:
      ValueError: incompatible static shapes (from the shape function).
    """
    op = g._create_op_raw(op_type, inputs, arg_dtypes(op_def.outputs, attrs), attrs, op_def,
                          name)
    infer_shapes(op)
    if _op_callbacks._STATE.callbacks:
        _op_callbacks.invoke(op)
    return op


_NO_SCOPE = contextlib.nullcontext()  # reusable: apply_op enters it for most ops


@contextlib.contextmanager
def _within(g, scope):
    """`g` as the default graph (with its scopes), then `scope`."""
    with g.as_default(), scope:
        yield


def _read_reference_tensors(inputs: list) -> Optional[list]:
    """`inputs` with each handle tensor of a variable made as a TF1 reference variable
    replaced by a read of the variable; None when there is none."""
    from tensorweave.ops.state.variables import variable_of_ref_tensor
    found = False

    def read(v):
        nonlocal found
        var = variable_of_ref_tensor(v)
        if var is None:
            return v
        found = True
        return var.value()
    out = [[read(x) for x in v] if isinstance(v, (list, tuple)) else read(v) for v in inputs]
    return out if found else None


def _convert_inputs(op_type, op_def, specs, inputs, attrs) -> List[Tensor]:
    """Converts each declared input, inferring and checking length and type attrs."""
    flat: List[Tensor] = []
    for spec, value in zip(specs, inputs):
        if spec.number_attr is not None:
            if not isinstance(value, (list, tuple)):
                raise TypeError("Expected list for '%s' argument to '%s' Op, not %r."
                                % (spec.name, op_type, value))
            n = len(value)
            if spec.number_attr in attrs and attrs[spec.number_attr] != n:
                first = next(s.name for s in specs if s.number_attr == spec.number_attr)
                raise ValueError("List argument '%s' to '%s' Op with length %d must match "
                                 "length %d of argument '%s'." % (spec.name, op_type, n,
                                                                  attrs[spec.number_attr],
                                                                  first))
            attrs[spec.number_attr] = n
            want = attrs.get(spec.type_attr) if spec.type_attr else spec.dtype
            ts = [_convert_input(v, want, spec, op_type, _type_default(op_def, spec))
                  for v in value]
            if spec.type_attr:
                _bind_type(attrs, spec.type_attr, ts, spec, op_type, op_def)
            flat.extend(ts)
        elif spec.type_list_attr is not None:
            ts = [convert_to_tensor(v, name=spec.name) for v in value]
            attrs[spec.type_list_attr] = [t.dtype for t in ts]
            flat.extend(ts)
        else:
            want = attrs.get(spec.type_attr) if spec.type_attr else spec.dtype
            t = _convert_input(value, want, spec, op_type, _type_default(op_def, spec))
            if spec.type_attr:
                _bind_type(attrs, spec.type_attr, [t], spec, op_type, op_def)
            flat.append(t)
    return flat


def output_dtypes(op_def, attrs: Dict[str, Any]) -> List[_dt.DType]:
    """The output dtypes of an op of `op_def` with (complete) `attrs`."""
    return arg_dtypes(op_def.outputs, attrs)


def arg_dtypes(specs, attrs: Dict[str, Any]) -> List[_dt.DType]:
    """The dtypes of the flattened args `specs` (an op's inputs or outputs) given the
    op's (complete) `attrs`."""
    out: List[_dt.DType] = []
    for spec in specs:
        if spec.number_attr is not None:
            dt = attrs[spec.type_attr] if spec.type_attr else spec.dtype
            out.extend([_dt.as_dtype(dt)] * attrs[spec.number_attr])
        elif spec.type_list_attr is not None:
            out.extend(_dt.as_dtype(d) for d in attrs[spec.type_list_attr])
        elif spec.type_attr:
            dt = attrs[spec.type_attr]
            # most attrs hold a DType already: as_dtype's dispatch only for the others
            out.append(dt if type(dt) is _dt.DType else _dt.as_dtype(dt))
        else:
            out.append(spec.dtype)
    return out


def infer_shapes(op: Operation) -> None:
    """Runs the op's shape function; on ValueError removes the op and re-raises with the
    op's name, type and input shapes (TF's message form)."""
    fn = op._op_def.shape_fn if op._op_def is not None else None
    if fn is None:
        return
    try:
        shapes = fn(op)
    except ValueError as e:
        _remove_op(op._graph, op)
        raise ValueError("%s for '%s' (op: '%s') with input shapes: %s." % (
            e, op._name, op._type, ", ".join(_shape_str(t.shape) for t in op._inputs))) \
            from None
    if isinstance(shapes, TensorShape):
        op._outputs[0]._shape = shapes
    else:
        for t, s in zip(op._outputs, shapes):
            t._shape = s if isinstance(s, TensorShape) else TensorShape(s)


def _shape_str(s: TensorShape) -> str:
    return "?" if s.ndims is None else "[%s]" % ",".join(
        "?" if d is None else str(d) for d in s.as_list())


def _param_of(op_def, attr):
    for spec in op_def.inputs:
        if spec.type_attr == attr:
            return spec.name
    return attr


def _type_default(op_def, spec):
    """The declared default of the input's type attr: the preferred dtype for Python
    values when no other input fixes the type (as TF's default_type_attr_map)."""
    a = op_def.attrs.get(spec.type_attr) if spec.type_attr else None
    if isinstance(a, _reg.TypeAttr) and a.default is not _reg.REQUIRED:
        return a.default
    return None


def _convert_input(value, want, spec, op_type, preferred=None):
    try:
        return convert_to_tensor(value, dtype=want, name=spec.name,
                                 preferred_dtype=preferred if want is None else None)
    except ValueError as e:
        if value is None:  # TF keeps this one a ValueError
            raise
        if isinstance(value, Tensor) or _dtype_hint(value) is not None:
            raise TypeError("Input '%s' of '%s' Op has type %s that does not match expected "
                            "type of %s." % (spec.name, op_type, _dtype_hint(value).name,
                                             _dt.as_dtype(want).name)) from None
        raise TypeError("Expected %s passed to parameter '%s' of op '%s', got %r of type "
                        "'%s' instead. Error: %s" % (
                            _dt.as_dtype(want).name if want else "a tensor", spec.name,
                            op_type, value, type(value).__name__, e)) from None


def convert_op_input(value, dtype, op_type: str, arg: str,
                     name: Optional[str] = None) -> Tensor:
    """`value` as a Tensor of `dtype` for the input `arg` of an `op_type` op, for builders
    that convert an input before apply_op: a Tensor of another type is a TypeError, as
    TF's generated op wrappers raise (op_def_library), where convert_to_tensor raises
    ValueError."""
    hint = _dtype_hint(value)
    want = _dt.as_dtype(dtype)
    if hint is not None and hint.base_dtype is not want.base_dtype:
        raise TypeError("Input '%s' of '%s' Op has type %s that does not match expected "
                        "type of %s." % (arg, op_type, hint.name, want.name))
    return convert_to_tensor(value, dtype=dtype, name=name)


def _bind_type(attrs, type_attr, tensors, spec, op_type, op_def):
    for t in tensors:
        have = attrs.get(type_attr)
        if have is None:
            attrs[type_attr] = t.dtype
        elif t.dtype is not have:
            first = next(s.name for s in op_def.inputs if s.type_attr == type_attr)
            raise TypeError("Input '%s' of '%s' Op has type %s that does not match type %s of "
                            "argument '%s'." % (spec.name, op_type, t.dtype.name, have.name,
                                                first))


def _remove_op(g, op: Operation) -> None:
    g._ops.remove(op)
    g._ops_by_name.pop(op._name, None)
    for t in op._inputs:
        t._consumers.remove(op)
    for c in op._control_inputs:
        c._control_outputs.remove(op)
    ctx = op._control_flow_context
    if ctx is not None and hasattr(ctx, "remove_op"):
        ctx.remove_op(op)
    g._last_id = len(g._ops)
    g._bump()


def _encode_str(s):
    return s.encode() if isinstance(s, str) else s


# made once: every np.frompyfunc (also inside np.vectorize) leaks a little memory
_ENCODE_STRS = np.frompyfunc(_encode_str, 1, 1)


def as_numpy(value, dtype: _dt.DType):
    """A NumPy array of `value` in `dtype` (strings become object arrays of bytes)."""
    if dtype is _dt.string:
        arr = np.asarray(value, dtype=object)
        if arr.size and not isinstance(arr.flat[0], bytes):
            arr = np.asarray(_ENCODE_STRS(arr), dtype=object)
        return arr
    return np.asarray(value, dtype=dtype.as_numpy_dtype)
