"""tf.keras.backend (configuration, learning phase, session, clear_session, values,
function, tensor helpers) and tf.keras.losses against NumPy and TF 2.15's behaviour."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
B = tf.keras.backend


def test_configuration_and_errors():
    assert B.floatx() == "float32" and B.epsilon() == 1e-7
    assert B.image_data_format() == "channels_last" and B.backend() == "tensorflow"
    B.set_floatx("float64")
    try:
        assert B.floatx() == "float64" and B.cast_to_floatx(1).dtype == np.float64
    finally:
        B.set_floatx("float32")
    with pytest.raises(ValueError, match="Unknown `floatx` value: int3. Expected one of"):
        B.set_floatx("int3")
    with pytest.raises(ValueError, match="Unknown `data_format`: foo. Expected one of"):
        B.set_image_data_format("foo")
    B.set_epsilon(1e-5)
    try:
        assert B.epsilon() == 1e-5
    finally:
        B.set_epsilon(1e-7)


def test_learning_phase_and_its_scope(graph):
    phase = B.learning_phase()
    assert phase is B.learning_phase() and phase.op.type == "PlaceholderWithDefault"
    with B.learning_phase_scope(1):
        assert B.learning_phase() == 1
    assert B.learning_phase() is phase
    with pytest.raises(ValueError, match="Expected learning phase to be 0 or 1."):
        with B.learning_phase_scope(3):
            pass
    other = tf.Graph()
    with other.as_default():
        assert B.learning_phase() is not phase  # one per graph


def test_session_values_and_function(graph):
    v = B.variable(np.ones((2, 2)), name="vv")
    assert v.name == "vv:0" and v.dtype.base_dtype == tf.float32
    session = B.get_session()  # initializes the variables Keras made
    assert session is B.get_session() and session.graph is graph
    np.testing.assert_array_equal(B.get_value(v), np.ones((2, 2)))
    B.set_value(v, np.full((2, 2), 3.0))
    np.testing.assert_array_equal(B.batch_get_value([v]), [np.full((2, 2), 3.0)])
    assert B.int_shape(v) == (2, 2) and B.ndim(v) == 2 and B.dtype(v) == "float32"
    assert B.count_params(v) == 4 and not B.is_keras_tensor(tf.constant(1.0))
    assert B.is_keras_tensor(K.Input((2,)))
    with pytest.raises(ValueError, match="Unexpectedly found an instance of type"):
        B.is_keras_tensor(3)
    inp = K.Input((3,))
    out = K.layers.Dropout(0.999)(K.layers.Dense(2, kernel_initializer="ones")(inp))
    f = B.function([inp, B.learning_phase()], [out])
    np.testing.assert_array_equal(f([np.ones((1, 3)), 0]), [[[3.0, 3.0]]])
    assert np.count_nonzero(f([np.ones((50, 3)), 1])[0]) < 10
    np.testing.assert_array_equal(B.function([inp], out)([np.ones((1, 3))]), [[3.0, 3.0]])
    counter = B.variable(0.0)
    step = B.function([inp], [out], updates=[(counter, counter + 1)])
    step([np.ones((1, 3))])
    step([np.ones((1, 3))])
    assert B.get_value(counter) == 2.0
    with pytest.raises(ValueError, match='Invalid argument "foo" passed to K.function'):
        B.function([inp], [out], foo=1)


def test_clear_session_resets_the_graph():
    with tf.Graph().as_default():
        with pytest.raises(AssertionError, match="Do not use tf.reset_default_graph"):
            B.clear_session()
    before = tf.get_default_graph()
    K.layers.Dense(1)
    B.clear_session()
    graph = tf.get_default_graph()
    assert graph is not before
    assert [op.name for op in graph.get_operations()][-1] == "keras_learning_phase"
    assert K.layers.Dense(1).name == "dense" and K.Input((2,)).name == "input_1:0"
    B.clear_session()


def test_tensor_helpers(sess):
    v = np.array([[1.0, -4.0], [9.0, 16.0]], np.float32)
    x = tf.constant(v)
    got = sess.run([B.sum(x, axis=1), B.mean(x), B.max(x, 0, keepdims=True), B.sqrt(x),
                    B.clip(x, 0, 5), B.clip(x, 3, 1), B.concatenate([x, x]),
                    B.batch_flatten(tf.ones((2, 3, 4))), B.dot(x, x),
                    B.dot(tf.ones((2, 3, 4)), tf.ones((5, 4, 6))), B.permute_dimensions(x, (1, 0)),
                    B.one_hot(tf.constant([0, 2]), 3), B.switch(tf.constant(True), x, -x),
                    B.in_train_phase(x, -x, training=0), B.mean(tf.constant([True, False]))])
    expected = [v.sum(1), v.mean(), v.max(0, keepdims=True), np.sqrt(np.maximum(v, 0)),
                np.clip(v, 0, 5), np.full_like(v, 3.0), np.concatenate([v, v], -1),
                np.ones((2, 12)), v @ v, np.full((2, 3, 5, 6), 4.0), v.T, np.eye(3)[[0, 2]], v,
                -v, 0.5]
    for g, want in zip(got, expected):
        np.testing.assert_allclose(g, want, rtol=1e-6)


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_losses_against_numpy(sess):
    rng = np.random.RandomState(1)
    t = rng.rand(4, 3).astype(np.float32)
    p = rng.rand(4, 3).astype(np.float32) + 0.1
    yt, yp = tf.constant(t), tf.constant(p)
    L = K.losses
    eps = 1e-7
    cases = {
        "mse": (L.mse(yt, yp), ((p - t) ** 2).mean(-1)),
        "mae": (L.MAE(yt, yp), np.abs(p - t).mean(-1)),
        "mape": (L.mape(yt, yp), 100 * np.abs((t - p) / np.maximum(np.abs(t), eps)).mean(-1)),
        "msle": (L.msle(yt, yp), ((np.log(np.maximum(p, eps) + 1) -
                                   np.log(np.maximum(t, eps) + 1)) ** 2).mean(-1)),
        "hinge": (L.hinge(yt, yp), np.maximum(1 - t * p, 0).mean(-1)),
        "sq_hinge": (L.squared_hinge(tf.constant([[0.0, 1.0]]), tf.constant([[0.3, -0.2]])),
                     np.square(np.maximum(1 - np.array([[-1.0, 1.0]]) * [[0.3, -0.2]],
                                          0)).mean(-1)),
        "cat_hinge": (L.categorical_hinge(yt, yp),
                      np.maximum(((1 - t) * p).max(-1) - (t * p).sum(-1) + 1, 0)),
        "logcosh": (L.logcosh(yt, yp), np.log(np.cosh(p - t)).mean(-1)),
        "kld": (L.KLD(yt, yp), (np.clip(t, eps, 1) * np.log(np.clip(t, eps, 1) /
                                                            np.clip(p, eps, 1))).sum(-1)),
        "poisson": (L.poisson(yt, yp), (p - t * np.log(p + eps)).mean(-1)),
        "cosine": (L.cosine_similarity(yt, yp),
                   -(t * p).sum(-1) / np.linalg.norm(t, axis=-1) / np.linalg.norm(p, axis=-1)),
    }
    got = sess.run({k: v[0] for k, v in cases.items()})
    for key, (_, want) in cases.items():
        np.testing.assert_allclose(got[key], want, rtol=1e-5, atol=1e-6, err_msg=key)


def test_crossentropies(sess):
    rng = np.random.RandomState(2)
    logits = rng.randn(5, 4).astype(np.float32)
    labels = rng.randint(0, 4, 5)
    onehot = np.eye(4, dtype=np.float32)[labels]
    probs = _softmax(logits)
    z, y = tf.constant(logits), tf.constant(onehot)
    L = K.losses
    expected_ce = -np.log(probs[np.arange(5), labels])
    smooth = onehot * 0.8 + 0.2 / 4
    sig = 1 / (1 + np.exp(-logits))
    bce = -(onehot * np.log(sig) + (1 - onehot) * np.log(1 - sig)).mean(-1)
    cases = {
        "cce_logits": (L.categorical_crossentropy(y, z, from_logits=True), expected_ce),
        "cce_probs": (L.categorical_crossentropy(y, tf.constant(probs)), expected_ce),
        "cce_softmax": (L.categorical_crossentropy(y, K.activations.softmax(z)), expected_ce),
        "cce_smooth": (L.categorical_crossentropy(y, z, from_logits=True, label_smoothing=0.2),
                       -(smooth * np.log(probs)).sum(-1)),
        "scce": (L.sparse_categorical_crossentropy(tf.constant(labels), tf.nn.softmax(z)),
                 expected_ce),
        "scce_logits": (L.sparse_categorical_crossentropy(tf.constant(labels[:, None]), z,
                                                          from_logits=True), expected_ce),
        "bce_logits": (L.binary_crossentropy(y, z, from_logits=True), bce),
        "bce_sigmoid": (L.binary_crossentropy(y, tf.sigmoid(z)), bce),
        "bce_probs": (L.binary_crossentropy(y, tf.constant(sig)), bce),
    }
    got = sess.run({k: v[0] for k, v in cases.items()})
    for key, (_, want) in cases.items():
        np.testing.assert_allclose(got[key], want, rtol=1e-4, atol=1e-5, err_msg=key)
    clipped = sess.run(L.categorical_crossentropy(tf.constant([[1.0, 0.0]]),
                                                  tf.constant([[0.0, 1.0]])))
    np.testing.assert_allclose(clipped, [-np.log(1e-7)], rtol=1e-4)  # clipped to epsilon
    assert L.get("mse") is L.mean_squared_error and L.serialize(L.mse) == "mean_squared_error"
    assert L.cosine is L.cosine_proximity is L.cosine_similarity
    with pytest.raises(ValueError, match="Unknown loss function: 'nope'"):
        L.get("nope")
    with pytest.raises(NotImplementedError, match="ignore_class"):
        L.sparse_categorical_crossentropy(tf.constant([1]), z[:1], ignore_class=0)


def test_loss_classes_reduce_as_tf(sess):
    rng = np.random.RandomState(3)
    t = rng.rand(4, 3).astype(np.float32)
    p = rng.rand(4, 3).astype(np.float32)
    w = np.array([1.0, 0.0, 2.0, 1.0], np.float32)
    labels = np.array([0, 2, 1, 1])
    L = K.losses
    per_example = ((p - t) ** 2).mean(-1)
    mse = L.MeanSquaredError()(t, p)
    assert mse.op.name == "mean_squared_error/weighted_loss/value"
    log_p = p - np.log(np.exp(p).sum(-1, keepdims=True))
    cases = {
        "mse": (mse, per_example.mean()),
        "weighted": (L.MeanSquaredError()(t, p, sample_weight=w), (per_example * w).mean()),
        "weighted_column": (L.MeanSquaredError()(t, p, sample_weight=w[:, None]),
                            (per_example * w).mean()),
        "sum": (L.MeanSquaredError(reduction="sum")(t, p), per_example.sum()),
        "none": (L.MeanSquaredError(reduction="none")(t, p), per_example),
        "scce": (L.SparseCategoricalCrossentropy(from_logits=True)(labels, p, sample_weight=w),
                 (-log_p[np.arange(4), labels] * w).mean()),
        "huber": (L.Huber(delta=0.3)(t, p),
                  np.where(np.abs(p - t) <= 0.3, 0.5 * (p - t) ** 2,
                           0.3 * np.abs(p - t) - 0.045).mean(-1).mean()),
        # NumPy inputs: no squeeze, so [4, 1] against [4] broadcasts, as in TF
        "broadcast": (L.MeanAbsoluteError()(t[:, :1], p[:, 0]),
                      np.abs(p[None, :, 0] - t[:, :1]).mean()),
        "squeezed": (L.MeanAbsoluteError()(tf.constant(t[:, :1]), tf.constant(p[:, 0])),
                     np.abs(p[:, 0] - t[:, 0]).mean()),
    }
    got = sess.run({k: v[0] for k, v in cases.items()})
    for key, (_, want) in cases.items():
        np.testing.assert_allclose(got[key], want, rtol=1e-5, err_msg=key)
    assert L.CategoricalCrossentropy(from_logits=True).get_config() == {
        "reduction": "auto", "name": "categorical_crossentropy", "from_logits": True,
        "label_smoothing": 0.0, "axis": -1, "fn": "categorical_crossentropy"}
    assert L.Huber().name == "huber_loss"
    clone = L.CategoricalCrossentropy.from_config(L.CategoricalCrossentropy(axis=0).get_config())
    assert clone.get_config()["axis"] == 0
    with pytest.raises(ValueError, match="Invalid Reduction Key: mean"):
        L.MeanSquaredError(reduction="mean")


def test_switch_with_a_vector_condition_broadcasts_over_the_last_axis(sess):
    # Keras' tf.where is TF 2's: condition [c0, c1] picks per column, not per row
    B = tf.keras.backend
    then, other = np.array([[1.0, 2.0], [5.0, 6.0]]), np.array([[3.0, 4.0], [7.0, 8.0]])
    got = sess.run(B.switch(tf.constant([True, False]), tf.constant(then),
                            tf.constant(other)))
    np.testing.assert_array_equal(got, np.where([True, False], then, other))


def test_a_model_refuses_an_input_of_another_rank(graph):
    # Keras' functional input spec: the input's shape without the batch size
    seq = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    inp = tf.keras.Input((3,))
    functional = tf.keras.Model(inp, tf.keras.layers.Dense(2)(inp))
    for model in (seq, functional):
        with pytest.raises(ValueError, match="is incompatible with the layer"):
            model(tf.ones([2, 4, 3]))
        with pytest.raises(ValueError, match="is incompatible with the layer"):
            model(tf.ones([2, 4]))
    assert functional(tf.placeholder(tf.float32, [None, 3])).shape.as_list() == [None, 2]


def test_batch_flatten_of_a_known_shape_is_known(graph):
    # the product of the shape's tail is evaluated at build time, as TF's shape inference
    assert tf.keras.backend.batch_flatten(tf.ones([2, 3, 4])).shape.as_list() == [2, 12]
    shape = tf.shape(tf.ones([2, 3]))
    assert tf.get_static_value(tf.reduce_prod(shape)) == 6
    assert tf.get_static_value(tf.reduce_sum(shape, keepdims=True)).tolist() == [5]
