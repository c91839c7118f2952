"""A concurrent training program for tests/runtime/test_deterministic.py and
tests/test_replay.py, run in fresh processes: `python deterministic_program.py DATA_DIR
MODE OUT_DIR` with MODE "det" (ConfigProto(experimental={'deterministic': True})),
"plain", or "record:RECORD_DIR" (deterministic, recording the session's inputs to
RECORD_DIR; training step 7 is fed a NaN scale and fails in a check_numerics).

An input pipeline (string_input_producer(shuffle=True) over the CSV files in DATA_DIR, a
TextLineReader, shuffle_batch with num_threads=3), a model with parallel branches and
dropout without seeds, a while_loop with parallel_iterations=4, Adam. Writes to OUT_DIR:
init.txt (sha256 of the initial variables), final.txt (of the variables after the
training steps) and batches.txt (of every label batch the steps consumed); in record
mode instead vars6.npz (the variables after step 6, in tf.global_variables() order) and
error.txt (the class and message of step 7's error).
"""
import glob
import hashlib
import os
import sys

import numpy as np

import tensorweave as tf


def digest(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def main(data_dir: str, mode: str, out_dir: str, steps: int = 12) -> None:
    files = sorted(glob.glob(os.path.join(data_dir, "*.csv")))
    filename_queue = tf.train.string_input_producer(files, shuffle=True)
    _, line = tf.TextLineReader().read(filename_queue)
    cols = tf.decode_csv(line, record_defaults=[[0.0]] * 5)
    features, label = tf.stack(cols[:4]), cols[4]
    x, y = tf.train.shuffle_batch([features, label], batch_size=8, capacity=40,
                                  min_after_dequeue=10, num_threads=3)
    # two parallel branches, dropout without a seed
    h1 = tf.layers.dense(x, 16, tf.nn.relu, name="branch_a")
    h2 = tf.layers.dense(x, 16, tf.nn.tanh, name="branch_b")
    h = tf.nn.dropout(tf.concat([h1, h2], 1), keep_prob=0.8)

    def body(i, acc):
        noise = tf.random_uniform([8, 32])  # unseeded, inside the loop
        return i + 1, acc + tf.reduce_sum(tf.sin(h * tf.cast(i, tf.float32)) * noise, 1)
    _, acc = tf.while_loop(lambda i, a: i < 6, body, [tf.constant(0), tf.zeros([8])],
                           parallel_iterations=4)
    pred = tf.layers.dense(tf.concat([h, acc[:, None]], 1), 1, name="head")
    scale = tf.placeholder_with_default(1.0, [], name="scale")
    loss = tf.check_numerics(tf.reduce_mean(tf.square(pred[:, 0] - y)) * scale,
                             "loss is not finite")
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    variables = tf.global_variables()
    record = mode[len("record:"):] if mode.startswith("record:") else ""
    config = tf.ConfigProto(experimental={"deterministic": mode == "det",
                                          "record_inputs": record})
    if record:
        return record_and_fail(config, train, loss, scale, variables, out_dir)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        init = sess.run(variables)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        labels = []
        for _ in range(steps):
            _, yv = sess.run([train, y])
            labels.append(yv)
        final = sess.run(variables)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    for name, arrays in (("init", init), ("final", final), ("batches", labels)):
        with open(os.path.join(out_dir, name + ".txt"), "w") as f:
            f.write(digest(arrays))


def record_and_fail(config, train, loss, scale, variables, out_dir: str) -> None:
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for step in range(10):
                sess.run([train, loss], {scale: float("nan") if step == 7 else 1.0})
                if step == 6:
                    np.savez(os.path.join(out_dir, "vars6.npz"), *sess.run(variables))
        except tf.errors.OpError as e:
            with open(os.path.join(out_dir, "error.txt"), "w") as f:
                f.write("%s\n%s" % (type(e).__name__, e.message))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)


if __name__ == "__main__":
    main(*sys.argv[1:4])
