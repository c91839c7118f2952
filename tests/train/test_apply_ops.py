"""TF1's other training ops (train/apply_ops.py): each dense and sparse kernel against a
NumPy loop over TF's formulas (a repeated index applied once per occurrence, in order),
values recorded from TF 2.21 (tf.raw_ops, two steps), and the errors."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import apply_ops

V0 = np.array([[1.0, -2.0], [0.5, 0.3], [-0.7, 1.2], [0.1, 0.0]], np.float32)
G = np.array([[0.5, -1.0], [2.0, 0.1], [-0.3, 0.4]], np.float32)   # sparse gradient rows
IDX = [2, 0, 2]                                                      # row 2 twice
DENSE_G = V0 * 0.7 - 0.2


# --- NumPy references: one update of (var, *slots) by gradient g, on copies -------------
def _prox(prox, lr, l1, l2):
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0) / (1 + lr * l2)
    return prox / (1 + lr * l2)


def ref_proximal_gd(v, g, alpha, l1, l2):
    return [_prox(v - alpha * g, alpha, l1, l2)]


def ref_proximal_adagrad(v, a, g, lr, l1, l2):
    a = a + g * g
    step = lr / np.sqrt(a)
    return [_prox(v - step * g, step, l1, l2), a]


def ref_momentum(v, a, g, lr, momentum, nesterov):
    a = a * momentum + g
    return [v - (g * lr + a * momentum * lr if nesterov else a * lr), a]


def ref_adagrad(v, a, g, lr):
    a = a + g * g
    return [v - lr * g / np.sqrt(a), a]


def ref_adagrad_v2(v, a, g, lr, eps):
    a = a + g * g
    return [v - lr * g / (np.sqrt(a) + eps), a]


def ref_keras_momentum(v, a, g, lr, momentum, nesterov):
    a = a * momentum - lr * g
    return [v + (a * momentum - lr * g if nesterov else a), a]


def ref_ada_max(v, m, u, g, beta1_power, lr, beta1, beta2, eps):
    m = beta1 * m + (1 - beta1) * g
    u = np.maximum(beta2 * u, np.abs(g))
    return [v - lr / (1 - beta1_power) * m / (u + eps), m, u]


def ref_adam_amsgrad(v, m, u, vhat, g, beta1_power, beta2_power, lr, beta1, beta2, eps):
    alpha = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = beta1 * m + (1 - beta1) * g
    u = beta2 * u + (1 - beta2) * g * g
    vhat = np.maximum(vhat, u)
    return [v - alpha * m / (np.sqrt(vhat) + eps), m, u, vhat]


def ref_adagrad_da(v, ga, gga, g, lr, l1, l2, step):
    ga, gga = ga + g, gga + g * g
    shrunk = np.sign(ga) * np.maximum(np.abs(ga) - l1 * step, 0) if l1 > 0 else ga
    return [-lr * shrunk / (l2 * step * lr + np.sqrt(gga)), ga, gga]


def ref_adadelta(v, a, au, g, lr, rho, eps):
    a = rho * a + (1 - rho) * g * g
    update = np.sqrt(au + eps) / np.sqrt(a + eps) * g
    return [v - lr * update, a, rho * au + (1 - rho) * update * update]


def ref_rms_prop(v, ms, mom, g, lr, rho, momentum, eps):
    ms = rho * ms + (1 - rho) * g * g
    mom = momentum * mom + lr * g / np.sqrt(ms + eps)
    return [v - mom, ms, mom]


def ref_centered_rms_prop(v, mg, ms, mom, g, lr, rho, momentum, eps):
    ms = rho * ms + (1 - rho) * g * g
    mg = rho * mg + (1 - rho) * g
    mom = momentum * mom + lr * g / np.sqrt(ms - mg * mg + eps)
    return [v - mom, mg, ms, mom]


def ref_ftrl(v, a, lin, g, lr, l1, l2, power, shrinkage=0.0, by_lr=False):
    new_a = a + g * g
    sigma = new_a ** -power - a ** -power
    g_lin = g + 2 * shrinkage * v
    if by_lr:
        lin = lin + g_lin * lr - sigma * v
        quadratic, l1 = new_a ** -power + 2 * l2 * lr, l1 * lr
    else:
        lin = lin + g_lin - sigma / lr * v
        quadratic = new_a ** -power / lr + 2 * l2
    v = np.where(np.abs(lin) > l1, (np.sign(lin) * l1 - lin) / quadratic, 0.0)
    return [v, new_a, lin]


# --- the cases: (op name, slot initial values, raw_ops kwargs builder, reference) -------
def _c(x, dtype):
    return tf.constant(x, dtype)


CASES = {
    "ProximalGradientDescent": ([], lambda c: dict(alpha=c(0.1), l1=c(0.05), l2=c(0.1)),
                                lambda v, g: ref_proximal_gd(*v, g, 0.1, 0.05, 0.1)),
    "ProximalAdagrad": ([0.1], lambda c: dict(lr=c(0.1), l1=c(0.05), l2=c(0.1)),
                        lambda v, g: ref_proximal_adagrad(*v, g, 0.1, 0.05, 0.1)),
    "AdagradDA": ([0.0, 0.1],
                  lambda c: dict(lr=c(0.1), l1=c(0.05), l2=c(0.02),
                                 global_step=tf.constant(3, tf.int64)),
                  lambda v, g: ref_adagrad_da(*v, g, 0.1, 0.05, 0.02, 3)),
    "Adadelta": ([0.1, 0.2], lambda c: dict(lr=c(1.0), rho=c(0.9), epsilon=c(1e-6)),
                 lambda v, g: ref_adadelta(*v, g, 1.0, 0.9, 1e-6)),
    "RMSProp": ([1.0, 0.0],
                lambda c: dict(lr=c(0.1), rho=c(0.9), momentum=c(0.5), epsilon=c(1e-6)),
                lambda v, g: ref_rms_prop(*v, g, 0.1, 0.9, 0.5, 1e-6)),
    "CenteredRMSProp": ([0.0, 1.0, 0.0],
                        lambda c: dict(lr=c(0.1), rho=c(0.9), momentum=c(0.5),
                                       epsilon=c(1e-6)),
                        lambda v, g: ref_centered_rms_prop(*v, g, 0.1, 0.9, 0.5, 1e-6)),
    "Ftrl": ([0.1, 0.0], lambda c: dict(lr=c(0.1), l1=c(0.01), l2=c(0.02), lr_power=c(-0.5)),
             lambda v, g: ref_ftrl(*v, g, 0.1, 0.01, 0.02, -0.5)),
    "FtrlV2": ([0.1, 0.0],
               lambda c: dict(lr=c(0.1), l1=c(0.01), l2=c(0.02), l2_shrinkage=c(0.1),
                              lr_power=c(-0.7), multiply_linear_by_lr=True),
               lambda v, g: ref_ftrl(*v, g, 0.1, 0.01, 0.02, -0.7, 0.1, by_lr=True)),
    "AdagradV2": ([0.1], lambda c: dict(lr=c(0.1), epsilon=c(1e-3)),
                  lambda v, g: ref_adagrad_v2(*v, g, 0.1, 1e-3)),
    "KerasMomentum": ([0.0], lambda c: dict(lr=c(0.1), momentum=c(0.9), use_nesterov=True),
                      lambda v, g: ref_keras_momentum(*v, g, 0.1, 0.9, True)),
}
DENSE_ONLY = {
    "AdaMax": ([0.0, 0.0], lambda c: dict(beta1_power=c(0.9), lr=c(0.1), beta1=c(0.9),
                                          beta2=c(0.99), epsilon=c(1e-7)),
               lambda v, g: ref_ada_max(*v, g, 0.9, 0.1, 0.9, 0.99, 1e-7)),
    "AdamWithAmsgrad": ([0.0, 0.0, 0.0],
                        lambda c: dict(beta1_power=c(0.9), beta2_power=c(0.999), lr=c(0.1),
                                       beta1=c(0.9), beta2=c(0.999), epsilon=c(1e-7)),
                        lambda v, g: ref_adam_amsgrad(*v, g, 0.9, 0.999, 0.1, 0.9, 0.999,
                                                      1e-7)),
}
SPARSE_ONLY = {
    "Momentum": ([0.0], lambda c: dict(lr=c(0.1), momentum=c(0.9), use_nesterov=True),
                 lambda v, g: ref_momentum(*v, g, 0.1, 0.9, True)),
    "Adagrad": ([0.1], lambda c: dict(lr=c(0.1)), lambda v, g: ref_adagrad(*v, g, 0.1)),
}
SLOT_NAMES = {
    "ProximalGradientDescent": [], "ProximalAdagrad": ["accum"], "Momentum": ["accum"],
    "Adagrad": ["accum"], "Adadelta": ["accum", "accum_update"], "RMSProp": ["ms", "mom"],
    "CenteredRMSProp": ["mg", "ms", "mom"], "Ftrl": ["accum", "linear"],
    "FtrlV2": ["accum", "linear"],
    "AdagradDA": ["gradient_accumulator", "gradient_squared_accumulator"],
    "AdagradV2": ["accum"], "KerasMomentum": ["accum"], "AdaMax": ["m", "v"],
    "AdamWithAmsgrad": ["m", "v", "vhat"],
}


def _variables(slot_inits, dtype):
    var = tf.Variable(V0.astype(dtype), name="var")
    slots = [tf.Variable(np.full(V0.shape, x, dtype), name="slot%d" % i)
             for i, x in enumerate(slot_inits)]
    return var, slots


def _run_twice(sess, op, variables):
    sess.run(tf.global_variables_initializer())
    sess.run(op)
    sess.run(op)
    return sess.run(variables)


def _sparse_op(name, var, slots, kwargs, grad, indices):
    handles = dict(zip(SLOT_NAMES[name], [s.handle for s in slots]))
    return getattr(tf.raw_ops, "ResourceSparseApply" + name)(
        var=var.handle, grad=grad, indices=indices, **handles, **kwargs)


def _sparse_reference(update, arrays, grad, indices):
    """TF's CPU loop: one row update per index, in order."""
    arrays = [a.astype(np.float64) for a in arrays]
    for i, row in enumerate(indices):
        new = update([a[row] for a in arrays], grad[i].astype(np.float64))
        for a, n in zip(arrays, new):
            a[row] = n
    return arrays


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted({**CASES, **DENSE_ONLY}))
def test_dense_kernel_matches_numpy(graph, sess, name, dtype):
    slot_inits, kwargs, update = {**CASES, **DENSE_ONLY}[name]
    var, slots = _variables(slot_inits, dtype)
    handles = dict(zip(SLOT_NAMES[name], [s.handle for s in slots]))
    grad_arg = "delta" if name == "ProximalGradientDescent" else "grad"
    op = getattr(tf.raw_ops, "ResourceApply" + name)(
        var=var.handle, **{grad_arg: tf.constant(DENSE_G.astype(dtype))}, **handles,
        **kwargs(lambda x: _c(x, dtype)))
    got = _run_twice(sess, op, [var] + slots)
    want = [V0.astype(np.float64)] + [np.full(V0.shape, x) for x in slot_inits]
    for _ in range(2):
        want = update(want, DENSE_G.astype(np.float64))
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("index_dtype", [tf.int32, tf.int64])
@pytest.mark.parametrize("name", sorted({**CASES, **SPARSE_ONLY}))
def test_sparse_kernel_matches_numpy_with_repeated_index(graph, sess, name, index_dtype):
    slot_inits, kwargs, update = {**CASES, **SPARSE_ONLY}[name]
    var, slots = _variables(slot_inits, np.float64)
    op = _sparse_op(name, var, slots, kwargs(lambda x: _c(x, tf.float64)),
                    tf.constant(G.astype(np.float64)), tf.constant(IDX, index_dtype))
    got = _run_twice(sess, op, [var] + slots)
    want = [V0] + [np.full(V0.shape, x) for x in slot_inits]
    for _ in range(2):
        want = _sparse_reference(update, want, G, IDX)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got[0][[1, 3]], V0[[1, 3]])  # rows not named: untouched


