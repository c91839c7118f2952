"""tf.type_spec_from_value (framework/type_spec_from_value.py): every spec and error below
is TensorFlow 2.21's (compat.v1, graph mode) for the same value. TensorArrays and
variables are TF1's (a TensorArray's dynamic_size False unless given, a variable's spec
its value's), as TF 2.21 gives them under tf.disable_v2_behavior()."""
import numpy as np
import pytest

import tensorweave as tf

TENSOR_INT = "TensorSpec(shape=(2,), dtype=tf.int32, name=None)"


@pytest.mark.parametrize("value,text", [
    (lambda: tf.constant([1, 2]), TENSOR_INT),
    (lambda: 3, "TensorSpec(shape=(), dtype=tf.int32, name=None)"),
    (lambda: 3.0, "TensorSpec(shape=(), dtype=tf.float32, name=None)"),
    (lambda: [1, 2], TENSOR_INT),
    (lambda: (1, 2), TENSOR_INT),
    (lambda: [[1.0, 2.0]], "TensorSpec(shape=(1, 2), dtype=tf.float32, name=None)"),
    (lambda: np.array([1.0, 2.0]), "TensorSpec(shape=(2,), dtype=tf.float64, name=None)"),
    (lambda: "a", "TensorSpec(shape=(), dtype=tf.string, name=None)"),
    (lambda: b"a", "TensorSpec(shape=(), dtype=tf.string, name=None)"),
    (lambda: True, "TensorSpec(shape=(), dtype=tf.bool, name=None)"),
    (lambda: np.float16(2), "TensorSpec(shape=(), dtype=tf.float16, name=None)"),
    (lambda: [], "TensorSpec(shape=(0,), dtype=tf.float32, name=None)"),
    (lambda: tf.placeholder(tf.float32, [None, 2], name="p"),
     "TensorSpec(shape=(None, 2), dtype=tf.float32, name=None)"),
    (lambda: tf.Variable(1.0), "TensorSpec(shape=(), dtype=tf.float32, name=None)"),
    (lambda: tf.SparseTensor([[0]], [1.0], [3]),
     "SparseTensorSpec(TensorShape([3]), tf.float32)"),
    (lambda: tf.SparseTensorValue([[0]], [1.0], [3]),
     "SparseTensorSpec(TensorShape([3]), tf.float32)"),
    (lambda: tf.ragged.constant([[1], [2, 3]]),
     "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)"),
    (lambda: tf.ragged.constant([[1], [2, 3]], dtype=tf.int64, row_splits_dtype=tf.int32),
     "RaggedTensorSpec(TensorShape([2, None]), tf.int64, 1, tf.int32)"),
    (lambda: tf.ragged.constant_value([[1], [2, 3]]),
     "RaggedTensorSpec(TensorShape([2, None]), tf.int64, 1, tf.int64)"),
    (lambda: tf.IndexedSlices(tf.constant([1.0]), tf.constant([0]), tf.constant([3])),
     "IndexedSlicesSpec(TensorShape([3]), tf.float32, tf.int32, tf.int32, "
     "TensorShape([1]))"),
    (lambda: tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0])),
     "IndexedSlicesSpec(TensorShape([None, 1]), tf.float32, tf.int32, None, "
     "TensorShape([1]))"),
    (lambda: tf.TensorArray(tf.float32, 3),
     "TensorArraySpec(TensorShape(None), tf.float32, False, True)"),
    (lambda: tf.TensorArray(tf.int32, 3, dynamic_size=True, element_shape=[2]),
     "TensorArraySpec(TensorShape([2]), tf.int32, True, True)"),
    (lambda: tf.data.Dataset.range(3),
     "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))"),
    (lambda: tf.data.Dataset.range(3).window(2),
     "DatasetSpec(DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), "
     "TensorShape([])), TensorShape([]))"),
    (lambda: tf.data.Dataset.from_tensors((tf.constant([1.0]),
                                           tf.SparseTensor([[0]], [1.0], [3]))),
     "DatasetSpec((TensorSpec(shape=(1,), dtype=tf.float32, name=None), "
     "SparseTensorSpec(TensorShape([3]), tf.float32)), TensorShape([]))"),
    (lambda: tf.data.experimental.Optional.from_value(tf.constant(1)),
     "OptionalSpec(TensorSpec(shape=(), dtype=tf.int32, name=None),)"),
    (lambda: tf.data.experimental.Optional.empty(tf.TensorSpec([2], tf.int32, "x")),
     "OptionalSpec(TensorSpec(shape=(2,), dtype=tf.int32, name='x'),)"),
    (lambda: None, "NoneTensorSpec()"),
    (lambda: [None], "NoneTensorSpec()"),
    (lambda: [None, None], "NoneTensorSpec()"),
])
def test_spec_of_value(graph, value, text):
    assert repr(tf.type_spec_from_value(value())) == text


@pytest.mark.parametrize("value,text", [
    (lambda: [tf.constant([1, 2]), tf.constant([3, 4])],
     "TensorSpec(shape=(2, 2), dtype=tf.int32, name=None)"),
    (lambda: [tf.constant([1, 2]), tf.constant([1, 2, 3])],
     "TensorSpec(shape=(2, None), dtype=tf.int32, name=None)"),
    (lambda: [tf.SparseTensor([[0]], [1.0], [3]), tf.SparseTensor([[0]], [1.0], [4])],
     "SparseTensorSpec(TensorShape([2, None]), tf.float32)"),
    (lambda: [tf.ragged.constant([[1], [2, 3]]), tf.ragged.constant([[1]])],
     "RaggedTensorSpec(TensorShape([2, None, None]), tf.int32, 2, tf.int64)"),
    (lambda: [tf.data.Dataset.range(3)] * 2,
     "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([2]))"),
])
def test_a_list_of_values_of_one_kind_is_their_batch(graph, value, text):
    assert repr(tf.type_spec_from_value(value())) == text


@pytest.mark.parametrize("value,text", [
    ({"a": 1}, "{'a': 1} of unsupported type <class 'dict'>"),
    ([1, "a"], r"\[1, 'a'\] of unsupported type <class 'list'>"),
    (object(), "<object object at 0x[0-9a-f]+> of unsupported type <class 'object'>"),
])
def test_unsupported_values(graph, value, text):
    with pytest.raises(TypeError, match="^Could not build a TypeSpec for %s.$" % text):
        tf.type_spec_from_value(value)


def test_a_list_of_tensors_of_two_dtypes_is_unsupported(graph):
    with pytest.raises(TypeError, match=r"^Could not build a TypeSpec for \[<tf.Tensor "):
        tf.type_spec_from_value([tf.constant([1, 2]), tf.constant([1.0, 2.0])])
