"""global_step helpers."""
import numpy as np
import pytest

import tensorweave as tf


def test_create_global_step(graph, sess):
    assert tf.train.get_global_step() is None
    step = tf.train.create_global_step()
    assert step.name == "global_step:0" and step.dtype == tf.int64
    assert step.get_shape().as_list() == []
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    assert step in tf.global_variables() and step not in tf.trainable_variables()
    assert tf.train.get_global_step() is step
    assert tf.train.get_or_create_global_step() is step
    sess.run(tf.global_variables_initializer())
    assert tf.train.global_step(sess, step) == 0
    assert isinstance(tf.train.global_step(sess, step), int)
    sess.run(step.assign_add(5))
    assert tf.train.global_step(sess, step) == 5


def test_create_twice_fails(graph):
    tf.train.create_global_step()
    with pytest.raises(ValueError, match='"global_step" already exists'):
        tf.train.create_global_step()


def test_other_graph_and_name_scope(graph):
    other = tf.Graph()
    with tf.name_scope("inner"):
        step = tf.train.get_or_create_global_step(other)
    assert step.graph is other and step.name == "global_step:0"
    assert tf.train.get_global_step() is None
    assert tf.train.get_global_step(other) is step


def test_get_global_step_by_name_and_multiple(graph):
    t = tf.constant(3, tf.int64, name="global_step")
    assert tf.train.get_global_step() is t
    g2 = tf.Graph()
    with g2.as_default():
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.constant(1, tf.int64))
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.constant(2, tf.int64))
        assert tf.train.get_global_step() is None


def test_assert_global_step(graph):
    tf.train.assert_global_step(tf.Variable(np.int64(0)))
    tf.train.assert_global_step(tf.placeholder(tf.int32))
    with pytest.raises(TypeError, match="must be a Variable or Tensor"):
        tf.train.assert_global_step(3)
    with pytest.raises(TypeError, match="does not have integer type"):
        tf.train.assert_global_step(tf.Variable(0.0))
    with pytest.raises(TypeError, match="is not scalar"):
        tf.train.assert_global_step(tf.Variable([1, 2]))


def test_minimize_increments_global_step(graph, sess):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0)
    train = tf.train.AdagradOptimizer(0.1).minimize(w * w, global_step=step)
    sess.run(tf.global_variables_initializer())
    for i in range(4):
        sess.run(train)
    assert sess.run(step) == 4


def test_a_variable_named_global_step_outside_the_collection_is_the_step():
    """TF1's `tf.Variable(0, name="global_step")` pattern: found by name, usable by the
    hooks, and create_global_step refuses a second one."""
    with tf.Graph().as_default():
        gs = tf.Variable(0, name="global_step", trainable=False)
        inc = tf.assign_add(gs, 1)
        assert tf.train.get_global_step() is gs
        assert tf.train.get_or_create_global_step() is gs
        with pytest.raises(ValueError, match="already exists"):
            tf.train.create_global_step()
        runs = 0
        with tf.train.MonitoredTrainingSession(
                hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
            while not sess.should_stop() and runs < 10:
                sess.run(inc)
                runs += 1
        assert runs == 3
    with tf.Graph().as_default():  # a resource variable's "global_step:0" is its handle
        tf.Variable(0, name="global_step", use_resource=True)
        with pytest.raises(TypeError, match="integer type"):
            tf.train.get_global_step()
