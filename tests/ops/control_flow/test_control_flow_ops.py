"""tf.cond, tf.case, tf.while_loop (control_flow_ops.py), their gradients
(control_flow_grad.py) and the structured executor (runtime/frames.py) against NumPy."""
import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


@pytest.fixture(autouse=True, params=["structured", "tagged"])
def executor(request, monkeypatch):
    """Every test runs on both executors of runtime/ (frames.py's structured one and the
    tagged token-passing one); plan.py picks the tagged one when TW_EXECUTOR=tagged."""
    if request.param == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    return request.param


# --- cond -----------------------------------------------------------------------------------
def test_cond_both_branches(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(3.0)
    y = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    assert y.dtype == tf.float32
    assert y.shape.as_list() == []
    assert sess.run(y, {p: True}) == 6.0
    assert sess.run(y, {p: False}) == 2.0


def test_cond_merged_static_shape(graph):
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.zeros([2, 3]), lambda: tf.ones([2, 4]))
    assert y.shape.as_list() == [2, None]
    z = tf.cond(p, lambda: tf.zeros([2, 3]), lambda: tf.ones([3]))
    assert z.shape.rank is None


def test_cond_nested_structures(sess):
    p = tf.placeholder(tf.bool, [])
    a = tf.constant([1, 2], tf.int32)
    out = tf.cond(p, lambda: (a + 1, {"u": tf.constant(1.5), "v": a * 3}),
                  lambda: (a - 1, {"u": tf.constant(-1.5), "v": a * 0}))
    assert isinstance(out, tuple) and isinstance(out[1], dict)
    r = sess.run(out, {p: True})
    np.testing.assert_array_equal(r[0], [2, 3])
    assert r[1]["u"] == 1.5
    np.testing.assert_array_equal(r[1]["v"], [3, 6])
    r = sess.run(out, {p: False})
    np.testing.assert_array_equal(r[0], [0, 1])
    assert r[1]["u"] == -1.5
    np.testing.assert_array_equal(r[1]["v"], [0, 0])
    assert r[1]["v"].dtype == np.int32


def test_cond_strict(sess):
    p = tf.constant(True)
    loose = tf.cond(p, lambda: [tf.constant(1.0)], lambda: [tf.constant(2.0)])
    assert isinstance(loose, tf.Tensor)
    strict = tf.cond(p, lambda: [tf.constant(1.0)], lambda: [tf.constant(2.0)], strict=True)
    assert isinstance(strict, list) and len(strict) == 1
    assert sess.run(loose) == 1.0
    assert sess.run(strict) == [1.0]


def test_cond_captured_tensors(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [3])
    w = tf.constant([1.0, 2.0, 3.0])
    y = tf.cond(p, lambda: tf.reduce_sum(x * w), lambda: tf.reduce_max(x - w))
    xv = np.array([4.0, -1.0, 2.0], np.float32)
    np.testing.assert_allclose(sess.run(y, {p: True, x: xv}), np.sum(xv * [1, 2, 3]))
    np.testing.assert_allclose(sess.run(y, {p: False, x: xv}), np.max(xv - [1, 2, 3]))


@pytest.mark.parametrize("use_resource", [True, False])
def test_cond_side_effect_only_in_taken_branch(sess, use_resource):
    v = tf.Variable(0.0, use_resource=use_resource)
    p = tf.placeholder(tf.bool, [])

    def t():
        return tf.assign_add(v, 1.0)

    def f():
        return tf.assign_add(v, 10.0)

    if use_resource:
        def t():  # noqa: F811
            with tf.control_dependencies([v.assign_add(1.0)]):
                return tf.identity(v.read_value())

        def f():  # noqa: F811
            with tf.control_dependencies([v.assign_add(10.0)]):
                return tf.identity(v.read_value())
    y = tf.cond(p, t, f)
    sess.run(tf.global_variables_initializer())
    assert sess.run(y, {p: True}) == 1.0
    assert sess.run(v) == 1.0
    assert sess.run(y, {p: True}) == 2.0
    assert sess.run(y, {p: False}) == 12.0
    assert sess.run(v) == 12.0


def test_cond_untaken_branch_fetch_raises(sess):
    p = tf.placeholder(tf.bool, [])
    inner = []

    def t():
        z = tf.constant(2.0) * 3.0
        inner.append(z)
        return z
    y = tf.cond(p, t, lambda: tf.constant(0.0))
    assert sess.run(inner[0], {p: True}) == 6.0
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(inner[0], {p: False})
    assert sess.run(y, {p: False}) == 0.0


