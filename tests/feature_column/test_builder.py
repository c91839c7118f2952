"""The feature cache behind input_layer / linear_model: raw features of rank 1, unknown
rank and rank 0, dense inputs as sparse ids, one transformation per column."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.feature_column.builder import _LazyBuilder, to_sparse_input

fc = tf.feature_column


def test_rank_one_features_are_one_value_per_example(graph, evaluate):
    strings = tf.placeholder(tf.string, [None])
    out = fc.input_layer({"a": tf.constant([1., 2.]), "h": strings}, [
        fc.numeric_column("a"),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("h", ["x", "y"]))])
    assert out.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(evaluate(out, {strings: ["y", "x"]}),
                                  [[1, 0, 1], [2, 1, 0]])


def test_unknown_rank_is_checked_when_run(graph, evaluate):
    values = tf.placeholder(tf.float32)
    out = fc.input_layer({"a": values}, [fc.numeric_column("a")])
    np.testing.assert_array_equal(evaluate(out, {values: [1., 2.]}), [[1.], [2.]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"cannot have rank 0"):
        evaluate(out, {values: 1.})


def test_rank_zero_is_an_error(graph):
    with pytest.raises(ValueError, match=r"Feature \(key: a\) cannot have rank 0"):
        fc.input_layer({"a": tf.constant(1.)}, [fc.numeric_column("a")])


def test_a_column_is_transformed_once(graph):
    column = fc.categorical_column_with_vocabulary_list("v", ["x"])
    builder = _LazyBuilder({"v": tf.constant([["x"]])})
    assert builder.get(column) is builder.get(column)
    assert len(tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)) == 1
    with pytest.raises(TypeError, match='"key" must be either a "str" or "_FeatureColumn"'):
        builder.get(3)


def test_features_may_hold_transformed_columns(graph, evaluate):
    a = fc.numeric_column("a")
    # a column as a key stands for its transformed tensor (no "a" feature needed)
    out = fc.input_layer({a: tf.constant([[7.]])}, [a])
    np.testing.assert_array_equal(evaluate(out), [[7.]])


def test_dense_inputs_lose_missing_values(graph, evaluate):
    strings = to_sparse_input(tf.constant([["a", ""], ["", "b"]]))
    ints = to_sparse_input(tf.constant([[3, -1], [-1, 0]]))
    floats = to_sparse_input(tf.constant([[0., 2.]]), ignore_value=0.0)
    got = evaluate([strings, ints, floats])
    np.testing.assert_array_equal(got[0].indices, [[0, 0], [1, 1]])
    assert list(got[0].values) == [b"a", b"b"]
    np.testing.assert_array_equal(got[1].indices, [[0, 0], [1, 1]])
    np.testing.assert_array_equal(got[1].values, [3, 0])
    np.testing.assert_array_equal(got[1].dense_shape, [2, 2])
    np.testing.assert_array_equal(got[2].values, [2.])
