"""tf.TensorSpec and tf.SparseTensorSpec (framework/tensor_spec.py): every repr, result
and error below is TensorFlow 2.21's (compat.v1, graph mode) for the same call."""
import numpy as np
import pytest

import tensorweave as tf

TS, SS = tf.TensorSpec, tf.SparseTensorSpec


@pytest.mark.parametrize("spec,text", [
    (lambda: TS([2, None], tf.float32),
     "TensorSpec(shape=(2, None), dtype=tf.float32, name=None)"),
    (lambda: TS(None), "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)"),
    (lambda: TS([], name="x"), "TensorSpec(shape=(), dtype=tf.float32, name='x')"),
    (lambda: TS([3], "int32", "foo"), "TensorSpec(shape=(3,), dtype=tf.int32, name='foo')"),
    (lambda: TS(tf.TensorShape(None), tf.string),
     "TensorSpec(shape=<unknown>, dtype=tf.string, name=None)"),
    (lambda: TS(3), "TensorSpec(shape=(3,), dtype=tf.float32, name=None)"),
    (lambda: TS([2], np.int64), "TensorSpec(shape=(2,), dtype=tf.int64, name=None)"),
    (lambda: TS([2], tf.float32, 3), "TensorSpec(shape=(2,), dtype=tf.float32, name=3)"),
    (lambda: TS([2], tf.resource), "TensorSpec(shape=(2,), dtype=tf.resource, name=None)"),
    (lambda: TS([tf.Dimension(3), None]),
     "TensorSpec(shape=(3, None), dtype=tf.float32, name=None)"),
    (lambda: SS(), "SparseTensorSpec(TensorShape(None), tf.float32)"),
    (lambda: SS([2, None], tf.int64), "SparseTensorSpec(TensorShape([2, None]), tf.int64)"),
    (lambda: SS(None, tf.string), "SparseTensorSpec(TensorShape(None), tf.string)"),
    (lambda: SS([]), "SparseTensorSpec(TensorShape([]), tf.float32)"),
    (lambda: SS(3), "SparseTensorSpec(TensorShape([3]), tf.float32)"),
])
def test_repr_and_str(spec, text):
    assert repr(spec()) == text and str(spec()) == text


def test_properties():
    s = TS([2, None], tf.int32, "n")
    assert s.shape.as_list() == [2, None] and isinstance(s.shape, tf.TensorShape)
    assert s.dtype is tf.int32 and s.name == "n" and s.value_type is tf.Tensor
    sp = SS([2, None], tf.int64)
    assert sp.shape.as_list() == [2, None] and sp.dtype is tf.int64
    assert sp.value_type is tf.SparseTensor
    with pytest.raises(AttributeError):
        sp.name  # noqa: B018 - TF's SparseTensorSpec has no name


@pytest.mark.parametrize("make", [TS, SS])
@pytest.mark.parametrize("args,error,match", [
    (([2], "foo"), TypeError, "Cannot convert the argument `type_value`: 'foo' to a "
                              "TensorFlow DType."),
    (([2], 3.5), TypeError, "Cannot convert the argument `type_value`: 3.5"),
    (([2], None), TypeError, "Cannot convert the argument `type_value`: None"),
    (("ab",), TypeError, None),
    (([2.5],), TypeError, "Dimension value must be integer or None"),
    (([-1],), ValueError, "Dimension -1 must be >= 0"),
])
def test_bad_arguments(make, args, error, match):
    with pytest.raises(error, match=match):
        make(*args)


def test_equality_and_hash():
    a, b = TS([2, None]), TS([2, None])
    assert a == b and not a != b and hash(a) == hash(b)
    assert a != TS([2, None], name="n") and a != TS(None) and a != TS([2, None], tf.int32)
    assert hash(TS([2])) == hash(TS([2], name="x"))  # TF hashes no name
    assert a != (tf.TensorShape([2, None]), tf.float32) and a != None  # noqa: E711
    assert TS([2, 3]) == TS((2, 3))
    assert SS([2]) == SS([2]) and SS([2]) != SS([3]) and SS([2]) != TS([2])
    assert not SS([2]) != SS([2]) and hash(SS([2])) == hash(SS([2]))
    assert len({TS([1]), TS([1]), SS([1])}) == 2


