"""String-to-number parsing and batched small linear algebra, side by side with
TensorFlow.

Each implementation runs in its own interpreter (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python, skipped if missing):

1. tf.strings.to_number (StringToNumber) of N_STRINGS fed strings: decimals with up to
   4 fraction digits ("-1234.5678") as float32 and float64, integers below 10**6 in
   magnitude as int32 and int64.
2. Batches of small symmetric positive definite matrices, [1000, 4, 4] and
   [100, 16, 16] float64 (and float32 for eigh): eigh (SelfAdjointEigV2), inv, cholesky,
   solve (one right-hand side), det, slogdet, svd and qr.

Figures: medians of REPS timed Session.run calls (the input fed each time) after WARMUP
untimed ones (the shared instrument's time_loop and summarize), in ms; ratios
tensorweave / TensorFlow (lower is better). Every result is checked against NumPy
before it is timed.

Usage: [TF_PYTHON=...] python benchmarks/string_linalg_kernels.py [OUT_JSON]
         [--src SRC_DIR]
(--src runs tensorweave from another tree's src/, to compare before and after a change.)
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
N_STRINGS, REPS, WARMUP = 100000, 20, 3
BATCHES = [(1000, 4), (100, 16)]
LINALG = ["eigh", "inv", "cholesky", "solve", "det", "slogdet", "svd", "qr"]

_CHILD = r"""  # after results.CHILD_PREAMBLE
rng = np.random.RandomState(0)


def timed(name, build, feed, dtype, check):
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(dtype, feed.shape)
        y = build(p)
        with tf.Session(graph=g) as sess:
            check(sess.run(y, {p: feed}))
            step = lambda: sess.run(y, {p: feed})
            out[name] = bench.summarize(bench.time_loop(step, P["reps"], P["warmup"]),
                                        "ms")["median"]


decimals = np.round(rng.randn(P["n_strings"]) * 1000, 4)
float_text = np.array([repr(float(v)).encode() for v in decimals], dtype=object)
ints = rng.randint(-10 ** 6, 10 ** 6, P["n_strings"])
int_text = np.array([str(v).encode() for v in ints.tolist()], dtype=object)
for dt in ("float32", "float64"):
    timed("to_number_" + dt, lambda p, dt=dt: tf.strings.to_number(p, getattr(tf, dt)),
          float_text, tf.string,
          lambda got, dt=dt: bench.check((got == decimals.astype(dt)).all(), dt + " parse"))
for dt in ("int32", "int64"):
    timed("to_number_" + dt, lambda p, dt=dt: tf.strings.to_number(p, getattr(tf, dt)),
          int_text, tf.string, lambda got, dt=dt: bench.check((got == ints).all(), dt + " parse"))


def close(got, want):
    return np.allclose(got, want, rtol=1e-4, atol=1e-4)


OPS = {
    "eigh": (lambda p: tf.linalg.eigh(p)[0], lambda a: np.linalg.eigvalsh(a)),
    "inv": (tf.linalg.inv, np.linalg.inv),
    "cholesky": (tf.linalg.cholesky, np.linalg.cholesky),
    "solve": (lambda p: tf.linalg.solve(p, p[..., :1]), lambda a: np.linalg.solve(a, a[..., :1])),
    "det": (tf.linalg.det, np.linalg.det),
    "slogdet": (lambda p: tf.linalg.slogdet(p)[1], lambda a: np.linalg.slogdet(a)[1]),
    "svd": (lambda p: tf.linalg.svd(p)[0], lambda a: np.linalg.svd(a, compute_uv=False)),
    "qr": (lambda p: tf.abs(tf.linalg.qr(p)[1]), lambda a: np.abs(np.linalg.qr(a)[1])),
}
for batch, n in P["batches"]:
    a = rng.randn(batch, n, n)
    a = a @ a.transpose(0, 2, 1) + n * np.eye(n)
    for op in P["linalg"]:
        build, ref = OPS[op]
        want = ref(a)
        timed("%s_%dx%dx%d" % (op, batch, n, n), build, a, tf.float64,
              lambda got, op=op: bench.check(close(got, want), op + " result"))
    a32 = a.astype(np.float32)
    timed("eigh_f32_%dx%dx%d" % (batch, n, n), lambda p: tf.linalg.eigh(p)[0], a32,
          tf.float32, lambda got: bench.check(np.allclose(got, np.linalg.eigvalsh(a),
                                                          rtol=1e-4), "eigh float32"))
print("@@" + json.dumps(out))
"""


def _rows():
    rows = [("to_number_" + dt, "tf.strings.to_number, %d strings, %s" % (N_STRINGS, dt))
            for dt in ("float32", "float64", "int32", "int64")]
    for batch, n in BATCHES:
        shape = "%dx%dx%d" % (batch, n, n)
        rows += [("%s_%s" % (op, shape), "%s [%s] float64" % (op, shape.replace("x", ", ")))
                 for op in LINALG]
        rows.append(("eigh_f32_" + shape, "eigh [%s] float32" % shape.replace("x", ", ")))
    return rows


def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    src = argv[argv.index("--src") + 1] if "--src" in argv else SRC
    params = {"bench": BENCH_DIR, "src": src, "n_strings": N_STRINGS, "reps": REPS,
              "warmup": WARMUP, "batches": BATCHES, "linalg": LINALG}
    run_side_by_side(
        _CHILD, params, "Session.run medians of %d runs after %d; inputs fed each run"
        % (REPS, WARMUP), _rows(),
        "String-to-number parsing and batched small linear algebra, side by side with "
        "TensorFlow",
        "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
        "benchmarks/string_linalg_kernels.py benchmarks/out/extra_string_linalg_kernels.json",
        out_path)


if __name__ == "__main__":
    main(sys.argv)
