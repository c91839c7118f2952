"""`v[spec].assign(x)`: a slice of a variable writes into the variable (TF1's
StridedSliceAssign), for reference and resource variables, against NumPy's slice
assignment; other tensors have no `assign`."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("use_resource", [False, True])
def test_slice_assignments_match_numpy(sess, use_resource):
    v = tf.get_variable("v", initializer=np.zeros((4, 5), np.float32),
                        use_resource=use_resource)
    want = np.zeros((4, 5), np.float32)
    sess.run(v.initializer)
    steps = [((slice(1, 3),), np.ones((2, 5), np.float32)),
             ((0, 2), 7.0),
             ((3,), 2.0),  # a scalar broadcast over the row
             ((slice(None), slice(None, None, -2)), np.arange(12, dtype=np.float32)
              .reshape(4, 3))]
    for spec, value in steps:
        got = sess.run(v[spec].assign(value))
        want[spec] = value
        np.testing.assert_array_equal(got, want)  # the variable's new value
    np.testing.assert_array_equal(sess.run(v), want)


def test_names_errors_and_plain_tensors(sess):
    v = tf.Variable(np.zeros((4, 5), np.float32))
    assert v[1:3].assign(tf.ones([2, 5])).name == "StridedSliceAssign:0"
    assert not hasattr(tf.constant(1.0), "assign")
    assert not hasattr(tf.constant([1.0, 2.0])[0], "assign")
    sess.run(v.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match r-value"):
        sess.run(v[1:3].assign(tf.ones([3])))
    np.testing.assert_array_equal(sess.run(v), np.zeros((4, 5)))  # left intact
