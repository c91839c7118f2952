"""Session and run configuration: ConfigProto, RunOptions, RunMetadata and friends.

Plain classes accepting TF1's field names (keyword arguments or attribute assignment,
nested messages created on access), so TF1 configuration code runs unchanged. Fields
tensorweave has no use for are accepted and stored.

On the wire they are TF's messages (the copies of config.proto that the tensorboard
package ships): `SerializeToString()` writes the fields TF's message has,
`ParseFromString(b)` reads them back, and `FromString(b)` returns TF's message itself
(what a program reading a RunMetadata out of an event file wants).
"""
from __future__ import annotations

import copy
import numbers
from typing import Any, Dict

# a scalar field's default type -> the values protobuf accepts for it
_SCALAR_TYPES = {bool: numbers.Integral, int: numbers.Integral, float: numbers.Real,
                 str: (str, bytes)}


_PROTO_MODULES = tuple("tensorboard.compat.proto.%s_pb2" % m for m in (
    "config", "step_stats", "cost_graph", "tensor_shape", "tensor_description",
    "allocation_description"))
_MISSING = object()


class _Enum:
    """A protobuf enum's names and values (`RunOptions.TraceLevel.Name(3)`)."""

    def __init__(self, name: str, values: Dict[str, int]):
        self._name, self._values = name, dict(values)

    def Name(self, number: int) -> str:  # noqa: N802 - protobuf API
        for k, v in self._values.items():
            if v == number:
                return k
        raise ValueError("Enum %s has no name defined for value %r" % (self._name, number))

    def Value(self, name: str) -> int:  # noqa: N802
        if name not in self._values:
            raise ValueError("Enum %s has no value defined for name %r" % (self._name, name))
        return self._values[name]

    def keys(self) -> list:
        return list(self._values)

    def values(self) -> list:
        return list(self._values.values())

    def items(self) -> list:
        return list(self._values.items())


