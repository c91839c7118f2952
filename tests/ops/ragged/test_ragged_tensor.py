"""RaggedTensor factories, row partition views, fetch and feed (values checked with
TF 2.21 compat.v1 graph mode, or by hand from the row partition)."""
import numpy as np
import pytest

import tensorweave as tf

R = tf.RaggedTensor
VALUES = [1, 2, 3, 4, 5]
ROWS = [[1, 2], [], [3, 4, 5]]


@pytest.mark.parametrize("build", [
    lambda: R.from_row_splits(VALUES, [0, 2, 2, 5]),
    lambda: R.from_row_lengths(VALUES, [2, 0, 3]),
    lambda: R.from_row_starts(VALUES, [0, 2, 2]),
    lambda: R.from_row_limits(VALUES, [2, 2, 5]),
    lambda: R.from_value_rowids(VALUES, [0, 0, 2, 2, 2]),
    lambda: R.from_value_rowids(VALUES, [0, 0, 2, 2, 2], nrows=3),
])
def test_factories_build_the_same_rows(sess, build):
    rt = build()
    assert rt.dtype == tf.int32 and rt.ragged_rank == 1
    assert rt.shape.as_list() == [None, None] or rt.shape.as_list() == [3, None]
    value = sess.run(rt)
    assert isinstance(value, tf.ragged.RaggedTensorValue)
    assert value.to_list() == ROWS
    np.testing.assert_array_equal(value.row_splits, [0, 2, 2, 5])


def test_value_rowids_with_trailing_empty_rows(sess):
    rt = R.from_value_rowids([1, 2, 3, 4], [0, 0, 2, 2], nrows=4)
    assert sess.run(rt).to_list() == [[1, 2], [], [3, 4], []]


def test_partition_views(sess):
    rt = R.from_row_splits(VALUES, [0, 2, 2, 5])
    lengths, rowids, nrows, starts, limits, bounding = sess.run(
        [rt.row_lengths(), rt.value_rowids(), rt.nrows(), rt.row_starts(),
         rt.row_limits(), rt.bounding_shape()])
    assert lengths.tolist() == [2, 0, 3] and rowids.tolist() == [0, 0, 2, 2, 2]
    assert nrows == 3 and starts.tolist() == [0, 2, 2] and limits.tolist() == [2, 2, 5]
    assert bounding.tolist() == [3, 3]
    assert rt.nrows(out_type=tf.int32).dtype == tf.int32


def test_nested_factories_and_views(sess):
    rt = R.from_nested_row_splits(VALUES[:4], [[0, 1, 3], [0, 2, 3, 4]])
    same = R.from_nested_row_lengths(VALUES[:4], [[1, 2], [2, 1, 1]])
    assert rt.ragged_rank == 2 and rt.shape.as_list() == [2, None, None]
    assert sess.run(rt).to_list() == sess.run(same).to_list() == [[[1, 2]], [[3], [4]]]
    rt2 = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    lengths = sess.run(rt2.nested_row_lengths())
    assert [x.tolist() for x in lengths] == [[2, 0, 1], [2, 1, 3]]
    assert sess.run(rt2.row_lengths(axis=2)).to_list() == [[2, 1], [], [3]]
    assert sess.run(rt2.bounding_shape()).tolist() == [3, 2, 3]
    assert sess.run(rt2.bounding_shape(axis=1)) == 2
    empty = tf.ragged.constant([[], []], dtype=tf.int32)
    assert sess.run(empty.bounding_shape()).tolist() == [2, 0]


@pytest.mark.parametrize("build", [
    lambda: R.from_row_splits([1, 2, 3], [1, 2, 3]),       # does not start at 0
    lambda: R.from_row_splits([1, 2, 3], [0, 2, 1, 3]),    # decreases
    lambda: R.from_row_splits([1, 2, 3], [0, 2]),          # does not end at nvals
    lambda: R.from_row_lengths([1, 2, 3], [4, -1]),
    lambda: R.from_row_lengths([1, 2, 3], [1, 1]),
    lambda: R.from_row_starts([1, 2, 3], [1, 2]),
    lambda: R.from_row_starts([1, 2, 3], [0, 2, 1]),
    lambda: R.from_row_limits([1, 2, 3], [1, 2]),
    lambda: R.from_value_rowids([1, 2, 3, 4], [0, 2, 1, 2]),
    lambda: R.from_value_rowids([1, 2, 3, 4], [-1, 0, 1, 2]),
    lambda: R.from_sparse(tf.SparseTensor([[0, 0], [0, 2], [2, 1]], [1, 2, 3], [4, 5])),
    lambda: R.from_sparse(tf.SparseTensor([[2, 0], [0, 2]], [1, 2], [4, 5])),
])
def test_validation_fails_with_invalid_argument(sess, build):
    # TF fails the step; a check on constants may already fail while building
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(build())


