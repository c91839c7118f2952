"""Finds the op types whose CPU kernel body runs on CuPy arrays; writes the SURVEYED set
of src/tensorweave/framework/gpu_kernels.py. Needs CuPy and a GPU.

    python tools/survey_gpu_kernels.py [--write] [--workers N] [--budget SECONDS]

The cases are those of the numeric gradient registry (tests/ops/test_gradient_registry.py):
each builds one op and its gradient, in float32 (complex64 or float64 for ops without
float32). For every op type in a case's graph, the graph is built again with ops of that
type alone pinned to /device:GPU:0 and every other op on the CPU, run, and compared with
a CPU-only run (float tolerance 1e-4 relative; integers exactly). An op type is listed
when it passed in every case it appears in; the report names each failure's first error.
While surveying, every op type is given a GPU kernel, so that the pinning is possible.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import importlib.util
import json
import multiprocessing
import os
import re
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE_MODULE = os.path.join(ROOT, "src", "tensorweave", "framework", "gpu_kernels.py")
_SKIP = {"Placeholder", "Const", "NoOp"}


def _cases_module():
    path = os.path.join(ROOT, "tests", "ops", "test_gradient_registry.py")
    spec = importlib.util.spec_from_file_location("gradient_registry_cases", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _dtype_for(cases, op_type, tf):
    dtypes = cases._dtypes(op_type, cases.TABLE[op_type])
    for d in (tf.float32, tf.complex64, tf.float64):
        if d in dtypes:
            return d
    return None


def _build(cases, tf, op_type, dtype, pin):
    """(graph, feeds, fetches, op types) of one case; ops of type `pin` on GPU:0."""
    row = cases.TABLE[op_type]
    g = tf.Graph()
    with g.as_default():
        place = None if pin is None else \
            (lambda op: "/device:GPU:0" if op.type == pin else "/device:CPU:0")
        with tf.device(place) if place else contextlib.nullcontext():
            values = cases._values(op_type, row, dtype)
            xs, y = cases._build(op_type, row, dtype, values)
            grads = [gr for gr in tf.gradients(y, xs) if gr is not None]
        fetches = [y]
        for gr in grads:
            f = cases._fetchable(gr)
            fetches.extend(f if isinstance(f, list) else [f])
        feeds = dict(zip(xs, values))
        types = {op.type for op in g.get_operations()}
    return g, feeds, fetches, types


def _run(tf, g, feeds, fetches, gpu: bool):
    config = tf.ConfigProto(device_count={"GPU": 1 if gpu else 0})
    with tf.Session(graph=g, config=config) as sess:
        sess.run(tf.global_variables_initializer()) if g.get_collection(
            tf.GraphKeys.GLOBAL_VARIABLES) else None
        return sess.run(fetches, feeds)


def _where(exc) -> str:
    """ " at file:line" of the innermost frame in tensorweave's ops that raised `exc`
    (or its cause)."""
    import traceback
    e = exc.__cause__ or exc
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if os.sep + "ops" + os.sep in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return " at %s:%d" % (os.path.relpath(f.filename, ROOT), f.lineno)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True))
    return bool(np.array_equal(a, b))


def survey_rows(op_types, deadline):
    """{op type: [passes, failures, first error]} over the cases `op_types`."""
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import tensorweave as tf
    from tensorweave.framework import gpu_kernels, registry
    gpu_kernels.GPU_KERNEL_OPS = frozenset(registry.registered_ops())
    registry._MIRRORED.clear()
    cases = _cases_module()
    out = {}
    for op_type in op_types:
        if time.time() > deadline:
            break
        row = cases.TABLE[op_type]
        dtype = _dtype_for(cases, op_type, tf)
        if dtype is None or row.variable:
            continue
        try:
            g, feeds, fetches, types = _build(cases, tf, op_type, dtype, None)
            ref = _run(tf, g, feeds, fetches, gpu=False)
        except Exception:
            continue  # the CPU run is the gradient registry test's business
        for t in sorted(types - _SKIP):
            r = out.setdefault(t, [0, 0, ""])
            try:
                g, feeds, fetches, _ = _build(cases, tf, op_type, dtype, t)
                got = _run(tf, g, feeds, fetches, gpu=True)
                ok = all(_same(a, b) for a, b in zip(got, ref))
                err = "" if ok else "results differ from the CPU's"
            except Exception as e:  # noqa: BLE001 -- the survey records every failure
                ok, err = False, "%s: %s%s" % (type(e).__name__,
                                               str(e).splitlines()[0][:160], _where(e))
            if ok:
                r[0] += 1
            else:
                r[1] += 1
                r[2] = r[2] or "%s (case %s)" % (err, op_type)
    return out


def _write(surveyed) -> None:
    text = open(TABLE_MODULE).read()
    body = "".join("    %r,\n" % t for t in sorted(surveyed))
    new = "SURVEYED = frozenset({\n%s})\n" % body if surveyed else "SURVEYED = frozenset()\n"
    text = re.sub(r"SURVEYED = frozenset\((?:\{.*?\})?\)\n", lambda m: new, text,
                  count=1, flags=re.S)
    with open(TABLE_MODULE, "w") as f:
        f.write(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite SURVEYED in gpu_kernels.py")
    ap.add_argument("--workers", type=int, default=max(1, min(8, os.cpu_count() or 1)))
    ap.add_argument("--budget", type=float, default=300.0, help="seconds (stops early)")
    ap.add_argument("--report", help="a JSON file for the per-op results")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from tensorweave.runtime import gpu
    if gpu.gpu_count() == 0:
        print("no GPU (CuPy missing, or no device): nothing surveyed")
        return 1
    names = sorted(_cases_module().TABLE)
    chunks = [names[i::args.workers] for i in range(args.workers)]
    deadline = time.time() + args.budget
    results = {}
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=ctx) as ex:
        for part in ex.map(survey_rows, chunks, [deadline] * len(chunks)):
            for t, (ok, bad, err) in part.items():
                r = results.setdefault(t, [0, 0, ""])
                r[0] += ok
                r[1] += bad
                r[2] = r[2] or err
    surveyed = sorted(t for t, (ok, bad, _) in results.items() if ok and not bad)
    failed = sorted((t, r) for t, r in results.items() if r[1])
    print("%d op types run on the GPU; %d do not" % (len(surveyed), len(failed)))
    for t, (ok, bad, err) in failed:
        print("  %-36s %d of %d cases failed: %s" % (t, bad, ok + bad, err))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    if args.write:
        _write(surveyed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
