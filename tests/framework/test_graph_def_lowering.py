"""Private ops lowered to standard TF ops in the GraphDefs written for TensorFlow
(framework/graph_def_lowering.py): no written node has a private op type, every written
op type is one TensorFlow 2.21 registers, and the written graphs import here and run
with the results of the graphs they were written from (values, and the failing asserts'
error class and message)."""
import importlib
import logging
import os

import numpy as np
import pytest
from tensorboard.compat.proto import graph_pb2

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework import graph_def_lowering as lowering
from tensorweave.framework import graph_def_proto as gp
from tensorweave.framework import registry
from tensorweave.framework import serialize
from tensorweave.saved_model import saved_model_file

# The op types that the graphs written by these tests use, each checked once to be
# registered in TensorFlow 2.21 (op_def_registry.get), so the tests do not need TF.
TF_OP_TYPES = frozenset("""
Abs AddV2 All Assert AssignAddVariableOp AssignSubVariableOp AssignVariableOp
BroadcastGradientArgs BroadcastTo Cast ComplexAbs Const Enter Equal Exit FloorDiv
Greater GreaterEqual Identity Less LessEqual LogicalOr LoopCond MatMul Maximum Mean
Merge Mul Neg NextIteration NoOp NotEqual Placeholder PlaceholderWithDefault Range Rank
ReadVariableOp Real RealDiv Reshape ResourceApplyGradientDescent RestoreV2 SaveV2 Shape
Size Square StridedSlice Sub Sum Switch VarHandleOp VarIsInitializedOp
""".split())

X = np.array([[1.0, 2.0, 3.0]], np.float32)


