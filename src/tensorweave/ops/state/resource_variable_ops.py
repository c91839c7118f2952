"""The resource-variable ops: handle, read, assign, scatter, gather.

A variable lives in the resource manager of the device that ran its VarHandleOp (see
runtime/resources.py), keyed by (container, shared_name). The VarHandleOp kernel only
names it: its output is a `ResourceHandle`; AssignVariableOp creates the variable on
first use, the other ops look it up.

Invariants of a `VariableResource` (they make reads cheap and concurrent steps safe):
  * `value` is None (uninitialized) or a read-only array that the resource may share with
    readers. A read returns that array itself: a snapshot, since
  * nobody mutates an array a reader may hold. Updates either replace `value` by a new
    array (copy-on-write) or, when `sys.getrefcount` proves the resource holds the only
    reference (no read in flight, no fetched result, no view), update it in place.
    Sparse updates of a sole-owned array therefore touch only the scattered rows.
  * every read and every update runs under `lock`, so read-modify-write updates
    (assign_add, scatter_*) are atomic, whatever `use_locking` says (TF's resource
    kernels always lock too).
  * all checks run before any change: a failing op leaves the variable as it was.

Kernels of other families that update a variable (optimizers' ResourceApply* ops)
follow the same protocol:

    var = lookup_variable(handle, ctx.op)
    with var.lock:
        value = current_value(var, handle, ctx.op)   # validate against it first
        del value
        arr = var.writable_value()                   # in place when safe, else a copy
        arr -= lr * grad
        var.publish(arr)

Kernels here are CPU-only (NumPy): the runtime has no other device type yet.
"""
from __future__ import annotations

import sys
import threading
import weakref
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, as_shape, unknown_shape
from tensorweave.ops.array import array_ops
from tensorweave.ops.group_fold import fold_in_groups, stable_order
from tensorweave.ops.indexing.indexing_ops import outside
from tensorweave.runtime.optimizer import TEMPORARY_VALUE_ATTR

_INDEX_TYPES = (_dt.int32, _dt.int64)


# --- run-time objects ---------------------------------------------------------------------
class ResourceHandle:
    """The run-time value of a resource tensor: names a resource in one device's
    ResourceManager (`manager`), so kernels find it wherever the handle flows. `shape` is
    the variable's declared (static) shape; `ref_style` says the variable stands for a TF1
    reference variable, whose validated assignments keep its current shape. `cached` is
    (manager generation, weak reference to the variable) of the last successful
    `lookup_variable`, or None: one tuple, stored in one assignment, so concurrent
    lookups never pair a generation with another generation's variable. Weak, so that
    a destroyed or reset variable's memory is freed at once; while the generation is
    unchanged the manager still holds the variable, so the reference is alive."""

    __slots__ = ("container", "name", "manager", "dtype", "shape", "ref_style", "cached")

    def __init__(self, container: str, name: str, manager, dtype: _dt.DType,
                 shape: TensorShape, ref_style: bool = False):
        self.container, self.name, self.manager = container, name, manager
        self.dtype, self.shape, self.ref_style = dtype, shape, ref_style
        self.cached = None

    def __repr__(self):
        return "<ResourceHandle %s/%s on %s>" % (self.container or "localhost", self.name,
                                                self.manager.device_name)


class VariableResource:
    """A variable's state: its dtype, current value (see the module invariants), lock."""

    __slots__ = ("dtype", "value", "lock", "name", "__weakref__")

    def __init__(self, dtype: _dt.DType, name: str):
        self.dtype = dtype
        self.value: Optional[np.ndarray] = None
        self.lock = threading.Lock()
        self.name = name

    def sole_owner(self) -> bool:
        """True when `value` is referenced only by this resource (call under `lock`)."""
        # 2 = the slot of this object + getrefcount's own argument.
        return _getrefcount(self.value) <= 2

    def writable_value(self) -> np.ndarray:
        """The array to update (call under `lock`): `value` itself, made writable, when
        the resource is its only owner, else a private copy. Pass it to `publish`."""
        return writable_values((self,))[0]

    def publish(self, arr: np.ndarray) -> None:
        """Installs `arr` (read-only from now on) as the value (call under `lock`)."""
        publish_values((self,), (arr,))


_getrefcount = sys.getrefcount


