"""tensorweave.replay: recording a session's inputs and replaying them."""
import json
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import replay
from tensorweave.framework import errors

HERE = os.path.dirname(__file__)
PROGRAM = os.path.join(HERE, "runtime", "deterministic_program.py")
sys.path.insert(0, os.path.join(HERE, "runtime"))
from test_deterministic import write_csv_files  # noqa: E402

REPLAY_SCRIPT = r"""
import json, sys
import numpy as np
from tensorweave import replay
record, out = sys.argv[1], sys.argv[2]
failing = [c for c in replay.load_calls(record) if c["stream"] == "main" and c["error"]]
result = {"failing_step": failing[0]["step"]}
try:
    replay.replay(record)
except Exception as e:
    result["class"], result["message"] = type(e).__name__, getattr(e, "message", str(e))
with replay.replay(record, until_step=failing[0]["step"] - 1) as r:
    np.savez(out + "/replayed.npz", *r.session.run(r.graph.get_collection("variables")))
with open(out + "/replay.json", "w") as f:
    json.dump(result, f)
"""


@pytest.mark.timeout(180)
def test_a_failing_step_fails_again_in_a_fresh_process(tmp_path):
    data, record, out = tmp_path / "data", tmp_path / "record", tmp_path / "out"
    write_csv_files(str(data))
    out.mkdir()
    subprocess.run([sys.executable, PROGRAM, str(data), "record:%s" % record, str(out)],
                   check=True, capture_output=True, timeout=120)
    cls, message = (out / "error.txt").read_text().split("\n", 1)
    assert cls == "InvalidArgumentError" and "loss is not finite" in message
    shutil.rmtree(data)  # the replay feeds what the readers read: no files needed
    script = tmp_path / "replay_it.py"
    script.write_text(REPLAY_SCRIPT)
    subprocess.run([sys.executable, str(script), str(record), str(out)], check=True,
                   capture_output=True, timeout=120)
    got = json.loads((out / "replay.json").read_text())
    # main steps: 0 the initializer, 1-7 training steps 0-6, 8 the fetch of the
    # variables, 9 training step 7
    assert got["failing_step"] == 9
    assert (got["class"], got["message"]) == (cls, message)  # names the program's line
    original, replayed = np.load(out / "vars6.npz"), np.load(out / "replayed.npz")
    assert len(original.files) == len(replayed.files) == 20   # Adam slots included
    for k in original.files:
        assert original[k].dtype == replayed[k].dtype
        assert original[k].tobytes() == replayed[k].tobytes()   # bit-identical
    calls = replay.load_calls(str(record))
    streams = {c["stream"] for c in calls}
    assert {"runner:shuffle_batch/random_shuffle_queue:%d" % i for i in range(3)} <= streams
    assert "runner:input_producer:0" in streams
    reads = [c for c in calls if c["readers"]]
    assert reads and all(c["stream"].startswith("runner:shuffle_batch") for c in reads)
    for name in os.listdir(record / "calls"):   # never pickled
        with np.load(record / "calls" / name, allow_pickle=False) as z:
            for k in z.files:
                assert z[k].dtype != object


# --- in one process -----------------------------------------------------------------------
def _record_feeds(directory):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        s = tf.placeholder(tf.string, [None], name="s")
        v = tf.Variable(np.zeros(3, np.float32), name="v")
        step = tf.assign_add(v, tf.reduce_sum(x) * tf.ones([3]))
        n = tf.strings.length(s)
        cfg = tf.ConfigProto(experimental={"record_inputs": str(directory)})
        with tf.Session(config=cfg) as sess:
            assert sess._policy.deterministic   # record_inputs implies the mode
            sess.run(v.initializer)
            out = [sess.run(step, {x: [1.0, 2.0]})]
            call = sess.make_callable(step, feed_list=[x])
            out.append(call(np.array([4.0], np.float32)))
            h = sess.partial_run_setup([n], [s])
            out.append(sess.partial_run(h, n, {s: [b"a\x00", "\u00e9t\u00e9", b""]}))
            with pytest.raises(errors.InvalidArgumentError):
                sess.run(tf.debugging.assert_positive(x), {x: [-1.0]})
    return out


def test_record_and_replay_in_process(tmp_path):
    out = _record_feeds(tmp_path)
    calls = replay.load_calls(str(tmp_path))
    assert [c["stream"] for c in calls] == ["main"] * 5
    assert [c["step"] for c in calls] == [0, 1, 2, 3, 4]
    assert calls[1]["feeds"] == {"x:0": "feed0"} and calls[1]["targets"] == []
    assert calls[4]["error"]["class"] == "InvalidArgumentError"
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["format_version"] == replay.FORMAT_VERSION
    with replay.replay(str(tmp_path), until_step=3) as r:
        assert r.steps == 4
        np.testing.assert_array_equal(r.results[1][0], out[0])
        np.testing.assert_array_equal(r.results[2][0], out[1])
        # strings with a trailing NUL and non-ASCII text come back byte for byte
        np.testing.assert_array_equal(r.results[3][0], [2, 5, 0])
        v, = r.graph.get_collection("variables")
        np.testing.assert_array_equal(r.session.run(v), [7.0, 7.0, 7.0])
    with pytest.raises(errors.InvalidArgumentError) as e:
        replay.replay(str(tmp_path))
    assert e.value.message == calls[4]["error"]["message"]


