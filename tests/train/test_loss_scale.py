"""TF1 mixed precision: the loss scales (train/loss_scale.py), the loss-scaling optimizer
wrapper and the graph-rewrite switch (train/loss_scale_optimizer.py). Expected values
are computed by hand or by NumPy re-implementations of plain SGD and Momentum."""
import logging

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import context
from tensorweave.runtime.config import RewriterConfig
from tensorweave.train import loss_scale_optimizer as lso

F32_MAX = float(np.finfo(np.float32).max)


@pytest.fixture
def rewrite_off():
    """Leaves the mixed precision switch off after the test, whatever it did."""
    yield
    context._reset_for_tests()


def _run_scale(sess, ls):
    return sess.run([ls(), ls._num_good_steps])


# --- names ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["LossScale", "FixedLossScale", "DynamicLossScale"])
def test_loss_scale_classes_exported_in_three_namespaces(name):
    obj = getattr(tf.mixed_precision, name)
    assert getattr(tf.mixed_precision.experimental, name) is obj
    assert getattr(tf.train.experimental, name) is obj


@pytest.mark.parametrize("name", ["MixedPrecisionLossScaleOptimizer",
                                  "enable_mixed_precision_graph_rewrite",
                                  "disable_mixed_precision_graph_rewrite"])
def test_optimizer_and_switch_exported_in_two_namespaces(name):
    assert getattr(tf.mixed_precision, name) is getattr(tf.train.experimental, name)
    assert not hasattr(tf.mixed_precision.experimental, name)


# --- FixedLossScale -----------------------------------------------------------------------
def test_fixed_loss_scale_value_config_and_update(graph, sess):
    ls = tf.mixed_precision.FixedLossScale(8)
    t = ls()
    assert t.dtype == tf.float32
    assert sess.run(t) == 8.0
    assert repr(ls) == "FixedLossScale(8.0)"
    assert ls.get_config() == {"loss_scale_value": 8.0}
    again = tf.mixed_precision.FixedLossScale.from_config(ls.get_config())
    assert isinstance(again, tf.mixed_precision.FixedLossScale)
    assert again.get_config() == {"loss_scale_value": 8.0}
    op, should_apply = ls.update([tf.constant([np.inf])])
    assert isinstance(op, tf.Operation) and op.type == "NoOp"
    assert should_apply is True
    assert tf.global_variables() == []  # a fixed scale has no state


@pytest.mark.parametrize("value,message", [
    (0.5, "loss_scale_value must be at least 1."),
    ("8", "loss_scale_value must be a Python int or float."),
    (None, "loss_scale_value must be a Python int or float."),
    (np.float32(4), "loss_scale_value must be a Python int or float."),
])
def test_fixed_loss_scale_rejects_bad_values(value, message):
    with pytest.raises(ValueError) as e:
        tf.mixed_precision.FixedLossScale(value)
    assert str(e.value) == message


def test_loss_scale_is_abstract():
    with pytest.raises(TypeError):
        tf.mixed_precision.LossScale()


# --- DynamicLossScale ---------------------------------------------------------------------
def test_dynamic_loss_scale_defaults_and_variables(graph, sess):
    ls = tf.mixed_precision.DynamicLossScale()
    assert (ls.initial_loss_scale, ls.increment_period, ls.multiplier) == (32768.0, 2000, 2.0)
    assert ls.get_config() == {"initial_loss_scale": 32768.0, "increment_period": 2000,
                               "multiplier": 2.0}
    assert repr(ls) == ("DynamicLossScale(initial_loss_scale=32768.0, "
                        "increment_period=2000, multiplier=2.0)")
    got = [(v.name, v.dtype.base_dtype) for v in tf.global_variables()]
    assert got == [("current_loss_scale:0", tf.float32), ("good_steps:0", tf.int64)]
    assert tf.trainable_variables() == []
    sess.run(tf.global_variables_initializer())
    assert _run_scale(sess, ls) == [32768.0, 0]
    # a second instance in the same graph gets its own, uniquified variables
    tf.mixed_precision.DynamicLossScale()
    assert [v.name for v in tf.global_variables()][2:] == ["current_loss_scale_1:0",
                                                           "good_steps_1:0"]