def _asserts_graph():
    """Every private assert, also in a while loop and a cond branch, and a consumer of
    one by a control edge."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, None, name="y")
        r = tf.placeholder(tf.int32, name="r")
        z = tf.placeholder(tf.float64, None, name="z")
        c = tf.placeholder(tf.complex64, [2], name="c")
        s = tf.placeholder(tf.string, [None], name="s")
        tf.assert_equal(x, y, name="ae")
        tf.assert_none_equal(x, y, name="ane")
        tf.assert_less(x, y, name="al", summarize=2)
        tf.assert_less_equal(x, y, name="ale")
        tf.assert_greater(x, y, name="ag")
        tf.assert_greater_equal(x, y, name="age")
        tf.assert_positive(y, name="ap", message="must be positive")
        tf.assert_non_positive(y, name="anp")
        tf.assert_near(z, tf.constant(1.0, tf.float64), rtol=0.1, atol=0.01, name="an")
        tf.assert_near(c, tf.constant([1 + 1j, 2], tf.complex64), rtol=0.1, atol=0.0,
                       name="cn")
        tf.assert_equal(s, tf.constant(["a", "b"]), name="se")
        tf.assert_rank(x, r, name="ar")
        tf.assert_rank_at_least(y, 2, name="aral")
        tf.assert_rank_in(y, [1, 2], name="ari")
        with tf.control_dependencies([tf.assert_equal(x, y, name="dep")]):
            tf.identity(x * 2, name="out")
        n = tf.placeholder(tf.int32, [], name="n")
        w = tf.placeholder(tf.float32, [], name="w")

        def body(i, acc):
            with tf.control_dependencies([tf.assert_less(i, 5, name="in_loop"),
                                          tf.assert_positive(acc, name="acc_pos")]):
                return i + 1, acc * w
        tf.identity(tf.while_loop(lambda i, acc: i < n, body,
                                  [tf.constant(0), tf.constant(1.0)], name="loop")[1],
                    name="loop_out")
        p = tf.placeholder(tf.bool, [], name="p")
        tf.cond(p, lambda: tf.identity(y),
                lambda: tf.identity(tf.with_dependencies(
                    [tf.assert_positive(y, name="in_cond")], y)), name="cond")
    return g


# (fetch, feed, fails): each assert passing and failing
CASES = [
    ("ae_1/Assert", {"x": X, "y": X}, False),
    ("ae_1/Assert", {"x": X, "y": [[1.0, 2.0, 4.0]]}, True),
    ("ae_1/Assert", {"x": X, "y": [1.0, 2.0]}, True),  # incompatible shapes
    ("ane/Assert", {"x": X, "y": [[0.0, 0.0, 0.0]]}, False),
    ("ane/Assert", {"x": X, "y": [[0.0, 2.0, 0.0]]}, True),
    ("al/Assert", {"x": X, "y": 5.0}, False),
    ("al/Assert", {"x": X, "y": [[0.0, 5.0, 5.0]]}, True),
    ("ale/Assert", {"x": X, "y": X}, False),
    ("ale/Assert", {"x": X, "y": [[1.0, 2.0, 2.0]]}, True),
    ("ag/Assert", {"x": X, "y": 0.0}, False),
    ("ag/Assert", {"x": X, "y": 1.0}, True),
    ("age/Assert", {"x": X, "y": X}, False),
    ("age/Assert", {"x": X, "y": [[0.0, 5.0, 0.0]]}, True),
    ("ap/assert_less/Assert", {"y": [1.0, 2.0]}, False),
    ("ap/assert_less/Assert", {"y": [1.0, -2.0]}, True),
    ("anp/assert_less_equal/Assert", {"y": [0.0, -2.0]}, False),
    ("anp/assert_less_equal/Assert", {"y": [0.0, 2.0]}, True),
    ("an/Assert", {"z": [1.05, 0.95]}, False),
    ("an/Assert", {"z": [1.0, 1.5]}, True),
    ("cn/Assert", {"c": [1 + 1.05j, 2.1]}, False),
    ("cn/Assert", {"c": [1 + 1.5j, 2]}, True),
    ("se_1/Assert", {"s": ["a", "b"]}, False),
    ("se_1/Assert", {"s": ["a", "c"]}, True),
    ("ar/Assert", {"x": X, "r": 2}, False),
    ("ar/Assert", {"x": X, "r": 1}, True),
    ("ar/Assert", {"x": X, "r": [2]}, True),  # the rank must be a scalar
    ("aral/Assert", {"y": [[1.0]]}, False),
    ("aral/Assert", {"y": [1.0]}, True),
    ("ari/Assert", {"y": [1.0]}, False),
    ("ari/Assert", {"y": 1.0}, True),
    ("out:0", {"x": X, "y": X}, False),
    ("out:0", {"x": X, "y": [[9.0, 9.0, 9.0]]}, True),
    ("loop_out:0", {"n": 3, "w": 2.0}, False),
    ("loop_out:0", {"n": 7, "w": 2.0}, True),
    ("loop_out:0", {"n": 3, "w": -2.0}, True),
    ("cond/Merge:0", {"p": True, "y": [-1.0]}, False),
    ("cond/Merge:0", {"p": False, "y": [1.0]}, False),
    ("cond/Merge:0", {"p": False, "y": [-1.0]}, True),
]


def _outcome(graph, fetch, feed):
    """("ok", value) or (error class, message without the failing node's trailer)."""
    with tf.Session(graph=graph) as sess:
        try:
            value = sess.run(fetch, {k + ":0": v for k, v in feed.items()})
        except errors.OpError as e:
            return type(e), e.message.split("\n\t [[")[0]
    return "ok", None if value is None else np.asarray(value).tolist()


def _imported(graph_def):
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(graph_def, name="")
    return g


def _private(nodes):
    return sorted({n.op for n in nodes if n.op.startswith("_")})


@pytest.fixture(scope="module")
def asserts():
    g = _asserts_graph()
    return g, _imported(g.as_graph_def())


@pytest.mark.parametrize("fetch,feed,fails", CASES)
def test_lowered_asserts_run_as_the_fused_ones(asserts, fetch, feed, fails):
    g, lowered = asserts
    assert _private(g.as_graph_def(add_shapes=True).node) == []
    assert not [op for op in lowered.get_operations() if op.type.startswith("_")]
    want = _outcome(g, fetch, feed)
    assert _outcome(lowered, fetch, feed) == want
    assert want[0] is (errors.InvalidArgumentError if fails else "ok")


def test_failing_assert_messages_hold_the_data(asserts):
    _, lowered = asserts
    cls, msg = _outcome(lowered, "ar/Assert", {"x": X, "r": 1})
    assert cls is errors.InvalidArgumentError
    assert msg == ("assertion failed: [] [Tensor x:0 must have rank] [1] "
                   "[Received shape: ] [1 3]")
    cls, msg = _outcome(lowered, "al/Assert", {"x": X, "y": [[0.0, 5.0, 5.0]]})
    assert msg == ("assertion failed: [Condition x < y did not hold element-wise:] "
                   "[x (x:0) = ] [[1 2...]...] [y (y:0) = ] [[0 5...]...]")
    assert _outcome(lowered, "ar/Assert", {"x": X, "r": [2]}) == (
        errors.InvalidArgumentError,
        "assertion failed: [Rank must be a scalar. Received rank: ] [2]")


def test_lowered_assert_structure_is_tfs():
    g = _asserts_graph()
    nodes = {n.name: n for n in g.as_graph_def().node}
    ae = nodes["ae_1/Assert"]
    assert ae.op == "Assert" and ae.input[0] == "ae_1/Assert/All"
    assert list(ae.input[1:]) == [i for i in serialize.node_def_of(
        g.get_operation_by_name("ae_1/Assert")).input[2:]]  # the data inputs, unchanged
    assert nodes["ae_1/Assert/Equal"].input == ["x", "y"]
    # y has an unknown rank: the axes are Range(0, Rank(x == y), 1)
    assert nodes["ae_1/Assert/All"].input == ["ae_1/Assert/Equal", "ae_1/Assert/range"]
    assert nodes["ae_1/Assert/range"].input == ["ae_1/Assert/range/start", "ae_1/Assert/Rank",
                                              "ae_1/Assert/range/delta"]
    assert nodes["ae_1/Assert/Rank"].input == ["ae_1/Assert/Equal"]
    assert nodes["ae_1/Assert/range/start"].input == ["^ae_1/Assert/Rank"]
    assert nodes["an/Assert/LessEqual"].input == ["an/Assert/Abs", "an/Assert/add"]
    # the rank assert checks its rank of unknown shape before the rank itself
    assert "^ar/Assert/rank_is_scalar/Assert" in nodes["ar/Assert"].input
    assert nodes["ar/Assert"].input[5] == "ar/Assert/Shape"  # Shape(x) in the data
    # the control edge to the assert still names it
    assert "^dep_1/Assert" in nodes["mul/y"].input


def test_known_rank_reduces_over_constant_axes():
    with tf.Graph().as_default() as g:
        tf.assert_less(tf.placeholder(tf.float32, [2, 3]), 1.0, name="a")
    nodes = {n.name: n for n in g.as_graph_def().node}
    assert nodes["a/Assert/All"].input == ["a/Assert/Less", "a/Assert/Const"]
    axes = gp.tensor_proto_to_array(nodes["a/Assert/Const"].attr["value"].tensor)
    assert axes.tolist() == [0, 1]
    assert list(nodes["a/Assert/Const"].input) == ["^a/Assert/Less"]


def test_reimported_loop_differentiates(asserts):
    _, lowered = asserts
    with lowered.as_default():
        w = lowered.get_tensor_by_name("w:0")
        grad = tf.gradients(lowered.get_tensor_by_name("loop_out:0"), w)[0]
        with tf.Session() as sess:
            assert sess.run(grad, {"n:0": 3, w: 2.0}) == pytest.approx(12.0)


# --- variables: initialized_value(), ExponentialMovingAverage -----------------------------
def _model_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        t = tf.placeholder(tf.float32, [None, 1], name="t")
        w = tf.Variable([[1.0], [2.0]], name="w")
        tf.Variable(w.initialized_value() * 3.0, name="w2")
        b = tf.Variable(0.5, name="b")
        with tf.control_dependencies([tf.assert_rank(x, 2, name="x_rank"),
                                      tf.assert_equal(tf.shape(x)[0], tf.shape(t)[0],
                                                      name="same_n")]):
            pred = tf.add(tf.matmul(x, w) + b, 0.0, name="pred")
        loss = tf.reduce_mean(tf.square(pred - t), name="loss")
        step = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
        ema = tf.train.ExponentialMovingAverage(0.5)
        with tf.control_dependencies([step]):
            tf.group(ema.apply([w, b]), name="train_op")
        tf.identity(ema.average(w), name="avg_w")
        tf.global_variables_initializer()
        tf.train.Saver(write_version=tf.train.SaverDef.V2)
    return g


FEED = {"x:0": [[1.0, 2.0], [3.0, 4.0]], "t:0": [[1.0], [2.0]]}


def _train_values(graph):
    """w2 after initialization, then w, the EMA of w and the loss after two steps."""
    with tf.Session(graph=graph) as sess:
        sess.run(graph.get_operation_by_name("init"))
        w2 = sess.run("w2/read:0")
        for _ in range(2):
            sess.run("train_op", FEED)
        return w2, sess.run(["w/read:0", "avg_w:0", "loss:0"], FEED)


def test_initialized_value_and_ema_after_meta_graph_round_trip(tmp_path):
    g = _model_graph()
    with g.as_default():
        path = str(tmp_path / "model.meta")
        mg = tf.train.export_meta_graph(path)
    proto = mg.to_proto()
    assert _private(proto.graph_def.node) == []
    assert not [t for t in proto.meta_info_def.stripped_op_list.op if t.name[0] == "_"]
    assert {"Merge", "Switch", "VarIsInitializedOp"} <= {
        t.name for t in proto.meta_info_def.stripped_op_list.op}
    merge = {n.name: n for n in proto.graph_def.node}["ReadVariableOrDefault"]
    assert merge.op == "Merge" and list(merge.input) == ["ReadVariableOrDefault/Switch_1",
                                                         "ReadVariableOrDefault/Identity"]
    g2 = tf.Graph()
    with g2.as_default():
        tf.train.import_meta_graph(path)
    assert not [op for op in g2.get_operations() if op.type.startswith("_")]
    want_w2, want = _train_values(g)
    got_w2, got = _train_values(g2)
    np.testing.assert_allclose(got_w2, [[3.0], [6.0]])
    np.testing.assert_allclose(got_w2, want_w2)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    # initialized_value() of an initialized variable is its value
    with tf.Session(graph=g2) as sess:
        sess.run("init")
        sess.run(g2.get_operation_by_name("w/Assign"), {"w/initial_value:0": [[5.0], [6.0]]})
        sess.run("w2/Assign")
        np.testing.assert_allclose(sess.run("w2/read:0"), [[15.0], [18.0]])
        sess.run("train_op", FEED)
        assert _outcome(g2, "pred:0", {"x": [[1.0, 1.0]], "t": [[0.0], [1.0]]})[0] is \
            errors.InvalidArgumentError


def test_saved_model_frozen_graph_and_files_are_lowered(tmp_path):
    g = _model_graph()
    with g.as_default(), tf.Session() as sess:
        sess.run("init")
        builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "saved"))
        builder.add_meta_graph_and_variables(sess, ["serve"])
        builder.save()
        frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                              ["pred"])
        pred = sess.run("pred:0", {"x:0": [[1.0, 1.0]], "t:0": [[0.0]]})
    sm = saved_model_file.saved_model_class().FromString((tmp_path / "saved" /
                                                "saved_model.pb").read_bytes())
    assert _private(sm.meta_graphs[0].graph_def.node) == []
    assert _private(frozen.node) == []
    tf.train.write_graph(g, str(tmp_path), "g.pb", as_text=False)
    tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    tf.train.write_graph(serialize.graph_to_graph_def(g), str(tmp_path), "ours.pb",
                         as_text=False)
    for name in ("g.pb", "g.pbtxt", "ours.pb"):
        assert _private(serialize.GraphDef.FromString(
            (tmp_path / name).read_bytes()).node) == [], name
    g2 = _imported(frozen)
    with tf.Session(graph=g2) as sess:
        np.testing.assert_allclose(sess.run("pred:0", {"x:0": [[1.0, 1.0]], "t:0": [[0.0]]}),
                                   pred)



