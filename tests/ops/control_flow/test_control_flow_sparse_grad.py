"""IndexedSlices gradients through tf.cond, tf.while_loop and what is built on them
(map_fn, scan, raw_rnn): the gradient of a gather inside control flow stays sparse, as
TF's does, so optimizers update only the rows it names (control_flow_grad.py: the Switch
and Merge gradients switch and merge IndexedSlices component by component; a backward
loop accumulates the IndexedSlices gradient of a loop invariant by concatenation, from
one zero row at index 0 as TF's accumulator does, and carries the IndexedSlices gradient
of a loop variable as its components).

Expected values were recorded with TensorFlow 2.21 (tf.compat.v1, graph mode) running
the same programs: the gradient's indices and values, and each variable after the steps
of MomentumOptimizer(0.1, 0.9) and RMSPropOptimizer(0.1, momentum=0.5)."""
import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor")  # conftest.py: structured and tagged

E = [[1., 2.], [3., 4.], [5., 6.], [7., 8.]]


def _train(sess, emb, loss, feeds) -> dict:
    """emb after running each optimizer's step once per feed dict, from the start."""
    steps = {}
    for name, opt in (("mom", tf.train.MomentumOptimizer(0.1, 0.9)),
                      ("rms", tf.train.RMSPropOptimizer(0.1, momentum=0.5))):
        with tf.variable_scope(name):
            steps[name] = opt.minimize(loss, var_list=[emb])
    init = tf.global_variables_initializer()
    out = {}
    for name, step in steps.items():
        sess.run(init)
        for fd in feeds:
            sess.run(step, fd)
        out[name] = sess.run(emb)
    return out


def _slices(sess, g, feed):
    assert isinstance(g, tf.IndexedSlices), type(g)
    v = sess.run(g, feed)
    return v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()


def _dense(sess, g, feed):
    v = sess.run(g, feed)
    return v.to_dense() if hasattr(v, "to_dense") else v


def _check_training(sess, emb, loss, feeds, want_mom, want_rms):
    got = _train(sess, emb, loss, feeds)
    np.testing.assert_allclose(got["mom"], want_mom, rtol=1e-6, atol=1e-6)
    # (RMSProp's kernels round differently from TF's in the last bits)
    np.testing.assert_allclose(got["rms"], want_rms, rtol=1e-5, atol=1e-6)


# --- while_loop ---------------------------------------------------------------------------
def test_gather_in_while_loop_gives_indexed_slices_and_sparse_updates(sess):
    # the program: TF's Momentum leaves row 0 alone and gives [1. 1.8 2.8]
    # (with the gradient densified: [1. 1.62 2.8])
    emb = tf.Variable([[1.], [2.], [3.]])
    ids = tf.placeholder(tf.int32, [2])
    _, loss = tf.while_loop(lambda i, a: i < 2, lambda i, a: (
        i + 1, a + tf.reduce_sum(tf.gather(emb, ids[i]))), [0, 0.])
    g = tf.gradients(loss, emb)[0]
    assert g.values.shape.as_list() == [None, 1] and g.indices.shape.as_list() == [None]
    sess.run(tf.global_variables_initializer())
    # TF's accumulator starts from one zero row at index 0; rows in backward order
    assert _slices(sess, g, {ids: [1, 1]}) == ([0, 1, 1], [[0.], [1.], [1.]], [3, 1])
    assert _slices(sess, g, {ids: [2, 2]}) == ([0, 2, 2], [[0.], [1.], [1.]], [3, 1])
    _check_training(sess, emb, loss, [{ids: [1, 1]}, {ids: [2, 2]}],
                    [[1.], [1.8], [2.8]], [[1.], [1.824588], [2.824588]])


def test_gather_in_while_loop_rows_in_backward_order(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [3])
    w = tf.constant([1., -2.])
    _, loss = tf.while_loop(lambda i, a: i < 3, lambda i, a: (
        i + 1, a + tf.reduce_sum(tf.gather(emb, ids[i]) * w * tf.cast(i + 1, tf.float32))),
        [0, 0.])
    g = tf.gradients(loss, emb)[0]
    sess.run(tf.global_variables_initializer())
    vals = [[0., 0.], [3., -6.], [2., -4.], [1., -2.]]
    assert _slices(sess, g, {ids: [0, 3, 0]}) == ([0, 0, 3, 0], vals, [4, 2])
    assert _slices(sess, g, {ids: [2, 1, 1]}) == ([0, 1, 1, 2], vals, [4, 2])
    _check_training(
        sess, emb, loss, [{ids: [0, 3, 0]}, {ids: [2, 1, 1]}, {ids: [3, 3, 3]}],
        [[-0.084, 4.168], [2.5, 5.], [4.9, 6.2], [6.02, 9.96]],
        [[0.557281, 2.518163], [2.728837, 4.302892], [4.9, 6.175412], [6.462162, 8.67356]])


