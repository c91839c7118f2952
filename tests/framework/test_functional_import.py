"""GraphDefs with a function library (framework/function_library.py), their functional
ops (If, While, Case, PartitionedCall, direct calls) lowered at import
(framework/functional_lowering.py). The graphs of tests/fixtures/tf2_functional were
written by TF 2.21 with control flow v2 (make_functional_fixtures.py there); the values
expected are what it printed, or NumPy formulas."""
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import tensorweave as tf
from tensorweave.framework import graph_def_proto as gp
from tensorweave.framework import registry
from tensorweave.test import compute_gradient_error

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf2_functional")
W = np.array([0.5, -1.0], np.float32)  # the frozen variable of frozen_while_cond.pb


def _graph_def(name):
    """Our GraphDef (decoded nodes and library) of a fixture."""
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return gp.parse_graph_def(f.read())


def _loop_and_cond(x):
    """NumPy: three times v = v * W + x from v = x, then v * 2 if sum(v) > 0 else v - 1."""
    v = np.array(x, np.float32)
    for _ in range(3):
        v = v * W + x
    return v * 2.0 if v.sum() > 0 else v - 1.0


def test_the_library_is_decoded():
    gd = _graph_def("frozen_while_cond.pb")
    ops = {n.op for n in gd.node}
    assert {"StatelessWhile", "StatelessIf"} <= ops
    body = next(f for name, f in gd.library.functions.items() if name.startswith("while_body"))
    # the loop vars: counter, maximum iterations, i, v, then the captured W and x
    assert [a.name for a in body.input_args] == [
        "while_loop_counter", "while_maximum_iterations_0", "placeholder", "placeholder_1",
        "mul_identity_0", "add_1_x_0"]
    assert [a.dtype for a in body.input_args] == [tf.int32] * 3 + [tf.float32] * 3
    assert body.ret["add_1_x"] == "add_1_x_0"  # an output that is an input arg
    assert body.ret["add_1"] == "add_1_0:z:0"
    assert {n.op for n in body.nodes} >= {"AddV2", "Mul", "Const"}


def test_the_library_is_written_back(graph, sess):
    proto = gp.graph_def_to_proto(_graph_def("frozen_while_cond.pb"))
    assert len(proto.library.function) == 4
    body = next(f for f in proto.library.function if f.signature.name.startswith("while_b"))
    assert body.ret["add_1"] == "add_1_0:z:0"
    assert [a.type for a in body.signature.input_arg][:2] == [3, 3]  # DT_INT32
    placeholder = gp.graph_def_to_proto(gp.graph_def_from_proto(_parse(
        "library { %s }" % _SQUARE_FN)))
    assert placeholder.library.function[0].node_def[0].attr["T"].placeholder == "T"
    tf.import_graph_def(proto, name="")  # and it imports as the original
    np.testing.assert_allclose(sess.run("out:0", {"x:0": [1.0, 2.0]}), [3.75, 0.0])


def test_frozen_while_and_cond(graph, sess):
    tf.import_graph_def(_graph_def("frozen_while_cond.pb"), name="")
    for x, tf_value in (([1.0, 2.0], [3.75, 0.0]), ([-1.0, 0.5], [-2.875, -1.0])):
        out = sess.run("out:0", {"x:0": x})
        np.testing.assert_allclose(out, tf_value, rtol=1e-6)
        np.testing.assert_allclose(out, _loop_and_cond(x), rtol=1e-6)
    # the lowered nodes keep their names: "while:3" is the loop's value of v
    v = sess.run("while:3", {"x:0": [1.0, 2.0]})
    np.testing.assert_allclose(v, [1.875, 0.0], rtol=1e-6)
    assert graph.get_operation_by_name("while").type == "IdentityN"
    assert graph.get_operation_by_name("cond").type == "Identity"
    assert {"Enter", "Exit", "Switch", "Merge"} <= {op.type for op in graph.get_operations()}


@pytest.mark.parametrize("executor", ["default", "tagged"])
def test_lowered_loop_runs_on_both_executors_across_devices(monkeypatch, executor):
    # the loop's nodes on a second CPU device, the input on the first, partitions kept
    # apart: Send/Recv and the loop's control state machine carry the lowered loop
    if executor == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    monkeypatch.setenv("TW_FUSE_HOST_PARTITIONS", "0")
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [2])
        with tf.device("/cpu:1"):
            out, = tf.import_graph_def(_graph_def("frozen_while_cond.pb"),
                                       input_map={"x": x}, return_elements=["out:0"])
            grad, = tf.gradients(out, x)
        assert any(op.type == "Enter" and op.device.endswith("CPU:1")
                   for op in g.get_operations())
        config = tf.ConfigProto(device_count={"CPU": 2})
        with tf.Session(graph=g, config=config) as sess:
            for x0 in ([1.0, 2.0], [-1.0, 0.5]):
                value, dx = sess.run([out, grad], {x: x0})
                np.testing.assert_allclose(value, _loop_and_cond(x0), rtol=1e-6)
            np.testing.assert_allclose(dx, [1.875, 0.0], rtol=1e-6)


