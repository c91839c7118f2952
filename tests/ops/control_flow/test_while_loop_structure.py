"""tf.while_loop returns its results in TF1's structure: the structure the body returned
(a lone tensor wrapped in a list), a single loop variable unwrapped unless
return_same_structure. Expected values checked against TensorFlow 1.x graph mode."""
import collections

import pytest

import tensorweave as tf

Pair = collections.namedtuple("Pair", ["a", "b"])


def _describe(r):
    if isinstance(r, dict):
        return {k: _describe(v) for k, v in r.items()}
    if isinstance(r, Pair):
        return ("Pair",) + tuple(_describe(v) for v in r)
    if isinstance(r, (list, tuple)):
        return type(r)([_describe(v) for v in r])
    assert isinstance(r, tf.Tensor)
    return "T"


def _less(a, *_):
    return a < 0.0


CASES = [
    # loop_vars, body, kwargs, expected structure of the result
    ("tuple2", lambda x, y: (x, y), lambda a, b: (a, b), {}, ("T", "T")),
    ("list2", lambda x, y: [x, y], lambda a, b: [a, b], {}, ["T", "T"]),
    ("list2 body tuple", lambda x, y: [x, y], lambda a, b: (a, b), {}, ("T", "T")),
    ("tuple2 body list", lambda x, y: (x, y), lambda a, b: [a, b], {}, ["T", "T"]),
    ("list1", lambda x, y: [x], lambda a: a, {}, "T"),
    ("tuple1 body tuple", lambda x, y: (x,), lambda a: (a,), {}, "T"),
    ("list1 same structure", lambda x, y: [x], lambda a: a,
     {"return_same_structure": True}, ["T"]),
    ("tuple1 same structure body T", lambda x, y: (x,), lambda a: a,
     {"return_same_structure": True}, ["T"]),
    ("tuple1 same structure body tuple", lambda x, y: (x,), lambda a: (a,),
     {"return_same_structure": True}, ("T",)),
    ("nested", lambda x, y: (x, [y]), lambda a, b: (a, b), {}, ("T", ["T"])),
    ("namedtuple in list", lambda x, y: [Pair(x, y)], lambda p: [p], {},
     [("Pair", "T", "T")]),
    ("namedtuple", lambda x, y: Pair(x, y), lambda a, b: Pair(a, b), {}, ("Pair", "T", "T")),
    ("max_iterations list1", lambda x, y: [x], lambda a: a, {"maximum_iterations": 3}, "T"),
    ("max_iterations tuple2", lambda x, y: (x, y), lambda a, b: (a, b),
     {"maximum_iterations": 3}, ("T", "T")),
    ("max_iterations tuple1 same structure", lambda x, y: (x,), lambda a: (a,),
     {"maximum_iterations": 3, "return_same_structure": True}, ("T",)),
    ("max_iterations namedtuple", lambda x, y: Pair(x, y), lambda a, b: Pair(a, b),
     {"maximum_iterations": 3}, ("Pair", "T", "T")),
    ("max_iterations dict in list", lambda x, y: [{"a": x}], lambda d: {"a": d["a"]},
     {"maximum_iterations": 3}, {"a": "T"}),
]


@pytest.mark.parametrize("make_vars,body,kwargs,expected",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_result_structure(graph, make_vars, body, kwargs, expected):
    loop_vars = make_vars(tf.constant(1.0), tf.constant(2.0))
    cond = _less
    if isinstance(loop_vars, list) and isinstance(loop_vars[0], Pair):
        cond = lambda p: p.a < 0.0  # noqa: E731
    if isinstance(loop_vars, list) and isinstance(loop_vars[0], dict):
        cond = lambda d: d["a"] < 0.0  # noqa: E731
    out = tf.while_loop(cond, body, loop_vars, **kwargs)
    assert _describe(out) == expected


def test_values_come_back_in_the_body_structure(sess):
    i, s = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0),
                         [tf.constant(0), tf.constant(1.0)])
    out = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0),
                        [tf.constant(0), tf.constant(1.0)])
    assert isinstance(out, tuple)
    assert sess.run(out) == (4, 16.0)
    assert sess.run([i, s]) == [4, 16.0]


def test_namedtuple_fields_are_passed_as_arguments(sess):
    out = tf.while_loop(lambda a, b: a < 3, lambda a, b: Pair(a + 1, b * 3),
                        Pair(tf.constant(0), tf.constant(1)))
    assert isinstance(out, Pair)
    assert sess.run(out) == Pair(3, 27)


def test_single_tensor_loop_var_stays_a_tensor(sess):
    out = tf.while_loop(lambda a: a < 5, lambda a: a + 2, tf.constant(0))
    assert isinstance(out, tf.Tensor) and sess.run(out) == 6


def test_structure_mismatch_is_a_value_error(graph):
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="same structure"):
        tf.while_loop(lambda a, b: a < 0.0, lambda a, b: a, [x, x])


@pytest.mark.parametrize("invariants", [[tf.TensorShape([None])], tf.TensorShape([None])])
def test_shape_invariants_of_one_bounded_loop_variable(sess, invariants):
    out = tf.while_loop(lambda a: tf.reduce_sum(a) < 100.0, lambda a: tf.concat([a, a], 0),
                        [tf.ones([2])], shape_invariants=invariants, maximum_iterations=3)
    assert isinstance(out, tf.Tensor) and out.shape.as_list() == [None]
    assert sess.run(out).shape == (16,)
