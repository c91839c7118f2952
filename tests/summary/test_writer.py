"""FileWriter, FileWriterCache and summary_iterator: event files read back with our
summary_iterator and with TensorBoard's own EventAccumulator, and an event file written
by real TensorFlow (data/tf_events, made by data/make_tf_events.py) read by ours."""
import io
import os
import re
import socket
import sys
import time
import wave

import numpy as np
import pytest

import tensorweave as tf

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator")
Image = pytest.importorskip("PIL.Image")

DATA = os.path.join(os.path.dirname(__file__), "data")
TF_EVENTS = os.path.join(DATA, "tf_events", "events.out.tfevents.fixture")


def event_files(logdir):
    return sorted(os.path.join(logdir, f) for f in os.listdir(logdir)
                  if f.startswith("events.out.tfevents."))


def read_events(logdir):
    (path,) = event_files(logdir)
    return list(tf.train.summary_iterator(path))


def accumulator(logdir):
    acc = event_accumulator.EventAccumulator(
        str(logdir), size_guidance={k: 0 for k in (
            event_accumulator.SCALARS, event_accumulator.HISTOGRAMS,
            event_accumulator.IMAGES, event_accumulator.AUDIO,
            event_accumulator.TENSORS)})
    acc.Reload()
    return acc


def fixture_graph():
    sys.path.insert(0, DATA)
    try:
        from summary_inputs import build_summaries, inputs
    finally:
        sys.path.remove(DATA)
    ph, merged = build_summaries(tf)
    return ph, inputs, merged


# --- the file -------------------------------------------------------------------------------
def test_file_name_and_first_event(tmp_path):
    logdir = tmp_path / "a" / "b"
    before = int(time.time())
    w = tf.summary.FileWriter(str(logdir), filename_suffix=".sfx")
    assert w.get_logdir() == str(logdir)
    (path,) = event_files(str(logdir))  # created (with its directory) at once
    name = os.path.basename(path)
    m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.sfx", name)
    assert m and m.group(2) == socket.gethostname()
    assert int(m.group(1)) >= before
    w.close()
    (first,) = read_events(str(logdir))
    assert first.file_version == "brain.Event:2"
    assert first.wall_time == int(m.group(1)) and not first.HasField("summary")


def test_records_are_tfrecord_framed(tmp_path):
    with tf.summary.FileWriter(str(tmp_path)) as w:
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=2.0)]), 4)
    (path,) = event_files(str(tmp_path))
    records = list(tf.io.tf_record_iterator(path))  # checks every length and data CRC
    assert len(records) == 2
    event = tf.Event.FromString(records[1])
    assert event.step == 4 and event.summary.value[0].simple_value == 2.0


# --- summaries ------------------------------------------------------------------------------
def test_summaries_read_back_by_tensorboard(graph, tmp_path):
    ph, inputs, merged = fixture_graph()
    w = tf.summary.FileWriter(str(tmp_path))
    with tf.Session() as sess:
        for step in range(3):
            w.add_summary(sess.run(merged, {ph[k]: v for k, v in inputs(step).items()}),
                          global_step=step)
    w.close()
    ours, theirs = accumulator(tmp_path), accumulator(os.path.dirname(TF_EVENTS))
    assert ours.Tags()["scalars"] == theirs.Tags()["scalars"] == ["loss_1"]
    assert [(e.step, e.value) for e in ours.Scalars("loss_1")] == [
        (0, 1.0), (1, np.float32(0.5)), (2, np.float32(1 / 3))]
    for tag in ("params/params/weights",):
        got = [(e.step, e.histogram_value) for e in ours.Histograms(tag)]
        want = [(e.step, e.histogram_value) for e in theirs.Histograms(tag)]
        assert got == want and len(got) == 3
        weights = inputs(2)["weights"].astype(np.float64)
        assert got[2][1].num == 50 and got[2][1].min == weights.min()
    images = ours.Images("images_1/image/1")
    assert [(e.step, e.width, e.height) for e in images] == [(0, 4, 3), (1, 4, 3), (2, 4, 3)]
    decoded = np.asarray(Image.open(io.BytesIO(images[0].encoded_image_string)))
    assert decoded.shape == (3, 4, 3) and decoded.dtype == np.uint8
    gray = np.asarray(Image.open(io.BytesIO(ours.Images("gray_1/image")[1].encoded_image_string)))
    np.testing.assert_array_equal(gray, inputs(1)["gray"][0, :, :, 0])
    (clip, *_) = ours.Audio("audio_1/audio")
    assert (clip.content_type, clip.sample_rate, clip.length_frames) == ("audio/wav", 8000, 40)
    with wave.open(io.BytesIO(clip.encoded_audio_string)) as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.getnframes()) == (2, 8000, 40)
    assert theirs.Audio("audio_1/audio")[0].encoded_audio_string == clip.encoded_audio_string
    text = ours.Tensors("note")
    assert [e.step for e in text] == [0, 1, 2]
    assert list(text[0].tensor_proto.string_val) == [b"hello", b"world"]


