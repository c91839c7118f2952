"""tf.map_fn over RaggedTensors and with tf.RaggedTensorSpec results, and
tf.RaggedTensorSpec itself (values and errors recorded from TF 2.21 compat.v1 graph
mode)."""
import numpy as np
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


@pytest.fixture
def rt():
    return tf.ragged.constant([[1, 2, 3], [], [4, 5]])


def test_dense_results_of_ragged_rows(sess, rt):
    assert _run(sess, tf.map_fn(tf.reduce_sum, rt, dtype=tf.int32)) == [6, 0, 9]
    assert _run(sess, tf.map_fn(tf.reduce_sum, rt, fn_output_signature=tf.int32)) == \
        [6, 0, 9]
    pairs = tf.map_fn(lambda r: tf.stack([tf.reduce_sum(r), tf.size(r)]), rt,
                      dtype=tf.int32)
    assert _run(sess, pairs) == [[6, 3], [0, 0], [9, 2]]
    assert pairs.shape.as_list() == [3, 2]
    summed = tf.map_fn(lambda x: tf.reduce_sum(x[0]) + x[1],
                       (rt, tf.constant([10, 20, 30])), dtype=tf.int32)
    assert _run(sess, summed) == [16, 20, 39]
    means = sess.run(tf.map_fn(tf.reduce_mean, tf.cast(rt, tf.float32), dtype=tf.float32))
    np.testing.assert_array_equal(means, [2.0, np.nan, 4.5])
    nested = tf.ragged.constant([[[1], [2, 3]], [[4]]])
    assert _run(sess, tf.map_fn(lambda r: tf.reduce_sum(r.flat_values), nested,
                                dtype=tf.int32)) == [6, 4]
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert _run(sess, tf.map_fn(lambda r: tf.reduce_sum(r, 0), inner, dtype=tf.int32)) == \
        [[1, 2], [8, 10]]
    out = tf.map_fn(lambda r: {"a": tf.reduce_sum(r), "b": tf.size(r)}, rt,
                    dtype={"a": tf.int32, "b": tf.int32})
    assert _run(sess, out["a"]) == [6, 0, 9] and _run(sess, out["b"]) == [3, 0, 2]


def test_ragged_results(sess, rt):
    spec = tf.RaggedTensorSpec(shape=[None], dtype=tf.int32)
    doubled = tf.map_fn(lambda r: r * 2, rt, fn_output_signature=spec)
    assert isinstance(doubled, tf.RaggedTensor)
    assert _run(sess, doubled) == [[2, 4, 6], [], [8, 10]]
    assert doubled.shape.as_list() == [3, None]
    assert _run(sess, tf.map_fn(lambda r: r * 2, rt, dtype=spec)) == [[2, 4, 6], [], [8, 10]]
    assert _run(sess, tf.map_fn(lambda r: r * 2, rt)) == [[2, 4, 6], [], [8, 10]]
    assert _run(sess, tf.map_fn(tf.range, tf.constant([2, 0, 3]),
                                fn_output_signature=spec)) == [[0, 1], [], [0, 1, 2]]
    both = tf.map_fn(lambda r: (r * 2, tf.size(r)), rt,
                     dtype=(tf.RaggedTensorSpec([None], tf.int32), tf.int32))
    assert _run(sess, both[0]) == [[2, 4, 6], [], [8, 10]] and _run(sess, both[1]) == [3, 0, 2]
    empty = tf.RaggedTensor.from_row_splits(tf.constant([], tf.int32),
                                            tf.constant([0], tf.int64))
    assert _run(sess, tf.map_fn(lambda r: r * 2, empty)) == []


def test_ragged_results_of_higher_ragged_rank(sess):
    two_rows = tf.constant([[1, 2], [3, 4]])

    def split_first(r):
        return tf.RaggedTensor.from_row_lengths(r, [1, tf.size(r) - 1])
    spec = tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32, ragged_rank=1)
    assert _run(sess, tf.map_fn(split_first, two_rows, fn_output_signature=spec)) == \
        [[[1], [2]], [[3], [4]]]
    for elems in (tf.ragged.constant([[1, 2, 3], [], [4, 5]], row_splits_dtype=tf.int32),
                  tf.ragged.constant([[[1], [2, 3]], [[4]]]),
                  tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)):
        same = tf.map_fn(lambda r: r, elems)
        assert same.row_splits.dtype == elems.row_splits.dtype
        assert _run(sess, same) == _run(sess, elems)


