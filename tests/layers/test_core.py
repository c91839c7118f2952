"""tf.layers base semantics (names, scopes, reuse, collections) and the core layers
(Dense, Dropout, Flatten) against NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def _names(variables):
    return [v.name for v in variables]


# --- names, scopes, reuse ----------------------------------------------------------------
def test_dense_variable_names_and_shapes_follow_tf1(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.layers.dense(x, 3)
    y2 = tf.layers.dense(y, 2, use_bias=False)
    with tf.variable_scope("block"):
        tf.layers.dense(x, 5)
    assert _names(tf.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "block/dense/kernel:0",
        "block/dense/bias:0"]
    assert [v.shape.as_list() for v in tf.global_variables()[:3]] == [[4, 3], [3], [3, 2]]
    assert _names(tf.trainable_variables()) == _names(tf.global_variables())
    assert y.op.name == "dense/BiasAdd" and y.shape.as_list() == [None, 3]
    assert y2.op.name == "dense_1/MatMul" and y2.dtype == tf.float32


def test_from_import_and_layer_classes():
    from tensorweave.layers import Dense, dense  # noqa: F401
    assert tf.layers.dense is dense and tf.layers.Dense is Dense
    for name in ("Layer", "InputSpec", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose",
                 "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "MaxPooling1D",
                 "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
                 "AveragePooling3D", "Dropout", "BatchNormalization", "Flatten",
                 "conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv3d_transpose",
                 "separable_conv1d", "separable_conv2d", "max_pooling1d", "max_pooling2d",
                 "max_pooling3d", "average_pooling1d", "average_pooling2d",
                 "average_pooling3d", "dropout", "batch_normalization", "flatten"):
        assert hasattr(tf.layers, name), name
    assert not hasattr(tf, "Dense")  # exported only into tf.layers


def test_named_layers_reuse_and_errors(graph):
    x = tf.placeholder(tf.float32, [2, 4])
    tf.layers.dense(x, 3, name="fc")
    with pytest.raises(ValueError, match="already exists"):
        tf.layers.dense(x, 3, name="fc")
    y = tf.layers.dense(x, 3, name="fc", reuse=True)
    assert len(tf.global_variables()) == 2 and y.op.name == "fc_2/BiasAdd"
    with pytest.raises(ValueError, match="does not exist"):
        tf.layers.dense(x, 3, name="other", reuse=True)
    with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
        a = tf.layers.dense(x, 3, name="shared")
        b = tf.layers.dense(x, 3, name="shared")
    assert "outer/shared/kernel:0" in _names(tf.global_variables())
    assert len(tf.global_variables()) == 4 and a is not b


def test_layer_object_is_called_twice_with_shared_variables(sess):
    layer = tf.layers.Dense(2, kernel_initializer=tf.ones_initializer(),
                            bias_initializer=tf.constant_initializer(0.5))
    assert layer.name == "dense_1" and not layer.built  # TF1 counts names from 1
    with pytest.raises(ValueError, match="scope"):
        layer.scope_name  # noqa: B018
    a = layer(tf.constant([[1.0, 2.0]]))
    b = layer.apply(tf.constant([[3.0, 4.0]]))
    assert layer.built and layer.scope_name == "dense"
    assert _names(layer.variables) == ["dense/kernel:0", "dense/bias:0"]
    assert layer.kernel is layer.trainable_weights[0] and layer.non_trainable_weights == []
    assert len(tf.global_variables()) == 2
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run([a, b]), [[[3.5, 3.5]], [[7.5, 7.5]]])
    with pytest.raises(ValueError, match="incompatible"):
        layer(tf.constant([[1.0, 2.0, 3.0]]))


def test_regularizers_constraints_and_trainable(sess):
    x = tf.constant(np.ones([2, 3], np.float32))

    def l2(w):
        return tf.reduce_sum(tf.square(w))

    def clip(w):
        return tf.clip_by_value(w, -0.1, 0.1)

    y = tf.layers.dense(x, 2, kernel_regularizer=l2, bias_regularizer=l2,
                        activity_regularizer=tf.reduce_sum, kernel_constraint=clip,
                        bias_initializer=tf.ones_initializer())
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 3
    assert losses[0].op.name.startswith("dense/kernel/Regularizer/")
    assert losses[2].op.name.startswith("dense/ActivityRegularizer/")
    kernel, bias = tf.global_variables()
    assert kernel.constraint is clip and bias.constraint is None
    frozen = tf.layers.dense(x, 2, trainable=False)
    assert frozen is not None
    assert _names(tf.trainable_variables()) == ["dense/kernel:0", "dense/bias:0"]
    assert len(tf.global_variables()) == 4
    sess.run(tf.global_variables_initializer())
    k, yv, (lk, lb, la) = sess.run([kernel, y, losses])
    np.testing.assert_allclose(lk, np.sum(k ** 2), rtol=1e-6)
    np.testing.assert_allclose(lb, 2.0)
    np.testing.assert_allclose(la, np.sum(yv) / 2, rtol=1e-5)  # divided by the batch size
    # reuse adds no second regularization loss
    tf.layers.dense(x, 2, name="dense", reuse=True, kernel_regularizer=l2)
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 3


def test_default_initializers(sess):
    x = tf.placeholder(tf.float32, [None, 50])
    tf.layers.dense(x, 40)
    sess.run(tf.global_variables_initializer())
    kernel, bias = sess.run(tf.global_variables())
    limit = np.sqrt(6.0 / (50 + 40))  # glorot_uniform
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.8 * limit
    assert kernel.dtype == np.float32 and not bias.any()


# --- Dense values --------------------------------------------------------------------------
def test_dense_values_rank3_and_float64(sess):
    x0 = np.random.randn(2, 3, 4)
    x = tf.constant(x0)
    layer = tf.layers.Dense(5, activation=tf.nn.relu)
    y = layer(x)
    assert y.dtype == tf.float64 and y.shape.as_list() == [2, 3, 5]
    assert layer.kernel.dtype.base_dtype == tf.float64
    sess.run(tf.global_variables_initializer())
    k, b, yv = sess.run([layer.kernel, layer.bias, y])
    np.testing.assert_allclose(yv, np.maximum(x0 @ k + b, 0), rtol=1e-12)


def test_dense_errors(graph):
    with pytest.raises(ValueError, match="last dimension of the inputs to a Dense layer"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 3)
    with pytest.raises(ValueError, match="min_ndim=2"):
        tf.layers.dense(tf.placeholder(tf.float32, [3]), 3)
    with pytest.raises(TypeError, match="not understood"):
        tf.layers.Dense(3, bogus=1)
    with pytest.raises(ValueError, match=r"Received an invalid value for `units`, expected a "
                       r"positive integer. Received: units=-2"):
        tf.layers.Dense(-2)
    assert tf.layers.dense(tf.ones([2, 3]), 0).shape.as_list() == [2, 0]  # TF allows 0


def test_input_spec_messages_are_tfs(graph):
    """TF 2.15's wording: the layer name quoted, shapes as tuples."""
    layer = tf.layers.Dense(2)
    layer(tf.ones([2, 3]))
    with pytest.raises(ValueError, match=r'^Input 0 of layer "dense_1" is incompatible with '
                       r"the layer: expected axis -1 of input shape to have value 3, but "
                       r"received input with shape \(2, 4\)$"):
        layer(tf.ones([2, 4]))
    with pytest.raises(ValueError, match=r"expected min_ndim=2, found ndim=1. Full shape "
                       r"received: \(2,\)$"):
        tf.layers.dense(tf.ones([2]), 2)
    with pytest.raises(ValueError, match=r"Full input shape received: \(2, None\)$"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 2)

    class Typed(tf.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = tf.layers.InputSpec(dtype="float32", shape=(None, 5))
    with pytest.raises(ValueError, match=r"expected dtype=float32, found "
                       r"dtype=<dtype: 'int32'>$"):
        Typed()(tf.constant([[1, 2]]))
    with pytest.raises(ValueError, match=r"expected shape=\(None, 5\), found "
                       r"shape=\(4, 6\)$"):
        Typed()(tf.ones([4, 6]))

    class Pair(tf.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = [tf.layers.InputSpec(ndim=2), tf.layers.InputSpec(ndim=1)]
    with pytest.raises(ValueError, match=r'^Input 1 of layer "pair_1" is incompatible'):
        Pair()([tf.ones([4, 6]), tf.ones([4, 6])])


def test_dense_gradients(graph):
    x0 = np.random.randn(3, 4)
    x = tf.constant(x0)
    y = tf.layers.dense(x, 2, activation=tf.tanh)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        kernel = tf.global_variables()[0]
        assert compute_gradient_error(x, [3, 4], y, [3, 2], x_init_value=x0) < 1e-6
        gk = tf.gradients(tf.reduce_sum(y), kernel)[0]
        k, gkv = s.run([kernel, gk])
        expected = x0.T @ (1 - np.tanh(x0 @ k) ** 2)
        np.testing.assert_allclose(gkv, expected, rtol=1e-10)


# --- Dropout -------------------------------------------------------------------------------
def test_dropout_training_and_inference(sess):
    x0 = np.ones([200, 50], np.float32)
    x = tf.constant(x0)
    assert tf.layers.dropout(x, 0.3).op.type == "Identity"  # training=False by default
    np.testing.assert_array_equal(sess.run(tf.layers.dropout(x, 0.3)), x0)
    y = sess.run(tf.layers.dropout(x, 0.3, training=True, seed=1))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert abs(kept.mean() - 0.7) < 0.02
    flag = tf.placeholder(tf.bool, [])
    z = tf.layers.dropout(x, 0.5, training=flag)
    assert z.shape.as_list() == [200, 50]
    np.testing.assert_array_equal(sess.run(z, {flag: False}), x0)
    assert (sess.run(z, {flag: True}) == 0).mean() > 0.4
    ns = sess.run(tf.layers.Dropout(0.5, noise_shape=[200, 1], seed=2)(x, training=True))
    assert all(len(set(row)) == 1 for row in ns)  # one mask value per row
    # as TF's smart_cond: a tensor known at build time counts by its value, whatever its
    # dtype; a non-bool one known only at run time cannot make a cond
    assert tf.layers.dropout(x, training=tf.constant(0.0)).op.type == "Identity"
    assert tf.layers.dropout(x, training=tf.constant(1.0)).op.type != "Identity"
    with pytest.raises(TypeError, match="training"):
        tf.layers.dropout(x, training=tf.placeholder(tf.float32, []))


def test_dropout_rate_checks_and_rate_zero(sess):
    x = tf.constant([[1.0, 2.0]])
    # TF's: rate 0 is an identity even in training
    y = tf.layers.dropout(x, 0.0, training=True)
    assert y.op.type == "Identity" and y.op.name == "dropout/Identity"
    np.testing.assert_array_equal(sess.run(y), [[1.0, 2.0]])
    for rate in (-0.1, 1.5):
        with pytest.raises(ValueError, match="Invalid value %s received for `rate`, expected "
                           "a value between 0 and 1." % rate):
            tf.layers.Dropout(rate)


# --- Flatten -------------------------------------------------------------------------------
def test_flatten(sess):
    x0 = np.arange(24.0).reshape(2, 3, 4)
    assert tf.layers.flatten(x0).shape.as_list() == [2, 12]
    np.testing.assert_array_equal(sess.run(tf.layers.flatten(x0)), x0.reshape(2, 12))
    p = tf.placeholder(tf.float64, [None, 3, 4])
    y = tf.layers.flatten(p)
    assert y.shape.as_list() == [None, 12]
    np.testing.assert_array_equal(sess.run(y, {p: x0}), x0.reshape(2, 12))
    cf = tf.layers.flatten(x0, data_format="channels_first")
    np.testing.assert_array_equal(sess.run(cf), x0.transpose(0, 2, 1).reshape(2, 12))
    assert sess.run(tf.layers.flatten(np.arange(3.0))).shape == (3, 1)
    with pytest.raises(ValueError, match="data_format"):
        tf.layers.Flatten(data_format="NHWC")


def test_input_spec_and_custom_layer(sess):
    class Scale(tf.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", shape=[tf.dimension_value(input_shape[-1])],
                                     initializer=tf.constant_initializer(2.0))
            self.input_spec = tf.layers.InputSpec(ndim=2)
            self.built = True

        def call(self, inputs):
            return inputs * self.w

    layer = Scale()
    y = layer(tf.constant([[1.0, 2.0]]))
    assert layer.name == "scale_1" and _names(layer.weights) == ["scale/w:0"]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y), [[2.0, 4.0]])
    with pytest.raises(ValueError, match="expected ndim=2"):
        layer(tf.constant([1.0, 2.0]))
    assert "ndim=2" in repr(layer.input_spec)
    with pytest.raises(TypeError, match="Unknown keyword argument"):
        layer.add_weight("v", [1], bogus=True)
    with pytest.raises(ValueError, match="ON_READ only for non-trainable"):
        layer.add_weight("v", [1], trainable=True,
                         synchronization=tf.VariableSynchronization.ON_READ)


