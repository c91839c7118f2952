"""RunMetadata.step_stats of traced runs (issue 17, traces): one DeviceStepStats per
device on every executor path (sequential, dataflow, structured and tagged loops,
partitions over two CPU devices with Send/Recv, a loop fused over two devices), each
NodeExecStats with TF's fields: wall-clock start, relative ends, timeline label, one
NodeOutput per output (dtype enum, shape, bytes) and the allocator's bytes."""
import collections
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import policy as P
from tensorweave.runtime import step_stats

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
DT_FLOAT, DT_INT32 = 1, 3


def traced(sess, fetches, feed_dict=None, options=FULL):
    md = tf.RunMetadata()
    before = time.time_ns() // 1000
    out = sess.run(fetches, feed_dict, options=options, run_metadata=md)
    after = time.time_ns() // 1000
    return out, md, (before, after)


def by_device(md):
    return {d.device: {n.node_name: n for n in d.node_stats} for d in md.step_stats.dev_stats}


def shape_of(output):
    return [d.size for d in output.tensor_description.shape.dim]


def test_node_exec_stats_have_tf_fields(graph):
    x = tf.placeholder(tf.float32, [4, 8], name="x")
    y = tf.reduce_sum(tf.multiply(x, 2.0, name="twice"), axis=1, name="rows")
    n = tf.shape(y, name="n")
    with tf.Session() as sess:
        (out, shape), md, (before, after) = traced(sess, [y, n],
                                                   {x: np.ones((4, 8), np.float32)})
    np.testing.assert_allclose(out, np.full(4, 16.0))
    assert [d.device for d in md.step_stats.dev_stats] == [CPU0]
    dev = md.step_stats.dev_stats[0]
    nodes = by_device(md)[CPU0]
    twice, rows = nodes["twice"], nodes["rows"]
    assert type(twice).__name__ == "NodeExecStats"
    # wall-clock microseconds since the epoch, within the run
    for r in (twice, rows):
        assert before <= r.all_start_micros <= r.all_start_micros + r.all_end_rel_micros \
            <= after
        assert r.op_start_rel_micros == 0 and r.op_end_rel_micros == r.all_end_rel_micros
    assert twice.all_start_micros <= rows.all_start_micros
    assert twice.timeline_label == "twice = Mul(x, twice/y)"
    assert rows.timeline_label == "rows = Sum(twice, rows/reduction_indices)"
    (o,) = twice.output
    assert o.slot == 0 and o.tensor_description.dtype == DT_FLOAT
    assert shape_of(o) == [4, 8]
    assert o.tensor_description.allocation_description.allocated_bytes == 4 * 8 * 4
    assert o.tensor_description.allocation_description.allocator_name == "cpu"
    assert shape_of(rows.output[0]) == [4] and rows.output_bytes == 16
    assert nodes["n"].output[0].tensor_description.dtype == DT_INT32
    (mem,) = twice.memory
    assert mem.allocator_name == "cpu" and mem.total_bytes == 128
    # the untracked CPU allocator counts the live values of a traced step: at the end
    # of `twice` its output (and the fed x is not charged) is in use
    assert mem.allocator_bytes_in_use >= 128
    assert dev.thread_names[twice.thread_id] == threading.current_thread().name
    assert dev.peak_bytes >= 128 + 16
    assert dev.total_bytes == sum(r.output_bytes for r in dev.node_stats)


def test_dataflow_pool_kernels_record_their_threads(graph):
    a = tf.placeholder(tf.float64, [500, 500], name="a")
    m1 = tf.matmul(a, a, name="m1")
    m2 = tf.matmul(a, a, transpose_b=True, name="m2")
    s = tf.add(m1, m2, name="s")
    av = np.random.RandomState(0).rand(500, 500)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        out, md, _ = traced(sess, s, {a: av})
        assert {p.executor for p in sess._plans.values()} == {P.DATAFLOW}
    np.testing.assert_allclose(out, av @ av + av @ av.T)
    (dev,) = md.step_stats.dev_stats
    nodes = {n.node_name: n for n in dev.node_stats}
    for name in ("m1", "m2"):
        assert dev.thread_names[nodes[name].thread_id].startswith("tw-inter-op-")
        assert shape_of(nodes[name].output[0]) == [500, 500]
        assert nodes[name].output[0].tensor_description.allocation_description \
            .allocated_bytes == 500 * 500 * 8


def _two_device_graph():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    with tf.device("/cpu:1"):
        y = tf.multiply(x, 3.0, name="y")
    with tf.device("/cpu:0"):
        z = tf.reduce_sum(y, name="z")
    return x, z


