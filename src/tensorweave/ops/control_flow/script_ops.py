"""Python functions as ops: `tf.py_func` and `tf.numpy_function` (PyFunc, PyFuncStateless),
and `tf.py_function` (EagerPyFunc).

The kernel calls the user's Python function with NumPy arrays and converts what it
returns to the declared output types. The function itself never enters the graph: it
sits in a registry of its graph keyed by the op's `token` attr ("pyfunc_<n>"), so a graph
serialized and loaded elsewhere holds the op but not the function (running it then
fails with NotFoundError, as in TF). Exceptions raised by the function become TF's error
classes (ValueError/TypeError -> InvalidArgumentError, StopIteration -> OutOfRangeError,
MemoryError -> ResourceExhaustedError, NotImplementedError -> UnimplementedError, an
OpError keeps its class, anything else -> UnknownError) with the Python traceback in
the message. Neither op is differentiable (use `Graph.gradient_override_map`); PyFunc
is stateful, so it is never folded, pruned as a duplicate or merged.

`tf.py_function` passes its function values that also answer `.numpy()`, as TF's eager
tensors do (NumPy arrays of a subclass, so arithmetic on them works too). TF
differentiates it by running the function again under a gradient tape; with no eager
execution here, its gradient raises LookupError saying so.
"""
from __future__ import annotations

import itertools
import threading
import traceback
from typing import Any, Callable, List, Optional, Sequence, Union

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Graph, Tensor, get_default_graph
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import (TypeListAttr, gradient, kernel,
                                             not_differentiable, register_op)
from tensorweave.framework.shapes import unknown_shape
from tensorweave.runtime.values import string_array

for _op_type, _stateful in (("PyFunc", True), ("PyFuncStateless", False)):
    register_op(_op_type, inputs=["input: Tin"], outputs=["output: Tout"],
                attrs={"token": "", "Tin": TypeListAttr(), "Tout": TypeListAttr()},
                shape=lambda op: [unknown_shape() for _ in op.outputs], stateful=_stateful)
    not_differentiable(_op_type)
register_op("EagerPyFunc", inputs=["input: Tin"], outputs=["output: Tout"],
            attrs={"token": "", "is_async": False, "Tin": TypeListAttr(),
                   "Tout": TypeListAttr()},
            shape=lambda op: [unknown_shape() for _ in op.outputs], stateful=True)


@gradient("EagerPyFunc")
def _eager_py_func_grad(op, *grads):
    raise LookupError("The gradient of tf.py_function (%s) runs its Python function under "
                      "a gradient tape, which needs eager execution; tensorweave runs "
                      "graphs only. Give it a gradient with tf.custom_gradient or "
                      "Graph.gradient_override_map." % op.name)


class EagerValue(np.ndarray):
    """A `tf.py_function` argument: a NumPy array that also answers `.numpy()`, as
    TF's eager tensors do."""

    def numpy(self):
        """The value as a plain NumPy array (a scalar's as a NumPy scalar or bytes)."""
        plain = self.view(np.ndarray)
        return plain[()] if plain.ndim == 0 else plain

# A graph's functions (token -> function) live on the graph (`_py_funcs`), so they go
# with it: a module-level map keyed by graph would keep alive every graph that one of
# its functions reaches.
_LOCK = threading.Lock()
_COUNTER = itertools.count()

def _register(graph: Graph, func: Callable) -> str:
    with _LOCK:
        token = "pyfunc_%d" % next(_COUNTER)
        funcs = graph.__dict__.get("_py_funcs")
        if funcs is None:
            funcs = graph._py_funcs = {}
        funcs[token] = func
    return token


def _lookup(ctx) -> Callable:
    token = ctx.attrs["token"]
    graph = ctx.op.graph if ctx.op is not None else None
    funcs = graph.__dict__.get("_py_funcs") if graph is not None else None
    func = funcs.get(token) if funcs else None
    if func is None:
        raise errors.NotFoundError(
            None, ctx.op, "Function %s is not registered in this graph (a py_func's Python "
            "function is not saved with the graph)" % token)
    return func


def _error_class(exc: BaseException):
    if isinstance(exc, errors.OpError):
        return type(exc)
    if isinstance(exc, (ValueError, TypeError)):
        return errors.InvalidArgumentError
    if isinstance(exc, StopIteration):
        return errors.OutOfRangeError
    if isinstance(exc, MemoryError):
        return errors.ResourceExhaustedError
    if isinstance(exc, NotImplementedError):
        return errors.UnimplementedError
    return errors.UnknownError


def _to_output(value: Any, want: _dt.DType, index: int, token: str, op) -> np.ndarray:
    """One returned value as an array of dtype `want`, or TF's InvalidArgumentError."""
    if want == _dt.string:
        arr = np.asarray(value)
        if arr.dtype.kind == "S" and arr is not value:
            # as TF's py_func: from the bytes themselves, not the |S array NumPy made of
            # them, which drops trailing NULs
            arr = np.asarray(value, dtype=object)
        if arr.dtype.kind == "U":
            return np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(arr) \
                if arr.size else np.empty(arr.shape, dtype=object)
        if arr.dtype.kind in "SO":
            return string_array(arr)  # str elements encoded, others an InternalError
        got = arr.dtype.name
    else:
        arr = np.asarray(value)
        if arr.dtype == want.as_numpy_dtype:
            return np.asarray(arr, order="C")  # ascontiguousarray makes a 0-d value 1-d
        try:
            got = _dt.type_string(_dt.as_dtype(arr.dtype))
        except TypeError:
            got = "string" if arr.dtype.kind in "SUO" else arr.dtype.name
    raise errors.InvalidArgumentError(
        None, op, "%d-th value returned by %s is %s, but expects %s"
        % (index, token, got, _dt.type_string(want)))


