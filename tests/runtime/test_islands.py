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


def test_islands_of_one_loop_body_merge(graph, sess):
    """A loop variable's add reads the pivot's constant: its island merges with the
    pivot's, whose entries are Switch outputs of the same predicate."""
    n = tf.placeholder(tf.int32, [], name="n")
    i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + 1.5),
                         [tf.constant(0), tf.constant(0.25)])
    prog = compiled(sess, [i, a], [n])
    islands = island_names(prog)
    assert set(islands["while/Identity"]) == {
        "while/Identity", "while/add/y", "while/add", "while/Identity_1", "while/add_1/y",
        "while/add_1"}
    root = next(r for r in prog.fused.islands if prog.op[r].name == "while/Identity")
    assert prog.fused.n_data[root] == 2 and root in prog.fused.mixed
    got = sess.run([i, a], {n: 7})
    assert int(got[0]) == 7 and float(got[1]) == 0.25 + 7 * 1.5
    assert [int(v) for v in sess.run([i], {n: 0})] == [0]


def _mixed_liveness_graph():
    """Two Switches of one predicate `p` whose data differ in liveness when `q` is False:
    their outputs feed the entries of one merged island."""
    from tensorweave.ops.control_flow.control_flow_ops import merge, switch
    p = tf.placeholder(tf.bool, [], name="p")
    q = tf.placeholder(tf.bool, [], name="q")
    d1 = tf.constant(2.0, name="d1")
    d2 = switch(tf.constant(5.0, name="d2"), q, name="gate")[1]  # dead when q is False
    id1 = tf.identity(switch(d1, p, name="s1")[1], name="id1")
    id2 = tf.identity(switch(d2, p, name="s2")[1], name="id2")
    y1, y2 = tf.add(id1, id1, name="y1"), tf.multiply(id2, id2, name="y2")
    z = tf.add(y1, y2, name="z")  # reads both islands: they merge
    fallback = switch(tf.constant(-1.0), q, name="fallback")[0]  # live when q is False
    x = tf.placeholder(tf.float32, [], name="x")  # outside: the island's control edges
    with tf.control_dependencies([y1]):          # leave it
        after_y1 = tf.identity(x, name="after_y1")
    with tf.control_dependencies([y2]):
        after_y2 = tf.identity(x, name="after_y2")
    outs = [y1, merge([z, fallback])[0], after_y1,
            merge([after_y2, switch(tf.constant(-9.0), q)[0]])[0]]
    return p, q, x, outs


def test_merged_island_with_entries_of_different_liveness(graph, sess):
    p, q, x, outs = _mixed_liveness_graph()
    prog = compiled(sess, outs, [p, q, x])
    merged = [r for r, ms in prog.fused.islands.items()
              if {"id1", "id2", "z"} <= {prog.op[m].name for m in ms}]
    assert merged and len(prog.fused.mixed[merged[0]][1]) == 2  # y1's and y2's
    # all live; one entry dead (its members dead, the other's live, control edges
    # dead or live with their member); all dead (p False: the fetches are dead)
    def run(p_value, q_value):
        return [float(v) for v in sess.run(outs, {p: p_value, q: q_value, x: 3.0})]
    assert run(True, True) == [4.0, 29.0, 3.0, 3.0]
    assert run(True, False) == [4.0, -1.0, 3.0, -9.0]
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(outs[0], {p: False, q: True, x: 3.0})  # a dead fetch: the branch not taken
