"""String ops against values and error messages recorded from TF1 (tf.compat.v1):
decode_csv, decode_raw, string_split, strings.split, substr, string_to_number,
as_string, string_join, strings.length, reduce_join, strings.format, read_file,
write_file, matching_files."""
import os

import numpy as np
import pytest

import tensorweave as tf

IAE = tf.errors.InvalidArgumentError


def _b(*items):
    return np.array([s.encode() if isinstance(s, str) else s for s in items], dtype=object)


# --- decode_csv ---------------------------------------------------------------------------
def test_decode_csv_types_quotes_and_defaults(sess):
    out = tf.decode_csv(['1,2.5,"a,b",x', '3,,"q""r",'], [[0], [1.0], [""], ["zz"]])
    assert [t.dtype for t in out] == [tf.int32, tf.float32, tf.string, tf.string]
    assert all(t.shape.as_list() == [2] for t in out)
    a, b, c, d = sess.run(out)
    np.testing.assert_array_equal(a, np.array([1, 3], np.int32))
    np.testing.assert_array_equal(b, np.array([2.5, 1.0], np.float32))
    np.testing.assert_array_equal(c, _b("a,b", 'q"r'))
    np.testing.assert_array_equal(d, _b("x", "zz"))
    assert a.dtype == np.int32 and b.dtype == np.float32


def test_decode_csv_64_bit_types_and_whitespace(sess):
    out = sess.run(tf.decode_csv([" 12 , 3.5 ,-7,1e3"],
                                 [[0], [0.0], tf.constant([0], tf.int64),
                                  tf.constant([0.0], tf.float64)]))
    assert [o.dtype for o in out] == [np.int32, np.float32, np.int64, np.float64]
    assert [o.tolist() for o in out] == [[12], [3.5], [-7], [1000.0]]
    f = sess.run(tf.decode_csv(["1e3,inf,nan,0x10"], [[0.0]] * 4))
    assert f[0][0] == 1000 and np.isinf(f[1][0]) and np.isnan(f[2][0]) and f[3][0] == 16


def test_decode_csv_na_value_delim_select_cols(sess):
    out = sess.run(tf.decode_csv(["1;NA;3"], [[0], [7], [0.0]], field_delim=";",
                                 na_value="NA"))
    assert [o.tolist() for o in out] == [[1], [7], [3.0]]
    out = sess.run(tf.decode_csv(["1,2,3,4", "5,6,7,8"], [[0], ["x"]], select_cols=[1, 3]))
    np.testing.assert_array_equal(out[0], [2, 6])
    np.testing.assert_array_equal(out[1], _b("4", "8"))
    out = sess.run(tf.decode_csv(['"a""b",2'], [[""], ["x"]], use_quote_delim=False))
    np.testing.assert_array_equal(out[0], _b('"a""b"'))
    # as TF, the fields after the last selected column are not parsed (nor checked)
    out = sess.run(tf.decode_csv(['1,2,"unterminated', '3,"4",x"y'], [[0], [0]],
                                 select_cols=[0, 1]))
    assert [o.tolist() for o in out] == [[1, 3], [2, 4]]


def test_decode_csv_plain_numbers_batch_path(sess):
    # plain decimals of every shape take the NumPy column parser; the values must be
    # exactly what a per-field strtod/strtol gives, for every output dtype
    rs = np.random.RandomState(3)
    fields = ["%.*f" % (rs.randint(0, 9), v) for v in rs.uniform(-1e6, 1e6, 300)]
    fields += [".5", "5.", "-.25", "+3", "-0", "0.000000000000001", "999999999999999",
               "123456789012345.6"]
    ints = [str(v) for v in rs.randint(-2 ** 31, 2 ** 31, len(fields))]
    records = ["%s;%s;%s;%s;s%d" % (f, i, f, i, k)
               for k, (f, i) in enumerate(zip(fields, ints))]
    out = sess.run(tf.decode_csv(records, [[0.0], [0], tf.constant([0.0], tf.float64),
                                           tf.constant([0], tf.int64), [""]],
                                 field_delim=";"))
    np.testing.assert_array_equal(out[0], np.array([float(f) for f in fields], np.float32))
    np.testing.assert_array_equal(out[1], np.array([int(i) for i in ints], np.int32))
    np.testing.assert_array_equal(out[2], np.array([float(f) for f in fields]))
    np.testing.assert_array_equal(out[3], np.array([int(i) for i in ints], np.int64))
    assert np.signbit(out[2][fields.index("-0")])
    assert out[4].tolist() == [b"s%d" % k for k in range(len(fields))]
    assert [o.dtype for o in out] == [np.float32, np.int32, np.float64, np.int64, object]


@pytest.mark.parametrize("records,message", [
    (["1,2", "3"], "Expect 2 fields but have 1 in record 1"),
    (["1,2", "3,4,5"], "Expect 2 fields but have 3 in record 1"),
    (["1,2", "1.5,4"], "Field 0 in record 1 is not a valid int32: 1.5"),
    (["1,2", "3000000000,4"], "Field 0 in record 1 is not a valid int32: 3000000000"),
    (["1,2", "1_0,4"], "Field 0 in record 1 is not a valid int32: 1_0"),
    (["1,2", "4,2.5.1"], "Field 1 in record 1 is not a valid float: 2.5.1"),
    (["1,", "4,5"], "Field 1 is required but missing in record 0!"),
])
def test_decode_csv_batch_path_leaves_errors_to_the_exact_path(sess, records, message):
    with pytest.raises(IAE, match=message.replace(".", r"\.")):
        sess.run(tf.decode_csv(records, [[0], tf.constant([], tf.float32)]))