def writable_values(resources) -> list:
    """`writable_value()` of each variable (all locked by the caller), in one call: the
    update kernels of optimizers run once per variable per training step. A variable
    listed twice gets its own array first and a copy second (the list holds the first),
    as with successive `writable_value()` calls."""
    # sole_owner() inlined: 2 = the resource's slot + getrefcount's own argument, so the
    # test comes before any local name binds the value
    arrays = [r.value if _getrefcount(r.value) <= 2 and r.value.flags.owndata
              else _copy(r.value) for r in resources]
    for arr in arrays:
        if type(arr) is np.ndarray:
            arr.setflags(True)
        else:
            _set_writeable(arr, True)
    return arrays


def publish_values(resources, arrays) -> None:
    """`publish(array)` of each variable (all locked by the caller), in one call."""
    for r, arr in zip(resources, arrays):
        if type(arr) is np.ndarray:
            arr.setflags(False)
        else:
            _set_writeable(arr, False)
        r.value = arr


def _copy(value):
    """A private copy of an array in its own memory (host or GPU)."""
    if type(value) is np.ndarray or not hasattr(value, "__cuda_array_interface__"):
        return np.array(value, copy=True)
    return value.copy()  # a CuPy array


def _set_writeable(arr, flag: bool) -> None:
    # only NumPy arrays can be made read-only; a GPU value is guarded by contract alone
    if type(arr) is np.ndarray or (isinstance(arr, np.ndarray)
                                   and not hasattr(arr, "__cuda_array_interface__")):
        arr.setflags(flag)


def lookup_variable(handle: ResourceHandle, op) -> VariableResource:
    """The variable `handle` names, or FailedPreconditionError if it does not exist.
    Hot kernels inline the cache test of the first two lines."""
    cached = handle.cached
    if cached is not None and cached[0] == handle.manager.generation:
        return cached[1]()
    return _lookup_and_cache(handle, op)


def _lookup_and_cache(handle: ResourceHandle, op) -> VariableResource:
    """`lookup_variable` through the resource manager; caches the variable found in the
    handle, with the manager's generation read before the lookup (a removal racing with
    the lookup then invalidates the entry, never leaves a stale one valid)."""
    manager = handle.manager
    generation = manager.generation
    try:
        var = manager.lookup(handle.container, handle.name)
    except errors.NotFoundError:
        raise errors.FailedPreconditionError(None, op, _uninitialized_message(handle)) \
            from None
    if not isinstance(var, VariableResource):
        raise errors.InvalidArgumentError(None, op, "Resource %s/%s is not a variable"
                                          % (handle.container or "localhost", handle.name))
    handle.cached = (generation, weakref.ref(var))
    return var


def lookup_variables(handles, op) -> list:
    """`lookup_variable` of each handle, in one call (update kernels of several
    variables run once per variable per training step)."""
    return [c[1]() if (c := h.cached) is not None and c[0] == h.manager.generation
            else _lookup_and_cache(h, op) for h in handles]


def _uninitialized_message(handle: ResourceHandle) -> str:
    c = handle.container or "localhost"
    return ("Attempting to use uninitialized value %s. Error while reading resource variable "
            "%s from Container: %s. This could mean that the variable was uninitialized. "
            "Not found: Resource %s/%s does not exist. (Run its initializer first, e.g. "
            "sess.run(tf.global_variables_initializer()).)" % (handle.name, handle.name, c,
                                                               c, handle.name))


def _check_dtype(var: VariableResource, want: _dt.DType, op, what: str) -> None:
    if var.dtype is not want:
        raise errors.InvalidArgumentError(
            None, op, "Trying to %s variable with wrong dtype. Expected %s got %s"
            % (what, _dt.type_string(var.dtype), _dt.type_string(want)))


def current_value(var: VariableResource, handle: ResourceHandle, op) -> np.ndarray:
    """The value of `var` (call under its lock); FailedPrecondition if uninitialized."""
    v = var.value
    if v is None:
        raise errors.FailedPreconditionError(None, op, _uninitialized_message(handle))
    return v


def _shape_str(shape) -> str:
    return "[%s]" % ",".join(str(d) for d in shape)


def _owned_copy(value: np.ndarray) -> np.ndarray:
    """A read-only array the variable may keep: `value` itself when it is immutable by
    contract (read-only and owning its data: constants, other variables' values), else a
    private copy (a fed array stays the caller's)."""
    if isinstance(value, np.ndarray) and not value.flags.writeable and value.flags.owndata:
        return value
    arr = _copy(value)
    _set_writeable(arr, False)
    return arr


# --- static shapes ------------------------------------------------------------------------
def handle_source(handle):
    """The tensor a resource handle was forwarded from, through Identity and control
    flow (a handle entered into a loop or switched into a cond names the same
    resource)."""
    t = handle
    while t.op.type in FORWARDING_OPS and t.op.inputs:
        t = t.op.inputs[0]
    return t


