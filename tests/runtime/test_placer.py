"""Device placement (runtime/placer.py): colocation groups, merged requests, conflicts
and infeasible requests, soft placement, the default rule, the cost model and
log_device_placement."""
import inspect

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import registry
from tensorweave.runtime import placer
from tensorweave.runtime import plan as plan_module
from tensorweave.runtime.devices import DeviceManager


def _placed(fetches=(), targets=(), feeds=(), devices=None, soft=False, **kw):
    """{op name: device name suffix ("CPU:1")} of one placed step graph."""
    sg = plan_module.prune(list(fetches), list(targets), list(feeds))
    placer.place(sg, devices or DeviceManager({"CPU": 2}), soft, **kw)
    return {n.name: n.device.name.split("device:")[1] for n in sg.nodes}


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


# --- colocation groups ---------------------------------------------------------------

def test_a_variable_its_reads_assigns_and_optimizer_updates_share_its_device(graph):
    with tf.device("/cpu:1"):
        w = tf.Variable(np.ones((3, 2), np.float32), name="w", use_resource=True)
    x = tf.constant(np.ones((4, 3), np.float32))
    loss = tf.reduce_sum(tf.matmul(x, w.read_value()))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    bump = w.assign_add(tf.ones((3, 2)))
    got = _placed([loss], [train, bump.op, w.initializer])
    handle_users = [op.name for op in graph.get_operations()
                    if any(t.dtype == tf.resource for t in op.inputs)]
    assert {"w", "w/Assign", "AssignAddVariableOp", "Read/ReadVariableOp",
            "GradientDescent/update_w/ResourceApplyGradientDescent"} <= set(got)
    for name in handle_users + ["w"]:
        if name in got:
            assert got[name] == "CPU:1", name
    # unconstrained computation stays on the first device
    assert got["MatMul"] == "CPU:0"


def test_handle_users_follow_a_variable_with_no_request_of_its_own(graph):
    v = tf.Variable(1.0, name="v", use_resource=True)
    with tf.device("/device:CPU:1"):
        r = v.read_value()
    got = _placed([r])
    assert got["v"] == got["Read/ReadVariableOp"] == "CPU:1"


def test_every_step_puts_a_resource_on_the_same_device(graph):
    # the initializer step alone holds no request: the read built elsewhere decides
    v = tf.Variable(1.0, name="v", use_resource=True)
    with tf.device("/cpu:1"):
        r = v.read_value()
    assert _placed(targets=[v.initializer])["v"] == _placed([r])["v"] == "CPU:1"


def test_training_with_a_variable_on_another_device_matches_one_device(graph):
    def train(config):
        with tf.Graph().as_default():
            with tf.device("/cpu:1"):
                w = tf.Variable([[1.0], [2.0]], name="w", use_resource=True)
            x = tf.constant([[1.0, 1.0], [2.0, 0.5]])
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - 1.0))
            step = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
            with tf.Session(config=config) as s:
                s.run(tf.global_variables_initializer())
                for _ in range(3):
                    s.run(step)
                return s.run([w, loss])

    two = train(tf.ConfigProto(device_count={"CPU": 2}))
    one = train(tf.ConfigProto(allow_soft_placement=True))
    np.testing.assert_array_equal(two[0], one[0])
    assert two[1] == one[1]


def test_queue_ops_are_colocated_with_the_queue(graph):
    with tf.device("/cpu:1"):
        q = tf.FIFOQueue(3, tf.float32, shapes=[[]], name="q")
    enq = q.enqueue(1.0)
    size = q.size()
    got = _placed([size], [enq])
    assert got["q"] == got[enq.name] == got[size.op.name] == "CPU:1"


def test_colocate_with_places_ops_with_the_named_op(graph):
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.colocate_with(a):
        c = tf.identity(b, name="c")
    got = _placed([c, a])
    assert got["c"] == got["a"] == "CPU:1"
    assert got["b"] == "CPU:1"  # a constant follows its only consumer (TF's heuristic A)


