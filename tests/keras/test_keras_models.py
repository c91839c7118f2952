"""tf.keras Model (functional and subclassed) and Sequential in graph mode, against TF
2.15: layer and variable names, layers, weights (order included), calling on new
tensors, raw TF ops between layers, summary, training propagation, updates, and the
saving APIs that raise NotImplementedError (training: test_keras_fit*.py)."""
import json

import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers


def _names(items):
    return [x.name for x in items]


def test_sequential_with_input_shape_is_built_at_once(sess):
    m = K.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(2, activation="softmax")])
    assert m.name == "sequential" and m.built
    assert _names(m.layers) == ["dense", "dense_1"]
    assert _names(m.inputs) == ["dense_input:0"] and _names(m.outputs) == ["dense_1/Softmax:0"]
    assert _names(m.weights) == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0",
                                 "dense_1/bias:0"]
    x = tf.placeholder(tf.float32, [None, 3])
    y = m(x)
    assert y.op.name == "sequential/dense_1/Softmax"
    assert len(tf.global_variables()) == 4  # the call reuses the variables
    assert m.input_shape == (None, 3) and m.output_shape == (None, 2)
    assert m.count_params() == 4 * 3 + 4 + 2 * 4 + 2
    sess.run(tf.global_variables_initializer())
    xv = np.random.rand(5, 3).astype(np.float32)
    k0, b0, k1, b1 = sess.run(m.weights)
    logits = (xv @ k0 + b0) @ k1 + b1
    e = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(sess.run(y, {x: xv}), e / e.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(sess.run(y, {x: xv}), sess.run(m.outputs[0], {m.inputs[0]: xv}),
                               rtol=1e-6)


def test_sequential_without_input_shape_builds_in_its_scope(graph):
    m = K.Sequential()
    m.add(L.Dense(5))
    m.add(L.Dense(1))
    assert not m.built
    with pytest.raises(ValueError, match="Weights for model 'sequential' have not yet been "
                                         "created"):
        m.weights  # noqa: B018
    y = m(tf.placeholder(tf.float32, [None, 3]))
    assert y.op.name == "sequential/dense_1/BiasAdd"
    assert _names(m.weights) == ["sequential/dense/kernel:0", "sequential/dense/bias:0",
                                 "sequential/dense_1/kernel:0", "sequential/dense_1/bias:0"]
    assert _names(m.inputs) == ["Placeholder:0"]
    built = K.Sequential([L.Dense(2)])
    with pytest.raises(ValueError, match="You must provide an `input_shape` argument."):
        built.build()
    built.build((None, 4))  # on a placeholder, outside the model's scope
    assert _names(built.weights) == ["dense_2/kernel:0", "dense_2/bias:0"]


def test_sequential_add_pop_and_errors(graph):
    m = K.Sequential([L.Dense(3, input_shape=(2,)), L.Dense(2), L.Dense(1)])
    m.pop()
    assert _names(m.layers) == ["dense", "dense_1"]
    assert _names(m.outputs) == ["dense_1/BiasAdd:0"] and m.output_shape == (None, 2)
    with pytest.raises(ValueError, match='Name "dense" is already the name of a layer'):
        m.add(L.Dense(2, name="dense"))
    with pytest.raises(TypeError, match="The following are legacy tf.layers.Layers"):
        m.add(tf.layers.Dense(2))
    with pytest.raises(TypeError, match="The added layer must be an instance of class Layer"):
        m.add(3)
    started = K.Sequential([K.Input((4,)), L.Dense(2)])
    # tf.layers' Dense took 'dense_4' from the counter Keras shares (so does TF)
    assert started.built and _names(started.layers) == ["dense_4"]
    assert _names(started.inputs) == ["input_1:0"]
    embedded = K.Sequential([L.Embedding(10, 3)])  # Embedding declares (None,) inputs
    assert embedded.built and _names(embedded.inputs) == ["embedding_input:0"]
    assert embedded.inputs[0].dtype == tf.float32  # floatx, as TF's


def test_functional_model_names_layers_and_replay(sess):
    inp = K.Input(shape=(3,))
    assert inp.name == "input_1:0" and inp.op.type == "Placeholder"
    h = L.Dense(8, activation="relu", name="hid")(inp)
    out = L.Dense(2)(h)
    model = K.Model(inputs=inp, outputs=out)
    assert model.name == "model" and _names(model.layers) == ["input_1", "hid", "dense"]
    assert _names(model.weights) == ["hid/kernel:0", "hid/bias:0", "dense/kernel:0",
                                     "dense/bias:0"]
    assert model.input is inp and model.output is out
    assert model.input_names == ["input_1"] and model.output_names == ["dense"]
    x = tf.placeholder(tf.float32, [None, 3])
    y = model(x)
    assert y.op.name == "model/dense/BiasAdd"
    assert "model/hid/Relu" in [op.name for op in tf.get_default_graph().get_operations()]
    assert model.get_layer("hid").name == "hid" and model.get_layer(index=1).name == "hid"
    with pytest.raises(ValueError, match=r"No such layer: nope. Existing layers are: "
                                         r"\['input_1', 'hid', 'dense'\]."):
        model.get_layer("nope")
    with pytest.raises(ValueError, match="Provide only a layer name or a layer index"):
        model.get_layer("hid", 1)
    with pytest.raises(ValueError, match="Was asked to retrieve layer at index 9"):
        model.get_layer(index=9)
    sess.run(tf.global_variables_initializer())
    xv = np.random.rand(4, 3).astype(np.float32)
    k0, b0, k1, b1 = sess.run(model.weights)
    np.testing.assert_allclose(sess.run(y, {x: xv}),
                               np.maximum(xv @ k0 + b0, 0) @ k1 + b1, rtol=1e-5)


def test_raw_tf_ops_become_op_layers(sess):
    inp = K.Input((5,))
    h = L.Dense(4, kernel_initializer="ones")(inp)
    h = tf.nn.relu(h) * 2.0
    out = L.Dense(1, kernel_initializer="ones")(h)
    model = K.Model(inp, out)
    assert _names(model.layers) == ["input_1", "dense", "tf_op_layer_Relu",
                                    "tf_op_layer_mul", "dense_1"]
    assert [type(x).__name__ for x in model.layers] == [
        "InputLayer", "Dense", "TensorFlowOpLayer", "TensorFlowOpLayer", "Dense"]
    x = tf.placeholder(tf.float32, [None, 5])
    y = model(x)
    sess.run(tf.global_variables_initializer())
    xv = np.random.rand(3, 5).astype(np.float32) - 0.5
    expected = (np.maximum(xv.sum(1, keepdims=True), 0) * 2.0 * 4)
    np.testing.assert_allclose(sess.run(y, {x: xv}), expected, rtol=1e-5)
    softmaxed = K.Model(inp, tf.nn.softmax(out))  # a raw op at the end
    assert _names(softmaxed.layers)[-1] == "tf_op_layer_Softmax"


def test_functional_errors(graph):
    inp = K.Input((3,))
    with pytest.raises(ValueError, match="Input tensors to a Functional model must come from "
                                         "`tf.keras.Input`"):
        K.Model(tf.placeholder(tf.float32, [None, 3]), L.Dense(2)(inp))
    other = K.Input((3,))
    with pytest.raises(ValueError, match="Graph disconnected: cannot obtain value for tensor"):
        K.Model(inp, L.Add()([L.Dense(2)(inp), L.Dense(2)(other)]))
    with pytest.raises(ValueError, match="contains the same input multiple times"):
        K.Model([inp, inp], L.Dense(2)(inp))
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        K.Model(inp, L.Dense(2)(inp), foo=1)
    same_name = L.Dense(2, name="twin")(L.Dense(2, name="twin")(inp))
    with pytest.raises(ValueError, match='The name "twin" is used 2 times in the model'):
        K.Model(inp, same_name)


def test_nested_models_and_multiple_inputs(sess):
    inner_in = K.Input((4,))
    inner = K.Model(inner_in, L.Dense(3, kernel_initializer="ones")(inner_in))
    a, b = K.Input((4,)), K.Input((2,))
    merged = L.concatenate([inner(a), b])
    outer = K.Model([a, b], L.Dense(1, kernel_initializer="ones", name="head")(merged),
                    name="outer")
    assert _names(outer.layers) == ["input_2", "model", "input_3", "concatenate", "head"]
    assert _names(outer.weights) == ["dense/kernel:0", "dense/bias:0", "head/kernel:0",
                                     "head/bias:0"]
    xa, xb = tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.float32, [None, 2])
    y = outer([xa, xb])
    assert y.op.name == "outer/head/BiasAdd"
    sess.run(tf.global_variables_initializer())
    va, vb = np.random.rand(2, 4), np.random.rand(2, 2)
    expected = 3 * va.sum(1, keepdims=True) + vb.sum(1, keepdims=True)
    np.testing.assert_allclose(sess.run(y, {xa: va, xb: vb}), expected, rtol=1e-5)


