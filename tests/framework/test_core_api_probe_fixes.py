"""Fixes from a probe of the core graph API against TF 2.21 (`tensorflow.compat.v1` with
`disable_v2_behavior()`): which graph an op is built in, node-name and set_shape
messages, Operation.run without a session, import_graph_def's checks, graph_util's
type errors, the tf.errors constructors and Dimension division. Every expected class
and message is what TF 2.21 gave."""
import re

import numpy as np
import pytest

import tensorweave as tf


# --- an op is built in its inputs' graph ---------------------------------------------
def test_op_is_built_in_its_inputs_graph_not_the_default(graph):
    a = tf.constant(1, name="a")
    with tf.Graph().as_default() as other:
        with tf.name_scope("s"):  # the other graph's scope: not applied (TF gives "Add")
            c = tf.add(a, 1)
    assert c.graph is graph and c.name == "Add:0"
    assert [op.name for op in graph.get_operations()] == ["a", "Add/y", "Add"]
    assert other.get_operations() == []
    with tf.Session(graph=graph) as sess:
        assert sess.run(c) == 2


def test_inputs_from_two_graphs_are_refused_naming_both(graph):
    a = tf.constant(1, name="a")
    with tf.Graph().as_default():
        b = tf.constant(2, name="b")
        for build in (lambda: tf.add(a, b), lambda: tf.add_n([b, a])):
            with pytest.raises(ValueError, match=re.escape(
                    'must be from the same graph as Tensor("')):
                build()


def test_control_dependency_on_another_graphs_tensor(graph):
    a = tf.constant(1, name="a")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=re.escape(
                'Tensor Tensor("a:0", shape=(), dtype=int32) is not an element of this '
                'graph.')):
            with tf.control_dependencies([a]):
                pass


# --- names and static shapes -------------------------------------------------------------
def test_invalid_node_name_message(graph):
    with pytest.raises(ValueError, match=re.escape(
            "`bad name` is not a valid node name. Accepted names conform to Regex "
            r"/re.compile('^[A-Za-z0-9.][A-Za-z0-9_.\\\\/>-]*$')/")):
        tf.constant(1, name="bad name")
    # TF's pattern takes a backslash after the first character
    assert tf.constant(1, name="a\\b").op.name == "a\\b"


def test_set_shape_names_the_dimension_or_the_ranks(graph):
    p = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match=re.escape(
            "Dimension 1 in both shapes must be equal, but are 3 and 4. Shapes are [?,3] "
            "and [2,4].")):
        p.set_shape([2, 4])
    with pytest.raises(ValueError, match="^Shapes must be equal rank, but are 2 and 1$"):
        p.set_shape([2])
    p.set_shape([2, None])
    assert p.shape.as_list() == [2, 3]


def test_operation_run_without_a_session_says_run(graph):
    with pytest.raises(ValueError, match=re.escape(
            "Cannot execute operation using `run()`: No default session is registered. "
            "Use `with sess.as_default():` or pass an explicit session to "
            "`run(session=sess)`")):
        tf.no_op().run()
    with pytest.raises(ValueError, match=re.escape(
            "Cannot evaluate tensor using `eval()`: No default session")):
        tf.constant(1).eval()
    op = tf.no_op()
    with tf.Session(graph=tf.Graph()) as other:
        with pytest.raises(ValueError, match="Cannot use the given session to execute "
                                             "operation: the operation's graph"):
            op.run(session=other)
        with pytest.raises(ValueError, match="Cannot use the default session to execute "
                                             "operation: the operation's graph"):
            op.run()


# --- import_graph_def -----------------------------------------------------------------------
def _matmul_graph_def():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.matmul(x, tf.constant([[1., 2.], [3., 4.]], name="w"), name="y")
    return g.as_graph_def()


