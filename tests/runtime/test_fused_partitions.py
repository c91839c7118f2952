"""A step whose control flow spans CPU devices of this process runs as one compiled
program (partitioned_plan.runs_fused), with each kernel on its own device; the cases
that keep the partitions (test_partition_control_flow.py tests those)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.partitioned_plan import PartitionedPlan
from tensorweave.runtime.plan import StructuredPlan

N = 50


def _split_loop(width):
    """A while loop built on /cpu:0 whose variable k is updated on /cpu:k, and a
    variable on /cpu:1 that the body adds to; (n, loop outputs, variable)."""
    n = tf.placeholder(tf.int32, [], name="n")
    with tf.device("/cpu:1"):
        total = tf.Variable(0.0, use_resource=True, name="total")
    with tf.device("/cpu:0"):
        def body(i, *xs):
            out = []
            for k, x in enumerate(xs):
                with tf.device("/cpu:%d" % k):
                    out.append(x * 0.5 + float(k))
            with tf.device("/cpu:1"):
                bump = total.assign_add(1.0)
            with tf.control_dependencies([bump]):
                return [i + 1] + [tf.identity(x) for x in out]
        r = tf.while_loop(lambda i, *xs: i < n, body,
                          [tf.constant(0)] + [tf.constant(0.1)] * width)
    return n, r, total


def _want(width, n):
    xs = [np.float32(0.1)] * width
    for _ in range(n):
        xs = [np.float32(x * np.float32(0.5) + np.float32(k)) for k, x in enumerate(xs)]
    return xs


@pytest.mark.parametrize("width", [2, 3])
def test_a_loop_split_across_cpu_devices_runs_as_one_program(graph, width, monkeypatch):
    monkeypatch.delenv("TW_EXECUTOR", raising=False)  # (forcing the tagged one keeps parts)
    n, r, total = _split_loop(width)
    meta = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
        sess.run(total.initializer)
        got = sess.run(r, {n: N}, options=tf.RunOptions(
            output_partition_graphs=True, trace_level=tf.RunOptions.FULL_TRACE),
            run_metadata=meta)
        plan = sess._get_plan(tuple(r), (), (n,))
        assert isinstance(plan, StructuredPlan) and plan.fused
        # the variable lives on CPU:1, where its kernels ran
        assert sess.run(total) == N
        dev1 = sess._device_manager.devices[1]
        assert dev1.resources.lookup("", "total") is not None
    assert got[0] == N
    for g, w in zip(got[1:], _want(width, N)):
        assert g == w  # the same kernels in the same order: the same bits
    # the reported partitions are those the one program stands for
    assert len(meta.partition_graphs) == width if width > 1 else 1
    assert any(node.op == "_Send" for pg in meta.partition_graphs for node in pg.node)
    ran_on = {ds.device: {ns.node_name for ns in ds.node_stats}
              for ds in meta.step_stats.dev_stats}
    adds = ran_on["/job:localhost/replica:0/task:0/device:CPU:1"]
    assert any(name.endswith("AssignAddVariableOp") for name in adds)


def _plan_of(config, width=2):
    n, r, total = _split_loop(width)
    with tf.Session(config=config) as sess:
        sess.run(total.initializer)
        got = sess.run(r, {n: N})
        plan = sess._get_plan(tuple(r), (), (n,))
    np.testing.assert_allclose(got[1:], _want(width, N), rtol=2e-3)  # float16 transfers
    return plan


@pytest.mark.parametrize("config", [
    dict(device_count={"CPU": 3}, experimental={"fuse_host_partitions": False}),
    dict(device_count={"CPU": 3}, experimental={"transfer_compression": "float16"}),
    dict(device_count={"CPU": 3}, device_memory_limit_mb={"CPU": 64}),
], ids=["turned-off", "lossy-transfers", "memory-limit"])
def test_the_partitions_stay_where_their_transfers_matter(graph, config):
    plan = _plan_of(tf.ConfigProto(**config))
    assert isinstance(plan, PartitionedPlan) and not plan.fused


def test_the_environment_turns_fusing_off(graph, monkeypatch):
    monkeypatch.setenv("TW_FUSE_HOST_PARTITIONS", "0")
    assert isinstance(_plan_of(tf.ConfigProto(device_count={"CPU": 3})), PartitionedPlan)


def test_a_step_with_an_accelerator_keeps_its_partitions(graph):
    n, r, total = _split_loop(1)
    with tf.device("/device:SIM:0"):
        y = r[1] * 2.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3, "SIM": 1})) as sess:
        sess.run(total.initializer)
        assert sess.run(y, {n: 3}) == np.float32(_want(1, 3)[0] * 2)
        assert isinstance(sess._get_plan((y,), (), (n,)), PartitionedPlan)
