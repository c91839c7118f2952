"""train.Coordinator: stopping threads together and propagating their exceptions.

A training program runs several Python threads against one session (paper §3.2,
Figure 1: input, preprocessing, training and checkpointing steps run concurrently). The
Coordinator is the one place they agree on when to stop: any thread may request a stop,
optionally with the exception that caused it; every thread polls `should_stop()`; the
main thread `join()`s them all and gets the first real exception re-raised.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from typing import Iterable, Optional

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export

_log = logging.getLogger("tensorflow")

# join() wakes up this often while waiting for threads to end or for a stop request.
_POLL_SECS = 0.05


def _as_exc_info(ex):
    """(type, value, traceback) for an exception instance or an exc_info tuple."""
    if isinstance(ex, tuple):
        if len(ex) != 3 or ex[0] is None or ex[1] is None:
            raise ValueError("ex must be an exception or an exc_info tuple "
                             "(type, value, traceback), got %r" % (ex,))
        return ex
    if isinstance(ex, BaseException):
        return type(ex), ex, ex.__traceback__
    raise TypeError("ex must be an exception or an exc_info tuple, got %r" % (ex,))


def _log_reported(ex, exc_info) -> None:
    """Logs a reported exception as TF1 does: an exc_info tuple with its traceback, an
    exception instance with its type."""
    if isinstance(ex, tuple):
        _log.info("Error reported to Coordinator: %s", exc_info[1], exc_info=exc_info)
    else:
        _log.info("Error reported to Coordinator: %s, %s", exc_info[0], exc_info[1])


def _reraise(exc_info):
    raise exc_info[1].with_traceback(exc_info[2])


@tf_export("train.Coordinator")
class Coordinator:
    """A coordinator for threads: stop them together, report their exceptions.

    ```python
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord=coord)
    try:
        while not coord.should_stop():
            sess.run(train_op)
    except Exception as e:
        coord.request_stop(e)
    finally:
        coord.request_stop()
        coord.join(threads)
    ```

    Args:
      clean_stop_exception_types: exception types that, when passed to `request_stop`,
        stop the threads without being reported: a clean end rather than an error.
        Defaults to `(tf.errors.OutOfRangeError,)`, what input queues raise when they
        are closed and empty.
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        # Guards _exc_info_to_raise, _joined and _registered_threads.
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        # The first non-clean exception reported, as (type, value, traceback).
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        """None if `ex` is a clean-stop exception, else `ex` unchanged."""
        value = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(value, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None) -> None:
        """Requests that the threads stop. After this `should_stop()` returns True.

        Args:
          ex: an optional exception (or `sys.exc_info()` tuple) that caused the stop.
            The first one reported that is not a clean-stop exception is re-raised by
            `join()`. If the coordinator was already joined, `ex` is raised here
            instead, as nobody would see it otherwise.
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if ex is not None:
                    _reraise(_as_exc_info(ex))
                return
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    exc_info = _as_exc_info(ex)
                    _log_reported(ex, exc_info)
                    self._exc_info_to_raise = exc_info
                self._stop_event.set()

    def clear_stop(self) -> None:
        """Clears the stop flag and the reported exception, so the coordinator (and
        the threads started with it) can be used again after `join()`."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager: any exception raised in the body requests a stop with it
        (and is swallowed; `join()` re-raises it unless it is a clean-stop type).

        ```python
        with coord.stop_on_exception():
            while not coord.should_stop():
                ...
        ```
        """
        try:
            yield
        except:  # noqa: E722 - TF reports every exception, SystemExit included
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: Optional[float] = None) -> bool:
        """Waits until a stop is requested or `timeout` seconds pass.

        Returns:
          True if a stop was requested, False on timeout.
        """
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Adds `thread` to the threads that `join()` waits for."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads: Optional[Iterable[threading.Thread]] = None,
             stop_grace_period_secs: float = 120, ignore_live_threads: bool = False):
        """Waits for the threads to end.

        Blocks until all of `threads` (plus the registered ones) have ended or a stop
        was requested; after a stop request, gives the threads `stop_grace_period_secs`
        more to end.

        Args:
          threads: threads to join in addition to the registered ones.
          stop_grace_period_secs: seconds the threads get to end after `request_stop()`.
          ignore_live_threads: if True, threads still alive after the grace period are
            only logged instead of raising RuntimeError.

        Raises:
          RuntimeError: threads were still running after the grace period.
          Exception: the first non-clean exception passed to `request_stop()`.
        """
        with self._lock:
            pending = set(self._registered_threads)
            if threads is not None:
                pending.update(threads)
            pending = list(pending)

        def alive():
            return [t for t in pending if t.is_alive()]

        # Until the threads end by themselves or someone requests a stop.
        while alive() and not self.wait_for_stop(_POLL_SECS):
            pass
        # Then the grace period, sleeping in doubling slices so short shutdowns are
        # noticed quickly and long ones do not spin.
        remaining = float(stop_grace_period_secs)
        nap = 0.001
        while alive() and remaining >= 0.0:
            time.sleep(nap)
            remaining -= nap
            nap = max(min(2 * nap, remaining), 0.001)
        stragglers = [t.name for t in pending if t.is_alive()]

        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                _reraise(self._exc_info_to_raise)
            if stragglers:
                message = ("Coordinator stopped with threads still running: %s"
                           % " ".join(stragglers))
                if not ignore_live_threads:
                    raise RuntimeError(message)
                _log.info(message)

    @property
    def joined(self) -> bool:
        """True once `join()` has returned (or raised)."""
        return self._joined

    def raise_requested_exception(self) -> None:
        """Raises the exception reported to `request_stop()`, if any."""
        with self._lock:
            if self._exc_info_to_raise is not None:
                _reraise(self._exc_info_to_raise)


@tf_export("train.LooperThread")
class LooperThread(threading.Thread):
    """A daemon thread that calls a function repeatedly until the coordinator stops.

    With `timer_interval_secs=None` the function runs back to back; otherwise once
    every `timer_interval_secs` seconds (the first call right away). Subclasses may
    override `start_loop()`, `run_loop()` and `stop_loop()` instead of passing `target`.
    An exception in the loop requests a stop on the coordinator with it.

    Args:
      coord: the Coordinator; the thread registers itself with it.
      timer_interval_secs: seconds between calls, or None for back to back.
      target: the function to call, or None to use `run_loop()` of a subclass.
      args, kwargs: arguments for `target`.

    Raises:
      ValueError: `coord` is not a Coordinator, or `args`/`kwargs` without `target`.
    """

    def __init__(self, coord: Coordinator, timer_interval_secs, target=None, args=None,
                 kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass "
                             "'target'")
        self._loop_args = tuple(args or ())
        self._loop_kwargs = dict(kwargs or {})
        coord.register_thread(self)

    @staticmethod
    def loop(coord: Coordinator, timer_interval_secs, target, args=None,
             kwargs=None) -> "LooperThread":
        """Starts a LooperThread calling `target(*args, **kwargs)`; returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.time())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once when the thread starts."""

    def stop_loop(self) -> None:
        """Called once when the loop ends because of a stop request."""

    def run_loop(self) -> None:
        """Called at each iteration: runs `target` by default."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args, **self._loop_kwargs)
