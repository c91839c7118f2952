"""tf.data.Options: the options a dataset carries (`Dataset.with_options`,
`Dataset.options()`), with TF's option tree, type checks, defaults and merging.

Every option here is one TF documents as a permission or a hint to its runtime:
`deterministic=False` allows elements out of order, the optimizations rewrite the
pipeline without changing its elements, the threading and autotuning options size
thread pools. tensorweave runs each pipeline as written and in order, so no option
changes the elements a pipeline yields; the options are kept, merged and read back as
TF does, so programs that set them run unchanged.
"""
from __future__ import annotations

import enum
from typing import Dict, Tuple

from tensorweave.framework.api_export import tf_export


@tf_export("data.experimental.AutoShardPolicy")
class AutoShardPolicy(enum.IntEnum):
    """How tf.distribute shards a dataset among workers (TF's values)."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


@tf_export("data.experimental.ExternalStatePolicy")
class ExternalStatePolicy(enum.Enum):
    """What serializing a dataset that holds external state does."""
    WARN = 0
    IGNORE = 1
    FAIL = 2


@tf_export("data.experimental.AutotuneAlgorithm")
class AutotuneAlgorithm(enum.Enum):
    """The algorithm TF's autotuner uses."""
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class OptionsBase:
    """A set of options: `_FIELDS` maps each name to its type (a value must be an
    instance of it; an OptionsBase subclass is a nested set, made on first read).
    `_ALIASES` maps TF's deprecated names to the names they stand for. An option never
    set reads as None."""

    _FIELDS: Dict[str, type] = {}
    _ALIASES: Dict[str, str] = {}

    def __init__(self):
        object.__setattr__(self, "_values", {})

    def _field(self, name: str) -> Tuple[str, type]:
        name = self._ALIASES.get(name, name)
        kind = self._FIELDS.get(name)
        if kind is None:
            raise AttributeError("Cannot set the property %s on %s."
                                 % (name, type(self).__name__))
        return name, kind

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            name, kind = self._field(name)
        except AttributeError:
            raise AttributeError("%r object has no attribute %r"
                                 % (type(self).__name__, name)) from None
        values = self._values
        if name not in values and isinstance(kind, type) and issubclass(kind, OptionsBase):
            values[name] = kind()
        return values.get(name)

    def __setattr__(self, name: str, value) -> None:
        name, kind = self._field(name)
        if not isinstance(value, kind):
            raise TypeError('Property "%s" must be of type %s, got: %s (type: %s)'
                            % (name, kind, value, type(value)))
        self._values[name] = value

    def _set_values(self) -> dict:
        """The options set, nested sets as dicts (an untouched nested set is absent)."""
        out = {}
        for name, value in self._values.items():
            if isinstance(value, OptionsBase):
                value = value._set_values()
                if not value:
                    continue
            out[name] = value
        return out

    def __eq__(self, other):
        return type(other) is type(self) and self._set_values() == other._set_values()

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % kv for kv in sorted(self._set_values().items())))

    def _merged(self, other: "OptionsBase") -> "OptionsBase":
        out = type(self)()
        for source in (self, other):
            for name, value in source._values.items():
                mine = out._values.get(name)
                if isinstance(value, OptionsBase):
                    value = (mine or type(value)())._merged(value)
                out._values[name] = value
        return out


@tf_export("data.experimental.AutotuneOptions")
class AutotuneOptions(OptionsBase):
    """Options of TF's autotuner: enabled, cpu_budget, ram_budget, autotune_algorithm,
    initial_parallelism, min_parallelism."""
    _FIELDS = {"enabled": bool, "cpu_budget": int, "ram_budget": int,
               "autotune_algorithm": AutotuneAlgorithm, "initial_parallelism": int,
               "min_parallelism": int}


@tf_export("data.experimental.DistributeOptions")
class DistributeOptions(OptionsBase):
    """How tf.distribute splits the dataset: auto_shard_policy, num_devices."""
    _FIELDS = {"auto_shard_policy": AutoShardPolicy, "num_devices": int}

    def __getattr__(self, name: str):
        value = super().__getattr__(name)
        if value is None and name == "auto_shard_policy":
            return AutoShardPolicy.AUTO  # TF's default
        return value


@tf_export("data.experimental.OptimizationOptions")
class OptimizationOptions(OptionsBase):
    """The pipeline rewrites TF may apply (each a bool): map_and_batch_fusion,
    map_parallelization, noop_elimination, parallel_batch, ..."""
    _FIELDS = {name: bool for name in (
        "apply_default_optimizations", "filter_fusion", "filter_parallelization",
        "inject_prefetch", "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion",
        "map_parallelization", "noop_elimination", "parallel_batch",
        "seq_interleave_prefetch", "shuffle_and_repeat_fusion")}


@tf_export("data.experimental.ServiceOptions")
class ServiceOptions(OptionsBase):
    """Options of the tf.data service: pinned."""
    _FIELDS = {"pinned": bool}


@tf_export("data.ThreadingOptions", "data.experimental.ThreadingOptions")
class ThreadingOptions(OptionsBase):
    """Thread pool sizes: max_intra_op_parallelism, private_threadpool_size."""
    _FIELDS = {"max_intra_op_parallelism": int, "private_threadpool_size": int}


@tf_export("data.Options")
class Options(OptionsBase):
    """The options of a dataset (see the module docstring): deterministic,
    autotune, experimental_optimization, threading, experimental_distribute,
    experimental_slack, ... `experimental_deterministic` and `experimental_threading`
    are TF's older names for `deterministic` and `threading`.

    Raises:
      AttributeError: setting an option TF does not have.
      TypeError: a value not of the option's type.
    """
    _FIELDS = {
        "autotune": AutotuneOptions, "dataset_name": str, "deterministic": bool,
        "experimental_distribute": DistributeOptions,
        "experimental_external_state_policy": ExternalStatePolicy,
        "experimental_optimization": OptimizationOptions,
        "experimental_service": ServiceOptions, "experimental_slack": bool,
        "experimental_symbolic_checkpoint": bool, "experimental_warm_start": bool,
        "framework_type": list, "threading": ThreadingOptions}
    _ALIASES = {"experimental_deterministic": "deterministic",
                "experimental_threading": "threading"}

    def merge(self, options: "Options") -> "Options":
        """These options with `options` over them: an option set in `options` wins,
        nested sets merge option by option.

        Raises:
          TypeError: `options` is not an Options.
        """
        if not isinstance(options, Options):
            raise TypeError("options must be a tf.data.Options, got %r" % (options,))
        return self._merged(options)
