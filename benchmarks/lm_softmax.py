"""OSDI 2016 Figure 9 in miniature (issue #16): words/s of a language model whose
softmax weights are sharded over 1, 2 and 4 PS tasks, with the full softmax and with
the sampled softmax, side by side with TensorFlow.

Corpus: the text of this Python's standard library sources (`sysconfig`'s stdlib
directory, *.py files in sorted order), tokenized to words (`[A-Za-z_]+|\\d+|\\S`), a
vocabulary of the 40,000 most frequent words (the rest map to one <unk> id). The model
predicts each word from the CONTEXT words before it: their embeddings (a [40000, 64]
table on the worker) concatenated, a tanh layer of HIDDEN units on the worker, then the
softmax layer: weights [40000, HIDDEN] and biases [40000], split by rows into one shard
per PS task (partition "div": shard k holds a contiguous block of ids).

* full softmax: each shard's logits (and, with colocate_gradients_with_ops, its
  gradient) are computed on the shard's PS task (Project Adam style: only h [B, HIDDEN]
  goes to each PS and the [B, 40000 / K] logits come back; the weights never travel);
* sampled softmax: tf.nn.sampled_softmax_loss with NUM_SAMPLED candidates from the
  log-uniform sampler over the shard list; only the sampled rows are gathered and
  updated.

Cluster: K ps tasks and 1 worker task, each its own process on 127.0.0.1
(`tf.train.Server(...).join()`), the client in the child process on grpc://worker:0.
A step trains on BATCH consecutive positions of the corpus with plain SGD; words/s =
BATCH / median step time over STEPS steps after WARMUP untimed ones.

Each implementation runs in its own interpreter (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python, skipped if missing; tensorweave under this
interpreter), and stops the processes it started by pid.

Usage: [TF_PYTHON=...] python benchmarks/lm_softmax.py [OUT_JSON] [--steps N]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_child, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
VOCAB, DIM, CONTEXT, HIDDEN, BATCH, NUM_SAMPLED = 40000, 64, 4, 256, 256, 512
PS_TASKS = (1, 2, 4)
CHILD_TIMEOUT_S = 600

_CHILD = r"""  # after results.CHILD_PREAMBLE
import collections, re, signal, socket, subprocess, sysconfig
V, D, C, H, B, S = P["vocab"], P["dim"], P["context"], P["hidden"], P["batch"], P["sampled"]


def corpus():
    root = sysconfig.get_paths()["stdlib"]
    words, word = [], re.compile(r"[A-Za-z_]+|\d+|\S")
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "test", "tests"))
        for f in sorted(files):
            if f.endswith(".py"):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    words.extend(word.findall(fh.read()))
        if len(words) > 2_000_000:
            break
    counts = collections.Counter(words)
    ids = {w: i + 1 for i, (w, _) in enumerate(counts.most_common(V - 1))}  # 0 = <unk>
    return np.array([ids.get(w, 0) for w in words], np.int64), len(words), len(counts)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


TASK = ("import json, sys; P = json.loads(sys.argv[1]); sys.path.insert(0, P['bench']); "
        "sys.path.insert(0, P['src']); import bench; tf, _ = bench.import_impl(P['impl']); "
        "tf.train.Server(P['spec'], P['job'], P['task']).join()")


def wait_ready(address, timeout=60.0):
    host, port = address.split(":")
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        try:
            socket.create_connection((host, int(port)), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("task at %s did not come up" % address)


def model(k, sampled):
    g = tf.Graph()
    with g.as_default():
        ctx = tf.placeholder(tf.int64, [B, C], name="ctx")
        target = tf.placeholder(tf.int64, [B], name="target")
        with tf.device("/job:worker/task:0"):
            emb = tf.get_variable("emb", [V, D], initializer=tf.random_uniform_initializer(-0.05, 0.05, seed=1))
            x = tf.reshape(tf.nn.embedding_lookup(emb, ctx), [B, C * D])
            w1 = tf.get_variable("w1", [C * D, H], initializer=tf.random_uniform_initializer(-0.05, 0.05, seed=2))
            h = tf.tanh(tf.matmul(x, w1))
        rows = [V // k + (1 if i < V % k else 0) for i in range(k)]
        ws, bs = [], []
        for i, n in enumerate(rows):
            with tf.device("/job:ps/task:%d" % i):
                ws.append(tf.get_variable("softmax_w/part_%d" % i, [n, H],
                                          initializer=tf.random_uniform_initializer(-0.05, 0.05, seed=3 + i)))
                bs.append(tf.get_variable("softmax_b/part_%d" % i, [n], initializer=tf.zeros_initializer()))
        if sampled:
            with tf.device("/job:worker/task:0"):
                loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(
                    ws, bs, tf.reshape(target, [B, 1]), h, S, V, partition_strategy="div"))
        else:
            parts = []
            for w, b in zip(ws, bs):
                with tf.device(w.device):
                    parts.append(tf.matmul(h, w, transpose_b=True) + b)
            with tf.device("/job:worker/task:0"):
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=target, logits=tf.concat(parts, 1)))
        with tf.device("/job:worker/task:0"):
            train = tf.train.GradientDescentOptimizer(0.5).minimize(
                loss, colocate_gradients_with_ops=True)
        init = tf.global_variables_initializer()
    return g, ctx, target, loss, train, init


