"""The fused update kernels (training_ops) on 0-d and float16/float64 variables and with
use_nesterov, against TF's update formulas written out in NumPy in the variable's dtype:
the kernels take their hyperparameters as scalars and reuse temporaries, which must not
change what they compute."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import training_ops

B1P, B2P, LR, B1, B2, EPS = 0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-3
TOL = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}


def _numpy_adam(w, m, v, g, nesterov, dt):
    c = lambda x: dt(x)  # noqa: E731 - hyperparameters in the variable's dtype
    alpha = c(LR) * np.sqrt(1 - c(B2P)) / (1 - c(B1P))
    m = m + (g - m) * (1 - c(B1))
    v = v + (g * g - v) * (1 - c(B2))
    step = m * c(B1) + g * (1 - c(B1)) if nesterov else m
    return w - step * alpha / (np.sqrt(v) + c(EPS)), m, v


def _numpy_momentum(w, a, g, nesterov, dt):
    a = a * dt(0.9) + g
    step = g * dt(LR) + a * dt(0.9 * LR) if nesterov else a * dt(LR)
    return w - step, a


def _run_update(values, make_op):
    """Runs `make_op(handles, grad)` once on variables initialised to `values[:-1]` with
    gradient `values[-1]`; returns the variables' new values."""
    with tf.Graph().as_default():
        vs = [tf.Variable(x, use_resource=True) for x in values[:-1]]
        op = make_op([v.handle for v in vs], tf.constant(values[-1]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op)
            return sess.run(vs)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [[], [7], [3, 4]])
@pytest.mark.parametrize("nesterov", [False, True])
def test_adam_kernel_matches_formula(dt, shape, nesterov):
    rs = np.random.RandomState(len(shape))
    w, m, v, g = (np.asarray(rs.rand(*shape), dt) for _ in range(4))
    got = _run_update([w, m, v, g], lambda h, grad: training_ops.resource_apply_adam(
        h[0], h[1], h[2], dt(B1P), dt(B2P), dt(LR), dt(B1), dt(B2), dt(EPS), grad,
        use_nesterov=nesterov))
    for a, b in zip(got, _numpy_adam(w, m, v, g, nesterov, dt)):
        assert a.dtype == dt and a.shape == tuple(shape)
        np.testing.assert_allclose(a, b, rtol=TOL[dt], atol=TOL[dt])


@pytest.mark.parametrize("dt", [np.float16, np.float64])
@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_kernel_matches_formula_on_a_scalar(dt, nesterov):
    w, a, g = dt(0.5), dt(0.25), dt(-1.5)
    got = _run_update([w, a, g], lambda h, grad: training_ops.resource_apply_momentum(
        h[0], h[1], dt(LR), grad, dt(0.9), use_nesterov=nesterov))
    for x, y in zip(got, _numpy_momentum(w, a, g, nesterov, dt)):
        assert x.dtype == dt
        np.testing.assert_allclose(x, y, rtol=TOL[dt], atol=TOL[dt])


@pytest.mark.parametrize("dt", [np.float16, np.float32])
def test_adagrad_and_gradient_descent_kernels_on_a_scalar(dt):
    w, acc, g = dt(0.5), dt(0.1), dt(2.0)
    got = _run_update([w, acc, g], lambda h, grad: training_ops.resource_apply_adagrad(
        h[0], h[1], dt(LR), grad))
    acc_t = acc + g * g
    np.testing.assert_allclose(got, [w - dt(LR) * g / np.sqrt(acc_t), acc_t],
                               rtol=TOL[dt], atol=TOL[dt])
    got = _run_update([w, g], lambda h, grad: training_ops.resource_apply_gradient_descent(
        h[0], dt(LR), grad))
    np.testing.assert_allclose(got[0], w - g * dt(LR), rtol=TOL[dt], atol=TOL[dt])
