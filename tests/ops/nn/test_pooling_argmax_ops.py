"""tf.nn.max_pool_with_argmax and its gradient ops (ops/nn/pooling_argmax_ops.py), against
a loop-by-loop NumPy reference, TensorFlow 2.21's outputs for a small case with ties, and
TF's errors. Numeric gradient checks: tests/ops/test_gradient_registry.py."""
import numpy as np
import pytest

import tensorweave as tf


def _reference(x, ksize, strides, padding, with_batch):
    """Max pooling with argmax, one window at a time (the first maximum in row-major
    window order wins; padding never does)."""
    n, h, w, c = x.shape
    (kh, kw), (sh, sw) = ksize[1:3], strides[1:3]
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        top = max((oh - 1) * sh + kh - h, 0) // 2
        left = max((ow - 1) * sw + kw - w, 0) // 2
    else:
        oh, ow, top, left = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
    out = np.zeros((n, oh, ow, c), x.dtype)
    arg = np.zeros((n, oh, ow, c), np.int64)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for d in range(c):
                    best, where = None, None
                    for r in range(i * sh - top, i * sh - top + kh):
                        for q in range(j * sw - left, j * sw - left + kw):
                            if 0 <= r < h and 0 <= q < w and (best is None or
                                                              x[b, r, q, d] > best):
                                best, where = x[b, r, q, d], (r * w + q) * c + d
                    out[b, i, j, d] = best
                    arg[b, i, j, d] = where + (b * h * w * c if with_batch else 0)
    return out, arg


# TensorFlow 2.21, tf.compat.v1.nn.max_pool_with_argmax(X, [1, 2, 2, 1], [1, 1, 1, 1],
# "SAME"), and tf.gradients of sum(output * arange) with respect to X
X = np.array([[[[1, 10], [3, 10]], [[3, 2], [0, 9]], [[5, 1], [5, 1]]],
              [[[7, 0], [7, 0]], [[1, 2], [3, 4]], [[0, 0], [8, 8]]]], np.float32)
TF_OUTPUT = [3, 10, 3, 10, 5, 9, 5, 9, 5, 1, 5, 1, 7, 4, 7, 4, 8, 8, 8, 8, 8, 8, 8, 8]
TF_ARGMAX = [2, 1, 2, 3, 8, 7, 10, 7, 8, 9, 10, 11, 0, 7, 2, 7, 10, 11, 10, 11, 10, 11, 10, 11]
TF_GRAD = [0, 1, 2, 3, 0, 0, 0, 12, 12, 9, 16, 11, 12, 0, 14, 0, 0, 0, 0, 28, 0, 0, 76, 80]


def test_matches_tensorflow_with_ties(sess):
    x = tf.constant(X)
    out, arg = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
    assert type(tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")).__name__ \
        == "MaxPoolWithArgmax"
    assert out.name == "MaxPoolWithArgmax:0" and arg.name == "MaxPoolWithArgmax:1"
    assert arg.dtype == tf.int64 and out.shape.as_list() == [2, 3, 2, 2]
    weights = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2))
    grad = tf.gradients(tf.reduce_sum(out * weights), x)[0]
    o, a, g = sess.run([out, arg, grad])
    assert o.reshape(-1).tolist() == TF_OUTPUT
    assert a.reshape(-1).tolist() == TF_ARGMAX
    assert g.reshape(-1).tolist() == TF_GRAD


@pytest.mark.parametrize("ksize,strides,padding,with_batch,dtype", [
    ([1, 3, 3, 1], [1, 2, 2, 1], "SAME", False, tf.int64),
    ([1, 2, 3, 1], [1, 2, 1, 1], "VALID", True, tf.int32),
    ([1, 1, 1, 1], [1, 1, 1, 1], "VALID", True, tf.int64),
])
def test_against_the_loop_reference(sess, ksize, strides, padding, with_batch, dtype):
    rs = np.random.RandomState(0)
    x = rs.randint(0, 4, (2, 5, 6, 3)).astype(np.float64)  # many ties
    out, arg = tf.nn.max_pool_with_argmax(x, ksize, strides, padding, output_dtype=dtype,
                                          include_batch_in_index=with_batch)
    o, a = sess.run([out, arg])
    want_o, want_a = _reference(x, ksize, strides, padding, with_batch)
    assert a.dtype == dtype.as_numpy_dtype and out.shape.as_list() == list(want_o.shape)
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(a, want_a)
    # the gradient: each output's gradient added at its argmax
    dy = rs.rand(*o.shape)
    g = sess.run(tf.gradients(out, out.op.inputs[0], grad_ys=dy)[0])
    want_g = np.zeros(x.size)
    flat = want_a.reshape(len(x), -1) + (0 if with_batch else
                                         (np.arange(len(x)) * x[0].size)[:, None])
    np.add.at(want_g, flat.reshape(-1), dy.reshape(-1))
    np.testing.assert_allclose(g.reshape(-1), want_g, rtol=1e-12)


def test_integer_input_and_unknown_dims(sess):
    x = tf.placeholder(tf.int32, [None, 4, None, 2])
    out, arg = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                          Targmax=tf.int32)
    assert out.shape.as_list() == [None, 2, None, 2] and arg.dtype == tf.int32
    xv = np.arange(32, dtype=np.int32).reshape(1, 4, 4, 2)[:, :, ::-1]
    o, a = sess.run([out, arg], {x: xv})
    want_o, want_a = _reference(xv, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", False)
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(a, want_a)


def test_errors(sess):
    x = tf.constant(X)
    with pytest.raises(ValueError, match="other  than 'NHWC' are not supported"):
        tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME", data_format="NCHW")
    with pytest.raises(TypeError, match="Expected list for 'ksize'"):
        tf.nn.max_pool_with_argmax(x, 2, [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME", Targmax=tf.int32,
                                   output_dtype=tf.int64)
    with pytest.raises(ValueError, match="ksize attribute to contain 4 values"):
        tf.nn.max_pool_with_argmax(x, [2, 2], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.max_pool_with_argmax(tf.zeros([1, 1, 1, 1]), [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    # an argmax outside the input, fed to the gradient op
    from tensorweave.framework.op_builder import apply_op
    bad = apply_op("MaxPoolGradWithArgmax",
                   [x, tf.ones([2, 3, 2, 2]), tf.fill([2, 3, 2, 2], tf.constant(99, tf.int64))],
                   {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "SAME"}).outputs[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="argmax value 99 which is out"):
        sess.run(bad)


@pytest.mark.parametrize("shape", [(0, 2, 2, 1), (1, 0, 2, 1), (1, 2, 2, 0)])
def test_empty_input_is_refused_at_run_time(sess, shape):
    # TF 2.21's CPU kernel: InvalidArgumentError "tensor_in must not be empty", even for a
    # zero batch that max_pool accepts
    x = tf.placeholder(tf.float32, [None, None, None, None])
    y = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_in must not be empty"):
        sess.run(y, {x: np.ones(shape, np.float32)})


def test_empty_output_from_a_non_empty_input(sess):
    # a 1-row input under a 2-row VALID window pools to nothing, without an error (TF 2.21)
    x = tf.placeholder(tf.float32, [None, None, None, None])
    out, argmax = sess.run(tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                           {x: np.ones((1, 1, 2, 1), np.float32)})
    assert out.shape == (1, 0, 1, 1) and argmax.shape == (1, 0, 1, 1)
