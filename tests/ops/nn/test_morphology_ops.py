"""tf.nn.dilation2d / erosion2d (ops/nn/morphology_ops.py) against a window-by-window
NumPy reference, the gradient to the first maximum of each window (TF's CPU kernel; the
values and gradients below equal TensorFlow 2.21's, checked by hand). Numeric gradient
checks: tests/ops/test_gradient_registry.py."""
import numpy as np
import pytest

import tensorweave as tf


def _reference(x, k, strides, rates, padding, dy):
    """(dilation, d/dx, d/dk) one window at a time; ties go to the first tap."""
    n, h, w, c = x.shape
    kh, kw = k.shape[:2]
    (sh, sw), (rh, rw) = strides[1:3], rates[1:3]
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        top = max((oh - 1) * sh + eh - h, 0) // 2
        left = max((ow - 1) * sw + ew - w, 0) // 2
    else:
        oh, ow, top, left = (h - eh) // sh + 1, (w - ew) // sw + 1, 0, 0
    out = np.zeros((n, oh, ow, c))
    dx, dk = np.zeros(x.shape), np.zeros(k.shape)
    for b, y, z, d in np.ndindex(n, oh, ow, c):
        best, at = None, None
        for i, j in np.ndindex(kh, kw):
            r, q = y * sh + i * rh - top, z * sw + j * rw - left
            if 0 <= r < h and 0 <= q < w and (best is None or x[b, r, q, d] + k[i, j, d] > best):
                best, at = x[b, r, q, d] + k[i, j, d], (r, q, i, j)
        out[b, y, z, d] = best
        dx[b, at[0], at[1], d] += dy[b, y, z, d]
        dk[at[2], at[3], d] += dy[b, y, z, d]
    return out, dx, dk


@pytest.mark.parametrize("strides,rates,padding", [
    ([1, 1, 1, 1], [1, 1, 1, 1], "SAME"), ([1, 2, 1, 1], [1, 1, 2, 1], "SAME"),
    ([1, 1, 1, 1], [1, 1, 1, 1], "VALID"), ([1, 2, 1, 1], [1, 1, 2, 1], "VALID")])
def test_dilation_and_its_gradient(sess, strides, rates, padding):
    rs = np.random.RandomState(0)
    x = rs.randint(0, 5, (2, 5, 6, 2)).astype(np.float64)  # many ties
    k = rs.randint(0, 3, (2, 3, 2)).astype(np.float64)
    xt, kt = tf.constant(x), tf.constant(k)
    y = tf.nn.dilation2d(xt, kt, strides, rates, padding)
    dy = rs.rand(*y.shape.as_list())
    want, want_dx, want_dk = _reference(x, k, strides, rates, padding, dy)
    assert y.shape.as_list() == list(want.shape) and y.dtype == tf.float64
    got, dx, dk = sess.run([y] + tf.gradients(y, [xt, kt], grad_ys=dy))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-12)
    np.testing.assert_allclose(dk, want_dk, rtol=1e-12)


def test_erosion_is_the_dual_of_dilation(sess):
    rs = np.random.RandomState(1)
    x, k = rs.rand(1, 4, 5, 3), rs.rand(2, 2, 3)
    e = tf.nn.erosion2d(x, k, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    assert e.name.startswith("erosion2d/Neg")
    want = -_reference(-x, k[::-1, ::-1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME",
                       np.zeros((1, 4, 5, 3)))[0]
    np.testing.assert_allclose(sess.run(e), want, rtol=1e-12)
    # the TF2 argument names
    d = tf.nn.dilation2d(x, filters=k, strides=[1, 1, 1, 1], dilations=[1, 1, 1, 1],
                         padding="VALID")
    assert d.shape.as_list() == [1, 3, 4, 3]


def test_errors(graph):
    x = tf.zeros([1, 4, 4, 2])
    with pytest.raises(ValueError, match="padding must be SAME or VALID"):
        tf.nn.dilation2d(x, tf.zeros([2, 2, 2]), [1, 1, 1, 1], [1, 1, 1, 1], "EXPLICIT")
    with pytest.raises(ValueError, match="batch and depth"):
        tf.nn.dilation2d(x, tf.zeros([2, 2, 2]), [2, 1, 1, 1], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.dilation2d(x, tf.zeros([3, 3, 2]), [1, 1, 1, 1], [1, 2, 2, 1], "VALID")
