"""tf.sparse.cross_hashed and the cross ops' input rules (ops/sparse/sparse_cross_ops.py);
the expected values are TensorFlow 2.21's for the same inputs."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.sparse.sparse_cross_ops import fold_fingerprints


def _inputs():
    a = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "b", "c"], [2, 2])
    b = tf.SparseTensor([[0, 0], [1, 0]], ["d", "e"], [2, 1])
    i = tf.SparseTensor([[0, 0], [1, 0]], tf.constant([7, 8], tf.int64), [2, 1])
    return a, b, i


def test_hashed_crosses_equal_tensorflows(sess):
    a, b, i = _inputs()
    cases = [
        (tf.sparse.cross_hashed([a, b], num_buckets=100), [82, 61, 41]),
        (tf.sparse.cross_hashed([a, b]), [1584069791037555375, 4171697120956746554,
                                          1746051686049959641]),
        (tf.sparse.cross_hashed([a, b], num_buckets=1000, hash_key=123), [354, 256, 877]),
        (tf.sparse.cross_hashed([a, i], num_buckets=1000), [856, 726, 489]),
        # the sparse input is crossed first, whatever the order given
        (tf.sparse.cross_hashed([tf.constant([["x"], ["y"]]), i], num_buckets=1000),
         [56, 352]),
    ]
    for t, want in cases:
        got = sess.run(t)
        assert got.values.dtype == np.int64 and got.values.tolist() == want
    assert cases[0][0].values.name == "SparseCross:1"
    first = sess.run(cases[0][0])
    assert first.indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert first.dense_shape.tolist() == [2, 2]


def test_the_fold_of_fingerprints():
    # TF's FingerprintCat64 by hand (MurmurHash2's finalizer mix), folded over columns
    m, mask = 0xC6A4A7935BD1E995, (1 << 64) - 1

    def shift_mix(v):
        return v ^ (v >> 47)

    def cat(fp1, fp2):
        r = fp1 ^ m
        r ^= (shift_mix(fp2 * m & mask) * m) & mask
        return shift_mix((shift_mix(r * m & mask) * m) & mask)
    rows = [[7, 2 ** 64 - 1], [0, 12345678901234567890], [2 ** 63, 1]]
    got = fold_fingerprints(np.array(rows, np.uint64), 0xDECAFCAFFE)
    assert [int(v) for v in got] == [cat(cat(0xDECAFCAFFE, a), b) for a, b in rows]


def test_features_of_other_types_are_cast_to_int64(sess):
    floats = sess.run(tf.sparse.cross([tf.constant([[1.5]])]))
    assert floats.values.tolist() == [b"1"]
    ints = sess.run(tf.sparse.cross([tf.constant([[1]], tf.int32)]))
    assert ints.values.tolist() == [b"1"]
    assert sess.run(tf.sparse.cross_hashed([tf.constant([[1.5]])])).values.tolist() == \
        [5199413699614396413]


def test_cross_errors(sess):
    a, _, _ = _inputs()
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Dense inputs should be a matrix but received shape \[1\] at "
                             r"position 0"):
        sess.run(tf.sparse.cross([tf.constant([1.5])]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Expected batch size 2 got 1 at dense tensor 0"):
        sess.run(tf.sparse.cross_hashed([a, tf.constant([["x"]])]))
    with pytest.raises(ValueError, match="num_buckets must be >= 0"):
        tf.sparse.cross_hashed([a], num_buckets=-1)
    with pytest.raises(TypeError, match="Inputs must be a list"):
        tf.sparse.cross_hashed(a)
