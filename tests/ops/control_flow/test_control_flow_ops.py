"""tf.cond, tf.case, tf.while_loop (control_flow_ops.py) on both executors of runtime/
against NumPy; their gradients are in test_control_flow_grad.py."""
import collections

import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor")  # conftest.py: structured and tagged


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


def test_control_edge_from_switch_is_live_on_both_sides(sess):
    # as in TF, a control input from a Switch waits for the Switch to run, whichever side
    # it takes; only a value (or an Identity of one side) is dead on the other side
    from tensorweave.ops.control_flow import control_flow_ops as cf
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    _, on_true = cf.switch(x, p)
    with tf.control_dependencies([on_true.op]):
        after_switch = tf.identity(x)
    with tf.control_dependencies([tf.identity(on_true)]):
        after_true_side = tf.identity(x)
    for pv in (True, False):
        assert sess.run(after_switch, {x: 3.0, p: pv}) == 3.0
    assert sess.run(after_true_side, {x: 3.0, p: True}) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(after_true_side, {x: 3.0, p: False})


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


# --- switch_case ----------------------------------------------------------------------------
def test_switch_case_selects_by_index_with_default_and_last_key(sess):
    i = tf.placeholder(tf.int32, [])
    with_default = tf.switch_case(i, {0: lambda: tf.constant(17), 1: lambda: tf.constant(31)},
                                  default=lambda: tf.constant(-1))
    # a list of (key, fn) pairs in any order; no default: the largest key's branch
    pairs = tf.switch_case(i, [(1, lambda: tf.constant(31)), (0, lambda: tf.constant(17))])
    listed = tf.switch_case(tf.cast(i, tf.int64), [lambda: tf.constant(5.0),
                                                   lambda: tf.constant(6.0),
                                                   lambda: tf.constant(7.0)])
    assert with_default.name.startswith("switch_case/")
    for v, want in ((0, (17, 17, 5.0)), (1, (31, 31, 6.0)), (2, (-1, 31, 7.0)),
                    (7, (-1, 31, 7.0)), (-3, (-1, 31, 7.0))):
        assert tuple(sess.run([with_default, pairs, listed], {i: v})) == want


def test_switch_case_runs_one_branch_and_keeps_structures(sess):
    i = tf.placeholder(tf.int32, [])
    counts = tf.Variable([0, 0, 0])

    def branch(k):
        def fn():
            bump = tf.scatter_add(counts, [k], [1])
            with tf.control_dependencies([bump]):
                return {"k": tf.constant(k), "pair": (tf.constant(float(k)), tf.constant([k]))}
        return fn
    out = tf.switch_case(i, [branch(0), branch(1), branch(2)])
    sess.run(counts.initializer)  # after the scatters: they decide the variable's device
    assert sorted(out) == ["k", "pair"] and isinstance(out["pair"], tuple)
    got = sess.run(out, {i: 1})
    assert got["k"] == 1 and got["pair"][0] == 1.0 and got["pair"][1].tolist() == [1]
    sess.run(out, {i: 2})
    sess.run(out, {i: 9})
    assert sess.run(counts).tolist() == [0, 1, 2]


def test_switch_case_gradient(sess):
    from tensorweave.test import compute_gradient_error
    i = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float64, [3])
    y = tf.switch_case(i, [lambda: tf.sin(x) * x, lambda: x * x * x])
    for v, want in ((0, lambda a: np.cos(a) * a + np.sin(a)), (1, lambda a: 3 * a * a)):
        xv = np.array([0.3, -1.2, 2.0])
        g = sess.run(tf.gradients(tf.reduce_sum(y), x)[0], {i: v, x: xv})
        np.testing.assert_allclose(g, want(xv), rtol=1e-12)
        with sess.as_default():
            err = compute_gradient_error(x, [3], y, [3], x_init_value=xv,
                                         extra_feed_dict={i: v})
        assert err < 1e-6


