"""ensure_shape, broadcast_{static,dynamic}_shape, make_tensor_proto/make_ndarray and
serialize_tensor/parse_tensor."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


def test_ensure_shape(sess):
    p = tf.placeholder(tf.float32, [None, None])
    y = tf.ensure_shape(p, [None, 3])
    assert y.shape.as_list() == [None, 3]
    assert sess.run(y, {p: np.ones((2, 3))}).shape == (2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Shape of tensor Placeholder \[2,2\] is not compatible with "
                             r"expected shape \[\?,3\]"):
        sess.run(y, {p: np.ones((2, 2))})
    with pytest.raises(ValueError, match="but are 2 and 1"):
        tf.ensure_shape(tf.constant([[1, 2]]), [2, 2])


def test_ensure_shape_gradient(graph):
    x = tf.placeholder(tf.float64, [2, 3])
    assert compute_gradient_error(x, [2, 3], tf.ensure_shape(x * x, [2, None]), [2, 3]) < 1e-6


def test_broadcast_shapes(sess):
    d = tf.broadcast_dynamic_shape([2, 1, 3], [4, 1])
    assert d.shape.as_list() == [3] and d.dtype == tf.int32
    assert sess.run(d).tolist() == [2, 4, 3]
    d64 = tf.broadcast_dynamic_shape(np.array([5], np.int64), np.array([1, 1], np.int64))
    assert sess.run(d64).tolist() == [1, 5] and d64.dtype == tf.int64
    with pytest.raises(TypeError, match="Input 's1' of 'BroadcastArgs' Op has type int64"):
        tf.broadcast_dynamic_shape(tf.constant([2, 1]), tf.constant([5], tf.int64))
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\]"):
        sess.run(tf.broadcast_dynamic_shape(p, [4]), {p: [2, 3]})
    s = tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1]))
    assert isinstance(s, tf.TensorShape) and s.as_list() == [None, 4, 3]
    assert tf.broadcast_static_shape(tf.TensorShape(None), tf.TensorShape([2])).ndims is None
    with pytest.raises(ValueError, match=r"Received: \(2, 3\) and \(4,\)"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4]))


def test_make_tensor_proto_and_ndarray():
    proto = tf.make_tensor_proto([[1.0, 2.0], [3.0, 4.0]])
    assert type(proto).__name__ == "TensorProto" and proto.dtype == tf.float32.as_datatype_enum
    arr = tf.make_ndarray(proto)
    assert arr.dtype == np.float32 and arr.tolist() == [[1, 2], [3, 4]]
    arr[0, 0] = 9  # a writable copy
    assert tf.make_ndarray(tf.make_tensor_proto(7, shape=[2, 2])).tolist() == [[7, 7], [7, 7]]
    assert tf.make_ndarray(tf.make_tensor_proto([1, 2], dtype=tf.int64)).dtype == np.int64
    assert tf.make_ndarray(tf.make_tensor_proto([1, 2], shape=[3])).tolist() == [1, 2, 2]
    assert tf.make_ndarray(tf.make_tensor_proto(["ab", b"c"])).tolist() == [b"ab", b"c"]
    b = tf.make_tensor_proto([1, 2], shape=[2, 2], allow_broadcast=True)
    assert tf.make_ndarray(b).tolist() == [[1, 2], [1, 2]]
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.make_tensor_proto([1, 2], shape=[1, 2], verify_shape=True)
    with pytest.raises(ValueError, match="Too many elements provided"):
        tf.make_tensor_proto([1, 2, 3], shape=[2])


# the bytes TF 2.21 writes for tf.serialize_tensor(tf.constant([1, 2])) (int32)
_TF_INT32_12 = b'\x08\x03\x12\x04\x12\x02\x08\x02"\x08\x01\x00\x00\x00\x02\x00\x00\x00'


def test_serialize_tensor_of_scalars_writes_the_empty_shape(sess):
    # TF 2.21's bytes: a scalar's TensorProto carries an empty tensor_shape (0x12 0x00)
    assert sess.run(tf.serialize_tensor(tf.constant("a b"))) == b"\x08\x07\x12\x00B\x03a b"
    assert sess.run(tf.serialize_tensor(tf.constant(3))) == \
        b'\x08\x03\x12\x00"\x04\x03\x00\x00\x00'
    assert sess.run(tf.parse_tensor(tf.serialize_tensor(tf.constant("a\x00")), tf.string)) == \
        b"a\x00"


def test_serialize_and_parse_tensor(sess):
    s = tf.serialize_tensor([1, 2])
    assert s.shape.as_list() == [] and s.dtype == tf.string
    assert sess.run(s) == _TF_INT32_12
    back = tf.parse_tensor(_TF_INT32_12, tf.int32)
    assert back.shape.ndims is None
    np.testing.assert_array_equal(sess.run(back), [1, 2])
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    got = sess.run(tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.float64))
    assert got.dtype == np.float64 and got.shape == (2, 3)
    np.testing.assert_array_equal(got, x)
    strs = sess.run(tf.parse_tensor(tf.serialize_tensor([b"ab", b""]), tf.string))
    assert strs.tolist() == [b"ab", b""]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Type mismatch between parsed tensor \(int32\) and dtype "
                             r"\(float\)"):
        sess.run(tf.parse_tensor(_TF_INT32_12, tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse `serialized` "
                       "as TensorProto, base64: //8=\n"):  # TF's message
        sess.run(tf.parse_tensor(b"\xff\xff", tf.float32))
    # as TF, the rank of `serialized` is checked when the op runs
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected `serialized` to be a "
                       r"scalar, got shape: \[1\]"):
        sess.run(tf.parse_tensor([_TF_INT32_12], tf.int32))


def test_make_ndarray_of_a_const_ops_value_attr(graph):
    # TF programs read a constant back with tf.make_ndarray(op.get_attr("value"))
    c = tf.constant([[1.0, 2.0]], name="c")
    got = tf.make_ndarray(c.op.get_attr("value"))
    assert got.tolist() == [[1.0, 2.0]] and got.dtype == np.float32
    got[0, 0] = 5.0  # a copy: the graph's constant is unchanged
    assert tf.make_ndarray(c.op.get_attr("value")).tolist() == [[1.0, 2.0]]


def test_make_tensor_proto_converts_as_tf_constant():
    """NumPy scalars keep their dtype (Python floats and fitting ints narrow); values that
    tf.constant would refuse for `dtype` raise TF's errors."""
    assert tf.make_tensor_proto(np.float64(2.5)).dtype == tf.float64.as_datatype_enum
    assert tf.make_tensor_proto(np.int64(3)).dtype == tf.int64.as_datatype_enum
    assert tf.make_tensor_proto(2.5).dtype == tf.float32.as_datatype_enum
    assert tf.make_tensor_proto([1, 2]).dtype == tf.int32.as_datatype_enum
    assert tf.make_ndarray(tf.make_tensor_proto(np.array([1.7]), dtype=tf.int32)).tolist() == \
        [1]  # an array is cast
    for values, dtype, message in (([1.5], tf.int32, "Expected int32, but got 1.5"),
                                   ([1, 0], tf.bool, "Expected bool, but got 1"),
                                   (["1.5"], tf.float32, "Expected float32, but got '1.5'")):
        with pytest.raises(TypeError, match=message):
            tf.make_tensor_proto(values, dtype=dtype)
    with pytest.raises(ValueError, match="None values not supported"):
        tf.make_tensor_proto(None)


