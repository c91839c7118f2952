"""More nn composites: sufficient statistics and moments, swish, log-Poisson loss,
loss averaging helpers and the old batch_norm_with_global_normalization.

Plain builders over math, array and reduction ops (no kernels, no gradients of their own).
"""
from __future__ import annotations

import math
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.nn.nn_softmax import axis_argument


def _keep(keepdims, keep_dims) -> bool:
    keep = axis_argument(keepdims, keep_dims, "keepdims", "keep_dims")
    return bool(keep) if keep is not None else False


@tf_export("nn.sufficient_statistics")
def sufficient_statistics(x, axes, shift=None, keep_dims=None, name: Optional[str] = None,
                          keepdims=None):
    """Sufficient statistics of `x` over `axes`, for computing mean and variance.

    Args:
      x: a Tensor.
      axes: list of ints, the axes to reduce.
      shift: None, or a Tensor/number subtracted from `x` before summing (for numerical
        stability).
      keep_dims: deprecated alias of `keepdims`.
      name: name scope of the ops.
      keepdims: keep the reduced axes with length 1.

    Returns:
      `(count, mean_ss, variance_ss, shift)`: the number of reduced elements (of the dtype
      of `x`), `sum(x - shift)`, `sum((x - shift)**2)` and the shift Tensor (or None).
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.constant_op import constant
    from tensorweave.ops.indexing import indexing_gather
    from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops
    keep = _keep(keepdims, keep_dims)
    with _graph.name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[d] is not None for d in axes):
            count = 1
            for d in axes:
                count *= dims[d]
            counts = constant(count, dtype=x.dtype)
        else:
            x_dims = indexing_gather.gather(math_ops.cast(array_ops.shape(x), x.dtype), axes)
            counts = reduction_ops.reduce_prod(x_dims, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=x.dtype, name="shift")
            m_ss = math_binary.subtract(x, shift)
            v_ss = math_binary.squared_difference(x, shift)
        else:
            m_ss, v_ss = x, math_unary.square(x)
        m_ss = reduction_ops.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = reduction_ops.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


@tf_export("nn.normalize_moments")
def normalize_moments(counts, mean_ss, variance_ss, shift, name: Optional[str] = None):
    """Mean and variance from sufficient statistics (see `sufficient_statistics`).

    Args:
      counts: the number of elements summed.
      mean_ss: the (shifted) sum of the elements.
      variance_ss: the (shifted) sum of the squared elements.
      shift: the shift used, or None.
      name: name scope of the ops.

    Returns:
      `(mean, variance)`.
    """
    from tensorweave.ops.math import math_binary, math_unary
    with _graph.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_unary.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_binary.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_binary.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_binary.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_binary.subtract(math_binary.multiply(variance_ss, divisor),
                                        math_unary.square(shifted_mean), name="variance")
    return mean, variance


@tf_export("nn.weighted_moments")
def weighted_moments(x, axes, frequency_weights, name: Optional[str] = None, keep_dims=None,
                     keepdims=None):
    """Frequency-weighted mean and variance of `x` over `axes`.

    Args:
      x: a Tensor.
      axes: list of ints, the axes to reduce.
      frequency_weights: a Tensor broadcastable to `x`: the weight of each element.
      name: name scope of the ops.
      keep_dims: deprecated alias of `keepdims`.
      keepdims: keep the reduced axes with length 1.

    Returns:
      `(weighted_mean, weighted_variance)`; float16 inputs are computed in float32.
    """
    from tensorweave.ops.array import array_fill_ops, array_ops
    from tensorweave.ops.control_flow.structure import stop_gradient
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    keep = _keep(keepdims, keep_dims)
    with _graph.name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        needs_cast = x.dtype is _dt.float16
        if needs_cast:
            x = math_ops.cast(x, _dt.float32)
        if weights.dtype != x.dtype:
            weights = math_ops.cast(weights, x.dtype)
        input_sum = reduction_ops.reduce_sum(weights * x, axes, keepdims=True,
                                             name="weighted_input_sum")
        weight_sum = reduction_ops.reduce_sum(weights + array_fill_ops.zeros_like(x), axes,
                                              keepdims=True, name="sum_of_weights")
        # div_no_nan, as TF: a slice whose weights sum to 0 has mean and variance 0
        mean = math_binary.div_no_nan(input_sum, weight_sum)
        distsq = reduction_ops.reduce_sum(
            weights * math_binary.squared_difference(x, stop_gradient(mean)), axes,
            keepdims=True, name="weighted_distsq")
        variance = math_binary.div_no_nan(distsq, weight_sum)
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if needs_cast:
            mean = math_ops.cast(mean, _dt.float16)
            variance = math_ops.cast(variance, _dt.float16)
    return mean, variance


@tf_export("nn.swish", "nn.silu")
def swish(features, beta=1.0) -> Tensor:
    """The Swish (SiLU) activation: `features * sigmoid(beta * features)`.

    Args:
      features: a float Tensor.
      beta: a scalar (Tensor or number) scaling the sigmoid's input.

    Returns:
      A Tensor of the type and shape of `features`.
    """
    from tensorweave.ops.math import math_ops, math_unary
    with _graph.name_scope(None, "swish", [features, beta]) as scope:
        features = convert_to_tensor(features, name="features")
        beta = math_ops.cast(convert_to_tensor(beta, name="beta"), features.dtype)
        return features * math_unary.sigmoid(beta * features, name=scope)


@tf_export("nn.log_poisson_loss")
def log_poisson_loss(targets, log_input, compute_full_loss: bool = False,
                     name: Optional[str] = None) -> Tensor:
    """Negative log-likelihood of `targets` under a Poisson with log-rate `log_input`:
    `exp(log_input) - log_input * targets`, plus (with `compute_full_loss`) Stirling's
    approximation `t*log(t) - t + 0.5*log(2*pi*t)` for targets outside [0, 1].

    Args:
      targets: a Tensor of the type and shape of `log_input`.
      log_input: a float Tensor of log-rates.
      compute_full_loss: whether to add the Stirling term.
      name: name scope of the ops.

    Returns:
      A Tensor of elementwise losses.

    Raises:
      ValueError: `log_input` and `targets` have incompatible shapes.
    """
    from tensorweave.ops.array import array_fill_ops, array_ops
    from tensorweave.ops.math import math_binary, math_unary
    with _graph.name_scope(name, "log_poisson_loss", [log_input, targets]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not targets.shape.is_compatible_with(log_input.shape):
            raise ValueError("`log_input` and `targets` must have the same shape, received "
                             "(%s vs %s)." % (log_input.shape, targets.shape))
        result = math_unary.exp(log_input) - log_input * targets
        if compute_full_loss:
            half = convert_to_tensor(0.5, dtype=targets.dtype)
            two_pi = convert_to_tensor(2 * math.pi, dtype=targets.dtype)
            stirling = (targets * math_unary.log(targets) - targets
                        + half * math_unary.log(two_pi * targets))
            zeros = array_fill_ops.zeros_like(targets)
            in_unit = math_binary.logical_and(targets >= zeros,
                                              targets <= array_fill_ops.ones_like(targets))
            result += array_ops.where(in_unit, zeros, stirling)
        return result


@tf_export("nn.compute_average_loss")
def compute_average_loss(per_example_loss, sample_weight=None,
                         global_batch_size=None) -> Tensor:
    """Sum of the (weighted) per-example losses divided by the global batch size.

    With no distribution strategy there is one replica, so the default global batch size
    is the first dimension of `per_example_loss`.

    Args:
      per_example_loss: a float Tensor of rank >= 1.
      sample_weight: None, or weights broadcastable to `per_example_loss`.
      global_batch_size: None, or a positive integer scalar.

    Returns:
      A scalar of the dtype of `per_example_loss` (0 when the batch is empty).

    Raises:
      ValueError: `per_example_loss` is a scalar.
      TypeError: `global_batch_size` is not an integer.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    loss = convert_to_tensor(per_example_loss)
    dtype = loss.dtype
    if loss.shape.ndims == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with "
                         "at least rank 1. Received per_example_loss=%s with rank 0" % loss)
    if sample_weight is not None:
        weight = math_ops.cast(convert_to_tensor(sample_weight), dtype)
        loss = loss * weight
    if global_batch_size is None:
        batch = math_ops.cast(array_ops.shape(loss)[0], dtype)
    else:
        batch = convert_to_tensor(global_batch_size)
        if not batch.dtype.is_integer:
            raise TypeError("global_batch_size must be an integer. Found dtype %s"
                            % batch.dtype.name)
        if batch.shape.ndims not in (None, 0):
            raise ValueError("global_batch_size must be scalar.")
        batch = math_ops.cast(batch, dtype)
    return math_binary.div_no_nan(reduction_ops.reduce_sum(loss), batch)


