"""Input pipeline overlapping training (OSDI §3.2, Figure 1 of that paper).

The same training step (an MLP 64-256-10 with Adagrad, batch 100) runs three ways:
  * in-memory: batches fed from NumPy arrays with feed_dict;
  * CSV pipeline: text files -> string_input_producer -> TextLineReader.read_up_to ->
    decode_csv -> shuffle_batch (2 preprocessing threads, QueueRunners) -> the step
    takes its batch from the queue, while reading and decoding run concurrently;
  * TFRecord pipeline: the same with TFRecordReader and decode_raw of float32 bytes.

The figure of merit is the ratio pipeline / in-memory of the step time: close to 1 means
reading and decoding overlap training. To keep a busy machine's drift out of the ratio,
the three workloads run interleaved: ROUNDS rounds, each one block per workload (in a
rotating order), and a ratio is taken within each round; the figures are the medians
over rounds. A block starts once every pipeline's queue is full again (its threads are
idle, so no other workload's threads run during it), then runs WARMUP steps unmeasured
(the pipeline reaches its steady state) and STEPS measured steps. Two ratios:
  * median: of the block's median step time (a typical step);
  * mean: of the block's mean step time, i.e. throughput: a pipeline that cannot keep up
    shows here (steps that wait for data), not in the median.
A block starts from a full queue and idle readers, so it also measures how fast reading
resumes. After the rounds, each workload runs SUSTAINED steps in one go (the in-memory
one before and after the pipelines, its mean of both the reference): the sustained
mean-step ratio, what a long training run sees.
Side by side: the same program then runs under TensorFlow (TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python; skipped if missing) in its own interpreter,
with `tensorflow.compat.v1` in place of tensorweave, and the figures add TensorFlow's
ratios and tensorweave's mean step over TensorFlow's for each pipeline. Where tensorweave
reads through input worker processes (train/input_processes.py: by default for decode_csv
and TFRecord readers on any machine), a block also waits until those processes are idle.
Writes an extra-figures JSON for results.py.

Usage: [TF_PYTHON=...] python benchmarks/input_pipeline.py OUT_JSON
"""
import os
import statistics
import sys
import tempfile
import time

import json
import subprocess

import numpy as np

from results import write_extra  # benchmarks/results.py (this script's folder)

# INPUT_PIPELINE_IMPL=tensorflow: this same program under TensorFlow (the child run)
if os.environ.get("INPUT_PIPELINE_IMPL") == "tensorflow":
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
else:
    import tensorweave as tf

FEATURES, HIDDEN, CLASSES, BATCH = 64, 256, 10, 100
RECORDS_PER_FILE, FILES = 5000, 4
CAPACITY = 20 * BATCH
ROUNDS, STEPS, WARMUP = 7, 150, 40
SUSTAINED = 3000


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


def decode_csv_records(filenames):
    _, lines = tf.TextLineReader().read_up_to(filenames, 250)
    columns = tf.decode_csv(lines, [[0.0]] * FEATURES + [[0]])
    return tf.stack(columns[:FEATURES], axis=1), tf.cast(columns[FEATURES], tf.int64)


def decode_raw_records(filenames):
    _, records = tf.TFRecordReader().read_up_to(filenames, 250)
    values = tf.reshape(tf.decode_raw(records, tf.float32), [-1, FEATURES + 1])
    return values[:, :FEATURES], tf.cast(values[:, FEATURES], tf.int64)


def _children_cpu_ticks() -> dict:
    """{pid: CPU ticks used} of this process's child processes (Linux; {} elsewhere)."""
    me, out = os.getpid(), {}
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == me:
            out[int(pid)] = int(fields[11]) + int(fields[12])
    return out


def wait_for_idle_children(deadline: float, quiet: float = 0.03) -> None:
    """Until no child process (tensorweave's input workers, which read ahead into their
    pipes after the queue is full) used CPU for `quiet` seconds, or `deadline`: a block
    must not share the CPU with another workload's reading."""
    last = _children_cpu_ticks()
    while last and time.monotonic() < deadline:
        time.sleep(quiet)
        now = _children_cpu_ticks()
        if now == last:
            return
        last = now


class Workload:
    """One session running the training step; pipelines also own their threads."""

    def __init__(self, name: str, build):
        self.name = name
        self.graph = tf.Graph()
        self.coord = self.threads = self.size = None
        with self.graph.as_default():
            self.step, feeds, queue_size = build()
            self.sess = tf.Session()
            self.sess.run(tf.global_variables_initializer())
            run = self.sess.make_callable(self.step, list(feeds))
            values = list(feeds.values())
            self.run = lambda: run(*values)
            if queue_size is not None:
                self.size = self.sess.make_callable(queue_size)
                self.coord = tf.train.Coordinator()
                self.threads = tf.train.start_queue_runners(self.sess, self.coord)

    def wait_until_full(self, timeout: float = 10.0) -> None:
        """Until the batch queue is full: the reading threads are blocked, idle (and
        input worker processes, which read ahead of the queue, too: see
        `wait_for_idle_children`)."""
        if self.size is None:
            return
        deadline = time.monotonic() + timeout
        while self.size() < CAPACITY and time.monotonic() < deadline:
            time.sleep(0.001)
        wait_for_idle_children(deadline)


    def block(self) -> tuple:
        """(median, mean) step time of STEPS steps after WARMUP unmeasured ones."""
        run = self.run
        for _ in range(WARMUP):
            run()
        times = []
        clock = time.perf_counter
        for _ in range(STEPS):
            t0 = clock()
            run()
            times.append(clock() - t0)
        return statistics.median(times), statistics.mean(times)

    def sustained(self) -> float:
        """The mean step time of SUSTAINED steps run back to back (after WARMUP)."""
        run = self.run
        for _ in range(WARMUP):
            run()
        t0 = time.perf_counter()
        for _ in range(SUSTAINED):
            run()
        return (time.perf_counter() - t0) / SUSTAINED

    def close(self) -> None:
        if self.coord is not None:
            self.coord.request_stop()
            self.coord.join(self.threads, stop_grace_period_secs=10)
        self.sess.close()


