"""The nn ops of TF 1.x graphs that TF has since replaced: FusedBatchNorm and V2, the
gradient ops FusedBatchNormGrad, V2 and V3, BatchNormWithGlobalNormalization and its Grad
(ops/nn/batch_norm_ops.py), LRNGrad (norm_ops.py), BiasAddV1, TopK and InTopK with k an
attr (nn_softmax.py), and the V1 Conv3DBackpropInput/Filter (conv_nd_ops.py).

Values against their successors and NumPy formulas, static shapes and errors, the op
types of the gradients (TF's), numeric gradients (the differentiable ones have rows in
tests/ops/test_gradient_registry.py), and a GraphDef written by TF 2.21 holding each op
(tests/fixtures/tf1/legacy_nn.pbtxt, made by make_legacy_nn_fixture.py).
"""
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1")
RAW = tf.raw_ops
STATS = np.array([0.2, -0.1, 0.05], np.float32), np.array([0.8, 1.3, 0.4], np.float32)


def _rng_values(seed, *shapes):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-1.5, 1.5, s).astype(np.float32) for s in shapes]


def _channel_axis(data_format):
    return 1 if data_format.startswith("NC") else -1


def _per_channel(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(v, np.float64).reshape(shape)


# --- FusedBatchNorm and FusedBatchNormV2 --------------------------------------------------
def _fused(op_type, x, scale, offset, mean, variance, **attrs):
    return getattr(RAW, op_type)(x=x, scale=scale, offset=offset, mean=mean,
                                 variance=variance, **attrs)


@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_v1_and_v2_equal_v3(sess, is_training, data_format):
    shape = (2, 3, 2, 3) if data_format == "NCHW" else (2, 2, 3, 3)
    x, scale, offset = _rng_values(1, shape, [3], [3])
    mean, variance = STATS if not is_training else ([], [])
    attrs = {"epsilon": 0.01, "data_format": data_format, "is_training": is_training}
    outs = {op_type: _fused(op_type, x, scale, offset, mean, variance, **attrs)
            for op_type in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")}
    assert [len(o) for o in outs.values()] == [5, 5, 6]
    assert outs["FusedBatchNorm"][0].shape.as_list() == list(shape)
    assert [o.shape.as_list() for o in outs["FusedBatchNorm"][1:]] == [[3]] * 4
    got = sess.run(outs)
    want = got.pop("FusedBatchNormV3")
    for op_type, values in got.items():
        for i, (a, b) in enumerate(zip(values, want)):
            np.testing.assert_array_equal(a, b, err_msg="%s output %d" % (op_type, i))
    # and the normalization itself, against NumPy
    axis = _channel_axis(data_format)
    axes = tuple(i for i in range(4) if i != axis % 4)
    m = x.mean(axes) if is_training else mean
    v = x.var(axes) if is_training else variance
    y = (x - _per_channel(m, 4, axis)) / np.sqrt(_per_channel(v, 4, axis) + 0.01) * \
        _per_channel(scale, 4, axis) + _per_channel(offset, 4, axis)
    np.testing.assert_allclose(got["FusedBatchNorm"][0], y, rtol=1e-5, atol=1e-5)


def test_fused_batch_norm_v2_takes_half_inputs_with_float_statistics(sess):
    x, scale, offset = _rng_values(2, (2, 2, 2, 3), [3], [3])
    y, mean, _, _, _ = _fused("FusedBatchNormV2", x.astype(np.float16), scale, offset, [], [])
    assert y.dtype == tf.float16 and mean.dtype == tf.float32
    want = sess.run(_fused("FusedBatchNormV3", x.astype(np.float16), scale, offset, [], [])[0])
    np.testing.assert_array_equal(sess.run(y), want)
    with pytest.raises(TypeError):
        _fused("FusedBatchNorm", x.astype(np.float16), scale, offset, [], [])


@pytest.mark.parametrize("op_type", ["FusedBatchNorm", "FusedBatchNormV2",
                                     "FusedBatchNormGrad", "FusedBatchNormGradV2"])
def test_the_4d_versions_reject_5d_formats_as_tensorflow(graph, op_type):
    x = tf.zeros([1, 1, 1, 1, 2])
    v = tf.ones([2])
    inputs = [x, v, v, v, v] if "Grad" not in op_type else [x, x, v, v, v]
    message = ("Attr 'data_format' of '%s' Op passed string 'NDHWC' not in: \"NHWC\", "
               "\"NCHW\"." % op_type)
    with pytest.raises(ValueError, match=message):
        tf.get_default_graph().create_op(op_type, inputs, attrs={"data_format": "NDHWC"})


def test_forward_gradients_are_tensorflows_gradient_ops(graph, sess):
    # as TF's: the gradient op of each forward op's version, whose values are those of
    # TF's composite formula (_BatchNormGrad, here in graph ops) and of LRNGrad's formula
    from tensorweave.ops.nn.batch_norm_ops import _backprop_graph
    rs = np.random.RandomState(7)
    xv = rs.randn(2, 3, 3, 3).astype(np.float32)
    dyv = rs.randn(2, 3, 3, 3).astype(np.float32)
    x = tf.constant(xv)
    dy = tf.constant(dyv)
    v = tf.constant([0.5, 1.5, 2.0])
    scale = tf.constant([1.2, 0.8, 1.1])
    offset = tf.constant([0.1, -0.2, 0.3])
    var = tf.constant([0.7, 1.3, 0.9])
    for forward, grad_type in (("FusedBatchNorm", "FusedBatchNormGrad"),
                               ("FusedBatchNormV2", "FusedBatchNormGradV2"),
                               ("FusedBatchNormV3", "FusedBatchNormGradV3")):
        for training in (True, False):
            outs = _fused(forward, x, scale, offset, v, var, epsilon=0.001,
                          is_training=training)
            grads = tf.gradients(outs[0], [x, scale, offset], grad_ys=dy)
            assert {g.op.type for g in grads} == {grad_type}
            composite = _backprop_graph(dy, x, scale, v, var, 0.001, "NHWC", training)
            got, want = sess.run([grads, composite])
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)
    lrn = tf.nn.lrn(x, 2, bias=1.0, alpha=1.0, beta=0.5)
    grad = tf.gradients(lrn, x, grad_ys=dy)[0]
    assert grad.op.type == "LRNGrad"
    # dx_j = g_j N_j^-beta - 2 alpha beta x_j sum_{d in window(j)} g_d y_d / N_d
    x64, g64 = xv.astype(np.float64), dyv.astype(np.float64)
    windows = [slice(max(d - 2, 0), d + 3) for d in range(3)]
    norm = 1.0 + np.stack([(x64[..., w] ** 2).sum(-1) for w in windows], -1)
    inner = g64 * x64 * norm ** -1.5
    want = g64 * norm ** -0.5 - x64 * np.stack([inner[..., w].sum(-1) for w in windows], -1)
    np.testing.assert_allclose(sess.run(grad), want, rtol=2e-5, atol=2e-5)
    bn = RAW.BatchNormWithGlobalNormalization(t=x, m=v, v=v, beta=v, gamma=v,
                                              variance_epsilon=0.1,
                                              scale_after_normalization=True)
    grads = tf.gradients(bn, [x, v])
    assert grads[0].op.type == "BatchNormWithGlobalNormalizationGrad"


# --- FusedBatchNormGrad, V2, V3 -------------------------------------------------------------
def _grad_op(op_type, dy, x, scale, mean, variance, **attrs):
    extra = {"reserve_space_3": tf.constant([], tf.float32)} if op_type.endswith("V3") else {}
    return getattr(RAW, op_type)(y_backprop=dy, x=x, scale=scale, reserve_space_1=mean,
                                 reserve_space_2=variance, **extra, **attrs)


def _batch_norm_backprop_reference(dy, x, scale, mean, variance, eps, axis, training):
    """dx, d_scale, d_offset in float64 from the given statistics."""
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    dy, x = dy.astype(np.float64), x.astype(np.float64)
    rstd = 1 / np.sqrt(_per_channel(variance, x.ndim, axis) + eps)
    xhat = (x - _per_channel(mean, x.ndim, axis)) * rstd
    d_offset, d_scale = dy.sum(axes), (dy * xhat).sum(axes)
    if training:
        count = x.size / x.shape[axis]
        dy = dy - _per_channel(d_offset / count, x.ndim, axis) - \
            xhat * _per_channel(d_scale / count, x.ndim, axis)
    return dy * _per_channel(scale, x.ndim, axis) * rstd, d_scale, d_offset


@pytest.mark.parametrize("op_type,data_format", [
    ("FusedBatchNormGrad", "NHWC"), ("FusedBatchNormGradV2", "NCHW"),
    ("FusedBatchNormGradV3", "NHWC"), ("FusedBatchNormGradV3", "NCDHW")])
@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_grad_values(sess, op_type, data_format, is_training):
    shape = {"NHWC": (2, 2, 3, 3), "NCHW": (2, 3, 2, 2), "NCDHW": (2, 3, 2, 1, 2)}[data_format]
    dy, x, scale = _rng_values(3, shape, shape, [3])
    mean, variance = STATS
    outs = _grad_op(op_type, dy, x, scale, mean, variance, epsilon=0.01,
                    data_format=data_format, is_training=is_training)
    got = sess.run(outs)
    want = _batch_norm_backprop_reference(dy, x, scale, mean, variance, 0.01,
                                          _channel_axis(data_format), is_training)
    for name, a, b in zip(("dx", "d_scale", "d_offset"), got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=name)
    assert got[3].shape == got[4].shape == (0,)


def test_fused_batch_norm_grad_static_shapes_as_tensorflow(graph):
    # TF 2.21: the output is y_backprop's shape with the channels of every input
    unknown = tf.placeholder(tf.float32)
    x = tf.placeholder(tf.float32, [None, 3, 4, 2])
    outs = _grad_op("FusedBatchNormGrad", unknown, x, unknown, unknown, unknown)
    assert [o.shape.as_list() for o in outs] == [[None, None, None, 2], [2], [2], [0], [0]]
    outs = _grad_op("FusedBatchNormGradV3", unknown, unknown, tf.zeros([5]), unknown, unknown)
    assert [o.shape.as_list() for o in outs] == [[None, None, None, 5], [5], [5], [0], [0]]
    outs = _grad_op("FusedBatchNormGradV3", unknown, unknown, unknown, unknown, unknown,
                    data_format="NCDHW")
    assert outs[0].shape.as_list() == [None] * 5
    with pytest.raises(ValueError):
        _grad_op("FusedBatchNormGradV2", x, x, tf.zeros([3]), unknown, unknown)


def test_fused_batch_norm_grad_run_time_errors(sess):
    dy = tf.placeholder(tf.float32)
    x = tf.placeholder(tf.float32)
    outs = _grad_op("FusedBatchNormGradV2", dy, x, [1.0, 1.0], [0.0, 0.0], [1.0, 1.0])
    ones = np.ones([1, 2, 2, 2], np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
        sess.run(outs, {dy: ones[:, :1], x: ones})
    with pytest.raises(tf.errors.InvalidArgumentError, match="4-dimensional"):
        sess.run(outs, {dy: ones[0], x: ones[0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="scale must have the same"):
        sess.run(outs, {dy: ones[..., :1], x: ones[..., :1]})


# --- BatchNormWithGlobalNormalization and its Grad -------------------------------------------
def _global_norm(t, m, v, beta, gamma, scale_after=True, eps=0.001):
    return RAW.BatchNormWithGlobalNormalization(
        t=t, m=m, v=v, beta=beta, gamma=gamma, variance_epsilon=eps,
        scale_after_normalization=scale_after)


@pytest.mark.parametrize("scale_after", [True, False])
def test_batch_norm_with_global_normalization_values(sess, scale_after):
    t, beta, gamma = _rng_values(4, (2, 3, 2, 3), [3], [3])
    m, v = STATS
    y = _global_norm(t, m, v, beta, gamma, scale_after)
    assert y.shape.as_list() == [2, 3, 2, 3]
    t64, m64, v64, beta64, gamma64 = (a.astype(np.float64) for a in (t, m, v, beta, gamma))
    want = (t64 - m64) / np.sqrt(v64 + 0.001) * (gamma64 if scale_after else 1.0) + beta64
    np.testing.assert_allclose(sess.run(y), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        sess.run(_global_norm(t64, m64, v64, beta64, gamma64, scale_after)), want,
        rtol=1e-12)


@pytest.mark.parametrize("scale_after", [True, False])
def test_batch_norm_with_global_normalization_gradient(graph, scale_after):
    # the Grad op's five outputs against central differences (float64), gamma getting
    # zeros when it is not used (TF's kernel)
    values = [a.astype(np.float64) for a in _rng_values(5, (2, 1, 2, 3), [3], [3], [3], [3])]
    values[2] = np.abs(values[2]) + 0.5  # a positive variance
    xs = [tf.placeholder(tf.float64, a.shape) for a in values]
    y = _global_norm(*xs, scale_after=scale_after)
    with tf.Session():
        err = compute_gradient_error(xs, [list(a.shape) for a in values], y, [2, 1, 2, 3],
                                     x_init_value=values, delta=1e-6)
        assert err < 1e-6
        dg = tf.gradients(y, xs[4])[0].eval({x: a for x, a in zip(xs, values)})
    assert dg.any() == scale_after


def test_batch_norm_with_global_normalization_errors(sess):
    with pytest.raises(ValueError, match="rank 4"):
        _global_norm(tf.zeros([2, 3]), [0.0] * 3, [1.0] * 3, [0.0] * 3, [1.0] * 3)
    with pytest.raises(ValueError):
        _global_norm(tf.zeros([1, 1, 1, 3]), [0.0] * 2, [1.0] * 3, [0.0] * 3, [1.0] * 3)
    with pytest.raises(TypeError):
        _global_norm(tf.zeros([1, 1, 1, 3], tf.int32), [0] * 3, [1] * 3, [0] * 3, [1] * 3)
    t = tf.placeholder(tf.float32)
    y = _global_norm(t, [0.0] * 3, [1.0] * 3, [0.0] * 3, [1.0] * 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="mean must be 1-dimensional"):
        sess.run(y, {t: np.zeros([1, 1, 1, 2], np.float32)})


# --- BiasAddV1, TopK, InTopK ----------------------------------------------------------------
def test_bias_add_v1_is_channels_last_bias_add(sess):
    value, bias = _rng_values(6, (2, 3, 4), [4])
    y = RAW.BiasAddV1(value=value, bias=bias)
    assert y.op.type == "BiasAddV1" and "data_format" not in y.op.node_def.attr
    assert y.shape.as_list() == [2, 3, 4]
    np.testing.assert_array_equal(sess.run(y), value + bias)
    with pytest.raises(ValueError):
        RAW.BiasAddV1(value=value, bias=bias[:3])
    v = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many biases"):
        sess.run(RAW.BiasAddV1(value=v, bias=bias), {v: value[..., :3]})


def test_top_k_with_k_an_attr_equals_top_k_v2(sess):
    x = np.array([[3, 1, np.nan, 3, 2], [0, -1, 5, 5, 5]], np.float32)  # ties and a NaN
    for k in (0, 2, 5):
        for sorted_ in (True, False):
            got = sess.run(RAW.TopK(input=x, k=k, sorted=sorted_))
            want = sess.run(RAW.TopKV2(input=x, k=k, sorted=sorted_))
            np.testing.assert_array_equal(got.values, want.values)
            np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(sess.run(RAW.TopK(input=x, k=2)).indices, [[0, 3], [2, 3]])
    ints = np.array([4, 9, 1], np.int64)
    assert sess.run(RAW.TopK(input=ints, k=1)).values.tolist() == [9]


def test_top_k_shapes_and_errors(sess):
    values, indices = RAW.TopK(input=tf.placeholder(tf.float32, [None, 6]), k=4)
    assert values.shape.as_list() == indices.shape.as_list() == [None, 4]
    assert indices.dtype == tf.int32
    assert RAW.TopK(input=tf.placeholder(tf.float32), k=4).values.shape.ndims is None
    with pytest.raises(ValueError, match="input must have last dimension >= k = 4 but is 3"):
        RAW.TopK(input=tf.zeros([2, 3]), k=4)
    with pytest.raises(ValueError, match="must be at least minimum 0"):
        RAW.TopK(input=tf.zeros([2, 3]), k=-1)
    x = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least k columns"):
        sess.run(RAW.TopK(input=x, k=4), {x: np.zeros([2, 3], np.float32)})


def test_in_top_k_with_k_an_attr_equals_in_top_k_v2(sess):
    predictions = np.array([[0.1, 0.7, 0.2, 0.7], [0.5, -1.0, 0.4, np.inf],
                            [0.3, 0.3, 0.3, 0.1]], np.float32)
    for dtype in (np.int32, np.int64):
        targets = np.array([2, 0, 1], dtype)
        for k in (0, 1, 2, 4):
            got = RAW.InTopK(predictions=predictions, targets=targets, k=k)
            assert got.shape.as_list() == [3] and got.dtype == tf.bool
            want = RAW.InTopKV2(predictions=predictions, targets=targets, k=dtype(k))
            np.testing.assert_array_equal(*sess.run([got, want]))
    got = sess.run(RAW.InTopK(predictions=predictions, targets=[2, 0, 1], k=2))
    assert got.tolist() == [False, False, True]


# --- the V1 Conv3D backprops ----------------------------------------------------------------
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_conv3d_v1_backprops_equal_v2(sess, padding):
    x, w = _rng_values(7, (2, 3, 4, 5, 2), (2, 2, 3, 2, 3))
    strides = [1, 1, 2, 2, 1]
    conv = tf.nn.conv3d(x, w, strides, padding)
    dy = _rng_values(8, conv.shape.as_list())[0]
    attrs = {"strides": strides, "padding": padding}
    dx = RAW.Conv3DBackpropInput(input=x, filter=w, out_backprop=dy, **attrs)
    dw = RAW.Conv3DBackpropFilter(input=x, filter=w, out_backprop=dy, **attrs)
    assert dx.shape.as_list() == [2, 3, 4, 5, 2] and dw.shape.as_list() == [2, 2, 3, 2, 3]
    want_dx = RAW.Conv3DBackpropInputV2(input_sizes=x.shape, filter=w, out_backprop=dy,
                                        **attrs)
    want_dw = RAW.Conv3DBackpropFilterV2(input=x, filter_sizes=w.shape, out_backprop=dy,
                                         **attrs)
    got = sess.run([dx, dw, want_dx, want_dw])
    np.testing.assert_array_equal(got[0], got[2])
    np.testing.assert_array_equal(got[1], got[3])
    # the adjoint identity of the convolution: <conv(x, w), dy> = <x, dx> = <w, dw>
    inner = float(np.sum(sess.run(conv).astype(np.float64) * dy))
    assert np.isclose(inner, np.sum(x * got[0], dtype=np.float64), rtol=1e-5)
    assert np.isclose(inner, np.sum(w * got[1], dtype=np.float64), rtol=1e-5)


def test_conv3d_v1_backprops_errors(sess):
    x, w, dy = tf.zeros([1, 2, 2, 2, 1]), tf.zeros([1, 1, 1, 1, 1]), tf.zeros([1, 2, 2, 2, 1])
    with pytest.raises(ValueError, match="strides"):
        RAW.Conv3DBackpropInput(input=x, filter=w, out_backprop=dy, strides=[1, 1, 1, 1],
                                padding="VALID")
    with pytest.raises(ValueError, match="rank 5"):
        RAW.Conv3DBackpropFilter(input=x, filter=tf.zeros([1, 1, 1, 1]), out_backprop=dy,
                                 strides=[1] * 5, padding="VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="out_backprop"):
        sess.run(RAW.Conv3DBackpropInput(input=x, filter=w, out_backprop=dy[:, :1],
                                         strides=[1] * 5, padding="VALID"))


# --- LRNGrad ------------------------------------------------------------------------------
def _lrn_float64(x, radius, bias, alpha, beta):
    depth = x.shape[-1]
    sq = np.stack([(x[..., max(0, d - radius):d + radius + 1] ** 2).sum(-1)
                   for d in range(depth)], -1)
    return x / (bias + alpha * sq) ** beta


@pytest.mark.parametrize("radius", [0, 1, 3])
def test_lrn_grad_is_the_vjp_of_lrn(sess, radius):
    # LRNGrad(g, x, LRN(x)) against central differences of the NumPy LRN (float64)
    x, g = _rng_values(9, (1, 2, 2, 5), (1, 2, 2, 5))
    attrs = {"depth_radius": radius, "bias": 1.3, "alpha": 0.4, "beta": 0.7}
    y = tf.nn.lrn(x, **attrs)
    dx = RAW.LRNGrad(input_grads=g, input_image=x, output_image=y, **attrs)
    assert dx.shape.as_list() == [1, 2, 2, 5]
    want = np.zeros(x.shape)
    x64 = x.astype(np.float64)
    for i in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[i] = 1e-6
        diff = _lrn_float64(x64 + step, radius, 1.3, 0.4, 0.7) - \
            _lrn_float64(x64 - step, radius, 1.3, 0.4, 0.7)
        want[i] = (diff * g).sum() / 2e-6
    np.testing.assert_allclose(sess.run(dx), want, rtol=1e-4, atol=1e-5)
    half = RAW.LRNGrad(input_grads=g.astype(np.float16), input_image=x.astype(np.float16),
                       output_image=tf.cast(y, tf.float16), **attrs)
    np.testing.assert_allclose(sess.run(half), want, rtol=2e-2, atol=2e-2)


def test_lrn_grad_errors(sess):
    with pytest.raises(ValueError):
        RAW.LRNGrad(input_grads=tf.zeros([1, 1, 1, 2]), input_image=tf.zeros([1, 1, 1, 3]),
                    output_image=tf.zeros([1, 1, 1, 2]))
    g = tf.placeholder(tf.float32)
    dx = RAW.LRNGrad(input_grads=g, input_image=g, output_image=tf.zeros([1, 1, 1, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
        sess.run(dx, {g: np.zeros([1, 1, 1, 3], np.float32)})


def test_gradient_ops_have_no_gradient_as_tensorflow(graph):
    # TF registers no gradient for LRNGrad, BatchNormWithGlobalNormalizationGrad and the
    # V1 Conv3D backprops: tf.gradients, and so the numeric gradient check, raise
    # LookupError
    x = tf.placeholder(tf.float32, [1, 2, 2, 3])
    v = tf.constant([0.5, 1.0, 2.0])
    x5 = tf.reshape(x, [1, 2, 2, 3, 1])
    w = tf.ones([1, 1, 1, 1, 1])
    built = {
        "LRNGrad": RAW.LRNGrad(input_grads=x, input_image=x, output_image=x),
        "BatchNormWithGlobalNormalizationGrad": RAW.BatchNormWithGlobalNormalizationGrad(
            t=x, m=v, v=v, gamma=v, backprop=x, variance_epsilon=0.1,
            scale_after_normalization=True)[0],
        "Conv3DBackpropInput": RAW.Conv3DBackpropInput(input=x5, filter=w, out_backprop=x5,
                                                       strides=[1] * 5, padding="VALID"),
        "Conv3DBackpropFilter": RAW.Conv3DBackpropFilter(input=x5, filter=w, out_backprop=x5,
                                                         strides=[1] * 5, padding="VALID"),
    }
    for op_type, y in built.items():
        message = r"No gradient defined for operation '.*' \(op type: %s\)" % op_type
        with pytest.raises(LookupError, match=message):
            tf.gradients(y, x)
        with pytest.raises(LookupError, match=message):
            compute_gradient_error(x, [1, 2, 2, 3], y, y.shape.as_list(),
                                   x_init_value=np.ones([1, 2, 2, 3], np.float32))


# --- a GraphDef written by TensorFlow 2.21 --------------------------------------------------
# TF's values of the fixture's fetches (make_legacy_nn_fixture.py prints them); TopK's are
# those of TopKV2, as TF has no runnable TopK kernel
TF_VALUES = {'bias_v1': [[-0.79999995, -0.72999996, 0.14000002],
                [0.31, 0.38, 1.25],
                [-0.58, -0.51, 0.36],
                [0.53000003, 0.6, -0.53]],
    'bias_v1_d0': [[-1.1, -0.57, -0.04],
                   [0.49, -0.98, -0.45],
                   [0.08, 0.61, -0.86],
                   [-0.33, 0.2, 0.73]],
    'bias_v1_d1': [-0.86, -0.73999995, -0.62],
    'bn1': [[[[-1.660256, -0.78675205, 0.49418485], [1.2779158, 0.19263859, -0.8121497]]],
            [[[-1.0779158, -0.5926386, 0.23527172], [1.8602562, 0.38675207, 1.2826931]]]],
    'bn1_1': [-0.235, 0.135, 0.004999995],
    'bn1_2': [0.42683333, 0.42683333, 0.5401667],
    'bn1_d0': [[[[-1.3908659, -0.42900184, -0.006780903], [1.229264, -0.64169616, -0.38911957]]],
               [[[1.417738, 0.64169616, 0.7868457], [-1.256136, 0.42900184, -0.39094517]]]],
    'bn1_d1': [1.2255617, -0.3449926, -1.6876429],
    'bn1_d2': [-0.86, -0.73999995, -0.62],
    'bn2': [[[[-1.4000001, -0.7166667]], [[-0.10389254, 0.0752168]], [[-0.7424598, 1.1199121]]],
            [[[-0.6333333, 0.050000012]], [[0.0970594, 0.27616876]], [[1.0613471, 0.58111274]]]],
    'bn2_d0': [[[[-1.8333335, -0.95000005]],
                [[-0.017474083, 0.21405752]],
                [[1.1478771, 0.5270864]]],
               [[[0.13333334, 1.0166668]],
                [[-0.37569278, -0.1441612]],
                [[-0.23426063, -0.85505134]]]],
    'bn2_d1': [1.3508888, -0.56318974, -1.3468424],
    'bn2_d2': [-0.98, -0.74, -0.5],
    'bn3': [[[[-1.660256, -0.78675205, 0.49418485], [1.2779158, 0.19263859, -0.8121497]]],
            [[[-1.0779158, -0.5926386, 0.23527172], [1.8602562, 0.38675207, 1.2826931]]]],
    'bn3_d0': [[[[-1.3908659, -0.42900184, -0.006780903], [1.229264, -0.64169616, -0.38911957]]],
               [[[1.417738, 0.64169616, 0.7868457], [-1.256136, 0.42900184, -0.39094517]]]],
    'bn3_d1': [1.2255617, -0.3449926, -1.6876429],
    'bn3_d2': [-0.86, -0.73999995, -0.62],
    'bn_global': [[[[-1.7436043, -0.38849497, 0.5487187], [0.11676002, 0.09808509, -0.76593703]]],
                  [[[-1.3748834, -0.2920557, 0.28815627], [0.4854809, 0.19452439, 1.3422496]]]],
    'bn_global_d0': [[[[-1.8436043, -0.24986544, 0.047374982],
                       [0.8212419, -0.42959324, 0.5329685]]],
                     [[[0.1340803, 0.26739988, 1.0185622],
                       [-0.55308133, 0.087672085, -0.86459345]]]],
    'bn_global_d1': [1.4413635, 0.3243867, -0.73431224],
    'bn_global_d2': [-1.1179637, 0.062233046, -1.547071],
    'bn_global_d3': [-0.86, -0.73999995, -0.62],
    'bn_global_d4': [1.1939852, -0.32386076, -1.6543345],
    'conv_dw_0': [[[[[1.0347999, 0.4068], [1.2063999, -0.3964]],
                    [[1.218, -0.4196], [-0.7304, 0.65720004]]],
                   [[[-0.7756, -0.43240002], [1.036, 0.40440002]],
                    [[1.2076, -0.3988], [1.2191999, -0.422]]]]],
    'conv_dx_0': [[[[[0.8017, -0.82089996], [0.08760001, -0.0040000677], [0.1131, -0.23589998]],
                    [[-0.3687, 0.6687], [-0.59879994, 0.009599984], [0.59709996, 0.1681]],
                    [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]],
                   [[[-0.67950004, -0.1549], [-0.5004, 1.5023999], [0.12629999, -0.27549997]],
                    [[-0.30110002, -0.6365], [0.15079996, -0.42639998], [0.39909998, 0.1573]],
                    [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]]]],
    'in_top_k_0': [True, False, True],
    'lrn': [[[[-0.62684596, -0.36821488, -0.12104931], [0.15756252, 0.39651078, 0.65220785]]],
            [[[-0.5003358, -0.22800568, 0.04648916], [0.30762568, 0.53520054, -0.56494784]]]],
    'lrn_d0': [[[[-0.60682267, -0.3016011, -0.023498818], [0.3796152, -0.60416687, -0.18480724]]],
               [[[0.032582458, 0.4337591, -0.66397977], [-0.23557134, 0.19731228, 0.44834632]]]],
    'topk_0': [[-0.16, -0.53], [0.95, 0.58], [0.06, -0.31], [0.8, 0.43]],
    'topk_1': [[2, 1], [2, 1], [2, 1], [1, 0]],
}


def test_graph_def_from_tensorflow_imports_and_runs_as_tf():
    with open(os.path.join(FIXTURES, "legacy_nn.pbtxt")) as f:
        proto = text_format.Parse(f.read(), graph_pb2.GraphDef())
    assert proto.versions.producer == 6
    legacy = {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormGrad",
              "FusedBatchNormGradV2", "FusedBatchNormGradV3", "BatchNormWithGlobalNormalization",
              "BatchNormWithGlobalNormalizationGrad", "BiasAddV1", "TopK", "InTopK", "LRNGrad",
              "Conv3DBackpropInput", "Conv3DBackpropFilter"}
    assert legacy <= {n.op for n in proto.node}
    with tf.Graph().as_default() as g:
        tf.import_graph_def(proto, name="")
        fetches = {name: g.get_tensor_by_name(name + ":0") for name in TF_VALUES}
        for name, t in fetches.items():  # static shapes known, as in TF
            assert t.shape.as_list() == list(np.shape(TF_VALUES[name])), name
        with tf.Session() as sess:
            got = sess.run(fetches)
    for name, want in TF_VALUES.items():
        np.testing.assert_allclose(got[name], np.asarray(want, got[name].dtype), rtol=1e-6,
                                   atol=2e-7, err_msg=name)