def test_decode_csv_shapes(sess):
    out = tf.decode_csv([["1,2"], ["3,4"]], [[0], [0.0]])
    assert out[0].shape.as_list() == [2, 1]
    a, b = sess.run(out)
    np.testing.assert_array_equal(a, [[1], [3]])
    np.testing.assert_array_equal(b, [[2.0], [4.0]])
    p = tf.placeholder(tf.string, [None, 3])
    assert tf.decode_csv(p, [[0]])[0].shape.as_list() == [None, 3]
    one = tf.decode_csv(["1", "2"], [[5]])
    assert isinstance(one, list) and len(one) == 1
    np.testing.assert_array_equal(sess.run(one)[0], [1, 2])


@pytest.mark.parametrize("records,defaults,kwargs,fragment", [
    (["1,"], [[0], "EMPTY"], {}, "Field 1 is required but missing in record 0!"),
    (["1,2,3"], [[0], [1]], {}, "Expect 2 fields but have 3 in record 0"),
    (["1,2", ""], [[0], [1]], {}, "Expect 2 fields but have 0 in record 1"),
    (["a,2"], [[0], [1]], {}, "Field 0 in record 0 is not a valid int32: a"),
    (["1.5,2"], [[0], [1]], {}, "Field 0 in record 0 is not a valid int32: 1.5"),
    (["9999999999,2"], [[0], [1]], {}, "Field 0 in record 0 is not a valid int32: 9999999999"),
    (["1_0,2"], [[0], [1]], {}, "Field 0 in record 0 is not a valid int32: 1_0"),
    (["x,2"], [[0.0], [1]], {}, "Field 0 in record 0 is not a valid float: x"),
    (['a"b,2'], [[""], ["x"]], {}, "Unquoted fields cannot have quotes/CRLFs inside"),
    (['"ab"c,2'], [[""], ["x"]], {}, "Quote inside a string has to be escaped by another quote"),
    (['"ab,2'], [[""], ["x"]], {}, "Quoted field has to end with quote followed by delim or end"),
    (["1,2"], [[0], ["x"]], {"select_cols": [1, 3]}, "Expect 2 fields but have 1 in record 0"),
    (["1,2"], [[0], [0]], {"field_delim": "ab"}, "field_delim should be only 1 char"),
])
def test_decode_csv_run_time_errors(sess, records, defaults, kwargs, fragment):
    defaults = [tf.constant([], tf.int32) if d == "EMPTY" else d for d in defaults]
    out = tf.decode_csv(records, defaults, **kwargs)
    with pytest.raises(IAE) as e:
        sess.run(out)
    assert fragment in str(e.value)


def test_decode_csv_build_time_errors(graph):
    with pytest.raises(ValueError, match="select_cols is not strictly increasing"):
        tf.decode_csv(["1,2"], [[0], ["x"]], select_cols=[3, 1])
    with pytest.raises(ValueError, match="Length of select_cols and record_defaults do not"):
        tf.decode_csv(["1,2"], [[0], ["x"], [1]], select_cols=[1, 3])
    with pytest.raises(ValueError, match="length-0 or length-1 vector"):
        tf.decode_csv(["1"], [[0, 1]])
    with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
        tf.decode_csv(["1"], [[True]])


def test_decode_csv_multi_element_default_fails_at_run_time(sess):
    out = tf.decode_csv(["1"], [tf.placeholder_with_default([0, 1], [None])])
    with pytest.raises(IAE, match="There should only be 1 default per field but field 0 has 2"):
        sess.run(out)


