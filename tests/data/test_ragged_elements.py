"""RaggedTensor components of tf.data elements (data/ragged_elements.py,
data/ragged_batching.py): the elements, specs, classes and static shapes TensorFlow
2.21's compat.v1 graph mode gives for these pipelines (recorded as literals)."""
import numpy as np
import pytest

import tensorweave as tf


def _lists(values):
    """Fetched elements as lists (a RaggedTensorValue or an array)."""
    return [v.to_list() if hasattr(v, "to_list") else np.asarray(v).tolist()
            for v in values]


def _spec(shape, dtype, ragged_rank, splits=None):
    return tf.RaggedTensorSpec(shape, dtype, ragged_rank, splits or tf.int64)


ROWS = [[1, 2], [3], [], [4, 5, 6]]


def test_slices_of_a_ragged_tensor_are_dense_rows(drain):
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    spec = _spec([None], tf.int32, 0)
    assert ds.element_spec == spec and ds.output_classes == spec
    assert ds.output_types == tf.int32 and ds.output_shapes.as_list() == [None]
    row = ds.make_one_shot_iterator().get_next()
    assert isinstance(row, tf.Tensor) and row.shape.as_list() == [None]
    assert _lists(drain(ds)) == ROWS


def test_from_tensors_and_rows_of_a_two_level_ragged_tensor(drain):
    rt = tf.ragged.constant(ROWS)
    whole = tf.data.Dataset.from_tensors(rt)
    assert whole.element_spec == _spec([4, None], tf.int32, 1)
    got = whole.make_one_shot_iterator().get_next()
    assert isinstance(got, tf.RaggedTensor) and got.shape.as_list() == [4, None]
    assert _lists(drain(whole)) == [ROWS]
    nested = tf.data.Dataset.from_tensor_slices(
        tf.ragged.constant([[[1, 2], [3]], [[4]], [[5], [], [6]]]))
    assert nested.element_spec == _spec([None, None], tf.int32, 1)
    assert _lists(drain(nested)) == [[[1, 2], [3]], [[4]], [[5], [], [6]]]


def test_batch_adds_a_ragged_dimension_and_unbatch_removes_it(drain):
    rows = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    batches = rows.batch(3)
    assert batches.element_spec == _spec([None, None], tf.int32, 1)
    assert rows.batch(2, drop_remainder=True).element_spec == _spec([2, None], tf.int32, 1)
    assert _lists(drain(batches)) == [[[1, 2], [3], []], [[4, 5, 6]]]
    again = batches.unbatch()
    assert again.element_spec == _spec([None], tf.int32, 0)
    assert _lists(drain(again)) == ROWS
    # a ragged rank 2 tensor batches into ragged rank 3
    two = tf.data.Dataset.from_tensors(
        tf.ragged.constant([[[1, 2], [3]], [[4]], [[5], [], [6]]])).repeat(3)
    assert two.batch(2).element_spec == _spec([None, 3, None, None], tf.int32, 3)
    assert _lists(drain(two.batch(2))) == [[[[[1, 2], [3]], [[4]], [[5], [], [6]]]] * 2,
                                          [[[[1, 2], [3]], [[4]], [[5], [], [6]]]]]
    assert two.unbatch().element_spec == _spec([None, None], tf.int32, 1)
    assert _lists(drain(two.batch(2).unbatch())) == [[[[1, 2], [3]], [[4]], [[5], [], [6]]]] * 3


def test_rows_of_dense_rows_have_ragged_rank_minus_one(drain):
    rows = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    scalars = rows.unbatch()
    assert scalars.element_spec == _spec([], tf.int32, -1)
    assert repr(scalars.element_spec) == \
        "RaggedTensorSpec(TensorShape([]), tf.int32, -1, tf.int64)"
    assert _lists(drain(scalars)) == [1, 2, 3, 4, 5, 6]
    assert _lists(drain(scalars.map(lambda x: x * 2).take(2))) == [2, 4]
    again = scalars.batch(4)
    assert again.element_spec == _spec([None], tf.int32, 0)
    assert _lists(drain(again)) == [[1, 2, 3, 4], [5, 6]]


def test_map_functions_take_and_return_ragged_tensors(drain):
    made = tf.data.Dataset.range(4).map(lambda x: tf.ragged.range(x))
    assert made.element_spec == _spec([1, None], tf.int64, 1)
    assert made.batch(2).element_spec == _spec([None, 1, None], tf.int64, 2)
    assert _lists(drain(made.batch(2))) == [[[[]], [[0]]], [[[0, 1]], [[0, 1, 2]]]]
    batches = tf.data.Dataset.from_tensor_slices(
        tf.ragged.constant([[1., 2.], [3.], [], [4., 5., 6.]])).batch(2)
    sums = batches.map(lambda rt: tf.reduce_sum(rt, axis=1))
    assert _lists(drain(sums)) == [[3.0, 3.0], [0.0, 15.0]]
    assert _lists(drain(batches.map(lambda rt: rt.row_lengths()))) == [[2, 1], [0, 3]]
    assert _lists(drain(batches.map(lambda rt: rt.to_tensor()))) == [
        [[1.0, 2.0], [3.0, 0.0]], [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]]
    keyed = tf.data.Dataset.range(3).map(
        lambda x: {"a": tf.ragged.range(x + 1), "b": x}).batch(2)
    assert keyed.element_spec["a"] == _spec([None, 1, None], tf.int64, 2)
    assert [(_lists([e["a"]])[0], e["b"].tolist()) for e in drain(keyed)] == [
        ([[[0]], [[0, 1]]], [0, 1]), ([[[0, 1, 2]]], [2])]


