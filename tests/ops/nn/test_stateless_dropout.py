"""tf.nn.experimental.stateless_dropout and general_dropout: TF's values, graph, errors
and gradients.

Every expected value is a literal recorded from TF 2.21 (`tensorflow.compat.v1`, graph
mode, CPU) with the call written next to it.
"""
import functools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

X = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
SD = tf.nn.experimental.stateless_dropout
GD = tf.nn.experimental.general_dropout

# (build, TF 2.21's value)
VALUE_CASES = {
    # stateless_dropout(X, 0.5, seed=[1, 2]) (also with an int64 seed, rng_alg="philox")
    "rate_half": (lambda: SD(X, 0.5, seed=[1, 2]),
                  [[2, 0, 6, 0], [0, 12, 0, 0], [0, 0, 0, 0]]),
    "int64_seed": (lambda: SD(X, 0.5, seed=tf.constant([1, 2], tf.int64)),
                   [[2, 0, 6, 0], [0, 12, 0, 0], [0, 0, 0, 0]]),
    "philox": (lambda: SD(X, 0.5, seed=[1, 2], rng_alg="philox"),
               [[2, 0, 6, 0], [0, 12, 0, 0], [0, 0, 0, 0]]),
    # stateless_dropout(X, 0.3, seed=[7, 11])
    "rate_0.3": (lambda: SD(X, 0.3, seed=[7, 11]),
                 np.array([[1.4285715, 0, 4.285714, 0], [7.1428576, 8.571428, 0, 11.428572],
                           [12.857143, 14.285715, 15.714286, 17.142857]], np.float32)),
    # stateless_dropout(X.astype(float64), 0.25, seed=[-4, 9]): nothing dropped; TF
    # multiplies by 1 / 0.75 (which rounds differently from dividing by 0.75)
    "float64": (lambda: SD(X.astype(np.float64), 0.25, seed=[-4, 9]),
                X.astype(np.float64) * (1 / 0.75)),
    # stateless_dropout(X.astype(float16), 0.7, seed=[3, 3])
    "float16": (lambda: SD(X.astype(np.float16), 0.7, seed=[3, 3]),
                np.array([[3.333984375, 0, 0, 13.3359375], [16.671875, 20, 0, 0],
                          [0, 0, 36.6875, 40]], np.float16)),
    # stateless_dropout(linspace(-1, 1, 10) as [2, 5] float32, 0.2, seed=[123, 456])
    "negative_values": (lambda: SD(np.linspace(-1, 1, 10).astype(np.float32).reshape(2, 5),
                                   0.2, seed=[123, 456]),
                        np.array([[0, 0, -0.694444477558136, 0, -0.1388888955116272],
                                  [0, 0.4166666865348816, 0.694444477558136, 0, 1.25]],
                                 np.float32)),
    # stateless_dropout(X, 0.5, seed=[1, 0], noise_shape=[1, 4]): whole columns
    "noise_columns": (lambda: SD(X, 0.5, seed=[1, 0], noise_shape=[1, 4]),
                      [[2, 0, 6, 0], [10, 0, 14, 0], [18, 0, 22, 0]]),
    # stateless_dropout(X, 0.5, seed=[1, 0], noise_shape=[None, 1]): whole rows
    "noise_rows": (lambda: SD(X, 0.5, seed=[1, 0], noise_shape=[None, 1]),
                   [[2, 4, 6, 8], [0, 0, 0, 0], [18, 20, 22, 24]]),
    # stateless_dropout(X, tf.constant(0.4), seed=[5, 6])
    "rate_tensor": (lambda: SD(X, tf.constant(0.4), seed=[5, 6]),
                    np.array([[1.6666666, 0, 0, 0], [8.333333, 0, 0, 13.333333],
                              [0, 16.666666, 0, 0]], np.float32)),
    # general_dropout(X, 0.5, functools.partial(tf.random.stateless_uniform, seed=[1, 2]))
    "general_stateless": (lambda: GD(X, 0.5, functools.partial(tf.random.stateless_uniform,
                                                               seed=[1, 2])),
                          [[2, 0, 6, 0], [0, 12, 0, 0], [0, 0, 0, 0]]),
    # general_dropout(X[0], 0.5, lambda shape, dtype: tf.constant([.1, .5, .7, .49], dtype))
    "general_constant": (lambda: GD(X[0], 0.5, lambda shape, dtype: tf.constant(
        [0.1, 0.5, 0.7, 0.49], dtype)), [0, 4, 6, 0]),
    # general_dropout(X, 0.5, reshape([.1, .5, .7], shape), noise_shape=[3, 1])
    "general_noise": (lambda: GD(X, 0.5, lambda shape, dtype: tf.reshape(
        tf.constant([0.1, 0.5, 0.7], dtype), shape), noise_shape=[3, 1]),
        [[0, 0, 0, 0], [10, 12, 14, 16], [18, 20, 22, 24]]),
}


@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_dropout_gives_tf_values(sess, case):
    build, expected = VALUE_CASES[case]
    out = build()
    expected = np.asarray(expected, out.dtype.as_numpy_dtype)
    assert out.shape.as_list() == list(expected.shape)
    value = sess.run(out)
    assert value.dtype == expected.dtype
    np.testing.assert_array_equal(value, expected)


