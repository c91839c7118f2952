"""tf.data.experimental.make_batched_features_dataset (data/readers.py): the same batches
as TensorFlow 2.21 for the same files (written here with tf.io.TFRecordWriter)."""
import numpy as np
import pytest

import tensorweave as tf


def _example(i):
    f = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, -i])),
         "tag": tf.train.Feature(bytes_list=tf.train.BytesList(
             value=[b"t%d" % j for j in range(i % 3)])),
         "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


@pytest.fixture
def records(tmp_path):
    for name, rng in (("b.tfrecord", range(5, 9)), ("a.tfrecord", range(0, 5))):
        with tf.io.TFRecordWriter(str(tmp_path / name)) as w:
            for i in rng:
                w.write(_example(i))
    return tmp_path


FEATURES = {"x": tf.io.FixedLenFeature([2], tf.float32),
            "tag": tf.io.VarLenFeature(tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}


def test_batches_of_parsed_examples_in_file_order(records, drain):
    ds = tf.data.experimental.make_batched_features_dataset(
        str(records / "*.tfrecord"), 4, FEATURES, num_epochs=1, shuffle=False)
    assert {k: v.as_list() for k, v in ds.output_shapes.items()} == {
        "x": [None, 2], "tag": [None, None], "label": [None]}
    assert ds.output_classes["tag"] is tf.SparseTensor
    batches = drain(ds)
    assert [b["label"].tolist() for b in batches] == [[0, 1, 0, 1], [0, 1, 0, 1], [0]]
    np.testing.assert_array_equal(batches[1]["x"], [[2, -4], [2.5, -5], [3, -6], [3.5, -7]])
    tag = batches[1]["tag"]
    assert tag.indices.tolist() == [[0, 0], [1, 0], [1, 1], [3, 0]]
    assert tag.values.tolist() == [b"t0", b"t0", b"t1", b"t0"]
    assert tag.dense_shape.tolist() == [4, 2]


def test_labels_epochs_and_the_final_batch(records, drain):
    ds = tf.data.experimental.make_batched_features_dataset(
        str(records / "*.tfrecord"), 4, FEATURES, label_key="label", num_epochs=2,
        shuffle=False, drop_final_batch=True)
    batches = drain(ds)
    assert [label.tolist() for _, label in batches] == [
        [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 1, 0], [1, 0, 1, 0]]
    assert sorted(batches[0][0]) == ["tag", "x"]
    np.testing.assert_array_equal(batches[2][0]["x"][:, 0], [4.0, 0.0, 0.5, 1.0])


def test_files_read_in_turn_and_shuffled_epochs(records, drain):
    files = [str(records / "b.tfrecord"), str(records / "a.tfrecord")]
    turns = tf.data.experimental.make_batched_features_dataset(
        files, 3, FEATURES, num_epochs=1, shuffle=False, reader_num_threads=2)
    assert [b["x"][:, 0].tolist() for b in drain(turns)] == [
        [0.0, 2.5, 0.5], [3.0, 1.0, 3.5], [1.5, 4.0, 2.0]]
    shuffled = tf.data.experimental.make_batched_features_dataset(
        str(records / "*.tfrecord"), 9, FEATURES, num_epochs=1, shuffle_seed=3)
    [batch] = drain(shuffled)
    assert sorted(batch["x"][:, 0].tolist()) == [i * 0.5 for i in range(9)]


def test_a_label_that_is_not_a_feature(graph, records):
    with pytest.raises(ValueError, match=r"The `label_key` provided \(nope\) must be one "
                                         r"of the `features` keys"):
        tf.data.experimental.make_batched_features_dataset(
            str(records / "*.tfrecord"), 4, FEATURES, label_key="nope")


@pytest.fixture
def database(tmp_path):
    import sqlite3
    path = str(tmp_path / "t.db")
    c = sqlite3.connect(path)
    c.execute("create table t (name text, n integer, x real, ok integer)")
    c.executemany("insert into t values (?, ?, ?, ?)",
                  [("a", 1, 0.5, 1), ("b", -2, 1.25, 0), ("c", 300, -3.0, 1)])
    c.commit()
    c.close()
    return path


def test_sql_rows_as_tf_reads_them(database, drain):
    X = tf.data.experimental
    rows = X.SqlDataset("sqlite", database, "select name, n, x, ok from t order by n",
                        (tf.string, tf.int32, tf.float64, tf.bool))
    assert rows.output_types == (tf.string, tf.int32, tf.float64, tf.bool)
    assert [tuple(v.item() if hasattr(v, "item") else v for v in r)
            for r in drain(rows)] == [
        (b"b", -2, 1.25, False), (b"a", 1, 0.5, True), (b"c", 300, -3.0, True)]
    narrow = X.SqlDataset("sqlite", database, "select n from t", (tf.int8,))
    assert [int(r[0]) for r in drain(narrow)] == [1, -2, 44]  # 300 wraps, as in TF


@pytest.mark.parametrize("driver,query,types,cls,message", [
    ("sqlite", "select nope from t", (tf.string,), tf.errors.UnknownError,
     "Prepare\\(\\) failed: \\[1\\] no such column: nope: select nope from t"),
    ("sqlite", "select name, n from t", (tf.string,), tf.errors.InvalidArgumentError,
     "The number of columns in query \\(2\\) must match the number of elements in "
     "output_types \\(1\\)."),
    ("mysql", "select name from t", (tf.string,), tf.errors.InvalidArgumentError,
     "The database type, mysql, is not supported by SqlDataset."),
])
def test_sql_errors(sess, database, driver, query, types, cls, message):
    ds = tf.data.experimental.SqlDataset(driver, database, query, types)
    with pytest.raises(cls, match=message):
        sess.run(ds.make_one_shot_iterator().get_next())


@pytest.mark.parametrize("reader", ["tfrecord", "text", "fixed"])
@pytest.mark.parametrize("reads, order", [
    (2, ["0-0", "1-0", "0-1", "1-1", "0-2", "1-2", "2-0", "2-1", "2-2"]),
    (3, ["0-0", "1-0", "2-0", "0-1", "1-1", "2-1", "0-2", "1-2", "2-2"]),
    (None, ["0-0", "0-1", "0-2", "1-0", "1-1", "1-2", "2-0", "2-1", "2-2"])])
def test_num_parallel_reads_interleaves_files_in_tf_order(tmp_path, drain, reader, reads,
                                                           order):
    # TF 2.21 gives these orders: `reads` files open at once, one record from each in turn.
    names = []
    for f in range(3):
        path = str(tmp_path / ("%d.%s" % (f, reader)))
        records = [b"%d-%d" % (f, r) for r in range(3)]
        if reader == "tfrecord":
            with tf.io.TFRecordWriter(path) as w:
                for rec in records:
                    w.write(rec)
        else:
            with open(path, "wb") as w:
                w.write(b"\n".join(records) if reader == "text" else b"".join(records))
        names.append(path)
    ds = {"tfrecord": lambda: tf.data.TFRecordDataset(names, num_parallel_reads=reads),
          "text": lambda: tf.data.TextLineDataset(names, num_parallel_reads=reads),
          "fixed": lambda: tf.data.FixedLengthRecordDataset(
              names, 3, num_parallel_reads=reads)}[reader]()
    assert ds.output_types == tf.string and ds.output_shapes.as_list() == []
    assert [r.decode() for r in drain(ds)] == order
