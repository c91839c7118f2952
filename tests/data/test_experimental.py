"""tf.data.experimental (the same elements as TF 2.21 for these pipelines)."""
import numpy as np
import pytest

import tensorweave as tf

X = tf.data.experimental


def test_transformations(drain):
    r = tf.data.Dataset.range(5)
    assert [b.tolist() for b in drain(r.apply(X.map_and_batch(lambda v: v * 2, 2)))] \
        == [[0, 2], [4, 6], [8]]
    assert [tuple(map(int, e)) for e in drain(r.apply(X.enumerate_dataset(10)))] == \
        [(10, 0), (11, 1), (12, 2), (13, 3), (14, 4)]
    inverse = tf.data.Dataset.from_tensor_slices([1, 2, 0, 4]).map(
        lambda v: tf.debugging.check_numerics(1.0 / tf.cast(v, tf.float32), "inverse"))
    assert drain(inverse.apply(X.ignore_errors())) == [1.0, 0.5, 0.25]
    with pytest.raises(tf.errors.InvalidArgumentError, match="inverse"):
        drain(inverse)
    assert drain(r.apply(X.take_while(lambda v: v < 3))) == [0, 1, 2]
    assert drain(tf.data.Dataset.from_tensor_slices([3, 1, 3, 2, 1]).apply(
        X.unique())) == [3, 1, 2]
    with pytest.raises(TypeError, match="single"):
        tf.data.Dataset.from_tensor_slices(([1], [2])).apply(X.unique())
    epochs = drain(r.apply(X.shuffle_and_repeat(5, 2, seed=3)))
    assert sorted(epochs[:5]) == sorted(epochs[5:]) == list(range(5))
    inter = tf.data.Dataset.range(3).apply(X.parallel_interleave(
        lambda v: tf.data.Dataset.from_tensors(v).repeat(2), cycle_length=2))
    assert drain(inter) == [0, 1, 0, 1, 2, 2]
    assert [u.tolist() for u in drain(tf.data.Dataset.from_tensors([[1, 2], [3, 4]])
                                       .apply(X.unbatch()))] == [[1, 2], [3, 4]]