class _Message:
    """A protobuf-like record: declared fields with defaults, nested messages."""

    _fields: Dict[str, Any] = {}
    _enums: Dict[str, "_Enum"] = {}  # enum fields: their value names
    # from _fields, per class: the plain defaults, and the fields each new record makes
    # its own value for (nested messages, lists, dicts); a Session.run under hooks makes
    # two records a step
    _plain: Dict[str, Any] = {}
    _made: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        made = [(k, d if isinstance(d, type) and issubclass(d, _Message) else type(d))
                for k, d in cls._fields.items()
                if isinstance(d, (list, dict)) or isinstance(d, type) and issubclass(d, _Message)]
        cls._made = tuple(made)
        cls._plain = {k: d for k, d in cls._fields.items() if k not in dict(made)}

    def __init__(self, **kwargs):
        fields = self.__dict__
        fields.update(self._plain)
        for k, make in self._made:
            fields[k] = make()
        for k, v in kwargs.items():
            if k not in self._fields:  # protobuf's class for a constructor argument
                raise ValueError('Protocol message %s has no "%s" field.'
                                 % (type(self).__name__, k))
            setattr(self, k, v)

    def __setattr__(self, k, v):
        if k not in self._fields:
            raise AttributeError("%s has no field named %r" % (type(self).__name__, k))
        default = self._fields[k]
        enum = self._enums.get(k)
        if enum is not None and isinstance(v, str):
            v = enum.Value(v)  # protobuf takes an enum field's value by its name too
        accepted = _SCALAR_TYPES.get(type(default))
        if accepted is not None and not isinstance(v, accepted):
            raise TypeError("%r has type %s, but expected one of: %s (field %s.%s)"
                            % (v, type(v).__name__, type(default).__name__,
                               type(self).__name__, k))
        if isinstance(default, type) and issubclass(default, _Message) and isinstance(v, dict):
            v = default(**v)
        if isinstance(default, dict) and not isinstance(v, dict):
            v = dict(v)
        object.__setattr__(self, k, v)

    # --- the wire form: TF's message of the same name ---------------------------------
    @classmethod
    def _proto_class(cls):
        import importlib
        for module in _PROTO_MODULES:
            proto_class = getattr(importlib.import_module(module), cls.__name__, None)
            if proto_class is not None:
                return proto_class
        raise NotImplementedError("%s has no TensorFlow wire form" % cls.__name__)

    def _to_proto(self, proto) -> None:
        """Sets the fields of TF's message `proto` that this record has set."""
        names = proto.DESCRIPTOR.fields_by_name
        for k, default in self._fields.items():
            v = getattr(self, k)
            if k not in names or v is None or v is default or \
                    (not isinstance(v, _Message) and v == default):
                continue
            if isinstance(v, _Message):
                v._to_proto(getattr(proto, k))
            elif isinstance(v, dict):
                getattr(proto, k).update(v)
            elif isinstance(v, list):
                field = getattr(proto, k)
                for item in v:
                    if isinstance(item, _Message):
                        item._to_proto(field.add())
                    elif hasattr(item, "DESCRIPTOR"):
                        field.add().CopyFrom(item)
                    else:
                        field.append(item)
            else:
                setattr(proto, k, v)

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf API
        """TF's serialized message of this record."""
        proto = self._proto_class()()
        self._to_proto(proto)
        return proto.SerializeToString()

    @classmethod
    def FromString(cls, data: bytes):  # noqa: N802
        """TF's message (tensorboard's copy) parsed from `data`."""
        return cls._proto_class().FromString(data)

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802
        """Sets this record's fields from TF's serialized message (repeated messages
        stay TF's messages)."""
        self._from_proto(self._proto_class().FromString(data))

    def _from_proto(self, proto) -> None:
        for fd, v in proto.ListFields():
            if fd.name not in self._fields:
                continue
            default = self._fields[fd.name]
            if isinstance(default, type) and issubclass(default, _Message):
                getattr(self, fd.name)._from_proto(v)
            elif isinstance(default, dict):
                setattr(self, fd.name, dict(v))
            elif isinstance(default, list):
                setattr(self, fd.name, list(v))
            else:
                setattr(self, fd.name, v)

    def CopyFrom(self, other) -> None:  # noqa: N802 - protobuf API
        """Makes this record a deep copy of `other` (nothing is shared with it)."""
        for k in self._fields:
            object.__setattr__(self, k, copy.deepcopy(getattr(other, k)))

    def MergeFrom(self, other) -> None:  # noqa: N802
        """Protobuf's merge: `other`'s set scalars overwrite, its records merge into
        these, its lists extend these and its maps update these (as copies)."""
        for k, default in self._fields.items():
            v = getattr(other, k)
            mine = getattr(self, k)
            if isinstance(mine, _Message):
                mine.MergeFrom(v)
            elif isinstance(mine, list):
                mine.extend(copy.deepcopy(v))
            elif isinstance(mine, dict):
                mine.update(copy.deepcopy(v))
            elif v != default:
                object.__setattr__(self, k, copy.deepcopy(v))

    def HasField(self, name) -> bool:  # noqa: N802
        """Whether a scalar differs from its default, or a record holds any set field.

        Raises:
          ValueError: `name` is no field, or a list or map field (as protobuf).
        """
        default = self._fields.get(name, _MISSING)
        if default is _MISSING or isinstance(default, (list, dict)):
            raise ValueError('Protocol message %s has no singular "%s" field.'
                             % (type(self).__name__, name))
        value = getattr(self, name)
        if isinstance(value, _Message):
            return value != type(value)()
        return value != default

    def ClearField(self, name) -> None:  # noqa: N802
        """Sets the field back to its default."""
        if name not in self._fields:
            raise ValueError('Protocol message has no "%s" field.' % name)
        default = self._fields[name]
        for k, make in self._made:
            if k == name:
                default = make()
        object.__setattr__(self, name, default)

    def Clear(self) -> None:  # noqa: N802
        """Sets every field back to its default."""
        for k in self._fields:
            self.ClearField(k)

    def IsInitialized(self) -> bool:  # noqa: N802 - proto3 messages have no required fields
        return True

    def ByteSize(self) -> int:  # noqa: N802
        return len(self.SerializeToString())

    def ListFields(self) -> list:  # noqa: N802
        """(field descriptor, value) of the fields set, as TF's message lists them."""
        proto = self._proto_class()()
        self._to_proto(proto)
        return proto.ListFields()

    def __str__(self):
        """The protobuf text format of TF's message, as `print(config)` shows it in TF."""
        try:
            proto = self._proto_class()()
        except NotImplementedError:  # a record of tensorweave's own
            return repr(self)
        self._to_proto(proto)
        return str(proto)

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, k) == getattr(other, k) for k in self._fields)

    def __repr__(self):
        parts = ["%s=%r" % (k, getattr(self, k)) for k in self._fields
                 if getattr(self, k) != self._fields[k] and not isinstance(
                     getattr(self, k), _Message)]
        return "%s(%s)" % (type(self).__name__, ", ".join(parts))


