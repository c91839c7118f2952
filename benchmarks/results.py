"""Writes benchmarks/RESULTS.md from one side-by-side run of ../shared/bench.

Usage: python benchmarks/results.py OUT_DIR [--before BEFORE_DIR] [EXTRA_JSON ...]
OUT_DIR holds tensorflow.json and tensorweave.json from side_by_side.sh; extra JSON files
come from our own benchmarks (executor_raw.py, build_time_variants.py, input_pipeline.py,
parallel_iterations.py, api_coverage.py) and are appended. With --before, BEFORE_DIR
holds tensorweave.json and the same extra files measured on an earlier commit in the
same session, and a before/after table is added (a change that must not slow anything
down shows it there).
Ratios are tensorweave / TensorFlow of `best_block_median` (time: lower is better) from
the same run; throughput targets are stated as such.
"""
import json
import os
import sys

# workload -> (target ratio tw/tf of best_block_median, issue)
TARGETS = {
    "run_overhead": (0.5, 2), "feed_fetch": (0.5, 2), "null_ops_wide": (1.0, 2),
    "identity_chain": (1.0, 2), "mlp_train": (1.1, 3), "cnn_train": (1.5, 3),
    "embedding_sparse": (1.0, 3), "build_time": (1.0, 3), "while_trivial": (2.0, 4),
    "lstm_while": (1.1, 4), "lstm_static": (1.1, 4), "while_grad_matmul": (1.2, 4),
    "queue_roundtrip": (1.0, 5),
}


# Why a row has no figure yet, printed under the table.
NOTES = {
    "build_time": "the instrument builds the lstm_while graph first; its mlp_train and "
                  "lstm_static variants are measured by benchmarks/build_time_variants.py "
                  "(section below).",
}


def _fmt(v):
    if v is None:
        return "-"
    return "%.4g" % v


def main(argv):
    out = argv[1]
    before = None
    if len(argv) > 3 and argv[2] == "--before":
        before, argv = argv[3], argv[:2] + argv[4:]
    with open(os.path.join(out, "tensorflow.json")) as f:
        tf = json.load(f)
    with open(os.path.join(out, "tensorweave.json")) as f:
        tw = json.load(f)
    m = tf["machine"]
    lines = ["# Benchmark results", "",
             "Produced by `make bench`: `../shared/bench/side_by_side.sh` (all workloads), "
             "then `benchmarks/executor_raw.py`, `benchmarks/build_time_variants.py`, "
             "`benchmarks/input_pipeline.py`, `benchmarks/parallel_iterations.py` and "
             "`python benchmarks/results.py benchmarks/out benchmarks/out/extra_*.json`.",
             "", "Workloads in this run: %s." % ", ".join(tw["workloads"]),
             "", "Machine: %s cores (%s), Python %s, NumPy %s; TensorFlow %s; started %s." % (
                 m.get("cores"), m.get("cpu_model"), m.get("python"), m.get("numpy_version"),
                 m.get("impl_version"), m.get("started")), "",
             "Ratio = tensorweave / TensorFlow `best_block_median` from this one run "
             "(lower is better). TF raw = Grappler and L1 optimizations off.", "",
             "| workload | unit | TF default | TF raw | tensorweave | ratio vs TF default "
             "| target | met | issue |", "|---|---|---|---|---|---|---|---|---|"]
    for name, (target, issue) in TARGETS.items():
        a = tf["workloads"].get(name, {})
        b = tw["workloads"].get(name, {})
        if "error" in b or not b:
            err = b.get("error", "not run").splitlines()[0][:70] if b else "not run"
            lines.append("| %s | %s | %s | %s | %s | - | %s | no | #%d |" % (
                name, a.get("unit", ""), _fmt(a.get("best_block_median")),
                _fmt((a.get("raw") or {}).get("best_block_median")), "error: " + err,
                target, issue))
            continue
        ratio = b["best_block_median"] / a["best_block_median"]
        lines.append("| %s | %s | %s | %s | %s | %.3f | %s | %s | #%d |" % (
            name, a.get("unit", ""), _fmt(a.get("best_block_median")),
            _fmt((a.get("raw") or {}).get("best_block_median")),
            _fmt(b.get("best_block_median")), ratio, target,
            "yes" if ratio <= target else "NO", issue))
    for name, note in NOTES.items():
        if "error" in tw["workloads"].get(name, {"error": ""}):
            lines += ["", "Note on %s: %s" % (name, note)]
    many = "enqueue_many/dequeue_many x100"
    qa = tf["workloads"].get("queue_roundtrip", {}).get("variants", {}).get(many)
    qb = tw["workloads"].get("queue_roundtrip", {}).get("variants", {}).get(many)
    if qa and qb:  # elements per second from the best-block medians (us per 100 elements)
        ea, eb = 1e8 / qa["best_block_median"], 1e8 / qb["best_block_median"]
        lines += ["", "queue_roundtrip, %s: TensorFlow %.0f elements/s, tensorweave %.0f "
                  "elements/s (ratio %.2f, target >= 1)." % (many, ea, eb, eb / ea)]
    lw = tw["workloads"].get("lstm_while", {}).get("best_block_median")
    ls = tw["workloads"].get("lstm_static", {}).get("best_block_median")
    if lw and ls:  # the cost of dynamic control flow over static unrolling (EuroSys §6)
        lines += ["", "lstm_while / lstm_static, tensorweave: %.3f (target <= 1.08)." % (
            lw / ls)]
    imp_tf = tf["workloads"]["run_overhead"].get("rss_after_import_mb")
    imp_tw = tw["workloads"]["run_overhead"].get("rss_after_import_mb")
    lines += ["", "RSS right after import: TensorFlow %s MB, tensorweave %s MB (ratio %.3f, "
              "target <= 0.25)." % (_fmt(imp_tf), _fmt(imp_tw), imp_tw / imp_tf)]
    if before is not None:
        lines += _before_after(before, tw, argv[2:])
    for path in argv[2:]:
        with open(path) as f:
            extra = json.load(f)
        lines += ["", "## %s" % extra["title"], "", "Command: `%s`" % extra["command"], ""]
        lines += ["- %s: %s" % (k, v) for k, v in extra["figures"].items()]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def _before_after(before_dir: str, tw: dict, extra_paths) -> list:
    """Rows comparing tensorweave now with tensorweave at an earlier commit (same run)."""
    with open(os.path.join(before_dir, "tensorweave.json")) as f:
        old = json.load(f)
    lines = ["", "## Before and after (%s)" % old.get("label", before_dir), "",
             "tensorweave at the earlier commit (before) and now (after), measured back to "
             "back in this session: after/before above 1 is slower for times, faster for "
             "throughputs (ops/s, elements/s, speed-ups).", "",
             "| workload | unit | before | after | after/before |", "|---|---|---|---|---|"]
    for name in TARGETS:
        a = old["workloads"].get(name, {}).get("best_block_median")
        b = tw["workloads"].get(name, {}).get("best_block_median")
        if a and b:
            lines.append("| %s | %s | %s | %s | %.3f |" % (
                name, tw["workloads"][name].get("unit", ""), _fmt(a), _fmt(b), b / a))
    for path in extra_paths:
        old_path = os.path.join(before_dir, os.path.basename(path))
        if not os.path.exists(old_path):
            continue
        with open(old_path) as f:
            a_fig = json.load(f)["figures"]
        with open(path) as f:
            b_fig = json.load(f)["figures"]
        for key, b in b_fig.items():
            a = a_fig.get(key)
            na, nb = _leading_number(a), _leading_number(b)
            if na and nb:
                lines.append("| %s | | %s | %s | %.3f |" % (key, a, b, nb / na))
    return lines


