"""DeviceSpec parsing/merging and the graph's device and colocation scopes.

Every expected device string below is what TensorFlow 2.21's tf.compat.v1 gives for the
same scopes (checked with the reference installation)."""
import contextlib

import pytest

import tensorweave as tf

S = tf.DeviceSpec

_SCOPE_CASES = [
    (["/job:worker", "/device:CPU:1"], "/job:worker/device:CPU:1"),
    (["/job:worker/task:1", "/device:GPU:0"], "/job:worker/task:1/device:GPU:0"),
    (["/job:worker/task:1/device:CPU:0", "/job:ps"], "/job:ps/task:1/device:CPU:0"),
    (["/job:worker/replica:0/task:1/device:CPU:0", "/job:ps/replica:1/task:0/device:GPU:1"],
     "/job:ps/replica:1/task:0/device:GPU:1"),
    (["/cpu:1"], "/device:CPU:1"),
    (["/gpu:0"], "/device:GPU:0"),
    (["/CPU:0"], "/device:CPU:0"),
    (["cpu:0"], "/device:CPU:0"),
    (["/device:CPU:*"], "/device:CPU:*"),
    (["/job:w", "/device:cpu:*"], "/job:w/device:CPU:*"),
    (["/job:a", "/cpu:0"], "/job:a/device:CPU:0"),
    (["/job:a", None, "/task:2"], "/task:2"),
    (["/task:1", "/replica:2", "/job:x"], "/job:x/replica:2/task:1"),
    (["/job:a/device:GPU:0", "/device:CPU:0"], "/job:a/device:CPU:0"),
    (["/device:GPU:1", "/task:3"], "/task:3/device:GPU:1"),
    (["/job:a", ""], "/job:a"),
    (["/job:a", "", "/task:1"], "/job:a/task:1"),
    (["/job:w/task:1", "gpu:2"], "/job:w/task:1/device:GPU:2"),
    (["/device:XLA_CPU:0", "/job:w"], "/job:w/device:XLA_CPU:0"),
    ([S(job="ps", task=1), S(device_type="CPU", device_index=0)], "/job:ps/task:1/device:CPU:0"),
    # device functions: the result replaces what inner scopes gave; outer specs merge
    ([lambda op: "/cpu:0"], "/cpu:0"),
    ([lambda op: "/job:w/cpu:0"], "/job:w/cpu:0"),
    (["/job:w", lambda op: "/gpu:1"], "/job:w/device:GPU:1"),
    (["/job:a", lambda op: op.device], "/job:a"),
    (["/job:a/task:1", lambda op: "/job:b", "/cpu:0"], "/job:b/task:1"),
    ([lambda op: S(task=3), "/job:x"], "/task:3"),
    ([lambda op: "/job:ps", "/cpu:0"], "/job:ps"),
    ([lambda op: "/task:4", lambda op: op.device + "/device:CPU:2", "/job:in"], "/task:4"),
    (["/job:w/task:1", lambda op: S(device_type="GPU", device_index=0)],
     "/job:w/task:1/device:GPU:0"),
    (["/job:w", lambda op: "/job:ps/task:0"], "/job:ps/task:0"),
    (["/job:q", None], ""),
]


@pytest.mark.parametrize("scopes,expected", _SCOPE_CASES)
def test_nested_device_scopes_match_tf1(graph, scopes, expected):
    with contextlib.ExitStack() as stack:
        for d in scopes:
            stack.enter_context(tf.device(d))
        c = tf.constant(1.0, name="c")
    assert c.op.device == expected
    assert c.device == expected


def test_device_function_sees_the_op(graph):
    seen = []

    def fn(op):
        seen.append((op.type, op.name, [t.name for t in op.inputs]))
        return "/cpu:0" if op.type == "Const" else "/job:w"

    with tf.device(fn):
        a = tf.constant(1.0, name="a")
        b = tf.identity(a, name="b")
    assert seen == [("Const", "a", []), ("Identity", "b", ["a:0"])]
    assert (a.device, b.device) == ("/cpu:0", "/job:w")


def test_bad_spec_fails_at_the_scope(graph):
    with pytest.raises(ValueError, match="Unknown attribute 'device'"):
        with tf.device("/device:CPU"):
            pass
    with pytest.raises(ValueError, match="Unknown attribute 'foo'"):
        tf.device("/job:a/foo:1").__enter__()


