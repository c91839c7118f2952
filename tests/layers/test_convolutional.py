"""tf.layers convolution and pooling layers: variable names/shapes as TF1, values against
the tf.nn ops / NumPy, data formats, and gradients through a small conv net."""
import numpy as np
import pytest

import tensorweave as tf


def _vars():
    return [(v.name, v.shape.as_list()) for v in tf.global_variables()]


def test_conv_variable_names_and_shapes(graph):
    x2 = tf.placeholder(tf.float32, [None, 8, 8, 3])
    y2 = tf.layers.conv2d(x2, 4, 3)
    tf.layers.conv2d(y2, 5, (1, 2), padding="same", use_bias=False)
    y1 = tf.layers.conv1d(tf.placeholder(tf.float32, [None, 10, 3]), 6, 2)
    y3 = tf.layers.conv3d(tf.placeholder(tf.float32, [2, 4, 4, 4, 2]), 3, 2, strides=2)
    yt = tf.layers.conv2d_transpose(x2, 2, 3, strides=2, padding="same")
    yt3 = tf.layers.conv3d_transpose(tf.placeholder(tf.float32, [2, 2, 3, 4, 2]), 5, 2,
                                     strides=(1, 2, 2))
    ys = tf.layers.separable_conv2d(x2, 7, 3, depth_multiplier=2)
    ys1 = tf.layers.separable_conv1d(tf.placeholder(tf.float32, [None, 10, 3]), 4, 3)
    assert _vars() == [
        ("conv2d/kernel:0", [3, 3, 3, 4]), ("conv2d/bias:0", [4]),
        ("conv2d_1/kernel:0", [1, 2, 4, 5]),
        ("conv1d/kernel:0", [2, 3, 6]), ("conv1d/bias:0", [6]),
        ("conv3d/kernel:0", [2, 2, 2, 2, 3]), ("conv3d/bias:0", [3]),
        ("conv2d_transpose/kernel:0", [3, 3, 2, 3]), ("conv2d_transpose/bias:0", [2]),
        ("conv3d_transpose/kernel:0", [2, 2, 2, 5, 2]), ("conv3d_transpose/bias:0", [5]),
        ("separable_conv2d/depthwise_kernel:0", [3, 3, 3, 2]),
        ("separable_conv2d/pointwise_kernel:0", [1, 1, 6, 7]),
        ("separable_conv2d/bias:0", [7]),
        ("separable_conv1d/depthwise_kernel:0", [3, 3, 1]),
        ("separable_conv1d/pointwise_kernel:0", [1, 3, 4]),
        ("separable_conv1d/bias:0", [4])]
    assert y2.shape.as_list() == [None, 6, 6, 4] and y2.op.name == "conv2d/BiasAdd"
    assert y2.op.inputs[0].op.name == "conv2d/Conv2D"
    assert y1.shape.as_list() == [None, 9, 6]
    assert y3.shape.as_list() == [2, 2, 2, 2, 3]
    assert yt.shape.as_list() == [None, 16, 16, 2]
    assert yt3.shape.as_list() == [2, 3, 6, 8, 5]  # valid: len * stride + max(k - s, 0)
    assert ys.shape.as_list() == [None, 6, 6, 7] and ys1.shape.as_list() == [None, 8, 4]


def _run(sess, *ts, feed=None):
    sess.run(tf.global_variables_initializer())
    return sess.run(list(ts), feed)


def test_conv2d_values_and_channels_first(sess):
    x0 = np.random.randn(2, 6, 5, 3)
    layer = tf.layers.Conv2D(4, (3, 2), strides=(2, 1), padding="same",
                             dilation_rate=1, activation=tf.nn.relu,
                             bias_initializer=tf.constant_initializer(0.1))
    y = layer(tf.constant(x0))
    cf = tf.layers.Conv2D(4, (3, 2), strides=(2, 1), padding="same",
                          data_format="channels_first",
                          bias_initializer=tf.constant_initializer(0.1))
    ycf = cf(tf.constant(x0.transpose(0, 3, 1, 2)))
    assert cf.kernel.shape.as_list() == [3, 2, 3, 4] and ycf.shape.as_list() == [2, 4, 3, 5]
    sess.run(tf.global_variables_initializer())
    k = sess.run(layer.kernel)
    sess.run(cf.kernel.assign(k))
    ref = tf.nn.relu(tf.nn.conv2d(x0, k, [1, 2, 1, 1], "SAME") + 0.1)
    yv, ycfv, refv = sess.run([y, ycf, ref])
    np.testing.assert_allclose(yv, refv, rtol=1e-12)
    np.testing.assert_allclose(np.maximum(ycfv.transpose(0, 2, 3, 1), 0), refv, rtol=1e-12)


