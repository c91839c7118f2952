"""Stateless random ops (TF1 `tf.random.stateless_*`, `fold_in`, `split`).

Each op is a pure function of its inputs: the values are determined by the int32/int64
`seed` tensor of shape [2] (and the shape and parameters), so the same seed gives the
same values in every run, session and process, and different seeds give independent
streams. The ops are not stateful: the optimizer may fold or merge them.

The uniform, normal, truncated normal, integer and categorical ops give TF's CPU values
bit for bit (philox.py, tf_sampling.py): TF turns the seed into a Philox key and
counter by one Philox block (`philox.key_counter_of_stateless_seed`) and fills the
output as its stateful kernels do; `split` and `fold_in`, built on them, give TF's
seeds. The binomial, gamma, Poisson and parameterized truncated normal ops give TF's
values too (tf_distributions.py: TF's rejection samplers; the truncated normal's values
depend on TF's split of the outputs over the session's intra-op threads, which is
reproduced).

`alg` is checked as TF checks it (ValueError, TypeError), and every algorithm draws from
Philox: "auto_select" is Philox on TF's CPU too, and TF's CPU kernels have no ThreeFry
(they fail at run time), so "threefry" gives the Philox values, as a ThreeFry
tf.random.Generator does here (stateful_random_ops.py).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.ops.random import philox, tf_distributions, tf_sampling
from tensorweave.ops.random.tf_distributions import from_float64
from tensorweave.ops.random.random_ops import _FLOAT_TYPES, _INT_TYPES, _categorical_draws, \
    _multinomial_shape, _num_values, _shape_from, _shape_input_fn, _shape_tensor, \
    philox_values

_FULL_INT_TYPES = (_dt.int32, _dt.int64, _dt.uint32, _dt.uint64)
_PARAM_TYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)


# --- seeds ---------------------------------------------------------------------------------
def _check_seed_shape(op, index: int) -> None:
    s = op.inputs[index].shape
    if s.ndims is not None:
        if s.ndims != 1:
            raise ValueError("Shape must be rank 1 but is rank %d" % s.ndims)
        if s[0].value is not None and s[0].value != 2:
            raise ValueError("Dimension must be 2 but is %d" % s[0].value)


def _checked_seed(ctx, seed) -> np.ndarray:
    seed = np.asarray(seed)
    if seed.shape != (2,):
        raise errors.InvalidArgumentError(None, ctx.op, "seed must have shape [2], not [%s]"
                                          % ",".join(str(d) for d in seed.shape))
    return seed


def _philox_of_seed(ctx, seed):
    """TF's Philox (key, counter) of the seed tensor."""
    return philox.key_counter_of_stateless_seed(_checked_seed(ctx, seed).tolist())


def _shaped(seed_index: int):
    def shape_fn(op):
        _check_seed_shape(op, seed_index)
        return _shape_input_fn(op)
    return shape_fn


def _declare(op_type: str, inputs, types, default=None, param_attr=None, shape_attr="T",
             param_default=None):
    """A stateless op `(shape, seed, *inputs) -> output: dtype` of the given shape, with
    TF's attr names and defaults: `shape_attr` types the shape, `param_attr` the
    float-or-int parameter inputs."""
    # the defaults matter on import: a SavedModel's functions omit attrs left at them.
    # TF defaults a shape type attr named T (to int32) exactly where dtype has a default
    shape_default = _dt.int32 if default and shape_attr == "T" else None
    attrs = {"dtype": _type_attr(types, default), shape_attr: _type_attr(_INT_TYPES,
                                                                        shape_default),
             "Tseed": TypeAttr(_INT_TYPES, default=_dt.int64)}
    if param_attr:
        attrs[param_attr] = _type_attr(_PARAM_TYPES, param_default)
    register_op(op_type, inputs=["shape: %s" % shape_attr, "seed: Tseed"] + inputs,
                outputs=["output: dtype"], attrs=attrs, shape=_shaped(1))
    not_differentiable(op_type)


def _type_attr(types, default) -> TypeAttr:
    return TypeAttr(types, default=default) if default else TypeAttr(types)


