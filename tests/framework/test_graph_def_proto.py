"""TensorFlow's GraphDef protobuf (framework/graph_def_proto.py), tf.train.write_graph and
tf.graph_util: graphs written by real TensorFlow 1.x (tests/fixtures/tf1, made by
make_graph_fixtures.py) imported and run here, ours written and read back field by field.
"""
import logging
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2, types_pb2

import tensorweave as tf
from tensorweave.framework import graph_def_proto as gp
from tensorweave.framework import serialize

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")


def _fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIXTURES, "graph_expected.npz")) as d:
        return dict(d)


# --- graphs written by TensorFlow ----------------------------------------------------------
def test_tf_frozen_mlp_pb_imports_and_runs_like_tf(expected):
    proto = graph_pb2.GraphDef.FromString(_fixture("mlp_frozen.pb"))
    with tf.Graph().as_default() as g:
        out, logits = tf.import_graph_def(proto, return_elements=["output:0",
                                                                  "logits/BiasAdd:0"],
                                          name="")
        assert isinstance(out, tf.Tensor) and out.shape.as_list() == [None, 3]
        assert out.dtype == tf.float32
        assert g.get_operation_by_name("dense/kernel").type == "Const"
        assert g.get_operation_by_name("dense/kernel/read").colocation_groups() == [
            b"loc:@dense/kernel"]
        with tf.Session() as sess:
            got, got_logits = sess.run([out, logits], {"x:0": expected["mlp_x"]})
    np.testing.assert_allclose(got, expected["mlp_output"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_logits, expected["mlp_logits"], rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32


def test_tf_graph_def_parse_from_string_idiom(expected):
    gd = tf.GraphDef()
    gd.ParseFromString(_fixture("mlp_frozen.pb"))  # the usual TF1 freeze-and-load code
    assert [n.op for n in gd.node][:2] == ["Placeholder", "Const"]
    assert tf.make_ndarray(gd.node[1].attr["value"].tensor).dtype == np.float32
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess:
            got = sess.run("output:0", {"x:0": expected["mlp_x"]})
    np.testing.assert_allclose(got, expected["mlp_output"], rtol=1e-5, atol=1e-6)


def test_tf_conv_net_pbtxt_imports_with_input_map(expected):
    proto = text_format.Parse(_fixture("convnet_frozen.pbtxt").decode(), graph_pb2.GraphDef())
    assert {n.op for n in proto.node} >= {"Conv2D", "MaxPool", "BiasAdd", "Reshape", "Softmax"}
    with tf.Graph().as_default():
        image = tf.constant(expected["conv_x"], name="image_in")
        (probs,) = tf.import_graph_def(proto, input_map={"image:0": image},
                                       return_elements=["probs:0"], name="net")
        assert probs.name == "net/probs:0" and probs.shape.as_list() == [2, 3]
        conv = tf.get_default_graph().get_operation_by_name("net/conv/Conv2D")
        assert conv.get_attr("padding") == b"SAME" and conv.get_attr("strides") == [1, 1, 1, 1]
        with tf.Session() as sess:
            got = sess.run(probs)
    np.testing.assert_allclose(got, expected["conv_probs"], rtol=1e-5, atol=1e-6)


def test_import_graph_def_reads_serialized_bytes_of_each_form(expected):
    for data in (_fixture("mlp_frozen.pb"), _fixture("convnet_frozen.pbtxt")):
        with tf.Graph().as_default() as g:
            tf.import_graph_def(data, name="")
            assert g.get_operation_by_name("probs").type == "Softmax"


def test_tf_while_loop_and_cond_graph_imports_and_runs_like_tf(expected):
    with tf.Graph().as_default() as g:
        tf.import_graph_def(_fixture("control_flow.pb"), name="cf")
        merges = [op for op in g.get_operations() if op.type == "Merge"]
        loop_merges = [m for m in merges if m.inputs[1].op.type == "NextIteration"]
        assert len(loop_merges) == 2  # the back edges are set after the loop body
        # as in TF, what flows around a loop imported has an unknown shape
        assert all(m.outputs[0].shape.ndims is None for m in loop_merges)
        assert g.get_tensor_by_name("cf/loop_out:0").shape.ndims is None
        assert g.get_tensor_by_name("cf/cond_out:0").shape.as_list() == [None, 2]
        with tf.Session() as sess:
            loop, cond = sess.run(["cf/loop_out:0", "cf/cond_out:0"],
                                  {"cf/x:0": expected["cf_x"]})
            cond_neg = sess.run("cf/cond_out:0", {"cf/x:0": -expected["cf_x"]})
    np.testing.assert_array_equal(loop, expected["cf_loop"])
    np.testing.assert_array_equal(cond, expected["cf_cond"])
    np.testing.assert_array_equal(cond_neg, expected["cf_cond_neg"])


def test_our_while_loop_round_trips(graph):
    x = tf.placeholder(tf.float32, [3], name="x")
    _, y = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a + tf.cast(i, tf.float32)),
                         [tf.constant(0), x])
    tf.identity(y, name="out")
    g2 = gp.graph_from_proto(graph.as_graph_def().SerializeToString())
    with tf.Session(graph=g2) as sess:
        got = sess.run("out:0", {"x:0": np.zeros(3, np.float32)})
    np.testing.assert_array_equal(got, [6.0, 6.0, 6.0])


