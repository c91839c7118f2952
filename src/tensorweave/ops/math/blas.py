"""How matrix products use BLAS's threads.

Large products take turns. NumPy's BLAS (OpenBLAS) spreads one large product over every
core by itself. Two large products started at once by two inter-op threads then fight
over the same cores: on a 2-core machine a [256, 40000] x [40000, 256] product and a
[40000, 256] x [256, 256] one took 144-174 ms one after the other and 250-464 ms at once.
TensorFlow avoids this by running every kernel's inner work on one shared intra-op pool;
here the large products (and the convolutions built of them) hold one lock while BLAS
works, and small ones, which BLAS runs on one thread, still run side by side.

Products run on one BLAS thread while other processes use the CPU. OpenBLAS splits a
product into one fixed share per thread and waits for the last: when another process
holds a core, the share of a thread waiting for that core arrives a scheduler time slice
late. With one core busy elsewhere, a [128, 784] x [784, 256] product took 0.38 ms at the
median on two threads but 24 ms at the 93rd percentile (0.51 / 0.59 ms on one thread),
and an LSTM step 16-41 ms against 5-9 ms. So every half second at most, a product that
OpenBLAS would split reads /proc/stat: while other processes (or the hypervisor's
steal) take more than a third of a core, OpenBLAS is set to one thread, and back to its
own count when they stop (threadpoolctl sets it; the setting is the process's, so the
program's own NumPy products follow it too). This process's own input worker processes
(train/input_processes.py) say when they hand over work (`note_helper_work`): BLAS then
counts as contended at once, for 50 ms after each, rather than from the next reading
(0.5-1 s later, when a 2-core machine has spent that time with OpenBLAS's spinning
thread and the workers on one core). When BLAS is pinned to one thread
(OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS = 1, or one CPU), nothing
waits and nothing is switched: concurrent products are then the only way to use the
cores.

While oneDNN runs this process's convolutions and large float32 products
(ops/onednn.py), OpenBLAS stays on one thread: oneDNN's OpenMP threads and OpenBLAS's
both spin for a while after each call, and on two cores each pool's spinning threads
halve the other's speed (cnn_train 48 ms with both pools against 30-36 ms with one).
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Optional

# products with at least this many multiply-adds use BLAS's threads (OpenBLAS splits
# well below it; 128^3)
LARGE_PRODUCT_MACS = 1 << 21
# the smallest product OpenBLAS may split: it runs one of at most 64^3 multiply-adds
# (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD, compared with <= in interface/gemm.c)
# on one thread whatever its setting, so a 64x64 product needs no context
SPLIT_MACS = (1 << 18) + 1

_NO_WAIT = contextlib.nullcontext()


def _blas_threads() -> int:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


_THREADS = _blas_threads()
_LOCK = threading.Lock() if _THREADS > 1 else None


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _machine_busy_seconds() -> Optional[float]:
    """CPU seconds all processes have used since boot (steal included), or None where
    /proc/stat is unavailable."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    # cpu user nice system idle iowait irq softirq steal ...
    ticks = sum(int(v) for i, v in enumerate(fields[1:9]) if i not in (3, 4))
    return ticks / _CLOCK_TICKS


class _Contention:
    """Whether other processes took more than `threshold` cores over the last interval
    (polled at most every `interval` seconds; the reading stays until the next poll), or
    whether this process's helper processes reported work until `helpers_until`."""

    def __init__(self, interval: float = 0.5, threshold: float = 1 / 3,
                 clock=time.monotonic, sample=None):
        self.interval = interval
        self.threshold = threshold
        self.clock = clock
        self.helpers_until = 0.0
        # (CPU seconds of every process, CPU seconds of this one)
        self.sample = sample or (lambda: (_machine_busy_seconds(), time.process_time()))
        self.next_poll = 0.0
        self.last = None
        self.contended = False

    def poll(self) -> bool:
        now = self.clock()
        if now < self.helpers_until:
            return True
        if now < self.next_poll:
            return self.contended
        self.next_poll = now + self.interval
        busy, own = self.sample()
        if busy is None:
            return False
        if self.last is not None and now > self.last[0]:
            then, busy0, own0 = self.last
            others = ((busy - busy0) - (own - own0)) / (now - then)
            self.contended = others > self.threshold
        self.last = (now, busy, own)
        return self.contended