# recorded from TF 2.21: two steps of tf.raw_ops.ResourceSparseApply<X> (float32) with
# gradient rows G at indices IDX, variables (var, *slots)
RECORDED = {
    "Momentum": [[0.078, -2.0461, 0.5, 0.3, -0.88008, 1.66695, 0.1, 0.0],
                 [3.8, 0.19, 0.0, 0.0, 0.2715, -0.905, 0.0, 0.0]],
    "AdagradDA": [[-0.13499, -0.01419, 0.5, 0.3, -0.02812, 0.06724, 0.1, 0.0],
                  [4.0, 0.2, 0.0, 0.0, 0.4, -1.2, 0.0, 0.0],
                  [8.1, 0.12, 0.1, 0.1, 0.78, 2.42, 0.1, 0.1]],
    "ProximalAdagrad": [[0.81943, -1.91524, 0.5, 0.3, -0.69753, 1.2451, 0.1, 0.0],
                        [8.1, 0.12, 0.1, 0.1, 0.78, 2.42, 0.1, 0.1]],
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_sparse_kernel_matches_recorded_tensorflow(graph, sess, name):
    slot_inits, kwargs, _ = {**CASES, **SPARSE_ONLY}[name]
    var, slots = _variables(slot_inits, np.float32)
    op = _sparse_op(name, var, slots, kwargs(lambda x: _c(x, tf.float32)), tf.constant(G),
                    tf.constant(IDX))
    for got, want in zip(_run_twice(sess, op, [var] + slots), RECORDED[name]):
        np.testing.assert_allclose(got.ravel(), want, rtol=1e-4, atol=1e-5)


def test_ftrl_multiply_linear_by_lr_recorded(graph, sess):
    var, slots = _variables([0.1, 0.0], np.float32)
    c = lambda x: _c(x, tf.float32)  # noqa: E731
    op = tf.raw_ops.ResourceSparseApplyFtrl(
        var=var.handle, accum=slots[0].handle, linear=slots[1].handle, grad=tf.constant(G),
        indices=IDX, lr=c(0.1), l1=c(0.01), l2=c(0.02), lr_power=c(-0.7),
        multiply_linear_by_lr=True)
    got = _run_twice(sess, op, [var] + slots)
    np.testing.assert_allclose(got[0].ravel(), [0.80336, -0.21147, 0.5, 0.3, -0.48275,
                                                1.06562, 0.1, 0.0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2].ravel(), [-3.47837, 0.04978, 0.0, 0.0, 0.40862,
                                                -1.98348, 0.0, 0.0], rtol=1e-4, atol=1e-5)


def test_sparse_errors(graph, sess):
    var, (accum,) = _variables([0.1], np.float32)
    lr = tf.constant(0.1)
    with pytest.raises(ValueError, match="rank 1 but is rank 2"):
        tf.raw_ops.ResourceSparseApplyAdagrad(var=var.handle, accum=accum.handle, lr=lr,
                                              grad=tf.constant(G), indices=[[0, 1, 2]])
    with pytest.raises(ValueError, match="rank 0 but is rank 1"):
        tf.raw_ops.ResourceSparseApplyAdagrad(var=var.handle, accum=accum.handle,
                                              lr=tf.constant([0.1]), grad=tf.constant(G),
                                              indices=IDX)
    grad, indices = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    op = tf.raw_ops.ResourceSparseApplyAdagrad(var=var.handle, accum=accum.handle, lr=lr,
                                               grad=grad, indices=indices)
    sess.run(tf.global_variables_initializer())
    bad = [({grad: G, indices: [1, 7, 0]}, "Index 7 at offset 1 in indices is out of range"),
           ({grad: G, indices: [1, -1, 0]}, "Index -1 at offset 1"),
           ({grad: G, indices: [0, 1]}, "grad must be the same size as indices"),
           ({grad: G[:, :1], indices: IDX}, "var and grad must match in dimension 1")]
    for feed, message in bad:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(op, feed)
    np.testing.assert_array_equal(sess.run(var), V0)  # nothing was applied
    sess.run(op, {grad: np.zeros((0, 2), np.float32), indices: np.zeros(0, np.int32)})
    np.testing.assert_array_equal(sess.run(var), V0)


def test_dense_errors(graph, sess):
    var, (accum, update) = _variables([0.1, 0.2], np.float32)
    c = lambda x: _c(x, tf.float32)  # noqa: E731
    grad = tf.placeholder(tf.float32)
    op = tf.raw_ops.ResourceApplyAdadelta(var=var.handle, accum=accum.handle,
                                          accum_update=update.handle, lr=c(1.0), rho=c(0.9),
                                          epsilon=c(1e-6), grad=grad)
    sess.run(tf.global_variables_initializer())
    with pytest.raises(tf.errors.InvalidArgumentError, match="do not have the same shape"):
        sess.run(op, {grad: np.ones((2, 4), np.float32)})
    with pytest.raises(TypeError):
        tf.raw_ops.ResourceApplyAdagradDA(
            var=var.handle, gradient_accumulator=accum.handle,
            gradient_squared_accumulator=update.handle, grad=tf.constant(V0), lr=c(0.1),
            l1=c(0.1), l2=c(0.1), global_step=tf.constant(1.0))


FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "tf1",
                       "optimizer_meta")


