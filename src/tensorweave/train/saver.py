"""tf.train.Saver: user-level checkpointing as a subgraph (OSDI §4.3).

The constructor builds, once, under the name scope "save":

    save/filename/input (Const "model") -> save/filename -> save/Const   (fed a prefix)
    save/SaveV2(save/Const, tensor_names, shape_and_slices, <variable reads>)
    save/control_dependency = Identity(save/Const) after save/SaveV2      (fetched)
    save/RestoreV2(save/Const, ...) -> save/AssignVariableOp* -> save/restore_all

"Each Variable in a task is connected to the same Save operation, with one Save per
task": with `sharded=True` there is one SaveV2 per device holding variables, each writing
a temporary one-shard checkpoint, then MergeV2Checkpoints makes them one checkpoint with
a data file per device. `save()` feeds the prefix and fetches save_tensor_name;
`restore()` feeds it and runs restore_op_name. The SaverDef names these three, so a
graph imported from a MetaGraphDef is saved and restored by the same ops.

A restore is all or nothing: every tensor is read (names, dtypes, checksums checked)
before any variable is assigned, and `restore()` checks the stored shapes against the
variables before running the restore ops, so a failed restore leaves variables intact.
"""
from __future__ import annotations

import collections
import logging
import numbers
import os
import time
from typing import Dict, List, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.train.meta_graph import SaverDef
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.io import checkpoint_format as _fmt
from tensorweave.ops.io import tensor_bundle as _bundle
from tensorweave.train import checkpoint_management as _cm
from tensorweave.train import checkpoint_utils as _cu

_log = logging.getLogger("tensorflow")

_NOT_FOUND_PREFIX = (
    "Restoring from checkpoint failed. This is most likely due to a Variable name or other "
    "graph key that is missing from the checkpoint. Please ensure that you have not "
    "altered the graph expected based on the checkpoint. Original error:\n\n")
_MISMATCH_PREFIX = (
    "Restoring from checkpoint failed. This is most likely due to a mismatch between the "
    "current graph and the graph from the checkpoint. Please ensure that you have not "
    "altered the graph expected based on the checkpoint. Original error:\n\n")


def _now() -> float:
    return time.time()


# --- what gets saved ---------------------------------------------------------------------
class _Spec:
    """One tensor to save: its value tensor, checkpoint name, slice spec and dtype."""

    def __init__(self, tensor, name: str, slice_spec: str = ""):
        self.tensor = tensor
        self.name = name
        self.slice_spec = slice_spec
        self.dtype = tensor.dtype


class _VariableSaveable:
    """A Variable saved under `name`: its read is saved, an assign restores it. A shard
    of a partitioned variable is saved as the slice `slice_spec` of tensor `name`."""

    def __init__(self, var, name: str, slice_spec: str = ""):
        self.var = var
        self.name = name
        self.slice_spec = slice_spec
        self.op = var.op
        self.device = var.device
        self.specs = [_Spec(var, name, slice_spec)]

    def build_specs(self) -> None:
        from tensorweave.ops.state import resource_variable_ops as rv
        with _graph.get_default_graph().device(self.var.device):
            self.specs = [_Spec(rv.read_variable_op(self.var.handle, self.var.dtype,
                                                    name="Read/ReadVariableOp"), self.name,
                                self.slice_spec)]

    def restore(self, restored_tensors, restored_shapes):
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.state import resource_variable_ops as rv
        value = restored_tensors[0]
        if restored_shapes is not None:
            value = array_ops.reshape(value, restored_shapes[0])
        validate = restored_shapes is None and self.var.shape.is_fully_defined()
        copies = getattr(self.var, "_mirrored_copies", None)
        if copies:  # a tf.distribute mirrored variable: every copy gets the value
            from tensorweave.ops.control_flow import structure
            return structure.group(*[rv.assign_variable_op(
                c.handle, value, validate_shape=validate, name="AssignVariableOp")
                for c in copies])
        return rv.assign_variable_op(self.var.handle, value, validate_shape=validate,
                                     name="AssignVariableOp")


