"""tensorweave.client.timeline (TF1's tensorflow.python.client.timeline): the Chrome
trace of traced steps, checked against the Trace Event Format's rules event by event,
and loaded into Perfetto's trace processor when the `perfetto` package and its
trace_processor binary are available."""
import collections
import json

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.client import timeline

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def check_chrome_trace(text: str) -> dict:
    """Checks `text` against the Trace Event Format (the JSON Object Format): the
    fields each phase requires, their types, flow pairs, and that every flow end binds
    to a complete event on its thread. Returns the parsed trace."""
    trace = json.loads(text)
    assert set(trace) <= {"traceEvents", "displayTimeUnit", "otherData"}
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    slices = collections.defaultdict(list)
    flows = collections.defaultdict(dict)
    for e in events:
        ph = e["ph"]
        assert ph in ("X", "M", "C", "s", "t"), e
        assert isinstance(e["name"], str) and e["name"]
        assert type(e["pid"]) is int and type(e["tid"]) is int
        if ph == "M":
            assert e["name"] in ("process_name", "thread_name", "process_sort_index",
                                 "thread_sort_index")
            assert isinstance(e["args"], dict) and e["args"]
            continue
        assert type(e["ts"]) in (int, float) and e["ts"] >= 0
        if ph == "X":
            assert type(e["dur"]) in (int, float) and e["dur"] >= 0
            assert isinstance(e["args"], dict)
            slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
        elif ph == "C":
            assert e["args"] and all(type(v) in (int, float) for v in e["args"].values())
        else:
            assert e["id"] not in flows[ph], "flow id used twice"
            flows[ph][e["id"]] = e
    assert set(flows["s"]) == set(flows["t"])
    for ph in ("s", "t"):
        for e in flows[ph].values():  # binds to the enclosing slice on its thread
            assert any(a <= e["ts"] <= b for a, b in slices[(e["pid"], e["tid"])]), e
    return trace


def traced_run(sess, fetch, feeds):
    md = tf.RunMetadata()
    sess.run(fetch, feeds, options=FULL, run_metadata=md)
    return md


def two_device_step():
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:1"):
        y = tf.multiply(x, 2.0, name="y")
    with tf.device("/cpu:0"):
        z = tf.add(y, 1.0, name="z")
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        return traced_run(sess, z, {x: np.ones(3, np.float32)})


def test_lanes_events_and_args(graph):
    md = two_device_step()
    trace = check_chrome_trace(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
    events = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(procs.values()) == [CPU0, CPU1]
    threads = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    assert {e["pid"] for e in threads} == set(procs)
    ops = [e for e in events if e["ph"] == "X"]
    stats = [(d.device, n) for d in md.step_stats.dev_stats for n in d.node_stats]
    assert len(ops) == len(stats)
    assert sorted((procs[e["pid"]], e["args"]["name"]) for e in ops) == \
        sorted((d, n.node_name) for d, n in stats)
    y = next(e for e in ops if e["args"]["name"] == "y")
    assert (procs[y["pid"]], y["name"], y["args"]["op"]) == (CPU1, "Mul", "Mul")
    assert (y["args"]["input0"], y["args"]["input1"]) == ("x", "y/y")
    assert y["args"]["output_bytes"] == 12
    by_name = {n.node_name: n for _, n in stats}
    assert y["ts"] == by_name["y"].all_start_micros
    assert y["dur"] == by_name["y"].all_end_rel_micros


def test_send_recv_flow_arrow_crosses_devices(graph):
    md = two_device_step()
    events = check_chrome_trace(timeline.Timeline(md.step_stats)
                                .generate_chrome_trace_format())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    starts = [e for e in events if e["ph"] == "s"]
    ends = {e["id"]: e for e in events if e["ph"] == "t"}
    assert [e["name"] for e in starts] == ["y"]
    s, f = starts[0], ends[starts[0]["id"]]
    assert (procs[s["pid"]], procs[f["pid"]]) == (CPU1, CPU0)
    send = next(e for e in events if e["ph"] == "X" and e["name"] == "_Send")
    recv = next(e for e in events if e["ph"] == "X" and e["name"] == "_Recv")
    # TF's times: the producer's end, the consumer's start
    assert (s["pid"], s["tid"], s["ts"]) == (send["pid"], send["tid"],
                                             send["ts"] + send["dur"])
    assert (f["pid"], f["tid"], f["ts"]) == (recv["pid"], recv["tid"], recv["ts"])
    no_flow = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_dataflow=False, op_time="all"))["traceEvents"]
    assert not [e for e in no_flow if e["ph"] in "st"]
    with pytest.raises(ValueError, match="op_time must be"):
        timeline.Timeline(md.step_stats).generate_chrome_trace_format(op_time="cpu")


def test_fused_loop_draws_arrows_for_inputs_from_other_devices(graph, monkeypatch):
    monkeypatch.delenv("TW_EXECUTOR", raising=False)  # (forcing the tagged one keeps parts)
    x = tf.placeholder(tf.float32, [2], name="x")

    def body(i, v):
        with tf.device("/cpu:1"):
            v = tf.multiply(v, 2.0, name="dbl")
        with tf.device("/cpu:0"):
            v = tf.add(v, 1.0, name="inc")
        return i + 1, v
    _, v = tf.while_loop(lambda i, v: i < 2, body, [tf.constant(0), x])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        md = traced_run(sess, v, {x: np.zeros(2, np.float32)})
        assert {p.fused for p in sess._plans.values()} == {True}
    events = check_chrome_trace(timeline.Timeline(md.step_stats)
                                .generate_chrome_trace_format())["traceEvents"]
    inc = [e for e in events if e["ph"] == "X" and e["args"]["name"] == "while/inc"]
    assert sorted(e["args"]["iteration"] for e in inc) == [0, 1]
    arrows = [e for e in events if e["ph"] == "s" and e["name"] == "while/dbl"]
    assert len(arrows) == 2  # one per iteration, CPU:1 -> CPU:0