# --- decode_raw -----------------------------------------------------------------------------
def test_decode_raw(sess):
    d = tf.decode_raw([b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"], tf.int16)
    assert d.shape.as_list() == [2, None] and d.dtype == tf.int16
    np.testing.assert_array_equal(sess.run(d), np.array([[1, 2], [3, 4]], np.int16))
    big = sess.run(tf.decode_raw([b"\x01\x00\x02\x00"], tf.int16, little_endian=False))
    np.testing.assert_array_equal(big, [[256, 512]])
    assert big.dtype == np.int16
    f = sess.run(tf.io.decode_raw([[b"\x01\x00\x00\x00\x00\x00\x80\x3f"]], tf.float32))
    assert f.shape == (1, 1, 2) and f[0, 0, 1] == 1.0 and f[0, 0, 0] == np.float32(1e-45)
    np.testing.assert_array_equal(sess.run(tf.decode_raw([b"\x01\x00"], tf.bool)),
                                  [[True, False]])
    np.testing.assert_array_equal(sess.run(tf.decode_raw(b"abcd", tf.uint8)), [97, 98, 99, 100])
    assert tf.decode_raw(b"abcd", tf.uint8).shape.as_list() == [None]
    assert tf.decode_raw(tf.placeholder(tf.string), tf.uint8).shape.ndims is None
    assert sess.run(tf.decode_raw([b"", b""], tf.float32)).shape == (2, 0)
    np.testing.assert_array_equal(sess.run(tf.decode_raw([b"\x00\x3c"], tf.float16)), [[1.0]])
    x = np.array([1.5, -2.0, 3.25], np.float64)
    np.testing.assert_array_equal(sess.run(tf.decode_raw(x.tobytes(), tf.float64)), x)
    np.testing.assert_array_equal(sess.run(tf.decode_raw(bytes=x.tobytes(), out_type=tf.int64)),
                                  x.view(np.int64))


def test_decode_raw_errors(sess, graph):
    with pytest.raises(IAE, match="requires input strings to all be the same size, but "
                                  "element 1 has size 3 != 4"):
        sess.run(tf.decode_raw([b"\x01\x00\x02", b"\x03\x00\x04\x00"], tf.uint8))
    with pytest.raises(IAE, match="Input to DecodeRaw has length 3 that is not a multiple of "
                                  "2, the size of int16"):
        sess.run(tf.decode_raw([b"\x01\x00\x02", b"\x03\x00\x04"], tf.int16))
    with pytest.raises(TypeError, match="DataType string not in list of allowed values"):
        tf.decode_raw([b"\x01\x00"], tf.string)


# --- string_split / strings.split -------------------------------------------------------------
def _check_sparse(v, indices, values, shape):
    np.testing.assert_array_equal(v.indices.reshape(-1, 2), np.array(indices).reshape(-1, 2))
    assert v.indices.dtype == np.int64
    np.testing.assert_array_equal(v.values, _b(*values))
    np.testing.assert_array_equal(v.dense_shape, shape)


def test_string_split(sess):
    s = tf.string_split(["a b  c", "", "de"])
    assert isinstance(s, tf.SparseTensor)
    assert s.indices.shape.as_list() == [None, 2] and s.values.shape.as_list() == [None]
    assert s.dense_shape.shape.as_list() == [2] and s.shape.as_list() == [None, None]
    _check_sparse(sess.run(s), [[0, 0], [0, 1], [0, 2], [2, 0]], ["a", "b", "c", "de"], [3, 3])
    _check_sparse(sess.run(tf.string_split(["a b  c", "", "de"], skip_empty=False)),
                  [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0]], ["a", "b", "", "c", "de"], [3, 4])
    _check_sparse(sess.run(tf.string_split(["a,b;c", "x"], delimiter=",;")),
                  [[0, 0], [0, 1], [0, 2], [1, 0]], ["a", "b", "c", "x"], [2, 3])
    _check_sparse(sess.run(tf.string_split(["abc", "x"], delimiter="")),
                  [[0, 0], [0, 1], [0, 2], [1, 0]], ["a", "b", "c", "x"], [2, 3])
    _check_sparse(sess.run(tf.string_split(["abc", "x"], sep="b")),
                  [[0, 0], [0, 1], [1, 0]], ["a", "c", "x"], [2, 2])
    _check_sparse(sess.run(tf.string_split(tf.constant([], tf.string))), [], [], [0, 0])


def test_string_split_utf8_splits_bytes_and_fed_delimiter(sess):
    v = sess.run(tf.string_split(["h\u00e9"], delimiter=""))
    _check_sparse(v, [[0, 0], [0, 1], [0, 2]], [b"h", b"\xc3", b"\xa9"], [1, 3])
    src, sep = tf.placeholder(tf.string, [None]), tf.placeholder(tf.string)
    v = sess.run(tf.string_split(src, delimiter=sep), {src: ["a,b"], sep: ","})
    _check_sparse(v, [[0, 0], [0, 1]], ["a", "b"], [1, 2])


def test_string_split_rank_errors(graph):
    with pytest.raises(ValueError):
        tf.string_split([["abc"]])
    with pytest.raises(ValueError):
        tf.string_split(["ab"], delimiter=[","])
    with pytest.raises(ValueError, match="result_type must be 'RaggedTensor' or"):
        tf.string_split(["ab"], result_type="Dense")


def test_strings_split_v1(sess):
    _check_sparse(sess.run(tf.strings.split(["a b", "c"])),
                  [[0, 0], [0, 1], [1, 0]], ["a", "b", "c"], [2, 2])
    _check_sparse(sess.run(tf.strings.split(["a  b ", "c"], sep=" ")),
                  [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0]], ["a", "", "b", "", "c"], [2, 4])
    _check_sparse(sess.run(tf.strings.split(["a<>b<>", "c"], sep="<>")),
                  [[0, 0], [0, 1], [0, 2], [1, 0]], ["a", "b", "", "c"], [2, 3])
    _check_sparse(sess.run(tf.strings.split(["a,b,c,d"], sep=",", maxsplit=2)),
                  [[0, 0], [0, 1], [0, 2]], ["a", "b", "c,d"], [1, 3])
    _check_sparse(sess.run(tf.strings.split(["", "a,,b", " x  y "])),
                  [[1, 0], [2, 0], [2, 1]], ["a,,b", "x", "y"], [3, 2])


# --- substr ---------------------------------------------------------------------------------
def test_substr(sess):
    t = tf.substr(["hello", "world"], 1, 3)
    assert t.shape.as_list() == [2]
    np.testing.assert_array_equal(sess.run(t), _b("ell", "orl"))
    np.testing.assert_array_equal(sess.run(tf.substr(["hello", "world"], [1, 2], [3, 1])),
                                  _b("ell", "r"))
    np.testing.assert_array_equal(sess.run(tf.strings.substr(["hello", "wo"], 1, 10)),
                                  _b("ello", "o"))
    np.testing.assert_array_equal(sess.run(tf.substr(["hello", "wo"], -2, 2)), _b("lo", "wo"))
    np.testing.assert_array_equal(sess.run(tf.substr(["hello", "wo"], 2, 2)), _b("ll", ""))
    np.testing.assert_array_equal(sess.run(tf.substr(["hello", "wo"], 0, -1)),
                                  _b("hello", "wo"))
    np.testing.assert_array_equal(sess.run(tf.substr("hello", [1, 2], [1, 2])), _b("e", "ll"))
    np.testing.assert_array_equal(sess.run(tf.substr(["hello"], np.int64(1), np.int64(2))),
                                  _b("el"))