@tf_export("nn.scale_regularization_loss")
def scale_regularization_loss(regularization_loss) -> Tensor:
    """Sums a regularization loss and divides it by the number of replicas (one without a
    distribution strategy).

    Args:
      regularization_loss: a Tensor (or list summed elementwise) of losses.

    Returns:
      A scalar Tensor.
    """
    from tensorweave.ops.math import math_binary, reduction_ops
    return math_binary.truediv(reduction_ops.reduce_sum(regularization_loss), 1)


@tf_export("nn.batch_norm_with_global_normalization")
def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None,
                                         scale_after_normalization=None,
                                         name: Optional[str] = None, input=None,  # noqa: A002
                                         mean=None, variance=None) -> Tensor:
    """Batch normalization with given global mean and variance (deprecated TF1 op).

    Args:
      t: the input Tensor (or `input`).
      m: the mean (or `mean`).
      v: the variance (or `variance`).
      beta: the offset added after normalization.
      gamma: the scale, used only if `scale_after_normalization`.
      variance_epsilon: a small float added to the variance.
      scale_after_normalization: whether to multiply by `gamma`.
      name: name scope of the ops.
      input, mean, variance: the new names of `t`, `m`, `v`.

    Returns:
      The normalized Tensor.

    Raises:
      ValueError: both the old and the new name of an argument are given.
    """
    from tensorweave.ops.nn.nn_impl import batch_normalization
    pairs = (("input", input, "t", t), ("mean", mean, "m", m), ("variance", variance, "v", v))
    values = []
    for new, new_v, old, old_v in pairs:
        if new_v is not None and old_v is not None:
            raise ValueError("Cannot specify both '%s' and '%s'" % (old, new))
        values.append(new_v if new_v is not None else old_v)
    return batch_normalization(values[0], values[1], values[2], beta,
                               gamma if scale_after_normalization else None,
                               variance_epsilon, name)