def test_arrows_follow_tfs_rules_across_threads_of_one_device():
    """TF draws an arrow per input made on another thread (from the producer's end to
    the consumer's start), none within one thread or for a control input: the events
    TF 2.21's Timeline gives for these step stats, recorded."""
    from tensorboard.compat.proto import step_stats_pb2
    ss = step_stats_pb2.StepStats()
    dev = ss.dev_stats.add(device=CPU0)
    for name, label, start, dur, thread in [("a", "a = Const()", 100, 10, 1),
                                            ("b", "b = Neg(a)", 112, 8, 1),
                                            ("c", "c = Square(a, ^b)", 115, 15, 2),
                                            ("d", "d = AddV2(b, c)", 131, 4, 1)]:
        dev.node_stats.add(node_name=name, all_start_micros=start, all_end_rel_micros=dur,
                           timeline_label=label, thread_id=thread).output.add(slot=0)
    events = check_chrome_trace(timeline.Timeline(ss).generate_chrome_trace_format())
    flows = sorted((e["ph"], e["name"], e["ts"], e["tid"])
                   for e in events["traceEvents"] if e["ph"] in "st")
    assert flows == [("s", "a", 110, 0), ("s", "c", 130, 1), ("t", "a", 115, 1),
                     ("t", "c", 131, 0)]


def test_memory_counters(graph):
    md = two_device_step()
    events = check_chrome_trace(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_memory=True))["traceEvents"]
    counters = [e for e in events if e["ph"] == "C"]
    want = sorted(n.memory[0].allocator_bytes_in_use for d in md.step_stats.dev_stats
                  for n in d.node_stats)
    assert sorted(e["args"]["bytes_in_use"] for e in counters) == want
    assert {e["name"] for e in counters} == {"Memory cpu"}
    plain = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
    assert not [e for e in plain["traceEvents"] if e["ph"] == "C"]


def test_tf1_module_path():
    from tensorweave.python.client import timeline as tl
    import tensorweave.python.client.timeline as tl2
    assert tl is tl2 is timeline
    assert tf.python.client.timeline.Timeline is timeline.Timeline


def test_tensorflow_step_stats_protos_work_too():
    from tensorboard.compat.proto import step_stats_pb2
    ss = step_stats_pb2.StepStats()
    dev = ss.dev_stats.add(device=CPU0)
    dev.thread_names[7] = "main"
    ns = dev.node_stats.add(node_name="a", all_start_micros=100, all_end_rel_micros=5,
                            timeline_label="a = Const()", thread_id=7)
    ns.memory.add(allocator_name="cpu", allocator_bytes_in_use=64)
    trace = check_chrome_trace(timeline.Timeline(ss).generate_chrome_trace_format(
        show_memory=True))
    kinds = collections.Counter(e["ph"] for e in trace["traceEvents"])
    assert (kinds["X"], kinds["C"]) == (1, 1)
    assert {e["args"]["name"] for e in trace["traceEvents"]
            if e["name"] == "thread_name"} == {"main"}


def test_parse_label():
    assert timeline.parse_label("a/b = MatMul(x:0, w:0)") == ("a/b", "MatMul",
                                                              ["x:0", "w:0"])
    assert timeline.parse_label("c = Const()") == ("c", "Const", [])
    assert timeline.parse_label("r = _Recv(y:0 @/job:w/device:CPU:0)") == (
        "r", "_Recv", ["y:0 @/job:w/device:CPU:0"])


def _trace_processor(path):
    """A TraceProcessor on `path`, or a skip when perfetto or its binary is missing
    (the package downloads trace_processor_shell on first use; offline that fails)."""
    tp_mod = pytest.importorskip("perfetto.trace_processor")
    try:
        return tp_mod.TraceProcessor(trace=str(path))
    except Exception as e:  # noqa: BLE001 -- no binary: nothing to check against
        pytest.skip("Perfetto's trace_processor is unavailable: %s" % e)


def test_perfetto_loads_the_trace(graph, tmp_path):
    md = two_device_step()
    path = tmp_path / "trace.json"
    path.write_text(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_memory=True))
    tp = _trace_processor(path)
    try:
        rows = list(tp.query("SELECT name, dur FROM slice"))
        names = collections.Counter(r.name for r in rows)
        want = collections.Counter(timeline.parse_label(n.timeline_label)[1]
                                   for d in md.step_stats.dev_stats for n in d.node_stats)
        assert names == want
        assert sorted(r.dur for r in rows) == sorted(
            n.all_end_rel_micros * 1000 for d in md.step_stats.dev_stats
            for n in d.node_stats)
        procs = {r.name for r in tp.query("SELECT name FROM process") if r.name}
        assert {CPU0, CPU1} <= procs
        assert len(list(tp.query("SELECT * FROM flow"))) == 1
    finally:
        tp.close()
