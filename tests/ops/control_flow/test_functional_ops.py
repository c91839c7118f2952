"""map_fn, scan, foldl, foldr (while_loop + TensorArray) against NumPy."""
import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def test_exports():
    for name in ("map_fn", "scan", "foldl", "foldr"):
        assert callable(getattr(tf, name))


# --- map_fn -------------------------------------------------------------------------------
def test_map_fn_square(sess):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = tf.map_fn(lambda e: e * e + 1.0, tf.constant(x))
    assert y.shape.as_list() == [4, 3]
    np.testing.assert_allclose(sess.run(y), x * x + 1.0)


def test_map_fn_dtype_differs_and_nested(sess):
    a = np.arange(6, dtype=np.int32).reshape(3, 2)
    b = np.linspace(0, 1, 3).astype(np.float32)
    out = tf.map_fn(lambda t: (tf.cast(tf.reduce_sum(t[0]), tf.float32) * t[1], t[0] * 2),
                    (tf.constant(a), tf.constant(b)), dtype=(tf.float32, tf.int32))
    assert isinstance(out, tuple) and out[0].dtype == tf.float32 and out[1].dtype == tf.int32
    o0, o1 = sess.run(out)
    np.testing.assert_allclose(o0, a.sum(1) * b, rtol=1e-6)
    np.testing.assert_array_equal(o1, a * 2)
    assert o1.dtype == np.int32


def test_map_fn_dict_elems_unknown_length(sess):
    p = tf.placeholder(tf.float32, [None, 2])
    out = tf.map_fn(lambda d: {"s": d["x"] + d["y"], "p": d["x"] * d["y"]},
                    {"x": p, "y": p * 2.0}, dtype={"s": tf.float32, "p": tf.float32})
    assert out["s"].shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="same set of keys"):
        tf.map_fn(lambda d: {"s": d["x"]}, {"x": p})
    x = np.random.randn(5, 2).astype(np.float32)
    r = sess.run(out, {p: x})
    np.testing.assert_allclose(r["s"], 3 * x, rtol=1e-6)
    np.testing.assert_allclose(r["p"], 2 * x * x, rtol=1e-6)


def test_map_fn_errors(graph):
    with pytest.raises(TypeError, match="fn must be callable"):
        tf.map_fn(1, tf.constant([1.0]))
    with pytest.raises(ValueError, match="elems must be a 1\\+ dimensional Tensor"):
        tf.map_fn(lambda x: x, tf.constant(1.0))
    with pytest.raises(ValueError, match="elements in elems must be 1\\+ dimensional"):
        tf.map_fn(lambda x: x, (tf.constant(1.0), tf.constant(2.0)))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.map_fn(lambda x: (x, x), tf.constant([1.0, 2.0]))


@pytest.mark.parametrize("pi", [1, 10])
def test_map_fn_parallel_iterations_same_result(sess, pi):
    x = np.random.randn(7, 3).astype(np.float32)
    y = tf.map_fn(lambda e: tf.reduce_sum(e * e), tf.constant(x), parallel_iterations=pi)
    np.testing.assert_allclose(sess.run(y), (x * x).sum(1), rtol=1e-5)


# --- scan ---------------------------------------------------------------------------------
def test_scan_cumsum_and_reverse(sess):
    x = np.arange(1, 7, dtype=np.float32)
    c = tf.scan(lambda a, e: a + e, tf.constant(x))
    r = tf.scan(lambda a, e: a + e, tf.constant(x), reverse=True)
    assert c.shape.as_list() == [6]
    cv, rv = sess.run([c, r])
    np.testing.assert_allclose(cv, np.cumsum(x))
    np.testing.assert_allclose(rv, np.cumsum(x[::-1])[::-1])


def test_scan_initializer_and_reverse_initializer(sess):
    x = np.arange(1, 5, dtype=np.float32)
    s = tf.scan(lambda a, e: a * 2.0 + e, tf.constant(x), initializer=tf.constant(1.0))
    r = tf.scan(lambda a, e: a * 2.0 + e, tf.constant(x), initializer=tf.constant(1.0),
                reverse=True)
    ref, a = [], 1.0
    for e in x:
        a = a * 2 + e
        ref.append(a)
    rref, a = [], 1.0
    for e in x[::-1]:
        a = a * 2 + e
        rref.append(a)
    sv, rv = sess.run([s, r])
    np.testing.assert_allclose(sv, ref)
    np.testing.assert_allclose(rv, rref[::-1])


def test_scan_multiple_elems_nested_outputs(sess):
    Acc = collections.namedtuple("Acc", ["total", "count"])
    a = np.random.randn(5, 2).astype(np.float32)
    b = np.arange(5, dtype=np.int32)
    out = tf.scan(lambda acc, e: Acc(acc.total + e[0], acc.count + e[1]),
                  (tf.constant(a), tf.constant(b)),
                  initializer=Acc(tf.zeros([2]), tf.constant(0)))
    assert isinstance(out, Acc)
    assert out.total.shape.as_list() == [5, 2]
    t, c = sess.run([out.total, out.count])
    np.testing.assert_allclose(t, np.cumsum(a, 0), rtol=1e-5)
    np.testing.assert_array_equal(c, np.cumsum(b))


