"""tf.io.decode_compressed and tf.io.decode_json_example (ops/io/decode_ops.py)."""
import gzip
import zlib

import numpy as np
import pytest

import tensorweave as tf


def test_decode_compressed(sess):
    s = tf.placeholder(tf.string, [None])
    z, g, raw = (tf.io.decode_compressed(s, "ZLIB"), tf.io.decode_compressed(s, "GZIP"),
                 tf.decode_compressed(s))
    assert z.shape.as_list() == [None] and z.dtype == tf.string
    out = sess.run(z, {s: [zlib.compress(b"hello"), zlib.compress(b"")]})
    assert out.tolist() == [b"hello", b""]
    assert sess.run(g, {s: [gzip.compress(b"x" * 1000)]}).tolist() == [b"x" * 1000]
    assert sess.run(raw, {s: [b"raw"]}).tolist() == [b"raw"]
    m = tf.io.decode_compressed(tf.constant([[zlib.compress(b"a")], [zlib.compress(b"bc")]]),
                                "ZLIB")
    assert m.shape.as_list() == [2, 1]
    np.testing.assert_array_equal(sess.run(m), [[b"a"], [b"bc"]])


def test_decode_compressed_errors(sess):
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(tf.errors.DataLossError, match="^inflate\\(\\) failed with error -3: "
                       "incorrect header check"):
        sess.run(tf.io.decode_compressed(s, "ZLIB"), {s: [b"garbage"]})
    with pytest.raises(tf.errors.DataLossError, match="incorrect header check"):
        sess.run(tf.io.decode_compressed(s, "GZIP"), {s: [zlib.compress(b"x")]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Only ZLIB, ZSTD, GZIP or NONE "
                       "are supported compressions"):
        sess.run(tf.io.decode_compressed(s, "LZ4"), {s: [b""]})


def test_decode_compressed_reads_as_tf_stream_does(sess):
    # as TF 2.21: a truncated stream gives what it holds (no error), an empty string gives
    # an empty one, gzip members that follow are read too, bytes after a zlib stream not
    s = tf.placeholder(tf.string, [None])
    text = b"hello world" * 20
    zlib_out = sess.run(tf.io.decode_compressed(s, "ZLIB"), {
        s: [zlib.compress(text)[:-5], b"", zlib.compress(b"hello") + b"junk"]})
    assert zlib_out.tolist() == [text, b"", b"hello"]
    gzip_out = sess.run(tf.io.decode_compressed(s, "GZIP"), {
        s: [gzip.compress(text)[:-3], gzip.compress(b"ab") + gzip.compress(b"cd")]})
    assert gzip_out.tolist() == [text, b"abcd"]


def test_decode_json_example_round_trips_through_parse_example(sess):
    js = tf.constant([
        '{"features": {"feature": {"intList": {"int64List": {"value": ["1", 2]}}, '
        '"f": {"floatList": {"value": [0.5]}}, "b": {"bytesList": {"value": ["aGk="]}}}}}',
        '{"features": {"feature": {"intList": {"int64List": {"value": [3, 4]}}, '
        '"f": {"floatList": {"value": [1.5]}}, "b": {"bytesList": {"value": []}}}}}'])
    binary = tf.io.decode_json_example(js)
    assert binary.shape.as_list() == [2] and binary.dtype == tf.string
    parsed = tf.io.parse_example(binary, {
        "intList": tf.io.FixedLenFeature([2], tf.int64),
        "f": tf.io.FixedLenFeature([], tf.float32),
        "b": tf.io.VarLenFeature(tf.string)})
    out = sess.run(parsed)
    np.testing.assert_array_equal(out["intList"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out["f"], [0.5, 1.5])
    assert out["b"].values.tolist() == [b"hi"]
    # the bytes are an Example protobuf
    ex = tf.train.Example.FromString(sess.run(binary)[0])
    assert list(ex.features.feature["intList"].int64_list.value) == [1, 2]


def test_decode_json_example_errors(sess):
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Error while parsing JSON"):
        sess.run(tf.io.decode_json_example(s), {s: [b"{bad"]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Error while parsing JSON"):
        sess.run(tf.io.decode_json_example(s), {s: [b'{"nofield": 1}']})


def test_decode_json_example_writes_tf_bytes(sess):
    # TF's converter keeps the order of the JSON text, writes every number with its own
    # tag (unpacked) and keeps empty lists; bytes recorded from TF 2.21
    js = ('{"features": {"feature": {"z": {"floatList": {"value": [1.5, 2, "NaN"]}}, '
          '"a": {"bytesList": {"value": ["aGk=", ""]}}, "m": {"int64List": {"value": [3, '
          '"-4"]}}, "e": {"int64List": {}}, "f": {"floatList": {"value": []}}}}}')
    out = sess.run(tf.io.decode_json_example(
        tf.constant([js, '{"features": {"feature": {}}}', '{"features": null}'])))
    assert [o.hex() for o in out] == [
        "0a4f0a160a017a1211120f0d0000c03f0d000000400d0000c07f0a0d0a016112080a060a0268690a00"
        "0a140a016d120f1a0d080308fcffffffffffffffff010a070a016512021a000a070a016612021200",
        "0a00", ""]
