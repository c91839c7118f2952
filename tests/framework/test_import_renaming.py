"""tf.import_graph_def into a graph that already holds the GraphDef's names: TF (since the
C API importer) renames each clashing node to the first free "<name>_N" and rewires what
reads it. The names, inputs, control inputs, colocations and values asserted here are
those TF 2.21's tf.compat.v1.import_graph_def gave for the same graphs."""
import logging

import pytest
from tensorboard.compat.proto import graph_pb2, types_pb2

import tensorweave as tf


def _source():
    """a, b = a + 1 (its constant "b/y"), c = identity(b) after ^a, d = a * 3 colocated
    with a (so is its constant "d/y"), e."""
    src = tf.Graph()
    with src.as_default():
        a = tf.constant(2.0, name="a")
        b = tf.add(a, 1.0, name="b")
        with tf.control_dependencies([a]):
            tf.identity(b, name="c")
        with tf.colocate_with(a):
            tf.multiply(a, 3.0, name="d")
        tf.constant(7.0, name="e")
    gd = src.as_graph_def()
    assert [(n.name, list(n.input)) for n in gd.node] == [
        ("a", []), ("b/y", []), ("b", ["a", "b/y"]), ("c", ["b", "^a"]), ("d/y", []),
        ("d", ["a", "d/y"]), ("e", [])]
    return gd


def _table(g):
    return [(op.name, [t.name for t in op.inputs], [c.name for c in op.control_inputs],
             op.colocation_groups()) for op in g.get_operations()]


def test_clashing_nodes_are_renamed(caplog):
    gd = _source()
    g = tf.Graph()
    with g.as_default(), caplog.at_level(logging.DEBUG):
        a0 = tf.constant(10.0, name="a")
        b0 = tf.constant(20.0, name="b")
        r = tf.import_graph_def(gd, name="",
                                return_elements=["a", "a:0", "b:0", "c", "d:0", "e:0"])
    assert not caplog.records  # TF logs nothing about it
    assert [x.name for x in r] == ["a_1", "a_1:0", "b_1:0", "c", "d:0", "e:0"]
    assert _table(g) == [
        ("a", [], [], [b"loc:@a"]),
        ("b", [], [], [b"loc:@b"]),
        ("a_1", [], [], [b"loc:@a_1"]),
        ("b/y", [], [], [b"loc:@b/y"]),  # "b" is a node, not a scope: no clash
        ("b_1", ["a_1:0", "b/y:0"], [], [b"loc:@b_1"]),
        ("c", ["b_1:0"], ["a_1"], [b"loc:@c"]),
        ("d/y", [], [], [b"loc:@a_1"]),  # "_class": ["loc:@a"] follows the rename
        ("d", ["a_1:0", "d/y:0"], [], [b"loc:@a_1"]),
        ("e", [], [], [b"loc:@e"])]
    with g.as_default():
        # later ops do not take the imported names
        assert [tf.constant(0.0, name=n).op.name for n in "abe"] == ["a_2", "b_2", "e_1"]
        with tf.Session() as s:
            assert s.run([r[1], r[2], r[3].outputs[0], r[4], a0, b0]) == \
                [2.0, 3.0, 3.0, 6.0, 10.0, 20.0]


def test_importing_again_and_again(graph):
    gd = _source()
    tf.import_graph_def(gd, name="")
    tf.import_graph_def(gd, name="")
    r = tf.import_graph_def(gd, name="", return_elements=["b:0"])
    names = ["a", "b/y", "b", "c", "d/y", "d", "e"]
    assert [op.name for op in graph.get_operations()] == \
        names + [n + "_1" for n in names] + [n + "_2" for n in names]
    assert r[0].name == "b_2:0" and [t.name for t in r[0].op.inputs] == ["a_2:0", "b/y_2:0"]
    with tf.Session() as s:
        assert s.run(r[0]) == 3.0


def test_generated_names_skip_the_graph_defs_names(graph):
    """"a" clashes; "a_1" is a node of the GraphDef, so "a" becomes "a_2"."""
    src = tf.Graph()
    with src.as_default():
        tf.add(tf.constant(1.0, name="a"), tf.constant(2.0, name="a_1"), name="z")
    tf.constant(5.0, name="a")
    r = tf.import_graph_def(src.as_graph_def(), name="", return_elements=["a:0", "a_1:0",
                                                                        "z:0"])
    assert [op.name for op in graph.get_operations()] == ["a", "a_2", "a_1", "z"]
    assert [t.name for t in r] == ["a_2:0", "a_1:0", "z:0"]
    assert [t.name for t in r[2].op.inputs] == ["a_2:0", "a_1:0"]
    with tf.Session() as s:
        assert s.run(r) == [1.0, 2.0, 3.0]


