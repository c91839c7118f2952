"""tf.keras initializers, regularizers, constraints and activations: the classes TF's v1
Keras maps each name to, `get`/`serialize`/`deserialize`, and values against NumPy."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
I = tf.keras.initializers  # noqa: E741
R = tf.keras.regularizers
C = tf.keras.constraints
A = tf.keras.activations


def test_initializer_names_are_tf1_initializers():
    assert I.glorot_uniform is tf.glorot_uniform_initializer
    assert I.Zeros is I.zeros is tf.zeros_initializer
    assert I.Ones is tf.ones_initializer and I.Constant is tf.constant_initializer
    assert I.VarianceScaling is tf.variance_scaling_initializer
    assert I.normal is I.random_normal is I.RandomNormal
    assert I.uniform is I.random_uniform is I.RandomUniform
    assert vars(I.RandomNormal()) == {"mean": 0.0, "stddev": 0.05, "seed": None,
                                      "dtype": tf.float32}
    assert vars(I.RandomUniform())["minval"] == -0.05 and vars(I.RandomUniform())["maxval"] == 0.05
    assert vars(I.TruncatedNormal())["stddev"] == 0.05
    assert vars(I.he_normal()) == {"scale": 2.0, "mode": "fan_in",
                                   "distribution": "truncated_normal", "seed": None,
                                   "dtype": tf.float32}
    assert vars(I.lecun_uniform())["distribution"] == "uniform"
    assert isinstance(I.get("he_normal"), I.he_normal)
    assert isinstance(I.get("Zeros"), tf.zeros_initializer)
    assert isinstance(I.get("uniform"), I.RandomUniform)
    assert I.get(None) is None and isinstance(I.get(I.Ones), I.Ones)
    assert I.get({"class_name": "RandomNormal", "config": {"stddev": 2.0}}).stddev == 2.0
    with pytest.raises(ValueError, match="Unknown initializer: 'bogus'. Please ensure you are "
                                         "using a `keras.utils.custom_object_scope`"):
        I.get("bogus")
    with pytest.raises(ValueError, match="Could not interpret initializer identifier: 3"):
        I.get(3)
    assert I.serialize(I.glorot_uniform()) == {"class_name": "GlorotUniform",
                                               "config": {"seed": None, "dtype": "float32"}}
    assert I.serialize(I.he_normal(seed=3)) == {"class_name": "HeNormal",
                                                "config": {"seed": 3}}
    assert I.serialize(I.random_normal(stddev=3)) == {
        "class_name": "RandomNormal",
        "config": {"mean": 0.0, "stddev": 3, "seed": None, "dtype": "float32"}}
    assert isinstance(I.deserialize(I.serialize(I.he_uniform(seed=1))), I.he_uniform)


def test_initializer_values(sess):
    he = sess.run(I.he_normal(seed=1)((400, 300)))
    assert abs(he.std() - np.sqrt(2.0 / 400)) < 0.003 and np.abs(he).max() <= 2 * np.sqrt(
        2.0 / 400) / 0.8796 + 1e-6
    lecun = sess.run(I.lecun_uniform(seed=2)((300, 10)))
    assert np.abs(lecun).max() <= np.sqrt(3.0 / 300)
    np.testing.assert_array_equal(sess.run(I.identity(gain=2.0)((2, 3))), 2 * np.eye(2, 3))
    np.testing.assert_array_equal(sess.run(I.constant(3)((2,))), [3.0, 3.0])


def test_regularizers(sess):
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    assert [type(R.get(s)).__name__ for s in ("l1", "l2", "l1_l2", "L1", "L2", "L1L2")] == [
        "L1", "L2", "L1L2", "L1", "L2", "L1L2"]
    assert R.get("l1_l2").get_config() == {"l1": pytest.approx(0.01), "l2": pytest.approx(0.01)}
    assert R.get("L1L2").get_config() == {"l1": 0.0, "l2": 0.0}
    assert R.l2(0.1).get_config() == {"l2": 0.10000000149011612}  # stored as floatx, as TF
    assert R.serialize(R.L1L2(l1=0.1)) == {"class_name": "L1L2",
                                           "config": {"l1": 0.10000000149011612, "l2": 0.0}}
    assert R.get({"class_name": "L2", "config": {"l2": 0.5}}).get_config() == {"l2": 0.5}
    assert R.l1 is R.L1 and R.l2 is R.L2
    with pytest.raises(ValueError, match="Unknown regularizer: 'foo'"):
        R.get("foo")
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier: 3"):
        R.get(3)
    with pytest.raises(ValueError, match="Value a is not a valid regularization penalty "
                                         "number, expected an int or float value."):
        R.l2("a")
    with pytest.raises(ValueError, match="an infinite number or NaN are not valid values"):
        R.l1(float("nan"))
    got = sess.run([R.l1_l2(0.1, 0.2)(x), R.l2(0.3)(x), R.l1(0.3)(x), R.L1L2()(x)])
    np.testing.assert_allclose(got, [7.0, 9.0, 3.0, 0.0], rtol=1e-6)


def test_constraints(sess):
    w = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    x = tf.constant(w)
    assert type(C.get("max_norm")).__name__ == "MaxNorm"
    assert C.get("max_norm").get_config() == {"max_value": 2, "axis": 0}
    assert C.get("min_max_norm").get_config() == {"min_value": 0.0, "max_value": 1.0,
                                                  "rate": 1.0, "axis": 0}
    assert C.get(None) is None and C.serialize(C.max_norm(3)) == {
        "class_name": "MaxNorm", "config": {"max_value": 3, "axis": 0}}
    got = sess.run([C.max_norm(2.0)(x), C.non_neg()(x), C.unit_norm()(x),
                    C.min_max_norm(0.5, 1.0, rate=0.5)(x)])
    norms = np.sqrt((w ** 2).sum(0, keepdims=True))
    eps = 1e-7
    np.testing.assert_allclose(got[0], w * (np.clip(norms, 0, 2) / (eps + norms)), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.maximum(w, 0))
    np.testing.assert_allclose(got[2], w / (eps + norms), rtol=1e-6)
    desired = 0.5 * np.clip(norms, 0.5, 1.0) + 0.5 * norms
    np.testing.assert_allclose(got[3], w * desired / (eps + norms), rtol=1e-6)


def test_activations(sess):
    v = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    x = tf.constant(v)
    for name in ("relu", "sigmoid", "tanh", "softmax", "elu", "selu", "softplus", "softsign",
                 "linear", "exponential", "hard_sigmoid", "swish"):
        assert A.get(name) is getattr(A, name)
    assert A.get(None) is A.linear and A.linear(x) is x
    assert A.serialize(A.relu) == "relu" and A.serialize(tf.nn.relu) == "relu"
    assert A.get(tf.nn.relu) is tf.nn.relu
    with pytest.raises(ValueError, match="Unknown activation function: 'nope'"):
        A.get("nope")
    with pytest.raises(TypeError, match="Could not interpret activation function identifier: 3"):
        A.get(3)
    with pytest.raises(ValueError, match="Cannot apply softmax to a tensor that is 1D"):
        A.softmax(tf.constant([1.0, 2.0]))
    got = sess.run([A.relu(x, alpha=0.1, max_value=2.0, threshold=0.5), A.softmax(x),
                    A.elu(x, 0.5), A.selu(x), A.hard_sigmoid(x), A.softplus(x), A.softsign(x),
                    A.exponential(x), A.swish(x), A.relu(x, max_value=6),
                    A.softmax(tf.constant(v[None]), axis=1)])
    relu = np.where(v > 0.5, np.minimum(v, 2.0), 0.0) - 0.1 * np.maximum(0.5 - v, 0)
    e = np.exp(v)
    sig = 1 / (1 + np.exp(-v))
    selu = 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * (np.exp(v) - 1))
    expected = [relu, e / e.sum(1, keepdims=True), np.where(v > 0, v, 0.5 * (np.exp(v) - 1)),
                selu, np.clip(0.2 * v + 0.5, 0, 1), np.log1p(np.exp(v)), v / (1 + np.abs(v)),
                e, v * sig, np.clip(v, 0, 6), (e / e.sum(0, keepdims=True))[None]]
    for g, want in zip(got, expected):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
