"""tf.IndexedSlicesSpec, tf.NoneTensorSpec and tf.OptionalSpec (framework/composite_specs.py)
and the rules they share (framework/serialized_spec.py): every repr, result and error
below is TensorFlow 2.21's (compat.v1, graph mode) for the same call."""
import collections

import pytest

import tensorweave as tf

IS, NS, OS, TS = tf.IndexedSlicesSpec, tf.NoneTensorSpec, tf.OptionalSpec, tf.TensorSpec


@pytest.mark.parametrize("spec,text", [
    (lambda: IS(), "IndexedSlicesSpec(TensorShape(None), tf.float32, tf.int64, None, "
                   "TensorShape([None]))"),
    (lambda: IS([2, 3], tf.int32, tf.int32, tf.int64, [None]),
     "IndexedSlicesSpec(TensorShape([2, 3]), tf.int32, tf.int32, tf.int64, "
     "TensorShape([None]))"),
    (lambda: IS([2, 3], "int32", "int32", None, [5]),
     "IndexedSlicesSpec(TensorShape([2, 3]), tf.int32, tf.int32, None, TensorShape([5]))"),
    (lambda: NS(), "NoneTensorSpec()"),
    (lambda: OS(TS([2], tf.int32)),
     "OptionalSpec(TensorSpec(shape=(2,), dtype=tf.int32, name=None),)"),
    (lambda: OS({"a": TS([2], tf.int32), "b": (tf.SparseTensorSpec([3]),
                                               TS(None, tf.string, "n"))}),
     "OptionalSpec({'a': TensorSpec(shape=(2,), dtype=tf.int32, name=None), 'b': "
     "(SparseTensorSpec(TensorShape([3]), tf.float32), TensorSpec(shape=<unknown>, "
     "dtype=tf.string, name='n'))},)"),
    (lambda: tf.data.experimental.OptionalStructure(TS([1])),
     "OptionalSpec(TensorSpec(shape=(1,), dtype=tf.float32, name=None),)"),
])
def test_repr(spec, text):
    assert repr(spec()) == text


def test_constructor_errors():
    with pytest.raises(ValueError, match=r"Shape \(2, 2\) must have rank 1"):
        IS(indices_shape=[2, 2])
    with pytest.raises(TypeError):
        IS(dtype="foo")


def test_value_types():
    assert IS().value_type is tf.IndexedSlices
    assert NS().value_type is type(None)
    assert OS(TS([])).value_type is tf.data.experimental.Optional
    assert not hasattr(IS(), "shape") and not hasattr(IS(), "dtype")  # as TF's


def test_indexed_slices_spec_rules():
    s = IS([2, 3])
    assert s == IS([2, 3]) and s != IS([2, None]) and hash(s) == hash(IS([2, 3]))
    assert repr(s.most_specific_common_supertype([IS([4, 3])])) == \
        "IndexedSlicesSpec(TensorShape([None, 3]), tf.float32, tf.int64, None, " \
        "TensorShape([None]))"
    assert s.most_specific_common_supertype([IS([4, 3], tf.int32)]) is None
    assert s.most_specific_common_supertype([TS([4, 3])]) is None
    assert repr(s.most_specific_common_supertype([IS([4, 3, 2])])) == \
        "IndexedSlicesSpec(TensorShape(None), tf.float32, tf.int64, None, " \
        "TensorShape([None]))"
    assert repr(IS([2, 3], indices_shape=[4]).most_specific_common_supertype(
        [IS([2, 3], indices_shape=[5])])) == \
        "IndexedSlicesSpec(TensorShape([2, 3]), tf.float32, tf.int64, None, " \
        "TensorShape([None]))"
    assert s.is_compatible_with(IS([None, 3]))
    assert not s.is_compatible_with(IS([2, 3], tf.int32))
    assert not s.is_compatible_with(IS([2, 3], dense_shape_dtype=tf.int64))
    assert s.is_subtype_of(IS([None, 3])) and not IS([None, 3]).is_subtype_of(s)
    with pytest.raises(ValueError, match=r"No TypeSpec is compatible with both "
                       r"IndexedSlicesSpec\(TensorShape\(\[2, 3\]\), tf.float32, tf.int64, "
                       r"None, TensorShape\(\[None\]\)\) and IndexedSlicesSpec\("
                       r"TensorShape\(\[2, 3\]\), tf.int32"):
        s.most_specific_compatible_type(IS([2, 3], tf.int32))


