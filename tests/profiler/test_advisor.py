"""tf.profiler.advise and AdviceProto (profiler/advisor.py): each checker's report
strings for small graphs and hand-written RunMetadata (times chosen so that the reports
can be computed by hand), in the formats of TF 2.21's tfprof advisor."""
import numpy as np
import pytest
from tensorboard.compat.proto import config_pb2

import tensorweave as tf

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU = "/job:localhost/replica:0/task:0/device:GPU:0"


def _run_meta(device, records):
    """A RunMetadata of `device` with one record (name, start µs, duration µs) each."""
    run_meta = config_pb2.RunMetadata()
    dev = run_meta.step_stats.dev_stats.add(device=device)
    for name, start, micros in records:
        dev.node_stats.add(node_name=name, all_start_micros=start, op_end_rel_micros=micros,
                           all_end_rel_micros=micros)
    return run_meta


def _model():
    x = tf.placeholder(tf.float32, [8, 4], name="x")
    w = tf.Variable(tf.ones([4, 4]), name="w")
    y = tf.matmul(x, w, name="mm")  # the matmul line
    z = tf.nn.relu(y, name="relu")  # the relu line
    return tf.reduce_sum(z, name="sum")


def _line_of(where, marker):
    return int(where(marker).rsplit(":", 1)[1])


def test_advice_proto_is_tensorflows_message():
    advice = tf.profiler.AdviceProto()
    advice.checkers["X"].reports.append("r1")
    assert type(advice).DESCRIPTOR.full_name == "tensorflow.tfprof.AdviceProto"
    assert advice.SerializeToString() == b"\n\t\n\x01X\x12\x04\x12\x02r1"  # TF 2.21's bytes


def test_without_run_metadata_nothing_to_report(graph, capsys):
    _model()
    advice = tf.profiler.advise(graph)
    assert sorted(advice.checkers) == ["AcceleratorUtilizationChecker",
                                       "ExpensiveOperationChecker", "OperationChecker"]
    assert all(not c.reports for c in advice.checkers.values())
    out = capsys.readouterr()
    assert "Missing RunMetadata info. Skip ExpensiveOperationChecker" in out.err
    assert out.out == ("\nAcceleratorUtilizationChecker:\n\nOperationChecker:\n"
                       "\nExpensiveOperationChecker:\n")


def test_expensive_operations(graph, where, capsys):
    _model()
    run_meta = _run_meta(CPU, [("w", 0, 1), ("mm", 10, 2500), ("relu", 3000, 150),
                               ("sum", 3200, 40)])
    advice = tf.profiler.advise(graph, run_meta, {"ExpensiveOperationChecker": {}})
    assert list(advice.checkers) == ["ExpensiveOperationChecker"]
    # 2691us in all: MatMul 2500 / 2691 = 92.90%, Relu 5.57%, Sum 1.49%
    op_view, scope_view, code_view = advice.checkers["ExpensiveOperationChecker"].reports
    assert op_view == (
        "top 1 operation type: MatMul, cpu: 2.50ms, accelerator: 0us, total: 2.50ms "
        "(92.90%)\n"
        "top 2 operation type: Relu, cpu: 150us, accelerator: 0us, total: 150us (5.57%)\n"
        "top 3 operation type: Sum, cpu: 40us, accelerator: 0us, total: 40us (1.49%)")
    # the scope view hides nodes under 100us
    assert scope_view == (
        "top 1 graph node: mm, cpu: 2.50ms, accelerator: 0us, total: 2.50ms\n"
        "top 2 graph node: relu, cpu: 150us, accelerator: 0us, total: 150us")
    # the code view lists the lines that took at least 1ms
    assert code_view == "test_advisor.py:%d:_model, cpu: 2.50ms, accelerator: 0us, " \
        "total: 2.50ms" % _line_of(where, "the matmul line")
    assert "\nExpensiveOperationChecker:\ntop 1 operation type: MatMul" in \
        capsys.readouterr().out