def test_a_constant_follows_its_consumers_only_when_they_agree(graph):
    k = tf.constant(2.0, name="k")
    k2 = tf.constant(3.0, name="k2")
    with tf.device("/cpu:1"):
        a = tf.identity(k, name="a")
        b = tf.identity(k2, name="b")
    with tf.device("/cpu:2"):
        c = tf.identity(k2, name="c")
    got = _placed([a, b, c], devices=DeviceManager({"CPU": 3}))
    assert got["k"] == "CPU:1"
    assert got["k2"] == "CPU:0"  # consumers on two devices: the default choice


def test_the_named_op_constrains_its_group_even_when_not_in_the_step(graph):
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        c = tf.identity(tf.constant(2.0), name="c")
    c.op._device = ""  # only the colocation attr says where c goes
    got = _placed([c])
    assert "a" not in got and got["c"] == "CPU:1"


def test_class_attr_of_an_imported_graph_colocates(graph):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            a = tf.constant(1.0, name="a")
        with tf.colocate_with(a):
            tf.identity(tf.constant(2.0, name="b"), name="c")
    gd = g.as_graph_def()
    (node,) = [n for n in gd.node if n.name == "c"]
    assert list(node.attr["_class"].list.s) == [b"loc:@a"]
    node.device = ""
    c, = tf.import_graph_def(gd, return_elements=["c:0"], name="imp")
    assert c.op.device == ""
    assert _placed([c])["imp/c"] == "CPU:1"


def test_class_attr_in_an_ops_attrs_colocates(graph):
    with tf.device("/cpu:1"):
        tf.constant(1.0, name="a")
    c = tf.identity(tf.constant(2.0), name="c")
    c.op._attrs["_class"] = [b"loc:@a"]
    assert _placed([c])["c"] == "CPU:1"


def test_partial_requests_of_a_group_are_merged(graph):
    with tf.device("/job:localhost/replica:0"):
        v = tf.Variable(1.0, name="v", use_resource=True)
    with tf.device("/device:CPU:1"):
        r = v.read_value()
    with tf.device("/task:0"):
        a = v.assign(3.0)
    got = _placed([r], [a.op])
    assert got["v"] == got["Read/ReadVariableOp"] == got["AssignVariableOp"] == "CPU:1"


# --- conflicts and infeasible requests -------------------------------------------------

def test_an_op_using_a_resource_gives_way_to_the_resources_device(graph):
    # TF1 ignores the request of an op across a resource edge ("Ignoring device
    # specification ... is a reference connection"): TensorFlow 2.21 runs this assign on
    # CPU:0 and this enqueue on CPU:1, with their resources
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v", use_resource=True)
    with tf.device("/cpu:1"):
        add = v.assign_add(2.0, name="add")
        q = tf.FIFOQueue(3, tf.float32, name="q")
    with tf.device("/cpu:0"):
        enqueue = q.enqueue(1.0, name="enqueue")
    placed = _placed(targets=[add.op, enqueue])
    assert placed["add"] == placed["v"] == "CPU:0"
    assert placed["enqueue"] == placed["q"] == "CPU:1"


def test_conflicting_requests_in_a_group_name_both_ops_and_their_lines(graph):
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a"); line_a = _line()  # noqa: E702
    with tf.device("/cpu:1"):
        c = tf.identity(2.0, name="c"); line_c = _line()  # noqa: E702
    c.op._colocation = ["a"]  # as a _class attr of an imported graph would say
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        _placed([c])
    msg = str(e.value)
    assert "Cannot colocate nodes a and c" in msg
    assert "incompatible ids: '/device:CPU:0' and '/device:CPU:1'" in msg
    assert "test_placer.py:%d" % line_a in msg and "test_placer.py:%d" % line_c in msg
    assert "a (Const) requested /device:CPU:0" in msg
    assert "c (Identity) requested /device:CPU:1" in msg


def test_conflicting_colocate_with_requests_raise(graph):
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        c = tf.identity(tf.constant(2.0), name="c")
    c.op._device = "/device:CPU:1"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot colocate nodes a and c"):
        _placed([c])


