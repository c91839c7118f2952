"""Lookup tables (tf.lookup): static tables from tensors and text files, mutable tables
and their checkpoints, with TF's errors (checked against TF 2.21 by hand)."""
import os

import numpy as np
import pytest

import tensorweave as tf


def test_static_table_from_tensors(sess):
    init = tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2, 3],
                                               value_dtype=tf.int64)
    table = tf.lookup.StaticHashTable(init, -1)
    assert (table.key_dtype, table.value_dtype, table.name) == (tf.string, tf.int64,
                                                                "hash_table")
    keys = tf.constant([["a", "z"], ["c", "b"]])
    found = table.lookup(keys)
    assert found.shape.as_list() == [2, 2] and found.dtype == tf.int64
    with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
        sess.run(found)
    assert tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS) == [table.initializer]
    sess.run(tf.tables_initializer())
    ref = {b"a": 1, b"b": 2, b"c": 3}
    want = [[ref.get(k, -1) for k in row] for row in [[b"a", b"z"], [b"c", b"b"]]]
    assert sess.run(found).tolist() == want
    assert sess.run(table.size()) == 3
    sess.run(table.initializer)  # again, with the same data: nothing changes
    k, v = sess.run(table.export())
    assert dict(zip(k.tolist(), v.tolist())) == ref
    sparse = sess.run(table.lookup(tf.SparseTensor([[0, 0], [1, 2]], ["b", "zz"], [2, 3])))
    assert sparse.values.tolist() == [2, -1] and sparse.dense_shape.tolist() == [2, 3]


def test_numeric_keys_and_values(sess):
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([1, 5], tf.int64), tf.constant([0.5, 1.5])), 0.0)
    sess.run(table.initializer)
    assert sess.run(table.lookup(tf.constant([5, 2, 1], tf.int64))).tolist() == [1.5, 0.0,
                                                                                  0.5]


def test_static_table_errors(sess):
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1)
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be <dtype: 'string'>,"
                       " received: <dtype: 'int32'>"):
        table.lookup(tf.constant([1, 2]))
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \(\)"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), [1, 2])
    dup = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]),
                                    -1)
    with pytest.raises(tf.errors.FailedPreconditionError, match="HashTable has different "
                       "value for same key. Key a has 1 and trying to add value 2"):
        sess.run(dup.initializer)


@pytest.fixture
def vocab(tmp_path):
    path = str(tmp_path / "vocab.txt")
    with open(path, "w") as f:
        f.write("cat\t3\ndog\t5\r\nfish\t7\n")
    return path


def test_text_file_tables(sess, vocab):
    idx = tf.lookup.TextFileIndex
    by_column = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.int64, 1), -1)
    by_line = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, idx.WHOLE_LINE, tf.int64,
                                      idx.LINE_NUMBER, value_index_offset=10), -1)
    first_two = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.int64, idx.LINE_NUMBER,
                                      vocab_size=2), -1)
    numbers = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.int64, idx.LINE_NUMBER, tf.float32, 1), -1.0)
    assert [t.op.name for t in tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)] == [
        "asset_path", "asset_path_1", "asset_path_2", "asset_path_3"]
    sess.run(tf.tables_initializer())
    words = tf.constant(["dog", "x", "fish"])
    assert sess.run(by_column.lookup(words)).tolist() == [5, -1, 7]
    assert sess.run(by_line.lookup(tf.constant(["fish\t7", "dog\t5", "dog"]))).tolist() == [
        12, 11, -1]
    assert sess.run(first_two.lookup(words)).tolist() == [1, -1, -1]
    assert sess.run(numbers.lookup(tf.constant([2, 0, 9], tf.int64))).tolist() == [7.0, 3.0,
                                                                                  -1.0]


