"""static_rnn / dynamic_rnn and their bidirectional forms against a NumPy unrolling of
the cells (sequence_length masking included), TF1 scopes and static shapes, and
gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

rnn_cell = tf.nn.rnn_cell
B, T, D, N = 3, 4, 2, 3
INPUTS = np.random.RandomState(5).randn(B, T, D)
LENGTHS = np.array([4, 1, 2], np.int32)
NO_DTYPE = "If no initial_state is provided, argument `dtype` must be specified"


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_basic_lstm(x, state, kernel, bias):
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    new_c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
    new_h = np.tanh(new_c) * sigmoid(o)
    return new_h, (new_c, new_h)


def np_gru(x, h, gk, gb, ck, cb):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gk + gb), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ ck + cb)
    new_h = u * h + (1 - u) * c
    return new_h, new_h


def np_unroll(step, inputs, state, lengths=None):
    """inputs [B, T, D] -> outputs [B, T, N], final state, with TF1's masking."""
    outputs = []
    for t in range(inputs.shape[1]):
        out, new_state = step(inputs[:, t], state)
        if lengths is not None:
            done = (t >= lengths)[:, None]
            out = np.where(done, 0.0, out)
            new_state = tuple(np.where(done, s, n) for s, n in
                              zip(_flat(state), _flat(new_state)))
            new_state = new_state if isinstance(state, tuple) else new_state[0]
        outputs.append(out)
        state = new_state
    return np.stack(outputs, 1), state


def _flat(s):
    return tuple(s) if isinstance(s, tuple) else (s,)


def np_reverse(x, lengths):
    out = x.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = x[b, :n][::-1]
    return out


def randomize(sess, scale=0.7):
    rng = np.random.RandomState(1)
    values = {}
    for v in tf.global_variables():
        val = (scale * rng.randn(*v.shape.as_list())).astype(v.dtype.as_numpy_dtype)
        sess.run(v.assign(val))
        values[v.op.name] = val
    return values


def lstm_step(values, prefix):
    return lambda x, s: np_basic_lstm(x, s, values[prefix + "kernel"], values[prefix + "bias"])


def gru_step(values, prefix):
    return lambda x, h: np_gru(x, h, values[prefix + "gates/kernel"],
                               values[prefix + "gates/bias"],
                               values[prefix + "candidate/kernel"],
                               values[prefix + "candidate/bias"])


ZERO_LSTM = (np.zeros((B, N)), np.zeros((B, N)))


# -- static_rnn ---------------------------------------------------------------------------
@pytest.mark.parametrize("with_lengths", [False, True])
def test_static_rnn_lstm(sess, with_lengths):
    x = tf.placeholder(tf.float64, [None, T, D])
    cell = rnn_cell.BasicLSTMCell(N)
    outputs, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float64,
                                      sequence_length=LENGTHS if with_lengths else None)
    assert [v.op.name for v in tf.global_variables()] == ["rnn/basic_lstm_cell/kernel",
                                                          "rnn/basic_lstm_cell/bias"]
    assert len(outputs) == T and outputs[0].shape.as_list() == [None, N]
    assert isinstance(state, rnn_cell.LSTMStateTuple)
    assert state.c.shape.as_list() == [None, N]
    v = randomize(sess)
    want_out, want_state = np_unroll(lstm_step(v, "rnn/basic_lstm_cell/"), INPUTS,
                                     ZERO_LSTM, LENGTHS if with_lengths else None)
    got_out, got_state = sess.run([outputs, state], {x: INPUTS})
    np.testing.assert_allclose(np.stack(got_out, 1), want_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_state.c, want_state[0], rtol=1e-10)
    np.testing.assert_allclose(got_state.h, want_state[1], rtol=1e-10)
    if with_lengths:
        assert np.all(np.stack(got_out, 1)[1, 1:] == 0)


