"""`tf.train.do_quantize_training_on_graphdef` (framework/quantize_training.py).

The rewrites are compared node by node with TensorFlow 2.21's rewrites of the same
GraphDefs (tests/fixtures/quantize_training, made by make_quantize_training_fixtures.py
there); the values expected when they run are the ones that script printed from TF 2.21,
and the errors are those TF 2.21 (and 2.15) raise for the same calls.
"""
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import tensorweave as tf
from tensorweave.framework import graph_def_proto as gp

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "quantize_training")
# attrs TF 2.21 adds to the input's nodes as defaults of its newer op definitions
TF_ONLY_DEFAULTS = {("MatMul", "grad_a"), ("MatMul", "grad_b"), ("VarHandleOp", "debug_name")}
X1 = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]], np.float32)
X2 = np.array([[4.0, -3.0, 1.0], [0.2, 0.1, -2.5]], np.float32)
TARGETS = np.array([[1.0, 0.0], [-1.0, 2.0]], np.float32)
X_RANGE = ["x/Min/AssignValue:0", "x/Max/AssignValue:0"]


def _input(name):
    graph_def = graph_pb2.GraphDef()
    path = os.path.join(FIXTURES, name + ".input.")
    if os.path.exists(path + "pbtxt"):
        with open(path + "pbtxt") as f:
            return text_format.Parse(f.read(), graph_def)
    with open(path + "pb", "rb") as f:
        graph_def.ParseFromString(f.read())
    return graph_def


