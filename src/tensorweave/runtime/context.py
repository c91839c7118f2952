"""The process-wide runtime settings of `tf.config`, and the ConfigProto they make.

TF 2's `tf.config` functions set the eager context's configuration; in TF1 graph mode that
configuration is what a `tf.Session` created without `config=` runs with (TF's
BaseSession takes `context.context().config` when given none). tensorweave keeps the same
settings here: physical devices (the CPU and the GPUs CuPy sees), which are visible, how
a CPU is split into logical devices (ConfigProto.device_count), thread pools, soft and
logged placement, the jit switch and the graph rewriter's options, GPU memory growth.

As in TF, the device and thread settings freeze once the runtime is initialized (by
`list_logical_devices` and the memory queries); `Session()` reads them each time, so a
change before initialization reaches every later session.
"""
import collections
import threading
from typing import Dict, List, Optional, Sequence

import numpy as np

from tensorweave.framework.api_export import tf_export

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
tf_export("config.PhysicalDevice")(PhysicalDevice)
tf_export("config.LogicalDevice")(LogicalDevice)


@tf_export("config.LogicalDeviceConfiguration",
           "config.experimental.VirtualDeviceConfiguration")
class LogicalDeviceConfiguration(collections.namedtuple(
        "LogicalDeviceConfiguration",
        ["memory_limit", "experimental_priority", "experimental_device_ordinal"])):
    """One logical device a physical device is split into (memory_limit in MB; GPUs)."""

    def __new__(cls, memory_limit=None, experimental_priority=None,
                experimental_device_ordinal=None):
        return super().__new__(cls, memory_limit, experimental_priority,
                               experimental_device_ordinal)


# RewriterConfig options `set_experimental_options` takes: toggles become ON/OFF, the rest
# are copied as they are (TF's context.config).
_REWRITER_TOGGLES = (
    "layout_optimizer", "constant_folding", "shape_optimization", "remapping",
    "arithmetic_optimization", "dependency_optimization", "loop_optimization",
    "function_optimization", "debug_stripper", "scoped_allocator_optimization",
    "pin_to_host_optimization", "implementation_selector", "auto_mixed_precision",
    "use_plugin_optimizers", "auto_mixed_precision_onednn_bfloat16",
    "auto_mixed_precision_mkl")
_REWRITER_VALUES = ("disable_model_pruning", "disable_meta_optimizer", "min_graph_nodes")
_DEVICE_POLICIES = ("silent", "warn", "explicit", "silent_for_int32")