# ops whose first output is their first input, passed on
FORWARDING_OPS = frozenset(("Identity", "Enter", "Switch", "Merge", "Exit", "NextIteration",
                         "RefEnter", "RefSwitch"))


def handle_shape(handle) -> TensorShape:
    """The static shape of the variable a resource tensor names (unknown if not known)."""
    t = handle_source(handle)
    if t.op.type == "VarHandleOp":
        return t.op._get_attr("shape")
    return unknown_shape()


def _no_outputs(op):
    return []


# --- VarHandleOp --------------------------------------------------------------------------
register_op("VarHandleOp", outputs=["resource: resource"],
            attrs={"container": "", "shared_name": "", "dtype": TypeAttr(),
                   "shape": REQUIRED, "allowed_devices": []},
            shape=lambda op: TensorShape([]), stateful=True)


@kernel("VarHandleOp")
def _var_handle_kernel(ctx):
    state = ctx.state
    h = state["handle"] if "handle" in state else None  # no call: one runs per variable
    if h is None or h.manager is not ctx.resources:
        a = ctx.attrs
        h = ResourceHandle(a["container"], a["shared_name"] or ctx.op.name, ctx.resources,
                           a["dtype"], a["shape"],
                           ref_style=bool(ctx.op._attrs.get(REF_VARIABLE_ATTR)))
        ctx.state["handle"] = h
    return h


not_differentiable("VarHandleOp")


def var_handle_op(dtype, shape, container: str = "", shared_name: str = "",
                  name: Optional[str] = None):
    """A handle to the variable named `shared_name` in `container` (TF raw op)."""
    return apply_op("VarHandleOp", [], {"dtype": _dt.as_dtype(dtype), "shape": as_shape(shape),
                                         "container": container or "",
                                         "shared_name": shared_name or ""},
                    name=name or "VarHandleOp").outputs[0]


# --- reads --------------------------------------------------------------------------------
register_op("ReadVariableOp", inputs=["resource: resource"], outputs=["value: dtype"],
            attrs={"dtype": TypeAttr()}, shape=lambda op: handle_shape(op.inputs[0]),
            stateful=True)


@kernel("ReadVariableOp")
def _read_kernel(ctx, handle):
    cached = handle.cached  # lookup_variable inlined: a read runs once per variable
    if cached is not None and cached[0] == handle.manager.generation:
        var = cached[1]()
    else:
        var = _lookup_and_cache(handle, ctx.op)
    with var.lock:
        value = var.value
    if value is None:
        raise errors.FailedPreconditionError(None, ctx.op, _uninitialized_message(handle))
    if var.dtype is not ctx.attrs["dtype"]:  # inline test: the read runs once per variable
        _check_dtype(var, ctx.attrs["dtype"], ctx.op, "read")
    return value


@gradient("ReadVariableOp")
def _read_grad(op, grad):
    return [grad]


def read_variable_op(resource, dtype, name: Optional[str] = None):
    """The current value of the variable `resource` names (a snapshot)."""
    return apply_op("ReadVariableOp", [resource], {"dtype": _dt.as_dtype(dtype)},
                    name=name or "ReadVariableOp").outputs[0]


register_op("VarIsInitializedOp", inputs=["resource: resource"],
            outputs=["is_initialized: bool"], shape=lambda op: TensorShape([]),
            stateful=True)


@kernel("VarIsInitializedOp")
def _is_initialized_kernel(ctx, handle):
    try:
        var = handle.manager.lookup(handle.container, handle.name)
    except errors.NotFoundError:
        return np.array(False)
    return np.array(getattr(var, "value", None) is not None)


not_differentiable("VarIsInitializedOp")


def var_is_initialized_op(resource, name: Optional[str] = None):
    """A scalar bool: whether the variable `resource` names holds a value."""
    return apply_op("VarIsInitializedOp", [resource],
                    name=name or "VarIsInitializedOp").outputs[0]


register_op("VariableShape", inputs=["input: resource"], outputs=["output: out_type"],
            attrs={"out_type": TypeAttr(_INDEX_TYPES, default=_dt.int32)},
            shape=lambda op: TensorShape([handle_shape(op.inputs[0]).ndims]),
            stateful=True)


@kernel("VariableShape")
def _variable_shape_kernel(ctx, handle):
    var = lookup_variable(handle, ctx.op)
    with var.lock:
        value = current_value(var, handle, ctx.op)
    return np.array(value.shape, dtype=ctx.attrs["out_type"].as_numpy_dtype)


