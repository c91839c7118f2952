"""TF1's other training ops: the dense ResourceApply* and sparse ResourceSparseApply*
kernels of the optimizers whose updates tensorweave builds from variable ops (Adadelta,
RMSProp, FTRL, AdagradDA, the proximal ones), the sparse Momentum and Adagrad ones, and
those of tf.keras's optimizers (AdagradV2, KerasMomentum, AdaMax, AdamWithAmsgrad).

tensorweave's own optimizers build only the dense RMSProp ones (`resource_apply_rms_prop`
and the centered one, as TF1's RMSPropOptimizer does); the others' updates are composed
(optimizers.py). A graph TensorFlow wrote builds any of them, so they exist for meta
graphs imported to resume training (a reference-variable ApplyX / SparseApplyX becomes
the resource op here, see framework/ref_variables.py), and for `tf.raw_ops`.

Each algorithm is one formula over the arrays of the variable and its slots, updated in
place: the dense kernel runs it on the whole arrays, the sparse kernel on the rows named
by `indices` (gathered, updated, written back). A repeated index is applied once per
occurrence, in order, as TF's CPU kernels loop over the indices: the occurrences are
split into rounds in which each row appears at most once.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.ops.group_fold import stable_order
from tensorweave.ops.math import split_work
from tensorweave.train import training_ops

_INDEX_TYPES = (_dt.int32, _dt.int64)
# an update formula: (xp, arrays of var and slots, grad, {hyperparameter: scalar},
# op attrs) -> None, updating the arrays in place
Formula = Callable


# --- the update formulas (TF's training_ops.cc functors) ----------------------------------
def _prox(xp, prox, lr, l1, l2):
    """Soft-threshold `prox` by lr * l1 (skipped for l1 <= 0), scale by 1/(1 + lr*l2)."""
    if l1 > 0:
        return xp.sign(prox) * xp.maximum(xp.abs(prox) - lr * l1, 0) / (1 + lr * l2)
    return prox / (1 + lr * l2)


def _proximal_gradient_descent(xp, arrays, grad, s, attrs):
    (var,) = arrays
    var[...] = _prox(xp, var - grad * s["alpha"], s["alpha"], s["l1"], s["l2"])


def _proximal_adagrad(xp, arrays, grad, s, attrs):
    var, accum = arrays
    accum += grad * grad
    lr = s["lr"] / xp.sqrt(accum)
    var[...] = _prox(xp, var - grad * lr, lr, s["l1"], s["l2"])


def _momentum(xp, arrays, grad, s, attrs):
    var, accum = arrays
    accum *= s["momentum"]
    accum += grad
    if attrs["use_nesterov"]:
        var -= grad * s["lr"] + accum * (s["momentum"] * s["lr"])
    else:
        var -= accum * s["lr"]


def _adagrad(xp, arrays, grad, s, attrs):
    # the dense kernel's operations in its order (training_ops.ResourceApplyAdagrad), so
    # that a row updated sparsely gets the bits a dense update gives it
    var, accum = arrays
    if attrs["update_slots"]:
        accum += grad * grad
    var -= grad / xp.sqrt(accum) * s["lr"]


def _adagrad_v2(xp, arrays, grad, s, attrs):
    var, accum = arrays
    if attrs["update_slots"]:
        accum += grad * grad
    var -= s["lr"] * grad / (xp.sqrt(accum) + s["epsilon"])


def _keras_momentum(xp, arrays, grad, s, attrs):
    var, accum = arrays
    accum[...] = accum * s["momentum"] - grad * s["lr"]
    if attrs["use_nesterov"]:
        var += accum * s["momentum"] - grad * s["lr"]
    else:
        var += accum


def _ada_max(xp, arrays, grad, s, attrs):
    var, m, v = arrays
    m += (grad - m) * (1 - s["beta1"])
    v[...] = xp.maximum(s["beta2"] * v, xp.abs(grad))
    var -= s["lr"] / (1 - s["beta1_power"]) * (m / (v + s["epsilon"]))


def _adam_with_amsgrad(xp, arrays, grad, s, attrs):
    var, m, v, vhat = arrays
    alpha = s["lr"] * xp.sqrt(1 - s["beta2_power"]) / (1 - s["beta1_power"])
    m += (grad - m) * (1 - s["beta1"])
    v += (grad * grad - v) * (1 - s["beta2"])
    vhat[...] = xp.maximum(vhat, v)
    var -= alpha * m / (xp.sqrt(vhat) + s["epsilon"])


def _adagrad_da(xp, arrays, grad, s, attrs):
    var, g_acc, gg_acc = arrays
    g_acc += grad
    gg_acc += grad * grad
    lr, l1, l2 = s["lr"], s["l1"], s["l2"]
    step = s["global_step"].astype(var.dtype)
    denominator = l2 * step * lr + xp.sqrt(gg_acc)
    if l1 > 0:
        var[...] = lr * xp.sign(g_acc) * xp.minimum(l1 * step - xp.abs(g_acc), 0) / \
            denominator
    else:
        var[...] = -lr * g_acc / denominator


def _adadelta(xp, arrays, grad, s, attrs):
    var, accum, accum_update = arrays
    rho, eps = s["rho"], s["epsilon"]
    accum[...] = accum * rho + grad * grad * (1 - rho)
    update = xp.sqrt(accum_update + eps) / xp.sqrt(accum + eps) * grad
    var -= update * s["lr"]
    accum_update[...] = accum_update * rho + update * update * (1 - rho)


def _rms_prop(xp, arrays, grad, s, attrs):
    """TF's functor, its operations in its order, in place and (NumPy) chunk by chunk:
    two temporaries in the cache instead of eight arrays (a [784, 256] variable's update
    227 -> 187 us alone). RMSPropOptimizer builds it for every dense update."""
    keep, momentum, lr, eps = 1 - s["rho"], s["momentum"], s["lr"], s["epsilon"]

    def update(var, ms, mom, grad):
        tmp, step = xp.empty(ms.shape, ms.dtype), xp.empty(ms.shape, ms.dtype)  # 0-d too
        xp.multiply(grad, grad, out=tmp)
        tmp -= ms
        tmp *= keep
        ms += tmp
        xp.add(ms, eps, out=tmp)
        xp.sqrt(tmp, out=tmp)
        xp.multiply(grad, lr, out=step)
        step /= tmp
        mom *= momentum
        mom += step
        var -= mom
    if xp is not np or not split_work.in_chunks(update, (*arrays, grad)):
        update(*arrays, grad)


def _centered_rms_prop(xp, arrays, grad, s, attrs):
    var, mg, ms, mom = arrays
    ms += (grad * grad - ms) * (1 - s["rho"])
    mg += (grad - mg) * (1 - s["rho"])
    denominator = ms - mg * mg + s["epsilon"]
    mom[...] = mom * s["momentum"] + s["lr"] * grad / xp.sqrt(denominator)
    var -= mom


def _ftrl(xp, arrays, grad, s, attrs):
    """FTRL-proximal; FtrlV2 adds 2 * l2_shrinkage * var to the gradient of `linear`
    (the accumulator still sums the plain gradient's squares)."""
    var, accum, linear = arrays
    lr, l1, l2, power = s["lr"], s["l1"], s["l2"], s["lr_power"]
    shrinkage = s.get("l2_shrinkage")
    linear_grad = grad if shrinkage is None else grad + 2 * shrinkage * var
    new_accum = accum + grad * grad
    if power == -0.5:
        new_root, old_root = xp.sqrt(new_accum), xp.sqrt(accum)
    else:
        new_root, old_root = new_accum ** -power, accum ** -power
    if attrs["multiply_linear_by_lr"]:
        linear += linear_grad * lr - (new_root - old_root) * var
        quadratic, threshold = new_root + 2 * l2 * lr, l1 * lr
    else:
        linear += linear_grad - (new_root - old_root) / lr * var
        quadratic, threshold = new_root / lr + 2 * l2, l1
    var[...] = xp.where(xp.abs(linear) > threshold,
                        (xp.sign(linear) * threshold - linear) / quadratic, 0)
    accum[...] = new_accum


# --- sparse updates -----------------------------------------------------------------------
# rows up to which a variable's repeated indices are found by a flag per row whatever
# the number of indices (a table of 25,000 rows updated on 256: 5 us against a sort's 12)
_FLAG_ROWS = 1 << 17


def _occurrence_rounds(indices: np.ndarray, n_rows: int) -> List[Optional[np.ndarray]]:
    """The positions of `indices` (in [0, n_rows)) split into rounds in which no index
    repeats, the k-th occurrence of every index in round k (so one index's rows apply in
    order); [None] when no index repeats (one round of every position)."""
    n = indices.shape[0]
    if n == 0:
        return []
    if n_rows <= max(64 * n, _FLAG_ROWS):
        # a flag per row is cheaper than a sort (deduplicated gradients: the optimizers'
        # sparse updates)
        seen = np.zeros(n_rows, bool)
        seen[indices] = True
        if np.count_nonzero(seen) == n:
            return [None]
    order = stable_order(indices)
    sorted_indices = indices[order]
    starts_group = np.empty(n, bool)
    starts_group[0] = True
    np.not_equal(sorted_indices[1:], sorted_indices[:-1], out=starts_group[1:])
    if starts_group.all():  # no repeats: one round
        return [None]
    group_start = np.maximum.accumulate(np.where(starts_group, np.arange(n), 0))
    occurrence = np.empty(n, np.int64)
    occurrence[order] = np.arange(n) - group_start
    return [np.flatnonzero(occurrence == k) for k in range(int(occurrence.max()) + 1)]


def _check_rows(ctx, resources, names, grad, indices) -> None:
    """TF's checks of a sparse update: the slots shaped as the variable, indices a
    vector, one gradient row per index matching the variable's rows, indices in range."""
    shape_str = training_ops._shape_str
    var_shape = resources[0].value.shape
    for r, name in zip(resources[1:], names[1:]):
        if r.value.shape != var_shape:
            raise errors.InvalidArgumentError(
                None, ctx.op, "var and %s do not have the same shape%s %s"
                % (name, shape_str(var_shape), shape_str(r.value.shape)))
    if len(var_shape) < 1:
        raise errors.InvalidArgumentError(None, ctx.op, "var must be at least 1 dimensional")
    if indices.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "indices must be one-dimensional")
    for d in range(1, len(var_shape)):
        if grad.ndim != len(var_shape) or grad.shape[d] != var_shape[d]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "var and grad must match in dimension %d (var %s, grad %s)"
                % (d, shape_str(var_shape), shape_str(grad.shape)))
    if grad.ndim < 1 or grad.shape[0] != indices.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "grad must be the same size as indices in the first dimension.")
    bad = np.flatnonzero((indices < 0) | (indices >= var_shape[0]))
    if bad.size:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Index %d at offset %d in indices is out of range"
            % (int(indices[bad[0]]), int(bad[0])))


