"""Fixes from a surface probe against TF 2.21 (`tensorflow.compat.v1`, graph mode):
DType limits and conversions, Dimension/TensorShape details, symbolic tensors refusing
NumPy and iteration, shape conversion to tensors, copying and pickling, and tf.nest's
rules for mappings and namedtuples. Every expected value is what TF 2.21 gave."""
import collections
import copy
import logging
import pickle

import numpy as np
import pytest

import tensorweave as tf

TS, D = tf.TensorShape, tf.Dimension


# --- 1. DType limits and properties --------------------------------------------------------
def test_dtype_min_max_are_numpy_scalars_of_the_type():
    # TF 2.21: floats give np scalars of the type, integers Python ints
    assert type(tf.float16.min) is np.float16 and tf.float16.max == np.float16(65504)
    assert type(tf.float32.max) is np.float32 and type(tf.float64.min) is np.float64
    assert type(tf.bfloat16.min).__name__ == "bfloat16"
    assert type(tf.int32.min) is int and tf.uint64.max == 2**64 - 1
    for d in (tf.bool, tf.string, tf.complex64, tf.resource, tf.qint8):
        with pytest.raises(TypeError, match="Cannot find minimum value"):
            d.min
        with pytest.raises(TypeError, match="Cannot find maximum value"):
            d.max


def test_constants_of_dtype_limits_keep_the_type(sess):
    # TF 2.21: tf.constant(tf.float64.min) is float64 -1.797e308 (not float32 -inf)
    c = tf.constant(tf.float64.min)
    f = tf.fill([2], tf.float16.max)
    assert c.dtype == tf.float64 and f.dtype == tf.float16
    got_c, got_f = sess.run([c, f])
    assert got_c == np.finfo(np.float64).min
    np.testing.assert_array_equal(got_f, np.array([65504, 65504], np.float16))
    logits = tf.constant([[1., 2., 3.]], dtype=tf.float64)
    mask = tf.constant([[True, False, True]])
    masked = tf.where(mask, logits, tf.fill(tf.shape(logits), logits.dtype.min))
    np.testing.assert_array_equal(sess.run(masked), [[1., np.finfo(np.float64).min, 3.]])


def test_dtype_limits_size_and_numpy_types():
    # TF 2.21: limits are (0, max) from TF's table, ValueError for other types
    assert tf.float32.limits == (0, 1) and tf.uint8.limits == (0, 255)
    assert tf.bool.limits == (0, True) and tf.int64.limits == (0, 2**63 - 1)
    for d in (tf.float16, tf.string, tf.complex64):
        with pytest.raises(ValueError, match="does not have defined limits"):
            d.limits
    assert (tf.string.size, tf.resource.size, tf.variant.size) == (0, 0, 0)
    assert tf.float64.size == 8
    for d in (tf.resource, tf.variant):
        with pytest.raises(KeyError):
            d.as_numpy_dtype
    assert tf.string.as_numpy_dtype is object
    assert int(tf.float32) == 1 and int(tf.float16) == 19


def test_quantized_dtypes_are_constants():
    # TF 2.21: enum values, sizes and flags of the quantized types
    q = {d.name: d for d in (tf.qint8, tf.quint8, tf.qint16, tf.quint16, tf.qint32)}
    assert {n: d.as_datatype_enum for n, d in q.items()} == {
        "qint8": 11, "quint8": 12, "qint16": 15, "quint16": 16, "qint32": 13}
    assert [d.size for d in q.values()] == [1, 1, 2, 2, 4]
    for d in q.values():
        assert d.is_quantized and not d.is_integer and not d.is_unsigned
        assert d.is_numpy_compatible and repr(d) == "tf." + d.name
        with pytest.raises(ValueError):
            d.limits
    assert tf.qint8.as_numpy_dtype == np.dtype([("qint8", np.int8)])
    assert not tf.float32.is_quantized and not tf.int8.is_quantized
    assert tf.as_dtype("qint8") is tf.qint8 and tf.as_dtype(11) is tf.qint8
    assert set(q.values()) <= set(tf.QUANTIZED_DTYPES)


