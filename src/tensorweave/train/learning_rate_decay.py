"""Learning-rate schedules (TF1 `tf.train.exponential_decay` and friends).

Each schedule is a small composition of math ops on the global step, computed in the
dtype of `learning_rate`. Where TF1 uses `tf.cond`/`tf.case` on scalars, the same result
is computed with element-wise selects (`tf.where`), so no control flow is needed.
"""
from __future__ import annotations

import math
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array import array_ops
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_unary
from tensorweave.ops.random import random_ops
from tensorweave.ops.control_flow import structure


def _cast(x, dtype):
    from tensorweave.ops.math import math_ops
    return math_ops.cast(x, dtype)


def _require_step(global_step, what: str) -> None:
    if global_step is None:
        raise ValueError("global_step is required for %s." % what)


def _setup(learning_rate, global_step, decay_steps, *more):
    """(lr, step, decay_steps, *more) as tensors of lr's dtype."""
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    dtype = lr.dtype
    return (lr,) + tuple(_cast(v, dtype) for v in (global_step, decay_steps) + more)


def _decay_ratio(step, steps, staircase: bool):
    """`step / steps`, floored if `staircase` (decay at discrete intervals)."""
    ratio = step / steps
    return math_unary.floor(ratio) if staircase else ratio


@tf_export("train.exponential_decay")
def exponential_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name: Optional[str] = None):
    """`learning_rate * decay_rate ^ (global_step / decay_steps)` (the exponent floored
    if `staircase`).

    Args:
      learning_rate: scalar float Tensor or number, the initial rate.
      global_step: scalar integer Tensor or Variable; must not be None.
      decay_steps, decay_rate: positive numbers or scalar Tensors.
      staircase: decay at discrete intervals.
      name: name scope (default "ExponentialDecay").

    Returns:
      A scalar Tensor of learning_rate's dtype.

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "exponential_decay")
    with _graph.name_scope(name or "ExponentialDecay") as scope:
        lr, step, steps, rate = _setup(learning_rate, global_step, decay_steps, decay_rate)
        p = _decay_ratio(step, steps, staircase)
        return math_binary.multiply(lr, math_binary.pow(rate, p), name=scope)


def _boundary_of(b, x_dtype):
    """`b` compared with a step of `x_dtype`: TF casts int32 to int64 and nothing else
    (a float boundary is not truncated into an integer step)."""
    if b.dtype.base_dtype == x_dtype:
        return b
    if b.dtype.base_dtype == _dt.int32 and x_dtype == _dt.int64:
        return _cast(b, x_dtype)
    raise ValueError("Boundaries (%s) must have the same dtype as x (%s)."
                     % (b.dtype.base_dtype, x_dtype))


@tf_export("train.piecewise_constant", "train.piecewise_constant_decay")
def piecewise_constant(x, boundaries, values, name: Optional[str] = None):
    """`values[0]` for x <= boundaries[0], `values[i]` for boundaries[i-1] < x <=
    boundaries[i], `values[-1]` for x > boundaries[-1].

    Args:
      x: a scalar Tensor (the step).
      boundaries: increasing list of numbers or scalar Tensors of x's dtype (int32
        ones are cast to an int64 x).
      values: list with one more element than `boundaries`, all of one dtype.
      name: name scope (default "PiecewiseConstant").

    Raises:
      ValueError: the lengths do not match, a boundary's dtype is not x's, or the
        values' dtypes differ.
    """
    boundaries = list(boundaries)
    values = list(values)
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of "
                         "values")
    with _graph.name_scope(name or "PiecewiseConstant") as scope:
        x = convert_to_tensor(x)
        bounds = [_boundary_of(convert_to_tensor(b), x.dtype.base_dtype)
                  for b in boundaries]
        vals = [convert_to_tensor(v) for v in values]
        for v in vals[1:]:
            if v.dtype.base_dtype != vals[0].dtype.base_dtype:
                raise ValueError("Values must have elements all with the same dtype (%s vs "
                                 "%s)." % (vals[0].dtype.base_dtype, v.dtype.base_dtype))
        result = vals[0]
        for b, v in zip(bounds, vals[1:]):
            result = indexing_select.where(math_binary.greater(x, b), v, result)
        return structure.identity(result, name=scope)


@tf_export("train.polynomial_decay")
def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle: bool = False, name: Optional[str] = None):
    """`(learning_rate - end) * (1 - step / decay_steps) ^ power + end`, with step
    capped at decay_steps, or (with `cycle`) decay_steps stretched to the first multiple
    of itself above the step.

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "polynomial_decay")
    with _graph.name_scope(name or "PolynomialDecay") as scope:
        lr, step, steps, end, power = _setup(learning_rate, global_step, decay_steps,
                                             end_learning_rate, power)
        if cycle:
            multiplier = indexing_select.where(math_binary.equal(step, 0.0),
                                      array_ops.ones_like(step), math_unary.ceil(step / steps))
            steps = steps * multiplier
        else:
            step = math_binary.minimum(step, steps)
        p = step / steps
        return math_binary.add((lr - end) * math_binary.pow(1.0 - p, power), end, name=scope)


