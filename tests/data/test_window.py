"""Dataset.window (data/dataset_ops.py): the same windows as TensorFlow 2.21."""
import pytest

import tensorweave as tf


def _windows(drain, ds, size):
    return [b.tolist() for b in drain(ds.flat_map(lambda w: w.batch(size)))]


def test_windows_by_size_shift_stride_and_remainder(drain):
    r7 = tf.data.Dataset.range(7)
    assert _windows(drain, r7.window(3), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _windows(drain, r7.window(3, shift=1), 3) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6], [5, 6], [6]]
    assert _windows(drain, tf.data.Dataset.range(10).window(3, shift=2, stride=2), 3) == [
        [0, 2, 4], [2, 4, 6], [4, 6, 8], [6, 8], [8]]
    assert _windows(drain, r7.window(3, shift=2, drop_remainder=True), 3) == [
        [0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert _windows(drain, r7.window(2, shift=5), 3) == [[0, 1], [5, 6]]


def test_structured_elements_and_endless_input(drain):
    pairs = tf.data.Dataset.range(5).map(lambda x: (x, x * 10)).window(2)
    # TF 2.21: a window's component is of its own spec, for all three properties
    assert str(pairs.output_classes[0]) == (
        "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))")
    assert pairs.element_spec[0] is pairs.output_classes[0]
    zipped = pairs.flat_map(lambda a, b: tf.data.Dataset.zip((a.batch(2), b.batch(2))))
    assert [(a.tolist(), b.tolist()) for a, b in drain(zipped)] == [
        ([0, 1], [0, 10]), ([2, 3], [20, 30]), ([4], [40])]
    keyed = tf.data.Dataset.range(5).map(lambda x: {"a": x}).window(2)
    assert _windows(drain, keyed.map(lambda d: d["a"]), 2) == [[0, 1], [2, 3], [4]]
    endless = tf.data.Dataset.range(3).repeat().window(2, shift=1).flat_map(
        lambda w: w.batch(2)).take(4)
    assert [b.tolist() for b in drain(endless)] == [[0, 1], [1, 2], [2, 0], [0, 1]]


def test_a_window_size_below_one(sess):
    ds = tf.data.Dataset.range(3).window(0).flat_map(lambda w: w)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Window size must be greater than zero, but got 0."):
        sess.run(ds.make_one_shot_iterator().get_next())