def test_conv1d_and_conv3d_values(sess):
    x1 = np.random.randn(2, 9, 3)
    l1 = tf.layers.Conv1D(2, 3, dilation_rate=2)
    y1 = l1(tf.constant(x1))
    x3 = np.random.randn(1, 4, 5, 4, 2)
    l3 = tf.layers.Conv3D(3, 2, padding="same", data_format="channels_first",
                          bias_initializer=tf.ones_initializer())
    y3 = l3(tf.constant(x3))
    assert y3.shape.as_list() == [1, 3, 5, 4, 2]
    y1v, k1, y3v, k3 = _run(sess, y1, l1.kernel, y3, l3.kernel)
    ref1 = np.stack([sum(x1[:, i + 2 * t] @ k1[t] for t in range(3)) for i in range(5)], 1)
    np.testing.assert_allclose(y1v, ref1, rtol=1e-12)
    ref3 = sess.run(tf.nn.conv3d(x3.transpose(0, 2, 3, 4, 1), k3, [1] * 5, "SAME")) + 1
    np.testing.assert_allclose(y3v, ref3.transpose(0, 4, 1, 2, 3), rtol=1e-12)


def test_transpose_layers_dynamic_shapes(sess):
    x0 = np.random.randn(2, 3, 4, 2)
    p = tf.placeholder(tf.float64, [None, None, None, 2])
    layer = tf.layers.Conv2DTranspose(3, 3, strides=2, use_bias=False)
    y = layer(p)
    assert y.shape.as_list() == [None, None, None, 3]
    sess.run(tf.global_variables_initializer())
    yv, k = sess.run([y, layer.kernel], {p: x0})
    assert yv.shape == (2, 7, 9, 3)
    ref = sess.run(tf.nn.conv2d_transpose(x0, k, [2, 7, 9, 3], [1, 2, 2, 1], "VALID"))
    np.testing.assert_allclose(yv, ref, rtol=1e-12)
    p3 = tf.placeholder(tf.float64, [None, 2, 2, 2, 1])
    y3 = tf.layers.conv3d_transpose(p3, 2, 2, strides=2, padding="same")
    sess.run(tf.global_variables_initializer())
    assert sess.run(y3, {p3: np.ones([3, 2, 2, 2, 1])}).shape == (3, 4, 4, 4, 2)


def test_separable_values(sess):
    x0 = np.random.randn(2, 6, 6, 3)
    layer = tf.layers.SeparableConv2D(4, 3, padding="same", depth_multiplier=2,
                                      bias_initializer=tf.constant_initializer(0.5))
    y = layer(tf.constant(x0))
    x1 = np.random.randn(2, 7, 3)
    l1 = tf.layers.SeparableConv1D(4, 3, strides=2)
    y1 = l1(tf.constant(x1))
    assert y1.shape.as_list() == [2, 3, 4]
    sess.run(tf.global_variables_initializer())
    dk, pk = sess.run([layer.depthwise_kernel, layer.pointwise_kernel])
    ref = tf.nn.separable_conv2d(x0, dk, pk, [1, 1, 1, 1], "SAME") + 0.5
    np.testing.assert_allclose(*sess.run([y, ref]), rtol=1e-12)
    dk1, pk1 = sess.run([l1.depthwise_kernel, l1.pointwise_kernel])
    mid = np.stack([sum(x1[:, 2 * i + t] * dk1[t, :, 0] for t in range(3)) for i in range(3)],
                   1)
    np.testing.assert_allclose(sess.run(y1), mid @ pk1[0], rtol=1e-12)


def test_conv_errors(graph):
    with pytest.raises(ValueError, match="channel dimension"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [1, 4, 4, None]), 2, 3)
    with pytest.raises(ValueError, match="expected min_ndim=4, found ndim=3"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [1, 4, 4]), 2, 3)
    with pytest.raises(ValueError, match="kernel_size"):
        tf.layers.Conv2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="padding"):
        tf.layers.Conv2D(2, 3, padding="full")
    # causal padding is for the 1-D convolutions only; TF's messages, at construction
    for make in (lambda: tf.layers.Conv2D(2, 3, padding="causal"),
                 lambda: tf.layers.Conv2DTranspose(2, 3, padding="causal"),
                 lambda: tf.layers.conv3d(tf.ones([1, 3, 3, 3, 1]), 1, 2, padding="causal")):
        with pytest.raises(ValueError, match="Causal padding is only supported for `Conv1D`"):
            make()
    with pytest.raises(ValueError, match=r"`strides > 1` not supported in conjunction with "
                       r"`dilation_rate > 1`. Received: strides=\(2,\) and dilation_rate="
                       r"\(2,\)"):
        tf.layers.Conv1D(1, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="`strides > 1` not supported"):
        tf.layers.conv2d(tf.ones([1, 9, 9, 1]), 2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="`strides > 1` not supported"):
        tf.layers.separable_conv2d(tf.ones([1, 9, 9, 1]), 1, 3, strides=(1, 2),
                                   dilation_rate=(2, 1))


