"""Lookup tables: key -> value maps held by a device as resources (TF1 `tf.lookup`).

Ops: HashTableV2 (a table filled once by an initializer op), MutableHashTableV2 and
MutableHashTableOfTensorsV2 (filled by inserts; values of one shape),
MutableDenseHashTableV2 (the same, with two reserved keys), the initializers
InitializeTableV2 / LookupTableImportV2 (keys and values tensors) and
InitializeTableFromTextFileV2 (a text file), LookupTableFindV2, LookupTableSizeV2,
LookupTableExportV2, LookupTableInsertV2, LookupTableRemoveV2.

Semantics (TF's): a handle op finds or makes its table in the device's ResourceManager
under (container, shared_name), or a name unique to the op. A static table must be
initialized before a lookup (FailedPreconditionError "Table not initialized."); running
its initializer again with the same data does nothing, with different data fails. Adding
a key already there with another value fails ("HashTable has different value for same
key"). A lookup maps each key (any shape) to its value or to the default; a table of
tensors maps a key to a value of `value_shape`, so the result has the keys' shape
followed by it. A dense table's keys may be vectors (its empty key's shape, TF's "key
shape"): keys then end with that shape, and a lookup's result has the keys' shape
without it, followed by the value shape. The default of a lookup is one value for all
keys or, as TF allows, one per key (the keys' shape followed by the value shape). Export
gives the keys and values in an unspecified order (here: sorted by key). A text file
gives one entry per line (an empty line is an error): the key and the value are the
whole line (TextFileIndex.WHOLE_LINE), its number (LINE_NUMBER) or a column of the line
split at `delimiter`, converted to the table's dtype.

The Python classes are TF1's `tf.lookup.StaticHashTable`, `KeyValueTensorInitializer`,
`TextFileInitializer`, `TextFileIndex`, `tf.lookup.experimental.MutableHashTable` and
`DenseHashTable` (checkpointed by a Saver through their export, as TF's). TF's dense
table is open addressing over buckets, and its export lists every bucket (empty ones
hold `empty_key`); here it is the same map as the others, so its export lists the
entries only, and importing TF's bucket arrays skips the reserved keys.
"""
from __future__ import annotations

import itertools
import threading
from typing import Dict, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape

__all__ = ["TableResource", "StaticHashTable", "KeyValueTensorInitializer",
           "TextFileInitializer", "TextFileIndex", "MutableHashTable", "DenseHashTable"]

_UNIQUE = itertools.count()


