"""The discrete cosine transforms and what `tf.signal` builds on them: dct and idct (types
1-4), mdct and inverse_mdct, linear_to_mel_weight_matrix and
mfccs_from_log_mel_spectrograms. All are compositions of the FFT ops and elementwise and
array ops, so their gradients come from those ops.

The DCTs go through a real FFT, as TF computes them (N = the transform length, k = 0..N-1):
  type 1  Re(rfft([x, x[N-2], ..., x[1]]))                 (a length 2N - 2 FFT)
  type 2  Re(rfft(x, 2N)[k] * 2 exp(-i pi k / 2N))        (Makhoul)
  type 3  irfft(N x[k] * 2 exp(i pi k / 2N), 2N)[:N]      (type 2 inverted, times 2N)
  type 4  the odd terms of the type-2 DCT of x zero-padded to 2N
"""
from __future__ import annotations

import math
from typing import Callable, Optional, Union

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops, array_pad_ops
from tensorweave.ops.math import (
    complex_ops, math_binary, math_ops, math_unary, signal_ops, spectral_fft_ops)

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _static_last_dim(x) -> Optional[int]:
    if isinstance(x, Tensor):
        return None if x.shape.ndims is None else x.shape.dims[-1].value
    return np.shape(x)[-1]


def _validate_dct_arguments(x, dct_type, n, axis, norm) -> None:
    """TF's checks, in TF's order (so the same error wins when several apply)."""
    if axis != -1:
        raise NotImplementedError("axis must be -1. Got: %s" % axis)
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        last = _static_last_dim(x)
        if last is not None and last < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError("Unknown normalization. Expected None or 'ortho', got: %s" % norm)


def _last_dim(x: Tensor) -> Union[int, Tensor]:
    """The size of x's last axis: an int when static, else an int32 scalar Tensor."""
    static = None if x.shape.ndims is None else x.shape.dims[-1].value
    return static or array_ops.shape(x)[-1]


def _as_vector(length: Union[int, Tensor]):
    return [length] if isinstance(length, int) else array_ops.reshape(length, [1])


def _fit_length(x: Tensor, n: Union[int, Tensor]) -> Tensor:
    """x's last axis cropped or zero-padded to n."""
    length = _last_dim(x)
    rank = x.shape.ndims
    if isinstance(length, int) and isinstance(n, int):
        if n <= length:
            return x[..., :n]
        return array_pad_ops.pad(x, signal_ops._pad_spec(rank, rank - 1, n - length))
    extra = math_binary.maximum(n - length, 0)
    fitted = array_pad_ops.pad(x[..., :n], signal_ops._pad_spec(rank, rank - 1, extra))
    fitted.set_shape(x.shape.as_list()[:-1] + [n if isinstance(n, int) else None])
    return fitted


def _first_and_rest(first: Tensor, rest: Tensor, length) -> Tensor:
    """The vector [first, rest, rest, ..., rest] of `length` elements."""
    tail = array_fill_ops.fill(_as_vector(length - 1), rest)
    return array_join_ops.concat([array_ops.reshape(first, [1]), tail], 0)


def _dct(x: Tensor, dct_type: int, n, norm: Optional[str]) -> Tensor:
    """The DCT of x's last axis, arguments already checked; n may be a Tensor."""
    # TF makes this zero first, so a non-float input fails here with TF's TypeError.
    convert_to_tensor(0.0, dtype=x.dtype)
    if n is not None:
        x = _fit_length(x, n)
    length = _last_dim(x)
    length_f = math_ops.cast(length, x.dtype)
    if dct_type == 1:
        mirrored = array_join_ops.concat([x, x[..., -2:0:-1]], -1)
        return complex_ops.real(spectral_fft_ops.rfft(mirrored))
    if dct_type == 4:
        dct4 = _dct(x, 2, 2 * length, None)[..., 1::2]
        if norm == "ortho":
            dct4 = dct4 * (math.sqrt(0.5) * math_unary.rsqrt(length_f))
        return dct4
    # The twiddle factors 2 exp(-i pi k / 2N) (type 2) or 2 exp(i pi k / 2N) (type 3).
    angle = math_ops.range(length_f) * math.pi * 0.5 / length_f
    if dct_type == 2:
        angle = -angle
    twiddle = 2.0 * math_unary.exp(complex_ops.complex(array_fill_ops.zeros_like(angle),
                                                       angle))
    fft_length = _as_vector(2 * length)
    if dct_type == 2:
        spectrum = spectral_fft_ops.rfft(x, fft_length)[..., :length]
        dct2 = complex_ops.real(spectrum * twiddle)
        if norm == "ortho":
            first = 0.5 * math_unary.rsqrt(length_f)
            dct2 = dct2 * _first_and_rest(first, first * math.sqrt(2.0), length)
        return dct2
    if norm == "ortho":
        first = math_unary.sqrt(length_f)
        x = x * _first_and_rest(first, first * math.sqrt(0.5), length)
    else:
        x = x * length_f
    spectrum = twiddle * complex_ops.complex(x, array_fill_ops.zeros_like(x))
    return spectral_fft_ops.irfft(spectrum, fft_length)[..., :length]


