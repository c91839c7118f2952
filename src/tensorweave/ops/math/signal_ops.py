"""`tf.signal` beyond the FFTs: framing (frame, overlap_and_add), windows (hann_window,
hamming_window, kaiser_window, kaiser_bessel_derived_window, vorbis_window) and the
short-time Fourier transform (stft, inverse_stft, inverse_stft_window_fn). All are
compositions of gathers, segment sums, elementwise math and the FFT ops, so their
gradients come from those ops. The DCTs, MDCTs and mel/MFCC helpers are in
spectral_transforms.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.math import spectral_fft_ops


def _static_int(x) -> Optional[int]:
    v = constant_value(x) if isinstance(x, Tensor) else x
    return None if v is None else int(np.asarray(v))


def _frame_indices(length, frame_length, frame_step, pad_end: bool):
    """([num_frames, frame_length] indices, padded length) as NumPy when everything is
    known, else as tensors."""
    fl, fs, n = (_static_int(v) for v in (frame_length, frame_step, length))
    if None not in (fl, fs, n) and fs != 0:  # a step of 0 fails at run time, as in TF
        frames = -(-n // fs) if pad_end else max(0, 1 + (n - fl) // fs)
        idx = np.arange(frames)[:, None] * fs + np.arange(fl)[None, :]
        padded = max(n, (frames - 1) * fs + fl) if pad_end and frames else n
        return idx.astype(np.int32), padded
    from tensorweave.ops.math import math_binary, math_ops
    length = math_ops.cast(length, _dt.int32)
    fl_t = convert_to_tensor(frame_length, dtype=_dt.int32)
    fs_t = convert_to_tensor(frame_step, dtype=_dt.int32)
    if pad_end:
        frames = -math_binary.floordiv(-length, fs_t)
        padded = math_binary.maximum(length, (frames - 1) * fs_t + fl_t)
    else:
        frames = math_binary.maximum(0, 1 + math_binary.floordiv(length - fl_t, fs_t))
        padded = length
    from tensorweave.ops.array import array_ops
    idx = array_ops.reshape(math_ops.range(frames) * fs_t, [-1, 1]) + \
        array_ops.reshape(math_ops.range(fl_t), [1, -1])
    return idx, padded


@tf_export("signal.frame")
def frame(signal, frame_length, frame_step, pad_end: bool = False, pad_value=0,
          axis: int = -1, name: Optional[str] = None) -> Tensor:
    """Splits `axis` of `signal` into overlapping frames of `frame_length` samples taken
    every `frame_step` samples.

    Args:
      signal: a Tensor of rank >= 1 (the rank may be unknown).
      frame_length: an int (or int32 scalar), the samples per frame.
      frame_step: an int (or int32 scalar), the hop between frame starts.
      pad_end: pad the end with `pad_value` so the last samples start frames too.
      pad_value: the padding value.
      axis: the axis to frame.
      name: name scope.

    Returns:
      A Tensor whose `axis` is replaced by [num_frames, frame_length].

    Raises:
      ValueError: `signal` is a scalar.
    """
    from tensorweave.ops.array import array_pad_ops
    from tensorweave.ops.indexing import indexing_gather
    with name_scope(name, "frame", [signal, frame_length, frame_step, pad_value]):
        signal = convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0")
        axis = int(axis)
        outer, length, inner = _split_at_axis(signal, axis)
        idx, padded = _frame_indices(length, frame_length, frame_step, pad_end)
        # framed as [outer, length, inner] so that the gather axis is a constant whatever
        # the rank; its gradient is then dense, as TF's
        flat = _reshape_dims(signal, [_product(outer), length, _product(inner)])
        if pad_end:
            extra = padded - length  # an int, or a tensor when a size is unknown
            if not isinstance(extra, int) or extra > 0:
                flat = array_pad_ops.pad(flat, _pad_spec(3, 1, extra),
                                         constant_values=pad_value)
        frames = indexing_gather.gather(flat, idx, axis=1)
        fl = _static_int(frame_length)
        num = idx.shape[0] if isinstance(idx, np.ndarray) else None
        result = _reshape_dims(frames, _concat_dims(
            outer, [num if num is not None else _dim(idx, 0),
                    fl if fl is not None else _dim(idx, 1)], inner))
        if rank is not None:
            dims = signal.shape.as_list()
            a = axis % rank
            result.set_shape(dims[:a] + [num, fl] + dims[a + 1:])
        return result


def _dim(t: Tensor, i: int):
    from tensorweave.ops.array import array_ops
    return array_ops.shape(t)[i]


def _split_at_axis(t: Tensor, axis: int):
    """(dims before `axis`, the size of `axis`, dims after it): lists of Python ints when
    the rank is known (a scalar int32 Tensor for an unknown size), else 1-D Tensors."""
    from tensorweave.ops.array import array_ops
    rank = t.shape.ndims
    if rank is not None:
        a = axis % rank
        dims = [d if d is not None else array_ops.shape(t)[i]
                for i, d in enumerate(t.shape.as_list())]
        return dims[:a], dims[a], dims[a + 1:]
    shape = array_ops.shape(t)
    if axis < 0:
        axis = array_ops.rank(t) + axis
    return shape[:axis], shape[axis], shape[axis + 1:]


def _product(dims):
    from tensorweave.ops.math import reduction_ops
    if isinstance(dims, Tensor):
        return reduction_ops.reduce_prod(dims)
    out = 1
    for d in dims:
        out = out * d
    return out


def _concat_dims(*parts):
    """The parts of a shape (lists of ints/scalar tensors, or 1-D tensors) as one list,
    or one 1-D int32 tensor if any part is a tensor of unknown length."""
    from tensorweave.ops.array import array_join_ops
    if not any(isinstance(p, Tensor) for p in parts):
        return [d for p in parts for d in p]
    return array_join_ops.concat([p if isinstance(p, Tensor) else
                                  array_join_ops.stack(p) if p else
                                  np.zeros([0], np.int32) for p in parts], 0)


def _reshape_dims(t: Tensor, dims):
    from tensorweave.ops.array import array_join_ops, array_ops
    if isinstance(dims, list) and any(isinstance(d, Tensor) for d in dims):
        dims = array_join_ops.stack(dims)
    return array_ops.reshape(t, dims)


def _pad_spec(rank: int, axis: int, extra):
    from tensorweave.ops.array import array_join_ops
    rows = []
    for i in range(rank):
        rows.append([0, extra] if i == axis else [0, 0])
    if all(isinstance(v, int) for r in rows for v in r):
        return rows
    return array_join_ops.stack([array_join_ops.stack(r) for r in rows])


def _raised_cosine(window_length, periodic, dtype, a: float, b: float, scope: str,
                   name: Optional[str]) -> Tensor:
    """a - b cos(2 pi n / N) for n < window_length; N is window_length when `periodic`
    and the length is even, window_length - 1 otherwise (as TF); [1] for length 1."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.control_flow import control_flow_ops
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError("dtype must be a floating point type. Found %s" % dtype)
    with name_scope(name, scope, [window_length, periodic]):
        n = _static_int(window_length)
        p = periodic if isinstance(periodic, (bool, np.bool_)) else constant_value(periodic)
        if n is not None and p is not None:
            if n == 1:
                return convert_to_tensor(np.ones([1], dtype.as_numpy_dtype))
            denom = n if (bool(p) and n % 2 == 0) else n - 1
            k = np.arange(n, dtype=np.float64)
            w = a - b * np.cos(2.0 * math.pi * k / denom)
            return convert_to_tensor(w.astype(dtype.as_numpy_dtype))
        length = convert_to_tensor(window_length, dtype=_dt.int32, name="window_length")
        periodic = math_ops.cast(convert_to_tensor(periodic, dtype=_dt.bool), _dt.int32)
        even = 1 - math_binary.floormod(length, 2)
        denom = math_ops.cast(length + periodic * even - 1, dtype)
        count = math_ops.cast(math_ops.range(length), dtype)
        window = a - b * math_unary.cos(2.0 * math.pi * count / denom)
        return control_flow_ops.cond(math_binary.equal(length, 1),
                                     lambda: array_ops.ones([1], dtype),
                                     lambda: window)


