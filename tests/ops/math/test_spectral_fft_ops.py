"""FFTs (ops/math/spectral_fft_ops.py) against numpy.fft: values, dtypes kept, static
shapes with fft_length, cropping/padding, the namespaces TF1 has, errors and gradients
(the gradient table in tests/ops/test_gradient_registry.py checks every op; here a few
through compositions)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_RNG = np.random.RandomState(7)


def _cplx(shape, dtype=np.complex128):
    return (_RNG.randn(*shape) + 1j * _RNG.randn(*shape)).astype(dtype)


@pytest.mark.parametrize("dtype, tol", [(np.complex64, 1e-4), (np.complex128, 1e-12)])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_complex_transforms(sess, dtype, tol, rank):
    x0 = _cplx((2, 3, 4, 5), dtype)
    fwd = {1: tf.fft, 2: tf.fft2d, 3: tf.fft3d}[rank]
    inv = {1: tf.ifft, 2: tf.ifft2d, 3: tf.ifft3d}[rank]
    y, z = fwd(x0), inv(x0)
    assert y.dtype == tf.as_dtype(dtype) and y.shape.as_list() == [2, 3, 4, 5]
    axes = tuple(range(-rank, 0))
    yv, zv = sess.run([y, z])
    assert yv.dtype == dtype and zv.dtype == dtype
    scale = np.abs(np.fft.fftn(x0, axes=axes)).max()
    np.testing.assert_allclose(yv, np.fft.fftn(x0, axes=axes), atol=tol * scale)
    np.testing.assert_allclose(zv, np.fft.ifftn(x0, axes=axes), atol=tol * scale)


def test_namespaces_and_names():
    for name in ("fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d"):
        assert getattr(tf, name) is getattr(tf.signal, name) is getattr(tf.spectral, name)
    for name in ("rfft", "irfft", "rfft2d", "irfft2d", "rfft3d", "irfft3d"):
        assert getattr(tf.signal, name) is getattr(tf.spectral, name)
        assert not hasattr(tf, name)


def test_real_transforms_values_and_lengths(sess):
    x0 = _RNG.randn(2, 6).astype(np.float32)
    r = tf.signal.rfft(x0)
    assert r.dtype == tf.complex64 and r.shape.as_list() == [2, 4]
    r8 = tf.signal.rfft(x0, [8])  # zero-padded
    r4 = tf.signal.rfft(x0, [4])  # cropped
    assert r8.shape.as_list() == [2, 5] and r4.shape.as_list() == [2, 3]
    back = tf.signal.irfft(r)
    assert back.dtype == tf.float32 and back.shape.as_list() == [2, 6]
    odd = tf.signal.irfft(r, [5])
    assert odd.shape.as_list() == [2, 5]
    rv, r8v, r4v, bv, ov = sess.run([r, r8, r4, back, odd])
    assert rv.dtype == np.complex64 and bv.dtype == np.float32
    np.testing.assert_allclose(rv, np.fft.rfft(x0), atol=1e-5)
    np.testing.assert_allclose(r8v, np.fft.rfft(x0, 8), atol=1e-5)
    np.testing.assert_allclose(r4v, np.fft.rfft(x0, 4), atol=1e-5)
    np.testing.assert_allclose(bv, x0, atol=1e-5)
    np.testing.assert_allclose(ov, np.fft.irfft(np.fft.rfft(x0), 5), atol=1e-5)


def test_real_transforms_2d_3d_float64(sess):
    x0 = _RNG.randn(2, 4, 6, 5)
    assert tf.signal.rfft(x0).dtype == tf.complex64  # NumPy values: float32 preferred
    r2 = tf.signal.rfft2d(tf.constant(x0))
    r3 = tf.signal.rfft3d(tf.constant(x0), fft_length=[3, 6, 8])
    assert r2.dtype == tf.complex128 and r2.shape.as_list() == [2, 4, 6, 3]
    assert r3.shape.as_list() == [2, 3, 6, 5]
    i2 = tf.signal.irfft2d(r2, [6, 5])
    i3 = tf.spectral.irfft3d(r3, [3, 6, 8])
    assert i2.dtype == tf.float64 and i3.shape.as_list() == [2, 3, 6, 8]
    v2, v3, vi2, vi3 = sess.run([r2, r3, i2, i3])
    np.testing.assert_allclose(v2, np.fft.rfftn(x0, axes=(-2, -1)), atol=1e-10)
    np.testing.assert_allclose(v3, np.fft.rfftn(x0, s=[3, 6, 8], axes=(-3, -2, -1)),
                               atol=1e-10)
    np.testing.assert_allclose(vi2, np.fft.irfftn(v2, s=[6, 5], axes=(-2, -1)), atol=1e-10)
    np.testing.assert_allclose(vi3, np.fft.irfftn(v3, s=[3, 6, 8], axes=(-3, -2, -1)),
                               atol=1e-10)


def test_unknown_shapes(sess):
    x = tf.placeholder(tf.float32, [None, None])
    n = tf.placeholder(tf.int32, [1])
    assert tf.signal.rfft(x, n).shape.as_list() == [None, None]
    assert tf.signal.rfft(x, [8]).shape.as_list() == [None, 5]
    r = tf.signal.rfft(x)  # default fft_length from the dynamic shape
    c = tf.placeholder(tf.complex64, [None, None])
    ir = tf.signal.irfft(c)
    assert ir.shape.as_list() == [None, None]
    assert tf.fft(tf.placeholder(tf.complex64)).shape.ndims is None
    x0 = _RNG.randn(3, 6).astype(np.float32)
    rv, nv = sess.run([r, tf.signal.rfft(x, n)], {x: x0, n: [4]})
    np.testing.assert_allclose(rv, np.fft.rfft(x0), atol=1e-5)
    np.testing.assert_allclose(nv, np.fft.rfft(x0, 4), atol=1e-5)
    c0 = np.fft.rfft(x0).astype(np.complex64)
    np.testing.assert_allclose(sess.run(ir, {c: c0}), x0, atol=1e-5)


def test_empty_input(sess):
    y = tf.fft(tf.zeros([0, 4], tf.complex64))
    r = tf.signal.rfft(tf.zeros([0, 4]))
    yv, rv = sess.run([y, r])
    assert yv.shape == (0, 4) and yv.dtype == np.complex64
    assert rv.shape == (0, 3) and rv.dtype == np.complex64


def test_errors(sess):
    with pytest.raises(TypeError):
        tf.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="RFFT requires tf.float32 or tf.float64 inputs"):
        tf.signal.rfft(tf.constant([1 + 1j]))
    with pytest.raises(ValueError, match="IRFFT requires tf.complex64 or tf.complex128"):
        tf.signal.irfft2d(tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.fft2d(tf.constant([1j, 2j]))
    with pytest.raises(ValueError, match="at least rank 1"):
        tf.signal.rfft(tf.constant(1.0))
    n = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="fft_length must be a vector"):
        sess.run(tf.signal.rfft(tf.ones([4]), n), {n: [4, 4]})


def test_gradients_through_compositions(sess):
    x0 = _RNG.randn(3, 4)
    x = tf.constant(x0)
    # |rfft(x)|^2 summed: Parseval-like, a real loss through RFFT and a complex abs
    y = tf.reduce_sum(tf.abs(tf.signal.rfft(x, [6])) ** 2)
    assert compute_gradient_error(x, [3, 4], y, [], x_init_value=x0) < 1e-6
    z = tf.signal.irfft(tf.signal.rfft(x), [4])  # identity on real signals
    assert compute_gradient_error(x, [3, 4], z, [3, 4], x_init_value=x0) < 1e-6
    c0 = _cplx((2, 3))
    c = tf.constant(c0)
    w = tf.ifft(tf.fft(c) * tf.constant(c0))
    assert compute_gradient_error(c, [2, 3], w, [2, 3], x_init_value=c0) < 1e-6
