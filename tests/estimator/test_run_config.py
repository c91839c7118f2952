"""tf.estimator.RunConfig: defaults, replace(), value checks and the cluster read from
TF_CONFIG. Every expected value and message is what TensorFlow 2.15
(tensorflow-estimator 2.15) gave for the same config."""
import json

import pytest

import tensorweave as tf

RunConfig = tf.estimator.RunConfig

CLUSTER = {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
           "ps": ["host3:2222", "host4:2222"]}
LEGACY = {"master": ["m0:1"], "worker": ["w0:1"], "ps": ["p0:1"]}
PS_FILTERS = ["/job:ps", "/job:worker", "/job:chief", "/job:master"]


@pytest.fixture(autouse=True)
def no_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)


def set_tf_config(monkeypatch, config):
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))


def describe(config):
    session = config.session_config
    return dict(task_type=config.task_type, task_id=config.task_id,
                num_ps=config.num_ps_replicas, num_workers=config.num_worker_replicas,
                is_chief=config.is_chief, master=config.master,
                eval_master=config.evaluation_master, global_id=config.global_id_in_cluster,
                cluster=config.cluster_spec.as_dict(),
                filters=None if session is None else list(session.device_filters))


LOCAL = dict(task_type="worker", task_id=0, num_ps=0, num_workers=1, is_chief=True,
             master="", eval_master="", global_id=0, cluster={}, filters=None)


def test_defaults():
    c = RunConfig()
    assert (c.model_dir, c.tf_random_seed, c.save_summary_steps) == (None, None, 100)
    assert (c.save_checkpoints_steps, c.save_checkpoints_secs) == (None, 600)
    assert (c.session_config, c.keep_checkpoint_max) == (None, 5)
    assert (c.keep_checkpoint_every_n_hours, c.log_step_count_steps) == (10000, 100)
    assert (c.device_fn, c.protocol, c.session_creation_timeout_secs) == (None, None, 7200)
    assert c.checkpoint_save_graph_def is True
    assert (c.service, c.experimental_max_worker_delay_secs) == (None, None)
    assert (c.train_distribute, c.eval_distribute) == (None, None)
    assert describe(c) == LOCAL


def test_checkpoint_intervals():
    c = RunConfig(save_checkpoints_steps=10)
    assert (c.save_checkpoints_steps, c.save_checkpoints_secs) == (10, None)
    c = RunConfig(save_checkpoints_secs=None)
    assert (c.save_checkpoints_steps, c.save_checkpoints_secs) == (None, None)
    c = RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    assert (c.save_checkpoints_steps, c.save_checkpoints_secs) == (None, None)
    message = "^`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.$"
    with pytest.raises(ValueError, match=message):
        RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError, match=message):
        RunConfig().replace(save_checkpoints_steps=1, save_checkpoints_secs=1)


def test_replace_makes_a_new_config():
    c = RunConfig()
    steps = c.replace(save_checkpoints_steps=5)
    # one interval replaces the other
    assert (steps.save_checkpoints_steps, steps.save_checkpoints_secs) == (5, None)
    assert c.save_checkpoints_secs == 600
    secs = steps.replace(save_checkpoints_secs=7)
    assert (secs.save_checkpoints_steps, secs.save_checkpoints_secs) == (None, 7)
    multi = c.replace(model_dir="/tmp/x", tf_random_seed=3, keep_checkpoint_max=2,
                      log_step_count_steps=7)
    assert (multi.model_dir, multi.tf_random_seed) == ("/tmp/x", 3)
    assert (multi.keep_checkpoint_max, multi.log_step_count_steps) == (2, 7)
    assert c.model_dir is None and c.keep_checkpoint_max == 5
    with pytest.raises(ValueError) as e:
        c.replace(task_type="ps")
    assert str(e.value) == (
        "Replacing task_type is not supported. Allowed properties are ['model_dir', "
        "'tf_random_seed', 'save_summary_steps', 'save_checkpoints_steps', "
        "'save_checkpoints_secs', 'session_config', 'keep_checkpoint_max', "
        "'keep_checkpoint_every_n_hours', 'log_step_count_steps', 'train_distribute', "
        "'device_fn', 'protocol', 'eval_distribute', 'experimental_distribute', "
        "'experimental_max_worker_delay_secs', 'session_creation_timeout_secs', "
        "'checkpoint_save_graph_def'].")


