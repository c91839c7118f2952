"""tf.layers batch normalization: variables, training vs inference, moving-average
updates in UPDATE_OPS (fused: Bessel-corrected variance, as TF1), `training` as a tensor,
axes, errors and gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def _ref(x, axes, mean, var, gamma=1.0, beta=0.0, eps=1e-3):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_variables_and_collections(graph):
    x = tf.placeholder(tf.float32, [None, 5])
    tf.layers.batch_normalization(x)
    tf.layers.batch_normalization(x, center=False, name="bn")
    assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("batch_normalization/gamma:0", [5]), ("batch_normalization/beta:0", [5]),
        ("batch_normalization/moving_mean:0", [5]),
        ("batch_normalization/moving_variance:0", [5]),
        ("bn/gamma:0", [5]), ("bn/moving_mean:0", [5]), ("bn/moving_variance:0", [5])]
    assert [v.name for v in tf.trainable_variables()] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0", "bn/gamma:0"]
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []  # training=False: no updates


def test_training_and_updates_non_fused(sess):
    x0 = np.random.randn(6, 4) * 3 + 1
    layer = tf.layers.BatchNormalization(momentum=0.9, epsilon=1e-3,
                                         gamma_initializer=tf.constant_initializer(2.0),
                                         beta_initializer=tf.constant_initializer(0.5))
    y = layer(tf.constant(x0), training=True)
    assert not layer.fused and len(layer.updates) == 2
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == layer.updates
    sess.run(tf.global_variables_initializer())
    mean, var = x0.mean(0), x0.var(0)
    np.testing.assert_allclose(sess.run(y), _ref(x0, 0, mean, var, 2.0, 0.5), rtol=1e-10)
    sess.run(layer.updates)
    mm, mv = sess.run([layer.moving_mean, layer.moving_variance])
    # the decay 1 - momentum is a float32 constant cast to the variable's dtype, as TF1
    np.testing.assert_allclose(mm, 0.1 * mean, rtol=1e-6)
    np.testing.assert_allclose(mv, 0.9 + 0.1 * var, rtol=1e-6)
    # inference with the same layer uses the moving averages
    z = layer(tf.constant(x0), training=False)
    np.testing.assert_allclose(sess.run(z), _ref(x0, 0, mm, mv, 2.0, 0.5), rtol=1e-10)


def test_fused_default_for_4d_uses_bessel_corrected_update(sess):
    x0 = np.random.randn(2, 3, 3, 4).astype(np.float32)
    layer = tf.layers.BatchNormalization(momentum=0.5)
    y = layer(tf.constant(x0), training=True)
    assert layer.fused and layer.axis == [3]
    sess.run(tf.global_variables_initializer())
    x = x0.astype(np.float64)
    mean, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    np.testing.assert_allclose(sess.run(y), _ref(x, 3, mean, var), rtol=1e-4, atol=1e-5)
    sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    n = 18
    np.testing.assert_allclose(sess.run(layer.moving_variance),
                               0.5 + 0.5 * var * n / (n - 1), rtol=1e-5)


def _moving_variance_after_one_update(sess, x, **kwargs):
    layer = tf.layers.BatchNormalization(momentum=0.0, **kwargs)
    layer(x, training=True)
    sess.run(tf.global_variables_initializer())
    sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    return layer, sess.run(layer.moving_variance)


def test_fused_choice_follows_rank_axis_and_dtype(sess):
    # TF1 fuses rank 5 over axis 1 or 4 too, and never float64: the fused update uses the
    # unbiased variance (n/(n-1)), the non-fused one the biased variance
    x0 = np.arange(24, dtype=np.float32).reshape(1, 2, 2, 2, 3)
    biased = x0.reshape(-1, 3).var(0)  # 47.25 per channel
    unbiased = biased * 8 / 7  # 54
    layer, mv = _moving_variance_after_one_update(sess, tf.constant(x0))
    assert layer.fused
    np.testing.assert_allclose(mv, unbiased, rtol=1e-6)
    layer, mv = _moving_variance_after_one_update(sess, tf.constant(x0), axis=1)
    assert layer.fused
    layer, mv = _moving_variance_after_one_update(sess, tf.constant(x0), axis=3)
    assert not layer.fused
    layer, mv = _moving_variance_after_one_update(sess, tf.constant(x0[0], tf.float64))
    assert not layer.fused
    np.testing.assert_allclose(mv, biased, rtol=1e-12)


def test_fused_true_falls_back_silently_where_it_cannot_fuse(sess):
    x0 = np.random.randn(2, 3, 4, 5).astype(np.float32)
    for x, kwargs in ((x0[0], {}), (x0, {"axis": 2}), (x0, {"axis": [1, 3]})):
        layer, _ = _moving_variance_after_one_update(sess, tf.constant(x), fused=True,
                                                     **kwargs)
        assert not layer.fused


def test_non_trainable_layer_does_not_update_moving_statistics(sess):
    x = tf.constant([[1.], [3.]])
    layer = tf.layers.BatchNormalization(trainable=False, momentum=0.5)
    y = layer(x, training=True)
    assert layer.updates == [] and layer.get_updates_for(x) == []
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    assert tf.trainable_variables() == []
    sess.run(tf.global_variables_initializer())
    # the output still uses the batch's moments (TF1 v1 layers do not freeze `training`)
    np.testing.assert_allclose(sess.run(y), [[-1 / np.sqrt(1.001)], [1 / np.sqrt(1.001)]],
                               rtol=1e-6)
    np.testing.assert_allclose(sess.run(layer.moving_mean), [0.0])


def test_updates_are_conditional_on_inputs(graph):
    x = tf.constant([[1.], [3.]])
    layer = tf.layers.BatchNormalization(momentum=0.5)
    layer(x, training=True)
    assert len(layer.updates) == 2
    assert layer.get_updates_for(None) == []
    assert layer.get_updates_for(x) == layer.updates
    assert layer.get_updates_for(tf.constant([[0.]])) == []


def test_training_as_a_tensor(sess):
    x0 = np.random.randn(8, 3)
    flag = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(tf.constant(x0), training=flag, momentum=0.0)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    mean_var = [v for v in tf.global_variables() if "moving" in v.name]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y, {flag: False}), _ref(x0, 0, 0.0, 1.0),
                               rtol=1e-10)
    sess.run(updates, {flag: False})  # no update in inference
    np.testing.assert_allclose(sess.run(mean_var), [np.zeros(3), np.ones(3)])
    np.testing.assert_allclose(sess.run(y, {flag: True}),
                               _ref(x0, 0, x0.mean(0), x0.var(0)), rtol=1e-10)
    sess.run(updates, {flag: True})
    np.testing.assert_allclose(sess.run(mean_var), [x0.mean(0), x0.var(0)], rtol=1e-10)


def test_axis_channels_first_and_multiple_axes(sess):
    x0 = np.random.randn(4, 3, 2, 2)
    y = tf.layers.batch_normalization(tf.constant(x0), axis=1, training=True, fused=False)
    mean, var = x0.mean((0, 2, 3), keepdims=True), x0.var((0, 2, 3), keepdims=True)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y), _ref(x0, 1, mean, var), rtol=1e-10)
    layer = tf.layers.BatchNormalization(axis=[1, 2])
    z = layer(tf.constant(x0), training=True)
    assert layer.gamma.shape.as_list() == [1, 3, 2, 1]
    sess.run(tf.global_variables_initializer())
    mean, var = x0.mean((0, 3), keepdims=True), x0.var((0, 3), keepdims=True)
    np.testing.assert_allclose(sess.run(z), _ref(x0, None, mean, var), rtol=1e-10)


def test_float16_input_keeps_float32_parameters(sess):
    x0 = np.random.randn(4, 3).astype(np.float16)
    layer = tf.layers.BatchNormalization()
    y = layer(tf.constant(x0), training=True)
    assert y.dtype == tf.float16 and layer.gamma.dtype.base_dtype == tf.float32
    sess.run(tf.global_variables_initializer())
    x = x0.astype(np.float64)
    np.testing.assert_allclose(sess.run(y), _ref(x, 0, x.mean(0), x.var(0)), atol=1e-2)


def test_reuse_and_errors(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    tf.layers.batch_normalization(x, name="bn")
    tf.layers.batch_normalization(x, name="bn", reuse=True, training=True)
    assert len(tf.global_variables()) == 4
    with pytest.raises(ValueError, match="invalid keys for `renorm_clipping`"):
        tf.layers.batch_normalization(x, renorm=True, renorm_clipping={"r": 1.0})
    with pytest.raises(ValueError, match="positive integer"):
        tf.layers.batch_normalization(x, virtual_batch_size=0)
    with pytest.raises(ValueError, match="axis cannot include 0"):
        tf.layers.batch_normalization(x, virtual_batch_size=2, axis=0)
    with pytest.raises(ValueError, match="undefined rank"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32))
    with pytest.raises(ValueError, match="undefined `axis` dimension"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [2, None]))
    with pytest.raises(ValueError, match="Invalid value for `axis` argument"):
        tf.layers.batch_normalization(x, axis=3)


def test_axis_and_shape_messages_are_tfs(graph):
    """TF 2.15's wording (axes and shapes as tuples)."""
    x = tf.placeholder(tf.float32, [None, 4])
    with pytest.raises(ValueError, match=r"^Invalid value for `axis` argument. Expected 0 <= "
                       r"axis < inputs.rank \(with inputs.rank=2\). Received: axis=\(3,\)$"):
        tf.layers.batch_normalization(x, axis=3)
    with pytest.raises(ValueError, match=r"^Duplicate axis: \(1, 1\)$"):
        tf.layers.batch_normalization(tf.ones([2, 3, 4]), axis=[1, -2])
    with pytest.raises(ValueError, match=r"^Input has undefined `axis` dimension. Received "
                       r"input with shape \(None, None\) and axis=\(1,\)$"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match=r"^Input has undefined rank. Received: "
                       r"input_shape=<unknown>$"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32))
    with pytest.raises(ValueError, match="undefined rank"):  # a scalar too, as TF
        tf.layers.batch_normalization(tf.constant(1.0))
    with pytest.raises(TypeError, match=r"Expected an int or a list/tuple of ints for the "
                       r"argument 'axis', but received: 1.0"):
        tf.layers.BatchNormalization(axis=1.0)