def test_substr_broadcast_and_shapes(sess):
    t = tf.substr([["hello"], ["wo"]], [1, 0], [1, 2])
    assert t.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(sess.run(t), np.array([[b"e", b"he"], [b"o", b"wo"]],
                                                        dtype=object))
    assert tf.substr(tf.placeholder(tf.string), [1, 0], [1, 2]).shape.ndims is None
    with pytest.raises(ValueError, match=r"pos and len shapes must match: \[2\] vs. \[3\]"):
        tf.substr("hello", [1, 2], [1, 2, 3])


def test_substr_utf8_and_errors(sess):
    np.testing.assert_array_equal(
        sess.run(tf.substr(["h\u00e9llo"], 1, 2, unit="UTF8_CHAR")), _b("\u00e9l"))
    np.testing.assert_array_equal(
        sess.run(tf.substr(["h\u00e9llo"], -3, 2, unit="UTF8_CHAR")), _b("ll"))
    with pytest.raises(IAE, match="pos 3 out of range for string b'wo' at index 1"):
        sess.run(tf.substr(["hello", "wo"], 3, 1))
    with pytest.raises(IAE, match="pos -3 out of range for string b'wo' at index 1"):
        sess.run(tf.substr(["hello", "wo"], -3, 2))
    with pytest.raises(IAE, match="pos 9 out of range for string at index 0"):
        sess.run(tf.substr(["h\u00e9llo"], 9, 2, unit="UTF8_CHAR"))


# --- string_to_number -------------------------------------------------------------------------
def test_string_to_number(sess):
    f = sess.run(tf.string_to_number(["1.5", "-2", " 3", "1e3", "inf", "1e40", "0x10"]))
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, np.array([1.5, -2, 3, 1000, np.inf, np.inf, 16],
                                              np.float32))
    i = sess.run(tf.strings.to_number(["12", "-3", "+5"], tf.int32))
    assert i.dtype == np.int32 and i.tolist() == [12, -3, 5]
    assert sess.run(tf.string_to_number(["12"], tf.int64)).dtype == np.int64
    d = sess.run(tf.string_to_number(["1.25"], tf.float64))
    assert d.dtype == np.float64 and d[0] == 1.25
    assert sess.run(tf.string_to_number("12 ")) == 12.0
    assert sess.run(tf.string_to_number(input=[["7"]], out_type=tf.uint64)).tolist() == [[7]]
    assert tf.string_to_number(tf.placeholder(tf.string, [None, 2])).shape.as_list() == \
        [None, 2]


@pytest.mark.parametrize("text,out_type", [
    ("abc", tf.float32), ("1.5", tf.int32), ("99999999999", tf.int32), ("", tf.float32),
    ("1.5 x", tf.float32), ("1_0", tf.float32), ("0x1f", tf.int32), ("-1", tf.uint32),
])
def test_string_to_number_errors(sess, text, out_type):
    with pytest.raises(IAE, match="StringToNumberOp could not correctly convert string: %s(\n|$)"
                       % text.replace(".", r"\.").replace("+", r"\+")):
        sess.run(tf.string_to_number([text], out_type))


def test_string_to_number_type_check(graph):
    with pytest.raises(TypeError, match="DataType int8 not in list of allowed values"):
        tf.string_to_number(["1"], tf.int8)


# --- as_string --------------------------------------------------------------------------------
FLOATS = [1.5, -0.000125, 1e20]


@pytest.mark.parametrize("kwargs,expected", [
    ({}, ["1.500000", "-0.000125", "100000002004087734272.000000"]),
    ({"precision": 2}, ["1.50", "-0.00", "100000002004087734272.00"]),
    ({"scientific": True}, ["1.500000e+00", "-1.250000e-04", "1.000000e+20"]),
    ({"shortest": True}, ["1.5", "-0.000125", "1e+20"]),
    ({"width": 12}, ["    1.500000", "   -0.000125", "100000002004087734272.000000"]),
    ({"width": 12, "fill": "0"}, ["00001.500000", "-0000.000125",
                                  "100000002004087734272.000000"]),
    ({"precision": 3, "scientific": True}, ["1.500e+00", "-1.250e-04", "1.000e+20"]),
    ({"width": 10, "fill": "-"}, ["1.500000  ", "-0.000125 ", "100000002004087734272.000000"]),
])
def test_as_string_float32(sess, kwargs, expected):
    out = sess.run(tf.as_string(tf.constant(FLOATS, tf.float32), **kwargs))
    np.testing.assert_array_equal(out, _b(*expected))


