"""NumPy values convert as TF's make_tensor_proto converts them: cast with astype to the
dtype asked for (unchecked: a float64 array added to an int32 tensor truncates), while
Python values are checked. An op input keeps a NumPy array's dtype when its type attr
allows it, else takes the attr's default (a float64 shape for Reshape becomes int32)."""
import numpy as np
import pytest

import tensorweave as tf


def test_numpy_arrays_and_scalars_are_cast(sess):
    i = tf.constant([1, 2])
    assert sess.run(i + np.array([1.5, 2.0])).tolist() == [2, 4]  # 1.5 -> 1
    assert sess.run(i * np.float64(2.5)).tolist() == [2, 4]       # 2.5 -> 2
    t = tf.convert_to_tensor(np.array([0.5, 1.0]), dtype=tf.int32)
    assert t.dtype == tf.int32 and sess.run(t).tolist() == [0, 1]
    t = tf.convert_to_tensor(np.array([0.5, 1.0]), preferred_dtype=tf.int32)
    assert t.dtype == tf.int32
    assert sess.run(tf.constant(np.array([0.0, 2.0]), dtype=tf.bool)).tolist() == [False,
                                                                                  True]


def test_python_values_are_still_checked(graph):
    with pytest.raises(TypeError, match="Expected int32"):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.constant([1, 2]) + 1.5


def test_an_input_keeps_an_allowed_numpy_dtype_else_takes_the_default(graph):
    x = tf.constant([1.0, 2.0])
    assert tf.reshape(x, np.array([2, 1], np.int64)).op.get_attr("Tshape") == tf.int64
    assert tf.reshape(x, np.array([2.0, 1.0])).op.get_attr("Tshape") == tf.int32
    assert tf.reshape(x, np.array([2, 1], np.int16)).op.get_attr("Tshape") == tf.int32
    assert tf.reshape(x, np.array([2.0, 1.0])).shape.as_list() == [2, 1]
