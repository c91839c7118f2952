"""tf.vectorized_map: every case of tests/fixtures/tf1/make_vectorized_map_fixture.py
against TensorFlow 2.21 (values, static shapes, dtypes, output structure), against
NumPy per iteration, numeric gradients through the vectorized ops, the while-loop
fallbacks (per op and for a whole fn), and the errors."""
import importlib.util
import json
import logging
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.ops.control_flow import pfor_converters

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1")
_spec = importlib.util.spec_from_file_location(
    "make_vectorized_map_fixture", os.path.join(FIXTURES, "make_vectorized_map_fixture.py"))
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


@pytest.fixture(scope="module")
def results():
    with tf.Graph().as_default():
        return cases.run_cases(tf)


def test_matches_tensorflow(results):
    expected = np.load(os.path.join(FIXTURES, "vectorized_map_expected.npz"))
    assert sorted(results) == sorted(expected.files)
    meta = [json.loads(m) for m in expected["meta"]]
    assert [json.loads(m) for m in results["meta"]] == meta  # shapes, dtypes, nesting
    assert len(meta) > 80
    for key in expected.files:
        if key == "meta":
            continue
        want, got = expected[key], results[key]
        assert got.dtype == want.dtype and got.shape == want.shape, key
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=key)


def test_against_numpy_per_iteration(sess):
    rng = np.random.RandomState(3)
    x = rng.randn(5, 3, 2)
    w = rng.randn(2, 4)

    def per_example(v):
        h = np.tanh(v @ w)
        return (h / h.sum(axis=-1, keepdims=True)).T[::-1], np.abs(v).max()

    def fn(v):
        h = tf.tanh(tf.matmul(v, w))
        return (tf.reverse(tf.transpose(h / tf.reduce_sum(h, axis=-1, keepdims=True)),
                           [0]), tf.reduce_max(tf.abs(v)))
    got = sess.run(tf.vectorized_map(fn, tf.constant(x)))
    for i in range(5):
        want = per_example(x[i])
        np.testing.assert_allclose(got[0][i], want[0], rtol=1e-12)
        assert got[1][i] == want[1]


@pytest.mark.parametrize("fn,shape", [
    (lambda v: tf.reduce_sum(tf.sin(v) * v, axis=0), (4, 3, 2)),
    (lambda v: tf.matmul(v, v, transpose_b=True), (3, 2, 2)),
    (lambda v: tf.nn.softmax(v) * tf.gather(v, [1, 0], axis=1), (3, 2, 2)),
    (lambda v: tf.concat([tf.reshape(v, [-1]), tf.reduce_prod(v, axis=[0])], 0), (3, 2, 2)),
    (lambda v: tf.einsum("ij,jk->ik", v, v), (3, 2, 2)),  # vectorized Einsum
    (lambda v: tf.linalg.det(v + 3.0 * tf.eye(2, dtype=tf.float64)), (3, 2, 2)),
    (lambda v: tf.cond(tf.reduce_sum(v) > 0, lambda: v * v, lambda: -v), (3, 2, 2)),
    (lambda v: tf.math.unsorted_segment_sum(v, [1, 0], 3), (3, 2, 2)),
    (lambda v: tf.roll(v, 1, axis=0) * v, (3, 2, 2)),  # Roll: a while_loop per op
])
def test_numeric_gradient_through_vectorized_map(sess, fn, shape):
    x0 = np.random.RandomState(4).uniform(0.5, 1.5, shape)
    x = tf.placeholder(tf.float64, shape)
    y = tf.vectorized_map(fn, x)
    err = compute_gradient_error(x, list(shape), y, y.shape.as_list(), x_init_value=x0)
    assert err < 1e-6


def test_fallback_runs_the_op_per_iteration_and_warns(sess, caplog):
    x = np.arange(6.0).reshape(3, 2)
    calls = []

    def double(v):
        calls.append(v.shape)
        return v * 2

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        y = tf.vectorized_map(lambda v: tf.py_func(double, [v], tf.float64) + 1.0,
                              tf.constant(x))
    assert "Using a while_loop for converting PyFunc" in caplog.text
    np.testing.assert_array_equal(sess.run(y), x * 2 + 1)
    assert calls == [(2,), (2,), (2,)]  # one call per iteration, on its slice
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        tf.vectorized_map(lambda v: tf.py_func(double, [v], tf.float64), tf.constant(x),
                          warn=False)
    assert "while_loop" not in caplog.text


