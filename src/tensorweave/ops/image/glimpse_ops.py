"""Glimpses: ExtractGlimpse (TF1 `tf.image.extract_glimpse`) and ExtractGlimpseV2.

A glimpse is a size[0] x size[1] window of an NHWC float image, one per image, whose
placement comes from `offsets` [batch, 2] = (y, x) in float32 arithmetic, as TF's
kernel computes it (ExtractGlimpse is "V1"):

  * normalized: y *= height (x *= width);
  * centered (V1, or V2 with normalized): y = y / 2 + height / 2, so (0, 0) is the
    center and (-1, -1) the top-left corner; V2 without normalized only adds height / 2;
  * V1 always, V2 only when normalized and centered: y -= glimpse_height / 2, turning a
    center into a top-left corner. So V1 reads its non-normalized offsets as centers
    too, and V2 reads them as corners.

The corner is then truncated toward zero (-0.5 becomes row 0, not -1). Window pixels
outside the image are filled with noise of the `noise` attr: "zero"; "uniform" draws
from [min, max) of the whole image; "gaussian" draws from a normal with each channel's
mean and (population) standard deviation, clipped to the channel's [min, max].
`uniform_noise` picks uniform (True) or gaussian (False) only when `noise` is "": as in
TF, the default noise="uniform" wins over uniform_noise=False, so
tf.image.extract_glimpse always fills with uniform noise. The noise comes from a
generator kept per op and session (seeded by the op's name in the deterministic mode);
the ops are stateful so that no draw is folded or merged.
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, with_rank
from tensorweave.framework.tensor_util import constant_value
from tensorweave.runtime import determinism as _determinism

_NOISES = ("uniform", "gaussian", "zero")
# corners far outside any image, for offsets that are NaN or too large for an int64
_FAR = float(2 ** 62)


def _check_noise_attrs(uniform_noise: bool, noise: str) -> Optional[str]:
    """TF's rule on the two noise attrs: the message of what is wrong, or None."""
    if uniform_noise and noise not in ("", "uniform"):
        return "The uniform_noise should not be True when noise is not uniform"
    return None


def _glimpse_shape(op) -> TensorShape:
    image = with_rank(op.inputs[0].shape, 4)
    size = with_rank(op.inputs[1].shape, 1)
    offsets = with_rank(op.inputs[2].shape, 2)
    for what, dim in (("size", size.dims[0].value), ("offsets", offsets.dims[1].value)):
        if dim is not None and dim != 2:
            raise ValueError("Dimension must be 2 but is %d (the last dimension of %s)"
                             % (dim, what))
    batch = merge_dim(image.dims[0].value, offsets.dims[0].value)
    problem = _check_noise_attrs(op._get_attr("uniform_noise"), op._get_attr("noise"))
    if problem:
        raise ValueError(problem)
    value = constant_value(op.inputs[1])
    # a negative size is an InvalidArgumentError at run time, as in TF
    height, width = (None, None) if value is None else \
        (int(v) if v >= 0 else None for v in np.asarray(value).reshape(-1))
    return TensorShape([batch, height, width, image.dims[3].value])


_ATTRS = {"centered": True, "normalized": True, "uniform_noise": True, "noise": "uniform"}
for _op_type in ("ExtractGlimpse", "ExtractGlimpseV2"):
    register_op(_op_type, inputs=["input: float", "size: int32", "offsets: float"],
                outputs=["glimpse: float"], attrs=dict(_ATTRS), shape=_glimpse_shape,
                stateful=True)
    # TF: NotDifferentiable for ExtractGlimpse, no gradient at all for V2
    not_differentiable(_op_type)


