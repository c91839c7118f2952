"""tf.profiler.write_op_log and OpLogProto (profiler/tfprof_logger.py): the file TF 2.21
writes for the same graph (its entries recorded as literals below), code locations, and
merging with a given op log."""
import os

import numpy as np

import tensorweave as tf

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _model(batch=64):
    x = tf.placeholder(tf.float32, [batch, 64], name="x")
    w = tf.Variable(tf.ones([64, 64]), name="w")
    y = tf.matmul(x, w, name="mm")
    z = tf.nn.relu(y, name="relu")
    return x, w, tf.reduce_sum(z, name="sum")


def _read(log_dir):
    log = tf.profiler.OpLogProto()
    with open(os.path.join(log_dir, "tfprof_log"), "rb") as f:
        log.ParseFromString(f.read())
    return log


def test_write_op_log_as_tensorflow(graph, tmp_path):
    _model()
    tf.profiler.write_op_log(graph, str(tmp_path), add_trace=False)
    log = _read(tmp_path)
    # TF 2.21 writes, for this graph: mm 524288 float ops (2 * 64^3), sum 4095, and w
    # typed as a trainable variable; id_to_string {0: "none"}
    assert [(e.name, e.float_ops, list(e.types)) for e in log.log_entries] == [
        ("mm", 524288, []), ("sum", 4095, []), ("w", 0, ["_trainable_variables"])]
    assert dict(log.id_to_string) == {0: "none"}


def test_code_locations_name_file_line_and_function(graph, tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.square(x, name="sq")  # the square line
    tf.profiler.write_op_log(None, str(tmp_path))
    log = _read(tmp_path)
    names = dict(log.id_to_string)
    entry = next(e for e in log.log_entries if e.name == "sq")
    (trace,) = entry.code_def.traces
    assert names[trace.file_id] == __file__
    assert names[trace.function_id] == "test_code_locations_name_file_line_and_function"
    assert names[trace.line_id] == 'y = tf.square(x, name="sq")  # the square line'
    assert trace.lineno == y.op.traceback[0][1] and trace.func_start_line == -1
    assert names[0] == "none"
    assert {e.name for e in log.log_entries} == {"x", "sq"}


def test_run_meta_completes_unknown_shapes(graph, tmp_path):
    x, w, total = _model(batch=None)
    tf.profiler.write_op_log(graph, str(tmp_path), add_trace=False)
    assert [e.name for e in _read(tmp_path).log_entries] == ["w"]
    with tf.Session() as sess:
        sess.run(w.initializer)
        run_meta = tf.RunMetadata()
        sess.run(total, {x: np.ones([3, 64])}, options=FULL, run_metadata=run_meta)
    tf.profiler.write_op_log(graph, str(tmp_path), run_meta=run_meta, add_trace=False)
    # as TF 2.21: relu's recorded [3, 64] output gives sum 3 * 64 - 1 = 191 float ops;
    # mm's input x was fed (nothing recorded), so mm still has none
    assert [(e.name, e.float_ops) for e in _read(tmp_path).log_entries] == [
        ("sum", 191), ("w", 0)]


def test_merge_keeps_the_given_entries(graph, tmp_path):
    _model()
    given = tf.profiler.OpLogProto()
    given.log_entries.add(name="mm", types=["my_type"])
    given.log_entries.add(name="sum", float_ops=7)
    given.log_entries.add(name="elsewhere", float_ops=3)
    tf.profiler.write_op_log(graph, str(tmp_path), op_log=given, add_trace=False)
    log = _read(tmp_path)
    entries = {e.name: (e.float_ops, list(e.types)) for e in log.log_entries}
    assert entries == {"mm": (524288, ["my_type"]), "sum": (7, []), "elsewhere": (3, []),
                       "w": (0, ["_trainable_variables"])}
    assert [e.name for e in given.log_entries] == ["mm", "sum", "elsewhere"]
    assert given.log_entries[0].float_ops == 0  # the caller's message is not changed