def test_dynamic_loss_scale_config_round_trip_converts_types(graph):
    ls = tf.mixed_precision.DynamicLossScale(initial_loss_scale=4, increment_period=2.7,
                                             multiplier=3)
    assert ls.get_config() == {"initial_loss_scale": 4.0, "increment_period": 2,
                               "multiplier": 3.0}
    again = tf.mixed_precision.DynamicLossScale.from_config(ls.get_config())
    assert again.get_config() == ls.get_config()


def test_dynamic_loss_scale_update_schedule(graph, sess):
    ls = tf.mixed_precision.DynamicLossScale(initial_loss_scale=8, increment_period=2,
                                             multiplier=2)
    g = tf.placeholder(tf.float32, [2])
    h = tf.placeholder(tf.float32, [3])
    # a nested structure with a None and an IndexedSlices, as TF accepts
    grads = {"a": g, "b": [None, tf.IndexedSlices(h, tf.constant([0, 1, 1]),
                                                   tf.constant([4]))]}
    update_op, should_apply = ls.update(grads)
    assert should_apply.dtype == tf.bool
    sess.run(tf.global_variables_initializer())
    ok, bad_h = np.ones(3, np.float32), np.array([1, np.nan, 1], np.float32)
    # (g, h) fed -> (should_apply, scale, good_steps) after the update, by hand:
    steps = [
        ([1, 2], ok, True, 8.0, 1),
        ([3, 4], ok, True, 16.0, 0),          # 2 good steps: doubled, count restarts
        ([np.inf, 0], ok, False, 8.0, 0),     # nonfinite: halved
        ([1, 1], ok, True, 8.0, 1),
        ([1, 1], bad_h, False, 4.0, 0),       # NaN in an IndexedSlices' values
        ([-np.inf, 1], ok, False, 2.0, 0),
        ([1, 1], ok, True, 2.0, 1),
        ([1, 1], ok, True, 4.0, 0),
    ]
    for gv, hv, want_apply, want_scale, want_good in steps:
        _, applied = sess.run([update_op, should_apply], {g: gv, h: hv})
        assert applied == want_apply
        assert _run_scale(sess, ls) == [want_scale, want_good]


def test_dynamic_loss_scale_never_below_one(graph, sess):
    ls = tf.mixed_precision.DynamicLossScale(initial_loss_scale=1.5, increment_period=5)
    update_op, _ = ls.update([tf.constant([np.nan])])
    sess.run(tf.global_variables_initializer())
    sess.run(update_op)
    assert _run_scale(sess, ls) == [1.0, 0]  # max(1.5 / 2, 1)
    sess.run(update_op)
    assert _run_scale(sess, ls) == [1.0, 0]


def test_dynamic_loss_scale_keeps_scale_when_raising_it_overflows(graph, sess):
    ls = tf.mixed_precision.DynamicLossScale(initial_loss_scale=2.0 ** 127,
                                             increment_period=1)
    update_op, should_apply = ls.update([tf.constant([1.0])])
    sess.run(tf.global_variables_initializer())
    assert sess.run([update_op, should_apply])[1]
    # 2**128 is inf in float32: the scale stays, the count still restarts
    assert _run_scale(sess, ls) == [2.0 ** 127, 0]


def test_get_interprets_identifiers(graph):
    from tensorweave.train.loss_scale import get
    assert get(None) is None
    fixed = get(128)
    assert isinstance(fixed, tf.mixed_precision.FixedLossScale)
    assert fixed.get_config() == {"loss_scale_value": 128.0}
    assert get(True).get_config() == {"loss_scale_value": 1.0}  # a bool is an int, as TF
    assert isinstance(get("dynamic"), tf.mixed_precision.DynamicLossScale)
    assert get(fixed) is fixed
    for bad in ("foo", np.float32(4), tf.constant(4.0)):
        with pytest.raises(ValueError, match="Could not interpret loss scale identifier"):
            get(bad)