def test_dtype_from_an_enum_value():
    # TF 2.21: DType(1) equals, but is not, tf.float32; as_dtype interns it
    d = tf.DType(1)
    assert d == tf.float32 and d is not tf.float32 and d.name == "float32"
    assert tf.as_dtype(d) is tf.float32 and hash(d) == hash(tf.float32)
    with pytest.raises(TypeError, match="does not correspond to a valid"):
        tf.DType(99)
    with pytest.raises(ValueError):
        tf.DType("float32")


def test_dtype_copy_and_pickle_give_the_constant():
    # TF 2.21: pickle, copy and deepcopy give back the interned DType
    assert pickle.loads(pickle.dumps(tf.float32)) is tf.float32
    assert copy.copy(tf.int64) is tf.int64 and copy.deepcopy(tf.string) is tf.string
    assert copy.deepcopy(tf.DType(2)) is tf.float64


def test_dtypes_namespace():
    # TF 2.21: tf.dtypes holds as_dtype, DType, the constants and QUANTIZED_DTYPES
    assert tf.dtypes.as_dtype("int64") is tf.int64 and tf.dtypes.DType is tf.DType
    for name in ("float16", "half", "float32", "float64", "double", "bfloat16", "int8",
                 "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool",
                 "string", "complex64", "complex128", "resource", "variant", "qint8",
                 "quint8", "qint16", "quint16", "qint32"):
        assert getattr(tf.dtypes, name) is getattr(tf, name)
    assert tf.dtypes.QUANTIZED_DTYPES is tf.QUANTIZED_DTYPES


# --- 2. as_dtype accepts what TF accepts ------------------------------------------------
@pytest.mark.parametrize("value", [None, "int", "long", "str", "bytes", "complex", int, str,
                                   bytes, complex, "f4", b"float32"])
def test_as_dtype_refuses_what_tf_refuses(value):
    # TF 2.21: each of these is a TypeError
    with pytest.raises(TypeError, match="Cannot convert the argument"):
        tf.as_dtype(value)


def test_as_dtype_accepts_what_tf_accepts():
    # TF 2.21: enum-equal numbers hash like enum values (1.0 and True are float32)
    cases = [("float", tf.float32), ("double", tf.float64), ("half", tf.float16),
             (float, tf.float32), (bool, tf.bool), (object, tf.string), (1, tf.float32),
             (9, tf.int64), (1.0, tf.float32), (True, tf.float32), (np.longlong, tf.int64),
             (np.uint, tf.uint64), (np.dtype("<U5"), tf.string), (np.bytes_, tf.string),
             (np.dtype(np.longlong), tf.int64), (np.ones(2), tf.float64),
             (np.dtype(tf.bfloat16.as_numpy_dtype), tf.bfloat16)]
    for value, want in cases:
        assert tf.as_dtype(value) is want, value
    assert tf.float32 == 1 and tf.float32 != "f4" and tf.float32 != None  # noqa: E711


def test_builders_refuse_a_none_or_python_int_dtype(graph):
    # TF 2.21: TypeError for dtype None or int here; range, zeros_like,
    # convert_to_tensor and get_variable take None, and an op's type attr given as None
    # takes its default
    x = tf.constant([1, 2])
    for make in (lambda: tf.cast(x, None), lambda: tf.zeros([2], dtype=None),
                 lambda: tf.ones([2], dtype=None), lambda: tf.placeholder(None),
                 lambda: tf.random_normal([2], dtype=None),
                 lambda: tf.constant(1, dtype=int), lambda: tf.cast(x, int)):
        with pytest.raises(TypeError):
            make()
    assert tf.range(3, dtype=None).dtype == tf.int32
    assert tf.zeros_like(x, dtype=None).dtype == tf.int32
    assert tf.convert_to_tensor(1.0, dtype=None).dtype == tf.float32
    assert tf.get_variable("gv", [2], dtype=None).dtype.base_dtype == tf.float32
    assert tf.constant(1.0, dtype=float).dtype == tf.float32
    assert tf.argmax(tf.constant([1]), output_type=None).dtype == tf.int64
    assert tf.strings.to_number(["1"], out_type=None).dtype == tf.float32


# --- 3. Dimension and TensorShape -------------------------------------------------------
def test_dimension_truth_rmod_and_bool_value():
    # TF 2.21: bool(Dimension) is bool(value); 7 % Dimension(6) works
    assert not D(None) and not D(0) and D(6)
    assert not TS([0, 3])[0]
    assert 7 % D(6) == D(1) and (2 % D(6)).value == 2 and (None % D(6)).value is None
    assert repr(D(True)) == "Dimension(True)" and repr(TS([True])) == \
        "TensorShape([Dimension(True)])"


