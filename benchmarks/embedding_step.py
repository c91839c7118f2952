"""Step time of a sharded embedding lookup + sparse SGD update as the table grows
(OSDI 2016 §4.2, issue #16), side by side with TensorFlow.

The program: a [rows, 64] float32 table made by get_variable with
fixed_size_partitioner(4) (4 shard variables), embedding_lookup of 512 ids (uniform in
[0, rows), fixed per size) with partition_strategy "div" (Figure 3: DynamicPartition,
a Gather on each shard, DynamicStitch), loss = sum(embeddings * C) for a fixed random C
(so the rows move linearly and never reach denormals), and a GradientDescentOptimizer
step, whose per-shard gradients are IndexedSlices applied with a scatter-subtract. A step
touches 512 rows whatever the table's size, so its time should not grow with `rows`:
the ratio to the 10^4 figure should stay near 1.

Each implementation runs in its own interpreter (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python, skipped if missing; tensorweave under this
interpreter). For each size: 20 untimed steps, then STEPS timed steps
(../shared/bench/bench.py's time_loop); the figure is their median (and the best-block
median, the lowest median of 5 consecutive blocks, for a noisy machine).

With --ps, the same program also runs on a local cluster of one PS task and one worker
task (two in-process tf.train.Servers; the shards placed on the PS by
replica_device_setter, the session on the worker's grpc:// target), so each step sends
the looked-up rows and their gradients over gRPC.

Usage: [TF_PYTHON=...] python benchmarks/embedding_step.py [OUT_JSON] [--steps N]
       [--max-rows N] [--ps]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
SIZES = [10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7]
BATCH, DIM, SHARDS = 512, 64, 4

_CHILD = r"""
import json, socket, sys
sys.path.insert(0, {bench!r}); sys.path.insert(0, {src!r})
import numpy as np
import bench
tf, info = bench.import_impl({impl!r})
out = dict(info, sizes={{}})
target, cluster = "", None
if {ps!r}:
    def free_port():
        with socket.socket() as s:
            s.bind(("localhost", 0))
            return s.getsockname()[1]
    cluster = tf.train.ClusterSpec({{"ps": ["localhost:%d" % free_port()],
                                    "worker": ["localhost:%d" % free_port()]}})
    servers = [tf.train.Server(cluster, "ps", 0), tf.train.Server(cluster, "worker", 0)]
    target = servers[1].target
for rows in {sizes!r}:
    rng = np.random.RandomState(rows % 1000)
    ids_np = rng.randint(0, rows, {batch}).astype(np.int64)
    coef = rng.randn({batch}, {dim}).astype(np.float32)
    g = tf.Graph()
    with g.as_default(), tf.device(
            tf.train.replica_device_setter(cluster=cluster) if cluster else None):
        # a name per size: on a cluster the shards outlive the session in the PS task
        table = tf.get_variable("table%d" % rows, [rows, {dim}], tf.float32,
                                initializer=tf.ones_initializer(),
                                partitioner=tf.fixed_size_partitioner({shards}))
        ids = tf.placeholder(tf.int64, [{batch}], name="ids")
        emb = tf.nn.embedding_lookup(table, ids, partition_strategy="div")
        loss = tf.reduce_sum(emb * coef)
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf.variables_initializer(list(table))
    with tf.Session(target, graph=g) as sess:
        sess.run(init)
        before = sess.run(emb, {{ids: ids_np}})
        sess.run(train, {{ids: ids_np}})
        after = sess.run(emb, {{ids: ids_np}})
        grad = np.zeros((rows, {dim}), np.float32) if rows <= 10 ** 5 else None
        if grad is not None:   # one step moved each looked-up row by -0.01 * its gradient
            np.add.at(grad, ids_np, coef)
            bench.check(np.allclose(after, before - 0.01 * grad[ids_np], atol=1e-5),
                        "sparse SGD step")
        fd = {{ids: ids_np}}
        samples = bench.time_loop(lambda: sess.run(train, feed_dict=fd), {steps}, 20)
        out["sizes"][str(rows)] = bench.summarize(samples, "ms")
    del g, sess
print(json.dumps(out), flush=True)
if cluster is not None:   # in-process servers' threads would keep the interpreter alive
    import os
    os._exit(0)
"""


def measure(python: str, impl: str, steps: int, sizes, ps: bool = False) -> dict:
    code = _CHILD.format(bench=BENCH_DIR, src=SRC, impl=impl, sizes=list(sizes), batch=BATCH,
                         dim=DIM, shards=SHARDS, steps=steps, ps=ps)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError("%s child failed:\n%s" % (impl, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def table_lines(res: dict, sizes) -> list:
    lines = ["%-24s %10s %10s %14s %16s" % ("impl", "rows", "median ms", "best-block ms",
                                              "ratio to 10^4")]
    for impl, r in res.items():
        base = r["sizes"][str(sizes[0])]["median"]
        for rows in sizes:
            s = r["sizes"][str(rows)]
            lines.append("%-24s %10.0e %10.3f %14.3f %16.2f" % (
                impl, rows, s["median"], s.get("best_block_median", s["median"]),
                s["median"] / base))
    return lines


def main(argv) -> None:
    out_path, steps, max_rows, with_ps = None, 200, SIZES[-1], False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--steps":
            steps = int(args.pop(0))
        elif a == "--max-rows":
            max_rows = int(args.pop(0))
        elif a == "--ps":
            with_ps = True
        else:
            out_path = a
    sizes = [n for n in SIZES if n <= max_rows]
    tf_python = os.environ.get("TF_PYTHON") or os.path.expanduser(
        "~/.cache/tensorweave-bench-tf/bin/python")
    impls = [("tensorweave", sys.executable)]
    if os.path.exists(tf_python):
        impls.append(("TensorFlow", tf_python))
    res = {}
    for name, python in impls:
        res[name] = measure(python, name.lower(), steps, sizes)
        if with_ps:
            res[name + " (1 PS, gRPC)"] = measure(python, name.lower(), steps, sizes, True)
    lines = table_lines(res, sizes)
    print("\n".join(lines))
    if out_path:
        from results import write_extra
        figures = {"workload": "embedding_lookup of %d ids (dim %d) in a table of %d shards "
                               "(fixed_size_partitioner, 'div') + GradientDescent sparse "
                               "update; median of %d steps" % (BATCH, DIM, SHARDS, steps)}
        for impl, r in res.items():
            base = r["sizes"][str(sizes[0])]["median"]
            figures[impl] = ", ".join("%.0e rows %.3f ms (x%.2f)" % (
                n, r["sizes"][str(n)]["median"], r["sizes"][str(n)]["median"] / base)
                for n in sizes)
        write_extra(out_path, "Sharded embedding step time vs table size (issue #16)",
                    "python benchmarks/embedding_step.py %s" % out_path, figures, raw=res)


if __name__ == "__main__":
    main(sys.argv[1:])
