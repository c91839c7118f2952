"""indicator_column, embedding_column and shared_embedding_columns: their values (NumPy
references), variables (TF1's names) and errors."""
import numpy as np
import pytest

import tensorweave as tf

fc = tf.feature_column


def identity(key="i", buckets=8):
    return fc.categorical_column_with_identity(key, buckets)


def test_indicator_counts_duplicates(graph, evaluate):
    column = fc.indicator_column(fc.categorical_column_with_vocabulary_list("v", ["a", "b"]))
    assert column.name == "v_indicator" and column.variable_shape == tf.TensorShape([1, 2])
    out = fc.input_layer({"v": tf.constant([["b", "b", "a"], ["q", "", "a"]])}, [column])
    assert out.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(evaluate(out), [[1, 2], [1, 0]])


# rows: ids [1, 1, 5], [7], none (-1 is missing)
IDS = [[1, 1, 5], [7, -1, -1], [-1, -1, -1]]


@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
def test_embedding_combiners(graph, evaluate, table, combiner):
    values, init = table
    column = fc.embedding_column(identity(), 3, combiner=combiner, initializer=init)
    out = fc.input_layer({"i": tf.constant(IDS, tf.int64)}, [column])
    assert out.shape.as_list() == [3, 3]
    summed = np.stack([values[1] + values[1] + values[5], values[7], np.zeros(3)])
    scale = {"mean": [3, 1, 1], "sum": [1, 1, 1], "sqrtn": [np.sqrt(3), 1, 1]}[combiner]
    np.testing.assert_allclose(evaluate(out), summed / np.array(scale)[:, None], rtol=1e-6)


@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
def test_weighted_embedding_combiners(graph, evaluate, table, combiner):
    values, init = table
    column = fc.embedding_column(
        fc.weighted_categorical_column(identity(), "w"), 3, combiner=combiner,
        initializer=init)
    weights = np.array([[0.5, 2.0], [3.0, 1.5]], np.float32)
    out = fc.input_layer({"i": tf.constant([[1, 2], [7, 0]], tf.int64),
                          "w": tf.constant(weights)}, [column])
    rows = np.stack([0.5 * values[1] + 2 * values[2], 3 * values[7] + 1.5 * values[0]])
    norm = {"mean": weights.sum(1), "sum": np.ones(2),
            "sqrtn": np.sqrt((weights ** 2).sum(1))}[combiner]
    np.testing.assert_allclose(evaluate(out), rows / norm[:, None], rtol=1e-6)


def test_embedding_max_norm_and_plain_lookup(graph, evaluate, table):
    values, init = table
    ids = tf.constant([[1, 5], [7, -1]], tf.int64)
    clipped = fc.input_layer({"i": ids}, [fc.embedding_column(
        identity(), 3, max_norm=1.0, initializer=init)])
    plain = fc.input_layer({"i": ids}, [fc.embedding_column(
        identity(), 3, initializer=init, use_safe_embedding_lookup=False)])
    # the plain lookup's rows are those up to the last example with ids (TF's static
    # shape is [None, 3] there too)
    assert plain.shape.as_list() == [None, 3]
    got_clipped, got_plain = evaluate([clipped, plain])
    unit = values / np.maximum(np.linalg.norm(values, axis=1, keepdims=True), 1.0)
    np.testing.assert_allclose(got_clipped, [(unit[1] + unit[5]) / 2, unit[7]], rtol=1e-5)
    np.testing.assert_allclose(got_plain, [(values[1] + values[5]) / 2, values[7]],
                               rtol=1e-6)


def test_embedding_variable_and_default_initializer(graph, evaluate):
    column = fc.embedding_column(identity(buckets=1000), 16)
    assert column.name == "i_embedding" and column.variable_shape == tf.TensorShape([16])
    cols_to_vars = {}
    fc.input_layer({"i": tf.constant([[1]], tf.int64)}, [column], cols_to_vars=cols_to_vars)
    [table] = cols_to_vars[column]
    assert table.name == "input_layer/i_embedding/embedding_weights:0"
    assert table.shape.as_list() == [1000, 16]
    assert tf.get_collection(tf.GraphKeys.MODEL_VARIABLES) == [table]
    values = evaluate(table)
    # truncated normal, mean 0, stddev 1/sqrt(16) = 0.25 before truncation at 2 stddevs
    # (0.22 after: TF 2.21 gives 0.220)
    assert np.abs(values).max() <= 0.5
    assert 0.21 < values.std() < 0.23 and abs(values.mean()) < 0.01


