"""Cross-entropy losses and l2_loss against NumPy references; build-time and run-time
errors as TF1 raises them; first and second order gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

TOLERANCE = {"float16": 5e-3, "float32": 1e-5, "float64": 1e-12}


def _np_log_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _distributions(*shape):
    p = np.random.rand(*shape)
    return p / p.sum(axis=-1, keepdims=True)


# --- softmax cross entropy -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_softmax_xent_matches_numpy(sess, dtype):
    logits = tf.placeholder(dtype, [None, 5])
    labels = tf.placeholder(dtype, [None, 5])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert loss.dtype == tf.as_dtype(dtype) and loss.shape.as_list() == [None]
    lg = (np.random.randn(4, 5) * 3).astype(dtype)
    lb = _distributions(4, 5).astype(dtype)
    out = sess.run(loss, {logits: lg, labels: lb})
    assert out.dtype == np.dtype(dtype)
    expected = -(lb.astype(np.float64) * _np_log_softmax(lg)).sum(-1)
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype])


def test_softmax_xent_large_logits_are_stable(sess):
    lg = np.array([[1000.0, 0.0, -1000.0]], np.float32)
    out = sess.run(tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 1.0, 0.0]],
                                                              logits=lg))
    np.testing.assert_allclose(out, [1000.0])


@pytest.mark.parametrize("axis,shape", [(0, [3, 4]), (1, [2, 3, 4]), (-1, [2, 3, 4]),
                                        (-1, [4]), (0, [3, 2, 2])])
def test_softmax_xent_axes_and_ranks(sess, axis, shape):
    lg = np.random.randn(*shape)
    lb = np.moveaxis(_distributions(*np.moveaxis(np.empty(shape), axis, -1).shape), -1, axis)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg, axis=axis)
    expected_shape = list(shape)
    del expected_shape[axis]
    assert loss.shape.as_list() == expected_shape
    out = sess.run(loss)
    np.testing.assert_allclose(out, -(lb * _np_log_softmax(lg, axis)).sum(axis))
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=lb, logits=lg, dim=axis)
    np.testing.assert_allclose(sess.run(v1), out)


def test_softmax_xent_static_shapes(graph):
    f = tf.nn.softmax_cross_entropy_with_logits_v2
    assert f(labels=tf.placeholder(tf.float32, [None, 3, 4]),
             logits=tf.placeholder(tf.float32, [2, None, 4])).shape.as_list() == [2, None]
    assert f(labels=tf.placeholder(tf.float32),
             logits=tf.placeholder(tf.float32)).shape.ndims is None
    assert f(labels=tf.placeholder(tf.float32, [3]),
             logits=tf.placeholder(tf.float32, [3])).shape.as_list() == []


def test_softmax_xent_unknown_rank_runs(sess):
    lg = tf.placeholder(tf.float64)
    lb = tf.placeholder(tf.float64)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg)
    value, dist = np.random.randn(2, 3, 4), _distributions(2, 3, 4)
    out = sess.run(loss, {lg: value, lb: dist})
    np.testing.assert_allclose(out, -(dist * _np_log_softmax(value)).sum(-1))
    loss1 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg, axis=1)
    dist1 = np.moveaxis(_distributions(2, 4, 3), -1, 1)
    out = sess.run(loss1, {lg: value, lb: dist1})
    np.testing.assert_allclose(out, -(dist1 * _np_log_softmax(value, 1)).sum(1))


def test_softmax_xent_dtypes(graph):
    f = tf.nn.softmax_cross_entropy_with_logits_v2
    loss = f(labels=tf.placeholder(tf.int32, [2, 3]), logits=tf.placeholder(tf.float32, [2, 3]))
    assert loss.dtype == tf.float32  # labels are cast to the type of logits
    loss = f(labels=tf.placeholder(tf.float32, [2, 3]),
             logits=tf.placeholder(tf.float16, [2, 3]))
    assert loss.dtype == tf.float16
    with pytest.raises(TypeError, match="not in list of allowed values"):
        f(labels=tf.placeholder(tf.float32, [2, 3]), logits=tf.placeholder(tf.int32, [2, 3]))


def test_softmax_xent_errors(sess):
    f = tf.nn.softmax_cross_entropy_with_logits_v2
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 3"):
        f(labels=tf.placeholder(tf.float32, [2, 3]), logits=tf.placeholder(tf.float32, [2, 4]))
    with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
        f(labels=[[1.0]], logits=[[1.0]], axis=0, dim=0)
    v1 = tf.nn.softmax_cross_entropy_with_logits
    with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
        v1(labels=[[1.0]], logits=[[1.0]], axis=0)
    # tensorflow.compat.v1 (TF 2) takes (labels, logits) positionally: no TF1 sentinel
    assert v1([[1.0, 0.0]], [[0.0, 0.0]]).shape.as_list() == [1]
    with pytest.raises(ValueError, match="Both `labels` and `logits` must be provided"):
        v1(labels=[[1.0]])
    lb = tf.placeholder(tf.float32, [None, None])
    lg = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"logits and labels must be broadcastable: logits_size=\[2,4\] "
                             r"labels_size=\[2,3\]"):
        sess.run(f(labels=lb, logits=lg), {lb: np.ones((2, 3)), lg: np.zeros((2, 4))})


def test_softmax_xent_broadcasts_labels(sess):
    lb = tf.placeholder(tf.float64, [None, None])
    lg = tf.placeholder(tf.float64, [None, None])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg)
    value = np.random.randn(2, 3)
    dist = _distributions(1, 3)
    np.testing.assert_allclose(sess.run(loss, {lb: dist, lg: value}),
                               -(dist * _np_log_softmax(value)).sum(-1))
    labels = tf.constant(dist)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=tf.constant(value))
    g = tf.gradients(loss, labels)[0]
    assert g.shape.as_list() == [1, 3]
    np.testing.assert_allclose(sess.run(g), -_np_log_softmax(value).sum(0, keepdims=True))


def test_softmax_xent_v1_stops_labels_gradient(sess):
    lg = tf.constant(np.random.randn(2, 3))
    lb = tf.constant(_distributions(2, 3))
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=lb, logits=lg)
    assert tf.gradients(v1, lb) == [None]
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg)
    g_labels = tf.gradients(v2, lb)[0]
    np.testing.assert_allclose(sess.run(g_labels), -sess.run(tf.nn.log_softmax(lg)))
    g1, g2 = tf.gradients(v1, lg)[0], tf.gradients(v2, lg)[0]
    np.testing.assert_allclose(sess.run(g1), sess.run(g2))
    np.testing.assert_allclose(sess.run(g1),
                               np.exp(_np_log_softmax(sess.run(lg))) - sess.run(lb))


def test_softmax_xent_gradient(graph):
    lg = tf.placeholder(tf.float64, [3, 4])
    lb = tf.placeholder(tf.float64, [3, 4])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg)
    init = [np.random.randn(3, 4), _distributions(3, 4)]
    with tf.Session(graph=graph):
        err = compute_gradient_error([lg, lb], [[3, 4], [3, 4]], loss, [3], x_init_value=init)
    assert err < 1e-6


def test_softmax_xent_gradient_other_axis(graph):
    lg = tf.placeholder(tf.float64, [3, 2, 2])
    lb = tf.constant(np.moveaxis(_distributions(2, 2, 3), -1, 0))
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg, axis=0)
    with tf.Session(graph=graph):
        err = compute_gradient_error(lg, [3, 2, 2], loss, [2, 2],
                                     x_init_value=np.random.randn(3, 2, 2))
    assert err < 1e-6


def test_softmax_xent_second_order(graph):
    # The logits gradient is softmax - labels; its derivative is the softmax Jacobian,
    # reached through the gradient of the op's backprop output.
    lg = tf.placeholder(tf.float64, [2, 3])
    lb = tf.constant(_distributions(2, 3))
    w = tf.constant([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], tf.float64)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg)
    first = tf.gradients(loss, lg)[0]
    probe = tf.reduce_sum(first * w)
    second = tf.gradients(probe, lg)[0]
    init = np.random.randn(2, 3)
    with tf.Session(graph=graph) as s:
        assert compute_gradient_error(lg, [2, 3], first, [2, 3], x_init_value=init) < 1e-6
        p = np.exp(_np_log_softmax(init))
        wv = s.run(w)
        expected = p * (wv - (wv * p).sum(-1, keepdims=True))
        np.testing.assert_allclose(s.run(second, {lg: init}), expected, rtol=1e-10)
    hess = tf.hessians(tf.reduce_sum(loss), lg)[0]
    with tf.Session(graph=graph) as s:
        h = s.run(hess, {lg: init})
    assert h.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(h[0, :, 0, :], np.diag(p[0]) - np.outer(p[0], p[0]), atol=1e-12)
    np.testing.assert_allclose(h[0, :, 1, :], 0.0)


# --- sparse softmax cross entropy ------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("label_dtype", ["int32", "int64"])
def test_sparse_xent_matches_numpy(sess, dtype, label_dtype):
    logits = tf.placeholder(dtype, [None, 6])
    labels = tf.placeholder(label_dtype, [None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.dtype == tf.as_dtype(dtype) and loss.shape.as_list() == [None]
    lg = (np.random.randn(5, 6) * 3).astype(dtype)
    lb = np.array([0, 5, 2, 2, 3], label_dtype)
    out = sess.run(loss, {logits: lg, labels: lb})
    assert out.dtype == np.dtype(dtype)
    expected = -_np_log_softmax(lg)[np.arange(5), lb]
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype])


def test_sparse_xent_higher_rank(sess):
    lg = np.random.randn(2, 4, 3)
    lb = np.random.randint(0, 3, size=(2, 4))
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lb, logits=lg)
    assert loss.shape.as_list() == [2, 4]
    expected = -np.take_along_axis(_np_log_softmax(lg), lb[..., None], -1)[..., 0]
    np.testing.assert_allclose(sess.run(loss), expected)
    labels = tf.placeholder(tf.int64, [None, 5])
    logits = tf.placeholder(tf.float32, [3, None, 4])
    partial = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert partial.shape.as_list() == [None, 5]
    unknown = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.placeholder(tf.int64), logits=tf.placeholder(tf.float32))
    assert unknown.shape.ndims is None
    lb2 = np.random.randint(0, 4, size=(3, 5))
    lg2 = np.random.randn(3, 5, 4).astype(np.float32)
    np.testing.assert_allclose(
        sess.run(partial, {labels: lb2, logits: lg2}),
        -np.take_along_axis(_np_log_softmax(lg2), lb2[..., None], -1)[..., 0], rtol=1e-5)


def test_sparse_xent_build_errors(graph):
    f = tf.nn.sparse_softmax_cross_entropy_with_logits
    with pytest.raises(ValueError, match=r"`labels.shape.rank` must equal "
                                         r"`logits.shape.rank - 1`"):
        f(labels=tf.placeholder(tf.int32, [2]), logits=tf.placeholder(tf.float32, [2, 4, 3]))
    with pytest.raises(ValueError, match="`labels.shape` must equal `logits.shape` except"):
        f(labels=tf.placeholder(tf.int32, [3]), logits=tf.placeholder(tf.float32, [2, 3]))
    with pytest.raises(ValueError, match="`logits` cannot be a scalar"):
        f(labels=tf.placeholder(tf.int32, []), logits=tf.placeholder(tf.float32, []))
    with pytest.raises(TypeError, match="DataType float32 not in list of allowed values"):
        f(labels=tf.placeholder(tf.float32, [2]), logits=tf.placeholder(tf.float32, [2, 3]))
    assert f([1], [[1.0, 2.0]]).shape.as_list() == [1]  # positional, as TF 2's compat.v1


def test_sparse_xent_label_out_of_range(sess):
    labels = tf.placeholder(tf.int32, [3])
    logits = tf.placeholder(tf.float32, [3, None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Received a label value of 10 which is outside the valid range "
                             r"of \[0, 10\)"):
        sess.run(loss, {labels: [1, 10, 2], logits: np.zeros((3, 10))})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"label value of -1 .*\[0, 10\).  Label values: 1 10 -1"):
        sess.run(loss, {labels: [1, 10, -1], logits: np.zeros((3, 10))})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Must have at least one class"):
        sess.run(loss, {labels: [0, 0, 0], logits: np.zeros((3, 0))})


def test_sparse_xent_batch_mismatch_at_run_time(sess):
    labels = tf.placeholder(tf.int64, [None])
    logits = tf.placeholder(tf.float32, [None, None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"logits and labels must have the same first dimension, got "
                             r"logits shape \[2,5\] and labels shape \[3\]"):
        sess.run(loss, {labels: [1, 2, 3], logits: np.zeros((2, 5))})


def test_sparse_xent_gradient(graph):
    lg = tf.placeholder(tf.float64, [4, 3])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2, 1, 1], logits=lg)
    with tf.Session(graph=graph):
        err = compute_gradient_error(lg, [4, 3], loss, [4], x_init_value=np.random.randn(4, 3))
    assert err < 1e-6


def test_sparse_xent_gradient_values_and_second_order(graph):
    lg = tf.placeholder(tf.float64, [2, 3])
    labels = tf.constant([2, 0], tf.int64)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=lg)
    first = tf.gradients(loss, lg)[0]
    assert tf.gradients(loss, labels) == [None]
    init = np.random.randn(2, 3)
    with tf.Session(graph=graph) as s:
        expected = np.exp(_np_log_softmax(init))
        expected[[0, 1], [2, 0]] -= 1
        np.testing.assert_allclose(s.run(first, {lg: init}), expected)
        assert compute_gradient_error(lg, [2, 3], first, [2, 3], x_init_value=init) < 1e-6


# --- sigmoid and weighted cross entropy ------------------------------------------------------
def _np_sigmoid_xent(x, z):
    x = np.asarray(x, np.float64)
    p = 1 / (1 + np.exp(-x))
    return -z * np.log(p) - (1 - z) * np.log(1 - p)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sigmoid_xent_matches_numpy(sess, dtype):
    logits = tf.placeholder(dtype, [None, 4])
    labels = tf.placeholder(dtype, [None, 4])
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.dtype == tf.as_dtype(dtype) and loss.shape.as_list() == [None, 4]
    x = np.array([[-5.0, -0.5, 0.0, 0.5], [5.0, 2.0, -2.0, 10.0]], dtype)
    z = np.array([[0.0, 1.0, 0.5, 0.2], [1.0, 0.0, 0.3, 1.0]], dtype)
    out = sess.run(loss, {logits: x, labels: z})
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out.astype(np.float64), _np_sigmoid_xent(x, z.astype(float)),
                               rtol=max(TOLERANCE[dtype], 1e-6), atol=TOLERANCE[dtype])


def test_sigmoid_xent_is_stable_for_large_logits(sess):
    x = np.array([-1000.0, -100.0, 100.0, 1000.0], np.float32)
    z = np.array([1.0, 0.0, 1.0, 0.0], np.float32)
    out = sess.run(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x))
    np.testing.assert_allclose(out, [1000.0, 0.0, 0.0, 1000.0], atol=1e-6)


def test_sigmoid_xent_keeps_small_losses_of_confident_logits(sess):
    # x large with z = 1: the loss is log(1 + exp(-x)), tiny; softplus(x) - x z would
    # cancel it away (0 in float32 at x = 20, off by 0.7% in float16 at x = 2.3)
    x = np.array([20.0, 30.0, 2.3], np.float32)
    z = np.ones(3, np.float32)
    want = np.log1p(np.exp(-x.astype(np.float64)))
    out = sess.run(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    half = sess.run(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=np.float16(1.0), logits=np.float16(2.3)))
    np.testing.assert_allclose(float(half), np.log1p(np.exp(-float(np.float16(2.3)))),
                               rtol=2e-3)


def test_sigmoid_xent_gradient(graph):
    lg = tf.placeholder(tf.float64, [2, 3])
    lb = tf.placeholder(tf.float64, [2, 3])
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=lb, logits=lg)
    init = [np.array([[-2.0, 0.3, 1.5], [0.7, -0.1, 3.0]]), np.random.rand(2, 3)]
    with tf.Session(graph=graph):
        err = compute_gradient_error([lg, lb], [[2, 3], [2, 3]], loss, [2, 3],
                                     x_init_value=init)
    assert err < 1e-6


def test_sigmoid_xent_gradient_at_zero_is_exact(sess):
    x = tf.constant([0.0, 1.0])
    z = tf.constant([0.3, 0.3])
    g = tf.gradients(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), x)[0]
    np.testing.assert_allclose(sess.run(g), 1 / (1 + np.exp(-np.array([0.0, 1.0]))) - 0.3,
                               rtol=1e-6)


def test_sigmoid_xent_errors(graph):
    f = tf.nn.sigmoid_cross_entropy_with_logits
    with pytest.raises(ValueError, match=r"`logits` and `labels` must have the same shape, "
                                         r"received \(\(2, 4\) vs \(2, 3\)\)"):
        f(labels=tf.placeholder(tf.float32, [2, 3]), logits=tf.placeholder(tf.float32, [2, 4]))
    with pytest.raises(ValueError, match="Both `labels` and `logits` must be provided"):
        f(labels=tf.placeholder(tf.float32, [2, 3]))
    np.testing.assert_allclose(tf.Session().run(f(1.0, 0.0)), np.log(2.0), rtol=1e-6)
    ok = f(labels=tf.placeholder(tf.float32, [2, 3]), logits=tf.placeholder(tf.float32, [None, 3]))
    assert ok.shape.as_list() == [2, 3]


def test_weighted_xent_matches_numpy(sess):
    x = np.array([[-3.0, -0.5, 0.0], [0.5, 2.0, 8.0]])
    z = np.array([[0.0, 1.0, 0.5], [1.0, 0.2, 1.0]])
    q = 3.0
    p = 1 / (1 + np.exp(-x))
    expected = -q * z * np.log(p) - (1 - z) * np.log(1 - p)
    loss = tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=q)
    assert loss.shape.as_list() == [2, 3]
    np.testing.assert_allclose(sess.run(loss), expected)
    positional = tf.nn.weighted_cross_entropy_with_logits(z, x, q)
    np.testing.assert_allclose(sess.run(positional), expected)
    legacy = tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=q)
    np.testing.assert_allclose(sess.run(legacy), expected)
    big = tf.nn.weighted_cross_entropy_with_logits(
        labels=[1.0, 0.0], logits=np.array([-1000.0, 1000.0], np.float32), pos_weight=2.0)
    np.testing.assert_allclose(sess.run(big), [2000.0, 1000.0])


def test_weighted_xent_errors_and_gradient(graph):
    f = tf.nn.weighted_cross_entropy_with_logits
    with pytest.raises(ValueError, match="must have the same shape"):
        f(labels=tf.placeholder(tf.float32, [2, 3]), logits=tf.placeholder(tf.float32, [2, 4]),
          pos_weight=2.0)
    with pytest.raises(ValueError, match="Cannot specify both"):
        f(labels=[1.0], targets=[1.0], logits=[1.0], pos_weight=2.0)
    lg = tf.placeholder(tf.float64, [2, 3])
    lb = tf.placeholder(tf.float64, [2, 3])
    loss = f(labels=lb, logits=lg, pos_weight=2.5)
    # away from 0, where TF's form has its subgradient kink (abs, relu)
    init = [np.array([[-2.0, 0.2, 1.5], [0.7, -0.1, 3.0]]), np.random.rand(2, 3)]
    with tf.Session(graph=graph):
        err = compute_gradient_error([lg, lb], [[2, 3], [2, 3]], loss, [2, 3],
                                     x_init_value=init)
    assert err < 1e-6


# --- l2_loss ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_l2_loss(sess, dtype):
    x = tf.placeholder(dtype, [None, 3])
    y = tf.nn.l2_loss(x)
    assert y.dtype == tf.as_dtype(dtype) and y.shape.as_list() == []
    value = np.random.randn(4, 3).astype(dtype)
    out = sess.run(y, {x: value})
    assert out.dtype == np.dtype(dtype) and out.shape == ()
    np.testing.assert_allclose(float(out), (value.astype(np.float64) ** 2).sum() / 2,
                               rtol=TOLERANCE[dtype])
    assert tf.nn.l2_loss(x, name="wd").name == "wd:0"


def test_l2_loss_errors_and_gradient(graph):
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.nn.l2_loss(tf.placeholder(tf.int32, [2]))
    x = tf.placeholder(tf.float64, [2, 3])
    with tf.Session(graph=graph):
        err = compute_gradient_error(x, [2, 3], tf.nn.l2_loss(x), [],
                                     x_init_value=np.random.randn(2, 3))
    assert err < 1e-6


def test_sparse_xent_checks_shapes_at_run_time_when_unknown(sess):
    labels = tf.placeholder(tf.int32)
    logits = tf.placeholder(tf.float32)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(sess.run(loss, {labels: [[0, 1]], logits: np.zeros((1, 2, 3))}),
                               np.full((1, 2), np.log(3.0)), rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="`labels.shape` must equal `logits.shape` except"):
        sess.run(loss, {labels: [[0, 1, 1]], logits: np.zeros((3, 1, 3))})


# --- many short rows: the row maxima are taken column-wise (nn_softmax.last_axis_max) ------
def test_last_axis_max_is_numpys_max_on_every_layout():
    from tensorweave.ops.nn.nn_softmax import last_axis_max
    rs = np.random.RandomState(3)
    for shape in [(100, 10), (1000, 3), (40, 64), (8, 10), (100, 65), (6, 20, 7), (50, 1)]:
        x = rs.randn(*shape).astype(np.float32)
        x.reshape(-1, shape[-1])[::7, 0] = np.nan    # a NaN row maximum is NaN
        x.reshape(-1, shape[-1])[1::9, :] = -np.inf  # an all -inf row
        for view in (x, x[::-1], np.asfortranarray(x)):
            got = last_axis_max(np, view)
            np.testing.assert_array_equal(got, view.max(axis=-1, keepdims=True))
            assert got.shape == view.shape[:-1] + (1,) and got.dtype == view.dtype


def test_softmax_and_losses_over_many_short_rows_match_numpy(sess):
    rs = np.random.RandomState(4)
    lg = (rs.randn(200, 10) * 4).astype(np.float32)
    lg[3, 2] = 80.0  # a large logit: the maximum must be subtracted
    dist = _distributions(200, 10).astype(np.float32)
    ids = rs.randint(0, 10, 200)
    x = tf.placeholder(tf.float32, [None, 10])
    p = tf.placeholder(tf.float32, [None, 10])
    k = tf.placeholder(tf.int64, [None])
    want_log = _np_log_softmax(lg)
    out = sess.run([tf.nn.softmax(x), tf.nn.log_softmax(x),
                    tf.nn.softmax_cross_entropy_with_logits_v2(labels=p, logits=x),
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=k, logits=x)],
                   {x: lg, p: dist, k: ids})
    np.testing.assert_allclose(out[0], np.exp(want_log), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out[1], want_log, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[2], -(dist * want_log).sum(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[3], -want_log[np.arange(200), ids], rtol=1e-5, atol=1e-6)
    nan_row = lg.copy()
    nan_row[5, 1] = np.nan
    got = sess.run(tf.nn.softmax(x), {x: nan_row})
    assert np.isnan(got[5]).all() and np.isfinite(np.delete(got, 5, axis=0)).all()
