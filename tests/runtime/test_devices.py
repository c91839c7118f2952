"""Devices (runtime/devices.py): allocator accounting and the process's malloc policy;
CPU and simulated accelerator devices from the session config, their memory spaces,
copies and memory limits; list_devices; the log_device_placement line."""
import gc
import io
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import registry
from tensorweave.runtime import devices as _devices
from tensorweave.runtime.devices import Allocator, Device, DeviceManager, SimDevice

_FAULTS = """
import resource, sys
import numpy as np
import tensorweave as tf
tf.Session().close()
def step():  # what a loop gradient does: allocate a batch of arrays, then free them
    arrays = [np.ones(1 << 18) for _ in range(8)]
    del arrays
for _ in range(5):
    step()
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 50)
"""


def _faults_per_step(env_value: str) -> float:
    import os
    env = dict(os.environ, TW_RETAIN_FREED_MEMORY=env_value)
    out = subprocess.run([sys.executable, "-c", _FAULTS], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc policy")
def test_freed_memory_is_reused_without_page_faults():
    # 2 MiB arrays are above glibc's default mmap threshold: freed to the OS and faulted
    # in again on every step, unless the session kept them in the process
    assert _faults_per_step("0") > 100
    assert _faults_per_step("1") < 10


def test_allocator_counts_peak():
    a = Allocator("x")
    a.allocate(10)
    a.allocate(5)
    a.deallocate(10)
    assert (a.bytes_in_use, a.peak_bytes, a.total_allocated) == (5, 15, 15)
    a.reset_peak()
    assert a.peak_bytes == 5


def test_cpu_device_swaps_without_copying():
    d = Device("CPU", 0)
    v = object()
    assert d.swap_out(v) is v and d.swap_in(v) is v
    assert d.host_allocator is not d.allocator
    assert d.host_allocator.name.endswith("/host")


# --- devices from the session config ------------------------------------------------------

_TASK = "/job:localhost/replica:0/task:0"


def test_device_count_gives_cpu_and_simulated_devices(graph):
    config = tf.ConfigProto(device_count={"CPU": 2, "SIM": 2, "GPU": 0})
    with tf.Session(graph=graph, config=config) as sess:
        listed = sess.list_devices()
    assert [d.name for d in listed] == [_TASK + "/device:CPU:0", _TASK + "/device:CPU:1",
                                        _TASK + "/device:SIM:0", _TASK + "/device:SIM:1"]
    assert [d.device_type for d in listed] == ["CPU", "CPU", "SIM", "SIM"]
    assert [d.memory_limit_bytes for d in listed] == [268435456] * 4  # TF's default
    incarnations = [d.incarnation for d in listed]
    assert all(i > 0 for i in incarnations) and len(set(incarnations)) == 4
    assert repr(listed[0]) == "_DeviceAttributes(%s/device:CPU:0, CPU, 268435456, %d)" % (
        _TASK, incarnations[0])


def test_default_session_has_one_cpu(graph):
    with tf.Session(graph=graph) as sess:
        assert [d.name for d in sess.list_devices()] == [_TASK + "/device:CPU:0"]
    m = DeviceManager({"CPU": 0})  # TF1 always has a CPU
    assert [d.device_type for d in m.devices] == ["CPU"]


def test_memory_limits_from_config(graph):
    config = tf.ConfigProto(device_count={"CPU": 2}, device_memory_limit_mb={"CPU": 1})
    vds = tf.GPUOptions.Experimental.VirtualDevices
    config.gpu_options.experimental.virtual_devices = [vds(memory_limit_mb=[2, 3]),
                                                       {"memory_limit_mb": [4]}]
    with tf.Session(graph=graph, config=config) as sess:
        listed = sess.list_devices()
    # no SIM count given: one SIM device per virtual device
    assert [(d.device_type, d.memory_limit_bytes) for d in listed] == [
        ("CPU", 1 << 20), ("CPU", 1 << 20), ("SIM", 2 << 20), ("SIM", 3 << 20),
        ("SIM", 4 << 20)]
    config = tf.ConfigProto(device_count={"SIM": 2}, device_memory_limit_mb={"SIM": 5})
    config.gpu_options.experimental.virtual_devices = [vds(memory_limit_mb=[1])]
    m = DeviceManager.from_config(config)
    assert [d.allocator.limit_bytes for d in m.devices] == [None, 1 << 20, 5 << 20]
    assert [d.allocator.tracking for d in m.devices] == [False, True, True]


def test_find_and_device_types():
    m = DeviceManager({"CPU": 2, "SIM": 1})
    assert m.device_types == ["CPU", "SIM"]
    assert [d.name for d in m.find("/device:SIM:*")] == [_TASK + "/device:SIM:0"]
    assert [d.name for d in m.find("/cpu:1")] == [_TASK + "/device:CPU:1"]
    assert m.find("/job:worker") == []
    assert isinstance(m.find("/sim:0")[0], SimDevice)


# --- the simulated accelerator's memory space and copies -------------------------------

def test_sim_copies_are_real_copies_charged_while_alive():
    d = SimDevice(0, copy_latency_s=0.0)
    host = np.arange(256, dtype=np.float32)
    on_dev = d.copy_from_host(host)
    assert on_dev is not host and not np.shares_memory(on_dev, host)
    np.testing.assert_array_equal(on_dev, host)
    assert on_dev.dtype == np.float32
    assert d.allocator.bytes_in_use == 1024
    back = d.copy_to_host(on_dev)
    assert back is not on_dev and d.host_allocator.bytes_in_use == 1024
    assert d.copy_stats == {"to_host": 1, "from_host": 1, "bytes_to_host": 1024,
                            "bytes_from_host": 1024}
    del on_dev
    gc.collect()
    assert d.allocator.bytes_in_use == 0 and d.allocator.peak_bytes == 1024
    del back
    gc.collect()
    assert d.host_allocator.bytes_in_use == 0
    s = d.copy_from_host(b"text")  # host objects pass as they are
    assert s == b"text" and d.allocator.bytes_in_use == 0
    parts = (np.arange(3, dtype=np.int64), np.ones(2, np.float32))  # a sparse value
    copied = d.copy_from_host(parts)
    assert type(copied) is tuple and all(c is not p for c, p in zip(copied, parts))
    np.testing.assert_array_equal(copied[0], parts[0])
    assert d.allocator.bytes_in_use == 32 and d.copy_stats["bytes_from_host"] == 1024 + 4 + 32


def test_sim_swaps_go_through_the_copies_and_leave_charging_to_the_caller():
    d = SimDevice(0)
    v = np.ones(8)
    out = d.swap_out(v)
    assert out is not v and np.array_equal(out, v)
    back = d.swap_in(out)
    assert back is not out
    assert (d.copy_stats["to_host"], d.copy_stats["from_host"]) == (1, 1)
    assert d.allocator.bytes_in_use == 0 and d.host_allocator.bytes_in_use == 0


def test_copy_latency_comes_from_config():
    m = DeviceManager.from_config(tf.ConfigProto(device_count={"SIM": 1},
                                                 sim_copy_latency_ms=2.5))
    assert m.devices[1].copy_latency_s == 0.0025


# --- memory limits -------------------------------------------------------------------------

class _FakeOp:
    name, type, traceback_location = "big", "Fill", ("model.py", 7)


def test_limit_raises_resource_exhausted_naming_op_and_device():
    d = SimDevice(0, memory_limit_bytes=1000)
    a = d.copy_from_host(np.zeros(200, np.float32))  # 800 bytes
    with pytest.raises(tf.errors.ResourceExhaustedError) as info:
        d.allocator.track(np.zeros(100, np.float32), _FakeOp())
    msg = str(info.value)
    assert "OOM when allocating tensor with shape[100] and type float on" in msg
    assert _TASK + "/device:SIM:0" in msg and "op big of type Fill" in msg
    assert "400 bytes requested, 800 of the limit of 1000" in msg
    assert info.value.op is not None and "model.py:7" in msg
    with pytest.raises(tf.errors.ResourceExhaustedError, match="OOM"):
        d.copy_from_host(np.zeros(100, np.float32))
    del a
    gc.collect()
    assert d.allocator.bytes_in_use == 0
    d.copy_from_host(np.zeros(200, np.float32))  # fits again once freed


def test_tracking_counts_a_block_once_however_many_views():
    a = _devices.Allocator("x", limit_bytes=1 << 20)
    base = np.zeros((10, 10))
    a.track(base)
    a.track(base)
    a.track(base[2:])
    a.track(base.reshape(100))
    assert a.bytes_in_use == 800
    view = base.T
    del base
    gc.collect()
    assert a.bytes_in_use == 800  # the view keeps the block alive
    del view
    gc.collect()
    assert a.bytes_in_use == 0
    a.track(np.float32(1.0))  # scalars and other objects are not arrays in a memory space
    assert a.bytes_in_use == 0


def test_bind_kernel_costs_nothing_without_tracking():
    cpu = _devices.Device("CPU", 0)

    def fn(ctx, x):
        return x * 2

    assert cpu.bind_kernel(fn, None, 1) is fn
    limited = _devices.Device("CPU", 1, memory_limit_bytes=100)
    assert limited.bind_kernel(fn, None, 1) is not fn


def test_bound_kernels_are_charged_and_limited(graph):
    """What the plan's kernel binding does with each (kernel, device) pair."""
    x = tf.placeholder(tf.float32, [16, 16], name="x")
    y = tf.matmul(x, x, name="mm")
    pair = tf.identity_n([x, x], name="pair")
    d = SimDevice(0, memory_limit_bytes=4000)
    mm = d.bind_kernel(registry.get_kernel("MatMul", "SIM").fn, y.op, 1)
    ctx = _Ctx(y.op)
    ctx.attrs = {"transpose_a": False, "transpose_b": False}
    a = d.copy_from_host(np.ones((16, 16), np.float32))  # 1 KiB in the device's memory
    assert d.allocator.bytes_in_use == 1024
    r = mm(ctx, a, a)
    np.testing.assert_array_equal(r, a @ a)
    assert d.allocator.bytes_in_use == 2048
    r2 = mm(ctx, a, a)
    assert d.allocator.bytes_in_use == 3072
    with pytest.raises(tf.errors.ResourceExhaustedError, match=r"op mm of type MatMul"):
        mm(ctx, a, a)
    del r, r2
    gc.collect()
    two = d.bind_kernel(lambda ctx, u, v: (u + 1, v + 1), pair[0].op, 2)
    u = d.copy_from_host(np.ones(4))
    outs = two(ctx, u, u[:])  # a view of a value in the device's memory is in it too
    assert len(outs) == 2 and d.allocator.bytes_in_use == 1024 + 32 + 64


def test_a_host_array_given_to_a_sim_kernel_is_refused(graph):
    """The simulated accelerator keeps a GPU's rules: a numeric host array reaches its
    kernels only through a copy (a GPU kernel would get a NumPy array); int32 values,
    which a GPU keeps in host memory, strings and NumPy scalars pass."""
    x = tf.placeholder(tf.float32, [4], name="x")
    y = tf.add(x, x, name="twice")
    d = SimDevice(0)
    add = d.bind_kernel(registry.get_kernel("AddV2", "SIM").fn, y.op, 1)
    ctx = _Ctx(y.op)
    host = np.ones(4, np.float32)
    with pytest.raises(tf.errors.InternalError,
                       match=r"input 1 \(float of shape \[4\]\) of op twice of type AddV2 "
                             r"reached .*device:SIM:0 without a copy"):
        add(ctx, d.copy_from_host(host), host)
    np.testing.assert_array_equal(add(ctx, d.copy_from_host(host), np.float32(2)), host + 2)
    ints = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(add(ctx, ints, ints), ints * 2)


def test_bound_async_kernels_report_oom_through_done():
    d = SimDevice(0, memory_limit_bytes=40)
    got = []

    def kernel(ctx, state, done, v):
        done(np.concatenate([v, v, v]))

    bound = d.bind_kernel(kernel, _FakeOp(), 1, is_async=True)
    one = d.copy_from_host(np.ones(1))
    bound(None, None, lambda result=None, exc=None: got.append((result, exc)), one)
    assert got[0][1] is None and d.allocator.bytes_in_use == 32
    bound(None, None, lambda result=None, exc=None: got.append((result, exc)), one)
    assert got[1][0] is None
    assert isinstance(got[1][1], tf.errors.ResourceExhaustedError)


class _Ctx:
    def __init__(self, op):
        self.op, self.attrs, self.xp = op, op._attrs, np
        self.node_name = op.name


def test_traced_run_leaves_tracking_allocators_to_themselves():
    from tensorweave.runtime import executor

    class _Step:
        pass

    d = SimDevice(0)
    step = _Step()
    step.ctx = _Ctx.__new__(_Ctx)
    step.ctx.device = d
    step.fn = d.bind_kernel(lambda ctx: np.ones(4), None, 1)
    step.ins, step.out, step.n_out, step.free = (), 0, 1, ()
    step.loop, step.guarded, step.op = None, False, None

    class _Plan:
        n_slots, feed_slots, fetch_slots, steps = 1, (), (0,), [step]

    trace = executor.StepTrace()
    out = executor.run_sequential_traced(_Plan, [], trace)
    assert d.allocator.bytes_in_use == 32  # charged once, by the bound kernel
    del out
    gc.collect()
    assert d.allocator.bytes_in_use == 0 and d.allocator.peak_bytes == 32


def test_format_placement_as_tf1():
    name = _TASK + "/device:CPU:0"
    assert _devices.format_placement("b", "AddV2", name) == "b: (AddV2): " + name
    buf = io.StringIO()
    _devices.log_placement("a", "Const", name, buf)
    assert buf.getvalue() == "a: (Const): %s\n" % name


def test_ops_placed_on_the_simulated_accelerator_run_its_kernels(graph):
    x = tf.placeholder(tf.float32, [4, 4], name="x")
    with tf.device("/device:SIM:0"):
        y = tf.matmul(x, x, name="mm")
    config = tf.ConfigProto(device_count={"SIM": 1})
    feed = {x: np.arange(16, dtype=np.float32).reshape(4, 4)}
    with tf.Session(graph=graph, config=config) as sess:
        md = tf.RunMetadata()
        out = sess.run(y, feed, options=tf.RunOptions(trace_level=3), run_metadata=md)
    np.testing.assert_array_equal(out, feed[x] @ feed[x])
    assert out.dtype == np.float32
    on_sim = [n.node_name for d in md.step_stats.dev_stats
              if d.device == _TASK + "/device:SIM:0" for n in d.node_stats]
    assert "mm" in on_sim


@pytest.mark.parametrize("executor", ["", "tagged"])
def test_memory_limit_is_checked_on_every_run_path(graph, monkeypatch, executor):
    if executor:
        monkeypatch.setenv("TW_EXECUTOR", executor)
    x = tf.placeholder(tf.float32, [None], name="x")
    big = tf.tile(x, [1000], name="big")
    total = tf.reduce_sum(big, name="total")

    def body(i, acc):
        return i + 1, acc + tf.reduce_sum(tf.tile(x, [1000], name="tile_in_loop"))

    _, looped = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.constant(0.0)])
    config = tf.ConfigProto(device_memory_limit_mb={"CPU": 1})
    with tf.Session(graph=graph, config=config) as sess:
        assert sess.run(total, {x: np.ones(10, np.float32)}) == 10000.0
        for fetch, op_name in ((total, "big"), (looped, "while/tile_in_loop")):
            try:
                sess.run(fetch, {x: np.ones(1000, np.float32)})  # a 4 MB tile
            except tf.errors.ResourceExhaustedError as e:
                assert "op %s of type Tile" % op_name in str(e)
                assert _TASK + "/device:CPU:0" in str(e)
            else:
                raise AssertionError("no ResourceExhaustedError for %s" % op_name)


