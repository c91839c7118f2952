"""SaveV2 / RestoreV2 / MergeV2Checkpoints (and TF1's V1 SaveSlices, Save and
ShardedFilespec): checkpoints as graph ops (OSDI §4.3).

"Save writes one or more tensors to a checkpoint file, and Restore reads one or more
tensors from a checkpoint file" (§4.3): checkpointing is ordinary dataflow, so a Saver
(train/saver.py) is a subgraph the client runs periodically. The file format and its
guarantees (checksums, atomic writes) are in ops/io/tensor_bundle.py (TF's V2 format,
which SaveV2 writes) and ops/io/checkpoint_format.py (tensorweave's earlier format,
written when the SaveV2 op has the attr `_checkpoint_format: "tensorweave"`); RestoreV2
and MergeV2Checkpoints take either. SaveSlices and Save write TF1's V1 format
(ops/io/tensor_slice_v1.py), which RestoreV2 reads too, as TF's does.

TF1 exports these ops only as `tf.raw_ops`; their builders here are internal
(`save_v2`, `restore_v2`, `merge_v2_checkpoints`, `sharded_filename`, `save_slices`,
`sharded_filespec`).
"""
from __future__ import annotations

import errno
from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeListAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.io import checkpoint_format as _fmt
from tensorweave.ops.io import tensor_bundle as _bundle


# --- helpers -----------------------------------------------------------------------------
def _as_str(x) -> str:
    if isinstance(x, np.ndarray):
        x = x.item() if x.ndim == 0 else x
    if isinstance(x, bytes):
        return x.decode("utf-8")
    return str(x)


def _str_list(arr, what: str, op) -> List[str]:
    arr = np.asarray(arr, dtype=object)
    if arr.ndim != 1:
        raise errors.InvalidArgumentError(None, op, "%s must be a vector, got shape %s"
                                          % (what, list(arr.shape)))
    return [_as_str(x) for x in arr]


def _scalar_str(arr, what: str, op) -> str:
    arr = np.asarray(arr, dtype=object)
    if arr.size != 1:
        raise errors.InvalidArgumentError(None, op, "Input %s should be a scalar string, but "
                                          "got shape %s" % (what, list(arr.shape)))
    return _as_str(arr.reshape(()))


def os_error(e: OSError, what: str) -> errors.OpError:
    """The OpError (TF's code for the errno) for a file-system failure."""
    cls = {errno.ENOENT: errors.NotFoundError, errno.EACCES: errors.PermissionDeniedError,
           errno.EPERM: errors.PermissionDeniedError, errno.EEXIST: errors.AlreadyExistsError,
           errno.ENOSPC: errors.ResourceExhaustedError,
           errno.EDQUOT: errors.ResourceExhaustedError}.get(e.errno, errors.UnknownError)
    return cls(None, None, "%s: %s" % (what, e))


def _vector_shape(t, what: str) -> TensorShape:
    s = t.shape
    if s.ndims is not None and s.ndims != 1:
        raise ValueError("Shape must be rank 1 but is rank %d for %s" % (s.ndims, what))
    return s


def _scalar_input(t, what: str) -> None:
    if t.shape.ndims is not None and t.shape.ndims != 0:
        raise ValueError("Shape must be rank 0 but is rank %d for %s" % (t.shape.ndims, what))


# --- SaveV2 ------------------------------------------------------------------------------
def _save_shape(op):
    _scalar_input(op.inputs[0], "prefix")
    n = len(op.inputs) - 3
    for t, what in ((op.inputs[1], "tensor_names"), (op.inputs[2], "shape_and_slices")):
        s = _vector_shape(t, what)
        if s.ndims == 1 and s.as_list()[0] is not None and s.as_list()[0] != n:
            raise ValueError("Dimension 0 in both shapes must be equal, but are %d and %d "
                             "(%s has %d names for %d tensors)"
                             % (s.as_list()[0], n, what, s.as_list()[0], n))
    return []