def test_string_values_round_trip():
    arrays = {}
    value = np.array([[b"a\x00\x00", b""], ["\u00fc".encode(), b"xyz"]], dtype=object)
    replay._encode(arrays, "k", value)
    assert all(a.dtype != object for a in arrays.values())

    class Npz(dict):
        files = property(lambda self: list(self))
    back = replay._decode(Npz(arrays), "k")
    assert back.dtype == object and back.shape == (2, 2)
    assert back.tolist() == value.tolist()


def test_replay_detects_a_divergence(tmp_path):
    _record_feeds(tmp_path)
    lines = (tmp_path / "calls.jsonl").read_text().splitlines()
    call = json.loads(lines[1])
    call["digest"] = "0" * 64   # as if the recorded run had computed something else
    lines[1] = json.dumps(call)
    (tmp_path / "calls.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(replay.ReplayMismatchError, match="step 1 of stream main"):
        replay.replay(str(tmp_path), until_step=2)


def test_queue_runner_calls_are_tagged_by_runner_and_thread(tmp_path):
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(4, [tf.float32], shapes=[[]], name="feed_q")
        qr = tf.train.QueueRunner(q, [q.enqueue(1.0)] * 2)
        cfg = tf.ConfigProto(experimental={"record_inputs": str(tmp_path)})
        with tf.Session(config=cfg) as sess:
            coord = tf.train.Coordinator()
            threads = qr.create_threads(sess, coord, start=True)
            for _ in range(5):
                sess.run(q.dequeue())
            coord.request_stop()
            coord.join(threads)
    calls = replay.load_calls(str(tmp_path))
    runs = [c["stream"] for c in calls if c["stream"].startswith("runner:feed_q:")
            and not c["stream"].endswith(":-1")]
    # the two threads took turns
    assert runs[:6] == ["runner:feed_q:0", "runner:feed_q:1"] * 3
    with replay.replay(str(tmp_path)) as r:
        assert r.steps == 5 and all(v == [1.0] for v in r.results)


def test_recording_a_cluster_session_is_refused():
    class Fake:
        _master = object()
        _target = "grpc://localhost:1"
    with pytest.raises(errors.UnimplementedError, match="cluster"):
        replay.Recorder.for_session(Fake(), "/nonexistent")


def test_concurrent_user_threads_record_their_own_streams(tmp_path):
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        cfg = tf.ConfigProto(experimental={"record_inputs": str(tmp_path)})
        with tf.Session(config=cfg) as sess:
            t = threading.Thread(target=lambda: sess.run(c), name="worker")
            t.start()
            t.join()
            sess.run(c)
    assert sorted(c["stream"] for c in replay.load_calls(str(tmp_path))) == \
        ["main", "thread:worker"]


def test_reads_of_a_step_on_several_devices_are_recorded(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"first\nsecond\nthird\n")
    record = tmp_path / "record"
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            files = tf.FIFOQueue(4, [tf.string], shapes=[[]])
            _, line = tf.TextLineReader().read(files)
        with tf.device("/cpu:0"):
            length = tf.strings.length(line)
        with tf.device("/cpu:1"):  # partitions depending on each other run on threads
            length = tf.identity(length * 1)
        cfg = tf.ConfigProto(device_count={"CPU": 2},
                             experimental={"record_inputs": str(record)})
        with tf.Session(config=cfg) as sess:
            sess.run(files.enqueue(str(path)))
            sess.run(files.close())
            got = [sess.run([line, length]) for _ in range(3)]
    path.unlink()   # replay feeds the recorded lines
    calls = replay.load_calls(str(record))
    assert [list(c["readers"]) for c in calls[2:]] == [[line.op.name]] * 3
    with replay.replay(str(record), config=tf.ConfigProto(device_count={"CPU": 2})) as r:
        assert [v[0] for v in r.results[2:]] == [g[0] for g in got]
        assert [v[1] for v in r.results[2:]] == [5, 6, 5]


def test_reads_on_another_thread_go_to_the_call_whose_plan_holds_the_reader(tmp_path):
    # a partition of a step may run on a thread of its own (partitioned_plan.py)
    rec = replay.Recorder(tf.Graph(), str(tmp_path))

    class Node:
        type = "ReadFile"

        class op:
            name = "reader_a"
    kernel = rec.bind_kernel(lambda ctx, x: x + b"!", Node, False)
    assert rec._bound_readers == ["reader_a"]
    call = rec.begin(((), (), ()), [], frozenset({"reader_a"}))
    t = threading.Thread(target=kernel, args=(None, b"contents"))
    t.start()
    t.join()
    assert call.readers == {"reader_a": [[b"contents!"]]}
    other = rec.begin(((), (), ()), [], frozenset({"reader_a"}))
    t = threading.Thread(target=kernel, args=(None, b"x"))
    t.start()
    t.join()   # two calls that may have run it: neither is credited, both are marked
    assert call.meta["unattributed_reads"] and other.meta["unattributed_reads"]
    rec.end(call, [], None)
    rec.end(other, [], None)
    with pytest.raises(errors.UnimplementedError, match="was not recorded"):
        replay._feed_dict(tf.Graph(), str(tmp_path), call.meta)