def test_gradient_through_imported_while_and_if(graph, sess):
    x = tf.placeholder(tf.float32, [2])
    out, = tf.import_graph_def(_graph_def("frozen_while_cond.pb"), input_map={"x": x},
                               return_elements=["out:0"])
    for x0 in ([1.0, 2.0], [-1.0, 0.5]):
        err = compute_gradient_error(x, [2], out, [2], x_init_value=np.array(x0, np.float32))
        assert err < 1e-3
    # d out / d x: 2 * (1 + W + W^2 + W^3) on the true branch, (1 + W + W^2 + W^3) else
    grad, = tf.gradients(out, x)
    np.testing.assert_allclose(sess.run(grad, {x: [1.0, 2.0]}), [3.75, 0.0], rtol=1e-6)
    np.testing.assert_allclose(sess.run(grad, {x: [-1.0, 0.5]}), [1.875, 0.0], rtol=1e-6)


def test_loop_nested_in_a_cond(graph, sess):
    x = tf.placeholder(tf.float32, [])
    out, = tf.import_graph_def(_graph_def("frozen_nested.pb"),
                               input_map={"x": x, "n": tf.constant(4)},
                               return_elements=["out:0"])
    assert sess.run(out, {x: 1.5}) == pytest.approx(6.5)  # TF: 0.5 + 4 * 1.5
    assert sess.run(out, {x: -2.0}) == pytest.approx(2.0)  # TF: -x
    grad, = tf.gradients(out, x)  # through the If and the While inside it
    assert sess.run(grad, {x: 1.5}) == pytest.approx(4.0)
    assert sess.run(grad, {x: -2.0}) == pytest.approx(-1.0)
    assert compute_gradient_error(x, [], out, [], x_init_value=np.float32(1.5)) < 1e-3


def test_meta_graph_with_resource_variables_restores_and_trains(graph, sess):
    saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "linear_cond.meta"))
    saver.restore(sess, os.path.join(FIXTURES, "linear_cond_ckpt"))
    feed = {"x:0": [1.0, 2.0]}
    w = graph.get_tensor_by_name("w/Read/ReadVariableOp:0")
    np.testing.assert_allclose(sess.run(w), [-0.86, -6.679999351501465], rtol=1e-6)
    assert sess.run("loss:0", feed) == pytest.approx(271468.84, rel=1e-6)  # TF's value
    sess.run("train", feed)  # the gradient If of TF's cond_v2, lowered too
    np.testing.assert_allclose(sess.run(w), [8.305902481079102, 804.9210815429688],
                               rtol=1e-5)


@pytest.mark.skipif("TensorListPopBack" not in registry.registered_ops(),
                    reason="needs the TensorList ops (ops/data_flow/list_ops.py)")
def test_training_through_an_imported_while_with_tensor_lists(graph, sess):
    # TF's gradient While keeps the forward values in TensorLists; the TensorArray loop
    # is written as TensorListSetItem in its body
    saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "loop_train.meta"))
    saver.restore(sess, os.path.join(FIXTURES, "loop_train_ckpt"))
    feed = {"x:0": [1.0, 2.0]}
    loss, stacked = sess.run(["loss:0", "stacked:0"], feed)
    assert loss == pytest.approx(5.609454, rel=1e-6)  # TF's values
    np.testing.assert_allclose(stacked, [[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]])
    sess.run("train", feed)
    np.testing.assert_allclose(sess.run("w/Read/ReadVariableOp:0"),
                               [-0.0560837984085083, -0.6558346748352051], rtol=1e-5)


def test_saved_model_with_v2_control_flow():
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], os.path.join(FIXTURES, "saved_model"))
        y = sess.run("y:0", {"x:0": [1.0, 2.0]})
    np.testing.assert_allclose(y, [3.75, 0.0], rtol=1e-6)  # TF's value


