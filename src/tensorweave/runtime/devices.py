"""Devices: the CPU device, the simulated accelerator, and allocators that count bytes.

A Device owns an Allocator and a ResourceManager. The allocator is an accountant: NumPy
allocates the memory. Two ways of counting, never both for one allocator:

* traced runs (RunOptions.trace_level > 0): the executor reports each output's bytes
  when it is produced and when its last consumer has run (executor.run_sequential_traced),
  so `bytes_in_use` and `peak_bytes` track the live set of a step;
* a *tracking* allocator (a device with a memory limit, and every simulated accelerator)
  charges each array a kernel on its device produces for as long as the array lives:
  `Device.bind_kernel` wraps the device's kernels so every output is `track`ed (its
  memory block, counted once however many views share it, released by a weakref
  finalizer when the last reference goes). This works on every executor path, and a
  limit is checked on each allocation. Devices without a limit and without tracking
  pay nothing: `bind_kernel` returns the kernel unchanged.

Memory limits (what TF1 exposes, plus one field of ours for the CPU):
  * accelerators: `ConfigProto.gpu_options.experimental.virtual_devices`, as TF1 does for
    GPUs: the `memory_limit_mb` lists of its entries, flattened, give SIM:0, SIM:1, ...
    their limits (and the number of SIM devices when `device_count` names none);
  * any device type: `ConfigProto.device_memory_limit_mb = {'CPU': 64}` (ours; TF1 has no
    CPU memory limit), the limit of every device of that type not set above.
An allocation beyond the limit raises ResourceExhaustedError naming the op and the
device, with TF's "OOM when allocating tensor ..." wording.

The simulated accelerator (`/device:SIM:i`) runs the CPU kernel bodies (NumPy) in its
own memory space: values enter and leave it through explicit copies (`copy_from_host`,
`copy_to_host`, real NumPy copies charged to the destination's allocator, each waiting
`ConfigProto.sim_copy_latency_ms` when set, for tests), and swap_memory moves stack
elements through the same copies (`swap_out`, `swap_in`). Its feeds, fetches and
constants are copied as a GPU's are, and it keeps a GPU's rules strictly: a kernel on it
given a host array that never entered its memory (anything numeric but int32, which a
GPU keeps in host memory) fails with InternalError, so CPU-only runs catch a missing
host-to-device copy that on a real GPU would hand a NumPy array to CuPy.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from typing import Dict, List, Optional

import numpy as np

from tensorweave.framework import device_spec as _dev
from tensorweave.framework import errors
from tensorweave.runtime.resources import ResourceManager

LOCAL_TASK = "/job:localhost/replica:0/task:0"

# what TF1's list_devices reports as the memory limit of a host-memory device
DEFAULT_MEMORY_LIMIT_BYTES = 256 << 20


class Allocator:
    """Counts bytes in use and the peak since the last `reset_peak`.

    Args:
      name: the device name (error messages).
      limit_bytes: the device's memory limit, or None for none.
      tracking: whether values are charged by `track` for their lifetime (see the
        module docstring); a limit implies it.
    """

    __slots__ = ("name", "bytes_in_use", "peak_bytes", "total_allocated", "limit_bytes",
                 "tracking", "_tracked", "_lock")

    def __init__(self, name: str, limit_bytes: Optional[int] = None,
                 tracking: bool = False):
        self.name = name
        self.bytes_in_use = 0
        self.peak_bytes = 0
        self.total_allocated = 0
        self.limit_bytes = None if limit_bytes is None else int(limit_bytes)
        self.tracking = tracking or self.limit_bytes is not None
        self._tracked: Dict[int, int] = {}  # id of a tracked memory block -> its bytes
        self._lock = threading.Lock()

    # allocate/deallocate run per stack push and pop of a loop gradient: acquire and
    # release cost less than a with block (about 100 ns against 190 ns)
    def allocate(self, nbytes: int) -> None:
        lock = self._lock
        lock.acquire()
        try:
            self.bytes_in_use += nbytes
            self.total_allocated += nbytes
            if self.bytes_in_use > self.peak_bytes:
                self.peak_bytes = self.bytes_in_use
        finally:
            lock.release()

    def deallocate(self, nbytes: int) -> None:
        lock = self._lock
        lock.acquire()
        try:
            self.bytes_in_use -= nbytes
        finally:
            lock.release()

    def reset_peak(self) -> None:
        with self._lock:
            self.peak_bytes = self.bytes_in_use

    def track(self, value, op=None) -> None:
        """Charges the memory of `value` (an array) while it lives; a block already
        charged (the same array again, or a view of it) is not charged twice.

        Raises:
          ResourceExhaustedError: if the allocation would pass the limit; it names
            `op` and the device.
        """
        if not isinstance(value, np.ndarray):
            return  # scalars, strings, handles, DEAD: host objects or transient
        root = _memory_block(value)
        key = id(root)
        nbytes = int(root.nbytes)
        with self._lock:
            if key in self._tracked:
                return
            limit = self.limit_bytes
            if limit is not None and self.bytes_in_use + nbytes > limit:
                in_use = self.bytes_in_use
            else:
                limit = None
                self._tracked[key] = nbytes
                self.bytes_in_use += nbytes
                self.total_allocated += nbytes
                if self.bytes_in_use > self.peak_bytes:
                    self.peak_bytes = self.bytes_in_use
        if limit is not None:
            raise self._oom(value, op, nbytes, in_use, limit)
        weakref.finalize(root, self._release, key)

    def holds(self, value: np.ndarray) -> bool:
        """Whether the memory block of array `value` is charged here (`track`)."""
        return id(_memory_block(value)) in self._tracked

    def _release(self, key: int) -> None:
        with self._lock:
            nbytes = self._tracked.pop(key, 0)
            self.bytes_in_use -= nbytes

    def _oom(self, value, op, nbytes: int, in_use: int, limit: int):
        msg = ("OOM when allocating tensor with shape[%s] and type %s on %s: %d bytes "
               "requested, %d of the limit of %d bytes in use" % (
                   ",".join(str(d) for d in value.shape), _dtype_name(value), self.name,
                   nbytes, in_use, limit))
        if op is not None:
            msg += " (op %s of type %s)" % (op.name, op.type)
            return errors.with_op(errors.ResourceExhaustedError(None, op, msg), op)
        return errors.ResourceExhaustedError(None, None, msg)


def _memory_block(value: np.ndarray) -> np.ndarray:
    """The array owning the memory of `value` (itself, or the base of a view)."""
    while isinstance(value.base, np.ndarray):
        value = value.base
    return value


def _dtype_name(value) -> str:
    """TF's DataTypeString of `value`'s dtype."""
    from tensorweave.framework import dtypes as _dt
    try:
        return _dt.type_string(_dt.as_dtype(value.dtype))
    except TypeError:
        return str(value.dtype)


def nbytes_of(value) -> int:
    n = getattr(value, "nbytes", None)
    if n is not None:
        return int(n)
    if isinstance(value, (bytes, str)):
        return len(value)
    return 0


def format_placement(op_name: str, op_type: str, device_name: str) -> str:
    """One line of `log_device_placement=True`, as TF1 prints it:
    "name: (Type): /job:localhost/replica:0/task:0/device:CPU:0"."""
    return "%s: (%s): %s" % (op_name, op_type, device_name)


def log_placement(op_name: str, op_type: str, device_name: str, stream=None) -> None:
    """Prints `format_placement(...)` to stderr (or `stream`)."""
    (stream or sys.stderr).write(format_placement(op_name, op_type, device_name) + "\n")


class Device:
    """One compute device of this process (`/job:localhost/replica:0/task:0/device:CPU:0`).

    Args:
      device_type: "CPU" or "SIM".
      index: the device number.
      task: the task part of the name.
      memory_limit_bytes: the device's memory limit (None: none).

    `allocator` counts the device's memory, `host_allocator` the host memory holding
    values copied out of it (swapped stacks of while-loop gradients with
    swap_memory=True, EuroSys 2018 §5.3). On a CPU device both memories are the same:
    copies and swaps return the value itself and only the accounting moves.
    """

    tracks_memory = False  # whether its allocator charges every kernel output
    # whether its values are host (NumPy) values: feeds and fetches need no copy
    host_memory = True

    def __init__(self, device_type: str, index: int, task: str = LOCAL_TASK,
                 memory_limit_bytes: Optional[int] = None):
        self.device_type = device_type
        self.index = index
        self.name = "%s/device:%s:%d" % (task, device_type, index)
        self.spec = _dev.DeviceSpec.from_string(self.name)
        self.allocator = Allocator(self.name, memory_limit_bytes, self.tracks_memory)
        self.host_allocator = Allocator(self.name + "/host")
        self.resources = ResourceManager(self.name)
        # a random nonzero id of this device instance (TF's incarnation)
        self.incarnation = (int.from_bytes(os.urandom(8), "little") >> 2) + 1
        self.xp = np

    @property
    def memory_limit_bytes(self) -> int:
        """The limit list_devices reports: the configured one, else TF's default."""
        limit = self.allocator.limit_bytes
        return DEFAULT_MEMORY_LIMIT_BYTES if limit is None else limit

    def kernel_xp(self, op):
        """The array namespace the kernel of `op` computes with on this device."""
        return self.xp

    def bind_kernel(self, fn, op, n_out: int, is_async: bool = False):
        """`fn` (a kernel bound for `op` on this device), wrapped so that its outputs
        are charged to this device's allocator when the allocator tracks; `fn` itself
        otherwise (no cost). Asynchronous kernels (`fn(ctx, state, done, *inputs)`)
        have their `done` wrapped."""
        if not self.allocator.tracking:
            return fn
        track = self.allocator.track

        def charge(r):
            if n_out == 1:
                track(r, op)
            elif n_out:
                for v in r:
                    track(v, op)
            return r

        if is_async:
            def tracked_async(ctx, state, done, *args):
                def charged_done(result=None, exc=None):
                    if exc is None:
                        try:
                            charge(result)
                        except errors.OpError as e:
                            done(exc=e)
                            return
                    done(result, exc)
                return fn(ctx, state, charged_done, *args)
            return tracked_async

        def tracked(ctx, *args):
            return charge(fn(ctx, *args))
        return tracked

    def device_constant(self, value):
        """`value` (a constant's host value) as this device keeps it."""
        return value

    def copy_to_host(self, value, op=None):
        """`value` in host memory (a CPU device's memory is host memory)."""
        return value

    def copy_from_host(self, value, op=None):
        """`value` in this device's memory (`op`, the op asking, names an OOM error)."""
        return value

    def swap_out(self, value):
        """`value` moved to host memory; the caller charges the host allocator."""
        return value

    def swap_in(self, value):
        """`value` moved back to device memory; the caller charges the allocator."""
        return value

    def __repr__(self):
        return "<Device %s>" % self.name


