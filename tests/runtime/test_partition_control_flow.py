"""A step with control flow over several devices: the control flow on one device, live
root-frame values crossing devices (partitioned_plan.check_control_flow)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.partitioned_plan import PartitionedPlan
from tensorweave.runtime.plan import TaggedPlan

DEV = "/job:localhost/replica:0/task:0/device:CPU:%d"


def _model(spread):
    d = (lambda k: "/cpu:%d" % k) if spread else (lambda k: "")
    with tf.device(d(1)):
        n = tf.placeholder(tf.int32, [], name="n")
        x = tf.placeholder(tf.float32, [4], name="x")
        x2 = x * 2.0
    with tf.device(d(0)):
        _, r = tf.while_loop(lambda i, v: i < n,
                             lambda i, v: (i + 1, tf.tanh(v) * 1.5), [0, x2])
        c = tf.cond(n > 2, lambda: r * 2.0, lambda: r - 1.0)
    with tf.device(d(2)):
        y = tf.reduce_sum(c * x) + 1.0
    with tf.device(d(0)):
        g = tf.gradients(y, x)[0]
    return n, x, y, g


def _run(spread, n_value, trace=False):
    with tf.Graph().as_default():
        n, x, y, g = _model(spread)
        cfg = tf.ConfigProto(device_count={"CPU": 3})
        with tf.Session(config=cfg) as sess:
            fd = {n: n_value, x: np.arange(4, dtype=np.float32) / 4}
            kw = {}
            if trace:
                kw = dict(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=tf.RunMetadata())
            out = sess.run([y, g], fd, **kw)
            plan = sess._get_plan((y, g), (), (n, x))
            return out, plan, kw.get("run_metadata")


@pytest.mark.parametrize("n_value", [1, 4])
def test_loop_cond_and_gradient_equal_one_device_bit_for_bit(n_value):
    want, plan1, _ = _run(False, n_value)
    got, plan, _ = _run(True, n_value)
    traced, _, md = _run(True, n_value, trace=True)
    assert not isinstance(plan1, PartitionedPlan)
    assert isinstance(plan, PartitionedPlan) and len(plan.plans) == 3
    # the partition holding the control flow runs on the tagged executor
    assert sum(isinstance(p, TaggedPlan) for p in plan.plans) == 1
    assert plan.inline_order is None
    for out in (got, traced):
        assert type(out[0]) is type(want[0]) and out[0] == want[0]
        assert out[1].dtype == np.float32 and np.array_equal(out[1], want[1])
    devices = {d.device for d in md.step_stats.dev_stats}
    assert devices == {DEV % 0, DEV % 1, DEV % 2}


def test_a_dead_value_crossing_devices_is_unimplemented(graph):
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [], name="x")

    def branch():
        with tf.device("/cpu:1"):
            return tf.identity(x * 3.0, name="in_branch")
    with tf.device("/cpu:0"):
        r = tf.cond(p, branch, lambda: x)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        with pytest.raises(tf.errors.UnimplementedError) as info:
            sess.run(r, {p: True, x: 1.0})
    msg = str(info.value)
    assert "cond" in msg and "across devices" in msg and DEV % 1 in msg


def test_an_untaken_branch_fetched_from_the_control_flow_partition(graph):
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [], name="x")
        x2 = x + 1.0
    with tf.device("/cpu:0"):
        p = tf.placeholder(tf.bool, [], name="p")
        _, sw_t = _switch(x2, p)
        t = tf.identity(sw_t, name="taken_if_true")
    with tf.device("/cpu:2"):
        z = x2 * 2.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
        assert sess.run([t, z], {x: 1.0, p: True}) == [2.0, 4.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
            sess.run([z, t], {x: 1.0, p: False})


def _switch(data, pred):
    from tensorweave.ops.control_flow import control_flow_ops
    return control_flow_ops.switch(data, pred)


def test_a_failing_partition_cancels_the_control_flow_partition(graph):
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [], name="x")
        bad = tf.check_numerics(x, "no nan here")
    with tf.device("/cpu:0"):
        r = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + bad), [0, 0.0])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        assert sess.run(r, {x: 1.0})[1] == 3.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="no nan here"):
            sess.run(r, {x: np.nan})
