"""tf.data.experimental.group_by_window, group_by_reducer and Reducer (data/grouping.py);
the expected elements are TensorFlow 2.21's for the same pipelines."""
import pytest

import tensorweave as tf

X = tf.data.experimental


def _shuffled(n, step):  # 0..n-1 in the order x * step % n
    return tf.data.Dataset.range(n).map(lambda x: x * step % n)


def test_windows_fill_in_arrival_order_and_the_rest_go_by_key(drain):
    ds = tf.data.Dataset.range(20).apply(X.group_by_window(
        key_func=lambda x: x % 3, reduce_func=lambda k, w: w.batch(4), window_size=4))
    assert [b.tolist() for b in drain(ds)] == [
        [0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11], [12, 15, 18], [13, 16, 19], [14, 17]]
    keyed = _shuffled(23, 7).apply(X.group_by_window(
        key_func=lambda x: x % 5, reduce_func=lambda k, w: w.batch(10).map(lambda b: (k, b)),
        window_size=10))
    assert keyed.output_shapes[1].as_list() == [None]
    assert [(int(k), b.tolist()) for k, b in drain(keyed)] == [
        (0, [0, 5, 10, 15, 20]), (1, [21, 1, 6, 11, 16]), (2, [7, 12, 17, 22, 2]),
        (3, [3, 8, 13, 18]), (4, [14, 19, 4, 9])]


def test_window_sizes_per_key_and_structured_elements(drain):
    sized = tf.data.Dataset.range(12).apply(X.group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda k, w: w.batch(100),
        window_size_func=lambda k: k + 2))
    assert [b.tolist() for b in drain(sized)] == [
        [0, 2], [1, 3, 5], [4, 6], [8, 10], [7, 9, 11]]
    records = tf.data.Dataset.from_tensor_slices({"a": tf.range(6), "b": tf.range(6) * 10})
    grouped = records.apply(X.group_by_window(
        key_func=lambda e: tf.cast(e["a"] % 2, tf.int64), reduce_func=lambda k, w: w.batch(2),
        window_size=2))
    got = [{k: v.tolist() for k, v in e.items()} for e in drain(grouped)]
    assert got == [{"a": [0, 2], "b": [0, 20]}, {"a": [1, 3], "b": [10, 30]},
                   {"a": [4], "b": [40]}, {"a": [5], "b": [50]}]


def test_padded_batches_per_length_bucket_as_in_seq2seq_pipelines(drain):
    # the TF1 NMT tutorial's bucketing: a key per length bucket, padded batches per key
    lengths = tf.data.Dataset.from_tensor_slices([3, 1, 4, 1, 5, 2, 6])
    seqs = lengths.map(lambda n: tf.fill([n], n))
    batched = seqs.apply(X.group_by_window(
        key_func=lambda s: tf.cast(tf.size(s) // 3, tf.int64),
        reduce_func=lambda k, w: w.padded_batch(2, padded_shapes=[None]), window_size=2))
    got = [b.tolist() for b in drain(batched)]
    assert got == [[[3, 3, 3, 0], [4, 4, 4, 4]], [[1], [1]], [[2, 2]], [[5, 5, 5, 5, 5]],
                   [[6, 6, 6, 6, 6, 6]]]


def test_reducers_fold_each_key_and_finish_by_key(drain):
    total = X.Reducer(init_func=lambda k: tf.constant(0, tf.int64),
                      reduce_func=lambda s, x: s + x, finalize_func=lambda s: s)
    sums = _shuffled(23, 7).apply(X.group_by_reducer(lambda x: x % 5, total))
    assert [int(v) for v in drain(sums)] == [50, 55, 60, 42, 46]
    count = X.Reducer(init_func=lambda k: (k, tf.constant(0, tf.int64)),
                      reduce_func=lambda s, x: (s[0], s[1] + 1),
                      finalize_func=lambda k, n: {"key": k, "count": n})
    counts = _shuffled(40, 13).apply(X.group_by_reducer(lambda x: x % 7, count))
    assert [(int(e["key"]), int(e["count"])) for e in drain(counts)] == [
        (0, 6), (1, 6), (2, 6), (3, 6), (4, 6), (5, 5), (6, 5)]
    # a state that grows: its shape is relaxed to the reduce function's
    collect = X.Reducer(init_func=lambda k: tf.zeros([0], tf.int64),
                        reduce_func=lambda s, x: tf.concat([s, [x]], 0),
                        finalize_func=lambda s: s)
    lists = tf.data.Dataset.range(7).apply(X.group_by_reducer(lambda x: x % 2, collect))
    assert [v.tolist() for v in drain(lists)] == [[0, 2, 4, 6], [1, 3, 5]]


def test_grouping_errors(graph):
    r = tf.data.Dataset.range(3)
    for sizes in ((), (2, lambda k: k)):
        with pytest.raises(ValueError, match="Either the `window_size` argument or the "
                                             "`window_size_func` argument must be specified."):
            r.apply(X.group_by_window(lambda x: x, lambda k, w: w, *sizes))
    with pytest.raises(ValueError, match="Tensor conversion requested dtype int64 for Tensor "
                                         "with dtype int32"):
        r.apply(X.group_by_window(lambda x: tf.cast(x, tf.int32), lambda k, w: w, 2))
    with pytest.raises(TypeError, match="Invalid `reduce_func`. `reduce_func` must return a "
                                        "single `tf.data.Dataset` object"):
        r.apply(X.group_by_window(lambda x: x, lambda k, w: 3, 2))
    bad = X.Reducer(lambda k: tf.constant(0, tf.int64), lambda s, x: tf.cast(s, tf.int32),
                    lambda s: s)
    with pytest.raises(TypeError, match="The element types for the new state must match"):
        r.apply(X.group_by_reducer(lambda x: x, bad))


def test_a_window_size_below_one_fails_at_run_time(sess):
    ds = tf.data.Dataset.range(3).apply(X.group_by_window(
        lambda x: x, lambda k, w: w, window_size_func=lambda k: k - 5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Window size must be greater "
                                                             "than zero, but got -5."):
        sess.run(ds.make_one_shot_iterator().get_next())