def test_add_summary_takes_a_proto_and_keeps_metadata_once(tmp_path):
    meta = tf.SummaryMetadata(plugin_data=tf.SummaryMetadata.PluginData(plugin_name="text"))
    summary = tf.Summary(value=[tf.Summary.Value(tag="t", metadata=meta,
                                                 simple_value=1.0)])
    with tf.summary.FileWriter(str(tmp_path)) as w:
        w.add_summary(summary, 1)
        w.add_summary(summary.SerializeToString(), 2)
    events = read_events(str(tmp_path))[1:]
    assert [e.step for e in events] == [1, 2]
    assert events[0].summary.value[0].metadata.plugin_data.plugin_name == "text"
    assert not events[1].summary.value[0].HasField("metadata")
    assert summary.value[0].HasField("metadata")  # the caller's message is left alone
    with pytest.raises(TypeError, match="Summary protocol buffer"):
        tf.summary.FileWriter(str(tmp_path)).add_summary(3.0)


def test_wall_time_step_session_log_and_add_event(tmp_path):
    before = time.time()
    w = tf.summary.FileWriter(str(tmp_path))
    w.add_session_log(tf.SessionLog(status=tf.SessionLog.START), global_step=np.int64(7))
    w.add_event(tf.Event(wall_time=5.0, step=9, file_version="custom"))
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=1.0)]))
    w.close()
    events = read_events(str(tmp_path))[1:]
    assert events[0].session_log.status == tf.SessionLog.START and events[0].step == 7
    assert events[0].wall_time >= before
    assert (events[1].wall_time, events[1].step, events[1].file_version) == (5.0, 9, "custom")
    assert events[2].step == 0 and not events[2].HasField("session_log")


# --- graphs and metadata --------------------------------------------------------------------
def small_graph():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(tf.ones([3, 2]), name="w")
    y = tf.matmul(x, w, name="y")
    return x, w, y


def written_names(graph) -> set:
    """The node names a written graph holds: the graph's ops and, for the reference
    variable w, the read TF's tooling fetches (framework/graph_def_lowering.py)."""
    return {op.name for op in graph.get_operations()} | {"w/Read/ReadVariableOp"}


def test_graph_in_constructor_and_add_graph(graph, tmp_path):
    small_graph()
    with tf.summary.FileWriter(str(tmp_path), graph) as w:
        w.add_graph(graph, global_step=3)
    events = read_events(str(tmp_path))[1:]
    kinds = [e.WhichOneof("what") for e in events]
    assert kinds == ["graph_def", "meta_graph_def", "graph_def"] and events[2].step == 3
    from tensorboard.compat.proto import graph_pb2
    gd = graph_pb2.GraphDef.FromString(events[0].graph_def)
    nodes = {n.name: n for n in gd.node}
    assert nodes["y"].op == "MatMul" and nodes["y"].input[0] == "x"
    assert "_output_shapes" in nodes["y"].attr
    acc = accumulator(tmp_path)
    assert acc.Tags()["graph"] and acc.Tags()["meta_graph"]
    assert {n.name for n in acc.Graph().node} == written_names(graph)


def test_add_graph_errors(graph, tmp_path):
    w = tf.summary.FileWriter(str(tmp_path))
    with pytest.raises(TypeError, match="must be an instance of `Graph`"):
        w.add_graph("not a graph")
    with pytest.raises(ValueError, match="only graph, or graph_def"):
        w.add_graph(graph, graph_def=graph.as_graph_def())
    w.add_graph(None, graph_def=graph.as_graph_def())  # our GraphDef, converted
    w.close()
    assert read_events(str(tmp_path))[1].WhichOneof("what") == "graph_def"


