"""runtime/partition.py and runtime/partitioned_plan.py: one step over several devices."""
import itertools
import os
import signal
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import partition as _part
from tensorweave.runtime import plan as _plan
from tensorweave.runtime.partitioned_plan import PartitionedPlan

DEV = "/job:localhost/replica:0/task:0/device:CPU:%d"


def _config(n=3, **kw):
    return tf.ConfigProto(device_count={"CPU": n}, **kw)


def _plan_of(sess, fetches, feeds=(), targets=()):
    return sess._get_plan(tuple(fetches), tuple(targets), tuple(feeds))


def _types(sg):
    return [n.type for n in sg.nodes]


def _by_device(plan):
    return {g.nodes[0].device.name: g for g in plan.step_graphs}


# --- the partition pass ------------------------------------------------------------------
def test_one_recv_per_tensor_and_destination(graph):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [3], name="x")
        a = tf.square(x, name="a")
    with tf.device("/cpu:1"):
        b = tf.add(a, 1.0, name="b")
        c = tf.multiply(a, 2.0, name="c")
        d = tf.add(b, c, name="d")
    with tf.device("/cpu:2"):
        e = tf.subtract(a, d, name="e")
    with tf.Session(config=_config()) as sess:
        plan = _plan_of(sess, [e, a], [x])
        assert isinstance(plan, PartitionedPlan)
        assert plan.inline_order == (0, 1, 2)  # acyclic and cheap: the calling thread
        parts = _by_device(plan)
        assert sorted(parts) == [DEV % 0, DEV % 1, DEV % 2]
        # a goes to CPU:1 (two readers there) and to CPU:2: one Send/Recv pair each
        assert _types(parts[DEV % 0]).count("_Send") == 2
        assert _types(parts[DEV % 1]).count("_Recv") == 1
        assert _types(parts[DEV % 2]).count("_Recv") == 2  # a, and d from CPU:1
        recv = [n for n in parts[DEV % 1].nodes if n.type == "_Recv"][0]
        readers = [n.name for n in parts[DEV % 1].nodes
                   if any(p is recv for p, _ in n.inputs)]
        assert sorted(readers) == ["b", "c"]
        # every Recv has exactly one Send with its key, on the device the key names
        sends = {n.op.rendezvous_key: n for g in plan.step_graphs for n in g.nodes
                 if n.type == "_Send"}
        recvs = [n for g in plan.step_graphs for n in g.nodes if n.type == "_Recv"]
        assert sorted(sends) == sorted(r.op.rendezvous_key for r in recvs)
        for r in recvs:
            s = sends[r.op.rendezvous_key]
            key = r.op.rendezvous_key.split(";")
            assert key[0] == s.device.name and key[2] == r.device.name
            assert r.attrs["tensor_type"] == tf.float32 and s.attrs["T"] == tf.float32
        xv = np.array([1.0, 2.0, 3.0], np.float32)
        ev, av = sess.run([e, a], {x: xv})
        assert np.array_equal(av, xv * xv)
        assert np.array_equal(ev, av - ((av + 1) + av * 2))


def test_feeds_and_fetches_map_to_the_partitions_that_own_them(graph):
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [], name="x")
        y = tf.placeholder(tf.int32, [], name="y")
        xs = x * 2.0
    with tf.device("/cpu:0"):
        s = xs + 1.0
        ys = y * 3
    with tf.Session(config=_config(2)) as sess:
        plan = _plan_of(sess, [ys, s, xs], [y, x])
        parts = dict(zip([d.name for d in plan.devices], range(2)))
        k1, k0 = parts[DEV % 1], parts[DEV % 0]
        assert plan.feed_indices[k1] == (0, 1)  # both placeholders are on CPU:1
        assert plan.feed_indices[k0] == ()
        assert plan.fetch_map == ((k0, 0), (k0, 1), (k1, 0))
        assert sess.run([ys, s, xs], {x: 2.0, y: 4}) == [12, 5.0, 4.0]
        assert sess.run({"s": s}, {x: 1.0}) == {"s": 3.0}


def test_control_edges_cross_devices_as_empty_values(graph):
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
        inc = tf.assign_add(v, 1.0, name="inc")
    with tf.device("/cpu:1"):
        with tf.control_dependencies([inc]):
            out = tf.constant(5.0) + tf.placeholder_with_default(1.0, [], name="p")
    with tf.Session(config=_config(2)) as sess:
        sess.run(v.initializer)
        plan = _plan_of(sess, [out])
        parts = _by_device(plan)
        g0, g1 = parts[DEV % 0], parts[DEV % 1]
        send = [n for n in g0.nodes if n.type == "_Send"]
        assert len(send) == 1
        dummy = send[0].inputs[0][0]
        assert dummy.type == "Const" and dummy.value[0].size == 0
        assert [c.name for c in dummy.control_inputs] == [inc.op.name]
        recv = [n for n in g1.nodes if n.type == "_Recv"][0]
        assert recv.attrs["tensor_type"] == tf.float32
        assert any(recv in n.control_inputs for n in g1.nodes)
        for _ in range(3):
            assert sess.run(out) == 6.0
        assert sess.run(v) == 4.0  # the control edge made every run increment v


