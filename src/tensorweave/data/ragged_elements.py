"""RaggedTensor components of tf.data elements.

As a SparseTensor's, a RaggedTensor component travels as one variant component: at run
time a RaggedComponent holding its flat values and nested row splits, in the element
structure a RaggedSpec leaf (dtype, static shape, ragged rank, row_splits dtype).
RaggedTensorToVariant and RaggedTensorFromVariant (TF's op names) convert between a
RaggedTensor and its component where an element enters a dataset or a function, and
where get_next or a function's argument makes it a RaggedTensor again.

Batching stacks ragged components into a RaggedTensor of one more ragged dimension (as
TF 2.x batches them), and unbatch or from_tensor_slices take their rows, one ragged
dimension fewer. A component of ragged rank 0 (a row of a ragged rank 1 tensor) is a
dense Tensor in functions and get_next, as TF's, but batches into a RaggedTensor; the
rows of that one have ragged rank -1 (TF's too): dense Tensors again, whose batch is a
dense stack of them (ragged rank 0). A ragged dimension the leaf's static shape knows
is rebuilt uniform (its uniform_row_length that constant), as TF's RaggedTensorSpec
does, so rows of one length stay uniform through batch, unbatch and functions.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
from tensorweave.ops.ragged.ragged_tensor_spec import RaggedTensorSpec


# --- run time: the component value ------------------------------------------------------------
class RaggedComponent:
    """A RaggedTensor's arrays as one run-time component value: `flat_values` and
    `splits` (the row splits of each ragged dimension, outermost first), all of
    `splits_dtype` (kept for a ragged rank 0 value, whose batch needs it), and its
    `ragged_rank`: len(splits), or below 0 for a dense row of a ragged rank 0 one."""

    __slots__ = ("flat_values", "splits", "splits_dtype", "ragged_rank")

    def __init__(self, flat_values, splits: Sequence, splits_dtype,
                 ragged_rank: Optional[int] = None):
        self.flat_values = np.asarray(flat_values)
        self.splits_dtype = np.dtype(splits_dtype)
        self.splits = tuple(np.asarray(s, self.splits_dtype) for s in splits)
        self.ragged_rank = len(self.splits) if ragged_rank is None else ragged_rank

    def rows(self) -> int:
        if self.splits:
            return len(self.splits[0]) - 1
        if self.flat_values.ndim == 0:
            raise errors.InvalidArgumentError(None, None, "Unbatching a tensor is only "
                                              "supported for rank >= 1")
        return self.flat_values.shape[0]

    def row(self, i: int) -> "RaggedComponent":
        """Row `i`: one ragged dimension fewer (a dense row for ragged rank 1)."""
        if not self.splits:
            return RaggedComponent(self.flat_values[i], (), self.splits_dtype,
                                   self.ragged_rank - 1)
        start, stop = self.splits[0][i], self.splits[0][i + 1]
        inner = []
        for level in self.splits[1:]:  # the rows of row i at each deeper dimension
            inner.append(level[start:stop + 1] - level[start])
            start, stop = level[start], level[stop]
        return RaggedComponent(self.flat_values[start:stop], inner, self.splits_dtype)

    @staticmethod
    def stack(parts: List["RaggedComponent"]) -> "RaggedComponent":
        """The batch of `parts`: a RaggedTensor of one more ragged dimension whose rows
        are the parts (TF's batching of ragged elements).

        Raises:
          InvalidArgumentError: parts of different ragged ranks or inner dimensions (or
            dense rows of different shapes).
        """
        first = parts[0]
        uniform = 0 if first.ragged_rank < 0 else 1  # the dimensions that must agree
        for p in parts[1:]:
            if p.ragged_rank != first.ragged_rank or \
                    p.flat_values.shape[uniform:] != first.flat_values.shape[uniform:]:
                raise errors.InvalidArgumentError(
                    None, None, "Cannot batch RaggedTensors of different ragged ranks or "
                    "inner dimensions: %s and %s" % (_describe(first), _describe(p)))
        if first.ragged_rank < 0:  # dense rows: a dense batch
            return RaggedComponent(np.stack([p.flat_values for p in parts]), (),
                                   first.splits_dtype, first.ragged_rank + 1)
        outer = _joined_splits([np.array([0, p.rows()]) for p in parts])
        levels = [_joined_splits([p.splits[k] for p in parts])
                  for k in range(first.ragged_rank)]
        values = np.concatenate([p.flat_values for p in parts])
        return RaggedComponent(values, [outer] + levels, first.splits_dtype)


def _joined_splits(splits: List[np.ndarray]) -> np.ndarray:
    """The row splits of the rows of all `splits` one after the other."""
    out, offset = [np.zeros(1, np.int64)], 0
    for s in splits:
        out.append(np.asarray(s[1:], np.int64) + offset)
        offset += int(s[-1])
    return np.concatenate(out)


def _describe(c: RaggedComponent) -> str:
    return "ragged_rank %d, values shape %s" % (c.ragged_rank, list(c.flat_values.shape))


# --- the ops converting a RaggedTensor to and from its component ----------------------------
register_op("RaggedTensorToVariant",
            inputs=["rt_nested_splits: RAGGED_RANK * Tsplits", "rt_dense_values: Tvalues"],
            outputs=["encoded_ragged: variant"],
            attrs={"RAGGED_RANK": 0, "Tvalues": TypeAttr(),
                   "Tsplits": TypeAttr([_dt.int32, _dt.int64], default=_dt.int64),
                   "batched_input": False},
            shape=lambda op: TensorShape([]))
register_op("RaggedTensorFromVariant", inputs=["encoded_ragged: variant"],
            outputs=["output_nested_splits: output_ragged_rank * Tsplits",
                     "output_dense_values: Tvalues"],
            attrs={"input_ragged_rank": -1, "output_ragged_rank": 0, "Tvalues": TypeAttr(),
                   "Tsplits": TypeAttr([_dt.int32, _dt.int64], default=_dt.int64)},
            shape=lambda op: [TensorShape([None])] * op._get_attr("output_ragged_rank") +
            [TensorShape(None)])
not_differentiable("RaggedTensorToVariant")
not_differentiable("RaggedTensorFromVariant")


@kernel("RaggedTensorToVariant")
def _ragged_to_variant_kernel(ctx, *inputs):
    return RaggedComponent(inputs[-1], inputs[:-1],
                           _dt.as_dtype(ctx.attrs["Tsplits"]).as_numpy_dtype)


@kernel("RaggedTensorFromVariant")
def _ragged_from_variant_kernel(ctx, component):
    want = ctx.attrs["output_ragged_rank"]
    if not isinstance(component, RaggedComponent) or len(component.splits) != want:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected a RaggedTensor component of ragged_rank %d, got %s"
            % (want, _describe(component) if isinstance(component, RaggedComponent)
               else type(component).__name__))
    return tuple(component.splits) + (component.flat_values,)


# --- the structure leaf ----------------------------------------------------------------------
class RaggedSpec:
    """The structure leaf of a RaggedTensor component: its values' dtype, static shape,
    ragged rank and row_splits dtype (the component itself is one variant tensor)."""

    __slots__ = ("dtype", "shape", "ragged_rank", "row_splits_dtype")

    def __init__(self, dtype, shape, ragged_rank: int, row_splits_dtype=_dt.int64):
        self.dtype = _dt.as_dtype(dtype)
        self.shape = TensorShape(shape)
        self.ragged_rank = ragged_rank
        self.row_splits_dtype = _dt.as_dtype(row_splits_dtype)

    @property
    def spec(self) -> RaggedTensorSpec:
        """The tf.RaggedTensorSpec TF gives for this component (output_classes,
        element_spec)."""
        return RaggedTensorSpec(self.shape, self.dtype, self.ragged_rank,
                                self.row_splits_dtype)

    def batched(self, dim: Optional[int]) -> "RaggedSpec":
        """The leaf of a batch of these (first dimension `dim`)."""
        return RaggedSpec(self.dtype, TensorShape([dim]).concatenate(self.shape),
                          self.ragged_rank + 1, self.row_splits_dtype)

    def unbatched(self) -> "RaggedSpec":
        """The leaf of a row of this (ragged rank -1 for a row of a dense row, as TF)."""
        shape = self.shape[1:] if self.shape.ndims else self.shape
        return RaggedSpec(self.dtype, shape, self.ragged_rank - 1, self.row_splits_dtype)

    def __eq__(self, other):  # structures agree on kind and types; shapes may differ
        return isinstance(other, RaggedSpec) and (
            other.dtype, other.ragged_rank, other.row_splits_dtype) == (
            self.dtype, self.ragged_rank, self.row_splits_dtype)

    def __hash__(self):
        return hash(("RaggedSpec", self.dtype, self.ragged_rank))

    def __repr__(self):
        return repr(self.spec)


def encode(value, spec: RaggedSpec):
    """The variant component of `value`: a RaggedTensor of `spec`'s ragged rank, or a
    dense Tensor for ragged rank 0."""
    if spec.ragged_rank:
        splits, values = list(value.nested_row_splits), value.flat_values
    else:
        splits, values = [], value
    with name_scope(None, "RaggedToVariant", []):
        return apply_op("RaggedTensorToVariant", [splits, values], {
            "RAGGED_RANK": spec.ragged_rank, "Tvalues": spec.dtype,
            "Tsplits": spec.row_splits_dtype}, name="RaggedTensorToVariant").outputs[0]


def encode_ragged(rt: RaggedTensor) -> Tuple[RaggedSpec, object]:
    """(leaf, variant component) of a RaggedTensor."""
    spec = RaggedSpec(rt.dtype, rt.shape, rt.ragged_rank, rt.row_splits.dtype)
    return spec, encode(rt, spec)


def decode(component, spec: RaggedSpec):
    """The RaggedTensor (dense Tensor for ragged rank 0 or below) of a variant component,
    with `spec`'s static shape: as TF's, each ragged dimension the shape knows is uniform
    (its `uniform_row_length` that constant), so a uniform dimension survives a dataset.
    """
    ragged_rank = max(spec.ragged_rank, 0)
    with name_scope(None, "RaggedFromVariant", [component]):
        op = apply_op("RaggedTensorFromVariant", [component], {
            "input_ragged_rank": ragged_rank, "output_ragged_rank": ragged_rank,
            "Tvalues": spec.dtype, "Tsplits": spec.row_splits_dtype},
            name="RaggedTensorFromVariant")
    *splits, values = op.outputs
    shape = spec.shape
    if not splits:
        values.set_shape(shape)
        return values
    known = shape.as_list() if shape.ndims is not None else []
    dims = known + [None] * (ragged_rank + 1 - len(known))  # outer and ragged dims
    if shape.ndims is not None:
        values.set_shape(TensorShape([None]).concatenate(shape[ragged_rank + 1:]))
    if dims[0] is not None:
        splits[0].set_shape([dims[0] + 1])
    lengths = [None if size is None else convert_to_tensor(size, dtype=s.dtype)
               for size, s in zip(dims[1:], splits)]  # outermost first, as TF's
    rt = values
    for level in reversed(range(ragged_rank)):  # innermost ragged dimension first
        rt = RaggedTensor(rt, splits[level], internal=True,
                          uniform_row_length=lengths[level])
    return rt


def as_ragged_spec(cls_or_spec, dtype, shape) -> Optional[RaggedSpec]:
    """The leaf an iterator's declared output class gives (a RaggedTensorSpec, as TF's
    output_classes), or None for any other class."""
    if not isinstance(cls_or_spec, RaggedTensorSpec):
        return None
    return RaggedSpec(dtype, shape, cls_or_spec.ragged_rank, cls_or_spec.row_splits_dtype)