class TableResource:
    """The run-time state of one table.

    Invariants (guarded by `lock`): `entries` maps a key (a Python scalar: bytes, int,
    float or bool; a tuple of them for keys of `key_shape`) to its value (a Python
    scalar for scalar tables, an array of `value_shape` otherwise); a static table is
    `initialized` once its initializer ran, a mutable one always is.
    """

    def __init__(self, key_dtype: _dt.DType, value_dtype: _dt.DType, mutable: bool,
                 value_shape=(), reserved: Optional[Dict[object, str]] = None,
                 key_shape=()):
        self.lock = threading.Lock()
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        self.value_shape = tuple(value_shape)
        self.key_shape = tuple(key_shape)
        self.mutable = mutable
        self.initialized = mutable
        self.entries: Dict[object, object] = {}
        # a dense table's empty and deleted keys -> their names: never keys
        self.reserved: Dict[object, str] = dict(reserved or {})

    def keys_of(self, op, keys: np.ndarray, whole_batch: bool = False):
        """(the keys of `keys` as entry keys, the shape they are laid out in). Vector
        keys: `keys` must end with the key shape, and with `whole_batch` (inserts and
        removals, as TF) be exactly [n] + key shape."""
        if not self.key_shape:
            return keys.reshape(-1).tolist(), keys.shape
        k = len(self.key_shape)
        if whole_batch:
            want = keys.shape[:1] + self.key_shape
            if keys.shape != want:
                raise errors.InvalidArgumentError(None, op, "Expected key shape %s got %s"
                                                  % (list(want), list(keys.shape)))
        elif keys.ndim < k or keys.shape[keys.ndim - k:] != self.key_shape:
            raise errors.InvalidArgumentError(
                None, op, "Input key shape %s must end with the table's key shape %s"
                % (list(keys.shape), list(self.key_shape)))
        rows = keys.reshape((-1, int(np.prod(self.key_shape))))
        return [tuple(r) for r in rows.tolist()], keys.shape[:keys.ndim - k]

    def check_reserved(self, op, ks: list) -> None:
        if not self.reserved:
            return
        for k in ks:
            what = self.reserved.get(k)
            if what is not None:
                raise errors.InvalidArgumentError(None, op, "Using the %s as a table key is "
                                                  "not allowed" % what)

    # -- checks --
    def check_dtypes(self, op, keys: np.ndarray, values: Optional[np.ndarray] = None) -> None:
        def name(d):
            return _dt.as_dtype(d).name
        if _dt.as_dtype(keys.dtype) != self.key_dtype:
            raise errors.InvalidArgumentError(None, op, "Key must be type %s but got %s"
                                              % (self.key_dtype.name, name(keys.dtype)))
        if values is not None and _dt.as_dtype(values.dtype) != self.value_dtype:
            raise errors.InvalidArgumentError(None, op, "Value must be type %s but got %s"
                                              % (self.value_dtype.name, name(values.dtype)))

    def _rows(self, op, keys: np.ndarray, values: np.ndarray, whole_batch: bool = False):
        """(key list, value list) of keys and values tensors of matching shapes."""
        ks, lead = self.keys_of(op, keys, whole_batch)
        want = lead + self.value_shape
        if values.shape != want:
            raise errors.InvalidArgumentError(
                None, op, "Expected shape %s for value, got %s"
                % (list(want), list(values.shape)))
        if self.value_shape:
            vs = list(values.reshape((len(ks),) + self.value_shape))
        else:
            vs = values.reshape(-1).tolist()
        return ks, vs

    # -- updates --
    def initialize(self, op, keys: np.ndarray, values: np.ndarray) -> None:
        """A static table's initializer: adds every entry once; again: a no-op when the
        data are the same."""
        self.check_dtypes(op, keys, values)
        ks, vs = self._rows(op, keys, values)
        fresh: Dict[object, object] = {}
        _add_all(op, fresh, ks, vs)
        with self.lock:
            if self.initialized:
                if not _same_entries(self.entries, fresh):
                    raise errors.FailedPreconditionError(
                        None, op, "Table was already initialized with different data.")
                return
            self.entries = fresh
            self.initialized = True

    def insert(self, op, keys: np.ndarray, values: np.ndarray) -> None:
        self.check_dtypes(op, keys, values)
        ks, vs = self._rows(op, keys, values, whole_batch=True)
        self.check_reserved(op, ks)
        with self.lock:
            self.entries.update(zip(ks, vs))

    def import_(self, op, keys: np.ndarray, values: np.ndarray) -> None:
        """LookupTableImportV2: a mutable table's contents replaced; a static table
        initialized."""
        if not self.mutable:
            self.initialize(op, keys, values)
            return
        self.check_dtypes(op, keys, values)
        ks, vs = self._rows(op, keys, values, whole_batch=bool(self.key_shape))
        with self.lock:  # (TF's dense-table exports hold empty and deleted buckets)
            self.entries = {k: v for k, v in zip(ks, vs) if k not in self.reserved}

    def remove(self, op, keys: np.ndarray) -> None:
        self.check_dtypes(op, keys)
        ks, _ = self.keys_of(op, keys, whole_batch=True)
        self.check_reserved(op, ks)
        with self.lock:
            for k in ks:
                self.entries.pop(k, None)

    # -- reads --
    def find(self, op, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        self.check_dtypes(op, keys)
        flat, lead = self.keys_of(op, keys)
        self.check_reserved(op, flat)
        if _dt.as_dtype(default.dtype) != self.value_dtype:
            raise errors.InvalidArgumentError(
                None, op, "Default value must be type %s but got %s"
                % (self.value_dtype.name, _dt.as_dtype(default.dtype).name))
        per_key_shape = tuple(lead) + self.value_shape
        if default.shape not in (self.value_shape, per_key_shape):
            raise errors.InvalidArgumentError(
                None, op, "Expected shape %s or %s for default value, got %s"
                % (list(self.value_shape), list(per_key_shape), list(default.shape)))
        with self.lock:
            if not self.initialized:
                raise errors.FailedPreconditionError(None, op, "Table not initialized.")
            get = self.entries.get
            np_value = self.value_dtype.as_numpy_dtype
            if not self.value_shape and default.shape == ():
                # (map over the bound get: no Python-level call per key)
                found = map(get, flat, itertools.repeat(default.item(), len(flat)))
                if np_value is object:
                    out = np.empty(len(flat), dtype=object)
                    out[:] = list(found)
                else:
                    out = np.fromiter(found, dtype=np_value, count=len(flat))
                return out.reshape(lead)
            rows = [get(k) for k in flat]
        # a default per key (TF's dynamic_default_values) or one for all keys
        out = np.empty((len(flat),) + self.value_shape, dtype=np_value)
        out[...] = default.reshape((-1,) + self.value_shape)
        for i, r in enumerate(rows):
            if r is not None:
                out[i] = r
        return out.reshape(per_key_shape)

    def size(self) -> int:
        with self.lock:
            return len(self.entries)

    def export(self):
        with self.lock:
            items = sorted(self.entries.items(), key=lambda kv: kv[0])
        np_key = self.key_dtype.as_numpy_dtype
        np_value = self.value_dtype.as_numpy_dtype
        keys = np.array([k for k, _ in items], dtype=np_key).reshape(
            (len(items),) + self.key_shape)
        if self.value_shape:
            values = np.array([v for _, v in items], dtype=np_value).reshape(
                (len(items),) + self.value_shape)
        else:
            values = np.array([v for _, v in items], dtype=np_value)
        return keys, values


def _add_all(op, entries: dict, ks, vs) -> None:
    for k, v in zip(ks, vs):
        old = entries.get(k, entries)
        if old is entries:
            entries[k] = v
        elif not _same_value(old, v):
            raise errors.FailedPreconditionError(
                None, op, "HashTable has different value for same key. Key %s has %s and "
                "trying to add value %s" % (_text(k), _text(old), _text(v)))


def _text(x) -> str:
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def _same_entries(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)


class TableHandle:
    """The run-time value of a table resource tensor."""

    __slots__ = ("container", "name", "table")

    def __init__(self, container: str, name: str, table: TableResource):
        self.container, self.name, self.table = container, name, table

    def __repr__(self):
        return "<TableHandle %s/%s>" % (self.container or "localhost", self.name)


def table_resource(ctx, handle) -> TableResource:
    """The table a resource handle names, for kernels that take one."""
    if type(handle) is TableHandle:
        return handle.table
    raise errors.InvalidArgumentError(None, ctx.op, "Expected a lookup table handle, got %r"
                                      % (handle,))


# --- the ops ----------------------------------------------------------------------------
def _scalar(op):
    return TensorShape([])


_TABLE_ATTRS = {"container": "", "shared_name": "", "use_node_name_sharing": False,
                "key_dtype": TypeAttr(), "value_dtype": TypeAttr()}
register_op("HashTableV2", outputs=["table_handle: resource"], attrs=dict(_TABLE_ATTRS),
            shape=_scalar, stateful=True)
register_op("MutableHashTableV2", outputs=["table_handle: resource"],
            attrs=dict(_TABLE_ATTRS), shape=_scalar, stateful=True)
register_op("MutableHashTableOfTensorsV2", outputs=["table_handle: resource"],
            attrs=dict(_TABLE_ATTRS, value_shape=TensorShape([])), shape=_scalar,
            stateful=True)
register_op("MutableDenseHashTableV2", inputs=["empty_key: key_dtype",
                                               "deleted_key: key_dtype"],
            outputs=["table_handle: resource"],
            attrs=dict(_TABLE_ATTRS, value_shape=TensorShape([]),
                       initial_num_buckets=131072, max_load_factor=0.8),
            shape=_scalar, stateful=True)


def _check_dense_table_attrs(ctx) -> None:
    """TF's open-addressing table grows by doubling: its bucket count must be a power of
    two and its load factor a fraction (InvalidArgumentError otherwise)."""
    buckets, load = ctx.attrs["initial_num_buckets"], ctx.attrs["max_load_factor"]
    if buckets < 1 or buckets & (buckets - 1):
        raise errors.InvalidArgumentError(None, ctx.op, "Number of buckets must be at least 1 "
                                          "and a power of 2, got: %d" % buckets)
    if not 0 < load < 1:
        raise errors.InvalidArgumentError(None, ctx.op, "max_load_factor must be between 0 "
                                          "and 1, got: %g" % load)


# (key, value) dtype pairs TF registers no kernel for (checked against TF 2.21): keys are
# int32, int64 or string; bool values only with string keys; the rest per table op.
_NO_KERNEL_PAIRS = {
    "HashTableV2": {("int32", "int64")},
    "MutableHashTableV2": {("int32", "int64"), ("int32", "string"), ("string", "string")},
}


def _check_kernel_dtypes(ctx) -> None:
    """InvalidArgumentError, as TF's missing kernel, for the dtype pairs TF cannot hold."""
    pairs = _NO_KERNEL_PAIRS.get(ctx.op.type)
    if pairs is None:
        return
    key, value = ctx.attrs["key_dtype"].name, ctx.attrs["value_dtype"].name
    if key not in ("int32", "int64", "string") or (value == "bool" and key != "string") \
            or (key, value) in pairs:
        raise errors.InvalidArgumentError(
            None, ctx.op, "No OpKernel was registered to support Op '%s' with these attrs: "
            "key_dtype=%s, value_dtype=%s" % (ctx.op.type, key, value))


def _handle_kernel(mutable: bool):
    def run(ctx, *reserved_keys):
        _check_kernel_dtypes(ctx)
        a, st = ctx.attrs, ctx.state
        name = st.get("name")
        if name is None:
            name = a["shared_name"] or (ctx.op.name if a["use_node_name_sharing"] else
                                        "_%d_%s" % (next(_UNIQUE), ctx.op.name))
            st["name"] = name
        shape = a.get("value_shape")
        shape = () if shape is None else tuple(shape.as_list())
        reserved, key_shape = {}, ()
        if reserved_keys:  # a dense table's empty and deleted keys (their shape: the keys')
            _check_dense_table_attrs(ctx)
            empty, deleted = (np.asarray(k) for k in reserved_keys)
            if empty.shape != deleted.shape:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Empty and deleted keys must have same shape, got shapes: "
                    "%s and %s" % (list(empty.shape), list(deleted.shape)))
            key_shape = empty.shape
            empty, deleted = ((tuple(k.reshape(-1).tolist()) if key_shape else k.item())
                              for k in (empty, deleted))
            if empty == deleted:
                raise errors.InvalidArgumentError(None, ctx.op, "Empty and deleted keys "
                                                  "cannot be equal")
            reserved = {empty: "empty_key", deleted: "deleted_key"}

        def create():
            return TableResource(a["key_dtype"], a["value_dtype"], mutable, shape, reserved,
                                 key_shape)
        table = ctx.resources.lookup_or_create(a["container"], name, create)
        if not isinstance(table, TableResource):
            raise errors.InvalidArgumentError(None, ctx.op, "Resource %s/%s is not a lookup "
                                              "table" % (a["container"] or "localhost", name))
        if (table.key_dtype, table.value_dtype, table.mutable, table.value_shape,
                table.key_shape) != (a["key_dtype"], a["value_dtype"], mutable, shape,
                                     key_shape):
            raise errors.InvalidArgumentError(
                None, ctx.op, "Shared table %s holds %s -> %s, not the %s -> %s asked for"
                % (name, table.key_dtype.name, table.value_dtype.name, a["key_dtype"].name,
                   a["value_dtype"].name))
        h = st.get("handle")
        if h is None or h.table is not table:
            h = st["handle"] = TableHandle(a["container"], name, table)
        return h
    return run