def test_static_rnn_initial_state_scope_and_errors(sess):
    cell = rnn_cell.GRUCell(N)
    inputs = [tf.constant(INPUTS[:, t]) for t in range(T)]
    h0 = np.random.RandomState(9).randn(B, N)
    outputs, state = tf.nn.static_rnn(cell, inputs, initial_state=tf.constant(h0),
                                      scope="enc")
    assert tf.global_variables()[0].op.name == "enc/gru_cell/gates/kernel"
    assert outputs[0].shape.as_list() == [B, N]
    v = randomize(sess)
    want_out, want_state = np_unroll(gru_step(v, "enc/gru_cell/"), INPUTS, h0)
    got_out, got_state = sess.run([outputs, state])
    np.testing.assert_allclose(np.stack(got_out, 1), want_out, rtol=1e-10)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-10)
    with pytest.raises(TypeError, match="`inputs` must be a sequence. Received: "):
        tf.nn.static_rnn(cell, inputs[0], dtype=tf.float64)
    with pytest.raises(ValueError, match=r"Argument `inputs` must not be empty\."):
        tf.nn.static_rnn(cell, [], dtype=tf.float64)
    with pytest.raises(ValueError, match=NO_DTYPE):
        tf.nn.static_rnn(rnn_cell.GRUCell(2), inputs)
    with pytest.raises(ValueError, match=r"dimension 0 of input Tensor.*must be "
                                         r"accessible via shape inference"):
        tf.nn.static_rnn(rnn_cell.GRUCell(2), [tf.placeholder(tf.float32, [2, None])],
                         dtype=tf.float32)
    with pytest.raises(ValueError, match=r"`sequence_length` must be a vector of length "
                                         r"3. Received sequence_length="):
        tf.nn.static_rnn(rnn_cell.GRUCell(2), inputs, dtype=tf.float64,
                         sequence_length=[[1]])
    with pytest.raises(TypeError, match="is not an RNNCell"):
        tf.nn.static_rnn(lambda a, b: a, inputs, dtype=tf.float64)


def test_static_rnn_gradient_wrt_inputs(sess):
    x = tf.constant(INPUTS[:2, :3])
    cell = rnn_cell.BasicLSTMCell(2)
    outputs, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float64,
                                      sequence_length=[3, 2])
    loss = tf.reduce_sum(tf.stack(outputs) ** 2) + tf.reduce_sum(state.c)
    randomize(sess)
    err = compute_gradient_error(x, [2, 3, D], loss, [], x_init_value=INPUTS[:2, :3])
    assert err < 1e-4


@pytest.mark.parametrize("with_lengths", [False, True])
def test_static_bidirectional_rnn(sess, with_lengths):
    inputs = [tf.constant(INPUTS[:, t]) for t in range(T)]
    lengths = LENGTHS if with_lengths else None
    outputs, fw_state, bw_state = tf.nn.static_bidirectional_rnn(
        rnn_cell.BasicLSTMCell(N), rnn_cell.GRUCell(2), inputs, dtype=tf.float64,
        sequence_length=lengths)
    assert [v.op.name for v in tf.global_variables()][:3] == [
        "bidirectional_rnn/fw/basic_lstm_cell/kernel",
        "bidirectional_rnn/fw/basic_lstm_cell/bias",
        "bidirectional_rnn/bw/gru_cell/gates/kernel"]
    assert outputs[0].shape.as_list() == [B, N + 2]
    v = randomize(sess)
    fw_out, fw_want = np_unroll(lstm_step(v, "bidirectional_rnn/fw/basic_lstm_cell/"),
                                INPUTS, ZERO_LSTM, lengths)
    rev = np_reverse(INPUTS, lengths if with_lengths else [T] * B)
    bw_out, bw_want = np_unroll(gru_step(v, "bidirectional_rnn/bw/gru_cell/"), rev,
                                np.zeros((B, 2)), lengths)
    bw_out = np_reverse(bw_out, lengths if with_lengths else [T] * B)
    got, got_fw, got_bw = sess.run([outputs, fw_state, bw_state])
    np.testing.assert_allclose(np.stack(got, 1), np.concatenate([fw_out, bw_out], 2),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_fw.h, fw_want[1], rtol=1e-10)
    np.testing.assert_allclose(got_bw, bw_want, rtol=1e-10)


# -- static_state_saving_rnn ----------------------------------------------------------------
class VariableStateSaver:
    """A minimal state saver as TF's docstring describes it: `state(name)` reads the
    saved state, `save_state(name, value)` returns the op that saves a new one; backed
    by resource variables starting at zero."""

    def __init__(self, sizes, dtype=tf.float64, frozen=False):
        self.frozen = frozen  # save_state returns a no-op (repeatable runs)
        self.vars = {name: tf.get_variable("saved_" + name, initializer=tf.zeros([B, n],
                                                                              dtype),
                                           use_resource=True, trainable=False)
                     for name, n in sizes.items()}
        self.saved = []

    def state(self, name):
        return self.vars[name].read_value()

    def save_state(self, name, value):
        self.saved.append(name)
        if self.frozen:
            return tf.no_op()
        return self.vars[name].assign(value).op


