"""Dataset.map with num_parallel_calls (data/parallel_map.py): elements mapped on threads,
handed out in input order, errors where sequential mapping has them."""
import threading

import numpy as np
import pytest

import tensorweave as tf


def test_the_same_elements_in_the_same_order(drain):
    # the first two calls meet at a barrier: only calls running at once get past it
    meet = threading.Barrier(2, timeout=20)

    def record(x):
        if x < 2:
            meet.wait()
        return x
    slow = tf.data.Dataset.range(40).map(
        lambda x: (x * x, tf.py_func(record, [x], tf.int64, stateful=False)),
        num_parallel_calls=4)
    got = drain(slow)
    assert [(int(a), int(b)) for a, b in got] == [(i * i, i) for i in range(40)]
    auto = tf.data.Dataset.range(10).map(lambda x: x + 1,
                                         num_parallel_calls=tf.data.experimental.AUTOTUNE)
    assert drain(auto.batch(4)) and [int(v) for v in drain(auto)] == list(range(1, 11))


def test_an_error_arrives_with_its_element(sess):
    def check(x):
        if x == 5:
            raise ValueError("bad five")
        return x
    ds = tf.data.Dataset.range(10).map(
        lambda x: tf.py_func(check, [x], tf.int64), num_parallel_calls=3)
    nxt = ds.make_one_shot_iterator().get_next()
    assert [sess.run(nxt) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad five"):
        sess.run(nxt)
    skipped = tf.data.Dataset.range(10).map(
        lambda x: tf.py_func(check, [x], tf.int64), num_parallel_calls=3).apply(
        tf.data.experimental.ignore_errors())
    nxt = skipped.make_one_shot_iterator().get_next()
    assert [sess.run(nxt) for _ in range(9)] == [0, 1, 2, 3, 4, 6, 7, 8, 9]


def test_early_stops_and_bad_counts(sess, drain):
    taken = tf.data.Dataset.range(1000).repeat().map(lambda x: x * 2,
                                                     num_parallel_calls=8).take(3)
    assert [int(v) for v in drain(taken)] == [0, 2, 4]
    bad = tf.data.Dataset.range(3).map(lambda x: x, num_parallel_calls=-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_parallel_calls must be "
                                                             "greater than zero"):
        sess.run(bad.make_one_shot_iterator().get_next())
    images = np.random.RandomState(0).randint(0, 255, (6, 8, 8, 3)).astype(np.uint8)
    pipeline = tf.data.Dataset.from_tensor_slices(images).map(
        lambda im: tf.image.resize_images(tf.image.convert_image_dtype(im, tf.float32),
                                          [4, 4]), num_parallel_calls=3)
    sequential = tf.data.Dataset.from_tensor_slices(images).map(
        lambda im: tf.image.resize_images(tf.image.convert_image_dtype(im, tf.float32),
                                          [4, 4]))
    np.testing.assert_array_equal(np.stack(drain(pipeline)), np.stack(drain(sequential)))