kernel("HashTableV2")(_handle_kernel(False))
kernel("MutableHashTableV2")(_handle_kernel(True))
kernel("MutableHashTableOfTensorsV2")(_handle_kernel(True))
kernel("MutableDenseHashTableV2")(_handle_kernel(True))


def _require_equal_rows(keys_rows, values_rows):
    """TF's shape-inference error when the key and value counts are known and differ."""
    if keys_rows is not None and values_rows is not None and keys_rows != values_rows:
        raise ValueError("Dimensions must be equal, but are %d and %d"
                         % (keys_rows, values_rows))


def _initialize_shape(op) -> list:
    # An initializer takes a vector of keys and a vector of values, one per key.
    keys, values = (t.shape.with_rank(1) for t in op.inputs[1:3])
    _require_equal_rows(_leading_dim(keys), _leading_dim(values))
    return []


def _import_shape(op) -> list:
    # Imported values may be vectors (tables of tensors): only the row counts must agree.
    _require_equal_rows(_leading_dim(op.inputs[1].shape), _leading_dim(op.inputs[2].shape))
    return []


def _leading_dim(shape: TensorShape) -> Optional[int]:
    return shape.as_list()[0] if shape.ndims else None


_KV = {"Tkey": TypeAttr(), "Tval": TypeAttr()}
register_op("InitializeTableV2", inputs=["table_handle: resource", "keys: Tkey",
                                         "values: Tval"], attrs=dict(_KV),
            shape=_initialize_shape, stateful=True)
