"""Queue-based input pipelines: limit_epochs, the producers and the batchers (values,
epochs then OutOfRangeError, seeded shuffles, dynamic_pad, allow_smaller_final_batch,
static shapes, errors). Every test joins its threads with a timeout."""
import numpy as np
import pytest

import tensorweave as tf

JOIN_TIMEOUT = 10.0
# A step that would block forever (a bug) fails with DeadlineExceededError instead.
RUN = tf.RunOptions(timeout_in_ms=10000)


class _Running:
    """Starts the graph's queue runners with a coordinator; stops and joins them."""

    def __init__(self, sess):
        self.sess = sess

    def __enter__(self):
        self.sess.run(tf.local_variables_initializer())
        self.coord = tf.train.Coordinator()
        self.threads = tf.train.start_queue_runners(self.sess, coord=self.coord)
        return self

    def __exit__(self, *exc):
        self.coord.request_stop()
        self.coord.join(self.threads, stop_grace_period_secs=JOIN_TIMEOUT)
        assert not any(t.is_alive() for t in self.threads)
        return False

    def drain(self, fetches):
        """Runs `fetches` until OutOfRangeError; returns the list of results."""
        out = []
        while True:
            try:
                out.append(self.sess.run(fetches, options=RUN))
                assert len(out) <= 10000, "the input never ends"
            except tf.errors.OutOfRangeError:
                return out


def _source(n, dtype=tf.int32):
    """Scalars 0 .. n-1, once, in order."""
    q = tf.train.range_input_producer(n, num_epochs=1, shuffle=False)
    return tf.cast(q.dequeue(), dtype)


# --- limit_epochs -----------------------------------------------------------------------
def test_limit_epochs(sess):
    x = tf.constant([1, 2])
    assert tf.train.limit_epochs(x) is x
    limited = tf.train.limit_epochs(x, 2)
    assert limited.name == "limit_epochs:0"
    assert limited.shape.as_list() == [2]
    local = tf.local_variables()
    assert [v.name for v in local] == ["limit_epochs/epochs:0"]
    assert local[0].dtype.base_dtype == tf.int64
    assert not tf.trainable_variables()
    sess.run(tf.local_variables_initializer())
    np.testing.assert_array_equal(sess.run(limited), [1, 2])
    np.testing.assert_array_equal(sess.run(limited), [1, 2])
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(limited)
    with pytest.raises(ValueError, match="num_epochs must be > 0 not 0"):
        tf.train.limit_epochs(x, 0)


def test_limit_epochs_needs_local_init(sess):
    limited = tf.train.limit_epochs(tf.constant(1), 1)
    with pytest.raises(tf.errors.FailedPreconditionError):
        sess.run(limited)


# --- producers --------------------------------------------------------------------------
def test_input_producer_in_order_with_epochs(sess):
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    q = tf.train.input_producer(tf.constant(data), num_epochs=2, shuffle=False,
                                capacity=5)
    assert q.dtypes == [tf.float32]
    assert [s.as_list() for s in q.shapes] == [[3]]
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
    x = q.dequeue()
    assert x.shape.as_list() == [3]
    with _Running(sess) as r:
        rows = r.drain(x)
    np.testing.assert_array_equal(np.array(rows), np.concatenate([data, data]))


def test_input_producer_element_shape(sess):
    p = tf.placeholder(tf.int32, [None, None])
    with pytest.raises(ValueError, match="fully defined shape or `element_shape`"):
        tf.train.input_producer(p)
    q = tf.train.input_producer(p, element_shape=[2])
    assert [s.as_list() for s in q.shapes] == [[2]]
    with pytest.raises(ValueError):
        tf.train.input_producer(tf.constant([[1, 2]]), element_shape=[3])


def test_input_producer_shuffles_each_epoch_with_seed():
    def epochs(seed):
        with tf.Graph().as_default():
            q = tf.train.input_producer(tf.range(20), num_epochs=3, shuffle=True,
                                        seed=seed, capacity=100)
            x = q.dequeue()
            with tf.Session() as sess, _Running(sess) as r:
                return r.drain(x)

    a = epochs(7)
    assert len(a) == 60
    for e in range(3):  # each epoch is a permutation
        assert sorted(a[20 * e:20 * (e + 1)]) == list(range(20))
    assert a[:20] != list(range(20))
    assert a[:20] != a[20:40]  # reshuffled every epoch
    assert epochs(7) == a  # reproducible with the same seed
    assert epochs(8) != a