class OptimizerOptions(_Message):
    L1 = 0
    L0 = -1
    DEFAULT = 0
    OFF = -1
    ON_1 = 1
    ON_2 = 2
    Level = _Enum("Level", {"L1": 0, "L0": -1})
    GlobalJitLevel = _Enum("GlobalJitLevel", {"DEFAULT": 0, "OFF": -1, "ON_1": 1, "ON_2": 2})
    _enums = {"opt_level": Level, "global_jit_level": GlobalJitLevel}
    _fields = {"do_common_subexpression_elimination": True, "do_constant_folding": True,
               "opt_level": 0, "global_jit_level": 0, "do_function_inlining": True,
               "max_folded_constant_in_bytes": 10 * 1024 * 1024}


class RewriterConfig(_Message):
    ON = 1
    OFF = 2
    DEFAULT = 0
    AGGRESSIVE = 3
    _fields = {"disable_meta_optimizer": False, "constant_folding": 0,
               "dependency_optimization": 0, "arithmetic_optimization": 0,
               "memory_optimization": 0, "layout_optimizer": 0, "remapping": 0,
               "min_graph_nodes": 0, "shape_optimization": 0, "loop_optimization": 0,
               "function_optimization": 0, "debug_stripper": 0,
               "disable_model_pruning": False, "scoped_allocator_optimization": 0,
               "pin_to_host_optimization": 0, "implementation_selector": 0,
               "auto_mixed_precision": 0, "use_plugin_optimizers": 0,
               "auto_mixed_precision_onednn_bfloat16": 0, "auto_mixed_precision_mkl": 0,
               "meta_optimizer_iterations": 0}


class GraphOptions(_Message):
    _fields = {"optimizer_options": OptimizerOptions, "rewrite_options": RewriterConfig,
               "enable_recv_scheduling": False, "build_cost_model": 0,
               "infer_shapes": False, "place_pruned_graph": False,
               "enable_bfloat16_sendrecv": False, "timeline_step": 0}


class _VirtualDevices(_Message):
    """GPUOptions.Experimental.VirtualDevices: the memory limits (MB) of the virtual
    devices one physical accelerator is split into."""

    _fields = {"memory_limit_mb": [], "priority": [], "device_ordinal": []}


class _GPUExperimental(_Message):
    """GPUOptions.Experimental. tensorweave reads `virtual_devices`: the memory_limit_mb
    lists of its entries, flattened, are the limits of SIM:0, SIM:1, ..."""

    VirtualDevices = _VirtualDevices
    _fields = {"virtual_devices": [], "use_unified_memory": False,
               "num_dev_to_dev_copy_streams": 0, "collective_ring_order": "",
               "timestamped_allocator": False, "kernel_tracker_max_interval": 0,
               "kernel_tracker_max_bytes": 0, "kernel_tracker_max_pending": 0,
               "internal_fragmentation_fraction": 0.0, "use_cuda_malloc_async": False,
               "disallow_retry_on_allocation_failure": False}

    def __setattr__(self, k, v):
        if k == "virtual_devices":
            v = [_VirtualDevices(**e) if isinstance(e, dict) else e for e in v]
        _Message.__setattr__(self, k, v)


class GPUOptions(_Message):
    """GPU options (TF1 `tf.GPUOptions`); `experimental.virtual_devices` sets the memory
    limits of the simulated accelerators (runtime/devices.py)."""

    Experimental = _GPUExperimental
    _fields = {"per_process_gpu_memory_fraction": 0.0, "allow_growth": False,
               "allocator_type": "", "visible_device_list": "",
               "force_gpu_compatible": False, "deferred_deletion_bytes": 0,
               "polling_active_delay_usecs": 0, "experimental": _GPUExperimental}


