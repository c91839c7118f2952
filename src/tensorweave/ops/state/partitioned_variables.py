"""Partitioned variables (OSDI 2016 §4.2, "large models"): a variable too large for one
task is split along one axis into shards, each an ordinary Variable (its own
VarHandleOp, so `replica_device_setter` spreads the shards over the PS tasks).

* Partitioners map (shape, dtype) to a list of partition counts, one per dimension, at
  most one of them > 1: `fixed_size_partitioner`, `min_max_variable_partitioner`,
  `variable_axis_size_partitioner`.
* `get_variable(..., partitioner=p)` builds the shards "<name>/part_<i>" (the first
  `dim % n` shards one row more) and returns a `PartitionedVariable` over them.
* Each shard carries a `SaveSliceInfo` (the logical name, full shape and its slice), so
  the Saver writes one logical tensor in slices (TF's checkpoint slice format): a
  checkpoint written with 3 shards restores into 5 shards or an unpartitioned variable.
"""
from __future__ import annotations

import collections.abc
import math
from typing import List, Optional, Sequence

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import register_tensor_conversion_function
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.ops.state import variables as _variables


# --- partitioners ------------------------------------------------------------------------
def _element_bytes(dtype, bytes_per_string_element: int) -> int:
    dtype = _dt.as_dtype(dtype)
    if dtype.base_dtype is _dt.string:
        return bytes_per_string_element
    return dtype.size


@tf_export("fixed_size_partitioner")
def fixed_size_partitioner(num_shards: int, axis: int = 0):
    """A partitioner that splits dimension `axis` into `num_shards` shards (fewer when
    the dimension is smaller).

    Args:
      num_shards: the number of shards.
      axis: the dimension to split.

    Returns:
      A partitioner: fn(shape, **unused) -> list of partition counts.
    """
    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, as_shape(shape).dims[axis].value)
        return partitions
    return _partitioner


@tf_export("min_max_variable_partitioner")
def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0,
                                 min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16):
    """A partitioner that gives each shard at least `min_slice_size` bytes, with at most
    `max_partitions` shards along `axis`.

    Args:
      max_partitions: the most shards.
      axis: the dimension to split.
      min_slice_size: the fewest bytes per shard (the last one may have fewer).
      bytes_per_string_element: the size counted for a string element.

    Returns:
      A partitioner: fn(shape, dtype) -> list of partition counts.

    Raises:
      ValueError (from the partitioner): `axis` is not a dimension of the shape.
    """
    def _partitioner(shape, dtype):
        shape = as_shape(shape)
        if axis >= len(shape):
            raise ValueError("Cannot partition variable along axis %d when shape is "
                             "only %s" % (axis, shape))
        total_bytes = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        wanted = int(math.ceil(total_bytes / min_slice_size))
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape.dims[axis].value, max_partitions, wanted))
        return partitions
    return _partitioner