def test_switch_case_argument_errors(graph):
    i = tf.placeholder(tf.int32, [])
    one = lambda: tf.constant(1)  # noqa: E731
    with pytest.raises(TypeError, match="'branch_index' must be a Tensor"):
        tf.switch_case(1, [one])
    with pytest.raises(TypeError, match="must be an integer Tensor"):
        tf.switch_case(tf.placeholder(tf.float32, []), [one])
    with pytest.raises(ValueError, match="at least one item"):
        tf.switch_case(i, [])
    with pytest.raises(TypeError, match="must be a list, tuple, or dict"):
        tf.switch_case(i, one)
    with pytest.raises(TypeError, match="must be a 2-tuple"):
        tf.switch_case(i, [(0, one), one])
    with pytest.raises(TypeError, match="key must be a Python `int`"):
        tf.switch_case(i, {"a": one})
    with pytest.raises(TypeError, match="fn for key 0 must be callable"):
        tf.switch_case(i, [(0, 5)])
    with pytest.raises(ValueError, match=r"contiguous range of \[0 to 2\) but found \{0,2\}"):
        tf.switch_case(i, {0: one, 2: one})


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
    # as TF1, cond and body receive the namedtuple's fields as arguments
    out = tf.while_loop(lambda x, y: x < 5, lambda x, y: Pair(x + 1, y * 2),
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


def _sparse(v, n=1):
    return tf.SparseTensor([[0, 0]] * n, [v] * n, [2, 2])


def test_cond_of_sparse_tensors_and_indexed_slices(sess):
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: _sparse(1.0), lambda: _sparse(5.0, 2))
    assert isinstance(r, tf.SparseTensor) and r.shape.as_list() == [2, 2]
    assert r.indices.shape.as_list() == [None, 2] and r.values.shape.as_list() == [None]
    got = sess.run(r, {p: False})
    np.testing.assert_array_equal(got.indices, [[0, 0], [0, 0]])
    np.testing.assert_array_equal(got.values, [5.0, 5.0])
    np.testing.assert_array_equal(got.dense_shape, [2, 2])
    assert sess.run(r, {p: True}).values.tolist() == [1.0]
    isl = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    r = tf.cond(p, lambda: isl, lambda: tf.IndexedSlices(isl.values * 2, isl.indices,
                                                         isl.dense_shape))
    assert isinstance(r, tf.IndexedSlices) and r.values.shape.as_list() == [1, 2]
    got = sess.run(r, {p: False})
    np.testing.assert_array_equal(got.values, [[2.0, 4.0]])
    np.testing.assert_array_equal(got.dense_shape, [3, 2])
    with pytest.raises(ValueError, match="same nested structure"):
        tf.cond(p, lambda: _sparse(1.0), lambda: tf.constant(1.0))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.cond(p, lambda: isl, lambda: tf.IndexedSlices(isl.values, isl.indices))


def test_while_of_sparse_tensors_and_indexed_slices(sess):
    # a SparseTensor's indices and values may change their count every iteration
    def grow(i, t):
        return i + 1, tf.SparseTensor(tf.concat([t.indices, t.indices], 0),
                                      tf.concat([t.values, t.values * 2], 0), t.dense_shape)
    _, r = tf.while_loop(lambda i, t: i < 2, grow, [0, _sparse(1.0)])
    assert isinstance(r, tf.SparseTensor)
    assert r.indices.shape.as_list() == [None, 2] and r.dense_shape.shape.as_list() == [2]
    got = sess.run(r)
    np.testing.assert_array_equal(got.values, [1.0, 2.0, 2.0, 4.0])
    np.testing.assert_array_equal(got.dense_shape, [2, 2])
    _, r = tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, _sparse(2.0)),
                         [0, _sparse(1.0)])
    assert r.shape.as_list() == [2, 2] and sess.run(r).values.tolist() == [2.0]
    # a lone SparseTensor is three tensors: the result stays a list, as in TF
    r = tf.while_loop(lambda t: tf.reduce_sum(t.values) < 5.0,
                      lambda t: tf.SparseTensor(t.indices, t.values * 2, t.dense_shape),
                      [_sparse(1.0)])
    assert isinstance(r, list) and sess.run(r[0]).values.tolist() == [8.0]
    # its shape invariant is that of its dense_shape
    _, r = tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, t), [0, _sparse(1.0)],
                         shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    assert r.shape.rank is None
    with pytest.raises(ValueError, match="Expected a shape with 1 dimension"):
        tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, t), [0, _sparse(1.0)],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, None])])
    with pytest.raises(ValueError, match="enters the loop with shape"):
        tf.while_loop(lambda i, t: i < 2,
                      lambda i, t: (i + 1, tf.SparseTensor([[0]], [2.0], [3])),
                      [0, _sparse(1.0)])
    with pytest.raises(ValueError, match="same nested structure"):
        tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, tf.constant(1.0)),
                      [0, _sparse(1.0)])
    isl = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    _, r = tf.while_loop(lambda i, x: i < 2, lambda i, x: (
        i + 1, tf.IndexedSlices(x.values * 2, x.indices, x.dense_shape)), [0, isl])
    assert isinstance(r, tf.IndexedSlices) and r.values.shape.as_list() == [1, 2]
    got = sess.run(r)
    np.testing.assert_array_equal(got.values, [[4.0, 8.0]])
    np.testing.assert_array_equal(got.indices, [1])


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