def test_the_pass_leaves_the_step_graph_unchanged(graph):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        y = x + 1.0
    with tf.Session(config=_config(2)) as sess:
        sg = _plan.prune([y], [], [x])
        _plan.place(sg, sess._device_manager, False)
        before = [(n, list(n.inputs), list(n.control_inputs), n.feed_index) for n in sg.nodes]
        first = _part.partition(sg)
        again = _part.partition(sg)
        assert [(n, list(n.inputs), list(n.control_inputs), n.feed_index)
                for n in sg.nodes] == before
        assert [_types(p.graph) for p in first.parts] == \
            [_types(p.graph) for p in again.parts]
        assert all(not set(map(id, p.graph.nodes)) & set(map(id, sg.nodes))
                   for p in first.parts)


def test_one_device_steps_keep_their_plan(graph):
    with tf.device("/cpu:1"):
        y = tf.placeholder(tf.float32, [], name="x") + 1.0
    with tf.Session(config=_config(2)) as sess:
        plan = _plan_of(sess, [y], [y.op.inputs[0]])
        assert isinstance(plan, _plan.SequentialPlan)


# --- running partitions ------------------------------------------------------------------
def _mlp(device_fn):
    """The Figure 1 model of examples/figure1_mlp.py, smaller, with a training op."""
    with tf.device(device_fn):
        x = tf.placeholder(tf.float32, [None, 8], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        W = tf.Variable(tf.random_uniform([8, 16], -0.1, 0.1, seed=1), name="W")
        b = tf.Variable(tf.zeros([16]), name="b")
        h = tf.nn.relu(tf.matmul(x, W) + b)
        W2 = tf.Variable(tf.random_uniform([16, 4], -0.1, 0.1, seed=2), name="W2")
        b2 = tf.Variable(tf.zeros([4]), name="b2")
        logits = tf.matmul(h, W2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        train = tf.train.AdagradOptimizer(0.1).minimize(loss)
    return x, labels, loss, train


def _train(device_fn, n_devices, soft=False):
    rng = np.random.RandomState(0)
    xs, ys = rng.rand(4, 6, 8).astype(np.float32), rng.randint(0, 4, (4, 6))
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x, labels, loss, train = _mlp(device_fn)
        config = _config(n_devices, allow_soft_placement=soft)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss], {x: xs[i], labels: ys[i]})[1]
                      for i in range(4)]
            plan = _plan_of(sess, [loss], [x, labels], [train.op if hasattr(train, "op")
                                                        else train])
            return losses, sess.run(tf.trainable_variables()), plan


def _variables_on_cpu1(op):
    """Variables on CPU:1, compute on CPU:0; ops that use a variable's handle or are
    colocated with one are left to follow it."""
    if op.type == "VarHandleOp":
        return "/cpu:1"
    if op._colocation or any(t.dtype == tf.resource for t in op.inputs):
        return ""
    return "/cpu:0"


