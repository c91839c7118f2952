"""The categorical columns (hash bucket, vocabulary list and file, identity, weighted):
their ids, seen through indicator_column (one slot per id, counts per example), their
tables, and the constructors' errors. Expected ids are TF 2.21's (probed side by side)
or follow from the vocabulary by hand."""
import numpy as np
import pytest

import tensorweave as tf

fc = tf.feature_column


def indicator(features, column):
    return fc.input_layer(features, [fc.indicator_column(column)])


def counts(rows, size):
    """Multi-hot counts of lists of ids (an independent reference)."""
    out = np.zeros((len(rows), size), np.float32)
    for r, ids in enumerate(rows):
        for i in ids:
            out[r, i] += 1
    return out


def test_hash_bucket_ids_are_tf_farmhash_ids(graph, evaluate):
    strings = fc.categorical_column_with_hash_bucket("h", 1000)
    integers = fc.categorical_column_with_hash_bucket("hi", 1000, dtype=tf.int64)
    assert strings.num_buckets == 1000 and strings.parse_example_spec == {
        "h": tf.io.VarLenFeature(tf.string)}
    cols_to_vars = {}
    out = fc.linear_model({"h": tf.constant([["apple"], ["pear"], ["kiwi"]]),
                           "hi": tf.constant([[12], [5], [40000]], tf.int64)},
                          [strings, integers], cols_to_vars=cols_to_vars)
    # weight of id k: k for "h" and 1000 k for "hi", so the output spells both ids
    before = [tf.assign(cols_to_vars[strings][0], np.arange(1000.).reshape(-1, 1)),
              tf.assign(cols_to_vars[integers][0], 1000 * np.arange(1000.).reshape(-1, 1))]
    ids = [(int(v) % 1000, int(v) // 1000) for v in evaluate(out, before=before).ravel()]
    # TF 2.21's ids (integers hash as their decimal strings)
    assert ids == [(601, 888), (918, 971), (273, 504)]


def test_hash_bucket_dense_inputs_drop_missing_values(graph, evaluate):
    strings = indicator({"h": tf.constant([["apple", "pear"], ["kiwi", ""]])},
                        fc.categorical_column_with_hash_bucket("h", 7))
    ints = indicator({"h": tf.constant([[12, 5], [-1, 40000]], tf.int32)},
                     fc.categorical_column_with_hash_bucket("h", 7, dtype=tf.int32))
    got_strings, got_ints = evaluate([strings, ints])
    # TF 2.21's values: "" and -1 are missing, not hashed
    np.testing.assert_array_equal(got_strings, [[1, 1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(got_ints, [[0, 1, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0, 0]])


def test_vocabulary_list_ids_oov_buckets_and_default(graph, evaluate):
    with_oov = fc.categorical_column_with_vocabulary_list("v", ["a", "b", "c"],
                                                          num_oov_buckets=3)
    with_default = fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c"],
                                                              default_value=1)
    int_oov = fc.categorical_column_with_vocabulary_list("n", [10, 20, 30],
                                                         num_oov_buckets=2)
    int32 = fc.categorical_column_with_vocabulary_list("m", [10, 20, 30], dtype=tf.int32)
    assert with_oov.num_buckets == 6 and int_oov.dtype == tf.int64
    out = evaluate([
        indicator({"v": tf.constant([["a", "zz"], ["c", "yy"], ["b", "b"]])}, with_oov),
        indicator({"w": tf.constant([["a", "zz"], ["c", ""]])}, with_default),
        indicator({"n": tf.constant([[10, 99], [30, -1]], tf.int64)}, int_oov),
        indicator({"m": tf.constant([[10, 99], [30, -1]], tf.int32)}, int32)])
    # words get their positions; "zz" and "yy" land in TF 2.21's hash buckets 4 and 4,
    # 99 in bucket 3; "zz" gets the default 1 without buckets; 99 is dropped (-1)
    np.testing.assert_array_equal(out[0], counts([[0, 4], [2, 4], [1, 1]], 6))
    np.testing.assert_array_equal(out[1], counts([[0, 1], [2]], 3))
    np.testing.assert_array_equal(out[2], counts([[0, 3], [2]], 5))
    np.testing.assert_array_equal(out[3], counts([[0], [2]], 3))


def test_vocabulary_file_columns(graph, evaluate, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("a\nb\nc\nd\n")
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("10\n20\n30\n")
    first_three = fc.categorical_column_with_vocabulary_file("v", str(words),
                                                             vocabulary_size=3,
                                                             num_oov_buckets=2)
    assert first_three.num_buckets == 5
    counted = fc.categorical_column_with_vocabulary_file("w", str(words), default_value=0)
    assert counted.vocabulary_size == 4  # the file's lines
    ints = fc.categorical_column_with_vocabulary_file("n", str(numbers), dtype=tf.int64)
    out = evaluate([
        indicator({"v": tf.constant([["a", "d"], ["c", "zz"]])}, first_three),
        indicator({"w": tf.constant([["b", "d"], ["q", ""]])}, counted),
        indicator({"n": tf.constant([[30, 10], [20, 5]], tf.int64)}, ints)])
    # "d" is past vocabulary_size, so it is out of vocabulary: TF 2.21 hashes it (and
    # "zz") to bucket 3 + 1 and 3 + 0
    np.testing.assert_array_equal(out[0], counts([[0, 4], [2, 3]], 5))
    np.testing.assert_array_equal(out[1], counts([[1, 3], [0]], 4))
    np.testing.assert_array_equal(out[2], counts([[2, 0], [1]], 3))


def test_tables_need_tables_initializer(graph):
    out = indicator({"v": tf.constant([["a"]])},
                    fc.categorical_column_with_vocabulary_list("v", ["a"]))
    assert len(tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)) == 1
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
            sess.run(out)
        sess.run(tf.tables_initializer())
        np.testing.assert_array_equal(sess.run(out), [[1.]])


def test_vocabulary_table_is_built_outside_cond_and_while_loop(graph, evaluate):
    column = fc.indicator_column(fc.categorical_column_with_vocabulary_list("v", ["a", "b"]))
    words = tf.constant([["a"], ["b"]])
    in_cond = tf.cond(tf.constant(True), lambda: fc.input_layer({"v": words}, [column]),
                      lambda: tf.zeros([2, 2]))
    in_loop = tf.while_loop(
        lambda i, total: i < 3,
        lambda i, total: (i + 1, total + fc.input_layer({"v": words}, [column])),
        [tf.constant(0), tf.zeros([2, 2])])[1]
    got_cond, got_loop = evaluate([in_cond, in_loop])
    np.testing.assert_array_equal(got_cond, np.eye(2))
    np.testing.assert_array_equal(got_loop, 3 * np.eye(2))


def test_identity_default_value_and_sparse_input(graph, evaluate):
    with_default = fc.categorical_column_with_identity("i", 4, default_value=0)
    plain = fc.categorical_column_with_identity("j", 4)
    assert plain.parse_example_spec == {"j": tf.io.VarLenFeature(tf.int64)}
    out = evaluate([
        indicator({"i": tf.constant([[1, 7], [3, -1]], tf.int64)}, with_default),
        indicator({"j": tf.SparseTensor([[0, 0], [0, 1], [2, 0]],
                                        tf.constant([1, 1, 3], tf.int64), [3, 2])}, plain)])
    # 7 is out of range -> 0; -1 is missing; a sparse input is used as it is
    np.testing.assert_array_equal(out[0], counts([[1, 0], [3]], 4))
    np.testing.assert_array_equal(out[1], counts([[1, 1], [], [3]], 4))


def test_weighted_column_sums_weights_per_id(graph, evaluate):
    column = fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w")
    assert column.name == "i_weighted_by_w" and column.num_buckets == 4
    assert column.parse_example_spec == {"i": tf.io.VarLenFeature(tf.int64),
                                         "w": tf.io.VarLenFeature(tf.float32)}
    out = indicator({"i": tf.constant([[1, 1], [3, 0]], tf.int64),
                     "w": tf.constant([[0.5, 2.0], [3.0, 1.5]])}, column)
    np.testing.assert_array_equal(evaluate(out), [[0, 2.5, 0, 0], [1.5, 0, 0, 3.0]])


VOCAB = "/nonexistent/vocabulary.txt"


@pytest.mark.parametrize("make, error, message", [
    (lambda: fc.categorical_column_with_hash_bucket("h", 0), ValueError,
     "hash_bucket_size must be at least 1. hash_bucket_size: 0, key: h"),
    (lambda: fc.categorical_column_with_hash_bucket("h", None), ValueError,
     "hash_bucket_size must be set. key: h"),
    (lambda: fc.categorical_column_with_hash_bucket("h", 3, dtype=tf.float32), ValueError,
     "column_name: h dtype must be string or integer. dtype: <dtype: 'float32'>."),
    (lambda: fc.categorical_column_with_hash_bucket(("h",), 3), ValueError,
     "key must be a string. Got: type <class 'tuple'>. Given key: ('h',)."),
    (lambda: fc.categorical_column_with_vocabulary_list("v", ["a", "a"]), ValueError,
     "Duplicate keys in vocabulary_list ['a', 'a'], column_name: v"),
    (lambda: fc.categorical_column_with_vocabulary_list("v", []), ValueError,
     "vocabulary_list [] must be non-empty, column_name: v"),
    (lambda: fc.categorical_column_with_vocabulary_list("v", ["a"], default_value=2,
                                                        num_oov_buckets=1), ValueError,
     "Can't specify both num_oov_buckets and default_value in v."),
    (lambda: fc.categorical_column_with_vocabulary_list("v", ["a"], num_oov_buckets=-1),
     ValueError, "Invalid num_oov_buckets -1 in v."),
    (lambda: fc.categorical_column_with_vocabulary_list("v", ["a"], dtype=tf.int64),
     ValueError, "dtype <dtype: 'int64'> and vocabulary dtype <dtype: 'string'> do not "
     "match, column_name: v"),
    (lambda: fc.categorical_column_with_vocabulary_list("v", [1.5]), ValueError,
     "column_name: v vocabulary dtype must be string or integer. dtype: "
     "<dtype: 'float64'>."),
    (lambda: fc.categorical_column_with_vocabulary_file("v", VOCAB), ValueError,
     "vocabulary_file in v does not exist."),
    (lambda: fc.categorical_column_with_vocabulary_file("v", ""), ValueError,
     "Missing vocabulary_file in v."),
    (lambda: fc.categorical_column_with_vocabulary_file("v", VOCAB, vocabulary_size=0),
     ValueError, "Invalid vocabulary_size in v."),
    (lambda: fc.categorical_column_with_vocabulary_file("v", VOCAB, vocabulary_size=3,
                                                        num_oov_buckets=1, default_value=0),
     ValueError, "Can't specify both num_oov_buckets and default_value in v."),
    (lambda: fc.categorical_column_with_identity("i", 0), ValueError,
     "num_buckets 0 < 1, column_name i"),
    (lambda: fc.categorical_column_with_identity("i", 4, default_value=4), ValueError,
     "default_value 4 not in range [0, 4), column_name i"),
    (lambda: fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w",
                                            dtype=tf.string), ValueError,
     "dtype <dtype: 'string'> is not convertible to float."),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert str(info.value) == message


def test_unsupported_vocabulary_files_are_named():
    with pytest.raises(NotImplementedError, match="GZIP TFRecord"):
        fc.categorical_column_with_vocabulary_file("v", "/data/words.tfrecord.gz", 3)


@pytest.mark.parametrize("features, column, message", [
    (lambda: {"h": tf.constant([[1.]])}, fc.categorical_column_with_hash_bucket("h", 3),
     "column_name: h input_tensor dtype must be string or integer. "
     "dtype: <dtype: 'float32'>."),
    (lambda: {"h": tf.constant([["x"]])}, fc.categorical_column_with_hash_bucket("h", 3, tf.int64),
     "Column dtype and SparseTensors dtype must be compatible. key: h, column dtype: "
     "<dtype: 'int64'>, tensor dtype: <dtype: 'string'>"),
    (lambda: {"v": tf.constant([[1]])}, fc.categorical_column_with_vocabulary_list("v", ["a"]),
     "Column dtype and SparseTensors dtype must be compatible. key: v, column dtype: "
     "<dtype: 'string'>, tensor dtype: <dtype: 'int32'>"),
    (lambda: {"i": tf.constant([["x"]])}, fc.categorical_column_with_identity("i", 4),
     "Invalid input, not integer. key: i dtype: <dtype: 'string'>"),
    (lambda: {"i": tf.constant([[1]]), "w": tf.constant([[1]])},
     fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w"),
     "Bad dtype, expected <dtype: 'float32'>, but got <dtype: 'int32'>."),
], ids=["hash-float", "hash-int-column-string-input", "vocab-string-column-int-input",
        "identity-string", "weight-dtype"])
def test_input_errors(graph, features, column, message):
    with pytest.raises(ValueError) as info:
        indicator(features(), column)
    assert str(info.value) == message


def test_weighted_column_refuses_weights_that_do_not_line_up_with_its_ids():
    """TF pairs ids and weights by position and fails when their counts differ (here
    the id -1 is dropped, its weight 9 is not): no weight is dropped silently."""
    fc = tf.feature_column
    wc = fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w")
    ids = tf.constant([[1, 3], [2, -1]], tf.int64)
    good = fc.input_layer({"i": ids, "w": tf.constant([[2.0, 3.0], [4.0, 0.0]])},
                          [fc.indicator_column(wc)])
    bad = {"i": ids, "w": tf.constant([[2.0, 3.0], [4.0, 9.0]])}
    outs = [fc.input_layer(bad, [fc.indicator_column(wc)]),
            fc.input_layer(bad, [fc.embedding_column(wc, 1, combiner="sum",
                                                     initializer=tf.ones_initializer())]),
            fc.linear_model(bad, [wc])]
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        assert sess.run(good).tolist() == [[0, 2, 0, 3], [0, 0, 4, 0]]
        for out in outs:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Number of elements in ids and weights do not match"):
                sess.run(out)