def test_indexed_slices_spec_is_compatible_with_values(graph):
    s = IS([2, 3])
    # the values' shape [4, 3] and int64 indices, no dense_shape
    slices = tf.IndexedSlices(tf.zeros([4, 3]), tf.constant([0, 1, 1, 0], tf.int64))
    assert s.is_compatible_with(slices)
    assert not s.is_compatible_with(tf.constant(1.0))  # a TensorSpec: another kind
    with pytest.raises(TypeError, match="Could not build a TypeSpec for <object object"):
        s.is_compatible_with(object())


def test_none_tensor_spec_rules(graph):
    n = NS()
    assert n == NS() and not n != NS() and hash(n) == hash(NS())
    assert n.is_compatible_with(NS()) and n.is_compatible_with(None)
    assert not n.is_compatible_with(tf.constant(1)) and n.is_subtype_of(NS())
    assert not TS([2]).is_compatible_with(n)
    assert n.most_specific_common_supertype([NS()]) == NS()
    assert n.most_specific_common_supertype([TS([])]) is None
    assert n.most_specific_compatible_shape(NS()) == NS()
    with pytest.raises(ValueError, match=r"^No `TypeSpec` is compatible with both "
                       r"NoneTensorSpec\(\) and TensorSpec\(shape=\(\), dtype=tf.float32, "
                       r"name=None\)$"):
        n.most_specific_compatible_shape(TS([]))


def test_optional_spec_rules():
    o = OS(TS([2], tf.int32))
    assert repr(o.most_specific_common_supertype([OS(TS([3], tf.int32))])) == \
        "OptionalSpec(TensorSpec(shape=(None,), dtype=tf.int32, name=None),)"
    assert o.most_specific_common_supertype([OS(TS([3], tf.int64))]) is None
    assert o.is_compatible_with(OS(TS([None], tf.int32)))
    assert not o.is_compatible_with(OS(TS([3], tf.int32)))
    assert o == OS(TS([2], tf.int32)) and hash(o) == hash(OS(TS([2], tf.int32)))
    # a name is part of the spec; a tuple and a list of one spec are other structures
    assert OS(TS([2], name="x")).most_specific_common_supertype([OS(TS([2]))]) is None
    assert OS((TS([2]),)).most_specific_common_supertype([OS([TS([2])])]) is None


def test_optional_spec_of_dicts_compares_by_key():
    a = OS({"a": TS([2], tf.int32), "b": TS([1])})
    b = OS({"b": TS([3]), "a": TS([2], tf.int32)})
    assert repr(a.most_specific_common_supertype([b])) == (
        "OptionalSpec({'a': TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
        "'b': TensorSpec(shape=(None,), dtype=tf.float32, name=None)},)")
    assert not a.is_compatible_with(b) and a != b
    assert b.is_subtype_of(OS({"a": TS([2], tf.int32), "b": TS([None])}))


def test_optional_spec_is_compatible_with_optionals(graph):
    spec = OS(TS([2]))
    opt = tf.data.experimental.Optional
    assert spec.is_compatible_with(opt.from_value(tf.constant([1.0, 2.0])))
    assert not spec.is_compatible_with(opt.from_value(tf.constant([1, 2])))


def test_common_supertype_keeps_the_first_key_order_and_nesting_types():
    first = OS({"b": TS([1]), "a": TS([2], tf.int32)})
    common = first.most_specific_common_supertype([OS({"a": TS([2], tf.int32),
                                                       "b": TS([3])})])
    assert repr(common) == ("OptionalSpec({'b': TensorSpec(shape=(None,), dtype=tf.float32, "
                            "name=None), 'a': TensorSpec(shape=(2,), dtype=tf.int32, "
                            "name=None)},)")
    pair = collections.namedtuple("P", "x y")
    assert repr(OS(pair(TS([1]), TS([2]))).most_specific_common_supertype(
        [OS(pair(TS([3]), TS([2])))])) == (
        "OptionalSpec(P(x=TensorSpec(shape=(None,), dtype=tf.float32, name=None), "
        "y=TensorSpec(shape=(2,), dtype=tf.float32, name=None)),)")
    assert repr(OS([TS([1])]).most_specific_common_supertype([OS([TS([3])])])) == \
        "OptionalSpec([TensorSpec(shape=(None,), dtype=tf.float32, name=None)],)"
    assert [repr(OS(x)) for x in ((), None, NS())] == [
        "OptionalSpec((),)", "OptionalSpec(None,)", "OptionalSpec(NoneTensorSpec(),)"]