def test_scopes_clash_too(graph):
    """A name that is a scope of an existing node clashes ("s", "s/t" under "s/t/u"); so
    does a generated name that is a scope in the GraphDef ("w_1" of "w_1/q")."""
    src = tf.Graph()
    with src.as_default():
        for n in ("s", "s/t", "v", "w", "w_1/q", "q/w"):
            tf.constant(1.0, name=n)
    for n in ("s/t/u", "w", "v", "q"):
        tf.constant(1.0, name=n)
    tf.import_graph_def(src.as_graph_def(), name="")
    assert [op.name for op in graph.get_operations()] == [
        "s/t/u", "w", "v", "q", "s_1", "s/t_1", "v_1", "w_2", "w_1/q", "q/w"]


def test_names_compare_case_sensitively(graph):
    src = tf.Graph()
    with src.as_default():
        tf.constant(1.0, name="a")
    tf.constant(5.0, name="A")
    tf.import_graph_def(src.as_graph_def(), name="")
    assert [op.name for op in graph.get_operations()] == ["A", "a"]
    assert tf.constant(1.0, name="a").op.name == "a_1"


def test_a_used_name_scope_is_no_clash(graph):
    src = tf.Graph()
    with src.as_default():
        tf.constant(1.0, name="a")
    with tf.name_scope("a"):
        pass
    tf.import_graph_def(src.as_graph_def(), name="")
    assert [op.name for op in graph.get_operations()] == ["a"]
    assert tf.constant(1.0, name="a").op.name == "a_1"


def test_input_map_names_the_graph_defs_nodes(graph):
    gd = _source()
    tf.constant(10.0, name="a")
    p = tf.constant(100.0, name="p")
    r = tf.import_graph_def(gd, name="", input_map={"a:0": p},
                            return_elements=["a", "b:0", "d:0", "c"])
    assert [x.name for x in r] == ["a_1", "b:0", "d:0", "c"]
    assert _table(graph)[2:] == [
        ("a_1", [], [], [b"loc:@a_1"]),  # still read by c's control input
        ("b/y", [], [], [b"loc:@b/y"]),
        ("b", ["p:0", "b/y:0"], [], [b"loc:@b"]),
        ("c", ["b:0"], ["a_1"], [b"loc:@c"]),
        ("d/y", [], [], [b"loc:@a_1"]),
        ("d", ["p:0", "d/y:0"], [], [b"loc:@a_1"]),
        ("e", [], [], [b"loc:@e"])]
    with tf.Session() as s:
        assert s.run([r[1], r[2]]) == [101.0, 300.0]


def test_mapped_control_input(graph):
    gd = _source()
    tf.constant(10.0, name="a")
    p = tf.constant(100.0, name="p")
    c, = tf.import_graph_def(gd, name="", input_map={"^a": p}, return_elements=["c"])
    assert [x.name for x in c.control_inputs] == ["p"]
    assert [t.name for t in graph.get_operation_by_name("b").inputs] == ["a_1:0", "b/y:0"]


def test_reentered_scope(graph):
    """name="imp/" re-enters the scope: the clashing nodes in it are renamed one by one;
    name="imp" takes a new scope."""
    gd = _source()
    tf.import_graph_def(gd, name="imp")
    tf.import_graph_def(gd, name="imp/")
    tf.import_graph_def(gd, name="imp")
    names = ["a", "b/y", "b", "c", "d/y", "d", "e"]
    assert [op.name for op in graph.get_operations()] == \
        ["imp/" + n for n in names] + ["imp/%s_1" % n for n in names] + \
        ["imp_1/" + n for n in names]
    assert graph.get_operation_by_name("imp/d_1").colocation_groups() == [b"loc:@imp/a_1"]