not_differentiable("VariableShape")


def variable_shape(handle, out_type=_dt.int32, name: Optional[str] = None):
    """The run-time shape of a variable; a constant when its static shape is known."""
    shape = handle_shape(handle)
    if shape.is_fully_defined():
        from tensorweave.ops.array.constant_op import constant
        return constant(shape.as_list(), dtype=out_type, name=name or "Const")
    return apply_op("VariableShape", [handle], {"out_type": _dt.as_dtype(out_type)},
                    name=name or "VariableShape").outputs[0]


# A private op for Variable.initialized_value(): the variable's value if it is
# initialized, else `default` (TF1 builds cond(is_initialized, read, initial_value)).
register_op("_ReadVariableOrDefault", inputs=["resource: resource", "default: dtype"],
            outputs=["value: dtype"], attrs={"dtype": TypeAttr()},
            shape=lambda op: op.inputs[1].shape.merge_with(handle_shape(op.inputs[0]))
            if op.inputs[1].shape.is_compatible_with(handle_shape(op.inputs[0]))
            else op.inputs[1].shape, stateful=True)


@kernel("_ReadVariableOrDefault")
def _read_or_default_kernel(ctx, handle, default):
    try:
        var = handle.manager.lookup(handle.container, handle.name)
    except errors.NotFoundError:
        return default
    with var.lock:
        value = var.value
    return default if value is None else value


not_differentiable("_ReadVariableOrDefault")


def read_variable_or_default(resource, default, name: Optional[str] = None):
    return apply_op("_ReadVariableOrDefault", [resource, default],
                    name=name or "ReadVariableOrDefault").outputs[0]


# --- dense assignments --------------------------------------------------------------------
def _assign_shape(op):
    var_shape = handle_shape(op.inputs[0])
    if op._get_attr("validate_shape") and not var_shape.is_compatible_with(op.inputs[1].shape):
        raise ValueError("Trying to assign to variable with tensor with wrong shape. Expected "
                         "%s got %s" % (var_shape, op.inputs[1].shape))
    return []


register_op("AssignVariableOp", inputs=["resource: resource", "value: dtype"],
            attrs={"dtype": TypeAttr(), "validate_shape": False}, shape=_assign_shape,
            stateful=True)


@kernel("AssignVariableOp")
def _assign_kernel(ctx, handle, value):
    dtype = ctx.attrs["dtype"]
    var = handle.manager.lookup_or_create(handle.container, handle.name,
                                          lambda: VariableResource(dtype, handle.name))
    _check_dtype(var, dtype, ctx.op, "assign")
    # validate_shape: the value must fit the variable's declared shape (TF's
    # AssignVariableOp) and, for a TF1 reference variable, its current value's shape
    # (TF1's Assign), which a resource variable may change where its shape is partial
    validate = ctx.attrs["validate_shape"]
    if validate and not handle.shape.is_compatible_with(value.shape):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Trying to assign to variable with tensor with wrong shape. "
            "Expected %s got %s" % (_shape_str(handle.shape.as_list()), _shape_str(value.shape)))
    if ctx.attrs.get(TEMPORARY_VALUE_ATTR) and type(value) is np.ndarray and \
            value.flags.owndata and value.flags.c_contiguous and \
            value.dtype == dtype.as_numpy_dtype:
        # a fresh result nothing else reads (runtime/optimizer.mark_temporaries):
        # kept, read-only, rather than copied
        value.setflags(write=False)
        new = value
    else:
        new = _owned_copy(value)
    with var.lock:
        old = var.value
        if validate and handle.ref_style and old is not None and old.shape != new.shape:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Trying to assign to variable with tensor with wrong shape. "
                "Expected %s got %s" % (_shape_str(old.shape), _shape_str(new.shape)))
        var.value = new
    return None


not_differentiable("AssignVariableOp")


def assign_variable_op(resource, value, validate_shape: bool = False,
                       name: Optional[str] = None):
    """Replaces the variable's value by `value` (creating the variable if needed)."""
    return apply_op("AssignVariableOp", [resource, value], {"validate_shape": validate_shape},
                    name=name or "AssignVariableOp")


def _update_shape(op):
    var_shape = handle_shape(op.inputs[0])
    value_shape = op.inputs[1].shape
    try:
        var_shape.merge_with(value_shape)
    except ValueError:
        raise ValueError("Shapes %s and %s must be equal for an update of the variable"
                         % (var_shape, value_shape)) from None
    return []


