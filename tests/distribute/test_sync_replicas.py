"""Synchronous training with a backup worker on a cluster of task processes (OSDI 2016
§4.4, Figure 4): 1 PS and 3 workers, each worker a client process running
MonitoredTrainingSession with SyncReplicasOptimizer's hook, between-graph; every step
aggregates the first 2 of 3 gradients."""
import json
import os
import subprocess
import sys

import pytest

import tensorweave as tf

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "src")

LAST_STEP = 12

_WORKER = r"""
import json, os, sys, time
sys.path.insert(0, %(src)r)
import numpy as np
import tensorweave as tf

spec, index, last_step = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
go = sys.argv[4]
data = np.random.RandomState(0).rand(32, 4).astype(np.float32)
target = data @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
cluster = tf.train.ClusterSpec(spec)
with tf.device(tf.train.replica_device_setter(
        cluster=cluster, worker_device="/job:worker/task:%%d" %% index)):
    step = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(data, w) - target))
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.2),
                                         replicas_to_aggregate=2, total_num_replicas=3)
    train = opt.minimize(loss, global_step=step)


# says the session is ready; the first step waits until every worker is (so that all
# start at global step 0 and none joins after the last step)
class Ready(tf.train.SessionRunHook):

    def after_create_session(self, session, coord):
        print("READY", flush=True)
        for _ in range(1200):
            if os.path.exists(go):
                return
            time.sleep(0.1)
        raise RuntimeError("never told to go")


hooks = [opt.make_session_run_hook(index == 0), tf.train.StopAtStepHook(last_step=last_step),
         Ready()]
runs, losses = 0, []
with tf.train.MonitoredTrainingSession(
        master="grpc://" + spec["worker"][index], is_chief=index == 0, hooks=hooks,
        save_checkpoint_secs=None, save_summaries_steps=None, stop_grace_period_secs=2,
        config=tf.ConfigProto(operation_timeout_in_ms=60000)) as sess:
    while not sess.should_stop():
        losses.append(float(sess.run([train, loss])[1]))
        runs += 1
print(json.dumps({"runs": runs, "first": losses[0], "last": losses[-1]}), flush=True)
"""


def _start_worker(spec, index, go):
    return subprocess.Popen([sys.executable, "-c", _WORKER % {"src": SRC}, json.dumps(spec),
                             str(index), str(LAST_STEP), go], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=SRC))


@pytest.mark.timeout(240)
def test_sync_replicas_with_a_backup_worker_runs_a_fixed_number_of_global_steps(
        make_cluster, tmp_path):
    c = make_cluster({"ps": 1, "worker": 3})
    go = str(tmp_path / "go")
    procs = [_start_worker(c.spec, 0, go)]
    try:
        # the other workers start once the chief has initialized the model (a worker
        # finding it uninitialized would poll every 30 s); all train once all are ready
        for i in range(3):
            if i:
                procs.append(_start_worker(c.spec, i, go))
            if procs[i].stdout.readline().strip() != "READY":
                raise AssertionError("worker %d failed: %s"
                                     % (i, procs[i].communicate(timeout=60)[1][-3000:]))
        open(go, "w").close()
        results = []
        for p in procs:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0, err[-3000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    assert all(r["runs"] >= 1 for r in results)
    # the workers trained the one model (a worker that the others outpace under load
    # may run a single step, so its own first and last losses can be equal)
    assert min(r["last"] for r in results) < max(r["first"] for r in results)
    g = tf.Graph()
    with g.as_default(), tf.Session(c.target("worker", 1)) as sess:
        with tf.device("/job:ps/task:0"):
            step = tf.train.get_or_create_global_step()
        assert sess.run(step) == LAST_STEP
