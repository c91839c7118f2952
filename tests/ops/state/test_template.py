"""tf.make_template (ops/state/template.py): variables shared between calls, TF1's
scope names, create_scope_now_, kwargs binding, the error for new trainable variables."""
import numpy as np
import pytest

import tensorweave as tf


def _scale(x, init=1.0):
    w = tf.get_variable("w", [2], initializer=tf.constant_initializer(init))
    return w * x


def test_first_call_creates_later_calls_reuse(graph, sess):
    t = tf.make_template("tmpl", _scale, init=2.0)
    a, b = t(1.0), t(3.0)
    assert [v.name for v in tf.global_variables()] == ["tmpl/w:0"]
    assert a.name.startswith("tmpl/") and b.name.startswith("tmpl_1/")
    assert t.name == "tmpl" and t.variable_scope_name == "tmpl/"
    assert [v.name for v in t.variables] == ["tmpl/w:0"]
    assert [v.name for v in t.trainable_variables] == ["tmpl/w:0"]
    assert t.non_trainable_variables == [] and t.local_variables == []
    sess.run(tf.global_variables_initializer())
    av, bv = sess.run([a, b])
    np.testing.assert_array_equal(av, [2.0, 2.0])
    np.testing.assert_array_equal(bv, [6.0, 6.0])


def test_two_templates_get_unique_scopes(graph):
    t1 = tf.make_template("net", _scale)
    t2 = tf.make_template("net", _scale)
    t1(1.0)
    t2(1.0)
    t1(1.0)
    assert sorted(v.name for v in tf.global_variables()) == ["net/w:0", "net_1/w:0"]


def test_create_scope_now_and_unique_name(graph):
    with tf.variable_scope("outer"):
        t = tf.make_template("now", _scale, create_scope_now_=True)
    assert t.variable_scope_name == "outer/now/"
    t(1.0)  # called outside "outer": the scope made at creation is used
    t(2.0)
    u = tf.make_template("ignored", _scale, unique_name_="exact")
    u(1.0)
    assert sorted(v.name for v in tf.global_variables()) == ["exact/w:0", "outer/now/w:0"]
    lazy = tf.make_template("lazy", _scale)
    assert lazy.variable_scope is None and lazy.variables == []


def test_new_trainable_variable_on_a_later_call_fails(graph):
    def bad(x):
        return tf.Variable(1.0) * x
    t = tf.make_template("bad", bad)
    t(1.0)
    with pytest.raises(ValueError, match="Trainable variable created when calling a "
                                         "template after the first time"):
        t(2.0)


def test_custom_getter(graph):
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs)
    t = tf.make_template("cg", _scale, custom_getter_=getter)
    t(1.0)
    t(1.0)
    assert seen == ["cg/w", "cg/w"]