def test_unknown_shape_slices():
    # TF 2.21: TensorShape(None)[1:3] has rank 2; open or negative bounds stay unknown
    assert TS(None)[1:3].as_list() == [None, None]
    assert TS(None)[1:].ndims is None and TS(None)[-2:].ndims is None
    with pytest.raises(ValueError, match="Steps are not yet handled"):
        TS(None)[::2]


def test_tensor_shape_copy_and_pickle():
    # TF 2.21: copy, deepcopy and pickle work on shapes and dimensions
    s = TS([None, 3, 4])
    for again in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert again.as_list() == [None, 3, 4] and isinstance(again, TS)
    assert copy.deepcopy(TS(None)).ndims is None
    assert pickle.loads(pickle.dumps(D(3))).value == 3


def test_v2_tensorshape_switches_keep_v1_indexing(caplog):
    caplog.set_level(logging.WARNING, logger="tensorflow")
    try:
        tf.enable_v2_tensorshape()
        assert "changes nothing" in caplog.text
        assert isinstance(TS([2, 3])[0], D)
    finally:
        tf.disable_v2_tensorshape()
    assert tf.compat.v1.enable_v2_tensorshape is tf.enable_v2_tensorshape


# --- 4, 5, 9. symbolic tensors: no NumPy value, no iteration; ndim and ref() -----------
def test_tensor_refuses_numpy_conversion(graph):
    # TF 2.21: NotImplementedError naming the tensor
    c = tf.constant([[1., 2., 3.]], name="c")
    for fn in (np.asarray, np.array, np.sum, lambda t: np.add(t, 1)):
        with pytest.raises(NotImplementedError,
                           match=r"Cannot convert a symbolic tf.Tensor \(c:0\)"):
            fn(c)
    # NumPy scalars still defer to the tensor's operators
    assert (np.float32(2.0) * c).dtype == tf.float32


def test_tensor_iteration_is_a_type_error(graph):
    # TF 2.21: OperatorNotAllowedInGraphError, a TypeError (TF 1.15: TypeError)
    c = tf.constant([1, 2, 3])
    for fn in (list, tuple, lambda t: [*t], lambda t: list(tf.constant(1.))):
        with pytest.raises(TypeError, match="only iterable when eager"):
            fn(c)
    with pytest.raises(TypeError):
        a, b, d = c
    assert c.consumers() == []


def test_tensor_ndim_and_ref(graph):
    # TF 2.21: ndim (-1 for an unknown rank); ref() is hashable and derefs
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    c = tf.constant([[1., 2., 3.]])
    assert (c.ndim, x.ndim, tf.placeholder(tf.float32).ndim) == (2, 2, -1)
    r = x.ref()
    assert r.deref() is x and r == x.ref() and r != c.ref() and hash(r) == hash(x.ref())
    assert {x.ref(): 1}[x.ref()] == 1 and x.experimental_ref().deref() is x
    assert repr(r) == "<Reference wrapping %r>" % (x,)
    with pytest.raises(TypeError, match="Cannot compare wrapped object with unwrapped"):
        r == x


# --- 6. shapes and dimensions convert to tensors -----------------------------------------
def test_dimension_and_shape_convert_to_tensors(sess):
    # TF 2.21: int32 constants named "shape_as_tensor"; int64 asked for or needed
    d = tf.convert_to_tensor(D(3))
    s = tf.convert_to_tensor(TS([2, 3]))
    assert (d.name, d.dtype, d.shape.as_list()) == ("shape_as_tensor:0", tf.int32, [])
    assert (s.name, s.dtype, s.shape.as_list()) == ("shape_as_tensor_1:0", tf.int32, [2])
    assert tf.convert_to_tensor(D(3), dtype=tf.int64).dtype == tf.int64
    assert tf.convert_to_tensor(TS([2, 2**40])).dtype == tf.int64
    assert tf.convert_to_tensor(TS([2, 3]), name="nm").name == "nm:0"
    assert tf.convert_to_tensor(TS([])).shape.as_list() == [0]
    assert sess.run(d) == 3 and sess.run(s).tolist() == [2, 3]
    with pytest.raises(ValueError, match=r"Cannot convert unknown Dimension \? to a Tensor"):
        tf.convert_to_tensor(D(None))
    with pytest.raises(ValueError, match=r"partially known TensorShape \(\?, 3\)"):
        tf.convert_to_tensor(TS([None, 3]))
    with pytest.raises(TypeError, match="Allowed dtypes are tf.int32 and tf.int64"):
        tf.convert_to_tensor(D(3), dtype=tf.float32)
    with pytest.raises(TypeError, match="Allowed dtypes are tf.int32 and tf.int64"):
        tf.convert_to_tensor(TS([2, 3]), dtype=tf.float32)