@pytest.mark.parametrize("name, value, message", [
    ("save_summary_steps", -1, "save_summary_steps should be >= 0"),
    ("save_checkpoints_steps", -1, "save_checkpoints_steps should be >= 0"),
    ("save_checkpoints_secs", -1, "save_checkpoints_secs should be >= 0"),
    ("keep_checkpoint_max", -1, "keep_checkpoint_max should be >= 0"),
    ("keep_checkpoint_every_n_hours", 0, "keep_checkpoint_every_n_hours should be > 0"),
    ("log_step_count_steps", 0, "log_step_count_steps should be > 0"),
    ("tf_random_seed", 1.5, "tf_random_seed must be integer."),
    ("session_config", 3, "session_config must be instance of ConfigProto"),
    ("protocol", "http", "protocol should be grpc or grpc+verbs"),
    ("device_fn", lambda a, b: None, 'device_fn must be callable with exactly one argument "op".'),
    ("session_creation_timeout_secs", 0, "session_creation_timeout_secs should be > 0"),
    ("experimental_max_worker_delay_secs", 1.5,
     "experimental_max_worker_delay_secs must be an integer if set."),
])
def test_invalid_values_are_refused_by_constructor_and_replace(name, value, message):
    for make in (lambda: RunConfig(**{name: value}), lambda: RunConfig().replace(**{name: value})):
        with pytest.raises(ValueError) as e:
            make()
        assert str(e.value) == message


def test_device_fn_takes_op_only():
    def with_kwargs(op, **kwargs):
        return "/cpu:0"
    assert RunConfig(device_fn=with_kwargs).device_fn is with_kwargs
    with pytest.raises(ValueError, match='^device_fn must be callable with exactly one'):
        RunConfig(device_fn=lambda *op: None)


def test_empty_model_dir():
    with pytest.raises(ValueError) as e:
        RunConfig(model_dir="")
    assert str(e.value) == "model_dir should be non-empty."
    with pytest.raises(ValueError) as e:
        RunConfig().replace(model_dir="")
    assert str(e.value) == "model_dir should be non-empty"


CLUSTER_TASKS = [
    ("chief", 0, dict(task_type="chief", task_id=0, num_ps=2, num_workers=3, is_chief=True,
                      master="grpc://host0:2222", global_id=0,
                      filters=["/job:ps", "/job:chief"])),
    ("worker", 0, dict(task_type="worker", task_id=0, num_ps=2, num_workers=3,
                       is_chief=False, master="grpc://host1:2222", global_id=1,
                       filters=["/job:ps", "/job:worker/task:0"])),
    ("worker", 1, dict(task_type="worker", task_id=1, num_ps=2, num_workers=3,
                       is_chief=False, master="grpc://host2:2222", global_id=2,
                       filters=["/job:ps", "/job:worker/task:1"])),
    ("ps", 1, dict(task_type="ps", task_id=1, num_ps=2, num_workers=3, is_chief=False,
                   master="grpc://host4:2222", global_id=4, filters=PS_FILTERS)),
]


@pytest.mark.parametrize("task_type, index, expected", CLUSTER_TASKS)
def test_tasks_of_a_chief_cluster(monkeypatch, task_type, index, expected):
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": task_type,
                                                             "index": index}})
    assert describe(RunConfig()) == dict(expected, eval_master="", cluster=CLUSTER)


def test_evaluator_is_outside_the_cluster(monkeypatch):
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "evaluator",
                                                             "index": 0}})
    c = RunConfig()
    assert describe(c) == dict(task_type="evaluator", task_id=0, num_ps=0, num_workers=0,
                               is_chief=False, master="", eval_master="", global_id=None,
                               cluster={}, filters=None)
    assert not c.cluster_spec


@pytest.mark.parametrize("task_type, expected", [
    ("master", dict(task_id=0, num_ps=1, num_workers=2, is_chief=True, master="grpc://m0:1",
                    global_id=0, filters=["/job:ps", "/job:master"])),
    ("worker", dict(task_id=0, num_ps=1, num_workers=2, is_chief=False,
                    master="grpc://w0:1", global_id=1,
                    filters=["/job:ps", "/job:worker/task:0"])),
    ("ps", dict(task_id=0, num_ps=1, num_workers=2, is_chief=False, master="grpc://p0:1",
                global_id=2, filters=PS_FILTERS)),
])
def test_tasks_of_a_legacy_master_cluster(monkeypatch, task_type, expected):
    set_tf_config(monkeypatch, {"cluster": LEGACY, "task": {"type": task_type, "index": 0}})
    assert describe(RunConfig()) == dict(expected, task_type=task_type, eval_master="",
                                         cluster=LEGACY)


@pytest.mark.parametrize("chief", ["chief", "master"])
def test_a_cluster_of_one_task_has_no_master(monkeypatch, chief):
    set_tf_config(monkeypatch, {"cluster": {chief: ["h:1"]},
                                "task": {"type": chief, "index": "0"}})
    assert describe(RunConfig()) == dict(
        task_type=chief, task_id=0, num_ps=0, num_workers=1, is_chief=True, master="",
        eval_master="", global_id=0, cluster={chief: ["h:1"]},
        filters=["/job:ps", "/job:%s" % chief])


