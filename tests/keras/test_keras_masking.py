"""Keras masks (engine/masking.py, base_layer.py) as TF 2.15's Keras propagates them in
graph mode: `Embedding(mask_zero=True)` and `Masking` make them, `_keras_mask` carries
them between layers (also through functional and Sequential models called again), they
reach `call(mask=)`, merge layers combine them, and a masked output counts only its
unmasked entries in the compiled loss and metrics. References are NumPy formulas;
tensor names are TF's (checked against TF 2.15)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

K = tf.keras
L = tf.keras.layers

IDS = np.array([[1, 2, 0, 0, 0], [3, 4, 5, 6, 0]], np.int32)
MASK = IDS != 0


@pytest.fixture(autouse=True)
def _keras(keras_graph):
    yield keras_graph


def _run(fetches, feed=None):
    return K.backend.get_session().run(fetches, feed)


def _masked_mean(x, mask):
    w = mask.astype(x.dtype)[:, :, None]
    return (x * w).sum(axis=1) / w.sum(axis=1)


def _embedding_model():
    ids = K.Input(shape=(5,), dtype="int32", name="ids")
    emb = L.Embedding(10, 3, mask_zero=True, name="emb")
    e = emb(ids)
    h = L.Dense(2, name="d")(e)
    return ids, emb, e, h


# --- where masks come from and how they flow -------------------------------------------------
def test_embedding_mask_zero_masks_padding_through_dense_to_average_pooling():
    ids, emb, e, h = _embedding_model()
    assert e._keras_mask.name == "emb/NotEqual:0"  # computed in the layer's scope, as TF
    assert h._keras_mask is e._keras_mask  # Dense supports masking: passed through
    assert ids._keras_mask is None  # an Input's mask is None
    with pytest.raises(AttributeError):
        tf.ones([2])._keras_mask  # a tensor no layer made has none
    assert getattr(tf.ones([2]), "_keras_mask", "absent") == "absent"
    assert emb.supports_masking and emb.compute_mask(ids).name == "NotEqual:0"
    assert L.Embedding(10, 3).compute_mask(ids) is None
    g = L.GlobalAveragePooling1D()(h)
    gm = L.GlobalMaxPooling1D()(h)
    assert g._keras_mask is None and gm._keras_mask is None
    assert L.Flatten()(e)._keras_mask is None  # layers without masking support drop it
    assert L.Conv1D(2, 2)(e)._keras_mask is None
    mask, hv, gv, gmv = _run([e._keras_mask, h, g, gm], {ids: IDS})
    np.testing.assert_array_equal(mask, MASK)
    np.testing.assert_allclose(gv, _masked_mean(hv, MASK), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gmv, hv.max(axis=1), rtol=1e-6)  # no mask argument: all steps


def test_global_average_pooling_1d_mask_channels_first_keepdims_and_gradient():
    x = tf.placeholder(tf.float64, [2, 3, 5])  # channels_first: steps last
    mask = tf.constant(MASK)
    y = L.GlobalAveragePooling1D(data_format="channels_first", keepdims=True)(x, mask=mask)
    xv = np.random.RandomState(0).randn(2, 3, 5)
    expected = _masked_mean(xv.transpose(0, 2, 1), MASK)[:, :, None]
    np.testing.assert_allclose(_run(y, {x: xv}), expected, rtol=1e-12)
    with K.backend.get_session().as_default():
        assert compute_gradient_error(x, [2, 3, 5], y, [2, 3, 1], x_init_value=xv) < 1e-8


def test_functional_model_called_again_recomputes_the_masks():
    ids, emb, e, h = _embedding_model()
    g = L.GlobalAveragePooling1D()(h)
    model = K.Model(ids, [h, g])
    assert model(K.Input(shape=(5,), dtype="int32"))[0]._keras_mask.name == \
        "model/emb/NotEqual:0"
    h2, g2 = model(tf.constant(IDS))
    assert h2._keras_mask.name == "model_1/emb/NotEqual:0" and g2._keras_mask is None
    mask, hv, gv = _run([h2._keras_mask, h2, g2])
    np.testing.assert_array_equal(mask, MASK)
    np.testing.assert_allclose(gv, _masked_mean(hv, MASK), rtol=1e-5, atol=1e-6)
    # a model whose output is masked, inside another model: the mask reaches the pooling
    inner = K.Model(ids, h)
    x = K.Input(shape=(5,), dtype="int32")
    outer = K.Model(x, L.GlobalAveragePooling1D()(inner(x)))
    hv, ov = _run([h, outer.outputs[0]], {ids: IDS, x: IDS})
    np.testing.assert_allclose(ov, _masked_mean(hv, MASK), rtol=1e-5, atol=1e-6)
    # an explicit mask for the model's input: its layers see it
    seq = K.Input(shape=(5, 2))
    pooled = K.Model(seq, L.GlobalAveragePooling1D()(L.Dense(2, name="dd")(seq)))
    xv = np.random.RandomState(1).randn(2, 5, 2).astype(np.float32)
    out = pooled(tf.constant(xv), mask=tf.constant(MASK))
    kernel, bias = pooled.get_layer("dd").get_weights()
    np.testing.assert_allclose(_run(out), _masked_mean(xv @ kernel + bias, MASK),
                               rtol=1e-5, atol=1e-6)


class _Recorder(L.Layer):
    """Records the mask its `call` receives."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.masks = []

    def call(self, inputs, mask=None):
        self.masks.append(mask)
        return inputs * 2.0