def test_a_device_that_does_not_exist_is_reported(graph):
    with tf.device("/device:CPU:3"):
        c = tf.constant(1.0, name="c") + 1.0
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot assign a device for operation c: Operation was "
                             r"explicitly assigned to /device:CPU:3 but available devices "
                             r"are \[ /job:localhost/replica:0/task:0/device:CPU:0, "):
        _placed([c])


def test_soft_placement_relaxes_to_a_feasible_device(graph):
    with tf.device("/job:localhost/device:CPU:3"):
        c = tf.constant(1.0, name="c") + 1.0
    assert _placed([c], soft=True)["add"] == "CPU:0"


def test_soft_placement_keeps_a_resource_where_it_was_created(graph):
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v", use_resource=True)
    with tf.device("/cpu:0"):
        add = v.assign_add(2.0, name="add")
    got = _placed(targets=[add.op], soft=True)
    assert got["v"] == got["add"] == "CPU:1"


def test_soft_placement_does_not_merge_different_jobs(graph):
    with tf.device("/job:ps"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        c = tf.identity(tf.constant(2.0), name="c")
    c.op._device = "/job:worker"
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible jobs"):
        _placed([c], soft=True)


def test_sessions_report_placement_errors(graph):
    with tf.device("/device:CPU:2"):
        c = tf.constant(1.0, name="c") + 1.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="explicitly assigned"):
            sess.run(c)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2},
                                          allow_soft_placement=True)) as sess:
        assert sess.run(c) == 2.0


def test_an_op_without_any_kernel_is_left_to_the_kernel_binder(graph):
    registry.register_op("TestPlacerNoKernel", inputs=["x: float32"],
                         outputs=["y: float32"], shape=lambda op: op.inputs[0].shape)
    registry.not_differentiable("TestPlacerNoKernel")
    from tensorweave.framework.op_builder import apply_op
    y = apply_op("TestPlacerNoKernel", [tf.constant(1.0)]).outputs[0]
    assert _placed([y])[y.op.name] == "CPU:0"


# --- the default rule ---------------------------------------------------------------

def test_default_rule_puts_unconstrained_ops_on_the_first_device(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.reduce_sum(tf.sin(x) * 2.0)
    got = _placed([y], feeds=[x], devices=DeviceManager({"CPU": 3}))
    assert set(got.values()) == {"CPU:0"}


def test_partial_type_request_takes_the_first_device_of_the_type(graph):
    with tf.device("/cpu:*"):
        c = tf.constant(1.0, name="c")
    with tf.device("/device:CPU:2"):
        d = tf.identity(c, name="d")
    got = _placed([d], devices=DeviceManager({"CPU": 3}))
    assert got == {"c": "CPU:0", "d": "CPU:2"}


def test_fed_tensors_follow_their_request(graph):
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [], name="x")
    y = x + 1.0
    got = _placed([y], feeds=[x])
    assert got["x:0"] == "CPU:1" and got["add"] == "CPU:0"


def test_existing_sessions_place_everything_on_cpu0(graph, sess):
    v = tf.Variable(2.0, use_resource=True)
    y = v * 3.0
    sess.run(v.initializer)
    assert sess.run(y) == 6.0
    for plan in sess._plans.values():
        for g in plan.step_graphs:
            assert {n.device.name for n in g.nodes} == {
                "/job:localhost/replica:0/task:0/device:CPU:0"}


def test_unknown_strategy_raises(graph):
    with pytest.raises(ValueError, match="Unknown placement strategy 'random'"):
        _placed([tf.constant(1.0)], strategy="random")


# --- the cost model -------------------------------------------------------------------

def _two_towers(n=256, depth=3, weights="const"):
    """Two independent stacks of n x n matmuls on one input, joined at the end."""
    x = tf.placeholder(tf.float32, [n, n], name="x")
    rng = np.random.RandomState(0)
    outs, names = [], []
    for tower in "ab":
        h = x
        for k in range(depth):
            value = (rng.rand(n, n).astype(np.float32) - 0.5) / n
            if weights == "const":
                w = tf.constant(value, name="w_%s%d" % (tower, k))
            else:
                w = tf.Variable(value, name="w_%s%d" % (tower, k), use_resource=True)
            h = tf.matmul(h, w, name="mm_%s%d" % (tower, k))
            names.append(h.op.name)
        outs.append(h)
    return x, tf.add(outs[0], outs[1], name="join")


