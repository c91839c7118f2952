"""Gamma and Poisson sampling ops (TF1 `tf.random_gamma`, `tf.random_poisson`).

Both follow the seeds and per-session Philox streams of `random_ops` and give TF's CPU
values bit for bit (`tf_distributions`). Output shape = `shape + alpha.shape`
(`shape + lam.shape`).

The gamma sample is differentiable with respect to `alpha` by implicit
reparameterization (TF's RandomGammaGrad): a sample x = F^-1(u; alpha) with u held
fixed moves by dx/dalpha = -(dF/dalpha) / (dF/dx), F the gamma CDF P(alpha, x).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, broadcast_shapes
from tensorweave.ops.random import tf_distributions
from tensorweave.ops.random.tf_distributions import from_float64
from tensorweave.ops.random.random_ops import _INT_TYPES, _num_values, _philox_draw, \
    _seed_attrs, _shape_from, _shape_input_fn

_GAMMA_TYPES = (_dt.float16, _dt.float32, _dt.float64)
_POISSON_TYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)


def _sample_shape(op) -> TensorShape:
    """`shape + input(1).shape` (unknown where either is)."""
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims != 1:
        raise ValueError("Shape must be rank 1 but is rank %d" % shape.ndims)
    return _shape_input_fn(op).concatenate(op.inputs[1].shape)


# --- RandomGamma ---------------------------------------------------------------------------
register_op("RandomGamma", inputs=["shape: S", "alpha: T"], outputs=["output: T"],
            attrs={"seed": 0, "seed2": 0, "S": TypeAttr(_INT_TYPES),
                   "T": TypeAttr(_GAMMA_TYPES)},
            shape=_sample_shape, stateful=True)


@kernel("RandomGamma")
def _random_gamma_kernel(ctx, shape, alpha):
    sample_dims = _shape_from(shape)
    dims = sample_dims + tuple(alpha.shape)
    if _num_values(dims) == 0:   # TF returns before reserving any samples
        return np.zeros(dims, alpha.dtype)
    num_samples = _num_values(sample_dims)
    key, counter = _philox_draw(ctx, num_samples * alpha.size)
    x = tf_distributions.gamma(key, counter, alpha.astype(np.float64), num_samples)
    return from_float64(x, alpha.dtype).reshape(dims)


register_op("RandomGammaGrad", inputs=["alpha: T", "sample: T"], outputs=["output: T"],
            attrs={"T": TypeAttr((_dt.float32, _dt.float64))},
            shape=lambda op: broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape))
not_differentiable("RandomGammaGrad")


@kernel("RandomGammaGrad", cheap=False)
def _random_gamma_grad_kernel(ctx, alpha, sample):
    from tensorweave.ops.math.incomplete_special_ops import _igamma_grad_a
    from tensorweave.ops.math.special_math_ops import _lgamma
    a, x = np.broadcast_arrays(alpha.astype(np.float64), sample.astype(np.float64))
    with np.errstate(all="ignore"):
        log_density = (a - 1.0) * np.log(x) - x - _lgamma(a)
        out = -_igamma_grad_a(a, x) / np.exp(log_density)
    return out.astype(alpha.dtype, copy=False)


@gradient("RandomGamma")
def _random_gamma_grad(op, grad):
    from tensorweave.ops.array import array_join_ops, array_ops
    from tensorweave.ops.array.array_fill_ops import ones
    from tensorweave.ops.math import math_ops, reduction_ops
    shape, alpha = op.inputs
    sample = op.outputs[0]
    n_sample_dims = array_ops.shape(shape)[0]
    # alpha with one leading unit dimension per sample dimension, to broadcast
    lead = ones(array_ops.expand_dims(n_sample_dims, 0), dtype=_dt.int32)
    alpha_b = array_ops.reshape(alpha, array_join_ops.concat([lead, array_ops.shape(alpha)], 0))
    partial = apply_op("RandomGammaGrad", [alpha_b, sample]).outputs[0]
    return [None, reduction_ops.reduce_sum(grad * partial, math_ops.range(n_sample_dims))]


@tf_export("random_gamma", "random.gamma")
def random_gamma(shape, alpha, beta=None, dtype=_dt.float32, seed: Optional[int] = None,
                 name: Optional[str] = None) -> Tensor:
    """Draws samples from Gamma(alpha, beta) distributions (beta the inverse scale).

    Args:
      shape: a 1-D integer Tensor or Python list: the shape of the samples drawn for
        each distribution.
      alpha: the concentration (shape) parameters, a Tensor of `dtype`.
      beta: the inverse scale (rate) parameters, broadcastable with `alpha`; default 1.
      dtype: float16, float32 or float64.
      seed: op-level seed (see `tf.set_random_seed`).
      name: name scope of the ops.

    Returns:
      A Tensor of `dtype` and shape `shape + broadcast(alpha.shape, beta.shape)`;
      values are at least the smallest positive normal number of `dtype`.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_pad_ops import broadcast_to
    from tensorweave.ops.array.array_shape_ops import broadcast_dynamic_shape
    from tensorweave.ops.math import math_binary
    from tensorweave.ops.random.random_ops import _shape_tensor
    dtype = _dt.as_dtype(dtype)
    if dtype not in _GAMMA_TYPES:  # TF fails here taking finfo(dtype): a ValueError
        raise ValueError("random_gamma: dtype %s is not float16, float32 or float64"
                         % dtype.name)
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = _shape_tensor(shape)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        both = broadcast_dynamic_shape(array_ops.shape(alpha), array_ops.shape(beta))
        alpha_b = broadcast_to(alpha, both)
        alpha_b.set_shape(broadcast_shapes(alpha.shape, beta.shape))
        attrs = _seed_attrs(seed)
        sample = apply_op("RandomGamma", [shape_t, alpha_b], attrs,
                          name="RandomGamma").outputs[0]
        tiny = np.finfo(dtype.as_numpy_dtype).tiny  # a constant "Maximum/x", as in TF
        result = math_binary.maximum(tiny, math_binary.truediv(sample, beta))
        result.set_shape(sample.shape)
        return result