def test_gradient_ops_count_for_the_line_of_their_forward_op(graph, where):
    x = tf.placeholder(tf.float32, [8, 4], name="x")
    w = tf.Variable(tf.ones([4, 4]), name="w")
    y = tf.matmul(x, w, name="mm")  # the forward line
    grad = tf.gradients(y, w)[0]
    records = [("mm", 0, 2000), (grad.op.name, 2000, 3000)]
    assert grad.op.name.startswith("gradients/mm_grad/")
    advice = tf.profiler.advise(graph, _run_meta(CPU, records),
                                {"ExpensiveOperationChecker": {}})
    code_view = advice.checkers["ExpensiveOperationChecker"].reports[-1]
    line = "test_advisor.py:%d:test_gradient_ops..." % _line_of(  # 17 characters
        where, "the forward line")
    assert code_view == (
        "%s (gradient), cpu: 3.00ms, accelerator: 0us, total: 3.00ms\n"
        "%s, cpu: 2.00ms, accelerator: 0us, total: 2.00ms" % (line, line))


def test_accelerator_utilization(graph):
    _model()
    # on the GPU, mm runs 600us and relu 200us of the 1000us from 1000 to 2000
    busy = _run_meta(GPU, [("mm", 1000, 600), ("relu", 1800, 200)])
    advice = tf.profiler.advise(graph, busy)
    assert list(advice.checkers["AcceleratorUtilizationChecker"].reports) == [
        "device: %s utilization: 0.80" % GPU]
    assert advice.checkers["ExpensiveOperationChecker"].reports[0].startswith(
        "top 1 operation type: MatMul, cpu: 0us, accelerator: 600us, total: 600us")
    idle = _run_meta(GPU, [("mm", 1000, 100), ("relu", 1800, 200)])
    advice = tf.profiler.advise(graph, idle, {"AcceleratorUtilizationChecker": {}})
    assert list(advice.checkers["AcceleratorUtilizationChecker"].reports) == [
        "device: %s low utilization: 0.30" % GPU]
    advice = tf.profiler.advise(graph, _run_meta(CPU, [("mm", 0, 600)]))
    assert not advice.checkers["AcceleratorUtilizationChecker"].reports


def test_operation_checker(graph):
    images = tf.placeholder(tf.float32, [1, 8, 8, 3])
    with tf.name_scope("BatchNorm"):
        mean, variance = tf.nn.moments(images, [0, 1, 2])
        normed = tf.nn.batch_normalization(images, mean, variance, None, None, 1e-3)
    conv = tf.nn.conv2d(normed, tf.ones([3, 3, 3, 4]), [1, 1, 1, 1], "SAME",
                        data_format="NHWC", name="conv")
    advice = tf.profiler.advise(graph, None, {"OperationChecker": {}})
    assert list(advice.checkers["OperationChecker"].reports) == [
        "Maybe use faster FusedBatchNorm instead of BatchNorm"]
    on_gpu = _run_meta(GPU, [(conv.op.name, 0, 10)])
    advice = tf.profiler.advise(graph, on_gpu, {"OperationChecker": {}})
    assert list(advice.checkers["OperationChecker"].reports) == [
        "Maybe use faster FusedBatchNorm instead of BatchNorm",
        "Found operation using NHWC data_format on GPU. Maybe NCHW is faster."]


def test_job_checker_reports_nothing_as_in_open_source_tensorflow(graph):
    _model()
    assert not tf.profiler.advise(graph, None, {"JobChecker": {}}).checkers


def test_advise_a_traced_run_and_the_profilers_steps(graph):
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    y = tf.reduce_sum(tf.matmul(x, x, name="mm"), name="sum")
    profiler = tf.profiler.Profiler(graph)
    with tf.Session() as sess:
        run_meta = tf.RunMetadata()
        sess.run(y, {x: np.ones([64, 64])},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=run_meta)
    profiler.add_step(1, run_meta)
    for advice in (tf.profiler.advise(graph, run_meta), profiler.advise(
            {"ExpensiveOperationChecker": {}})):
        op_view = advice.checkers["ExpensiveOperationChecker"].reports[0]
        assert op_view.startswith("top 1 operation type: ")
        assert {"MatMul", "Sum"} <= {line.split(", ")[0].split(": ")[1]
                                     for line in op_view.split("\n")}


@pytest.mark.parametrize("micros,text", [(0, "0us"), (999, "999us"), (1000, "1.00ms"),
                                         (37110, "37.11ms"), (1500000, "1.50sec")])
def test_time_format(micros, text):
    from tensorweave.profiler.advisor import format_time
    assert format_time(micros) == text
