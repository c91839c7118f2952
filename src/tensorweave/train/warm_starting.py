"""Initializing variables from a checkpoint: tf.train.init_from_checkpoint, warm_start
and VocabInfo.

init_from_checkpoint replaces a variable's initializer by an assignment of the tensor
read (RestoreV2) from the checkpoint, so the usual `global_variables_initializer()`
(created afterwards) loads the checkpoint's values; warm_start does the same, and for
a variable with a VocabInfo assigns the checkpoint tensor remapped to the new vocabulary
(vocab_remapping).
"""
from __future__ import annotations

import collections

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys
from tensorweave.platform import tf_logging as logging


def _is_variable(obj) -> bool:
    from tensorweave.ops.state.variables import Variable
    return isinstance(obj, Variable)


def _store_variables() -> dict:
    from tensorweave.ops.state.variable_scope import _get_default_variable_store
    return _get_default_variable_store()._vars


def _replace_initializer(variable, build_value) -> None:
    """Makes `variable`'s initializer assign it the Tensor `build_value()` returns
    (built on the CPU of the variable's device, where its checkpoint read runs)."""
    from tensorweave.ops.state import resource_variable_ops as rv
    g = variable.graph
    with g.as_default(), g.device(variable.device), g.device("/cpu:0"):
        value = build_value()
        value.set_shape(variable.shape)
        init_op = rv.assign_variable_op(variable.handle, value, name="AssignVariableOp")
    variable._initializer_op = init_op
    variable._initial_value = value


def _set_checkpoint_initializer(variable, ckpt_file: str, tensor_name: str,
                                slice_spec: str = "") -> None:
    """Makes `variable`'s initializer assign it the checkpoint's `tensor_name` (the slice
    `slice_spec` of it, for a shard of a partitioned variable)."""
    from tensorweave.ops.array.constant_op import constant
    from tensorweave.ops.io.io_ops import restore_v2

    def restored():
        return restore_v2(constant(ckpt_file), constant([tensor_name]),
                          constant([slice_spec]), [variable.dtype.base_dtype],
                          name="checkpoint_initializer")[0]
    _replace_initializer(variable, restored)


def _partitioned_shards(name: str, store_vars: dict):
    """The shards "<name>/part_<i>" of partitioned variable `name` in the store, or
    None."""
    shards = []
    while "%s/part_%d" % (name, len(shards)) in store_vars:
        shards.append(store_vars["%s/part_%d" % (name, len(shards))])
    return shards or None


def _init_one(variable, ckpt_file, ckpt_dir_or_file, tensor_name, variable_map) -> None:
    if isinstance(variable, (list, tuple)) or hasattr(variable, "_get_variable_list"):
        shards = list(variable)                       # a partitioned variable
        full_shape = shards[0]._get_save_slice_info().full_shape
        if tensor_name not in variable_map:
            raise ValueError("Tensor %s is not found in %s checkpoint %s"
                             % (tensor_name, ckpt_dir_or_file, variable_map))
        if list(full_shape) != list(variable_map[tensor_name]):
            raise ValueError("Shape of variable %s (%s) doesn't match with shape of tensor "
                             "%s (%s) from checkpoint reader."
                             % (shards[0]._get_save_slice_info().full_name, full_shape,
                                tensor_name, variable_map[tensor_name]))
        for shard in shards:
            _set_checkpoint_initializer(shard, ckpt_file, tensor_name,
                                        shard._get_save_slice_info().spec)
        return
    if tensor_name not in variable_map:
        raise ValueError("Tensor %s is not found in %s checkpoint %s"
                         % (tensor_name, ckpt_dir_or_file, variable_map))
    if not variable.get_shape().is_compatible_with(variable_map[tensor_name]):
        raise ValueError("Shape of variable %s (%s) doesn't match with shape of tensor %s "
                         "(%s) from checkpoint reader."
                         % (variable.name, variable.get_shape(), tensor_name,
                            variable_map[tensor_name]))
    _set_checkpoint_initializer(variable, ckpt_file, tensor_name)
    logging.debug("Initialize variable %s from checkpoint %s with %s", variable.name,
                  ckpt_dir_or_file, tensor_name)