class _ObjectSaveable:
    """A SAVEABLE_OBJECTS item (TF's SaveableObject protocol: `name`, `specs` with
    `tensor`/`name`/`slice_spec`, `restore(restored_tensors, restored_shapes)`)."""

    def __init__(self, obj, name: str):
        self.obj = obj
        self.name = name
        self.op = getattr(obj, "op", None)
        self.device = getattr(obj, "device", "") or ""
        self.specs = []

    def build_specs(self) -> None:
        out = []
        for s in self.obj.specs:
            t = s.tensor() if callable(s.tensor) else s.tensor
            out.append(_Spec(t, s.name, getattr(s, "slice_spec", "") or ""))
        self.specs = out

    def restore(self, restored_tensors, restored_shapes):
        return self.obj.restore(restored_tensors, restored_shapes)


def _slice_pairs(name: Optional[str], shards) -> List[Tuple[str, object, str]]:
    """(name, shard, slice spec) of the shards of one partitioned variable (a
    PartitionedVariable or a list of shards); `name` None: their full name."""
    out = []
    for v in shards:
        info = v._get_save_slice_info() if hasattr(v, "_get_save_slice_info") else None
        if info is None:
            raise ValueError("Slices must all be from the same tensor: %s is not a slice"
                             % (getattr(v, "name", v),))
        if name is None:
            name = info.full_name
        elif out and info.full_name != out[0][1]._get_save_slice_info().full_name:
            raise ValueError("Slices must all be from the same tensor: %s != %s"
                             % (out[0][1]._get_save_slice_info().full_name, info.full_name))
        out.append((name, v, info.spec))
    return out


def _restore_error(e: errors.OpError) -> errors.OpError:
    """`e` of a failed restore, of the same class, its message led by TF's hint."""
    prefix = _NOT_FOUND_PREFIX if isinstance(e, errors.NotFoundError) else _MISMATCH_PREFIX
    return type(e)(None, e.op, prefix + e.message)


def _variable_of(item):
    """The Variable whose handle tensor `item` is ("v:0", which names a TF1 reference
    variable and so may stand for it in a var_list), else `item` itself."""
    from tensorweave.ops.state.variables import _variables_of_handle_ops
    op = getattr(item, "op", None)
    if isinstance(item, _graph.Tensor) and op is not None and op.type == "VarHandleOp":
        return _variables_of_handle_ops(op.graph).get(op, item)
    return item


def _saveables(var_list) -> List:
    """The saveables of `var_list` (list or dict), sorted by name; ValueError on a name
    used twice (the shards of a partitioned variable share its name, each with its slice
    spec)."""
    from tensorweave.ops.state.partitioned_variables import PartitionedVariable
    from tensorweave.ops.state.variables import Variable
    pairs = []   # (name, object, slice spec)
    if isinstance(var_list, dict):
        for name, v in var_list.items():
            if not isinstance(name, str):
                raise TypeError("var_list keys must be strings (checkpoint names), got %r"
                                % (name,))
            v = _variable_of(v)
            if isinstance(v, _graph.Tensor):
                raise TypeError("names_to_saveables must be a dict mapping string names to "
                                "Tensors/Variables. Not a variable: %s" % (v,))
            if isinstance(v, (PartitionedVariable, list, tuple)):
                pairs.extend(_slice_pairs(name, v))
            else:        # one shard named here is saved whole, as TF1 does
                pairs.append((name, v, ""))
    else:
        for v in map(_variable_of, var_list):
            if isinstance(v, PartitionedVariable):
                pairs.extend(_slice_pairs(None, v))
            elif isinstance(v, Variable) and v._get_save_slice_info() is not None:
                info = v._get_save_slice_info()
                pairs.append((info.full_name, v, info.spec))
            elif isinstance(v, Variable):
                pairs.append((v.op.name, v, ""))
            elif hasattr(v, "specs") and hasattr(v, "restore"):
                pairs.append((v.name, v, ""))
            else:
                raise TypeError("Variable to save is not a Variable: %s" % (v,))
    sliced = {name for name, _, spec in pairs if spec}
    if any(name in sliced and not spec for name, _, spec in pairs):
        raise ValueError("Mixing slices and non-slices with the same name: %s"
                         % next(n for n, _, spec in pairs if n in sliced and not spec))
    out, seen, seen_objs = [], set(), set()
    # by name, as TF walks them: a duplicate is reported by its first name in that order
    for name, v, spec in sorted(pairs, key=lambda p: (p[0], p[2])):
        if isinstance(v, Variable):
            s = _VariableSaveable(v, name, spec)
        elif hasattr(v, "specs") and hasattr(v, "restore"):
            s = _ObjectSaveable(v, name)
        else:
            raise TypeError("Variable to save is not a Variable: %s" % (v,))
        if (name, spec) in seen:
            raise ValueError("At least two variables have the same name: %s" % name)
        if id(v) in seen_objs:
            raise ValueError("The same saveable will be restored with two names: %s" % name)
        seen.add((name, spec))
        seen_objs.add(id(v))
        out.append(s)
    return sorted(out, key=lambda s: s.name)