def _make_update_kernel(op_type: str, ufunc):
    @kernel(op_type)
    def _update_kernel(ctx, handle, value):
        var = lookup_variable(handle, ctx.op)
        _check_dtype(var, ctx.attrs["dtype"], ctx.op, "update")
        with var.lock:
            old = current_value(var, handle, ctx.op)
            if old.shape != value.shape:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Cannot update variable with shape %s using a Tensor with "
                    "shape %s, shapes must be equal." % (_shape_str(old.shape),
                                                         _shape_str(value.shape)))
            del old
            if var.sole_owner() and var.value.flags.owndata:
                arr = var.writable_value()
                ufunc(arr, value, out=arr)
            else:
                arr = ctx.xp.asarray(ufunc(var.value, value))
            var.publish(arr)
        return None
    return _update_kernel


for _op_type, _ufunc in (("AssignAddVariableOp", np.add), ("AssignSubVariableOp", np.subtract)):
    register_op(_op_type, inputs=["resource: resource", "value: dtype"],
                attrs={"dtype": TypeAttr(_dt.NUMBERS)}, shape=_update_shape, stateful=True)
    _make_update_kernel(_op_type, _ufunc)
    not_differentiable(_op_type)


def assign_add_variable_op(resource, value, name: Optional[str] = None):
    """Adds `value` to the variable, atomically."""
    return apply_op("AssignAddVariableOp", [resource, value],
                    name=name or "AssignAddVariableOp")


def assign_sub_variable_op(resource, value, name: Optional[str] = None):
    """Subtracts `value` from the variable, atomically."""
    return apply_op("AssignSubVariableOp", [resource, value],
                    name=name or "AssignSubVariableOp")


# --- gather -------------------------------------------------------------------------------
def _gather_shape(op):
    var_shape = handle_shape(op.inputs[0])
    if op._get_attr("batch_dims") != 0:
        raise ValueError("ResourceGather with batch_dims != 0 is not supported")
    if var_shape.ndims is None:
        return unknown_shape()
    var_shape.with_rank_at_least(1)
    return op.inputs[1].shape.concatenate(var_shape[1:])


register_op("ResourceGather", inputs=["resource: resource", "indices: Tindices"],
            outputs=["output: dtype"],
            attrs={"batch_dims": 0, "validate_indices": True, "dtype": TypeAttr(),
                   "Tindices": TypeAttr(_INDEX_TYPES)},
            shape=_gather_shape, stateful=True)


def _check_indices(ctx, indices: np.ndarray, n: int) -> None:
    if outside(indices, n):
        flat = indices.reshape(-1)
        bad = int(np.flatnonzero((flat < 0) | (flat >= n))[0])
        raise errors.InvalidArgumentError(
            None, ctx.op, "indices[%d] = %d is not in [0, %d)" % (bad, int(flat[bad]), n))


@kernel("ResourceGather")
def _gather_kernel(ctx, handle, indices):
    var = lookup_variable(handle, ctx.op)
    with var.lock:
        value = current_value(var, handle, ctx.op)
    _check_dtype(var, ctx.attrs["dtype"], ctx.op, "read")
    if value.ndim == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "params must be at least 1 "
                                          "dimensional")
    _check_indices(ctx, indices, value.shape[0])
    return np.take(value, indices, axis=0)


@gradient("ResourceGather")
def _gather_grad(op, grad):
    handle, indices = op.inputs
    var_shape = handle_shape(handle)
    dense_shape = variable_shape(handle)
    if isinstance(grad, IndexedSlices):  # a gather of the gathered rows
        if indices.shape.ndims == 1:
            from tensorweave.ops.indexing.indexing_gather import gather
            return [IndexedSlices(grad.values, gather(indices, grad.indices), dense_shape),
                    None]
        grad = convert_to_tensor(grad)
    if indices.shape.ndims == 1 and grad.shape.ndims is not None and \
            grad.shape.ndims == var_shape.ndims:
        return [IndexedSlices(grad, indices, dense_shape), None]
    size = array_ops.expand_dims(array_ops.size(indices), 0)
    values_shape = array_ops.concat([size, dense_shape[1:]], 0)
    values = array_ops.reshape(grad, values_shape)
    flat_indices = array_ops.reshape(indices, size)
    return [IndexedSlices(values, flat_indices, dense_shape), None]


def resource_gather(resource, indices, dtype, batch_dims: int = 0,
                    validate_indices: bool = True, name: Optional[str] = None):
    """Rows `indices` of the variable (gradient: IndexedSlices w.r.t. the handle)."""
    return apply_op("ResourceGather", [resource, indices],
                    {"dtype": _dt.as_dtype(dtype), "batch_dims": batch_dims,
                     "validate_indices": validate_indices},
                    name=name or "ResourceGather").outputs[0]