@tf_export("variable_axis_size_partitioner")
def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0,
                                   bytes_per_string_element: int = 16,
                                   max_shards: Optional[int] = None):
    """A partitioner that keeps each shard under `max_shard_bytes` bytes (a shard holds
    at least one slice along `axis`, whatever its size).

    Args:
      max_shard_bytes: the most bytes per shard.
      axis: the dimension to split.
      bytes_per_string_element: the size counted for a string element.
      max_shards: if set, the most shards.

    Returns:
      A partitioner: fn(shape, dtype) -> list of partition counts.

    Raises:
      ValueError: `max_shard_bytes` or `bytes_per_string_element` is not positive,
        `max_shards` is less than 1; from the partitioner: the shape is not a fully
        defined TensorShape.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be "
                         "positive. Currently, max_shard_bytes is %d and"
                         "bytes_per_string_element is %d"
                         % (max_shard_bytes, bytes_per_string_element))
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError("shape is not a TensorShape: %s" % (shape,))
        if not shape.is_fully_defined():
            raise ValueError("shape is not fully defined: %s" % (shape,))
        element_size = _element_bytes(dtype, bytes_per_string_element)
        axis_len = shape.dims[axis].value
        bytes_per_slice = shape.num_elements() / axis_len * element_size
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        shards = int(math.ceil(axis_len / slices_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions = [1] * shape.ndims
        partitions[axis] = shards
        return partitions
    return _partitioner


# --- slice bookkeeping -------------------------------------------------------------------
class SaveSliceInfo:
    """Where a shard lies in its logical variable (TF1 `tf.Variable.SaveSliceInfo`).

    Args:
      full_name: the logical variable's name (its checkpoint key).
      full_shape: the logical variable's shape.
      var_offset: the shard's offset in each dimension.
      var_shape: the shard's shape.
      save_slice_info_def: instead of the four above, a SaveSliceInfoDef (the message,
        or its fields as a dict) as a MetaGraphDef's VariableDef holds it.
      import_scope: the scope prepended to the def's full_name.
    """

    def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None,
                 save_slice_info_def=None, import_scope=None):
        if save_slice_info_def is not None:
            d = save_slice_info_def
            field = d.get if isinstance(d, dict) else lambda k: getattr(d, k)
            full_name = field("full_name")
            if import_scope:
                full_name = import_scope + "/" + full_name
            full_shape, var_offset, var_shape = (
                [int(n) for n in field(k)] for k in ("full_shape", "var_offset", "var_shape"))
        self.full_name = full_name
        self.full_shape = full_shape
        self.var_offset = var_offset
        self.var_shape = var_shape

    def _to_def(self, export_scope: Optional[str] = None) -> Optional[dict]:
        """The SaveSliceInfoDef fields TF writes in a VariableDef (None when the logical
        variable is outside `export_scope`)."""
        full_name = self.full_name
        if export_scope:
            if not full_name.startswith(export_scope + "/"):
                return None
            full_name = full_name[len(export_scope) + 1:]
        return {"full_name": full_name, "full_shape": [int(n) for n in self.full_shape],
                "var_offset": [int(n) for n in self.var_offset],
                "var_shape": [int(n) for n in self.var_shape]}

    @property
    def spec(self) -> str:
        """TF's "shape_and_slice" text: "<full dims> <start>,<length>:..."."""
        full = " ".join("%d" % d for d in self.full_shape) + " "
        sl = ":".join("%d,%d" % (o, s) for o, s in zip(self.var_offset, self.var_shape))
        return full + sl

    def __repr__(self):
        return "SaveSliceInfo(%r, %s)" % (self.full_name, self.spec)


# tf.Variable.SaveSliceInfo, as TF1 nests it.
_variables.Variable.SaveSliceInfo = SaveSliceInfo


