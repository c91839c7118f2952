"""Run-time errors say where (runtime/provenance.py): the failing op, the user line that
created it, the cond branch and each enclosing loop with its iteration, on every
executor (structured, tagged, traced, partitioned, the fast paths without loops)."""
import pytest

import tensorweave as tf
from tensorweave.framework import errors

EXECUTORS = ["structured", "tagged", "structured-traced", "tagged-traced", "partitioned"]


@pytest.fixture(params=EXECUTORS)
def run_on(request, monkeypatch):
    """A `run(graph, fetch, feed)` on one executor: TW_EXECUTOR picks the tagged
    executor; a traced run records every op; "partitioned" splits the loop over two
    CPU devices (partitioned_plan, Send/Recv keyed by frame and iteration)."""
    kind = request.param
    if kind.startswith("tagged"):
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    if kind == "partitioned":
        monkeypatch.setenv("TW_FUSE_HOST_PARTITIONS", "0")

    def run(graph, fetch, feed=None):
        config = tf.ConfigProto(device_count={"CPU": 2}) if kind == "partitioned" else None
        with tf.Session(graph=graph, config=config) as sess:
            if kind.endswith("traced"):
                return sess.run(fetch, feed, options=tf.RunOptions(trace_level=3),
                                run_metadata=tf.RunMetadata())
            return sess.run(fetch, feed)
    run.kind = kind
    return run


def _rnn_loop(second_device: bool):
    """A loop named rnn/while whose reshape fails at iteration 17 only: the shape comes
    from a cond on the loop counter."""
    def body(i, acc):
        shape = tf.cond(tf.equal(i, 17), lambda: tf.constant([4, -1]),
                        lambda: tf.constant([2, -1]))
        with tf.device("/cpu:1" if second_device else None):
            r = tf.reshape(tf.ones([6]), shape)  # reshape17
        return i + 1, acc + tf.reduce_sum(r)
    with tf.name_scope("rnn"):
        return tf.while_loop(lambda i, a: i < 20, body, [tf.constant(0), tf.constant(0.0)])


def test_shape_error_at_iteration_17_names_op_line_and_iteration(run_on, where):
    g = tf.Graph()
    with g.as_default():
        out = _rnn_loop(run_on.kind == "partitioned")
    with pytest.raises(errors.InvalidArgumentError) as info:
        run_on(g, out)
    assert type(info.value) is errors.InvalidArgumentError
    assert info.value.op is g.get_operation_by_name("rnn/while/Reshape")
    # a partitioned step also says which partition failed
    partition = "\n\t [[partition on device /job:localhost/replica:0/task:0/device:CPU:1]]"
    assert str(info.value) == (
        "Input to reshape is a tensor with 6 values, but the requested shape requires a "
        "multiple of 4\n"
        "\t [[node rnn/while/Reshape (defined at %s) ]]\n"
        "\t in while/body at iteration 17 of loop \"rnn/while\"%s" % (
            where("reshape17"), partition if run_on.kind == "partitioned" else ""))


def _helper_reshape(x, n):
    return tf.reshape(x, tf.stack([n, -1]))  # helper


def test_nested_loops_and_cond_branch_name_every_level(run_on, where):
    g = tf.Graph()
    with g.as_default():
        k = tf.placeholder(tf.int32, [], name="k")

        def outer(i, a):
            def inner(j, b):
                x = tf.cond(tf.logical_and(tf.equal(i, 2), tf.equal(j, 3)),
                            lambda: _helper_reshape(tf.ones([6]), k),
                            lambda: _helper_reshape(tf.ones([6]), 2))
                return j + 1, b + tf.reduce_sum(x)
            _, b = tf.while_loop(lambda j, b: j < 5, inner, [0, a], name="inner")
            return i + 1, b
        out = tf.while_loop(lambda i, a: i < 4, outer, [0, 0.0], name="outer")
    with pytest.raises(errors.InvalidArgumentError) as info:
        run_on(g, out, {k: 4})
    # the line is the user's helper, not a tensorweave frame
    assert str(info.value) == (
        "Input to reshape is a tensor with 6 values, but the requested shape requires a "
        "multiple of 4\n"
        "\t [[node outer/inner/cond/Reshape (defined at %s) ]]\n"
        "\t in the true branch of cond \"outer/inner/cond\"\n"
        "\t in while/body at iteration 3 of loop \"outer/inner\"\n"
        "\t in while/body at iteration 2 of loop \"outer\"" % where("helper"))


