"""`tf.test.assert_equal_graph_def`: two GraphDefs hold the same nodes, in any order.

Messages follow TF's EqualGraphDef (core/util/equal_graph_def.cc): data inputs compare in
order, control inputs (`^name`) as a set.

Attribute values in messages are summarized as TF's SummarizeAttrValue words them:
`"SAME"`, `0.25`, `true`, `DT_FLOAT`, `[2,?]`, `[1, 2, 2, 1]` and, for tensors,
`Tensor<type: float shape: [2] values: 1.5 2>` (at most three values). Complex values
read `(re,im)`, where TF writes `?`.
"""
import numpy as np

_TENSOR_VALUES_SHOWN = 3  # TF's Tensor::DebugString shows this many values
# TF's DataTypeString, where it differs from the dtype's Python name
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _c_escape(data: bytes) -> str:
    """`data` as C source spells it inside quotes (TF's CEscape)."""
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'",
             0x5C: "\\\\"}
    return "".join(named.get(b) or (chr(b) if 0x20 <= b < 0x7F else "\\%03o" % b)
                   for b in data)


def _float_text(value, single: bool) -> str:
    """The shortest of %g with 6 (float) or 15 (double) digits and the full-precision
    form that reads back as `value`, as TF's FloatToBuffer/DoubleToBuffer write it."""
    short, full = (6, 9) if single else (15, 17)
    cast = np.float32 if single else float
    text = "%.*g" % (short, value)
    return text if cast(text) == cast(value) else "%.*g" % (full, value)


def _element_text(value) -> str:
    """One tensor value as TF's PrintOneElement writes it."""
    if isinstance(value, bytes):
        return _c_escape(value)
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (np.complexfloating, complex)):
        single = np.asarray(value).dtype == np.complex64
        return "(%s,%s)" % (_float_text(value.real, single), _float_text(value.imag, single))
    if isinstance(value, (np.floating, float)):
        return _float_text(float(value), np.asarray(value).dtype.itemsize < 8)
    return str(value)


def _values_text(array: np.ndarray) -> str:
    """The first values of `array` with the nesting brackets of the dimensions they
    start, and "..." when some are left out (TF's SummarizeValue)."""
    flat = array.reshape(-1)
    limit = min(_TENSOR_VALUES_SHOWN, flat.size)
    if array.ndim == 0:
        text = " ".join(_element_text(v) for v in flat[:limit])
    else:
        text = _dims_text(array.shape, flat, limit, [0])
    return text + ("..." if flat.size > limit else "")


def _dims_text(shape, flat, limit: int, shown: list, outermost: bool = True) -> str:
    """The values of one dimension; `shown` counts the values written so far. A row
    cut short inside an outer dimension ends in "...", as in TF."""
    parts = []
    if len(shape) == 1:
        for i in range(shape[0]):
            if shown[0] >= limit:
                return " ".join(parts) + ("" if outermost else "...")
            parts.append(_element_text(flat[shown[0]]))
            shown[0] += 1
        return " ".join(parts)
    for _ in range(shape[0]):
        if shown[0] >= limit:
            break
        parts.append("[" + _dims_text(shape[1:], flat, limit, shown, False) + "]")
    return "".join(parts)


def _type_text(enum_value: int) -> str:
    """The DataType enum's name ("DT_FLOAT"), as TF prints a type attribute."""
    from tensorboard.compat.proto import types_pb2  # the protos GraphDefs are made of
    return types_pb2.DataType.Name(enum_value)


def _shape_text(shape) -> str:
    if shape.unknown_rank:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d.size < 0 else str(d.size) for d in shape.dim)


def _tensor_text(proto) -> str:
    from tensorweave.framework.dtypes import as_dtype
    from tensorweave.ops.array.array_shape_ops import make_ndarray
    name = as_dtype(proto.dtype).name
    return "Tensor<type: %s shape: %s values: %s>" % (
        _TF_TYPE_NAMES.get(name, name), _shape_text(proto.tensor_shape),
        _values_text(make_ndarray(proto)))


