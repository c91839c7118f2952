"""Readers fed by a queue of file names (OSDI §3.2's I/O subgraph).

Expected keys and values were checked against TensorFlow 2.21 (tf.compat.v1) on the same
files; they are hard-coded here.
"""
import gzip
import os
import threading
import time

import pytest

import tensorweave as tf
from tensorweave.ops.io import record_io

CLOSED = "is closed and has insufficient elements"


@pytest.fixture
def files(tmp_path):
    data = {
        "a.txt": b"h1\nl1\r\nl2\n\nl4",
        "b.txt": b"x1\ny2\n",
        "e.txt": b"",
        "f.bin": b"HHabcdefghijklmnopFFF",
        "g.bin": b"0123456789abcdefghij",
    }
    for name, content in data.items():
        (tmp_path / name).write_bytes(content)
    (tmp_path / "f.gz").write_bytes(gzip.compress(data["f.bin"]))
    return tmp_path


def _queue(paths):
    q = tf.FIFOQueue(10, tf.string)
    return q, [q.enqueue_many([[str(p) for p in paths]]), q.close()]


def _read_all(sess, fetches, limit=50):
    out = []
    with pytest.raises(tf.errors.OutOfRangeError, match=CLOSED):
        for _ in range(limit):
            out.append(sess.run(fetches))
    return out


def _records(sess, reader, paths):
    q, setup = _queue(paths)
    k, v = reader.read(q)
    assert k.shape.as_list() == [] and v.shape.as_list() == []
    assert k.dtype == tf.string and v.dtype == tf.string
    for op in setup:
        sess.run(op)
    return [(key.decode(), value) for key, value in _read_all(sess, [k, v])]


def _counters(sess, reader):
    return sess.run([reader.num_records_produced(), reader.num_work_units_completed()])


def test_text_line_reader(sess, files):
    r = tf.TextLineReader()
    assert r.reader_ref.op.type == "TextLineReaderV2" and r.reader_ref.dtype == tf.resource
    a, e, b = (str(files / n) for n in ("a.txt", "e.txt", "b.txt"))
    assert _records(sess, r, [a, e, b]) == [
        (a + ":1", b"h1"), (a + ":2", b"l1"), (a + ":3", b"l2"), (a + ":4", b""),
        (a + ":5", b"l4"), (b + ":1", b"x1"), (b + ":2", b"y2")]
    assert _counters(sess, r) == [7, 3]


def test_text_line_reader_skip_header_lines(sess, files):
    r = tf.TextLineReader(skip_header_lines=1)
    assert r.reader_ref.op.get_attr("skip_header_lines") == 1
    a, b = str(files / "a.txt"), str(files / "b.txt")
    assert _records(sess, r, [a, b]) == [
        (a + ":2", b"l1"), (a + ":3", b"l2"), (a + ":4", b""), (a + ":5", b"l4"),
        (b + ":2", b"y2")]
    assert _counters(sess, r) == [5, 2]


def test_read_up_to_never_spans_two_files(sess, files):
    r = tf.TextLineReader()
    a, e, b = (str(files / n) for n in ("a.txt", "e.txt", "b.txt"))
    q, setup = _queue([a, e, b])
    keys, values = r.read_up_to(q, 3)
    assert keys.shape.as_list() == [None] and values.shape.as_list() == [None]
    assert keys.op.inputs[2].dtype == tf.int64
    for op in setup:
        sess.run(op)
    got = _read_all(sess, [keys, values])
    assert [list(k) for k, _ in got] == [
        [b"%s:%d" % (a.encode(), i) for i in (1, 2, 3)],
        [b"%s:%d" % (a.encode(), i) for i in (4, 5)],
        [b"%s:%d" % (b.encode(), i) for i in (1, 2)]]
    assert [list(v) for _, v in got] == [[b"h1", b"l1", b"l2"], [b"", b"l4"], [b"x1", b"y2"]]
    assert all(k.dtype == object and k.ndim == 1 for k, _ in got)
    assert _counters(sess, r) == [7, 3]


def test_read_up_to_rejects_non_positive(sess, files):
    q, setup = _queue([files / "b.txt"])
    keys, _ = tf.TextLineReader().read_up_to(q, 0)
    for op in setup:
        sess.run(op)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_records must be > 0"):
        sess.run(keys)


