"""MetaGraphDef as TensorFlow's protobuf (train/meta_graph.py): .meta files written by real
TensorFlow 1.x (tests/fixtures/tf1, made by make_graph_fixtures.py) imported and trained
here as in TF, and ours parsed by the protobuf classes and checked field by field."""
import json
import logging
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2, saver_pb2, types_pb2, variable_pb2

import tensorweave as tf
from tensorweave.train import meta_graph

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIXTURES, "graph_expected.npz")) as d:
        return dict(d)


def test_tf_written_resource_meta_graph_imports_and_trains_like_tf(expected):
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "linear_resource.meta"))
        assert isinstance(saver, tf.train.Saver)
        sd = saver.as_saver_def()
        assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name) == (
            "save/Const:0", "save/control_dependency:0", "save/restore_all")
        assert sd.max_to_keep == 5 and sd.version == tf.train.SaverDef.V2
        assert [v.name for v in tf.trainable_variables()] == ["W:0", "b:0"]
        assert [v.name for v in tf.global_variables()] == [
            "W:0", "b:0", "global_step:0", "W/Momentum:0", "b/Momentum:0"]
        (gs,) = tf.get_collection(tf.GraphKeys.GLOBAL_STEP)
        assert gs is tf.global_variables()[2] and gs.dtype.base_dtype == tf.int64
        (train,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        assert isinstance(train, tf.Operation)
        (loss,) = tf.get_collection(tf.GraphKeys.LOSSES)
        assert loss.name == "loss:0" and loss.shape.as_list() == []
        assert g.get_tensor_by_name("y:0").shape.as_list() == [None, 2]
        feed = {"x:0": expected["res_x"], "y_true:0": expected["res_y_true"]}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run("y:0", feed), expected["res_y0"], rtol=1e-6)
            sess.run(train, feed)
            sess.run(train, feed)
            w, b = sess.run(tf.trainable_variables())
            assert sess.run(gs) == 2
            got_loss = sess.run(loss, feed)
    np.testing.assert_allclose(w, expected["res_W2"], rtol=1e-5)
    np.testing.assert_allclose(b, expected["res_b2"], rtol=1e-5)
    np.testing.assert_allclose(got_loss, expected["res_loss2"], rtol=1e-5)


def test_tf_meta_graph_message_with_import_scope(expected):
    with open(os.path.join(FIXTURES, "linear_resource.meta"), "rb") as f:
        proto = meta_graph_pb2.MetaGraphDef.FromString(f.read())
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(proto, import_scope="net")
        assert saver.as_saver_def().restore_op_name == "net/save/restore_all"
        assert tf.get_collection("outputs")[0].name == "net/y:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run("net/y:0", {"net/x:0": expected["res_x"]})
    np.testing.assert_allclose(got, expected["res_y0"], rtol=1e-6)


def test_tf_ref_variable_meta_graph_imports_and_trains_like_tf(expected):
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "linear_ref.meta"))
        assert g.get_operation_by_name("W").type == "VarHandleOp"  # was VariableV2
        assert g.get_operation_by_name("W/read").type == "ReadVariableOp"
        assert [v.name for v in tf.trainable_variables()] == ["W:0", "b:0"]
        (train,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        gs = tf.train.get_global_step()
        feed = {"x:0": expected["ref_x"], "y_true:0": expected["ref_y_true"]}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run("y:0", feed), expected["ref_y0"], rtol=1e-6)
            sess.run(train, feed)
            sess.run(train, feed)
            assert sess.run(gs) == 2
            w, b = sess.run(tf.trainable_variables())
            got_loss = sess.run("loss:0", feed)
    np.testing.assert_allclose(w, expected["ref_W2"], rtol=1e-5)
    np.testing.assert_allclose(b, expected["ref_b2"], rtol=1e-5)
    np.testing.assert_allclose(got_loss, expected["ref_loss2"], rtol=1e-5)


