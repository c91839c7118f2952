"""The standard SessionRunHooks and SecondOrStepTimer."""
import glob
import json
import logging
import os

import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


def _counter_model():
    """A global step incremented by `train`, and a float loss that halves each step."""
    step = tf.train.get_or_create_global_step()
    loss = tf.pow(0.5, tf.cast(step, tf.float32))
    train = tf.assign_add(step, 1)
    return step, loss, train


def _train(hooks, max_runs=50, **kwargs):
    """Runs `train` until a stop (at most max_runs calls); returns the number of calls."""
    runs = 0
    with tf.train.SingularMonitoredSession(hooks=hooks, **kwargs) as sess:
        while not sess.should_stop() and runs < max_runs:
            sess.run(tf.get_collection("train")[0])
            runs += 1
    return runs


@pytest.fixture
def model(graph):
    step, loss, train = _counter_model()
    tf.add_to_collection("train", train)
    return step, loss, train


def test_second_or_step_timer():
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(5)  # first call
    assert timer.update_last_triggered_step(5) == (None, None)
    assert timer.last_triggered_step() == 5
    assert not timer.should_trigger_for_step(5)
    assert not timer.should_trigger_for_step(7)
    assert timer.should_trigger_for_step(8)
    secs, steps = timer.update_last_triggered_step(8)
    assert steps == 3 and secs >= 0
    timer.reset()
    assert timer.last_triggered_step() is None
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


def test_stop_at_step_hook_last_step_and_num_steps(model):
    step, loss, train = model
    assert _train([tf.train.StopAtStepHook(last_step=4)]) == 4
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        tf.train.StopAtStepHook(num_steps=1, last_step=1)


def test_stop_at_step_num_steps_counts_from_restored_step(model, tmp_path):
    step, loss, train = model
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(step.assign(10))
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=10)
    hook = tf.train.StopAtStepHook(num_steps=3)
    assert _train([hook], checkpoint_dir=str(tmp_path)) == 3
    assert hook._last_step == 13


def test_stop_at_step_hook_needs_a_global_step(graph):
    hook = tf.train.StopAtStepHook(num_steps=1)
    with pytest.raises(RuntimeError, match="Global step should be created to use "
                                           "StopAtStepHook"):
        hook.begin()


def test_logging_tensor_hook_every_n_iter(model, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    tensors = {"b": tf.constant([1, 2]), "a": tf.constant(1.5)}
    hook = tf.train.LoggingTensorHook(tensors, every_n_iter=2)
    _train([hook, tf.train.StopAtStepHook(last_step=5)])
    lines = [r.getMessage() for r in caplog.records
             if r.name == "tensorflow" and "a = " in r.getMessage()]
    # Logged at runs 0, 2 and 4, tags sorted; later lines give the seconds since the last.
    assert len(lines) == 3
    assert lines[0] == "a = 1.5, b = [1 2]"
    assert lines[1].startswith("a = 1.5, b = [1 2] (") and lines[1].endswith(" sec)")


def test_logging_tensor_hook_list_formatter_and_at_end(model, caplog):
    step, loss, train = model
    caplog.set_level(logging.INFO, logger="tensorflow")
    hook = tf.train.LoggingTensorHook([loss.name], at_end=True,
                                      formatter=lambda v: "LOSS<%g>" % v[loss.name])
    _train([hook, tf.train.StopAtStepHook(last_step=3)])
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("LOSS")]
    assert lines == ["LOSS<0.125>"]
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook([loss])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook([loss], every_n_iter=0)


