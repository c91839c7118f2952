"""numeric_column and bucketized_column: the column objects, their values in input_layer
and linear_model, and the constructors' errors (messages are TF 2.21's)."""
import numpy as np
import pytest

import tensorweave as tf

fc = tf.feature_column


def test_numeric_column_is_a_value_like_tf_namedtuple():
    a = fc.numeric_column("a")
    assert a == fc.numeric_column("a") and hash(a) == hash(fc.numeric_column("a"))
    assert a != fc.numeric_column("a", shape=2)
    assert repr(a) == ("NumericColumn(key='a', shape=(1,), default_value=None, "
                       "dtype=tf.float32, normalizer_fn=None)")
    assert a.name == "a" and a.variable_shape == tf.TensorShape([1])
    assert a.parse_example_spec == {"a": tf.io.FixedLenFeature((1,), tf.float32)}


@pytest.mark.parametrize("shape, default, expected", [
    ([2, 2], 1.0, ((1.0, 1.0), (1.0, 1.0))),            # a number fills the shape
    (2, np.array([1.0, 2.0]), (1.0, 2.0)),              # arrays become tuples
    (3, 4, (4, 4, 4)),
    ((2, 1), [[1], [2.5]], ((1,), (2.5,))),
])
def test_numeric_default_value_becomes_nested_tuples(shape, default, expected):
    column = fc.numeric_column("a", shape=shape, default_value=default)
    assert column.default_value == expected
    hash(column)  # stays hashable


def test_numeric_in_input_layer_flattens_normalizes_and_casts(graph, evaluate):
    features = {"a": tf.constant(np.arange(8, dtype=np.float32).reshape(2, 2, 2)),
                "b": tf.constant([3, 4], tf.int64)}
    out = fc.input_layer(features, [
        fc.numeric_column("b", dtype=tf.int64, normalizer_fn=lambda x: x * 2),
        fc.numeric_column("a", shape=(2, 2))])
    assert out.shape.as_list() == [2, 5] and out.dtype == tf.float32
    # "a" sorts first: its 4 values per example, then 2 * b (a rank-1 feature is one
    # value per example)
    np.testing.assert_array_equal(evaluate(out), [[0, 1, 2, 3, 6], [4, 5, 6, 7, 8]])


def test_bucketized_is_one_hot_per_value(graph, evaluate):
    column = fc.bucketized_column(fc.numeric_column("p", shape=3), [0., 10., 100.])
    assert column.name == "p_bucketized" and column.num_buckets == 12
    assert column.variable_shape == tf.TensorShape([3, 4])
    out = fc.input_layer({"p": tf.constant([[-1., 0., 10.], [99.9, 100., np.nan]])},
                         [column])
    # bucket i holds [boundaries[i-1], boundaries[i]); NaN goes to the last bucket, as
    # TF 2.21's Bucketize does
    buckets = np.array([[0, 1, 2], [2, 3, 3]])
    np.testing.assert_array_equal(evaluate(out), np.eye(4)[buckets].reshape(2, 12))


def test_bucketized_in_linear_model_has_a_weight_per_position_and_bucket(graph, evaluate):
    column = fc.bucketized_column(fc.numeric_column("p", shape=2), [0., 10.])
    cols_to_vars = {}
    out = fc.linear_model({"p": tf.constant([[-1., 5.], [20., 0.]])}, [column],
                          cols_to_vars=cols_to_vars)
    weights = cols_to_vars[column][0]
    assert weights.name == "linear_model/p_bucketized/weights:0"
    assert weights.shape.as_list() == [6, 1]
    set_weights = tf.assign(weights, [[1.], [2.], [4.], [8.], [16.], [32.]])
    # value j of an example in bucket b has id 3 j + b: [-1, 5] -> ids 0, 4;
    # [20, 0] -> ids 2, 4
    np.testing.assert_array_equal(evaluate(out, before=[set_weights]),
                                  [[1 + 16], [4 + 16]])


@pytest.mark.parametrize("make, error, message", [
    (lambda: fc.numeric_column(1), ValueError,
     "key must be a string. Got: type <class 'int'>. Given key: 1."),
    (lambda: fc.numeric_column("a", shape=[0]), ValueError,
     "shape dimensions must be greater than 0. shape: (0,), key: a"),
    (lambda: fc.numeric_column("a", shape=[1.5]), TypeError,
     "shape dimensions must be integer. shape: (1.5,), key: a"),
    (lambda: fc.numeric_column("a", dtype=tf.string), ValueError,
     "dtype must be convertible to float. dtype: <dtype: 'string'>, key: a"),
    (lambda: fc.numeric_column("a", shape=2, default_value=[1.0]), ValueError,
     "The shape of default_value must be equal to given shape. default_value: [1.0], "
     "shape: (2,), key: a"),
    (lambda: fc.numeric_column("a", default_value="x"), TypeError,
     "default_value must be compatible with dtype. default_value: x, "
     "dtype: <dtype: 'float32'>, key: a"),
    (lambda: fc.numeric_column("a", dtype=tf.int32, default_value=1.5), TypeError,
     "default_value must be compatible with dtype. default_value: 1.5, "
     "dtype: <dtype: 'int32'>, key: a"),
    (lambda: fc.numeric_column("a", normalizer_fn=3), TypeError,
     "normalizer_fn must be a callable. Given: 3"),
    (lambda: fc.bucketized_column(fc.categorical_column_with_identity("i", 4), [1.]),
     ValueError, "source_column must be a column generated with numeric_column(). "
     "Given: IdentityCategoricalColumn(key='i', number_buckets=4, default_value=None)"),
    (lambda: fc.bucketized_column(fc.numeric_column("a", shape=(2, 2)), [1.]), ValueError,
     "source_column must be one-dimensional column. Given: NumericColumn(key='a', "
     "shape=(2, 2), default_value=None, dtype=tf.float32, normalizer_fn=None)"),
    (lambda: fc.bucketized_column(fc.numeric_column("a"), []), ValueError,
     "boundaries must not be empty."),
    (lambda: fc.bucketized_column(fc.numeric_column("a"), [1., 0.]), ValueError,
     "boundaries must be a sorted list."),
    (lambda: fc.bucketized_column(fc.numeric_column("a"), [1., 1.]), ValueError,
     "boundaries must be a sorted list."),
    # TF fails here with NumPy's "truth value of an array is ambiguous"
    (lambda: fc.bucketized_column(fc.numeric_column("a"), np.array([1., 2.])), ValueError,
     "boundaries must be a sorted list."),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert str(info.value) == message


def test_sparse_input_to_numeric_column_is_an_error(graph):
    with pytest.raises(ValueError, match="The corresponding Tensor of numerical column "
                       "must be a Tensor. SparseTensor is not supported. key: a"):
        fc.input_layer({"a": tf.SparseTensor([[0, 0]], [1.], [1, 1])},
                       [fc.numeric_column("a")])
