"""TF1's V1 checkpoint format (ops/io/tensor_slice_v1.py): reading checkpoints written by
real TensorFlow (tests/fixtures/tf1/ckpt_v1, see make_v1_checkpoint_fixture.py), and
`Saver(write_version=V1)` with the SaveSlices / ShardedFilespec ops writing them."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import tensor_slice_v1

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1", "ckpt_v1")
W0 = np.array([[1.0, -2.0], [0.5, 4.0]], np.float32)
# the values make_v1_checkpoint_fixture.py saved
EXPECTED = {
    "w": W0 / 8,  # 3 steps of w -= 0.25 * 2w
    "global_step": np.int64(3),
    "words": np.array([b"alpha", b"", "été".encode()], dtype=object),
    "half": np.array([1.5, -65504.0], np.float16),
    "c": np.array([1 + 2j, -0.5j], np.complex64),
    "flags": np.array([True, False, True]),
    "emb": np.arange(10, dtype=np.float32).reshape(5, 2) / 4,
}
SHAPES = {k: list(np.shape(v)) for k, v in EXPECTED.items()}


def _check(got, name):
    want = EXPECTED[name]
    if isinstance(want, np.ndarray) and want.dtype == object:
        assert list(got) == list(want)
    else:
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("where", ["", "sharded"])
def test_reads_tf_written_v1_checkpoints(where):
    ckpt = tf.train.latest_checkpoint(os.path.join(FIXTURES, where))
    assert ckpt.endswith("model.ckpt-3" if not where else "model.ckpt-3-?????-of-00001")
    assert tf.train.checkpoint_exists(ckpt)
    assert dict(tf.train.list_variables(ckpt)) == SHAPES
    reader = tf.train.load_checkpoint(ckpt)
    assert reader.get_variable_to_dtype_map()["words"] == tf.string
    for name in EXPECTED:
        _check(reader.get_tensor(name), name)


def test_saver_restores_tf_v1_checkpoint_into_other_partitions():
    with tf.Graph().as_default():
        w = tf.Variable(tf.zeros([2, 2]), name="w")
        emb = tf.get_variable("emb", [5, 2], partitioner=tf.fixed_size_partitioner(3))
        words = tf.Variable(["", "", ""], name="words")
        with tf.Session() as sess:
            tf.train.Saver([w, emb, words]).restore(sess, os.path.join(FIXTURES, "model.ckpt-3"))
            _check(sess.run(w), "w")
            _check(sess.run(emb.as_tensor()), "emb")
            _check(sess.run(words), "words")


def test_import_tf_v1_meta_graph_restore_train_and_save(tmp_path):
    # TF's V1 meta graph saves with its SaveSlices op; training continues from the
    # checkpoint, and the graph's own save writes a V1 checkpoint again
    ckpt = os.path.join(FIXTURES, "model.ckpt-3")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(ckpt + ".meta")
        assert saver.saver_def.version == tf.train.SaverDef.V1
        with tf.Session() as sess:
            saver.restore(sess, ckpt)
            sess.run(tf.get_collection("train_op")[0])
            np.testing.assert_allclose(sess.run("w:0"), W0 / 16)
            assert sess.run(tf.train.get_global_step()) == 4
            path = saver.save(sess, str(tmp_path / "again"), write_meta_graph=False)
    reader = tensor_slice_v1.V1Reader(path)
    np.testing.assert_allclose(reader.read("w"), W0 / 16)
    _check(reader.read("emb"), "emb")


def test_init_from_v1_checkpoint():
    with tf.Graph().as_default():
        x = tf.get_variable("x", [5, 2], partitioner=tf.fixed_size_partitioner(2))
        tf.train.init_from_checkpoint(FIXTURES, {"emb": "x"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            _check(sess.run(x.as_tensor()), "emb")


def test_a_v2_index_file_reads_as_a_v1_checkpoint_without_tensors(tmp_path):
    # as TF: the V1 reader takes any SSTable; only the tensors its meta lists are read
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    assert tensor_slice_v1.V1Reader(path + ".index").tensor_names() == []


def _v1_values():
    out = dict(EXPECTED)
    del out["emb"], out["global_step"]
    return out


@pytest.mark.parametrize("sharded", [False, True])
def test_saver_v1_round_trip_and_files(tmp_path, sharded):
    with tf.Graph().as_default():
        variables = {k: tf.Variable(v, name=k) for k, v in _v1_values().items()}
        emb = tf.get_variable("emb", initializer=tf.constant(EXPECTED["emb"]),
                              partitioner=tf.fixed_size_partitioner(2))
        saver = tf.train.Saver(write_version=tf.train.SaverDef.V1, sharded=sharded,
                               max_to_keep=1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = saver.save(sess, str(tmp_path / "m"), global_step=1)
            path = saver.save(sess, str(tmp_path / "m"), global_step=2)
            # TF's names: the prefix itself, or the shards' pattern
            assert path == str(tmp_path / ("m-2-?????-of-00001" if sharded else "m-2"))
            files = sorted(os.listdir(tmp_path))
            assert files == ["checkpoint", "m-2-00000-of-00001" if sharded else "m-2",
                             "m-2.meta"]
            assert not tf.train.checkpoint_exists(first)  # max_to_keep removed it
            sess.run([v.assign(tf.zeros_like(v)) for k, v in variables.items()
                      if k != "words"])
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            for name, v in variables.items():
                _check(sess.run(v), name)
            _check(sess.run(emb.as_tensor()), "emb")
    reader = tensor_slice_v1.V1Reader(path)
    assert sorted(reader.tensor_names()) == sorted(list(_v1_values()) + ["emb"])


def test_save_slices_and_sharded_filespec_ops(graph, sess, tmp_path):
    from tensorweave.ops.io import io_ops
    path = str(tmp_path / "slices")
    part = tf.constant([[1.0, 2.0]])
    save = io_ops.save_slices(path, tf.constant(["p", "q"]), tf.constant(["3 2 1,1:-", ""]),
                              [part, tf.constant([7, 8], tf.int64)])
    sess.run(save)
    reader = tensor_slice_v1.V1Reader(path)
    assert reader.shape("p") == [3, 2] and reader.dtype("q") == tf.int64
    np.testing.assert_array_equal(reader.read("p", "3 2 1,1:-"), [[1.0, 2.0]])
    np.testing.assert_array_equal(reader.read("q"), [7, 8])
    with pytest.raises(tf.errors.NotFoundError, match="Can't find the requested slice"):
        reader.read("p")  # rows 0 and 2 were never saved
    assert sess.run(io_ops.sharded_filespec("ckpt", 3)) == b"ckpt-?????-of-00003"


@pytest.mark.parametrize("dtype, error", [(tf.uint32, tf.errors.InvalidArgumentError),
                                          (tf.bfloat16, tf.errors.UnimplementedError)])
def test_saver_v1_refuses_dtypes_tf_cannot_save(tmp_path, dtype, error):
    with tf.Graph().as_default():
        v = tf.Variable(tf.cast(tf.constant([1.0, 2.0]), dtype), name="v")
        saver = tf.train.Saver(write_version=tf.train.SaverDef.V1)
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(error):
                saver.save(sess, str(tmp_path / "m"))


def test_remove_v1_checkpoint(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(write_version=tf.train.SaverDef.V1, sharded=True)
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
    tf.train.remove_checkpoint(path, tf.train.SaverDef.V1)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint"]