def _tf_reads(nodes) -> dict:
    """{variable name: its "<v>/Read/ReadVariableOp" nodes} of written nodes."""
    out = {}
    for n in nodes:
        if n.input and n.name == n.input[0] + "/Read/ReadVariableOp":
            out.setdefault(n.name[:-len("/Read/ReadVariableOp")], []).append(n)
    return out


def _variables_graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            tf.Variable([[1.0, 2.0]], name="ref")
        tf.get_variable("res", initializer=[3.0], use_resource=True)
        tf.get_variable("ints", initializer=[4, 5], use_resource=False)
    return g


def test_reference_variables_are_written_with_tfs_read(tmp_path):
    # TF's convert_variables_to_constants fetches "<v>/Read/ReadVariableOp:0" of every
    # VarHandleOp of a session that loaded our meta graph or SavedModel
    g = _variables_graph()
    with g.as_default():
        path = str(tmp_path / "model.meta")
        written = tf.train.export_meta_graph(path).to_proto().graph_def.node
    for nodes in (written, g.as_graph_def().node):
        reads = _tf_reads(nodes)
        assert sorted(reads) == ["ints", "ref", "res"]
        by_name = {n.name: n for n in nodes}
        for var, (read,) in reads.items():
            assert read.op == "ReadVariableOp" and list(read.input) == [var]
            assert read.attr["dtype"] == by_name[var].attr["dtype"]
            assert read.device == by_name[var].device
        assert by_name["ref/Read/ReadVariableOp"].device.endswith("CPU:0")
        assert by_name["ints/Read/ReadVariableOp"].attr["dtype"].type == \
            tf.int32.as_datatype_enum
        # TF1's names stay: the read "v/read" that sess.run(v) fetches
        assert by_name["ref/read"].op == "ReadVariableOp"
    # read back here and written again: still one such read each, holding the value
    with tf.Graph().as_default() as g2:
        tf.train.import_meta_graph(path)
        again = tf.train.export_meta_graph().to_proto().graph_def.node
        assert {k: len(v) for k, v in _tf_reads(again).items()} == \
            {"ints": 1, "ref": 1, "res": 1}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run("ref/Read/ReadVariableOp:0"),
                                          [[1.0, 2.0]])
            np.testing.assert_array_equal(sess.run("ints/Read/ReadVariableOp:0"), [4, 5])
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, g2.as_graph_def(), ["ref/read"])
    assert "ref/Read/ReadVariableOp" not in {n.name for n in frozen.node}