@pytest.mark.parametrize("read", ["embedding_lookup", "sparse_read"])
def test_embedding_lookup_and_sparse_read_in_while_loop(sess, read):
    emb = tf.get_variable("emb", initializer=tf.constant(E), use_resource=True)
    ids = tf.placeholder(tf.int32, [3])

    def body(i, a):
        if read == "sparse_read":
            rows = emb.sparse_read(ids[i]) * [1., 3.]
        else:
            rows = tf.nn.embedding_lookup(emb, ids[i:i + 1]) ** 2
        return i + 1, a + tf.reduce_sum(rows)
    _, loss = tf.while_loop(lambda i, a: i < 3, body, [0, 0.])
    g = tf.gradients(loss, emb)[0]
    sess.run(tf.global_variables_initializer())
    feeds = [{ids: [0, 3, 0]}, {ids: [2, 1, 1]}]
    if read == "sparse_read":
        assert _slices(sess, g, feeds[0]) == (
            [0, 0, 3, 0], [[0., 0.], [1., 3.], [1., 3.], [1., 3.]], [4, 2])
        _check_training(sess, emb, loss, feeds,
                        [[0.62, 0.86], [2.8, 3.4], [4.9, 5.7], [6.9, 7.7]],
                        [[0.736883, 1.575736], [2.824588, 3.717157], [4.9, 5.776394],
                         [6.9, 7.776394]])
    else:
        assert _slices(sess, g, feeds[1]) == (
            [0, 1, 1, 2], [[0., 0.], [6., 8.], [6., 8.], [10., 12.]], [4, 2])
        _check_training(sess, emb, loss, feeds,
                        [[0.24, 0.48], [1.8, 2.4], [4., 4.8], [5.6, 6.4]],
                        [[0.620527, 1.55586], [2.693214, 3.689188], [4.697108, 5.693214],
                         [6.690792, 7.689188]])


def test_gather_in_nested_while_loops(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [2, 2])

    def outer(i, a):
        _, b = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, b + tf.reduce_sum(
            tf.gather(emb, ids[i, j]) * tf.cast(i + 2 * j + 1, tf.float32))), [0, 0.])
        return i + 1, a + b
    _, loss = tf.while_loop(lambda i, a: i < 2, outer, [0, 0.])
    g = tf.gradients(loss, emb)[0]
    sess.run(tf.global_variables_initializer())
    # the outer accumulator's zero row, then per outer iteration (backwards) the inner
    # accumulator's zero row and its rows (backwards), as TF orders them
    vals = [[0., 0.], [0., 0.], [4., 4.], [2., 2.], [0., 0.], [3., 3.], [1., 1.]]
    assert _slices(sess, g, {ids: [[0, 3], [3, 1]]}) == (
        [0, 0, 1, 3, 0, 3, 0], vals, [4, 2])
    _check_training(sess, emb, loss, [{ids: [[0, 3], [3, 1]]}, {ids: [[2, 2], [1, 0]]}],
                    [[0.41, 1.41], [2.04, 3.04], [4.6, 5.6], [6.5, 7.5]],
                    [[0.597018, 1.597018], [2.497668, 3.497668], [4.747018, 5.747018],
                     [6.728837, 7.728837]])


def test_gather_of_tensor_invariant_and_zero_iterations(sess):
    # a loop invariant that is a tensor, not a variable: the same accumulator; a loop
    # that runs no iteration leaves TF's starting zero row (the dense value: zeros)
    x = tf.placeholder(tf.float32, [None, 2])
    n = tf.placeholder(tf.int32, [])
    _, loss = tf.while_loop(lambda i, a: i < n, lambda i, a: (
        i + 1, a + tf.reduce_sum(tf.gather(x, i % 2) * 2.)), [0, 0.])
    g = tf.gradients(loss, x)[0]
    assert g.values.shape.as_list() == [None, 2]
    xv = np.array(E, np.float32)
    assert _slices(sess, g, {x: xv, n: 3}) == (
        [0, 0, 1, 0], [[0., 0.], [2., 2.], [2., 2.], [2., 2.]], [4, 2])
    assert _slices(sess, g, {x: xv, n: 0}) == ([0], [[0., 0.]], [4, 2])
    with pytest.warns(UserWarning, match="unknown shape"):  # x has no static shape
        dense = tf.convert_to_tensor(g)
    np.testing.assert_array_equal(sess.run(dense, {x: xv, n: 0}), np.zeros((4, 2)))