def test_kernels_take_the_variable_scope_initializer(sess):
    # TF1's layers pass no initializer of their own for kernels: get_variable's default
    # applies, the scope's initializer (the DCGAN pattern), else glorot_uniform; biases
    # keep their zeros
    with tf.variable_scope("cnn", initializer=tf.constant_initializer(0.05)):
        tf.layers.conv2d(tf.ones([1, 4, 4, 2]), 2, 3)
        tf.layers.dense(tf.ones([1, 2]), 2)
        tf.layers.separable_conv2d(tf.ones([1, 4, 4, 2]), 2, 3)
    wide = tf.layers.dense(tf.ones([1, 300]), 300, name="wide")
    sess.run(tf.global_variables_initializer())
    values = {v.op.name: sess.run(v) for v in tf.global_variables()}
    for name in ("cnn/conv2d/kernel", "cnn/dense/kernel",
                 "cnn/separable_conv2d/depthwise_kernel",
                 "cnn/separable_conv2d/pointwise_kernel"):
        assert np.all(values[name] == np.float32(0.05)), name
    assert np.all(values["cnn/dense/bias"] == 0)
    # glorot_uniform: U(-l, l), l = sqrt(6 / (fan_in + fan_out))
    kernel = values["wide/kernel"]
    limit = np.sqrt(6.0 / 600)
    # (float32 draws reach float32(limit), which is above the float64 limit 0.1)
    assert np.abs(kernel).max() <= np.float32(limit) and \
        abs(kernel.std() - limit / np.sqrt(3)) < 0.002
    assert wide.shape.as_list() == [1, 300]


