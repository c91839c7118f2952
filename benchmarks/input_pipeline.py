"""Input pipeline overlapping training (OSDI §3.2, Figure 1 of that paper).

The same training step (an MLP 64-256-10 with Adagrad, batch 100) runs twice:
  * in-memory: batches fed from NumPy arrays with feed_dict;
  * CSV pipeline: text files -> string_input_producer -> TextLineReader.read_up_to ->
    decode_csv -> shuffle_batch (2 preprocessing threads, QueueRunners) -> the step
    takes its batch from the queue, while reading and decoding run concurrently;
  * TFRecord pipeline: the same with TFRecordReader and decode_raw of float32 bytes.
The figure of merit is the ratio of median step times (pipeline / in-memory): close to 1
means decoding overlaps training. Writes an extra-figures JSON for results.py.

Usage: python benchmarks/input_pipeline.py OUT_JSON
"""
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import tensorweave as tf

FEATURES, HIDDEN, CLASSES, BATCH = 64, 256, 10, 100
RECORDS_PER_FILE, FILES = 5000, 4
STEPS, WARMUP = 300, 30


def write_files(directory: str):
    """The same records as CSV text and as TFRecords (64 float32 features + the label)."""
    rs = np.random.RandomState(0)
    csv_paths, record_paths = [], []
    for k in range(FILES):
        x = rs.rand(RECORDS_PER_FILE, FEATURES).astype(np.float32)
        y = rs.randint(0, CLASSES, RECORDS_PER_FILE)
        csv_paths.append(os.path.join(directory, "part-%d.csv" % k))
        with open(csv_paths[-1], "w") as f:
            for row, label in zip(x, y):
                f.write(",".join("%.5f" % v for v in row) + ",%d\n" % label)
        record_paths.append(os.path.join(directory, "part-%d.tfrecord" % k))
        with tf.python_io.TFRecordWriter(record_paths[-1]) as w:
            for row, label in zip(x, y):
                w.write(np.append(row, np.float32(label)).tobytes())
    return csv_paths, record_paths


def train_op(x, labels):
    w1 = tf.Variable(tf.random_uniform([FEATURES, HIDDEN], -0.1, 0.1, seed=1))
    b1 = tf.Variable(tf.zeros([HIDDEN]))
    w2 = tf.Variable(tf.random_uniform([HIDDEN, CLASSES], -0.1, 0.1, seed=2))
    b2 = tf.Variable(tf.zeros([CLASSES]))
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    return tf.train.AdagradOptimizer(0.1).minimize(loss)


def median_step(run) -> float:
    for _ in range(WARMUP):
        run()
    times = []
    for _ in range(STEPS):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def in_memory() -> float:
    rs = np.random.RandomState(1)
    xs = rs.rand(BATCH, FEATURES).astype(np.float32)
    ys = rs.randint(0, CLASSES, BATCH).astype(np.int64)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [BATCH, FEATURES])
        labels = tf.placeholder(tf.int64, [BATCH])
        step = train_op(x, labels)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return median_step(lambda: sess.run(step, {x: xs, labels: ys}))


def decode_csv_records(filenames):
    _, lines = tf.TextLineReader().read_up_to(filenames, 250)
    columns = tf.decode_csv(lines, [[0.0]] * FEATURES + [[0]])
    return tf.stack(columns[:FEATURES], axis=1), tf.cast(columns[FEATURES], tf.int64)


def decode_raw_records(filenames):
    _, records = tf.TFRecordReader().read_up_to(filenames, 250)
    values = tf.reshape(tf.decode_raw(records, tf.float32), [-1, FEATURES + 1])
    return values[:, :FEATURES], tf.cast(values[:, FEATURES], tf.int64)


def pipeline(paths: list, decode) -> float:
    with tf.Graph().as_default():
        filenames = tf.train.string_input_producer(paths, shuffle=True, seed=3)
        example, label = decode(filenames)
        x, labels = tf.train.shuffle_batch(
            [example, label], BATCH, capacity=20 * BATCH, min_after_dequeue=5 * BATCH,
            num_threads=2, seed=4, enqueue_many=True)
        step = train_op(x, labels)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                return median_step(lambda: sess.run(step))
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)


def main(out_path: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        csv_paths, record_paths = write_files(d)
        memory = in_memory()
        from_csv = pipeline(csv_paths, decode_csv_records)
        from_records = pipeline(record_paths, decode_raw_records)
    figures = {
        "step time, batches fed from memory": "%.3f ms" % (memory * 1e3),
        "step time, TFRecord + decode_raw pipeline": "%.3f ms (ratio to in-memory %.2f)"
            % (from_records * 1e3, from_records / memory),
        "step time, CSV + decode_csv pipeline": "%.3f ms (ratio to in-memory %.2f)"
            % (from_csv * 1e3, from_csv / memory),
    }
    doc = {"title": "Input pipeline overlapping training (issue #5)",
           "command": "python benchmarks/input_pipeline.py benchmarks/out/extra_pipeline.json",
           "figures": figures}
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
