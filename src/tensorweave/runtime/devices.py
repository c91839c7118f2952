"""Devices: names, the CPU device, and allocators that count bytes.

A Device owns an Allocator and a ResourceManager. The allocator is an accountant: NumPy
allocates the memory, the executor reports each output's bytes when it is produced and
when its last consumer has run, so `bytes_in_use` and `peak_bytes` track the live set of
a step (reported in RunMetadata step stats).
"""
from __future__ import annotations

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
    """One compute device of this process (`/job:localhost/replica:0/task:0/device:CPU:0`)."""

    def __init__(self, device_type: str, index: int, task: str = LOCAL_TASK):
        self.device_type = device_type
        self.index = index
        self.name = "%s/device:%s:%d" % (task, device_type, index)
        self.spec = _dev.DeviceSpec.from_string(self.name)
        self.allocator = Allocator(self.name)
        self.resources = ResourceManager(self.name)
        self.xp = np

    def __repr__(self):
        return "<Device %s>" % self.name


class DeviceManager:
    """The devices of one session: `device_count['CPU']` CPU devices."""

    def __init__(self, device_count: Dict[str, int] = None):
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
