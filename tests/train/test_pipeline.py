"""The concurrency proof: the training application of OSDI 2016 Figure 1 (§3.2).

Concurrent steps of one graph, in one session, interacting only through queues and
shared variables:

  files -> [I/O: TextLineReader step]        -> record queue (FIFOQueue)
        -> [preprocessing: 2 decode_csv steps] -> example queue (RandomShuffleQueue)
        -> [training: 2 Hogwild steps, GradientDescent on a linear regression]
  and a checkpointing step (tf.train.Saver) every few milliseconds.

The test checks that training converges, that every record is consumed exactly once
(num_epochs=1; each training step also fetches the record ids of its batch), that
checkpoints are written and restorable, and that everything shuts down cleanly on a
Coordinator stop: all threads joined, no exception reported.
"""
import os
import threading

import numpy as np

import tensorweave as tf

N_FILES = 4
N_RECORDS = 1200
BATCH = 8
TRUE_W = np.array([3.0, -2.0], dtype=np.float32)
TRUE_B = 0.5
JOIN_TIMEOUT = 10.0
# A step that would block forever (a bug) fails with DeadlineExceededError instead.
RUN = tf.RunOptions(timeout_in_ms=10000)


def _write_records(directory):
    """N_RECORDS lines "id,x1,x2,y" with y = x . TRUE_W + TRUE_B, over N_FILES files."""
    rng = np.random.RandomState(1)
    x = rng.uniform(-1.0, 1.0, size=(N_RECORDS, 2)).astype(np.float32)
    y = x @ TRUE_W + TRUE_B
    paths = []
    for f in range(N_FILES):
        path = os.path.join(directory, "part-%d.csv" % f)
        with open(path, "w") as out:
            for i in range(f, N_RECORDS, N_FILES):
                out.write("%d,%r,%r,%r\n" % (i, float(x[i, 0]), float(x[i, 1]), float(y[i])))
        paths.append(path)
    return paths, x, y


