"""tf.TensorArraySpec (ops/data_flow/tensor_array_spec.py): every repr, result and error
below is TensorFlow 2.21's (compat.v1, graph mode; TF1's TensorArrays, whose
dynamic_size is False unless given, as under tf.disable_v2_behavior())."""
import pytest

import tensorweave as tf

T = tf.TensorArraySpec


def test_repr_and_value_type():
    assert repr(T()) == "TensorArraySpec(TensorShape(None), tf.float32, False, True)"
    spec = T([2], tf.int32, True, False)
    assert repr(spec) == "TensorArraySpec(TensorShape([2]), tf.int32, True, False)"
    assert spec.value_type is tf.TensorArray
    assert repr(tf.data.experimental.TensorArrayStructure(tf.int32, [2], True, False)) == \
        "TensorArraySpec(TensorShape([2]), tf.int32, True, False)"


def test_equality_ignores_nothing():
    spec = T([2], tf.int32, True, False)
    assert spec == T([2], tf.int32, True, False) and spec != T([2], tf.int32, True, True)
    assert hash(spec) == hash(T([2], tf.int32, True, False))


def test_common_supertype_keeps_this_element_shape():
    # TF 2.21's result: its element shapes reach TensorShape's supertype as a spent
    # generator, so the first spec's element shape stays
    spec = T([2], tf.int32, True, False)
    text = "TensorArraySpec(TensorShape([2]), tf.int32, True, False)"
    assert repr(spec.most_specific_common_supertype([T([3], tf.int32, True, True)])) == text
    assert repr(spec.most_specific_common_supertype([T([3, 1], tf.int32, True, True)])) \
        == text
    assert repr(T(None, tf.int32, True, False).most_specific_common_supertype(
        [T([3], tf.int32, True, True)])) == \
        "TensorArraySpec(TensorShape(None), tf.int32, True, False)"
    assert repr(T([3], tf.int32).most_specific_common_supertype([])) == \
        "TensorArraySpec(TensorShape([3]), tf.int32, False, True)"
    assert spec.most_specific_common_supertype([T([3], tf.int32, False, True)]) is None
    assert spec.most_specific_common_supertype([tf.TensorSpec([3], tf.int32)]) is False
    with pytest.raises(ValueError, match=r"No TypeSpec is compatible with both "
                       r"TensorArraySpec\(TensorShape\(\[3\]\), tf.int32, False, True\) and "
                       r"TensorArraySpec\(TensorShape\(\[3\]\), tf.int64, False, True\)"):
        T([3], tf.int32).most_specific_compatible_type(T([3], tf.int64))


def test_compatibility_ignores_infer_shape():
    spec = T([2], tf.int32, True, False)
    assert spec.is_compatible_with(T(None, tf.int32, True, True))
    assert not spec.is_compatible_with(T([3], tf.int32, True, True))
    assert not spec.is_compatible_with(T([2], tf.int32, False, False))
    assert spec.is_subtype_of(T([5], tf.int32, True, True))  # shapes are not compared
    assert not T([3], tf.int32).is_subtype_of(T([3], tf.int64))


def test_compatibility_with_tensor_arrays(graph):
    ta = tf.TensorArray(tf.int32, 2, element_shape=[3])
    assert T([None], tf.int32).is_compatible_with(ta)
    assert not T([4], tf.int32).is_compatible_with(ta)
    assert not T([3], tf.int32, True).is_compatible_with(ta)
    assert T.from_value(ta) == T([3], tf.int32, False, True)
    with pytest.raises(TypeError, match="Expected value to be a TensorArray, but got: "
                       "`<class 'int'>`"):
        T.from_value(3)