@pytest.mark.parametrize("weights", ["const", "variable"])
def test_cost_model_puts_each_tower_on_its_own_device(graph, weights):
    x, out = _two_towers(weights=weights)
    got = _placed([out], feeds=[x], strategy="cost_model")
    a = {got["mm_a%d" % k] for k in range(3)}
    b = {got["mm_b%d" % k] for k in range(3)}
    assert len(a) == 1 and len(b) == 1 and a != b, got
    if weights == "const":  # each constant goes with the matmul that reads it
        for k in range(3):
            assert got["w_a%d" % k] == got["mm_a0"] and got["w_b%d" % k] == got["mm_b0"]
    else:  # variables stay on the default device in every strategy (stable across steps)
        assert got["w_a0"] == got["w_b0"] == "CPU:0"
    # the default rule keeps everything on one device
    assert set(_placed([out], feeds=[x]).values()) == {"CPU:0"}


def test_cost_model_runs_in_a_session_with_the_same_result(graph):
    x, out = _two_towers()
    xv = np.random.RandomState(1).rand(256, 256).astype(np.float32)
    with tf.Session() as s:
        want = s.run(out, {x: xv})
    config = tf.ConfigProto(device_count={"CPU": 2},
                            experimental={"placement": "cost_model"})
    assert config.experimental.placement == "cost_model"
    with tf.Session(config=config) as s:
        np.testing.assert_array_equal(s.run(out, {x: xv}), want)
        (plan,) = s._plans.values()
        assert sorted({n.device.name for g in plan.step_graphs for n in g.nodes}) == [
            "/job:localhost/replica:0/task:0/device:CPU:%d" % i for i in (0, 1)]


def test_cost_model_never_splits_a_chain_of_cheap_ops(graph):
    # y1 and the cheap chain both read y2 and become ready together; y1 (heavy) stays on
    # y2's device, which is then busy while the other device idles: an earliest-finish
    # choice alone would move the chain there, adding transfers for a few microseconds.
    n = 256
    x = tf.placeholder(tf.float32, [n, n], name="x")
    w = tf.constant(np.eye(n, dtype=np.float32), name="w")
    y2 = tf.matmul(x, w, name="y2")
    y1 = tf.matmul(y2, w, name="y1")
    h = tf.slice(y2, [0, 0], [1, 4], name="chain0")
    chain = [h.op.name]
    for k in range(1, 8):
        h = tf.sin(h, name="chain%d" % k) if k % 2 else tf.multiply(h, 2.0, name="chain%d" % k)
        chain.append(h.op.name)
    out = tf.add(tf.reduce_sum(y1), tf.reduce_sum(h), name="out")
    got = _placed([out], feeds=[x], strategy="cost_model")
    assert got["y1"] == got["y2"]
    assert {got[c] for c in chain} == {got["y2"]}, got


def test_cost_model_keeps_steps_with_control_flow_on_one_device(graph):
    x, out = _two_towers(n=64)
    _, looped = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a * 2.0), [0, out])
    got = _placed([looped], feeds=[x], strategy="cost_model")
    assert set(got.values()) == {"CPU:0"}
    config = tf.ConfigProto(device_count={"CPU": 2},
                            experimental={"placement": "cost_model"})
    xv = np.random.RandomState(1).rand(64, 64).astype(np.float32)
    with tf.Session(config=config) as s:
        assert s.run(looped, {x: xv}).shape == (64, 64)


