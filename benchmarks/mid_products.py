"""Mid-sized float32 products: oneDNN's sgemm on the calling thread against NumPy.

MatMul sends float32 products of 64^3 to 2M multiply-adds to oneDNN's sgemm on one
thread (`onednn.matmul_one_thread`) where oneDNN's kernels are AVX-512 and OpenBLAS's
are not; a plan declines the layouts where sgemm measured slower (`onednn._Sgemm.plan`).
This prints, for each layout (NN: plain operands; TN: the first transposed; NT: the
second transposed), the time of sgemm on one thread over NumPy's `np.dot` for a grid of
shapes in that range, each a median of REPEAT x NUMBER calls in this one process, and
marks the shapes a plan declines. OpenBLAS runs on one thread here once oneDNN is
loaded (ops/math/blas.py), as it does in a session.

Usage: python benchmarks/mid_products.py
"""
import sys
import timeit

import numpy as np

from tensorweave.ops import onednn
from tensorweave.ops.math.blas import LARGE_PRODUCT_MACS, SPLIT_MACS

REPEAT, NUMBER = 5, 100
SHAPES_MN = [(8, 64), (16, 64), (32, 32), (32, 64), (32, 128), (64, 64), (64, 128),
             (128, 128), (16, 256), (64, 256), (256, 16), (4, 512), (2, 1024)]
INNER = [32, 64, 128, 256, 384, 512, 768, 1024, 2048]


def _time(call) -> float:
    return sorted(timeit.repeat(call, number=NUMBER, repeat=REPEAT))[REPEAT // 2] / NUMBER


def main() -> None:
    lib = onednn.library()
    if lib is None or lib.openmp is None:
        sys.exit("oneDNN is not installed here (the `onednn` extra)")
    gemm = onednn._Sgemm(lib, one_thread=True)
    rs = np.random.RandomState(0)
    print("sgemm on one thread / np.dot, float32 (* = a plan declines it: NumPy runs it)")
    for layout in ("NN", "TN", "NT"):
        print("\n%s   k \\ m x n  %s" % (layout, " ".join("%9s" % ("%dx%d" % mn)
                                                       for mn in SHAPES_MN)))
        for k in INNER:
            row = []
            for m, n in SHAPES_MN:
                if not SPLIT_MACS <= m * n * k < LARGE_PRODUCT_MACS:
                    row.append("%9s" % "")
                    continue
                x = rs.rand(k, m).astype(np.float32).T if layout == "TN" else \
                    rs.rand(m, k).astype(np.float32)
                y = rs.rand(n, k).astype(np.float32).T if layout == "NT" else \
                    rs.rand(k, n).astype(np.float32)
                planned = gemm.plan((x.shape, x.strides, y.shape, y.strides)) is not None
                ratio = _ratio(gemm, x, y)
                row.append("%8.2f%s" % (ratio, " " if planned else "*"))
            print("%5d        %s" % (k, " ".join(row)))
    x = rs.rand(64, 64).astype(np.float32)
    print("\n64^3 (below the range: NumPy's): sgemm / np.dot %.2f" % _ratio(gemm, x, x))


def _ratio(gemm, x, y) -> float:
    """sgemm's time over NumPy's for x @ y, through sgemm's arguments for any layout it
    reads (a plan's rules skipped)."""
    key = (x.shape, x.strides, y.shape, y.strides)
    gemm.plans[key] = onednn._sgemm_arguments(key)
    np.testing.assert_allclose(gemm(x, y), np.dot(x, y), rtol=1e-4)
    return _time(lambda: gemm(x, y)) / _time(lambda: np.dot(x, y))


if __name__ == "__main__":
    main()