def test_text_file_errors(sess, vocab, tmp_path):
    with pytest.raises(ValueError, match="`key_dtype` must be int64 if `key_index` is -1"):
        tf.lookup.TextFileInitializer(vocab, tf.string, tf.lookup.TextFileIndex.LINE_NUMBER,
                                      tf.int64, 1)
    too_many = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.int64, 1, vocab_size=5), -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid vocab_size in .*: "
                       "expected 5 but got 3"):
        sess.run(too_many.initializer)
    not_int = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.int64, 0), -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field cat in line 0 is not a "
                       "valid int64"):
        sess.run(not_int.initializer)
    missing = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(tmp_path / "nope.txt"), tf.string, 0, tf.int64, 1), -1)
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
        sess.run(missing.initializer)


def test_mutable_tables(sess):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    sess.run(table.insert(["x", "y", "z"], tf.constant([10, 20, 30], tf.int64)))
    sess.run(table.remove(tf.constant(["x", "absent"])))
    keys = tf.constant(["x", "y", "z"])
    assert sess.run(table.lookup(keys)).tolist() == [-1, 20, 30]
    assert sess.run(table.lookup(keys, dynamic_default_values=tf.constant(
        [7, 8, 9], tf.int64)[0])).tolist() == [7, 20, 30]
    assert sess.run(table.size()) == 2
    sess.run(table.insert(["y"], tf.constant([21], tf.int64)))  # replaces
    k, v = sess.run(table.export())
    assert dict(zip(k.tolist(), v.tolist())) == {b"y": 21, b"z": 30}
    vectors = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, -1.0],
                                                      name="vectors")
    assert vectors.resource_handle.op.type == "MutableHashTableOfTensorsV2"
    sess.run(vectors.insert(tf.constant([4], tf.int64), [[1.5, 2.5]]))
    got = sess.run(vectors.lookup(tf.constant([[4, 5]], tf.int64)))
    assert got.shape == (1, 2, 2) and got.tolist() == [[[1.5, 2.5], [0.0, -1.0]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected shape"):
        sess.run(vectors.insert(tf.constant([4], tf.int64), [1.0]))


def test_mutable_tables_are_checkpointed(tmp_path):
    prefix = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, 0.0,
                                                        name="counts")
        insert = table.insert(["a", "b"], [1.5, 2.5])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(insert)
            saver.save(sess, prefix)
        assert sorted(n for n, _ in tf.train.list_variables(prefix)) == [
            "counts-keys", "counts-values"]
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, 0.0,
                                                        name="counts")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            assert sess.run(table.lookup(tf.constant(["b", "a", "c"]))).tolist() == [
                2.5, 1.5, 0.0]


def test_a_table_travels_in_a_saved_model(tmp_path, vocab):
    export = str(tmp_path / "model")
    with tf.Graph().as_default():
        words = tf.placeholder(tf.string, [None], name="words")
        table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.int64, 1), -1)
        ids = tf.identity(table.lookup(words), name="ids")
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            tf.saved_model.simple_save(sess, export, {"words": words}, {"ids": ids},
                                       legacy_init_op=tf.tables_initializer())
    os.remove(vocab)  # the SavedModel's copy is read
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.load(sess, ["serve"], export)
        assert sess.run("ids:0", {"words:0": ["fish", "cat", "?"]}).tolist() == [7, 3, -1]


