"""Lookup tables filled from datasets (data/lookup_tables.py): DatasetInitializer,
table_from_dataset, index_table_from_dataset. The looked-up values are TensorFlow
2.21's for the same tables (TF's out-of-vocabulary buckets hash with Fingerprint64)."""
import pytest

import tensorweave as tf

D, X = tf.data.Dataset, tf.data.experimental
QUERY = [b"a", b"c", b"zz", b"b"]


def _keys():
    return D.from_tensor_slices([b"a", b"b", b"c"])


def _pairs():
    return D.zip((_keys(), D.range(10, 13)))


@pytest.mark.parametrize("make,expected,size", [
    (lambda: X.table_from_dataset(_pairs(), default_value=-1), [10, 12, -1, 11], 3),
    (lambda: X.table_from_dataset(_pairs()), [10, 12, -1, 11], 3),
    (lambda: X.table_from_dataset(_pairs(), num_oov_buckets=2), [10, 12, 3, 11], 5),
    (lambda: X.index_table_from_dataset(_keys()), [0, 2, -1, 1], 3),
    (lambda: X.index_table_from_dataset(_keys(), num_oov_buckets=1), [0, 2, 3, 1], 4),
    (lambda: X.table_from_dataset(_pairs(), vocab_size=2, default_value=-1),
     [10, -1, -1, 11], 2),
    (lambda: tf.lookup.StaticHashTable(X.DatasetInitializer(_pairs()), -7),
     [10, 12, -7, 11], 3),
])
def test_lookups_match_tf(sess, make, expected, size):
    table = make()
    sess.run(tf.tables_initializer())
    assert sess.run(table.lookup(tf.constant(QUERY))).tolist() == expected
    assert sess.run(table.size()) == size


def test_values_of_other_dtypes(sess):
    floats = X.table_from_dataset(D.zip((_keys(), D.range(10, 13).map(
        lambda x: tf.cast(x, tf.float32)))))
    strings = X.table_from_dataset(D.zip((D.range(10, 13), _keys())), key_dtype=tf.int64,
                                   default_value="?")
    ints = X.index_table_from_dataset(D.range(10, 13), key_dtype=tf.int64)
    sess.run(tf.tables_initializer())
    assert sess.run(floats.lookup(tf.constant([b"a", b"zz"]))).tolist() == [10.0, -1.0]
    assert sess.run(strings.lookup(tf.constant([11, 99], tf.int64))).tolist() == [b"b", b"?"]
    assert sess.run(ints.lookup(tf.constant([12, 99], tf.int64))).tolist() == [2, -1]


def test_the_initializer_reads_a_whole_pipeline(sess, tmp_path):
    # a vocabulary from a file through a map: what a tensor initializer cannot do
    path = tmp_path / "vocab.txt"
    path.write_text("apple\npear\nfig\n")
    words = tf.data.TextLineDataset(str(path)).map(tf.strings.upper)
    table = X.index_table_from_dataset(words)
    sess.run(tf.tables_initializer())
    assert sess.run(table.lookup(tf.constant([b"FIG", b"apple", b"PEAR"]))).tolist() == \
        [2, -1, 1]


def test_build_errors():
    with pytest.raises(ValueError, match="`num_oov_buckets` must be greater than or equal "
                                         "to 0, got -1."):
        X.table_from_dataset(_pairs(), num_oov_buckets=-1)
    with pytest.raises(ValueError, match="`vocab_size` must be greater than 0, got 0."):
        X.table_from_dataset(_pairs(), vocab_size=0)
    with pytest.raises(ValueError, match="`default_value` must be specified"):
        X.table_from_dataset(D.zip((D.range(3), _keys())), key_dtype=tf.int64)
    with pytest.raises(ValueError, match="keys are int64 but `key_dtype` is string"):
        X.index_table_from_dataset(D.range(3))
    with pytest.raises(ValueError, match="elements of two scalar tensors"):
        X.table_from_dataset(_keys())
    with pytest.raises(ValueError, match="must be scalars"):
        X.DatasetInitializer(D.zip((_keys().batch(2), D.range(2))))
    with pytest.raises(TypeError, match="must be a tf.data.Dataset"):
        X.table_from_dataset(None)
    with pytest.raises(TypeError, match="Invalid `value_dtype`"):
        X.table_from_dataset(D.zip((_keys(), _keys())), num_oov_buckets=1)


def test_run_errors_leave_the_table_uninitialized(sess):
    short = X.table_from_dataset(_pairs(), vocab_size=5, default_value=-1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="declared with 5 entries but "
                                                             "the dataset has 3"):
        sess.run(tf.tables_initializer())
    with pytest.raises(tf.errors.FailedPreconditionError):
        sess.run(short.lookup(tf.constant([b"a"])))
    twice = D.zip((D.from_tensor_slices([b"a", b"a"]), D.range(2)))
    table = X.table_from_dataset(twice, default_value=-1)
    with pytest.raises(tf.errors.FailedPreconditionError, match="different value for same "
                                                                "key"):
        sess.run(table.initializer)


def test_keys_keep_trailing_nuls(sess):
    # the keys were stacked into an |S array: b"a\0" and b"a" became one key (TF: [1, 0, -1])
    table = X.index_table_from_dataset(D.from_tensor_slices([b"a\x00", b"a"]))
    sess.run(tf.tables_initializer())
    assert sess.run(table.lookup(tf.constant([b"a", b"a\x00", b"b"]))).tolist() == [1, 0, -1]
