"""Feeds are converted as TF1's Session.run converts them, with its error classes (issue
18); expectations checked against TensorFlow 2.21's tf.compat.v1 Session."""
import numpy as np
import pytest

import tensorweave as tf

INCOMPATIBLE = ("Type of feed value {v} with type <class '{t}'> is not compatible with "
                "Tensor type <class '{d}'>. Try explicitly setting the type of the feed "
                "tensor to a larger type (e.g. int64).")


def _run(dtype, value, shape=(), consume=False):
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(dtype, shape)
        out = tf.strings.length(p) if consume else tf.identity(p)
        with tf.Session(graph=g) as sess:
            return sess.run(out, {p: value})


@pytest.mark.parametrize("value, typ, dtype, np_name", [
    (3, "int", tf.string, "object"),
    (True, "bool", tf.string, "object"),
    (300, "int", tf.int8, "numpy.int8"),
    (-129, "int", tf.int8, "numpy.int8"),
    (-1, "int", tf.uint8, "numpy.uint8"),
    (-1, "int", tf.uint64, "numpy.uint64"),
    (2, "int", tf.bool, "numpy.bool"),
])
def test_python_int_the_dtype_cannot_hold_is_a_type_error(value, typ, dtype, np_name):
    msg = INCOMPATIBLE.format(v=value, t=typ, d=np_name)
    with pytest.raises(TypeError) as e:
        _run(dtype, value)
    assert str(e.value) == msg


@pytest.mark.parametrize("dtype, value, expected", [
    (tf.int8, 127, np.int8(127)),
    (tf.int8, -128, np.int8(-128)),
    (tf.bool, True, np.True_),
    (tf.bool, 1, np.True_),
    (tf.int32, True, np.int32(1)),
    (tf.float32, 16777217, np.float32(16777216.0)),  # equal after rounding: accepted
    (tf.int8, np.int64(300), np.int8(44)),  # NumPy ints wrap, as in TF
])
def test_python_ints_that_fit_are_converted(dtype, value, expected):
    got = _run(dtype, value)
    assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize("value", [
    np.array([1.7, -2.5, 3.0]), [1.7, -2.5, 3.0], np.array([1.7, -2.5, 3.0], np.float32)])
def test_floats_fed_to_an_int32_tensor_are_truncated(value):
    got = _run(tf.int32, value, [None])
    assert got.dtype == np.int32 and got.tolist() == [1, -2, 3]


def test_out_of_range_values_wrap_as_in_tf():
    got = _run(tf.int32, [300, 2 ** 40], [None])
    assert got.dtype == np.int32 and got.tolist() == [300, 0]
    assert _run(tf.int32, np.array([1, 2 ** 40]), [None]).tolist() == [1, 0]
    assert _run(tf.float32, 1e40) == np.float32(np.inf)
    assert _run(tf.bool, np.array([0.0, 2.5]), [None]).tolist() == [False, True]


@pytest.mark.parametrize("dtype, value, cls, fragment", [
    (tf.float32, {"a": 1}, TypeError, "float() argument must be a string or a real number, "
     "not 'dict'"),
    (tf.int32, {"a": 1}, TypeError, "int() argument must be a string, a bytes-like object "
     "or a real number, not 'dict'"),
    (tf.int8, None, TypeError, "not 'NoneType'"),
    (tf.float32, {1.0}, TypeError, "not 'set'"),
    (tf.float32, "abc", ValueError, "could not convert string to float"),
    (tf.float32, [1, [2]], ValueError, "inhomogeneous"),
])
def test_unconvertible_values_raise_numpys_error_class(dtype, value, cls, fragment):
    with pytest.raises(cls) as e:
        _run(dtype, value)
    assert type(e.value) is cls and fragment in str(e.value)


def test_convertible_odd_values_as_in_tf():
    assert np.isnan(_run(tf.float32, None))
    assert _run(tf.float32, "1.5") == np.float32(1.5)
    assert _run(tf.int32, ["1", "2"], [None]).tolist() == [1, 2]