def test_subclassed_model_tracks_layers(sess):
    class MyModel(K.Model):
        def __init__(self):
            super().__init__()
            self.d1 = L.Dense(4, activation="relu")
            self.blocks = [L.Dense(3), L.Dense(3)]
            self.d2 = L.Dense(2)

        def call(self, x, training=None):
            h = self.d1(x)
            for block in self.blocks:
                h = block(h)
            return self.d2(h)

    m = MyModel()
    assert m.name == "my_model" and not m.built
    x = tf.placeholder(tf.float32, [None, 5])
    y = m(x)
    assert y.op.name == "my_model/dense_3/BiasAdd"
    assert _names(m.layers) == ["dense", "dense_1", "dense_2", "dense_3"]
    assert _names(m.weights)[:2] == ["my_model/dense/kernel:0", "my_model/dense/bias:0"]
    assert len(m.weights) == 8 and m.inputs == [x] and m.outputs == [y]
    assert m(x).op.name == "my_model_1/dense_3/BiasAdd" and len(tf.global_variables()) == 8
    lines = []
    m.summary(print_fn=lines.append)
    assert lines[0] == 'Model: "my_model"'
    assert lines[4].split() == ["dense", "(Dense)", "multiple", "24"]
    assert lines[-4:-1] == ["Total params: 59 (236.00 Byte)", "Trainable params: 59 (236.00 Byte)",
                            "Non-trainable params: 0 (0.00 Byte)"]

    class Net(K.Model):
        def __init__(self):
            super().__init__(name="net")
            self.a = L.Dense(3)

        def call(self, t):
            return self.a(t)

    n = Net()
    n.build((None, 5))  # on a placeholder: names without the model's scope, as TF
    assert _names(n.weights) == ["dense_4/kernel:0", "dense_4/bias:0"] and n.built
    with pytest.raises(NotImplementedError, match=r"Unimplemented `tf.keras.Model.call\(\)`"):
        K.Model()(x)


