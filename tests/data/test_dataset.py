"""tf.data in graph mode: pipelines against NumPy references, the three kinds of
iterator, file datasets, and a model trained from a dataset. (The pipelines below gave
the same elements under TF 2.21; shuffle orders differ, as any two RNGs do.)"""

import numpy as np
import pytest

import tensorweave as tf


def _drain(sess, next_element, limit=1000):
    out = []
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        for _ in range(limit):
            out.append(sess.run(next_element))
    return out


def test_slices_map_filter_batch(sess):
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    ds = (tf.data.Dataset.from_tensor_slices((x, np.arange(5)))
          .map(lambda a, b: (a * 2.0, b + 1))
          .filter(lambda a, b: tf.equal(b % 2, 1))
          .batch(2))
    assert ds.output_types == (tf.float32, tf.int64)
    assert [s.as_list() for s in ds.output_shapes] == [[None, 2], [None]]
    assert tf.data.get_output_classes(ds) == (tf.Tensor, tf.Tensor)
    got = _drain(sess, ds.make_one_shot_iterator().get_next())
    keep = [i for i in range(5) if (i + 1) % 2 == 1]
    want_a, want_b = x[keep] * 2.0, np.arange(5)[keep] + 1
    assert len(got) == 2
    np.testing.assert_array_equal(np.concatenate([g[0] for g in got]), want_a)
    np.testing.assert_array_equal(np.concatenate([g[1] for g in got]), want_b)


def test_initializable_iterator_takes_its_feed_at_initialization(sess):
    p = tf.placeholder(tf.int64, [None])
    ds = tf.data.Dataset.from_tensor_slices({"v": p}).repeat(2).shuffle(3, seed=1).take(6)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    sess.run(it.initializer, {p: [1, 2, 3]})
    got = [e["v"] for e in _drain(sess, nxt)]
    assert sorted(got) == [1, 1, 2, 2, 3, 3]  # a permutation of both epochs
    sess.run(it.initializer, {p: [7]})
    assert sess.run(nxt) == {"v": 7}
    with pytest.raises(tf.errors.FailedPreconditionError, match="has not been initialized"):
        sess.run(tf.data.make_initializable_iterator(tf.data.Dataset.range(3)).get_next())


def test_range_zip_concatenate_take_skip(sess):
    r = tf.data.Dataset.range(2, 9, 3)
    z = tf.data.Dataset.zip((r, r.map(lambda v: v * 10)))
    got = _drain(sess, tf.data.make_one_shot_iterator(z.concatenate(z).skip(1).take(4))
                 .get_next())
    assert [tuple(map(int, g)) for g in got] == [(5, 50), (8, 80), (2, 20), (5, 50)]
    assert _drain(sess, tf.data.Dataset.range(3).repeat(-1).take(7).batch(3)
                  .make_one_shot_iterator().get_next())[2].tolist() == [0]
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        tf.data.Dataset.range(3).concatenate(tf.data.Dataset.from_tensors(1.0))
    with pytest.raises(TypeError, match="Incompatible dataset elements"):  # dict keys
        tf.data.Dataset.from_tensors({"a": 1}).concatenate(
            tf.data.Dataset.from_tensors({"b": 2}))


def test_reinitializable_iterator_switches_datasets(sess):
    it = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    init_a = it.make_initializer(tf.data.Dataset.range(3))
    init_b = it.make_initializer(tf.data.Dataset.range(10, 12))
    nxt = it.get_next()
    sess.run(init_a)
    assert [sess.run(nxt) for _ in range(2)] == [0, 1]
    sess.run(init_b)
    assert _drain(sess, nxt) == [10, 11]
    with pytest.raises(TypeError, match="Expected output types"):
        it.make_initializer(tf.data.Dataset.from_tensors(1.0))
    with pytest.raises(ValueError, match="does not have an initializer"):
        it.initializer