def test_as_string_other_types(sess):
    assert sess.run(tf.as_string([1, -20])).tolist() == [b"1", b"-20"]
    assert sess.run(tf.as_string([1, -20], width=5)).tolist() == [b"    1", b"  -20"]
    assert sess.run(tf.as_string([1, -20], width=5, fill="0")).tolist() == [b"00001", b"-0020"]
    assert sess.run(tf.as_string([True, False])).tolist() == [b"true", b"false"]
    assert sess.run(tf.as_string(tf.constant([1.5 + 2j], tf.complex64))).tolist() == \
        [b"(1.500000,2.000000)"]
    assert sess.run(tf.as_string(["ab"])).tolist() == [b"ab"]
    assert sess.run(tf.as_string(tf.constant([0.1, 1 / 3.0], tf.float64))).tolist() == \
        [b"0.100000", b"0.333333"]
    assert sess.run(tf.as_string(tf.constant([0.1], tf.float16))).tolist() == [b"0.099976"]
    assert sess.run(tf.as_string(tf.constant([0.1], tf.float64), shortest=True)).tolist() == \
        [b"0.1"]
    assert sess.run(tf.as_string(tf.constant([np.nan, np.inf, -np.inf]))).tolist() == \
        [b"nan", b"inf", b"-inf"]
    assert sess.run(tf.as_string(tf.constant([2 ** 63 - 1], tf.int64))).tolist() == \
        [b"9223372036854775807"]
    assert sess.run(tf.as_string(tf.constant([1.5]), width=8, fill=" ")).tolist() == \
        [b" 1.500000"]
    t = tf.as_string(tf.placeholder(tf.float32, [None, 3]))
    assert t.shape.as_list() == [None, 3] and t.dtype == tf.string


@pytest.mark.parametrize("dtype", [tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8,
                                   tf.uint16, tf.uint32, tf.uint64])
@pytest.mark.parametrize("width,fill", [(-1, ""), (6, "0"), (6, "-"), (3, "+"), (-1, " "),
                                        (22, "#")])
def test_as_string_of_integers_is_printf_d(sess, dtype, width, fill):
    # integers are formatted straight to bytes: the same text as the str format encoded,
    # at both ends of each type's range, with each flag, and in the input's shape
    fmt = "%" + fill + (str(width) if width > -1 else "") + "d"
    info = np.iinfo(dtype.as_numpy_dtype)
    rs = np.random.RandomState(dtype.size)
    drawn = rs.randint(info.min, info.max, 7, dtype=dtype.as_numpy_dtype).tolist()
    value = np.array([info.min, info.max, 0, 7, info.max - 1] + drawn,
                     dtype.as_numpy_dtype).reshape(3, 4)
    x = tf.placeholder(dtype, [None, 4])
    got = sess.run(tf.as_string(x, width=width, fill=fill), {x: value})
    assert got.shape == (3, 4) and got.dtype == object
    assert got.tolist() == [[(fmt % v).encode() for v in row] for row in value.tolist()]
    assert sess.run(tf.as_string(x), {x: value[:0]}).shape == (0, 4)


@pytest.mark.parametrize("value,kwargs,fragment", [
    ([1.5], {"width": 12, "fill": "x"}, 'Fill argument not supported: "x"'),
    ([1.5], {"fill": "ab"}, "Fill string must be one or fewer characters"),
    ([1], {"precision": 2}, "precision not supported for datatype int32"),
    ([1.0], {"shortest": True, "scientific": True}, "Cannot select both scientific and shortest"),
    ([1], {"scientific": True}, "scientific and shortest format not supported for datatype int32"),
])
def test_as_string_errors(sess, value, kwargs, fragment):
    with pytest.raises(IAE) as e:
        sess.run(tf.as_string(value, **kwargs))
    assert fragment in str(e.value)


# --- join, length, reduce_join, format ----------------------------------------------------------
def test_string_join_and_length(sess):
    t = tf.string_join(["a", ["b", "c"]], separator="-")
    assert t.shape.as_list() == [2]
    assert sess.run(t).tolist() == [b"a-b", b"a-c"]
    assert sess.run(tf.strings.join([["x", "y"], ["1", "2"]])).tolist() == [b"x1", b"y2"]
    assert sess.run(tf.strings.join(["x", "y"])) == b"xy"
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.string_join([["a", "b", "c"], ["b", "c"]])
    n = tf.strings.length(["ab", "h\u00e9llo"])
    assert n.dtype == tf.int32
    assert sess.run(n).tolist() == [2, 6]
    assert sess.run(tf.strings.length(["ab", "h\u00e9llo"], unit="UTF8_CHAR")).tolist() == [2, 5]


def test_reduce_join(sess):
    x = [["a", "b"], ["c", "d"]]
    assert sess.run(tf.strings.reduce_join(x, axis=1, separator=",")).tolist() == \
        [b"a,b", b"c,d"]
    assert sess.run(tf.reduce_join(x)) == b"abcd"
    t = tf.strings.reduce_join(x, axis=0, keep_dims=True)
    assert t.shape.as_list() == [1, 2]
    assert sess.run(t).tolist() == [[b"ac", b"bd"]]
    assert sess.run(tf.strings.reduce_join(x, axis=[])).tolist() == [[b"a", b"b"], [b"c", b"d"]]
    assert sess.run(tf.strings.reduce_join(tf.zeros([0, 2], tf.string), axis=0)).tolist() == \
        [b"", b""]


def test_strings_format(sess):
    t = tf.strings.format("x={} y={}", [tf.constant([1, 2]), 3])
    assert t.shape.as_list() == [] and sess.run(t) == b"x=[1 2] y=3"
    assert sess.run(tf.strings.format("v: {}", tf.constant(1.5))) == b"v: 1.5"
    with pytest.raises(ValueError, match="placeholder"):
        tf.strings.format("{} {}", [1])