def _tf_rewrite(name):
    graph_def = graph_pb2.GraphDef()
    with open(os.path.join(FIXTURES, name + ".tf.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    return graph_def


def _rewrite(name):
    return tf.train.do_quantize_training_on_graphdef(_input(name),
                                                     4 if name == "ref_graph" else 8)


def _attr_values(node):
    return {k: gp.attr_from_proto(v) for k, v in node.attr.items()}


def _assert_same_attrs(ours, theirs):
    mine, tf_attrs = _attr_values(ours), _attr_values(theirs)
    extra = {k for k in tf_attrs if k not in mine}
    assert {(theirs.op, k) for k in extra} <= TF_ONLY_DEFAULTS, (theirs.name, extra)
    assert set(mine) <= set(tf_attrs), (ours.name, set(mine) - set(tf_attrs))
    for k, v in mine.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(v, tf_attrs[k], err_msg=ours.name + " " + k)
            assert v.dtype == tf_attrs[k].dtype
        else:
            assert v == tf_attrs[k], (ours.name, k, v, tf_attrs[k])


@pytest.mark.parametrize("name", ["matmul", "conv", "train_saver", "ref_graph"])
def test_rewrite_matches_tensorflow(name):
    ours, theirs = _rewrite(name), _tf_rewrite(name)
    assert [n.name for n in ours.node] == [n.name for n in theirs.node]
    for mine, tf_node in zip(ours.node, theirs.node):
        assert (mine.op, list(mine.input), mine.device) == \
            (tf_node.op, list(tf_node.input), tf_node.device), mine.name
        _assert_same_attrs(mine, tf_node)
    assert ours.versions == theirs.versions
    assert ours.HasField("library") and theirs.HasField("library")


def test_matmul_rewrite_structure():
    # what the fixture holds, spelled out for one source: the quantized inputs and the
    # moving-average range of the placeholder
    out = _rewrite("matmul")
    nodes = {n.name: n for n in out.node}
    assert list(nodes["y"].input) == ["x/QuantizeAndDequantizeV2",
                                      "y/ReadVariableOp/QuantizeAndDequantizeV2"]
    qdq = nodes["x/QuantizeAndDequantizeV2"]
    assert list(qdq.input) == ["x", "x/Min/AssignValue", "x/Max/AssignValue"]
    assert _attr_values(qdq) == {"T": tf.float32, "axis": -1, "narrow_range": False,
                                 "num_bits": 8, "range_given": True,
                                 "round_mode": "HALF_TO_EVEN", "signed_input": True}
    assert list(nodes["x/Min/EMA/ValueDiff"].input) == ["x/Min/Variable", "x/Min/Switch:1"]
    assert list(nodes["x/Min/Merge"].input) == ["x/Min/Switch", "x/Min/EMA/EMAValue"]
    assert nodes["x/Min/Variable"].op == "VariableV2"
    assert gp.attr_from_proto(nodes["x/Decay"].attr["value"]) == np.float32(0.999)
    assert len(out.node) == 65


def _session_of(graph_def):
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(graph_def, name="")
    sess = tf.Session(graph=g)
    sess.run([n.name for n in graph_def.node
              if n.op in ("AssignVariableOp", "Assign") and n.name.endswith("/Assign")])
    return sess


def test_matmul_runs_as_in_tensorflow():
    with _session_of(_rewrite("matmul")) as sess:
        y, low, high = sess.run(["y:0"] + X_RANGE, {"x:0": X1})
        # the first step's range is the batch's
        np.testing.assert_allclose(y, [[-2.2811086, -3.6716473], [2.2186124, -1.0274659]],
                                   rtol=1e-6)
        assert (low, high) == (np.float32(-1.2), np.float32(2.0))
        y, low, high = sess.run(["y:0"] + X_RANGE, {"x:0": X2})
        np.testing.assert_allclose(y, [[-7.9527354e-09, -9.8149996e+00],
                                       [2.2521102e+00, -6.5202463e-01]], rtol=1e-6, atol=1e-7)
        assert (low, high) == (np.float32(-1.2018), np.float32(2.0019999))


def test_conv_runs_as_in_tensorflow():
    with _session_of(_rewrite("conv")) as sess:
        image = np.linspace(-1, 2, 16, dtype=np.float32).reshape(1, 4, 4, 1)
        np.testing.assert_allclose(sess.run("y:0", {"x:0": image}), [[-2.296942, -2.0156362]],
                                   rtol=1e-6)
        image = np.linspace(3, -2, 16, dtype=np.float32).reshape(1, 4, 4, 1)
        np.testing.assert_allclose(sess.run("y:0", {"x:0": image}), [[3.036064, 3.18045]],
                                   rtol=1e-6)


def _moving_average(var, batch_value):
    """TF's update of a range variable, in float32 as its ops compute it."""
    f32 = np.float32
    return f32(var) - (f32(var) - f32(batch_value)) * (f32(1) - f32(0.999))


def test_training_and_saver_run_as_in_tensorflow(tmp_path):
    path = str(tmp_path / "ckpt")
    with _session_of(_rewrite("train_saver")) as sess:
        expected = [(10.942921, -1.2, 2.0), (23.04189, -1.2018, 2.0019999),
                    (2.4564683, -1.2017982, 2.001998)]
        for x, (loss, low, high) in zip((X1, X2, X1), expected):
            out = sess.run(["loss:0", "train"] + X_RANGE, {"x:0": x, "t:0": TARGETS})
            np.testing.assert_allclose(out[0], loss, rtol=1e-6)
            assert out[2:] == [np.float32(low), np.float32(high)]
            if x is X1:
                sess.run("save/control_dependency:0", {"save/Const:0": path})
        w = [[0.69710946, 0.14469603], [-0.052700467, 1.5892383],
             [-0.09090552, 0.64051896]]
        np.testing.assert_allclose(sess.run("w/Read/ReadVariableOp:0"), w, rtol=1e-6)
    saved = {"w": w, "x/Max/Variable": 2.001998, "x/Min/Variable": -1.2017982,
             "y/ReadVariableOp/Max/Variable": 2.998482,
             "y/ReadVariableOp/Min/Variable": -1.9980037}
    assert [n for n, _ in tf.train.list_variables(path)] == sorted(saved)
    reader = tf.train.load_checkpoint(path)
    for name, value in saved.items():
        np.testing.assert_allclose(reader.get_tensor(name), value, rtol=1e-6)
    # restore_all restores the range variables too: the next step averages from them
    with _session_of(_rewrite("train_saver")) as sess:
        sess.run("save/restore_all", {"save/Const:0": path})
        low, high = sess.run(X_RANGE, {"x:0": X2})
        assert low == _moving_average(np.float32(-1.2017982), X2.min())
        assert high == _moving_average(np.float32(2.001998), X2.max())


def test_reference_variable_graph_runs_as_in_tensorflow():
    # constant ranges for Relu6 [0, 6], Sigmoid [0, 1] and Tanh (through Identity)
    # [-1, 1]; num_bits=4
    with _session_of(_rewrite("ref_graph")) as sess:
        m3, m2 = sess.run(["m3:0", "m2:0"], {"x:0": [[1.0, -2.0], [0.5, 3.0]]})
        np.testing.assert_allclose(m3, [[0.6095239, 0.22857146], [0.42857146, 0.42857146]],
                                   rtol=1e-6)
        np.testing.assert_allclose(m2, [[0.0, 0.0], [4.228572, -8.457143]], rtol=1e-6)
        m3, m2 = sess.run(["m3:0", "m2:0"], {"x:0": [[-1.0, 0.25], [2.0, 1.5]]})
        np.testing.assert_allclose(m3, [[1.0000001, 0.40000007], [0.66666675, 0.40000007]],
                                   rtol=1e-6)
        np.testing.assert_allclose(m2, [[2.6285715, -0.22857143], [2.7428575, -6.8571434]],
                                   rtol=1e-6)


def test_reads_of_tf1_variables_count_as_variables():
    # three tf.Variable reads and a placeholder: TF1 (reference variables) accepts the
    # graph, so does tensorweave, where tf.Variable reads are ReadVariableOps; the values
    # are TF 2.21's for this program under tf.disable_v2_behavior()
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        w1 = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), name="w1")
        w2 = tf.Variable(np.linspace(1, -0.5, 8, dtype=np.float32).reshape(4, 2), name="w2")
        w3 = tf.Variable([[0.5, -1.0], [2.0, 0.25]], name="w3")
        h = tf.nn.relu(tf.matmul(x, w1, name="l1"), name="h")
        tf.matmul(tf.matmul(h, w2, name="l2"), w3, name="l3")
        init = tf.global_variables_initializer()
    out = tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 8)
    assert sorted(n.name for n in out.node if n.op == "QuantizeAndDequantizeV2") == [
        "h/QuantizeAndDequantizeV2", "l1/ReadVariableOp/QuantizeAndDequantizeV2",
        "l2/QuantizeAndDequantizeV2", "l2/ReadVariableOp/QuantizeAndDequantizeV2",
        "l3/ReadVariableOp/QuantizeAndDequantizeV2", "x/QuantizeAndDequantizeV2"]
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(out, name="")
    with tf.Session(graph=g2) as sess:
        sess.run(init.name)
        y = sess.run("l3:0", {"x:0": [[1.0, 2.0, 0.5], [-0.3, 0.7, 1.1]]})
        np.testing.assert_allclose(y, [[-0.6769937, 0.09216419], [0.42788962, -0.88512397]],
                                   rtol=1e-5)
        y = sess.run("l3:0", {"x:0": [[2.0, -1.0, 0.5], [0.2, 0.4, 1.6]]})
        np.testing.assert_allclose(y, [[0.0, 0.0], [-0.03879064, -0.71452993]], rtol=1e-5)