def test_cond_branches_may_return_operations_as_in_tf1(graph, sess):
    """TF1's cond stands an Operation in for the branch's pivot run after it: the result
    is a bool tensor equal to the predicate (TF 2.21's compat.v1 gives the same run)."""
    p = tf.placeholder(tf.bool, [])
    v = tf.Variable(0)
    out = tf.cond(p, lambda: tf.assign_add(v, 1).op, lambda: tf.assign_add(v, 10).op)
    assert out.dtype == tf.bool and out.shape.as_list() == []
    sess.run(v.initializer)
    assert sess.run(out, {p: True}) and sess.run(v) == 1
    assert not sess.run(out, {p: False}) and sess.run(v) == 11
    pair = tf.cond(p, lambda: (tf.no_op(), tf.constant(1)), lambda: (tf.no_op(), tf.constant(2)))
    assert sess.run(pair[1], {p: False}) == 2
    with pytest.raises(TypeError, match="body must return Tensors, not the Operation"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.no_op(), [tf.constant(0)])


def test_case_without_default_fails_when_no_predicate_holds(sess):
    """TF's default is the last callable guarded by an Assert on its predicate."""
    x = tf.placeholder(tf.int32, [])
    f = tf.case([(tf.equal(x, 1), lambda: tf.constant(10)),
                 (tf.equal(x, 2), lambda: tf.constant(20))])
    assert [sess.run(f, {x: 1}), sess.run(f, {x: 2})] == [10, 20]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input error: None of conditions evaluated as True:\] \[0 0\]"):
        sess.run(f, {x: 3})
    single = tf.case({tf.equal(x, 1): lambda: tf.constant(10)}, exclusive=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions"):
        sess.run(single, {x: 3})


def test_structure_argument_errors_are_tfs(graph):
    p = tf.constant(True)
    with pytest.raises(TypeError, match="'pred' must not be a Python bool"):
        tf.cond(True, lambda: 1, lambda: 2)
    with pytest.raises(ValueError, match="'true_fn' must have a return value"):
        tf.cond(p, lambda: None, lambda: None)
    with pytest.raises(TypeError, match="cond\\(\\): 'false_fn' argument required"):
        tf.cond(p, lambda: 1)
    with pytest.raises(TypeError, match="'true_fn' must be callable"):
        tf.cond(p, 1, lambda: 2)
    with pytest.raises(ValueError, match="Unknown keyword arguments: foo"):
        tf.group(tf.no_op(), foo=1)
    with pytest.raises(ValueError, match="'tensors' must have at least one Tensor"):
        tf.tuple([])
    with pytest.raises(ValueError, match="does not contain any Tensors"):
        tf.map_fn(lambda r: r, [])
    doubled = tf.map_fn(lambda r: tf.cast(r, tf.float32) * 2, tf.constant([1, 2]),
                        fn_output_signature=tf.float32)
    assert doubled.dtype == tf.float32
