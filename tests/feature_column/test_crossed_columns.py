"""crossed_column (feature_column/crossed_columns.py): names, parse specs, ids and
variables equal to TensorFlow 2.21's on the same features (the expected ids are TF's)."""
import numpy as np
import pytest

import tensorweave as tf

fc = tf.feature_column


def _columns():
    a = fc.categorical_column_with_vocabulary_list("a", ["x", "y", "z"])
    b = fc.bucketized_column(fc.numeric_column("n"), [0.0, 10.0])
    return fc.crossed_column(["s", a], 50), fc.crossed_column([a, b, "t"], 7, hash_key=99)


def _features():
    return {"a": tf.constant([["x"], ["z"], ["q"]]),
            "s": tf.constant([["p", "r"], ["p", ""], ["u", "v"]]),
            "n": tf.constant([[-1.0], [5.0], [20.0]]),
            "t": tf.SparseTensor([[0, 0], [2, 1]], tf.constant([3, 4], tf.int64), [3, 2])}


def test_names_specs_and_equality(graph):
    c1, c2 = _columns()
    assert (c1.name, c2.name, c1.num_buckets) == ("a_X_s", "a_X_n_bucketized_X_t", 50)
    assert sorted(c1.parse_example_spec) == ["a", "s"]
    assert c1.parse_example_spec["s"].dtype == tf.string
    assert c1 == _columns()[0] and hash(c1) == hash(_columns()[0])
    assert repr(c1).startswith("CrossedColumn(keys=('s', VocabularyListCategoricalColumn(")
    nested = fc.crossed_column([c1, "q"], 10)
    assert nested.name == "a_X_q_X_s"


def test_crossed_ids_equal_tensorflows(evaluate):
    c1, c2 = _columns()
    features = _features()
    hot = fc.input_layer(features, [fc.indicator_column(c1), fc.indicator_column(c2)])
    ones = fc.input_layer(features, [fc.embedding_column(
        c2, 2, initializer=tf.ones_initializer())])
    rows, embedded = evaluate([hot, ones])
    # a dense "" of a raw string key is crossed like any value, as in TF (row 1)
    assert [np.nonzero(r)[0].tolist() for r in rows] == [[1, 21, 55], [8, 16], [3, 11, 48]]
    assert rows.shape == (3, 57)
    np.testing.assert_array_equal(embedded, [[1, 1], [0, 0], [1, 1]])  # row 1: no t


def test_linear_model_variables(graph):
    c1, c2 = _columns()
    fc.linear_model(_features(), [c1, c2])
    assert [v.name for v in tf.global_variables()] == [
        "linear_model/a_X_n_bucketized_X_t/weights:0", "linear_model/a_X_s/weights:0",
        "linear_model/bias_weights:0"]
    assert tf.global_variables()[1].shape.as_list() == [50, 1]


def test_crossed_column_errors(graph):
    with pytest.raises(ValueError, match=r"keys must be a list with length > 1. Given: "
                                         r"\['s'\]"):
        fc.crossed_column(["s"], 5)
    with pytest.raises(ValueError, match="categorical_column_with_hash_bucket is not "
                                         "supported for crossing"):
        fc.crossed_column(["s", fc.categorical_column_with_hash_bucket("h", 5)], 5)
    with pytest.raises(ValueError, match="Unsupported key type. All keys must be either "
                                         "string, or categorical column except "
                                         "HashedCategoricalColumn. Given: NumericColumn"):
        fc.crossed_column(["s", fc.numeric_column("n")], 5)
    with pytest.raises(ValueError, match="hash_bucket_size must be > 1"):
        fc.crossed_column(["s", "t"], 0)
    weighted = fc.weighted_categorical_column(
        fc.categorical_column_with_identity("i", 3), "w")
    crossed = fc.crossed_column(["s", weighted], 5)
    with pytest.raises(ValueError, match="crossed_column does not support weight_tensor"):
        fc.input_layer({"s": tf.constant([["p"]]), "i": tf.constant([[1]], tf.int64),
                        "w": tf.constant([[0.5]])}, [fc.indicator_column(crossed)])
