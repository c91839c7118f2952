"""`tf.logging`: TF1's logging functions on Python's `logging`, logger "tensorflow".

As in TF1, importing the library attaches a stderr handler ("INFO:tensorflow:message")
to the "tensorflow" logger unless the root logger is already configured (so a handler
absl's app.run adds later to the root prints each record a second time, in absl's
format, as under TF), and the level starts
at the root's (WARNING), so `tf.logging.set_verbosity(tf.logging.INFO)` is what shows
info messages. Records name the caller's file and line, not this module.
"""
from __future__ import annotations

import logging as _logging
import sys
import threading
from typing import Dict, Tuple

from tensorweave.framework.api_export import export, tf_export

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL
for _name in ("DEBUG", "INFO", "WARN", "ERROR", "FATAL"):
    export(globals()[_name], "logging." + _name)

_LOGGER_NAME = "tensorflow"
_logger = None
_lock = threading.Lock()
_counts: Dict[Tuple[str, int], int] = {}


@tf_export("get_logger")
def get_logger() -> _logging.Logger:
    """The "tensorflow" logger, given a stderr handler on first use when the root
    logger has none (stdout and level INFO in an interactive session, as TF1)."""
    global _logger
    if _logger is not None:
        return _logger
    with _lock:
        if _logger is None:
            logger = _logging.getLogger(_LOGGER_NAME)
            if not _logging.getLogger().handlers and not logger.handlers:
                interactive = hasattr(sys, "ps1") or bool(sys.flags.interactive)
                if interactive:
                    logger.setLevel(INFO)
                handler = _logging.StreamHandler(sys.stdout if interactive else sys.stderr)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _logger = logger
    return _logger


def _logging_function(name: str, method: str, with_level: bool, doc: str):
    """A `tf.logging.<name>` function calling the logger's `method`; records name the
    caller of the function (stacklevel 2)."""
    if with_level:
        def fn(level: int, msg, *args, **kwargs) -> None:
            getattr(get_logger(), method)(level, msg, *args, stacklevel=2, **kwargs)
    else:
        def fn(msg, *args, **kwargs) -> None:
            getattr(get_logger(), method)(msg, *args, stacklevel=2, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return tf_export("logging." + name)(fn)


log = _logging_function("log", "log", True, "Logs `msg % args` at `level`.")
debug = _logging_function("debug", "debug", False, "Logs `msg % args` at DEBUG.")
info = _logging_function("info", "info", False, "Logs `msg % args` at INFO.")
warning = _logging_function("warning", "warning", False, "Logs `msg % args` at WARNING.")
warn = _logging_function("warn", "warning", False,
                         "Logs `msg % args` at WARNING (TF1's alias of `warning`).")
error = _logging_function("error", "error", False, "Logs `msg % args` at ERROR.")
fatal = _logging_function("fatal", "fatal", False,
                          "Logs `msg % args` at FATAL; like TF1 it does not stop the "
                          "program.")
vlog = _logging_function("vlog", "log", True,
                         "Logs `msg % args` at `level` (TF1's verbose log: a plain log "
                         "call).")


def _next_count(depth: int) -> int:
    """How many times the call site `depth` frames up has logged before (per file:line)."""
    frame = sys._getframe(depth)
    key = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        n = _counts.get(key, 0)
        _counts[key] = n + 1
    return n


@tf_export("logging.log_every_n")
def log_every_n(level: int, msg, n: int, *args) -> None:
    """Logs on the 1st call from this line, then every `n`th (1, n+1, 2n+1, ...)."""
    count = _next_count(2)
    if count % n == 0:
        get_logger().log(level, msg, *args, stacklevel=2)


@tf_export("logging.log_first_n")
def log_first_n(level: int, msg, n: int, *args) -> None:
    """Logs only the first `n` calls from this line."""
    count = _next_count(2)
    if count < n:
        get_logger().log(level, msg, *args, stacklevel=2)


@tf_export("logging.log_if")
def log_if(level: int, msg, condition, *args) -> None:
    """Logs when `condition` is true."""
    if condition:
        get_logger().log(level, msg, *args, stacklevel=2)


@tf_export("logging.TaskLevelStatusMessage")
def TaskLevelStatusMessage(msg) -> None:
    """Logs `msg` at ERROR, as TF1 did."""
    get_logger().error(msg, stacklevel=2)


@tf_export("logging.flush")
def flush() -> None:
    """Flushes the handlers of the "tensorflow" logger and of the root logger.
    (TF1 raised NotImplementedError here.)"""
    for logger in (get_logger(), _logging.getLogger()):
        for handler in logger.handlers:
            handler.flush()


@tf_export("logging.get_verbosity")
def get_verbosity() -> int:
    """The effective level of the "tensorflow" logger (WARN by default)."""
    return get_logger().getEffectiveLevel()


@tf_export("logging.set_verbosity")
def set_verbosity(v: int) -> None:
    """Sets the level of the "tensorflow" logger (tf.logging.DEBUG ... FATAL)."""
    get_logger().setLevel(v)


get_logger()  # at import, as TF's own import does (see the module docstring)
