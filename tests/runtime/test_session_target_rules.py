"""A session's target, graph and config as TF 2.21 (`tensorflow.compat.v1`) checks
them, its target as TF gives it back, and a fed tensor fetched as TF returns it."""
import numpy as np
import pytest

import tensorweave as tf


def test_a_target_that_is_not_a_string_is_a_type_error(graph):
    with pytest.raises(TypeError, match='^Argument `target` must be a string, but got "int"$'):
        tf.Session(3)


def test_sess_str_is_the_target_as_bytes(graph):
    with tf.Session() as sess:
        assert sess.sess_str == b""
    with tf.Session(b"") as sess:
        assert sess.sess_str == b""


def test_graph_and_config_of_the_wrong_type_are_named_as_tf_names_them(graph):
    with pytest.raises(TypeError, match='^Argument `graph` must be a tf.Graph, but got "int"$'):
        tf.Session(graph=3)
    with pytest.raises(TypeError,
                       match='^Argument `config` must be a tf.ConfigProto, but got "int"$'):
        tf.Session(config=3)


def test_a_fed_and_fetched_tensor_gives_back_the_fed_array(sess):
    # TF 2.21: the feed itself comes back, so a 0-d feed is a 0-d array, not a scalar
    p = tf.placeholder(tf.float32, name="p")
    got = sess.run(p, {p: 4.0})
    assert type(got) is np.ndarray and got.shape == () and got.dtype == np.float32
    assert got == 4.0
    both = sess.run([p, p * 2], {p: True})
    assert type(both[0]) is np.ndarray and both[0].shape == () and both[0] == 1.0
    assert type(both[1]) is np.float32 and both[1] == 2.0  # computed: a NumPy scalar
    fed = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(sess.run({"k": p}, {p: fed})["k"], fed)