# --- uniform, normal, truncated normal, integers -------------------------------------------
_declare("StatelessRandomUniform", [], _FLOAT_TYPES, default=_dt.float32)
_declare("StatelessRandomNormal", [], _FLOAT_TYPES, default=_dt.float32)
_declare("StatelessTruncatedNormal", [], _FLOAT_TYPES, default=_dt.float32)
_declare("StatelessRandomUniformInt", ["minval: dtype", "maxval: dtype"], _INT_TYPES)
_declare("StatelessRandomUniformFullInt", [], _FULL_INT_TYPES, default=_dt.uint64)


@kernel("StatelessRandomUniform")
def _uniform_kernel(ctx, shape, seed):
    return philox_values(philox.uniform, *_philox_of_seed(ctx, seed), _shape_from(shape),
                         ctx.attrs["dtype"])


@kernel("StatelessRandomNormal")
def _normal_kernel(ctx, shape, seed):
    return philox_values(philox.normal, *_philox_of_seed(ctx, seed), _shape_from(shape),
                         ctx.attrs["dtype"])


@kernel("StatelessTruncatedNormal")
def _truncated_normal_kernel(ctx, shape, seed):
    return philox_values(philox.truncated_normal, *_philox_of_seed(ctx, seed), _shape_from(shape),
                         ctx.attrs["dtype"])


def _uniform_int_values(ctx, dims, key, counter, minval, maxval) -> np.ndarray:
    """TF's integers in [minval, maxval) of the op's dtype and shape `dims` from the
    stream (key, counter), after TF's checks of the bounds."""
    if np.ndim(minval) != 0 or np.ndim(maxval) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "minval and maxval must be scalars")
    n = _num_values(dims)
    lo, hi = int(minval), int(maxval)
    if n > 0 and lo >= hi:
        raise errors.InvalidArgumentError(None, ctx.op, "Need minval < maxval, got %d >= %d"
                                          % (lo, hi))
    values = philox.uniform_int(key, counter, n, lo, hi, ctx.attrs["dtype"].as_numpy_dtype)
    return values.reshape(dims)


@kernel("StatelessRandomUniformInt")
def _uniform_int_kernel(ctx, shape, seed, minval, maxval):
    return _uniform_int_values(ctx, _shape_from(shape), *_philox_of_seed(ctx, seed), minval,
                              maxval)


def full_int_values(ctx, dims, key, counter) -> np.ndarray:
    """TF's integers over the whole range of the op's dtype, of shape `dims`."""
    return philox.full_int(key, counter, _num_values(dims),
                           ctx.attrs["dtype"].as_numpy_dtype).reshape(dims)


@kernel("StatelessRandomUniformFullInt")
def _full_int_kernel(ctx, shape, seed):
    return full_int_values(ctx, _shape_from(shape), *_philox_of_seed(ctx, seed))


# --- categorical -------------------------------------------------------------------------
def _stateless_multinomial_shape(op):
    _check_seed_shape(op, 2)
    return _multinomial_shape(op)


register_op("StatelessMultinomial", inputs=["logits: T", "num_samples: int32", "seed: Tseed"],
            outputs=["output: output_dtype"],
            attrs={"T": TypeAttr(_dt.REAL_NUMBERS),
                   "Tseed": TypeAttr(_INT_TYPES, default=_dt.int64),
                   "output_dtype": TypeAttr(_INT_TYPES, default=_dt.int64)},
            shape=_stateless_multinomial_shape)
not_differentiable("StatelessMultinomial")


@kernel("StatelessMultinomial")
def _multinomial_kernel(ctx, logits, num_samples, seed):
    key_counter = _philox_of_seed(ctx, seed)   # the seed is checked first, as in TF
    return _categorical_draws(ctx, logits, num_samples, lambda batch, n: key_counter)


# --- parameterized distributions: values of `shape`, parameters broadcast to it ---------------
def _broadcast_params(ctx, dims, *params):
    try:
        return [np.broadcast_to(np.asarray(p, np.float64), dims) for p in params]
    except ValueError:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Shape passed in must end with broadcasted shape: [%s] vs "
            "parameters of shapes %s" % (",".join(str(d) for d in dims),
                                         [list(np.shape(p)) for p in params])) from None


_declare("StatelessRandomBinomial", ["counts: T", "probs: T"], _PARAM_TYPES,
         default=_dt.int64, param_attr="T", shape_attr="S", param_default=_dt.float64)
