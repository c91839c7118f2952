"""ops/select_bits.py: where(cond, x, y) as bitwise passes, bit for bit NumPy's where."""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import select_bits
from tensorweave.ops.select_bits import select

_SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -3e38]


def _operands(dtype, shape, seed):
    rs = np.random.RandomState(seed)
    x, y = ((rs.randn(*shape) * 100).astype(dtype) for _ in range(2))
    if np.dtype(dtype).kind in "fc" or dtype is ml_dtypes.bfloat16:
        with np.errstate(all="ignore"):
            special = np.array(_SPECIAL).astype(dtype)
        x.reshape(-1)[:special.size] = special
        y.reshape(-1)[-special.size:] = special
    return x, y, rs.rand(*shape) > 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int8, np.int32, np.uint64, np.bool_, np.complex64,
                                   np.complex128])
def test_select_gives_wheres_bits(dtype):
    x, y, cond = _operands(dtype, (40, 70), 0)
    zero = np.zeros((), dtype)
    for a, b in ((x, y), (x, zero), (zero, y), (zero, zero)):
        got, want = select(cond, a, b), np.where(cond, a, b)
        assert got.dtype == want.dtype and got.shape == want.shape == cond.shape
        assert got.tobytes() == want.tobytes()
    # what took the bitwise path left its inputs as they were
    x2, y2, cond2 = _operands(dtype, (40, 70), 0)
    assert x.tobytes() == x2.tobytes() and y.tobytes() == y2.tobytes()


def test_select_of_views_and_the_fallbacks():
    rs = np.random.RandomState(1)
    x = rs.randn(100, 80).astype(np.float32)[:, ::2]          # strided
    y = np.asfortranarray(rs.randn(100, 40).astype(np.float32))
    cond = rs.rand(100, 40) > 0.5
    assert select(cond, x, y).tobytes() == np.where(cond, x, y).tobytes()
    # broadcasting, mixed dtypes, objects, a non-bool condition and small inputs: where's
    small = select(cond[:2, :2], x[:2, :2], y[:2, :2])
    assert small.tobytes() == np.where(cond[:2, :2], x[:2, :2], y[:2, :2]).tobytes()
    row = select(cond, x, y[:1])
    assert row.tobytes() == np.where(cond, x, y[:1]).tobytes()
    mixed = select(cond, x, y.astype(np.float64))
    assert mixed.dtype == np.float64
    assert mixed.tobytes() == np.where(cond, x, y.astype(np.float64)).tobytes()
    objs = np.array([object()] * cond.size).reshape(cond.shape)
    assert (select(cond, objs, objs) == objs).all()
    ints = select(cond.astype(np.int8), x, y)
    assert ints.tobytes() == np.where(cond.astype(np.int8), x, y).tobytes()
    assert select_bits.MIN_SIZE <= cond.size


def test_kernels_that_select_give_wheres_bits():
    """LeakyRelu (alpha > 1), LeakyReluGrad, Elu, EluGrad, Selu, Select and SelectV2 on
    inputs large enough for the bitwise path, with special values."""
    x, g, cond = _operands(np.float32, (64, 256), 2)
    alpha, scale = np.float32(0.2), 1.0507009873554804934193349852946
    with tf.Graph().as_default(), tf.Session() as sess:
        xt, gt, ct = tf.constant(x), tf.constant(g), tf.constant(cond)
        lrelu_grad = tf.raw_ops.LeakyReluGrad(gradients=gt, features=xt, alpha=0.2)
        got = sess.run({
            "leaky_relu_grad": lrelu_grad,
            "leaky_relu_3": tf.nn.leaky_relu(xt, alpha=3.0),
            "elu": tf.nn.elu(xt),
            "elu_grad": tf.raw_ops.EluGrad(gradients=gt, outputs=xt),
            "selu": tf.nn.selu(xt),
            "select": tf.where(ct, xt, gt),
            "select_v2": tf.where_v2(ct, xt, gt),
            "select_v2_zero": tf.where_v2(ct, xt, 0.0)})
    with np.errstate(all="ignore"):
        want = {
            "leaky_relu_grad": np.where(x > 0, g, g * alpha),
            "leaky_relu_3": np.where(x > 0, x, x * np.float32(3.0)),
            "elu": np.where(x < 0, np.expm1(np.minimum(x, 0)), x),
            "elu_grad": np.where(x < 0, g * (x + np.float32(1)), g),
            "selu": np.where(x < 0, (scale * 1.6732632423543772848170429916717) *
                             np.expm1(np.minimum(x, 0)), scale * x),
            "select": np.where(cond, x, g),
            "select_v2": np.where(cond, x, g),
            "select_v2_zero": np.where(cond, x, np.float32(0))}
    for key, w in want.items():
        assert got[key].dtype == np.float32, key
        assert got[key].tobytes() == w.tobytes(), key