def in_memory():
    rs = np.random.RandomState(1)
    xs = rs.rand(BATCH, FEATURES).astype(np.float32)
    ys = rs.randint(0, CLASSES, BATCH).astype(np.int64)
    x = tf.placeholder(tf.float32, [BATCH, FEATURES])
    labels = tf.placeholder(tf.int64, [BATCH])
    return train_op(x, labels), {x: xs, labels: ys}, None


def pipeline(paths: list, decode):
    def build():
        filenames = tf.train.string_input_producer(paths, shuffle=True, seed=3)
        example, label = decode(filenames)
        x, labels = tf.train.shuffle_batch(
            [example, label], BATCH, capacity=CAPACITY, min_after_dequeue=5 * BATCH,
            num_threads=2, seed=4, enqueue_many=True)
        queue = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].queue
        return train_op(x, labels), {}, queue.size()
    return build


def measure() -> dict:
    """{workload: [(median, mean) per round], "sustained": {workload: mean step}} of this
    interpreter's implementation."""
    with tempfile.TemporaryDirectory() as d:
        csv_paths, record_paths = write_files(d)
        loads = [Workload("memory", in_memory),
                 Workload("tfrecord", pipeline(record_paths, decode_raw_records)),
                 Workload("csv", pipeline(csv_paths, decode_csv_records))]
        results = {w.name: [] for w in loads}
        try:
            for r in range(ROUNDS):
                for w in loads[r % 3:] + loads[:r % 3]:
                    for other in loads:
                        other.wait_until_full()
                    results[w.name].append(w.block())
            sustained = {}
            for w in loads + loads[:1]:
                for other in loads:
                    other.wait_until_full()
                sustained.setdefault(w.name, []).append(w.sustained())
            results["sustained"] = {k: statistics.mean(v) for k, v in sustained.items()}
        finally:
            for w in loads:
                w.close()
    return results


def tensorflow_results() -> dict:
    """measure() under TensorFlow in its own interpreter, or {} without one."""
    python = os.environ.get("TF_PYTHON", os.path.expanduser(
        "~/.cache/tensorweave-bench-tf/bin/python"))
    if not os.path.exists(python):
        return {}
    env = dict(os.environ, INPUT_PIPELINE_IMPL="tensorflow", TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--measure-only"], env=env,
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ratio(results: dict, name: str, k: int) -> float:
    """The median over rounds of pipeline / in-memory (k 0: median step, 1: mean)."""
    return statistics.median(p[k] / m[k] for p, m in zip(results[name], results["memory"]))


def main(out_path: str) -> None:
    results = measure()
    theirs = tensorflow_results()
    sustained = results.pop("sustained")
    theirs_sustained = theirs.pop("sustained", None)

    def figure(name):
        med = statistics.median(b[0] for b in results[name])
        if name == "memory":
            return "%.3f ms (mean %.3f ms)" % (
                med * 1e3, statistics.median(b[1] for b in results[name]) * 1e3)
        text = "%.3f ms (ratio to in-memory %.2f; mean-step ratio %.2f)" % (
            med * 1e3, _ratio(results, name, 0), _ratio(results, name, 1))
        if theirs:
            mean = statistics.median(b[1] for b in results[name])
            tf_mean = statistics.median(b[1] for b in theirs[name])
            text += ("; TensorFlow: mean-step ratio %.2f, mean step %.3f ms; "
                     "tensorweave / TensorFlow mean step %.2f"
                     % (_ratio(theirs, name, 1), tf_mean * 1e3, mean / tf_mean))
        text += "; sustained mean-step ratio %.2f (%.3f ms)" % (
            sustained[name] / sustained["memory"], sustained[name] * 1e3)
        if theirs_sustained:
            text += ", TensorFlow's %.2f (%.3f ms), tensorweave / TensorFlow %.2f" % (
                theirs_sustained[name] / theirs_sustained["memory"],
                theirs_sustained[name] * 1e3, sustained[name] / theirs_sustained[name])
        return text
    figures = {
        "step time, batches fed from memory": figure("memory"),
        "step time, TFRecord + decode_raw pipeline": figure("tfrecord"),
        "step time, CSV + decode_csv pipeline": figure("csv"),
    }
    if theirs:
        figures["TensorFlow, batches fed from memory"] = "%.3f ms (mean %.3f ms)" % (
            statistics.median(b[0] for b in theirs["memory"]) * 1e3,
            statistics.median(b[1] for b in theirs["memory"]) * 1e3)
    write_extra(out_path, "Input pipeline overlapping training (issue #5)",
                "python benchmarks/input_pipeline.py benchmarks/out/extra_pipeline.json",
                figures, rounds={k: [[round(t * 1e3, 4) for t in b] for b in v]
                                 for k, v in results.items()})


if __name__ == "__main__":
    if sys.argv[1:] == ["--measure-only"]:
        print(json.dumps(measure()))
    else:
        main(sys.argv[1])
