"""ParseExample's batch reader of the wire format (ops/io/example_wire.py) against the
exact path (a protobuf message per example): the same outputs for every batch it reads,
and None (so the exact path parses, with its errors) for every other encoding."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import example_wire, parsing_ops


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _entry(key: bytes, feature: bytes) -> bytes:
    return _ld(1, _ld(1, key) + _ld(2, feature))


def _example(*entries: bytes) -> bytes:
    return _ld(1, b"".join(entries))


def _floats(values) -> bytes:
    return _ld(2, _ld(1, np.asarray(values, "<f4").tobytes()))


def _ints(values) -> bytes:
    return _ld(3, _ld(1, b"".join(_varint(v) for v in values)))


@pytest.fixture
def paths(monkeypatch):
    """run(serialized, features) -> (fast outputs or error, exact outputs or error,
    whether the fast path read the batch)."""
    taken = []
    real_gather = example_wire.gather

    def gather(*args):
        out = real_gather(*args)
        taken.append(out is not None)
        return out
    monkeypatch.setattr(example_wire, "gather", gather)

    def run(serialized, features):
        results = []
        for min_batch in (1, 10 ** 9):
            monkeypatch.setattr(parsing_ops, "_WIRE_MIN_BATCH", min_batch)
            monkeypatch.setattr(parsing_ops, "_WIRE_MIN_READS", min_batch)
            with tf.Graph().as_default(), tf.Session() as sess:
                s = tf.placeholder(tf.string, [None])
                out = tf.io.parse_example(s, features)
                try:
                    results.append(sess.run(out, {s: np.array(serialized, dtype=object)}))
                except tf.errors.OpError as e:
                    results.append((type(e), e.message))
        return results[0], results[1], taken[-1]  # (this run's)
    return run


def _assert_same(fast, exact):
    if isinstance(exact, tuple):
        assert fast == exact
        return
    assert sorted(fast) == sorted(exact)
    for key in exact:
        a, b = fast[key], exact[key]
        if isinstance(b, tf.SparseTensorValue):
            for x, y in zip(a, b):
                assert x.dtype == y.dtype and x.shape == y.shape
                np.testing.assert_array_equal(x, y)
        else:
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)


_FEATURES = {
    "x": tf.io.FixedLenFeature([3], tf.float32, default_value=[1.5, -2.0, 0.25]),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "name": tf.io.FixedLenFeature([], tf.string, default_value=b"?"),
    "grid": tf.io.FixedLenFeature([2, 2], tf.int64, default_value=[[1, 2], [3, 4]]),
    "tags": tf.io.VarLenFeature(tf.int64),
    "weights": tf.io.VarLenFeature(tf.float32),
    "words": tf.io.VarLenFeature(tf.string),
    "ключ": tf.io.VarLenFeature(tf.int64),
}


def _random_example(rs) -> bytes:
    f = {}

    def maybe(key, feature):
        if rs.rand() < 0.8:
            f[key] = feature
    def i64(n):
        return rs.randint(-2 ** 63, 2 ** 63 - 1, size=n, dtype=np.int64).tolist()
    maybe("x", tf.train.Feature(float_list=tf.train.FloatList(
        value=rs.randn(3).astype(np.float32).tolist())))
    f["label"] = tf.train.Feature(int64_list=tf.train.Int64List(
        value=[int(rs.choice([0, 1, 127, 128, 300, -1, -2 ** 63, 2 ** 63 - 1]))]))
    maybe("name", tf.train.Feature(bytes_list=tf.train.BytesList(
        value=[bytes(rs.randint(0, 256, rs.randint(0, 200)).astype(np.uint8))])))
    maybe("grid", tf.train.Feature(int64_list=tf.train.Int64List(value=i64(4))))
    maybe("tags", tf.train.Feature(int64_list=tf.train.Int64List(
        value=i64(rs.randint(0, 6)))))
    maybe("weights", tf.train.Feature(float_list=tf.train.FloatList(
        value=rs.randn(rs.randint(0, 4)).astype(np.float32).tolist())))
    maybe("words", tf.train.Feature(bytes_list=tf.train.BytesList(
        value=[b"w%d" % k * rs.randint(0, 3) for k in range(rs.randint(0, 4))])))
    maybe("ключ", tf.train.Feature(int64_list=tf.train.Int64List(value=i64(2))))
    maybe("unused", tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])))
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


@pytest.mark.parametrize("seed", range(6))
def test_random_batches_read_as_the_exact_path(paths, seed):
    rs = np.random.RandomState(seed)
    batch = [_random_example(rs) for _ in range(int(rs.choice([1, 9, 64])))]
    fast, exact, taken = paths(batch, _FEATURES)
    assert taken
    _assert_same(fast, exact)


def test_hand_encoded_batch_values(paths):
    # the values checked against literals, not only against the exact path
    batch = [_example(_entry(b"v", _floats([0.5, -1.0])), _entry(b"n", _ints([300, -1]))),
             _example(_entry(b"n", _ints([])), _entry(b"v", _floats([])))]
    fast, exact, taken = paths(batch, {"v": tf.io.VarLenFeature(tf.float32),
                                       "n": tf.io.VarLenFeature(tf.int64)})
    assert taken
    _assert_same(fast, exact)
    np.testing.assert_array_equal(fast["v"].values, np.array([0.5, -1.0], np.float32))
    np.testing.assert_array_equal(fast["n"].values, [300, -1])
    np.testing.assert_array_equal(fast["n"].indices, [[0, 0], [0, 1]])
    np.testing.assert_array_equal(fast["n"].dense_shape, [2, 2])


_V = {"v": tf.io.FixedLenFeature([2], tf.float32, default_value=[7.0, 8.0]),
      "w": tf.io.VarLenFeature(tf.int64)}
_GOOD = _example(_entry(b"v", _floats([1.0, 2.0])), _entry(b"w", _ints([5])))
_UNUSUAL = {
    # valid encodings the batch reader leaves to the exact path
    "empty example": b"",
    "unpacked floats": _example(_entry(b"v", _ld(2, b"\x0d" + np.float32(3).tobytes()
                                                 + b"\x0d" + np.float32(4).tobytes()))),
    "packed list in two chunks": _example(_entry(b"w", _ld(3, _ld(1, _varint(1))
                                                          + _ld(1, _varint(2))))),
    "value before key": _example(_ld(1, _ld(2, _floats([1.0, 2.0])) + _ld(1, b"v"))),
    "duplicate key, the last wins": _example(_entry(b"v", _floats([1.0, 2.0])),
                                             _entry(b"v", _floats([3.0, 4.0]))),
    "an unknown field": _GOOD + _ld(5, b"zz"),
    "a feature without a kind": _example(_entry(b"w", b"")),
    "two lists in a feature": _example(_entry(b"w", _floats([1.0]) + _ints([1]))),
    # invalid ones: the exact path's errors
    "wrong kind": _example(_entry(b"v", _ints([1, 2]))),
    "wrong count": _example(_entry(b"v", _floats([1.0]))),
    "garbage": b"\xff\xfe\xfd",
    "truncated": _GOOD[:-3],
    "length past the end": _GOOD[:1] + _varint(len(_GOOD) + 50) + _GOOD[2:],
    "a key that is not UTF-8": _example(_entry(b"\xff\xfe", _floats([1.0])),
                                        _entry(b"v", _floats([1.0, 2.0]))),
    "a corrupt feature no one asked for": _example(
        _entry(b"v", _floats([1.0, 2.0])), _entry(b"other", _ld(2, _ld(1, b"\0\0\x80")))),
    "eleven-byte varint": _example(_entry(b"w", _ld(3, _ld(1, b"\xff" * 10 + b"\x01")))),
}


def test_an_example_without_entries_takes_the_defaults(paths):
    batch = [_GOOD] * 5 + [_ld(1, b"")] + [_GOOD] * 4
    fast, exact, taken = paths(batch, _V)
    assert taken
    _assert_same(fast, exact)
    np.testing.assert_array_equal(fast["v"][5], [7.0, 8.0])
    np.testing.assert_array_equal(fast["w"].indices[:, 0], [0, 1, 2, 3, 4, 6, 7, 8, 9])


@pytest.mark.parametrize("case", sorted(_UNUSUAL))
def test_other_encodings_go_to_the_exact_path(paths, case):
    batch = [_GOOD] * 5 + [_UNUSUAL[case]] + [_GOOD] * 4
    fast, exact, taken = paths(batch, _V)
    assert not taken
    _assert_same(fast, exact)


def test_a_required_feature_missing_is_the_exact_paths_error(paths):
    batch = [_GOOD] * 9 + [_example(_entry(b"w", _ints([1])))]
    fast, exact, taken = paths(batch, {"v": tf.io.FixedLenFeature([2], tf.float32)})
    assert not taken
    assert exact[0] is tf.errors.InvalidArgumentError and "is required" in exact[1]
    assert fast == exact


@pytest.mark.parametrize("seed", range(4))
def test_corrupted_bytes_never_give_other_values(paths, seed):
    # a byte changed, dropped or inserted in one example: whatever the exact path makes
    # of it (values or an error), the batch reader gives the same
    rs = np.random.RandomState(100 + seed)
    base = [_random_example(rs) for _ in range(9)]
    for _ in range(15):
        batch = list(base)
        k = rs.randint(len(batch))
        b = bytearray(batch[k])
        at = rs.randint(len(b))
        op = rs.randint(3)
        if op == 0:
            b[at] = rs.randint(256)
        elif op == 1:
            del b[at]
        else:
            b.insert(at, rs.randint(256))
        batch[k] = bytes(b)
        fast, exact, _ = paths(batch, _FEATURES)
        _assert_same(fast, exact)


def _padded_varint(n: int, size: int) -> bytes:
    """`n` as a varint of `size` bytes (continuation bits on zero bytes: still valid)."""
    out = bytearray(_varint(n))
    out[-1] |= 0x80
    out += b"\x80" * (size - len(out) - 1) + b"\x00"
    return bytes(out)


def test_a_padded_length_is_read_up_to_five_bytes(paths):
    key, feature = b"w", _ints([5, 300])
    entry = _ld(1, key) + _varint(2 << 3 | 2) + _padded_varint(len(feature), 5) + feature
    batch = [_GOOD] * 4 + [_example(_ld(1, entry))] + [_GOOD] * 4
    fast, exact, taken = paths(batch, _V)
    assert taken
    _assert_same(fast, exact)
    np.testing.assert_array_equal(fast["w"].values, [5] * 4 + [5, 300] + [5] * 4)
    entry = _ld(1, key) + _varint(2 << 3 | 2) + _padded_varint(len(feature), 6) + feature
    batch[4] = _example(_ld(1, entry))
    fast, exact, taken = paths(batch, _V)
    assert not taken  # (six bytes: left to the exact path)
    _assert_same(fast, exact)


_KEYS = [b"", b"a", b"a\0", b"abcdefgh", b"abcdefghi", b"abcdefgh_long_key_1",
         b"abcdefgh_long_key_2", "ключ_длинный_ключ".encode()]
_UNREQUESTED = [b"abcdefgh_long_key_3", b"b", b"abcdefgh\0", "ключ_длинный_ключ!".encode()]


def test_keys_are_told_apart_by_every_byte_and_their_length(paths):
    # keys sharing 8-byte words, differing past them or by a trailing NUL: each entry's
    # values are its key's index, so a key read as another shows in the values
    rs = np.random.RandomState(7)
    batch, expected = [], {k: [] for k in _KEYS}
    for _ in range(12):
        keys = [k for k in _KEYS + _UNREQUESTED if rs.rand() < 0.7]
        rs.shuffle(keys)
        batch.append(_example(*[_entry(k, _ints([(_KEYS + _UNREQUESTED).index(k)]))
                                for k in keys]))
        for k in _KEYS:
            expected[k].append([_KEYS.index(k)] if k in keys else [])
    features = {k.decode(): tf.io.VarLenFeature(tf.int64) for k in _KEYS}
    fast, exact, taken = paths(batch, features)
    assert taken
    _assert_same(fast, exact)
    for k in _KEYS:
        np.testing.assert_array_equal(fast[k.decode()].values, sum(expected[k], []))


def test_long_lists_and_values_of_every_dtype(paths):
    # lengths of 2 and 3 bytes, floats at every alignment, values of every varint size
    rs = np.random.RandomState(3)
    floats = [rs.randn(int(rs.choice([0, 3, 40000]))).astype(np.float32) for _ in range(9)]
    ints = [rs.randint(-2 ** 63, 2 ** 63 - 1, size=rs.randint(0, 300), dtype=np.int64)
            >> rs.randint(0, 63) for _ in range(9)]
    texts = [[bytes(rs.randint(0, 256, n).astype(np.uint8)) for n in rs.randint(0, 400, 3)]
             for _ in range(9)]
    dense = [rs.randn(3000).astype(np.float32) for _ in range(9)]
    batch = [_example(_entry(b"f", _floats(f)), _entry(b"i", _ints(i.tolist())),
                      _entry(b"pad" * (k % 4), _ld(1, _ld(1, b"x" * k))),
                      _entry(b"t", _ld(1, b"".join(_ld(1, t) for t in ts))),
                      _entry(b"d", _floats(d)))
             for k, (f, i, ts, d) in enumerate(zip(floats, ints, texts, dense))]
    features = {"f": tf.io.VarLenFeature(tf.float32), "i": tf.io.VarLenFeature(tf.int64),
                "t": tf.io.VarLenFeature(tf.string),
                "d": tf.io.FixedLenFeature([3000], tf.float32)}
    fast, exact, taken = paths(batch, features)
    assert taken
    _assert_same(fast, exact)
    np.testing.assert_array_equal(fast["f"].values, np.concatenate(floats))
    np.testing.assert_array_equal(fast["i"].values, np.concatenate(ints))
    assert fast["t"].values.tolist() == sum(texts, [])
    np.testing.assert_array_equal(fast["d"], np.stack(dense))


def test_batches_of_few_feature_reads_take_the_exact_path(monkeypatch):
    calls = []
    monkeypatch.setattr(example_wire, "gather", lambda *a: calls.append(a))
    with tf.Graph().as_default(), tf.Session() as sess:
        s = tf.placeholder(tf.string, [None])
        out = tf.io.parse_example(s, _V)
        for n in (8, 63, 64):  # 2 features: 128 reads from 64 examples on
            sess.run(out, {s: np.array([_GOOD] * n, dtype=object)})
    assert [len(a[0]) for a in calls] == [64]


def test_colliding_key_hashes_leave_the_batch_to_the_exact_path(paths, monkeypatch):
    # with every hash equal, keys can no longer be told apart by hash: the reader must
    # not guess (without the guard, every key would be read as one slot's key)
    monkeypatch.setattr(example_wire, "_key_hashes",
                        lambda words, lengths: np.zeros(len(lengths), np.uint64))
    example_wire._plan.cache_clear()
    try:
        fast, exact, taken = paths([_GOOD] * 10, _V)
    finally:
        example_wire._plan.cache_clear()
    assert not taken
    _assert_same(fast, exact)


def _long_example(rs) -> bytes:
    """Lists long enough for lengths of 2 and 3 bytes, keys of several words."""
    return _example(
        _entry(b"f", _floats(rs.randn(int(rs.choice([0, 40, 5000]))))),
        _entry(b"a_rather_long_key_name", _ints(rs.randint(-300, 300, rs.randint(0, 90)).tolist())),
        _entry(b"t", _ld(1, b"".join(_ld(1, b"z" * int(n)) for n in rs.randint(0, 200, 2)))))


@pytest.mark.parametrize("seed", range(3))
def test_corrupted_long_lists_never_give_other_values(paths, seed):
    rs = np.random.RandomState(200 + seed)
    base = [_long_example(rs) for _ in range(8)]
    features = {"f": tf.io.VarLenFeature(tf.float32), "t": tf.io.VarLenFeature(tf.string),
                "a_rather_long_key_name": tf.io.VarLenFeature(tf.int64)}
    fast, exact, taken = paths(base, features)
    assert taken
    _assert_same(fast, exact)
    for _ in range(15):
        batch = list(base)
        k = rs.randint(len(batch))
        b = bytearray(batch[k])
        at = rs.randint(min(len(b), 40)) if rs.rand() < 0.5 else rs.randint(len(b))
        b[at] = rs.randint(256)  # (the headers are near the start of each entry)
        batch[k] = bytes(b)
        fast, exact, _ = paths(batch, features)
        _assert_same(fast, exact)
