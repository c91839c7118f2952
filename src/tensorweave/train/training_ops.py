"""Fused dense update kernels: ResourceApplyGradientDescent, ResourceApplyMomentum,
ResourceApplyAdagrad, ResourceApplyAdam (TF's op names, inputs and attrs). TF's other
training ops, which the optimizers here do not build, are in `apply_ops`.

Each does in one op, in place, what the composition of variable ops in `optimizers`
does in several (Adagrad: Mul, AssignAdd, Read, Rsqrt, Mul, Mul, AssignSub), with fewer
passes over the arrays and fewer temporaries. They exist because they measured faster
than the composition: on the update of the MLP benchmark's four variables (784x100,
100, 100x10, 10; update only, interleaved runs, best block), Adagrad 0.135 ms fused vs
0.175 ms composed, Momentum 0.083 vs 0.112-0.126 ms, Adam 0.267 vs 0.306 ms. Gradient
descent (TF1 builds ResourceApplyGradientDescent for it too) gains least, having no
slots: a first fused kernel through `_apply_in_place` (0.056 ms) lost to Mul +
AssignSubVariableOp (0.047 ms); the lean kernel below wins narrowly (update only, median
of interleaved rounds: MLP variables 21.6 vs 21.8 us, cnn_train's eight variables 170 vs
173 us). The 1.4 ms a trace showed for cnn_train's W3 (3136x256) update was not a copy
(the variable owns its array and is updated in place) but the in-place subtraction (0.12
ms alone, with one inter-op thread) sharing the two cores with the BLAS threads of the
convolution gradients running at the same time; inside that step the fused W3 update
measures 0.22 ms, the Mul and AssignSubVariableOp it replaces 0.12 + 0.93 ms. Since
oneDNN runs the products, a large float32 variable's update goes to it too, into a new
array (onednn.subtract_scaled says why not in place). Sparse
updates stay compositions of ResourceGather / ResourceScatter*, which touch only the
gathered rows. tests/train/test_optimizers.py checks each kernel against its composite
formula.

The kernels follow the protocol of resource_variable_ops: lock every variable (in input
order), validate, then update `writable_value()` (in place when the variable is the sole
owner of its array, else a copy, so a read in flight keeps its snapshot) and publish.
"""
from __future__ import annotations

import sys
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.ops import onednn
from tensorweave.ops.math import split_work

_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


_RV = None  # tensorweave.ops.state.resource_variable_ops, imported on first use
_getrefcount = sys.getrefcount
_ndarray = np.ndarray
_subtract_scaled = onednn.subtract_scaled
_LARGE = onednn.ELTWISE_MIN_SIZE


def _load_rv():
    global _RV
    from tensorweave.ops.state import resource_variable_ops
    _RV = resource_variable_ops
    return _RV


def _rv():
    return _RV or _load_rv()


def _shape_fn(n_vars: int, scalar_inputs, grad_index: int):
    """Static checks: the variables and the gradient have compatible shapes, and the
    hyperparameter inputs are scalars."""
    def shape(op):
        rv = _rv()
        s = op.inputs[grad_index].shape
        for i in range(n_vars):
            var_shape = rv.handle_shape(op.inputs[i])
            if not s.is_compatible_with(var_shape):
                raise ValueError("Shapes must be equal rank and compatible: %s and %s for "
                                 "'%s' and the gradient" % (var_shape, s,
                                                            op.inputs[i].op.name))
            s = s.merge_with(var_shape)
        check_scalar_inputs(op, scalar_inputs)
        return []
    return shape


def check_scalar_inputs(op, indices) -> None:
    """Static check of an update op: its hyperparameter inputs at `indices` are
    scalars (where their rank is known)."""
    for i in indices:
        rank = op.inputs[i].shape.ndims
        if rank is not None and rank != 0:
            raise ValueError("Shape must be rank 0 but is rank %d for input %d of %s"
                             % (rank, i, op.type))