def test_flatten_of_unknown_rank(sess):
    x = tf.placeholder(tf.float32, None)
    y = tf.layers.flatten(x)
    assert y.shape.as_list() == [None, None]
    np.testing.assert_array_equal(sess.run(y, {x: np.arange(12.).reshape(2, 3, 2)}),
                                  np.arange(12.).reshape(2, 6))


def test_dense_takes_its_dtype_from_the_input_and_refuses_integers(graph):
    with pytest.raises(TypeError, match=r"A Dense layer can only be built with a "
                       r"floating-point dtype. Received: dtype=<dtype: 'int32'>"):
        tf.layers.dense(tf.ones([1, 2], tf.int32), 1)
    with pytest.raises(TypeError, match="dtype=<dtype: 'bool'>"):
        tf.layers.dense(tf.ones([1, 2], tf.bool), 1)
    assert tf.layers.dense(tf.ones([1, 2], tf.float64), 1).dtype == tf.float64
    # an explicit dtype casts the integer input
    assert tf.layers.Dense(1, dtype=tf.float32)(tf.ones([1, 2], tf.int32)).dtype == tf.float32


def test_layer_weights_api(sess):
    layer = tf.layers.Dense(2, kernel_initializer=tf.ones_initializer())
    with pytest.raises(ValueError, match="isn't built"):
        layer.count_params()
    x = tf.constant([[1., 2., 3.]])
    y = layer(x)
    assert layer.count_params() == 8
    sess.run(tf.global_variables_initializer())
    kernel, bias = layer.get_weights()  # in the default session
    np.testing.assert_array_equal(kernel, np.ones((3, 2)))
    np.testing.assert_array_equal(bias, np.zeros(2))
    layer.set_weights([np.arange(6.).reshape(3, 2), np.array([1., -1.])])
    np.testing.assert_allclose(sess.run(y), [[17., 21.]])
    with pytest.raises(ValueError, match="expecting 2 weights"):
        layer.set_weights([np.ones((3, 2))])
    with pytest.raises(ValueError, match=r"not compatible with provided weight shape"):
        layer.set_weights([np.ones((2, 2)), np.ones(2)])
    with pytest.raises(AttributeError, match="not connected"):
        layer.input
    with pytest.raises(AttributeError, match="never been called"):
        layer.output_shape


