"""tf.estimator side by side with TensorFlow's (tensorflow-estimator 2.15: TensorFlow
2.16 and later ship no estimator, so TF_PYTHON must name an interpreter with 2.15).

The program: a model_fn of two dense layers (20 -> 64 -> 64 -> 3) trained by Adam on
batches of 64 from Dataset.from_tensor_slices, as TF1 tutorials write it. Figures:
- a train(steps=10) call: what a call costs besides its steps (building the graph,
  the MonitoredSession, restoring and saving the checkpoint, hooks);
- the cost of one more step: (train(steps=510) - train(steps=10)) / 500;
- evaluate() over 10 batches and predict() of 640 rows, each a whole call.
Every call starts from the model_dir the previous calls left, as a user's calls do.
Medians over REPS calls each; ratios tensorweave / TensorFlow (lower is better).

Usage: [TF_PYTHON=~/.cache/tw-tf215/bin/python] python benchmarks/estimator_train.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS = 5
EXTRA_STEPS = 500

_CHILD = r"""  # after results.CHILD_PREAMBLE
import logging, shutil, statistics
logging.getLogger("tensorflow").setLevel(logging.ERROR)
if P["impl"] == "tensorflow":
    tf.logging.set_verbosity(tf.logging.ERROR)
rs = np.random.RandomState(0)
X = rs.rand(640, 20).astype(np.float32)
Y = rs.randint(0, 3, 640).astype(np.int32)

def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(64)

def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(64)

def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(64)

def model_fn(features, labels, mode):
    h = tf.layers.dense(features["x"], 64, tf.nn.relu)
    h = tf.layers.dense(h, 64, tf.nn.relu)
    logits = tf.layers.dense(h, 3)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={
            "class": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(1e-3).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))})

model_dir = tempfile.mkdtemp()
est = tf.estimator.Estimator(model_fn, model_dir=model_dir, config=tf.estimator.RunConfig(
    tf_random_seed=1, log_step_count_steps=1000, save_summary_steps=1000))

def timed(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3

est.train(train_input_fn, steps=10)  # the first call also imports and warms up
short, long, evals, preds = [], [], [], []
for _ in range(P["reps"]):
    short.append(timed(lambda: est.train(train_input_fn, steps=10)))
    long.append(timed(lambda: est.train(train_input_fn, steps=10 + P["extra"])))
    evals.append(timed(lambda: est.evaluate(eval_input_fn)))
    preds.append(timed(lambda: list(est.predict(predict_input_fn))))
out["train_call_ms"] = statistics.median(short)
out["step_ms"] = (statistics.median(long) - statistics.median(short)) / P["extra"]
out["evaluate_ms"] = statistics.median(evals)
out["predict_ms"] = statistics.median(preds)
out["accuracy"] = float(est.evaluate(eval_input_fn)["accuracy"])
shutil.rmtree(model_dir)
print("@@" + json.dumps(out))
"""


def tf215_python() -> str:
    """An interpreter with TensorFlow 2.15 and tensorflow-estimator (TF_PYTHON)."""
    return os.environ.get("TF_PYTHON", os.path.expanduser("~/.cache/tw-tf215/bin/python"))


def main(argv) -> None:
    run_side_by_side(
        _CHILD, {"bench": BENCH_DIR, "src": SRC, "reps": REPS, "extra": EXTRA_STEPS},
        "a 20-64-64-3 MLP model_fn, Adam, batches of 64; medians of %d calls" % REPS, [
            ("train_call_ms", "a train(steps=10) call"),
            ("step_ms", "one more training step inside train()"),
            ("evaluate_ms", "an evaluate() call over 10 batches"),
            ("predict_ms", "a predict() call yielding 640 rows"),
        ], "tf.estimator, side by side with TensorFlow 2.15's",
        "TF_PYTHON=~/.cache/tw-tf215/bin/python python benchmarks/estimator_train.py "
        "benchmarks/out/extra_estimator.json",
        argv[1] if len(argv) > 1 else None, reference_python=tf215_python())


if __name__ == "__main__":
    main(sys.argv)
