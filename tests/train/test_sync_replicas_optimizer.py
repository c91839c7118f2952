"""tf.train.SyncReplicasOptimizer with threads as replicas: each replica builds its own
graph (between-graph replication) and runs it in its own session on one in-process
target, whose resources (variables, accumulators, the token queue) all sessions share.
The local step variable of each replica gets its own name through a name scope (in a
cluster it would live on the replica's own task)."""
import logging
import threading
import time
import uuid

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train.sync_replicas_optimizer import BackupWorkerPolicy, barrier_report

LR = 0.5
X = np.arange(12, dtype=np.float32).reshape(4, 3) / 4


def _poll(fn, limit=3000):
    """Waits until `fn()` holds (a hang guard; the per-test timeout bounds the wait)."""
    for _ in range(limit):
        if fn():
            return
        time.sleep(0.01)
    raise AssertionError("condition never held")


class Replica:
    """One replica's graph and session: loss 0.5 * |w - X[i]|^2, gradient w - X[i]."""

    def __init__(self, target, i, m, n, **kwargs):
        self.g = tf.Graph()
        with self.g.as_default():
            self.step = tf.train.get_or_create_global_step()
            self.w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
            loss = 0.5 * tf.reduce_sum(tf.square(self.w - X[i]))
            self.opt = tf.train.SyncReplicasOptimizer(
                tf.train.GradientDescentOptimizer(LR), m, n, replica_id=i, **kwargs)
            with tf.name_scope("replica%d" % i):
                self.train = self.opt.minimize(loss, global_step=self.step)
            self.init = tf.global_variables_initializer()
            self.local_init = tf.local_variables_initializer()
            self.tokens = self.opt.get_init_tokens_op(0)
            self.num = self.opt._accumulator_list[0][0].num_accumulated()
        self.sess = tf.Session(target, graph=self.g)
        self.coord = None

    def start_chief(self):
        self.sess.run([self.init])
        self.sess.run([self.local_init])
        self.sess.run(self.opt.chief_init_op)
        self.sess.run(self.tokens)
        self.coord = tf.train.Coordinator()
        self.opt.get_chief_queue_runner().create_threads(self.sess, coord=self.coord,
                                                         daemon=True, start=True)
        self.opt.start_barrier_monitor(self.sess, self.coord)

    def start_worker(self):
        self.sess.run(self.local_init)
        self.sess.run(self.opt.local_step_init_op)

    def close(self):
        if self.coord is not None:
            self.coord.request_stop()
        self.sess.close()


def _replicas(m, n, **kwargs):
    target = "local://sync_replicas_%s" % uuid.uuid4().hex
    reps = [Replica(target, i, m, n, **kwargs) for i in range(n)]
    reps[0].start_chief()
    for r in reps[1:]:
        r.start_worker()
    return reps


@pytest.mark.timeout(90)
def test_all_replicas_aggregate_the_mean_gradient_and_global_step_counts_steps():
    n, steps = 3, 4
    reps = _replicas(n, n)
    try:
        def loop(r):
            for _ in range(steps):
                r.sess.run(r.train)
        threads = [threading.Thread(target=loop, args=(r,)) for r in reps]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        step, w = reps[1].sess.run([reps[1].step, reps[1].w])
        expected = np.zeros(3, np.float32)
        for _ in range(steps):  # every step: the mean of the n replicas' gradients
            expected = expected - LR * np.mean(expected - X[:n], axis=0)
        assert step == steps
        np.testing.assert_allclose(w, expected, rtol=1e-6)
    finally:
        for r in reps:
            r.close()


@pytest.mark.timeout(90)
def test_backup_workers_complete_a_step_with_the_first_m_and_drop_late_gradients():
    reps = _replicas(2, 3)
    try:
        def run(i):
            t = threading.Thread(target=reps[i].sess.run, args=(reps[i].train,))
            t.start()
            return t

        first = [run(0), run(1)]  # step 0 completes with replicas 0 and 1
        for t in first:
            t.join(30)
        assert not any(t.is_alive() for t in first)
        r = reps[2]
        assert r.sess.run(r.step) == 1
        w1 = -LR * np.mean(-X[:2], axis=0)
        np.testing.assert_allclose(r.sess.run(r.w), w1, rtol=1e-6)
        r.sess.run(r.train)  # computed at step 0: stale, dropped; takes a token
        assert r.sess.run(r.num) == 0
        # step 1: replica 2 arrives first, then replica 0; replica 1 is then late
        t2 = run(2)
        _poll(lambda: r.sess.run(r.num) == 1)
        t0 = run(0)
        for t in (t2, t0):
            t.join(30)
        assert not t2.is_alive() and not t0.is_alive()
        assert r.sess.run(r.step) == 2
        w2 = w1 - LR * np.mean(w1 - X[[2, 0]], axis=0)
        np.testing.assert_allclose(r.sess.run(r.w), w2, rtol=1e-6)
        reps[1].sess.run(reps[1].train)  # computed at step 1: stale
        assert r.sess.run(r.num) == 0
        np.testing.assert_allclose(r.sess.run(r.w), w2, rtol=1e-6)
    finally:
        for r in reps:
            r.close()


