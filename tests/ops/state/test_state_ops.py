"""tf.assign & co., the scatter updates and tf.nn.embedding_lookup."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors


def _var(sess, value, dtype=None):
    v = tf.Variable(np.asarray(value, dtype=dtype))
    sess.run(v.initializer)
    return v


# --- dense function forms --------------------------------------------------------------
def test_assign_functions(graph, sess):
    v = _var(sess, [1.0, 2.0], np.float32)
    a = tf.assign(v, [3.0, 4.0])
    assert isinstance(a, tf.Tensor) and sess.run(a).tolist() == [3.0, 4.0]
    assert sess.run(tf.assign_add(v, [1.0, 1.0])).tolist() == [4.0, 5.0]
    assert sess.run(tf.assign_sub(v, [2.0, 2.0])).tolist() == [2.0, 3.0]
    with pytest.raises(ValueError):
        tf.assign(v, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="Variable"):
        tf.assign(tf.constant(1.0), 2.0)
    # TF1's names for a reference variable: the new value is "my_assign:0" (TF1's
    # Assign op's output); the resource update under it
    named = tf.assign(v, [0.0, 0.0], name="my_assign")
    assert named.name == "my_assign:0"
    assert named.op.control_inputs[0].name == "my_assign/update"
    assert sess.run("my_assign:0").tolist() == [0.0, 0.0]
    assert tf.assign_add(v, [1.0, 1.0]).name == "AssignAdd_1:0"  # the second one
    assert tf.scatter_update(v, [0], [9.0]).name == "ScatterUpdate:0"
    with tf.name_scope("scope"):
        assert v.assign_sub([1.0, 1.0]).name == "scope/AssignSub:0"
    # a resource variable keeps TF's resource names: the update op is the one named
    r = tf.Variable(0.0, use_resource=True)
    assert r.assign(1.0, name="set").op.control_inputs[0].name == "set"


def test_an_update_of_an_updates_result_runs_after_it(graph, sess):
    # TF1's assign returns the variable's reference: updating it updates the variable,
    # after the first update (its input); tf.assign_add(tf.assign(v, x), y) is x + y
    v = _var(sess, [1.0, 2.0], np.float32)
    chained = tf.assign_add(tf.assign(v, [3.0, 4.0]), [1.0, 1.0])
    assert sess.run(chained).tolist() == [4.0, 5.0] and sess.run(v).tolist() == [4.0, 5.0]
    again = tf.assign_sub(tf.assign_add(v, [1.0, 1.0]), [0.5, 0.5])
    assert sess.run(again).tolist() == [4.5, 5.5]
    rows = tf.scatter_update(tf.assign(v, [0.0, 0.0]), [1], [9.0])
    assert sess.run(rows).tolist() == [0.0, 9.0]
    # a resource variable's update gives a value, not a reference: TF refuses too
    r = tf.Variable([1.0], use_resource=True)
    with pytest.raises(TypeError, match="requires a tf.Variable"):
        tf.assign_add(tf.assign(r, [2.0]), [1.0])


# --- scatter ---------------------------------------------------------------------------
def test_scatter_ops_values(graph, sess):
    base = np.arange(12, dtype=np.float32).reshape(4, 3) + 1.0
    idx = [0, 2, 0]
    upd = np.array([[1, 2, 3], [4, 5, 6], [10, 20, 30]], np.float32)
    cases = {
        tf.scatter_add: lambda a: (np.add.at(a, idx, upd), a)[1],
        tf.scatter_sub: lambda a: (np.subtract.at(a, idx, upd), a)[1],
        tf.scatter_mul: lambda a: (np.multiply.at(a, idx, upd), a)[1],
        tf.scatter_div: lambda a: (np.divide.at(a, idx, upd), a)[1],
        tf.scatter_min: lambda a: (np.minimum.at(a, idx, upd), a)[1],
        tf.scatter_max: lambda a: (np.maximum.at(a, idx, upd), a)[1],
    }
    for fn, ref in cases.items():
        v = _var(sess, base)
        out = sess.run(fn(v, idx, upd))
        np.testing.assert_allclose(out, ref(base.copy()), rtol=1e-6, err_msg=fn.__name__)
        np.testing.assert_allclose(sess.run(v), out)


def test_scatter_update_and_scalar_updates(graph, sess):
    v = _var(sess, np.zeros([3, 2], np.int32))
    assert sess.run(tf.scatter_update(v, [2, 0], [[1, 2], [3, 4]])).tolist() == \
        [[3, 4], [0, 0], [1, 2]]
    assert sess.run(tf.scatter_add(v, [1], 5)).tolist() == [[3, 4], [5, 5], [1, 2]]
    m = _var(sess, np.zeros([2, 2], np.float32))
    upd = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([1]))
    assert sess.run(m.scatter_add(upd)).tolist() == [[0, 0], [1, 1]]
    assert sess.run(m.scatter_sub(upd)).tolist() == [[0, 0], [0, 0]]
    assert sess.run(m.scatter_update(upd)).tolist() == [[0, 0], [1, 1]]
    with pytest.raises(TypeError, match="IndexedSlices"):
        m.scatter_update([1.0])


def test_scatter_index_shapes(graph, sess):
    v = _var(sess, np.zeros([3], np.float32))
    # 2-D indices: updates have shape indices.shape
    out = sess.run(tf.scatter_add(v, [[0, 1], [1, 2]], [[1.0, 2.0], [3.0, 4.0]]))
    assert out.tolist() == [1.0, 5.0, 4.0]
    out = sess.run(tf.scatter_update(v, tf.constant(2, tf.int64), 9.0))
    assert out.tolist() == [1.0, 5.0, 9.0]


def test_scatter_int_div_truncates(graph, sess):
    v = _var(sess, [7, -7, 9], np.int32)
    out = sess.run(tf.scatter_div(v, [0, 1, 2, 2], [2, 2, 2, 2]))
    assert out.tolist() == [3, -3, 2]


def test_scatter_errors_leave_variable_unchanged(graph, sess):
    v = _var(sess, [[1.0, 2.0], [3.0, 4.0]], np.float32)
    with pytest.raises(ValueError, match="updates.shape"):
        tf.scatter_update(v, [0], [1.0, 2.0, 3.0])
    bad = tf.scatter_add(v, [0, 5], [[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 2\)"):
        sess.run(bad)
    neg = tf.scatter_update(v, [-1], [[0.0, 0.0]])
    with pytest.raises(errors.InvalidArgumentError, match="is not in"):
        sess.run(neg)
    p = tf.placeholder(tf.float32)
    dyn = tf.scatter_add(v, [0], p)
    with pytest.raises(errors.InvalidArgumentError, match="updates.shape"):
        sess.run(dyn, {p: [[1.0, 2.0, 3.0]]})
    assert sess.run(v).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_scatter_nd_ops(graph, sess):
    v = _var(sess, np.zeros([2, 3], np.float32))
    out = sess.run(tf.scatter_nd_update(v, [[0, 1], [1, 2]], [5.0, 6.0]))
    assert out.tolist() == [[0, 5, 0], [0, 0, 6]]
    out = sess.run(tf.scatter_nd_add(v, [[0, 1], [0, 1]], [1.0, 1.0]))
    assert out.tolist() == [[0, 7, 0], [0, 0, 6]]
    out = sess.run(tf.scatter_nd_sub(v, [[1]], [[1.0, 1.0, 1.0]]))  # a whole row
    assert out.tolist() == [[0, 7, 0], [-1, -1, 5]]
    assert sess.run(v.scatter_nd_update([[0, 0]], [3.0])).tolist()[0] == [3, 7, 0]
    with pytest.raises(ValueError):
        tf.scatter_nd_update(v, [[0, 1]], [[1.0, 2.0]])
    bad = tf.scatter_nd_update(v, [[2, 0]], [1.0])
    with pytest.raises(errors.InvalidArgumentError, match="does not index into"):
        sess.run(bad)
    assert sess.run(v).tolist() == [[3, 7, 0], [-1, -1, 5]]


def test_count_up_to_function(graph, sess):
    v = _var(sess, 1, np.int64)
    c = tf.count_up_to(v, 2)
    assert sess.run(c) == 1
    with pytest.raises(errors.OutOfRangeError):
        sess.run(c)


# --- embedding_lookup ------------------------------------------------------------------
def test_embedding_lookup_variable(graph, sess):
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = _var(sess, table)
    ids = [[3, 0], [1, 1]]
    e = tf.nn.embedding_lookup(v, ids)
    assert e.shape.as_list() == [2, 2, 3]
    assert e.name.startswith("embedding_lookup/")
    np.testing.assert_array_equal(sess.run(e), table[np.array(ids)])
    e1 = tf.nn.embedding_lookup([v], tf.constant([2], tf.int64), name="lookup")
    assert e1.name.startswith("lookup/")
    np.testing.assert_array_equal(sess.run(e1), table[[2]])
    bad = tf.nn.embedding_lookup(v, [4])
    with pytest.raises(errors.InvalidArgumentError, match="is not in"):
        sess.run(bad)


def test_embedding_lookup_errors(graph):
    v = tf.Variable(np.zeros([4, 3], np.float32))
    with pytest.raises(ValueError):
        tf.nn.embedding_lookup([], [0])
    with pytest.raises(ValueError):
        tf.nn.embedding_lookup(None, [0])
    with pytest.raises(ValueError, match="partition strategy"):
        tf.nn.embedding_lookup(v, [0], partition_strategy="bad")


def test_embedding_lookup_tensor(graph, sess):
    table = np.arange(8, dtype=np.float64).reshape(4, 2)
    e = tf.nn.embedding_lookup(tf.constant(table), [[1], [3]])
    assert e.shape.as_list() == [2, 1, 2]
    np.testing.assert_array_equal(sess.run(e), table[[[1], [3]]])


def test_embedding_lookup_gradient_is_indexed_slices(graph, sess):
    table = np.random.RandomState(0).randn(5, 3)
    v = _var(sess, table)  # float64
    ids = np.array([[4, 1], [1, 0]])
    w = np.random.RandomState(1).randn(2, 2, 3)
    e = tf.nn.embedding_lookup(v, ids)
    loss = tf.reduce_sum(e * e * tf.constant(w))
    (g,) = tf.gradients(loss, [v])
    assert isinstance(g, tf.IndexedSlices)
    dense = sess.run(g).to_dense()
    # numeric check: central differences on the table, through the session
    numeric = np.zeros_like(table)
    delta = 1e-6
    for r in range(5):
        for c in range(3):
            for sign in (1, -1):
                t = table.copy()
                t[r, c] += sign * delta
                v.load(t, sess)
                numeric[r, c] += sign * sess.run(loss) / (2 * delta)
    np.testing.assert_allclose(dense, numeric, atol=1e-6)
    expected = np.zeros_like(table)
    np.add.at(expected, ids.reshape(-1), (2 * table[ids] * w).reshape(-1, 3))
    np.testing.assert_allclose(dense, expected, rtol=1e-12)


def test_embedding_lookup_gradient_checker_on_tensor_params(graph):
    from tensorweave.autodiff.gradient_checker import compute_gradient_error
    p = tf.placeholder(tf.float64, [4, 2])
    e = tf.nn.embedding_lookup(p, [[0, 3], [3, 3]])
    err = compute_gradient_error(p, [4, 2], e, [2, 2, 2])
    assert err < 1e-6


def test_embedding_lookup_max_norm(graph, sess):
    table = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]], np.float32)
    v = _var(sess, table)
    e = tf.nn.embedding_lookup(v, [0, 1, 2], max_norm=1.0)
    np.testing.assert_allclose(sess.run(e), [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]], rtol=1e-6)


def test_sparse_update_of_embedding_rows(graph, sess):
    """An SGD step on an embedding touches only the looked-up rows."""
    table = np.ones([6, 2], np.float32)
    v = _var(sess, table)
    e = tf.nn.embedding_lookup(v, [1, 4])
    (g,) = tf.gradients(tf.reduce_sum(e), v)
    step = v.scatter_sub(tf.IndexedSlices(g.values * 0.5, g.indices, g.dense_shape))
    out = sess.run(step)
    assert out[:, 0].tolist() == [1.0, 0.5, 1.0, 1.0, 0.5, 1.0]
