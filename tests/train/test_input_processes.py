"""QueueRunner threads whose reading and decoding run in input worker processes
(train/input_processes.py, train/input_worker.py): the same records as the threads of
TF1, the same end of input and errors, and no process left behind."""
import os
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import input_processes

JOIN = 20.0
RUN = tf.RunOptions(timeout_in_ms=20000)


def _csv_files(directory, files=3, rows=10):
    paths = []
    for k in range(files):
        path = os.path.join(str(directory), "part-%d.csv" % k)
        with open(path, "w") as f:
            for i in range(rows):
                f.write("%d,%d.5\n" % (100 * k + i, i))
        paths.append(path)
    return paths


@pytest.fixture(autouse=True)
def _places_for_workers(monkeypatch):
    """Four places for workers on any machine (by default a 2-core one, like CI's, has
    none but the four for subgraphs of per-record work), and no extra places."""
    import threading
    monkeypatch.setattr(input_processes, "_WORKERS", threading.BoundedSemaphore(4))
    monkeypatch.setattr(input_processes, "_PER_RECORD_WORKERS",
                        threading.BoundedSemaphore(0))


def test_places_for_workers_by_cores_and_setting(monkeypatch):
    monkeypatch.delenv(input_processes.ENV, raising=False)
    for cores, places, extra in ((1, 0, 0), (2, 0, 4), (4, 2, 4), (16, 14, 4)):
        monkeypatch.setattr(os, "cpu_count", lambda: cores)
        assert input_processes._worker_places() == places
        assert input_processes._per_record_places() == extra
    monkeypatch.setenv(input_processes.ENV, "1")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert input_processes._worker_places() == 2
    assert input_processes._per_record_places() == 0
    monkeypatch.setenv(input_processes.ENV, "0")
    assert input_processes._worker_places() == 0 and not input_processes.enabled()
    assert input_processes._per_record_places() == 0


def test_the_per_record_ops_are_readers_or_registered_and_stateless():
    from tensorweave.framework import registry
    for op_type in input_processes._PER_RECORD:
        assert op_type in input_processes._READERS or \
            not registry.get_op_def(op_type).stateful, op_type


def test_only_per_record_subgraphs_take_the_extra_places(tmp_path, monkeypatch):
    """With no general place (a 2-core machine's default) and two extra ones: the two
    threads of a decode_csv runner each get a worker, and so do those of a TFRecord
    runner (its framing and CRCs are checked record by record); a fixed-length record
    runner gets none. Every record arrives once either way, and the places are given
    back."""
    import threading
    made = _feeders(monkeypatch)
    general, extra = threading.BoundedSemaphore(0), threading.BoundedSemaphore(2)
    monkeypatch.setattr(input_processes, "_WORKERS", general)
    monkeypatch.setattr(input_processes, "_PER_RECORD_WORKERS", extra)
    paths = _csv_files(tmp_path, files=4, rows=30)
    record_path = str(tmp_path / "r.tfrecord")
    _tfrecords(record_path, [[float(i), -float(i)] for i in range(40)])
    fixed_path = str(tmp_path / "r.bin")
    with open(fixed_path, "wb") as f:
        f.write(np.array([[i, -i] for i in range(40)], np.float32).tobytes())
    with tf.Graph().as_default():
        files = tf.train.string_input_producer(paths, shuffle=False, num_epochs=1)
        _, lines = tf.TextLineReader().read_up_to(files, 7)
        ids, _ = tf.decode_csv(lines, [[0], [0.0]])
        csv_batch = tf.train.batch([ids], 8, num_threads=2, enqueue_many=True,
                                   allow_smaller_final_batch=True)
        got = np.concatenate(_run_to_the_end(csv_batch))
    assert len(made) == 2
    assert sorted(got.tolist()) == [100 * k + i for k in range(4) for i in range(30)]
    def fixed_length_reader():
        return tf.FixedLengthRecordReader(8)
    for make_reader, path, workers in ((tf.TFRecordReader, record_path, 4),
                                       (fixed_length_reader, fixed_path, 4)):
        with tf.Graph().as_default():
            files = tf.train.string_input_producer([path], shuffle=False, num_epochs=1)
            _, record = make_reader().read(files)
            values = tf.reshape(tf.decode_raw(record, tf.float32), [2])
            raw_batch = tf.train.batch([values], 8, num_threads=2,
                                       allow_smaller_final_batch=True)
            got = np.concatenate(_run_to_the_end(raw_batch))
        assert len(made) == workers  # two more for TFRecords, none for fixed lengths
        assert sorted(got[:, 0].tolist()) == [float(i) for i in range(40)]
    assert all(extra.acquire(blocking=False) for _ in range(2))


