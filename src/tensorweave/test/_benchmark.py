"""tf.test.Benchmark: timing an op in a session and reporting it as TF's BenchmarkEntries.

A subclass of Benchmark is registered when it is defined; `tf.test.main()` with
`--benchmark_filter=REGEX` runs the `benchmark*` methods of the registered classes whose
"module.Class.method" name matches (`all` runs every one) instead of the tests. A report
is printed as the BenchmarkEntries message in text form, or, when the environment names a
file prefix (TEST_REPORT_FILE_PREFIX, as TF's test reporter), written there serialized,
one file per entry.
"""
from __future__ import annotations

import math
import numbers
import os
import re
import time
from typing import Any, Dict, List, Optional

TEST_REPORTER_TEST_ENV = "TEST_REPORT_FILE_PREFIX"
_REGISTRY: List[type] = []


def _entries_class():
    """TF's tensorflow.BenchmarkEntries message (core/util/test_log.proto), built once."""
    global _ENTRIES
    if _ENTRIES is None:
        from google.protobuf import descriptor_pb2, wrappers_pb2
        from tensorweave.framework.proto_classes import default_pool_message_classes
        F = descriptor_pb2.FieldDescriptorProto
        f = descriptor_pb2.FileDescriptorProto(
            name="tensorweave/test_log_benchmark.proto", package="tensorflow",
            syntax="proto3", dependency=[wrappers_pb2.DESCRIPTOR.name])

        def message(name, fields, nested=()):
            m = f.message_type.add(name=name)
            for number, (fname, ftype, label, type_name) in enumerate(fields, 1):
                field = m.field.add(name=fname, number=number, type=ftype, label=label)
                if type_name:
                    field.type_name = type_name
            for n in nested:
                m.nested_type.add().CopyFrom(n)
            return m

        opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
        value = message("EntryValue", [("double_value", F.TYPE_DOUBLE, opt, None),
                                       ("string_value", F.TYPE_STRING, opt, None)])
        value.oneof_decl.add(name="kind")
        for field in value.field:
            field.oneof_index = 0
        message("MetricEntry", [
            ("name", F.TYPE_STRING, opt, None), ("value", F.TYPE_DOUBLE, opt, None),
            ("min_value", F.TYPE_MESSAGE, opt, ".google.protobuf.DoubleValue"),
            ("max_value", F.TYPE_MESSAGE, opt, ".google.protobuf.DoubleValue")])
        extras_entry = descriptor_pb2.DescriptorProto(name="ExtrasEntry")
        extras_entry.options.map_entry = True
        extras_entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
        extras_entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt,
                               type_name=".tensorflow.EntryValue")
        message("BenchmarkEntry", [
            ("name", F.TYPE_STRING, opt, None), ("iters", F.TYPE_INT64, opt, None),
            ("cpu_time", F.TYPE_DOUBLE, opt, None), ("wall_time", F.TYPE_DOUBLE, opt, None),
            ("throughput", F.TYPE_DOUBLE, opt, None),
            ("extras", F.TYPE_MESSAGE, rep, ".tensorflow.BenchmarkEntry.ExtrasEntry"),
            ("metrics", F.TYPE_MESSAGE, rep, ".tensorflow.MetricEntry")], [extras_entry])
        message("BenchmarkEntries", [
            ("entry", F.TYPE_MESSAGE, rep, ".tensorflow.BenchmarkEntry")])
        _ENTRIES = default_pool_message_classes(
            [f], ["tensorflow.BenchmarkEntries"])["tensorflow.BenchmarkEntries"]
    return _ENTRIES


_ENTRIES = None


def report(name: str, iters=None, cpu_time=None, wall_time=None, throughput=None,
           extras: Optional[Dict[str, Any]] = None, metrics: Optional[List[dict]] = None):
    """Builds one BenchmarkEntry and prints it, or writes it under TEST_REPORT_FILE_PREFIX.

    Raises:
      TypeError: extras is not a dict, metrics not a list of dicts with name and value.
      IOError: the report file exists already.
    """
    entries = _entries_class()()
    entry = entries.entry.add(name=name)
    for field, v in (("iters", iters), ("cpu_time", cpu_time), ("wall_time", wall_time),
                     ("throughput", throughput)):
        if v is not None:
            setattr(entry, field, v)
    if extras is not None:
        if not isinstance(extras, dict):
            raise TypeError("extras must be a dict")
        for k, v in extras.items():
            if isinstance(v, numbers.Number):
                entry.extras[k].double_value = v
            else:
                entry.extras[k].string_value = str(v)
    if metrics is not None:
        if not isinstance(metrics, list):
            raise TypeError("metrics must be a list")
        for metric in metrics:
            for key in ("name", "value"):
                if key not in metric:
                    raise TypeError("metric must has a '%s' field" % key)
            m = entry.metrics.add(name=metric["name"], value=metric["value"])
            if "min_value" in metric:
                m.min_value.value = metric["min_value"]
            if "max_value" in metric:
                m.max_value.value = metric["max_value"]
    prefix = os.environ.get(TEST_REPORTER_TEST_ENV)
    if prefix is None:
        print(str(entries))
        return
    from tensorweave.platform import gfile
    path = prefix + name.replace("/", "__")
    if gfile.Exists(path):
        raise IOError("File already exists: %s" % path)
    with gfile.GFile(path, "wb") as out:
        out.write(entries.SerializeToString())