def test_add_meta_graph(graph, tmp_path):
    small_graph()
    saver = tf.train.Saver()
    meta = tf.train.export_meta_graph(saver_def=saver.saver_def)
    with tf.summary.FileWriter(str(tmp_path)) as w:
        w.add_meta_graph(meta, global_step=2)
        with pytest.raises(TypeError, match="meta_graph_def must be type MetaGraphDef"):
            w.add_meta_graph(b"bytes")
    acc = accumulator(tmp_path)
    proto = acc.MetaGraph()
    assert {n.name for n in proto.graph_def.node} == written_names(graph)
    assert proto.saver_def.restore_op_name == meta.saver_def.restore_op_name != ""


def test_add_run_metadata(graph, tmp_path):
    x, w, y = small_graph()
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    md = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(y, {x: np.ones((1, 3), np.float32)}, options=opts, run_metadata=md)
    with tf.summary.FileWriter(str(tmp_path)) as fw:
        fw.add_run_metadata(md, "step1", global_step=1)
        with pytest.raises(ValueError, match="tag was already used"):
            fw.add_run_metadata(md, "step1")
    acc = accumulator(tmp_path)
    assert acc.Tags()["run_metadata"] == ["step1"]
    stats = acc.RunMetadata("step1").step_stats
    names = {ns.node_name for dev in stats.dev_stats for ns in dev.node_stats}
    assert "y" in names


# --- the writer's life ----------------------------------------------------------------------
def test_flush_writes_without_close(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path), max_queue=1000, flush_secs=10000)
    for step in range(50):
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=step)]), step)
    w.flush()
    assert [e.step for e in read_events(str(tmp_path))[1:]] == list(range(50))
    w.close()


def test_small_queue_loses_nothing(tmp_path):
    with tf.summary.FileWriter(str(tmp_path), max_queue=1) as w:
        for step in range(100):
            w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=1)]), step)
    assert [e.step for e in read_events(str(tmp_path))[1:]] == list(range(100))


def test_background_flush_every_flush_secs(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path), flush_secs=0.05)
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=1.0)]), 1)
    deadline = time.monotonic() + 30  # bounded wait: no flush() or close() is called
    while len(read_events(str(tmp_path))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(read_events(str(tmp_path))) == 2
    w.close()


def test_close_reopen(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path))
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    w.close()
    w.close()  # harmless
    # a warnings.warn, as TF's
    with pytest.warns(UserWarning, match="Attempting to use a closed FileWriter"):
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="lost", simple_value=1.0)]), 2)
    w.reopen()
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="b", simple_value=2.0)]), 3)
    w.close()
    events = [e for path in event_files(str(tmp_path)) for e in tf.train.summary_iterator(path)]
    tags = [v.tag for e in events for v in e.summary.value]
    assert tags == ["a", "b"]  # a reopen within the same second appends, not truncates
    assert sum(e.file_version == "brain.Event:2" for e in events) == 2


def test_writer_thread_errors_reach_the_caller(tmp_path, monkeypatch):
    w = tf.summary.FileWriter(str(tmp_path))

    def failing_write(record):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(w.event_writer._file, "write", failing_write)
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    with pytest.raises(OSError, match="No space left"):
        w.flush()
    monkeypatch.undo()
    w.close()


def test_file_writer_cache(graph, tmp_path):
    small_graph()
    a = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is a
    tf.summary.FileWriterCache.clear()
    assert a.event_writer._closed
    b = tf.summary.FileWriterCache.get(str(tmp_path))
    assert b is not a
    tf.summary.FileWriterCache.clear()
    kinds = [e.WhichOneof("what") for path in event_files(str(tmp_path))
             for e in tf.train.summary_iterator(path)]
    assert kinds.count("graph_def") == 2  # each cached writer wrote the default graph


# --- reading --------------------------------------------------------------------------------
def test_summary_iterator_reads_tensorflows_file():
    events = list(tf.train.summary_iterator(TF_EVENTS))
    assert isinstance(events[0], tf.Event)
    assert events[0].file_version == "brain.Event:2"
    steps = [e.step for e in events if e.HasField("summary")]
    assert steps == [0, 1, 2]
    last = events[-1]
    assert last.session_log.status == tf.SessionLog.STOP and last.step == 3
    loss = [v.simple_value for e in events for v in e.summary.value if v.tag == "loss_1"]
    assert loss == [1.0, np.float32(0.5), np.float32(1 / 3)]


