"""Islands of the tagged executor (runtime/islands.py): runs of cheap synchronous nodes
scheduled as one node, with the results, deadness, errors and traces of the unfused
program."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import plan as plan_module
from tensorweave.runtime import policy as P
from tensorweave.runtime import tagged


@pytest.fixture(autouse=True)
def _tagged(monkeypatch):
    monkeypatch.setenv("TW_EXECUTOR", "tagged")


def compiled(sess, fetches, feeds=()):
    sg = plan_module.prune(fetches, [], list(feeds))
    plan_module.place(sg, sess._device_manager, False)
    return tagged.compile_tagged(sg, sess._binder, P.ExecutionPolicy(2))


def island_names(prog):
    return {prog.op[root].name: [prog.op[m].name for m in members]
            for root, members in prog.fused.islands.items()}


def test_loop_body_and_predicate_fuse(graph, sess):
    n = tf.placeholder(tf.int32, [], name="n")
    i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 2.0 + 1.0),
                         [tf.constant(0), tf.constant(0.0)])
    prog = compiled(sess, [i, a], [n])
    islands = island_names(prog)
    # the predicate with its LoopCond; the pivot with the body's constants and add
    assert islands["while/Less"] == ["while/Less", "while/LoopCond"]
    assert islands["while/Identity"][:3] == ["while/Identity", "while/add/y", "while/add"]
    # nodes inside an island are never scheduled on their own: no edge leads to them
    members = {m for ms in prog.fused.islands.values() for m in ms[1:]}
    assert not any(dst in members for k, edges in enumerate(prog.fused.out_edges)
                   if k not in members for port in edges for dst, _ in port)
    assert not any(dst in members for k, dsts in enumerate(prog.fused.ctrl_out)
                   if k not in members for dst in dsts)
    got = sess.run([i, a], {n: 5})
    want = 0.0
    for _ in range(5):
        want = want * 2.0 + 1.0
    assert int(got[0]) == 5 and float(got[1]) == want
    assert [p.executor for p in sess._plans.values()] == [P.TAGGED]


def test_dead_branch_islands_and_fetched_members(graph, sess):
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: (x * 2.0 + 1.0) * 3.0,
                lambda: (x - 1.0) * 4.0 - 2.0)
    z = tf.sqrt(tf.abs(x)) + 1.0  # a run in the root frame, its middle value fetched
    mid = z.op.inputs[0]
    prog = compiled(sess, [y, mid, z], [x])
    assert any(len(ms) >= 3 for ms in prog.fused.islands.values())
    for xv in ([1.0, 2.0, 3.0], [-1.0, -2.0, 0.5]):
        xv = np.array(xv, np.float32)
        want = (xv * 2 + 1) * 3 if xv.sum() > 0 else (xv - 1) * 4 - 2
        got_y, got_mid, got_z = sess.run([y, mid, z], {x: xv})
        np.testing.assert_allclose(got_y, want, rtol=1e-6)
        np.testing.assert_allclose(got_mid, np.sqrt(np.abs(xv)), rtol=1e-6)
        np.testing.assert_allclose(got_z, np.sqrt(np.abs(xv)) + 1, rtol=1e-6)


def test_failing_member_names_its_op(graph, sess):
    n = tf.placeholder(tf.int32, [])

    def body(i):
        check = tf.debugging.assert_less(i * 2, 6, name="small_enough")
        with tf.control_dependencies([check]):
            return i + 1
    r = tf.while_loop(lambda i: i < n, body, [tf.constant(0)])
    prog = compiled(sess, [r], [n])
    assert any(prog.op[m].name.startswith("while/small_enough")
               for ms in prog.fused.islands.values() for m in ms[1:])
    assert sess.run(r, {n: 3}) == 3
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(r, {n: 5})
    assert info.value.op.name.startswith("while/small_enough")
    assert sess.run(r, {n: 2}) == 2  # the session still runs


def test_traced_run_records_every_member(graph, sess):
    n = tf.placeholder(tf.int32, [])
    r = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 3.0 - 1.0),
                      [tf.constant(0), tf.constant(1.0)])
    meta = tf.RunMetadata()
    got = sess.run(r, {n: 3}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                   run_metadata=meta)
    assert float(got[1]) == ((1.0 * 3 - 1) * 3 - 1) * 3 - 1
    names = [ns.node_name for d in meta.step_stats.dev_stats for ns in d.node_stats]
    # the members of the body's island ran (and were recorded) once per iteration
    assert names.count("while/mul") == 3 and names.count("while/sub") == 3
    assert names.count("while/Less") == 4