register_op("LookupTableImportV2", inputs=["table_handle: resource", "keys: Tin",
                                           "values: Tout"],
            attrs={"Tin": TypeAttr(), "Tout": TypeAttr()}, shape=_import_shape,
            stateful=True)
register_op("LookupTableInsertV2", inputs=["table_handle: resource", "keys: Tin",
                                           "values: Tout"],
            attrs={"Tin": TypeAttr(), "Tout": TypeAttr()}, stateful=True)
register_op("LookupTableRemoveV2", inputs=["table_handle: resource", "keys: Tin"],
            attrs={"Tin": TypeAttr()}, stateful=True)
register_op("InitializeTableFromTextFileV2",
            inputs=["table_handle: resource", "filename: string"],
            attrs={"key_index": -2, "value_index": -2, "vocab_size": -1, "delimiter": "\t",
                   "offset": 0}, stateful=True)


@kernel("InitializeTableV2")
def _initialize_kernel(ctx, handle, keys, values):
    table_resource(ctx, handle).initialize(ctx.op, np.asarray(keys), np.asarray(values))


@kernel("LookupTableImportV2")
def _import_kernel(ctx, handle, keys, values):
    table_resource(ctx, handle).import_(ctx.op, np.asarray(keys), np.asarray(values))


@kernel("LookupTableInsertV2")
def _insert_kernel(ctx, handle, keys, values):
    t = table_resource(ctx, handle)
    if not t.mutable:
        raise errors.UnimplementedError(None, ctx.op, "Insert is not supported by a static "
                                        "HashTable")
    t.insert(ctx.op, np.asarray(keys), np.asarray(values))


@kernel("LookupTableRemoveV2")
def _remove_kernel(ctx, handle, keys):
    t = table_resource(ctx, handle)
    if not t.mutable:
        raise errors.UnimplementedError(None, ctx.op, "Remove is not supported by a static "
                                        "HashTable")
    t.remove(ctx.op, np.asarray(keys))


WHOLE_LINE, LINE_NUMBER = -2, -1


@kernel("InitializeTableFromTextFileV2")
def _initialize_from_text_file_kernel(ctx, handle, filename):
    from tensorweave.platform import file_io
    t, a, op = table_resource(ctx, handle), ctx.attrs, ctx.op
    path = file_io.fspath(np.asarray(filename).item())
    try:
        text = file_io.read_bytes(path)
    except FileNotFoundError:
        raise errors.NotFoundError(None, op, "%s; No such file or directory" % path) from None
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    vocab_size = a["vocab_size"]
    if vocab_size > 0:
        if len(lines) < vocab_size:
            raise errors.InvalidArgumentError(None, op, "Invalid vocab_size in %s: expected "
                                              "%d but got %d" % (path, vocab_size, len(lines)))
        lines = lines[:vocab_size]
    _check_no_empty_line(op, path, lines)
    lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
    delimiter = a["delimiter"].encode() if isinstance(a["delimiter"], str) \
        else a["delimiter"]
    keys = [_field(op, ln, n, a["key_index"], delimiter, t.key_dtype, 0)
            for n, ln in enumerate(lines)]
    values = [_field(op, ln, n, a["value_index"], delimiter, t.value_dtype, a["offset"])
              for n, ln in enumerate(lines)]
    t.initialize(op, np.array(keys, dtype=t.key_dtype.as_numpy_dtype).reshape(-1),
                 np.array(values, dtype=t.value_dtype.as_numpy_dtype).reshape(-1))


