"""tf.layers convolutions and pooling, as TF 2.15's tf.compat.v1.layers: several batch
dimensions, transposed convolutions with dilation and output_padding, argument checks,
and the names of the output ops (TF's, recorded from TF 2.15)."""
import numpy as np
import pytest

import tensorweave as tf


def _np_conv2d_valid(x, k):
    """[b, h, w, c] (*) [kh, kw, c, f], stride 1, VALID, by the definition."""
    kh, kw = k.shape[:2]
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros(x.shape[:1] + (oh, ow, k.shape[3]))
    for di in range(kh):
        for dj in range(kw):
            out += x[:, di:di + oh, dj:dj + ow, :] @ k[di, dj]
    return out


def _np_conv2d_transpose(x, k, strides, dilation, out_hw, padding):
    """The transposed convolution of [b, h, w, c] with [kh, kw, f, c]: each input pixel
    scatters `k @ x` at stride `strides`, taps `dilation` apart; the result is cropped (or
    zero-extended) to `out_hw` with TF's padding offsets."""
    b, h, w, _ = x.shape
    kh, kw, f, _ = k.shape
    extent = [(kh - 1) * dilation + 1, (kw - 1) * dilation + 1]
    full_hw = [(h - 1) * strides[0] + extent[0], (w - 1) * strides[1] + extent[1]]
    full = np.zeros((b, full_hw[0], full_hw[1], f))
    for i in range(h):
        for j in range(w):
            for di in range(kh):
                for dj in range(kw):
                    full[:, i * strides[0] + di * dilation, j * strides[1] + dj * dilation] += \
                        x[:, i, j] @ k[di, dj].T
    out = np.zeros((b, out_hw[0], out_hw[1], f))
    before = [max(full_hw[a] - out_hw[a], 0) // 2 if padding == "same" else 0
              for a in range(2)]
    region = full[:, before[0]:before[0] + out_hw[0], before[1]:before[1] + out_hw[1]]
    out[:, :region.shape[1], :region.shape[2]] = region
    return out


def test_conv2d_takes_several_batch_dimensions(sess):
    x0 = np.random.randn(2, 3, 5, 6, 2)
    k0 = np.random.randn(3, 2, 2, 4)
    p = tf.placeholder(tf.float64, [None, None, 5, 6, 2])
    y = tf.layers.conv2d(p, 4, (3, 2), kernel_initializer=tf.constant_initializer(k0),
                         bias_initializer=tf.constant_initializer(0.5), name="c")
    # TF's output shape and ops: the batch dimensions merged around the convolution
    assert y.shape.as_list() == [None, None, 3, 5, 4]
    assert y.op.name == "c/squeeze_batch_dims/Reshape_1"
    sess.run(tf.global_variables_initializer())
    got = sess.run(y, {p: x0})
    ref = _np_conv2d_valid(x0.reshape(6, 5, 6, 2), k0).reshape(2, 3, 3, 5, 4) + 0.5
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    # channels_first: the channel axis is -1 - rank
    xf = tf.constant(x0.transpose(0, 1, 4, 2, 3))
    yf = tf.layers.conv2d(xf, 4, (3, 2), data_format="channels_first", use_bias=False,
                          kernel_initializer=tf.constant_initializer(k0))
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(yf), (ref - 0.5).transpose(0, 1, 4, 2, 3),
                               rtol=1e-10)


def test_conv1d_several_batch_dimensions_and_gradient(sess):
    x0 = np.random.randn(2, 2, 6, 3)
    k0 = np.random.randn(2, 3, 2)
    x = tf.constant(x0)
    y = tf.layers.conv1d(x, 2, 2, kernel_initializer=tf.constant_initializer(k0),
                         use_bias=False)
    assert y.shape.as_list() == [2, 2, 5, 2]
    ref = sum(x0[:, :, t:t + 5] @ k0[t] for t in range(2))
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    sess.run(tf.global_variables_initializer())
    yv, gv = sess.run([y, g])
    np.testing.assert_allclose(yv, ref, rtol=1e-10)
    # d sum / d x[..., t', c] = sum over the taps that read t' of k[tap, c, :]
    ref_g = np.zeros_like(x0)
    for t in range(2):
        ref_g[:, :, t:t + 5] += k0[t].sum(1)
    np.testing.assert_allclose(gv, ref_g, rtol=1e-10)


