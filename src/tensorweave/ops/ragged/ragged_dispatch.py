"""The public ops that accept RaggedTensors (TF's ragged dispatch), as one table.

Each row names public ops and how a RaggedTensor argument is handled: elementwise ops
run on `flat_values` and keep the row partition, reductions go to
ragged_reduction_ops, concat and stack to ragged_array_ops, gather, where, tile and the
other array ops (and the unsorted segment ops) to ragged_array_dispatch, split and reshape
to ragged_split_ops, matmul to ragged_matmul, strings.reduce_join to
ragged_reduction_ops (tf.stop_gradient, imported directly by the package, reaches the
flat values through RaggedTensor._stop_gradient_for). The exported function is
replaced by a wrapper (api_export.replace_exports) that calls the original whenever no
RaggedTensor is among the arguments, so dense programs see no change but one check.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from tensorweave.framework import api_export
from tensorweave.ops.ragged import ragged_array_dispatch, ragged_matmul, ragged_split_ops
from tensorweave.ops.ragged.ragged_array_ops import ragged_concat, ragged_stack
from tensorweave.ops.ragged.ragged_math_ops import elementwise_binary
from tensorweave.ops.ragged.ragged_reduction_ops import reduce as ragged_reduce, reduce_join
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor

UNARY = ("abs", "negative", "sign", "square", "sqrt", "rsqrt", "exp", "math.expm1", "log",
         "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "math.erf", "floor", "ceil",
         "round", "reciprocal", "logical_not", "cast", "saturate_cast", "is_nan",
         "is_finite", "is_inf", "zeros_like", "ones_like", "clip_by_value",
         "to_float", "to_double", "to_int32", "to_int64", "nn.relu", "nn.relu6",
         "nn.elu", "nn.selu", "math.softplus", "nn.softsign", "strings.length",
         "strings.substr", "string_to_number", "as_string", "strings.regex_replace",
         "strings.to_number", "strings.strip", "math.imag", "math.real", "conj",
         "one_hot", "nn.dropout", "bitcast")
BINARY = ("add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod",
          "realdiv", "pow", "maximum", "minimum", "squared_difference", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
          "logical_or", "logical_xor", "math.divide_no_nan", "math.xdivy", "atan2")
SEGMENT_OPS = ("math.unsorted_segment_sum", "math.unsorted_segment_prod",
               "math.unsorted_segment_max", "math.unsorted_segment_min",
               "math.unsorted_segment_mean", "math.unsorted_segment_sqrt_n")
REDUCTIONS = {"reduce_sum": "sum", "reduce_prod": "prod", "reduce_max": "max",
              "reduce_min": "min", "reduce_mean": "mean", "reduce_any": "any",
              "reduce_all": "all"}


def _any_ragged(args, kwargs) -> bool:
    """Whether a RaggedTensor is among the arguments or in a list or tuple of them
    (concat's and stack's `values`): the check a dense call pays, before any binding."""
    for a in args:
        if isinstance(a, RaggedTensor) or type(a) in (list, tuple) and any(
                isinstance(v, RaggedTensor) for v in a):
            return True
    return bool(kwargs) and _any_ragged(tuple(kwargs.values()), None)


@functools.lru_cache(maxsize=None)
def _signature(fn: Callable) -> inspect.Signature:
    """`fn`'s signature, read on the first ragged call (not at import)."""
    return inspect.signature(fn)


def _unary(original: Callable) -> Callable:
    @functools.wraps(original)
    def op(*args, **kwargs):
        first = None if args else next(iter(_signature(original).parameters))
        x = args[0] if args else kwargs.get(first)
        if not isinstance(x, RaggedTensor):
            return original(*args, **kwargs)
        if args:
            args = (x.flat_values,) + args[1:]
        else:
            kwargs = dict(kwargs, **{first: x.flat_values})
        return x.with_flat_values(original(*args, **kwargs))
    return op


