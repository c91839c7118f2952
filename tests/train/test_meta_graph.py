"""MetaGraphDef export/import (train/meta_graph.py) and its use by the Saver."""
import logging

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import meta_graph


def _build_model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="W")
    b = tf.Variable([0.5, -1.0], name="b")
    gs = tf.Variable(0, dtype=tf.int64, name="global_step", trainable=False,
                     collections=[tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.GLOBAL_STEP])
    y = tf.add(tf.matmul(x, w), b, name="y")
    train_op = tf.group(b.assign_add([1.0, 1.0]), gs.assign_add(1), name="train")
    tf.add_to_collection(tf.GraphKeys.TRAIN_OP, train_op)
    tf.add_to_collection("outputs", y)
    tf.add_to_collection("numbers", 7)
    tf.add_to_collection("labels", "cat")
    return x, y, train_op


def test_export_import_restore_and_run(tmp_path):
    feed = np.array([[1.0, 2.0, 3.0]], np.float32)
    with tf.Graph().as_default():
        x, y, train_op = _build_model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            want = sess.run(y, {x: feed})
            path = saver.save(sess, str(tmp_path / "model"), global_step=1)
    from tensorboard.compat.proto import meta_graph_pb2
    on_disk = meta_graph_pb2.MetaGraphDef.FromString((tmp_path / "model-1.meta").read_bytes())
    assert on_disk.saver_def.restore_op_name == "save/restore_all"
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path + ".meta")
        assert isinstance(saver, tf.train.Saver)
        assert sorted(v.name for v in tf.global_variables()) == ["W:0", "b:0", "global_step:0"]
        assert sorted(v.name for v in tf.trainable_variables()) == ["W:0", "b:0"]
        gs = tf.get_collection(tf.GraphKeys.GLOBAL_STEP)[0]
        assert gs is [v for v in tf.global_variables() if v.name == "global_step:0"][0]
        (train,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        (y2,) = tf.get_collection("outputs")
        assert tf.get_collection("numbers") == [7]
        assert tf.get_collection("labels") == [b"cat"]
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(y2, {"x:0": feed}), want)
            assert sess.run(gs) == 1
            sess.run(train)
            assert sess.run(gs) == 2
        assert g.get_tensor_by_name("y:0") is y2


def test_import_scope(tmp_path):
    with tf.Graph().as_default():
        x, y, _ = _build_model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(y, {x: np.ones((2, 3), np.float32)})
            path = saver.save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path + ".meta", import_scope="net")
        assert saver.as_saver_def().restore_op_name == "net/save/restore_all"
        assert sorted(v.name for v in tf.global_variables()) == [
            "net/W:0", "net/b:0", "net/global_step:0"]
        with tf.Session() as sess:
            saver.restore(sess, path)
            got = sess.run("net/y:0", {"net/x:0": np.ones((2, 3), np.float32)})
            np.testing.assert_array_equal(got, want)
        assert g.get_collection("outputs")[0].name == "net/y:0"


def test_meta_graph_def_round_trip_and_text(tmp_path):
    with tf.Graph().as_default():
        _build_model()
        saver = tf.train.Saver()
        mg = saver.export_meta_graph(str(tmp_path / "a.meta"), as_text=True)
    text = (tmp_path / "a.meta").read_text()
    assert text.startswith("meta_info_def {\n")  # TF's protobuf text format
    again = tf.MetaGraphDef.FromString(text.encode())
    assert again == mg
    assert again.saver_def == saver.as_saver_def()
    assert "SaveV2" in again.meta_info_def.stripped_op_list
    assert set(again.collection_def) >= {"variables", "trainable_variables", "train_op",
                                         "global_step", "outputs", "numbers", "labels"}
    assert again.collection_def["variables"].kind == "variables"
    assert again.collection_def["variables"].value[0]["variable_name"] == "W:0"
    with pytest.raises(ValueError, match="Not a tensorweave MetaGraphDef"):
        tf.MetaGraphDef.FromString(b"\x80\x04pickle")


def test_unserializable_collection_is_skipped_with_warning(graph, caplog):
    tf.Variable(1.0, name="v")
    graph.add_to_collection("weird", object())
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        mg = tf.train.export_meta_graph()
    assert "weird" not in mg.collection_def
    assert "Issue encountered when serializing weird" in caplog.text
    assert "variables" in mg.collection_def


