"""Optimizers: TF1 update formulas (recorded reference-TF results and NumPy
re-implementations), slots, global_step, errors, sparse updates, fused kernels."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.train import training_ops

# --- the tiny problem: a dense variable W (matmul) and a sparse one E (embedding lookup
# with a repeated id) ----------------------------------------------------------------------
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)
T = np.array([[1.0, -1.0], [0.5, 2.0]], np.float32)
W0 = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], np.float32)
E0 = np.arange(12, dtype=np.float32).reshape(6, 2) / 10 - 0.5
IDS = [1, 3, 3, 0]
C = np.array([[1.0, -2.0], [0.5, 1.0], [-1.0, 0.25], [2.0, 1.5]], np.float32)
UNTOUCHED = [2, 4, 5]

OPTIMIZERS = {
    "adam": lambda: tf.train.AdamOptimizer(0.1),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.2),
    "momentum_nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "rmsprop_centered": lambda: tf.train.RMSPropOptimizer(
        0.05, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.05),
    "ftrl": lambda: tf.train.FtrlOptimizer(0.2, l1_regularization_strength=0.05,
                                           l2_regularization_strength=0.1),
    "ftrl_power_shrink": lambda: tf.train.FtrlOptimizer(
        0.2, learning_rate_power=-0.3, l1_regularization_strength=0.01,
        l2_shrinkage_regularization_strength=0.1, beta=0.5),
    "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
    "gd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "proximal_adagrad": lambda: tf.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.1),
    "proximal_gd": lambda: tf.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.1),
}

# (W, E) after 3 minimize steps, recorded once with TensorFlow 2.21 (tf.compat.v1, resource
# variables) on this problem.
TF_REFERENCE = {
    "adam": (
      [[0.3927508, 0.0989739224],
       [0.00289448351, 0.697589338],
       [-0.202894419, 0.302410662]],
      [[-0.799998939, -0.699998975],
       [-0.599998891, 0.099998951],
       [-0.099999994, 0],
       [0.399998873, -0.0999989137],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "adagrad": (
      [[0.301028222, 0.0216066465],
       [0.085963428, 0.615706086],
       [-0.28537479, 0.383746803]],
      [[-0.724692941, -0.621919572],
       [-0.514608741, 0.024692893],
       [-0.099999994, 0],
       [0.285595983, -0.0192479342],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "momentum_nesterov": (
      [[0.579265714, 1.62755287],
       [-0.146516502, 0.928170621],
       [0.393033028, -0.456341207]],
      [[-2.10979986, -1.60734999],
       [-1.1049, 1.40980005],
       [-0.099999994, 0],
       [0.502449989, -0.806125045],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "momentum": (
      [[0.723572969, 1.99679232],
       [-0.418043494, 1.21048832],
       [0.936087012, -1.02097654]],
      [[-1.62199998, -1.24150002],
       [-0.861000061, 0.921999991],
       [-0.099999994, 0],
       [0.380500019, -0.501250029],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "rmsprop_centered": (
      [[0.41107747, 0.233660534],
       [-0.0967575014, 0.803796589],
       [-0.0753602535, 0.169922784]],
      [[-0.847208321, -0.698752344],
       [-0.526978195, 0.147208333],
       [-0.099999994, 0],
       [0.225617588, -0.0662820786],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "rmsprop": (
      [[0.317364573, 0.125620693],
       [0.00845656544, 0.6976192],
       [-0.177071527, 0.272654444]],
      [[-0.741782367, -0.60295105],
       [-0.450000048, 0.0417823866],
       [-0.099999994, 0],
       [0.180999056, 0.0215610005],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "ftrl": (
      [[0.421800911, 0.23616004],
       [-0.108621016, 0.766402066],
       [-0.090477109, 0.175152481]],
      [[-0.854898274, -0.743990719],
       [-0.621726096, 0.275662541],
       [-0.099999994, 0],
       [0.412808508, -0.282513201],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "ftrl_power_shrink": (
      [[0.403166771, 0.577592731],
       [-0.224033371, 0.741255581],
       [0.213484496, -0.236559108]],
      [[-0.74457413, -0.594902337],
       [-0.432400823, 0.415000498],
       [-0.099999994, 0],
       [0.230150655, -0.317870647],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "adadelta": (
      [[0.109666415, -0.190304607],
       [0.290316969, 0.409685671],
       [-0.490316957, 0.590314329]],
      [[-0.509707451, -0.409707487],
       [-0.309707463, -0.190292478],
       [-0.099999994, 0],
       [0.109707333, 0.190292507],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "gd": (
      [[0.426966786, 0.9003672],
       [-0.115502916, 0.860050797],
       [0.331005871, -0.320101559]],
      [[-1.10000002, -0.850000024],
       [-0.600000024, 0.400000036],
       [-0.099999994, 0],
       [0.25000003, -0.175000012],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "proximal_adagrad": (
      [[0.295106232, 0.0228946041],
       [0.0822719187, 0.610654354],
       [-0.283173651, 0.381212085]],
      [[-0.713578701, -0.609467685],
       [-0.500459552, 0.0298219956],
       [-0.099999994, 0],
       [0.274121076, -0.0288329702],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
    "proximal_gd": (
      [[0.412185133, 0.877276003],
       [-0.106839895, 0.831684411],
       [0.325443774, -0.319247216]],
      [[-1.05878723, -0.814679027],
       [-0.570570648, 0.384227067],
       [-0.099999994, 0],
       [0.229403391, -0.168506116],
       [0.300000012, 0.399999976],
       [0.5, 0.600000024]]),
}


def _build(make_opt, dtype=tf.float32, **minimize_kwargs):
    W = tf.Variable(W0.astype(dtype.as_numpy_dtype), name="W")
    E = tf.Variable(E0.astype(dtype.as_numpy_dtype), name="E")
    emb = tf.nn.embedding_lookup(E, IDS)
    loss = tf.reduce_sum(tf.square(tf.matmul(X.astype(dtype.as_numpy_dtype), W) - T)) + \
        tf.reduce_sum(emb * C.astype(dtype.as_numpy_dtype))
    opt = make_opt()
    return W, E, loss, opt, opt.minimize(loss, **minimize_kwargs)


def _run_steps(sess, train, fetch, n):
    sess.run(tf.global_variables_initializer())
    for _ in range(n):
        sess.run(train)
    return sess.run(fetch)


@pytest.mark.parametrize("name", sorted(TF_REFERENCE))
def test_matches_recorded_tensorflow(graph, sess, name):
    W, E, _, _, train = _build(OPTIMIZERS[name])
    w, e = _run_steps(sess, train, [W, E], 3)
    np.testing.assert_allclose(w, TF_REFERENCE[name][0], rtol=2e-6, atol=2e-7)
    np.testing.assert_allclose(e, TF_REFERENCE[name][1], rtol=2e-6, atol=2e-7)


# --- NumPy re-implementations of TF1's update formulas ------------------------------------
def _grads(w, e):
    dw = 2.0 * X.T @ (X @ w - T)
    return dw, IDS, C  # E's gradient: rows IDS (one repeated) with values C


def _dedup(idx, vals):
    uniq, inv = np.unique(idx, return_inverse=True)
    out = np.zeros((len(uniq),) + vals.shape[1:], vals.dtype)
    np.add.at(out, inv, vals)
    return uniq, out


class NpAdagrad:
    def __init__(self, lr=0.1, init=0.2):
        self.lr, self.init = lr, init

    def slots(self, w):
        return {"a": np.full_like(w, self.init)}

    def rows(self, w, g, s, r):  # update rows r of w and the slots in place
        s["a"][r] += g * g
        w[r] -= self.lr * g / np.sqrt(s["a"][r])


class NpMomentum:
    def __init__(self, lr=0.1, m=0.9, nesterov=False):
        self.lr, self.m, self.nesterov = lr, m, nesterov

    def slots(self, w):
        return {"acc": np.zeros_like(w)}

    def rows(self, w, g, s, r):
        s["acc"][r] = s["acc"][r] * self.m + g
        a = s["acc"][r]
        w[r] -= self.lr * g + self.lr * self.m * a if self.nesterov else self.lr * a


class NpRMSProp:
    def __init__(self, lr=0.05, rho=0.8, mom=0.5, eps=1e-6, centered=True):
        self.lr, self.rho, self.mom, self.eps, self.centered = lr, rho, mom, eps, centered

    def slots(self, w):
        return {"ms": np.ones_like(w), "mg": np.zeros_like(w), "mom": np.zeros_like(w)}

    def rows(self, w, g, s, r):
        s["ms"][r] += (g * g - s["ms"][r]) * (1 - self.rho)
        denom = s["ms"][r] + self.eps
        if self.centered:
            s["mg"][r] += (g - s["mg"][r]) * (1 - self.rho)
            denom = s["ms"][r] - s["mg"][r] ** 2 + self.eps
        s["mom"][r] = s["mom"][r] * self.mom + self.lr * g / np.sqrt(denom)
        w[r] -= s["mom"][r]


class NpAdadelta:
    def __init__(self, lr=1.0, rho=0.9, eps=1e-6):
        self.lr, self.rho, self.eps = lr, rho, eps

    def slots(self, w):
        return {"a": np.zeros_like(w), "u": np.zeros_like(w)}

    def rows(self, w, g, s, r):
        s["a"][r] = s["a"][r] * self.rho + g * g * (1 - self.rho)
        upd = np.sqrt(s["u"][r] + self.eps) / np.sqrt(s["a"][r] + self.eps) * g
        s["u"][r] = s["u"][r] * self.rho + upd * upd * (1 - self.rho)
        w[r] -= self.lr * upd


class NpFtrl:
    def __init__(self, lr=0.2, power=-0.5, init=0.1, l1=0.05, l2=0.1, shrink=0.0, beta=0.0):
        self.lr, self.p, self.init, self.l1 = lr, power, init, l1
        self.l2, self.shrink = l2 + beta / (2 * lr), shrink

    def slots(self, w):
        return {"acc": np.full_like(w, self.init), "lin": np.zeros_like(w)}

    def rows(self, w, g, s, r):
        acc, x = s["acc"][r], w[r]
        new_acc = acc + g * g
        gs = g + 2 * self.shrink * x
        s["lin"][r] += gs - (new_acc ** -self.p - acc ** -self.p) / self.lr * x
        lin = s["lin"][r]
        quad = new_acc ** -self.p / self.lr + 2 * self.l2
        w[r] = np.where(np.abs(lin) > self.l1, (np.sign(lin) * self.l1 - lin) / quad, 0.0)
        s["acc"][r] = new_acc


class NpProximal:
    def __init__(self, lr=0.1, l1=0.05, l2=0.1, adagrad=False, init=0.1):
        self.lr, self.l1, self.l2, self.adagrad, self.init = lr, l1, l2, adagrad, init

    def slots(self, w):
        return {"a": np.full_like(w, self.init)}

    def rows(self, w, g, s, r):
        alpha = self.lr
        if self.adagrad:
            s["a"][r] += g * g
            alpha = self.lr / np.sqrt(s["a"][r])
        prox = w[r] - alpha * g
        w[r] = np.sign(prox) * np.maximum(np.abs(prox) - alpha * self.l1, 0) / \
            (1 + alpha * self.l2)


def _np_run(opt, steps):
    """W and E after `steps` steps: dense update of W, deduplicated row update of E."""
    w, e = W0.astype(np.float64), E0.astype(np.float64)
    sw, se = opt.slots(w), opt.slots(e)
    for _ in range(steps):
        dw, idx, vals = _grads(w, e)
        opt.rows(w, dw, sw, slice(None))
        uniq, summed = _dedup(np.array(idx), vals.astype(np.float64))
        opt.rows(e, summed, se, uniq)
    return w, e


def _np_adam_run(steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    w, e = W0.astype(np.float64), E0.astype(np.float64)
    mw, vw, me, ve = (np.zeros_like(x) for x in (w, w, e, e))
    for t in range(1, steps + 1):
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        dw, idx, vals = _grads(w, e)
        mw += (dw - mw) * (1 - b1)
        vw += (dw * dw - vw) * (1 - b2)
        w -= lr_t * mw / (np.sqrt(vw) + eps)
        uniq, g = _dedup(np.array(idx), vals.astype(np.float64))
        me *= b1
        me[uniq] += g * (1 - b1)        # TF1's sparse Adam decays all of m and v
        ve *= b2
        ve[uniq] += g * g * (1 - b2)
        e -= lr_t * me / (np.sqrt(ve) + eps)
    return w, e


NUMPY_MODELS = {
    "adagrad": lambda: NpAdagrad(),
    "momentum": lambda: NpMomentum(),
    "momentum_nesterov": lambda: NpMomentum(nesterov=True),
    "rmsprop_centered": lambda: NpRMSProp(),
    "rmsprop": lambda: NpRMSProp(lr=0.05, rho=0.9, mom=0.0, eps=1e-10, centered=False),
    "adadelta": lambda: NpAdadelta(),
    "ftrl": lambda: NpFtrl(),
    "ftrl_power_shrink": lambda: NpFtrl(power=-0.3, l1=0.01, l2=0.0, shrink=0.1, beta=0.5),
    "gd": lambda: NpProximal(l1=0.0, l2=0.0),
    "proximal_gd": lambda: NpProximal(),
    "proximal_adagrad": lambda: NpProximal(adagrad=True),
}


@pytest.mark.parametrize("name", sorted(NUMPY_MODELS) + ["adam"])
def test_matches_numpy_formulas_dense_and_sparse(graph, sess, name):
    W, E, _, _, train = _build(OPTIMIZERS[name])
    w, e = _run_steps(sess, train, [W, E], 4)
    ref_w, ref_e = _np_adam_run(4) if name == "adam" else _np_run(NUMPY_MODELS[name](), 4)
    np.testing.assert_allclose(w, ref_w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(e, ref_e, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(e[UNTOUCHED], E0[UNTOUCHED])


@pytest.mark.parametrize("name", ["adagrad", "adam", "momentum", "ftrl", "rmsprop"])
def test_float64_variables(graph, sess, name):
    W, E, _, _, train = _build(OPTIMIZERS[name], dtype=tf.float64)
    w, e = _run_steps(sess, train, [W, E], 3)
    assert w.dtype == np.float64 and e.dtype == np.float64
    np.testing.assert_allclose(w, TF_REFERENCE[name][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(e, TF_REFERENCE[name][1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("gate", [tf.train.Optimizer.GATE_NONE, tf.train.Optimizer.GATE_OP,
                                  tf.train.Optimizer.GATE_GRAPH])
def test_gate_modes_give_the_same_result(graph, sess, gate):
    W, E, _, _, train = _build(OPTIMIZERS["adagrad"], gate_gradients=gate)
    w, e = _run_steps(sess, train, [W, E], 3)
    np.testing.assert_allclose(w, TF_REFERENCE["adagrad"][0], rtol=2e-6, atol=2e-7)
    np.testing.assert_allclose(e, TF_REFERENCE["adagrad"][1], rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_scalar_variable_matches_one_element_vector(graph, sess, name):
    s = tf.Variable(0.5)
    v = tf.Variable([0.5])
    train_s = OPTIMIZERS[name]().minimize(tf.square(s - 3.0))
    train_v = OPTIMIZERS[name]().minimize(tf.reduce_sum(tf.square(v - 3.0)))
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run([train_s, train_v])
    result = sess.run(s)
    assert np.shape(result) == () and result != 0.5
    np.testing.assert_allclose(result, sess.run(v)[0], rtol=1e-6)


# --- slots and the optimizer's variables -------------------------------------------------
@pytest.mark.parametrize("name,slots,var_names", [
    ("adam", ["m", "v"], ["E/Adam:0", "E/Adam_1:0", "W/Adam:0", "W/Adam_1:0",
                          "beta1_power:0", "beta2_power:0"]),
    ("adagrad", ["accumulator"], ["E/Adagrad:0", "W/Adagrad:0"]),
    ("momentum", ["momentum"], ["E/Momentum:0", "W/Momentum:0"]),
    ("rmsprop_centered", ["mg", "momentum", "rms"],
     ["E/RMSProp:0", "E/RMSProp_1:0", "E/RMSProp_2:0",
      "W/RMSProp:0", "W/RMSProp_1:0", "W/RMSProp_2:0"]),
    ("ftrl", ["accum", "linear"], ["E/Ftrl:0", "E/Ftrl_1:0", "W/Ftrl:0", "W/Ftrl_1:0"]),
    ("adadelta", ["accum", "accum_update"],
     ["E/Adadelta:0", "E/Adadelta_1:0", "W/Adadelta:0", "W/Adadelta_1:0"]),
    ("gd", [], []),
])
def test_slot_names_and_variables(graph, name, slots, var_names):
    W, E, _, opt, _ = _build(OPTIMIZERS[name])
    assert opt.get_slot_names() == slots
    assert [v.name for v in opt.variables()] == var_names
    trainable = tf.trainable_variables()
    for v in opt.variables():
        assert v not in trainable and v in tf.global_variables()
    for s in slots:
        for var in (W, E):
            slot = opt.get_slot(var, s)
            assert slot.get_shape() == var.get_shape() and slot.dtype == var.dtype
            assert slot.op.colocation_groups() == [("loc:@" + var.op.name).encode()]
    assert opt.get_slot(W, "no_such_slot") is None


def test_slot_initial_values(graph, sess):
    W = tf.Variable(W0, name="W")
    loss = tf.reduce_sum(W * W)
    ada = tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.3)
    rms = tf.train.RMSPropOptimizer(0.1)
    ftrl = tf.train.FtrlOptimizer(0.1, initial_accumulator_value=0.7)
    for opt in (ada, rms, ftrl):
        opt.minimize(loss)
    sess.run(tf.global_variables_initializer())
    for slot, value in [(ada.get_slot(W, "accumulator"), 0.3), (rms.get_slot(W, "rms"), 1.0),
                        (rms.get_slot(W, "momentum"), 0.0), (ftrl.get_slot(W, "accum"), 0.7),
                        (ftrl.get_slot(W, "linear"), 0.0)]:
        np.testing.assert_allclose(sess.run(slot), np.full((3, 2), value, np.float32))


def test_slot_names_are_unique_and_follow_variable_scope(graph):
    W = tf.Variable(W0, name="W")
    loss = tf.reduce_sum(W * W)
    a, b = tf.train.AdagradOptimizer(0.1), tf.train.AdagradOptimizer(0.1)
    a.minimize(loss)
    b.minimize(loss)
    assert a.get_slot(W, "accumulator").name == "W/Adagrad:0"
    assert b.get_slot(W, "accumulator").name == "W/Adagrad_1:0"
    with tf.variable_scope("opt"):
        c = tf.train.MomentumOptimizer(0.1, 0.5)
        c.minimize(loss)
    assert c.get_slot(W, "momentum").name == "opt/W/Momentum:0"


def test_adam_beta_powers(graph, sess):
    W, E, _, opt, train = _build(OPTIMIZERS["adam"])
    b1, b2 = opt._get_beta_accumulators()
    assert b1.op.colocation_groups() == [b"loc:@E"]  # the first variable by name
    _run_steps(sess, train, [], 2)
    np.testing.assert_allclose(sess.run([b1, b2]), [0.9 ** 3, 0.999 ** 3], rtol=1e-6)


def test_adam_own_namescope_for_non_slot_vars(graph):
    W = tf.Variable(W0, name="W")
    opt = tf.train.AdamOptimizer(use_own_namescope_for_non_slot_vars=True)
    opt.minimize(tf.reduce_sum(W * W))
    assert sorted(v.name for v in opt.variables())[:2] == ["Adam/beta1_power:0",
                                                          "Adam/beta2_power:0"]


def test_own_namescope_is_the_scope_where_the_optimizer_was_made(graph, sess):
    # names recorded from TF 2.21: the scope is made unique at construction, and the
    # scopes current at minimize do not apply
    w = tf.get_variable("w", initializer=[1.0])
    first = tf.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=True)
    second = tf.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=True)
    with tf.variable_scope("model"):
        third = tf.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=True,
                                       name="A")
    with tf.name_scope("outer"):
        train = first.minimize(tf.reduce_sum(w))
    with tf.variable_scope("vs"):
        second.minimize(tf.reduce_sum(w))
    assert train.name == "outer/Adam"
    assert third.minimize(tf.reduce_sum(w)).name == "A_2"
    assert [[v.name for v in o._get_beta_accumulators()] for o in (first, second, third)] \
        == [["Adam/beta1_power:0", "Adam/beta2_power:0"],
            ["Adam_1/beta1_power:0", "Adam_1/beta2_power:0"],
            ["model/A/beta1_power:0", "model/A/beta2_power:0"]]
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(list(first._get_beta_accumulators())),
                               [0.9 ** 2, 0.999 ** 2], rtol=1e-6)

    class Counting(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "Ox", use_own_namescope_for_non_slot_vars=True)

        def _create_slots(self, var_list):
            self._create_non_slot_variable(1.0, "cnt", var_list[0])

        def _apply_dense(self, grad, var):
            return tf.assign_sub(var, grad)

    counting = Counting()
    counting.minimize(tf.reduce_sum(w))
    assert [v.name for v in counting.variables()] == ["Ox/cnt:0"]


def test_skip_gradients_aggregation_is_accepted(graph, sess):
    w = tf.Variable([1.0], name="w")
    opt = tf.train.GradientDescentOptimizer(0.5)
    train = opt.apply_gradients(opt.compute_gradients(tf.reduce_sum(w * w)),
                                skip_gradients_aggregation=True)
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [0.0])


# --- apply_gradients / minimize -----------------------------------------------------------
def test_global_step_and_train_op(graph, sess):
    W, E, loss, opt, _ = _build(OPTIMIZERS["gd"])
    step = tf.train.get_or_create_global_step()
    train = opt.minimize(loss, global_step=step, name="train")
    assert isinstance(train, tf.Operation) and train.name == "train"
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        sess.run(train)
        assert sess.run(step) == i + 1
    np.testing.assert_allclose(sess.run(W), TF_REFERENCE["gd"][0], rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("executor", ["structured", "tagged"])
@pytest.mark.parametrize("gate", [0, 1, 2])
def test_minimize_through_cond_updates_on_either_side(graph, gate, executor, monkeypatch):
    # recorded from TF 2.15 (compat.v1): the gated gradient of a cond is live on the
    # side taken, so every step updates the variable and the global step
    if executor == "tagged":  # read when the session is made
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    w = tf.Variable([1.0, -2.0])
    x = tf.constant([0.5, 1.5])
    p = tf.placeholder(tf.bool, [])
    loss = tf.cond(p, lambda: tf.reduce_sum(w * w * x), lambda: tf.reduce_sum(w * x))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step,
                                                 gate_gradients=gate)
    want = [[0.9000000357627869, -1.899999976158142],
            [0.8067824244499207, -1.853053331375122],
            [0.7109652161598206, -1.7833486795425415]]
    with tf.Session(graph=graph) as sess:
        sess.run(tf.global_variables_initializer())
        for i, pv in enumerate((True, False, True)):
            sess.run(train, {p: pv})
            assert sess.run(step) == i + 1
            np.testing.assert_allclose(sess.run(w), want[i], rtol=1e-6)


def test_minimize_through_layers_dropout_in_training(graph, sess):
    # tf.layers.dropout(training=<placeholder>) is a tf.cond (recorded from TF 2.15)
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool, [])
    h = tf.layers.dense(x, 2, kernel_initializer=tf.ones_initializer(), name="d1")
    h = tf.layers.dropout(h, rate=0.0, training=training)
    out = tf.layers.dense(h, 1, kernel_initializer=tf.ones_initializer(), name="d2")
    loss = tf.reduce_mean(tf.square(out - 1.0))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
    sess.run(tf.global_variables_initializer())
    for tv in (True, False, True):
        sess.run(train, {x: [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], training: tv})
    assert sess.run(step) == 3
    want = [[[0.874892, 0.874892], [0.781928, 0.781928], [0.616641, 0.616641]],
            [-0.133144, -0.133144], [[0.216878], [0.216878]], [-0.140531]]
    for got, exp in zip(sess.run(tf.trainable_variables()), want):
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


def test_default_train_op_name(graph):
    _, _, loss, opt, train = _build(OPTIMIZERS["adagrad"])
    assert train.name == "Adagrad" and train.type == "NoOp"
    update_ops = [op.name for op in graph.get_operations() if op.name.startswith("Adagrad/")]
    assert any(n.startswith("Adagrad/update_W/") for n in update_ops)


def test_minimize_converges_on_regression(graph, sess):
    rs = np.random.RandomState(1)
    x = rs.rand(64, 3).astype(np.float32)
    y = x @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.3
    w = tf.Variable(tf.zeros([3, 1]))
    b = tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    sess.run(tf.global_variables_initializer())
    first = sess.run(loss)
    for _ in range(300):
        sess.run(train)
    assert sess.run(loss) < 1e-3 * first
    np.testing.assert_allclose(sess.run(w).ravel(), [2.0, -1.0, 0.5], atol=0.05)


def test_none_gradients_are_skipped(graph, sess):
    W = tf.Variable(W0, name="W")
    unused = tf.Variable([1.0, 2.0], name="unused")
    loss = tf.reduce_sum(W * W)
    opt = tf.train.AdagradOptimizer(0.1)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [W, unused] and grads_and_vars[1][0] is None
    train = opt.apply_gradients(grads_and_vars)
    assert opt.get_slot(unused, "accumulator") is None
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_array_equal(sess.run(unused), [1.0, 2.0])
    assert not np.allclose(sess.run(W), W0)


def test_compute_gradients_var_list_and_grad_loss(graph, sess):
    W = tf.Variable(W0, name="W")
    V = tf.Variable([1.0, 2.0], name="V")
    loss = tf.reduce_sum(W * W) + tf.reduce_sum(V)
    opt = tf.train.GradientDescentOptimizer(0.5)
    gv = opt.compute_gradients(loss, var_list=[V], grad_loss=tf.constant(3.0))
    assert [v for _, v in gv] == [V]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(gv[0][0]), [3.0, 3.0])
    sess.run(opt.apply_gradients(gv))
    np.testing.assert_allclose(sess.run(V), [-0.5, 0.5])


def test_errors(graph):
    W = tf.Variable(W0, name="W")
    other = tf.Variable(1.0, name="other")
    opt = tf.train.GradientDescentOptimizer(0.1)
    loss = tf.reduce_sum(W * W)
    with pytest.raises(ValueError, match="No gradients provided for any variable, check "
                                         "your graph for ops that do not support gradients"):
        opt.minimize(loss, var_list=[other])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, W), (None, other)])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(ValueError, match="No variables to optimize"):
        opt.compute_gradients(loss, var_list=[])
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        opt.compute_gradients(loss, gate_gradients=7)
    with pytest.raises(ValueError, match="Invalid type"):
        opt.compute_gradients(tf.constant(1), var_list=[W])
    with pytest.raises(TypeError, match="Gradient must be convertible"):
        opt.apply_gradients([(object(), W)])
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        tf.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0)
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.train.Optimizer(False, "")


def test_hyperparameters_as_tensors_and_callables(graph, sess):
    W = tf.Variable([1.0, 2.0])
    lr = tf.placeholder(tf.float32, [])
    loss = tf.reduce_sum(W * W)
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss)
    train2 = tf.train.MomentumOptimizer(lambda: tf.constant(0.25), 0.0).minimize(loss)
    sess.run(tf.global_variables_initializer())
    sess.run(train, {lr: 0.25})
    np.testing.assert_allclose(sess.run(W), [0.5, 1.0])
    sess.run(train2)
    np.testing.assert_allclose(sess.run(W), [0.25, 0.5])


def test_constraint_applied_after_dense_update_and_rejected_for_sparse(graph, sess):
    W = tf.Variable([1.0, -2.0], constraint=lambda v: tf.clip_by_value(v, -1.0, 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(W))
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(W), [0.9, -1.0])
    E = tf.Variable(E0, constraint=lambda v: v)
    with pytest.raises(RuntimeError, match="constraint function on a sparse variable"):
        tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(tf.gather(E, [1])),
                                                var_list=[E])


def test_unsupported_var_list_entry(graph):
    with pytest.raises(NotImplementedError, match="unsupported type"):
        tf.train.GradientDescentOptimizer(0.1).compute_gradients(tf.constant(1.0),
                                                                 var_list=["W"])


def test_gradients_for_a_tensor_in_var_list_but_no_update(graph, sess):
    # TF1 computes gradients for a Tensor in var_list; only updating it is an error
    W = tf.Variable([1.0, 2.0], name="W")
    h = W * 3.0
    loss = tf.reduce_sum(h * h)
    opt = tf.train.GradientDescentOptimizer(0.1)
    gv = opt.compute_gradients(loss, var_list=[W, h])
    assert gv[1][1] is h
    sess.run(tf.global_variables_initializer())
    dW, dh = sess.run([g for g, _ in gv])
    np.testing.assert_allclose(dh, 2 * 3.0 * np.array([1.0, 2.0]))  # 2h
    np.testing.assert_allclose(dW, 3.0 * dh)
    with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):
        opt.apply_gradients(gv)
    with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):
        opt.minimize(tf.reduce_sum(h), var_list=[h])
    sess.run(opt.apply_gradients([(None, h), gv[0]]))  # a None gradient is skipped
    np.testing.assert_allclose(sess.run(W), [1.0, 2.0] - 0.1 * dW)


# --- sparse updates ------------------------------------------------------------------------
def _resource(sess, var):
    """The variable's resource, on whichever device of the session holds it."""
    name = var.op._get_attr("shared_name")
    for d in sess._device_manager.devices:
        try:
            return d.resources.lookup("", name)
        except tf.errors.NotFoundError:
            pass
    raise AssertionError("no device holds %s" % name)


