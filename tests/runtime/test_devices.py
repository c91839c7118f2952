"""Devices (runtime/devices.py): allocator accounting and the process's malloc policy."""
import subprocess
import sys

import pytest

from tensorweave.runtime.devices import Allocator, Device

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
