"""DType and TensorShape/Dimension semantics."""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf


def test_dtype_names_and_numpy_conversion():
    pairs = [(tf.float16, np.float16), (tf.float32, np.float32), (tf.float64, np.float64),
             (tf.int8, np.int8), (tf.int16, np.int16), (tf.int32, np.int32),
             (tf.int64, np.int64), (tf.uint8, np.uint8), (tf.uint16, np.uint16),
             (tf.bool, np.bool_), (tf.complex64, np.complex64),
             (tf.complex128, np.complex128), (tf.bfloat16, ml_dtypes.bfloat16)]
    for dt, npt in pairs:
        assert dt.as_numpy_dtype is npt
        assert tf.as_dtype(npt) is dt
        assert tf.as_dtype(dt.name) is dt
        assert dt.base_dtype is dt
    assert tf.as_dtype(np.dtype("float32")) is tf.float32
    assert tf.as_dtype("float") is tf.float32 and tf.double is tf.float64
    assert tf.half is tf.float16
    with pytest.raises(TypeError):
        tf.as_dtype("float31")


def test_dtype_classification():
    assert tf.float32.is_floating and not tf.float32.is_integer
    assert tf.int64.is_integer and not tf.int64.is_floating
    assert tf.complex64.is_complex and tf.complex64.real_dtype is tf.float32
    assert tf.bfloat16.is_floating
    assert not tf.bool.is_integer and not tf.string.is_floating
    assert tf.uint8.is_unsigned and not tf.int8.is_unsigned
    assert tf.int8.min == -128 and tf.uint8.max == 255


def test_dimension_arithmetic_and_compatibility():
    d, u = tf.Dimension(3), tf.Dimension(None)
    assert (d + 1).value == 4 and (d * u).value is None
    assert d.is_compatible_with(u) and d.is_compatible_with(3)
    assert not d.is_compatible_with(4)
    assert d.merge_with(u).value == 3
    with pytest.raises(ValueError):
        d.merge_with(4)
    assert tf.dimension_value(d) == 3 and tf.dimension_value(None) is None


def test_tensor_shape_semantics():
    s = tf.TensorShape([2, None, 3])
    assert s.ndims == 3 and s.as_list() == [2, None, 3]
    assert not s.is_fully_defined() and s.num_elements() is None
    assert tf.TensorShape(None).ndims is None
    assert s.merge_with([None, 4, 3]).as_list() == [2, 4, 3]
    assert s.is_compatible_with(tf.TensorShape(None))
    assert not s.is_compatible_with([2, 1])
    assert s.concatenate([5]).as_list() == [2, None, 3, 5]
    assert tf.TensorShape(None).concatenate([1]).ndims is None
    with pytest.raises(ValueError):
        s.merge_with([3, None, 3])
    with pytest.raises(ValueError):
        s.with_rank(2)
    assert s[1:].as_list() == [None, 3] and s[0].value == 2
    assert tf.TensorShape([2, 3]).num_elements() == 6
    assert tf.TensorShape([2, 3]) == tf.TensorShape([2, 3])
    assert str(s) == "(2, ?, 3)"


def test_most_specific_compatible_shape():
    from tensorweave.framework.shapes import TensorShape
    assert TensorShape([2, 3]).most_specific_compatible_shape([2, 4]).as_list() == [2, None]
    assert TensorShape([2, None]).most_specific_compatible_shape([2, 5]).as_list() == \
        [2, None]
    assert TensorShape([1]).most_specific_compatible_shape([1, 1]).ndims is None
    assert TensorShape(None).most_specific_compatible_shape([3]).ndims is None


def test_numpy_scalars_in_a_list_take_tf_list_dtypes():
    """TF builds a list's array with NumPy, then prefers float32 to float64 and int32 to
    an int64 whose values fit; a lone NumPy scalar keeps its dtype."""
    with tf.Graph().as_default():
        assert tf.constant([np.int64(1), np.int64(2)]).dtype == tf.int32
        assert tf.constant([np.int64(2 ** 40)]).dtype == tf.int64
        assert tf.constant([np.float64(0.5), 1]).dtype == tf.float32
        assert tf.constant([np.uint8(1), np.uint8(2)]).dtype == tf.uint8
        assert tf.constant([np.float16(1)]).dtype == tf.float16
        assert tf.constant(np.int64(3)).dtype == tf.int64
        assert tf.constant([np.bool_(True), False]).dtype == tf.bool
        mixed = tf.constant([np.float64(0.5)]) * tf.ones([1])  # float32 with float32
        assert mixed.dtype == tf.float32
        assert tf.decode_csv(["5"], [[np.int64(1)]])[0].dtype == tf.int32


def test_tensor_shape_to_and_from_its_proto():
    proto = tf.TensorShape([3, None]).as_proto()
    assert [d.size for d in proto.dim] == [3, -1] and not proto.unknown_rank
    assert tf.TensorShape(proto).as_list() == [3, None]
    assert tf.TensorShape(tf.TensorShape(None).as_proto()).ndims is None
    assert tf.TensorShape(tf.TensorShape([]).as_proto()).as_list() == []
