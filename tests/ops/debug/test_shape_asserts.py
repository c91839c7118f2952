"""tf.debugging.assert_shapes (ops/debug/shape_asserts.py): TF 2.21's results and
messages for the same specs."""
import numpy as np
import pytest

import tensorweave as tf


def test_static_specs_pass_or_raise_value_error(graph):
    x, y = tf.zeros([10, 3]), tf.ones([10, 7])
    p = tf.constant([1.0, 2.0, 3.0])
    op = tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N", "D")), (p, ("Q",)),
                                     (1.0, ())])
    assert op.type == "NoOp" and op.name == "group_deps"
    assert not hasattr(tf, "assert_shapes")  # TF exports it under tf.debugging only
    for shapes, message in [
            ([(x, ("N", "D")), (y, ("N", "D"))],
             "Specified by tensor zeros:0 dimension 1.  Tensor ones:0 dimension 1 must have "
             "size 3.  Received size 7, shape (10, 7)"),
            ([(x, (10, 4))], "Specified explicitly.  Tensor zeros:0 dimension 1 must have "
                             "size 4.  Received size 3, shape (10, 3)"),
            ([(x, ("N",))], "Tensor zeros:0 must have rank in (0, 1).  Received rank 2"),
            ([(y, ("*", "D")), (p, ("D",))], "Specified by tensor ones:0 dimension -1.  "
                                             "Tensor Const:0 dimension 0 must have size 7")]:
        with pytest.raises(ValueError) as info:
            tf.debugging.assert_shapes(shapes)
        assert message in str(info.value)
    # "..." and "*" leave the outer dimensions free; a scalar and [1] meet () and (1,);
    # None and "." are any size
    for shapes in ([(y, (..., 7))], [(tf.zeros([1]), ())], [(tf.zeros([]), (1,))],
                   [(x, (".", 3))], [(x, (None, "Q")), (p, ("Q",))]):
        assert tf.debugging.assert_shapes(shapes).type == "NoOp"


def test_run_time_checks(sess):
    a = tf.placeholder(tf.float32, [None, None])
    b = tf.placeholder(tf.float32, [None])
    op = tf.debugging.assert_shapes({a: ("N", 3), b: ("N",)})
    sess.run(op, {a: np.zeros((2, 3)), b: np.zeros(2)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"assertion failed: \[\] \[Specified explicitly\] \[Tensor "
                             r"Placeholder:0 dimension\] \[1\] \[must have size\] \[3\] "
                             r"\[Received shape: \] \[2 4\]"):
        sess.run(op, {a: np.zeros((2, 4)), b: np.zeros(2)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"\[Specified by tensor Placeholder:0 dimension 0\] \[Tensor "
                             r"Placeholder_1:0 dimension\] \[0\] \[must have size\] \[2\]"):
        sess.run(op, {a: np.zeros((2, 3)), b: np.zeros(5)})
    square = tf.debugging.assert_shapes([(a, ("N", "N"))], message="hello")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[hello.  \]"):
        sess.run(square, {a: np.zeros((2, 3))})
    sess.run(square, {a: np.zeros((3, 3))})
    # a run-time rank check comes first
    free = tf.placeholder(tf.float32)
    ranked = tf.debugging.assert_shapes([(free, (2, 2, 2))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank"):
        sess.run(ranked, {free: np.zeros((2, 2))})
    sess.run(ranked, {free: np.zeros((2, 2, 2))})


def test_graph_collections_lists_the_collection_names(graph):
    tf.Variable(1.0)
    tf.add_to_collection("mine", 1)
    assert {"variables", "trainable_variables", "mine"} <= set(graph.collections)
