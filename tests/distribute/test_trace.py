"""Traced steps on a cluster (issue 17): each task returns its step stats with RunGraph,
the master merges them into RunMetadata with per-task device names, on one wall-clock
time axis; the timeline draws a lane per task device and an arrow per transfer between
tasks; output_partition_graphs returns every task's partitions."""
import json
import time

import numpy as np

import tensorweave as tf
from tensorweave.client import timeline

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"


def _graph(doubling_device: str = "/job:worker/task:1"):
    """x -> dbl (x * 2, on `doubling_device`) -> total (sum(dbl + 1), on task 0)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        with tf.device(doubling_device):
            y = tf.multiply(x, 2.0, name="dbl")
        with tf.device("/job:worker/task:0"):
            z = tf.reduce_sum(y + 1.0, name="total")
    return g, x, z


def test_step_stats_of_every_task_on_one_time_axis(make_cluster):
    c = make_cluster({"worker": 2}, config={"device_count": {"CPU": 2}})
    g, x, z = _graph()
    with g.as_default():
        with tf.device("/job:worker/task:1/device:CPU:1"):
            w = tf.negative(x, name="neg")
    with tf.Session(c.target(), graph=g) as sess:
        md = tf.RunMetadata()
        before = time.time_ns() // 1000
        out, wv = sess.run([z, w], {x: np.arange(4, dtype=np.float32)}, options=FULL,
                           run_metadata=md)
        after = time.time_ns() // 1000
        plain = tf.RunMetadata()
        sess.run(z, {x: np.zeros(4, np.float32)}, options=tf.RunOptions(),
                 run_metadata=plain)
    assert out == 2 * 6 + 4
    np.testing.assert_array_equal(wv, -np.arange(4))
    assert plain.step_stats.dev_stats == []
    devs = {d.device: {n.node_name: n for n in d.node_stats}
            for d in md.step_stats.dev_stats}
    assert set(devs) == {W0, W1, "/job:worker/replica:0/task:1/device:CPU:1"}
    assert "dbl" in devs[W1] and "total" in devs[W0]
    assert "neg" in devs["/job:worker/replica:0/task:1/device:CPU:1"]
    dbl = devs[W1]["dbl"]
    assert [d.size for d in dbl.output[0].tensor_description.shape.dim] == [4]
    assert dbl.output[0].tensor_description.dtype == 1
    assert dbl.timeline_label == "dbl = Mul(x, dbl/y)"
    (send,) = [n for n in devs[W1].values() if "= _Send(dbl:0 @%s)" % W0 in n.timeline_label]
    (recv,) = [n for n in devs[W0].values() if "= _Recv(dbl:0 @%s)" % W1 in n.timeline_label]
    # the tasks' clocks are the machine's wall clock: one axis, in the client's window
    for ds in devs.values():
        for n in ds.values():
            assert before <= n.all_start_micros <= n.all_start_micros + \
                n.all_end_rel_micros <= after
    assert dbl.all_start_micros + dbl.all_end_rel_micros <= send.all_start_micros
    assert send.all_start_micros <= recv.all_start_micros + recv.all_end_rel_micros
    for ds in md.step_stats.dev_stats:
        assert all(ds.thread_names[n.thread_id].startswith("tw-")
                   for n in ds.node_stats if n.thread_id in ds.thread_names)

    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_memory=True))
    events = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(procs.values()) == sorted(devs)
    ends = {e["id"]: e for e in events if e["ph"] == "t"}
    # arrows between devices (those between threads of one device are drawn too, as
    # TF draws them): the feed goes from task 0 to both devices of task 1, dbl comes
    # back
    starts = [e for e in events if e["ph"] == "s" and e["pid"] != ends[e["id"]]["pid"]]
    assert sorted((procs[s["pid"]], procs[ends[s["id"]]["pid"]], s["name"])
                  for s in starts) == [
        (W0, W1, "x"), (W0, "/job:worker/replica:0/task:1/device:CPU:1", "x"),
        (W1, W0, "dbl")]
    sends = [n for ds in devs.values() for n in ds.values() if "= _Send(" in
             n.timeline_label]
    assert len(starts) == len(sends)


def test_partition_graphs_of_every_task(make_cluster):
    c = make_cluster({"worker": 2})
    g, x, z = _graph()
    with tf.Session(c.target(), graph=g) as sess:
        md = tf.RunMetadata()
        sess.run(z, {x: np.ones(4, np.float32)},
                 options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        again = tf.RunMetadata()
        sess.run(z, {x: np.ones(4, np.float32)},
                 options=tf.RunOptions(output_partition_graphs=True), run_metadata=again)
    devices = sorted(sorted({n.device for n in gd.node}) for gd in md.partition_graphs)
    assert devices == [[W0], [W1]]
    ops = [{n.op for n in gd.node} for gd in md.partition_graphs]
    assert any("_Send" in o for o in ops) and any("_Recv" in o for o in ops)
    assert [gd.SerializeToString() for gd in again.partition_graphs] == \
        [gd.SerializeToString() for gd in md.partition_graphs]


def test_a_feed_of_an_op_on_a_tasks_accelerator_is_copied_into_its_memory(make_cluster):
    # the simulated accelerator refuses host arrays that were never copied in, as a GPU's
    # kernels do; a feed sent to a task must enter its accelerator there
    c = make_cluster({"worker": 2}, config={"device_count": {"SIM": 1}})
    g, x, z = _graph("/job:worker/task:1/device:SIM:0")
    y = g.get_tensor_by_name("dbl:0")
    with tf.Session(c.target(), graph=g) as sess:
        got_y, got_z = sess.run([y, z], {x: np.arange(4, dtype=np.float32)})
    np.testing.assert_array_equal(got_y, [0, 2, 4, 6])
    assert got_z == 16.0