def test_summary_matches_tf(graph):
    inp = K.Input((3,))
    model = K.Model(inp, L.Dense(2)(L.Dense(8, name="hid")(inp)))
    lines = []
    model.summary(print_fn=lines.append)
    assert lines == [
        'Model: "model"',
        "_" * 65,
        " Layer (type)                Output Shape              Param #   ",
        "=" * 65,
        " input_1 (InputLayer)        [(None, 3)]               0         ",
        " " * 65,
        " hid (Dense)                 (None, 8)                 32        ",
        " " * 65,
        " dense (Dense)               (None, 2)                 18        ",
        " " * 65,
        "=" * 65,
        "Total params: 50 (200.00 Byte)",
        "Trainable params: 50 (200.00 Byte)",
        "Non-trainable params: 0 (0.00 Byte)",
        "_" * 65]
    a, b = K.Input((2,), name="a"), K.Input((2,), name="b")
    branched = K.Model([a, b], L.add([a, b]))
    lines = []
    branched.summary(print_fn=lines.append)
    assert lines[2:4] == [
        " Layer (type)                Output Shape                 Param #   Connected to"
        "                  ", "=" * 98]
    assert lines[8:10] == [
        " add (Add)                   (None, 2)                    0         ['a[0][0]',   "
        "                ",
        "                                                                     'b[0][0]']   "
        "                "]
    with pytest.raises(ValueError, match="This model has not yet been built."):
        K.Sequential([L.Dense(1)]).summary()