# --- ours -> proto -> ours -----------------------------------------------------------------
def _build_graph():
    with tf.device("/cpu:0"):
        a = tf.constant(np.arange(6, dtype=np.int64).reshape(2, 3), name="a")
    s = tf.constant([b"x", b"\xffyz"], name="s")
    h = tf.constant(np.array([1.5, -2.0], np.float16), name="h")
    bools = tf.constant([True, False], name="bools")
    p = tf.placeholder(tf.float32, [None, 3], name="p")
    q = tf.placeholder(tf.float32, None, name="q")
    with tf.name_scope("block"):
        with tf.control_dependencies([a.op, s.op]):
            c = tf.identity(p, name="c")
        with tf.colocate_with(c.op):
            d = tf.nn.relu(c * 2.0)
        k = tf.nn.conv2d(tf.zeros([1, 4, 4, 1]), tf.ones([2, 2, 1, 1]), [1, 1, 1, 1], "SAME")
    split = tf.split(tf.reshape(tf.range(6.0), [2, 3]), 3, axis=1, name="split")
    tf.add(split[1], q, name="second")
    return a, s, h, bools, p, q, c, d, k


def test_round_trip_through_protobuf_bytes(graph):
    _build_graph()
    data = graph.as_graph_def().SerializeToString()
    g2 = gp.graph_from_proto(graph_pb2.GraphDef.FromString(data))
    assert [o.name for o in g2.get_operations()] == [o.name for o in graph.get_operations()]
    for op in graph.get_operations():
        op2 = g2.get_operation_by_name(op.name)
        assert op2.type == op.type and op2.device == op.device
        assert [t.name for t in op2.inputs] == [t.name for t in op.inputs]
        assert [x.name for x in op2.control_inputs] == [x.name for x in op.control_inputs]
        assert op2.colocation_groups() == op.colocation_groups()
        for t, t2 in zip(op.outputs, op2.outputs):
            assert t2.dtype == t.dtype
            assert t2.shape.ndims == t.shape.ndims
            if t.shape.ndims is not None:
                assert t2.shape.as_list() == t.shape.as_list()
        for k in set(op.node_def.attr) - {"_class"}:
            v, v2 = op.get_attr(k), op2.get_attr(k)
            if isinstance(v, np.ndarray):
                assert v2.dtype == v.dtype
                np.testing.assert_array_equal(v2, v)
            else:
                assert v2 == v and type(v2) is type(v), (op.name, k)
    assert g2.get_operation_by_name("s").get_attr("value").tolist() == [b"x", b"\xffyz"]
    assert g2.get_tensor_by_name("q:0").shape.ndims is None
    with tf.Session(graph=g2) as sess:
        out = sess.run(["block/Relu:0", "second:0", "h:0", "bools:0"],
                       {"p:0": np.ones((1, 3), np.float32), "q:0": 1.0})
    np.testing.assert_array_equal(out[0], [[2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(out[1], [[2.0], [5.0]])
    assert out[2].dtype == np.float16 and out[3].dtype == np.bool_


def test_as_graph_def_is_tf_protobuf_message(graph):
    tf.constant(1.0, name="one")
    v0 = graph.version
    tf.constant(2.0, name="two")
    gd = graph.as_graph_def()
    assert isinstance(gd, graph_pb2.GraphDef)
    assert [n.name for n in gd.node] == ["one", "two"]
    assert [n.name for n in graph.as_graph_def(from_version=v0).node] == ["two"]
    # ops with several outputs (whose tensors are numbered too) count once, as in TF
    v1 = graph.version
    tf.split(tf.constant([1.0, 2.0, 3.0, 4.0], name="four"), 4, name="split")
    assert graph.version == v1 + 3  # split's size_splits/axis const, the value, Split
    assert [n.name for n in graph.as_graph_def(from_version=v1).node] == [
        "four", "split/split_dim", "split"]
    text = text_format.MessageToString(gd)
    assert 'name: "two"' in text and "DT_FLOAT" in text
    again = graph_pb2.GraphDef()
    again.ParseFromString(gd.SerializeToString())
    assert again == gd
    with tf.Session() as sess:
        assert isinstance(sess.graph_def, graph_pb2.GraphDef)


def test_our_graph_def_field_by_field(graph):
    a, s, h, bools, p, q, c, d, k = _build_graph()
    gd = graph_pb2.GraphDef.FromString(graph.as_graph_def(add_shapes=True).SerializeToString())
    nodes = {n.name: n for n in gd.node}
    assert gd.versions.producer == gp.TF_PRODUCER
    na = nodes["a"]
    assert na.op == "Const" and na.device == "/device:CPU:0"
    assert na.attr["dtype"].type == types_pb2.DT_INT64
    ta = na.attr["value"].tensor
    assert ta.dtype == types_pb2.DT_INT64 and [x.size for x in ta.tensor_shape.dim] == [2, 3]
    assert ta.tensor_content == np.arange(6, dtype="<i8").tobytes()
    ts = nodes["s"].attr["value"].tensor
    assert ts.dtype == types_pb2.DT_STRING and list(ts.string_val) == [b"x", b"\xffyz"]
    assert nodes["h"].attr["value"].tensor.tensor_content == np.array(
        [1.5, -2.0], "<f2").tobytes()
    assert nodes["p"].attr["shape"].shape.dim[0].size == -1
    assert nodes["p"].attr["shape"].shape.dim[1].size == 3
    assert nodes["q"].attr["shape"].shape.unknown_rank
    assert list(nodes["block/c"].input) == ["p", "^a", "^s"]
    assert nodes["block/c"].attr["T"].type == types_pb2.DT_FLOAT
    assert list(nodes["block/Relu"].attr["_class"].list.s) == [b"loc:@block/c"]
    conv = nodes["block/Conv2D"]
    assert list(conv.attr["strides"].list.i) == [1, 1, 1, 1]
    assert conv.attr["padding"].s == b"SAME"
    assert nodes["second"].input[0] == "split:1"
    shapes = nodes["split"].attr["_output_shapes"].list.shape
    assert len(shapes) == 3 and [x.size for x in shapes[0].dim] == [2, 1]
    assert nodes["q"].attr["_output_shapes"].list.shape[0].unknown_rank


def test_attr_values_round_trip():
    from tensorboard.compat.proto import attr_value_pb2
    values = [tf.float32, tf.TensorShape([2, None]), tf.TensorShape(None), tf.TensorShape([]),
              True, 3, 0.25, float("inf"), "SAME", b"\x00\xff", [1, 2], [], [b"a", b"\xff"],
              [tf.int32, tf.string], [tf.TensorShape([1]), tf.TensorShape(None)], [0.5, 2.0],
              [True, False], np.array([[1.5, -2.0]], np.float64), np.array(7, np.int32),
              np.array([True, False]), np.array([1 + 2j], np.complex64),
              np.array([b"p", b"q"], dtype=object), gp.FuncAttr("f", {"T": tf.float32})]
    for v in values:
        av = attr_value_pb2.AttrValue()
        gp.attr_to_proto(v, av)
        av = attr_value_pb2.AttrValue.FromString(av.SerializeToString())
        back = gp.attr_from_proto(av, as_bytes=isinstance(v, bytes))
        if isinstance(v, np.ndarray):
            assert back.dtype == v.dtype and back.shape == v.shape
            np.testing.assert_array_equal(back, v)
        elif isinstance(v, tf.TensorShape):
            assert back.ndims == v.ndims and (v.ndims is None or back.as_list() == v.as_list())
        elif isinstance(v, list) and v and isinstance(v[0], tf.TensorShape):
            assert [b.ndims for b in back] == [x.ndims for x in v]
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            assert back == ["a", b"\xff"]  # UTF-8 strings come back as str
        else:
            assert back == v and type(back) is type(v), v
    av = attr_value_pb2.AttrValue()
    gp.attr_to_proto(None, av)
    assert av.WhichOneof("value") is None and gp.attr_from_proto(av) is None
    av.f = 0.1  # AttrValue.f is a float32, as in TF
    assert gp.attr_from_proto(av) == float(np.float32(0.1))
    with pytest.raises(ValueError, match="attr 'fn' of node 'n'"):
        gp.attr_to_proto(object(), attr_value_pb2.AttrValue(), "n", "fn")


def test_tensor_proto_typed_value_fields():
    from tensorboard.compat.proto import tensor_pb2
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[2.5])
    t.tensor_shape.dim.add().size = 2
    t.tensor_shape.dim.add().size = 2
    arr = gp.tensor_proto_to_array(t)
    assert arr.dtype == np.float32 and arr.tolist() == [[2.5, 2.5], [2.5, 2.5]]
    assert not arr.flags.writeable
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_INT8, int_val=[1, -2, 3])
    t.tensor_shape.dim.add().size = 3
    assert gp.tensor_proto_to_array(t).tolist() == [1, -2, 3]
    assert gp.tensor_proto_to_array(t).dtype == np.int8
    half = np.array([1.5, -0.25], np.float16)
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_HALF,
                               half_val=half.view(np.uint16).tolist())
    t.tensor_shape.dim.add().size = 2
    np.testing.assert_array_equal(gp.tensor_proto_to_array(t), half)
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_COMPLEX64, scomplex_val=[1, 2, 3, -4])
    t.tensor_shape.dim.add().size = 2
    assert gp.tensor_proto_to_array(t).tolist() == [1 + 2j, 3 - 4j]
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_BOOL)  # no values: zeros, as in TF
    t.tensor_shape.dim.add().size = 2
    assert gp.tensor_proto_to_array(t).tolist() == [False, False]
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[b"a"])
    assert gp.tensor_proto_to_array(t).tolist() == b"a"
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_content=b"\x00" * 12)
    t.tensor_shape.dim.add().size = 2
    with pytest.raises(ValueError, match="3 values of float32 for shape \\[2\\]"):
        gp.tensor_proto_to_array(t)
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT_REF, float_val=[1.0])
    assert gp.tensor_proto_to_array(t).dtype == np.float32  # reference types: their base


