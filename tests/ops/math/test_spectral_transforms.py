"""tf.signal DCTs, MDCTs, mel/MFCC helpers (ops/math/spectral_transforms.py), the Kaiser,
KBD and Vorbis windows, inverse_stft_window_fn (ops/math/signal_ops.py) and
fftshift/ifftshift (ops/math/spectral_fft_ops.py) against NumPy definitions."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_RNG = np.random.RandomState(0)
_X8 = _RNG.randn(2, 8).astype(np.float32)
_X7 = _RNG.randn(3, 7)


def _np_dct(x, dct_type, norm=None):
    """scipy.fftpack's DCT of the last axis, by the definition sums."""
    x = np.asarray(x, np.float64)
    n = x.shape[-1]
    j = np.arange(n)[:, None]  # input index
    k = np.arange(n)[None, :]  # output index
    if dct_type == 1:
        basis = 2 * np.cos(np.pi * j * k / (n - 1))
        basis[0, :] = 1
        basis[-1, :] = (-1.0) ** np.arange(n)
        return x @ basis
    if dct_type == 2:
        out = x @ (2 * np.cos(np.pi * k * (2 * j + 1) / (2 * n)))
        if norm == "ortho":
            out *= np.where(np.arange(n) == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))
        return out
    if dct_type == 3:
        basis = 2 * np.cos(np.pi * j * (2 * k + 1) / (2 * n))
        if norm == "ortho":
            basis *= np.sqrt(1 / (2 * n))
            basis[0, :] = 1 / np.sqrt(n)
        else:
            basis[0, :] = 1
        return x @ basis
    out = x @ (2 * np.cos(np.pi * (2 * j + 1) * (2 * k + 1) / (4 * n)))
    return out * np.sqrt(1 / (2 * n)) if norm == "ortho" else out


@pytest.mark.parametrize("dct_type, norm", [(1, None), (2, None), (2, "ortho"), (3, None),
                                            (3, "ortho"), (4, None), (4, "ortho")])
def test_dct_matches_definition(sess, dct_type, norm):
    d32 = tf.signal.dct(_X8, type=dct_type, norm=norm)
    d64 = tf.spectral.dct(_X7, type=dct_type, norm=norm)
    assert d32.dtype == tf.float32 and d32.shape.as_list() == [2, 8]
    assert d64.dtype == tf.float64 and d64.shape.as_list() == [3, 7]
    v32, v64 = sess.run([d32, d64])
    np.testing.assert_allclose(v32, _np_dct(_X8, dct_type, norm), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v64, _np_dct(_X7, dct_type, norm), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("dct_type", [1, 2, 3, 4])
def test_idct_inverts_dct(sess, dct_type):
    # idct is the DCT of the inverse type: unnormalised it gives back 2N x (2(N-1) x for
    # type 1); orthonormal it gives back x.
    back = sess.run(tf.signal.idct(tf.signal.dct(_X7, type=dct_type), type=dct_type))
    scale = 2 * (7 - 1) if dct_type == 1 else 2 * 7
    np.testing.assert_allclose(back, _X7 * scale, atol=1e-10)
    inverse = {1: 1, 2: 3, 3: 2, 4: 4}[dct_type]
    np.testing.assert_allclose(sess.run(tf.signal.idct(_X7, type=dct_type)),
                               _np_dct(_X7, inverse), atol=1e-10)
    if dct_type != 1:
        ortho = tf.signal.idct(tf.signal.dct(_X7, type=dct_type, norm="ortho"),
                               type=dct_type, norm="ortho")
        np.testing.assert_allclose(sess.run(ortho), _X7, atol=1e-12)


def test_dct_n_crops_or_pads(sess):
    short = tf.signal.dct(_X8, n=5, norm="ortho")
    long = tf.signal.dct(_X8, type=3, n=11)
    assert short.shape.as_list() == [2, 5] and long.shape.as_list() == [2, 11]
    padded = np.concatenate([_X8, np.zeros((2, 3), np.float32)], -1)
    vs, vl = sess.run([short, long])
    np.testing.assert_allclose(vs, _np_dct(_X8[:, :5], 2, "ortho"), atol=1e-5)
    np.testing.assert_allclose(vl, _np_dct(padded, 3), atol=1e-4)
    # a length known only at run time
    x = tf.placeholder(tf.float32, [2, None])
    dynamic = tf.signal.dct(x, n=11, type=4)
    assert dynamic.shape.as_list() == [2, 11]
    np.testing.assert_allclose(sess.run(dynamic, {x: _X8}), _np_dct(padded, 4), atol=1e-4)
    np.testing.assert_allclose(sess.run(tf.signal.dct(x, type=1), {x: _X8}),
                               _np_dct(_X8, 1), atol=1e-4)


def test_dct_hand_values(sess):
    # DCT-II of [1, 1]: [2 * 2, 0]; DCT-I of [1, 2, 3]: [1 + 3 + 4, 1 - 3, 1 + 3 - 4]
    np.testing.assert_allclose(sess.run(tf.signal.dct([1.0, 1.0])), [4.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(sess.run(tf.signal.dct([1.0, 2.0, 3.0], type=1)),
                               [8.0, -2.0, 0.0], atol=1e-6)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(axis=0), NotImplementedError, "axis must be -1. Got: 0"),
    (dict(axis=0, type=7), NotImplementedError, "axis must be -1"),
    (dict(n=0), ValueError, "n should be a positive integer or None"),
    (dict(type=5), ValueError, r"Types I, II, III and IV \(I\)DCT are supported."),
    (dict(norm="foo"), ValueError, "Unknown normalization. Expected None or 'ortho', got: foo"),
    (dict(type=1, norm="ortho"), ValueError, "Normalization is not supported for the Type-I"),
])
def test_dct_argument_errors(graph, kwargs, error, message):
    for fn in (tf.signal.dct, tf.signal.idct):
        with pytest.raises(error, match=message):
            fn(_X8, **kwargs)


