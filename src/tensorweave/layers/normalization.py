"""`tf.layers.BatchNormalization` and `tf.layers.batch_normalization`.

Variables, in TF1's order: `gamma` (scale), `beta` (center), `moving_mean`,
`moving_variance` (not trainable). In training the batch's moments normalize the input
and the moving averages are updated, `moving -= (moving - batch) * (1 - momentum)`, by
ops added to UPDATE_OPS (run them with the train op, as TF1 programs do). With
`training` a bool tensor both paths are built and picked at run time (tf.cond); with
`training=False` no update is built. As TF1's fused kernel (used, when fused is None or True,
for float16/bfloat16/float32 inputs of rank 4 normalized over axis 1 or 3, or of rank 5
over axis 1 or 4), the fused path updates the moving variance with the unbiased
(Bessel-corrected) batch variance; the non-fused path with the biased one.
The fused path is computed with the same elementwise ops (there is no FusedBatchNorm op).
"""
from __future__ import annotations

import math
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.layers.base import (InputSpec, Layer, constant_bool, display_shape,
                                     smart_cond)
from tensorweave.ops.array import array_fill_ops, array_ops
from tensorweave.ops.control_flow.structure import identity, stop_gradient
from tensorweave.ops.math import math_binary, math_unary
from tensorweave.ops.math.math_ops import cast
from tensorweave.ops.math.reduction_ops import reduce_mean
from tensorweave.ops.nn.nn_ops import relu
from tensorweave.ops.nn.nn_impl import batch_normalization as nn_batch_normalization
from tensorweave.ops.nn.nn_impl import moments
from tensorweave.ops.state import init_ops
from tensorweave.ops.state.variables import VariableAggregation, VariableSynchronization


def _sqrt_initializer(initializer):
    """The square root of what `initializer` makes (moving_stddev's start)."""
    def init(shape, dtype=None, partition_info=None):
        return math_unary.sqrt(initializer(shape, dtype=dtype, partition_info=partition_info))
    return init


def _compose_transforms(scale, offset, then_scale, then_offset):
    """(scale, offset) of `(x * scale + offset) * then_scale + then_offset`; None for a
    missing scale (1) or offset (0)."""
    if then_scale is not None:
        scale = then_scale if scale is None else scale * then_scale
        offset = None if offset is None else offset * then_scale
    if then_offset is not None:
        offset = then_offset if offset is None else offset + then_offset
    return scale, offset


def _validate_axis(axis, input_shape: TensorShape) -> list:
    """`axis` (an int or a list) as a list of non-negative axes of `input_shape`.

    Raises:
      ValueError: an unknown (or 0) rank, an axis out of range, a repeated axis.
    """
    ndims = input_shape.ndims
    if not ndims:
        raise ValueError("Input has undefined rank. Received: input_shape=%s"
                         % display_shape(input_shape))
    axes = [a + ndims if a < 0 else a for a in (axis if isinstance(axis, list) else [axis])]
    if any(a < 0 or a >= ndims for a in axes):
        raise ValueError("Invalid value for `axis` argument. Expected 0 <= axis < inputs.rank "
                         "(with inputs.rank=%d). Received: axis=%s" % (ndims, tuple(axes)))
    if len(axes) != len(set(axes)):
        raise ValueError("Duplicate axis: %s" % (tuple(axes),))
    return axes