def test_conv_rank_errors_say_min_ndim(graph):
    with pytest.raises(ValueError, match=r'layer "conv2d_1" is incompatible with the layer: '
                       r"expected min_ndim=4, found ndim=3. Full shape received: \(1, 4, 4\)"):
        tf.layers.conv2d(tf.zeros([1, 4, 4]), 2, 3)


def test_conv_argument_checks(graph):
    x = tf.zeros([1, 5, 5, 2])
    with pytest.raises(ValueError, match="Received filters=0"):
        tf.layers.conv2d(x, 0, 3)
    with pytest.raises(ValueError, match="Received filters=-1"):
        tf.layers.Conv1D(-1, 3)
    assert tf.layers.conv2d(x, 2.0, 3).shape.as_list() == [1, 3, 3, 2]  # as TF: int(2.0)
    with pytest.raises(ValueError, match=r"`kernel_size` argument must be a tuple of 2 "
                       r"integers. Received: 0 including \{0\} that does not satisfy the "
                       r"requirement `> 0`."):
        tf.layers.conv2d(x, 2, 0)
    with pytest.raises(ValueError, match="`dilation_rate` argument"):
        tf.layers.conv2d(x, 2, 3, dilation_rate=0)
    with pytest.raises(ValueError, match=r"The argument `strides` cannot contains 0\(s\). "
                       r"Received: \(1, 0\)"):
        tf.layers.conv2d(x, 2, 3, strides=(1, 0))
    with pytest.raises(ValueError, match="One of the dimensions in the output is <= 0"):
        tf.layers.conv2d(x, 2, 7)
    with pytest.raises(ValueError, match=r"where axis -3 \(0-based\) is the channel"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [1, None, 4, 4]), 2, 3,
                         data_format="channels_first")


def test_channels_first_3d_bias_is_a_bias_add(sess):
    x0 = np.random.randn(1, 2, 3, 3, 3)
    y = tf.layers.conv3d(tf.constant(x0), 2, 1, data_format="channels_first",
                         kernel_initializer=tf.ones_initializer(),
                         bias_initializer=tf.constant_initializer([1.0, -1.0]))
    assert y.op.type == "BiasAdd" and y.op.name == "conv3d/BiasAdd"  # TF's
    sess.run(tf.global_variables_initializer())
    ref = x0.sum(1, keepdims=True) + np.array([1.0, -1.0]).reshape(1, 2, 1, 1, 1)
    np.testing.assert_allclose(sess.run(y), ref, rtol=1e-12)


@pytest.mark.parametrize("kwargs, out_hw", [
    (dict(dilation_rate=2), (9, 10)),
    (dict(dilation_rate=2, padding="same"), (5, 6)),
    (dict(output_padding=1, strides=2), (12, 14)),
    (dict(output_padding=(1, 0), strides=(2, 3), padding="same"), (10, 16)),
])
def test_conv2d_transpose_dilation_and_output_padding(sess, kwargs, out_hw):
    """Output sizes recorded from TF 2.15; values against the scatter definition."""
    x0 = np.random.randn(2, 5, 6, 3)
    k0 = np.random.randn(3, 3, 4, 3)
    layer = tf.layers.Conv2DTranspose(4, 3, kernel_initializer=tf.constant_initializer(k0),
                                      use_bias=False, **kwargs)
    x = tf.placeholder(tf.float64, [None, None, None, 3])
    y, ys = layer(x), layer(tf.constant(x0))
    assert ys.shape.as_list() == [2, *out_hw, 4]
    sess.run(tf.global_variables_initializer())
    got = sess.run(y, {x: x0})
    strides = layer.strides
    ref = _np_conv2d_transpose(x0, k0, strides, layer.dilation_rate[0], out_hw,
                               layer.padding)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def test_transpose_output_padding_checks_and_conv3d_ignores_dilation(sess):
    with pytest.raises(ValueError, match=r"Strides must be greater than output padding. "
                       r"Received strides=\(2, 2\), output_padding=\(2, 2\)."):
        tf.layers.Conv2DTranspose(4, 3, output_padding=2, strides=2)
    x = tf.ones([1, 2, 3, 2, 1])
    layer = tf.layers.Conv3DTranspose(1, 2, dilation_rate=2, use_bias=False,
                                      kernel_initializer=tf.ones_initializer())
    y = layer(x)
    assert y.shape.as_list() == [1, 3, 4, 3, 1]  # TF 2.15 ignores it
    assert "dilation_rate" not in layer.get_config()
    y3 = tf.layers.Conv3DTranspose(1, 2, strides=2, output_padding=(1, 0, 1))(x)
    assert y3.shape.as_list() == [1, 5, 6, 5, 1]  # (n - 1) * 2 + 2 + output_padding
    sess.run(tf.global_variables_initializer())
    counts = np.zeros((3, 4, 3))  # each output sums the inputs whose 2x2x2 window hits it
    for i in range(2):
        for j in range(3):
            for k in range(2):
                counts[i:i + 2, j:j + 2, k:k + 2] += 1
    np.testing.assert_allclose(sess.run(y)[0, ..., 0], counts)