class _PartitionInfo:
    """What an initializer is told about the shard it fills (TF1's `partition_info`):
    `full_shape` of the logical variable and this shard's `var_offset`."""

    __slots__ = ("_full_shape", "_var_offset")

    def __init__(self, full_shape, var_offset):
        if not isinstance(full_shape, (list, tuple)):
            raise TypeError("`full_shape` must be a sequence (like tuple or list) instead "
                            "of " + type(full_shape).__name__)
        if not isinstance(var_offset, (list, tuple)):
            raise TypeError("`var_offset` must be a sequence (like tuple or list) instead "
                            "of " + type(var_offset).__name__)
        if len(var_offset) != len(full_shape):
            raise ValueError("Expected equal length, but `var_offset` is of length {} while "
                             "full_shape is of length {}.".format(len(var_offset),
                                                                   len(full_shape)))
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError("Expected 0 <= offset < shape but found offset={}, shape={} "
                                 "for var_offset={}, full_shape={}".format(
                                     offset, dim, var_offset, full_shape))
        self._full_shape = full_shape
        self._var_offset = var_offset

    full_shape = property(lambda self: self._full_shape)
    var_offset = property(lambda self: self._var_offset)

    def single_slice_dim(self, shape) -> Optional[int]:
        """The one dimension in which a shard of `shape` differs from the full shape
        (None if it does not)."""
        if len(shape) != len(self._full_shape):
            raise ValueError("Expected equal length, but received shape={} of length {} "
                             "while self.full_shape={} is of length {}.".format(
                                 shape, len(shape), self._full_shape, len(self._full_shape)))
        dims = [i for i, (s, f) in enumerate(zip(shape, self._full_shape)) if s != f]
        if len(dims) > 1:
            raise ValueError("Cannot use single_slice_dim() with shape={} and "
                             "self.full_shape={} since slice dim could be either dimension "
                             "{} or {}.".format(shape, self._full_shape, dims[1], dims[0]))
        return dims[0] if dims else None

    def single_offset(self, shape) -> int:
        """This shard's offset along the one partitioned dimension (0 if none)."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self._var_offset[dim]


# --- the PartitionedVariable -------------------------------------------------------------
class PartitionedVariable:
    """A variable split along one axis into shard Variables (TF1's PartitionedVariable).

    Iterating gives the shards in offset order; converting it to a Tensor (or
    `as_tensor()`) concatenates them. Shards are what the optimizers update and what
    GLOBAL_VARIABLES holds.

    Args:
      name: the logical name.
      shape: the logical (full) shape.
      dtype: the dtype of the shards.
      variable_list: the shard Variables, each with a SaveSliceInfo.
      partitions: the partition count of each dimension.

    Raises:
      TypeError: `variable_list` or `partitions` is not a list/tuple.
      ValueError: empty `variable_list`, non-positive partitions, a shard without save
        slice info or of another full shape.
    """

    def __init__(self, name: str, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError("variable_list is not a list or tuple: %s" % (variable_list,))
        if not isinstance(partitions, (list, tuple)):
            raise TypeError("partitions is not a list or tuple: %s" % (partitions,))
        if not all(p >= 1 for p in partitions):
            raise ValueError("partition values must be positive: %s" % (partitions,))
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        if any(v._get_save_slice_info() is None for v in variable_list):
            raise ValueError("All variables must have a save_slice_info available: %s"
                             % [v.name for v in variable_list])
        if len(shape) != len(partitions):
            raise ValueError("len(shape) != len(partitions): %s vs. %s" % (shape, partitions))
        for v in variable_list:
            if list(v._get_save_slice_info().full_shape) != list(as_shape(shape).as_list()):
                raise ValueError("All variables' full shapes must match shape: %s; but full "
                                 "shapes were: %s"
                                 % (shape, [v._get_save_slice_info().full_shape]))
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = _dt.as_dtype(dtype)
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self) -> int:
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError("Cannot get a length for %d > 1 partition axes" % len(axes))
        return len(self._variable_list)

    def __repr__(self):
        return "<PartitionedVariable '%s' shape=%s dtype=%s parts=%d>" % (
            self._name, self._shape, self._dtype.name, len(self._variable_list))

    def _partition_axes(self) -> List[int]:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self):
        """The shards concatenated, as a Tensor named like the variable."""
        from tensorweave.ops.array import array_join_ops
        from tensorweave.ops.control_flow import structure
        if len(self._variable_list) == 1:
            with _graph.name_scope(None):
                return structure.identity(self._variable_list[0], name=self._name)
        axis = self._partition_axes()[0]
        with _graph.name_scope(self._name + "/ConcatPartitions/"):
            joined = array_join_ops.concat([v.value() for v in self._variable_list], axis)
        with _graph.name_scope(None):
            return structure.identity(joined, name=self._name)

    def as_tensor(self):
        """The full value (the shards concatenated), outside any control dependencies."""
        with _graph.control_dependencies(None):
            return self._concat()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> _dt.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _get_variable_list(self) -> list:
        return self._variable_list

    def _get_partitions(self) -> list:
        return self._partitions

    # Public spellings of the two accessors above.
    get_variable_list = _get_variable_list
    get_partitions = _get_partitions

    def _apply_assign_fn(self, assign_fn, value) -> list:
        from tensorweave.ops.array import array_join_ops
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError("Cannot do assign action along more than one dimension: "
                                      "%s.  Multi-axis partition assign action is not "
                                      "supported " % str(axes))
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError("Expected %d values, one per shard, got %d"
                                 % (len(self._variable_list), len(value)))
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            sizes = [v.shape[axes[0]].value for v in self._variable_list]
            values = array_join_ops.split(value, sizes, axis=axes[0])
        return [assign_fn(v, x) for v, x in zip(self._variable_list, values)]

    def assign(self, value, use_locking=False, name=None, read_value=True) -> list:
        """Assigns `value` (a full-shape value, a list of shard values or another
        PartitionedVariable) shard by shard; the list of assign results."""
        out = self._apply_assign_fn(lambda v, x: v.assign(
            x, use_locking=use_locking, name=name, read_value=read_value), value)
        return out if read_value else [getattr(a, "op", a) for a in out]

    def assign_add(self, value, use_locking=False, name=None, read_value=True) -> list:
        out = self._apply_assign_fn(lambda v, x: v.assign_add(
            x, use_locking=use_locking, name=name, read_value=read_value), value)
        return out if read_value else [getattr(a, "op", a) for a in out]

    def assign_sub(self, value, use_locking=False, name=None, read_value=True) -> list:
        out = self._apply_assign_fn(lambda v, x: v.assign_sub(
            x, use_locking=use_locking, name=name, read_value=read_value), value)
        return out if read_value else [getattr(a, "op", a) for a in out]


def _to_tensor(v, dtype=None, name=None, as_ref=False):
    if dtype is not None and not _dt.as_dtype(dtype).is_compatible_with(v.dtype):
        raise ValueError("Incompatible type conversion requested to type '%s' for variable "
                         "of type '%s'" % (_dt.as_dtype(dtype).name, v.dtype.name))
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a "
                                  "reference.")
    return v.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _to_tensor)


# --- creation (called by the variable store of variable_scope.py) -------------------------
def _call_partitioner(partitioner, shape: TensorShape, dtype) -> list:
    """The partitioner's list for `shape`, checked as TF1 checks it."""
    if not shape.is_fully_defined():
        raise ValueError("Shape of a new partitioned variable must be fully defined, but "
                         "instead was %s." % (shape,))
    if shape.ndims < 1:
        raise ValueError("A partitioned Variable must have rank at least 1, shape: %s"
                         % shape)
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, collections.abc.Sequence):
        raise ValueError("Partitioner must return a sequence, but saw: %s" % (slicing,))
    if len(slicing) != shape.ndims:
        raise ValueError("Partitioner returned a partition list that does not match the "
                         "Variable's rank: %s vs. %s" % (slicing, shape))
    if any(p < 1 for p in slicing):
        raise ValueError("Partitioner returned zero partitions for some axes: %s"
                         % (slicing,))
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError("Can only slice a variable along one dimension: shape: %s, "
                         "partitioning: %s" % (shape, slicing))
    for dim, p in zip(shape.as_list(), slicing):
        if p > dim:
            raise ValueError("Partitioner returned %d partitions for a dimension of size "
                             "%d: shape: %s, partitioning: %s" % (p, dim, shape, slicing))
    return list(slicing)


