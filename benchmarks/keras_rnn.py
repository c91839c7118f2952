"""tf.keras recurrent layers in graph mode, side by side with TensorFlow 2.15's Keras
(TensorFlow 2.16 and later ship Keras 3, which has no graph mode: TF_PYTHON must name an
interpreter with 2.15).

The program: Sequential([LSTM(64, return_sequences=True), GRU(64), Dense(1)]) on
batches of 32 sequences of 50 steps of 32 features, compiled with Adam and MSE, as a
TF1-era Keras script writes it (tf.compat.v1: the v1 LSTM/GRU classes, their while
loops and their gradients). Figures: one train_on_batch step and one predict_on_batch,
medians over REPS calls after a warm-up; ratios tensorweave / TensorFlow (lower is better).

Usage: [TF_PYTHON=~/.cache/tw-tf215/bin/python] python benchmarks/keras_rnn.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS = 20

_CHILD = r"""  # after results.CHILD_PREAMBLE
import statistics
L = tf.keras.layers
model = tf.keras.Sequential([L.LSTM(64, return_sequences=True, input_shape=(50, 32)),
                             L.GRU(64), L.Dense(1)])
model.compile("adam", "mse")
rs = np.random.RandomState(0)
x = rs.rand(32, 50, 32).astype(np.float32)
y = rs.rand(32, 1).astype(np.float32)

def timed(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3

for _ in range(3):  # the first calls build the functions
    model.train_on_batch(x, y)
    model.predict_on_batch(x)
out["train_step_ms"] = statistics.median(
    timed(lambda: model.train_on_batch(x, y)) for _ in range(P["reps"]))
out["predict_ms"] = statistics.median(
    timed(lambda: model.predict_on_batch(x)) for _ in range(P["reps"]))
print("@@" + json.dumps(out))
"""


def tf215_python() -> str:
    """An interpreter with TensorFlow 2.15 and its Keras 2 (TF_PYTHON)."""
    return os.environ.get("TF_PYTHON", os.path.expanduser("~/.cache/tw-tf215/bin/python"))


def main(argv) -> None:
    run_side_by_side(
        _CHILD, {"bench": BENCH_DIR, "src": SRC, "reps": REPS},
        "Sequential LSTM(64, return_sequences) -> GRU(64) -> Dense(1), Adam, MSE; batches of "
        "32 x 50 steps x 32 features; medians of %d calls" % REPS, [
            ("train_step_ms", "a train_on_batch step"),
            ("predict_ms", "a predict_on_batch call"),
        ], "tf.keras recurrent layers, side by side with TensorFlow 2.15's Keras",
        "TF_PYTHON=~/.cache/tw-tf215/bin/python python benchmarks/keras_rnn.py "
        "benchmarks/out/extra_keras_rnn.json",
        argv[1] if len(argv) > 1 else None, reference_python=tf215_python())


if __name__ == "__main__":
    main(sys.argv)