def _check_no_empty_line(op, path: str, lines: list) -> None:
    """TF refuses a vocabulary with an empty line (`lines` as read: a CRLF line still
    ends with its carriage return), naming the byte offset just past it."""
    empty = next((n for n, ln in enumerate(lines) if ln in (b"", b"\r")), None)
    if empty is None:
        return
    position = sum(len(ln) + 1 for ln in lines[:empty + 1])  # +1: each line's newline
    raise errors.InvalidArgumentError(None, op, "Invalid content in %s: empty line found at "
                                      "position %d." % (path, position))


def _field(op, line: bytes, number: int, index: int, delimiter: bytes, dtype, offset: int):
    """One key or value of a text file's line (see the module docstring)."""
    if index == LINE_NUMBER:
        return number + offset
    if index == WHOLE_LINE:
        field = line
    else:
        parts = line.split(delimiter)
        if index >= len(parts):
            raise errors.InvalidArgumentError(
                None, op, "Invalid number of columns in line %d (%s) : expected at least %d "
                "got %d" % (number, _text(line), index + 1, len(parts)))
        field = parts[index]
    if dtype == _dt.string:
        return field
    try:
        return int(field) if dtype.is_integer else float(field)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, op, "Field %s in line %d is not a valid %s." % (_text(field), number,
                                                                 dtype.name)) from None


def _key_shape(handle) -> Optional[TensorShape]:
    """The static key shape of the table `handle` refers to ([] but for a dense table
    of vector keys, whose empty key has their shape; None when that is unknown)."""
    from tensorweave.ops.state.resource_variable_ops import handle_source
    op = handle_source(handle).op
    if op.type == "MutableDenseHashTableV2":
        return op.inputs[0].shape if op.inputs[0].shape.ndims is not None else None
    return TensorShape([])  # a handle from elsewhere (a function's capture): scalar keys,
    # the keys of every table but a dense one of vector keys


def _value_rank(handle) -> int:
    """The rank of one value of the table `handle` refers to (0 but for tables of
    tensors, which hold their value shape as an attr)."""
    from tensorweave.ops.state.resource_variable_ops import handle_source
    op = handle_source(handle).op
    shape = op.attrs.get("value_shape")
    return shape.ndims if isinstance(shape, TensorShape) and shape.ndims else 0


def _find_shape(op) -> TensorShape:
    keys, default = op.inputs[1].shape, op.inputs[2].shape
    key_shape = _key_shape(op.inputs[0])
    if keys.ndims is None or default.ndims is None or key_shape is None or \
            keys.ndims < key_shape.ndims:
        return unknown_shape()
    lead = TensorShape(keys.as_list()[:keys.ndims - key_shape.ndims])
    value_rank = _value_rank(op.inputs[0])
    if default.ndims == lead.ndims + value_rank and lead.ndims and \
            lead.is_compatible_with(default[:lead.ndims]):  # a default per key
        return lead.merge_with(default[:lead.ndims]).concatenate(default[lead.ndims:])
    return lead.concatenate(default)


def _export_shape(op) -> list:
    key_shape = _key_shape(op.inputs[0])
    return [TensorShape([None]).concatenate(key_shape) if key_shape is not None else
            unknown_shape(), unknown_shape()]


register_op("LookupTableFindV2",
            inputs=["table_handle: resource", "keys: Tin", "default_value: Tout"],
            outputs=["values: Tout"], attrs={"Tin": TypeAttr(), "Tout": TypeAttr()},
            shape=_find_shape, stateful=True)
register_op("LookupTableSizeV2", inputs=["table_handle: resource"], outputs=["size: int64"],
            shape=_scalar, stateful=True)
register_op("LookupTableExportV2", inputs=["table_handle: resource"],
            outputs=["keys: Tkeys", "values: Tvalues"],
            attrs={"Tkeys": TypeAttr(), "Tvalues": TypeAttr()}, stateful=True,
            shape=_export_shape)


@kernel("LookupTableFindV2")
def _find_kernel(ctx, handle, keys, default):
    return table_resource(ctx, handle).find(ctx.op, np.asarray(keys), np.asarray(default))


@kernel("LookupTableSizeV2")
def _size_kernel(ctx, handle):
    return np.int64(table_resource(ctx, handle).size())


@kernel("LookupTableExportV2")
def _export_kernel(ctx, handle):
    return list(table_resource(ctx, handle).export())


for _op in ("HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2",
            "MutableDenseHashTableV2",
            "InitializeTableV2", "LookupTableImportV2", "LookupTableInsertV2",
            "LookupTableRemoveV2", "InitializeTableFromTextFileV2", "LookupTableFindV2",
            "LookupTableSizeV2", "LookupTableExportV2"):
    not_differentiable(_op)


# --- TF1's Python classes -----------------------------------------------------------------
@tf_export("lookup.TextFileIndex")
class TextFileIndex:
    """Where a text file's key or value comes from: the whole line, the line number, or
    (an index >= 0) a column."""
    WHOLE_LINE = WHOLE_LINE
    LINE_NUMBER = LINE_NUMBER