def test_parse_and_print():
    s = S.from_string("/job:w/replica:1/task:2/device:GPU:3")
    assert (s.job, s.replica, s.task, s.device_type, s.device_index) == ("w", 1, 2, "GPU", 3)
    assert s.to_string() == "/job:w/replica:1/task:2/device:GPU:3"
    assert S.from_string("/cpu:1").to_string() == "/device:CPU:1"
    assert S.from_string("/device:CPU:*").device_index is None
    assert S.from_string("/cpu").to_string() == "/device:CPU:*"
    assert S.from_string("/gpu:*").to_string() == "/device:GPU:*"
    assert S.from_string("/sim:1").to_string() == "/device:SIM:1"
    assert S(job="a", device_type="cpu").to_string() == "/job:a/device:CPU:*"
    assert S(device_type="xla", device_index=0).to_string() == "/device:xla:0"
    assert S(replica="1").replica == 1 and S(task="2").task == 2
    assert S.from_string("") == S()
    assert repr(S(job="a")) == ("<DeviceSpec(job=a, replica=None, task=None, "
                                "device_type=None, device_index=None)>")
    assert str(S(job="a")) == repr(S(job="a"))


@pytest.mark.parametrize("bad,fragment", [
    ("/device:CPU", "Unknown attribute 'device'"),
    ("/job:a/foo:1", "Unknown attribute 'foo'"),
    ("/device:CPU:1:2", "Unknown attribute 'device'"),
    ("junk", "Unknown attribute 'junk'"),
    ("/task:x", "invalid literal"),
    ("/cpu:0/gpu:1", "Multiple device types"),
])
def test_parse_errors(bad, fragment):
    with pytest.raises(ValueError, match=fragment):
        S.from_string(bad)


def test_merge_replace_and_mutation():
    a = S(job="a")
    assert a.make_merged_spec(S(task=1)).to_string() == "/job:a/task:1"
    assert a.to_string() == "/job:a"  # make_merged_spec leaves `a` alone
    assert a.merge_from(S(task=1, job="b")) is None
    assert a.to_string() == "/job:b/task:1"
    r = a.replace(task=2, device_type="GPU")
    assert r.to_string() == "/job:b/task:2/device:GPU:*" and a.task == 1
    with pytest.raises(TypeError, match="unexpected keyword argument 'tsk'"):
        a.replace(tsk=1)
    a.device_index = 3
    a.device_type = "cpu"
    assert a.to_string() == "/job:b/task:1/device:CPU:3"
    x = S()
    assert x.parse_from_string("/job:z/cpu:2") is x
    assert x.to_string() == "/job:z/device:CPU:2"


def test_equality_and_hash():
    assert S.from_string("/job:a") == S(job="a")
    assert hash(S.from_string("/job:a")) == hash(S(job="a"))
    assert S.from_string("/cpu:0") == S.from_string("/device:CPU:0")
    assert S(job="a") != S(job="b") and S(job="a") != "/job:a"
    assert len({S(job="a"), S.from_string("/job:a"), S(task=1)}) == 2


def test_colocation_groups_and_class_attr(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(1.0, name="b")
    with tf.colocate_with(a):
        with tf.colocate_with(b):
            c = tf.identity(a, name="c")
        with tf.colocate_with(b, ignore_existing=True):
            d = tf.identity(a, name="d")
        e = tf.identity(c, name="e")
        with tf.colocate_with(c):
            f = tf.identity(c, name="f")
        with tf.colocate_with(None, ignore_existing=True):
            h = tf.identity(c, name="h")
    assert c.op.get_attr("_class") == [b"loc:@a", b"loc:@b"]
    assert d.op.get_attr("_class") == [b"loc:@b"]
    assert e.op.get_attr("_class") == [b"loc:@a"]
    assert f.op.colocation_groups() == [b"loc:@a", b"loc:@b"]
    assert h.op.colocation_groups() == [b"loc:@h"]
    with pytest.raises(ValueError, match="has no attr named '_class'"):
        a.op.get_attr("_class")
    with pytest.raises(ValueError, match="ignore_existing is not True"):
        with tf.colocate_with(None):
            pass


def test_colocation_takes_the_device_of_the_innermost_placed_op(graph):
    a = tf.constant(1.0, name="a")
    with tf.device("/job:ps/task:0"):
        p = tf.constant(1.0, name="p")
    with tf.device("/job:w"):
        with tf.colocate_with(a):
            q = tf.identity(a, name="q")
            with tf.device("/cpu:1"):
                r = tf.identity(a, name="r")
        with tf.colocate_with(p):
            with tf.colocate_with(a):
                t = tf.identity(a, name="t")
            with tf.device("/cpu:1"):
                u = tf.identity(a, name="u")
    assert (q.device, r.device, t.device, u.device) == (
        "", "/device:CPU:1", "/job:ps/task:0", "/job:ps/task:0")
    assert t.op.get_attr("_class") == [b"loc:@a", b"loc:@p"]


def test_class_attr_survives_graph_def_round_trip(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.colocate_with(a):
        with tf.colocate_with(b):
            tf.identity(a, name="c")
    gd = graph.as_graph_def()
    assert [(n.name, list(n.attr["_class"].list.s)) for n in gd.node
            if "_class" in n.attr] == [("c", [b"loc:@a", b"loc:@b"])]
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(gd, name="")
    assert g2.get_operation_by_name("c").get_attr("_class") == [b"loc:@a", b"loc:@b"]
