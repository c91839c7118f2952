"""tf.nn activations, softmax, bias_add, in_top_k, dropout, moments, batch_normalization
and l2_normalize against NumPy references; static shapes as TF1 infers them."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717
FLOAT_TOLERANCE = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}


def _ref_softplus(x):
    x = np.asarray(x, np.float64)
    return np.where(x > 30, x, np.log1p(np.exp(np.minimum(x, 30))))


ACTIVATIONS = {
    "relu": (lambda x: np.maximum(x, 0), ["float16", "float32", "float64", "int32", "int8",
                                          "uint8", "int64"]),
    "relu6": (lambda x: np.clip(x, 0, 6), ["float16", "float32", "float64", "int32"]),
    "elu": (lambda x: np.where(x < 0, np.exp(x) - 1, x), ["float16", "float32", "float64"]),
    "selu": (lambda x: SELU_SCALE * np.where(x < 0, SELU_ALPHA * (np.exp(x) - 1), x),
             ["float16", "float32", "float64"]),
    "leaky_relu": (lambda x: np.where(x > 0, x, 0.2 * x), ["float16", "float32", "float64"]),
    "softplus": (_ref_softplus, ["float16", "float32", "float64"]),
    "softsign": (lambda x: x / (1 + np.abs(x)), ["float16", "float32", "float64"]),
}
CASES = [(name, dtype) for name, (_, dtypes) in ACTIVATIONS.items() for dtype in dtypes]


def _values(dtype):
    if np.dtype(dtype).kind == "u":
        return np.array([[0, 3, 7, 200], [1, 6, 5, 9]], dtype=dtype)
    if np.dtype(dtype).kind == "i":
        return np.array([[-5, 3, 7, 0], [1, -6, 6, 9]], dtype=dtype)
    return np.array([[-3.5, -0.25, 0.0, 0.5], [2.0, 5.75, 6.5, -9.0]], dtype=dtype)


@pytest.mark.parametrize("name,dtype", CASES)
def test_activation_matches_numpy(sess, name, dtype):
    ref, _ = ACTIVATIONS[name]
    x = tf.placeholder(dtype, [None, 4])
    y = getattr(tf.nn, name)(x)
    assert y.dtype == tf.as_dtype(dtype)
    assert y.shape.as_list() == [None, 4]
    value = _values(dtype)
    out = sess.run(y, {x: value})
    assert out.dtype == np.dtype(dtype)
    expected = ref(value.astype(np.float64))
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(out, expected.astype(dtype))
    else:
        tol = FLOAT_TOLERANCE[np.dtype(dtype).type]
        np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_keeps_unknown_shape_and_names(graph, name):
    x = tf.placeholder(tf.float32)
    y = getattr(tf.nn, name)(x)
    assert y.shape.ndims is None
    assert getattr(tf.nn, name)(x, name="act").op.name == "act"


def test_activation_type_errors(graph):
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.nn.elu(tf.placeholder(tf.int32, [2]))
    with pytest.raises(TypeError, match="DataType bool not in list"):
        tf.nn.relu(tf.placeholder(tf.bool, [2]))
    with pytest.raises(TypeError, match="allowed values"):
        tf.nn.softplus(tf.placeholder(tf.int32, [2]))


def test_leaky_relu_alpha_and_integer_input(sess):
    x = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    np.testing.assert_allclose(sess.run(tf.nn.leaky_relu(x, alpha=0.01)),
                               np.where(x > 0, x, 0.01 * x))
    np.testing.assert_allclose(sess.run(tf.nn.leaky_relu(x, alpha=np.array(0.5))),
                               np.where(x > 0, x, 0.5 * x))
    y = tf.nn.leaky_relu(tf.constant([-2, 3]))
    assert y.dtype == tf.float32  # integers are cast to float32 first, as in TF
    np.testing.assert_allclose(sess.run(y), [-0.4, 3.0])


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.2, 1.0, 1.5, -0.3])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_leaky_relu_is_tfs_select_bit_for_bit(sess, alpha, dtype):
    # features > 0 ? features : features * alpha, at NaN, the infinities, signed zeros and
    # denormals too, whichever way the kernel computes it for this alpha
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 3e38, -7.5]
    x = np.concatenate([np.array(special), np.random.RandomState(1).randn(500) * 100])
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.where(x > 0, x, x * x.dtype.type(alpha))
    got = sess.run(tf.nn.leaky_relu(x, alpha=alpha))
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.itemsize]
    assert got.view(bits).tolist() == want.view(bits).tolist()


def test_softplus_and_elu_are_stable_for_large_inputs(sess):
    x = np.array([-1000.0, -100.0, 0.0, 100.0, 1000.0], np.float32)
    out = sess.run(tf.nn.softplus(x))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [0.0, np.exp(-100.0), np.log(2.0), 100.0, 1000.0],
                               rtol=1e-6, atol=1e-40)
    assert np.all(np.isfinite(sess.run(tf.nn.elu(x))))
    assert np.all(np.isfinite(sess.run(tf.nn.selu(x))))


def test_relu_propagates_nan(sess):
    out = sess.run(tf.nn.relu(np.array([np.nan, -1.0, 2.0], np.float32)))
    assert np.isnan(out[0]) and out[1] == 0 and out[2] == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(3, 4097), (2, 4096), (5000,), (3, 50, 60), (4096,)])
def test_relu_large_inputs_match_numpy(sess, dtype, shape):
    # large float32/float64 inputs take the kernel's blocked path (whole 4096-blocks, then
    # the rest); its results must equal NumPy's maximum(x, 0), NaN and signed zeros included
    x = np.random.randn(*shape).astype(dtype)
    x.flat[[0, 1, 7, x.size - 1]] = [np.nan, np.inf, -0.0, -np.inf]
    y = tf.nn.relu(x)
    got = sess.run(y)
    assert type(got) is np.ndarray and got.dtype == dtype and got.shape == shape
    assert y.shape.as_list() == list(shape)
    want = np.maximum(x, dtype(0))
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got.flat[0]) and got.flat[x.size - 1] == 0


def test_relu_kernel_on_strided_input_leaves_it_unchanged():
    from tensorweave.ops.nn import nn_ops

    class _Ctx:
        xp = np
    x = np.random.randn(80, 120).astype(np.float32)
    keep = x.copy()
    for view in (x, x.T, x[:, ::2]):
        got = nn_ops._relu_kernel(_Ctx(), view)
        np.testing.assert_array_equal(got, np.maximum(view, 0))
        assert got.shape == view.shape and got.dtype == np.float32
    np.testing.assert_array_equal(x, keep)


# --- softmax / log_softmax -------------------------------------------------------------------
def _np_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_numpy(sess, dtype, log):
    fn = tf.nn.log_softmax if log else tf.nn.softmax
    x = tf.placeholder(dtype, [None, 5])
    y = fn(x)
    assert y.dtype == tf.as_dtype(dtype) and y.shape.as_list() == [None, 5]
    value = np.random.randn(3, 5).astype(dtype) * 3
    out = sess.run(y, {x: value})
    assert out.dtype == np.dtype(dtype)
    expected = _np_softmax(value.astype(np.float64))
    expected = np.log(expected) if log else expected
    tol = FLOAT_TOLERANCE[np.dtype(dtype).type] * 5
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tol, atol=tol)


def test_softmax_large_logits_are_stable(sess):
    x = np.array([[1000.0, 1000.0, -1000.0], [-5000.0, 0.0, 5000.0]], np.float32)
    out = sess.run(tf.nn.softmax(x))
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    log_out = sess.run(tf.nn.log_softmax(x))
    np.testing.assert_allclose(log_out[0], [np.log(0.5), np.log(0.5), -2000.0 + np.log(0.5)],
                               rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, -2, -3])
def test_softmax_on_other_axis(sess, axis):
    value = np.random.randn(2, 3, 4)
    x = tf.placeholder(tf.float64, [2, None, 4])
    y = tf.nn.softmax(x, axis=axis)
    assert y.shape.as_list() == [2, None, 4]
    np.testing.assert_allclose(sess.run(y, {x: value}), _np_softmax(value, axis))
    z = tf.nn.log_softmax(x, dim=axis)
    np.testing.assert_allclose(sess.run(z, {x: value}), np.log(_np_softmax(value, axis)))


def test_softmax_on_other_axis_with_unknown_rank(sess):
    value = np.random.randn(2, 3, 4)
    x = tf.placeholder(tf.float64)
    for axis in (0, 1, -2):
        y = tf.nn.softmax(x, axis=axis)
        assert y.shape.ndims is None
        np.testing.assert_allclose(sess.run(y, {x: value}), _np_softmax(value, axis))


def test_softmax_errors(graph):
    with pytest.raises(ValueError, match="at least rank 1 but is rank 0"):
        tf.nn.softmax(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"`dim` must be in the range \[-2, 2\).*Received: dim=2"):
        tf.nn.softmax(tf.placeholder(tf.float32, [2, 3]), axis=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Received: dim=-3"):
        tf.nn.log_softmax(tf.placeholder(tf.float32, [2, 3]), axis=-3)
    with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
        tf.nn.softmax(tf.placeholder(tf.float32, [2, 3]), axis=1, dim=1)
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.nn.softmax(tf.placeholder(tf.int32, [2, 3]))


def test_softmax_exports(graph):
    assert tf.math.softmax is tf.nn.softmax
    assert tf.math.log_softmax is tf.nn.log_softmax
    assert tf.math.softplus is tf.nn.softplus and tf.math.softsign is tf.nn.softsign
    assert tf.math.in_top_k is tf.nn.in_top_k
    assert tf.math.l2_normalize is tf.nn.l2_normalize is tf.linalg.l2_normalize
    assert tf.nn.softmax(tf.placeholder(tf.float32, [2, 3]), name="sm").op.name == "sm"


def test_softmax_empty_input(sess):
    out = sess.run(tf.nn.softmax(np.zeros((2, 0), np.float32)))
    assert out.shape == (2, 0)


# --- bias_add --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "complex64"])
def test_bias_add_nhwc(sess, dtype):
    value = (np.arange(24).reshape(2, 3, 4) - 10).astype(dtype)
    bias = np.array([1, -2, 3, 5]).astype(dtype)
    y = tf.nn.bias_add(value, bias)
    assert y.dtype == tf.as_dtype(dtype) and y.shape.as_list() == [2, 3, 4]
    out = sess.run(y)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, value + bias)


def test_bias_add_nchw(sess):
    value = np.random.randn(2, 3, 4, 5)
    bias = np.array([1.0, -2.0, 3.0])
    y = tf.nn.bias_add(value, bias, data_format="NCHW")
    assert y.shape.as_list() == [2, 3, 4, 5]
    np.testing.assert_allclose(sess.run(y), value + bias.reshape(3, 1, 1))
    y3 = tf.nn.bias_add(value[:, :, :, 0], bias, data_format="NCW")
    np.testing.assert_allclose(sess.run(y3), value[:, :, :, 0] + bias.reshape(3, 1))


def test_bias_add_static_shapes(graph):
    b = tf.placeholder(tf.float32, [3])
    assert tf.nn.bias_add(tf.placeholder(tf.float32, [None, None]), b).shape.as_list() == \
        [None, 3]
    assert tf.nn.bias_add(tf.placeholder(tf.float32), b).shape.ndims is None
    nchw = tf.nn.bias_add(tf.placeholder(tf.float32, [None, None, 4]), b, data_format="NCHW")
    assert nchw.shape.as_list() == [None, 3, 4]


def test_bias_add_build_errors(graph):
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [4]))
    with pytest.raises(ValueError, match="at least rank 2 but is rank 1"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [3]))
    with pytest.raises(ValueError, match="must be rank 1 but is rank 2"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [1, 3]))
    with pytest.raises(ValueError, match="at least rank 3 but is rank 2"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [3]),
                       data_format="NCHW")
    with pytest.raises(ValueError, match="must be of the form `N...C` or `NC...`"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [2, 3]), [1.0, 2, 3], data_format="XYZ")
    with pytest.raises((TypeError, ValueError), match="float64"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float64, [3]))


def test_bias_add_run_time_mismatch(sess):
    v = tf.placeholder(tf.float32, [None, None])
    b = tf.placeholder(tf.float32, [None])
    y = tf.nn.bias_add(v, b)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Must provide as many biases as the last dimension of the input "
                             r"tensor: \[4\] vs. \[2,3\]"):
        sess.run(y, {v: np.ones((2, 3)), b: np.ones(4)})


# --- in_top_k --------------------------------------------------------------------------------
def test_in_top_k_values(sess):
    predictions = tf.placeholder(tf.float32, [None, None])
    targets = tf.placeholder(tf.int32, [None])
    k = tf.placeholder(tf.int32, [])
    y = tf.nn.in_top_k(predictions, targets, k)
    assert y.dtype == tf.bool and y.shape.as_list() == [None]
    p = np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.3], [0.9, 0.05, 0.05], [1.0, np.nan, 0.2],
                  [1.0, 2.0, 3.0]], np.float32)
    t = np.array([2, 1, 0, 0, 7], np.int32)

    def reference(kk):
        out = []
        for row, target in zip(p, t):
            if not 0 <= target < 3 or not np.all(np.isfinite(row)):
                out.append(False)
            else:
                out.append(int(np.sum(row > row[target])) < kk)
        return out
    for kk in (0, 1, 2, 3, 5, -1):
        np.testing.assert_array_equal(sess.run(y, {predictions: p, targets: t, k: kk}),
                                      reference(kk))


def test_in_top_k_int64_and_static_shapes(sess):
    y = tf.nn.in_top_k(tf.constant([[1.0, 2.0], [4.0, 3.0]]),
                       tf.constant([1, 1], tf.int64), 1)
    assert y.shape.as_list() == [2]
    np.testing.assert_array_equal(sess.run(y), [True, False])
    unknown = tf.nn.in_top_k(tf.placeholder(tf.float32), tf.placeholder(tf.int64), 1)
    assert unknown.shape.as_list() == [None]


def test_in_top_k_errors(sess):
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.nn.in_top_k(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.int32, [3]), 1)
    with pytest.raises(ValueError, match="must be rank 2 but is rank 3"):
        tf.nn.in_top_k(tf.placeholder(tf.float32, [2, 3, 4]), tf.placeholder(tf.int32, [2]), 1)
    with pytest.raises(TypeError, match="float64"):
        tf.nn.in_top_k(tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.int32, [2]), 1)
    p = tf.placeholder(tf.float32, [None, None])
    t = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="First dimension of predictions 2 must match length of targets 3"):
        sess.run(tf.nn.in_top_k(p, t, 1), {p: np.zeros((2, 3)), t: [0, 1, 2]})


def test_in_top_k_is_not_differentiable(graph):
    p = tf.constant([[1.0, 2.0]])
    y = tf.cast(tf.nn.in_top_k(p, [1], 1), tf.float32)
    assert tf.gradients(y, p) == [None]


# --- gradients -------------------------------------------------------------------------------
GRAD_INPUT = np.array([[-2.3, -0.7, 0.4, 1.3], [2.2, 5.6, 6.4, -0.2]])


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradient(graph, name):
    x = tf.placeholder(tf.float64, [2, 4])
    y = getattr(tf.nn, name)(x)
    with tf.Session(graph=graph):
        err = compute_gradient_error(x, [2, 4], y, [2, 4], x_init_value=GRAD_INPUT)
    assert err < 1e-6


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_second_order(graph, name):
    # d/dx of the first gradient goes through the gradient op's own gradient.
    x = tf.placeholder(tf.float64, [2, 4])
    y = getattr(tf.nn, name)(x)
    weights = tf.constant(np.linspace(0.5, 2.0, 8).reshape(2, 4))
    first = tf.gradients(tf.reduce_sum(tf.square(y) * weights), x)[0]
    with tf.Session(graph=graph):
        err = compute_gradient_error(x, [2, 4], first, [2, 4], x_init_value=GRAD_INPUT)
    assert err < 1e-5


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradient_op_is_linear_in_upstream(graph, name):
    # The gradient with respect to the upstream gradient (first input of XGrad).
    x = tf.constant(GRAD_INPUT)
    dy = tf.placeholder(tf.float64, [2, 4])
    first = tf.gradients(getattr(tf.nn, name)(x), x, grad_ys=dy)[0]
    with tf.Session(graph=graph):
        err = compute_gradient_error(dy, [2, 4], first, [2, 4])
    assert err < 1e-6


def test_relu_second_derivative_values(sess):
    x = tf.constant([-1.0, 2.0, 3.0])
    g = tf.gradients(tf.reduce_sum(tf.square(tf.nn.relu(x))), x)[0]
    np.testing.assert_allclose(sess.run(g), [0.0, 4.0, 6.0])
    h = tf.gradients(g, x)[0]
    np.testing.assert_allclose(sess.run(h), [0.0, 2.0, 2.0])


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_gradient(graph, axis, log):
    fn = tf.nn.log_softmax if log else tf.nn.softmax
    x = tf.placeholder(tf.float64, [3, 4])
    y = fn(x, axis=axis)
    with tf.Session(graph=graph):
        err = compute_gradient_error(x, [3, 4], y, [3, 4],
                                     x_init_value=np.random.randn(3, 4))
    assert err < 1e-6


def test_softmax_second_order(graph):
    x = tf.placeholder(tf.float64, [2, 3])
    w = tf.constant([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], tf.float64)
    first = tf.gradients(tf.reduce_sum(tf.nn.softmax(x) * w), x)[0]
    with tf.Session(graph=graph):
        err = compute_gradient_error(x, [2, 3], first, [2, 3],
                                     x_init_value=np.random.randn(2, 3))
    assert err < 1e-6


@pytest.mark.parametrize("data_format,shape,channels", [("NHWC", [2, 3, 4], 4),
                                                         ("NCHW", [2, 3, 2, 2], 3)])
def test_bias_add_gradient(graph, data_format, shape, channels):
    v = tf.placeholder(tf.float64, shape)
    b = tf.placeholder(tf.float64, [channels])
    y = tf.nn.bias_add(v, b, data_format=data_format)
    init = [np.random.randn(*shape), np.random.randn(channels)]
    with tf.Session(graph=graph):
        err = compute_gradient_error([v, b], [shape, [channels]], y, shape, x_init_value=init)
    assert err < 1e-6
    # BiasAddGrad's own gradient (second order of the bias path).
    dy = tf.placeholder(tf.float64, shape)
    db = tf.gradients(y, b, grad_ys=dy)[0]
    with tf.Session(graph=graph):
        err = compute_gradient_error(dy, shape, db, [channels])
    assert err < 1e-6


def test_bias_add_grad_values(sess):
    v = tf.constant(np.ones((2, 3, 4), np.float32))
    b = tf.constant(np.zeros(4, np.float32))
    g = tf.gradients(tf.nn.bias_add(v, b), b)[0]
    assert g.shape.as_list() == [4]
    np.testing.assert_allclose(sess.run(g), [6.0, 6.0, 6.0, 6.0])
    v16 = tf.constant(np.ones((2, 3, 4), np.float16))
    g16 = tf.gradients(tf.nn.bias_add(v16, tf.constant(np.zeros(3, np.float16)),
                                      data_format="NCHW"), v16)[0]
    b16 = tf.constant(np.zeros(3, np.float16))
    gb16 = tf.gradients(tf.nn.bias_add(v16, b16, data_format="NCHW"), b16)[0]
    out, outb = sess.run([g16, gb16])
    assert out.dtype == np.float16 and outb.dtype == np.float16
    np.testing.assert_allclose(outb, [8.0, 8.0, 8.0])


# --- dropout ---------------------------------------------------------------------------------
def test_dropout_statistics_with_fixed_seed(sess):
    x = tf.placeholder(tf.float32, [None, 100])
    y = tf.nn.dropout(x, keep_prob=0.7, seed=3)
    assert y.shape.as_list() == [None, 100] and y.dtype == tf.float32
    out = sess.run(y, {x: np.ones((200, 100), np.float32)})
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.015
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    # the mean is preserved in expectation
    assert abs(out.mean() - 1.0) < 0.03
    # a new run draws a new mask
    assert not np.array_equal(out, sess.run(y, {x: np.ones((200, 100), np.float32)}))


def test_dropout_is_reproducible_with_graph_and_op_seeds():
    def run_once():
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(7)
            y = tf.nn.dropout(tf.ones([50, 40]), rate=0.4, seed=11)
            with tf.Session() as s:
                return s.run(y)
    a, b = run_once(), run_once()
    np.testing.assert_array_equal(a, b)
    assert abs((a != 0).mean() - 0.6) < 0.03
    np.testing.assert_allclose(a[a != 0], 1 / 0.6, rtol=1e-6)


def test_dropout_noise_shape_drops_whole_rows(sess):
    y = tf.nn.dropout(tf.ones([300, 8], tf.float64), keep_prob=0.5, noise_shape=[300, 1],
                      seed=1)
    out = sess.run(y)
    assert out.dtype == np.float64
    assert np.all((out == 0).all(axis=1) | (out == 2.0).all(axis=1))
    assert 0.35 < (out[:, 0] != 0).mean() < 0.65
    x = tf.placeholder(tf.float32, [2, None])
    assert tf.nn.dropout(x, 0.5, noise_shape=[2, 1]).shape.as_list() == [2, None]
    z = tf.nn.dropout(tf.ones([4, 3]), 0.5, noise_shape=[None, 1], seed=2)
    assert z.shape.as_list() == [4, 3]


def test_dropout_keep_prob_tensor(sess):
    keep = tf.placeholder(tf.float32, [])
    y = tf.nn.dropout(tf.ones([100, 100]), keep_prob=keep, seed=5)
    out = sess.run(y, {keep: 0.25})
    assert abs((out != 0).mean() - 0.25) < 0.02
    np.testing.assert_allclose(out[out != 0], 4.0)
    np.testing.assert_allclose(sess.run(y, {keep: 1.0}), np.ones((100, 100)))


def test_dropout_keep_prob_one_returns_input(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    assert tf.nn.dropout(x, rate=0.0) is x


def test_dropout_errors(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    for keep in (0.0, 1.5, -0.5):
        with pytest.raises(ValueError, match=r"`rate` must be a scalar tensor or a float in "
                                             r"the range \[0, 1\)"):
            tf.nn.dropout(x, keep_prob=keep)
    with pytest.raises(ValueError, match="`rate` must be provided"):
        tf.nn.dropout(x)
    with pytest.raises(ValueError, match="Cannot specify both 'keep_prob' and 'rate'"):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="must be a floating point tensor"):
        tf.nn.dropout(tf.placeholder(tf.int32, [2]), keep_prob=0.5)
    with pytest.raises(ValueError, match="`keep_prob` must be a floating point number"):
        tf.nn.dropout(x, keep_prob="a")


def test_dropout_gradient_is_the_scaled_mask(sess):
    x = tf.constant(np.arange(1.0, 201.0).reshape(20, 10))
    y = tf.nn.dropout(x, keep_prob=0.6, seed=9)
    g = tf.gradients(y, x)[0]
    out, grad = sess.run([y, g])
    np.testing.assert_allclose(grad, out / np.arange(1.0, 201.0).reshape(20, 10))
    assert set(np.unique(np.round(grad, 6))) <= {0.0, round(1 / 0.6, 6)}


# --- moments, batch_normalization, l2_normalize ----------------------------------------------
@pytest.mark.parametrize("axes,keep", [([0], False), ([0, 2], False), ([1], True),
                                       ([0, 1, 2], False)])
def test_moments_values(sess, axes, keep):
    value = np.random.randn(3, 4, 5) * 2 + 1
    mean, var = tf.nn.moments(tf.constant(value), axes, keep_dims=keep)
    m, v = sess.run([mean, var])
    np.testing.assert_allclose(m, value.mean(axis=tuple(axes), keepdims=keep))
    np.testing.assert_allclose(v, value.var(axis=tuple(axes), keepdims=keep))
    assert mean.shape.as_list() == list(m.shape) and var.shape.as_list() == list(v.shape)


def test_moments_static_shapes_and_float16(sess):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.nn.moments(x, [1])[1].shape.as_list() == [None, 4]
    assert tf.nn.moments(x, [0, 2], keepdims=True)[0].shape.as_list() == [1, 3, 1]
    h = tf.placeholder(tf.float16, [None, 3])
    mean, var = tf.nn.moments(h, [0])
    assert mean.dtype == tf.float16 and var.dtype == tf.float16
    value = (np.random.randn(64, 3) * 100).astype(np.float16)
    m, v = sess.run([mean, var], {h: value})
    np.testing.assert_allclose(m, value.astype(np.float64).mean(0), rtol=2e-3, atol=0.1)
    np.testing.assert_allclose(v, value.astype(np.float64).var(0), rtol=2e-3)
    with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and 'keepdims'"):
        tf.nn.moments(x, [0], keep_dims=True, keepdims=True)


def test_moments_gradient(graph):
    x = tf.placeholder(tf.float64, [3, 4])
    mean, var = tf.nn.moments(x, [0])
    with tf.Session(graph=graph):
        init = np.random.randn(3, 4)
        assert compute_gradient_error(x, [3, 4], mean, [4], x_init_value=init) < 1e-6
        assert compute_gradient_error(x, [3, 4], var, [4], x_init_value=init) < 1e-6


def test_batch_normalization_values(sess):
    x = np.random.randn(4, 3)
    mean, var = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, 4.0])
    offset, scale = np.array([0.1, 0.2, 0.3]), np.array([2.0, 0.5, 1.0])
    y = tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    np.testing.assert_allclose(sess.run(y), (x - mean) / np.sqrt(var + 1e-3) * scale + offset)
    y = tf.nn.batch_normalization(x, mean, var, None, None, 1e-3)
    np.testing.assert_allclose(sess.run(y), (x - mean) / np.sqrt(var + 1e-3))
    x32 = tf.placeholder(tf.float32, [None, 3])
    y32 = tf.nn.batch_normalization(x32, 0.0, 1.0, 0.0, 1.0, 1e-3)
    assert y32.dtype == tf.float32 and y32.shape.as_list() == [None, 3]


def test_batch_normalization_gradient(graph):
    shapes = [[4, 3], [3], [3], [3], [3]]
    xs = [tf.placeholder(tf.float64, s) for s in shapes]
    y = tf.nn.batch_normalization(xs[0], xs[1], xs[2], xs[3], xs[4], 1e-3)
    init = [np.random.randn(4, 3), np.random.randn(3), np.random.rand(3) + 0.5,
            np.random.randn(3), np.random.randn(3)]
    with tf.Session(graph=graph):
        assert compute_gradient_error(xs, shapes, y, [4, 3], x_init_value=init) < 1e-5


def test_l2_normalize_values(sess):
    x = np.random.randn(3, 4)
    np.testing.assert_allclose(sess.run(tf.nn.l2_normalize(x, axis=1)),
                               x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_allclose(sess.run(tf.nn.l2_normalize(x, dim=0)),
                               x / np.linalg.norm(x, axis=0, keepdims=True))
    np.testing.assert_allclose(sess.run(tf.nn.l2_normalize(x)), x / np.linalg.norm(x))
    zeros = sess.run(tf.nn.l2_normalize(np.zeros((2, 3), np.float32), 1))
    np.testing.assert_array_equal(zeros, np.zeros((2, 3)))
    p = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.nn.l2_normalize(p, 1).shape.as_list() == [None, 3, 4]
    assert tf.nn.l2_normalize(p, 1, name="norm").name == "norm:0"


def test_l2_normalize_gradient(graph):
    x = tf.placeholder(tf.float64, [3, 4])
    y = tf.nn.l2_normalize(x, 1)
    with tf.Session(graph=graph):
        err = compute_gradient_error(x, [3, 4], y, [3, 4], x_init_value=np.random.randn(3, 4))
    assert err < 1e-6


# --- crelu, xw_plus_b, relu_layer ------------------------------------------------------------
def test_crelu(sess):
    x = np.array([[1.0, -2.0, 0.5]], np.float32)
    y = tf.nn.crelu(x)
    assert y.shape.as_list() == [1, 6] and y.op.name == "CRelu/Relu"
    np.testing.assert_allclose(sess.run(y), np.maximum(np.concatenate([x, -x], -1), 0))
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.nn.crelu(p, axis=0).shape.as_list() == [None, 3]
    np.testing.assert_allclose(sess.run(tf.nn.crelu(p, axis=0), {p: x}),
                               np.maximum(np.concatenate([x, -x], 0), 0))


def test_xw_plus_b_and_relu_layer(sess):
    x, w, b = np.random.randn(4, 3), np.random.randn(3, 2), np.random.randn(2)
    y = tf.nn.xw_plus_b(x, w, b, name="logits")
    assert y.name == "logits:0" and y.shape.as_list() == [4, 2]
    np.testing.assert_allclose(sess.run(y), x @ w + b)
    r = tf.nn.relu_layer(x, w, b)
    assert r.name == "relu_layer:0"
    np.testing.assert_allclose(sess.run(r), np.maximum(x @ w + b, 0))


def test_layer_gradients(graph):
    shapes = [[4, 3], [3, 2], [2]]
    xs = [tf.placeholder(tf.float64, s) for s in shapes]
    init = [np.random.randn(*s) for s in shapes]
    with tf.Session(graph=graph):
        y = tf.nn.xw_plus_b(*xs)
        assert compute_gradient_error(xs, shapes, y, [4, 2], x_init_value=init) < 1e-6
        c = tf.nn.crelu(xs[0])
        assert compute_gradient_error(xs[0], [4, 3], c, [4, 6], x_init_value=init[0]) < 1e-6


def test_every_nn_op_is_complete():
    from tensorweave.framework import registry
    for op_type in ["Relu", "ReluGrad", "Relu6", "Relu6Grad", "Elu", "EluGrad", "Selu",
                    "SeluGrad", "LeakyRelu", "LeakyReluGrad", "Softplus", "SoftplusGrad",
                    "Softsign", "SoftsignGrad", "Softmax", "LogSoftmax", "BiasAdd",
                    "BiasAddGrad", "InTopKV2"]:
        assert registry.get_op_def(op_type).shape_fn is not None, op_type
        assert registry.has_kernel(op_type), op_type
        assert registry.has_gradient_entry(op_type), op_type


def test_relu_grads_multiply_by_the_mask_as_tensorflow(sess):
    # TF computes ReluGrad as gradients * (features > 0): an inf or NaN gradient where
    # the feature is not positive gives NaN (values recorded from TensorFlow 2.21)
    from tensorweave.framework.op_builder import apply_op
    g = np.array([1, np.inf, np.nan, 2], np.float32)
    f = np.array([1, -1, 0, 3], np.float32)
    relu = sess.run(apply_op("ReluGrad", [tf.constant(g), tf.constant(f)]).outputs[0])
    f6 = np.array([1, -1, 0, 7], np.float32)
    relu6 = sess.run(apply_op("Relu6Grad", [tf.constant(g), tf.constant(f6)]).outputs[0])
    np.testing.assert_array_equal(relu, [1, np.nan, np.nan, 2])
    np.testing.assert_array_equal(relu6, [1, np.nan, np.nan, 0])
    assert relu.dtype == np.float32


def test_relu_grad_keeps_signed_zeros_and_nan_features_as_tensorflow(sess):
    # values recorded from TensorFlow 2.21: a non-positive or NaN feature multiplies the
    # gradient by 0 (a negative gradient gives -0.0)
    from tensorweave.framework.op_builder import apply_op
    g = np.array([1, -2, np.inf, np.nan, 3, -4], np.float32)
    f = np.array([1, 0, -1, 2, np.nan, -0.0], np.float32)
    got = sess.run(apply_op("ReluGrad", [tf.constant(g), tf.constant(f)]).outputs[0])
    np.testing.assert_array_equal(got, [1, 0, np.nan, np.nan, 0, 0])
    zeros = got == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), [1, 0, 1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32", "int8"])
def test_relu_grad_dtypes(sess, dtype):
    from tensorweave.framework.op_builder import apply_op
    rs = np.random.RandomState(0)
    np_dtype = tf.as_dtype(dtype).as_numpy_dtype
    g = rs.randint(-5, 6, (3, 7, 5)).astype(np_dtype)
    f = rs.randint(-2, 3, (3, 7, 5)).astype(np_dtype)
    got = sess.run(apply_op("ReluGrad", [tf.constant(g), tf.constant(f)]).outputs[0])
    assert got.dtype == np_dtype
    want = g.astype(np.float64) * (f.astype(np.float64) > 0)
    np.testing.assert_array_equal(got.astype(np.float64), want)


def test_l2_normalize_of_complex_values(sess):
    x0 = np.array([[1 + 1j, 2 - 1j], [0.5j, 3.0]], np.complex128)
    got = sess.run(tf.nn.l2_normalize(tf.constant(x0), axis=1))
    want = x0 / np.sqrt((np.abs(x0) ** 2).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert sess.run(tf.nn.l2_normalize(tf.constant([0j]))).tolist() == [0j]


def test_dropout_of_a_fed_rate_of_one_or_more_drops_everything(sess):
    """TF 2's mask (keep where U >= rate): keep_prob 0 or rate >= 1 give zeros, not NaN."""
    keep = tf.placeholder(tf.float32, [])
    rate = tf.placeholder(tf.float32, [])
    assert sess.run(tf.nn.dropout(tf.ones([3]), keep_prob=keep), {keep: 0.0}).tolist() == \
        [0.0] * 3
    assert sess.run(tf.nn.dropout(tf.ones([4]), rate=rate), {rate: 1.5}).tolist() == [0.0] * 4
    kept = sess.run(tf.nn.dropout(tf.ones([20000]), rate=rate, seed=3), {rate: 0.25})
    assert set(np.unique(kept).tolist()) == {0.0, np.float32(1 / 0.75)}
    assert abs((kept > 0).mean() - 0.75) < 0.02


def test_weighted_cross_entropy_gradient_is_tfs_at_zero_logits(sess):
    """TF writes log(1 + e^-x) as log1p(e^-|x|) + relu(-x): its gradient at x = 0 is the
    subgradient 0 of abs and relu, elsewhere the derivative."""
    z = tf.constant([0.0, 1.0, -2.0])
    loss = tf.nn.weighted_cross_entropy_with_logits(labels=[1.0, 0.0, 1.0], logits=z,
                                                    pos_weight=3.0)
    got = sess.run(tf.gradients(loss, z)[0])
    sig = 1 / (1 + np.exp(-np.array([1.0, -2.0])))
    # d/dx [(1 - l) x + (1 + (q - 1) l) log(1 + e^-x)] = (1 - l) - (1 + (q - 1) l)(1 - s)
    want = [0.0, 1 - (1 - sig[0]), -3 * (1 - sig[1])]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