def test_string_input_producer(sess):
    names = [b"a.txt", b"b.txt", b"c.txt"]
    q = tf.train.string_input_producer(names, num_epochs=2, shuffle=False)
    assert q.name == "input_producer"
    assert q.dtypes == [tf.string]
    assert [s.as_list() for s in q.shapes] == [[]]
    assert [v.name for v in tf.local_variables()] == ["input_producer/limit_epochs/epochs:0"]
    qr, = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert qr.queue is q
    assert qr.enqueue_ops[0].type == "QueueEnqueueManyV2"
    with _Running(sess) as r:
        assert r.drain(q.dequeue()) == names * 2


def test_string_input_producer_shuffled_without_epoch_limit(sess):
    names = [b"f%d" % i for i in range(10)]
    q = tf.train.string_input_producer(tf.constant(names), seed=3, capacity=10)
    x = q.dequeue()
    with _Running(sess) as r:
        got = [sess.run(x, options=RUN) for _ in range(30)]
    for e in range(3):
        assert sorted(got[10 * e:10 * (e + 1)]) == sorted(names)


def test_string_input_producer_errors(sess):
    with pytest.raises(ValueError, match="requires a non-null input tensor"):
        tf.train.string_input_producer([])
    empty = tf.placeholder(tf.string, [None])
    q = tf.train.string_input_producer(empty, shuffle=False)
    qr, = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-null input tensor"):
        sess.run(qr.enqueue_ops[0], {empty: np.array([], dtype=object)})
    assert q.dtypes == [tf.string]


def test_range_input_producer(sess):
    q = tf.train.range_input_producer(5, num_epochs=2, shuffle=False)
    assert q.dtypes == [tf.int32]
    assert [s.as_list() for s in q.shapes] == [[]]
    with _Running(sess) as r:
        assert r.drain(q.dequeue()) == [0, 1, 2, 3, 4] * 2


def test_slice_input_producer_keeps_rows_together(sess):
    a = np.arange(10, dtype=np.int64)
    b = np.array([[i, -i] for i in range(10)], dtype=np.float32)
    c = np.array([b"s%d" % i for i in range(10)], dtype=object)
    x, y, z = tf.train.slice_input_producer([a, b, tf.constant(c)], num_epochs=2,
                                           seed=11)
    assert x.shape.as_list() == [] and x.dtype == tf.int64
    assert y.shape.as_list() == [2] and y.dtype == tf.float32
    assert z.shape.as_list() == [] and z.dtype == tf.string
    with _Running(sess) as r:
        rows = r.drain([x, y, z])
    assert len(rows) == 20
    for xi, yi, zi in rows:
        np.testing.assert_array_equal(yi, [xi, -xi])
        assert zi == b"s%d" % xi
    firsts = [int(row[0]) for row in rows]
    assert sorted(firsts[:10]) == list(range(10))
    assert sorted(firsts[10:]) == list(range(10))
    assert firsts[:10] != list(range(10))  # shuffled


def test_slice_input_producer_errors(graph):
    with pytest.raises(ValueError, match="Expected at least one tensor"):
        tf.train.slice_input_producer([])


def test_match_filenames_once(sess, tmp_path):
    for name in ("a.csv", "b.csv", "c.txt"):
        (tmp_path / name).write_text("x")
    v = tf.train.match_filenames_once(str(tmp_path / "*.csv"))
    assert v in tf.local_variables()
    assert v.name.startswith("matching_filenames")
    sess.run(tf.local_variables_initializer())
    got = sorted(sess.run(v))
    assert got == [str(tmp_path / n).encode() for n in ("a.csv", "b.csv")]


# --- batch --------------------------------------------------------------------------------
def test_batch_values_and_static_shapes(sess):
    x = _source(10)
    y = tf.stack([tf.cast(x, tf.float32), -tf.cast(x, tf.float32)])
    bx, by = tf.train.batch([x, y], batch_size=3)
    assert bx.name == "batch:0" and by.name == "batch:1"
    assert bx.shape.as_list() == [3] and bx.dtype == tf.int32
    assert by.shape.as_list() == [3, 2] and by.dtype == tf.float32
    with _Running(sess) as r:
        batches = r.drain([bx, by])
    # 10 elements: three full batches; the final element is never returned
    assert len(batches) == 3
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches]), range(9))
    for bxv, byv in batches:
        np.testing.assert_array_equal(byv[:, 0], bxv)