def test_nan_tensor_hook_raises_or_stops(graph, caplog):
    step = tf.train.get_or_create_global_step()
    loss = tf.log(tf.cast(2 - step, tf.float32) - 1.0)  # NaN from step 2 on
    train = tf.assign_add(step, 1)
    tf.add_to_collection("train", train)
    with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
        _train([tf.train.NanTensorHook(loss)])
    caplog.set_level(logging.WARNING, logger="tensorflow")
    assert _train([tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) == 3
    assert "Model diverged with loss = NaN." in caplog.text
    assert issubclass(tf.train.NanLossDuringTrainingError, RuntimeError)


class _Listener(tf.train.CheckpointSaverListener):
    def __init__(self, stop_at=None):
        self.calls = []
        self.stop_at = stop_at

    def begin(self):
        self.calls.append("begin")

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))
        return global_step_value == self.stop_at

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_checkpoint_saver_hook_and_listener(model, tmp_path):
    step, loss, train = model
    listener = _Listener()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[listener])
    _train([hook, tf.train.StopAtStepHook(last_step=5)])
    assert listener.calls == [
        "begin", ("before_save", 0), ("after_save", 0), ("before_save", 2),
        ("after_save", 2), ("before_save", 4), ("after_save", 4), ("before_save", 5),
        ("after_save", 5), ("end", 5)]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-0", "model.ckpt-2", "model.ckpt-4", "model.ckpt-5"]
    tf.summary.FileWriterCache.clear()  # flushes the event file
    logs = [e.session_log for f in glob.glob(str(tmp_path / "events.*"))
            for e in tf.train.summary_iterator(f) if e.WhichOneof("what") == "session_log"]
    assert [l.checkpoint_path for l in logs] == [str(tmp_path / "model.ckpt")] * 4


def test_checkpoint_listener_can_stop_training(model, tmp_path):
    listener = _Listener(stop_at=2)
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[listener])
    assert _train([hook]) == 2
    with pytest.raises(ValueError, match="You cannot provide both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1,
                                     saver=tf.train.Saver(), scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.CheckpointSaverHook(str(tmp_path))


def test_summary_saver_hook_and_step_counter(model, tmp_path):
    step, loss, train = model
    tf.summary.scalar("loss", loss)
    summary_op = tf.summary.merge_all()
    hooks = [tf.train.SummarySaverHook(save_steps=3, output_dir=str(tmp_path),
                                       summary_op=summary_op),
             tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path)),
             tf.train.StopAtStepHook(last_step=7)]
    _train(hooks)
    events = [e for f in glob.glob(str(tmp_path / "events.*"))
              for e in tf.train.summary_iterator(f)]
    losses = [(e.step, v.simple_value) for e in events if e.WhichOneof("what") == "summary"
              for v in e.summary.value if v.tag == "loss"]
    # The summary op runs with the step's train op: it reads the step before the increment.
    assert losses == [(1, 1.0), (4, 0.125), (7, 0.015625)]
    rates = [e.step for e in events if e.WhichOneof("what") == "summary"
             for v in e.summary.value if v.tag == "global_step/sec"]
    assert rates == [3, 5, 7]
    starts = [e.step for e in events if e.WhichOneof("what") == "session_log"]
    assert starts == [1]
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=None)


def test_final_ops_feed_fn_and_global_step_waiter(model):
    step, loss, train = model
    x = tf.placeholder(tf.int64, [])
    final = tf.train.FinalOpsHook(step * x, final_ops_feed_dict={x: 10})
    fed = []

    class Check(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(x)

        def after_run(self, run_context, run_values):
            fed.append(run_values.results)

    feeder = tf.train.FeedFnHook(lambda: {x: len(fed) + 100})
    _train([tf.train.GlobalStepWaiterHook(0), feeder, Check(), final,
            tf.train.StopAtStepHook(last_step=3)])
    assert fed == [100, 101, 102]
    assert final.final_ops_values == 30


def test_profiler_hook_writes_chrome_trace(model, tmp_path):
    step, loss, train = model
    hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
    _train([hook, tf.train.StopAtStepHook(last_step=5)])
    names = sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "timeline-*.json")))
    # The first traced run is the first one due after the first run (step 0 -> 1).
    assert names == ["timeline-2.json", "timeline-4.json"]
    with open(str(tmp_path / "timeline-2.json")) as f:
        trace = json.load(f)
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert ops and {"name", "ts", "dur", "pid", "tid", "args"} <= set(ops[0])
    assert any(e["args"]["name"] == train.op.name for e in ops)
    tf.summary.FileWriterCache.clear()
    tagged = [e.tagged_run_metadata.tag for f in glob.glob(str(tmp_path / "events.*"))
              for e in tf.train.summary_iterator(f)
              if e.WhichOneof("what") == "tagged_run_metadata"]
    assert tagged == ["step_2", "step_4"]


