"""tf.profiler (issue 17): FLOPs and parameters by TF1's counting rules (expected
numbers are hand-computed formulas; the same models under TensorFlow 2.21's
tf.compat.v1.profiler gave exactly these numbers, tree shapes and orders), time and
bytes from a traced run, and tensorweave's per-op summaries (OpProfile)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.profiler import OpProfile

FLOPS = tf.profiler.ProfileOptionBuilder.float_operation
PARAMS = tf.profiler.ProfileOptionBuilder.trainable_variables_parameter
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def quiet(opts):
    return dict(opts, output="none")


def mlp(batch=8):
    x = tf.placeholder(tf.float32, [batch, 784], name="x")
    y = tf.placeholder(tf.float32, [batch, 10], name="y")
    with tf.variable_scope("layer1"):
        w1 = tf.Variable(np.zeros((784, 128), np.float32), name="w")
        b1 = tf.Variable(np.zeros(128, np.float32), name="b")
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.variable_scope("layer2"):
        w2 = tf.Variable(np.zeros((128, 10), np.float32), name="w")
        b2 = tf.Variable(np.zeros(10, np.float32), name="b")
        logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.square(logits - y), name="loss")
    tf.Variable(0, trainable=False, name="global_step")
    return x, y, loss


def cnn():
    x = tf.placeholder(tf.float32, [4, 28, 28, 1], name="x")
    with tf.name_scope("conv"):
        f = tf.Variable(np.zeros((5, 5, 1, 8), np.float32), name="f")
        b = tf.Variable(np.zeros(8, np.float32), name="b")
        c = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME"), b))
        p = tf.nn.max_pool(c, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    with tf.name_scope("fc"):
        w = tf.Variable(np.zeros((1568, 10), np.float32), name="w")
        bb = tf.Variable(np.zeros(10, np.float32), name="b")
        logits = tf.matmul(tf.reshape(p, [4, 1568]), w) + bb
    s = tf.reduce_sum(logits, name="s")
    tf.square(tf.placeholder(tf.float32, [None, 3]), name="unknown_sq")  # counts 0
    return s


def flat(node):
    return [(c.name, c.float_ops, c.total_float_ops) for c in node.children]


def test_mlp_flops_by_scope(graph):
    mlp()
    r = tf.profiler.profile(graph, cmd="scope", options=quiet(FLOPS()))
    assert isinstance(r, tf.profiler.GraphNodeProto) and r.name == "_TFProfRoot"
    m, k, n1, n2 = 8, 784, 128, 10
    want = [("layer1/MatMul", 2 * m * k * n1),   # MatMul: 2 * m * n * k
            ("layer2/MatMul", 2 * m * n1 * n2),
            ("layer1/add", m * n1),              # AddV2: one per output element
            ("Square", m * n2), ("layer2/add", m * n2),
            ("loss", m * n2 * 1 + 1 * (1 - 1)),  # Mean: in * 1 + out * (1 - 1)
            ("sub", m * n2)]
    # the scopes hold no flops of their own: their ops move up under the root, ordered
    # by flops, ties by name (Relu has no registered flops statistic)
    assert flat(r) == [(name, f, f) for name, f in want]
    assert (r.float_ops, r.total_float_ops) == (0, sum(f for _, f in want))
    assert r.total_float_ops == 1627456


def test_cnn_flops_by_scope_and_by_op_type(graph):
    cnn()
    r = tf.profiler.profile(graph, cmd="scope", options=quiet(FLOPS()))
    b, h, w, cin, cout, kh, kw = 4, 28, 28, 1, 8, 5, 5
    conv = b * h * w * cout * kh * kw * cin * 2   # output elements * filter taps * 2
    pool = (2 * 2) * b * 14 * 14 * cout           # ksize area * output elements
    want = [("conv/Conv2D", conv), ("fc/MatMul", 2 * b * 1568 * 10),
            ("conv/BiasAdd", b * h * w * cout),   # BiasAdd: input elements
            ("conv/MaxPool", pool), ("fc/add", b * 10),
            ("s", b * 10 - 1)]                    # Sum: in * 1 + out * (0 - 1)
    assert flat(r) == [(name, f, f) for name, f in want]
    assert r.total_float_ops == 1430095
    ops = tf.profiler.profile(graph, cmd="op", options=quiet(FLOPS()))
    assert isinstance(ops, tf.profiler.MultiGraphNodeProto)
    chain, node = [], ops.children[0]
    while True:  # tfprof nests each op type under the previous one
        chain.append((node.name, node.float_ops, node.total_float_ops))
        if not node.children:
            break
        node = node.children[0]
    types = [("Conv2D", conv), ("MatMul", 2 * b * 1568 * 10), ("BiasAdd", b * h * w * cout),
             ("MaxPool", pool), ("AddV2", b * 10), ("Sum", b * 10 - 1)]
    totals = [sum(f for _, f in types[i:]) for i in range(len(types))]
    assert chain == [(t, f, tot) for (t, f), tot in zip(types, totals)]
    assert ops.total_float_ops == 1430095
    assert [n.name for n in ops.children[0].graph_nodes] == ["conv/Conv2D"]


def test_parameters_of_trainable_variables_by_scope(graph):
    mlp()
    r = tf.profiler.profile(graph, options=quiet(PARAMS()))  # cmd="scope"
    tree = [(c.name, c.parameters, c.total_parameters,
             [(g.name, g.parameters, g.total_parameters) for g in c.children])
            for c in r.children]
    assert tree == [("layer1", 0, 784 * 128 + 128, [("layer1/b", 128, 128),
                                                    ("layer1/w", 784 * 128, 784 * 128)]),
                    ("layer2", 0, 128 * 10 + 10, [("layer2/b", 10, 10),
                                                  ("layer2/w", 1280, 1280)])]
    # global_step is not trainable: not counted
    assert r.total_parameters == 784 * 128 + 128 + 128 * 10 + 10 == 101770


def test_default_options_count_trainable_parameters(graph, capsys):
    cnn()
    r = tf.profiler.profile(graph)
    assert r.total_parameters == 5 * 5 * 1 * 8 + 8 + 1568 * 10 + 10 == 15898
    out = capsys.readouterr().out
    assert "_TFProfRoot (--/15.90k params)" in out and "conv/f (200/200 params)" in out


def test_resource_variables_count_too(graph):
    with tf.variable_scope("v", use_resource=True):
        tf.get_variable("w", [3, 4])
    with tf.variable_scope("r", use_resource=False):
        tf.get_variable("w", [5])
    r = tf.profiler.profile(graph, options=quiet(PARAMS()))
    assert r.total_parameters == 12 + 5


def test_flops_of_gradients(graph):
    # the backward ops have TF's statistics too: MatMul with transposes,
    # Conv2DBackpropInput/Filter, MaxPoolGrad, BiasAddGrad, AddN
    x = tf.placeholder(tf.float32, [2, 8, 8, 3])
    f = tf.Variable(np.zeros((3, 3, 3, 4), np.float32))
    c = tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME")            # [2, 4, 4, 4]
    loss = tf.reduce_sum(tf.nn.max_pool(c, [1, 2, 2, 1], [1, 1, 1, 1], "SAME"))
    tf.gradients(loss, [x, f])
    r = tf.profiler.profile(graph, options=quiet(FLOPS()))
    got = {c.name.rsplit("/", 1)[-1]: c.float_ops for c in r.children}
    conv = 2 * 4 * 4 * 4 * 3 * 3 * 3 * 2
    # backprop: 2 * image elements * kernel elements / (image depth * stride area)
    assert got["Conv2DBackpropInput"] == 2 * (2 * 8 * 8 * 3) * (3 * 3 * 3 * 4) // (3 * 4)
    assert got["Conv2DBackpropFilter"] == got["Conv2DBackpropInput"] == conv
    n_pool = 2 * 4 * 4 * 4
    assert got["MaxPoolGrad"] == 4 * n_pool + n_pool


def test_run_meta_completes_shapes_and_adds_time_and_bytes(graph):
    x, y, loss = mlp(batch=None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        md = tf.RunMetadata()
        sess.run(loss, {x: np.ones((8, 784), np.float32), y: np.ones((8, 10), np.float32)},
                 options=FULL, run_metadata=md)
    static = tf.profiler.profile(graph, options=quiet(FLOPS()))
    assert static.total_float_ops == 0  # unknown batch: nothing counts statically
    r = tf.profiler.profile(graph, run_meta=md, options=quiet(FLOPS()))
    # unknown shapes are taken from the outputs the traced run recorded (as TF's
    # profiler does); a fed placeholder runs no kernel, so layer1/MatMul, which needs
    # the shape of x, still counts nothing; everything downstream counts
    assert r.total_float_ops == 1627456 - 2 * 8 * 784 * 128
    assert [c.name for c in r.children][:2] == ["layer2/MatMul", "layer1/add"]
    names = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    tm = tf.profiler.profile(graph, run_meta=md, options=quiet(
        tf.profiler.ProfileOptionBuilder.time_and_memory(min_micros=0)))

    def walk(node):
        yield node
        for c in node.children:
            yield from walk(c)
    shown = {n.name: n for n in walk(tm) if n.name != "_TFProfRoot"}
    assert set(shown) <= names
    mm = shown["layer1/MatMul"]
    assert (mm.run_count, mm.requested_bytes) == (1, 8 * 128 * 4)
    rec = next(n for d in md.step_stats.dev_stats for n in d.node_stats
               if n.node_name == "layer1/MatMul")
    assert mm.exec_micros == rec.all_end_rel_micros
    assert tm.total_requested_bytes == sum(n.requested_bytes for n in shown.values())


def test_options_and_outputs(graph, tmp_path):
    B = tf.profiler.ProfileOptionBuilder
    assert B().build() == {
        "max_depth": 100, "min_bytes": 0, "min_micros": 0, "min_params": 0,
        "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
        "account_type_regexes": [".*"], "start_name_regexes": [".*"],
        "trim_name_regexes": [], "show_name_regexes": [".*"], "hide_name_regexes": [],
        "account_displayed_op_only": False, "select": ["micros"], "step": -1,
        "output": "stdout"}
    assert FLOPS()["min_float_ops"] == 1 and FLOPS()["order_by"] == "float_ops"
    assert PARAMS()["account_type_regexes"] == ["_trainable_variables"]
    opts = (B(FLOPS()).with_max_depth(3).with_node_names(hide_name_regexes=["layer2.*"])
            .with_file_output(str(tmp_path / "report.txt")).build())
    assert opts["max_depth"] == 3 and opts["output"].startswith("file:outfile=")
    mlp()
    r = tf.profiler.profile(graph, options=opts)
    assert "layer2/MatMul" not in [c.name for c in r.children]
    text = (tmp_path / "report.txt").read_text()
    assert "layer1/MatMul (1.61m/1.61m flops)" in text
    with pytest.raises(ValueError, match="cmd 'graph' is not supported"):
        tf.profiler.profile(graph, cmd="graph", options=quiet(FLOPS()))
    with pytest.raises(ValueError, match="not supported"):
        tf.profiler.profile(graph, options=B(FLOPS()).with_timeline_output("t").build())


def _two_steps(graph):
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            mm = tf.matmul(x, x, name="mm")
        s = tf.reduce_sum(mm, name="s")
    mds = []
    with tf.Session() as sess:
        for _ in range(2):
            md = tf.RunMetadata()
            sess.run(s, {x: np.ones((64, 64), np.float32)}, options=FULL, run_metadata=md)
            mds.append(md)
    return mds


def test_op_profile_table_and_top(graph):
    mds = _two_steps(graph)
    prof = OpProfile(mds)
    step0 = {n.node_name: n for d in mds[0].step_stats.dev_stats for n in d.node_stats}
    mm = prof.total["outer/inner/mm"]
    assert (mm.op_type, mm.count, mm.bytes) == ("MatMul", 2, 2 * 64 * 64 * 4)
    assert mm.micros == sum(n.all_end_rel_micros for md in mds
                            for d in md.step_stats.dev_stats for n in d.node_stats
                            if n.node_name == "outer/inner/mm")
    assert prof.steps[0]["outer/inner/mm"].micros == step0["outer/inner/mm"].all_end_rel_micros
    top = prof.top(by="bytes", top=1)
    assert [s.name for s in top] == ["outer/inner/mm"]
    by_micros = prof.top("micros")
    assert [s.micros for s in by_micros] == sorted((s.micros for s in by_micros),
                                                   reverse=True)
    table = prof.table(by="bytes", top=2, step=1)
    lines = table.splitlines()
    assert lines[2].split()[:4] == ["outer/inner/mm", "MatMul", "1", str(
        prof.steps[1]["outer/inner/mm"].micros)]
    assert "step 1: %d nodes" % len(prof.steps[1]) in lines[-1]
    assert prof.by_type()["MatMul"].count == 2
    with pytest.raises(ValueError, match="by must be one of"):
        prof.top("flops")


def test_folded_stacks(graph, tmp_path):
    mds = _two_steps(graph)
    prof = OpProfile(mds)
    path = tmp_path / "ops.folded"
    prof.write_folded_stacks(str(path))
    lines = path.read_text().splitlines()
    parsed = {}
    for line in lines:  # what flamegraph.pl reads: frames, a space, a number
        stack, value = line.rsplit(" ", 1)
        parsed[stack] = int(value)
    assert parsed["outer;inner;MatMul mm"] == prof.total["outer/inner/mm"].micros
    assert parsed["outer;Sum s"] == prof.total["outer/s"].micros
    assert len(parsed) == len(prof.total)
    one = prof.folded_stacks(step=0, value="bytes").splitlines()
    assert "outer;inner;MatMul mm %d" % (64 * 64 * 4) in one


def test_profiler_averages_added_steps(graph):
    mds = _two_steps(graph)
    prof = tf.profiler.Profiler(graph)
    for k, md in enumerate(mds):
        prof.add_step(k, md)
    opts = dict(tf.profiler.ProfileOptionBuilder.time_and_memory(min_micros=0), output="none")
    micros = [next(n.all_end_rel_micros for d in md.step_stats.dev_stats
                   for n in d.node_stats if n.node_name == "outer/inner/mm") for md in mds]

    def find(node, name):
        if node.name == name:
            return node
        return next((f for c in node.children for f in [find(c, name)] if f), None)
    avg = find(prof.profile_name_scope(opts), "outer/inner/mm")
    assert (avg.run_count, avg.exec_micros, avg.requested_bytes) == (
        1, sum(micros) // 2, 64 * 64 * 4)
    one = find(prof.profile_name_scope(dict(opts, step=1)), "outer/inner/mm")
    assert one.exec_micros == micros[1]
    flops = prof.profile_operations(dict(FLOPS(), output="none"))
    assert flops.children[0].name == "MatMul"
    assert flops.total_float_ops == 2 * 64 ** 3 + 64 * 64 - 1
    with pytest.raises(ValueError, match="Step 5 was not added"):
        prof.profile_name_scope(dict(opts, step=5))
    with pytest.raises(ValueError, match="not supported"):
        prof.profile_python(opts)
