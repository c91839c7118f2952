"""StringToNumber through number_parsing.py's paths: the word parser for plain decimals,
NumPy's parse for other notations, the strict per-string parser for errors.

Expected values were recorded from TensorFlow 2.21 (tf.compat.v1, graph mode, CPU) by
running tf.strings.to_number on each string and printing float.hex() of the result; they
are written here as literals.
"""
from fractions import Fraction

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.string import number_parsing

# (text, out_type, TF 2.21's result as float.hex() / int)
_TF_RECORDED = [
    ("1", "float32", "0x1.0p+0"), (" 1", "float32", "0x1.0p+0"),
    ("\t1\n", "float32", "0x1.0p+0"), ("+1", "float32", "0x1.0p+0"),
    ("-0", "float32", "-0x0.0p+0"), ("1.", "float32", "0x1.0p+0"),
    (".5", "float32", "0x1.0p-1"), ("+.5", "float32", "0x1.0p-1"),
    ("-.5e1", "float32", "-0x1.4p+2"), ("1E-3", "float32", "0x1.0624dep-10"),
    ("0x10", "float32", "0x1.0p+4"), ("0X1p3", "float32", "0x1.0p+3"),
    ("010", "float32", "0x1.4p+3"), ("1e-400", "float32", "0x0.0p+0"),
    ("16777217", "float32", "0x1.0p+24"), ("33554434", "float32", "0x1.0p+25"),
    ("-16777219", "float32", "-0x1.000004p+24"), ("123456789012345", "float32",
                                                  "0x1.c12218p+46"),
    ("2147483647", "float32", "0x1.0p+31"), ("4294967295", "float32", "0x1.0p+32"),
    ("0.1000000000000000055511151231257827", "float32", "0x1.99999ap-4"),
    ("3.4028235e38", "float32", "0x1.fffffep+127"),
    ("1.00000005960464477539062500000001", "float32", "0x1.000002p+0"),
    ("1.000000059604644775390625", "float32", "0x1.0p+0"),
    ("00000000000000000000001", "float32", "0x1.0p+0"),
    ("-0", "float64", "-0x0.0p+0"), ("1E-3", "float64", "0x1.0624dd2f1a9fcp-10"),
    ("2147483647", "float64", "0x1.fffffffc00000p+30"),
    ("-2147483649", "float64", "-0x1.0000000200000p+31"),
    ("16777217", "float64", "0x1.0000010000000p+24"),
    ("3.4028236e38", "float64", "0x1.ffffff514a7bcp+127"),
    ("1.000000059604644775390625", "float64", "0x1.0000010000000p+0"),
    ("+1", "int32", 1), ("-0", "int32", 0), ("010", "int32", 10), ("\t1\n", "int32", 1),
    ("2147483647", "int32", 2147483647), ("-2147483648", "int32", -2147483648),
    ("00000000000000000000001", "int32", 1),
    ("2147483648", "int64", 2147483648), ("-2147483649", "int64", -2147483649),
    ("999999999999999999", "int64", 999999999999999999),
    ("-999999999999999999", "int64", -999999999999999999),
    ("1000000000000000000", "int64", 1000000000000000000),
    ("9223372036854775807", "int64", 9223372036854775807),
    ("-9223372036854775808", "int64", -9223372036854775808),
]

# strings TF 2.21 refuses ("StringToNumberOp could not correctly convert string: ...")
_TF_REFUSED = [
    ("", "float32"), (" ", "float64"), (".", "float32"), ("1e", "float64"),
    ("1_0", "float32"), ("1,0", "float64"), ("1d", "float32"), ("+", "float32"),
    ("-", "int32"), ("1.", "int32"), (".5", "int64"), ("1e5", "int32"), ("inf", "int64"),
    ("0x10", "int32"), ("1.5", "int64"), ("2147483648", "int32"),
    ("-2147483649", "int32"), ("9223372036854775808", "int64"), ("1\x00", "float64"),
]


def _run(sess, texts, out_type):
    p = tf.placeholder(tf.string, [None])
    return sess.run(tf.strings.to_number(p, getattr(tf, out_type)),
                    {p: np.array([t.encode() for t in texts], dtype=object)})