def _register(op_type: str, var_names, tensor_names, attrs=None):
    """Declares `op_type` with resource inputs `var_names` followed by T inputs
    `tensor_names`: the gradient ("grad" or "delta") and scalar hyperparameters (a name
    given as "name: type" has that type instead)."""
    inputs = ["%s: resource" % n for n in var_names] + \
        [n if ":" in n else "%s: T" % n for n in tensor_names]
    grad_index = len(var_names) + next(i for i, n in enumerate(tensor_names)
                                       if n in ("grad", "delta"))
    scalars = [i for i in range(len(var_names), len(inputs)) if i != grad_index]
    all_attrs = {"T": TypeAttr(_FLOATS), "use_locking": False}
    all_attrs.update(attrs or {})
    register_op(op_type, inputs=inputs, attrs=all_attrs, stateful=True,
                shape=_shape_fn(len(var_names), scalars, grad_index))
    not_differentiable(op_type)


def _shape_str(shape) -> str:
    return "[%s]" % ",".join(str(d) for d in shape)


def lock_variables(ctx, handles, scalars) -> tuple:
    """The first steps of an update kernel: the scalar hyperparameters `scalars` ((name,
    value) pairs) checked, the variables `handles` looked up and locked in input order,
    each checked to be initialized and of the op's type `T`. Returns (resources, locks)
    with the locks held (on an error they are released): the caller releases them with
    `release(locks)`. Kept lean (no call per variable beyond the lock's own): it runs
    once per variable per training step."""
    rv = _RV or _load_rv()
    for name, value in scalars:
        if value.ndim != 0:
            raise errors.InvalidArgumentError(None, ctx.op, "%s is not a scalar: %s"
                                              % (name, _shape_str(value.shape)))
    resources = rv.lookup_variables(handles, ctx.op)
    locks = list({r.lock: None for r in resources})  # each lock once, in input order
    for lock in locks:
        lock.acquire()
    try:
        dtype = ctx.attrs["T"]
        for r, h in zip(resources, handles):
            if r.value is None:
                rv.current_value(r, h, ctx.op)  # raises FailedPrecondition
            if r.dtype is not dtype:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Trying to update variable with wrong dtype. Expected %s "
                    "got %s" % (_dt.type_string(r.dtype), _dt.type_string(dtype)))
    except BaseException:
        release(locks)
        raise
    return resources, locks


def release(locks) -> None:
    for lock in reversed(locks):
        lock.release()


def _apply_in_place(ctx, handles, names, grad, scalars, update, replace=None) -> None:
    """Runs `update(*arrays)` on writable arrays of the variables `handles`, with every
    variable locked (in input order) and validated against `grad` and the scalar
    hyperparameters first (lock_variables); then publishes the arrays. `replace`, where
    given, is tried first on the variables' values as they are: new arrays it returns
    are published instead (None: `update` runs)."""
    resources, locks = lock_variables(ctx, handles, scalars)
    try:
        shape = grad.shape
        for r, name in zip(resources, names):
            if r.value.shape != shape:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "var and %s do not have the same shape%s %s"
                    % (name, _shape_str(r.value.shape), _shape_str(shape)))
        new = replace(*[r.value for r in resources]) if replace is not None else None
        if new is not None:
            _RV.publish_values(resources, new)
            return
        arrays = _RV.writable_values(resources)
        try:
            update(*arrays)
        finally:
            _RV.publish_values(resources, arrays)
    finally:
        release(locks)


# --- GradientDescent ----------------------------------------------------------------------
_register("ResourceApplyGradientDescent", ["var"], ["alpha", "delta"])