@pytest.mark.parametrize("name", ["gd", "adagrad", "momentum", "rmsprop", "ftrl", "adadelta",
                                  "proximal_adagrad"])
def test_sparse_update_touches_only_gathered_rows_in_place(graph, sess, name):
    E = tf.Variable(tf.random_uniform([1000, 4], seed=3), name="E")
    ids = tf.placeholder(tf.int32, [None])
    loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(E, ids)))
    opt = OPTIMIZERS[name]()
    train = opt.minimize(loss)
    sess.run(tf.global_variables_initializer())
    before = sess.run(E)
    arrays = [id(_resource(sess, E).value)] + \
        [id(_resource(sess, opt.get_slot(E, s)).value) for s in opt.get_slot_names()]
    for _ in range(2):
        sess.run(train, {ids: [7, 500, 7]})
    after = sess.run(E)
    others = np.setdiff1d(np.arange(1000), [7, 500])
    np.testing.assert_array_equal(after[others], before[others])
    assert not np.allclose(after[[7, 500]], before[[7, 500]])
    # No copy of the variable or its slots: the same arrays were updated in place.
    assert arrays == [id(_resource(sess, E).value)] + \
        [id(_resource(sess, opt.get_slot(E, s)).value) for s in opt.get_slot_names()]


def test_gradient_descent_sparse_duplicates_add_up(graph, sess):
    E = tf.Variable(np.zeros((4, 2), np.float32))
    loss = tf.reduce_sum(tf.gather(E, [1, 1, 1, 3]))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(E), [[0, 0], [-1.5, -1.5], [0, 0], [-0.5, -0.5]])