def test_batch_single_tensor_list_and_dict(graph):
    x = tf.constant([1.0, 2.0])
    single = tf.train.batch([x], 5)
    assert isinstance(single, tf.Tensor)
    assert single.shape.as_list() == [5, 2]
    d = tf.train.batch({"b": tf.constant(3), "a": x}, 5)
    assert sorted(d) == ["a", "b"]
    assert d["a"].shape.as_list() == [5, 2] and d["a"].name.endswith(":0")
    assert d["b"].shape.as_list() == [5] and d["b"].name.endswith(":1")
    one = tf.train.batch({"a": x}, 5)
    assert list(one) == ["a"] and one["a"].shape.as_list() == [5, 2]
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 3


def test_batch_dict_values(sess):
    x = _source(6)
    d = tf.train.batch({"id": x, "sq": x * x}, batch_size=2)
    with _Running(sess) as r:
        batches = r.drain(d)
    assert len(batches) == 3
    for b in batches:
        np.testing.assert_array_equal(b["sq"], b["id"] ** 2)
    np.testing.assert_array_equal(np.concatenate([b["id"] for b in batches]), range(6))


def test_batch_allow_smaller_final_batch(sess):
    x = _source(10)
    b = tf.train.batch([x], batch_size=4, allow_smaller_final_batch=True)
    assert b.shape.as_list() == [None]
    assert b.op.type == "QueueDequeueUpToV2"
    with _Running(sess) as r:
        batches = r.drain(b)
    assert [len(v) for v in batches] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate(batches), range(10))


def test_batch_dequeue_many_when_not_allowing_smaller(graph):
    b = tf.train.batch([tf.constant(1)], batch_size=4)
    assert b.op.type == "QueueDequeueManyV2"
    assert b.shape.as_list() == [4]


def test_batch_enqueue_many(sess):
    q = tf.train.input_producer(tf.reshape(tf.range(12), [4, 3]), num_epochs=1,
                                shuffle=False)
    rows = q.dequeue()  # a batch of 3 scalars per enqueue
    b = tf.train.batch([rows], batch_size=5, enqueue_many=True,
                       allow_smaller_final_batch=True)
    assert b.shape.as_list() == [None]
    with _Running(sess) as r:
        batches = r.drain(b)
    assert [len(v) for v in batches] == [5, 5, 2]
    np.testing.assert_array_equal(np.concatenate(batches), range(12))
    with pytest.raises(ValueError):
        tf.train.batch([tf.constant(1)], 2, enqueue_many=True)  # no batch dimension


def test_batch_dynamic_pad(sess):
    n = _source(5)
    vec = tf.range(n) + 1  # lengths 0, 1, 2, 3, 4
    assert vec.shape.as_list() == [None]
    b = tf.train.batch([vec, n], batch_size=2, dynamic_pad=True,
                       allow_smaller_final_batch=True)
    assert b[0].shape.as_list() == [None, None]
    with _Running(sess) as r:
        batches = r.drain(b)
    assert [v[1].tolist() for v in batches] == [[0, 1], [2, 3], [4]]
    np.testing.assert_array_equal(batches[0][0], [[0], [1]])  # [] padded, [1]
    np.testing.assert_array_equal(batches[1][0], [[1, 2, 0], [1, 2, 3]])
    np.testing.assert_array_equal(batches[2][0], [[1, 2, 3, 4]])
    static = tf.train.batch([vec], batch_size=3, dynamic_pad=True)
    assert static.shape.as_list() == [3, None]


def test_batch_shapes_argument(sess):
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        tf.train.batch([p], 2)
    b = tf.train.batch([p], 2, shapes=[[3]])
    assert b.shape.as_list() == [2, 3]


