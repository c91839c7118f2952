"""tf.lookup.StaticVocabularyTable (ops/data_flow/vocabulary_table.py): the expected ids
are TensorFlow 2.21's for the same vocabularies and keys."""
import pytest

import tensorweave as tf


def _words():
    return tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"],
                                               tf.constant([0, 1, 2], tf.int64))


def test_vocabulary_ids_and_hashed_buckets(sess, tmp_path):
    table = tf.lookup.StaticVocabularyTable(_words(), 5)
    ids = table.lookup(tf.constant(["emerson", "lake", "palmer", "king", "crimson"]))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("emerson\nlake\npalmer\n")
    from_file = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
        str(vocab), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), 3)
    sparse = from_file.lookup(tf.SparseTensor([[0, 0], [1, 2]], ["lake", "zzz"], [2, 3]))
    sess.run(tf.tables_initializer())
    assert ids.dtype == tf.int64 and ids.name == "hash_table_Lookup/SelectV2:0"
    assert sess.run(ids).tolist() == [0, 1, 2, 6, 7]
    assert sess.run(table.size()) == 8
    assert sess.run(from_file.lookup(tf.constant([["lake", "x"], ["y", "palmer"]]))).tolist() \
        == [[1, 5], [5, 2]]
    got = sess.run(sparse)
    assert got.values.tolist() == [1, 3] and got.indices.tolist() == [[0, 0], [1, 2]]
    assert sess.run(table[tf.constant(["palmer"])]).tolist() == [2]


def test_integer_keys_and_buckets_only(sess):
    init = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64),
                                               tf.constant([0, 1], tf.int64))
    wide = tf.lookup.StaticVocabularyTable(init, 3)
    narrow = tf.lookup.StaticVocabularyTable(init, 3, lookup_key_dtype=tf.int32)
    hashed = tf.lookup.StaticVocabularyTable(None, 4)
    sess.run(tf.tables_initializer())
    assert sess.run(wide.lookup(tf.constant([10, 30, 20, 7], tf.int64))).tolist() == \
        [0, 4, 1, 3]
    assert sess.run(narrow.lookup(tf.constant([10, 30, 20, 7], tf.int32))).tolist() == \
        [0, 4, 1, 3]
    out = hashed.lookup(tf.constant(["a", "b", "emerson"]))
    assert out.name == "hash_bucket_Lookup/hash_bucket:0"
    assert sess.run(out).tolist() == [3, 2, 2]
    assert sess.run(hashed.size()) == 4
    assert (hashed.name, narrow.key_dtype, narrow.value_dtype) == \
        ("hash_bucket", tf.int32, tf.int64)


def test_errors(sess):
    with pytest.raises(ValueError, match="`num_oov_buckets` must be > 0; use "
                                         "StaticHashTable."):
        tf.lookup.StaticVocabularyTable(_words(), 0)
    with pytest.raises(TypeError, match=r"Invalid `key_dtype`, expected one of \(tf.int64, "
                                        r"tf.string\), but got <dtype: 'int32'>."):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([10], tf.int32), tf.constant([0], tf.int64)), 3)
    with pytest.raises(TypeError, match="Invalid `value_dtype`, expected <dtype: 'int64'> "
                                        "but got <dtype: 'int32'>."):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a"], tf.constant([0], tf.int32)), 3)
    table = tf.lookup.StaticVocabularyTable(_words(), 3, name="voc")
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be <dtype: 'string'>"
                                        ", received: <dtype: 'int64'>"):
        table.lookup(tf.constant([1], tf.int64))
    ids = table.lookup(tf.constant(["lake"]))
    assert ids.name.startswith("voc_Lookup/")
    with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
        sess.run(ids)