def test_fed_rate_tensor(sess):
    rate = tf.placeholder(tf.float32, [])
    out = SD(X, rate, seed=[5, 6])
    # stateless_dropout(X, placeholder, seed=[5, 6]) fed 0.4, then 1.0 (all dropped)
    np.testing.assert_array_equal(sess.run(out, {rate: 0.4}),
                                  sess.run(VALUE_CASES["rate_tensor"][0]()))
    np.testing.assert_array_equal(sess.run(out, {rate: 1.0}), np.zeros((3, 4), np.float32))


def test_graph_is_tf_composition(graph):
    out = SD(X, 0.5, seed=[1, 2])
    assert out.name == "stateless_dropout/SelectV2:0"
    keep, scaled, _ = out.op.inputs
    assert keep.op.type == "GreaterEqual" and scaled.op.type == "Mul"
    tensor_rate = SD(X, tf.constant(0.4), seed=[5, 6])
    assert tensor_rate.op.inputs[1].op.type == "RealDiv"
    assert GD(X, 0.5, lambda shape, dtype: tf.zeros(shape, dtype) + 0.6,
              name="mydrop").name == "mydrop/SelectV2:0"


def test_rate_zero_returns_x(graph):
    # TF: stateless_dropout(X, 0, ...) is the converted x, "stateless_dropout/x:0"
    out = SD(X, 0, seed=[5, 6])
    assert out.name == "stateless_dropout/x:0" and out.op.type == "Const"
    drawn = []
    same = GD(X[0], 0.0, lambda shape, dtype: drawn.append(shape))
    assert same.name == "general_dropout/x:0" and not drawn
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(out), X)


def test_static_shape_is_x_shape(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    assert SD(x, 0.5, seed=[1, 2]).shape.as_list() == [None, 4]
    assert SD(x, 0.5, seed=[1, 2], noise_shape=[1, 4]).shape.as_list() == [None, 4]


@pytest.mark.parametrize("build,error,message", [
    (lambda: SD(X, 1.0, seed=[5, 6]), ValueError,
     r"`rate` must be a scalar tensor or a float in the range \[0, 1\)\. Received: rate=1.0"),
    (lambda: SD(X, -0.1, seed=[5, 6]), ValueError,
     r"in the range \[0, 1\)\. Received: rate=-0.1"),
    (lambda: GD(X, 1.0, lambda shape, dtype: tf.zeros(shape, dtype)), ValueError,
     r"in the range \[0, 1\)\. Received: rate=1.0"),
    (lambda: SD(X, "a", seed=[5, 6]), ValueError,
     "`rate` must be a scalar or scalar tensor. Received: rate=a"),
    (lambda: SD(X, tf.constant([0.1, 0.2]), seed=[5, 6]), ValueError,
     r"Shape \(2,\) must have rank 0"),
    (lambda: SD(X, tf.constant(0.4, tf.float64), seed=[5, 6]), ValueError,
     "`x.dtype` must be compatible with `rate.dtype`. Received: x.dtype=<dtype: 'float32'> "
     "and rate.dtype=<dtype: 'float64'>"),
    (lambda: SD(X, tf.constant(1), seed=[5, 6]), ValueError,
     "rate.dtype=<dtype: 'int32'>"),
    (lambda: SD(np.arange(4), 0.5, seed=[5, 6]), ValueError,
     "`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
     "x_dtype=<dtype: 'int64'>"),
    (lambda: SD(X, 0.5, seed=[5, 6, 7]), ValueError, "Dimension must be 2 but is 3"),
    (lambda: SD(X, 0.5, seed=[5, 6], rng_alg="nope"), ValueError,
     "Argument `alg` got unsupported value nope"),
])
def test_build_errors(graph, build, error, message):
    with pytest.raises(error, match=message):
        build()


@pytest.mark.parametrize("dtype,tolerance", [(tf.float64, 1e-9), (tf.float32, 4e-3)])
def test_numeric_gradient_wrt_x(graph, dtype, tolerance):
    x0 = np.linspace(-2.0, 3.0, 20).reshape(4, 5)
    x = tf.constant(x0, dtype)
    for y in (SD(x, 0.4, seed=[3, 7]), SD(x, tf.constant(0.25, dtype), seed=[8, 1]),
              SD(x, 0.5, seed=[2, 2], noise_shape=[4, 1]),
              GD(x, 0.3, functools.partial(tf.random.stateless_uniform, seed=[4, 4]))):
        with tf.Session():
            assert compute_gradient_error(x, [4, 5], y, [4, 5], x_init_value=x0) < tolerance
        # the gradient is the mask scaled: 1 / (1 - rate) where kept, 0 where dropped
        grad, = tf.gradients(y, x)
        with tf.Session() as s:
            out, g = s.run([y, grad])
        kept = out != 0
        assert kept.any() and not kept.all()
        np.testing.assert_allclose(g[kept], (out / x0)[kept], rtol=1e-6)
        np.testing.assert_array_equal(g[~kept], 0)
