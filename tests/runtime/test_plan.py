"""Plans (runtime/plan.py): pruning, one plan type per executor with its own run, and the
invariants each plan type documents."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import executor
from tensorweave.runtime import plan as plan_module
from tensorweave.runtime import policy as P
from tensorweave.runtime.values import DEAD

ALL_OPTS = {"cse": True, "fold": True, "prune_noops": True}


def build(sess, fetches, feeds=(), threads=1, forced=None, opts=None):
    return plan_module.build_plan(list(fetches), [], list(feeds), sess._binder,
                                  P.ExecutionPolicy(threads, forced_executor=forced),
                                  ALL_OPTS if opts is None else opts)


def check_flat_invariants(plan):
    """Topological order over slots; free lists name each slot's last reader only."""
    written = set(plan.feed_slots)
    last_reader = {}
    for k, s in enumerate(plan.steps):
        assert s.index == k
        for i in s.ins:
            assert i in written, "step %d reads slot %d before it is written" % (k, i)
            last_reader[i] = k
        written.update(range(s.out, s.out + s.n_out))
    for k, s in enumerate(plan.steps):
        for i in s.free:
            assert last_reader[i] == k and i not in plan.fetch_slots
    assert set(plan.fetch_slots) <= written
    assert len(plan.flat) == len(plan.steps) == len(plan.ops)


def test_prune_keeps_only_what_fetches_need_and_feeds_cut(graph):
    a = tf.placeholder(tf.float32, name="a")
    b = tf.identity(a, name="b")
    c = tf.multiply(b, 2.0, name="c")
    tf.add(a, 1.0, name="unused")
    sg = plan_module.prune([c], [], [b])
    names = sorted(n.name for n in sg.nodes)
    assert names == ["b:0", "c", "c/y"]  # `a` is cut off by the feed of b, `unused` pruned
    assert [n.type for n in sg.nodes if n.name == "b:0"] == ["_Feed"]


def test_free_lists():
    frees = plan_module.free_lists([(0,), (0, 1), (2,)], keep={2})
    assert frees == [(), (0, 1), ()]


def test_sequential_plan(sess):
    x = tf.placeholder(tf.float32, [3])
    y = tf.reduce_sum(x * 2.0 + 1.0)
    z = tf.exp(x)
    plan = build(sess, [y, z], [x])
    assert type(plan) is plan_module.SequentialPlan and plan.executor == P.SEQUENTIAL
    check_flat_invariants(plan)
    assert not plan.needs_pool and plan.dead_fetch == ()
    xv = np.arange(3, dtype=np.float32)
    out = plan.run([xv], executor.RunEnv())
    np.testing.assert_allclose(out[0], np.sum(xv * 2 + 1))
    np.testing.assert_allclose(out[1], np.exp(xv))


def test_optimizations_run_before_the_plan_is_lowered(sess):
    a = tf.constant([1.0, 2.0])
    x = tf.placeholder(tf.float32, [2])
    y = tf.exp(a) * x + tf.exp(a) * x  # folded exp, then CSE of the products
    folded = build(sess, [y], [x])
    raw = build(sess, [y], [x], opts={})
    assert len(folded.steps) < len(raw.steps)
    assert folded.n_nodes_before_opt == raw.n_nodes_before_opt
    xv = np.ones(2, np.float32)
    env = executor.RunEnv()
    np.testing.assert_allclose(folded.run([xv], env)[0], raw.run([xv], env)[0])


def test_dataflow_plan_inline_with_a_state_slot(sess):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    x = q.dequeue()
    y = x * 3.0
    sess.run(q.enqueue_many([[1.0, 2.0]]))
    plan = build(sess, [y])
    assert type(plan) is plan_module.DataflowPlan and plan.executor == P.DATAFLOW
    check_flat_invariants(plan)
    assert plan.inline and not plan.needs_pool
    (deq,) = [s for s in plan.steps if s.is_async]
    fn, _, ins, *_ = plan.flat[deq.index]
    assert ins == (plan.state_slot,) + deq.ins and fn is not deq.fn  # wrapped
    assert plan.state_slot == plan.n_slots - 1
    # successor lists and pending counts describe the same graph as the step inputs
    for k, s in enumerate(plan.steps):
        preds = [j for j, succ in enumerate(plan.succ) if k in succ]
        assert plan.pending0[k] == len(preds)
    env = executor.RunEnv()
    assert plan.run([], env) == [3.0]
    assert plan.run([], env) == [6.0]


