import os

import numpy as np
import pytest

# The suite runs on the CPU devices, as CI does, also on a machine with CuPy and a GPU;
# TW_TEST_GPU=1 gives sessions the GPU (tests/runtime/test_gpu_device.py needs it).
if os.environ.get("TW_TEST_GPU") != "1":
    os.environ["TW_DISABLE_GPU"] = "1"

import tensorweave as tf  # noqa: E402


@pytest.fixture
def graph():
    """A fresh graph installed as the default for the test."""
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.fixture
def sess(graph):
    with tf.Session(graph=graph) as s:
        yield s


@pytest.fixture
def where(request):
    """where(marker): "<this test file>:<line>" of the line of the requesting test's file
    that ends with "# marker" (for checking the user lines errors and warnings name)."""
    path = str(request.fspath)

    def find(marker: str) -> str:
        with open(path) as f:
            for n, text in enumerate(f, 1):
                if text.rstrip().endswith("# " + marker):
                    return "%s:%d" % (path, n)
        raise AssertionError("no line marked # %s in %s" % (marker, path))
    return find


@pytest.fixture(autouse=True)
def _seeded():
    np.random.seed(0)


# --- the spread suite (issue 14): every test's ops spread over several devices ----------
# `--spread-devices=cpu3` (or TW_TEST_SPREAD=cpu3) makes every Session use 3 CPU devices
# and every Graph give its ops without a device one of them in turn (a round-robin device
# function at the bottom of the device stack: scopes and colocation still win);
# `--spread-devices=sim` does the same over CPU:0 and the simulated accelerator SIM:0.
# `--spread-devices=accelerator` spreads nothing: sessions get CPU:0 and SIM:0, and ops
# go where the placer puts them, as on a machine with a GPU: on SIM:0, which keeps a
# GPU's memory rules strictly (runtime/devices.py), so missing host-to-device copies
# show without a GPU; loops and conds run whole on the accelerator.
# Sessions get allow_soft_placement. Kept on device 0 (host memory): control-flow ops
# (the ops inside conds and loops are spread: loops and conds run split across devices,
# EuroSys 2018 §4.4), and ops that make or use resources or refs and what reads them (so
# the placer's colocation groups never conflict). tests/runtime/test_spread_programs.py
# runs curated test modules this way; tests that cannot hold under spreading (they
# assert op.device, placement, or a one-device plan) carry @pytest.mark.no_spread.
_SPREADS = {"cpu3": ({"CPU": 3}, ("/device:CPU:0", "/device:CPU:1", "/device:CPU:2")),
            "sim": ({"CPU": 1, "SIM": 1}, ("/device:CPU:0", "/device:SIM:0")),
            "accelerator": ({"CPU": 1, "SIM": 1}, None)}


def pytest_addoption(parser):
    parser.addoption("--spread-devices", choices=sorted(_SPREADS), default=None,
                     help="run every test with its ops spread round-robin over several "
                     "devices, or on the simulated accelerator (also "
                     "TW_TEST_SPREAD=cpu3|sim|accelerator)")


def _spread_mode(config):
    import os
    return config.getoption("--spread-devices") or os.environ.get("TW_TEST_SPREAD") or None


def pytest_configure(config):
    config.addinivalue_line("markers", "no_spread: the test cannot hold with its ops "
                            "spread over devices (skipped by --spread-devices)")
    mode = _spread_mode(config)
    if mode:
        if mode not in _SPREADS:
            raise pytest.UsageError("TW_TEST_SPREAD must be one of %s" % sorted(_SPREADS))
        _install_spread(*_SPREADS[mode])


def pytest_collection_modifyitems(config, items):
    if not _spread_mode(config):
        return
    skip = pytest.mark.skip(reason="cannot hold with ops spread over devices")
    for item in items:
        if item.get_closest_marker("no_spread") is not None:
            item.add_marker(skip)


class _RoundRobin:
    """The device function of a spread Graph (see above)."""

    _CONTROL_FLOW = frozenset({"Switch", "Merge", "Enter", "Exit", "NextIteration",
                               "LoopCond", "RefSwitch", "RefMerge", "RefEnter",
                               "RefNextIteration", "ControlTrigger"})

    def __init__(self, devices):
        self.devices = devices
        self.next = 0
        self.pinned = set()  # names of ops kept on device 0 whose readers follow them

    def _keep_on_first(self, op) -> bool:
        from tensorweave.runtime.policy import CONTROL_FLOW_OPS
        if op.type in CONTROL_FLOW_OPS:
            return True
        for t in list(op.inputs) + list(op.outputs):
            dt = t.dtype
            if dt.base_dtype in (tf.resource, tf.variant) or getattr(dt, "is_ref_dtype",
                                                                      False):
                return True
        for src in [t.op for t in op.inputs] + list(op.control_inputs):
            if src.name in self.pinned:
                return True
        return False

    def __call__(self, op):
        if op.device:
            return op.device
        if self._keep_on_first(op):
            if op.type not in self._CONTROL_FLOW:  # control flow's readers are spread
                self.pinned.add(op.name)
            return self.devices[0]
        d = self.devices[self.next % len(self.devices)]
        self.next += 1
        return d


def _install_spread(device_count, devices):
    import os
    # spread programs exercise the partitions and their Send/Recv, which a step whose
    # control flow spans CPU devices would otherwise skip (partitioned_plan.runs_fused)
    os.environ["TW_FUSE_HOST_PARTITIONS"] = "0"
    from tensorweave.framework import graph as _graph
    from tensorweave.runtime import session as _session

    graph_init = _graph.Graph.__init__
    session_init = _session.BaseSession.__init__

    def spread_graph_init(self, *args, **kwargs):
        graph_init(self, *args, **kwargs)
        if type(self) is _graph.Graph and devices is not None:
            self._device_stack.append(_RoundRobin(devices))

    def spread_session_init(self, target="", graph=None, config=None):
        c = tf.ConfigProto()
        if config is not None:
            c.CopyFrom(config)
        c.device_count = dict(device_count)
        c.allow_soft_placement = True
        session_init(self, target, graph, c)

    _graph.Graph.__init__ = spread_graph_init
    _session.BaseSession.__init__ = spread_session_init


@pytest.fixture
def numpy_kernels(monkeypatch):
    """Runs the test on the NumPy kernels even where oneDNN is installed (ops/onednn.py)."""
    from tensorweave.ops import onednn
    monkeypatch.setattr(onednn, "library", lambda: None)


@pytest.fixture(params=["installed", "numpy"])
def conv_kernels(request, monkeypatch):
    """Runs the test on the kernels this install uses (oneDNN's where it is installed,
    ops/onednn.py), then again on the NumPy ones."""
    if request.param == "numpy":
        from tensorweave.ops import onednn
        monkeypatch.setattr(onednn, "library", lambda: None)
    return request.param