# --- sparse updates -----------------------------------------------------------------------
def _scatter_shape(op):
    var_shape = handle_shape(op.inputs[0])
    indices, updates = op.inputs[1].shape, op.inputs[2].shape
    if updates.ndims == 0 or var_shape.ndims is None or indices.ndims is None:
        return []
    want = indices.concatenate(var_shape[1:])
    if not want.is_compatible_with(updates):
        raise ValueError("Must have updates.shape = indices.shape + params.shape[1:] or "
                         "updates.shape = [], got updates.shape %s, indices.shape %s, "
                         "params.shape %s" % (updates, indices, var_shape))
    return []


def _div_at(arr, idx, upd):
    if arr.dtype.kind in "iu":
        # Truncating integer division by several divisors equals division by their
        # product, so duplicates are combined first (one division per row).
        uniq, inv = np.unique(idx, return_inverse=True)
        divisor = np.ones((len(uniq),) + arr.shape[1:], dtype=arr.dtype)
        np.multiply.at(divisor, inv, upd)
        rows = arr[uniq]
        q = np.abs(rows) // np.abs(divisor)
        arr[uniq] = np.where((rows < 0) != (divisor < 0), -q, q).astype(arr.dtype)
    else:
        np.divide.at(arr, idx, upd)


def _update_at(arr, idx, upd):
    arr[idx] = upd


_SMALL_SCATTER = 1024  # updated elements (NumPy 2's ufunc.at is quick on small inputs)


def _row_size(arr: np.ndarray) -> int:
    return arr.size // arr.shape[0] if arr.shape[0] else 0


def _accumulate_at(ufunc):
    """`ufunc.at(arr, idx, upd)` (a repeated index is applied again, in order), with the
    first occurrence of each index done by fancy indexing: several times faster than
    `ufunc.at` alone for an embedding update of a few hundred rows, and the same result
    to the bit (each row still sees its updates in their original order). Below
    _SMALL_SCATTER updated elements `ufunc.at` alone is the faster."""
    def at(arr, idx, upd):
        flat = idx.reshape(-1)
        if flat.size < 2 or flat.size * _row_size(arr) < _SMALL_SCATTER:
            ufunc.at(arr, idx, upd)
            return
        rows = upd if upd.ndim == 0 else upd.reshape((flat.size,) + arr.shape[1:])
        order = stable_order(flat)
        ordered = flat[order]
        repeat = ordered[1:] == ordered[:-1]
        if not repeat.any():
            arr[flat] = ufunc(arr[flat], rows)
            return
        is_first = np.concatenate(([True], ~repeat))
        if upd.ndim and upd.dtype == arr.dtype and \
                flat.size - np.count_nonzero(is_first) >= _MANY_REPEATS:
            # word2vec's Zipf batches: 93 -> 61 us; 4096 updates of 1000 rows (a gather_nd
            # gradient): 985 -> 270 us (TensorFlow 290)
            index, out = fold_in_groups(ufunc, arr.__getitem__, flat, rows, order)
            arr[index] = out
            return
        first = order[is_first]
        later = np.sort(order[~is_first])
        arr[flat[first]] = ufunc(arr[flat[first]], rows if upd.ndim == 0 else rows[first])
        ufunc.at(arr, flat[later], rows if upd.ndim == 0 else rows[later])
    return at


# repeated occurrences from which `fold_in_groups` beats ufunc.at for them (a
# handful, as in 512 ids drawn from 100,000, cost ufunc.at little)
_MANY_REPEATS = 32


_SCATTER_FNS = {
    "ResourceScatterUpdate": _update_at,
    "ResourceScatterAdd": _accumulate_at(np.add),
    "ResourceScatterSub": _accumulate_at(np.subtract),
    "ResourceScatterMul": np.multiply.at,
    "ResourceScatterDiv": _div_at,
    "ResourceScatterMin": np.minimum.at,
    "ResourceScatterMax": np.maximum.at,
}


def _apply_sparse(ctx, handle, fn, check):
    """Runs `fn(array)` on a writable array of the variable under its lock, after
    `check(value)` (which raises on bad input); see the module invariants."""
    var = lookup_variable(handle, ctx.op)
    _check_dtype(var, ctx.attrs.get("dtype") or ctx.attrs.get("T"), ctx.op, "update")
    with var.lock:
        check(current_value(var, handle, ctx.op))
        arr = var.writable_value()
        try:
            fn(arr)
        except BaseException:
            if arr is var.value:
                arr.setflags(write=False)
            raise
        var.publish(arr)