@tf_export("train.init_from_checkpoint")
def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    """Overrides variables' initializers so they load values from a checkpoint.

    `assignment_map` maps checkpoint names to current variables:
      - 'ckpt_scope/var': 'scope/var' (a name of `tf.get_variable`'s store) or a
        Variable: one variable; a partitioned variable (its name, the
        PartitionedVariable or the list of its shards) loads each shard's slice;
      - 'ckpt_scope/': 'scope/': every variable under scope/, from the same relative
        names under ckpt_scope/ ('/' names the root on either side).

    Call it before creating the init op (`global_variables_initializer()`).

    Args:
      ckpt_dir_or_file: a checkpoint prefix, or a directory (its latest checkpoint).
      assignment_map: the dict described above.

    Raises:
      ValueError: a name not in the checkpoint, shapes that differ, or a variable name
        mapped from a scope.
    """
    from tensorweave.train.checkpoint_utils import _checkpoint_prefix, load_checkpoint
    ckpt_file = _checkpoint_prefix(ckpt_dir_or_file)
    variable_map = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    store_vars = _store_variables()
    for tensor_name, current in sorted(assignment_map.items(), key=lambda kv: kv[0]):
        if _is_variable(current):
            _init_one(current, ckpt_file, ckpt_dir_or_file, tensor_name, variable_map)
            continue
        if hasattr(current, "_get_variable_list") or (
                isinstance(current, (list, tuple)) and current and
                all(map(_is_variable, current))):
            _init_one(current, ckpt_file, ckpt_dir_or_file, tensor_name, variable_map)
            continue
        var = store_vars.get(current)
        if var is None and isinstance(current, str):
            var = _partitioned_shards(current, store_vars)
        if var is not None:
            _init_one(var, ckpt_file, ckpt_dir_or_file, tensor_name, variable_map)
            continue
        scopes = current[:current.rindex("/")] if "/" in current else ""
        if not tensor_name.endswith("/"):
            raise ValueError("Assignment map with scope only name {} should map to scope "
                             "only {}. Should be 'scope/': 'other_scope/'."
                             .format(scopes, tensor_name))
        names = {n[:n.index("/part_")] if "/part_" in n else n for n in store_vars
                 if not scopes or n.startswith(scopes + "/")}
        for var_name in sorted(names):
            relative = var_name[len(scopes):]
            if current != "/":
                relative = relative[1:]
            full_name = relative if tensor_name == "/" else tensor_name + relative
            full_name = full_name.rstrip("/")
            if full_name not in variable_map:
                raise ValueError("Tensor %s (%s in %s) is not found in %s checkpoint"
                                 % (full_name, var_name[len(scopes) + 1:], tensor_name,
                                    ckpt_dir_or_file))
            var = store_vars.get(var_name)
            if var is None:
                var = _partitioned_shards(var_name, store_vars)
            _init_one(var, ckpt_file, ckpt_dir_or_file, full_name, variable_map)


@tf_export("train.VocabInfo")
class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How to warm-start an embedding or output layer whose rows (axis=0) or columns
    (axis=1) follow a vocabulary file (see vocab_remapping).

    Args:
      new_vocab: path of the current vocabulary file, one entry a line.
      new_vocab_size: how many of its first entries the variable has rows (columns) for.
      num_oov_buckets: OOV rows (columns) after them, filled by `backup_initializer`.
      old_vocab: path of the vocabulary the checkpoint was trained with.
      old_vocab_size: how many of its first entries to use (-1: all).
      backup_initializer: fills entries the old vocabulary lacks (default zeros).
      axis: 0 (rows follow the vocabulary) or 1 (columns).
    """

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                old_vocab_size=-1, backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError("The only supported values for the axis argument are 0 and 1. "
                             " Provided axis: {}".format(axis))
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


def _warm_start_with_vocab(variable, ckpt_to_initialize_from, tensor_name: str,
                           info: VocabInfo) -> None:
    """Makes the initializer of `variable` (or of each shard of a partitioned one)
    assign the checkpoint's `tensor_name` remapped along `info` (vocab_remapping)."""
    from tensorweave.train.checkpoint_utils import _checkpoint_prefix
    from tensorweave.train.vocab_remapping import remapped_value
    if not (info.new_vocab and info.new_vocab_size and ckpt_to_initialize_from and
            info.old_vocab):
        raise ValueError("Invalid args: Must provide all of [current_vocab_path, "
                         "current_vocab_size, prev_ckpt, prev_vocab_path].")
    shards = list(variable) if isinstance(variable, (list, tuple)) else [variable]
    ckpt_file = _checkpoint_prefix(ckpt_to_initialize_from)
    total_rows = sum(v.get_shape().as_list()[0] for v in shards)
    for shard in shards:
        info_of_slice = shard._get_save_slice_info()
        offset = info_of_slice.var_offset[0] if info_of_slice is not None else 0
        shape = shard.get_shape().as_list()

        def value(shard=shard, offset=offset, shape=shape):
            return remapped_value(ckpt_file, tensor_name, info, shape, offset, total_rows,
                                  shard.dtype.base_dtype, info.backup_initializer)
        _replace_initializer(shard, value)


