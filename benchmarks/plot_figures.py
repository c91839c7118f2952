"""Plots of issue 16's experiments from the figures their scripts wrote (matplotlib, a
benchmark-only dependency: `pip install -e '.[bench]'`):

* benchmarks/figures/lm_softmax_fig9.png: words/s of the language model against the
  number of ps tasks, full and sampled softmax, tensorweave and TensorFlow
  (from benchmarks/lm_softmax.py's JSON);
* benchmarks/figures/embedding_step.png: step time of the sharded embedding against the
  table's rows (from benchmarks/embedding_step.py's JSON).

(benchmarks/sync_replicas.py draws Figures 4 and 8 itself.)

Usage: python benchmarks/plot_figures.py [OUT_DIR] (reads OUT_DIR/extra_lm_softmax.json
and OUT_DIR/extra_embedding.json; default benchmarks/out)
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = os.path.join(HERE, "figures")


def plot_lm_softmax(doc: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    styles = {"tensorweave": "-", "TensorFlow": "--"}
    for impl, r in doc["results"].items():
        pts = r["points"]
        ks = sorted({int(k.rsplit(", ", 1)[1].split()[0]) for k in pts})
        for kind, marker in (("full", "o"), ("sampled", "s")):
            ys = [pts["%s softmax, %d ps" % (kind, k)]["words_per_s"] for k in ks]
            ax.plot(ks, ys, styles.get(impl, ":"), marker=marker,
                    label="%s, %s softmax" % (impl, kind))
    ax.set_yscale("log")
    ax.set_xticks([1, 2, 4])
    ax.set_xlabel("ps tasks (softmax weights sharded over them)")
    ax.set_ylabel("words/s (log scale)")
    ax.set_title("Figure 9 in miniature: a 40,000-word language model")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_embedding(doc: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for impl, r in doc["raw"].items():
        rows = sorted(int(n) for n in r["sizes"])
        ax.plot(rows, [r["sizes"][str(n)]["median"] for n in rows], marker="o", label=impl)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows of the embedding table (4 shards)")
    ax.set_ylabel("median step time (ms, log scale)")
    ax.set_title("Sharded embedding lookup + sparse update: 512 ids per step")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv) -> None:
    out_dir = argv[1] if len(argv) > 1 else os.path.join(HERE, "out")
    os.makedirs(FIGURES, exist_ok=True)
    for name, plot, png in (("extra_lm_softmax.json", plot_lm_softmax, "lm_softmax_fig9.png"),
                            ("extra_embedding.json", plot_embedding, "embedding_step.png")):
        src = os.path.join(out_dir, name)
        if not os.path.exists(src):
            print("skipped %s: %s is missing" % (png, src))
            continue
        with open(src) as f:
            plot(json.load(f), os.path.join(FIGURES, png))
        print("wrote", os.path.join(FIGURES, png))


if __name__ == "__main__":
    main(sys.argv)