_declare("StatelessRandomGammaV2", ["alpha: dtype"], (_dt.float16, _dt.float32, _dt.float64))
_declare("StatelessRandomPoisson", ["lam: Rtype"], _PARAM_TYPES, param_attr="Rtype")
_declare("StatelessParameterizedTruncatedNormal",
         ["means: dtype", "stddevs: dtype", "minvals: dtype", "maxvals: dtype"],
         (_dt.float16, _dt.float32, _dt.float64), shape_attr="S")


@kernel("StatelessRandomBinomial")
def _binomial_kernel(ctx, shape, seed, counts, probs):
    _checked_seed(ctx, seed)
    counts, probs, dims = binomial_params(ctx, shape, counts, probs)
    if _num_values(dims) == 0:
        return np.zeros(dims, ctx.attrs["dtype"].as_numpy_dtype)
    return binomial_values(ctx, dims, counts, probs, *_philox_of_seed(ctx, seed))


def binomial_params(ctx, shape, counts, probs):
    """(counts, probs, dims) of TF's binomial kernels, checked: the parameters broadcast
    together, and the output shape `dims` ends with their shape."""
    try:
        counts, probs = np.broadcast_arrays(counts, probs)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, ctx.op, "counts and probs must have compatible batch dimensions: %s vs. %s"
            % (list(np.shape(counts)), list(np.shape(probs)))) from None
    dims = _shape_from(shape)
    _check_ends_with(ctx, dims, counts.shape)
    return counts, probs, dims


