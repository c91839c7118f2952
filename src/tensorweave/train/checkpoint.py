"""`tf.train.Checkpoint` of TF1 graph mode (TF's CheckpointV1): object-based checkpoints.

A Checkpoint's dependencies are the objects given to it by name (variables, Keras layers
and models, optimizers, nested Checkpoints, lists and dicts of them) and its
'save_counter'; train/object_checkpoint.py turns them into TF's keys and object graph.
`save`/`write` read the values in a session and write a TF V2 bundle. `restore` opens
the checkpoint and returns a status; its values are assigned when the status's
`run_restore_ops` or `initialize_or_restore` runs, matching the checkpoint's object graph
against the objects that exist *then*, so objects made after `restore` (slots made by
`minimize`, a model built later) are restored too, as TF's deferred restoration does in
graph mode.
"""
from __future__ import annotations

import collections
import os
from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.train import object_checkpoint as _oc


def _session_or_default(session, what: str):
    """`session`, else the default session.

    Raises:
      RuntimeError: neither.
    """
    from tensorweave.runtime.session import get_default_session
    session = session or get_default_session()
    if session is None:
        raise RuntimeError("Unable to %s in graph mode without a default session. Please "
                           "use `with tf.Session():` to create a session." % what)
    return session


@tf_export("train.CheckpointOptions")
class CheckpointOptions:
    """Options of a checkpoint save or restore (TF's `tf.train.CheckpointOptions`).

    Every save here is synchronous and local to the session's process, so the async and
    I/O-device options are kept for the program to read but change nothing.
    """

    def __init__(self, experimental_io_device: Optional[str] = None,
                 experimental_enable_async_checkpoint: bool = False,
                 experimental_write_callbacks=None, enable_async: bool = False,
                 experimental_skip_slot_variables: bool = False,
                 experimental_sharding_callback=None):
        self.experimental_io_device = experimental_io_device
        self.enable_async = experimental_enable_async_checkpoint or enable_async
        self.experimental_enable_async_checkpoint = self.enable_async
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_skip_slot_variables = experimental_skip_slot_variables
        self.experimental_sharding_callback = experimental_sharding_callback


