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
    with pytest.raises(tf.errors.DataLossError, match="incorrect header check"):
        sess.run(tf.io.decode_compressed(s, "ZLIB"), {s: [b"garbage"]})
    with pytest.raises(tf.errors.DataLossError):
        sess.run(tf.io.decode_compressed(s, "GZIP"), {s: [zlib.compress(b"x")]})
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        sess.run(tf.io.decode_compressed(s, "ZLIB"), {s: [zlib.compress(b"hello")[:-3]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported compression"):
        sess.run(tf.io.decode_compressed(s, "LZ4"), {s: [b""]})


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
