"""tf.gather and tf.gather_nd with batch_dims (ops/indexing/indexing_gather.py): values against a loop
over the batch entries, TF1's static shapes, errors and the gradient."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


def _reference(params, indices, b, a):
    out = np.empty(params.shape[:a] + indices.shape[b:] + params.shape[a + 1:], params.dtype)
    for entry in np.ndindex(*params.shape[:b]):
        out[entry] = np.take(params[entry], indices[entry], axis=a - b)
    return out


# batch_dims, axis, indices shape, index bound (params are [2, 3, 4, 5])
CASES = [(1, 1, (2, 6), 3), (1, 2, (2, 3, 2), 4), (2, 2, (2, 3, 7), 4), (2, 3, (2, 3), 5),
         (1, 3, (2,), 5), (-1, 2, (2, 3, 2), 4), (0, 1, (3,), 3)]


@pytest.mark.parametrize("b,a,ishape,bound", CASES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_values_and_shapes(sess, b, a, ishape, bound, index_dtype):
    rng = np.random.RandomState(0)
    params = rng.randn(2, 3, 4, 5).astype(np.float32)
    indices = rng.randint(0, bound, ishape).astype(index_dtype)
    y = tf.gather(params, indices, batch_dims=b, axis=a)
    out = sess.run(y)
    nb = b + len(ishape) if b < 0 else b
    want = _reference(params, indices, nb, a)
    assert y.shape.as_list() == list(want.shape)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("b,a,ishape,bound", CASES)
def test_gradient(graph, b, a, ishape, bound):
    rng = np.random.RandomState(1)
    x0 = rng.randn(2, 3, 4, 5)
    indices = rng.randint(0, bound, ishape)  # repeated indices: their gradients add up
    x = tf.placeholder(tf.float64, x0.shape)
    y = tf.gather(x, indices, batch_dims=b, axis=a)
    with tf.Session():
        err = compute_gradient_error(x, list(x0.shape), y, y.shape.as_list(),
                                     x_init_value=x0)
    assert err < 1e-6


def test_axis_defaults_to_batch_dims(sess):
    params = np.arange(24).reshape(2, 3, 4)
    indices = np.array([[2, 0], [1, 1]])
    y = tf.gather(params, indices, batch_dims=1)
    assert y.op.get_attr("batch_dims") == 1
    np.testing.assert_array_equal(sess.run(y), [params[0, [2, 0]], params[1, [1, 1]]])


def test_static_shapes_with_unknown_dims(graph):
    p = tf.placeholder(tf.float32, [2, 3, 4, 5])
    i = tf.placeholder(tf.int32, [2, 3, 6])
    assert tf.gather(p, i, batch_dims=-1).shape.as_list() == [2, 3, 4, 6]  # axis -1
    assert tf.gather(p, i, batch_dims=1, axis=-1).shape.as_list() == [2, 3, 4, 3, 6]
    pu = tf.placeholder(tf.float32, [None, 3, 4])
    iu = tf.placeholder(tf.int32, [2, None])
    assert tf.gather(pu, iu, batch_dims=1).shape.as_list() == [None, None, 4]
    assert tf.gather(tf.placeholder(tf.float32), iu, batch_dims=1).shape.ndims is None


def test_errors(sess):
    p = tf.placeholder(tf.float32, [2, 3, 4])
    with pytest.raises(ValueError, match="must be less than or equal to axis"):
        tf.gather(p, tf.zeros([2, 3, 1], tf.int32), batch_dims=2, axis=1)
    with pytest.raises(ValueError, match="batch_dims"):
        tf.gather(p, tf.zeros([2, 3], tf.int32), batch_dims=3)
    pu = tf.placeholder(tf.float32, [None, 3, 4])
    iu = tf.placeholder(tf.int32, [2, None])
    y = tf.gather(pu, iu, batch_dims=1)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"params.shape\[0\]: 3 should be equal to indices.shape\[0\]: 2"):
        sess.run(y, {pu: np.zeros([3, 3, 4]), iu: np.zeros([2, 1], np.int32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1,0\] = 3 is not in"):
        sess.run(y, {pu: np.zeros([2, 3, 4]), iu: [[0], [3]]})


def test_gather_nd_with_batch_dims(sess):
    # TF 2.21's values; each batch position gathers from its own slice
    p = np.arange(24).reshape(2, 3, 4)
    a = tf.gather_nd(p, [[1, 3], [2, 0]], batch_dims=1)
    b = tf.gather_nd(p, [[[1], [2]], [[0], [1]]], batch_dims=1)
    c = tf.gather_nd(p, [[[1], [2], [3]], [[0], [1], [0]]], batch_dims=2)
    assert [t.shape.as_list() for t in (a, b, c)] == [[2], [2, 2, 4], [2, 3]]
    got = sess.run([a, b, c])
    assert got[0].tolist() == [7, 20]
    assert got[1].tolist() == [p[0, [1, 2]].tolist(), p[1, [0, 1]].tolist()]
    assert got[2].tolist() == [[1, 6, 11], [12, 17, 20]]
    with pytest.raises(ValueError, match="must be less than rank"):
        tf.gather_nd(p, [[1, 3], [2, 0]], batch_dims=3)
    with pytest.raises(ValueError, match="does not allow negative batch_dims"):
        tf.gather_nd(p, [[1, 3], [2, 0]], batch_dims=-1)


def test_gather_nd_batch_dims_gradient(graph):
    x = tf.placeholder(tf.float64, [2, 3, 4])
    y = tf.gather_nd(x, tf.constant([[[1, 2], [0, 3]], [[2, 2], [2, 2]]]), batch_dims=1)
    with tf.Session():
        assert compute_gradient_error(x, [2, 3, 4], y, [2, 2],
                                      x_init_value=np.random.rand(2, 3, 4)) < 1e-6


def _reference_gradient(params_shape, indices, b, a, weights):
    """d sum(weights * gather(params)) / d params: each output weight added to the params
    element it was taken from (found by gathering element numbers)."""
    ids = _reference(np.arange(np.prod(params_shape)).reshape(params_shape), indices, b, a)
    grad = np.zeros(int(np.prod(params_shape)))
    np.add.at(grad, ids.ravel(), weights.ravel())
    return grad.reshape(params_shape)


@pytest.mark.parametrize("b,a,ishape,bound", [c for c in CASES if c[0] >= 0])
def test_gradient_with_unknown_ranks_and_a_fed_axis(sess, b, a, ishape, bound):
    # TF builds this gradient from run-time shapes, so no rank needs to be known
    rng = np.random.RandomState(2)
    x0 = rng.randn(2, 3, 4, 5)
    indices = rng.randint(0, bound, ishape)
    x = tf.placeholder(tf.float64)
    i = tf.placeholder(tf.int32)
    axis = tf.placeholder(tf.int32, [])
    y = tf.gather(x, i, batch_dims=b, axis=axis)
    nb = b + len(ishape) if b < 0 else b
    w = rng.randn(*_reference(x0, indices, nb, a).shape)
    grad = tf.gradients(tf.reduce_sum(y * w), x)[0]
    got = sess.run(grad, {x: x0, i: indices, axis: a})
    np.testing.assert_allclose(got, _reference_gradient(x0.shape, indices, nb, a, w))
    # a negative axis counts from the end of the run-time rank
    got = sess.run(grad, {x: x0, i: indices, axis: a - 4})
    np.testing.assert_allclose(got, _reference_gradient(x0.shape, indices, nb, a, w))


def test_gradient_with_negative_batch_dims_needs_the_indices_rank(graph):
    x = tf.placeholder(tf.float32, [2, 3, 4])
    y = tf.gather(x, tf.placeholder(tf.int32), batch_dims=-1, axis=2)
    with pytest.raises(ValueError, match="Currently, it is unsupported to take the gradient "
                                         "of tf.gather when batch_dims < 0 and the rank of "
                                         "the indices is unknown"):
        tf.gradients(y, x)


def test_static_shape_with_a_fed_axis_keeps_the_rank(graph):
    y = tf.gather(tf.placeholder(tf.float32, [2, 3, 4]), tf.placeholder(tf.int32, [2, 2]),
                  batch_dims=1, axis=tf.placeholder(tf.int32, []))
    assert y.shape.as_list() == [None, None, None]


def test_run_time_batch_dims_errors_name_the_limit(sess):
    p = tf.placeholder(tf.float32)
    i = tf.placeholder(tf.int32)
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"batch_dims \(3\) must be less than rank\(params\) \(3\)\."):
        sess.run(tf.gather(p, i, axis=2, batch_dims=-1), {p: x, i: np.zeros((2, 3, 4, 1))})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected batch_dims in the range \[-2, 2\], but got 3"):
        sess.run(tf.gather(p, i, axis=2, batch_dims=3), {p: x, i: np.zeros((2, 3))})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"batch_dims \(2\) must be less than or equal to axis \(1\)\."):
        sess.run(tf.gather(p, i, axis=tf.placeholder_with_default(1, []), batch_dims=2),
                 {p: x, i: np.zeros((2, 3), np.int32)})
