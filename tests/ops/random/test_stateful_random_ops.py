"""tf.random.Generator in graph mode: its state variable moves as TF's does (the state
values below were recorded from TF 2.21), draws continue from run to run and repeat for
equal seeds, the distributions, dtypes, names and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors

G = tf.random.Generator


def _run(sess, fetches):
    sess.run(tf.global_variables_initializer())
    return sess.run(fetches)


def test_exports():
    assert tf.random.experimental.Generator is G
    assert tf.random.experimental.Algorithm is tf.random.Algorithm
    assert [a.value for a in tf.random.Algorithm] == [1, 2, 3]
    assert tf.random.experimental.get_global_generator is tf.random.get_global_generator
    assert tf.random.experimental.set_global_generator is tf.random.set_global_generator
    assert tf.random.experimental.stateless_fold_in is tf.random.fold_in
    assert tf.random.experimental.stateless_split is tf.random.split
    assert tf.random.experimental.create_rng_state is tf.random.create_rng_state


def test_state_variable_and_seeds(graph, sess):
    g = G.from_seed(1)
    assert g.state.name == "random_generator/StateVar:0" and g.algorithm == 1
    assert g.state.shape.as_list() == [3] and g.state.dtype.base_dtype == tf.int64
    assert tf.trainable_variables() == [] and tf.global_variables() == [g.state]
    states = [G.from_seed(2 ** 70 + 3).state, G.from_seed([1, 2]).state,
              G.from_seed(-1).state, G.from_seed(5, alg="threefry").state,
              G.from_state([4, 5, 6], alg="philox").state,
              G.from_key_counter(key=7, counter=[1, 2], alg="philox").state,
              G.from_state([2 ** 64 - 1, 0, 1], alg=1).state]
    assert [s.tolist() for s in _run(sess, states)] == [
        [3, 64, 0], [0, 1, 2], [-1, -1, -1], [5, 0], [4, 5, 6], [1, 2, 7], [-1, 0, 1]]


def test_algorithm_names():
    algs = ["philox", "PHILOX", tf.random.Algorithm.THREEFRY, 1, 2, "auto_select", 3]
    with tf.Graph().as_default():
        assert [G.from_seed(1, alg=a).algorithm for a in algs] == [1, 1, 2, 1, 2, 3, 3]
        for bad in ("foo", 7):
            with pytest.raises(ValueError, match="Argument `alg` got unsupported value"):
                G.from_seed(1, alg=bad)


def test_state_moves_by_256_per_value(graph, sess):
    # recorded from TF 2.21: each draw of n values adds 256 n to the counter
    g = G.from_seed(1)
    x, y = g.normal([3]), g.uniform([2, 2])
    sess.run(tf.global_variables_initializer())
    sess.run(x)
    assert sess.run(g.state).tolist() == [769, 0, 0]
    sess.run(y)
    assert sess.run(g.state).tolist() == [1793, 0, 0]
    s = tf.placeholder(tf.int32, [2])
    z, scalar, empty = g.normal(s), g.normal([]), g.normal([0, 3])
    assert z.shape.as_list() == [None, None]
    assert sess.run(z, {s: [2, 5]}).shape == (2, 5)
    assert sess.run(g.state).tolist() == [1793 + 2560, 0, 0]
    assert sess.run(scalar).shape == () and sess.run(empty).shape == (0, 3)
    assert sess.run(g.state).tolist() == [1793 + 2560 + 256, 0, 0]


def test_skip_carries_into_the_high_counter_word(graph, sess):
    g = G.from_state([-1, 0, 9], alg="philox")
    before = g.skip(1)
    assert before.name == "RngReadAndSkip:0" and before.shape.as_list() == [3]
    assert _run(sess, before).tolist() == [-1, 0, 9]
    assert sess.run(g.state).tolist() == [255, 1, 9]  # TF 2.21's values
    # ThreeFry (TF's CPU kernel leaves it unimplemented): a one-word counter that wraps
    t = G.from_state([-1, 9], alg="threefry")
    skipped = t.skip(2)
    sess.run(t.state.initializer)
    assert sess.run(skipped).tolist() == [-1, 9, 0]
    assert sess.run(t.state).tolist() == [511, 9]


def test_same_seed_same_values_and_runs_continue():
    def draws(seed):
        with tf.Graph().as_default():
            g = G.from_seed(seed)
            x = [g.normal([4]), g.uniform([3], maxval=10, dtype=tf.int64)]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                return sess.run(x), sess.run(x)
    first, second = draws(3)
    again, _ = draws(3)
    other, _ = draws(4)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], second[0])
    assert not np.array_equal(first[0], other[0])


def test_distributions(graph, sess):
    g = G.from_seed(3)
    n = g.normal([20000], 1.0, 2.0)
    u = g.uniform([20000], -1.0, 3.0)
    t = g.truncated_normal([20000])
    i = g.uniform([20000], 3, 7, dtype=tf.int32)
    b = g.binomial([20000], counts=10.0, probs=0.3)
    nv, uv, tv, iv, bv = _run(sess, [n, u, t, i, b])
    assert abs(nv.mean() - 1) < 0.05 and abs(nv.std() - 2) < 0.05
    assert uv.min() >= -1 and uv.max() < 3 and abs(uv.mean() - 1) < 0.05
    # the standard deviation of a normal truncated at 2 sigma
    assert np.abs(tv).max() <= 2 and abs(tv.std() - 0.8796) < 0.02
    assert iv.dtype == np.int32 and set(iv.tolist()) == {3, 4, 5, 6}
    assert bv.dtype == np.int32 and abs(bv.mean() - 3) < 0.05 and abs(bv.var() - 2.1) < 0.1


def test_dtypes_and_names(graph, sess):
    g = G.from_seed(3)
    ts = [g.normal([2], dtype=tf.float64), g.normal([2], dtype=tf.float16),
          g.uniform([2], dtype=tf.bfloat16), g.uniform([2], maxval=5, dtype=tf.int64),
          g.uniform_full_int([2]), g.uniform_full_int([2], dtype=tf.int32),
          g.uniform([2], None, None, dtype=tf.uint32), g.truncated_normal([2], dtype=tf.float64),
          g.binomial([5, 2], counts=[10.0, 20.0], probs=[0.5, 0.1], dtype=tf.int64)]
    assert [t.name for t in ts] == [
        "stateful_normal:0", "stateful_normal_1:0", "stateful_uniform:0",
        "stateful_uniform_1:0", "stateful_uniform_full_int:0", "stateful_uniform_full_int_1:0",
        "stateful_uniform_2:0", "truncated_normal:0", "binomial:0"]
    want = ["float64", "float16", "bfloat16", "int64", "uint64", "int32", "uint32", "float64",
            "int64"]
    assert [t.dtype.name for t in ts] == want
    assert [str(v.dtype) for v in _run(sess, ts)] == want
    assert g.normal([2], name="nn").name == "nn:0"
    assert {op.type for op in graph.get_operations()} >= {
        "RngReadAndSkip", "Bitcast", "StatelessRandomNormalV2", "StatelessRandomUniformV2",
        "StatelessTruncatedNormalV2", "StatelessRandomUniformIntV2",
        "StatelessRandomUniformFullIntV2", "StatefulRandomBinomial"}


def test_build_errors(graph):
    g = G.from_seed(3)
    with pytest.raises(ValueError, match="minval and maxval must be both `None` or both "
                                         "non-`None`; got minval=0 and maxval=None"):
        g.uniform([2], 0, None, dtype=tf.int32)
    with pytest.raises(ValueError, match="minval must be a scalar; got a tensor of shape"):
        g.uniform([2], [0, 1], 4, dtype=tf.int32)
    with pytest.raises(TypeError, match="not in list of allowed values: int32, int64, "
                                        "uint32, uint64"):
        g.uniform_full_int([2], dtype=tf.float32)
    with pytest.raises(TypeError):
        g.normal([2], dtype=tf.int32)
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \[3\] are incompatible"):
        G.from_state([4, 5], alg="philox")
    with pytest.raises(ValueError, match=r"Shapes \(3,\) and \[2\] are incompatible"):
        G.from_key_counter(key=7, counter=[1, 2, 3], alg="philox")
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \[3\] are incompatible"):
        g.reset([7, 8])


def test_run_errors(graph, sess):
    g = G.from_seed(4)
    x = g.normal([2])
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized"):
        sess.run(x)
    bad = g.uniform([2], 4, 4, dtype=tf.int32)
    sess.run(tf.global_variables_initializer())
    with pytest.raises(errors.InvalidArgumentError, match="Need minval < maxval, got 4 >= 4"):
        sess.run(bad)


def test_key_reset_and_copies(graph, sess):
    g = G.from_seed(3)
    x = g.normal([2])
    resets = [g.reset([7, 8, 9]), g.reset_from_seed(11), g.reset_from_key_counter(5, [1, 2])]
    copy = G(copy_from=g)
    assert copy.algorithm == 1 and copy.state.name == "random_generator_1/StateVar:0"
    v = tf.Variable(np.array([1, 2, 3], np.int64))
    assert G(state=v, alg=1).state is v
    assert _run(sess, g.key) == 0 and sess.run(copy.state).tolist() == [3, 0, 0]
    sess.run(x)
    states = []
    for op in resets:
        sess.run(op)
        states.append(sess.run(g.state).tolist())
    assert states == [[7, 8, 9], [11, 0, 0], [1, 2, 5]]


def test_make_seeds_and_split(graph, sess):
    g = G.from_seed(3)
    seeds = g.make_seeds(4)
    assert seeds.shape.as_list() == [2, 4] and seeds.dtype == tf.int64
    assert g.make_seeds().shape.as_list() == [2, 1]
    value = _run(sess, seeds)
    assert value[1].tolist() == [0] * 4 and len(set(value[0].tolist())) == 4
    assert sess.run(g.state).tolist() == [1027, 0, 0]  # TF 2.21's value: 4 draws
    children = g.split(3)
    draws = [c.normal([2]) for c in children]
    assert [c.state.name for c in children] == [
        "random_generator_%d/StateVar:0" % i for i in (1, 2, 3)]
    sess.run(tf.global_variables_initializer())
    values = sess.run(draws)
    states = sess.run([c.state for c in children])
    assert [s[:2].tolist() for s in states] == [[512, 0]] * 3  # fresh counters, one draw
    assert len({int(s[2]) for s in states}) == 3  # distinct keys
    assert not np.array_equal(values[0], values[1])


def test_global_generator(graph):
    g = tf.random.get_global_generator()
    assert tf.random.get_global_generator() is g and isinstance(g, G)
    mine = G.from_seed(4)
    tf.random.set_global_generator(mine)
    assert tf.random.get_global_generator() is mine


def test_non_deterministic_state_differs_per_initialization(graph, sess):
    g = G.from_non_deterministic_state()
    sess.run(g.state.initializer)
    first = sess.run(g.state)
    sess.run(g.state.initializer)
    assert first.shape == (3,) and not np.array_equal(first, sess.run(g.state))


def test_draws_in_a_while_loop(graph, sess):
    g = G.from_seed(4)
    _, total = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + g.uniform([])),
                             [0, 0.0])
    assert 0 <= _run(sess, total) < 3
    assert sess.run(g.state).tolist() == [772, 0, 0]  # TF 2.21's value


def test_gradient_flows_to_mean_and_stddev(graph, sess):
    mean = tf.constant([1.0, -1.0, 0.5], tf.float64)
    stddev = tf.constant(2.0, tf.float64)
    g = G.from_seed(4)
    x = g.normal([3], mean=mean, stddev=stddev, dtype=tf.float64)
    # x = z * stddev + mean: d sum(x) / d mean = 1, d sum(x) / d stddev = sum(z)
    d_mean, d_stddev = tf.gradients(tf.reduce_sum(x), [mean, stddev])
    value, dm, ds = _run(sess, [x, d_mean, d_stddev])  # one run: one draw
    np.testing.assert_allclose(dm, np.ones(3))
    np.testing.assert_allclose(ds, np.sum((value - [1.0, -1.0, 0.5]) / 2.0), rtol=1e-12)
