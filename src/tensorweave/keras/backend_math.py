"""`tf.keras.backend` helpers beyond backend_ops.py: variables made from shapes (`zeros`,
`ones`, `eye`, random variables), variable updates, more reductions and elementwise
math, array rearrangement (`tile`, `repeat_elements`, `reverse`, `batch_dot`, ...),
`eval` and `print_tensor`, and the functional loops (`map_fn`, `foldl`, `foldr`), each
as TF 2.15's Keras defines it in graph mode. `any`, `all` and `round` shadow the builtins
in this module (Keras' names).
"""
from __future__ import annotations

import builtins
import sys
from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend


def _export(fn):
    return tf_export("keras.backend." + fn.__name__)(fn)


# --- sparse values and evaluation ----------------------------------------------------------
@_export
def is_sparse(tensor) -> bool:
    """Whether `tensor` is a SparseTensor."""
    return isinstance(tensor, tf.SparseTensor)


@_export
def to_dense(tensor):
    """A SparseTensor as a dense tensor (other values as they are)."""
    return tf.sparse.to_dense(tensor) if is_sparse(tensor) else tensor


@_export
def eval(x):  # noqa: A001
    """The value of the tensor or variable `x` (dense), run in the Keras session."""
    return backend.get_value(to_dense(x))


# --- variables from shapes -----------------------------------------------------------------
def _filled_variable(fill, shape, dtype, name):
    """A variable holding `fill(shape)`, made outside control flow; when the shape is
    not fully known (or has a 0), the tensor itself, as TF's Keras returns."""
    with tf.init_scope():
        dtype = dtype or backend.floatx()
        value = fill(shape=shape, dtype=tf.as_dtype(dtype), name=name)
        dims = value.shape.as_list() if value.shape.ndims is not None else [None]
        if None in dims or 0 in dims:
            return value
        return backend.variable(value, dtype=dtype, name=name)


@_export
def zeros(shape, dtype=None, name: Optional[str] = None):
    """A variable of zeros of `shape` (dtype default floatx()), tracked so that the Keras
    session initializes it; a tensor when `shape` is not fully known."""
    return _filled_variable(tf.zeros, shape, dtype, name)


@_export
def ones(shape, dtype=None, name: Optional[str] = None):
    """A variable of ones of `shape` (dtype default floatx()); a tensor when `shape` is
    not fully known."""
    return _filled_variable(tf.ones, shape, dtype, name)


@_export
def eye(size, dtype=None, name: Optional[str] = None):
    """A variable holding the `size` x `size` identity matrix."""
    dtype = dtype or backend.floatx()
    return backend.variable(tf.eye(size, dtype=tf.as_dtype(dtype)), dtype, name)


@_export
def random_uniform_variable(shape, low, high, dtype=None, name: Optional[str] = None,
                            seed: Optional[int] = None):
    """A variable initialized from U(low, high) (a random seed when None, as Keras)."""
    dtype = dtype or backend.floatx()
    if seed is None:
        seed = np.random.randint(10e8)
    value = tf.random_uniform_initializer(low, high, seed=seed,
                                          dtype=tf.as_dtype(dtype))(shape)
    return backend.variable(value, dtype=dtype, name=name)


@_export
def random_normal_variable(shape, mean, scale, dtype=None, name: Optional[str] = None,
                           seed: Optional[int] = None):
    """A variable initialized from N(mean, scale**2) (a random seed when None)."""
    dtype = dtype or backend.floatx()
    if seed is None:
        seed = np.random.randint(10e8)
    value = tf.random_normal_initializer(mean, scale, seed=seed,
                                         dtype=tf.as_dtype(dtype))(shape)
    return backend.variable(value, dtype=dtype, name=name)


# --- variable updates ----------------------------------------------------------------------
@_export
def update(x, new_x):
    """`tf.assign(x, new_x)`."""
    return tf.assign(x, new_x)


@_export
def update_add(x, increment):
    """`tf.assign_add(x, increment)`."""
    return tf.assign_add(x, increment)


@_export
def update_sub(x, decrement):
    """`tf.assign_sub(x, decrement)`."""
    return tf.assign_sub(x, decrement)


@_export
def moving_average_update(x, value, momentum):
    """`x = x * momentum + value * (1 - momentum)`, zero-debiased as TF1's
    `assign_moving_average` (TF 2.15's Keras in graph mode)."""
    from tensorweave.train.moving_averages import assign_moving_average
    return assign_moving_average(x, value, momentum, zero_debias=True)


# --- reductions and elementwise math -------------------------------------------------------
@_export
def cumsum(x, axis: int = 0):
    """The cumulative sum of `x` along `axis`."""
    return tf.cumsum(x, axis=axis)