@pytest.mark.parametrize("kind", ["resource", "ref"])
def test_tf_meta_graph_restores_tf_checkpoint(expected, kind):
    prefix = {"resource": "res", "ref": "ref"}[kind]
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "linear_%s.meta" % kind))
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "linear_%s_ckpt" % kind))
            got = sess.run("y:0", {"x:0": expected[prefix + "_x"]})
            assert sess.run(tf.train.get_global_step()) == 2
    np.testing.assert_allclose(got, expected[prefix + "_y2"], rtol=1e-6)


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="W")
    gs = tf.train.get_or_create_global_step()
    y = tf.matmul(x, w, name="y")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y), global_step=gs,
                                                           name="train")
    tf.add_to_collection("numbers", 7)
    tf.add_to_collection("ratios", 0.5)
    tf.add_to_collection("labels", "cat")
    return x, w, y, train


def test_our_meta_file_field_by_field(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver(max_to_keep=3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, str(tmp_path / "model"))
    proto = meta_graph_pb2.MetaGraphDef.FromString((tmp_path / "model.meta").read_bytes())
    assert proto.meta_info_def.tensorflow_version == tf.__version__
    ops = [op.name for op in proto.meta_info_def.stripped_op_list.op]
    assert "VarHandleOp" in ops and "SaveV2" in ops and ops == sorted(ops)
    sd = proto.saver_def
    assert sd.filename_tensor_name == "save/Const:0"
    assert sd.restore_op_name == "save/restore_all" and sd.max_to_keep == 3
    assert sd.version == saver_pb2.SaverDef.V2
    nodes = {n.name: n for n in proto.graph_def.node}
    handle = nodes["W"]
    assert handle.op == "VarHandleOp" and handle.attr["dtype"].type == types_pb2.DT_FLOAT
    assert [d.size for d in handle.attr["shape"].shape.dim] == [3, 2]
    assert handle.attr["shared_name"].s == b"W"
    assert nodes["y"].attr["_output_shapes"].list.shape[0].dim[0].size == -1
    cds = proto.collection_def
    assert cds["train_op"].node_list.value == ["train"]
    assert list(cds["numbers"].int64_list.value) == [7]
    assert list(cds["ratios"].float_list.value) == [0.5]
    assert list(cds["labels"].bytes_list.value) == [b"cat"]
    var_defs = [variable_pb2.VariableDef.FromString(b)
                for b in cds["variables"].bytes_list.value]
    assert [v.variable_name for v in var_defs] == ["W:0", "global_step:0"]
    w_def = var_defs[0]
    assert w_def.is_resource and w_def.trainable
    assert w_def.initializer_name in nodes and nodes[w_def.initializer_name].op == \
        "AssignVariableOp"
    assert w_def.snapshot_name.split(":")[0] in nodes
    assert w_def.initial_value_name.split(":")[0] in nodes
    assert not var_defs[1].trainable
    trainable = [variable_pb2.VariableDef.FromString(b).variable_name
                 for b in cds["trainable_variables"].bytes_list.value]
    assert trainable == ["W:0"]


def test_as_text_meta_graph_and_round_trips(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver()
        mg = saver.export_meta_graph(str(tmp_path / "a.meta"), as_text=True)
    text = (tmp_path / "a.meta").read_text()
    proto = text_format.Parse(text, meta_graph_pb2.MetaGraphDef())
    assert proto == mg.to_proto()
    assert meta_graph.MetaGraphDef.from_proto(proto) == mg
    again = tf.MetaGraphDef.FromString(proto.SerializeToString())
    assert again == mg and again.collection_def["variables"].kind == "variables"
    assert again.collection_def["variables"].value[0] == {
        "variable_name": "W:0", "initial_value_name": mg.collection_def["variables"]
        .value[0]["initial_value_name"], "initializer_name": "W/Assign",
        "snapshot_name": mg.collection_def["variables"].value[0]["snapshot_name"],
        "trainable": True, "is_resource": True}
    sd = saver.as_saver_def()
    assert tf.train.SaverDef.FromString(sd.SerializeToString()) == sd
    assert saver_pb2.SaverDef.FromString(sd.SerializeToString()).restore_op_name == \
        "save/restore_all"
    with tf.Graph().as_default():  # the text file imports and trains
        tf.train.import_meta_graph(str(tmp_path / "a.meta"))
        (train,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {"x:0": np.ones((1, 3), np.float32)})
            np.testing.assert_allclose(sess.run(tf.global_variables()[0]),
                                       np.arange(6).reshape(3, 2) - 0.1, rtol=1e-6)
            assert sess.run(tf.train.get_global_step()) == 1


def test_older_json_meta_files_still_import(tmp_path):
    with tf.Graph().as_default():
        _model()
        mg = tf.train.export_meta_graph()
    (tmp_path / "old.meta").write_text(json.dumps(mg._to_json()))
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "old.meta"))
        assert [v.name for v in tf.global_variables()] == ["W:0", "global_step:0"]
    with pytest.raises(ValueError, match="Not a tensorweave MetaGraphDef nor a TensorFlow"):
        tf.MetaGraphDef.FromString(b"\x80\x04pickle")