@kernel("ResourceApplyGradientDescent")
def _apply_gradient_descent_kernel(ctx, var, alpha, delta):
    # The most frequent update of all, so written out rather than through
    # _apply_in_place: one variable, one scalar, the same checks in the same order, the
    # variable's lookup and writable_value()/publish() inlined.
    if alpha.ndim != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "alpha is not a scalar: %s"
                                          % _shape_str(alpha.shape))
    rv = _RV or _load_rv()
    cached = var.cached
    if cached is not None and cached[0] == var.manager.generation:
        r = cached[1]()
    else:
        r = rv.lookup_variable(var, ctx.op)
    with r.lock:
        if r.value is None:
            rv.current_value(r, var, ctx.op)  # raises FailedPrecondition
        if r.dtype is not ctx.attrs["T"]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Trying to update variable with wrong dtype. Expected %s "
                "got %s" % (_dt.type_string(r.dtype), _dt.type_string(ctx.attrs["T"])))
        if r.value.shape != delta.shape:
            raise errors.InvalidArgumentError(
                None, ctx.op, "var and delta do not have the same shape%s %s"
                % (_shape_str(r.value.shape), _shape_str(delta.shape)))
        if r.value.size >= _LARGE:
            # a large float32 variable: into a new array, on every core (ops/onednn.py)
            new = _subtract_scaled(r.value, delta, alpha)
            if new is not None:
                r.publish(new)
                return
        if type(r.value) is _ndarray and _getrefcount(r.value) <= 2 and \
                r.value.flags.owndata:
            w = r.value  # sole owner (see VariableResource.writable_value)
            w.setflags(True)  # (positional: cheaper than write=)
            try:
                w -= delta * alpha
            finally:
                w.setflags(False)
        else:
            w = r.writable_value()
            try:
                w -= delta * alpha
            finally:
                r.publish(w)


def resource_apply_gradient_descent(var, alpha, delta, use_locking: bool = False,
                                    name: Optional[str] = None):
    """var -= alpha * delta, in place."""
    return apply_op("ResourceApplyGradientDescent", [var, alpha, delta],
                    {"use_locking": use_locking},
                    name=name or "ResourceApplyGradientDescent")


# --- Momentum -----------------------------------------------------------------------------
_register("ResourceApplyMomentum", ["var", "accum"], ["lr", "grad", "momentum"],
          {"use_nesterov": False})


@kernel("ResourceApplyMomentum")
def _apply_momentum_kernel(ctx, var, accum, lr, grad, momentum):
    nesterov = ctx.attrs["use_nesterov"]

    def update(w, a):
        a *= momentum
        a += grad
        if nesterov:
            step = a * (momentum * lr)
            step += grad * lr
        else:
            step = a * lr
        w -= step
    _apply_in_place(ctx, [var, accum], ["grad", "accum"], grad,
                    [("lr", lr), ("momentum", momentum)], update)


def resource_apply_momentum(var, accum, lr, grad, momentum, use_locking: bool = False,
                            use_nesterov: bool = False, name: Optional[str] = None):
    """accum = accum * momentum + grad; var -= lr * accum (nesterov: var -= lr * grad +
    lr * momentum * accum), in place."""
    return apply_op("ResourceApplyMomentum", [var, accum, lr, grad, momentum],
                    {"use_locking": use_locking, "use_nesterov": use_nesterov},
                    name=name or "ResourceApplyMomentum")


def resource_sparse_apply_momentum(var, accum, lr, grad, indices, momentum,
                                   use_locking: bool = False, use_nesterov: bool = False,
                                   name: Optional[str] = None):
    """Momentum on the rows `indices` (in order, a repeated index updated again), with
    `resource_apply_momentum`'s formulas, in place (apply_ops.py)."""
    return apply_op("ResourceSparseApplyMomentum", [var, accum, lr, grad, indices, momentum],
                    {"use_locking": use_locking, "use_nesterov": use_nesterov},
                    name=name or "ResourceSparseApplyMomentum")


# --- Adagrad ------------------------------------------------------------------------------
_register("ResourceApplyAdagrad", ["var", "accum"], ["lr", "grad"], {"update_slots": True})


@kernel("ResourceApplyAdagrad")
def _apply_adagrad_kernel(ctx, var, accum, lr, grad):
    xp = ctx.xp
    update_slots = ctx.attrs["update_slots"]

    def update(w, a):
        step = xp.empty(a.shape, a.dtype)  # one scratch array (an array even for 0-d)
        if update_slots:
            xp.multiply(grad, grad, out=step)
            a += step
        xp.sqrt(a, out=step)
        xp.divide(grad, step, out=step)
        step *= lr
        w -= step
    _apply_in_place(ctx, [var, accum], ["grad", "accum"], grad, [("lr", lr)], update)


