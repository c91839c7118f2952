"""The tf.test namespace: gradient checking, TestCase, Benchmark and TF1's build queries.

The TestCase lives in _test_case.py, Benchmark and benchmark_config in _benchmark.py and
the GraphDef comparison in _graph_compare.py; this module only holds the small
module-level functions and keeps helper imports private. TestCase and Benchmark are
loaded on first use: TestCase derives from absltest's, Benchmark builds protobuf
classes, and `import tensorweave` stays free of both.
"""
import functools as _functools
import os as _os
import platform as _platform
import tempfile as _tempfile
import unittest as _unittest
from typing import Callable as _Callable

from tensorweave.autodiff.gradient_checker import compute_gradient, compute_gradient_error
from tensorweave.test._graph_compare import assert_equal_graph_def
from tensorweave.test._stubout import StubOutForTesting

__all__ = ["Benchmark", "StubOutForTesting", "TestCase", "assert_equal_graph_def",
           "benchmark_config", "compute_gradient", "compute_gradient_error",
           "disable_with_predicate", "get_temp_dir", "gpu_device_name", "is_built_with_cuda",
           "is_built_with_gpu_support", "is_built_with_rocm", "is_built_with_xla",
           "is_cpu_target_available", "is_gpu_available", "main", "mock",
           "test_src_dir_path"]


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


# TF's CPU target families (test_util.IsCPUTargetAvailable), by name prefix, and the
# values of platform.machine() of each
_CPU_TARGETS = (("arm", ("armv6l", "armv7l", "armv8l", "arm")),
                ("aarch64", ("aarch64", "arm64")),
                ("ppc", ("ppc64", "ppc64le", "powerpc")),
                ("powerpc", ("ppc64", "ppc64le", "powerpc")),
                ("x86", ("x86_64", "amd64", "i386", "i686", "x86")),
                ("s390x", ("s390x",)))


def is_cpu_target_available(target: str) -> bool:
    """Whether tensorweave can run code for the CPU target `target` ("x86", "aarch64",
    "arm", "powerpc"/"ppc", "s390x"; TF matches the name by prefix).

    TF answers for the LLVM back ends its XLA compiler was built with; tensorweave runs
    NumPy kernels and compiles nothing, so it supports exactly the CPU it runs on.

    Args:
      target: the name of the CPU target.

    Returns:
      True if `target` names the family of this machine's CPU.

    Raises:
      AssertionError: `target` names no CPU family TF knows (as TF).
    """
    machine = _platform.machine().lower()
    for prefix, machines in _CPU_TARGETS:
        if target.startswith(prefix):
            return machine in machines
    raise AssertionError("Unknown CPU target: " + target)


def test_src_dir_path(relative_path: str) -> str:
    """An absolute test source path for `relative_path` (a path relative to the
    tensorflow root, e.g. "core/platform"): under Bazel's runfiles tree,
    $TEST_SRCDIR/$TEST_WORKSPACE/tensorflow/<relative_path>, as TF1.

    Raises:
      KeyError: TEST_SRCDIR or TEST_WORKSPACE is not set (outside `bazel test`, as TF).
    """
    return _os.path.join(_os.environ["TEST_SRCDIR"], _os.environ["TEST_WORKSPACE"],
                         "tensorflow", relative_path)


def disable_with_predicate(pred: _Callable[[], bool], skip_message: str) -> _Callable:
    """A decorator for test methods: the test is skipped with `skip_message` when
    `pred()` is true at the time it runs.

    Args:
      pred: a callable of no arguments returning a bool.
      skip_message: the reason reported for the skip.

    Returns:
      The decorator.
    """
    def decorator_disable_with_predicate(func):
        @_functools.wraps(func)
        def wrapper_disable_with_predicate(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            else:
                return func(self, *args, **kwargs)
        return wrapper_disable_with_predicate
    return decorator_disable_with_predicate


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
    if name == "mock":  # TF1's tf.test.mock is unittest.mock (which loads asyncio)
        import unittest.mock
        return unittest.mock
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    return sorted(set(globals()) | {"TestCase", "Benchmark", "benchmark_config", "mock"})


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