def test_import_refuses_an_input_map_tensor_of_another_dtype(graph):
    gd = _matmul_graph_def()
    with pytest.raises(ValueError, match=re.escape(
            "Input 0 of node import/y was passed int32 from Const:0 incompatible with "
            "expected float.")):
        tf.import_graph_def(gd, input_map={"x:0": tf.constant([[2, 0]])})
    # a Python value becomes a constant under the import's "_inputs" scope, as in TF
    with pytest.raises(ValueError, match="passed int32 from import_1/_inputs/Const:0"):
        tf.import_graph_def(gd, input_map={"x:0": 3})


def test_import_maps_a_python_value_to_a_constant(graph):
    y, = tf.import_graph_def(_matmul_graph_def(), input_map={"x:0": [[1., 1.]]},
                             return_elements=["y:0"], name="m")
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y), [[4., 6.]])  # [1, 1] @ [[1, 2], [3, 4]]


def test_import_return_element_and_input_messages(graph):
    gd = _matmul_graph_def()
    cases = [("nope:0", "Requested return tensor 'nope:0' not found in graph def"),
             ("nope", "Requested return node 'nope' not found in graph def"),
             ("y:3", "Invalid return output 3 of node 'y', which has 1 output(s)")]
    for name, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            tf.import_graph_def(gd, return_elements=[name])
    del gd.node[0]  # x
    with pytest.raises(ValueError, match=re.escape("Node 'y': Unknown input node 'x'")):
        tf.import_graph_def(gd)


def test_import_of_an_unregistered_op_is_not_found(graph):
    gd = _matmul_graph_def()
    gd.node[1].op = "NoSuchOp"
    with pytest.raises(tf.errors.NotFoundError,
                       match="^Op type not registered 'NoSuchOp' in binary running on "):
        tf.import_graph_def(gd)


# --- graph_util ------------------------------------------------------------------------------
def test_extract_sub_graph_type_errors_name_the_type(graph):
    tf.constant(1, name="c")
    with pytest.raises(TypeError, match=re.escape(
            "dest_nodes must be an iterable of strings, but got type <class 'str'>.")):
        tf.graph_util.extract_sub_graph(graph.as_graph_def(), "c")
    with pytest.raises(TypeError, match=re.escape(
            "graph_def must be a graph_pb2.GraphDef proto, but got type <class 'str'>.")):
        tf.graph_util.extract_sub_graph("x", ["c"])


# --- tf.errors and Dimension --------------------------------------------------------------
def test_error_classes_require_node_def_op_and_message():
    with pytest.raises(TypeError, match=re.escape(
            "AbortedError.__init__() missing 2 required positional arguments: 'op' and "
            "'message'")):
        tf.errors.AbortedError("hi")
    e = tf.errors.AbortedError(node_def=None, op=None, message="hi")
    assert (e.message, e.error_code, str(e)) == ("hi", tf.errors.ABORTED, "hi")