def test_partitioned_call_inlined(graph, sess):
    tf.import_graph_def(_graph_def("partitioned_call.pb"))
    types = {op.type for op in graph.get_operations()}
    assert not types & {"PartitionedCall", "StatefulPartitionedCall", "If", "StatelessIf"}
    for a, p, q in (([1.0, 2.0], [7.0, 4.0], 3.0), ([-1.0, -2.0], [3.0, 2.0], -3.0)):
        out = sess.run(["import/p:0", "import/q:0"], {"import/a:0": a,
                                                      "import/b:0": [2.0, 0.5]})
        np.testing.assert_allclose(out[0], p)
        assert out[1] == pytest.approx(q)


# --- hand-written libraries --------------------------------------------------------------
_SQUARE_FN = """
  function {
    signature { name: "square_fn" input_arg { name: "a" type_attr: "T" }
                output_arg { name: "y" type_attr: "T" } attr { name: "T" type: "type" } }
    node_def { name: "m" op: "Mul" input: "a" input: "a"
               attr { key: "T" value { placeholder: "T" } } }
    ret { key: "y" value: "m:z:0" }
  }
"""

_BUMP_FN = """
  function {
    signature { name: "bump_fn" input_arg { name: "h" type: DT_RESOURCE }
                control_output: "add" }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                                    float_val: 1 } } } }
    node_def { name: "add" op: "AssignAddVariableOp" input: "h" input: "one:output:0"
               attr { key: "dtype" value { type: DT_FLOAT } } }
    control_ret { key: "add" value: "add" }
  }
  function {
    signature { name: "read_fn" input_arg { name: "h" type: DT_RESOURCE }
                output_arg { name: "v" type: DT_FLOAT } }
    node_def { name: "r" op: "ReadVariableOp" input: "h"
               attr { key: "dtype" value { type: DT_FLOAT } } }
    ret { key: "v" value: "r:value:0" }
  }
"""

_VAR = """
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape {} } } attr { key: "shared_name" value { s: "v" } } }
node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                            float_val: 0 } } } }
node { name: "init" op: "AssignVariableOp" input: "v" input: "zero"
       attr { key: "dtype" value { type: DT_FLOAT } } }
"""


def _parse(text):
    return text_format.Parse(text, graph_pb2.GraphDef())


def test_direct_call_binds_attr_placeholders_and_keeps_the_device(graph, sess):
    gd = _parse("""
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
      node { name: "sq" op: "square_fn" input: "x" device: "/device:CPU:0"
             attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "out" op: "Neg" input: "sq" attr { key: "T" value { type: DT_FLOAT } } }
      library { %s }""" % _SQUARE_FN)
    tf.import_graph_def(gd, name="")
    assert sess.run("out:0", {"x:0": 3.0}) == -9.0
    mul, = [op for op in graph.get_operations() if op.type == "Mul"]
    assert mul.device == "/device:CPU:0"
    x = graph.get_tensor_by_name("x:0")
    assert compute_gradient_error(x, [], graph.get_tensor_by_name("out:0"), [],
                                  x_init_value=np.float32(1.3)) < 1e-3


def test_unbound_placeholder_names_function_and_attr(graph):
    gd = _parse("""
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
      node { name: "sq" op: "square_fn" input: "x" }
      library { %s }""" % _SQUARE_FN)
    with pytest.raises(ValueError, match=r"Function 'square_fn': attr 'T' refers to the "
                       r"caller's attr '\$T'"):
        tf.import_graph_def(gd, name="")


def test_control_inputs_and_control_ret_hold(graph, sess):
    gd = _parse(_VAR + """
      node { name: "bump" op: "StatefulPartitionedCall" input: "v"
             attr { key: "f" value { func { name: "bump_fn" } } }
             attr { key: "Tin" value { list { type: DT_RESOURCE } } }
             attr { key: "Tout" value { list {} } } }
      node { name: "read" op: "PartitionedCall" input: "v" input: "^bump"
             attr { key: "f" value { func { name: "read_fn" } } }
             attr { key: "Tin" value { list { type: DT_RESOURCE } } }
             attr { key: "Tout" value { list { type: DT_FLOAT } } } }
      library { %s }""" % _BUMP_FN)
    tf.import_graph_def(gd, name="")
    sess.run("init")
    sess.run("bump")  # "^bump" runs the function's control_ret
    # "read" waits for its control input "bump": each run adds one before reading
    assert sess.run("read:0") == 2.0
    assert sess.run("read:0") == 3.0
    assert graph.get_operation_by_name("bump").type == "NoOp"