def resource_apply_adagrad(var, accum, lr, grad, use_locking: bool = False,
                           update_slots: bool = True, name: Optional[str] = None):
    """accum += grad**2; var -= lr * grad / sqrt(accum), in place."""
    return apply_op("ResourceApplyAdagrad", [var, accum, lr, grad],
                    {"use_locking": use_locking, "update_slots": update_slots},
                    name=name or "ResourceApplyAdagrad")


def resource_sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking: bool = False,
                                  update_slots: bool = True, name: Optional[str] = None):
    """Adagrad on the rows `indices` (in order, a repeated index updated again):
    accum[i] += grad**2; var[i] -= lr * grad / sqrt(accum[i]), in place (apply_ops.py)."""
    return apply_op("ResourceSparseApplyAdagrad", [var, accum, lr, grad, indices],
                    {"use_locking": use_locking, "update_slots": update_slots},
                    name=name or "ResourceSparseApplyAdagrad")


# --- Adam ---------------------------------------------------------------------------------
_register("ResourceApplyAdam", ["var", "m", "v"],
          ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"],
          {"use_nesterov": False})


@kernel("ResourceApplyAdam")
def _apply_adam_kernel(ctx, var, m, v, beta1_power, beta2_power, lr, beta1, beta2,
                       epsilon, grad):
    xp = ctx.xp
    scalars = [("beta1_power", beta1_power), ("beta2_power", beta2_power), ("lr", lr),
               ("beta1", beta1), ("beta2", beta2), ("epsilon", epsilon)]
    nesterov = ctx.attrs["use_nesterov"]

    def update_part(w, m_, v_, g, alpha, b1, b2):
        # the same operations in the same order as written out in the docstring of
        # resource_apply_adam, with the temporaries reused (out=): tiny variables make
        # allocations a visible part of the step
        tmp = xp.empty(m_.shape, m_.dtype)  # an array even for 0-d variables
        xp.subtract(g, m_, out=tmp)
        tmp *= 1 - b1
        m_ += tmp
        xp.multiply(g, g, out=tmp)
        tmp -= v_
        tmp *= 1 - b2
        v_ += tmp
        if nesterov:
            xp.multiply(m_, beta1, out=tmp)
            tmp += g * (1 - b1)
            tmp *= alpha
        else:
            xp.multiply(m_, alpha, out=tmp)
        denom = xp.sqrt(v_)
        denom += epsilon
        tmp /= denom
        w -= tmp

    def hyperparameters():
        # (once lock_variables has checked them) [()]: combined with each other as NumPy
        # scalars, whose arithmetic is several times cheaper than 0-d arrays' and rounds
        # the same (in the variable's dtype); with arrays they stay 0-d arrays, the
        # cheaper operand
        return beta1[()], beta2[()], \
            lr[()] * xp.sqrt(1 - beta2_power[()]) / (1 - beta1_power[()])

    def update(w, m_, v_):
        b1, b2, alpha = hyperparameters()
        # a large variable chunk by chunk, on two cores where one is free (each value's
        # operations are the same, so are its bits)
        if w.size < split_work.CHUNK or not split_work.in_chunks(
                lambda *parts: update_part(*parts, alpha, b1, b2), (w, m_, v_, grad)):
            update_part(w, m_, v_, grad, alpha, b1, b2)

    def replace(w, m_, v_):
        # a large float32 variable: into new arrays, on oneDNN's threads, with the bits
        # of `update` (ops/onednn.py checks them)
        if nesterov or w.size < onednn.ADAM_MIN_SIZE:
            return None
        b1, b2, alpha = hyperparameters()
        return onednn.adam(w, m_, v_, grad, alpha, 1 - b1, 1 - b2, epsilon[()])
    _apply_in_place(ctx, [var, m, v], ["grad", "m", "v"], grad, scalars, update, replace)


def resource_apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
                        grad, use_locking: bool = False, use_nesterov: bool = False,
                        name: Optional[str] = None):
    """TF's ApplyAdam, in place: m, v moments; var -= lr_t * m / (sqrt(v) + epsilon)
    with lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)."""
    return apply_op("ResourceApplyAdam",
                    [var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad],
                    {"use_locking": use_locking, "use_nesterov": use_nesterov},
                    name=name or "ResourceApplyAdam")