@pytest.mark.parametrize("device_fn", ["round_robin", "variables_on_cpu1"])
def test_training_equals_single_device_bit_for_bit(device_fn):
    if device_fn == "round_robin":
        counter = itertools.count()
        fn = lambda op: "/cpu:%d" % (next(counter) % 3)  # noqa: E731
    else:
        fn = _variables_on_cpu1
    want_losses, want_vars, plan1 = _train(None, 1)
    # a device function that splits a variable from its users needs soft placement,
    # as in TF1 (colocation of a resource with the ops using its handle wins)
    losses, variables, plan = _train(fn, 3, soft=device_fn == "round_robin")
    assert not isinstance(plan1, PartitionedPlan)
    assert isinstance(plan, PartitionedPlan) and len(plan.plans) >= 2
    assert [float(v) for v in losses] == [float(v) for v in want_losses]
    for got, want in zip(variables, want_vars):
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_partition_graphs_and_per_device_step_stats(graph):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [2], name="x")
        a = tf.square(x, name="a")
    with tf.device("/cpu:2"):
        b = tf.add(a, 1.0, name="b")
    with tf.Session(config=_config()) as sess:
        md = tf.RunMetadata()
        out = sess.run(b, {x: [1.0, 2.0]}, options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True),
            run_metadata=md)
        assert out.tolist() == [2.0, 5.0]
        assert len(md.partition_graphs) == 2
        by_dev = {}
        for g in md.partition_graphs:
            devs = {n.device for n in g.node}
            assert len(devs) == 1
            by_dev[devs.pop()] = {n.op: n for n in g.node}
        g0, g2 = by_dev[DEV % 0], by_dev[DEV % 2]
        assert {"_Arg", "Square", "_Send"} <= set(g0)
        assert {"_Recv", "AddV2", "_Retval"} <= set(g2)
        send, recv = g0["_Send"], g2["_Recv"]
        assert send.attr["tensor_name"].s == recv.attr["tensor_name"].s == b"a:0"
        assert send.attr["send_device"].s == recv.attr["send_device"].s == \
            (DEV % 0).encode()
        assert recv.attr["recv_device"].s == (DEV % 2).encode()
        assert list(g2["AddV2"].input)[0] == recv.name
        stats = {d.device: [s.node_name for s in d.node_stats]
                 for d in md.step_stats.dev_stats}
        assert sorted(stats) == [DEV % 0, DEV % 2]
        assert "a" in stats[DEV % 0] and "b" in stats[DEV % 2]
        assert any("_send" in n for n in stats[DEV % 0])
        assert any("_recv" in n for n in stats[DEV % 2])
        # a step on one device has one partition graph
        md1 = tf.RunMetadata()
        sess.run(a, {x: [1.0, 2.0]}, options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=md1)
        assert len(md1.partition_graphs) == 1
        assert "_Send" not in {n.op for n in md1.partition_graphs[0].node}


def _blocked_dequeue(device):
    with tf.device(device):
        q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
        return q.dequeue()


def test_an_error_aborts_every_partition(graph):
    with tf.device("/cpu:1"):
        p = tf.placeholder(tf.float32, [], name="p")
        bad = tf.check_numerics(tf.log(p), "log of p")
    with tf.device("/cpu:0"):
        waits_for_bad = bad + 1.0            # a Recv that never gets its value
    stuck = _blocked_dequeue("/cpu:2") + 1.0  # a queue that never gets an element
    with tf.device("/cpu:0"):
        both = waits_for_bad + stuck
    options = tf.RunOptions(timeout_in_ms=20000)  # a hang would end as DeadlineExceeded
    with tf.Session(config=_config()) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(both, {p: -1.0}, options=options)
        msg = str(info.value)
        assert "log of p" in msg and bad.op.name in msg and DEV % 1 in msg
        # the session still runs partitioned steps
        assert sess.run(waits_for_bad, {p: 1.0}) == 1.0


def test_a_deadline_cancels_a_waiting_recv(graph):
    stuck = _blocked_dequeue("/cpu:1")
    with tf.device("/cpu:0"):
        out = stuck * 2.0
    with tf.Session(config=_config(2)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(out, options=tf.RunOptions(timeout_in_ms=200))


def test_close_cancels_a_partitioned_step(graph):
    stuck = _blocked_dequeue("/cpu:1")
    with tf.device("/cpu:0"):
        out = stuck * 2.0
    sess = tf.Session(config=_config(2))
    errors = []

    def run():
        try:
            sess.run(out)
        except Exception as e:  # noqa: BLE001 - recorded for the assertion
            errors.append(e)
    t = threading.Thread(target=run)
    t.start()
    for _ in range(1000):  # until the step is running (registered with the session)
        if sess._env._live:
            break
        t.join(0.01)
    t.join(0.05)
    sess.close()
    t.join(10)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], tf.errors.CancelledError)


def test_queues_feed_partitions_across_devices(graph):
    with tf.device("/cpu:1"):
        q = tf.FIFOQueue(10, tf.float32, shapes=[[2]])
        enq = q.enqueue_many([[[1.0, 2.0], [3.0, 4.0]]])
        deq = q.dequeue()
    with tf.device("/cpu:0"):
        out = tf.reduce_sum(deq) * 10.0
    with tf.Session(config=_config(2)) as sess:
        sess.run(enq)
        assert sess.run(out) == 30.0
        assert sess.run(out) == 70.0


def test_a_dropped_graph_is_not_kept_by_the_thread_that_ran_its_partition():
    """Partitions that may wait run on threads kept for partitions; an idle one must not
    hold its last partition's plan (and through it the graph) until it next works."""
    import gc
    import weakref

    def run_once():
        g = tf.Graph()
        with g.as_default():
            sums, enqueues = [], []
            for d in (1, 2):  # dequeues that may wait, on two devices
                with tf.device("/cpu:%d" % d):
                    q = tf.FIFOQueue(10, tf.float32, shapes=[[2]])
                    enqueues.append(q.enqueue_many([[[1.0, 2.0], [3.0, 4.0]]]))
                    deq = q.dequeue()
                with tf.device("/cpu:0"):
                    sums.append(tf.reduce_sum(deq))
            with tf.device("/cpu:0"):
                total = tf.add_n(sums)
            with tf.Session(config=_config(3)) as sess:
                sess.run(enqueues)
                assert sess.run(total) == 6.0
        return weakref.ref(g)
    ref = run_once()
    gc.collect()
    assert ref() is None