def test_second_order_through_indexed_slices_accumulator(sess):
    x = tf.placeholder(tf.float32, [4, 2])
    ids = tf.constant([0, 3, 0])
    _, loss = tf.while_loop(lambda i, a: i < 3, lambda i, a: (
        i + 1, a + tf.reduce_sum(tf.gather(x, ids[i]) ** 2) * tf.cast(i + 1, tf.float32)),
        [0, 0.])
    g = tf.gradients(loss, x)[0]
    assert isinstance(g, tf.IndexedSlices)
    c = np.arange(8, dtype=np.float32).reshape(4, 2)
    gg = tf.gradients(tf.reduce_sum(tf.convert_to_tensor(g) * c), x)[0]
    h = tf.hessians(loss, x)[0]
    xv = np.array(E, np.float32)
    # loss = 4 * |x0|^2 + 2 * |x3|^2
    weight = np.array([4., 0., 0., 2.], np.float32)[:, None]
    np.testing.assert_allclose(_dense(sess, g, {x: xv}), 2 * weight * xv)
    np.testing.assert_allclose(_dense(sess, gg, {x: xv}), 2 * weight * c)
    np.testing.assert_allclose(sess.run(h, {x: xv}).reshape(8, 8),
                               np.diag(np.repeat(2 * weight[:, 0], 2)))


# --- map_fn, scan, raw_rnn ----------------------------------------------------------------
def test_gather_in_map_fn(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [3])
    out = tf.map_fn(lambda i: tf.gather(emb, i), ids, dtype=tf.float32)
    loss = tf.reduce_sum(out * tf.constant([[1., 2.], [3., 4.], [5., 6.]]))
    g = tf.gradients(loss, emb)[0]
    sess.run(tf.global_variables_initializer())
    assert _slices(sess, g, {ids: [0, 3, 0]}) == (
        [0, 0, 3, 0], [[0., 0.], [5., 6.], [3., 4.], [1., 2.]], [4, 2])
    _check_training(sess, emb, loss, [{ids: [0, 3, 0]}, {ids: [2, 1, 1]}],
                    [[-0.14, 0.48], [2.2, 3.], [4.9, 5.8], [6.7, 7.6]],
                    [[0.575736, 1.55586], [2.703907, 3.697109], [4.9, 5.824588],
                     [6.776394, 7.747018]])


def test_gather_in_scan(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [3])
    out = tf.scan(lambda a, i: a * 0.5 + tf.gather(emb, i), ids, initializer=tf.zeros([2]))
    loss = tf.reduce_sum(out * tf.constant([[1., 2.], [3., 4.], [5., 6.]]))
    g = tf.gradients(loss, emb)[0]
    sess.run(tf.global_variables_initializer())
    assert _slices(sess, g, {ids: [2, 1, 1]}) == (
        [0, 1, 1, 2], [[0., 0.], [5., 6.], [5.5, 7.], [3.75, 5.5]], [4, 2])
    _check_training(sess, emb, loss, [{ids: [0, 3, 0]}, {ids: [2, 1, 1]}],
                    [[-0.6625, -0.185], [1.95, 2.7], [4.625, 5.45], [6.45, 7.3]],
                    [[0.551298, 1.541019], [2.69594, 3.69187], [4.753068, 5.722385],
                     [6.722385, 7.709341]])