register_op("SaveV2", inputs=["prefix: string", "tensor_names: string",
                              "shape_and_slices: string", "tensors: dtypes"],
            attrs={"dtypes": TypeListAttr()}, shape=_save_shape, stateful=True)


def _save_entries(ctx, tensor_names, shape_and_slices, tensors, dtypes) -> List[tuple]:
    """(name, slice spec, array, dtype) of each tensor a save op writes, its inputs
    checked; `shape_and_slices` None: every tensor whole."""
    names = _str_list(tensor_names, "tensor_names", ctx.op)
    specs = [""] * len(names) if shape_and_slices is None else \
        _str_list(shape_and_slices, "shape_and_slices", ctx.op)
    if not (len(names) == len(specs) == len(tensors)):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Got %d tensor names, %d shape_and_slices and %d tensors; they must "
            "be equal in number" % (len(names), len(specs), len(tensors)))
    entries = []
    for name, spec, value, dt in zip(names, specs, tensors, dtypes):
        try:
            _fmt.parse_shape_and_slice(spec)
        except ValueError as e:
            raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None
        entries.append((name, spec, np.asarray(value), _dt.as_dtype(dt)))
    return entries


@kernel("SaveV2", cheap=False)
def _save_v2_kernel(ctx, prefix, tensor_names, shape_and_slices, *tensors):
    prefix = _scalar_str(prefix, "prefix", ctx.op)
    try:
        fmt = _bundle.write_format(ctx.attrs)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None
    entries = _save_entries(ctx, tensor_names, shape_and_slices, tensors, ctx.attrs["dtypes"])
    try:
        if fmt == _bundle.BUNDLE_FORMAT:
            _bundle.write(prefix, entries)
        else:
            _fmt.write(prefix, entries)
    except OSError as e:
        raise os_error(e, "Failed to write checkpoint %s" % prefix) from None
    return []


not_differentiable("SaveV2")


def save_v2(prefix, tensor_names, shape_and_slices, tensors,
            name: Optional[str] = None, checkpoint_format: Optional[str] = None):
    """Saves `tensors` under `tensor_names` to the checkpoint `prefix` (TF raw op SaveV2).

    Args:
      prefix: string scalar, the checkpoint prefix.
      tensor_names: string vector [N], the names in the checkpoint.
      shape_and_slices: string vector [N]; "" saves a whole tensor, else TF's slice spec.
      tensors: N tensors of any saveable dtype.
      name: name of the op.
      checkpoint_format: None or "tensor_bundle" writes TF's V2 bundle; "tensorweave"
        tensorweave's earlier format (kept as the op's attr `_checkpoint_format`, which
        TF ignores).

    Returns:
      The SaveV2 Operation.
    """
    attrs = {}
    if checkpoint_format is not None:
        attrs[_bundle.FORMAT_ATTR] = checkpoint_format
        _bundle.write_format(attrs)
    return apply_op("SaveV2", [prefix, tensor_names, shape_and_slices, list(tensors)],
                    attrs, name=name or "SaveV2")


# --- RestoreV2 ---------------------------------------------------------------------------
def _restore_shape(op):
    _scalar_input(op.inputs[0], "prefix")
    n = len(op._get_attr("dtypes"))
    for t, what in ((op.inputs[1], "tensor_names"), (op.inputs[2], "shape_and_slices")):
        s = _vector_shape(t, what)
        if s.ndims == 1 and s.as_list()[0] is not None and s.as_list()[0] != n:
            raise ValueError("Dimension 0 in both shapes must be equal, but are %d and %d"
                             % (s.as_list()[0], n))
    specs = tensor_util.constant_value(op.inputs[2])
    if specs is None:
        return [unknown_shape()] * n
    shapes = []
    for spec in np.asarray(specs, dtype=object).reshape(-1):
        full, extents = _fmt.parse_shape_and_slice(_as_str(spec))
        shapes.append(unknown_shape() if full is None else TensorShape([e[1] for e in extents]))
    return shapes


register_op("RestoreV2", inputs=["prefix: string", "tensor_names: string",
                                 "shape_and_slices: string"],
            outputs=["tensors: dtypes"], attrs={"dtypes": TypeListAttr()},
            shape=_restore_shape, stateful=True)


