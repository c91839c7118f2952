"""The op, kernel and gradient registries.

An op is declared once (`register_op`) with typed inputs and outputs, attrs with defaults
and allowed values, a shape function and a stateful flag. Kernels are registered per
(op type, device type); gradients per op type. Every registry names the place where an
entry was first registered when a duplicate arrives.

Argument specs follow TF's OpDef notation:
  "x: T"           one tensor whose dtype is the type attr T
  "values: N * T"  N tensors of type T (N is an int attr, inferred from the input list)
  "shape: int32"   one tensor of a fixed dtype
  "args: Tlist"    a list of tensors whose dtypes form the type-list attr Tlist
"""
from __future__ import annotations

import re
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tensorweave.framework import dtypes as _dt

REQUIRED = object()  # an attr without default


class TypeAttr:
    """A type attr; `allowed` limits it to some DTypes (None: any)."""

    __slots__ = ("allowed", "default")

    def __init__(self, allowed: Optional[Sequence[_dt.DType]] = None, default=REQUIRED):
        self.allowed = None if allowed is None else tuple(allowed)
        self.default = default


class TypeListAttr:
    __slots__ = ("default",)

    def __init__(self, default=REQUIRED):
        self.default = default


class ArgSpec:
    __slots__ = ("name", "type_attr", "dtype", "number_attr", "type_list_attr", "token")

    def __init__(self, spec: str):
        m = re.fullmatch(r"\s*(\w+)\s*:\s*(?:(\w+)\s*\*\s*)?(\w+)\s*", spec)
        if not m:
            raise ValueError("bad argument spec %r" % spec)
        self.name, self.number_attr, t = m.group(1), m.group(2), m.group(3)
        self.type_attr = self.dtype = self.type_list_attr = None
        self.token = t
        try:
            self.dtype = _dt.as_dtype(t)
        except TypeError:
            self.type_attr = t  # resolved to a type-list attr by OpDef if declared so

    @property
    def is_list(self) -> bool:
        return self.number_attr is not None or self.type_list_attr is not None


class OpDef:
    """The declaration of one op type."""

    def __init__(self, name, inputs, outputs, attrs, shape_fn, stateful, where):
        self.name = name
        self.inputs = [ArgSpec(s) for s in inputs]
        self.outputs = [ArgSpec(s) for s in outputs]
        self.attrs: Dict[str, Any] = dict(attrs or {})
        self.shape_fn = shape_fn
        self.stateful = stateful
        self.where = where
        for a in self.inputs + self.outputs:
            if a.dtype is not None and a.token in self.attrs:
                # a declared attr wins over a dtype spelling ("U" is also NumPy's str code)
                a.dtype, a.type_attr = None, a.token
            if a.type_attr is not None and isinstance(self.attrs.get(a.type_attr), TypeListAttr):
                a.type_list_attr, a.type_attr = a.type_attr, None
            for attr in (a.type_attr, a.number_attr):
                if attr is not None and attr not in self.attrs:
                    self.attrs[attr] = TypeAttr() if attr is a.type_attr else REQUIRED
        self.type_attrs = [k for k, v in self.attrs.items() if isinstance(v, TypeAttr)]
        self.simple_outputs = not any(a.is_list for a in self.outputs)

    def __repr__(self):
        return "<OpDef %s>" % self.name


_OPS: Dict[str, OpDef] = {}
_KERNELS: Dict[Tuple[str, str], "KernelDef"] = {}
_GRADIENTS: Dict[str, Tuple[Optional[Callable], str]] = {}
_NEEDS_CALL: set = set()  # op types whose gradient takes the GradientCall (`gradient`)


def _caller(depth: int = 2) -> str:
    f = sys._getframe(depth)
    return "%s:%d" % (f.f_code.co_filename, f.f_lineno)


