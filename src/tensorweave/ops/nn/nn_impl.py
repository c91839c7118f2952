"""Neural-network composites: dropout, moments, batch_normalization, l2_normalize.

They are plain builders over math, array, reduction and random ops (no kernels, no
gradients of their own); other families are imported inside the functions.
"""
from __future__ import annotations

import numbers
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.nn.nn_softmax import axis_argument


# --- layers of ops ---------------------------------------------------------------------------
@tf_export("nn.crelu")
def crelu(features, name: Optional[str] = None, axis: int = -1) -> Tensor:
    """Concatenated ReLU: `relu(concat([features, -features], axis))`; the result has
    twice the size of `features` along `axis`.

    Args:
      features: a Tensor of a real number type.
      name: name scope of the ops.
      axis: the axis the two halves are concatenated on.

    Returns:
      A Tensor of the type of `features`.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_unary
    from tensorweave.ops.nn.nn_ops import relu
    with _graph.name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        both = array_ops.concat([features, math_unary.negative(features)], axis, name=scope)
        return relu(both)


def _matmul_plus_bias(x, weights, biases, name: Optional[str] = None) -> Tensor:
    """`bias_add(matmul(x, weights), biases)`, in the caller's name scope."""
    from tensorweave.ops.math import matmul_ops
    from tensorweave.ops.nn.nn_softmax import bias_add
    product = matmul_ops.matmul(convert_to_tensor(x, name="x"),
                                convert_to_tensor(weights, name="weights"))
    return bias_add(product, convert_to_tensor(biases, name="biases"), name=name)


@tf_export("nn.xw_plus_b")
def xw_plus_b(x, weights, biases, name: Optional[str] = None) -> Tensor:
    """`matmul(x, weights) + biases`.

    Args:
      x: a 2-D Tensor [batch, in_units].
      weights: a 2-D Tensor [in_units, out_units].
      biases: a 1-D Tensor [out_units].
      name: name of the result (and scope of the ops).

    Returns:
      A 2-D Tensor [batch, out_units].
    """
    with _graph.name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        return _matmul_plus_bias(x, weights, biases, name=scope)


@tf_export("nn.relu_layer")
def relu_layer(x, weights, biases, name: Optional[str] = None) -> Tensor:
    """`relu(matmul(x, weights) + biases)`; the arguments and result are those of
    `xw_plus_b`."""
    from tensorweave.ops.nn.nn_ops import relu
    with _graph.name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return relu(_matmul_plus_bias(x, weights, biases), name=scope)


# --- dropout -------------------------------------------------------------------------------
def _noise_shape(x: Tensor, noise_shape):
    """The shape of the random mask: x's shape, or `noise_shape` with unknown entries
    taken from x's static shape."""
    from tensorweave.ops.array import array_ops
    if noise_shape is None:
        return array_ops.shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    dims = TensorShape(noise_shape)
    if dims.ndims is not None and x.shape.ndims == dims.ndims:
        dims = TensorShape([n if n is not None else d
                            for n, d in zip(dims.as_list(), x.shape.as_list())])
    if not dims.is_fully_defined():
        raise ValueError("`noise_shape` %s has unknown dimensions that the static shape "
                         "%s of `x` does not fill" % (dims, x.shape))
    return dims.as_list()


def _is_tensor_like(v) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