def shard_slices(full_shape: Sequence[int], num_slices: int, axis: int):
    """(offset, shape) of each of `num_slices` shards of `full_shape` split along `axis`:
    the first `full_shape[axis] % num_slices` shards get one row more."""
    excess = full_shape[axis] % num_slices
    base = full_shape[axis] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[axis] = base + (1 if i < excess else 0)
        yield list(offset), shape
        offset[axis] += shape[axis]


def get_partitioned_variable(store, name: str, shape=None, dtype=_dt.float32,
                             initializer=None, regularizer=None, reuse=None, trainable=None,
                             collections=None, caching_device=None, partitioner=None,
                             validate_shape=True, use_resource=None, constraint=None,
                             synchronization=None, aggregation=None) -> PartitionedVariable:
    """The PartitionedVariable `name` of the variable store `store` (a
    variable_scope._VariableStore), made of shards "<name>/part_<i>" if new.

    Raises:
      ValueError: as TF1: an unpartitioned variable of that name exists, creating an
        existing one without reuse, reusing a missing one, a shape/dtype/partitions
        mismatch on reuse, a bad partitioner result or a shape not fully defined.
    """
    from tensorweave.framework.graph import Tensor
    from tensorweave.framework.op_builder import convert_to_tensor
    from tensorweave.ops.indexing import indexing_ops
    registry = store._partitioned_vars
    dtype = _dt.as_dtype(dtype)
    if name in store._vars:
        raise ValueError("A partitioner was provided, but an unpartitioned version of the "
                         "variable was found: %s.  Perhaps a variable of the same name was "
                         "already created without partitioning?" % name)
    from_tensor = isinstance(initializer, Tensor)
    shape = as_shape(shape)
    if from_tensor:
        shape = shape.merge_with(initializer.get_shape())
    partitions = None
    if not reuse or partitioner:
        partitions = _call_partitioner(partitioner, shape, dtype)
    if name in registry:
        if reuse is False:
            raise ValueError("Partitioned variable with name %s already exists. Did you mean "
                             "to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?" % name)
        found = registry[name]
        if not shape.is_compatible_with(found.get_shape()):
            raise ValueError("Trying to reuse partitioned variable %s, but specified shape %s "
                             "and found shape %s." % (name, shape, found.get_shape()))
        if not dtype.is_compatible_with(found.dtype):
            raise ValueError("Trying to reuse partitioned variable %s, but specified dtype %s "
                             "and found dtype %s." % (name, dtype.name, found.dtype.name))
        if partitions is not None and found._get_partitions() != partitions:
            raise ValueError("Trying to reuse partitioned variable %s, but specified "
                             "partitions %s and found partitions %s."
                             % (name, partitions, found._get_partitions()))
        return found
    if reuse is True:
        raise ValueError("PartitionedVariable %s does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=False or "
                         "reuse=tf.AUTO_REUSE in VarScope?" % name)
    axis = next((i for i, p in enumerate(partitions) if p > 1), 0)
    num_slices = partitions[axis]
    if "%s/part_0" % name in store._vars:
        if "%s/part_%d" % (name, num_slices - 1) not in store._vars:
            raise ValueError("Partitioner returned a different partitioning than what was "
                             "already found.  Partitioner returned %d shards, and shard "
                             "%s/part_0 was found, but %s/part_%d was not."
                             % (num_slices, name, name, num_slices - 1))
        if "%s/part_%d" % (name, num_slices) in store._vars:
            raise ValueError("Partitioner returned a different partitioning than what was "
                             "already found.  Partitioner returned %d shards, and shard "
                             "%s/part_0 was found, but so was the extra shard %s/part_%d."
                             % (num_slices, name, name, num_slices))
    shards = []
    for i, (offset, part_shape) in enumerate(shard_slices(shape.as_list(), num_slices, axis)):
        info = _PartitionInfo(full_shape=shape.as_list(), var_offset=offset)
        part_name = "%s/part_%d" % (name, i)
        part_dtype = dtype
        with _graph.name_scope(part_name + "/PartitionedInitializer"):
            if initializer is None or callable(initializer):
                init, init_shape = initializer, part_shape
            else:
                value = initializer if from_tensor else convert_to_tensor(initializer,
                                                                          dtype=dtype)
                init = indexing_ops.slice(value, offset, part_shape)
                part_dtype = init.dtype.base_dtype
                init_shape = None
        with _graph.name_scope(None):
            var = store._get_single_variable(
                name=part_name, shape=init_shape, dtype=part_dtype, initializer=init,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                validate_shape=validate_shape, constraint=constraint,
                synchronization=synchronization, aggregation=aggregation,
                use_resource=use_resource, partition_info=info)
        var._set_save_slice_info(SaveSliceInfo(name, shape.as_list(), offset, part_shape))
        shards.append(var)
    # sliced from a Tensor initial value, the shards have its dtype (TF1)
    result = PartitionedVariable(name=name, shape=shape, dtype=shards[0].dtype.base_dtype,
                                 variable_list=shards,
                                 partitions=partitions)
    registry[name] = result
    return result