def test_dimension_true_division_and_bad_values():
    with pytest.raises(TypeError, match=re.escape(
            "unsupported operand type(s) for /: 'Dimension' and 'int', please use // "
            "instead")):
        tf.Dimension(4) / 2
    with pytest.raises(TypeError, match=re.escape(
            "unsupported operand type(s) for /: 'int' and 'Dimension', please use //")):
        8 / tf.Dimension(4)
    assert (tf.Dimension(7) // 2).value == 3
    with pytest.raises(TypeError, match=re.escape(
            "Dimension value must be integer or None or have an __index__ method, got "
            "value '1.5' with type '<class 'float'>'")):
        tf.Dimension(1.5)


# --- Graph.create_op, tf.is_tensor, tensor names -------------------------------------------
def test_create_op_takes_attr_value_messages_and_infers_shapes(graph):
    a = tf.constant([1.5, 2.0])
    attrs = {"SrcT": tf.AttrValue(type=tf.float32.as_datatype_enum),
             "DstT": tf.AttrValue(type=tf.int32.as_datatype_enum)}
    op = graph.create_op("Cast", [a], [tf.int32], attrs=attrs, name="cast")
    assert op.get_attr("DstT") == tf.int32
    assert str(op.outputs[0]) == 'Tensor("cast:0", shape=(2,), dtype=int32)'  # as TF's
    ident = graph.create_op("Identity", [a], [tf.float32], name="idn")
    assert ident.outputs[0].shape.as_list() == [2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(op.outputs[0]), [1, 2])  # truncated


def test_is_tensor_counts_composite_tensors(graph):
    a = tf.constant([1.0])
    assert tf.is_tensor(tf.SparseTensor([[0]], [1], [1]))
    assert tf.is_tensor(tf.IndexedSlices(a, tf.constant([0])))
    assert tf.is_tensor(tf.ragged.constant([[1]]))
    assert tf.is_tensor(tf.Variable(1.0)) and tf.is_tensor(a)
    assert not tf.is_tensor(tf.SparseTensorValue([[0]], [1], [1]))
    assert not tf.is_tensor(a.op) and not tf.is_tensor(1)


def test_malformed_tensor_name_says_the_form(graph):
    tf.constant(1, name="c")
    for name in ("c:x", "c:0:1"):
        with pytest.raises(ValueError, match=re.escape(
                "The name '%s' looks a like a Tensor name, but is not a valid one. Tensor "
                'names must be of the form "<op_name>:<output_index>".' % name)):
            graph.get_tensor_by_name(name)


def _identity_graph_def():
    with tf.Graph().as_default() as g:
        tf.identity(tf.placeholder(tf.float32, [1, 2], name="x"), name="y")
    return g.as_graph_def()


def test_import_checks_each_node_against_its_op(graph):
    gd = _identity_graph_def()
    gd.node[1].attr["T"].type = tf.int32.as_datatype_enum
    with pytest.raises(ValueError, match=re.escape(
            "Input 0 of node import/y was passed float from import/x:0 incompatible with "
            "expected int32.")):
        tf.import_graph_def(gd)
    gd = _identity_graph_def()
    gd.node[1].input.append("x")
    with pytest.raises(ValueError, match=re.escape(
            "NodeDef expected inputs 'float' do not match 2 inputs specified")):
        tf.import_graph_def(gd)
    gd = _identity_graph_def()
    del gd.node[0].attr["dtype"]
    with pytest.raises(ValueError, match="^NodeDef missing attr 'dtype' from Op<name=Placeholder"):
        tf.import_graph_def(gd)
    gd = _identity_graph_def()
    gd.node.extend([gd.node[0]])
    with pytest.raises(ValueError, match="^Node 'x' is not unique$"):
        tf.import_graph_def(gd)


def test_import_checks_input_map_as_tf(graph):
    gd = _identity_graph_def()
    with pytest.raises(ValueError, match=re.escape(
            "Attempted to map inputs that were not found in graph_def: [x:1]")):
        tf.import_graph_def(gd, input_map={"x:1": tf.constant([[1., 2.]])})
    with pytest.raises(TypeError, match=re.escape(
            "Argument `input_map` must be a dictionary. Obtained list")):
        tf.import_graph_def(gd, input_map=[1])
    with pytest.raises(TypeError, match=re.escape(
            "All keys for argument `input_map` must be strings. Obtained keys: [1]")):
        tf.import_graph_def(gd, input_map={1: tf.constant(1.)})


def test_get_attr_gives_shapes_as_tensor_shape_protos(graph):
    p = tf.placeholder(tf.float32, [None, 3], name="p")
    shape = p.op.get_attr("shape")
    assert type(shape).__name__ == "TensorShapeProto"  # as TF's, not a TensorShape
    assert [d.size for d in shape.dim] == [-1, 3] and not shape.unknown_rank
    assert tf.TensorShape(shape).as_list() == [None, 3]
    assert tf.placeholder(tf.float32).op.get_attr("shape").unknown_rank
    q = tf.FIFOQueue(2, [tf.float32, tf.int32], shapes=[[2], []])
    shapes = q.queue_ref.op.get_attr("shapes")
    assert [[d.size for d in s.dim] for s in shapes] == [[2], []]