def _apply_rows_in_place(ctx, handles, names, grad, indices, scalars, update) -> None:
    """Runs `update(rows, grad_rows)` on the rows `indices` of the variables `handles`
    (locked in input order, validated first), writing the rows back."""
    host_indices = indices.get() if hasattr(indices, "get") else np.asarray(indices)
    resources, locks = training_ops.lock_variables(ctx, handles, scalars)
    try:
        _check_rows(ctx, resources, names, grad, host_indices)
        arrays = [r.writable_value() for r in resources]
        try:
            for positions in _occurrence_rounds(host_indices, arrays[0].shape[0]):
                rows_at = host_indices if positions is None else host_indices[positions]
                rows = [a[rows_at] for a in arrays]
                update(rows, grad if positions is None else grad[positions])
                for a, row in zip(arrays, rows):
                    a[rows_at] = row
        finally:
            for r, arr in zip(resources, arrays):
                r.publish(arr)
    finally:
        training_ops.release(locks)


# --- registration -------------------------------------------------------------------------
def _split_inputs(var_names: Sequence[str], tensor_names: Sequence[str], inputs):
    """(variable handles, {input name: value}) of a kernel's inputs."""
    n = len(var_names)
    names = [t.split(":")[0] for t in tensor_names]
    return inputs[:n], dict(zip(names, inputs[n:]))


