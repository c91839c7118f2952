"""How Dataset.from_generator converts what the generator yields (data/generators.py):
with NumPy casts when a component's rank is known or the element nests several
components (1.5 -> 1 for int64, "5" -> 5, 2**40 wraps into int32), with
convert_to_tensor's checks when the element is one component of unknown rank. The
values, error classes and messages below are TensorFlow 2.21's (compat.v1, graph mode)
for the same programs, with `output_signature` and with `output_types`/`output_shapes`
alike."""
import re

import numpy as np
import pytest

import tensorweave as tf


def _first(sess, value, spec, use_signature):
    """The first element of a generator yielding `value` twice, declared as `spec`."""
    def gen():
        yield value
        yield value
    if use_signature:
        ds = tf.data.Dataset.from_generator(gen, output_signature=spec)
    else:
        ds = tf.data.Dataset.from_generator(gen, tf.nest.map_structure(
            lambda s: s.dtype, spec), tf.nest.map_structure(lambda s: s.shape, spec))
    return sess.run(tf.data.make_one_shot_iterator(ds).get_next())


def _spec(dtype, shape=()):
    return tf.TensorSpec(shape, dtype)


CONVERTED = [  # (yielded value, spec, value read, its NumPy dtype or bytes)
    (1.5, _spec(tf.int64), 1, np.int64),
    (2.0, _spec(tf.int64), 2, np.int64),
    (np.float32(1.5), _spec(tf.int64), 1, np.int64),
    (3, _spec(tf.float32), 3.0, np.float32),
    (np.int64(3), _spec(tf.float32), 3.0, np.float32),
    ("5", _spec(tf.int64), 5, np.int64),
    (b"7", _spec(tf.int64), 7, np.int64),
    ("1.5", _spec(tf.float32), 1.5, np.float32),
    (True, _spec(tf.int64), 1, np.int64),
    (1, _spec(tf.bool), True, np.bool_),
    (2 ** 40, _spec(tf.int32), 0, np.int32),
    (-1, _spec(tf.uint8), 255, np.uint8),
    (1.5, _spec(tf.int32), 1, np.int32),
    (1.5, _spec(tf.complex64), 1.5 + 0j, np.complex64),
    (1, _spec(tf.float16), 1.0, np.float16),
    ([1.5, 2.5], _spec(tf.int64, [2]), [1, 2], np.int64),
    (np.array([1.5]), _spec(tf.int64, [1]), [1], np.int64),
    (np.array([1], np.int32), _spec(tf.int64, [1]), [1], np.int64),
    (["a", b"b"], _spec(tf.string, [2]), [b"a", b"b"], object),
    # one component of unknown rank: convert_to_tensor's rules
    (np.float64(1.5), _spec(tf.int64, None), 1, np.int64),
    (np.array([1.5]), _spec(tf.int64, None), [1], np.int64),
    ([1, 2], _spec(tf.int64, None), [1, 2], np.int64),
    (True, _spec(tf.int64, None), 1, np.int64),
    (3, _spec(tf.float32, None), 3.0, np.float32),
    ("x", _spec(tf.string, None), b"x", bytes),
]


@pytest.mark.parametrize("use_signature", [True, False])
@pytest.mark.parametrize("value,spec,expected,np_dtype", CONVERTED)
def test_yielded_components_convert_as_tf(sess, value, spec, expected, np_dtype,
                                          use_signature):
    got = _first(sess, value, spec, use_signature)
    # a string scalar is read as bytes (as TF's Session.run gives it)
    assert (type(got) if isinstance(got, bytes) else np.asarray(got).dtype) == np_dtype
    assert np.asarray(got).tolist() == expected


def test_nested_elements_cast_each_component(sess):
    # several components of unknown rank: the NumPy casts, not convert_to_tensor's rules
    spec = (_spec(tf.int64, None), _spec(tf.float32, None))
    a, b = _first(sess, (1.5, 2), spec, True)
    assert (a, a.dtype, b, b.dtype) == (1, np.int64, 2.0, np.float32)
    got = _first(sess, {"x": 1.5, "y": 2}, {"x": _spec(tf.int64),
                                            "y": _spec(tf.float32, None)}, True)
    assert got == {"x": 1, "y": 2.0} and got["x"].dtype == np.int64


def _structure_error(expected, value):
    return ("TypeError: `generator` yielded an element that did not match the expected "
            "structure. The expected structure was %s, but the yielded element was %s."
            % (expected, value))


