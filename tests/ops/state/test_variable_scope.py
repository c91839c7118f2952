"""get_variable, variable_scope: naming, reuse, defaults, errors (checked against TF1)."""
import math

import numpy as np
import pytest

import tensorweave as tf


def test_names_follow_variable_scopes(graph):
    with tf.variable_scope("foo") as s:
        a = tf.get_variable("a", [2])
        c = tf.constant(1)
        with tf.variable_scope("bar"):
            b = tf.get_variable("b", [])
            c2 = tf.constant(1)
    assert a.name == "foo/a:0" and b.name == "foo/bar/b:0"
    assert c.name == "foo/Const:0" and c2.name == "foo/bar/Const:0"
    assert s.name == "foo" and s.original_name_scope == "foo/"
    assert tf.get_variable_scope().name == ""
    # name scopes inside do not change variable names
    with tf.variable_scope("foo2"), tf.name_scope("ns"):
        d = tf.get_variable("d", [])
        assert d.name == "foo2/d:0"
        assert tf.Variable(1.0, name="e").name == "foo2/ns/e:0"


def test_reentering_scopes(graph):
    with tf.variable_scope("foo") as s:
        pass
    with tf.variable_scope(s):
        c = tf.constant(1)
        b = tf.get_variable("b", [2])
        vv = tf.Variable(1.0, name="vv")
        with tf.variable_scope("in"):
            c4 = tf.constant(1)
            x = tf.get_variable("x", [])
    with tf.variable_scope("foo"):
        c3 = tf.constant(1)
    assert c.name == "foo_1/Const:0" and b.name == "foo/b:0" and vv.name == "foo_1/vv:0"
    assert c4.name == "foo_1/in/Const:0" and x.name == "foo/in/x:0"
    assert c3.name == "foo_2/Const:0"


def test_default_names_are_unique(graph):
    with tf.variable_scope(None, default_name="def"):
        d1 = tf.get_variable("x", [])
        cd = tf.constant(1)
    with tf.variable_scope(None, default_name="def"):
        d2 = tf.get_variable("x", [])
    assert d1.name == "def/x:0" and d2.name == "def_1/x:0" and cd.name == "def/Const:0"
    with pytest.raises(TypeError):
        tf.variable_scope(None)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="z", reuse=True):
            pass