def test_file_datasets(sess, tmp_path):
    rec = str(tmp_path / "a.tfrecord")
    zipped = str(tmp_path / "a.tfrecord.gz")
    with tf.python_io.TFRecordWriter(rec) as w, tf.python_io.TFRecordWriter(
            zipped, tf.python_io.TFRecordOptions(
                tf.python_io.TFRecordCompressionType.GZIP)) as wz:
        for i in range(5):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, i * 0.5])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}))
            w.write(ex.SerializeToString())
            wz.write(ex.SerializeToString())
    spec = {"x": tf.FixedLenFeature([2], tf.float32), "y": tf.FixedLenFeature([], tf.int64)}
    for path, compression in ((rec, None), (zipped, "GZIP")):
        ds = tf.data.TFRecordDataset([path], compression_type=compression).map(
            lambda s: tf.parse_single_example(s, spec)).batch(2, drop_remainder=True)
        assert ds.output_shapes["x"].as_list() == [2, 2]
        got = _drain(sess, ds.make_one_shot_iterator().get_next())
        assert len(got) == 2
        np.testing.assert_array_equal(got[1]["x"], [[2.0, 1.0], [3.0, 1.5]])
        assert got[1]["y"].tolist() == [0, 1]
    txt = str(tmp_path / "a.txt")
    with open(txt, "w") as f:
        f.write("1,2\n3,4\r\n5,6")
    rows = _drain(sess, tf.data.TextLineDataset(txt).map(
        lambda line: tf.decode_csv(line, [[0], [0]])).make_one_shot_iterator().get_next())
    assert [tuple(map(int, r)) for r in rows] == [(1, 2), (3, 4), (5, 6)]
    missing = tf.data.TextLineDataset(str(tmp_path / "nope.txt"))
    with pytest.raises(tf.errors.NotFoundError):
        sess.run(missing.make_one_shot_iterator().get_next())


def test_functions_use_graph_state_and_stateful_ops(sess):
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]),
                                      -1)
    ids = tf.data.Dataset.from_tensor_slices(["a", "c", "b"]).map(table.lookup).batch(3)
    noisy = tf.data.Dataset.range(4).map(lambda v: tf.random_uniform([]))
    sess.run(tf.tables_initializer())
    # an initializable iterator (a one-shot one cannot capture the table, as in TF)
    it = ids.make_initializable_iterator()
    sess.run(it.initializer)
    assert sess.run(it.get_next()).tolist() == [1, -1, 2]
    draws = _drain(sess, noisy.make_one_shot_iterator().get_next())
    assert len(set(np.round(draws, 6))) == 4  # each element drew its own number


def test_shuffle_seeds_and_epochs(sess):
    def epochs(reshuffle):
        ds = tf.data.Dataset.range(20).shuffle(20, seed=5,
                                               reshuffle_each_iteration=reshuffle).repeat(2)
        got = _drain(sess, ds.make_one_shot_iterator().get_next())
        return got[:20], got[20:]
    a1, a2 = epochs(False)
    b1, b2 = epochs(True)
    assert sorted(a1) == list(range(20)) and a1 == a2  # the same order each epoch
    # reshuffling draws each epoch's seeds from the dataset's: even the first order
    # differs from the fixed one (as TF's)
    assert sorted(b1) == sorted(b2) == list(range(20)) and len({tuple(a1), tuple(b1), tuple(b2)}) == 3
    assert a1 != list(range(20))


def test_errors(sess):
    bad = tf.data.Dataset.range(3).map(lambda v: tf.fill(tf.reshape(v + 1, [1]), v)).batch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with "
                       "different shapes in component 0"):
        sess.run(bad.make_one_shot_iterator().get_next())
    with pytest.raises(ValueError, match="`predicate` return type must be convertible to a "
                       "scalar boolean tensor"):
        tf.data.Dataset.range(3).filter(lambda v: v)
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.data.Dataset.from_tensor_slices(3)
    with pytest.raises(RuntimeError, match="only supported inside of tf.function"):
        iter(tf.data.Dataset.range(3))


def test_a_model_trains_from_a_dataset(graph):
    rs = np.random.RandomState(0)
    xs = rs.randn(256, 3).astype(np.float32)
    w_true = np.array([[1.5], [-2.0], [0.5]], np.float32)
    ys = xs @ w_true + 0.3
    x, y = (tf.data.Dataset.from_tensor_slices((xs, ys)).shuffle(64, seed=1).repeat()
            .batch(32).make_one_shot_iterator().get_next())
    w = tf.Variable(tf.zeros([3, 1]))
    b = tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(300):
            sess.run(train)
        np.testing.assert_allclose(sess.run(w), w_true, atol=1e-3)
        assert sess.run(b) == pytest.approx(0.3, abs=1e-3)