# --- the graph ---------------------------------------------------------------------------
def _string_vector(values: List[str], name: str):
    from tensorweave.ops.array.constant_op import constant
    return constant(list(values), dtype=_dt.string, shape=[len(values)], name=name)


def _add_save(g, filename, saveables, version: int = SaverDef.V2, checkpoint_format=None):
    """The save op of `saveables`: TF's SaveV2, or for the V1 format its SaveSlices
    (named "save", as TF names it)."""
    from tensorweave.ops.io import io_ops
    specs = [s for sv in saveables for s in sv.specs]
    v1 = version == SaverDef.V1
    with g.name_scope("save" if v1 else "SaveV2") as scope:
        names = _string_vector([s.name for s in specs], "tensor_names")
        slices = _string_vector([s.slice_spec for s in specs],
                                "shapes_and_slices" if v1 else "shape_and_slices")
        tensors = [s.tensor for s in specs]
        if v1:
            return io_ops.save_slices(filename, names, slices, tensors, name=scope)
        return io_ops.save_v2(filename, names, slices, tensors, name=scope,
                              checkpoint_format=checkpoint_format)


def _add_restore(g, filename, saveables, reshape: bool, restore_sequentially: bool):
    from tensorweave.ops.io import io_ops
    specs = [s for sv in saveables for s in sv.specs]
    with g.name_scope("RestoreV2") as scope:
        names = _string_vector([s.name for s in specs], "tensor_names")
        slices = _string_vector([s.slice_spec for s in specs], "shape_and_slices")
        restored = io_ops.restore_v2(filename, names, slices, [s.dtype for s in specs],
                                     name=scope)
    assigns, i = [], 0
    for sv in saveables:
        n = len(sv.specs)
        tensors = restored[i:i + n]
        i += n
        shapes = None
        if reshape:
            shapes = [sv.var.shape.as_list() if isinstance(sv, _VariableSaveable)
                      else s.tensor.shape.as_list() for s in sv.specs]
        deps = assigns[-1:] if restore_sequentially else []
        with g.control_dependencies(deps), g.device(sv.device):
            assigns.append(sv.restore(tensors, shapes))
    return assigns


def _device_groups(saveables) -> List[Tuple[str, list]]:
    groups: Dict[str, list] = collections.OrderedDict()
    for sv in saveables:
        groups.setdefault(sv.device or "", []).append(sv)
    return sorted(groups.items())