class _ConfigExperimental(_Message):
    """ConfigProto.Experimental. tensorweave reads `placement`, a field of its own: the
    placement strategy of unconstrained ops, "default" (TF1's rule: the first device of
    the preferred type) or "cost_model" (white paper §3.2: greedy earliest-finish
    simulation over the devices; runtime/placer.py), e.g.
    ConfigProto(experimental={'placement': 'cost_model'}); and `transfer_compression`,
    also its own: "" (the default: off), "bfloat16" or "float16", the type float32
    tensors travel as between devices (lossy, white paper §5.5: narrowed by the `_Send`,
    widened back to float32 by the `_Recv`; runtime/send_recv_ops.py); and
    `fuse_host_partitions`, its own too: True (the default) runs a step whose control
    flow spans CPU devices of this process as one compiled program, False as
    partitions exchanging Send/Recv (runtime/partitioned_plan.runs_fused); and
    `deterministic`, its own: True makes scheduling order, queue draws and unseeded
    random ops reproducible, so two runs of a concurrent training program give
    bit-identical variables (runtime/determinism.py; also on with the environment
    variable TF_DETERMINISTIC_OPS=1 or TW_DETERMINISTIC=1); and `record_inputs`, its
    own: a directory where the session records its external inputs (feeds, reader
    contents, seeds) for `tensorweave.replay.replay` (tensorweave/replay.py; implies
    `deterministic`)."""

    _fields = {"collective_group_leader": "", "executor_type": "", "recv_buf_max_chunk": 0,
               "use_numa_affinity": False, "disable_thread_spinning": False,
               "share_cluster_devices_in_session": False, "session_metadata": None,
               "optimize_for_static_graph": False, "disable_output_partition_graphs": False,
               "placement": "", "transfer_compression": "", "fuse_host_partitions": True,
               "deterministic": False, "record_inputs": ""}


class ConfigProto(_Message):
    """Session configuration (TF1 `tf.ConfigProto`).

    Fields used: device_count (e.g. {'CPU': 2, 'SIM': 1}: CPU devices and simulated
    accelerators), inter_op_parallelism_threads, intra_op_parallelism_threads,
    graph_options.optimizer_options (do_common_subexpression_elimination,
    do_constant_folding, opt_level), graph_options.rewrite_options.disable_meta_optimizer,
    log_device_placement, allow_soft_placement, operation_timeout_in_ms,
    gpu_options.experimental.virtual_devices (memory limits of SIM devices).
    Fields of tensorweave's own (TF1 has no such setting): device_memory_limit_mb, a dict
    device type -> MB limiting each device of that type (e.g. {'CPU': 64}), and
    sim_copy_latency_ms, a delay added to each host<->SIM copy (for tests).
    """

    Experimental = _ConfigExperimental
    _fields = {"device_count": {}, "intra_op_parallelism_threads": 0,
               "inter_op_parallelism_threads": 0, "use_per_session_threads": False,
               "allow_soft_placement": False, "log_device_placement": False,
               "graph_options": GraphOptions, "gpu_options": GPUOptions,
               "operation_timeout_in_ms": 0, "isolate_session_state": False,
               "device_filters": [], "placement_period": 0,
               "share_cluster_devices_in_session": False,
               "experimental": _ConfigExperimental,
               "session_inter_op_thread_pool": [], "device_memory_limit_mb": {},
               "sim_copy_latency_ms": 0.0}