def test_cond_nested_in_cond(sess):
    p = tf.placeholder(tf.bool, [])
    q = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(p, lambda: tf.cond(q, lambda: x + 1.0, lambda: x + 2.0),
                lambda: tf.cond(q, lambda: x * 3.0, lambda: x * 4.0))
    for pv, qv, want in ((True, True, 6.0), (True, False, 7.0), (False, True, 15.0),
                         (False, False, 20.0)):
        assert sess.run(y, {p: pv, q: qv, x: 5.0}) == want


def test_cond_pred_not_bool(graph):
    with pytest.raises(TypeError):
        tf.cond(tf.constant(1), lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    with pytest.raises(TypeError):
        tf.cond(tf.constant(True), 1.0, lambda: tf.constant(2.0))


def test_cond_branch_structure_mismatch(graph):
    p = tf.placeholder(tf.bool, [])
    with pytest.raises((ValueError, TypeError)):
        tf.cond(p, lambda: (tf.constant(1.0), tf.constant(2.0)), lambda: tf.constant(1.0))
    with pytest.raises((ValueError, TypeError)):
        tf.cond(p, lambda: {"a": tf.constant(1.0)}, lambda: {"b": tf.constant(1.0)})
    with pytest.raises(ValueError):
        tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(1))


# --- case -----------------------------------------------------------------------------------
def test_case_first_true_wins_and_default(sess):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)),
                 (tf.less(x, 10), lambda: tf.constant(1)),
                 (tf.less(x, 100), lambda: tf.constant(2))],
                default=lambda: tf.constant(99))
    assert sess.run(y, {x: -5}) == -1
    assert sess.run(y, {x: 5}) == 1
    assert sess.run(y, {x: 50}) == 2
    assert sess.run(y, {x: 500}) == 99


def test_case_exclusive(sess):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(tf.greater(x, 0), lambda: tf.constant(1)),
                 (tf.greater(x, 5), lambda: tf.constant(2))],
                default=lambda: tf.constant(0), exclusive=True)
    assert sess.run(y, {x: 3}) == 1
    assert sess.run(y, {x: -3}) == 0
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(y, {x: 7})


def test_case_dict_input(sess):
    x = tf.placeholder(tf.float32, [])
    y = tf.case({tf.less(x, 0.0): lambda: x * -1.0, tf.greater(x, 0.0): lambda: x * 2.0},
                default=lambda: tf.constant(42.0), exclusive=True)
    assert sess.run(y, {x: -3.0}) == 3.0
    assert sess.run(y, {x: 4.0}) == 8.0
    assert sess.run(y, {x: 0.0}) == 42.0


# --- while_loop -----------------------------------------------------------------------------
def test_while_counting(sess):
    i = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    assert isinstance(i, tf.Tensor) and i.dtype == tf.int32
    assert i.shape.as_list() == []
    assert sess.run(i) == 10


def test_while_multiple_vars(sess):
    n = 10
    i, a, b = tf.while_loop(lambda i, a, b: i < n, lambda i, a, b: (i + 1, b, a + b),
                            [tf.constant(0), tf.constant(0, tf.int64), tf.constant(1, tf.int64)])
    ri, ra, rb = sess.run([i, a, b])
    fib = [0, 1]
    for _ in range(n):
        fib.append(fib[-1] + fib[-2])
    assert (ri, ra, rb) == (n, fib[n], fib[n + 1])
    assert ra.dtype == np.int64


Pair = collections.namedtuple("Pair", ["x", "y"])


def test_while_nested_structures(sess):
    lv = (tf.constant(0), {"acc": tf.constant([1.0, 2.0]),
                           "p": Pair(tf.constant(1.0), tf.constant(2, tf.int32))})

    def body(i, d):
        return (i + 1, {"acc": d["acc"] * 2.0,
                        "p": Pair(d["p"].x + 0.5, d["p"].y * d["p"].y)})
    out = tf.while_loop(lambda i, d: i < 3, body, lv)
    assert isinstance(out, tuple) and isinstance(out[1], dict)
    assert isinstance(out[1]["p"], Pair)
    r = sess.run(out)
    assert r[0] == 3
    np.testing.assert_allclose(r[1]["acc"], [8.0, 16.0])
    assert r[1]["p"].x == 2.5 and r[1]["p"].y == 256