class _KeyValueDtypes:
    """The key and value dtypes of a table or of its initializer."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dt.as_dtype(key_dtype)
        self._value_dtype = _dt.as_dtype(value_dtype)

    @property
    def key_dtype(self) -> _dt.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> _dt.DType:
        return self._value_dtype


class TableInitializer(_KeyValueDtypes):
    """The initializer of a static table: its dtypes and the op that fills a table
    (`initialize`)."""

    def _check_table_dtypes(self, table) -> None:
        if table.key_dtype != self._key_dtype or table.value_dtype != self._value_dtype:
            raise TypeError("Invalid key/value dtypes for table: table %s -> %s, "
                            "initializer %s -> %s" % (table.key_dtype, table.value_dtype,
                                                      self._key_dtype, self._value_dtype))


@tf_export("lookup.KeyValueTensorInitializer")
class KeyValueTensorInitializer(TableInitializer):
    """Fills a table with `keys[i] -> values[i]`.

    Args:
      keys: a 1-D tensor (or what converts to one) of keys.
      values: the values, of the same length.
      key_dtype, value_dtype: their dtypes (default: inferred).
      name: the name scope of the initializer op (default "key_value_init").
    """

    def __init__(self, keys, values, key_dtype=None, value_dtype=None,
                 name: Optional[str] = None):
        with _graph.name_scope(name, "key_value_init", [keys, values]) as scope:
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table) -> _graph.Operation:
        """The op filling `table`, added to TABLE_INITIALIZERS."""
        self._check_table_dtypes(table)
        with _graph.name_scope(self._name, values=(table.resource_handle, self._keys,
                                                   self._values)):
            init = apply_op("InitializeTableV2", [table.resource_handle, self._keys,
                                                  self._values], name="table_init")
        _graph.add_to_collection(_graph.GraphKeys.TABLE_INITIALIZERS, init)
        return init


@tf_export("lookup.TextFileInitializer")
class TextFileInitializer(TableInitializer):
    """Fills a table from a text file, one entry per line (see the module docstring).

    Args:
      filename: a scalar string tensor or path; a constant path is added to
        ASSET_FILEPATHS (a SavedModel then carries the file).
      key_dtype: string or an integer type (int64 with LINE_NUMBER).
      key_index: TextFileIndex.WHOLE_LINE, LINE_NUMBER or a column >= 0.
      value_dtype, value_index: the same for the value.
      vocab_size: read only this many lines (the file must have them); None: all.
      delimiter: the column separator.
      name: the name scope of the initializer op (default "text_file_init").
      value_index_offset: added to the line number when value_index is LINE_NUMBER.

    Raises:
      ValueError: an index below WHOLE_LINE, a dtype the index cannot give, or a
        vocab_size <= 0.
    """

    def __init__(self, filename, key_dtype, key_index: int, value_dtype, value_index: int,
                 vocab_size: Optional[int] = None, delimiter: str = "\t",
                 name: Optional[str] = None, value_index_offset: int = 0):
        key_dtype, value_dtype = _dt.as_dtype(key_dtype), _dt.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, key_dtype),
                                   ("value", value_index, value_dtype)):
            if index < WHOLE_LINE:
                raise ValueError("`%s_index` should be >= -2, received: %d."
                                 % (what, index))
            if index == LINE_NUMBER and dtype != _dt.int64:
                # TF words the two messages differently ("if" / "for")
                wording = "if `key_index` is" if what == "key" else "for `value_index`"
                raise ValueError("`%s_dtype` must be int64 %s -1, received: %s"
                                 % (what, wording, dtype))
            if index == WHOLE_LINE and what == "key" and not (dtype.is_integer or
                                                              dtype == _dt.string):
                raise ValueError("`key_dtype` should be either integer or string for "
                                 "`key_index` -2, received: %s" % dtype)
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError("`vocab_size` should be > 0, received: %d" % vocab_size)
        self._filename_arg = filename
        self._filename = convert_to_tensor(filename, _dt.string, name="asset_path")
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        self._offset = value_index_offset
        super().__init__(key_dtype, value_dtype)

    @property
    def _shared_name(self) -> Optional[str]:
        """TF's name of the table of this file and columns: tables over the same file (a
        Python path) share one table in a session, so initializing one fills both."""
        if not isinstance(self._filename_arg, (str, bytes)):
            return None
        filename = self._filename_arg.decode() if isinstance(self._filename_arg, bytes) \
            else self._filename_arg
        parts = [filename] + ([str(self._vocab_size)] if self._vocab_size else []) + \
            [str(self._key_index), str(self._value_index)] + \
            ([str(self._offset)] if self._offset else [])
        return "hash_table_" + "_".join(parts)

    def initialize(self, table) -> _graph.Operation:
        """The op filling `table` from the file, added to TABLE_INITIALIZERS."""
        self._check_table_dtypes(table)
        filename = self._filename
        with _graph.name_scope(self._name, "text_file_init", (table.resource_handle,)):
            init = apply_op("InitializeTableFromTextFileV2", [table.resource_handle, filename],
                            {"key_index": self._key_index, "value_index": self._value_index,
                             "vocab_size": -1 if self._vocab_size is None else self._vocab_size,
                             "delimiter": self._delimiter, "offset": self._offset},
                            name="InitializeTableFromTextFileV2")
        _graph.add_to_collection(_graph.GraphKeys.TABLE_INITIALIZERS, init)
        if filename.op.type == "Const":  # a SavedModel carries the file as an asset
            _graph.add_to_collection(_graph.GraphKeys.ASSET_FILEPATHS, filename)
        return init


class _Table(_KeyValueDtypes):
    """What the tables share: the handle, dtypes, lookup, size and export."""

    def __init__(self, key_dtype, value_dtype, default_value, name: str):
        super().__init__(key_dtype, value_dtype)
        self._name = name
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype,
                                                name="default_value") \
            if default_value is not None else None

    @property
    def name(self) -> str:
        return self._name

    @property
    def resource_handle(self) -> _graph.Tensor:
        return self._handle

    @property
    def default_value(self):
        return self._default_value

    def _check_keys(self, keys):
        from tensorweave.framework.sparse_tensor import SparseTensor
        if isinstance(keys, SparseTensor):
            dtype = keys.dtype
        else:
            keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys") \
                if not isinstance(keys, _graph.Tensor) else keys
            dtype = keys.dtype
        if dtype.base_dtype != self._key_dtype:
            raise TypeError("Dtype of argument `keys` must be %s, received: %s"
                            % (self._key_dtype, dtype))
        return keys

    def _find(self, keys, default, name: Optional[str]):
        from tensorweave.framework.sparse_tensor import SparseTensor
        keys = self._check_keys(keys)
        with _graph.name_scope(name, "%s_Lookup" % self._name,
                               (self._handle, keys, default)):
            if isinstance(keys, SparseTensor):
                values = apply_op("LookupTableFindV2", [self._handle, keys.values, default],
                                  name="LookupTableFindV2").outputs[0]
                return SparseTensor(keys.indices, values, keys.dense_shape)
            return apply_op("LookupTableFindV2", [self._handle, keys, default],
                            name="LookupTableFindV2").outputs[0]

    def lookup(self, keys, name: Optional[str] = None):
        """Each key's value, or the default (keys: a Tensor or SparseTensor of
        `key_dtype`).

        Raises:
          TypeError: `keys` is not of `key_dtype`.
        """
        return self._find(keys, self._default_value, name)

    def size(self, name: Optional[str] = None) -> _graph.Tensor:
        """The number of entries (int64 scalar)."""
        with _graph.name_scope(name, "%s_Size" % self._name, (self._handle,)):
            return apply_op("LookupTableSizeV2", [self._handle],
                            name="LookupTableSizeV2").outputs[0]

    def export(self, name: Optional[str] = None):
        """(keys, values) tensors of every entry."""
        with _graph.name_scope(name, "%s_Export" % self._name, (self._handle,)):
            op = apply_op("LookupTableExportV2", [self._handle],
                          {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype},
                          name="LookupTableExportV2")
        return op.outputs[0], op.outputs[1]


@tf_export("lookup.StaticHashTable")
class StaticHashTable(_Table):
    """A table filled once by `initializer` (the op is in TABLE_INITIALIZERS, so
    `tf.tables_initializer()` runs it).

    Args:
      initializer: a KeyValueTensorInitializer or TextFileInitializer.
      default_value: the value of keys not in the table.
      name: the name of the table op (default "hash_table").
      experimental_is_anonymous: not supported (raises NotImplementedError when True).

    Raises:
      ValueError: `default_value` does not have a scalar shape.
    """

    def __init__(self, initializer, default_value, name: Optional[str] = None,
                 experimental_is_anonymous: bool = False):
        if experimental_is_anonymous:
            raise NotImplementedError("StaticHashTable(experimental_is_anonymous=True) is a "
                                      "TF2 eager feature; tensorweave tables are graph "
                                      "resources")
        name = name or "hash_table"
        self._initializer = initializer
        super().__init__(initializer.key_dtype, initializer.value_dtype, default_value, name)
        self._default_value.get_shape().merge_with(TensorShape([]))
        shared = getattr(initializer, "_shared_name", None)
        self._handle = apply_op("HashTableV2", [], {
            "shared_name": shared or "%s_%d" % (name, next(_UNIQUE)),
            "key_dtype": self._key_dtype, "value_dtype": self._value_dtype},
            name=name).outputs[0]
        self._init_op = initializer.initialize(self)

    @property
    def initializer(self) -> _graph.Operation:
        return self._init_op


@tf_export("lookup.experimental.MutableHashTable")
class MutableHashTable(_Table):
    """A table changed by `insert` and `remove`, checkpointed by a Saver (its entries are
    saved as "<name>-keys" and "<name>-values", `name` without the name scope, as TF
    saves them).

    Args:
      key_dtype, value_dtype: the dtypes of keys and values.
      default_value: the value of keys not in the table; its shape is the values' shape.
      name: the name of the table op (default "MutableHashTable").
      checkpoint: whether Savers save and restore the table.
      experimental_is_anonymous: not supported (raises NotImplementedError when True).
    """

    def __init__(self, key_dtype, value_dtype, default_value,
                 name: str = "MutableHashTable", checkpoint: bool = True,
                 experimental_is_anonymous: bool = False):
        if experimental_is_anonymous:
            raise NotImplementedError("%s(experimental_is_anonymous=True) is a TF2 eager "
                                      "feature; tensorweave tables are graph resources"
                                      % type(self).__name__)
        super().__init__(key_dtype, value_dtype, default_value, name)
        shape = self._default_value.get_shape()
        attrs = {"key_dtype": self._key_dtype, "value_dtype": self._value_dtype,
                 # TF's graph mode: a checkpointed table is shared by its node's name
                 "shared_name": "", "use_node_name_sharing": checkpoint}
        self._handle = self._create_handle(attrs, shape, name)
        if checkpoint:
            _graph.add_to_collection(_graph.GraphKeys.SAVEABLE_OBJECTS, _TableSaveable(
                self._handle, name))

    def _create_handle(self, attrs: dict, value_shape: TensorShape, name: str):
        if value_shape.ndims:
            attrs["value_shape"] = value_shape
            return apply_op("MutableHashTableOfTensorsV2", [], attrs, name=name).outputs[0]
        return apply_op("MutableHashTableV2", [], attrs, name=name).outputs[0]

    def insert(self, keys, values, name: Optional[str] = None) -> _graph.Operation:
        """Adds or replaces entries.

        Raises:
          TypeError: `keys` or `values` of the wrong dtype.
        """
        keys = self._check_keys(keys)
        values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
        with _graph.name_scope(name, "%s_lookup_table_insert" % self._name,
                               (self._handle, keys, values)):
            return apply_op("LookupTableInsertV2", [self._handle, keys, values],
                            name="LookupTableInsertV2")

    def remove(self, keys, name: Optional[str] = None) -> _graph.Operation:
        """Removes the entries of `keys` (absent keys are ignored).

        Raises:
          TypeError: `keys` is not of `key_dtype`.
        """
        keys = self._check_keys(keys)
        with _graph.name_scope(name, "%s_lookup_table_remove" % self._name,
                               (self._handle, keys)):
            return apply_op("LookupTableRemoveV2", [self._handle, keys],
                            name="LookupTableRemoveV2")

    def lookup(self, keys, dynamic_default_values=None, name: Optional[str] = None):
        """Each key's value, or the default (`dynamic_default_values`: a default tensor
        for this lookup instead of the table's)."""
        default = self._default_value if dynamic_default_values is None else \
            convert_to_tensor(dynamic_default_values, dtype=self._value_dtype)
        return self._find(keys, default, name)


