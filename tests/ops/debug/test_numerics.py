"""tf.add_check_numerics_ops (ops/debug/numerics.py)."""
import numpy as np
import pytest

import tensorweave as tf


def test_checks_every_float_tensor(graph, sess):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.log(x, name="y")
    tf.cast(x, tf.int32, name="ints")  # not a float: no check
    check = tf.add_check_numerics_ops()
    assert isinstance(check, tf.Operation)
    checks = [op for op in graph.get_operations() if op.type == "CheckNumerics"]
    assert sorted(op.inputs[0].name for op in checks) == ["x:0", "y:0"]
    # chained: each check runs after the previous one
    assert any(op.control_inputs for op in checks)
    sess.run(check, {x: [1.0, 2.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="y:0"):
        sess.run(check, {x: [0.0, 1.0]})
    np.testing.assert_allclose(sess.run(y, {x: [1.0, 1.0]}), [0.0, 0.0])


def test_rejects_control_flow(graph):
    p = tf.placeholder(tf.bool, [])
    tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
        tf.add_check_numerics_ops()


def test_op_errors_carry_the_failing_ops_node_def(sess):
    # TF's OpError.node_def: the NodeDef of the op that failed
    checked = tf.check_numerics(tf.constant([1.0, float("nan")]), "bad", name="check")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(checked)
    assert info.value.node_def.name == "check"
    assert info.value.node_def.op == "CheckNumerics"