def test_reuse_errors(graph):
    with tf.variable_scope("foo"):
        tf.get_variable("a", [2])
    with pytest.raises(ValueError, match="Variable foo/a already exists, disallowed. Did you "
                       "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?"):
        with tf.variable_scope("foo"):
            tf.get_variable("a", [2])
    with pytest.raises(ValueError) as e:
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("zz", [2])
    assert str(e.value) == ("Variable foo/zz does not exist, or was not created with "
                            "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                            "VarScope?")
    with pytest.raises(ValueError) as e:
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("a", [3])
    assert str(e.value) == ("Trying to share variable foo/a, but specified shape (3,) and "
                            "found shape (2,).")
    with pytest.raises(ValueError) as e:
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("a", [2], dtype=tf.int32)
    assert str(e.value) == ("Trying to share variable foo/a, but specified dtype int32 and "
                            "found dtype float32.")
    with pytest.raises(ValueError, match="reuse parameter"):
        tf.variable_scope("x", reuse="yes")


def test_reuse_returns_the_same_variable(graph):
    with tf.variable_scope("m"):
        w = tf.get_variable("w", [2, 2])
    with tf.variable_scope("m", reuse=True):
        assert tf.get_variable("w", [2, 2]) is w
        assert tf.get_variable("w") is w  # shape may be omitted
    with tf.variable_scope("m") as s:
        s.reuse_variables()
        assert tf.get_variable_scope().reuse is True
        assert tf.get_variable("w") is w
        with tf.variable_scope("k"):
            assert tf.get_variable_scope().reuse is True  # inherited
    assert len(tf.global_variables()) == 1


def test_reuse_is_inherited_and_cannot_be_turned_off(graph):
    with tf.variable_scope("rr", reuse=True):
        with tf.variable_scope("inner", reuse=False) as inner:
            assert inner.reuse is True
    with tf.variable_scope("top") as top:
        pass
    assert top.reuse is False


def test_auto_reuse(graph):
    assert repr(tf.AUTO_REUSE) == "<_ReuseMode.AUTO_REUSE: 1>"
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        x1 = tf.get_variable("x", [1])
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        x2 = tf.get_variable("x", [1])
        y = tf.get_variable("y", [1])
    assert x1 is x2 and y.name == "auto/y:0"
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        with pytest.raises(ValueError, match="specified shape"):
            tf.get_variable("x", [2])


def test_scope_object_reentered_with_reuse(graph):
    with tf.variable_scope("layer") as scope:
        w = tf.get_variable("w", [1])
    with tf.variable_scope(scope, reuse=True):
        assert tf.get_variable("w", [1]) is w
    with tf.variable_scope(scope, auxiliary_name_scope=False):
        c = tf.constant(0)
    assert c.name == "Const:0"


def test_scope_defaults_for_get_variable(graph, sess):
    with tf.variable_scope("s", initializer=tf.constant_initializer(3.0), dtype=tf.float64):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("t"):
            b = tf.get_variable("b", [1])  # inherits initializer and dtype
        c = tf.get_variable("c", [1], initializer=tf.constant_initializer(5.0))
    assert a.dtype == tf.float64 and b.dtype == tf.float64
    sess.run(tf.global_variables_initializer())
    assert sess.run(a).tolist() == [3.0, 3.0] and sess.run(b).tolist() == [3.0]
    assert sess.run(c).tolist() == [5.0]


def test_default_initializers(graph, sess):
    w = tf.get_variable("w", [30, 70])
    i = tf.get_variable("i", [3], dtype=tf.int32)
    flag = tf.get_variable("flag", [2], dtype=tf.bool)
    assert i.initial_value.op.name.startswith("i/Initializer/")
    sess.run(tf.global_variables_initializer())
    limit = math.sqrt(6.0 / 100)
    wv = sess.run(w)
    assert np.abs(wv).max() <= limit and wv.std() > 0.3 * limit  # glorot uniform
    assert sess.run(i).tolist() == [0, 0, 0] and sess.run(flag).tolist() == [False, False]
    # TF's message, the dtype as str() shows it
    with pytest.raises(ValueError, match="An initializer for variable c of "
                                         "<dtype: 'complex64'> is required"):
        tf.get_variable("c", [1], dtype=tf.complex64)


def test_value_initializers(graph, sess):
    q = tf.get_variable("q", initializer=tf.constant([1, 2]))
    r = tf.get_variable("r", initializer=np.array([1.5, 2.5], np.float32))
    assert q.dtype == tf.int32 and q.shape.as_list() == [2]
    sess.run(tf.global_variables_initializer())
    assert sess.run(q).tolist() == [1, 2] and sess.run(r).tolist() == [1.5, 2.5]
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape."):
        tf.get_variable("q2", [2], initializer=tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="don't match"):
        tf.get_variable("q3", dtype=tf.float32, initializer=tf.constant([1, 2]))
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        tf.get_variable("q4", [None, 2])
    with pytest.raises(ValueError, match="Variable q5 did not get an initializer, so its "
                                         "`shape` argument must be specified."):
        tf.get_variable("q5")
    s = tf.get_variable("s", initializer=lambda: tf.constant([[1.0]]))
    assert s.shape.as_list() == [1, 1]


def test_regularizer_collects_losses(graph, sess):
    def reg(v):
        return v.read_value() * 2.0
    with tf.variable_scope("r", regularizer=reg):
        a = tf.get_variable("a", [], initializer=tf.constant_initializer(3.0))
        tf.get_variable("b", [], regularizer=tf.no_regularizer)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and losses[0].name.startswith("r/a/Regularizer/")
    sess.run(a.initializer)
    assert sess.run(losses[0]) == 6.0


def test_custom_getter(graph):
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    def outer(getter, name, *args, **kwargs):
        seen.append("outer:" + name)
        return getter(name, *args, **kwargs)
    with tf.variable_scope("cg", custom_getter=getter):
        with tf.variable_scope("in", custom_getter=outer):
            v = tf.get_variable("v", [1])
    assert seen == ["outer:cg/in/v", "cg/in/v"] and not v.trainable
    w = tf.get_variable("w", [1], custom_getter=getter)
    assert not w.trainable
    with pytest.raises(ValueError, match="not callable"):
        tf.get_variable("x", [1], custom_getter=3)


def test_scope_partitioner_makes_partitioned_variables(graph):
    # the details: tests/ops/state/test_partitioned_variables.py
    with tf.variable_scope("p", partitioner=lambda shape, dtype: [2, 1]):
        v = tf.get_variable("v", [4, 2])
    assert [s.name for s in v] == ["p/v/part_0:0", "p/v/part_1:0"]


def test_local_variable_and_collections(graph):
    loc = tf.get_local_variable("loc", [1])
    assert loc in tf.local_variables() and loc not in tf.global_variables()
    assert not loc.trainable
    nt = tf.get_variable("nt", [1], trainable=False)
    assert nt not in tf.trainable_variables()
    with tf.variable_scope("vs") as vs:
        inside = tf.get_variable("x", [1])
    assert vs.global_variables() == [inside] and vs.trainable_variables() == [inside]
    assert vs.local_variables() == []


def test_variable_op_scope_and_values_pick_graph():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
    with tf.variable_op_scope([c], None, default_name="vos") as s:
        v = tf.get_variable("v", [])
        assert v.graph is g and s.name == "vos"
    assert v.name == "vos/v:0"


def test_get_variable_scope_setters(graph):
    s = tf.get_variable_scope()
    with tf.variable_scope("x") as x:
        x.set_initializer(tf.zeros_initializer())
        x.set_dtype(tf.float64)
        v = tf.get_variable("v", [1])
    assert v.dtype == tf.float64
    assert tf.get_variable_scope() is s and isinstance(s, tf.VariableScope)


def test_graphs_have_separate_stores():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.get_variable("a", [1])
    with g2.as_default():
        b = tf.get_variable("a", [1])
    assert a is not b and a.name == b.name == "a:0"


def test_get_variable_keeps_a_given_shape_without_validation_and_checks_initializers(graph):
    assert tf.get_variable("vs", [2], validate_shape=False).shape.as_list() == [2]
    assert tf.get_variable("vt", initializer=tf.zeros([3]), validate_shape=False) \
        .shape.ndims is None
    # as tf.constant: no Python float into an integer variable
    with pytest.raises(TypeError, match="Expected int32, but got 2.5 of type 'float'"):
        tf.get_variable("iv", [2], dtype=tf.int32, initializer=tf.constant_initializer(2.5))
    assert tf.get_variable("iv2", [2], dtype=tf.int32,
                           initializer=tf.constant_initializer(2)).dtype == tf.int32
