"""A wide & deep training step over feature columns, side by side with TensorFlow: the
program of examples/wide_and_deep.py (its own source, with `tf` bound to each
implementation), timed per `sess.run([loss, train_op])` of a batch of 64 records read
by make_batched_features_dataset and turned into tensors by linear_model and
input_layer; and the input pipeline's get_next alone.

Each implementation runs in its own interpreter (the shared instrument's import_impl,
time_loop and summarize; medians of REPS blocks); ratios tensorweave / TensorFlow (lower
is better).

Usage: [TF_PYTHON=...] python benchmarks/feature_columns.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
PROGRAM = os.path.join(HERE, "..", "examples", "wide_and_deep.py")
REPS = 5

_CHILD = r"""  # after results.CHILD_PREAMBLE
source = open(P["program"]).read().replace("import tensorweave as tf\n", "")
wd = {"__name__": "wide_and_deep", "tf": tf}
exec(compile(source, P["program"], "exec"), wd)
d = tempfile.mkdtemp()
train_file = os.path.join(d, "train.tfrecord")
wd["write_tfrecords"](train_file, np.random.RandomState(0), 2000)
tf.set_random_seed(1)
wide, deep, _ = wd["columns"]()
spec = tf.feature_column.make_parse_example_spec(wide + deep)
spec["label"] = tf.io.FixedLenFeature([], tf.int64)
g = tf.Graph()
with g.as_default():
    ds = tf.data.experimental.make_batched_features_dataset(
        train_file, 64, spec, label_key="label", shuffle_seed=1)
    features, labels = tf.data.make_one_shot_iterator(ds).get_next()
    logits = wd["model"](features, wide, deep)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(labels, tf.float32), logits=logits))
    step = tf.train.AdamOptimizer(0.02).minimize(loss)
    pipe = tf.data.make_one_shot_iterator(tf.data.experimental.make_batched_features_dataset(
        train_file, 64, spec, label_key="label", shuffle_seed=1)).get_next()
    with tf.Session(graph=g) as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        for _ in range(20):
            sess.run([loss, step])
            sess.run(pipe)
        for key, fetch in (("train_step_ms", [loss, step]), ("get_next_ms", pipe)):
            res = bench.summarize(bench.time_loop(lambda: sess.run(fetch), 40 * P["reps"], 2),
                                  "ms", blocks=P["reps"])
            out[key] = res["median"]
print("@@" + json.dumps(out))
"""


def main(argv) -> None:
    run_side_by_side(
        _CHILD, {"bench": BENCH_DIR, "src": SRC, "program": PROGRAM, "reps": REPS},
        "examples/wide_and_deep.py's model, batches of 64 records; medians of %d blocks "
        "of 40" % REPS, [
            ("train_step_ms", "training step (pipeline, columns, Adam)"),
            ("get_next_ms", "make_batched_features_dataset get_next alone"),
        ], "feature columns over tf.data, side by side with TensorFlow",
        "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
        "benchmarks/feature_columns.py benchmarks/out/extra_feature_columns.json",
        argv[1] if len(argv) > 1 else None)


if __name__ == "__main__":
    main(sys.argv)
