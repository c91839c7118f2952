"""The `checkpoint` state file and checkpoint look-up helpers (TF1 `tf.train.*`).

A directory of checkpoints holds a text file, `checkpoint` by default, in the format of
TF's CheckpointState text proto, which TF users read and write directly:

    model_checkpoint_path: "/ckpt/model.ckpt-300"
    all_model_checkpoint_paths: "/ckpt/model.ckpt-200"
    all_model_checkpoint_paths: "/ckpt/model.ckpt-300"

(strings C-escaped; optional `all_model_checkpoint_timestamps: <float>` and
`last_preserved_timestamp: <float>` lines). It is replaced atomically. Relative paths in
it are relative to the directory holding it.
"""
from __future__ import annotations

import glob
import logging
import os
import re
import time
from typing import Iterator, List, Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.ops.io import checkpoint_format as _fmt
from tensorweave.platform import file_io

_log = logging.getLogger("tensorflow")
_DEFAULT_STATE_FILE = "checkpoint"


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


class CheckpointStateParseError(ValueError):
    """A `checkpoint` state file that is not a CheckpointState in text form (TF's
    text_format.ParseError)."""


class CheckpointState:
    """The contents of a `checkpoint` state file (TF's CheckpointState proto)."""

    def __init__(self, model_checkpoint_path: str = "",
                 all_model_checkpoint_paths: Optional[List[str]] = None,
                 all_model_checkpoint_timestamps: Optional[List[float]] = None,
                 last_preserved_timestamp: Optional[float] = None):
        # a proto3 float field: unset reads as 0.0 and is not written
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps or [])
        self.last_preserved_timestamp = float(last_preserved_timestamp or 0.0)

    def __str__(self):
        lines = ['model_checkpoint_path: "%s"' % _escape(self.model_checkpoint_path)]
        lines += ['all_model_checkpoint_paths: "%s"' % _escape(p)
                  for p in self.all_model_checkpoint_paths]
        lines += ["all_model_checkpoint_timestamps: %r" % float(t)
                  for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append("last_preserved_timestamp: %r" % float(self.last_preserved_timestamp))
        return "\n".join(lines) + "\n"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and str(self) == str(other)

    @classmethod
    def parse(cls, text: str, where: str) -> "CheckpointState":
        state = cls()
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.fullmatch(r'(\w+)\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(\S+))', line)
            if not m:
                raise CheckpointStateParseError("%s:%d: cannot parse %r" % (where, n, line))
            key, sval, nval = m.groups()
            if key == "model_checkpoint_path" and sval is not None:
                state.model_checkpoint_path = _unescape(sval)
            elif key == "all_model_checkpoint_paths" and sval is not None:
                state.all_model_checkpoint_paths.append(_unescape(sval))
            elif key == "all_model_checkpoint_timestamps" and nval is not None:
                state.all_model_checkpoint_timestamps.append(float(nval))
            elif key == "last_preserved_timestamp" and nval is not None:
                state.last_preserved_timestamp = float(nval)
            else:
                raise CheckpointStateParseError("%s:%d: unknown field %r" % (where, n, line))
        return state


def _state_path(save_dir: str, latest_filename: Optional[str]) -> str:
    return os.path.join(save_dir, latest_filename or _DEFAULT_STATE_FILE)


@tf_export("train.generate_checkpoint_state_proto")
def generate_checkpoint_state_proto(save_dir: str, model_checkpoint_path: str,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None) -> CheckpointState:
    """A CheckpointState; `model_checkpoint_path` is appended to
    `all_model_checkpoint_paths` when it is not its last entry. Paths inside `save_dir`
    are stored relative to it when `save_dir` is relative (as TF does)."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        _log.info("%s is not in all_model_checkpoint_paths. Manually adding it.",
                  model_checkpoint_path)
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps is not None and \
            len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError("Checkpoint timestamps, if provided, must match checkpoint paths "
                         "(got paths %r and timestamps %r)"
                         % (paths, all_model_checkpoint_timestamps))
    if not file_io.isabs(save_dir):
        if not file_io.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if file_io.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointState(model_checkpoint_path, paths, all_model_checkpoint_timestamps,
                           last_preserved_timestamp)


@tf_export("train.update_checkpoint_state")
def update_checkpoint_state(save_dir: str, model_checkpoint_path: str,
                            all_model_checkpoint_paths=None, latest_filename=None,
                            all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None) -> None:
    """Writes the `checkpoint` state file of `save_dir` atomically.

    Raises:
      RuntimeError: the state file would be written over a checkpoint's own files.
    """
    update_checkpoint_state_internal(
        save_dir, model_checkpoint_path, all_model_checkpoint_paths, latest_filename,
        save_relative_paths=False, all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
        last_preserved_timestamp=last_preserved_timestamp)


def update_checkpoint_state_internal(save_dir, model_checkpoint_path,
                                     all_model_checkpoint_paths=None, latest_filename=None,
                                     save_relative_paths=False,
                                     all_model_checkpoint_timestamps=None,
                                     last_preserved_timestamp=None) -> None:
    save_dir = save_dir or "."
    path = _state_path(save_dir, latest_filename)
    if save_relative_paths:
        def rel(p):
            return os.path.relpath(p, save_dir) if file_io.isabs(p) else p
        model_checkpoint_path = rel(model_checkpoint_path)
        all_model_checkpoint_paths = [rel(p) for p in all_model_checkpoint_paths or []]
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                            all_model_checkpoint_paths,
                                            all_model_checkpoint_timestamps,
                                            last_preserved_timestamp)
    if os.path.abspath(path) == os.path.abspath(state.model_checkpoint_path) or \
            os.path.abspath(path) == os.path.abspath(_fmt.index_file(
                state.model_checkpoint_path)):
        raise RuntimeError("Save path '%s' conflicts with path used for checkpoint state.  "
                           "Please use a different save path." % model_checkpoint_path)
    _fmt.write_atomic(path, str(state).encode("utf-8"))


@tf_export("train.get_checkpoint_state")
def get_checkpoint_state(checkpoint_dir: str, latest_filename: Optional[str] = None
                         ) -> Optional[CheckpointState]:
    """The CheckpointState of `checkpoint_dir` (relative paths made absolute against
    it), or None when there is no state file.

    A state file that cannot be parsed is logged and ignored (None), as in TF.

    Raises:
      ValueError: the state file names no checkpoint.
    """
    path = _state_path(checkpoint_dir, latest_filename)
    if not file_io.isfile(path):
        return None
    text = file_io.read_bytes(path).decode("utf-8", errors="replace")
    try:
        state = CheckpointState.parse(text, path)
    except CheckpointStateParseError as e:
        _log.warning("%s: %s", type(e).__name__, e)
        _log.warning("%s: Checkpoint ignored", path)
        return None
    if not state.model_checkpoint_path:
        raise ValueError("Invalid checkpoint state loaded from %s" % checkpoint_dir)
    if not file_io.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [
        p if file_io.isabs(p) else os.path.join(checkpoint_dir, p)
        for p in state.all_model_checkpoint_paths]
    return state


@tf_export("train.checkpoint_exists")
def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """Whether a checkpoint exists at `checkpoint_prefix` (its index file, or, as TF
    tests for a TF1 checkpoint, anything matching the pattern, a directory included)."""
    if _fmt.checkpoint_exists(checkpoint_prefix):
        return True
    return bool(file_io.glob(checkpoint_prefix))


@tf_export("train.latest_checkpoint")
def latest_checkpoint(checkpoint_dir: str, latest_filename: Optional[str] = None
                      ) -> Optional[str]:
    """The prefix of the newest checkpoint recorded in `checkpoint_dir`'s state file, or
    None when there is none (or its files are gone)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        _log.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def _mtime(path: str) -> float:
    if "://" not in path:
        return os.stat(path).st_mtime
    return file_io.stat(path)[1] / 1e9


@tf_export("train.get_checkpoint_mtimes")
def get_checkpoint_mtimes(checkpoint_prefixes) -> List[float]:
    """The modification times of the checkpoints that exist among `checkpoint_prefixes`."""
    out = []
    for p in checkpoint_prefixes:
        try:
            out.append(_mtime(_fmt.index_file(p)))
        except OSError:
            pass
    return out


@tf_export("train.remove_checkpoint")
def remove_checkpoint(checkpoint_prefix: str, checkpoint_format_version: int = 2,
                      meta_graph_suffix: str = "meta") -> None:
    """Deletes the files of the checkpoint `checkpoint_prefix` (index, data, meta graph;
    for the V1 format, the files the prefix or pattern names)."""
    paths = [_fmt.index_file(checkpoint_prefix),
             meta_graph_filename(checkpoint_prefix, meta_graph_suffix)]
    if checkpoint_format_version == 1:
        paths += file_io.glob(checkpoint_prefix)
    paths += file_io.glob(glob.escape(checkpoint_prefix) + ".data-?????-of-?????")
    # the previous checkpoint an interrupted save kept (ops/io/checkpoint_format.py)
    backup = _fmt.backup_prefix(checkpoint_prefix)
    paths += [_fmt.index_file(backup)]
    paths += file_io.glob(glob.escape(backup) + ".data-?????-of-?????")
    for p in paths:
        try:
            file_io.remove(p)
        except FileNotFoundError:
            pass
        except OSError as e:
            _log.warning("Ignoring: failed to delete %s: %s", p, e)


def meta_graph_filename(checkpoint_filename: str, meta_graph_suffix: str = "meta") -> str:
    """"model.ckpt-123.meta" for "model.ckpt-123" (a sharded "-?????-of-?????" suffix of
    old checkpoints is dropped)."""
    base = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return ".".join([base, meta_graph_suffix])


@tf_export("train.checkpoints_iterator")
def checkpoints_iterator(checkpoint_dir: str, min_interval_secs: float = 0,
                         timeout: Optional[float] = None,
                         timeout_fn=None) -> Iterator[str]:
    """Yields each new checkpoint of `checkpoint_dir` as it appears; stops after waiting
    `timeout` seconds for one (unless `timeout_fn()` returns False)."""
    last = None
    while True:
        new = _wait_for_new_checkpoint(checkpoint_dir, last, timeout=timeout)
        if new is None:
            if not timeout_fn or timeout_fn():
                return
            continue
        start = time.time()
        last = new
        yield new
        remaining = start + min_interval_secs - time.time()
        if remaining > 0:
            time.sleep(remaining)


def _wait_for_new_checkpoint(checkpoint_dir, last, seconds_to_sleep=1, timeout=None):
    stop = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last:
            return path
        if stop is not None and time.time() + seconds_to_sleep > stop:
            return None
        time.sleep(seconds_to_sleep)