def test_bad_graph_defs_raise_value_error(graph):
    with pytest.raises(ValueError, match="Not a tensorweave GraphDef nor a TensorFlow"):
        tf.import_graph_def(b"\x80garbage")
    with pytest.raises(TypeError, match="graph_def must be a GraphDef proto"):
        tf.import_graph_def(3)
    gd = graph_pb2.GraphDef()  # a functional op calling a function the library lacks
    gd.node.add(name="c", op="PartitionedCall").attr["f"].func.name = "my_fn"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Function 'my_fn' called by "
                       "node 'c' is not in the GraphDef's function library"):
        tf.import_graph_def(gd)
    gd = graph_pb2.GraphDef()
    node = gd.node.add(name="n", op="NoSuchOp")
    # TF raises NotFoundError (not ValueError) for an unregistered op type
    with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
        tf.import_graph_def(gd)
    cyclic = graph_pb2.GraphDef()
    cyclic.node.add(name="a", op="Identity", input=["b"]).attr["T"].type = types_pb2.DT_FLOAT
    cyclic.node.add(name="b", op="Identity", input=["a"]).attr["T"].type = types_pb2.DT_FLOAT
    with pytest.raises(ValueError, match="cycle"):
        tf.import_graph_def(cyclic)
    loop = graph_pb2.GraphDef()
    m = loop.node.add(name="m", op="Merge", input=["n"])
    m.attr["T"].type = types_pb2.DT_FLOAT
    m.attr["N"].i = 1
    loop.node.add(name="n", op="NextIteration", input=["m"]).attr["T"].type = \
        types_pb2.DT_FLOAT
    with pytest.raises(ValueError, match="Merge node 'm' has only NextIteration inputs"):
        tf.import_graph_def(loop)
    node.op = "Const"
    node.attr["dtype"].type = types_pb2.DT_VARIANT + 50
    with pytest.raises(ValueError, match="DataType enum"):
        tf.import_graph_def(gd)