class SimDevice(Device):
    """A simulated accelerator (`/device:SIM:i`): NumPy kernels, its own memory space.

    Every array a kernel on it produces is charged to its allocator while it lives
    (`tracks_memory`). Values cross between it and the host only by real NumPy copies
    (`copy_from_host`, `copy_to_host`; swaps use the same copies), each optionally
    delayed by `copy_latency_s`. `copy_stats` counts copies and bytes each way.
    """

    tracks_memory = True
    host_memory = False

    def __init__(self, index: int, task: str = LOCAL_TASK,
                 memory_limit_bytes: Optional[int] = None, copy_latency_s: float = 0.0):
        Device.__init__(self, "SIM", index, task, memory_limit_bytes)
        self.copy_latency_s = float(copy_latency_s)
        self._stats_lock = threading.Lock()
        self.copy_stats = {"to_host": 0, "from_host": 0, "bytes_to_host": 0,
                           "bytes_from_host": 0}

    def _copy(self, value, direction: str):
        if self.copy_latency_s > 0:
            time.sleep(self.copy_latency_s)
        out = _copied(value)
        with self._stats_lock:
            self.copy_stats[direction] += 1
            self.copy_stats["bytes_" + direction] += _total_nbytes(value)
        return out

    def bind_kernel(self, fn, op, n_out: int, is_async: bool = False):
        """`fn` charging its outputs to this device (Device.bind_kernel), and refusing
        inputs that are host arrays (`check_resident`)."""
        charged = Device.bind_kernel(self, fn, op, n_out, is_async)
        check = self.check_resident
        if is_async:
            def resident_async(ctx, state, done, *args):
                check(args, op)
                return charged(ctx, state, done, *args)
            return resident_async

        def resident(ctx, *args):
            check(args, op)
            return charged(ctx, *args)
        return resident

    def check_resident(self, args, op) -> None:
        """Raises InternalError if an argument is a host array that is not in this
        device's memory: a NumPy array (not int32, strings or objects) whose memory
        block the allocator does not hold. On a GPU such a value would reach a CuPy
        kernel as a NumPy array."""
        holds = self.allocator.holds
        for j, v in enumerate(args):
            if type(v) is not np.ndarray or v.dtype.kind not in "biufc" or \
                    v.dtype == np.int32:
                continue
            if not holds(v):
                what = "op %s of type %s" % (op.name, op.type) if op is not None else \
                    "a kernel"
                msg = ("input %d (%s of shape %s) of %s reached %s without a copy into "
                       "its memory" % (j, _dtype_name(v), list(v.shape), what, self.name))
                if op is None:
                    raise errors.InternalError(None, None, msg)
                raise errors.with_op(errors.InternalError(None, op, msg), op)

    def device_constant(self, value):
        """A constant's copy in this device's memory (made once, as a GPU's)."""
        return self.copy_from_host(value)

    def copy_to_host(self, value, op=None):
        """A copy of `value` in host memory, charged to `host_allocator` while it lives.
        A tuple (the parts of a sparse value) is copied part by part."""
        out = self._copy(value, "to_host")
        _track_all(self.host_allocator, out, op)
        return out

    def copy_from_host(self, value, op=None):
        """A copy of `value` in this device's memory, charged to `allocator` while it
        lives.

        Raises:
          ResourceExhaustedError: if the copy passes the device's memory limit.
        """
        out = self._copy(value, "from_host")
        _track_all(self.allocator, out, op)
        return out

    def swap_out(self, value):
        return self._copy(value, "to_host")

    def swap_in(self, value):
        return self._copy(value, "from_host")