def test_fallback_disabled_raises(graph):
    x = tf.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match="No pfor vectorization defined for PyFunc"):
        tf.vectorized_map(lambda v: tf.py_func(lambda a: a, [v], tf.float64), x,
                          fallback_to_while_loop=False)
    with pytest.raises(ValueError, match="No pfor vectorization defined for Switch"):
        tf.vectorized_map(lambda v: tf.cond(v[0] > 0, lambda: v, lambda: -v), x,
                          fallback_to_while_loop=False)


def test_control_flow_runs_whole_fn_per_iteration(sess):
    calls = []

    def fn(v):
        calls.append(1)
        return tf.cond(v[0] > 0, lambda: v * 2.0, lambda: v * 0.0), tf.no_op()
    x = np.array([[1.0, 2.0], [-1.0, 5.0]])
    y, op = tf.vectorized_map(fn, tf.constant(x))
    assert len(calls) == 2  # traced once, then called in the loop's body
    assert isinstance(op, tf.Operation) and y.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(sess.run(y), [[2.0, 4.0], [0.0, 0.0]])
    assert sess.run(op) is None


def test_random_ops_draw_per_iteration(sess):
    y = tf.vectorized_map(lambda v: tf.random_uniform([3], seed=1) + v,
                          tf.zeros([4, 3]))
    got = sess.run(y)
    assert got.shape == (4, 3) and len({tuple(r) for r in got}) == 4


def test_variables_stateful_reads_and_assertions(sess, caplog):
    v = tf.get_variable("v", initializer=tf.constant([1.0, 2.0, 3.0]), use_resource=True)
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))

    def fn(row):
        check = tf.debugging.assert_non_negative(row)
        with tf.control_dependencies([check]):
            return row * v.read_value() + tf.gather(v, [0])
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        y = tf.vectorized_map(fn, x)
    assert "while_loop" not in caplog.text  # the assertion and the reads vectorized
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(y), np.arange(6).reshape(2, 3) * [1, 2, 3] + 1)
    bad = tf.vectorized_map(fn, -x - 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(bad)


def test_dynamic_batch_and_broadcast(sess):
    p = tf.placeholder(tf.float32, [None, 2])
    q = tf.placeholder(tf.float32, [None, 2])
    y = tf.vectorized_map(lambda t: t[0] * t[1] + tf.reduce_sum(t[1]), (p, q))
    assert y.shape.as_list() == [None, 2]
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(sess.run(y, {p: a, q: a[:1]}), a * a[:1] + a[0].sum())
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(y, {p: a, q: np.ones((2, 2), np.float32)})  # neither 3 nor 1


def test_outputs_none_operations_and_errors(graph):
    x = tf.constant(np.ones((2, 3)))
    y, nothing = tf.vectorized_map(lambda v: (v, None), x)
    assert nothing is None and y.shape.as_list() == [2, 3]
    with pytest.raises(IndexError):  # as TF: scalar elems have no first dimension
        tf.vectorized_map(lambda v: v, tf.constant(3.0))
    with pytest.raises(ValueError, match="SparseTensor"):
        tf.vectorized_map(lambda v: v, tf.SparseTensor([[0, 0]], [1.0], [2, 2]))
    with pytest.raises(ValueError, match="SparseTensor"):
        tf.vectorized_map(lambda v: tf.SparseTensor([[0]], [1.0], [3]), x)


def test_every_converter_names_a_registered_op():
    from tensorweave.framework import registry
    ops = registry.registered_ops()
    assert sorted(t for t in pfor_converters.CONVERTERS if t not in ops) == []


def test_fallback_loops_under_control_dependencies(sess):
    # while_loops built by the fallbacks wait for the active control dependencies and
    # for fn's own, without ops of the loop's frame waiting on ops outside it
    v = tf.get_variable("v", initializer=0.0, use_resource=True)
    x = tf.constant(np.arange(6.0).reshape(3, 2))

    def per_op(r):
        a = r * 2.0
        with tf.control_dependencies([a]):
            b = tf.py_func(lambda t: t + 1, [r], tf.float64)
        return a + b + tf.roll(r, 1, 0)
    with tf.control_dependencies([v.assign_add(1.0)]):
        y = tf.vectorized_map(per_op, x)
        z = tf.vectorized_map(lambda r: tf.cond(r[0] > 1, lambda: r, lambda: -r), x)
    sess.run(v.initializer)
    got_y, got_z = sess.run([y, z])
    xs = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(got_y, 3 * xs + 1 + xs[:, ::-1])
    np.testing.assert_array_equal(got_z, np.where(xs[:, :1] > 1, xs, -xs))
    assert sess.run(v.read_value()) == 1.0  # the assign ran once, before the loops
