"""ReverseSequence / tf.reverse_sequence: values against a NumPy reference, static shapes
and build/run-time errors as TF1 reports them, the gradient, and its use by the
bidirectional RNNs."""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework import errors


def _reference(x, lengths, seq_axis, batch_axis):
    """Loops over the batch: reverses the first lengths[b] steps of each sequence b."""
    y = np.moveaxis(np.array(x), (batch_axis, seq_axis), (0, 1)).copy()
    for b, n in enumerate(lengths):
        y[b, :n] = y[b, :n][::-1].copy()
    return np.moveaxis(y, (0, 1), (batch_axis, seq_axis))


def _sample(dtype, shape):
    raw = np.arange(int(np.prod(shape))).reshape(shape)
    if dtype is object:
        return np.vectorize(lambda v: b"s%d" % v, otypes=[object])(raw)
    if dtype is np.bool_:
        return raw % 3 == 0
    if dtype is np.complex64:
        return (raw + 1j * raw[::-1]).astype(dtype)
    return raw.astype(dtype)


# (shape, seq_axis, batch_axis)
LAYOUTS = [
    ((3, 5), 1, 0), ((5, 3), 0, 1),
    ((3, 4, 2), 1, 0), ((4, 3, 2), 0, 1), ((3, 2, 4), 2, 0), ((4, 2, 3), 0, 2),
    ((2, 4, 3), 1, 2), ((2, 3, 4), 2, 1),
    ((2, 3, 2, 5), 3, 1), ((4, 2, 3, 2), 0, 2), ((2, 2, 4, 3), 2, 3),
]


@pytest.mark.parametrize("shape,seq_axis,batch_axis", LAYOUTS)
@pytest.mark.parametrize("tlen", [np.int32, np.int64])
def test_values_match_numpy_over_axes_and_ranks(sess, shape, seq_axis, batch_axis, tlen):
    x = np.random.randn(*shape).astype(np.float32)
    steps, batch = shape[seq_axis], shape[batch_axis]
    lengths = np.random.randint(0, steps + 1, size=batch).astype(tlen)
    lengths[0], lengths[-1] = steps, 0  # a full and an empty reversal
    px = tf.placeholder(tf.float32, [None] * len(shape))
    pl = tf.placeholder(tf.as_dtype(tlen), [None])
    y = tf.reverse_sequence(px, pl, seq_axis=seq_axis, batch_axis=batch_axis)
    assert y.op.get_attr("Tlen") == tf.as_dtype(tlen)
    got = sess.run(y, {px: x, pl: lengths})
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, _reference(x, lengths, seq_axis, batch_axis))
    np.testing.assert_array_equal(sess.run(px, {px: x}), x)  # the input is not mutated


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64,
                                   np.uint8, np.complex64, np.bool_, object])
def test_values_over_dtypes(sess, dtype):
    x = _sample(dtype, (3, 4, 2))
    lengths = [4, 2, 3]
    y = tf.reverse_sequence(tf.constant(x), lengths, seq_axis=1)
    got = sess.run(y)
    assert y.dtype == tf.as_dtype(dtype if dtype is not object else tf.string)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, _reference(x, lengths, 1, 0))


def test_values_verified_against_tf1(sess):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    # outputs printed by TF 2.21 (tf.compat.v1) for the same calls
    np.testing.assert_array_equal(
        sess.run(tf.reverse_sequence(x, [3, 4], seq_axis=2, batch_axis=0)),
        [[[2, 1, 0, 3], [6, 5, 4, 7], [10, 9, 8, 11]],
         [[15, 14, 13, 12], [19, 18, 17, 16], [23, 22, 21, 20]]])
    np.testing.assert_array_equal(
        sess.run(tf.reverse_sequence(x, [2, 0, 1], seq_axis=0, batch_axis=1)),
        [[[12, 13, 14, 15], [4, 5, 6, 7], [8, 9, 10, 11]],
         [[0, 1, 2, 3], [16, 17, 18, 19], [20, 21, 22, 23]]])
    np.testing.assert_array_equal(
        sess.run(tf.reverse_sequence(tf.constant([["a", "b"], ["c", "d"]]), [2, 1], 1)),
        np.array([[b"b", b"a"], [b"c", b"d"]], dtype=object))