@pytest.mark.parametrize("kind", ["ref", "resource"])
def test_resuming_training_from_a_tensorflow_meta_graph(kind):
    # TF's graph (make_optimizer_meta_fixture.py): ten TF1 optimizers, each updating a
    # dense and an embedding variable with TF's Apply / SparseApply ops; two steps here
    # must give TF's values
    expected = np.load(os.path.join(FIXTURE, "expected.npz"))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(FIXTURE, kind + ".meta"))
        train = tf.get_default_graph().get_operation_by_name("train")
        op_types = {op.type for op in tf.get_default_graph().get_operations()}
        assert {"ResourceSparseApplyFtrlV2", "ResourceApplyCenteredRMSProp",
                "ResourceSparseApplyAdagradDA"} <= op_types
        variables = {v.op.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURE, kind))
            sess.run(train)
            sess.run(train)
            names = [k[len(kind) + 1:] for k in expected.files if k.startswith(kind + "/")]
            assert len(names) == 20
            for name in names:
                np.testing.assert_allclose(sess.run(variables[name]),
                                           expected[kind + "/" + name], rtol=1e-5,
                                           atol=1e-6, err_msg=name)


def _rounds_reference(indices):
    seen, rounds = {}, []
    for pos, i in enumerate(indices.tolist()):
        k = seen[i] = seen.get(i, -1) + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(pos)
    return rounds


@pytest.mark.parametrize("n_rows", [50, 25_000, apply_ops._FLAG_ROWS + 1, 10 ** 7])
def test_occurrence_rounds_split_repeats_in_order(n_rows):
    # a flag per row (up to _FLAG_ROWS rows, or 64 per index) or a sort: the k-th
    # occurrence of each index in round k; [None] for one round of every position
    rs = np.random.RandomState(n_rows % 1000)
    for n in (1, 7, 256, 3000):
        for repeats in (False, True):
            if repeats:
                indices = rs.randint(0, min(n_rows, max(2, n // 3)), n)
            else:
                indices = rs.choice(n_rows, min(n, n_rows), replace=False)
            got = apply_ops._occurrence_rounds(indices, n_rows)
            want = _rounds_reference(indices)
            if len(want) == 1:
                assert got == [None]
            else:
                assert [r.tolist() for r in got] == want