def test_dense_hash_tables_reserve_two_keys(sess):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, default_value=-1.0,
                                                  empty_key=0, deleted_key=-1)
    assert table.resource_handle.op.type == "MutableDenseHashTableV2"
    sess.run(table.insert(tf.constant([5, 7], tf.int64), tf.constant([0.5, 0.7])))
    sess.run(table.insert_or_assign(tf.constant([5], tf.int64), tf.constant([1.5])))
    sess.run(table.erase(tf.constant([7, 9], tf.int64)))
    assert sess.run(table.lookup(tf.constant([5, 7, 3], tf.int64))).tolist() == [1.5, -1.0,
                                                                                 -1.0]
    assert sess.run(table.size()) == 1
    for build, which in ((lambda: table.insert(tf.constant([0], tf.int64), [1.0]), "empty"),
                         (lambda: table.lookup(tf.constant([-1], tf.int64)), "deleted"),
                         (lambda: table.erase(tf.constant([0], tf.int64)), "empty")):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Using the %s_key as a table "
                           "key is not allowed" % which):
            sess.run(build())
    same = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, -1.0, empty_key=3,
                                                 deleted_key=3, name="same")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Empty and deleted keys cannot be "
                                                             "equal"):
        sess.run(same.size())
    # TF's export lists every bucket, empty ones holding empty_key: an import skips them
    sess.run(_import(table, [0, 4, -1, 0], [0.0, 4.5, 0.0, 0.0]))
    assert sess.run(table.lookup(tf.constant([4, 5], tf.int64))).tolist() == [4.5, -1.0]


def _import(table, keys, values):
    from tensorweave.framework.op_builder import apply_op
    return apply_op("LookupTableImportV2", [table.resource_handle,
                                            tf.constant(keys, tf.int64),
                                            tf.constant(values, tf.float32)])


def test_tables_over_the_same_file_share_one_table(sess, tmp_path):
    # TF names a text-file table after its file and columns: initializing one fills both
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\nc\n")

    def table():
        return tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(path), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    first, second = table(), table()
    sess.run(first.initializer)
    assert sess.run(second.lookup(tf.constant(["b", "z"]))).tolist() == [1, -1]
    sess.run(tf.tables_initializer())  # filling it again with the same data is fine
    assert sess.run(first.lookup(tf.constant(["c"]))).tolist() == [2]


def test_key_value_count_mismatch_is_a_build_time_error():
    # TF's shape inference rejects 2 keys with 3 values when the initializer is built.
    init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.lookup.StaticHashTable(init, -1)
    with pytest.raises(ValueError, match="must have rank 1"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([["a"]], [[1]]), -1)


def test_mutable_table_import_row_count_mismatch():
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, [0.0, 0.0])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 1"):
        tf.raw_ops.LookupTableImportV2(table_handle=table.resource_handle,
                                       keys=tf.constant(["a", "b"]),
                                       values=tf.constant([[1.0, 2.0]]))


@pytest.mark.parametrize("attrs, message", [
    ({"initial_num_buckets": 3}, "power of 2, got: 3"),
    ({"initial_num_buckets": 0}, "power of 2, got: 0"),
])
def test_dense_table_bucket_count_must_be_a_power_of_two(sess, attrs, message):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0,
                                                  deleted_key=-1, **attrs)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(table.size())


def test_dense_table_with_small_power_of_two_buckets_grows(sess):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0,
                                                  deleted_key=-1, initial_num_buckets=8)
    keys = np.arange(5, 12, dtype=np.int64)
    sess.run(table.insert(keys, keys * 10))
    assert sess.run(table.size()) == 7
    assert sess.run(table.lookup(tf.constant([11, 5, 4], tf.int64))).tolist() == [110, 50, -1]


