"""ops/control_flow/primitive_builder.py: the Switch, Merge, Identity, Enter ... ops that
cond and while_loop make without apply_op's general path are what apply_op makes (the
reference here), and other inputs take apply_op's path, with its conversions and
errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import op_builder, op_callbacks
from tensorweave.ops.control_flow import control_flow_ops as cf


def test_primitives_made_directly_are_what_apply_op_makes():
    """The same attrs in the same order, dtypes, shapes and names; op callbacks see
    them."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        seen = []
        op_callbacks.add_op_callback(seen.append)
        try:
            direct = [cf.switch(x, p)[0].op, cf.merge([x, x])[0].op,
                      cf._identity(x, None).op]
        finally:
            op_callbacks.remove_op_callback(seen.append)
        general = [op_builder.apply_op("Switch", [x, p]),
                   op_builder.apply_op("Merge", [[x, x]]), op_builder.apply_op("Identity", [x])]
        assert seen == direct
        for op, ref in zip(direct, general):
            assert list(op._attrs.items()) == list(ref._attrs.items())
            assert [(t.dtype, t.shape.as_list()) for t in op.outputs] == \
                [(t.dtype, t.shape.as_list()) for t in ref.outputs]
            assert ref.name == op.name + "_1"
        assert direct[1]._attrs == {"T": tf.float32, "N": 2}
        assert [t.shape.as_list() for t in direct[1].outputs] == [[2, 3], []]


def test_a_while_loops_primitives_and_its_value():
    with tf.Graph().as_default() as g:
        n = tf.placeholder(tf.int32, [], name="n")
        i, v = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 2.0),
                             [tf.constant(0), tf.constant([1.0, 3.0])])
        ops = {}
        for op in g.get_operations():
            ops.setdefault(op.type, op)  # the first of each type
        assert ops["Enter"]._attrs == {"frame_name": "while", "is_constant": False,
                                       "parallel_iterations": 10, "T": tf.int32}
        assert ops["Merge"]._attrs == {"T": tf.int32, "N": 2}
        assert {ops[t]._attrs["T"] for t in ("Switch", "Exit", "NextIteration")} == {tf.int32}
        assert ops["LoopCond"]._attrs == {} and v.shape.as_list() == [2]
        with tf.Session() as sess:
            got_i, got_v = sess.run([i, v], {n: 3})
        assert got_i == 3
        np.testing.assert_array_equal(got_v, [8.0, 24.0])


def test_primitives_of_other_inputs_take_apply_ops_path():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        k = tf.placeholder(tf.int32, [], name="k")
        with pytest.raises(TypeError, match="Input 'inputs' of 'Merge' Op has type int32 "
                                            "that does not match expected type of float32"):
            cf.merge([x, k])
        with pytest.raises(TypeError, match="Input 'pred' of 'Switch' Op has type int32"):
            cf.switch(x, k)
        f, t = cf.switch(x, True)  # a Python predicate becomes a constant, as apply_op does
        assert t.op.inputs[1].op.type == "Const" and f.shape.as_list() == [2]
        m, _ = cf.merge([x, [1.0, 2.0]])
        assert m.op.inputs[1].op.type == "Const" and m.op._attrs == {"T": tf.float32, "N": 2}
