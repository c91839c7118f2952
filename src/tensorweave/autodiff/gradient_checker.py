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


def _real_size(shape, dtype) -> int:
    """How many reals a tensor of `shape` and `dtype` holds (a complex counts twice)."""
    return int(np.prod(shape)) * (2 if dtype.is_complex else 1)


def _jacobians(sess, x: Tensor, x_shape, y: Tensor, y_shape, x_value: np.ndarray,
               delta: float, feed: dict):
    """(theoretical, numeric) Jacobians of y with respect to x; a complex x or y counts
    as twice as many reals (real and imaginary parts interleaved), as in TF1."""
    from tensorweave.autodiff.gradients import gradients
    from tensorweave.ops.array.constant_op import placeholder
    dy = placeholder(y.dtype, shape=y_shape, name="compute_gradient_dy")
    dx = gradients(y, x, grad_ys=dy)[0]
    theoretical = _theoretical_jacobian(sess, x, x_shape, dx, dy, y_shape, x_value, feed)
    numeric = _numeric_jacobian(sess, x, x_shape, y, y_shape, x_value, delta, feed)
    return theoretical, numeric


def _theoretical_jacobian(sess, x: Tensor, x_shape, dx, dy: Tensor, y_shape,
                          x_value: np.ndarray, feed: dict) -> np.ndarray:
    """The backpropagated Jacobian: one column per real component of y, found by feeding
    a one-hot `dy`."""
    x_real = x.dtype.real_dtype.as_numpy_dtype
    theoretical = np.zeros((_real_size(x_shape, x.dtype), _real_size(y_shape, dy.dtype)),
                           dtype=x_real)
    if dx is None:
        # TF1 asserts here; a zero Jacobian instead lets the numeric one show whether
        # y really does not depend on x (ops such as Floor have no gradient by design)
        return theoretical
    fetch = dx if isinstance(dx, Tensor) else [dx.values, dx.indices]
    seed = np.zeros(y_shape, dtype=dy.dtype.as_numpy_dtype)
    seed_flat = seed.reshape(-1).view(dy.dtype.real_dtype.as_numpy_dtype)  # imag parts too
    for col in range(theoretical.shape[1]):
        seed_flat[:] = 0
        seed_flat[col] = 1
        out = sess.run(fetch, {**feed, x: x_value, dy: seed})
        if isinstance(dx, IndexedSlices):
            out = _dense(IndexedSlices(out[0], out[1]), x_shape)
        out = np.ascontiguousarray(out, dtype=x.dtype.as_numpy_dtype)
        theoretical[:, col] = out.reshape(-1).view(x_real)
    return theoretical


def _numeric_real(dtype) -> type:
    """The NumPy real type a numeric Jacobian is computed in for `dtype`."""
    return np.float32 if dtype.base_dtype.name == "bfloat16" else \
        dtype.real_dtype.as_numpy_dtype


def _numeric_jacobian(sess, x: Tensor, x_shape, y: Tensor, y_shape, x_value: np.ndarray,
                      delta: float, feed: dict) -> np.ndarray:
    """Central differences of y, one row per real component of x. The difference is
    taken in y's own dtype, as TF1 does, so a float16 check sees float16 rounding;
    bfloat16, too coarse for that, counts as float32 there and in the result, as in TF1."""
    x_real = x.dtype.real_dtype.as_numpy_dtype
    y_real = _numeric_real(y.dtype)
    y_wide = y.dtype.as_numpy_dtype if y.dtype.is_complex else y_real
    scale = np.asarray(2 * delta, dtype=y_real)[()]
    numeric = np.zeros((_real_size(x_shape, x.dtype), _real_size(y_shape, y.dtype)),
                       dtype=_numeric_real(x.dtype))
    x_work = np.array(x_value, dtype=x.dtype.as_numpy_dtype).reshape(x_shape)
    flat = x_work.reshape(-1).view(x_real)
    for row in range(numeric.shape[0]):
        orig = flat[row]
        flat[row] = orig + delta
        y_pos = np.asarray(sess.run(y, {**feed, x: x_work.copy()}))
        flat[row] = orig - delta
        y_neg = np.asarray(sess.run(y, {**feed, x: x_work.copy()}))
        flat[row] = orig
        diff = np.ascontiguousarray((y_pos.astype(y_wide) - y_neg.astype(y_wide)) / scale,
                                    dtype=y_wide)
        numeric[row, :] = diff.reshape(-1).view(y_real)
    return numeric


# the dtypes TF1's checker accepts for x and y
_CHECKABLE = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _check_dtype(t: Tensor, role: str) -> None:
    """Rejects an x or y that cannot be differentiated: TypeError for y, which TF1 meets
    building a float seed of y's dtype, AssertionError for x, as TF1's assertion."""
    if t.dtype.base_dtype.name in _CHECKABLE:
        return
    message = "compute_gradient does not support type %s for %s (%s)" % (
        t.dtype.base_dtype.name, role, t.name)
    if role == "y":
        raise TypeError(message)
    raise AssertionError(message)


def _initial_value(x: Tensor, x_shape, init, rng: np.random.RandomState) -> np.ndarray:
    """The point to check `x` at: `init` when given (its shape must be `x_shape`, as TF1
    asserts), else uniform in [0, 1) for the real and for the imaginary parts.

    The random point comes from a fixed-seed generator, so a check gives the same
    numbers on every run (TF1 drew from NumPy's global generator)."""
    _check_dtype(x, "x")
    dtype = x.dtype.as_numpy_dtype
    if init is not None:
        assert list(np.shape(init)) == list(x_shape), \
            "x_shape = %s, init_data shape = %s" % (x_shape, list(np.shape(init)))
        return np.asarray(init, dtype=dtype)
    value = rng.random_sample(x_shape).astype(dtype)
    if x.dtype.is_complex:
        value.imag = rng.random_sample(x_shape)
    return value


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
        _check_dtype(y, "y")
        rng = np.random.RandomState(1)
        values = [_initial_value(xi, shape, init, rng)
                  for xi, shape, init in zip(xs, shapes, inits)]
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
