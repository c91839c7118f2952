"""Training steps made of many small kernels, side by side with TensorFlow: where the
per-kernel overhead (not the arithmetic) sets the step time.

Three TF1 training steps, each implementation in its own interpreter (TensorFlow under
TF_PYTHON, default ~/.cache/tensorweave-bench-tf/bin/python, skipped if missing):

1. Optimizer updates over N_VARS small resource variables (shapes [16], [32, 8], [64] in
   turn), loss sum(w * w * c): one step of Adam, Momentum and GradientDescent each.
2. A wide input layer of feature columns (numeric, bucketized, embedding over identity
   and hashed categorical columns, indicator columns) feeding a 64-32-1 DNN, trained
   with Adagrad on a fed batch of 64.
3. bidirectional_dynamic_rnn over LSTMCell(32), batch 16, 20 time steps, trained with
   Adam.

Figures: step-time medians of REPS timed runs after WARMUP untimed ones (the shared
instrument's time_loop and summarize), ratios tensorweave / TensorFlow (lower is
better), the kernels run per step (node_stats of a FULL_TRACE run; TensorFlow's after
Grappler's rewrites), and for tensorweave the Python function calls per step
(cProfile's total_calls over PROFILE_STEPS steps, divided by them).

Usage: [TF_PYTHON=...] python benchmarks/small_kernels.py [OUT_JSON] [--src SRC_DIR]
         [--tw-only]
(--src runs tensorweave from another tree's src/, to compare before and after a change.)
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_child, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
N_VARS, REPS, WARMUP, PROFILE_STEPS = 200, 40, 5, 10

_CHILD = r"""  # after results.CHILD_PREAMBLE
import cProfile, pstats


def measure(name, sess, fetches, feed=None):
    "Step-time median (ms) of `fetches`, and for tensorweave its Python calls per step."
    step = lambda: sess.run(fetches, feed)
    res = bench.summarize(bench.time_loop(step, P["reps"], P["warmup"]), "ms")
    out[name + "_ms"] = res["median"]
    md = tf.RunMetadata()  # kernels run per step (TensorFlow's: after Grappler's rewrites)
    sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    out[name + "_kernels"] = sum(len(d.node_stats) for d in md.step_stats.dev_stats)
    if P["impl"] == "tensorweave":
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(P["profile_steps"]):
            step()
        prof.disable()
        out[name + "_calls"] = pstats.Stats(prof).total_calls / P["profile_steps"]


def optimizer_steps():
    shapes = [[16], [32, 8], [64]]
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        ws = [tf.get_variable("w%d" % k, shapes[k % 3], use_resource=True,
                              initializer=tf.random_normal_initializer())
              for k in range(P["n_vars"])]
        loss = tf.add_n([tf.reduce_sum(w * w) * (0.5 + 0.001 * k) for k, w in enumerate(ws)])
        opts = {"adam": tf.train.AdamOptimizer(1e-3),
                "momentum": tf.train.MomentumOptimizer(1e-3, 0.9),
                "sgd": tf.train.GradientDescentOptimizer(1e-3)}
        train = {k: o.minimize(loss) for k, o in opts.items()}
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        before = sess.run(loss)
        for name, op in train.items():
            measure("opt_" + name, sess, op)
        bench.check(sess.run(loss) < before, "optimizer steps lower the loss")


def dense(name, x, units):
    "x @ w + b (tf.layers.dense is missing from TensorFlow 2.21 with Keras 3)."
    w = tf.get_variable(name + "/w", [x.shape[1], units],
                        initializer=tf.glorot_uniform_initializer())
    b = tf.get_variable(name + "/b", [units], initializer=tf.zeros_initializer())
    return tf.matmul(x, w) + b