def test_add_variable_is_add_weight(graph):
    class Scale(tf.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_variable("w", [int(input_shape[-1])],
                                       initializer=tf.ones_initializer())
            self.built = True

        def call(self, x):
            return x * self.w

    layer = Scale(name="scale")
    layer(tf.ones([1, 3]))
    assert [v.name for v in layer.weights] == ["scale/w:0"] and layer.count_params() == 3


def test_get_config_and_from_config(graph):
    dense = tf.layers.Dense(3, activation=tf.nn.relu, kernel_regularizer=tf.nn.l2_loss,
                            name="d")
    assert dense.get_config() == {
        "name": "d", "trainable": True, "dtype": None, "units": 3, "activation": "relu",
        "use_bias": True, "kernel_initializer": None,
        "bias_initializer": {"class_name": "Zeros", "config": {"dtype": "float32"}},
        "kernel_regularizer": "l2_loss", "bias_regularizer": None,
        "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None}
    with pytest.raises(ValueError, match="Unknown regularizer: 'l2_loss'"):
        tf.layers.Dense.from_config(dense.get_config())
    config = tf.layers.Dense(2, bias_initializer=tf.constant_initializer(0.5)).get_config()
    copy = tf.layers.Dense.from_config(config)
    assert copy.units == 2 and copy.activation is None
    assert copy.get_config() == config
    conv = tf.layers.Conv2D(4, 3, strides=2).get_config()
    assert conv["kernel_size"] == (3, 3) and conv["strides"] == (2, 2)
    assert conv["groups"] == 1 and conv["activation"] == "linear"
    assert conv["padding"] == "valid" and conv["dilation_rate"] == (1, 1)
    assert tf.layers.Conv2D.from_config(conv).get_config() == conv
    transpose = tf.layers.Conv2DTranspose(2, 3).get_config()
    assert transpose["output_padding"] is None
    assert tf.layers.Conv2DTranspose.from_config(transpose).get_config() == transpose
    bn = tf.layers.BatchNormalization().get_config()
    assert bn["axis"] == -1 and bn["momentum"] == 0.99 and bn["epsilon"] == 1e-3
    assert bn["gamma_initializer"] == {"class_name": "Ones", "config": {"dtype": "float32"}}
    assert tf.layers.BatchNormalization.from_config(bn).get_config() == bn
    assert tf.layers.Dropout(0.3, name="dr").get_config() == {
        "name": "dr", "trainable": True, "dtype": None, "rate": 0.3, "noise_shape": None,
        "seed": None}
    assert tf.layers.Flatten(name="f").get_config() == {
        "name": "f", "trainable": True, "dtype": None, "data_format": "channels_last"}
    assert tf.layers.MaxPooling2D(2, 2, name="p").get_config() == {
        "name": "p", "trainable": True, "dtype": None, "pool_size": (2, 2),
        "padding": "valid", "strides": (2, 2), "data_format": "channels_last"}


def test_losses_list_add_loss_first_then_weight_regularizers(graph):
    class Scale(tf.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", [int(input_shape[-1]), 2],
                                     initializer=tf.ones_initializer(),
                                     regularizer=tf.nn.l2_loss)
            self.built = True

        def call(self, x):
            self.add_loss(tf.reduce_sum(x) * 0.0 + 1.0)
            return tf.matmul(x, self.w)

    layer = Scale(name="scale")
    x = tf.placeholder(tf.float32, [None, 3])
    layer(x)
    layer(x)
    # the regularizer's loss is built anew at each access, outside the layer's scope
    assert [t.name for t in layer.losses] == [
        "scale/add:0", "scale/add_1:0", "w/Regularizer/L2Loss:0"]
    assert [t.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)] == [
        "scale/w/Regularizer/L2Loss:0", "scale/add:0", "scale/add_1:0"]
    dense = tf.layers.Dense(2, kernel_regularizer=tf.nn.l2_loss,
                            activity_regularizer=tf.nn.l2_loss)
    y = tf.constant([[1.], [3.]])
    dense(y)
    assert [t.op.type for t in dense.get_losses_for(None)] == ["L2Loss"]
    assert [t.name for t in dense.get_losses_for(y)] == ["dense/ActivityRegularizer/truediv:0"]


def test_supports_masking_as_tf():
    # TF 2.15's tf.layers (Keras 2's legacy layers): Dense, Dropout and
    # BatchNormalization pass masks on, the convolutions, pooling and Flatten do not
    expected = {tf.layers.Dense(3): True, tf.layers.Dropout(0.5): True,
                tf.layers.BatchNormalization(): True, tf.layers.Flatten(): False,
                tf.layers.Conv2D(2, 3): False, tf.layers.MaxPooling2D(2, 2): False}
    assert {type(layer).__name__: layer.supports_masking for layer in expected} == \
        {type(layer).__name__: want for layer, want in expected.items()}
