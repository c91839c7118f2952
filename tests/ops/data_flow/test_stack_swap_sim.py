"""swap_memory of while-loop gradient stacks on the simulated accelerator (EuroSys 2018
§5.3): the device peak stays at a few elements with swap_memory=True and grows with the
iteration count without it; results are unchanged."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.data_flow.stack_ops import StackResource
from tensorweave.runtime.devices import Device, SimDevice

N = 1 << 12                 # float32 elements of the loop value
ELEM = 4 * N                # bytes of one stacked element


def _grad_of_loop(n_iters, swap, config):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [N], name="x")
        _, out = tf.while_loop(lambda i, v: i < n_iters,
                               lambda i, v: (i + 1, tf.tanh(v) * 1.5),
                               [tf.constant(0), x], swap_memory=swap)
        gx = tf.gradients(tf.reduce_sum(out), x)[0]
    xv = np.random.RandomState(0).rand(N).astype(np.float32)
    with tf.Session(graph=g, config=config) as sess:
        sim = [d for d in sess._device_manager.devices if d.device_type == "SIM"]
        for d in sim:
            d.allocator.reset_peak()
        r = sess.run(gx, {x: xv})
        plan = sess._get_plan((gx,), (), (x,))
        devices = {n.device.name for sg in plan.step_graphs for n in sg.nodes}
        if not sim:
            return r, None, devices
        d = sim[0]
        return r, dict(peak=d.allocator.peak_bytes, host_peak=d.host_allocator.peak_bytes,
                       to_host=d.copy_stats["to_host"],
                       bytes_to_host=d.copy_stats["bytes_to_host"]), devices


_SIM = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})


@pytest.fixture(scope="module")
def runs():
    # the default executor runs one iteration at a time (the tagged executor's window
    # of parallel iterations: the last test)
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("TW_EXECUTOR", raising=False)
        for n in (10, 30):
            for swap in (False, True):
                out[n, swap] = _grad_of_loop(n, swap, _SIM)
        out["cpu"] = _grad_of_loop(30, False, None)
    return out


def test_the_loop_and_its_gradient_run_on_the_accelerator(runs):
    assert runs[30, True][2] == {"/job:localhost/replica:0/task:0/device:SIM:0"}


def test_results_are_unchanged_by_swapping(runs):
    for n in (10, 30):
        a, b = runs[n, False][0], runs[n, True][0]
        assert a.dtype == b.dtype == np.float32 and a.shape == (N,)
        assert np.array_equal(a, b)
    assert np.array_equal(runs[30, True][0], runs["cpu"][0])


def test_device_peak_stays_at_a_few_elements_with_swap_memory(runs):
    p10, p30 = runs[10, True][1], runs[30, True][1]
    assert p10["peak"] <= 8 * ELEM and p30["peak"] == p10["peak"]
    # the elements went to host memory through the device's copy path
    assert p30["host_peak"] >= 30 * ELEM
    assert p30["to_host"] >= 30 and p30["bytes_to_host"] >= 30 * ELEM


def test_device_peak_grows_with_iterations_without_swap_memory(runs):
    p10, p30 = runs[10, False][1], runs[30, False][1]
    # nothing went to the host but the fetched gradient
    assert p30["host_peak"] == ELEM and p30["to_host"] == 1 and p30["bytes_to_host"] == ELEM
    assert p30["peak"] >= 30 * ELEM
    # one element per iteration, counted once (the stack does not charge a tracked
    # array a second time)
    assert 19 * ELEM <= p30["peak"] - p10["peak"] <= 21 * ELEM
    assert p30["peak"] <= 36 * ELEM


def test_a_tracking_allocator_charges_a_pushed_element_once():
    dev = SimDevice(0)
    a = np.ones(N, np.float32)
    dev.allocator.track(a)  # as a kernel output on the device is
    st = StackResource("s", tf.float32, -1, dev)
    st.push(None, a, False)
    assert dev.allocator.bytes_in_use == ELEM
    del a
    assert dev.allocator.bytes_in_use == ELEM  # the stack keeps it alive
    v = st.pop(None)
    assert dev.allocator.bytes_in_use == ELEM
    del v
    assert dev.allocator.bytes_in_use == 0


def test_a_swapped_element_leaves_the_device_and_is_charged_when_prefetched():
    dev = SimDevice(0)
    st = StackResource("s", tf.float32, -1, dev)
    for k in range(3):
        a = np.full(N, k, np.float32)
        dev.allocator.track(a)
        st.push(None, a, True)
        del a
    assert dev.allocator.bytes_in_use == 0
    assert dev.host_allocator.bytes_in_use == 3 * ELEM
    v = st.pop(None)  # swapped in by the pop itself; the next one is prefetched
    assert v[0] == 2 and st.sync_swap_ins == 1 and st.prefetches == 1
    assert dev.allocator.bytes_in_use == 2 * ELEM
    assert dev.host_allocator.bytes_in_use == ELEM
    del v
    st.close()
    assert dev.allocator.bytes_in_use == 0 and dev.host_allocator.bytes_in_use == 0


def test_a_prefetch_past_the_device_limit_names_the_pop():
    dev = SimDevice(0, memory_limit_bytes=ELEM)
    st = StackResource("s", tf.float32, -1, dev)
    for k in range(2):
        st.push(None, np.full(N, k, np.float32), True)

    class Op:
        name, type = "pop_op", "StackPopV2"
        traceback_location = None
        node_def = None
    with pytest.raises(tf.errors.ResourceExhaustedError, match="SIM:0.*pop_op"):
        v = st.pop(Op())  # the popped element (ELEM) and the prefetched one: 2 ELEM
        del v


def test_host_memory_device_keeps_explicit_accounting():
    dev = Device("CPU", 0)
    st = StackResource("s", tf.float32, -1, dev)
    st.push(None, np.ones(N, np.float32), False)
    st.push(None, np.ones(N, np.float32), True)
    assert dev.allocator.bytes_in_use == ELEM and dev.host_allocator.bytes_in_use == ELEM
    st.pop(None)
    st.pop(None)
    assert dev.allocator.bytes_in_use == 0 and dev.host_allocator.bytes_in_use == 0


def test_tagged_executor_peak_does_not_grow_with_iterations(monkeypatch):
    # on the tagged executor up to parallel_iterations (10) iterations are alive at
    # once, each holding its loop value until it completes: the peak is bounded by
    # that window, not by the iteration count (plus one element: the gradient's seed,
    # ones shaped as the loop's output, is a folded constant held on the device)
    monkeypatch.setenv("TW_EXECUTOR", "tagged")
    peaks = [_grad_of_loop(n, True, _SIM)[1]["peak"] for n in (30, 100)]
    assert max(peaks) <= (2 * 10 + 5) * ELEM
    no_swap = _grad_of_loop(100, False, _SIM)[1]["peak"]
    assert no_swap >= 100 * ELEM
