"""Names as TF gives and checks them: node names TF rejects, by-name lookups' error
classes, the constants a reduction over all axes and an assign make (so that
`get_tensor_by_name("Const:0")` finds what TF's would), and a finalized graph's
collections."""
import re

import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("name", ["bad name!", "-x", "_x", "x:0", "/abs"])
def test_invalid_node_names_are_rejected(graph, name):
    with pytest.raises(ValueError, match="is not a valid node name"):
        tf.constant(1.0, name=name)


def test_valid_unusual_names_are_accepted(graph):
    assert tf.constant(1.0, name="a.b>c-d").op.name == "a.b>c-d"


def test_lookup_errors(graph):
    c = tf.constant(1.0, name="c")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("c:0") is c
    with pytest.raises(ValueError, match="looks a like a Tensor name"):
        g.get_tensor_by_name("c:0:0")
    with pytest.raises(ValueError, match="invalid\\) Operation name"):
        g.get_tensor_by_name("")
    with pytest.raises(ValueError, match="refers to an Operation"):
        g.get_tensor_by_name("c")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("missing:0")


def test_constants_are_numbered_as_tfs(sess):
    # reduce over all axes: a top-level "Const" (TF's _ReductionDims); an assign's value:
    # "Assign/value", an assign_add named "inc": "inc/value"
    m = tf.placeholder(tf.float32, [None, 10])
    mean = tf.reduce_mean(m)
    v = tf.Variable(1.0, name="v")
    assign = tf.assign(v, 5.0)
    inc = tf.assign_add(v, 1.0, name="inc")
    c = tf.constant(2.0)
    assert mean.op.inputs[1].name == "Const:0" and c.name == "Const_1:0"
    assert assign.name == "Assign:0" and inc.name == "inc:0"
    consts = [op.name for op in tf.get_default_graph().get_operations()
              if op.type == "Const"]
    assert "Assign/value" in consts and "inc/value" in consts
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run("Const:0"), [0, 1])
    assert v.assign(3.0, read_value=False).name == "Assign_1"


def test_finalized_graph_refuses_new_collection_items(graph):
    graph.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        tf.add_to_collection("things", 1)


def test_gradients_argument_errors(graph):
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match=r"Invalid `aggregation_method` specified 99. "
                                         r"Accepted values are \[0, 1, 2\]."):
        tf.gradients(x * 2, x, aggregation_method=99)
    with tf.Graph().as_default():
        y = tf.constant(1.0)
    with pytest.raises(ValueError, match="must be from the same graph"):
        tf.gradients(y, x)


def test_name_scopes_check_their_names_as_tf(graph):
    with pytest.raises(TypeError, match="must be a string"):
        with tf.name_scope(3):
            pass
    # TF's messages, which quote its patterns
    with pytest.raises(ValueError, match=re.escape(
            "'-x' is not a valid root scope name. A root scope name has to match the "
            r"following pattern: ^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")):
        with tf.name_scope("-x"):  # at the top a scope starts as an op name must
            pass
    with tf.name_scope("a"):
        with tf.name_scope("-x") as inner:  # below the top any character will do
            assert inner == "a/-x/"
        with pytest.raises(ValueError, match=re.escape(
                "'a b' is not a valid scope name. A scope name has to match the following "
                r"pattern: ^[A-Za-z0-9_.\\/>-]*$")):
            with tf.name_scope("a b"):
                pass
    with tf.name_scope(b"bytes") as scope:
        assert scope == "bytes/"


def test_an_op_marked_not_fetchable_is_refused(sess):
    y = tf.constant(1.0) * 2
    sess.graph.prevent_fetching(y.op)
    for fetch in (y, [y], y.op):
        with pytest.raises(ValueError, match="marked as not fetchable"):
            sess.run(fetch)
    assert sess.run(y + 1) == 3.0  # its consumers run
