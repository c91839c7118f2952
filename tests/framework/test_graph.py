"""Graph, Operation and Tensor: names, scopes, devices, control deps, collections."""
import numpy as np
import pytest

import tensorweave as tf


def test_unique_names_and_name_scopes(graph):
    assert tf.constant(1.0, name="foo").op.name == "foo"
    assert tf.constant(1.0, name="foo").op.name == "foo_1"
    with tf.name_scope("a"):
        assert tf.constant(1.0, name="x").op.name == "a/x"
        with tf.name_scope("b") as scope:
            assert scope == "a/b/"
            assert tf.no_op(name="n").name == "a/b/n"
    with tf.name_scope("a"):
        assert tf.constant(1.0, name="x").op.name == "a_1/x"
    with tf.name_scope("a/"):  # absolute re-entry
        assert tf.constant(1.0, name="y").op.name == "a/y"
    with tf.name_scope(None):
        assert tf.constant(1.0, name="z").op.name == "z"
    assert tf.get_default_graph() is graph


def test_default_graph_stack_and_reset():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        assert tf.get_default_graph() is g1
        with g2.as_default():
            assert tf.constant(0).graph is g2
        assert tf.get_default_graph() is g1


def test_mixing_graphs_raises(graph):
    other = tf.Graph()
    with other.as_default():
        x = tf.constant(1.0)
    assert tf.identity(x).graph is other  # as TF1: an op goes where its inputs live
    with pytest.raises(ValueError, match="same graph"):
        tf.identity_n([x, tf.constant(2.0)])


def test_device_scopes_merge_and_functions(graph):
    with tf.device("/job:worker/task:1"):
        with tf.device("/cpu:0"):
            a = tf.constant(1.0)
        with tf.device(None):
            b = tf.constant(1.0)
    assert a.device == "/job:worker/task:1/device:CPU:0"
    assert b.device == ""
    with tf.device(lambda op: "/cpu:0" if op.type == "Const" else ""):
        c = tf.constant(1.0)
        n = tf.no_op()
    assert c.device == "/cpu:0" and n.device == ""  # TF1 keeps a function's string
    assert tf.DeviceSpec.from_string("/job:ps/replica:0/task:2/device:CPU:3").task == 2


def test_control_dependencies_nesting_and_clearing(graph):
    a, b = tf.no_op(name="a"), tf.no_op(name="b")
    with tf.control_dependencies([a]):
        c = tf.constant(1.0)
        with tf.control_dependencies([b]):
            d = tf.constant(2.0)
            with tf.control_dependencies(None):
                e = tf.constant(3.0)
    assert c.op.control_inputs == [a]
    assert set(d.op.control_inputs) == {a, b}
    assert e.op.control_inputs == []
    with pytest.raises(TypeError):
        with tf.control_dependencies([1.5]):
            pass


def test_colocate_with(graph):
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.identity(a)
    assert b.op.colocation_groups() == [b"loc:@a"]
    assert b.device == a.device


def test_collections(graph):
    tf.add_to_collection("things", 1)
    tf.add_to_collections(["things", "other"], 2)
    assert tf.get_collection("things") == [1, 2]
    ref = tf.get_collection_ref("things")
    ref.append(3)
    assert tf.get_collection("things") == [1, 2, 3]
    with tf.name_scope("s"):
        c = tf.constant(1.0, name="c")
    tf.add_to_collection("ts", c)
    tf.add_to_collection("ts", tf.constant(2.0, name="d"))
    assert tf.get_collection("ts", scope="s") == [c]
    assert tf.GraphKeys.GLOBAL_VARIABLES == "variables"


def test_lookup_by_name(graph):
    c = tf.constant([1, 2], name="c")
    assert graph.get_tensor_by_name("c:0") is c
    assert graph.get_operation_by_name("c") is c.op
    assert graph.as_graph_element("c:0") is c
    assert graph.get_operations() == [c.op]
    with pytest.raises(KeyError):
        graph.get_tensor_by_name("c:1")
    with pytest.raises(KeyError):
        graph.get_operation_by_name("nope")
    with pytest.raises(ValueError):
        graph.get_tensor_by_name("c")


def test_finalize(graph):
    tf.constant(1.0)
    graph.finalize()
    assert graph.finalized
    with pytest.raises(RuntimeError, match="finalized"):
        tf.constant(2.0)


def test_operation_and_tensor_properties(graph):
    p = tf.placeholder(tf.float32, [None, 3], name="p")
    i = tf.identity(p, name="i")
    assert i.op.type == "Identity" and i.op.inputs[0] is p and i.op.outputs == [i]
    assert i.name == "i:0" and i.value_index == 0 and i.dtype == tf.float32
    assert i.get_shape().as_list() == [None, 3]
    assert p.consumers() == [i.op]
    assert i.op.get_attr("T") == tf.float32
    with pytest.raises(ValueError, match="no attr named"):
        i.op.get_attr("nope")
    i.set_shape([2, 3])
    assert i.shape.as_list() == [2, 3]
    with pytest.raises(ValueError):
        i.set_shape([2, 4])
    with pytest.raises(TypeError, match="bool"):
        bool(i)
    assert i.op.traceback_location[0].endswith("test_graph.py")


def test_tensor_eval_and_op_run_use_default_session(graph):
    c = tf.constant(np.array([1.0, 2.0], np.float32))
    with tf.Session() as sess:
        np.testing.assert_array_equal(c.eval(), [1.0, 2.0])
        assert tf.no_op().run() is None
        assert tf.get_default_session() is sess
    with pytest.raises(ValueError, match="No default session"):
        c.eval()


def test_graph_seed_property(graph):
    assert graph.seed is None
    graph.seed = 7
    assert graph.seed == 7


def test_ops_on_tensors_of_another_graph_are_built_in_that_graph():
    """As in TF: `y = x * 2` after leaving `with g.as_default()` builds in x's graph,
    constants included, and adds nothing to the default graph."""
    g = tf.Graph()
    with g.as_default():
        m = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="m")
    other = tf.Graph()
    with other.as_default():
        outs = [m + 1.0, 2.0 * m, -m, tf.transpose(m), tf.matmul(m, m), tf.nn.relu(m)]
    assert all(t.graph is g for t in outs)
    assert other.get_operations() == []
    with tf.Session(graph=g) as sess:
        assert sess.run(outs[0]).tolist() == [[2.0, 3.0], [4.0, 5.0]]
        assert sess.run(outs[3]).tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_str_of_a_tensor_of_unknown_shape_leaves_the_shape_out(graph):
    assert str(tf.placeholder(tf.float32, name="p")) == 'Tensor("p:0", dtype=float32)'
    assert str(tf.placeholder(tf.float32, [None, 2], name="q")) == \
        'Tensor("q:0", shape=(?, 2), dtype=float32)'


def test_each_thread_has_its_own_default_graph():
    # TF1's default graph stack and global default graph are per thread: a new thread
    # sees neither the global default graph of the thread that started it nor a graph
    # entered there with as_default()
    import threading
    main_default = tf.get_default_graph()
    seen = {}

    def look(key):
        seen[key] = tf.get_default_graph()
        seen[key + " again"] = tf.get_default_graph()

    t = threading.Thread(target=look, args=("from the global",))
    t.start()
    t.join()
    entered = tf.Graph()
    with entered.as_default():
        t = threading.Thread(target=look, args=("from an entered graph",))
        t.start()
        t.join()
    assert tf.get_default_graph() is main_default
    for key in ("from the global", "from an entered graph"):
        assert seen[key] is not main_default and seen[key] is not entered
        assert seen[key] is seen[key + " again"]  # one default graph per thread
