"""tf.gradients through while loops and conds of imported graphs
(ops/control_flow/imported_contexts.py): a GraphDef written by real TensorFlow 1.x, and
our own graphs round-tripped through MetaGraphDef and GraphDef, against hand-derived
and numeric gradients."""
import os

import numpy as np
import pytest

import tensorweave as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1")


def test_gradients_through_a_tf_written_while_loop_and_cond():
    gd = tf.GraphDef()
    with open(os.path.join(FIXTURES, "control_flow.pb"), "rb") as f:
        gd.ParseFromString(f.read())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        x = g.get_tensor_by_name("x:0")
        loop_out, cond_out = g.get_tensor_by_name("loop_out:0"), \
            g.get_tensor_by_name("cond_out:0")
        # loop: a -> 2a + 1 three times (8x + 7); cond: x + 1 or x - 1
        g_loop = tf.gradients(tf.reduce_sum(loop_out * loop_out), x)[0]
        g_cond = tf.gradients(tf.reduce_sum(cond_out * 3.0), x)[0]
        xv = np.array([[1.0, 2.0], [-3.0, 0.5]], np.float32)
        with tf.Session() as sess:
            got_loop, got_cond = sess.run([g_loop, g_cond], {x: xv})
            got_cond_neg = sess.run(g_cond, {x: -xv})
    np.testing.assert_allclose(got_loop, 2 * (8 * xv + 7) * 8, rtol=1e-5)
    np.testing.assert_allclose(got_cond, np.full_like(xv, 3.0))
    np.testing.assert_allclose(got_cond_neg, np.full_like(xv, 3.0))


def _build_model():
    x = tf.placeholder(tf.float64, [3], name="x")
    w = tf.constant([0.5, -1.0, 2.0], tf.float64)

    def outer(i, a):
        # an inner loop per outer iteration, an invariant (w), and x captured
        _, b = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, tf.sin(b) * w + x),
                             [0, a])
        return i + 1, b * 0.5
    _, y = tf.while_loop(lambda i, a: i < 3, outer, [0, x])
    z = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.reduce_sum(y * y),
                lambda: tf.reduce_sum(tf.exp(y)))
    tf.identity(z, name="z")


def _forward(xv):
    w = np.array([0.5, -1.0, 2.0])
    a = xv.copy()
    for _ in range(3):
        b = a
        for _ in range(2):
            b = np.sin(b) * w + xv
        a = b * 0.5
    return np.sum(a * a) if xv.sum() > 0 else np.sum(np.exp(a))


@pytest.mark.parametrize("via", ["meta_graph", "graph_def"])
def test_our_nested_loops_and_cond_differentiate_after_a_round_trip(tmp_path, via):
    with tf.Graph().as_default() as g:
        _build_model()
        path = str(tmp_path / "model.meta")
        tf.train.export_meta_graph(path)
        graph_def = g.as_graph_def()
    with tf.Graph().as_default() as g:
        if via == "meta_graph":
            tf.train.import_meta_graph(path)
        else:
            tf.import_graph_def(graph_def, name="")
        x, z = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("z:0")
        with tf.Session():
            for xv in (np.array([0.3, 0.2, 0.1]), np.array([-0.3, 0.2, -0.4])):
                assert z.eval({x: xv}) == pytest.approx(_forward(xv), rel=1e-12)
                # the analytic Jacobian (tf.gradients through the imported loops and
                # cond) against central differences
                err = tf.test.compute_gradient_error(x, [3], z, [], x_init_value=xv,
                                                     delta=1e-6)
                assert err < 1e-6


def test_imported_loop_keeps_its_structure_for_the_executor(tmp_path):
    # the rebuilt contexts do not change what runs: the imported loop gives the same
    # values and its ops report their loop
    with tf.Graph().as_default() as g:
        _build_model()
        graph_def = g.as_graph_def()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="imp")
        exits = [op for op in g.get_operations() if op.type == "Exit"]
        assert exits and all(op._control_flow_context is not None for op in exits)
        with tf.Session() as sess:
            xv = np.array([0.3, 0.2, 0.1])
            assert sess.run("imp/z:0", {"imp/x:0": xv}) == pytest.approx(_forward(xv))


def test_a_frame_without_the_while_loop_shape_gets_no_contexts():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x),
                             [0, tf.constant(1.0)])
        tf.identity(y, name="y")
        graph_def = g.as_graph_def()
    for node in graph_def.node:  # the body's inputs no longer come through Identity
        if node.op == "Identity" and node.name.startswith("while/Identity"):
            node.op = "StopGradient"
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        assert not g._while_contexts
        assert all(op._control_flow_context is None for op in g.get_operations())
        x, y = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("y:0")
        with tf.Session() as sess:
            assert sess.run(y, {x: 2.0}) == 8.0
        with pytest.raises(LookupError, match="differentiated as part of its whole"):
            tf.gradients(y, x)


def test_gradients_through_a_tf_written_rnn_loop_with_tensor_arrays():
    # TF's .meta holds the forward loop (TensorArrays, a reference variable read in the
    # body, the iteration counter TF's gradients added) and TF's own backward loop:
    # that one runs as TF built it; ours, built here, gives TF's gradient too
    expected = np.load(os.path.join(FIXTURES, "rnn_loop_expected.npz"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "rnn_loop.meta"))
        (kernel,) = tf.trainable_variables()
        loss = g.get_tensor_by_name("loss:0")
        ours = tf.gradients(loss, kernel)[0]
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "rnn_loop_ckpt"))
            # (in separate steps: both gradients use the TensorArray gradient source
            # "gradients", as they do in TF, so one step would share their arrays)
            feed = {"x:0": expected["x"]}
            got_loss, got = sess.run([loss, ours], feed)
            tf_built = sess.run(str(expected["grad_name"]), feed)
    assert got_loss == pytest.approx(float(expected["loss"]), rel=1e-6)
    np.testing.assert_allclose(tf_built, expected["grad"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, expected["grad"], rtol=1e-5, atol=1e-6)


_COND_PASSING_AN_OUTSIDE_VALUE = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                            float_val: 3.0 } } } }
node { name: "h" op: "Mul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/Switch" op: "Switch" input: "h" input: "p"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                            float_val: 2.0 } } } }
node { name: "cond/mul" op: "Mul" input: "cond/Switch:1" input: "cond/two"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/Merge" op: "Merge" input: "cond/Switch" input: "cond/mul"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } } }
"""


def test_gradient_through_a_cond_whose_branch_returns_an_outside_value():
    # TF's cond(p, lambda: h * 2, lambda: h): the false branch is the Switch's output
    # itself, feeding the Merge directly
    from google.protobuf import text_format
    gd = text_format.Parse(_COND_PASSING_AN_OUTSIDE_VALUE, tf.GraphDef())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        grad = tf.gradients(g.get_tensor_by_name("cond/Merge:0"),
                            g.get_tensor_by_name("x:0"))[0]
        with tf.Session() as sess:
            assert sess.run(grad, {"x:0": 1.0, "p:0": True}) == 6.0
            assert sess.run(grad, {"x:0": 1.0, "p:0": False}) == 3.0
