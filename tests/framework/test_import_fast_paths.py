"""The fast paths of graph import (benchmarks/import_time.py): decoding caches in
framework/graph_def_proto.py, the op location found once per import, and the shortcuts
in serialize.py, op_builder.arg_dtypes and TensorShape give what the general paths give.
"""
import inspect
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from tensorboard.compat.proto import graph_pb2, node_def_pb2, tensor_shape_pb2, types_pb2

import tensorweave as tf
from tensorweave.framework import dtypes
from tensorweave.framework import graph_def_proto as gp
from tensorweave.framework import op_builder, registry, serialize
from tensorweave.framework.shapes import Dimension, TensorShape

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf2_functional")
SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def _shape_proto(dims, unknown_rank=False):
    proto = tensor_shape_pb2.TensorShapeProto(unknown_rank=unknown_rank)
    for d in dims:
        proto.dim.add().size = d
    return proto


@pytest.mark.parametrize("dims, want", [([2, -1, 3], [2, None, 3]), ([], []),
                                        ([0, 7], [0, 7])])
def test_shape_from_proto_gives_the_shape_of_its_sizes(dims, want):
    first = gp.shape_from_proto(_shape_proto(dims))
    again = gp.shape_from_proto(_shape_proto(dims))
    assert first.as_list() == want and again.as_list() == want
    assert again is first  # one immutable object per distinct shape


def test_shape_from_proto_of_unknown_rank():
    assert gp.shape_from_proto(_shape_proto([], unknown_rank=True)).ndims is None


def test_dtype_from_enum_maps_reference_types_to_their_base_and_rejects_unknown():
    assert gp.dtype_from_enum(types_pb2.DT_FLOAT) is tf.float32
    assert gp.dtype_from_enum(types_pb2.DT_FLOAT_REF) is tf.float32
    assert gp.dtype_from_enum(types_pb2.DT_INT64_REF) is tf.int64
    with pytest.raises(ValueError, match="DataType enum 99, which tensorweave"):
        gp.dtype_from_enum(99)
    with pytest.raises(ValueError, match="DataType enum 99, which tensorweave"):
        gp.dtype_from_enum(99)  # not remembered as anything


def test_node_def_from_proto_decodes_attrs_and_a_node_without_attrs():
    proto = node_def_pb2.NodeDef(name="v", op="VariableV2", input=["^a"], device="/cpu:0")
    proto.attr["dtype"].type = types_pb2.DT_FLOAT_REF
    proto.attr["shape"].shape.CopyFrom(_shape_proto([3, -1]))
    proto.attr["shared_name"].s = b"w"
    nd = gp.node_def_from_proto(proto)
    assert (nd.name, nd.op, nd.input, nd.device) == ("v", "VariableV2", ["^a"], "/cpu:0")
    assert nd.attr["dtype"] is tf.float32 and nd.attr["shared_name"] == "w"
    assert nd.attr["shape"].as_list() == [3, None]
    bare = gp.node_def_from_proto(node_def_pb2.NodeDef(name="n", op="NoOp"))
    assert bare.attr == {} and bare.input == []


def test_libraries_registered_on_first_use_declare_no_bytes_attr():
    # node_def_from_proto does not load them to look for bytes attrs: right only while
    # none of their ops declares one
    import importlib
    for module in registry._LAZY_OP_MODULES:
        importlib.import_module(module)
    with_bytes = [(name, k) for name, op_def in registry._OPS.items()
                  for k, d in op_def.attrs.items() if isinstance(d, bytes)]
    assert with_bytes == []


def test_decoding_a_tf1_reference_op_does_not_load_the_lazy_libraries():
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import tensorweave\n"
            "from tensorboard.compat.proto import node_def_pb2\n"
            "from tensorweave.framework import graph_def_proto as gp\n"
            "nd = gp.node_def_from_proto(node_def_pb2.NodeDef(name='a', op='Assign',"
            " attr={'use_locking': {'b': True}}))\n"
            "assert nd.attr == {'use_locking': True}, nd.attr\n"
            "print(sorted(m for m in ('tensorweave.data', 'tensorweave.ops.clustering_ops')"
            " if m in sys.modules))\n" % os.path.abspath(SRC))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_bytes_attrs_follow_a_re_registration(monkeypatch):
    monkeypatch.setitem(registry._OPS, "FastPathProbe", registry._OPS["NoOp"])
    assert gp._bytes_attrs("FastPathProbe") == frozenset()
    probe = registry._OPS["Const"]
    monkeypatch.setattr(probe, "attrs", dict(probe.attrs, label=b""), raising=False)
    monkeypatch.setitem(registry._OPS, "FastPathProbe", probe)
    assert gp._bytes_attrs("FastPathProbe") == frozenset(["label"])