def binomial_values(ctx, dims, counts, probs, key: philox.Key,
                    counter: philox.Counter) -> np.ndarray:
    """TF's binomial draws of shape `dims` (at least one value) from the stream (key,
    counter), in the op's output type: parameter b's samples at the flat positions
    `s * counts.size + b`."""
    if not np.all(np.isfinite(counts) | ~((probs > 0) & (probs < 1))):
        # TF's inversion never ends on these: sum of waiting times > NaN or inf
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s: counts must be finite where 0 < probs < 1" % ctx.op.type)
    x = tf_distributions.binomial(key, counter, counts, probs,
                                  _num_values(dims) // max(counts.size, 1))
    with np.errstate(invalid="ignore"):
        return from_float64(x, ctx.attrs["dtype"].as_numpy_dtype).reshape(dims)


def _check_ends_with(ctx, dims, param_shape) -> None:
    if len(param_shape) > len(dims) or dims[len(dims) - len(param_shape):] != param_shape:
        raise errors.InvalidArgumentError(None, ctx.op,
                                          "Shape passed in must end with broadcasted shape.")


def _per_parameter(ctx, shape, seed, param, sample):
    """TF's stateless gamma/Poisson kernels: `param`'s shape must end `shape`; its value
    i gets the `shape.size / param.size` samples at flat positions `s * param.size + i`,
    drawn by `sample(key, counter, param, samples_per_param)` from the seed's stream."""
    dims = _shape_from(shape)
    key, counter = _philox_of_seed(ctx, seed)
    out_type = ctx.attrs["dtype"].as_numpy_dtype
    if _num_values(dims) == 0:   # TF returns before looking at the parameters
        return np.zeros(dims, out_type)
    param = np.asarray(param)
    _check_ends_with(ctx, dims, param.shape)
    x = sample(key, counter, param.astype(np.float64), _num_values(dims) // param.size)
    return from_float64(x, out_type).reshape(dims)


@kernel("StatelessRandomGammaV2")
def _gamma_kernel(ctx, shape, seed, alpha):
    return _per_parameter(ctx, shape, seed, alpha, tf_distributions.gamma)


@kernel("StatelessRandomPoisson")
def _poisson_kernel(ctx, shape, seed, lam):
    if np.isnan(lam).any():   # TF's rejection loop never ends on a NaN rate
        raise errors.InvalidArgumentError(
            None, ctx.op, "StatelessRandomPoisson: a rate is NaN, which has no Poisson sample")
    return _per_parameter(ctx, shape, seed, lam, tf_distributions.poisson)


@kernel("StatelessParameterizedTruncatedNormal")
def _param_truncated_normal_kernel(ctx, shape, seed, means, stddevs, minvals, maxvals):
    _checked_seed(ctx, seed)
    try:
        params = np.broadcast_arrays(means, stddevs, minvals, maxvals)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, ctx.op, "means, stddevs, minvals, maxvals must have compatible batch "
            "dimensions: %s" % " vs. ".join(str(list(np.shape(p)))
                                            for p in (means, stddevs, minvals, maxvals))
        ) from None
    dims = _shape_from(shape)
    _check_ends_with(ctx, dims, params[0].shape)
    out_type = ctx.attrs["dtype"].as_numpy_dtype
    num_elements = _num_values(dims)
    if num_elements == 0:
        return np.zeros(dims, out_type)
    key, counter = _philox_of_seed(ctx, seed)
    batches = np.stack([p.ravel() for p in params], axis=1)
    shards = tf_sampling.shards(num_elements, tf_distributions.truncated_normal_cost(out_type),
                                tf_sampling.intra_op_threads(ctx.session))
    x = tf_distributions.parameterized_truncated_normal(
        key, counter, batches, num_elements // len(batches), out_type, shards)
    return x.reshape(dims)


# --- builders ------------------------------------------------------------------------------
# the `alg` ids of tf.random.Algorithm
PHILOX, THREEFRY, AUTO_SELECT = 1, 2, 3


def alg_id(alg) -> int:
    """TF's `convert_alg_to_int` followed by its check of the id.

    Raises:
      TypeError: `alg` of another type than int, str or Algorithm.
      ValueError: an unknown algorithm.
    """
    from tensorweave.ops.random.stateful_random_ops import Algorithm
    if isinstance(alg, Algorithm):
        return alg.value
    if isinstance(alg, str):
        names = {"philox": PHILOX, "threefry": THREEFRY, "autoselect": AUTO_SELECT}
        canonical = alg.strip().lower().replace("-", "").replace("_", "")
        if canonical in names:
            return names[canonical]
        raise ValueError("Argument `alg` got unsupported value %s. Supported values are "
                         "philox for the Philox algorithm, threefry for the ThreeFry "
                         "algorithm, and auto_select for auto-selection." % alg)
    if isinstance(alg, (int, np.integer)) and not isinstance(alg, bool):
        if int(alg) in (PHILOX, THREEFRY, AUTO_SELECT):
            return int(alg)
        raise ValueError("Argument `alg` got unsupported value %s. Supported values are 1 "
                         "for the Philox algorithm, 2 for the ThreeFry algorithm, and 3 for "
                         "auto-selection." % alg)
    raise TypeError("Can't convert argument `alg` (of value %s and type %s) to int."
                    % (alg, type(alg)))


_UNIFORM_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64, _dt.int32, _dt.int64,
                  _dt.uint32, _dt.uint64)

def _seed_tensor(seed) -> Tensor:
    seed = convert_to_tensor(seed, name="seed")
    if seed.dtype not in _INT_TYPES:
        raise TypeError("Value passed to parameter 'seed' has DataType %s not in list of "
                        "allowed values: int32, int64" % seed.dtype.name)
    return seed


@tf_export("random.stateless_uniform")
def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=_dt.float32,
                             name: Optional[str] = None, alg="auto_select") -> Tensor:
    """Deterministic uniform values in [minval, maxval) from a seed of shape [2].

    For integer dtypes `maxval` is required, and `minval = maxval = None` gives the full
    range of the dtype. The values are TF's (see the module docstring).

    Args:
      shape: 1-D integer Tensor or Python list: the output shape.
      seed: int32/int64 Tensor of shape [2].
      minval: lower bound (inclusive).
      maxval: upper bound (exclusive); default 1 for floats.
      dtype: float16, bfloat16, float32, float64, int32, int64 (uint32/uint64 for the
        full range).
      name: name scope of the ops.
      alg: "auto_select", "philox" or "threefry" (or a tf.random.Algorithm, or its
        id); see the module docstring for ThreeFry.

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError: an integer dtype with only one of minval/maxval given, or an unknown
        `alg`.
      TypeError: an `alg` that is no string, integer or tf.random.Algorithm.
    """
    alg_id(alg)  # TF's check of the algorithm; all draw Philox (module docstring)
    dtype = _dt.as_dtype(dtype)
    if dtype not in _UNIFORM_TYPES:
        raise ValueError("Argument `dtype` got invalid value %r. Accepted dtypes are (%s)."
                         % (dtype, ", ".join("tf." + d.name for d in _UNIFORM_TYPES)))
    if dtype.is_unsigned and (minval is not None or maxval is not None):
        raise ValueError("Argument `dtype` got invalid value %r when argument `minval` is "
                         "not None. Please don't use unsigned integers in this case." % dtype)
    with name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        shape_t, seed = _shape_tensor(shape), _seed_tensor(seed)
        if dtype.is_integer:
            if minval is None and maxval is None:
                return apply_op("StatelessRandomUniformFullInt", [shape_t, seed],
                                {"dtype": dtype}, name=scope).outputs[0]
            if minval is None or maxval is None:
                raise ValueError("For integer dtype {}, minval and maxval must be both "
                                 "`None` or both non-`None`; got minval={} and maxval={}."
                                 .format(dtype, minval, maxval))
            lo = convert_to_tensor(minval, dtype=dtype, name="min")
            hi = convert_to_tensor(maxval, dtype=dtype, name="max")
            return apply_op("StatelessRandomUniformInt", [shape_t, seed, lo, hi],
                            {"dtype": dtype}, name=scope).outputs[0]
        maxval = 1 if maxval is None else maxval
        rnd = apply_op("StatelessRandomUniform", [shape_t, seed], {"dtype": dtype},
                       name="StatelessRandomUniform").outputs[0]
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        return apply_op("AddV2", [rnd * (hi - lo), lo], name=scope).outputs[0]