# --- files ------------------------------------------------------------------------------------
def test_write_then_read_file(sess, tmp_path):
    path = str(tmp_path / "new" / "sub" / "f.bin")
    w = tf.write_file(path, b"hello\x00")
    assert isinstance(w, tf.Operation) and w.type == "WriteFile"
    assert sess.run(w) is None
    with open(path, "rb") as f:
        assert f.read() == b"hello\x00"
    r = tf.read_file(path)
    assert r.shape.as_list() == [] and r.dtype == tf.string
    assert sess.run(r) == b"hello\x00"
    assert sess.run(tf.io.read_file(tf.constant(path))) == b"hello\x00"


def test_read_file_errors(sess, tmp_path, graph):
    with pytest.raises(tf.errors.NotFoundError, match="; No such file or directory"):
        sess.run(tf.read_file(str(tmp_path / "missing")))
    with pytest.raises(tf.errors.FailedPreconditionError, match="; Is a directory"):
        sess.run(tf.read_file(str(tmp_path)))
    with pytest.raises(ValueError):
        tf.read_file(["a"])
    with pytest.raises(ValueError):
        tf.write_file("a", ["b"])


def test_file_ops_check_their_scalars_at_run_time(sess, tmp_path):
    # TF 2.21's messages for fed values of the wrong shape
    name, contents = tf.placeholder(tf.string), tf.placeholder(tf.string)
    path = str(tmp_path / "f")
    cases = [(tf.read_file(name), {name: [path, path]},
              "Input filename tensor must be scalar, but had shape: [2]"),
             (tf.write_file(name, "x"), {name: [path]},
              "Input filename tensor must be scalar, but had shape: [1]"),
             (tf.write_file(path, contents), {contents: ["x"]},
              "Contents tensor must be scalar, but had shape: [1]"),
             (tf.matching_files(name), {name: [[path]]},
              "Input patterns tensor must be scalar or vector, but had shape: [1,1]")]
    for fetch, feed, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(fetch, feed)
        assert info.value.message.split("\n")[0] == message
    assert not os.path.exists(path)


def test_write_file_under_a_file(sess, tmp_path):
    blocker = str(tmp_path / "f")
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(tf.errors.FailedPreconditionError) as info:   # open fails: ENOTDIR
        sess.run(tf.write_file(os.path.join(blocker, "g"), "x"))
    assert info.value.message.split("\n")[0] == "%s/g; Not a directory" % blocker
    with pytest.raises(tf.errors.FailedPreconditionError) as info:   # making g/ fails
        sess.run(tf.write_file(os.path.join(blocker, "g", "h"), "x"))
    assert info.value.message.split("\n")[0] == "%s is not a directory" % blocker


def test_matching_files_relative_to_the_working_directory(sess, tmp_path, monkeypatch):
    # as TF: a pattern whose first component has a wildcard is searched from "."
    (tmp_path / "zz_a").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    assert sess.run(tf.matching_files("zz*")).tolist() == [b"./zz_a"]
    assert sess.run(tf.matching_files("zz_a")).tolist() == [b"zz_a"]


def test_matching_files(sess, tmp_path):
    for n in ("b.txt", "a.txt", "c.csv", ".hidden.txt"):
        (tmp_path / n).write_bytes(b"")
    d = str(tmp_path)
    t = tf.matching_files(os.path.join(d, "*.txt"))
    assert t.shape.as_list() == [None]
    names = [os.fsdecode(os.path.basename(p)) for p in sess.run(t)]
    assert names == [".hidden.txt", "a.txt", "b.txt"]
    got = sess.run(tf.io.matching_files([os.path.join(d, "c*"), os.path.join(d, "a*")]))
    assert [os.path.basename(p) for p in got] == [b"a.txt", b"c.csv"]
    assert sess.run(tf.matching_files(os.path.join(d, "zz*"))).shape == (0,)
    assert [os.path.basename(p) for p in sess.run(tf.matching_files(
        os.path.join(d, "[ab].txt")))] == [b"a.txt", b"b.txt"]
    assert sess.run(tf.matching_files(d)).tolist() == [d.encode()]


# --- string scalars out of string tensors and back into them ----------------------------------
# A string tensor's run-time value is an object array of bytes, 0-d for a scalar
# (runtime/values.py). Slicing, gather and unstack used to hand string kernels bare bytes
# (AttributeError: 'bytes' object has no attribute 'reshape'), and stack/concat of string
# scalars an object array of 0-d arrays, whose pointers reduce_join read as bytes. The
# values are TF 2.21's.
def test_string_ops_on_scalars_taken_out_of_a_vector(sess):
    v = tf.constant(["1.5", "2", "x y"])
    got = sess.run({
        "slice": tf.string_to_number(v[1]),
        "gather": tf.string_to_number(tf.gather(v, 1)),
        "unstack": tf.string_to_number(tf.unstack(v)[0]),
        "upper": tf.strings.upper(v[2]),
        "length": tf.strings.length(v[2]),
        "regex": tf.regex_replace(v[2], "x", "z"),
        "bucket": tf.string_to_hash_bucket_fast(v[2], 10),
        "base64": tf.encode_base64(v[2]),
        "csv": tf.decode_csv(v[1], [[1.0]])[0],
        "join": tf.strings.join([v[2], v[0]], "-"),
        "strip": tf.strings.strip(v[2]),
        "substr": tf.substr(v[2], 2, 1),
        "split": tf.string_split([v[2]]).values,
        "while": tf.while_loop(lambda i, s: i < 3,
                               lambda i, s: (i + 1, tf.strings.join([s, v[i]])),
                               [0, tf.constant("")])[1],
    })
    split = got.pop("split")
    assert split.dtype == object and split.tolist() == [b"x", b"y"]
    assert got == {"slice": 2.0, "gather": 2.0, "unstack": 1.5, "upper": b"X Y", "length": 3,
                   "regex": b"z y", "bucket": 9, "base64": b"eCB5", "csv": 2.0,
                   "join": b"x y-1.5", "strip": b"x y", "substr": b"y", "while": b"1.52x y"}


