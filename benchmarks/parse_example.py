"""tf.parse_example of a batch of serialized tf.train.Examples, side by side with
TensorFlow: the time of one Session.run of ParseExample over BATCH examples of the kind
a TF1 input pipeline reads (a 64-float feature, an int64 label, a string, and a
variable-length int64 list), for several batch sizes; tensorweave also with its exact
path only (a protobuf message per example, what it ran before ops/io/example_wire.py).

Each implementation runs in its own interpreter (the shared instrument's import_impl,
time_loop and summarize; medians of blocks); ratios tensorweave / TensorFlow (lower is
better).

Usage: [TF_PYTHON=...] python benchmarks/parse_example.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_child, side_by_side_figures, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
BATCHES = (64, 256, 1024)

_CHILD = r"""  # after results.CHILD_PREAMBLE
if P.get("exact"):  # tensorweave's message-per-example path only
    from tensorweave.ops.io import parsing_ops
    parsing_ops._WIRE_MIN_BATCH = 1 << 62
rs = np.random.RandomState(0)


def example(i):
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=rs.rand(64).tolist())),
        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
        "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 5)))),
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"img%d" % i])),
    })).SerializeToString()


data = np.array([example(i) for i in range(max(P["batches"]))], dtype=object)
s = tf.placeholder(tf.string, [None])
parsed = tf.parse_example(s, {
    "x": tf.FixedLenFeature([64], tf.float32), "y": tf.FixedLenFeature([], tf.int64),
    "tags": tf.VarLenFeature(tf.int64), "name": tf.FixedLenFeature([], tf.string)})
with tf.Session() as sess:
    for b in P["batches"]:
        got = sess.run(parsed, {s: data[:b]})
        bench.check(got["x"].shape == (b, 64) and got["y"][3] == 3
                    and got["tags"].values.size == sum(i % 5 for i in range(b)), "values")
        res = bench.summarize(bench.time_loop(lambda: sess.run(parsed, {s: data[:b]}),
                                              P["reps"], 5), "ms")
        out["batch_%d" % b] = res["median"]
print("@@" + json.dumps(out))
"""


def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 else None
    params = {"bench": BENCH_DIR, "src": SRC, "batches": list(BATCHES), "reps": 200}
    ours = run_child(_CHILD, sys.executable, "tensorweave", params)
    exact = run_child(_CHILD, sys.executable, "tensorweave", dict(params, exact=True))
    ref = run_child(_CHILD, tf_python(), "tensorflow", params) \
        if os.path.exists(tf_python()) else None
    rows = [("batch_%d" % b, "parse_example of %d examples" % b) for b in BATCHES]
    figures = {"setup": "a 64-float feature, an int64 label, a string and a variable-length "
                        "int64 list per example; medians of 200 runs"}
    figures.update(side_by_side_figures(ours, ref, rows))
    for key, label in rows:
        figures[label] += "; exact path only %.3f ms" % exact[key]
    write_extra(out_path or os.devnull, "tf.parse_example, side by side with TensorFlow",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/parse_example.py benchmarks/out/extra_parse_example.json",
                figures, results={"tensorweave": ours, "exact path": exact,
                                  "TensorFlow": ref})


if __name__ == "__main__":
    main(sys.argv)