@tf_export("signal.dct", "spectral.dct")
def dct(input, type: int = 2, n: Optional[int] = None, axis: int = -1,  # noqa: A002
        norm: Optional[str] = None, name: Optional[str] = None) -> Tensor:
    """The 1-D discrete cosine transform (types I-IV, as scipy.fftpack.dct) of the last
    axis of `input`.

    Args:
      input: a float32/float64 Tensor [..., samples].
      type: the DCT type, 1, 2, 3 or 4.
      n: the transform length: the input is cropped or zero-padded to it (default: the
        number of samples).
      axis: must be -1.
      norm: None, or "ortho" for the orthonormal transform (not for type 1).
      name: name scope.

    Returns:
      A Tensor [..., n] of the input's dtype.

    Raises:
      NotImplementedError: `axis` is not -1.
      ValueError: `type` is not 1-4, `n` is not positive, `norm` is not None or
        "ortho", `norm` is "ortho" for type 1, or type 1 has fewer than 2 samples.
    """
    _validate_dct_arguments(input, type, n, axis, norm)
    with name_scope(name, "dct", [input]):
        return _dct(convert_to_tensor(input), type, n, norm)


@tf_export("signal.idct", "spectral.idct")
def idct(input, type: int = 2, n: Optional[int] = None, axis: int = -1,  # noqa: A002
         norm: Optional[str] = None, name: Optional[str] = None) -> Tensor:
    """The inverse DCT of the last axis of `input`: the DCT of type 1, 3, 2, 4 for `type`
    1, 2, 3, 4. Unnormalised, idct(dct(x)) is x * 2N (type 1: x * (2N - 2)); with
    norm="ortho" it is x.

    Args:
      input: a float32/float64 Tensor [..., samples].
      type: the type of the DCT to invert, 1, 2, 3 or 4.
      n: the transform length (the input is cropped or zero-padded to it).
      axis: must be -1.
      norm: None, or "ortho" for the orthonormal transform (not for type 1).
      name: name scope.

    Returns:
      A Tensor [..., n] of the input's dtype.

    Raises:
      NotImplementedError: `axis` is not -1.
      ValueError: as `dct`.
    """
    _validate_dct_arguments(input, type, n, axis, norm)
    with name_scope(name, "dct", [input]):
        return _dct(convert_to_tensor(input), {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm)


@tf_export("signal.mdct")
def mdct(signals, frame_length, window_fn: Optional[Callable] = signal_ops.vorbis_window,
         pad_end: bool = False, norm: Optional[str] = None,
         name: Optional[str] = None) -> Tensor:
    """The modified discrete cosine transform of frames of `frame_length` samples taken
    every frame_length / 2 samples along the last axis of `signals`.

    Args:
      signals: a float32/float64 Tensor [..., samples].
      frame_length: an int (or int32 scalar) divisible by 4, the window length.
      window_fn: called as window_fn(frame_length, dtype=...) to window each frame; None
        for a rectangular window scaled by 1/sqrt(2). For perfect reconstruction by
        `inverse_mdct` use a window with w[n]^2 + w[n + N/2]^2 = 1 and w[n] = w[N-1-n]
        (vorbis_window, kaiser_bessel_derived_window or None).
      pad_end: pad the end of the signals with zeros so their last samples start frames.
      norm: None for the plain type-4 DCT, "ortho" for the orthonormal one.
      name: name scope.

    Returns:
      A Tensor [..., frames, frame_length // 2] of the signals' dtype.

    Raises:
      ValueError: `signals` is a scalar, `frame_length` is not a scalar or not a
        multiple of 4, or `norm` is not None or "ortho".
    """
    with name_scope(name, "mdct", [signals, frame_length]):
        signals = convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = convert_to_tensor(frame_length, name="frame_length")
        frame_length.shape.assert_has_rank(0)
        static_length = constant_value(frame_length)
        if static_length is not None:
            if static_length % 4 != 0:
                raise ValueError("The frame length must be a multiple of 4.")
            frame_step = int(static_length) // 2
        else:
            frame_step = frame_length // 2
        framed = signal_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * window_fn(frame_length, dtype=framed.dtype)
        else:
            framed = framed * (1.0 / np.sqrt(2))
        # Fold the 4 quarters (a, b, c, d) of each frame into (-c_r - d, a - b_r), where
        # _r is reversed: the MDCT is the type-4 DCT of that half-length frame.
        a, b, c, d = array_join_ops.split(framed, 4, axis=-1)
        folded = array_join_ops.concat([-array_pad_ops.reverse(c, [-1]) - d,
                                        a - array_pad_ops.reverse(b, [-1])], -1)
        return dct(folded, type=4, norm=norm)


@tf_export("signal.inverse_mdct")
def inverse_mdct(mdcts, window_fn: Optional[Callable] = signal_ops.vorbis_window,
                 norm: Optional[str] = None, name: Optional[str] = None) -> Tensor:
    """The inverse MDCT: unfolds the type-4 DCT of each frame to frame_length samples,
    windows them and overlap-adds them with a hop of frame_length / 2. With the window
    `mdct` used (and the signal padded by frame_length / 2 at both ends) it reconstructs
    the signal.

    Args:
      mdcts: a float32/float64 Tensor [..., frames, frame_length // 2]; the last
        dimension must be static.
      window_fn: the window function given to `mdct` (None: rectangular, scaled by
        1/sqrt(2)).
      norm: None (the type-4 DCT scaled by 1 / frame_length) or "ortho".
      name: name scope.

    Returns:
      A Tensor [..., (frames - 1) * (frame_length // 2) + frame_length].

    Raises:
      ValueError: `mdcts` has rank < 2 or an unknown last dimension, or `norm` is not
        None or "ortho".
    """
    with name_scope(name, "inverse_mdct", [mdcts]):
        mdcts = convert_to_tensor(mdcts, name="mdcts")
        mdcts.shape.with_rank_at_least(2)
        half_len = mdcts.shape.dims[-1].value
        if half_len is None:
            raise ValueError("Cannot convert unknown Dimension ? to a Tensor.")
        if norm is None:
            unfolded = (0.5 / math_ops.cast(half_len, mdcts.dtype)) * dct(mdcts, type=4)
        elif norm == "ortho":
            unfolded = dct(mdcts, type=4, norm="ortho")
        else:
            raise ValueError("Unknown normalization. Expected None or 'ortho', got: %s"
                             % norm)
        first, second = array_join_ops.split(unfolded, 2, axis=-1)
        frames = array_join_ops.concat([second, -array_pad_ops.reverse(second, [-1]),
                                        -array_pad_ops.reverse(first, [-1]), -first], -1)
        if window_fn is not None:
            frames = frames * window_fn(2 * half_len, dtype=mdcts.dtype)
        else:
            frames = frames * (1.0 / np.sqrt(2))
        return signal_ops.overlap_and_add(frames, half_len)


def _hertz_to_mel(hertz: Tensor) -> Tensor:
    """The HTK mel scale: 1127 ln(1 + f / 700)."""
    return _MEL_HIGH_FREQUENCY_Q * math_unary.log(1.0 + hertz / _MEL_BREAK_FREQUENCY_HERTZ)


def _validate_mel_arguments(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz,
                            dtype) -> None:
    """TF's checks, in TF's order; a sample rate only known at run time is not checked."""
    if num_mel_bins <= 0:
        raise ValueError("num_mel_bins must be positive. Got: %s" % num_mel_bins)
    if lower_edge_hertz < 0.0:
        raise ValueError("lower_edge_hertz must be non-negative. Got: %s" % lower_edge_hertz)
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError("lower_edge_hertz %.1f >= upper_edge_hertz %.1f"
                         % (lower_edge_hertz, upper_edge_hertz))
    if not isinstance(sample_rate, Tensor):
        if sample_rate <= 0.0:
            raise ValueError("sample_rate must be positive. Got: %s" % sample_rate)
        if upper_edge_hertz > sample_rate / 2:
            raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency "
                             "(sample_rate / 2). Got %s for sample_rate: %s"
                             % (upper_edge_hertz, sample_rate))
    if not _dt.as_dtype(dtype).is_floating:
        raise ValueError("dtype must be a floating point type. Got: %s" % _dt.as_dtype(dtype))


