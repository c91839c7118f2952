"""Device names: `/job:<j>/replica:<r>/task:<t>/device:<TYPE>:<i>` and partial specs.

`DeviceSpec` is TF1's `tf.DeviceSpec` (DeviceSpecV1): every field may be unset, fields can
be assigned, `merge_from` updates in place and `make_merged_spec`/`replace` return new
specs. Parsing accepts TF's spellings: full names, partial ones (`/job:worker/task:1`),
the legacy device forms (`/cpu:1`, `/gpu:0`, `/cpu`, `CPU:*`) and `/device:CPU:*`.

`canonical` and `merge` are the string forms the graph's device scopes use (cached: a
scope string is parsed once per process).
"""
from __future__ import annotations

from typing import Optional

# device types the legacy `/<type>:<index>` spelling accepts (TF's list, and ours: SIM)
_LEGACY_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU", "SIM"})

_CACHE: dict = {}


def _device_type_of(device_type: Optional[str]) -> Optional[str]:
    # lower-case cpu/gpu (and our sim) are accepted and upper-cased, as TF does
    if device_type in ("cpu", "gpu", "sim"):
        return device_type.upper()
    return None if device_type is None else str(device_type)


def _int_or_none(value) -> Optional[int]:
    return None if value is None else int(value)


class DeviceSpec:
    """A (possibly partial) device specification (TF1 `tf.DeviceSpec`).

    Args:
      job: the job name, e.g. "worker"; None for any.
      replica: the replica index; None for any.
      task: the task index; None for any.
      device_type: "CPU", "GPU", "SIM" ("cpu"/"gpu" are upper-cased); None for any.
      device_index: the device number; None for any (`*`).
    """

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index")

    def __init__(self, job: Optional[str] = None, replica: Optional[int] = None,
                 task: Optional[int] = None, device_type: Optional[str] = None,
                 device_index: Optional[int] = None):
        self._job = None if job is None else str(job)
        self._replica = _int_or_none(replica)
        self._task = _int_or_none(task)
        self._device_type = _device_type_of(device_type)
        self._device_index = _int_or_none(device_index)

    # --- fields (assignable, as in TF1) -------------------------------------------------
    @property
    def job(self) -> Optional[str]:
        return self._job

    @job.setter
    def job(self, job) -> None:
        self._job = None if job is None else str(job)

    @property
    def replica(self) -> Optional[int]:
        return self._replica

    @replica.setter
    def replica(self, replica) -> None:
        self._replica = _int_or_none(replica)

    @property
    def task(self) -> Optional[int]:
        return self._task

    @task.setter
    def task(self, task) -> None:
        self._task = _int_or_none(task)

    @property
    def device_type(self) -> Optional[str]:
        return self._device_type

    @device_type.setter
    def device_type(self, device_type) -> None:
        self._device_type = _device_type_of(device_type)

    @property
    def device_index(self) -> Optional[int]:
        return self._device_index

    @device_index.setter
    def device_index(self, device_index) -> None:
        self._device_index = _int_or_none(device_index)

    # --- parsing ------------------------------------------------------------------------
    @staticmethod
    def _components(spec: str) -> tuple:
        """(job, replica, task, device_type, device_index) of a spec string.

        Raises:
          ValueError: for an unknown part or two device types (TF's messages).
        """
        job = replica = task = device_type = device_index = None
        for part in (spec or "").split("/"):
            if not part:
                continue
            bits = part.split(":")
            n = len(bits)
            if n == 2 and bits[0] == "job":
                job = bits[1]
            elif n == 2 and bits[0] == "replica":
                replica = int(bits[1])
            elif n == 2 and bits[0] == "task":
                task = int(bits[1])
            elif n in (1, 2) and bits[0].upper() in _LEGACY_TYPES:
                if device_type is not None:
                    raise ValueError("Multiple device types are not allowed while parsing "
                                     "the device spec: %s." % spec)
                device_type = bits[0].upper()
                if n == 2 and bits[1] != "*":
                    device_index = int(bits[1])
            elif n == 3 and bits[0] == "device":
                if device_type is not None:
                    raise ValueError("Multiple device types are not allowed while parsing "
                                     "the device spec: %s." % spec)
                device_type = _device_type_of(bits[1])
                if bits[2] != "*":
                    device_index = int(bits[2])
            else:
                raise ValueError("Unknown attribute '%s' is encountered while parsing the "
                                 "device spec: '%s'." % (bits[0], spec))
        return job, replica, task, device_type, device_index

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        """A DeviceSpec parsed from `spec` (e.g. "/job:ps/task:0", "/cpu:1").

        Raises:
          ValueError: if `spec` has an unknown part.
        """
        return cls(*cls._components(spec))

    def parse_from_string(self, spec: str) -> "DeviceSpec":
        """Replaces every field of this spec by those parsed from `spec`; returns self."""
        (self._job, self._replica, self._task, self._device_type,
         self._device_index) = self._components(spec)
        return self

    # --- merging ------------------------------------------------------------------------
    def merge_from(self, dev: "DeviceSpec") -> None:
        """Sets, in place, every field that `dev` sets (TF1's DeviceSpec.merge_from)."""
        for slot in self.__slots__:
            value = getattr(dev, slot)
            if value is not None:
                setattr(self, slot, value)

    def make_merged_spec(self, dev: "DeviceSpec") -> "DeviceSpec":
        """A new spec: this one with the fields `dev` sets overriding."""
        out = self.replace()
        out.merge_from(dev)
        return out

    def replace(self, **kwargs) -> "DeviceSpec":
        """A new spec with the named fields (job, replica, task, device_type,
        device_index) replaced."""
        fields = {"job": self._job, "replica": self._replica, "task": self._task,
                  "device_type": self._device_type, "device_index": self._device_index}
        for k in kwargs:
            if k not in fields:
                raise TypeError("replace() got an unexpected keyword argument '%s'" % k)
        fields.update(kwargs)
        return DeviceSpec(**fields)

    # --- printing and comparison --------------------------------------------------------
    def to_string(self) -> str:
        """The canonical string, e.g. "/job:ps/replica:0/task:1/device:CPU:*"."""
        out = []
        if self._job is not None:
            out.append("/job:" + self._job)
        if self._replica is not None:
            out.append("/replica:%d" % self._replica)
        if self._task is not None:
            out.append("/task:%d" % self._task)
        if self._device_type is not None:
            index = "*" if self._device_index is None else str(self._device_index)
            out.append("/device:%s:%s" % (self._device_type, index))
        return "".join(out)

    def __str__(self):
        return self.__repr__()

    def __repr__(self):
        return ("<DeviceSpec(job=%s, replica=%s, task=%s, device_type=%s, device_index=%s)>"
                % (self._job, self._replica, self._task, self._device_type,
                   self._device_index))

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
    """Merges an inner device spec string over an outer one (inner fields win)."""
    if not outer:
        return canonical(inner)
    if not inner:
        return canonical(outer)
    key = (outer, inner)
    r = _CACHE.get(key)
    if r is None:
        r = DeviceSpec.from_string(outer).make_merged_spec(
            DeviceSpec.from_string(inner)).to_string()
        _CACHE[key] = r
    return r


def spec_string(device) -> str:
    """The canonical string of a DeviceSpec, a spec string, or None ("")."""
    if device is None:
        return ""
    if isinstance(device, DeviceSpec):
        return device.to_string()
    if hasattr(device, "to_string"):  # another DeviceSpec-like object
        return canonical(device.to_string())
    return canonical(device)