def test_packing_string_scalars(sess):
    c = tf.constant("a b")
    line = tf.placeholder_with_default(c, [])  # a run-time value, as a parsed text line
    for s in (c, line):
        stacked = sess.run(tf.stack([s, s]))
        assert stacked.dtype == object and stacked.tolist() == [b"a b", b"a b"]
        joined = sess.run(tf.concat([[s], [s]], 0))
        assert joined.dtype == object and joined.tolist() == [b"a b", b"a b"]
        assert sess.run(tf.reduce_join(tf.stack([s, s]))) == b"a ba b"
        assert sess.run(tf.string_split([s], " ").values).tolist() == [b"a", b"b"]
        assert sess.run(tf.tile(tf.stack([s]), [3])).tolist() == [b"a b"] * 3
        assert sess.run(tf.reduce_join(tf.dynamic_stitch([[1], [0]], [[s], ["x"]]))) == \
            b"xa b"


def test_string_scalars_keep_trailing_nuls(sess):
    """NumPy's fixed-width |S arrays drop trailing NULs: no string value passes through one."""
    v = tf.constant([b"a\x00", b"b", b"c\x00\x00"])
    assert sess.run(tf.stack([v[2], v[0]])).tolist() == [b"c\x00\x00", b"a\x00"]
    assert sess.run(tf.strings.join([v, v[0]], "\x00")).tolist() == \
        [b"a\x00\x00a\x00", b"b\x00a\x00", b"c\x00\x00\x00a\x00"]
    with pytest.raises(IAE, match="StringToNumberOp could not correctly convert string: 1"):
        sess.run(tf.string_to_number([b"1\x00", b"2"], tf.int32))
    with pytest.raises(IAE, match="StringToNumberOp could not correctly convert string: 1.5"):
        sess.run(tf.string_to_number(b"1.5\x00"))
    with pytest.raises(IAE, match="Field 0 in record 0 is not a valid int32: 1"):
        sess.run(tf.decode_csv([b"1\x00,2", b"3,4"], [[0], [0]]))
    with pytest.raises(IAE, match="Field 0 in record 0 is not a valid float: 1"):
        sess.run(tf.decode_csv([b"1\x00,2", b"3,4"], [[0.0], [0]]))


def test_strings_format_escapes_strings_as_tf(sess):
    """tf.strings.format (and tf.print) quote string elements with absl's Utf8SafeCEscape:
    C escapes for quotes, backslash and control bytes, bytes >= 0x80 as they are."""
    got = [sess.run(tf.strings.format("{}", tf.constant(v))) for v in (
        [b"a\x00"], [b"\n\t\r"], [b"\x01\x7f"], [b"\"q'\\"], ["\u00e9".encode()], [b"\xff"],
        b"sc\x00")]
    assert got == [b'["a\\000"]', b'["\\n\\t\\r"]', b'["\\001\\177"]', b'["\\"q\\\'\\\\"]',
                   b'["\xc3\xa9"]', b'["\xff"]', b'"sc\\000"']


def test_kernels_reading_buffers_take_bytes_only():
    """bytes.join, base64 and the hashes read any object with a buffer, an object array's
    raw pointers too: the string kernels hand them elements through string_items, which
    refuses anything but bytes."""
    from tensorweave.runtime.values import string_items
    nested = np.empty(2, dtype=object)
    nested[0], nested[1] = np.array(b"x", dtype=object), b"y"
    with pytest.raises(tf.errors.InternalError, match="holds a ndarray, not bytes"):
        string_items(nested)
    assert string_items(_b("p", "q\x00").reshape(2, 1)) == [b"p", b"q\x00"]


def test_reduce_join_reduces_the_axes_in_the_order_given(sess):
    """The first listed axis varies fastest in the join (TF); all axes (None) is row-major
    order; a repeated or out-of-range axis is TF's error."""
    m = tf.constant([["a", "b", "c"], ["d", "e", "f"]])
    assert sess.run(tf.reduce_join(m, axis=[0, 1], separator=",")) == b"a,d,b,e,c,f"
    assert sess.run(tf.reduce_join(m, axis=[1, 0], separator=",")) == b"a,b,c,d,e,f"
    assert sess.run(tf.reduce_join(m, separator=",")) == b"a,b,c,d,e,f"
    cube = tf.reshape(tf.constant([str(i) for i in range(8)]), [2, 2, 2])
    assert sess.run(tf.reduce_join(cube, axis=[0, 2], separator=".")).tolist() == \
        [b"0.4.1.5", b"2.6.3.7"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate reduction dimension 0"):
        sess.run(tf.reduce_join(m, axis=[0, 0]))
    with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2"):
        tf.reduce_join(m, axis=2)


def test_regex_replace_follows_re2_on_empty_matches(sess):
    """RE2 (TF) allows no empty match where the previous match ended."""
    got = sess.run(tf.strings.regex_replace(["aaa", "abbc", "xy"], "a*", "-"))
    assert got.tolist() == [b"-", b"-b-b-c-", b"-x-y-"]
    assert sess.run(tf.strings.regex_replace("abbc", "b*", "-")) == b"-a-c-"
    assert sess.run(tf.strings.regex_replace("aXbX", "X", "", replace_global=False)) == b"abX"


def test_as_string_does_not_zero_pad_non_finite_values(sess):
    """As C's printf: the "0" flag pads numbers, not inf or nan."""
    got = sess.run(tf.as_string([np.nan, -np.inf, 1.5], width=6, fill="0", precision=1))
    assert got.tolist() == [b"   nan", b"  -inf", b"0001.5"]


def test_strings_split_of_a_scalar_and_of_a_matrix(sess):
    """A scalar splits as a vector of one string; the tokens of a [2, 2] input are the
    last dimension of a [2, 2, max] SparseTensor (TF's ragged split, made sparse)."""
    one = sess.run(tf.strings.split(tf.constant("a b c")))
    assert one.indices.tolist() == [[0, 0], [0, 1], [0, 2]] and one.dense_shape.tolist() == \
        [1, 3]
    grid = tf.strings.split(tf.constant([["a b", "c"], ["d e f", ""]]))
    assert grid.indices.shape.as_list() == [None, 3]
    got = sess.run(grid)
    assert got.indices.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1],
                                    [1, 0, 2]]
    assert got.values.tolist() == [b"a", b"b", b"c", b"d", b"e", b"f"]
    assert got.dense_shape.tolist() == [2, 2, 3]