def test_op_of_the_loop_predicate_is_in_while_cond(run_on, where):
    g = tf.Graph()
    with g.as_default():
        k = tf.placeholder(tf.int32, [], name="k")

        def cond(i):
            size = tf.where(tf.equal(i, 5), k, 1)
            return tf.reduce_sum(tf.reshape(tf.ones([1]), [size])) + i < 9  # in_cond
        out = tf.while_loop(cond, lambda i: i + 1.0, [0.0])
    with pytest.raises(errors.InvalidArgumentError) as info:
        run_on(g, out, {k: 3})
    assert str(info.value).endswith(
        "\t [[node while/Reshape (defined at %s) ]]\n"
        "\t in while/cond at iteration 5 of loop \"while\"" % where("in_cond"))


@pytest.mark.parametrize("taken", [True, False])
def test_cond_branch_without_loops(sess, taken, where):
    p = tf.placeholder(tf.bool, [])
    k = tf.placeholder(tf.int32, [])
    out = tf.cond(p, lambda: _helper_reshape(tf.ones([6]), k),
                  lambda: _helper_reshape(tf.ones([6]), k + 1))
    with pytest.raises(errors.InvalidArgumentError) as info:
        sess.run(out, {p: taken, k: 4 if taken else 3})
    op_name = "cond/Reshape" if taken else "cond/Reshape_1"
    assert str(info.value).endswith(
        "\t [[node %s (defined at %s) ]]\n"
        "\t in the %s branch of cond \"cond\"" % (op_name, where("helper"),
                                                  "true" if taken else "false"))


def test_root_frame_error_has_no_control_flow_lines(sess, where):
    k = tf.placeholder(tf.int32, [])
    out = tf.reshape(tf.ones([6]), tf.stack([k, -1]))  # root_reshape
    with pytest.raises(errors.InvalidArgumentError) as info:
        sess.run(out, {k: 4})
    assert str(info.value).endswith(
        "\t [[node Reshape (defined at %s) ]]" % where("root_reshape"))


def test_kernel_raising_its_own_op_error_keeps_class_and_message(run_on, where):
    g = tf.Graph()
    with g.as_default():
        def body(i, acc):
            v = tf.log(tf.cast(3 - i, tf.float32))
            return i + 1, acc + tf.check_numerics(v, "log of the countdown")  # checked
        out = tf.while_loop(lambda i, a: i < 5, body, [0, 0.0])
    with pytest.raises(errors.InvalidArgumentError) as info:
        run_on(g, out)
    assert str(info.value) == (
        "log of the countdown : Tensor had Inf values\n"
        "\t [[node while/CheckNumerics (defined at %s) ]]\n"
        "\t in while/body at iteration 3 of loop \"while\"" % where("checked"))


def test_other_error_classes_are_kept(sess):
    q = tf.FIFOQueue(1, tf.float32)
    closed = q.close()
    take = tf.cond(tf.constant(True), lambda: q.dequeue(), lambda: tf.constant(0.0))
    sess.run(closed)
    with pytest.raises(errors.OutOfRangeError) as info:
        sess.run(take)
    assert type(info.value) is errors.OutOfRangeError
    assert str(info.value).endswith("\t in the true branch of cond \"cond\"")


def test_loops_run_unchanged_without_errors(run_on):
    g = tf.Graph()
    with g.as_default():
        k = tf.placeholder(tf.int32, [], name="k")

        def body(i, acc):
            return i + 1, acc + tf.reduce_sum(_helper_reshape(tf.ones([6]), k))
        out = tf.while_loop(lambda i, a: i < 20, body, [0, 0.0])
    assert run_on(g, out, {k: 3}) == (20, 120.0)


def test_imported_graph_names_loop_frames_by_name(run_on, where):
    built = tf.Graph()
    with built.as_default():
        k = tf.placeholder(tf.int32, [], name="k")

        def body(i, a):
            size = tf.where(tf.equal(i, 2), k, 3)
            return i + 1, a + tf.reduce_sum(tf.reshape(tf.ones([6]), tf.stack([size, -1])))
        tf.while_loop(lambda i, a: i < 5, body, [0, 0.0], name="loop")
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(built.as_graph_def(), name="")  # imported
    with pytest.raises(errors.InvalidArgumentError) as info:
        run_on(g, "loop/Exit_1:0", {"k:0": 4})
    # the import rebuilt the loop's context (imported_contexts.py): named as if built here
    assert "\t [[node loop/Reshape (defined at %s) ]]\n" \
           "\t in while/body at iteration 2 of loop \"loop\"" % where("imported") \
        in str(info.value)