# --- fused kernels equal their composite formulas -----------------------------------------
def _fused_case(graph, sess, build_fused, build_composite, slots):
    rs = np.random.RandomState(5)
    init = [rs.rand(3, 4).astype(np.float32) + 0.5 for _ in range(1 + slots)]
    grad = tf.constant(rs.randn(3, 4).astype(np.float32))
    fused = [tf.Variable(v) for v in init]
    comp = [tf.Variable(v) for v in init]
    f_op = build_fused([v.handle for v in fused], grad)
    c_ops = build_composite(comp, grad)
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(f_op)
        sess.run(c_ops)
    for a, b in zip(sess.run(fused), sess.run(comp)):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


def test_fused_gradient_descent_equals_composite(graph, sess):
    _fused_case(graph, sess,
                lambda h, g: training_ops.resource_apply_gradient_descent(h[0], 0.1, g),
                lambda v, g: v[0].assign_sub(0.1 * g), 0)


def test_gradient_descent_builds_tf1_fused_op(graph, sess):
    W = tf.Variable(W0, name="W")
    train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(W * W))
    op = graph.get_operation_by_name("GradientDescent/update_W/ResourceApplyGradientDescent")
    assert op.type == "ResourceApplyGradientDescent" and op.outputs == []
    assert op.get_attr("T") == tf.float32 and op.get_attr("use_locking") is False
    assert [t.dtype for t in op.inputs] == [tf.resource, tf.float32, tf.float32]
    assert not [o for o in graph.get_operations() if o.type == "AssignSubVariableOp"]
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(W), W0 - 0.5 * 2 * W0, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_fused_gradient_descent_dtypes(graph, sess, dtype):
    v = tf.Variable(W0.astype(dtype))
    g = np.full(W0.shape, 0.25, dtype)
    op = training_ops.resource_apply_gradient_descent(v.handle, tf.constant(2.0, dtype), g)
    assert op.get_attr("T") == tf.as_dtype(dtype)
    sess.run(tf.global_variables_initializer())
    sess.run(op)
    got = sess.run(v)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, W0.astype(dtype) - dtype(2.0) * g)


