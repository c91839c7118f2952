"""RaggedTensor <-> dense and sparse (values recorded from TF 2.21 compat.v1), and
gradients through them checked numerically."""
import numpy as np
import pytest

import tensorweave as tf

R = tf.RaggedTensor


def test_to_tensor_default_and_shape(sess):
    rt = tf.ragged.constant([[1, 2], [], [3, 4, 5]])
    assert sess.run(rt.to_tensor(9)).tolist() == [[1, 2, 9], [9, 9, 9], [3, 4, 5]]
    assert sess.run(rt.to_tensor(shape=[2, 4])).tolist() == [[1, 2, 0, 0], [0, 0, 0, 0]]
    cropped = rt.to_tensor(shape=[None, 2])
    assert cropped.shape.as_list() == [3, 2]
    assert sess.run(cropped).tolist() == [[1, 2], [0, 0], [3, 4]]


def test_to_tensor_nested_and_inner_dims(sess):
    rt2 = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    assert sess.run(rt2.to_tensor()).tolist() == [
        [[1, 2, 0], [3, 0, 0]], [[0, 0, 0], [0, 0, 0]], [[4, 5, 6], [0, 0, 0]]]
    assert sess.run(rt2.to_tensor(shape=[4, 1, 2])).tolist() == [
        [[1, 2]], [[0, 0]], [[4, 5]], [[0, 0]]]
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert sess.run(inner.to_tensor([8, 9])).tolist() == [[[1, 2], [8, 9]],
                                                          [[3, 4], [5, 6]]]
    strings = tf.ragged.constant([["a", "b"], ["c"]])
    assert sess.run(strings.to_tensor()).tolist() == [[b"a", b"b"], [b"c", b""]]


def test_to_tensor_bad_default(graph):
    rt = tf.ragged.constant([[1, 2], [], [3, 4, 5]])
    with pytest.raises(ValueError, match="default_value.rank = 1  must be less than"):
        rt.to_tensor([1, 2])


def test_to_sparse(sess):
    rt = tf.ragged.constant([[1, 2], [], [3, 4, 5]])
    st = sess.run(rt.to_sparse())
    assert st.indices.tolist() == [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]]
    assert st.values.tolist() == [1, 2, 3, 4, 5] and st.dense_shape.tolist() == [3, 3]
    rt2 = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    st2 = sess.run(rt2.to_sparse())
    assert st2.indices.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [2, 0, 0],
                                    [2, 0, 1], [2, 0, 2]]
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert sess.run(tf.sparse.to_dense(inner.to_sparse())).tolist() == [
        [[1, 2], [0, 0]], [[3, 4], [5, 6]]]


@pytest.mark.parametrize("kwargs, rows", [
    ({}, [[1, 2, 0], [3, 0, 0]]),
    ({"padding": 0}, [[1, 2], [3]]),
    ({"lengths": [1, 3]}, [[1], [3, 0, 0]]),
    ({"lengths": [1, 4]}, [[1], [3, 0, 0]]),    # clipped to the row size, as TF
])
def test_from_tensor_rank_2(sess, kwargs, rows):
    assert sess.run(R.from_tensor([[1, 2, 0], [3, 0, 0]], **kwargs)).to_list() == rows


def test_from_tensor_higher_ragged_rank_and_inner_padding(sess):
    t = [[[1, 0], [3, 4]], [[0, 0], [7, 8]]]
    assert sess.run(R.from_tensor(t, padding=0, ragged_rank=2)).to_list() == [
        [[1], [3, 4]], [[], [7, 8]]]
    assert sess.run(R.from_tensor([[[1, 0], [3, 4]], [[0, 0], [0, 0]]],
                                  padding=[0, 0])).to_list() == [[[1, 0], [3, 4]], []]
    nested = R.from_tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
                           lengths=([1, 2], [1, 2, 1]), ragged_rank=2)
    assert sess.run(nested).to_list() == [[[1]], [[5, 6], [7]]]
    strings = R.from_tensor([["a", "b", ""], ["c", "", ""]], padding="")
    assert sess.run(strings).to_list() == [[b"a", b"b"], [b"c"]]


def test_from_tensor_errors(graph):
    with pytest.raises(ValueError, match="but not both"):
        R.from_tensor([[1]], lengths=[1], padding=0)
    with pytest.raises(ValueError, match="must be greater than 1"):
        R.from_tensor([1, 2])


def test_from_sparse(sess):
    st = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1, 2, 3], [4, 5])
    assert sess.run(R.from_sparse(st)).to_list() == [[1, 2], [], [3], []]


def _numeric_grad(f, x0, eps=1e-3):
    grad = np.zeros_like(x0)
    for i in range(x0.size):
        up, down = x0.copy(), x0.copy()
        up.flat[i] += eps
        down.flat[i] -= eps
        grad.flat[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_to_tensor_gradient_matches_numeric(sess):
    x0 = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    w = np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3)
    x = tf.placeholder(tf.float32, [5])
    loss = tf.reduce_sum(R.from_row_lengths(x, [2, 0, 3]).to_tensor(7.0) * w)
    grad = sess.run(tf.gradients(loss, x)[0], {x: x0})
    numeric = _numeric_grad(lambda v: sess.run(loss, {x: v}), x0)
    np.testing.assert_allclose(grad, numeric, rtol=1e-2)
    np.testing.assert_allclose(grad, [1, 2, 7, 8, 9])


def test_from_tensor_gradient_matches_numeric(sess):
    d0 = np.array([[1.0, 2.0, 0.5], [3.0, 0.25, 4.0]], np.float32)
    d = tf.placeholder(tf.float32, [2, 3])
    rt = R.from_tensor(d, lengths=[2, 1])
    loss = tf.reduce_sum(tf.square(rt.flat_values))
    grad = sess.run(tf.gradients(loss, d)[0], {d: d0})
    numeric = _numeric_grad(lambda v: sess.run(loss, {d: v}), d0)
    np.testing.assert_allclose(grad, numeric, rtol=1e-2)
    np.testing.assert_allclose(grad, [[2.0, 4.0, 0.0], [6.0, 0.0, 0.0]])
