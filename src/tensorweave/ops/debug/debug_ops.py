"""Print, check_numerics and the assert ops.

Ops: Print (TF1 `tf.Print`: identity that logs), StringFormat + PrintV2 (`tf.print`),
CheckNumerics, Assert. Tensor values are summarized as TF does: `summarize_v1` is TF1's
`Tensor::SummarizeValue` (used by Print and Assert messages), `summarize_v2` the
NumPy-like layout of `tf.print`. The assert_* family lives in `check_ops.py`.
"""
from __future__ import annotations

import logging
import pprint
import sys
import threading
import uuid
from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor, colocate_with, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (REQUIRED, TypeAttr, TypeListAttr, gradient, kernel,
                                             not_differentiable, register_op)
from tensorweave.framework.shapes import TensorShape


# --- value formatting ------------------------------------------------------------------
def _format_float32(v) -> str:
    f = float(v)
    s = "%.6g" % f
    if np.float32(float(s)) != np.float32(f) and not np.isnan(f):
        s = "%.9g" % f
    return s


def _format_float64(v) -> str:
    f = float(v)
    s = "%.15g" % f
    if float(s) != f and not np.isnan(f):
        s = "%.17g" % f
    return s


# absl::Utf8SafeCEscape, as tf.print and tf.strings.format quote a string element: C
# escapes for quotes, backslash and control bytes (octal), bytes >= 0x80 as they are --
# mapped to lone surrogates here, which the "surrogateescape" encode turns back into
# those bytes
_C_ESCAPE = {i: "\\%03o" % i for i in list(range(0x20)) + [0x7F]}
_C_ESCAPE.update({0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'",
                  0x5C: "\\\\"})
_C_ESCAPE.update({i: chr(0xDC00 + i) for i in range(0x80, 0x100)})


def _element_formatter(dtype: np.dtype, quote_strings: bool):
    """A function formatting one element of an array of `dtype` as TF prints it."""
    if dtype == object or dtype.kind in "US":
        def fmt_str(v):
            if quote_strings and isinstance(v, bytes):
                return '"%s"' % v.decode("latin-1").translate(_C_ESCAPE)
            s = v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else str(v)
            return '"%s"' % s if quote_strings else s
        return fmt_str
    kind = dtype.kind
    if kind == "b":
        return lambda v: "1" if v else "0"
    if kind in "iu":
        return lambda v: str(int(v))
    if kind == "c":
        ffmt = _format_float64 if dtype == np.complex128 else _format_float32
        return lambda v: "(%s,%s)" % (ffmt(v.real), ffmt(v.imag))
    if dtype == np.float64:
        return _format_float64
    return _format_float32  # float32, float16, bfloat16: printed through float32


def summarize_v1(value, summarize: int = 3) -> str:
    """TF1's Tensor::SummarizeValue: at most `summarize` elements (all when negative),
    inner dimensions in brackets, "..." where elements were left out; no outer brackets.
    """
    arr = np.asarray(value)
    n = arr.size
    limit = n if summarize is None or summarize < 0 else min(int(summarize), n)
    fmt = _element_formatter(arr.dtype, quote_strings=False)
    elems = [fmt(v) for v in arr.reshape(-1)[:limit]]
    if arr.ndim == 0:
        return " ".join(elems) + ("..." if n > limit else "")
    out: List[str] = []
    shape = arr.shape
    last = arr.ndim - 1
    pos = [0]

    def one_dim(d: int) -> None:
        if pos[0] >= limit:
            return
        size = shape[d]
        if d == last:
            for i in range(size):
                if pos[0] >= limit:
                    if d != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(elems[pos[0]])
                pos[0] += 1
            return
        for _ in range(size):
            if pos[0] >= limit:
                break  # nothing more is printed at this level
            out.append("[")
            one_dim(d + 1)
            out.append("]")

    one_dim(0)
    return "".join(out) + ("..." if n > limit else "")