@pytest.mark.parametrize("executor", ["", "tagged"])
def test_constants_inside_loops_on_an_accelerator_are_in_its_memory(graph, monkeypatch,
                                                                   executor):
    """A constant in a loop body is copied to the accelerator once, as one outside loops
    is: the compiled loop presets it, and a preset host array reached the GPU's kernels
    as a NumPy array (a nested loop's gradient starts its inner loop from a constant
    zeros array). The simulated accelerator refuses such a value as a GPU would."""
    if executor:
        monkeypatch.setenv("TW_EXECUTOR", executor)
    with tf.device("/device:SIM:0"):
        x = tf.placeholder(tf.float64, [3], name="x")
        step = tf.constant([0.5, -1.0, 2.0], tf.float64)
        _, looped = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 0.5 + step),
                                  [0, x])

        def outer(i, acc):
            s = tf.cast(i + 1, tf.float64)
            _, b = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, tf.sin(b) * s + x),
                                 [0, x * s])
            return i + 1, acc + b
        _, y = tf.while_loop(lambda i, a: i < 3, outer, [0, tf.zeros_like(x)])
        gx = tf.gradients(tf.reduce_sum(y * y), x)[0]
    xv = np.array([0.3, -0.2, 0.5])

    def f(v):
        acc = np.zeros_like(v)
        for i in range(3):
            b = v * (i + 1)
            for _ in range(2):
                b = np.sin(b) * (i + 1) + v
            acc = acc + b
        return np.sum(acc * acc)
    eps = 1e-6
    want_g = [(f(xv + eps * e) - f(xv - eps * e)) / (2 * eps) for e in np.eye(3)]
    want_loop = xv
    for _ in range(3):
        want_loop = want_loop * 0.5 + np.array([0.5, -1.0, 2.0])
    config = tf.ConfigProto(device_count={"SIM": 1})
    with tf.Session(graph=graph, config=config) as sess:
        got_loop, got_g = sess.run([looped, gx], {x: xv})
        sim = [d for d in sess._device_manager.devices if d.device_type == "SIM"][0]
        copies = sim.copy_stats["from_host"]
        sess.run([looped, gx], {x: xv})
        # constants were copied in when the step was lowered: a run copies the feed only
        assert sim.copy_stats["from_host"] == copies + 1
    np.testing.assert_allclose(got_loop, want_loop, rtol=1e-12)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-6)
