"""AudioSpectrogram and Mfcc (ops/io/audio_features.py) against values recorded from
TensorFlow 2.21 (tf.raw_ops) and an explicit DFT; found missing by running
tensorflow/examples/speech_commands/models.py with its MFCC front end."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

T = np.arange(24, dtype=np.float32)
SIGNAL = np.stack([np.sin(0.7 * T), 0.05 * T - 0.5], 1).astype(np.float32)

# tf.raw_ops.AudioSpectrogram(SIGNAL, window_size=6, stride=5, magnitude_squared=True), TF 2.21
TF_SPECTROGRAM = [
    [[3.712930202484131, 2.796952486038208, 0.8618581891059875, 0.03580610826611519,
      0.002890182426199317],
     [1.9856845140457153, 2.1391968727111816, 0.8953189849853516, 0.036043889820575714,
      0.0015456880209967494],
     [0.5073809623718262, 1.576242446899414, 0.9239584803581238, 0.03624764084815979,
      0.0003949290548916906],
     [0.005633139982819557, 1.3851709365844727, 0.9336784482002258, 0.036316677927970886,
      4.386882665130543e-06]],
    [[1.1024999618530273, 0.5307900309562683, 0.036249998956918716, 0.0004599577223416418, 0.0],
     [0.08999998867511749, 0.05307900160551071, 0.0081250024959445, 4.5995795517228544e-05, 0.0],
     [0.20250004529953003, 0.10615803301334381, 0.011250000447034836, 9.19907761272043e-05, 0.0],
     [1.440000057220459, 0.690027117729187, 0.04562500864267349, 0.0005979426205158234, 0.0]]]

# Mfcc(AudioSpectrogram(sin(0.3 t) + 0.5 cos(1.1 t), 200 samples, window 64, stride 64,
# squared), sample_rate=8000, filterbank_channel_count=8, dct_coefficient_count=4,
# lower_frequency_limit=100, upper_frequency_limit=3500), TF 2.21
TF_MFCC = [[[0.6095475554466248, 5.744621753692627, -2.554042339324951, 3.7860522270202637],
            [0.5746131539344788, 5.788471221923828, -2.597132921218872, 3.8095738887786865],
            [0.6281338930130005, 5.730312347412109, -2.5426154136657715, 3.773622512817383]]]


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_spectrogram_matches_tf_values_and_static_shape():
    s = tf.raw_ops.AudioSpectrogram(input=SIGNAL, window_size=6, stride=5,
                                    magnitude_squared=True)
    assert s.shape.as_list() == [2, 4, 5]  # 1 + (24 - 6) // 5 frames, 1 + 8 / 2 bins
    out = _run(s)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, TF_SPECTROGRAM, rtol=1e-5, atol=1e-9)


def test_spectrogram_magnitude_is_the_hann_windowed_dft_of_each_frame():
    out = _run(tf.raw_ops.AudioSpectrogram(input=SIGNAL, window_size=8, stride=8))
    n = np.arange(8)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / 8)
    for c in range(2):
        for f in range(3):
            frame = SIGNAL[8 * f:8 * f + 8, c] * hann
            dft = [abs(np.sum(frame * np.exp(-2j * np.pi * k * n / 8))) for k in range(5)]
            np.testing.assert_allclose(out[c, f], dft, rtol=1e-5, atol=1e-6)


def test_signal_shorter_than_a_window_has_no_frames():
    s = tf.raw_ops.AudioSpectrogram(input=SIGNAL, window_size=100, stride=10)
    assert s.shape.as_list() == [2, 0, 65]
    assert _run(s).shape == (2, 0, 65)


def test_mfcc_matches_tf_values():
    t = np.arange(200, dtype=np.float32)
    wave = (np.sin(0.3 * t) + 0.5 * np.cos(1.1 * t))[:, None].astype(np.float32)
    spec = tf.raw_ops.AudioSpectrogram(input=wave, window_size=64, stride=64,
                                       magnitude_squared=True)
    m = tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=8000, filterbank_channel_count=8,
                        dct_coefficient_count=4, lower_frequency_limit=100.0,
                        upper_frequency_limit=3500.0)
    assert m.shape.as_list() == [1, 3, 4]
    np.testing.assert_allclose(_run(m), TF_MFCC, rtol=1e-5, atol=1e-5)


def test_bad_arguments_raise_tf_errors():
    with pytest.raises(ValueError, match="window size must be > 1, got 1"):
        tf.raw_ops.AudioSpectrogram(input=SIGNAL, window_size=1, stride=1)
    with pytest.raises(ValueError, match="stride must be strictly positive, got 0"):
        tf.raw_ops.AudioSpectrogram(input=SIGNAL, window_size=4, stride=0)
    with pytest.raises(ValueError):
        tf.raw_ops.Mfcc(spectrogram=tf.zeros([3, 4]), sample_rate=8000)
    x = tf.placeholder(tf.float32)
    s = tf.raw_ops.AudioSpectrogram(input=x, window_size=4, stride=2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="input must be 2-dimensional"):
            sess.run(s, {x: np.zeros(5, np.float32)})


def test_no_gradient_as_in_tf():
    # TF registers none for either op: tf.gradients, and so the numeric check, raise
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, SIGNAL.shape)
        s = tf.raw_ops.AudioSpectrogram(input=x, window_size=6, stride=5)
        m = tf.raw_ops.Mfcc(spectrogram=s, sample_rate=8000, filterbank_channel_count=8,
                            dct_coefficient_count=4)
        for y, op_type in ((s, "AudioSpectrogram"), (m, "Mfcc")):
            message = r"No gradient defined for operation .*\(op type: %s\)" % op_type
            with pytest.raises(LookupError, match=message):
                tf.gradients(tf.reduce_sum(y), x)
            with pytest.raises(LookupError, match=message):
                compute_gradient_error(x, list(SIGNAL.shape), y, y.shape.as_list(),
                                       x_init_value=SIGNAL)


def test_window_size_and_stride_are_required_attrs():
    # TF's op def gives them no default: a missing one is a TypeError at build time
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="window_size"):
            tf.raw_ops.AudioSpectrogram(input=tf.zeros([10, 1]), stride=2)
        with pytest.raises(TypeError, match="stride"):
            tf.raw_ops.AudioSpectrogram(input=tf.zeros([10, 1]), window_size=4)
