"""complex, real, imag, angle (ops/math/complex_ops)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

Z0 = np.array([[1 + 2j, -3 - 1j, 0.5j], [-2 + 0j, 4 - 4j, -1 + 1e-3j]])


@pytest.mark.parametrize("dtype,real_dtype", [(np.complex64, np.float32),
                                              (np.complex128, np.float64)])
def test_parts_of_complex_tensors(sess, dtype, real_dtype):
    z = tf.constant(Z0.astype(dtype))
    re, im, ang = tf.math.real(z), tf.math.imag(z), tf.math.angle(z)
    assert (re.op.type, im.op.type, ang.op.type) == ("Real", "Imag", "Angle")
    assert re.dtype == im.dtype == ang.dtype == tf.as_dtype(real_dtype)
    assert re.shape.as_list() == [2, 3]
    got = sess.run([re, im, ang])
    assert all(g.dtype == real_dtype for g in got)
    z0 = Z0.astype(dtype)
    np.testing.assert_array_equal(got[0], z0.real)
    np.testing.assert_array_equal(got[1], z0.imag)
    np.testing.assert_allclose(got[2], np.angle(z0), rtol=1e-6)
    assert tf.real is tf.math.real and tf.imag is tf.math.imag and tf.angle is tf.math.angle


def test_parts_of_real_tensors(sess):
    x = tf.constant([1.0, -2.0, 0.0])
    assert tf.math.real(x) is x
    im = tf.math.imag(x)
    assert im.op.name == "Imag/zeros_like"
    ang = tf.math.angle(x)
    assert ang.op.name.startswith("Angle/")
    got = sess.run([im, ang])
    np.testing.assert_array_equal(got[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(got[1], [0.0, np.pi, 0.0])
    with pytest.raises(TypeError, match="numeric tensor"):
        tf.math.real(tf.constant("a"))


def test_complex(sess):
    c = tf.complex(tf.constant([1.0, 2.0]), 3.0)
    assert c.op.type == "Complex" and c.dtype == tf.complex64 and c.shape.as_list() == [2]
    np.testing.assert_array_equal(sess.run(c), [1 + 3j, 2 + 3j])
    c = tf.complex(np.zeros((2, 1)), np.ones(3))
    assert c.dtype == tf.complex128 and c.shape.as_list() == [2, 3]
    assert sess.run(c).dtype == np.complex128
    with pytest.raises(TypeError, match="incorrect types: float32 float64"):
        tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))
    with pytest.raises(TypeError):
        tf.complex(tf.constant(1), tf.constant(1))
    assert tf.dtypes.complex is tf.complex


@pytest.mark.parametrize("fn", [tf.math.real, tf.math.imag, tf.math.angle])
def test_gradients_of_parts(graph, fn):
    z0 = Z0 + 0.5j  # off the negative real axis, where the angle jumps
    z = tf.placeholder(tf.complex128, [2, 3])
    assert compute_gradient_error(z, [2, 3], fn(z), [2, 3], x_init_value=z0,
                                  delta=1e-6) < 1e-6


def test_gradient_of_complex_unbroadcasts(graph):
    a = tf.placeholder(tf.float64, [2, 3])
    b = tf.placeholder(tf.float64, [3])
    err = compute_gradient_error([a, b], [[2, 3], [3]], tf.complex(a, b), [2, 3],
                                 x_init_value=[np.random.randn(2, 3), np.random.randn(3)])
    assert err < 1e-6
