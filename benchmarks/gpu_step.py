"""One training step of a wide MLP on the CuPy GPU against the same step on the CPU.

    python benchmarks/gpu_step.py [OUT.json]

The model: 4 dense layers of 2048 units (ReLU), batch 1024, softmax cross entropy, plain
SGD, with resource variables; the data is fed each step (it is copied to the GPU each
step). Times are medians of 20 steps after 3 warm-up steps, for the GPU session (default
placement: every op with a GPU kernel on GPU:0) and a CPU-only session
(`device_count={'GPU': 0}`), in one process. Needs CuPy and a GPU; prints and writes
nothing else without them.
"""
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "src"))
import tensorweave as tf  # noqa: E402
from tensorweave.runtime import gpu  # noqa: E402

WIDTH, DEPTH, BATCH, STEPS, WARMUP = 2048, 4, 1024, 20, 3


def _step_seconds(config) -> float:
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [BATCH, WIDTH])
        labels = tf.placeholder(tf.int64, [BATCH])
        h = x
        for _ in range(DEPTH):
            h = tf.layers.dense(h, WIDTH, activation=tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        rng = np.random.RandomState(0)
        feed = {x: rng.randn(BATCH, WIDTH).astype(np.float32),
                labels: rng.randint(0, 10, BATCH)}
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            times = []
            for i in range(WARMUP + STEPS):
                t0 = time.perf_counter()
                sess.run([loss, train], feed)  # fetching the loss waits for the step
                if i >= WARMUP:
                    times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(out_path=None) -> int:
    if gpu.gpu_count() == 0:
        print("no GPU (CuPy missing, or no device)")
        return 1
    on_gpu = _step_seconds(tf.ConfigProto())
    on_cpu = _step_seconds(tf.ConfigProto(device_count={"GPU": 0}))
    result = {"gpu_step_ms": on_gpu * 1e3, "cpu_step_ms": on_cpu * 1e3,
              "gpu_over_cpu": on_gpu / on_cpu, "cpu_threads": os.cpu_count(),
              "model": "%d dense x %d, batch %d, SGD" % (DEPTH, WIDTH, BATCH)}
    print(json.dumps(result, indent=1))
    if out_path:
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
