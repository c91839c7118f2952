"""Synchronous replication and backup workers in miniature (OSDI 2016 §4.4 Figure 4,
§6.3 Figure 8), on a local cluster of this machine.

Model: linear regression, 16 features, 1024 fixed examples; each replica step feeds a
batch of 32 drawn from its own seeded generator. Every replica step also sleeps a
simulated compute time drawn from a fixed-seed generator per replica (replica r's k-th
step gets the same time in every configuration):

    base   = BASE_S * lognormal(0, 0.1)                        (every replica)
    + straggle = STRAGGLE_S * Pareto(alpha=1.5), capped at CAP_S
                 (Figure 4: always, in the straggler workers; Figure 8: with
                  probability P_STRAGGLE in any replica)

1. Figure 4: 1 PS task and 4 worker tasks (5 `tf.train.Server` processes); 4 client
   threads here, client k with its own graph (replica_device_setter) and Session on
   grpc://worker k, for WALL_S seconds per scheme: (a) asynchronous SGD, (b) synchronous,
   m = n = 4, (c) synchronous with one backup worker, m = 3 of n = 4. Worker 3 straggles.
   Reported: global steps/s, gradients applied/s, and the loss on all examples at the
   end (a fresh cluster per scheme).
2. Figure 8: 8 replicas as client threads in this process (8 more task processes are too
   heavy for 2 cores) against one PS task that runs everything; b = 0..4 backup workers
   (m = 8 - b). The chief's sync op runs in its own loop, and one step's time is one run
   of it (taking the m gradients, updating, handing out tokens). Reported: median and
   p90 step time over STEPS steps, the speedup t(0)/t(b) and the normalized speedup
   t(0)/t(b) * m/8 with t the median step time (the paper's t(0)/t(b) * 50/(50+b)
   discounts the extra workers the same way), the gradients aggregated per second
   relative to b = 0, (m / mean step time) / (8 / mean at b = 0), which is what the
   adaptive policy maximises (throughput over many steps follows the mean, not the
   median), and the policy's choice (BackupWorkerPolicy) from the arrival times the
   accumulator measured in the b = 0 run, and from the injected times alone.

Plots (matplotlib, a benchmark-only dependency): benchmarks/figures/sync_replicas_fig4.png
and sync_replicas_fig8.png. Usage: python benchmarks/sync_replicas.py [--json OUT]
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
sys.path.insert(0, SRC)

import tensorweave as tf  # noqa: E402
from tensorweave.distribute.server import free_port  # noqa: E402
from tensorweave.train.sync_replicas_optimizer import BackupWorkerPolicy  # noqa: E402

SEED = 2016
BASE_S, STRAGGLE_S, CAP_S, P_STRAGGLE = 0.04, 0.03, 1.0, 0.12
WALL_S = 12.0
STEPS, WARMUP = 40, 3
FEATURES, EXAMPLES, BATCH, LR = 16, 1024, 32, 0.01

_rng = np.random.default_rng(SEED)
X = _rng.standard_normal((EXAMPLES, FEATURES)).astype(np.float32)
W_TRUE = _rng.standard_normal((FEATURES, 1)).astype(np.float32)
Y = X @ W_TRUE + 0.1 * _rng.standard_normal((EXAMPLES, 1)).astype(np.float32)

_TASK = ("import json, sys; sys.path.insert(0, %r); import tensorweave as tf; "
         "tf.train.Server(json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])).join()"
         % SRC)


class Cluster:
    """Task processes on 127.0.0.1, stopped by pid."""

    def __init__(self, jobs):
        self.spec = {j: ["127.0.0.1:%d" % free_port() for _ in range(n)]
                     for j, n in jobs.items()}
        self.procs = [subprocess.Popen([sys.executable, "-c", _TASK, json.dumps(self.spec),
                                        j, str(i)], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                      for j, addrs in self.spec.items() for i in range(len(addrs))]
        import grpc
        for addrs in self.spec.values():
            for a in addrs:
                with grpc.insecure_channel(a) as ch:
                    grpc.channel_ready_future(ch).result(timeout=60)

    def target(self, job, i):
        return "grpc://" + self.spec[job][i]

    def stop(self):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait(10)


class ComputeTimes:
    """Replica r's simulated compute times, one draw per step, from (SEED, r)."""

    def __init__(self, replica, always_straggle=False, p_straggle=0.0):
        self.rng = np.random.default_rng([SEED, replica])
        self.always, self.p = always_straggle, p_straggle

    def draw(self):
        t = BASE_S * self.rng.lognormal(0.0, 0.1)
        u, tail = self.rng.random(), self.rng.pareto(1.5)
        if self.always or u < self.p:
            t += min(CAP_S, STRAGGLE_S * tail)
        return t


