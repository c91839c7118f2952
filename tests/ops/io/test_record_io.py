"""The TFRecord format (tf.python_io / tf.io): framing, CRC32C, compression, errors.

tests/ops/data/tf_written*.tfrecord were written once by TensorFlow 2.21
(tf.compat.v1.python_io.TFRecordWriter) with the records in TF_RECORDS.
"""
import gzip
import os
import struct
import zlib

import pytest

import tensorweave as tf
from tensorweave.ops.io import record_io

DATA = os.path.join(os.path.dirname(__file__), "data")
TF_RECORDS = [b"", b"a", b"hello tfrecord", bytes(range(256)) * 4]
RECORDS = [b"abc", b"", b"hello world", bytes(range(256)) * 3000, b"z"]

# the bytes TensorFlow writes for the records b"abc", b"", b"hello world"
TF_BYTES = bytes.fromhex(
    "0300000000000000b099490e6162636e57f121"
    "000000000000000029039807d8ea82a2"
    "0b000000000000008615f50468656c6c6f20776f726c64007ed86d")


def _write(path, records, options=None):
    with tf.python_io.TFRecordWriter(path, options) as w:
        for r in records:
            w.write(r)


def _read(path, options=None):
    return list(tf.python_io.tf_record_iterator(path, options))


def test_crc32c_known_values():
    assert record_io.crc32c(b"") == 0
    assert record_io.crc32c(b"123456789") == 0xE3069283
    assert record_io.masked_crc32c(b"") == 0xA282EAD8
    c = 0xE3069283
    assert record_io.mask_crc(c) == ((((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF)
    for v in (0, 1, 0xFFFFFFFF, 0xE3069283, 0x12345678):
        assert record_io.unmask_crc(record_io.mask_crc(v)) == v


def test_framing_is_byte_identical_to_tensorflow(tmp_path):
    p = str(tmp_path / "a.tfr")
    _write(p, [b"abc", b"", b"hello world"])
    assert open(p, "rb").read() == TF_BYTES
    # framing by hand: length, masked crc(length), data, masked crc(data)
    data = b"hello world"
    length = struct.pack("<Q", len(data))
    expect = (length + struct.pack("<I", record_io.masked_crc32c(length)) + data
              + struct.pack("<I", record_io.masked_crc32c(data)))
    assert record_io.encode_record(data) == expect


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_round_trip(tmp_path, compression):
    p = str(tmp_path / "r.tfr")
    _write(p, RECORDS, tf.python_io.TFRecordOptions(compression))
    assert _read(p, tf.python_io.TFRecordOptions(compression)) == RECORDS
    assert _read(p, compression) == RECORDS  # a bare compression string also works


def test_compressed_files_are_standard_streams(tmp_path):
    g, z = str(tmp_path / "g"), str(tmp_path / "z")
    _write(g, [b"abc", b"", b"hello world"], "GZIP")
    _write(z, [b"abc", b"", b"hello world"], "ZLIB")
    assert gzip.decompress(open(g, "rb").read()) == TF_BYTES
    assert zlib.decompress(open(z, "rb").read()) == TF_BYTES


def test_compression_type_enum_and_options(tmp_path):
    t = tf.python_io.TFRecordCompressionType
    assert (t.NONE, t.ZLIB, t.GZIP) == (0, 1, 2)
    assert tf.io.TFRecordCompressionType is t
    get = tf.python_io.TFRecordOptions.get_compression_type_string
    assert [get(x) for x in (None, "", 0, 1, 2, "GZIP", "ZLIB")] == \
        ["", "", "", "ZLIB", "GZIP", "GZIP", "ZLIB"]
    assert get(tf.python_io.TFRecordOptions(t.GZIP)) == "GZIP"
    with pytest.raises(ValueError, match='Not a valid compression_type: "BAD"'):
        tf.python_io.TFRecordOptions("BAD")
    p = str(tmp_path / "lvl.tfr")
    _write(p, RECORDS, tf.python_io.TFRecordOptions("ZLIB", compression_level=9))
    assert _read(p, t.ZLIB) == RECORDS


def test_many_small_and_one_large_record(tmp_path):
    p = str(tmp_path / "many.tfr")
    records = [b"%d" % i for i in range(5000)] + [os.urandom(3 << 20)]
    _write(p, records, "GZIP")
    assert _read(p, "GZIP") == records


def test_concatenated_gzip_members(tmp_path):
    p = str(tmp_path / "cat.gz")
    with open(p, "wb") as f:
        f.write(gzip.compress(record_io.encode_record(b"one")))
        f.write(gzip.compress(record_io.encode_record(b"two")))
    assert _read(p, "GZIP") == [b"one", b"two"]


@pytest.mark.parametrize("name,options", [("tf_written.tfrecord", None),
                                          ("tf_written.tfrecord.gz", "GZIP"),
                                          ("tf_written_zlib.tfrecord", "ZLIB")])
def test_reads_files_written_by_tensorflow(name, options):
    assert _read(os.path.join(DATA, name), options) == TF_RECORDS


def test_exported_names():
    for ns in (tf.python_io, tf.io):
        assert ns.TFRecordWriter is record_io.TFRecordWriter
        assert ns.tf_record_iterator is record_io.tf_record_iterator
        assert ns.TFRecordOptions is record_io.TFRecordOptions


def _corrupt(tmp_path, data):
    p = str(tmp_path / "bad.tfr")
    with open(p, "wb") as f:
        f.write(data)
    out = []
    with pytest.raises(tf.errors.DataLossError) as e:
        for r in tf.python_io.tf_record_iterator(p):
            out.append(r)
    return out, str(e.value)


@pytest.mark.parametrize("flip,before,message", [
    (14, [], "corrupted record at 12"),                              # data of record 0
    (2, [], "corrupted record at 0 (Is this even a TFRecord file?)"),  # its length
    (9, [], "corrupted record at 0 (Is this even a TFRecord file?)"),  # its length crc
    (20, [b"abc"], "corrupted record at 19"),                        # length of record 1
    (40, [b"abc", b""], "corrupted record at 35"),                   # data of record 2
])
def test_corrupted_records_raise_data_loss(tmp_path, flip, before, message):
    data = bytearray(TF_BYTES)
    data[flip] ^= 1
    out, msg = _corrupt(tmp_path, bytes(data))
    assert out == before
    assert msg == message


def test_truncated_records(tmp_path):
    out, msg = _corrupt(tmp_path, TF_BYTES[:-3])
    assert out == [b"abc", b""]
    assert msg == "truncated record at 35' failed with Read less bytes than requested"
    # as TensorFlow: a header cut short at the end of the file ends the file quietly
    p = str(tmp_path / "short.tfr")
    with open(p, "wb") as f:
        f.write(TF_BYTES[:19 + 5])
    assert _read(p) == [b"abc"]


def test_not_compressed_as_claimed(tmp_path):
    p = str(tmp_path / "plain.tfr")
    _write(p, [b"abc"])
    with pytest.raises(tf.errors.DataLossError,
                       match="inflate.. failed with error -3: incorrect header check"):
        _read(p, "GZIP")


def test_missing_file_and_directory(tmp_path):
    missing = str(tmp_path / "nope.tfr")
    with pytest.raises(tf.errors.NotFoundError, match="nope.tfr; No such file or directory"):
        tf.python_io.tf_record_iterator(missing)
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.python_io.TFRecordWriter(str(tmp_path / "no_dir" / "x.tfr"))


def test_writer_flush_close_and_closed_errors(tmp_path):
    for compression in ("", "GZIP"):
        p = str(tmp_path / ("f%s.tfr" % compression))
        w = tf.python_io.TFRecordWriter(p, compression)
        w.write(b"first")
        w.flush()  # what is flushed is readable while the writer stays open
        assert _read(p, compression) == [b"first"]
        w.write("second")  # str is written as UTF-8
        w.close()
        w.close()  # twice is harmless
        assert _read(p, compression) == [b"first", b"second"]
        with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed."):
            w.write(b"x")
        with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed."):
            w.flush()


def test_empty_file_has_no_records(tmp_path):
    for compression in ("", "GZIP", "ZLIB"):
        p = str(tmp_path / ("e%s.tfr" % compression))
        _write(p, [], compression)
        assert _read(p, compression) == []


# --- many records per call (RecordReader.read_many frames runs of records with NumPy) -----
def _read_many(path, limit):
    reader = record_io.RecordReader(path)
    got = []
    try:
        while True:
            offsets, records, at_end = reader.read_many(limit)
            got += list(zip(offsets, records))
            if at_end:
                return got
    finally:
        reader.close()


@pytest.mark.parametrize("limit", [1, 7, 1000])
def test_read_many_matches_record_by_record(tmp_path, limit):
    # runs of equal lengths (framed as matrices) broken by other lengths and empties
    records = [bytes([k % 251]) * 40 for k in range(300)] + [b"", b"x", b""] + \
        [bytes(range(256)) * 3000] + [b"%05d" % k for k in range(2000)]
    p = str(tmp_path / "many.tfr")
    _write(p, records)
    got = _read_many(p, limit)
    assert [r for _, r in got] == records
    offsets, pos = [], 0
    for r in records:
        offsets.append(pos)
        pos += 16 + len(r)
    assert [o for o, _ in got] == offsets


@pytest.mark.parametrize("where,message", [
    ("data", "corrupted record at %d"), ("footer", "corrupted record at %d"),
    ("length_crc", "corrupted record at %d"), ("length", "corrupted record at %d")])
def test_read_many_finds_a_bad_record_inside_a_run(tmp_path, where, message):
    records = [b"%08d" % k for k in range(100)]
    p = str(tmp_path / "bad.tfr")
    _write(p, records)
    data = bytearray(open(p, "rb").read())
    start = 37 * 24  # record 37 of 24-byte frames
    flip = {"data": start + 13, "footer": start + 21, "length_crc": start + 9,
            "length": start + 1}[where]
    data[flip] ^= 4
    open(p, "wb").write(bytes(data))
    reader = record_io.RecordReader(p)
    offsets, got, at_end = reader.read_many(30)
    assert got == records[:30] and not at_end
    with pytest.raises(tf.errors.DataLossError) as e:
        reader.read_many(30)  # the records before the bad one are consumed, then the error
    at = start + (12 if where in ("data", "footer") else 0)
    assert e.value.message == message % at
    assert reader.offset == start
    reader.close()


def test_read_many_truncated_and_compressed(tmp_path):
    records = [b"%06d" % k for k in range(500)]
    p = str(tmp_path / "cut.tfr")
    _write(p, records)
    data = open(p, "rb").read()
    open(p, "wb").write(data[:-3])
    reader = record_io.RecordReader(p)
    with pytest.raises(tf.errors.DataLossError, match="truncated record at %d" % (499 * 22)):
        reader.read_many(1000)
    reader.close()
    z = str(tmp_path / "z.tfr")
    _write(z, records, "GZIP")
    reader = record_io.RecordReader(z, "GZIP")
    assert reader.read_many(1000) == (list(range(0, 500 * 22, 22)), records, True)
    reader.close()