def test_validation_of_fed_splits_fails_at_run_time(sess):
    splits = tf.placeholder(tf.int64, [None])
    rt = R.from_row_splits([1, 2, 3], splits)
    assert sess.run(rt, {splits: [0, 1, 3]}).to_list() == [[1], [2, 3]]
    for bad in ([1, 2, 3], [0, 2, 1, 3], [0, 2]):
        with pytest.raises(tf.errors.InvalidArgumentError, match="from_row_splits"):
            sess.run(rt, {splits: bad})


def test_validate_false_skips_the_checks(sess):
    rt = R.from_row_splits([1, 2, 3], [0, 1, 3], validate=False)
    assert sess.run(rt).to_list() == [[1], [2, 3]]


def test_build_time_errors(graph):
    with pytest.raises(ValueError, match="must have rank 1"):
        R.from_row_splits([1, 2, 3], [[0, 2]])
    with pytest.raises(ValueError, match="out of bounds"):
        R.from_row_splits([1, 2, 3], tf.zeros([0], tf.int64))
    with pytest.raises(ValueError, match="row_splits must have dtype int32 or int64"):
        R.from_row_splits([1, 2, 3], [0.0, 3.0])
    with pytest.raises(ValueError, match="Expected nrows >= value_rowids"):
        R.from_value_rowids([1, 2, 3, 4], [0, 0, 2, 2], nrows=2)
    with pytest.raises(ValueError):
        R.from_value_rowids([1, 2, 3, 4], [0, 0, 2])
    with pytest.raises(ValueError, match="constructor is private"):
        R([1], [0, 1])
    with pytest.raises(ValueError, match="rank\\(st_input\\) must be 2"):
        R.from_sparse(tf.SparseTensor([[0, 0, 0]], [1], [4, 5, 6]))


def test_int32_row_splits_are_kept(graph):
    rt = R.from_row_lengths([1, 2, 3], tf.constant([1, 2], tf.int32))
    assert rt.row_splits.dtype == tf.int32
    assert R.from_row_splits([1, 2, 3], [0, 3]).row_splits.dtype == tf.int64
    assert rt.with_row_splits_dtype(tf.int64).row_splits.dtype == tf.int64


def test_with_values_and_flat_values(sess):
    rt = R.from_row_splits(VALUES, [0, 2, 2, 5])
    assert rt.with_values(tf.zeros([5, 2])).shape.as_list() == [3, None, 2]
    rt2 = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    flat = sess.run(rt2.with_flat_values(tf.ones([6])))
    assert flat.to_list() == [[[1.0, 1.0], [1.0]], [], [[1.0, 1.0, 1.0]]]
    assert rt2.flat_values.shape.as_list() == [6]
    assert len(rt2.nested_row_splits) == 2


def test_graph_mode_only_and_no_dense_conversion(graph):
    rt = R.from_row_splits(VALUES, [0, 2, 2, 5])
    with pytest.raises(ValueError, match="to_list can only be used in eager mode"):
        rt.to_list()
    with pytest.raises(TypeError, match="may not be used as a boolean"):
        bool(rt)
    with pytest.raises(TypeError, match="Failed to convert elements of tf.RaggedTensor"):
        tf.convert_to_tensor(rt)


def test_value_fetch_structure(sess):
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    value = sess.run({"a": [nested]})["a"][0]
    assert value.ragged_rank == 2 and value.shape == (2, None, None)
    assert isinstance(value.values, tf.ragged.RaggedTensorValue)
    assert value.flat_values.tolist() == [1, 2, 3, 4] and value.dtype == np.int32
    assert [s.tolist() for s in value.nested_row_splits] == [[0, 2, 3], [0, 2, 3, 4]]
    assert str(value) == "<tf.RaggedTensorValue [[[1, 2], [3]], [[4]]]>"
    assert repr(sess.run(R.from_row_splits(VALUES, [0, 5]))) == (
        "tf.RaggedTensorValue(values=array([1, 2, 3, 4, 5], dtype=int32), "
        "row_splits=array([0, 5]))")


def test_placeholder_feed(sess):
    p = tf.ragged.placeholder(tf.int32, 2, [2])
    assert p.shape.as_list() == [None, None, None, 2]
    assert p.flat_values.name == "RaggedPlaceholder/flat_values:0"
    assert p.row_splits.name == "RaggedPlaceholder/row_splits_0:0"
    fed = tf.ragged.constant_value([[[[1, 2]], []], [[[3, 4], [5, 6]]]], ragged_rank=2)
    out = sess.run(p + 1, {p: fed})
    assert out.to_list() == [[[[2, 3]], []], [[[4, 5], [6, 7]]]]
    with pytest.raises(TypeError, match="RaggedTensorValue"):
        sess.run(p + 1, {p: [[[1, 2]]]})