def test_sequential_models_pass_each_layer_the_previous_layers_mask():
    model = K.Sequential([L.Embedding(10, 3, mask_zero=True, input_length=5,
                                      embeddings_initializer="ones"),
                          L.Dense(2, kernel_initializer="ones"), L.GlobalAveragePooling1D()])
    assert [getattr(layer.output, "_keras_mask", None) is not None
            for layer in model.layers] == [True, True, False]
    ids = np.array([[1, 0, 0, 0, 0], [1, 2, 0, 0, 0]], np.int32)
    # every embedding is ones: Dense gives 3 at each step, the masked mean too
    np.testing.assert_allclose(_run(model.outputs[0], {model.inputs[0]: ids}),
                               np.full((2, 2), 3.0))
    recorder = _Recorder()
    deferred = K.Sequential([L.Embedding(10, 3, mask_zero=True), recorder])
    y = deferred(tf.constant(IDS))  # built on this call: each layer after the other
    assert y._keras_mask.name == "sequential_1/embedding_1/NotEqual:0"
    assert recorder.masks[-1] is y._keras_mask  # not the Sequential's own mask (None)
    np.testing.assert_array_equal(_run(y._keras_mask), MASK)
    # an explicit mask for a built Sequential model reaches its layers
    pooled = K.Sequential([L.Dense(2, input_shape=(5, 2), kernel_initializer="ones"),
                           L.GlobalAveragePooling1D()])
    xv = np.arange(20, dtype=np.float32).reshape(2, 5, 2)
    out = pooled(tf.constant(xv), mask=tf.constant(MASK))
    np.testing.assert_allclose(_run(out), _masked_mean(np.repeat(xv.sum(-1, keepdims=True), 2,
                                                                 axis=-1), MASK))


class _MakeMask(L.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, x):
        return x

    def compute_mask(self, x, mask=None):
        return tf.reduce_any(tf.not_equal(x, 0.0), axis=-1)


class _MaskedMean(L.Layer):
    def call(self, x, mask=None):
        if mask is None:
            return tf.reduce_mean(x, axis=1)
        m = tf.cast(mask, x.dtype)[:, :, None]
        return tf.reduce_sum(x * m, axis=1) / tf.reduce_sum(m, axis=1)

    def compute_mask(self, x, mask=None):
        return None


