"""The execution policy and the one executor decision (runtime/policy.py): every rule of
choose_executor, the one definition of a cheap kernel, and that sessions follow them."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import registry
from tensorweave.runtime import plan as plan_module
from tensorweave.runtime import policy as P
from tensorweave.runtime.devices import DeviceManager


def _step_graph(fetches, feeds=(), targets=()):
    sg = plan_module.prune(list(fetches), list(targets), list(feeds))
    plan_module.place(sg, DeviceManager(), False)
    return sg


def _choice(fetches, threads=2, feeds=(), forced=None, targets=()):
    return P.choose_executor(_step_graph(fetches, feeds, targets),
                             P.ExecutionPolicy(threads, forced_executor=forced))


class _KD:
    def __init__(self, cheap, threaded=None):
        self.cheap, self.threaded = cheap, threaded


def test_policy_from_config_and_environment():
    cfg = tf.ConfigProto(inter_op_parallelism_threads=3)
    p = P.ExecutionPolicy.from_config(cfg, environ={})
    assert (p.inter_op_threads, p.forced_executor) == (3, None)
    assert p.heavy_flops == P.DEFAULT_HEAVY_FLOPS
    assert P.ExecutionPolicy.from_config(None, {"TW_EXECUTOR": "tagged"}).forced_executor \
        == P.TAGGED
    assert P.ExecutionPolicy.from_config(None, {"TW_EXECUTOR": "other"}).forced_executor \
        is None
    assert P.ExecutionPolicy.from_config(None, {}).inter_op_threads >= 1


def test_policy_is_immutable_and_validated():
    p = P.ExecutionPolicy(2)
    with pytest.raises(AttributeError):
        p.inter_op_threads = 4
    with pytest.raises(ValueError):
        P.ExecutionPolicy(2, forced_executor="sequential")
    assert P.ExecutionPolicy(0).inter_op_threads == 1


def test_kernel_weight_is_the_one_definition_of_cheap():
    pol = P.ExecutionPolicy(2, heavy_flops=100.0)
    assert P.kernel_weight(None, 0.0, pol) == P.CHEAP          # constants
    assert P.kernel_weight(_KD(True), 1e9, pol) == P.CHEAP     # registered cheap
    assert P.kernel_weight(_KD(False), 50.0, pol) == P.CHEAP   # known small
    assert P.kernel_weight(_KD(False), 100.0, pol) == P.HEAVY
    assert P.kernel_weight(_KD(False), 0.0, pol) == P.UNSIZED  # shape unknown
    assert registry.get_kernel("MatMul").cheap is False


def test_kernels_on_every_core_run_inline(graph, monkeypatch):
    # oneDNN's kernels (float32 convolutions, pools, products) spread their work over
    # every core: the pool would only overlap them with kernels that take their cores
    from tensorweave.ops import onednn

    class Installed:
        every_core = True

        def takes_every_core(self):
            return self.every_core
    lib = Installed()
    monkeypatch.setattr(onednn, "library", lambda: lib)
    pol = P.ExecutionPolicy(2, heavy_flops=100.0)
    on_cores = _KD(False, threaded=onednn.runs_float32)
    assert P.kernel_weight(on_cores, 1e9, pol, {"T": tf.float32}) == P.CHEAP
    assert P.kernel_weight(on_cores, 1e9, pol, {"T": tf.float64}) == P.HEAVY
    assert P.kernel_weight(on_cores, 0.0, pol, {"T": tf.float64}) == P.UNSIZED
    for dtype, executor in ((tf.float32, P.SEQUENTIAL), (tf.float64, P.DATAFLOW)):
        x = tf.placeholder(dtype, [500, 500])
        assert _choice([tf.matmul(x, x) + tf.matmul(x, x, transpose_b=True)]) == executor
        loop = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, x)),
                             [0, x])
        assert _choice([loop[1]]) == (P.STRUCTURED if dtype == tf.float32 else P.TAGGED)
    img = tf.placeholder(tf.float32, [64, 28, 28, 32])
    filt = tf.placeholder(tf.float32, [5, 5, 32, 64])
    conv = tf.nn.conv2d(img, filt, [1, 1, 1, 1], "SAME")
    dx, dw = tf.gradients(tf.nn.max_pool(conv, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
                          [img, filt])
    assert _choice([dx, dw]) == P.SEQUENTIAL
    lib.every_core = False  # OMP_NUM_THREADS below the core count: the pool has cores
    assert _choice([dx, dw]) == P.DATAFLOW
    monkeypatch.setattr(onednn, "library", lambda: None)      # the NumPy kernels
    assert _choice([dx, dw]) == P.DATAFLOW


def test_static_cost_of_matmul_and_unknown_shapes(graph):
    a = tf.placeholder(tf.float32, [10, 20])
    b = tf.placeholder(tf.float32, [20, 30])
    u = tf.placeholder(tf.float32, [None, 20])
    sg = _step_graph([tf.matmul(a, b), tf.matmul(a, a, transpose_a=True),
                      tf.matmul(b, a, transpose_a=True, transpose_b=True), tf.matmul(u, b)])
    costs = sorted(P.static_cost(n) for n in sg.nodes if n.type == "MatMul")
    assert costs == [0.0, 2.0 * 20 * 10 * 20, 2.0 * 10 * 20 * 30, 2.0 * 30 * 20 * 10]


def test_rule_sequential_for_plain_steps(graph):
    x = tf.placeholder(tf.float32, [500, 500])
    assert _choice([tf.reduce_sum(x * 2.0)]) == P.SEQUENTIAL
    # one heavy matmul has nothing to overlap with
    assert _choice([tf.matmul(x, x)]) == P.SEQUENTIAL
    # two heavy ones in a chain cannot overlap either
    assert _choice([tf.matmul(tf.matmul(x, x), x)]) == P.SEQUENTIAL


def test_rule_dataflow_for_overlapping_heavy_kernels(graph, numpy_kernels):
    x = tf.placeholder(tf.float32, [500, 500])
    y = tf.placeholder(tf.float32, [500, 500])
    both = tf.matmul(x, x) + tf.matmul(y, y)
    assert _choice([both], threads=2) == P.DATAFLOW
    assert _choice([both], threads=1) == P.SEQUENTIAL          # no second thread
    small = tf.placeholder(tf.float32, [50, 50])
    assert _choice([tf.matmul(small, small) + tf.matmul(small, small, transpose_a=True)]) \
        == P.SEQUENTIAL                                         # known small


def test_rule_dataflow_for_asynchronous_kernels(graph):
    q = tf.FIFOQueue(3, tf.float32)
    assert _choice([q.dequeue()], threads=1) == P.DATAFLOW


def test_rules_for_control_flow(graph, numpy_kernels):
    x = tf.placeholder(tf.float32, [500, 500])
    cheap_loop = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    assert _choice([cheap_loop]) == P.STRUCTURED
    assert _choice([cheap_loop], forced=P.TAGGED) == P.TAGGED
    heavy = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, x)), [0, x])
    assert _choice([heavy[1]], threads=2) == P.TAGGED
    assert _choice([heavy[1]], threads=1) == P.STRUCTURED
    serial = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, x)),
                           [0, x], parallel_iterations=1)
    assert _choice([serial[1]], threads=2) == P.STRUCTURED

def test_one_waiting_kernel_waits_in_place_unless_the_step_could_end_a_wait(graph):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    waits = tf.while_loop(lambda i, s: i < 2, lambda i, s: (i + 1, s + q.dequeue()),
                          [0, 0.0])
    # one dequeue, nothing in the step can feed any queue: it may wait in place
    assert _choice([waits[1]], threads=1) == P.STRUCTURED
    assert _choice([waits[1]], forced=P.TAGGED) == P.TAGGED
    # an enqueue and a dequeue of one step: the tagged executor runs the one while the
    # other waits
    feed = q.enqueue(1.0)
    assert _choice([waits[1]], targets=[feed], threads=1) == P.TAGGED
    # a close in the same step could end another step's wait, and so could a py_func
    assert _choice([waits[1]], targets=[q.close()], threads=1) == P.TAGGED
    signal = tf.py_func(lambda: np.int64(1), [], tf.int64)
    assert _choice([waits[1], signal], threads=1) == P.TAGGED


def test_rule_tagged_for_heavy_kernels_that_overlap_within_an_iteration(graph, numpy_kernels):
    # parallel_iterations=1, but each iteration holds two independent heavy matmuls:
    # they can overlap on the pool (EuroSys Figure 12 with pi=1)
    x = tf.placeholder(tf.float32, [500, 500])
    y = tf.placeholder(tf.float32, [500, 500])

    def body(i, a, b):
        return i + 1, tf.matmul(a, x), tf.matmul(b, y)
    pair = tf.while_loop(lambda i, a, b: i < 3, body, [0, x, y], parallel_iterations=1)
    assert _choice([pair[1], pair[2]], threads=2) == P.TAGGED
    assert _choice([pair[1], pair[2]], threads=1) == P.STRUCTURED
    # a chain of heavy matmuls in one iteration cannot overlap
    chain = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(tf.matmul(a, x), y)),
                          [0, x], parallel_iterations=1)
    assert _choice([chain[1]], threads=2) == P.STRUCTURED
    xs = np.random.RandomState(0).rand(500, 500).astype(np.float32) / 500
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        got = sess.run([pair[1], pair[2]], {x: xs, y: xs.T})
    want_a, want_b = xs, xs.T
    for _ in range(3):
        want_a, want_b = want_a @ xs, want_b @ xs.T
    np.testing.assert_allclose(got[0], want_a, rtol=1e-4)
    np.testing.assert_allclose(got[1], want_b, rtol=1e-4)


def test_missing_kernel_is_reported_by_the_decision(graph):
    registry.register_op("TestPolicyNoKernel", inputs=["x: float32"],
                         outputs=["y: float32"], shape=lambda op: op.inputs[0].shape)
    registry.not_differentiable("TestPolicyNoKernel")
    from tensorweave.framework.op_builder import apply_op
    y = apply_op("TestPolicyNoKernel", [tf.constant(1.0)]).outputs[0]
    with pytest.raises(tf.errors.NotFoundError, match="TestPolicyNoKernel"):
        _choice([y])


@pytest.mark.parametrize("threads,want", [(1, plan_module.SequentialPlan),
                                          (2, plan_module.DataflowPlan)])
def test_sessions_build_the_plan_type_the_policy_chooses(graph, threads, want):
    x = tf.placeholder(tf.float64, [500, 500])
    out = tf.reduce_sum(tf.matmul(x, x) + tf.matmul(x, x, transpose_a=True))
    xv = np.random.RandomState(0).rand(500, 500)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=threads)) as sess:
        np.testing.assert_allclose(sess.run(out, {x: xv}), np.sum(xv @ xv + xv.T @ xv))
        (plan,) = sess._plans.values()
        assert type(plan) is want and plan.executor == (
            P.SEQUENTIAL if threads == 1 else P.DATAFLOW)
        assert (sess._env.pool is not None) == (threads == 2)


def test_tw_executor_environment_is_read_once_per_session(graph, monkeypatch):
    i = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    monkeypatch.setenv("TW_EXECUTOR", "tagged")
    with tf.Session() as tagged_sess:
        monkeypatch.delenv("TW_EXECUTOR")
        with tf.Session() as structured_sess:
            assert tagged_sess.run(i) == structured_sess.run(i) == 3
            assert [p.executor for p in tagged_sess._plans.values()] == [P.TAGGED]
            assert [p.executor for p in structured_sess._plans.values()] == [P.STRUCTURED]