@tf_export("signal.hann_window")
def hann_window(window_length, periodic=True, dtype=_dt.float32,
                name: Optional[str] = None) -> Tensor:
    """The Hann window 0.5 - 0.5 cos(2 pi n / N).

    Args:
      window_length: an int (or int32 scalar), the number of samples.
      periodic: True for a periodic window (for spectral analysis), False for a
        symmetric one (for filter design).
      dtype: a floating-point DType.
      name: name scope.

    Returns:
      A Tensor [window_length] of `dtype`.

    Raises:
      ValueError: `dtype` is not floating-point.
    """
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, "hann_window", name)


@tf_export("signal.hamming_window")
def hamming_window(window_length, periodic=True, dtype=_dt.float32,
                   name: Optional[str] = None) -> Tensor:
    """The Hamming window 0.54 - 0.46 cos(2 pi n / N).

    Args:
      window_length: an int (or int32 scalar), the number of samples.
      periodic: True for a periodic window, False for a symmetric one.
      dtype: a floating-point DType.
      name: name scope.

    Returns:
      A Tensor [window_length] of `dtype`.

    Raises:
      ValueError: `dtype` is not floating-point.
    """
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, "hamming_window", name)


def _window_length(window_length, dtype) -> Tensor:
    """Checks a window's dtype and returns its length as an int32 scalar (as TF)."""
    if not _dt.as_dtype(dtype).is_floating:
        raise ValueError("dtype must be a floating point type. Found %s" % _dt.as_dtype(dtype))
    length = convert_to_tensor(window_length, dtype=_dt.int32)
    length.shape.assert_has_rank(0)
    return length