def test_make_tensor_proto_writes_tfs_bytes():
    """TF's wire choices: raw tensor_content only for more than one value of a plain
    number type, else the typed field; a short value list is written short."""
    proto = tf.make_tensor_proto(3.0, shape=[2, 2])
    # dtype 1, shape [2, 2], float_val [3.0] packed
    assert proto.SerializeToString() == bytes(
        [0x08, 0x01, 0x12, 0x08, 0x12, 0x02, 0x08, 0x02, 0x12, 0x02, 0x08, 0x02,
         0x2A, 0x04]) + np.float32(3.0).tobytes()
    assert tf.make_ndarray(proto).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    fields = {name: [f.name for f, _ in tf.make_tensor_proto(value).ListFields()]
              for name, value in (("scalar", 5), ("pair", [1.5, 2.5]),
                                  ("bools", np.array([True, False])),
                                  ("uint16", np.array([1, 2], np.uint16)),
                                  ("complex", np.array([1 + 2j], np.complex64)))}
    assert fields == {"scalar": ["dtype", "tensor_shape", "int_val"],
                      "pair": ["dtype", "tensor_shape", "tensor_content"],
                      "bools": ["dtype", "tensor_shape", "bool_val"],
                      "uint16": ["dtype", "tensor_shape", "int_val"],
                      "complex": ["dtype", "tensor_shape", "scomplex_val"]}
    for value in (np.array([1 + 2j, -3j], np.complex128), np.float16(1.5),
                  np.array([7, 8], np.uint16), np.array([True, False])):
        np.testing.assert_array_equal(tf.make_ndarray(tf.make_tensor_proto(value)), value)
