"""TF's V2 checkpoint format (ops/io/tensor_bundle.py, ops/io/sstable.py), checked
against checkpoints written by real TensorFlow (tests/fixtures/tf1/ckpt_v2)."""
import os
import shutil
import struct

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import checkpoint_format as fmt
from tensorweave.ops.io import io_ops, sstable
from tensorweave.ops.io import tensor_bundle as tb

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1", "ckpt_v2")
PREFIX = os.path.join(FIXTURES, "model.ckpt-7")
DTYPES = {"f32": tf.float32, "f64": tf.float64, "i32": tf.int32, "i64": tf.int64,
          "flags": tf.bool, "words": tf.string, "scope/scalar": tf.float32,
          "empty": tf.float32, "parted": tf.float32, "global_step": tf.int64}
# What TF's CheckpointReader.debug_string() returns for the fixture.
TF_DEBUG_STRING = (
    b"\x00parted\x00\x01\x01\x02\x80\x82\x80\x83 (DT_FLOAT) [2,3]\n"
    b"\x00parted\x00\x01\x01\x02\x82\x82\x80\x83 (DT_FLOAT) [2,3]\n"
    b"empty (DT_FLOAT) [0,3]\nf32 (DT_FLOAT) [2,3]\nf64 (DT_DOUBLE) [4]\n"
    b"flags (DT_BOOL) [2,2]\nglobal_step (DT_INT64) []\ni32 (DT_INT32) [3,2]\n"
    b"i64 (DT_INT64) [3]\nscope/scalar (DT_FLOAT) []\nwords (DT_STRING) [4]\n")


def _expected():
    with np.load(os.path.join(FIXTURES, "expected.npz")) as z:
        return {k.replace("__", "/"): z[k] for k in z.files}


def _entries(reader):
    """(name, spec, value, dtype) of every tensor of `reader`, "parted" in TF's slices."""
    out = []
    for name in reader.tensor_names():
        value = reader.read(name)
        if name == "parted":
            out += [(name, "4 3 0,2:0,3", value[:2], tf.float32),
                    (name, "4 3 2,2:0,3", value[2:], tf.float32)]
        else:
            out.append((name, "", value, reader.dtype(name)))
    return out


def _copy_fixture(tmp_path):
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(PREFIX + suffix, str(tmp_path / ("model" + suffix)))
    return str(tmp_path / "model")


def _flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x01]))


# --- reading what TF wrote -----------------------------------------------------------
def test_reads_every_tensor_written_by_tf():
    assert tb.is_bundle(PREFIX)
    reader = tb.open_checkpoint(PREFIX)
    assert isinstance(reader, tb.BundleReader)
    assert reader.tensor_names() == sorted(DTYPES)
    expected = _expected()
    for name, dt in DTYPES.items():
        assert reader.dtype(name) is dt
        value = reader.read(name)
        want = expected[name]
        assert reader.shape(name) == list(want.shape)
        assert isinstance(value, np.ndarray) and value.shape == want.shape
        if dt is tf.string:
            assert value.dtype == object
            assert list(value) == [bytes(x) for x in want]
            assert all(type(x) is bytes for x in value)
        else:
            assert value.dtype == want.dtype
            np.testing.assert_array_equal(value, want)


def test_maps_hide_slice_keys_and_slices_assemble():
    reader = tb.open_checkpoint(PREFIX)
    assert reader.variable_to_shape_map()["parted"] == [4, 3]
    assert not any(k.startswith("\x00") for k in reader.variable_to_shape_map())
    assert reader.variable_to_dtype_map()["words"] is tf.string
    parted = _expected()["parted"]
    np.testing.assert_array_equal(reader.read("parted", "4 3 1,2:0,2"), parted[1:3, :2])
    np.testing.assert_array_equal(reader.read("parted", "4 3 2,2:-"), parted[2:])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape"):
        reader.read("parted", "5 3 0,1:-")


def test_debug_string_is_tfs():
    assert tb.open_checkpoint(PREFIX).debug_string() == TF_DEBUG_STRING