@kernel("RestoreV2", cheap=False)
def _restore_v2_kernel(ctx, prefix, tensor_names, shape_and_slices):
    prefix = _scalar_str(prefix, "prefix", ctx.op)
    names = _str_list(tensor_names, "tensor_names", ctx.op)
    specs = _str_list(shape_and_slices, "shape_and_slices", ctx.op)
    dtypes = ctx.attrs["dtypes"]
    if not (len(names) == len(specs) == len(dtypes)):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Got %d tensor names, %d shape_and_slices and %d dtypes; they must "
            "be equal in number" % (len(names), len(specs), len(dtypes)))
    reader = open_reader(prefix)
    # Check every name and dtype before reading any data: a bad request fails fast.
    for name, dt in zip(names, dtypes):
        if not reader.has_tensor(name):
            raise errors.NotFoundError(None, ctx.op, reader.not_found_message(name))
        have = reader.dtype(name)
        if have is not _dt.as_dtype(dt):
            raise errors.InvalidArgumentError(
                None, ctx.op, "tensor_name = %s; expected dtype %s does not equal original "
                "dtype %s" % (name, _dt.as_dtype(dt).name, have.name))
    out = []
    for name, spec in zip(names, specs):
        try:
            out.append(reader.read(name, spec))
        except ValueError as e:
            raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None
        except OSError as e:
            raise os_error(e, "Failed to read checkpoint %s" % prefix) from None
    return out[0] if len(out) == 1 else out  # the executor takes one-output results bare


not_differentiable("RestoreV2")


def open_reader(prefix: str) -> _fmt.CheckpointReader:
    """A reader of the checkpoint `prefix`, in either format (NotFoundError if there is
    none)."""
    try:
        return _bundle.open_checkpoint(prefix)
    except OSError as e:
        raise os_error(e, "Failed to open checkpoint %s" % prefix) from None


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes,
               name: Optional[str] = None) -> List:
    """Reads tensors from the checkpoint `prefix` (TF raw op RestoreV2).

    Args:
      prefix: string scalar, the checkpoint prefix.
      tensor_names: string vector [N], the names to read.
      shape_and_slices: string vector [N]; "" reads a whole tensor, else a slice.
      dtypes: the N dtypes expected.
      name: name of the op.

    Returns:
      The list of N restored Tensors.

    Raises (at run time):
      NotFoundError: no checkpoint at `prefix`, or a name it does not hold (close
        matches are listed).
      InvalidArgumentError: a dtype differs from the stored one.
      DataLossError: the stored bytes fail their checksum.
    """
    dtypes = [_dt.as_dtype(d) for d in dtypes]
    return list(apply_op("RestoreV2", [prefix, tensor_names, shape_and_slices],
                         {"dtypes": dtypes}, name=name or "RestoreV2").outputs)


# --- MergeV2Checkpoints ------------------------------------------------------------------
register_op("MergeV2Checkpoints", inputs=["checkpoint_prefixes: string",
                                          "destination_prefix: string"],
            attrs={"delete_old_dirs": True, "allow_missing_files": False},
            shape=lambda op: [], stateful=True)


@kernel("MergeV2Checkpoints", cheap=False)
def _merge_kernel(ctx, checkpoint_prefixes, destination_prefix):
    sources = [_as_str(x) for x in np.asarray(checkpoint_prefixes, dtype=object).reshape(-1)]
    dest = _scalar_str(destination_prefix, "destination_prefix", ctx.op)
    if ctx.attrs["allow_missing_files"]:
        sources = [p for p in sources if _fmt.checkpoint_exists(p)]
    try:
        _bundle.merge(sources, dest, delete_old_dirs=ctx.attrs["delete_old_dirs"])
    except OSError as e:
        raise os_error(e, "Failed to merge checkpoints into %s" % dest) from None
    return []


not_differentiable("MergeV2Checkpoints")