def test_dct_input_errors(graph):
    with pytest.raises(ValueError, match="Type-I DCT requires the dimension to be greater"):
        tf.signal.dct(np.ones((2, 1), np.float32), type=1)
    with pytest.raises(TypeError, match="Expected int32, but got 0.0 of type 'float'"):
        tf.signal.dct(np.ones((2, 4), np.int32))


@pytest.mark.parametrize("fn", [
    lambda x: tf.signal.dct(x, type=1),
    lambda x: tf.signal.dct(x, type=2, norm="ortho"),
    lambda x: tf.signal.dct(x, type=3),
    lambda x: tf.signal.dct(x, type=4, n=6, norm="ortho"),
    lambda x: tf.signal.idct(x, type=2, n=3),
    lambda x: tf.signal.mfccs_from_log_mel_spectrograms(x),
    lambda x: tf.signal.mdct(tf.reshape(x, [1, 10]), 4, pad_end=True),
    lambda x: tf.signal.inverse_mdct(tf.reshape(x, [1, 5, 2]), norm="ortho"),
    lambda x: tf.signal.fftshift(x),
    lambda x: tf.signal.ifftshift(x, axes=-1),
])
def test_gradients(fn):
    with tf.Graph().as_default():
        x0 = _RNG.randn(2, 5)
        x = tf.constant(x0)
        y = fn(x)
        with tf.Session():
            assert compute_gradient_error(x, [2, 5], y, y.shape.as_list(),
                                          x_init_value=x0) < 1e-8


def _np_vorbis(n):
    return np.sin(np.pi / 2 * np.sin(np.pi * (np.arange(n) + 0.5) / n) ** 2)