def _build(paths):
    # I/O subgraph: file names -> lines -> record queue
    filenames = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
    reader = tf.TextLineReader()
    _, line = reader.read(filenames)
    records = tf.FIFOQueue(64, tf.string, shapes=[[]], name="records")
    tf.train.add_queue_runner(tf.train.QueueRunner(records, [records.enqueue(line)]))

    # preprocessing subgraph: decode records -> shuffled example queue, two threads
    rid, x1, x2, y = tf.decode_csv(records.dequeue(),
                                   record_defaults=[[0], [0.0], [0.0], [0.0]])
    examples = tf.RandomShuffleQueue(128, min_after_dequeue=16,
                                     dtypes=[tf.int32, tf.float32, tf.float32],
                                     shapes=[[], [2], []], seed=3, name="examples")
    preprocess = examples.enqueue([rid, tf.stack([x1, x2]), y])
    tf.train.add_queue_runner(tf.train.QueueRunner(examples, [preprocess] * 2))

    # training subgraph: shared parameters, updated by concurrent steps without locks
    ids, xb, yb = examples.dequeue_up_to(BATCH)
    w = tf.Variable(tf.zeros([2, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    pred = tf.squeeze(tf.matmul(xb, w), axis=1) + b
    loss = tf.reduce_mean(tf.square(pred - yb))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return {"ids": ids, "loss": loss, "train": train, "w": w, "b": b, "step": step}


def _full_loss(w, b, x, y):
    return float(np.mean((x @ np.asarray(w).reshape(2) + b - y) ** 2))


def test_figure1_pipeline_converges_without_losing_records(tmp_path):
    paths, x_all, y_all = _write_records(str(tmp_path))
    ckpt_dir = str(tmp_path / "ckpt")
    os.makedirs(ckpt_dir)
    graph = tf.Graph()
    with graph.as_default():
        m = _build(paths)
        saver = tf.train.Saver([m["w"], m["b"], m["step"]])
        init = tf.group(tf.global_variables_initializer(),
                        tf.local_variables_initializer())
        sess = tf.Session()
        sess.run(init)
        start_loss = _full_loss(*sess.run([m["w"], m["b"]]), x_all, y_all)

        coord = tf.train.Coordinator()
        input_threads = tf.train.start_queue_runners(sess, coord=coord)

        consumed = [[], []]  # record ids per training thread
        steps = [0, 0]

        def trainer(k):
            with coord.stop_on_exception():
                while not coord.should_stop():
                    # OutOfRangeError (input exhausted) is a clean stop
                    _, ids = sess.run([m["train"], m["ids"]], options=RUN)
                    consumed[k].extend(ids.tolist())
                    steps[k] += 1
                    if steps[k] > N_RECORDS:
                        raise RuntimeError("the input never ended")

        saves = []

        def checkpoint():
            saves.append(saver.save(sess, os.path.join(ckpt_dir, "model"),
                                    global_step=m["step"]))

        train_threads = [threading.Thread(target=trainer, args=(k,), name="trainer-%d" % k,
                                          daemon=True) for k in range(2)]
        for t in train_threads:
            coord.register_thread(t)
            t.start()
        checkpointer = tf.train.LooperThread.loop(coord, 0.05, checkpoint)

        # ends when the trainers hit the end of the input (a clean stop request)
        coord.join(input_threads + train_threads + [checkpointer],
                   stop_grace_period_secs=JOIN_TIMEOUT)
        assert coord.should_stop()
        for t in input_threads + train_threads + [checkpointer]:
            assert not t.is_alive(), t.name

        # every record consumed exactly once, across both trainers
        all_ids = consumed[0] + consumed[1]
        assert len(all_ids) == N_RECORDS
        assert sorted(all_ids) == list(range(N_RECORDS))
        assert all_ids != list(range(N_RECORDS))  # the example queue shuffled them
        # both trainers took part; every step counted in the shared global step
        assert steps[0] > 0 and steps[1] > 0
        assert sess.run(m["step"]) == steps[0] + steps[1]

        # training converged
        w, b = sess.run([m["w"], m["b"]])
        end_loss = _full_loss(w, b, x_all, y_all)
        assert end_loss < 0.01 * start_loss, (start_loss, end_loss)
        np.testing.assert_allclose(w.reshape(2), TRUE_W, atol=0.15)

        # checkpoints were written while training ran, and restore
        assert len(saves) >= 1
        final = saver.save(sess, os.path.join(ckpt_dir, "model"), global_step=m["step"])
        assert tf.train.latest_checkpoint(ckpt_dir) == final
        sess.close()
        with tf.Session() as restored:
            saver.restore(restored, final)
            np.testing.assert_array_equal(restored.run(m["w"]), w)
            assert restored.run(m["step"]) == steps[0] + steps[1]
            saver.restore(restored, saves[-1])  # a periodic checkpoint restores too
            assert 0 <= restored.run(m["step"]) <= steps[0] + steps[1]


def test_stop_request_mid_stream_shuts_down_cleanly(tmp_path):
    """A stop requested while every stage is busy (infinite epochs, queues full,
    enqueues blocked) cancels the blocked steps and joins all threads without error."""
    paths, _, _ = _write_records(str(tmp_path))
    graph = tf.Graph()
    with graph.as_default():
        filenames = tf.train.string_input_producer(paths)  # no epoch limit
        _, line = tf.TextLineReader().read(filenames)
        rid, _, _, _ = tf.decode_csv(line, record_defaults=[[0], [0.0], [0.0], [0.0]])
        batch = tf.train.shuffle_batch([rid], BATCH, capacity=40, min_after_dequeue=10,
                                       num_threads=2, seed=1)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord=coord)
            seen = set()
            for _ in range(20):
                seen.update(sess.run(batch, options=RUN).tolist())
            assert seen <= set(range(N_RECORDS)) and len(seen) > BATCH
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=JOIN_TIMEOUT)
            assert not any(t.is_alive() for t in threads)
