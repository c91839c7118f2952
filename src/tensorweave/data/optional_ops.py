"""tf.data.experimental.Optional: a value that may be absent, as one variant tensor.

`get_next_as_optional` (iterator_ops.py) reads the next element of an iterator without raising at the end
of the dataset: the optional it gives has no value there, so a loop can test
`has_value()` in the graph (a `tf.cond` or `tf.while_loop`) instead of catching
OutOfRangeError in Python. The run-time value of the variant is an `OptionalValue`.
"""
from __future__ import annotations

import typing

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeListAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
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


def _is_spec_leaf(x) -> bool:
    """A leaf of an element spec: a TensorSpec-like object, or the (shape, dtype) pair
    `Dataset.element_spec` gives."""
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        return True
    return isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], _dt.DType)


def _spec_structure(element_spec):
    """(structure, flat types, flat shapes) of an element spec."""
    leaves = []

    def walk(x):
        if _is_spec_leaf(x):
            leaves.append((TensorShape(x[0]), x[1]) if isinstance(x, tuple) else
                          (TensorShape(x.shape), _dt.as_dtype(x.dtype)))
            return 0
        if isinstance(x, dict):
            return type(x)((k, walk(v)) for k, v in x.items())
        if isinstance(x, (tuple, list)) and not hasattr(x, "_fields"):
            return type(x)(walk(v) for v in x)
        if isinstance(x, tuple):
            return type(x)(*[walk(v) for v in x])
        raise TypeError("An element spec must nest TensorSpecs or (shape, dtype) pairs, got "
                        "%r" % (x,))

    structure = walk(element_spec)
    # nest orders dict leaves by key: the flat lists follow that order
    order = nest.flatten(nest.pack_sequence_as(structure, list(range(len(leaves)))))
    return structure, [leaves[k][1] for k in order], [leaves[k][0] for k in order]


@tf_export("data.experimental.Optional")
class Optional(_ds.ElementSpec):
    """A value that may be absent (TF's `tf.data.experimental.Optional`), as one variant
    tensor: built by `Optional.from_value`, `Optional.empty` or `get_next_as_optional`,
    read by `has_value()` and `get_value()`."""

    def __init__(self, variant: _graph.Tensor, structure, types, shapes):
        self._variant_tensor = variant
        self._set_spec(structure, types, shapes)

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
        `Dataset.element_spec` or TensorSpecs give it).

        Raises:
          TypeError: `element_spec` nests something else than specs.
        """
        structure, types, shapes = _spec_structure(element_spec)
        return Optional(apply_op("OptionalNone", [], name="OptionalNone").outputs[0],
                        structure, types, shapes)

    # TF 1.x's names for the same
    none_from_structure = empty

    @property
    def element_spec(self):
        """(shape, dtype) pairs in the value's structure."""
        return nest.pack_sequence_as(self._structure, list(zip(self._shapes, self._types)))

    value_structure = element_spec

    def has_value(self, name: typing.Optional[str] = None) -> _graph.Tensor:
        """A scalar bool tensor: whether the optional holds a value."""
        return apply_op("OptionalHasValue", [self._variant_tensor],
                        name=name or "OptionalHasValue").outputs[0]

    def get_value(self, name: typing.Optional[str] = None):
        """The value, in its structure; its run raises InvalidArgumentError when the
        optional has none."""
        return _ds.read_element("OptionalGetValue", [self._variant_tensor], self,
                                name or "OptionalGetValue")
