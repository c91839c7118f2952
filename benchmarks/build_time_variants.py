"""Graph construction time of the `build_time` workload's variants that need no control
flow, side by side with TensorFlow: `mlp_train` (graph + gradients + Adagrad update +
initializer) and `lstm_static` (a 50-step unrolled LSTM + gradients + SGD + initializer).

The shared instrument's `build_time` workload builds the `lstm_while` graph first, which
needs while_loop and TensorArray (not implemented yet), so it stops before reaching these
variants. This script times them with the instrument's own builders, `time_loop` and
`summarize`, each implementation in a fresh interpreter, and writes an extra-figures JSON
for results.py.

Usage: python benchmarks/build_time_variants.py OUT_JSON [TF_PYTHON]
"""
import json
import os
import subprocess
import sys
from results import write_extra  # benchmarks/results.py (this script's folder)

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
VARIANTS = {"mlp_train": ("bench.build_mlp(tf)", 20),
            "lstm_static": ("bench.build_lstm(tf, 'static')", 10)}

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {bench!r}); sys.path.insert(0, {src!r})
import bench
tf, _ = bench.import_impl({impl!r})

def build():
    g = tf.Graph()
    with g.as_default():
        {builder}
    return g

t0 = time.perf_counter(); g = build(); first = time.perf_counter() - t0
r = bench.summarize(bench.time_loop(build, {reps}, 0, gc_off=False), "ms")
r["first_build_ms"] = first * 1e3
r["num_ops"] = len(g.get_operations())
print(json.dumps(r))
"""


def measure(python: str, impl: str, builder: str, reps: int) -> dict:
    code = _CHILD.format(bench=BENCH_DIR, src=SRC, impl=impl, builder=builder, reps=reps)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(out_path: str, tf_python: str) -> None:
    key = "best_block_median"
    figures = {}
    for variant, (builder, reps) in VARIANTS.items():
        tf_res = measure(tf_python, "tensorflow", builder, reps)
        tw_res = measure(sys.executable, "tensorweave", builder, reps)
        for impl, r in (("TensorFlow", tf_res), ("tensorweave", tw_res)):
            figures["%s, %s" % (variant, impl)] = (
                "best-block median %.2f ms (median %.2f ms, first build %.1f ms, %d ops)"
                % (r[key], r["median"], r["first_build_ms"], r["num_ops"]))
        figures["%s, ratio tensorweave / TensorFlow (target <= 1.0)" % variant] = \
            "%.3f" % (tw_res[key] / tf_res[key])
    write_extra(out_path, "build_time variants without control flow (graph + gradients + "
                "optimizer + init)",
                "python benchmarks/build_time_variants.py benchmarks/out/extra_build.json",
                figures)


if __name__ == "__main__":
    default_tf = os.path.expanduser("~/.cache/tensorweave-bench-tf/bin/python")
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else default_tf)