def _leading_number(v):
    """The number a figure starts with ("0.746 ms (mean ...)" -> 0.746), else None."""
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).split()[0])
    except (ValueError, IndexError):
        return None


# What every child starts with: its parameters `P`, the shared instrument `bench`, the
# implementation as `tf` and `out`, the result dict (with the implementation's info).
CHILD_PREAMBLE = r"""
import json, os, sys, tempfile, time
P = json.loads(sys.argv[1])
sys.path.insert(0, P["bench"]); sys.path.insert(0, P["src"])
import numpy as np
import bench
tf, info = bench.import_impl(P["impl"])
out = dict(info)
"""


def run_child(code: str, python: str, impl: str, params: dict, env=None,
              timeout: float = 900) -> dict:
    """Runs one implementation's half of a side-by-side benchmark: CHILD_PREAMBLE, then
    `code`, in a fresh `python` with the JSON of `params` (plus "impl") as its argument;
    the child prints its result as one line "@@<json>".

    Raises:
      RuntimeError: the child failed or printed no result (its stderr's end included).
    """
    import subprocess
    p = subprocess.run([python, "-c", CHILD_PREAMBLE + code,
                        json.dumps(dict(params, impl=impl))],
                       capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    lines = [line for line in p.stdout.splitlines() if line.startswith("@@")]
    if p.returncode != 0 or not lines:
        raise RuntimeError("%s child failed (%s):\n%s" % (impl, p.returncode, p.stderr[-3000:]))
    return json.loads(lines[-1][2:])


def tf_python() -> str:
    """The interpreter with TensorFlow installed (TF_PYTHON, or the shared instrument's)."""
    return os.environ.get("TF_PYTHON", os.path.expanduser(
        "~/.cache/tensorweave-bench-tf/bin/python"))


def side_by_side_figures(ours: dict, ref, rows, unit: str = "ms") -> dict:
    """{label: "tensorweave X unit, TensorFlow Y unit: ratio R"} for each (key, label) of
    `rows` (the TensorFlow part only when `ref`, TensorFlow's results, is there)."""
    figures = {}
    for key, label in rows:
        text = "tensorweave %.3f %s" % (ours[key], unit)
        if ref:
            text += ", TensorFlow %.3f %s: ratio %.2f" % (ref[key], unit, ours[key] / ref[key])
        figures[label] = text
    return figures


def run_side_by_side(child: str, params: dict, setup: str, rows, title: str, command: str,
                     out_path, reference_python: str = None, unit: str = "ms") -> None:
    """Runs `child` under tensorweave, then under TensorFlow (`reference_python`, default
    tf_python(); left out when that interpreter is missing), and writes the figures of
    `rows` (see side_by_side_figures, in `unit`) with `setup` as an extra-figures JSON
    at `out_path` (None: printed only)."""
    python = reference_python or tf_python()
    ours = run_child(child, sys.executable, "tensorweave", params)
    ref = run_child(child, python, "tensorflow", params) if os.path.exists(python) else None
    figures = {"setup": setup}
    figures.update(side_by_side_figures(ours, ref, rows, unit))
    write_extra(out_path or os.devnull, title, command, figures,
                results={"tensorweave": ours, "TensorFlow": ref})


def write_extra(out_path: str, title: str, command: str, figures: dict, **more) -> None:
    """Writes one of our benchmarks' extra-figures JSON (read back by this script) and
    prints its figures."""
    doc = dict({"title": title, "command": command, "figures": figures}, **more)
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps({"title": title, "figures": figures}, indent=1))


if __name__ == "__main__":
    main(sys.argv)
