"""Initializers: values, statistics, fans, argument checks."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.state import init_ops


def _run(sess, init, shape, dtype=None):
    return sess.run(init(shape, dtype=dtype) if dtype is not None else init(shape))


def test_exported_names():
    assert tf.zeros_initializer is tf.initializers.zeros is init_ops.Zeros
    assert tf.ones_initializer is tf.initializers.ones
    assert tf.constant_initializer is tf.initializers.constant
    assert tf.random_uniform_initializer is tf.initializers.random_uniform
    assert tf.random_normal_initializer is tf.initializers.random_normal
    assert tf.truncated_normal_initializer is tf.initializers.truncated_normal
    assert tf.glorot_uniform_initializer is tf.initializers.glorot_uniform
    assert tf.glorot_normal_initializer is tf.initializers.glorot_normal
    assert tf.variance_scaling_initializer is tf.initializers.variance_scaling
    assert tf.uniform_unit_scaling_initializer is tf.initializers.uniform_unit_scaling
    assert tf.orthogonal_initializer is tf.initializers.orthogonal
    for name in ("he_normal", "he_uniform", "lecun_normal", "lecun_uniform", "identity"):
        assert callable(getattr(tf.initializers, name))


def test_zeros_ones(graph, sess):
    z = _run(sess, tf.zeros_initializer(), [2, 3])
    assert z.dtype == np.float32 and z.shape == (2, 3) and not z.any()
    o = _run(sess, tf.ones_initializer(dtype=tf.int64), [4])
    assert o.dtype == np.int64 and o.tolist() == [1, 1, 1, 1]
    o16 = _run(sess, tf.ones_initializer(), [2], dtype=tf.float16)
    assert o16.dtype == np.float16
    assert tf.zeros_initializer().get_config() == {"dtype": "float32"}
    # TF's keys: no verify_shape
    assert tf.constant_initializer(3.0).get_config() == {"value": 3.0, "dtype": "float32"}


def test_constant(graph, sess):
    c = _run(sess, tf.constant_initializer(7), [2, 2])
    assert c.tolist() == [[7, 7], [7, 7]] and c.dtype == np.float32
    c = _run(sess, tf.constant_initializer([1, 2, 3, 4, 5, 6]), [2, 3])
    assert c.tolist() == [[1, 2, 3], [4, 5, 6]]
    # TF1: a short list is padded with its last value
    c = _run(sess, tf.constant_initializer([1, 2, 3]), [2, 3])
    assert c.tolist() == [[1, 2, 3], [3, 3, 3]]
    c = _run(sess, tf.constant_initializer(np.array([[1, 2]])), [1, 2], dtype=tf.int32)
    assert c.dtype == np.int32 and c.tolist() == [[1, 2]]
    with pytest.raises(ValueError, match="Too many elements"):
        tf.constant_initializer([1, 2, 3])([2])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant_initializer([1, 2, 3], verify_shape=True)([2, 3])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        tf.constant_initializer({"a": 1})


def test_random_uniform(graph, sess):
    x = _run(sess, tf.random_uniform_initializer(-2.0, 3.0, seed=1), [20000])
    assert x.dtype == np.float32 and x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.05
    assert abs(x.std() - 5.0 / math.sqrt(12)) < 0.05
    d = _run(sess, tf.random_uniform_initializer(seed=1), [1000], dtype=tf.float64)
    assert d.dtype == np.float64 and d.min() >= 0.0 and d.max() < 1.0
    i = _run(sess, tf.random_uniform_initializer(0, 5, dtype=tf.int32, seed=2), [1000])
    assert i.dtype == np.int32 and set(np.unique(i).tolist()) <= {0, 1, 2, 3, 4}


def test_random_normal_and_truncated(graph, sess):
    x = _run(sess, tf.random_normal_initializer(1.0, 2.0, seed=3), [40000])
    assert abs(x.mean() - 1.0) < 0.05 and abs(x.std() - 2.0) < 0.05
    t = _run(sess, tf.truncated_normal_initializer(0.5, 0.1, seed=4), [40000])
    assert t.min() >= 0.3 - 1e-6 and t.max() <= 0.7 + 1e-6
    assert abs(t.mean() - 0.5) < 0.01
    # stddev of a normal truncated at 2 sigma
    assert abs(t.std() - 0.1 * 0.87962566) < 0.005
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal_initializer(dtype=tf.int32)
    with pytest.raises(ValueError, match="floating point"):
        tf.truncated_normal_initializer()([2], dtype=tf.int32)


def test_seeded_initializers_repeat(graph, sess):
    a = sess.run(tf.random_normal_initializer(seed=7)([5]))
    b = sess.run(tf.random_normal_initializer(seed=7)([5]))
    np.testing.assert_array_equal(a, b)


def test_compute_fans():
    fans = init_ops._compute_fans
    assert fans([]) == (1, 1)
    assert fans([5]) == (5, 5)
    assert fans([3, 7]) == (3, 7)
    assert fans([2, 3, 4, 5]) == (24, 30)  # 3x3 conv-like: receptive field 6


def test_glorot_uniform_limits(graph, sess):
    shape = [200, 300]
    x = _run(sess, tf.glorot_uniform_initializer(seed=1), shape)
    limit = math.sqrt(6.0 / (200 + 300))
    assert x.min() >= -limit and x.max() <= limit
    assert x.max() > 0.95 * limit and x.min() < -0.95 * limit
    assert abs(x.var() - limit ** 2 / 3) < 0.03 * limit ** 2
    conv = _run(sess, tf.glorot_uniform_initializer(seed=2), [3, 3, 16, 32])
    climit = math.sqrt(6.0 / (9 * 16 + 9 * 32))
    assert conv.max() <= climit and conv.max() > 0.9 * climit


def test_variance_scaling_family_takes_dtype_none_as_float32(graph):
    # TF's glorot/variance-scaling initializers read dtype=None as their default
    for init in (tf.glorot_uniform_initializer(dtype=None),
                 tf.glorot_normal_initializer(dtype=None),
                 tf.variance_scaling_initializer(dtype=None)):
        assert init([2, 2]).dtype == tf.float32


def test_glorot_normal(graph, sess):
    x = _run(sess, tf.glorot_normal_initializer(seed=1), [300, 500])
    std = math.sqrt(2.0 / 800)
    assert abs(x.std() - std) < 0.03 * std
    assert np.abs(x).max() <= 2 * std / 0.87962566103423978 + 1e-6


@pytest.mark.parametrize("mode,n", [("fan_in", 100), ("fan_out", 400), ("fan_avg", 250)])
def test_variance_scaling_modes(graph, sess, mode, n):
    shape = [100, 400]
    u = _run(sess, tf.variance_scaling_initializer(2.0, mode, "uniform", seed=1), shape)
    limit = math.sqrt(3.0 * 2.0 / n)
    assert u.max() <= limit and u.max() > 0.95 * limit
    assert abs(u.var() - 2.0 / n) < 0.05 * 2.0 / n
    t = _run(sess, tf.variance_scaling_initializer(2.0, mode, "truncated_normal", seed=2), shape)
    assert abs(t.var() - 2.0 / n) < 0.05 * 2.0 / n  # the 0.8796 correction
    assert np.abs(t).max() <= 2 * math.sqrt(2.0 / n) / 0.87962566103423978 + 1e-6
    nrm = _run(sess, tf.variance_scaling_initializer(2.0, mode, "normal", seed=2), shape)
    np.testing.assert_array_equal(nrm, t)  # TF1: "normal" is the truncated normal
    un = _run(sess, tf.variance_scaling_initializer(2.0, mode, "untruncated_normal", seed=3),
              shape)
    assert abs(un.var() - 2.0 / n) < 0.05 * 2.0 / n
    assert np.abs(un).max() > 2.5 * math.sqrt(2.0 / n)  # not truncated


def test_variance_scaling_arguments():
    with pytest.raises(ValueError, match="positive"):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match="mode"):
        tf.variance_scaling_initializer(mode="fan_x")
    with pytest.raises(ValueError, match="distribution"):
        tf.variance_scaling_initializer(distribution="cauchy")
    init = tf.variance_scaling_initializer(distribution="UNIFORM")
    assert init.distribution == "uniform"
    assert init.get_config() == {"scale": 1.0, "mode": "fan_in", "distribution": "uniform",
                                 "seed": None, "dtype": "float32"}
    again = tf.variance_scaling_initializer.from_config(init.get_config())
    assert again.mode == "fan_in" and again.dtype == tf.float32


def test_he_lecun(graph, sess):
    shape = [400, 50]
    he = _run(sess, tf.initializers.he_uniform(seed=1), shape)
    assert he.max() <= math.sqrt(6.0 / 400) and he.max() > 0.95 * math.sqrt(6.0 / 400)
    hn = _run(sess, tf.initializers.he_normal(seed=1), shape)
    assert abs(hn.var() - 2.0 / 400) < 0.05 * 2.0 / 400
    lu = _run(sess, tf.initializers.lecun_uniform(seed=1), shape)
    assert lu.max() <= math.sqrt(3.0 / 400)
    ln = _run(sess, tf.initializers.lecun_normal(seed=1), shape)
    assert abs(ln.var() - 1.0 / 400) < 0.05 * 1.0 / 400


def test_uniform_unit_scaling(graph, sess):
    x = _run(sess, tf.uniform_unit_scaling_initializer(factor=2.0, seed=1), [4, 5, 100])
    limit = math.sqrt(3.0 / 20) * 2.0
    assert x.max() <= limit and x.max() > 0.95 * limit


def test_identity_and_orthogonal(graph, sess):
    x = _run(sess, tf.initializers.identity(gain=2.0), [2, 3])
    assert x.tolist() == [[2, 0, 0], [0, 2, 0]]
    with pytest.raises(ValueError, match="2D"):
        tf.initializers.identity()([2, 2, 2])


def test_initializer_as_variable_initial_value(graph, sess):
    v = tf.Variable(tf.constant_initializer([1.0, 2.0])([2]))
    w = tf.get_variable("w", [3], initializer=tf.ones_initializer())
    sess.run(tf.global_variables_initializer())
    assert sess.run(v).tolist() == [1.0, 2.0] and sess.run(w).tolist() == [1.0, 1.0, 1.0]
    assert w.initial_value.op.name.startswith("w/Initializer/")


# TF 2.21's values (compat.v1, graph mode) of get_variable(name, [3, 2], initializer=...)
# with these seeds: the random ops draw TF's own streams (ops/random/philox.py)
_TF_INITIAL_VALUES = {
    "glorot_uniform": (lambda: tf.glorot_uniform_initializer(seed=5),
        [-0.24469774961471558, 0.3586111068725586, -0.6749897599220276,
         0.4514387845993042, 1.0147840976715088, -0.3805944323539734]),
    "glorot_normal": (lambda: tf.glorot_normal_initializer(seed=6),
        [0.47275611758232117, 0.48229703307151794, 0.2645586133003235,
         0.2125082165002823, 0.7929878234863281, -0.6612980365753174]),
    "he_normal": (lambda: tf.initializers.he_normal(seed=7),
        [-0.04357648268342018, -1.1175005435943604, 1.0830936431884766,
         1.0866072177886963, 0.6651952266693115, 0.5301443338394165]),
    "lecun_uniform": (lambda: tf.initializers.lecun_uniform(seed=8),
        [0.5630178451538086, 0.7495503425598145, 0.6651911735534668,
         -0.3419826030731201, -0.26437854766845703, -0.5062947273254395]),
    "variance_scaling_fan_avg_uniform": (
        lambda: tf.variance_scaling_initializer(2.0, "fan_avg", "uniform", seed=9),
        [-0.13971984386444092, -0.5763700604438782, -1.4055894613265991,
         -0.0889136791229248, -1.173284888267517, 0.6572306156158447]),
    "truncated_normal": (lambda: tf.truncated_normal_initializer(0.5, 0.1, seed=10),
        [0.66368567943573, 0.600188136100769, 0.6257539987564087,
         0.5450119376182556, 0.5027710795402527, 0.411935955286026]),
    "random_normal": (lambda: tf.random_normal_initializer(1.0, 2.0, seed=11),
        [3.8078856468200684, -2.379255771636963, 0.5773190259933472,
         3.3003158569335938, 4.024887561798096, 1.8568925857543945]),
    "random_uniform": (lambda: tf.random_uniform_initializer(-3, 3, seed=12),
        [0.8169150352478027, 2.544548988342285, 1.057663917541504,
         0.012750864028930664, 2.766897201538086, 2.3140335083007812]),
    "orthogonal": (lambda: tf.orthogonal_initializer(seed=13),
        [0.4796895980834961, -0.6774966716766357, 0.5407829880714417,
         0.728699803352356, 0.6909786462783813, -0.09997449815273285]),
}


@pytest.mark.parametrize("name", sorted(_TF_INITIAL_VALUES))
def test_seeded_initializers_give_tensorflows_values(graph, sess, name):
    make, want = _TF_INITIAL_VALUES[name]
    v = tf.get_variable(name, [3, 2], initializer=make())
    sess.run(v.initializer)
    got = sess.run(v).ravel()
    if name == "orthogonal":  # a QR factorization: TF's LAPACK and NumPy's round apart
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_graph_seed_alone_gives_tensorflows_values(graph, sess):
    """Only tf.set_random_seed: the op seeds TF 2.x derives (a count per graph) and so
    its values, for default initializers, dropout, draws and shuffles (TF 2.21's)."""
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.get_variable("w", [4, 3])  # glorot_uniform
    b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
    y = tf.nn.dropout(tf.matmul(x, w) + b, keep_prob=0.5)
    v = tf.get_variable("v", [3, 2], initializer=tf.truncated_normal_initializer())
    r = tf.random_uniform([2])
    s = tf.random_shuffle(tf.range(6))
    sess.run(tf.global_variables_initializer())
    want_w = [0.5790013074874878, -0.780328094959259, 0.7252606153488159,
              -0.6124204993247986, -0.808956503868103, 0.08389914035797119,
              0.006909608840942383, 0.7866178750991821, 0.31395256519317627,
              0.7927229404449463, -0.6991933584213257, 0.6540447473526001]
    want_v = [-1.0467792749404907, 0.8397045731544495, 1.235836386680603,
              0.3037427067756653, 0.38869091868400574, 1.236704707145691]
    np.testing.assert_array_equal(sess.run(w).ravel(), np.array(want_w, np.float32))
    np.testing.assert_array_equal(sess.run(v).ravel(), np.array(want_v, np.float32))
    np.testing.assert_array_equal(sess.run(r), np.array([0.7787855863571167,
                                                         0.8011977672576904], np.float32))
    assert sess.run(s).tolist() == [2, 4, 3, 5, 0, 1]
    np.testing.assert_array_equal(
        sess.run(y, {x: np.ones([2, 4])}).ravel(),
        np.array([0.0, 0.0, 0.0, 0.0, -3.003720283508301, 3.554314136505127], np.float32))
