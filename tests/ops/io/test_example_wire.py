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
            with tf.Graph().as_default(), tf.Session() as sess:
                s = tf.placeholder(tf.string, [None])
                out = tf.io.parse_example(s, features)
                try:
                    results.append(sess.run(out, {s: np.array(serialized, dtype=object)}))
                except tf.errors.OpError as e:
                    results.append((type(e), e.message))
        return results[0], results[1], taken[0]
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
