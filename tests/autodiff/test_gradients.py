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


def test_hessians_of_an_unknown_shape_loop_over_the_gradient(sess):
    # y = sum(sin(x) * x[:, :1]): the Hessian, by hand, for one row [a, b]
    x = tf.placeholder(tf.float64, [None, 2])
    (h,) = tf.hessians(tf.reduce_sum(tf.sin(x) * x[:, :1]), x)
    assert h.shape.as_list() == [None, 2, None, 2]  # TF's: x's shape twice
    a, b = 0.5, 1.0
    want = np.array([[2 * np.cos(a) - a * np.sin(a), np.cos(b)],
                     [np.cos(b), -a * np.sin(b)]])
    np.testing.assert_allclose(sess.run(h, {x: [[a, b]]}).reshape(2, 2), want)
    # two rows: each row's Hessian block, zero across rows
    got = sess.run(h, {x: [[a, b], [b, a]]})
    assert got.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(got[0, :, 0, :], want)
    np.testing.assert_array_equal(got[0, :, 1, :], np.zeros((2, 2)))


def test_gradients_in_a_while_body_of_values_from_outside(sess):
    # each iteration differentiates one element of a gradient built outside the loop
    x = tf.placeholder(tf.float32, [None])
    g = tf.gradients(tf.reduce_sum(x ** 3) + tf.reduce_prod(x), x)[0]

    def body(j, rows):
        return j + 1, rows.write(j, tf.gradients(g[j], x)[0])

    _, rows = tf.while_loop(lambda j, _: j < tf.size(x), body,
                            [0, tf.TensorArray(tf.float32, tf.size(x))])
    np.testing.assert_allclose(sess.run(rows.stack(), {x: [1.0, 2.0, 3.0]}),
                               [[6, 3, 2], [3, 12, 1], [2, 1, 18]])


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


def test_integer_and_bool_ys_give_none_as_in_tf(sess):
    # TF seeds them with ones of their dtype; no gradient flows from integers into
    # floating-point values (a Cast's gradient is None)
    v = tf.Variable([1.0, 2.0])
    x = tf.placeholder(tf.float32, [2])
    xi = tf.constant([1, 2])
    assert tf.gradients(tf.cast(v, tf.int32), v) == [None]
    assert tf.gradients(tf.cast(x, tf.int32) * 2, x) == [None]
    assert tf.gradients(x > 0.0, x) == [None]
    assert tf.gradients(xi * 2, xi) == [None]
    np.testing.assert_array_equal(sess.run(tf.gradients(xi, xi)[0]), [1, 1])
    (g,) = tf.gradients([tf.cast(x, tf.int32), x * 2.0], x)
    np.testing.assert_array_equal(sess.run(g, {x: [1.0, 2.0]}), [2.0, 2.0])
    (z,) = tf.gradients(tf.cast(x, tf.int32), x, unconnected_gradients="zero")
    assert z.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(z, {x: [1.0, 2.0]}), [0.0, 0.0])


def test_ys_without_a_default_gradient_raise_type_error(graph):
    x = tf.placeholder(tf.float32, [2])
    with pytest.raises(TypeError, match="must be numeric"):
        tf.gradients(tf.as_string(x), x)


def test_gradients_with_respect_to_a_reference_variables_read(sess):
    # TF1: every use reads the one "v/read" tensor, so a gradient w.r.t. v.value(),
    # convert_to_tensor(v) or "v/read:0" is the variable's (TF 2.21: [2, 4] each); a
    # resource variable's own reads are separate tensors, so a new read gets None
    v = tf.Variable([1.0, 2.0], name="v")
    loss = tf.reduce_sum(v * v)
    reads = [v.value(), tf.convert_to_tensor(v),
             tf.get_default_graph().get_tensor_by_name("v/read:0")]
    grads = tf.gradients(loss, reads)
    r = tf.Variable([1.0, 2.0], use_resource=True)
    assert tf.gradients(tf.reduce_sum(r * r), r.value()) == [None]
    sess.run(tf.global_variables_initializer())
    for g in sess.run(grads):
        np.testing.assert_array_equal(g, [2.0, 4.0])


def test_hessians_and_unconnected_zeros_of_a_variable(sess):
    # the shape of the value, not of the handle (TF: [[6, 0], [0, 12]], float32 zeros)
    v = tf.Variable([1.0, 2.0])
    u = tf.get_variable("u", initializer=[[1.0, 2.0], [3.0, 4.0]])
    h_v, h_u = tf.hessians(tf.reduce_sum(v ** 3) + tf.reduce_sum(u * u), [v, u])
    assert h_v.shape.as_list() == [2, 2] and h_u.shape.as_list() == [2, 2, 2, 2]
    (z,) = tf.gradients(tf.constant(1.0), v, unconnected_gradients="zero")
    assert z.dtype == tf.float32 and z.shape.as_list() == [2]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(h_v), [[6.0, 0.0], [0.0, 12.0]])
    np.testing.assert_allclose(sess.run(h_u).reshape(4, 4), 2 * np.eye(4))
    np.testing.assert_array_equal(sess.run(z), [0.0, 0.0])


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


