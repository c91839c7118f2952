"""Top-level framework helpers (framework/framework_lib.py) and the small top-level
names served elsewhere (tf.get_logger, tf.floor_div, the lazy proto classes)."""
import logging

import numpy as np
import pytest

import tensorweave as tf


def test_version_constants():
    assert isinstance(tf.GIT_VERSION, str) and isinstance(tf.COMPILER_VERSION, str)
    for name in ("CXX11_ABI_FLAG", "CXX_VERSION", "MONOLITHIC_BUILD",
                 "GRAPH_DEF_VERSION_MIN_CONSUMER", "GRAPH_DEF_VERSION_MIN_PRODUCER"):
        assert isinstance(getattr(tf, name), int)
    assert tf.GRAPH_DEF_VERSION_MIN_CONSUMER <= tf.GRAPH_DEF_VERSION
    for name in ("VERSION", "GIT_VERSION", "COMPILER_VERSION", "GRAPH_DEF_VERSION",
                 "GRAPH_DEF_VERSION_MIN_CONSUMER", "GRAPH_DEF_VERSION_MIN_PRODUCER"):
        assert getattr(tf.version, name) == getattr(tf, name)  # tf.version, TF 1.14+
    assert tf.version.VERSION == tf.__version__


def test_version_is_the_tf_api_implemented():
    # TF1 programs compare tf.__version__ with "1.x"; our release is a name of its own
    import os
    import tomllib
    major, minor = map(int, tf.__version__.split(".")[:2])
    assert (major, minor) == (1, 15)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        assert tf.__tensorweave_version__ == tomllib.load(f)["project"]["version"]
    assert tf.__git_version__ == tf.GIT_VERSION and tf.__cxx11_abi_flag__ == 0


def test_aliases():
    assert tf.OpError is tf.errors.OpError
    assert issubclass(tf.errors.InvalidArgumentError, tf.OpError)
    assert tf.no_gradient is tf.NotDifferentiable
    assert tf.newaxis is None
    assert tf.get_logger() is logging.getLogger("tensorflow")


def test_proto_classes_are_lazy_tensorboard_protos():
    av = tf.AttrValue(i=3)
    assert type(av).__name__ == "AttrValue" and av.i == 3
    nal = tf.NameAttrList(name="f")
    nal.attr["x"].CopyFrom(tf.AttrValue(s=b"v"))
    assert nal.attr["x"].s == b"v"
    info = tf.TensorInfo(name="x:0", dtype=tf.float32.as_datatype_enum)
    assert tf.TensorInfo.FromString(info.SerializeToString()).name == "x:0"
    assert {"AttrValue", "NameAttrList", "TensorInfo"} <= set(dir(tf))


def test_floor_div(sess):
    q = tf.floor_div(tf.constant([7, -7]), 2)
    f = tf.floor_div(tf.constant([7.5, -7.5]), 2.0)
    assert q.op.type == "FloorDiv" and q.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(q), [3, -4])
    np.testing.assert_array_equal(sess.run(f), [3.0, -4.0])


def test_op_scope(graph):
    x = tf.constant(1.0)
    with tf.op_scope([x], "foo", "bar") as scope:
        assert scope == "foo/"
        assert tf.constant(2.0, name="c").name == "foo/c:0"
    with tf.op_scope([x], None, "bar") as scope:
        assert scope == "bar/"


def test_init_scope_clears_control_dependencies_and_keeps_name_scope(graph):
    a = tf.constant(1.0, name="a")
    with tf.name_scope("outer"):
        with tf.control_dependencies([a.op]):
            with tf.init_scope():
                c = tf.constant(2.0, name="c")
            d = tf.constant(3.0, name="d")
    assert c.op.control_inputs == [] and c.name == "outer/c:0"
    assert d.op.control_inputs == [a.op]


def test_init_scope_leaves_a_cond(graph, sess):
    p = tf.placeholder(tf.bool, [])
    made = []

    def branch():
        with tf.init_scope():
            made.append(tf.constant(5.0))
        return made[-1] + 1.0
    out = tf.cond(p, branch, lambda: tf.constant(0.0))
    assert all(t.op._control_flow_context is None for t in made)
    assert sess.run(out, {p: True}) == 6.0


def test_is_symbolic_tensor(graph):
    x = tf.placeholder(tf.float32)
    v = tf.Variable(1.0)
    assert tf.is_symbolic_tensor(x)
    assert not tf.is_symbolic_tensor(v)
    assert not tf.is_symbolic_tensor(np.ones(2))
    assert not tf.is_symbolic_tensor(tf.SparseTensor([[0]], [1.0], [2]))


def test_dimension_at_index():
    d = tf.dimension_at_index(tf.TensorShape([2, None]), 0)
    assert isinstance(d, tf.Dimension) and d.value == 2
    assert tf.dimension_at_index([2, None], 1).value is None
    unknown = tf.dimension_at_index(tf.TensorShape(None), 5)
    assert isinstance(unknown, tf.Dimension) and unknown.value is None
    with pytest.raises(IndexError):
        tf.dimension_at_index(tf.TensorShape([1]), 3)


def test_convert_to_tensor_or_indexed_slices(graph):
    s = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
    assert tf.convert_to_tensor_or_indexed_slices(s) is s
    sp = tf.SparseTensor([[0]], [1.0], [2])
    assert tf.convert_to_tensor_or_indexed_slices(sp) is sp
    t = tf.convert_to_tensor_or_indexed_slices([1, 2], dtype=tf.int64, name="v")
    assert isinstance(t, tf.Tensor) and t.dtype == tf.int64 and t.name == "v:0"
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.int32)
