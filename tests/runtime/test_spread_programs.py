"""The spread suite (issue 14): existing training, control-flow and queue test programs
run with their ops spread round-robin over 3 CPU devices, and over CPU:0 and the
simulated accelerator, and still pass (tests/conftest.py, --spread-devices).

Each mode runs the curated modules in one pytest subprocess (the option patches Session
and Graph for the whole process); two modes run at once (`spread_runs`). `test_spreading_is_active` is part of each run: it
proves the programs really ran partitioned."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(TESTS)

PROGRAMS = [
    "tests/train/test_optimizers.py",
    "tests/train/test_saver.py",
    "tests/train/test_input.py",
    "tests/train/test_monitored_session.py",
    "tests/train/test_moving_averages.py",
    "tests/train/test_queue_runner.py",
    "tests/ops/data_flow/test_queue_ops.py",
    "tests/ops/data_flow/test_stack_ops.py",
    "tests/ops/data_flow/test_tensor_array_ops.py",
    "tests/ops/data_flow/test_lookup_ops.py",
    "tests/data/test_dataset.py",
    "tests/data/test_sparse_elements.py",
    "tests/feature_column/test_layers.py",
    "tests/ops/control_flow/test_control_flow_ops.py",
    "tests/ops/control_flow/test_control_flow_grad.py",
    "tests/ops/control_flow/test_while_loop_structure.py",
    "tests/ops/control_flow/test_imported_contexts.py",
    "tests/examples",
]


def _spread_mode(request):
    return request.config.getoption("--spread-devices") or os.environ.get("TW_TEST_SPREAD")


def test_spreading_is_active(request):
    """Runs inside the spread subprocesses: ops get devices in turn, a loop's body is
    split across devices (its control-flow ops on device 0) and the step is
    partitioned; in the accelerator mode the whole step, loop included, runs on the
    simulated accelerator, its feed copied in and its fetch copied out."""
    mode = _spread_mode(request)
    if not mode:
        pytest.skip("only with --spread-devices")
    from tensorweave.runtime.partitioned_plan import PartitionedPlan
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [3], name="x")
        y = tf.square(x) + 1.0
        r = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [0, y])[1]
        z = tf.reduce_sum(r * x)
        with tf.Session() as sess:
            assert sess.run(z, {x: [1.0, 2.0, 3.0]}) == np.float32(8 * (2 + 10 + 30))
            plan = sess._get_plan((z,), (), (x,))
            if mode == "accelerator":
                sim = [d for d in sess.list_devices() if d.device_type == "SIM"]
                placed = {n.device.name for sg in plan.step_graphs for n in sg.nodes}
                assert [d.name for d in sim] == list(placed) and \
                    placed.pop().endswith("/device:SIM:0")
                dev = sess._device_manager.by_name[sim[0].name]
                assert dev.copy_stats["from_host"] >= 1 and dev.copy_stats["to_host"] >= 1
                return
            want = 3 if mode == "cpu3" else 2
            assert isinstance(plan, PartitionedPlan) and len(plan.plans) >= want - 1
            assert len(sess.list_devices()) == want
    devices = {op.device for op in g.get_operations()}
    assert len(devices) == want
    # control-flow ops stay on device 0; the loop's body is spread (a split loop)
    from tensorweave.runtime.policy import CONTROL_FLOW_OPS
    cf = {op.device for op in g.get_operations() if op.type in CONTROL_FLOW_OPS}
    loop = {op.device for op in g.get_operations() if op._control_flow_context is not None}
    assert cf == {"/device:CPU:0"} and len(loop) > 1


def _run(mode):
    env = dict(os.environ, TW_TEST_SPREAD="", PYTHONDONTWRITEBYTECODE="1")
    env.pop("TW_EXECUTOR", None)
    cmd = [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-rs", "-p",
           "no:cacheprovider", "-x", "-m", "not slow and not tensorboard_browser",
           "--spread-devices=%s" % mode,
           "tests/runtime/test_spread_programs.py::test_spreading_is_active"] + PROGRAMS
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.fixture(scope="module")
def spread_runs(request):
    """The selected modes' subprocess runs, two at a time (each is one Python process,
    mostly on one core: about 30 s apiece on the 2-core development machine, 97 s one
    after the other), started when the first of them is asked for."""
    from concurrent.futures import ThreadPoolExecutor
    modes = [item.callspec.params["mode"] for item in request.session.items
             if getattr(item, "originalname", None) == "test_programs_pass_with_their_ops_spread"]
    pool = ThreadPoolExecutor(max_workers=2)
    runs = {mode: pool.submit(_run, mode) for mode in dict.fromkeys(modes)}
    yield runs
    pool.shutdown(wait=True)  # (each run ends by itself or at its timeout)


@pytest.mark.parametrize("mode", ["cpu3", "sim", "accelerator"])
def test_programs_pass_with_their_ops_spread(mode, request):
    if _spread_mode(request):
        pytest.skip("already spread (the subprocess itself)")
    rc, out = request.getfixturevalue("spread_runs")[mode].result()
    assert rc == 0, out
    assert " passed" in out and "test_spread_programs" not in out, out  # probe ran
