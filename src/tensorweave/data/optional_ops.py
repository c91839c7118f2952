"""tf.data.experimental.Optional: a value that may be absent, as one variant tensor.

`get_next_as_optional` (iterator_ops.py) reads the next element of an iterator without raising at the end
of the dataset: the optional it gives has no value there, so a loop can test
`has_value()` in the graph (a `tf.cond` or `tf.while_loop`) instead of catching
OutOfRangeError in Python. The run-time value of the variant is an `OptionalValue`.
"""
from __future__ import annotations

import typing

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeListAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.composite_specs import OptionalSpec
from tensorweave.framework.tensor_spec import SparseTensorSpec, TensorSpec
from tensorweave.framework.type_spec_from_value import register_converter
from tensorweave.ops.ragged.ragged_tensor_spec import RaggedTensorSpec
from tensorweave.data import dataset_ops as _ds


class OptionalValue:
    """The run-time value of an optional: its components, or None when it has none."""

    __slots__ = ("components",)

    def __init__(self, components: typing.Optional[list]):
        self.components = components


def _scalar(op):
    return TensorShape([])


_SPEC = {"output_types": TypeListAttr(), "output_shapes": []}
register_op("OptionalFromValue", inputs=["components: Toutput_types"],
            outputs=["optional: variant"], attrs={"Toutput_types": TypeListAttr()},
            shape=_scalar)
register_op("OptionalNone", outputs=["optional: variant"], shape=_scalar)
register_op("OptionalHasValue", inputs=["optional: variant"],
            outputs=["has_value: bool"], shape=_scalar)
register_op("OptionalGetValue", inputs=["optional: variant"],
            outputs=["components: output_types"], attrs=dict(_SPEC),
            shape=lambda op: [TensorShape(s) for s in op._get_attr("output_shapes")])
register_op("IteratorGetNextAsOptional", inputs=["iterator: resource"],
            outputs=["optional: variant"], attrs=dict(_SPEC), shape=_scalar, stateful=True)
for _op in ("OptionalFromValue", "OptionalNone", "OptionalHasValue", "OptionalGetValue",
            "IteratorGetNextAsOptional"):
    not_differentiable(_op)


def _optional(ctx, value) -> OptionalValue:
    if not isinstance(value, OptionalValue):
        raise errors.InvalidArgumentError(None, ctx.op, "Input tensor must be an optional, "
                                          "got %s" % type(value).__name__)
    return value


@kernel("OptionalFromValue")
def _from_value_kernel(ctx, *components):
    return OptionalValue(list(components))


@kernel("OptionalNone")
def _none_kernel(ctx):
    return OptionalValue(None)


@kernel("OptionalHasValue")
def _has_value_kernel(ctx, optional):
    return np.bool_(_optional(ctx, optional).components is not None)


@kernel("OptionalGetValue")
def _get_value_kernel(ctx, optional):
    components = _optional(ctx, optional).components
    if components is None:
        raise errors.InvalidArgumentError(None, ctx.op,
                                          "The given optional does not have a value.")
    return list(components)


@kernel("IteratorGetNextAsOptional")
def _get_next_as_optional_kernel(ctx, iterator):
    try:
        return OptionalValue(list(iterator.next(ctx)))
    except errors.OutOfRangeError:
        return OptionalValue(None)


def _spec_structure(element_spec):
    """(structure, flat types, flat shapes) of an element spec: TensorSpecs,
    SparseTensorSpecs and RaggedTensorSpecs in a structure.

    Raises:
      TypeError: a leaf is something else.
    """
    for leaf in nest.flatten(element_spec):
        if not isinstance(leaf, (TensorSpec, SparseTensorSpec, RaggedTensorSpec)):
            raise TypeError("An element spec must nest tf.TensorSpec, tf.SparseTensorSpec "
                            "or tf.RaggedTensorSpec values, got %r" % (leaf,))
    classes = nest.map_structure(lambda s: SparseTensor if isinstance(s, SparseTensorSpec)
                                 else s if isinstance(s, RaggedTensorSpec) else None,
                                 element_spec)
    return _ds.element_structure(nest.map_structure(lambda s: s.dtype, element_spec),
                                 nest.map_structure(lambda s: s.shape, element_spec),
                                 classes)


@tf_export("data.experimental.Optional")
class Optional(_ds.ElementSpec):
    """A value that may be absent (TF's `tf.data.experimental.Optional`), as one variant
    tensor: built by `Optional.from_value`, `Optional.empty` or `get_next_as_optional`,
    read by `has_value()` and `get_value()`."""

    def __init__(self, variant: _graph.Tensor, structure, types, shapes, names=None):
        self._variant_tensor = variant
        self._set_spec(structure, types, shapes, names)

    @staticmethod
    def from_value(value) -> "Optional":
        """An optional that holds `value` (a nested structure of tensors or
        SparseTensors)."""
        structure, flat = _ds.structure_of(value)
        op = apply_op("OptionalFromValue", [flat],
                      {"Toutput_types": [t.dtype for t in flat]}, name="OptionalFromValue")
        return Optional(op.outputs[0], structure, [t.dtype for t in flat],
                        [t.shape for t in flat])

    @staticmethod
    def empty(element_spec) -> "Optional":
        """An optional with no value, whose value would be of `element_spec` (as
        `Dataset.element_spec` gives it: tf.TensorSpec, tf.SparseTensorSpec and
        tf.RaggedTensorSpec values in a structure).

        Raises:
          TypeError: `element_spec` nests something else than specs.
        """
        structure, types, shapes = _spec_structure(element_spec)
        # a TensorSpec's name stays in the optional's element_spec (TF's)
        names = [s.name if isinstance(s, TensorSpec) else None
                 for s in nest.flatten(element_spec)]
        return Optional(apply_op("OptionalNone", [], name="OptionalNone").outputs[0],
                        structure, types, shapes, names)

    # TF 1.x's names for the same
    none_from_structure = empty

    # TF 1.x's name for element_spec
    value_structure = _ds.ElementSpec.element_spec

    def has_value(self, name: typing.Optional[str] = None) -> _graph.Tensor:
        """A scalar bool tensor: whether the optional holds a value."""
        return apply_op("OptionalHasValue", [self._variant_tensor],
                        name=name or "OptionalHasValue").outputs[0]

    def get_value(self, name: typing.Optional[str] = None):
        """The value, in its structure; its run raises InvalidArgumentError when the
        optional has none."""
        return _ds.read_element("OptionalGetValue", [self._variant_tensor], self,
                                name or "OptionalGetValue")


register_converter(Optional, OptionalSpec.from_value, allow_subclass=True)
