"""tf.config: the process-wide settings, and the ConfigProto of a Session given none."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import context


@pytest.fixture(autouse=True)
def fresh_context():
    context._reset_for_tests()
    yield
    context._reset_for_tests()


def _cpu():
    return tf.config.list_physical_devices("CPU")[0]


def test_physical_devices_are_the_cpu_and_cupys_gpus():
    assert tf.config.list_physical_devices("CPU") == [
        tf.config.PhysicalDevice("/physical_device:CPU:0", "CPU")]
    assert tf.config.list_physical_devices("TPU") == []
    assert tf.config.experimental.list_physical_devices is tf.config.list_physical_devices
    assert tf.config.get_visible_devices("CPU") == [_cpu()]


def test_a_plain_session_is_unchanged_when_nothing_is_set():
    assert context.default_session_config() is None
    assert tf.Session()._config is None


def test_cpu_split_gives_sessions_that_many_cpu_devices():
    tf.config.set_logical_device_configuration(
        _cpu(), [tf.config.LogicalDeviceConfiguration()] * 2)
    assert tf.config.get_logical_device_configuration(_cpu()) == [
        tf.config.LogicalDeviceConfiguration()] * 2
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            y = tf.constant(2.0) * 3
        with tf.Session() as sess:
            names = [d.name for d in sess.list_devices()]
            assert names == ["/job:localhost/replica:0/task:0/device:CPU:0",
                             "/job:localhost/replica:0/task:0/device:CPU:1"]
            assert sess.run(y) == 6.0
    assert tf.config.list_logical_devices("CPU") == [
        tf.config.LogicalDevice("/device:CPU:0", "CPU"),
        tf.config.LogicalDevice("/device:CPU:1", "CPU")]


def test_settings_freeze_once_the_runtime_is_initialized():
    tf.config.threading.set_intra_op_parallelism_threads(3)
    tf.Session()  # a session does not initialize the context (as in TF)
    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.list_logical_devices()
    with pytest.raises(RuntimeError, match="Intra op parallelism cannot be modified"):
        tf.config.threading.set_intra_op_parallelism_threads(4)
    tf.config.threading.set_intra_op_parallelism_threads(2)  # the same value is fine
    with pytest.raises(RuntimeError, match="Virtual devices cannot be modified"):
        tf.config.set_logical_device_configuration(
            _cpu(), [tf.config.LogicalDeviceConfiguration()] * 3)
    assert tf.Session()._config.intra_op_parallelism_threads == 2


def test_session_config_carries_every_setting():
    tf.config.threading.set_inter_op_parallelism_threads(5)
    tf.config.set_soft_device_placement(True)
    tf.debugging.set_log_device_placement(True)
    tf.config.optimizer.set_jit(True)
    tf.config.optimizer.set_experimental_options(
        {"constant_folding": False, "layout_optimizer": True, "min_graph_nodes": 3})
    assert tf.config.threading.get_inter_op_parallelism_threads() == 5
    assert tf.config.get_soft_device_placement() is True
    assert tf.config.optimizer.get_jit() == "autoclustering"
    assert tf.config.optimizer.get_experimental_options() == {
        "constant_folding": False, "layout_optimizer": True, "min_graph_nodes": 3,
        "disable_model_pruning": False, "disable_meta_optimizer": False}
    config = tf.Session()._config
    assert config.inter_op_parallelism_threads == 5
    assert config.allow_soft_placement and config.log_device_placement
    assert config.graph_options.optimizer_options.global_jit_level == \
        tf.OptimizerOptions.ON_1
    rw = config.graph_options.rewrite_options
    assert (rw.constant_folding, rw.layout_optimizer, rw.min_graph_nodes) == (2, 1, 3)
    tf.config.optimizer.set_jit(False)
    assert tf.config.optimizer.get_jit() == ""
    assert tf.Session()._config.graph_options.optimizer_options.global_jit_level == \
        tf.OptimizerOptions.OFF
    # an explicit config wins, as in TF
    mine = tf.ConfigProto(inter_op_parallelism_threads=1)
    assert tf.Session(config=mine)._config is mine


def test_soft_placement_from_tf_config_places_an_op_on_a_missing_device():
    with tf.Graph().as_default():
        with tf.device("/device:GPU:7"):
            y = tf.constant(np.float32(4.0)) + 1
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.Session().run(y)
        tf.config.set_soft_device_placement(True)
        assert tf.Session().run(y) == 5.0


def test_constant_folding_off_from_tf_config_reaches_the_plan():
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    with tf.Graph().as_default():
        y = tf.constant(1.0) + tf.constant(2.0)
        with tf.Session() as sess:
            assert sess.run(y) == 3.0
            assert sess._opts["prune_noops"] is False


def test_bad_arguments_raise_tfs_errors():
    with pytest.raises(ValueError, match="Unrecognized device"):
        tf.config.set_visible_devices("x")
    with pytest.raises(ValueError, match="Unrecognized device"):
        tf.config.set_logical_device_configuration("CPU:0", [])
    with pytest.raises(ValueError, match="at least one logical device"):
        tf.config.set_logical_device_configuration(_cpu(), [])
    with pytest.raises(ValueError, match="non-GPU"):
        tf.config.experimental.set_memory_growth(_cpu(), True)
    with pytest.raises(KeyError):
        tf.config.experimental.get_memory_growth(_cpu())
    with pytest.raises(ValueError, match="device_policy"):
        tf.config.experimental.set_device_policy("xx")
    with pytest.raises(ValueError, match="Unknown optimizer options"):
        tf.config.optimizer.set_experimental_options({"constant_foldng": False})
    with pytest.raises(TypeError):
        tf.config.threading.set_intra_op_parallelism_threads("a")
    with pytest.raises(ValueError, match="Failed parsing device name"):
        tf.config.experimental.get_memory_info("XX")
    with pytest.raises(ValueError, match="No matching devices"):
        tf.config.experimental.get_memory_info("GPU:3")


def test_memory_info_of_the_contexts_own_devices():
    assert tf.config.experimental.get_memory_info("CPU:0") == {"current": 0, "peak": 0}
    assert tf.config.experimental.get_memory_usage("/device:CPU:0") == 0
    tf.config.experimental.reset_memory_stats("CPU:0")


def test_eager_switches_are_recorded():
    assert tf.config.experimental.get_device_policy() == "silent"
    tf.config.experimental.set_device_policy("warn")
    assert tf.config.experimental.get_device_policy() == "warn"
    tf.config.experimental.set_device_policy(None)
    assert tf.config.experimental.get_device_policy() == "silent"
    assert tf.config.experimental.get_synchronous_execution() is True
    assert tf.config.experimental.tensor_float_32_execution_enabled() is True
    tf.config.experimental.enable_tensor_float_32_execution(False)
    assert tf.config.experimental.tensor_float_32_execution_enabled() is False


def test_gpu_settings_reach_the_config(monkeypatch):
    monkeypatch.setattr("tensorweave.runtime.gpu.gpu_count", lambda: 2)
    context._reset_for_tests()
    gpus = tf.config.list_physical_devices("GPU")
    assert [g.name for g in gpus] == ["/physical_device:GPU:0", "/physical_device:GPU:1"]
    tf.config.set_visible_devices(gpus[1:], "GPU")
    assert tf.config.get_visible_devices() == [_cpu(), gpus[1]]
    for g in gpus:
        tf.config.experimental.set_memory_growth(g, True)
    assert tf.config.experimental.get_memory_growth(gpus[0]) is True
    tf.config.set_logical_device_configuration(
        gpus[1], [tf.config.LogicalDeviceConfiguration(memory_limit=512)])
    config = context.default_session_config()
    assert config.device_count == {"CPU": 1, "GPU": 1}
    assert config.gpu_options.allow_growth is True
    assert config.device_memory_limit_mb == {"GPU": 512}
    with pytest.raises(ValueError, match="one device per GPU"):
        tf.config.set_logical_device_configuration(
            gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=256)] * 2)
    tf.config.experimental.set_memory_growth(gpus[0], False)
    with pytest.raises(ValueError, match="Memory growth cannot differ"):
        context.default_session_config()
