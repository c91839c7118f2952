"""Dataset.rebatch: the rows of a dataset's batches regrouped into batches of new sizes
(TF's RebatchDatasetV2).

`batch_size` is one size or a list of them, used in turn: batch k has the size
`sizes[k % len(sizes)]`, its rows cut from as many input batches as it takes. At the
end a shorter batch is kept unless `drop_remainder`; a size of 0 gives an empty batch
(of the element's static shape, unknown dimensions 0). An input element of a scalar
component, or of components with different first dimensions, fails its get_next and
the pass goes on with the same size (TF's). The static batch dimension is the size
where TF knows it: all sizes equal, and the remainder dropped or the input's known
batch dimension a multiple of it.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import nest
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.registry import kernel
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.tensor_util import constant_value
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data.dataset_ops import Dataset, SparseSpec, map_leaves
from tensorweave.data.pipeline import COMPOSITES, DatasetValue, ElementError, \
    component_row, component_rows, read

_kernels.dataset_op("RebatchDatasetV2", ["input_dataset: variant", "batch_sizes: int64",
                                         "drop_remainder: bool"])


def rebatch(ds: Dataset, batch_size, drop_remainder) -> Dataset:
    """See Dataset.rebatch (dataset_methods.py).

    Raises:
      ValueError: as TF's, sizes of rank 2 or more, an empty list of sizes, scalar
        components, or components whose known batch dimensions differ.
    """
    sizes = convert_to_tensor(batch_size, _dt.int64, name="batch_sizes")
    drop = convert_to_tensor(drop_remainder, _dt.bool, name="drop_remainder")
    dim = _static_batch_dim(ds, sizes, drop)
    structure = map_leaves(ds._structure, lambda k: 0,
                           lambda m: m.unbatched().batched(dim))
    shapes = [s if t == _dt.variant else _rebatched_shape(s, dim)
              for s, t in zip(ds._shapes, ds._types)]
    return ds._derive("RebatchDatasetV2", [sizes, drop], structure=structure, shapes=shapes)


def _rebatched_shape(shape: TensorShape, dim: Optional[int]) -> TensorShape:
    if shape.ndims is None:
        return shape
    if shape.ndims == 0:
        raise ValueError("Unbatching a tensor is only supported for rank >= 1")
    return TensorShape([dim]).concatenate(shape[1:])


def _static_batch_dim(ds: Dataset, sizes, drop) -> Optional[int]:
    """The batches' first dimension where it is known when the dataset is built."""
    value = constant_value(sizes)
    if value is None:
        return None
    value = np.asarray(value)
    if value.ndim > 1:
        raise ValueError("Invalid `batch_sizes`. Expected `batch_sizes` to be a scalar or "
                         "a vector. Received `batch_sizes` of rank %d." % value.ndim)
    if value.ndim == 1:
        if not value.size:  # TF fails with an IndexError here
            raise ValueError("Invalid `batch_sizes`. Expected at least one batch size, "
                             "received an empty list.")
        if not np.all(value == value[0]):
            return None
        value = value[0]
    size = int(value)
    return None if _may_form_partial_batches(ds, size, drop) else size


def _may_form_partial_batches(ds: Dataset, size: int, drop) -> bool:
    """Whether a batch may be shorter than `size` (TF's rule: unless the remainder is
    dropped, only an input batch dimension known to be a multiple of `size` rules it
    out)."""
    if constant_value(drop):
        return False
    dims = [_input_batch_dim(s) for s in _legacy_shapes(ds)]
    known = [d for d in dims if d is not None]
    if not known:
        return True
    if any(d != known[0] for d in known):
        raise ValueError("Invalid `input_dataset.` The batch dimension of component 0 is "
                         "%d, while the batch dimension of component i is %s."
                         % (known[0], np.asarray(known)))
    return size != 0 and known[0] % size != 0


def _legacy_shapes(ds: Dataset) -> list:
    """Each component's shape as TF's output_shapes gives it (a SparseTensor's dense
    shape; None for a RaggedTensor's or a dataset's, which TF has not)."""
    return nest.flatten(map_leaves(ds._structure, lambda k: ds._shapes[k],
                                   lambda m: m.shape if isinstance(m, SparseSpec)
                                   else None))


def _input_batch_dim(shape: TensorShape) -> Optional[int]:
    if not isinstance(shape, TensorShape) or shape.ndims is None:
        return None
    if shape.ndims == 0:
        raise ValueError("Invalid `batch_sizes`. Expected dataset with rank of >= 1 but "
                         "found a dataset with scalar elements. Fix the issue by adding "
                         "the `batch` transformation to the dataset.")
    return shape.as_list()[0]