def test_batch_num_threads_loses_nothing(sess):
    x = _source(60)
    b = tf.train.batch([x], batch_size=6, num_threads=4, capacity=8)
    qr = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1]
    assert len(qr.enqueue_ops) == 4
    with _Running(sess) as r:
        batches = r.drain(b)
    assert sorted(np.concatenate(batches).tolist()) == list(range(60))


def test_batch_errors(graph):
    with pytest.raises(ValueError, match="Expected at least one tensor in batch"):
        tf.train.batch([], 2)
    with pytest.raises(ValueError, match="Cannot infer Tensor's rank"):
        tf.train.batch([tf.placeholder(tf.float32)], 2)
    with pytest.raises(TypeError, match="Expected types to be consistent"):
        tf.train.batch_join([[tf.constant(1.0)], [tf.constant(1)]], 2)
    with pytest.raises(ValueError, match="same keys"):
        tf.train.batch_join([{"a": tf.constant(1)}, {"b": tf.constant(1)}], 2)
    with pytest.raises(ValueError):
        tf.train.batch_join([[tf.constant([1, 2])], [tf.constant([1, 2, 3])]], 2)
    with pytest.raises(ValueError, match="Expected at least one set of tensors"):
        tf.train.batch_join([], 2)


def test_batch_join(sess):
    a = _source(10)
    b = _source(10) + 100
    out = tf.train.batch_join([[a, tf.cast(a, tf.float32)], [b, tf.cast(b, tf.float32)]],
                              batch_size=4, allow_smaller_final_batch=True)
    assert out[0].shape.as_list() == [None] and out[1].dtype == tf.float32
    qr = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1]
    assert len(qr.enqueue_ops) == 2  # one thread per list
    with _Running(sess) as r:
        batches = r.drain(out)
    ids = np.concatenate([v[0] for v in batches])
    np.testing.assert_array_equal(np.concatenate([v[1] for v in batches]), ids)
    assert sorted(ids.tolist()) == list(range(10)) + list(range(100, 110))


def test_batch_join_dicts(graph):
    out = tf.train.batch_join([{"x": tf.constant(1), "y": tf.constant([1.0])},
                               {"x": tf.constant(2), "y": tf.constant([2.0])}], 3)
    assert sorted(out) == ["x", "y"]
    assert out["y"].shape.as_list() == [3, 1]


# --- maybe_batch ---------------------------------------------------------------------------
def test_maybe_batch_scalar_keep_input(sess):
    x = _source(10)
    b = tf.train.maybe_batch([x], tf.equal(x % 2, 0), batch_size=2,
                             allow_smaller_final_batch=True)
    assert b.shape.as_list() == [None]
    with _Running(sess) as r:
        batches = r.drain(b)
    np.testing.assert_array_equal(np.concatenate(batches), [0, 2, 4, 6, 8])


def test_maybe_batch_vector_keep_input(sess):
    q = tf.train.input_producer(tf.reshape(tf.range(12), [3, 4]), num_epochs=1,
                                shuffle=False)
    rows = q.dequeue()
    b = tf.train.maybe_batch([rows], rows > 4, batch_size=3, enqueue_many=True,
                             allow_smaller_final_batch=True)
    with _Running(sess) as r:
        batches = r.drain(b)
    np.testing.assert_array_equal(np.concatenate(batches), range(5, 12))


def test_maybe_batch_keep_input_errors(graph):
    x = tf.constant([1, 2])
    with pytest.raises(ValueError, match="cannot be a vector when `enqueue_many=False`"):
        tf.train.maybe_batch([x], tf.constant([True, False]), 2)
    with pytest.raises(ValueError, match="must be 0 or 1 dimensions"):
        tf.train.maybe_batch([x], tf.constant([[True]]), 2, enqueue_many=True)
    with pytest.raises(ValueError, match="dimensions must be known"):
        tf.train.maybe_batch([x], tf.placeholder(tf.bool), 2)
    assert tf.train.maybe_batch([x], True, 5).shape.as_list() == [5, 2]


