"""The checkpoint file format: round trips, checksums, atomic writes, slices, readers."""
import json
import os

import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import checkpoint_format as fmt


def _entries():
    return [
        ("f32", "", np.arange(6, dtype=np.float32).reshape(2, 3), tf.float32),
        ("f16", "", np.array([1.5, -2.25], np.float16), tf.float16),
        ("f64", "", np.array(np.pi), tf.float64),
        ("i64", "", np.array([1, -(2 ** 40)], np.int64), tf.int64),
        ("u8", "", np.array([[0, 255]], np.uint8), tf.uint8),
        ("b", "", np.array([True, False, True]), tf.bool),
        ("c64", "", np.array([1 + 2j], np.complex64), tf.complex64),
        ("bf16", "", np.array([1.0, 3.0], ml_dtypes.bfloat16), tf.bfloat16),
        ("s", "", np.array([b"", b"abc", "\u00e9".encode()], dtype=object), tf.string),
        ("empty", "", np.zeros((0, 3), np.float32), tf.float32),
    ]


def test_round_trip_all_dtypes(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write(prefix, _entries())
    r = fmt.CheckpointReader(prefix)
    assert r.tensor_names() == sorted(e[0] for e in _entries())
    for name, _, arr, dt in _entries():
        got = r.read(name)
        assert r.dtype(name) is dt
        assert r.shape(name) == list(arr.shape)
        assert got.shape == arr.shape
        if dt is tf.string:
            assert list(got) == list(arr)
        else:
            assert got.dtype == np.dtype(dt.as_numpy_dtype)
            np.testing.assert_array_equal(got, arr)
    assert sorted(os.listdir(tmp_path)) == ["ck.data-00000-of-00001", "ck.index"]


def test_index_is_documented_json(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write(prefix, [("W", "", np.ones((2, 2), np.float32), tf.float32)])
    doc = json.loads((tmp_path / "ck.index").read_bytes())
    assert doc["format"] == "tensorweave.checkpoint" and doc["version"] == 1
    entry = doc["tensors"]["W"]
    assert entry["dtype"] == "float32" and entry["shape"] == [2, 2]
    (piece,) = entry["slices"]
    assert piece["slice"] == "" and piece["offset"] == 0 and piece["length"] == 16
    data = (tmp_path / "ck.data-00000-of-00001").read_bytes()
    assert data == np.ones(4, "<f4").tobytes()


def test_missing_checkpoint(tmp_path):
    with pytest.raises(tf.errors.NotFoundError,
                       match="Unsuccessful TensorSliceReader constructor: Failed to find any "
                             "matching files for .*nothing"):
        fmt.CheckpointReader(str(tmp_path / "nothing"))


def test_missing_key_lists_close_matches(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write(prefix, [("layer1/weights", "", np.ones(2, np.float32), tf.float32)])
    with pytest.raises(tf.errors.NotFoundError,
                       match="Key layer1/weight not found in checkpoint.*layer1/weights"):
        fmt.CheckpointReader(prefix).read("layer1/weight")


def test_corrupted_data_names_tensor(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write(prefix, [("a", "", np.arange(4, dtype=np.int32), tf.int32),
                       ("b", "", np.arange(4, dtype=np.int32), tf.int32)])
    path = tmp_path / "ck.data-00000-of-00001"
    data = bytearray(path.read_bytes())
    data[17] ^= 0xFF  # inside 'b' (bytes 16..31)
    path.write_bytes(bytes(data))
    r = fmt.CheckpointReader(prefix)
    np.testing.assert_array_equal(r.read("a"), np.arange(4))
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match.*tensor 'b'"):
        r.read("b")


def test_truncated_data_file(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write(prefix, [("a", "", np.arange(4, dtype=np.int32), tf.int32)])
    path = tmp_path / "ck.data-00000-of-00001"
    path.write_bytes(path.read_bytes()[:10])
    with pytest.raises(tf.errors.DataLossError, match="tensor 'a'"):
        fmt.CheckpointReader(prefix).read("a")


def test_garbage_index(tmp_path):
    (tmp_path / "ck.index").write_bytes(b"\x00\x01 not json")
    with pytest.raises(tf.errors.DataLossError, match="not a tensorweave checkpoint"):
        fmt.CheckpointReader(str(tmp_path / "ck"))


def test_crash_during_write_keeps_old_checkpoint(tmp_path, monkeypatch):
    prefix = str(tmp_path / "ck")
    fmt.write(prefix, [("a", "", np.array([1.0], np.float32), tf.float32)])
    real_replace = os.replace

    def crash(src, dst):
        if dst.endswith(".index"):
            raise OSError("simulated crash")
        real_replace(src, dst)
    monkeypatch.setattr(fmt.os, "replace", crash)
    other = str(tmp_path / "ck2")
    with pytest.raises(OSError, match="simulated crash"):
        fmt.write(other, [("a", "", np.array([2.0], np.float32), tf.float32)])
    monkeypatch.setattr(fmt.os, "replace", real_replace)
    assert not fmt.checkpoint_exists(other)
    assert not [f for f in os.listdir(tmp_path) if "tempstate" in f]
    np.testing.assert_array_equal(fmt.CheckpointReader(prefix).read("a"), [1.0])


def test_overwrite_then_partial_rename_is_detected(tmp_path, monkeypatch):
    prefix = str(tmp_path / "ck")
    fmt.write(prefix, [("a", "", np.array([1.0], np.float32), tf.float32)])
    real_replace = os.replace

    def crash(src, dst):
        if dst.endswith(".index"):
            raise OSError("simulated crash")
        real_replace(src, dst)
    monkeypatch.setattr(fmt.os, "replace", crash)
    with pytest.raises(OSError):
        fmt.write(prefix, [("a", "", np.array([1.0, 2.0], np.float32), tf.float32)])
    monkeypatch.setattr(fmt.os, "replace", real_replace)
    with pytest.raises(tf.errors.DataLossError, match="partial or overwritten"):
        fmt.CheckpointReader(prefix).read("a")


def test_slices_save_and_assemble(tmp_path):
    prefix = str(tmp_path / "ck")
    full = np.arange(20, dtype=np.float32).reshape(4, 5)
    fmt.write(prefix, [("p", "4 5 0,2:-", full[:2], tf.float32),
                       ("p", "4 5 2,2:-", full[2:], tf.float32)])
    r = fmt.CheckpointReader(prefix)
    assert r.shape("p") == [4, 5]
    np.testing.assert_array_equal(r.read("p"), full)
    np.testing.assert_array_equal(r.read("p", "4 5 1,2:1,3"), full[1:3, 1:4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape"):
        r.read("p", "4 6 0,1:-")


def test_incomplete_slices_not_found(tmp_path):
    prefix = str(tmp_path / "ck")
    full = np.arange(20, dtype=np.float32).reshape(4, 5)
    fmt.write(prefix, [("p", "4 5 0,2:-", full[:2], tf.float32)])
    with pytest.raises(tf.errors.NotFoundError, match="Can't find the requested slice"):
        fmt.CheckpointReader(prefix).read("p")


def test_duplicate_and_bad_specs(tmp_path):
    prefix = str(tmp_path / "ck")
    x = np.ones(2, np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="saved twice"):
        fmt.write(prefix, [("a", "", x, tf.float32), ("a", "", x, tf.float32)])
    with pytest.raises(ValueError, match="Malformed shape_and_slice"):
        fmt.parse_shape_and_slice("4 5 0:1")
    assert not fmt.checkpoint_exists(prefix)


def test_missing_parent_directory(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="does not exist"):
        fmt.write(str(tmp_path / "no" / "ck"), [("a", "", np.ones(1), tf.float64)])


def test_merge(tmp_path):
    a, b, dest = (str(tmp_path / n) for n in ("a", "b", "dest"))
    fmt.write(a, [("x", "", np.array([1, 2], np.int32), tf.int32)])
    fmt.write(b, [("y", "", np.array([b"q"], dtype=object), tf.string)])
    fmt.merge([a, b], dest)
    r = fmt.CheckpointReader(dest)
    assert r.tensor_names() == ["x", "y"]
    np.testing.assert_array_equal(r.read("x"), [1, 2])
    assert list(r.read("y")) == [b"q"]
    assert sorted(os.listdir(tmp_path)) == ["dest.data-00000-of-00002",
                                            "dest.data-00001-of-00002", "dest.index"]


def test_saving_twice_to_a_bare_relative_prefix_leaves_only_tf_files(tmp_path, monkeypatch):
    # siamese_tf_mnist saves to 'model' (no directory) every N steps: the backup of the
    # previous checkpoint was linked under a garbled name and never removed.
    monkeypatch.chdir(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver.save(sess, "model")
            sess.run(v.assign([3.0, 4.0]))
            saver.save(sess, "model")
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.data-00000-of-00001", "model.index", "model.meta"]
    np.testing.assert_array_equal(tf.train.load_variable("model", "w"), [3.0, 4.0])