def test_causal_conv1d(sess):
    # left padding by dilation * (kernel - 1), then VALID: output t sees inputs <= t
    x0 = np.arange(9, dtype=np.float64).reshape(1, 9, 1)
    y = tf.layers.conv1d(tf.constant(x0), 1, 3, padding="causal", dilation_rate=2,
                         kernel_initializer=tf.ones_initializer())
    assert y.shape.as_list() == [1, 9, 1]
    padded = np.concatenate([np.zeros(4), x0.ravel()])
    expected = padded[:-4] + padded[2:-2] + padded[4:]  # [0, 1, 2, 4, 6, 9, 12, 15, 18]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y).ravel(), expected)
    assert tf.layers.conv1d(tf.ones([1, 9, 1]), 1, 3, padding="causal").shape.as_list() == \
        [1, 9, 1]
    # channels_first pads the time axis, 2; strides count from the padded start
    k = np.random.randn(2, 3, 2)
    xf = np.random.randn(2, 3, 7)
    z = tf.layers.conv1d(tf.constant(xf), 2, 2, strides=2, padding="Causal",
                         data_format="channels_first",
                         kernel_initializer=tf.constant_initializer(k))
    assert z.shape.as_list() == [2, 2, 4]
    pf = np.concatenate([np.zeros((2, 3, 1)), xf], axis=2)
    ref = np.stack([np.einsum("bc,co->bo", pf[:, :, t], k[0]) +
                    np.einsum("bc,co->bo", pf[:, :, t + 1], k[1])
                    for t in range(0, 7, 2)], axis=2)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(z), ref, rtol=1e-10)
    # separable_conv1d takes causal too, with a ones depthwise and pointwise kernel
    s = tf.layers.separable_conv1d(tf.constant(x0), 1, 2, padding="causal",
                                   depthwise_initializer=tf.ones_initializer(),
                                   pointwise_initializer=tf.ones_initializer())
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(s).ravel(), padded[3:-1] + padded[4:])


@pytest.mark.parametrize("kind", ["max", "average"])
def test_pooling_layers(sess, kind):
    x1, x2, x3 = (np.random.randn(*s) for s in ([2, 7, 3], [2, 5, 6, 3], [1, 4, 4, 5, 2]))
    f1 = getattr(tf.layers, kind + "_pooling1d")(x1, 2, 2, padding="same")
    f2 = getattr(tf.layers, kind + "_pooling2d")(x2, (2, 3), 2)
    f3 = getattr(tf.layers, kind + "_pooling3d")(x3, 2, 2, data_format="channels_first")
    assert f1.shape.as_list() == [2, 4, 3] and f2.shape.as_list() == [2, 2, 2, 3]
    assert f3.shape.as_list() == [1, 4, 2, 2, 1]
    assert f2.op.name.startswith(kind + "_pooling2d/")
    nn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    nn3 = tf.nn.max_pool3d if kind == "max" else tf.nn.avg_pool3d
    nn1 = tf.nn.max_pool1d if kind == "max" else tf.nn.avg_pool1d
    refs = [nn1(x1, 2, 2, "SAME"), nn(x2, [1, 2, 3, 1], [1, 2, 2, 1], "VALID"),
            nn3(x3, 2, 2, "VALID", data_format="NCDHW")]
    for got, ref in zip(sess.run([f1, f2, f3]), sess.run(refs)):
        np.testing.assert_allclose(got, ref)
    cls = getattr(tf.layers, ("Max" if kind == "max" else "Average") + "Pooling2D")
    layer = cls(2, 2)
    assert layer.strides == (2, 2) and layer.weights == []
    assert layer.name.startswith(kind + "_pooling2d")
    with pytest.raises(ValueError, match="Argument `strides` must not be None."):
        cls(2, None)  # as TF1's tf.layers (Keras' default of pool_size is not theirs)


def test_gradients_through_a_small_conv_net(sess):
    tf.set_random_seed(1)
    x0 = np.random.randn(4, 8, 8, 1).astype(np.float32)
    labels = np.array([0, 1, 2, 1])
    x = tf.constant(x0)
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.batch_normalization(h, training=True)
    h = tf.layers.separable_conv2d(h, 4, 3)
    h = tf.layers.flatten(h)
    logits = tf.layers.dense(h, 3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(update_ops) == 2
    with tf.control_dependencies(update_ops):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    grads = tf.gradients(loss, tf.trainable_variables())
    assert all(g is not None for g in grads)
    assert len(tf.trainable_variables()) == 9
    sess.run(tf.global_variables_initializer())
    before = sess.run(loss)
    for _ in range(30):
        sess.run(train)
    assert sess.run(loss) < 0.5 * before
    moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
    assert np.abs(sess.run(moving_mean)).sum() > 0  # the updates ran with the train op