@tf_export("train.Checkpoint")
class CheckpointV1:
    """Groups objects to save and restore together, by name (TF1's tf.train.Checkpoint).

        ckpt = tf.train.Checkpoint(step=global_step, optimizer=opt, model=model)
        status = ckpt.restore(tf.train.latest_checkpoint(directory))
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            ...
            ckpt.save(os.path.join(directory, "ckpt"))   # "ckpt-1", "ckpt-2", ...

    Raises:
      ValueError: a keyword value that is not trackable.
    """

    def __init__(self, **kwargs):
        object.__setattr__(self, "_dependencies", collections.OrderedDict())
        self._save_counter = None
        self._save_assign_op = None
        for name, value in sorted(kwargs.items()):
            if not _oc.is_trackable(value):
                raise ValueError(
                    "`Checkpoint` was expecting a trackable object (an object derived from "
                    "`Trackable`), got %s. If you believe this object should be trackable "
                    "(i.e. it is part of the TensorFlow Python API and manages state), "
                    "please open an issue." % (value,))
            setattr(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        super().__setattr__(name, value)
        if name.startswith("_"):
            return
        if _oc.is_trackable(value):
            self._dependencies[name] = value
        else:
            self._dependencies.pop(name, None)

    def __delattr__(self, name: str) -> None:
        super().__delattr__(name)
        self._dependencies.pop(name, None)

    def _checkpoint_dependencies(self):
        """(name, object) of what this checkpoint saves, in the order they were added."""
        return list(self._dependencies.items())

    @property
    def save_counter(self):
        """The int64 variable counting `save` calls (made on first use, in the default
        graph, as the dependency 'save_counter')."""
        self._maybe_create_save_counter()
        return self._save_counter

    def _maybe_create_save_counter(self) -> None:
        if self._save_counter is not None:
            return
        from tensorweave.ops.state.variables import Variable
        g = _graph.get_default_graph()
        with g.control_dependencies(None), g.name_scope(None), g.device("/cpu:0"):
            counter = Variable(0, dtype=_dt.int64, trainable=False, name="save_counter",
                               use_resource=True)
        self._save_counter = counter
        self._dependencies["save_counter"] = counter

    def write(self, file_prefix, session=None, options: Optional[CheckpointOptions] = None
              ) -> str:
        """Writes a checkpoint at `file_prefix` (no counter, no state file).

        Returns:
          `file_prefix`.

        Raises:
          RuntimeError: no session given and no default session.
        """
        file_prefix = os.fspath(file_prefix)
        session = _session_or_default(session, 'save checkpoint to "%s"' % file_prefix)
        with session.graph.as_default():
            graph = _oc.ObjectGraph(self)
            values = session.run(graph.variables()) if graph.variables() else []
        from tensorweave.ops.io import tensor_bundle
        from tensorweave.platform import file_io
        directory = os.path.dirname(file_prefix)
        if directory:
            file_io.makedirs(directory)
        tensor_bundle.write(file_prefix, graph.bundle_entries(values))
        return file_prefix

    def save(self, file_prefix, session=None, options: Optional[CheckpointOptions] = None
             ) -> str:
        """Increments `save_counter`, writes '<file_prefix>-<save_counter>' and names it
        in the directory's `checkpoint` state file.

        Returns:
          The checkpoint's prefix.

        Raises:
          RuntimeError: no session given and no default session.
        """
        file_prefix = os.fspath(file_prefix)
        session = _session_or_default(session, 'save checkpoint to "%s"' % file_prefix)
        with session.graph.as_default():
            number = session.run(self._save_increment(session))
        path = self.write("%s-%d" % (file_prefix, number), session=session)
        from tensorweave.train import checkpoint_management
        checkpoint_management.update_checkpoint_state_internal(
            os.path.dirname(file_prefix), path, all_model_checkpoint_paths=[path],
            save_relative_paths=True)
        return path

    def _save_increment(self, session):
        """The op adding 1 to `save_counter` (built once); a counter made now is
        initialized in `session`."""
        if self._save_counter is None:
            session.run(self.save_counter.initializer)
        if self._save_assign_op is None:
            counter = self._save_counter
            with counter.graph.colocate_with(counter.op):
                self._save_assign_op = counter.assign_add(1, read_value=True)
        return self._save_assign_op

    def restore(self, save_path):
        """Opens the checkpoint `save_path` for restoring into these objects.

        Returns:
          A CheckpointLoadStatus (the values are assigned by its `run_restore_ops` or
          `initialize_or_restore`); for `save_path=None` an InitializationOnlyStatus;
          for a checkpoint of `tf.train.Saver` a NameBasedSaverStatus.

        Raises:
          NotFoundError: no checkpoint at `save_path`.
        """
        if save_path is None:
            self._maybe_create_save_counter()
            return InitializationOnlyStatus(self)
        from tensorweave.ops.io import tensor_bundle
        save_path = os.fspath(save_path)
        reader = tensor_bundle.open_checkpoint(save_path)
        self._maybe_create_save_counter()
        if not reader.has_tensor(_oc.OBJECT_GRAPH_KEY):
            return NameBasedSaverStatus(self, reader)
        proto = _oc.parse_proto(bytes(reader.read(_oc.OBJECT_GRAPH_KEY).item()))
        return CheckpointLoadStatus(self, reader, proto)


def _walk(root, session=None) -> _oc.ObjectGraph:
    """The object graph of `root`, walked in the session's graph (a V1 optimizer's
    non-slot variables are per graph)."""
    if session is None:
        return _oc.ObjectGraph(root)
    with session.graph.as_default():
        return _oc.ObjectGraph(root)


def _initialize(session, variables) -> None:
    """Runs the initializers of `variables` (none: no run)."""
    if variables:
        session.run([v.initializer for v in variables])


class CheckpointLoadStatus:
    """What `Checkpoint.restore` returns for an object-based checkpoint: checks of how
    the checkpoint matched the program's objects, and the runs that assign its values.

    Fields:
      root: the Checkpoint restored into.
      reader: the checkpoint's reader.
      proto: its TrackableObjectGraph.
      expect_partial_set: whether `expect_partial` was called.
    """

    def __init__(self, root, reader, proto):
        self.root = root
        self.reader = reader
        self.proto = proto
        self.expect_partial_set = False

    def _bind(self, session=None):
        graph = _walk(self.root, session)
        return graph, _oc.match(graph, self.proto)

    def assert_consumed(self):
        """Checks that every value of the checkpoint has an object and every variable of
        the program a value.

        Raises:
          AssertionError: something unmatched.
        """
        self.assert_existing_objects_matched()
        graph, bound = self._bind()
        names = _oc.node_names(self.proto)
        for proto_id, node in enumerate(self.proto.nodes):
            if node.attributes and proto_id not in bound:
                raise AssertionError("Unresolved object in checkpoint %s: %s"
                                     % (names.get(proto_id), node))
        unused = ["%s (%s): %s" % (names.get(p), graph.nodes[n],
                                   [a.name for a in self.proto.nodes[p].attributes])
                  for p, n in sorted(bound.items())
                  if self.proto.nodes[p].attributes and not _oc.is_variable(graph.nodes[n])]
        if unused:
            raise AssertionError("Unused attributes in these objects (the attributes exist "
                                 "in the checkpoint but were not restored):\n"
                                 + "\n".join(unused))
        return self

    def assert_existing_objects_matched(self):
        """Checks that every variable of the program has a value in the checkpoint.

        Raises:
          AssertionError: some have none.
        """
        unmatched = self._unmatched_variables()
        if unmatched:
            shown = unmatched[:10]
            raise AssertionError(
                "Found %d Python objects that were not bound to checkpointed values, likely "
                "due to changes in the Python program. Showing %d of %d unmatched objects: "
                "%s" % (len(unmatched), len(shown), len(unmatched), shown))
        return self

    def _unmatched_variables(self) -> List:
        graph, bound = self._bind()
        matched = set(bound.values())
        return [obj for node_id, obj in enumerate(graph.nodes)
                if _oc.is_variable(obj) and node_id not in matched]

    def assert_nontrivial_match(self):
        """Checks that some object other than the root matched the checkpoint.

        Raises:
          AssertionError: only the root matched.
        """
        _, bound = self._bind()
        if len(bound) > 1:
            return self
        unmatched = self._unmatched_variables()
        if unmatched:
            raise AssertionError(
                "Nothing except the root object matched a checkpointed value. Typically "
                "this means that the checkpoint does not match the Python program. The "
                "following objects have no matching checkpointed value: %s" % unmatched)
        raise AssertionError("Nothing to load. No dependencies have been added to %s yet."
                             % self.root)

    def expect_partial(self):
        """Silences the warnings about checkpoint values left unused."""
        self.expect_partial_set = True
        return self

    def run_restore_ops(self, session=None) -> None:
        """Assigns the checkpoint's values to the variables that match it now.

        Raises:
          RuntimeError: no session given and no default session.
          InvalidArgumentError: a value of another dtype or shape than its variable.
        """
        session = _session_or_default(session, "restore a checkpoint")
        self._restore(session)

    def _restore(self, session) -> set:
        """Assigns the matched values; returns the ids of the variables assigned."""
        graph, bound = self._bind(session)
        pairs = []
        for proto_id, node_id in sorted(bound.items()):
            variable = graph.nodes[node_id]
            for attribute in self.proto.nodes[proto_id].attributes:
                if attribute.name == "VARIABLE_VALUE" and _oc.is_variable(variable):
                    pairs.append((variable, self._value(attribute.checkpoint_key, variable)))
        _oc.assign_values(session, pairs)
        return {id(v) for v, _ in pairs}

    def _value(self, key: str, variable):
        """The checkpoint's value of `key`, checked against `variable` as the restore
        kernel checks it."""
        if not self.reader.has_tensor(key):
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint" % key)
        stored = self.reader.dtype(key)
        wanted = variable.dtype.base_dtype
        if stored != wanted:
            raise errors.InvalidArgumentError(
                None, None, "tensor_name = %s; expected dtype %s does not equal original "
                "dtype %s" % (key, _dt.type_string(wanted), _dt.type_string(stored)))
        value = self.reader.read(key)
        if not variable.shape.is_compatible_with(value.shape):
            def dims(shape):
                return ",".join(str(d) for d in shape)
            raise errors.InvalidArgumentError(
                None, None, "Assign requires shapes of both tensors to match. lhs shape= "
                "[%s] rhs shape= [%s] (restoring %s)"
                % (dims(variable.shape.as_list()), dims(value.shape), key))
        return value

    def initialize_or_restore(self, session=None) -> None:
        """Restores the variables that match the checkpoint and initializes the rest.

        Raises:
          RuntimeError: no session given and no default session.
        """
        session = _session_or_default(session, "restore a checkpoint")
        restored = self._restore(session)
        graph = _walk(self.root, session)
        _initialize(session, [v for v in graph.variables() if id(v) not in restored])


class InitializationOnlyStatus:
    """What `Checkpoint.restore(None)` returns: there is nothing to restore, and
    `initialize_or_restore` initializes every variable of the checkpoint's objects."""

    _NOTHING = "No checkpoint specified (save_path=None); nothing is being restored."

    def __init__(self, root):
        self.root = root

    def assert_consumed(self):
        """Raises AssertionError: nothing is restored."""
        raise AssertionError(self._NOTHING)

    def assert_existing_objects_matched(self):
        """Raises AssertionError: nothing is restored."""
        raise AssertionError(self._NOTHING)

    def assert_nontrivial_match(self):
        """Raises AssertionError: nothing is restored."""
        raise AssertionError(self._NOTHING)

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """Raises AssertionError: there are no restore ops (use initialize_or_restore)."""
        raise AssertionError("No checkpoint specified, so no restore ops are available "
                             "(save_path=None to Saver.restore).")

    def initialize_or_restore(self, session=None) -> None:
        """Runs the initializers of every variable of the checkpoint's objects.

        Raises:
          RuntimeError: no session given and no default session.
        """
        session = _session_or_default(session, "initialize variables")
        _initialize(session, _walk(self.root, session).variables())


class NameBasedSaverStatus:
    """What `Checkpoint.restore` returns for a checkpoint written by `tf.train.Saver`
    (no object graph): each variable is restored from the value saved under its own
    name, as the Saver names it.

    Fields:
      root: the Checkpoint restored into.
      reader: the checkpoint's reader.
      restored: ids of the variables restored by the last run.
    """

    def __init__(self, root, reader):
        self.root = root
        self.reader = reader
        self.restored: set = set()

    def _missing(self) -> List:
        """The variables without a value under their name; a Saver never saved the
        save_counter, so it may stay unrestored (TF restores it optionally)."""
        counter = self.root._save_counter
        return [v for v in _walk(self.root).variables()
                if not self.reader.has_tensor(v.op.name) and v is not counter]

    def assert_consumed(self):
        """Checks that every variable has a value under its name and was restored.

        Raises:
          AssertionError: one has none, or `run_restore_ops` has not run.
        """
        missing = self._missing()
        if missing:
            raise AssertionError("Some objects had attributes which were not restored: %s"
                                 % "".join("\n    %s: ['VARIABLE_VALUE']" % v
                                           for v in missing))
        for variable in _walk(self.root).variables():
            if id(variable) not in self.restored and variable is not self.root._save_counter:
                raise AssertionError("Object not restored: %s" % self.root)
        return self

    def assert_existing_objects_matched(self):
        """As `assert_consumed` (a name-based checkpoint has no objects to compare)."""
        return self.assert_consumed()

    def assert_nontrivial_match(self):
        """As `assert_consumed`."""
        return self.assert_consumed()

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None) -> None:
        """Assigns each variable the value saved under its name (those without one keep
        theirs).

        Raises:
          RuntimeError: no session given and no default session.
        """
        session = _session_or_default(session, "restore a checkpoint")
        pairs = [(v, self.reader.read(v.op.name)) for v in _walk(self.root, session)
                 .variables() if self.reader.has_tensor(v.op.name)]
        _oc.assign_values(session, pairs)
        self.restored |= {id(v) for v, _ in pairs}

    def initialize_or_restore(self, session=None) -> None:
        """Runs the initializers, then `run_restore_ops`.

        Raises:
          RuntimeError: no session given and no default session.
        """
        session = _session_or_default(session, "restore a checkpoint")
        _initialize(session, _walk(self.root, session).variables())
        self.run_restore_ops(session)