@tf_export("signal.linear_to_mel_weight_matrix")
def linear_to_mel_weight_matrix(num_mel_bins: int = 20, num_spectrogram_bins=129,
                                sample_rate=8000, lower_edge_hertz: float = 125.0,
                                upper_edge_hertz: float = 3800.0, dtype=_dt.float32,
                                name: Optional[str] = None) -> Tensor:
    """A [num_spectrogram_bins, num_mel_bins] matrix that maps a linear-frequency
    magnitude spectrogram to the mel scale (HTK's triangular filters, mel = 1127 ln(1 +
    f / 700)): column j is a triangle rising from 0 at the mel edge j to 1 at edge j + 1
    and falling to 0 at edge j + 2, of num_mel_bins + 2 edges evenly spaced in mel from
    lower_edge_hertz to upper_edge_hertz. Row 0 (the DC bin) is zero.

    Args:
      num_mel_bins: the number of mel bands (a positive int).
      num_spectrogram_bins: the number of linear bins, fft_length // 2 + 1 (an int or
        int32 scalar).
      sample_rate: the samples per second of the signal (a number or scalar Tensor).
      lower_edge_hertz: the lower edge of the lowest band (>= 0).
      upper_edge_hertz: the upper edge of the highest band (<= sample_rate / 2).
      dtype: a floating-point DType.
      name: name of the result.

    Returns:
      A Tensor [num_spectrogram_bins, num_mel_bins] of `dtype`.

    Raises:
      ValueError: num_mel_bins or sample_rate is not positive, lower_edge_hertz is
        negative or not below upper_edge_hertz, upper_edge_hertz is above the Nyquist
        frequency, or dtype is not floating-point.
    """
    with name_scope(name, "linear_to_mel_weight_matrix") as scope:
        if isinstance(sample_rate, Tensor):
            static_rate = constant_value(sample_rate)
            if static_rate is not None:
                sample_rate = static_rate
        _validate_mel_arguments(num_mel_bins, sample_rate, lower_edge_hertz,
                                upper_edge_hertz, dtype)
        dtype = _dt.as_dtype(dtype)
        sample_rate = math_ops.cast(sample_rate, dtype, name="sample_rate")
        lower = convert_to_tensor(lower_edge_hertz, dtype, name="lower_edge_hertz")
        upper = convert_to_tensor(upper_edge_hertz, dtype, name="upper_edge_hertz")
        zero = convert_to_tensor(0.0, dtype)
        # HTK leaves out the DC bin; it is added back as a zero row at the end.
        bin_hertz = math_ops.linspace(zero, sample_rate / 2.0, num_spectrogram_bins)[1:]
        bin_mel = array_ops.expand_dims(_hertz_to_mel(bin_hertz), 1)
        edges = signal_ops.frame(
            math_ops.linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), num_mel_bins + 2),
            frame_length=3, frame_step=1)
        lower_mel, center_mel, upper_mel = (
            array_ops.reshape(t, [1, num_mel_bins])
            for t in array_join_ops.split(edges, 3, axis=1))
        rising = (bin_mel - lower_mel) / (center_mel - lower_mel)
        falling = (upper_mel - bin_mel) / (upper_mel - center_mel)
        weights = math_binary.maximum(zero, math_binary.minimum(rising, falling))
        return array_pad_ops.pad(weights, [[1, 0], [0, 0]], name=scope)