def test_scan_without_initializer_nested_elems(sess):
    a = np.arange(4, dtype=np.float32)
    out = tf.scan(lambda acc, e: [acc[0] + e[0], acc[1] * e[1]],
                  [tf.constant(a), tf.constant(a + 1)])
    s, p = sess.run(out)
    np.testing.assert_allclose(s, np.cumsum(a))
    np.testing.assert_allclose(p, np.cumprod(a + 1))


def test_scan_errors(graph):
    with pytest.raises(TypeError, match="fn must be callable"):
        tf.scan(None, tf.constant([1.0]))
    with pytest.raises(ValueError, match="rank"):
        tf.scan(lambda a, e: a + e, tf.constant(1.0))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.scan(lambda a, e: (a, e), tf.constant([1.0, 2.0]), initializer=tf.constant(0.0))


@pytest.mark.parametrize("pi", [1, 10])
def test_scan_parallel_iterations_same_result(sess, pi):
    x = np.random.randn(9).astype(np.float32)
    y = tf.scan(lambda a, e: a * 0.5 + e, tf.constant(x), parallel_iterations=pi)
    ref, a = [], None
    for e in x:
        a = e if a is None else a * 0.5 + e
        ref.append(a)
    np.testing.assert_allclose(sess.run(y), ref, rtol=1e-5)


# --- foldl / foldr ------------------------------------------------------------------------
def test_foldl_foldr(sess):
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    fl = tf.foldl(lambda a, e: a * 2.0 - e, tf.constant(x))
    fr = tf.foldr(lambda a, e: a * 2.0 - e, tf.constant(x))
    fli = tf.foldl(lambda a, e: a * 2.0 - e, tf.constant(x), initializer=tf.constant(10.0))
    fri = tf.foldr(lambda a, e: a * 2.0 - e, tf.constant(x), initializer=tf.constant(10.0))

    def ref(seq, a=None):
        for e in seq:
            a = e if a is None else a * 2 - e
        return a
    got = sess.run([fl, fr, fli, fri])
    np.testing.assert_allclose(got, [ref(x), ref(x[::-1]), ref(x, 10.0), ref(x[::-1], 10.0)])


def test_fold_nested(sess):
    a = np.arange(1, 5, dtype=np.float32)
    b = np.arange(4, dtype=np.int32)
    out = tf.foldl(lambda acc, e: (acc[0] + e[0], acc[1] + e[1]),
                   (tf.constant(a), tf.constant(b)),
                   initializer=(tf.constant(0.0), tf.constant(100)))
    s, t = sess.run(out)
    assert s == a.sum() and t == 100 + b.sum()
    fr = tf.foldr(lambda acc, e: acc * e, tf.constant(a), parallel_iterations=1)
    assert sess.run(fr) == np.prod(a)


def test_fold_errors(graph):
    with pytest.raises(TypeError, match="fn must be callable"):
        tf.foldl("x", tf.constant([1.0]))
    with pytest.raises(ValueError, match="rank"):
        tf.foldr(lambda a, e: a, tf.constant(1.0))


# --- gradients (need the while_loop gradient) ---------------------------------------------
def test_map_fn_gradient(graph):
    x = tf.placeholder(tf.float64, [4, 2])
    y = tf.map_fn(lambda e: tf.sin(e) * e, x)
    assert compute_gradient_error(x, [4, 2], y, [4, 2]) < 1e-6


def test_scan_gradient(graph):
    x = tf.placeholder(tf.float64, [5])
    y = tf.scan(lambda a, e: a * e + e, x)
    assert compute_gradient_error(x, [5], y, [5], x_init_value=np.linspace(0.5, 1.5, 5)) \
        < 1e-6


def test_scan_reverse_gradient_with_initializer(graph):
    x = tf.placeholder(tf.float64, [4, 2])
    y = tf.scan(lambda a, e: tf.tanh(a + e), x, initializer=tf.zeros([2], tf.float64),
                reverse=True)
    assert compute_gradient_error(x, [4, 2], y, [4, 2]) < 1e-6


def test_foldl_gradient(graph):
    x = tf.placeholder(tf.float64, [4])
    y = tf.foldl(lambda a, e: a * e + 1.0, x, initializer=tf.constant(0.5, tf.float64))
    assert compute_gradient_error(x, [4], y, [], x_init_value=np.linspace(0.5, 1.5, 4)) \
        < 1e-6


def test_foldr_gradient(graph):
    x = tf.placeholder(tf.float64, [4])
    y = tf.foldr(lambda a, e: a * e + e, x)
    assert compute_gradient_error(x, [4], y, [], x_init_value=np.linspace(0.5, 1.5, 4)) \
        < 1e-6