def test_while_namedtuple_single(sess):
    out = tf.while_loop(lambda p: p.x < 5, lambda p: Pair(p.x + 1, p.y * 2),
                        Pair(tf.constant(0), tf.constant(1)))
    assert isinstance(out, Pair)
    assert sess.run(out) == Pair(5, 32)


def test_while_python_numbers(sess):
    i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + 0.5), [0, 0.0])
    assert i.dtype == tf.int32 and s.dtype == tf.float32
    assert sess.run([i, s]) == [5, 2.5]


def test_while_shape_invariants(sess):
    def body(i, x):
        return i + 1, tf.concat([x, tf.cast(tf.reshape(i, [1]), tf.float32)], 0)
    lv = [tf.constant(0), tf.constant([9.0])]
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda i, x: i < 4, body, lv)
    i, x = tf.while_loop(lambda i, x: i < 4, body, lv,
                         shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    assert x.shape.as_list() == [None]
    np.testing.assert_array_equal(sess.run(x), [9.0, 0.0, 1.0, 2.0, 3.0])


def test_while_shape_invariant_incompatible_with_initial(graph):
    with pytest.raises(ValueError):
        tf.while_loop(lambda x: tf.reduce_sum(x) < 4.0, lambda x: x + 1.0,
                      [tf.constant([1.0, 2.0])], shape_invariants=[tf.TensorShape([3])])


def test_while_maximum_iterations(sess):
    n = tf.placeholder(tf.int32, [])
    i = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)],
                      maximum_iterations=n)
    assert sess.run(i, {n: 7}) == 7
    assert sess.run(i, {n: 1000}) == 100
    assert sess.run(i, {n: 0}) == 0
    j = tf.while_loop(lambda i: i < 100, lambda i: i + 3, [tf.constant(1)],
                      maximum_iterations=4)
    assert sess.run(j) == 13


def test_while_return_same_structure(sess):
    out = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)],
                        return_same_structure=True)
    assert isinstance(out, list) and len(out) == 1
    assert sess.run(out) == [3]
    out = tf.while_loop(lambda i: i < 3, lambda i: [i + 1], [tf.constant(0)])
    assert isinstance(out, tf.Tensor)


def test_while_body_wrong_structure(graph):
    with pytest.raises(ValueError):
        tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1,), [tf.constant(0), tf.constant(1)])
    with pytest.raises(ValueError):
        tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, j, j),
                      [tf.constant(0), tf.constant(1)])
    with pytest.raises(ValueError):  # dtype change
        tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [tf.constant(0)])


def test_while_bad_args(graph):
    with pytest.raises(TypeError):
        tf.while_loop(1, lambda i: i, [tf.constant(0)])
    with pytest.raises(TypeError):  # cond not returning bool
        tf.while_loop(lambda i: i, lambda i: i + 1, [tf.constant(0.0)])


def test_cond_in_while(sess):
    # collatz steps of 6: 6 3 10 5 16 8 4 2 1 -> 8 steps
    def body(n, k):
        n2 = tf.cond(tf.equal(n % 2, 0), lambda: n // 2, lambda: 3 * n + 1)
        return n2, k + 1
    start = tf.placeholder_with_default(6, [])
    n, k = tf.while_loop(lambda n, k: n > 1, body, [start, tf.constant(0)])
    assert sess.run([n, k]) == [1, 8]
    assert sess.run([n, k], {start: 27}) == [1, 111]


def test_while_in_while(sess):
    # sum_{i<4} sum_{j<i} (i*10 + j)
    def outer_body(i, acc):
        def inner_body(j, a):
            return j + 1, a + i * 10 + j
        _, a = tf.while_loop(lambda j, a: j < i, inner_body, [tf.constant(0), acc])
        return i + 1, a
    _, acc = tf.while_loop(lambda i, a: i < 4, outer_body, [tf.constant(0), tf.constant(0)])
    want = sum(i * 10 + j for i in range(4) for j in range(i))
    assert sess.run(acc) == want


def test_while_in_cond_branch(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [])

    def t():
        return tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x),
                             [tf.constant(0), tf.constant(1.0)])[1]
    y = tf.cond(p, t, lambda: x - 1.0)
    assert sess.run(y, {p: True, x: 2.0}) == 8.0
    assert sess.run(y, {p: False, x: 2.0}) == 1.0


