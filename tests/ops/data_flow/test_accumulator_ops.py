"""tf.ConditionalAccumulator and tf.SparseConditionalAccumulator against NumPy: means
and sums, stale gradients, global steps, shapes and errors as TF reports them, blocking
takes finished by applies from other threads and cancelled with their step."""
import threading
import time
import uuid

import numpy as np
import pytest

import tensorweave as tf


# --- dense -------------------------------------------------------------------------------
def test_dense_mean_sum_and_static_structure(graph, sess):
    a = tf.ConditionalAccumulator(tf.float32, shape=[2, 3])
    s = tf.ConditionalAccumulator(tf.float64, shape=[2, 3], reduction_type="SUM")
    assert isinstance(a, tf.ConditionalAccumulatorBase)
    assert a.accumulator_ref.dtype == tf.resource and a.accumulator_ref.shape == [2]
    assert a.dtype == tf.float32 and a.name == "conditional_accumulator"
    g = tf.placeholder(tf.float32, [2, 3])
    gd = tf.placeholder(tf.float64, [2, 3])
    apply_a, apply_s = a.apply_grad(g), s.apply_grad(gd, local_step=0)
    assert isinstance(apply_a, tf.Operation)
    assert apply_a.type == "ResourceAccumulatorApplyGradient"
    take_a, take_s = a.take_grad(3), s.take_grad(3)
    assert take_a.dtype == tf.float32 and take_a.shape.as_list() == [2, 3]
    n = a.num_accumulated()
    assert n.dtype == tf.int32 and n.shape == [] and n.op.name.endswith("_NumAccumulated")
    grads = np.random.RandomState(0).randn(3, 2, 3)
    assert sess.run(n) == 0
    for x in grads:
        sess.run([apply_a, apply_s], {g: x.astype(np.float32), gd: x})
    assert sess.run(n) == 3
    mean, total = sess.run([take_a, take_s])
    assert mean.dtype == np.float32 and total.dtype == np.float64
    np.testing.assert_allclose(mean, grads.astype(np.float32).mean(0), rtol=1e-6)
    np.testing.assert_allclose(total, grads.sum(0), rtol=1e-12)
    assert sess.run(n) == 0  # reset by the take


def test_stale_gradients_are_dropped_and_take_advances_the_global_step(graph, sess):
    a = tf.ConditionalAccumulator(tf.float32, shape=[2])
    g = tf.placeholder(tf.float32)
    step = tf.placeholder(tf.int64)
    apply = a.apply_grad(g, local_step=step)
    take, n = a.take_grad(1), a.num_accumulated()
    set_step = a.set_global_step(step)
    assert set_step.type == "ResourceAccumulatorSetGlobalStep"
    sess.run(apply, {g: [1, 2], step: 0})
    np.testing.assert_array_equal(sess.run(take), [1, 2])  # global step now 1
    sess.run(apply, {g: [5, 5], step: 0})                   # stale: dropped
    # a stale gradient is dropped before any check, as in TF
    sess.run(apply, {g: [1, 2, 3], step: 0})
    assert sess.run(n) == 0
    sess.run(apply, {g: [3, 4], step: 1})
    sess.run(apply, {g: [9, 9], step: 7})                   # newer is accepted
    assert sess.run(n) == 2
    sess.run(set_step, {step: 10})                          # nothing dropped by a move
    assert sess.run(n) == 2
    np.testing.assert_array_equal(sess.run(take), [6, 6.5])
    sess.run(apply, {g: [1, 1], step: 10})                  # 10 < 11: stale
    assert sess.run(n) == 0
    sess.run(set_step, {step: 3})                           # backwards: logged, done
    sess.run(apply, {g: [1, 1], step: 3})
    assert sess.run(n) == 1