def test_fused_gradient_descent_keeps_a_read_snapshot(graph, sess):
    # the update is in place when the variable owns its array alone; a value read in
    # the same step before the update keeps what it read (a resource variable: a TF1
    # reference variable's fetched read shows the update, as in TF1)
    v = tf.Variable(np.ones((2, 3), np.float32), use_resource=True)
    before = v.read_value()
    with tf.control_dependencies([before]):
        upd = training_ops.resource_apply_gradient_descent(v.handle, 1.0,
                                                           np.ones((2, 3), np.float32))
    sess.run(tf.global_variables_initializer())
    got, _ = sess.run([before, upd])
    np.testing.assert_array_equal(got, np.ones((2, 3)))
    np.testing.assert_array_equal(sess.run(v), np.zeros((2, 3)))
    held = sess.run(v)
    sess.run(upd)
    np.testing.assert_array_equal(held, np.zeros((2, 3)))  # a fetched value is never reused
    np.testing.assert_array_equal(sess.run(v), -np.ones((2, 3)))


def test_fused_gradient_descent_errors(graph, sess):
    v = tf.Variable(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="compatible"):
        training_ops.resource_apply_gradient_descent(v.handle, 0.1, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="rank 0"):
        training_ops.resource_apply_gradient_descent(v.handle, [0.1, 0.2],
                                                     np.ones((2, 2), np.float32))
    with pytest.raises(TypeError):
        training_ops.resource_apply_gradient_descent(v.handle, 0.1, np.ones((2, 2), np.int32))
    g = tf.placeholder(tf.float32)
    a = tf.placeholder(tf.float32)
    op = training_ops.resource_apply_gradient_descent(v.handle, a, g)
    ones = np.ones((2, 2), np.float32)
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized"):
        sess.run(op, {a: 0.1, g: ones})
    sess.run(tf.global_variables_initializer())
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"var and delta do not have the same shape\[2,2\] \[3\]"):
        sess.run(op, {a: 0.1, g: np.ones((3,), np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match=r"alpha is not a scalar: \[2\]"):
        sess.run(op, {a: [0.1, 0.2], g: ones})
    np.testing.assert_array_equal(sess.run(v), ones)  # unchanged
    d = tf.Variable(np.ones((2, 2), np.float64))
    wrong = training_ops.resource_apply_gradient_descent(d.handle, 0.1, ones)
    sess.run(d.initializer)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"wrong dtype. Expected double got float(?!\d)"):
        sess.run(wrong)


def test_fused_adagrad_equals_composite(graph, sess):
    def composite(v, g):
        acc = v[1].assign_add(g * g)
        return v[0].assign_sub(0.1 * g * tf.rsqrt(acc))
    _fused_case(graph, sess,
                lambda h, g: training_ops.resource_apply_adagrad(h[0], h[1], 0.1, g),
                composite, 1)


@pytest.mark.parametrize("nesterov", [False, True])
def test_fused_momentum_equals_composite(graph, sess, nesterov):
    def composite(v, g):
        acc = v[1].assign(v[1] * 0.9 + g)
        step = 0.1 * g + 0.1 * 0.9 * acc if nesterov else 0.1 * acc
        return v[0].assign_sub(step)
    _fused_case(graph, sess,
                lambda h, g: training_ops.resource_apply_momentum(
                    h[0], h[1], 0.1, g, 0.9, use_nesterov=nesterov), composite, 1)


def test_fused_adam_equals_composite(graph, sess):
    b1p, b2p = 0.9 ** 2, 0.999 ** 2

    def composite(v, g):
        m = v[1].assign_add((g - v[1]) * 0.1)
        s = v[2].assign_add((g * g - v[2]) * 0.001)
        lr_t = 0.01 * np.sqrt(1 - b2p) / (1 - b1p)
        return v[0].assign_sub(lr_t * m / (tf.sqrt(s) + 1e-8))
    _fused_case(graph, sess,
                lambda h, g: training_ops.resource_apply_adam(
                    h[0], h[1], h[2], b1p, b2p, 0.01, 0.9, 0.999, 1e-8, g), composite, 2)


@pytest.mark.parametrize("nesterov", [False, True])
def test_adam_of_a_large_variable_has_the_whole_numpy_updates_bits(nesterov, monkeypatch):
    """A large float32 variable is updated on oneDNN's threads into new arrays (without
    Nesterov, where oneDNN is installed), else chunk by chunk with half of the chunks
    on a helper thread: each value sees the same operations either way, so the bits
    are those of NumPy's update of the whole array at once."""
    from tensorweave.ops import onednn
    from tensorweave.ops.math import blas, split_work
    rs = np.random.RandomState(3)
    n = split_work.MIN_SPLIT + 3 * split_work.CHUNK + 17  # a short last chunk
    w0, g0 = rs.randn(2, n).astype(np.float32)

    def three_steps():
        with tf.Graph().as_default():
            w, m, v = (tf.Variable(a) for a in (w0, np.zeros_like(w0), np.zeros_like(w0)))
            train = training_ops.resource_apply_adam(
                w.handle, m.handle, v.handle, 0.9, 0.999, 0.01, 0.9, 0.999, 1e-8,
                tf.constant(g0), use_nesterov=nesterov)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                return sess.run([w, m, v])
    calls = {"onednn": 0, "chunks": 0}
    real_adam, real_chunks = onednn.adam, split_work.in_chunks

    def counted(name, fn):
        def call(*a):
            out = fn(*a)
            calls[name] += out is not None and out is not False
            return out
        return call
    monkeypatch.setattr(blas, "machine_contended", lambda: False)  # the helper takes part
    monkeypatch.setattr(onednn, "adam", counted("onednn", real_adam))
    monkeypatch.setattr(split_work, "in_chunks", counted("chunks", real_chunks))
    default = three_steps()
    on_onednn = calls["onednn"]
    monkeypatch.setattr(onednn, "adam", lambda *a: None)
    chunked = three_steps()
    assert calls["chunks"] >= 3
    monkeypatch.setattr(split_work, "in_chunks", lambda *a: False)  # the whole array
    whole = three_steps()
    assert on_onednn == (3 if onednn.available() and not nesterov else 0)
    for a, b, c in zip(default, chunked, whole):
        assert a.view(np.uint32).tolist() == c.view(np.uint32).tolist()
        assert b.view(np.uint32).tolist() == c.view(np.uint32).tolist()
    assert not np.array_equal(whole[0], w0)


def test_fused_kernel_errors(graph, sess):
    v = tf.Variable(np.ones((2, 2), np.float32))
    acc = tf.Variable(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="compatible"):
        training_ops.resource_apply_adagrad(v.handle, acc.handle, 0.1, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="rank 0"):
        training_ops.resource_apply_adagrad(v.handle, acc.handle, [0.1, 0.2],
                                            np.ones((2, 2), np.float32))
    g = tf.placeholder(tf.float32)
    op = training_ops.resource_apply_adagrad(v.handle, acc.handle, 0.1, g)
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized"):
        sess.run(op, {g: np.ones((2, 2), np.float32)})
    sess.run(tf.global_variables_initializer())
    with pytest.raises(errors.InvalidArgumentError, match="do not have the same shape"):
        sess.run(op, {g: np.ones((3,), np.float32)})
    np.testing.assert_array_equal(sess.run(v), np.ones((2, 2)))  # unchanged


def test_use_locking_reaches_fused_kernels(graph):
    W = tf.Variable(W0, name="W")
    for cls, args in [(tf.train.GradientDescentOptimizer, (0.1,)),
                      (tf.train.MomentumOptimizer, (0.1, 0.9)),
                      (tf.train.AdagradOptimizer, (0.1,)), (tf.train.AdamOptimizer, ())]:
        for locking in (False, True):
            cls(*args, use_locking=locking).minimize(tf.reduce_sum(W * W))
    fused = [op for op in graph.get_operations() if op.type.startswith("ResourceApply")]
    assert [op.get_attr("use_locking") for op in fused] == [False, True] * 4


@pytest.mark.parametrize("make,kind", [
    (lambda: tf.train.AdagradOptimizer(0.37), "Adagrad"),
    (lambda: tf.train.MomentumOptimizer(0.37, 0.9), "Momentum"),
    (lambda: tf.train.MomentumOptimizer(0.37, 0.9, use_nesterov=True), "Momentum")])
def test_sparse_updates_are_tfs_fused_ops_with_the_dense_updates_bits(make, kind):
    # TF1's AdagradOptimizer and MomentumOptimizer update sparse gradients with one
    # ResourceSparseApply<X> (after summing repeated rows); its rows get the bits a dense
    # update of the gradient scattered into zeros gives them, and the other rows stay
    rs = np.random.RandomState(8)
    init = rs.rand(50, 6).astype(np.float32)
    ids = np.array([7, 3, 41, 3, 19, 7, 7])
    rows = rs.randn(len(ids), 6).astype(np.float32)

    def three_steps(sparse):
        with tf.Graph().as_default() as g:
            v = tf.Variable(init, use_resource=True)
            if sparse:
                grad = tf.IndexedSlices(tf.constant(rows), tf.constant(ids),
                                        tf.constant([50, 6]))
            else:
                grad = tf.unsorted_segment_sum(rows, ids, 50)   # the same sums, row order
            train = make().apply_gradients([(grad, v)])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                types = {op.type for op in g.get_operations()}
                return sess.run(v), types
    sparse, sparse_types = three_steps(True)
    dense, dense_types = three_steps(False)
    assert "ResourceSparseApply" + kind in sparse_types
    assert "ResourceApply" + kind in dense_types
    assert sparse.tobytes() == dense.tobytes()
    untouched = np.setdiff1d(np.arange(50), ids)
    assert sparse[untouched].tobytes() == init[untouched].tobytes()


def test_adagrad_da_dense_and_sparse_against_numpy(sess):
    """TF1's ApplyAdagradDA / SparseApplyAdagradDA: with T = global step + 1,
    var = -lr * shrink(g, l1 T) / (l2 T lr + sqrt(gg)) (figures equal to TF 2.21's for
    the same program, checked by hand)."""
    lr, l1, l2, gg0 = 0.5, 0.05, 0.2, 0.1
    step = tf.train.get_or_create_global_step()
    v = tf.Variable([1.0, -2.0, 0.5], use_resource=True)
    e = tf.Variable(np.zeros((4, 2), np.float32), use_resource=True)
    dense_grad = np.array([0.3, -0.7, 0.1], np.float32)
    loss = tf.reduce_sum(v * dense_grad) + tf.reduce_sum(tf.gather(e, [1, 3, 1]) * 0.5)
    opt = tf.train.AdagradDAOptimizer(lr, step, initial_gradient_squared_accumulator_value=gg0,
                                      l1_regularization_strength=l1,
                                      l2_regularization_strength=l2)
    train = opt.minimize(loss, global_step=step)
    assert opt.get_slot(v, "gradient_accumulator").name == "Variable/AdagradDA:0"
    assert opt.get_slot(v, "gradient_squared_accumulator").name == "Variable/AdagradDA_1:0"
    sess.run(tf.global_variables_initializer())

    def update(g, gg, t):
        shrunk = np.sign(g) * np.maximum(np.abs(g) - l1 * t, 0)
        return -lr * shrunk / (l2 * t * lr + np.sqrt(gg))
    rows = np.array([1.0, 0.5], np.float32)  # row 1 gathered twice: its gradients add up
    g_d, gg_d = np.zeros(3), np.full(3, gg0)
    g_s, gg_s = np.zeros(2), np.full(2, gg0)
    for t in (1, 2, 3):
        sess.run(train)
        g_d, gg_d = g_d + dense_grad, gg_d + dense_grad ** 2
        g_s, gg_s = g_s + rows, gg_s + rows ** 2
        np.testing.assert_allclose(sess.run(v), update(g_d, gg_d, t), rtol=1e-5)
        got = sess.run(e)
        np.testing.assert_allclose(got[[1, 3], 0], update(g_s, gg_s, t), rtol=1e-5)
        assert not got[[0, 2]].any()
    with pytest.raises(ValueError, match="must be positive"):
        tf.train.AdagradDAOptimizer(0.1, step, initial_gradient_squared_accumulator_value=0.0)


@pytest.mark.parametrize("outer, keys", [
    (False, ["beta1_power", "beta2_power", "s/v", "s/v/Adam", "s/v/Adam_1"]),
    # TF's slot_creator cuts the slot name past the primary's op name, which a variable
    # scope around minimize shifts: TF 2.15 writes these odd keys, and so do we
    (True, ["outer/beta1_power", "outer/beta2_power", "outer/s/v", "outer/s/v/art_0/Adam",
            "outer/s/v/art_0/Adam_1", "outer/s/v/art_1/Adam", "outer/s/v/art_1/Adam_1"])])
def test_slots_of_a_partitioned_variable_are_saved_under_tf_keys(tmp_path, outer, keys):
    def build():
        with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
            v = tf.get_variable("v", [4, 3], initializer=tf.ones_initializer())
        loss = tf.reduce_sum(tf.concat(list(v), 0) ** 2)
        return v, tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.Graph().as_default():
        if outer:
            with tf.variable_scope("outer"):
                v, step = build()
        else:
            v, step = build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
            slots = {var.op.name: sess.run(var) for var in tf.global_variables()}
    assert sorted(name for name, _ in tf.train.list_variables(path)) == keys
    if not outer:  # the slot restores whole: each shard's rows where the shard lies
        first = tf.train.load_variable(path, "s/v/Adam")
        np.testing.assert_allclose(first[:2], slots["s/v/part_0/Adam"])
        np.testing.assert_allclose(first[2:], slots["s/v/part_1/Adam"])


def test_subclass_overrides_of_the_reference_variable_methods_are_called():
    """TF1 updates reference variables (tf.Variable's default) through `_apply_dense`,
    `_apply_sparse` and `_apply_sparse_duplicate_indices`, resource variables through
    `_resource_apply_*`: an AdamW-style override of one of them must run."""
    class DecayingAdam(tf.train.AdamOptimizer):
        def _apply_sparse(self, grad, var):
            with tf.control_dependencies([tf.assign_sub(var, 0.1 * var)]):
                return super()._apply_sparse(grad, var)

    class ScatterTen(tf.train.GradientDescentOptimizer):
        def _apply_sparse_duplicate_indices(self, grad, var):
            return tf.scatter_sub(var, grad.indices, 10.0 * grad.values)

    class DenseHundred(tf.train.GradientDescentOptimizer):
        def _apply_dense(self, grad, var):
            return tf.assign_sub(var, 100.0 * grad)

    ref = tf.Variable([[1.0], [2.0]])
    res = tf.Variable([[1.0], [2.0]], use_resource=True)
    dup = tf.Variable([[1.0], [2.0], [3.0]])
    dense = tf.Variable([1.0, 2.0])
    train = tf.group(
        DecayingAdam(0.01).minimize(tf.reduce_sum(tf.gather(ref, [1]))),
        DecayingAdam(0.01).minimize(tf.reduce_sum(tf.gather(res, [1]))),
        ScatterTen(0.1).minimize(tf.reduce_sum(tf.gather(dup, [0, 2, 2]))),
        DenseHundred(0.1).minimize(tf.reduce_sum(dense)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        got_ref, got_res, got_dup, got_dense = sess.run([ref, res, dup, dense])
    # decay by 10%, then Adam's first step moves the touched row by the learning rate
    np.testing.assert_allclose(got_ref.ravel(), [0.9, 1.8 - 0.01], rtol=1e-5)
    # a resource variable takes Adam's resource path: no decay
    np.testing.assert_allclose(got_res.ravel(), [1.0, 2.0 - 0.01], rtol=1e-5)
    # the override sees the repeated index twice: 3 - 10 - 10
    np.testing.assert_allclose(got_dup.ravel(), [-9.0, 2.0, -17.0])
    np.testing.assert_allclose(got_dense, [-99.0, -98.0])


def test_gradient_descent_scatters_repeated_rows_without_deduplicating():
    """Linear in the gradient, GD's sparse update is one scatter for reference and
    resource variables alike (no Unique + segment sum, as TF's)."""
    for use_resource in (False, True):
        with tf.Graph().as_default() as g:
            e = tf.Variable([[1.0], [2.0], [3.0]], use_resource=use_resource)
            train = tf.train.GradientDescentOptimizer(0.5).minimize(
                tf.reduce_sum(tf.gather(e, [0, 2, 2])))
            types = {op.type for op in g.get_operations()}
            assert "Unique" not in types and "UnsortedSegmentSum" not in types
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train)
                assert sess.run(e).ravel().tolist() == [0.5, 2.0, 2.0]


_COMPOSITE_OPTIMIZERS = ["adadelta", "rmsprop", "rmsprop_centered", "ftrl", "proximal_gd",
                         "proximal_adagrad"]


def _with_learning_rate(name, lr):
    """The optimizer OPTIMIZERS[name] builds, with learning rate `lr`."""
    optimizer = OPTIMIZERS[name]()
    for attr in ("_learning_rate", "_lr"):
        if hasattr(optimizer, attr):
            setattr(optimizer, attr, lr)
    return optimizer


@pytest.mark.parametrize("name", _COMPOSITE_OPTIMIZERS)
def test_non_scalar_hyperparameter_is_rejected(graph, sess, name):
    # TF1's Apply* kernels require scalar hyperparameters (recorded: ValueError when the
    # static shape says rank 1, InvalidArgumentError at run time for [2] and [1])
    W = tf.Variable(W0, name="W")
    loss = tf.reduce_sum(W * W)
    with pytest.raises(ValueError, match="rank 0 but is rank 1"):
        _with_learning_rate(name, tf.constant([0.1, 0.2])).minimize(loss)
    lr = tf.placeholder(tf.float32)
    train = _with_learning_rate(name, lr).minimize(loss)
    sess.run(tf.global_variables_initializer())
    for bad in ([0.1, 0.2], [0.1]):
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(train, {lr: bad})
    np.testing.assert_array_equal(sess.run(W), W0)  # no update went through
    sess.run(train, {lr: 0.1})
    assert not np.allclose(sess.run(W), W0)


def test_subclass_with_tf1_helpers_matches_recorded_tensorflow(graph, sess):
    # a user optimizer on TF1's subclass API: _call_if_callable, a non-slot variable, a
    # zeros slot, a slot from a Tensor and its own _finish (recorded from TF 2.21)
    class Halving(tf.train.Optimizer):
        def __init__(self, lr):
            super().__init__(False, "MyOpt")
            self._lr = lr

        def _create_slots(self, var_list):
            first = min(var_list, key=lambda x: x.name)
            self._create_non_slot_variable(initial_value=0.5, name="pw", colocate_with=first)
            for v in var_list:
                self._zeros_slot(v, "m", self._name)
                self._get_or_make_slot(v, tf.ones_like(v.initialized_value()) * 2.0, "two",
                                       self._name + "_two")

        def _prepare(self):
            self._lr_t = tf.convert_to_tensor(self._call_if_callable(self._lr), name="lr")

        def _apply_dense(self, grad, var):
            m = self.get_slot(var, "m")
            pw = self._get_non_slot_variable("pw", graph=var.graph)
            return tf.assign_sub(var, self._lr_t * tf.assign(m, m * 0.9 + grad) * pw)

        def _apply_sparse(self, grad, var):
            return tf.scatter_sub(var, grad.indices, grad.values * self._lr_t)

        def _finish(self, update_ops, name_scope):
            pw = self._get_non_slot_variable("pw", graph=tf.get_default_graph())
            with tf.control_dependencies(update_ops):
                halve = pw.assign(pw * 0.5)
            return tf.group(*(update_ops + [halve]), name=name_scope)

    w = tf.get_variable("w", initializer=[1.0, 2.0], use_resource=False)
    e = tf.get_variable("e", initializer=np.ones((3, 2), np.float32), use_resource=False)
    opt = Halving(lambda: 0.1)
    train = opt.minimize(tf.reduce_sum(w * w) + tf.reduce_sum(tf.gather(e, [0, 2, 0])))
    assert train.name == "MyOpt" and opt.get_slot_names() == ["m", "two"]
    assert [v.name for v in opt.variables()] == ["e/MyOpt:0", "e/MyOpt_two:0", "pw:0",
                                                 "w/MyOpt:0", "w/MyOpt_two:0"]
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [0.81, 1.62], rtol=1e-6)
    np.testing.assert_allclose(sess.run(e), [[0.6, 0.6], [1.0, 1.0], [0.8, 0.8]], rtol=1e-6)
    assert sess.run(opt._get_non_slot_variable("pw", graph=graph)) == 0.125
    np.testing.assert_array_equal(sess.run(opt.get_slot(w, "two")), [2.0, 2.0])


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_dense_update_is_tfs_fused_kernel(centered):
    """TF1's RMSPropOptimizer builds ResourceApply[Centered]RMSProp for a dense gradient;
    its kernel (in place, chunk by chunk for a large variable) gives the bits of TF's
    functor written out in NumPy, float32 throughout."""
    from tensorweave.ops.math import split_work
    rs = np.random.RandomState(2)
    n = 2 * split_work.CHUNK + 37   # chunks, and a short last one
    w0, x = (rs.randn(n).astype(np.float32) for _ in range(2))
    lr, rho, mom, eps = (np.float32(v) for v in (0.01, 0.9, 0.5, 1e-6))
    with tf.Graph().as_default() as g:
        w = tf.Variable(w0)
        loss = tf.reduce_sum(tf.square(w * x))
        train = tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5, epsilon=1e-6,
                                          centered=centered).minimize(loss)
        kind = "ResourceApplyCenteredRMSProp" if centered else "ResourceApplyRMSProp"
        assert [op.type for op in g.get_operations() if op.type.endswith("RMSProp")] == \
            [kind]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            got = sess.run(w)
    want, ms, mg, mo = w0.copy(), np.ones_like(w0), np.zeros_like(w0), np.zeros_like(w0)
    for _ in range(3):
        grad = np.float32(2) * (want * x) * x
        ms = ms + (grad * grad - ms) * (np.float32(1) - rho)
        denom = ms + eps
        if centered:
            mg = mg + (grad - mg) * (np.float32(1) - rho)
            denom = ms - mg * mg + eps
        mo = mo * mom + grad * lr / np.sqrt(denom)
        want = want - mo
    assert got.tobytes() == want.tobytes()
