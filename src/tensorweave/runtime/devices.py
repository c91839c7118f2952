"""Devices: names, the CPU device, and allocators that count bytes.

A Device owns an Allocator and a ResourceManager. The allocator is an accountant: NumPy
allocates the memory, the executor reports each output's bytes when it is produced and
when its last consumer has run, so `bytes_in_use` and `peak_bytes` track the live set of
a step (reported in RunMetadata step stats).
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Dict, List

import numpy as np

from tensorweave.framework import device_spec as _dev
from tensorweave.runtime.resources import ResourceManager

LOCAL_TASK = "/job:localhost/replica:0/task:0"


class Allocator:
    """Counts bytes in use and the peak since the last `reset_peak`."""

    __slots__ = ("name", "bytes_in_use", "peak_bytes", "total_allocated", "_lock")

    def __init__(self, name: str):
        self.name = name
        self.bytes_in_use = 0
        self.peak_bytes = 0
        self.total_allocated = 0
        self._lock = threading.Lock()

    def allocate(self, nbytes: int) -> None:
        with self._lock:
            self.bytes_in_use += nbytes
            self.total_allocated += nbytes
            if self.bytes_in_use > self.peak_bytes:
                self.peak_bytes = self.bytes_in_use

    def deallocate(self, nbytes: int) -> None:
        with self._lock:
            self.bytes_in_use -= nbytes

    def reset_peak(self) -> None:
        with self._lock:
            self.peak_bytes = self.bytes_in_use


def nbytes_of(value) -> int:
    n = getattr(value, "nbytes", None)
    if n is not None:
        return int(n)
    if isinstance(value, (bytes, str)):
        return len(value)
    return 0


class Device:
    """One compute device of this process (`/job:localhost/replica:0/task:0/device:CPU:0`).

    `allocator` counts the device's memory, `host_allocator` the host memory holding
    values swapped out of it (stacks of while-loop gradients with swap_memory=True,
    EuroSys 2018 §5.3). `swap_out`/`swap_in` move a value between the two; on a CPU
    device both memories are the same, so the value itself stays where it is and only
    the accounting moves.
    """

    def __init__(self, device_type: str, index: int, task: str = LOCAL_TASK):
        self.device_type = device_type
        self.index = index
        self.name = "%s/device:%s:%d" % (task, device_type, index)
        self.spec = _dev.DeviceSpec.from_string(self.name)
        self.allocator = Allocator(self.name)
        self.host_allocator = Allocator(self.name + "/host")
        self.resources = ResourceManager(self.name)
        self.xp = np

    def swap_out(self, value):
        """`value` copied to host memory (a CPU device's memory is host memory)."""
        return value

    def swap_in(self, value):
        """`value` copied back to device memory."""
        return value

    def __repr__(self):
        return "<Device %s>" % self.name


class DeviceManager:
    """The devices of one session: `device_count['CPU']` CPU devices."""

    def __init__(self, device_count: Dict[str, int] = None):
        retain_freed_host_memory()
        n_cpu = int((device_count or {}).get("CPU", 1) or 1)
        self.devices: List[Device] = [Device("CPU", i) for i in range(n_cpu)]
        self.by_name = {d.name: d for d in self.devices}
        self.default = self.devices[0]

    def find(self, spec: str) -> List[Device]:
        """Devices matching a (possibly partial) spec string."""
        if not spec:
            return list(self.devices)
        want = _dev.DeviceSpec.from_string(spec)
        out = []
        for d in self.devices:
            s = d.spec
            if want.job not in (None, s.job) or want.replica not in (None, s.replica) or \
                    want.task not in (None, s.task):
                continue
            if want.device_type not in (None, s.device_type):
                continue
            if want.device_index not in (None, s.device_index):
                continue
            out.append(d)
        return out

    def list_devices(self):
        return list(self.devices)


_retained = False


def retain_freed_host_memory() -> None:
    """Keeps memory that kernels free inside the process rather than handing it back to
    the OS, as TensorFlow's BFC allocator keeps its regions. NumPy allocates through
    glibc's malloc, which returns large blocks (and the top of the heap) to the OS on
    free; a loop whose backward pass frees its stacked values and whose next step
    allocates them again then page-faults the same memory in on every step. Done once per
    process, on glibc only; TW_RETAIN_FREED_MEMORY=0 leaves malloc's defaults alone."""
    global _retained
    if _retained:
        return
    _retained = True
    if os.environ.get("TW_RETAIN_FREED_MEMORY", "1") == "0" or \
            not sys.platform.startswith("linux"):
        return
    import ctypes  # here, not at import time: only sessions need it
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    # blocks under 32 MiB come from the heap (setting it also stops glibc from raising
    # the threshold on its own); up to 256 MiB of free heap top is kept
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 256 << 20)
