"""Persistent tensors (ops/data_flow/session_ops.py and the Session's tensor store):
get_session_handle / get_session_tensor / delete_session_tensor and TensorHandle."""
import gc

import numpy as np
import pytest

import tensorweave as tf


def test_handle_round_trip(graph, sess):
    a = tf.constant(10.0)
    c = a * 5.0
    h = tf.get_session_handle(c)
    assert h.dtype == tf.string and h.shape.as_list() == [] and h.op.type == "GetSessionHandle"
    hv = sess.run(h)
    assert type(hv).__name__ == "TensorHandle"
    assert isinstance(hv.handle, str) and hv.handle.startswith("GetSessionHandle;")
    assert str(hv) == hv.handle == hv.get_raw_handle()
    holder, t = tf.get_session_tensor(hv.handle, tf.float32)
    assert holder.dtype == tf.string and t.dtype == tf.float32 and t.op.type == \
        "GetSessionTensor"
    y = t * 10.0
    assert sess.run(y, {holder: hv.handle}) == 500.0
    assert sess.run(y, {holder: hv}) == 500.0  # the TensorHandle itself feeds its handle
    assert hv.eval() == 50.0
    assert sess.run(c * 2.0, {c: hv}) == 100.0  # fed in place of a tensor: its value
    assert len(sess.session_tensors) == 1


def test_nested_fetches_and_distinct_handles(graph, sess):
    v = tf.placeholder(tf.int32, [2])
    h = tf.get_session_handle(v * 2)
    first = sess.run({"h": h, "x": [h, v]}, {v: [1, 2]})
    second = sess.run(h, {v: [5, 6]})
    assert type(first["h"]).__name__ == "TensorHandle" and first["x"][0].handle == \
        first["h"].handle
    assert second.handle != first["h"].handle
    np.testing.assert_array_equal(first["h"].eval(), [2, 4])
    np.testing.assert_array_equal(second.eval(), [10, 12])
    call = sess.make_callable(h, [v])
    np.testing.assert_array_equal(call([7, 8]).eval(), [14, 16])


def test_delete_and_missing_handles(graph, sess):
    h = tf.get_session_handle(tf.constant([1.0, 2.0]))
    hv = sess.run(h)
    holder, t = tf.get_session_tensor(hv.handle, tf.float32)
    dholder, deleter = tf.delete_session_tensor(hv.handle)
    assert deleter.type == "DeleteSessionTensor"
    sess.run(deleter, {dholder: hv.handle})
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not in the session store"):
        sess.run(t, {holder: hv.handle})
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not in the session store"):
        sess.run(deleter, {dholder: hv.handle})
    h2 = sess.run(h)
    h2.delete()
    with pytest.raises(TypeError, match="may have already been deleted"):
        h2.eval()
    with pytest.raises(TypeError, match="may have already been deleted"):
        h2.delete()


def test_wrong_dtype(graph, sess):
    hv = sess.run(tf.get_session_handle(tf.constant(3)))
    holder, t = tf.get_session_tensor(hv.handle, tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="has type int32, not float32"):
        sess.run(t, {holder: hv.handle})
    with pytest.raises(TypeError, match="must be of type Tensor"):
        tf.get_session_handle(np.ones(2))


def test_store_freed_by_gc_and_at_close(graph):
    h = tf.get_session_handle(tf.constant(1.0))
    sess = tf.Session(graph=graph)
    kept = sess.run(h)
    dropped = sess.run(h)
    assert len(sess.session_tensors) == 2
    del dropped
    gc.collect()
    assert len(sess.session_tensors) == 1
    store = sess.session_tensors
    sess.close()
    assert len(store) == 0
    assert kept.handle  # the handle object stays usable as a string


def test_not_differentiable(graph):
    from tensorweave.framework import registry
    for op_type in ("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor"):
        assert registry.get_gradient(op_type) == (True, None)