@tf_export("signal.kaiser_window")
def kaiser_window(window_length, beta=12., dtype=_dt.float32,
                  name: Optional[str] = None) -> Tensor:
    """The Kaiser window I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta), computed with
    the scaled Bessel function `bessel_i0e` so large betas do not overflow.

    Args:
      window_length: an int (or int32 scalar), the number of samples.
      beta: the shape parameter (a float or scalar Tensor; differentiable).
      dtype: a floating-point DType.
      name: name scope.

    Returns:
      A Tensor [window_length] of `dtype`.

    Raises:
      ValueError: `dtype` is not floating-point or `window_length` is not a scalar.
    """
    from tensorweave.ops.array import array_fill_ops
    from tensorweave.ops.math import math_binary, math_ops, math_unary, special_math_ops
    with name_scope(name, "kaiser_window"):
        dtype = _dt.as_dtype(dtype)
        length = _window_length(window_length, dtype)
        static = _static_int(length)
        if static == 1:
            return array_fill_ops.ones([1], dtype=dtype)
        # The sample positions -h..h (h = (N - 1) / 2) are made in float32, as TF does.
        if static is not None:
            half = np.float32((np.float32(static) - 1) / 2)
        else:
            half = (math_ops.cast(length, _dt.float32) - 1.0) / 2.0
        arg = math_ops.cast(math_ops.range(-half, half + 0.1, dtype=_dt.float32), dtype)
        if static is not None:
            arg.set_shape([static])
        beta = math_ops.cast(beta, dtype)
        half = math_ops.cast(half, dtype)
        one = math_ops.cast(1.0, dtype)
        radius = math_binary.maximum(one - math_unary.square(arg / half), 0.0)
        num = beta * math_unary.sqrt(radius)
        return math_unary.exp(num - beta) * (special_math_ops.bessel_i0e(num) /
                                             special_math_ops.bessel_i0e(beta))


