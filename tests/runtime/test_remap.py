"""Remapping (runtime/optimizer.py, fuse_conv_bias_relu): Conv2D -> bias -> Relu becomes
one _FusedConv2D node, as Grappler's remapper does, without changing results; and the
_FusedConv2D kernel (ops/nn/conv_ops.py), on oneDNN and on NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.op_builder import apply_op
from tensorweave.ops.math import reduction_ops
from tensorweave.runtime import optimizer as opt
from tensorweave.runtime import plan as plan_module

RNG = np.random.RandomState(5)


def fused(sg):
    return opt.fuse_conv_bias_relu(sg, lambda n: True)


def step_graph(fetches, targets=(), feeds=()):
    return plan_module.prune(list(fetches), list(targets), list(feeds))


def _conv(x, channels_in, channels_out, name):
    w = tf.constant(RNG.randn(3, 3, channels_in, channels_out).astype(np.float32),
                    name=name + "_w")
    return tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME", name=name)


def test_two_layers_become_two_fused_nodes_named_after_their_relus(graph):
    x = tf.placeholder(tf.float32, [2, 8, 8, 3], name="x")
    b1 = tf.constant(RNG.randn(4).astype(np.float32))
    y = tf.nn.relu(_conv(x, 3, 4, "conv1") + b1, name="relu1")
    b2 = tf.constant(RNG.randn(5).astype(np.float32))
    z = tf.nn.relu(tf.nn.bias_add(_conv(y, 4, 5, "conv2"), b2), name="relu2")
    sg = fused(step_graph([z], feeds=[x]))
    kinds = sorted(n.type for n in sg.nodes)
    assert kinds.count("_FusedConv2D") == 2
    assert not {"Conv2D", "Add", "AddV2", "BiasAdd", "Relu"} & set(kinds)
    first, second = [n for n in sg.nodes if n.type == "_FusedConv2D"]
    assert (first.name, second.name) == ("relu1", "relu2")
    assert first.attrs["fused_ops"] == ["BiasAdd", "Relu"] and first.attrs["num_args"] == 1
    assert second.inputs[0] == (first, 0)  # the second layer reads the fused first
    assert sg.fetches == [(second, 0)]


def test_a_bias_without_relu_fuses_alone(graph):
    x = tf.placeholder(tf.float32, [1, 5, 5, 2], name="x")
    out = tf.add(tf.constant(np.ones(3, np.float32)), _conv(x, 2, 3, "c"), name="out")
    sg = fused(step_graph([tf.nn.sigmoid(out)], feeds=[x]))
    node = next(n for n in sg.nodes if n.type == "_FusedConv2D")
    assert node.name == "out" and node.attrs["fused_ops"] == ["BiasAdd"]
    assert "Sigmoid" in {n.type for n in sg.nodes}


def test_chains_whose_intermediates_have_other_readers_stay(graph):
    x = tf.placeholder(tf.float32, [1, 5, 5, 2], name="x")
    bias = tf.constant(np.ones(3, np.float32))
    conv = _conv(x, 2, 3, "c")
    fetched_conv = tf.nn.relu(conv + bias)
    sg = fused(step_graph([fetched_conv, conv], feeds=[x]))  # the conv itself fetched
    assert "_FusedConv2D" not in {n.type for n in sg.nodes}
    conv2 = _conv(x, 2, 3, "c2")
    added = conv2 + bias
    twice = tf.nn.relu(added) + added  # the sum read twice: conv + bias fuse, not Relu
    sg = fused(step_graph([twice], feeds=[x]))
    node = next(n for n in sg.nodes if n.type == "_FusedConv2D")
    assert node.attrs["fused_ops"] == ["BiasAdd"] and "Relu" in {n.type for n in sg.nodes}
    conv3 = _conv(x, 2, 3, "c3")
    with tf.control_dependencies([conv3]):  # a control reader of the conv
        marker = tf.constant(1.0)
    sg = fused(step_graph([tf.nn.relu(conv3 + bias), marker], feeds=[x]))
    assert "_FusedConv2D" not in {n.type for n in sg.nodes}


def test_shape_readers_of_the_convolution_read_the_fused_node(graph):
    # the bias add's gradient reads the convolution's shape where the batch size is not
    # static: that reader does not keep the chain apart, and gets the fused node's shape
    x = tf.placeholder(tf.float32, [None, 5, 5, 2], name="x")
    w = tf.constant(RNG.randn(3, 3, 2, 3).astype(np.float32))
    b = tf.Variable(np.ones(3, np.float32))
    conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    out = tf.nn.relu(conv + b, name="out")
    db = tf.gradients(tf.reduce_sum(out), b)[0]
    sg = fused(step_graph([out, db], feeds=[x]))
    node = next(n for n in sg.nodes if n.type == "_FusedConv2D")
    shapes = [n for n in sg.nodes if n.type == "Shape" and n.inputs[0][0] is node]
    assert node.name == "out" and shapes and "Conv2D" not in {n.type for n in sg.nodes}
    assert all(sg.nodes.index(n) > sg.nodes.index(node) for n in shapes)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        x0 = RNG.randn(4, 5, 5, 2).astype(np.float32)
        got_out, got_db, got_shape = sess.run([out, db, tf.shape(conv)], {x: x0})
        want = np.maximum(sess.run(conv, {x: x0}) + 1.0, 0)
    np.testing.assert_allclose(got_out, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_db, (want > 0).sum((0, 1, 2)), rtol=1e-6)
    assert got_shape.tolist() == [4, 5, 5, 3]


def test_a_shape_reader_before_the_chains_end_keeps_it_apart(graph):
    x = tf.placeholder(tf.float32, [None, 5, 5, 2], name="x")
    conv = _conv(x, 2, 3, "c")
    out = tf.nn.relu(conv + tf.constant(np.ones(3, np.float32)))
    sg = step_graph([out, tf.shape(conv)], feeds=[x])
    shape = next(n for n in sg.nodes if n.type == "Shape")
    sg.nodes.remove(shape)  # right after the convolution: still a dataflow order
    sg.nodes.insert(next(k for k, n in enumerate(sg.nodes) if n.type == "Conv2D") + 1, shape)
    sg = fused(sg)
    assert "_FusedConv2D" not in {n.type for n in sg.nodes}


@pytest.mark.parametrize("bias_shape", [[1], [5, 5, 3], []])
def test_only_a_bias_per_output_channel_fuses(graph, bias_shape):
    x = tf.placeholder(tf.float32, [1, 5, 5, 2], name="x")
    out = tf.nn.relu(_conv(x, 2, 3, "c") + tf.constant(np.ones(bias_shape, np.float32)))
    sg = fused(step_graph([out], feeds=[x]))
    assert "_FusedConv2D" not in {n.type for n in sg.nodes}


def test_readers_of_the_relu_and_its_control_edges_follow_the_fused_node(graph):
    x = tf.placeholder(tf.float32, [1, 5, 5, 2], name="x")
    relu = tf.nn.relu(_conv(x, 2, 3, "c") + tf.constant(np.ones(3, np.float32)))
    with tf.control_dependencies([relu]):
        after = tf.identity(x, name="after")
    total = tf.reduce_sum(relu, name="total")
    sg = fused(step_graph([total, after], feeds=[x]))
    node = next(n for n in sg.nodes if n.type == "_FusedConv2D")
    by_name = {n.name: n for n in sg.nodes}
    assert by_name["total"].inputs[0] == (node, 0)
    assert node in by_name["after"].control_inputs


def test_plans_fuse_only_float32_nhwc_on_the_cpu(graph):
    x64 = tf.placeholder(tf.float64, [1, 5, 5, 2])
    w64 = tf.constant(np.ones((3, 3, 2, 3)))
    relu64 = tf.nn.relu(tf.nn.conv2d(x64, w64, 1, "SAME") + tf.constant(np.ones(3)))
    sg = step_graph([relu64], feeds=[x64])
    with tf.Session() as sess:
        plan_module.place(sg, sess._device_manager, True)
    sg = opt.fuse_conv_bias_relu(sg, plan_module._fusable_conv)
    assert "_FusedConv2D" not in {n.type for n in sg.nodes}


def _three_steps(build, remap: bool):
    """Three SGD steps of the model `build()` makes (its loss and variables) in a new
    graph, with the remapper on or off; the variables and loss after them, and the op
    types the partition graphs ran."""
    g = tf.Graph()
    with g.as_default():
        loss, variables = build(np.random.RandomState(0))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        config = tf.ConfigProto()
        if not remap:
            config.graph_options.rewrite_options.remapping = 2  # RewriterConfig.OFF
        meta = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, options=tf.RunOptions(output_partition_graphs=True),
                         run_metadata=meta)
            values = sess.run(variables + [loss])
    ops = {node.op for pg in meta.partition_graphs for node in pg.node}
    return values, ops


def _assert_fusing_keeps_the_values(build, fused_type: str) -> None:
    fused_values, fused_ops = _three_steps(build, remap=True)
    plain_values, plain_ops = _three_steps(build, remap=False)
    assert fused_type in fused_ops and fused_type not in plain_ops
    for a, b in zip(fused_values, plain_values):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _cnn(rs):
    """A two-layer CNN."""
    x = tf.constant(rs.rand(4, 12, 12, 1).astype(np.float32))
    w1 = tf.Variable(rs.randn(5, 5, 1, 8).astype(np.float32) * 0.2)
    b1 = tf.Variable(rs.randn(8).astype(np.float32) * 0.1)
    w2 = tf.Variable(rs.randn(3, 3, 8, 4).astype(np.float32) * 0.2)
    b2 = tf.Variable(rs.randn(4).astype(np.float32) * 0.1)
    h = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME") + b1)
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w2, 1, "SAME"), b2))
    return tf.reduce_sum(tf.square(h - 0.5)), [w1, b1, w2, b2]


@pytest.mark.usefixtures("conv_kernels")
def test_fused_training_steps_give_the_unfused_values():
    _assert_fusing_keeps_the_values(_cnn, "_FusedConv2D")


@pytest.mark.usefixtures("conv_kernels")
@pytest.mark.parametrize("fused_ops,relu", [(["BiasAdd"], False), (["BiasAdd", "Relu"], True)])
def test_fused_conv2d_kernel(sess, fused_ops, relu):
    x = RNG.randn(2, 7, 6, 3).astype(np.float32)
    w = RNG.randn(3, 2, 3, 5).astype(np.float32)
    b = RNG.randn(5).astype(np.float32)
    op = apply_op("_FusedConv2D", [x, w, [b]], dict(strides=[1, 2, 1, 1], padding="SAME",
                                                    fused_ops=fused_ops), name="fused")
    want = sess.run(tf.nn.conv2d(x, w, [1, 2, 1, 1], "SAME")) + b
    if relu:
        want = np.maximum(want, 0)
    got = sess.run(op.outputs[0])
    assert op.outputs[0].shape.as_list() == [2, 4, 6, 5]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_fused_conv2d_kernel_errors(sess):
    x = np.ones((1, 4, 4, 2), np.float32)
    w = np.ones((2, 2, 2, 3), np.float32)
    elu = apply_op("_FusedConv2D", [x, w, [np.ones(3, np.float32)]],
                   dict(padding="SAME", strides=[1, 1, 1, 1], fused_ops=["BiasAdd", "Elu"]),
                   name="elu").outputs[0]
    with pytest.raises(errors.UnimplementedError, match="fused_ops"):
        sess.run(elu)
    short = apply_op("_FusedConv2D", [x, w, [np.ones(2, np.float32)]],
                     dict(padding="SAME", strides=[1, 1, 1, 1], fused_ops=["BiasAdd"]),
                     name="short").outputs[0]
    with pytest.raises(errors.InvalidArgumentError, match="as many biases"):
        sess.run(short)


@pytest.mark.parametrize("fused_ops", [["BiasAdd"], ["BiasAdd", "Relu"]])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_conv2d_gradient_matches_numeric(graph, fused_ops, data_format):
    from tensorweave.autodiff.gradient_checker import compute_gradient_error
    xs = [2, 5, 4, 3] if data_format == "NHWC" else [2, 3, 5, 4]
    x = tf.constant(RNG.randn(*xs))
    w = tf.constant(RNG.randn(3, 2, 3, 4))
    b = tf.constant(RNG.randn(4))
    y = apply_op("_FusedConv2D", [x, w, [b]],
                 dict(strides=[1, 1, 1, 1], padding="SAME", fused_ops=fused_ops,
                      data_format=data_format), name="fused").outputs[0]
    with tf.Session():
        for t in (x, w, b):
            err = compute_gradient_error(t, t.shape.as_list(), y, y.shape.as_list())
            assert err < 1e-6, (t, err)


def test_fused_conv2d_without_a_gradient_rule_says_so(graph):
    op = apply_op("_FusedConv2D", [np.ones((1, 3, 3, 1)), np.ones((2, 2, 1, 1)),
                                   [np.ones(1)]],
                  dict(strides=[1, 1, 1, 1], padding="SAME", fused_ops=["BiasAdd", "Elu"]),
                  name="elu")
    with pytest.raises(LookupError, match="fused_ops"):
        tf.gradients(op.outputs[0], op.inputs[0])


# --- Conv3D -> bias [-> Relu] -> _FusedConv3D ----------------------------------------------
def _conv3d(x, channels_in, channels_out, name):
    w = tf.constant(RNG.randn(2, 3, 3, channels_in, channels_out).astype(np.float32),
                    name=name + "_w")
    return tf.nn.conv3d(x, w, strides=[1] * 5, padding="SAME", name=name)


def test_conv3d_chains_become_fused_conv3d_nodes(graph):
    x = tf.placeholder(tf.float32, [2, 4, 6, 6, 3], name="x")
    y = tf.nn.relu(_conv3d(x, 3, 4, "conv1") + tf.constant(RNG.randn(4).astype(np.float32)),
                   name="relu1")
    z = tf.nn.bias_add(_conv3d(y, 4, 2, "conv2"), tf.constant(np.ones(2, np.float32)),
                       name="biased")
    sg = fused(step_graph([z], feeds=[x]))
    kinds = [n.type for n in sg.nodes]
    assert kinds.count("_FusedConv3D") == 2 and "_FusedConv2D" not in kinds
    assert not {"Conv3D", "Add", "AddV2", "BiasAdd", "Relu"} & set(kinds)
    first, second = [n for n in sg.nodes if n.type == "_FusedConv3D"]
    assert (first.name, first.attrs["fused_ops"]) == ("relu1", ["BiasAdd", "Relu"])
    assert (second.name, second.attrs["fused_ops"]) == ("biased", ["BiasAdd"])
    assert second.inputs[0] == (first, 0)


def test_a_conv3d_bias_must_match_its_output_channels(graph):
    x = tf.placeholder(tf.float32, [1, 3, 4, 4, 2], name="x")
    out = tf.nn.relu(_conv3d(x, 2, 3, "c") + tf.constant(np.ones([4, 4, 3], np.float32)))
    sg = fused(step_graph([out], feeds=[x]))
    assert "_FusedConv3D" not in {n.type for n in sg.nodes}


def test_plans_fuse_conv3d_only_channels_last(graph):
    x = tf.placeholder(tf.float32, [1, 2, 3, 4, 4])
    w = tf.constant(np.ones((1, 2, 2, 2, 3), np.float32))
    out = tf.nn.relu(tf.nn.bias_add(tf.nn.conv3d(x, w, [1] * 5, "SAME",
                                                 data_format="NCDHW"),
                                    tf.constant(np.ones(3, np.float32)), data_format="NCHW"))
    sg = step_graph([out], feeds=[x])
    with tf.Session() as sess:
        plan_module.place(sg, sess._device_manager, True)
    sg = opt.fuse_conv_bias_relu(sg, plan_module._fusable_conv)
    assert "_FusedConv3D" not in {n.type for n in sg.nodes}


def _video(rs):
    """A Conv3D block: bias, ReLU, average pool."""
    x = tf.constant(rs.rand(2, 4, 8, 8, 3).astype(np.float32))
    w = tf.Variable(rs.randn(3, 3, 3, 3, 4).astype(np.float32) * 0.2)
    b = tf.Variable(rs.randn(4).astype(np.float32) * 0.1)
    h = tf.nn.relu(tf.nn.conv3d(x, w, [1] * 5, "SAME") + b)
    h = tf.nn.avg_pool3d(h, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME")
    return tf.reduce_sum(tf.square(h - 0.5)), [w, b]


@pytest.mark.usefixtures("conv_kernels")
def test_fused_conv3d_training_steps_give_the_unfused_values():
    _assert_fusing_keeps_the_values(_video, "_FusedConv3D")


@pytest.mark.usefixtures("conv_kernels")
@pytest.mark.parametrize("fused_ops,relu", [(["BiasAdd"], False), (["BiasAdd", "Relu"], True)])
def test_fused_conv3d_kernel(sess, fused_ops, relu):
    x = RNG.randn(2, 3, 5, 4, 3).astype(np.float32)
    w = RNG.randn(2, 3, 2, 3, 5).astype(np.float32)
    b = RNG.randn(5).astype(np.float32)
    op = apply_op("_FusedConv3D", [x, w, [b]], dict(strides=[1, 1, 2, 1, 1], padding="SAME",
                                                    fused_ops=fused_ops), name="fused")
    # the reference: each output position's window times the filter, by explicit loops
    # SAME pads one after in depth and width, one on each side in height
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 1), (1, 1), (0, 1), (0, 0)])
    want = np.zeros((2, 3, 3, 4, 5))
    for d, h, c in np.ndindex(3, 3, 4):
        patch = xp[:, d:d + 2, 2 * h:2 * h + 3, c:c + 2, :]
        want[:, d, h, c] = np.tensordot(patch, w, axes=([1, 2, 3, 4], [0, 1, 2, 3]))
    want += b
    if relu:
        want = np.maximum(want, 0)
    assert op.outputs[0].shape.as_list() == [2, 3, 3, 4, 5]
    np.testing.assert_allclose(sess.run(op.outputs[0]), want, rtol=1e-4, atol=1e-4)


def test_fused_conv3d_kernel_errors(sess):
    x = np.ones((1, 2, 4, 4, 2), np.float32)
    w = np.ones((1, 2, 2, 2, 3), np.float32)
    elu = apply_op("_FusedConv3D", [x, w, [np.ones(3, np.float32)]],
                   dict(padding="SAME", strides=[1] * 5, fused_ops=["BiasAdd", "Elu"]),
                   name="elu").outputs[0]
    with pytest.raises(errors.UnimplementedError, match="_FusedConv3D with fused_ops"):
        sess.run(elu)
    short = apply_op("_FusedConv3D", [x, w, [np.ones(2, np.float32)]],
                     dict(padding="SAME", strides=[1] * 5, fused_ops=["BiasAdd"]),
                     name="short").outputs[0]
    with pytest.raises(errors.InvalidArgumentError, match="as many biases"):
        sess.run(short)


@pytest.mark.parametrize("fused_ops", [["BiasAdd"], ["BiasAdd", "Relu"]])
def test_fused_conv3d_gradient_matches_numeric(graph, fused_ops):
    from tensorweave.autodiff.gradient_checker import compute_gradient_error
    # float32 (TF's types for the op); small products and biases of +-1 keep every
    # value away from ReLU's kink, and the channel of -1 checks that ReLU gates
    values = [RNG.randn(1, 3, 4, 3, 2).astype(np.float32) * 0.1,
              RNG.randn(2, 2, 3, 2, 3).astype(np.float32) * 0.1,
              np.array([1.0, -1.0, 0.5], np.float32)]
    x, w, b = (tf.constant(v) for v in values)
    y = apply_op("_FusedConv3D", [x, w, [b]],
                 dict(strides=[1, 1, 1, 1, 1], padding="SAME", fused_ops=fused_ops),
                 name="fused").outputs[0]
    with tf.Session():
        for t, v in zip((x, w, b), values):
            err = compute_gradient_error(t, list(v.shape), y, y.shape.as_list(),
                                         x_init_value=v, delta=1e-2)
            assert err < 1e-3, (t, err)


def _conv_blocks_in_control_flow(rs):
    """A conv -> bias -> relu chain inside a while loop's body and one inside a cond's
    branch."""
    x = tf.constant(rs.rand(2, 6, 6, 3).astype(np.float32))
    w = tf.Variable(rs.randn(3, 3, 3, 3).astype(np.float32) * 0.3)
    b = tf.Variable(rs.randn(3).astype(np.float32) * 0.1)
    flag = tf.placeholder_with_default(True, [])

    def block(h):
        return tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, 1, "SAME"), b))
    _, looped = tf.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, block(h)),
                              [tf.constant(0), x])
    branched = tf.cond(flag, lambda: block(looped), lambda: looped * 2.0)
    return tf.reduce_sum(tf.square(branched - 0.3)), [w, b]


@pytest.mark.parametrize("executor", ["structured", "tagged"])
def test_chains_in_loops_and_branches_fuse_with_the_unfused_values(executor, monkeypatch):
    if executor == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    _assert_fusing_keeps_the_values(_conv_blocks_in_control_flow, "_FusedConv2D")


# --- FusedBatchNormV3 -> Relu -> _FusedBatchNormEx --------------------------------------------
def _bn_relu(x, channels, name, **kw):
    scale = tf.constant(RNG.uniform(0.5, 1.5, channels).astype(np.float32))
    offset = tf.constant(RNG.randn(channels).astype(np.float32))
    y, mean, var = tf.nn.fused_batch_norm(x, scale, offset, name=name + "_bn", **kw)
    return tf.nn.relu(y, name=name), mean, var


def test_a_training_batch_norm_and_its_relu_become_one_node(graph):
    x = tf.placeholder(tf.float32, [2, 4, 4, 3], name="x")
    out, mean, var = _bn_relu(x, 3, "act")
    total = tf.reduce_sum(out) + tf.reduce_sum(mean) + tf.reduce_sum(var)
    sg = opt.fuse_batch_norm_relu(step_graph([total], feeds=[x]), lambda n: True)
    kinds = [n.type for n in sg.nodes]
    assert "_FusedBatchNormEx" in kinds and not {"FusedBatchNormV3", "Relu"} & set(kinds)
    node = next(n for n in sg.nodes if n.type == "_FusedBatchNormEx")
    assert node.name == "act" and node.attrs["activation_mode"] == "Relu"
    assert node.attrs["num_side_inputs"] == 0 and node.n_out == 6
    read = sorted(i for n in sg.nodes for p, i in n.inputs if p is node)
    assert read == [0, 1, 2]  # y, and the statistics the sums read


def test_batch_norms_whose_y_others_read_or_in_inference_stay(graph):
    x = tf.placeholder(tf.float32, [2, 4, 4, 3], name="x")
    out, _, _ = _bn_relu(x, 3, "a")
    also_y = out.op.inputs[0] * 2.0  # y read by the Relu and by another op
    inference, _, _ = _bn_relu(x, 3, "b", mean=np.zeros(3, np.float32),
                               variance=np.ones(3, np.float32), is_training=False)
    sg = opt.fuse_batch_norm_relu(step_graph([out, also_y, inference], feeds=[x]),
                                  lambda n: True)
    assert "_FusedBatchNormEx" not in {n.type for n in sg.nodes}


def _bn_layer(rs):
    """A batch-normalized ReLU layer over a convolution (its output fetched too)."""
    x = tf.constant(rs.randn(8, 16, 16, 3).astype(np.float32))  # 32768 values a channel
    w = tf.Variable(rs.randn(3, 3, 3, 16).astype(np.float32) * 0.2)
    scale = tf.Variable(rs.uniform(0.5, 1.5, 16).astype(np.float32))
    offset = tf.Variable(rs.randn(16).astype(np.float32) * 0.1)
    y, mean, _ = tf.nn.fused_batch_norm(tf.nn.conv2d(x, w, 1, "SAME"), scale, offset)
    out = tf.nn.relu(y)
    return tf.reduce_sum(tf.square(out - 0.5)) + tf.reduce_sum(mean), [w, scale, offset, out]


@pytest.mark.usefixtures("conv_kernels")
def test_fused_batch_norm_relu_training_gives_the_unfused_values():
    _assert_fusing_keeps_the_values(_bn_layer, "_FusedBatchNormEx")


def test_a_nan_in_the_batch_stays_nan_through_the_fused_relu(sess):
    x0 = np.random.RandomState(5).randn(8, 16, 16, 16).astype(np.float32)
    x0[3, 4, 5, 6] = np.nan  # channel 6: NaN statistics, so NaN everywhere (TF's Relu)
    scale, offset = np.ones(16, np.float32), np.zeros(16, np.float32)
    op = apply_op("_FusedBatchNormEx", [x0, scale, offset, np.zeros(0, np.float32),
                                        np.zeros(0, np.float32), []],
                  {"activation_mode": "Relu", "epsilon": 0.001}, name="ex")
    y = sess.run(op.outputs[0])
    assert np.isnan(y[..., 6]).all() and not np.isnan(np.delete(y, 6, axis=3)).any()


@pytest.mark.usefixtures("conv_kernels")
@pytest.mark.parametrize("mode", ["Identity", "Relu"])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_ex_kernel(sess, mode, data_format):
    rs = np.random.RandomState(6)
    x0 = (rs.randn(8, 16, 16, 16) * 2 + 0.3).astype(np.float32)
    scale, offset = rs.uniform(0.5, 1.5, 16).astype(np.float32), rs.randn(16).astype(np.float32)
    xin = x0 if data_format == "NHWC" else np.ascontiguousarray(np.moveaxis(x0, 3, 1))
    op = apply_op("_FusedBatchNormEx", [xin, scale, offset, np.zeros(0, np.float32),
                                        np.zeros(0, np.float32), []],
                  {"activation_mode": mode, "epsilon": 0.001, "data_format": data_format},
                  name="ex")
    y, mean, var = sess.run(op.outputs[:3])
    x64 = x0.astype(np.float64)
    m, v = x64.mean((0, 1, 2)), x64.var((0, 1, 2))
    want = (x64 - m) / np.sqrt(v + 0.001) * scale + offset
    if mode == "Relu":
        want = np.maximum(want, 0)
    if data_format == "NCHW":
        y = np.moveaxis(y, 1, 3)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, m, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var, v * x0[..., 0].size / (x0[..., 0].size - 1), rtol=1e-4)


def test_fused_batch_norm_ex_kernel_errors(sess):
    x = np.ones((1, 2, 2, 2), np.float32)
    args = [x, np.ones(2, np.float32), np.zeros(2, np.float32), np.zeros(0, np.float32),
            np.zeros(0, np.float32)]
    elu = apply_op("_FusedBatchNormEx", args + [[]], {"activation_mode": "Elu"}, name="elu")
    with pytest.raises(errors.UnimplementedError, match="activation_mode Elu"):
        sess.run(elu.outputs[0])
    side = apply_op("_FusedBatchNormEx", args + [[x]],
                    {"activation_mode": "Relu", "num_side_inputs": 1}, name="side")
    with pytest.raises(errors.UnimplementedError, match="1 side inputs"):
        sess.run(side.outputs[0])


# --- Sum(Cast(bool)) -> _CountTrue ------------------------------------------------------
def test_a_sum_of_a_cast_of_bool_becomes_one_count_node(graph):
    x = tf.placeholder(tf.float32, [4, 300], name="x")
    count = tf.reduce_sum(tf.cast(x > 0.5, tf.float32), 1, name="count")
    sg = opt.fuse_count_true(step_graph([count], feeds=[x]), lambda n: True)
    kinds = [n.type for n in sg.nodes]
    assert "_CountTrue" in kinds and not {"Cast", "Sum"} & set(kinds)
    node = next(n for n in sg.nodes if n.type == "_CountTrue")
    assert node.name == "count" and node.inputs[0][0].type == "Greater"
    assert node.attrs["T"] == tf.float32 and sg.fetches == [(node, 0)]


def test_casts_others_read_or_wait_for_stay(graph):
    x = tf.placeholder(tf.float32, [4, 300], name="x")
    fetched = tf.cast(x > 0.5, tf.float32)
    read_twice = tf.cast(x > 0.1, tf.float32)
    waited = tf.cast(x > 0.2, tf.float32)
    with tf.control_dependencies([waited]):
        marker = tf.constant(1.0)
    sums = [tf.reduce_sum(c) for c in (fetched, read_twice, waited)]
    sg = opt.fuse_count_true(step_graph(sums + [fetched, read_twice * 2.0, marker],
                                        feeds=[x]), lambda n: True)
    assert "_CountTrue" not in {n.type for n in sg.nodes}


def test_plans_count_only_casts_of_bool_to_exact_types_on_the_cpu(graph):
    x = tf.placeholder(tf.float32, [4, 300])
    halves = tf.reduce_sum(tf.cast(x > 0.5, tf.float16))     # counts above 2048 round
    of_ints = tf.reduce_sum(tf.cast(tf.cast(x, tf.int32), tf.float32))
    sg = step_graph([halves, of_ints], feeds=[x])
    with tf.Session() as sess:
        plan_module.place(sg, sess._device_manager, True)
    sg = opt.fuse_count_true(sg, plan_module._fusable_count)
    assert "_CountTrue" not in {n.type for n in sg.nodes}


_COUNT_CASES = [(t, a, k) for t in (np.float32, np.float64, np.int32, np.int64)
                for a, k in (((2,), False), ((1, 2), True), ((0,), False), (None, False),
                             ((-1,), True))]


def _counts(remap: bool, values: np.ndarray):
    """Sums of casts of `values > 0.3` over several axes to several types, run with the
    remapper on or off: the sums and the op types the partition graphs ran."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, values.shape)
        mask = x > 0.3
        axes = tf.placeholder(tf.int32, [None])
        sums = [tf.reduce_sum(tf.cast(mask, t), a, keepdims=k) for t, a, k in _COUNT_CASES]
        sums.append(tf.reduce_sum(tf.cast(mask, tf.float32), axes))
        config = tf.ConfigProto()
        if not remap:
            config.graph_options.rewrite_options.remapping = 2  # RewriterConfig.OFF
        meta = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            out = sess.run(sums, {x: values, axes: [0, 2]},
                           options=tf.RunOptions(output_partition_graphs=True),
                           run_metadata=meta)
    return out, {node.op for pg in meta.partition_graphs for node in pg.node}