def test_any_list_collections_round_trip_and_loop_contexts_are_skipped(caplog):
    """A collection of protobuf `Any` messages (a SavedModel's assets) is kept: imported
    into the graph's collection as the messages, exported again as an any_list; TF's
    loop contexts are rebuilt from the graph instead (imported_contexts.py)."""
    proto = meta_graph_pb2.MetaGraphDef()
    proto.graph_def.node.add(name="c", op="NoOp")
    proto.collection_def["while_context"].bytes_list.value.append(b"\x0a\x01w")
    asset = meta_graph_pb2.AssetFileDef(filename="vocab.txt")
    asset.tensor_info.name = "c:0"
    proto.collection_def["extras"].any_list.value.add().Pack(asset)
    proto.collection_def["ops"].node_list.value.append("c")
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        mg = meta_graph.MetaGraphDef.from_proto(proto)
    assert sorted(mg.collection_def) == ["extras", "ops"]
    assert "while_context" not in caplog.text and not caplog.text
    assert meta_graph.MetaGraphDef.FromString(repr(mg)).to_proto() == mg.to_proto()
    with tf.Graph().as_default() as g:
        assert tf.train.import_meta_graph(proto) is None
        assert tf.get_collection("ops")[0].name == "c"
        (item,) = tf.get_collection("extras")
        unpacked = meta_graph_pb2.AssetFileDef()
        assert item.Unpack(unpacked) and unpacked == asset
        again = tf.train.export_meta_graph(graph=g).to_proto()
    assert again.collection_def["extras"] == proto.collection_def["extras"]


def test_export_meta_graph_of_a_graph_def_proto(graph):
    _model()
    mg = tf.train.export_meta_graph(graph_def=graph.as_graph_def(), export_scope=None,
                                    clear_devices=True)
    # the graph's ops, each reference variable's handle followed by the read TF's
    # tooling fetches (graph_def_lowering.py)
    want = []
    for op in graph.get_operations():
        want.append(op.name)
        if op.name in ("W", "global_step"):
            want.append(op.name + "/Read/ReadVariableOp")
    assert [n.name for n in mg.graph_def.node] == want
    handle = [n for n in mg.graph_def.node if n.name == "W"][0]
    assert handle.attr["dtype"] == tf.float32 and handle.attr["shape"].as_list() == [3, 2]
    assert mg.to_proto().graph_def == graph.as_graph_def()


def _first_dequeues(graph, n):
    with tf.Session(graph=graph) as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = sorted(float(sess.run(graph.get_tensor_by_name("out:0"))) for _ in range(n))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    return got


