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


def test_which_gpu_kernels_compute_in_host_memory(graph):
    # int32 shape/index arithmetic and bfloat16 run on NumPy (TF's GPU int32 kernels are
    # its CPU kernels with host-memory arguments; CuPy has no bfloat16); the rest on CuPy
    from tensorweave.runtime.gpu import runs_on_host
    n = tf.placeholder(tf.int32, [])
    f = tf.placeholder(tf.float32, [2])
    counter = tf.Variable(0, name="counter")
    on_host = [tf.stack([n, 2]), tf.concat([[n], [3]], 0), n * 2, tf.equal(n, 3),
               tf.cast(f, tf.bfloat16), tf.cast(f, tf.bfloat16) * 2,
               tf.stack([tf.constant("w"), tf.constant("b")]), counter.assign_add(n)]
    on_gpu = [f * 2, tf.random.uniform([n, 2]), tf.cast(n, tf.float32), tf.fill([n], 1.5),
              tf.stack([f, f]), tf.reduce_sum(f), tf.Variable(f).assign_add(f)]
    assert [runs_on_host(t.op) for t in on_host] == [True] * len(on_host)
    assert [runs_on_host(t.op) for t in on_gpu] == [False] * len(on_gpu)