def build_replica(i, n, scheme, m, device_fn=None, scope=None):
    """One replica's graph: model on the PS, its optimizer (async or sync m of n)."""
    g = tf.Graph()
    with g.as_default(), tf.device(device_fn):
        step = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [FEATURES, 1], initializer=tf.zeros_initializer())
        x = tf.placeholder(tf.float32, [None, FEATURES])
        y = tf.placeholder(tf.float32, [None, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        opt = tf.train.GradientDescentOptimizer(LR)
        if scheme != "async":
            opt = tf.train.SyncReplicasOptimizer(opt, m, n, replica_id=i,
                                                 barrier_diagnosis_secs=0)
        with tf.name_scope(scope):
            train = opt.minimize(loss, global_step=step)
        r = dict(g=g, step=step, x=x, y=y, loss=loss, opt=opt, train=train,
                 init=tf.global_variables_initializer(),
                 local_init=tf.local_variables_initializer())
        if scheme != "async":
            r["tokens"] = opt.get_init_tokens_op()
            with tf.device(None):  # with the queue, wherever it is
                r["close"] = opt._sync_token_queue.close(cancel_pending_enqueues=True)
            r["sync_op"] = opt.get_chief_queue_runner().enqueue_ops[0]
            r["status"] = opt.replica_status_ops()[0]
    return r


def replica_loop(r, sess, i, times, stop, counts):
    rng = np.random.default_rng([SEED, 100 + i])
    while not stop.is_set():
        time.sleep(times.draw())
        idx = rng.integers(0, EXAMPLES, BATCH)
        try:
            sess.run(r["train"], {r["x"]: X[idx], r["y"]: Y[idx]})
        except (tf.errors.OpError, RuntimeError):
            return
        counts[i] += 1


def start_sessions(reps, targets, scheme, configs=None):
    sessions = [tf.Session(t, graph=r["g"], config=c)
                for r, t, c in zip(reps, targets, configs or [None] * len(reps))]
    chief = reps[0]
    sessions[0].run(chief["init"])
    sessions[0].run(chief["local_init"])
    if scheme != "async":
        sessions[0].run(chief["opt"].chief_init_op)
        sessions[0].run(chief["tokens"])
        for r, s in zip(reps[1:], sessions[1:]):
            s.run(r["local_init"])
            s.run(r["opt"].local_step_init_op)
    return sessions


def figure4_scheme(scheme, m, n=4, stragglers=(3,)):
    c = Cluster({"ps": 1, "worker": n})
    try:
        spec = tf.train.ClusterSpec(c.spec)
        reps = [build_replica(i, n, scheme, m, tf.train.replica_device_setter(
            cluster=spec, worker_device="/job:worker/task:%d" % i)) for i in range(n)]
        configs = [tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % i])
                   for i in range(n)]
        sessions = start_sessions(reps, [c.target("worker", i) for i in range(n)], scheme,
                                  configs)
        stop, counts = threading.Event(), [0] * n
        chief_stop = threading.Event()
        threads = [threading.Thread(target=replica_loop, args=(
            r, s, i, ComputeTimes(i, always_straggle=i in stragglers), stop, counts))
            for i, (r, s) in enumerate(zip(reps, sessions))]
        if scheme != "async":
            def chief_loop():
                while not chief_stop.is_set():
                    try:
                        sessions[0].run(reps[0]["sync_op"])
                    except (tf.errors.OpError, RuntimeError):
                        return
            threads.append(threading.Thread(target=chief_loop))
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        time.sleep(WALL_S)
        steps = int(sessions[0].run(reps[0]["step"]))
        wall = time.perf_counter() - t0
        stop.set()
        chief_stop.set()
        loss = float(sessions[0].run(reps[0]["loss"], {reps[0]["x"]: X, reps[0]["y"]: Y}))
        if scheme != "async":
            sessions[0].run(reps[0]["close"])
        for s in sessions[1:]:
            s.close()
        for t in threads[:n]:
            t.join(30)
        sessions[0].close()
        for t in threads[n:]:
            t.join(30)
        grads = sum(counts) if scheme == "async" else steps * m
        return dict(scheme=scheme, m=m, n=n, wall_s=wall, global_steps=steps,
                    steps_per_s=steps / wall, grads_per_s=grads / wall, loss=loss,
                    replica_runs=counts)
    finally:
        c.stop()