def test_partitions_on_two_cpu_devices_get_one_device_step_stats_each(graph):
    x, z = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        out, md, _ = traced(sess, z, {x: np.ones((2, 3), np.float32)})
        assert {p.executor for p in sess._plans.values()} == {"partitioned"}
    assert out == 18.0
    devs = by_device(md)
    assert set(devs) == {CPU0, CPU1}
    assert "y" in devs[CPU1] and "z" in devs[CPU0]
    send = [n for n in devs[CPU1].values() if n.timeline_label.split(" = ")[1]
            .startswith("_Send(")]
    recv = [n for n in devs[CPU0].values() if n.timeline_label.split(" = ")[1]
            .startswith("_Recv(")]
    assert len(send) == len(recv) == 1
    # TF's labels of a transfer: the tensor and the device at the other end
    assert send[0].timeline_label.endswith("= _Send(y:0 @%s)" % CPU0)
    assert recv[0].timeline_label.endswith("= _Recv(y:0 @%s)" % CPU1)
    assert shape_of(recv[0].output[0]) == [2, 3]
    assert send[0].output == []  # a Send has no output
    assert send[0].all_start_micros <= recv[0].all_start_micros + recv[0].all_end_rel_micros


@pytest.mark.parametrize("fuse", ["1", "0"])
def test_a_loop_spanning_two_devices(graph, monkeypatch, fuse):
    # fused into one program (the default) or run as tagged partitions with Send/Recv
    monkeypatch.setenv("TW_FUSE_HOST_PARTITIONS", fuse)
    monkeypatch.delenv("TW_EXECUTOR", raising=False)  # (forcing the tagged one keeps parts)
    x = tf.placeholder(tf.float32, [2], name="x")

    def body(i, v):
        with tf.device("/cpu:1"):
            v = tf.multiply(v, 2.0, name="dbl")
        with tf.device("/cpu:0"):
            v = tf.add(v, 1.0, name="inc")
        return i + 1, v
    _, v = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        out, md, _ = traced(sess, v, {x: np.zeros(2, np.float32)})
        fused = {p.fused for p in sess._plans.values()}
    np.testing.assert_allclose(out, [7.0, 7.0])
    assert fused == {fuse == "1"}
    recs = collections.defaultdict(list)
    for d in md.step_stats.dev_stats:
        for n in d.node_stats:
            recs[(d.device, n.node_name)].append(n)
    dbl = recs[(CPU1, "while/dbl")]
    inc = recs[(CPU0, "while/inc")]
    assert [r.iteration for r in dbl] == [r.iteration for r in inc] == [0, 1, 2]
    assert all(shape_of(r.output[0]) == [2] for r in dbl + inc)
    transfers = [n for (dev, _), ns in recs.items() for n in ns
                 if "= _Send(" in n.timeline_label or "= _Recv(" in n.timeline_label]
    assert bool(transfers) == (fuse == "0")


def test_output_partition_graphs(graph):
    x, z = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        _, md, _ = traced(sess, z, {x: np.ones((2, 3), np.float32)},
                          tf.RunOptions(output_partition_graphs=True))
    assert md.step_stats.dev_stats == []  # not traced
    devices = [{n.device for n in g.node if n.device} for g in md.partition_graphs]
    assert sorted(map(sorted, devices)) == [[CPU0], [CPU1]]
    ops = {n.op for g in md.partition_graphs for n in g.node}
    assert {"_Send", "_Recv", "_Arg", "_Retval"} <= ops


def test_wire_form_round_trips(graph):
    x, z = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        _, md, _ = traced(sess, z, {x: np.ones((2, 3), np.float32)})
    import json
    wire = json.loads(json.dumps(step_stats.to_wire(md.step_stats.dev_stats)))
    back = step_stats.from_wire(wire)
    assert back == md.step_stats.dev_stats


def test_labels_of_ops_without_inputs_and_unknown_outputs(graph):
    q = tf.FIFOQueue(2, tf.string, shapes=[[]])
    enq = q.enqueue(tf.constant(b"abc", name="s"), name="enq")
    with tf.Session() as sess:
        _, md, _ = traced(sess, enq)
    nodes = by_device(md)[CPU0]
    assert nodes["s"].timeline_label == "s = Const()"
    assert nodes["s"].output[0].tensor_description.dtype == 7  # DT_STRING
    assert nodes["enq"].output == []


def test_tensorflow_proto_form_keeps_outputs_and_memory(graph):
    # what FileWriter.add_run_metadata writes for TensorBoard
    from tensorboard.compat.proto import step_stats_pb2
    x, z = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        _, md, _ = traced(sess, z, {x: np.ones((2, 3), np.float32)})
    proto = step_stats_pb2.StepStats()
    step_stats.fill_proto(proto, md.step_stats)
    back = step_stats_pb2.StepStats.FromString(proto.SerializeToString())
    assert [d.device for d in back.dev_stats] == [d.device for d in md.step_stats.dev_stats]
    y = next(n for d in back.dev_stats for n in d.node_stats if n.node_name == "y")
    assert [d.size for d in y.output[0].tensor_description.shape.dim] == [2, 3]
    assert y.output[0].tensor_description.dtype == DT_FLOAT
    assert y.output[0].tensor_description.allocation_description.allocated_bytes == 24
    assert y.memory[0].allocator_name == "cpu" and y.memory[0].total_bytes == 24
    assert y.timeline_label == "y = Mul(x, y/y)"
