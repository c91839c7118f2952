"""tf.bitwise: against NumPy, with TF's clamped shift amounts (checked against TF 2.21:
int8 [1, -3, 5] << [2, 7, 9] is [4, -128, -128]; int32 [-8, 8, 1] >> [1, 35, -1] is
[-4, 0, 1])."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64])
def test_and_or_xor_invert_with_broadcasting(sess, dtype):
    rs = np.random.RandomState(1)
    info = np.iinfo(dtype)
    x = rs.randint(info.min, int(info.max) + 1, size=(3, 4), dtype=np.int64).astype(dtype) \
        if info.bits < 64 else rs.randint(-2**62, 2**62, size=(3, 4)).astype(dtype)
    y = x[1:2, ::-1].copy()  # broadcast along the first axis
    ops = [tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y),
           tf.bitwise.bitwise_xor(x, y), tf.bitwise.invert(x)]
    got = sess.run(ops)
    for g, want in zip(got, [x & y, x | y, x ^ y, ~x]):
        assert g.dtype == dtype
        np.testing.assert_array_equal(g, want)


def test_shifts_clamp_their_amount_as_tf(sess):
    got = sess.run([
        tf.bitwise.left_shift(tf.constant([1, -3, 5], tf.int8), tf.constant([2, 7, 9], tf.int8)),
        tf.bitwise.right_shift(tf.constant([-8, 8, 1], tf.int32), tf.constant([1, 35, -1])),
        tf.bitwise.right_shift(tf.constant([200], tf.uint8), tf.constant([3], tf.uint8)),
        tf.bitwise.left_shift(tf.constant([[1], [2]], tf.int64), tf.constant([0, 62, 70],
                                                                             tf.int64))])
    assert got[0].tolist() == [4, -128, -128]
    assert got[1].tolist() == [-4, 0, 1]  # arithmetic shift; 35 -> 31; -1 -> 0
    assert got[2].tolist() == [25]
    assert got[3].tolist() == [[1, 2**62, -2**63], [2, -2**63, 0]]


def test_bitwise_ops_take_integers_only(graph):
    with pytest.raises(TypeError):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0]))
    with pytest.raises(TypeError):
        tf.bitwise.invert(tf.constant([True]))