def _copied(value):
    """A NumPy copy of an array, or of each array of a tuple; other values (strings,
    handles, the dead token) are host objects and pass as they are."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if isinstance(value, np.generic):
        return value.copy()
    if type(value) is tuple:
        return tuple(_copied(v) for v in value)
    return value


def _total_nbytes(value) -> int:
    if type(value) is tuple:
        return sum(_total_nbytes(v) for v in value)
    return nbytes_of(value)


def _track_all(allocator: Allocator, value, op) -> None:
    if type(value) is tuple:
        for v in value:
            _track_all(allocator, v, op)
    else:
        allocator.track(value, op)


def _limits_from_config(config) -> tuple:
    """(per-type limits in bytes, SIM limits by index in bytes) from a ConfigProto."""
    if config is None:
        return {}, []
    per_type = {k.upper(): int(float(v) * (1 << 20))
                for k, v in (getattr(config, "device_memory_limit_mb", None) or {}).items()}
    sim = []
    for vd in config.gpu_options.experimental.virtual_devices:
        sim.extend(int(float(mb) * (1 << 20)) for mb in vd.memory_limit_mb)
    return per_type, sim


class DeviceManager:
    """The devices of one session: `device_count['CPU']` CPU devices (at least one) and
    `device_count['SIM']` simulated accelerators (see the module docstring for memory
    limits and copy latency), and the CuPy GPUs (runtime/gpu.py): all that CuPy sees
    unless `device_count['GPU']` asks for fewer; asking for more gives those there are,
    as TF1 does."""

    def __init__(self, device_count: Dict[str, int] = None,
                 memory_limits: Optional[Dict[str, int]] = None,
                 sim_memory_limits: Optional[List[int]] = None,
                 copy_latency_s: float = 0.0, task: str = LOCAL_TASK):
        retain_freed_host_memory()
        counts = {k.upper(): int(v) for k, v in (device_count or {}).items()}
        limits = memory_limits or {}
        sim_limits = list(sim_memory_limits or [])
        n_cpu = max(counts.get("CPU", 1), 1)
        n_sim = counts.get("SIM", len(sim_limits))
        self.devices: List[Device] = [Device("CPU", i, task, limits.get("CPU"))
                                      for i in range(n_cpu)]
        n_gpu = counts.get("GPU", None)
        if n_gpu is None or n_gpu > 0:
            from tensorweave.runtime import gpu as _gpu
            available = _gpu.gpu_count()
            for i in range(available if n_gpu is None else min(n_gpu, available)):
                self.devices.append(_gpu.GPUDevice(i, task, limits.get("GPU")))
        for i in range(n_sim):
            limit = sim_limits[i] if i < len(sim_limits) else limits.get("SIM")
            self.devices.append(SimDevice(i, task, limit, copy_latency_s))
        self.by_name = {d.name: d for d in self.devices}
        self.default = self.devices[0]
        # {op name: device name} of the resource-producing ops earlier steps ran: a
        # resource stays where it was made when later steps add ops that use it (TF's
        # DirectSession keeps stateful placements the same way)
        self.stateful_placements: Dict[str, str] = {}

    @classmethod
    def from_config(cls, config, task: str = LOCAL_TASK) -> "DeviceManager":
        """The devices a ConfigProto (or None) asks for, named under `task`."""
        if config is None:
            return cls(task=task)
        per_type, sim = _limits_from_config(config)
        latency_ms = getattr(config, "sim_copy_latency_ms", 0.0) or 0.0
        return cls(config.device_count, per_type, sim, latency_ms / 1000.0, task)

    @property
    def device_types(self) -> List[str]:
        """The device types present, each once, in device order."""
        return list(dict.fromkeys(d.device_type for d in self.devices))

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