@pytest.mark.parametrize("shape", [(3, 4, 520), (2, 3, 5), (2, 2, 255 * 8 * 2 + 16)])
def test_counts_are_the_sums_values(shape):
    values = np.random.RandomState(3).rand(*shape).astype(np.float32)
    counted, fused_ops = _counts(True, values)
    summed, plain_ops = _counts(False, values)
    assert "_CountTrue" in fused_ops and "_CountTrue" not in plain_ops
    mask = values > 0.3
    expected = [np.sum(mask, axis=a, keepdims=k).astype(t) for t, a, k in _COUNT_CASES]
    expected.append(np.sum(mask, axis=(0, 2)).astype(np.float32))
    for got, plain, want in zip(counted, summed, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want) and np.array_equal(plain, want)


def test_counts_beyond_the_types_exact_integers_are_cast_and_summed(monkeypatch):
    # float32 counts past 2**24 are no longer exact: the kernel sums the cast values,
    # rounding as the Sum does (checked here with a lower limit)
    monkeypatch.setitem(reduction_ops._EXACT_COUNT, np.dtype(np.float32), 100)
    values = np.random.RandomState(4).rand(2, 3, 520).astype(np.float32)
    counted, fused_ops = _counts(True, values)
    summed, _ = _counts(False, values)
    assert "_CountTrue" in fused_ops
    for got, plain in zip(counted, summed):
        assert got.dtype == plain.dtype and np.array_equal(got, plain)


