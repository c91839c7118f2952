"""The build-time check of side effects a cond does not control
(ops/control_flow/cond_side_effects.py)."""
import warnings

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.debug as twdbg
from tensorweave.ops.control_flow import cond_side_effects


@pytest.fixture(autouse=True)
def _default_mode(monkeypatch):
    monkeypatch.delenv("TW_COND_SIDE_EFFECTS", raising=False)
    cond_side_effects.set_mode(None)
    yield
    cond_side_effects.set_mode(None)


def _caught(build):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        build()
    return [x for x in w if issubclass(x.category, twdbg.CondSideEffectWarning)]


def test_assign_outside_used_in_one_branch_warns_with_both_lines(graph, where):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    bump = tf.assign_add(v, 1.0)  # created

    def build():
        tf.cond(p, lambda: bump, lambda: v.read_value())  # used
    w = _caught(build)
    assert len(w) == 1
    assert "%s:%d" % (w[0].filename, w[0].lineno) == where("used")
    assert str(w[0].message) == (
        "tf.cond \"cond\": the op 'AssignAdd/update' (AssignAddVariableOp, created at "
        "%s) is used only in the true branch (by 'cond/Switch_1' at %s), but it runs "
        "whatever the predicate is: what a branch uses from outside is computed before the "
        "cond. Create it inside the branch function to make it conditional. "
        "(TW_COND_SIDE_EFFECTS=error makes this an error, =ignore silences it.)"
        % (where("created"), where("used")))


def test_the_warned_side_effect_does_run_on_the_other_branch(graph):
    # what the warning is about (TF1 semantics): the assign runs although false
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    bump = tf.assign_add(v, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tf.cond(p, lambda: bump, lambda: tf.constant(-1.0))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(r, {p: False}) == -1.0
        assert s.run(v) == 1.0


def test_control_dependency_on_outside_print_in_false_branch(graph, where):
    p = tf.placeholder(tf.bool, [])
    printed = tf.print("hello")  # print_created

    def false_fn():
        with tf.control_dependencies([printed]):
            return tf.constant(1)  # print_used

    w = _caught(lambda: tf.cond(p, lambda: tf.constant(2), false_fn, name="pick"))
    assert len(w) == 1
    msg = str(w[0].message)
    assert msg.startswith("tf.cond \"pick\": the op '%s' (PrintV2, created at %s) is used "
                          "only in the false branch (by 'pick/Const_1' at %s)"
                          % (printed.name, where("print_created"), where("print_used")))


def test_queue_dequeue_outside_warns(graph):
    q = tf.FIFOQueue(3, tf.float32)
    item = q.dequeue()
    p = tf.placeholder(tf.bool, [])
    w = _caught(lambda: tf.cond(p, lambda: item * 2.0, lambda: tf.constant(0.0)))
    assert len(w) == 1
    assert "the op '%s' (QueueDequeueV2, created at" % item.op.name in str(w[0].message)


@pytest.mark.parametrize("case", ["read", "both", "pred_needs_it", "inside", "fed",
                                  "random", "constant"])
def test_no_false_positives(graph, case):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    bump = tf.assign_add(v, 1.0)

    def build():
        if case == "read":  # reads of variables are no side effect
            tf.cond(p, lambda: v.read_value() + tf.identity(v), lambda: tf.constant(0.0))
        elif case == "both":  # used in both branches: runs either way, as expected
            tf.cond(p, lambda: bump * 2.0, lambda: bump + 1.0)
        elif case == "pred_needs_it":  # the predicate needs it first anyway
            tf.cond(bump > 2.0, lambda: bump, lambda: tf.constant(0.0))
        elif case == "inside":  # created in the branch: conditional, as intended
            tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: v.read_value())
        elif case == "fed":  # a value fed through a placeholder
            x = tf.placeholder(tf.float32, [])
            tf.cond(p, lambda: x * 2.0, lambda: tf.constant(0.0))
        elif case == "random":  # a random draw is no side effect a branch controls
            r = tf.random_uniform([])
            tf.cond(p, lambda: r, lambda: tf.constant(0.0))
        else:  # a Python value
            tf.cond(p, lambda: tf.constant(np.float32(3.0)), lambda: 1.0)
    assert _caught(build) == []


@pytest.mark.parametrize("how", ["env", "setting"])
def test_error_mode_raises_value_error(graph, monkeypatch, how):
    if how == "env":
        monkeypatch.setenv("TW_COND_SIDE_EFFECTS", "error")
    else:
        twdbg.set_cond_side_effects("error")
    v = tf.Variable(0.0)
    bump = tf.assign(v, 5.0)
    with pytest.raises(ValueError, match=r"the op 'Assign/update' .* is used only in "
                                         r"the true branch"):
        tf.cond(tf.placeholder(tf.bool, []), lambda: bump, lambda: tf.constant(1.0))


def test_ignore_mode_and_bad_modes(graph, monkeypatch):
    v = tf.Variable(0.0)
    bump = tf.assign(v, 5.0)
    p = tf.placeholder(tf.bool, [])
    monkeypatch.setenv("TW_COND_SIDE_EFFECTS", "ignore")
    assert _caught(lambda: tf.cond(p, lambda: bump, lambda: tf.constant(1.0))) == []
    twdbg.set_cond_side_effects("warn")  # the setting wins over the environment
    assert len(_caught(lambda: tf.cond(p, lambda: bump, lambda: tf.constant(1.0)))) == 1
    with pytest.raises(ValueError, match="must be one of"):
        twdbg.set_cond_side_effects("loud")
    twdbg.set_cond_side_effects(None)
    monkeypatch.setenv("TW_COND_SIDE_EFFECTS", "loud")
    with pytest.raises(ValueError, match="TW_COND_SIDE_EFFECTS must be one of"):
        tf.cond(p, lambda: bump, lambda: tf.constant(1.0))


def test_cond_in_a_loop_using_an_outside_assign(graph):
    v = tf.Variable(0.0)
    bump = tf.assign_add(v, 1.0)

    def body(i, a):
        return i + 1, a + tf.cond(i > 2, lambda: bump, lambda: tf.constant(0.0))
    w = _caught(lambda: tf.while_loop(lambda i, a: i < 4, body, [0, 0.0]))
    assert len(w) == 1 and "AssignAddVariableOp" in str(w[0].message)


def test_library_code_may_build_conds_it_means(graph):
    """`expected()` turns the check off in this thread while a library builds conds
    whose branches knowingly use values computed before them; after it, user conds are
    checked again."""
    import warnings
    from tensorweave.ops.control_flow import cond_side_effects
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with cond_side_effects.expected():
            bump = tf.assign_add(v, 1)
            tf.cond(p, lambda: bump, lambda: tf.identity(v))
    bump2 = tf.assign_add(v, 1)
    with pytest.warns(cond_side_effects.CondSideEffectWarning):
        tf.cond(p, lambda: bump2, lambda: tf.identity(v))