# --- the Saver ---------------------------------------------------------------------------
@tf_export("train.Saver")
class Saver:
    """Saves and restores variables (TF1 `tf.train.Saver`).

    Args:
      var_list: the variables to save: a list (saved under their op names, "W" for a
        variable named "W:0") or a dict name -> Variable (saved under other names). Default:
        all global variables and SAVEABLE_OBJECTS. The shards of a partitioned variable
        (or the PartitionedVariable, or a dict value listing its shards) are saved as
        slices of one tensor under its full name, so they restore into any other
        partitioning or into one variable of the full shape.
      reshape: allow restoring into a variable of another shape with as many elements.
      sharded: one SaveV2 per device holding variables, merged into one checkpoint.
      max_to_keep: how many recent checkpoints to keep (None or 0: all).
      keep_checkpoint_every_n_hours: additionally keep one checkpoint per this many hours.
      name: name scope of the save/restore ops (default "save").
      restore_sequentially: assign the restored values one after another.
      saver_def: build no ops; use those named by this SaverDef (import_meta_graph).
      builder: not supported (must be None).
      defer_build: build the ops only when `build()` is called.
      allow_empty: with no variables, build a Saver that does nothing instead of raising.
      write_version: None or tf.train.SaverDef.V2: TensorFlow's V2 format (a tensor
        bundle, which real TensorFlow restores), as TF1 writes by default;
        tf.train.SaverDef.V1: TF1's deprecated V1 format (one file named by the prefix;
        ops/io/tensor_slice_v1.py). `restore` reads either, and tensorweave's earlier
        format.
      pad_step_number: name checkpoints "<prefix>-00000100" instead of "<prefix>-100".
      save_relative_paths: write paths relative to the directory in the state file.
      filename: the default prefix when none is fed (TF's; `save` always feeds one).

    Raises:
      ValueError: no variables to save (and not allow_empty), a name used twice.
      TypeError: an entry of var_list is not a Variable.
    """

    def __init__(self, var_list=None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: Optional[int] = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: Optional[str] = None, restore_sequentially: bool = False,
                 saver_def: Optional[SaverDef] = None, builder=None, defer_build: bool = False,
                 allow_empty: bool = False, write_version: Optional[int] = None,
                 pad_step_number: bool = False, save_relative_paths: bool = False,
                 filename: Optional[str] = None):
        if builder is not None:
            raise NotImplementedError("Saver(builder=...) is not supported by tensorweave; "
                                      "the save/restore graph is built from SaveV2/RestoreV2")
        if write_version not in (None, SaverDef.V1, SaverDef.V2):
            raise NotImplementedError("Only checkpoint formats V1 and V2 (write_version=1 "
                                      "or 2) are supported; got write_version=%r"
                                      % (write_version,))
        if write_version == SaverDef.V1:
            _log.warning("Saving in the V1 format is deprecated (as in TensorFlow); "
                         "consider write_version=tf.train.SaverDef.V2")
        if defer_build and var_list is not None:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either "
                             "set defer_build=False or var_list=None.")
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._write_version = SaverDef.V2 if write_version is None else write_version
        self._checkpoint_format = None  # SaveV2's default: TF's V2 bundle
        self.saver_def = saver_def
        self._is_built = False
        self._is_empty = False
        self._graph = _graph.get_default_graph()
        self._last_checkpoints: List[Tuple[str, float]] = []
        self._checkpoints_to_be_deleted: List[Tuple[str, float]] = []
        self._next_checkpoint_time = None
        self._expectations = None
        if saver_def is not None:
            if name:
                self.saver_def = _prefixed_saver_def(saver_def, name)
            self._max_to_keep = saver_def.max_to_keep
            self._keep_checkpoint_every_n_hours = saver_def.keep_checkpoint_every_n_hours
            self._is_built = True
            self._check_saver_def()
        elif not defer_build:
            self.build()
        if self.saver_def is not None:
            self._next_checkpoint_time = (
                _now() + self.saver_def.keep_checkpoint_every_n_hours * 3600)

    # --- building ---------------------------------------------------------------------
    def build(self) -> None:
        """Builds the save/restore ops (once; a no-op when already built)."""
        if self._is_built:
            return
        self._is_built = True
        g = self._graph
        var_list = self._var_list
        if var_list is None:
            var_list = g.get_collection(_graph.GraphKeys.GLOBAL_VARIABLES) + \
                g.get_collection(_graph.GraphKeys.SAVEABLE_OBJECTS)
        if not var_list:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        saveables = _saveables(var_list)
        self.saver_def = self._build_graph(g, saveables)
        self._next_checkpoint_time = (
            _now() + self.saver_def.keep_checkpoint_every_n_hours * 3600)

    def _build_graph(self, g, saveables) -> SaverDef:
        from tensorweave.ops.array.constant_op import constant, placeholder_with_default
        from tensorweave.ops.control_flow.structure import group, with_dependencies
        with g.as_default(), g.name_scope(self._name or "save") as scope:
            with g.name_scope("filename") as fscope:
                default = constant(self._filename or "model", dtype=_dt.string, name="input")
                filename = placeholder_with_default(default, [], name=fscope)
            filename = placeholder_with_default(filename, [], name="Const")
            for sv in saveables:
                sv.build_specs()
            if self._sharded:
                save_tensor, restore_op = self._build_sharded(g, filename, saveables)
            else:
                save = _add_save(g, filename, saveables, self._write_version,
                                 checkpoint_format=self._checkpoint_format)
                save_tensor = with_dependencies([save], filename, name="control_dependency")
                assigns = _add_restore(g, filename, saveables, self._reshape,
                                       self._restore_sequentially)
                restore_op = group(*assigns, name="restore_all")
        del scope
        return SaverDef(filename_tensor_name=filename.name,
                        save_tensor_name=save_tensor.name,
                        restore_op_name=restore_op.name,
                        max_to_keep=self._max_to_keep or 0, sharded=self._sharded,
                        keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
                        version=self._write_version)

    def _build_sharded(self, g, filename, saveables):
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.io import io_ops
        from tensorweave.ops.control_flow.structure import group, identity, with_dependencies
        groups = _device_groups(saveables)
        n = len(groups)
        shard_prefixes, restores = [], []
        for i, (device, svs) in enumerate(groups):
            with g.device(device):
                prefix = io_ops.sharded_filename(filename, i, n)
                save = _add_save(g, prefix, svs, self._write_version,
                                 checkpoint_format=self._checkpoint_format)
                shard_prefixes.append(with_dependencies([save], prefix))
        with g.device(groups[0][0]):
            if self._write_version == SaverDef.V1:
                # V1 shards stay separate files: the checkpoint is their pattern
                with g.control_dependencies(shard_prefixes):
                    save_tensor = io_ops.sharded_filespec(filename, n)
            else:
                merge = io_ops.merge_v2_checkpoints(array_ops.stack(shard_prefixes),
                                                    filename, delete_old_dirs=True)
                # an Identity after the merge: TF names the sharded save tensor
                # save/Identity
                with g.control_dependencies([merge]):
                    save_tensor = identity(filename)
        for device, svs in groups:
            with g.device(device):
                assigns = _add_restore(g, filename, svs, self._reshape,
                                       self._restore_sequentially)
                restores.append(group(*assigns, name="restore_shard"))
        return save_tensor, group(*restores, name="restore_all")

    def _check_saver_def(self) -> None:
        sd = self.saver_def
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            name = getattr(sd, field)
            try:
                self._graph.as_graph_element(name)
            except (KeyError, ValueError) as e:
                raise ValueError("SaverDef.%s names %r, which is not in the graph: %s"
                                 % (field, name, e)) from None

    def as_saver_def(self) -> SaverDef:
        """The SaverDef naming this Saver's ops."""
        return self.saver_def

    def to_proto(self, export_scope: Optional[str] = None) -> Optional[SaverDef]:
        """The SaverDef with `export_scope` removed from its names (None if outside)."""
        if export_scope is None:
            return self.saver_def
        sd = self.saver_def
        fields = {}
        for f in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            name = getattr(sd, f)
            if not name.startswith(export_scope + "/"):
                return None
            fields[f] = name[len(export_scope) + 1:]
        return SaverDef(max_to_keep=sd.max_to_keep, sharded=sd.sharded, version=sd.version,
                        keep_checkpoint_every_n_hours=sd.keep_checkpoint_every_n_hours,
                        **fields)

    @staticmethod
    def from_proto(saver_def: SaverDef, import_scope: Optional[str] = None) -> "Saver":
        return Saver(saver_def=saver_def, name=import_scope)

    # --- bookkeeping of recent checkpoints --------------------------------------------
    @property
    def last_checkpoints(self) -> List[str]:
        """The prefixes of the kept checkpoints, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: List[str]) -> None:
        """Deprecated: use set_last_checkpoints_with_time."""
        if not isinstance(last_checkpoints, list):
            raise TypeError("last_checkpoints must be a list, got %s"
                            % type(last_checkpoints).__name__)
        self._last_checkpoints = [(p, None) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        """Sets the kept checkpoints: a list of (prefix, timestamp)."""
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError("last_checkpoints_with_time must be a list, got %s"
                            % type(last_checkpoints_with_time).__name__)
        self._last_checkpoints = [(p, t) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths: List[str]) -> None:
        """Takes over the checkpoints of `checkpoint_paths` that still exist (with their
        modification times) so max_to_keep applies to them, e.g. after a restart."""
        existing = [p for p in checkpoint_paths if _fmt.checkpoint_exists(p)]
        times = _cm.get_checkpoint_mtimes(existing)
        self.set_last_checkpoints_with_time(list(zip(existing, times)))

    def _record_last_checkpoint(self, path: str) -> None:
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, _now()))
        # one out per save, as TF: a list taken over by recover_last_checkpoints that is
        # longer than max_to_keep shrinks one checkpoint at a time
        if len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        every = self.saver_def.keep_checkpoint_every_n_hours * 3600
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if stamp is not None and self._next_checkpoint_time is not None and \
                    stamp > self._next_checkpoint_time:
                self._next_checkpoint_time += every
                continue
            _cm.remove_checkpoint(path, self.saver_def.version, meta_graph_suffix)

    # --- save -------------------------------------------------------------------------
    def save(self, sess, save_path: str, global_step=None, latest_filename: Optional[str] = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True,
             write_state: bool = True, strip_default_attrs: bool = False,
             save_debug_info: bool = False) -> Optional[str]:
        """Saves the variables to a new checkpoint.

        Args:
          sess: the Session holding the variables.
          save_path: the checkpoint prefix, e.g. "/ckpt/model.ckpt".
          global_step: a number, or a Tensor/Variable fetched from `sess`; appended to
            the prefix ("/ckpt/model.ckpt-100").
          latest_filename: name of the state file (default "checkpoint"), in the same
            directory.
          meta_graph_suffix: suffix of the meta graph file.
          write_meta_graph: also write "<prefix>.<meta_graph_suffix>".
          write_state: update the state file and delete checkpoints beyond max_to_keep.
          strip_default_attrs: omit default-valued attrs from the meta graph.
          save_debug_info: not supported.

        Returns:
          The prefix of the new checkpoint (None if the Saver has nothing to save).

        Raises:
          TypeError: `sess` is not a Session.
          ValueError: the parent directory of `save_path` does not exist, or
            `latest_filename` has a directory part.
          RuntimeError: the Saver was built with defer_build and `build()` not called.
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, numbers.Number):
                global_step = int(sess.run(global_step))
            fmt = "%s-%08d" if self._pad_step_number else "%s-%d"
            checkpoint_file = fmt % (save_path, global_step)
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError("'latest_filename' collides with 'save_path': '%s' and '%s'"
                                 % (latest_filename, save_path))
        if not hasattr(sess, "run") or not hasattr(sess, "graph"):
            raise TypeError("'sess' must be a Session; %s" % (sess,))
        if self._is_empty:
            return None
        save_path_parent = os.path.dirname(save_path)
        from tensorweave.platform import file_io  # local disk, or a URL via fsspec
        if not file_io.parent_dir_usable(save_path_parent or "."):
            # as TF's single-file save: one missing directory level is created (a fresh
            # train_dir), more is an error, as is any for a sharded save or a file in
            # the way
            grand = os.path.dirname(save_path_parent)
            if self._sharded or not save_path_parent or \
                    file_io.exists(save_path_parent) or \
                    not file_io.parent_dir_usable(grand or "."):
                raise ValueError("Parent directory of %s doesn't exist, can't save."
                                 % save_path)
            file_io.mkdir(save_path_parent)
        sd = self.saver_def
        model_checkpoint_path = sess.run(sd.save_tensor_name,
                                         {sd.filename_tensor_name: checkpoint_file})
        if hasattr(model_checkpoint_path, "item"):
            model_checkpoint_path = model_checkpoint_path.item()
        if isinstance(model_checkpoint_path, bytes):
            model_checkpoint_path = model_checkpoint_path.decode("utf-8")
        model_checkpoint_path = str(model_checkpoint_path)
        if write_state:
            self._record_last_checkpoint(model_checkpoint_path)
            _cm.update_checkpoint_state_internal(
                save_path_parent or ".", model_checkpoint_path,
                all_model_checkpoint_paths=self.last_checkpoints,
                latest_filename=latest_filename,
                save_relative_paths=self._save_relative_paths)
            self._maybe_delete_old_checkpoints(meta_graph_suffix)
        if write_meta_graph:
            self.export_meta_graph(_cm.meta_graph_filename(checkpoint_file, meta_graph_suffix),
                                   strip_default_attrs=strip_default_attrs,
                                   save_debug_info=save_debug_info)
        return model_checkpoint_path

    def export_meta_graph(self, filename: Optional[str] = None, collection_list=None,
                          as_text: bool = False, export_scope: Optional[str] = None,
                          clear_devices: bool = False, clear_extraneous_savers: bool = False,
                          strip_default_attrs: bool = False, save_debug_info: bool = False):
        """`tf.train.export_meta_graph` of this Saver's graph, with its SaverDef."""
        from tensorweave.framework import serialize as _ser
        from tensorweave.train import meta_graph
        return meta_graph.export_meta_graph(
            filename=filename, graph_def=_ser.graph_to_graph_def(self._graph, add_shapes=True),
            saver_def=self.saver_def, collection_list=collection_list, as_text=as_text,
            export_scope=export_scope, clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs, save_debug_info=save_debug_info,
            graph=None)

    # --- restore ----------------------------------------------------------------------
    def restore(self, sess, save_path: str) -> None:
        """Restores the variables from the checkpoint `save_path`. All checks (names,
        dtypes, shapes, checksums) pass before any variable changes.

        Raises:
          ValueError: `save_path` is None or not a checkpoint.
          NotFoundError: a variable is missing from the checkpoint (close names listed).
          InvalidArgumentError: a dtype or shape differs (the variable and both named).
          DataLossError: the checkpoint is damaged, or `save_path` names a file or
            directory that is no checkpoint (as TF, which opens it as a TF1 checkpoint).
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not _cm.checkpoint_exists(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: " + save_path)
        _log.info("Restoring parameters from %s", save_path)
        try:  # e.g. "m.index": TF finds a file there, then fails to read a checkpoint
            reader = _bundle.open_checkpoint(save_path)
        except errors.NotFoundError as e:
            raise _restore_error(e) from None
        self._check_against(reader)
        sd = self.saver_def
        try:
            sess.run(sd.restore_op_name, {sd.filename_tensor_name: save_path})
        except (errors.NotFoundError, errors.InvalidArgumentError) as e:
            raise _restore_error(e) from None

    def _check_against(self, reader: _fmt.CheckpointReader) -> None:
        if self._expectations is None:
            self._expectations = _restore_expectations(
                self._graph.as_graph_element(self.saver_def.restore_op_name))
        for key, spec, dtype, shape, var_name, reshaped in self._expectations:
            if not reader.has_tensor(key):
                raise errors.NotFoundError(
                    None, None, _NOT_FOUND_PREFIX + "%s (needed to restore variable '%s')"
                    % (reader.not_found_message(key), var_name))
            have = reader.dtype(key)
            if have is not dtype:
                raise errors.InvalidArgumentError(
                    None, None, _MISMATCH_PREFIX + "tensor_name = %s; expected dtype %s does "
                    "not equal original dtype %s (variable '%s')"
                    % (key, dtype.name, have.name, var_name))
            stored = reader.shape(key)
            if spec:
                full, extents = _fmt.parse_shape_and_slice(spec)
                if full != stored:
                    raise errors.InvalidArgumentError(
                        None, None, _MISMATCH_PREFIX + "tensor_name = %s; shape in "
                        "shape_and_slice spec %s does not match the shape stored in "
                        "checkpoint: %s (variable '%s')"
                        % (key, _shape_text(full), _shape_text(stored), var_name))
                stored = [n for _, n in extents]
            if shape is None or shape.ndims is None:
                continue
            if reshaped:
                ok = shape.is_fully_defined() and shape.num_elements() == int(
                    _prod(stored))
            else:
                ok = shape.is_compatible_with(TensorShape(stored))
            if not ok:
                raise errors.InvalidArgumentError(
                    None, None, _MISMATCH_PREFIX + "Cannot restore variable '%s' of shape %s "
                    "from checkpoint tensor '%s' of shape %s"
                    % (var_name, _shape_text(shape.as_list()), key, _shape_text(stored)))


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _shape_text(dims) -> str:
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


def _prefixed_saver_def(sd: SaverDef, scope: str) -> SaverDef:
    def p(name):
        return "%s/%s" % (scope, name)
    return SaverDef(p(sd.filename_tensor_name), p(sd.save_tensor_name), p(sd.restore_op_name),
                    sd.max_to_keep, sd.sharded, sd.keep_checkpoint_every_n_hours, sd.version)


def _restore_expectations(restore_op) -> List[tuple]:
    """(checkpoint key, slice spec, dtype, variable shape, variable name, reshaped) for
    every variable the restore op assigns, read from the graph (so Savers built from a
    SaverDef are checked too)."""
    restores, seen, stack = [], set(), [restore_op]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "RestoreV2":
            restores.append(op)
            continue
        stack.extend(op.control_inputs)
        stack.extend(t.op for t in op.inputs)
    out = []
    for r in restores:
        keys = tensor_util.constant_value(r.inputs[1])
        specs = tensor_util.constant_value(r.inputs[2])
        if keys is None or specs is None:
            continue
        for i, t in enumerate(r.outputs):
            key, spec = _text(keys.flat[i]), _text(specs.flat[i])
            for var_name, shape, reshaped in _assigned_variables(t):
                out.append((key, spec, t.dtype, shape, var_name, reshaped))
            if not list(_assigned_variables(t)):
                out.append((key, spec, t.dtype, None, key, False))
    return out


def _assigned_variables(t, reshaped: bool = False):
    for c in t.consumers():
        if c.type == "AssignVariableOp" and c.inputs[1] is t:
            h = c.inputs[0]
            while h.op.type == "Identity":
                h = h.op.inputs[0]
            if h.op.type == "VarHandleOp":
                yield h.op.name, h.op._get_attr("shape"), reshaped
        elif c.type in ("Identity", "Reshape") and c.inputs[0] is t:
            yield from _assigned_variables(c.outputs[0], reshaped or c.type == "Reshape")


def _text(x) -> str:
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


# The checkpoint helpers (exported as tf.train.* by checkpoint_management and
# checkpoint_utils), reachable from this module too, as from TF's saver module.
CheckpointState = _cm.CheckpointState
latest_checkpoint = _cm.latest_checkpoint
get_checkpoint_state = _cm.get_checkpoint_state
update_checkpoint_state = _cm.update_checkpoint_state
checkpoint_exists = _cm.checkpoint_exists
list_variables = _cu.list_variables
load_variable = _cu.load_variable
load_checkpoint = _cu.load_checkpoint
NewCheckpointReader = _cu.NewCheckpointReader