@pytest.mark.timeout(90)
def test_bounded_staleness_aggregates_a_late_gradient_into_the_next_step():
    reps = _replicas(2, 3, staleness_bound=1)
    try:
        threads = [threading.Thread(target=reps[i].sess.run, args=(reps[i].train,))
                   for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        r = reps[2]
        assert r.sess.run(r.step) == 1
        w1 = -LR * np.mean(-X[:2], axis=0)
        r.sess.run(r.train)  # one step late: kept for step 1
        assert r.sess.run(r.num) == 1
        t0 = threading.Thread(target=reps[0].sess.run, args=(reps[0].train,))
        t0.start()
        t0.join(30)
        assert r.sess.run(r.step) == 2
        # both gradients were computed at w1 (replica 2's carried local step 0)
        w2 = w1 - LR * np.mean([w1 - X[2], w1 - X[0]], axis=0)
        np.testing.assert_allclose(r.sess.run(r.w), w2, rtol=1e-6)
    finally:
        for r in reps:
            r.close()


class _Captured(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []
        self.seen = threading.Event()

    def emit(self, record):
        msg = record.getMessage()
        self.messages.append(msg)
        if "have not contributed" in msg:
            self.seen.set()


@pytest.mark.timeout(90)
def test_a_step_stuck_at_the_barrier_names_the_missing_replicas():
    handler = _Captured()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    reps = _replicas(3, 3, barrier_diagnosis_secs=0.2)
    try:
        waiting = [threading.Thread(target=reps[i].sess.run, args=(reps[i].train,))
                   for i in (2, 0)]
        for t in waiting:
            t.start()
        assert handler.seen.wait(60)
        msg = next(m for m in handler.messages if "have not contributed" in m)
        assert "global step 0 has waited" in msg
        assert "replicas that have not contributed to step 0: [1] (contributed: [0, 2])" \
            in msg
        reps[1].sess.run(reps[1].train)  # the missing replica arrives: the step completes
        for t in waiting:
            t.join(30)
        assert not any(t.is_alive() for t in waiting)
        assert reps[1].sess.run(reps[1].step) == 1
    finally:
        logger.removeHandler(handler)
        for r in reps:
            r.close()


def test_barrier_report_without_replica_ids():
    status = (3, 1, np.zeros(0, np.int32), 75.0)
    msg = barrier_report([status], 4, 2)
    assert msg.startswith("SyncReplicasOptimizer: global step 3 has waited 75.0 s at the "
                          "barrier: 1 of 2 gradients")
    assert "carry no replica ids" in msg


def test_backup_worker_policy_chooses_the_hand_computed_optimum():
    # replica 3 straggles 10x: E[T_(m)] = [1, 1, 1, 10], m / E = [1, 2, 3, 0.4] -> 3
    p = BackupWorkerPolicy(4)
    assert p.choose() is None
    for _ in range(5):
        p.record_round([1.0, 1.0, 10.0, 1.0])
    np.testing.assert_allclose(p.expected_order_statistics(), [1, 1, 1, 10])
    np.testing.assert_allclose(p.throughput(), [1, 2, 3, 0.4])
    assert p.choose() == 3
    # heavy tail in one of two rounds: E = [1, 2, 3, 12], m / E = [1, 1, 1, 1/3]:
    # a tie between 1, 2 and 3 goes to the largest
    p = BackupWorkerPolicy(4)
    p.record_round([2, 1, 4, 3])
    p.record_round([3, 20, 1, 2])
    np.testing.assert_allclose(p.expected_order_statistics(), [1, 2, 3, 12])
    assert p.choose() == 3
    # no stragglers: all replicas (E = [1, 1, 2, 2]: m / E = [1, 2, 1.5, 2])
    p = BackupWorkerPolicy(4)
    p.record_round([1, 2, 1, 2])
    assert p.choose() == 4
    # min_replicas bounds the choice; the window keeps the latest rounds
    p = BackupWorkerPolicy(4, min_replicas=2, window=2)
    for times in ([1, 9, 9, 9], [1, 1, 1, 1], [1, 1, 1, 1]):
        p.record_round(times)
    assert p.num_rounds == 2 and p.choose() == 4
    p = BackupWorkerPolicy(3, min_replicas=2)
    p.record_round([1, 100, 200])  # m=1 would be best, but at least 2
    assert p.choose() == 2
    with pytest.raises(ValueError, match="min_replicas"):
        BackupWorkerPolicy(3, min_replicas=4)
    with pytest.raises(ValueError, match="a round needs 3 times"):
        BackupWorkerPolicy(3).record_round([1, 2])


def test_backup_worker_policy_reads_rounds_from_an_arrival_log():
    p = BackupWorkerPolicy(3)
    # step 0: all three (replica 0 twice: its first arrival counts); step 1: two only
    steps = [0, 0, 0, 0, 1, 1]
    ids = [0, 1, 0, 2, 1, 2]
    secs = [1.0, 2.0, 5.0, 8.0, 1.0, 1.0]
    assert p.record_arrivals(steps, ids, secs) == 1
    np.testing.assert_allclose(p.expected_order_statistics(), [1, 2, 8])
    assert p.record_arrivals(steps, ids, secs) == 0  # each step once
    assert p.record_arrivals(steps + [1], ids + [0], secs + [4.0]) == 1
    np.testing.assert_allclose(p.expected_order_statistics(), [1, 1.5, 6])
    assert p.choose() == 2  # m / E = [1, 1.33, 0.5]


@pytest.mark.timeout(90)
def test_adaptive_backup_sets_the_number_of_gradients_to_take():
    policy = BackupWorkerPolicy(3, epoch_steps=2)
    reps = _replicas(3, 3, adaptive_backup=policy, barrier_diagnosis_secs=0)
    try:
        num_required = reps[0].opt._num_required
        assert reps[0].sess.run(num_required) == 3

        def loop(r):
            for _ in range(6):
                r.sess.run(r.train)
        threads = [threading.Thread(target=loop, args=(r,)) for r in reps]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        _poll(lambda: policy.num_rounds > 0)
        choice = policy.choose()
        assert 1 <= choice <= 3
        _poll(lambda: reps[0].sess.run(num_required) == choice)
    finally:
        for r in reps:
            r.close()


def test_argument_errors_and_tf_structure(graph):
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3)
    with pytest.raises(ValueError, match="Should be called after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="should be called after apply_gradients"):
        opt.get_init_tokens_op()
    w = tf.Variable([1.0, 2.0])
    emb = tf.Variable(np.ones((4, 2), np.float32))
    loss = tf.reduce_sum(w * w) + tf.reduce_sum(tf.gather(emb, [1, 3]))
    grads = opt.compute_gradients(loss)
    with pytest.raises(ValueError, match="Global step is required"):
        opt.apply_gradients(grads)
    with pytest.raises(ValueError, match="Must supply at least one variable"):
        opt.apply_gradients([], global_step=tf.train.get_or_create_global_step())
    step = tf.train.get_or_create_global_step()
    train = opt.apply_gradients(grads, global_step=step)
    assert isinstance(train, tf.Tensor) and train.dtype.base_dtype == tf.int64
    kinds = sorted(type(a).__name__ for a, _ in opt._accumulator_list)
    assert kinds == ["ConditionalAccumulator", "SparseConditionalAccumulator"]
    local = tf.local_variables()
    assert [v.op.name for v in local] == ["sync_rep_local_step"]
    assert isinstance(opt.get_chief_queue_runner(), tf.train.QueueRunner)
    with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: 0 "
                                         r"\(given\) vs 1 \(needed\)"):
        _too_few_tokens()
    assert opt.get_init_tokens_op(0).type == "NoOp"
    hook = opt.make_session_run_hook(is_chief=True)
    assert isinstance(hook, tf.train.SessionRunHook)
    with pytest.raises(ValueError, match="cannot be combined"):
        tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3,
                                       adaptive_backup=True, staleness_bound=1)