# --- write_graph ----------------------------------------------------------------------------
def test_write_graph_text_and_binary(graph, tmp_path):
    tf.identity(tf.constant([1.0, 2.0], name="c"), name="out")
    path = tf.train.write_graph(graph, str(tmp_path / "sub"), "g.pbtxt")
    assert path == str(tmp_path / "sub" / "g.pbtxt")
    text = (tmp_path / "sub" / "g.pbtxt").read_text()
    proto = text_format.Parse(text, graph_pb2.GraphDef())
    assert [n.name for n in proto.node] == ["c", "out"]
    path = tf.io.write_graph(graph.as_graph_def(), str(tmp_path), "g.pb", as_text=False)
    proto2 = graph_pb2.GraphDef.FromString((tmp_path / "g.pb").read_bytes())
    assert proto2 == proto
    ours = serialize.graph_to_graph_def(graph)
    tf.train.write_graph(ours, str(tmp_path), "ours.pb", as_text=False)
    assert graph_pb2.GraphDef.FromString((tmp_path / "ours.pb").read_bytes()) == proto
    with tf.Graph().as_default():
        (out,) = tf.import_graph_def((tmp_path / "sub" / "g.pbtxt").read_bytes(),
                                     return_elements=["out:0"])
        with tf.Session() as sess:
            assert sess.run(out).tolist() == [1.0, 2.0]


