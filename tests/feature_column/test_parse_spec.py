"""make_parse_example_spec, alone and feeding tf.parse_example into input_layer."""
import numpy as np
import pytest

import tensorweave as tf

fc = tf.feature_column


def test_spec_of_every_kind_of_column():
    identity = fc.categorical_column_with_identity("i", 4)
    spec = fc.make_parse_example_spec([
        fc.numeric_column("a"),
        fc.bucketized_column(fc.numeric_column("p", shape=2), [0., 10.]),
        fc.categorical_column_with_hash_bucket("h", 10),
        fc.embedding_column(fc.categorical_column_with_vocabulary_list("v", ["x"]), 3),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("vi", [5, 6])),
        identity, fc.weighted_categorical_column(identity, "w"),
        fc.numeric_column("b", shape=[2, 2], default_value=1.0)])
    # TF 2.21
    assert spec == {
        "a": tf.io.FixedLenFeature((1,), tf.float32),
        "b": tf.io.FixedLenFeature((2, 2), tf.float32, ((1.0, 1.0), (1.0, 1.0))),
        "h": tf.io.VarLenFeature(tf.string),
        "i": tf.io.VarLenFeature(tf.int64),
        "p": tf.io.FixedLenFeature((2,), tf.float32),
        "v": tf.io.VarLenFeature(tf.string),
        "vi": tf.io.VarLenFeature(tf.int64),
        "w": tf.io.VarLenFeature(tf.float32)}


@pytest.mark.parametrize("columns, message", [
    (["a"], "All feature_columns must be _FeatureColumn instances. Given: a"),
    ([fc.numeric_column("a"), fc.numeric_column("a", shape=2)],
     "feature_columns contain different parse_spec for key a. Given FixedLenFeature("
     "shape=(2,), dtype=tf.float32, default_value=None) and FixedLenFeature(shape=(1,), "
     "dtype=tf.float32, default_value=None)"),
    ([fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "i")],
     "Parse config VarLenFeature(dtype=tf.int64) already exists for i."),
])
def test_spec_errors(columns, message):
    with pytest.raises(ValueError) as info:
        fc.make_parse_example_spec(columns)
    assert str(info.value) == message


def example(**features):
    def feature(values):
        if isinstance(values[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        if isinstance(values[0], int):
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        return tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[v.encode() for v in values]))
    return tf.train.Example(features=tf.train.Features(feature={
        k: feature(v) for k, v in features.items()})).SerializeToString()


def test_parse_example_into_input_layer(graph, evaluate):
    columns = [
        fc.numeric_column("price", shape=2, default_value=0.5),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("kw", ["x", "y"])),
        fc.indicator_column(fc.weighted_categorical_column(
            fc.categorical_column_with_identity("ids", 3), "wts")),
        fc.bucketized_column(fc.numeric_column("age"), [18., 65.])]
    serialized = [example(price=[1., 2.], kw=["x", "x", "y"], ids=[0, 2], wts=[0.5, 1.5],
                          age=[30.]),
                  example(kw=["q"], ids=[1], wts=[2.0], age=[70.])]
    parsed = tf.parse_example(tf.constant(serialized), fc.make_parse_example_spec(columns))
    out = fc.input_layer(parsed, columns)
    # age_bucketized | ids weights per id | kw counts | price (default 0.5 when absent);
    # TF 2.21 gives the same
    np.testing.assert_array_equal(evaluate(out), [
        [0, 1, 0, 0.5, 0, 1.5, 2, 1, 1, 2],
        [0, 0, 1, 0, 2, 0, 0, 0, 0.5, 0.5]])