def test_tf_written_queue_runners_import_and_run():
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "queue_runner.meta"))
        (qr,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert qr.queue.name == "q"
        assert [op.name for op in qr.enqueue_ops] == ["enq_a", "enq_b"]
        assert qr.close_op.name == "q_Close" and qr.cancel_op.name == "q_Close_1"
        assert qr.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
    # the runner's threads fill the queue (which op's thread gets there first is timing)
    got = _first_dequeues(g, 6)
    assert len(got) == 6 and set(got) <= {3.0, 4.0}


def test_our_queue_runners_travel_as_tf_queue_runner_defs(tmp_path):
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, tf.float32, name="q")
        enq = q.enqueue(tf.constant(5.0), name="enq")
        tf.train.add_queue_runner(tf.train.QueueRunner(q, [enq]))
        q.dequeue(name="out")
        tf.train.export_meta_graph(str(tmp_path / "qr.meta"))
    proto = meta_graph_pb2.MetaGraphDef.FromString((tmp_path / "qr.meta").read_bytes())
    (raw,) = proto.collection_def["queue_runners"].bytes_list.value
    # TF's QueueRunnerDef fields 1-5 (queue_runner.proto), hand-decoded: names, then the
    # packed error codes (OUT_OF_RANGE = 11)
    assert raw == (b"\n\x01q" + b"\x12\x03enq" + b"\x1a\x07q_Close" + b"\"\x09q_Close_1"
                   + b"*\x01\x0b")
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(str(tmp_path / "qr.meta"))
        (qr,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert [op.name for op in qr.enqueue_ops] == ["enq"]
    assert _first_dequeues(g, 2) == [5.0, 5.0]


def test_fetching_a_reference_variable_by_name_after_import_gives_its_value(tmp_path):
    # TF1's "w:0" of a reference variable is its float32_ref tensor: fetching it gives
    # the value, also after import_meta_graph (the common `sess.run("w:0")` after a
    # restore); a resource variable's "r:0" is its handle, as in TF
    prefix = str(tmp_path / "model")
    with tf.Graph().as_default():
        tf.Variable([[1.0, 2.0]], name="w")
        tf.get_variable("v", initializer=tf.constant(3.0))
        tf.get_variable("r", initializer=tf.constant(4.0), use_resource=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, prefix)
        graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run("w:0"), [[1.0, 2.0]])
            assert sess.run("v:0") == 3.0
            assert not isinstance(sess.run("r:0"), np.ndarray)  # the handle
            w = tf.global_variables()[0]
            sess.run(w.assign([[5.0, 6.0]]))
            np.testing.assert_array_equal(sess.run(w), [[5.0, 6.0]])
    # a bare GraphDef import (no Variable objects): the snapshot read is fetched
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            sess.run("w/Assign")
            np.testing.assert_array_equal(sess.run("w:0"), [[1.0, 2.0]])


def test_fetching_a_tf_written_reference_variable_gives_its_value():
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "linear_ref.meta"))
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "linear_ref_ckpt"))
            w = sess.run("W:0")
            np.testing.assert_array_equal(w, sess.run("W/read:0"))
            assert w.dtype == np.float32 and w.ndim == 2
        meta = meta_graph_pb2.MetaGraphDef()
        with open(os.path.join(FIXTURES, "linear_ref.meta"), "rb") as f:
            meta.ParseFromString(f.read())
    with tf.Graph().as_default():
        tf.import_graph_def(meta.graph_def, name="")
        with tf.Session() as sess:
            sess.run("W/Assign")
            np.testing.assert_array_equal(sess.run("W:0"), sess.run("W/read:0"))
            assert sess.run("W:0").ndim == 2