def _make_scatter_kernel(op_type: str, at_fn):
    @kernel(op_type)
    def _scatter_kernel(ctx, handle, indices, updates):
        def check(value):
            if value.ndim == 0:
                raise errors.InvalidArgumentError(None, ctx.op, "params must be at least 1-D")
            _check_indices(ctx, indices, value.shape[0])
            want = indices.shape + value.shape[1:]
            if updates.ndim and updates.shape != want:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Must have updates.shape = indices.shape + params.shape[1:] "
                    "or updates.shape = [], got updates.shape %s, indices.shape %s, "
                    "params.shape %s" % (_shape_str(updates.shape), _shape_str(indices.shape),
                                         _shape_str(value.shape)))
        _apply_sparse(ctx, handle, lambda arr: at_fn(arr, indices, updates), check)
        return None
    return _scatter_kernel


for _op_type, _fn in _SCATTER_FNS.items():
    register_op(_op_type, inputs=["resource: resource", "indices: Tindices",
                                  "updates: dtype"],
                attrs={"dtype": TypeAttr(None if _op_type == "ResourceScatterUpdate"
                                         else _dt.NUMBERS if _op_type in (
                                             "ResourceScatterAdd", "ResourceScatterSub",
                                             "ResourceScatterMul", "ResourceScatterDiv")
                                         else _dt.REAL_NUMBERS),
                       "Tindices": TypeAttr(_INDEX_TYPES)},
                shape=_scatter_shape, stateful=True)
    _make_scatter_kernel(_op_type, _fn)
    not_differentiable(_op_type)


def _scatter_builder(op_type: str):
    def build(resource, indices, updates, name: Optional[str] = None):
        return apply_op(op_type, [resource, indices, updates], name=name or op_type)
    build.__name__ = "".join("_" + c.lower() if c.isupper() else c for c in op_type)[1:]
    build.__doc__ = "Applies %s to rows `indices` of the variable, atomically." % op_type
    return build


resource_scatter_update = _scatter_builder("ResourceScatterUpdate")
resource_scatter_add = _scatter_builder("ResourceScatterAdd")
resource_scatter_sub = _scatter_builder("ResourceScatterSub")
resource_scatter_mul = _scatter_builder("ResourceScatterMul")
resource_scatter_div = _scatter_builder("ResourceScatterDiv")
resource_scatter_min = _scatter_builder("ResourceScatterMin")
resource_scatter_max = _scatter_builder("ResourceScatterMax")


def _scatter_nd_shape(op):
    var_shape = handle_shape(op.inputs[0])
    indices, updates = op.inputs[1].shape, op.inputs[2].shape
    if var_shape.ndims is None or indices.ndims is None or indices[-1].value is None:
        return []
    k = indices[-1].value
    if k > var_shape.ndims:
        raise ValueError("The last dimension of indices (%d) must be <= the rank of the "
                         "variable (%d)" % (k, var_shape.ndims))
    want = indices[:-1].concatenate(var_shape[k:])
    if not want.is_compatible_with(updates):
        raise ValueError("updates has shape %s but must have shape indices.shape[:-1] + "
                         "ref.shape[indices.shape[-1]:] = %s" % (updates, want))
    return []


def _nd_update_at(arr, idx, upd):
    arr[idx] = upd


_SCATTER_ND_FNS = {
    "ResourceScatterNdUpdate": _nd_update_at,
    "ResourceScatterNdAdd": np.add.at,
    "ResourceScatterNdSub": np.subtract.at,
}


def _make_scatter_nd_kernel(op_type: str, at_fn):
    @kernel(op_type)
    def _scatter_nd_kernel(ctx, handle, indices, updates):
        k = indices.shape[-1] if indices.ndim else 0
        idx = tuple(np.moveaxis(indices, -1, 0)) if indices.ndim else ()

        def check(value):
            if indices.ndim == 0 or k > value.ndim:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Dimensions [0,%d) of indices[shape=%s] must index into "
                    "the variable of shape %s" % (k, _shape_str(indices.shape),
                                                  _shape_str(value.shape)))
            for d in range(k):
                col = indices[..., d]
                if col.size and (col.min() < 0 or col.max() >= value.shape[d]):
                    flat = indices.reshape(-1, k)
                    bad = int(np.flatnonzero((flat < 0).any(1) | (flat >= np.array(
                        value.shape[:k])).any(1))[0])
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "indices[%d] = [%s] does not index into shape %s"
                        % (bad, ", ".join(str(int(i)) for i in flat[bad]),
                           _shape_str(value.shape)))
            want = indices.shape[:-1] + value.shape[k:]
            if updates.shape != want:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "updates has shape %s but must have shape %s "
                    "(indices.shape[:-1] + ref.shape[indices.shape[-1]:])"
                    % (_shape_str(updates.shape), _shape_str(want)))
        _apply_sparse(ctx, handle, lambda arr: at_fn(arr, idx, updates), check)
        return None
    return _scatter_nd_kernel


