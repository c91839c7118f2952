"""Plan-time graph passes (runtime/optimizer.py): pure functions of a step graph that
remove, merge or precompute nodes without changing results."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import optimizer as opt
from tensorweave.runtime import plan as plan_module


def step_graph(fetches, targets=(), feeds=()):
    return plan_module.prune(list(fetches), list(targets), list(feeds))


def types(sg):
    return sorted(n.type for n in sg.nodes)


def fold(sg, sess):
    return opt.fold_constants(sg, sess._binder.run_for_folding)


def test_stable_topological_indices():
    assert opt.stable_topological_indices([set(), set(), set()]) == [0, 1, 2]
    assert opt.stable_topological_indices([{2}, set(), set()]) == [1, 2, 0]
    order = opt.stable_topological_indices([set(), set(), {0}, {1, 2}])
    assert sorted(order) == [0, 1, 2, 3] and order.index(2) < order.index(3)
    assert opt.stable_topological_indices([{1}, {0}]) is None


def test_topological_order_rejects_cycles(graph):
    a = opt.Node(None, "NoOp", {}, 0, "a", False)
    b = opt.Node(None, "NoOp", {}, 0, "b", False)
    a.control_inputs, b.control_inputs = [b], [a]
    with pytest.raises(ValueError, match="cycle"):
        opt.topological_order([a, b])
    b.control_inputs = []
    assert opt.topological_order([a, b]) == [b, a]


def test_remove_dead_noops_forwards_identities_and_control_edges(graph):
    x = tf.placeholder(tf.float32, name="x")
    y = tf.identity(tf.identity(x * 2.0, name="i1"), name="i2")
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        z = tf.add(y, 1.0, name="z")
    fetched_identity = tf.identity(x, name="fetched")
    sg = step_graph([z, fetched_identity], feeds=[x])
    sg = opt.remove_dead_noops(sg)
    names = {n.name for n in sg.nodes}
    assert {"i1", "i2", "gate"}.isdisjoint(names)   # forwarded / ordering nothing
    assert "fetched" in names                       # fetched: kept
    z_node = next(n for n in sg.nodes if n.name == "z")
    assert z_node.inputs[0][0].type == "Mul"


def test_noop_with_control_inputs_passes_them_on(graph):
    x = tf.placeholder(tf.float32, name="x")
    bump = tf.exp(tf.constant(1.0), name="bump")
    with tf.control_dependencies([bump]):
        gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        out = tf.add(x, 1.0, name="out")
    sg = opt.remove_dead_noops(step_graph([out], feeds=[x]))
    ordered = [n for n in sg.nodes if n.control_inputs]  # what `gate` ordered
    assert ordered and all([c.op for c in n.control_inputs] == [bump.op] for n in ordered)
    assert "gate" not in {n.name for n in sg.nodes}


def test_cse_merges_identical_stateless_nodes_only(graph):
    x = tf.placeholder(tf.float32, name="x")
    a, b = tf.exp(x, name="a"), tf.exp(x, name="b")
    c = tf.sin(x, name="c")
    r1 = tf.random_uniform([2], seed=1, name="r1")
    r2 = tf.random_uniform([2], seed=1, name="r2")
    total = tf.add_n([a, b, c], name="total")
    sg = opt.eliminate_common_subexpressions(step_graph([total, r1, r2], feeds=[x]))
    assert types(sg).count("Exp") == 1 and types(sg).count("Sin") == 1
    assert types(sg).count("RandomUniform") == 2  # stateful: never merged
    add = next(n for n in sg.nodes if n.name == "total")
    assert add.inputs[0][0] is add.inputs[1][0]


def test_cse_keeps_a_fetched_duplicate(graph):
    x = tf.placeholder(tf.float32, name="x")
    a, b = tf.exp(x, name="a"), tf.exp(x, name="b")
    sg = opt.eliminate_common_subexpressions(step_graph([a, b], feeds=[x]))
    assert sorted(n.name for n in sg.nodes if n.type == "Exp") == ["a", "b"]


def test_fold_constants(sess):
    a = tf.constant([1.0, 2.0], name="a")
    e = tf.exp(a, name="e")
    p = tf.placeholder(tf.float32, [2], name="p")
    y = tf.add(e, p, name="y")
    sg = fold(step_graph([y], feeds=[p]), sess)
    e_node = next(n for n in sg.nodes if n.name == "e")
    assert e_node.type == "Const" and not e_node.inputs
    np.testing.assert_allclose(e_node.value[0], np.exp([1.0, 2.0]), rtol=1e-6)
    assert next(n for n in sg.nodes if n.name == "y").type == "AddV2"


def test_fold_leaves_stateful_failing_and_placeholder_nodes(sess):
    bad = tf.gather(tf.constant([1.0, 2.0]), 5, name="bad")  # index out of range
    rnd = tf.random_uniform([2], seed=3, name="rnd")
    sg = fold(step_graph([bad, rnd]), sess)
    kinds = {n.name: n.type for n in sg.nodes}
    assert kinds["bad"] == "GatherV2"      # its error is the executor's to report
    assert kinds["rnd/RandomUniform"] == "RandomUniform"  # stateful
    assert kinds[rnd.op.name] != "Const"   # depends on a stateful node
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(bad)


def test_passes_never_change_results(graph):
    a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    p = tf.placeholder(tf.float32, [2, 3])
    fetch = [tf.exp(a) + p, tf.exp(a) + p, tf.reduce_sum(a * 2.0)]
    cfg = tf.ConfigProto()
    cfg.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    feed = {p: np.ones((2, 3), np.float32)}
    with tf.Session() as s1, tf.Session(config=cfg) as s2:
        for u, v in zip(s1.run(fetch, feed), s2.run(fetch, feed)):
            np.testing.assert_array_equal(u, v)


def test_fold_through_gated_constants_keeps_their_control_inputs(sess):
    # gate_gradients' tuple(): an Identity of a constant with control inputs, then a
    # Reshape and a Mul of constants; they fold into one Const that still waits for
    # the assign the Identity waited for
    v = tf.Variable(1.0, name="v")
    sess.run(v.initializer)
    bump = v.assign_add(1.0, name="bump")
    with tf.control_dependencies([bump]):
        gated = tf.identity(tf.constant([2.0, 3.0]), name="gated")
    y = tf.reshape(gated, [2, 1], name="r") * tf.constant(10.0, name="ten")
    sg = fold(step_graph([y]), sess)
    y_node = next(n for n in sg.nodes if n.name == y.op.name)
    assert y_node.type == "Const" and not y_node.inputs
    assert [c.name for c in y_node.control_inputs] == ["bump"]
    np.testing.assert_array_equal(y_node.value[0], [[20.0], [30.0]])
    np.testing.assert_array_equal(sess.run(y), [[20.0], [30.0]])
    assert sess.run(v) == 2.0  # the gated constant still ran the assign first
    sess.run(y)
    assert sess.run(v) == 3.0


def test_gated_identities_hand_their_control_inputs_to_their_readers(sess):
    # gate_gradients' tuple(): Identity(grad) with control inputs on the group; the
    # Identity goes, its readers wait for what it waited for
    v = tf.Variable(1.0, name="v")
    sess.run(v.initializer)
    x = tf.placeholder(tf.float32, name="x")
    bump = v.assign_add(1.0, name="bump")
    doubled = x * 2.0
    with tf.control_dependencies([bump]):
        gated = tf.identity(doubled, name="gated")
    twice = tf.identity(gated, name="twice")  # a chain of them
    out = tf.add(twice, 1.0, name="out")
    with tf.control_dependencies([twice]):
        after = tf.identity(x, name="after")  # ordered after the gated identity
    sg = opt.remove_dead_noops(step_graph([out, after], feeds=[x]))
    names = {n.name for n in sg.nodes}
    assert {"gated", "twice"}.isdisjoint(names)
    out_node = next(n for n in sg.nodes if n.name == "out")
    assert out_node.inputs[0][0].name == "mul"
    assert [c.name for c in out_node.control_inputs] == ["bump"]
    after_node = next(n for n in sg.nodes if n.name == "after")
    assert {c.name for c in after_node.control_inputs} == {"mul", "bump"}
    got_out, got_after = sess.run([out, after], {x: 3.0})
    assert got_out == 7.0 and got_after == 3.0
    assert sess.run(v) == 2.0  # the readers still ran the assign first


# --- shapes known statically, and folding in steps with control flow ---------------------
def test_materialize_shapes_of_fully_known_shapes_only(sess):
    x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
    y = tf.nn.relu(x, name="y")
    partial = tf.placeholder(tf.float32, [None, 3], name="partial")
    # the raw ops: tf.shape and friends already return constants for known shapes
    shape = tf.raw_ops.Shape(input=y)
    size = tf.raw_ops.Size(input=y, out_type=tf.int64)
    rank = tf.raw_ops.Rank(input=y)
    unknown = tf.raw_ops.Shape(input=partial)
    sg = opt.materialize_shapes(step_graph([shape, size, rank, unknown], feeds=[x, partial]))
    by_name = {n.name: n for n in sg.nodes}
    relu = by_name["y"]
    for t, want, dtype in ((shape, [2, 3, 4], np.int32), (size, 24, np.int64),
                           (rank, 3, np.int32)):
        node = by_name[t.op.name]
        assert node.type == "Const" and node.inputs == [] and node.control_inputs == [relu]
        assert node.value[0].dtype == dtype and node.value[0].tolist() == want
    assert by_name[unknown.op.name].type == "Shape"


def test_sizes_beyond_the_output_type_are_left_to_the_kernel(graph):
    x = tf.placeholder(tf.float32, [70000, 70000])
    size = tf.raw_ops.Size(input=tf.nn.relu(x))   # 4.9e9 elements: past int32
    wide = tf.raw_ops.Size(input=tf.nn.relu(x), out_type=tf.int64)
    sg = opt.materialize_shapes(step_graph([size, wide], feeds=[x]))
    by_name = {n.name: n for n in sg.nodes}
    assert by_name[size.op.name].type == "Size"
    assert by_name[wide.op.name].type == "Const"
    assert by_name[wide.op.name].value[0] == 70000 * 70000


def test_shapes_of_control_flow_outputs_are_not_materialized(graph):
    x = tf.placeholder(tf.float32, [2, 3])
    pred = tf.placeholder(tf.bool, [])
    switch_false, switch_true = tf.raw_ops.Switch(data=x, pred=pred)
    shape = tf.raw_ops.Shape(input=switch_true)
    sg = opt.materialize_shapes(step_graph([shape], feeds=[x, pred]))
    assert next(n for n in sg.nodes if n.name == shape.op.name).type == "Shape"


def _run_with_folding(build, fold: bool):
    """The values `build()` fetches, run with constant folding on or off, and the op types
    the partition graphs ran."""
    with tf.Graph().as_default():
        fetches, feed = build()
        config = tf.ConfigProto()
        if not fold:
            config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
        meta = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(fetches, feed, options=tf.RunOptions(
                output_partition_graphs=True), run_metadata=meta)
    return values, [node.op for pg in meta.partition_graphs for node in pg.node]


def _standardized_images():
    rs = np.random.RandomState(2)
    images = tf.placeholder(tf.float32, [6, 8, 8, 3])
    out = tf.map_fn(tf.image.per_image_standardization, images)
    return out, {images: rs.rand(6, 8, 8, 3).astype(np.float32)}


def _cond_in_a_loop():
    # a branch computes with the shape of a loop variable (the raw ops: tf.shape of a
    # known shape is a constant already); the loop counts to 5 through both branches
    x = tf.placeholder(tf.float32, [4, 5])

    def body(i, m, acc):
        size = tf.cast(tf.raw_ops.Size(input=m), tf.float32)
        step = tf.cond(i % 2 > 0, lambda: tf.reduce_sum(m) / size,
                       lambda: tf.cast(tf.reduce_prod(tf.raw_ops.Shape(input=m * 2.0)), tf.float32))
        return i + 1, m + 1.0, acc + step
    _, _, total = tf.while_loop(lambda i, m, acc: i < 5, body,
                                [tf.constant(0), x, tf.constant(0.0)])
    return total, {x: np.arange(20, dtype=np.float32).reshape(4, 5)}


@pytest.mark.parametrize("executor", ["default", "tagged"])
@pytest.mark.parametrize("build,gone", [(_standardized_images, {"Prod", "Rsqrt", "Range"}),
                                        (_cond_in_a_loop, {"Shape", "Size", "Prod"})])
def test_folding_in_loops_and_branches_keeps_the_values(build, gone, executor, monkeypatch):
    if executor == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    folded, folded_ops = _run_with_folding(build, True)
    plain, plain_ops = _run_with_folding(build, False)
    assert np.array_equal(folded, plain)
    # the shape arithmetic is gone from the loop's body and branches
    assert gone <= set(plain_ops) and not gone & set(folded_ops)


@pytest.mark.parametrize("executor", ["default", "tagged"])
def test_a_folded_op_of_several_outputs_in_a_loop_gives_each_its_value(executor,
                                                                        monkeypatch):
    # a Split of constants behind a cheap op of the body folds to a Const of two outputs
    # in that op's island (the tagged executor's); the island handed out the first
    # output's elements as the outputs
    if executor == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")

    def build():
        n = tf.placeholder(tf.int32, [])

        def body(i, acc):
            with tf.control_dependencies([i - 1]):
                a, b = tf.split(tf.constant([1.0, 2.0, 3.0, 4.0]), 2)
            return i + 1, acc * b + a
        _, acc = tf.while_loop(lambda i, acc: i < n, body, [0, tf.constant([0.0, 1.0])])
        return acc, {n: 3}
    folded, folded_ops = _run_with_folding(build, True)
    assert "Split" not in folded_ops
    # acc * [3, 4] + [1, 2] three times from [0, 1]: [1, 6], [4, 26], [13, 106]
    assert folded.tolist() == [13.0, 106.0]
    assert np.array_equal(_run_with_folding(build, False)[0], folded)


def _two_loops_with_one_body():
    # two loops whose bodies are the same ops on the same value: nothing of one loop
    # may stand for the other's (their Enters differ), and the body's repeated
    # tanh(v * 2) is one value per iteration
    x = tf.placeholder(tf.float32, [3])

    def body(i, v):
        return i + 1, tf.tanh(v * 2.0) + tf.tanh(v * 2.0)
    outs = [tf.while_loop(lambda i, v: i < n, body, [tf.constant(0), x])[1] for n in (2, 3)]
    return outs, {x: np.array([0.1, -0.2, 0.3], np.float32)}


@pytest.mark.parametrize("executor", ["default", "tagged"])
def test_cse_merges_within_a_loop_body_not_across_loops(executor, monkeypatch):
    if executor == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    merged, merged_ops = _run_with_folding(_standardized_images, True)
    plain, plain_ops = _run_with_folding(_standardized_images, False)
    assert np.array_equal(merged, plain)
    # the image's mean, taken by reduce_mean and again by reduce_std, is taken once
    assert plain_ops.count("Mean") == 3 and merged_ops.count("Mean") == 2
    (two, three), ops = _run_with_folding(_two_loops_with_one_body, True)
    v = np.array([0.1, -0.2, 0.3], np.float32)
    for n, got in ((2, two), (3, three)):
        want = v.astype(np.float64)
        for _ in range(n):
            want = 2 * np.tanh(want * 2)
        np.testing.assert_allclose(got, want, rtol=1e-5)
    assert ops.count("Tanh") == 2 and ops.count("Enter") >= 4


def test_folded_loop_values_against_numpy():
    total = _run_with_folding(_cond_in_a_loop, True)[0]
    x = np.arange(20, dtype=np.float32)
    # i = 0, 2, 4: the element count (20); i = 1, 3: the mean of x + i
    assert total == 3 * 20.0 + np.float32((x + 1).sum() / 20) + np.float32((x + 3).sum() / 20)
    images = _standardized_images  # values against NumPy's formula
    with tf.Graph().as_default():
        out, feed = images()
        with tf.Session() as sess:
            got = sess.run(out, feed)
    values = list(feed.values())[0]
    mean = values.mean(axis=(1, 2, 3), keepdims=True)
    std = np.maximum(values.std(axis=(1, 2, 3), keepdims=True), 1 / np.sqrt(192))
    np.testing.assert_allclose(got, (values - mean) / std, rtol=1e-5, atol=1e-6)


# --- assigned temporaries kept rather than copied --------------------------------------------
def _marked(sg):
    return sorted(n.name for n in sg.nodes if n.type == "AssignVariableOp" and
                  n.attrs.get(opt.TEMPORARY_VALUE_ATTR))


def test_assigns_of_unshared_fresh_results_are_marked(graph):
    x = tf.placeholder(tf.float32, [3], name="x")
    v = tf.Variable(tf.zeros([3]), use_resource=True)
    doubled = x * 2.0
    kept = v.assign(doubled, name="kept", read_value=False)
    fetched = x + 1.0
    shared = v.assign(fetched, name="fetched_too", read_value=False)
    read_twice = x - 1.0
    twice = v.assign(read_twice, name="read_twice", read_value=False)
    viewed = v.assign(tf.identity(x * 3.0), name="through_identity", read_value=False)
    fed = v.assign(x, name="fed", read_value=False)
    sg = opt.mark_temporaries(step_graph(
        [fetched, read_twice * 2.0], targets=[kept, shared, twice, viewed, fed], feeds=[x]))
    assert _marked(sg) == ["kept"]
    # the graph's own op keeps its attrs (the step graph's node has a copy)
    assert opt.TEMPORARY_VALUE_ATTR not in kept._attrs


def _in_place(sg):
    return sorted((n.name, n.attrs[opt.IN_PLACE_ATTR]) for n in sg.nodes
                  if opt.IN_PLACE_ATTR in n.attrs)


def test_elementwise_ops_on_unshared_fresh_results_are_marked(graph):
    # (shapes not known statically, or large: a value known to be small is not marked)
    x = tf.placeholder(tf.float32, [None], name="x")
    v = tf.Variable(tf.zeros([3]), use_resource=True, validate_shape=False)
    small = tf.sqrt(tf.zeros([3]) * 2.0, name="small")
    big = tf.sqrt(tf.zeros([256, 128]) * 2.0, name="big")
    first = tf.sqrt(x * 2.0, name="first")             # the product's array: its own
    second = tf.add(3.0, x - 1.0, name="second")         # its second input
    fetched = x + 4.0
    reread = tf.exp(fetched, name="reread")              # the sum is fetched too
    shared = x * 5.0
    twice = tf.subtract(shared, tf.tanh(shared), name="twice")  # read by two nodes
    on_a_feed = tf.negative(x, name="on_a_feed")
    on_a_variable = tf.square(v.read_value(), name="on_a_variable")
    through_identity = tf.log(tf.identity(x * 6.0), name="through_identity")
    sg = opt.mark_temporaries(step_graph(
        [first, second, fetched, reread, twice, on_a_feed, on_a_variable,
         through_identity, small, big], feeds=[x]))
    assert _in_place(sg) == [("big", 0), ("first", 0), ("second", 1), ("twice", 1)]
    assert opt.IN_PLACE_ATTR not in first.op._attrs


def test_products_pools_and_relus_are_fresh_results_relu_grad_takes_over(graph):
    x = tf.placeholder(tf.float32, [None, None], name="x")
    product = tf.matmul(x, x)
    scaled = tf.multiply(product, 2.0, name="scaled")            # the product's array
    relu = tf.nn.relu(x)
    shifted = tf.add(relu, 1.0, name="shifted")                  # the ReLU's array
    images = tf.placeholder(tf.float32, [None, None, None, None], name="images")
    pooled = tf.nn.max_pool(images, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    routed = tf.gradients(pooled, images, grad_ys=tf.ones_like(pooled) * 3.0)[0]
    masked = tf.raw_ops.ReluGrad(gradients=routed, features=images, name="masked")
    on_features = tf.raw_ops.ReluGrad(gradients=x, features=tf.matmul(x, x),
                                      name="on_features")   # never over the features
    fetched = tf.matmul(x, x)
    spared = tf.raw_ops.ReluGrad(gradients=fetched, features=x, name="spared")
    sg = opt.mark_temporaries(step_graph([scaled, shifted, masked, on_features, fetched,
                                          spared], feeds=[x, images]))
    assert [m for m in _in_place(sg) if m[0] in ("scaled", "shifted", "masked",
                                                  "on_features", "spared")] == \
        [("masked", 0), ("scaled", 0), ("shifted", 0)]


def test_relu_grad_in_place_gives_the_plain_kernels_bits(sess, monkeypatch):
    # 512 x 1024 values: oneDNN's passes (ELTWISE_MIN_SIZE), written into the gradient
    # where the plan marked it as the node's own; the plain kernel where not
    from tensorweave.ops import onednn
    rs = np.random.RandomState(3)
    av = rs.randn(512, 64).astype(np.float32)
    bv = rs.randn(64, 1024).astype(np.float32)
    fv = rs.randn(512, 1024).astype(np.float32)
    a, b, f = (tf.placeholder(tf.float32, v.shape) for v in (av, bv, fv))
    calls = []
    real = onednn.relu_grad
    monkeypatch.setattr(onednn, "relu_grad", lambda g, feat, into_grad=False: calls.append(
        into_grad) or real(g, feat, into_grad))
    product = tf.matmul(a, b)
    in_place = tf.raw_ops.ReluGrad(gradients=product, features=f)
    fetched = tf.matmul(a, b)
    spared = tf.raw_ops.ReluGrad(gradients=fetched, features=f)
    fd = {a: av, b: bv, f: fv}
    got, got_spared, got_fetched = sess.run([in_place, spared, fetched], fd)
    gv = np.dot(av, bv)
    np.testing.assert_allclose(got_fetched, gv, rtol=1e-4, atol=1e-4)
    assert got.tobytes() == (got_fetched * (fv > 0)).astype(np.float32).tobytes()
    assert got_spared.tobytes() == got.tobytes()
    if onednn.available():
        assert sorted(calls) == [False, True]
    # a NaN among the features masks its gradient (NaN > 0 is false), as in TF
    fv[0, :3] = np.nan
    got = sess.run(in_place, fd)
    assert got.tobytes() == (got_fetched * (fv > 0)).astype(np.float32).tobytes()
    assert (got[0, :3] == 0).all()


def test_in_place_results_are_numpys_and_spare_their_inputs(sess):
    # arrays of 64K values: large enough to be written in place
    rs = np.random.RandomState(0)
    xv = rs.rand(256, 256).astype(np.float32)
    fed = xv.copy()
    x = tf.placeholder(tf.float32, [256, 256])
    doubled = x * 2.0
    chain = tf.maximum(tf.tanh(tf.sqrt(doubled) + 1.0) / 3.0, 0.25) - x
    kept = x * 3.0
    uses_kept = tf.exp(kept) * 0.5
    _, looped = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.sqrt(a * 2.0)),
                              [tf.constant(0), x])
    got = sess.run([chain, doubled * 1.0, kept, uses_kept, looped], {x: fed})
    want_chain = np.maximum(np.tanh(np.sqrt(xv * np.float32(2)) + np.float32(1)) /
                            np.float32(3), np.float32(0.25)) - xv
    looped_want = xv
    for _ in range(3):
        looped_want = np.sqrt(looped_want * np.float32(2))
    assert got[0].tobytes() == want_chain.tobytes()
    assert got[1].tobytes() == (xv * np.float32(2)).tobytes()
    assert got[2].tobytes() == (xv * np.float32(3)).tobytes()   # fetched: not written
    assert got[3].tobytes() == (np.exp(xv * np.float32(3)) * np.float32(0.5)).tobytes()
    assert got[4].tobytes() == looped_want.tobytes()
    assert fed.tobytes() == xv.tobytes()                         # a feed: never written
    # an intermediate fed in place of its op: the caller's array, never written either
    mine = rs.rand(256, 256).astype(np.float32)
    theirs = mine.copy()
    out = sess.run(tf.sqrt(doubled) + 1.0, {doubled: mine})
    assert mine.tobytes() == theirs.tobytes()
    assert out.tobytes() == (np.sqrt(theirs) + np.float32(1)).tobytes()


def test_in_place_ops_lower_the_step_peak(graph, monkeypatch):
    # x * 2 -> sqrt -> + 1 on 1M floats (4 MiB each; the feed is the caller's memory):
    # written in place, the step holds one temporary; with new arrays, two at once
    x = tf.placeholder(tf.float32, [1 << 20])
    out = tf.reduce_sum(tf.sqrt(x * 2.0) + 1.0)
    fd = {x: np.ones(1 << 20, np.float32)}
    config = tf.ConfigProto(device_memory_limit_mb={"CPU": 1.5 * 4})
    with tf.Session(config=config) as sess:
        np.testing.assert_allclose(sess.run(out, fd), (np.sqrt(2.0) + 1.0) * (1 << 20),
                                   rtol=1e-6)
    monkeypatch.setattr(opt, "mark_temporaries", lambda sg: sg)  # nothing marked
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError):
            sess.run(out, fd)


def test_a_kept_temporary_is_read_only_and_copied_on_write(sess):
    x = tf.placeholder(tf.float32, [4])
    v = tf.Variable(tf.zeros([4]), use_resource=True)
    assign = v.assign(x * 2.0, read_value=False)
    bump = v.assign_add(tf.ones([4]), read_value=False)
    sess.run(v.initializer)
    sess.run(assign, {x: np.arange(4, dtype=np.float32)})
    before = sess.run(v.read_value())
    np.testing.assert_array_equal(before, [0, 2, 4, 6])
    sess.run(bump)
    # the value fetched before the update in place is unchanged (copy on write)
    np.testing.assert_array_equal(before, [0, 2, 4, 6])
    np.testing.assert_array_equal(sess.run(v.read_value()), [1, 3, 5, 7])


def test_a_fed_value_is_never_kept(sess):
    x = tf.placeholder(tf.float32, [3])
    v = tf.Variable(tf.zeros([3]), use_resource=True)
    doubled = x * 2.0
    assign = v.assign(doubled, read_value=False)
    sess.run(v.initializer)
    mine = np.array([1.0, 2.0, 3.0], np.float32)
    sess.run(assign, {doubled: mine})   # the Mul's output fed: the caller's array
    assert mine.flags.writeable
    mine[0] = 99.0
    np.testing.assert_array_equal(sess.run(v.read_value()), [1, 2, 3])


def test_sparse_adam_steps_keep_their_values(monkeypatch):
    # TF1 Adam's sparse update assigns m * beta1 and v * beta2 to the slots: kept, not
    # copied; the variables are those of steps that copy
    def three_steps():
        rs = np.random.RandomState(5)
        with tf.Graph().as_default():
            tf.set_random_seed(2)
            emb = tf.get_variable("emb", [40, 6])
            ids = tf.placeholder(tf.int64, [9])
            loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids)))
            train = tf.train.AdamOptimizer(0.1).minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train, {ids: rs.randint(0, 40, 9)})
                return sess.run(tf.global_variables())
    kept = three_steps()
    monkeypatch.setattr(opt, "_FRESH_OUTPUT_OPS", frozenset())
    copied = three_steps()
    for a, b in zip(kept, copied):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
