"""tf.RaggedTensorSpec's TypeSpec rules (ops/ragged/ragged_tensor_spec.py on
framework/serialized_spec.py): every result below is TensorFlow 2.21's (compat.v1,
graph mode) for the same call."""
import pytest

import tensorweave as tf

R = tf.RaggedTensorSpec


def test_common_supertype():
    assert repr(R([2, None], tf.int32).most_specific_common_supertype(
        [R([3, None], tf.int32)])) == \
        "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert R([2, None], tf.int32).most_specific_common_supertype(
        [R([3, None], tf.int64)]) is None
    assert R([2, None, None], tf.int32).most_specific_common_supertype(
        [R([3, None, None], tf.int32, 1)]) is None  # other ragged ranks


def test_compatibility_and_subtypes(graph):
    assert R([2], tf.int32, 0).is_compatible_with(tf.TensorSpec([None], tf.int32))
    assert R([2], tf.int32, 0).is_compatible_with(tf.constant([1, 2]))
    assert R([2, None], tf.int32).is_compatible_with(tf.ragged.constant([[1], [2, 3]]))
    assert not R([2, None], tf.int32).is_compatible_with(
        tf.ragged.constant([[1], [2, 3]], dtype=tf.int64))
    assert R([2, None], tf.int32).is_subtype_of(R([None, None], tf.int32))
    assert R([2, None], tf.int32) == R([2, None], tf.int32, 1)
    assert hash(R([2, None], tf.int32)) == hash(R([2, None], tf.int32, 1))


def test_batch_of_a_spec_with_flat_values_spec_is_refused():
    spec = R([2, None], tf.float32, flat_values_spec=tf.TensorSpec([None], tf.float32))
    with pytest.raises(ValueError, match="Customized value_type is not supported."):
        spec._batch(2)
