"""The tf.test namespace: gradient checking, TestCase, Benchmark and TF1's build queries.

The TestCase lives in _test_case.py, Benchmark and benchmark_config in _benchmark.py and
the GraphDef comparison in _graph_compare.py; this module only holds the small
module-level functions and keeps helper imports private. TestCase and Benchmark are
loaded on first use: TestCase derives from absltest's, Benchmark builds protobuf
classes, and `import tensorweave` stays free of both.
"""
import os as _os
import tempfile as _tempfile
import unittest as _unittest

from tensorweave.autodiff.gradient_checker import compute_gradient, compute_gradient_error
from tensorweave.test._graph_compare import assert_equal_graph_def

__all__ = ["Benchmark", "TestCase", "assert_equal_graph_def", "benchmark_config",
           "compute_gradient", "compute_gradient_error", "get_temp_dir", "gpu_device_name",
           "is_built_with_cuda", "is_built_with_gpu_support", "is_built_with_rocm",
           "is_built_with_xla", "is_gpu_available", "main"]


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability=None) -> bool:
    """True when CuPy and a CUDA device are usable."""
    try:
        import cupy  # noqa: F401
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError or a CUDA runtime error: no usable GPU
        return False


def gpu_device_name() -> str:
    return "/device:GPU:0" if is_gpu_available() else ""


def is_built_with_cuda() -> bool:
    return is_gpu_available()


def is_built_with_gpu_support() -> bool:
    return False


def is_built_with_rocm() -> bool:
    return False


def is_built_with_xla() -> bool:
    return False


_TEMP_DIR = []


def get_temp_dir() -> str:
    """A temporary directory for this process's tests (TF's googletest.GetTempDir)."""
    if not _TEMP_DIR:
        _TEMP_DIR.append(_tempfile.mkdtemp(prefix="tensorweave_test_"))
    _os.makedirs(_TEMP_DIR[0], exist_ok=True)
    return _TEMP_DIR[0]


def __getattr__(name):
    if name == "TestCase":
        from tensorweave.test._test_case import TestCase
        return TestCase
    if name in ("Benchmark", "benchmark_config"):
        from tensorweave.test import _benchmark
        return getattr(_benchmark, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    return sorted(set(globals()) | {"TestCase", "Benchmark", "benchmark_config"})


def main(argv=None) -> None:
    """Runs the tests of the calling module (TF1 `tf.test.main`); absl flags in argv are
    parsed first, as absltest does."""
    import sys
    from absl import flags
    argv = list(sys.argv if argv is None else argv)
    chosen = [a for a in argv if a.startswith(("--benchmark_filter=", "-benchmark_filter="))]
    if chosen:  # run the registered tf.test.Benchmark methods instead of the tests
        from tensorweave.test._benchmark import run_benchmarks
        argv.remove(chosen[0])
        flags.FLAGS(argv, known_only=True)
        run_benchmarks(chosen[0].split("=", 1)[1])
        return
    argv = flags.FLAGS(argv, known_only=True)
    _unittest.main(module="__main__", argv=argv)