def _scaled(op_type, default_name, shape, seed, mean, stddev, dtype, name) -> Tensor:
    dtype = _dt.as_dtype(dtype)
    with name_scope(name, default_name, [shape, seed, mean, stddev]) as scope:
        shape_t, seed = _shape_tensor(shape), _seed_tensor(seed)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_type, [shape_t, seed], {"dtype": dtype}, name=op_type).outputs[0]
        return apply_op("AddV2", [rnd * stddev, mean], name=scope).outputs[0]


@tf_export("random.stateless_normal")
def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32,
                            name: Optional[str] = None, alg="auto_select") -> Tensor:
    """Deterministic normal values from a seed of shape [2] (TF's values).

    Args:
      shape: 1-D integer Tensor or Python list: the output shape.
      seed: int32/int64 Tensor of shape [2].
      mean: the mean.
      stddev: the standard deviation.
      dtype: a floating dtype.
      name: name scope of the ops.
      alg: "auto_select", "philox" or "threefry" (or a tf.random.Algorithm, or its
        id); see the module docstring for ThreeFry.

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError, TypeError: an unknown `alg`, as TF's.
    """
    alg_id(alg)  # TF's check of the algorithm; all draw Philox (module docstring)
    return _scaled("StatelessRandomNormal", "stateless_random_normal", shape, seed, mean,
                   stddev, dtype, name)


@tf_export("random.stateless_truncated_normal")
def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32,
                               name: Optional[str] = None, alg="auto_select") -> Tensor:
    """Deterministic normal values within two standard deviations of the mean, from a
    seed of shape [2] (TF's values).

    Args:
      shape: 1-D integer Tensor or Python list: the output shape.
      seed: int32/int64 Tensor of shape [2].
      mean: the mean of the untruncated normal.
      stddev: its standard deviation.
      dtype: a floating dtype.
      name: name scope of the ops.
      alg: "auto_select", "philox" or "threefry" (or a tf.random.Algorithm, or its
        id); see the module docstring for ThreeFry.

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError, TypeError: an unknown `alg`, as TF's.
    """
    alg_id(alg)  # TF's check of the algorithm; all draw Philox (module docstring)
    return _scaled("StatelessTruncatedNormal", "stateless_truncated_normal", shape, seed,
                   mean, stddev, dtype, name)


def _stateless_categorical(logits, num_samples, seed, dtype, name, default_name):
    with name_scope(name, default_name, [logits, seed]):
        logits = convert_to_tensor(logits, name="logits")
        num = convert_to_tensor(num_samples, dtype=_dt.int32, name="num_samples")
        attrs = {"output_dtype": _dt.as_dtype(dtype) if dtype else _dt.int64}
        return apply_op("StatelessMultinomial", [logits, num, _seed_tensor(seed)], attrs,
                        name="StatelessMultinomial").outputs[0]


