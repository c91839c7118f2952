"""Share of `tensorflow.compat.v1`'s public names that tensorweave has (issue 13).

Two steps, since TensorFlow and tensorweave live in different environments:

    TF_PYTHON benchmarks/api_coverage.py dump benchmarks/out/tf_v1_names.json
    .venv/bin/python benchmarks/api_coverage.py check benchmarks/out/tf_v1_names.json \
        benchmarks/out/extra_api_coverage.json

`dump` lists the public non-module names of tf.compat.v1's top level and of the
namespaces below (NAMESPACES); `check` looks each one up in tensorweave (a name counts
when the attribute exists; tf.newaxis is None in both) and writes the share per namespace, the
names missing, and for each missing name the reason it is left out (REASONS: the first
matching rule): the figures go to the extra JSON that benchmarks/results.py prints into
RESULTS.md, the list of missing names to benchmarks/API_COVERAGE.md.
"""
from __future__ import annotations

import fnmatch
import json
import os
import sys
from typing import Dict, List

NAMESPACES = (
    "", "app", "app.flags", "audio", "autograph", "autograph.experimental", "bitwise",
    "config", "config.experimental", "config.optimizer", "config.threading", "data",
    "data.experimental", "data.experimental.service", "debugging", "debugging.experimental",
    "distribute", "distribute.cluster_resolver", "distribute.experimental", "distributions",
    "dtypes", "dtypes.experimental", "errors", "experimental", "experimental.extension_type",
    "feature_column", "gfile", "graph_util", "image", "initializers", "io", "io.gfile",
    "linalg", "linalg.experimental", "lite", "lite.constants", "lite.experimental",
    "lite.experimental.authoring", "logging", "lookup", "lookup.experimental", "losses",
    "manip", "math", "math.special", "metrics", "mixed_precision",
    "mixed_precision.experimental", "mlir", "mlir.experimental", "nest", "nn",
    "nn.experimental", "profiler", "python_io", "quantization", "quantization.experimental",
    "queue", "ragged", "random", "random.experimental", "resource_loader", "saved_model",
    "saved_model.builder", "saved_model.constants", "saved_model.experimental",
    "saved_model.loader", "saved_model.main_op", "saved_model.signature_constants",
    "saved_model.signature_def_utils", "saved_model.tag_constants", "saved_model.utils",
    "sets", "signal", "sparse", "spectral", "strings", "summary", "sysconfig", "test",
    "test.experimental", "tpu", "tpu.experimental", "tpu.experimental.embedding", "train",
    "train.experimental", "train.queue_runner", "types", "types.experimental", "user_ops",
    "version", "xla", "xla.experimental")

# (namespace pattern, name pattern, reason): why a missing name is left out. Names that
# match no rule are reported as "not yet implemented".
_PROTO_CLASSES = ("protocol buffer classes: ClusterSpec.as_cluster_def() returns TF's "
                  "ClusterDef message; exporting the classes would load protobuf when "
                  "tensorweave is imported")
_RAW_OPS = ("raw ops of TF 2.x exported at the top level (Conv, CheckPinned, "
            "RaggedFillEmptyRows); no TF1 program has them")
