"""The bulk paths of the input pipeline against the exact, one-at-a-time ones: the
TFRecord reader framing a whole chunk ahead of the requests (records, offsets, errors
and their place in the sequence as record by record), Pack of many inputs in one copy
(values, dtype, shape, layout as np.stack), DecodeCSV's column outputs; and float32
fields rounded once from the decimal, as TensorFlow's strtof does (values TensorFlow
2.21 returned, and an exact rational reference), on every parsing path."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import record_io


def _write(path, records):
    with tf.python_io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)


def _offsets(records):
    out, pos = [], 0
    for r in records:
        out.append(pos)
        pos += 16 + len(r)
    return out


def _mixed_records():
    """Long runs of one length (framed as matrices, ahead of the requests), broken by
    other lengths, empty records and one record larger than a read chunk."""
    rng = np.random.default_rng(3)
    out = [rng.bytes(260) for _ in range(2500)]
    out += [b"", b"q", b""] + [rng.bytes(7) for _ in range(40)]
    out += [rng.bytes(300 * 1024)] + [rng.bytes(260) for _ in range(900)]
    return out


@pytest.mark.parametrize("limits", [[250], [1], [3, 1000, 1, 17], [999, 2, 250]])
def test_framing_ahead_hands_out_records_in_file_order(tmp_path, limits):
    records = _mixed_records()
    p = str(tmp_path / "mixed.tfr")
    _write(p, records)
    reader = record_io.RecordReader(p)
    got, offsets, k = [], [], 0
    while True:
        limit = limits[k % len(limits)]
        k += 1
        if limit == 1 and k % 2:   # `read` and `read_many` share what was framed ahead
            r = reader.read()
            if r is None:
                break
            got.append(r)
            offsets.append(None)
            continue
        o, r, at_end = reader.read_many(limit)
        assert len(r) <= limit and len(o) == len(r)
        assert at_end or len(r) == limit
        got += r
        offsets += o
        if at_end:
            break
    reader.close()
    assert got == records
    want = _offsets(records)
    assert [o for o in offsets if o is not None] == [w for w, o in zip(want, offsets)
                                                     if o is not None]
    assert got == list(tf.python_io.tf_record_iterator(p))


@pytest.mark.parametrize("where", ["data", "footer", "length_crc"])
@pytest.mark.parametrize("bad", [1, 700, 1199])
def test_a_bad_record_far_ahead_fails_the_request_that_reaches_it(tmp_path, where, bad):
    records = [b"%020d" % k for k in range(1200)]   # 36-byte frames: 1200 in two chunks
    p = str(tmp_path / "bad.tfr")
    _write(p, records)
    data = bytearray(open(p, "rb").read())
    start = bad * 36
    data[{"data": start + 14, "footer": start + 33, "length_crc": start + 9}[where]] ^= 1
    open(p, "wb").write(bytes(data))
    # record by record: the good ones, then the error of the bad one
    one = record_io.RecordReader(p)
    exact = []
    with pytest.raises(tf.errors.DataLossError) as e_one:
        while True:
            exact.append(one.read())
    one.close()
    assert exact == records[:bad]
    reader = record_io.RecordReader(p)
    got = []
    with pytest.raises(tf.errors.DataLossError) as e_many:
        while True:
            offsets, r, at_end = reader.read_many(250)
            assert offsets == _offsets(records)[len(got):len(got) + len(r)]
            got += r
            assert not at_end
    reader.close()
    assert e_many.value.message == e_one.value.message == "corrupted record at %d" % (
        start + (0 if where == "length_crc" else 12))
    # the failing request consumes the records it had taken before the bad one
    assert got == records[:bad // 250 * 250]


def test_truncated_file_after_records_framed_ahead(tmp_path):
    records = [b"%010d" % k for k in range(3000)]
    p = str(tmp_path / "cut.tfr")
    _write(p, records)
    data = open(p, "rb").read()
    open(p, "wb").write(data[:-5])          # the last record's data cut short
    reader = record_io.RecordReader(p)
    got = []
    with pytest.raises(tf.errors.DataLossError,
                       match="truncated record at %d" % (2999 * 26)):
        while True:
            got += reader.read_many(400)[1]
    assert got == records[:2800]
    reader.close()
    open(p, "wb").write(data[:-26 + 5])     # a header cut short: the end of the file
    reader = record_io.RecordReader(p)
    got, at_end = [], False
    while not at_end:
        _, r, at_end = reader.read_many(400)
        got += r
    assert got == records[:2999]
    reader.close()


def test_tf_record_reader_op_across_chunks_and_files(tmp_path):
    files, everything = [], []
    for f in range(3):
        records = [b"%d-%05d" % (f, k) for k in range(700 + 300 * f)]
        p = str(tmp_path / ("part%d.tfr" % f))
        _write(p, records)
        files.append(p)
        everything += [(b"%s:%d" % (p.encode(), o), r)
                       for o, r in zip(_offsets(records), records)]
    q = tf.FIFOQueue(3, tf.string)
    keys, values = tf.TFRecordReader().read_up_to(q, 333)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([files]))
        sess.run(q.close())
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                k, v = sess.run([keys, values])
                assert k.dtype == object and v.dtype == object and len(k) == len(v) <= 333
                got += list(zip(k.tolist(), v.tolist()))
    assert got == everything


# --- Pack of many inputs --------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, object])
def test_pack_matches_np_stack(sess, shape, dtype):
    rng = np.random.default_rng(0)
    n = 9
    if dtype is object:
        values = [np.array([b"s%d" % rng.integers(100) for _ in range(int(np.prod(shape)))],
                           dtype=object).reshape(shape) for _ in range(n)]
    else:
        values = [(rng.normal(size=shape) * 5).astype(dtype) for _ in range(n)]
    ph = [tf.placeholder(tf.as_dtype(dtype) if dtype is not object else tf.string, shape)
          for _ in range(n)]
    feed = dict(zip(ph, values))
    for axis in range(-len(shape) - 1, len(shape) + 1):
        t = tf.stack(ph, axis=axis)
        want = np.stack(values, axis=axis)
        assert t.shape.as_list() == list(want.shape)
        got = sess.run(t, feed)
        assert type(got) is np.ndarray and got.dtype == want.dtype
        assert got.shape == want.shape and got.flags.c_contiguous
        assert got.tolist() == want.tolist()


class _Ctx:
    """What the Pack kernel reads of its context."""
    xp = np
    op = None

    def __init__(self, axis):
        self.attrs = {"axis": axis}


def test_pack_kernel_output_is_one_contiguous_array():
    from tensorweave.ops.array.array_join_ops import _pack_kernel
    block = np.arange(64 * 250, dtype=np.float32).reshape(64, 250)
    columns = tuple(block)            # views of one block, as DecodeCSV's columns are
    for axis in (0, 1, -1):
        got = _pack_kernel(_Ctx(axis), *columns)
        want = np.stack(columns, axis=axis)
        assert got.flags.c_contiguous and got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
        assert not np.shares_memory(got, block)


# --- DecodeCSV's columns ----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (1,), (6,), (2, 3)])
def test_decode_csv_plain_columns_keep_the_records_shape(sess, shape):
    n = int(np.prod(shape))
    rows = np.array([b"%d,-%d.25,%d,x%d" % (k, k, 7 * k, k) for k in range(n)],
                    dtype=object).reshape(shape)
    cols = sess.run(tf.decode_csv(rows, [[0], [0.0], np.array([0], np.int64), [""]]))
    want = [np.arange(n, dtype=np.int32), -np.arange(n, dtype=np.float32) - 0.25,
            7 * np.arange(n, dtype=np.int64), np.array([b"x%d" % k for k in range(n)],
                                                       dtype=object)]
    for got, w in zip(cols, want):  # a 0-d fetch is a NumPy scalar (or the bytes)
        assert type(got) is np.ndarray if shape else not isinstance(got, np.ndarray)
        got = np.asarray(got, dtype=w.dtype if w.dtype == object else None)
        assert got.dtype == w.dtype and got.shape == shape
        assert got.reshape(-1).tolist() == w.tolist()
    # the kernel's own outputs are arrays of the records' shape (0-d too, not scalars)
    from tensorweave.ops.string.string_decode_ops import _decode_plain_records
    defaults = [np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros(1, np.int64),
                np.array([b""], dtype=object)]
    outs = _decode_plain_records(rows.reshape(-1).tolist(), defaults, b",", b"", shape)
    assert [type(o) for o in outs] == [np.ndarray] * 4
    assert [o.shape for o in outs] == [shape] * 4
    assert all(o.flags.c_contiguous for o in outs[:3])


# --- float32 fields rounded once, as strtof (TensorFlow) rounds them -------------------------
# decimals whose nearest double lies exactly halfway between two float32 values: rounding
# through float64 picks the wrong one. The float32 values are what TensorFlow 2.21's
# decode_csv and string_to_number return for them.
_TF_FLOAT32 = [(b"1.59424489736557", 1.5942448), (b"0.542479544878006", 0.5424796),
               (b"1.28803151845932", 1.2880315), (b"0.5614602863788605", 0.5614603),
               (b"-1.4554426074028015", -1.4554425), (b"0.90468010306358337", 0.9046801)]


def _nearest_float32(text):
    """Independent reference: the float32 nearest the decimal (ties to even), by exact
    rational arithmetic over the float32 values around the double."""
    from fractions import Fraction
    exact = Fraction(text.decode())
    f = np.float32(float(exact))
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - exact),
                                     int(np.float32(c).view(np.uint32)) & 1))


def _near_midpoints(count):
    """Decimals of 12 to 17 digits next to float32 midpoints (and some far from them)."""
    from decimal import Decimal, getcontext
    getcontext().prec = 60
    rng = np.random.default_rng(11)
    out = []
    for k in range(count):
        a = np.float32(rng.uniform(0.5, 4.0)) * np.float32(10.0 ** int(rng.integers(-3, 4)))
        b = np.nextafter(a, np.float32(np.inf))
        mid = (Decimal(float(a)) + Decimal(float(b))) / 2
        text = format(mid, ".%dg" % (12 + k % 6)).encode()
        out.append(b"-" + text if k % 5 == 0 else text)
    return out


def test_float32_fields_are_rounded_once(sess):
    texts = [t for t, _ in _TF_FLOAT32]
    want = np.array([v for _, v in _TF_FLOAT32], np.float32)
    assert [_nearest_float32(t) for t in texts] == want.tolist()
    plain = tf.decode_csv(texts, [[0.0]])[0]                            # NumPy columns
    rows = tf.decode_csv([t + b",1e0" for t in texts], [[0.0], [0.0]])[0]  # split rows
    missing = tf.decode_csv([t + b"," for t in texts], [[0.0], [2.5]])[0]  # per column
    numbers = tf.strings.to_number(texts, tf.float32)
    one_by_one = tf.strings.to_number(texts + [b"0x1p-2"], tf.float32)    # per element
    for got in sess.run([plain, rows, missing, numbers, one_by_one]):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got[:len(want)], want)
    doubles = sess.run(tf.decode_csv(texts, [np.zeros(1, np.float64)])[0])
    assert doubles.tolist() == [float(t) for t in texts]


def test_float32_near_midpoints_match_exact_rounding(sess):
    texts = _near_midpoints(600)
    want = np.array([_nearest_float32(t) for t in texts], np.float32)
    assert (want != np.array([float(t) for t in texts]).astype(np.float32)).sum() > 20
    short = [i for i, t in enumerate(texts) if sum(c in b"0123456789" for c in t) <= 15]
    got = sess.run([tf.decode_csv(texts, [[0.0]])[0],
                    tf.decode_csv([texts[i] for i in short], [[0.0]])[0],
                    tf.strings.to_number(texts, tf.float32)])
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want[short])
    np.testing.assert_array_equal(got[2], want)


def test_float32_subnormals_are_rounded_once(sess):
    # TensorFlow 2.21 gives these bits too (1, 0, 2, 1, 1001, 1000 for k = 0, 1, 1000)
    from decimal import Decimal, getcontext
    getcontext().prec = 80
    texts = []
    for k in (0, 1, 2, 3, 1000, 4095):          # just above and below subnormal midpoints
        mid = (Decimal(2 * k + 1) / 2) * Decimal(2) ** -149
        for nudge in (Decimal("1e-70"), Decimal("-1e-70")):
            texts.append(format(mid + nudge, ".40e").encode())
    want = np.array([_nearest_float32(t) for t in texts], np.float32)
    assert (want != np.array([float(t) for t in texts]).astype(np.float32)).any()
    got = sess.run([tf.strings.to_number(texts, tf.float32),
                    tf.decode_csv(texts, [[0.0]])[0]])
    for g in got:
        np.testing.assert_array_equal(g.view(np.uint32), want.view(np.uint32))