class Rebatch(DatasetValue):
    """The rows of the input's batches in batches of `sizes[k % len(sizes)]`;
    `shapes`/`types`: the output components' (for the empty batches of a size 0)."""

    def __init__(self, source, sizes: List[int], drop: bool, shapes, types, op):
        self.source, self.sizes, self.drop, self.op = source, sizes, drop, op
        self.shapes, self.types = shapes, types

    def _elements(self, ctx, with_errors: bool):
        inputs = read(self.source, ctx, with_errors)
        current, offset, k = None, 0, 0  # the input batch being cut, its next row
        ended = False  # the input said it has no more: so does this (TF's)
        while not ended:
            size, parts, have, failed = self.sizes[k], [], 0, None
            while have < size:
                if current is None:
                    current, failed = self._next_input(inputs, with_errors)
                    if current is None:
                        ended = failed is None
                        break
                    offset = 0
                take = min(size - have, component_rows(current[0]) - offset)
                parts.append([_rows(c, offset, offset + take) for c in current])
                have, offset = have + take, offset + take
                if offset == component_rows(current[0]):
                    current = None
            if failed is not None:  # TF's get_next fails; the next one tries this size again
                yield failed
                continue
            k = (k + 1) % len(self.sizes)
            if (have == 0 and size > 0) or (self.drop and have < size):
                return
            yield _joined(parts, self.op) if size else self._empty()

    def _next_input(self, inputs, with_errors: bool):
        """(next input batch, None), (None, its ElementError), or (None, None) at the
        end; a batch of scalar or mismatched components fails."""
        e = next(inputs, None)
        if e is None or isinstance(e, ElementError):
            return None, e
        problem = _invalid_batch(e)
        if problem is None:
            return e, None
        error = errors.InvalidArgumentError(None, self.op, problem)
        if not with_errors:
            raise error
        return None, ElementError(error)

    def _empty(self) -> list:
        out = []
        for shape, dtype in zip(self.shapes, self.types):
            if dtype == _dt.variant:
                raise errors.UnimplementedError(
                    None, self.op, "rebatch: a batch size of 0 is not supported for "
                    "SparseTensor or RaggedTensor components")
            dims = [0] if shape.ndims is None else \
                [0] + [d or 0 for d in shape.as_list()[1:]]
            out.append(np.empty(dims, dtype=_dt.as_dtype(dtype).as_numpy_dtype))
        return out


def _invalid_batch(e) -> Optional[str]:
    """TF's message for an input element that is no batch, or None."""
    if any(not isinstance(c, COMPOSITES) and np.ndim(c) == 0 for c in e):
        return "Input element must have a non-scalar value in each component."
    rows = [component_rows(c) for c in e]
    for i, n in enumerate(rows):
        if n != rows[0]:
            return ("Input element must have the same batch size in each component. "
                    "Component 0 had size %d but component %d had size, %d."
                    % (rows[0], i, n))
    return None


def _rows(c, start: int, stop: int):
    """Rows start..stop of a component: an array slice, or a composite's rows."""
    if isinstance(c, COMPOSITES):
        return [component_row(c, i) for i in range(start, stop)]
    return np.asarray(c)[start:stop]


def _joined(parts, op) -> list:
    """The batch of the row pieces `parts` (one list of components each).

    Raises:
      FailedPreconditionError: as TF's, pieces whose rows differ in shape.
    """
    out = []
    for j, first in enumerate(parts[0]):
        pieces = [p[j] for p in parts]
        if isinstance(first, list):  # a composite's rows
            rows = [r for piece in pieces for r in piece]
            out.append(type(rows[0]).stack(rows))
            continue
        for piece in pieces[1:]:
            if piece.shape[1:] != first.shape[1:]:
                raise errors.FailedPreconditionError(
                    None, op, "Cannot rebatch component %d: its rows have shape [%s] in "
                    "one input batch and [%s] in the next" % (
                        j, ",".join(map(str, first.shape[1:])),
                        ",".join(map(str, piece.shape[1:]))))
        out.append(np.concatenate(pieces) if len(pieces) > 1 else np.array(first))
    return out


@kernel("RebatchDatasetV2")
def _rebatch_kernel(ctx, d, batch_sizes, drop_remainder):
    sizes = np.asarray(batch_sizes)
    if sizes.ndim > 1:
        raise errors.InvalidArgumentError(None, ctx.op, "`batch_sizes` must be a scalar or "
                                          "a vector.")
    sizes = [int(s) for s in sizes.reshape(-1)]
    if not sizes or min(sizes) < 0:  # TF's kernel crashes on these
        raise errors.InvalidArgumentError(
            None, ctx.op, "`batch_sizes` must hold at least one size and no negative one, "
            "got %s" % sizes)
    return Rebatch(d, sizes, bool(np.asarray(drop_remainder)),
                   [TensorShape(s) for s in ctx.attrs["output_shapes"]],
                   list(ctx.attrs["output_types"]), ctx.op)
