"""serialize_sparse, serialize_many_sparse and deserialize_many_sparse; the bytes are
those TensorFlow 2.21 writes for the same SparseTensor."""
import pytest

import tensorweave as tf

# tf.io.serialize_sparse(SparseTensor([[0,0],[0,2],[1,1]], [1.,2.,3.], [2,3])) in TF 2.21
_TF_VALUES = b'\x08\x01\x12\x04\x12\x02\x08\x03"\x0c\x00\x00\x80?\x00\x00\x00@\x00\x00@@'
_TF_SHAPE = b'\x08\t\x12\x04\x12\x02\x08\x02"\x10\x02\x00\x00\x00\x00\x00\x00\x00\x03' \
    b'\x00\x00\x00\x00\x00\x00\x00'


def _a():
    return tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0], [2, 3])


def test_serialize_sparse_matches_tensorflow(sess):
    s = tf.io.serialize_sparse(_a())
    assert s.shape.as_list() == [3] and s.dtype == tf.string
    got = sess.run(s)
    assert got[1] == _TF_VALUES and got[2] == _TF_SHAPE
    assert tf.serialize_sparse is tf.io.serialize_sparse


def test_serialize_many_round_trip(sess):
    many = tf.io.serialize_many_sparse(_a())
    assert many.shape.as_list() == [None, 3]
    rows = sess.run(many)
    assert rows.shape == (2, 3)
    back = tf.io.deserialize_many_sparse(many, tf.float32, rank=2)
    assert back.indices.shape.as_list() == [None, 2]
    v = sess.run(back)
    assert v.indices.tolist() == [[0, 0], [0, 2], [1, 1]] and v.values.tolist() == [1, 2, 3]
    assert v.dense_shape.tolist() == [2, 3]
    # single serialized SparseTensors stack along a new first dimension
    two = tf.stack([tf.serialize_sparse(_a()),
                    tf.serialize_sparse(tf.SparseTensor([[3, 0]], [9.0], [4, 1]))])
    w = sess.run(tf.deserialize_many_sparse(two, tf.float32))
    assert w.dense_shape.tolist() == [2, 4, 3]
    assert w.indices.tolist()[-1] == [1, 3, 0] and w.values.tolist()[-1] == 9.0


def test_deserialize_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requested SparseTensor of type"):
        sess.run(tf.io.deserialize_many_sparse(tf.io.serialize_many_sparse(_a()), tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="^Could not parse serialized "
                       "proto"):
        sess.run(tf.io.deserialize_many_sparse([[b"\xff", b"\xff", b"\xff"]], tf.float32))
    # TF's shape function: a [N, 3] matrix
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.io.deserialize_many_sparse(tf.constant([b"a", b"b"]), tf.int64)
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.io.deserialize_many_sparse(tf.constant([[b"a", b"b"]]), tf.int64)


# tf.io.serialize_sparse(SparseTensor([[0, 0], [1, 2]], [b"a", b"bc"], [3, 4]))[1] in TF
# 2.21: C++ writes strings into tensor_content (the lengths as varints, then the bytes)
_TF_STRING_VALUES = bytes.fromhex("080712041202080222050102616263")


def test_string_values_as_tensorflow_writes_and_reads_them(sess):
    sp = tf.SparseTensor([[0, 0], [1, 2]], [b"a", b"bc"], [3, 4])
    got = sess.run(tf.io.serialize_sparse(sp))
    assert got[1] == _TF_STRING_VALUES
    # and what TF wrote reads back (the strings were empty before)
    back = sess.run(tf.io.deserialize_many_sparse([got], tf.string))
    assert back.values.tolist() == [b"a", b"bc"]
    assert back.indices.tolist() == [[0, 0, 0], [0, 1, 2]]
