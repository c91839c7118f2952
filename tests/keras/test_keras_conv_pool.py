"""tf.keras convolution and pooling layers against NumPy references, with TF 2.15's
variable names, Keras defaults (data_format from the backend, 'causal' padding,
output_padding) and messages."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers


def np_conv(x, kernel, strides, padding, dilation=None):
    """N-d convolution of channels_last `x` [N, *spatial, C] with `kernel` [*k, C, F]."""
    rank = x.ndim - 2
    dilation = dilation or (1,) * rank
    eff = [(k - 1) * d + 1 for k, d in zip(kernel.shape[:rank], dilation)]
    sizes = x.shape[1:-1]
    if padding == "same":
        out = [-(-n // s) for n, s in zip(sizes, strides)]
        pads = [max((o - 1) * s + e - n, 0) for o, s, e, n in zip(out, strides, eff, sizes)]
        x = np.pad(x, [(0, 0)] + [(p // 2, p - p // 2) for p in pads] + [(0, 0)])
    out_shape = [(n - e) // s + 1 for n, e, s in zip(x.shape[1:-1], eff, strides)]
    y = np.zeros([x.shape[0]] + out_shape + [kernel.shape[-1]], np.float64)
    for idx in np.ndindex(*out_shape):
        window = x[(slice(None),) + tuple(slice(i * s, i * s + e, d) for i, s, e, d in
                                          zip(idx, strides, eff, dilation))]
        y[(slice(None),) + idx] = np.tensordot(window, kernel, axes=(
            list(range(1, rank + 2)), list(range(rank + 1))))
    return y


def np_conv_transpose(x, kernel, strides, padding, out_sizes):
    """Transposed convolution of channels_last `x` with `kernel` [*k, F, C] giving
    `out_sizes` (the gradient of a convolution, as TF's op)."""
    rank = x.ndim - 2
    ks = kernel.shape[:rank]
    full = [(n - 1) * s + k for n, s, k in zip(x.shape[1:-1], strides, ks)]
    y = np.zeros([x.shape[0]] + [max(f, o) for f, o in zip(full, out_sizes)] +
                 [kernel.shape[rank]])
    for idx in np.ndindex(*x.shape[1:-1]):
        contribution = np.tensordot(x[(slice(None),) + idx], kernel, axes=([1], [rank + 1]))
        y[(slice(None),) + tuple(slice(i * s, i * s + k) for i, s, k in
                                 zip(idx, strides, ks))] += contribution
    starts = [max(f - o, 0) // 2 if padding == "same" else 0
              for f, o in zip(full, out_sizes)]
    return y[(slice(None),) + tuple(slice(b, b + o) for b, o in zip(starts, out_sizes))]


def _run(sess, *tensors):
    sess.run(tf.global_variables_initializer())
    return sess.run(list(tensors))


def test_conv2d_names_defaults_and_values(sess):
    img = np.random.rand(2, 7, 6, 3).astype(np.float32)
    x = tf.constant(img)
    conv = L.Conv2D(4, 3, strides=2, padding="same", activation="relu",
                    bias_initializer="ones")
    y = conv(x)
    assert conv.name == "conv2d" and [v.name for v in conv.weights] == [
        "conv2d/kernel:0", "conv2d/bias:0"]
    assert conv.data_format == "channels_last" and conv.kernel.shape.as_list() == [3, 3, 3, 4]
    assert y.op.name == "conv2d/Relu" and y.shape.as_list() == [2, 4, 3, 4]
    dilated = L.Conv2D(2, (2, 3), dilation_rate=2)
    yd = dilated(x)
    first = L.Conv2D(2, 2, data_format="channels_first")
    yf = first(tf.transpose(x, [0, 3, 1, 2]))
    out, k, out_d, kd, out_f, kf = _run(sess, y, conv.kernel, yd, dilated.kernel, yf,
                                        first.kernel)
    np.testing.assert_allclose(out, np.maximum(np_conv(img, k, (2, 2), "same") + 1, 0),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_d, np_conv(img, kd, (1, 1), "valid", (2, 2)),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_f, np_conv(img, kf, (1, 1), "valid").transpose(0, 3, 1, 2),
                               rtol=1e-4, atol=1e-5)


def test_conv1d_causal_and_conv3d(sess):
    seq = np.random.rand(2, 7, 3).astype(np.float32)
    causal = L.Conv1D(2, 3, padding="causal", dilation_rate=2)
    y = causal(tf.constant(seq))
    assert y.shape.as_list() == [2, 7, 2]  # a causal convolution keeps the length
    vol = np.random.rand(1, 4, 5, 4, 2).astype(np.float32)
    conv3 = L.Conv3D(3, 2, strides=(1, 2, 1))
    y3 = conv3(tf.constant(vol))
    assert conv3.name == "conv3d" and y3.shape.as_list() == [1, 3, 2, 3, 3]
    out, k, out3, k3 = _run(sess, y, causal.kernel, y3, conv3.kernel)
    padded = np.pad(seq, [(0, 0), (4, 0), (0, 0)])  # dilation * (kernel - 1) on the left
    np.testing.assert_allclose(out, np_conv(padded, k, (1,), "valid", (2,)), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(out3, np_conv(vol, k3, (1, 2, 1), "valid"), rtol=1e-4,
                               atol=1e-5)


def test_conv_errors_are_keras(graph):
    with pytest.raises(ValueError, match=r"Causal padding is only supported for `Conv1D`and "
                                         r"`SeparableConv1D`."):
        L.Conv2D(4, 3, padding="causal")
    with pytest.raises(ValueError, match=r"The `kernel_size` argument must be a tuple of 2 "
                                         r"integers. Received: \(3, 3, 3\)"):
        L.Conv2D(4, (3, 3, 3))
    with pytest.raises(ValueError, match=r'The `padding` argument must be a list/tuple or one '
                                         r'of "valid", "same" \(or "causal", only for `Conv1D\). '
                                         r"Received: foo"):
        L.Conv2D(4, 3, padding="foo")
    with pytest.raises(ValueError, match="Invalid value for argument `filters`"):
        L.Conv2D(0, 3)
    with pytest.raises(ValueError, match="The number of filters must be evenly divisible by "
                                         "the number of groups. Received: groups=3, filters=4"):
        L.Conv2D(4, 3, groups=3)
    with pytest.raises(ValueError, match='Input 0 of layer "conv2d_5" is incompatible with the '
                                         "layer: expected min_ndim=4, found ndim=2"):
        L.Conv2D(4, 3)(tf.placeholder(tf.float32, [None, 3]))
    with pytest.raises(ValueError, match="The channel dimension of the inputs should be defined"):
        L.Conv2D(4, 3)(tf.placeholder(tf.float32, [None, 5, 5, None]))


def test_image_data_format_is_the_default(graph):
    K.backend.set_image_data_format("channels_first")
    try:
        assert L.Conv2D(2, 3).data_format == "channels_first"
        assert L.MaxPooling2D().data_format == "channels_first"
        assert L.Conv1D(2, 3).data_format == "channels_last"  # 1-D layers: channels_last
        assert L.Flatten().data_format == "channels_first"
    finally:
        K.backend.set_image_data_format("channels_last")


def test_conv_transpose_with_output_padding(sess):
    img = np.random.rand(2, 3, 4, 3).astype(np.float32)
    x = tf.constant(img)
    layers = {
        ("same", None): L.Conv2DTranspose(2, 3, strides=2, padding="same"),
        ("valid", None): L.Conv2DTranspose(2, 3, strides=2),
        ("same", 1): L.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1),
        ("valid", 1): L.Conv2DTranspose(2, 3, strides=2, output_padding=1),
    }
    outputs = {key: layer(x) for key, layer in layers.items()}
    expected_shapes = {("same", None): [2, 6, 8, 2], ("valid", None): [2, 7, 9, 2],
                       ("same", 1): [2, 6, 8, 2], ("valid", 1): [2, 8, 10, 2]}
    for key, y in outputs.items():
        assert y.shape.as_list() == expected_shapes[key], key
    assert layers[("same", None)].kernel.shape.as_list() == [3, 3, 2, 3]
    assert [v.name for v in layers[("same", None)].weights] == [
        "conv2d_transpose/kernel:0", "conv2d_transpose/bias:0"]
    sess.run(tf.global_variables_initializer())
    for (padding, _), layer in layers.items():
        out, kernel = sess.run([outputs[(padding, _)], layer.kernel])
        np.testing.assert_allclose(out, np_conv_transpose(img, kernel, (2, 2), padding,
                                                          out.shape[1:3]),
                                   rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Strides must be greater than output padding"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    vol = L.Conv3DTranspose(2, 2, strides=2)(tf.constant(np.ones((1, 2, 2, 2, 3), np.float32)))
    assert vol.shape.as_list() == [1, 4, 4, 4, 2]


def test_separable_convolutions(sess):
    img = np.random.rand(2, 5, 5, 3).astype(np.float32)
    sep = L.SeparableConv2D(4, 3, depth_multiplier=2, padding="same")
    y = sep(tf.constant(img))
    assert [v.name for v in sep.weights] == [
        "separable_conv2d/depthwise_kernel:0", "separable_conv2d/pointwise_kernel:0",
        "separable_conv2d/bias:0"]
    seq = np.random.rand(2, 6, 3).astype(np.float32)
    sep1 = L.SeparableConv1D(2, 3, padding="causal")
    y1 = sep1(tf.constant(seq))
    assert y1.shape.as_list() == [2, 6, 2]
    out, dw, pw, out1, dw1, pw1 = _run(sess, y, sep.depthwise_kernel, sep.pointwise_kernel,
                                       y1, sep1.depthwise_kernel, sep1.pointwise_kernel)

    def separable(x, dw, pw, padding):
        channels = x.shape[-1]
        depth = np.concatenate([np_conv(x[..., c:c + 1], dw[..., c:c + 1, :],
                                        (1,) * (x.ndim - 2), padding)
                                for c in range(channels)], axis=-1)
        return np.tensordot(depth, pw.reshape(pw.shape[-2:]), axes=([-1], [0]))

    np.testing.assert_allclose(out, separable(img, dw, pw, "same"), rtol=1e-4, atol=1e-5)
    padded = np.pad(seq, [(0, 0), (2, 0), (0, 0)])
    np.testing.assert_allclose(out1, separable(padded, dw1, pw1, "valid"), rtol=1e-4,
                               atol=1e-5)


def test_pooling_layers(sess):
    img = np.random.rand(2, 6, 4, 3).astype(np.float32)
    x = tf.constant(img)
    max2 = L.MaxPooling2D()(x)
    avg_same = L.AveragePooling2D(3, 1, "same")(x)
    assert max2.op.name == "max_pooling2d/MaxPool" and max2.shape.as_list() == [2, 3, 2, 3]
    assert L.MaxPool2D is L.MaxPooling2D and L.AvgPool1D is L.AveragePooling1D
    seq = np.random.rand(2, 7, 3).astype(np.float32)
    max1 = L.MaxPooling1D(3, 2)(tf.constant(seq))
    vol = np.random.rand(1, 4, 4, 4, 2).astype(np.float32)
    avg3 = L.AveragePooling3D()(tf.constant(vol))
    g_avg = L.GlobalAveragePooling2D()(x)
    g_max_keep = L.GlobalMaxPooling2D(keepdims=True)(x)
    g1 = L.GlobalAveragePooling1D()(tf.constant(seq))
    g3 = L.GlobalMaxPooling3D()(tf.constant(vol))
    assert g_avg.op.name == "global_average_pooling2d/Mean"
    assert g_max_keep.shape.as_list() == [2, 1, 1, 3] and g1.shape.as_list() == [2, 3]
    out = sess.run([max2, avg_same, max1, avg3, g_avg, g_max_keep, g1, g3])
    np.testing.assert_allclose(out[0], img.reshape(2, 3, 2, 2, 2, 3).max(axis=(2, 4)))
    padded = np.pad(img, [(0, 0), (1, 1), (1, 1), (0, 0)])
    counts = np.pad(np.ones(img.shape), [(0, 0), (1, 1), (1, 1), (0, 0)])
    sums = sum(padded[:, i:i + 6, j:j + 4] for i in range(3) for j in range(3))
    norm = sum(counts[:, i:i + 6, j:j + 4] for i in range(3) for j in range(3))
    np.testing.assert_allclose(out[1], sums / norm, rtol=1e-5)  # 'same' averages the valid
    np.testing.assert_allclose(out[2], np.stack([seq[:, i:i + 3].max(1) for i in (0, 2, 4)],
                                                1))
    np.testing.assert_allclose(out[3], vol.reshape(1, 2, 2, 2, 2, 2, 2, 2).mean(axis=(2, 4, 6)),
                               rtol=1e-5)
    np.testing.assert_allclose(out[4], img.mean(axis=(1, 2)), rtol=1e-5)
    np.testing.assert_allclose(out[5], img.max(axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(out[6], seq.mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(out[7], vol.max(axis=(1, 2, 3)))
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        L.MaxPooling2D()(tf.constant(seq))


def test_conv2d_transpose_with_dilation(sess):
    # Keras 2.15 takes dilation_rate (it raised NotImplementedError here): each input
    # pixel scatters the dilated kernel, valid padding, stride 1
    rs = np.random.RandomState(0)
    x = rs.rand(2, 5, 6, 3).astype(np.float32)
    layer = L.Conv2DTranspose(4, 3, dilation_rate=2)
    y = layer(tf.constant(x))
    assert y.shape.as_list() == [2, 9, 10, 4]  # (5 - 1) + (3 - 1) * 2 + 1, as TF's
    sess.run(tf.global_variables_initializer())
    kernel = rs.rand(3, 3, 4, 3).astype(np.float32)  # [kh, kw, filters, in]
    layer.set_weights([kernel, np.zeros(4, np.float32)])
    want = np.zeros((2, 9, 10, 4))
    for i in range(5):
        for j in range(6):
            for a in range(3):
                for b in range(3):
                    want[:, i + 2 * a, j + 2 * b] += x[:, i, j] @ kernel[a, b].T
    np.testing.assert_allclose(sess.run(y), want, rtol=1e-5)
    assert layer.get_config()["dilation_rate"] == (2, 2)