@tf_export("random.stateless_categorical")
def stateless_categorical(logits, num_samples, seed, dtype=_dt.int64,
                          name: Optional[str] = None) -> Tensor:
    """Deterministic draws from categorical distributions, from a seed of shape [2].

    Args:
      logits: 2-D Tensor `[batch_size, num_classes]` of unnormalized log-probabilities.
      num_samples: 0-D int: the number of samples per row.
      seed: int32/int64 Tensor of shape [2].
      dtype: int32 or int64, the type of the result.
      name: name scope of the ops.

    Returns:
      A `[batch_size, num_samples]` Tensor of class indices.
    """
    return _stateless_categorical(logits, num_samples, seed, dtype, name,
                                  "stateless_categorical")


@tf_export("random.stateless_multinomial")
def stateless_multinomial(logits, num_samples, seed, output_dtype=_dt.int64,
                          name: Optional[str] = None) -> Tensor:
    """Deprecated alias of `stateless_categorical` (argument `output_dtype`).

    Args:
      logits: 2-D Tensor `[batch_size, num_classes]` of unnormalized log-probabilities.
      num_samples: 0-D int: the number of samples per row.
      seed: int32/int64 Tensor of shape [2].
      output_dtype: int32 or int64.
      name: name scope of the ops.

    Returns:
      A `[batch_size, num_samples]` Tensor of class indices.
    """
    return _stateless_categorical(logits, num_samples, seed, output_dtype, name,
                                  "stateless_multinomial")


@tf_export("random.stateless_binomial")
def stateless_random_binomial(shape, seed, counts, probs, output_dtype=_dt.int32,
                              name: Optional[str] = None) -> Tensor:
    """Deterministic binomial draws (number of successes of `counts` trials with success
    probability `probs`), from a seed of shape [2].

    Args:
      shape: 1-D integer Tensor or Python list: the output shape; it must end with the
        broadcast shape of `counts` and `probs`.
      seed: int32/int64 Tensor of shape [2].
      counts: the numbers of trials (float or int).
      probs: the success probabilities, of the type of `counts`.
      output_dtype: the type of the result (float16/32/64, int32, int64).
      name: name scope of the ops.

    Returns:
      A Tensor of `shape` and `output_dtype`.
    """
    with name_scope(name, "stateless_random_binomial", [shape, seed, counts, probs]) as scope:
        # TF converts `probs` first (float32 by default) and `counts` to its type.
        probs = convert_to_tensor(probs, dtype_hint=_dt.float32, name="probs")
        counts = convert_to_tensor(counts, dtype_hint=probs.dtype, name="counts")
        return apply_op("StatelessRandomBinomial",
                        [_shape_tensor(shape), _seed_tensor(seed), counts, probs],
                        {"dtype": _dt.as_dtype(output_dtype)}, name=scope).outputs[0]


@tf_export("random.stateless_gamma")
def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=_dt.float32,
                           name: Optional[str] = None) -> Tensor:
    """Deterministic Gamma(alpha, beta) draws, from a seed of shape [2].

    Args:
      shape: 1-D integer Tensor or Python list: the output shape; `alpha` and `beta`
        broadcast to it (their shapes must be a suffix of it).
      seed: int32/int64 Tensor of shape [2].
      alpha: the concentrations.
      beta: the inverse scales (rates); default 1.
      dtype: float16, float32 or float64.
      name: name scope of the ops.

    Returns:
      A Tensor of `shape` and `dtype`.
    """
    from tensorweave.ops.math import math_binary
    dtype = _dt.as_dtype(dtype)
    with name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        sample = apply_op("StatelessRandomGammaV2",
                          [_shape_tensor(shape), _seed_tensor(seed), alpha],
                          {"dtype": dtype}, name="StatelessRandomGammaV2").outputs[0]
        if beta is not None:
            beta = convert_to_tensor(beta, dtype=dtype, name="beta")
            sample = math_binary.truediv(sample, beta)
        tiny = convert_to_tensor(np.finfo(dtype.as_numpy_dtype).tiny, dtype=dtype)
        result = math_binary.maximum(tiny, sample)
        result.set_shape(sample.shape)
        return result