def test_maybe_batch_join_and_shuffle_variants(sess):
    a = _source(8)
    b = _source(8) + 100
    j = tf.train.maybe_batch_join([[a], [b]], tf.constant(True), 4,
                                  allow_smaller_final_batch=True)
    x = _source(8, tf.int64)
    s = tf.train.maybe_shuffle_batch([x], 3, 20, 2, x < 5, seed=1,
                                     allow_smaller_final_batch=True)
    y1 = _source(8, tf.int64)
    y2 = _source(8, tf.int64) + 10
    sj = tf.train.maybe_shuffle_batch_join([[y1], [y2]], 3, 20, 2, True, seed=1,
                                           allow_smaller_final_batch=True)
    with _Running(sess) as r:
        got_j = r.drain(j)
        got_s = r.drain(s)
        got_sj = r.drain(sj)
    assert sorted(np.concatenate(got_j).tolist()) == list(range(8)) + list(range(100, 108))
    assert sorted(np.concatenate(got_s).tolist()) == [0, 1, 2, 3, 4]
    assert sorted(np.concatenate(got_sj).tolist()) == list(range(8)) + list(range(10, 18))


# --- shuffle_batch ---------------------------------------------------------------------------
def _shuffled(seed, n=30, batch_size=4):
    """All batches of a shuffle_batch over 0..n-1 whose queue holds every element
    before the first dequeue (min_after_dequeue = n - 1), so only the seed decides."""
    with tf.Graph().as_default():
        x = _source(n)
        b = tf.train.shuffle_batch([x, tf.cast(x, tf.float32) * 2], batch_size,
                                   capacity=n + 5, min_after_dequeue=n - 1, seed=seed,
                                   allow_smaller_final_batch=True)
        with tf.Session() as sess, _Running(sess) as r:
            return r.drain(b)


def test_shuffle_batch_permutes_and_is_reproducible():
    a = _shuffled(5)
    assert [len(v[0]) for v in a] == [4] * 7 + [2]
    ids = np.concatenate([v[0] for v in a])
    np.testing.assert_array_equal(np.concatenate([v[1] for v in a]), ids * 2.0)
    assert sorted(ids.tolist()) == list(range(30))
    assert ids.tolist() != list(range(30))
    again = np.concatenate([v[0] for v in _shuffled(5)])
    np.testing.assert_array_equal(again, ids)
    other = np.concatenate([v[0] for v in _shuffled(6)])
    assert other.tolist() != ids.tolist()


def test_shuffle_batch_static_shapes_and_names(graph):
    x = tf.constant([1.0, 2.0])
    b = tf.train.shuffle_batch([x], 4, capacity=10, min_after_dequeue=5)
    assert isinstance(b, tf.Tensor)
    assert b.name == "shuffle_batch:0"
    assert b.shape.as_list() == [4, 2]
    assert b.op.type == "QueueDequeueManyV2"
    qr = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1]
    assert qr.queue.queue_ref.op.type == "RandomShuffleQueueV2"
    small = tf.train.shuffle_batch({"k": x}, 4, 10, 5, allow_smaller_final_batch=True)
    assert small["k"].shape.as_list() == [None, 2]
    many = tf.train.shuffle_batch([tf.zeros([7, 3])], 4, 10, 5, enqueue_many=True,
                                  num_threads=3)
    assert many.shape.as_list() == [4, 3]
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].enqueue_ops) == 3
    with pytest.raises(ValueError, match="capacity 5 must be bigger than min_after_dequeue 5"):
        tf.train.shuffle_batch([x], 4, 5, 5)


def test_shuffle_batch_join(sess):
    a = _source(12)
    b = _source(12) + 50
    out = tf.train.shuffle_batch_join([[a], [b]], 5, capacity=30, min_after_dequeue=3,
                                      seed=2, allow_smaller_final_batch=True)
    assert out.shape.as_list() == [None]
    with _Running(sess) as r:
        batches = r.drain(out)
    got = np.concatenate(batches).tolist()
    assert sorted(got) == list(range(12)) + list(range(50, 62))
    assert [len(v) for v in batches] == [5, 5, 5, 5, 4]


def test_shuffle_batch_join_capacity_check(graph):
    # TF1 divides by zero here; tensorweave checks as shuffle_batch does
    with pytest.raises(ValueError, match="must be bigger than min_after_dequeue"):
        tf.train.shuffle_batch_join([[tf.constant(1)]], 5, capacity=3, min_after_dequeue=3)