def _bound(original: Callable, on_ragged: Callable) -> Callable:
    """`original`, unless a RaggedTensor is among the arguments: then `on_ragged` of the
    arguments bound by name, or `original` again where it gives NotImplemented (the
    RaggedTensor is not where this op takes one)."""
    @functools.wraps(original)
    def op(*args, **kwargs):
        if _any_ragged(args, kwargs):
            result = on_ragged(_signature(original).bind(*args, **kwargs).arguments)
            if result is not NotImplemented:
                return result
        return original(*args, **kwargs)
    return op


def _binary(original: Callable) -> Callable:
    def on_ragged(arguments):
        names = list(arguments)
        x, y = arguments[names[0]], arguments[names[1]]
        if not isinstance(x, RaggedTensor) and not isinstance(y, RaggedTensor):
            return NotImplemented
        rest = {k: v for k, v in arguments.items() if k not in names[:2]}
        return elementwise_binary(lambda a, b: original(a, b, **rest), x, y)
    return _bound(original, on_ragged)


def _reduction(original: Callable, kind: str) -> Callable:
    def on_ragged(arguments):
        x = arguments.get("input_tensor")
        if not isinstance(x, RaggedTensor):
            return NotImplemented
        axis = arguments.get("axis", arguments.get("reduction_indices"))
        keepdims = arguments.get("keepdims", arguments.get("keep_dims"))
        return ragged_reduce(kind, x, axis, keepdims, arguments.get("name"),
                             scope="Ragged" + original.__name__.title().replace("_", ""))
    return _bound(original, on_ragged)


def _joining(original: Callable, ragged_version: Callable) -> Callable:
    def on_ragged(arguments):
        values = arguments.get("values")
        if not isinstance(values, (list, tuple)) or \
                not any(isinstance(v, RaggedTensor) for v in values):
            return NotImplemented
        return ragged_version(values, arguments.get("axis", 0), arguments.get("name"))
    return _bound(original, on_ragged)


def _routed(original: Callable, ragged_version: Callable) -> Callable:
    """Calls `ragged_version`, which takes the same arguments, when one is ragged."""
    @functools.wraps(original)
    def op(*args, **kwargs):
        if not _any_ragged(args, kwargs):
            return original(*args, **kwargs)
        return ragged_version(*args, **kwargs)
    return op


def _exported(name: str):
    ns, _, leaf = name.rpartition(".")
    return api_export.exported(ns).get(leaf)


def install_dispatch() -> None:
    """Routes the public ops of the tables above to their ragged versions (the export
    table rewritten once, for all of them)."""
    wrappers = {}  # id of the exported op -> its wrapper

    def _install(name: str, make: Callable) -> None:
        original = _exported(name)
        if original is None:
            raise ValueError("ragged dispatch: tf.%s is not exported" % name)
        if id(original) in wrappers or getattr(original, "_ragged_dispatch", False):
            return  # routed already under another of its names (tf.div / tf.divide)
        wrapper = make(original)
        wrapper._ragged_dispatch = True
        wrappers[id(original)] = wrapper

    for name in UNARY:
        _install(name, _unary)
    for name in BINARY:
        _install(name, _binary)
    for name, kind in REDUCTIONS.items():
        _install(name, lambda original, kind=kind: _reduction(original, kind))
    _install("concat", lambda original: _joining(original, ragged_concat))
    _install("stack", lambda original: _joining(original, ragged_stack))
    for name, ragged_version in ragged_array_dispatch.routed_ops():
        _install(name, lambda original, fn=ragged_version: _routed(original, fn))
    for name, ragged_version in (("split", ragged_split_ops.split),
                                 ("reshape", ragged_split_ops.reshape),
                                 ("matmul", ragged_matmul.matmul),
                                 ("strings.reduce_join", reduce_join)):
        _install(name, lambda original, fn=ragged_version: _routed(original, fn))
    for name in SEGMENT_OPS:
        _install(name, lambda original: _routed(original, functools.partial(
            ragged_array_dispatch.unsorted_segment, original)))
    api_export.replace_exports(wrappers)


install_dispatch()