def _variables_to_warm_start(vars_to_warm_start, var_name_to_vocab_info) -> dict:
    """The variables selected by warm_start's `vars_to_warm_start`, by name: a
    variable's op name, or for the shards of a partitioned variable (a list, in order)
    the full name they are saved under."""
    if isinstance(vars_to_warm_start, str):
        found = _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, (list, tuple)):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = []
            for scope in vars_to_warm_start:
                found += _graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=scope)
        elif all(_is_variable(v) for v in vars_to_warm_start):
            found = list(vars_to_warm_start)
        else:
            raise ValueError("If `vars_to_warm_start` is a list, it must be all `Variable` "
                             "or all `str`.  Given types are {}"
                             .format([type(v) for v in vars_to_warm_start]))
    elif vars_to_warm_start is None:
        found = [v for v in _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
                 if v.op.name in var_name_to_vocab_info]
    else:
        raise ValueError("vars_to_warm_start must be a str, a list or None; got %s"
                         % type(vars_to_warm_start).__name__)
    # the shards of a partitioned variable go together, under the name its checkpoint
    # key has (TF's _get_grouped_variables)
    grouped: dict = {}
    for v in found:
        info = getattr(v, "_save_slice_info", None)
        grouped.setdefault(v.op.name if info is None else info.full_name, []).append(v)
    return {name: vs[0] if len(vs) == 1 and vs[0]._save_slice_info is None else
            sorted(vs, key=lambda v: list(v._save_slice_info.var_offset))
            for name, vs in grouped.items()}


@tf_export("train.warm_start")
def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*",
               var_name_to_vocab_info=None, var_name_to_prev_var_name=None) -> None:
    """Warm-starts variables from a checkpoint (through init_from_checkpoint).

    Args:
      ckpt_to_initialize_from: a checkpoint prefix or directory.
      vars_to_warm_start: a regex over TRAINABLE_VARIABLES, a list of regexes over
        GLOBAL_VARIABLES, a list of Variables, or None (only those of
        var_name_to_vocab_info).
      var_name_to_vocab_info: variable name -> VocabInfo.
      var_name_to_prev_var_name: variable name -> its name in the checkpoint.

    Raises:
      ValueError: entries of the two dicts that name no selected variable, or a
        VocabInfo that does not fit its variable.
    """
    logging.info("Warm-starting from: %s", ckpt_to_initialize_from)
    var_name_to_vocab_info = var_name_to_vocab_info or {}
    var_name_to_prev_var_name = var_name_to_prev_var_name or {}
    selected = _variables_to_warm_start(vars_to_warm_start, var_name_to_vocab_info)
    assignment = {}
    for name, variable in selected.items():
        info = var_name_to_vocab_info.get(name)
        prev_name = var_name_to_prev_var_name.get(name, name)
        if info is not None:
            _warm_start_with_vocab(variable, ckpt_to_initialize_from, prev_name, info)
        else:
            assignment[prev_name] = variable
    unused_prev = set(var_name_to_prev_var_name) - set(selected)
    unused_vocab = set(var_name_to_vocab_info) - set(selected)
    if unused_prev:
        raise ValueError("You provided the following variables in var_name_to_prev_var_name "
                         "that were not used: {0}.  Perhaps you misspelled them?  Here is "
                         "the list of viable variable names: {1}"
                         .format(unused_prev, list(selected)))
    if unused_vocab:
        raise ValueError("You provided the following variables in var_name_to_vocab_info "
                         "that were not used: {0}.  Perhaps you misspelled them?  Here is "
                         "the list of viable variable names: {1}"
                         .format(unused_vocab, list(selected)))
    if assignment:
        init_from_checkpoint(ckpt_to_initialize_from, assignment)
    logging.info("Warm-started %d variables.", len(selected))
