"""tf.data.experimental.cardinality and assert_cardinality (data/cardinality.py): the
expected counts are TensorFlow 2.21's for the same datasets."""
import numpy as np
import pytest

import tensorweave as tf

D, X = tf.data.Dataset, tf.data.experimental
INF, UNKNOWN = X.INFINITE_CARDINALITY, X.UNKNOWN_CARDINALITY


def _unknown(n):
    return D.range(n).filter(lambda x: True)


CASES = [
    (lambda: D.range(10), 10), (lambda: D.range(10).take(3), 3),
    (lambda: D.range(3).take(10), 3), (lambda: D.range(10).skip(4), 6),
    (lambda: D.range(3).skip(5), 0), (lambda: D.range(3).repeat(2), 6),
    (lambda: D.range(3).repeat(), INF), (lambda: D.range(0).repeat(), 0),
    (lambda: _unknown(3), UNKNOWN), (lambda: D.range(4).map(lambda x: x), UNKNOWN),
    (lambda: D.range(10).batch(3), 4), (lambda: D.range(10).batch(3, drop_remainder=True), 3),
    (lambda: D.range(5).padded_batch(2, []), 3),
    (lambda: D.zip((D.range(3), D.range(5))), 3),
    (lambda: D.zip((D.range(3).repeat(), D.range(5))), 5),
    (lambda: D.zip((D.range(3).repeat(), _unknown(5))), UNKNOWN),
    (lambda: D.range(3).concatenate(D.range(4)), 7),
    (lambda: D.range(3).concatenate(D.range(2).repeat()), INF),
    (lambda: D.from_tensor_slices(np.arange(6)), 6), (lambda: D.from_tensors(1), 1),
    (lambda: D.range(5).shuffle(2), 5), (lambda: D.range(3).repeat().take(7), 7),
    (lambda: _unknown(3).take(5), UNKNOWN), (lambda: _unknown(3).skip(5), UNKNOWN),
    (lambda: D.range(3).repeat().skip(5), INF), (lambda: _unknown(3).repeat(), INF),
    (lambda: D.range(3).flat_map(lambda x: D.range(x)), UNKNOWN),
    (lambda: D.range(10).shard(3, 1), 3), (lambda: D.range(7).window(3), 3),
    (lambda: D.range(10).window(3, shift=2, stride=2, drop_remainder=True), 3),
    (lambda: D.range(10).window(3, shift=2, stride=2), 5),
    (lambda: D.range(6).batch(2).unbatch(), UNKNOWN),
    (lambda: D.from_generator(lambda: iter([1]), tf.int64), UNKNOWN),
    (lambda: D.range(4).prefetch(1), 4), (lambda: D.range(4).cache(), 4),
    (lambda: D.range(4).enumerate(), 4),
]


def test_cardinalities_equal_tensorflows(sess):
    counts = [X.cardinality(make()) for make, _ in CASES]
    assert counts[0].dtype == tf.int64 and counts[0].shape.ndims == 0
    assert [int(v) for v in sess.run(counts)] == [want for _, want in CASES]


def test_evaluated_when_run(sess):
    n = tf.placeholder(tf.int64, [])
    assert sess.run(X.cardinality(D.range(n)), {n: 5}) == 5


def test_assert_cardinality(sess):
    ds = _unknown(5).filter(lambda x: x < 3).apply(X.assert_cardinality(3))
    assert sess.run(X.cardinality(ds)) == 3
    nxt = ds.make_one_shot_iterator().get_next()
    assert [sess.run(nxt) for _ in range(3)] == [0, 1, 2]
    for n, message in ((2, "expected to contain 2 elements but contained at least 3"),
                       (4, "expected to contain 4 elements but contained only 3")):
        nxt = D.range(3).apply(X.assert_cardinality(n)).make_one_shot_iterator().get_next()
        with pytest.raises(tf.errors.FailedPreconditionError, match=message):
            for _ in range(5):
                sess.run(nxt)
