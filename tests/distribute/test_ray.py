"""tensorweave.distribute.ray: a cluster as Ray actors (issue 15). Needs Ray (the `ray`
extra) and is deselected by default: run with `pytest -m ray tests/distribute/test_ray.py`.
"""
import json
import os
import sys
import time

import numpy as np
import pytest

import tensorweave as tf

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

from tensorweave.distribute.ray import RayCluster  # noqa: E402

# A restarted task must serve again within this many seconds (not a timing assertion:
# the bound only stops the test from hanging when restarts are broken).
_RESTART_DEADLINE_S = 60.0


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False)
    # the functions run_on_workers sends live here, a module the actors cannot import:
    # send them by value (as Ray does for a script's __main__)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ray.shutdown()


@pytest.fixture(scope="module")
def cluster(ray_local):
    # 3 tasks on 2 CPUs: each reserves a fraction. Loopback, as a one-machine cluster.
    with RayCluster(num_ps=1, num_workers=2, num_cpus_per_task=0.5,
                    host="127.0.0.1") as c:
        yield c


def _model():
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32), name="w")
        bias = tf.Variable(np.zeros(3, np.float32), name="b")
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device("/job:worker/task:1"):
        h = tf.nn.relu(tf.matmul(x, w) + bias)
    with tf.device("/job:worker/task:0"):
        loss = tf.reduce_mean(tf.square(h - 0.5))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, w, loss, train, tf.global_variables_initializer()


def _train(target, feed_val, steps=5):
    g = tf.Graph()
    with g.as_default():
        x, w, loss, train, init = _model()
        if target is None:
            for op in g.get_operations():
                op._set_device("")
        with tf.Session(target) as sess:
            sess.run(init)
            for _ in range(steps):
                got_loss, _ = sess.run([loss, train], {x: feed_val})
            return got_loss, sess.run(w)


def test_the_cluster_spec_names_one_address_per_task(cluster):
    spec = cluster.cluster_spec
    assert isinstance(spec, tf.train.ClusterSpec)
    assert sorted(spec.jobs) == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2 and spec.num_tasks("ps") == 1
    addresses = [spec.task_address(j, i) for j, i in
                 (("worker", 0), ("worker", 1), ("ps", 0))]
    assert len(set(addresses)) == 3
    assert all(a.startswith("127.0.0.1:") for a in addresses)
    assert cluster.target("ps", 0) == "grpc://" + spec.task_address("ps", 0)
    with pytest.raises(ValueError, match="No task with index 5"):
        cluster.target("worker", 5)
    with pytest.raises(ValueError, match="No task ps:3"):
        cluster.actor("ps", 3)


def test_training_on_ps_and_two_workers_equals_a_local_run(cluster):
    feed_val = np.random.RandomState(0).rand(8, 4).astype(np.float32)
    got_loss, got_w = _train(cluster.target("worker", 0), feed_val)
    want_loss, want_w = _train(None, feed_val)
    assert isinstance(got_loss, np.float32)
    assert got_loss == want_loss
    assert got_w.dtype == np.float32 and got_w.shape == (4, 3)
    np.testing.assert_array_equal(got_w, want_w)
    # the devices a client sees are the tasks' devices
    with tf.Graph().as_default(), tf.Session(cluster.target()) as sess:
        names = {d.name for d in sess.list_devices()}
    assert "/job:ps/replica:0/task:0/device:CPU:0" in names
    assert "/job:worker/replica:0/task:1/device:CPU:0" in names


def _task_of_tf_config(scale):
    config = json.loads(os.environ["TF_CONFIG"])
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    g = tf.Graph()
    with g.as_default():
        # runs on this worker's own server, found through TF_CONFIG
        with tf.Session(resolver.master()) as sess:
            value = sess.run(tf.constant(scale) * (resolver.task_id + 1))
    return config["task"], config["cluster"], resolver.master(), float(value)


def test_run_on_workers_runs_in_each_worker_with_its_tf_config(cluster):
    previous = os.environ.get("TF_CONFIG")
    results = cluster.run_on_workers(_task_of_tf_config, 1.5)
    assert os.environ.get("TF_CONFIG") == previous  # the driver's is untouched
    assert isinstance(results, list) and len(results) == 2
    assert [r[0] for r in results] == [{"type": "worker", "index": 0},
                                      {"type": "worker", "index": 1}]
    for task, spec, master, value in results:
        assert spec == cluster.cluster_spec.as_dict()
        assert master == cluster.target("worker", task["index"])
        assert value == 1.5 * (task["index"] + 1)


