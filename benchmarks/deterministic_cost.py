"""The cost of the deterministic mode (runtime/determinism.py) on mlp_train and lstm_while.

Runs the workloads `wl_mlp_train` and `wl_lstm_while` of ../shared/bench/bench.py (the
side-by-side benchmark) through its Ctx, once in a default session and once in a session
with ConfigProto(experimental={'deterministic': True}), alternating in interleaved
rounds so that machine noise hits both alike. Reports per workload the median over
rounds of each round's median step time, and the ratio deterministic / default.

Usage: python benchmarks/deterministic_cost.py [--rounds N] [--scale F] [--bench-dir D]
  --scale multiplies the bench's full repetition counts (default 0.25: 125 mlp steps and
  25 lstm steps per round); --bench-dir is where bench.py is (default ../shared/bench).
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")


def load_bench(directory: str = BENCH_DIR):
    sys.path.insert(0, os.path.abspath(directory))
    import bench
    return bench


def make_ctx(bench, tf, deterministic: bool, scale: float):
    class ModeCtx(bench.Ctx):
        def session(self, graph):
            config = tf.ConfigProto(experimental={"deterministic": deterministic})
            return tf.Session(graph=graph, config=config)

        def reps(self, full, quick):
            return max(quick, int(full * scale))
    return ModeCtx(tf, "tensorweave", False, False)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scale", type=float, default=0.25)
    ap.add_argument("--bench-dir", default=BENCH_DIR)
    args = ap.parse_args(argv)
    import tensorweave as tf
    bench = load_bench(args.bench_dir)
    workloads = {"mlp_train": bench.wl_mlp_train, "lstm_while": bench.wl_lstm_while}
    ctxs = {False: make_ctx(bench, tf, False, args.scale),
            True: make_ctx(bench, tf, True, args.scale)}
    medians = {(w, d): [] for w in workloads for d in (False, True)}
    losses = {}
    for r in range(args.rounds):
        for w, fn in workloads.items():
            for d in ((False, True) if r % 2 == 0 else (True, False)):
                res = fn(ctxs[d])
                medians[(w, d)].append(res["median"])
                losses[(w, d)] = res["loss_after"]
    report = {}
    for w in workloads:
        off = statistics.median(medians[(w, False)])
        on = statistics.median(medians[(w, True)])
        report[w] = {"default_ms": round(off, 3), "deterministic_ms": round(on, 3),
                     "ratio": round(on / off, 3),
                     "loss_after_default": losses[(w, False)],
                     "loss_after_deterministic": losses[(w, True)]}
        print("%-11s default %8.3f ms  deterministic %8.3f ms  ratio %.3f"
              % (w, off, on, on / off))
    print(json.dumps({"cpu_count": os.cpu_count(), "rounds": args.rounds,
                      "scale": args.scale, "results": report}, indent=1))
    return report


if __name__ == "__main__":
    main()