# --- MixedPrecisionLossScaleOptimizer -----------------------------------------------------
C = np.array([1.0, -2.0, 0.5], np.float32)
W0 = np.array([0.3, -0.7, 1.1], np.float32)
# x of each step. A float32 gradient of the scaled loss, (w + c) * x * scale, overflows
# to inf once x * scale > 3.4e38: at x = 1e36 with every scale this schedule reaches
# (>= 512), although the unscaled gradient (~1e36) would be finite.
OVERFLOW = 1e36
XS = [1.0, 0.5, OVERFLOW, 2.0, 1.0, 1.0, 0.25, 1.0, 1.0, OVERFLOW, 1.5]
# (scale, good_steps) after each step, by hand (initial 1024, period 3, multiplier 2)
SCALES = [(1024, 1), (1024, 2), (512, 0), (512, 1), (512, 2), (1024, 0), (1024, 1),
          (1024, 2), (2048, 0), (1024, 0), (1024, 1)]


def _model():
    w = tf.Variable(W0, name="w")
    x = tf.placeholder(tf.float32, [])
    loss = (0.5 * tf.reduce_sum(w * w) + tf.reduce_sum(w * C)) * x
    return w, x, loss


def _dynamic(opt):
    return tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        opt, tf.mixed_precision.DynamicLossScale(initial_loss_scale=1024,
                                                 increment_period=3, multiplier=2))


def test_overflowing_steps_are_skipped_and_sgd_matches_numpy(graph, sess):
    w, x, loss = _model()
    gs = tf.train.get_or_create_global_step()
    opt = _dynamic(tf.train.GradientDescentOptimizer(0.1))
    train = opt.minimize(loss, global_step=gs)
    assert isinstance(train, tf.Operation) and train.name == "GradientDescent"
    ls = opt._loss_scale
    sess.run(tf.global_variables_initializer())
    ref, applied = W0.copy(), 0
    for x_val, want in zip(XS, SCALES):
        before = sess.run(w)
        sess.run(train, {x: x_val})
        if x_val != OVERFLOW:  # plain SGD with the unscaled gradient
            ref = ref - np.float32(0.1) * (ref + C) * np.float32(x_val)
            applied += 1
        else:
            np.testing.assert_array_equal(sess.run(w), before)  # skipped: unchanged
        np.testing.assert_allclose(sess.run(w), ref, rtol=1e-6, atol=1e-7)
        assert sess.run(gs) == applied  # global_step counts applied steps only
        assert _run_scale(sess, ls) == list(want)
    assert applied == 9


def test_momentum_slots_untouched_on_skipped_steps(graph, sess):
    w, x, loss = _model()
    base = tf.train.MomentumOptimizer(0.1, 0.9)
    opt = _dynamic(base)
    train = opt.minimize(loss)
    acc = base.get_slot(w, "momentum")
    sess.run(tf.global_variables_initializer())
    ref_w, ref_acc = W0.copy(), np.zeros(3, np.float32)
    for x_val in XS:
        before = sess.run([acc, w])
        sess.run(train, {x: x_val})
        if x_val != OVERFLOW:
            ref_acc = np.float32(0.9) * ref_acc + (ref_w + C) * np.float32(x_val)
            ref_w = ref_w - np.float32(0.1) * ref_acc
        else:
            for old, new in zip(before, sess.run([acc, w])):
                np.testing.assert_array_equal(new, old)
        np.testing.assert_allclose(sess.run(acc), ref_acc, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sess.run(w), ref_w, rtol=1e-5, atol=1e-6)


def test_wrapper_takes_name_and_delegates_variables_as_tf(graph):
    w, x, loss = _model()
    base = tf.train.MomentumOptimizer(0.1, 0.9, use_locking=True)
    opt = tf.mixed_precision.MixedPrecisionLossScaleOptimizer(base, "dynamic")
    assert opt.get_name() == "Momentum" and opt._use_locking is True
    opt.minimize(loss)
    assert [v.name for v in opt.variables()] == ["w/Momentum:0", "current_loss_scale:0",
                                                 "good_steps:0"]
    # TF's wrapper does not forward these: it has no slots of its own
    assert opt.get_slot_names() == [] and opt.get_slot(w, "momentum") is None
    assert base.get_slot_names() == ["momentum"]