def test_custom_gradient_with_variables(sess):
    """TF1's rules: a grad_fn of a function reading variables takes `variables` and
    returns their gradients too; the variables an argument brings do not count."""
    w = tf.get_variable("w", initializer=np.array([2.0, 3.0], np.float32),
                        use_resource=True)

    @tf.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            assert variables == [w]
            return dy * 10.0, [dy * 100.0]
        return x * w, grad
    x = tf.constant([1.0, 1.0])
    y = scaled(x)
    gx, gw = tf.gradients(tf.reduce_sum(y), [x, w])
    sess.run(tf.global_variables_initializer())
    assert [v.tolist() for v in sess.run([y, gx, gw])] == [[2.0, 3.0], [10.0, 10.0],
                                                          [100.0, 100.0]]

    @tf.custom_gradient
    def no_variables_arg(x):
        return x * w, lambda dy: dy
    with pytest.raises(TypeError, match="must accept keyword argument 'variables', since "
                                        "function uses variables: \\[<tf.Variable 'w:0'"):
        no_variables_arg(x)

    @tf.custom_gradient
    def through_argument(v):  # the variable comes in as an argument: no `variables`
        return v * 2.0, lambda dy: dy * 3.0
    assert sess.run(tf.gradients(through_argument(w), w)[0]).tolist() == [3.0, 3.0]

    @tf.custom_gradient
    def makes_a_ref_variable(x):
        v = tf.get_variable("v", [2])
        return x * v, lambda dy, variables=None: (dy, [None])
    with pytest.raises(TypeError, match="must be `ResourceVariable`s"):
        makes_a_ref_variable(x)

    @tf.custom_gradient
    def too_few(x):
        return x * w, lambda dy, variables=None: (dy, [])
    with pytest.raises(ValueError, match="gradient for each variable"):
        tf.gradients(too_few(x), x)


def test_recompute_grad_matches_the_plain_gradient(sess):
    w = tf.get_variable("w", initializer=np.array([[0.5, -1.0], [2.0, 0.3]]),
                        use_resource=True)

    def block(x):
        return tf.tanh(tf.matmul(x, w)) * x
    x = tf.constant([[1.0, 2.0], [0.5, -0.3]], tf.float64)
    recomputed = tf.recompute_grad(block)
    assert recomputed.__name__ == "block"
    y = recomputed(x)
    matmuls = len([op for op in sess.graph.get_operations() if op.type == "MatMul"])
    g = tf.gradients(tf.reduce_sum(y * y), [x, w])
    # the gradient runs the block again: one more forward MatMul beside its own
    assert len([op for op in sess.graph.get_operations() if op.type == "MatMul"]) == \
        matmuls + 1 + 2
    plain = tf.gradients(tf.reduce_sum(block(x) ** 2), [x, w])
    sess.run(tf.global_variables_initializer())
    for a, b in zip(sess.run(g), sess.run(plain)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    from tensorweave.autodiff.gradient_checker import compute_gradient_error
    with sess.as_default():
        err = compute_gradient_error(x, [2, 2], y, [2, 2],
                                     x_init_value=np.array([[1.0, 2.0], [0.5, -0.3]]))
    assert err < 1e-6


def test_stop_gradients_at_while_loop_outputs(sess):
    """A loop output among stop_gradients passes nothing back through the loop; the
    loop's other outputs still do (TF's walk stops at that Exit)."""
    x = tf.constant(2.0)
    _, a, b = tf.while_loop(lambda i, a, b: i < 2,
                            lambda i, a, b: (i + 1, a * x, b * x * x), (0, x, x))
    # a = x^3, b = x^5
    assert tf.gradients(a, x, stop_gradients=[a]) == [None]
    assert sess.run(tf.gradients(a + b, x, stop_gradients=[a])[0]) == \
        pytest.approx(5 * 2.0 ** 4)
    assert sess.run(tf.gradients(a + b, x, stop_gradients=[b])[0]) == \
        pytest.approx(3 * 2.0 ** 2)
    assert tf.gradients(a * b, x, stop_gradients=[a, b]) == [None]


def test_custom_gradient_with_nested_arguments_and_results(sess):
    """As TF's graph-mode custom_gradient: arguments and results may be nested; grad_fn
    takes the flattened result gradients and returns one gradient per argument tensor."""
    @tf.custom_gradient
    def pair_product(xs):
        def grad(dy):
            return [dy * 10.0, dy * 100.0]
        return xs[0] * xs[1], grad

    @tf.custom_gradient
    def scaled(x):
        def grad(da, db):  # dict results flatten in key order
            return da * 2.0 + db * 5.0
        return {"a": x * 2.0, "b": x * 3.0}, grad
    x, y = tf.constant(3.0), tf.constant(4.0)
    z = pair_product([x, y])
    assert sess.run(z) == 12.0
    assert sess.run(tf.gradients(z, [x, y])) == [10.0, 100.0]
    out = scaled(x)
    assert isinstance(out, dict) and sess.run(out) == {"a": 6.0, "b": 9.0}
    assert sess.run(tf.gradients(out["a"] + out["b"], x)) == [7.0]
    assert sess.run(tf.gradients(out["b"], x)) == [5.0]


def test_gradient_override_map_takes_strings_only(graph):
    with pytest.raises(TypeError, match="op_type_map must be a dictionary mapping strings "
                                        "to strings"):
        with graph.gradient_override_map({"Identity": 3}):
            pass
    with pytest.raises(TypeError, match="op_type_map"):
        with graph.gradient_override_map([("Identity", "Other")]):
            pass


def test_argument_error_messages_are_tf_ones(graph):
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="^Unknown value for unconnected_gradients: 'foo'$"):
        tf.gradients(x * 2, x, unconnected_gradients="foo")
    with pytest.raises(ValueError, match="^Length mismatch. Passed 1 grad_ys for 2 ys$"):
        tf.gradients([x * 2, x], x, grad_ys=[tf.constant([1.0, 1.0])])