def test_static_state_saving_rnn_lstm_carries_state_over_segments(sess):
    # two segments of T steps of one sequence of 2T steps: the second starts from the
    # state the first saved, as one unrolling over all 2T steps does
    x = tf.placeholder(tf.float64, [B, T, D])
    saver = VariableStateSaver({"c": N, "h": N})
    cell = rnn_cell.BasicLSTMCell(N)
    outputs, state = tf.nn.static_state_saving_rnn(cell, tf.unstack(x, axis=1), saver,
                                                   ("c", "h"))
    assert saver.saved == ["c", "h"] and len(outputs) == T
    assert isinstance(state, rnn_cell.LSTMStateTuple)
    assert outputs[-1].op.type == "Identity" and state.h.op.type == "Identity"
    assert outputs[-1].shape.as_list() == [B, N] and state.c.shape.as_list() == [B, N]
    assert [v.op.name for v in tf.trainable_variables()] == ["rnn/basic_lstm_cell/kernel",
                                                            "rnn/basic_lstm_cell/bias"]
    sess.run(tf.global_variables_initializer())
    v = randomize(sess)
    sess.run([var.initializer for var in saver.vars.values()])  # back to zero states
    rng = np.random.RandomState(7)
    long_inputs = rng.randn(B, 2 * T, D)
    want_out, want_state = np_unroll(lstm_step(v, "rnn/basic_lstm_cell/"), long_inputs,
                                     ZERO_LSTM)
    got1 = sess.run(outputs, {x: long_inputs[:, :T]})
    np.testing.assert_allclose(sess.run(saver.vars["c"].read_value()),
                               np_unroll(lstm_step(v, "rnn/basic_lstm_cell/"),
                                         long_inputs[:, :T], ZERO_LSTM)[1][0], rtol=1e-10)
    got2, got_state = sess.run([outputs, state], {x: long_inputs[:, T:]})
    np.testing.assert_allclose(np.stack(got1 + got2, 1), want_out, rtol=1e-10)
    np.testing.assert_allclose(got_state.c, want_state[0], rtol=1e-10)
    np.testing.assert_allclose(got_state.h, want_state[1], rtol=1e-10)
    np.testing.assert_allclose(sess.run(saver.vars["h"].read_value()), want_state[1],
                               rtol=1e-10)


def test_static_state_saving_rnn_saves_with_last_output_only(sess):
    saver = VariableStateSaver({"g": N})
    inputs = [tf.constant(INPUTS[:, t]) for t in range(T)]
    outputs, state = tf.nn.static_state_saving_rnn(rnn_cell.GRUCell(N), inputs, saver, "g",
                                                   sequence_length=LENGTHS, scope="enc")
    assert tf.trainable_variables()[0].op.name == "enc/gru_cell/gates/kernel"
    sess.run(tf.global_variables_initializer())
    v = randomize(sess)
    sess.run(saver.vars["g"].initializer)
    sess.run(outputs[0])  # the first output does not wait for the saves
    np.testing.assert_array_equal(sess.run(saver.state("g")), np.zeros((B, N)))
    want_out, want_state = np_unroll(gru_step(v, "enc/gru_cell/"), INPUTS,
                                     np.zeros((B, N)), LENGTHS)
    got = sess.run(outputs[-1])
    np.testing.assert_allclose(got, want_out[:, -1], rtol=1e-10)
    np.testing.assert_allclose(sess.run(saver.state("g")), want_state, rtol=1e-10)


def test_static_state_saving_rnn_state_name_errors(graph):
    saver = VariableStateSaver({"c": N, "h": N})
    inputs = [tf.constant(INPUTS[:, t]) for t in range(T)]
    with pytest.raises(ValueError, match="should be the same type as `cell.state_size`"):
        tf.nn.static_state_saving_rnn(rnn_cell.BasicLSTMCell(N), inputs, saver, "c")
    with pytest.raises(ValueError, match="with 1 elements and cell.state_size"):
        tf.nn.static_state_saving_rnn(rnn_cell.BasicLSTMCell(N), inputs, saver, ("c",))
    with pytest.raises(ValueError, match="should be the same type as `cell.state_size`"):
        tf.nn.static_state_saving_rnn(rnn_cell.GRUCell(N), inputs, saver, ("c",))
    with pytest.raises(TypeError, match="`inputs` must be a sequence. Received: "):
        tf.nn.static_state_saving_rnn(rnn_cell.GRUCell(N), None, saver, "c")


