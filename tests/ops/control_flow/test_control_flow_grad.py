"""Gradients through tf.cond and tf.while_loop (control_flow_grad.py) on both executors,
against NumPy and central differences; the GradientCall that carries one gradient
computation's control-flow bookkeeping (autodiff/gradient_call.py), the records gradients
leave on the graph, and two threads building gradients at once."""
import importlib
import sys
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_call import GradientCall
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework import registry
from tensorweave.ops.control_flow import control_flow_grad
from tensorweave.ops.control_flow import control_flow_ops as cf
from tensorweave.ops.data_flow import tensor_array_grad

# the module, not the function tf.gradients that the package exports under that name
gradients_mod = importlib.import_module("tensorweave.autodiff.gradients")

pytestmark = pytest.mark.usefixtures("executor")  # conftest.py: structured and tagged


# --- cond and while_loop gradients (executor fixture: conftest.py) ------------------------
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


def test_gated_grad_cond_on_either_side(sess):
    # gate_gradients tuples the Merge gradient's two Switch outputs; the gate, which
    # waits for the Switch, is live on both sides (TF: 3.0 and 2.0)
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder_with_default(False, [])
    y = tf.cond(p, lambda: x * 2.0, lambda: x * 3.0)
    g = tf.gradients(y, x, gate_gradients=True)[0]
    assert sess.run(g, {x: 1.0}) == 3.0
    assert sess.run(g, {x: 1.0, p: True}) == 2.0


@pytest.mark.parametrize("make", ["Variable", "get_variable"])
def test_grad_cond_of_variable_read_in_branches(sess, make):
    # the branches read the variable through a Switch of its handle (TF: [2.0] / [3.0])
    w = tf.Variable(1.0) if make == "Variable" else tf.get_variable("w", initializer=1.0)
    p = tf.placeholder_with_default(True, [])
    y = tf.cond(p, lambda: w * 2.0, lambda: w * 3.0)
    g = tf.gradients(y, w)
    assert g[0].dtype == tf.float32 and g[0].shape.as_list() == []
    sess.run(tf.global_variables_initializer())
    assert sess.run(g) == [2.0]
    assert sess.run(g, {p: False}) == [3.0]
    # read in one branch only, and through an Identity of the variable (TF: [2.0] / [0.0])
    y1 = tf.cond(p, lambda: w * 2.0, lambda: tf.constant(0.0))
    y2 = tf.cond(p, lambda: tf.identity(w) * 2.0, lambda: tf.identity(w) * 3.0)
    g1, g2 = tf.gradients(y1, w)[0], tf.gradients(y2, w)[0]
    assert sess.run([g1, g2]) == [2.0, 2.0]
    assert sess.run([g1, g2], {p: False}) == [0.0, 3.0]


def test_grad_cond_of_vector_variable_zeros_on_the_side_not_reading_it(sess):
    w = tf.Variable([1.0, -2.0])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.reduce_sum(w * w), lambda: tf.constant(1.0))
    (g,) = tf.gradients(y, w)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(g, {p: True}), [2.0, -4.0])
    np.testing.assert_array_equal(sess.run(g, {p: False}), [0.0, 0.0])


def test_grad_case_and_cond_in_while_of_variable(sess):
    # TF: [[2.0], [4.0], [0.0]] and [10.0]
    w = tf.get_variable("w", initializer=2.0)
    p = tf.placeholder(tf.int32, [])
    y_case = tf.case({tf.equal(p, 0): lambda: w * 2.0, tf.equal(p, 1): lambda: w * w},
                     default=lambda: tf.constant(0.0))
    g_case = tf.gradients(y_case, w)

    def body(i, acc):
        return i + 1, acc + tf.cond(i < 2, lambda: w * 1.0, lambda: w * w)
    r = tf.while_loop(lambda i, acc: i < 4, body, [0, 0.0])
    g_loop = tf.gradients(r[1], w)
    sess.run(tf.global_variables_initializer())
    assert [sess.run(g_case, {p: i}) for i in range(3)] == [[2.0], [4.0], [0.0]]
    assert sess.run(r) == (4, 12.0)
    assert sess.run(g_loop) == [10.0]


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