@pytest.mark.parametrize("value, type_name", [
    (1.5, "float"), (None, "NoneType"), (np.int64(3), "numpy.int64"), ({"a": 1}, "dict"),
])
def test_a_string_tensor_fed_a_non_string_is_an_internal_error(value, type_name):
    # TF: InternalError "Unsupported object type float" when converting the feed
    for consume in (False, True):
        with pytest.raises(tf.errors.InternalError,
                           match="^Unsupported object type %s$" % type_name):
            _run(tf.string, value, consume=consume)


@pytest.mark.parametrize("value, type_name", [
    ([1, 2], "int"), (["a", 1], "int"), (np.array([1, 2]), "int"), ([1.5], "float"),
    (np.array([b"a", 1.5], dtype=object), "float"),
])
def test_a_string_vector_with_a_non_string_is_an_internal_error(value, type_name):
    with pytest.raises(tf.errors.InternalError, match="Unsupported object type %s"
                       % type_name):
        _run(tf.string, value, [None], consume=True)


def test_string_feeds_are_bytes_and_the_callers_array_is_untouched():
    value = np.array([["a", b"b"], ["cd", "e"]], dtype=object)
    got = _run(tf.string, value, [None, 2])
    assert got.dtype == object and got.tolist() == [[b"a", b"b"], [b"cd", b"e"]]
    assert value.tolist() == [["a", b"b"], ["cd", "e"]]
    assert _run(tf.string, "x") == b"x"
    assert _run(tf.string, np.str_("ab"), consume=True) == 2
    assert _run(tf.string, np.array(["a", "bc"]), [None], consume=True).tolist() == [1, 2]
    assert _run(tf.string, np.array([b"a", b"bc"]), [None], consume=True).tolist() == [1, 2]


@pytest.mark.parametrize("value, in_bulk", [
    (np.array(["w1", "", "abc", "a\x00b", "x" * 40]), True),   # ASCII
    (np.array([["ab", "c"], ["", "def"]]), True),               # any rank
    (np.array([["ab", "c"], ["", "def"]]).T, True),             # not contiguous
    (np.array("scalar"), True),                                 # rank 0
    (np.array([], dtype="U3"), True),                           # empty
    (np.array(["héllo", "wörld", "日本"]), False),               # UTF-8: one by one
    (np.array(["big", "endian"], dtype=">U6"), False),          # not native
    (np.array([b"a", b"", b"b\x00c"]), True),                   # bytes
])
def test_fixed_width_string_arrays_are_fed_as_their_elements_utf8_encoded(value, in_bulk):
    from tensorweave.runtime.values import _fixed_width_strings, string_array
    assert (_fixed_width_strings(value) is not None) is in_bulk
    got = string_array(value)
    want = [x.encode("utf-8") if isinstance(x, str) else x
            for x in value.reshape(-1).tolist()]
    assert got.dtype == object and got.shape == value.shape
    assert all(type(x) is bytes for x in got.reshape(-1).tolist())
    assert got.reshape(-1).tolist() == want
    shape = [None] * value.ndim
    fed = _run(tf.string, value, shape, consume=True)
    np.testing.assert_array_equal(fed, np.array([len(x) for x in want]).reshape(value.shape))


def test_a_feed_key_from_another_graph_is_a_type_error():
    other = tf.Graph()
    with other.as_default():
        foreign = tf.placeholder(tf.float32, [], name="Placeholder")
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.float32, [])
        with tf.Session(graph=g) as sess:
            with pytest.raises(TypeError) as e:
                sess.run(p, {foreign: 1.0})
    assert str(e.value) == ('Cannot interpret feed_dict key as Tensor: Tensor Tensor('
                            '"Placeholder:0", shape=(), dtype=float32) is not an element of '
                            'this graph.')


def test_the_fast_path_passes_the_callers_array():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.float32, [None])
        from tensorweave.runtime.session import _feed_value
    a = np.arange(3, dtype=np.float32)
    assert _feed_value(p, a) is a
    assert _feed_value(p, a.astype(np.float64)).dtype == np.float32


def test_a_feed_that_is_a_tensor_is_a_type_error():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.float32, [])
        c = tf.constant(1.0)
        with tf.Session(graph=g) as sess:
            with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
                sess.run(p, {p: c})