def test_generated_names_avoid_scoped_graph_def_names(graph):
    """Under a scope holding "imp/a", "a" is renamed past "imp/a_1", which the GraphDef's
    "a_1" takes. (TF 2.21 checks the scope-less names here and makes two nodes
    "imp/a_1", which fails at run time; a GraphDef holding "imp/a_1" itself is skipped
    as TF skips it.)"""
    src = tf.Graph()
    with src.as_default():
        tf.add(tf.constant(1.0, name="a"), tf.constant(2.0, name="a_1"), name="z")
    tf.constant(5.0, name="imp/a")
    r = tf.import_graph_def(src.as_graph_def(), name="imp/",
                            return_elements=["a:0", "a_1:0", "z:0"])
    assert [t.name for t in r] == ["imp/a_2:0", "imp/a_1:0", "imp/z:0"]
    with tf.Session() as s:
        assert s.run(r) == [1.0, 2.0, 3.0]
    g2 = tf.Graph()
    with g2.as_default():
        src2 = tf.Graph()
        with src2.as_default():
            tf.constant(1.0, name="a")
            tf.constant(3.0, name="imp/a_1")
        tf.constant(5.0, name="imp/a")
        tf.import_graph_def(src2.as_graph_def(), name="imp/")
        assert [op.name for op in g2.get_operations()] == ["imp/a", "imp/a_2",
                                                           "imp/imp/a_1"]


def _ref_variable_graph():
    """TF's GraphDef of `v = tf.Variable(1.0, use_resource=False); tf.assign_add(v, 10.0,
    name="inc")` (VariableV2 with an empty shared_name)."""
    F = types_pb2.DT_FLOAT
    gd = graph_pb2.GraphDef()

    def node(name, op, inputs=(), **attrs):
        n = gd.node.add(name=name, op=op, input=list(inputs))
        for k, v in attrs.items():
            if k in ("T", "dtype"):
                n.attr[k].type = v
            elif isinstance(v, bool):
                n.attr[k].b = v
            elif isinstance(v, str):
                n.attr[k].s = v.encode()
            elif k == "shape":
                n.attr[k].shape.SetInParent()
            else:
                n.attr[k].tensor.dtype = F
                n.attr[k].tensor.tensor_shape.SetInParent()
                n.attr[k].tensor.float_val.append(v)
    node("v/initial_value", "Const", dtype=F, value=1.0)
    node("v", "VariableV2", dtype=F, shape=(), container="", shared_name="")
    node("v/Assign", "Assign", ["v", "v/initial_value"], T=F, validate_shape=True,
         use_locking=True)
    node("v/read", "Identity", ["v"], T=F)
    node("inc/value", "Const", dtype=F, value=10.0)
    node("inc", "AssignAdd", ["v", "inc/value"], T=F, use_locking=False)
    return gd


@pytest.mark.parametrize("name", ["", "imp"])
def test_renamed_reference_variables_are_distinct(graph, name):
    """A VariableV2 with no shared_name holds the variable named by its node, so a second
    import ("v_1", or "imp_1/v") is a second variable, as in TF ([21.0, 1.0] there)."""
    gd = _ref_variable_graph()
    r1 = tf.import_graph_def(gd, name=name, return_elements=["v/Assign", "inc:0", "v:0"])
    r2 = tf.import_graph_def(gd, name=name, return_elements=["v/Assign", "inc:0", "v:0"])
    assert r2[2].name == ("v_1:0" if name == "" else "imp_1/v:0")
    with tf.Session() as s:
        s.run([r1[0], r2[0]])
        s.run(r1[1])
        s.run(r1[1])
        assert s.run([r1[2], r2[2]]) == [21.0, 1.0]


def test_while_loop_imported_twice(graph):
    """The second copy of a loop gets TF's names ("while/Enter_1", ...); it runs here (TF
    2.21 fails at run time: its two copies share one frame name)."""
    src = tf.Graph()
    with src.as_default():
        i = tf.constant(0, name="i0")
        tf.identity(tf.while_loop(lambda i: i < 5, lambda i: i + 2, [i]), name="out")
    gd = src.as_graph_def()
    names = [n.name for n in gd.node]
    o1, = tf.import_graph_def(gd, name="", return_elements=["out:0"])
    o2, = tf.import_graph_def(gd, name="", return_elements=["out:0"])
    assert o2.name == "out_1:0"
    assert [op.name for op in graph.get_operations()] == names + [n + "_1" for n in names]
    with tf.Session() as s:
        assert s.run([o1, o2]) == [6, 6]