def _py_func_kernel(ctx, *inputs):
    func = _lookup(ctx)
    token = ctx.attrs["token"]
    if ctx.op.type == "EagerPyFunc":
        args = [np.array(x, copy=True).view(EagerValue) for x in inputs]
    else:
        # arrays the function may write into; a scalar as TF passes it, a NumPy scalar
        # (bytes for a string), so `s.decode()` works on a string element
        args = [np.array(x, copy=True) for x in inputs]
        args = [a[()] if a.ndim == 0 else a for a in args]
    try:
        ret = func(*args)
    except Exception as exc:  # noqa: BLE001: every Python error becomes an OpError
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        message = "%s: %s\n%s" % (type(exc).__name__, exc, text)
        raise _error_class(exc)(None, ctx.op, message) from exc
    touts = list(ctx.attrs["Tout"])
    if not touts and ret is None:
        return ()
    values = list(ret) if isinstance(ret, (list, tuple)) else [ret]
    if len(values) != len(touts):
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s returns %d values, but expects to see %d values."
            % (token, len(values), len(touts)))
    return tuple(_to_output(_plain(v), _dt.as_dtype(t), i, token, ctx.op)
                 for i, (v, t) in enumerate(zip(values, touts)))


def _plain(value):
    return value.view(np.ndarray) if isinstance(value, EagerValue) else value


for _op_type in ("PyFunc", "PyFuncStateless", "EagerPyFunc"):
    kernel(_op_type, cheap=False)(_py_func_kernel)


def _build(func, inp, Tout, stateful: bool, name: Optional[str], op_type: str = ""):
    if not callable(func):
        raise TypeError("func must be callable, got %r" % (func,))
    is_list = isinstance(Tout, (list, tuple))
    touts = [_dt.as_dtype(t) for t in (Tout if is_list else [Tout])]
    graph = get_default_graph()
    token = _register(graph, func)
    op_type = op_type or ("PyFunc" if stateful else "PyFuncStateless")
    op = apply_op(op_type, [list(inp or [])], {"token": token, "Tout": touts},
                  name=name or op_type)
    outputs = list(op.outputs)
    if is_list:
        return outputs if outputs else op
    return outputs[0]


@tf_export("py_func")
def py_func(func: Callable, inp: Sequence, Tout, stateful: bool = True,
            name: Optional[str] = None) -> Union[Tensor, List[Tensor]]:
    """Wraps a Python function taking and returning NumPy arrays as an op.

    Args:
      func: a Python function called with one NumPy array per element of `inp`; it
        returns one value (or a list/tuple of values) convertible to arrays of the
        types `Tout`.
      inp: a list of Tensors (or values convertible to tensors).
      Tout: a DType, or a list/tuple of DTypes, for the outputs.
      stateful: whether the function has side effects or depends on state; a stateful
        op is never folded, merged with a duplicate, or pruned as one.
      name: op name.

    Returns:
      A Tensor if `Tout` is a single DType, else a list of Tensors (the Operation when
      `Tout` is empty). Static shapes are unknown.

    Raises:
      TypeError: `func` is not callable or an input has no tensor conversion.
    """
    return _build(func, inp, Tout, stateful, name)


@tf_export("numpy_function")
def numpy_function(func: Callable, inp: Sequence, Tout, stateful: bool = True,
                   name: Optional[str] = None) -> Union[Tensor, List[Tensor]]:
    """Wraps a Python function taking and returning NumPy arrays as an op (as
    `py_func`).

    Args:
      func: a Python function called with one NumPy array per element of `inp`.
      inp: a list of Tensors.
      Tout: a DType, or a list/tuple of DTypes, for the outputs.
      stateful: whether the function has side effects (see `py_func`).
      name: op name.

    Returns:
      A Tensor if `Tout` is a single DType, else a list of Tensors.

    Raises:
      TypeError: `func` is not callable.
    """
    return _build(func, inp, Tout, stateful, name)


@tf_export("py_function")
def py_function(func: Callable, inp: Sequence, Tout,
                name: Optional[str] = None) -> Union[Tensor, List[Tensor]]:
    """Wraps a Python function as an op, passing it values that answer `.numpy()`
    (TF1 `tf.py_function`).

    Args:
      func: a Python function called with one value per element of `inp`: a NumPy
        array (of a subclass) with a `.numpy()` method, as TF's eager tensors have. It
        returns one value (or a list/tuple of values) convertible to arrays of the types
        `Tout`, or None when `Tout` is empty.
      inp: a list of Tensors.
      Tout: a DType, or a list/tuple of DTypes, for the outputs.
      name: op name.

    Returns:
      A Tensor if `Tout` is a single DType, else a list of Tensors (the Operation when
      `Tout` is empty). Static shapes are unknown.

    Raises:
      TypeError: `func` is not callable.
      LookupError: from tf.gradients through the op (TF's gradient runs the function
        eagerly under a tape; see the module docstring).
    """
    return _build(func, inp, Tout, True, name, op_type="EagerPyFunc")