def test_cost_model_estimates(graph):
    model = placer.CostModel()
    x = tf.placeholder(tf.float32, [128, 64], name="x")
    y = tf.matmul(x, tf.ones([64, 32]), name="y")
    z = tf.sin(y, name="z")
    sg = plan_module.prune([z], [], [])
    nodes = {n.name: n for n in sg.nodes}
    assert model.compute_seconds(nodes["y"]) == pytest.approx(
        model.op_overhead_s + 2 * 128 * 64 * 32 / model.flops_per_second)
    # elementwise work: output elements at the elementwise rate, not FLOPs
    assert model.compute_seconds(nodes["z"]) == pytest.approx(
        model.op_overhead_s + 128 * 32 / model.elements_per_second)
    assert model.edge_bytes(nodes["y"], 0) == 128 * 32 * 4
    # host to host: references pass, latency only, whatever the size
    assert model.transfer_seconds(4000) == model.transfer_seconds(4 << 20, "CPU", "CPU") \
        == model.host_transfer_latency_s
    # a device end copies: latency + bytes / rate, once per accelerator end
    one_copy = model.device_transfer_latency_s + 4000 / model.device_bytes_per_second
    assert model.transfer_seconds(4000, "CPU", "SIM") == pytest.approx(one_copy)
    assert model.transfer_seconds(4000, "SIM", "CPU") == pytest.approx(one_copy)
    assert model.transfer_seconds(4000, "SIM", "SIM") == pytest.approx(2 * one_copy)
    assert model.cheap_below_s == min(model.host_transfer_latency_s,
                                      model.device_transfer_latency_s)
    custom = placer.CostModel(flops_per_second=1e9, elements_per_second=1e6,
                              op_overhead_s=0.0)
    assert custom.compute_seconds(nodes["z"]) == pytest.approx(128 * 32 / 1e6)


def test_cost_model_defaults_are_the_calibrated_constants():
    # fitted by benchmarks/calibrate_cost_model.py (CostModel's docstring)
    model = placer.CostModel()
    assert (model.flops_per_second, model.op_overhead_s, model.elements_per_second,
            model.host_transfer_latency_s, model.device_transfer_latency_s,
            model.device_bytes_per_second) == (1.27e11, 4.1e-7, 5.3e9, 3.2e-6, 8.2e-6,
                                               2.4e10)
    assert "calibrate_cost_model.py" in placer.CostModel.__doc__


def test_calibrated_defaults_split_towers_and_keep_a_large_elementwise_chain(graph):
    model = placer.CostModel()
    x, out = _two_towers()
    got = _placed([out], feeds=[x], strategy="cost_model", cost_model=model)
    a = {got["mm_a%d" % k] for k in range(3)}
    b = {got["mm_b%d" % k] for k in range(3)}
    assert len(a) == 1 and len(b) == 1 and a != b, got
    # a chain of elementwise ops on 512 x 512 tensors (~50 us each: not cheap) reads a
    # matmul whose device then runs another matmul; the chain moves to the idle device
    # as a whole (one transfer), never op by op
    n = 512
    x2 = tf.placeholder(tf.float32, [n, n], name="x2")
    w = tf.constant(np.eye(n, dtype=np.float32), name="w2")
    y2 = tf.matmul(x2, w, name="y2")
    y1 = tf.matmul(y2, w, name="y1")
    h, chain = y2, []
    for k in range(8):
        h = tf.sin(h, name="e%d" % k) if k % 2 else tf.multiply(h, 2.0, name="e%d" % k)
        chain.append(h.op.name)
    total = tf.add(y1, h, name="total")
    nodes = {nd.name: nd for nd in plan_module.prune([total], [], [x2]).nodes}
    assert model.compute_seconds(nodes["e0"]) > model.cheap_below_s
    got = _placed([total], feeds=[x2], strategy="cost_model", cost_model=model)
    assert got["y1"] == got["y2"]
    assert {got[c] for c in chain} == {"CPU:0", "CPU:1"} - {got["y2"]}, got


def test_placement_options_from_config():
    assert placer.placement_options(None) == (False, "default")
    cfg = tf.ConfigProto(log_device_placement=True)
    assert placer.placement_options(cfg) == (True, "default")
    cfg.experimental.placement = "cost_model"
    assert placer.placement_options(cfg) == (True, "cost_model")
    assert isinstance(tf.ConfigProto.Experimental(placement="cost_model"),
                      type(cfg.experimental))


# --- log_device_placement --------------------------------------------------------------

