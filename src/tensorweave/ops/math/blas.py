"""Large matrix products take turns.

NumPy's BLAS (OpenBLAS) spreads one large product over every core by itself. Two large
products started at once by two inter-op threads then fight over the same cores: on this
2-core machine a [256, 40000] x [40000, 256] product and a [40000, 256] x [256, 256] one
took 144-174 ms one after the other and 250-464 ms at once. TensorFlow avoids this by
running every kernel's inner work on one shared intra-op pool; here the large products
(and the convolutions built of them) hold one lock while BLAS works, and small ones,
which BLAS runs on one thread, still run side by side. When BLAS is pinned to one
thread (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS = 1, or one CPU),
nothing waits: concurrent products are then the only way to use the cores.
"""
from __future__ import annotations

import contextlib
import os
import threading

# products with at least this many multiply-adds use BLAS's threads (OpenBLAS splits
# well below it; 128^3)
LARGE_PRODUCT_MACS = 1 << 21

_NO_WAIT = contextlib.nullcontext()


def _blas_threads() -> int:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


_LOCK = threading.Lock() if _blas_threads() > 1 else None


def large_product(macs: int):
    """A context to hold around a matrix product of `macs` multiply-adds: the shared
    lock for a large one while BLAS is multi-threaded, else a no-op."""
    return _LOCK if _LOCK is not None and macs >= LARGE_PRODUCT_MACS else _NO_WAIT