# --- graph_util -----------------------------------------------------------------------------
def _training_graph_def():
    gd = graph_pb2.GraphDef()
    gd.node.add(name="x", op="Placeholder")
    gd.node.add(name="unused", op="Placeholder")
    gd.node.add(name="gate", op="NoOp")
    gd.node.add(name="id1", op="Identity", input=["x"])
    gd.node.add(name="check", op="CheckNumerics", input=["id1"])
    gd.node.add(name="id_ctrl", op="Identity", input=["check", "^gate"])
    gd.node.add(name="y", op="Relu", input=["id_ctrl", "^id1"])
    gd.node.add(name="z", op="Relu", input=["check:0"])
    return gd


def test_extract_sub_graph():
    gd = _training_graph_def()
    sub = tf.graph_util.extract_sub_graph(gd, ["z"])
    assert isinstance(sub, graph_pb2.GraphDef)
    assert [n.name for n in sub.node] == ["x", "id1", "check", "z"]
    sub = tf.graph_util.extract_sub_graph(gd, ["y"])
    assert [n.name for n in sub.node] == ["x", "gate", "id1", "check", "id_ctrl", "y"]
    with pytest.raises(TypeError, match="graph_pb2.GraphDef"):
        tf.graph_util.extract_sub_graph("nope", ["y"])
    with pytest.raises(TypeError, match="iterable of strings"):
        tf.graph_util.extract_sub_graph(gd, "y")
    with pytest.raises(AssertionError, match="ghost is not in graph"):
        tf.graph_util.extract_sub_graph(gd, ["ghost"])


