"""tensor_scatter_nd_{update,add,sub,max,min} against NumPy, with gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_T = np.arange(12, dtype=np.float32).reshape(4, 3)
_IDX = np.array([[2], [0], [2]], np.int32)
_UPD = np.array([[10, -1, 5], [1, 20, 2], [3, 4, 100]], np.float32)


def _reference(op):
    out = _T.copy()
    rows = _IDX[:, 0]
    if op == "update":
        out[rows[:2]] = _UPD[:2]  # the last update of row 2 is checked separately
        return out
    getattr(np, {"add": "add", "sub": "subtract", "max": "maximum",
                 "min": "minimum"}[op]).at(out, rows, _UPD)
    return out


@pytest.mark.parametrize("op", ["add", "sub", "max", "min"])
def test_tensor_scatter_combining(sess, op):
    y = getattr(tf, "tensor_scatter_nd_" + op)(_T, _IDX, _UPD)
    assert y.shape.as_list() == [4, 3] and y.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(y), _reference(op))


def test_tensor_scatter_update_and_aliases(sess):
    y = sess.run(tf.tensor_scatter_nd_update(_T, _IDX[:2], _UPD[:2]))
    np.testing.assert_array_equal(y, _reference("update"))
    # element indices and the TF1 aliases
    t = np.array([[1, 2], [3, 4]], np.int32)
    np.testing.assert_array_equal(
        sess.run(tf.tensor_scatter_update(t, [[0, 1], [1, 0]], [9, 8])), [[1, 9], [8, 4]])
    np.testing.assert_array_equal(sess.run(tf.tensor_scatter_add(t, [[0, 1]], [5])),
                                  [[1, 7], [3, 4]])
    np.testing.assert_array_equal(sess.run(tf.tensor_scatter_sub(t, [[1]], [[1, 1]])),
                                  [[1, 2], [2, 3]])
    s = sess.run(tf.tensor_scatter_nd_update([b"a", b"b"], [[1]], [b"z"]))
    assert s.tolist() == [b"a", b"z"]


def test_tensor_scatter_does_not_touch_its_input(sess):
    x = tf.constant(_T)
    y = tf.tensor_scatter_nd_add(x, _IDX, _UPD)
    got_x, _ = sess.run([x, y])
    np.testing.assert_array_equal(got_x, _T)


def test_tensor_scatter_errors(sess):
    with pytest.raises(ValueError, match=r"Dimensions \[1,2\) of input\[shape=\[4,3\]\] = "
                                         r"\[3\] must match dimensions \[1,2\) of updates"):
        tf.tensor_scatter_nd_update(_T, _IDX, np.zeros((3, 2), np.float32))
    p = tf.placeholder(tf.int32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[0\] = \[0, 5\] does not index into shape \[2,2\]"):
        sess.run(tf.tensor_scatter_nd_update(p, [[0, 5]], [9]), {p: [[1, 2], [3, 4]]})
    with pytest.raises(TypeError):
        tf.tensor_scatter_nd_max([True], [[0]], [False])


@pytest.mark.parametrize("op", ["update", "add", "sub", "max", "min"])
def test_tensor_scatter_gradients(graph, op):
    fn = getattr(tf, "tensor_scatter_nd_" + op)
    t = tf.placeholder(tf.float64, [4, 3])
    u = tf.placeholder(tf.float64, [3, 3])
    idx = _IDX if op != "update" else np.array([[2], [0], [3]], np.int32)
    y = fn(t, idx, u)
    rng = np.random.RandomState(0)
    t0 = rng.permutation(12).reshape(4, 3) / 3.0
    u0 = rng.permutation(np.arange(9) + 0.5).reshape(3, 3) / 3.0 + 0.01
    err = compute_gradient_error([t, u], [[4, 3], [3, 3]], y, [4, 3], x_init_value=[t0, u0])
    assert err < 1e-8