def _feeders(monkeypatch):
    """Records each ProcessFeeder made, to check its worker process."""
    made = []
    original = input_processes.feeder_for

    def spy(sess, op):
        feeder = original(sess, op)
        if feeder is not None:
            made.append(feeder)
        return feeder
    monkeypatch.setattr(input_processes, "feeder_for", spy)
    return made


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:  # a zombie is not alive
        return f.read().split(") ")[-1][0] != "Z"


def _drain(sess, fetch):
    out = []
    try:
        while True:
            out.append(sess.run(fetch, options=RUN))
    except tf.errors.OutOfRangeError:
        pass
    return out


def _run_to_the_end(batch) -> list:
    """Every value of `batch` until the end of input, with the queue runners started
    and stopped around it."""
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = _drain(sess, batch)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=JOIN)
    return got


def test_records_and_end_of_input_match_the_thread(tmp_path, monkeypatch):
    """One thread, `read` + decode_csv + batch: every record of both epochs in file
    order, then OutOfRangeError, from a worker process."""
    made = _feeders(monkeypatch)
    paths = _csv_files(tmp_path)
    with tf.Graph().as_default():
        files = tf.train.string_input_producer(paths, shuffle=False, num_epochs=2)
        _, line = tf.TextLineReader().read(files)
        ids, halves = tf.decode_csv(line, [[0], [0.0]])
        batch = tf.train.batch([ids, halves], 7, num_threads=1,
                               allow_smaller_final_batch=True)
        got = _run_to_the_end(batch)
    assert len(made) == 1
    ids = np.concatenate([b[0] for b in got])
    halves = np.concatenate([b[1] for b in got])
    expected = [100 * k + i for k in range(3) for i in range(10)] * 2
    np.testing.assert_array_equal(ids, expected)
    np.testing.assert_array_equal(halves, np.array(expected) % 100 + 0.5)
    assert not _alive(made[0].pid)


def test_read_up_to_batches_with_two_threads(tmp_path, monkeypatch):
    """`read_up_to` + enqueue_many, two threads (two workers): every record exactly once."""
    made = _feeders(monkeypatch)
    paths = _csv_files(tmp_path, files=4, rows=50)
    with tf.Graph().as_default():
        files = tf.train.string_input_producer(paths, shuffle=True, seed=1, num_epochs=1)
        _, lines = tf.TextLineReader().read_up_to(files, 16)
        ids, halves = tf.decode_csv(lines, [[0], [0.0]])
        batch = tf.train.shuffle_batch([ids, halves * 2.0], 10, capacity=100,
                                       min_after_dequeue=20, num_threads=2, seed=2,
                                       enqueue_many=True, allow_smaller_final_batch=True)
        got = _run_to_the_end(batch)
    assert len(made) == 2
    ids = np.concatenate([b[0] for b in got])
    doubled = np.concatenate([b[1] for b in got])
    assert sorted(ids.tolist()) == [100 * k + i for k in range(4) for i in range(50)]
    np.testing.assert_allclose(doubled, (ids % 100 + 0.5) * 2.0)
    assert not any(_alive(f.pid) for f in made)


def _tfrecords(path, values):
    with tf.python_io.TFRecordWriter(path) as w:
        for v in values:
            w.write(np.asarray(v, np.float32).tobytes())


def test_a_corrupt_record_reports_data_loss_naming_our_op(tmp_path, monkeypatch):
    made = _feeders(monkeypatch)
    good = str(tmp_path / "good.tfrecord")
    _tfrecords(good, [[1.0, 2.0], [3.0, 4.0]])
    bad = str(tmp_path / "bad.tfrecord")
    with open(good, "rb") as f:
        data = bytearray(f.read())
    data[14] ^= 0xFF  # a byte of the first record's data: its CRC no longer matches
    with open(bad, "wb") as f:
        f.write(bytes(data))
    with tf.Graph().as_default():
        files = tf.train.string_input_producer([bad], shuffle=False, num_epochs=1)
        _, record = tf.TFRecordReader(name="records").read(files)
        values = tf.reshape(tf.decode_raw(record, tf.float32), [2])
        batch = tf.train.batch([values], 1)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            with pytest.raises(tf.errors.DataLossError) as info:
                coord.join(threads, stop_grace_period_secs=JOIN)
    assert len(made) == 1
    assert info.value.op is not None and info.value.op.type == "ReaderReadV2"
    assert info.value.op.graph is batch.graph
    assert "corrupted record" in info.value.message.lower() or \
        "checksum" in info.value.message.lower()


