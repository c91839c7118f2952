"""tf.io.decode_proto / tf.io.encode_proto: every case of
tests/fixtures/tf1/make_proto_fixture.py against what TensorFlow 2.21 returned (values,
sizes, padding, bytes, static shapes, errors), and against the protobuf library itself
(what the encoder writes parses back to the messages; what the decoder returns are the
messages' fields)."""
import importlib.util
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import proto_ops

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "tf1")
_spec = importlib.util.spec_from_file_location(
    "make_proto_fixture", os.path.join(FIXTURES, "make_proto_fixture.py"))
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


@pytest.fixture(scope="module")
def desc_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("proto") / "test.desc")
    with open(path, "wb") as f:
        f.write(cases.build_file_set().SerializeToString())
    return path


@pytest.fixture(scope="module")
def results(desc_path):
    with tf.Graph().as_default():
        out = cases.run_cases(tf, desc_path)
    out["errors"] = np.array([e.replace(desc_path, "<desc>") for e in out["errors"]])
    return out


def test_matches_tensorflow(results):
    expected = np.load(os.path.join(FIXTURES, "proto_expected.npz"))
    assert sorted(results) == sorted(expected.files)
    for key in expected.files:
        want, got = expected[key], results[key]
        assert got.dtype == want.dtype or (got.dtype.kind == want.dtype.kind == "U"), key
        assert got.shape == want.shape, key
        if want.dtype.kind == "f":
            np.testing.assert_array_equal(got, want, err_msg=key)
            assert np.array_equal(np.signbit(got), np.signbit(want)), key  # -0.0
        else:
            assert got.tolist() == want.tolist(), key


def _strings(hex_array):
    return [bytes.fromhex(h) for h in np.asarray(hex_array).ravel()]


def test_decoded_values_are_the_messages_fields(results):
    msgs = cases.messages(cases.build_file_set())
    sizes = results["binary/sizes"].reshape(3, -1)
    # field 0 is d (set in message 0, default 1.5 elsewhere)
    assert results["binary/0"].reshape(3, -1)[:, 0].tolist() == [-0.25, 1.5, 1.5]
    assert sizes[:, 0].tolist() == [1, 0, 0]
    # r_i32 (field 17): padded to the longest, 5 values of message 2
    r_i32 = results["binary/17"].reshape(3, -1)
    assert r_i32.shape == (3, 5) and sizes[:, 17].tolist() == [3, 0, 5]
    for m, row, n in zip(msgs, r_i32, sizes[:, 17]):
        assert row[:n].tolist() == list(m.r_i32) and not row[n:].any()
    # the nested message as its serialized bytes; u64 above 2**63
    assert _strings(results["binary/16"])[0] == msgs[0].inner.SerializeToString()
    assert results["binary/5"].reshape(3)[0] == 2 ** 64 - 2
    # text and sanitized binary decode to the binary results
    for key in ("sizes",) + tuple(str(i) for i in range(28)):
        assert results["text/" + key].ravel().tolist() == \
            results["binary/" + key].ravel().tolist()


def test_encoded_bytes_parse_back_to_the_messages(results):
    msgs = cases.messages(cases.build_file_set())
    Msg = type(msgs[0])
    encoded = _strings(results["encoded"])
    assert [Msg.FromString(b) for b in encoded] == msgs
    # canonical field order: what the protobuf library writes
    assert encoded == [m.SerializeToString() for m in msgs]
    fresh = [Msg.FromString(b) for b in _strings(results["encoded_fresh"])]
    assert list(fresh[0].r_i32) == [1, 2] and list(fresh[0].r_str) == ["a"]
    assert not fresh[0].HasField("d") and fresh[1].d == 2.5


def test_static_shapes(results):
    assert results["shapes"].tolist() == ["(3, 1, 28)", "(3, 1, ?)", "(2,)", "(?,)",
                                          "(3, 1)", "<unknown>", "(?, 3, ?)", "(2, 4)"]