def register_op(name: str, inputs: Sequence[str] = (), outputs: Sequence[str] = (),
                attrs: Optional[Dict[str, Any]] = None, shape: Optional[Callable] = None,
                stateful: bool = False) -> OpDef:
    """Declares an op type.

    Args:
      name: the op type, e.g. "MatMul".
      inputs, outputs: argument specs (see the module docstring).
      attrs: attr name -> default value, `REQUIRED`, `TypeAttr(...)` or `TypeListAttr()`.
      shape: shape function `fn(op) -> TensorShape | list[TensorShape]`; None means the
        outputs have unknown shapes.
      stateful: True if the op reads or writes state (never folded, merged or pruned
        as a duplicate).

    Returns:
      The OpDef.

    Raises:
      ValueError: if `name` is already registered (the message names both places).
    """
    where = _caller()
    if name in _OPS:
        raise ValueError("Op %r registered twice: first at %s, again at %s"
                         % (name, _OPS[name].where, where))
    d = OpDef(name, inputs, outputs, attrs, shape, stateful, where)
    _OPS[name] = d
    return d


# Libraries imported on first use (`tf.data`) that register ops of their own. A graph
# received from another process (a master's partition, an imported GraphDef) may hold
# their ops before this process has touched the library, so a miss imports them once.
_LAZY_OP_MODULES = ("tensorweave.data", "tensorweave.ops.clustering_ops")


def find_op_def(name: str) -> Optional[OpDef]:
    """The OpDef registered under `name` so far, or None; unlike get_op_def, a miss
    does not import the libraries registered on first use."""
    return _OPS.get(name)


def get_op_def(name: str) -> OpDef:
    op_def = _OPS.get(name)
    if op_def is None:
        import importlib
        for module in _LAZY_OP_MODULES:  # waits for an import another thread began
            importlib.import_module(module)
        op_def = _OPS.get(name)
        if op_def is None:
            raise ValueError("No op named %s registered" % name)
    return op_def


def registered_ops() -> Dict[str, OpDef]:
    return dict(_OPS)


class KernelDef:
    """A kernel: `fn(ctx, *inputs)` returning one array (single-output ops) or a
    sequence of arrays. A string value is an object array of bytes, 0-d for a scalar --
    never bare bytes nor an |S array (runtime/values.py). `cheap` kernels run inline on
    the scheduling thread; others may go to the inter-op thread pool. `is_async` kernels
    take `(ctx, step, done, *inputs)` and call `done(outputs_or_exception)` when finished
    instead of returning. `threaded(attrs)`, where given, says whether the kernel of a
    node with those attrs spreads its own work over every core (oneDNN's kernels do): the
    policy runs such a kernel inline, as overlapping it with others only makes them
    share its cores (runtime/policy.kernel_weight). `bare_single`: the op has list outputs
    ("N * T") and the kernel already returns (or passes to `done`) the value itself, not
    a one-element list, when the node has one output, so the executor calls it without
    an unwrapping wrapper (runtime/plan.py). `in_place`: the kernel's variant for nodes
    the plan marked as owning an input array (runtime/optimizer.mark_temporaries), which
    may write its result there; the others keep `fn`, with no test per call."""

    __slots__ = ("op_type", "device_type", "fn", "cheap", "is_async", "threaded", "where",
                 "bare_single", "in_place")

    def __init__(self, op_type, device_type, fn, cheap, is_async, where, threaded=None,
                 bare_single=False, in_place=None):
        self.op_type, self.device_type, self.fn = op_type, device_type, fn
        self.cheap, self.is_async, self.where = cheap, is_async, where
        self.threaded = threaded
        self.bare_single = bare_single
        self.in_place = in_place


def kernel(op_type: str, devices: Sequence[str] = ("CPU",), cheap: bool = True,
           is_async: bool = False,
           threaded: Optional[Callable[[dict], bool]] = None,
           bare_single: bool = False, in_place: Optional[Callable] = None) -> Callable:
    """Decorator registering `fn` as the kernel of `op_type` on each device type.

    `threaded`, `bare_single`, `in_place`: see KernelDef; `threaded` and `in_place` hold
    for the CPU only (an accelerator's copy of the kernel runs elsewhere)."""
    where = _caller()

    def deco(fn):
        for dev in devices:
            key = (op_type, dev)
            if key in _KERNELS:
                raise ValueError("Kernel for %s on %s registered twice: first at %s, again at %s"
                                 % (op_type, dev, _KERNELS[key].where, where))
            cpu = dev == "CPU"
            _KERNELS[key] = KernelDef(op_type, dev, fn, cheap, is_async, where,
                                      threaded if cpu else None, bare_single,
                                      in_place if cpu else None)
            for acc in ACCELERATOR_TYPES:
                _MIRRORED.pop((op_type, acc), None)
        return fn
    return deco