def test_substr_utf8_counts_characters_from_their_first_bytes(sess):
    """TF starts a character at every byte that is not a continuation byte, so the two
    bytes of a truncated three-byte sequence are one character."""
    def sub(text, pos, n):
        return sess.run(tf.strings.substr(text, pos, n, unit="UTF8_CHAR"))
    assert sub("h\u00e9llo", 1, 3) == "\u00e9ll".encode()
    assert sub("h\u00e9llo", -2, 5) == b"lo"
    assert sub(b"\xe2\x82bc", 0, 1) == b"\xe2\x82"
    assert sub(b"a\xe2\x82bc", 1, 2) == b"\xe2\x82b"


# --- probe fixes ---------------------------------------------------------------------------
def test_strings_split_maxsplit_as_tf(sess):
    # TF's SplitV2: at runs of whitespace, once maxsplit tokens are taken the rest of the
    # string is one more token even when empty; maxsplit=0 leaves each string whole
    strings = ["a b c d", "e,f,,g", " x  y ", "", "   "]
    _check_sparse(sess.run(tf.strings.split(strings, maxsplit=1)),
                  [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]],
                  ["a", "b c d", "e,f,,g", "", "x", "y "], [5, 2])
    _check_sparse(sess.run(tf.strings.split(strings, maxsplit=2)),
                  [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1], [2, 2]],
                  ["a", "b", "c d", "e,f,,g", "x", "y", ""], [5, 3])
    _check_sparse(sess.run(tf.strings.split(strings, maxsplit=0)),
                  [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]],
                  ["a b c d", "e,f,,g", " x  y ", "", "   "], [5, 1])
    _check_sparse(sess.run(tf.strings.split(strings, sep=",", maxsplit=0)),
                  [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]],
                  ["a b c d", "e,f,,g", " x  y ", "", "   "], [5, 1])
    # with a separator it is Python's split
    _check_sparse(sess.run(tf.strings.split(["a,", "b"], sep=",", maxsplit=1)),
                  [[0, 0], [0, 1], [1, 0]], ["a", "", "b"], [2, 2])


def test_string_join_of_no_tensors(sess):
    out = tf.strings.join([])
    assert out.shape.as_list() == [] and out.dtype == tf.string
    assert sess.run(out) == b""
    assert sess.run(tf.strings.join([], separator="-")) == b""


@pytest.mark.parametrize("build", [
    lambda x: tf.strings.join([tf.constant(["a"]), x]),
    lambda x: tf.strings.length(x),
    lambda x: tf.strings.substr(x, 0, 1),
    lambda x: tf.strings.to_number(x),
    lambda x: tf.strings.reduce_join(x),
    lambda x: tf.strings.lower(x),
    lambda x: tf.strings.upper(x),
    lambda x: tf.strings.strip(x),
    lambda x: tf.strings.regex_full_match(x, "a"),
    lambda x: tf.strings.regex_full_match(tf.constant(["a"]), x[0]),
    lambda x: tf.strings.regex_replace(x, "a", "b"),
    lambda x: tf.strings.regex_replace(tf.constant(["a"]), x[0], "b"),
    lambda x: tf.strings.unicode_transcode(x, "UTF-8", "UTF-16-BE"),
    lambda x: tf.strings.unicode_decode(x[0], "UTF-8"),
    lambda x: tf.strings.unicode_encode(tf.cast(x, tf.float64), "UTF-8"),
    lambda x: tf.strings.to_hash_bucket_fast(x, 3),
    lambda x: tf.strings.to_hash_bucket(x, 3),
    lambda x: tf.strings.to_hash_bucket_strong(x, 3, [1, 2]),
    lambda x: tf.strings.unsorted_segment_join(x, [0], 1),
    lambda x: tf.strings.bytes_split(x[0]),
    lambda x: tf.strings.reduce_join(tf.constant(["a"]), tf.cast(x[0], tf.float32)),
])
def test_a_tensor_of_another_type_is_a_type_error(build):
    # TF's op wrappers (op_def_library) raise TypeError, not convert_to_tensor's ValueError
    with pytest.raises(TypeError, match="does not match"):
        build(tf.constant([1]))