def test_gather_in_raw_rnn(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [3, 1])

    class Cell:
        output_size = 2
        state_size = 2

        def __call__(self, inputs, state, scope=None):
            o = inputs * 2. + state * 0.5
            return o, o

        def zero_state(self, batch_size, dtype):
            return tf.zeros([batch_size, 2], dtype)

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = tf.zeros([1, 2]) if cell_output is None else cell_state
        finished = time >= 3
        inp = tf.cond(finished, lambda: tf.zeros([1, 2]),
                      lambda: tf.gather(emb, ids[tf.minimum(time, 2)]))
        return finished, inp, state, cell_output, None
    outs, _, _ = tf.nn.raw_rnn(Cell(), loop_fn)
    loss = tf.reduce_sum(outs.stack())
    g = tf.gradients(loss, emb)[0]
    assert isinstance(g, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(_dense(sess, g, {ids: [[0], [3], [0]]}),
                               [[5.5, 5.5], [0., 0.], [0., 0.], [3., 3.]])
    _check_training(sess, emb, loss, [{ids: [[0], [3], [0]]}, {ids: [[2], [1], [1]]}],
                    [[-0.045, 0.955], [2.5, 3.5], [4.65, 5.65], [6.43, 7.43]],
                    [[0.583578, 1.583578], [2.725175, 3.725175], [4.75465, 5.75465],
                     [6.66459, 7.66459]])


# --- cond -------------------------------------------------------------------------------
@pytest.mark.parametrize("make", ["Variable", "get_variable"])
def test_gather_in_one_cond_branch(sess, make):
    # the side not taken gives zeros, which merge with the slices as all their rows
    emb = tf.Variable(E) if make == "Variable" else \
        tf.get_variable("emb", initializer=tf.constant(E), use_resource=True)
    ids = tf.placeholder(tf.int32, [2])
    p = tf.placeholder(tf.bool, [])
    loss = tf.cond(p, lambda: tf.reduce_sum(tf.gather(emb, ids) * [1., 2.]),
                   lambda: tf.constant(0.))
    g = tf.gradients(loss, emb)[0]
    sess.run(tf.global_variables_initializer())
    assert _slices(sess, g, {ids: [1, 2], p: True}) == (
        [1, 2], [[1., 2.], [1., 2.]], [4, 2])
    assert _slices(sess, g, {ids: [3, 3], p: False}) == (
        [0, 1, 2, 3], [[0., 0.]] * 4, [4, 2])
    _check_training(
        sess, emb, loss,
        [{ids: [1, 2], p: True}, {ids: [3, 3], p: False}, {ids: [0, 1], p: True}],
        [[0.9, 1.8], [2.629, 3.258], [4.81, 5.62], [7., 8.]],
        [[0.895172, 1.818182], [2.720172, 3.52711], [4.85, 5.736882], [7., 8.]])


def test_gather_in_both_cond_branches(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [2])
    p = tf.placeholder(tf.bool, [])
    loss = tf.cond(p, lambda: tf.reduce_sum(tf.gather(emb, ids) * [1., 2.]),
                   lambda: tf.reduce_sum(tf.gather(emb, ids[:1]) * 3.))
    g = tf.gradients(loss, emb)[0]
    sess.run(tf.global_variables_initializer())
    # each branch's Switch gives its slices on its side and all rows of zeros on the
    # other (TF: the same rows, the zeros first)
    idx, vals, shape = _slices(sess, g, {ids: [3, 3], p: False})
    assert sorted(zip(idx, map(tuple, vals))) == \
        [(0, (0., 0.)), (1, (0., 0.)), (2, (0., 0.)), (3, (0., 0.)), (3, (3., 3.))]
    assert shape == [4, 2]
    np.testing.assert_allclose(_dense(sess, g, {ids: [1, 2], p: True}),
                               [[0., 0.], [1., 2.], [1., 2.], [0., 0.]])
    _check_training(
        sess, emb, loss,
        [{ids: [1, 2], p: True}, {ids: [3, 3], p: False}, {ids: [0, 1], p: True}],
        [[0.9, 1.8], [2.629, 3.258], [4.729, 5.458], [6.43, 7.43]],
        [[0.89017, 1.811773], [2.720172, 3.52711], [4.825, 5.69303], [6.655876, 7.655876]])


def test_gather_in_one_branch_dense_read_in_the_other_is_dense(sess):
    # slices from one branch's Switch and a dense gradient from the other's add up to a
    # dense gradient, as in TF
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [2])
    p = tf.placeholder(tf.bool, [])
    loss = tf.cond(p, lambda: tf.reduce_sum(tf.gather(emb, ids) * [1., 2.]),
                   lambda: tf.reduce_sum(emb * 0.5))
    g = tf.gradients(loss, emb)[0]
    assert isinstance(g, tf.Tensor)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(g, {ids: [1, 2], p: True}),
                               [[0., 0.], [1., 2.], [1., 2.], [0., 0.]])
    np.testing.assert_allclose(sess.run(g, {ids: [1, 2], p: False}), np.full((4, 2), 0.5))