def test_grad_while_is_none_for_inputs_the_loop_does_not_differentiate(sess):
    z = tf.constant(2.0, tf.float64)
    w = tf.constant(3.0, tf.float64)
    x = tf.constant(1.5, tf.float64)
    # z only in the cond, x also behind a stop_gradient: a1 = x w + c0, a2 = a1 w + c1,
    # so da2/dw = a1 + w x with a1 = x w + x x, da2/dx = w^2
    _, y = tf.while_loop(lambda i, a: tf.cast(i, tf.float64) < z,
                         lambda i, a: (i + 1, a * w + tf.stop_gradient(x * a)), [0, x])
    gz, gw, gx = tf.gradients(y, [z, w, x])
    assert gz is None
    assert np.allclose(sess.run([gw, gx]), [(1.5 * 3.0 + 1.5 * 1.5) + 3.0 * 1.5, 9.0])
    # the only path through a stop_gradient
    _, y2 = tf.while_loop(lambda i, a: i < 2,
                          lambda i, a: (i + 1, tf.stop_gradient(a * z) + 1.0), [0, x])
    assert tf.gradients(y2, z) == [None]
    # nested: z only in the inner loop's cond; r = x w^4
    def outer(i, a):
        _, b = tf.while_loop(lambda j, b: tf.cast(j, tf.float64) < z,
                             lambda j, b: (j + 1, b * w), [0, a])
        return i + 1, b
    _, r = tf.while_loop(lambda i, a: i < 2, outer, [0, x])
    gz, gw, gx = tf.gradients(r, [z, w, x])
    assert gz is None
    assert np.allclose(sess.run([gw, gx]), [4 * 1.5 * 27.0, 81.0])
    # reached only through the integer count, or a loop variable not reaching y
    i3, _ = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a * z), [0, x])
    assert tf.gradients(i3, [z, x]) == [None, None]
    _, a2, _ = tf.while_loop(lambda i, a, b: i < 2, lambda i, a, b: (i + 1, a * z, b * 2.0),
                             [0, x, w])
    gz, gx, gw = tf.gradients(a2, [z, x, w])
    assert gw is None and np.allclose(sess.run([gz, gx]), [2 * 1.5 * 2.0, 4.0])


def test_minimize_through_while_with_no_gradient_raises(graph):
    v = tf.Variable(1.0)
    u = tf.Variable(2.0)
    _, y = tf.while_loop(lambda i, a: i < 2,
                         lambda i, a: (i + 1, a * u + tf.stop_gradient(v)), [0, 1.0])
    opt = tf.train.GradientDescentOptimizer(0.1)
    got = opt.compute_gradients(y, var_list=[v, u])
    assert got[0][0] is None and got[1][0] is not None
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(y, var_list=[v])


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


def test_nested_loop_stacks_are_shared_by_every_run_as_in_tf(sess):
    """An inner loop's values go on one stack per value, made outside both loops and
    used by every run of the inner loop (TF's layout: TF's Grappler drops the pushes onto
    a stack it sees no pop of, so a stack made per outer iteration, whose handle is
    itself pushed, loses that push there). The runs of the inner loop do not depend on
    each other here, so with parallel outer iterations they could overlap on the tagged
    executor: the counters keep one run's pushes, and pops, after the previous run's."""
    x = tf.placeholder(tf.float64, [3])

    def outer(i, acc):
        s = tf.cast(i + 1, tf.float64)
        _, b = tf.while_loop(lambda j, b: j < 3, lambda j, b: (j + 1, tf.sin(b) * s + x),
                             [0, x * s])
        return i + 1, acc + b
    _, y = tf.while_loop(lambda i, a: i < 4, outer, [0, tf.zeros_like(x)],
                         parallel_iterations=10)
    loss = tf.reduce_sum(y * y)
    tf.gradients(loss, x)
    ops = sess.graph.get_operations()
    stacks = [op for op in ops if op.type == "StackV2"]
    assert stacks and all(op._control_flow_context is None for op in stacks)
    assert all(op.inputs[1].dtype != tf.resource for op in ops if op.type == "StackPushV2")
    xv = np.array([0.3, -0.2, 0.5])
    with sess.as_default():
        err = compute_gradient_error(x, [3], loss, [], x_init_value=xv, delta=1e-6)
    assert err < 1e-5


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
    # TypeError: TF's class ("Second-order gradient for while loops not supported.")
    with pytest.raises(TypeError, match="nested more than one deep"):
        tf.gradients(g, x)
    _, z = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, tf.cond(
        a > 0, lambda: tf.sin(a), lambda: a * a)), [0, x])
    gz = tf.gradients(z, x)[0]
    with pytest.raises(TypeError, match="tf.cond inside tf.while_loop"):
        tf.gradients(gz, x)


# --- memory: swap_memory (EuroSys §5.3) -----------------------------------------------------
@pytest.mark.no_spread  # counts the memory of CPU:0 (tests/ops/data_flow/ has the SIM's)
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
    # the device the loop and its stacks are placed on: the accelerator where there is one
    devices = sess._device_manager.devices
    dev = next((d for d in devices if d.device_type != "CPU"), devices[0])
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


