"""input_layer and linear_model: output order and values, TF1's variable names (so TF1
checkpoints restore), collections, training, and errors. Hard-coded expectations marked
"TF 2.21" were printed by the same program run with tensorflow.compat.v1."""
import numpy as np
import pytest

import tensorweave as tf

fc = tf.feature_column


def assign_counting(variables):
    """Ops setting each variable to (1, 2, 3, ...) / 10 in row-major order."""
    ops = []
    for var in variables:
        shape = var.shape.as_list()
        ops.append(tf.assign(var, (np.arange(np.prod(shape), dtype=np.float32)
                                   .reshape(shape) + 1) / 10.))
    return ops


def features():
    return {"a": tf.constant([[1.0], [2.0], [-1.0]]),
            "p": tf.constant([[-1., 5.], [20., 0.], [3., 3.]]),
            "v": tf.constant([["x", "z"], ["y", ""], ["q", "x"]]),
            "i": tf.constant([[1, 1], [3, 0], [0, 2]], tf.int64),
            "w": tf.constant([[0.5, 2.0], [3.0, 1.0], [1.0, 1.0]])}


def columns():
    return [fc.numeric_column("a"),
            fc.bucketized_column(fc.numeric_column("p", shape=2), [0., 10.]),
            fc.categorical_column_with_vocabulary_list("v", ["x", "y", "z"],
                                                       num_oov_buckets=1),
            fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w"),
            fc.indicator_column(fc.categorical_column_with_identity("i", 4))]


def test_input_layer_concatenates_columns_sorted_by_name(graph, evaluate):
    a = fc.numeric_column("a")
    bucketized = fc.bucketized_column(fc.numeric_column("p"), [0.])
    indicator = fc.indicator_column(fc.categorical_column_with_vocabulary_list("v", ["x",
                                                                                   "y"]))
    outputs = {}
    out = fc.input_layer({"a": tf.constant([1., 2.]), "p": tf.constant([[-1.], [1.]]),
                          "v": tf.constant([["y"], ["x"]])},
                         [indicator, bucketized, a], cols_to_output_tensors=outputs)
    assert out.name == "input_layer/concat:0" and out.shape.as_list() == [2, 5]
    assert sorted(c.name for c in outputs) == ["a", "p_bucketized", "v_indicator"]
    got, got_a = evaluate([out, outputs[a]])
    # a | p_bucketized | v_indicator
    np.testing.assert_array_equal(got, [[1, 1, 0, 0, 1], [2, 0, 1, 1, 0]])
    np.testing.assert_array_equal(got_a, [[1], [2]])


def test_input_layer_variable_names_are_tf1s(graph):
    v = fc.categorical_column_with_vocabulary_list("v", ["x", "y", "z"])
    u = fc.categorical_column_with_vocabulary_list("u", ["x", "y", "w"])
    feats = {"v": tf.constant([["x"]]), "u": tf.constant([["w"]])}
    cols_to_vars = {}
    fc.input_layer(feats, [fc.embedding_column(v, 3)] + fc.shared_embedding_columns([v, u], 2),
                   cols_to_vars=cols_to_vars)
    fc.input_layer(feats, [fc.embedding_column(v, 3)])
    with tf.variable_scope("outer"):
        fc.input_layer(feats, [fc.embedding_column(v, 3)])
    with tf.variable_scope("outer", reuse=True):
        fc.input_layer(feats, [fc.embedding_column(v, 3)])  # shares outer/input_layer's
    # TF 2.21
    assert [x.name for x in tf.global_variables()] == [
        "input_layer/u_v_shared_embedding/embedding_weights:0",
        "input_layer/v_embedding/embedding_weights:0",
        "input_layer_1/v_embedding/embedding_weights:0",
        "outer/input_layer/v_embedding/embedding_weights:0"]
    assert tf.model_variables() == tf.global_variables() == tf.trainable_variables()
    assert {c.name: [x.name for x in found] for c, found in cols_to_vars.items()} == {
        "u_shared_embedding": ["input_layer/u_v_shared_embedding/embedding_weights:0"],
        "v_embedding": ["input_layer/v_embedding/embedding_weights:0"],
        "v_shared_embedding": []}
    # one table per call and categorical column, however many columns read it: v and u
    # in the first call, v in each other (TF 2.21: 5)
    assert len(tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)) == 5


def test_weight_collections_and_trainable(graph):
    ids = {"i": tf.constant([[1]], tf.int64)}
    identity = fc.categorical_column_with_identity("i", 3)
    fc.input_layer(ids, [fc.embedding_column(identity, 2)], weight_collections=["mine"],
                   trainable=False)
    fc.linear_model(ids, [identity], weight_collections=["mine"], trainable=False)
    with tf.variable_scope("frozen"):
        fc.input_layer(ids, [fc.embedding_column(identity, 2, trainable=False)])
    names = ["input_layer/i_embedding/embedding_weights:0", "linear_model/i/weights:0",
             "linear_model/bias_weights:0"]
    assert [x.name for x in tf.get_collection("mine")] == names
    assert [x.name for x in tf.model_variables()] == names + [
        "frozen/input_layer/i_embedding/embedding_weights:0"]
    assert tf.trainable_variables() == []


