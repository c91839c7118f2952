"""Image dtype conversion, color spaces and color adjustments, and their random versions
(part of the image family).

All are compositions of math ops (TF's RGBToHSV / HSVToRGB / AdjustContrastv2 /
AdjustHue / AdjustSaturation kernels written as their formulas), so each is
differentiable where its formula is.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array import array_ops
from tensorweave.ops.image.image_ops import check_image
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops


# --- dtype conversion ----------------------------------------------------------------------
@tf_export("image.convert_image_dtype")
def convert_image_dtype(image, dtype, saturate: bool = False,
                        name: Optional[str] = None) -> Tensor:
    """Converts `image` to `dtype`, rescaling: floats are in [0, 1), integers in
    [0, dtype.max].

    Args:
      image: an image Tensor of an integer or floating type.
      dtype: the target DType.
      saturate: clip to the target range before casting (avoids overflow).
      name: op name.

    Returns:
      The converted image.

    Raises:
      AttributeError: `dtype` is neither an integer nor a floating type.
    """
    image = convert_to_tensor(image, name="image")
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if not image.dtype.is_floating and not image.dtype.is_integer:
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == image.dtype:
        from tensorweave.ops.control_flow import structure
        return structure.identity(image, name=name)
    with _graph.name_scope(name, "convert_image", [image]) as scope:
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = image.dtype.max, dtype.max
            if scale_in > scale_out:
                # scale first, then cast: in.max lands below out.max + 1
                scale = (scale_in + 1) // (scale_out + 1)
                scaled = math_binary.floordiv(image, scale)
                return _cast(scaled, dtype, saturate, scope)
            cast = _cast(image, dtype, saturate, None)
            return math_binary.multiply(cast, (scale_out + 1) // (scale_in + 1), name=scope)
        if image.dtype.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if image.dtype.is_integer:
            cast = math_ops.cast(image, dtype)
            return math_binary.multiply(cast, 1.0 / image.dtype.max, name=scope)
        scaled = math_binary.multiply(image, dtype.max + 0.5)  # no rounding down at max
        return _cast(scaled, dtype, saturate, scope)


def _cast(x, dtype, saturate: bool, name):
    if saturate:
        return math_ops.saturate_cast(x, dtype, name=name)
    return math_ops.cast(x, dtype, name=name)


def _as_float(image: Tensor) -> Tensor:
    """The image as float16/float32 as TF's adjust_* compute (other types to float32)."""
    if image.dtype in (_dt.float16, _dt.float32):
        return image
    return convert_image_dtype(image, _dt.float32)


# --- color spaces ----------------------------------------------------------------------------
def _check_rgb(images: Tensor, what: str = "images") -> None:
    shape = images.shape
    if shape.ndims is not None:
        if shape.ndims < 1:
            raise ValueError("Shape must be at least rank 1 but is rank 0")
        last = shape.as_list()[-1]
        if last is not None and last != 3:
            raise ValueError("Dimension must be 3 but is %d" % last)


def _channels(images: Tensor):
    return array_ops.unstack(images, num=3, axis=-1)


def _float_channels(images):
    """`images` as a Tensor, checked to be floating point with 3 channels, and its
    three channels."""
    images = convert_to_tensor(images, name="images")
    _check_float(images)
    _check_rgb(images)
    return images, _channels(images)


@tf_export("image.rgb_to_hsv")
def rgb_to_hsv(images, name: Optional[str] = None) -> Tensor:
    """RGB images to HSV (hue, saturation and value all in [0, 1]).

    Args:
      images: a float Tensor whose last dimension is 3 (RGB in [0, 1]).
      name: name scope.

    Returns:
      A Tensor of the shape and type of `images`.
    """
    with _graph.name_scope(name, "RGBToHSV", [images]):
        images, (r, g, b) = _float_channels(images)
        value = reduction_ops.reduce_max(images, axis=-1)
        span = value - reduction_ops.reduce_min(images, axis=-1)
        zero = array_ops.zeros_like(value)
        positive = math_binary.greater(value, zero)
        saturation = indexing_select.where(positive, span / indexing_select.where(
            positive, value, array_ops.ones_like(value)), zero)
        has_span = math_binary.greater(span, zero)
        norm = 1.0 / (6.0 * indexing_select.where(has_span, span, array_ops.ones_like(span)))
        hue = indexing_select.where(
            math_binary.equal(r, value), norm * (g - b),
            indexing_select.where(math_binary.equal(g, value), norm * (b - r) + 2.0 / 6.0,
                                  norm * (r - g) + 4.0 / 6.0))
        hue = indexing_select.where(has_span, hue, zero)
        hue = indexing_select.where(math_binary.less(hue, zero), hue + 1.0, hue)
        return array_ops.stack([hue, saturation, value], axis=-1)