# --- the GradientCall and the records on the graph ------------------------------------------
def test_gradients_that_need_the_call_say_so_at_registration():
    needing = ["Merge", "Switch"] + ["TensorArray%sV3" % k for k in (
        "Read", "Write", "Gather", "Scatter", "Concat", "Split")]
    for t in needing:
        assert registry.gradient_needs_call(t), t
    for t in ("Identity", "MatMul", "Enter", "Exit", "NextIteration"):
        assert not registry.gradient_needs_call(t), t


def test_a_gradient_registered_with_needs_call_receives_the_users_call(graph):
    seen = []
    name = "TestNeedsCall_%d" % id(seen)

    @registry.gradient(name, needs_call=True)
    def _grad(op, grad, *, call):
        seen.append(call)
        return [grad * 2.0]
    x = tf.constant(3.0)
    with graph.gradient_override_map({"Identity": name}):
        y = tf.identity(x)
    tf.gradients(y * y, x, name="my_grads")
    (call,) = seen
    assert isinstance(call, GradientCall) and call.source == "my_grads"
    assert call.backward_loop is None and call.frame is None


def test_loop_bodies_are_walked_in_the_users_call(graph, monkeypatch):
    # the nested walks of an outer and an inner loop body get the user's call, with the
    # backward loop being built set for the walk and restored after it
    walks = []
    nested = gradients_mod.nested_gradients

    def recording(call, *args):
        walks.append((call, call.backward_loop, call.frame))
        return nested(call, *args)
    monkeypatch.setattr(gradients_mod, "nested_gradients", recording)
    x = tf.placeholder(tf.float64, [])

    def outer(i, a):
        return i + 1, tf.while_loop(lambda k, b: k < 2, lambda k, b: (k + 1, tf.sin(b)),
                                    [0, a])[1]
    _, y = tf.while_loop(lambda i, a: i < 3, outer, [0, x])
    tf.gradients(y, x)
    assert len(walks) == 2
    (call, bw_outer, frame_outer), (call2, bw_inner, frame_inner) = walks
    assert call2 is call and call.backward_loop is None
    assert frame_outer.name == "while" and frame_inner.name == "while/while"
    assert bw_outer.forward is frame_outer and bw_inner.forward is frame_inner
    assert bw_outer.loop.grad_state is bw_outer and bw_inner.loop.grad_state is bw_inner
    assert cf.enclosing_loop(bw_inner.loop.outer) is bw_outer.loop
    assert list(call.loop_nodes) == [frame_outer, frame_inner]


def test_backward_loops_are_recorded_on_their_forward_loop(graph):
    x = tf.placeholder(tf.float64, [])
    w = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.sin(a * w)), [0, x])
    (loop,) = graph._while_contexts
    assert loop.grad_state is None and loop.backward_loops == []
    gx = tf.gradients(y, x)[0]
    tf.gradients(y, w)
    first, second = loop.backward_loops
    assert first.forward is loop and second.forward is loop
    assert first.loop is not second.loop and loop.grad_state is None
    # each backward loop counts down its own counter and pops its own stacks
    assert first.counter is not second.counter
    assert set(first.counter.stacks) == set(second.counter.stacks) != set()
    assert {v._op for v in first.popped} <= set(first.pops)
    # the second-order gradient differentiates a backward loop: its pops are inputs
    tf.gradients(gx, x)
    assert len(first.loop.backward_loops) == 1
    assert first.loop.backward_loops[0].forward is first.loop


def test_cond_merges_record_their_predicate(graph):
    x = tf.placeholder(tf.float64, [])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * x, lambda: tf.sin(x))
    assert y.op.type == "Merge" and y.op._cond_pred.op.type == "Identity"
    assert y.op._cond_pred.op.inputs[0] is p
    tf.gradients(y, x)
    # the Merges the Switches' gradients build are differentiable again (second order):
    # they switch on the predicate too
    merges = [op for op in graph.get_operations()
              if op.type == "Merge" and op.name.startswith("gradients/")]
    assert merges and all(m._cond_pred is y.op._cond_pred for m in merges)
    raw, _ = cf.merge([x, x * 2.0])
    assert raw.op._cond_pred is None
    with pytest.raises(LookupError, match="not the output of a tf.cond"):
        tf.gradients(raw, x)


def test_tensor_array_gradient_source_comes_from_the_call(graph):
    g = tf.constant(1.0)
    assert tensor_array_grad._grad_source(g, GradientCall("gradients_4")) == "gradients_4"
    with tf.name_scope("gradients_2"), tf.name_scope("body_grad"):
        # without a call (a gradient function called directly): TF's name-scope rule
        assert tensor_array_grad._grad_source(g, None) == "gradients_2"
    with pytest.raises(ValueError, match="start with gradients"):
        tensor_array_grad._grad_source(g, None)