def test_compute_gradients_are_unscaled(graph, sess):
    w, x, loss = _model()
    emb = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2), name="emb")
    loss = loss + tf.reduce_sum(tf.nn.embedding_lookup(emb, [0, 2, 2])) * 3.0
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.GradientDescentOptimizer(0.1), 4096)
    (gw, vw), (ge, ve) = opt.compute_gradients(loss)
    assert (vw, ve) == (w, emb)
    assert isinstance(ge, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    got_w, got_e = sess.run([gw, ge.values], {x: 2.0})
    np.testing.assert_allclose(got_w, (W0 + C) * 2.0, rtol=1e-6)
    np.testing.assert_array_equal(got_e, np.full((3, 2), 3.0, np.float32))


def test_callable_loss_is_scaled_when_called(graph, sess):
    w, x, _ = _model()
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.GradientDescentOptimizer(0.5), 8)
    train = opt.minimize(lambda: tf.reduce_sum(w * w) * x)
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: 1.0})
    np.testing.assert_allclose(sess.run(w), W0 - 0.5 * 2 * W0, atol=1e-7)


def test_fixed_loss_scale_applies_nonfinite_gradients_as_tf(graph, sess):
    w, x, loss = _model()
    gs = tf.train.get_or_create_global_step()
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.GradientDescentOptimizer(0.1), 1024)
    train = opt.minimize(loss, global_step=gs)
    assert opt.variables() == []
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: OVERFLOW})  # a fixed scale cannot veto a step
    assert not np.isfinite(sess.run(w)).any()
    assert sess.run(gs) == 1


def test_apply_gradients_names_and_train_op(graph):
    w, x, loss = _model()
    opt = _dynamic(tf.train.GradientDescentOptimizer(0.1))
    op = opt.apply_gradients(opt.compute_gradients(loss), name="step")
    assert op.name == "step" and op.type == "NoOp"
    train_ops = tf.get_collection(tf.GraphKeys.TRAIN_OP)
    assert len(train_ops) == 1 and train_ops[0].name.endswith("/step-wrapped")


def test_no_gradient_for_any_variable(graph):
    w, x, loss = _model()
    v = tf.Variable([1.0], name="v")
    opt = _dynamic(tf.train.GradientDescentOptimizer(0.1))
    gv = opt.compute_gradients(loss, var_list=[w, v])
    assert gv[1][0] is None
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, w)])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(tf.reduce_sum(x), var_list=[v])


@pytest.mark.parametrize("dtype", [tf.float16, tf.float64])
def test_non_float32_gradients_fail_as_tf(graph, dtype):
    # the reciprocal of the scale is a float32 tensor, and TF multiplies by it as is
    w = tf.Variable([1.0, 2.0], dtype=dtype)
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.GradientDescentOptimizer(0.1), "dynamic")
    with pytest.raises(TypeError):
        opt.minimize(tf.reduce_sum(w * w))


@pytest.mark.parametrize("opt,loss_scale,message", [
    (3, "dynamic", "\"opt\" must be an instance of Optimizer, but got: <class 'int'>"),
    (None, None, "loss_scale cannot be None"),
    (None, "foo", "Could not interpret loss scale identifier: foo"),
    (None, 0.5, "loss_scale_value must be at least 1."),
])
def test_wrapper_argument_errors(graph, opt, loss_scale, message):
    opt = tf.train.GradientDescentOptimizer(0.1) if opt is None else opt
    with pytest.raises(ValueError) as e:
        tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale)
    assert str(e.value) == message


def test_internal_update_methods_are_never_called(graph):
    opt = _dynamic(tf.train.GradientDescentOptimizer(0.1))
    with pytest.raises(RuntimeError, match="should never be called"):
        opt._apply_dense(None, None)


# --- the graph rewrite switch -------------------------------------------------------------
def test_enable_wraps_records_and_leaves_graph_float32(graph, sess, rewrite_off):
    assert not lso.is_mixed_precision_graph_rewrite_enabled()
    w, x, loss = _model()
    opt = tf.mixed_precision.enable_mixed_precision_graph_rewrite(
        tf.train.GradientDescentOptimizer(0.1))
    assert lso.is_mixed_precision_graph_rewrite_enabled()
    assert isinstance(opt, tf.mixed_precision.MixedPrecisionLossScaleOptimizer)
    assert opt._loss_scale.get_config()["initial_loss_scale"] == 32768.0
    train = opt.minimize(loss)
    # no float16 rewrite: every value of the graph stays as built
    dtypes = {t.dtype.base_dtype for op in graph.get_operations() for t in op.outputs}
    assert tf.float16 not in dtypes
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: 1.0})
    np.testing.assert_allclose(sess.run(w), W0 - 0.1 * (W0 + C), rtol=1e-6)
    tf.train.experimental.disable_mixed_precision_graph_rewrite()
    assert not lso.is_mixed_precision_graph_rewrite_enabled()