def test_summary_iterator_missing_file(tmp_path):
    # as TF, the file is opened by the call, not by the first next()
    with pytest.raises(tf.errors.NotFoundError) as info:
        tf.train.summary_iterator(str(tmp_path / "nothing"))
    assert info.value.message == "%s; No such file or directory" % (tmp_path / "nothing")


def test_public_names():
    assert tf.summary.Summary is tf.Summary and tf.summary.Event is tf.Event
    assert tf.summary.SessionLog is tf.SessionLog
    assert tf.summary.TaggedRunMetadata.DESCRIPTOR.name == "TaggedRunMetadata"
    assert tf.summary.SummaryDescription.DESCRIPTOR.name == "SummaryDescription"
    assert tf.HistogramProto.DESCRIPTOR.name == "HistogramProto"
    assert tf.compat.v1.summary.FileWriter is tf.summary.FileWriter
    for name in ("scalar", "histogram", "image", "audio", "text", "tensor_summary",
                 "merge", "merge_all", "FileWriter", "FileWriterCache"):
        assert callable(getattr(tf.summary, name))


def test_plain_files_without_gfile(tmp_path, monkeypatch):
    from tensorweave.summary import event_file_writer
    monkeypatch.setattr(event_file_writer, "_gfile", lambda: None)
    with tf.summary.FileWriter(str(tmp_path / "plain"), session=object()) as w:
        assert isinstance(w.event_writer._file._file, io.BufferedWriter)
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="p", simple_value=3.0)]), 5)
    events = read_events(str(tmp_path / "plain"))
    assert events[0].file_version == "brain.Event:2"
    assert events[1].step == 5 and events[1].summary.value[0].simple_value == 3.0


def test_two_processes_writing_one_logdir_in_the_same_second_keep_their_own_files(
        tmp_path):
    """An evaluator and a chief both write eval summaries to model_dir/eval: files made
    in the same second on one host used to get one name, and the two writers' records
    interleaved into a corrupted file (DataLossError when read)."""
    import subprocess
    import textwrap
    script = textwrap.dedent("""\
        import sys, time, types
        import tensorweave as tf
        from tensorweave.summary import event_file_writer as efw
        # both processes' clocks read the same second
        efw.time = types.SimpleNamespace(time=lambda: 1700000000.25,
                                         monotonic=time.monotonic)
        w = tf.summary.FileWriter(sys.argv[1])
        for step in range(300):
            w.add_summary(tf.Summary(value=[tf.Summary.Value(
                tag=sys.argv[2], simple_value=float(step))]), step)
            if step % 50 == 0:
                w.flush()
        w.close()
        """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), tag])
             for tag in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    files = event_files(str(tmp_path))
    assert len(files) == 2
    assert os.path.basename(files[0]) == "events.out.tfevents.1700000000.%s" \
        % socket.gethostname()  # the first keeps TF1's name, the other adds its pid
    tags = []
    for path in files:
        values = [(e.step, v.tag, v.simple_value) for e in tf.train.summary_iterator(path)
                  for v in e.summary.value]
        assert [step for step, _, _ in values] == list(range(300))
        tags.append({tag for _, tag, _ in values})
    assert sorted(map(sorted, tags)) == [["a"], ["b"]]


def test_events_of_a_writer_never_closed_reach_the_file_at_exit(tmp_path):
    # cifar10_train.py's MonitoredTrainingSession adds the last checkpoint's SessionLog at
    # the end and the process exits: TF's file has it, ours lost the writer thread's queue.
    import subprocess
    import sys
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    code = ("import tensorweave as tf\n"
            "w = tf.summary.FileWriter(%r)\n"
            "w.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 3)\n"
            "w.add_summary(tf.Summary(value=[tf.Summary.Value(tag='x', simple_value=2.5)]), 4)\n"
            % str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.path.abspath(src)), timeout=120)
    assert done.returncode == 0, done.stderr
    (path,) = [os.path.join(tmp_path, f) for f in os.listdir(tmp_path)]
    events = list(tf.train.summary_iterator(path))
    assert [(e.step, e.WhichOneof("what")) for e in events] == [
        (0, "file_version"), (3, "session_log"), (4, "summary")]
    assert events[2].summary.value[0].simple_value == 2.5