def test_while_parallel_iterations_same_results(sess):
    m = np.random.randn(3, 3).astype(np.float32) * 0.5
    outs = []
    for pi in (1, 10, 32):
        outs.append(tf.while_loop(
            lambda i, x: i < 6,
            lambda i, x: (i + 1, tf.tanh(tf.matmul(x, tf.constant(m))) + 0.1),
            [tf.constant(0), tf.constant(np.eye(3, dtype=np.float32))],
            parallel_iterations=pi)[1])
    ref = np.eye(3, dtype=np.float32)
    for _ in range(6):
        ref = np.tanh(ref @ m) + 0.1
    r = sess.run(outs)
    for v in r:
        np.testing.assert_allclose(v, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(r[0], r[1])
    np.testing.assert_array_equal(r[0], r[2])


def test_while_tensor_array(sess):
    ta = tf.TensorArray(tf.float32, size=5)
    x = tf.constant([1.0, 2.0])

    def body(i, ta):
        return i + 1, ta.write(i, x * tf.cast(i, tf.float32))
    _, ta_out = tf.while_loop(lambda i, ta: i < 5, body, [tf.constant(0), ta])
    assert isinstance(ta_out, tf.TensorArray)
    s = ta_out.stack()
    np.testing.assert_allclose(sess.run(s), np.arange(5)[:, None] * np.array([1.0, 2.0]))


def test_while_inner_tensor_used_outside_raises(graph):
    inner = []

    def body(i):
        t = tf.multiply(i, 2, name="doubled")
        inner.append(t)
        return i + 1
    tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    with pytest.raises(ValueError) as e:
        tf.add(inner[0], 1, name="outside_add")
    msg = str(e.value)
    assert "doubled" in msg and "outside_add" in msg


def test_while_fed_bound(sess):
    n = tf.placeholder(tf.int32, [])
    i, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i),
                         [tf.constant(0), tf.constant(0)])
    for nv in (0, 1, 5, 20):
        assert sess.run([i, s], {n: nv}) == [nv, sum(range(nv))]


# --- gradients ------------------------------------------------------------------------------
def test_grad_cond_both_branches(sess):
    x = tf.placeholder(tf.float64, [3])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.reduce_sum(tf.sin(x) * x), lambda: tf.reduce_sum(x * x * x))
    g = tf.gradients(y, x)[0]
    xv = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(sess.run(g, {x: xv, p: True}), np.cos(xv) * xv + np.sin(xv))
    np.testing.assert_allclose(sess.run(g, {x: xv, p: False}), 3 * xv * xv)
    for pv in (True, False):
        err = compute_gradient_error(x, [3], y, [], x_init_value=xv,
                                     extra_feed_dict={p: pv})
        assert err < 1e-4


def test_grad_cond_untouched_captured(sess):
    x = tf.placeholder(tf.float64, [])
    w = tf.constant(3.0, tf.float64)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * w, lambda: w * w)
    gx, gw = tf.gradients(y, [x, w])
    assert sess.run([gx, gw], {x: 2.0, p: True}) == [3.0, 2.0]
    assert sess.run([gx, gw], {x: 2.0, p: False}) == [0.0, 6.0]


def _np_loop(x0, w, n):
    x = x0
    for _ in range(n):
        x = np.tanh(x @ w)
    return x


def test_grad_while_matmul_tanh(sess):
    x0v = np.random.randn(2, 3) * 0.5
    wv = np.random.randn(3, 3) * 0.5
    x0 = tf.placeholder(tf.float64, [2, 3])
    w = tf.placeholder(tf.float64, [3, 3])
    _, y = tf.while_loop(lambda i, x: i < 4, lambda i, x: (i + 1, tf.tanh(tf.matmul(x, w))),
                         [tf.constant(0), x0])
    loss = tf.reduce_sum(y * y)
    gx, gw = tf.gradients(loss, [x0, w])
    rgx, rgw = sess.run([gx, gw], {x0: x0v, w: wv})
    eps = 1e-6

    def f(a, b):
        return np.sum(_np_loop(a, b, 4) ** 2)
    num_x = np.zeros_like(x0v)
    for idx in np.ndindex(*x0v.shape):
        d = np.zeros_like(x0v)
        d[idx] = eps
        num_x[idx] = (f(x0v + d, wv) - f(x0v - d, wv)) / (2 * eps)
    num_w = np.zeros_like(wv)
    for idx in np.ndindex(*wv.shape):
        d = np.zeros_like(wv)
        d[idx] = eps
        num_w[idx] = (f(x0v, wv + d) - f(x0v, wv - d)) / (2 * eps)
    np.testing.assert_allclose(rgx, num_x, atol=1e-7)
    np.testing.assert_allclose(rgw, num_w, atol=1e-7)
    err = compute_gradient_error([x0, w], [[2, 3], [3, 3]], y, [2, 3],
                                 x_init_value=[x0v, wv])
    assert err < 1e-4