@_export
def cumprod(x, axis: int = 0):
    """The cumulative product of `x` along `axis`."""
    return tf.math.cumprod(x, axis=axis)


@_export
def var(x, axis=None, keepdims: bool = False):
    """The (population) variance of `x` along `axis` (bool cast to floatx)."""
    if x.dtype.base_dtype == tf.bool:
        x = tf.cast(x, backend.floatx())
    return tf.math.reduce_variance(x, axis=axis, keepdims=keepdims)


@_export
def std(x, axis=None, keepdims: bool = False):
    """The (population) standard deviation of `x` along `axis`."""
    if x.dtype.base_dtype == tf.bool:
        x = tf.cast(x, backend.floatx())
    return tf.math.reduce_std(x, axis=axis, keepdims=keepdims)


@_export
def any(x, axis=None, keepdims: bool = False):  # noqa: A001
    """Logical OR of `x` (cast to bool) along `axis`."""
    return tf.reduce_any(tf.cast(x, tf.bool), axis, keepdims)


@_export
def all(x, axis=None, keepdims: bool = False):  # noqa: A001
    """Logical AND of `x` (cast to bool) along `axis`."""
    return tf.reduce_all(tf.cast(x, tf.bool), axis, keepdims)


@_export
def round(x):  # noqa: A001
    """`x` rounded to the nearest integer, ties to even."""
    return tf.round(x)


@_export
def sign(x):
    """-1, 0 or 1 by the sign of `x`."""
    return tf.sign(x)


@_export
def sin(x):
    """`tf.sin(x)`."""
    return tf.sin(x)


@_export
def cos(x):
    """`tf.cos(x)`."""
    return tf.cos(x)


@_export
def greater_equal(x, y):
    """Elementwise `x >= y`."""
    return tf.greater_equal(x, y)


@_export
def less_equal(x, y):
    """Elementwise `x <= y`."""
    return tf.less_equal(x, y)


@_export
def in_top_k(predictions, targets, k: int):
    """Whether each target is among the `k` largest of its row of `predictions`."""
    return tf.math.in_top_k(predictions, targets, k)


# --- arrays --------------------------------------------------------------------------------
@_export
def gather(reference, indices):
    """The rows of `reference` at `indices` (`tf.gather`)."""
    return tf.gather(reference, indices)


@_export
def tile(x, n):
    """`x` repeated `n` times (an int for 1-D `x`, else one count per axis)."""
    if isinstance(n, int):
        n = [n]
    return tf.tile(x, n)


@_export
def repeat_elements(x, rep: int, axis: int):
    """Each slice of `x` along `axis` repeated `rep` times (as `np.repeat`)."""
    dims = x.shape.as_list()
    if dims[axis] is not None:
        splits = tf.split(x, num_or_size_splits=dims[axis], axis=axis)
        return tf.concat([s for s in splits for _ in range(rep)], axis)
    # unknown length: tile on a new axis after `axis`, then merge the two
    x_shape = tf.shape(x)
    expanded = tf.expand_dims(x, axis=axis + 1)
    reps = np.ones(len(dims) + 1, dtype="int32")
    reps[axis + 1] = rep
    tiled = tf.tile(expanded, reps)
    reps = np.delete(reps, axis + 1)
    reps[axis] = rep
    result = tf.reshape(tiled, x_shape * tf.constant(reps, dtype="int32"))
    result.set_shape(dims)
    return result


@_export
def repeat(x, n: int):
    """A 2-D `x` (batch, features) repeated `n` times on a new axis 1: (batch, n,
    features).

    Raises:
      ValueError: `x` is not 2-D.
    """
    if x.shape.ndims != 2:
        raise ValueError("repeat expects a 2D tensor, got rank %s" % x.shape.ndims)
    x = tf.expand_dims(x, 1)
    return tf.tile(x, tf.stack([1, n, 1]))


@_export
def arange(start, stop=None, step=1, dtype="int32"):
    """`tf.range(start, stop, step)` cast to `dtype` (a negative `start` alone gives an
    empty range, as Keras)."""
    if stop is None and start < 0:
        start = 0
    result = tf.range(start, limit=stop, delta=step, name="arange")
    if dtype != "int32":
        result = tf.cast(result, dtype)
    return result


@_export
def reverse(x, axes):
    """`x` reversed along `axes` (an int or a list)."""
    if isinstance(axes, int):
        axes = [axes]
    return tf.reverse(x, axes)