def test_shared_embedding_columns_share_one_table(graph, evaluate, table):
    values, init = table
    x, y = identity("x"), identity("y")
    shared = fc.shared_embedding_columns([y, x], 3, initializer=init, combiner="sum")
    assert [c.name for c in shared] == ["y_shared_embedding", "x_shared_embedding"]
    assert shared[0].shared_embedding_collection_name == "x_y_shared_embedding"
    cols_to_vars = {}
    out = fc.input_layer({"x": tf.constant([[1, 2]], tf.int64),
                          "y": tf.constant([[7, -1]], tf.int64)}, shared,
                         cols_to_vars=cols_to_vars)
    [variable] = tf.global_variables()
    assert variable.name == "input_layer/x_y_shared_embedding/embedding_weights:0"
    assert tf.get_collection("x_y_shared_embedding") == [variable]
    assert cols_to_vars[shared[1]] == [variable] and cols_to_vars[shared[0]] == []
    # x sorts first: W1 + W2, then y: W7
    np.testing.assert_allclose(evaluate(out), [np.concatenate(
        [values[1] + values[2], values[7]])], rtol=1e-6)


def test_shared_embedding_collection_misuse(graph):
    shared = fc.shared_embedding_columns([identity("x", 3)], 2,
                                         shared_embedding_collection_name="mine")
    tf.add_to_collection("mine", tf.Variable(tf.zeros([4, 2])))
    with pytest.raises(ValueError, match=r"Shared embedding collection mine contains "
                       r"variable Variable:0 of unexpected shape \(4, 2\). Expected shape "
                       r"is \(3, 2\)"):
        fc.input_layer({"x": tf.constant([[1]], tf.int64)}, shared)
    tf.add_to_collection("mine", tf.Variable(tf.zeros([3, 2])))
    with pytest.raises(ValueError, match="can only contain one variable"):
        fc.input_layer({"x": tf.constant([[1]], tf.int64)}, shared)


def test_embedding_loads_from_checkpoint(graph, evaluate, tmp_path):
    saved = np.arange(6, dtype=np.float32).reshape(3, 2)
    with tf.Graph().as_default():
        source = tf.get_variable("emb", initializer=tf.constant(saved))
        with tf.Session() as sess:
            sess.run(source.initializer)
            prefix = tf.train.Saver().save(sess, str(tmp_path / "model"))
    column = fc.embedding_column(identity(buckets=3), 2, ckpt_to_load_from=prefix,
                                 tensor_name_in_ckpt="emb")
    out = fc.input_layer({"i": tf.constant([[2], [0]], tf.int64)}, [column])
    np.testing.assert_array_equal(evaluate(out), saved[[2, 0]])


@pytest.mark.parametrize("make, message", [
    (lambda: fc.indicator_column(fc.numeric_column("a")),
     "Unsupported input type. Input must be a CategoricalColumn. Given: NumericColumn("
     "key='a', shape=(1,), default_value=None, dtype=tf.float32, normalizer_fn=None)"),
    (lambda: fc.embedding_column(identity(), 0), "Invalid dimension 0."),
    (lambda: fc.embedding_column(identity(), 2, initializer=3),
     "initializer must be callable if specified. Embedding of column_name: i"),
    (lambda: fc.embedding_column(identity(), 2, ckpt_to_load_from="x"),
     "Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them."),
    (lambda: fc.shared_embedding_columns([identity("x", 4), identity("y", 5)], 2),
     "To use shared_embedding_column, all categorical_columns must have the same number "
     "of buckets. Given column: IdentityCategoricalColumn(key='x', number_buckets=4, "
     "default_value=None) with buckets: 4 does  not match column: IdentityCategoricalColumn("
     "key='y', number_buckets=5, default_value=None) with buckets: 5"),
    (lambda: fc.shared_embedding_columns([identity("x"), identity("y")], 2, initializer=1),
     "initializer must be callable if specified."),
])
def test_constructor_errors(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_constructor_errors_tf_did_not_catch():
    # TF 2.21 accepts these and fails later (AttributeError) or never
    with pytest.raises(ValueError, match="embedding_column needs a categorical column"):
        fc.embedding_column(fc.numeric_column("a"), 2)
    with pytest.raises(ValueError, match="All categorical_columns must be subclasses of "
                       "_CategoricalColumn"):
        fc.shared_embedding_columns([fc.numeric_column("a"), identity()], 2)
    with pytest.raises(ValueError, match="must have the same type"):
        fc.shared_embedding_columns([identity(), fc.categorical_column_with_hash_bucket(
            "h", 8)], 2)


def test_unknown_combiner_fails_when_used(graph):
    column = fc.embedding_column(identity(), 2, combiner="max")
    with pytest.raises(ValueError, match="combiner must be one of 'mean', 'sqrtn' or 'sum', "
                       "got max"):
        fc.input_layer({"i": tf.constant([[1]], tf.int64)}, [column])