def test_training_as_a_constant_float_tensor(sess):
    """TF's smart_cond takes a constant tensor by its value, whatever its dtype."""
    x0 = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    y = tf.layers.batch_normalization(tf.constant(x0), training=tf.constant(1.0),
                                      epsilon=0.0)
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    sess.run(tf.global_variables_initializer())
    ref = (x0 - x0.mean(0)) / x0.std(0)
    np.testing.assert_allclose(sess.run(y), ref, rtol=1e-6)


def test_gradients(graph):
    x0 = np.random.randn(5, 3)
    x = tf.constant(x0)
    y = tf.layers.batch_normalization(x, training=True,
                                      beta_initializer=tf.constant_initializer(0.3))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert compute_gradient_error(x, [5, 3], y * y, [5, 3], x_init_value=x0) < 1e-5
        gamma = tf.global_variables()[0]
        assert compute_gradient_error(gamma, [3], y * y, [5, 3]) < 1e-5


def test_update_ops_are_operations_named_as_tfs(sess):
    # TF keeps a layer's updates as ops: the assigns themselves when training is a
    # Python True, the conds' Merge ops for a bool tensor; running them returns None
    x = tf.constant([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])
    tf.layers.batch_normalization(x, training=True)
    tf.layers.batch_normalization(x, training=tf.placeholder_with_default(True, []),
                                  name="bn2")
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert [(type(u).__name__, u.name) for u in updates] == [
        ("Operation", "batch_normalization/AssignMovingAvg"),
        ("Operation", "batch_normalization/AssignMovingAvg_1"),
        ("Operation", "bn2/cond_2/Merge"), ("Operation", "bn2/cond_3/Merge")]
    sess.run(tf.global_variables_initializer())
    assert sess.run(updates) == [None] * 4
    moving_mean = [v for v in tf.global_variables()
                   if v.op.name == "batch_normalization/moving_mean"][0]
    # one update with momentum 0.99 from 0 towards the batch mean [2, 3, 4]
    np.testing.assert_allclose(sess.run(moving_mean), [0.02, 0.03, 0.04], rtol=1e-5)


