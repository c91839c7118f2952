"""Importing TF1 reference-variable graphs (framework/ref_variables.py): the rewrite into
resource variables, node by node, and what it computes when run. (The TF-written .meta
files of tests/train/test_meta_graph_proto.py check it against real TensorFlow.)"""
import numpy as np
import pytest
from tensorboard.compat.proto import graph_pb2, types_pb2

import tensorweave as tf
from tensorweave.framework import ref_variables


def _node(gd, name, op, inputs=(), **attrs):
    n = gd.node.add(name=name, op=op, input=list(inputs))
    for k, v in attrs.items():
        if isinstance(v, bool):
            n.attr[k].b = v
        elif k in ("T", "dtype", "Tindices"):
            n.attr[k].type = v
        elif k == "shape":
            for d in v:
                n.attr[k].shape.dim.add().size = d
        elif k == "value":
            n.attr[k].tensor.dtype = types_pb2.DT_INT32 if v.dtype == np.int32 else \
                types_pb2.DT_FLOAT
            for d in v.shape:
                n.attr[k].tensor.tensor_shape.dim.add().size = d
            n.attr[k].tensor.tensor_content = v.tobytes()
        else:
            n.attr[k].s = v.encode()
    return n


def _ref_graph():
    F, I = types_pb2.DT_FLOAT, types_pb2.DT_INT32
    gd = graph_pb2.GraphDef()
    _node(gd, "v", "VariableV2", dtype=F, shape=[3], container="", shared_name="")
    _node(gd, "init_value", "Const", dtype=F, value=np.array([1, 2, 3], np.float32))
    _node(gd, "v/Assign", "Assign", ["v", "init_value"], T=F, validate_shape=True,
          use_locking=True)
    _node(gd, "v/read", "Identity", ["v"], T=F)
    _node(gd, "two", "Const", dtype=F, value=np.array(2, np.float32))
    _node(gd, "gate", "NoOp")
    _node(gd, "doubled", "Mul", ["v", "two", "^gate"], T=F)  # reads the reference
    _node(gd, "inc", "AssignAdd", ["v", "init_value"], T=F, use_locking=False)
    _node(gd, "idx", "Const", dtype=I, value=np.array([0, 2], np.int32))
    _node(gd, "upd", "Const", dtype=F, value=np.array([10, 20], np.float32))
    _node(gd, "scatter", "ScatterAdd", ["v", "idx", "upd"], T=F, Tindices=I,
          use_locking=False)
    _node(gd, "is_init", "IsVariableInitialized", ["v"], dtype=F)
    _node(gd, "lr", "Const", dtype=F, value=np.array(0.5, np.float32))
    _node(gd, "sgd", "ApplyGradientDescent", ["v", "lr", "init_value"], T=F,
          use_locking=False)
    return gd


def test_rewrite_node_by_node():
    from tensorweave.framework import graph_def_proto as gp
    gd = gp.graph_def_from_proto(_ref_graph())
    assert ref_variables.uses_ref_variables(gd)
    gd.node = [n for n in gd.node if n.name != "sgd"]  # no ResourceApplyGradientDescent here
    out = ref_variables.to_resource_variables(gd)
    nodes = {n.name: n for n in out.node}
    assert not ref_variables.uses_ref_variables(out)
    v = nodes["v"]
    assert v.op == "VarHandleOp" and v.attr["shared_name"] == "v"
    assert v.attr["dtype"] == tf.float32 and v.attr["shape"].as_list() == [3]
    assert nodes["v/read"].op == "ReadVariableOp" and nodes["v/read"].input == ["v"]
    assert nodes["v/Assign/update"].op == "AssignVariableOp"
    assert nodes["v/Assign/update"].input == ["v", "init_value"]
    assert nodes["v/Assign/update"].attr["validate_shape"] is True
    assert nodes["v/Assign"].op == "ReadVariableOp"
    assert nodes["v/Assign"].input == ["v", "^v/Assign/update"]
    assert nodes["doubled"].input == ["doubled/read_0", "two", "^gate"]
    assert nodes["doubled/read_0"].op == "ReadVariableOp"
    # reads when Mul would: after its control inputs and its other data inputs
    assert nodes["doubled/read_0"].input == ["v", "^gate", "^two"]
    assert nodes["inc/update"].op == "AssignAddVariableOp"
    assert nodes["scatter/update"].op == "ResourceScatterAdd"
    assert nodes["scatter/update"].attr["Tindices"] == tf.int32
    assert nodes["is_init"].op == "VarIsInitializedOp"


