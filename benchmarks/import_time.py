"""Importing graphs against TensorFlow: import_graph_def, import_meta_graph, loader.load.

Four cases, each timed from the serialized bytes to a populated tf.Graph (parsing
included, since decoding the protocol buffer is part of what a user waits for):

1. `mlp_graph_def`: import_graph_def of a 300-layer MLP training graph (about 8,000
   nodes: variables, forward, gradients, GradientDescent updates).
2. `lstm_meta_graph`: tf.train.import_meta_graph of a TF1 dynamic_rnn LSTM training
   meta graph (v1 control flow: Enter/Merge/Switch/NextIteration/Exit frames).
3. `nested_loop_grad`: import_graph_def of tests/fixtures/tf2_functional/
   nested_loop_grad.pb (TF 2.x functional While ops calling a function library, which
   tensorweave lowers at import).
4. `keras_saved_model`: tf.saved_model.loader.load of the Keras LSTM SavedModel
   tests/fixtures/tf2_saved_models/tf2_21/keras3_export_lstm (its graph, function
   library and variable restore) into a fresh Session.

The graphs of cases 1 and 2 are written by TensorFlow (its child runs first and writes
them into a scratch folder), so both implementations import the identical TF-written
bytes; without TensorFlow, tensorweave writes them itself. Each case runs in its own
fresh interpreter per implementation (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python): the first import there is the "fresh"
figure, then the median of REPS imports in the same (warm) process. Ratios are
tensorweave / TensorFlow (lower is better). The tensorweave child also reports the
number of Python function calls one warm import makes (cProfile's total_calls).

Usage: [TF_PYTHON=...] python benchmarks/import_time.py [OUT_JSON] [--reps N]
           [--scratch DIR] (DIR keeps the written graphs: written once, reused after);
       TW_SRC=DIR times the tensorweave sources under DIR (default: this checkout's src)
"""
import os
import sys
import tempfile

# benchmarks/results.py (this script's folder)
from results import run_child, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.environ.get("TW_SRC", os.path.join(HERE, "..", "src"))
FIXTURES = os.path.join(HERE, "..", "tests", "fixtures")
MLP_LAYERS, MLP_WIDTH, LSTM_UNITS, LSTM_STEPS, REPS = 300, 16, 32, 20, 9
# the children read and write cached bytecode, as an installed package does: "fresh" is
# a new interpreter, not a first compile of the sources
_BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}
CASES = ("mlp_graph_def", "lstm_meta_graph", "nested_loop_grad", "keras_saved_model")

