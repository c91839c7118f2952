"""Graph construction time of the `mlp_train` graph (graph + gradients + Adagrad update +
initializer), side by side with TensorFlow.

The shared instrument's `build_time` workload builds the `lstm_while` graph first, which
needs while_loop and TensorArray (not implemented yet), so it stops before reaching its
`mlp_train` variant. This script times exactly that variant with the instrument's own
`build_mlp`, `time_loop` and `summarize`, once per implementation in a fresh
interpreter, and writes an extra-figures JSON for results.py.

Usage: python benchmarks/build_time_mlp.py OUT_JSON [TF_PYTHON]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS = 20

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {bench!r}); sys.path.insert(0, {src!r})
import bench
tf, _ = bench.import_impl({impl!r})

def build():
    g = tf.Graph()
    with g.as_default():
        bench.build_mlp(tf)
    return g

t0 = time.perf_counter(); g = build(); first = time.perf_counter() - t0
r = bench.summarize(bench.time_loop(build, {reps}, 0, gc_off=False), "ms")
r["first_build_ms"] = first * 1e3
r["num_ops"] = len(g.get_operations())
print(json.dumps(r))
"""


def measure(python: str, impl: str) -> dict:
    code = _CHILD.format(bench=BENCH_DIR, src=SRC, impl=impl, reps=REPS)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(out_path: str, tf_python: str) -> None:
    tf_res = measure(tf_python, "tensorflow")
    tw_res = measure(sys.executable, "tensorweave")
    key = "best_block_median"
    figures = {
        impl: "best-block median %.2f ms (median %.2f ms, first build %.1f ms, %d ops)" % (
            r[key], r["median"], r["first_build_ms"], r["num_ops"])
        for impl, r in (("TensorFlow", tf_res), ("tensorweave", tw_res))}
    figures["ratio tensorweave / TensorFlow (target <= 1.0)"] = "%.3f" % (
        tw_res[key] / tf_res[key])
    doc = {"title": "build_time, mlp_train variant (graph + gradients + Adagrad + init)",
           "command": "python benchmarks/build_time_mlp.py benchmarks/out/extra_build.json",
           "figures": figures}
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    default_tf = os.path.expanduser("~/.cache/tensorweave-bench-tf/bin/python")
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else default_tf)
