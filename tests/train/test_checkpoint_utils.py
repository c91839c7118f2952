"""tf.train.load_checkpoint / NewCheckpointReader / list_variables / load_variable and the
Saver on both checkpoint formats: TF V2 bundles (fixtures written by real TensorFlow, and
bundles tensorweave writes with write_version=tf.train.SaverDef.V2) and tensorweave's own."""
import os
import shutil

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import tensor_bundle as tb
from tensorweave.train import checkpoint_utils

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1", "ckpt_v2")
PREFIX = os.path.join(FIXTURES, "model.ckpt-7")
SHAPES = {"empty": [0, 3], "f32": [2, 3], "f64": [4], "flags": [2, 2], "global_step": [],
          "i32": [3, 2], "i64": [3], "parted": [4, 3], "scope/scalar": [], "words": [4]}


def _expected(name):
    with np.load(os.path.join(FIXTURES, "expected.npz")) as z:
        return z[name.replace("/", "__")]


def _copy_fixture(tmp_path):
    for f in os.listdir(FIXTURES):
        if f.startswith("model.ckpt-7") or f == "checkpoint":
            shutil.copy(os.path.join(FIXTURES, f), str(tmp_path / f))
    return str(tmp_path / "model.ckpt-7")


# --- the readers on a TF-written checkpoint ------------------------------------------
def test_reader_on_tf_checkpoint():
    reader = tf.train.NewCheckpointReader(PREFIX)
    assert isinstance(reader, checkpoint_utils.CheckpointReader)
    assert reader.get_variable_to_shape_map() == SHAPES
    dtypes = reader.get_variable_to_dtype_map()
    assert dtypes["f64"] is tf.float64 and dtypes["words"] is tf.string
    assert dtypes["flags"] is tf.bool and dtypes["global_step"] is tf.int64
    assert reader.has_tensor("scope/scalar") and not reader.has_tensor("scope")
    scalar = reader.get_tensor("scope/scalar")
    assert type(scalar) is np.float32 and scalar == 3.25
    step = reader.get_tensor("global_step")
    assert type(step) is np.int64 and step == 0
    np.testing.assert_array_equal(reader.get_tensor("parted"), _expected("parted"))
    assert reader.get_tensor("empty").shape == (0, 3)
    assert list(reader.get_tensor("words")) == [bytes(x) for x in _expected("words")]
    debug = reader.debug_string()
    assert isinstance(debug, bytes)
    assert b"f64 (DT_DOUBLE) [4]\n" in debug and b"\nparted " not in debug
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
        reader.get_tensor("nope")


def test_load_list_latest_and_exists_on_tf_checkpoint():
    assert tf.train.checkpoint_exists(PREFIX)
    assert not tf.train.checkpoint_exists(PREFIX + "x")
    assert os.path.samefile(tf.train.latest_checkpoint(FIXTURES) + ".index",
                            PREFIX + ".index")
    assert tf.train.list_variables(FIXTURES) == sorted(SHAPES.items())
    np.testing.assert_array_equal(tf.train.load_variable(FIXTURES, "i32:0"), _expected("i32"))
    value = tf.train.load_variable(PREFIX, "f32")
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, _expected("f32"))
    reader = tf.train.load_checkpoint(FIXTURES)
    assert reader.has_tensor("f32")


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(str(tmp_path))
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.NewCheckpointReader(str(tmp_path / "none"))
    prefix = _copy_fixture(tmp_path)
    with open(prefix + ".data-00000-of-00001", "r+b") as f:
        f.seek(3)
        f.write(b"\x7f")
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match"):
        tf.train.load_variable(prefix, "f32")


# --- the Saver -------------------------------------------------------------------------
def _variables(zero):
    names = ["f32", "f64", "i32", "i64", "flags", "words", "scope/scalar", "empty"]
    out = {}
    for name in names:
        value = _expected(name)
        if value.dtype.kind == "S":
            value = np.array([b"?"] * value.size if zero else list(value), dtype=object)
        elif zero:
            value = np.zeros_like(value)
        out[name] = tf.Variable(value, name=name.replace("/", "_"))
    return out


def test_saver_restores_a_tf_checkpoint(tmp_path):
    prefix = _copy_fixture(tmp_path)
    with tf.Graph().as_default():
        variables = _variables(zero=True)
        saver = tf.train.Saver(variables)
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            for name, v in variables.items():
                got, want = sess.run(v), _expected(name)
                if want.dtype.kind == "S":
                    assert list(got) == [bytes(x) for x in want]
                else:
                    assert got.dtype == want.dtype
                    np.testing.assert_array_equal(got, want)


def test_saver_restore_checks_dtype_against_tf_checkpoint(tmp_path):
    prefix = _copy_fixture(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(4, np.float32), name="v")
        saver = tf.train.Saver({"f64": v})
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="expected dtype float"):
                saver.restore(sess, prefix)


@pytest.mark.parametrize("sharded", [False, True])
def test_saver_v2_writes_a_bundle_that_restores(tmp_path, sharded):
    with tf.Graph().as_default() as g:
        variables = _variables(zero=False)
        saver = tf.train.Saver(variables, write_version=tf.train.SaverDef.V2,
                               sharded=sharded)
        saves = [op for op in g.get_operations() if op.type == "SaveV2"]
        assert saves and all("_checkpoint_format" not in op.attrs for op in saves)
        assert saver.as_saver_def().version == tf.train.SaverDef.V2
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    assert tb.is_bundle(path)
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert isinstance(reader._reader, tb.BundleReader)
    assert sorted(reader.get_variable_to_shape_map()) == sorted(variables)
    with tf.Graph().as_default():
        fresh = _variables(zero=True)
        saver = tf.train.Saver(fresh)
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(fresh["f64"]), _expected("f64"))
            assert list(sess.run(fresh["words"])) == [bytes(x) for x in _expected("words")]


def test_default_saver_writes_tfs_v2_bundle(tmp_path):
    # as TF1's Saver: the V2 format with or without write_version, so TF reads it
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver()
        save = [op for op in g.get_operations() if op.type == "SaveV2"][0]
        assert "_checkpoint_format" not in save.attrs
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
    assert tb.is_bundle(path)
    reader = tf.train.NewCheckpointReader(path)
    assert reader.debug_string() == b"v (DT_FLOAT) [2]\n"
    np.testing.assert_array_equal(reader.get_tensor("v"), [1.0, 2.0])
    # write_version=V1 asks for TF1's V1 format instead (tests/ops/io/test_tensor_slice_v1.py)
    with tf.Graph().as_default() as g:
        tf.Variable([1.0, 2.0], name="v")
        tf.train.Saver(write_version=tf.train.SaverDef.V1)
        assert [op.type for op in g.get_operations() if op.name == "save/save"] == \
            ["SaveSlices"]