def test_zero_lengths_and_empty_tensors(sess):
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(sess.run(tf.reverse_sequence(x, [0, 0, 0], 1)), x)
    np.testing.assert_array_equal(sess.run(tf.reverse_sequence(x, [1, 0, 1], 1)), x)
    assert sess.run(tf.reverse_sequence(tf.zeros([0, 3]), tf.zeros([0], tf.int64),
                                        1)).shape == (0, 3)
    assert sess.run(tf.reverse_sequence(tf.zeros([2, 0]), [0, 0], 1)).shape == (2, 0)


def test_deprecated_axis_names_and_attrs(graph):
    x = tf.placeholder(tf.float32, [None, 5, 3])
    y = tf.reverse_sequence(x, [1, 2, 3, 0, 1], seq_dim=2, batch_dim=1)
    assert y.op.type == "ReverseSequence"
    assert (y.op.get_attr("seq_dim"), y.op.get_attr("batch_dim")) == (2, 1)
    assert y.name == "ReverseSequence:0" and y.op.inputs[1].name == "ReverseSequence/seq_lengths:0"
    assert tf.reverse_sequence(x, [1], 1, name="foo").name == "foo:0"
    z = tf.reverse_sequence(x, [1], 1, None)
    assert z.op.get_attr("batch_dim") == 0
    assert tf.reverse_sequence(x, [1], np.int64(2)).op.get_attr("seq_dim") == 2
    # TF keeps the lengths' own type: Python ints are int32 unless they need int64
    assert tf.reverse_sequence(x, [1, 2], 1).op.get_attr("Tlen") == tf.int32
    assert tf.reverse_sequence(x, [1, 2 ** 40], 1).op.get_attr("Tlen") == tf.int64
    assert tf.reverse_sequence(x, np.array([1, 2]), 1).op.get_attr("Tlen") == tf.int64
    assert tf.compat.v1.reverse_sequence is tf.reverse_sequence


def P(shape, dt=tf.float32):
    return tf.placeholder(dt, shape)


def L(shape, dt=tf.int64):
    return tf.placeholder(dt, shape)