def test_grad_while_fed_iteration_count(sess):
    x = tf.placeholder(tf.float64, [])
    n = tf.placeholder(tf.int32, [])
    _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x + 1.0),
                         [tf.constant(0), tf.constant(1.0, tf.float64)])
    g = tf.gradients(y, x)[0]
    for nv in (0, 1, 3, 5):
        # y = x^n + sum_{k<n} x^k
        xv = 1.5
        want = nv * xv ** (nv - 1) + sum(k * xv ** (k - 1) for k in range(1, nv))
        np.testing.assert_allclose(sess.run(g, {x: xv, n: nv}), want if nv else 0.0)


def test_grad_cond_in_while(sess):
    x = tf.placeholder(tf.float64, [2])

    def body(i, y):
        y2 = tf.cond(tf.equal(i % 2, 0), lambda: tf.sin(y) * 2.0, lambda: y * y)
        return i + 1, y2
    _, y = tf.while_loop(lambda i, y: i < 4, body, [tf.constant(0), x])
    xv = np.array([0.4, -0.7])
    ref = xv.copy()
    for k in range(4):
        ref = np.sin(ref) * 2.0 if k % 2 == 0 else ref * ref
    np.testing.assert_allclose(sess.run(y, {x: xv}), ref)
    err = compute_gradient_error(x, [2], y, [2], x_init_value=xv)
    assert err < 1e-4


def test_grad_while_in_while(sess):
    x = tf.placeholder(tf.float64, [])

    def outer_body(i, y):
        _, y = tf.while_loop(lambda j, z: j < i, lambda j, z: (j + 1, tf.sin(z) + z * 0.5),
                             [tf.constant(0), y])
        return i + 1, y * 1.1
    _, y = tf.while_loop(lambda i, y: i < 3, outer_body, [tf.constant(0), x])

    def f(v):
        for i in range(3):
            for _ in range(i):
                v = np.sin(v) + v * 0.5
            v = v * 1.1
        return v
    np.testing.assert_allclose(sess.run(y, {x: 0.8}), f(0.8))
    g = tf.gradients(y, x)[0]
    eps = 1e-6
    np.testing.assert_allclose(sess.run(g, {x: 0.8}), (f(0.8 + eps) - f(0.8 - eps)) / (2 * eps),
                               rtol=1e-6)


def test_grad_tensor_array_loop(sess):
    x = tf.placeholder(tf.float64, [4, 2])
    ta_in = tf.TensorArray(tf.float64, size=4).unstack(x)

    def body(i, acc, ta):
        v = ta_in.read(i)
        acc = acc * v + v
        return i + 1, acc, ta.write(i, acc)
    _, _, ta = tf.while_loop(lambda i, a, t: i < 4, body,
                             [tf.constant(0), tf.ones([2], tf.float64),
                              tf.TensorArray(tf.float64, size=4)])
    y = ta.stack()
    xv = np.random.randn(4, 2)
    acc = np.ones(2)
    ref = []
    for k in range(4):
        acc = acc * xv[k] + xv[k]
        ref.append(acc)
    np.testing.assert_allclose(sess.run(y, {x: xv}), np.stack(ref))
    err = compute_gradient_error(x, [4, 2], y, [4, 2], x_init_value=xv)
    assert err < 1e-4


