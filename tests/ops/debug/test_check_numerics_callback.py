"""tf.debugging.enable_check_numerics / disable_check_numerics in graph mode: the ops
built after enable get their float outputs checked at run time (InvalidArgumentError
naming the op), as TF 2.x's callback builds the graph (op names compared with TF's),
and CheckNumericsV2's messages and gradient."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework.op_builder import apply_op
from tensorweave.ops.debug import check_numerics_callback


@pytest.fixture
def checking(graph):
    tf.debugging.enable_check_numerics()
    try:
        yield graph
    finally:
        tf.debugging.disable_check_numerics()


def test_op_built_after_enable_fails_naming_the_op(checking, where):
    x = tf.placeholder(tf.float32, name="x")
    y = tf.math.log(x, name="mylog")  # log-op
    z = y * 2.0
    with tf.Session() as sess:
        assert sess.run(z, {x: 2.0}) == pytest.approx(2 * np.log(2.0))
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(z, {x: -1.0})
        # fetching the op's own output runs its check too
        with pytest.raises(tf.errors.InvalidArgumentError, match="-Inf values"):
            sess.run(y, {x: 0.0})
    err = info.value
    assert err.op.name == "mylog/CheckNumericsV2" and err.op.type == "CheckNumericsV2"
    message = err.message
    assert '!!! Detected Infinity or NaN in output 0 of graph op "Log" (# of outputs: 1) ' \
           '!!!' in message
    assert "  dtype: <dtype: 'float32'>\n  shape: <unknown>\n" in message
    assert '  Input tensor: Tensor("x:0", dtype=float32)' in message
    path, line = where("log-op").rsplit(":", 1)
    assert "(L%s)" % line in message and "tf.math.log(x, name=\"mylog\")" in message
    assert " : Tensor had NaN values" in message


def test_graph_is_built_as_tensorflow_builds_it(checking):
    # the op names and inputs are those TF 2.21 builds for this program
    x = tf.placeholder(tf.float32, name="x")
    y = tf.math.log(x, name="mylog")
    y * 2.0
    tf.constant(3) + 1
    ops = [(op.name, op.type, [t.name for t in op.inputs],
            [c.name for c in op.control_inputs]) for op in checking.get_operations()]
    assert ops == [
        ("x", "Placeholder", [], []),
        ("x/CheckNumericsV2", "CheckNumericsV2", ["x:0"], []),
        ("mylog", "Log", ["x:0"], ["x/CheckNumericsV2"]),
        ("mylog/CheckNumericsV2", "CheckNumericsV2", ["mylog:0"], []),
        ("mul/y", "Const", [], []),
        ("mul/CheckNumericsV2", "CheckNumericsV2", ["mul/y:0"], []),
        ("mul", "Mul", ["mylog/CheckNumericsV2:0", "mul/CheckNumericsV2:0"], []),
        ("mul/CheckNumericsV2_1", "CheckNumericsV2", ["mul:0"], []),
        ("Const", "Const", [], []),
        ("add/y", "Const", [], []),
        ("add", "AddV2", ["Const:0", "add/y:0"], []),
    ]


def test_fed_placeholder_is_checked(checking):
    x = tf.placeholder(tf.float32, [2])
    y = tf.square(x)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, {x: [1.0, np.inf]})
    assert info.value.op.name == "Placeholder/CheckNumericsV2"
    assert 'graph op "Placeholder"' in info.value.message


def test_skipped_ops_and_dtypes(checking):
    x = tf.constant([[1.0, 2.0]])
    r = tf.reshape(x, [2])
    i = tf.identity(r)
    n = tf.constant([1, 2]) * 3
    for t in (r, i, n):
        assert not any(c.type == "CheckNumericsV2" for c in t.consumers())
    assert any(c.type == "CheckNumericsV2" for c in x.consumers())
    # the Reshape and Identity still take the checked tensors
    assert r.op.inputs[0].op.type == "CheckNumericsV2"


def test_graphs_built_before_enable_and_after_disable_are_not_checked(graph):
    x = tf.placeholder(tf.float32)
    before = tf.sqrt(x)
    tf.debugging.enable_check_numerics()
    tf.debugging.enable_check_numerics()  # idempotent
    during = tf.sqrt(x)
    tf.debugging.disable_check_numerics()
    tf.debugging.disable_check_numerics()  # idempotent
    after = tf.sqrt(x)
    uses_during = during + 1.0  # built after disable on a checked output: still checked
    assert len([c for c in during.consumers() if c.type == "CheckNumericsV2"]) == 1
    with tf.Session() as sess:
        assert np.isnan(sess.run(before, {x: -1.0}))
        assert np.isnan(sess.run(after, {x: -1.0}))
        with pytest.raises(tf.errors.InvalidArgumentError, match='graph op "Sqrt"'):
            sess.run(during, {x: -1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match='graph op "Sqrt"'):
            sess.run(uses_during, {x: -1.0})
    assert not check_numerics_callback._STATE.callback


def test_enable_is_per_thread(checking):
    made = []

    def build():
        with checking.as_default():
            made.append(tf.sqrt(tf.constant(-1.0)))
    other = threading.Thread(target=build)
    other.start()
    other.join()
    assert made[0].consumers() == []
    with tf.Session() as sess:
        assert np.isnan(sess.run(made[0]))


def test_training_program_runs_and_catches_a_diverging_step(checking):
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.get_variable("w", initializer=tf.constant([[1.0], [2.0]]), use_resource=True)
    v = tf.Variable([0.5])  # a TF1 variable (which TF's callback cannot handle)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + v))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    pick = tf.cond(loss > 0, lambda: loss * 2.0, lambda: loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, _ = sess.run([loss, train], {x: [[1.0, 1.0]]})
        assert got == pytest.approx(3.5 ** 2)
        # the step moved v to 0.5 - 0.1 * 2 * 3.5
        assert sess.run(pick, {x: [[0.0, 0.0]]}) == pytest.approx(2 * 0.2 ** 2, rel=1e-5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity or NaN"):
            sess.run(train, {x: [[3e38, 3e38]]})


def test_error_inside_a_while_loop_names_the_op(checking):
    x = tf.placeholder(tf.float32, [2])
    _, out = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), [0, x])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {x: [1.0, 2.0]}), [8.0, 16.0])
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(out, {x: [1e38, 2.0]})
    assert info.value.op.name == "while/mul/CheckNumericsV2_1"
    assert 'graph op "Mul"' in info.value.message


@pytest.mark.parametrize("values,found", [
    ([1.0, np.nan], "NaN"), ([np.inf], "+Inf"), ([-np.inf], "-Inf"),
    ([-np.inf, np.inf], "-Inf and +Inf"), ([np.nan, np.inf, -np.inf], "-Inf, +Inf, and NaN"),
    ([np.nan, np.inf], "+Inf and NaN"),
])
def test_check_numerics_v2_messages(sess, values, found):
    # TF 2.21's messages, as tf.raw_ops.CheckNumericsV2 gives them
    x = tf.placeholder(tf.float64)
    y = tf.raw_ops.CheckNumericsV2(tensor=x, message="msg")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: values})
    assert info.value.message.split("\n")[0] == "msg : Tensor had %s values" % found
    np.testing.assert_array_equal(sess.run(y, {x: [1.5, -2.0]}), [1.5, -2.0])


def test_check_numerics_v2_gradient(sess):
    x = tf.placeholder(tf.float64, [2, 3])
    y = apply_op("CheckNumericsV2", [x], {"message": "msg"}).outputs[0]
    tf.gradients(y * y, x)
    grad_check = [op for op in tf.get_default_graph().get_operations()
                  if op.type == "CheckNumericsV2" and op.name.startswith("gradients")]
    assert grad_check and grad_check[0].get_attr("message") == (
        b"Not a number (NaN) or infinity (Inf) values detected in gradient. msg")
    x0 = np.arange(6.0).reshape(2, 3)
    assert compute_gradient_error(x, [2, 3], y, [2, 3], x_init_value=x0) < 1e-8