def glimpse_corners(offsets: np.ndarray, image_hw, glimpse_hw, centered: bool,
                    normalized: bool, version: int) -> np.ndarray:
    """[batch, 2] int64 (row, column) of every glimpse's top-left corner.

    Args:
      offsets: [batch, 2] float (y, x).
      image_hw: the image's (height, width).
      glimpse_hw: the glimpse's (height, width).
      centered, normalized: the op's attrs.
      version: 1 for ExtractGlimpse, 2 for ExtractGlimpseV2.
    """
    f32 = np.float32
    pos = np.asarray(offsets, dtype=f32).reshape(-1, 2).copy()
    image = np.asarray(image_hw, dtype=f32)
    glimpse = np.asarray(glimpse_hw, dtype=f32)
    # one float32 operation at a time, in TF's order, so each rounds as TF's does
    if normalized:
        pos *= image
    if centered:
        if normalized or version == 1:
            pos /= f32(2)
        pos += image / f32(2)
    if version == 1 or (normalized and centered):
        pos -= glimpse / f32(2)
    with np.errstate(invalid="ignore"):
        pos = np.where(np.isnan(pos), -_FAR, np.clip(pos, -_FAR, _FAR))
    return np.trunc(pos).astype(np.int64)


def _noise_kind(ctx) -> str:
    attrs = ctx.attrs
    noise = attrs["noise"]
    problem = _check_noise_attrs(attrs["uniform_noise"], noise)
    if problem:
        raise errors.InvalidArgumentError(None, ctx.op, problem)
    if noise == "":
        return "uniform" if attrs["uniform_noise"] else "gaussian"
    if noise not in _NOISES:
        raise errors.InvalidArgumentError(None, ctx.op, "The noise could only be uniform, "
                                          "gaussian, or zero, got %r" % noise)
    return noise


def _noise_generator(ctx) -> tuple:
    """The (generator, lock) of this op in this session, created on first use."""
    pair = ctx.state.get("noise")
    if pair is None:
        if _determinism.of_session(ctx.session):
            seed, seed2 = _determinism.name_seed(ctx.op.name)
            bitgen = np.random.Philox(key=(seed << 64) | seed2)
        else:
            bitgen = np.random.Philox()  # OS entropy, as TF's unseeded noise
        # setdefault: of two runs creating it at once, both keep the first
        pair = ctx.state.setdefault("noise", (np.random.Generator(bitgen), threading.Lock()))
    return pair


def _noise(ctx, images: np.ndarray, shape, kind: str) -> np.ndarray:
    """Noise of glimpse `shape` [n, gh, gw, c] for the n `images`."""
    if kind == "zero":
        return np.zeros(shape, dtype=np.float32)
    n, c = shape[0], shape[3]
    if images[0].size == 0:
        return np.full(shape, np.nan, dtype=np.float32)  # TF's min/max of nothing
    rng, lock = _noise_generator(ctx)
    if kind == "uniform":
        # one range per image, over all its channels
        lo = images.min(axis=(1, 2, 3)).reshape(n, 1, 1, 1)
        span = images.max(axis=(1, 2, 3)).reshape(n, 1, 1, 1) - lo
        with lock:
            u = rng.random(shape, dtype=np.float32)
        return lo + u * span
    # gaussian: per image and channel, clipped to that channel's range
    mean = images.mean(axis=(1, 2), dtype=np.float64).astype(np.float32).reshape(n, 1, 1, c)
    sigma = images.std(axis=(1, 2), dtype=np.float64).astype(np.float32).reshape(n, 1, 1, c)
    with lock:
        z = rng.standard_normal(shape, dtype=np.float32)
    return np.clip(mean + z * sigma, images.min(axis=(1, 2), keepdims=True),
                   images.max(axis=(1, 2), keepdims=True))