class RunOptions(_Message):
    """Per-run options (TF1 `tf.RunOptions`): trace_level, timeout_in_ms,
    output_partition_graphs, report_tensor_allocations_upon_oom."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    TraceLevel = _Enum("TraceLevel", {"NO_TRACE": 0, "SOFTWARE_TRACE": 1,
                                      "HARDWARE_TRACE": 2, "FULL_TRACE": 3})
    _enums = {"trace_level": TraceLevel}
    _fields = {"trace_level": 0, "timeout_in_ms": 0, "inter_op_thread_pool": 0,
               "output_partition_graphs": False, "debug_options": None,
               "report_tensor_allocations_upon_oom": False, "experimental": None}


class AllocationDescription(_Message):
    """The bytes of one output and the allocator that counted them (TF's fields)."""

    _fields = {"requested_bytes": 0, "allocated_bytes": 0, "allocator_name": "",
               "allocation_id": 0, "has_single_reference": False, "ptr": 0}


class TensorShapeProto(_Message):
    """A shape as TF's TensorShapeProto: `dim` is a list of Dim(size=...)."""

    class Dim(_Message):
        _fields = {"size": 0, "name": ""}

    _fields = {"dim": [], "unknown_rank": False}


class TensorDescription(_Message):
    """An output's dtype (the TF DataType enum, e.g. 1 for float32), shape and bytes."""

    _fields = {"dtype": 0, "shape": TensorShapeProto,
               "allocation_description": AllocationDescription}


class NodeOutput(_Message):
    _fields = {"slot": 0, "tensor_description": TensorDescription}


class AllocatorMemoryUsed(_Message):
    """A kernel's use of its device's allocator: total_bytes/peak_bytes/live_bytes are
    the bytes of its outputs, allocator_bytes_in_use what the allocator counted in use
    when the kernel ended."""

    _fields = {"allocator_name": "", "total_bytes": 0, "peak_bytes": 0, "live_bytes": 0,
               "allocation_records": [], "allocator_bytes_in_use": 0}


class MemoryStats(_Message):
    _fields = {"temp_memory_size": 0, "persistent_memory_size": 0,
               "persistent_tensor_alloc_ids": [], "device_temp_memory_size": 0,
               "device_persistent_memory_size": 0,
               "device_persistent_tensor_alloc_ids": []}


class NodeExecStats(_Message):
    """One kernel execution of a traced run (TF's NodeExecStats field names).

    node_name: the op's name. all_start_micros: wall-clock start (µs since the epoch,
    comparable across the tasks of a cluster on one machine). op_start_rel_micros /
    op_end_rel_micros / all_end_rel_micros: start (0) and end of the kernel relative to
    all_start_micros. timeline_label: "name = Type(inputs...)" as in TF (a `_Send` or
    `_Recv`: "name = _Send(tensor_name @recv_device)", "... = _Recv(tensor_name
    @send_device)"). output: one NodeOutput per live output (slot, dtype, shape,
    bytes). memory: one AllocatorMemoryUsed for the device's allocator. thread_id: the
    thread that ran the kernel (`threading.get_ident()`; pool threads are named
    tw-inter-op-N, see DeviceStepStats.thread_names).
    Fields tensorweave adds: output_bytes (the outputs' bytes), frame_name, the name of
    the while-loop frame the kernel ran in ("" outside loops), and iteration, the
    iteration of that frame (0 outside loops); a kernel inside a loop gets one record
    per iteration it ran in.
    """

    _fields = {"node_name": "", "all_start_micros": 0, "op_start_rel_micros": 0,
               "op_end_rel_micros": 0, "all_end_rel_micros": 0, "timeline_label": "",
               "output": [], "memory": [], "memory_stats": MemoryStats,
               "scheduled_micros": 0, "referenced_tensor": [],
               "output_bytes": 0, "thread_id": 0, "frame_name": "", "iteration": 0}


class DeviceStepStats(_Message):
    """The records of one device: `thread_names` maps the thread ids of its records
    to the threads' names. Fields tensorweave adds: peak_bytes (the allocator's peak
    during the step) and total_bytes (bytes it counted during the step)."""

    _fields = {"device": "", "node_stats": [], "thread_names": {}, "peak_bytes": 0,
               "total_bytes": 0}


class StepStats(_Message):
    _fields = {"dev_stats": []}


class CostGraphDef(_Message):
    """The cost graph of a run (TF's message; tensorweave leaves it empty)."""

    _fields = {"node": [], "cost": []}


class RunMetadata(_Message):
    """Filled by `Session.run(..., run_metadata=md)`: step_stats (per-device node timings
    and allocator peaks when tracing) and partition_graphs when requested."""

    _fields = {"step_stats": StepStats, "partition_graphs": [], "cost_graph": CostGraphDef,
               "function_graphs": []}

    def _to_proto(self, proto) -> None:
        from tensorweave.framework import graph_def_proto
        from tensorweave.runtime.step_stats import fill_proto
        fill_proto(proto.step_stats, self.step_stats)
        for g in self.partition_graphs:
            proto.partition_graphs.add().CopyFrom(
                g if graph_def_proto.is_graph_def_proto(g) else
                graph_def_proto.graph_def_to_proto(g))


def optimizations_enabled(config) -> Dict[str, bool]:
    """Which plan-time graph optimizations a ConfigProto asks for."""
    if config is None:
        return {"cse": True, "fold": True, "prune_noops": True, "remap": True}
    go = config.graph_options
    oo = go.optimizer_options
    level_on = oo.opt_level != OptimizerOptions.L0
    rewrite_on = not go.rewrite_options.disable_meta_optimizer
    return {"cse": level_on and oo.do_common_subexpression_elimination,
            "fold": level_on and oo.do_constant_folding,
            "prune_noops": rewrite_on and go.rewrite_options.dependency_optimization
            != RewriterConfig.OFF,
            "remap": rewrite_on and go.rewrite_options.remapping != RewriterConfig.OFF}