def test_partial_graph_gets_tfs_read_once():
    g = _variables_graph()
    start = g.version
    with g.as_default():
        tf.Variable(1.0, name="late")
    nodes = g.as_graph_def(from_version=start).node
    assert sorted(_tf_reads(nodes)) == ["late"]
    assert _tf_reads(g.as_graph_def().node).keys() == {"ints", "late", "ref", "res"}

def test_written_op_types_are_tensorflow_ops(tmp_path):
    written = set()
    for g in (_asserts_graph(), _model_graph()):
        written |= {n.op for n in g.as_graph_def().node}
        with g.as_default():
            written |= {n.op for n in tf.train.export_meta_graph().to_proto().graph_def.node}
    assert written - TF_OP_TYPES == set()


# --- names, control inputs, partial graphs ------------------------------------------------
def test_helper_names_do_not_clash():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, None, name="x")
        a = tf.assert_positive(x, name="a")
        with tf.name_scope("a/assert_less/Assert/"):
            tf.constant(1.0, name="Less")
            tf.constant(2.0, name="All")
        with tf.control_dependencies([a]):
            out = tf.identity(x, name="out")
    version = g.version
    with g.as_default():
        tf.assert_negative(x, name="later")
    nodes = g.as_graph_def().node
    names = [n.name for n in nodes]
    assert len(names) == len(set(names))
    by_name = {n.name: n for n in nodes}
    assert by_name["a/assert_less/Assert/Less"].op == "Const"
    assert by_name["a/assert_less/Assert/Less_1"].op == "Less"
    assert by_name["a/assert_less/Assert"].input[0] == "a/assert_less/Assert/All_1"
    g2 = _imported(g.as_graph_def())
    with tf.Session(graph=g2) as sess:
        assert sess.run(out.name, {"x:0": 1.0}) == 1.0
        with pytest.raises(errors.InvalidArgumentError, match=r"\[x \(x:0\) = \] \[-1\]"):
            sess.run(out.name, {"x:0": -1.0})
    partial = g.as_graph_def(from_version=version).node
    assert [n.op for n in partial if n.name == "later/assert_less/Assert"] == ["Assert"]


