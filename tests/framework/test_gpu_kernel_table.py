"""The GPU kernel table (framework/gpu_kernels.py) and what the registry makes of it; these
run without a GPU (tests/runtime/test_gpu_device.py runs the kernels on one)."""
import pytest

import tensorweave as tf  # noqa: F401 -- registers the ops
from tensorweave.framework import errors, gpu_kernels, registry


@pytest.mark.parametrize("op_type", sorted(gpu_kernels.GPU_KERNEL_OPS))
def test_every_listed_op_has_a_cpu_kernel_that_may_serve_the_gpu(op_type):
    assert registry.has_kernel(op_type, "CPU"), op_type
    assert registry.host_only_reason(op_type) is None
    assert registry.has_kernel(op_type, "GPU")
    assert registry.kernel_device_types(op_type)[0] == "GPU"  # preferred, as in TF1


def test_an_unlisted_op_has_no_gpu_kernel_and_the_error_says_why(monkeypatch):
    monkeypatch.setattr(gpu_kernels, "GPU_KERNEL_OPS",
                        gpu_kernels.GPU_KERNEL_OPS - {"Cumprod"})
    monkeypatch.setattr(registry, "_MIRRORED", {})
    assert registry.has_kernel("Cumprod", "SIM")  # every CPU kernel serves SIM
    assert not registry.has_kernel("Cumprod", "GPU")
    assert registry.kernel_device_types("Cumprod") == ["SIM", "CPU"]
    with pytest.raises(errors.NotFoundError, match="Cumprod.*GPU.*gpu_kernels.py"):
        registry.get_kernel("Cumprod", "GPU")


def test_host_only_ops_have_no_gpu_kernel_even_if_listed(monkeypatch):
    monkeypatch.setattr(gpu_kernels, "GPU_KERNEL_OPS",
                        gpu_kernels.GPU_KERNEL_OPS | {"AsString"})
    monkeypatch.setattr(registry, "_MIRRORED", {})
    assert not registry.has_kernel("AsString", "GPU")
    with pytest.raises(errors.NotFoundError, match="string ops run on the host"):
        registry.get_kernel("AsString", "GPU")