def test_quantizes_output_zero_of_the_source_node():
    # TF's rewrite takes the input's node, not its tensor: the MatMul of split:1 gets
    # split:0 quantized (TF 2.21 gives these values)
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2, 4], name="a")
        _, right = tf.split(a, 2, axis=1, name="split")
        tf.matmul(right, tf.constant(np.eye(2, dtype=np.float32), name="c"), name="m")
    out = tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 8)
    nodes = {n.name: n for n in out.node}
    assert list(nodes["split/QuantizeAndDequantizeV2"].input)[0] == "split"
    with _session_of(out) as sess:
        m = sess.run("m:0", {"a:0": np.arange(8, dtype=np.float32).reshape(2, 4)})
    np.testing.assert_allclose(m, [[0.0, 0.984252], [4.015748, 5.0]], rtol=1e-6)


def test_input_is_unchanged_and_our_graph_def_is_accepted():
    graph_def = _input("matmul")
    before = graph_def.SerializeToString()
    out = tf.train.do_quantize_training_on_graphdef(graph_def, 8)
    assert graph_def.SerializeToString() == before and out is not graph_def
    ours = gp.graph_def_from_proto(graph_def)  # tensorweave's own GraphDef class
    again = tf.train.do_quantize_training_on_graphdef(ours, 8)
    assert [n.name for n in again.node] == [n.name for n in out.node]
    empty = tf.train.do_quantize_training_on_graphdef(graph_pb2.GraphDef(), 8)
    assert len(empty.node) == 0


@pytest.mark.parametrize("num_bits", [1, 63, True, np.int64(4)])
def test_num_bits_in_range(num_bits):
    out = tf.train.do_quantize_training_on_graphdef(_input("matmul"), num_bits)
    qdq = [n for n in out.node if n.op == "QuantizeAndDequantizeV2"]
    assert {n.attr["num_bits"].i for n in qdq} == {int(num_bits)}


