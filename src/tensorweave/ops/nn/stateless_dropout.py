"""TF 2's dropouts kept in tf.compat.v1: `tf.nn.experimental.stateless_dropout` (its mask
drawn by `tf.random.stateless_uniform` from a seed, so TF's values) and
`tf.nn.experimental.general_dropout` (its mask drawn by any uniform sampler).

Both are TF's composition: `where(U >= rate, x * scale, 0)` with U of `noise_shape` in
[0, 1), `scale = 1 / (1 - rate)` (a constant for a number rate, `x / (1 - rate)` for a
tensor rate). They are builders over math, array and random ops (no kernels, no
gradients of their own); other families are imported inside the functions.
"""
from __future__ import annotations

import numbers
from typing import Callable, Optional, Tuple

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.nn.nn_impl import _is_tensor_like, _noise_shape


def _kept_scaled(x: Tensor, rate) -> Tuple[Tensor, object]:
    """(`x / (1 - rate)`, the rate to compare with): TF's Mul by a constant for a number
    rate, RealDiv for a tensor rate (cast to x's dtype).

    Raises:
      ValueError: a rate that is neither a number nor a scalar tensor of x's dtype.
    """
    from tensorweave.ops.math import math_binary, math_ops
    if not _is_tensor_like(rate):
        if not isinstance(rate, numbers.Real):
            raise ValueError("`rate` must be a scalar or scalar tensor. Received: rate=%s"
                             % (rate,))
        scale = convert_to_tensor(1 / (1 - rate), dtype=x.dtype)
        return math_binary.multiply(x, scale), rate
    rate = convert_to_tensor(rate, name="rate")
    rate.shape.assert_has_rank(0)
    if rate.dtype.base_dtype != x.dtype:
        raise ValueError("`x.dtype` must be compatible with `rate.dtype`. Received: "
                         "x.dtype=%s and rate.dtype=%s" % (x.dtype, rate.dtype))
    rate = math_ops.cast(rate, x.dtype, name="rate") if rate.dtype != x.dtype else rate
    one = convert_to_tensor(1, dtype=x.dtype)
    return math_binary.realdiv(x, math_binary.subtract(one, rate)), rate


def _dropout(x, rate, noise_shape, uniform_sampler: Callable, name: Optional[str],
             default_name: str) -> Tensor:
    """TF's dropout of `x` with the mask `uniform_sampler(shape=, dtype=) >= rate`.

    Raises:
      ValueError: a number rate outside [0, 1), a rate tensor not a scalar of x's
        dtype, or `x` not floating point.
    """
    from tensorweave.ops.indexing import indexing_select
    from tensorweave.ops.math import math_binary
    with _graph.name_scope(name, default_name, [x]):
        is_number = isinstance(rate, numbers.Real) and not _is_tensor_like(rate)
        if is_number and (rate < 0 or rate >= 1):   # as TF's test (a NaN passes it)
            raise ValueError("`rate` must be a scalar tensor or a float in the range "
                             "[0, 1). Received: rate=%s" % (rate,))
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError("`x.dtype` must be a floating point tensor as `x` will be "
                             "scaled. Received: x_dtype=%s" % (x.dtype,))
        if is_number and rate == 0:   # TF returns x itself, drawing nothing
            return x
        scaled, rate = _kept_scaled(x, rate)
        uniform = uniform_sampler(shape=_noise_shape(x, noise_shape), dtype=x.dtype)
        keep = math_binary.greater_equal(uniform, rate)
        out = indexing_select.where_v2(keep, scaled, convert_to_tensor(0, dtype=x.dtype))
        out.set_shape(x.shape)
        return out


@tf_export("nn.experimental.stateless_dropout")
def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None,
                      name: Optional[str] = None) -> Tensor:
    """Sets each element of `x` to 0 with probability `rate` and scales the others by
    `1 / (1 - rate)`, deterministically in `seed` (TF's values for the same seed).

    Args:
      x: a floating-point Tensor.
      rate: the probability of dropping an element: a number in [0, 1) or a scalar
        Tensor of x's dtype.
      seed: an int32/int64 Tensor of shape [2].
      rng_alg: the `alg` of `tf.random.stateless_uniform` (default "auto_select").
      noise_shape: the shape of the keep/drop mask, broadcast against `x`; default
        x's shape.
      name: name scope of the ops.

    Returns:
      A Tensor of the shape and dtype of `x` (`x` itself for a rate of 0).

    Raises:
      ValueError: a rate out of range or of the wrong shape or dtype, `x` not floating
        point, or a seed whose shape is not [2].
    """
    from tensorweave.ops.random.stateless_random_ops import stateless_random_uniform
    from tensorweave.ops.random.stateless_random_ops import alg_id

    def sampler(shape, dtype):
        alg = "auto_select" if rng_alg is None else rng_alg
        alg_id(alg)   # TF's check of the algorithm, when the mask is drawn
        return stateless_random_uniform(shape, seed=seed, dtype=dtype, alg=alg)
    return _dropout(x, rate, noise_shape, sampler, name, "stateless_dropout")


@tf_export("nn.experimental.general_dropout")
def general_dropout(x, rate, uniform_sampler: Callable, noise_shape=None,
                    name: Optional[str] = None) -> Tensor:
    """Dropout with the mask drawn by `uniform_sampler`: an element of `x` is kept
    (scaled by `1 / (1 - rate)`) where the sample is at least `rate`, else set to 0.

    Args:
      x: a floating-point Tensor.
      rate: the probability of dropping an element: a number in [0, 1) or a scalar
        Tensor of x's dtype.
      uniform_sampler: a callable `(shape=, dtype=) -> Tensor` of values uniform in
        [0, 1), e.g. `functools.partial(tf.random.stateless_uniform, seed=seed)`.
      noise_shape: the shape of the keep/drop mask, broadcast against `x`; default
        x's shape.
      name: name scope of the ops.

    Returns:
      A Tensor of the shape and dtype of `x` (`x` itself for a rate of 0).

    Raises:
      ValueError: a rate out of range or of the wrong shape or dtype, or `x` not
        floating point.
    """
    return _dropout(x, rate, noise_shape, uniform_sampler, name, "general_dropout")