def test_from_tensor(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="xx")
    assert repr(TS.from_tensor(x)) == "TensorSpec(shape=(None, 3), dtype=tf.float32, name='xx')"
    assert TS.from_tensor(x, name="q").name == "q"
    assert repr(TS.from_tensor(tf.constant([1, 2]))) == \
        "TensorSpec(shape=(2,), dtype=tf.int32, name='Const')"
    with tf.name_scope("sc"):
        y = tf.identity(x, name="idn")
    assert TS.from_tensor(y).name == "sc/idn"
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    for not_tensor, kind in [(np.zeros((2, 3)), "numpy.ndarray"), ([1, 2], "list"),
                             (3, "int"), (sp, "SparseTensor"), (tf.Variable([1.0]), "")]:
        with pytest.raises(ValueError, match="`tensor` should be a tf.Tensor, but got "
                                             "type <class '.*%s'>." % kind):
            TS.from_tensor(not_tensor)


def test_from_spec():
    named = TS([2, None], name="n")
    assert repr(TS.from_spec(named)) == \
        "TensorSpec(shape=(2, None), dtype=tf.float32, name='n')"
    assert TS.from_spec(named, name="z").name == "z"
    assert TS.from_spec(SS([2], tf.int32), name="z") == TS([2], tf.int32, "z")
    for no_name in (SS([2], tf.int32), tf.RaggedTensorSpec([2, None], tf.int32), 3):
        with pytest.raises(AttributeError):  # as TF: it reads .name (or .shape)
            TS.from_spec(no_name)


def test_tensor_spec_is_compatible_with(graph):
    a = TS([2, None])
    x = tf.placeholder(tf.float32, [None, 3], name="xx")
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    assert [a.is_compatible_with(v) for v in (
        TS([2, 3]), TS([2, 3], name="k"), TS(None), x)] == [True] * 4
    assert TS(None).is_compatible_with(TS([1, 2, 3])) and TS([None, 3]).is_compatible_with(x)
    # values, variables and other kinds are not (TF's graph mode)
    assert [a.is_compatible_with(v) for v in (
        TS([3, 3]), TS([2, 3], tf.int32), np.zeros((2, 5), np.float32), [[1.0, 2.0]], sp,
        SS([2, 3]), None, "abc", tf.Variable([1.0, 2.0]))] == [False] * 9
    assert not TS([], tf.int32).is_compatible_with(3)
    assert not TS([], tf.string).is_compatible_with(b"a")


def test_sparse_tensor_spec_is_compatible_with(graph):
    s = SS([2, None], tf.int64)
    assert s.is_compatible_with(SS([2, 5], tf.int64)) and s.is_compatible_with(SS(None, tf.int64))
    assert not s.is_compatible_with(SS([3, 5], tf.int64))
    assert not s.is_compatible_with(SS([2, 5], tf.int32))
    assert not s.is_compatible_with(TS([2, 5], tf.int64))
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    assert SS([2, 3]).is_compatible_with(sp) and not SS([2, 4]).is_compatible_with(sp)
    # a SparseTensorValue's values convert as TF's: Python floats are float32
    value = tf.SparseTensorValue([[0, 1]], [1.5], [2, 3])
    assert SS([2, 3]).is_compatible_with(value)
    assert not SS([2, 3], tf.float64).is_compatible_with(value)
    assert not any(SS([2, 3]).is_compatible_with(v) for v in (tf.constant([1.0]), 3, None))


def test_sparse_from_value(graph):
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    assert repr(SS.from_value(sp)) == "SparseTensorSpec(TensorShape([2, 3]), tf.float32)"
    partly = tf.SparseTensor(tf.placeholder(tf.int64, [None, 3]),
                             tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int64, [3]))
    assert repr(SS.from_value(partly)) == \
        "SparseTensorSpec(TensorShape([None, None, None]), tf.int32)"
    unknown = tf.SparseTensor(tf.placeholder(tf.int64, [None, None]),
                              tf.placeholder(tf.int32, [None]),
                              tf.placeholder(tf.int64, [None]))
    assert repr(SS.from_value(unknown)) == "SparseTensorSpec(TensorShape(None), tf.int32)"
    assert repr(SS.from_value(tf.SparseTensorValue([[0, 1]], [1.5], [2, 4]))) == \
        "SparseTensorSpec(TensorShape([2, 4]), tf.float32)"
    assert repr(SS.from_value(tf.SparseTensorValue(
        np.array([[0, 1]]), np.array([1], np.int32), np.array([2, 4])))) == \
        "SparseTensorSpec(TensorShape([2, 4]), tf.int32)"
    for bad, kind in [(tf.constant([1.0]), ".*Tensor"), (3, "int"), (np.zeros(3), "ndarray")]:
        with pytest.raises(TypeError, match="Expected SparseTensor or SparseTensorValue. "
                                            "Received: .* of type %s." % kind):
            SS.from_value(bad)