def test_fixed_length_records_and_constants(sess, tmp_path):
    path = str(tmp_path / "r.bin")
    with open(path, "wb") as f:
        f.write(b"HEAD" + b"aaabbbccc" + b"FT")
    ds = tf.data.FixedLengthRecordDataset(path, 3, header_bytes=4, footer_bytes=2)
    assert _drain(sess, ds.make_one_shot_iterator().get_next()) == [b"aaa", b"bbb", b"ccc"]
    odd = tf.data.FixedLengthRecordDataset(path, 4, header_bytes=4, footer_bytes=2)
    with pytest.raises(tf.errors.InvalidArgumentError,  # TF's class for a plain file
                       match="not an exact multiple of the record length"):
        sess.run(odd.make_one_shot_iterator().get_next())
    # compressed: the complete records, then DataLossError for the truncated last one
    import gzip
    with gzip.open(path + ".gz", "wb") as f:
        f.write(b"aaabbbc")
    nxt = tf.data.FixedLengthRecordDataset(path + ".gz", 3, compression_type="GZIP") \
        .make_one_shot_iterator().get_next()
    assert [sess.run(nxt), sess.run(nxt)] == [b"aaa", b"bbb"]
    with pytest.raises(tf.errors.DataLossError):
        sess.run(nxt)
    assert (tf.data.AUTOTUNE, tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == \
        (-1, -1, -2)
    mapped = tf.data.Dataset.range(3).map(lambda v: v * 2, num_parallel_calls=tf.data.AUTOTUNE)
    assert _drain(sess, mapped.make_one_shot_iterator().get_next()) == [0, 2, 4]


def test_interleave_flat_map_and_list_files(sess, tmp_path):
    for k in range(3):
        with tf.python_io.TFRecordWriter(str(tmp_path / ("part-%d.tfrecord" % k))) as w:
            for i in range(4):
                w.write(("f%d-r%d" % (k, i)).encode())
    files = tf.data.Dataset.list_files(str(tmp_path / "part-*.tfrecord"), shuffle=False)
    inter = files.interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=3)
    got = [r.decode() for r in _drain(sess, inter.make_one_shot_iterator().get_next())]
    # TF 2.21's order: an exhausted input's slot takes the next file, read next time round
    assert got == ["f0-r0", "f0-r1", "f0-r2", "f1-r0", "f1-r1", "f1-r2", "f0-r3", "f1-r3",
                   "f2-r0", "f2-r1", "f2-r2", "f2-r3"]
    shuffled = tf.data.Dataset.list_files(str(tmp_path / "part-*.tfrecord"), seed=3)
    names = _drain(sess, shuffled.make_one_shot_iterator().get_next())
    assert sorted(names) == sorted(str(tmp_path / ("part-%d.tfrecord" % k)).encode()
                                   for k in range(3))
    # an inner function reads the outer function's argument
    flat = tf.data.Dataset.range(1, 4).flat_map(
        lambda n: tf.data.Dataset.range(n).map(lambda v: v * 10 + n))
    assert _drain(sess, flat.make_one_shot_iterator().get_next()) == [1, 2, 12, 3, 13, 23]
    none = tf.data.Dataset.list_files(str(tmp_path / "none-*"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern"):
        sess.run(none.make_one_shot_iterator().get_next())
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        tf.data.Dataset.range(3).flat_map(lambda v: v)


def test_padded_batch_unbatch_cache(sess):
    rows = np.array([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
    seqs = tf.data.Dataset.from_tensor_slices(rows).map(
        lambda r: r[:tf.reduce_sum(tf.cast(r > 0, tf.int32))])
    pb = seqs.padded_batch(2, padded_shapes=[None],
                           padding_values=tf.constant(-1, tf.int64))
    got = _drain(sess, pb.make_one_shot_iterator().get_next())
    assert [g.tolist() for g in got] == [[[1, 2], [3, -1]], [[4, 5, 6]]]
    pb2 = seqs.map(lambda r: (r, tf.size(r))).padded_batch(3, padded_shapes=([4], []))
    assert [s.as_list() for s in pb2.output_shapes] == [[None, 4], [None]]
    (values, sizes), = _drain(sess, pb2.make_one_shot_iterator().get_next())
    assert values.tolist() == [[1, 2, 0, 0], [3, 0, 0, 0], [4, 5, 6, 0]]
    assert sizes.tolist() == [2, 1, 3]
    too_small = seqs.padded_batch(3, padded_shapes=[2])
    with pytest.raises(tf.errors.DataLossError, match="pad to a smaller size"):  # TF's
        sess.run(too_small.make_one_shot_iterator().get_next())
    unb = tf.data.Dataset.from_tensors(np.arange(6).reshape(3, 2)).unbatch()
    assert unb.output_shapes.as_list() == [2]
    assert [u.tolist() for u in _drain(sess, unb.make_one_shot_iterator().get_next())] == \
        [[0, 1], [2, 3], [4, 5]]
    # a cached pipeline runs its map once: the repeat replays the first pass's draws
    cached = tf.data.Dataset.range(3).map(lambda v: tf.random_uniform([])).cache().repeat(2)
    draws = _drain(sess, cached.make_one_shot_iterator().get_next())
    assert draws[:3] == draws[3:] and len(set(draws)) == 3


def test_feedable_iterators_switch_between_datasets(sess):
    train = tf.data.Dataset.range(100).map(lambda v: v * 2).repeat()
    val = tf.data.Dataset.range(3).map(lambda v: -v)
    handle = tf.placeholder(tf.string, shape=[])
    it = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
    nxt = it.get_next()
    train_it, val_it = train.make_one_shot_iterator(), val.make_initializable_iterator()
    th, vh = sess.run([train_it.string_handle(), val_it.string_handle()])
    assert isinstance(th, bytes) and th != vh
    assert [sess.run(nxt, {handle: th}) for _ in range(3)] == [0, 2, 4]
    sess.run(val_it.initializer)
    assert [sess.run(nxt, {handle: vh}) for _ in range(3)] == [0, -1, -2]
    assert sess.run(nxt, {handle: th}) == 6  # the training iterator kept its place
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(nxt, {handle: vh})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not find an iterator"):
        sess.run(nxt, {handle: b"nope"})
    floats = tf.data.Iterator.from_string_handle(handle, tf.float32).get_next()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data type mismatch at "
                       "component 0: expected float32 but got int64"):
        sess.run(floats, {handle: th})


@pytest.mark.parametrize("rows,repeat,size,drop", [
    (10, 1, 3, False), (10, 1, 3, True), (10, 3, 4, False), (10, 3, 4, True),
    (10, 2, 25, False), (10, 2, 25, True), (7, 1, 7, False), (0, -1, 3, False),
    (5, 2, 1, False)])
def test_batches_of_repeated_slices_are_cut_in_bulk_as_rows_would_stack(
        drain, rows, repeat, size, drop):
    """Batches of slices (repeated or not) are cut from the arrays, not stacked row by
    row: the same batches, dtypes and shapes, each batch its own copy."""
    x = np.arange(rows * 6, dtype=np.float32).reshape(rows, 2, 3)
    s = np.array(["r%d" % i for i in range(rows)], dtype=object).astype(bytes)
    i = np.arange(rows, dtype=np.int64)
    order = np.tile(np.arange(rows), repeat if repeat > 0 else 1)
    want = [order[k:k + size] for k in range(0, len(order), size)]
    if drop:
        want = [w for w in want if len(w) == size]
    ds = tf.data.Dataset.from_tensor_slices({"x": x, "s": s, "i": i}).repeat(repeat) \
        .batch(size, drop_remainder=drop)
    got = drain(ds)
    assert len(got) == len(want)
    for batch, idx in zip(got, want):
        np.testing.assert_array_equal(batch["x"], x[idx])
        assert batch["x"].dtype == np.float32 and batch["i"].dtype == np.int64
        assert list(batch["s"]) == [b"r%d" % k for k in idx]
        np.testing.assert_array_equal(batch["i"], idx)
    if got:  # a fetched batch does not alias the dataset's data
        got[0]["x"][...] = -1
        assert (x >= 0).all()


def test_padded_batches_of_slices_are_padded(drain):
    """padded_batch of from_tensor_slices pads every batch to the padded shape (the
    bulk path of plain batches must not take it: it gave unpadded rows)."""
    ds = tf.data.Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).repeat(2) \
        .padded_batch(4, padded_shapes=[3], padding_values=np.int64(-1))
    got = drain(ds)
    np.testing.assert_array_equal(got[0], [[0, 1, -1], [2, 3, -1], [4, 5, -1], [0, 1, -1]])
    np.testing.assert_array_equal(got[1], [[2, 3, -1], [4, 5, -1]])
    assert len(got) == 2


def test_strings_through_functions_and_batching_stay_object_arrays(drain):
    """String elements are object arrays of bytes at every step: rows of
    from_tensor_slices and the results of functions (a nested Session.run fetches a string
    scalar as bytes) used to reach batch as bytes, which stacked into an |S array: the
    wrong dtype, and trailing NULs gone. The values are TF 2.21's."""
    D = tf.data.Dataset
    v = tf.constant([b"a\x00", b"bb", b"c"])
    joined = D.from_tensor_slices(v).map(lambda s: tf.strings.join([s, s]))
    cases = {
        "map_batch": (joined.batch(3), [[b"a\x00a\x00", b"bbbb", b"cc"]]),
        "slices_batch": (D.from_tensor_slices(np.array([b"a", b"b"])).map(
            lambda s: tf.strings.join([s, s])).batch(2), [[b"aa", b"bb"]]),
        "identity": (D.from_tensor_slices(v).map(tf.identity).batch(3), [[b"a\x00", b"bb", b"c"]]),
        "padded_scalars": (D.from_tensor_slices(v).map(tf.strings.upper).padded_batch(3, []),
                           [[b"A\x00", b"BB", b"C"]]),
        "padded_split": (D.from_tensor_slices(v).map(lambda s: tf.string_split([s], "").values)
                         .padded_batch(3, [None], padding_values=tf.constant("#")),
                         [[[b"a", b"\x00"], [b"b", b"b"], [b"c", b"#"]]]),
        "filter": (D.from_tensor_slices(v).filter(lambda s: tf.strings.length(s) > 1).batch(3),
                   [[b"a\x00", b"bb"]]),
        "unbatch": (D.from_tensor_slices(tf.reshape(v, [3, 1])).map(
            lambda s: tf.strings.join([s, s])).apply(tf.data.experimental.unbatch()).batch(3),
            [[b"a\x00a\x00", b"bbbb", b"cc"]]),
        "scan": (D.from_tensor_slices(v).apply(tf.data.experimental.scan(
            tf.constant(""), lambda st, s: (tf.strings.join([st, s]), st))).batch(3),
            [[b"", b"a\x00", b"a\x00bb"]]),
        "window": (D.from_tensor_slices(v).window(2).flat_map(lambda w: w.batch(2)),
                   [[b"a\x00", b"bb"], [b"c"]]),
        "lines": (D.from_tensors(tf.constant("x y z")).map(
            lambda line: tf.string_split([line], " ").values), [[b"x", b"y", b"z"]]),
        "get_next": (D.from_tensor_slices(v), [b"a\x00", b"bb", b"c"]),
    }
    for name, (ds, want) in cases.items():
        got = drain(ds)
        assert [g.tolist() if isinstance(g, np.ndarray) else g for g in got] == want, name
        assert all(g.dtype == object for g in got if isinstance(g, np.ndarray)), name


def test_string_elements_feed_string_ops(sess):
    v = tf.constant([b"x y", b"b"])
    nxt = tf.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(v)).get_next()
    assert sess.run(tf.strings.upper(nxt)) == b"X Y"


def test_tensor_arguments_padded_shapes_and_shuffle_seed(sess):
    ds = tf.data.Dataset.range(3).map(lambda x: tf.range(x)).padded_batch(
        2, padded_shapes=tf.constant([4], tf.int64))
    assert ds.output_shapes.as_list() == [None, 4]
    got = _drain(sess, ds.make_one_shot_iterator().get_next())
    assert [g.tolist() for g in got] == [[[0, 0, 0, 0], [0, 0, 0, 0]], [[0, 1, 0, 0]]]
    seed = tf.constant(7, tf.int64)
    orders = [_drain(sess, tf.data.Dataset.range(10).shuffle(10, seed=seed)
                     .make_one_shot_iterator().get_next()) for _ in range(2)]
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(10))


def test_argument_errors_as_tfs(graph):
    r = tf.data.Dataset.range(4)
    with pytest.raises(TypeError, match="Python `list` is not supported"):
        tf.data.Dataset.zip([r, r])
    with pytest.raises(ValueError, match="expected a scalar"):
        r.batch(tf.constant([3, 2], tf.int64))
    with pytest.raises(ValueError, match="scalar components"):
        r.unbatch()
    p = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError, match="Cannot capture a placeholder"):
        r.map(lambda x: x * p).make_one_shot_iterator()
    with pytest.raises(ValueError, match="Cannot capture a placeholder"):
        tf.data.Dataset.range(p).make_one_shot_iterator()
    r.map(lambda x: x * p).make_initializable_iterator()  # the way to feed it
