import collections

import numpy as np
import pytest

import tensorweave as tf


def test_fetch_structures(graph, sess):
    a = tf.constant(1.0)
    b = tf.constant([2, 3])
    Pair = collections.namedtuple("Pair", "x y")
    out = sess.run({"a": a, "nested": [b, (a, Pair(a, b))], "name": "Const:0"})
    assert out["a"] == 1.0
    np.testing.assert_array_equal(out["nested"][0], [2, 3])
    assert isinstance(out["nested"][1], tuple)
    assert isinstance(out["nested"][1][1], Pair)
    np.testing.assert_array_equal(out["nested"][1][1].y, [2, 3])
    assert out["name"] == 1.0


def test_operation_fetch_returns_none(graph, sess):
    op = tf.no_op()
    assert sess.run(op) is None
    assert sess.run([op, tf.constant(3)])[0] is None


def test_feed_cuts_graph_and_placeholder_errors(graph, sess):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.identity(x, name="y")
    np.testing.assert_array_equal(sess.run(y, {x: [1, 2]}), [1, 2])
    # feeding an intermediate tensor: x is not needed at all
    np.testing.assert_array_equal(sess.run(y, {y: [5, 6]}), [5, 6])
    with pytest.raises(tf.errors.InvalidArgumentError,  # TF's DataTypeString: "float"
                       match=r"must feed a value for placeholder tensor 'x' with dtype float "
                             r"and shape \[2\]"):
        sess.run(y)
    with pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run(y, {x: [1, 2, 3]})


def test_error_names_user_line(graph, sess):
    x = tf.placeholder(tf.float32, name="needs_feed")  # the line the error must name
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        sess.run(x)
    assert "test_session_core.py" in str(ei.value)
    assert ei.value.op is x.op


def test_run_after_close_raises(graph):
    s = tf.Session(graph=graph)
    c = tf.constant(1)
    assert s.run(c) == 1
    s.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        s.run(c)
    with pytest.raises(RuntimeError, match="closed Session"):
        s.partial_run_setup([c], [])


def test_a_session_of_an_empty_graph_says_so(graph):
    c = tf.constant(1)
    v = tf.Variable(1.0)
    saver = tf.train.Saver([v])
    empty = tf.Session(graph=tf.Graph())
    for run in (lambda: empty.run(c), lambda: empty.run([c]),
                lambda: empty.run(c, {"x:0": 1}), lambda: saver.save(empty, "/tmp/never"),
                lambda: empty.partial_run_setup([c])):
        with pytest.raises(RuntimeError, match="The Session graph is empty"):
            run()


def test_default_session_eval(graph):
    c = tf.constant(7)
    with pytest.raises(ValueError, match="No default session"):
        c.eval()
    with tf.Session(graph=graph) as s:
        assert c.eval() == 7
        assert tf.get_default_session() is s


def test_fetched_constant_is_a_copy(graph, sess):
    c = tf.constant([1.0, 2.0])
    v = sess.run(c)
    v[0] = 100.0
    np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_an_unknown_session_target_is_not_found():
    with pytest.raises(tf.errors.NotFoundError, match="No session factory registered"):
        tf.Session("bogus://x")
