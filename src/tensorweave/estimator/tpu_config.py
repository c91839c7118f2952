"""tf.estimator.tpu's configuration: InputPipelineConfig, TPUConfig and the RunConfig that
carries a TPUConfig (tensorflow-estimator's tpu/tpu_config.py and tpu/util.py).

tensorweave has no TPU, so these classes matter for the path TPU programs take without
one, `TPUEstimator(use_tpu=False)`: the values are checked as TF checks them and kept,
and TPUEstimator reads `iterations_per_loop` (its logging cadence) and
`eval_training_input_configuration` (SLICED cannot run on CPU) from them.
"""
from __future__ import annotations

import collections
import re

import numpy as np

from tensorweave.distribute.cluster import read_tf_config
from tensorweave.estimator import run_config as _run_config
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import tf_logging as logging

_ITERATIONS_PER_LOOP_RE = re.compile(r"^(?P<value>[1-9]\d*)((?P<suffix>[s|m|h])$|$)")
_ITERATIONS_PER_LOOP_ERR = (
    "Invalid TPUConfig `iterations_per_loop` value. Value must be positive integer value "
    "or time-based value `<N><s|m|h>` where <N> is anypositive integer and `s`, `m`, `h` "
    "are unit of time in seconds, minutes, hours respectively. Examples of valid values: "
    "`3600s`, `60m`, `1h`.")
_SECONDS_PER_UNIT = {"s": 1, "m": 60, "h": 3600}

IterationsPerLoopCounter = collections.namedtuple("IterationsPerLoopCounter",
                                                  ["value", "unit"])


