"""The op families: one module per family; each op declared once with its shape
function, kernel(s) and gradient (DESIGN.md: one op, one place)."""
import importlib

# Import order matters only for registration speed, not correctness: families import
# each other inside functions.
FAMILIES = (
    "constant_op", "structure", "math_grad_util", "math_unary", "math_binary", "math_ops",
    "reduction_ops", "matmul_ops", "array_ops", "indexing_ops", "segment_ops", "nn_ops",
    "nn_losses", "conv_ops", "random_ops", "debug_ops", "resource_variable_ops", "variables",
    "init_ops", "variable_scope", "state_ops", "embedding_ops", "clip_ops", "io_ops",
    "queue_ops", "record_io", "reader_ops", "string_ops", "sparse_ops", "parsing_ops",
    "control_flow_ops", "control_flow_grad", "tensor_array_ops", "stack_ops", "functional_ops")


def load_all() -> None:
    """Imports every family, registering its ops, kernels, gradients and exports."""
    for name in FAMILIES:
        importlib.import_module("tensorweave.ops." + name)