def test_remove_training_nodes():
    out = tf.graph_util.remove_training_nodes(_training_graph_def())
    nodes = {n.name: list(n.input) for n in out.node}
    # id1 is a control input of y: kept; id_ctrl has a control input: kept
    assert "check" not in nodes and "id1" in nodes and "id_ctrl" in nodes
    assert nodes["id_ctrl"] == ["id1", "^gate"]
    assert nodes["z"] == ["id1"]
    gd = graph_pb2.GraphDef()
    gd.node.add(name="x", op="Placeholder")
    gd.node.add(name="i", op="Identity", input=["x"])
    gd.node.add(name="j", op="Identity", input=["i"])
    gd.node.add(name="y", op="Relu", input=["j"])
    out = tf.graph_util.remove_training_nodes(gd)
    assert [(n.name, list(n.input)) for n in out.node] == [("x", []), ("y", ["x"])]
    out = tf.graph_util.remove_training_nodes(gd, protected_nodes=["j"])
    assert [(n.name, list(n.input)) for n in out.node] == [("x", []), ("j", ["x"]),
                                                            ("y", ["j"])]


def test_must_run_on_cpu_and_tensor_shape(graph):
    i = tf.constant([1, 2], name="i")
    f = tf.constant([1.0], name="f")
    v = tf.Variable(1.0, name="v")
    tf.cast(i, tf.float32, name="cast")
    assert tf.graph_util.must_run_on_cpu(i.op) is True
    assert tf.graph_util.must_run_on_cpu(f.op) is False
    assert tf.graph_util.must_run_on_cpu(graph.get_operation_by_name("cast")) is True
    nodes = {n.name: n for n in graph.as_graph_def().node}
    assert tf.graph_util.must_run_on_cpu(nodes["i"]) is True
    assert tf.graph_util.must_run_on_cpu(nodes["f"]) is False
    assert tf.graph_util.must_run_on_cpu(v.op) is False
    assert tf.graph_util.must_run_on_cpu(v.op, pin_variables_on_cpu=True) is True
    assert tf.graph_util.tensor_shape_from_node_def_name(graph, "i").as_list() == [2]
    assert tf.graph_util.tensor_shape_from_node_def_name(graph, "f:0").as_list() == [1]


