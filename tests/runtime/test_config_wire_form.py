"""ConfigProto, RunOptions and RunMetadata on the wire: TF's messages (tensorboard's
copies of config.proto), so they round-trip and a RunMetadata read from an event file
parses."""
import glob

import tensorweave as tf


def test_run_options_and_config_round_trip():
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=5)
    data = options.SerializeToString()
    assert data == b"\x08\x03\x10\x05"  # fields 1 and 2 of tensorflow.RunOptions, varints
    back = tf.RunOptions()
    back.ParseFromString(data)
    assert back == options
    config = tf.ConfigProto(inter_op_parallelism_threads=2, allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    parsed = tf.ConfigProto()
    parsed.ParseFromString(config.SerializeToString())
    assert parsed == config and parsed.gpu_options.allow_growth
    proto = tf.ConfigProto.FromString(config.SerializeToString())  # TF's message
    assert proto.inter_op_parallelism_threads == 2 and proto.DESCRIPTOR.full_name \
        .endswith("ConfigProto")


def test_run_metadata_from_an_event_file(tmp_path):
    with tf.Graph().as_default():
        y = tf.constant([1.0, 2.0]) * 2.0
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=metadata)
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_run_metadata(metadata, "step1")
    [path] = glob.glob(str(tmp_path / "*"))
    tagged = [e.tagged_run_metadata for e in tf.train.summary_iterator(path)
              if e.HasField("tagged_run_metadata")]
    assert [t.tag for t in tagged] == ["step1"]
    read = tf.RunMetadata.FromString(tagged[0].run_metadata)
    names = [n.node_name for d in read.step_stats.dev_stats for n in d.node_stats]
    assert y.op.name in names
    assert tf.RunMetadata.FromString(metadata.SerializeToString()) == read
