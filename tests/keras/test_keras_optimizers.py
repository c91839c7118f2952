"""tf.keras.optimizers (TF 2.15's legacy OptimizerV2 in graph mode): each optimizer's
updates against its formulas written in NumPy (dense and IndexedSlices gradients), the
hyperparameter variables and the `lr` alias, decay and clipping, weights and slots,
configs and `get`, and the wrapping of tf.train optimizers."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
O = tf.keras.optimizers

W0 = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
GRADS = [np.array([0.5, -1.0, 2.0, 0.1], np.float32),
         np.array([-0.3, 0.2, 1.5, -0.4], np.float32),
         np.array([0.7, 0.7, -0.2, 0.05], np.float32)]


# --- NumPy references: (weights, gradients) -> the weights after each step ----------------
def np_sgd(lr, momentum=0.0, nesterov=False):
    def run(w, grads):
        velocity, out = np.zeros_like(w), []
        for g in grads:
            if momentum:
                velocity = momentum * velocity - lr * g
                w = w + (momentum * velocity - lr * g if nesterov else velocity)
            else:
                w = w - lr * g
            out.append(w)
        return out
    return run


def np_adam(lr, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False):
    def run(w, grads):
        m = v = vhat = np.zeros_like(w)
        out = []
        for t, g in enumerate(grads, 1):
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            vhat = np.maximum(vhat, v)
            lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            w = w - lr_t * m / (np.sqrt(vhat if amsgrad else v) + eps)
            out.append(w)
        return out
    return run


def np_rmsprop(lr, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    def run(w, grads):
        ms = mg = mom = np.zeros_like(w)
        out = []
        for g in grads:
            ms = rho * ms + (1 - rho) * g * g
            mg = rho * mg + (1 - rho) * g
            denom = ms - mg * mg if centered else ms
            if momentum:
                mom = momentum * mom + lr * g / np.sqrt(denom + eps)
                w = w - mom
            else:
                w = w - lr * g / (np.sqrt(denom) + eps)
            out.append(w)
        return out
    return run


def np_adagrad(lr, initial=0.1, eps=1e-7):
    def run(w, grads):
        acc, out = np.full_like(w, initial), []
        for g in grads:
            acc = acc + g * g
            w = w - lr * g / (np.sqrt(acc) + eps)
            out.append(w)
        return out
    return run


def np_adadelta(lr, rho=0.95, eps=1e-7):
    def run(w, grads):
        acc = acc_update = np.zeros_like(w)
        out = []
        for g in grads:
            acc = rho * acc + (1 - rho) * g * g
            update = np.sqrt(acc_update + eps) / np.sqrt(acc + eps) * g
            acc_update = rho * acc_update + (1 - rho) * update * update
            w = w - lr * update
            out.append(w)
        return out
    return run


def np_adamax(lr, b1=0.9, b2=0.999, eps=1e-7):
    def run(w, grads):
        m = u = np.zeros_like(w)
        out = []
        for t, g in enumerate(grads, 1):
            m = b1 * m + (1 - b1) * g
            u = np.maximum(b2 * u, np.abs(g))
            w = w - lr / (1 - b1 ** t) * m / (u + eps)
            out.append(w)
        return out
    return run


def np_nadam(lr, b1=0.9, b2=0.999, eps=1e-7, schedule_decay=0.004):
    def run(w, grads):
        m = v = np.zeros_like(w)
        schedule, out = 1.0, []
        for t, g in enumerate(grads, 1):
            mu_t = b1 * (1 - 0.5 * 0.96 ** (schedule_decay * t))
            mu_next = b1 * (1 - 0.5 * 0.96 ** (schedule_decay * (t + 1)))
            schedule = schedule * mu_t
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_bar = (1 - mu_t) * g / (1 - schedule) + mu_next * m / (1 - schedule * mu_next)
            w = w - lr * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps)
            out.append(w)
        return out
    return run


def np_ftrl(lr, power=-0.5, initial=0.1, l1=0.0, l2=0.0, shrinkage=0.0, beta=0.0):
    def run(w, grads):
        accum, linear = np.full_like(w, initial), np.zeros_like(w)
        l2_adjusted = l2 + beta / (2 * lr)
        out = []
        for g in grads:
            new_accum = accum + g * g
            sigma = (new_accum ** -power - accum ** -power) / lr
            linear = linear + g + 2 * shrinkage * w - sigma * w
            quadratic = new_accum ** -power / lr + 2 * l2_adjusted
            w = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
            accum = new_accum
            out.append(w)
        return out
    return run


CASES = {
    "sgd": (lambda: O.SGD(0.1), np_sgd(0.1)),
    "momentum": (lambda: O.SGD(0.1, momentum=0.9), np_sgd(0.1, 0.9)),
    "nesterov": (lambda: O.SGD(0.1, momentum=0.8, nesterov=True), np_sgd(0.1, 0.8, True)),
    "adam": (lambda: O.Adam(0.1), np_adam(0.1)),
    "amsgrad": (lambda: O.Adam(0.1, beta_1=0.5, amsgrad=True),
                np_adam(0.1, b1=0.5, amsgrad=True)),
    "rmsprop": (lambda: O.RMSprop(0.1), np_rmsprop(0.1)),
    "rmsprop_centered": (lambda: O.RMSprop(0.1, centered=True), np_rmsprop(0.1, centered=True)),
    "rmsprop_momentum": (lambda: O.RMSprop(0.1, momentum=0.5, centered=True),
                         np_rmsprop(0.1, momentum=0.5, centered=True)),
    "adagrad": (lambda: O.Adagrad(0.1), np_adagrad(0.1)),
    "adadelta": (lambda: O.Adadelta(1.0, rho=0.9), np_adadelta(1.0, rho=0.9)),
    "adamax": (lambda: O.Adamax(0.1), np_adamax(0.1)),
    "nadam": (lambda: O.Nadam(0.1), np_nadam(0.1)),
    "ftrl": (lambda: O.Ftrl(0.1), np_ftrl(0.1)),
    "ftrl_l1_l2_beta": (lambda: O.Ftrl(0.2, learning_rate_power=-0.7,
                                       l1_regularization_strength=0.05,
                                       l2_regularization_strength=0.1, beta=0.2,
                                       initial_accumulator_value=0.3),
                        np_ftrl(0.2, -0.7, 0.3, l1=0.05, l2=0.1, beta=0.2)),
    "ftrl_shrinkage": (lambda: O.Ftrl(0.2, l1_regularization_strength=0.01,
                                      l2_shrinkage_regularization_strength=0.1),
                       np_ftrl(0.2, l1=0.01, shrinkage=0.1)),
}


def _run_dense(optimizer, grads=GRADS):
    """The variable's value after each apply of `grads` (one placeholder per step)."""
    with tf.Graph().as_default():
        v = tf.Variable(W0, name="w")
        g = tf.placeholder(tf.float32, [4])
        step = optimizer.apply_gradients([(g, v)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = []
            for grad in grads:
                sess.run(step, {g: grad})
                out.append(sess.run(v))
            return out, sess.run(optimizer.iterations)


@pytest.mark.parametrize("name", sorted(CASES))
def test_dense_updates_match_numpy(name):
    make, reference = CASES[name]
    got, iterations = _run_dense(make())
    expected = reference(W0.astype(np.float64), [g.astype(np.float64) for g in GRADS])
    for step, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, err_msg="step %d" % step)
    assert iterations == len(GRADS)


ROW_WISE = {  # sparse updates that touch only the gradient's rows, as TF's sparse kernels
    "momentum": (lambda: O.SGD(0.1, momentum=0.9), np_sgd(0.1, 0.9)),
    "rmsprop_momentum": (lambda: O.RMSprop(0.1, momentum=0.5), np_rmsprop(0.1, momentum=0.5)),
    "adagrad": (lambda: O.Adagrad(0.1), np_adagrad(0.1)),
    "adadelta": (lambda: O.Adadelta(1.0), np_adadelta(1.0)),
    "adamax": (lambda: O.Adamax(0.1), np_adamax(0.1)),
    "ftrl": (lambda: O.Ftrl(0.1, l1_regularization_strength=0.01), np_ftrl(0.1, l1=0.01)),
}
DENSE_LIKE = {  # sparse updates equal to the dense update of the scattered gradient
    "sgd": (lambda: O.SGD(0.1), np_sgd(0.1)),
    "adam": (lambda: O.Adam(0.1), np_adam(0.1)),
    "rmsprop": (lambda: O.RMSprop(0.1), np_rmsprop(0.1)),
}


def _run_sparse(optimizer, steps=2):
    """Applies the gradient of sum(c * gather(w, [0, 2, 0])) (rows 0 and 2, row 0 twice)
    `steps` times; returns the table after each step."""
    table0 = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0
    c = np.array([[1.0, -2.0, 0.5], [0.3, 0.3, -1.0], [2.0, 1.0, 1.0]], np.float32)
    with tf.Graph().as_default():
        table = tf.Variable(table0, name="table")
        loss = tf.reduce_sum(tf.gather(table, [0, 2, 0]) * c)
        grad = tf.gradients(loss, [table])[0]
        assert isinstance(grad, tf.IndexedSlices)
        step = optimizer.apply_gradients([(grad, table)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = []
            for _ in range(steps):
                sess.run(step)
                out.append(sess.run(table))
    dense_grad = np.zeros((4, 3))
    dense_grad[0] = c[0] + c[2]
    dense_grad[2] = c[1]
    return table0.astype(np.float64), dense_grad, out


@pytest.mark.parametrize("name", sorted(ROW_WISE))
def test_sparse_updates_touch_only_the_gradient_rows(name):
    make, reference = ROW_WISE[name]
    table0, dense_grad, got = _run_sparse(make())
    rows = [0, 2]
    expected = reference(table0[rows], [dense_grad[rows]] * 2)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a[rows], b, rtol=2e-6, atol=1e-6)
        np.testing.assert_array_equal(a[[1, 3]], table0[[1, 3]].astype(np.float32))


@pytest.mark.parametrize("name", sorted(DENSE_LIKE))
def test_sparse_updates_equal_the_dense_update(name):
    make, reference = DENSE_LIKE[name]
    table0, dense_grad, got = _run_sparse(make())
    for a, b in zip(got, reference(table0, [dense_grad] * 2)):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


def test_sparse_nadam_decays_all_moments_but_updates_the_rows():
    table0, dense_grad, got = _run_sparse(O.Nadam(0.1), steps=1)
    expected = np_nadam(0.1)(table0, [dense_grad])[0]
    np.testing.assert_allclose(got[0][[0, 2]], expected[[0, 2]], rtol=2e-6)
    np.testing.assert_array_equal(got[0][[1, 3]], table0[[1, 3]].astype(np.float32))


def test_hyperparameters_are_variables_and_lr_is_an_alias():
    with tf.Graph().as_default():
        opt = O.SGD(learning_rate=0.1, momentum=0.5)
        v = tf.Variable(W0)
        g = tf.placeholder(tf.float32, [4])
        step = opt.apply_gradients([(g, v)])
        assert isinstance(opt.lr, tf.Variable) and opt.lr is opt.learning_rate
        assert opt.lr.name == "SGD/learning_rate:0"
        assert [w.name for w in opt.weights] == ["SGD/iter:0", "SGD/Variable/momentum:0"]
        assert opt.get_slot_names() == ["momentum"]
        assert opt.get_slot(v, "momentum") is opt.weights[1]
        with tf.Session() as sess:
            K.backend.set_session(sess)
            sess.run(tf.global_variables_initializer())
            opt.lr = 0.5  # assigned to the variable
            K.backend.set_value(opt.momentum, 0.0)
            sess.run(step, {g: GRADS[0]})
            np.testing.assert_allclose(sess.run(v), W0 - 0.5 * GRADS[0], rtol=1e-6)
            assert opt.get_config() == {"name": "SGD", "learning_rate": 0.5, "decay": 0.0,
                                        "momentum": 0.0, "nesterov": False}
            iterations, velocity = opt.get_weights()
            assert iterations == 1
            np.testing.assert_allclose(velocity, -0.5 * GRADS[0], rtol=1e-6)
            opt.set_weights([np.array(7), np.zeros(4, np.float32)])
            assert sess.run(opt.iterations) == 7
            with pytest.raises(ValueError, match="weight list of length 1"):
                opt.set_weights([np.array(7)])
        K.backend.set_session(None)


def test_decay_divides_the_learning_rate_by_the_step():
    got, _ = _run_dense(O.SGD(0.1, decay=0.5))
    w = W0.astype(np.float64)
    for step, g in enumerate(GRADS):
        w = w - 0.1 / (1 + 0.5 * step) * g
        np.testing.assert_allclose(got[step], w, rtol=1e-6)


def test_gradient_clipping():
    got, _ = _run_dense(O.SGD(1.0, clipvalue=0.6), GRADS[:1])
    np.testing.assert_allclose(got[0], W0 - np.clip(GRADS[0], -0.6, 0.6), rtol=1e-6)
    got, _ = _run_dense(O.SGD(1.0, clipnorm=1.0), GRADS[:1])
    g = GRADS[0] / np.linalg.norm(GRADS[0])
    np.testing.assert_allclose(got[0], W0 - g, rtol=1e-6)
    with tf.Graph().as_default():
        a, b = tf.Variable([3.0]), tf.Variable([4.0])
        step = O.SGD(1.0, global_clipnorm=1.0).apply_gradients(
            [(tf.constant([3.0]), a), (tf.constant([4.0]), b)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            np.testing.assert_allclose(sess.run([a, b]), [[3.0 - 0.6], [4.0 - 0.8]],
                                       rtol=1e-6)


def test_constraints_are_applied_after_the_update():
    with tf.Graph().as_default():
        v = tf.Variable(W0, constraint=lambda x: tf.clip_by_value(x, 0.0, 1.0))
        step = O.SGD(0.1).apply_gradients([(tf.constant(GRADS[0]), v)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            np.testing.assert_allclose(sess.run(v), np.clip(W0 - 0.1 * GRADS[0], 0, 1),
                                       rtol=1e-6)


def test_get_updates_and_minimize_and_missing_gradients():
    with tf.Graph().as_default():
        v, unused = tf.Variable(W0), tf.Variable(1.0)
        loss = tf.reduce_sum(v * v)
        with pytest.raises(ValueError, match="has `None` for gradient"):
            O.Adam().get_updates(loss, [v, unused])
        with pytest.raises(ValueError, match="`tape` is required"):
            O.Adam().minimize(loss, [v])
        with pytest.raises(ValueError, match="No gradients provided for any variable"):
            O.Adam().apply_gradients([(None, unused)])
        step = O.SGD(0.25).minimize(lambda: tf.reduce_sum(v * v), lambda: [v])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            np.testing.assert_allclose(sess.run(v), W0 - 0.25 * 2 * W0, rtol=1e-6)


def test_configs_and_get():
    for cls in (O.SGD, O.Adam, O.RMSprop, O.Adagrad, O.Adadelta, O.Adamax, O.Nadam):
        opt = cls(learning_rate=0.3, clipnorm=2.0)
        config = opt.get_config()
        assert config["learning_rate"] == 0.3 and config["clipnorm"] == 2.0
        again = cls.from_config(config)
        assert type(again) is cls and again.get_config() == config
        assert O.deserialize(O.serialize(opt)).get_config() == config
    assert O.Adam().get_config() == {"name": "Adam", "learning_rate": 0.001, "decay": 0.0,
                                     "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07,
                                     "amsgrad": False}
    assert O.Adagrad().get_config()["initial_accumulator_value"] == 0.1
    assert O.Nadam().get_config()["decay"] == 0.004  # the schedule decay
    for name, cls in (("sgd", O.SGD), ("Adam", O.Adam), ("rmsprop", O.RMSprop),
                      ("RMSprop", O.RMSprop), ("adagrad", O.Adagrad), ("nadam", O.Nadam)):
        assert type(O.get(name)) is cls
    assert O.get({"class_name": "SGD", "config": {"lr": 0.2}}).get_config()["learning_rate"] \
        == 0.2
    adam = O.Adam()
    assert O.get(adam) is adam
    assert O.legacy.Adam is O.Adam and O.legacy.Optimizer is O.Optimizer
    wrapped = O.get(tf.train.AdamOptimizer(0.1))
    assert type(wrapped).__name__ == "TFOptimizer"
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        O.get(3)
    with pytest.raises(ValueError, match="Unknown optimizer"):
        O.get("nosuch")
    with pytest.raises(TypeError, match="Unexpected keyword argument passed to optimizer: beta"):
        O.SGD(beta=1)
    with pytest.raises(ValueError, match="Expected clipnorm >= 0"):
        O.SGD(clipnorm=-1)
    with pytest.raises(ValueError, match="`momentum` must be between"):
        O.SGD(momentum=1.5)
    with pytest.raises(ValueError, match="Cannot accept both"):
        O.SGD(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(ValueError, match="initial_accumulator_value must be non-negative"):
        O.Adagrad(initial_accumulator_value=-1.0)
    with pytest.raises(NotImplementedError, match="gradient_aggregator"):
        O.SGD(gradient_aggregator=lambda gv: gv)
    with pytest.raises(AttributeError, match="AdamW is not supported"):
        O.AdamW  # noqa: B018  (not in TF 2.15's compat.v1 tf.keras.optimizers)


def test_tf_train_optimizer_in_compile_matches_numpy():
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(1, input_shape=(3,))])
        w, b = np.array([[0.5], [-0.2], [0.1]], np.float32), np.array([0.3], np.float32)
        model.set_weights([w, b])
        model.compile(tf.train.MomentumOptimizer(0.05, 0.9), "mse")
        x = np.random.RandomState(0).randn(8, 3).astype(np.float32)
        y = x.sum(axis=1, keepdims=True)
        model.fit(x, y, batch_size=8, epochs=2, verbose=0)
        accum = np.zeros(4)
        params = np.concatenate([w.ravel(), b]).astype(np.float64)
        for _ in range(2):  # TF1 momentum: accum = m * accum + g; params -= lr * accum
            error = x @ params[:3, None] + params[3] - y
            grad = np.concatenate([(2 * x.T @ error / 8).ravel(), [2 * error.mean()]])
            accum = 0.9 * accum + grad
            params = params - 0.05 * accum
        got = np.concatenate([v.ravel() for v in model.get_weights()])
        np.testing.assert_allclose(got, params, rtol=1e-5)
        assert K.backend.get_value(model.optimizer.iterations) == 2


def test_ftrl_matches_tf_and_checks_its_arguments(keras_graph):
    v = K.backend.variable([[1.0, -2.0], [0.5, 3.0]])
    e = K.backend.variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    loss = tf.reduce_sum(v * v * tf.constant([[1., 2.], [3., 4.]])) + \
        tf.reduce_sum(tf.gather(e, [0, 2, 0]) ** 2)
    opt = O.Ftrl(0.2, learning_rate_power=-0.7, initial_accumulator_value=0.3,
                 l1_regularization_strength=0.05, l2_regularization_strength=0.1, beta=0.2)
    updates = opt.get_updates(loss, [v, e])
    sess = K.backend.get_session()
    for _ in range(3):
        sess.run(updates)
    # TF 2.15: the same Ftrl(...).get_updates(loss, [v, e]) run 3 times
    np.testing.assert_allclose(sess.run(v), [[0.5188383460044861, -1.751297116279602],
                                             [0.2072553187608719, 2.860605239868164]],
                               rtol=2e-6)
    np.testing.assert_allclose(sess.run(e), [[0.6864916682243347, 1.751297116279602],
                                             [3.0, 4.0],
                                             [4.704587936401367, 5.724544525146484]],
                               rtol=2e-6)
    assert [w.name for w in opt.weights] == [
        "Ftrl/iter:0", "Ftrl/Variable/accumulator:0", "Ftrl/Variable/linear:0",
        "Ftrl/Variable_1/accumulator:0", "Ftrl/Variable_1/linear:0"]
    assert O.get("ftrl").get_config() == {  # TF 2.15
        "name": "Ftrl", "learning_rate": 0.001, "decay": 0.0,
        "initial_accumulator_value": 0.1, "learning_rate_power": -0.5,
        "l1_regularization_strength": 0.0, "l2_regularization_strength": 0.0, "beta": 0.0,
        "l2_shrinkage_regularization_strength": 0.0}
    restored = O.Ftrl.from_config(opt.get_config())
    assert restored.get_config() == pytest.approx(opt.get_config())
    for key in ("initial_accumulator_value", "l1_regularization_strength",
                "l2_regularization_strength", "l2_shrinkage_regularization_strength"):
        with pytest.raises(ValueError, match="`%s` needs to be positive or zero. Received: "
                           "%s=-1." % (key, key)):
            O.Ftrl(**{key: -1})
    with pytest.raises(ValueError, match="`learning_rate_power` needs to be negative or "
                       "zero. Received: learning_rate_power=0.5."):
        O.Ftrl(learning_rate_power=0.5)