def check_positive_integer(value, name: str) -> None:
    """Raises unless `value` is a positive int (Python or NumPy).

    Raises:
      TypeError: `value` is not an integer.
      ValueError: `value` <= 0.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError("{} must be int, got {}".format(name, type(value)))
    if value <= 0:
        raise ValueError("{} must be positive, got {}".format(name, value))


def parse_iterations_per_loop(iterations_per_loop) -> IterationsPerLoopCounter:
    """`iterations_per_loop` (a positive count, or "<N>s", "<N>m", "<N>h") as
    (value, unit): (N, "count") or (seconds, "seconds").

    Raises:
      ValueError: any other value (0, negative numbers, floats, other suffixes).
    """
    match = _ITERATIONS_PER_LOOP_RE.match(str(iterations_per_loop))
    if match is None:
        raise ValueError(_ITERATIONS_PER_LOOP_ERR)
    suffix = match.group("suffix")
    value = int(match.group("value"))
    if suffix:
        return IterationsPerLoopCounter(value * _SECONDS_PER_UNIT[suffix], "seconds")
    return IterationsPerLoopCounter(value, "count")


@tf_export("estimator.tpu.InputPipelineConfig")
class InputPipelineConfig:
    """How TPUEstimator feeds the TPU (see TPUConfig.per_host_input_for_training)."""

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_TPU_CONFIG_FIELDS = [
    "iterations_per_loop", "num_shards", "num_cores_per_replica",
    "per_host_input_for_training", "tpu_job_name", "initial_infeed_sleep_secs",
    "input_partition_dims", "eval_training_input_configuration",
    "experimental_host_call_every_n_steps",
    "experimental_allow_per_host_v2_parallel_get_next", "experimental_feed_hook"]


@tf_export("estimator.tpu.TPUConfig")
class TPUConfig(collections.namedtuple("TPUConfig", _TPU_CONFIG_FIELDS)):
    """TPU related configuration required by `TPUEstimator`.

    Without a TPU (`use_tpu=False`) only `iterations_per_loop` changes what happens:
    TPUEstimator logs (and writes as summaries) global_step/sec and examples/sec every
    ceil(log_step_count_steps / iterations_per_loop) steps, or every N seconds when it
    is "<N>s"/"<N>m"/"<N>h"; the other fields are checked and kept.

    Args:
      iterations_per_loop: train steps per `Session.run` on a TPU: a positive int,
        or a time "<N>s", "<N>m", "<N>h".
      num_shards: (deprecated) the number of model replicas.
      num_cores_per_replica: TPU cores per replica (1, 2, 4, ..., 128), or None.
      per_host_input_for_training: an `InputPipelineConfig` value; True and False
        mean PER_HOST_V1 and PER_SHARD_V1.
      tpu_job_name: the TPU job's name (default: TF_CONFIG's
        service.tpu_worker_job_name).
      initial_infeed_sleep_secs: seconds the infeed waits before its first batch.
      input_partition_dims: partition dims of the input tensors (PER_HOST_V2 and
        num_cores_per_replica only; one or two elements).
      eval_training_input_configuration: PER_HOST_V1 or SLICED.
      experimental_host_call_every_n_steps: how often host calls run on a TPU.
      experimental_allow_per_host_v2_parallel_get_next: parallel get_next on a TPU.
      experimental_feed_hook: a replacement infeed/outfeed hook class for a TPU.

    Raises:
      ValueError, TypeError: a value TF rejects (with TF's message).
    """

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None,
                initial_infeed_sleep_secs=None, input_partition_dims=None,
                eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1,
                experimental_allow_per_host_v2_parallel_get_next=False,
                experimental_feed_hook=None):
        parse_iterations_per_loop(iterations_per_loop)
        if num_shards is not None:
            check_positive_integer(num_shards, "TPUConfig num_shards")
        if input_partition_dims is not None:
            if len(input_partition_dims) not in (1, 2):
                raise ValueError("input_partition_dims must be a list/tuple with one or two"
                                 " elements.")
            if per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
                raise ValueError("input_partition_dims is only supported in PER_HOST_V2 "
                                 "mode.")
            if num_cores_per_replica is None:
                raise ValueError("input_partition_dims requires setting "
                                 "num_cores_per_replica.")
        if num_cores_per_replica is not None and \
                num_cores_per_replica not in (1, 2, 4, 8, 16, 32, 64, 128):
            raise ValueError("num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; "
                             "got {}".format(num_cores_per_replica))
        if eval_training_input_configuration not in (InputPipelineConfig.PER_HOST_V1,
                                                     InputPipelineConfig.SLICED):
            raise ValueError("eval_training_input_configuration must be PER_HOST_V1 or "
                             "SLICED; got {}".format(eval_training_input_configuration))
        # the legacy booleans, as TF maps them (`is`: 1 and 0 are not the booleans)
        if per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        elif per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        if initial_infeed_sleep_secs:
            check_positive_integer(initial_infeed_sleep_secs,
                                   "TPUConfig initial_infeed_sleep_secs")
        tpu_job_name = tpu_job_name or _tpu_job_name_from_tf_config()
        return super().__new__(
            cls, iterations_per_loop, num_shards, num_cores_per_replica,
            per_host_input_for_training, tpu_job_name, initial_infeed_sleep_secs,
            input_partition_dims, eval_training_input_configuration,
            experimental_host_call_every_n_steps,
            experimental_allow_per_host_v2_parallel_get_next, experimental_feed_hook)


def _tpu_job_name_from_tf_config():
    name = (read_tf_config().get("service") or {}).get("tpu_worker_job_name")
    if name:
        logging.info("Load TPU job name from TF_CONFIG: %s", name)
    return name


@tf_export("estimator.tpu.RunConfig")
class RunConfig(_run_config.RunConfig):
    """A `tf.estimator.RunConfig` with a `TPUConfig`, a session master given in code,
    and an optional cluster resolver.

    Args:
      tpu_config: a `TPUConfig` (default `TPUConfig()`).
      evaluation_master: the master of evaluation (default: `master`, unless TF_CONFIG
        makes this task an evaluator).
      master: the session master of training (default: TF_CONFIG's, or
        `cluster.master()`).
      cluster: a `tf.distribute.cluster_resolver.ClusterResolver` giving the master
        and the cluster spec.
      **kwargs: the arguments of `tf.estimator.RunConfig`.

    Raises:
      ValueError: both `master` and `cluster`, or what `tf.estimator.RunConfig`
        rejects.
    """

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        if master is not None:
            if cluster is not None:
                raise ValueError("Both master and cluster are set.")
            self._master = master
        elif cluster:
            self._master = cluster.master()
        if evaluation_master is not None:
            self._evaluation_master = evaluation_master
        elif not self._evaluation_master and \
                self.task_type != _run_config.TaskType.EVALUATOR:
            # an evaluator's master comes from its cluster manager (TF_CONFIG); anywhere
            # else a user who gave one master means it for evaluation too
            self._evaluation_master = self._master
        if cluster:
            self._cluster_spec = cluster.cluster_spec()
            if self._session_config is None:
                from tensorweave.runtime.config import ConfigProto
                self._session_config = ConfigProto(allow_soft_placement=True,
                                                   isolate_session_state=True)

    def _distributed_session_config(self):
        # TPU training is in-graph: no device filters per worker, as TF's TPU RunConfig
        return None

    @property
    def tpu_config(self) -> TPUConfig:
        """The TPUConfig of this config."""
        return self._tpu_config

    @property
    def cluster(self):
        """The cluster resolver given, or None."""
        return self._cluster

    def replace(self, **kwargs) -> "RunConfig":
        """A copy with the given properties replaced (those of `tf.estimator.RunConfig`
        and `tpu_config`).

        Raises:
          ValueError: a property that cannot be replaced, or an invalid value.
        """
        if "tpu_config" not in kwargs:
            return super().replace(**kwargs)
        tpu_config = kwargs.pop("tpu_config")
        new = super().replace(**kwargs)
        new._tpu_config = tpu_config
        return new
