"""SessionManager: creates sessions that are initialized, restored from a checkpoint, or
made ready by another task (TF1 `tf.train.SessionManager`).

"Ready" is decided by running `ready_op` (typically `tf.report_uninitialized_variables()`):
an empty result (or no ready_op) means ready; names mean those variables still need
initializing. `ready_for_local_init_op` decides the same before `local_init_op` may run.
"""
from __future__ import annotations

import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import tf_logging as logging


def _maybe_name(obj) -> str:
    if obj is None:
        return "None"
    return getattr(obj, "name", None) or "<no name for %s>" % type(obj)


def _ready(op, sess, msg):
    """(True, None) if `op` reports nothing uninitialized, else (False, explanation)."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            logging.warning("%s : error [%s]", msg, str(e))
            raise
        return False, str(e)
    if value is None:
        return True, None
    value = np.asarray(value)
    if value.dtype == np.int32 or value.size == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                      for v in value.reshape(-1))
    return False, "Variables not initialized: " + names


@tf_export("train.SessionManager")
class SessionManager:
    """Creates sessions from a checkpoint, an init op, or by waiting for readiness.

    Args:
      local_init_op: run in every new session once `ready_for_local_init_op` is ready.
      ready_op: the readiness check (e.g. report_uninitialized_variables()).
      ready_for_local_init_op: the check that must pass before local_init_op runs.
      graph: the graph (default: the default graph).
      recovery_wait_secs: seconds between checks while waiting for a checkpoint or for
        readiness.
      local_init_run_options: RunOptions for local_init_op.
      local_init_feed_dict: feeds for local_init_op.

    Raises:
      ValueError: ready_for_local_init_op without local_init_op.
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if graph is None:
            graph = _graph.get_default_graph()
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph
        self._recovery_wait_secs = recovery_wait_secs
        self._target = None
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             "local_init_op , ready_for_local_init_op [%s]"
                             % ready_for_local_init_op)

    def _new_session(self, master, config):
        from tensorweave.runtime.session import Session
        return Session(master, graph=self._graph, config=config)

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        """(session, restored?) for a new session, restored when a checkpoint exists."""
        from tensorweave.train import checkpoint_management
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = self._new_session(master, config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        wait_time = 0
        ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if wait_for_checkpoint and wait_time < max_wait_secs:
                logging.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                wait_time += self._recovery_wait_secs
                ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            else:
                return sess, False
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None,
                        init_fn=None):
        """A ready session: restored from the latest checkpoint of `checkpoint_dir` (or
        from `checkpoint_filename_with_path`) if there is one, else initialized by
        `init_op` and/or `init_fn(sess)`; then local_init_op runs.

        Raises:
          RuntimeError: nothing to initialize with, or the model is not ready after it.
        """
        sess, is_loaded = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        if not is_loaded:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        local_init_success, msg = self._try_run_local_init_op(sess)
        if not local_init_success:
            raise RuntimeError("Init operations did not make model ready for local_init.  "
                               "Init op: %s, init fn: %s, error: %s"
                               % (_maybe_name(init_op), init_fn, msg))
        is_ready, msg = self._model_ready(sess)
        if not is_ready:
            raise RuntimeError("Init operations did not make model ready.  Init op: %s, "
                               "init fn: %s, local_init_op: %s, error: %s"
                               % (_maybe_name(init_op), init_fn, self._local_init_op, msg))
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """A session restored from a checkpoint if possible.

        Returns:
          (sess, initialized): initialized is True when the restore made the model ready.
        """
        sess, is_loaded = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        local_init_success, msg = self._try_run_local_init_op(sess)
        if not is_loaded:
            return sess, False
        where = checkpoint_dir or checkpoint_filename_with_path
        if not local_init_success:
            logging.info("Restoring model from %s did not make model ready for local "
                         "init: %s", where, msg)
            return sess, False
        is_ready, msg = self._model_ready(sess)
        if not is_ready:
            logging.info("Restoring model from %s did not make model ready: %s", where, msg)
            return sess, False
        logging.info("Restored model from %s", where)
        return sess, is_ready

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """Creates sessions until one is ready (another task initialized the model), or
        `max_wait_secs` run out.

        Raises:
          DeadlineExceededError: not ready within max_wait_secs.
        """
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.time() + max_wait_secs
        while True:
            sess = self._new_session(master, config)
            not_ready_msg = None
            local_init_success, not_ready_local_msg = self._try_run_local_init_op(sess)
            if local_init_success:
                is_ready, not_ready_msg = self._model_ready(sess)
                if is_ready:
                    return sess
            _safe_close(sess)
            if deadline - time.time() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %d secs."
                    % (max_wait_secs,))
            logging.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, "
                         "ready: %s", not_ready_local_msg, not_ready_msg)
            time.sleep(self._recovery_wait_secs)

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        is_ready, msg = self._model_ready_for_local_init(sess)
        if not is_ready:
            return False, msg
        logging.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        logging.info("Done running local_init_op.")
        return True, None


def _safe_close(sess) -> None:
    try:
        sess.close()
    except Exception:  # noqa: BLE001 - closing a failed session must not mask anything
        pass