@pytest.mark.parametrize("shape,axes", [
    ((200, 5120), (1,)), ((3, 4, 512), (1, 2)), ((7, 1000), (1,)), ((5, 6), (0,)),
    ((2, 300, 8), (2,)), ((4, 255 * 8 * 3 + 16), (1,)), ((3, 255 * 8), (1,)), ((0, 512), (1,)),
    ((4, 512), (0, 1))])
def test_count_true_counts_like_numpy(shape, axes):
    rs = np.random.RandomState(len(shape) + shape[-1])
    x = rs.rand(*shape) > rs.rand()
    for keep in (False, True):
        for arr in (x, np.asfortranarray(x)):
            got = reduction_ops.count_true(arr, axes, keep)
            want = np.sum(arr, axis=axes, keepdims=keep)
            assert got.dtype == np.int64 and got.shape == want.shape
            assert np.array_equal(got, want)


def test_auc_runs_counted_and_gives_the_summed_values():
    def auc(remap):
        rs = np.random.RandomState(6)
        with tf.Graph().as_default():
            labels = tf.placeholder(tf.bool, [512])
            scores = tf.placeholder(tf.float32, [512])
            feed = {labels: rs.rand(512) > 0.6, scores: rs.rand(512).astype(np.float32)}
            value, update = tf.metrics.auc(labels, scores, num_thresholds=300)
            config = tf.ConfigProto()
            if not remap:
                config.graph_options.rewrite_options.remapping = 2
            with tf.Session(config=config) as sess:
                sess.run(tf.local_variables_initializer())
                for _ in range(3):
                    sess.run(update, feed)
                return sess.run(value)
    assert auc(True) == auc(False)