@tf_export("create_partitioned_variables")
def create_partitioned_variables(shape, slicing, initializer, dtype=_dt.float32,
                                 trainable: bool = True, collections=None, name=None,
                                 reuse=None) -> list:
    """Creates a variable split by `slicing` and returns its shards (TF1, deprecated:
    use get_variable with a partitioner).

    Args:
      shape: the full shape.
      slicing: the partition count of each dimension (at most one > 1).
      initializer: an initializer, a Tensor or a value of the full shape.
      dtype, trainable, collections, reuse: as for get_variable.
      name: the variable scope (default "PartitionedVariable"); the shards are
        "<scope>/part_<i>".

    Returns:
      The list of shard Variables.

    Raises:
      ValueError: `shape` and `slicing` differ in length, or rank 0.
    """
    from tensorweave.ops.state import variable_scope as vs
    if len(shape) != len(slicing):
        raise ValueError("The 'shape' and 'slicing' of a partitioned Variable must have the "
                         "length: shape: %s, slicing: %s" % (shape, slicing))
    if len(shape) < 1:
        raise ValueError("A partitioned Variable must have rank at least 1: shape: %s"
                         % (shape,))
    with vs.variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        store = vs._get_default_variable_store()
        with _graph.name_scope(None):
            pv = get_partitioned_variable(
                store, scope.name, shape=shape, dtype=dtype, initializer=initializer,
                reuse=scope.reuse, trainable=trainable, collections=collections,
                partitioner=lambda **unused: list(slicing),
                synchronization=_variables.VariableSynchronization.AUTO,
                aggregation=_variables.VariableAggregation.NONE)
        return list(pv)
