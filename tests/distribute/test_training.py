"""Training on a cluster of task processes as TF1 programs do it (issue 15): between-graph
replication with replica_device_setter and MonitoredTrainingSession, and recovery from a
lost PS through the latest checkpoint (OSDI 2016 §4.3)."""
import threading

import numpy as np

import tensorweave as tf

DATA = np.random.RandomState(0).rand(32, 4).astype(np.float32)
TARGET = DATA @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)


def _model(cluster, task_index):
    """The graph every worker builds: variables on the PS, compute on its own task."""
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster, worker_device="/job:worker/task:%d" % task_index)):
        step = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(DATA, w) - TARGET))
        train = tf.train.GradientDescentOptimizer(0.2).minimize(loss, global_step=step)
    return step, loss, train


def test_between_graph_replication_with_monitored_training_sessions(make_cluster, tmp_path):
    c = make_cluster({"ps": 1, "worker": 2})
    spec = tf.train.ClusterSpec(c.spec)
    results = {}
    chief_ready = threading.Event()

    second_started = threading.Event()

    class ChiefReady(tf.train.SessionRunHook):
        """Lets the other worker start, and waits for it before the chief's 6th step."""

        def after_create_session(self, session, coord):
            chief_ready.set()
            self.steps = 0

        def before_run(self, run_context):
            self.steps += 1
            if self.steps == 6:
                second_started.wait(60)

    def worker(index):
        if index:  # a worker finding the model uninitialized would poll every 30 s
            chief_ready.wait(60)
        g = tf.Graph()
        with g.as_default():
            step, loss, train = _model(spec, index)
            hooks = [tf.train.StopAtStepHook(last_step=60)] + ([ChiefReady()] if index == 0
                                                               else [])
            losses = []
            with tf.train.MonitoredTrainingSession(
                    master=c.target("worker", index), is_chief=index == 0,
                    checkpoint_dir=str(tmp_path) if index == 0 else None,
                    hooks=hooks, save_checkpoint_secs=None) as sess:
                while not sess.should_stop():
                    _, l = sess.run([train, loss])
                    losses.append(l)
                    if index:
                        second_started.set()
            results[index] = losses

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert set(results) == {0, 1} and all(results.values())
    # the two workers trained one model: together they took at least 60 steps
    assert len(results[0]) + len(results[1]) >= 60
    assert results[0][-1] < results[0][0] / 10
    g = tf.Graph()
    with g.as_default(), tf.Session(c.target("worker", 1)) as sess:
        with tf.device("/job:ps/task:0"):
            step = tf.train.get_or_create_global_step()
        assert sess.run(step) >= 60


def test_training_recovers_from_a_lost_ps_through_the_latest_checkpoint(make_cluster,
                                                                        tmp_path):
    c = make_cluster({"ps": 1, "worker": 1})
    spec = tf.train.ClusterSpec(c.spec)
    g = tf.Graph()
    seen = []
    with g.as_default():
        step, loss, train = _model(spec, 0)

        class KillPSOnce(tf.train.SessionRunHook):
            """Kills the PS process after step 12 and starts a new one on its address."""

            def after_run(self, run_context, run_values):
                seen.append(run_values.results)
                if run_values.results == 12 and 12 not in seen[:-1]:
                    c.kill("ps", 0)
                    c.start_task("ps", 0)

            def before_run(self, run_context):
                return tf.train.SessionRunArgs(step)

        hooks = [tf.train.StopAtStepHook(last_step=30), KillPSOnce()]
        with tf.train.MonitoredTrainingSession(
                master=c.target(), is_chief=True, checkpoint_dir=str(tmp_path),
                hooks=hooks, save_checkpoint_steps=5, save_checkpoint_secs=None,
                config=tf.ConfigProto(operation_timeout_in_ms=20000)) as sess:
            while not sess.should_stop():
                sess.run(train)
    assert seen[-1] >= 29
    restarts = [b for a, b in zip(seen, seen[1:]) if b < a]
    # after the loss of the PS, training went on from the checkpoint of step 10
    assert restarts and restarts[0] == 10