def test_dense_shape_checks(graph, sess):
    a = tf.ConditionalAccumulator(tf.float32, shape=[2])
    with pytest.raises(ValueError, match="incompatible"):
        a.apply_grad([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="'MEAN', 'SUM'|\"MEAN\", \"SUM\""):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.ConditionalAccumulator(tf.string)
    g = tf.placeholder(tf.float32)
    apply = a.apply_grad(g)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Shape mismatch: expected \[2\], got \[1,2\]"):
        sess.run(apply, {g: [[1, 2]]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Argument num_required must be positive, but was 0"):
        sess.run(a.take_grad(0))
    # unknown shape: the first gradient of a round fixes it until the take
    u = tf.ConditionalAccumulator(tf.float32, shape=[None, 2])
    ug = tf.placeholder(tf.float32)
    uapply, utake = u.apply_grad(ug), u.take_grad(1)
    assert utake.shape.as_list() == [None, 2]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"expected \[\?,2\], got \[3\]"):
        sess.run(uapply, {ug: [1, 2, 3]})
    sess.run(uapply, {ug: [[1, 2]]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"expected \[1,2\], got \[2,2\]"):
        sess.run(uapply, {ug: [[1, 2], [3, 4]]})
    np.testing.assert_array_equal(sess.run(utake), [[1, 2]])
    sess.run(u.apply_grad(np.ones((3, 2), np.float32), local_step=1))
    assert sess.run(utake).shape == (3, 2)


@pytest.mark.timeout(60)
def test_take_blocks_until_enough_gradients_arrive_from_other_threads(graph, sess):
    a = tf.ConditionalAccumulator(tf.float64, shape=[3])
    g = tf.placeholder(tf.float64, [3])
    apply, take, n = a.apply_grad(g), a.take_grad(4), a.num_accumulated()
    out = []
    taker = threading.Thread(target=lambda: out.append(sess.run(take)))
    taker.start()
    grads = np.arange(12.0).reshape(4, 3)
    for x in grads[:3]:
        sess.run(apply, {g: x})
    assert not out  # three of four: still waiting
    assert sess.run(n) == 3
    sess.run(apply, {g: grads[3]})
    taker.join(30)
    assert not taker.is_alive()
    np.testing.assert_allclose(out[0], grads.mean(0))


@pytest.mark.timeout(60)
def test_a_waiting_take_is_cancelled_by_a_timeout_and_by_session_close(graph):
    a = tf.ConditionalAccumulator(tf.float32, shape=[1])
    apply, take, n = a.apply_grad([2.0]), a.take_grad(2), a.num_accumulated()
    sess = tf.Session()
    sess.run(apply)
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(take, options=tf.RunOptions(timeout_in_ms=100))
    assert sess.run(n) == 1  # the cancelled take consumed nothing
    sess.run(apply)
    np.testing.assert_array_equal(sess.run(take), [2.0])
    errs = []

    def wait():
        try:
            sess.run(take)
        except tf.errors.OpError as e:
            errs.append(e)
    t = threading.Thread(target=wait)
    t.start()
    time.sleep(0.5)  # lets the take start waiting (ordering only; nothing is timed)
    sess.close()
    t.join(30)
    assert not t.is_alive()
    assert errs and isinstance(errs[0], tf.errors.CancelledError)


@pytest.mark.timeout(60)
def test_shared_accumulators_serve_every_session_on_a_target():
    target = "local://accumulators_%s" % uuid.uuid4().hex
    graphs = []
    for _ in range(2):
        g = tf.Graph()
        with g.as_default():
            a = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="shared_acc")
            graphs.append((g, a.apply_grad([1.0, 3.0]), a.take_grad(2),
                           a.num_accumulated()))
    s0 = tf.Session(target, graph=graphs[0][0])
    s1 = tf.Session(target, graph=graphs[1][0])
    s0.run(graphs[0][1])
    s1.run(graphs[1][1])
    assert s0.run(graphs[0][3]) == 2
    np.testing.assert_array_equal(s1.run(graphs[1][2]), [1.0, 3.0])
    g = tf.Graph()
    with g.as_default():
        bad = tf.ConditionalAccumulator(tf.float32, shape=[3], shared_name="shared_acc")
        with tf.Session(target) as s2:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Shared accumulator 'shared_acc' has dtype float32 "
                                     r"and shape \[2\]"):
                s2.run(bad.num_accumulated())
    s0.close()
    s1.close()


def test_replica_ids_are_recorded(graph, sess):
    a = tf.ConditionalAccumulator(tf.float32, shape=[])
    step = tf.placeholder(tf.int64)
    applies = [a.apply_grad(1.0, local_step=step, replica_id=i) for i in range(3)]
    assert applies[2].get_attr("_replica_id") == 2
    assert a.apply_grad(1.0).get_attr("_replica_id") == -1
    status = a.replica_status()
    assert [t.dtype for t in status] == [tf.int64, tf.int32, tf.int32, tf.float64,
                                         tf.int64, tf.int32, tf.float64]
    sess.run([applies[2], applies[0]], {step: 0})
    gstep, count, ids, secs, a_steps, a_ids, a_secs = sess.run(status)
    assert (gstep, count, ids.tolist()) == (0, 2, [0, 2]) and secs >= 0
    sess.run(a.take_grad(2))
    sess.run(applies[1], {step: 0})  # stale, but logged
    gstep, count, ids, _, a_steps, a_ids, a_secs = sess.run(status)
    assert (gstep, count, ids.tolist()) == (1, 0, [])
    assert a_steps.tolist() == [0, 0, 0] and sorted(a_ids.tolist()) == [0, 1, 2]
    assert np.all(a_secs >= 0)


# --- sparse ------------------------------------------------------------------------------
def _dense(indices, values, rows):
    out = np.zeros((rows,) + values.shape[1:], values.dtype)
    np.add.at(out, indices, values)
    return out


def test_sparse_mean_per_index_against_numpy(graph, sess):
    a = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 2])
    assert isinstance(a, tf.sparse.SparseConditionalAccumulator)
    i = tf.placeholder(tf.int64)
    v = tf.placeholder(tf.float32)
    apply = a.apply_grad(i, v, grad_shape=[5, 2])
    assert apply.type == "SparseAccumulatorApplyGradient"
    assert apply.get_attr("has_known_shape") is True
    take = a.take_grad(3)
    assert type(take).__name__ == "SparseAccumulatorTakeGradient"
    assert [t.dtype for t in take] == [tf.int64, tf.float32, tf.int64]
    grads = [([1, 3], [[3, 4], [1, 2]]), ([0, 1], [[30, 40], [10, 20]]),
             ([4, 1, 4], [[1, 1], [2, 2], [5, 5]])]  # unsorted, repeated index
    for idx, val in grads:
        sess.run(apply, {i: idx, v: val})
    assert sess.run(a.num_accumulated()) == 3
    got = sess.run(take)
    assert got.indices.dtype == np.int64 and got.values.dtype == np.float32
    np.testing.assert_array_equal(got.indices, [0, 1, 3, 4])
    np.testing.assert_array_equal(got.shape, [5, 2])
    # each row is averaged over the gradients that had its index
    dense = [_dense(np.array(x), np.array(y, np.float32), 5) for x, y in grads]
    counts = np.array([1, 3, 0, 1, 1])[[0, 1, 3, 4]]
    np.testing.assert_allclose(got.values, sum(dense)[[0, 1, 3, 4]] / counts[:, None])