def test_dataflow_plan_with_pool_steps(sess):
    x = tf.placeholder(tf.float64, [500, 500])
    small = tf.placeholder(tf.float64, [5, 5])
    y = tf.matmul(x, x) + tf.matmul(x, x, transpose_b=True)
    w = tf.matmul(small, small)  # a known-small matmul stays inline
    plan = build(sess, [y, w], [x, small], threads=2)
    assert type(plan) is plan_module.DataflowPlan
    assert plan.needs_pool and not plan.inline
    on_pool = sorted(s.op.name for s in plan.steps if s.on_pool)
    assert on_pool == sorted([y.op.inputs[0].op.name, y.op.inputs[1].op.name])
    assert [s.cheap for s in plan.steps if s.op is w.op] == [True]
    env = executor.RunEnv()
    env.pool = executor.ThreadPool(2)
    try:
        xv, sv = np.random.RandomState(0).rand(500, 500), np.eye(5)
        out = plan.run([xv, sv], env)
    finally:
        env.close(tf.errors.CancelledError(None, None, "done"))
    np.testing.assert_allclose(out[0], xv @ xv + xv @ xv.T)
    np.testing.assert_array_equal(out[1], np.eye(5))


def test_structured_plan_has_loop_steps_and_guarded_steps(sess, monkeypatch):
    p = tf.placeholder(tf.bool, [])
    i = tf.while_loop(lambda i: i < 4, lambda i: i + 1, [0])
    y = tf.cond(p, lambda: i * 2, lambda: i - 1)
    plan = build(sess, [y], [p])
    assert type(plan) is plan_module.StructuredPlan and plan.executor == P.STRUCTURED
    check_flat_invariants(plan)
    loops = [s for s in plan.steps if s.loop is not None]
    assert len(loops) == 1 and loops[0].loop.frame.name
    assert any(s.guarded for s in plan.steps)  # the branches of the cond
    env = executor.RunEnv()
    assert plan.run([np.bool_(True)], env) == [8]
    assert plan.run([np.bool_(False)], env) == [3]
    assert plan.dead_fetch == ()  # a Merge's output is live


def test_tagged_plan(sess):
    i = tf.while_loop(lambda i: i < 4, lambda i: i + 1, [0])
    plan = build(sess, [i], forced=P.TAGGED)
    assert type(plan) is plan_module.TaggedPlan and plan.executor == P.TAGGED
    assert plan.dead_fetch == (0,) and not plan.needs_pool
    assert plan.run([], executor.RunEnv()) == [4]


def test_fetch_of_a_dead_branch_is_reported(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(1.0)
    from tensorweave.ops.control_flow.control_flow_ops import switch
    f, t = switch(x, p)
    plan = build(sess, [t], [p])
    assert plan.dead_fetch == (0,)
    assert plan.run([np.bool_(False)], executor.RunEnv()) == [DEAD]
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
        sess.run(t, {p: False})
    assert sess.run(t, {p: True}) == 1.0


def test_closed_env_refuses_steps_that_can_wait(sess):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    plan = build(sess, [q.size()])
    env = executor.RunEnv()
    env.close(tf.errors.CancelledError(None, None, "closed"))
    with pytest.raises(RuntimeError, match="closed Session"):
        build(sess, [q.dequeue()]).run([], env)
    assert plan.run([], env) == [0]  # a sequential plan needs nothing of the env


def test_control_edges_of_a_fed_placeholder_come_from_its_feed(graph, sess):
    # TF1's feed rewrite: a fed Placeholder's outgoing control edges start at the feed,
    # so an op that waits on the placeholder runs without the placeholder's kernel
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.control_dependencies([x]):
        y = tf.constant([1.0, 2.0]) * 3.0
    np.testing.assert_allclose(sess.run(y, {x: [0.0, 0.0]}), [3.0, 6.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
        sess.run(y)  # not fed: the placeholder itself runs and fails
    # other ops keep their control edges: waiting on a fed Identity still runs it
    z = tf.placeholder(tf.float32, [], name="z")
    w = tf.identity(z, name="w")
    with tf.control_dependencies([w]):
        v = tf.constant(5.0) + 0.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
        sess.run(v, {w: 1.0})