def test_packed_int32_to_int64_sign_extends(desc_path, sess):
    # TF 2.21 zero-extends the 32 bits here (4294967294); the value is -2, as TF gives
    # for the same field unpacked
    neg2 = b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"
    for data in (b"\x92\x01\x0a" + neg2, b"\x90\x01" + neg2):
        sizes, (values,) = tf.io.decode_proto(tf.constant([data]), "twtest.TestMsg",
                                              ["r_i32"], [tf.int64],
                                              descriptor_source=desc_path)
        assert sess.run(values).tolist() == [[-2]]


def test_field_named_twice_is_decoded_twice(desc_path, sess):
    data = cases.messages(cases.build_file_set())[0].SerializeToString()
    sizes, (a, b) = tf.io.decode_proto(tf.constant([data]), "twtest.TestMsg", ["f", "f"],
                                       [tf.float32, tf.float64],
                                       descriptor_source=desc_path)
    got = sess.run([sizes, a, b])
    assert got[0].tolist() == [[1, 1]] and got[1][0, 0] == got[2][0, 0] == 3.5


def test_local_descriptor_source(sess):
    # TF's docstring example: Summary.Value from TF's own protos ("local://")
    from tensorweave import summary
    values = [summary._proto_class("Summary").Value(tag="a", simple_value=2.5),
              summary._proto_class("Summary").Value(tag="b")]
    sizes, (tag, simple) = tf.io.decode_proto(
        tf.constant([v.SerializeToString() for v in values]), "tensorflow.Summary.Value",
        ["tag", "simple_value"], [tf.string, tf.float32])
    got = sess.run([sizes, tag, simple])
    assert got[0].tolist() == [[1, 1], [1, 0]]
    assert got[1].ravel().tolist() == [b"a", b"b"]
    assert got[2].ravel().tolist() == [2.5, 0.0]
    # tf.train.Example, and a round trip through encode_proto
    example = tf.train.Example()
    example.features.feature["x"].int64_list.value.extend([3, 4])
    sizes, (features,) = tf.io.decode_proto(tf.constant([example.SerializeToString()]),
                                            "tensorflow.Example", ["features"], [tf.string])
    again = tf.io.encode_proto(sizes, [features], ["features"], "tensorflow.Example")
    assert tf.train.Example.FromString(sess.run(again)[0]) == example


def test_extension_field_by_full_name(tmp_path, sess):
    from google.protobuf import descriptor_pb2
    fds = cases.build_file_set()
    ext = fds.file.add(name="twtest/ext.proto", package="twext", syntax="proto2",
                       dependency=["twtest/test.proto"])
    base = next(m for m in fds.file[0].message_type if m.name == "Inner")
    base.extension_range.add(start=100, end=200)
    ext.extension.add(name="extra", number=100, extendee=".twtest.Inner",
                      type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    # the set lists the dependent file last: the pool adds dependencies first anyway
    source = b"bytes://" + fds.SerializeToString()
    sizes, (a, extra) = tf.io.decode_proto(tf.constant([b"\x08\x05\xa0\x06\x09"]),
                                           "twtest.Inner", ["a", "twext.extra"],
                                           [tf.int32, tf.int64], descriptor_source=source)
    assert [x.tolist() for x in sess.run([sizes, a, extra])] == [[[1, 1]], [[5]], [[9]]]


def test_builder_arguments(graph, desc_path):
    with pytest.raises(TypeError, match="Expected list for 'field_names'"):
        tf.io.decode_proto(tf.constant([b""]), "twtest.TestMsg", "d", [tf.float64])
    with pytest.raises(TypeError, match="Expected list for 'output_types'"):
        tf.io.decode_proto(tf.constant([b""]), "twtest.TestMsg", ["d"], tf.float64)
    with pytest.raises(TypeError, match="Expected list for 'field_names'"):
        tf.io.encode_proto(tf.constant([[1]]), [tf.constant([[1]])], "i32", "twtest.TestMsg")
    out = tf.io.decode_proto(tf.constant([b""]), "twtest.TestMsg", ["d"], [tf.float64],
                             descriptor_source=desc_path, name="dec")
    assert type(out).__name__ == "DecodeProtoV2" and out.sizes.op.name == "dec"
    assert out.sizes.op.get_attr("field_names") == [b"d"]
    assert tf.gradients(out.values[0], out.sizes.op.inputs[0]) == [None]
    assert proto_ops.descriptor_pool_of(desc_path) is proto_ops.descriptor_pool_of(desc_path)