def test_dimensions_in_ops(sess):
    # TF 2.21: tf.range(x.shape[1]), stacking a Dimension with a tensor, casting it
    x = tf.placeholder(tf.float32, [None, 3])
    batch = tf.shape(x)[0]
    r = tf.range(x.shape[1])
    st = tf.stack([batch, x.shape[1]])
    ones = tf.ones([batch, x.shape[1]])
    cast = tf.cast(x.shape[1], tf.float32)
    assert r.shape.as_list() == [3] and st.dtype == tf.int32 and cast.dtype == tf.float32
    feed = {x: np.ones((4, 3))}
    got = sess.run([r, st, ones, cast], feed)
    assert got[0].tolist() == [0, 1, 2] and got[1].tolist() == [4, 3]
    assert got[2].shape == (4, 3) and got[3] == 3.0
    with pytest.raises(ValueError, match="unknown Dimension"):
        tf.stack([x.shape[0], batch])


# --- 8. tf.nest: mappings, namedtuples, ranges, views -----------------------------------
def test_nest_treats_mappings_as_one_type():
    # TF 2.21: dict, OrderedDict, defaultdict and dict subclasses are one structure type;
    # the result takes the first structure's type
    od = collections.OrderedDict([("b", 20), ("a", 10)])
    add = lambda a, b: a + b  # noqa: E731
    assert tf.nest.map_structure(add, {"a": 1, "b": 2}, od) == {"a": 11, "b": 22}
    got = tf.nest.map_structure(add, od, {"a": 1, "b": 2})
    assert type(got) is collections.OrderedDict and list(got.items()) == [("b", 22),
                                                                          ("a", 11)]

    class MyDict(dict):
        pass
    tf.nest.assert_same_structure({"a": 1}, collections.OrderedDict(a=1))
    tf.nest.assert_same_structure({"a": 1}, collections.defaultdict(int, a=1))
    tf.nest.assert_same_structure({"a": 1}, MyDict(a=1))
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})


def test_nest_namedtuples_of_same_name_and_fields_match(graph):
    # TF 2.21: namedtuple classes made twice are one structure type
    def make():
        return collections.namedtuple("State", ["h", "c"])
    s1, s2 = make(), make()
    got = tf.nest.map_structure(lambda a, b: a + b, s1(1, 2), s2(10, 20))
    assert got == (11, 22) and type(got) is s1
    tf.nest.assert_same_structure(s1(1, 2), s2(3, 4))
    h, c = tf.zeros([2, 3]), tf.ones([2, 3])
    shapes = tf.nest.map_structure(lambda a, b: (a + b).shape, s1(h, c), s2(c, h))
    assert shapes.h.as_list() == [2, 3]
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure(s1(1, 2), collections.namedtuple("State", "x y")(1, 2))
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure(s1(1, 2), collections.namedtuple("Q", "h c")(1, 2))
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure(s1(1, 2), (1, 2))


def test_nest_flattens_ranges_and_views():
    # TF 2.21: range and dict views are sequences; packing gives lists
    assert tf.nest.flatten(range(3)) == [0, 1, 2]
    assert tf.nest.flatten({"a": 1}.values()) == [1]
    assert tf.nest.flatten({"a": 1, "b": 2}.items()) == ["a", 1, "b", 2]
    assert tf.nest.is_nested(range(2)) and not tf.nest.is_nested(b"ab")
    assert tf.nest.map_structure(lambda v: v * 2, range(3)) == [0, 2, 4]
    assert tf.nest.flatten(TS([1, 2])) == [TS([1, 2])]