def test_custom_layers_get_the_mask_in_call_and_set_it_with_compute_mask():
    inp = K.Input((4, 2))
    h = _MakeMask()(inp)
    assert h._keras_mask is not None
    o = _MaskedMean()(h)
    xv = np.array([[[1, 1], [3, 3], [0, 0], [0, 0]]], np.float32)
    np.testing.assert_allclose(_run(o, {inp: xv}), [[2.0, 2.0]])  # TF: [[2, 2]]
    np.testing.assert_allclose(_run(K.Model(inp, o)(tf.constant(xv))), [[2.0, 2.0]])
    o2 = _MaskedMean()(inp, mask=tf.constant([[True, True, False, False]]))  # explicit
    np.testing.assert_allclose(_run(o2, {inp: xv}), [[2.0, 2.0]])
    o3 = _MaskedMean()(h, tf.constant([[True, False, False, False]]))  # positional
    np.testing.assert_allclose(_run(o3, {inp: xv}), [[1.0, 1.0]])
    # the default compute_mask: the input mask when supported, else a TypeError if given
    assert L.Dense(1).compute_mask(h, h._keras_mask) is h._keras_mask
    assert L.Dense(1).compute_mask(h) is None
    flatten = L.Flatten(name="flat")
    with pytest.raises(TypeError, match="Layer flat does not support masking, but was passed "
                                        "an input_mask"):
        flatten.compute_mask(h, h._keras_mask)
    # a mask given to a layer whose call takes none fails as in TF
    x = tf.constant(xv)
    with pytest.raises(TypeError, match=r"Dense.call\(\) got an unexpected keyword argument "
                                        "'mask'"):
        L.Dense(1)(x, mask=tf.constant([[True, True, False, False]]))
    with pytest.raises(TypeError, match=r"GlobalMaxPooling1D.call\(\) got an unexpected "
                                        "keyword argument 'mask'"):
        L.GlobalMaxPooling1D()(x, mask=tf.constant([[True, True, False, False]]))


def test_masking_layer_zeroes_and_masks_the_padded_steps():
    inp = K.Input((3, 2))
    layer = L.Masking(0.0)
    y = layer(inp)
    assert y._keras_mask.name == "masking/Squeeze:0"
    assert layer.get_config() == {"name": "masking", "trainable": True, "dtype": "float32",
                                  "mask_value": 0.0}
    xv = np.array([[[1, 1], [0, 0], [3, 0]]], np.float32)
    out, mask = _run([y, y._keras_mask], {inp: xv})
    np.testing.assert_array_equal(mask, [[True, False, True]])
    np.testing.assert_array_equal(out, xv)
    z = L.Masking(1.0)(tf.constant(xv))
    keep = np.any(xv != 1.0, axis=-1)
    out, mask = _run([z, z._keras_mask])
    np.testing.assert_array_equal(mask, keep)
    np.testing.assert_array_equal(out, xv * keep[:, :, None])
    # Masking after a masked input: its own mask replaces the input's
    ids, _, e, _ = _embedding_model()
    assert L.Masking()(e)._keras_mask.name == "masking_2/Squeeze:0"


def test_merge_layers_combine_the_masks():
    ids = K.Input(shape=(4,), dtype="int32")
    ids2 = K.Input(shape=(4,), dtype="int32")
    e1 = L.Embedding(6, 2, mask_zero=True)(ids)
    e2 = L.Embedding(6, 2, mask_zero=True)(ids2)
    e3 = L.Embedding(6, 2)(ids2)  # no mask
    add = L.Add(name="add")([e1, e2])
    assert add._keras_mask.name == "add/All:0"
    one = L.Maximum()([e1, e3])
    cat = L.Concatenate(name="cat")([e1, e3])
    cat1 = L.Concatenate(axis=1)([e1, e2])
    assert cat._keras_mask.name == "cat/All:0"
    assert L.Dot(axes=2)([e1, e2])._keras_mask is None
    i1 = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], np.int32)
    i2 = np.array([[1, 0, 3, 0], [3, 4, 5, 0]], np.int32)
    m = _run([add._keras_mask, one._keras_mask, cat._keras_mask, cat1._keras_mask],
             {ids: i1, ids2: i2})
    np.testing.assert_array_equal(m[0], (i1 != 0) & (i2 != 0))
    np.testing.assert_array_equal(m[1], i1 != 0)
    np.testing.assert_array_equal(m[2], i1 != 0)  # the unmasked input counts as all True
    np.testing.assert_array_equal(m[3], np.concatenate([i1 != 0, i2 != 0], axis=1))
    with pytest.raises(ValueError, match="`mask` should be a list"):
        L.Add().compute_mask([e1, e2], e1._keras_mask)
    with pytest.raises(ValueError, match="should have the same length"):
        L.Concatenate().compute_mask([e1, e2], [e1._keras_mask])


