"""Sequence columns (tf.feature_column.sequence_*): what TF1's API does with them (parse
specs, 3-D ids, linear_model) and the errors of input_layer (TF 2.21 values as literals
and hand-computed sums)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.feature_column.builder import _LazyBuilder

fc = tf.feature_column


def ids_2x2():
    """Example 0: steps [0, 2]; example 1: step [3]."""
    return tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([0, 2, 3], tf.int64), [2, 2])


@pytest.mark.parametrize("make, buckets, spec_dtype", [
    (lambda: fc.sequence_categorical_column_with_identity("s", 4), 4, tf.int64),
    (lambda: fc.sequence_categorical_column_with_hash_bucket("s", 4, dtype=tf.int64), 4,
     tf.int64),
    (lambda: fc.sequence_categorical_column_with_vocabulary_list("s", ["a", "b"],
                                                                 num_oov_buckets=1), 3,
     tf.string),
])
def test_sequence_categorical_attributes(make, buckets, spec_dtype):
    column = make()
    assert type(column).__name__ == "SequenceCategoricalColumn"
    assert (column.name, column.num_buckets) == ("s", buckets)
    spec = fc.make_parse_example_spec([column])
    assert list(spec) == ["s"] and spec["s"].dtype == spec_dtype
    assert type(spec["s"]).__name__ == "VarLenFeature"


def test_sequence_vocabulary_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("emerson\nlake\npalmer\n")
    column = fc.sequence_categorical_column_with_vocabulary_file("s", str(path),
                                                                 default_value=0)
    assert (column.name, column.num_buckets) == ("s", 3)


def test_sequence_ids_get_a_step_dimension(graph, evaluate):
    column = fc.sequence_categorical_column_with_identity("s", 4)
    ids, weights = column._get_sparse_tensors(_LazyBuilder({"s": ids_2x2()}))
    assert weights is None
    got = evaluate(ids)
    np.testing.assert_array_equal(got.indices, [[0, 0, 0], [0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(got.values, [0, 2, 3])
    np.testing.assert_array_equal(got.dense_shape, [2, 2, 1])


@pytest.mark.parametrize("wrap, name, wrapper", [
    (lambda c: fc.embedding_column(c, 2), "s_embedding", "embedding_column"),
    (fc.indicator_column, "s_indicator", "indicator_column"),
])
def test_input_layer_refuses_sequence_columns(graph, wrap, name, wrapper):
    column = wrap(fc.sequence_categorical_column_with_identity("s", 4))
    with pytest.raises(ValueError, match="In {}: {}. categorical_column must not be of "
                                         "type _SequenceCategoricalColumn".format(wrapper,
                                                                                  name)):
        fc.input_layer({"s": ids_2x2()}, [column])


def test_linear_model_sums_the_steps(graph, evaluate):
    column = fc.sequence_categorical_column_with_identity("s", 4)
    out = fc.linear_model({"s": ids_2x2()}, [column], units=2)
    weights = [v for v in tf.global_variables() if v.op.name == "linear_model/s/weights"]
    values = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = evaluate(out, before=[weights[0].assign(values)])
    np.testing.assert_allclose(got, [values[0] + values[2], values[3]])  # bias is 0


def test_sequence_numeric_column():
    column = fc.sequence_numeric_column("n", shape=(2,))
    assert (column.name, column.shape, column.default_value, column.dtype) == (
        "n", (2,), 0.0, tf.float32)
    assert column.variable_shape == tf.TensorShape([2])
    assert column.parse_example_spec["n"].dtype == tf.float32
    with pytest.raises(ValueError, match="All feature_columns must be _FeatureColumn"):
        fc.make_parse_example_spec([column])
    with pytest.raises(ValueError, match="Items of feature_columns must be a _FeatureColumn"):
        fc.input_layer({"n": tf.constant([[1.0]])}, [column])


@pytest.mark.parametrize("kwargs, error, message", [
    ({"dtype": tf.string}, ValueError, "dtype must be convertible to float"),
    ({"shape": (0,)}, ValueError, "shape dimensions must be greater than 0"),
    ({"normalizer_fn": 3}, TypeError, "normalizer_fn must be a callable"),
])
def test_sequence_numeric_column_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        fc.sequence_numeric_column("n", **kwargs)