def _dense_op(op_type: str, var_names, tensor_names, formula: Formula,
              attrs: Optional[Dict] = None) -> None:
    """Declares ResourceApply<X> and its kernel: `formula` on the whole arrays."""
    training_ops._register(op_type, var_names, tensor_names, attrs)

    @kernel(op_type)
    def _run(ctx, *inputs):
        handles, values = _split_inputs(var_names, tensor_names, inputs)
        grad_name = "delta" if "delta" in values else "grad"
        grad = values.pop(grad_name)
        training_ops._apply_in_place(
            ctx, handles, [grad_name] + list(var_names[1:]), grad, list(values.items()),
            lambda *arrays: formula(ctx.xp, arrays, grad, values, ctx.attrs))


def _sparse_shape_fn(n_vars: int, indices_index: int, scalar_inputs):
    """Static checks of a sparse update: the variables' shapes agree, indices is a
    vector and the hyperparameters are scalars."""
    def shape(op):
        rv = training_ops._rv()
        var = rv.handle_shape(op.inputs[0])
        for i in range(1, n_vars):
            other = rv.handle_shape(op.inputs[i])
            if not var.is_compatible_with(other):
                raise ValueError("Shapes must be equal rank and compatible: %s and %s for "
                                 "'%s' (%s)" % (var, other, op.name, op.type))
            var = var.merge_with(other)
        indices = op.inputs[indices_index].shape
        if indices.ndims is not None and indices.ndims != 1:
            raise ValueError("Shape must be rank 1 but is rank %d for input %d of %s"
                             % (indices.ndims, indices_index, op.type))
        # the gradient's rows are checked against indices and var at run time, as TF
        # does for resource variables (a static mismatch builds there too)
        training_ops.check_scalar_inputs(op, scalar_inputs)
        return []
    return shape