def test_signature_mismatches(sess, rt):
    def mismatch(fn, elems, spec, expected, got):
        with pytest.raises(ValueError) as info:
            tf.map_fn(fn, elems, fn_output_signature=spec)
        message = str(info.value)
        assert message.startswith("Error in map_fn:\n  Expected `fn` to return a:\n    "
                                  + expected + "\n  But it returned a:\n    " + got)
        assert message.endswith("To fix, update the `fn_output_signature` (or `dtype`) "
                                "argument to `map_fn`.")
    mismatch(lambda r: tf.expand_dims(r, 0), rt,
             tf.RaggedTensorSpec(shape=[1, None], dtype=tf.int32, ragged_rank=1),
             "RaggedTensorSpec(TensorShape([1, None]), tf.int32, 1, tf.int64)",
             "TensorSpec(shape=(1, None), dtype=tf.int32, name=None)")
    mismatch(lambda r: r * 2, rt, tf.RaggedTensorSpec(shape=[None], dtype=tf.float32),
             "RaggedTensorSpec(TensorShape([None]), tf.float32, 0, tf.int64)",
             "TensorSpec(shape=(None,), dtype=tf.int32, name=None)")
    mismatch(tf.reduce_sum, rt, tf.RaggedTensorSpec(shape=[None], dtype=tf.int32),
             "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)",
             "TensorSpec(shape=(), dtype=tf.int32, name=None)")
    mismatch(lambda r: tf.RaggedTensor.from_row_lengths(r, [1, tf.size(r) - 1]),
             tf.constant([[1, 2], [3, 4]]),
             tf.RaggedTensorSpec([2, None], tf.int32, 1, tf.int32),
             "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int32)",
             "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)")
    with pytest.raises(ValueError, match="Error in map_fn"):
        tf.map_fn(tf.reduce_sum, rt)   # default signature: a ragged row
    with pytest.raises(TypeError, match="Failed to convert"):
        tf.map_fn(lambda r: tf.RaggedTensor.from_row_lengths(r, [1, 1]),
                  tf.constant([[1, 2], [3, 4]]), dtype=tf.int32)


def test_gradients_reach_the_values(sess):
    values = tf.constant([1., 2., 3., 4., 5.])
    x = tf.RaggedTensor.from_row_splits(values, [0, 3, 3, 5])
    squares = tf.map_fn(lambda r: tf.reduce_sum(r * r), x, dtype=tf.float32)
    grad = tf.gradients(tf.reduce_sum(squares), values)[0]
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)), [2, 4, 6, 8, 10])
    tripled = tf.map_fn(lambda r: r * 3., x)
    grad = tf.gradients(tf.reduce_sum(tripled.flat_values), values)[0]
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)), [3, 3, 3, 3, 3])


def test_ragged_tensor_spec():
    assert repr(tf.RaggedTensorSpec(shape=[None], dtype=tf.int32)) == \
        "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    assert repr(tf.RaggedTensorSpec([2, None], tf.float32, 1, tf.int32)) == \
        "RaggedTensorSpec(TensorShape([2, None]), tf.float32, 1, tf.int32)"
    spec = tf.RaggedTensorSpec([2, None, 3], tf.float32)
    assert (spec.dtype, spec.shape.as_list(), spec.ragged_rank, spec.row_splits_dtype,
            spec.value_type, spec.flat_values_spec) == \
        (tf.float32, [2, None, 3], 2, tf.int64, tf.RaggedTensor, None)
    assert tf.RaggedTensorSpec([None], tf.int32) == tf.RaggedTensorSpec([None], tf.int32)
    assert tf.RaggedTensorSpec([None], tf.int32) != tf.RaggedTensorSpec([None], tf.int64)
    assert repr(tf.RaggedTensorSpec.from_value(tf.ragged.constant([[1, 2, 3], [], [4]]))) \
        == "RaggedTensorSpec(TensorShape([3, None]), tf.int32, 1, tf.int64)"
    with pytest.raises(ValueError, match="Must specify ragged_rank or a shape with a "
                                         "known rank."):
        tf.RaggedTensorSpec()
    with pytest.raises(ValueError, match=r"Argument `ragged_rank` \(2\) must be less than "
                                         r"rank \(1\)."):
        tf.RaggedTensorSpec([None], tf.int32, ragged_rank=2)
    with pytest.raises(TypeError, match="must be an int"):
        tf.RaggedTensorSpec([None, None], tf.int32, ragged_rank=1.0)


def test_partition_lists_holding_tensors_pack_at_int64():
    rows = tf.RaggedTensor.from_row_lengths([1, 2, 3], [1, tf.constant(2)])
    assert rows.row_splits.dtype == tf.int64
    assert tf.RaggedTensor.from_row_lengths([1, 2, 3], tf.constant([1, 2])) \
        .row_splits.dtype == tf.int32


def test_ragged_tensor_spec_compatibility():
    # TF 2.21's answers: dtype, ragged rank and row_splits dtype must be equal, shapes
    # compatible; a TensorSpec never is; a RaggedTensor is taken by its spec
    spec = tf.RaggedTensorSpec([None, None], tf.int64)
    others = [tf.RaggedTensorSpec([2, None], tf.int64),
              tf.RaggedTensorSpec([2, None, None], tf.int64),
              tf.RaggedTensorSpec([2, None], tf.int32),
              tf.RaggedTensorSpec([2, None], tf.int64, row_splits_dtype=tf.int32),
              tf.TensorSpec([2, 2], tf.int64),
              tf.RaggedTensorSpec([3], tf.int64, ragged_rank=0),
              tf.ragged.constant([[1], [2, 3]], dtype=tf.int64)]
    assert [spec.is_compatible_with(o) for o in others] == \
        [True, False, False, False, False, False, True]
    three_rows = tf.ragged.constant([[1], [2, 3], []], dtype=tf.int64)
    assert not tf.RaggedTensorSpec([2, None], tf.int64).is_compatible_with(three_rows)


def test_ragged_tensor_value_is_the_exported_class():
    value = tf.ragged.RaggedTensorValue(np.array([1, 2, 3]), np.array([0, 2, 3]))
    assert value.to_list() == [[1, 2], [3]]
    assert not isinstance(tf.ragged.constant([[1]]), tf.ragged.RaggedTensorValue)