def test_log_device_placement_prints_each_op_once_per_step_graph(graph, capsys):
    with tf.device("/cpu:1"):
        c = tf.constant(1.0, name="c")
    y = tf.add(c, 1.0, name="y")
    config = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=True)
    with tf.Session(config=config) as s:
        assert s.run(y) == 2.0
        assert s.run(y) == 2.0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == sorted([
        "c: (Const): /job:localhost/replica:0/task:0/device:CPU:1",
        "y/y: (Const): /job:localhost/replica:0/task:0/device:CPU:0",
        "y: (AddV2): /job:localhost/replica:0/task:0/device:CPU:0"])


def test_no_log_without_the_option(graph, capsys):
    with tf.Session() as s:
        s.run(tf.constant(1.0) + 1.0)
    assert capsys.readouterr().out == ""


# --- with a simulated accelerator ----------------------------------------------------

def _cpu_and_sim():
    return DeviceManager({"CPU": 1, "SIM": 1})


def test_default_rule_prefers_the_accelerator_where_it_has_a_kernel(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.sin(x, name="y")
    s = tf.strings.as_string(y, name="s")  # string ops run on the host only
    got = _placed([s], feeds=[x], devices=_cpu_and_sim())
    assert got["y"] == "SIM:0" and got["s"] == "CPU:0"


def test_a_group_takes_a_type_with_kernels_for_every_member(graph):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]], name="q")  # queues live on the host
    enq = q.enqueue(tf.sin(1.0, name="v"))
    got = _placed(targets=[enq], devices=_cpu_and_sim())
    assert got["q"] == got[enq.name] == "CPU:0" and got["v"] == "SIM:0"


def test_a_request_without_a_kernel_names_the_op_and_the_kernels(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/device:SIM:0"):
        s = tf.strings.as_string(x, name="s"); line = _line()  # noqa: E702
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        _placed([s], feeds=[x], devices=_cpu_and_sim())
    msg = str(e.value)
    assert "Cannot assign a device for operation s: Could not satisfy explicit device " \
           "specification '/device:SIM:0' because no supported kernel for SIM devices " \
           "is available. Op s (AsString) has kernels for: CPU." in msg
    assert "test_placer.py:%d" % line in msg
    assert _placed([s], feeds=[x], devices=_cpu_and_sim(), soft=True)["s"] == "CPU:0"


def test_a_colocated_op_without_a_kernel_is_named_with_the_request(graph):
    with tf.device("/device:SIM:0"):
        a = tf.sin(1.0, name="a")
    with tf.colocate_with(a):
        s = tf.strings.as_string(a, name="s")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"(?s)operation s: .*no supported kernel for SIM devices.*"
                             r"a \(Sin\) requested /device:SIM:0.*colocation group: a, s"):
        _placed([s], devices=_cpu_and_sim())


def test_sessions_run_on_the_accelerator_by_default(graph, capsys):
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.multiply(x, 2.0, name="y")
    config = tf.ConfigProto(device_count={"SIM": 1}, log_device_placement=True)
    with tf.Session(config=config) as s:
        np.testing.assert_array_equal(s.run(y, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])
    assert "y: (Mul): /job:localhost/replica:0/task:0/device:SIM:0" in \
        capsys.readouterr().out.splitlines()


def _sim_only_op(name):
    """An op type with a kernel on SIM only (registered once per process)."""
    if name not in registry.registered_ops():
        registry.register_op(name, inputs=["x: float32"], outputs=["y: float32"],
                             shape=lambda op: op.inputs[0].shape)
        registry.not_differentiable(name)
        registry.kernel(name, devices=("SIM",))(lambda ctx, x: x)
    from tensorweave.framework.op_builder import apply_op
    return lambda x: apply_op(name, [x]).outputs[0]


def test_an_op_with_kernels_only_on_absent_devices_is_reported(graph):
    y = _sim_only_op("TestPlacerSimOnly")(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot assign a device for operation TestPlacerSimOnly: no "
                             r"device of this session has a kernel for it \(TestPlacerSimOnly"
                             r" \(TestPlacerSimOnly\) has kernels for: SIM, defined at "
                             r".*test_placer.py:\d+\)"):
        _placed([y], soft=True)
    assert _placed([y], devices=_cpu_and_sim())[y.op.name] == "SIM:0"