def test_variables_in_other_collections_are_written_by_name():
    # TF writes VariableDefs only for its variable collections; elsewhere a variable is
    # its tensor's name, so a collection mixing tensors and variables survives
    with tf.Graph().as_default():
        x = tf.constant(1.0, name="x")
        v = tf.Variable(2.0, name="v")
        tf.add_to_collection("outs", x)
        tf.add_to_collection("outs", v)
        tf.add_to_collection("vs", v)
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        assert [t.name for t in tf.get_collection("outs")] == ["x:0", "v:0"]
        assert [t.name for t in tf.get_collection("vs")] == ["v:0"]
        assert [u.name for u in tf.global_variables()] == ["v:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(tf.get_collection("outs")) == [1.0, 2.0]


def _partitioned_model():
    with tf.variable_scope("outer"):
        pv = tf.get_variable("pv", [10, 2], partitioner=tf.fixed_size_partitioner(3),
                             initializer=tf.random_uniform_initializer(seed=1))
    return pv


def test_partitions_are_written_with_their_save_slice_info(tmp_path):
    # TF reads a partition's place from the VariableDef's save_slice_info_def: without
    # it, a Saver TF builds in the imported graph saves "outer/pv/part_0", ... as
    # separate keys instead of slices of "outer/pv"
    with tf.Graph().as_default():
        _partitioned_model()
        proto = tf.train.export_meta_graph().to_proto()
        scoped = tf.train.export_meta_graph(export_scope="outer").to_proto()
    defs = [variable_pb2.VariableDef.FromString(b)
            for b in proto.collection_def["variables"].bytes_list.value]
    slices = [(d.variable_name, d.save_slice_info_def.full_name,
               list(d.save_slice_info_def.full_shape), list(d.save_slice_info_def.var_offset),
               list(d.save_slice_info_def.var_shape)) for d in defs]
    assert slices == [("outer/pv/part_0:0", "outer/pv", [10, 2], [0, 0], [4, 2]),
                      ("outer/pv/part_1:0", "outer/pv", [10, 2], [4, 0], [3, 2]),
                      ("outer/pv/part_2:0", "outer/pv", [10, 2], [7, 0], [3, 2])]
    (first, *_) = [variable_pb2.VariableDef.FromString(b)
                   for b in scoped.collection_def["variables"].bytes_list.value]
    assert (first.variable_name, first.save_slice_info_def.full_name) == \
        ("pv/part_0:0", "pv")


def test_partitions_keep_their_slices_through_a_meta_graph(tmp_path):
    with tf.Graph().as_default():
        pv = _partitioned_model()
        path = str(tmp_path / "m.meta")
        tf.train.export_meta_graph(path, as_text=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(tf.convert_to_tensor(pv))
            tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.train.import_meta_graph(path, import_scope="imp")
        parts = tf.global_variables()
        assert [v._get_save_slice_info().full_name for v in parts] == ["imp/outer/pv"] * 3
        assert [v._get_save_slice_info().spec for v in parts] == \
            ["10 2 0,4:0,2", "10 2 4,3:0,2", "10 2 7,3:0,2"]
        # a Saver built here saves (and restores) the logical variable's slices
        saver = tf.train.Saver({"outer/pv": parts})
        saver.restore(sess, str(tmp_path / "m"))
        np.testing.assert_array_equal(np.concatenate(sess.run(parts)), want)
        saver.save(sess, str(tmp_path / "again"))
    assert tf.train.list_variables(str(tmp_path / "again")) == [("outer/pv", [10, 2])]


def test_tf_written_partitions_import_with_their_slices():
    # TF 2.21's Saver wrote the .meta next to its checkpoint (make_partitioned_fixture.py)
    prefix = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1", "partitioned",
                          "model.ckpt")
    emb = np.arange(14, dtype=np.float32).reshape(7, 2) / 4
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.train.import_meta_graph(prefix + ".meta").restore(sess, prefix)
        parts = [v for v in tf.global_variables() if v.op.name.startswith("emb/")]
        assert [v._get_save_slice_info().spec for v in parts] == \
            ["7 2 0,3:0,2", "7 2 3,2:0,2", "7 2 5,2:0,2"]
        np.testing.assert_array_equal(np.concatenate(sess.run(parts)), emb)
        # a Saver built from the imported collections restores the logical variables
        tf.train.Saver().restore(sess, prefix)
        again = tf.train.export_meta_graph().to_proto()
    defs = [variable_pb2.VariableDef.FromString(b)
            for b in again.collection_def["variables"].bytes_list.value]
    assert sorted({d.save_slice_info_def.full_name for d in defs}) == ["emb", "scope/cols"]