def test_transpose_rank_error(graph):
    with pytest.raises(ValueError, match=r"Inputs should have rank 4. Received "
                       r"input_shape=\(1, 2, 3, 3, 1\)."):
        tf.layers.conv2d_transpose(tf.ones([1, 2, 3, 3, 1]), 2, 3)


def test_separable_conv1d_adds_its_bias_before_squeezing(sess):
    x0 = np.random.randn(2, 5, 2)
    y = tf.layers.separable_conv1d(tf.constant(x0), 3, 2, data_format="channels_last",
                                   depthwise_initializer=tf.ones_initializer(),
                                   pointwise_initializer=tf.ones_initializer(),
                                   bias_initializer=tf.constant_initializer([1, 2, 3]),
                                   activation=tf.nn.relu)
    assert y.op.name == "separable_conv1d/Relu"
    assert y.op.inputs[0].op.name == "separable_conv1d/Squeeze"  # as TF
    sess.run(tf.global_variables_initializer())
    window = (x0[:, :-1] + x0[:, 1:]).sum(-1, keepdims=True)
    np.testing.assert_allclose(sess.run(y), np.maximum(window + [1, 2, 3], 0), rtol=1e-12)


@pytest.mark.parametrize("kind", ["max", "average"])
def test_pooling_ops_are_named_as_tfs(sess, kind):
    x0 = np.random.randn(2, 3, 4, 4, 2)
    p1 = getattr(tf.layers, kind + "_pooling1d")(tf.constant(x0[:, 0, 0]), 2, 1)
    p3 = getattr(tf.layers, kind + "_pooling3d")(tf.constant(x0), 2, 2,
                                                 data_format="channels_first")
    assert p1.op.name == kind + "_pooling1d/Squeeze"
    assert p3.op.name == kind + "_pooling3d/transpose_1"
    assert p3.shape.as_list() == [2, 3, 2, 2, 1]
    reduce = np.max if kind == "max" else np.mean
    ref1 = reduce(np.stack([x0[:, 0, 0, :-1], x0[:, 0, 0, 1:]]), 0)
    ref3 = reduce(x0[:, :, :, :, :2].reshape(2, 3, 2, 2, 2, 2, 1, 2), axis=(3, 5, 7))
    got1, got3 = sess.run([p1, p3])
    np.testing.assert_allclose(got1, ref1, rtol=1e-12)
    np.testing.assert_allclose(got3, ref3, rtol=1e-12)


def test_pooling_argument_checks(graph):
    with pytest.raises(ValueError, match="Argument `strides` must not be None."):
        tf.layers.max_pooling2d(tf.zeros([1, 4, 4, 1]), 2, None)
    with pytest.raises(ValueError, match=r"`pool_size` argument must be a tuple of 2 "
                       r"integers. Received: 0 including \{0\}"):
        tf.layers.MaxPooling2D(0, 1)