@pytest.mark.parametrize("combiner, expected", [
    # TF 2.21
    ("sum", [[3.15, 4.2], [5.0, 6.2], [3.2, 4.0]]),
    ("mean", [[1.9, 2.6], [2.65, 3.45], [1.9, 2.4]]),
    ("sqrtn", [[2.2951741, 3.0992851], [3.0856502, 3.9535635], [2.4384775, 3.0627418]]),
])
def test_linear_model_output(graph, evaluate, combiner, expected):
    cols_to_vars = {}
    out = fc.linear_model(features(), columns(), units=2, sparse_combiner=combiner,
                          cols_to_vars=cols_to_vars)
    assert out.shape.as_list() == [3, 2]
    # TF 2.21's names, in TF's order
    assert [x.name for x in tf.global_variables()] == [
        "linear_model/a/weights:0", "linear_model/i_indicator/weights:0",
        "linear_model/i_weighted_by_w/weights:0", "linear_model/p_bucketized/weights:0",
        "linear_model/v/weights:0", "linear_model/bias_weights:0"]
    assert [x.name for x in cols_to_vars["bias"]] == ["linear_model/bias_weights:0"]
    np.testing.assert_allclose(
        evaluate(out, before=assign_counting(tf.global_variables())), expected, rtol=1e-6)


def test_linear_model_is_the_sum_of_weighted_sums(graph, evaluate):
    # a hand-checkable model: numeric a, ids of v (sum combiner), a bias
    a = fc.numeric_column("a")
    v = fc.categorical_column_with_vocabulary_list("v", ["x", "y", "z"])
    cols_to_vars = {}
    out = fc.linear_model({"a": tf.constant([[2.], [3.]]),
                           "v": tf.constant([["x", "z"], ["y", "y"]])}, [a, v],
                          cols_to_vars=cols_to_vars)
    before = [tf.assign(cols_to_vars[a][0], [[10.]]),
              tf.assign(cols_to_vars[v][0], [[1.], [2.], [4.]]),
              tf.assign(cols_to_vars["bias"][0], [0.5])]
    np.testing.assert_array_equal(evaluate(out, before=before),
                                  [[20 + 1 + 4 + 0.5], [30 + 2 + 2 + 0.5]])


def test_linear_model_names_follow_tf1(graph):
    feats = {"a": tf.constant([[1.]]), "h": tf.constant([["q"]])}
    a, h = fc.numeric_column("a"), fc.categorical_column_with_hash_bucket("h", 5)
    cols_to_vars = {}
    fc.linear_model(feats, [a, fc.embedding_column(h, 2)], cols_to_vars=cols_to_vars)
    fc.linear_model(feats, [a])
    with tf.variable_scope("outer"):
        fc.linear_model(feats, [a])
    # TF 2.21 (a second model's column scopes are made unique in the caller's scope)
    assert [x.name for x in tf.global_variables()] == [
        "linear_model/a/weights:0", "linear_model/h_embedding/weights:0",
        "linear_model/h_embedding/embedding_weights:0", "linear_model/bias_weights:0",
        "linear_model_1/a_1/weights:0", "linear_model_1/bias_weights:0",
        "outer/linear_model/a/weights:0", "outer/linear_model/bias_weights:0"]
    assert {getattr(c, "name", c): [x.name for x in found]
            for c, found in cols_to_vars.items()} == {
        "a": ["linear_model/a/weights:0"],
        "h_embedding": ["linear_model/h_embedding/weights:0",
                        "linear_model/h_embedding/embedding_weights:0"],
        "bias": ["linear_model/bias_weights:0"]}


def test_training_a_linear_model(graph):
    f = features()
    pred = fc.linear_model(f, [columns()[0], columns()[2], columns()[3]])
    loss = tf.reduce_mean(tf.square(pred - tf.constant([[1.0], [-1.0], [0.5]])))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        losses = [sess.run([loss, train])[0] for _ in range(5)]
        trained = {x.name: sess.run(x).ravel() for x in tf.trainable_variables()}
    # TF 2.21
    np.testing.assert_allclose(losses, [0.75, 0.10194442, 0.015423897, 0.0025008004,
                                        0.00045568545], rtol=1e-5)
    np.testing.assert_allclose(trained["linear_model/v/weights:0"],
                               [0.176955, -0.083918, 0.115428, 0.061527], rtol=1e-4)
    np.testing.assert_allclose(trained["linear_model/bias_weights:0"], [0.093037],
                               rtol=1e-4)