# --- kernels by device type ------------------------------------------------------------
# A kernel body is written against `ctx.xp` (or NumPy functions, which dispatch to CuPy
# for CuPy arrays), so a kernel registered for "CPU" also serves the accelerators, as one
# TF kernel body is compiled for CPU and GPU (OSDI §3.3): every CPU kernel serves the
# simulated accelerator (NumPy-backed, runtime/devices.py) and the kernels listed in
# framework/gpu_kernels.py (those seen to run on CuPy arrays) serve the CuPy GPU --
# except the ops a TF GPU has no kernel for because their work is on the host. This is
# the one place that says which those are: by the module the kernel is written in (a
# package prefix covers its modules), and by op type for the host-only ops of mixed
# modules.
ACCELERATOR_TYPES = ("GPU", "SIM")  # device types that reuse the CPU kernel bodies

HOST_ONLY_MODULES: Dict[str, str] = {
    "tensorweave.ops.string": "string ops run on the host",
    "tensorweave.ops.io": "file, reader, TFRecord, checkpoint and parsing ops run on the "
                          "host",
    "tensorweave.ops.summary": "summaries run on the host",
    "tensorweave.ops.image.codec_ops": "image codecs run on the host",
    "tensorweave.ops.data_flow.queue_ops": "queues live in host memory",
    "tensorweave.ops.data_flow.lookup_ops": "lookup tables live in host memory",
    "tensorweave.ops.data_flow.batch_ops": "batched functions run on the host (TF's "
                                           "BatchFunction has a CPU kernel only)",
    "tensorweave.data": "tf.data pipelines run on the host",
    "tensorweave.ops.data_flow.session_ops": "session tensor handles live in host memory",
    "tensorweave.ops.control_flow.script_ops": "Python functions run on the host",
    "tensorweave.ops.sparse.sparse_serialize_ops": "serialized SparseTensors are strings",
}

HOST_ONLY_OPS: Dict[str, str] = {
    "Print": "printing runs on the host",
    "PrintV2": "printing runs on the host",
    "StringFormat": "string ops run on the host",
    "Timestamp": "the clock is read on the host",
    "Assert": "assertions run on the host",
    "_AssertCompare": "assertions run on the host",
    "_AssertNear": "assertions run on the host",
    "_AssertRank": "assertions run on the host",
}

# TF's device priorities: kernel selection prefers the accelerator when both exist
_DEVICE_PRIORITY = {"GPU": 210, "SIM": 200, "CPU": 100}

_MIRRORED: Dict[Tuple[str, str], Optional["KernelDef"]] = {}


def host_only_reason(op_type: str) -> Optional[str]:
    """Why `op_type` has no accelerator kernel (None if its CPU kernel also runs on the
    accelerator types, or it has no CPU kernel)."""
    reason = HOST_ONLY_OPS.get(op_type)
    if reason is not None:
        return reason
    k = _KERNELS.get((op_type, "CPU"))
    if k is None:
        return None
    module = getattr(k.fn, "__module__", "") or ""
    for prefix, reason in HOST_ONLY_MODULES.items():
        if module == prefix or module.startswith(prefix + "."):
            return reason
    return None


def _mirrored_kernel(op_type: str, device_type: str) -> Optional["KernelDef"]:
    """The CPU kernel of `op_type` serving accelerator `device_type`, or None."""
    key = (op_type, device_type)
    try:
        return _MIRRORED[key]
    except KeyError:
        pass
    k = _KERNELS.get((op_type, "CPU"))
    mirrored = None
    if k is not None and device_type in ACCELERATOR_TYPES and \
            host_only_reason(op_type) is None and \
            (device_type != "GPU" or op_type in _gpu_kernel_ops()):
        mirrored = KernelDef(op_type, device_type, k.fn, k.cheap, k.is_async, k.where,
                             bare_single=k.bare_single)
    _MIRRORED[key] = mirrored
    return mirrored