@tf_export("random.stateless_poisson")
def stateless_random_poisson(shape, seed, lam, dtype=_dt.int32,
                             name: Optional[str] = None) -> Tensor:
    """Deterministic Poisson draws with rates `lam`, from a seed of shape [2].

    Args:
      shape: 1-D integer Tensor or Python list: the output shape; it must end with the
        shape of `lam`.
      seed: int32/int64 Tensor of shape [2].
      lam: the rates (float or int).
      dtype: the type of the result (float16/32/64, int32, int64).
      name: name scope of the ops.

    Returns:
      A Tensor of `shape` and `dtype`.
    """
    with name_scope(name, "stateless_random_poisson", [shape, seed, lam]) as scope:
        lam = convert_to_tensor(lam, name="lam")
        return apply_op("StatelessRandomPoisson",
                        [_shape_tensor(shape), _seed_tensor(seed), lam],
                        {"dtype": _dt.as_dtype(dtype)}, name=scope).outputs[0]


@tf_export("random.stateless_parameterized_truncated_normal")
def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0,
                                             minvals=-2.0, maxvals=2.0,
                                             name: Optional[str] = None) -> Tensor:
    """Deterministic draws of N(means, stddevs) restricted to [minvals, maxvals], from a
    seed of shape [2].

    Args:
      shape: 1-D integer Tensor or Python list: the output shape; it must end with the
        broadcast shape of the parameters.
      seed: int32/int64 Tensor of shape [2].
      means, stddevs, minvals, maxvals: float Tensors (the dtype of `means`); at run
        time stddevs must be positive, minvals < maxvals, and one bound finite
        (InvalidArgumentError).
      name: name scope of the ops.

    Returns:
      A Tensor of `shape` and the dtype of `means`.
    """
    with name_scope(name, "stateless_parameterized_truncated_normal",
                    [shape, means, stddevs, minvals, maxvals]) as scope:
        means = convert_to_tensor(means, name="means")
        params = [means] + [convert_to_tensor(v, dtype=means.dtype, name=n) for v, n in
                            ((stddevs, "stddevs"), (minvals, "minvals"), (maxvals, "maxvals"))]
        return apply_op("StatelessParameterizedTruncatedNormal",
                        [_shape_tensor(shape), _seed_tensor(seed)] + params,
                        {"dtype": means.dtype}, name=scope).outputs[0]


# --- seed arithmetic -------------------------------------------------------------------------
@tf_export("random.split")
def split(seed, num: int = 2, alg="auto_select") -> Tensor:
    """Splits a seed into `num` new seeds, deterministically.

    Args:
      seed: int32/int64 Tensor of shape [2].
      num: the number of seeds to make.
      alg: "auto_select", "philox" or "threefry" (or a tf.random.Algorithm, or its
        id); see the module docstring for ThreeFry.

    Returns:
      A Tensor `[num, 2]` of the dtype of `seed`.

    Raises:
      ValueError, TypeError: an unknown `alg`, as TF's.
    """
    alg_id(alg)  # TF's check of the algorithm; all draw Philox (module docstring)
    seed = _seed_tensor(seed)
    return stateless_random_uniform([num, 2], seed=seed, dtype=seed.dtype, minval=None,
                                    maxval=None)


@tf_export("random.fold_in")
def fold_in(seed, data, alg="auto_select") -> Tensor:
    """Folds the integer `data` into `seed`: a new seed, deterministic in both (TF's:
    `[a full-range integer drawn from seed, data]`, of the dtype of `data`).

    Args:
      seed: int32/int64 Tensor of shape [2].
      data: an int32/int64 scalar.
      alg: "auto_select", "philox" or "threefry" (or a tf.random.Algorithm, or its
        id); see the module docstring for ThreeFry.

    Returns:
      A Tensor `[2]` of the dtype of `data`.

    Raises:
      ValueError, TypeError: an unknown `alg`, as TF's.
    """
    from tensorweave.ops.array.array_join_ops import stack
    alg_id(alg)  # TF's check of the algorithm; all draw Philox (module docstring)
    data = convert_to_tensor(data, name="data")
    drawn = stateless_random_uniform([], seed=_seed_tensor(seed), dtype=data.dtype,
                                     minval=None, maxval=None)
    return stack([drawn, data])
