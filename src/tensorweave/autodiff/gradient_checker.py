"""Numeric gradient checking (TF1 `tf.test.compute_gradient` / `compute_gradient_error`).

The theoretical Jacobian is built from the graph's gradient ops, one row of `y` at a
time by seeding `grad_ys` with a one-hot tensor; the numeric Jacobian by central
differences on fed values of `x`. Both have shape [x_size, y_size] as in TF1; a complex
tensor counts as twice as many reals (its real and imaginary parts, interleaved), so
complex gradients are checked against TF's convention for them.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices


def _session_for(tensor: Tensor):
    from tensorweave.runtime.session import Session, get_default_session
    sess = get_default_session()
    if sess is not None and sess.graph is tensor.graph:
        return sess, False
    return Session(graph=tensor.graph), True


def _dense(value, x_shape):
    if hasattr(value, "indices") and hasattr(value, "values"):
        out = np.zeros(x_shape, dtype=value.values.dtype)
        np.add.at(out, np.asarray(value.indices), value.values)
        return out
    return np.asarray(value)


def _jacobians(sess, x: Tensor, x_shape, y: Tensor, y_shape, x_value: np.ndarray,
               delta: float, feed: dict):
    """(theoretical, numeric) Jacobians of y with respect to x; a complex x or y counts
    as twice as many reals (real and imaginary parts interleaved), as in TF1."""
    from tensorweave.autodiff.gradients import gradients
    from tensorweave.ops.array.constant_op import placeholder
    x_real = x.dtype.real_dtype.as_numpy_dtype
    y_real = y.dtype.real_dtype.as_numpy_dtype
    x_size = int(np.prod(x_shape)) * (2 if x.dtype.is_complex else 1)
    y_size = int(np.prod(y_shape)) * (2 if y.dtype.is_complex else 1)
    dy = placeholder(y.dtype, shape=y_shape, name="compute_gradient_dy")
    dx = gradients(y, x, grad_ys=dy)[0]
    theoretical = np.zeros((x_size, y_size), dtype=x_real)
    if dx is not None:
        fetch = dx if isinstance(dx, Tensor) else [dx.values, dx.indices]
        seed = np.zeros(y_shape, dtype=y.dtype.as_numpy_dtype)
        seed_flat = seed.reshape(-1).view(y_real)  # a real view: imaginary parts too
        for col in range(y_size):
            seed_flat[:] = 0
            seed_flat[col] = 1
            out = sess.run(fetch, {**feed, x: x_value, dy: seed})
            if isinstance(dx, IndexedSlices):
                out = _dense(IndexedSlices(out[0], out[1]), x_shape)
            out = np.ascontiguousarray(out, dtype=x.dtype.as_numpy_dtype)
            theoretical[:, col] = out.reshape(-1).view(x_real)
    numeric = np.zeros((x_size, y_size), dtype=x_real)
    x_work = np.array(x_value, dtype=x.dtype.as_numpy_dtype).reshape(x_shape)
    flat = x_work.reshape(-1).view(x_real)
    wide = np.complex128 if y.dtype.is_complex else np.float64
    for row in range(x_size):
        orig = flat[row]
        flat[row] = orig + delta
        y_pos = np.array(sess.run(y, {**feed, x: x_work.copy()}), dtype=wide)
        flat[row] = orig - delta
        y_neg = np.array(sess.run(y, {**feed, x: x_work.copy()}), dtype=wide)
        flat[row] = orig
        diff = ((y_pos - y_neg) / (2 * delta)).reshape(-1)
        numeric[row, :] = diff.view(np.float64) if y.dtype.is_complex else diff
    return theoretical, numeric


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta: float = 1e-3,
                     init_targets=None, extra_feed_dict: Optional[dict] = None):
    """Computes the theoretical and numeric Jacobian of `y` with respect to `x`.

    Args:
      x: a Tensor or list of Tensors (each fed during its own check, the others left
        at their graph values, as TF; placeholders among them are fed theirs).
      x_shape: the shape of x (a list of shapes when x is a list).
      y: a Tensor.
      y_shape: the shape of y.
      x_init_value: NumPy value(s) to evaluate at (default: random in [0, 1) per TF1:
        uniform values scaled so they are not too close to zero).
      delta: the finite-difference step.
      init_targets: ops to run first (e.g. variable initializers).
      extra_feed_dict: more feeds for every run.

    Returns:
      (theoretical, numeric) Jacobians of shape [x_size, y_size], or a list of such pairs
      when `x` is a list.
    """
    feed = dict(extra_feed_dict or {})
    sess, owned = _session_for(y)
    try:
        if init_targets is not None:
            sess.run(init_targets)
        xs = x if isinstance(x, (list, tuple)) else [x]
        shapes = x_shape if isinstance(x, (list, tuple)) else [x_shape]
        inits = (x_init_value if isinstance(x, (list, tuple)) else [x_init_value]) \
            if x_init_value is not None else [None] * len(xs)
        rng = np.random.RandomState(1)
        values = []
        for xi, shape, init in zip(xs, shapes, inits):
            if init is None:
                init = rng.random_sample(shape).astype(xi.dtype.as_numpy_dtype)
            values.append(np.asarray(init, dtype=xi.dtype.as_numpy_dtype).reshape(shape))
        results = []
        for i, (xi, shape) in enumerate(zip(xs, shapes)):
            # as TF, each x is checked with only itself fed (the others keep their graph
            # values); a placeholder among the others, which TF could not run, gets its
            # value
            others = {xs[j]: values[j] for j in range(len(xs))
                      if j != i and xs[j].op.type in ("Placeholder", "PlaceholderV2")}
            results.append(_jacobians(sess, xi, shape, y, y_shape, values[i], delta,
                                      {**feed, **others}))
    finally:
        if owned:
            sess.close()
    return results if isinstance(x, (list, tuple)) else results[0]


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta: float = 1e-3,
                           init_targets=None, extra_feed_dict: Optional[dict] = None) -> float:
    """The maximum absolute difference between the theoretical and numeric Jacobians
    (NaN when either holds a NaN, as TF's).

    Takes the arguments of `compute_gradient`.
    """
    grads = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                             extra_feed_dict)
    pairs = grads if isinstance(grads, list) else [grads]
    err = 0  # as TF's: 0 (an int) when every Jacobian is empty
    for theoretical, numeric in pairs:
        if theoretical.size or numeric.size:
            # np.maximum, not max(): a NaN in either Jacobian is the error, as in TF
            err = np.maximum(err, np.abs(theoretical - numeric).max())
    return err
