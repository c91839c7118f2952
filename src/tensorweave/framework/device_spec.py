"""Device names: `/job:<j>/replica:<r>/task:<t>/device:<TYPE>:<i>` and partial specs.

A DeviceSpec may leave any field unset; `merge_from` lets inner `tf.device` scopes
override only the fields they name, as in TF1.
"""
from __future__ import annotations

import re
from typing import Optional

_CACHE: dict = {}


class DeviceSpec:
    """A (possibly partial) device specification.

    Args:
      job, replica, task: the task part; any may be None.
      device_type: "CPU" or "GPU" (case-normalised); None for any.
      device_index: the device number, or None for any.
    """

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job: Optional[str] = None, replica: Optional[int] = None,
                 task: Optional[int] = None, device_type: Optional[str] = None,
                 device_index: Optional[int] = None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = None if device_type is None else (
            device_type.upper() if device_type.upper() in ("CPU", "GPU", "TPU") else device_type)
        self.device_index = None if device_index is None else int(device_index)

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        """Parses a device string; raises ValueError naming the bad part."""
        spec = spec or ""
        d = cls()
        for part in spec.split("/"):
            if not part:
                continue
            bits = part.split(":")
            key = bits[0].lower()
            if key == "job" and len(bits) == 2:
                d.job = bits[1]
            elif key == "replica" and len(bits) == 2:
                d.replica = int(bits[1])
            elif key == "task" and len(bits) == 2:
                d.task = int(bits[1])
            elif key == "device" and len(bits) == 3:
                d.device_type = bits[1].upper()
                d.device_index = None if bits[2] == "*" else int(bits[2])
            elif key == "device" and len(bits) == 2:
                d.device_type = bits[1].upper()
            elif len(bits) == 2 and re.fullmatch(r"[A-Za-z_]+", bits[0]) and \
                    (bits[1] == "*" or bits[1].isdigit()):
                d.device_type = bits[0].upper()
                d.device_index = None if bits[1] == "*" else int(bits[1])
            elif len(bits) == 1 and bits[0].lower() in ("cpu", "gpu"):
                d.device_type = bits[0].upper()
            else:
                raise ValueError("Unknown attribute: '%s' in '%s'" % (part, spec))
        return d

    def merge_from(self, other: "DeviceSpec") -> "DeviceSpec":
        """A new spec: fields set in `other` override ours."""
        return DeviceSpec(
            other.job if other.job is not None else self.job,
            other.replica if other.replica is not None else self.replica,
            other.task if other.task is not None else self.task,
            other.device_type if other.device_type is not None else self.device_type,
            other.device_index if other.device_index is not None else self.device_index)

    def to_string(self) -> str:
        out = []
        if self.job is not None:
            out.append("/job:" + self.job)
        if self.replica is not None:
            out.append("/replica:%d" % self.replica)
        if self.task is not None:
            out.append("/task:%d" % self.task)
        if self.device_type is not None:
            out.append("/device:%s:%s" % (self.device_type,
                                         "*" if self.device_index is None else self.device_index))
        return "".join(out)

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return "DeviceSpec(%r)" % self.to_string()

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())


def canonical(spec: str) -> str:
    """The canonical string of a device spec ("" stays "")."""
    r = _CACHE.get(spec)
    if r is None:
        r = DeviceSpec.from_string(spec).to_string() if spec else ""
        _CACHE[spec] = r
    return r


def merge(outer: str, inner: str) -> str:
    """Merges an inner device scope string over an outer one."""
    if not outer:
        return canonical(inner)
    if not inner:
        return outer
    return DeviceSpec.from_string(outer).merge_from(DeviceSpec.from_string(inner)).to_string()
