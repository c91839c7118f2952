"""Random ops: TF1 seed rules, per-session generator state, distributions, shapes."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors, registry
from tensorweave.ops.random import random_ops

RANDOM_OP_TYPES = ["RandomUniform", "RandomUniformInt", "RandomStandardNormal",
                   "TruncatedNormal", "RandomShuffle", "Multinomial"]


# --- seeds ---------------------------------------------------------------------------
def test_get_seed_rules(graph):
    assert tf.get_seed(None) == (None, None)
    assert tf.get_seed(5) == (random_ops.DEFAULT_GRAPH_SEED, 5)
    assert random_ops.DEFAULT_GRAPH_SEED == 87654321
    tf.set_random_seed(1)
    assert graph.seed == 1
    assert tf.get_seed(7) == (1, 7)
    assert tf.get_seed(2 ** 40) == (1, 512)  # reduced modulo 2**31 - 1


def test_derived_op_seeds_count_the_ops_that_take_them(graph):
    # TF 2's compat.v1 rule (recorded from TF 2.21): the n-th op seed derived from the
    # graph seed is n, whatever other ops the graph holds
    tf.set_random_seed(11)
    assert tf.get_seed(None) == (11, 0)
    tf.constant(1.0)
    tf.constant(2.0)
    assert tf.get_seed(3) == (11, 3)  # an explicit op seed takes no number
    assert tf.get_seed(None) == (11, 1)
    tf.set_random_seed(12)  # a new graph seed does not restart the count
    assert [tf.random_uniform([2]).op.get_attr("seed2") for _ in range(2)] == [2, 3]
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        assert tf.get_seed(None) == (11, 0)  # counted per graph


def test_derived_op_seeds_ignore_unrelated_ops():
    def draw(extra_ops):
        with tf.Graph().as_default():
            tf.set_random_seed(5)
            for _ in range(extra_ops):
                tf.constant(0.0)
            x = tf.random_normal([4])
            with tf.Session() as sess:
                return sess.run(x)
    assert np.array_equal(draw(0), draw(3))


def test_get_seed_zero_pair_is_not_nondeterministic(graph):
    tf.set_random_seed(0)
    assert tf.get_seed(0) == (0, 2 ** 31 - 1)
    assert tf.get_seed(None) == (0, 2 ** 31 - 1)  # the first derived op seed is 0
    assert tf.get_seed(None) == (0, 1)


def test_seed_exports():
    assert tf.random.get_seed is tf.get_seed
    assert tf.random.set_random_seed is tf.set_random_seed
    assert tf.random.uniform is tf.random_uniform
    assert tf.random.normal is tf.random_normal
    assert tf.random.truncated_normal is tf.truncated_normal
    assert tf.random.shuffle is tf.random_shuffle
    assert tf.random.multinomial is tf.multinomial
    assert callable(tf.random.categorical)
    assert not hasattr(tf, "categorical")


def test_seed_attrs(graph):
    a = tf.random_uniform([2])
    assert (a.op.get_attr("seed"), a.op.get_attr("seed2")) == (0, 0)
    b = tf.random_uniform([2], seed=5)
    assert (b.op.get_attr("seed"), b.op.get_attr("seed2")) == (87654321, 5)


def _program(graph_seed=None, op_seed=None):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        outs = [tf.random_uniform([3, 4], seed=op_seed), tf.random_normal([5], seed=op_seed),
                tf.truncated_normal([5], seed=op_seed),
                tf.random_uniform([6], 0, 100, dtype=tf.int32, seed=op_seed),
                tf.random_shuffle(np.arange(8), seed=op_seed),
                tf.multinomial([[0.0, 1.0, 2.0]], 6, seed=op_seed)]
        with tf.Session(graph=g) as sess:
            first = sess.run(outs)
            second = sess.run(outs)
    return first, second


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("graph_seed,op_seed", [(42, None), (None, 7), (3, 9)])
def test_same_seeds_same_values_in_fresh_graph_and_session(graph_seed, op_seed):
    run1 = _program(graph_seed, op_seed)
    run2 = _program(graph_seed, op_seed)
    assert _same(run1[0], run2[0]) and _same(run1[1], run2[1])
    # successive runs continue the sequence
    assert not np.array_equal(run1[0][0], run1[1][0])
    assert not np.array_equal(run1[0][1], run1[1][1])


def test_different_graph_seeds_differ():
    assert not np.array_equal(_program(1)[0][0], _program(2)[0][0])


def test_no_seed_differs_across_sessions(graph):
    a = tf.random_uniform([20])
    with tf.Session() as s1:
        v1 = s1.run(a)
    with tf.Session() as s2:
        v2 = s2.run(a)
    assert not np.array_equal(v1, v2)


def test_seeded_op_restarts_in_new_session(graph):
    a = tf.random_normal([10], seed=11)
    with tf.Session() as s1:
        v1 = s1.run(a)
    with tf.Session() as s2:
        v2 = s2.run(a)
    np.testing.assert_array_equal(v1, v2)


def test_different_op_seeds_differ(graph):
    tf.set_random_seed(5)
    a = tf.random_uniform([10])
    b = tf.random_uniform([10])  # derived op seeds differ (last op id)
    c = tf.random_uniform([10], seed=1)
    d = tf.random_uniform([10], seed=2)
    with tf.Session() as sess:
        va, vb, vc, vd = sess.run([a, b, c, d])
    assert not np.array_equal(va, vb)
    assert not np.array_equal(vc, vd)


def test_same_seeds_across_processes():
    code = ("import tensorweave as tf\n"
            "tf.set_random_seed(123)\n"
            "x = tf.random_normal([4], seed=4)\n"
            "print(repr(tf.Session().run(x).tolist()))\n")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert outs[0] == outs[1] and outs[0].startswith("[")


def test_concurrent_runs_draw_disjoint_values(graph):
    a = tf.random_uniform([64], seed=3)
    with tf.Session() as sess:
        expected = {sess.run(a).tobytes() for _ in range(40)}
    got = []
    with tf.Session() as sess:
        def work():
            for _ in range(10):
                got.append(sess.run(a).tobytes())
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(got) == 40 and set(got) == expected


def test_random_ops_are_stateful_and_not_differentiable():
    for t in RANDOM_OP_TYPES:
        assert registry.get_op_def(t).stateful, t
        assert registry.get_gradient(t) == (True, None), t


def test_gradient_flows_to_mean_and_stddev(graph):
    mean = tf.constant(1.5)
    std = tf.constant(2.0)
    z = tf.random_normal([50], mean=mean, stddev=std, seed=1)
    gm, gs = tf.gradients(tf.reduce_sum(z), [mean, std])
    with tf.Session() as sess:
        zv, gmv, gsv = sess.run([z, gm, gs])
    assert gmv == pytest.approx(50.0)
    assert gsv == pytest.approx(np.sum((zv - 1.5) / 2.0), rel=1e-4)


# --- distributions ---------------------------------------------------------------------
def test_uniform_float_distribution(sess):
    a = tf.random_uniform([20000], seed=1)
    b = tf.random_uniform([20000], minval=-2.0, maxval=6.0, seed=2)
    c = tf.random_uniform([20000], maxval=4.0, dtype=tf.float64, seed=3)
    va, vb, vc = sess.run([a, b, c])
    assert va.dtype == np.float32 and vb.dtype == np.float32 and vc.dtype == np.float64
    assert va.min() >= 0 and va.max() < 1 and abs(va.mean() - 0.5) < 0.01
    assert abs(va.std() - np.sqrt(1 / 12)) < 0.01
    assert vb.min() >= -2 and vb.max() < 6 and abs(vb.mean() - 2.0) < 0.08
    assert vc.min() >= 0 and vc.max() < 4 and abs(vc.mean() - 2.0) < 0.05


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16])
def test_uniform_low_precision_stays_below_one(sess, dtype):
    v = sess.run(tf.random_uniform([5000], dtype=dtype, seed=4))
    assert v.dtype == dtype.as_numpy_dtype
    f = v.astype(np.float32)
    assert f.min() >= 0 and f.max() < 1 and abs(f.mean() - 0.5) < 0.03


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_uniform_int_range(sess, dtype):
    v = sess.run(tf.random_uniform([5000], minval=-3, maxval=4, dtype=dtype, seed=5))
    assert v.dtype == dtype.as_numpy_dtype
    assert set(np.unique(v).tolist()) == set(range(-3, 4))


def test_normal_distribution(sess):
    a = tf.random_normal([40000], mean=3.0, stddev=2.0, seed=6)
    b = tf.random_normal([20000], dtype=tf.float64, seed=7)
    va, vb = sess.run([a, b])
    assert va.dtype == np.float32 and vb.dtype == np.float64
    assert abs(va.mean() - 3.0) < 0.05 and abs(va.std() - 2.0) < 0.05
    assert abs(vb.mean()) < 0.05 and abs(vb.std() - 1.0) < 0.03


def test_truncated_normal_within_two_stddev(sess):
    v = sess.run(tf.truncated_normal([40000], mean=1.0, stddev=0.5, seed=8))
    assert v.min() >= 0.0 and v.max() <= 2.0
    assert abs(v.mean() - 1.0) < 0.01
    # std of a standard normal truncated to [-2, 2] is about 0.8796
    assert abs(v.std() - 0.5 * 0.8796) < 0.01


def test_unseeded_float_draws_have_the_distributions_and_continue(sess):
    # no seeds at all: NumPy's generator draws them (random_ops' docstring); the same
    # distributions and checks as the seeded draws above, a new stream per session and
    # new values per run
    ops = [tf.random_uniform([40000]), tf.random_uniform([20000], -2.0, 6.0, tf.float64),
           tf.random_normal([40000], mean=3.0, stddev=2.0),
           tf.truncated_normal([40000], mean=1.0, stddev=0.5),
           tf.truncated_normal([20000], dtype=tf.float64),
           tf.random_uniform([500], dtype=tf.float16)]
    u, u64, n, t, t64, h = first = sess.run(ops)
    assert [v.dtype for v in first] == [np.float32, np.float64, np.float32, np.float32,
                                        np.float64, np.float16]
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    assert abs(u.std() - np.sqrt(1 / 12)) < 0.01
    assert u64.min() >= -2 and u64.max() < 6 and abs(u64.mean() - 2.0) < 0.08
    assert abs(n.mean() - 3.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    assert t.min() > 0.0 and t.max() < 2.0 and abs(t.mean() - 1.0) < 0.01
    assert abs(t.std() - 0.5 * 0.8796) < 0.01
    assert np.abs(t64).max() < 2 and abs(t64.std() - 0.8796) < 0.015
    assert h.min() >= 0 and h.max() < 1
    again = sess.run(ops)
    assert not any(np.array_equal(a, b) for a, b in zip(first, again))
    with tf.Session() as other:
        assert not np.array_equal(other.run(ops[0]), u)


def test_half_normal_dtype(sess):
    v = sess.run(tf.truncated_normal([100], dtype=tf.float16, seed=9))
    assert v.dtype == np.float16 and np.abs(v).max() <= 2


def test_shuffle_is_permutation_of_rows(sess):
    x = np.arange(30).reshape(10, 3)
    s = tf.random_shuffle(x, seed=10)
    v1, v2 = sess.run(s), sess.run(s)
    assert sorted(map(tuple, v1)) == sorted(map(tuple, x))
    assert (v1[:, 1] - v1[:, 0] == 1).all()  # rows move as a whole
    assert not np.array_equal(v1, v2) or not np.array_equal(v1, x)
    assert sess.run(tf.random_shuffle(np.array(["a", "b", "c"]), seed=1)).dtype == object
    assert sess.run(tf.random_shuffle(5.0)) == 5.0


def test_multinomial_frequencies(sess):
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    logits = np.log(np.where(p > 0, p, 1e-300))
    logits[1, 1] = -np.inf
    m = tf.multinomial(logits, 20000, seed=11)
    v = sess.run(m)
    assert v.dtype == np.int64 and v.shape == (2, 20000)
    for row in range(2):
        freq = np.bincount(v[row], minlength=3) / 20000
        np.testing.assert_allclose(freq, p[row], atol=0.015)
    assert not (v[1] == 1).any()


def test_categorical_dtype_and_empty(sess):
    c = tf.random.categorical([[1.0, 1.0]], 7, dtype=tf.int32, seed=1)
    v = sess.run(c)
    assert v.dtype == np.int32 and v.shape == (1, 7) and set(v.ravel()) <= {0, 1}
    assert sess.run(tf.multinomial(np.zeros((0, 3), np.float32), 4)).shape == (0, 4)


# --- static shapes, names and errors -----------------------------------------------------
def test_static_shapes(graph):
    assert tf.random_uniform([2, 3]).shape.as_list() == [2, 3]
    assert tf.random_uniform(tf.TensorShape([2, 3])).shape.as_list() == [2, 3]
    assert tf.random_uniform(tf.constant([2, 3], tf.int64)).shape.as_list() == [2, 3]
    assert tf.random_uniform([2, -1]).shape.as_list() == [2, None]
    assert tf.random_normal((4,)).shape.as_list() == [4]
    p = tf.placeholder(tf.int32, [None])
    assert tf.random_uniform(p).shape.ndims is None
    assert tf.truncated_normal(tf.placeholder(tf.int32, [3])).shape.as_list() == [None] * 3
    assert tf.multinomial([[1.0, 2.0]], 5).shape.as_list() == [1, 5]
    logits = tf.placeholder(tf.float32, [None, 4])
    assert tf.multinomial(logits, tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
    assert tf.random_shuffle(logits).shape.as_list() == [None, 4]


def test_names_follow_tf(graph):
    assert tf.random_uniform([2]).name == "random_uniform/RandomUniform:0"
    assert tf.random_uniform([2], maxval=2.0).name == "random_uniform_1/Mul:0"
    assert tf.random_uniform([2], minval=1.0).name == "random_uniform_2:0"
    assert tf.random_uniform([2], 0, 5, dtype=tf.int64).name == "random_uniform_3:0"
    assert tf.random_normal([2]).name == "random_normal:0"
    assert tf.truncated_normal([2]).name == "truncated_normal:0"
    assert tf.random_shuffle([1, 2]).name == "RandomShuffle:0"
    assert tf.multinomial([[1.0]], 2).name == "multinomial/Multinomial:0"
    c = tf.random.categorical([[1.0]], 2)
    assert c.name == "categorical/Multinomial:0"
    # num_samples is converted by the op itself, as in TF
    assert c.op.inputs[1].name == "categorical/Multinomial/num_samples:0"


def test_shape_argument_dtype_is_inferred(graph):
    huge = tf.random_uniform([2 ** 31, 0])
    assert huge.op.inputs[0].dtype == tf.int64 and huge.shape.as_list() == [2 ** 31, 0]
    assert tf.random_uniform([]).op.inputs[0].dtype == tf.int32
    tf.random_normal(np.array([2, 3], np.int64))
    normal = graph.get_operation_by_name("random_normal/RandomStandardNormal")
    assert normal.inputs[0].dtype == tf.int64
    dims = tf.TensorShape([2, 3]).dims
    assert tf.random_uniform(dims).shape.as_list() == [2, 3]
    with pytest.raises(TypeError, match="Value passed to parameter 'shape' has DataType "
                                        "float32 not in list of allowed values: int32, int64"):
        tf.random_uniform([2.0, 3.0])
    with pytest.raises(TypeError, match=r"Failed to convert elements of \(None, 3\) to Tensor"):
        tf.random_uniform([None, 3])


def test_build_errors(graph):
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="Argument `dtype` got invalid value"):
        tf.random_uniform([2], dtype=tf.bool)
    with pytest.raises(TypeError):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.random_uniform([[2]])
    with pytest.raises(ValueError, match="minval must be a scalar"):
        tf.random_uniform([2], minval=[0, 1], maxval=3, dtype=tf.int32)
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.multinomial([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.multinomial([[1.0, 2.0]], [3])
    with pytest.raises(ValueError, match="must be non-negative but is -1"):
        tf.multinomial([[1.0, 2.0]], -1)
    with pytest.raises(TypeError, match="Input 'num_samples' of 'Multinomial' Op has type "
                                        "int64 that does not match expected type of int32"):
        tf.random.categorical([[1.0, 2.0]], tf.constant(3, tf.int64))
    with pytest.raises(ValueError, match=r"Argument `dtype` got invalid value <dtype: "
                                         r"'float32'>. Accepted dtypes are "
                                         r"\(tf.int32, tf.int64\)"):
        tf.random.categorical([[1.0, 2.0]], 3, dtype=tf.float32)


def test_run_errors(sess):
    p = tf.placeholder(tf.int32, [None])
    x = tf.random_uniform(p)
    with pytest.raises(errors.InvalidArgumentError, match="Dimension -1 must be >= 0") as e:
        sess.run(x, {p: [2, -1]})
    assert x.op.name in str(e.value)
    y = tf.random_uniform([2], 5, 3, dtype=tf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="Need minval < maxval, got 5 >= 3"):
        sess.run(y)
    z = tf.multinomial(tf.placeholder_with_default(np.zeros((2, 0), np.float32), [2, None]), 2)
    with pytest.raises(errors.InvalidArgumentError, match="num_classes should be positive"):
        sess.run(z)