def _func_text(func) -> str:
    if not func.attr:
        return func.name
    return "%s[%s]" % (func.name, ", ".join(
        "%s=%s" % (k, _attr_text(func.attr[k])) for k in sorted(func.attr)))


# how one entry of each AttrValue field reads (the list fields use the same names)
_FIELD_TEXT = {
    "s": lambda v: '"%s"' % _c_escape(v),
    "i": str,
    "f": lambda v: _float_text(v, True),
    "b": lambda v: "true" if v else "false",
    "type": _type_text,
    "shape": _shape_text,
    "tensor": _tensor_text,
    "func": _func_text,
}


def _attr_text(value) -> str:
    """An AttrValue as TF's SummarizeAttrValue writes it."""
    kind = value.WhichOneof("value")
    if kind == "list":
        items = [_FIELD_TEXT[field](v) for field in _FIELD_TEXT
                 for v in getattr(value.list, field)]
        return "[%s]" % ", ".join(items)
    if kind == "placeholder":
        return "$" + value.placeholder
    if kind is None:
        return "<Unknown AttrValue type>"
    return _FIELD_TEXT[kind](getattr(value, kind))


def _summarize(node) -> str:
    return "%s = %s[...](%s)" % (node.name, node.op, ", ".join(node.input))


def _node_diff(actual, expected):
    name = actual.name
    if actual.op != expected.op:
        return "Node named '%s' has op '%s' that is not expected '%s'" % (
            name, actual.op, expected.op)
    if actual.device != expected.device:
        return "Node named '%s' has device '%s' that is not expected '%s'" % (
            name, actual.device, expected.device)

    def split(inputs):
        data = [i for i in inputs if not i.startswith("^")]
        return data, sorted(i for i in inputs if i.startswith("^"))
    if split(actual.input) != split(expected.input):
        return "Node named '%s' has inputs '%s' that don't match expected '%s'" % (
            name, ", ".join(actual.input), ", ".join(expected.input))
    for key in sorted(actual.attr):
        value = actual.attr[key]
        if key not in expected.attr:
            return "Node named '%s' has unexpected attr '%s' with value: %s" % (
                name, key, _attr_text(value))
        if value != expected.attr[key]:
            return ("Node named '%s' has attr '%s' with value: %s that does not match "
                    "expected: %s" % (name, key, _attr_text(value),
                                      _attr_text(expected.attr[key])))
    for key in sorted(expected.attr):
        if key not in actual.attr:
            return "Node named '%s' missing expected attr '%s' with value: %s" % (
                name, key, _attr_text(expected.attr[key]))
    return None


def graph_def_diff(actual, expected):
    """The first difference between two GraphDefs as TF words it, or None."""
    expected_nodes = {node.name: node for node in expected.node}
    for node in actual.node:
        other = expected_nodes.pop(node.name, None)
        if other is None:
            return "Found unexpected node '%s' not in expected graph" % _summarize(node)
        diff = _node_diff(node, other)
        if diff:
            return diff
    for node in expected_nodes.values():
        return "Did not find expected node '%s' in actual graph" % _summarize(node)
    return None


def assert_equal_graph_def(actual, expected, checkpoint_v2=False,
                           hash_table_shared_name=False):
    """Raises AssertionError naming the first difference between two GraphDefs.

    checkpoint_v2 and hash_table_shared_name are accepted for TF1 compatibility; the
    graphs tensorweave writes hold no temporary save paths or generated table names.
    """
    for arg, arg_name in ((actual, "actual"), (expected, "expected")):
        if type(arg).__name__ != "GraphDef" or not hasattr(arg, "node"):
            raise TypeError("Expected tf.GraphDef for %s, got %s" % (
                arg_name, type(arg).__name__))
    diff = graph_def_diff(actual, expected)
    if diff:
        raise AssertionError(diff)