def test_static_state_saving_rnn_gradient(sess):
    # the numeric check runs the graph many times: a saver that keeps its state
    saver = VariableStateSaver({"c": N, "h": N}, frozen=True)
    x = tf.placeholder(tf.float64, [B, T, D])
    outputs, state = tf.nn.static_state_saving_rnn(
        rnn_cell.BasicLSTMCell(N), tf.unstack(x, axis=1), saver, ("c", "h"))
    loss = tf.reduce_sum(tf.stack(outputs)) + tf.reduce_sum(state.c)
    sess.run(tf.global_variables_initializer())
    randomize(sess, scale=0.4)
    # a saved state that is not zero, so the gradient flows through it as well
    sess.run(saver.vars["c"].assign(np.full((B, N), 0.3)))
    err = compute_gradient_error(x, [B, T, D], loss, [], x_init_value=INPUTS[:, :T])
    assert err < 1e-6
    c0 = saver.vars["c"]
    assert tf.gradients(loss, c0.handle) != [None]


# -- dynamic_rnn --------------------------------------------------------------------------
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("with_lengths", [False, True])
def test_dynamic_rnn_matches_static_rnn_and_numpy(sess, time_major, with_lengths):
    x = tf.placeholder(tf.float64, [None, T, D])
    lengths = LENGTHS if with_lengths else None
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(N), rnn_cell.GRUCell(2)])
    dyn_in = tf.transpose(x, [1, 0, 2]) if time_major else x
    outputs, state = tf.nn.dynamic_rnn(cell, dyn_in, sequence_length=lengths,
                                       dtype=tf.float64, time_major=time_major)
    names = [v.op.name for v in tf.global_variables()]
    assert names[0] == "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel"
    assert len(names) == 6
    assert outputs.shape.as_list() == ([T, None, 2] if time_major else [None, T, 2])
    assert state[0].c.shape.as_list() == [None, N]
    assert state[1].shape.as_list() == [None, 2]
    with tf.variable_scope("rnn", reuse=True):  # same variables through static_rnn
        s_out, s_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float64,
                                          sequence_length=lengths, scope="rnn")
    assert len(tf.global_variables()) == 6
    v = randomize(sess)
    p0, p1 = "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/", "rnn/multi_rnn_cell/cell_1/gru_cell/"

    def step(inp, st):
        h0, s0 = lstm_step(v, p0)(inp, st[0])
        h1, s1 = gru_step(v, p1)(h0, st[1])
        return h1, (s0, s1)

    def np_multi_unroll():
        state = (ZERO_LSTM, np.zeros((B, 2)))
        outs = []
        for t in range(T):
            out, new = step(INPUTS[:, t], state)
            if lengths is not None:
                done = (t >= lengths)[:, None]
                out = np.where(done, 0.0, out)
                new = ((np.where(done, state[0][0], new[0][0]),
                        np.where(done, state[0][1], new[0][1])),
                       np.where(done, state[1], new[1]))
            outs.append(out)
            state = new
        return np.stack(outs, 1), state
    want_out, want_state = np_multi_unroll()
    got_out, got_state, st_out, st_state = sess.run([outputs, state, s_out, s_state],
                                                    {x: INPUTS})
    if time_major:
        got_out = got_out.transpose(1, 0, 2)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_out, np.stack(st_out, 1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got_state[0].c, want_state[0][0], rtol=1e-10)
    np.testing.assert_allclose(got_state[1], want_state[1], rtol=1e-10)
    np.testing.assert_allclose(got_state[1], st_state[1], rtol=1e-12)