def test_combinators_and_single_elements(sess, tmp_path, drain):
    a = tf.data.Dataset.from_tensors(b"a").repeat()
    b = tf.data.Dataset.from_tensors(b"b").repeat()
    choices = tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0], tf.int64))
    assert drain(X.choose_from_datasets([a, b], choices)) == [b"a", b"b", b"b", b"a"]
    mixed = drain(X.sample_from_datasets([tf.data.Dataset.range(0, 3),
                                          tf.data.Dataset.range(10, 13)], seed=1))
    assert sorted(mixed) == [0, 1, 2, 10, 11, 12]  # each drained, in its own order
    assert [v for v in mixed if v < 10] == [0, 1, 2]
    heavy = drain(X.sample_from_datasets(
        [tf.data.Dataset.from_tensors(0).repeat(), tf.data.Dataset.from_tensors(1).repeat()],
        [0.9, 0.1], seed=2).take(2000))
    assert abs(np.mean(heavy) - 0.1) < 0.03
    assert drain(X.Counter(5, 2).take(3)) == [5, 7, 9]
    assert drain(X.Counter(0, -1, tf.int32).take(2)) == [0, -1]
    assert sess.run(X.get_single_element(tf.data.Dataset.from_tensors((1, "x")))) == (1, b"x")
    for ds, message in ((tf.data.Dataset.range(2), "more than one element"),
                        (tf.data.Dataset.range(0), "Dataset was empty")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(X.get_single_element(ds))
    path = str(tmp_path / "w.tfrecord")
    sess.run(X.TFRecordWriter(path).write(tf.data.Dataset.from_tensor_slices(["a", "bb"])))
    assert list(tf.python_io.tf_record_iterator(path)) == [b"a", b"bb"]
    with pytest.raises(TypeError, match="scalar `DT_STRING`"):
        X.TFRecordWriter(path).write(tf.data.Dataset.range(2))


def test_csv_datasets(tmp_path, drain):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("age,name,score,label\n20,ann,1.5,1\n31,bob,,0\n")
    b.write_text('age,name,score,label\n45,"c,d",3.25,1\n')
    ds = X.CsvDataset([str(a), str(b)], [tf.int32, tf.string, [9.0], tf.int64], header=True)
    assert ds.output_types == (tf.int32, tf.string, tf.float32, tf.int64)
    assert drain(ds) == [(20, b"ann", 1.5, 1), (31, b"bob", 9.0, 0),
                                (45, b"c,d", 3.25, 1)]
    picked = X.CsvDataset(str(a), [[0], [0]], header=True, select_cols=[0, 3])
    assert drain(picked) == [(20, 1), (31, 0)]
    with pytest.raises(ValueError, match="not both"):
        X.CsvDataset(str(a), [[0]], select_cols=[0], exclude_cols=[1])
    made = X.make_csv_dataset(str(tmp_path / "*.csv"), batch_size=2, label_name="label",
                              shuffle=False, num_epochs=1)
    features, label = made.output_types
    assert list(features) == ["age", "name", "score"] and label == tf.int32
    assert (features["age"], features["score"]) == (tf.int32, tf.float32)
    (f1, l1), (f2, l2) = drain(made)
    assert f1["age"].tolist() == [20, 31] and f1["name"].tolist() == [b"ann", b"bob"]
    assert f1["score"].tolist() == [1.5, 0.0] and l1.tolist() == [1, 0]
    assert f2["name"].tolist() == [b"c,d"] and l2.tolist() == [1]
    with pytest.raises(ValueError, match="No files match"):
        X.make_csv_dataset(str(tmp_path / "none*.csv"), 2)
    with pytest.raises(ValueError, match="`label_name` provided must be one of the columns"):
        X.make_csv_dataset(str(tmp_path / "*.csv"), 2, label_name="nope")


def test_scan_and_bucket_by_sequence_length(drain):
    sums = tf.data.Dataset.range(5).apply(
        X.scan(tf.constant(0, tf.int64), lambda state, v: (state + v, state * 10 + v)))
    assert drain(sums) == [0, 1, 12, 33, 64]
    with pytest.raises(TypeError, match="must match the initial state"):
        tf.data.Dataset.range(3).apply(X.scan(tf.constant(0.0), lambda s, v: (v, v)))
    lengths = [1, 5, 2, 7, 3, 6, 2, 9, 4]
    rows = np.array([[i + 1] * n + [0] * (9 - n) for i, n in enumerate(lengths)])
    seqs = tf.data.Dataset.from_tensor_slices(rows).map(
        lambda r: r[:tf.reduce_sum(tf.cast(r > 0, tf.int32))])
    batches = seqs.apply(X.bucket_by_sequence_length(lambda r: tf.shape(r)[0], [3, 6],
                                                     [2, 2, 2]))
    got = [b.tolist() for b in drain(batches)]
    # TF 2.21's batches: full buckets as they fill, then the rest in bucket order
    assert got == [[[1, 0], [3, 3]], [[2, 2, 2, 2, 2], [5, 5, 5, 0, 0]],
                   [[4] * 7, [6] * 6 + [0]], [[7, 7]], [[9] * 4], [[8] * 9]]
    to_boundary = seqs.take(3).apply(X.bucket_by_sequence_length(
        lambda r: tf.shape(r)[0], [3, 6], [2, 2, 2], pad_to_bucket_boundary=True))
    assert [b.tolist() for b in drain(to_boundary)] == [[[1, 0], [3, 3]],
                                                                [[2, 2, 2, 2, 2]]]
    too_long = seqs.apply(X.bucket_by_sequence_length(
        lambda r: tf.shape(r)[0], [3, 6], [2, 2, 2], pad_to_bucket_boundary=True))
    with pytest.raises(tf.errors.InvalidArgumentError, match="length < max"):
        drain(too_long)
    with pytest.raises(ValueError, match="must equal len\\(bucket_boundaries\\) \\+ 1"):
        X.bucket_by_sequence_length(lambda r: 1, [3], [2])
