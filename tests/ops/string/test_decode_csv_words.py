"""DecodeCSV's word-at-a-time parser of plain decimals (parse_plain_numbers) at the
edges of its 8-byte words: signs, dots and digits on either side of a boundary, fields of
1 to 24 bytes, against Python's own parse and through the op against the exact path."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.string.number_parsing import parse_plain_numbers


def _fields_at_word_edges(is_float):
    """Plain decimals whose sign, dot and last digit fall at every byte of 3 words."""
    out = []
    for total in range(1, 19 if not is_float else 16):
        digits = "".join(str((7 * i + total) % 10) for i in range(total))
        for sign in ("", "-", "+"):
            out.append(sign + digits)
            if is_float:
                for cut in range(0, total + 1):
                    out.append(sign + digits[:cut] + "." + digits[cut:])
    return [f.encode() for f in out]


def _parse(fields, np_dtype):
    text = b",".join(fields)
    lengths = np.array([len(f) for f in fields])
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    return parse_plain_numbers(np.frombuffer(text, np.uint8), starts, lengths,
                                np.dtype(np_dtype))


@pytest.mark.parametrize("np_dtype", [np.float64, np.float32, np.int64])
def test_every_boundary_position(np_dtype):
    is_float = np.dtype(np_dtype).kind == "f"
    fields = _fields_at_word_edges(is_float)
    got = _parse(fields, np_dtype)
    want = np.array([float(f) if is_float else int(f) for f in fields],
                    np.float64 if is_float else np.int64).astype(np_dtype)
    assert got.dtype == np_dtype
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()


@pytest.mark.parametrize("bad", [b"1.2.3", b"12345678.9.", b"+-1", b"1-2", b"123456789-",
                                 b"-", b".", b"+.", b"1234567890123456", b"12 4",
                                 b"1234567.e", b"12345678901234567890123456"])
def test_anything_else_is_left_to_the_exact_path(bad):
    assert _parse([b"1.5", bad, b"2"], np.float64) is None


def test_integer_fields_reject_dots_and_out_of_range():
    assert _parse([b"1", b"2.0"], np.int64) is None
    assert _parse([b"2147483648"], np.int32) is None
    assert _parse([b"-2147483648", b"+2147483647"], np.int32).tolist() == [
        -2147483648, 2147483647]
    assert _parse([b"999999999999999999", b"-000000000000000001"], np.int64).tolist() == [
        999999999999999999, -1]


def test_decode_csv_op_across_word_boundaries(sess):
    rows = [b"%s,%s,%s" % (f, f, g) for f, g in zip(
        _fields_at_word_edges(True)[:300], [b"%d" % i for i in range(-150, 150)])]
    a, b, c = sess.run(tf.decode_csv(rows, [[0.0], [tf.constant(0.0, tf.float64)], [0]]))
    want = np.array([float(r.split(b",")[0]) for r in rows])
    np.testing.assert_array_equal(a, want.astype(np.float32))
    np.testing.assert_array_equal(b, want)
    assert c.dtype == np.int32 and c.tolist() == list(range(-150, 150))