@pytest.mark.parametrize("this,other,text", [
    (TS([2, None]), TS([2, 3]), "TensorSpec(shape=(2, None), dtype=tf.float32, name=None)"),
    (TS([2, 3]), TS([2, 4]), "TensorSpec(shape=(2, None), dtype=tf.float32, name=None)"),
    (TS([2, 3]), TS([2, 4, 5]), "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)"),
    (TS([2, 3], name="a"), TS([2, 4], name="a"),
     "TensorSpec(shape=(2, None), dtype=tf.float32, name='a')"),
    (TS([2, 3]), TS([2, 3]), "TensorSpec(shape=(2, 3), dtype=tf.float32, name=None)"),
    (SS([2, 3]), SS([2, 4]), "SparseTensorSpec(TensorShape([2, None]), tf.float32)"),
    (SS([2, 3]), SS([2, 4, 5]), "SparseTensorSpec(TensorShape(None), tf.float32)"),
])
def test_most_specific_compatible_type(this, other, text):
    assert repr(this.most_specific_compatible_type(other)) == text
    assert repr(this.most_specific_common_supertype([other])) == text


@pytest.mark.parametrize("this,other,text", [
    (TS([2, 3], name="a"), TS([2, 4], name="b"),
     "TensorSpec(shape=(2, 3), dtype=tf.float32, name='a') and "
     "TensorSpec(shape=(2, 4), dtype=tf.float32, name='b')"),
    (TS([2, 3], name="a"), TS([2, 4]), "name='a') and TensorSpec(shape=(2, 4), "
                                       "dtype=tf.float32, name=None)"),
    (TS([2, 3]), TS([2, 4], tf.int32), "and TensorSpec(shape=(2, 4), dtype=tf.int32"),
    (TS([2, 3]), SS([2, 4]), "and SparseTensorSpec(TensorShape([2, 4]), tf.float32)"),
    (TS([2, 3]), 3, "name=None) and 3"),
    (SS([2, 3]), SS([2, 4], tf.int32),
     "SparseTensorSpec(TensorShape([2, 3]), tf.float32) and "
     "SparseTensorSpec(TensorShape([2, 4]), tf.int32)"),
    (SS([2, 3]), TS([2, 4]), "tf.float32) and TensorSpec(shape=(2, 4)"),
])
def test_no_compatible_type(this, other, text):
    with pytest.raises(ValueError, match="No TypeSpec is compatible with both"):
        this.most_specific_compatible_type(other)
    try:
        this.most_specific_compatible_type(other)
    except ValueError as e:
        assert text in str(e)
    assert this.most_specific_common_supertype([other]) is None


def test_most_specific_common_supertype_of_several():
    assert repr(TS([2, 3]).most_specific_common_supertype([TS([2, 4]), TS([5, 4])])) == \
        "TensorSpec(shape=(None, None), dtype=tf.float32, name=None)"
    assert TS([2, 3]).most_specific_common_supertype([]) == TS([2, 3])
    assert SS([2, 3]).most_specific_common_supertype([]) == SS([2, 3])
    with pytest.raises(TypeError):  # not a sequence of specs
        TS([2, 3]).most_specific_common_supertype(TS([2, 4]))


@pytest.mark.parametrize("this,other,expected", [
    (TS([2, 3]), TS([2, None]), True),
    (TS([2, None]), TS([2, 3]), False),
    (TS([2, 3]), TS(None), True),
    (TS([2, 3], name="a"), TS([2, None]), False),
    (TS([2, 3]), TS([2, None], name="a"), True),
    (TS([2, 3]), TS([2, None], tf.int32), False),
    (TS([2, 3]), SS([2, 3]), False),
    (TS([2, 3]), 3, False),
    (SS([2, 3]), SS([2, None]), True),
    (SS([2, None]), SS([2, 3]), False),
    (SS([2, 3]), TS([2, 3]), False),
])
def test_is_subtype_of(this, other, expected):
    assert this.is_subtype_of(other) is expected


def test_type_spec_is_the_abstract_base_of_every_spec(graph):
    with pytest.raises(TypeError, match="Can't instantiate abstract class TypeSpec"):
        tf.TypeSpec()
    window = tf.data.Dataset.range(3).window(2).element_spec
    specs = [TS([]), SS(), tf.RaggedTensorSpec([2, None]), window]
    assert all(isinstance(s, tf.TypeSpec) for s in specs)
    assert not isinstance(3, tf.TypeSpec) and not isinstance(tf.TensorShape([]), tf.TypeSpec)
    assert window.value_type is tf.data.Dataset
    assert tf.data.experimental.Structure is tf.TypeSpec
