"""tf.map_fn over RaggedTensors, or with ragged results (a tf.RaggedTensorSpec in
`dtype` / `fn_output_signature`).

functional_ops.map_fn hands such calls here with its loop (`run_loop`). A RaggedTensor
element enters the loop as the index of its row (the row is gathered inside the body);
a ragged result leaves each iteration as dense parts: its flat_values and the row
lengths of each of its ragged dimensions (concatenated over iterations) and its number
of rows (stacked), from which the RaggedTensor is rebuilt after the loop.
"""
from __future__ import annotations

from typing import Callable, List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.tensor_spec import TensorSpec
from tensorweave.ops.array import array_ops
from tensorweave.ops.math.math_ops import range as range_op
from tensorweave.ops.ragged.ragged_array_ops import gather_rows
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
from tensorweave.ops.ragged.ragged_tensor_spec import RaggedTensorSpec


def _leaves(structure) -> list:
    return nest.flatten(structure) if nest.is_sequence(structure) else [structure]


def _packed(template, leaves: list):
    return nest.pack_sequence_as(template, leaves) if nest.is_sequence(template) \
        else leaves[0]


def involves_ragged(elems, dtype) -> bool:
    """Whether a map_fn call has RaggedTensor elems or a RaggedTensorSpec signature."""
    return any(isinstance(x, RaggedTensor) for x in _leaves(elems)) \
        or any(isinstance(x, RaggedTensorSpec) for x in _leaves(dtype))


def _row_spec(rt: RaggedTensor) -> RaggedTensorSpec:
    """The spec of one row of `rt`: map_fn's default signature for a ragged element."""
    return RaggedTensorSpec(rt.shape[1:], rt.dtype, rt.ragged_rank - 1,
                            rt.row_splits.dtype)


def map_fn(fn: Callable, elems, dtype, run_loop: Callable, name: Optional[str] = None):
    """map_fn with ragged elems or ragged results (see the module docstring).

    Raises:
      ValueError: `fn` returns a value that does not match its RaggedTensorSpec.
    """
    leaves = _leaves(elems)
    with name_scope(name, "map", [x for x in leaves if isinstance(x, Tensor)]):
        leaves = [x if isinstance(x, RaggedTensor) else convert_to_tensor(x, name="elem")
                  for x in leaves]
        signature = dtype if dtype is not None else _packed(elems, [
            _row_spec(x) if isinstance(x, RaggedTensor) else x.dtype for x in leaves])
        proxies = [range_op(x.nrows(), dtype=x.row_splits.dtype)
                   if isinstance(x, RaggedTensor) else x for x in leaves]
        from tensorweave.ops.control_flow.functional_ops import check_elements_rank
        check_elements_rank(proxies)
        specs = _leaves(signature)
        out_dtypes, row_shapes = _encoded_types(specs)

        def fn_flat(element_flat):
            element = [gather_rows(x, array_ops.reshape(i, [1])).values
                       if isinstance(x, RaggedTensor) else i
                       for x, i in zip(leaves, element_flat)]
            out = fn(_packed(elems, element))
            nest.assert_same_structure(signature, out)
            return [part for spec, value in zip(specs, _leaves(out))
                    for part in _encoded(spec, value)]
        results = iter(run_loop(fn_flat, proxies, out_dtypes, row_shapes))
        count = proxies[0].shape[:1]
        return _packed(signature, [_decoded(spec, results, count) for spec in specs])


def _encoded_types(specs):
    """The dtypes of the dense parts of each output, and for each part None (stacked)
    or the shape of the rows it concatenates."""
    dtypes, row_shapes = [], []
    for spec in specs:
        if isinstance(spec, RaggedTensorSpec):
            splits = spec.row_splits_dtype
            dtypes += [spec.dtype, splits] + [splits] * spec.ragged_rank
            row_shapes += [_flat_values_shape(spec), None] + \
                [TensorShape([None])] * spec.ragged_rank
        else:
            dtypes.append(_dt.as_dtype(spec))
            row_shapes.append(None)
    return dtypes, row_shapes


def _flat_values_shape(spec: RaggedTensorSpec) -> TensorShape:
    """One dimension of any size, then the uniform inner dimensions of the spec."""
    if spec.shape.rank is None:
        return TensorShape(None)
    return TensorShape([None]).concatenate(spec.shape[spec.ragged_rank + 1:])


def _encoded(spec, value) -> List[Tensor]:
    """One iteration's output as dense parts: [value], or for a ragged row
    [flat_values, nrows, row lengths of each ragged dimension...]."""
    if not isinstance(spec, RaggedTensorSpec):
        return [value]
    if not isinstance(value, RaggedTensor):
        value = convert_to_tensor(value)
    _check_matches(spec, value)
    splits_dtype = spec.row_splits_dtype
    if not isinstance(value, RaggedTensor):
        return [value, array_ops.shape(value, out_type=splits_dtype)[0]]
    return [value.flat_values, value.nrows()] + list(value.nested_row_lengths())


def _check_matches(spec: RaggedTensorSpec, value) -> None:
    """TF's check that `fn` returned what its signature says."""
    ragged = isinstance(value, RaggedTensor)
    matches = value.dtype == spec.dtype and value.shape.rank is not None and \
        value.shape.rank >= 1 and \
        value.shape.is_compatible_with(spec.shape) and \
        (value.ragged_rank if ragged else 0) == spec.ragged_rank and \
        (not ragged or value.row_splits.dtype == spec.row_splits_dtype)
    if matches:
        return
    got = RaggedTensorSpec.from_value(value) if ragged else \
        TensorSpec(value.shape, value.dtype)
    raise ValueError("Error in map_fn:\n  Expected `fn` to return a:\n    %r\n  But it "
                     "returned a:\n    %r\n    (value=%s)\n  To fix, update the "
                     "`fn_output_signature` (or `dtype`) argument to `map_fn`."
                     % (spec, got, value))


def _decoded(spec, results, count: TensorShape):
    """The map_fn result of one output from its parts (see _encoded); `count` is the
    static number of elements."""
    if not isinstance(spec, RaggedTensorSpec):
        stacked = next(results)
        if stacked.shape.rank is not None:
            stacked.set_shape(count.concatenate(stacked.shape[1:]))
        return stacked
    flat_values, nrows = next(results), next(results)
    nrows.set_shape(count)
    flat_values.set_shape(_flat_values_shape(spec))
    lengths = [nrows] + [next(results) for _ in range(spec.ragged_rank)]
    result = flat_values
    for row_lengths in reversed(lengths):
        result = RaggedTensor.from_row_lengths(result, row_lengths, validate=False)
    return result
