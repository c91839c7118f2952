"""Fast Fourier transforms over the innermost 1, 2 or 3 dimensions (`tf.spectral`,
`tf.signal`; fft/ifft/fft2d/... also at the top level).

Ops: FFT, IFFT, FFT2D, IFFT2D, FFT3D, IFFT3D (complex -> complex, dtype kept), RFFT,
IRFFT, RFFT2D, IRFFT2D, RFFT3D, IRFFT3D (real <-> complex, with `fft_length` cropping or
zero-padding the transformed dimensions as TF does). Kernels call numpy.fft.

fftshift/ifftshift are rolls of half of each axis (composites, no kernel of their own).

Gradients (TF's convention for complex values: the gradient of a real loss L with
respect to z is dL/dRe(z) + i dL/dIm(z)), with n the number of transformed elements:
  FFT    n * IFFT(g)            IFFT   FFT(g) / n
  RFFT   Re(n * IFFT(g zero-padded to the full length)), cropped or padded back to the
         input's dimensions (the adjoint of the input's pad/crop)
  IRFFT  RFFT(g) * [1, 2, ..., 2, (1 if n even)] / n, fitted back to the input's
         dimensions
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value

_COMPLEX = (_dt.complex64, _dt.complex128)
_REAL = (_dt.float32, _dt.float64)
_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _rank_at_least(op, rank: int) -> TensorShape:
    s = op.inputs[0].shape
    if s.ndims is not None and s.ndims < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d for '%s' (op: '%s') "
                         "with input shapes: %s." % (rank, s.ndims, op.name, op.type, s))
    return s


def _real_fft_shape(op, rank: int, forward: bool) -> TensorShape:
    s = _rank_at_least(op, rank)
    lengths = constant_value(op.inputs[1])
    if s.ndims is None:
        return unknown_shape()
    outer = s.as_list()[:-rank]
    if lengths is None:
        return TensorShape(outer + [None] * rank)
    inner = [int(v) for v in np.asarray(lengths).reshape(-1)]
    if len(inner) != rank:
        raise ValueError("Dimension must be %d but is %d for '%s' (op: '%s')"
                         % (rank, len(inner), op.name, op.type))
    if forward:
        inner[-1] = inner[-1] // 2 + 1
    return TensorShape(outer + inner)


def _axes(rank: int):
    return tuple(range(-rank, 0))


def _lengths(ctx, fft_length, rank: int):
    n = [int(v) for v in np.asarray(fft_length).reshape(-1)]
    if len(n) != rank:
        raise errors.InvalidArgumentError(None, ctx.op, "fft_length must be a vector of %d "
                                          "elements, got shape %s" % (rank, list(np.shape(
                                              fft_length))))
    if any(v < 0 for v in n):
        raise errors.InvalidArgumentError(None, ctx.op, "fft_length must be non-negative, "
                                          "got %s" % n)
    return n


def _complex_kernel(rank: int, inverse: bool):
    def fn(ctx, x):
        if x.ndim < rank:
            raise errors.InvalidArgumentError(None, ctx.op, "Input must have rank of at "
                                              "least %d, but got shape %s" % (rank, x.shape))
        if x.size == 0:
            return ctx.xp.zeros(x.shape, dtype=x.dtype)
        f = ctx.xp.fft.ifftn if inverse else ctx.xp.fft.fftn
        return f(x, axes=_axes(rank)).astype(x.dtype, copy=False)
    return fn


def _rfft_kernel(rank: int):
    def fn(ctx, x, fft_length):
        n = _lengths(ctx, fft_length, rank)
        out_dtype = np.complex64 if x.dtype == np.float32 else np.complex128
        shape = x.shape[:-rank] + tuple(n[:-1]) + (n[-1] // 2 + 1,)
        if x.size == 0 or 0 in n:
            return ctx.xp.zeros(shape, dtype=out_dtype)
        return ctx.xp.fft.rfftn(x, s=n, axes=_axes(rank)).astype(out_dtype, copy=False)
    return fn


def _irfft_kernel(rank: int):
    def fn(ctx, x, fft_length):
        n = _lengths(ctx, fft_length, rank)
        out_dtype = _REAL_OF[np.dtype(x.dtype)]
        if x.size == 0 or 0 in n:
            return ctx.xp.zeros(x.shape[:-rank] + tuple(n), dtype=out_dtype)
        return ctx.xp.fft.irfftn(x, s=n, axes=_axes(rank)).astype(out_dtype, copy=False)
    return fn


# --- gradient helpers (graph builders) ------------------------------------------------------
def _inner_size(t: Tensor, rank: int, dtype: _dt.DType) -> Tensor:
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops, reduction_ops
    return math_ops.cast(reduction_ops.reduce_prod(array_ops.shape(t)[-rank:]), dtype)


def _fit_inner(t: Tensor, target: Tensor, rank: int) -> Tensor:
    """`t` with its `rank` innermost dimensions cropped or zero-padded to `target`."""
    from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
    from tensorweave.ops.array import array_pad_ops
    from tensorweave.ops.indexing import indexing_ops
    from tensorweave.ops.math import math_binary
    shape = array_ops.shape(t)
    current = shape[-rank:]
    size = array_join_ops.concat([shape[:-rank], math_binary.minimum(current, target)], 0)
    zeros = array_fill_ops.zeros_like(shape)
    t = indexing_ops.slice(t, zeros, size)
    extra = math_binary.maximum(target - current, 0)
    after = array_join_ops.concat([array_fill_ops.zeros_like(shape[:-rank]), extra], 0)
    return array_pad_ops.pad(t, array_join_ops.stack([zeros, after], axis=1))


def _complex_grad(rank: int, inverse: bool):
    def grad_fn(op, grad):
        size = _inner_size(grad, rank, grad.dtype)
        if inverse:
            return [_COMPLEX_BUILDERS[rank][0](grad) / size]
        return [_COMPLEX_BUILDERS[rank][1](grad) * size]
    return grad_fn


def _rfft_grad(rank: int):
    def grad_fn(op, grad):
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.math import complex_ops, math_ops, reduction_ops
        x, fft_length = op.inputs
        fft_length = math_ops.cast(fft_length, _dt.int32)
        full = _fit_inner(grad, fft_length, rank)  # zero-pads the last dimension to n
        n = math_ops.cast(reduction_ops.reduce_prod(fft_length), grad.dtype)
        back = complex_ops.real(_COMPLEX_BUILDERS[rank][1](full) * n)
        return [_fit_inner(back, array_ops.shape(x)[-rank:], rank), None]
    return grad_fn


def _irfft_grad(rank: int):
    def grad_fn(op, grad):
        from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
        from tensorweave.ops.math import math_ops, reduction_ops
        x, fft_length = op.inputs
        fft_length = math_ops.cast(fft_length, _dt.int32)
        real = grad.dtype
        spectrum = _REAL_BUILDERS[rank][0](grad, fft_length)
        last = fft_length[-1]
        is_odd = last % 2
        bins = last // 2 + 1
        mask = array_join_ops.concat(
            [array_fill_ops.ones([1], real),
             2.0 * array_fill_ops.ones([bins - 2 + is_odd], real),
             array_fill_ops.ones([1 - is_odd], real)], 0)
        mask = mask / math_ops.cast(reduction_ops.reduce_prod(fft_length), real)
        g = spectrum * math_ops.cast(mask, op.inputs[0].dtype)
        return [_fit_inner(g, array_ops.shape(x)[-rank:], rank), None]
    return grad_fn


# --- declarations -------------------------------------------------------------------------
_SUFFIX = {1: "", 2: "2D", 3: "3D"}

for _rank, _suffix in _SUFFIX.items():
    for _inverse in (False, True):
        _type = ("IFFT" if _inverse else "FFT") + _suffix
        register_op(_type, inputs=["input: Tcomplex"], outputs=["output: Tcomplex"],
                    attrs={"Tcomplex": TypeAttr(_COMPLEX, default=_dt.complex64)},
                    shape=lambda op, r=_rank: _rank_at_least(op, r))
        kernel(_type, cheap=False)(_complex_kernel(_rank, _inverse))
        gradient(_type)(_complex_grad(_rank, _inverse))
        _type = ("IRFFT" if _inverse else "RFFT") + _suffix
        register_op(_type,
                    inputs=(["input: Tcomplex", "fft_length: int32"] if _inverse
                            else ["input: Treal", "fft_length: int32"]),
                    outputs=["output: Treal"] if _inverse else ["output: Tcomplex"],
                    attrs={"Treal": TypeAttr(_REAL, default=_dt.float32),
                           "Tcomplex": TypeAttr(_COMPLEX, default=_dt.complex64)},
                    shape=lambda op, r=_rank, f=not _inverse: _real_fft_shape(op, r, f))
        kernel(_type, cheap=False)((_irfft_kernel if _inverse else _rfft_kernel)(_rank))
        gradient(_type)((_irfft_grad if _inverse else _rfft_grad)(_rank))


# --- builders -----------------------------------------------------------------------------
def _complex_builder(op_type: str, public: str, doc: str):
    def fn(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
        return apply_op(op_type, [input], name=name or op_type).outputs[0]
    fn.__name__ = fn.__qualname__ = public
    fn.__doc__ = """%s

    Args:
      input: a complex64 or complex128 Tensor.
      name: op name.

    Returns:
      A Tensor of the type and shape of `input`.

    Raises:
      TypeError: `input` is not complex.
    """ % doc
    return fn


def _default_fft_length(t: Tensor, rank: int, forward: bool) -> Tensor:
    from tensorweave.ops.array import array_ops
    inner = t.shape.as_list()[-rank:] if t.shape.ndims is not None else [None]
    if None not in inner:
        if not forward:
            inner[-1] = 2 * (inner[-1] - 1)
        return convert_to_tensor(np.asarray(inner, dtype=np.int32))
    dims = array_ops.shape(t)[-rank:]
    if forward:
        return dims
    from tensorweave.ops.array import array_join_ops
    return array_join_ops.concat([dims[:-1], 2 * (dims[-1:] - 1)], 0)


def _real_builder(op_type: str, public: str, rank: int, forward: bool, doc: str):
    def fn(input_tensor, fft_length=None, name: Optional[str] = None) -> Tensor:
        with name_scope(name, public, [input_tensor]) as scope:
            want = _REAL if forward else _COMPLEX
            x = convert_to_tensor(input_tensor, name="input_tensor",
                                  preferred_dtype=want[0])
            if x.dtype not in want:
                raise ValueError("%s requires tf.%s or tf.%s inputs, got: %s"
                                 % (op_type[:-2] if rank > 1 else op_type, want[0].name,
                                    want[1].name, x))
            if fft_length is None:
                fft_length = _default_fft_length(x, rank, forward)
            else:
                fft_length = convert_to_tensor(fft_length, _dt.int32, name="fft_length")
            attrs = ({"Tcomplex": _dt.complex64 if x.dtype == _dt.float32 else _dt.complex128}
                     if forward else
                     {"Treal": _dt.float32 if x.dtype == _dt.complex64 else _dt.float64})
            return apply_op(op_type, [x, fft_length], attrs, name=scope).outputs[0]
    fn.__name__ = fn.__qualname__ = public
    fn.__doc__ = """%s

    Args:
      input_tensor: a %s Tensor of rank >= %d.
      fft_length: an int32 vector of %d elements, the transform lengths (default: the
        input's innermost dimensions%s); the input is cropped or zero-padded to them.
      name: op name.

    Returns:
      A %s Tensor.

    Raises:
      ValueError: `input_tensor` has the wrong type.
    """ % (doc, "float32/float64" if forward else "complex64/complex128", rank, rank,
           "" if forward else ", the last one as 2 * (n - 1)",
           "complex" if forward else "real")
    return fn


fft = _complex_builder("FFT", "fft", "The 1-D discrete Fourier transform of the innermost "
                       "dimension.")
ifft = _complex_builder("IFFT", "ifft", "The inverse 1-D discrete Fourier transform of the "
                        "innermost dimension.")
fft2d = _complex_builder("FFT2D", "fft2d", "The 2-D discrete Fourier transform of the 2 "
                         "innermost dimensions.")
ifft2d = _complex_builder("IFFT2D", "ifft2d", "The inverse 2-D discrete Fourier transform "
                          "of the 2 innermost dimensions.")
fft3d = _complex_builder("FFT3D", "fft3d", "The 3-D discrete Fourier transform of the 3 "
                         "innermost dimensions.")
ifft3d = _complex_builder("IFFT3D", "ifft3d", "The inverse 3-D discrete Fourier transform "
                          "of the 3 innermost dimensions.")
rfft = _real_builder("RFFT", "rfft", 1, True, "The 1-D FFT of a real signal (the n//2+1 "
                     "non-negative frequencies).")
irfft = _real_builder("IRFFT", "irfft", 1, False, "The inverse of `rfft`.")
rfft2d = _real_builder("RFFT2D", "rfft2d", 2, True, "The 2-D FFT of a real signal.")
irfft2d = _real_builder("IRFFT2D", "irfft2d", 2, False, "The inverse of `rfft2d`.")
rfft3d = _real_builder("RFFT3D", "rfft3d", 3, True, "The 3-D FFT of a real signal.")
irfft3d = _real_builder("IRFFT3D", "irfft3d", 3, False, "The inverse of `rfft3d`.")

_COMPLEX_BUILDERS = {1: (fft, ifft), 2: (fft2d, ifft2d), 3: (fft3d, ifft3d)}
_REAL_BUILDERS = {1: (rfft, irfft), 2: (rfft2d, irfft2d), 3: (rfft3d, irfft3d)}

for _f in (fft, ifft, fft2d, ifft2d, fft3d, ifft3d):
    tf_export(_f.__name__, "signal." + _f.__name__, "spectral." + _f.__name__)(_f)
for _f in (rfft, irfft, rfft2d, irfft2d, rfft3d, irfft3d):
    tf_export("signal." + _f.__name__, "spectral." + _f.__name__)(_f)


def _fft_shift(x, axes, name: Optional[str], scope: str, sign: int) -> Tensor:
    """Rolls `axes` of `x` (all when None) by sign * (size // 2) places."""
    from tensorweave.ops.array import array_ops, array_rearrange_ops
    from tensorweave.ops.indexing import indexing_gather, indexing_select
    from tensorweave.ops.math import math_binary
    with name_scope(name, scope) as scope_name:
        x = convert_to_tensor(x)
        if axes is None:
            axes = tuple(range(x.shape.ndims))
            half = array_ops.shape(x) // 2
        elif isinstance(axes, int):
            half = array_ops.shape(x)[axes] // 2
        else:
            rank = array_ops.rank(x)
            # negative axes count from the end, as for gather below
            axes = indexing_select.where(math_binary.less(axes, 0), axes + rank, axes)
            half = indexing_gather.gather(array_ops.shape(x), axes) // 2
        shift = half if sign > 0 else -half
        return array_rearrange_ops.roll(x, shift, axes, name=scope_name)


@tf_export("signal.fftshift")
def fftshift(x, axes=None, name: Optional[str] = None) -> Tensor:
    """Moves the zero-frequency term to the centre: rolls each of `axes` by size // 2
    (numpy.fft.fftshift).

    Args:
      x: a Tensor.
      axes: an int or a sequence of ints, the axes to shift (default: all).
      name: op name.

    Returns:
      A Tensor like `x`, shifted.
    """
    return _fft_shift(x, axes, name, "fftshift", 1)


@tf_export("signal.ifftshift")
def ifftshift(x, axes=None, name: Optional[str] = None) -> Tensor:
    """The inverse of `fftshift`: rolls each of `axes` by -(size // 2) (numpy.fft.ifftshift;
    it differs from fftshift for odd sizes).

    Args:
      x: a Tensor.
      axes: an int or a sequence of ints, the axes to shift (default: all).
      name: op name.

    Returns:
      A Tensor like `x`, shifted back.
    """
    return _fft_shift(x, axes, name, "ifftshift", -1)
