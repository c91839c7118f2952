"""tf.keras.backend beyond the basics: rnn, convolutions, pooling, padding, resizing,
batch_dot, math and array helpers, variables from shapes, updates, random tensors, batch
normalization, focal crossentropies, CTC, map_fn/foldl/foldr and print_tensor, against
NumPy references (the values were also checked against TF 2.15 when written)."""
import itertools
import math

import numpy as np
import pytest

import tensorweave as tf

B = tf.keras.backend
RNG = np.random.RandomState(7)


def randn(*shape, dtype="float32"):
    return RNG.randn(*shape).astype(dtype)


def run(*tensors, feed_dict=None):
    return B.get_session().run(list(tensors), feed_dict=feed_dict)


# --- rnn -----------------------------------------------------------------------------------
def np_rnn(x, h0, w, u, mask=None, backwards=False, zero_output=False, lengths=None):
    """tanh(x_t w + h u) over (batch, time, features) x: (last, outputs, state)."""
    steps = list(range(x.shape[1]))
    if backwards:
        steps = steps[::-1]
    if lengths is not None:  # input_length: a mask of the first `lengths` steps
        mask = np.arange(x.shape[1])[None, :] < lengths[:, None]
        if backwards:
            mask = mask[:, ::-1]
    h, prev, outputs = h0, np.zeros_like(h0), []
    for i, t in enumerate(steps):
        new = np.tanh(x[:, t] @ w + h @ u)
        if mask is not None:
            m = (mask[:, i] if lengths is not None else mask[:, t])[:, None]
            h = np.where(m, new, h)
            out = np.where(m, new, 0.0 if zero_output else prev)
        else:
            h = out = new
        prev = out
        outputs.append(out)
    return outputs[-1], np.stack(outputs, 1), h


@pytest.mark.parametrize("unroll", [False, True])
@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("masked,zero_output", [(False, False), (True, False), (True, True)])
def test_rnn_against_numpy(keras_graph, unroll, backwards, masked, zero_output):
    x, h0 = randn(3, 5, 2), randn(3, 4)
    w, u = randn(2, 4), randn(4, 4) * 0.5
    mask = np.array([[1, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], bool)

    def step(inputs, states):
        h = B.tanh(B.dot(inputs, B.constant(w)) + B.dot(states[0], B.constant(u)))
        return h, [h]

    last, outputs, states = B.rnn(step, B.constant(x), [B.constant(h0)],
                                  go_backwards=backwards, unroll=unroll,
                                  mask=B.constant(mask, "bool") if masked else None,
                                  zero_output_for_mask=zero_output)
    assert outputs.shape.as_list() == [3, 5, 4] and len(states) == 1
    if unroll and backwards and zero_output:
        # TF 2.15's unrolled loop carries the previous output over masked steps, then
        # zeroes the outputs (in reversed order) with the mask in forward order, and the
        # last output with the last step's (time 0's) mask
        np_last, np_outputs, np_state = np_rnn(x, h0, w, u, mask, backwards)
        expected = (np.where(mask[:, :1], np_last, 0.0),
                    np.where(mask[:, :, None], np_outputs, 0.0), np_state)
    else:
        expected = np_rnn(x, h0, w, u, mask if masked else None, backwards, zero_output)
    for got, want in zip(run(last, outputs, states[0]), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backwards", [False, True])
def test_rnn_input_length_constants_and_time_major(keras_graph, backwards):
    x, h0, c = randn(4, 3, 2), randn(3, 2), randn(2)
    lengths = np.array([2, 4, 1])

    def step(inputs, states):
        assert len(states) == 2  # the state, then the constant
        h = B.tanh(inputs + states[0] + states[1])
        return h, [h]

    last, outputs, states = B.rnn(step, B.constant(x), [B.constant(h0)],
                                  go_backwards=backwards, constants=[B.constant(c)],
                                  input_length=B.constant(lengths, "int32"),
                                  time_major=True)
    eye = np.eye(2, dtype="float32")
    ref = np_rnn(x.transpose(1, 0, 2) + c, h0, eye, eye, backwards=backwards,
                 lengths=lengths)
    got = run(last, outputs, states[0])
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], ref[1].transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-5, atol=1e-6)