def test_builders_add_tfs_queue_fill_summaries(sess):
    # the tags and values TF 2.21 gives for the same builders
    tf.train.string_input_producer(["a", "b"])
    tf.train.batch([tf.constant(1)], 4)
    tf.train.shuffle_batch([tf.constant(1.0)], 4, capacity=20, min_after_dequeue=5)
    tf.train.batch_join([[tf.constant(1)], [tf.constant(2)]], 2)
    tf.train.shuffle_batch_join([[tf.constant(1)], [tf.constant(2)]], 2, capacity=10,
                                min_after_dequeue=3)
    tf.train.range_input_producer(5)
    tf.train.slice_input_producer([tf.constant([1, 2, 3])])
    names = [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    assert names == ["input_producer/fraction_of_32_full:0", "batch/fraction_of_32_full:0",
                     "shuffle_batch/fraction_over_5_of_15_full:0",
                     "batch_join/fraction_of_32_full:0",
                     "shuffle_batch_join/fraction_over_3_of_7_full:0",
                     "input_producer_1/fraction_of_32_full:0",
                     "input_producer_2/input_producer/fraction_of_32_full:0"]
    summaries = tf.get_collection(tf.GraphKeys.SUMMARIES)
    # before any enqueue the queues are empty: 0 everywhere
    values = [tf.Summary.FromString(s).value[0].simple_value for s in sess.run(summaries)]
    assert values == [0.0] * 7
    # the shuffle queue's summary counts what is above min_after_dequeue: 8 of 20 -> 3/15
    q = tf.RandomShuffleQueue(20, 5, [tf.float32], shapes=[[]])
    from tensorweave.train.input import _shuffle_fill_summary
    with tf.name_scope("probe"):
        _shuffle_fill_summary(q, 20, 5)
    sess.run(q.enqueue_many([tf.zeros([8])]))
    tensor = tf.get_collection(tf.GraphKeys.SUMMARIES)[-1]
    assert tf.Summary.FromString(sess.run(tensor)).value[0].simple_value == \
        pytest.approx(3 / 15)


def test_batching_sparse_tensors_stacks_them_along_a_new_first_dimension(sess):
    """A SparseTensor goes through the queue serialized and comes out batched: a leading
    batch dimension, each other one the largest of the batch's elements (TF's)."""
    i = _source(3, tf.int64)
    # element i: i + 1 values of 7 * i at rows 0..i of a [i + 1] vector
    sp = tf.SparseTensor(tf.reshape(tf.range(i + 1), [-1, 1]),
                         tf.fill([i + 1], 7.0 * tf.cast(i, tf.float32)), tf.stack([i + 1]))
    batched = tf.train.batch({"s": sp, "i": i}, batch_size=2, allow_smaller_final_batch=True)
    assert isinstance(batched["s"], tf.SparseTensor)
    assert batched["s"].dense_shape.shape.as_list() == [2]
    with _Running(sess) as run:
        got = run.drain(batched)
    first, last = got[0]["s"], got[1]["s"]
    assert got[0]["i"].tolist() == [0, 1] and got[1]["i"].tolist() == [2]
    assert first.indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert first.values.tolist() == [0.0, 7.0, 7.0]
    assert first.dense_shape.tolist() == [2, 2]
    assert last.indices.tolist() == [[0, 0], [0, 1], [0, 2]]
    assert last.dense_shape.tolist() == [1, 3]


def test_batching_sparse_tensors_many_at_a_time_and_shuffled(sess):
    many = tf.SparseTensor([[0, 1], [1, 0], [2, 2]], [1.0, 2.0, 3.0], [3, 4])
    # one component: a bare SparseTensor, as TF's one-component dequeue
    rows = tf.train.batch([many], batch_size=2, enqueue_many=True)
    shuffled = tf.train.shuffle_batch([tf.SparseTensor([[0]], [5.0], [1])], batch_size=3,
                                      capacity=8, min_after_dequeue=2, seed=1)
    with _Running(sess):
        got = sess.run(rows, options=RUN)
        mixed = sess.run(shuffled, options=RUN)
    assert got.indices.tolist() == [[0, 1], [1, 0]] and got.dense_shape.tolist() == [2, 4]
    assert got.values.tolist() == [1.0, 2.0]
    assert mixed.indices.tolist() == [[0, 0], [1, 0], [2, 0]] and \
        mixed.values.tolist() == [5.0] * 3