def test_collection_list_clear_devices_and_strip_defaults(graph):
    with tf.device("/cpu:0"):
        tf.Variable(1.0, name="v")
    tf.add_to_collection("numbers", 3)
    mg = tf.train.export_meta_graph(collection_list=["numbers"], clear_devices=True,
                                    strip_default_attrs=True)
    assert list(mg.collection_def) == ["numbers"]
    assert all(n.device == "" for n in mg.graph_def.node)
    handle = [n for n in mg.graph_def.node if n.op == "VarHandleOp"][0]
    assert "container" not in handle.attr and "shape" in handle.attr
    with tf.Graph().as_default():
        tf.train.import_meta_graph(mg)
        assert tf.get_default_graph().get_operation_by_name("v").get_attr("container") == b""


def test_export_scope(graph):
    with tf.name_scope("tower"):
        a = tf.constant(2.0, name="a")
        tf.multiply(a, 3.0, name="out")
    tf.constant(1.0, name="outside")
    mg = tf.train.export_meta_graph(export_scope="tower")
    names = {n.name for n in mg.graph_def.node}
    assert len(names) == 3 and {"a", "out"} <= names and "outside" not in names
    assert all(not n.name.startswith("tower/") for n in mg.graph_def.node)
    with tf.Graph().as_default():
        tf.train.import_meta_graph(mg, import_scope="copy")
        with tf.Session() as sess:
            assert sess.run("copy/out:0") == 6.0


def test_import_without_saver(graph):
    tf.constant(1.0, name="c")
    mg = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(mg) is None
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        mg = tf.train.export_meta_graph()
    assert mg.saver_def is None
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(mg)
        assert isinstance(saver, tf.train.Saver)
        assert saver.as_saver_def().restore_op_name == "save/restore_all"


def test_read_meta_graph_file_missing(tmp_path):
    with pytest.raises(IOError, match="does not exist"):
        tf.train.import_meta_graph(str(tmp_path / "none.meta"))
    with pytest.raises(NotImplementedError, match="save_debug_info"):
        meta_graph.export_meta_graph(save_debug_info=True)


def test_clear_extraneous_savers(graph):
    tf.Variable(1.0, name="v")
    tf.train.Saver()
    second = tf.train.Saver()
    mg = second.export_meta_graph(clear_extraneous_savers=True)
    tops = {n.name.split("/")[0] for n in mg.graph_def.node}
    assert "save_1" in tops and "save" not in tops
    assert mg.saver_def.restore_op_name == "save_1/restore_all"


def test_import_meta_graph_returns_only_the_saver_with_return_elements(tmp_path):
    # TF drops the elements: a program restores with what it gets back
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        out = tf.identity(v * 2.0, name="out")
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path + ".meta", return_elements=["out:0"])
        assert isinstance(saver, tf.train.Saver)
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert sess.run(g.get_tensor_by_name("out:0")) == 6.0
    assert out.name == "out:0"


def test_saver_def_parse_from_string_reads_tf_bytes():
    # bytes of TF's tf.train.SaverDef(...).SerializeToString(), recorded from TF 2.21
    data = (b"\n\x0csave/Const:0\x12\x0fsave/Identity:0\x1a\x10save/restore_all \x03(\x01"
            b"5\x00\x00 @8\x02")
    saver_def = tf.train.SaverDef()
    assert saver_def.ParseFromString(data) == len(data)
    assert (saver_def.filename_tensor_name, saver_def.save_tensor_name,
            saver_def.restore_op_name, saver_def.max_to_keep, saver_def.sharded,
            saver_def.keep_checkpoint_every_n_hours, saver_def.version) == (
        "save/Const:0", "save/Identity:0", "save/restore_all", 3, True, 2.5, 2)
    assert saver_def.SerializeToString() == data