ids, n_words, n_types = corpus()
out = dict(info, corpus_words=n_words, corpus_types=n_types, points={})
starts = np.arange(C, C + P["steps_total"] * B).reshape(-1, B) % (len(ids) - 1)
starts = np.maximum(starts, C)
batches = [(np.stack([ids[s - C + j] for j in range(C)], 1), ids[s]) for s in starts]
for k in P["ps_tasks"]:
    spec = {"ps": ["127.0.0.1:%d" % free_port() for _ in range(k)],
            "worker": ["127.0.0.1:%d" % free_port()]}
    procs = [subprocess.Popen([sys.executable, "-c", TASK, json.dumps(dict(P, spec=spec, job=job, task=i))],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for job in ("ps", "worker") for i in range(len(spec[job]))]
    try:
        for job in ("ps", "worker"):
            for a in spec[job]:
                wait_ready(a)
        for sampled in (False, True):
            g, ctx, target, loss, train, init = model(k, sampled)
            with tf.Session("grpc://" + spec["worker"][0], graph=g) as sess:
                sess.run(init)
                fd = lambda i: {ctx: batches[i][0], target: batches[i][1]}
                loss0 = float(sess.run(loss, fd(0)))
                for i in range(P["warmup"]):
                    sess.run(train, fd(i))
                times = []
                for i in range(P["warmup"], P["warmup"] + P["steps"]):
                    t0 = time.perf_counter()
                    sess.run(train, fd(i))
                    times.append(time.perf_counter() - t0)
                loss1 = float(sess.run(loss, fd(0)))
            med = float(np.median(times))
            out["points"]["%s softmax, %d ps" % ("sampled" if sampled else "full", k)] = dict(
                median_step_s=med, words_per_s=B / med, loss_first=loss0, loss_after=loss1,
                steps=len(times))
            print("%s: %s" % (P["impl"], json.dumps({k2: v for k2, v in out["points"].items()})[-200:]), file=sys.stderr)
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
print("@@" + json.dumps(out))
"""




def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 20
    params = {"bench": BENCH_DIR, "src": SRC, "vocab": VOCAB, "dim": DIM, "context": CONTEXT,
              "hidden": HIDDEN, "batch": BATCH, "sampled": NUM_SAMPLED,
              "ps_tasks": list(PS_TASKS), "steps": steps, "warmup": 3,
              "steps_total": steps + 4}
    res = {"tensorweave": run_child(_CHILD, sys.executable, "tensorweave", params,
                                    timeout=CHILD_TIMEOUT_S)}
    if os.path.exists(tf_python()):
        res["TensorFlow"] = run_child(_CHILD, tf_python(), "tensorflow", params,
                                      timeout=CHILD_TIMEOUT_S)
    tw = res["tensorweave"]
    figures = {"setup": "corpus: %d words of the stdlib sources (%d distinct), vocabulary "
                        "%d; context %d, embedding %d, hidden %d, batch %d words, %d sampled; "
                        "1 worker + K ps task processes on 127.0.0.1; median of %d steps" % (
                            tw["corpus_words"], tw["corpus_types"], VOCAB, CONTEXT, DIM,
                            HIDDEN, BATCH, NUM_SAMPLED, steps)}
    for key, b in tw["points"].items():
        text = "tensorweave %.0f words/s (loss %.3f -> %.3f)" % (
            b["words_per_s"], b["loss_first"], b["loss_after"])
        if "TensorFlow" in res:
            a = res["TensorFlow"]["points"][key]
            text += ", TensorFlow %.0f words/s: ratio %.2f (words/s, higher is better)" % (
                a["words_per_s"], b["words_per_s"] / a["words_per_s"])
        figures[key] = text
    for name, r in res.items():
        full = [r["points"]["full softmax, %d ps" % k]["words_per_s"] for k in PS_TASKS]
        samp = [r["points"]["sampled softmax, %d ps" % k]["words_per_s"] for k in PS_TASKS]
        figures["%s: sampled / full softmax words/s" % name] = ", ".join(
            "%d ps %.1fx" % (k, s / f) for k, s, f in zip(PS_TASKS, samp, full))
    write_extra(out_path or os.devnull,
                "Language model, full vs sampled softmax over K ps tasks (OSDI Figure 9 in "
                "miniature, issue 16)",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/lm_softmax.py benchmarks/out/extra_lm_softmax.json",
                figures, results=res)

if __name__ == "__main__":
    main(sys.argv)
