"""Initializers (TF1 `tf.initializers`, `tf.zeros_initializer`, ...).

An initializer is a callable object: `init(shape, dtype=None, partition_info=None)`
builds the ops of a tensor of that shape; `get_variable` calls it inside the variable's
'Initializer' name scope. Random initializers pass their `seed` to the random ops, so a
graph seed plus op seed gives reproducible values.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.array import array_ops
from tensorweave.ops.random import random_ops

# stddev of a standard normal truncated to [-2, 2]: dividing by it gives a truncated
# normal the variance the caller asked for.
_TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


def _float_dtype(dtype) -> _dt.DType:
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError("Expected floating point type, got %s." % dtype)
    return dtype


def _shape_list(shape) -> list:
    from tensorweave.framework.shapes import as_shape
    if isinstance(shape, (list, tuple)):
        return [int(d) for d in shape]
    return as_shape(shape).as_list()


class Initializer:
    """Base class of initializers: `__call__(shape, dtype=None, partition_info=None)`."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError("%s is an initializer base class without __call__; use "
                                  "a concrete initializer" % type(self).__name__)

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class _Fill(Initializer):
    """Tensors filled with one value: `_fill` is the builder (zeros or ones)."""

    def __init__(self, dtype=_dt.float32):
        self.dtype = _dt.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return self._fill(_shape_list(shape), dtype if dtype is not None else self.dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}


@tf_export("zeros_initializer", "initializers.zeros")
class Zeros(_Fill):
    """Tensors of zeros (TF1 `tf.zeros_initializer`)."""

    _fill = staticmethod(array_ops.zeros)


@tf_export("ones_initializer", "initializers.ones")
class Ones(_Fill):
    """Tensors of ones (TF1 `tf.ones_initializer`)."""

    _fill = staticmethod(array_ops.ones)