def _too_few_tokens():
    with tf.Graph().as_default():
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 3, 2)
        w = tf.Variable(1.0)
        opt.minimize(w * w, global_step=tf.train.get_or_create_global_step())
        opt.get_init_tokens_op(0)


@pytest.mark.timeout(90)
def test_sparse_gradients_are_averaged_per_row_over_the_replicas_that_had_it():
    target = "local://sync_sparse_%s" % uuid.uuid4().hex
    picks = ([1, 1, 2], [2, 3])
    reps = []
    for i, idx in enumerate(picks):
        g = tf.Graph()
        with g.as_default():
            step = tf.train.get_or_create_global_step()
            emb = tf.get_variable("emb", [4, 2], initializer=tf.ones_initializer())
            loss = tf.reduce_sum(tf.gather(emb, idx))
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR), 2, 2)
            with tf.name_scope("replica%d" % i):
                train = opt.minimize(loss, global_step=step)
            assert isinstance(opt.compute_gradients(loss)[0][0], tf.IndexedSlices)
            ops = dict(init=tf.global_variables_initializer(), tokens=opt.get_init_tokens_op(0),
                       local=tf.local_variables_initializer(), emb=emb, step=step,
                       train=train, opt=opt)
        ops["sess"] = tf.Session(target, graph=g)
        reps.append(ops)
    c = reps[0]
    c["sess"].run(c["init"])
    coord = tf.train.Coordinator()
    for r in reps:
        r["sess"].run(r["local"])
        r["sess"].run(r["opt"].local_step_init_op)
    c["sess"].run(c["opt"].chief_init_op)
    c["sess"].run(c["tokens"])
    c["opt"].get_chief_queue_runner().create_threads(c["sess"], coord=coord, daemon=True,
                                                    start=True)
    try:
        threads = [threading.Thread(target=r["sess"].run, args=(r["train"],)) for r in reps]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        assert c["sess"].run(c["step"]) == 1
        # per row: the sum of the replicas' rows / the number of replicas that had it
        mean = np.array([[0, 0], [2, 2], [1, 1], [1, 1]], np.float32)
        np.testing.assert_allclose(c["sess"].run(c["emb"]), 1 - LR * mean)
    finally:
        coord.request_stop()
        for r in reps:
            r["sess"].close()