_SHARDING = "tf.distribute input sharding (TF2)"
REASONS = [
    ("*", "*_v2", "TF2-only variant kept in compat.v1; TF1 programs use the v1 name"),
    ("", "enable_*", "switches TF2 behaviour on; tensorweave is TF1 graph mode only"),
    ("", "disable_*", "switches TF2 behaviour off; tensorweave is TF1 graph mode only"),
    ("", "*eager*", "eager execution: tensorweave is graph mode only"),
    ("", "Module", "tf.Module is a TF2 object-based API"),
    ("", "function", "tf.function traces Python into graphs (TF2 API)"),
    ("", "ragged_fill_empty_rows*", _RAW_OPS),
    ("", "GradientTape", "eager execution: tensorweave is graph mode only"),
    ("", "wrap_function", "TF2 functions (tf.function) are not implemented"),
    ("*", "*fftnd", "N-d FFTs TF added after 2.x; the 1-3-D FFTs are there"),
    ("*", "approx_*", "TPU-oriented approximate top-k"),
    ("random*", "Algorithm", "TF2 eager random generators"),
    ("random*", "*Generator*", "TF2 eager random generators"),
    ("random*", "*_generator", "TF2 eager random generators"),
    ("summary", "*", "TF2 summary writer ops"),
    ("train", "ClusterDef", _PROTO_CLASSES),
    ("train", "JobDef", _PROTO_CLASSES),
    ("train", "ServerDef", _PROTO_CLASSES),
    ("train.experimental", "*", "object-based checkpoint sharding and Python state (TF2 "
     "checkpoints)"),
    ("*", "*jxl", "the JPEG XL codec TF added in 2.x is not implemented"),
    ("", "load_*_library", "loads compiled TensorFlow kernels; no C++ ABI here"),
    ("", "load_library", "loads compiled TensorFlow kernels; no C++ ABI here"),
    ("", "*quantiz*", "quantized ops are not implemented"),
    ("", "dequantize", "quantized ops are not implemented"),
    ("quantization", "*", "quantized ops are not implemented"),
    ("quantization.experimental", "*", "TF2's SavedModel quantizer"),
    ("strings", "*unicode*", "Unicode scripts and ICU-backed ops are not implemented"),
    ("data.experimental", "*_variant", "datasets as variant tensors passed to TF2 "
     "functions"),
    ("data.experimental", "SHARD_HINT", _SHARDING),
    ("data.experimental*", "service", "the tf.data service (TF2)"),
    ("data.experimental.service", "*", "the tf.data service (TF2)"),
    ("data.experimental", "distributed_save", "the tf.data service (TF2)"),
    ("data.experimental", "snapshot", "dataset snapshots on disk (TF2)"),
    ("data.experimental", "enable_debug_mode", "TF2's eager tf.data debug mode"),
    ("data.experimental", "get_model_proto", "TF2's tf.data autotuning model"),
    ("data", "NumpyIterator", "iterates a dataset eagerly (TF2)"),
    ("feature_column", "sequence_*", "sequence columns are read by Keras' SequenceFeatures "
     "(TF2) or tf.contrib's sequence_input_layer, neither of which TF1's core has"),
    ("saved_model", "save", "object-based SavedModels of tf.Module/tf.function (TF2 API)"),
    ("saved_model", "load_v2", "object-based SavedModels of tf.Module/tf.function (TF2 API)"),
    ("saved_model", "Asset", "object-based SavedModels of tf.Module/tf.function (TF2 API)"),
    ("saved_model", "SaveOptions", "object-based SavedModels of tf.Module/tf.function "
     "(TF2 API)"),
    ("saved_model.experimental", "*", "object-based SavedModels of tf.Module/tf.function "
     "(TF2 API)"),
    ("", "conv", _RAW_OPS), ("", "check_pinned", _RAW_OPS),
    ("autograph*", "*", "AutoGraph converts Python control flow for tf.function (TF2 API)"),
    ("config", "experimental_connect_to_*", "connects an eager context to remote TF2 workers"),
    ("config", "*functions*eagerly", "tf.function (TF2 API)"),
    ("config.experimental", "*mlir_bridge", "switches TF's MLIR-based XLA bridge; there is "
     "no XLA compiler here"),
    ("config.experimental", "ClusterDeviceFilters", "device filters of TF2's eager cluster "
     "connection"),
    ("debugging", "*traceback_filtering*", "TF2's traceback filtering; tensorweave's errors "
     "name the user's own line instead"),
    ("debugging.experimental", "*dump_debug_info", "tfdbg v2's dump format (TF2 debugger)"),
    ("distribute", "RunOptions", "options of strategy.run for TPUs and dynamic batch sizes"),
    ("distribute.cluster_resolver", "*", "resolvers that query GCE, Kubernetes, Slurm or "
     "TPU services; the TF_CONFIG, Simple and Union resolvers are there"),
    ("distribute.experimental", "*", "multi-worker, central-storage and TPU strategies are "
     "not implemented (clusters train through replica_device_setter and "
     "SyncReplicasOptimizer)"),
    ("dtypes.experimental", "*", "the 8-, 4- and 2-bit types TF added in 2.x"),
    ("errors", "raise_exception_on_not_ok_status", "wraps TF's C API status objects; there "
     "are none here"),
    ("experimental*", "*", "TF2 extension types, API dispatch, async eager execution and "
     "new dtypes"),
    ("lite*", "*", "TensorFlow Lite conversion and its interpreter (a mobile runtime) are "
     "out of scope"),
    ("mlir*", "*", "MLIR conversion passes of TF's compiler"),
    ("sysconfig", "*", "build flags of TF's C++ library for compiling custom ops; there "
     "is no C++ library here"),
    ("test.experimental", "sync_devices", "synchronizes TF2's eager devices"),
    ("test", "with_eager_op_as_function", "eager execution: tensorweave is graph mode only"),
    ("tpu*", "*", "TPU-specific (TPUEstimator runs with use_tpu=False)"),
    ("types.experimental", "*", "TF2 type annotations"),
    ("user_ops", "my_fact", "TF's example custom op, a C++ kernel"),
    ("*", "*", "not yet implemented"),
]


