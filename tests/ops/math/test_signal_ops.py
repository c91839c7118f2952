"""tf.signal framing, windows and STFT (ops/math/signal_ops.py) against NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_RNG = np.random.RandomState(0)
_SIG = _RNG.randn(2, 50).astype(np.float32)


def _np_frame(x, fl, fs, pad_end=False, pad_value=0.0):
    n = x.shape[-1]
    frames = -(-n // fs) if pad_end else max(0, 1 + (n - fl) // fs)
    if pad_end:
        x = np.concatenate([x, np.full(x.shape[:-1] + (max(0, (frames - 1) * fs + fl - n),),
                                       pad_value, x.dtype)], -1)
    return np.stack([x[..., i * fs:i * fs + fl] for i in range(frames)], axis=-2)


def test_frame(sess):
    f1 = tf.signal.frame(_SIG, 8, 3)
    f2 = tf.signal.frame(_SIG, 8, 3, pad_end=True, pad_value=7.0)
    f3 = tf.signal.frame(_SIG.T, 6, 4, axis=0)
    assert f1.shape.as_list() == [2, 15, 8] and f2.shape.as_list() == [2, 17, 8]
    assert f3.shape.as_list() == [12, 6, 2]
    v1, v2, v3 = sess.run([f1, f2, f3])
    np.testing.assert_array_equal(v1, _np_frame(_SIG, 8, 3))
    np.testing.assert_array_equal(v2, _np_frame(_SIG, 8, 3, True, 7.0))
    np.testing.assert_array_equal(v3, np.moveaxis(_np_frame(_SIG, 6, 4), [0, 1, 2], [2, 0, 1]))
    short = sess.run(tf.signal.frame(_SIG[:, :5], 8, 3))
    assert short.shape == (2, 0, 8)


def test_frame_unknown_length(sess):
    x = tf.placeholder(tf.float32, [2, None])
    f = tf.signal.frame(x, 8, 3, pad_end=True)
    assert f.shape.as_list()[0] == 2 and f.shape.as_list()[2] == 8
    np.testing.assert_array_equal(sess.run(f, {x: _SIG}), _np_frame(_SIG, 8, 3, True))
    g = tf.signal.frame(x, 8, 3)
    np.testing.assert_array_equal(sess.run(g, {x: _SIG[:, :20]}), _np_frame(_SIG[:, :20], 8, 3))
    with pytest.raises(ValueError):
        tf.signal.frame(tf.constant(1.0), 2, 1)


@pytest.mark.parametrize("n, periodic", [(8, True), (7, True), (8, False), (9, False), (1, True)])
def test_windows(sess, n, periodic):
    denom = n if (periodic and n % 2 == 0) else n - 1  # TF: periodic only for even lengths
    k = np.arange(n)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * k / denom) if n > 1 else np.ones(1)
    hamming = 0.54 - 0.46 * np.cos(2 * np.pi * k / denom) if n > 1 else np.ones(1)
    h, m = tf.signal.hann_window(n, periodic), tf.signal.hamming_window(n, periodic,
                                                                        dtype=tf.float64)
    assert h.dtype == tf.float32 and m.dtype == tf.float64 and h.shape.as_list() == [n]
    hv, mv = sess.run([h, m])
    np.testing.assert_allclose(hv, hann, atol=1e-6)
    np.testing.assert_allclose(mv, hamming, atol=1e-12)


def test_window_with_tensor_length(sess):
    n = tf.placeholder(tf.int32, [])
    w = tf.signal.hann_window(n)
    np.testing.assert_allclose(sess.run(w, {n: 6}), 0.5 - 0.5 * np.cos(2 * np.pi *
                                                                       np.arange(6) / 6),
                               atol=1e-6)
    np.testing.assert_array_equal(sess.run(w, {n: 1}), [1.0])
    with pytest.raises(ValueError, match="floating point"):
        tf.signal.hann_window(4, dtype=tf.int32)


def test_stft_and_inverse(sess):
    s = tf.signal.stft(_SIG, 16, 5)
    assert s.shape.as_list() == [2, 7, 9] and s.dtype == tf.complex64
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)
    ref = np.fft.rfft(_np_frame(_SIG.astype(np.float64), 16, 5) * window, 16)
    np.testing.assert_allclose(sess.run(s), ref, atol=1e-4)
    padded = tf.signal.stft(_SIG, 12, 4, fft_length=20, pad_end=True, window_fn=None)
    ref2 = np.fft.rfft(_np_frame(_SIG.astype(np.float64), 12, 4, True), 20)
    np.testing.assert_allclose(sess.run(padded), ref2, atol=1e-4)
    # overlap_and_add inverts frame when the frames do not overlap
    frames = tf.signal.frame(_SIG, 5, 5)
    np.testing.assert_array_equal(sess.run(tf.signal.overlap_and_add(frames, 5)), _SIG)
    ola = sess.run(tf.signal.overlap_and_add(tf.signal.frame(_SIG, 8, 3), 3))
    counts = np.zeros(50)
    for i in range(15):
        counts[i * 3:i * 3 + 8] += 1
    np.testing.assert_allclose(ola, _SIG * counts, atol=1e-5)
    # a rectangular analysis and synthesis window with hop = length reconstructs
    inv = tf.signal.inverse_stft(tf.signal.stft(_SIG, 10, 10, window_fn=None), 10, 10,
                                 window_fn=None)
    np.testing.assert_allclose(sess.run(inv), _SIG, atol=1e-5)


def test_stft_gradient():
    with tf.Graph().as_default():
        x0 = _RNG.randn(1, 20)
        x = tf.constant(x0)
        y = tf.abs(tf.signal.stft(x, 8, 4, window_fn=tf.signal.hann_window)) ** 2
        with tf.Session():
            assert compute_gradient_error(x, [1, 20], y, y.shape.as_list(),
                                          x_init_value=x0) < 1e-6


def test_frame_step_zero_fails_at_run_time(sess):
    framed = tf.signal.frame(tf.constant([1.0, 2.0, 3.0]), 2, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        sess.run(framed)


def _np_overlap_and_add(frames, step):
    n, length = frames.shape[-2:]
    out = np.zeros(frames.shape[:-2] + ((n - 1) * step + length,), frames.dtype)
    for i in range(n):
        out[..., i * step:i * step + length] += frames[..., i, :]
    return out


def test_frame_of_unknown_rank(sess):
    x = _RNG.randn(2, 3, 20).astype(np.float32)
    ph = tf.placeholder(tf.float32)
    last = tf.signal.frame(ph, 5, 3)
    middle = tf.signal.frame(ph, 2, 1, axis=1, pad_end=True, pad_value=-1.0)
    first = tf.signal.frame(ph, 2, 1, axis=-3)
    assert last.shape.ndims is None
    got = sess.run([last, middle, first], {ph: x})
    np.testing.assert_array_equal(got[0], _np_frame(x, 5, 3))
    want = np.moveaxis(_np_frame(np.moveaxis(x, 1, -1), 2, 1, True, -1.0), [-2, -1], [1, 2])
    np.testing.assert_array_equal(got[1], want)
    want = np.moveaxis(_np_frame(np.moveaxis(x, 0, -1), 2, 1), [-2, -1], [0, 1])
    np.testing.assert_array_equal(got[2], want)


def test_frame_gradient_is_dense():
    # TF's frame is a gather of reshaped subframes: the gradient of a signal is a dense
    # Tensor whatever axis is framed (not IndexedSlices)
    x0 = _RNG.randn(12)
    x = tf.constant(x0)
    framed = tf.signal.frame(x, 4, 3)
    grad = tf.gradients(tf.reduce_sum(framed * framed), x)[0]
    assert isinstance(grad, tf.Tensor) and grad.shape.as_list() == [12]
    with tf.Session() as s:
        counts = np.zeros(12)
        for i in range(3):
            counts[i * 3:i * 3 + 4] += 1
        np.testing.assert_allclose(s.run(grad), 2 * x0 * counts)
    assert compute_gradient_error(x, [12], framed, [3, 4], x_init_value=x0) < 1e-8
    y0 = _RNG.randn(7, 2)
    y = tf.constant(y0)
    framed = tf.signal.frame(y, 3, 2, axis=0, pad_end=True)
    assert compute_gradient_error(y, [7, 2], framed, framed.shape.as_list(),
                                  x_init_value=y0) < 1e-8


def test_overlap_and_add_unknown_rank_and_tensor_step(sess):
    x = _RNG.randn(2, 3, 4, 6).astype(np.float32)
    ph = tf.placeholder(tf.float32)
    step = tf.placeholder(tf.int32, [])
    by_tensor = tf.signal.overlap_and_add(ph, step)
    by_constant = tf.signal.overlap_and_add(tf.constant(x), tf.constant(2))
    assert by_tensor.shape.ndims is None
    assert by_constant.shape.as_list() == [2, 3, 12]
    for s in (1, 2, 6):
        np.testing.assert_allclose(sess.run(by_tensor, {ph: x, step: s}),
                                   _np_overlap_and_add(x, s), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(by_constant), _np_overlap_and_add(x, 2), atol=1e-6)
    known_rank = tf.signal.overlap_and_add(tf.placeholder_with_default(x, [2, 3, None, None]),
                                           step)
    assert known_rank.shape.as_list() == [2, 3, None]
    with pytest.raises(ValueError, match="frame_step must be an integer"):
        tf.signal.overlap_and_add(x, tf.constant(2.0))
    with pytest.raises(ValueError, match="rank 0"):
        tf.signal.overlap_and_add(x, tf.constant([2]))


def test_overlap_and_add_gradient():
    x0 = _RNG.randn(2, 4, 5)
    x = tf.constant(x0)
    y = tf.signal.overlap_and_add(x, 2)
    assert compute_gradient_error(x, [2, 4, 5], y, [2, 11], x_init_value=x0) < 1e-8
    empty = tf.signal.overlap_and_add(tf.zeros([0, 3]), 2)  # no frames: length - step
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(empty), [0.0])