def feature_column_step():
    fc = tf.feature_column
    num = [fc.numeric_column("n%d" % k) for k in range(6)]
    bucket = [fc.bucketized_column(num[k], [-1.0, -0.5, 0.0, 0.5, 1.0]) for k in range(3)]
    ids = [fc.categorical_column_with_identity("id%d" % k, 50) for k in range(4)]
    hashed = [fc.categorical_column_with_hash_bucket("h%d" % k, 100, dtype=tf.int64)
              for k in range(2)]
    cols = (num + bucket + [fc.embedding_column(c, 8) for c in ids + hashed]
            + [fc.indicator_column(c) for c in ids[:2]])
    rs = np.random.RandomState(0)
    b = 64
    data = {"n%d" % k: rs.randn(b, 1).astype(np.float32) for k in range(6)}
    data.update({"id%d" % k: rs.randint(0, 50, (b, 1)).astype(np.int64) for k in range(4)})
    data.update({"h%d" % k: rs.randint(0, 10000, (b, 1)).astype(np.int64) for k in range(2)})
    labels = (rs.rand(b, 1) > 0.5).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        feats = {k: tf.placeholder(tf.float32 if k[0] == "n" else tf.int64, [None, 1], name=k)
                 for k in data}
        y = tf.placeholder(tf.float32, [None, 1])
        net = fc.input_layer(feats, cols)
        net = tf.nn.relu(dense("d1", net, 64))
        net = tf.nn.relu(dense("d2", net, 32))
        logits = dense("d3", net, 1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdagradOptimizer(0.05).minimize(loss)
        init = [tf.global_variables_initializer(), tf.tables_initializer()]
    feed = {feats[k]: v for k, v in data.items()}
    feed[y] = labels
    with tf.Session(graph=g) as sess:
        sess.run(init)
        before = sess.run(loss, feed)
        measure("feature_columns", sess, [loss, train], feed)
        bench.check(sess.run(loss, feed) < before, "feature-column steps lower the loss")


def lstm_cell_class():
    "tf.nn.rnn_cell.LSTMCell (TensorFlow 2.21 with Keras 3 keeps it only in rnn_cell_impl)."
    try:
        return tf.nn.rnn_cell.LSTMCell
    except AttributeError:
        from tensorflow.python.ops.rnn_cell_impl import LSTMCell
        return LSTMCell


def bilstm_step():
    rs = np.random.RandomState(0)
    xv = rs.randn(16, 20, 8).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [16, 20, 8])
        cells = [lstm_cell_class()(32, name=n) for n in ("fw", "bw")]
        (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(cells[0], cells[1], x, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(tf.concat([fw, bw], 2) - 0.5))
        train = tf.train.AdamOptimizer(1e-2).minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        before = sess.run(loss, {x: xv})
        measure("bilstm", sess, [loss, train], {x: xv})
        bench.check(sess.run(loss, {x: xv}) < before, "bidirectional LSTM steps lower the loss")


optimizer_steps()
feature_column_step()
bilstm_step()
print("@@" + json.dumps(out))
"""

ROWS = [("opt_adam", "Adam over %d small variables" % N_VARS),
        ("opt_momentum", "Momentum over %d small variables" % N_VARS),
        ("opt_sgd", "GradientDescent over %d small variables" % N_VARS),
        ("feature_columns", "feature-column input layer + DNN, Adagrad, batch 64"),
        ("bilstm", "bidirectional_dynamic_rnn LSTMCell(32), batch 16 x 20 steps, Adam")]


def _figure(key: str, ours: dict, ref) -> str:
    """"tensorweave X ms (K kernels, C calls/step), TensorFlow Y ms (K kernels): ratio"."""
    text = "tensorweave %.3f ms (%d kernels, %d Python calls/step)" % (
        ours[key + "_ms"], ours[key + "_kernels"], ours[key + "_calls"])
    if ref:
        text += ", TensorFlow %.3f ms (%d kernels): ratio %.2f" % (
            ref[key + "_ms"], ref[key + "_kernels"], ours[key + "_ms"] / ref[key + "_ms"])
    return text


def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    src = os.path.abspath(argv[argv.index("--src") + 1]) if "--src" in argv else SRC
    params = {"bench": BENCH_DIR, "src": src, "n_vars": N_VARS, "reps": REPS,
              "warmup": WARMUP, "profile_steps": PROFILE_STEPS}
    ours = run_child(_CHILD, sys.executable, "tensorweave", params)
    ref = None
    if "--tw-only" not in argv and os.path.exists(tf_python()):
        ref = run_child(_CHILD, tf_python(), "tensorflow", params)
    figures = {"setup": "medians of %d steps after %d untimed; calls: cProfile total_calls "
                        "/ step over %d steps" % (REPS, WARMUP, PROFILE_STEPS)}
    figures.update({label: _figure(key, ours, ref) for key, label in ROWS})
    write_extra(out_path or os.devnull,
                "Training steps made of many small kernels, side by side with TensorFlow",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/small_kernels.py benchmarks/out/extra_small_kernels.json",
                figures, results={"tensorweave": ours, "TensorFlow": ref})


if __name__ == "__main__":
    main(sys.argv)