# --- RandomPoissonV2 -----------------------------------------------------------------------
register_op("RandomPoissonV2", inputs=["shape: S", "rate: R"], outputs=["output: dtype"],
            attrs={"seed": 0, "seed2": 0, "S": TypeAttr(_INT_TYPES),
                   "R": TypeAttr(_POISSON_TYPES, default=_dt.float64),
                   "dtype": TypeAttr(_POISSON_TYPES, default=_dt.int64)},
            shape=_sample_shape, stateful=True)


@gradient("RandomPoissonV2")
def _random_poisson_grad(op, grad):
    # TF registers no gradient for RandomPoissonV2, so tf.gradients raises LookupError;
    # registered here so that the registry knows the op's gradient status
    raise LookupError("No gradient defined for operation '%s' (op type: RandomPoissonV2)"
                      % op.name)


@kernel("RandomPoissonV2")
def _random_poisson_kernel(ctx, shape, rate):
    sample_dims = _shape_from(shape)
    dims = sample_dims + tuple(rate.shape)
    out_type = ctx.attrs["dtype"].as_numpy_dtype
    if _num_values(dims) == 0:   # TF returns before reserving any samples
        return np.zeros(dims, out_type)
    if np.isnan(rate).any():   # TF's rejection loop never ends on a NaN rate
        raise errors.InvalidArgumentError(
            None, ctx.op, "RandomPoissonV2: a rate is NaN, which has no Poisson sample")
    num_samples = _num_values(sample_dims)
    key, counter = _philox_draw(ctx, num_samples * rate.size)
    x = tf_distributions.poisson(key, counter, rate.astype(np.float64), num_samples)
    return from_float64(x, out_type).reshape(dims)


@tf_export("random_poisson", "random.poisson")
def random_poisson(lam, shape, dtype=_dt.float32, seed: Optional[int] = None,
                   name: Optional[str] = None) -> Tensor:
    """Draws samples from Poisson distributions with rates `lam`.

    Args:
      lam: a Tensor of rates (float16/32/64, int32 or int64).
      shape: a 1-D integer Tensor or Python list: the shape of the samples drawn for
        each rate.
      dtype: the output type: float16, float32, float64, int32 or int64.
      seed: op-level seed (see `tf.set_random_seed`).
      name: name scope of the ops.

    Returns:
      A Tensor of `dtype` and shape `shape + lam.shape`.
    """
    from tensorweave.ops.random.random_ops import _shape_tensor
    with name_scope(name, "random_poisson", [lam, shape]):
        shape_t = _shape_tensor(shape)
        lam = convert_to_tensor(lam, name="lam")
        attrs = _seed_attrs(seed)
        attrs["dtype"] = _dt.as_dtype(dtype)
        return apply_op("RandomPoissonV2", [shape_t, lam], attrs,
                        name="RandomPoissonV2").outputs[0]