def _as_recorded(value, out_type):
    return float(value).hex() if out_type.startswith("float") else int(value)


def _hex(text, out_type):
    return text if not out_type.startswith("float") else float.fromhex(text).hex()


@pytest.mark.parametrize("out_type", ["float32", "float64", "int32", "int64"])
def test_recorded_tf_results(sess, out_type):
    cases = [(t, r) for t, d, r in _TF_RECORDED if d == out_type]
    got = _run(sess, [t for t, _ in cases], out_type)
    assert got.dtype == np.dtype(out_type)
    assert [_as_recorded(v, out_type) for v in got] == [_hex(r, out_type) for _, r in cases]


@pytest.mark.parametrize("text,out_type", _TF_REFUSED)
def test_recorded_tf_refusals(sess, text, out_type):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="StringToNumberOp could not correctly convert string"):
        _run(sess, ["1", text], out_type)


def test_error_names_first_bad_string(sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"convert string: x\n"):
        _run(sess, ["1", "2", "x", "y"], "float32")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"convert string: 1\.5\n"):
        _run(sess, ["1", "2", "1.5", "2147483648"], "int32")


def _exact_float32(text: str) -> np.float32:
    """The float32 nearest the decimal `text`, ties to even, by exact arithmetic."""
    exact = Fraction(text)
    if exact == 0:  # Fraction drops the sign of zero; strtof keeps it
        return np.float32(-0.0 if text.startswith("-") else 0.0)
    guess = np.float32(float(exact))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess,
                  np.nextafter(guess, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact),
                                          int(c.view(np.uint32)) & 1))


def _plain_decimals(rng, n):
    """Plain decimals of 1 to 15 digits, signs and dots anywhere, and float32 halfway
    integers (2**24 + odd) that only a correctly rounded parse gets right."""
    out = []
    for _ in range(n):
        digits = "".join(rng.choice(list("0123456789"), rng.randint(1, 16)))
        cut = rng.randint(0, len(digits) + 1)
        sign = rng.choice(["", "-", "+"])
        out.append(sign + (digits if rng.rand() < 0.3 else digits[:cut] + "." + digits[cut:]))
    out += [str(2 ** 24 + 2 * k + 1) for k in range(50)]
    return out


@pytest.mark.parametrize("out_type", ["float32", "float64"])
def test_many_plain_floats_are_correctly_rounded(sess, out_type):
    texts = _plain_decimals(np.random.RandomState(1), 3000)
    got = _run(sess, texts, out_type)
    if out_type == "float64":
        want = np.array([float(t) for t in texts])
    else:
        want = np.array([_exact_float32(t) for t in texts], np.float32)
    np.testing.assert_array_equal(got.view("u%d" % got.itemsize),
                                  want.view("u%d" % want.itemsize))


@pytest.mark.parametrize("out_type", ["int32", "int64"])
def test_many_plain_ints(sess, out_type):
    rng = np.random.RandomState(2)
    bound = 2 ** 31 if out_type == "int32" else 10 ** 18
    values = rng.randint(-bound, bound, 3000, dtype=np.int64)
    texts = [("+" if v % 7 == 0 and v >= 0 else "") + str(v) for v in values.tolist()]
    np.testing.assert_array_equal(_run(sess, texts, out_type), values.astype(out_type))


def test_plain_batch_with_other_notations_falls_back(sess):
    texts = ["1.5"] * 10 + ["1e3", " 2", "inf", "0x10"]
    got = _run(sess, texts, "float64")
    np.testing.assert_array_equal(got, [1.5] * 10 + [1000.0, 2.0, np.inf, 16.0])


def test_parse_numbers_reports_first_bad_index():
    values, bad = number_parsing.parse_numbers([b"1", b"2", b"x3", b"4"], np.float32)
    assert bad == 2 and values[:2].tolist() == [1.0, 2.0]
    values, bad = number_parsing.parse_numbers([b"12", b"-7"], np.int64)
    assert bad is None and values.tolist() == [12, -7] and values.dtype == np.int64
