"""tensorweave.debug: watching tensors, dumping them, reading dumps back, filters."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.debug as twdbg
from tensorweave.framework import errors
from tensorweave.runtime import executor as _ex


@pytest.fixture(params=["structured", "tagged"])
def executor(request, monkeypatch):
    if request.param == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    return request.param


def _countdown_log(graph):
    """A loop adding log(x - i): x holds a 3, so iteration 3 takes log(0) = -inf."""
    x = tf.placeholder(tf.float32, [4], name="x")

    def body(i, acc):
        shifted = x - tf.cast(i, tf.float32)
        return i + 1, acc + tf.log(shifted)  # log
    _, total = tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.zeros([4])],
                             name="accumulate")
    return x, total


def test_watch_all_dumps_every_iteration_and_reopens(graph, tmp_path, executor):
    x, total = _countdown_log(graph)
    feed = np.array([9.0, 6.0, 7.0, 8.0], np.float32)
    with twdbg.watch(tf.Session(), dump_root=str(tmp_path)) as sess:
        out = sess.run(total, {x: feed})
        assert sess.step == 1 and sess.last_dump_dir == str(tmp_path / "run_0")
    np.testing.assert_allclose(out, sum(np.log(feed - i) for i in range(5)), rtol=1e-6)
    dump = twdbg.DebugDumpDir(str(tmp_path))
    assert dump.steps == [0] and dump.status(0) == "ok" and dump.error(0) is None
    logs = dump.watch_key_to_data("accumulate/Log:0:DebugIdentity")
    assert [d.iteration for d in logs] == [0, 1, 2, 3, 4]
    assert all(d.frame_name == "accumulate" and d.step == 0 for d in logs)
    for i, d in enumerate(logs):
        v = d.get_tensor()
        assert v.dtype == np.float32 and v.shape == (4,)
        np.testing.assert_allclose(v, np.log(feed - i), rtol=1e-6)
        assert d.node_name == "accumulate/Log" and d.output_slot == 0
        assert d.op_type == "Log" and d.watch_key == "accumulate/Log:0:DebugIdentity"
    assert dump.get_tensors("accumulate/Log", 0)[4].tolist() == logs[4].get_tensor().tolist()
    # the exit value is in the root frame
    exits = [d for d in dump.dumped_tensor_data if d.node_name.startswith("accumulate/Exit")]
    assert not exits or all(d.frame_name == "" for d in exits)
    order = [d.dump_index for d in dump.dumped_tensor_data]
    assert order == sorted(order) == list(range(dump.size))


def test_watch_by_tensor_name_op_and_regex(graph, tmp_path):
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.multiply(a, 2.0, name="b")
    c = tf.add(b, 1.0, name="c")
    d = tf.negative(c, name="d")
    e = tf.identity(d, name="e_out")
    with twdbg.watch(tf.Session(), tensors=[b, "c:0", "d"], regex=r"_out:",
                     dump_root=str(tmp_path)) as sess:
        sess.run(e, {a: [1.0, 2.0]})
    dump = twdbg.DebugDumpDir(str(tmp_path))
    assert sorted(dump.nodes()) == ["b", "c", "d", "e_out"]
    assert dump.get_tensors("d", 0)[0].tolist() == [-3.0, -5.0]
    with pytest.raises(ValueError, match="regex"):
        twdbg.watch(tf.Session(), regex="(")
    with pytest.raises(ValueError, match="when must be"):
        twdbg.watch(tf.Session(), when="sometimes")


def test_on_error_dumps_only_failing_runs_and_keeps_the_error(graph, tmp_path, executor):
    k = tf.placeholder(tf.int32, [], name="k")

    def body(i, acc):
        r = tf.reshape(tf.ones([6]), tf.stack([tf.where(tf.equal(i, 2), k, 3), -1]))
        return i + 1, acc + tf.reduce_sum(r)
    out = tf.while_loop(lambda i, a: i < 4, body, [0, 0.0])
    with twdbg.watch(tf.Session(), regex="while/", dump_root=str(tmp_path),
                     when="on_error") as sess:
        assert sess.run(out, {k: 3})[1] == 24.0
        assert not os.listdir(str(tmp_path))  # nothing dumped for a good run
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(out, {k: 4})
    assert type(info.value) is errors.InvalidArgumentError
    assert "in while/body at iteration 2 of loop \"while\"" in str(info.value)
    dump = twdbg.DebugDumpDir(str(tmp_path))
    assert dump.steps == [1] and dump.status(1) == "error"
    assert dump.error(1) == str(info.value)
    sums = dump.watch_key_to_data("while/Sum:0")
    assert [d.iteration for d in sums] == [0, 1]  # what ran before the failure


def test_has_inf_or_nan_names_first_op_iteration_and_input_ranges(graph, tmp_path,
                                                                   executor, where):
    x, total = _countdown_log(graph)
    with twdbg.watch(tf.Session(), dump_root=str(tmp_path),
                     when=twdbg.has_inf_or_nan) as sess:
        assert sess.run(total, {x: [9.0, 6.0, 7.0, 8.0]}).shape == (4,)
        assert not os.listdir(str(tmp_path))
        with pytest.raises(twdbg.FilterMatchedError) as info:
            sess.run(total, {x: [5.0, 6.0, 3.0, 8.0]})
    err = info.value
    assert isinstance(err, errors.InvalidArgumentError)
    assert str(err) == (
        "The tensor 'accumulate/Log:0' (output 0 of op 'accumulate/Log' of type Log) has a "
        "non-finite value: float32[4]: 1 -Inf, finite min 0.693147 max 1.609438\n"
        "\t [[node accumulate/Log (defined at %s) ]]\n"
        "\t in while/body at iteration 3 of loop \"accumulate\"\n"
        "\t input 0 'accumulate/sub:0': float32[4]: min 0 max 5" % where("log"))
    assert err.datum.tensor_name == "accumulate/Log:0" and err.datum.iteration == 3
    assert err.op is graph.get_operation_by_name("accumulate/Log")
    first = err.dump.find(twdbg.has_inf_or_nan, first_n=1)
    assert [(d.tensor_name, d.iteration) for d in first] == [("accumulate/Log:0", 3)]
    assert twdbg.DebugDumpDir(str(tmp_path)).status(1) == "filter"
    # every later value with -inf is found too, in execution order
    later = err.dump.find(twdbg.has_inf_or_nan)
    assert later[0] is not None and len(later) > 1
    assert [d.dump_index for d in later] == sorted(d.dump_index for d in later)


def test_has_inf_or_nan_filter_function():
    assert twdbg.has_inf_or_nan(None, np.array([1.0, np.nan]))
    assert twdbg.has_inf_or_nan(None, np.array([np.inf], np.float16))
    assert not twdbg.has_inf_or_nan(None, np.array([1.0, 2.0]))
    assert not twdbg.has_inf_or_nan(None, np.array([1, 2]))
    assert not twdbg.has_inf_or_nan(None, None)
    assert twdbg.has_inf_or_nan(None, np.array([complex(np.nan, 0)]))


def test_custom_filter_and_user_run_metadata(graph, tmp_path):
    a = tf.placeholder(tf.float32, [3], name="a")
    big = tf.square(a, name="big")
    out = tf.reduce_sum(big, name="out")

    def too_big(datum, value):
        return value is not None and value.dtype.kind == "f" and bool((value > 50).any())
    md = tf.RunMetadata()
    with twdbg.watch(tf.Session(), dump_root=str(tmp_path), when=too_big) as sess:
        assert sess.run(out, {a: [1.0, 2.0, 3.0]}, run_metadata=md) == 14.0
        names = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
        assert "big" in names  # the caller's metadata gets the step stats
        with pytest.raises(twdbg.FilterMatchedError,
                           match=r"'big:0' \(output 0 of op 'big' of type Square\) matches "
                                 r"the filter too_big: float32\[3\]: min 1 max 64\n"):
            sess.run(out, {a: [1.0, 2.0, 8.0]})


def test_strings_and_handles_are_dumped_without_pickle(graph, tmp_path):
    s = tf.constant(["ab", "cde"], name="s")
    joined = tf.strings.join([s, s], name="joined")
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as plain:
        plain.run(tf.global_variables_initializer())
        with twdbg.watch(plain, dump_root=str(tmp_path)) as sess:
            got, val = sess.run([joined, v.read_value()])
    assert got.tolist() == [b"abab", b"cdecde"]
    dump = twdbg.DebugDumpDir(str(tmp_path / "run_0"))
    (j,) = dump.watch_key_to_data("joined:0")
    assert j.dtype == "string" and j.get_tensor().tolist() == [b"abab", b"cdecde"]
    handles = [d for d in dump.dumped_tensor_data if d.op_type == "VarHandleOp"]
    assert handles and all(d.file_path is None and d.get_tensor() is None for d in handles)
    with open(tmp_path / "run_0" / "index.json") as f:
        meta = json.load(f)
    assert meta["format"] == 1 and meta["status"] == "ok"
    for rec in meta["tensors"]:
        if rec["file"]:
            np.load(os.path.join(tmp_path, "run_0", rec["file"]), allow_pickle=False)


def test_unwatched_sessions_never_record(sess, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("an unwatched, untraced run recorded")
    monkeypatch.setattr(_ex.StepTrace, "record", fail)
    x = tf.placeholder(tf.float32, [])
    out = tf.while_loop(lambda i: i < 3.0, lambda i: i + x, [0.0])
    assert sess.run(out, {x: 1.0}) == 3.0


def test_dump_dir_errors_and_steps(graph, tmp_path):
    with pytest.raises(IOError, match="No tensorweave debug dump"):
        twdbg.DebugDumpDir(str(tmp_path))
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.square(a, name="sq")
    with twdbg.watch(tf.Session(), tensors=[b], dump_root=str(tmp_path)) as sess:
        sess.run(b, {a: 2.0})
        sess.run(b, {a: 3.0})
    # a new watch on the same root goes on numbering
    with twdbg.watch(tf.Session(), tensors=[b], dump_root=str(tmp_path)) as sess:
        sess.run(b, {a: 4.0})
    dump = twdbg.DebugDumpDir(str(tmp_path))
    assert dump.steps == [0, 1, 2]
    assert [v.tolist() for v in dump.get_tensors("sq", 0)] == [4.0, 9.0, 16.0]
    assert twdbg.DebugDumpDir(str(tmp_path), step=1).get_tensors("sq", 0)[0] == 9.0
    with pytest.raises(ValueError, match="DebugIdentity"):
        dump.get_tensors("sq", 0, debug_op="DebugNumericSummary")


def test_watch_a_loop_split_over_two_devices(graph, tmp_path, monkeypatch):
    monkeypatch.setenv("TW_FUSE_HOST_PARTITIONS", "0")  # a partitioned plan
    x = tf.placeholder(tf.float32, [4], name="x")

    def body(i, acc):
        with tf.device("/cpu:1"):
            shifted = x - tf.cast(i, tf.float32)
        return i + 1, acc + tf.log(shifted)
    _, total = tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.zeros([4])])
    config = tf.ConfigProto(device_count={"CPU": 2})
    with twdbg.watch(tf.Session(config=config), dump_root=str(tmp_path),
                     when=twdbg.has_inf_or_nan) as sess:
        with pytest.raises(twdbg.FilterMatchedError) as info:
            sess.run(total, {x: [5.0, 6.0, 3.0, 8.0]})
    assert "\t in while/body at iteration 3 of loop \"while\"\n" \
           "\t input 0 'while/sub:0': float32[4]: min 0 max 5" in str(info.value)
    subs = info.value.dump.watch_key_to_data("while/sub:0")
    assert [d.iteration for d in subs] == [0, 1, 2, 3, 4]
    assert all(d.device_name.endswith("/device:CPU:1") for d in subs)
