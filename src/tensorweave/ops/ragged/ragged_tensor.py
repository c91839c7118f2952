"""RaggedTensor: a tensor whose rows have different lengths (TF `tf.RaggedTensor`).

A RaggedTensor is a composite of two parts (DESIGN.md: composite values are tuples of
dense tensors): `values`, a Tensor or another RaggedTensor holding the rows one after
the other, and `row_splits`, an int64 (or int32) vector where row i is
`values[row_splits[i]:row_splits[i + 1]]`. Nesting gives several ragged dimensions;
the innermost `flat_values` is a dense Tensor. `Session.run` fetches a RaggedTensor as a
RaggedTensorValue and feeds one into it through the `_fetch_components` /
`_feed_components` protocol of runtime/session.py, as SparseTensor does.

The conversions to and from dense and sparse tensors, indexing and the operators live
in the sibling modules; the methods here delegate to them.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor, \
    register_tensor_conversion_function
from tensorweave.framework.shapes import TensorShape, dimension_value
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array.array_ops import shape as shape_op
from tensorweave.ops.math.math_binary import maximum
from tensorweave.ops.math.math_ops import cast
from tensorweave.ops.math.reduction_ops import reduce_max
from tensorweave.ops.array.array_join_ops import concat, stack
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.ragged_tensor_value import NestedRows, RaggedTensorValue


def _convert_values(values, name: str = "values"):
    if isinstance(values, RaggedTensor):
        return values
    values = convert_to_tensor(values, name=name)
    values.shape.with_rank_at_least(1)
    return values


@tf_export("RaggedTensor")
class RaggedTensor(NestedRows):
    """Rows of different lengths over a Tensor of values (TF1 `tf.RaggedTensor`).

    Build one with a factory classmethod (`from_row_splits`, `from_row_lengths`,
    `from_value_rowids`, `from_tensor`, `from_sparse`, ...) or `tf.ragged.constant`;
    the constructor itself is private, as in TF.
    """

    def __init__(self, values, row_splits, internal: bool = False,
                 uniform_row_length: Optional[Tensor] = None):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., "
                             "RaggedTensor.from_row_lengths())")
        if isinstance(values, RaggedTensor) and \
                values.row_splits.dtype != row_splits.dtype:
            raise ValueError("dtype mismatch: %s and %s: the row_splits of all ragged "
                             "dimensions must have the same dtype (use "
                             "RaggedTensor.with_row_splits_dtype)"
                             % (values.row_splits.dtype.name, row_splits.dtype.name))
        self._values = values
        self._row_splits = row_splits
        # a scalar Tensor when every row has this length (from_uniform_row_length,
        # tf.newaxis, broadcasting): the dimension is then uniform in `shape`
        self._uniform_row_length = uniform_row_length

    # --- factories ------------------------------------------------------------------
    @classmethod
    def _from_parts(cls, values, partition, scope: str, name, validate: bool, build):
        """Converts `values` and the partition tensor in a `scope` and wraps them."""
        with name_scope(name, scope, [values, partition]):
            values = _convert_values(values)
            part = rp.convert_partition(partition, _partition_name(scope))
            nvals = rp.nvals_of(values, part.dtype)
            splits = build(values, part, nvals, validate)
            return cls(values, splits, internal=True)

    @classmethod
    def from_row_splits(cls, values, row_splits, name: Optional[str] = None,
                        validate: bool = True) -> "RaggedTensor":
        """Rows `values[row_splits[i]:row_splits[i + 1]]`.

        Raises:
          ValueError: row_splits is not an int32/int64 vector.
          InvalidArgumentError (run time, validate=True): row_splits does not start at
            0, decreases, or does not end at the number of values.
        """
        return cls._from_parts(
            values, row_splits, "RaggedFromRowSplits", name, validate,
            lambda _, s, n, v: rp.validated_splits(s, n, "from_row_splits", v))

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name: Optional[str] = None,
                         validate: bool = True) -> "RaggedTensor":
        """Rows of `row_lengths[i]` consecutive values each."""
        return cls._from_parts(
            values, row_lengths, "RaggedFromRowLengths", name, validate,
            lambda _, s, n, v: rp.lengths_to_splits(s, n, "from_row_lengths", v))

    @classmethod
    def from_row_starts(cls, values, row_starts, name: Optional[str] = None,
                        validate: bool = True) -> "RaggedTensor":
        """Rows `values[row_starts[i]:row_starts[i + 1]]`, the last one up to the end."""
        return cls._from_parts(
            values, row_starts, "RaggedFromRowStarts", name, validate,
            lambda _, s, n, v: rp.starts_to_splits(s, n, "from_row_starts", v))

    @classmethod
    def from_row_limits(cls, values, row_limits, name: Optional[str] = None,
                        validate: bool = True) -> "RaggedTensor":
        """Rows `values[row_limits[i - 1]:row_limits[i]]`, the first one from 0."""
        return cls._from_parts(
            values, row_limits, "RaggedFromRowLimits", name, validate,
            lambda _, s, n, v: rp.limits_to_splits(s, n, "from_row_limits", v))

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None,
                          name: Optional[str] = None, validate: bool = True) -> "RaggedTensor":
        """Value j goes to row `value_rowids[j]` (sorted); `nrows` adds empty last rows.

        Raises:
          ValueError: value_rowids and values differ in length, or a constant nrows is
            not greater than a constant last row id.
        """
        def build(converted, ids, nvals, validate):
            ids.shape.merge_with(converted.shape[:1])
            return rp.rowids_to_splits(ids, nrows, nvals, "from_value_rowids", validate)
        return cls._from_parts(values, value_rowids, "RaggedFromValueRowIds", name,
                               validate, build)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None,
                                validate: bool = True,
                                name: Optional[str] = None) -> "RaggedTensor":
        """Rows of `uniform_row_length` consecutive values each: a uniform dimension
        (static in `shape` when the length is a constant).

        Args:
          values: the rows' values, a Tensor or RaggedTensor of nrows * length rows.
          uniform_row_length: an int32/int64 scalar, the length of every row.
          nrows: the number of rows; needed only when uniform_row_length is 0.
          validate: add the run-time check that length * nrows equals the number of
            values.
          name: the name scope.

        Returns:
          A RaggedTensor whose `uniform_row_length` is the given length.

        Raises:
          ValueError: the length is not an int32/int64 scalar or is negative, or
            constant length, nrows and number of values do not agree.
          InvalidArgumentError (run time, validate=True): they do not agree.
        """
        with name_scope(name, "RaggedFromUniformRowLength", [values, uniform_row_length,
                                                              nrows]):
            values = _convert_values(values)
            length = rp.convert_uniform_length(uniform_row_length, values)
            nvals = rp.nvals_of(values, length.dtype)
            splits, nrows = rp.uniform_length_to_splits(length, nrows, nvals, validate)
            return cls(values, splits, internal=True, uniform_row_length=length)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits,
                               name: Optional[str] = None,
                               validate: bool = True) -> "RaggedTensor":
        """Applies `from_row_splits` for each splits vector, innermost last.

        Raises:
          TypeError: nested_row_splits is a single Tensor rather than a list of them.
        """
        return cls._nested(flat_values, nested_row_splits, "nested_row_splits",
                           "RaggedFromNestedRowSplits", cls.from_row_splits, name, validate)

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths,
                                name: Optional[str] = None,
                                validate: bool = True) -> "RaggedTensor":
        """Applies `from_row_lengths` for each lengths vector, innermost last."""
        return cls._nested(flat_values, nested_row_lengths, "nested_row_lengths",
                           "RaggedFromNestedRowLengths", cls.from_row_lengths, name,
                           validate)

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None,
                                 name: Optional[str] = None,
                                 validate: bool = True) -> "RaggedTensor":
        """Applies `from_value_rowids` for each row id vector, innermost last."""
        if isinstance(nested_value_rowids, Tensor):
            raise TypeError("nested_value_rowids must be a list of Tensors")
        if nested_nrows is None:
            nested_nrows = [None] * len(nested_value_rowids)
        if len(nested_nrows) != len(nested_value_rowids):
            raise ValueError("nested_nrows must have the same length as "
                             "nested_value_rowids")
        with name_scope(name, "RaggedFromNestedValueRowIds", [flat_values]):
            result = flat_values
            for ids, n in reversed(list(zip(nested_value_rowids, nested_nrows))):
                result = cls.from_value_rowids(result, ids, n, validate=validate)
            return result

    @classmethod
    def _nested(cls, flat_values, partitions, what, scope, factory, name, validate):
        if isinstance(partitions, Tensor):
            raise TypeError("%s must be a list of Tensors" % what)
        with name_scope(name, scope, [flat_values]):
            result = flat_values
            for part in reversed(list(partitions)):
                result = factory(result, part, validate=validate)
            return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank: int = 1,
                    name: Optional[str] = None, row_splits_dtype=_dt.int64) -> "RaggedTensor":
        """The RaggedTensor of a dense tensor, rows cut at `lengths` or before trailing
        `padding` (see ragged_conversion_ops.from_tensor)."""
        from tensorweave.ops.ragged import ragged_conversion_ops
        return ragged_conversion_ops.from_tensor(tensor, lengths, padding, ragged_rank, name,
                                                 row_splits_dtype)

    @classmethod
    def from_sparse(cls, st_input, name: Optional[str] = None,
                    row_splits_dtype=_dt.int64) -> "RaggedTensor":
        """The RaggedTensor of a right-ragged rank-2 SparseTensor."""
        from tensorweave.ops.ragged import ragged_conversion_ops
        return ragged_conversion_ops.from_sparse(st_input, name, row_splits_dtype)

    # --- structure ------------------------------------------------------------------
    values = property(lambda self: self._values,
                      doc="The concatenated rows (a Tensor or a RaggedTensor).")
    row_splits = property(lambda self: self._row_splits,
                          doc="Row i is values[row_splits[i]:row_splits[i + 1]].")
    dtype = property(lambda self: self.flat_values.dtype, doc="The dtype of the values.")
    row_splits_dtype = property(lambda self: self._row_splits.dtype)
    uniform_row_length = property(
        lambda self: self._uniform_row_length,
        doc="The length of every row (a scalar Tensor), or None when rows differ.")
    graph = property(lambda self: self._row_splits.graph)

    @property
    def shape(self) -> TensorShape:
        """The static shape: [nrows] + None for each ragged dimension + inner dims."""
        nrows = dimension_value(self._row_splits.shape[0])
        nrows = nrows - 1 if nrows is not None else None
        values_shape = self._values.shape
        inner = values_shape[1:] if values_shape.rank is not None else TensorShape(None)
        return TensorShape([nrows, self._static_row_length()]).concatenate(inner)

    def _static_row_length(self) -> Optional[int]:
        """The constant uniform row length, None for ragged rows or an unknown length."""
        if self._uniform_row_length is None:
            return None
        value = constant_value(self._uniform_row_length)
        return None if value is None else int(value)

    def get_shape(self) -> TensorShape:
        return self.shape

    # --- row partition views ----------------------------------------------------------
    def _level(self, axis: int, what: str) -> "RaggedTensor":
        """The RaggedTensor whose row_splits describe dimension `axis`."""
        if not isinstance(axis, int) or axis < 1 or axis > self.ragged_rank:
            raise ValueError("%s: axis=%s must be a ragged dimension, in [1, %d]"
                             % (what, axis, self.ragged_rank))
        rt = self
        for _ in range(axis - 1):
            rt = rt.values
        return rt

    def row_lengths(self, axis: int = 1, name: Optional[str] = None):
        """The length of each row (axis=1), or of each row of dimension `axis` (a
        RaggedTensor shaped like the dimensions above it)."""
        with name_scope(name, "RaggedRowLengths", [self]):
            level = self._level(axis, "row_lengths")
            splits = level.row_splits
            lengths = splits[1:] - splits[:-1]
            if axis == 1:
                return lengths
            return self._with_levels_above(axis, lengths)

    def _with_levels_above(self, axis: int, inner):
        """`inner` under this tensor's row partitions of the dimensions above `axis`."""
        lengths = nested_uniform_row_lengths(self)
        for level in reversed(range(axis - 1)):
            inner = RaggedTensor(inner, self.nested_row_splits[level], internal=True,
                                 uniform_row_length=lengths[level])
        return inner

    def value_rowids(self, name: Optional[str] = None) -> Tensor:
        """The row index of each value."""
        with name_scope(name, "RaggedValueRowIds", [self]):
            return rp.splits_to_segment_ids(self._row_splits)

    def nrows(self, out_type=None, name: Optional[str] = None) -> Tensor:
        """The number of rows (a scalar of `out_type`, default the row_splits dtype)."""
        out_type = _dt.as_dtype(out_type) if out_type is not None else \
            self._row_splits.dtype
        with name_scope(name, "RaggedNRows", [self]):
            static = dimension_value(self._row_splits.shape[0])
            if static is not None:
                return convert_to_tensor(static - 1, dtype=out_type)
            return cast(shape_op(self._row_splits, out_type=out_type)[0] - 1, out_type)

    def row_starts(self, name: Optional[str] = None) -> Tensor:
        """The index in `values` where each row starts."""
        with name_scope(name, "RaggedRowStarts", [self]):
            return self._row_splits[:-1]

    def row_limits(self, name: Optional[str] = None) -> Tensor:
        """The index in `values` where each row ends."""
        with name_scope(name, "RaggedRowLimits", [self]):
            return self._row_splits[1:]

    def nested_row_lengths(self, name: Optional[str] = None) -> Tuple[Tensor, ...]:
        """The row lengths of each ragged dimension, outermost first."""
        with name_scope(name, "RaggedNestedRowLengths", [self]):
            return tuple(s[1:] - s[:-1] for s in self.nested_row_splits)

    def bounding_shape(self, axis=None, name: Optional[str] = None,
                       out_type=None) -> Tensor:
        """The smallest dense shape holding every row: [nrows, longest row, ...]."""
        out_type = _dt.as_dtype(out_type) if out_type is not None else \
            self._row_splits.dtype
        with name_scope(name, "RaggedBoundingBox", [self]):
            dims = [self.nrows(out_type)]
            for splits in self.nested_row_splits:
                longest = reduce_max(splits[1:] - splits[:-1])
                dims.append(cast(maximum(longest, 0), out_type))
            inner = shape_op(self.flat_values, out_type=out_type)[1:]
            full = concat([stack(dims), inner], 0)
            return full if axis is None else full[axis]

    # --- values -----------------------------------------------------------------------
    def with_values(self, new_values) -> "RaggedTensor":
        """This row partition over `new_values` (as many rows as `values` has)."""
        new_values = _convert_values(new_values)
        new_values.shape.with_rank_at_least(1)
        self._values.shape[:1].assert_is_compatible_with(new_values.shape[:1])
        splits, length = self._row_splits, self._uniform_row_length
        if isinstance(new_values, RaggedTensor) and \
                new_values.row_splits.dtype != splits.dtype:
            splits = cast(splits, new_values.row_splits.dtype)
            length = None if length is None else cast(length, splits.dtype)
        return RaggedTensor(new_values, splits, internal=True, uniform_row_length=length)

    def with_flat_values(self, new_values) -> "RaggedTensor":
        """The nested row partition over new flat values (as many as `flat_values`)."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype) -> "RaggedTensor":
        """This RaggedTensor with every row_splits cast to `dtype` (int32 or int64)."""
        dtype = _dt.as_dtype(dtype)
        if dtype not in rp.SPLITS_DTYPES:
            raise ValueError("dtype must be int32 or int64")
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.with_row_splits_dtype(dtype)
        length = self._uniform_row_length
        return RaggedTensor(values, cast(self._row_splits, dtype), internal=True,
                            uniform_row_length=None if length is None else cast(length,
                                                                                dtype))

    # --- conversions --------------------------------------------------------------------
    def to_tensor(self, default_value=None, name: Optional[str] = None, shape=None) -> Tensor:
        """The dense tensor, short rows padded with `default_value` (zero by default) and
        cropped or padded to `shape` where given."""
        from tensorweave.ops.ragged import ragged_conversion_ops
        return ragged_conversion_ops.to_tensor(self, default_value, name, shape)

    def to_sparse(self, name: Optional[str] = None):
        """The SparseTensor holding every value at its [row, column, ...] index."""
        from tensorweave.ops.ragged import ragged_conversion_ops
        return ragged_conversion_ops.to_sparse(self, name)

    def to_list(self):
        """Eager only (TF raises ValueError in graph mode): fetch with Session.run."""
        raise ValueError("to_list can only be used in eager mode.")

    def numpy(self):
        raise ValueError("numpy() is only supported in eager mode.")

    def _identity_for(self, name: Optional[str] = None) -> "RaggedTensor":
        """tf.identity of each part (the hook structure.identity calls)."""
        from tensorweave.ops.ragged import ragged_array_dispatch
        return ragged_array_dispatch.identity(self, name)

    def _stop_gradient_for(self, name: Optional[str] = None) -> "RaggedTensor":
        """tf.stop_gradient of the flat values, the row partition kept (the hook
        structure.stop_gradient calls; TF dispatches it as an elementwise op)."""
        from tensorweave.ops.control_flow.structure import stop_gradient
        return self.with_flat_values(stop_gradient(self.flat_values, name))

    def consumers(self):
        return self.flat_values.consumers()

    # --- Session.run protocol (runtime/session.py) ---------------------------------------
    def _fetch_components(self):
        return [self._values, self._row_splits]

    @staticmethod
    def _fetch_rebuild(vals):
        return RaggedTensorValue(vals[0], vals[1])

    def _feed_components(self) -> List[Tensor]:
        return [self.flat_values] + list(self.nested_row_splits)

    def _split_feed(self, value) -> list:
        if not isinstance(value, RaggedTensorValue):
            raise TypeError("The value of a feed for a RaggedTensor must be a "
                            "tf.compat.v1.ragged.RaggedTensorValue, got %r" % (value,))
        if value.ragged_rank != self.ragged_rank:
            raise ValueError("Cannot feed a RaggedTensorValue of ragged_rank %d to a "
                             "RaggedTensor of ragged_rank %d"
                             % (value.ragged_rank, self.ragged_rank))
        return [value.flat_values] + list(value.nested_row_splits)

    # --- indexing and operators ----------------------------------------------------------
    def __getitem__(self, key):
        from tensorweave.ops.ragged import ragged_getitem
        return ragged_getitem.getitem(self, key)

    def __bool__(self):
        raise TypeError("RaggedTensor may not be used as a boolean.")

    __nonzero__ = __bool__

    def __str__(self):
        return "tf.RaggedTensor(values=%s, row_splits=%s)" % (self._values,
                                                             self._row_splits)

    __repr__ = __str__


def _partition_name(scope: str) -> str:
    """The partition argument's name for TF's error messages ("row_splits", ...)."""
    names = {"RaggedFromRowSplits": "row_splits", "RaggedFromRowLengths": "row_lengths",
             "RaggedFromRowStarts": "row_starts", "RaggedFromRowLimits": "row_limits",
             "RaggedFromValueRowIds": "value_rowids"}
    return names[scope]


def nested_uniform_row_lengths(rt: RaggedTensor) -> List[Optional[Tensor]]:
    """The uniform_row_length of each ragged dimension of rt, outermost first (None
    where the rows differ in length)."""
    lengths = []
    while isinstance(rt, RaggedTensor):
        lengths.append(rt.uniform_row_length)
        rt = rt.values
    return lengths


def is_ragged(value) -> bool:
    """True for a RaggedTensor or a RaggedTensorValue."""
    return isinstance(value, (RaggedTensor, RaggedTensorValue))


def convert_to_tensor_or_ragged_tensor(value, dtype=None, name: Optional[str] = None):
    """A RaggedTensor as is, a RaggedTensorValue as constants, anything else as a Tensor."""
    if isinstance(value, RaggedTensor):
        if dtype is not None and not _dt.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError("Tensor conversion requested dtype %s for RaggedTensor with "
                             "dtype %s" % (_dt.as_dtype(dtype).name, value.dtype.name))
        return value
    if isinstance(value, RaggedTensorValue):
        with name_scope(name, "ConvertToTensorOrRaggedTensor", []):
            flat = convert_to_tensor(value.flat_values, dtype=dtype, name="flat_values")
            return RaggedTensor.from_nested_row_splits(flat, value.nested_row_splits,
                                                       validate=False)
    return convert_to_tensor(value, dtype=dtype, name=name)


def _refuse_conversion(value, dtype=None, name=None, as_ref=False) -> Tensor:
    raise TypeError("Failed to convert elements of %s to Tensor. Consider casting elements "
                    "to a supported type. A RaggedTensor cannot be used where a dense "
                    "Tensor is expected: use rt.to_tensor() or tf.ragged.map_flat_values."
                    % (value,))


register_tensor_conversion_function(RaggedTensor, _refuse_conversion)
