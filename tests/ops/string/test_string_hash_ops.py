"""StringToHashBucketFast/Strong and Fingerprint (ops/string/string_hash_ops.py): the
expected values are TensorFlow 2.21's for the same inputs."""
import numpy as np
import pytest

import tensorweave as tf


def test_fast_buckets_equal_tensorflows(sess):
    x = tf.constant([["hello", ""], ["x", "\u00e9"]])
    out = tf.strings.to_hash_bucket_fast(x, 7)
    assert out.dtype == tf.int64 and out.shape.as_list() == [2, 2]
    assert out.name == "StringToHashBucketFast:0"
    assert sess.run(out).tolist() == [[5, 6], [1, 6]]
    assert sess.run(tf.string_to_hash_bucket_fast(["hello", "", "a" * 100], 1000)).tolist() \
        == [296, 263, 618]
    assert sess.run(tf.string_to_hash_bucket_fast("abc", 1)) == 0
    unknown = tf.strings.to_hash_bucket_fast(tf.placeholder(tf.string, [4, None]), 3)
    assert unknown.shape.as_list() == [4, None]


@pytest.mark.parametrize("num_buckets", [1, 7, 1000, 2 ** 62 + 3, 2 ** 63 - 1])
def test_fast_buckets_are_the_unsigned_fingerprint_modulo_n(sess, num_buckets):
    # the remainder is taken over the whole array as uint64: fingerprints at or above
    # 2**63 (about half of them) must not turn negative or lose bits on the way
    from farmhash import Fingerprint64
    words = np.array([b"w%d" % k for k in range(40)] + [b""], object).reshape(41, 1)
    x = tf.placeholder(tf.string, [None, 1])
    got = sess.run(tf.strings.to_hash_bucket_fast(x, num_buckets), {x: words})
    want = [[Fingerprint64(w) % num_buckets] for (w,) in words.tolist()]
    assert any(Fingerprint64(w) >= 2 ** 63 for (w,) in words.tolist())
    assert got.dtype == np.int64 and got.tolist() == want
    assert sess.run(tf.strings.to_hash_bucket_fast(x, 5), {x: words[:0]}).shape == (0, 1)


def test_strong_buckets_equal_tensorflows(sess):
    out = tf.strings.to_hash_bucket_strong(["hello", "abc"], 1000, [1, 2])
    assert sess.run(out).tolist() == [622, 917]
    # the digest counts as unsigned: a modulus near 2**63 shows its top bit
    big = tf.strings.to_hash_bucket_strong(["abc", "hello"], 2 ** 63 - 1, [1, 2])
    assert sess.run(big).tolist() == [5862226954915230110, 2957200328589801622]
    assert sess.run(tf.string_to_hash_bucket_strong(["a", "ab"], 7, [-1, 5])).shape == (2,)


def test_bucket_errors(sess):
    with pytest.raises(ValueError, match="Attr 'num_buckets' of 'StringToHashBucketFast' "
                                         "Op passed 0 less than minimum 1."):
        tf.strings.to_hash_bucket_fast(["a"], 0)
    with pytest.raises(ValueError, match="Value out of range: 9223372036854775808"):
        tf.strings.to_hash_bucket_strong(["a"], 10, [-1, 2 ** 63])
    three = tf.strings.to_hash_bucket_strong(["a"], 10, [1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key must have 2 elements"):
        sess.run(three)
    with pytest.raises(TypeError):
        tf.strings.to_hash_bucket_fast([1, 2], 3)


def test_fingerprints_equal_tensorflows(sess):
    cases = [
        (tf.constant([[1, 2], [3, 4]]), [[76, 18, 253, 133, 168, 204, 240, 10],
                                         [254, 162, 60, 240, 103, 244, 53, 255]]),
        (tf.constant([["a", "b"], ["c", "d"]]), [[122, 64, 59, 169, 136, 60, 55, 83],
                                                 [52, 252, 224, 38, 64, 226, 155, 60]]),
        (tf.constant([[["a", "b"]], [["c", "d"]]]), [[122, 64, 59, 169, 136, 60, 55, 83],
                                                     [52, 252, 224, 38, 64, 226, 155, 60]]),
        (tf.constant([["a"], ["c"]]), [[227, 117, 223, 182, 101, 66, 69, 179],
                                       [40, 123, 203, 224, 169, 24, 161, 158]]),
        (tf.constant(["a", "b"]), [[227, 117, 223, 182, 101, 66, 69, 179],
                                   [22, 241, 200, 94, 33, 96, 178, 163]]),
        (tf.constant([1.5, 2.5]), [[64, 181, 56, 72, 223, 224, 189, 72],
                                   [215, 206, 200, 229, 128, 42, 67, 207]]),
        (tf.constant([True, False]), [[62, 88, 126, 177, 19, 76, 162, 71],
                                      [84, 75, 233, 245, 237, 86, 96, 190]]),
        (tf.constant([[1.5, -2.0]], tf.float64), [[140, 111, 106, 186, 108, 184, 236, 164]]),
        (tf.zeros([2, 0]), [[79, 64, 144, 47, 59, 106, 225, 154]] * 2),
        (tf.constant([[""], [""]]), [[79, 64, 144, 47, 59, 106, 225, 154]] * 2),
    ]
    outs = [tf.fingerprint(x) for x, _ in cases]
    for out, (x, want), got in zip(outs, cases, sess.run(outs)):
        assert got.dtype == np.uint8 and got.tolist() == want, x
        assert out.shape.as_list() == [x.shape.as_list()[0], 8]
    assert sess.run(tf.fingerprint(tf.zeros([0, 3]))).shape == (0, 8)
    assert tf.fingerprint(tf.placeholder(tf.float32)).shape.as_list() == [None, 8]


def test_fingerprint_errors(sess):
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.fingerprint(tf.constant(3))
    with pytest.raises(ValueError, match="Unsupported method: md5"):
        tf.fingerprint([3], method="md5")
    method = tf.placeholder(tf.string, [])
    fed = tf.fingerprint([3], method=method)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported method: md5"):
        sess.run(fed, {method: "md5"})
    assert sess.run(fed, {method: "farmhash64"}).shape == (1, 8)


def test_legacy_buckets_equal_tensorflows(sess):
    # TF's Hash64 (MurmurHash64A, seed 0xDECAFCAFFE): TF 2.21's buckets for these strings
    words = ["hello", "", "a" * 100, "abcdefgh", "abcdefghi", "\u00e9"]
    out = tf.string_to_hash_bucket(words, 1000)
    assert out.op.type == "StringToHashBucket" and out.dtype == tf.int64
    assert sess.run(out).tolist() == [938, 899, 179, 306, 61, 665]
    assert sess.run(tf.strings.to_hash_bucket(input=["hello", "x"], num_buckets=2 ** 62)
                    ).tolist() == [1331861223480393034, 3881744365135738864]
    with pytest.raises(ValueError, match="Cannot specify both 'string_tensor' and 'input'."):
        tf.string_to_hash_bucket(["a"], 3, input=["b"])
    with pytest.raises(ValueError, match="None values not supported"):
        tf.string_to_hash_bucket(num_buckets=3)
    with pytest.raises(TypeError, match="Expected int for argument 'num_buckets' not None."):
        tf.string_to_hash_bucket(["a"])