def test_mutable_lookup_with_a_default_per_key(sess):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    sess.run(table.insert(tf.constant(["a"]), tf.constant([10], tf.int64)))
    found = table.lookup(tf.constant([["a", "b"]]),
                         dynamic_default_values=tf.constant([[7, 8]], tf.int64))
    assert found.shape.as_list() == [1, 2]
    assert sess.run(found).tolist() == [[10, 8]]  # "a" found, "b" takes its own default
    wrong = table.lookup(tf.constant(["a", "b"]),
                         dynamic_default_values=tf.constant([7], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected shape \[\] or \[2\] for default value, got \[1\]"):
        sess.run(wrong)


def test_table_of_vectors_with_a_default_per_key(sess):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, [0.0, 0.0])
    sess.run(table.insert(tf.constant(["a"]), tf.constant([[5.0, 6.0]])))
    found = table.lookup(tf.constant(["a", "b"]),
                         dynamic_default_values=tf.constant([[7.0, 8.0], [1.0, 2.0]]))
    assert found.shape.as_list() == [2, 2]
    assert sess.run(found).tolist() == [[5.0, 6.0], [1.0, 2.0]]


@pytest.mark.parametrize("text, position", [
    (b"a\n\nb\n", 3), (b"ab\r\n\r\nb\n", 6), (b"a\nb\n\n", 5)])
def test_vocabulary_file_with_an_empty_line(sess, tmp_path, text, position):
    # TF names the byte offset just past the empty line (its reader's position)
    path = tmp_path / "vocab.txt"
    path.write_bytes(text)
    init = tf.lookup.TextFileInitializer(str(path), tf.string, -2, tf.int64, -1)
    tf.lookup.StaticHashTable(init, -1)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="empty line found at position %d" % position):
        sess.run(tf.tables_initializer())


def test_empty_line_past_vocab_size_is_not_read(sess, tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"a\n\nb\n")
    init = tf.lookup.TextFileInitializer(str(path), tf.string, -2, tf.int64, -1, vocab_size=1)
    table = tf.lookup.StaticHashTable(init, -1)
    sess.run(tf.tables_initializer())
    assert sess.run(table.size()) == 1


def test_line_number_dtype_messages():
    with pytest.raises(ValueError, match="`value_dtype` must be int64 for `value_index` -1"):
        tf.lookup.TextFileInitializer("v.txt", tf.string, -2, tf.string, -1)
    with pytest.raises(ValueError, match="`key_dtype` must be int64 if `key_index` is -1"):
        tf.lookup.TextFileInitializer("v.txt", tf.int32, -1, tf.string, -2)
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \(\) are not compatible"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), [-1, -2])


@pytest.mark.parametrize("make", [
    lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([1, 2]), tf.constant([1, 2], tf.int64)), tf.constant(0, tf.int64)),
    lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([1.0, 2.0]), [1, 2]), -1),
    lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([1, 2], tf.int64), [True, False]), False),
    lambda: tf.lookup.experimental.MutableHashTable(tf.string, tf.string, "?"),
    lambda: tf.lookup.experimental.MutableHashTable(tf.int32, tf.string, "?"),
])
def test_dtype_pairs_tf_has_no_kernel_for(sess, make):
    # TF registers no HashTable kernel for these pairs: the table's op fails when run
    table = make()
    with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered"):
        sess.run(table.size())


def test_supported_dtype_pairs_still_work(sess):
    bools = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        ["a", "b"], [True, False]), False)
    names = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([1, 2]), ["x", "y"]), "?")
    sess.run(tf.tables_initializer())
    assert sess.run(bools.lookup(tf.constant(["b", "a", "c"]))).tolist() == [False, True,
                                                                             False]
    assert sess.run(names.lookup(tf.constant([2, 3]))).tolist() == [b"y", b"?"]


def test_mutable_hash_table_is_shared_by_its_node_name_as_in_tf():
    """TF's graph mode: a checkpointed MutableHashTable has shared_name "" and
    use_node_name_sharing, so two sessions on one server see one table of that name."""
    server = tf.train.Server.create_local_server()
    try:
        graphs = [tf.Graph(), tf.Graph()]
        with graphs[0].as_default():
            t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="vocab")
            op = t.resource_handle.op
            assert (op.get_attr("shared_name"), op.get_attr("use_node_name_sharing")) == \
                (b"", True)
            insert = t.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
        with graphs[1].as_default():
            other = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1,
                                                            name="vocab")
            found = other.lookup(tf.constant(["b", "c"]))
        with tf.Session(server.target, graph=graphs[0]) as sess:
            sess.run(insert)
        with tf.Session(server.target, graph=graphs[1]) as sess:
            assert sess.run(found).tolist() == [2, -1]
    finally:
        server.stop()