def _sparse_op(op_type: str, var_names, tensor_names, formula: Formula,
               attrs: Optional[Dict] = None) -> None:
    """Declares ResourceSparseApply<X> and its kernel: `formula` on the rows
    `indices` of the variable and its slots."""
    inputs = ["%s: resource" % n for n in var_names] + \
        [t if ":" in t else ("indices: Tindices" if t == "indices" else "%s: T" % t)
         for t in tensor_names]
    names = [t.split(":")[0] for t in tensor_names]
    n = len(var_names)
    grad_index, indices_index = n + names.index("grad"), n + names.index("indices")
    scalars = [i for i in range(n, len(inputs)) if i not in (grad_index, indices_index)]
    all_attrs = {"T": TypeAttr(training_ops._FLOATS), "Tindices": TypeAttr(_INDEX_TYPES),
                 "use_locking": False}
    all_attrs.update(attrs or {})
    register_op(op_type, inputs=inputs, attrs=all_attrs, stateful=True,
                shape=_sparse_shape_fn(n, indices_index, scalars))
    not_differentiable(op_type)

    @kernel(op_type)
    def _run(ctx, *kernel_inputs):
        handles, values = _split_inputs(var_names, tensor_names, kernel_inputs)
        grad, indices = values.pop("grad"), values.pop("indices")
        _apply_rows_in_place(
            ctx, handles, var_names, grad, indices, list(values.items()),
            lambda rows, grad_rows: formula(ctx.xp, rows, grad_rows, values, ctx.attrs))


def _dense_and_sparse(name: str, var_names, dense_inputs, sparse_inputs, formula,
                      attrs: Optional[Dict] = None) -> None:
    _dense_op("ResourceApply" + name, var_names, dense_inputs, formula, attrs)
    _sparse_op("ResourceSparseApply" + name, var_names, sparse_inputs, formula, attrs)


_FTRL_ATTRS = {"multiply_linear_by_lr": False}