def test_gradient_step_on_an_embedding(graph, table):
    values, init = table
    column = fc.embedding_column(fc.categorical_column_with_identity("i", 8), 3,
                                 combiner="sum", initializer=init)
    net = fc.input_layer({"i": tf.constant([[1, 1], [2, -1]], tf.int64)}, [column])
    y = np.array([1.0, -1.0], np.float32)
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(net, 1) - y))
    [variable] = tf.trainable_variables()
    [gradient] = tf.gradients(loss, [variable])
    assert isinstance(gradient, tf.IndexedSlices)  # a sparse update, as TF's
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        updated = sess.run(variable)
    # by hand: pred = [2 sum(W1), sum(W2)]; dL/dpred_n = (pred_n - y_n) (2 / 2);
    # d pred_0 / d W1 = 2, d pred_1 / d W2 = 1 (each coordinate)
    pred = np.array([2 * values[1].sum(), values[2].sum()])
    expected = values.copy()
    expected[1] -= 0.5 * (pred[0] - y[0]) * 2
    expected[2] -= 0.5 * (pred[1] - y[1]) * 1
    np.testing.assert_allclose(updated, expected, rtol=1e-6)


def test_training_an_embedding_model_decreases_the_loss(graph):
    initial = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0 - 0.5
    f = features()
    cols = columns()
    net = fc.input_layer(f, [
        cols[0],
        fc.embedding_column(cols[2], 3, initializer=tf.constant_initializer(initial)),
        fc.embedding_column(cols[3], 2, combiner="sqrtn",
                            initializer=tf.constant_initializer(initial[:, :2]))])
    kernel = tf.get_variable("k", [6, 1], initializer=tf.constant_initializer(0.3))
    loss = tf.reduce_mean(tf.square(tf.matmul(net, kernel) -
                                    tf.constant([[1.0], [-1.0], [0.5]])))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        losses = [sess.run([loss, train])[0] for _ in range(5)]
        table = sess.run(tf.trainable_variables()[1])
    # TF 2.21
    np.testing.assert_allclose(losses, [1.470612, 0.960039, 0.770302, 0.68551, 0.637092],
                               rtol=1e-5)
    np.testing.assert_allclose(table.ravel()[:3], [-0.415875, -0.314332, -0.212789],
                               rtol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda f: fc.input_layer(f, [fc.categorical_column_with_identity("i", 4)]),
     "Items of feature_columns must be a _DenseColumn. You can wrap a categorical column "
     "with an embedding_column or indicator_column. Given: IdentityCategoricalColumn("
     "key='i', number_buckets=4, default_value=None)"),
    (lambda f: fc.input_layer(f, ["i"]),
     "Items of feature_columns must be a _FeatureColumn. Given (type <class 'str'>): i."),
    (lambda f: fc.input_layer(f, []), "feature_columns must not be empty."),
    (lambda f: fc.input_layer(f, {"a": fc.numeric_column("a")}),
     "Expected feature_columns to be iterable, found dict."),
    (lambda f: fc.input_layer(f, [fc.numeric_column("a"), fc.numeric_column("a", shape=1)]),
     "Duplicate feature column name found for columns: NumericColumn(key='a', shape=(1,), "
     "default_value=None, dtype=tf.float32, normalizer_fn=None) and NumericColumn(key='a', "
     "shape=(1,), default_value=None, dtype=tf.float32, normalizer_fn=None). This usually "
     "means that these columns refer to same base feature. Either one must be discarded or "
     "a duplicated but renamed item must be inserted in features dict."),
    (lambda f: fc.input_layer(f, [fc.numeric_column("missing")]),
     "Feature missing is not in features dictionary."),
    (lambda f: fc.input_layer(f, [fc.numeric_column("a"), fc.numeric_column("b")]),
     "Batch size (first dimension) of each feature must be same. Batch size of columns "
     "(a, b): (1, 2)"),
    (lambda f: fc.linear_model(f, [3]),
     "Items of feature_columns must be a _FeatureColumn. Given (type <class 'int'>): 3."),
])
def test_errors(graph, call, message):
    f = {"a": tf.constant([[1.]]), "b": tf.constant([[1.], [2.]]),
         "i": tf.constant([[1]], tf.int64)}
    with pytest.raises(ValueError) as info:
        call(f)
    assert str(info.value) == message


def test_linear_model_op_names_are_tfs():
    """The model's ops sit in its name scope inside the re-entered variable scope, as
    TF's linear model layer names them; its variables keep their scopes."""
    fc = tf.feature_column
    with tf.Graph().as_default():
        first = fc.linear_model({"a": tf.constant([[1.0]])}, [fc.numeric_column("a")])
        second = fc.linear_model({"a": tf.constant([[1.0]])}, [fc.numeric_column("a")])
        assert first.name == "linear_model_1/linear_model/weighted_sum:0"
        assert second.name == "linear_model_1_1/linear_model_1/weighted_sum:0"
        assert [v.name for v in tf.global_variables()] == [
            "linear_model/a/weights:0", "linear_model/bias_weights:0",
            "linear_model_1/a_1/weights:0", "linear_model_1/bias_weights:0"]