@pytest.mark.parametrize("kwargs,name,expected", [
    (dict(record_bytes=4, header_bytes=2, footer_bytes=3), "f.bin",
     [b"abcd", b"efgh", b"ijkl", b"mnop"]),
    (dict(record_bytes=4, header_bytes=2, footer_bytes=3, hop_bytes=3), "f.bin",
     [b"abcd", b"defg", b"ghij", b"jklm", b"mnop"]),
    (dict(record_bytes=5), "f.bin", [b"HHabc", b"defgh", b"ijklm", b"nopFF"]),
    (dict(record_bytes=5, hop_bytes=7), "f.bin", [b"HHabc", b"fghij", b"mnopF"]),
    (dict(record_bytes=3, hop_bytes=5, footer_bytes=2), "g.bin", [b"012", b"567", b"abc", b"fgh"]),
    (dict(record_bytes=3, hop_bytes=5, footer_bytes=3), "g.bin", [b"012", b"567", b"abc"]),
    (dict(record_bytes=3, hop_bytes=2, footer_bytes=1), "g.bin",
     [b"012", b"234", b"456", b"678", b"89a", b"abc", b"cde", b"efg", b"ghi"]),
    (dict(record_bytes=7, header_bytes=5, footer_bytes=9), "g.bin", []),
    (dict(record_bytes=4, header_bytes=2, footer_bytes=3, encoding="GZIP"), "f.gz",
     [b"abcd", b"efgh", b"ijkl", b"mnop"]),
])
def test_fixed_length_record_reader(sess, files, kwargs, name, expected):
    r = tf.FixedLengthRecordReader(**kwargs)
    path = str(files / name)
    assert _records(sess, r, [path]) == [("%s:%d" % (path, i), x) for i, x in
                                         enumerate(expected)]
    assert _counters(sess, r) == [len(expected), 1]


def test_fixed_length_header_past_end_of_file(sess, files):
    q, setup = _queue([files / "g.bin"])
    k, _ = tf.FixedLengthRecordReader(7, header_bytes=30).read(q)
    for op in setup:
        sess.run(op)
    with pytest.raises(tf.errors.OutOfRangeError, match="reached end of file"):
        sess.run(k)