def summarize_v2(value, summarize: int = 3) -> str:
    """`tf.print`'s layout: per dimension the first and last `summarize` entries with
    "..." between (all entries when `summarize` is negative), nested rows on new lines
    indented like NumPy, string elements quoted."""
    arr = np.asarray(value)
    fmt = _element_formatter(arr.dtype, quote_strings=True)
    if arr.ndim == 0:
        return fmt(arr.reshape(-1)[0])
    limit = -1 if summarize is None else int(summarize)
    last = arr.ndim - 1

    def shown(size: int):
        if limit < 0 or size <= 2 * limit:
            return list(range(size))
        return list(range(limit)) + [None] + list(range(size - limit, size))

    def block(a, d: int) -> str:
        idx = shown(a.shape[0])
        if d == last:
            return "[" + " ".join("..." if i is None else fmt(a[i]) for i in idx) + "]"
        # as TF (and NumPy): one line break more for each level above the innermost
        sep = "\n" * (last - d) + " " * (d + 1)
        return "[" + sep.join("..." if i is None else block(a[i], d + 1) for i in idx) + "]"

    return block(arr, 0)


# --- Print (TF1) -----------------------------------------------------------------------
register_op("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
            attrs={"U": TypeListAttr(), "message": "", "first_n": -1, "summarize": 3},
            shape=lambda op: op.inputs[0].shape, stateful=True)

_COUNT_LOCK = threading.Lock()


def _count_allows(ctx, first_n: int) -> bool:
    """True for the first `first_n` runs of this op in this session (always if < 0)."""
    if first_n < 0:
        return True
    with _COUNT_LOCK:
        count = ctx.state.get("count", 0)
        if count >= first_n:
            return False
        ctx.state["count"] = count + 1
    return True


@kernel("Print")
def _print_kernel(ctx, x, *data):
    attrs = ctx.attrs
    if _count_allows(ctx, attrs["first_n"]):
        summarize = attrs["summarize"]
        msg = attrs["message"] + "".join("[%s]" % summarize_v1(d, summarize) for d in data)
        sys.stderr.write(msg + "\n")
        sys.stderr.flush()
    return x


@gradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