def _glimpse(ctx, images, size, offsets, version: int):
    if images.ndim != 4:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input must be 4-dimensional (batch_size, height, width, depth), "
            "got shape %s" % list(images.shape))
    if size.shape != (2,):
        raise errors.InvalidArgumentError(None, ctx.op, "input must be a vector of size 2 "
                                          "(height, width), got shape %s" % list(size.shape))
    gh, gw = int(size[0]), int(size[1])
    if gh < 0 or gw < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected a non-negative size, got "
                                          "%d" % (gh if gh < 0 else gw))
    if offsets.ndim != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be a matrix, got shape "
                                          "%s" % list(offsets.shape))
    n, height, width, c = images.shape
    if offsets.shape[0] != n:
        raise errors.InvalidArgumentError(None, ctx.op, "first dimension should be batch, "
                                          "got shape %s" % list(offsets.shape))
    if offsets.shape[1] != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "second dimension should be of size "
                                          "2 (y,x), got shape %s" % list(offsets.shape))
    kind = _noise_kind(ctx)
    out_shape = (n, gh, gw, c)
    if 0 in out_shape:
        return np.zeros(out_shape, dtype=np.float32)
    corners = glimpse_corners(offsets, (height, width), (gh, gw), ctx.attrs["centered"],
                              ctx.attrs["normalized"], version)
    rows = corners[:, :1] + np.arange(gh)  # [n, gh]
    cols = corners[:, 1:] + np.arange(gw)  # [n, gw]
    inside = (((rows >= 0) & (rows < height))[:, :, None] &
              ((cols >= 0) & (cols < width))[:, None, :])
    out = np.empty(out_shape, dtype=np.float32)
    covered = inside.all(axis=(1, 2))
    if height and width:
        picked = images[np.arange(n)[:, None, None],
                        np.clip(rows, 0, height - 1)[:, :, None],
                        np.clip(cols, 0, width - 1)[:, None, :]]
        out[covered] = picked[covered]
    partial = ~covered
    if partial.any():
        noise = _noise(ctx, images[partial], (int(partial.sum()), gh, gw, c), kind)
        if height and width:
            noise = np.where(inside[partial][..., None], picked[partial], noise)
        out[partial] = noise
    return out


@kernel("ExtractGlimpse", cheap=False)
def _extract_glimpse_kernel(ctx, images, size, offsets):
    return _glimpse(ctx, images, size, offsets, 1)


@kernel("ExtractGlimpseV2", cheap=False)
def _extract_glimpse_v2_kernel(ctx, images, size, offsets):
    return _glimpse(ctx, images, size, offsets, 2)


@tf_export("image.extract_glimpse")
def extract_glimpse(input, size, offsets, centered: bool = True,  # noqa: A002
                    normalized: bool = True, uniform_noise: bool = True,
                    name: Optional[str] = None):
    """Extracts one glimpse (a window) from each image (TF1 `tf.image.extract_glimpse`).

    Window pixels outside the image are filled with noise: uniform between the image's
    minimum and maximum. (As in TF, the op's default noise="uniform" takes precedence,
    so `uniform_noise=False` gives uniform noise too.)

    How `offsets` place the windows:

      * normalized, not centered: 0.0 and 1.0 are the start and end of each dimension;
      * normalized and centered: -1.0 to 1.0, (0, 0) being the image's center;
      * not normalized: pixels; this V1 op still reads them as the window's center
        (offset (1, 1) with a 2x2 glimpse starts at row 0, column 0).

    The window's top-left corner is rounded toward zero.

    Args:
      input: a 4-D float32 Tensor [batch, height, width, channels].
      size: a 1-D int32 Tensor of 2 elements: the glimpse's height, then width.
      offsets: a 2-D float32 Tensor [batch, 2]: the (y, x) location of each window.
      centered: offsets are relative to the image's center (else its top-left corner).
      normalized: offsets are normalized (else in pixels).
      uniform_noise: uniform (True) or Gaussian noise; see above.
      name: name of the op.

    Returns:
      A float32 Tensor [batch, size[0], size[1], channels].

    Raises:
      ValueError: shapes of the wrong rank, or a batch size that differs from offsets'.
      InvalidArgumentError (at run time): wrong shapes, or a negative size.
    """
    # None means the attr's default (True), as in TF's generated wrapper
    attrs = {key: True if value is None else bool(value) for key, value in
             (("centered", centered), ("normalized", normalized),
              ("uniform_noise", uniform_noise))}
    return apply_op("ExtractGlimpse", [input, size, offsets], attrs, name=name).outputs[0]
