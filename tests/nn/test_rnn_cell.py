"""tf.nn.rnn_cell: each cell against a NumPy implementation of TF1's formulas (checked
once against TF1 itself with the same weights), TF1's variable names/shapes, reuse,
stacking, wrappers, errors and gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.nn.rnn_cell_impl import flatten

rnn_cell = tf.nn.rnn_cell


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_basic_rnn(x, h, kernel, bias):
    out = np.tanh(np.concatenate([x, h], 1) @ kernel + bias)
    return out, out


def np_gru(x, h, gk, gb, ck, cb):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gk + gb), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ ck + cb)
    new_h = u * h + (1 - u) * c
    return new_h, new_h


def np_basic_lstm(x, c, h, kernel, bias, forget_bias=1.0):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    new_h = np.tanh(new_c) * sigmoid(o)
    return new_h, (new_c, new_h)


def np_lstm(x, c, m, kernel, bias, wf=None, wi=None, wo=None, proj=None, cell_clip=None,
            proj_clip=None, forget_bias=1.0):
    i, j, f, o = np.split(np.concatenate([x, m], 1) @ kernel + bias, 4, axis=1)
    if wf is not None:
        new_c = sigmoid(f + forget_bias + wf * c) * c + sigmoid(i + wi * c) * np.tanh(j)
    else:
        new_c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    if cell_clip is not None:
        new_c = np.clip(new_c, -cell_clip, cell_clip)
    new_m = sigmoid(o + (wo * new_c if wo is not None else 0)) * np.tanh(new_c)
    if proj is not None:
        new_m = new_m @ proj
        if proj_clip is not None:
            new_m = np.clip(new_m, -proj_clip, proj_clip)
    return new_m, (new_c, new_m)


def randomize(sess, scale=1.0):
    """Random values for every global variable (biases included); name -> value."""
    rng = np.random.RandomState(1)
    values = {}
    for v in tf.global_variables():
        val = (scale * rng.randn(*v.shape.as_list())).astype(v.dtype.as_numpy_dtype)
        sess.run(v.assign(val))
        values[v.op.name] = val
    return values


X = np.random.RandomState(2).randn(3, 4)
H = np.random.RandomState(3).randn(3, 5)
C = np.random.RandomState(4).randn(3, 5)


def names_and_shapes():
    return [(v.name, v.shape.as_list()) for v in tf.global_variables()]


def test_basic_rnn_cell(sess):
    cell = rnn_cell.BasicRNNCell(5)
    x = tf.placeholder(tf.float32, [None, 4])
    h = tf.placeholder(tf.float32, [None, 5])
    out, state = cell(x, h)
    assert names_and_shapes() == [("basic_rnn_cell/kernel:0", [9, 5]),
                                  ("basic_rnn_cell/bias:0", [5])]
    assert out.shape.as_list() == [None, 5] and state is out
    assert cell.state_size == 5 and cell.output_size == 5
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(cell.trainable_weights[1]), np.zeros(5))
    v = randomize(sess)
    got = sess.run(out, {x: X, h: H})
    want = np_basic_rnn(X, H, v["basic_rnn_cell/kernel"], v["basic_rnn_cell/bias"])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_gru_cell_formula_names_and_initial_bias(sess):
    cell = rnn_cell.GRUCell(5)
    out, state = cell(tf.constant(X), tf.constant(H))
    assert out.dtype == tf.float64 and cell.dtype == tf.float64
    assert cell.dtype == "float64" and isinstance(cell.dtype, str)  # a layer's, as TF1
    assert rnn_cell.GRUCell(2).dtype is None
    assert names_and_shapes() == [("gru_cell/gates/kernel:0", [9, 10]),
                                  ("gru_cell/gates/bias:0", [10]),
                                  ("gru_cell/candidate/kernel:0", [9, 5]),
                                  ("gru_cell/candidate/bias:0", [5])]
    sess.run(tf.global_variables_initializer())
    biases = sess.run([tf.global_variables()[1], tf.global_variables()[3]])
    np.testing.assert_array_equal(biases[0], np.ones(10))
    np.testing.assert_array_equal(biases[1], np.zeros(5))
    v = randomize(sess)
    want = np_gru(X, H, v["gru_cell/gates/kernel"], v["gru_cell/gates/bias"],
                  v["gru_cell/candidate/kernel"], v["gru_cell/candidate/bias"])[0]
    np.testing.assert_allclose(sess.run(out), want, rtol=1e-10)


def test_gru_cell_initializers(sess):
    cell = rnn_cell.GRUCell(2, kernel_initializer=tf.constant_initializer(0.5),
                            bias_initializer=tf.constant_initializer(-2.0))
    cell(tf.zeros([1, 3]), tf.zeros([1, 2]))
    sess.run(tf.global_variables_initializer())
    vals = sess.run(tf.global_variables())
    assert np.all(vals[0] == 0.5) and np.all(vals[1] == -2.0) and np.all(vals[3] == -2.0)


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_basic_lstm_cell(sess, state_is_tuple):
    cell = rnn_cell.BasicLSTMCell(5, forget_bias=0.5, state_is_tuple=state_is_tuple)
    if state_is_tuple:
        assert cell.state_size == rnn_cell.LSTMStateTuple(5, 5)
        state = rnn_cell.LSTMStateTuple(tf.constant(C), tf.constant(H))
    else:
        assert cell.state_size == 10
        state = tf.constant(np.concatenate([C, H], 1))
    with tf.variable_scope("rnn"):
        out, new_state = cell(tf.constant(X), state)
    assert names_and_shapes() == [("rnn/basic_lstm_cell/kernel:0", [9, 20]),
                                  ("rnn/basic_lstm_cell/bias:0", [20])]
    v = randomize(sess)
    want_h, (want_c, _) = np_basic_lstm(X, C, H, v["rnn/basic_lstm_cell/kernel"],
                                        v["rnn/basic_lstm_cell/bias"], 0.5)
    got_h, got_state = sess.run([out, new_state])
    np.testing.assert_allclose(got_h, want_h, rtol=1e-10)
    if state_is_tuple:
        assert isinstance(new_state, rnn_cell.LSTMStateTuple)
        assert new_state.dtype == tf.float64
        np.testing.assert_allclose(got_state.c, want_c, rtol=1e-10)
        np.testing.assert_allclose(got_state.h, want_h, rtol=1e-10)
    else:
        assert new_state.shape.as_list() == [3, 10]
        np.testing.assert_allclose(got_state, np.concatenate([want_c, want_h], 1),
                                   rtol=1e-10)


@pytest.mark.parametrize("peepholes,num_proj,cell_clip,proj_clip,tuple_state", [
    (False, None, None, None, True),
    (True, 3, 0.8, 0.3, True),
    (True, None, None, None, False),
    (False, 3, None, None, False),
])
def test_lstm_cell(sess, peepholes, num_proj, cell_clip, proj_clip, tuple_state):
    cell = rnn_cell.LSTMCell(5, use_peepholes=peepholes, num_proj=num_proj,
                             cell_clip=cell_clip, proj_clip=proj_clip,
                             state_is_tuple=tuple_state)
    m_depth = num_proj or 5
    m = H[:, :m_depth]
    if tuple_state:
        state = rnn_cell.LSTMStateTuple(tf.constant(C), tf.constant(m))
        assert cell.state_size == (5, m_depth)
    else:
        state = tf.constant(np.concatenate([C, m], 1))
        assert cell.state_size == 5 + m_depth
    assert cell.output_size == m_depth
    out, new_state = cell(tf.constant(X), state)
    expected = [("lstm_cell/kernel:0", [4 + m_depth, 20]), ("lstm_cell/bias:0", [20])]
    if peepholes:
        expected += [("lstm_cell/w_%s_diag:0" % g, [5]) for g in "fio"]
    if num_proj:
        expected.append(("lstm_cell/projection/kernel:0", [5, num_proj]))
    assert names_and_shapes() == expected
    v = randomize(sess)
    p = "lstm_cell/"
    want_m, (want_c, _) = np_lstm(
        X, C, m, v[p + "kernel"], v[p + "bias"], v.get(p + "w_f_diag"),
        v.get(p + "w_i_diag"), v.get(p + "w_o_diag"), v.get(p + "projection/kernel"),
        cell_clip, proj_clip)
    got_m, got_state = sess.run([out, new_state])
    assert out.shape.as_list() == [3, m_depth]
    np.testing.assert_allclose(got_m, want_m, rtol=1e-10)
    got_c = got_state[0] if tuple_state else got_state[:, :5]
    np.testing.assert_allclose(got_c, want_c, rtol=1e-10)
    if cell_clip is not None:
        assert np.abs(got_c).max() <= cell_clip


def test_lstm_cell_shards_partition_its_kernels():
    """num_unit_shards / num_proj_shards make the kernels partitioned variables (TF's
    names), and the cell computes what the unpartitioned one does."""
    x0 = np.arange(6, dtype=np.float32).reshape(1, 2, 3) / 6
    outs = []
    for shards in (None, 2):
        with tf.Graph().as_default():
            cell = rnn_cell.LSTMCell(4, num_unit_shards=shards, num_proj=3,
                                     num_proj_shards=shards,
                                     initializer=tf.constant_initializer(0.1))
            out, _ = tf.nn.dynamic_rnn(cell, tf.constant(x0), dtype=tf.float32)
            names = [(v.name, v.shape.as_list()) for v in tf.global_variables()]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                outs.append(sess.run(out))
    assert names == [("rnn/lstm_cell/kernel/part_0:0", [3, 16]),
                     ("rnn/lstm_cell/kernel/part_1:0", [3, 16]),
                     ("rnn/lstm_cell/bias:0", [16]),
                     ("rnn/lstm_cell/projection/kernel/part_0:0", [2, 3]),
                     ("rnn/lstm_cell/projection/kernel/part_1:0", [2, 3])]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)


def test_reuse_on_second_call_and_unique_scopes(sess):
    cell = rnn_cell.BasicLSTMCell(3)
    x = tf.zeros([2, 4])
    state = cell.zero_state(2, tf.float32)
    out1, state = cell(x, state)
    out2, _ = cell(x, state)
    assert len(tf.global_variables()) == 2
    assert len(cell.trainable_variables) == 2
    other = rnn_cell.BasicLSTMCell(3)
    other(x, other.zero_state(2, tf.float32))
    assert [v.op.name for v in tf.global_variables()][2:] == [
        "basic_lstm_cell_1/kernel", "basic_lstm_cell_1/bias"]
    named = rnn_cell.GRUCell(2, name="my_gru")
    named(x, tf.zeros([2, 2]), scope="outer")
    assert tf.global_variables()[4].op.name == "outer/gates/kernel"
    # TF1 (recorded from TF 2.15's compat.v1): `name` stays the given one while the
    # scope is the call's; an unnamed cell's name counts from 1, its scope from 0
    assert (named.name, named.scope_name) == ("my_gru", "outer")
    assert (cell.name, cell.scope_name) == ("basic_lstm_cell_1", "basic_lstm_cell")
    assert (other.name, other.scope_name) == ("basic_lstm_cell_2", "basic_lstm_cell_1")
    wrappers = [rnn_cell.MultiRNNCell([cell]), rnn_cell.DropoutWrapper(cell)]
    assert [w.name for w in wrappers] == ["multi_rnn_cell_1", "dropout_wrapper_1"]
    assert tf.layers.Dense(3).name == "dense_1"  # counted per base name


def test_reuse_argument(graph):
    x = tf.zeros([2, 4])
    a = rnn_cell.BasicRNNCell(3, name="shared")
    a(x, tf.zeros([2, 3]))
    b = rnn_cell.BasicRNNCell(3, name="shared", reuse=True)
    b(x, tf.zeros([2, 3]))
    assert [v.op.name for v in tf.global_variables()] == ["shared/kernel", "shared/bias"]
    c = rnn_cell.BasicRNNCell(3, name="shared")
    c(x, tf.zeros([2, 3]))
    assert tf.global_variables()[-1].op.name == "shared_1/bias"


def test_zero_state(sess):
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(3), rnn_cell.GRUCell(2)])
    z = cell.zero_state(4, tf.float64)
    assert isinstance(z[0], rnn_cell.LSTMStateTuple)
    assert z[0].c.shape.as_list() == [4, 3] and z[1].shape.as_list() == [4, 2]
    assert z[1].dtype == tf.float64
    b = tf.placeholder(tf.int32, [])
    zb = rnn_cell.BasicRNNCell(3).zero_state(b, tf.float32)
    assert zb.shape.as_list() == [None, 3]
    assert sess.run(zb, {b: 2}).tolist() == [[0.0] * 3] * 2
    x = tf.placeholder(tf.float32, [None, 7])
    init = rnn_cell.BasicRNNCell(3).get_initial_state(inputs=x)
    assert init.shape.as_list() == [None, 3]
    assert sess.run(init, {x: np.zeros((5, 7))}).shape == (5, 3)
    with pytest.raises(ValueError, match="batch_size and dtype cannot be None"):
        rnn_cell.BasicRNNCell(3).get_initial_state()


def test_multi_rnn_cell(sess):
    cells = [rnn_cell.BasicLSTMCell(5), rnn_cell.GRUCell(3)]
    multi = rnn_cell.MultiRNNCell(cells)
    assert multi.state_size == ((5, 5), 3) and multi.output_size == 3
    state = multi.zero_state(3, tf.float64)
    with tf.variable_scope("rnn"):
        out, new_state = multi(tf.constant(X), state)
        out2, _ = multi(tf.constant(X), new_state)
    assert [v.op.name for v in tf.global_variables()] == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias"]
    assert len(multi.trainable_weights) == 6
    v = randomize(sess, 0.5)
    p0, p1 = "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/", "rnn/multi_rnn_cell/cell_1/gru_cell/"
    h0, (c0, _) = np_basic_lstm(X, np.zeros((3, 5)), np.zeros((3, 5)), v[p0 + "kernel"],
                                v[p0 + "bias"])
    h1, _ = np_gru(h0, np.zeros((3, 3)), v[p1 + "gates/kernel"], v[p1 + "gates/bias"],
                   v[p1 + "candidate/kernel"], v[p1 + "candidate/bias"])
    h0b, _ = np_basic_lstm(X, c0, h0, v[p0 + "kernel"], v[p0 + "bias"])
    h1b, _ = np_gru(h0b, h1, v[p1 + "gates/kernel"], v[p1 + "gates/bias"],
                    v[p1 + "candidate/kernel"], v[p1 + "candidate/bias"])
    got, got2 = sess.run([out, out2])
    np.testing.assert_allclose(got, h1, rtol=1e-10)
    np.testing.assert_allclose(got2, h1b, rtol=1e-10)


def test_multi_rnn_cell_concatenated_state(sess):
    multi = rnn_cell.MultiRNNCell([rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(3)],
                                  state_is_tuple=False)
    assert multi.state_size == 5
    state = tf.constant(np.random.randn(3, 5))
    out, new_state = multi(tf.constant(X), state)
    assert new_state.shape.as_list() == [3, 5]
    v = randomize(sess)
    s0 = sess.run(state)
    p = "multi_rnn_cell/cell_%d/basic_rnn_cell/"
    a, _ = np_basic_rnn(X, s0[:, :2], v[p % 0 + "kernel"], v[p % 0 + "bias"])
    b, _ = np_basic_rnn(a, s0[:, 2:], v[p % 1 + "kernel"], v[p % 1 + "bias"])
    got_out, got_state = sess.run([out, new_state])
    np.testing.assert_allclose(got_out, b, rtol=1e-10)
    np.testing.assert_allclose(got_state, np.concatenate([a, b], 1), rtol=1e-10)


def test_multi_rnn_cell_errors():
    with pytest.raises(ValueError, match="at least one cell"):
        rnn_cell.MultiRNNCell([])
    with pytest.raises(TypeError, match="list or tuple"):
        rnn_cell.MultiRNNCell(rnn_cell.BasicRNNCell(2))
    with pytest.raises(ValueError, match="state_is_tuple is not set"):
        rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(2)], state_is_tuple=False)


def test_input_checks(graph):
    cell = rnn_cell.BasicLSTMCell(3)
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        cell(tf.zeros([2, 3, 4]), cell.zero_state(2, tf.float32))
    cell = rnn_cell.GRUCell(3)
    with pytest.raises(ValueError, match="Expected inputs.shape\\[-1\\] to be known"):
        cell(tf.placeholder(tf.float32, [2, None]), tf.zeros([2, 3]))
    with pytest.raises(TypeError, match="is not an RNNCell"):
        rnn_cell.DropoutWrapper(object())


def test_dropout_wrapper_keep_one_is_identity(sess):
    inner = rnn_cell.BasicLSTMCell(5)
    cell = rnn_cell.DropoutWrapper(inner)
    assert cell.state_size == (5, 5) and cell.output_size == 5
    state = cell.zero_state(3, tf.float64)
    out, new_state = cell(tf.constant(X), state)
    assert [v.op.name for v in tf.global_variables()] == ["basic_lstm_cell/kernel",
                                                          "basic_lstm_cell/bias"]
    v = randomize(sess)
    want_h, (want_c, _) = np_basic_lstm(X, 0 * C, 0 * H, v["basic_lstm_cell/kernel"],
                                        v["basic_lstm_cell/bias"])
    got, got_state = sess.run([out, new_state])
    np.testing.assert_allclose(got, want_h, rtol=1e-10)
    np.testing.assert_allclose(got_state.c, want_c, rtol=1e-10)


def test_dropout_wrapper_statistics_and_state_filter(sess):
    x = tf.constant(np.ones((200, 50)), dtype=tf.float32)
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(50), input_keep_prob=0.5,
                                   output_keep_prob=0.7, state_keep_prob=0.6, seed=3)
    state = rnn_cell.LSTMStateTuple(tf.ones([200, 50]), tf.ones([200, 50]))
    out, new_state = cell(x, state)
    sess.run(tf.global_variables_initializer())
    got, st = sess.run([out, new_state])
    frac = np.mean(got == 0)
    assert 0.25 < frac < 0.35  # dropped with probability 0.3 (outputs are never 0 else)
    assert np.all(st.c != 0)  # the memory cell is never dropped
    assert 0.35 < np.mean(st.h == 0) < 0.45
    again = sess.run(out)
    assert not np.array_equal(again == 0, got == 0)  # a fresh mask per run


def test_dropout_wrapper_seed_reproducible_and_scaling(graph):
    def build():
        cell = rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(
            4, activation=lambda t: t), input_keep_prob=0.5, seed=7)
        return cell
    results = []
    for _ in range(2):
        with tf.Graph().as_default():
            tf.set_random_seed(1)
            cell = build()
            x = tf.ones([3, 100])
            out, _ = cell(x, tf.zeros([3, 4]), scope="c")
            with tf.variable_scope("c", reuse=True):
                kernel = tf.get_variable("kernel")
            assign = kernel.assign(np.vstack([np.eye(100, 4), np.zeros((4, 4))]))
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                s.run(assign)
                results.append(s.run(out))
    np.testing.assert_array_equal(results[0], results[1])
    assert set(np.unique(results[0])) <= {0.0, 2.0}


def test_dropout_wrapper_variational_same_mask_each_step(sess):
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(50), output_keep_prob=0.5,
                                   variational_recurrent=True, dtype=tf.float32, seed=1)
    x = tf.ones([4, 6])
    out1, s = cell(x, tf.zeros([4, 50]))
    out2, _ = cell(x, s)
    sess.run(tf.global_variables_initializer())
    a, b = sess.run([out1, out2])
    assert np.array_equal(a == 0, b == 0)
    assert 0.3 < np.mean(a == 0) < 0.7
    with pytest.raises(ValueError, match="dtype must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), variational_recurrent=True)
    with pytest.raises(ValueError, match="input_size must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), input_keep_prob=0.5,
                                variational_recurrent=True, dtype=tf.float32)


def _dropped_state_fractions(visitor):
    """Fractions of zeros in the new state of a stacked LSTM+GRU cell whose state gets
    dropout (keep 0.5) where `visitor` lets it."""
    cell = rnn_cell.DropoutWrapper(
        rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(40), rnn_cell.GRUCell(40)]),
        state_keep_prob=0.5, seed=2, dropout_state_filter_visitor=visitor)
    _, state = cell(tf.ones([50, 4]), cell.zero_state(50, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        (c, h), gru = sess.run(state)
    return [float(np.mean(part == 0)) for part in (c, h, gru)]


@pytest.mark.parametrize("visitor, dropped", [
    # True on a structure goes into it (asking the visitor again below), False skips
    # all of it: TF's get_traverse_shallow_structure (values recorded from TF 2.15)
    (lambda s: not isinstance(s, rnn_cell.LSTMStateTuple), (False, False, True)),
    (None, (False, True, True)),  # the default: an LSTM's c is never dropped
    (lambda s: (True, False) if isinstance(s, tuple) and len(s) == 2 and
     not isinstance(s, rnn_cell.LSTMStateTuple) else True, (True, True, False)),
])
def test_dropout_state_filter_visits_substructures(graph, visitor, dropped):
    fractions = _dropped_state_fractions(visitor)
    for fraction, is_dropped in zip(fractions, dropped):
        if is_dropped:
            assert 0.35 < fraction < 0.65
        else:
            assert fraction == 0


def test_dropout_state_filter_bad_answers():
    for visitor, message in [(lambda s: 3, "returned a non-bool scalar"),
                             (lambda s: True if isinstance(s, tuple) else 3,
                              "returned structure: 3 for non-structure"),
                             (lambda s: (True, 1), "depth=1 structure of bools"),
                             (lambda s: (True,), "same sequence length")]:
        error = ValueError if "length" in message else TypeError
        with tf.Graph().as_default():  # two MultiRNNCells in one scope clash, as in TF
            cell = rnn_cell.DropoutWrapper(
                rnn_cell.MultiRNNCell([rnn_cell.GRUCell(2), rnn_cell.GRUCell(2)]),
                state_keep_prob=0.5, dropout_state_filter_visitor=visitor)
            with pytest.raises(error, match=message):
                cell(tf.ones([3, 4]), cell.zero_state(3, tf.float32))


def test_dropout_wrapper_keep_prob_range():
    with pytest.raises(ValueError, match=r"output_keep_prob must be between 0 and 1\. "
                                         r"Received 1\.5"):
        rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), output_keep_prob=1.5)
    with pytest.raises(ValueError, match=r"Received -0\.5"):
        rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), input_keep_prob=-0.5)
    with pytest.raises(TypeError, match="must be callable"):
        rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), dropout_state_filter_visitor=3)


def test_residual_and_device_wrappers(sess):
    cell = rnn_cell.ResidualWrapper(rnn_cell.BasicRNNCell(4))
    h = tf.constant(H[:, :4])
    out, state = cell(tf.constant(X), h)
    v = randomize(sess)
    want, _ = np_basic_rnn(X, H[:, :4], v["basic_rnn_cell/kernel"], v["basic_rnn_cell/bias"])
    got_out, got_state = sess.run([out, state])
    np.testing.assert_allclose(got_out, want + X, rtol=1e-10)
    np.testing.assert_allclose(got_state, want, rtol=1e-10)
    dev = rnn_cell.DeviceWrapper(rnn_cell.GRUCell(2), "/cpu:0")
    o, _ = dev(tf.constant(X), dev.zero_state(3, tf.float64))
    assert "CPU" in o.device.upper()
    narrow = rnn_cell.ResidualWrapper(rnn_cell.GRUCell(3))
    with pytest.raises(ValueError, match=r"Shapes \(3, 4\) and \(3, 3\) are incompatible"):
        narrow(tf.ones([3, 4]), tf.zeros([3, 3]))


def test_custom_cell_with_get_variable(sess):
    class Scaled(rnn_cell.RNNCell):
        state_size = property(lambda self: 2)
        output_size = property(lambda self: 2)

        def call(self, inputs, state):
            w = tf.get_variable("w", [], initializer=tf.constant_initializer(3.0),
                                dtype=inputs.dtype)
            return inputs * w + state, inputs * w + state

    cell = Scaled()
    out, s = cell(tf.ones([1, 2]), tf.ones([1, 2]))
    out2, _ = cell(out, s)
    assert [v.op.name for v in tf.global_variables()] == ["scaled/w"]
    sess.run(tf.global_variables_initializer())
    assert sess.run(out2).tolist() == [[16.0, 16.0]]


@pytest.mark.parametrize("make", [lambda: rnn_cell.BasicLSTMCell(3),
                                  lambda: rnn_cell.GRUCell(3),
                                  lambda: rnn_cell.LSTMCell(3, use_peepholes=True,
                                                            num_proj=2)])
def test_cell_gradients(sess, make):
    cell = make()
    x = tf.constant(X[:2, :4])
    state = cell.zero_state(2, tf.float64)
    out, new_state = cell(x, state)
    out, new_state = cell(x + out[:, :1], new_state)
    loss = tf.reduce_sum(out * out) + tf.reduce_sum(flatten(new_state)[0])
    randomize(sess, 0.5)
    err = compute_gradient_error(x, [2, 4], loss, [], x_init_value=X[:2, :4])
    assert err < 1e-4
    grads = tf.gradients(loss, cell.trainable_weights)
    assert [g.shape.as_list() for g in grads] == [w.shape.as_list()
                                                   for w in cell.trainable_weights]


def test_add_variable_takes_layer_arguments_and_the_cells_scope():
    """A cell's variables live in its scope also when `build` is called directly, and
    `add_weight` takes a layer's arguments (a custom cell's regularizer)."""
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(3, name="enc")
        cell.build(tf.TensorShape([None, 2]))
        with tf.variable_scope("sc"):
            tf.nn.rnn_cell.GRUCell(3).build(tf.TensorShape([None, 2]))
        names = [v.name for v in tf.global_variables()]
        assert names[:2] == ["enc/gates/kernel:0", "enc/gates/bias:0"]
        assert names[4:6] == ["sc/gru_cell/gates/kernel:0", "sc/gru_cell/gates/bias:0"]
        tf.nn.dynamic_rnn(cell, tf.ones([1, 2, 2]), dtype=tf.float32)
        assert len(tf.global_variables()) == 8  # the call reuses what build made

        class Tanh(tf.nn.rnn_cell.BasicRNNCell.__mro__[1]):  # LayerRNNCell
            state_size = 2
            output_size = 2

            def build(self, shape):
                self.w = self.add_weight("w", [shape[-1] + 2, 2], regularizer=tf.nn.l2_loss,
                                         initializer=tf.ones_initializer())
                self.built = True

            def call(self, x, h):
                out = tf.tanh(tf.matmul(tf.concat([x, h], 1), self.w))
                return out, out

        out, _ = tf.nn.dynamic_rnn(Tanh(), tf.ones([1, 2, 3]), dtype=tf.float32, scope="c1")
        assert out.shape.as_list() == [1, 2, 2]
        [reg] = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(reg) == 5 * 2 / 2  # l2_loss of a 5x2 matrix of ones


def test_cells_refuse_integer_inputs_and_softmax_on_an_axis_takes_the_name():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="RNN cell only supports floating point inputs, "
                                             "but received dtype: <dtype: 'int32'>"):
            tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.ones([1, 2, 3], tf.int32),
                              dtype=tf.int32)
        assert tf.nn.softmax(tf.ones([2, 3]), axis=0, name="probs").name == "probs:0"
        assert tf.nn.log_softmax(tf.ones([2, 3]), axis=0, name="lp").name == "lp:0"


def test_plain_cells_reenter_their_first_variable_scope_as_tf1():
    # A MultiRNNCell (a plain RNNCell, not a LayerRNNCell) re-enters the variable scope
    # of its first call: called in variable_scope("RNN") it builds under "RNN/RNN/";
    # a LayerRNNCell does not (names as TF 1.x / 2.15 print them).
    with tf.Graph().as_default():
        x = tf.zeros([1, 3])
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2)
                                            for _ in range(2)])
        state = cell.zero_state(1, tf.float32)
        with tf.variable_scope("RNN"):
            names = []
            for t in range(2):
                if t > 0:
                    tf.get_variable_scope().reuse_variables()
                out, state = cell(x, state)
                names.append(out.name)
        assert names == ["RNN/RNN/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_2:0",
                         "RNN/RNN/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_5:0"]
        lstm = tf.nn.rnn_cell.BasicLSTMCell(2)
        with tf.variable_scope("A"):
            out, _ = lstm(x, lstm.zero_state(1, tf.float32))
        assert out.name == "A/basic_lstm_cell/Mul_2:0"
        assert [v.name for v in tf.global_variables()][:2] == [
            "RNN/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
            "RNN/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0"]
        # re-entering the root scope restarts its default names, so a second
        # MultiRNNCell called at the top level asks for the same variables (TF raises)
        first = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2)])
        first(x, (tf.zeros([1, 2]),))
        second = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2)])
        with pytest.raises(ValueError, match="multi_rnn_cell/cell_0/gru_cell/gates/kernel "
                                             "already exists"):
            second(x, (tf.zeros([1, 2]),))
