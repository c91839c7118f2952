"""tf.estimator.RunConfig: where an Estimator keeps its files, how often it checkpoints
and logs, and which task of a cluster this process is (read from TF_CONFIG).

TF_CONFIG (distribute/cluster.py) is read as TF's RunConfig reads it: without a
"cluster" this process is the only worker and the chief; with one, the cluster must have
exactly one "chief" (or, in the legacy layout, one "master"), the task must name a job
of the cluster and an index in it, and the session master is that task's address
("grpc://host:port"), or "" for a cluster of one task.
"""
from __future__ import annotations

import os
from typing import Optional

from tensorweave.distribute.cluster import ClusterSpec, read_tf_config
from tensorweave.estimator.model_fn import fn_args
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import tf_logging as logging

_USE_DEFAULT = object()
_SAVE_CKPT_ERR = "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."
_REPLACEABLE = [
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute",
    "device_fn", "protocol", "eval_distribute", "experimental_distribute",
    "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
    "checkpoint_save_graph_def"]
_GRPC = "grpc://"


class TaskType:
    """The job names of a TF_CONFIG cluster."""

    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


# (property, test, message) checked on every construction and replace(), as TF does
_CHECKS = [
    ("model_dir", bool, "model_dir should be non-empty"),
    ("save_summary_steps", lambda v: v >= 0, "save_summary_steps should be >= 0"),
    ("save_checkpoints_steps", lambda v: v >= 0, "save_checkpoints_steps should be >= 0"),
    ("save_checkpoints_secs", lambda v: v >= 0, "save_checkpoints_secs should be >= 0"),
    ("session_config", lambda v: _is_config_proto(v),
     "session_config must be instance of ConfigProto"),
    ("keep_checkpoint_max", lambda v: v >= 0, "keep_checkpoint_max should be >= 0"),
    ("keep_checkpoint_every_n_hours", lambda v: v > 0,
     "keep_checkpoint_every_n_hours should be > 0"),
    ("log_step_count_steps", lambda v: v > 0, "log_step_count_steps should be > 0"),
    ("tf_random_seed", lambda v: isinstance(v, int), "tf_random_seed must be integer."),
    ("experimental_max_worker_delay_secs", lambda v: isinstance(v, int),
     "experimental_max_worker_delay_secs must be an integer if set."),
    ("session_creation_timeout_secs", lambda v: v > 0,
     "session_creation_timeout_secs should be > 0"),
    ("device_fn", lambda v: callable(v) and set(fn_args(v)) == {"op"},
     'device_fn must be callable with exactly one argument "op".'),
    ("protocol", lambda v: v in ("grpc", "grpc+verbs"),
     "protocol should be grpc or grpc+verbs"),
]


def _is_config_proto(value) -> bool:
    from tensorweave.runtime.config import ConfigProto
    return isinstance(value, ConfigProto)


def _model_dir(tf_config: dict, model_dir) -> Optional[str]:
    if model_dir is not None and hasattr(model_dir, "__fspath__"):
        model_dir = os.fspath(model_dir)
    if model_dir == "":
        raise ValueError("model_dir should be non-empty.")
    from_config = tf_config.get("model_dir")
    if from_config == "":
        raise ValueError("model_dir in TF_CONFIG should be non-empty.")
    if from_config:
        if model_dir and from_config != model_dir:
            raise ValueError(
                "`model_dir` provided in RunConfig construct, if set, must have the same "
                "value as the model_dir in TF_CONFIG. model_dir: {}\nTF_CONFIG"
                "[\"model_dir\"]: {}.\n".format(model_dir, from_config))
        logging.info("Using model_dir in TF_CONFIG: %s", from_config)
    return model_dir or from_config


def _task_of(cluster: ClusterSpec, task_env: dict, chief: str):
    """(task type, task index) of `task_env`, checked against `cluster`."""
    if chief not in cluster.jobs:
        raise ValueError('If "cluster" is set in TF_CONFIG, it must have one "%s" node.'
                         % chief)
    if len(cluster.job_tasks(chief)) > 1:
        raise ValueError('The "cluster" in TF_CONFIG must have only one "%s" node.' % chief)
    task_type, task_id = task_env.get("type"), task_env.get("index")
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError("Task index must be non-negative number.")
    if task_type == TaskType.EVALUATOR:
        return task_type, task_id
    note = "\n\nNote that these values may be coming from the TF_CONFIG environment variable."
    if task_type not in cluster.jobs:
        raise ValueError("%s is not a valid task_type in the cluster_spec:\n%s%s"
                         % (task_type, cluster, note))
    if not 0 <= task_id < len(cluster.job_tasks(task_type)):
        raise ValueError("%d is not a valid task_id for task_type %s in the cluster_spec:"
                         "\n%s%s" % (task_id, task_type, cluster, note))
    return task_type, task_id