def resource_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad,
                            use_locking: bool = False, name: Optional[str] = None):
    """TF's ResourceApplyRMSProp, in place: ms += (grad^2 - ms) (1 - rho);
    mom = mom momentum + grad lr / sqrt(ms + epsilon); var -= mom."""
    return apply_op("ResourceApplyRMSProp", [var, ms, mom, lr, rho, momentum, epsilon, grad],
                    {"use_locking": use_locking}, name=name or "ResourceApplyRMSProp")


def resource_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                                     use_locking: bool = False, name: Optional[str] = None):
    """TF's ResourceApplyCenteredRMSProp: RMSProp whose denominator also subtracts the
    squared running mean mg of the gradient (mg += (grad - mg) (1 - rho))."""
    return apply_op("ResourceApplyCenteredRMSProp",
                    [var, mg, ms, mom, lr, rho, momentum, epsilon, grad],
                    {"use_locking": use_locking},
                    name=name or "ResourceApplyCenteredRMSProp")


_dense_and_sparse("ProximalGradientDescent", ["var"], ["alpha", "l1", "l2", "delta"],
                  ["alpha", "l1", "l2", "grad", "indices"], _proximal_gradient_descent)
_dense_and_sparse("ProximalAdagrad", ["var", "accum"], ["lr", "l1", "l2", "grad"],
                  ["lr", "l1", "l2", "grad", "indices"], _proximal_adagrad)
_dense_and_sparse("Adadelta", ["var", "accum", "accum_update"],
                  ["lr", "rho", "epsilon", "grad"], ["lr", "rho", "epsilon", "grad", "indices"],
                  _adadelta)
_dense_and_sparse("RMSProp", ["var", "ms", "mom"], ["lr", "rho", "momentum", "epsilon", "grad"],
                  ["lr", "rho", "momentum", "epsilon", "grad", "indices"], _rms_prop)
_dense_and_sparse("CenteredRMSProp", ["var", "mg", "ms", "mom"],
                  ["lr", "rho", "momentum", "epsilon", "grad"],
                  ["lr", "rho", "momentum", "epsilon", "grad", "indices"], _centered_rms_prop)
_dense_and_sparse("Ftrl", ["var", "accum", "linear"], ["grad", "lr", "l1", "l2", "lr_power"],
                  ["grad", "indices", "lr", "l1", "l2", "lr_power"], _ftrl, _FTRL_ATTRS)
_dense_and_sparse("FtrlV2", ["var", "accum", "linear"],
                  ["grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"],
                  ["grad", "indices", "lr", "l1", "l2", "l2_shrinkage", "lr_power"], _ftrl,
                  _FTRL_ATTRS)
_dense_and_sparse("AdagradDA", ["var", "gradient_accumulator", "gradient_squared_accumulator"],
                  ["grad", "lr", "l1", "l2", "global_step: int64"],
                  ["grad", "indices", "lr", "l1", "l2", "global_step: int64"], _adagrad_da)
# the dense Momentum and Adagrad kernels are training_ops' fused ones
# what tf.keras optimizers build
_dense_and_sparse("AdagradV2", ["var", "accum"], ["lr", "epsilon", "grad"],
                  ["lr", "epsilon", "grad", "indices"], _adagrad_v2, {"update_slots": True})
_dense_and_sparse("KerasMomentum", ["var", "accum"], ["lr", "grad", "momentum"],
                  ["lr", "grad", "indices", "momentum"], _keras_momentum,
                  {"use_nesterov": False})
_dense_op("ResourceApplyAdaMax", ["var", "m", "v"],
          ["beta1_power", "lr", "beta1", "beta2", "epsilon", "grad"], _ada_max)
_dense_op("ResourceApplyAdamWithAmsgrad", ["var", "m", "v", "vhat"],
          ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"],
          _adam_with_amsgrad)
_sparse_op("ResourceSparseApplyMomentum", ["var", "accum"],
           ["lr", "grad", "indices", "momentum"], _momentum, {"use_nesterov": False})
_sparse_op("ResourceSparseApplyAdagrad", ["var", "accum"], ["lr", "grad", "indices"],
           _adagrad, {"update_slots": True})