def test_sparse_sum_indexed_slices_and_unknown_shape(graph, sess):
    a = tf.SparseConditionalAccumulator(tf.float64, reduction_type="SUM")
    grad = tf.IndexedSlices(tf.constant([[1.0, 2.0]], tf.float64), tf.constant([2], tf.int64))
    apply = a.apply_indexed_slices_grad(grad)
    apply_noshape = a.apply_grad([2, 0], np.array([[1.0, 1.0], [4.0, 4.0]]))
    assert apply_noshape.get_attr("has_known_shape") is False
    take = a.take_indexed_slices_grad(2)
    assert isinstance(take, tf.IndexedSlices)
    sess.run([apply])
    sess.run([apply_noshape])
    got = sess.run(take)
    assert isinstance(got, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(got.indices, [0, 2])
    np.testing.assert_array_equal(got.values, [[4, 4], [2, 3]])
    np.testing.assert_array_equal(got.dense_shape, [-1, 2])


def test_sparse_errors_as_tf_reports_them(graph, sess):
    a = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    i = tf.placeholder(tf.int64)
    v = tf.placeholder(tf.float32)
    sh = tf.placeholder(tf.int64)
    apply = a.apply_grad(i, v, grad_shape=sh)
    apply_noshape = a.apply_grad(i, v)
    cases = [
        (apply, {i: [1], v: [[1, 2, 3]], sh: [4, 3]},
         "Shape mismatch: expected shape dim 1 to be 2, got 3"),
        (apply, {i: [1], v: [[1, 2, 3]], sh: [4, 2]},
         "Shape mismatch: expected values dim 1 to be 2, got 3"),
        (apply, {i: [1, 2], v: [[1, 2]], sh: [4, 2]},
         "Expected 2 non-empty input values, got 1"),
        (apply, {i: [1], v: [[1, 2]], sh: [5, 2]},
         "Shape mismatch: expected shape dim 0 to be 4, got 5"),
        (apply, {i: [1], v: [[1, 2]], sh: [4]},
         "Shape mismatch: expected shape rank at least 2, got 1"),
        (apply_noshape, {i: [7], v: [[1, 2]]},
         "Shape mismatch: index of slice 0 exceeded limits of shape; index is 7 "
         "exceeded 4"),
    ]
    for op, feed, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(op, feed)
    assert sess.run(a.num_accumulated()) == 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_required must be positive"):
        sess.run(a.take_grad(-1))


def test_sparse_dense_shape_comes_from_the_gradients_when_the_attr_has_none(graph, sess):
    # SyncReplicasOptimizer builds its sparse accumulators with shape=(), as TF does
    a = tf.SparseConditionalAccumulator(tf.float32, shape=())
    sess.run(a.apply_grad([3], [[1.0, 2.0]], grad_shape=[5, 2]))
    got = sess.run(a.take_indexed_slices_grad(1))
    np.testing.assert_array_equal(got.dense_shape, [5, 2])
    np.testing.assert_array_equal(got.indices, [3])