def test_stop_request_and_session_close_end_the_workers(tmp_path, monkeypatch):
    """An endless pipeline (no num_epochs): a coordinator stop ends threads and workers;
    a session closed under running workers ends them too."""
    made = _feeders(monkeypatch)
    paths = _csv_files(tmp_path)
    for close_first in (False, True):
        del made[:]
        with tf.Graph().as_default():
            files = tf.train.string_input_producer(paths)
            _, line = tf.TextLineReader().read(files)
            ids, _ = tf.decode_csv(line, [[0], [0.0]])
            batch = tf.train.shuffle_batch([ids], 5, capacity=50, min_after_dequeue=10,
                                           num_threads=2)
            sess = tf.Session()
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            for _ in range(5):
                assert sess.run(batch, options=RUN).shape == (5,)
            assert len(made) == 2 and all(_alive(f.pid) for f in made)
            if close_first:
                sess.close()
                coord.request_stop()
                _join_quietly(coord, threads)
            else:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=JOIN)
                sess.close()
        deadline = time.monotonic() + JOIN
        while any(_alive(f.pid) for f in made) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(f.pid) for f in made)
        assert not any(t.is_alive() for t in threads)


def _join_quietly(coord, threads):
    try:
        coord.join(threads, stop_grace_period_secs=JOIN)
    except (tf.errors.CancelledError, RuntimeError):
        pass  # a closed session's steps fail; the threads must end all the same


def test_a_killed_worker_is_reported(tmp_path, monkeypatch):
    made = _feeders(monkeypatch)
    paths = _csv_files(tmp_path)
    with tf.Graph().as_default():
        files = tf.train.string_input_producer(paths)
        _, line = tf.TextLineReader().read(files)
        ids, _ = tf.decode_csv(line, [[0], [0.0]])
        batch = tf.train.batch([ids], 5, capacity=10)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            sess.run(batch, options=RUN)
            os.kill(made[0].pid, 9)
            with pytest.raises(tf.errors.InternalError, match="exited with code -9"):
                coord.join(threads, stop_grace_period_secs=JOIN)


def _pipeline_with(extra):
    """A TFRecord pipeline; `extra(reader, values)` adds what should keep it in-process."""
    files = tf.train.string_input_producer(["unused"])
    reader = tf.TFRecordReader()
    _, record = reader.read(files)
    values = tf.decode_raw(record, tf.float32)
    values = extra(reader, values)
    tf.train.batch([tf.reshape(values, [2])], 1)
    return tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].enqueue_ops[0]


@pytest.mark.parametrize("extra", [
    lambda r, v: v + tf.cast(r.num_records_produced(), tf.float32),   # reader counters
    lambda r, v: v + tf.Variable(1.0).read_value(),                   # a variable
    lambda r, v: v + tf.random_uniform([2]),                          # a random op
    lambda r, v: v + tf.py_func(lambda a: a, [v], tf.float32),        # py_func
], ids=["reader_counter", "variable", "random", "py_func"])
def test_subgraphs_using_other_state_stay_in_this_process(extra):
    with tf.Graph().as_default():
        assert input_processes.producer_of(_pipeline_with(extra)) is None


def test_pure_subgraph_qualifies_and_the_switch_turns_it_off(monkeypatch):
    with tf.Graph().as_default():
        op = _pipeline_with(lambda r, v: tf.check_numerics(v * 2.0, "v"))
        producer = input_processes.producer_of(op)
        assert producer is not None and not producer.many
        assert producer.fetches == [t.name for t in op.inputs[1:]]
        with tf.Session() as sess:
            monkeypatch.setenv(input_processes.ENV, "0")
            assert input_processes.feeder_for(sess, op) is None


def test_a_worker_that_cannot_build_hands_the_op_back(tmp_path, monkeypatch, caplog):
    """The worker fails to import the subgraph: the thread runs the op itself and the
    records still arrive."""
    made = _feeders(monkeypatch)
    monkeypatch.setattr(input_processes, "_subgraph", lambda op, q: b"not a graph")
    path = str(tmp_path / "r.tfrecord")
    _tfrecords(path, [[1.0, 2.0], [3.0, 4.0]])
    with tf.Graph().as_default():
        files = tf.train.string_input_producer([path], shuffle=False, num_epochs=1)
        _, record = tf.TFRecordReader().read(files)
        values = tf.reshape(tf.decode_raw(record, tf.float32), [2])
        batch = tf.train.batch([values], 1)
        got = _run_to_the_end(batch)
    assert len(made) == 1
    np.testing.assert_array_equal(np.concatenate(got), [[1.0, 2.0], [3.0, 4.0]])
    assert "running it in this process" in caplog.text
    places = input_processes._WORKERS  # its place was given back: all 4 are free
    assert all(places.acquire(blocking=False) for _ in range(4))