def test_grad_scan_map_foldl(sess):
    x = tf.placeholder(tf.float64, [4, 2])
    xv = np.random.randn(4, 2)
    s = tf.scan(lambda a, e: a * tf.cos(e) + e, x)
    m = tf.map_fn(lambda e: tf.reduce_sum(e * e) * e, x)
    f = tf.foldl(lambda a, e: a * e + 1.0, x, initializer=tf.constant([1.0, 2.0], tf.float64))
    acc = xv[0]
    sref = [acc]
    for k in range(1, 4):
        acc = acc * np.cos(xv[k]) + xv[k]
        sref.append(acc)
    fref = np.array([1.0, 2.0])
    for k in range(4):
        fref = fref * xv[k] + 1.0
    rs, rm, rf = sess.run([s, m, f], {x: xv})
    np.testing.assert_allclose(rs, np.stack(sref))
    np.testing.assert_allclose(rm, np.sum(xv * xv, 1, keepdims=True) * xv)
    np.testing.assert_allclose(rf, fref)
    for y, shape in ((s, [4, 2]), (m, [4, 2]), (f, [2])):
        assert compute_gradient_error(x, [4, 2], y, shape, x_init_value=xv) < 1e-4


def test_grad_passthrough_loop_var(sess):
    x = tf.placeholder(tf.float64, [])
    c = tf.placeholder(tf.float64, [])
    _, y, c_out = tf.while_loop(lambda i, y, c: i < 3, lambda i, y, c: (i + 1, y * c, c),
                                [tf.constant(0), x, c])
    loss = y + 2.0 * c_out
    gx, gc = tf.gradients(loss, [x, c])
    # y = x c^3: dx = c^3, dc = 3 x c^2 + 2
    assert np.allclose(sess.run([gx, gc], {x: 2.0, c: 1.5}), [1.5 ** 3, 3 * 2.0 * 1.5 ** 2 + 2])


def test_grad_back_prop_false(graph):
    x = tf.constant(2.0, tf.float64)
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x),
                         [tf.constant(0), x], back_prop=False)
    assert tf.gradients(y, x) == [None]


# --- second order ---------------------------------------------------------------------------
def _central(f, v, eps):
    """Central differences of scalar f at the array v (the gradient, shape of v)."""
    v = np.asarray(v, np.float64)
    out = np.zeros_like(v)
    for i in np.ndindex(v.shape):
        d = np.zeros_like(v)
        d[i] = eps
        out[i] = (f(v + d) - f(v - d)) / (2 * eps)
    return out


def test_second_order_while(sess):
    x = tf.placeholder(tf.float64, [])
    w = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.sin(a * w)), [0, x])
    gx, gw = tf.gradients(y, [x, w])
    hxx, hxw = tf.gradients(gx, [x, w])
    hww = tf.gradients(gw, w)[0]

    def f(xv, wv):
        a = xv
        for _ in range(3):
            a = np.sin(a * wv)
        return a
    xv, wv = 0.9, 1.3
    fx = lambda v: _central(lambda q: f(q, wv), v, 1e-5)  # noqa: E731
    fw = lambda v: _central(lambda q: f(xv, q), v, 1e-5)  # noqa: E731
    want = [fx(xv), fw(wv), _central(fx, xv, 1e-4), _central(lambda q: _central(
        lambda p: f(p, q), xv, 1e-5), wv, 1e-4), _central(fw, wv, 1e-4)]
    got = sess.run([gx, gw, hxx, hxw, hww], {x: xv, w: wv})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_third_order_while(sess):
    # y = x^(3^n); the backward loops of backward loops exchange gradients of their pops
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a * a * a), [0, x])
    g1 = tf.gradients(y, x)[0]
    g2 = tf.gradients(g1, x)[0]
    g3 = tf.gradients(g2, x)[0]
    xv = 0.9
    np.testing.assert_allclose(sess.run([g1, g2, g3], {x: xv}),
                               [9 * xv ** 8, 72 * xv ** 7, 504 * xv ** 6], rtol=1e-10)


def test_second_order_matmul_loop_vector(sess):
    # the Hessian-vector product of a matmul/tanh loop w.r.t. the weights
    rs = np.random.RandomState(3)
    x0, w0, v0 = rs.randn(2, 3), rs.randn(3, 3) * 0.5, rs.randn(3, 3)
    x = tf.constant(x0)
    w = tf.placeholder(tf.float64, [3, 3])
    _, a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.tanh(tf.matmul(a, w))),
                         [0, x])
    gw = tf.gradients(tf.reduce_sum(a * a), w)[0]
    hv = tf.gradients(tf.reduce_sum(gw * v0), w)[0]

    def f(wv):
        a = x0
        for _ in range(3):
            a = np.tanh(a @ wv)
        return (a * a).sum()
    want = _central(lambda q: (_central(f, q, 1e-6) * v0).sum(), w0, 1e-4)
    np.testing.assert_allclose(sess.run(hv, {w: w0}), want, rtol=1e-5, atol=1e-6)


