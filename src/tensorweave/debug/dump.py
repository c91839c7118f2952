"""The dump directory of a watch: writing it, and `DebugDumpDir`, which reads it back.

Layout (one directory per dumped run, under the dump root):

    <dump_root>/run_<step>/index.json
    <dump_root>/run_<step>/<dump index>.npy      one file per dumped tensor value

`index.json` holds {"format": 1, "step": n, "status": "ok" | "error" | "filter",
"error": the error text or null, "tensors": [...]}, one entry per value in execution
order: dump index, tensor and op names, op type, output slot, frame name and iteration
(innermost loop; "" and 0 outside loops), device, dtype, shape and file (null for a
value that is not an array: a resource handle, a TensorArray flow). Arrays are written
with `numpy.save(allow_pickle=False)`; string tensors as fixed-width bytes arrays
(dtype "S<n>"). Nothing is pickled, so a dump opens anywhere NumPy does.
"""
from __future__ import annotations

import json
import os
import re
from typing import Callable, Dict, List, Optional

import numpy as np

FORMAT = 1
INDEX = "index.json"
_RUN_DIR = re.compile(r"^run_(\d+)$")


def to_host_array(v) -> Optional[np.ndarray]:
    """A NumPy copy of the run-time value `v`, or None when `v` is not an array
    (handles, TensorArray flows). String tensors become fixed-width bytes arrays."""
    if hasattr(v, "get") and type(v).__module__.startswith("cupy"):
        v = v.get()
    if isinstance(v, (bytes, str)):
        return np.array(v if isinstance(v, bytes) else v.encode())
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.array(v, copy=True)
        if a.dtype == object:
            try:
                a = np.array([x if isinstance(x, bytes) else str(x).encode()
                              for x in a.reshape(-1)], dtype=bytes).reshape(a.shape)
            except (TypeError, ValueError):
                return None
        return a
    if isinstance(v, (bool, int, float, complex)):
        return np.asarray(v)
    return None


def write_run(run_dir: str, step: int, status: str, error: Optional[str],
              entries: List[tuple]) -> None:
    """Writes one run's dump. `entries` are (tensor name, op, slot, frame name,
    iteration, device name, host array or None) in execution order."""
    os.makedirs(run_dir, exist_ok=True)
    index = []
    for i, (name, op, slot, frame, iteration, device, value) in enumerate(entries):
        rec = {"index": i, "tensor_name": name, "op_name": op.name, "op_type": op.type,
               "output_slot": slot, "frame": frame, "iteration": iteration,
               "device": device, "dtype": None, "shape": None, "file": None}
        if value is not None:
            fname = "%06d.npy" % i
            np.save(os.path.join(run_dir, fname), value, allow_pickle=False)
            rec.update(dtype=value.dtype.name if value.dtype.kind != "S" else "string",
                       shape=list(value.shape), file=fname)
        index.append(rec)
    with open(os.path.join(run_dir, INDEX), "w") as f:
        json.dump({"format": FORMAT, "step": step, "status": status, "error": error,
                   "tensors": index}, f, indent=1)


class DebugTensorDatum:
    """One dumped tensor value (as tfdbg's DebugTensorDatum): which tensor, which run
    (`step`), where in the control flow (`frame_name`, `iteration`), and its file.

    Attributes:
      node_name, output_slot, tensor_name ("node:slot"), op_type, step, frame_name
      (the innermost loop frame, "" outside loops), iteration, device_name,
      dump_index (execution order within the run), file_path (None for a value that is
      not an array), dtype, shape, debug_op ("DebugIdentity"), watch_key
      ("node:slot:DebugIdentity", tfdbg's form).
    """

    debug_op = "DebugIdentity"

    def __init__(self, run_dir: str, step: int, rec: dict):
        self.node_name = rec["op_name"]
        self.output_slot = rec["output_slot"]
        self.tensor_name = rec["tensor_name"]
        self.op_type = rec["op_type"]
        self.step = step
        self.frame_name = rec["frame"]
        self.iteration = rec["iteration"]
        self.device_name = rec["device"]
        self.dump_index = rec["index"]
        self.dtype = rec["dtype"]
        self.shape = tuple(rec["shape"]) if rec["shape"] is not None else None
        self.file_path = os.path.join(run_dir, rec["file"]) if rec["file"] else None

    @property
    def watch_key(self) -> str:
        return "%s:%d:%s" % (self.node_name, self.output_slot, self.debug_op)

    def get_tensor(self) -> Optional[np.ndarray]:
        """The dumped value (a NumPy array), or None for a value that is not an array."""
        if self.file_path is None:
            return None
        return np.load(self.file_path, allow_pickle=False)

    def __repr__(self):
        where = " in %s at iteration %d" % (self.frame_name, self.iteration) \
            if self.frame_name else ""
        return "<DebugTensorDatum %s step %d%s>" % (self.tensor_name, self.step, where)