def dump(path: str) -> None:
    """Writes namespace -> sorted public names of tf.compat.v1 (run with TensorFlow)."""
    import types

    import tensorflow.compat.v1 as tf
    names: Dict[str, List[str]] = {}
    for ns in NAMESPACES:
        mod = tf
        for part in filter(None, ns.split(".")):
            mod = getattr(mod, part)
        names[ns] = sorted(n for n in dir(mod) if not n.startswith("_") and
                           not isinstance(getattr(mod, n, None), types.ModuleType))
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__ if hasattr(tf, "__version__") else "",
                   "names": names}, f, indent=1)


def _reason(ns: str, name: str) -> str:
    for ns_pat, name_pat, why in REASONS:
        if fnmatch.fnmatchcase(ns, ns_pat) and fnmatch.fnmatchcase(name, name_pat):
            return why
    return "not yet implemented"


def check(names_path: str, out_path: str) -> dict:
    """Looks every dumped name up in tensorweave; writes and returns the figures."""
    import tensorweave as tw
    with open(names_path) as f:
        listed = json.load(f)["names"]
    per_ns, missing, have_total, total = {}, {}, 0, 0
    for ns, names in listed.items():
        mod = tw
        for part in filter(None, ns.split(".")):
            mod = getattr(mod, part, None)
        have = [n for n in names if mod is not None and hasattr(mod, n)]
        gone = sorted(set(names) - set(have))
        per_ns[ns or "(top level)"] = {"have": len(have), "total": len(names)}
        missing[ns or "(top level)"] = {n: _reason(ns, n) for n in gone}
        have_total += len(have)
        total += len(names)
    result = {"share": have_total / max(total, 1), "have": have_total, "total": total,
              "per_namespace": per_ns, "missing": missing}
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from results import write_extra
    figures = {"names present (target >= 85%)": "%.1f%% (%d of %d)" % (
        100 * result["share"], have_total, total)}
    for ns, c in per_ns.items():
        figures["tf.%s" % ns if ns != "(top level)" else "top level"] = "%d of %d" % (
            c["have"], c["total"])
    write_extra(out_path, "tf.compat.v1 names in tensorweave (issue 13)",
                "benchmarks/api_coverage.py dump|check (see its docstring); missing names "
                "and why: benchmarks/API_COVERAGE.md", figures)
    _write_missing(result)
    return result


def _write_missing(result: dict) -> None:
    lines = ["# tf.compat.v1 names tensorweave does not have", "",
             "Written by `benchmarks/api_coverage.py check`: %d of %d names present (%.1f%%)."
             % (result["have"], result["total"], 100 * result["share"]), "",
             "Grouped by the reason they are left out.", ""]
    for ns, names in result["missing"].items():
        if not names:
            continue
        lines += ["## %s" % ("tf" if ns == "(top level)" else "tf." + ns), ""]
        by_reason: Dict[str, List[str]] = {}
        for n, why in names.items():
            by_reason.setdefault(why, []).append(n)
        for why, ns_names in sorted(by_reason.items()):
            lines.append("- %s: %s" % (why, ", ".join("`%s`" % n for n in ns_names)))
        lines.append("")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "API_COVERAGE.md"), "w") as f:
        f.write("\n".join(lines))


def main(argv: List[str]) -> None:
    if len(argv) >= 3 and argv[1] == "dump":
        dump(argv[2])
    elif len(argv) >= 4 and argv[1] == "check":
        check(argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