@_export
def batch_dot(x, y, axes=None):
    """The dot product of each pair of samples of `x` and `y` (both at least 2-D, the
    same batch size), summed over `axes` (x's axis, y's axis); by default x's last
    axis and y's second-to-last (last when y is 2-D). Keras 2.15's result shapes: a
    2-D operand contributes no axis.

    Raises:
      ValueError: rank below 2, different batch sizes, nested axes, axis 0, or
        summed axes of different sizes.
    """
    x_shape, y_shape = backend.int_shape(x), backend.int_shape(y)
    x_ndim, y_ndim = len(x_shape), len(y_shape)
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError("Cannot do batch_dot on inputs with rank < 2. Received inputs "
                         "with shapes %s and %s." % (x_shape, y_shape))
    if x_shape[0] is not None and y_shape[0] is not None and x_shape[0] != y_shape[0]:
        raise ValueError("Cannot do batch_dot on inputs with different batch sizes. "
                         "Received inputs with shapes %s and %s." % (x_shape, y_shape))
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 1] if y_ndim == 2 else [x_ndim - 1, y_ndim - 2]
    if builtins.any(isinstance(a, (list, tuple)) for a in axes):
        raise ValueError("Multiple target dimensions are not supported. Expected: None, "
                         "int, (int, int), Provided: %s" % (axes,))
    a0, a1 = [a + n if a < 0 else a for a, n in zip(axes, (x_ndim, y_ndim))]
    if 0 in (a0, a1):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not "
                         "batched, add a dummy batch dimension to your inputs using "
                         "K.expand_dims(x, 0)")
    d1, d2 = x_shape[a0], y_shape[a1]
    if d1 is not None and d2 is not None and d1 != d2:
        raise ValueError("Cannot do batch_dot on inputs with shapes %s and %s with axes=%s. "
                         "x.shape[%d] != y.shape[%d] (%d != %d)."
                         % (x_shape, y_shape, [a0, a1], a0, a1, d1, d2))
    orig_x_ndim, orig_y_ndim = x_ndim, y_ndim
    if x_ndim == 2:
        x, a0, x_ndim = tf.expand_dims(x, 1), a0 + 1, 3
    if y_ndim == 2:
        y, y_ndim = tf.expand_dims(y, 2), 3
    # x: (batch, ..., summed); y: (batch, summed, ...)
    if a0 != x_ndim - 1:
        x = tf.transpose(x, [i for i in range(x_ndim) if i != a0] + [a0])
    if a1 != 1:
        y = tf.transpose(y, [0, a1] + [i for i in range(1, y_ndim) if i != a1])
    x_mid = y_trail = None
    if x_ndim > 3:
        dyn = tf.shape(x)
        x_mid = dyn[1:-1]
        x = tf.reshape(x, tf.stack([dyn[0], -1, dyn[-1]]))
    if y_ndim > 3:
        dyn = tf.shape(y)
        y_trail = dyn[2:]
        y = tf.reshape(y, tf.stack([dyn[0], dyn[1], -1]))
    result = tf.matmul(x, y)
    if x_mid is not None or y_trail is not None:
        out_shape = tf.shape(result)
        if x_mid is not None:
            out_shape = tf.concat([out_shape[:1], x_mid, out_shape[-1:]], 0)
        if y_trail is not None:
            out_shape = tf.concat([out_shape[:-1], y_trail], 0)
        result = tf.reshape(result, out_shape)
    if orig_x_ndim == 2:
        result = tf.squeeze(result, 1)
    elif orig_y_ndim == 2:
        result = tf.squeeze(result, -1)
    return result


# --- printing and functional loops ---------------------------------------------------------
@_export
def print_tensor(x, message: str = "", summarize: int = 3):
    """`x`, printing `message` and its value to stdout whenever the result is computed
    (`tf.print`, with `summarize` entries at each end of every axis)."""
    if isinstance(x, tf.Tensor):
        op = tf.print(message, x, output_stream=sys.stdout, summarize=summarize)
        with tf.control_dependencies([op]):
            return tf.identity(x)
    return x


@_export
def map_fn(fn, elems, name: Optional[str] = None, dtype=None):
    """`tf.map_fn(fn, elems)`: `fn` applied to each slice of `elems` along axis 0."""
    return tf.map_fn(fn, elems, name=name, dtype=dtype)


@_export
def foldl(fn, elems, initializer=None, name: Optional[str] = None):
    """`tf.foldl`: `fn(accumulator, element)` over `elems` from first to last."""
    return tf.foldl(fn, elems, initializer=initializer, name=name)


@_export
def foldr(fn, elems, initializer=None, name: Optional[str] = None):
    """`tf.foldr`: `fn(accumulator, element)` over `elems` from last to first."""
    return tf.foldr(fn, elems, initializer=initializer, name=name)