def test_sessions_made_while_enabled_get_auto_mixed_precision(rewrite_off, caplog):
    on, off = RewriterConfig.ON, RewriterConfig.OFF
    with tf.Graph().as_default():
        tf.Session()  # a session without the rewrite: enabling later warns about it
        caplog.set_level(logging.WARNING, logger="tensorflow")
        tf.mixed_precision.enable_mixed_precision_graph_rewrite(
            tf.train.GradientDescentOptimizer(0.1))
        assert "existing Sessions that do not use mixed precision" in caplog.text
        assert tf.Session()._config.graph_options.rewrite_options.auto_mixed_precision == on
        mine = tf.ConfigProto(inter_op_parallelism_threads=2)
        got = tf.Session(config=mine)._config
        assert got is not mine and got.inter_op_parallelism_threads == 2
        assert got.graph_options.rewrite_options.auto_mixed_precision == on
        assert mine.graph_options.rewrite_options.auto_mixed_precision == 0
        mine.graph_options.rewrite_options.auto_mixed_precision = off
        assert tf.Session(config=mine)._config is mine  # OFF is left as it is
        tf.mixed_precision.disable_mixed_precision_graph_rewrite()
        assert tf.Session()._config is None


def test_enable_with_fixed_scale_and_twice_with_fresh_optimizers(graph, rewrite_off):
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        tf.train.GradientDescentOptimizer(0.1), 128)
    assert isinstance(opt._loss_scale, tf.mixed_precision.FixedLossScale)
    again = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        tf.train.AdamOptimizer())  # TF allows this: a second, unwrapped optimizer
    assert isinstance(again, tf.mixed_precision.MixedPrecisionLossScaleOptimizer)
    with pytest.raises(ValueError, match='"opt" must not already be an instance of a '
                                         'MixedPrecisionLossScaleOptimizer'):
        tf.train.experimental.enable_mixed_precision_graph_rewrite(again)


@pytest.mark.parametrize("make_opt", [lambda: 3, lambda: tf.keras.optimizers.SGD()],
                         ids=["int", "keras"])
def test_enable_rejects_what_is_not_a_train_optimizer(graph, rewrite_off, make_opt):
    opt = make_opt()
    with pytest.raises(ValueError) as e:
        tf.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    assert str(e.value) == ('"opt" must be an instance of a tf.train.Optimizer or a '
                            'tf.keras.optimizers.Optimizer, but got: %s' % (opt,))
    assert not lso.is_mixed_precision_graph_rewrite_enabled()


def test_enable_rejects_bad_loss_scale_without_switching(graph, rewrite_off):
    with pytest.raises(ValueError, match="loss_scale cannot be None"):
        tf.mixed_precision.enable_mixed_precision_graph_rewrite(
            tf.train.GradientDescentOptimizer(0.1), None)
    assert not lso.is_mixed_precision_graph_rewrite_enabled()


def test_disable_when_disabled_warns(rewrite_off, caplog):
    caplog.set_level(logging.WARNING, logger="tensorflow")
    tf.mixed_precision.disable_mixed_precision_graph_rewrite()
    assert [r.getMessage() for r in caplog.records] == [
        "disable_mixed_precision_graph_rewrite() called when mixed precision is already "
        "disabled."]


def test_loss_scale_state_is_checkpointed(graph, sess, tmp_path):
    # the scale's variables are ordinary global variables, so a default Saver keeps them
    ls = tf.mixed_precision.DynamicLossScale(initial_loss_scale=64, increment_period=10)
    update_op, _ = ls.update([tf.constant([np.inf])])
    saver = tf.train.Saver()
    sess.run(tf.global_variables_initializer())
    sess.run(update_op)
    path = saver.save(sess, str(tmp_path / "ckpt"))
    assert dict(tf.train.list_variables(path)) == {"current_loss_scale": [],
                                                   "good_steps": []}
    sess.run(tf.global_variables_initializer())
    assert _run_scale(sess, ls) == [64.0, 0]
    saver.restore(sess, path)
    assert _run_scale(sess, ls) == [32.0, 0]