@tf_export("image.hsv_to_rgb")
def hsv_to_rgb(images, name: Optional[str] = None) -> Tensor:
    """HSV images (all components in [0, 1]) to RGB.

    Args:
      images: a float Tensor whose last dimension is 3.
      name: name scope.

    Returns:
      A Tensor of the shape and type of `images`.
    """
    with _graph.name_scope(name, "HSVToRGB", [images]):
        _, (hue, saturation, value) = _float_channels(images)
        return _hsv_to_rgb(hue, saturation, value)


def _hsv_to_rgb(hue, saturation, value) -> Tensor:
    # each channel is a clipped triangle of the hue (in sixths): TF's formula
    dh = hue * 6.0

    def ramp(x):
        return math_binary.minimum(math_binary.maximum(x, 0.0), 1.0)
    dr = ramp(math_unary.abs(dh - 3.0) - 1.0)
    dg = ramp(2.0 - math_unary.abs(dh - 2.0))
    db = ramp(2.0 - math_unary.abs(dh - 4.0))
    one_s = 1.0 - saturation
    return array_ops.stack([(one_s + saturation * dr) * value,
                            (one_s + saturation * dg) * value,
                            (one_s + saturation * db) * value], axis=-1)


def _check_float(images: Tensor) -> None:
    if images.dtype.base_dtype not in (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64):
        raise TypeError("Value passed to parameter 'images' has DataType %s not in list of "
                        "allowed values: float16, bfloat16, float32, float64"
                        % images.dtype.name)


@tf_export("image.rgb_to_grayscale")
def rgb_to_grayscale(images, name: Optional[str] = None) -> Tensor:
    """RGB images to grayscale (ITU-R 601 luma), with a last dimension of 1.

    Args:
      images: a Tensor whose last dimension is 3.
      name: name scope.

    Returns:
      A Tensor of the type of `images`, last dimension 1.
    """
    with _graph.name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        orig_dtype = images.dtype
        flt = convert_image_dtype(images, _dt.float32)
        # A weighted sum over the last axis, written with broadcasting so that images of
        # unknown rank (decode_image's output) work, as they do in TF.
        from tensorweave.ops.math import reduction_ops
        weights = convert_to_tensor([0.2989, 0.5870, 0.1140], flt.dtype)
        gray = reduction_ops.reduce_sum(flt * weights, axis=-1, keepdims=True)
        return convert_image_dtype(gray, orig_dtype, name=scope)


@tf_export("image.grayscale_to_rgb")
def grayscale_to_rgb(images, name: Optional[str] = None) -> Tensor:
    """Grayscale images (last dimension 1) to RGB (the gray value in each channel).

    Args:
      images: a Tensor whose last dimension is 1.
      name: name scope.

    Returns:
      A Tensor of the type of `images`, last dimension 3.

    Raises:
      ValueError: the last dimension is not 1, or the rank is below 2.
    """
    with _graph.name_scope(name, "grayscale_to_rgb", [images]):
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None:
            if shape.ndims < 2:
                raise ValueError("'image' (shape %s) must be at least two-dimensional." % shape)
            if shape.as_list()[-1] not in (None, 1):
                raise ValueError("Last dimension of a grayscale image should be size 1.")
        rank_1 = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = array_ops.concat([array_ops.ones(rank_1, dtype=_dt.int32), [3]], 0)
        rgb = array_ops.tile(images, multiples)
        if shape.ndims is not None:
            rgb.set_shape(shape.as_list()[:-1] + [3])
        return rgb