def test_lambda_softmax_and_normalization_layers_with_masks():
    ids, _, e, _ = _embedding_model()
    zeroed = L.Lambda(lambda x, mask: x * tf.cast(tf.expand_dims(mask, -1), x.dtype))(e)
    assert zeroed._keras_mask is None  # a Lambda without `mask=` gives none
    flipped = L.Lambda(lambda x: x, mask=lambda x, m: tf.logical_not(m))(e)
    assert L.LayerNormalization()(e)._keras_mask is e._keras_mask
    assert L.Activation("relu")(e)._keras_mask is e._keras_mask
    assert L.Dropout(0.5)(e)._keras_mask is e._keras_mask
    ev, zv, fm = _run([e, zeroed, flipped._keras_mask], {ids: IDS})
    np.testing.assert_array_equal(zv, ev * MASK[:, :, None])
    np.testing.assert_array_equal(fm, ~MASK)
    x = tf.constant([[1.0, 2.0, 3.0]])
    out = _run(L.Softmax()(x, mask=tf.constant([[True, False, True]])))
    expected = np.exp([1.0, 3.0]) / np.exp([1.0, 3.0]).sum()
    np.testing.assert_allclose(out, [[expected[0], 0.0, expected[1]]], rtol=1e-6, atol=1e-7)


def test_batch_normalization_moments_in_training_are_over_the_unmasked_steps():
    inp = K.Input((4, 2))
    layer = L.BatchNormalization(momentum=0.0)
    y = layer(L.Masking(0.0)(inp), training=True)
    xv = np.array([[[1, 2], [3, 4], [0, 0], [0, 0]], [[5, 6], [0, 0], [0, 0], [0, 0]]],
                  np.float32)
    _run(tf.variables_initializer(layer.weights))
    out = _run([y] + layer.updates, {inp: xv})[0]
    valid = xv[np.any(xv != 0, axis=-1)]  # the 3 unmasked steps
    mean, var = valid.mean(axis=0), valid.var(axis=0)
    np.testing.assert_allclose(out, (xv - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    moving = _run([layer.moving_mean, layer.moving_variance])
    np.testing.assert_allclose(moving[0], mean, rtol=1e-6)  # TF: [3, 4]
    np.testing.assert_allclose(moving[1], var, rtol=1e-5)  # TF: [2.666667, 2.666667]


def test_masked_outputs_weight_the_compiled_loss_and_metrics():
    ids = K.Input(shape=(4,), dtype="int32")
    e = L.Embedding(6, 2, mask_zero=True, embeddings_initializer=K.initializers.Constant(0.5))
    out = L.Dense(1, kernel_initializer="ones", use_bias=False)(e(ids))  # 1.0 everywhere
    model = K.Model(ids, out)
    model.compile("sgd", "mse", metrics=["mae"], weighted_metrics=["mse"])
    x = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], np.int32)
    y = np.array([[[0.], [2.], [5.], [5.]], [[3.], [7.], [7.], [7.]]], np.float32)
    mask = (x != 0)
    err = (y[..., 0] - 1.0)
    mse = (err ** 2)[mask].mean()  # 2.0 (TF 2.15: 2.0, 1.3333334, 2.0)
    mae = np.abs(err)[mask].mean()
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), [mse, mae, mse], rtol=1e-6)
    sw = np.array([1.0, 3.0], np.float32)
    weights = (sw[:, None] * mask)
    loss = ((err ** 2) * weights).sum() / mask.sum()  # TF: 4.6666667
    weighted_mse = ((err ** 2) * weights).sum() / weights.sum()  # TF: 2.8
    np.testing.assert_allclose(model.evaluate(x, y, sample_weight=sw, verbose=0),
                               [loss, mae, weighted_mse], rtol=1e-6)
    summed = K.Model(ids, out)
    summed.compile("sgd", K.losses.MeanSquaredError(reduction="sum"))
    np.testing.assert_allclose(summed.evaluate(x, y, verbose=0), (err ** 2)[mask].sum())


def test_input_and_output_mask_properties():
    ids, emb, e, h = _embedding_model()
    layer = L.Dense(2)
    layer(e)
    assert layer.input_mask is e._keras_mask and layer.output_mask is e._keras_mask
    assert layer.get_input_mask_at(0) is e._keras_mask
    assert emb.input_mask is None and emb.output_mask is e._keras_mask
    merged = L.Add()
    merged([e, e])
    assert merged.input_mask == [e._keras_mask, e._keras_mask]
