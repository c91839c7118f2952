"""TF1's loss-scaling optimizer and mixed-precision switch:
tf.mixed_precision.MixedPrecisionLossScaleOptimizer and
tf.mixed_precision.{enable,disable}_mixed_precision_graph_rewrite (also under
tf.train.experimental).

In TF the switch does two things: it wraps the optimizer in a
`MixedPrecisionLossScaleOptimizer`, and it turns on grappler's `auto_mixed_precision`
pass for Sessions created afterwards. That pass rewrites float32 ops to float16 only on
NVIDIA GPUs of compute capability 7.0 or above; everywhere else (CPUs, TPUs) TF leaves
the graph in float32. tensorweave has no such rewrite: it records the switch and wraps
the optimizer, and the graph runs in float32 as TF's does on a machine without such a
GPU. Loss scaling then changes nothing numerically but still skips steps whose
gradients are not finite.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.platform import tf_logging as logging
from tensorweave.runtime import context
from tensorweave.train import loss_scale as loss_scale_module
from tensorweave.train.optimizer import Optimizer

__all__ = ["MixedPrecisionLossScaleOptimizer", "enable_mixed_precision_graph_rewrite",
           "disable_mixed_precision_graph_rewrite",
           "is_mixed_precision_graph_rewrite_enabled"]


@tf_export("mixed_precision.MixedPrecisionLossScaleOptimizer",
           "train.experimental.MixedPrecisionLossScaleOptimizer")
class MixedPrecisionLossScaleOptimizer(Optimizer):
    """An optimizer wrapper that applies loss scaling.

    `compute_gradients` multiplies the loss by the loss scale and divides the gradients
    by it. With a `DynamicLossScale`, `apply_gradients` applies the gradients (and
    increments `global_step`) only when all of them are finite, and updates the scale
    either way; with any other loss scale it is the wrapped optimizer's
    `apply_gradients`.

    As in TF, the wrapper takes the wrapped optimizer's name and `use_locking`;
    `variables()` is the wrapped optimizer's variables followed by the loss scale's,
    while `get_slot` and `get_slot_names` are the base class's and so see only the
    wrapper's own slots (there are none: None and []); ask the wrapped optimizer for
    its slots.

    Args:
      opt: the `tf.train.Optimizer` to wrap.
      loss_scale: a `LossScale`, a Python int or float (a `FixedLossScale`), or
        "dynamic" (a default `DynamicLossScale`, whose variables are created now in the
        default graph).

    Raises:
      ValueError: `opt` is not a `tf.train.Optimizer`, `loss_scale` is None or
        cannot be interpreted, or a fixed value is below 1.
    """

    def __init__(self, opt: Optimizer, loss_scale):
        if not isinstance(opt, Optimizer):
            raise ValueError('"opt" must be an instance of Optimizer, but got: %s'
                             % type(opt))
        self._optimizer = opt
        super().__init__(opt._use_locking, opt.get_name())
        self._loss_scale = loss_scale_module.get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    def _doing_dynamic_loss_scaling(self) -> bool:
        return isinstance(self._loss_scale, loss_scale_module.DynamicLossScale)

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None,
                          colocate_gradients_with_ops: bool = False, grad_loss=None) -> list:
        """The gradients of `loss` for `var_list`, computed on the scaled loss and
        divided by the loss scale (so they are the gradients of `loss` itself).

        Args:
          loss: a Tensor, or a callable returning one (scaled when called).
          var_list, gate_gradients, aggregation_method, colocate_gradients_with_ops,
            grad_loss: as `tf.train.Optimizer.compute_gradients`.

        Returns:
          A list of (gradient, variable) pairs; a gradient may be None.
        """
        loss = self._scale_loss(loss)
        grads_and_vars = self._optimizer.compute_gradients(
            loss=loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        grads = self._unscale_grads([g for g, _ in grads_and_vars])
        return list(zip(grads, [v for _, v in grads_and_vars]))

    def _scale_loss(self, loss):
        from tensorweave.ops.math.math_ops import cast
        loss_scale = self._loss_scale()
        if callable(loss):
            def scaled_loss():
                value = loss()
                return value * cast(loss_scale, value.dtype)
            return scaled_loss
        return loss * cast(loss_scale, loss.dtype)

    def _unscale_grads(self, grads) -> list:
        reciprocal = 1 / self._loss_scale()
        out = []
        for g in grads:
            if isinstance(g, IndexedSlices):
                g = IndexedSlices(g.values * reciprocal, g.indices, g.dense_shape)
            elif g is not None:
                g = g * reciprocal
            out.append(g)
        return out

    def apply_gradients(self, grads_and_vars, global_step=None, name: Optional[str] = None):
        """Applies the gradients with the wrapped optimizer, conditionally.

        With a dynamic loss scale the update of the variables (and of `global_step`)
        runs only when every gradient is finite; the loss scale is updated in any
        case (halved after a nonfinite step, doubled after `increment_period` finite
        ones).

        Args:
          grads_and_vars: (gradient, variable) pairs from `compute_gradients`.
          global_step: optional Variable incremented by one when the gradients are
            applied.
          name: name of the returned op (default: the optimizer's name; the wrapped
            optimizer's update is then named '<name>-wrapped').

        Returns:
          An Operation that updates the loss scale and conditionally applies the
          gradients.
        """
        if not self._doing_dynamic_loss_scaling():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        from tensorweave.ops.control_flow import structure
        grads_and_vars = tuple(grads_and_vars)
        name = name if name is not None else self.get_name()
        update_op, should_apply = self._loss_scale.update([g for g, _ in grads_and_vars])

        def apply_fn():
            return self._optimizer.apply_gradients(grads_and_vars, global_step,
                                                   name + "-wrapped")

        maybe_apply_op = _smart_cond(should_apply, apply_fn, structure.no_op)
        return structure.group(maybe_apply_op, update_op, name=name)

    # The wrapped optimizer does the updates; these are never reached (as in TF).
    def _apply_sparse(self, grad, var):
        raise RuntimeError("This function should never be called")

    def _apply_dense(self, grad, var):
        raise RuntimeError("This function should never be called")

    def _resource_apply_sparse(self, grad, var, indices):
        raise RuntimeError("This function should never be called")

    def _resource_apply_dense(self, grad, var):
        raise RuntimeError("This function should never be called")

    def variables(self) -> list:
        """The wrapped optimizer's variables, then the loss scale's (of every graph)."""
        return self._optimizer.variables() + list(self._loss_scale._weights.values())


def _smart_cond(pred, true_fn, false_fn):
    """`true_fn()` or `false_fn()` when `pred` is known at build time (a custom loss
    scale may return a Python bool), else `tf.cond`."""
    from tensorweave.ops.control_flow.control_flow_ops import cond
    if isinstance(pred, Tensor):
        value = tensor_util.constant_value(pred)
        if value is None:
            return cond(pred, true_fn, false_fn)
        pred = bool(value)
    return true_fn() if pred else false_fn()


@tf_export("mixed_precision.enable_mixed_precision_graph_rewrite",
           "train.experimental.enable_mixed_precision_graph_rewrite")
def enable_mixed_precision_graph_rewrite(opt: Optimizer,
                                         loss_scale="dynamic") -> MixedPrecisionLossScaleOptimizer:
    """Enables mixed precision through the graph rewrite, and wraps `opt` for loss
    scaling.

    In TF this turns on grappler's `auto_mixed_precision` pass for Sessions created
    afterwards, which runs selected float32 ops in float16 on NVIDIA GPUs of compute
    capability 7.0 or above and leaves every other device's ops in float32.
    tensorweave records the switch but has no float16 rewrite, so graphs keep running
    in float32, as TF's do on a machine without such a GPU; the returned optimizer
    still scales the loss and, with a dynamic loss scale, skips steps with nonfinite
    gradients. Compute gradients with the returned optimizer (`minimize`, or
    `compute_gradients` then `apply_gradients`), not with `tf.gradients`.

    Args:
      opt: a `tf.train.Optimizer`.
      loss_scale: an int or float, "dynamic" (the default), or a `LossScale`.

    Returns:
      `opt` wrapped in a `MixedPrecisionLossScaleOptimizer`.

    Raises:
      ValueError: `opt` is already a `MixedPrecisionLossScaleOptimizer`, or is not a
        `tf.train.Optimizer` (a Keras optimizer included, as in TF 2.16 and later,
        whose Keras registers no wrapper), or `loss_scale` is invalid.
    """
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError('"opt" must not already be an instance of a {cls}. '
                         '`enable_mixed_precision_graph_rewrite` will automatically wrap '
                         'the optimizer with a {cls}.'
                         .format(cls=MixedPrecisionLossScaleOptimizer.__name__))
    if not isinstance(opt, Optimizer):
        raise ValueError('"opt" must be an instance of a tf.train.Optimizer or a '
                         'tf.keras.optimizers.Optimizer, but got: %s' % (opt,))
    opt = MixedPrecisionLossScaleOptimizer(opt, loss_scale)
    if context.plain_session_created():
        logging.warning("You already have existing Sessions that do not use mixed "
                        "precision. enable_mixed_precision_graph_rewrite() will not "
                        "affect these Sessions.")
    context.set_mixed_precision_graph_rewrite(True)
    return opt


@tf_export("mixed_precision.disable_mixed_precision_graph_rewrite",
           "train.experimental.disable_mixed_precision_graph_rewrite")
def disable_mixed_precision_graph_rewrite() -> None:
    """Disables the mixed precision graph rewrite (see
    `enable_mixed_precision_graph_rewrite`; tensorweave never rewrites to float16).

    Optimizers already wrapped keep scaling the loss. Logs a warning when the rewrite
    is not enabled.
    """
    if not context.mixed_precision_graph_rewrite_enabled():
        logging.warning("disable_mixed_precision_graph_rewrite() called when mixed "
                        "precision is already disabled.")
    context.set_mixed_precision_graph_rewrite(False)


def is_mixed_precision_graph_rewrite_enabled() -> bool:
    """Whether `enable_mixed_precision_graph_rewrite` is in force."""
    return context.mixed_precision_graph_rewrite_enabled()