def _gpu_kernel_ops() -> frozenset:
    from tensorweave.framework import gpu_kernels
    return gpu_kernels.GPU_KERNEL_OPS


def get_kernel(op_type: str, device_type: str = "CPU") -> KernelDef:
    """The kernel of `op_type` on `device_type`.

    Raises:
      NotFoundError: naming the op, the device type and the types that have a kernel.
    """
    k = _KERNELS.get((op_type, device_type)) or _mirrored_kernel(op_type, device_type)
    if k is None:
        from tensorweave.framework import errors
        have = kernel_device_types(op_type)
        reason = host_only_reason(op_type) if device_type in ACCELERATOR_TYPES else None
        if reason is None and device_type == "GPU" and (op_type, "CPU") in _KERNELS:
            reason = "its CPU kernel is not among those that run on CuPy arrays " \
                     "(tensorweave/framework/gpu_kernels.py)"
        raise errors.NotFoundError(
            None, None, "No kernel registered for op %r on device type %s (kernels exist "
            "for: %s)%s" % (op_type, device_type, ", ".join(have) or "no device",
                            "; " + reason if reason else ""))
    return k


def has_kernel(op_type: str, device_type: str = "CPU") -> bool:
    """Whether `op_type` has a kernel on `device_type` (registered, or its CPU kernel
    serving an accelerator type)."""
    return (op_type, device_type) in _KERNELS or \
        _mirrored_kernel(op_type, device_type) is not None


def _priority(device_type: str) -> int:
    return _DEVICE_PRIORITY.get(device_type, 50)


def kernel_device_types(op_type: str) -> List[str]:
    """The device types with a kernel for `op_type`, the preferred first (accelerators
    before CPU, as TF1 ranks devices)."""
    types = {d for (t, d) in _KERNELS if t == op_type}
    types.update(d for d in ACCELERATOR_TYPES if _mirrored_kernel(op_type, d) is not None)
    return sorted(types, key=lambda d: (-_priority(d), d))


def preferred_device_types(op_type: str, available_types: Sequence[str]) -> List[str]:
    """The types of `available_types` that have a kernel for `op_type`, in TF1's order
    of preference: an accelerator before the CPU; ties keep the order given."""
    seen = []
    for d in available_types:
        if d not in seen and has_kernel(op_type, d):
            seen.append(d)
    return sorted(seen, key=lambda d: -_priority(d))


def gradient(op_type: str, needs_call: bool = False) -> Callable:
    """Decorator registering the gradient function of `op_type`:
    `fn(op, *output_grads) -> list of input grads (None where not differentiable)`.

    With `needs_call`, tf.gradients also passes `call=` the GradientCall being built
    (autodiff/gradient_call.py): the control-flow bookkeeping of that computation, which
    the gradients of Merge, Switch and TensorArray ops need; every other gradient stays
    a pure function of the op and its output gradients."""
    where = _caller()

    def deco(fn):
        if op_type in _GRADIENTS:
            raise KeyError("Registering two gradient with name '%s'! (Previous registration "
                           "was in %s)" % (op_type, _GRADIENTS[op_type][1]))
        _GRADIENTS[op_type] = (fn, where)
        if needs_call:
            _NEEDS_CALL.add(op_type)
        return fn
    return deco


def not_differentiable(op_type: str) -> None:
    """Declares that `op_type` has no gradient (its inputs get None)."""
    where = _caller()
    if op_type in _GRADIENTS:
        raise KeyError("Registering two gradient with name '%s'! (Previous registration was "
                       "in %s)" % (op_type, _GRADIENTS[op_type][1]))
    _GRADIENTS[op_type] = (None, where)


def get_gradient(op_type: str):
    """(found, fn): fn is None for a not-differentiable op."""
    entry = _GRADIENTS.get(op_type)
    if entry is None:
        return False, None
    return True, entry[0]


def gradient_needs_call(op_type: str) -> bool:
    """Whether the gradient of `op_type` was registered with `needs_call=True`."""
    return op_type in _NEEDS_CALL


def has_gradient_entry(op_type: str) -> bool:
    return op_type in _GRADIENTS
