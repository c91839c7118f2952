"""`tf.keras.backend` helpers beyond backend_ops.py: variables made from shapes (`zeros`,
`ones`, `eye`, random variables), variable updates, more reductions and elementwise
math, array rearrangement (`tile`, `repeat_elements`, `reverse`, `batch_dot`, ...),
`eval` and `print_tensor`, and the functional loops (`map_fn`, `foldl`, `foldr`), each
as TF 2.15's Keras defines it in graph mode. `any`, `all` and `round` shadow the builtins
in this module (Keras' names).
"""
from __future__ import annotations

import builtins
import functools
import sys
from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.backend_ops import (_ALONG_AXIS_DOC, _along_axis, _as_is, _binary,
                                           _bool_as_floatx, _export_table, _reduction,
                                           _unary)


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
    return _random_variable(functools.partial(tf.random_uniform_initializer, low, high),
                            shape, dtype, name, seed)


@_export
def random_normal_variable(shape, mean, scale, dtype=None, name: Optional[str] = None,
                           seed: Optional[int] = None):
    """A variable initialized from N(mean, scale**2) (a random seed when None)."""
    return _random_variable(functools.partial(tf.random_normal_initializer, mean, scale),
                            shape, dtype, name, seed)


def _random_variable(initializer, shape, dtype, name, seed):
    """A variable holding `initializer(seed=, dtype=)(shape)`, with a random seed when
    `seed` is None (as Keras) and dtype default floatx()."""
    dtype = dtype or backend.floatx()
    if seed is None:
        seed = np.random.randint(10e8)
    value = initializer(seed=seed, dtype=tf.as_dtype(dtype))(shape)
    return backend.variable(value, dtype=dtype, name=name)


# --- variable updates ----------------------------------------------------------------------
_export_table(globals(), _as_is, {
    "update": lambda x, new_x: tf.assign(x, new_x),
    "update_add": lambda x, increment: tf.assign_add(x, increment),
    "update_sub": lambda x, decrement: tf.assign_sub(x, decrement),
}, "Keras' `{name}`: the variable `x` set to, increased or decreased by the second "
   "argument (`tf.assign`, `tf.assign_add`, `tf.assign_sub`).")


@_export
def moving_average_update(x, value, momentum):
    """`x = x * momentum + value * (1 - momentum)`, zero-debiased as TF1's
    `assign_moving_average` (TF 2.15's Keras in graph mode)."""
    from tensorweave.train.moving_averages import assign_moving_average
    return assign_moving_average(x, value, momentum, zero_debias=True)


# --- reductions and elementwise math -------------------------------------------------------
def _as_bool(x):
    return tf.cast(x, tf.bool)


# `any`, `all` and `round` shadow the builtins in this module
_export_table(globals(), functools.partial(_along_axis, default=0), {
    "cumsum": tf.cumsum, "cumprod": tf.math.cumprod,
}, _ALONG_AXIS_DOC)
_export_table(globals(), functools.partial(_reduction, prepare=_bool_as_floatx), {
    "var": tf.math.reduce_variance, "std": tf.math.reduce_std,
}, "Keras' `{name}`: tf's `{op}(x, axis, keepdims)` (the population statistic), a bool "
   "`x` cast to floatx() first.")
_export_table(globals(), functools.partial(_reduction, prepare=_as_bool), {
    "any": tf.reduce_any, "all": tf.reduce_all,
}, "Keras' `{name}`: tf's `{op}(x, axis, keepdims)` of `x` cast to bool.")
_export_table(globals(), _unary, {
    "round": tf.round, "sign": tf.sign, "sin": tf.sin, "cos": tf.cos,
}, "Keras' `{name}`: tf's `{op}(x)`.")
_export_table(globals(), _binary, {
    "greater_equal": tf.greater_equal, "less_equal": tf.less_equal,
}, "Keras' `{name}`: tf's elementwise `{op}(x, y)`.")


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
