"""tf.keras ConvLSTM1D/2D/3D (convolutional_recurrent.py), Attention, AdditiveAttention,
MultiHeadAttention (attention.py) and EinsumDense (einsum_dense.py) against NumPy
re-implementations written here (convolutions as sums over kernel offsets, the LSTM
recurrence with masks, softmax attention per head), against TF 2.15's values and
gradients (tests/fixtures/tf1/keras_conv_attention.npz, written by
make_keras_conv_attention_fixture.py), and their gradients numerically. Names, weight
order, configs and errors follow TF 2.15's `tf.compat.v1.keras`."""
import itertools
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

K = tf.keras
L = tf.keras.layers
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1",
                       "keras_conv_attention.npz")


@pytest.fixture(autouse=True)
def _keras(keras_graph):
    yield keras_graph


# --- NumPy references ----------------------------------------------------------------------
def hard_sigmoid(x):
    return np.clip(0.2 * x + 0.5, 0.0, 1.0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_conv(x, kernel, strides, padding, dilation):
    """An N-d convolution of channels-last `x` [batch, *spatial, in] with `kernel`
    [*k, in, out]: TF's 'valid' / 'same' (extra padding after) as a sum over offsets."""
    rank = x.ndim - 2
    sizes, out_sizes, pads = x.shape[1:-1], [], []
    for n, k, s, d in zip(sizes, kernel.shape[:rank], strides, dilation):
        span = (k - 1) * d + 1
        out = -(-n // s) if padding == "same" else (n - span) // s + 1
        total = max((out - 1) * s + span - n, 0) if padding == "same" else 0
        out_sizes.append(out)
        pads.append((total // 2, total - total // 2))
    x = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    result = 0.0
    for offset in itertools.product(*[range(k) for k in kernel.shape[:rank]]):
        window = tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                       for o, d, s, n in zip(offset, dilation, strides, out_sizes))
        result = result + np.einsum("...c,cf->...f", x[(slice(None),) + window],
                                    kernel[offset])
    return result


def to_last(x):
    return np.moveaxis(x, 1, -1)


def to_first(x):
    return np.moveaxis(x, -1, 1)


def conv_lstm_step(kernel, recurrent, bias, strides=None, padding="valid", dilation=None,
                   act=np.tanh, ract=hard_sigmoid):
    """A channels-last ConvLSTM step (states [h, c]); masks (per gate) optional."""
    rank = kernel.ndim - 2
    strides = strides or (1,) * rank
    dilation = dilation or (1,) * rank

    def step(x, states, dp=None, rec_dp=None):
        h, c = states
        xs = np.split(kernel, 4, axis=-1)
        rs = np.split(recurrent, 4, axis=-1)
        bs = np.split(bias, 4) if bias is not None else [0.0] * 4
        z = [np_conv(x if dp is None else x * dp[g], xs[g], strides, padding, dilation) +
             bs[g] + np_conv(h if rec_dp is None else h * rec_dp[g], rs[g], (1,) * rank,
                             "same", (1,) * rank) for g in range(4)]
        c = ract(z[1]) * c + ract(z[0]) * act(z[2])
        h = ract(z[3]) * act(c)
        return h, [h, c]
    return step


def np_rnn(step, x, states, mask=None, go_backwards=False):
    """(outputs in processing order [batch, time, ...], final states): masked steps keep
    the states and repeat the previous output (zeros at first)."""
    order = range(x.shape[1])[::-1] if go_backwards else range(x.shape[1])
    outputs, previous = [], None
    for t in order:
        out, new_states = step(x[:, t], states)
        if mask is not None:
            keep = mask[:, t].reshape((-1,) + (1,) * (out.ndim - 1))
            out = np.where(keep, out, 0 * out if previous is None else previous)
            new_states = [np.where(keep, n, s) for n, s in zip(new_states, states)]
        states, previous = new_states, out
        outputs.append(out)
    return np.stack(outputs, axis=1), states


def np_dense_attention(scores, value, query_mask=None, value_mask=None, causal=False):
    """(outputs, weights) of Attention/AdditiveAttention from their scores."""
    if value_mask is not None:
        scores = scores - 1e9 * (~value_mask[:, None, :])
    if causal:
        tq, tv = scores.shape[-2:]
        scores = scores - 1e9 * (np.arange(tq)[:, None] < np.arange(tv)[None, :])
    weights = softmax(scores)
    out = weights @ value
    if query_mask is not None:
        out = out * query_mask[:, :, None]
    return out, weights


def np_mha(weights, query, value, key, num_heads, use_bias=True, mask=None):
    """(output, scores) of MultiHeadAttention on [batch, T, dim] inputs; `weights` in
    TF's order; output_shape the attention_output kernel's trailing axes."""
    if use_bias:
        (wq, bq, wk, bk, wv, bv, wo, bo) = weights
    else:
        (wq, wk, wv, wo), bq = weights, 0.0
        bk = bv = bo = 0.0
    q = np.einsum("btd,dhk->bthk", query, wq) + bq
    k = np.einsum("bsd,dhk->bshk", key, wk) + bk
    v = np.einsum("bsd,dhk->bshk", value, wv) + bv
    scores = np.einsum("bshk,bthk->bhts", k, q / np.sqrt(wq.shape[-1]))
    if mask is not None:
        scores = scores - 1e9 * (~mask[:, None])
    scores = softmax(scores)
    heads = np.einsum("bhts,bshk->bthk", scores, v)
    return np.einsum("bthk,hk...->bt...", heads, wo) + bo, scores


# --- helpers -------------------------------------------------------------------------------
def set_random_weights(layer, seed=1, scale=0.5):
    rng = np.random.RandomState(seed)
    values = [rng.uniform(-scale, scale, size=w.shape) for w in layer.get_weights()]
    layer.set_weights(values)
    return values


def random(shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape)


def run(outputs, feed):
    return K.backend.get_session().run(outputs, feed)


def placeholder(value, dtype=tf.float64):
    return tf.placeholder(dtype, value.shape)


MASK = np.array([[True, True, False, True], [True, False, True, False]])


# --- ConvLSTM ------------------------------------------------------------------------------
def test_conv_lstm_names_weights_and_config_are_tfs():
    L.ConvLSTM1D(2, 3)(K.Input((4, 6, 3)))
    L.ConvLSTM2D(4, (3, 2), use_bias=False)(K.Input((4, 6, 5, 3)))
    layer = L.ConvLSTM3D(2, 2, data_format="channels_first")
    layer(K.Input((3, 1, 4, 4, 4)))
    got = [(v.name, tuple(v.shape.as_list())) for v in tf.global_variables()]
    assert got == [("conv_lstm1d/kernel:0", (3, 3, 8)),
                   ("conv_lstm1d/recurrent_kernel:0", (3, 2, 8)),
                   ("conv_lstm1d/bias:0", (8,)),
                   ("conv_lstm2d/kernel:0", (3, 2, 3, 16)),
                   ("conv_lstm2d/recurrent_kernel:0", (3, 2, 4, 16)),
                   ("conv_lstm3d/kernel:0", (2, 2, 2, 1, 8)),
                   ("conv_lstm3d/recurrent_kernel:0", (2, 2, 2, 2, 8)),
                   ("conv_lstm3d/bias:0", (8,))]
    np.testing.assert_array_equal(K.backend.get_value(layer.cell.bias), [0, 0, 1, 1, 0, 0, 0, 0])
    config = layer.get_config()
    assert list(config)[:10] == ["name", "trainable", "dtype", "return_sequences",
                                 "return_state", "go_backwards", "stateful", "unroll",
                                 "time_major", "filters"]
    assert config["kernel_size"] == (2, 2, 2) and config["strides"] == (1, 1, 1)
    assert config["recurrent_activation"] == "hard_sigmoid" and "cell" not in config
    assert list(config).index("activity_regularizer") == \
        list(config).index("bias_regularizer") + 1
    assert layer.filters == 2 and layer.data_format == "channels_first"
    assert layer.cell.name == "conv_lstm_cell" and layer.cell.state_size == (2, 2)


@pytest.mark.parametrize("rank,kwargs,masked", [
    (2, dict(), False),
    (2, dict(padding="same", return_sequences=True, go_backwards=True), True),
    (2, dict(strides=(2, 1), padding="same", return_state=True), True),
    (2, dict(kernel_size=2, dilation_rate=2, data_format="channels_first",
             return_sequences=True, return_state=True), False),
    (1, dict(strides=2, recurrent_activation="sigmoid", use_bias=False), True),
    (1, dict(data_format="channels_first", padding="same", return_sequences=True), False),
    (3, dict(kernel_size=(2, 1, 2), return_state=True, go_backwards=True), True),
])
def test_conv_lstm_against_numpy(rank, kwargs, masked):
    kwargs = dict(kwargs)
    kernel_size = kwargs.pop("kernel_size", 3)
    first = kwargs.get("data_format") == "channels_first"
    spatial = {1: (7,), 2: (6, 5), 3: (3, 3, 4)}[rank]
    shape = (2, 4) + ((2,) + spatial if first else spatial + (2,))
    x_value = random(shape, rank)
    layer = getattr(L, "ConvLSTM%dD" % rank)(3, kernel_size, dtype="float64", **kwargs)
    x = placeholder(x_value)
    call = {"mask": tf.constant(MASK)} if masked else {}
    outputs = layer(x, **call)
    weights = set_random_weights(layer)
    got = run(outputs, {x: x_value})
    got = got if isinstance(got, list) else [got]
    cell = layer.cell
    step = conv_lstm_step(weights[0], weights[1], weights[2] if len(weights) > 2 else None,
                          cell.strides, cell.padding, cell.dilation_rate,
                          ract=sigmoid if "recurrent_activation" in kwargs else hard_sigmoid)
    x_last = np.moveaxis(x_value, 2, -1) if first else x_value
    zeros = 0 * np_conv(x_last[:, 0], weights[0][..., :3], cell.strides, cell.padding,
                        cell.dilation_rate)
    seq, states = np_rnn(step, x_last, [zeros, zeros], MASK if masked else None,
                         kwargs.get("go_backwards", False))
    expected = [seq if kwargs.get("return_sequences") else seq[:, -1]]
    if kwargs.get("return_state"):
        expected += states
    if first:
        expected = [np.moveaxis(e, -1, 2 if e.ndim == rank + 3 else 1) for e in expected]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, atol=1e-12)
    assert [o.shape.as_list()[1:] for o in (outputs if isinstance(outputs, list) else
                                            [outputs])] == [list(e.shape[1:]) for e in expected]


def test_conv_lstm_initial_state_and_output_masks():
    x = K.Input((4, 5, 5, 2), dtype="float64")
    h0 = K.Input((3, 3, 2), dtype="float64")
    c0 = K.Input((3, 3, 2), dtype="float64")
    mask = K.Input((4,), dtype="bool")
    layer = L.ConvLSTM2D(2, 3, return_sequences=True, return_state=True, dtype="float64")
    outs = layer(x, initial_state=[h0, c0], mask=mask)
    assert layer.input == [x, h0, c0]
    assert outs[0]._keras_mask is not None
    assert [getattr(o, "_keras_mask", None) for o in outs[1:]] == [None, None]
    model = K.Model([x, h0, c0, mask], outs)
    weights = set_random_weights(model)
    values = [random((2, 4, 5, 5, 2), 1), random((2, 3, 3, 2), 2), random((2, 3, 3, 2), 3),
              MASK]
    got = model.predict(values)
    seq, states = np_rnn(conv_lstm_step(*weights), values[0], values[1:3], MASK)
    for g, e in zip(got, [seq] + states):
        np.testing.assert_allclose(g, e, atol=1e-12)
    with pytest.raises(ValueError, match="not compatible with `cell.state_size`"):
        L.ConvLSTM2D(2, 3)(x, initial_state=[K.Input((3, 3, 4))] * 2)


def test_conv_lstm_stateful_carries_states_between_batches():
    x_value = random((2, 3, 4, 4, 1), 4)
    x = K.Input(batch_shape=(2, 3, 4, 4, 1), dtype="float64")
    layer = L.ConvLSTM2D(2, 3, padding="same", stateful=True, dtype="float64")
    model = K.Model(x, layer(x))
    weights = set_random_weights(model)
    assert [s.shape.as_list() for s in layer.states] == [[2, 4, 4, 2]] * 2
    first, second = model.predict(x_value), model.predict(x_value)
    zeros = np.zeros((2, 4, 4, 2))
    seq, states = np_rnn(conv_lstm_step(*weights, padding="same"), x_value, [zeros, zeros])
    np.testing.assert_allclose(first, seq[:, -1], atol=1e-12)
    np.testing.assert_allclose(second, np_rnn(conv_lstm_step(*weights, padding="same"),
                                              x_value, states)[0][:, -1], atol=1e-12)
    model.reset_states()
    np.testing.assert_allclose(model.predict(x_value), first, atol=1e-12)
    with pytest.raises(ValueError, match="needs to know its batch size"):
        L.ConvLSTM2D(2, 3, stateful=True)(K.Input((3, 4, 4, 1)))


def test_conv_lstm_dropout_masks_are_one_per_gate_and_sequence():
    x_value = random((2, 4, 4, 4, 2), 5)
    x = placeholder(x_value)
    layer = L.ConvLSTM2D(2, 3, padding="same", dropout=0.5, recurrent_dropout=0.4,
                         return_sequences=True, dtype="float64")
    train = layer(x, training=True)
    dp = layer.cell.__dict__["_dropout_mask_cache"][1]
    rec_dp = layer.cell.__dict__["_recurrent_dropout_mask_cache"][1]
    infer = layer(x, training=False)
    weights = set_random_weights(layer)
    got_train, got_infer, dp, rec_dp = run([train, infer, dp, rec_dp], {x: x_value})
    assert len(dp) == len(rec_dp) == 4 and dp[0].shape == (2, 4, 4, 2)
    assert set(np.unique(dp)) == {0.0, 2.0} and set(np.unique(rec_dp)) == {0.0, 1 / 0.6}
    step = conv_lstm_step(*weights, padding="same")
    zeros = np.zeros((2, 4, 4, 2))
    expected = np_rnn(lambda x_t, s: step(x_t, s, dp, rec_dp), x_value, [zeros, zeros])[0]
    np.testing.assert_allclose(got_train, expected, atol=1e-12)
    np.testing.assert_allclose(got_infer, np_rnn(step, x_value, [zeros, zeros])[0], atol=1e-12)


def test_conv_lstm_errors():
    with pytest.raises(TypeError, match="Unrolling is not possible"):
        L.ConvLSTM2D(2, 3, unroll=True)
    with pytest.raises(ValueError, match="`kernel_size` argument must be a tuple of 2"):
        L.ConvLSTM2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="does not satisfy the requirement `> 0`"):
        L.ConvLSTM2D(2, 0)
    with pytest.raises(ValueError, match="data_format"):
        L.ConvLSTM2D(2, 3, data_format="NHWC")
    with pytest.raises(ValueError, match="ndim=5"):
        L.ConvLSTM2D(2, 3)(K.Input((4, 5, 2)))
    with pytest.raises(ValueError, match="padding='causal'"):
        L.ConvLSTM1D(2, 3, padding="causal")(K.Input((4, 6, 2)))
    with pytest.raises(ValueError, match="Invalid padding: causal"):
        L.ConvLSTM2D(2, 3, padding="causal")(K.Input((4, 6, 6, 2)))


def test_conv_lstm_config_round_trip_and_deserialization():
    x = K.Input((3, 5, 5, 2))
    y = L.ConvLSTM2D(2, (3, 2), strides=(1, 2), padding="same", return_sequences=True,
                     kernel_regularizer="l2", dropout=0.1, name="clstm")(x)
    y = L.ConvLSTM2D(1, 3, go_backwards=True, data_format="channels_last")(y)
    model = K.Model(x, y)
    weights = set_random_weights(model)
    clone = K.models.model_from_json(model.to_json())
    clone.set_weights(weights)
    x_value = random((2, 3, 5, 5, 2), 6)
    np.testing.assert_allclose(clone.predict(x_value), model.predict(x_value), atol=1e-6)
    layer = L.deserialize({"class_name": "ConvLSTM1D",
                           "config": L.ConvLSTM1D(3, 2, strides=2).get_config()})
    assert type(layer) is L.ConvLSTM1D and layer.strides == (2,)
    assert clone.get_layer("clstm").get_config()["kernel_regularizer"] is not None


# --- Attention, AdditiveAttention ----------------------------------------------------------
@pytest.mark.parametrize("kwargs,with_key,masks,causal", [
    (dict(), False, (False, False), False),
    (dict(use_scale=True), True, (True, True), False),
    (dict(score_mode="concat"), False, (False, True), True),
    (dict(score_mode="concat", use_scale=True), True, (True, False), True),
])
def test_attention_against_numpy(kwargs, with_key, masks, causal):
    q_value, v_value, k_value = random((2, 4, 3), 7), random((2, 4, 3), 8), random((2, 4, 3), 9)
    q, v, k = placeholder(q_value), placeholder(v_value), placeholder(k_value)
    layer = L.Attention(dtype="float64", **kwargs)
    mask = [tf.constant(MASK) if masks[0] else None, tf.constant(MASK[::-1])
            if masks[1] else None] if any(masks) else None
    outputs = layer([q, v, k] if with_key else [q, v], mask=mask, use_causal_mask=causal,
                    return_attention_scores=True)
    weights = [1.7, 0.6][:len(layer.weights)]
    layer.set_weights([np.array(w) for w in weights])
    got, got_scores = run(list(outputs), {q: q_value, v: v_value, k: k_value})
    key = k_value if with_key else v_value
    scale = 1.7 if kwargs.get("use_scale") else 1.0
    if kwargs.get("score_mode") == "concat":
        concat_weight = weights[-1]
        scores = concat_weight * np.tanh(scale * (q_value[:, :, None] + key[:, None])).sum(-1)
    else:
        scores = scale * q_value @ key.transpose(0, 2, 1)
    expected, expected_scores = np_dense_attention(
        scores, v_value, MASK if masks[0] else None, MASK[::-1] if masks[1] else None,
        causal)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_allclose(got_scores, expected_scores, atol=1e-12)


def test_additive_attention_against_numpy_and_names():
    q_value, v_value, k_value = random((2, 3, 4), 10), random((2, 4, 4), 11), random((2, 4, 4), 12)
    q, v, k = placeholder(q_value), placeholder(v_value), placeholder(k_value)
    layer = L.AdditiveAttention(dtype="float64")
    out, scores = layer([q, v, k], mask=[None, tf.constant(MASK)], use_causal_mask=True,
                        return_attention_scores=True)
    plain = L.AdditiveAttention(use_scale=False, dtype="float64")([q, v])
    (scale,) = set_random_weights(layer)
    assert [w.name for w in layer.weights] == ["additive_attention/scale:0"]
    assert layer.weights[0].shape.as_list() == [4]
    got, got_scores, got_plain = run([out, scores, plain], {q: q_value, v: v_value,
                                                            k: k_value})
    raw = (scale * np.tanh(q_value[:, :, None] + k_value[:, None])).sum(-1)
    expected, expected_scores = np_dense_attention(raw, v_value, None, MASK, causal=True)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_allclose(got_scores, expected_scores, atol=1e-12)
    raw = np.tanh(q_value[:, :, None] + v_value[:, None]).sum(-1)
    np.testing.assert_allclose(got_plain, np_dense_attention(raw, v_value)[0], atol=1e-12)


def test_attention_masks_from_embeddings_configs_and_errors():
    ids = K.Input((4,), dtype="int32")
    embedded = L.Embedding(5, 3, mask_zero=True)(ids)
    out = L.Attention(causal=True, dropout=0.2)([embedded, embedded])
    assert out._keras_mask is not None  # the query's mask
    config = L.Attention(use_scale=True, score_mode="concat", dropout=0.5).get_config()
    assert {k: config[k] for k in ("dropout", "use_scale", "score_mode")} == \
        {"dropout": 0.5, "use_scale": True, "score_mode": "concat"}
    assert L.deserialize({"class_name": "AdditiveAttention",
                          "config": L.AdditiveAttention(use_scale=False).get_config()}
                         ).use_scale is False
    q = K.Input((3, 4))
    with pytest.raises(ValueError, match="score_mode=bilinear"):
        L.Attention(score_mode="bilinear")
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        L.Attention()(q)
    with pytest.raises(ValueError, match="inputs list of length 2 or 3"):
        L.Attention()([q])
    with pytest.raises(ValueError, match="mask must be a list of length 2"):
        L.Attention()([q, q], mask=[None])


# --- MultiHeadAttention --------------------------------------------------------------------
def test_multi_head_attention_names_order_and_sublayers():
    q, v = K.Input((3, 4)), K.Input((5, 6))
    layer = L.MultiHeadAttention(2, 3, value_dim=4, output_shape=(2, 5))
    out, scores = layer(q, v, return_attention_scores=True)
    assert out.shape.as_list() == [None, 3, 2, 5] and scores.shape.as_list() == [None, 2, 3, 5]
    assert [(w.name, w.shape.as_list()) for w in layer.weights] == [
        ("multi_head_attention/query/kernel:0", [4, 2, 3]),
        ("multi_head_attention/query/bias:0", [2, 3]),
        ("multi_head_attention/key/kernel:0", [6, 2, 3]),
        ("multi_head_attention/key/bias:0", [2, 3]),
        ("multi_head_attention/value/kernel:0", [6, 2, 4]),
        ("multi_head_attention/value/bias:0", [2, 4]),
        ("multi_head_attention/attention_output/kernel:0", [2, 4, 2, 5]),
        ("multi_head_attention/attention_output/bias:0", [2, 5])]
    assert [s.name for s in layer._flatten_layers()] == [
        "multi_head_attention", "query", "key", "value", "softmax", "dropout",
        "attention_output"]
    assert L.Dropout(0.1).name == "dropout_1"  # the sublayer took 'dropout', as in TF
    config = layer.get_config()
    assert config["attention_axes"] == (1,) and config["value_dim"] == 4
    assert config["query_shape"].as_list() == [None, 3, 4]
    rebuilt = L.MultiHeadAttention.from_config(config)
    rebuilt(K.Input((3, 4)), K.Input((5, 6)))
    assert [w.shape.as_list() for w in rebuilt.weights] == \
        [w.shape.as_list() for w in layer.weights]


@pytest.mark.parametrize("kwargs,with_key,attention_mask,causal", [
    (dict(num_heads=2, key_dim=3), False, False, False),
    (dict(num_heads=3, key_dim=2, value_dim=4, output_shape=5), True, True, False),
    (dict(num_heads=2, key_dim=2, use_bias=False, output_shape=(2, 3)), False, False, True),
    (dict(num_heads=1, key_dim=4), True, True, True),
])
def test_multi_head_attention_against_numpy(kwargs, with_key, attention_mask, causal):
    q_value, v_value, k_value = random((2, 4, 3), 13), random((2, 4, 3), 14), random((2, 4, 5), 15)
    am_value = np.random.RandomState(16).uniform(size=(2, 4, 4)) > 0.4
    am_value[..., 0] = True
    q, v, k = placeholder(q_value), placeholder(v_value), placeholder(k_value)
    layer = L.MultiHeadAttention(dtype="float64", **kwargs)
    call = dict(return_attention_scores=True, use_causal_mask=causal)
    if with_key:
        call["key"] = k
    if attention_mask:
        call["attention_mask"] = tf.constant(am_value)
    outputs = layer(q, v, **call)
    weights = set_random_weights(layer)
    got, got_scores = run(list(outputs), {q: q_value, v: v_value, k: k_value})
    mask = am_value if attention_mask else None
    if causal:
        lower = np.tril(np.ones((4, 4), bool))
        mask = lower[None] if mask is None else mask & lower
    expected, expected_scores = np_mha(weights, q_value, v_value,
                                       k_value if with_key else v_value,
                                       kwargs["num_heads"], kwargs.get("use_bias", True), mask)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_allclose(got_scores, expected_scores, atol=1e-12)


def test_multi_head_attention_keras_masks_and_attention_axes():
    q_value, v_value = random((2, 4, 3), 17), random((2, 5, 3), 18)
    q_value[0, 3] = 0.0
    v_value[1, 4] = 0.0  # Masking marks them
    q, v = K.Input((4, 3), dtype="float64"), K.Input((5, 3), dtype="float64")
    masked_q = L.Masking(dtype="float64")(q)
    masked_v = L.Masking(dtype="float64")(v)
    out = L.MultiHeadAttention(2, 2, dtype="float64")(masked_q, masked_v)
    assert out._keras_mask is not None
    model = K.Model([q, v], out)
    weights = set_random_weights(model)
    mask = (q_value != 0).any(-1)[:, :, None] & (v_value != 0).any(-1)[:, None, :]
    np.testing.assert_allclose(model.predict([q_value, v_value]),
                               np_mha(weights, q_value, v_value, v_value, 2, mask=mask)[0],
                               atol=1e-12)
    # attention over axes (1, 2) is attention over their flattened positions
    x_value = random((2, 2, 3, 4), 19)
    x = placeholder(x_value)
    layer = L.MultiHeadAttention(2, 3, attention_axes=(1, 2), dtype="float64")
    out, scores = layer(x, x, return_attention_scores=True)
    assert scores.shape.as_list() == [2, 2, 2, 3, 2, 3]
    weights = set_random_weights(layer)
    got, got_scores = run([out, scores], {x: x_value})
    flat = x_value.reshape(2, 6, 4)
    expected, expected_scores = np_mha(weights, flat, flat, flat, 2)
    np.testing.assert_allclose(got.reshape(2, 6, 4), expected, atol=1e-12)
    np.testing.assert_allclose(got_scores.reshape(2, 2, 6, 6), expected_scores, atol=1e-12)


def test_multi_head_attention_output_shape_and_errors():
    layer = L.MultiHeadAttention(2, 3, output_shape=(2, 7))
    assert layer.compute_output_shape((None, 3, 4), (None, 5, 4)).as_list() == [None, 3, 2, 7]
    with pytest.raises(ValueError, match="last dimension of `query_shape` and `value_shape`"):
        layer.compute_output_shape((None, 3, 4), (None, 5, 6))
    with pytest.raises(ValueError, match="All dimensions of `value` and `key`"):
        layer.compute_output_shape((None, 3, 4), (None, 5, 4), (None, 6, 4))
    unbuilt = L.MultiHeadAttention.from_config(L.MultiHeadAttention(2, 3).get_config())
    assert not unbuilt._built_from_signature and unbuilt.weights == []


# --- EinsumDense ---------------------------------------------------------------------------
@pytest.mark.parametrize("equation,output_shape,bias_axes,in_shape,kernel,bias,out_shape", [
    ("ab,bc->ac", 4, "c", (2, 3), [3, 4], [4], [2, 4]),
    ("abc,cde->abde", (None, 2, 3), "de", (2, 4, 5), [5, 2, 3], [2, 3], [2, 4, 2, 3]),
    ("abc,cde->abde", (None, 2, 3), "d", (2, 4, 5), [5, 2, 3], [2, 1], [2, 4, 2, 3]),
    ("...b,bc->...c", 4, "c", (2, 3, 2, 5), [5, 4], [4], [2, 3, 2, 4]),
    ("ab...,bc->ac...", (4, None, None), "c", (2, 3, 2, 5), [3, 4], [4, 1, 1],
     [2, 4, 2, 5]),
    ("abc,cd->abd", (None, 3), None, (2, 4, 5), [5, 3], None, [2, 4, 3]),
])
def test_einsum_dense_against_numpy(equation, output_shape, bias_axes, in_shape, kernel,
                                    bias, out_shape):
    x_value = random(in_shape, 20)
    x = placeholder(x_value)
    layer = L.EinsumDense(equation, output_shape, bias_axes=bias_axes, activation="tanh",
                          dtype="float64")
    y = layer(x)
    assert [w.shape.as_list() for w in layer.weights] == [kernel] + ([bias] if bias else [])
    assert [w.name for w in layer.weights] == ["einsum_dense/kernel:0"] + \
        (["einsum_dense/bias:0"] if bias else [])
    weights = set_random_weights(layer)
    expected = np.einsum(equation, x_value, weights[0]) + (weights[1] if bias else 0.0)
    got = run(y, {x: x_value})
    assert list(got.shape) == out_shape
    np.testing.assert_allclose(got, np.tanh(expected), atol=1e-12)


def test_einsum_dense_config_export_and_errors():
    layer = L.EinsumDense("abc,cd->abd", (None, 3), bias_axes="d", activity_regularizer="l2")
    layer(K.Input((4, 5)))
    assert layer.losses == [] and layer.get_config()["activity_regularizer"] is None  # as TF
    config = layer.get_config()
    assert config["output_shape"] == [None, 3] and config["equation"] == "abc,cd->abd"
    assert L.experimental.EinsumDense is L.EinsumDense
    assert L.EinsumDense.from_config(config).bias_axes == "d"
    with pytest.raises(ValueError, match="Invalid einsum equation 'ab->b'"):
        L.EinsumDense("ab->b", 4)(K.Input((3,)))
    with pytest.raises(ValueError, match="Bias dimension 'x' was requested"):
        L.EinsumDense("ab,bc->ac", 4, bias_axes="x")(K.Input((3,)))
    with pytest.raises(ValueError, match="do not match at shared dimension 'b'"):
        L.EinsumDense("abc,cd->abd", (5, 4))(K.Input((3, 2)))
    with pytest.raises(ValueError, match="Weight dimension 'd' did not have a match"):
        L.EinsumDense("ab,bcd->ac", 4)(K.Input((3,)))


# --- against TF 2.15 -----------------------------------------------------------------------
def _fixture_case(name, inputs):
    if name == "conv2d":
        return L.ConvLSTM2D(2, 3, padding="same", return_sequences=True, return_state=True,
                            go_backwards=True, dtype="float64")(inputs[0], mask=inputs[1])
    if name == "conv1d":
        return L.ConvLSTM1D(2, 2, strides=2, data_format="channels_first", return_state=True,
                            recurrent_activation="sigmoid", dtype="float64")(
            inputs[0], initial_state=inputs[1:])
    if name == "conv3d":
        return [L.ConvLSTM3D(2, 2, activation="relu", dtype="float64")(inputs[0])]
    if name == "attention":
        return list(L.Attention(use_scale=True, score_mode="concat", dtype="float64")(
            inputs[:3], mask=inputs[3:], use_causal_mask=True, return_attention_scores=True))
    if name == "additive":
        return list(L.AdditiveAttention(dtype="float64")(
            inputs[:2], mask=[None, inputs[2]], return_attention_scores=True))
    if name == "mha":
        return list(L.MultiHeadAttention(2, 2, value_dim=3, output_shape=(2, 2),
                                         dtype="float64")(
            inputs[0], inputs[1], key=inputs[2], attention_mask=inputs[3],
            use_causal_mask=True, return_attention_scores=True))
    if name == "mha_axes":
        return [L.MultiHeadAttention(2, 2, attention_axes=(1, 2), dtype="float64")(
            inputs[0], inputs[0])]
    return [L.EinsumDense("...b,bc->...c", 3, bias_axes="c", activation="tanh",
                          dtype="float64")(inputs[0])]


@pytest.mark.parametrize("name", ["conv2d", "conv1d", "conv3d", "attention", "additive", "mha",
                                  "mha_axes", "einsum"])
def test_values_and_gradients_match_tf215(name):
    data = np.load(FIXTURE)

    def series(kind):
        return [data["%s/%s%d" % (name, kind, i)] for i in
                itertools.takewhile(lambda i: "%s/%s%d" % (name, kind, i) in data.files,
                                    itertools.count())]

    values = series("in")
    inputs = [K.Input(batch_shape=v.shape, dtype="bool" if v.dtype == bool else "float64")
              for v in values]
    outputs = _fixture_case(name, inputs)
    model = K.Model(inputs, outputs)
    assert [w.name for w in model.weights] == list(data[name + "/names"])
    model.set_weights(series("w"))
    loss = tf.add_n([tf.reduce_sum(tf.sin(o)) * (i + 1.0) for i, o in enumerate(outputs)])
    floats = [x for x, v in zip(inputs, values) if v.dtype != bool]
    grads = tf.gradients(loss, floats + model.trainable_weights)
    got_outputs, got_grads = run([outputs, grads], dict(zip(inputs, values)))
    for got, want in zip(got_outputs + got_grads, series("out") + series("grad")):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# --- gradients numerically, and training ---------------------------------------------------
def _sin_loss(outputs):
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return tf.add_n([tf.reduce_sum(tf.sin(o)) * (i + 1.0) for i, o in enumerate(outputs)])


def _check_weight_gradients(loss, layer, feed, count=2):
    """tf.gradients of the weights against central differences at a few entries."""
    sess = K.backend.get_session()
    grads = sess.run(tf.gradients(loss, layer.trainable_weights), feed)
    rng = np.random.RandomState(0)
    for variable, grad in zip(layer.trainable_weights, grads):
        value = np.array(K.backend.get_value(variable))
        for _ in range(count):
            index = tuple(rng.randint(s) for s in value.shape)
            moved = []
            for sign in (1, -1):
                shifted = value.copy()
                shifted[index] += sign * 1e-6
                K.backend.set_value(variable, shifted)
                moved.append(sess.run(loss, feed))
            K.backend.set_value(variable, value)
            assert abs((moved[0] - moved[1]) / 2e-6 - grad[index]) < 1e-6


def test_conv_lstm_gradients_numerically():
    x_value, h_value = random((1, 3, 3, 3, 1), 21), random((1, 3, 3, 2), 22)
    x, h0 = placeholder(x_value), placeholder(h_value)
    layer = L.ConvLSTM2D(2, 2, padding="same", return_sequences=True, return_state=True,
                         go_backwards=True, dtype="float64")
    loss = _sin_loss(layer(x, initial_state=[h0, h0 * 0.5], mask=tf.constant([[1, 0, 1]])))
    set_random_weights(layer)
    with K.backend.get_session().as_default():
        error = compute_gradient_error([x, h0], [x_value.shape, h_value.shape], loss, [],
                                       x_init_value=[x_value, h_value], delta=1e-6)
    assert error < 1e-7
    _check_weight_gradients(loss, layer, {x: x_value, h0: h_value})


def test_attention_layers_gradients_numerically():
    q_value, v_value = random((2, 3, 4), 23), random((2, 4, 4), 24)
    q, v = placeholder(q_value), placeholder(v_value)
    attention = L.Attention(use_scale=True, score_mode="concat", dtype="float64")
    additive = L.AdditiveAttention(dtype="float64")
    mha = L.MultiHeadAttention(2, 3, value_dim=2, output_shape=(2, 2), dtype="float64")
    mask = tf.constant(MASK)
    loss = _sin_loss([attention([q, v], mask=[None, mask]),
                      additive([q, v, v], use_causal_mask=True),
                      *mha(q, v, attention_mask=mask[:, None, :], return_attention_scores=True)])
    for layer in (attention, additive, mha):
        set_random_weights(layer, scale=0.8)
    feed = {q: q_value, v: v_value}
    with K.backend.get_session().as_default():
        error = compute_gradient_error([q, v], [q_value.shape, v_value.shape], loss, [],
                                       x_init_value=[q_value, v_value], delta=1e-6)
    assert error < 1e-7
    for layer in (attention, additive, mha):
        _check_weight_gradients(loss, layer, feed, count=1)


def test_einsum_dense_gradients_numerically():
    x_value = random((2, 3, 4), 25)
    x = placeholder(x_value)
    layer = L.EinsumDense("...b,bc->...c", 3, bias_axes="c", activation="tanh",
                          dtype="float64")
    loss = _sin_loss(layer(x))
    set_random_weights(layer)
    with K.backend.get_session().as_default():
        assert compute_gradient_error(x, x_value.shape, loss, [], x_init_value=x_value,
                                      delta=1e-6) < 1e-7
    _check_weight_gradients(loss, layer, {x: x_value})


def test_a_few_training_steps_follow_tf215():
    frames = K.Input((3, 4, 4, 1))
    h = L.ConvLSTM2D(2, 3, padding="same", kernel_regularizer="l2")(frames)
    h = L.Reshape((16, 2))(h)
    h = L.MultiHeadAttention(2, 2, kernel_constraint=K.constraints.MaxNorm(1.0))(h, h)
    h = L.Attention(use_scale=True)([h, h])
    y = L.EinsumDense("abc,cd->ad", 1, activation="tanh")(h)
    model = K.Model(frames, y)
    set_random_weights(model, seed=3)
    model.compile(optimizer=K.optimizers.SGD(learning_rate=0.02), loss="mse")
    rng = np.random.RandomState(26)
    x_value = rng.uniform(-1, 1, (4, 3, 4, 4, 1)).astype(np.float32)
    y_value = rng.uniform(-0.5, 0.5, (4, 1)).astype(np.float32)
    losses = [model.train_on_batch(x_value, y_value) for _ in range(6)]
    # TF 2.15 from the same weights: 1.184751, 1.042747, 0.452014, 0.46592, 0.16139, 0.197804
    np.testing.assert_allclose(losses, [1.184751, 1.042747, 0.452014, 0.46592, 0.16139,
                                        0.197804], rtol=1e-4)
    assert len(model.losses) == 1  # the ConvLSTM kernel's l2