def test_the_replica_id_is_the_task_index_of_the_replica_device_setter(graph):
    cluster = tf.train.ClusterSpec({"ps": ["localhost:1"],
                                    "worker": ["localhost:2", "localhost:3", "localhost:4"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster,
                                                  worker_device="/job:worker/task:2")):
        step = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3)
        opt.minimize(tf.reduce_sum(w * w), global_step=step)
    applies = [op for op in graph.get_operations()
               if op.type == "ResourceAccumulatorApplyGradient"]
    assert len(applies) == 1 and applies[0].get_attr("_replica_id") == 2
    assert applies[0].inputs[0].op.device == "/job:ps/task:0"
    local_step = tf.local_variables()[0]
    assert local_step.device == "/job:worker/task:2"


@pytest.mark.timeout(60)
def test_variable_averages_are_updated_after_each_aggregated_step(graph):
    step = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
    ema = tf.train.ExponentialMovingAverage(0.5)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR), 1,
                                         variable_averages=ema, variables_to_average=[w])
    train = opt.minimize(0.5 * tf.reduce_sum(tf.square(w - X[0])), global_step=step)
    hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
    with tf.train.MonitoredSession(hooks=[hook], stop_grace_period_secs=1) as sess:
        sess.run(train)
        w1 = LR * X[0]
        _poll(lambda: sess.run(step) == 1)
        np.testing.assert_allclose(sess.run(w), w1, rtol=1e-6)
        _poll(lambda: np.allclose(sess.run(ema.average(w)), 0.5 * w1))


def test_barrier_diagnosis_time_from_the_argument_the_environment_or_60_s(monkeypatch):
    gd = tf.train.GradientDescentOptimizer(0.1)
    monkeypatch.delenv("TENSORWEAVE_SYNC_BARRIER_DIAGNOSIS_SECS", raising=False)
    assert tf.train.SyncReplicasOptimizer(gd, 2)._diagnosis_secs == 60.0
    monkeypatch.setenv("TENSORWEAVE_SYNC_BARRIER_DIAGNOSIS_SECS", "7.5")
    assert tf.train.SyncReplicasOptimizer(gd, 2)._diagnosis_secs == 7.5
    assert tf.train.SyncReplicasOptimizer(gd, 2, barrier_diagnosis_secs=0)._diagnosis_secs \
        == 0.0
