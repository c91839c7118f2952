"""Speech features as TF computes them: AudioSpectrogram and Mfcc (tf.raw_ops; the front end
of tensorflow/examples/speech_commands).

AudioSpectrogram slides a periodic Hann window of `window_size` samples by `stride` over
each channel of a [samples, channels] float signal (1 + (samples - window_size) // stride
frames, none when the signal is shorter than a window), zero-pads each windowed frame to
the next power of two and gives |FFT|^2 (or |FFT| unless `magnitude_squared`) for the
1 + fft_length / 2 non-negative frequencies: [channels, frames, bins].

Mfcc takes such a squared-magnitude spectrogram: HTK-style triangular mel filters (mel =
1127 ln(1 + f / 700), `filterbank_channel_count` of them evenly spaced in mel between the
frequency limits, the DC bin excluded) applied to the magnitude (the square root of each
bin), the natural log of each filter output (floored at 1e-12), then the orthonormal-scaled
DCT-II, keeping `dct_coefficient_count` coefficients: [channels, frames, coefficients].
Both compute in float64 as TF does and return float32. Neither has a gradient (as in TF,
tf.gradients through them is a LookupError).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.registry import REQUIRED, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.math.quantize_ops import no_gradient

_FILTERBANK_FLOOR = 1e-12


def _next_power_of_two(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _frame_count(samples: int, window_size: int, stride: int) -> int:
    return 0 if samples < window_size else 1 + (samples - window_size) // stride


def _spectrogram_shape(op):
    shape = op.inputs[0].shape.with_rank(2)
    window, stride = op._get_attr("window_size"), op._get_attr("stride")
    if window <= 1:
        raise ValueError("window size must be > 1, got %d" % window)
    if stride <= 0:
        raise ValueError("stride must be strictly positive, got %d" % stride)
    samples = shape.as_list()[0] if shape.ndims is not None else None
    frames = None if samples is None else _frame_count(samples, window, stride)
    channels = shape.as_list()[1] if shape.ndims is not None else None
    return TensorShape([channels, frames, 1 + _next_power_of_two(window) // 2])


def _mfcc_shape(op):
    shape = op.inputs[0].shape.with_rank(3)
    op.inputs[1].shape.with_rank(0)
    dims = shape.as_list() if shape.ndims is not None else [None, None, None]
    return TensorShape([dims[0], dims[1], op._get_attr("dct_coefficient_count")])


register_op("AudioSpectrogram", inputs=["input: float"], outputs=["spectrogram: float"],
            attrs={"window_size": REQUIRED, "stride": REQUIRED, "magnitude_squared": False},
            shape=_spectrogram_shape)
register_op("Mfcc", inputs=["spectrogram: float", "sample_rate: int32"],
            outputs=["output: float"],
            attrs={"upper_frequency_limit": 4000.0, "lower_frequency_limit": 20.0,
                   "filterbank_channel_count": 40, "dct_coefficient_count": 13},
            shape=_mfcc_shape)
gradient("AudioSpectrogram")(no_gradient)  # TF registers none: LookupError
gradient("Mfcc")(no_gradient)


@kernel("AudioSpectrogram")
def _audio_spectrogram_kernel(ctx, signal):
    signal = np.asarray(signal, dtype=np.float64)
    window, stride = ctx.attrs["window_size"], ctx.attrs["stride"]
    if signal.ndim != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be 2-dimensional%s"
                                          % list(signal.shape))
    frames = _frame_count(signal.shape[0], window, stride)
    starts = np.arange(frames) * stride
    # [channels, frames, window]: each frame of each channel, Hann-windowed
    framed = signal.T[:, starts[:, None] + np.arange(window)]
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(window) / window)
    spectrum = np.fft.rfft(framed * hann, n=_next_power_of_two(window), axis=-1)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    out = power if ctx.attrs["magnitude_squared"] else np.sqrt(power)
    return out.astype(np.float32)


def _mel(freq):
    return 1127.0 * np.log1p(np.asarray(freq, dtype=np.float64) / 700.0)


def _mel_weights(bins: int, sample_rate: int, channels: int, lower: float,
                 upper: float) -> np.ndarray:
    """[bins, channels]: each bin's share of each triangular filter (TF's band mapper: a
    bin gives `w` to the filter whose centre is above it and 1 - w to the next one)."""
    mel_low = _mel(lower)
    centers = mel_low + (_mel(upper) - mel_low) / (channels + 1.0) * np.arange(1, channels + 2)
    hz_per_bin = 0.5 * sample_rate / (bins - 1)
    start, end = int(1.5 + lower / hz_per_bin), int(upper / hz_per_bin)
    weights = np.zeros((bins, channels))
    for i in range(start, min(end, bins - 1) + 1):
        melf = _mel(i * hz_per_bin)
        right = int(np.searchsorted(centers[:channels], melf, side="left")) - 1
        left_edge = centers[right] if right >= 0 else mel_low
        w = (centers[right + 1] - melf) / (centers[right + 1] - left_edge)
        if right >= 0:
            weights[i, right] += w
        if right + 1 < channels:
            weights[i, right + 1] += 1.0 - w
    return weights


def _dct_basis(length: int, count: int) -> np.ndarray:
    """[length, count]: sqrt(2 / length) cos(pi i (j + 0.5) / length)."""
    i, j = np.arange(count)[None, :], np.arange(length)[:, None]
    return np.sqrt(2.0 / length) * np.cos(np.pi / length * i * (j + 0.5))


@kernel("Mfcc")
def _mfcc_kernel(ctx, spectrogram, sample_rate):
    spectrogram = np.asarray(spectrogram, dtype=np.float64)
    a = ctx.attrs
    if spectrogram.ndim != 3:
        raise errors.InvalidArgumentError(None, ctx.op, "spectrogram must be 3-dimensional%s"
                                          % list(spectrogram.shape))
    if np.ndim(sample_rate) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Input sample_rate should be a scalar "
                                          "tensor, got %s instead." % list(np.shape(sample_rate)))
    rate, bins = int(sample_rate), spectrogram.shape[-1]
    channels, count = a["filterbank_channel_count"], a["dct_coefficient_count"]
    lower, upper = a["lower_frequency_limit"], a["upper_frequency_limit"]
    if bins < 2 or channels < 1 or rate <= 0 or lower < 0 or upper <= lower or \
            count < 1 or count > channels:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Mfcc initialization failed for channel count %d, sample rate %d "
            "and filterbank_channel_count %d" % (bins, rate, channels))
    filtered = np.sqrt(spectrogram) @ _mel_weights(bins, rate, channels, lower, upper)
    log_mel = np.log(np.maximum(filtered, _FILTERBANK_FLOOR))
    return (log_mel @ _dct_basis(channels, count)).astype(np.float32)