def test_convert_variables_to_constants_resource_variables(caplog):
    feed = np.array([[1.0, 2.0, 3.0]], np.float32)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="W")
        b = tf.Variable([0.5, -1.0], name="b")
        tf.Variable(7.0, name="unused")
        y = tf.identity(tf.matmul(x, w) + b, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(y, {x: feed})
            with caplog.at_level(logging.INFO, logger="tensorflow"):
                frozen = tf.graph_util.convert_variables_to_constants(
                    sess, sess.graph_def, ["y"])
            partly = tf.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), ["y"], variable_names_blacklist=["b"])
    assert "Froze 2 variables." in caplog.text
    ops = {n.name: n.op for n in frozen.node}
    assert ops["W"] == "Const" and ops["b"] == "Const" and "unused" not in ops
    assert "VarHandleOp" not in ops.values() and "ReadVariableOp" not in ops.values()
    assert ops["W/read"] == "Identity" if "W/read" in ops else True
    np.testing.assert_array_equal(gp.tensor_proto_to_array(
        [n for n in frozen.node if n.name == "W"][0].attr["value"].tensor),
        np.arange(6, dtype=np.float32).reshape(3, 2))
    with tf.Graph().as_default():
        (y2,) = tf.import_graph_def(frozen, return_elements=["y:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y2, {"x:0": feed}), want)
    partly_ops = {n.name: n.op for n in partly.node}
    assert partly_ops["W"] == "Const" and partly_ops["b"] == "VarHandleOp"


def test_freeze_a_variable_used_through_cond_while_loop_and_gather():
    # the handle passes through Switch/Merge, Enter/Exit/NextIteration and Identity, and
    # ResourceGather reads it: frozen, these carry (and gather) the value, as TF's
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [], name="p")
        w = tf.get_variable("w", initializer=np.arange(4.0, dtype=np.float32))
        tf.identity(tf.cond(p, lambda: w * 2, lambda: tf.identity(w)), name="y")
        tf.identity(tf.gather(w, [1, 3]), name="g")
        tf.identity(tf.nn.embedding_lookup(w, [2]), name="e")
        _, total = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + w),
                                 [0, tf.zeros([4])])
        tf.identity(total, name="l")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, sess.graph_def, ["y", "g", "e", "l"])
    ops = {n.op for n in frozen.node}
    assert "VarHandleOp" not in ops and "ResourceGather" not in ops and "GatherV2" in ops
    assert all(n.attr["T"].type != tf.resource.as_datatype_enum for n in frozen.node
               if "T" in n.attr)
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            y, g, e, total = sess.run(["y:0", "g:0", "e:0", "l:0"], {"p:0": True})
            np.testing.assert_array_equal(y, [0, 2, 4, 6])
            np.testing.assert_array_equal(g, [1, 3])
            np.testing.assert_array_equal(e, [2])
            np.testing.assert_array_equal(total, [0, 3, 6, 9])
            np.testing.assert_array_equal(sess.run("y:0", {"p:0": False}), [0, 1, 2, 3])


def test_freeze_a_tf_written_meta_graph(expected):
    with tf.Graph().as_default():
        tf.train.import_meta_graph(os.path.join(FIXTURES, "linear_resource.meta"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["y"])
    assert sorted(n.op for n in frozen.node) == sorted(
        ["Placeholder", "Const", "Identity", "Const", "Identity", "MatMul", "AddV2"])
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            got = sess.run("y:0", {"x:0": expected["res_x"]})
    np.testing.assert_allclose(got, expected["res_y0"], rtol=1e-6)


def test_freeze_the_tf_graph_def_of_a_ref_variable_meta_graph(expected):
    from tensorboard.compat.proto import meta_graph_pb2
    with open(os.path.join(FIXTURES, "linear_ref.meta"), "rb") as f:
        tf_meta = meta_graph_pb2.MetaGraphDef.FromString(f.read())
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(tf_meta)
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "linear_ref_ckpt"))
            # TF's own GraphDef, with VariableV2 nodes: their values come from the
            # resource variables they became here
            frozen = tf.graph_util.convert_variables_to_constants(sess, tf_meta.graph_def,
                                                                  ["y"])
    ops = {n.name: n.op for n in frozen.node}
    assert ops["W"] == "Const" and ops["W/read"] == "Identity"
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            got = sess.run("y:0", {"x:0": expected["ref_x"]})
    np.testing.assert_allclose(got, expected["ref_y2"], rtol=1e-6)


def test_an_ops_node_def_is_tfs_message(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    c = tf.constant([1, 2], name="c")
    y = tf.add(x, 1.0, name="y")
    node = y.op.node_def
    assert isinstance(node, tf.NodeDef)
    assert (node.name, node.op, list(node.input)) == ("y", "AddV2", ["x", "y/y"])
    assert node.attr["T"].type == 1  # DT_FLOAT
    np.testing.assert_array_equal(tf.make_ndarray(c.op.node_def.attr["value"].tensor), [1, 2])
    assert tf.NodeDef.FromString(node.SerializeToString()) == node
    # str(op) is the NodeDef's text format, as TF prints it
    assert str(y.op) == 'name: "y"\nop: "AddV2"\ninput: "x"\ninput: "y/y"\nattr {\n  key: "T"\n' \
        '  value {\n    type: DT_FLOAT\n  }\n}\n'
