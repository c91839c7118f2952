"""SessionRunHook and the values passed to it: how code plugs into a monitored loop.

A MonitoredSession calls, for each hook: `begin()` before the graph is finalized,
`after_create_session(session, coord)` once the session exists, then around every
`run()` call `before_run(run_context)` (which may return SessionRunArgs: more fetches,
feeds and options merged into that call) and `after_run(run_context, run_values)` (with
the results of those extra fetches), and `end(session)` when the loop ends normally.
"""
from __future__ import annotations

import collections

from tensorweave.framework.api_export import tf_export


@tf_export("train.SessionRunHook")
class SessionRunHook:
    """Base class of hooks: every method is a no-op; subclasses override what they need."""

    def begin(self) -> None:
        """Called once before the session is created; the graph can still be changed."""

    def after_create_session(self, session, coord) -> None:
        """Called once the session exists (and is initialized), before the first run.

        Args:
          session: the session just created.
          coord: the Coordinator of the session's threads.
        """

    def before_run(self, run_context):
        """Called before each `run()`; may return a SessionRunArgs (or None) whose
        fetches, feed_dict and options are merged into the call.

        Args:
          run_context: a SessionRunContext.
        """
        return None

    def after_run(self, run_context, run_values) -> None:
        """Called after each successful `run()` with the results of the fetches this hook
        asked for in `before_run` (`run_values.results`)."""

    def end(self, session) -> None:
        """Called when the session is closed after a normal end (not on an exception)."""


@tf_export("train.SessionRunArgs")
class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a `run()` call: fetches (any fetch structure), feed_dict,
    and RunOptions (merged with the caller's)."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


@tf_export("train.SessionRunContext")
class SessionRunContext:
    """The call a hook sees in before_run/after_run: its original arguments, the
    session, and a way to ask the loop to stop."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        """The SessionRunArgs the caller of `run()` passed."""
        return self._original_args

    @property
    def session(self):
        """The session the call runs in (do not run it from a hook's before_run)."""
        return self._session

    @property
    def stop_requested(self) -> bool:
        """True once a hook called `request_stop()` during this call."""
        return self._stop_requested

    def request_stop(self) -> None:
        """Asks the loop to stop: `should_stop()` returns True after this call."""
        self._stop_requested = True


@tf_export("train.SessionRunValues")
class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """What a hook gets in after_run: the results of its fetches (same structure), and
    the RunOptions and RunMetadata of the call."""