@tf_export("constant_initializer", "initializers.constant")
class Constant(Initializer):
    """Tensors holding `value` (TF1 `tf.constant_initializer`).

    Args:
      value: a Python scalar, list or tuple of values, or NumPy array. A scalar fills
        the whole tensor; a list with fewer elements than the shape is padded with its
        last element (TF1 behaviour).
      dtype: default element type.
      verify_shape: if True, `value` must already have the requested shape.

    Raises:
      TypeError: `value` has an unsupported type; with `verify_shape`, a wrong shape.
      ValueError: `value` has more elements than the shape.
    """

    def __init__(self, value=0, dtype=_dt.float32, verify_shape: bool = False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError("Invalid type for initial value: %s (expected Python scalar, list "
                            "or tuple of values, or numpy.ndarray)." % type(value))
        self.value = value
        self.dtype = _dt.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        from tensorweave.ops.array.constant_op import constant
        dtype = _dt.as_dtype(dtype) if dtype is not None else self.dtype
        verify = self._verify_shape if verify_shape is None else verify_shape
        shape = _shape_list(shape)
        if dtype is _dt.string:
            arr = np.asarray(self.value, dtype=object)
        else:  # TF converts as tf.constant does: no Python float into an integer dtype
            from tensorweave.ops.array.constant_op import constant_array
            arr = constant_array(self.value, dtype, True)
        n = int(np.prod(shape)) if shape else 1
        if verify and list(arr.shape) != shape:
            raise TypeError("Expected Tensor's shape: %s, got %s." % (tuple(shape), arr.shape))
        if arr.size > n:
            raise ValueError("Too many elements provided. Needed at most %d, but received %d"
                             % (n, arr.size))
        if arr.size == 0 and n:
            raise ValueError("Cannot initialize a tensor of %d elements from an empty value" % n)
        flat = arr.reshape(-1)
        if flat.size < n:
            flat = np.concatenate([flat, np.full(n - flat.size, flat[-1], dtype=flat.dtype)])
        return constant(flat.reshape(shape), dtype=dtype)

    def get_config(self):
        # TF's keys (verify_shape is not part of the config)
        return {"value": self.value, "dtype": self.dtype.name}


@tf_export("random_uniform_initializer", "initializers.random_uniform")
class RandomUniform(Initializer):
    """Values uniform in [minval, maxval) (TF1 `tf.random_uniform_initializer`).

    `maxval` None means 1 for floats (an integer dtype needs an explicit maxval).
    """

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=_dt.float32):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = _dt.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dt.as_dtype(dtype) if dtype is not None else self.dtype
        return random_ops.random_uniform(_shape_list(shape), self.minval, self.maxval, dtype,
                                         seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class _Normal(Initializer):
    """Normal values of `mean` and `stddev`: `_sample` is the random op that draws them."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dt.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        # TF's variance-scaling family takes dtype=None for its default, float32
        self.dtype = _float_dtype(_dt.float32 if dtype is None else dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype) if dtype is not None else self.dtype
        return self._sample(_shape_list(shape), self.mean, self.stddev, dtype, seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


@tf_export("random_normal_initializer", "initializers.random_normal")
class RandomNormal(_Normal):
    """Normally distributed values (TF1 `tf.random_normal_initializer`)."""

    _sample = staticmethod(random_ops.random_normal)


@tf_export("truncated_normal_initializer", "initializers.truncated_normal")
class TruncatedNormal(_Normal):
    """Normal values redrawn when more than two stddevs from the mean (TF1
    `tf.truncated_normal_initializer`)."""

    _sample = staticmethod(random_ops.truncated_normal)


@tf_export("uniform_unit_scaling_initializer", "initializers.uniform_unit_scaling")
class UniformUnitScaling(Initializer):
    """Uniform values in [-sqrt(3/fan_in) * factor, sqrt(3/fan_in) * factor], fan_in
    being the product of all dimensions but the last (TF1, deprecated)."""

    def __init__(self, factor=1.0, seed=None, dtype=_dt.float32):
        self.factor = factor
        self.seed = seed
        # TF's variance-scaling family takes dtype=None for its default, float32
        self.dtype = _float_dtype(_dt.float32 if dtype is None else dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype) if dtype is not None else self.dtype
        shape = _shape_list(shape)
        scale_shape = _full_shape(shape, partition_info)
        input_size = 1.0
        for d in scale_shape[:-1]:
            input_size *= float(d)
        input_size = max(input_size, 1.0)
        limit = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


def _full_shape(shape, partition_info):
    if partition_info is not None:
        return list(partition_info.full_shape)
    return shape


def _compute_fans(shape) -> tuple:
    """(fan_in, fan_out) of a weight shape: dense [in, out]; convolution
    [*spatial, in, out] multiplies both by the receptive-field size."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = 1
    for d in shape[:-2]:
        receptive *= d
    return shape[-2] * receptive, shape[-1] * receptive


@tf_export("variance_scaling_initializer", "initializers.variance_scaling")
class VarianceScaling(Initializer):
    """Values with variance `scale / n`, n the fan-in, fan-out or their average (TF1
    `tf.variance_scaling_initializer`).

    Args:
      scale: positive scaling factor.
      mode: "fan_in", "fan_out" or "fan_avg".
      distribution: "truncated_normal" (also TF1's "normal": a normal truncated at two
        stddevs, its stddev corrected by 0.8796 so the variance is as asked),
        "untruncated_normal", or "uniform" (in [-sqrt(3 * scale / n), ...]).
      seed: op seed.
      dtype: a floating dtype.

    Raises:
      ValueError: invalid scale, mode or distribution, or a non-float dtype.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=_dt.float32):
        if scale <= 0.:
            raise ValueError("`scale` must be positive float.")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError("Invalid `mode` argument:", mode)
        distribution = distribution.lower()
        if distribution not in {"normal", "uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError("Invalid `distribution` argument:", distribution)
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        # TF's variance-scaling family takes dtype=None for its default, float32
        self.dtype = _float_dtype(_dt.float32 if dtype is None else dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _float_dtype(dtype) if dtype is not None else self.dtype
        shape = _shape_list(shape)
        fan_in, fan_out = _compute_fans(_full_shape(shape, partition_info))
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1., fan_in)
        elif self.mode == "fan_out":
            scale /= max(1., fan_out)
        else:
            scale /= max(1., (fan_in + fan_out) / 2.)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCATED_NORMAL_STDDEV
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class _Glorot(VarianceScaling):
    """VarianceScaling with scale 1 over the average fan, in the distribution `_distribution`."""

    def __init__(self, seed=None, dtype=_dt.float32):
        super().__init__(scale=1.0, mode="fan_avg", distribution=self._distribution,
                         seed=seed, dtype=dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


@tf_export("glorot_uniform_initializer", "initializers.glorot_uniform")
class GlorotUniform(_Glorot):
    """Uniform in [-limit, limit], limit = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio
    2010; TF1 `tf.glorot_uniform_initializer`, get_variable's default for floats)."""

    _distribution = "uniform"


@tf_export("glorot_normal_initializer", "initializers.glorot_normal")
class GlorotNormal(_Glorot):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (TF1
    `tf.glorot_normal_initializer`)."""

    _distribution = "truncated_normal"


@tf_export("initializers.identity")
class Identity(Initializer):
    """The identity matrix times `gain`, for 2-D shapes (TF1 `tf.initializers.identity`).

    Raises:
      ValueError: the shape is not 2-D.
    """

    def __init__(self, gain=1.0, dtype=_dt.float32):
        self.gain = gain
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.array.constant_op import constant
        dtype = _float_dtype(dtype) if dtype is not None else self.dtype
        full = _full_shape(_shape_list(shape), partition_info)
        if len(full) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        value = np.eye(full[0], full[1], dtype=dtype.as_numpy_dtype) * np.asarray(
            self.gain, dtype=dtype.as_numpy_dtype)
        return constant(value, dtype=dtype)

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}


@tf_export("initializers.lecun_normal")
def lecun_normal(seed=None) -> VarianceScaling:
    """Truncated normal with stddev sqrt(1 / fan_in) (LeCun 1998)."""
    return VarianceScaling(scale=1., mode="fan_in", distribution="truncated_normal", seed=seed)


@tf_export("initializers.lecun_uniform")
def lecun_uniform(seed=None) -> VarianceScaling:
    """Uniform in [-sqrt(3 / fan_in), sqrt(3 / fan_in)]."""
    return VarianceScaling(scale=1., mode="fan_in", distribution="uniform", seed=seed)


@tf_export("initializers.he_normal")
def he_normal(seed=None) -> VarianceScaling:
    """Truncated normal with stddev sqrt(2 / fan_in) (He et al. 2015)."""
    return VarianceScaling(scale=2., mode="fan_in", distribution="truncated_normal", seed=seed)


@tf_export("initializers.he_uniform")
def he_uniform(seed=None) -> VarianceScaling:
    """Uniform in [-sqrt(6 / fan_in), sqrt(6 / fan_in)]."""
    return VarianceScaling(scale=2., mode="fan_in", distribution="uniform", seed=seed)


@tf_export("orthogonal_initializer", "initializers.orthogonal")
class Orthogonal(Initializer):
    """An orthogonal matrix times `gain` (Saxe et al. 2014; TF1 `tf.orthogonal_initializer`).

    A shape [d0, ..., dn-1, n] is filled as a matrix of prod(d0..dn-1) rows and n columns:
    the Q of the QR decomposition of a standard normal matrix (transposed when it has
    fewer rows than columns), its columns' signs fixed by R's diagonal so Q is uniformly
    distributed. Its rows or its columns (whichever are fewer) are orthonormal.

    Args:
      gain: multiplies the matrix.
      seed: op seed of the normal draw.
      dtype: default element type (floating).

    Raises:
      ValueError: a non-floating `dtype`; when called, a shape of rank < 2.
      TypeError: when called with a dtype the random or QR ops do not support.
    """

    def __init__(self, gain=1.0, seed=None, dtype=_dt.float32):
        self.gain = gain
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.linalg import matrix_ops, spectral_ops
        from tensorweave.ops.math import math_unary
        dtype = _dt.as_dtype(dtype) if dtype is not None else self.dtype
        shape = _shape_list(shape)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        num_rows = int(np.prod(shape[:-1]))
        num_cols = shape[-1]
        flat_shape = (num_cols, num_rows) if num_rows < num_cols else (num_rows, num_cols)
        a = random_ops.random_normal(flat_shape, dtype=dtype, seed=self.seed)
        q, r = spectral_ops.qr(a, full_matrices=False)
        # Q's columns times the signs of R's diagonal: without it the QR's sign
        # convention would bias the distribution of Q
        q = q * math_unary.sign(matrix_ops.tensor_diag_part(r))
        if num_rows < num_cols:
            q = matrix_ops.matrix_transpose(q)
        return self.gain * array_ops.reshape(q, shape)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


# Lower-case aliases TF1 has in init_ops (tf.initializers.* above are the classes).
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
