"""Dataset.rebatch (data/rebatching.py): one size or a list of sizes used in turn,
drop_remainder, sizes of 0, the static batch dimension, and the errors. The values,
element specs, error classes and messages are TensorFlow 2.21's (compat.v1, graph mode)
for the same programs."""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset


def _lists(value):
    return tf.nest.map_structure(lambda v: np.asarray(v).tolist(), value)


@pytest.mark.parametrize("make,spec_shape,values", [
    (lambda: D.range(8).batch(4).rebatch([2, 1, 1]), [None],
     [[0, 1], [2], [3], [4, 5], [6], [7]]),
    (lambda: D.range(10).batch(4).rebatch([3, 2]), [None],
     [[0, 1, 2], [3, 4], [5, 6, 7], [8, 9]]),
    (lambda: D.range(9).batch(4).rebatch([3, 2], drop_remainder=True), [None],
     [[0, 1, 2], [3, 4], [5, 6, 7]]),
    (lambda: D.range(7).batch(2).rebatch([2, 4], drop_remainder=True), [None],
     [[0, 1], [2, 3, 4, 5]]),
    (lambda: D.range(9).batch(3).rebatch([3, 3]), [None], [[0, 1, 2], [3, 4, 5], [6, 7, 8]]),
    (lambda: D.range(9).batch(4, drop_remainder=True).rebatch([2, 2]), [2],
     [[0, 1], [2, 3], [4, 5], [6, 7]]),
    (lambda: D.range(9).batch(4, drop_remainder=True).rebatch(2), [2],
     [[0, 1], [2, 3], [4, 5], [6, 7]]),
    (lambda: D.range(9).batch(4, drop_remainder=True).rebatch(3), [None],
     [[0, 1, 2], [3, 4, 5], [6, 7]]),
    (lambda: D.range(8).batch(4).rebatch([2, 2], drop_remainder=True), [2],
     [[0, 1], [2, 3], [4, 5], [6, 7]]),
    (lambda: D.range(7).batch(2).rebatch([3], drop_remainder=tf.constant(True)), [3],
     [[0, 1, 2], [3, 4, 5]]),
    (lambda: D.range(6).batch(2).rebatch(np.array([4, 2], np.int32)), [None],
     [[0, 1, 2, 3], [4, 5]]),
    (lambda: D.range(6).batch(2).rebatch(
        tf.placeholder_with_default(tf.constant([1, 2], tf.int64), [None])), [None],
     [[0], [1, 2], [3], [4, 5]]),
    (lambda: D.range(5).batch(2).rebatch([3, 1]).repeat(2), [None],
     [[0, 1, 2], [3], [4], [0, 1, 2], [3], [4]]),
    (lambda: D.from_tensor_slices(["a", "b", "c", "d"]).batch(3).rebatch([2, 1]), [None],
     [[b"a", b"b"], [b"c"], [b"d"]]),
])
def test_sizes_in_turn(outcomes, make, spec_shape, values):
    ds = make()
    assert ds.output_shapes.as_list() == spec_shape
    assert outcomes(_lists, ds) == values


@pytest.mark.parametrize("make,values", [
    (lambda: D.range(6).batch(2).rebatch([2, 0, 1]), [[0, 1], [], [2], [3, 4], [], [5]]),
    (lambda: D.range(4).batch(2).rebatch([2, 0]), [[0, 1], [], [2, 3], []]),
    (lambda: D.range(3).batch(2).rebatch([0, 2]), [[], [0, 1], [], [2]]),
    (lambda: D.range(4).batch(2).rebatch([3, 0], drop_remainder=True), [[0, 1, 2], []]),
    (lambda: D.from_tensor_slices(["a", "b"]).batch(2).rebatch([0, 3]), [[], [b"a", b"b"]]),
])
def test_sizes_of_zero_give_empty_batches(outcomes, make, values):
    # the input's end ends the dataset, also before a size of 0 (TF's)
    assert outcomes(_lists, make()) == values


def test_empty_batches_of_unknown_and_inner_dimensions(sess, outcomes):
    unknown = D.range(6).batch(2).map(lambda x: tf.placeholder_with_default(x, None))
    assert outcomes(_lists, unknown.rebatch([0, 3])) == [[], [0, 1, 2], [], [3, 4, 5], []]
    pairs = D.range(4).map(lambda x: (x, tf.fill([3], x))).batch(2).rebatch([0, 4])
    nxt = tf.data.make_one_shot_iterator(pairs).get_next()
    empty = sess.run(nxt)
    assert empty[0].shape == (0,) and empty[1].shape == (0, 3)


def test_components_rebatch_together(outcomes):
    ds = D.range(6).map(lambda x: (x, tf.fill([2], x))).batch(4).rebatch([1, 3])
    assert repr(ds.element_spec) == (
        "(TensorSpec(shape=(None,), dtype=tf.int64, name=None), TensorSpec(shape=(None, 2), "
        "dtype=tf.int64, name=None))")
    assert outcomes(_lists, ds) == [([0], [[0, 0]]), ([1, 2, 3], [[1, 1], [2, 2], [3, 3]]),
                               ([4], [[4, 4]]), ([5], [[5, 5]])]
    static = D.range(8).map(lambda x: (x, tf.fill([2], x))).batch(4, drop_remainder=True)
    assert repr(static.rebatch(2).element_spec) == (
        "(TensorSpec(shape=(2,), dtype=tf.int64, name=None), TensorSpec(shape=(2, 2), "
        "dtype=tf.int64, name=None))")