def test_rewritten_graph_runs_like_reference_variables():
    gd = _ref_graph()
    del gd.node[-1]
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess:
            assert not sess.run("is_init:0")
            np.testing.assert_array_equal(sess.run("v/Assign:0"), [1, 2, 3])
            assert sess.run("is_init:0")
            np.testing.assert_array_equal(sess.run("doubled:0"), [2, 4, 6])
            np.testing.assert_array_equal(sess.run("inc:0"), [2, 4, 6])
            np.testing.assert_array_equal(sess.run("scatter:0"), [12, 4, 26])
            np.testing.assert_array_equal(sess.run("v/read:0"), [12, 4, 26])


def test_read_for_an_op_is_skipped_with_its_dead_input():
    # Sub(v, Switch:1) with v uninitialized and the predicate false: TF1 reads the
    # reference inside Sub, which the dead Switch output skips, so the run succeeds;
    # Merge gives the false branch, 3.0 (TF 2.21 on this GraphDef gives 3.0)
    F = types_pb2.DT_FLOAT
    gd = graph_pb2.GraphDef()
    _node(gd, "v", "VariableV2", dtype=F).attr["shape"].shape.SetInParent()  # a scalar
    _node(gd, "p", "Placeholder", dtype=types_pb2.DT_BOOL)
    _node(gd, "x", "Const", dtype=F, value=np.array(3, np.float32))
    _node(gd, "s", "Switch", ["x", "p"], T=F)
    _node(gd, "d", "Sub", ["v", "s:1"], T=F)
    _node(gd, "e", "Mul", ["d", "x"], T=F)
    _node(gd, "f", "Sub", ["v", "e"], T=F)
    _node(gd, "m", "Merge", ["s", "f"], T=F).attr["N"].i = 2
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess:
            assert sess.run("m:0", {"p:0": False}) == 3.0
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run("m:0", {"p:0": True})


def test_fetching_a_variable_without_a_plain_read_gives_its_value():
    # "v:0" of a TF1 graph is the ref tensor: its fetch is the value at the end of the
    # run, also where every read of v waits on a control input (no read stands for it)
    F = types_pb2.DT_FLOAT
    gd = graph_pb2.GraphDef()
    _node(gd, "v", "VariableV2", dtype=F, shape=[2])
    _node(gd, "c", "Const", dtype=F, value=np.array([1.5, 2.5], np.float32))
    _node(gd, "gate", "NoOp")
    _node(gd, "assign", "Assign", ["v", "c"], T=F)
    _node(gd, "scaled", "Mul", ["v", "c", "^gate"], T=F)
    _node(gd, "inc", "AssignAdd", ["v", "c"], T=F)
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run("v:0")
            sess.run("assign")
            np.testing.assert_array_equal(sess.run("v:0"), [1.5, 2.5])
            np.testing.assert_array_equal(sess.run("scaled:0"), [2.25, 6.25])
            # the value after the run's update, as TF1's fetch of the ref tensor
            np.testing.assert_array_equal(sess.run(["inc:0", "v:0"])[1], [3.0, 5.0])


def test_apply_gradient_descent_becomes_its_resource_form():
    with tf.Graph().as_default():
        tf.import_graph_def(_ref_graph(), name="")
        assert tf.get_default_graph().get_operation_by_name("sgd/update").type == \
            "ResourceApplyGradientDescent"
        with tf.Session() as sess:
            sess.run("v/Assign:0")
            np.testing.assert_array_equal(sess.run("sgd:0"), [0.5, 1.0, 1.5])


def test_uses_without_a_resource_form_raise():
    gd = _ref_graph()
    gd.node[-1].op = "ApplyAddSign"  # tensorweave has no ResourceApplyAddSign
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'sgd'.*ApplyAddSign needs "
                                             "ResourceApplyAddSign"):
            tf.import_graph_def(gd)
    # a variable's reference through control flow imports (test_ref_variable_control_
    # flow.py); an update's output reference does not
    gd = graph_pb2.GraphDef()
    _node(gd, "v", "VariableV2", dtype=types_pb2.DT_FLOAT, shape=[1])
    _node(gd, "c", "Const", dtype=types_pb2.DT_FLOAT, value=np.ones(1, np.float32))
    _node(gd, "a", "Assign", ["v", "c"], T=types_pb2.DT_FLOAT)
    _node(gd, "p", "Placeholder", dtype=types_pb2.DT_BOOL)
    _node(gd, "sw", "RefSwitch", ["a", "p"], T=types_pb2.DT_FLOAT)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'sw' \\(op RefSwitch\\).*control flow"):
            tf.import_graph_def(gd)