def test_ragged_beside_dense_components_and_other_transformations(drain):
    rows = tf.data.Dataset.from_tensor_slices(
        tf.ragged.constant([[1., 2.], [3.], [], [4., 5., 6.]]))
    pair = tf.data.Dataset.from_tensor_slices((tf.ragged.constant(ROWS), [1, 2, 3, 4]))
    assert pair.output_classes == (_spec([None], tf.int32, 0), tf.Tensor)
    assert [(r.to_list(), n.tolist()) for r, n in drain(pair.batch(2))] == [
        ([[1, 2], [3]], [1, 2]), ([[], [4, 5, 6]], [3, 4])]
    assert _lists(drain(rows.filter(lambda r: tf.size(r) > 1))) == [[1., 2.], [4., 5., 6.]]
    assert _lists(drain(rows.concatenate(rows).batch(8))) == [
        [[1., 2.], [3.], [], [4., 5., 6.]] * 2]
    shuffled = rows.cache().shuffle(4, seed=1).prefetch(2).repeat(2)
    assert sorted(map(str, _lists(drain(shuffled)))) == sorted(
        map(str, [[1., 2.], [3.], [], [4., 5., 6.]] * 2))
    windows = rows.window(3, shift=1).flat_map(lambda w: w.batch(3))
    assert windows.element_spec == _spec([None, None], tf.float32, 1)
    assert _lists(drain(windows)) == [[[1., 2.], [3.], []], [[3.], [], [4., 5., 6.]],
                                      [[], [4., 5., 6.]], [[4., 5., 6.]]]
    strings = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([["a", "b"], [], ["c"]]))
    assert _lists(drain(strings.batch(2))) == [[[b"a", b"b"], []], [[b"c"]]]


def test_int32_row_splits_and_a_ragged_tensor_value(drain):
    rt = tf.RaggedTensor.from_row_splits([1., 2., 3.], tf.constant([0, 1, 3], tf.int32))
    ds = tf.data.Dataset.from_tensor_slices(rt).batch(2)
    assert ds.element_spec == _spec([None, None], tf.float32, 1, tf.int32)
    got = ds.make_one_shot_iterator().get_next()
    assert got.row_splits.dtype == tf.int32
    [value] = drain(ds)
    assert value.to_list() == [[1.0], [2.0, 3.0]] and value.row_splits.dtype == np.int32
    rtv = tf.ragged.constant_value([[1, 2], [3]])
    assert _lists(drain(tf.data.Dataset.from_tensor_slices(rtv))) == [[1, 2], [3]]


def test_an_iterator_from_the_output_classes(sess):
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1., 2.], [3.]])).batch(2)
    it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes,
                                         output_classes=ds.output_classes)
    got = it.get_next()
    assert isinstance(got, tf.RaggedTensor) and got.ragged_rank == 1
    sess.run(it.make_initializer(ds))
    assert sess.run(got).to_list() == [[1.0, 2.0], [3.0]]


def test_padded_batch_refuses_ragged_components():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    with pytest.raises(TypeError, match=r"not a subclass of TensorSpec: `RaggedTensorSpec\("
                       r"TensorShape\(\[None\]\), tf.int32, 0, tf.int64\)`"):
        ds.padded_batch(2, padded_shapes=[None])


def test_batching_rows_of_other_inner_dimensions_fails(drain):
    ds = tf.data.Dataset.range(1, 3).map(lambda x: tf.RaggedTensor.from_row_lengths(
        tf.ones(tf.stack([x, x])), [x]))
    assert ds.element_spec == _spec([1, None, None], tf.float32, 1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        drain(ds.batch(2))


def test_dense_to_ragged_batch(drain):
    vectors = tf.data.Dataset.range(5).map(lambda x: tf.range(x))
    ragged = vectors.apply(tf.data.experimental.dense_to_ragged_batch(2))
    assert ragged.element_spec == _spec([None, None], tf.int64, 1)
    assert ragged.output_classes == _spec([None, None], tf.int64, 1)
    assert _lists(drain(ragged)) == [[[], [0]], [[0, 1], [0, 1, 2]], [[0, 1, 2, 3]]]
    # the last unknown dimension sets the ragged rank
    rows = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill(tf.stack([x, 2]), x))
    by_rows = rows.apply(tf.data.experimental.dense_to_ragged_batch(
        2, row_splits_dtype=tf.int32))
    assert by_rows.element_spec == _spec([None, None, 2], tf.int64, 1, tf.int32)
    assert _lists(drain(by_rows)) == [[[[1, 1]], [[2, 2], [2, 2]]], [[[3, 3], [3, 3], [3, 3]]]]
    two = tf.constant(2, tf.int64)
    cols = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill(tf.stack([two, x]), x))
    by_cols = cols.ragged_batch(2)
    assert by_cols.element_spec == _spec([None, 2, None], tf.int64, 2)
    assert _lists(drain(by_cols)) == [[[[1], [1]], [[2, 2], [2, 2]]], [[[3, 3, 3], [3, 3, 3]]]]
    # components of fully known shape batch densely
    dense = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [[1, 2], [3, 4], [5, 6]])).apply(
        tf.data.experimental.dense_to_ragged_batch(2, drop_remainder=True))
    assert dense.output_classes == (tf.Tensor, tf.Tensor)
    assert [(a.tolist(), b.tolist()) for a, b in drain(dense)] == [([1, 2], [[1, 2], [3, 4]])]
    pair = tf.data.Dataset.range(1, 4).map(lambda x: (tf.range(x), x)).ragged_batch(2)
    assert [(r.to_list(), n.tolist()) for r, n in drain(pair)] == [
        ([[0], [0, 1]], [1, 2]), ([[0, 1, 2]], [3])]