def test_sparse_and_ragged_components(sess):
    sparse = D.range(4).map(lambda x: tf.SparseTensor([[0]], [x], [3])).batch(2)
    ds = sparse.rebatch([1, 3])
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([None, 3]), tf.int64)"
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    values = [sess.run(nxt), sess.run(nxt)]
    np.testing.assert_array_equal(values[0].indices, [[0, 0]])
    np.testing.assert_array_equal(values[0].dense_shape, [1, 3])
    np.testing.assert_array_equal(values[1].indices, [[0, 0], [1, 0], [2, 0]])
    np.testing.assert_array_equal(values[1].values, [1, 2, 3])
    np.testing.assert_array_equal(values[1].dense_shape, [3, 3])
    kept = D.range(4).map(lambda x: tf.SparseTensor([[0]], [x], [3])).batch(
        2, drop_remainder=True).rebatch(1)
    assert repr(kept.element_spec) == "SparseTensorSpec(TensorShape([1, 3]), tf.int64)"
    ragged = D.range(4).map(lambda x: tf.RaggedTensor.from_row_lengths(tf.range(x), [x]))
    ds = ragged.batch(2).rebatch([3, 1])
    assert repr(ds.element_spec) == \
        "RaggedTensorSpec(TensorShape([None, 1, None]), tf.int64, 2, tf.int64)"
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    assert sess.run(nxt).to_list() == [[[]], [[0]], [[0, 1]]]
    assert sess.run(nxt).to_list() == [[[0, 1, 2]]]


def test_a_failed_input_batch_fails_one_get_next(outcomes):
    # the rows read before it are dropped and the same size is tried again
    fails_at_2 = D.range(8).batch(2).map(
        lambda b: tf.debugging.check_numerics(1.0 / tf.cast(b - 2, tf.float32), "boom"))
    values = outcomes(_lists, fails_at_2.rebatch([3, 1]))
    assert values[0][0] is tf.errors.InvalidArgumentError
    assert "boom : Tensor had Inf values" in values[0][1]
    np.testing.assert_allclose(values[1], [0.5, 1 / 3, 0.25])
    np.testing.assert_allclose(values[2], [0.2])
    assert len(values) == 3
    kept = outcomes(_lists, fails_at_2.rebatch([3, 1]).apply(tf.data.experimental.ignore_errors()))
    assert len(kept) == 2


def test_input_elements_that_are_no_batches(outcomes):
    scalar_then_rows = D.from_tensor_slices([0, 1, 2]).map(
        lambda x: tf.placeholder_with_default(tf.fill(tf.fill([x % 2], 2), x), None))
    values = outcomes(_lists, scalar_then_rows.rebatch([3]))
    assert values[0] == (tf.errors.InvalidArgumentError,
                         "Input element must have a non-scalar value in each component.")
    mismatched = D.zip((D.range(6).batch(2, drop_remainder=True),
                        D.range(6).batch(3, drop_remainder=True))).rebatch([1, 3])
    assert outcomes(_lists, mismatched)[0] == (
        tf.errors.InvalidArgumentError,
        "Input element must have the same batch size in each component. Component 0 had "
        "size 2 but component 1 had size, 3.")


def test_rows_of_other_shapes_cannot_be_joined(outcomes):
    ds = D.range(4).map(lambda x: tf.fill([x], x)).padded_batch(2, [None]).rebatch([3, 0])
    (cls, message), = outcomes(_lists, ds)[:1]
    assert cls is tf.errors.FailedPreconditionError  # TF's class
    assert "[1]" in message and "[3]" in message


@pytest.mark.parametrize("make,error,message", [
    (lambda: D.range(6).batch(2).rebatch([[1, 2]]), ValueError,
     "Invalid `batch_sizes`. Expected `batch_sizes` to be a scalar or a vector. Received "
     "`batch_sizes` of rank 2."),
    (lambda: D.range(6).rebatch([1, 2]), ValueError,
     "Unbatching a tensor is only supported for rank >= 1"),
    (lambda: D.range(6).rebatch(2, drop_remainder=True), ValueError,
     "Unbatching a tensor is only supported for rank >= 1"),
    (lambda: D.range(6).rebatch(tf.constant(2, tf.int64)), ValueError,
     "Invalid `batch_sizes`. Expected dataset with rank of >= 1 but found a dataset with "
     "scalar elements. Fix the issue by adding the `batch` transformation to the dataset."),
    (lambda: D.zip((D.range(6).batch(2, drop_remainder=True),
                    D.range(6).batch(3, drop_remainder=True))).rebatch(2), ValueError,
     "Invalid `input_dataset.` The batch dimension of component 0 is 2, while the batch "
     "dimension of component i is [2 3]."),
    (lambda: D.range(6).batch(2).rebatch([1.5]), TypeError, None),
])
def test_build_errors(graph, make, error, message):
    with pytest.raises(error) as info:
        make()
    if message is not None:
        assert str(info.value) == message


def test_empty_list_of_sizes_is_a_value_error(graph):
    # TF fails with an IndexError of its own code here
    with pytest.raises(ValueError, match="at least one batch size"):
        D.range(6).batch(2).rebatch([])


@pytest.mark.parametrize("sizes,message", [
    ([[1, 2]], "`batch_sizes` must be a scalar or a vector."),
    ([2, -1], "`batch_sizes` must hold at least one size and no negative one"),
    (np.zeros(0, np.int64), "`batch_sizes` must hold at least one size"),
])
def test_run_time_size_errors(sess, sizes, message):
    # TF's message for a matrix; TF's kernel crashes on a negative size or none
    fed = tf.placeholder_with_default(tf.constant(sizes, tf.int64), None)
    nxt = tf.data.make_one_shot_iterator(D.range(6).batch(2).rebatch(fed)).get_next()
    with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace("`", ".")):
        sess.run(nxt)