_CHILD = r"""  # after results.CHILD_PREAMBLE
mlp_path = os.path.join(P["scratch"], "mlp.pb")
lstm_path = os.path.join(P["scratch"], "lstm.meta")


def write_mlp():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, P["width"]], name="x")
        h = x
        for k in range(P["layers"]):
            w = tf.Variable(tf.random_normal([P["width"], P["width"]], stddev=0.1, seed=k),
                            name="w%d" % k)
            b = tf.Variable(tf.zeros([P["width"]]), name="b%d" % k)
            h = tf.nn.relu(tf.matmul(h, w) + b)
        loss = tf.reduce_mean(tf.square(h))
        tf.train.GradientDescentOptimizer(0.01).minimize(loss, name="train")
    with open(mlp_path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())


class LSTMCell:
    # a minimal LSTM cell for dynamic_rnn: TF 2.21's tf.nn.rnn_cell needs Keras 2
    state_size = (P["units"], P["units"])
    output_size = P["units"]

    def zero_state(self, batch_size, dtype):
        return tuple(tf.zeros([batch_size, P["units"]], dtype) for _ in range(2))

    def __call__(self, x, state):
        c, h = state
        kernel = tf.get_variable("kernel", [2 * P["units"], 4 * P["units"]])
        bias = tf.get_variable("bias", [4 * P["units"]], initializer=tf.zeros_initializer())
        i, j, f, o = tf.split(tf.matmul(tf.concat([x, h], 1), kernel) + bias, 4, axis=1)
        c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, (c, h)


def write_lstm():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [8, P["steps"], P["units"]], name="x")
        cell = LSTMCell()
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(outputs))
        tf.train.AdamOptimizer(0.01).minimize(loss, name="train")
        tf.train.Saver()
        tf.train.export_meta_graph(lstm_path)


if P["impl"] == "tensorflow" or not os.path.exists(mlp_path):
    if not os.path.exists(mlp_path):
        write_mlp()
    if not os.path.exists(lstm_path):
        write_lstm()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def import_graph_def_of(data):
    def run():
        gd = tf.GraphDef()
        gd.ParseFromString(data)
        g = tf.Graph()
        with g.as_default():
            tf.import_graph_def(gd, name="")
        return g
    return run


def import_meta_graph_of(path):
    def run():
        g = tf.Graph()
        with g.as_default():
            tf.train.import_meta_graph(path)
        return g
    return run


def load_saved_model_of(path):
    def run():
        g = tf.Graph()
        with tf.Session(graph=g) as sess:
            tf.saved_model.loader.load(sess, ["serve"], path)
        return g
    return run


case = P["case"]
if case == "mlp_graph_def":
    fn = import_graph_def_of(read(mlp_path))
elif case == "lstm_meta_graph":
    fn = import_meta_graph_of(lstm_path)
elif case == "nested_loop_grad":
    fn = import_graph_def_of(read(os.path.join(P["fixtures"], "tf2_functional",
                                               "nested_loop_grad.pb")))
else:
    fn = load_saved_model_of(os.path.join(P["fixtures"], "tf2_saved_models", "tf2_21",
                                          "keras3_export_lstm"))
t0 = time.perf_counter()
g = fn()
out["fresh_ms"] = (time.perf_counter() - t0) * 1e3
out["ops"] = len(g.get_operations())
bench.check(out["ops"] > 0, "imported graph is empty")
out["warm_ms"] = bench.summarize(bench.time_loop(fn, P["reps"], 1), "ms")["median"]
if P["impl"] == "tensorweave":
    import cProfile, pstats
    profile = cProfile.Profile()
    profile.runcall(fn)
    out["python_calls"] = pstats.Stats(profile).total_calls
print("@@" + json.dumps(out))
"""


def _figure(ours: dict, ref) -> str:
    """"tensorweave F fresh / W warm ms (N ops, C Python calls), TensorFlow ...: ratios"."""
    text = "tensorweave %.1f ms fresh, %.1f ms warm (%d ops, %d Python calls)" % (
        ours["fresh_ms"], ours["warm_ms"], ours["ops"], ours["python_calls"])
    if ref:
        text += "; TensorFlow %.1f ms fresh, %.1f ms warm (%d ops): ratios %.2f fresh, " \
                "%.2f warm" % (ref["fresh_ms"], ref["warm_ms"], ref["ops"],
                               ours["fresh_ms"] / ref["fresh_ms"],
                               ours["warm_ms"] / ref["warm_ms"])
    return text


def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else REPS
    has_tf = os.path.exists(tf_python())
    figures = {"setup": "%d-layer MLP (width %d); LSTM %d units x %d steps; medians of %d "
                        "warm imports, fresh = first import in a new interpreter"
                        % (MLP_LAYERS, MLP_WIDTH, LSTM_UNITS, LSTM_STEPS, reps)}
    results = {}
    keep = argv[argv.index("--scratch") + 1] if "--scratch" in argv else None
    if keep:
        os.makedirs(keep, exist_ok=True)
    with tempfile.TemporaryDirectory() as temporary:
        scratch = keep or temporary
        params = {"bench": BENCH_DIR, "src": SRC, "fixtures": FIXTURES, "scratch": scratch,
                  "layers": MLP_LAYERS, "width": MLP_WIDTH, "units": LSTM_UNITS,
                  "steps": LSTM_STEPS, "reps": reps}
        for case in CASES:
            ref = run_child(_CHILD, tf_python(), "tensorflow", dict(params, case=case),
                            _BYTECODE) if has_tf else None
            ours = run_child(_CHILD, sys.executable, "tensorweave", dict(params, case=case),
                             _BYTECODE)
            results[case] = {"tensorweave": ours, "TensorFlow": ref}
            figures[case] = _figure(ours, ref)
    write_extra(out_path or os.devnull, "Importing graphs, side by side with TensorFlow",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/import_time.py benchmarks/out/extra_import_time.json",
                figures, results=results)


if __name__ == "__main__":
    main(sys.argv)
