"""GraphDef round trips: names, attrs, devices, control inputs, values."""
import json

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import serialize


def _roundtrip(g):
    data = g.as_graph_def().SerializeToString()
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(tf.GraphDef.FromString(data), name="")
    return g2, data


def test_format_is_versioned_json_not_pickle(graph):
    tf.constant([1.0, 2.0], name="a")
    doc = json.loads(serialize.graph_to_graph_def(graph).SerializeToString())
    assert doc["format"] == "tensorweave.GraphDef"
    assert doc["versions"] == {"producer": 1, "min_consumer": 1}
    assert doc["node"][0]["name"] == "a" and doc["node"][0]["op"] == "Const"


def test_roundtrip_preserves_names_attrs_devices_and_control_inputs(graph):
    with tf.device("/cpu:0"):
        a = tf.constant(np.arange(6, dtype=np.int64).reshape(2, 3), name="a")
    s = tf.constant([b"x", b"yz"], name="s")
    p = tf.placeholder(tf.float16, [None, 3], name="p")
    with tf.control_dependencies([a.op, s.op]):
        c = tf.identity(p, name="c")
    g2, _ = _roundtrip(graph)
    assert [o.name for o in g2.get_operations()] == [o.name for o in graph.get_operations()]
    for op in graph.get_operations():
        op2 = g2.get_operation_by_name(op.name)
        assert op2.type == op.type and op2.device == op.device
        assert [t.name for t in op2.inputs] == [t.name for t in op.inputs]
        assert [x.name for x in op2.control_inputs] == [x.name for x in op.control_inputs]
        for t, t2 in zip(op.outputs, op2.outputs):
            assert t2.dtype == t.dtype and t2.shape.as_list() == t.shape.as_list() \
                if t.shape.ndims is not None else t2.shape.ndims is None
    assert g2.get_tensor_by_name("p:0").shape.as_list() == [None, 3]
    np.testing.assert_array_equal(g2.get_operation_by_name("a").get_attr("value"),
                                  a.op.get_attr("value"))
    assert list(g2.get_operation_by_name("s").get_attr("value")) == [b"x", b"yz"]
    with tf.Session(graph=g2) as sess:
        out = sess.run("c:0", {"p:0": np.ones((1, 3), np.float16)})
    assert out.dtype == np.float16 and out.shape == (1, 3)


def test_all_attr_kinds_roundtrip():
    values = [tf.float32, tf.TensorShape([2, None]), tf.TensorShape(None), True, 3, 0.25,
              float("inf"), float("nan"), "SAME", b"\x00\xff", [1, 2], [], None,
              np.array([[1.5, -2.0]], np.float64), np.array(7, np.int32),
              np.array([True, False]), np.array([1 + 2j], np.complex64)]
    for v in values:
        back = serialize.decode_attr(json.loads(json.dumps(serialize.encode_attr(v))))
        if isinstance(v, np.ndarray):
            assert back.dtype == v.dtype
            np.testing.assert_array_equal(back, v)
        elif isinstance(v, float) and v != v:
            assert back != back
        elif isinstance(v, tf.TensorShape):
            assert back.ndims == v.ndims and (v.ndims is None or back.as_list() == v.as_list())
        else:
            assert back == v and type(back) is type(v)


def test_unserializable_attr_names_node_and_attr():
    with pytest.raises(ValueError, match="attr 'fn' of node 'n'"):
        serialize.encode_attr(lambda: 0, "n", "fn")


def test_input_map_and_return_elements(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    tf.identity(x, name="y")
    gd = graph.as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        z = tf.constant([5.0, 6.0], name="z")
        y, y_op = tf.import_graph_def(gd, input_map={"x:0": z}, return_elements=["y:0", "y"])
        assert y.name == "import/y:0" and y_op is y.op
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), [5.0, 6.0])
        # importing twice uniquifies the prefix
        (y2,) = tf.import_graph_def(gd, input_map={"x": z}, return_elements=["y:0"])
        assert y2.name == "import_1/y:0"


def test_bad_graph_defs_raise_value_error(graph):
    with pytest.raises(ValueError, match="Not a tensorweave GraphDef"):
        serialize.GraphDef.FromString(b"\x80garbage")
    bad = serialize.GraphDef([serialize.NodeDef("n", "NoSuchOp")])
    with pytest.raises(tf.errors.NotFoundError, match="NoSuchOp"):  # TF's class
        tf.import_graph_def(bad)
    missing = serialize.GraphDef([serialize.NodeDef("n", "Identity", ["ghost"],
                                                    attr={"T": tf.float32})])
    with pytest.raises(ValueError, match="ghost"):
        tf.import_graph_def(missing)
    tf.constant(1.0, name="c")
    with pytest.raises(ValueError, match="not found in graph_def"):
        tf.import_graph_def(graph.as_graph_def(), input_map={"nope:0": tf.constant(1.0)})
    newer = json.loads(serialize.graph_to_graph_def(graph).SerializeToString())
    newer["versions"]["min_consumer"] = 99
    with pytest.raises(ValueError, match="upgrade"):
        serialize.GraphDef.FromString(json.dumps(newer).encode())


def test_model_graph_roundtrip_runs_identically():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.Variable(tf.random_uniform([4, 3], -1.0, 1.0, seed=1), name="w")
        b = tf.Variable(tf.zeros([3]), name="b")
        logits = tf.nn.relu(tf.matmul(x, w) + b)
        loss = tf.reduce_mean(tf.nn.softmax(logits)[:, 0], name="loss")
        init = tf.global_variables_initializer()
    data = np.random.RandomState(0).rand(5, 4).astype(np.float32)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        want = sess.run([logits, loss], {x: data})
    g2, _ = _roundtrip(g)
    with tf.Session(graph=g2) as sess:
        sess.run(init.name)
        got = sess.run([logits.name, "loss:0"], {"x:0": data})
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_tf_graph_def_is_tf_message_for_text_format_and_graph_surgery():
    """The TF1 idioms: a .pbtxt read with text_format.Merge into tf.GraphDef(), nodes
    rebuilt with tf.NodeDef / tf.AttrValue, then imported."""
    from google.protobuf import text_format
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.identity(x * 2.0, name="y")
    text = text_format.MessageToString(g.as_graph_def())
    gd = tf.GraphDef()
    text_format.Merge(text, gd)
    out = tf.GraphDef()
    for node in gd.node:
        if node.name == "mul/y":  # the constant 2.0 becomes 5.0
            new = tf.NodeDef(name=node.name, op="Const")
            new.attr["dtype"].CopyFrom(tf.AttrValue(type=tf.float32.as_datatype_enum))
            new.attr["value"].CopyFrom(tf.AttrValue(tensor=tf.make_tensor_proto(5.0)))
            out.node.extend([new])
        else:
            out.node.add().CopyFrom(node)
    with tf.Graph().as_default() as h:
        tf.import_graph_def(out, name="")
        with tf.Session() as sess:
            assert sess.run(h.get_tensor_by_name("y:0"), {"x:0": [1.0, 2.0]}).tolist() == \
                [5.0, 10.0]