# --- adjustments ------------------------------------------------------------------------------
@tf_export("image.adjust_brightness")
def adjust_brightness(image, delta) -> Tensor:
    """`image + delta`, computed in float and converted back (saturating).

    Args:
      image: an image Tensor (integer images are scaled to [0, 1] first).
      delta: a scalar added to every component.

    Returns:
      The brightness-adjusted image, of the type of `image`.
    """
    with _graph.name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = convert_to_tensor(image, name="image")
        flt = _as_float(image)
        adjusted = math_binary.add(flt, math_ops.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


@tf_export("image.adjust_contrast")
def adjust_contrast(images, contrast_factor) -> Tensor:
    """Scales each channel of each image about its mean: `(x - mean) * factor + mean`
    (the mean over height and width).

    Args:
      images: image Tensor(s) of rank >= 3.
      contrast_factor: a float multiplier.

    Returns:
      The contrast-adjusted image(s), of the type of `images`.
    """
    with _graph.name_scope(None, "adjust_contrast", [images, contrast_factor]):
        images = convert_to_tensor(images, name="images")
        flt = _as_float(images)
        if flt.shape.ndims is not None and flt.shape.ndims < 3:
            raise ValueError("Shape must be at least rank 3 but is rank %d"
                             % flt.shape.ndims)
        mean = reduction_ops.reduce_mean(flt, axis=[-3, -2], keepdims=True)
        factor = math_ops.cast(contrast_factor, flt.dtype)
        adjusted = (flt - mean) * factor + mean
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def _adjust_hsv(image, name, scope: str, fn) -> Tensor:
    with _graph.name_scope(name, scope, [image]) as scope_name:
        image = convert_to_tensor(image, name="image")
        _check_rgb(image)
        flt = _as_float(image)
        work = flt if flt.dtype == _dt.float32 else math_ops.cast(flt, _dt.float32)
        hsv = rgb_to_hsv(work)
        hue, saturation, value = _channels(hsv)
        rgb = _hsv_to_rgb(*fn(hue, saturation, value))
        if flt.dtype != _dt.float32:
            rgb = math_ops.cast(rgb, flt.dtype)
        return convert_image_dtype(rgb, image.dtype, name=scope_name)


@tf_export("image.adjust_hue")
def adjust_hue(image, delta, name: Optional[str] = None) -> Tensor:
    """Rotates the hue of RGB images by `delta` (a fraction of the color circle).

    Args:
      image: RGB image(s), last dimension 3.
      delta: a float in [-1, 1] added to the hue (which wraps around).
      name: name scope.

    Returns:
      The hue-adjusted image(s), of the type of `image`.
    """
    def shift(hue, saturation, value):
        moved = math_binary.floormod(hue + math_ops.cast(delta, _dt.float32), 1.0)
        return moved, saturation, value
    return _adjust_hsv(image, name, "adjust_hue", shift)


@tf_export("image.adjust_saturation")
def adjust_saturation(image, saturation_factor, name: Optional[str] = None) -> Tensor:
    """Multiplies the saturation of RGB images by `saturation_factor` (clipped to [0, 1]).

    Args:
      image: RGB image(s), last dimension 3.
      saturation_factor: a float multiplier.
      name: name scope.

    Returns:
      The saturation-adjusted image(s), of the type of `image`.
    """
    def scale(hue, saturation, value):
        factor = math_ops.cast(saturation_factor, _dt.float32)
        scaled = math_binary.minimum(math_binary.maximum(saturation * factor, 0.0), 1.0)
        return hue, scaled, value
    return _adjust_hsv(image, name, "adjust_saturation", scale)


@tf_export("image.adjust_gamma")
def adjust_gamma(image, gamma=1, gain=1) -> Tensor:
    """Gamma correction: `gain * image ** gamma`, computed in float (integer images
    scaled to [0, 1]) and converted back with saturation.

    Args:
      image: an image Tensor.
      gamma: a non-negative real number.
      gain: a constant multiplier.

    Returns:
      The corrected image, of the type of `image`.

    Raises:
      ValueError: `gamma` known at build time to be negative.
    """
    from tensorweave.ops.image.image_ops import assert_that, with_asserts
    with _graph.name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        flt = _as_float(image)
        non_negative = gamma >= 0 if not isinstance(gamma, Tensor) else \
            math_binary.greater_equal(gamma, math_ops.cast(0, gamma.dtype))
        asserts = assert_that(non_negative, "Gamma should be a non-negative real number.")
        gamma = convert_to_tensor(gamma, name="gamma")
        gamma = math_ops.cast(with_asserts(asserts, gamma), flt.dtype)
        adjusted = math_ops.cast(gain, flt.dtype) * math_binary.pow(flt, gamma)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


@tf_export("image.per_image_standardization")
def per_image_standardization(image) -> Tensor:
    """Scales each image to zero mean and unit variance:
    `(x - mean) / max(stddev, 1 / sqrt(num_elements))`.

    Args:
      image: image Tensor(s) of rank >= 3.

    Returns:
      The standardized image(s), float32: TF casts the pixels as they are (a uint8
      image is not scaled to [0, 1] first; the result is the same either way up to
      the minimum stddev).
    """
    with _graph.name_scope(None, "per_image_standardization", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        check_image(image)
        if image.dtype != _dt.float32:
            image = math_ops.cast(image, _dt.float32)
        num_pixels = reduction_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = reduction_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = reduction_ops.reduce_std(image, axis=[-1, -2, -3], keepdims=True)
        min_stddev = math_unary.rsqrt(math_ops.cast(num_pixels, image.dtype))
        adjusted = math_binary.maximum(stddev, min_stddev)
        return math_binary.divide(image - mean, adjusted, name=scope)


# --- random adjustments ------------------------------------------------------------------------
def _uniform(lower, upper, seed):
    from tensorweave.ops.random import random_ops
    return random_ops.random_uniform([], lower, upper, seed=seed)


@tf_export("image.random_brightness")
def random_brightness(image, max_delta, seed: Optional[int] = None) -> Tensor:
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta).

    Args:
      image: an image Tensor.
      max_delta: a non-negative float.
      seed: the op seed (TF1's seed rules with the graph seed).

    Returns:
      The adjusted image.

    Raises:
      ValueError: `max_delta` is negative.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _uniform(-max_delta, max_delta, seed))


def _check_range(lower, upper) -> None:
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


@tf_export("image.random_contrast")
def random_contrast(image, lower, upper, seed: Optional[int] = None) -> Tensor:
    """adjust_contrast by a factor drawn uniformly from [lower, upper).

    Args:
      image: image Tensor(s) of rank >= 3.
      lower, upper: the range of the factor (0 <= lower < upper).
      seed: the op seed (TF1's seed rules with the graph seed).

    Returns:
      The adjusted image(s).

    Raises:
      ValueError: a bad range.
    """
    _check_range(lower, upper)
    return adjust_contrast(image, _uniform(lower, upper, seed))


@tf_export("image.random_saturation")
def random_saturation(image, lower, upper, seed: Optional[int] = None) -> Tensor:
    """adjust_saturation by a factor drawn uniformly from [lower, upper).

    Args:
      image: RGB image(s).
      lower, upper: the range of the factor (0 <= lower < upper).
      seed: the op seed (TF1's seed rules with the graph seed).

    Returns:
      The adjusted image(s).

    Raises:
      ValueError: a bad range.
    """
    _check_range(lower, upper)
    return adjust_saturation(image, _uniform(lower, upper, seed))


@tf_export("image.random_hue")
def random_hue(image, max_delta, seed: Optional[int] = None) -> Tensor:
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta).

    Args:
      image: RGB image(s).
      max_delta: a float in [0, 0.5].
      seed: the op seed (TF1's seed rules with the graph seed).

    Returns:
      The adjusted image(s).

    Raises:
      ValueError: `max_delta` out of [0, 0.5].
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _uniform(-max_delta, max_delta, seed))