def _np_kbd(n, beta):
    running = np.cumsum(np.kaiser(n // 2 + 1, beta))
    half = np.sqrt(running[:-1] / running[-1])
    return np.concatenate([half, half[::-1]])


def _np_mdct(x, frame_length, window):
    half = frame_length // 2
    frames = np.stack([x[..., i * half:i * half + frame_length]
                       for i in range((x.shape[-1] - frame_length) // half + 1)], -2)
    n = np.arange(frame_length)[:, None]
    k = np.arange(half)[None, :]
    basis = 2 * np.cos(np.pi / half * (n + 0.5 + half / 2) * (k + 0.5))
    return (frames * window) @ basis


@pytest.mark.parametrize("window", ["vorbis", "kbd", None])
def test_mdct_matches_definition(sess, window):
    x = _RNG.randn(2, 40)
    fn = {"vorbis": tf.signal.vorbis_window, "kbd": tf.signal.kaiser_bessel_derived_window,
          None: None}[window]
    w = {"vorbis": _np_vorbis(8), "kbd": _np_kbd(8, 12.0), None: np.full(8, 0.5 ** 0.5)}[window]
    plain = tf.signal.mdct(x, 8, window_fn=fn)
    ortho = tf.signal.mdct(x.astype(np.float32), 8, window_fn=fn, norm="ortho")
    assert plain.shape.as_list() == [2, 9, 4] and plain.dtype == tf.float64
    assert ortho.dtype == tf.float32
    vp, vo = sess.run([plain, ortho])
    np.testing.assert_allclose(vp, _np_mdct(x, 8, w), atol=1e-10)
    np.testing.assert_allclose(vo, _np_mdct(x, 8, w) / np.sqrt(8), atol=1e-5)
    padded = tf.signal.mdct(x, 8, window_fn=fn, pad_end=True)
    assert padded.shape.as_list() == [2, 10, 4]
    ref = _np_mdct(np.concatenate([x, np.zeros((2, 4))], -1), 8, w)
    np.testing.assert_allclose(sess.run(padded), ref, atol=1e-10)


@pytest.mark.parametrize("window", ["vorbis", "kbd", None])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_mdct_round_trip(sess, window, norm):
    fn = {"vorbis": tf.signal.vorbis_window, "kbd": tf.signal.kaiser_bessel_derived_window,
          None: None}[window]
    x = _RNG.randn(3, 48)
    padded = np.pad(x, [[0, 0], [6, 6]])
    coefficients = tf.signal.mdct(padded, 12, window_fn=fn, norm=norm)
    back = tf.signal.inverse_mdct(coefficients, window_fn=fn, norm=norm)
    assert back.shape.as_list() == [3, 60]
    np.testing.assert_allclose(sess.run(back)[:, 6:-6], x, atol=1e-10)


def test_mdct_errors(graph):
    x = np.ones([2, 40], np.float32)
    with pytest.raises(ValueError, match="The frame length must be a multiple of 4."):
        tf.signal.mdct(x, 10)
    with pytest.raises(ValueError, match=r"Shape \(\) must have rank at least 1"):
        tf.signal.mdct(np.float32(1), 8)
    with pytest.raises(ValueError, match=r"Shape \(1,\) must have rank 0"):
        tf.signal.mdct(x, [8])
    with pytest.raises(ValueError, match="Unknown normalization"):
        tf.signal.mdct(x, 8, norm="x")
    with pytest.raises(ValueError, match=r"Shape \(4,\) must have rank at least 2"):
        tf.signal.inverse_mdct(np.ones([4], np.float32))
    with pytest.raises(ValueError, match=r"Cannot convert unknown Dimension \? to a Tensor"):
        tf.signal.inverse_mdct(tf.placeholder(tf.float32, [2, None]))


def _np_mel_matrix(num_mel, num_bins, rate, low, high):
    """HTK triangles over mel = 1127 ln(1 + f / 700), the DC row zeroed."""
    mel = lambda f: 1127.0 * np.log(1.0 + f / 700.0)  # noqa: E731
    bins = mel(np.linspace(0, rate / 2, num_bins))[:, None]
    edges = np.linspace(mel(low), mel(high), num_mel + 2)
    lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    weights = np.maximum(0, np.minimum((bins - lower) / (center - lower),
                                       (upper - bins) / (upper - center)))
    weights[0] = 0
    return weights


def test_linear_to_mel_weight_matrix(sess):
    default = tf.signal.linear_to_mel_weight_matrix()
    wide = tf.signal.linear_to_mel_weight_matrix(10, 33, 16000, 20.0, 8000.0, tf.float64)
    assert default.shape.as_list() == [129, 20] and default.dtype == tf.float32
    assert wide.shape.as_list() == [33, 10] and wide.dtype == tf.float64
    named = tf.signal.linear_to_mel_weight_matrix(4, 9, name="melw")
    assert named.name == "melw:0"
    vd, vw = sess.run([default, wide])
    np.testing.assert_allclose(vd, _np_mel_matrix(20, 129, 8000, 125.0, 3800.0), atol=1e-5)
    np.testing.assert_allclose(vw, _np_mel_matrix(10, 33, 16000, 20.0, 8000.0), atol=1e-12)
    # Between the first and last band centres the triangles of neighbouring bands add up
    # to 1 (they are linear in mel), and no bin is in more than 2 bands.
    mel = 1127.0 * np.log(1.0 + np.linspace(0, 4000.0, 129) / 700.0)
    edges = np.linspace(*(1127.0 * np.log(1.0 + np.array([125.0, 3800.0]) / 700.0)), 22)
    inside = (mel >= edges[1]) & (mel <= edges[-2])
    np.testing.assert_allclose(vd[inside].sum(1), 1.0, atol=1e-5)
    assert ((vd > 0).sum(1) <= 2).all() and not vd[0].any()
    # a sample rate known only at run time
    rate = tf.placeholder(tf.float32, [])
    dynamic = tf.signal.linear_to_mel_weight_matrix(4, 9, rate, 100.0, 3000.0)
    np.testing.assert_allclose(sess.run(dynamic, {rate: 8000.0}),
                               _np_mel_matrix(4, 9, 8000.0, 100.0, 3000.0), atol=1e-5)


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_mel_bins=0), "num_mel_bins must be positive. Got: 0"),
    (dict(lower_edge_hertz=-1.0), "lower_edge_hertz must be non-negative. Got: -1.0"),
    (dict(lower_edge_hertz=3800.0), "lower_edge_hertz 3800.0 >= upper_edge_hertz 3800.0"),
    (dict(sample_rate=0), "sample_rate must be positive. Got: 0"),
    (dict(upper_edge_hertz=4100.0), r"upper_edge_hertz must not be larger than the Nyquist "
     r"frequency \(sample_rate / 2\). Got 4100.0 for sample_rate: 8000"),
    (dict(sample_rate=tf.constant(7000.0)), "Got 3800.0 for sample_rate: 7000.0"),
    (dict(dtype=tf.int32), "dtype must be a floating point type. Got: <dtype: 'int32'>"),
])
def test_linear_to_mel_weight_matrix_errors(kwargs, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            tf.signal.linear_to_mel_weight_matrix(**kwargs)


def test_linear_to_mel_weight_matrix_gradient():
    with tf.Graph().as_default():
        rate = tf.constant(8000.0, tf.float64)
        y = tf.signal.linear_to_mel_weight_matrix(4, 9, rate, 100.0, 3000.0, tf.float64)
        with tf.Session():
            assert compute_gradient_error(rate, [], y, [9, 4],
                                          x_init_value=np.array(8000.0)) < 1e-8


def test_mfccs_from_log_mel_spectrograms(sess):
    mfcc = tf.signal.mfccs_from_log_mel_spectrograms(_X7)
    assert mfcc.shape.as_list() == [3, 7] and mfcc.dtype == tf.float64
    n = np.arange(7)
    basis = np.sqrt(2 / 7) * np.cos(np.pi * n[None, :] * (2 * n[:, None] + 1) / 14)
    np.testing.assert_allclose(sess.run(mfcc), _X7 @ basis, atol=1e-12)
    with pytest.raises(ValueError, match="num_mel_bins must be positive"):
        tf.signal.mfccs_from_log_mel_spectrograms(np.zeros([2, 0], np.float32))


def test_fftshift(sess):
    a = np.arange(30.0).reshape(5, 6)
    cases = [(None, None), (0, 0), (-1, -1), ((0, -1), (0, -1)), ([1], [1])]
    for axes, np_axes in cases:
        np.testing.assert_array_equal(sess.run(tf.signal.fftshift(a, axes=axes)),
                                      np.fft.fftshift(a, axes=np_axes))
        np.testing.assert_array_equal(sess.run(tf.signal.ifftshift(a, axes=axes)),
                                      np.fft.ifftshift(a, axes=np_axes))
    x = tf.placeholder(tf.float64, [None, None])
    np.testing.assert_array_equal(sess.run(tf.signal.ifftshift(x, axes=(0, 1)), {x: a}),
                                  np.fft.ifftshift(a))
    np.testing.assert_array_equal(
        sess.run(tf.signal.fftshift([0., 1., 2., 3., 4., -5., -4., -3., -2., -1.])),
        [-5., -4., -3., -2., -1., 0., 1., 2., 3., 4.])
    with pytest.raises(ValueError, match="out of bounds"):
        tf.signal.fftshift(a, axes=2)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_kaiser_and_derived_windows(sess, n):
    kaiser = tf.signal.kaiser_window(n)
    kaiser64 = tf.signal.kaiser_window(n, beta=3.5, dtype=tf.float64)
    kbd = tf.signal.kaiser_bessel_derived_window(n, beta=4.0, dtype=tf.float64)
    vorbis = tf.signal.vorbis_window(n)
    assert kaiser.shape.as_list() == [n] and kaiser.dtype == tf.float32
    assert kbd.shape.as_list() == [2 * (n // 2)] and vorbis.shape.as_list() == [n]
    vk, vk64, vkbd, vv = sess.run([kaiser, kaiser64, kbd, vorbis])
    np.testing.assert_allclose(vk, np.kaiser(n, 12.0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(vk64, np.kaiser(n, 3.5), rtol=1e-12)
    np.testing.assert_allclose(vkbd, _np_kbd(n, 4.0), rtol=1e-12)
    np.testing.assert_allclose(vv, _np_vorbis(n), atol=1e-6)
    if n % 2 == 0:  # power complementary, as the MDCT needs
        np.testing.assert_allclose(vkbd[:n // 2] ** 2 + vkbd[n // 2:] ** 2, 1.0, atol=1e-12)
        np.testing.assert_allclose(vv[:n // 2] ** 2 + vv[n // 2:] ** 2, 1.0, atol=1e-6)


def test_window_options(sess):
    half = tf.signal.kaiser_window(6, dtype=tf.float16)
    assert half.dtype == tf.float16
    np.testing.assert_allclose(sess.run(half), np.kaiser(6, 12.0), atol=2e-3)
    np.testing.assert_allclose(sess.run(tf.signal.kaiser_window(16, beta=100.0)),
                               np.kaiser(16, 100.0), rtol=1e-4, atol=1e-30)
    length = tf.placeholder(tf.int32, [])
    windows = [tf.signal.kaiser_window(length), tf.signal.vorbis_window(length),
               tf.signal.kaiser_bessel_derived_window(length)]
    vk, vv, vkbd = sess.run(windows, {length: 6})
    np.testing.assert_allclose(vk, np.kaiser(6, 12.0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(vv, _np_vorbis(6), atol=1e-6)
    np.testing.assert_allclose(vkbd, _np_kbd(6, 12.0), rtol=1e-5)
    for fn in (tf.signal.kaiser_window, tf.signal.kaiser_bessel_derived_window,
               tf.signal.vorbis_window):
        with pytest.raises(ValueError, match="dtype must be a floating point type. Found"):
            fn(6, dtype=tf.int32)
        with pytest.raises(ValueError, match=r"Shape \(1,\) must have rank 0"):
            fn([6])
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0"):
        tf.signal.kaiser_window(0)


@pytest.mark.parametrize("fn", [tf.signal.kaiser_window,
                                tf.signal.kaiser_bessel_derived_window])
def test_kaiser_beta_gradient(fn):
    with tf.Graph().as_default():
        beta = tf.constant([3.0], tf.float64)
        y = fn(8, beta=beta, dtype=tf.float64)
        with tf.Session():
            assert compute_gradient_error(beta, [1], y, [8],
                                          x_init_value=np.array([3.0])) < 1e-6


def _np_inverse_stft_window(window, frame_step):
    """The forward window over the sum of the squared windows of all overlapping frames."""
    n = len(window)
    denom = np.zeros(n)
    for shift in range(-(n // frame_step) * frame_step, n, frame_step):
        lo, hi = max(0, shift), min(n, shift + n)
        denom[lo:hi] += window[lo - shift:hi - shift] ** 2
    return np.where(denom == 0, 0.0, window / np.where(denom == 0, 1.0, denom))


@pytest.mark.parametrize("step, length", [(4, 16), (3, 8), (8, 8), (5, 12)])
def test_inverse_stft_window_fn(sess, step, length):
    window = tf.signal.inverse_stft_window_fn(step)(length, dtype=tf.float64)
    assert window.shape.as_list() == [length] and window.dtype == tf.float64
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / length)
    np.testing.assert_allclose(sess.run(window), _np_inverse_stft_window(hann, step),
                               atol=1e-12)
    vorbis = tf.signal.inverse_stft_window_fn(step, forward_window_fn=tf.signal.vorbis_window)
    np.testing.assert_allclose(sess.run(vorbis(length, tf.float64)),
                               _np_inverse_stft_window(_np_vorbis(length), step), atol=1e-12)


def test_inverse_stft_window_fn_reconstructs(sess):
    x = _RNG.randn(2, 40)
    stft = tf.signal.stft(x, 16, 4)
    back = tf.signal.inverse_stft(stft, 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
    # samples covered by a full set of overlapping frames come back exactly
    np.testing.assert_allclose(sess.run(back)[:, 12:28], x[:, 12:28], atol=1e-12)
    with pytest.raises(ValueError, match=r"Shape \(1,\) must have rank 0"):
        tf.signal.inverse_stft_window_fn([4])(16, dtype=tf.float32)