@tf_export("lookup.experimental.DenseHashTable")
class DenseHashTable(MutableHashTable):
    """A mutable table with two reserved keys, which may never be inserted, looked up or
    erased (InvalidArgumentError): `empty_key` and `deleted_key`, as TF's open-addressing
    table needs them (see the module docstring for its export).

    Args:
      key_dtype, value_dtype, default_value: as MutableHashTable's.
      empty_key, deleted_key: the reserved keys (different values).
      initial_num_buckets: TF's bucket count hint (kept as the op's attr).
      name: the name of the table op (default "MutableDenseHashTable").
      checkpoint: whether Savers save and restore the table.
      experimental_is_anonymous: not supported (raises NotImplementedError when True).
    """

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets: Optional[int] = None,
                 name: str = "MutableDenseHashTable", checkpoint: bool = True,
                 experimental_is_anonymous: bool = False):
        self._reserved = (empty_key, deleted_key)
        self._initial_num_buckets = initial_num_buckets
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint,
                         experimental_is_anonymous)

    def _create_handle(self, attrs: dict, value_shape: TensorShape, name: str):
        empty, deleted = (convert_to_tensor(k, dtype=self._key_dtype, name=n)
                          for k, n in zip(self._reserved, ("empty_key", "deleted_key")))
        attrs["value_shape"] = value_shape
        if self._initial_num_buckets is not None:
            attrs["initial_num_buckets"] = int(self._initial_num_buckets)
        return apply_op("MutableDenseHashTableV2", [empty, deleted], attrs,
                        name=name).outputs[0]

    def insert_or_assign(self, keys, values, name: Optional[str] = None):
        """`insert` (TF2's name)."""
        return self.insert(keys, values, name)

    def erase(self, keys, name: Optional[str] = None):
        """`remove` (TF2's name)."""
        return self.remove(keys, name)