class _ThreadSwitch:
    """Sets OpenBLAS's thread count through threadpoolctl, found on first use; does
    nothing where NumPy's BLAS is not OpenBLAS or threadpoolctl is missing. Going back
    restores the count found when it went to one thread (a limit the program set with
    threadpoolctl stays)."""

    def __init__(self):
        self.single = False
        self.restore = None
        self.lib = None
        self.looked = False

    def _library(self):
        if not self.looked:
            self.looked = True
            try:
                from threadpoolctl import ThreadpoolController
                found = ThreadpoolController().select(internal_api="openblas")
                self.lib = found.lib_controllers[0] if found.lib_controllers else None
            except Exception:  # no threadpoolctl, or it cannot read the library
                self.lib = None
        return self.lib

    def to_single(self, single: bool) -> None:
        lib = self._library()
        if lib is not None:
            if single:
                self.restore = lib.get_num_threads()
                lib.set_num_threads(1)
            else:
                lib.set_num_threads(self.restore or _THREADS)
        self.single = single


class _Product:
    """The context of one product BLAS may split: counts the products in flight, so
    that OpenBLAS's thread count only changes while none runs (changing it under a
    running product is not safe), and holds the shared lock for a large one while BLAS
    is multi-threaded."""

    __slots__ = ("large", "locked")

    def __init__(self, large: bool):
        self.large = large
        self.locked = False

    def __enter__(self):
        global _IN_FLIGHT
        with _STATE:
            contended = _CONTENTION.poll() or _ONE_POOL
            if contended != _SWITCH.single and _IN_FLIGHT == 0:
                _SWITCH.to_single(contended)
            _IN_FLIGHT += 1
            single = _SWITCH.single
        if self.large and not single:
            _LOCK.acquire()
            self.locked = True
        return self

    def __exit__(self, *exc):
        global _IN_FLIGHT
        if self.locked:
            self.locked = False
            _LOCK.release()
        with _STATE:
            _IN_FLIGHT -= 1
        return False


_CONTENTION = _Contention()
_ONE_POOL = False  # set once oneDNN's threads do the large products
_SWITCH = _ThreadSwitch()
_STATE = threading.Lock()  # guards the poll, the switch and the count below
_IN_FLIGHT = 0


def large_product(macs: int):
    """A context to hold around a matrix product of `macs` multiply-adds: for one BLAS
    may split, the contention check and the thread switch (see the module docstring),
    and the shared lock for a large one while BLAS is multi-threaded; else a no-op."""
    if _LOCK is None or macs < SPLIT_MACS:
        return _NO_WAIT
    return _Product(macs >= LARGE_PRODUCT_MACS)


def machine_contended() -> bool:
    """Whether other processes (or this one's input workers) take the CPU now, as the
    products BLAS may split see it (see the module docstring)."""
    with _STATE:
        return _CONTENTION.poll()


# how long a report of helper work counts as contention: input workers report each batch
# they hand over, every few milliseconds while they keep up with training
HELPER_WORK_SECONDS = 0.05


def note_helper_work(busy: bool = True) -> None:
    """Tells BLAS that a helper process of this one (an input worker) has just handed
    over work (`busy`): products BLAS may split count as contended for
    HELPER_WORK_SECONDS (see the module docstring); or that the helpers are about to
    wait (not `busy`: the queue they fill is full), which ends that at once."""
    _CONTENTION.helpers_until = _CONTENTION.clock() + HELPER_WORK_SECONDS if busy else 0.0


def leave_threads_to_onednn() -> None:
    """Keeps OpenBLAS on one thread from now on: oneDNN's pool does the large products
    (see the module docstring)."""
    global _ONE_POOL
    with _STATE:
        _ONE_POOL = True
        if _IN_FLIGHT == 0 and _LOCK is not None and not _SWITCH.single:
            _SWITCH.to_single(True)