@tf_export("signal.kaiser_bessel_derived_window")
def kaiser_bessel_derived_window(window_length, beta=12., dtype=_dt.float32,
                                 name: Optional[str] = None) -> Tensor:
    """The Kaiser-Bessel-derived window: the square root of the normalised running sum of
    a Kaiser window of N // 2 + 1 samples, mirrored. (As TF, an odd N gives N - 1
    samples.)

    Args:
      window_length: an int (or int32 scalar), the number of samples.
      beta: the Kaiser shape parameter (a float or scalar Tensor; differentiable).
      dtype: a floating-point DType.
      name: name scope.

    Returns:
      A Tensor [2 * (window_length // 2)] of `dtype`.

    Raises:
      ValueError: `dtype` is not floating-point or `window_length` is not a scalar.
    """
    from tensorweave.ops.array import array_join_ops, array_pad_ops
    from tensorweave.ops.math import math_unary, scan_ops
    with name_scope(name, "kaiser_bessel_derived_window"):
        length = _window_length(window_length, dtype)
        half = length // 2
        kaiser = kaiser_window(half + 1, beta, dtype=dtype)
        static = _static_int(length)
        if static is not None:
            kaiser.set_shape([static // 2 + 1])
        running = scan_ops.cumsum(kaiser)
        half_window = math_unary.sqrt(running[:-1] / running[-1])
        return array_join_ops.concat(
            [half_window, array_pad_ops.reverse(half_window, [0])], 0)


@tf_export("signal.vorbis_window")
def vorbis_window(window_length, dtype=_dt.float32, name: Optional[str] = None) -> Tensor:
    """The Vorbis power-complementary window sin(pi / 2 sin^2(pi (n + 0.5) / N)).

    Args:
      window_length: an int (or int32 scalar), the number of samples.
      dtype: a floating-point DType.
      name: name scope.

    Returns:
      A Tensor [window_length] of `dtype`.

    Raises:
      ValueError: `dtype` is not floating-point or `window_length` is not a scalar.
    """
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    with name_scope(name, "vorbis_window"):
        dtype = _dt.as_dtype(dtype)
        length = _window_length(window_length, dtype)
        arg = math_ops.cast(math_ops.range(length), dtype)
        inner = math_unary.sin(math.pi / math_ops.cast(length, dtype) * (arg + 0.5))
        return math_unary.sin(math.pi / 2.0 * math_binary.pow(inner, 2.0))


def _enclosing_power_of_two(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


@tf_export("signal.stft")
def stft(signals, frame_length: int, frame_step: int, fft_length: Optional[int] = None,
         window_fn: Optional[Callable] = hann_window, pad_end: bool = False,
         name: Optional[str] = None) -> Tensor:
    """The short-time Fourier transform of real signals along their last axis.

    Args:
      signals: a float32/float64 Tensor [..., samples].
      frame_length: the window length in samples (an int).
      frame_step: the hop in samples (an int).
      fft_length: the FFT size (default: the smallest power of 2 >= frame_length).
      window_fn: called as window_fn(frame_length, dtype=...) to window each frame, or
        None for no window.
      pad_end: pad the signal end with zeros so its last samples start frames.
      name: name scope.

    Returns:
      A complex Tensor [..., frames, fft_length // 2 + 1].

    Raises:
      ValueError: a non-integer frame_length/frame_step/fft_length.
    """
    with name_scope(name, "stft", [signals]):
        signals = convert_to_tensor(signals, name="signals")
        frame_length, frame_step = int(frame_length), int(frame_step)
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * window_fn(frame_length, dtype=framed.dtype)
        return spectral_fft_ops.rfft(framed, [int(fft_length)])


@tf_export("signal.overlap_and_add")
def overlap_and_add(signal, frame_step, name: Optional[str] = None) -> Tensor:
    """Adds overlapping frames back into a signal: the inverse of `frame` up to the
    window's overlap sum.

    Args:
      signal: a Tensor [..., frames, frame_length] of rank >= 2 (the rank may be
        unknown).
      frame_step: the hop between frame starts: an int or an integer scalar Tensor.
      name: name scope.

    Returns:
      A Tensor [..., (frames - 1) * frame_step + frame_length].

    Raises:
      ValueError: rank < 2, or a frame_step that is not an integer scalar.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops, segment_ops
    with name_scope(name, "overlap_and_add", [signal, frame_step]):
        signal = convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is not None and rank < 2:
            raise ValueError("Shape must be at least rank 2 but is rank %d" % rank)
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        if not frame_step.dtype.is_integer:
            raise ValueError("frame_step must be an integer. Got %s" % frame_step.dtype)
        if frame_step.shape.ndims not in (None, 0):
            raise ValueError("Shape must be rank 0 but is rank %d" % frame_step.shape.ndims)
        step = _static_int(frame_step)
        if step is None:
            step = math_ops.cast(frame_step, _dt.int32)
        outer, frames, length = _split_at_last_two(signal)
        out_len = (frames - 1) * step + length
        ids = array_ops.reshape(array_ops.reshape(math_ops.range(frames) * step, [-1, 1]) +
                                array_ops.reshape(math_ops.range(length), [1, -1]), [-1])
        # [outer, frames * length] -> [frames * length, outer]: sum the samples of each
        # output position, then back to [outer..., out_len]
        flat = array_ops.transpose(_reshape_dims(signal, [_product(outer), frames * length]))
        summed = array_ops.transpose(segment_ops.unsorted_segment_sum(flat, ids, out_len))
        result = _reshape_dims(summed, _concat_dims(outer, [out_len]))
        if rank is not None:
            s = signal.shape.as_list()
            total = (s[-2] - 1) * step + s[-1] \
                if None not in (s[-2], s[-1]) and isinstance(step, int) else None
            result.set_shape(s[:-2] + [total])
        return result


def _split_at_last_two(t: Tensor):
    """(the dims before the last two, the second-last size, the last size) as in
    _split_at_axis."""
    from tensorweave.ops.array import array_ops
    rank = t.shape.ndims
    if rank is not None:
        dims = [d if d is not None else array_ops.shape(t)[i]
                for i, d in enumerate(t.shape.as_list())]
        return dims[:-2], dims[-2], dims[-1]
    shape = array_ops.shape(t)
    return shape[:-2], shape[-2], shape[-1]


@tf_export("signal.inverse_stft")
def inverse_stft(stfts, frame_length: int, frame_step: int,
                 fft_length: Optional[int] = None, window_fn: Optional[Callable] = hann_window,
                 name: Optional[str] = None) -> Tensor:
    """The inverse of `stft`: inverse FFT of each frame, windowed, overlapped and added.
    (For perfect reconstruction pass a window_fn that undoes the analysis window's
    overlap sum, as TF's inverse_stft_window_fn does.)

    Args:
      stfts: a complex Tensor [..., frames, fft_length // 2 + 1].
      frame_length: the window length in samples (an int).
      frame_step: the hop in samples (an int).
      fft_length: the FFT size (default: the smallest power of 2 >= frame_length).
      window_fn: the synthesis window function, or None.
      name: name scope.

    Returns:
      A real Tensor [..., samples].
    """
    from tensorweave.ops.array import array_pad_ops
    with name_scope(name, "inverse_stft", [stfts]):
        stfts = convert_to_tensor(stfts, name="stfts")
        frame_length, frame_step = int(frame_length), int(frame_step)
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        frames = spectral_fft_ops.irfft(stfts, [int(fft_length)])
        frames = frames[..., :frame_length]
        if int(fft_length) < frame_length:
            rank = frames.shape.ndims
            frames = array_pad_ops.pad(frames, [[0, 0]] * (rank - 1) +
                                       [[0, frame_length - int(fft_length)]])
        if window_fn is not None:
            frames = frames * window_fn(frame_length, dtype=stfts.dtype.real_dtype)
        return overlap_and_add(frames, frame_step)


@tf_export("signal.inverse_stft_window_fn")
def inverse_stft_window_fn(frame_step, forward_window_fn: Callable = hann_window,
                           name: Optional[str] = None) -> Callable:
    """A window function for `inverse_stft` that undoes `forward_window_fn`: the forward
    window divided by the sum of its squares over the frames overlapping each sample
    (Griffin and Lim, equation 7); 0 where that sum is 0.

    Args:
      frame_step: an int (or int32 scalar), the hop used by `stft`.
      forward_window_fn: the window function given to `stft`.
      name: name scope of the window the returned function builds.

    Returns:
      A callable (frame_length, dtype) -> a [frame_length] Tensor of `dtype`.
    """
    def inverse_window(frame_length, dtype) -> Tensor:
        from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
        from tensorweave.ops.array import array_pad_ops
        from tensorweave.ops.indexing import indexing_select
        from tensorweave.ops.math import math_binary, math_unary, reduction_ops
        with name_scope(name, "inverse_stft_window_fn", []):
            step = convert_to_tensor(frame_step, name="frame_step")
            step.shape.assert_has_rank(0)
            length = convert_to_tensor(frame_length, name="frame_length")
            length.shape.assert_has_rank(0)
            forward = forward_window_fn(length, dtype=dtype)
            overlaps = -(-length // step)
            squares = array_pad_ops.pad(math_unary.square(forward),
                                        [[0, overlaps * step - length]])
            # Sum the squares of the frames that overlap each position of a frame.
            denom = reduction_ops.reduce_sum(array_ops.reshape(squares, [overlaps, step]), 0,
                                             keepdims=True)
            denom = array_ops.reshape(array_join_ops.tile(denom, [overlaps, 1]),
                                      [overlaps * step])[:length]
            return indexing_select.where(math_binary.equal(denom, 0.0),
                                         array_fill_ops.zeros_like(forward),
                                         forward / denom)
    return inverse_window