def _type_error(dtype, value):
    return ("TypeError: `generator` yielded an element that could not be converted to the "
            "expected type. The expected type was %s, but the yielded element was %s."
            % (dtype, value))


def _unknown(dtype):
    return "TensorSpec(shape=<unknown>, dtype=tf.%s, name=None)" % dtype


ERRORS = [  # (yielded value, spec, error class, message)
    ("abc", _spec(tf.int64), tf.errors.InvalidArgumentError, _type_error("int64", "abc")),
    (None, _spec(tf.int64), tf.errors.InvalidArgumentError, _type_error("int64", "None")),
    ((1.5, "a"), (_spec(tf.int64), _spec(tf.float32)), tf.errors.InvalidArgumentError,
     _type_error("float32", "a")),
    (5, _spec(tf.string), tf.errors.InternalError, "Unsupported object type int"),
    ([1.5], _spec(tf.string, [1]), tf.errors.InternalError,
     "Unsupported object type float"),
    (2 ** 70, _spec(tf.int64), tf.errors.UnknownError,
     "OverflowError: Python int too large to convert to C long"),
    ([1, 2], _spec(tf.int64), tf.errors.InvalidArgumentError,
     "TypeError: `generator` yielded an element of shape (2,) where an element of shape () "
     "was expected."),
    (1, _spec(tf.int64, [2]), tf.errors.InvalidArgumentError,
     "TypeError: `generator` yielded an element of shape () where an element of shape "
     "(2,) was expected."),
    ([1, 2, 3], _spec(tf.int64, [2]), tf.errors.InvalidArgumentError,
     "TypeError: `generator` yielded an element of shape (3,) where an element of shape "
     "(2,) was expected."),
    (1, (_spec(tf.int64), _spec(tf.float32)), tf.errors.InvalidArgumentError,
     _structure_error("(tf.int64, tf.float32)", 1)),
    ([1, 2.0], (_spec(tf.int64), _spec(tf.float32)), tf.errors.InvalidArgumentError,
     _structure_error("(tf.int64, tf.float32)", [1, 2.0])),
    ((1, 2.0, 3), (_spec(tf.int64), _spec(tf.float32)), tf.errors.InvalidArgumentError,
     _structure_error("(tf.int64, tf.float32)", (1, 2.0, 3))),
    ({"x": 1}, {"x": _spec(tf.int64), "y": _spec(tf.int64)},
     tf.errors.InvalidArgumentError,
     _structure_error("{'x': tf.int64, 'y': tf.int64}", {"x": 1})),
    # one component of unknown rank: convert_to_tensor's rules
    (1.5, _spec(tf.int64, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("int64"), 1.5)),
    (2.0, _spec(tf.int64, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("int64"), 2.0)),
    ("5", _spec(tf.int64, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("int64"), 5)),
    (None, _spec(tf.int64, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("int64"), None)),
    (2 ** 70, _spec(tf.int64, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("int64"), 2 ** 70)),
    (5, _spec(tf.string, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("string"), 5)),
    (1, _spec(tf.bool, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("bool"), 1)),
    ([[1], [2, 3]], _spec(tf.int64, None), tf.errors.InvalidArgumentError,
     _structure_error(_unknown("int64"), [[1], [2, 3]])),
]


@pytest.mark.parametrize("use_signature", [True, False])
@pytest.mark.parametrize("value,spec,error,message", ERRORS)
def test_yielded_components_fail_as_tf(sess, value, spec, error, message, use_signature):
    with pytest.raises(error, match=re.escape(message)):
        _first(sess, value, spec, use_signature)


def test_structure_error_names_the_signature_spec(sess):
    # only `output_signature` gives the spec a name; the message prints it
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(_structure_error(
            "TensorSpec(shape=<unknown>, dtype=tf.int64, name='n')", 1.5))):
        _first(sess, 1.5, tf.TensorSpec(None, tf.int64, name="n"), True)


def test_a_failed_conversion_drops_one_element_under_ignore_errors(sess, drain):
    ds = tf.data.Dataset.from_generator(lambda: iter(["1", "x", 5, "3"]), tf.string, [])
    assert drain(ds.apply(tf.data.experimental.ignore_errors())) == [b"1", b"x", b"3"]
    ints = tf.data.Dataset.from_generator(lambda: iter(["1", "x", 2.5]), tf.int64, [])
    assert drain(ints.apply(tf.data.experimental.ignore_errors())) == [1, 2]
