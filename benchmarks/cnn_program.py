"""Whole TF1 convolutional training programs, end to end, side by side with TensorFlow
(issue 18: "a real convolutional program runs slower end to end than under TensorFlow").

"cifar" is written as the TF1 CIFAR-10 tutorial's users wrote theirs, in
`tf.compat.v1` graph mode with nothing but tf.nn, tf.train and tf.summary (TensorFlow
2.21's Keras 3 has no tf.compat.v1.layers): a 5x5 convolution with fused batch
normalization (its moving averages updated through UPDATE_OPS), ReLU, a 3x3 stride-2 max
pool and LRN; a second convolution with a bias, ReLU, LRN and max pool; two dense layers
with dropout whose rate a tf.cond switches on a `training` placeholder; sparse softmax
cross entropy plus L2 weight decay; Adam; scalar summaries written every 20 steps and a
checkpoint at the end. Batches of 64 32x32x3 images are fed from NumPy (feed_dict).
"mnist" is TF1's Deep MNIST tutorial as published (two 5x5 convolutions with biases and
ReLU, 2x2 max pools, a 3136x1024 dense layer, dropout fed a keep probability, softmax
cross entropy, Adam at 1e-4), batches of 50 fed from NumPy, the input of batch size None.

Figures: the median training step, and the program's wall time from process start
(interpreter, imports, graph construction, STEPS steps, an evaluation, and for "cifar"
its summaries and the checkpoint), each as tensorweave / TensorFlow.

Usage: [TF_PYTHON=...] python benchmarks/cnn_program.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_child, side_by_side_figures, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
STEPS = 150

_CIFAR = r"""  # after results.CHILD_PREAMBLE (the implementation is imported)
rs = np.random.RandomState(0)
N, B = 2048, 64
images = rs.rand(N, 32, 32, 3).astype(np.float32)
labels = rs.randint(0, 10, N).astype(np.int64)
tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [None, 32, 32, 3], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
training = tf.placeholder_with_default(False, [], name="training")


def weight(name, shape, stddev):
    return tf.get_variable(name, shape,
                           initializer=tf.truncated_normal_initializer(stddev=stddev))


def bias(name, n, value=0.0):
    return tf.get_variable(name, [n], initializer=tf.constant_initializer(value))


def batch_norm(h, name):
    c = h.shape[-1]
    with tf.variable_scope(name):
        scale, offset = bias("scale", c, 1.0), bias("offset", c)
        mean_avg = tf.get_variable("mean", [c], initializer=tf.zeros_initializer(),
                                   trainable=False)
        var_avg = tf.get_variable("variance", [c], initializer=tf.ones_initializer(),
                                  trainable=False)
        out, mean, var = tf.nn.fused_batch_norm(h, scale, offset, epsilon=1e-3)
        for avg, value in ((mean_avg, mean), (var_avg, var)):
            tf.add_to_collection(tf.GraphKeys.UPDATE_OPS,
                                 tf.assign(avg, 0.99 * avg + 0.01 * value))
        return out


