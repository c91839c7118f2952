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


# --- fields of one layout (number_parsing._parse_one_layout) ------------------------------
def _one_layout_fields(width, dot, sign, count=60, seed=0):
    """`count` fields `width` bytes long: `sign` ("", "-", "+" or "mixed") first, the dot
    at byte `dot` (None: no dot), random digits elsewhere."""
    rs = np.random.RandomState(seed + 31 * width + (dot or 0))
    out = []
    for i in range(count):
        chars = [chr(48 + d) for d in rs.randint(0, 10, width)]
        if sign:
            chars[0] = "-+"[i % 2] if sign == "mixed" else sign
        if dot is not None:
            chars[dot] = "."
        out.append("".join(chars).encode())
    return out


def _layouts(is_float):
    for width in range(1, 9):
        for sign in ("", "-", "+", "mixed"):
            first = 1 if sign else 0
            dots = [None] + (list(range(first, width)) if is_float else [])
            for dot in dots:
                if width - first - (dot is not None) >= 1:
                    yield width, dot, sign


@pytest.mark.parametrize("np_dtype", [np.float64, np.float32, np.int64, np.int32])
def test_fields_of_one_layout_take_the_layout_path_and_parse_as_python(np_dtype):
    from tensorweave.ops.string import number_parsing
    is_float = np.dtype(np_dtype).kind == "f"
    for width, dot, sign in _layouts(is_float):
        fields = _one_layout_fields(width, dot, sign)
        text = b",".join(fields)
        starts = np.arange(len(fields)) * (width + 1)
        direct = number_parsing._parse_one_layout(np.frombuffer(text, np.uint8), starts,
                                                  width, np.dtype(np_dtype))
        assert direct is not None, (width, dot, sign)
        want = np.array([float(f) if is_float else int(f) for f in fields],
                        np.float64 if is_float else np.int64).astype(np_dtype)
        got = _parse(fields, np_dtype)
        assert got.dtype == np_dtype
        np.testing.assert_array_equal(got, want, err_msg=str((width, dot, sign)))
        assert (np.signbit(got) == np.signbit(want)).all()   # -0.0 and -000 included


@pytest.mark.parametrize("odd", [b"12.345", b"1234.5", b"-23.45", b"123456", b"12a.45",
                                 b"123.4 ", b"12345.", b"+23.45"])
def test_a_field_off_the_layout_goes_to_the_general_path(odd):
    """The first field sets the layout ("123.45"); one field that breaks it makes the
    layout path refuse, and the general path parses them all (or refuses) as before."""
    from tensorweave.ops.string import number_parsing
    fields = [b"123.45", b"000.01", odd, b"987.65"]
    text = b",".join(fields)
    starts = np.arange(4) * 7
    assert number_parsing._parse_one_layout(np.frombuffer(text, np.uint8), starts, 6,
                                            np.dtype(np.float64)) is None
    got = _parse(fields, np.float64)
    try:
        want = [float(f) for f in fields]
    except ValueError:
        want = None
    if want is None or b" " in odd:
        assert got is None
    else:
        np.testing.assert_array_equal(got, want)


def test_one_layout_rounds_float32_ties_and_checks_integer_ranges():
    # 2**24 + 1 and + 3 lie halfway between float32 neighbours: ties go to even
    got = _parse([b"16777217", b"16777219", b"00000001"], np.float32)
    assert got.tolist() == [16777216.0, 16777220.0, 1.0]
    assert _parse([b"127", b"-128"], np.int8).tolist() == [127, -128]
    assert _parse([b"128", b"-12"], np.int8) is None   # out of range: the exact path
    assert _parse([b"1.5", b"2.5"], np.int32) is None  # a dot in an integer field


def test_decode_csv_of_fixed_precision_columns_matches_python(sess):
    rs = np.random.RandomState(5)
    x = rs.uniform(-9, 9, (300, 6))
    rows = [(",".join("%+.5f" % v for v in r) + ",%d" % (i % 7)).encode()
            for i, r in enumerate(x)]
    out = sess.run(tf.decode_csv(rows, [[0.0]] * 6 + [[0]]))
    want = np.array([[float(v) for v in r.split(b",")[:6]] for r in rows])
    np.testing.assert_array_equal(np.stack(out[:6], axis=1), want.astype(np.float32))
    assert out[6].tolist() == [i % 7 for i in range(300)]