def figure8_config(b, n=8):
    m = n - b
    c = Cluster({"ps": 1})
    try:
        target = c.target("ps", 0)
        reps = [build_replica(i, n, "sync", m, None, scope="replica%d" % i)
                for i in range(n)]
        sessions = start_sessions(reps, [target] * n, "sync")
        stop, counts = threading.Event(), [0] * n
        threads = [threading.Thread(target=replica_loop, args=(
            r, s, i, ComputeTimes(i, p_straggle=P_STRAGGLE), stop, counts))
            for i, (r, s) in enumerate(zip(reps, sessions))]
        for t in threads:
            t.start()
        durations = []
        for _ in range(WARMUP + STEPS):
            t0 = time.perf_counter()
            sessions[0].run(reps[0]["sync_op"])
            durations.append(time.perf_counter() - t0)
        status = sessions[0].run(reps[0]["status"])
        stop.set()
        sessions[0].run(reps[0]["close"])
        for t in threads:
            t.join(30)
        for s in sessions:
            s.close()
        d = np.array(durations[WARMUP:])
        return dict(b=b, m=m, median_s=float(np.median(d)), mean_s=float(np.mean(d)),
                    p90_s=float(np.percentile(d, 90)), status=status)
    finally:
        c.stop()


def synthetic_policy_choice(n=8, steps=WARMUP + STEPS):
    """The policy's choice from the injected compute times alone (no runtime)."""
    gens = [ComputeTimes(i, p_straggle=P_STRAGGLE) for i in range(n)]
    p = BackupWorkerPolicy(n)
    for _ in range(steps):
        p.record_round([g.draw() for g in gens])
    return p.choose(), p


