"""The MetaGraphDef's "while_context" collection (ops/control_flow/context_protos.py):
TF's WhileContextDef messages of our loops, which TensorFlow needs to differentiate the
loops of a graph it imports from us (tests/fixtures/tf1/check_ours_in_tf.py checks that
with real TensorFlow, by hand). Here: the fields name the right graph elements."""
import numpy as np

import tensorweave as tf
from tensorweave.ops.control_flow import context_protos


def _defs(mg):
    message = context_protos._messages()
    return [message.FromString(b) for b in mg.collection_def["while_context"].value]


def test_nested_loops_are_written_as_tf_writes_them(graph):
    x = tf.placeholder(tf.float64, [3], name="x")
    w = tf.constant([0.5, -1.0, 2.0], tf.float64, name="w")

    def outer(i, a):
        _, b = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, tf.sin(b) * w + x),
                             [0, a])
        return i + 1, b * 0.5
    _, y = tf.while_loop(lambda i, a: i < 3, outer, [0, x], parallel_iterations=7)
    (d,) = _defs(tf.train.export_meta_graph())   # the outermost loop only
    get = graph.get_tensor_by_name
    assert d.context_name == get(d.loop_enter_names[0]).op._get_attr("frame_name")
    assert d.parallel_iterations == 7 and d.back_prop and not d.swap_memory
    assert get(d.pivot_name).op.type == "LoopCond"
    assert get(d.pivot_for_pred_name).op.type == "Merge"
    assert get(d.pivot_for_body_name).op.type == "Identity"
    assert [get(n).op.type for n in d.loop_exit_names] == ["Exit", "Exit"]
    assert y.name in d.loop_exit_names
    assert [get(n).op.type for n in d.loop_enter_names] == ["Enter", "Enter"]
    (inner,) = [c.while_ctxt for c in d.nested_contexts]
    assert inner.context_name != d.context_name
    assert inner.context_name == get(inner.loop_enter_names[0]).op._get_attr("frame_name")
    # every value names a tensor; the inner loop's results are values of the outer one
    for ctx in (d, inner):
        for name in ctx.values_def.values:
            get(name)
    assert set(inner.loop_exit_names) <= set(d.values_def.values)
    # invariants are keyed by the tensor outside every loop, mapped to this loop's Enter
    for ctx in (d, inner):
        assert set(ctx.values_def.external_values) == {"x:0", "w:0"}
        for outside, entered in ctx.values_def.external_values.items():
            op = get(entered).op
            assert op.type == "Enter" and op.get_attr("is_constant")
            assert op._get_attr("frame_name") == ctx.context_name
            assert outside in ctx.values_def.values


def test_a_cond_in_a_loop_is_nested_in_its_def_and_the_collection_can_be_chosen(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    tf.while_loop(lambda i, a: i < 3,
                  lambda i, a: (i + 1, tf.cond(a > 0, lambda: a * x, lambda: a - x)),
                  [0, tf.constant(1.0)])
    tf.cond(x > 0, lambda: x, lambda: -x)  # outside every loop: not written
    (d,) = _defs(tf.train.export_meta_graph())
    get = graph.get_tensor_by_name
    conds = [c.cond_ctxt for c in d.nested_contexts]
    assert sorted(c.branch for c in conds) == [0, 1]
    for c in conds:
        assert get(c.pred_name).dtype == tf.bool
        pivot = get(c.pivot_name).op
        assert pivot.type == "Identity" and pivot.inputs[0].op.type == "Switch"
        assert pivot.inputs[0].value_index == c.branch
        # what a branch takes in comes through a Switch on its side
        assert c.values_def.external_values
        for outside, inside in c.values_def.external_values.items():
            assert get(inside).op.type == "Switch"
            assert get(inside).value_index == c.branch
            assert outside in c.values_def.values
        # the branch's own ops are its values, not the loop's
        own = [n for n in c.values_def.values if n not in c.values_def.external_values]
        assert own and not set(own) & set(d.values_def.values)
    assert "while_context" not in tf.train.export_meta_graph(
        collection_list=[]).collection_def


def test_our_import_of_the_collection_and_the_loop_runs_and_differentiates(tmp_path):
    path = str(tmp_path / "loop.meta")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x),
                             [0, tf.constant(1.0)])
        tf.identity(y, name="y")
        assert "while_context" in tf.train.export_meta_graph(path).collection_def
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(path)
        x, y = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("y:0")
        dy = tf.gradients(y, x)[0]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run([y, dy], {x: 2.0}), [8.0, 12.0])