def test_gather_in_cond_in_while_loop(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [3])

    def body(i, a):
        return i + 1, a + tf.cond(ids[i] > 1,
                                  lambda: tf.reduce_sum(tf.gather(emb, ids[i]) * 2.),
                                  lambda: tf.reduce_sum(tf.gather(emb, ids[i] + 1)))
    _, loss = tf.while_loop(lambda i, a: i < 3, body, [0, 0.])
    g = tf.gradients(loss, emb)[0]
    assert isinstance(g, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(_dense(sess, g, {ids: [0, 3, 2]}),
                               [[0., 0.], [1., 1.], [2., 2.], [2., 2.]])
    _check_training(sess, emb, loss, [{ids: [0, 3, 2]}, {ids: [2, 1, 1]}],
                    [[1., 2.], [2.81, 3.81], [4.22, 5.22], [6.62, 7.62]],
                    [[1., 2.], [2.85, 3.85], [4.496546, 5.496546], [6.736882, 7.736882]])


def test_cond_merge_of_int32_and_int64_indices(sess):
    x = tf.placeholder(tf.float32, [3, 2])
    p = tf.placeholder(tf.bool, [])
    loss = tf.cond(p, lambda: tf.reduce_sum(tf.gather(x, tf.constant([2], tf.int64))),
                   lambda: tf.reduce_sum(tf.gather(x, tf.constant([0, 1], tf.int32))))
    g = tf.gradients(loss, x)[0]
    assert isinstance(g, tf.IndexedSlices) and g.indices.dtype == tf.int64
    xv = np.ones((3, 2), np.float32)
    np.testing.assert_allclose(_dense(sess, g, {x: xv, p: True}), [[0, 0], [0, 0], [1, 1]])
    np.testing.assert_allclose(_dense(sess, g, {x: xv, p: False}), [[1, 1], [1, 1], [0, 0]])


# --- a gather of a loop's or a cond's result ---------------------------------------------
def test_gather_of_while_loop_result(sess):
    # the loop variable's gradient travels as IndexedSlices: through an identity body
    # the gathered rows alone (as TF); through arithmetic all rows (TF fails to build
    # that loop: its slices change their row count)
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [2])
    _, x = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, tf.identity(x)),
                         [0, emb.read_value()])
    _, y = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * 2.),
                         [0, emb.read_value()])
    loss_x = tf.reduce_sum(tf.gather(x, ids))
    gx, gy = tf.gradients(loss_x, emb)[0], tf.gradients(tf.reduce_sum(tf.gather(y, ids)),
                                                         emb)[0]
    sess.run(tf.global_variables_initializer())
    assert _slices(sess, gx, {ids: [1, 2]}) == ([1, 2], [[1., 1.], [1., 1.]], [4, 2])
    idx, _, shape = _slices(sess, gy, {ids: [3, 3]})
    assert idx == [0, 1, 2, 3] and shape == [4, 2]
    np.testing.assert_allclose(_dense(sess, gy, {ids: [3, 3]}),
                               [[0., 0.], [0., 0.], [0., 0.], [8., 8.]])
    _check_training(sess, emb, loss_x, [{ids: [1, 2]}, {ids: [3, 3]}],
                    [[1., 2.], [2.9, 3.9], [4.9, 5.9], [6.8, 7.8]],
                    [[1., 2.], [2.9, 3.9], [4.9, 5.9], [6.824588, 7.824588]])


def test_gather_of_cond_result(sess):
    emb = tf.Variable(E)
    ids = tf.placeholder(tf.int32, [2])
    p = tf.placeholder(tf.bool, [])
    x = tf.cond(p, lambda: emb * 2., lambda: tf.identity(emb.read_value()))
    g = tf.gradients(tf.reduce_sum(tf.gather(x, ids)), emb)[0]
    assert isinstance(g, tf.Tensor)  # as TF: the dense side and the sparse side add up
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(g, {ids: [1, 2], p: True}),
                               [[0., 0.], [2., 2.], [2., 2.], [0., 0.]])
    np.testing.assert_allclose(sess.run(g, {ids: [3, 3], p: False}),
                               [[0., 0.], [0., 0.], [0., 0.], [2., 2.]])