def test_missing_tensor_and_missing_checkpoint(tmp_path):
    reader = tb.open_checkpoint(PREFIX)
    with pytest.raises(tf.errors.NotFoundError, match="Key f33 not found.*'f32'"):
        reader.read("f33")
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tb.BundleReader(str(tmp_path / "none"))


def test_slice_keys_are_tfs():
    assert tb.slice_key("parted", [(0, 2), (0, 3)]) == \
        b"\x00parted\x00\x01\x01\x02\x80\x82\x80\x83"
    # A 0 byte of the name is escaped; the whole extent is length -1.
    assert tb.slice_key("a\x00b\u00e9", [(0, -1)]) == \
        b"\x00a\x00\xffb\xc3\xa9\x00\x01\x01\x01\x80\x7f"
    # Keys TF wrote for SaveV2 specs "1056768 1048576,8192" and "3 70 -:64,6".
    assert tb.slice_key("v", [(2 ** 20, 8192)]) == \
        b"\x00v\x00\x01\x01\x01\xf0\x10\x00\x00\xe0 \x00"
    assert tb.slice_key("w", [(0, -1), (64, 6)]) == b"\x00w\x00\x01\x01\x02\x80\x7f\xc0@\x86"


def test_signed_ordered_code_sorts_like_the_numbers():
    nums = [-2 ** 63, -2 ** 40, -8193, -8192, -65, -64, -1, 0, 1, 63, 64, 8191, 8192,
            2 ** 20, 2 ** 40, 2 ** 55, 2 ** 62, 2 ** 63 - 1]
    codes = [tb._signed_num_increasing(n) for n in nums]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    assert [len(c) for c in codes[6:9]] == [1, 1, 1]
    assert tb._signed_num_increasing(64) == b"\xc0\x40"
    assert tb._signed_num_increasing(-65) == b"\x3f\xbf"


# --- writing ---------------------------------------------------------------------------
def test_written_bundle_is_byte_identical_to_tfs(tmp_path):
    out = str(tmp_path / "ours")
    tb.write(out, _entries(tb.open_checkpoint(PREFIX)))
    for suffix in (".index", ".data-00000-of-00001"):
        with open(PREFIX + suffix, "rb") as a, open(out + suffix, "rb") as b:
            assert a.read() == b.read(), suffix
    assert not [p for p in os.listdir(str(tmp_path)) if "tempstate" in p]