def test_rnn_nested_states_gradient_and_errors(keras_graph):
    x = RNG.randn(2, 3, 2)
    w = tf.constant(RNG.randn(2, 2))

    def step(inputs, states):  # two states: a running sum and a product-like term
        s = states[0] + tf.matmul(inputs, w)
        p = states[1] * 0.5 + tf.tanh(s)
        return p, [s, p]

    xt = tf.constant(x)
    zeros = tf.zeros((2, 2), tf.float64)
    _, outputs, states = B.rnn(step, xt, [zeros, zeros])
    loss = tf.reduce_sum(outputs) + tf.reduce_sum(states[0])
    grad_w, = tf.gradients(loss, [w])

    def np_loss(wv):
        s = p = np.zeros((2, 2))
        total = 0.0
        for t in range(3):
            s = s + x[:, t] @ wv
            p = p * 0.5 + np.tanh(s)
            total += p.sum()
        return total + s.sum()

    wv = run(w)[0]
    numeric = np.zeros_like(wv)
    for idx in np.ndindex(*wv.shape):
        d = np.zeros_like(wv)
        d[idx] = 1e-6
        numeric[idx] = (np_loss(wv + d) - np_loss(wv - d)) / 2e-6
    got_loss, got_grad = run(loss, grad_w)
    np.testing.assert_allclose(got_loss, np_loss(wv), rtol=1e-10)
    np.testing.assert_allclose(got_grad, numeric, rtol=1e-5)
    with pytest.raises(ValueError, match="Unrolling requires a fixed number of timesteps"):
        B.rnn(step, tf.placeholder(tf.float64, (2, None, 2)), [zeros, zeros], unroll=True)
    with pytest.raises(ValueError):
        B.rnn(step, tf.zeros((2, 3), tf.float64), [zeros, zeros])