def test_hessians_scan(sess):
    x = tf.placeholder(tf.float64, [3])
    s = tf.scan(lambda a, e: a * e + tf.sin(e), x, initializer=tf.constant(1.0, tf.float64))
    y = tf.reduce_sum(s * s)
    h = tf.hessians(y, x)[0]
    assert h.shape.as_list() == [3, 3]
    xv = np.array([0.3, -0.5, 0.9])

    def f(v):
        a, out = 1.0, 0.0
        for e in v:
            a = a * e + np.sin(e)
            out += a * a
        return out
    want = np.array([_central(lambda q: _central(f, q, 1e-6)[i], xv, 1e-4)
                     for i in range(3)])
    got = sess.run(h, {x: xv})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, got.T, rtol=1e-10)


def test_two_gradient_loops_of_one_loop_in_one_step(sess):
    # each backward loop pops its own stacks: fetching both in one run gives both right
    x = tf.placeholder(tf.float64, [])
    w = tf.constant(0.7, tf.float64)
    _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.sin(a * w)), [0, x])
    gx = tf.gradients(y, x)[0]
    gw = tf.gradients(y, w)[0]
    both = sess.run([gx, gw], {x: 1.5})
    np.testing.assert_allclose(both, [sess.run(gx, {x: 1.5}), sess.run(gw, {x: 1.5})])

    def f(xv, wv):
        a = xv
        for _ in range(3):
            a = np.sin(a * wv)
        return a
    np.testing.assert_allclose(both, [_central(lambda q: f(q, 0.7), 1.5, 1e-6),
                                      _central(lambda q: f(1.5, q), 0.7, 1e-6)], rtol=1e-6)


def test_second_order_cond(sess):
    # the Merge a Switch's gradient builds is itself differentiable
    x = tf.placeholder(tf.float64, [])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x ** 3, lambda: tf.sin(x))
    g1 = tf.gradients(y, x)[0]
    g2 = tf.gradients(g1, x)[0]
    np.testing.assert_allclose(sess.run([g1, g2], {x: 0.5, p: True}), [0.75, 3.0])
    np.testing.assert_allclose(sess.run([g1, g2], {x: 0.5, p: False}),
                               [np.cos(0.5), -np.sin(0.5)])


def test_a_gradient_runs_only_its_own_pushes(sess, monkeypatch):
    # two gradient loops of one forward loop: fetching one does not push the values
    # the other would pop (each has its own counter, pruned with it)
    from tensorweave.ops.data_flow import stack_ops
    pushes = []
    orig = stack_ops.StackResource.push

    def counting(self, op, value, swap):
        pushes.append(op.name)
        return orig(self, op, value, swap)
    monkeypatch.setattr(stack_ops.StackResource, "push", counting)
    x = tf.placeholder(tf.float64, [])
    w = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, tf.sin(a * w)), [0, x])
    gx = tf.gradients(y, x)[0]
    gw = tf.gradients(y, w)[0]
    feed = {x: 0.4, w: 1.1}
    sess.run(gx, feed)
    only_x = len(pushes)
    del pushes[:]
    sess.run([gx, gw], feed)
    assert only_x > 0 and len(pushes) == 2 * only_x


def test_second_order_nested_loops(sess):
    # the inner loop's gradient stacks are made once per outer iteration; their handles
    # travel from the outer backward loop's backward loop to the outer loop's second one
    x = tf.placeholder(tf.float64, [])
    w = tf.placeholder(tf.float64, [])

    def outer(i, a):
        _, b = tf.while_loop(lambda k, b: k < 3, lambda k, b: (k + 1, tf.sin(b * w) + a),
                             [0, a])
        return i + 1, b * 0.9
    _, y = tf.while_loop(lambda i, a: i < 2, outer, [0, x])
    gx, gw = tf.gradients(y, [x, w])
    hxx, hxw = tf.gradients(gx, [x, w])
    hww = tf.gradients(gw, w)[0]

    def f(xv, wv):
        a = xv
        for _ in range(2):
            b = a
            for _ in range(3):
                b = np.sin(b * wv) + a
            a = b * 0.9
        return a
    xv, wv = 0.3, 0.8
    fx = lambda v: _central(lambda q: f(q, wv), v, 1e-6)  # noqa: E731
    fw = lambda v: _central(lambda q: f(xv, q), v, 1e-6)  # noqa: E731
    want = [fx(xv), fw(wv), _central(fx, xv, 1e-4), _central(lambda q: _central(
        lambda p: f(p, q), xv, 1e-6), wv, 1e-4), _central(fw, wv, 1e-4)]
    np.testing.assert_allclose(sess.run([gx, gw, hxx, hxw, hww], {x: xv, w: wv}), want,
                               rtol=1e-6, atol=1e-6)