def test_logging_tensor_hook_names_and_graph_checks(model, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    tf.constant(2.5, name="c")
    tf.split(tf.constant([1.0, 2.0]), 2, name="two")
    with pytest.raises(ValueError, match="Name two is ambiguous"):
        tf.train.LoggingTensorHook(["two"], every_n_iter=1).begin()
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0)
    with pytest.raises(ValueError, match="should have graph attribute that is equal"):
        tf.train.LoggingTensorHook([foreign], every_n_iter=1).begin()
    hook = tf.train.LoggingTensorHook(["c"], every_n_iter=1)
    _train([hook, tf.train.StopAtStepHook(last_step=1)])
    assert "c = 2.5" in caplog.text


def test_global_step_waiter_passes_once_step_is_reached(model, tmp_path):
    step, loss, train = model
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(step.assign(5))
        saver.save(sess, str(tmp_path / "model.ckpt"))
    waiter = tf.train.GlobalStepWaiterHook(wait_until_step=3)
    assert _train([waiter, tf.train.StopAtStepHook(num_steps=2)],
                  checkpoint_dir=str(tmp_path)) == 2
    assert waiter._worker_is_started


def _event_kinds(logdir):
    tf.summary.FileWriterCache.clear()
    return [(e.step, e.WhichOneof("what"))
            for f in sorted(glob.glob(os.path.join(logdir, "events.*")))
            for e in tf.train.summary_iterator(f)]


def test_checkpoint_saver_hook_save_graph_def_false_still_logs_the_graph(model, tmp_path):
    """save_graph_def=False skips graph.pbtxt and the .meta files only: as TF1, the
    event file still gets the graph and meta graph (after the pair the writer got when
    it was created)."""
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, save_graph_def=False)
    _train([hook, tf.train.StopAtStepHook(last_step=2)])
    assert sorted(f for f in os.listdir(str(tmp_path)) if "tfevents" not in f) == [
        "checkpoint", "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index",
        "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index"]
    assert _event_kinds(str(tmp_path)) == [
        (0, "file_version"), (0, "graph_def"), (0, "meta_graph_def"), (0, "graph_def"),
        (0, "meta_graph_def"), (0, "session_log"), (2, "session_log")]


def test_hook_messages_match_tf1(model, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    with pytest.raises(ValueError, match=r"^Exactly one of scaffold or summary_op must be "
                                         r"provided\.$"):
        tf.train.SummarySaverHook(save_steps=1, output_dir="/tmp")
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match=r"^Global step should be created to use "
                                               r"_GlobalStepWaiterHook\.$"):
            tf.train.GlobalStepWaiterHook(1).begin()
        item = tf.data.make_one_shot_iterator(tf.data.Dataset.range(1)).get_next()
        with pytest.raises(tf.errors.OutOfRangeError):
            with tf.train.MonitoredSession(hooks=[tf.train.FinalOpsHook(item)]) as sess:
                sess.run(item)
    assert caplog.messages[-1].startswith(
        "An OutOfRangeError or StopIteration exception is raised by the code in "
        "FinalOpsHook. This typically means the Ops running by the FinalOpsHook have a "
        "dependency back to some input source, which should not happen.")


def test_profiler_hook_trace_is_tf_timeline_format(model, tmp_path):
    """The trace is what tf.client.timeline.Timeline writes: only "traceEvents", with
    process sort indices and named thread lanes."""
    hook = tf.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path))
    _train([hook, tf.train.StopAtStepHook(last_step=2)])
    with open(str(tmp_path / "timeline-2.json")) as f:
        trace = json.load(f)
    assert list(trace) == ["traceEvents"]
    metadata = {e["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert metadata == {"process_name", "process_sort_index", "thread_name"}