# (name, builder, expected static shape | (error class, message fragment)), as TF 2.21
STATIC = [
    ("known", lambda: tf.reverse_sequence(P([None, 5, 3]), L([None]), 1), "(?, 5, 3)"),
    ("merge_batch", lambda: tf.reverse_sequence(P([None, 5, 3]), L([4]), 1), "(4, 5, 3)"),
    ("unknown_seq", lambda: tf.reverse_sequence(P([4, None, 3]), L([None]), 1), "(4, ?, 3)"),
    ("unknown_rank", lambda: tf.reverse_sequence(P(None), L([4]), 1, 2), "<unknown>"),
    ("unknown_rank_far_axes", lambda: tf.reverse_sequence(P(None), L([4]), 7, -1),
     "<unknown>"),
    ("unknown_lengths", lambda: tf.reverse_sequence(P([2, 3]), L(None), 1), "(2, 3)"),
    ("negative_seq_axis", lambda: tf.reverse_sequence(P([None, 5, 3]), L([None]), -1),
     "(?, 5, 3)"),
    ("same_axes", lambda: tf.reverse_sequence(P([4, 2]), L([4]), 0, 0), "(4, 2)"),
    ("rank1", lambda: tf.reverse_sequence(tf.constant([1.0, 2.0]), [1, 1], 0, 0), "(2,)"),
    ("no_seq_axis", lambda: tf.reverse_sequence(P([2, 3]), [1, 1]),
     (TypeError, "Expected int for argument 'seq_dim' not None.")),
    ("str_seq_axis", lambda: tf.reverse_sequence(P([2, 3]), [1, 1], "1"),
     (TypeError, "Expected int for argument 'seq_dim' not '1'.")),
    ("both_seq", lambda: tf.reverse_sequence(P([2, 3]), [1, 1], seq_axis=1, seq_dim=1),
     (ValueError, "Cannot specify both 'seq_dim' and 'seq_axis'.")),
    ("both_batch", lambda: tf.reverse_sequence(P([2, 3]), [1, 1], 1, batch_axis=0,
                                               batch_dim=0),
     (ValueError, "Cannot specify both 'batch_dim' and 'batch_axis'.")),
    ("negative_batch", lambda: tf.reverse_sequence(P([None, 5, 3]), L([None]), 1, -3),
     (ValueError, "batch_dim must be >=0, got -3")),
    ("negative_batch_before_merge", lambda: tf.reverse_sequence(P([4, 2]), [1, 1, 1], 1, -1),
     (ValueError, "batch_dim must be >=0, got -1")),
    ("seq_too_big", lambda: tf.reverse_sequence(P([None, 5, 3]), L([None]), 3),
     (ValueError, "seq_dim must be < input rank: 3 vs. 3")),
    ("batch_too_big", lambda: tf.reverse_sequence(P([None, 5, 3]), L([None]), 1, 3),
     (ValueError, "batch_dim must be < input rank: 3 vs. 3")),
    ("batch_checked_first", lambda: tf.reverse_sequence(P([None, 5, 3]), L([None]), 4, 4),
     (ValueError, "batch_dim must be < input rank: 4 vs. 3")),
    ("scalar_input", lambda: tf.reverse_sequence(tf.constant(1.0), [1], 0),
     (ValueError, "batch_dim must be < input rank: 0 vs. 0")),
    ("batch_mismatch", lambda: tf.reverse_sequence(P([4, None, 3]), [1, 2, 3], 1),
     (ValueError, "Dimensions must be equal, but are 4 and 3")),
    ("lengths_matrix", lambda: tf.reverse_sequence(P([4, None, 3]), [[1, 2, 3, 4]], 1),
     (ValueError, "Shape must be rank 1 but is rank 2")),
    ("lengths_matrix_unknown_input", lambda: tf.reverse_sequence(P(None), [[1]], 1),
     (ValueError, "Shape must be rank 1 but is rank 2")),
    ("float_lengths", lambda: tf.reverse_sequence(P([4, 2]), [1.0, 2.0, 3.0, 4.0], 1),
     (TypeError, "Value passed to parameter 'seq_lengths' has DataType float32 not in list "
                 "of allowed values: int32, int64")),
    ("int16_lengths", lambda: tf.reverse_sequence(P([4, 2]), L([4], tf.int16), 1),
     (TypeError, "Value passed to parameter 'seq_lengths' has DataType int16 not in list "
                 "of allowed values: int32, int64")),
]


@pytest.mark.parametrize("case", STATIC, ids=[c[0] for c in STATIC])
def test_static_shapes_and_build_errors_match_tf1(graph, case):
    _, build, expected = case
    if isinstance(expected, str):
        y = build()
        assert y.op.type == "ReverseSequence" and str(y.shape) == expected
    else:
        with pytest.raises(expected[0], match=re.escape(expected[1])):
            build()


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

