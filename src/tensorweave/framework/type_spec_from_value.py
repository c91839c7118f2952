"""tf.type_spec_from_value: the tf.TypeSpec of a value, as TF 2.x's compat.v1 gives it.

A value of a kind with a converter (registered here or by the module of its kind:
RaggedTensor, TensorArray, Dataset, Optional) gives that converter's spec; a non-empty
list whose items all have a batchable spec (TensorSpec, SparseTensorSpec,
RaggedTensorSpec, NoneTensorSpec, DatasetSpec) with a common supertype gives that
supertype batched; anything else is converted to a tensor (a Python scalar, list or
tuple) and gives that tensor's TensorSpec.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.composite_specs import IndexedSlicesSpec, NoneTensorSpec
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_spec import SparseTensorSpec, TensorSpec, TypeSpec

# (type, converter, whether subclasses match); the latest registration wins, as TF's
_CONVERTERS: List[Tuple[type, Callable, bool]] = []


def register_converter(value_type: type, converter: Callable,
                       allow_subclass: bool = False) -> None:
    """Makes tf.type_spec_from_value give `converter(value)` for values of
    `value_type` (of a subclass too when `allow_subclass`)."""
    _CONVERTERS.append((value_type, converter, allow_subclass))


def _registered_spec(value) -> Optional[TypeSpec]:
    """The spec of `value` by its kind, or by its items when a list, or None."""
    if isinstance(value, list) and value:
        items = [_registered_spec(v) for v in value]
        if hasattr(items[0], "_batch"):
            common = items[0].most_specific_common_supertype(items[1:])
            if common is not None:
                return common._batch(len(items))
    for value_type, converter, allow_subclass in reversed(_CONVERTERS):
        if type(value) is value_type or (allow_subclass and isinstance(value, value_type)):
            return converter(value)
    return None


@tf_export("type_spec_from_value")
def type_spec_from_value(value) -> TypeSpec:
    """The tf.TypeSpec of `value` (TF `tf.type_spec_from_value`).

    Args:
      value: a tensor, a composite (SparseTensor, RaggedTensor, IndexedSlices,
        TensorArray, Dataset, Optional), a NumPy array, None, or anything
        tf.convert_to_tensor takes.

    Returns:
      A spec that `value` is compatible with (a Tensor's without its name).

    Raises:
      TypeError: no spec can be built for `value`.
    """
    spec = _registered_spec(value)
    if spec is not None:
        return spec
    from tensorweave.framework.op_builder import convert_to_tensor
    try:
        spec = _registered_spec(convert_to_tensor(value))
    except (ValueError, TypeError):
        spec = None
    if spec is None:
        raise TypeError("Could not build a TypeSpec for %s of unsupported type %s."
                        % (value, type(value)))
    return spec


register_converter(Tensor, lambda t: TensorSpec(t.shape, t.dtype), allow_subclass=True)
register_converter(np.ndarray, lambda a: TensorSpec(a.shape, _dt.as_dtype(a.dtype)))
register_converter(SparseTensor, SparseTensorSpec.from_value)
register_converter(SparseTensorValue, SparseTensorSpec.from_value)
register_converter(IndexedSlices, IndexedSlicesSpec.from_value)
register_converter(type(None), NoneTensorSpec.from_value)