def _import_line(gd):
    tf.import_graph_def(gd, name="")
    return inspect.currentframe().f_lineno - 1


def test_imported_and_lowered_ops_have_the_location_of_the_import_call():
    with open(os.path.join(FIXTURES, "nested_loop_grad.pb"), "rb") as f:
        gd = graph_pb2.GraphDef.FromString(f.read())
    g = tf.Graph()
    with g.as_default():
        line = _import_line(gd)
        later = tf.constant(1.0, name="later")
        later_line = inspect.currentframe().f_lineno - 1
    ops = g.get_operations()
    assert len(ops) > 100  # the While ops lowered to many ops
    assert {op.traceback_location for op in ops if op is not later.op} == \
        {(__file__, line)}
    assert later.op.traceback_location == (__file__, later_line)
    assert g._fixed_location is None


def test_a_failed_import_releases_the_location():
    g = tf.Graph()
    gd = tf.GraphDef()
    gd.node.add(name="a", op="Identity", input=["missing"])
    with g.as_default():
        with pytest.raises(ValueError, match="Unknown input node 'missing'"):
            tf.import_graph_def(gd)
    assert g._fixed_location is None


def test_another_thread_building_during_an_import_keeps_its_own_location():
    g = tf.Graph()
    saved = g._fix_op_location()  # as an import running in this thread does
    made = []

    def build():
        with g.as_default():
            made.append(tf.constant(2.0, name="other"))
            made.append(inspect.currentframe().f_lineno - 1)
    t = threading.Thread(target=build)
    t.start()
    t.join()
    g._release_op_location(saved)
    assert made[0].op.traceback_location == (__file__, made[1])


def test_arg_dtypes_converts_attrs_that_are_not_dtypes():
    op_def = registry.get_op_def("Add")
    assert op_builder.arg_dtypes(op_def.inputs, {"T": tf.float64}) == [tf.float64] * 2
    assert op_builder.arg_dtypes(op_def.inputs, {"T": "int32"}) == [tf.int32] * 2
    assert op_builder.arg_dtypes(op_def.inputs, {"T": np.float16}) == [tf.float16] * 2
    assert op_builder.arg_dtypes(op_def.inputs, {"T": dtypes.DType(1)}) == [tf.float32] * 2


@pytest.mark.parametrize("s, want", [("a", ("a", 0)), ("a:3", ("a", 3)), ("^a", ("a", None)),
                                     ("a/b:c", ("a/b:c", 0)), ("a:", ("a:", 0)),
                                     (":1", (":1", 0)), ("a:1:2", ("a:1", 2))])
def test_parse_input(s, want):
    assert serialize.parse_input(s) == want


def test_import_rejects_an_input_of_another_dtype_with_tfs_message():
    gd = tf.GraphDef()
    x = gd.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = types_pb2.DT_INT32
    add = gd.node.add(name="add", op="Add", input=["x", "x"])
    add.attr["T"].type = types_pb2.DT_FLOAT
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Input 0 of node add was passed int32 from "
                                             "x:0 incompatible with expected float"):
            tf.import_graph_def(gd, name="")


@pytest.mark.parametrize("dims", [[2, None], (2, None), [Dimension(2), Dimension(None)],
                                  [np.int64(2), None]])
def test_tensor_shape_of_lists_and_tuples(dims):
    shape = TensorShape(dims)
    assert shape.as_list() == [2, None] and all(isinstance(d, Dimension) for d in shape.dims)


def test_tensor_shape_of_a_list_rejects_negative_and_non_integer_dims():
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        TensorShape([-1])
    with pytest.raises(TypeError, match="Dimension value must be integer"):
        TensorShape([1.5])


def test_imports_pause_the_garbage_collector_and_restore_it():
    import gc
    seen = []
    real = serialize._import_graph_def

    def spy(*args):
        seen.append(gc.isenabled())
        return real(*args)
    gd = tf.GraphDef()
    gd.node.add(name="c", op="NoOp")
    assert gc.isenabled()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(serialize, "_import_graph_def", spy)
        with tf.Graph().as_default():
            tf.import_graph_def(gd)
        assert seen == [False] and gc.isenabled()
        gd.node.add(name="d", op="Identity", input=["missing"])
        with tf.Graph().as_default(), pytest.raises(ValueError, match="Unknown input"):
            tf.import_graph_def(gd)
        assert gc.isenabled()  # restored after a failed import too
        gc.disable()
        try:
            with tf.Graph().as_default():
                tf.import_graph_def(_one_node_graph_def())
            assert not gc.isenabled()  # a collector the program paused stays paused
        finally:
            gc.enable()