def test_no_control_flow_state_in_module_globals():
    for mod, names in ((gradients_mod, ("_calls", "_control_flow_hooks", "root_call",
                                        "current_call")),
                       (control_flow_grad, ("_grad_frames",))):
        for n in names:
            assert not hasattr(mod, n), n
    assert not hasattr(tf.Graph(), "_cond_merges")


# --- two threads building gradients at once -------------------------------------------------
_FEED = {"x:0": np.array([0.3, -0.6]), "w:0": 0.8}


def _build_gradients() -> list:
    """In the default graph: first-order gradients through a cond in a loop, nested
    loops and a scan (TensorArrays); second-order ones through the nested loops and the
    scan. Returns the tensors to fetch."""
    x = tf.placeholder(tf.float64, [2], name="x")
    w = tf.placeholder(tf.float64, [], name="w")

    def cond_body(i, a):
        return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: tf.sin(a * w), lambda: a * a)
    _, y_cond = tf.while_loop(lambda i, a: i < 3, cond_body, [0, x])

    def outer(i, a):
        _, b = tf.while_loop(lambda k, b: k < 2, lambda k, b: (k + 1, tf.sin(b * w) + a),
                             [0, a])
        return i + 1, b * 0.9
    _, y_nested = tf.while_loop(lambda i, a: i < 2, outer, [0, x])
    s = tf.scan(lambda acc, e: acc * tf.cos(e) + e * w, x)
    smooth = tf.reduce_sum(y_nested * y_nested) + tf.reduce_sum(s * s)
    first = tf.gradients(smooth + tf.reduce_sum(y_cond), [x, w])
    gx, gw = tf.gradients(smooth, [x, w])
    second = tf.gradients(tf.reduce_sum(gx * gx) + gw, [x, w])
    return first + second


def _run(graph, fetches) -> list:
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, _FEED)


def test_two_threads_build_gradients_of_two_graphs_at_once():
    # (with the bookkeeping in module globals, as before GradientCall, the two builds
    # corrupted each other: loops differentiated in the wrong frame, lost gradients)
    graph = tf.Graph()
    with graph.as_default():
        want = _run(graph, _build_gradients())
    reps, built, errors = 4, [[], []], []
    barrier = threading.Barrier(2)

    def worker(k):
        try:
            for _ in range(reps):
                g = tf.Graph()
                with g.as_default():
                    barrier.wait(timeout=60)  # both start building together
                    built[k].append((g, _build_gradients()))
        except BaseException as e:  # reported by the main thread
            errors.append(e)
            barrier.abort()

    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so that their builds interleave
    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    finally:
        sys.setswitchinterval(saved)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]
    for graphs in built:
        assert len(graphs) == reps
        for g, fetches in graphs:
            for got, expected in zip(_run(g, fetches), want):
                np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_gradient_through_a_loop_feeding_back_an_argmax_of_its_values():
    # greedy decoding: the next token (an int loop variable) is the argmax of a value the
    # body also adds to the loss. The walk of the body's gradient must not follow the
    # argmax around the back edge (it waited on itself and gave None).
    with tf.Graph().as_default():
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

        def body(t, tok, acc):
            y = tf.gather(w, tok)
            return t + 1, tf.argmax(y, output_type=tf.int32), acc + tf.reduce_sum(y * y)

        _, _, loss = tf.while_loop(lambda t, *a: t < 3, body,
                                   [tf.constant(0), tf.constant(1), tf.constant(0.0)])
        g = tf.gradients(loss, w)[0]
        assert g is not None
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            # rows visited: 1, then argmax([3, 4]) = 1 twice: d/dw of 3 * sum(w[1]^2)
            np.testing.assert_allclose(sess.run(tf.convert_to_tensor(g)),
                                       [[0, 0], [18, 24]])

        x = tf.placeholder(tf.float64, [3])

        def body2(t, k, acc):
            v = tf.sin(x * tf.cast(k + 1, tf.float64))
            return t + 1, tf.cast(tf.argmax(v), tf.int32), acc + v[k]

        _, _, out = tf.while_loop(lambda t, *a: t < 4, body2,
                                  [tf.constant(0), tf.constant(0),
                                   tf.constant(0.0, tf.float64)])
        with tf.Session():
            err = tf.test.compute_gradient_error(x, [3], out, [],
                                                 x_init_value=np.array([0.3, 0.7, 1.1]))
        assert err < 1e-4  # central differences; the gradient is of order 1
