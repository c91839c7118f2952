"""The input-pipeline kernels against independent references: the random shuffle queue's
order (TF's draw-and-swap, one double per draw from the seeded generator), DecodeCSV's
column parser of plain decimals, and the text line reader cutting lines across chunks."""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import record_io
from tensorweave.ops.string.number_parsing import parse_plain_numbers


# --- RandomShuffleQueue order ---------------------------------------------------------------
_SCRIPT = [("enqueue", range(0, 30)), ("dequeue", 7), ("enqueue", range(30, 33)),
           ("dequeue", 1), ("dequeue", 12), ("enqueue", range(33, 90)), ("dequeue", 40),
           ("dequeue", 1), ("enqueue", range(90, 95)), ("dequeue", 29)]


@pytest.mark.parametrize("shapes", [[[2], []], None])
def test_random_shuffle_order_is_tf_draw_and_swap(graph, shapes, swap_remove_order):
    q = tf.RandomShuffleQueue(100, 5, [tf.int64, tf.int64], shapes=shapes, seed=11)
    seed, seed2 = q.queue_ref.op.get_attr("seed"), q.queue_ref.op.get_attr("seed2")
    x = tf.placeholder(tf.int64, [None, 2])
    y = tf.placeholder(tf.int64, [None])
    enq = q.enqueue_many([x, y])
    one = q.dequeue()
    many = {k: q.dequeue_many(k) for kind, k in _SCRIPT if kind == "dequeue" and shapes}
    got = []
    with tf.Session() as sess:
        for kind, arg in _SCRIPT:
            if kind == "enqueue":
                keys = np.array(arg, np.int64)
                sess.run(enq, {x: np.stack([keys, -keys], 1), y: keys * 10})
            elif arg == 1 or not shapes:
                for _ in range(arg):
                    a, b = sess.run(one)
                    assert a.tolist() == [b // 10, -(b // 10)]
                    got.append(int(b) // 10)
            else:
                a, b = sess.run(many[arg])
                assert a[:, 0].tolist() == (b // 10).tolist() == (-a[:, 1]).tolist()
                got += a[:, 0].tolist()
    assert got == swap_remove_order(seed, seed2, _SCRIPT)


# --- DecodeCSV's parser of plain decimals ---------------------------------------------------
_FLOAT_RE = re.compile(rb"[+-]?[0-9]*(\.[0-9]*)?\Z")
_INT_RE = re.compile(rb"[+-]?[0-9]+\Z")


def _reference_parse(fields, np_dtype):
    """What `parse_plain_numbers` must return: every field a plain decimal (at most 15
    digits for floats, 18 for integers, in range) and its correctly rounded value; else
    None."""
    is_float = np_dtype.kind == "f"
    values = []
    for f in fields:
        digits = sum(c in b"0123456789" for c in f)
        if not (_FLOAT_RE if is_float else _INT_RE).match(f) or not digits or \
                digits > (15 if is_float else 18):
            return None
        values.append(float(f) if is_float else int(f))
    if not is_float:
        info = np.iinfo(np_dtype)
        if min(values) < info.min or max(values) > info.max:
            return None
    return np.array(values, dtype=np.float64 if is_float else np.int64).astype(np_dtype)


def _random_field(rng, valid, is_float):
    digits = "".join(rng.choice(list("0123456789"), int(rng.integers(0, 17 if is_float
                                                                         else 11))))
    if valid and not digits:
        digits = "7"
    sign = rng.choice(["", "", "-", "+"])
    if is_float and rng.random() < 0.6 and digits:
        cut = int(rng.integers(0, len(digits) + 1))
        digits = digits[:cut] + "." + digits[cut:]
    text = sign + digits
    if not valid:
        k = int(rng.integers(0, len(text) + 1))
        text = text[:k] + rng.choice(["x", ".", "-", " ", "e5", "_", "+"]) + text[k:]
    return text.encode()


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.int32, np.int64])
def test_plain_number_parser_matches_reference(np_dtype):
    np_dtype = np.dtype(np_dtype)
    rng = np.random.default_rng(7)
    checked = parsed = 0
    for trial in range(400):
        fields = [_random_field(rng, trial % 4 != 0 or rng.random() < 0.7,
                                np_dtype.kind == "f")
                  for _ in range(int(rng.integers(1, 40 if trial % 2 else 4)))]
        text = b",".join(fields)
        buf = np.frombuffer(text, np.uint8)
        lengths = np.array([len(f) for f in fields])
        starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
        if lengths.min() == 0:
            continue
        want = _reference_parse(fields, np_dtype)
        got = parse_plain_numbers(buf, starts, lengths, np_dtype)
        checked += 1
        assert (got is None) == (want is None), fields
        if want is not None:
            parsed += 1
            assert got.dtype == np_dtype
            np.testing.assert_array_equal(got, want)
            assert (np.signbit(got) == np.signbit(want)).all()
    assert checked > 300 and parsed > 100


def test_decode_csv_columns_are_contiguous_and_exact(sess):
    rows = [b"%d,%s,-%d.%d,%d" % (i, b"ab", i, i * 7, i % 5) for i in range(300)]
    cols = tf.decode_csv(rows, [[0], [""], [0.0], [0]])
    a, s, f, b = sess.run(cols)
    assert a.tolist() == list(range(300)) and b.tolist() == [i % 5 for i in range(300)]
    assert s.tolist() == [b"ab"] * 300
    np.testing.assert_array_equal(f, np.array([float(b"-%d.%d" % (i, i * 7))
                                               for i in range(300)], np.float32))
    assert all(c.flags.c_contiguous for c in (a, f, b))


# --- TextLineReader across chunk boundaries ------------------------------------------------
def _tf_lines(content):
    lines = content.split(b"\n")
    if lines[-1] in (b"", b"\r"):
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


@pytest.mark.parametrize("chunk", [2, 3, 7, 64])
def test_text_lines_cut_across_small_chunks(graph, tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(record_io, "_BUFFER_SIZE", chunk)
    contents = [b"a\r\nbb\n\nccc\r\n\r\ndddd\ne", b"x\ny\n", b"\r", b"one line\r\n",
                b"", b"\n\n\n", b"last\r"]
    paths = []
    for i, content in enumerate(contents):
        p = tmp_path / ("f%d%%d.txt" % i)  # a "%" in the name stays literal in keys
        p.write_bytes(content)
        paths.append(str(p))
    q = tf.FIFOQueue(10, tf.string)
    keys, values = tf.TextLineReader(skip_header_lines=1).read_up_to(q, 2)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([paths]))
        sess.run(q.close())
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                k, v = sess.run([keys, values])
                assert 1 <= len(v) <= 2
                got += list(zip(k.tolist(), v.tolist()))
    want = [(b"%s:%d" % (p.encode(), n), line) for p, c in zip(paths, contents)
            for n, line in enumerate(_tf_lines(c), 1) if n > 1]
    assert got == want


def test_tf_record_keys_keep_percent_signs(graph, tmp_path):
    p = str(tmp_path / "r%d.tfr")
    with tf.python_io.TFRecordWriter(p) as w:
        for r in (b"a", b"bc"):
            w.write(r)
    q = tf.FIFOQueue(2, tf.string)
    keys, values = tf.TFRecordReader().read_up_to(q, 5)
    with tf.Session() as sess:
        sess.run(q.enqueue([p]))
        k, v = sess.run([keys, values])
    assert v.tolist() == [b"a", b"bc"] and k.tolist() == [p.encode() + b":0",
                                                          p.encode() + b":17"]