def test_attrs_stripped_of_defaults_are_read_from_the_op(tmp_path):
    with tf.Graph().as_default() as g:
        tf.assert_equal(tf.placeholder(tf.int32, [None], name="x"), 1, name="a")
        mg = tf.train.export_meta_graph(strip_default_attrs=True)
    assert "summarize" not in mg.graph_def.node[-1].attr  # the default 3 was stripped
    node = {n.name: n for n in mg.to_proto().graph_def.node}["a_1/Assert"]
    assert node.op == "Assert" and node.attr["summarize"].i == 3
    g2 = _imported(mg.to_proto().graph_def)
    assert _outcome(g2, "a_1/Assert", {"x": [1, 1, 1, 1]}) == ("ok", None)
    assert _outcome(g2, "a_1/Assert", {"x": [1, 2, 1, 2]}) == (
        errors.InvalidArgumentError, "assertion failed: [Condition x == y did not hold "
        "element-wise:] [x (x:0) = ] [1 2 1...] [y (a_1/y:0) = ] [1]")
    assert g.get_operation_by_name("a_1/Assert").type == "_AssertCompare"  # unchanged


def test_graphs_run_here_keep_the_fused_ops():
    g = _asserts_graph()
    assert "_AssertCompare" in {n.op for n in gp.graph_to_proto(g, lower=False).node}
    ours = serialize.graph_to_graph_def(g)
    assert "_AssertRank" in {n.op for n in gp.graph_def_to_proto(ours, lower=False).node}
    assert "_AssertRank" in {n.op for n in ours.node}  # the JSON form is not lowered
    assert lowering.lower_private_ops(ours) is not ours
    with tf.Graph().as_default() as plain:
        tf.constant(1.0, name="c")
    plain_def = serialize.graph_to_graph_def(plain)
    assert lowering.lower_private_ops(plain_def) is plain_def