def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix,
                         delete_old_dirs: bool = True, allow_missing_files: bool = False,
                         name: Optional[str] = None):
    """Merges one-shard checkpoints into one sharded checkpoint (TF raw op)."""
    return apply_op("MergeV2Checkpoints", [checkpoint_prefixes, destination_prefix],
                    {"delete_old_dirs": delete_old_dirs,
                     "allow_missing_files": allow_missing_files},
                    name=name or "MergeV2Checkpoints")


# --- ShardedFilename ---------------------------------------------------------------------
register_op("ShardedFilename", inputs=["basename: string", "shard: int32",
                                       "num_shards: int32"],
            outputs=["filename: string"], shape=lambda op: TensorShape([]))


@kernel("ShardedFilename")
def _sharded_filename_kernel(ctx, basename, shard, num_shards):
    name = _fmt.sharded_filename(_scalar_str(basename, "basename", ctx.op), int(shard),
                                 int(num_shards))
    return np.array(name.encode(), dtype=object)


not_differentiable("ShardedFilename")


def sharded_filename(basename, shard, num_shards, name: Optional[str] = None):
    """"<basename>-<shard:05d>-of-<num_shards:05d>" (TF raw op ShardedFilename)."""
    return apply_op("ShardedFilename", [basename, shard, num_shards],
                    name=name or "ShardedFilename").outputs[0]


# --- TF1's V1 format: SaveSlices, Save, ShardedFilespec ----------------------------------
def _save_slices_shape(op):
    _scalar_input(op.inputs[0], "filename")
    return []


register_op("SaveSlices", inputs=["filename: string", "tensor_names: string",
                                  "shapes_and_slices: string", "data: T"],
            attrs={"T": TypeListAttr()}, shape=_save_slices_shape, stateful=True)
register_op("Save", inputs=["filename: string", "tensor_names: string", "data: T"],
            attrs={"T": TypeListAttr()}, shape=_save_slices_shape, stateful=True)


def _write_v1(ctx, filename, entries) -> list:
    from tensorweave.ops.io import tensor_slice_v1
    path = _scalar_str(filename, "filename", ctx.op)
    try:
        tensor_slice_v1.write(path, entries)
    except errors.OpError as e:
        raise type(e)(None, ctx.op, e.message) from None
    except OSError as e:
        raise os_error(e, "Failed to write checkpoint %s" % path) from None
    return []


@kernel("SaveSlices", cheap=False)
def _save_slices_kernel(ctx, filename, tensor_names, shapes_and_slices, *data):
    return _write_v1(ctx, filename, _save_entries(ctx, tensor_names, shapes_and_slices, data,
                                                  ctx.attrs["T"]))


@kernel("Save", cheap=False)
def _save_kernel(ctx, filename, tensor_names, *data):
    return _write_v1(ctx, filename, _save_entries(ctx, tensor_names, None, data,
                                                  ctx.attrs["T"]))


not_differentiable("SaveSlices")
not_differentiable("Save")


def save_slices(filename, tensor_names, shapes_and_slices, data,
                name: Optional[str] = None):
    """Saves `data` to the V1 checkpoint file `filename` (TF raw op SaveSlices)."""
    return apply_op("SaveSlices", [filename, tensor_names, shapes_and_slices, list(data)],
                    {"T": [t.dtype for t in data]}, name=name or "SaveSlices")


register_op("ShardedFilespec", inputs=["basename: string", "num_shards: int32"],
            outputs=["filename: string"], shape=lambda op: TensorShape([]))


@kernel("ShardedFilespec")
def _sharded_filespec_kernel(ctx, basename, num_shards):
    spec = "%s-?????-of-%05d" % (_scalar_str(basename, "basename", ctx.op), int(num_shards))
    return np.array(spec.encode(), dtype=object)


not_differentiable("ShardedFilespec")


def sharded_filespec(basename, num_shards, name: Optional[str] = None):
    """"<basename>-?????-of-<num_shards:05d>", the pattern of a sharded V1 checkpoint's
    files (TF raw op ShardedFilespec)."""
    return apply_op("ShardedFilespec", [basename, num_shards],
                    name=name or "ShardedFilespec").outputs[0]
