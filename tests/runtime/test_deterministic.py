"""The deterministic mode (runtime/determinism.py): reproducible scheduling, queue draws
and random ops; two runs of a concurrent training program give bit-identical variables."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.runtime import determinism
from tensorweave.runtime import executor as _ex
from tensorweave.runtime import policy as _policy

PROGRAM = os.path.join(os.path.dirname(__file__), "deterministic_program.py")
DET = {"deterministic": True}


def write_csv_files(directory, n_files: int = 4, rows: int = 30) -> None:
    rng = np.random.default_rng(0)
    os.makedirs(directory, exist_ok=True)
    for f in range(n_files):
        with open(os.path.join(directory, "part%d.csv" % f), "w") as fh:
            for _ in range(rows):
                fh.write(",".join("%.4f" % v for v in rng.normal(size=5)) + "\n")


def run_programs(tmp_path, modes):
    """Runs deterministic_program.py once per mode, all at once, each in a fresh
    process; returns per run {"init", "final", "batches"} digests."""
    data = str(tmp_path / "data")
    write_csv_files(data)
    procs, outs = [], []
    for k, mode in enumerate(modes):
        out = tmp_path / ("out%d" % k)
        out.mkdir()
        outs.append(out)
        procs.append(subprocess.Popen([sys.executable, PROGRAM, data, mode, str(out)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()[-2000:]
    return [{name: (out / (name + ".txt")).read_text() for name in ("init", "final",
                                                                    "batches")}
            for out in outs]


# --- end to end ---------------------------------------------------------------------------
@pytest.mark.timeout(180)
def test_two_runs_of_a_concurrent_training_program_are_bit_identical(tmp_path):
    det1, det2, plain1, plain2 = run_programs(tmp_path, ["det", "det", "plain", "plain"])
    # string_input_producer(shuffle=True), shuffle_batch(num_threads=3), unseeded
    # dropout and random_uniform in a parallel_iterations=4 loop, Adam: all reproducible
    assert det1 == det2
    # without the mode the same program is not reproducible: its unseeded random
    # initializers draw fresh entropy in each process (no timing involved)
    assert plain1["init"] != plain2["init"]
    assert plain1["final"] != plain2["final"]


# --- the switch ---------------------------------------------------------------------------
def test_policy_reads_config_and_environment():
    off = _policy.ExecutionPolicy.from_config(tf.ConfigProto(), environ={})
    assert not off.deterministic
    cfg = tf.ConfigProto(inter_op_parallelism_threads=4, experimental=DET)
    on = _policy.ExecutionPolicy.from_config(cfg, environ={})
    assert on.deterministic and on.inter_op_threads == 1
    for var in ("TF_DETERMINISTIC_OPS", "TW_DETERMINISTIC"):
        assert _policy.ExecutionPolicy.from_config(None, environ={var: "1"}).deterministic
        assert not _policy.ExecutionPolicy.from_config(None, environ={var: "0"}).deterministic
    rec = tf.ConfigProto(experimental={"record_inputs": "/nonexistent"})
    assert _policy.ExecutionPolicy.from_config(rec, environ={}).deterministic
    assert "deterministic=True" in repr(on)


def test_every_kernel_is_cheap_in_the_mode():
    class HeavyKernel:
        cheap, threaded = False, None
    plain = _policy.ExecutionPolicy(inter_op_threads=4)
    det = _policy.ExecutionPolicy(inter_op_threads=4, deterministic=True)
    assert _policy.kernel_weight(HeavyKernel(), 1e12, plain) == _policy.HEAVY
    assert _policy.kernel_weight(HeavyKernel(), 1e12, det) == _policy.CHEAP
    assert _policy.kernel_weight(HeavyKernel(), 0.0, det) == _policy.CHEAP


def test_session_in_the_mode(graph):
    with tf.Session(config=tf.ConfigProto(experimental=DET)) as s:
        assert determinism.of_session(s)
    with tf.Session() as s:
        assert determinism.of_session(s) == determinism.from_environment()


# --- random ops ---------------------------------------------------------------------------
def _draw(config, seed=None, name="r"):
    g = tf.Graph()
    with g.as_default():
        a = tf.random_uniform([6], seed=seed, name=name)
        b = tf.random_uniform([6], seed=seed, name=name + "_other")
        with tf.Session(config=config) as s:
            return [s.run([a, b]) for _ in range(2)]


def test_unseeded_random_ops_are_seeded_by_their_name():
    first, second = _draw(tf.ConfigProto(experimental=DET))
    again = _draw(tf.ConfigProto(experimental=DET))
    assert all(np.array_equal(x, y) for x, y in zip(first + second, again[0] + again[1]))
    assert not np.array_equal(first[0], first[1])    # two names, two streams
    assert not np.array_equal(first[0], second[0])   # successive runs continue a stream
    plain = _draw(None), _draw(None)                 # TF1: fresh entropy without the mode
    assert not np.array_equal(plain[0][0][0], plain[1][0][0])


def test_seeded_random_ops_are_unchanged_by_the_mode():
    det = _draw(tf.ConfigProto(experimental=DET), seed=7)
    plain = _draw(None, seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(det[0] + det[1], plain[0] + plain[1]))


def test_name_seed():
    assert determinism.name_seed("dropout/random_uniform") == \
        determinism.name_seed("dropout/random_uniform")
    assert determinism.name_seed("a") != determinism.name_seed("b")
    s1, s2 = determinism.name_seed("")
    assert s1 and s2  # never (0, 0), which means "no seed"


# --- queues -------------------------------------------------------------------------------
def _shuffle_queue_session(config):
    g = tf.Graph()
    with g.as_default():
        q = tf.RandomShuffleQueue(5, 0, [tf.int32], shapes=[[]], name="q")
        x = tf.placeholder(tf.int32, [None])
        enq = q.enqueue_many([x])
        deq = q.dequeue()
        close = q.close()
    return g, tf.Session(graph=g, config=config), enq, deq, close, x


def test_shuffle_queue_draws_only_when_full_or_closed():
    g, s, enq, deq, close, x = _shuffle_queue_session(tf.ConfigProto(experimental=DET))
    with s:
        s.run(enq, {x: [1, 2, 3]})
        with pytest.raises(errors.DeadlineExceededError):
            s.run(deq, options=tf.RunOptions(timeout_in_ms=100))  # 3 of capacity 5
        s.run(enq, {x: [4, 5]})
        drawn = [s.run(deq)]                            # full: draws
        with pytest.raises(errors.DeadlineExceededError):
            s.run(deq, options=tf.RunOptions(timeout_in_ms=100))  # 4 of 5 again
        s.run(close)
        drawn += [s.run(deq) for _ in range(4)]         # closed: draws what is left
    assert sorted(drawn) == [1, 2, 3, 4, 5]
    # the same enqueues give the same draws (the unseeded queue is seeded by its name)
    g, s, enq, deq, close, x = _shuffle_queue_session(tf.ConfigProto(experimental=DET))
    with s:
        s.run(enq, {x: [1, 2, 3, 4, 5]})
        s.run(close)
        assert [s.run(deq) for _ in range(5)] == drawn


def test_shuffle_queue_without_the_mode_draws_from_what_is_there():
    g, s, enq, deq, close, x = _shuffle_queue_session(None)
    with s:
        s.run(enq, {x: [1, 2, 3]})
        assert s.run(deq) in (1, 2, 3)


def test_queue_runner_threads_take_turns(graph):
    order = []

    def note(v):
        order.append(determinism.current_stream())
        return v
    with tf.device("/cpu:0"):  # the py_func on the thread of the enqueue's run
        q = tf.FIFOQueue(100, [tf.int32], shapes=[[1]])
        value = tf.py_func(note, [tf.constant([1])], tf.int32, stateful=True)
        value.set_shape([1])
        qr = tf.train.QueueRunner(q, [q.enqueue(value)] * 3)
    with tf.Session(config=tf.ConfigProto(experimental=DET)) as s:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(s, coord, start=True)
        s.run(q.dequeue_many(30))
        coord.request_stop()
        s.run(q.close(cancel_pending_enqueues=True))
        coord.join(threads)
    name = q.name
    assert order[:30] == [(name, i % 3) for i in range(30)]


def test_turnstile_round_robin_and_leave():
    turns = determinism.Turnstile(3)
    seen = []
    rounds = {0: 4, 1: 2, 2: 4}   # thread 1 leaves after 2 turns

    def work(i):
        for r in range(rounds[i]):
            turns.enter(i)
            time.sleep(0.001 * (3 - i))   # the slowest thread goes first
            seen.append(i)
            turns.exit(i)
        turns.leave(i)
    threads = [threading.Thread(target=work, args=(i,)) for i in (2, 1, 0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [0, 1, 2, 0, 1, 2, 0, 2, 0, 2]


# --- scheduling ---------------------------------------------------------------------------
def test_blocking_async_completes_inside_the_call():
    def slow_kernel(ctx, state, done, v):
        threading.Timer(0.05, lambda: done(result=v + 1)).start()
    got = []
    determinism.blocking_async(slow_kernel)(None, _ex.StepState(), lambda **kw: got.append(kw),
                                            41)
    assert got == [{"result": 42, "exc": None}]   # before the wrapper returned


def test_blocking_async_honours_the_deadline():
    def waits_for_cancel(ctx, state, done, v):
        state.add_cancel_callback(lambda exc: done(exc=exc))
    got = []
    state = _ex.StepState(time.monotonic() + 0.05)
    determinism.blocking_async(waits_for_cancel)(None, state, lambda **kw: got.append(kw), 0)
    assert isinstance(got[0]["exc"], errors.DeadlineExceededError)


def _dequeue_step_order(config, wait: bool):
    """The order in which two py_funcs of one step ran: one after a dequeue, one
    independent of it; the dequeue waits for another thread's enqueue if `wait`."""
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
        log = []

        def mark(tag):
            def fn(v):
                log.append(tag)
                return v
            return fn
        d = q.dequeue()
        after = tf.py_func(mark("after dequeue"), [d], tf.float32)
        independent = tf.py_func(mark("independent"), [tf.constant(1.0)], tf.float32)
        enq = q.enqueue(5.0)
    with tf.Session(graph=g, config=config) as s:
        if wait:
            def feed():
                time.sleep(0.1)
                s.run(enq)
            t = threading.Thread(target=feed)
            t.start()
        else:
            s.run(enq)
        assert s.run([after, independent]) == [5.0, 1.0]
        if wait:
            t.join()
    return log


def test_a_waiting_dequeue_does_not_reorder_a_step():
    # without the mode, the independent kernel runs while the dequeue waits (so the
    # order depends on timing); with it, the order is the plan's either way
    det = tf.ConfigProto(experimental=DET)
    assert _dequeue_step_order(det, wait=True) == _dequeue_step_order(det, wait=False)
    assert _dequeue_step_order(None, wait=True) == ["independent", "after dequeue"]


def test_addn_sums_left_to_right(graph):
    a = tf.constant(np.float32(1e8))
    b = tf.constant(np.float32(1.0))
    c = tf.constant(np.float32(-1e8))
    with tf.Session(config=tf.ConfigProto(experimental=DET)) as s:
        assert s.run(tf.add_n([a, b, c])) == np.float32(0.0)   # (1e8 + 1) - 1e8 in float32
        assert s.run(tf.add_n([a, c, b])) == np.float32(1.0)