def test_dynamic_rnn_all_lengths_short_and_static_shapes(sess):
    cell = rnn_cell.BasicRNNCell(N)
    x = tf.constant(INPUTS)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[1, 1, 2],
                                       initial_state=tf.constant(np.ones((B, N))))
    assert outputs.shape.as_list() == [B, T, N] and state.shape.as_list() == [B, N]
    sess.run(tf.global_variables_initializer())
    got = sess.run(outputs)
    assert np.all(got[:, 2:] == 0) and np.all(got[:2, 1:] == 0)
    assert np.all(got[:, 0] != 0)


def test_dynamic_rnn_errors(graph):
    # messages as TF 2.15's compat.v1 words them, naming what was received
    cell = rnn_cell.GRUCell(2)
    with pytest.raises(ValueError, match=NO_DTYPE):
        tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 4]))
    with pytest.raises(ValueError, match=r"sequence_length must be a vector of length "
                                         r"batch_size. Received .* of shape: \(1, 2\)"):
        tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 4]), dtype=tf.float32,
                          sequence_length=[[1, 2]])
    with pytest.raises(ValueError, match="depth of inputs.*saw value None for input="):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [2, 3, None]), dtype=tf.float32)
    with pytest.raises(ValueError, match=r"rank >= 2. Received input=.* of rank 1"):
        tf.nn.dynamic_rnn(cell, tf.zeros([4]), dtype=tf.float32)
    with pytest.raises(ValueError, match="Batch_size is not the same .* Received batch "
                                         "size=1 for input="):
        tf.nn.dynamic_rnn(cell, (tf.zeros([2, 3, 4]), tf.zeros([1, 3, 4])),
                          dtype=tf.float32)
    with pytest.raises(ValueError, match="Time steps is not the same .* Received time "
                                         "steps=2 for input="):
        tf.nn.dynamic_rnn(cell, (tf.zeros([2, 3, 4]), tf.zeros([2, 2, 4])),
                          dtype=tf.float32)


def test_dynamic_rnn_state_dtype_inference_errors(graph):
    class PassThrough(rnn_cell.RNNCell):
        state_size = property(lambda self: (2, 2))
        output_size = property(lambda self: 2)

        def call(self, inputs, state):
            return inputs[:, :2], state
    mixed = (tf.zeros([3, 2]), tf.zeros([3, 2], tf.float64))
    with pytest.raises(ValueError, match=r"different inferred dtypes.*Dtypes received: "
                                         r"\[tf.float32, tf.float64\]"):
        tf.nn.dynamic_rnn(PassThrough(), tf.zeros([3, 5, 4]), initial_state=mixed)
    with pytest.raises(ValueError, match=r"Unable to infer dtype from argument state=\(\)"):
        tf.nn.dynamic_rnn(PassThrough(), tf.zeros([3, 5, 4]), initial_state=())


def test_dynamic_rnn_bad_sequence_length_at_run_time(sess):
    x = tf.placeholder(tf.float32, [None, T, D])
    outputs, _ = tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), x, dtype=tf.float32,
                                   sequence_length=tf.constant([1, 2], tf.int32))
    sess.run(tf.global_variables_initializer())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected shape for Tensor"):
        sess.run(outputs, {x: INPUTS})


@pytest.mark.parametrize("time_major", [False, True])
def test_bidirectional_dynamic_rnn(sess, time_major):
    x = tf.constant(INPUTS.transpose(1, 0, 2) if time_major else INPUTS)
    (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
        rnn_cell.BasicLSTMCell(N), rnn_cell.GRUCell(2), x, sequence_length=LENGTHS,
        dtype=tf.float64, time_major=time_major)
    names = [v.op.name for v in tf.global_variables()]
    assert names[0] == "bidirectional_rnn/fw/basic_lstm_cell/kernel"
    assert names[2] == "bidirectional_rnn/bw/gru_cell/gates/kernel"
    assert out_fw.shape.as_list() == ([T, B, N] if time_major else [B, T, N])
    assert out_bw.shape.as_list() == ([T, B, 2] if time_major else [B, T, 2])
    v = randomize(sess)
    fw_out, fw_want = np_unroll(lstm_step(v, "bidirectional_rnn/fw/basic_lstm_cell/"),
                                INPUTS, ZERO_LSTM, LENGTHS)
    bw_out, bw_want = np_unroll(gru_step(v, "bidirectional_rnn/bw/gru_cell/"),
                                np_reverse(INPUTS, LENGTHS), np.zeros((B, 2)), LENGTHS)
    bw_out = np_reverse(bw_out, LENGTHS)
    g_fw, g_bw, g_sfw, g_sbw = sess.run([out_fw, out_bw, st_fw, st_bw])
    if time_major:
        g_fw, g_bw = g_fw.transpose(1, 0, 2), g_bw.transpose(1, 0, 2)
    np.testing.assert_allclose(g_fw, fw_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g_bw, bw_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g_sfw.h, fw_want[1], rtol=1e-10)
    np.testing.assert_allclose(g_sbw, bw_want, rtol=1e-10)


