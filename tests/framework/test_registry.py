"""The op registry as a whole: every op is complete, and registries fail loudly."""
import os

import pytest

import tensorweave as tf  # noqa: F401 - registers every op family
import tensorweave.data  # noqa: F401 - and the dataset ops, registered on first use
import tensorweave.ops.clustering_ops  # noqa: F401 - and the clustering ops (the same)
from tensorweave.framework import registry

_PACKAGE = os.path.dirname(tf.__file__)


def test_every_op_has_shape_function_kernel_and_gradient_entry():
    incomplete = []
    for name, op_def in sorted(registry.registered_ops().items()):
        if not op_def.where.startswith(_PACKAGE):
            continue  # an op a test registered to exercise the registry
        if op_def.outputs and op_def.shape_fn is None:
            incomplete.append("%s: no shape function" % name)
        if not registry.has_kernel(name, "CPU"):
            incomplete.append("%s: no CPU kernel" % name)
        if not registry.has_gradient_entry(name):
            incomplete.append("%s: neither a gradient nor not_differentiable" % name)
    assert not incomplete, "\n".join(incomplete)


def test_duplicate_registrations_name_the_first_place():
    with pytest.raises(ValueError, match=r"registered twice: first at .*structure\.py"):
        registry.register_op("Identity")
    with pytest.raises(ValueError, match=r"Kernel for Identity on CPU registered twice"):
        registry.kernel("Identity")(lambda ctx, x: x)
    with pytest.raises(KeyError, match="Registering two gradient with name 'Identity'"):
        registry.gradient("Identity")(lambda op, g: [g])


def test_missing_kernel_names_op_device_and_what_exists():
    with pytest.raises(tf.errors.NotFoundError, match=r"'Identity' on device type TPU.*CPU"):
        registry.get_kernel("Identity", "TPU")


# --- kernels by device type: the simulated accelerator reuses the CPU bodies ------------

def _kernel_module(op_type):
    return registry.get_kernel(op_type, "CPU").fn.__module__


def test_cpu_kernels_serve_the_accelerator_except_host_only_ops():
    assert registry.kernel_device_types("MatMul")[-2:] == ["SIM", "CPU"]
    assert registry.has_kernel("MatMul", "SIM")
    sim, cpu = registry.get_kernel("MatMul", "SIM"), registry.get_kernel("MatMul", "CPU")
    assert sim.fn is cpu.fn and sim.device_type == "SIM" and cpu.device_type == "CPU"
    assert (sim.cheap, sim.is_async) == (cpu.cheap, cpu.is_async)
    # TensorArrays and stacks live in device memory, as on a TF GPU
    for op_type in ("TensorArrayV3", "TensorArrayWriteV3", "StackPushV2", "StackPopV2",
                    "Conv2D", "CheckNumerics", "Switch", "Merge"):
        assert registry.has_kernel(op_type, "SIM"), op_type
    for op_type in ("StringJoin", "Print", "PrintV2", "Assert", "QueueDequeueV2",
                    "FIFOQueueV2", "PyFunc", "ParseExample", "DecodeJpeg",
                    "TFRecordReaderV2", "SaveV2", "RestoreV2", "ScalarSummary"):
        assert registry.has_kernel(op_type, "CPU"), op_type
        assert not registry.has_kernel(op_type, "SIM"), op_type
        assert registry.kernel_device_types(op_type) == ["CPU"], op_type
    assert registry.has_kernel("MatMul", "GPU")  # listed in framework/gpu_kernels.py
    assert not registry.has_kernel("MatMul", "TPU")  # only the accelerator types mirror


def test_missing_accelerator_kernel_says_why():
    with pytest.raises(tf.errors.NotFoundError,
                       match=r"'StringJoin' on device type SIM \(kernels exist for: CPU\)"
                             r"; string ops run on the host"):
        registry.get_kernel("StringJoin", "SIM")
    with pytest.raises(tf.errors.NotFoundError, match="queues live in host memory"):
        registry.get_kernel("QueueDequeueV2", "SIM")


def test_host_only_table_matches_the_registry():
    kernels = [(t, d) for (t, d) in registry._KERNELS if d == "CPU"]
    modules = {_kernel_module(t) for t, _ in kernels}
    for prefix in registry.HOST_ONLY_MODULES:  # every row names kernels that exist
        assert any(m == prefix or m.startswith(prefix + ".") for m in modules), prefix
    for op_type in registry.HOST_ONLY_OPS:
        assert registry.has_kernel(op_type, "CPU"), op_type
        assert not registry.has_kernel(op_type, "SIM"), op_type
    for op_type, _ in kernels:  # the rest of the CPU kernels all serve SIM
        expected = registry.host_only_reason(op_type) is None
        assert registry.has_kernel(op_type, "SIM") == expected, op_type


def test_preferred_device_types_put_the_accelerator_first():
    assert registry.preferred_device_types("MatMul", ["CPU", "SIM"]) == ["SIM", "CPU"]
    assert registry.preferred_device_types("MatMul", ["SIM", "CPU", "SIM"]) == ["SIM", "CPU"]
    assert registry.preferred_device_types("MatMul", ["CPU"]) == ["CPU"]
    assert registry.preferred_device_types("StringJoin", ["CPU", "SIM"]) == ["CPU"]
    assert registry.preferred_device_types("StringJoin", ["SIM"]) == []
    assert registry.preferred_device_types("NoSuchOp", ["CPU", "SIM"]) == []


def test_explicit_accelerator_kernel_wins_over_the_mirrored_one():
    registry.register_op("TestDeviceTypesOp", inputs=["x: float"], outputs=["y: float"])

    @registry.kernel("TestDeviceTypesOp")
    def _cpu(ctx, x):
        return x

    assert registry.get_kernel("TestDeviceTypesOp", "SIM").fn is _cpu

    @registry.kernel("TestDeviceTypesOp", devices=("SIM",))
    def _sim(ctx, x):
        return x

    assert registry.get_kernel("TestDeviceTypesOp", "SIM").fn is _sim
    assert registry.kernel_device_types("TestDeviceTypesOp") == ["SIM", "CPU"]


def test_a_graph_def_with_data_ops_imports_before_tf_data_is_touched():
    """A ps task receives the whole graph from its master without ever having imported
    tensorweave.data itself: looking up a dataset op imports the library that
    registers it (before, import_graph_def failed with "Op type not registered")."""
    import subprocess
    import sys
    import textwrap
    with tf.Graph().as_default() as g:
        ds = tf.data.Dataset.range(3).repeat(2).skip(1)
        it = tf.data.make_one_shot_iterator(ds)
        it.get_next(name="next")
    script = textwrap.dedent("""\
        import sys
        import tensorweave as tf
        assert "tensorweave.data" not in sys.modules
        gd = tf.GraphDef.FromString(sys.stdin.buffer.read())
        with tf.Graph().as_default():
            tf.import_graph_def(gd, name="")
            with tf.Session() as s:
                print([int(s.run("next:0")) for _ in range(4)])
        """)
    proc = subprocess.run([sys.executable, "-c", script], input=g.as_graph_def()
                          .SerializeToString(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip() == "[1, 2, 0, 1]"


def test_an_unknown_op_still_names_itself():
    with pytest.raises(ValueError, match="No op named NoSuchOpAnywhere registered"):
        registry.get_op_def("NoSuchOpAnywhere")