def test_write_round_trip_and_errors(tmp_path):
    prefix = str(tmp_path / "rt")
    values = [("a/b", "", np.arange(6, dtype=np.int16).reshape(3, 2), tf.int16),
              ("c", "", np.array([1 + 2j], np.complex64), tf.complex64),
              ("s", "", np.array([[b"x", b""], [b"\x00" * 200, b"yz"]], dtype=object),
               tf.string),
              ("e", "", np.array([], dtype=object), tf.string),
              ("h", "", np.float16(0.5) * np.ones([2]), tf.float16)]
    tb.write(prefix, values)
    reader = tb.BundleReader(prefix)
    for name, _, value, dt in values:
        got = reader.read(name)
        assert reader.dtype(name) is dt and got.shape == np.shape(value)
        assert list(got.reshape(-1)) == list(np.asarray(value).reshape(-1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="saved twice"):
        tb.write(prefix, [values[0], values[0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match its slice"):
        tb.write(prefix, [("x", "4 2 0,2:-", np.zeros([3, 2], np.float32), tf.float32)])
    with pytest.raises(tf.errors.NotFoundError, match="parent directory"):
        tb.write(str(tmp_path / "no" / "x"), values)


def test_merge_joins_slices_of_one_tensor(tmp_path):
    full = np.arange(8, dtype=np.float64).reshape(4, 2)
    a, b = str(tmp_path / "a" / "p"), str(tmp_path / "b" / "p")
    os.makedirs(os.path.dirname(a))
    os.makedirs(os.path.dirname(b))
    tb.write(a, [("v", "4 2 0,1:-", full[:1], tf.float64), ("x", "", np.int32(5), tf.int32)])
    tb.write(b, [("v", "4 2 1,3:-", full[1:], tf.float64)])
    dest = str(tmp_path / "merged")
    tb.merge([a, b], dest)
    reader = tb.open_checkpoint(dest)
    np.testing.assert_array_equal(reader.read("v"), full)
    assert reader.read("x") == 5
    assert os.path.isfile(dest + ".data-00001-of-00002")
    assert not os.path.isdir(os.path.dirname(a))


def test_save_v2_writes_a_bundle_unless_the_attr_asks_for_tensorweaves_format(
        tmp_path, graph, sess):
    ours, bundle, named = (str(tmp_path / n) for n in ("ours", "bundle", "named"))
    v = tf.constant([[1.0, 2.0]])
    for prefix, kind in ((ours, tb.OWN_FORMAT), (bundle, None), (named, tb.BUNDLE_FORMAT)):
        sess.run(io_ops.save_v2(prefix, ["v"], [""], [v], checkpoint_format=kind))
    assert graph.get_operations()[-1].get_attr("_checkpoint_format") == b"tensor_bundle"
    assert tb.is_bundle(bundle) and tb.is_bundle(named) and not tb.is_bundle(ours)
    for prefix in (ours, bundle, named):
        got = sess.run(io_ops.restore_v2(prefix, ["v"], [""], [tf.float32])[0])
        np.testing.assert_array_equal(got, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="Unknown checkpoint format"):
        io_ops.save_v2(ours, ["v"], [""], [v], checkpoint_format="V9")


# --- the table format --------------------------------------------------------------------
def test_table_round_trip_over_many_blocks():
    items = [(b"key%05d" % i, b"v" * (i % 7)) for i in range(500)]
    data = sstable.write_table(items, block_size=256, restart_interval=4)
    assert sstable.read_table(data, "mem") == items
    assert struct.unpack("<Q", data[-8:])[0] == sstable.MAGIC
    assert sstable.read_table(sstable.write_table([]), "mem") == []
    with pytest.raises(ValueError, match="strictly increasing"):
        sstable.write_table([(b"b", b""), (b"a", b"")])


def test_separator_keys():
    assert sstable._separator(b"abcd", b"abzz") == b"abd"
    assert sstable._separator(b"abc", b"abd") == b"abc"
    assert sstable._successor(b"words") == b"x"
    assert sstable._successor(b"\xff\xffa") == b"\xff\xffb"


def test_masked_crc():
    assert sstable.mask_crc(0) == 0xa282ead8
    for x in (0, 1, 0xdeadbeef, 0xffffffff):
        assert sstable.unmask_crc(sstable.mask_crc(x)) == x
    # CRC32C's check value (RFC 3720)
    assert sstable.crc32c(b"123456789") == 0xe3069283


# --- corruption ------------------------------------------------------------------------
def test_corrupt_index_byte_raises_data_loss(tmp_path):
    prefix = _copy_fixture(tmp_path)
    _flip(prefix + ".index", 40)
    with pytest.raises(tf.errors.DataLossError, match="block checksum mismatch"):
        tb.open_checkpoint(prefix)


def test_corrupt_magic_is_not_read_as_a_bundle(tmp_path):
    prefix = _copy_fixture(tmp_path)
    _flip(prefix + ".index", os.path.getsize(prefix + ".index") - 1)
    assert not tb.is_bundle(prefix)
    with pytest.raises(tf.errors.DataLossError):
        tb.open_checkpoint(prefix)
    with pytest.raises(tf.errors.DataLossError, match="bad magic"):
        tb.BundleReader(prefix)


@pytest.mark.parametrize("name", ["f32", "words"])
def test_corrupt_data_byte_raises_data_loss(tmp_path, name):
    prefix = _copy_fixture(tmp_path)
    piece = tb.BundleReader(prefix)._tensors[name]["slices"][0]
    _flip(prefix + ".data-00000-of-00001", piece["offset"] + piece["length"] - 1)
    reader = tb.open_checkpoint(prefix)
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match.*'%s'" % name):
        reader.read(name)
    np.testing.assert_array_equal(reader.read("i64"), _expected()["i64"])


def test_truncated_data_file_raises_data_loss(tmp_path):
    prefix = _copy_fixture(tmp_path)
    with open(prefix + ".data-00000-of-00001", "r+b") as f:
        f.truncate(100)
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        tb.open_checkpoint(prefix).read("words")


def test_snappy_block_is_unsupported(tmp_path):
    data = bytearray(sstable.write_table([(b"", b"")]))
    # The first block is the data block at offset 0: mark it snappy, fix its checksum.
    size = len(sstable._BlockBuilder(16).finish()) + len(b"\x00\x01\x00")
    data[size] = sstable.SNAPPY_COMPRESSION
    crc = sstable.mask_crc(sstable.crc32c(bytes(data[:size + 1])))
    data[size + 1:size + 5] = struct.pack("<I", crc)
    with pytest.raises(tf.errors.UnimplementedError, match="snappy"):
        sstable.read_table(bytes(data), "t")


def test_ours_stays_readable_through_open_checkpoint(tmp_path):
    prefix = str(tmp_path / "ours")
    fmt.write(prefix, [("v", "", np.array([1, 2], np.int32), tf.int32)])
    reader = tb.open_checkpoint(prefix)
    assert type(reader) is fmt.CheckpointReader
    np.testing.assert_array_equal(reader.read("v"), [1, 2])


def test_whole_dim_slices_are_stored_as_tf_does(tmp_path):
    prefix = str(tmp_path / "w")
    tb.write(prefix, [("w", "3 70 -:64,6", np.ones([3, 6], np.float32), tf.float32)])
    reader = tb.BundleReader(prefix)
    assert [k for k, _ in reader._raw] == [b"", tb.slice_key("w", [(0, -1), (64, 6)]), b"w"]
    np.testing.assert_array_equal(reader.read("w", "3 70 -:64,6"), np.ones([3, 6]))
    with pytest.raises(tf.errors.NotFoundError, match="Can't find the requested slice"):
        reader.read("w")


def test_big_endian_bundle_is_unsupported(tmp_path):
    header_cls, _, _ = tb.protos()
    header = header_cls(num_shards=1, endianness=1)
    prefix = str(tmp_path / "big")
    with open(prefix + ".index", "wb") as f:
        f.write(sstable.write_table([(b"", header.SerializeToString())]))
    with pytest.raises(tf.errors.UnimplementedError, match="big-endian"):
        tb.open_checkpoint(prefix)


def test_merge_refuses_a_mix_of_formats(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    tb.write(a, [("x", "", np.int32(1), tf.int32)])
    fmt.write(b, [("y", "", np.int32(2), tf.int32)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="mix TF bundles"):
        tb.merge([a, b], str(tmp_path / "m"))


def test_bundle_on_an_fsspec_url():
    prefix = "memory://tensor_bundle_test/m"
    tb.write(prefix, [("v", "", np.arange(3.0), tf.float64)])
    assert tb.is_bundle(prefix)
    np.testing.assert_array_equal(tb.open_checkpoint(prefix).read("v"), [0.0, 1.0, 2.0])


def test_tensor_of_an_unsupported_dtype_fails_only_when_read(tmp_path):
    header_cls, entry_cls, _ = tb.protos()
    header = header_cls(num_shards=1)
    q = entry_cls(dtype=11, size=0, crc32c=sstable.mask_crc(0))   # DT_QINT8
    prefix = str(tmp_path / "q")
    tb.write(prefix, [("a", "", np.int8(3), tf.int8)])
    items = dict(tb.BundleReader(prefix)._raw)
    items[b"q"] = q.SerializeToString()
    items[b""] = header.SerializeToString()
    with open(prefix + ".index", "wb") as f:
        f.write(sstable.write_table(sorted(items.items())))
    reader = tb.open_checkpoint(prefix)
    assert reader.tensor_names() == ["a"] and reader.read("a") == 3
    with pytest.raises(tf.errors.UnimplementedError, match="'q'.*DT_QINT8"):
        reader.read("q")
