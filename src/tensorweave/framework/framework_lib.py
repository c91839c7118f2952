"""Small top-level helpers of TF1's framework: version constants, `op_scope`,
`init_scope`, `no_gradient`, `is_symbolic_tensor`, `dimension_at_index`,
`convert_to_tensor_or_indexed_slices` and `tf.OpError`.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Optional

from tensorweave.framework import errors
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import Tensor, get_default_graph, name_scope
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.registry import not_differentiable
from tensorweave.framework.shapes import Dimension, as_shape
from tensorweave.framework.sparse_tensor import SparseTensor

# --- versions ----------------------------------------------------------------------------
# tensorweave is pure Python: no git build stamp and no C++ library. The values say so
# where TF's would describe its native build (TF's own value when built outside git is
# "unknown"); the GraphDef version range is the one tensorweave reads and writes.
GIT_VERSION = "unknown"
# the compiler of the running Python ("GCC 12.2.0"), read from sys.version as
# platform.python_compiler() does, without importing `platform`
COMPILER_VERSION = sys.version.rpartition("[")[2].rstrip("]")
CXX11_ABI_FLAG = 0
CXX_VERSION = 201703
MONOLITHIC_BUILD = 0
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
for _name in ("GIT_VERSION", "COMPILER_VERSION", "CXX11_ABI_FLAG", "CXX_VERSION",
              "MONOLITHIC_BUILD", "GRAPH_DEF_VERSION_MIN_CONSUMER",
              "GRAPH_DEF_VERSION_MIN_PRODUCER"):
    export(globals()[_name], _name)
for _name in ("GIT_VERSION", "COMPILER_VERSION", "GRAPH_DEF_VERSION_MIN_CONSUMER",
              "GRAPH_DEF_VERSION_MIN_PRODUCER"):
    export(globals()[_name], "version." + _name)

export(errors.OpError, "OpError")
export(not_differentiable, "no_gradient")


@tf_export("op_scope")
@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """Deprecated TF1 spelling of `name_scope(name, default_name, values)`.

    Args:
      values: the tensors passed to the op function.
      name: the name of the scope (or None).
      default_name: the name used when `name` is None.

    Yields:
      The scope's name, ending in "/".
    """
    with name_scope(name, default_name, values) as scope:
        yield scope


@tf_export("init_scope")
@contextlib.contextmanager
def init_scope():
    """A context that lifts the creation of ops out of control-flow and control
    dependencies: ops created inside have no control inputs and belong to no cond or
    while loop (as variable initializers need). The name scope is kept.

    Yields:
      None.
    """
    g = get_default_graph()
    saved = g._get_control_flow_context()
    g._set_control_flow_context(None)
    try:
        with g.control_dependencies(None), g._device_functions_for_init():
            yield
    finally:
        g._set_control_flow_context(saved)


@tf_export("is_symbolic_tensor")
def is_symbolic_tensor(tensor) -> bool:
    """True if `tensor` is a graph Tensor (not a variable, SparseTensor or array)."""
    return isinstance(tensor, Tensor)


@tf_export("dimension_at_index")
def dimension_at_index(shape, index: int) -> Dimension:
    """The Dimension of `shape` at `index`; an unknown Dimension when the rank of
    `shape` is unknown.

    Args:
      shape: a TensorShape or anything `TensorShape()` accepts.
      index: the position of the dimension.

    Returns:
      A Dimension.

    Raises:
      IndexError: `index` is out of range for a shape of known rank.
    """
    shape = as_shape(shape)
    if shape.ndims is None:
        return Dimension(None)
    return shape.dims[index]


@tf_export("convert_to_tensor_or_indexed_slices")
def convert_to_tensor_or_indexed_slices(value, dtype=None, name: Optional[str] = None):
    """`value` itself if it is an IndexedSlices or SparseTensor (checking `dtype`),
    else `convert_to_tensor(value, dtype, name)`.

    Args:
      value: an IndexedSlices, SparseTensor, or anything convert_to_tensor accepts.
      dtype: the DType the result must have (optional).
      name: name of a new tensor, if one is created.

    Returns:
      A Tensor, IndexedSlices or SparseTensor.

    Raises:
      ValueError: `dtype` does not match the dtype of an IndexedSlices/SparseTensor.
    """
    if isinstance(value, (IndexedSlices, SparseTensor)):
        if dtype is not None:
            from tensorweave.framework import dtypes as _dt
            want = _dt.as_dtype(dtype)
            if not want.is_compatible_with(value.dtype):
                raise ValueError("Tensor conversion requested dtype %s for Tensor with "
                                 "dtype %s: %r" % (want.name, value.dtype.name, value))
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