@pytest.mark.parametrize("num_bits,error,match", [
    (0, IndexError, r"num_bits should be in range \[1, 63\] but is: 0"),
    (64, IndexError, r"num_bits should be in range \[1, 63\] but is: 64"),
    (-1, IndexError, r"but is: -1"),
    (8.0, TypeError, "num_bits"),
    ("8", TypeError, "num_bits"),
    (2 ** 40, TypeError, "num_bits"),
])
def test_bad_num_bits(num_bits, error, match):
    with pytest.raises(error, match=match):
        tf.train.do_quantize_training_on_graphdef(_input("matmul"), num_bits)


@pytest.mark.parametrize("graph", ["abc", b"abc", None, tf.Graph()])
def test_not_a_graph_def(graph):
    with pytest.raises(AttributeError, match="has no attribute 'SerializeToString'"):
        tf.train.do_quantize_training_on_graphdef(graph, 8)


def _graph_of(text):
    return text_format.Parse(text, graph_pb2.GraphDef())


def test_malformed_graphs():
    with pytest.raises(RuntimeError, match="Op type not registered 'NoSuchOp'"):
        tf.train.do_quantize_training_on_graphdef(
            _graph_of('node { name: "a" op: "NoSuchOp" }'), 8)
    missing = _graph_of('node { name: "a" op: "Identity" input: "zz" '
                        'attr { key: "T" value { type: DT_FLOAT } } }')
    with pytest.raises(ValueError, match="Node 'a': Unknown input node 'zz'"):
        tf.train.do_quantize_training_on_graphdef(missing, 8)


def _placeholder_graph(dtype, activation=None):
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(dtype, [2, 2], name="a")
        if activation is not None:
            a = activation(a, name="act")
        tf.matmul(a, tf.constant(np.eye(2), dtype, name="c"), name="m")
    return g.as_graph_def()


def test_inputs_of_unknown_range_are_limited_to_two():
    g = tf.Graph()
    with g.as_default():
        a, b, c = (tf.placeholder(tf.float32, [2, 2], name=n) for n in "abc")
        tf.matmul(tf.matmul(a, b, name="m1"), c, name="m2")
    with pytest.raises(NotImplementedError,
                       match="Found an unknown op: m1 with type: MatMul; Unknown ops are "
                             "considered as model input for now and only 2 inputs are "
                             "supported currently."):
        tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 8)
    # TF counts inputs, not nodes: one placeholder feeding three MatMul inputs
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2, 2], name="a")
        tf.matmul(a, a, name="m1")
        tf.matmul(a, tf.constant(np.eye(2, dtype=np.float32)), name="m2")
    with pytest.raises(NotImplementedError, match="unknown op: a with type: Placeholder"):
        tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 8)
    # reads of resource variables are of unknown range, as in TF 2.21
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        v1, v2 = (tf.get_variable(n, [2, 2], use_resource=True) for n in ("v1", "v2"))
        tf.matmul(tf.nn.relu(tf.matmul(x, v1, name="m1")), v2, name="m2")
    with pytest.raises(NotImplementedError,
                       match="unknown op: m2/ReadVariableOp with type: ReadVariableOp"):
        tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 8)


def test_quantized_inputs_must_be_float32():
    with pytest.raises(ValueError, match="Inconsistent values for attr 'T' DT_FLOAT vs. "
                                         "DT_INT32 while building NodeDef "
                                         "'a/Min/EMA/ValueDiff'"):
        tf.train.do_quantize_training_on_graphdef(_placeholder_graph(tf.int32), 8)
    with pytest.raises(ValueError, match="DT_DOUBLE while building NodeDef "
                                         "'a/Min/EMA/ValueDiff'"):
        tf.train.do_quantize_training_on_graphdef(_placeholder_graph(tf.float64), 8)
    with pytest.raises(ValueError, match="NodeDef 'act/QuantizeAndDequantizeV2'"):
        tf.train.do_quantize_training_on_graphdef(
            _placeholder_graph(tf.float64, tf.nn.relu6), 8)


def test_saver_errors():
    graph_def = _input("train_saver")
    save = next(n for n in graph_def.node if n.op == "SaveV2")
    twice = graph_pb2.GraphDef()
    twice.CopyFrom(graph_def)
    twice.node.add().CopyFrom(save)
    twice.node[-1].name = "save/SaveV2_1"
    with pytest.raises(ValueError, match="^Input graph has multiple SaveV2 ops.$"):
        tf.train.do_quantize_training_on_graphdef(twice, 8)
    for node in graph_def.node:
        if node.name == "save/restore_all":
            node.name = "save/restore_everything"
    with pytest.raises(ValueError, match="^graph has SaveOp, but no restore_all NoOp$"):
        tf.train.do_quantize_training_on_graphdef(graph_def, 8)