def test_graphs_from_tensorflow_are_unchanged():
    path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1", "mlp_frozen.pb")
    with open(path, "rb") as f:
        proto = graph_pb2.GraphDef.FromString(f.read())
    g = _imported(proto)
    written = g.as_graph_def()
    assert [(n.name, n.op, list(n.input)) for n in written.node] == \
        [(n.name, n.op, list(n.input)) for n in proto.node]


def test_every_private_op_is_lowered_or_says_why():
    for module in registry._LAZY_OP_MODULES:  # their ops too
        importlib.import_module(module)
    private = {name for name in registry.registered_ops() if name.startswith("_")}
    assert private == set(lowering.lowered_op_types()) | set(lowering.NOT_LOWERED) | \
        set(lowering.TF_OWN_PRIVATE)
    assert not set(lowering.lowered_op_types()) & set(lowering.NOT_LOWERED)
    assert not (set(lowering.lowered_op_types()) | set(lowering.NOT_LOWERED)) & \
        set(lowering.TF_OWN_PRIVATE)


def test_unlowerable_op_is_written_with_a_warning(caplog):
    with tf.Graph().as_default() as g:
        tf.image.non_max_suppression_padded(tf.zeros([1, 4, 4]), tf.zeros([1, 4]), 2,
                                            pad_to_max_output_size=True)
    lowering._warned.discard("_BatchedNonMaxSuppressionPadded")
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        nodes = g.as_graph_def().node
    assert "_BatchedNonMaxSuppressionPadded" in _private(nodes)
    assert "TensorFlow cannot load this graph" in caplog.text


def test_a_count_is_written_as_the_cast_and_sum_it_fuses():
    # _CountTrue is made by the remapper (runtime/optimizer.fuse_count_true) in step
    # graphs; a graph holding one is written as the Cast of bool and the Sum
    from tensorweave.framework.op_builder import apply_op
    values = np.random.RandomState(1).rand(3, 300).astype(np.float32)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [3, 300], name="x")
        apply_op("_CountTrue", [x > 0.5, tf.constant([1])], {"T": tf.float32},
                 name="count")
    written = g.as_graph_def()
    ops = {n.name: n.op for n in written.node}
    assert ops["count"] == "Sum" and ops["count/Cast"] == "Cast"
    assert set(ops.values()) <= TF_OP_TYPES
    with tf.Session(graph=_imported(written)) as sess:
        got = sess.run("count:0", {"x:0": values})
    assert got.dtype == np.float32 and got.tolist() == np.sum(values > 0.5, axis=1).tolist()