@tf_export("nn.dropout")
def dropout(x, keep_prob=None, noise_shape=None, seed=None, name: Optional[str] = None,
            rate=None) -> Tensor:
    """Keeps each element of `x` with probability `keep_prob`, scaled by `1 / keep_prob`;
    the others become 0.

    Args:
      x: a floating-point Tensor.
      keep_prob: probability of keeping an element: a float in (0, 1] or a scalar Tensor.
      noise_shape: shape of the random keep/drop mask (broadcast against `x`), e.g.
        `[batch, 1, 1, channels]` to drop whole feature maps; default: x's shape.
      seed: op-level random seed (see `tf.set_random_seed`).
      name: name scope of the ops.
      rate: probability of dropping an element, `1 - keep_prob` (give one of the two).

    Returns:
      A Tensor of the type and shape of `x` (`x` itself when nothing is dropped).

    Raises:
      ValueError: both or neither of `keep_prob` and `rate` given, a rate outside [0, 1)
        (keep_prob outside (0, 1]), or `x` is not floating point.
    """
    if keep_prob is not None:
        if _is_tensor_like(keep_prob):
            rate_from_keep_prob = None
        else:
            try:
                rate_from_keep_prob = 1. - keep_prob
            except TypeError:
                raise ValueError("`keep_prob` must be a floating point number or Tensor. "
                                 "Received: keep_prob=%s" % (keep_prob,)) from None
        if rate is not None:
            raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
        rate = rate_from_keep_prob
    elif rate is None:
        raise ValueError("`rate` must be provided. Received: rate=None")
    from tensorweave.ops.math import math_binary
    from tensorweave.ops.random import random_ops
    with _graph.name_scope(name, "dropout", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError("`x.dtype` must be a floating point tensor as `x` will be "
                             "scaled. Received: x_dtype=%r" % (x.dtype,))
        if _is_tensor_like(keep_prob) or _is_tensor_like(rate):
            if keep_prob is not None:
                keep = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
                drop = math_binary.subtract(1.0, keep)
            else:
                drop = convert_to_tensor(rate, dtype=x.dtype, name="rate")
                keep = math_binary.subtract(1.0, drop)
            keep.shape.with_rank(0)
            scale = math_binary.divide(1.0, keep)
        else:
            if not isinstance(rate, numbers.Real) or not 0 <= rate < 1:
                raise ValueError("`rate` must be a scalar tensor or a float in the range "
                                 "[0, 1). Received: rate=%s" % (rate,))
            if rate == 0:
                return x
            drop = rate
            scale = 1. / (1. - rate)
        uniform = random_ops.random_uniform(_noise_shape(x, noise_shape), seed=seed,
                                            dtype=x.dtype)
        # TF 2's mask: an element is kept when U[0, 1) >= rate, so a fed rate of 1 or
        # more (keep_prob 0) drops everything, never a NaN from 0 * inf
        from tensorweave.ops.array import array_fill_ops
        from tensorweave.ops.indexing import indexing_select
        scaled = math_binary.multiply(x, scale)
        out = indexing_select.where_v2(math_binary.greater_equal(uniform, drop), scaled,
                                       array_fill_ops.zeros_like(scaled))
        out.set_shape(x.shape)
        return out


# --- moments and batch normalization ---------------------------------------------------------
@tf_export("nn.moments")
def moments(x, axes, shift=None, name: Optional[str] = None, keep_dims=None,
            keepdims=None):
    """Mean and (population) variance of `x` over `axes`.

    Args:
      x: a Tensor.
      axes: list of ints, the axes to reduce.
      shift: unused (kept for TF1 compatibility).
      name: name scope of the ops.
      keep_dims: deprecated alias of `keepdims`.
      keepdims: keep the reduced axes with length 1.

    Returns:
      `(mean, variance)`; float16 inputs are reduced in float32 and cast back.
    """
    del shift  # TF1 ignores it too.
    keep = axis_argument(keepdims, keep_dims, "keepdims", "keep_dims")
    keep = bool(keep) if keep is not None else False
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    from tensorweave.ops.control_flow.structure import stop_gradient
    with _graph.name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, _dt.float32) if x.dtype is _dt.float16 else x
        mean = reduction_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduction_ops.reduce_mean(
            math_binary.squared_difference(y, stop_gradient(mean)), axes, keepdims=True,
            name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype is _dt.float16:
            return math_ops.cast(mean, _dt.float16), math_ops.cast(variance, _dt.float16)
        return mean, variance


@tf_export("nn.batch_normalization")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon,
                        name: Optional[str] = None) -> Tensor:
    """`scale * (x - mean) / sqrt(variance + variance_epsilon) + offset`.

    Args:
      x: the input Tensor.
      mean, variance: Tensors (or numbers) broadcastable to `x`.
      offset: the beta Tensor, or None.
      scale: the gamma Tensor, or None.
      variance_epsilon: a small float added to the variance.
      name: name scope of the ops.

    Returns:
      The normalized Tensor, of the type of `x`.
    """
    from tensorweave.ops.math import math_ops, math_unary
    with _graph.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        # TF's expression, operator for operator: its op names ("batchnorm/add_1" is the
        # result) are what frozen graphs and graph rewriters look for
        inv = math_unary.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(
            offset - mean * inv if offset is not None else -mean * inv, x.dtype)


# --- l2_normalize ----------------------------------------------------------------------------
@tf_export("nn.l2_normalize", "math.l2_normalize", "linalg.l2_normalize")
def l2_normalize(x, axis=None, epsilon=1e-12, name: Optional[str] = None,
                 dim=None) -> Tensor:
    """`x / sqrt(max(sum(|x|**2, axis), epsilon))`.

    Args:
      x: a Tensor.
      axis: dimension(s) to normalize over (default: all).
      epsilon: lower bound of the squared norm (avoids division by zero).
      name: op name.
      dim: deprecated alias of `axis`.

    Returns:
      A Tensor of the type and shape of `x`.
    """
    axis = axis_argument(axis, dim)
    from tensorweave.ops.math import math_binary, math_unary, reduction_ops
    with _graph.name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            # TF normalizes the real and imaginary parts by the real norm
            from tensorweave.ops.math import complex_ops
            re, im = complex_ops.real(x), complex_ops.imag(x)
            square_sum = reduction_ops.reduce_sum(
                math_binary.add(math_unary.square(re), math_unary.square(im)), axis,
                keepdims=True)
            inv_norm = math_unary.rsqrt(math_binary.maximum(square_sum, epsilon))
            return complex_ops.complex(math_binary.multiply(re, inv_norm),
                                       math_binary.multiply(im, inv_norm), name=scope)
        square_sum = reduction_ops.reduce_sum(math_unary.square(x), axis, keepdims=True)
        inv_norm = math_unary.rsqrt(math_binary.maximum(square_sum, epsilon))
        return math_binary.multiply(x, inv_norm, name=scope)