def test_bidirectional_dynamic_rnn_without_lengths(sess):
    x = tf.constant(INPUTS)
    (out_fw, out_bw), _ = tf.nn.bidirectional_dynamic_rnn(
        rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(2), x, dtype=tf.float64,
        scope="bi")
    assert tf.global_variables()[2].op.name == "bi/bw/basic_rnn_cell/kernel"
    v = randomize(sess)

    def step(prefix):
        return lambda a, h: (np.tanh(np.concatenate([a, h], 1) @ v[prefix + "kernel"]
                                     + v[prefix + "bias"]),) * 2
    bw_out, _ = np_unroll(step("bi/bw/basic_rnn_cell/"), INPUTS[:, ::-1], np.zeros((B, 2)))
    np.testing.assert_allclose(sess.run(out_bw), bw_out[:, ::-1], rtol=1e-10)


def test_dynamic_rnn_gradient_wrt_inputs(sess):
    x = tf.constant(INPUTS[:2, :3])
    cell = rnn_cell.GRUCell(2)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 2], dtype=tf.float64)
    loss = tf.reduce_sum(outputs ** 2) + tf.reduce_sum(state)
    randomize(sess)
    err = compute_gradient_error(x, [2, 3, D], loss, [], x_init_value=INPUTS[:2, :3])
    assert err < 1e-4


def test_dynamic_rnn_second_order_gradient(sess):
    # the gradient of a squared gradient through dynamic_rnn (a while_loop over
    # TensorArrays with sequence_length masking) against central differences
    x = tf.placeholder(tf.float64, [2, 3, 2])
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    out, _ = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 2], dtype=tf.float64)
    g = tf.gradients(tf.reduce_sum(out * out), x)[0]
    gg = tf.reduce_sum(g * g)
    h = tf.gradients(gg, x)[0]
    sess.run(tf.global_variables_initializer())
    xv = np.random.RandomState(0).randn(2, 3, 2)
    eps = 1e-5
    num = np.zeros_like(xv)
    for i in np.ndindex(xv.shape):
        d = np.zeros_like(xv)
        d[i] = eps
        num[i] = (sess.run(gg, {x: xv + d}) - sess.run(gg, {x: xv - d})) / (2 * eps)
    np.testing.assert_allclose(sess.run(h, {x: xv}), num, rtol=1e-6, atol=1e-7)


def _raw_rnn_inputs(lengths):
    rs = np.random.RandomState(0)
    xs = rs.rand(5, len(lengths), 2).astype(np.float32)
    return xs, np.array(lengths, np.int32)


def test_raw_rnn_as_documented_against_numpy(sess):
    """TF1's documented loop_fn over an unstacked input, lengths 5, 2 and 0: finished
    entries emit zeros and keep their state; no cond warning for reading the input."""
    import warnings
    xs, lengths = _raw_rnn_inputs([5, 2, 0])
    batch = len(lengths)
    cell = tf.nn.rnn_cell.BasicRNNCell(4)
    inputs_ta = tf.TensorArray(tf.float32, size=5).unstack(tf.constant(xs))
    seq = tf.constant(lengths)

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = cell.zero_state(batch, tf.float32) if cell_output is None else cell_state
        finished = time >= seq
        nxt = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([batch, 2]),
                      lambda: inputs_ta.read(time))
        return finished, nxt, state, cell_output, None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        emit_ta, final, loop_state = tf.nn.raw_rnn(cell, loop_fn)
    assert loop_state is None
    sess.run(tf.global_variables_initializer())
    out, fin = sess.run([emit_ta.stack(), final])
    k, b = sess.run(cell.weights)
    h, want, done, t = np.zeros((batch, 4), np.float32), [], lengths <= 0, 0
    while not done.all():
        nh = np.tanh(np.concatenate([xs[t], h], 1) @ k + b)
        want.append(np.where(done[:, None], 0.0, nh))
        h = np.where(done[:, None], h, nh)
        t += 1
        done = done | (t >= lengths)
    np.testing.assert_allclose(out, np.stack(want), rtol=1e-6)
    np.testing.assert_allclose(fin, h, rtol=1e-6)