def test_training_propagates_and_updates_are_collected(sess):
    inp = K.Input((3,))
    h = L.Dense(4, kernel_initializer="ones")(inp)
    h = L.Dropout(0.5)(h)
    bn = L.BatchNormalization()
    model = K.Model(inp, bn(h))
    assert [u.type for u in model.updates] == ["Merge", "Merge"]  # on the learning phase
    x = tf.placeholder(tf.float32, [None, 3])
    trained = model(x, training=True)
    assert [u.type for u in model.updates][2:] == ["AssignSubVariableOp"] * 2
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    assert model.get_updates_for(None) == []
    assert len(model.get_updates_for(x)) == 2 and len(model.get_updates_for(inp)) == 2
    assert _names(model.weights) == [
        "dense/kernel:0", "dense/bias:0", "batch_normalization/gamma:0",
        "batch_normalization/beta:0", "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0"]
    model.trainable = False
    assert model.trainable_weights == [] and len(model.non_trainable_weights) == 6
    assert model.updates == [] and not bn.trainable
    model.trainable = True
    sess.run(tf.global_variables_initializer())
    xv = np.random.rand(64, 3).astype(np.float32)
    out = sess.run(trained, {x: xv})
    # training=True reached the dropout (zeros) and the batch norm (batch statistics)
    assert (out == out.min(axis=0)).mean() > 0.2
    sess.run(model.updates[2:], {x: xv})
    assert np.all(sess.run(bn.moving_mean) != 0)


def test_unsupported_apis_raise(graph):
    m = K.Sequential([L.Dense(1, input_shape=(2,))])
    with pytest.raises(NotImplementedError, match=r"Model.save\('x', save_format='tf'\): "
                                                  r".*SavedModel"):
        m.save("x", save_format="tf")
    with pytest.raises(AttributeError, match="tf.keras.optimizers.AdamW is not supported.*"
                                             "Adam"):
        K.optimizers.AdamW  # noqa: B018


def test_training_with_a_tf_train_optimizer(sess):
    model = K.Sequential([L.Dense(8, activation="relu", input_shape=(4,),
                                  kernel_constraint="non_neg", kernel_regularizer="l2"),
                          L.BatchNormalization(), L.Dense(3, activation="softmax")])
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.int32, [None])
    probs = model(x, training=True)
    loss = tf.reduce_mean(K.losses.sparse_categorical_crossentropy(y, probs))
    loss += tf.add_n(model.losses)
    # model.updates also holds the updates built on the model's own input placeholder
    # (as in TF): run those of this call
    with tf.control_dependencies(model.get_updates_for(x)):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, var_list=model.trainable_variables)
    sess.run(tf.global_variables_initializer())
    rng = np.random.RandomState(0)
    xv, yv = rng.rand(32, 4).astype(np.float32), rng.randint(0, 3, 32)
    first = sess.run(loss, {x: xv, y: yv})
    for _ in range(20):
        sess.run(train, {x: xv, y: yv})
    assert sess.run(loss, {x: xv, y: yv}) < first
    assert sess.run(model.layers[0].kernel).min() >= 0  # the constraint ran
    assert np.any(sess.run(model.layers[1].moving_mean) != 0)  # the updates ran


# --- default configs of subclasses (TF 2.15, Keras 2, graph mode) ---------------------------
class _Units(K.Model):
    def __init__(self, units=3, act="relu", **kw):
        super().__init__(**kw)
        self.dense = K.layers.Dense(units, activation=act)

    def call(self, x):
        return self.dense(x)


class _UnitsKwargs(K.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.dense = K.layers.Dense(units)

    def call(self, x):
        return self.dense(x)


class _Wrapping(K.Model):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def call(self, x):
        return self.layer(x)

    def get_config(self):
        config = super().get_config()
        config["extra"] = 1
        return config


def test_subclassed_model_config_is_its_arguments():
    with tf.Graph().as_default():
        # the arguments given, by name; the base keys only with a '**kwargs' parameter
        assert _Units(5, name="zz").get_config() == {"units": 5}
        assert _Units().get_config() == {}
        assert _UnitsKwargs(2, name="q").get_config() == {
            "name": "q", "trainable": True, "dtype": None, "units": 2}
        # an argument that is not a plain value: {}; an override calling it gets {}
        assert _Wrapping(K.layers.Dense(2)).get_config() == {"extra": 1}
        assert json.loads(_Units(5).to_json())["config"] == {"units": 5}
        assert _Units.from_config({"units": 4}).dense.units == 4


def test_layer_with_arguments_must_override_get_config():
    class Scaled(K.layers.Layer):
        def __init__(self, factor=2, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

    class Plain(K.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)

    with tf.Graph().as_default():
        with pytest.raises(NotImplementedError,
                           match=r"^Layers with arguments in `__init__` must override "
                                 r"`get_config`\.$"):
            Scaled().get_config()
        assert Plain(name="p").get_config() == {"name": "p", "trainable": True, "dtype": None}