# --- import_scope: made unique as TF does; each import holds its own variables -----------
def _two_value_checkpoint(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        tf.add_to_collection("doubled", v * 2.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            return saver.save(sess, str(tmp_path / "m"))


def test_import_scope_taken_is_made_unique_and_collections_follow(tmp_path):
    # TF 2.21 (tf.compat.v1, v2 behaviour disabled): a taken "a" imports as "a_1", and the
    # variables and collections name the renamed nodes
    path = _two_value_checkpoint(tmp_path)
    with tf.Graph().as_default():
        with tf.name_scope("a"):
            tf.constant(0.0, name="c")
        saver = tf.train.import_meta_graph(path + ".meta", import_scope="a")
        assert [v.name for v in tf.global_variables()] == ["a_1/v:0"]
        assert [t.name for t in tf.get_collection("doubled")] == ["a_1/mul:0"]
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(tf.get_collection("doubled")[0]), [2.0, 4.0])


def test_importing_twice_under_one_scope_gives_two_models(tmp_path):
    path = _two_value_checkpoint(tmp_path)
    with tf.Graph().as_default():
        first = tf.train.import_meta_graph(path + ".meta", import_scope="m")
        second = tf.train.import_meta_graph(path + ".meta", import_scope="m")
        assert sorted(v.name for v in tf.global_variables()) == ["m/v:0", "m_1/v:0"]
        with tf.Session() as sess:
            second.restore(sess, path)
            # as TF1's reference variables: restoring one copy leaves the other alone
            assert list(sess.run(tf.report_uninitialized_variables())) == [b"m/v"]
            first.restore(sess, path)
            m, m_1 = tf.global_variables()
            sess.run(m.assign([5.0, 5.0]))
            np.testing.assert_array_equal(sess.run(m_1), [1.0, 2.0])


def test_import_under_an_outer_name_scope(tmp_path):
    path = _two_value_checkpoint(tmp_path)
    with tf.Graph().as_default():
        with tf.name_scope("outer"):
            saver = tf.train.import_meta_graph(path + ".meta", import_scope="a")
        assert [v.name for v in tf.global_variables()] == ["outer/a/v:0"]
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(tf.get_collection("doubled")[0]), [2.0, 4.0])


def test_export_scope_variables_import_twice_as_separate_variables():
    with tf.Graph().as_default():
        with tf.variable_scope("net"):
            tf.get_variable("v", initializer=tf.constant([1.0, 2.0]))
        mg = tf.train.export_meta_graph(export_scope="net")
    with tf.Graph().as_default():
        tf.train.import_meta_graph(mg, import_scope="m1")
        tf.train.import_meta_graph(mg, import_scope="m2")
        m1, m2 = tf.global_variables()
        with tf.Session() as sess:
            sess.run(m1.initializer)
            assert list(sess.run(tf.report_uninitialized_variables())) == [b"m2/v"]


def test_importing_twice_without_scope_names_the_first_duplicate_by_name():
    # TF walks a Saver's variables sorted by name: "b" is reported before "w"
    with tf.Graph().as_default():
        tf.Variable(1.0, name="w")
        tf.Variable(2.0, name="b")
        tf.train.Saver()
        mg = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(mg)
        with pytest.raises(ValueError, match="At least two variables have the same name: b$"):
            tf.train.import_meta_graph(mg)


def test_collection_defs_read_as_tf_protobuf_messages(graph):
    # TF 2.21 export_meta_graph: what each collection's oneof "kind" holds
    v = tf.Variable(1.0, name="v")
    tf.add_to_collection("outs", v * 2.0)
    tf.add_to_collection("mystr", "hello")
    tf.add_to_collection("myint", 3)
    mg = tf.train.export_meta_graph()
    kinds = {k: cd.WhichOneof("kind") for k, cd in mg.collection_def.items()}
    assert kinds == {"variables": "bytes_list", "trainable_variables": "bytes_list",
                     "outs": "node_list", "mystr": "bytes_list", "myint": "int64_list"}
    assert list(mg.collection_def["outs"].node_list.value) == ["mul:0"]
    assert list(mg.collection_def["myint"].int64_list.value) == [3]
    assert mg.collection_def["outs"].HasField("node_list")
    assert not mg.collection_def["outs"].HasField("bytes_list")
    from tensorboard.compat.proto import variable_pb2
    vd = variable_pb2.VariableDef.FromString(mg.collection_def["variables"].bytes_list.value[0])
    assert (vd.variable_name, vd.initializer_name) == ("v:0", "v/Assign")