def _one_node_graph_def():
    gd = tf.GraphDef()
    gd.node.add(name="c", op="NoOp")
    return gd


def _chain(names_and_inputs):
    return [serialize.NodeDef(n, "Identity", inputs) for n, inputs in names_and_inputs]


def test_topological_keeps_an_ordered_graph_def_and_sorts_others():
    ordered = _chain([("a", []), ("b", ["a"]), ("c", ["b:0", "^a"]), ("d", ["a", "c"])])
    assert [n.name for n in serialize._topological(ordered)] == ["a", "b", "c", "d"]
    assert [n.name for n in serialize._topological(ordered[::-1])] == ["a", "b", "c", "d"]
    unordered = _chain([("b", ["a"]), ("x", []), ("a", [])])
    assert [n.name for n in serialize._topological(unordered)] == ["a", "b", "x"]
    merge = [serialize.NodeDef("m", "Merge", ["e", "n"]), serialize.NodeDef("e", "Enter", []),
             serialize.NodeDef("n", "NextIteration", ["m"])]
    assert [n.name for n in serialize._topological(merge)] == ["e", "m", "n"]
    with pytest.raises(ValueError, match="GraphDef has a cycle through node"):
        serialize._topological(_chain([("a", ["b"]), ("b", ["a"])]))
    with pytest.raises(ValueError, match="GraphDef has a cycle through node 'a'"):
        serialize._topological(_chain([("a", ["a"])]))


# --- the library functions of TF 2.x functional ops (function_library.py) ---------------
def _library_function(name, nodes, outputs):
    """A FunctionDef of one float32 input "x" returning `outputs` ({output arg: ref})."""
    from tensorweave.framework import function_library as flib
    return flib.FunctionDef(name, [flib.ArgDef("x", tf.float32)],
                            [flib.ArgDef(k, tf.float32) for k in outputs], nodes, outputs)


def test_instantiate_names_output_0_by_its_node_and_counts_list_outputs():
    from tensorweave.framework import function_library as flib
    nodes = [serialize.NodeDef("u", "Unique", ["x"], attr={"T": tf.float32}),
             serialize.NodeDef("s", "Split", ["d:output:0", "u:y:0"],
                               attr={"T": tf.float32, "num_split": 3}),
             serialize.NodeDef("d", "Const", [], attr={"dtype": tf.int32}),
             serialize.NodeDef("a", "AddV2", ["s:output:2", "u:y:0", "^u"],
                               attr={"T": tf.float32})]
    fdef = _library_function("f", nodes, {"out": "a:z:0", "first": "s:output:0"})
    library = flib.FunctionLibrary([fdef])
    for _ in range(2):  # the second time, from the cached offsets of Unique and AddV2
        inst = flib.instantiate(fdef, {}, library)
        assert [n.input for n in inst.nodes] == [["x"], ["d", "u"], [], ["s:2", "u", "^u"]]
        assert inst.outputs == [("a", 0), ("s", 0)]
    assert fdef.nodes[1].input == ["d:output:0", "u:y:0"]  # the library's stays as it is


def test_a_library_function_is_decoded_when_first_read():
    from tensorweave.framework import function_library as flib
    decoded = []

    def decode():
        decoded.append(1)
        return [serialize.NodeDef("n", "Neg", ["x"], attr={"T": tf.float32})]
    fdef = _library_function("f", decode, {"y": "n:y:0"})
    assert not decoded
    library = flib.FunctionLibrary([fdef])
    flib.instantiate(fdef, {}, library)
    flib.instantiate(fdef, {}, library)
    assert decoded == [1] and [n.op for n in fdef.nodes] == ["Neg"]
    gd = tf.GraphDef()
    gd.ParseFromString(open(os.path.join(FIXTURES, "nested_loop_grad.pb"), "rb").read())
    ours = gp.as_graph_def_object(gd)
    assert all(callable(f._nodes) for f in ours.library.functions.values())
    with tf.Graph().as_default():
        tf.import_graph_def(ours, name="")
    # the loops' forward functions, which only the rewritten ones replace, stay undecoded
    called = {n for n, f in ours.library.functions.items() if not callable(f._nodes)}
    assert called and "while_body_601" not in called and "while_body_601_rewritten" in called
    assert len(ours.library.functions["while_body_601"].nodes) == 11  # read: decoded
