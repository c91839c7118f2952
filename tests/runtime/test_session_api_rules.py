"""Session API details as TF's: the config's type, make_callable's options, and a
partial run's fetches taken once."""
import pytest

import tensorweave as tf


def test_config_must_be_a_config_proto(graph):
    with pytest.raises(TypeError, match="must be a tf.ConfigProto"):
        tf.Session(config=5)


def test_make_callable_takes_options_without_accept_options(sess):
    x = tf.constant(2.0) * 3
    call = sess.make_callable(x)
    run_metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    assert call(options=options, run_metadata=run_metadata) == 6.0
    with pytest.raises(TypeError):
        call(bogus=1)


def test_a_partial_run_fetch_is_taken_once(sess):
    a = tf.placeholder(tf.float32, [])
    b = a + 1.0
    handle = sess.partial_run_setup([b], [a])
    assert sess.partial_run(handle, b, {a: 2.0}) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="already been fetched"):
        sess.partial_run(handle, b)


def test_config_messages_refuse_unknown_fields_as_protobuf_does():
    with pytest.raises(ValueError, match='has no "nonexistent" field'):
        tf.ConfigProto(nonexistent=1)
    config = tf.ConfigProto()
    with pytest.raises(AttributeError):
        config.nonexistent = 1


def test_config_messages_check_scalar_types_as_protobuf_does():
    with pytest.raises(TypeError, match="allow_soft_placement"):
        tf.ConfigProto(allow_soft_placement="yes")
    config = tf.ConfigProto()
    with pytest.raises(TypeError):
        config.intra_op_parallelism_threads = "3"
    config.gpu_options.per_process_gpu_memory_fraction = 1  # an int is a fine float
    assert config.gpu_options.per_process_gpu_memory_fraction == 1


def test_config_messages_print_as_protobuf_text():
    config = tf.ConfigProto(allow_soft_placement=True, intra_op_parallelism_threads=2)
    config.gpu_options.allow_growth = True
    config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    # the text format TF prints, fields in their proto order, enums by name
    assert str(config) == ("intra_op_parallelism_threads: 2\n"
                           "gpu_options {\n  allow_growth: true\n}\n"
                           "allow_soft_placement: true\n"
                           "graph_options {\n  optimizer_options {\n    opt_level: L0\n  }\n}\n")
    assert [fd.name for fd, _ in config.ListFields()] == [
        "intra_op_parallelism_threads", "gpu_options", "allow_soft_placement",
        "graph_options"]
    assert str(tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)) == \
        "trace_level: FULL_TRACE\n"
    assert str(tf.ConfigProto()) == ""


def test_config_messages_copy_merge_and_clear_as_protobuf():
    c = tf.ConfigProto(device_count={"CPU": 2})
    c.gpu_options.allow_growth = True
    copied = tf.ConfigProto()
    copied.CopyFrom(c)
    copied.gpu_options.allow_growth = False
    copied.device_count["GPU"] = 1
    # a deep copy: the source is unchanged
    assert c.gpu_options.allow_growth and c.device_count == {"CPU": 2}
    merged = tf.ConfigProto(device_count={"GPU": 1}, allow_soft_placement=True)
    merged.MergeFrom(c)
    assert merged.device_count == {"CPU": 2, "GPU": 1} and merged.allow_soft_placement
    assert merged.gpu_options.allow_growth
    assert not tf.ConfigProto().HasField("gpu_options") and c.HasField("gpu_options")
    assert not tf.RunMetadata().HasField("step_stats")
    with pytest.raises(ValueError):
        c.HasField("device_count")  # a map has no presence
    c.ClearField("gpu_options")
    assert not c.HasField("gpu_options")
    c.Clear()
    assert str(c) == "" and c.ByteSize() == 0


def test_enum_fields_take_names_and_run_metadata_has_a_cost_graph():
    options = tf.RunOptions(trace_level="FULL_TRACE")
    assert options.trace_level == tf.RunOptions.FULL_TRACE == 3
    assert tf.RunOptions.TraceLevel.Name(3) == "FULL_TRACE"
    assert tf.OptimizerOptions(opt_level="L0").opt_level == tf.OptimizerOptions.L0
    with pytest.raises(ValueError):
        tf.RunOptions(trace_level="LOUD")
    assert list(tf.RunMetadata().cost_graph.node) == []