def test_concurrent_runs_from_several_threads(graph):
    counter = itertools.count()
    with tf.device(lambda op: "/cpu:%d" % (next(counter) % 3)):
        x = tf.placeholder(tf.float32, [4], name="x")
        y = tf.reduce_sum(tf.square(x) + tf.sqrt(x) * 2.0 - x)
    with tf.Session(config=_config()) as sess:
        plan = _plan_of(sess, [y], [x])
        assert isinstance(plan, PartitionedPlan) and len(plan.plans) == 3
        assert plan.inline_order is None  # CPU:0 -> 1 -> 2 -> 0: partitions on threads
        bad = []

        def worker(seed):
            rng = np.random.RandomState(seed)
            for _ in range(60):
                v = rng.rand(4).astype(np.float32)
                want = np.sum(np.square(v) + np.sqrt(v) * np.float32(2.0) - v)
                got = sess.run(y, {x: v})
                if not np.isclose(got, want, rtol=1e-6):
                    bad.append((v, got, want))
        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        assert bad == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_partitions_on_threads_of_its_own(graph):
    # the parent's partition threads wait idle when it forks; none of them exists in
    # the child, whose partitions handed to them would never run (a Saver's save in a
    # forked child hung so)
    counter = itertools.count()
    with tf.device(lambda op: "/cpu:%d" % (next(counter) % 3)):
        x = tf.placeholder(tf.float32, [4], name="x")
        y = tf.reduce_sum(tf.square(x) + tf.sqrt(x) * 2.0 - x)
    v = np.arange(4, dtype=np.float32)
    want = np.sum(np.square(v) + np.sqrt(v) * np.float32(2.0) - v)
    with tf.Session(config=_config()) as sess:
        plan = _plan_of(sess, [y], [x])
        assert isinstance(plan, PartitionedPlan) and plan.inline_order is None
        assert sess.run(y, {x: v}) == want  # partitions 1 and 2 ran on runner threads
    pid = os.fork()
    if pid == 0:  # the child: a new session of the same graph, then out
        code = 1
        try:
            with tf.Session(graph=graph, config=_config()) as child_sess:
                code = 0 if child_sess.run(y, {x: v}) == want else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's step hung")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0


def test_control_flow_over_several_devices_runs(graph):
    n = tf.placeholder(tf.int32, [], name="n")

    def body(i):
        with tf.device("/cpu:1"):  # the loop's body split from its condition
            return i + 1
    with tf.device("/cpu:0"):
        r = tf.while_loop(lambda i: i < n, body, [0])
    with tf.Session(config=_config(2)) as sess:
        assert sess.run(r, {n: 3}) == 3
        assert sess.run(r, {n: 0}) == 0


def test_control_flow_on_one_device_of_several_still_runs(graph):
    with tf.device("/cpu:1"):
        n = tf.placeholder(tf.int32, [], name="n")
        r = tf.while_loop(lambda i: i < n, lambda i: i + 1, [0])
        c = tf.cond(n > 2, lambda: r * 2, lambda: r)
    with tf.Session(config=_config(2)) as sess:
        assert sess.run(c, {n: 3}) == 6


def test_transfers_between_cpu_devices_pass_references(graph):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [1000], name="x")
    with tf.device("/cpu:1"):
        y = tf.identity(x)
    with tf.Session(config=_config(2)) as sess:
        assert isinstance(_plan_of(sess, [y], [x]), PartitionedPlan)
        v = np.arange(1000, dtype=np.float32)
        assert sess.run(y, {x: v}) is v  # fed, sent, received and fetched: never copied


def _sim_config():
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})
    with tf.Session(graph=tf.Graph(), config=config) as probe:
        assert any(d.device_type == "SIM" for d in probe.list_devices())
    return config


def test_transfers_to_and_from_the_simulated_accelerator_copy(graph):
    config = _sim_config()
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [250], name="x")
    with tf.device("/device:SIM:0"):
        y = x * 2.0
    with tf.device("/cpu:0"):
        z = y + 1.0
    with tf.Session(config=config) as sess:
        v = np.arange(250, dtype=np.float32)
        assert np.array_equal(sess.run(z, {x: v}), v * 2 + 1)
        sim = [d for d in sess._device_manager.devices if d.device_type == "SIM"][0]
        # x in, y out, and the constant 2.0, copied in once when the step is lowered
        assert sim.copy_stats == {"to_host": 1, "from_host": 2, "bytes_to_host": 1000,
                                  "bytes_from_host": 1004}