class _TableSaveable:
    """A mutable table as a Saver sees it (SAVEABLE_OBJECTS): its export saved under
    "<name>-keys" and "<name>-values", restored by an import. A MetaGraphDef holds it as
    its table op's name (TF's form), from which `table_saveable` makes it again."""

    class _Spec:
        def __init__(self, tensor, name):
            self.tensor, self.name, self.slice_spec = tensor, name, ""

    def __init__(self, handle: _graph.Tensor, name: str):
        self.handle = handle
        self.name = name
        self.op = handle.op
        self.device = self.op.device

    @property
    def specs(self):
        with _graph.name_scope(None, "%s_lookup_table_export_values" % self.name,
                               (self.handle,)):
            op = apply_op("LookupTableExportV2", [self.handle],
                          {"Tkeys": self.op._get_attr("key_dtype"),
                           "Tvalues": self.op._get_attr("value_dtype")},
                          name="LookupTableExportV2")
        return [self._Spec(op.outputs[0], self.name + "-keys"),
                self._Spec(op.outputs[1], self.name + "-values")]

    def restore(self, restored_tensors, restored_shapes):
        with _graph.name_scope("%s_table_restore" % self.name):
            return apply_op("LookupTableImportV2", [self.handle, restored_tensors[0],
                                                    restored_tensors[1]],
                            name="LookupTableImportV2")


_MUTABLE_TABLE_OPS = ("MutableHashTableV2", "MutableHashTableOfTensorsV2",
                      "MutableDenseHashTableV2")


def table_saveable(op: _graph.Operation) -> Optional[_TableSaveable]:
    """The saveable of the mutable table `op` makes (a MetaGraphDef's SAVEABLE_OBJECTS
    entry), named as TF names it: the op's name without its scope; None for another
    op."""
    if op.type not in _MUTABLE_TABLE_OPS:
        return None
    return _TableSaveable(op.outputs[0], op.name.rsplit("/", 1)[-1])
