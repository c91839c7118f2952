"""The op families, one sub-package each (DESIGN.md: one op, one place): each module
holds, for each of its ops, the declaration, shape function, builder, kernel(s) and
gradient; a family's gradient helpers sit in a clearly named module beside them
(`math_grad_util`, `reduction_grad`, `control_flow_grad`, `tensor_array_grad`).
See docs/adding_an_op.md.
"""
import importlib

# Families import each other's modules at the top or inside functions; the order here
# only decides which registers first.
FAMILIES = ("array", "control_flow", "math", "indexing", "nn", "random", "debug", "state",
            "io", "data_flow", "string", "sparse", "linalg", "image", "summary", "ragged")


def load_all() -> None:
    """Imports every family, registering its ops, kernels, gradients and exports."""
    for name in FAMILIES:
        importlib.import_module("tensorweave.ops." + name)
