"""The tagged-token executor (runtime/tagged.py): the steps it gets (waiting kernels in
loops, heavy loops, what the structured compiler leaves), its frame tables, deadness
across frames, errors, deadlines and cancellation."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import plan as plan_module
from tensorweave.runtime import policy as P
from tensorweave.runtime import tagged


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv("TW_EXECUTOR", raising=False)


def executors(sess):
    return [p.executor for p in sess._plans.values()]


def test_program_tables(graph, sess):
    i, s = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0), [0, 1.0],
                         parallel_iterations=4)
    frame = next(op._get_attr("frame_name") for op in graph.get_operations()
                 if op.type == "Enter")
    sg = plan_module.prune([s], [], [])
    plan_module.place(sg, sess._device_manager, False)
    prog = tagged.compile_tagged(sg, sess._binder, P.ExecutionPolicy(2))
    assert sorted(prog.frame_names.values()) == ["", frame]
    assert set(prog.parallel_iterations) == {0, 4}
    assert not prog.uses_pool and all(prog.cheap)
    assert len(prog.fetch) == 1 and prog.feeds == []
    assert tagged.run_tagged(prog, [], None) == [8.0]



def test_an_iteration_holds_the_tables_of_its_frame_only(graph, sess):
    # a loop nested in a loop, a sibling loop and 60 nodes outside every loop: each
    # node is numbered in its home frame's block (inner frames first), its input slots
    # within that frame, so a loop's iterations do not grow with the rest of the step
    def inner(j, t):
        return tf.while_loop(lambda k, u: k < 3,
                             lambda k, u: (k + 1, u + tf.cast(k, tf.float32)), [0, t])[1]
    _, outer = tf.while_loop(lambda j, t: j < 4, lambda j, t: (j + 1, inner(j, t) * 0.5),
                             [0, 1.0])
    _, sibling = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + 2.0), [0, 0.0])
    x = tf.constant(1.0)
    for _ in range(30):
        x = x * 1.5 + 1.0
    sg = plan_module.prune([outer, sibling, x], [], [])
    plan_module.place(sg, sess._device_manager, False)
    prog = tagged.compile_tagged(sg, sess._binder, P.ExecutionPolicy(2))
    for program in (prog, prog.fused):
        n = len(program.kind)
        homes = program.home
        blocks = [h for j, h in enumerate(homes) if j == 0 or homes[j - 1] != h]
        assert len(blocks) == len(set(blocks)) == 4  # contiguous, one per frame
        assert blocks[-1] == program.root_key
        for key in blocks[:-1]:
            assert program.frame_nodes[key] <= n - 60  # the root's nodes are not in it
        for key in blocks:
            mine = [k for k in range(n) if homes[k] == key]
            assert program.frame_nodes[key] == max(mine) + 1
            used = [s for k in mine for s in range(program.in_base[k], program.in_end[k])]
            assert len(used) == len(set(used))
            assert all(s < program.frame_slots[key] for s in used)
        # an Enter lives in the frame its value comes from, an Exit in the loop it leaves
        for k in range(n):
            if program.kind[k] == tagged.ENTER:
                assert homes[k] != program.frame_key[k]
    t = 1.0
    for j in range(4):
        t = (t + 3.0) * 0.5  # the inner loop adds 0 + 1 + 2
    want_x = 1.0
    for _ in range(30):
        want_x = want_x * 1.5 + 1.0
    assert tagged.run_tagged(prog, [], None) == pytest.approx([t, 10.0, want_x])


def test_control_nodes_forwarded_inline_are_the_plain_ones(graph, sess):
    # Merge, Switch and NextIteration without control edges or fetched outputs are
    # forwarded as they become ready; a fetched Switch output is not
    x = tf.placeholder(tf.float32, [])
    i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + x), [0, 1.0],
                         parallel_iterations=1)
    sw = tf.raw_ops.Switch(data=s, pred=x > 0.0)
    sg = plan_module.prune([s, sw[1]], [], [x])
    plan_module.place(sg, sess._device_manager, False)
    prog = tagged.compile_tagged(sg, sess._binder, P.ExecutionPolicy(2))
    inline = {prog.op[k].type for k, f in enumerate(prog.inline) if f}
    assert inline == {"Merge", "Switch", "NextIteration"}
    fetched_switch = next(k for k, _ in prog.fetch if prog.op[k].type == "Switch")
    assert not prog.inline[fetched_switch]
    # parallel_iterations=1 defers each NextIteration value until its iteration ends
    assert tagged.run_tagged(prog, [2.0], None) == [11.0, 11.0]
    assert tagged.run_tagged(prog, [-1.0], None)[0] == -4.0

@pytest.mark.parametrize("forced", [None, "tagged"])
def test_waiting_kernel_in_a_loop(graph, monkeypatch, forced):
    # one dequeue and nothing else that could end a wait: it waits in place on the
    # structured executor (policy.waits_in_place); forced, the tagged executor runs it
    if forced:
        monkeypatch.setenv("TW_EXECUTOR", forced)
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    n = tf.placeholder(tf.int32, [])
    _, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + q.dequeue()),
                             [0, 0.0])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1.0, 2.0, 3.0]]))
        assert sess.run(total, {n: 2}) == 3.0
        assert (P.TAGGED if forced else P.STRUCTURED) in executors(sess)
        # exactly one dequeue per iteration the body runs (the dequeue hangs off the
        # loop's pivot, as in TF): one element is left
        assert sess.run(q.size()) == 1
        # so the loop waits in its second iteration until the deadline
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(total, {n: 2}, options=tf.RunOptions(timeout_in_ms=100))


def test_loop_with_an_enqueue_and_a_dequeue_runs_tagged(graph):
    # the body's dequeue waits for the enqueue of a later iteration of the same step:
    # waiting in place would never end, the tagged executor overlaps them
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])

    def body(i, s):
        got = q.dequeue()
        with tf.control_dependencies([q.enqueue(tf.cast(i, tf.float32) + 1.0)]):
            return i + 1, s + got
    _, total = tf.while_loop(lambda i, s: i < 3, body, [0, 0.0])
    with tf.Session() as sess:
        sess.run(q.enqueue(10.0))
        assert sess.run(total) == 10.0 + 1.0 + 2.0
        assert P.TAGGED in executors(sess)


@pytest.mark.parametrize("forced", [None, "tagged"])
def test_close_cancels_a_loop_waiting_on_a_queue(graph, monkeypatch, forced):
    if forced:
        monkeypatch.setenv("TW_EXECUTOR", forced)
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    _, total = tf.while_loop(lambda i, s: i < 2, lambda i, s: (i + 1, s + q.dequeue()),
                             [0, 0.0])
    sess = tf.Session()
    caught = []

    def step():
        try:
            sess.run(total)
        except tf.errors.OpError as e:
            caught.append(e)
    t = threading.Thread(target=step)
    t.start()
    time.sleep(0.2)
    assert (P.TAGGED if forced else P.STRUCTURED) in executors(sess)
    sess.close()
    t.join(10)
    assert not t.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], tf.errors.CancelledError)


def test_heavy_loop_with_parallel_iterations_runs_tagged(graph):
    x = tf.placeholder(tf.float64, [500, 500])
    _, y = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, tf.matmul(a, x) * 1e-3),
                         [0, x])
    xv = np.random.RandomState(1).rand(500, 500)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        out = sess.run(y, {x: xv})
        (plan,) = sess._plans.values()
        assert plan.executor == P.TAGGED and plan.needs_pool
    np.testing.assert_allclose(out, ((xv @ xv) * 1e-3 @ xv) * 1e-3, rtol=1e-10)


def test_graphs_the_structured_compiler_leaves_run_tagged(graph, sess):
    # a while loop inside the predicate of another loop
    def cond(i):
        inner = tf.while_loop(lambda j: j < i, lambda j: j + 1, [0])
        return inner < 4
    i = tf.while_loop(cond, lambda i: i + 1, [0])
    assert sess.run(i) == 4
    assert executors(sess) == [P.TAGGED]


def test_loop_in_an_untaken_branch_sends_dead_exits(graph, sess):
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.while_loop(lambda i: i < 5, lambda i: i + 1, [0]),
                lambda: tf.constant(-1))
    sg = plan_module.prune([y], [], [p])
    plan_module.place(sg, sess._device_manager, False)
    prog = tagged.compile_tagged(sg, sess._binder, P.ExecutionPolicy(1))
    assert tagged.run_tagged(prog, [np.bool_(False)], None) == [-1]
    assert tagged.run_tagged(prog, [np.bool_(True)], None) == [5]


def test_kernel_error_in_a_loop_names_its_op(graph, monkeypatch):
    monkeypatch.setenv("TW_EXECUTOR", "tagged")
    x = tf.placeholder(tf.float32, None)
    m = tf.placeholder(tf.float32, None)
    _, a = tf.while_loop(lambda i, a: i < 3,
                         lambda i, a: (i + 1, tf.matmul(a, m, name="body_mm")), [0, x])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sess.run(a, {x: np.ones((2, 3), np.float32), m: np.ones((2, 2), np.float32)})
        assert executors(sess) == [P.TAGGED]
    assert e.value.op.name == "while/body_mm"


def test_new_iterations_start_from_the_delivered_invariants(graph, monkeypatch):
    # invariants read by plain ops, by a cond's Switch (whose predicate changes each
    # iteration) and by an inner loop's Enter: once every Enter has arrived, a new
    # iteration copies tables with them delivered, and the results are the same
    made = []

    class Recorded(tagged._FrameState):
        __slots__ = ()

        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)
    monkeypatch.setattr(tagged, "_FrameState", Recorded)
    monkeypatch.setenv("TW_EXECUTOR", "tagged")
    ws = [tf.constant(float(j + 1)) for j in range(4)]
    m = tf.constant(2.0)
    x = tf.placeholder(tf.float32, [])

    def body(i, a):
        for w in ws:
            a = a + w
        a = tf.cond(tf.equal(i % 2, 0), lambda: a * m, lambda: a - m)
        return i + 1, tf.while_loop(lambda k, u: k < 2, lambda k, u: (k + 1, u + m),
                                    [0, a])[1]
    _, r = tf.while_loop(lambda i, a: i < 6, body, [0, x])
    # the loop in a branch not taken: its Enters are dead
    skipped = tf.cond(x > 100.0, lambda: tf.while_loop(
        lambda i, a: i < 3, lambda i, a: (i + 1, a + m), [0, x])[1], lambda: x - 1.0)
    want = 0.5
    for i in range(6):
        want += 10.0
        want = want * 2.0 if i % 2 == 0 else want - 2.0
        want += 4.0
    with tf.Session() as sess:
        for _ in range(2):
            del made[:]
            got, other = sess.run([r, skipped], {x: 0.5})
            assert got == pytest.approx(want) and other == -0.5
            outer = [f for f in made if f.parent_iter is not None and f.pi == 10 and
                     f.next_number == 7]
            assert len(outer) == 1 and len(outer[0].invariants) == 5
            inputs, pending, ready = outer[0].template
            # the inner loop's Enter of m is ready with m alone: started in each one
            assert sum(v is not None for v in inputs) >= 5 and len(ready) == 1
            # (an inner loop may make all its iterations before m's Enter runs: they
            # get it as they did before)
            assert len([f for f in made if f.next_number == 3]) == 6
