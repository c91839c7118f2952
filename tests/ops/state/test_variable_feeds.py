"""Feeding a tf.Variable, and control dependencies on its consumers, as TF1 does.

A TF1 reference variable (the default) is one tensor every reader consumes: feeding it
changes every read, and an op taking it inside `tf.control_dependencies` carries the
dependencies itself. A resource variable's feed replaces only the read `sess.run(v)`
fetches. Expected values checked against TensorFlow 1.x graph mode."""
import numpy as np
import pytest

import tensorweave as tf


def _run_with_feed(use_resource):
    v = tf.Variable(1.0, use_resource=use_resource)
    y = v * 2.0
    r = v.read_value() * 3.0
    after = v.value() + 0.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([y, r, v, after], {v: 5.0})


def test_feeding_a_reference_variable_replaces_its_reads(graph):
    assert _run_with_feed(False) == [10.0, 15.0, 5.0, 5.0]


def test_feeding_a_resource_variable_replaces_only_its_snapshot(graph):
    assert _run_with_feed(True) == [2.0, 3.0, 5.0, 1.0]


def test_feed_does_not_change_the_variable(graph, sess):
    v = tf.Variable([1.0, 2.0])
    total = tf.reduce_sum(v)
    sess.run(v.initializer)
    assert sess.run(total, {v: np.array([10.0, 20.0], np.float32)}) == 30.0
    assert sess.run(total) == 3.0
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_reads_after_an_assign_see_the_assigned_value(graph, sess):
    v = tf.Variable(1.0)
    assigned = v.assign(7.0)  # in TF1 the Assign's own output, not the fed tensor
    sess.run(v.initializer)
    assert sess.run(assigned, {v: 5.0}) == 7.0


def test_reads_made_after_the_feed_is_first_used(graph, sess):
    v = tf.Variable(1.0)
    sess.run(v.initializer)
    assert sess.run(v * 2.0, {v: 4.0}) == 8.0
    later = v + 1.0  # a read built after a cached run with this feed
    assert sess.run(later, {v: 4.0}) == 5.0


def test_bad_feed_shape_is_a_value_error(graph, sess):
    v = tf.Variable(1.0)
    sess.run(v.initializer)
    with pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run(v * 2.0, {v: [1.0, 2.0]})


def test_get_variable_follows_the_scope_use_resource(graph, sess):
    with tf.variable_scope("ref"):
        a = tf.get_variable("a", initializer=1.0)
    with tf.variable_scope("res", use_resource=True):
        b = tf.get_variable("b", initializer=1.0)
    ya, yb = a * 2.0, b * 2.0
    sess.run(tf.global_variables_initializer())
    assert sess.run([ya, yb], {a: 3.0, b: 3.0}) == [6.0, 2.0]


def test_enable_resource_variables_changes_the_default(graph, sess):
    was = tf.resource_variables_enabled()
    tf.enable_resource_variables()
    try:
        assert tf.resource_variables_enabled()
        v = tf.Variable(1.0)
    finally:
        (tf.enable_resource_variables if was else tf.disable_resource_variables)()
    y = v * 2.0
    sess.run(v.initializer)
    assert sess.run(y, {v: 3.0}) == 2.0


def test_consumers_of_a_reference_variable_carry_control_dependencies(graph):
    x = tf.placeholder(tf.float32, [3, 3])
    w = tf.Variable(tf.ones([3, 3]))
    r = tf.Variable(tf.ones([3, 3]), use_resource=True)
    dep = tf.no_op(name="dep")
    with tf.control_dependencies([dep]):
        ident = tf.identity(w)
        prod = tf.matmul(x, w)
        scaled = w * 2.0  # its Const input is made in the block: dominated, as TF1
        res_prod = tf.matmul(x, r)  # a resource variable's read dominates, as TF1
    assert ident.op.control_inputs == [dep]
    assert prod.op.control_inputs == [dep]
    assert scaled.op.control_inputs == []
    assert res_prod.op.control_inputs == []
    assert prod.op.inputs[1].op.control_inputs == [dep]  # the read itself is ordered too


def test_control_dependencies_order_the_read(graph, sess):
    v = tf.Variable(1.0)
    sess.run(v.initializer)
    inc = tf.assign_add(v, 1.0)
    with tf.control_dependencies([inc]):
        out = tf.identity(v)
    assert sess.run(out) == 2.0
    assert sess.run(out) == 3.0


def test_fetching_a_variable_by_its_tensor_name_gives_its_value(graph, sess):
    # TF1: "w:0" names the reference variable itself, and fetching it gives the value
    w = tf.Variable([1.0, 2.0], name="w")
    r = tf.Variable([3.0], name="r", use_resource=True)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run("w:0"), [1.0, 2.0])
    np.testing.assert_allclose(sess.run(graph.get_tensor_by_name("w:0")), [1.0, 2.0])
    np.testing.assert_allclose(sess.run(["w:0", w])[0], [1.0, 2.0])
    sess.run(w.assign([5.0, 6.0]))
    np.testing.assert_allclose(sess.run({"v": "w:0"})["v"], [5.0, 6.0])
    # a resource variable's handle is the handle, as in TF
    assert not isinstance(sess.run("r:0"), np.ndarray) or sess.run("r:0").dtype == object


def test_a_variable_tensor_by_name_reads_as_a_tf1_reference_tensor(graph, sess):
    # TF1 programs look variables up by name ("w:0", the reference tensor) and use them
    # as values or as `ref` of tf.assign
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    t = graph.get_tensor_by_name("w:0")
    product = tf.matmul(t, t)
    reset = tf.assign(t, np.eye(2, dtype=np.float32))
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(product), [[7.0, 10.0], [15.0, 22.0]])
    sess.run(reset)
    np.testing.assert_allclose(sess.run(w), np.eye(2))
    np.testing.assert_allclose(sess.run(product), np.eye(2))
    # a resource variable's handle stays a handle: using it as a value is a TypeError
    r = tf.Variable([1.0], name="r", use_resource=True)
    with pytest.raises(TypeError, match="resource"):
        tf.matmul(graph.get_tensor_by_name("r:0"), [[1.0]])
    assert r.dtype == tf.float32