# --- convolutions and pooling --------------------------------------------------------------
def np_conv(x, kernel, strides, padding, dilation=None):
    """Convolution of channels_last `x` (N, *spatial, C) with `kernel` (*k, C, F)."""
    rank = x.ndim - 2
    dilation = dilation or (1,) * rank
    eff = [(k - 1) * d + 1 for k, d in zip(kernel.shape[:rank], dilation)]
    x = _same_pad(x, eff, strides) if padding == "same" else x
    out_shape = [(n - e) // s + 1 for n, e, s in zip(x.shape[1:-1], eff, strides)]
    y = np.zeros([x.shape[0]] + out_shape + [kernel.shape[-1]])
    for idx in np.ndindex(*out_shape):
        window = x[(slice(None),) + tuple(slice(i * s, i * s + e, d) for i, s, e, d in
                                          zip(idx, strides, eff, dilation))]
        y[(slice(None),) + idx] = np.tensordot(window, kernel, axes=(
            list(range(1, rank + 2)), list(range(rank + 1))))
    return y


def _same_pad(x, window, strides, value=0.0):
    sizes = x.shape[1:-1]
    out = [-(-n // s) for n, s in zip(sizes, strides)]
    pads = [max((o - 1) * s + w - n, 0) for o, s, w, n in zip(out, strides, window, sizes)]
    return np.pad(x, [(0, 0)] + [(p // 2, p - p // 2) for p in pads] + [(0, 0)],
                  constant_values=value)


def np_pool(x, size, strides, padding, mode):
    if mode == "max":
        x = _same_pad(x, size, strides, -np.inf) if padding == "same" else x
        reduce = np.max
    else:  # average over the valid (unpadded) entries only
        ones = np.ones(x.shape[:-1] + (1,))
        x = np.concatenate([x, ones], -1)
        x = _same_pad(x, size, strides) if padding == "same" else x
        reduce = np.sum
    out_shape = [(n - k) // s + 1 for n, k, s in zip(x.shape[1:-1], size, strides)]
    y = np.zeros([x.shape[0]] + out_shape + [x.shape[-1]])
    for idx in np.ndindex(*out_shape):
        window = x[(slice(None),) + tuple(slice(i * s, i * s + k) for i, s, k in
                                          zip(idx, strides, size))]
        y[(slice(None),) + idx] = reduce(window, axis=tuple(range(1, x.ndim - 1)))
    return y if mode == "max" else y[..., :-1] / y[..., -1:]


def to_cf(x):
    return np.moveaxis(x, -1, 1)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_conv1d_conv3d(keras_graph, padding):
    x, k = randn(2, 5, 6, 3), randn(3, 2, 3, 4)
    got = run(B.conv2d(B.constant(x), B.constant(k), (2, 1), padding),
              B.conv2d(B.constant(to_cf(x)), B.constant(k), (1, 2), padding,
                       "channels_first"),
              B.conv2d(B.constant(x), B.constant(k), padding=padding, dilation_rate=(2, 2)))
    np.testing.assert_allclose(got[0], np_conv(x, k, (2, 1), padding), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], to_cf(np_conv(x, k, (1, 2), padding)), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(got[2], np_conv(x, k, (1, 1), padding, (2, 2)), rtol=1e-4,
                               atol=1e-5)
    x1, k1 = randn(2, 7, 3), randn(3, 3, 4)
    x3, k3 = randn(1, 4, 5, 4, 2), randn(2, 2, 3, 2, 3)
    got = run(B.conv1d(B.constant(x1), B.constant(k1), 2, padding),
              B.conv3d(B.constant(x3), B.constant(k3), (1, 2, 1), padding),
              B.conv3d(B.constant(to_cf(x3)), B.constant(k3), (1, 1, 2), padding,
                       "channels_first"))
    np.testing.assert_allclose(got[0], np_conv(x1, k1, (2,), padding), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], np_conv(x3, k3, (1, 2, 1), padding), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(got[2], to_cf(np_conv(x3, k3, (1, 1, 2), padding)),
                               rtol=1e-4, atol=1e-5)


def test_conv1d_causal_and_errors(keras_graph):
    x, k = randn(2, 7, 3), randn(3, 3, 4)
    got, = run(B.conv1d(B.constant(x), B.constant(k), 1, "causal", dilation_rate=2))
    padded = np.pad(x, [(0, 0), (4, 0), (0, 0)])
    np.testing.assert_allclose(got, np_conv(padded, k, (1,), "valid", (2,)), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match="Invalid padding: full"):
        B.conv2d(B.constant(randn(1, 3, 3, 1)), B.constant(randn(1, 1, 1, 1)), padding="full")
    with pytest.raises(ValueError, match="Unknown data_format: nchw"):
        B.conv2d(B.constant(randn(1, 3, 3, 1)), B.constant(randn(1, 1, 1, 1)),
                 data_format="nchw")


def np_depthwise(x, k, padding):
    """Each channel c convolved with its k[..., c, m] filters: channel c * M + m."""
    outs = [np_conv(x[..., c:c + 1], k[:, :, c:c + 1, :], (1, 1), padding)
            for c in range(x.shape[-1])]
    return np.concatenate(outs, -1)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_transposed_depthwise_and_separable_convolutions(keras_graph, padding):
    x = randn(2, 4, 5, 3)
    kt, kd, kp = randn(3, 3, 2, 3), randn(3, 2, 3, 2), randn(1, 1, 6, 4)
    out_hw = (8, 10) if padding == "same" else (9, 11)
    got = run(B.conv2d_transpose(B.constant(x), B.constant(kt), (2,) + out_hw + (2,), (2, 2),
                                 padding),
              B.conv2d_transpose(tf.placeholder_with_default(B.constant(to_cf(x)),
                                                             (None, 3, 4, 5)),
                                 B.constant(kt), (None, 2) + out_hw, (2, 2), padding,
                                 "channels_first"),
              B.depthwise_conv2d(B.constant(x), B.constant(kd), padding=padding),
              B.separable_conv2d(B.constant(x), B.constant(kd), B.constant(kp),
                                 padding=padding))
    # the transposed convolution: every input pixel scatters its kernel-weighted copy
    full = [(n - 1) * 2 + 3 for n in (4, 5)]
    y = np.zeros((2,) + tuple(full) + (2,))
    for i, j in np.ndindex(4, 5):
        y[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += np.tensordot(x[:, i, j], kt, ([1], [3]))
    starts = [(f - o) // 2 for f, o in zip(full, out_hw)]
    want = y[:, starts[0]:starts[0] + out_hw[0], starts[1]:starts[1] + out_hw[1]]
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], to_cf(want), rtol=1e-4, atol=1e-5)
    depthwise = np_depthwise(x, kd, padding)
    np.testing.assert_allclose(got[2], depthwise, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[3], np.tensordot(depthwise, kp[0, 0], ([3], [0])),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_pool2d_and_pool3d(keras_graph, padding):
    x, x3 = randn(2, 5, 7, 3), randn(2, 4, 5, 3, 2)
    got = run(B.pool2d(B.constant(x), (2, 3), (2, 2), padding),
              B.pool2d(B.constant(to_cf(x)), (2, 3), (2, 2), padding, "channels_first",
                       "avg"),
              B.pool3d(B.constant(x3), (2, 2, 2), (1, 2, 2), padding, pool_mode="avg"),
              B.pool3d(B.constant(to_cf(x3)), (2, 2, 1), (2, 1, 1), padding,
                       "channels_first"))
    np.testing.assert_allclose(got[0], np_pool(x, (2, 3), (2, 2), padding, "max"), rtol=1e-6)
    np.testing.assert_allclose(got[1], to_cf(np_pool(x, (2, 3), (2, 2), padding, "avg")),
                               rtol=1e-5)
    np.testing.assert_allclose(got[2], np_pool(x3, (2, 2, 2), (1, 2, 2), padding, "avg"),
                               rtol=1e-5)
    np.testing.assert_allclose(got[3], to_cf(np_pool(x3, (2, 2, 1), (2, 1, 1), padding,
                                                     "max")), rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid pooling mode: min"):
        B.pool2d(B.constant(x), (2, 2), pool_mode="min")
    with pytest.raises(ValueError, match="`pool_size` must be a tuple of 2 integers."):
        B.pool2d(B.constant(x), (2, 2, 2))


def test_local_convolutions(keras_graph):
    x1, k1 = randn(2, 7, 3), randn(3, 2 * 3, 4)
    x2, k2 = randn(2, 5, 6, 3), randn(4, 2 * 2 * 3, 5)
    got = run(B.local_conv1d(B.constant(x1), B.constant(k1), (2,), (2,)),
              B.local_conv2d(B.constant(x2), B.constant(k2), (2, 2), (2, 3), (2, 2)),
              B.local_conv2d(B.constant(to_cf(x2)), B.constant(k2), (2, 2), (2, 3), (2, 2),
                             "channels_first"))
    want1 = np.stack([x1[:, 2 * i:2 * i + 2].reshape(2, -1) @ k1[i] for i in range(3)], 1)
    want2 = np.zeros((2, 2, 2, 5))
    for n, (i, j) in enumerate(itertools.product(range(2), range(2))):
        want2[:, i, j] = x2[:, 2 * i:2 * i + 2, 3 * j:3 * j + 2].reshape(2, -1) @ k2[n]
    np.testing.assert_allclose(got[0], want1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want2, rtol=1e-5, atol=1e-5)
    # channels_first patches flatten channel-major, so the kernel rows pair differently
    want_cf = np.zeros((2, 2, 2, 5))
    for n, (i, j) in enumerate(itertools.product(range(2), range(2))):
        patch = to_cf(x2)[:, :, 2 * i:2 * i + 2, 3 * j:3 * j + 2].reshape(2, -1)
        want_cf[:, i, j] = patch @ k2[n]
    np.testing.assert_allclose(got[2], to_cf(want_cf), rtol=1e-5, atol=1e-5)


# --- padding and resizing ------------------------------------------------------------------
def np_resize_bilinear(x, out_h, out_w):
    """TF 2's bilinear resize (half-pixel centers) of channels_last `x`."""
    def coords(n_in, n_out):
        src = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
        lo = np.clip(np.floor(src), 0, n_in - 1).astype(int)
        hi = np.minimum(lo + 1, n_in - 1)
        return lo, hi, np.clip(src - np.floor(src), 0, 1) * (src >= 0)
    (r0, r1, fr), (c0, c1, fc) = coords(x.shape[1], out_h), coords(x.shape[2], out_w)
    top = x[:, r0][:, :, c0] * (1 - fc[:, None]) + x[:, r0][:, :, c1] * fc[:, None]
    bottom = x[:, r1][:, :, c0] * (1 - fc[:, None]) + x[:, r1][:, :, c1] * fc[:, None]
    return top * (1 - fr[:, None, None]) + bottom * fr[:, None, None]


def test_padding_and_resizing(keras_graph):
    x3, x4, x5 = randn(2, 3, 2), randn(2, 3, 4, 2), randn(1, 2, 3, 2, 2)
    ph = tf.placeholder(tf.float32, (None, None, None, 2))
    got = run(B.temporal_padding(B.constant(x3), (1, 2)),
              B.spatial_2d_padding(B.constant(x4), ((1, 0), (2, 1)), "channels_first"),
              B.spatial_3d_padding(B.constant(x5), ((1, 0), (2, 1), (0, 1))),
              B.resize_images(B.constant(x4), 2, 3, "channels_last"),
              B.resize_images(ph, 2, 3, "channels_last", "bilinear"),
              B.resize_images(B.constant(to_cf(x4)), 2, 2, "channels_first", "bilinear"),
              B.resize_volumes(B.constant(x5), 2, 1, 3, "channels_last"),
              feed_dict={ph: x4})
    np.testing.assert_array_equal(got[0], np.pad(x3, [(0, 0), (1, 2), (0, 0)]))
    np.testing.assert_array_equal(got[1], np.pad(x4, [(0, 0), (0, 0), (1, 0), (2, 1)]))
    np.testing.assert_array_equal(got[2], np.pad(x5, [(0, 0), (1, 0), (2, 1), (0, 1), (0, 0)]))
    np.testing.assert_array_equal(got[3], x4.repeat(2, 1).repeat(3, 2))
    np.testing.assert_allclose(got[4], np_resize_bilinear(x4, 6, 12), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[5], to_cf(np_resize_bilinear(x4, 6, 8)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[6], x5.repeat(2, 1).repeat(3, 3))
    with pytest.raises(ValueError, match="`interpolation` argument should be one of"):
        B.resize_images(B.constant(x4), 2, 2, "channels_last", "linear")
    with pytest.raises(ValueError, match="Invalid `data_format` argument: nhwc"):
        B.resize_images(B.constant(x4), 2, 2, "nhwc")


# --- batch_dot and array helpers -----------------------------------------------------------
@pytest.mark.parametrize("x_shape,y_shape,axes,subscripts", [
    ((3, 4), (3, 4), None, "bi,bi->b"),
    ((3, 4, 5), (3, 5), None, "bij,bj->bi"),
    ((3, 4, 5), (3, 5, 6), None, "bij,bjk->bik"),
    ((3, 4, 5), (3, 6, 4), (1, 2), "bij,bki->bjk"),
    ((3, 4), (3, 4, 2), 1, "bi,bij->bj"),
    ((3, 2, 4, 5), (3, 5, 2), (3, 1), "bijk,bkl->bijl"),
    ((3, 2, 3, 4), (3, 4, 2, 5), (-1, 1), "bijk,bkmn->bijmn"),
])
def test_batch_dot(keras_graph, x_shape, y_shape, axes, subscripts):
    x, y = randn(*x_shape), randn(*y_shape)
    got, = run(B.batch_dot(B.constant(x), B.constant(y), axes))
    want = np.einsum(subscripts, x, y)
    if want.ndim == 1:  # Keras keeps a trailing axis for two 2-D operands
        want = want[:, None]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_batch_dot_errors(keras_graph):
    with pytest.raises(ValueError, match="Cannot do batch_dot on inputs with rank < 2"):
        B.batch_dot(B.constant(randn(3)), B.constant(randn(3, 2)))
    with pytest.raises(ValueError, match="with different batch sizes"):
        B.batch_dot(B.constant(randn(3, 2)), B.constant(randn(4, 2)))
    with pytest.raises(ValueError, match="Cannot perform batch_dot over axis 0"):
        B.batch_dot(B.constant(randn(3, 2)), B.constant(randn(3, 2)), (0, 1))
    with pytest.raises(ValueError, match=r"x.shape\[1\] != y.shape\[1\] \(2 != 5\)"):
        B.batch_dot(B.constant(randn(3, 2)), B.constant(randn(3, 5)))


def test_math_and_array_helpers(keras_graph):
    x = randn(2, 3, 4)
    ph = tf.placeholder(tf.float32, (None, None, 4))
    xc = B.constant(x)
    got = run(B.gather(xc, [1, 0, 1]), B.cumsum(xc, 1), B.cumprod(xc, 2), B.var(xc, 1, True),
              B.std(xc), B.any(xc > 1, 1), B.all(xc > -3), B.round(B.constant([0.5, 1.5, -2.5])),
              B.sign(xc), B.sin(xc), B.cos(xc), B.greater_equal(xc, 0.0), B.less_equal(xc, 0.0),
              B.tile(xc, (1, 2, 1)), B.tile(B.constant([1, 2]), 2),
              B.repeat_elements(xc, 2, 1), B.repeat_elements(ph, 3, 1),
              B.repeat(B.constant(x[0]), 2), B.arange(2, 9, 3, "float32"), B.arange(-3),
              B.reverse(xc, (0, 2)), B.reverse(xc, 1),
              B.in_top_k(B.constant(x[0]), B.constant([0, 1, 3], "int32"), 2),
              B.var(B.constant([True, False, False, False])),
              feed_dict={ph: x})
    wants = [x[[1, 0, 1]], x.cumsum(1), x.cumprod(2), x.var(1, keepdims=True), x.std(),
             (x > 1).any(1), (x > -3).all(), [0.0, 2.0, -2.0], np.sign(x), np.sin(x), np.cos(x),
             x >= 0, x <= 0, np.tile(x, (1, 2, 1)), [1, 2, 1, 2], x.repeat(2, 1), x.repeat(3, 1),
             np.repeat(x[0][:, None], 2, 1), [2.0, 5.0, 8.0], np.zeros(0), x[::-1, :, ::-1],
             x[:, ::-1], [x[0, i, t] >= np.sort(x[0, i])[-2] for i, t in enumerate([0, 1, 3])],
             0.1875]
    for g, w in zip(got, wants):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[18].dtype == np.float32 and got[19].dtype == np.int32
    assert B.repeat_elements(ph, 3, 1).shape.as_list() == [None, None, 4]
    with pytest.raises(ValueError, match="repeat expects a 2D tensor"):
        B.repeat(xc, 2)


# --- variables, updates and evaluation -----------------------------------------------------
def test_variables_from_shapes_updates_and_eval(keras_graph):
    zeros, ones, eye = B.zeros((2, 3)), B.ones((3,), "int32", name="o"), B.eye(3)
    assert isinstance(zeros, tf.Variable) and ones.dtype.base_dtype == tf.int32
    assert not isinstance(B.zeros((0, 2)), tf.Variable)  # an empty shape gives a tensor
    np.testing.assert_array_equal(B.eval(zeros), np.zeros((2, 3)))
    np.testing.assert_array_equal(B.eval(ones), np.ones(3))
    np.testing.assert_array_equal(B.eval(eye), np.eye(3))
    uni = B.random_uniform_variable((50, 40), -2.0, -1.0, seed=3)
    nor = B.random_normal_variable((50, 40), 5.0, 0.5, seed=3)
    u, n = B.batch_get_value([uni, nor])
    assert u.min() >= -2.0 and u.max() < -1.0 and abs(u.mean() + 1.5) < 0.05
    assert abs(n.mean() - 5.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    v = B.variable(np.arange(6).reshape(2, 3))
    run(B.update_add(v, np.ones((2, 3), "float32")))
    np.testing.assert_array_equal(B.eval(v), np.arange(6).reshape(2, 3) + 1)
    run(B.update_sub(v, np.full((2, 3), 3.0, "float32")))
    np.testing.assert_array_equal(B.eval(v), np.arange(6).reshape(2, 3) - 2)
    run(B.update(v, np.full((2, 3), 7.0, "float32")))
    np.testing.assert_array_equal(B.eval(v), np.full((2, 3), 7.0))
    average = B.variable(np.zeros(2))
    update = B.moving_average_update(average, B.constant([1.0, 3.0]), 0.9)
    B.get_session().run(tf.variables_initializer(tf.global_variables()))
    run(update)
    np.testing.assert_allclose(B.eval(average), [1.0, 3.0], rtol=1e-5)  # zero-debiased
    run(update)
    np.testing.assert_allclose(B.eval(average), [1.0, 3.0], rtol=1e-5)
    sparse = tf.SparseTensor([[0, 1]], [2.0], [2, 2])
    assert B.is_sparse(sparse) and not B.is_sparse(zeros)
    np.testing.assert_array_equal(B.eval(sparse), [[0.0, 2.0], [0.0, 0.0]])


def test_random_tensors(keras_graph):
    shape = (200, 50)
    normal, uniform, truncated, bernoulli = run(
        B.random_normal(shape, 1.0, 2.0, seed=1), B.random_uniform(shape, 2.0, 4.0, seed=1),
        B.truncated_normal(shape, 0.0, 1.0, seed=1), B.random_bernoulli(shape, 0.3, seed=1))
    assert normal.dtype == np.float32 and abs(normal.mean() - 1.0) < 0.1
    assert abs(normal.std() - 2.0) < 0.1
    assert uniform.min() >= 2.0 and uniform.max() < 4.0 and abs(uniform.mean() - 3.0) < 0.05
    assert np.abs(truncated).max() <= 2.0 and abs(truncated.std() - 0.88) < 0.05
    assert set(np.unique(bernoulli)) == {0.0, 1.0} and abs(bernoulli.mean() - 0.3) < 0.03
    with pytest.warns(UserWarning, match="random_binomial` is deprecated"):
        binomial = B.random_binomial((4,), 1.0, dtype="float64")
    np.testing.assert_array_equal(run(binomial)[0], np.ones(4))
    a, b = run(B.random_normal((3,), seed=5), B.random_normal((3,), seed=5))
    np.testing.assert_array_equal(a, b)


# --- batch normalization and focal crossentropies ------------------------------------------
def test_batch_normalization(keras_graph):
    x, gamma, beta = randn(4, 3, 5, 2), randn(2), randn(2)
    x3, beta3 = randn(4, 3, 5), randn(3, 1)
    normed, mean, variance = B.normalize_batch_in_training(
        B.constant(x), B.constant(gamma), B.constant(beta), [0, 1, 2])
    normed3, mean3, var3 = B.normalize_batch_in_training(B.constant(x3), None,
                                                         B.constant(beta3), [0, 2])
    m, var = randn(2), np.abs(randn(2))
    inference = B.batch_normalization(B.constant(x), B.constant(m), B.constant(var),
                                      B.constant(beta), None, epsilon=0.01)
    inference3 = B.batch_normalization(B.constant(x3), B.constant(m[0]), B.constant(var[0]),
                                       None, B.constant(gamma[0]))
    got = run(normed, mean, variance, normed3, mean3, var3, inference, inference3)
    mu, sd = x.mean((0, 1, 2)), x.var((0, 1, 2))
    mu3, sd3 = x3.mean((0, 2), keepdims=True), x3.var((0, 2), keepdims=True)
    wants = [(x - mu) / np.sqrt(sd + 1e-3) * gamma + beta, mu, sd,
             (x3 - mu3) / np.sqrt(sd3 + 1e-3) + beta3, mu3.ravel(), sd3.ravel(),
             (x - m) / np.sqrt(var + 0.01) + beta,
             (x3 - m[0]) / np.sqrt(var[0] + 1e-3) * gamma[0]]
    for g, w in zip(got, wants):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_focal_crossentropies(keras_graph):
    logits = randn(4, 5)
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    t = np.eye(5, dtype="float32")[[0, 2, 4, 1]]
    got = run(B.categorical_focal_crossentropy(B.constant(t), B.constant(p)),
              B.categorical_focal_crossentropy(B.constant(t), B.constant(logits), 0.5, 1.0,
                                               from_logits=True),
              B.binary_focal_crossentropy(B.constant(t), B.constant(p), True, 0.3, 2.0),
              B.binary_focal_crossentropy(B.constant(t), B.constant(logits), gamma=1.5,
                                          from_logits=True))
    np.testing.assert_allclose(got[0], (0.25 * (1 - p) ** 2 * -t * np.log(p)).sum(-1),
                               rtol=1e-5)
    np.testing.assert_allclose(got[1], (0.5 * (1 - p) * -t * np.log(p)).sum(-1), rtol=1e-5)
    pc = np.clip(p, 1e-7, 1 - 1e-7)
    bce = -(t * np.log(pc + 1e-7) + (1 - t) * np.log(1 - pc + 1e-7))
    p_t = t * p + (1 - t) * (1 - p)
    np.testing.assert_allclose(got[2], (t * 0.3 + (1 - t) * 0.7) * (1 - p_t) ** 2 * bce,
                               rtol=1e-4)
    sig = 1 / (1 + np.exp(-logits))
    bce = np.maximum(logits, 0) - logits * t + np.log1p(np.exp(-np.abs(logits)))
    p_t = t * sig + (1 - t) * (1 - sig)
    np.testing.assert_allclose(got[3], (1 - p_t) ** 1.5 * bce, rtol=1e-4)


# --- CTC -----------------------------------------------------------------------------------
def ctc_collapse(path, blank):
    out = []
    for i, c in enumerate(path):
        if c != blank and (i == 0 or c != path[i - 1]):
            out.append(c)
    return tuple(out)


def ctc_labelling_probs(probs):
    """{labelling: probability} by summing every path of (time, classes) `probs`."""
    steps, classes = probs.shape
    totals = {}
    for path in itertools.product(range(classes), repeat=steps):
        label = ctc_collapse(path, classes - 1)
        totals[label] = totals.get(label, 0.0) + np.prod(probs[np.arange(steps), path])
    return totals


def test_ctc_batch_cost_decode_and_sparse_labels(keras_graph):
    y_pred = np.abs(randn(2, 4, 3)) + 0.1
    y_pred /= y_pred.sum(-1, keepdims=True)
    labels = np.array([[1, 0, 0], [0, 1, 1]])  # lengths 2 and 3 (class 2 is the blank)
    cost = B.ctc_batch_cost(B.constant(labels, "int32"), B.constant(y_pred),
                            B.constant([[4], [4]], "int32"), B.constant([[2], [3]], "int32"))
    greedy, greedy_lp = B.ctc_decode(B.constant(y_pred), B.constant([4, 3], "int32"))
    beam, beam_lp = B.ctc_decode(B.constant(y_pred), B.constant([4, 4], "int32"),
                                 greedy=False, beam_width=30, top_paths=2)
    sparse = B.ctc_label_dense_to_sparse(B.constant(labels, "int32"),
                                         B.constant([2, 3], "int32"))
    got = run(cost, greedy[0], greedy_lp, beam[0], beam[1], beam_lp, sparse.indices,
              sparse.values, sparse.dense_shape)
    log_p = np.log(y_pred + 1e-7)
    totals = [ctc_labelling_probs(np.exp(log_p[b])) for b in range(2)]
    want_cost = [-np.log(totals[0][(1, 0)]), -np.log(totals[1][(0, 1, 1)])]
    np.testing.assert_allclose(got[0], np.array(want_cost)[:, None], rtol=1e-4)
    assert got[0].shape == (2, 1)
    best = [np.argmax(y_pred[0], -1), np.argmax(y_pred[1, :3], -1)]
    want_greedy = np.full((2, 4), -1)
    for b, path in enumerate(best):
        label = ctc_collapse(list(path), 2)
        want_greedy[b, :len(label)] = label
    np.testing.assert_array_equal(got[1], want_greedy)
    want_lp = [[-log_p[0].max(-1).sum()], [-log_p[1, :3].max(-1).sum()]]
    np.testing.assert_allclose(got[2], want_lp, rtol=1e-5)
    for b in range(2):  # a beam wide enough is exact: the two most probable labellings
        ranked = sorted(totals[b].items(), key=lambda item: -item[1])[:2]
        for rank, (label, prob) in enumerate(ranked):
            decoded = got[3 + rank][b]
            assert tuple(decoded[decoded >= 0]) == label
            np.testing.assert_allclose(got[5][b, rank], math.log(prob), rtol=1e-4)
    np.testing.assert_array_equal(got[6], [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]])
    np.testing.assert_array_equal(got[7], [1, 0, 0, 1, 1])
    np.testing.assert_array_equal(got[8], [2, 3])


# --- functional loops and printing ---------------------------------------------------------
def test_map_fn_folds_and_print_tensor(keras_graph, capfd):
    x = randn(4, 2)
    got = run(B.map_fn(lambda v: v * 2.0, B.constant(x)),
              B.foldl(lambda a, v: a * 2.0 + v, B.constant(x)),
              B.foldr(lambda a, v: a * 2.0 + v, B.constant(x), B.constant([1.0, 1.0])))
    np.testing.assert_allclose(got[0], x * 2, rtol=1e-6)
    left = x[0]
    for row in x[1:]:
        left = left * 2 + row
    right = np.ones(2)
    for row in x[::-1]:
        right = right * 2 + row
    np.testing.assert_allclose(got[1], left, rtol=1e-5)
    np.testing.assert_allclose(got[2], right, rtol=1e-5)
    printed = B.print_tensor(B.constant([1.0, 2.0, 3.0, 4.0, 5.0]), message="value:",
                             summarize=2)
    capfd.readouterr()
    np.testing.assert_array_equal(run(printed)[0], [1, 2, 3, 4, 5])
    assert capfd.readouterr().out == "value: [1 2 ... 4 5]\n"


def test_sparse_placeholder_is_fed_a_sparse_value():
    with tf.Graph().as_default(), tf.Session() as sess:
        p = B.placeholder(shape=(2, 3), sparse=True)
        dense = tf.sparse.to_dense(p)
        got = sess.run(dense, {p: tf.SparseTensorValue([[0, 1], [1, 2]], [2.0, 5.0], [2, 3])})
    np.testing.assert_array_equal(got, [[0, 2, 0], [0, 0, 5]])