class _Context:
    """The settings, with their defaults (TF's, in graph mode)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.initialized = False
        self.physical: Optional[List[PhysicalDevice]] = None
        self.visible: Optional[List[PhysicalDevice]] = None
        self.virtual: Dict[PhysicalDevice, List[LogicalDeviceConfiguration]] = {}
        self.memory_growth: Dict[PhysicalDevice, bool] = {}
        self.intra_op_threads: Optional[int] = None
        self.inter_op_threads: Optional[int] = None
        self.soft_placement: Optional[bool] = None
        self.log_placement: Optional[bool] = None
        self.jit: Optional[bool] = None
        self.rewriter: Dict[str, object] = {}
        self.device_policy = "silent"
        self.synchronous = True
        self.tensor_float_32 = True
        self.devices = None  # the context's own DeviceManager, made on first query
        self.mixed_precision_rewrite = False  # enable_mixed_precision_graph_rewrite
        self.plain_session_created = False  # a session made without that rewrite
        self.changed = False  # whether a Session without config= needs a ConfigProto

    def physical_devices(self) -> List[PhysicalDevice]:
        if self.physical is None:
            from tensorweave.runtime.gpu import gpu_count
            self.physical = [PhysicalDevice("/physical_device:CPU:0", "CPU")] + [
                PhysicalDevice("/physical_device:GPU:%d" % i, "GPU")
                for i in range(gpu_count())]
        return self.physical


_CONTEXT = _Context()


def _ctx() -> _Context:
    return _CONTEXT


def _reset_for_tests() -> None:
    """Forgets every setting (a fresh process's state); tests only."""
    global _CONTEXT
    _CONTEXT = _Context()


def _set(name: str, value, frozen_message: Optional[str] = None) -> None:
    c = _ctx()
    with c.lock:
        if frozen_message and c.initialized and getattr(c, name) != value:
            raise RuntimeError(frozen_message)
        setattr(c, name, value)
        c.changed = True


def _check_device(device, what: str = "device") -> PhysicalDevice:
    if device not in _ctx().physical_devices():
        raise ValueError("Unrecognized %s: %r" % (what, device))
    return device


def _matches(device_type: Optional[str], d) -> bool:
    return device_type is None or d.device_type == device_type


# --- devices ------------------------------------------------------------------------------

@tf_export("config.list_physical_devices", "config.experimental.list_physical_devices")
def list_physical_devices(device_type: Optional[str] = None) -> List[PhysicalDevice]:
    """The physical devices of this process: the CPU and each GPU CuPy sees.

    Args:
      device_type: "CPU" or "GPU" to list only those (other names list none).

    Returns:
      A list of `tf.config.PhysicalDevice`.
    """
    return [d for d in _ctx().physical_devices() if _matches(device_type, d)]


@tf_export("config.get_visible_devices", "config.experimental.get_visible_devices")
def get_visible_devices(device_type: Optional[str] = None) -> List[PhysicalDevice]:
    """The physical devices the runtime may use (all of them unless set otherwise)."""
    c = _ctx()
    visible = c.visible if c.visible is not None else c.physical_devices()
    return [d for d in visible if _matches(device_type, d)]


@tf_export("config.set_visible_devices", "config.experimental.set_visible_devices")
def set_visible_devices(devices, device_type: Optional[str] = None) -> None:
    """Sets the physical devices the runtime may use.

    Args:
      devices: a PhysicalDevice or a list of them.
      device_type: only devices of this type are changed; the others stay as they are.

    Raises:
      ValueError: an argument is not a physical device of this process.
      RuntimeError: the runtime is already initialized.
    """
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    elif not isinstance(devices, (list, tuple)):
        raise ValueError("Unrecognized device: %r" % (devices,))
    devices = [_check_device(d) for d in devices]
    kept = [d for d in get_visible_devices() if not _matches(device_type, d)]
    new = [d for d in _ctx().physical_devices() if d in kept or d in devices]
    _set("visible", new, "Visible devices cannot be modified after being initialized")


@tf_export("config.get_logical_device_configuration",
           "config.experimental.get_virtual_device_configuration")
def get_logical_device_configuration(device: PhysicalDevice):
    """The logical devices `device` is split into, or None when it is not split."""
    _check_device(device)
    got = _ctx().virtual.get(device)
    return list(got) if got is not None else None


@tf_export("config.set_logical_device_configuration",
           "config.experimental.set_virtual_device_configuration")
def set_logical_device_configuration(device: PhysicalDevice,
                                     logical_devices: Sequence[LogicalDeviceConfiguration]
                                     ) -> None:
    """Splits a physical device into logical devices.

    A CPU split into n gives sessions n CPU devices (`/device:CPU:0` ... `CPU:n-1`, as
    `ConfigProto(device_count={'CPU': n})`). A GPU takes one configuration, whose
    memory_limit caps what the runtime allocates on it.

    Args:
      device: a PhysicalDevice from `list_physical_devices`.
      logical_devices: a list of `tf.config.LogicalDeviceConfiguration`.

    Raises:
      ValueError: an unknown device, an empty CPU split, or a GPU split into several
        devices (tensorweave runs one device per GPU).
      RuntimeError: the runtime is already initialized.
    """
    _check_device(device)
    logical_devices = list(logical_devices)
    if not all(isinstance(d, LogicalDeviceConfiguration) for d in logical_devices):
        raise ValueError("logical_devices must be tf.config.LogicalDeviceConfiguration "
                         "values, got %r" % (logical_devices,))
    if device.device_type == "CPU" and not logical_devices:
        raise ValueError("A CPU needs at least one logical device")
    if device.device_type == "GPU" and len(logical_devices) > 1:
        raise ValueError("tensorweave runs one device per GPU: %s cannot be split into "
                         "%d logical devices" % (device.name, len(logical_devices)))
    virtual = dict(_ctx().virtual)
    virtual[device] = logical_devices
    _set("virtual", virtual, "Virtual devices cannot be modified after being initialized")


@tf_export("config.list_logical_devices", "config.experimental.list_logical_devices")
def list_logical_devices(device_type: Optional[str] = None) -> List[LogicalDevice]:
    """The devices sessions run on (initializes the runtime: device settings freeze).

    Args:
      device_type: "CPU" or "GPU" to list only those.

    Returns:
      A list of `tf.config.LogicalDevice` named as in `tf.device` ("/device:CPU:0").
    """
    c = _ctx()
    c.initialized = True
    counts: Dict[str, int] = collections.Counter()
    out = []
    for d in get_visible_devices():
        for _ in c.virtual.get(d) or [None]:
            out.append(LogicalDevice("/device:%s:%d" % (d.device_type, counts[d.device_type]),
                                     d.device_type))
            counts[d.device_type] += 1
    return [d for d in out if _matches(device_type, d)]


@tf_export("config.experimental.set_memory_growth")
def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Whether the runtime grows its memory on a GPU as needed (GPUOptions.allow_growth).

    Raises:
      ValueError: `device` is not a GPU of this process.
      RuntimeError: the runtime is already initialized.
    """
    _check_device(device)
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    growth = dict(_ctx().memory_growth)
    growth[device] = bool(enable)
    _set("memory_growth", growth,
         "Physical devices cannot be modified after being initialized")


@tf_export("config.experimental.get_memory_growth")
def get_memory_growth(device: PhysicalDevice) -> bool:
    """Whether memory growth is on for a GPU (KeyError for a device never set, as TF)."""
    _check_device(device)
    if device.device_type != "GPU":
        raise KeyError(device)
    return _ctx().memory_growth.get(device, False)


def _context_device(device: str):
    """The context's own Device for a "CPU:0"-style name (initializes the runtime).

    Like TF's eager context, the context has devices of its own, apart from every
    session's: a graph-mode program allocates nothing on them, so their counts stay 0,
    as TF reports in graph mode."""
    from tensorweave.framework.device_spec import DeviceSpec
    from tensorweave.runtime.devices import DeviceManager
    try:
        spec = DeviceSpec.from_string(device)
    except (ValueError, TypeError):
        spec = None
    if spec is None or spec.device_type is None or spec.device_index is None:
        raise ValueError("Failed parsing device name: %r. Note a valid device string "
                         "should at least contain a device type and a device index, like "
                         "\"GPU:0\"." % (device,))
    c = _ctx()
    with c.lock:
        c.initialized = True
        if c.devices is None:
            c.devices = DeviceManager.from_config(default_session_config())
    found = c.devices.find(spec.to_string())
    if not found:
        raise ValueError("No matching devices found for %r" % (device,))
    return found[0]


@tf_export("config.experimental.get_memory_info")
def get_memory_info(device: str) -> Dict[str, int]:
    """The memory the runtime's allocator holds on a device of the context.

    Args:
      device: a device name such as "GPU:0" or "/device:CPU:0".

    Returns:
      {'current': bytes in use, 'peak': the most in use since the last reset}.

    Raises:
      ValueError: a name that is not a device, or a device this process lacks.
    """
    allocator = _context_device(device).allocator
    return {"current": int(allocator.bytes_in_use), "peak": int(allocator.peak_bytes)}


@tf_export("config.experimental.get_memory_usage")
def get_memory_usage(device: str) -> int:
    """Bytes in use on a device of the context (TF's older form of get_memory_info)."""
    return get_memory_info(device)["current"]


@tf_export("config.experimental.reset_memory_stats")
def reset_memory_stats(device: str) -> None:
    """Starts a device's peak memory count again from what is in use now."""
    _context_device(device).allocator.reset_peak()


@tf_export("config.experimental.get_device_details")
def get_device_details(device: PhysicalDevice) -> Dict[str, object]:
    """Details of a physical device: {'device_name', 'compute_capability'} for a GPU."""
    _check_device(device)
    if device.device_type != "GPU":
        return {}
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(int(device.name.rsplit(":", 1)[1]))
    name = props["name"]
    return {"device_name": name.decode() if isinstance(name, bytes) else name,
            "compute_capability": (int(props["major"]), int(props["minor"]))}


# --- threads, placement, optimizer ------------------------------------------------------

def _thread_count(n) -> int:
    """An int thread count (0: the system picks; negative: ConfigProto's "run in the
    caller's thread", as TF accepts)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError("The number of threads must be an int, got %r" % (n,))
    return int(n)


@tf_export("config.threading.get_intra_op_parallelism_threads")
def get_intra_op_parallelism_threads() -> int:
    """Threads one kernel may use (0: the system picks)."""
    return _ctx().intra_op_threads or 0


@tf_export("config.threading.set_intra_op_parallelism_threads")
def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Sets ConfigProto.intra_op_parallelism_threads of later sessions.

    Raises:
      RuntimeError: the runtime is already initialized.
    """
    _set("intra_op_threads", _thread_count(num_threads),
         "Intra op parallelism cannot be modified after initialization.")


@tf_export("config.threading.get_inter_op_parallelism_threads")
def get_inter_op_parallelism_threads() -> int:
    """Threads that run independent kernels at once (0: the system picks)."""
    return _ctx().inter_op_threads or 0


@tf_export("config.threading.set_inter_op_parallelism_threads")
def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Sets ConfigProto.inter_op_parallelism_threads of later sessions.

    Raises:
      RuntimeError: the runtime is already initialized.
    """
    _set("inter_op_threads", _thread_count(num_threads),
         "Inter op parallelism cannot be modified after initialization.")


@tf_export("config.get_soft_device_placement")
def get_soft_device_placement() -> bool:
    """Whether later sessions place an op elsewhere when its device cannot run it."""
    return bool(_ctx().soft_placement)


@tf_export("config.set_soft_device_placement")
def set_soft_device_placement(enabled: bool) -> None:
    """Sets ConfigProto.allow_soft_placement of later sessions."""
    _set("soft_placement", bool(enabled))


@tf_export("debugging.set_log_device_placement")
def set_log_device_placement(enabled: bool) -> None:
    """Sets ConfigProto.log_device_placement of later sessions."""
    _set("log_placement", bool(enabled))


@tf_export("debugging.get_log_device_placement")
def get_log_device_placement() -> bool:
    """Whether later sessions log where each op is placed."""
    return bool(_ctx().log_placement)


@tf_export("config.optimizer.get_jit")
def get_jit() -> str:
    """'autoclustering' when XLA's jit is switched on, else ''."""
    return "autoclustering" if _ctx().jit else ""


@tf_export("config.optimizer.set_jit")
def set_jit(enabled) -> None:
    """Sets OptimizerOptions.global_jit_level of later sessions (ON_1 or OFF).

    tensorweave has no XLA compiler: the level is recorded in the ConfigProto and
    kernels run as they always do, so values are the same either way.

    Args:
      enabled: True, False or "autoclustering" (True).

    Raises:
      ValueError: another string.
    """
    if isinstance(enabled, str) and enabled not in ("autoclustering", ""):
        raise ValueError("set_jit takes a bool or 'autoclustering', got %r" % (enabled,))
    _set("jit", bool(enabled))


@tf_export("config.optimizer.get_experimental_options")
def get_experimental_options() -> Dict[str, object]:
    """The graph rewriter's options set with `set_experimental_options`."""
    out = dict(_ctx().rewriter)
    out.setdefault("disable_model_pruning", False)
    out.setdefault("disable_meta_optimizer", False)
    return out


@tf_export("config.optimizer.set_experimental_options")
def set_experimental_options(options: Dict[str, object]) -> None:
    """Sets graph rewriter options of later sessions (RewriterConfig fields).

    Args:
      options: option name -> value; the toggles (constant_folding, layout_optimizer,
        ...) take bools, min_graph_nodes an int.

    Raises:
      ValueError: a name that is not a rewriter option.
    """
    unknown = sorted(set(options) - set(_REWRITER_TOGGLES) - set(_REWRITER_VALUES))
    if unknown:
        raise ValueError("Unknown optimizer options %s; the options are %s"
                         % (unknown, sorted(_REWRITER_TOGGLES + _REWRITER_VALUES)))
    merged = dict(_ctx().rewriter)
    merged.update(options)
    _set("rewriter", merged)


@tf_export("config.experimental.get_device_policy")
def get_device_policy() -> str:
    """The eager device policy (recorded; graph-mode placement does not use it)."""
    return _ctx().device_policy


@tf_export("config.experimental.set_device_policy")
def set_device_policy(device_policy: Optional[str]) -> None:
    """Sets the eager device policy: 'silent' (None), 'warn', 'explicit' or
    'silent_for_int32'. Graph-mode sessions copy between devices with Send/Recv whatever
    the policy, as TF1's do.

    Raises:
      ValueError: another value.
    """
    policy = "silent" if device_policy is None else device_policy
    if policy not in _DEVICE_POLICIES:
        raise ValueError("Invalid argument `device_policy`: %r. Expected one of %s"
                         % (device_policy, list(_DEVICE_POLICIES)))
    _ctx().device_policy = policy


@tf_export("config.experimental.get_synchronous_execution")
def get_synchronous_execution() -> bool:
    """Whether eager ops run synchronously (graph-mode runs always return when done)."""
    return _ctx().synchronous


@tf_export("config.experimental.set_synchronous_execution")
def set_synchronous_execution(enable: bool) -> None:
    """Records the eager execution mode; `Session.run` returns when its step is done
    either way, as in TF."""
    _ctx().synchronous = bool(enable)


@tf_export("config.experimental.tensor_float_32_execution_enabled")
def tensor_float_32_execution_enabled() -> bool:
    """Whether float32 matmuls and convolutions may use TensorFloat-32 on GPUs."""
    return _ctx().tensor_float_32


@tf_export("config.experimental.enable_tensor_float_32_execution")
def enable_tensor_float_32_execution(enabled: bool) -> None:
    """Allows or forbids TensorFloat-32 on GPUs (tensorweave's CuPy kernels compute in
    full float32 either way; CPUs have no TF32)."""
    _ctx().tensor_float_32 = bool(enabled)


# --- the ConfigProto of a session made without one ----------------------------------------

def session_config(config):
    """The ConfigProto a Session runs with, given the one it was passed (or None).

    None takes what tf.config set (`default_session_config`). While the mixed-precision
    graph rewrite is enabled, the session gets a copy with
    `rewrite_options.auto_mixed_precision = ON` unless the config turns it OFF, as TF's
    BaseSession does; tensorweave has no float16 rewrite, so the graph still runs in
    float32, as TF's does without a GPU that has one.
    """
    if config is None:
        config = default_session_config()
    c = _ctx()
    if not c.mixed_precision_rewrite and config is None:
        c.plain_session_created = True
        return None
    from tensorweave.runtime.config import ConfigProto, RewriterConfig
    amp = config.graph_options.rewrite_options.auto_mixed_precision if config else 0
    if c.mixed_precision_rewrite and amp != RewriterConfig.OFF:
        copy = ConfigProto()
        if config is not None:
            copy.CopyFrom(config)
        copy.graph_options.rewrite_options.auto_mixed_precision = RewriterConfig.ON
        return copy
    if amp != RewriterConfig.ON:
        c.plain_session_created = True
    return config


def set_mixed_precision_graph_rewrite(enabled: bool) -> None:
    """Records `enable/disable_mixed_precision_graph_rewrite` for later sessions."""
    _ctx().mixed_precision_rewrite = bool(enabled)


def mixed_precision_graph_rewrite_enabled() -> bool:
    return _ctx().mixed_precision_rewrite


def plain_session_created() -> bool:
    """Whether a session was made without the mixed-precision rewrite (TF warns when the
    rewrite is enabled afterwards: those sessions keep running without it)."""
    return _ctx().plain_session_created


def default_session_config():
    """The ConfigProto `Session()` runs with when given none: None when nothing has been
    set, so a plain session is built exactly as before."""
    c = _ctx()
    if not c.changed:
        return None
    from tensorweave.runtime.config import ConfigProto, OptimizerOptions, RewriterConfig
    config = ConfigProto()
    if c.intra_op_threads is not None:
        config.intra_op_parallelism_threads = c.intra_op_threads
    if c.inter_op_threads is not None:
        config.inter_op_parallelism_threads = c.inter_op_threads
    config.allow_soft_placement = bool(c.soft_placement)
    if c.log_placement is not None:
        config.log_device_placement = c.log_placement
    oo = config.graph_options.optimizer_options
    if c.jit is not None:
        oo.global_jit_level = OptimizerOptions.ON_1 if c.jit else OptimizerOptions.OFF
    rw = config.graph_options.rewrite_options
    for name, value in c.rewriter.items():
        if name in _REWRITER_TOGGLES:
            value = RewriterConfig.ON if value else RewriterConfig.OFF
        setattr(rw, name, value)
    counts = collections.Counter()
    limits = []
    for d in get_visible_devices():
        logical = c.virtual.get(d)
        counts[d.device_type] += len(logical) if logical else 1
        if d.device_type == "GPU" and logical and logical[0].memory_limit is not None:
            limits.append(logical[0].memory_limit)
    config.device_count = {"CPU": counts["CPU"], "GPU": counts["GPU"]}
    if limits:  # one limit for every GPU: the device manager's per-type limit
        config.device_memory_limit_mb = {"GPU": min(limits)}
    growth = set(c.memory_growth.values())
    if len(growth) > 1:
        raise ValueError("Memory growth cannot differ between GPU devices")
    if growth:
        config.gpu_options.allow_growth = growth.pop()
    return config
