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


def test_placeholder_with_default_converts_its_input_in_its_own_scope(sess):
    # TF 2.15's names: the converted input is '<op>/input', so later constants keep
    # their names ('Const', not 'Const_1')
    tf.placeholder(tf.float32, [None, 3], name="x")
    p = tf.placeholder_with_default(False, shape=(), name="foo")
    q = tf.placeholder_with_default([1.0, 2.0], shape=[None])
    with tf.name_scope("ns"):
        r = tf.placeholder_with_default(np.zeros((2, 3), np.float32), [None, 3])
    t = tf.placeholder_with_default(tf.constant(5, name="five"), [])
    tf.constant(1.0)
    assert [(op.name, op.type) for op in tf.get_default_graph().get_operations()] == [
        ("x", "Placeholder"), ("foo/input", "Const"), ("foo", "PlaceholderWithDefault"),
        ("PlaceholderWithDefault/input", "Const"),
        ("PlaceholderWithDefault", "PlaceholderWithDefault"),
        ("ns/PlaceholderWithDefault/input", "Const"),
        ("ns/PlaceholderWithDefault", "PlaceholderWithDefault"), ("five", "Const"),
        ("PlaceholderWithDefault_1", "PlaceholderWithDefault"), ("Const", "Const")]
    assert q.shape.as_list() == [None] and r.shape.as_list() == [None, 3]
    pv, qv, tv = sess.run([p, q, t], {q: [3.0]})
    assert not pv and qv.tolist() == [3.0] and tv == 5
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are "
                                         r"2 and 3. Shapes are \[2\] and \[3\]."):
        tf.placeholder_with_default([1.0, 2.0], shape=[3], name="bad")


@pytest.mark.parametrize("make", [
    lambda: tf.constant(None, tf.float32),
    lambda: tf.convert_to_tensor(None, tf.float32),
    lambda: tf.constant(1.0) - None,  # labels of None in a model_fn's loss
    lambda: tf.add(tf.constant(1.0), None),
    lambda: tf.constant(None, tf.bool),
])
def test_none_with_a_dtype_is_refused_not_nan(graph, make):
    # TF 2.21's class and message; NumPy would make NaN of it
    with pytest.raises(ValueError, match="None values not supported"):
        make()


@pytest.mark.parametrize("value, dtype", [([1.0, None], tf.float32),
                                          ([[1, 2], [3, None]], tf.int32),
                                          ([None], tf.string)])
def test_none_inside_a_list_with_a_dtype_is_a_type_error(graph, value, dtype):
    with pytest.raises(TypeError, match="Expected %s, but got None of type 'NoneType'."
                       % dtype.name):
        tf.constant(value, dtype)