def test_stateful_while_and_case(graph, sess):
    # a While over a resource handle whose body calls bump_fn, and a Case choosing a call
    gd = _parse(_VAR + """
      node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
      node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {}
                                                  int_val: 0 } } } }
      node { name: "loop" op: "While" input: "i0" input: "n" input: "v" input: "^init"
             attr { key: "T" value { list { type: DT_INT32 type: DT_INT32
                                            type: DT_RESOURCE } } }
             attr { key: "cond" value { func { name: "less_fn" } } }
             attr { key: "body" value { func { name: "step_fn" } } }
             attr { key: "parallel_iterations" value { i: 1 } } }
      node { name: "pick" op: "Case" input: "n" input: "loop:2"
             attr { key: "branches" value { list { func { name: "read_fn" }
                                                   func { name: "read_neg_fn" } } } }
             attr { key: "Tin" value { list { type: DT_RESOURCE } } }
             attr { key: "Tout" value { list { type: DT_FLOAT } } } }
      library { %s
        function {
          signature { name: "less_fn" input_arg { name: "i" type: DT_INT32 }
                      input_arg { name: "n" type: DT_INT32 }
                      input_arg { name: "h" type: DT_RESOURCE }
                      output_arg { name: "z" type: DT_BOOL } }
          node_def { name: "less" op: "Less" input: "i" input: "n"
                     attr { key: "T" value { type: DT_INT32 } } }
          ret { key: "z" value: "less:z:0" }
        }
        function {
          signature { name: "step_fn" input_arg { name: "i" type: DT_INT32 }
                      input_arg { name: "n" type: DT_INT32 }
                      input_arg { name: "h" type: DT_RESOURCE }
                      output_arg { name: "i2" type: DT_INT32 }
                      output_arg { name: "n2" type: DT_INT32 }
                      output_arg { name: "h2" type: DT_RESOURCE } }
          node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                     attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {}
                                                          int_val: 1 } } } }
          node_def { name: "next" op: "AddV2" input: "i" input: "one:output:0"
                     attr { key: "T" value { type: DT_INT32 } } }
          node_def { name: "call" op: "bump_fn" input: "h" }
          ret { key: "i2" value: "next:z:0" } ret { key: "n2" value: "n" }
          ret { key: "h2" value: "h" }
          control_ret { key: "call" value: "call" }
        }
        function {
          signature { name: "read_neg_fn" input_arg { name: "h" type: DT_RESOURCE }
                      output_arg { name: "v" type: DT_FLOAT } }
          node_def { name: "r" op: "ReadVariableOp" input: "h"
                     attr { key: "dtype" value { type: DT_FLOAT } } }
          node_def { name: "neg" op: "Neg" input: "r:value:0"
                     attr { key: "T" value { type: DT_FLOAT } } }
          ret { key: "v" value: "neg:y:0" }
        }
      }""" % _BUMP_FN)
    tf.import_graph_def(gd, name="")
    # the body's control_ret (bump_fn) runs once per iteration; Case index 3 is out of
    # range and runs the last branch, as TF's Case
    assert sess.run("pick:0", {"n:0": 3}) == -3.0
    assert sess.run("pick:0", {"n:0": 0}) == 0.0  # init again, no iteration, branch 0


def test_unknown_function_and_unknown_op_in_a_body(graph):
    gd = _graph_def("frozen_nested.pb")
    node = next(n for n in gd.node if n.op in ("If", "StatelessIf"))
    node.attr["then_branch"] = gp.FuncAttr("nope_fn")
    # TF raises InvalidArgumentError (when it lowers the node, at run time)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Function 'nope_fn' called by "
                       "node 'cond' is not in the GraphDef's function library"):
        tf.import_graph_def(gd, name="")
    gd = _graph_def("frozen_nested.pb")
    body = next(f for name, f in gd.library.functions.items() if name.startswith("while_b"))
    next(n for n in body.nodes if n.op == "AddV2").op = "NoSuchOp"
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
            tf.import_graph_def(gd, name="")


def test_unused_library_imports_and_names_do_not_clash(graph, sess):
    gd = _parse("""
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
      library { function { signature { name: "my_fn" } } }""")
    tf.import_graph_def(gd, name="")
    assert [op.name for op in graph.get_operations()] == ["x"]
    # twice under one scope: the second import's nodes and lowered ops are renamed
    tf.import_graph_def(_graph_def("frozen_while_cond.pb"), name="m")
    tf.import_graph_def(_graph_def("frozen_while_cond.pb"), name="m")
    for out in ("m/out:0", "m_1/out:0"):
        np.testing.assert_allclose(sess.run(out, {out.split("/")[0] + "/x:0": [1.0, 2.0]}),
                                   [3.75, 0.0], rtol=1e-6)