@tf_export("signal.mfccs_from_log_mel_spectrograms")
def mfccs_from_log_mel_spectrograms(log_mel_spectrograms,
                                    name: Optional[str] = None) -> Tensor:
    """Mel-frequency cepstral coefficients: HTK's DCT-II of the log mel spectrograms, the
    unnormalised DCT-II scaled by sqrt(2 / N) / 2 (unlike the orthonormal DCT, the 0th
    coefficient is scaled the same).

    Args:
      log_mel_spectrograms: a float32/float64 Tensor [..., num_mel_bins].
      name: name scope.

    Returns:
      A Tensor [..., num_mel_bins] of MFCCs.

    Raises:
      ValueError: the static num_mel_bins is 0.
    """
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        spectrograms = convert_to_tensor(log_mel_spectrograms)
        shape = spectrograms.shape
        if shape.ndims and shape.dims[-1].value is not None:
            num_mel_bins = shape.dims[-1].value
            if num_mel_bins == 0:
                raise ValueError("num_mel_bins must be positive. Got: %s" % spectrograms)
        else:
            num_mel_bins = array_ops.shape(spectrograms)[-1]
        dct2 = dct(spectrograms, type=2)
        return dct2 * math_unary.rsqrt(math_ops.cast(num_mel_bins, dct2.dtype) * 2.0)
