"""Argument checks and run-time checks of tf.cond, tf.case, tf.switch_case and
tf.while_loop (control_flow_ops.py): TF's error classes and messages (recorded from
TF 2.21 with tensorflow.compat.v1 and v2 behaviour disabled), and the order and
assertions of tf.case."""
import numpy as np
import pytest

import tensorweave as tf


# --- cond -----------------------------------------------------------------------------------
def test_cond_with_branches_returning_nothing_raises(graph):
    with pytest.raises(ValueError, match="'true_fn' and 'false_fn' must return at least one "
                                         "result."):
        tf.cond(tf.constant(True), lambda: (), lambda: ())


def test_cond_dtype_mismatch_message_names_both_dtypes(graph):
    with pytest.raises(ValueError, match=r"Outputs of 'true_fn' and 'false_fn' must have the "
                                         r"same type\(s\). Received float32 from 'true_fn' "
                                         r"and int32 from 'false_fn'."):
        tf.cond(tf.constant(True), lambda: tf.constant(3.0), lambda: tf.constant(1))


@pytest.mark.parametrize("executor", ["structured", "tagged"])
def test_cond_with_a_fed_vector_predicate_fails_at_run_time(graph, monkeypatch, executor):
    # the tagged executor runs Switch inline, without its kernel
    monkeypatch.setenv("TW_EXECUTOR", executor)
    p = tf.placeholder(tf.bool)
    y = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    with tf.Session() as sess:
        assert sess.run(y, {p: True}) == 1.0
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"The second input must be a scalar, but it has shape "
                                 r"\[2\]"):
            sess.run(y, {p: [True, False]})


# --- case -----------------------------------------------------------------------------------
def test_case_rejects_python_bool_and_non_bool_predicates(graph):
    with pytest.raises(TypeError, match="pred must be a Tensor, got: True"):
        tf.case([(True, lambda: tf.constant(1))], default=lambda: tf.constant(3))
    c = tf.constant(1, name="c")
    with pytest.raises(TypeError, match="pred must be Tensor of type bool: c:0"):
        tf.case([(c, lambda: tf.constant(1))], default=lambda: tf.constant(3))
    with pytest.raises(TypeError, match="'pred_fn_pairs' must be a list, tuple, or dict. "
                                        "Received: <class 'function'>"):
        tf.case(lambda: 1, default=lambda: tf.constant(3))


def test_case_dict_pairs_are_tested_in_predicate_name_order(sess):
    x = tf.placeholder(tf.int32, [])
    # both hold for x = 5; "a_pred" sorts before "b_pred" whatever the dict's order
    fns = {tf.greater(x, 0, name="b_pred"): lambda: tf.constant(2),
           tf.greater(x, 1, name="a_pred"): lambda: tf.constant(1)}
    y = tf.case(fns, default=lambda: tf.constant(0))
    assert sess.run(y, {x: 5}) == 1
    assert sess.run(y, {x: 1}) == 2
    assert sess.run(y, {x: -1}) == 0


def test_case_exclusive_failure_shows_the_predicates(sess):
    x = tf.placeholder(tf.int32, [])
    p0, p1 = tf.less(x, 0), tf.less(x, 10)
    y = tf.case([(p0, lambda: tf.constant(-1)), (p1, lambda: tf.constant(1))],
                default=lambda: tf.constant(99), exclusive=True)
    assert sess.run(y, {x: 5}) == 1
    assert sess.run(y, {x: 50}) == 99
    # TF's message: the predicate names, then their values
    want = (r"assertion failed: \[Input error: exclusive=True: more than 1 conditions "
            r"\(%s, %s\) evaluated as True:\] \[1 1\]" % (p0.name, p1.name))
    with pytest.raises(tf.errors.InvalidArgumentError, match=want):
        sess.run(y, {x: -5})


# --- switch_case ----------------------------------------------------------------------------
def test_switch_case_branches_of_different_dtypes_raise_type_error(graph):
    with pytest.raises(TypeError, match=r"branches\[0\] and branches\[1\] arguments to "
                                        r"tf.switch_case must have the same number, type, "
                                        r"and overall structure of return values."):
        tf.switch_case(tf.constant(1), [lambda: tf.constant(1), lambda: tf.constant(2.0)])
    with pytest.raises(TypeError, match=r"branches\[1\] and branches\[2\]"):
        tf.switch_case(tf.constant(1), [lambda: tf.constant(1), lambda: tf.constant(2),
                                        lambda: (tf.constant(3), tf.constant(4))])


# --- while_loop -----------------------------------------------------------------------------
def test_while_loop_argument_messages(graph):
    with pytest.raises(TypeError, match="^'cond' must be callable.$"):
        tf.while_loop(1, lambda i: i, [0])
    with pytest.raises(TypeError, match="^'body' must be callable.$"):
        tf.while_loop(lambda i: i < 3, 1, [0])
    with pytest.raises(TypeError, match="^'parallel_iterations' must be a positive integer.$"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=0)
    with pytest.raises(ValueError, match="^'loop_vars' must be provided.$"):
        tf.while_loop(lambda: True, lambda: (), [])


def test_while_loop_maximum_iterations_must_be_a_scalar(graph):
    with pytest.raises(ValueError, match=r"'maximum_iterations' must be a scalar. Received "
                                         r"shape: \(1,\)"):
        tf.while_loop(lambda i: i < 100, lambda i: i + 1, [0], maximum_iterations=[3])


def test_while_loop_maximum_iterations_bound(sess):
    m = tf.placeholder(tf.int32, [])
    r = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [0], maximum_iterations=m)
    assert sess.run(r, {m: 3}) == 3
    assert sess.run(r, {m: 0}) == 0
    np.testing.assert_equal(sess.run(r, {m: 500}), 100)


def test_tensor_array_shape_invariant_is_checked_against_its_scalar_flow(sess):
    ta = tf.TensorArray(tf.float32, 2)

    def body(i, t):
        return i + 1, t.write(i, tf.cast(i, tf.float32) * 3.0)
    with pytest.raises(ValueError, match=r"The shape invariant specified for .* is not "
                                         r"compatible with the initial shape of the loop "
                                         r"variable. It enters the loop with shape \(\), but "
                                         r"the specified shape invariant is \(5,\)."):
        tf.while_loop(lambda i, t: i < 2, body, (0, ta),
                      shape_invariants=(tf.TensorShape([]), tf.TensorShape([5])))
    for invariant in (tf.TensorShape([]), tf.TensorShape(None)):
        _, out = tf.while_loop(lambda i, t: i < 2, body, (0, ta),
                               shape_invariants=(tf.TensorShape([]), invariant))
        np.testing.assert_array_equal(sess.run(out.stack()), [0.0, 3.0])
