"""tf.bitcast and tf.guarantee_const (ops/array/array_view_ops.py)."""
import numpy as np
import pytest

import tensorweave as tf


def test_bitcast_same_smaller_and_larger_sizes(sess):
    x0 = np.array([1.0, -2.5], np.float32)
    same = tf.bitcast(x0, tf.int32)
    smaller = tf.bitcast(x0, tf.uint8)
    assert same.shape.as_list() == [2] and same.dtype == tf.int32
    assert smaller.shape.as_list() == [2, 4] and smaller.dtype == tf.uint8
    larger = tf.bitcast(smaller, tf.float32)
    assert larger.shape.as_list() == [2]
    c = tf.bitcast(tf.constant([[1.0, 2.0]], tf.float64), tf.complex128)
    assert c.shape.as_list() == [1]
    s, m, l, cv = sess.run([same, smaller, larger, c])
    np.testing.assert_array_equal(s, x0.view(np.int32))
    np.testing.assert_array_equal(m, x0.view(np.uint8).reshape(2, 4))
    np.testing.assert_array_equal(l, x0)
    assert cv.dtype == np.complex128 and cv[0] == 1 + 2j


def test_bitcast_static_shapes():
    with tf.Graph().as_default():
        assert tf.bitcast(tf.placeholder(tf.uint8, [None, 4]),
                          tf.float32).shape.as_list() == [None]
        assert tf.bitcast(tf.placeholder(tf.int32, [None, 3]),
                          tf.float32).shape.as_list() == [None, 3]
        assert tf.bitcast(tf.placeholder(tf.int16), tf.int8).shape.ndims is None
        with pytest.raises(ValueError, match="Cannot bitcast from 4 to 1 due to shape. "
                                             "3 does not match 4"):
            tf.bitcast(tf.placeholder(tf.uint8, [2, 3]), tf.float32)
        with pytest.raises(TypeError):
            tf.bitcast(tf.constant([True]), tf.uint8)


def test_bitcast_run_time_shape_error(sess):
    x = tf.placeholder(tf.uint8, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be 4"):
        sess.run(tf.bitcast(x, tf.float32), {x: np.zeros([2, 3], np.uint8)})


def test_bitcast_not_differentiable(graph):
    x = tf.constant([1.0])
    assert tf.gradients(tf.cast(tf.bitcast(x, tf.int32), tf.float32), x) == [None]


def test_guarantee_const(graph, sess):
    x = tf.placeholder(tf.float32, [3])
    g = tf.guarantee_const(x)
    assert g.op.type == "GuaranteeConst" and g.shape.as_list() == [3]
    np.testing.assert_array_equal(sess.run(g, {x: [1, 2, 3]}), [1, 2, 3])
    assert tf.gradients(g, x) == [None]


def test_bitcast_of_a_scalar_is_a_scalar(sess):
    got = sess.run(tf.bitcast(tf.constant(1.0), tf.int32))
    assert np.shape(got) == () and got == 1065353216  # TF: np.int32(1065353216)


def test_bitcast_to_and_from_quantized_types(sess):
    # as TF: quantized integers are bitcast to plain ones (and back) to leave quantization
    q = tf.quantization.quantize(tf.constant([0.5, -0.2]), -1.0, 1.0, tf.quint8)
    plain = tf.bitcast(q.output, tf.uint8)
    assert plain.dtype == tf.uint8
    assert sess.run(plain).tolist() == [191, 102]  # round((x + 1) * 255 / 2), TF's
    back = tf.bitcast(tf.constant([[1, 200], [3, 4]], tf.uint8), tf.qint16)
    assert back.dtype == tf.qint16 and back.shape.as_list() == [2]
    got = sess.run(back)
    assert (got[got.dtype.names[0]] if got.dtype.names else got).tolist() == [
        200 * 256 + 1 - 65536, 4 * 256 + 3]  # little-endian, signed
