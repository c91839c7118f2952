"""Python values converted to constants of a requested dtype (ops/array/constant_op.py):
TF's TypeErrors, with TF 2.21's messages."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("value,bad", [([1, 2], "1 of type 'int'"),
                                       ([b"a", 2.5], "2.5 of type 'float'"),
                                       ([None], "None of type 'NoneType'"),
                                       (np.array([1, 2]), "1 of type 'int'")])
def test_numbers_do_not_become_strings(graph, value, bad):
    with pytest.raises(TypeError, match="Expected string, but got %s." % bad):
        tf.constant(value, tf.string)
    with pytest.raises(TypeError, match="Expected string"):
        tf.convert_to_tensor(value, tf.string)


def test_strings_of_either_kind_do(sess):
    t = tf.constant(["a", b"b", np.str_("c")], tf.string)
    assert sess.run(t).tolist() == [b"a", b"b", b"c"]
    assert sess.run(tf.constant([], tf.string)).shape == (0,)


def test_integer_and_bool_rules_stay(graph):
    with pytest.raises(TypeError, match="Expected int32, but got 1.5 of type 'float'."):
        tf.constant([1.5], tf.int32)
    with pytest.raises(TypeError, match="Expected bool, but got 1 of type 'int'."):
        tf.constant([1], tf.bool)