def _fails():
    raise ValueError("boom in a worker")


def test_run_on_workers_raises_the_workers_error(cluster):
    with pytest.raises(ValueError, match="boom in a worker"):
        cluster.run_on_workers(_fails)


def _run_on_worker_1(target):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            out = tf.constant(20.0) + tf.constant(1.0)
        with tf.Session(target) as sess:
            return sess.run(out)


def test_a_killed_worker_is_restarted_by_ray_on_the_same_address(cluster):
    actor = cluster.actor("worker", 1)
    old_pid = ray.get(actor.pid.remote())
    assert _run_on_worker_1(cluster.target("worker", 0)) == 21.0
    ray.kill(actor, no_restart=False)
    deadline = time.monotonic() + _RESTART_DEADLINE_S
    while True:
        try:
            new_pid = ray.get(actor.pid.remote(), timeout=10)
            if new_pid != old_pid:  # ray.kill is asynchronous: the old one may answer
                got = _run_on_worker_1(cluster.target("worker", 1))
                break
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError,
                tf.errors.UnavailableError, tf.errors.AbortedError):
            pass
        assert time.monotonic() < deadline, "worker:1 did not come back"
        time.sleep(0.2)
    assert got == 21.0
    assert ray.get(actor.target.remote()) == cluster.target("worker", 1)
    # and through another task's channel to it
    assert _run_on_worker_1(cluster.target("worker", 0)) == 21.0


def test_shutdown_kills_the_actors_and_frees_their_cpus(ray_local):
    c = RayCluster(num_ps=0, num_workers=1, num_cpus_per_task=0.25, host="127.0.0.1")
    actor = c.actor("worker", 0)
    assert ray.get(actor.target.remote()) == c.target()
    c.shutdown()
    c.shutdown()  # a second call does nothing
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(actor.pid.remote(), timeout=30)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_ps must be a non-negative integer"):
        RayCluster(-1, 1)
    with pytest.raises(ValueError, match="at least one task"):
        RayCluster(0, 0)
    with pytest.raises(ValueError, match="num_cpus_per_task must be > 0"):
        RayCluster(0, 1, num_cpus_per_task=0)
    with pytest.raises(TypeError, match="config must be a tf.ConfigProto"):
        RayCluster(0, 1, config={"device_count": {"CPU": 2}})


def test_the_config_reaches_the_tasks(ray_local):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with RayCluster(num_ps=0, num_workers=1, config=config, num_cpus_per_task=0.25,
                    host="127.0.0.1") as c:
        with tf.Graph().as_default(), tf.Session(c.target()) as sess:
            names = {d.name for d in sess.list_devices()}
    assert "/job:worker/replica:0/task:0/device:CPU:1" in names


def test_importing_tensorweave_and_the_module_does_not_import_ray():
    import subprocess
    import sys
    code = ("import sys, tensorweave, tensorweave.distribute.ray; "
            "print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_a_restarted_ps_serves_again_without_its_variables(ray_local):
    with RayCluster(num_ps=1, num_workers=1, num_cpus_per_task=0.25,
                    host="127.0.0.1") as c:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(3.0, name="restart_v")
            add = v.assign_add(1.0)
        actor = c.actor("ps", 0)
        old_pid = ray.get(actor.pid.remote())
        with tf.Session(c.target(), graph=g) as sess:
            sess.run(v.initializer)
            assert sess.run(add) == 4.0
            ray.kill(actor, no_restart=False)
            deadline = time.monotonic() + _RESTART_DEADLINE_S
            while True:
                try:
                    if ray.get(actor.pid.remote(), timeout=10) != old_pid:
                        break
                except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                    pass
                assert time.monotonic() < deadline, "ps:0 did not come back"
                time.sleep(0.2)
            # the old session's graph is gone from the restarted task
            with pytest.raises((tf.errors.AbortedError, tf.errors.UnavailableError)):
                sess.run(v)
        with tf.Session(c.target(), graph=g) as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="restart_v"):
                sess.run(v)
            sess.run(v.initializer)
            assert sess.run(add) == 4.0


def test_a_cluster_ray_cannot_place_times_out_and_leaves_nothing(ray_local):
    from ray.util import placement_group_table
    before = {k for k, p in placement_group_table().items() if p["state"] != "REMOVED"}
    with pytest.raises(TimeoutError, match="could not place 1 tasks of 100 CPUs"):
        RayCluster(num_ps=0, num_workers=1, num_cpus_per_task=100, start_timeout=1)
    after = {k for k, p in placement_group_table().items() if p["state"] != "REMOVED"}
    assert after == before