for _op_type, _fn in _SCATTER_ND_FNS.items():
    register_op(_op_type, inputs=["ref: resource", "indices: Tindices", "updates: T"],
                attrs={"T": TypeAttr(None if _op_type == "ResourceScatterNdUpdate"
                                     else _dt.NUMBERS),
                       "Tindices": TypeAttr(_INDEX_TYPES), "use_locking": True},
                shape=_scatter_nd_shape, stateful=True)
    _make_scatter_nd_kernel(_op_type, _fn)
    not_differentiable(_op_type)


def _scatter_nd_builder(op_type: str):
    def build(ref, indices, updates, use_locking: bool = True, name: Optional[str] = None):
        return apply_op(op_type, [ref, indices, updates], {"use_locking": use_locking},
                        name=name or op_type)
    build.__doc__ = "Applies %s at the n-d `indices` of the variable, atomically." % op_type
    return build


resource_scatter_nd_update = _scatter_nd_builder("ResourceScatterNdUpdate")
resource_scatter_nd_add = _scatter_nd_builder("ResourceScatterNdAdd")
resource_scatter_nd_sub = _scatter_nd_builder("ResourceScatterNdSub")


# --- count_up_to, destroy -----------------------------------------------------------------
register_op("ResourceCountUpTo", inputs=["resource: resource"], outputs=["output: T"],
            attrs={"limit": REQUIRED, "T": TypeAttr(_INDEX_TYPES)},
            shape=lambda op: TensorShape([]), stateful=True)


@kernel("ResourceCountUpTo")
def _count_up_to_kernel(ctx, handle):
    var = lookup_variable(handle, ctx.op)
    _check_dtype(var, ctx.attrs["T"], ctx.op, "update")
    limit = ctx.attrs["limit"]
    with var.lock:
        before = current_value(var, handle, ctx.op)
        if before.ndim != 0:
            raise errors.InvalidArgumentError(None, ctx.op, "input is not a scalar: %s"
                                              % _shape_str(before.shape))
        if before >= limit:
            raise errors.OutOfRangeError(None, ctx.op, "Reached limit of %d" % limit)
        var.publish(np.array(before + 1, dtype=before.dtype))
    return before


not_differentiable("ResourceCountUpTo")


def resource_count_up_to(resource, limit: int, T, name: Optional[str] = None):
    return apply_op("ResourceCountUpTo", [resource], {"limit": int(limit),
                                                       "T": _dt.as_dtype(T)},
                    name=name or "ResourceCountUpTo").outputs[0]


# TF 2's save graphs read variables after this op, which stops its copy-on-read mode;
# variables here are never copied on read, so it has nothing to do
register_op("DisableCopyOnRead", inputs=["resource: resource"], shape=_no_outputs,
            stateful=True)


@kernel("DisableCopyOnRead")
def _disable_copy_on_read_kernel(ctx, handle):
    return None


not_differentiable("DisableCopyOnRead")


register_op("DestroyResourceOp", inputs=["resource: resource"],
            attrs={"ignore_lookup_error": True}, shape=_no_outputs, stateful=True)


@kernel("DestroyResourceOp")
def _destroy_kernel(ctx, handle):
    if not ctx.attrs["ignore_lookup_error"]:
        handle.manager.lookup(handle.container, handle.name)
    handle.manager.delete(handle.container, handle.name)
    return None


not_differentiable("DestroyResourceOp")


def destroy_resource_op(resource, ignore_lookup_error: bool = True,
                        name: Optional[str] = None):
    """Deletes the resource `resource` names (a later read fails as uninitialized)."""
    return apply_op("DestroyResourceOp", [resource],
                    {"ignore_lookup_error": ignore_lookup_error},
                    name=name or "DestroyResourceOp")


def _as_handle(ref):
    handle = getattr(ref, "handle", None)
    if handle is not None:
        return handle
    t = convert_to_tensor(ref)
    if t.dtype is not _dt.resource:
        raise TypeError("Expected a Variable or a resource handle, got %r" % (ref,))
    return t
