"""Two kernels against TensorFlow: Conv3D with its two gradients, and Multinomial.

Each implementation runs in its own interpreter (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python, skipped if missing). Every figure is the
median of REPS Session.run calls (after WARMUP untimed ones) of a graph holding one op
whose inputs are variables (so nothing is fed and nothing is constant-folded):

* tf.nn.conv3d on a video-like volume [8, 16, 32, 32, 3] with a [3, 3, 3, 3, 16] filter
  (SAME and VALID, strides 1 and 2) and a deeper layer [4, 8, 16, 16, 32] with a
  [3, 3, 3, 32, 64] filter; the gradients with respect to the input
  (Conv3DBackpropInputV2) and the filter (Conv3DBackpropFilterV2) come from
  tf.gradients with a fixed output gradient;
* tf.multinomial (Multinomial) over logits [64, 1000] and [1000, 10] with 1, 10 and
  100 samples, and tf.random.stateless_categorical (StatelessMultinomial).

Ratios are tensorweave / TensorFlow (lower is better; the target is at most 1.0).
With --threads 1 both run on one thread (TensorFlow: intra- and inter-op pools of one;
tensorweave: OPENBLAS_NUM_THREADS=1): a figure that other processes on a small shared
machine disturb far less than the default two-thread one.

Usage: [TF_PYTHON=...] python benchmarks/kernels_conv3d_multinomial.py [OUT_JSON]
           [--reps N] [--threads 1]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_child, side_by_side_figures, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS, WARMUP = 21, 2

# (label, input shape, filter shape, padding, stride)
CONV_CASES = [
    ("video SAME s1", [8, 16, 32, 32, 3], [3, 3, 3, 3, 16], "SAME", 1),
    ("video VALID s1", [8, 16, 32, 32, 3], [3, 3, 3, 3, 16], "VALID", 1),
    ("video SAME s2", [8, 16, 32, 32, 3], [3, 3, 3, 3, 16], "SAME", 2),
    ("video VALID s2", [8, 16, 32, 32, 3], [3, 3, 3, 3, 16], "VALID", 2),
    ("deep SAME s1", [4, 8, 16, 16, 32], [3, 3, 3, 32, 64], "SAME", 1),
]
# (label, logits shape, num_samples, stateless)
MULTINOMIAL_CASES = [("%s [%d, %d] n=%d" % ("stateless" if sl else "multinomial", b, c, n),
                      [b, c], n, sl)
                     for sl in (False, True) for b, c in ((64, 1000), (1000, 10))
                     for n in (1, 10, 100)]
CONV_KINDS = (("conv3d", "forward"), ("dx", "Conv3DBackpropInputV2"),
              ("dw", "Conv3DBackpropFilterV2"))

_CHILD = r"""  # after results.CHILD_PREAMBLE

def timed(sess, fetch):
    runs = bench.time_loop(lambda: sess.run(fetch), P["reps"], P["warmup"])
    return bench.summarize(runs, "ms")["median"]

def session(g):
    if not P["threads"]:
        return tf.Session(graph=g)
    return tf.Session(graph=g, config=tf.ConfigProto(
        intra_op_parallelism_threads=P["threads"], inter_op_parallelism_threads=P["threads"]))

rs = np.random.RandomState(0)
for label, xs, fs, padding, stride in P["conv"]:
    g = tf.Graph()
    with g.as_default():
        x = tf.Variable(rs.standard_normal(xs).astype(np.float32))
        w = tf.Variable(rs.standard_normal(fs).astype(np.float32))
        y = tf.nn.conv3d(x, w, [1, stride, stride, stride, 1], padding)
        dy = tf.Variable(rs.standard_normal(y.shape.as_list()).astype(np.float32))
        dx, dw = tf.gradients(y, [x, w], grad_ys=dy)
        with session(g) as sess:
            sess.run(tf.global_variables_initializer())
            for kind, t in (("conv3d", y), ("dx", dx), ("dw", dw)):
                out["%s %s" % (kind, label)] = timed(sess, t)

for label, shape, n, stateless in P["multinomial"]:
    g = tf.Graph()
    with g.as_default():
        logits = tf.Variable(rs.standard_normal(shape).astype(np.float32))
        if stateless:
            s = tf.random.stateless_categorical(logits, n, seed=[1, 2])
        else:
            s = tf.multinomial(logits, n, seed=1)
        with session(g) as sess:
            sess.run(tf.global_variables_initializer())
            bench.check(sess.run(s).shape == (shape[0], n), label + " shape")
            out[label] = timed(sess, s)
print("@@" + json.dumps(out))
"""


def rows():
    """(result key, figure label) of every timed fetch."""
    conv = [("%s %s" % (kind, label), "%s (%s) %s" % (kind, op, label))
            for label, *_ in CONV_CASES for kind, op in CONV_KINDS]
    return conv + [(label, label) for label, *_ in MULTINOMIAL_CASES]


def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else REPS
    threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 0
    params = {"bench": BENCH_DIR, "src": SRC, "reps": reps, "warmup": WARMUP,
              "threads": threads, "conv": CONV_CASES, "multinomial": MULTINOMIAL_CASES}
    env = {"OPENBLAS_NUM_THREADS": str(threads)} if threads else None
    ours = run_child(_CHILD, sys.executable, "tensorweave", params, env)
    ref = run_child(_CHILD, tf_python(), "tensorflow", params) \
        if os.path.exists(tf_python()) else None
    figures = {"setup": "medians of %d Session.run calls after %d untimed, float32 inputs "
                        "held in variables; %s" % (reps, WARMUP, "%d thread(s)" % threads
                                                   if threads else "default threads")}
    figures.update(side_by_side_figures(ours, ref, rows()))
    write_extra(out_path or os.devnull, "Conv3D (and its gradients) and Multinomial "
                "kernels, side by side with TensorFlow",
                "python benchmarks/kernels_conv3d_multinomial.py "
                "benchmarks/out/extra_kernels_conv3d_multinomial.json [--threads 1]",
                figures, results={"tensorweave": ours, "TensorFlow": ref})


if __name__ == "__main__":
    main(sys.argv)
