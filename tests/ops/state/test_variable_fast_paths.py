"""The lean paths of variable kernels: the variable a handle caches (valid while its
resource manager removed nothing), and the fused updates' writable arrays (in place when
the variable is the sole owner, else a copy that leaves readers' snapshots alone)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.state import resource_variable_ops as rv
from tensorweave.train import training_ops


def test_cached_lookup_follows_a_destroyed_and_recreated_variable(graph, sess):
    v = tf.Variable([1.0, 2.0], use_resource=True)
    read = v.read_value()
    step = training_ops.resource_apply_gradient_descent(v.handle, tf.constant(0.5),
                                                        tf.constant([2.0, 4.0]))
    destroy = rv.destroy_resource_op(v.handle)
    recreate = rv.assign_variable_op(v.handle, tf.constant([10.0, 20.0]))
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(read), [1.0, 2.0])  # the handle caches it
    sess.run(destroy)
    with pytest.raises(errors.FailedPreconditionError):
        sess.run(read)
    with pytest.raises(errors.FailedPreconditionError):
        sess.run(step)
    sess.run(recreate)
    sess.run(step)  # updates the new variable, not the destroyed one
    np.testing.assert_array_equal(sess.run(read), [9.0, 18.0])


def test_cached_lookup_is_dropped_by_a_container_reset(graph):
    v = tf.Variable([3.0], use_resource=True)
    read = v.read_value()
    with tf.Session(graph=graph) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(read), [3.0])
        for d in sess._device_manager.devices:
            d.resources.clear()
        with pytest.raises(errors.FailedPreconditionError):
            sess.run(read)


def test_generation_grows_on_every_removal():
    from tensorweave.runtime.resources import ResourceManager
    m = ResourceManager("/cpu:0")
    g0 = m.generation
    m.lookup_or_create("", "a", object)
    assert m.generation == g0  # creating never invalidates a cached lookup
    m.delete("", "a")
    m.clear()
    assert m.generation == g0 + 2


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_keeps_snapshots_and_matches_formula(graph, sess, nesterov):
    rs = np.random.RandomState(1)
    w0, a0, g = (rs.randn(5, 3).astype(np.float32) for _ in range(3))
    w = tf.Variable(w0, use_resource=True)
    a = tf.Variable(a0, use_resource=True)
    lr, mom = np.float32(0.1), np.float32(0.9)
    step = training_ops.resource_apply_momentum(w.handle, a.handle, tf.constant(lr),
                                                tf.constant(g), tf.constant(mom),
                                                use_nesterov=nesterov)
    sess.run([w.initializer, a.initializer])
    held_w, held_a = sess.run([w.read_value(), a.read_value()])  # readers hold these
    sess.run(step)  # copies (the snapshots are referenced), then in place
    sess.run(step)
    np.testing.assert_array_equal(held_w, w0)
    np.testing.assert_array_equal(held_a, a0)
    ew, ea = w0.copy(), a0.copy()
    for _ in range(2):
        ea = ea * mom + g
        ew = ew - (g * lr + ea * (mom * lr) if nesterov else ea * lr)
    got_w, got_a = sess.run([w.read_value(), a.read_value()])
    np.testing.assert_allclose(got_w, ew, rtol=1e-6)
    np.testing.assert_allclose(got_a, ea, rtol=1e-6)


def test_adam_on_random_variables_matches_formula_step_after_step(graph, sess):
    rs = np.random.RandomState(2)
    w0, m0, g = (rs.randn(7).astype(np.float32) for _ in range(3))
    v0 = np.abs(rs.randn(7)).astype(np.float32)
    w, m, v = (tf.Variable(x, use_resource=True) for x in (w0, m0, v0))
    hyper = [np.float32(x) for x in (0.9 ** 2, 0.999 ** 2, 0.01, 0.9, 0.999, 1e-7)]
    step = training_ops.resource_apply_adam(w.handle, m.handle, v.handle,
                                            *[tf.constant(x) for x in hyper],
                                            tf.constant(g))
    sess.run([x.initializer for x in (w, m, v)])
    b1p, b2p, lr, b1, b2, eps = hyper
    ew, em, ev = w0, m0, v0
    for _ in range(3):
        sess.run(step)
        em = em + (g - em) * (1 - b1)
        ev = ev + (g * g - ev) * (1 - b2)
        ew = ew - em * (lr * np.sqrt(1 - b2p) / (1 - b1p)) / (np.sqrt(ev) + eps)
    got = sess.run([x.read_value() for x in (w, m, v)])
    for a, b in zip(got, (ew, em, ev)):
        np.testing.assert_allclose(a, b, rtol=2e-6)


def test_one_variable_passed_as_var_and_accum(graph, sess):
    """Locked once (a second acquire would deadlock); the second role gets its own copy,
    and the last published array (accum's) is the value, as with writable_value()."""
    x0 = np.array([1.0, -2.0, 4.0], np.float32)
    g = np.array([0.5, 1.0, -1.0], np.float32)
    x = tf.Variable(x0, use_resource=True)
    step = training_ops.resource_apply_momentum(x.handle, x.handle, tf.constant(0.1),
                                                tf.constant(g), tf.constant(0.9))
    sess.run(x.initializer)
    sess.run(step)
    np.testing.assert_array_equal(sess.run(x.read_value()),
                                  x0 * np.float32(0.9) + g)  # accum's new value


def test_writable_values_and_publish_values():
    a = rv.VariableResource(tf.float32, "a")
    b = rv.VariableResource(tf.float32, "b")
    a.value = np.zeros(3, np.float32)
    a.value.setflags(write=False)
    b.value = np.ones(2, np.float32)
    b.value.setflags(write=False)
    held = b.value  # a reader's snapshot: b's array is not the variable's alone
    own = id(a.value)  # (an id: a reference would make a's array shared too)
    arrays = rv.writable_values([a, b])
    assert id(arrays[0]) == own and arrays[1] is not held
    assert all(x.flags.writeable for x in arrays)
    arrays[0] += 1
    arrays[1] += 1
    rv.publish_values([a, b], arrays)
    assert a.value is arrays[0] and b.value is arrays[1]
    assert not a.value.flags.writeable and not b.value.flags.writeable
    np.testing.assert_array_equal(held, [1.0, 1.0])
    np.testing.assert_array_equal(b.value, [2.0, 2.0])


def test_cached_lookup_does_not_keep_a_destroyed_variable_alive(graph, sess):
    import gc
    import weakref
    v = tf.Variable(np.zeros(4, np.float32), use_resource=True)
    read = v.read_value()
    destroy = rv.destroy_resource_op(v.handle)
    sess.run(v.initializer)
    sess.run(read)  # the handle caches the variable
    (var,) = [r for d in sess._device_manager.devices for _, _, r in d.resources.items()
              if isinstance(r, rv.VariableResource)]
    alive = weakref.ref(var)
    del var
    sess.run(destroy)
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize("rows,width", [(5, 3), (40, 8), (300, 8), (200, 64)])
def test_resource_scatter_add_and_sub_apply_updates_in_order(graph, sess, rows, width):
    # small updates go to ufunc.at alone, large ones to the first-occurrence split: both
    # must add each row's updates in their order, repeated and out-of-order ids included
    rs = np.random.RandomState(rows)
    start = rs.randn(rows, width).astype(np.float32)
    v = tf.get_variable("v", initializer=start, use_resource=True)
    idx = tf.placeholder(tf.int32, [None])
    upd = tf.placeholder(tf.float32, [None, width])
    add, sub = tf.scatter_add(v, idx, upd), tf.scatter_sub(v, idx, upd)
    sess.run(v.initializer)
    want = start.copy()
    for n, op, sign in ((rows, add, 1), (2 * rows, sub, -1), (1, add, 1), (0, sub, -1)):
        ids = rs.randint(0, rows, n).astype(np.int32)
        values = (rs.randn(n, width) * 1e3).astype(np.float32)
        sess.run(op, {idx: ids, upd: values})
        for i, row in zip(ids.tolist(), values):
            want[i] = want[i] + row if sign > 0 else want[i] - row
        np.testing.assert_array_equal(sess.run(v), want)


@pytest.mark.parametrize("shape", [(50,), (50, 16)])
def test_resource_scatter_sub_of_heavily_repeated_ids_is_subtract_ats(graph, sess, shape):
    """A Zipf-distributed batch (word2vec's): one id repeated dozens of times, others
    once; each row's updates are subtracted one after another, in their order, as
    np.subtract.at does, special values included."""
    rs = np.random.RandomState(7)
    start = (rs.randn(*shape) * 10).astype(np.float32)
    start.ravel()[:3] = [np.inf, -0.0, 1e-45]
    ids = (np.minimum(rs.zipf(1.3, 400), shape[0]) - 1).astype(np.int32)
    values = (rs.randn(*((400,) + shape[1:])) * 1e3).astype(np.float32)
    values.ravel()[:2] = [0.0, -np.inf]
    v = tf.get_variable("v", initializer=start, use_resource=True)
    sess.run(v.initializer)
    sess.run(tf.scatter_sub(v, ids, values))
    want = start.copy()
    with np.errstate(all="ignore"):
        np.subtract.at(want, ids, values)
    assert np.bincount(ids).max() > 30
    assert sess.run(v).tobytes() == want.tobytes()