def test_fixed_length_bad_attrs(sess, files):
    q, setup = _queue([files / "g.bin"])
    for op in setup:
        sess.run(op)
    with pytest.raises(tf.errors.InvalidArgumentError, match="header_bytes must be >= 0 not -1"):
        sess.run(tf.FixedLengthRecordReader(3, header_bytes=-1).read(q)[0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="record_bytes must be > 0 not 0"):
        sess.run(tf.FixedLengthRecordReader(0).read(q)[0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="encoding must be"):
        sess.run(tf.FixedLengthRecordReader(3, encoding="BAD").read(q)[0])


def test_tf_record_reader(sess, files):
    plain, gz = str(files / "p.tfr"), str(files / "g.tfr")
    for path, options in ((plain, None), (gz, "GZIP")):
        with tf.python_io.TFRecordWriter(path, options) as w:
            for rec in (b"abc", b"", b"hello world"):
                w.write(rec)
    r = tf.TFRecordReader()
    assert _records(sess, r, [plain, plain]) == [
        (plain + ":0", b"abc"), (plain + ":19", b""), (plain + ":35", b"hello world")] * 2
    assert _counters(sess, r) == [6, 2]
    r = tf.TFRecordReader(options=tf.python_io.TFRecordOptions("GZIP"))
    assert r.reader_ref.op.get_attr("compression_type") == b"GZIP"
    assert _records(sess, r, [gz]) == [
        (gz + ":0", b"abc"), (gz + ":19", b""), (gz + ":35", b"hello world")]


def test_tf_record_reader_reads_tensorflow_files(sess):
    data = os.path.join(os.path.dirname(__file__), "data")
    path = os.path.join(data, "tf_written.tfrecord.gz")
    r = tf.TFRecordReader(options=tf.python_io.TFRecordOptions("GZIP"))
    got = _records(sess, r, [path])
    assert [v for _, v in got] == [b"", b"a", b"hello tfrecord", bytes(range(256)) * 4]
    assert [k for k, _ in got] == [path + ":%d" % o for o in (0, 16, 33, 63)]


def test_tf_record_reader_corruption(sess, files):
    path = str(files / "bad.tfr")
    with open(path, "wb") as f:
        data = bytearray(record_io.encode_record(b"abc"))
        data[14] ^= 1
        f.write(bytes(data))
    q, setup = _queue([path])
    k, _ = tf.TFRecordReader().read(q)
    for op in setup:
        sess.run(op)
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 12"):
        sess.run(k)


def test_identity_reader(sess, files):
    r = tf.IdentityReader()
    assert r.supports_serialize
    q, setup = _queue(["w1", "w2"])
    k, v = r.read_up_to(q, 5)
    for op in setup:
        sess.run(op)
    got = _read_all(sess, [k, v])
    assert [(list(a), list(b)) for a, b in got] == [([b"w1"], [b"w1"]), ([b"w2"], [b"w2"])]
    assert _counters(sess, r) == [2, 2]


def test_whole_file_reader(sess, files):
    r = tf.WholeFileReader()
    a, e, b = (str(files / n) for n in ("a.txt", "e.txt", "b.txt"))
    assert _records(sess, r, [a, e, b]) == [
        (a, b"h1\nl1\r\nl2\n\nl4"), (e, b""), (b, b"x1\ny2\n")]
    assert _counters(sess, r) == [3, 3]


def test_missing_file(sess, files):
    missing = str(files / "nope.txt")
    q, setup = _queue([missing])
    k, _ = tf.TextLineReader().read(q)
    for op in setup:
        sess.run(op)
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt; No such file or directory"):
        sess.run(k)


def test_reset_restarts_and_clears_counters(sess, files):
    r = tf.TextLineReader()
    b = str(files / "b.txt")
    q = tf.FIFOQueue(10, tf.string)
    k, v = r.read(q)
    sess.run(q.enqueue_many([[b, b]]))
    assert sess.run(k) == (b + ":1").encode()
    assert _counters(sess, r) == [1, 0]
    sess.run(r.reset())
    assert _counters(sess, r) == [0, 0]
    assert sess.run(k) == (b + ":1").encode()  # the next file, from its first line


def test_queue_handle_tensor_and_state_across_runs(sess, files):
    r = tf.TextLineReader()
    a = str(files / "a.txt")
    q, setup = _queue([a])
    k, _ = r.read(q.queue_ref)  # a handle tensor works as well as the queue
    for op in setup:
        sess.run(op)
    assert [sess.run(k) for _ in range(2)] == [(a + ":1").encode(), (a + ":2").encode()]


def test_read_waits_for_a_file_name(sess, files):
    b = str(files / "b.txt")
    q = tf.FIFOQueue(10, tf.string)
    k, v = tf.TextLineReader().read(q)
    enqueue = q.enqueue([b])
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(k, options=tf.RunOptions(timeout_in_ms=100))
    results = []
    t = threading.Thread(target=lambda: results.append(sess.run([k, v])))
    t.start()
    time.sleep(0.05)
    sess.run(enqueue)
    t.join(10)
    assert results == [[(b + ":1").encode(), b"x1"]]


def test_serialize_state(sess, files):
    r = tf.IdentityReader()
    q, setup = _queue(["w1"])
    k, _ = r.read(q)
    for op in setup:
        sess.run(op)
    assert sess.run(r.serialize_state()) == b""
    sess.run(k)
    assert sess.run(r.serialize_state()) == b"\x08\x01\x10\x01\x18\x01"
    sess.run(r.restore_state(b"\x08\x03\x10\x02\x18\x05\x22\x02ab"))
    assert _counters(sess, r) == [5, 2]
    assert sess.run(k) == b"ab"  # the restored work unit in progress
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse state"):
        sess.run(r.restore_state(b"\xff"))
    with pytest.raises(tf.errors.UnimplementedError, match="Reader SerializeState"):
        sess.run(tf.TextLineReader().serialize_state())
    assert not tf.TextLineReader().supports_serialize


def test_exported_classes():
    for name in ("ReaderBase", "TextLineReader", "FixedLengthRecordReader", "TFRecordReader",
                 "IdentityReader", "WholeFileReader"):
        assert isinstance(getattr(tf, name), type)
    assert issubclass(tf.TFRecordReader, tf.ReaderBase)


@pytest.mark.parametrize("content,lines", [
    (b"a\n\r\nb", [b"a", b"", b"b"]),       # "\r\n" is an empty line; "\r" alone at the end
    (b"a\n\r", [b"a"]),                      # is no line
    (b"a\r\nb\r\n", [b"a", b"b"]),
    (b"\n\n", [b"", b""]),
    (b"x" * 300000 + b"\ny\n" + b"z" * 10, [b"x" * 300000, b"y", b"z" * 10]),  # > 1 chunk
])
def test_text_line_reader_read_up_to_cuts_lines_per_chunk(sess, tmp_path, content, lines):
    p = tmp_path / "t.txt"
    p.write_bytes(content)
    q, setup = _queue([p])
    k, v = tf.TextLineReader().read_up_to(q, 2)
    for op in setup:
        sess.run(op)
    got = _read_all(sess, [k, v])
    assert [x for _, vs in got for x in vs.tolist()] == lines
    assert [x.decode() for ks, _ in got for x in ks.tolist()] == \
        ["%s:%d" % (p, i + 1) for i in range(len(lines))]
    assert all(len(vs) <= 2 for _, vs in got)


def test_tf_record_reader_read_up_to_many(sess, tmp_path):
    p = str(tmp_path / "r.tfr")
    records = [b"%04d" % i for i in range(1000)] + [b"long" * 100, b""]
    with tf.python_io.TFRecordWriter(p) as w:
        for r in records:
            w.write(r)
    q, setup = _queue([p])
    k, v = tf.TFRecordReader().read_up_to(q, 300)
    for op in setup:
        sess.run(op)
    got = _read_all(sess, [k, v])
    assert [len(vs) for _, vs in got] == [300, 300, 300, 102]
    assert [x for _, vs in got for x in vs.tolist()] == records
    assert got[1][0][0].decode() == "%s:%d" % (p, 300 * 20)