def plot(fig4, fig8, chosen_m, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out_dir, exist_ok=True)
    labels = ["async", "sync m=n=4", "sync m=3 of 4\n(1 backup)"]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, key, title in zip(axes, ("steps_per_s", "grads_per_s", "loss"),
                              ("global steps/s", "gradients applied/s",
                               "loss after %.0f s" % WALL_S)):
        ax.bar(range(3), [r[key] for r in fig4], color=["#888", "#3a7", "#37a"])
        ax.set_xticks(range(3))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title(title, fontsize=10)
    axes[2].set_yscale("log")
    fig.suptitle("Figure 4 in miniature: 1 PS + 4 workers, worker 3 straggles")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "sync_replicas_fig4.png"), dpi=110)
    plt.close(fig)

    bs = [r["b"] for r in fig8]
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.plot(bs, [r["median_s"] * 1e3 for r in fig8], "o-", label="median step time")
    ax.plot(bs, [r["p90_s"] * 1e3 for r in fig8], "s--", label="p90 step time")
    ax.set_xlabel("backup workers b (m = 8 - b of 8 replicas)")
    ax.set_ylabel("step time (ms)")
    ax.set_xticks(bs)
    ax2 = ax.twinx()
    ax.plot(bs, [r["mean_s"] * 1e3 for r in fig8], "d-.", label="mean step time")
    ax2.plot(bs, [r["normalized_speedup"] for r in fig8], "^-", color="C2",
             label="normalized speedup (median)")
    ax2.plot(bs, [r["throughput_ratio"] for r in fig8], "v-", color="C4",
             label="gradients/s relative to b=0 (mean)")
    ax2.set_ylabel("relative to b = 0")
    if chosen_m is not None:
        ax.axvline(8 - chosen_m, color="C3", linestyle=":",
                   label="adaptive policy: b = %d" % (8 - chosen_m))
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.set_title("Figure 8 in miniature: 8 replicas (threads) on one PS task")
    fig.legend(h1 + h2, l1 + l2, fontsize=8, loc="lower center", ncol=3)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    fig.savefig(os.path.join(out_dir, "sync_replicas_fig8.png"), dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the figures to this JSON file")
    parser.add_argument("--figures", default=os.path.join(HERE, "figures"))
    args = parser.parse_args()
    started = time.perf_counter()

    fig4 = [figure4_scheme("async", 1), figure4_scheme("sync", 4),
            figure4_scheme("sync", 3)]
    print("Figure 4 in miniature (1 PS + 4 worker tasks, worker 3 straggles, %.0f s each)"
          % WALL_S)
    print("%-22s %8s %10s %10s %9s  %s" % ("scheme", "steps", "steps/s", "grads/s",
                                           "loss", "runs per replica"))
    for r, name in zip(fig4, ("async", "sync m=n=4", "sync m=3 of 4 (backup)")):
        print("%-22s %8d %10.2f %10.2f %9.4f  %s" % (name, r["global_steps"],
                                                    r["steps_per_s"], r["grads_per_s"],
                                                    r["loss"], r["replica_runs"]))

    fig8 = [figure8_config(b) for b in range(5)]
    t0, mean0 = fig8[0]["median_s"], fig8[0]["mean_s"]
    for r in fig8:
        r["speedup"] = t0 / r["median_s"]
        r["normalized_speedup"] = r["speedup"] * r["m"] / 8
        r["throughput_ratio"] = (r["m"] / r["mean_s"]) / (8 / mean0)
    policy = BackupWorkerPolicy(8)
    _, _, _, _, a_steps, a_ids, a_secs = fig8[0].pop("status")
    policy.record_arrivals(a_steps, a_ids, a_secs)
    for r in fig8[1:]:
        r.pop("status")
    measured_m = policy.choose()
    synthetic_m, _ = synthetic_policy_choice()
    print()
    print("Figure 8 in miniature (8 replicas as threads, one PS task, %d steps each)" % STEPS)
    print("%3s %3s %10s %8s %8s %8s %11s %11s" % (
        "b", "m", "median ms", "mean ms", "p90 ms", "speedup", "normalized", "grads/s rel"))
    for r in fig8:
        print("%3d %3d %10.1f %8.1f %8.1f %8.3f %11.3f %11.3f" % (
            r["b"], r["m"], r["median_s"] * 1e3, r["mean_s"] * 1e3, r["p90_s"] * 1e3,
            r["speedup"], r["normalized_speedup"], r["throughput_ratio"]))
    best = max(fig8, key=lambda r: r["normalized_speedup"])
    best_thr = max(fig8, key=lambda r: r["throughput_ratio"])
    print("best normalized speedup (median, paper's measure): b = %d; most gradients/s "
          "(mean step time, the policy's objective): b = %d" % (best["b"], best_thr["b"]))
    print("adaptive policy (arrivals measured at b = 0, %d rounds): m = %s (b = %s); "
          "from the injected times alone: m = %s"
          % (policy.num_rounds, measured_m, None if measured_m is None else 8 - measured_m,
             synthetic_m))
    plot(fig4, fig8, measured_m, args.figures)
    print("plots: %s/sync_replicas_fig4.png, sync_replicas_fig8.png; total %.0f s"
          % (args.figures, time.perf_counter() - started))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(figure4=fig4, figure8=fig8, adaptive_m=measured_m,
                           adaptive_rounds=policy.num_rounds, synthetic_m=synthetic_m),
                      f, indent=1)


if __name__ == "__main__":
    main()
    os._exit(0)  # client threads blocked in closed sessions must not hold the exit