h = tf.nn.conv2d(x, weight("conv1", [5, 5, 3, 64], 0.05), [1, 1, 1, 1], "SAME")
h = tf.nn.relu(batch_norm(h, "bn1"))
h = tf.nn.max_pool(h, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
h = tf.nn.lrn(h, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
h = tf.nn.conv2d(h, weight("conv2", [5, 5, 64, 64], 0.05), [1, 1, 1, 1], "SAME")
h = tf.nn.relu(tf.nn.bias_add(h, bias("b2", 64, 0.1)))
h = tf.nn.lrn(h, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
h = tf.nn.max_pool(h, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
h = tf.reshape(h, [-1, 8 * 8 * 64])
h = tf.nn.relu(tf.matmul(h, weight("fc1", [8 * 8 * 64, 384], 0.04)) + bias("b3", 384, 0.1))
h = tf.nn.dropout(h, rate=tf.cond(training, lambda: 0.5, lambda: 0.0))
h = tf.nn.relu(tf.matmul(h, weight("fc2", [384, 192], 0.04)) + bias("b4", 192, 0.1))
logits = tf.matmul(h, weight("out", [192, 10], 1 / 192.0)) + bias("b5", 10)
loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
loss += 1e-4 * tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()
                         if v.name.startswith(("conv", "fc"))])
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
step = tf.train.get_or_create_global_step()
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=step)
tf.summary.scalar("loss", loss)
tf.summary.scalar("accuracy", accuracy)
summaries = tf.summary.merge_all()
saver = tf.train.Saver()
logdir = tempfile.mkdtemp()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    writer = tf.summary.FileWriter(logdir, sess.graph)
    for i in range(P["steps"]):
        j = (i * B) % N
        feed = {x: images[j:j + B], y: labels[j:j + B], training: True}
        t0 = time.perf_counter()
        if i % 20 == 0:
            writer.add_summary(sess.run([train, summaries], feed)[1], i)
        else:
            sess.run(train, feed)
        times.append(time.perf_counter() - t0)
    out["accuracy"] = float(sess.run(accuracy, {x: images[:512], y: labels[:512]}))
    saver.save(sess, os.path.join(logdir, "model.ckpt"), global_step=step)
    writer.close()
"""

_MNIST = r"""  # after results.CHILD_PREAMBLE (the implementation is imported)
rs = np.random.RandomState(0)
N, B = 2000, 50
images = rs.rand(N, 784).astype(np.float32)
onehot = np.eye(10, dtype=np.float32)[rs.randint(0, 10, N)]
x = tf.placeholder(tf.float32, [None, 784])
y_ = tf.placeholder(tf.float32, [None, 10])
keep_prob = tf.placeholder(tf.float32)


def weight_variable(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


def bias_variable(shape):
    return tf.Variable(tf.constant(0.1, shape=shape))


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding="SAME")


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


x_image = tf.reshape(x, [-1, 28, 28, 1])
h_pool1 = max_pool_2x2(tf.nn.relu(conv2d(x_image, weight_variable([5, 5, 1, 32])) +
                                  bias_variable([32])))
h_pool2 = max_pool_2x2(tf.nn.relu(conv2d(h_pool1, weight_variable([5, 5, 32, 64])) +
                                  bias_variable([64])))
h_fc1 = tf.nn.relu(tf.matmul(tf.reshape(h_pool2, [-1, 7 * 7 * 64]),
                             weight_variable([7 * 7 * 64, 1024])) + bias_variable([1024]))
y_conv = tf.matmul(tf.nn.dropout(h_fc1, keep_prob), weight_variable([1024, 10])) + \
    bias_variable([10])
cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_,
                                                                       logits=y_conv))
train = tf.train.AdamOptimizer(1e-4).minimize(cross_entropy)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1)),
                                  tf.float32))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    timed_steps(sess, train, lambda j: {x: images[j:j + B], y_: onehot[j:j + B],
                                        keep_prob: 0.5}, N)
    out["accuracy"] = float(sess.run(accuracy, {x: images[:500], y_: onehot[:500],
                                                keep_prob: 1.0}))
"""

# before each program: its step times, and the loop that times most programs' steps
_HEAD = r"""
times = []


def timed_steps(sess, train, feed_of, span):
    # P["steps"] runs of `train`, each timed into `times`; run i is fed feed_of(j) for
    # the batch offset j = i * B % span (B: the program's batch size)
    for i in range(P["steps"]):
        feed = feed_of(i * B % span)
        t0 = time.perf_counter()
        sess.run(train, feed)
        times.append(time.perf_counter() - t0)
"""
# the wall time since this process started (Linux: its start time after boot, in ticks)
_TAIL = r"""
with open("/proc/self/stat") as f:
    started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
with open("/proc/uptime") as f:
    out["wall_s"] = float(f.read().split()[0]) - started
out["step_ms"] = float(np.median(times[5:])) * 1e3
print("@@" + json.dumps(out))
"""
PROGRAMS = {"cifar": _CIFAR, "mnist": _MNIST}


def run_programs(programs: dict, title: str, command: str, setup: str, argv) -> None:
    """Runs each program (source after results.CHILD_PREAMBLE and `_HEAD`, ending in
    `_TAIL`) under
    tensorweave and, where TF_PYTHON's interpreter exists, TensorFlow, and writes the
    step and wall-time figures as tensorweave / TensorFlow."""
    params = {"bench": BENCH_DIR, "src": SRC, "steps": STEPS}
    python = tf_python()
    figures = {"setup": setup}
    results = {}
    for name, program in programs.items():
        code = _HEAD + program + _TAIL
        ours = run_child(code, sys.executable, "tensorweave", params)
        ref = run_child(code, python, "tensorflow", params) \
            if os.path.exists(python) else None
        figures.update(side_by_side_figures(ours, ref, [("step_ms", name + ": training step")]))
        figures.update(side_by_side_figures(ours, ref, [("wall_s", name + ": end to end")],
                                            unit="s"))
        results[name] = {"tensorweave": ours, "TensorFlow": ref}
    write_extra(argv[1] if len(argv) > 1 else os.devnull, title, command, figures,
                results=results)


def main(argv) -> None:
    run_programs(PROGRAMS, "TF1 convolutional training programs, side by side with TensorFlow",
                 "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                 "benchmarks/cnn_program.py benchmarks/out/extra_cnn_program.json",
                 "%d training steps each (cifar: batch 64, summaries every 20, a "
                 "checkpoint; mnist: the tutorial's batch 50); the step is a median, "
                 "the wall time is from process start" % STEPS, argv)


if __name__ == "__main__":
    main(sys.argv)
