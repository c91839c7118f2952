"""tf.gradients, tf.hessians, custom gradients and the gradient registry."""
import importlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_call import GradientCall

# the module, not the function tf.gradients that the package exports under that name
gradients_mod = importlib.import_module("tensorweave.autodiff.gradients")


def test_polynomial_gradient(sess):
    x = tf.constant([1.0, 2.0, 3.0])
    y = x * x * x + 2.0 * x
    (g,) = tf.gradients(y, x)
    np.testing.assert_allclose(sess.run(g), 3 * np.array([1, 4, 9.]) + 2)


def test_multiple_ys_are_summed_and_grad_ys_seed(sess):
    x = tf.constant(3.0)
    y1, y2 = x * x, 4.0 * x
    assert sess.run(tf.gradients([y1, y2], x)[0]) == pytest.approx(10.0)
    g = tf.gradients([y1, y2], x, grad_ys=[tf.constant(2.0), tf.constant(0.5)])[0]
    assert sess.run(g) == pytest.approx(2 * 6.0 + 0.5 * 4.0)


def test_unconnected_none_or_zero(sess):
    x = tf.constant([1.0, 2.0])
    z = tf.constant([5.0, 6.0])
    y = x * 2.0
    assert tf.gradients(y, z) == [None]
    g = tf.gradients(y, z, unconnected_gradients="zero")[0]
    np.testing.assert_array_equal(sess.run(g), [0.0, 0.0])
    g = tf.gradients(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO)[0]
    np.testing.assert_array_equal(sess.run(g), [0.0, 0.0])


def test_stop_gradient_op_and_argument(sess):
    x = tf.constant(2.0)
    a = x * x
    y = a * x
    assert sess.run(tf.gradients(y, x)[0]) == pytest.approx(12.0)
    assert sess.run(tf.gradients(y, x, stop_gradients=[a])[0]) == pytest.approx(4.0)
    y2 = tf.stop_gradient(a) * x
    assert sess.run(tf.gradients(y2, x)[0]) == pytest.approx(4.0)


def test_gradient_through_path_shared_by_two_branches(sess):
    x = tf.constant(1.5)
    h = tf.sin(x)
    y = h * h + tf.exp(h)
    expected = 2 * np.sin(1.5) * np.cos(1.5) + np.exp(np.sin(1.5)) * np.cos(1.5)
    assert sess.run(tf.gradients(y, x)[0]) == pytest.approx(expected, rel=1e-5)


def test_gradient_override_map_and_register_gradient(sess, graph):
    @tf.RegisterGradient("TestTripleGrad")
    def _triple(op, grad):
        return [grad * 3.0]

    x = tf.constant(2.0)
    with graph.gradient_override_map({"Identity": "TestTripleGrad"}):
        y = tf.identity(x)
    assert sess.run(tf.gradients(y, x)[0]) == pytest.approx(3.0)
    with pytest.raises(KeyError):
        tf.RegisterGradient("TestTripleGrad")(_triple)


def test_custom_gradient(sess):
    @tf.custom_gradient
    def clipped_identity(x):
        def grad(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)
        return tf.identity(x), grad

    x = tf.constant([1.0, 2.0])
    y = clipped_identity(x) * tf.constant([3.0, 0.25])
    np.testing.assert_allclose(sess.run(y), [3.0, 0.5])
    np.testing.assert_allclose(sess.run(tf.gradients(y, x)[0]), [0.5, 0.25])


def test_missing_gradient_raises_lookup_error(graph):
    x = tf.constant([1.0, 2.0])
    y = tf.cast(tf.argmax(x), tf.float32) * x  # ArgMax: not differentiable, fine
    tf.gradients(y, x)
    from tensorweave.framework.registry import kernel, register_op
    register_op("TestNoGradOp", inputs=["x: float32"], outputs=["y: float32"],
                shape=lambda op: op.inputs[0].shape)

    @kernel("TestNoGradOp")
    def _k(ctx, v):
        return v

    from tensorweave.framework.op_builder import apply_op
    z = apply_op("TestNoGradOp", [x], name="nograd").outputs[0]
    with pytest.raises(LookupError, match="No gradient defined for operation 'nograd'"):
        tf.gradients(z, x)


