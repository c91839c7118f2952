"""tf.keras core layers against TF 2.15's Keras in v1 graph mode: names (layer names count
from 0, variables in the call's name scope), Keras defaults and messages, and outputs
against NumPy (Dense, Dropout, Flatten, Activation, Reshape, Lambda, Embedding)."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers


def _names(variables):
    return [v.name for v in variables]


def test_dense_names_follow_keras_not_tf_layers(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    d = L.Dense(4)
    assert d.name == "dense" and not d.built
    y = d(x)
    assert y.op.name == "dense/BiasAdd" and y.shape.as_list() == [None, 4]
    assert d(x).op.name == "dense_1/BiasAdd"  # a second call: a new name scope
    d2 = L.Dense(2, activation="relu")
    assert d2.name == "dense_1" and d2(y).op.name == "dense_1_1/Relu"
    with tf.variable_scope("foo"):
        L.Dense(2)(x)
    with tf.variable_scope("foo", reuse=True):  # reuse plays no part for Keras layers
        L.Dense(2)(x)
    with tf.name_scope("ns"):
        L.Dense(2, name="dense")(x)
    L.Dense(2, name="dense")(x)
    assert _names(tf.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "dense_1_1/kernel:0", "dense_1_1/bias:0",
        "foo/dense_2/kernel:0", "foo/dense_2/bias:0", "foo_1/dense_3/kernel:0",
        "foo_1/dense_3/bias:0", "ns/dense/kernel:0", "ns/dense/bias:0", "dense_2/kernel:0",
        "dense_2/bias:0"]
    assert _names(tf.trainable_variables()) == _names(tf.global_variables())
    assert d.kernel.op.type == "VarHandleOp"  # resource variables, as TF's Keras makes
    assert _names(d.weights) == ["dense/kernel:0", "dense/bias:0"]
    assert d.variables == d.weights and d.trainable_variables == d.trainable_weights


def test_keras_and_tf_layers_share_the_name_counters(graph):
    assert L.Dense(1).name == "dense"
    assert tf.layers.Dense(1).name == "dense_2"  # TF: one per-graph counter for both
    assert L.Dense(1).name == "dense_2"


def test_dense_output_is_x_kernel_plus_bias(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    d = L.Dense(2, activation="tanh", bias_initializer="ones")
    y = d(x)
    sess.run(tf.global_variables_initializer())
    xv = np.random.rand(5, 3).astype(np.float32)
    out, kernel, bias = sess.run([y, d.kernel, d.bias], {x: xv})
    np.testing.assert_allclose(out, np.tanh(xv @ kernel + bias), rtol=1e-5)
    assert kernel.shape == (3, 2) and np.all(bias == 1.0)
    limit = np.sqrt(6.0 / 5)  # glorot_uniform: Keras' default kernel initializer
    assert np.all(np.abs(kernel) <= limit)
    x3 = tf.constant(np.random.rand(2, 4, 3).astype(np.float32))
    y3 = d(x3)  # rank 3: the last axis
    assert y3.shape.as_list() == [2, 4, 2]
    np.testing.assert_allclose(sess.run(y3), np.tanh(sess.run(x3) @ kernel + bias),
                               rtol=1e-5)


def test_dense_errors_and_dtypes(graph):
    with pytest.raises(TypeError, match="A Dense layer can only be built with a "
                                        "floating-point dtype. Received: dtype"):
        L.Dense(2)(tf.placeholder(tf.int32, [None, 3]))
    with pytest.raises(ValueError, match="The last dimension of the inputs to a Dense layer "
                                         "should be defined. Found None."):
        L.Dense(2)(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match='Input 0 of layer "dense_2" is incompatible with the '
                                         "layer: expected min_ndim=2, found ndim=1"):
        L.Dense(2)(tf.placeholder(tf.float32, [3]))
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        L.Dense(2, foo=1)
    with pytest.raises(ValueError, match="Unknown activation function: 'nope'"):
        L.Dense(2, activation="nope")
    assert L.Dense(2.5).units == 2
    d = L.Dense(2)
    d(tf.placeholder(tf.float32, [None, 3]))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3, "
                                         r"but received input with shape \(None, 4\)"):
        d(tf.placeholder(tf.float32, [None, 4]))
    assert L.Dense(2)(np.ones((2, 3))).dtype == tf.float64  # NumPy inputs become tensors
    d64 = L.Dense(2, dtype="float64")
    assert d64(tf.placeholder(tf.float32, [None, 3])).dtype == tf.float64
    assert d64.dtype == "float64" and d64.kernel.dtype.base_dtype == tf.float64


def test_dense_get_config_is_keras(graph):
    config = L.Dense(3, kernel_regularizer="l2").get_config()
    assert config["name"] == "dense" and config["units"] == 3
    assert config["activation"] == "linear" and config["dtype"] is None
    assert config["kernel_initializer"] == {"class_name": "GlorotUniform",
                                            "config": {"seed": None, "dtype": "float32"}}
    assert config["bias_initializer"] == {"class_name": "Zeros",
                                          "config": {"dtype": "float32"}}
    assert config["kernel_regularizer"] == {"class_name": "L2",
                                            "config": {"l2": pytest.approx(0.01)}}
    clone = L.Dense.from_config(dict(config, name="clone"))
    assert clone.units == 3 and clone.name == "clone"


def test_regularization_losses_are_in_layer_losses_only(sess):
    x = tf.constant(np.ones((2, 3), np.float32))
    d = L.Dense(2, kernel_initializer="ones", bias_initializer="ones",
                kernel_regularizer="l2", bias_regularizer=K.regularizers.l1(0.1),
                activity_regularizer="l1")
    y = d(x)
    losses = d.losses
    assert [t.name for t in losses] == ["dense/ActivityRegularizer/truediv:0",
                                        "dense/kernel/Regularizer/mul:0",
                                        "dense/bias/Regularizer/mul:0"]
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == []
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    sess.run(tf.global_variables_initializer())
    activity, kernel, bias = sess.run(losses)
    out = sess.run(y)
    np.testing.assert_allclose(activity, 0.01 * np.abs(out).sum() / 2, rtol=1e-5)
    np.testing.assert_allclose(kernel, 0.01 * 6, rtol=1e-5)
    np.testing.assert_allclose(bias, 0.1 * 2, rtol=1e-5)
    # weight regularization is built anew at each access, as TF's
    assert d.losses[1].name == "dense/kernel/Regularizer_1/mul:0"
    assert [t.name for t in d.get_losses_for(None)][0].startswith("dense/kernel/Regularizer")
    assert d.get_losses_for(x) == [losses[0]]


def test_dropout_uses_the_learning_phase(sess):
    x = tf.constant(np.ones((200, 10), np.float32))
    default = L.Dropout(0.5)(x)
    assert default.op.type == "Merge"  # a tf.cond on the 'keras_learning_phase' placeholder
    phase = K.backend.learning_phase()
    assert phase.name == "keras_learning_phase:0" and phase.dtype == tf.bool
    np.testing.assert_array_equal(sess.run(default), 1.0)  # default: inference
    dropped = sess.run(default, {phase: True})
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 0.4 < (dropped == 0).mean() < 0.6
    assert L.Dropout(0.5)(x, training=False).op.name == "dropout_1/Identity"
    trained = sess.run(L.Dropout(0.5)(x, training=True))
    assert 0.4 < (trained == 0).mean() < 0.6
    assert L.Dropout(0.0)(x).op.type == "Identity"
    noise = sess.run(L.Dropout(0.5, noise_shape=[None, 1])(x, training=True))
    assert np.all(noise == noise[:, :1])  # one mask value per row
    with pytest.raises(ValueError, match="Invalid value 1.5 received for `rate`"):
        L.Dropout(1.5)


def test_set_learning_phase_fixes_training(graph):
    x = tf.constant(np.ones((2, 3), np.float32))
    K.backend.set_learning_phase(1)
    assert K.backend.learning_phase() == 1
    assert L.Dropout(0.5)(x).op.type != "Identity"
    K.backend.set_learning_phase(0)
    assert L.Dropout(0.5)(x).op.type == "Identity"
    with pytest.raises(ValueError, match="Expected learning phase to be 0 or 1."):
        K.backend.set_learning_phase(2)


def test_flatten_activation_reshape_lambda(sess):
    img = np.random.rand(2, 4, 3, 2).astype(np.float32)
    x = tf.constant(img)
    flat = L.Flatten()(x)
    assert flat.op.name == "flatten/Reshape" and flat.shape.as_list() == [2, 24]
    first = L.Flatten(data_format="channels_first")(x)
    unknown = L.Flatten()(tf.placeholder(tf.float32, [None, None, 3]))
    assert unknown.shape.as_list() == [None, None]
    act = L.Activation("softmax")(tf.constant(img[:, 0, 0]))
    assert act.op.name == "activation/Softmax"
    reshaped = L.Reshape((-1, 2))(x)
    assert reshaped.shape.as_list() == [2, 12, 2]
    lam = L.Lambda(lambda t, k: t * k, arguments={"k": 3.0})(x)
    assert lam.op.name == "lambda/mul"
    out = sess.run([flat, first, act, reshaped, lam])
    np.testing.assert_allclose(out[0], img.reshape(2, -1))
    np.testing.assert_allclose(out[1], img.transpose(0, 2, 3, 1).reshape(2, -1))
    e = np.exp(img[:, 0, 0])
    np.testing.assert_allclose(out[2], e / e.sum(-1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(out[3], img.reshape(2, 12, 2))
    np.testing.assert_allclose(out[4], img * 3)
    batchless = tf.placeholder(tf.float32, [None, 4, 3, 2])
    with pytest.raises(ValueError, match=r"total size of new array must be unchanged, "
                                         r"input_shape = \[4, 3, 2\], output_shape = \[5, 5\]"):
        L.Reshape((5, 5))(batchless)
    with pytest.raises(ValueError, match="There must be at most one unknown dimension"):
        L.Reshape((-1, -1))(x)
    with pytest.raises(ValueError, match='The `data_format` argument must be one of '
                                         '"channels_first", "channels_last". Received: foo'):
        L.Flatten(data_format="foo")


def test_embedding_looks_up_rows(sess):
    table = np.arange(20, dtype=np.float32).reshape(10, 2)
    e = L.Embedding(10, 2, embeddings_initializer=tf.constant_initializer(table))
    ids = tf.constant([[1, 2, 9], [0, 0, 3]])
    y = e(ids)
    assert e.name == "embedding" and _names(e.weights) == ["embedding/embeddings:0"]
    assert y.dtype == tf.float32 and y.shape.as_list() == [2, 3, 2]
    float_ids = L.Embedding(10, 2)(tf.constant([[1.0, 2.0]]))  # cast to int32, as TF
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(y), table[[[1, 2, 9], [0, 0, 3]]])
    assert sess.run(float_ids).shape == (1, 2, 2)
    uniform = sess.run(L.Embedding(2, 2).embeddings_initializer((50, 4)))  # in [-0.05, 0.05)
    assert uniform.min() >= -0.05 and uniform.max() < 0.05
    with pytest.raises(ValueError, match="Both `input_dim` and `output_dim` should be positive"):
        L.Embedding(0, 2)
    with pytest.raises(NotImplementedError, match="sparse"):
        L.Embedding(3, 2, sparse=True)


def test_custom_layer_with_add_weight_and_sublayer(sess):
    class Scale(L.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.inner = L.Dense(units, kernel_initializer="ones")

        def build(self, input_shape):
            self.w = self.add_weight("w", shape=(int(input_shape[-1]), self.units),
                                     initializer="ones")
            self.b = self.add_weight(name="b", shape=(self.units,))
            self.steps = self.add_weight("steps", shape=(), dtype=tf.int32, trainable=False)
            super().build(input_shape)

        def call(self, x):
            return tf.matmul(x, self.w) + self.b + self.inner(x)

    layer = Scale(2)
    x = tf.constant(np.ones((1, 3), np.float32))
    y = layer(x)
    assert layer.name == "scale" and y.op.name == "scale/add_1"
    assert _names(layer.weights) == ["scale/w:0", "scale/b:0", "scale/dense/kernel:0",
                                     "scale/dense/bias:0", "scale/steps:0"]
    assert _names(layer.non_trainable_weights) == ["scale/steps:0"]
    assert layer.b.initializer.inputs[1].op.name == "scale/b/Initializer/random_uniform"
    sess.run(tf.global_variables_initializer())
    b = sess.run(layer.b)
    np.testing.assert_allclose(sess.run(y), [6.0 + b], rtol=1e-6)
    assert sess.run(layer.steps) == 0  # integer weights default to zeros
    layer.trainable = False
    assert layer.trainable_weights == [] and not layer.inner.trainable


def test_layer_without_super_init_and_bad_calls(graph):
    class Broken(L.Layer):
        def __init__(self):
            pass

    with pytest.raises(RuntimeError, match=r"You must call `super\(\).__init__\(\)`"):
        Broken()(tf.constant([[1.0]]))

    class ReturnsNone(L.Layer):
        def call(self, x):
            return None

    with pytest.raises(ValueError, match="A layer's `call` method should return a Tensor"):
        ReturnsNone()(tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="The first argument to `Layer.call` must always be "
                                         "passed."):
        L.Dense(2)()
    with pytest.raises(NotImplementedError, match="dynamic"):
        L.Layer(dynamic=True)


def test_initial_weights_are_set_in_the_keras_session(graph):
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    e = L.Embedding(4, 2, weights=[table])
    y = e(tf.constant([[1, 3]]))
    session = K.backend.get_session()
    np.testing.assert_array_equal(session.run(y), table[[[1, 3]]])
    d = L.Dense(2, kernel_initializer="ones", bias_initializer="ones")
    out = d(tf.constant(np.ones((1, 3), np.float32)))
    session = K.backend.get_session()  # initializes the variables Keras made since
    np.testing.assert_array_equal(session.run(out), [[4.0, 4.0]])
    assert [w.shape for w in d.get_weights()] == [(3, 2), (2,)]
    d.set_weights([np.full((3, 2), 2.0), np.zeros(2)])
    np.testing.assert_array_equal(session.run(out), [[6.0, 6.0]])
    with pytest.raises(ValueError, match="with a weight list of length 1, but the layer was "
                                         "expecting 2 weights"):
        d.set_weights([np.ones((3, 2))])
    with pytest.raises(ValueError, match=r"Layer weight shape \(3, 2\) not compatible with "
                                         r"provided weight shape \(2, 2\)"):
        d.set_weights([np.ones((2, 2)), np.ones(2)])


def test_activation_and_reshaping_layers(sess):
    img = np.random.randn(2, 3, 4, 2).astype(np.float32)
    x = tf.constant(img)
    vec = np.random.randn(3, 4).astype(np.float32)
    outputs = {
        "relu": L.ReLU(max_value=1.5, negative_slope=0.1, threshold=0.2)(x),
        "leaky": L.LeakyReLU()(x), "elu": L.ELU(0.5)(x), "softmax": L.Softmax(axis=1)(x),
        "perm": L.Permute((3, 1, 2))(x), "repeat": L.RepeatVector(3)(tf.constant(vec)),
        "pad": L.ZeroPadding2D(((1, 0), (2, 1)))(x), "crop": L.Cropping2D(((1, 0), (1, 2)))(x),
        "up": L.UpSampling2D((2, 3))(x),
        "up_first": L.UpSampling2D(data_format="channels_first")(x),
    }
    assert outputs["pad"].shape.as_list() == [2, 4, 7, 2]
    assert outputs["up_first"].shape.as_list() == [2, 3, 8, 4]
    got = sess.run(outputs)
    e = np.exp(img - img.max(1, keepdims=True))
    expected = {
        "relu": np.where(img > 0.2, np.minimum(img, 1.5), 0) - 0.1 * np.maximum(0.2 - img, 0),
        "leaky": np.where(img > 0, img, 0.3 * img),
        "elu": np.where(img > 0, img, 0.5 * (np.exp(img) - 1)),
        "softmax": e / e.sum(1, keepdims=True), "perm": img.transpose(0, 3, 1, 2),
        "repeat": np.repeat(vec[:, None], 3, axis=1),
        "pad": np.pad(img, [(0, 0), (1, 0), (2, 1), (0, 0)]), "crop": img[:, 1:, 1:2],
        "up": img.repeat(2, axis=1).repeat(3, axis=2),
        "up_first": img.repeat(2, axis=2).repeat(2, axis=3),
    }
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    assert L.LeakyReLU().get_config()["alpha"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="negative_slope of a ReLU layer cannot be a negative"):
        L.ReLU(negative_slope=-1)
    with pytest.raises(ValueError, match="Invalid permutation argument `dims`"):
        L.Permute((1, 3))
    with pytest.raises(ValueError, match="`padding` should have two elements"):
        L.ZeroPadding2D((1, 2, 3))
    with pytest.raises(ValueError, match="Argument `cropping` must be greater than the input"):
        L.Cropping2D(2)(x)
    with pytest.raises(NotImplementedError, match="interpolation='bicubic'"):
        L.UpSampling2D(interpolation="bicubic")
