"""tf.test.Benchmark: timing ops and TF's BenchmarkEntries reports."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf


class _MatmulBenchmark(tf.test.Benchmark):
    def benchmark_matmul(self):
        with tf.Graph().as_default(), tf.Session() as sess:
            a = tf.constant(np.ones((8, 8), np.float32))
            return self.run_op_benchmark(sess, tf.matmul(a, a), burn_iters=1, min_iters=4,
                                         name="mm", mbs=2, store_trace=True)

    def benchmark_report(self):
        self.report_benchmark(iters=3, wall_time=0.5, extras={"a": 1, "b": "x"},
                              metrics=[{"name": "acc", "value": 0.9, "min_value": 0.5}])


def test_run_op_benchmark_times_the_op_and_reports(capsys):
    values = _MatmulBenchmark().benchmark_matmul()
    assert values["iters"] == 4 and values["name"] == "mm" and values["wall_time"] > 0
    assert values["throughput"] == pytest.approx(2 / values["wall_time"])
    extras = values["extras"]
    assert extras["wall_time_mean"] > 0 and extras["wall_time_stdev"] >= 0
    trace = json.loads(extras["full_trace_chrome_format"])
    assert any(e.get("args", {}).get("op") == "MatMul" for e in trace["traceEvents"])
    printed = capsys.readouterr().out
    assert 'name: "_MatmulBenchmark.mm"' in printed and "iters: 4" in printed
    assert "full_trace_chrome_format" not in printed  # returned, never reported


def test_report_is_benchmark_entries_text_or_file(tmp_path, monkeypatch, capsys):
    _MatmulBenchmark().benchmark_report()
    printed = capsys.readouterr().out
    assert 'name: "_MatmulBenchmark.benchmark_report"' in printed
    assert 'string_value: "x"' in printed and "min_value {\n      value: 0.5" in printed
    monkeypatch.setenv("TEST_REPORT_FILE_PREFIX", str(tmp_path / "bench_"))
    _MatmulBenchmark().benchmark_report()
    path = tmp_path / "bench__MatmulBenchmark.benchmark_report"
    from tensorweave.test._benchmark import _entries_class
    entries = _entries_class().FromString(path.read_bytes())
    entry = entries.entry[0]
    assert (entry.iters, entry.wall_time, entry.extras["a"].double_value) == (3, 0.5, 1.0)
    assert entry.metrics[0].name == "acc" and entry.metrics[0].min_value.value == 0.5
    with pytest.raises(IOError, match="File already exists"):
        _MatmulBenchmark().benchmark_report()
    with pytest.raises(TypeError, match="extras must be a dict"):
        _MatmulBenchmark().report_benchmark(extras=[1], name="bad")
    with pytest.raises(TypeError, match="'value' field"):
        _MatmulBenchmark().report_benchmark(metrics=[{"name": "m"}], name="bad2")


def test_report_outside_a_benchmark_method_needs_a_benchmark_on_the_stack():
    class Lone(tf.test.Benchmark):
        pass
    # called from this test function: the Benchmark frame is Lone's own method
    assert Lone()._get_name("x") == "Lone.x"
    assert tf.test.Benchmark.is_abstract() and not Lone.is_abstract()


def test_benchmark_config_turns_the_dependency_optimizer_off():
    config = tf.test.benchmark_config()
    assert config.graph_options.rewrite_options.dependency_optimization == 2  # OFF
    with tf.Graph().as_default():
        x = tf.constant(2.0)
        with tf.control_dependencies([tf.no_op()]):
            y = tf.identity(x)
        with tf.Session(config=config) as sess:
            assert sess.run(y) == 2.0 and sess._opts["prune_noops"] is False


def test_main_runs_the_filtered_benchmarks(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import tensorweave as tf

        class Mine(tf.test.Benchmark):
            def benchmarkOne(self):
                self.report_benchmark(iters=1, wall_time=0.25)

            def benchmarkTwo(self):
                self.report_benchmark(iters=2, wall_time=0.5)

        if __name__ == "__main__":
            tf.test.main()
        """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, str(script), "--benchmark_filter=Two"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert 'name: "Mine.benchmarkTwo"' in out.stdout and "benchmarkOne" not in out.stdout
    bad = subprocess.run([sys.executable, str(script), "--benchmark_filter=Nope"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert bad.returncode != 0 and "No benchmarks matched the pattern" in bad.stderr
