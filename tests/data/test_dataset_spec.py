"""tf.data.DatasetSpec (data/dataset_spec.py) and the structure leaf it is for components
that are datasets: every repr, result and error below is TensorFlow 2.21's (compat.v1,
graph mode) for the same call."""
import pytest

import tensorweave as tf

D, TS = tf.data.DatasetSpec, tf.TensorSpec


def test_repr_and_properties():
    spec = D(TS([2], tf.int32))
    assert repr(spec) == \
        "DatasetSpec(TensorSpec(shape=(2,), dtype=tf.int32, name=None), TensorShape([]))"
    assert repr(D((TS([2], tf.int32), tf.RaggedTensorSpec([None, None], tf.int32)), [5])) \
        == ("DatasetSpec((TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
            "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)), "
            "TensorShape([5]))")
    assert spec.value_type is tf.data.Dataset
    assert spec.element_spec == TS([2], tf.int32)
    assert tf.data.experimental.DatasetStructure is D
    assert repr(tf.data.experimental.DatasetStructure(TS([1]), [2])) == \
        "DatasetSpec(TensorSpec(shape=(1,), dtype=tf.float32, name=None), TensorShape([2]))"


def test_common_supertype_and_compatibility():
    spec = D(TS([2], tf.int32))
    assert repr(spec.most_specific_common_supertype([D(TS([3], tf.int32))])) == \
        "DatasetSpec(TensorSpec(shape=(None,), dtype=tf.int32, name=None), TensorShape([]))"
    assert repr(spec.most_specific_common_supertype([D(TS([3], tf.int32), [2])])) == \
        "DatasetSpec(TensorSpec(shape=(None,), dtype=tf.int32, name=None), " \
        "TensorShape(None))"
    assert spec.most_specific_common_supertype([D((TS([3], tf.int32),))]) is None
    assert repr(D({"a": TS([2])}).most_specific_common_supertype([D({"a": TS([3])})])) == \
        "DatasetSpec({'a': TensorSpec(shape=(None,), dtype=tf.float32, name=None)}, " \
        "TensorShape([]))"
    assert spec.is_compatible_with(D(TS([None], tf.int32)))
    assert not spec.is_compatible_with(D(TS([3], tf.int32)))
    assert spec == D(TS([2], tf.int32)) and spec.is_subtype_of(D(TS([None], tf.int32)))
    assert D(TS([2])).is_subtype_of(D(TS([None]), []))
    assert D(TS([2]), [3]).is_subtype_of(D(TS([2]), [None]))
    assert not D(TS([2]), [None]).is_subtype_of(D(TS([2]), [3]))
    assert hash(D(TS([2]))) == hash(D(TS([2]))) and D(TS([2])) != D(TS([2]), [1])
    with pytest.raises(ValueError, match=r"No TypeSpec is compatible with both "
                       r"DatasetSpec\(TensorSpec\(shape=\(2,\), dtype=tf.float32, name=None\)"
                       r", TensorShape\(\[\]\)\) and DatasetSpec\(TensorSpec\(shape=\(2,\), "
                       r"dtype=tf.int32"):
        D(TS([2])).most_specific_compatible_type(D(TS([2], tf.int32)))


def test_compatibility_with_datasets(graph):
    assert not D(TS([2], tf.int32)).is_compatible_with(tf.data.Dataset.range(3))
    assert D(TS([2], tf.int32)).is_compatible_with(tf.data.Dataset.from_tensors([1, 2]))
    assert D(TS([])).is_compatible_with(tf.data.Dataset.range(5)) is False
    window_spec = tf.data.Dataset.range(3).window(2).element_spec
    assert isinstance(window_spec, D) and window_spec.is_compatible_with(
        tf.data.Dataset.range(5))


def test_a_spec_made_from_an_element_spec_describes_its_components():
    spec = D({"a": TS([2], tf.int32, "x"), "b": tf.SparseTensorSpec([3])})
    assert spec.types == [tf.int32, tf.variant]
    assert [s.as_list() for s in spec.shapes] == [[2], []]
    assert spec.names == ["x", None]
    with pytest.raises(TypeError, match="must nest tf.TensorSpec"):
        D(tf.TensorArraySpec()).types


def test_windows_of_other_shapes_concatenate_into_their_common_spec(sess):
    # TF 2.21: DatasetSpec(TensorSpec(shape=(None,), ...)), then [1 2] and [1 2 3]
    a = tf.data.Dataset.from_tensors([1, 2]).window(1)
    b = tf.data.Dataset.from_tensors([1, 2, 3]).window(1)
    both = a.concatenate(b)
    text = "DatasetSpec(TensorSpec(shape=(None,), dtype=tf.int32, name=None), " \
           "TensorShape([]))"
    assert repr(both.element_spec) == text
    assert repr(tf.data.experimental.sample_from_datasets([a, b]).element_spec) == text
    nxt = both.flat_map(lambda w: w).make_one_shot_iterator().get_next()
    assert nxt.shape.as_list() == [None]
    assert sess.run(nxt).tolist() == [1, 2] and sess.run(nxt).tolist() == [1, 2, 3]
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        a.concatenate(tf.data.Dataset.from_tensors([1.0]).window(1))