@tf_export("layers.BatchNormalization")
class BatchNormalization(Layer):
    """Batch normalization (TF1 `tf.layers.BatchNormalization`):
    `gamma * (x - mean) / sqrt(variance + epsilon) + beta` over the axes other than
    `axis`, with batch moments in training and moving averages in inference.

    Args:
      axis: the feature axis (int or list of ints), normally the channels.
      momentum: the moving averages' momentum.
      epsilon: added to the variance.
      center: add the `beta` offset.
      scale: multiply by `gamma`.
      beta_initializer, gamma_initializer, moving_mean_initializer,
      moving_variance_initializer: defaults zeros, ones, zeros, ones.
      beta_regularizer, gamma_regularizer: fn(variable) -> loss, or None.
      beta_constraint, gamma_constraint: fn(value) -> value, or None.
      renorm: batch renormalization (Ioffe 2017; never fused): in training, the batch
        moments corrected by r = stddev / renorm_stddev and d = (mean - renorm_mean) /
        renorm_stddev against moving averages of their own (`renorm_mean`,
        `renorm_stddev`, with `renorm_momentum`); the inference statistics are kept as a
        moving standard deviation (`moving_stddev`), as TF's.
      renorm_clipping: {"rmin", "rmax", "dmax"}: the bounds of r and |d|.
      renorm_momentum: the momentum of renorm_mean and renorm_stddev.
      fused: None or True: fused when the input is 4-D with axis 1 or 3 or 5-D with
        axis 1 or 4 and the dtype is float16, bfloat16 or float32 (else, silently, not
        fused, as TF1); False: never fused.
      trainable: whether gamma and beta are trainable.
      virtual_batch_size: ghost batch normalization: the batch (a multiple of it) is
        reshaped to [virtual_batch_size, -1, ...] and each virtual batch (every
        (batch / virtual_batch_size)-th example, as TF's reshape groups them) is
        normalized with its own moments; the moving averages take the mean of those
        moments. The variables then have the broadcast shape [1, 1, ..., C], as TF's.
        Never fused.
      adjustment: fn(shape of the (virtually batched) input) -> (scale, bias): in
        training the normalized value becomes `x * scale + bias` before gamma and
        beta (1 and 0 in inference). Never fused.
      name: the layer's name.
    """

    def __init__(self, axis=-1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True,
                 beta_initializer=init_ops.zeros_initializer(),
                 gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(),
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm: bool = False, renorm_clipping=None,
                 renorm_momentum: float = 0.99, fused=None, trainable: bool = True,
                 virtual_batch_size=None, adjustment=None, name: Optional[str] = None,
                 **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.supports_masking = True
        if renorm:
            renorm_clipping = dict(renorm_clipping or {})
            keys = ["rmax", "rmin", "dmax"]
            if set(renorm_clipping) - set(keys):
                raise ValueError("Received invalid keys for `renorm_clipping` argument: %s. "
                                 "Supported values: %s." % (renorm_clipping, keys))
        if isinstance(axis, (list, tuple)):
            self.axis = [int(a) for a in axis]
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', "
                            "but received: %r" % (axis,))
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.renorm = renorm
        self.renorm_clipping = renorm_clipping
        self.renorm_momentum = renorm_momentum
        self.fused = fused
        self.virtual_batch_size = virtual_batch_size
        self.adjustment = adjustment

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        axes = _validate_axis(self.axis, input_shape)
        ndims = input_shape.ndims
        if self.virtual_batch_size is not None:
            if self.virtual_batch_size <= 0:
                raise ValueError("`virtual_batch_size` must be a positive integer that "
                                 "divides the true batch size of the input tensor. "
                                 "Received: virtual_batch_size=%s" % self.virtual_batch_size)
            if 0 in axes:
                raise ValueError("When using `virtual_batch_size`, the batch dimension "
                                 "must be 0 and thus axis cannot include 0. Received "
                                 "axis=%s" % axes)
        self.axis = axes
        # TF1's layers never raise for fused=True: like fused=None they use the fused
        # kernel only where it applies and otherwise fall back to the non-fused path.
        fusable_axes = {4: (1, 3), 5: (1, 4)}.get(ndims, ())
        fusable_dtype = self._dtype in (None, _dt.float16, _dt.bfloat16, _dt.float32)
        self.fused = (self.fused in (None, True) and len(axes) == 1 and not self.renorm
                      and self.virtual_batch_size is None and self.adjustment is None
                      and axes[0] in fusable_axes and fusable_dtype)
        dims = input_shape.as_list()
        for a in axes:
            if dims[a] is None:
                raise ValueError("Input has undefined `axis` dimension. Received input with "
                                 "shape %s and axis=%s" % (display_shape(input_shape),
                                                           tuple(axes)))
        self.input_spec = InputSpec(ndim=ndims, axes={a: dims[a] for a in axes})
        # one axis: a vector; several: a shape that broadcasts against the input (TF1)
        if len(axes) == 1 and self.virtual_batch_size is None:
            param_shape = [dims[axes[0]]]
        else:
            param_shape = [dims[i] if i in axes else 1 for i in range(ndims)]
            if self.virtual_batch_size is not None:
                # the virtual batches' axis, after the batch: parameters and the
                # normalized axes refer to the reshaped input from here on
                param_shape.insert(1, 1)
                self.axis = [a + 1 for a in axes]
        param_dtype = self._dtype
        if param_dtype in (_dt.float16, _dt.bfloat16):
            param_dtype = _dt.float32
        self._param_dtype = param_dtype
        self.gamma = self._affine_weight("gamma", self.scale, param_shape, param_dtype)
        self.beta = self._affine_weight("beta", self.center, param_shape, param_dtype)
        moving = dict(dtype=param_dtype, trainable=False,
                      synchronization=VariableSynchronization.ON_READ,
                      aggregation=VariableAggregation.MEAN)
        self.moving_mean = self.add_weight("moving_mean", shape=param_shape,
                                           initializer=self.moving_mean_initializer,
                                           **moving)
        self.moving_variance = self.add_weight("moving_variance", shape=param_shape,
                                               initializer=self.moving_variance_initializer,
                                               **moving)
        if self.renorm:
            stddev_init = _sqrt_initializer(self.moving_variance_initializer)
            self.moving_stddev = self.add_weight("moving_stddev", shape=param_shape,
                                                 initializer=stddev_init, **moving)
            self.renorm_mean = self.add_weight("renorm_mean", shape=param_shape,
                                               initializer=self.moving_mean_initializer,
                                               **moving)
            self.renorm_stddev = self.add_weight("renorm_stddev", shape=param_shape,
                                                 initializer=stddev_init, **moving)
        self.built = True

    def _affine_weight(self, name: str, wanted: bool, shape, dtype):
        """The trainable `gamma` or `beta` variable, made with its `<name>_initializer`,
        `_regularizer` and `_constraint`; None when the layer does not scale or center."""
        if not wanted:
            return None
        return self.add_weight(name, shape=shape, dtype=dtype,
                               initializer=getattr(self, name + "_initializer"),
                               regularizer=getattr(self, name + "_regularizer"),
                               constraint=getattr(self, name + "_constraint"), trainable=True)

    def _assign_moving_average(self, variable, value, read_value: bool = True,
                               momentum: Optional[float] = None):
        momentum = self.momentum if momentum is None else momentum
        with name_scope(None, "AssignMovingAvg", [variable, value]) as scope:
            decay = convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype.base_dtype != variable.dtype.base_dtype:
                decay = cast(decay, variable.dtype.base_dtype)
            delta = (variable - cast(value, variable.dtype.base_dtype)) * decay
            return variable.assign_sub(delta, name=scope, read_value=read_value)

    def _variance_update(self, variance, read_value: bool = True):
        """The update of moving_variance; with renorm, through moving_stddev (TF keeps
        the inference statistics as a standard deviation, epsilon included)."""
        if not self.renorm:
            return self._assign_moving_average(self.moving_variance, variance,
                                               read_value=read_value)
        stddev = self._assign_moving_average(self.moving_stddev,
                                             math_unary.sqrt(variance + self.epsilon))
        # relu: rounding must not make the variance negative
        return self.moving_variance.assign(relu(stddev * stddev - self.epsilon),
                                           read_value=read_value)

    def _renorm_correction_and_moments(self, mean, variance, training):
        """(r, d, mean, variance): the renorm corrections against the renorm moving
        averages as they were before this step (clipped by renorm_clipping; 1 and 0
        when not training), and the batch moments, available once those averages are
        updated (in training)."""
        stddev = math_unary.sqrt(variance + self.epsilon)
        renorm_stddev = math_binary.maximum(self.renorm_stddev, math.sqrt(self.epsilon))
        r = stddev / renorm_stddev
        d = (mean - self.renorm_mean) / renorm_stddev
        with control_dependencies([r, d]):  # the updates below come after these reads
            mean, stddev = identity(mean), identity(stddev)
        clipping = self.renorm_clipping or {}
        if clipping.get("rmin") is not None:
            r = math_binary.maximum(r, clipping["rmin"])
        if clipping.get("rmax") is not None:
            r = math_binary.minimum(r, clipping["rmax"])
        if clipping.get("dmax") is not None:
            d = math_binary.minimum(math_binary.maximum(d, -clipping["dmax"]),
                                    clipping["dmax"])
        r = smart_cond(training, lambda: r, lambda: array_fill_ops.ones_like(r))
        d = smart_cond(training, lambda: d, lambda: array_fill_ops.zeros_like(d))

        def update(variable, value):
            return smart_cond(
                training, lambda: self._assign_moving_average(
                    variable, value, momentum=self.renorm_momentum),
                lambda: identity(variable))
        with control_dependencies([update(self.renorm_mean, mean),
                                   update(self.renorm_stddev, stddev)]):
            return r, d, identity(mean), identity(variance)

    def _update_if_training(self, training, variable, value):
        """The moving-average update of `variable` when the bool tensor `training` is true
        at run time, else its value."""
        return smart_cond(training, lambda: self._assign_moving_average(variable, value),
                          lambda: identity(variable))

    def _batch_moments(self, x, axes, keep_dims: bool):
        """The batch's mean and variance over `axes` (Keras' layer weights them by its
        mask)."""
        return moments(x, axes, keep_dims=keep_dims)

    def call(self, inputs, training=False):
        """`training`: a Python bool or a scalar bool tensor."""
        training_value = constant_bool(training)
        x = inputs
        if self.virtual_batch_size is not None:
            # [batch, ...] -> [virtual_batch_size, batch / virtual_batch_size, ...]; a
            # batch it does not divide fails in this reshape at run time, as TF's
            rest = array_ops.shape(inputs)[1:]
            original_shape = array_ops.concat([[-1], rest], 0)
            x = array_ops.reshape(inputs, array_ops.concat(
                [[self.virtual_batch_size, -1], rest], 0))
        ndims = inputs.shape.ndims + (self.virtual_batch_size is not None)
        axes = self.axis
        reduction = [i for i in range(ndims) if i not in axes]
        if self.virtual_batch_size is not None:
            del reduction[1]  # each virtual batch has its own moments
        # a vector parameter broadcasts against the input unless it is on the last axis
        broadcast = None
        if len(axes) == 1 and axes[0] != ndims - 1 and self.virtual_batch_size is None:
            broadcast = [inputs.shape.as_list()[axes[0]] if i == axes[0] else 1
                         for i in range(ndims)]

        def shaped(v):
            if v is None or broadcast is None:
                return v
            return array_ops.reshape(v, broadcast)

        scale, offset = shaped(self.gamma), shaped(self.beta)
        if x.dtype.base_dtype != self._param_dtype:
            x = cast(x, self._param_dtype)
        moving_mean = identity(self.moving_mean)
        moving_variance = identity(self.moving_variance)
        if training_value is False:
            mean, variance = moving_mean, moving_variance
        else:
            if self.adjustment is not None:
                adj_scale, adj_bias = self.adjustment(array_ops.shape(x))
                adj_scale = smart_cond(training, lambda: adj_scale,
                                       lambda: array_fill_ops.ones_like(adj_scale))
                adj_bias = smart_cond(training, lambda: adj_bias,
                                      lambda: array_fill_ops.zeros_like(adj_bias))
                scale, offset = _compose_transforms(adj_scale, adj_bias, scale, offset)
            keep_dims = self.virtual_batch_size is not None or len(axes) > 1
            batch_mean, batch_variance = self._batch_moments(x, reduction, keep_dims)
            new_mean, new_variance = batch_mean, batch_variance
            if self.virtual_batch_size is not None:
                # one update from the virtual batches' mean moments (TF's shortcut for
                # updating after each virtual batch in turn)
                new_mean = reduce_mean(batch_mean, axis=1, keepdims=True)
                new_variance = reduce_mean(batch_variance, axis=1, keepdims=True)
            if self.renorm:
                r, d, new_mean, new_variance = self._renorm_correction_and_moments(
                    new_mean, new_variance, training)
                # the corrections scale and shift the normalized value; no gradient
                # flows through them (they are statistics)
                scale, offset = _compose_transforms(
                    shaped(stop_gradient(r, name="renorm_r")),
                    shaped(stop_gradient(d, name="renorm_d")), scale, offset)
                if self.virtual_batch_size is None:
                    # read after the renorm averages' updates (their control inputs)
                    batch_mean, batch_variance = new_mean, new_variance
            update_variance = new_variance
            if self.fused:
                sample = cast(array_ops.size(x) // array_ops.size(new_variance),
                              new_variance.dtype)
                update_variance = new_variance * sample / (sample - 1.0)
            mean = smart_cond(training, lambda: batch_mean, lambda: moving_mean)
            variance = smart_cond(training, lambda: batch_variance, lambda: moving_variance)
            if training_value:
                # the assign ops themselves, named "AssignMovingAvg" as TF's
                self.add_update([self._assign_moving_average(self.moving_mean, new_mean,
                                                             read_value=False),
                                 self._variance_update(update_variance, read_value=False)])
            else:
                self.add_update([
                    self._update_if_training(training, self.moving_mean, new_mean),
                    smart_cond(training, lambda: self._variance_update(update_variance),
                               lambda: identity(self.moving_variance))])
        outputs = nn_batch_normalization(x, shaped(mean), shaped(variance), offset, scale,
                                         self.epsilon)
        if outputs.dtype.base_dtype != inputs.dtype.base_dtype:
            outputs = cast(outputs, inputs.dtype.base_dtype)
        if self.virtual_batch_size is not None:
            outputs = array_ops.reshape(outputs, original_shape)
        outputs.set_shape(inputs.shape)
        return outputs

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        """TF's keys; the renorm ones only with renorm, virtual_batch_size only when
        set, as TF (adjustment, a function, is left out, as TF)."""
        return self._config_with((
            "axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
            "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
            "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint") +
            (("renorm", "renorm_clipping", "renorm_momentum") if self.renorm else ()) +
            (("virtual_batch_size",) if self.virtual_batch_size is not None else ()))


@tf_export("layers.batch_normalization")
def batch_normalization(inputs, axis=-1, momentum: float = 0.99, epsilon: float = 1e-3,
                        center: bool = True, scale: bool = True,
                        beta_initializer=init_ops.zeros_initializer(),
                        gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable: bool = True,
                        name: Optional[str] = None, reuse=None, renorm: bool = False,
                        renorm_clipping=None, renorm_momentum: float = 0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """Functional interface of `BatchNormalization` (TF1 `tf.layers.batch_normalization`).

    The moving-average updates go to `tf.GraphKeys.UPDATE_OPS`; run them with the train
    op (`with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))`).

    Args:
      inputs: a Tensor of known rank.
      training: a Python bool or a scalar bool tensor: batch statistics (and updates)
        when true, moving averages when false.
      name: the variable scope; reuse: reuse its variables.
      (the others: as `BatchNormalization`.)

    Returns:
      The normalized Tensor, of the shape and type of `inputs`.

    Raises:
      ValueError: an unknown rank or feature dimension, a bad axis, renorm_clipping
        keys other than rmin, rmax and dmax, a virtual_batch_size not positive or with
        axis 0.
    """
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
        renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
        trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs, training=training)