# (name, seq_axis, batch_axis, fed lengths, TF 2.21's message) with the input's rank fed
RUN_ERRORS = [
    ("too_long", 2, 0, [1, 5], "seq_lens(1) > input.dims(2)"),
    ("too_long_seq0", 0, 2, [1, 5, 1, 1], "seq_lens(1) > input.dims(0)"),
    ("negative", 1, 0, [1, -1], "seq_lens(1) < 0"),
    ("first_bad_entry_wins", 2, 0, [5, -1], "seq_lens(0) > input.dims(2)"),
    ("negative_batch_axis", 0, -1, [1, 1, 1, 1], "Invalid batch_dim -1"),
    ("negative_seq_axis", -1, 0, [1, 1], "Invalid seq_dim -1"),
    ("batch_axis_checked_first", -1, -1, [1], "Invalid batch_dim -1"),
    ("lengths_matrix", 1, 0, [[1, 1]], "seq_lengths must be 1-dim, not 2"),
    ("lengths_scalar", 1, 0, 1, "seq_lengths must be 1-dim, not 0"),
    ("lengths_rank_before_axes", 9, 9, [[1]], "seq_lengths must be 1-dim, not 2"),
    ("same_axes", 1, 1, [1, 1, 1], "batch_dim == seq_dim == 1"),
    ("same_axes_before_rank", 5, 5, [1], "batch_dim == seq_dim == 5"),
    ("seq_axis_too_big", 5, 6, [1], "seq_dim must be < input rank ( 5 vs. 3)"),
    ("batch_axis_too_big", 0, 9, [1], "batch_dim must be < input rank ( 9 vs. 3)"),
    ("wrong_batch_size", 1, 0, [-1, 1, 1], "Length of seq_lengths != input.dims(0), (3 vs. 2)"),
]


@pytest.mark.parametrize("case", RUN_ERRORS, ids=[c[0] for c in RUN_ERRORS])
@pytest.mark.parametrize("tlen", [tf.int32, tf.int64])
def test_run_time_errors_match_tf1(sess, case, tlen):
    _, seq_axis, batch_axis, lengths, message = case
    px, pl = P(None), L(None, tlen)
    y = tf.reverse_sequence(px, pl, seq_axis, batch_axis)
    with pytest.raises(errors.InvalidArgumentError, match=re.escape(message)):
        sess.run(y, {px: X, pl: lengths})


@pytest.mark.parametrize("shape,seq_axis,batch_axis,lengths", [
    ((3, 4, 2), 1, 0, [4, 0, 2]),
    ((4, 2, 3), 0, 2, [3, 4, 1]),
    ((2, 5), 1, 0, [5, 3]),
])
def test_gradient_is_numerically_correct(graph, shape, seq_axis, batch_axis, lengths):
    x = tf.constant(np.random.randn(*shape))
    y = tf.reverse_sequence(x, tf.constant(lengths, tf.int64), seq_axis, batch_axis)
    assert compute_gradient_error(x, list(shape), y, list(shape)) < 1e-8


def test_gradient_is_a_reverse_sequence_and_none_for_lengths(sess):
    x = tf.placeholder(tf.float64, [3, 4])
    lengths = tf.placeholder(tf.int32, [3])
    y = tf.reverse_sequence(x, lengths, 1)
    gx, gl = tf.gradients(y * np.arange(12.0).reshape(3, 4), [x, lengths])
    assert gl is None
    assert gx.op.type == "ReverseSequence" and gx.op.get_attr("seq_dim") == 1
    got = sess.run(gx, {x: np.zeros((3, 4)), lengths: [2, 4, 0]})
    np.testing.assert_array_equal(got, _reference(np.arange(12.0).reshape(3, 4),
                                                  [2, 4, 0], 1, 0))


@pytest.mark.parametrize("time_major", [False, True])
def test_bidirectional_dynamic_rnn_reverses_with_the_op(graph, time_major):
    # TF 2.21 builds exactly these two ReverseSequence ops with these attrs
    x = tf.placeholder(tf.float32, [4, None, 3] if time_major else [None, 4, 3])
    cells = tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2)
    (_, out_bw), _ = tf.nn.bidirectional_dynamic_rnn(*cells, x, sequence_length=[1, 2, 3],
                                                     dtype=tf.float32, time_major=time_major)
    ops = [op for op in graph.get_operations() if op.type == "ReverseSequence"]
    assert [op.name for op in ops] == ["bidirectional_rnn/bw/ReverseSequence",
                                       "ReverseSequence"]
    want = (0, 1) if time_major else (1, 0)
    assert all((op.get_attr("seq_dim"), op.get_attr("batch_dim")) == want for op in ops)
    assert str(out_bw.shape) == ("(4, 3, 2)" if time_major else "(3, 4, 2)")