def test_a_group_without_a_common_device_type_is_reported(graph):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]], name="q")
    one = tf.constant(1.0)
    with tf.colocate_with(q.queue_ref):
        y = _sim_only_op("TestPlacerSimOnly")(one)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot colocate nodes q, TestPlacerSimOnly: no device type "
                             r"has a kernel for all of them \(q \(FIFOQueueV2\) has kernels "
                             r"for: CPU.*TestPlacerSimOnly \(TestPlacerSimOnly\) has kernels"
                             r" for: SIM"):
        _placed([y], devices=_cpu_and_sim(), soft=True)


def test_a_device_function_that_places_only_variables_keeps_their_ops_with_them(graph):
    # replica_device_setter style: only the variable op is sent to another device; its
    # initializer, reads and optimizer updates follow it (TF1 colocates them)
    def only_variables(op):
        return "/cpu:1" if op.type == "VarHandleOp" else "/cpu:0"
    with tf.device(only_variables):
        x = tf.placeholder(tf.float32, [None, 3])
        w = tf.Variable(tf.ones([3, 2]), name="W")
        loss = tf.reduce_sum(tf.matmul(x, w))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    own = [op for op in graph.get_operations() if op.name.startswith("W")]
    assert {op.device for op in own} == {"/cpu:1"}
    assert loss.op.device == "/cpu:0"  # the computation stays where the function says
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(w.initializer)
        out = sess.run([train, loss], {x: np.ones((2, 3), np.float32)})[1]
        np.testing.assert_allclose(out, 12.0)
        np.testing.assert_allclose(sess.run(w), np.full((3, 2), 0.8), rtol=1e-6)


def test_an_op_colocated_with_a_variable_joins_its_group_in_every_step(graph):
    v = tf.Variable(1.0, use_resource=True, name="v")
    with tf.colocate_with(v.op):
        s = tf.strings.as_string(v.read_value(), name="s")  # host-only: no SIM kernel
    devices = DeviceManager({"CPU": 1, "SIM": 1})
    init = _placed(targets=[v.initializer], devices=devices)  # `s` is not in this step
    run = _placed([s], devices=devices)
    assert init["v"] == run["v"] == run["s"] == "CPU:0"


def test_a_resource_keeps_the_device_an_earlier_step_made_it_on(graph):
    # the variable is made on SIM:0 by its initializer's step; ops added afterwards join
    # its group (and its device) or fail clearly, never moving it (and losing its value)
    v = tf.Variable(2.0, use_resource=True, name="v")
    config = tf.ConfigProto(device_count={"SIM": 1}, log_device_placement=False)
    with tf.Session(config=config) as sess:
        sess.run(v.initializer)
        bump = v.assign_add(1.0)  # has a SIM kernel: runs where the variable lives
        assert sess.run(bump) == 3.0
        with tf.colocate_with(v.op):
            s = tf.strings.as_string(v.read_value(), name="s"); line = _line()  # noqa
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sess.run(s)
        msg = str(e.value)
        assert "Cannot assign a device for operation s: it uses the resource made by v, " \
               "which an earlier step placed on /job:localhost/replica:0/task:0/device:" \
               "SIM:0, and it cannot run there (Op s (AsString) has kernels for: CPU)" in msg
        assert "test_placer.py:%d" % line in msg
        assert sess.run(bump) == 4.0  # its step, placed before `s`, runs on: value kept
        # a new step places the group whole, as TF does: it names `s` again
        with pytest.raises(tf.errors.InvalidArgumentError, match="operation s: it uses"):
            sess.run(v.read_value())


def test_a_group_first_placed_with_all_its_ops_may_take_the_host(graph):
    # built before the first step, the host-only op pulls the whole group to the CPU
    v = tf.Variable(2.0, use_resource=True, name="v")
    with tf.colocate_with(v.op):
        s = tf.strings.as_string(v.read_value(), name="s")
    with tf.Session(config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(v.initializer)
        assert sess.run(s) == b"2.000000"