def test_hessians_map_fn_of_scan(sess):
    e = tf.placeholder(tf.float64, [2, 3])
    rows = tf.map_fn(lambda row: tf.reduce_sum(tf.scan(
        lambda a, v: a * v + tf.sin(v), row, initializer=tf.constant(1.0, tf.float64)) ** 2),
        e)
    h = tf.hessians(tf.reduce_sum(rows), e)[0]

    def f(v):
        total = 0.0
        for row in v:
            a = 1.0
            for q in row:
                a = a * q + np.sin(q)
                total += a * a
        return total
    ev = np.random.RandomState(1).rand(2, 3)
    want = np.zeros((2, 3, 2, 3))
    for i in np.ndindex(ev.shape):
        want[i] = _central(lambda q: _central(f, q, 1e-6)[i], ev, 1e-4)
    np.testing.assert_allclose(sess.run(h, {e: ev}), want, rtol=1e-5, atol=1e-5)


def test_second_order_unsupported_cases_raise(graph):
    x = tf.placeholder(tf.float64, [])

    def middle(j, b):
        _, c = tf.while_loop(lambda k, c: k < 2, lambda k, c: (k + 1, tf.sin(c) * b), [0, b])
        return j + 1, c

    def outer(i, a):
        return i + 1, tf.while_loop(lambda j, b: j < 2, middle, [0, a])[1]
    _, y = tf.while_loop(lambda i, a: i < 2, outer, [0, x])
    g = tf.gradients(y, x)[0]
    with pytest.raises(LookupError, match="nested more than one deep"):
        tf.gradients(g, x)
    _, z = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, tf.cond(
        a > 0, lambda: tf.sin(a), lambda: a * a)), [0, x])
    gz = tf.gradients(z, x)[0]
    with pytest.raises(LookupError, match="tf.cond inside tf.while_loop"):
        tf.gradients(gz, x)


# --- memory: swap_memory (EuroSys §5.3) -----------------------------------------------------
@pytest.mark.parametrize("swap", [False, True])
def test_swap_memory_moves_stacked_values_to_host_and_prefetches(sess, swap):
    n, elem_bytes = 20, 32 * 32 * 8
    rs = np.random.RandomState(4)
    x0, w0 = rs.randn(32, 32) * 0.1, rs.randn(32, 32) * 0.2
    x = tf.constant(x0)
    w = tf.constant(w0)
    _, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, tf.tanh(tf.matmul(a, w))),
                         [0, x], swap_memory=swap)
    gw = tf.gradients(tf.reduce_sum(a), w)[0]
    stacks = [op.outputs[0] for op in tf.get_default_graph().get_operations()
              if op.type == "StackV2"]
    dev = sess._device_manager.default
    sess.run(gw)
    dev.allocator.reset_peak()
    dev.host_allocator.reset_peak()
    got, handles = sess.run([gw, stacks])

    def f(wv):
        v = x0
        for _ in range(n):
            v = np.tanh(v @ wv)
        return v.sum()
    eps = 1e-6
    for i, j in [(0, 0), (3, 7), (31, 30)]:
        d = np.zeros_like(w0)
        d[i, j] = eps
        assert abs(got[i, j] - (f(w0 + d) - f(w0 - d)) / (2 * eps)) < 1e-6
    held = len(stacks) * n * elem_bytes  # every stack holds one 32x32 value per iteration
    assert dev.allocator.bytes_in_use == 0 and dev.host_allocator.bytes_in_use == 0
    if swap:
        # everything waits on the host; a backward iteration finds its value prefetched
        assert dev.host_allocator.peak_bytes == held
        assert dev.allocator.peak_bytes <= 2 * len(stacks) * elem_bytes
        assert all(h.sync_swap_ins == 1 and h.prefetches == n - 1 for h in handles)
    else:
        assert dev.allocator.peak_bytes == held and dev.host_allocator.peak_bytes == 0
