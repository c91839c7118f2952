"""Random ops with TensorFlow's own values, side by side with TensorFlow.

tensorweave's uniform, normal, truncated-normal and integer draws give TF's values bit
for bit (ops/random/philox.py: Philox4x32-10 and TF's transforms in NumPy). This
measures what that costs per `Session.run` against TensorFlow 2.21 on the same
machine: draws of a few sizes, a dropout of a [64, 1024] activation (a random uniform
draw every training step), a random_shuffle and categorical draws. Each implementation runs in its own interpreter
(TensorFlow under TF_PYTHON, default ~/.cache/tensorweave-bench-tf/bin/python,
skipped if missing), with two inter- and intra-op threads; figures are medians of REPS
runs after WARMUP, and the child checks that both give the same first values.

Usage: [TF_PYTHON=...] python benchmarks/random_ops.py [OUT_JSON] [--src SRC_DIR]
"""
import os
import sys

from results import run_child, side_by_side_figures, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS, WARMUP = 21, 3

_CHILD = r"""  # after results.CHILD_PREAMBLE
g = tf.Graph()
with g.as_default():
    ops = {
        "uniform_100x100": tf.random_uniform([100, 100], seed=1),
        "uniform_1000x1000": tf.random_uniform([1000, 1000], seed=1),
        "normal_1000x1000": tf.random_normal([1000, 1000], seed=1),
        "truncated_normal_784x256": tf.truncated_normal([784, 256], seed=1),
        "int_1000x1000": tf.random_uniform([1000, 1000], 0, 1000, dtype=tf.int32, seed=1),
        "dropout_64x1024": tf.reduce_sum(tf.nn.dropout(tf.ones([64, 1024]), keep_prob=0.5,
                                                       seed=3)),
        "shuffle_10000x32": tf.random_shuffle(tf.reshape(tf.range(320000.0), [10000, 32]),
                                              seed=4),
        "categorical_128x1000x10": tf.random.categorical(
            tf.reshape(tf.range(128000.0) % 7.0, [128, 1000]), 10, seed=5),
    }
sess = tf.Session(graph=g, config=tf.ConfigProto(inter_op_parallelism_threads=2,
                                                 intra_op_parallelism_threads=2))
out["first_values"] = [float(v) for name in ("uniform_100x100", "categorical_128x1000x10")
                       for v in sess.run(ops[name]).ravel()[:4]]
for name, op in ops.items():
    res = bench.summarize(bench.time_loop(lambda: sess.run(op), P["reps"], P["warmup"]),
                          "ms")
    out[name] = res["median"]
print("@@" + json.dumps(out))
"""

ROWS = [("uniform_100x100", "random_uniform [100, 100] float32"),
        ("uniform_1000x1000", "random_uniform [1000, 1000] float32"),
        ("normal_1000x1000", "random_normal [1000, 1000] float32"),
        ("truncated_normal_784x256", "truncated_normal [784, 256] float32"),
        ("int_1000x1000", "random_uniform [1000, 1000] int32 in [0, 1000)"),
        ("dropout_64x1024", "dropout of a [64, 1024] activation (its sum fetched)"),
        ("shuffle_10000x32", "random_shuffle of [10000, 32] rows"),
        ("categorical_128x1000x10", "categorical: 10 draws from each of 128 rows of 1000")]


def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    src = os.path.abspath(argv[argv.index("--src") + 1]) if "--src" in argv else SRC
    params = {"bench": BENCH_DIR, "src": src, "reps": REPS, "warmup": WARMUP}
    ours = run_child(_CHILD, sys.executable, "tensorweave", params)
    ref = None
    if os.path.exists(tf_python()):
        ref = run_child(_CHILD, tf_python(), "tensorflow", params)
        if ref["first_values"] != ours["first_values"]:
            raise RuntimeError("the first values differ: tensorweave %s, TensorFlow %s"
                               % (ours["first_values"], ref["first_values"]))
    figures = {"setup": "medians of %d runs after %d untimed; the same values in both"
                        % (REPS, WARMUP)}
    figures.update(side_by_side_figures(ours, ref, ROWS))
    write_extra(out_path or os.devnull, "Random ops with TensorFlow's values, side by side "
                "with TensorFlow", "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python "
                "python benchmarks/random_ops.py benchmarks/out/extra_random_ops.json",
                figures, results={"tensorweave": ours, "TensorFlow": ref})


if __name__ == "__main__":
    main(sys.argv)