def test_batch_renormalization_against_numpy(graph):
    """Batch renorm (Ioffe 2017) as TF's layer computes it, over three training steps:
    r = stddev / renorm_stddev and d = (mean - renorm_mean) / renorm_stddev from the
    averages before the step, clipped; y = ((x - mean) / stddev * r + d) * gamma + beta;
    the renorm averages move with renorm_momentum, moving_mean with momentum, and the
    moving variance through moving_stddev (its square less epsilon)."""
    eps, momentum, renorm_momentum = 1e-3, 0.5, 0.8
    clip = {"rmin": 0.5, "rmax": 1.5, "dmax": 1.0}
    x = tf.placeholder(tf.float64, [4, 2])
    y = tf.layers.batch_normalization(
        x, training=True, renorm=True, momentum=momentum, renorm_momentum=renorm_momentum,
        renorm_clipping=clip, epsilon=eps, gamma_initializer=tf.constant_initializer(2.0),
        beta_initializer=tf.constant_initializer(0.5))
    names = sorted(v.name for v in tf.global_variables())
    assert names == ["batch_normalization/%s:0" % n for n in (
        "beta", "gamma", "moving_mean", "moving_stddev", "moving_variance", "renorm_mean",
        "renorm_stddev")]
    weights = np.arange(1.0, 9.0).reshape(4, 2)
    dx = tf.gradients(tf.reduce_sum(y * weights), x)[0]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    variables = {v.name.split("/")[1][:-2]: v for v in tf.global_variables()}
    rmean, rstd, mmean, mstd = np.zeros(2), np.ones(2), np.zeros(2), np.ones(2)
    rs = np.random.RandomState(4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            x0 = rs.rand(4, 2) * 4
            got, got_dx, _ = sess.run([y, dx, updates], {x: x0})
            mean, std = x0.mean(0), np.sqrt(x0.var(0) + eps)
            r = np.clip(std / np.maximum(rstd, np.sqrt(eps)), clip["rmin"], clip["rmax"])
            d = np.clip((mean - rmean) / np.maximum(rstd, np.sqrt(eps)), -1.0, 1.0)
            xhat = (x0 - mean) / std
            np.testing.assert_allclose(got, (xhat * r + d) * 2.0 + 0.5, rtol=1e-10)
            # r and d carry no gradient: the batch-norm gradient scaled by 2 r
            g = weights * 2.0 * r
            want_dx = (g - g.mean(0) - xhat * (g * xhat).mean(0)) / std
            np.testing.assert_allclose(got_dx, want_dx, rtol=1e-8, atol=1e-10)
            # the decay is a float32 constant, as TF's
            rdecay, decay = (float(np.float32(1 - m)) for m in (renorm_momentum, momentum))
            rmean += (mean - rmean) * rdecay
            rstd += (std - rstd) * rdecay
            mmean += (mean - mmean) * decay
            mstd += (std - mstd) * decay
            values = sess.run(variables)
            np.testing.assert_allclose(values["renorm_mean"], rmean, rtol=1e-10)
            np.testing.assert_allclose(values["renorm_stddev"], rstd, rtol=1e-10)
            np.testing.assert_allclose(values["moving_mean"], mmean, rtol=1e-10)
            np.testing.assert_allclose(values["moving_variance"], mstd ** 2 - eps,
                                       rtol=1e-10)


def test_virtual_batches_against_numpy(graph):
    """Ghost batch norm: the batch reshaped to [virtual_batch_size, -1, ...], so virtual
    batch j holds examples j, j + 4 (8 examples, 2 per virtual batch), each normalized
    with its own moments; the moving averages move towards the virtual batches' mean
    moments; the variables have the broadcast shape [1, 1, 1, C]; never fused."""
    rs = np.random.RandomState(0)
    x0 = rs.randn(8, 3, 4)
    x = tf.placeholder(tf.float64, [None, 3, 4])
    training = tf.placeholder_with_default(True, [])
    layer = tf.layers.BatchNormalization(virtual_batch_size=2, momentum=0.5,
                                         beta_initializer=tf.constant_initializer(0.5))
    y = layer(x, training=training)
    assert not layer.fused and layer.get_config()["virtual_batch_size"] == 2
    assert [v.shape.as_list() for v in layer.variables] == [[1, 1, 1, 4]] * 4
    assert y.shape.as_list() == [None, 3, 4]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, _ = sess.run([y, layer.updates], {x: x0})
        groups = x0.reshape(2, 4, 3, 4)  # [virtual_batch_size, virtual batches, ...]
        mean = groups.mean(axis=(0, 2), keepdims=True)
        var = groups.var(axis=(0, 2), keepdims=True)
        want = (groups - mean) / np.sqrt(var + 1e-3) + 0.5
        np.testing.assert_allclose(got, want.reshape(8, 3, 4), rtol=1e-10)
        moving_mean, moving_variance = sess.run([layer.moving_mean, layer.moving_variance])
        np.testing.assert_allclose(moving_mean.ravel(), 0.5 * mean.mean(1).ravel(),
                                   rtol=1e-6)
        np.testing.assert_allclose(moving_variance.ravel(),
                                   0.5 + 0.5 * var.mean(1).ravel(), rtol=1e-6)
        # inference: the moving averages, on the whole batch
        got = sess.run(y, {x: x0, training: False})
        np.testing.assert_allclose(
            got, (x0 - moving_mean[0]) / np.sqrt(moving_variance[0] + 1e-3) + 0.5,
            rtol=1e-10)
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(y, {x: x0[:5]})  # 2 does not divide 5
        assert compute_gradient_error(x, [8, 3, 4], y * y, [8, 3, 4], x_init_value=x0) < 1e-5


def test_adjustment_scales_and_shifts_in_training_only(graph):
    """adjustment(shape) -> (scale, bias): y = (xhat * scale + bias) * gamma + beta in
    training; in inference the moving averages and no adjustment. The shape given is
    the input's; the layer is then never fused (biased variance in the update)."""
    x0 = np.random.RandomState(1).randn(6, 2, 2, 3).astype(np.float32)
    shapes = []

    def adjustment(shape):
        shapes.append(shape)
        return tf.constant([1.5, 2.0, 0.5]), tf.constant(0.25)
    x = tf.placeholder(tf.float32, [None, 2, 2, 3])
    training = tf.placeholder_with_default(True, [])
    layer = tf.layers.BatchNormalization(adjustment=adjustment, momentum=0.0,
                                         gamma_initializer=tf.constant_initializer(2.0))
    y = layer(x, training=training)
    assert not layer.fused and len(shapes) == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, shape, _ = sess.run([y, shapes[0], layer.updates], {x: x0})
        assert list(shape) == [6, 2, 2, 3]
        v = x0.astype(np.float64)
        mean, var = v.mean((0, 1, 2)), v.var((0, 1, 2))
        xhat = (v - mean) / np.sqrt(var + 1e-3)
        np.testing.assert_allclose(got, (xhat * [1.5, 2.0, 0.5] + 0.25) * 2.0, rtol=1e-5,
                                   atol=1e-6)
        # momentum 0: the moving averages are this batch's (biased) moments
        got = sess.run(y, {x: x0, training: False})
        np.testing.assert_allclose(got, xhat * 2.0, rtol=1e-4, atol=1e-5)
