"""clip_by_norm, clip_by_global_norm, global_norm, clip_by_average_norm against NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

A = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, -2.0]], np.float32)
B = np.array([1.0, 2.0, 2.0], np.float32)


def _np_clip(t, clip, axes=None):
    axes = tuple(axes) if isinstance(axes, list) else axes
    n = np.sqrt(np.sum(t * t, axis=axes, keepdims=True))
    return t * clip / np.maximum(n, clip)


@pytest.mark.parametrize("clip,axes", [(2.0, None), (100.0, None), (2.0, [1]), (1.0, [0]),
                                       (2.0, 1)])
def test_clip_by_norm(sess, clip, axes):
    out = tf.clip_by_norm(A, clip, axes=axes)
    assert out.shape.as_list() == [3, 2] and out.dtype == tf.float32
    np.testing.assert_allclose(sess.run(out), _np_clip(A, clip, axes), rtol=1e-6)


def test_clip_by_norm_zero_float64_and_placeholder(sess):
    z = tf.clip_by_norm(np.zeros((2, 2)), 1.0)
    assert z.dtype == tf.float64
    np.testing.assert_array_equal(sess.run(z), np.zeros((2, 2)))
    p = tf.placeholder(tf.float32, [None, 2])
    out = tf.clip_by_norm(p, 1.0, axes=[1])
    assert out.shape.as_list() == [None, 2]
    np.testing.assert_allclose(sess.run(out, {p: A}), _np_clip(A, 1.0, 1), rtol=1e-6)


def test_clip_by_norm_name(graph):
    assert tf.clip_by_norm(A, 1.0).name == "clip_by_norm:0"
    assert tf.clip_by_norm(A, 1.0, name="c").name == "c:0"


def test_clip_by_norm_indexed_slices(sess):
    E = tf.Variable(np.ones((5, 2), np.float32))
    g = tf.gradients(tf.reduce_sum(tf.gather(E, [0, 0, 3]) * 2.0), E)[0]
    assert isinstance(g, tf.IndexedSlices)
    c = tf.clip_by_norm(g, 1.0)
    assert isinstance(c, tf.IndexedSlices) and c.indices is g.indices
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(c.values), _np_clip(np.full((3, 2), 2.0), 1.0),
                               rtol=1e-6)


def test_global_norm_ignores_none(sess):
    n = tf.global_norm([A, None, B])
    assert n.name == "global_norm/global_norm:0"
    np.testing.assert_allclose(sess.run(n), np.sqrt(np.sum(A * A) + np.sum(B * B)), rtol=1e-6)
    with pytest.raises(TypeError, match="should be a sequence"):
        tf.global_norm(tf.constant(A))


def test_clip_by_global_norm(sess):
    E = tf.Variable(np.ones((5, 2), np.float32))
    sl = tf.gradients(tf.reduce_sum(tf.gather(E, [1, 4])), E)[0]
    clipped, norm = tf.clip_by_global_norm([A, None, B, sl], 2.0)
    assert clipped[1] is None and isinstance(clipped[3], tf.IndexedSlices)
    assert clipped[0].name == "clip_by_global_norm/clip_by_global_norm/_0:0"
    sess.run(tf.global_variables_initializer())
    total = np.sqrt(np.sum(A * A) + np.sum(B * B) + 4.0)
    scale = 2.0 / max(total, 2.0)
    a, b, s, n = sess.run([clipped[0], clipped[2], clipped[3].values, norm])
    np.testing.assert_allclose(n, total, rtol=1e-6)
    np.testing.assert_allclose(a, A * scale, rtol=1e-6)
    np.testing.assert_allclose(b, B * scale, rtol=1e-6)
    np.testing.assert_allclose(s, np.ones((2, 2)) * scale, rtol=1e-6)


def test_clip_by_global_norm_no_clipping_use_norm_and_nan(sess):
    clipped, norm = tf.clip_by_global_norm([B], 10.0)
    np.testing.assert_allclose(sess.run(clipped[0]), B, rtol=1e-6)
    clipped, norm = tf.clip_by_global_norm([B], 1.0, use_norm=tf.constant(6.0))
    np.testing.assert_allclose(sess.run(clipped[0]), B / 6.0, rtol=1e-6)
    clipped, _ = tf.clip_by_global_norm([np.array([np.inf, 1.0], np.float32)], 1.0)
    assert np.isnan(sess.run(clipped[0])).all()


def test_clip_by_average_norm(sess):
    out = tf.clip_by_average_norm(A, 0.5)
    avg = np.sqrt(np.sum(A * A)) / A.size
    np.testing.assert_allclose(sess.run(out), A * 0.5 / max(avg, 0.5), rtol=1e-6)
    np.testing.assert_allclose(sess.run(tf.clip_by_average_norm(A, 10.0)), A, rtol=1e-6)


def test_gradients_through_clip_by_norm(graph):
    x = tf.constant(np.array([[3.0, 4.0], [1.0, -2.0]]))
    y = tf.clip_by_norm(x, 2.0, axes=[1])
    with tf.Session():
        err = compute_gradient_error(x, [2, 2], y, [2, 2])
    assert err < 1e-4


def test_gradients_through_clip_by_global_norm(graph):
    x = tf.constant(np.array([3.0, 4.0]))
    z = tf.constant(np.array([[1.0, 2.0]]))
    clipped, _ = tf.clip_by_global_norm([x, z], 1.0)
    with tf.Session():
        err = compute_gradient_error(x, [2], clipped[0], [2])
    assert err < 1e-4


def test_gradient_zero_norm_is_finite(sess):
    x = tf.constant(np.zeros(3, np.float32))
    g = tf.gradients(tf.reduce_sum(tf.clip_by_norm(x, 1.0)), x)[0]
    assert np.isfinite(sess.run(g)).all()