def test_without_a_cluster(monkeypatch):
    set_tf_config(monkeypatch, {"task": {"type": "worker", "index": 0}})
    assert describe(RunConfig()) == LOCAL
    set_tf_config(monkeypatch, {"session_master": "grpc://sm:1",
                                "eval_session_master": "grpc://em:1"})
    assert describe(RunConfig()) == dict(LOCAL, master="grpc://sm:1",
                                         eval_master="grpc://em:1")
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "worker", "index": 0},
                                "session_master": "grpc://x:9"})
    assert RunConfig().master == "grpc://x:9"


def test_session_config_given_is_kept_in_a_cluster(monkeypatch):
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "worker", "index": 0}})
    mine = tf.ConfigProto(log_device_placement=True)
    assert RunConfig(session_config=mine).session_config is mine


_NOTE = "\n\nNote that these values may be coming from the TF_CONFIG environment variable."


@pytest.mark.parametrize("config, error, message", [
    ({"task": {"type": "chief", "index": 0}}, ValueError,
     'If "cluster" is not set in TF_CONFIG, task type must be WORKER.'),
    ({"task": {"type": "worker", "index": 1}}, ValueError,
     'If "cluster" is not set in TF_CONFIG, task index must be 0.'),
    ({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}, ValueError,
     'If "cluster" is set in TF_CONFIG, it must have one "chief" node.'),
    ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}},
     ValueError, 'The "cluster" in TF_CONFIG must have only one "chief" node.'),
    ({"cluster": {"master": ["a:1", "b:1"]}, "task": {"type": "master", "index": 0}},
     ValueError, 'The "cluster" in TF_CONFIG must have only one "master" node.'),
    ({"cluster": {"master": ["a:1"], "chief": ["b:1"]}, "task": {"type": "master",
                                                                  "index": 0}},
     ValueError, "If `master` node exists in `cluster`, job `chief` is not supported."),
    ({"cluster": CLUSTER, "task": {"index": 0}}, ValueError,
     'If "cluster" is set in TF_CONFIG, task type must be set.'),
    ({"cluster": CLUSTER}, ValueError,
     'If "cluster" is set in TF_CONFIG, task type must be set.'),
    ({"cluster": CLUSTER, "task": {"type": "worker"}}, ValueError,
     'If "cluster" is set in TF_CONFIG, task index must be set.'),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": -1}}, ValueError,
     "Task index must be non-negative number."),
    ({"cluster": LEGACY, "task": {"type": "evaluator", "index": 0}}, ValueError,
     "If `master` node exists in `cluster`, task_type `evaluator` is not supported."),
    ({"service": "x"}, TypeError,
     "If \"service\" is set in TF_CONFIG, it must be a dict. Given <class 'str'>"),
    ({"model_dir": ""}, ValueError, "model_dir in TF_CONFIG should be non-empty."),
])
def test_invalid_tf_config(monkeypatch, config, error, message):
    set_tf_config(monkeypatch, config)
    with pytest.raises(error) as e:
        RunConfig()
    assert type(e.value) is error and str(e.value) == message


def test_task_outside_the_cluster(monkeypatch):
    # TF prints the ClusterSpec between these lines (its jobs in sorted order)
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "foo", "index": 0}})
    with pytest.raises(ValueError) as e:
        RunConfig()
    text = str(e.value)
    assert text.startswith("foo is not a valid task_type in the cluster_spec:\nClusterSpec(")
    assert text.endswith(_NOTE)
    set_tf_config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "worker", "index": 5}})
    with pytest.raises(ValueError) as e:
        RunConfig()
    assert str(e.value).startswith(
        "5 is not a valid task_id for task_type worker in the cluster_spec:\nClusterSpec(")


def test_model_dir_and_service_from_tf_config(monkeypatch):
    set_tf_config(monkeypatch, {"model_dir": "/tmp/md1", "service": {"a": 1}})
    assert RunConfig().model_dir == "/tmp/md1"
    assert RunConfig(model_dir="/tmp/md1").model_dir == "/tmp/md1"
    assert RunConfig().service == {"a": 1}
    with pytest.raises(ValueError) as e:
        RunConfig(model_dir="/tmp/other")
    assert str(e.value) == (
        "`model_dir` provided in RunConfig construct, if set, must have the same value as "
        "the model_dir in TF_CONFIG. model_dir: /tmp/other\nTF_CONFIG[\"model_dir\"]: "
        "/tmp/md1.\n")


def test_tf_config_that_is_not_json(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", "not json")
    with pytest.raises(ValueError):
        RunConfig()
