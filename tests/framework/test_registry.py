"""The op registry as a whole: every op is complete, and registries fail loudly."""
import os

import pytest

import tensorweave as tf  # noqa: F401 - registers every op family
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
    with pytest.raises(tf.errors.NotFoundError, match=r"'Identity' on device type GPU.*CPU"):
        registry.get_kernel("Identity", "GPU")
