"""A cond's outputs, tf.tuple and tf.case as TF1 builds them: singletons unpacked all
the way down, branch values merged without copies (so names match TF's), tf.tuple's
gated copies named control_dependency."""
import collections

import numpy as np
import pytest

import tensorweave as tf


def test_cond_unpacks_singletons_all_the_way_down(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(2.0)
    nested = tf.cond(p, lambda: [[x]], lambda: [[x * 2]])
    assert isinstance(nested, tf.Tensor)
    One = collections.namedtuple("One", ["a"])
    named = tf.cond(p, lambda: One(x), lambda: One(x * 2))  # a namedtuple is a tuple
    assert isinstance(named, tf.Tensor)
    strict = tf.cond(p, lambda: [[x]], lambda: [[x * 2]], strict=True)
    assert isinstance(strict, list) and isinstance(strict[0], list)
    assert sess.run([nested, named], {p: False}) == [4.0, 4.0]


def test_cond_merges_the_branch_values_themselves(sess):
    # TF's names: the Merge takes each branch's own output, or the Switch of a value
    # from outside; no copy is added in a branch
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(2.0)
    c = tf.cond(p, lambda: tf.identity(x * 2.0), lambda: tf.identity(x + 10.0))
    assert [t.name for t in c.op.inputs] == ["cond/Identity_1:0", "cond/Identity:0"]
    d = tf.cond(p, lambda: x, lambda: x * 2)
    assert [t.name for t in d.op.inputs] == ["cond_1/mul:0", "cond_1/Switch_1:1"]
    assert sess.run([c, d], {p: True}) == [4.0, 2.0]
    assert sess.run([c, d], {p: False}) == [12.0, 4.0]


def test_tuple_gates_with_named_dependencies_and_converts_values(sess):
    out = tf.tuple([tf.constant(1), tf.constant(2)], name="tup")
    assert [t.name for t in out] == ["tup/control_dependency:0",
                                     "tup/control_dependency_1:0"]
    counter = tf.Variable(0)
    bump = tf.assign_add(counter, 1)
    mixed = tf.tuple([1, None], control_inputs=[bump])
    assert mixed[1] is None
    sess.run(counter.initializer)
    assert sess.run(mixed[0]) == 1
    assert sess.run(counter) == 1  # the gate ran the increment
    (group,) = tf.tuple([bump.op])
    assert isinstance(group, tf.Operation)
    slices = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    (gated,) = tf.tuple([slices])
    assert isinstance(gated, tf.IndexedSlices)
    np.testing.assert_array_equal(sess.run(gated.values), [[1.0, 2.0]])
    with pytest.raises(TypeError):
        tf.tuple([tf.constant(1)], control_inputs=[3])


def test_case_needs_a_pair(graph):
    with pytest.raises(ValueError, match="must not be empty"):
        tf.case([], default=lambda: tf.constant(1))


def test_input_gradients_take_the_forward_shapes(graph):
    x = tf.constant([1.0, 2.0, 3.0])
    assert tf.gradients(tf.map_fn(lambda v: v * v, x), x)[0].shape.as_list() == [3]
    p = tf.placeholder(tf.float32, [None, 4])
    assert tf.gradients(tf.map_fn(lambda v: v * 2, p), p)[0].shape.as_list() == [None, 4]