def test_channel_round_trips_numbers_strings_and_empty_arrays():
    from tensorweave.train.process_channel import Channel, ChannelClosed
    r, w = os.pipe()
    a = Channel(open(r, "rb", buffering=0), open(w, "wb", buffering=0))
    values = [np.arange(12, dtype=np.float32).reshape(3, 4),
              np.array([b"ab", b"", "\u00e9".encode()], dtype=object),
              np.zeros((0, 5), np.int64), np.array(7, np.int8)]
    a.send({"kind": "data", "n": 1}, values)
    meta, got = a.recv()
    assert meta == {"kind": "data", "n": 1}
    for x, y in zip(values, got):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tolist() == y.tolist()
        assert not y.flags.writeable and (y.dtype == object or y.flags.owndata)
    a._writer.close()
    with pytest.raises(ChannelClosed):
        a.recv()


def test_a_buffered_channel_hands_out_messages_read_together_one_by_one():
    # the training process reads its workers' pipes buffered: one read may take in
    # several messages, and a large array may straddle the buffer's end
    import io
    from tensorweave.train.process_channel import Channel, ChannelClosed
    r, w = os.pipe()
    sender = Channel(None, open(w, "wb", buffering=0))
    receiver = Channel(io.BufferedReader(open(r, "rb", buffering=0), 4096), None)
    sent = [np.full((k, 300), k, np.float32) for k in (1, 5, 0, 3)]
    for k, value in enumerate(sent):
        sender.send({"kind": "data", "k": k}, [value, np.array([b"x" * k], object)])
    sender._writer.close()
    for k, value in enumerate(sent):
        meta, (got, tag) = receiver.recv()
        assert meta == {"kind": "data", "k": k}
        assert got.shape == value.shape and (got == value).all()
        assert tag.tolist() == [b"x" * k]
    with pytest.raises(ChannelClosed):
        receiver.recv()


def test_threads_beyond_the_worker_cap_run_in_this_process(tmp_path, monkeypatch):
    """One worker allowed: of two threads one has a worker, the other runs the op here;
    every record arrives once, and the worker's place is given back at the end."""
    import threading
    made = _feeders(monkeypatch)
    cap = threading.BoundedSemaphore(1)
    monkeypatch.setattr(input_processes, "_WORKERS", cap)
    paths = _csv_files(tmp_path, files=4, rows=30)
    with tf.Graph().as_default():
        files = tf.train.string_input_producer(paths, shuffle=False, num_epochs=1)
        _, line = tf.TextLineReader().read(files)
        ids, _ = tf.decode_csv(line, [[0], [0.0]])
        batch = tf.train.batch([ids], 8, num_threads=2, allow_smaller_final_batch=True)
        got = np.concatenate(_run_to_the_end(batch))
    assert len(made) == 1
    assert sorted(got.tolist()) == [100 * k + i for k in range(4) for i in range(30)]
    assert cap.acquire(blocking=False)


def test_string_elements_and_dynamic_padding_cross_intact(tmp_path, monkeypatch):
    """Raw records (strings) and variable-length elements for a padding queue: the
    worker sends runs of equal shapes, and batch(dynamic_pad=True) pads as in TF."""
    made = _feeders(monkeypatch)
    path = str(tmp_path / "r.tfrecord")
    records = [b"a", b"", b"xyz\x00\xff", b"longer record"] * 3
    with tf.python_io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    with tf.Graph().as_default():
        files = tf.train.string_input_producer([path], shuffle=False, num_epochs=1)
        _, record = tf.TFRecordReader().read(files)
        raw, chars = tf.train.batch([record, tf.decode_raw(record, tf.uint8)], 5,
                                    dynamic_pad=True, allow_smaller_final_batch=True)
        got = _run_to_the_end([raw, chars])
    assert len(made) == 1
    assert [r for b in got for r in b[0].tolist()] == records
    for raws, padded in got:
        width = max(len(r) for r in raws)
        assert padded.shape == (len(raws), width) and padded.dtype == np.uint8
        for r, row in zip(raws, padded):
            assert bytes(row[:len(r)]) == r and not row[len(r):].any()