def _global_id(cluster: ClusterSpec, task_type: str, task_id: int, chief: str) -> int:
    """The task's number counting the chief first, then the other jobs but ps in name
    order, then ps (TF's order)."""
    order = [chief] + [j for j in sorted(cluster.jobs) if j not in (chief, TaskType.PS)]
    if TaskType.PS in cluster.jobs:
        order.append(TaskType.PS)
    first = 0
    for job in order:
        if job == task_type:
            return first + task_id
        first += len(cluster.job_tasks(job))
    raise ValueError("task_type %r is not in the cluster %s" % (task_type, cluster))


@tf_export("estimator.RunConfig")
class RunConfig:
    """How an Estimator runs: its model directory, checkpoint, summary and logging
    intervals, session config, and its place in a cluster (from TF_CONFIG).

    Args:
      model_dir: where checkpoints and summaries go (TF_CONFIG's "model_dir" if unset).
      tf_random_seed: the graph-level random seed of every graph the Estimator builds.
      save_summary_steps: write summaries every this many steps (0: never).
      save_checkpoints_steps, save_checkpoints_secs: checkpoint every this many steps
        or seconds (at most one of them; 600 seconds when neither is given).
      session_config: a `tf.ConfigProto` for the sessions.
      keep_checkpoint_max: how many recent checkpoints to keep (0 or None: all).
      keep_checkpoint_every_n_hours: also keep one checkpoint per this many hours.
      log_step_count_steps: log the loss and steps/sec every this many steps.
      device_fn: a function of `op` giving its device (overrides the replica device
        setter a cluster with ps tasks gets).
      protocol: "grpc" (or "grpc+verbs", accepted and run as grpc).
      session_creation_timeout_secs: how long a worker waits for the chief's session.
      checkpoint_save_graph_def: whether graph.pbtxt and .meta files are written.
      train_distribute, eval_distribute: a `tf.distribute.Strategy` (MirroredStrategy,
        OneDeviceStrategy) the Estimator trains / evaluates under: the model_fn is
        built once per replica, each replica reading its own batches of the input_fn's
        dataset (see estimator/distributed_training.py).
      experimental_distribute: a DistributeConfig; not supported (NotImplementedError).
      experimental_max_worker_delay_secs: accepted, as in TF.

    Raises:
      ValueError: both checkpoint intervals are set, a value is out of range, or
        TF_CONFIG describes an invalid task.
      NotImplementedError: experimental_distribute, or a strategy together with a
        TF_CONFIG cluster (TF's multi-worker distribute coordinator).
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200, checkpoint_save_graph_def=True):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(_SAVE_CKPT_ERR)
        if experimental_distribute is not None:
            raise NotImplementedError(
                "RunConfig(experimental_distribute=...) (a DistributeConfig) is not "
                "supported by tensorweave; pass train_distribute / eval_distribute.")
        tf_config = read_tf_config()
        if (train_distribute is not None or eval_distribute is not None) and \
                tf_config.get("cluster"):
            raise NotImplementedError(
                "tensorweave's Estimator runs train_distribute / eval_distribute "
                "strategies on the devices of one process; with a TF_CONFIG cluster TF "
                "uses its multi-worker distribute coordinator, which is not supported. "
                "Train between-graph (ps and workers, no strategy) instead.")
        if tf_config:
            logging.info("TF_CONFIG environment variable: %s", tf_config)
        self._assign(
            _REPLACEABLE, model_dir=_model_dir(tf_config, model_dir),
            tf_random_seed=tf_random_seed, save_summary_steps=save_summary_steps,
            save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs, session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps, train_distribute=train_distribute,
            device_fn=device_fn, protocol=protocol, eval_distribute=eval_distribute,
            experimental_distribute=None,
            experimental_max_worker_delay_secs=experimental_max_worker_delay_secs,
            session_creation_timeout_secs=session_creation_timeout_secs,
            checkpoint_save_graph_def=checkpoint_save_graph_def)
        self._init_cluster(tf_config)

    # --- TF_CONFIG ---------------------------------------------------------------------
    def _init_cluster(self, tf_config: dict) -> None:
        service = tf_config.get("service")
        if service is not None and not isinstance(service, dict):
            raise TypeError('If "service" is set in TF_CONFIG, it must be a dict. Given %s'
                            % type(service))
        self._service = service
        cluster = self._cluster_spec = ClusterSpec(tf_config.get("cluster") or {})
        task_env = tf_config.get("task", {})
        self._evaluation_master = ""
        if not cluster.jobs:
            self._task_type = task_env.get("type", TaskType.WORKER)
            self._task_id = int(task_env.get("index", 0))
            if self._task_type != TaskType.WORKER:
                raise ValueError(
                    'If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
            if self._task_id != 0:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
            self._master = tf_config.get("session_master", "")
            self._evaluation_master = tf_config.get("eval_session_master", "")
            self._is_chief, self._global_id_in_cluster = True, 0
            self._num_ps_replicas, self._num_worker_replicas = 0, 1
            return
        chief = TaskType.MASTER if TaskType.MASTER in cluster.jobs else TaskType.CHIEF
        if chief == TaskType.MASTER and TaskType.CHIEF in cluster.jobs:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not "
                             "supported.")
        self._task_type, self._task_id = _task_of(cluster, task_env, chief)
        if self._task_type == TaskType.EVALUATOR:
            if chief == TaskType.MASTER:
                raise ValueError("If `master` node exists in `cluster`, task_type "
                                 "`evaluator` is not supported.")
            self._evaluation_master = tf_config.get("eval_session_master", "")
            self._cluster_spec = ClusterSpec({})
            self._master, self._global_id_in_cluster = "", None
            self._num_ps_replicas = self._num_worker_replicas = 0
        else:
            self._master = self._session_master(tf_config)
            self._num_ps_replicas = len(cluster.as_dict().get(TaskType.PS, []))
            self._num_worker_replicas = len(cluster.as_dict().get(TaskType.WORKER, [])) + \
                len(cluster.as_dict().get(chief, []))
            self._global_id_in_cluster = _global_id(cluster, self._task_type,
                                                    self._task_id, chief)
        self._is_chief = self._task_type == chief
        if self._session_config is None:
            self._session_config = self._distributed_session_config()

    def _session_master(self, tf_config: dict) -> str:
        if "session_master" in tf_config:
            return tf_config["session_master"]
        cluster = self._cluster_spec
        jobs = cluster.jobs
        if len(jobs) == 1 and len(cluster.job_tasks(jobs[0])) == 1:
            return ""
        return _GRPC + cluster.job_tasks(self._task_type)[self._task_id]

    def _distributed_session_config(self):
        """TF's default for between-graph training: each worker sees only the ps
        tasks and itself."""
        from tensorweave.runtime.config import ConfigProto
        filters = {TaskType.MASTER: ["/job:ps", "/job:master"],
                   TaskType.CHIEF: ["/job:ps", "/job:chief"],
                   TaskType.WORKER: ["/job:ps", "/job:worker/task:%d" % self._task_id],
                   TaskType.PS: ["/job:ps", "/job:worker", "/job:chief", "/job:master"]
                   }.get(self._task_type)
        if filters is None:
            return None
        return ConfigProto(allow_soft_placement=True, device_filters=filters)

    # --- replace -----------------------------------------------------------------------
    def _assign(self, allowed, **kwargs) -> "RunConfig":
        for key, value in kwargs.items():
            if key not in allowed:
                raise ValueError("Replacing {} is not supported. Allowed properties are {}."
                                 .format(key, allowed))
            setattr(self, "_" + key, value)
        steps, secs = self._save_checkpoints_steps, self._save_checkpoints_secs
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" in kwargs:
            if steps is not None and secs is not None:
                raise ValueError(_SAVE_CKPT_ERR)
        elif "save_checkpoints_steps" in kwargs and steps is not None:
            self._save_checkpoints_secs = None
        elif "save_checkpoints_secs" in kwargs and secs is not None:
            self._save_checkpoints_steps = None
        for name, ok, message in _CHECKS:
            value = getattr(self, "_" + name)
            if value is not None and not ok(value):
                raise ValueError(message)
        return self

    def replace(self, **kwargs) -> "RunConfig":
        """A copy of this config with the given properties replaced (only those a user
        may set: model_dir, tf_random_seed, the intervals, session_config, ...).

        Raises:
          ValueError: a property that cannot be replaced, or an invalid value.
        """
        import copy
        return copy.deepcopy(self)._assign(_REPLACEABLE, **kwargs)

    def __repr__(self) -> str:
        return "RunConfig(%s)" % ", ".join(
            "%s=%r" % (k.lstrip("_"), v) for k, v in sorted(vars(self).items()))


def _property(name: str, doc: str):
    return property(lambda self: getattr(self, "_" + name), doc=doc)


for _name in _REPLACEABLE + ["cluster_spec", "task_type", "task_id", "master",
                             "evaluation_master", "is_chief", "num_ps_replicas",
                             "num_worker_replicas", "global_id_in_cluster", "service"]:
    setattr(RunConfig, _name, _property(_name, "The %s of this config." % _name))
RunConfig.TaskType = TaskType
