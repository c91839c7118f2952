"""`tf.add_check_numerics_ops`: a CheckNumerics for every floating-point tensor of the
graph, chained by control dependencies and grouped into one op (as TF1)."""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, control_dependencies, get_default_graph
from tensorweave.ops.control_flow import structure
from tensorweave.ops.debug import debug_ops

_CHECKED = (_dt.float16, _dt.float32, _dt.float64)


@tf_export("add_check_numerics_ops")
def add_check_numerics_ops() -> Operation:
    """Connects a `check_numerics` to every float16/32/64 tensor of the default graph.

    Each check's message is "<op name>:<output index>"; running the returned op fails
    with InvalidArgumentError at the first tensor holding a NaN or Inf.

    Returns:
      A grouped Operation running all the checks.

    Raises:
      ValueError: the graph holds ops inside a cond or while_loop (as TF1, not
        supported).
    """
    checks = []
    for op in get_default_graph().get_operations():
        for output in op.outputs:
            if output.dtype not in _CHECKED:
                continue
            if op._control_flow_context is not None:
                raise ValueError("`tf.add_check_numerics_ops() is not compatible with "
                                 "TensorFlow control flow operations such as `tf.cond()` "
                                 "or `tf.while_loop()`.")
            with control_dependencies(checks):
                checks = [debug_ops.check_numerics(
                    output, message="%s:%d" % (op.name, output.value_index))]
    return structure.group(*checks)