class Benchmark:
    """Base class of TF benchmarks: subclasses are registered, and their `benchmark*`
    methods run under `tf.test.main()` with `--benchmark_filter=REGEX`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY.append(cls)

    @classmethod
    def is_abstract(cls) -> bool:
        return cls is Benchmark

    def _get_name(self, overwrite_name: Optional[str] = None) -> str:
        """"Class.method" of the outermost benchmark method on the stack (or the name
        given)."""
        import inspect
        name = None
        for frame in reversed(inspect.stack()):
            if isinstance(frame.frame.f_locals.get("self"), Benchmark):
                name = frame.function
                break
        if name is None:
            raise ValueError("Unable to determine calling Benchmark class.")
        return "%s.%s" % (type(self).__name__, overwrite_name or name)

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name: Optional[str] = None, metrics=None) -> None:
        """Reports one benchmark entry named "Class.method" (or "Class.name").

        Args:
          iters: iterations run.
          cpu_time, wall_time: median or mean times in seconds.
          throughput: MB/s.
          extras: dict of further values (numbers or strings).
          name: the entry's name after the class name, instead of the method's.
          metrics: list of dicts with name, value and optionally min_value/max_value.
        """
        report(self._get_name(name), iters=iters, cpu_time=cpu_time, wall_time=wall_time,
               throughput=throughput, extras=extras, metrics=metrics)

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters: int = 2,
                         min_iters: int = 10, store_trace: bool = False,
                         store_memory_usage: bool = True, name: Optional[str] = None,
                         extras: Optional[dict] = None, mbs: float = 0) -> dict:
        """Times `sess.run(op_or_tensor)` and reports the median wall time.

        Args:
          sess: the session.
          op_or_tensor: what to run.
          feed_dict: the feeds of every run.
          burn_iters: untimed runs first.
          min_iters: timed runs.
          store_trace: also return a traced run's Chrome trace
            (extras["full_trace_chrome_format"]).
          store_memory_usage: report each allocator's peak bytes of a traced run
            (extras "allocator_maximum_num_bytes_<allocator>").
          name: the entry's name after the class name.
          extras: further values to report.
          mbs: megabytes the op moves, for the throughput.

        Returns:
          The reported values (iters, wall_time, extras, name, throughput), extras also
          holding wall_time_mean and wall_time_stdev.
        """
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(min_iters):
            start = time.time()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.time() - start)
        extras = extras if extras is not None else {}
        unreported = {}
        if store_trace or store_memory_usage:
            from tensorweave.runtime.config import RunMetadata, RunOptions
            metadata = RunMetadata()
            sess.run(op_or_tensor, feed_dict=feed_dict,
                     options=RunOptions(trace_level=RunOptions.FULL_TRACE),
                     run_metadata=metadata)
            if store_trace:
                from tensorweave.client.timeline import Timeline
                unreported["full_trace_chrome_format"] = Timeline(
                    metadata.step_stats).generate_chrome_trace_format()
            if store_memory_usage:
                for allocator, peak in _allocator_maximums(metadata.step_stats).items():
                    extras["allocator_maximum_num_bytes_%s" % allocator] = peak
        median = _median(deltas)
        values = {"iters": min_iters, "wall_time": median, "extras": extras, "name": name,
                  "throughput": mbs / median if median > 0 else 0.0}
        self.report_benchmark(**values)
        mean = sum(deltas) / len(deltas) if deltas else -1
        stdev = math.sqrt(sum((d - mean) ** 2 for d in deltas) / (len(deltas) - 1)) \
            if len(deltas) > 1 else -1
        unreported.update(wall_time_mean=mean, wall_time_stdev=stdev)
        values["extras"].update(unreported)
        return values

    def evaluate(self, tensors):
        """The values of `tensors` in the default session."""
        from tensorweave.runtime.session import get_default_session
        sess = get_default_session()
        if sess is None:
            raise ValueError("evaluate needs a default session (use `with sess.as_default()`)")
        return sess.run(tensors)


def _median(x: List[float]) -> float:
    if not x:
        return -1
    s = sorted(x)
    return (s[len(s) // 2] + s[(len(s) - 1) // 2]) / 2.0


def _allocator_maximums(step_stats) -> Dict[str, int]:
    """{allocator name: the most bytes it held during the traced step}."""
    peaks: Dict[str, int] = {}
    for dev in step_stats.dev_stats:
        for node in dev.node_stats:
            for m in node.memory:
                peaks[m.allocator_name] = max(peaks.get(m.allocator_name, 0),
                                              int(m.allocator_bytes_in_use),
                                              int(getattr(m, "peak_bytes", 0) or 0))
    return peaks


def benchmark_config():
    """A ConfigProto with the dependency optimizer off, for benchmarks (TF's)."""
    from tensorweave.runtime.config import ConfigProto, RewriterConfig
    config = ConfigProto()
    config.graph_options.rewrite_options.dependency_optimization = RewriterConfig.OFF
    return config


def run_benchmarks(regex: str) -> None:
    """Runs the `benchmark*` methods whose "module.Class.method" matches `regex`.

    Raises:
      ValueError: nothing matched.
    """
    selected = []
    for cls in list(_REGISTRY):
        instance = None
        for attr in dir(cls):
            if not attr.startswith("benchmark") or not callable(getattr(cls, attr)):
                continue
            full = "%s.%s.%s" % (cls.__module__, cls.__name__, attr)
            if regex == "all" or re.search(regex, full):
                selected.append(full)
                instance = instance or cls()
                getattr(instance, attr)()
    if not selected:
        raise ValueError("No benchmarks matched the pattern: '{}'".format(regex))