class DebugDumpDir:
    """Reads the dumps a watch wrote under `dump_root` (all runs, or one `step`).

    Args:
      dump_root: the watch's dump root (holding run_<step> directories), or one run's
        directory (holding index.json).
      step: read only this run.

    Raises:
      IOError: `dump_root` holds no dump.
    """

    def __init__(self, dump_root: str, step: Optional[int] = None):
        self.dump_root = dump_root
        runs = []
        if os.path.isfile(os.path.join(dump_root, INDEX)):
            runs.append(dump_root)
        elif os.path.isdir(dump_root):
            found = sorted((int(m.group(1)), e) for e in os.listdir(dump_root)
                           if (m := _RUN_DIR.match(e)))
            runs = [os.path.join(dump_root, e) for n, e in found
                    if step is None or n == step]
        if not runs:
            raise IOError("No tensorweave debug dump under %s%s" % (
                dump_root, "" if step is None else " for step %d" % step))
        self._runs: Dict[int, dict] = {}
        self._data: List[DebugTensorDatum] = []
        for d in runs:
            with open(os.path.join(d, INDEX)) as f:
                meta = json.load(f)
            if meta.get("format") != FORMAT:
                raise IOError("%s: unknown dump format %r" % (d, meta.get("format")))
            if step is not None and meta["step"] != step:
                continue
            self._runs[meta["step"]] = meta
            self._data.extend(DebugTensorDatum(d, meta["step"], r) for r in meta["tensors"])

    @property
    def steps(self) -> List[int]:
        """The dumped runs (watch step numbers), in order."""
        return sorted(self._runs)

    def status(self, step: int) -> str:
        """How run `step` ended: "ok", "error" (an op failed) or "filter" (the watch's
        filter matched)."""
        return self._runs[step]["status"]

    def error(self, step: int) -> Optional[str]:
        """The error text of run `step`, or None."""
        return self._runs[step]["error"]

    @property
    def size(self) -> int:
        """The number of dumped values."""
        return len(self._data)

    @property
    def dumped_tensor_data(self) -> List[DebugTensorDatum]:
        """Every dumped value, in execution order (by step, then within the run)."""
        return list(self._data)

    def nodes(self) -> List[str]:
        """The names of the ops with dumped outputs, in order of first execution."""
        return list(dict.fromkeys(d.node_name for d in self._data))

    def watch_key_to_data(self, debug_watch_key: str,
                          device_name: Optional[str] = None) -> List[DebugTensorDatum]:
        """The dumped values of one tensor, in execution order. `debug_watch_key` is
        "node:slot:DebugIdentity" (tfdbg's form) or a tensor name "node:slot"."""
        key = debug_watch_key
        if key.endswith(":" + DebugTensorDatum.debug_op):
            key = key[:-len(DebugTensorDatum.debug_op) - 1]
        return [d for d in self._data if d.tensor_name == key and
                (device_name is None or d.device_name == device_name)]

    def get_tensors(self, node_name: str, output_slot: int,
                    debug_op: str = "DebugIdentity") -> List[Optional[np.ndarray]]:
        """The dumped values of output `output_slot` of `node_name`, in order."""
        if debug_op != DebugTensorDatum.debug_op:
            raise ValueError("Only DebugIdentity dumps exist, not %r" % debug_op)
        return [d.get_tensor() for d in
                self.watch_key_to_data("%s:%d" % (node_name, output_slot))]

    def find(self, predicate: Callable, first_n: int = 0,
             exclude_node_names: Optional[str] = None) -> List[DebugTensorDatum]:
        """The dumped values for which `predicate(datum, value)` is true, in execution
        order (so `find(has_inf_or_nan, first_n=1)` is the first non-finite value).

        Args:
          predicate: callable (DebugTensorDatum, numpy value or None) -> bool.
          first_n: stop after this many matches (0: all).
          exclude_node_names: a regular expression; ops whose name it matches are
            skipped.
        """
        skip = re.compile(exclude_node_names) if exclude_node_names else None
        out = []
        for d in self._data:
            if skip is not None and skip.match(d.node_name):
                continue
            if predicate(d, d.get_tensor()):
                out.append(d)
                if first_n and len(out) >= first_n:
                    break
        return out
