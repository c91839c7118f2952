"""tf.LMDBReader (ops/io/reader_ops.py, reader_kinds.py, lmdb_io.py) over databases that
the `lmdb` package writes here.

TensorFlow 2.15 and 2.21 keep the class but no kernel: their first run raises
UnimplementedError ("LMDB support is removed from TensorFlow"), so no value could be
recorded from them. The expected records are TF 1.x's (its lmdb_reader_op.cc and
io_ops LMDBReaderTest): each database's records from the first key to the last in
LMDB's byte order of keys, a record's key and value the database's own, a database read
again from its first record; they are written out below from what the files hold.
"""
import sys

import pytest

import tensorweave as tf

lmdb = pytest.importorskip("lmdb")

CLOSED = "is closed and has insufficient elements"
# written in this order; LMDB keeps them sorted by key bytes
A_ITEMS = [(b"b", b"two"), (b"a", b"one"), (b"c", b"three"), (b"\x00z", b"zero"),
           (b"aa", b"")]
A_SORTED = [(b"\x00z", b"zero"), (b"a", b"one"), (b"aa", b""), (b"b", b"two"),
            (b"c", b"three")]
B_SORTED = [(b"k0", b"v0"), (b"k1", b"v1"), (b"k2", b"v4"), (b"k3", b"v9"),
            (b"k4", b"v16")]


def _write(path, items, subdir=False):
    env = lmdb.open(str(path), subdir=subdir, map_size=1 << 20, lock=False)
    with env.begin(write=True) as txn:
        for key, value in items:
            txn.put(key, value)
    env.close()


@pytest.fixture
def dbs(tmp_path):
    _write(tmp_path / "a.mdb", A_ITEMS)
    _write(tmp_path / "b.mdb", [(b"k%d" % i, b"v%d" % (i * i)) for i in range(5)])
    _write(tmp_path / "empty.mdb", [])
    (tmp_path / "dir").mkdir()
    _write(tmp_path / "dir", [(b"y", b"2"), (b"x", b"1")], subdir=True)
    (tmp_path / "bad.mdb").write_bytes(b"this is not an lmdb file" * 300)
    return tmp_path


def _pipeline(paths, num_epochs=1):
    """A TF1 input pipeline: a filename queue filled by a QueueRunner."""
    queue = tf.train.string_input_producer([str(p) for p in paths], num_epochs=num_epochs,
                                           shuffle=False)
    return queue, tf.LMDBReader(name="lmdb")


def _run(sess, fetch_fn, steps):
    """`steps` runs of `fetch_fn()`'s fetches, then OutOfRangeError (the queue closed)."""
    sess.run([tf.local_variables_initializer(), tf.global_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        return [sess.run(fetch_fn) for _ in range(steps)]
    finally:
        coord.request_stop()
        coord.join(threads)


def test_read_gives_each_database_in_key_order(graph, sess, dbs):
    queue, reader = _pipeline([dbs / "a.mdb", dbs / "empty.mdb", dbs / "b.mdb"])
    key, value = reader.read(queue)
    assert key.dtype == tf.string and key.shape.as_list() == []
    records = _run(sess, [key, value], 10)
    assert [tuple(r) for r in records] == A_SORTED + B_SORTED
    counts = [reader.num_records_produced(), reader.num_work_units_completed()]
    assert sess.run(counts) == [10, 2]  # the end of b.mdb is seen by the next read
    with pytest.raises(tf.errors.OutOfRangeError, match=CLOSED):
        sess.run(key)
    assert sess.run(counts) == [10, 3]


def test_read_up_to_stays_within_one_database(graph, sess, dbs):
    queue, reader = _pipeline([dbs / "a.mdb", dbs / "b.mdb"])
    keys, values = reader.read_up_to(queue, 3)
    batches = _run(sess, [keys, values], 4)
    assert [(k.tolist(), v.tolist()) for k, v in batches] == [
        ([b"\x00z", b"a", b"aa"], [b"zero", b"one", b""]),
        ([b"b", b"c"], [b"two", b"three"]),
        ([b"k0", b"k1", b"k2"], [b"v0", b"v1", b"v4"]),
        ([b"k3", b"k4"], [b"v9", b"v16"])]
    assert sess.run(reader.num_records_produced()) == 10


def test_a_directory_and_a_database_read_again(graph, sess, dbs):
    queue, reader = _pipeline([dbs / "dir"], num_epochs=None)
    key, value = reader.read(queue)
    records = _run(sess, [key, value], 6)
    assert [tuple(r) for r in records] == [(b"x", b"1"), (b"y", b"2")] * 3


def test_reset_restarts_the_counts_and_takes_the_next_work_unit(graph, sess, dbs):
    queue, reader = _pipeline([dbs / "a.mdb", dbs / "b.mdb"])
    key, value = reader.read(queue)
    produced = reader.num_records_produced()
    reset = reader.reset()
    records = _run(sess, [key, value], 2)
    assert [tuple(r) for r in records] == A_SORTED[:2]
    sess.run(reset)
    assert sess.run(produced) == 0
    assert tuple(sess.run([key, value])) == B_SORTED[0]


def test_missing_and_damaged_databases(graph, sess, dbs):
    queue = tf.FIFOQueue(10, tf.string)
    reader = tf.LMDBReader()
    key, value = reader.read(queue)
    paths = [dbs / "missing.mdb", dbs / "bad.mdb", dbs, dbs / "a.mdb"]
    sess.run(queue.enqueue_many([[str(p) for p in paths]]))
    sess.run(queue.close())
    with pytest.raises(tf.errors.NotFoundError, match="missing.mdb; No such file"):
        sess.run(key)
    with pytest.raises(tf.errors.DataLossError,
                       match="bad.mdb: MDB_INVALID: File is not an LMDB file"):
        sess.run(key)
    with pytest.raises(tf.errors.NotFoundError, match="No LMDB data.mdb in this directory"):
        sess.run(key)
    assert tuple(sess.run([key, value])) == A_SORTED[0]  # a failed database is skipped


def test_reader_op_and_its_state(graph, sess):
    reader = tf.LMDBReader(name="db", options=None)
    assert reader.reader_ref.op.type == "LMDBReader" and reader.reader_ref.op.name == "db"
    assert not reader.supports_serialize
    with pytest.raises(tf.errors.UnimplementedError, match="not supported by LMDBReader"):
        sess.run(reader.serialize_state())


def test_without_the_lmdb_package(graph, sess, monkeypatch):
    reader = tf.LMDBReader()  # made while the package is there: its run says what to do
    monkeypatch.setitem(sys.modules, "lmdb", None)
    with pytest.raises(ImportError, match=r"pip install 'tensorweave\[lmdb\]'"):
        tf.LMDBReader()
    with pytest.raises(tf.errors.UnimplementedError,
                       match=r"needs the `lmdb` package .* pip install 'tensorweave\[lmdb\]'"):
        sess.run(reader.num_records_produced())