def test_indexed_slices_aggregation(sess):
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    y = tf.reduce_sum(tf.gather(params, [0, 2])) + tf.reduce_sum(tf.gather(params, [2]) * 2)
    (g,) = tf.gradients(y, params)
    assert isinstance(g, tf.IndexedSlices)
    value = sess.run(g)
    expected = np.zeros((4, 3), np.float32)
    expected[0] += 1
    expected[2] += 3
    np.testing.assert_allclose(value.to_dense(), expected)
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(g)), expected)


def test_hessian_and_second_order(sess):
    xv = np.array([0.5, -1.0, 2.0])
    x = tf.constant(xv)
    y = tf.reduce_sum(x * x * x) + x[0] * x[1]
    (h,) = tf.hessians(y, x)
    expected = np.diag(6 * xv)
    expected[0, 1] = expected[1, 0] = 1.0
    np.testing.assert_allclose(sess.run(h), expected)
    g = tf.gradients(y, x)[0]
    gg = tf.gradients(g, x)[0]
    np.testing.assert_allclose(sess.run(gg), 6 * xv + np.array([1.0, 1.0, 0.0]))


def test_cost_grows_with_subgraph_not_graph(graph):
    x = tf.constant(1.0)
    y = x * 2.0
    for _ in range(2000):  # unrelated ops downstream of x and elsewhere
        tf.identity(x)
        tf.constant(0.0)
    call = GradientCall("gradients")
    between = gradients_mod._between_ops([y], [x], set(), call)
    assert {op.name for op in between} == {x.op.name, y.op.name}


def test_gate_and_colocate(sess):
    with tf.device("/cpu:0"):
        x = tf.constant([1.0, 2.0])
        w = tf.constant([3.0, 4.0])
        y = tf.reduce_sum(x * w)
    gx, gw = tf.gradients(y, [x, w], gate_gradients=True,
                          colocate_gradients_with_ops=True)
    np.testing.assert_allclose(sess.run([gx, gw]), [[3, 4], [1, 2]])
    assert "CPU:0" in gx.op.device.upper()


def test_integer_ys_rejected(graph):
    x = tf.constant([1, 2])
    with pytest.raises(TypeError):
        tf.gradients(x * 2, x)


def test_gradient_checker_detects_a_wrong_gradient(graph):
    @tf.RegisterGradient("TestWrongSquareGrad")
    def _wrong(op, grad):
        return [grad * op.inputs[0]]  # missing the factor 2

    x = tf.placeholder(tf.float64, [3])
    with graph.gradient_override_map({"Square": "TestWrongSquareGrad"}):
        y = tf.square(x)
    err = tf.test.compute_gradient_error(x, [3], y, [3], x_init_value=np.array([1., 2, 3]))
    assert err > 0.9
    y2 = tf.square(x)
    err2 = tf.test.compute_gradient_error(x, [3], y2, [3], x_init_value=np.array([1., 2, 3]))
    assert err2 < 1e-6


def test_grad_pass_through(sess):
    """TF's example: the assignment runs, and the gradient passes through it unchanged;
    several arguments each get their own output's gradient (straight-through rounding)."""
    x = tf.Variable(1.0, name="x")
    z = tf.Variable(3.0, name="z")
    y = tf.grad_pass_through(x.assign)(z ** 2)
    gz = tf.gradients(y, z)[0]
    sess.run(tf.global_variables_initializer())
    assert sess.run([y, gz]) == [9.0, 6.0] and sess.run(x) == 9.0

    def quantize(a, b):
        return tf.round(a), tf.floor(b)
    wrapped = tf.grad_pass_through(quantize)
    assert wrapped.__name__ == "quantize"
    a = tf.constant([0.4, 1.6])
    b = tf.constant([2.5, -0.5])
    qa, qb = wrapped(a, b)
    ga, gb = tf.gradients(qa * tf.constant([2.0, 3.0]) + 5.0 * qb, [a, b])
    got = sess.run([qa, qb, ga, gb])
    assert [v.tolist() for v in got] == [[0.0, 2.0], [2.0, -1.0], [2.0, 3.0], [5.0, 5.0]]
