"""tf.xla.experimental: jit_scope's attrs (gradients included), Graph._attr_scope, and
compile's output structure; values are the same with or without them."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _xla_attrs(op):
    return {k: op.get_attr(k) for k in ("_XlaCompile", "_XlaScope",
                                        "_XlaSeparateCompiledGradients")
            if k in op.node_def.attr}


def test_jit_scope_marks_ops_and_nested_scopes_share_the_outer_name(graph):
    x = tf.constant([1.0, 2.0])
    before = x * 5
    with tf.xla.experimental.jit_scope():
        y = x * 2
        with tf.xla.experimental.jit_scope(compile_ops=False):
            z = y + 1
        with tf.xla.experimental.jit_scope(compile_ops=lambda nd: nd.op == "Mul",
                                           separate_compiled_gradients=True):
            w = y * z + 3
    with tf.xla.experimental.jit_scope():
        second = x - 1
    after = x / 2
    assert _xla_attrs(before.op) == {} and _xla_attrs(after.op) == {}
    assert _xla_attrs(y.op) == {"_XlaCompile": True, "_XlaScope": b"jit_scope_0",
                                "_XlaSeparateCompiledGradients": False}
    assert _xla_attrs(z.op)["_XlaCompile"] is False
    assert _xla_attrs(w.op)["_XlaCompile"] is False  # an Add: the callable says no
    assert _xla_attrs(w.op.inputs[0].op) == {"_XlaCompile": True,
                                             "_XlaScope": b"jit_scope_0",
                                             "_XlaSeparateCompiledGradients": True}
    assert second.op.get_attr("_XlaScope") == b"jit_scope_1"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(w), [9.0, 23.0])


def test_gradients_of_compiled_ops_inherit_their_xla_scope(graph):
    x = tf.constant([1.0, 2.0])
    with tf.xla.experimental.jit_scope():
        y = x * 3.0
    with tf.xla.experimental.jit_scope(separate_compiled_gradients=True):
        s = tf.sin(x)
    g_y, g_s = tf.gradients(y, x)[0], tf.gradients(s, x)[0]
    assert g_y.op.get_attr("_XlaCompile") is True
    assert g_y.op.get_attr("_XlaScope") == b"jit_scope_0"
    # separate gradients: a scope named after the gradient's name scope
    assert g_s.op.get_attr("_XlaScope") == b"jit_scope_1_grad_gradients_1_Sin_grad"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run([g_y, g_s]), [[3.0, 3.0], np.cos([1.0, 2.0])],
                                   rtol=1e-6)


def test_attr_scope_takes_attr_values_callables_and_none(graph):
    from tensorboard.compat.proto import attr_value_pb2
    with graph._attr_scope({"_a": attr_value_pb2.AttrValue(b=True),
                            "_s": attr_value_pb2.AttrValue(s=b"hi")}):
        with graph._attr_scope({"_a": None, "_n": lambda nd: len(nd.name)}):
            inner = tf.constant(1.0, name="abc")
        outer = tf.constant(2.0)
    plain = tf.constant(3.0)
    assert "_a" not in inner.op.node_def.attr and inner.op.get_attr("_n") == 3
    assert inner.op.get_attr("_s") == b"hi"
    assert outer.op.get_attr("_a") is True and "_n" not in outer.op.node_def.attr
    assert "_s" not in plain.op.node_def.attr
    with pytest.raises(TypeError, match="AttrValue"):
        with graph._attr_scope({"_bad": lambda nd: [1]}):
            tf.constant(0.0)


def test_compile_returns_tfs_structures(graph):
    x = tf.constant([1.0, 2.0])
    v = tf.Variable(1.0, use_resource=True)
    single = tf.xla.experimental.compile(lambda a: a * 2 + 1, [x])
    pair = tf.xla.experimental.compile(lambda a: (a * 2, a + 1), [x])
    mapping = tf.xla.experimental.compile(lambda a: {"p": a * 3}, [x])
    nothing = tf.xla.experimental.compile(lambda: None)
    update = tf.xla.experimental.compile(lambda: v.assign_add(1.0).op)
    assert isinstance(single, list) and single[0].name == "output_0:0"
    assert isinstance(pair, list) and [t.name for t in pair] == ["output_0_1:0",
                                                                   "output_1:0"]
    assert list(mapping) == ["p"]
    assert isinstance(nothing, tf.Operation) and nothing.type == "NoOp"
    assert single[0].op.inputs[0].op.get_attr("_XlaCompile") is True
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([single, pair, mapping])
        np.testing.assert_allclose(got[0][0], [3.0, 5.0])
        np.testing.assert_allclose(got[1], [[2.0, 4.0], [2.0, 3.0]])
        np.testing.assert_allclose(got[2]["p"], [3.0, 6.0])
        sess.run(update)
        assert sess.run(v) == 2.0