def test_raw_rnn_emit_structure_and_loop_state(sess):
    xs, lengths = _raw_rnn_inputs([3, 1])
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    inputs_ta = tf.TensorArray(tf.float32, size=5).unstack(tf.constant(xs))

    def loop_fn(time, cell_output, cell_state, loop_state):
        finished = time >= tf.constant(lengths)
        if cell_output is None:  # time 0: one example's emit, and a step counter
            emit = (tf.zeros([], tf.float32), tf.zeros([], tf.int32))
            return finished, inputs_ta.read(0), cell.zero_state(2, tf.float32), emit, \
                tf.constant(0)
        emit = (tf.reduce_sum(cell_output, axis=1), tf.fill([2], time))
        nxt = inputs_ta.read(tf.minimum(time, 4))
        return finished, nxt, cell_state, emit, loop_state + 1
    emit_ta, _, steps = tf.nn.raw_rnn(cell, loop_fn, scope="custom")
    assert isinstance(emit_ta, tuple) and emit_ta[1].dtype == tf.int32
    assert all(v.name.startswith("custom/") for v in tf.trainable_variables())
    sess.run(tf.global_variables_initializer())
    sums, times, n = sess.run([emit_ta[0].stack(), emit_ta[1].stack(), steps])
    assert n == 3 and sums.shape == (3, 2)
    assert times.tolist() == [[1, 1], [2, 0], [3, 0]]  # finished entries emit zeros
    assert sums[1:, 1].tolist() == [0.0, 0.0] and (sums[:, 0] != 0).all()


def test_raw_rnn_all_finished_at_start_and_bad_loop_fn(sess):
    cell = tf.nn.rnn_cell.BasicRNNCell(3)

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = tf.ones([2, 3]) if cell_state is None else cell_state
        return tf.constant([True, True]), tf.zeros([2, 1]), state, cell_output, None
    emit_ta, final, _ = tf.nn.raw_rnn(cell, loop_fn)
    sess.run(tf.global_variables_initializer())
    assert sess.run(emit_ta.size()) == 0
    assert sess.run(final).tolist() == [[1.0] * 3] * 2
    with pytest.raises(TypeError, match="Argument `loop_fn` must be a callable. "
                                        "Received: 5"):
        tf.nn.raw_rnn(cell, 5)


def test_raw_rnn_calls_loop_fn_positionally_with_a_custom_emit(sess):
    # TF calls loop_fn positionally (any parameter names) and takes the emit template of
    # time 0 as one example's shape: here a projection to 6 of a 5-unit cell's output
    batch, steps, depth, units, vocab = 2, 3, 4, 5, 6
    inputs = tf.constant(np.arange(batch * steps * depth, dtype=np.float32).reshape(
        steps, batch, depth) / 50.0)
    cell = tf.nn.rnn_cell.BasicRNNCell(units)
    proj = tf.constant(np.full((units, vocab), 0.3, np.float32))

    def step(t, out, st, unused_loop_state):
        if out is None:
            return (tf.zeros([batch], tf.bool), inputs[0], cell.zero_state(batch, tf.float32),
                    tf.zeros([vocab]), None)
        done = t >= steps
        nxt = tf.cond(done, lambda: tf.zeros([batch, depth]),
                      lambda: inputs[tf.minimum(t, steps - 1)])
        return tf.fill([batch], done), nxt, st, tf.matmul(out, proj), None

    emitted, final_state, _ = tf.nn.raw_rnn(cell, step)
    stacked = emitted.stack()
    assert stacked.shape.as_list() == [None, batch, vocab]
    sess.run(tf.global_variables_initializer())
    got, state = sess.run([stacked, final_state])
    # the emits are the cell's outputs projected: each output row sums to 6 * 0.3 * sum(h)
    assert got.shape == (steps, batch, vocab)
    # (float32 products of a few terms that partly cancel: an absolute tolerance too)
    np.testing.assert_allclose(got[-1], np.tile(state.sum(1, keepdims=True) * 0.3,
                                                (1, vocab)), rtol=1e-5, atol=1e-7)
