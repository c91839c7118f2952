"""`tf.train.CheckpointManager`: numbered saves of a `tf.train.Checkpoint` in one
directory, keeping the newest `max_to_keep` (and one per `keep_checkpoint_every_n_hours`)
and recording them, with their times, in the directory's `checkpoint` state file
(train/checkpoint_management.py), from which a new manager recovers them.
"""
from __future__ import annotations

import collections
import logging
import os
import time
from typing import List, Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.train import checkpoint_management

_log = logging.getLogger("tensorflow")


def _default_session():
    from tensorweave.runtime.session import get_default_session
    session = get_default_session()
    if session is None:
        raise RuntimeError("CheckpointManager needs a default session in graph mode. "
                           "Please use `with tf.Session():` to create a session.")
    return session


@tf_export("train.CheckpointManager")
class CheckpointManager:
    """Saves a Checkpoint as '<directory>/<checkpoint_name>-<number>' and deletes the
    old ones.

        manager = tf.train.CheckpointManager(ckpt, "/tmp/model", max_to_keep=3)
        status = ckpt.restore(manager.latest_checkpoint)
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            manager.save()   # in the default session

    Args:
      checkpoint: the tf.train.Checkpoint to save.
      directory: where checkpoints and the state file go.
      max_to_keep: how many checkpoints to keep (None: all).
      keep_checkpoint_every_n_hours: also keep one checkpoint per this many hours.
      checkpoint_name: the prefix of the checkpoints' names.
      step_counter: the step variable `checkpoint_interval` counts in.
      checkpoint_interval: save only when `step_counter` advanced this many steps.
      init_fn: called by `restore_or_initialize` when there is no checkpoint.
      last_checkpoint_step: the step of the last checkpoint (with checkpoint_interval).

    Raises:
      ValueError: `max_to_keep` not positive, or `checkpoint_interval` without
        `step_counter`.
    """

    def __init__(self, checkpoint, directory, max_to_keep: Optional[int],
                 keep_checkpoint_every_n_hours: Optional[float] = None,
                 checkpoint_name: str = "ckpt", step_counter=None,
                 checkpoint_interval: Optional[int] = None, init_fn=None,
                 last_checkpoint_step: Optional[int] = None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError("Expected a positive integer or `None` for `max_to_keep`, got "
                             "%s." % (max_to_keep,))
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is "
                             "not None.")
        self._checkpoint = checkpoint
        self._save_counter_assign = None
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._last_checkpoint_step = last_checkpoint_step
        self._recover_state()

    def _recover_state(self) -> None:
        """Takes over the checkpoints the state file lists that are newer than its last
        preserved time (older ones are kept for good); the clock is never trusted to
        run backwards."""
        state = checkpoint_management.get_checkpoint_state(self._directory)
        now = time.time()
        self._maybe_delete = collections.OrderedDict()
        if state is None:
            self._latest_checkpoint = None
            # a little in the past, so a manager made again at once keeps its files
            self._last_preserved_timestamp = now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        self._last_preserved_timestamp = state.last_preserved_timestamp or 0.0
        if now < self._last_preserved_timestamp:
            _log.warning("time.time() returned a value %f seconds behind the last preserved "
                         "checkpoint timestamp.", self._last_preserved_timestamp - now)
            self._last_preserved_timestamp = now
        paths = state.all_model_checkpoint_paths
        timestamps = state.all_model_checkpoint_timestamps or \
            [self._last_preserved_timestamp] * len(paths)
        for path, timestamp in zip(paths, timestamps):
            timestamp = min(timestamp, now)
            if timestamp > self._last_preserved_timestamp:
                self._maybe_delete[path] = timestamp

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self):
        """The managed tf.train.Checkpoint."""
        return self._checkpoint

    @property
    def checkpoint_interval(self) -> Optional[int]:
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self) -> Optional[str]:
        """The prefix of the newest checkpoint, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self) -> List[str]:
        """The checkpoints this manager may still delete, oldest first."""
        return list(self._maybe_delete.keys())

    def save(self, checkpoint_number=None, check_interval: bool = True, options=None
             ) -> Optional[str]:
        """Increments the checkpoint's `save_counter` and saves it in the default
        session as '<prefix>-<checkpoint_number>' (default: the counter's value), then
        deletes the checkpoints past `max_to_keep` and records the rest.

        Args:
          checkpoint_number: an int, or a variable or tensor holding one (a global step).
          check_interval: with `checkpoint_interval`, save only when `step_counter` has
            advanced by it since the last save.
          options: a tf.train.CheckpointOptions.

        Returns:
          The new checkpoint's prefix, or None when the interval skipped it.

        Raises:
          RuntimeError: no default session.
        """
        session = _default_session()
        if self._checkpoint_interval is not None and self._skip_by_interval(
                session, check_interval):
            return None
        session.run(self._counter_increment(session))
        if checkpoint_number is None:
            checkpoint_number = self._checkpoint.save_counter
        if not isinstance(checkpoint_number, int):
            from tensorweave.train import training_util
            checkpoint_number = training_util.global_step(session, checkpoint_number)
        prefix = "%s-%d" % (self._prefix, checkpoint_number)
        path = self._checkpoint.write(prefix, session=session, options=options)
        self._record_and_sweep(path)
        return path

    def _skip_by_interval(self, session, check_interval: bool) -> bool:
        step = int(session.run(self._step_counter))
        last = self._last_checkpoint_step
        if last is not None and (step == last or (
                check_interval and step < last + self._checkpoint_interval)):
            return True
        self._last_checkpoint_step = step
        return False

    def _counter_increment(self, session):
        """The op adding 1 to the checkpoint's save_counter (built once); a counter made
        now is initialized in `session`."""
        if self._checkpoint._save_counter is None:
            with session.graph.as_default():
                session.run(self._checkpoint.save_counter.initializer)
        if self._save_counter_assign is None:
            counter = self._checkpoint.save_counter
            with counter.graph.as_default():
                self._save_counter_assign = counter.assign_add(1, read_value=False)
        return self._save_counter_assign

    def _record_and_sweep(self, path: str) -> None:
        """Puts `path` last, records the state, deletes what no longer fits, and
        records again (a preemption while deleting still finds the new checkpoint)."""
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        self._record_state()
        self._sweep()
        self._record_state()

    def _sweep(self) -> None:
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, timestamp = self._maybe_delete.popitem(last=False)
            hours = self._keep_checkpoint_every_n_hours
            if hours and timestamp - hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = timestamp  # kept for good, unlisted
                continue
            checkpoint_management.remove_checkpoint(path)

    def _record_state(self) -> None:
        paths = list(self._maybe_delete.keys())
        checkpoint_management.update_checkpoint_state_internal(
            self._directory, self._latest_checkpoint, all_model_checkpoint_paths=paths,
            all_model_checkpoint_timestamps=list(self._maybe_delete.values()),
            last_preserved_timestamp=self._last_preserved_timestamp,
            save_relative_paths=True)

    def restore_or_initialize(self) -> Optional[str]:
        """Restores the latest checkpoint (its status's restore ops still have to run, as
        in TF), or calls `init_fn` when there is none.

        Returns:
          The restored checkpoint's prefix, or None.
        """
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = int(_default_session().run(self._step_counter))
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
            _log.info("Customized initialization is done through the passed `init_fn`.")
        return None

    def sync(self) -> None:
        """Waits for pending saves: every save here is synchronous, so none are."""