@tf_export("Print")
def Print(input_, data, message: Optional[str] = None, first_n: Optional[int] = None,
          summarize: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Prints `message` and a summary of each tensor in `data` when evaluated (TF1
    `tf.Print`, deprecated in favour of `tf.print`).

    The line goes to standard error: `message` followed by `[summary]` per tensor.

    Args:
      input_: the tensor passed through.
      data: a list of tensors to print.
      message: prefix of the printed line.
      first_n: only print the first `first_n` times this op runs in a session
        (negative: always).
      summarize: how many elements of each tensor to print (default 3, negative: all).
      name: op name.

    Returns:
      A Tensor with the value of `input_`; evaluating it prints.
    """
    attrs = {"message": "" if message is None else str(message),
             "first_n": -1 if first_n is None else int(first_n),
             "summarize": 3 if summarize is None else int(summarize)}
    return apply_op("Print", [input_, list(data)], attrs, name=name or "Print").outputs[0]


# --- StringFormat + PrintV2 (tf.print) -----------------------------------------------
def _string_format_shape(op):
    template, placeholder = op._get_attr("template"), op._get_attr("placeholder")
    n = template.count(placeholder)
    if n != len(op.inputs):
        raise ValueError("%d placeholder(s) in template does not match %d tensor(s) provided "
                         "as input" % (n, len(op.inputs)))
    return TensorShape([])


register_op("StringFormat", inputs=["inputs: T"], outputs=["output: string"],
            attrs={"T": TypeListAttr(), "template": "%s", "placeholder": "%s",
                   "summarize": 3},
            shape=_string_format_shape)


@kernel("StringFormat")
def _string_format_kernel(ctx, *inputs):
    attrs = ctx.attrs
    parts = attrs["template"].split(attrs["placeholder"])
    out = [parts[0]]
    for value, tail in zip(inputs, parts[1:]):
        out.append(summarize_v2(value, attrs["summarize"]))
        out.append(tail)
    return np.array("".join(out).encode("utf-8", "surrogateescape"), dtype=object)


not_differentiable("StringFormat")

register_op("PrintV2", inputs=["input: string"],
            attrs={"output_stream": "stderr", "end": "\n"}, stateful=True)
not_differentiable("PrintV2")

_LOG_LEVELS = {"log(info)": logging.INFO, "log(warning)": logging.WARNING,
               "log(error)": logging.ERROR}
_FILE_LOCK = threading.Lock()


@kernel("PrintV2")
def _print_v2_kernel(ctx, value):
    if np.ndim(value) != 0:
        raise errors.InvalidArgumentError(None, None, "Input is expected to be scalar, but "
                                          "got shape [%s]" % ",".join(map(str, value.shape)))
    v = value.reshape(-1)[0] if isinstance(value, np.ndarray) else value
    text = (v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else str(v)) + \
        ctx.attrs["end"]
    stream = ctx.attrs["output_stream"]
    if stream == "stderr" or stream == "stdout":
        out = sys.stderr if stream == "stderr" else sys.stdout
        out.write(text)
        out.flush()
    elif stream in _LOG_LEVELS:
        logging.getLogger("tensorflow").log(_LOG_LEVELS[stream], text.rstrip("\n"))
    elif stream.startswith("file://"):
        with _FILE_LOCK, open(stream[len("file://"):], "a") as f:
            f.write(text)
    else:
        raise errors.InvalidArgumentError(None, None, "%s is not a valid output_stream"
                                          % stream)
    return None


def _stream_name(output_stream) -> str:
    if output_stream is sys.stderr or output_stream is sys.__stderr__:
        return "stderr"
    if output_stream is sys.stdout or output_stream is sys.__stdout__:
        return "stdout"
    from tensorweave.platform import tf_logging
    for level, streams in (
            ("log(info)", (tf_logging.info, tf_logging.INFO)),
            ("log(warning)", (tf_logging.warning, tf_logging.warn, tf_logging.WARN)),
            ("log(error)", (tf_logging.error, tf_logging.ERROR))):
        # TF's table: tf.logging's functions and its level constants
        if any(output_stream is s or (type(output_stream) is int and output_stream == s)
               for s in streams):
            return level
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    raise ValueError("Unsupported output stream, logging level, or file.%s. Supported "
                     "streams are sys.stdout, sys.stderr, tf.logging.info, "
                     "tf.logging.warning, tf.logging.error. File needs to be in the form of "
                     "'file://<filepath>'." % (output_stream,))


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_element")


def _is_sparse(x) -> bool:
    from tensorweave.framework.sparse_tensor import SparseTensor
    return isinstance(x, SparseTensor)


def _flatten(x) -> list:
    if _is_sparse(x):
        return [x.indices, x.values, x.dense_shape]
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flatten(v)]
    return [x]


def _replace_tensors(x, placeholder):
    if _is_sparse(x):  # TF prints its three components in this frame
        return "SparseTensor(indices=%s, values=%s, shape=%s)" % ((placeholder,) * 3)
    if isinstance(x, dict):
        return type(x)((k, _replace_tensors(v, placeholder)) for k, v in x.items())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_replace_tensors(v, placeholder) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_replace_tensors(v, placeholder) for v in x)
    return placeholder if _is_tensor(x) else x


@tf_export("print")
def print_v2(*inputs, **kwargs) -> Operation:
    """Prints the inputs when the returned op runs (`tf.print`).

    Strings print as they are, Python values as `pprint` shows them, and tensors as a
    NumPy-like summary; nested lists and dicts of tensors are printed with their
    structure. In graph mode nothing prints unless the returned op runs (fetch it or
    use it in `tf.control_dependencies`).

    Args:
      *inputs: values and tensors to print, separated by `sep`.
      output_stream: sys.stderr (default), sys.stdout, tf.logging.info/warning/error
        (or the levels tf.logging.INFO/WARN/ERROR), or "file://<path>".
      summarize: entries printed at each end of every dimension (default and None:
        3; -1: all).
      sep: separator between the inputs (default " ").
      end: appended after the line (default "\\n").
      name: op name.

    Returns:
      The PrintV2 Operation.

    Raises:
      ValueError: an unsupported output stream.
      TypeError: an unknown keyword argument.
    """
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("print() got unexpected keyword arguments: %s" % ", ".join(kwargs))
    stream = _stream_name(output_stream)
    if len(inputs) == 1 and _is_tensor(inputs[0]) and not _is_sparse(inputs[0]) and \
            inputs[0].dtype == _dt.string and inputs[0].shape.ndims == 0:
        # a scalar string tensor (a tf.strings.format result) prints as it is
        return apply_op("PrintV2", [inputs[0]], {"output_stream": stream, "end": end},
                        name=name or "PrintV2")
    free = " ".join(pprint.pformat(_replace_tensors(x, "")) for x in inputs)
    placeholder = "{}"
    while placeholder in free or any(isinstance(x, str) and placeholder in x
                                     for x in inputs):
        placeholder = "{%s}" % uuid.uuid4().hex
    tensors, templates = [], []
    for x in inputs:
        if isinstance(x, str):
            templates.append(x)
            continue
        tensors.extend(t for t in _flatten(x) if _is_tensor(t))
        if _is_tensor(x) and not _is_sparse(x):
            templates.append(placeholder)
        else:
            templates.append(pprint.pformat(_replace_tensors(x, placeholder)))
    template = sep.join(templates).replace("'%s'" % placeholder, placeholder)
    tensors = [convert_to_tensor(t) for t in tensors]
    formatted = apply_op("StringFormat", [tensors],
                         {"template": template, "placeholder": placeholder,
                          "summarize": 3 if summarize is None else int(summarize)},
                         name="StringFormat").outputs[0]
    return apply_op("PrintV2", [formatted], {"output_stream": stream, "end": end},
                    name=name or "PrintV2")


# --- CheckNumerics ---------------------------------------------------------------------
register_op("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
            attrs={"T": TypeAttr((_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64)),
                   "message": REQUIRED},
            shape=lambda op: op.inputs[0].shape, stateful=True)


@kernel("CheckNumerics")
def _check_numerics_kernel(ctx, x):
    if not np.isfinite(x).all():
        has_inf, has_nan = bool(np.isinf(x).any()), bool(np.isnan(x).any())
        what = "Inf and NaN" if has_inf and has_nan else "Inf" if has_inf else "NaN"
        raise errors.InvalidArgumentError(None, None, "%s : Tensor had %s values"
                                          % (ctx.attrs["message"], what))
    return x


@gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                                 "gradient. %s" % op._get_attr("message"))]


@tf_export("check_numerics", "debugging.check_numerics")
def check_numerics(tensor, message: str, name: Optional[str] = None) -> Tensor:
    """Passes `tensor` through, failing the step if it holds NaN or Inf values.

    Args:
      tensor: a floating-point Tensor.
      message: prefix of the error message.
      name: op name.

    Returns:
      A Tensor with the value of `tensor`.

    Raises:
      TypeError: `tensor` is not floating point.
      InvalidArgumentError: at run time, "<message> : Tensor had NaN values" (or "Inf",
        or "Inf and NaN").
    """
    return apply_op("CheckNumerics", [tensor], {"message": str(message)},
                    name=name or "CheckNumerics").outputs[0]


# CheckNumericsV2 tells -Inf from +Inf ("... : Tensor had -Inf, +Inf, and NaN values");
# tf.debugging.enable_check_numerics builds it (check_numerics_callback.py)
register_op("CheckNumericsV2", inputs=["tensor: T"], outputs=["output: T"],
            attrs={"T": TypeAttr((_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64)),
                   "message": REQUIRED},
            shape=lambda op: op.inputs[0].shape, stateful=True)


@kernel("CheckNumericsV2")
def _check_numerics_v2_kernel(ctx, x):
    if not np.isfinite(x).all():
        inf = np.isinf(x)
        found = [what for what, present in (("-Inf", (inf & (x < 0)).any()),
                                            ("+Inf", (inf & (x > 0)).any()),
                                            ("NaN", np.isnan(x).any())) if present]
        if len(found) == 3:
            what = "%s, %s, and %s" % tuple(found)
        else:
            what = " and ".join(found)
        raise errors.InvalidArgumentError(None, None, "%s : Tensor had %s values"
                                          % (ctx.attrs["message"], what))
    return x


@gradient("CheckNumericsV2")
def _check_numerics_v2_grad(op, grad):
    return [apply_op("CheckNumericsV2", [grad], {
        "message": "Not a number (NaN) or infinity (Inf) values detected in gradient. %s"
                   % op._get_attr("message")}, name="CheckNumericsV2").outputs[0]]


@tf_export("verify_tensor_all_finite", "debugging.assert_all_finite")
def verify_tensor_all_finite(t=None, msg: Optional[str] = None, name: Optional[str] = None,
                             x=None, message: Optional[str] = None) -> Tensor:
    """Asserts that a tensor has no NaN or Inf values; returns it (TF1).

    Args:
      t: the Tensor to check (`x` is an alias).
      msg: message of the error (`message` is an alias).
      name: name scope.

    Returns:
      `t`, computed after the check.

    Raises:
      ValueError: both an argument and its alias were given.
    """
    if x is not None and t is not None:
        raise ValueError("Cannot specify both 'x' and 't'")
    if message is not None and msg is not None:
        raise ValueError("Cannot specify both 'message' and 'msg'")
    t = x if t is None else t
    msg = message if msg is None else msg
    from tensorweave.ops.control_flow import structure
    with name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="t")
        with colocate_with(t):
            verify = check_numerics(t, message=msg or "")
            return structure.with_dependencies([verify], t)


# --- Assert ------------------------------------------------------------------------------
# no shape check: a condition that is not a scalar fails at run time, as TF's kernel
register_op("Assert", inputs=["condition: bool", "data: T"],
            attrs={"T": TypeListAttr(), "summarize": 3}, shape=lambda op: [], stateful=True)


def assertion_failed(data, summarize: int) -> errors.InvalidArgumentError:
    """The error of a failed assertion: "assertion failed: [d0] [d1] ..."."""
    return errors.InvalidArgumentError(
        None, None, "assertion failed: " + " ".join("[%s]" % summarize_v1(d, summarize)
                                                    for d in data))


@kernel("Assert")
def _assert_kernel(ctx, condition, *data):
    if np.ndim(condition) != 0:
        raise errors.InvalidArgumentError(None, None, "In[0] should be a scalar: [%s]"
                                          % ",".join(map(str, np.shape(condition))))
    if not condition:
        raise assertion_failed(data, ctx.attrs["summarize"])
    return None


not_differentiable("Assert")


@tf_export("Assert", "debugging.Assert")
def Assert(condition, data, summarize: Optional[int] = None,
           name: Optional[str] = None) -> Operation:
    """Asserts that `condition` is true when the returned op runs.

    Args:
      condition: a scalar boolean Tensor (or Python bool).
      data: tensors (or Python values) to print when the condition is false.
      summarize: how many entries of each tensor to print (default 3).
      name: name scope.

    Returns:
      The Assert Operation; use it in `tf.control_dependencies`.

    Raises:
      TypeError: `condition` is not a bool tensor.
      InvalidArgumentError: at run time, "assertion failed: [data...]", or a condition
        that is not a scalar (as TF, not checked at build time).
    """
    with name_scope(name, "Assert", [condition, data]):
        xs = [convert_to_tensor(d, name="data_%d" % i) for i, d in enumerate(data)]
        condition = convert_to_tensor(condition, name="Condition")
        if condition.dtype.base_dtype != _dt.bool:
            raise TypeError("Input 'condition' of 'Assert' Op has type %s that does not "
                            "match expected type of bool." % condition.dtype.name)
        return apply_op("Assert", [condition, xs],
                        {"summarize": 3 if summarize is None else int(summarize)},
                        name="Assert")


# --- Timestamp ---------------------------------------------------------------------------
register_op("Timestamp", inputs=[], outputs=["ts: float64"], stateful=True,
            shape=lambda op: TensorShape([]))


@kernel("Timestamp")
def _timestamp_kernel(ctx):
    import time
    return np.float64(time.time())


not_differentiable("Timestamp")


@tf_export("timestamp")
def timestamp(name: Optional[str] = None) -> Tensor:
    """The time when the op runs, in seconds since the Unix epoch (float64 scalar; TF1
    `tf.timestamp`). Stateful: each run reads the clock again.

    Args:
      name: op name.

    Returns:
      A float64 scalar Tensor.
    """
    return apply_op("Timestamp", [], {}, name=name or "Timestamp").outputs[0]