@tf_export("train.natural_exp_decay")
def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name: Optional[str] = None):
    """`learning_rate * exp(-decay_rate * global_step / decay_steps)` (the ratio
    floored if `staircase`).

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "natural_exp_decay")
    with _graph.name_scope(name or "ExponentialDecay") as scope:  # TF1 name
        lr, step, steps, rate = _setup(learning_rate, global_step, decay_steps, decay_rate)
        p = _decay_ratio(step, steps, staircase)
        return math_binary.multiply(lr, math_unary.exp(-rate * p), name=scope)


@tf_export("train.inverse_time_decay")
def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate,
                       staircase: bool = False, name: Optional[str] = None):
    """`learning_rate / (1 + decay_rate * global_step / decay_steps)` (the ratio
    floored if `staircase`).

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "inverse_time_decay")
    with _graph.name_scope(name or "InverseTimeDecay") as scope:
        lr, step, steps, rate = _setup(learning_rate, global_step, decay_steps, decay_rate)
        p = _decay_ratio(step, steps, staircase)
        return math_binary.divide(lr, 1.0 + rate * p, name=scope)


def _cosine(fraction):
    return 0.5 * (1.0 + math_unary.cos(math.pi * fraction))


@tf_export("train.cosine_decay")
def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0,
                 name: Optional[str] = None):
    """`learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha)` (Loshchilov & Hutter, SGDR).

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "cosine_decay")
    with _graph.name_scope(name or "CosineDecay") as scope:
        lr, step, steps, alpha = _setup(learning_rate, global_step, decay_steps, alpha)
        fraction = math_binary.minimum(step, steps) / steps
        decayed = (1.0 - alpha) * _cosine(fraction) + alpha
        return math_binary.multiply(lr, decayed, name=scope)


@tf_export("train.cosine_decay_restarts")
def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0,
                          m_mul=1.0, alpha=0.0, name: Optional[str] = None):
    """Cosine decay with warm restarts (SGDR): period i lasts first_decay_steps *
    t_mul^i steps and starts from learning_rate * m_mul^i.

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "cosine_decay_restarts")
    with _graph.name_scope(name or "SGDRDecay") as scope:
        lr, step, steps, alpha, t_mul, m_mul = _setup(
            learning_rate, global_step, first_decay_steps, alpha, t_mul, m_mul)
        fraction = step / steps
        # The number of completed periods and the fraction of the current one, for
        # t_mul == 1 (equal periods) and t_mul != 1 (geometric periods).
        i_flat = math_unary.floor(fraction)
        frac_flat = fraction - i_flat
        i_geo = math_unary.floor(
            math_unary.log(1.0 - fraction * (1.0 - t_mul)) / math_unary.log(t_mul))
        done = (1.0 - math_binary.pow(t_mul, i_geo)) / (1.0 - t_mul)
        frac_geo = (fraction - done) / math_binary.pow(t_mul, i_geo)
        flat = math_binary.equal(t_mul, 1.0)
        i_restart = indexing_select.where(flat, i_flat, i_geo)
        fraction = indexing_select.where(flat, frac_flat, frac_geo)
        decayed = (1.0 - alpha) * math_binary.pow(m_mul, i_restart) * _cosine(fraction) + alpha
        return math_binary.multiply(lr, decayed, name=scope)


def _linear_cosine_parts(lr, step, steps, num_periods):
    step = math_binary.minimum(step, steps)
    linear = (steps - step) / steps
    fraction = step / steps
    cosine = _cosine(2.0 * _cast(num_periods, lr.dtype) * fraction)
    return step, linear, cosine


@tf_export("train.linear_cosine_decay")
def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5,
                        alpha=0.0, beta=0.001, name: Optional[str] = None):
    """`learning_rate * ((alpha + linear) * cosine + beta)` with linear =
    (decay_steps - step) / decay_steps and cosine = 0.5 * (1 + cos(2 pi num_periods *
    step / decay_steps)), step capped at decay_steps.

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "linear_cosine_decay")
    with _graph.name_scope(name or "LinearCosineDecay") as scope:
        lr, step, steps = _setup(learning_rate, global_step, decay_steps)
        _, linear, cosine = _linear_cosine_parts(lr, step, steps, num_periods)
        value = (_cast(alpha, lr.dtype) + linear) * cosine + _cast(beta, lr.dtype)
        return math_binary.multiply(lr, value, name=scope)


@tf_export("train.noisy_linear_cosine_decay")
def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps,
                              initial_variance=1.0, variance_decay=0.55, num_periods=0.5,
                              alpha=0.0, beta=0.001, name: Optional[str] = None):
    """`linear_cosine_decay` with Gaussian noise of variance initial_variance /
    (1 + step)^variance_decay added to the linear part.

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "noisy_linear_cosine_decay")
    with _graph.name_scope(name or "NoisyLinearCosineDecay") as scope:
        lr, step, steps = _setup(learning_rate, global_step, decay_steps)
        dtype = lr.dtype
        step, linear, cosine = _linear_cosine_parts(lr, step, steps, num_periods)
        variance = _cast(initial_variance, dtype) / math_binary.pow(
            1.0 + step, _cast(variance_decay, dtype))
        noise = random_ops.random_normal(array_ops.shape(linear), stddev=math_unary.sqrt(variance),
                                     dtype=dtype)
        value = (_cast(alpha, dtype) + linear + noise) * cosine + _cast(beta, dtype)
        return math_binary.multiply(lr, value, name=scope)
