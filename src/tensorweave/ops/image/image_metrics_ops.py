"""Image color spaces YIQ/YUV, quality metrics (PSNR, SSIM) and Sobel edges, all written
as compositions of existing ops (so they need no kernels or gradients of their own).

YIQ and YUV are the linear transforms of the FCC NTSC and BT.601 definitions (the
coefficients TF uses); the inverse
transforms are the inverse matrices. SSIM follows Wang et al. 2004 with an 11x11
Gaussian window (sigma 1.5) applied over the 'VALID' region, as `tf.image.ssim`.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import Tensor, control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import broadcast_shapes
from tensorweave.ops.image import color_ops, image_ops

export(image_ops.resize_image_with_crop_or_pad, "image.resize_with_crop_or_pad")

# rows: R, G, B; columns: Y, I, Q / Y, U, V
_RGB_TO_YIQ = np.array([[0.299, 0.59590059, 0.2115],
                        [0.587, -0.27455667, -0.52273617],
                        [0.114, -0.32134392, 0.31119955]])
# TF's YIQ -> RGB coefficients (rounded: not exactly the inverse of the matrix above)
_YIQ_TO_RGB = np.array([[1.0, 1.0, 1.0],
                        [0.95598634, -0.27201283, -1.10674021],
                        [0.6208248, -0.64720424, 1.70423049]])
_RGB_TO_YUV = np.array([[0.299, -0.299 * 0.492111, 0.701 * 0.877283],
                        [0.587, -0.587 * 0.492111, -0.587 * 0.877283],
                        [0.114, 0.886 * 0.492111, -0.114 * 0.877283]])


def _color_transform(images, matrix: np.ndarray, scope: str) -> Tensor:
    from tensorweave.ops.math import einsum_ops
    with name_scope(None, scope, [images]):
        images = convert_to_tensor(images, name="images")
        if not (images.dtype.is_floating):
            raise TypeError("%s expects a floating-point image, got %s"
                            % (scope, images.dtype.name))
        if images.shape.ndims is not None and images.shape.dims[-1].value not in (None, 3):
            raise ValueError("The last dimension of the image must be 3 (RGB), got shape %s"
                             % images.shape)
        kernel = convert_to_tensor(matrix.astype(images.dtype.as_numpy_dtype), name="kernel")
        ndims = images.shape.ndims
        if ndims is None:
            raise ValueError("%s needs an image of known rank" % scope)
        return einsum_ops.tensordot(images, kernel, axes=[[ndims - 1], [0]])


def _color_fn(public: str, matrix: np.ndarray, what: str):
    def fn(images) -> Tensor:
        return _color_transform(images, matrix, public)
    fn.__name__ = fn.__qualname__ = public
    fn.__doc__ = """Converts %s.

    Args:
      images: a float Tensor whose last dimension is 3.

    Returns:
      A Tensor of the shape and type of `images`.

    Raises:
      TypeError: `images` is not floating-point.
      ValueError: the last dimension is not 3.
    """ % what
    return tf_export("image." + public)(fn)


rgb_to_yiq = _color_fn("rgb_to_yiq", _RGB_TO_YIQ, "RGB images to YIQ")
yiq_to_rgb = _color_fn("yiq_to_rgb", _YIQ_TO_RGB, "YIQ images to RGB")
rgb_to_yuv = _color_fn("rgb_to_yuv", _RGB_TO_YUV, "RGB images to YUV")
yuv_to_rgb = _color_fn("yuv_to_rgb", np.linalg.inv(_RGB_TO_YUV), "YUV images to RGB")


def _check_pair(a: Tensor, b: Tensor) -> list:
    """TF's compatibility checks of two image batches: rank >= 3 and matching last three
    dimensions (ValueError when known, run-time asserts otherwise)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.debug import debug_ops
    from tensorweave.ops.math import math_binary, reduction_ops
    sa, sb = a.shape, b.shape
    for s in (sa, sb):
        if s.ndims is not None and s.ndims < 3:
            raise ValueError("Shape must be at least rank 3 but is rank %d" % s.ndims)
    if sa.ndims is not None and sb.ndims is not None:
        if not sa[-3:].is_compatible_with(sb[-3:]):
            raise ValueError("Shapes %s and %s are incompatible" % (sa, sb))
        if sa[-3:].is_fully_defined() and sb[-3:].is_fully_defined():
            return []
    same = reduction_ops.reduce_all(
        math_binary.equal(array_ops.shape(a)[-3:], array_ops.shape(b)[-3:]))
    return [debug_ops.Assert(same, ["The last three dimensions of the images differ: ",
                                    array_ops.shape(a), array_ops.shape(b)])]


def _as_float_images(a, b, max_val):
    from tensorweave.ops.math import math_ops
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b")
    checks = _check_pair(a, b)
    max_val = math_ops.cast(max_val, a.dtype)
    max_val = color_ops.convert_image_dtype(max_val, _dt.float32)
    a = color_ops.convert_image_dtype(a, _dt.float32)
    b = color_ops.convert_image_dtype(b, _dt.float32)
    return a, b, max_val, checks


@tf_export("image.psnr")
def psnr(a, b, max_val, name: Optional[str] = None) -> Tensor:
    """Peak signal-to-noise ratio between two image batches, in dB:
    20 log10(max_val) - 10 log10(MSE), the MSE taken over the last three dimensions.

    Args:
      a, b: images of the same type and shape (rank >= 3: [..., height, width, depth]).
      max_val: the dynamic range of the images (255 for uint8, 1.0 for floats in [0, 1]).
      name: name scope.

    Returns:
      A float32 Tensor of the batch shape.

    Raises:
      ValueError: the shapes are incompatible.
    """
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.math import math_binary, math_unary, reduction_ops
    with name_scope(name, "PSNR", [a, b]):
        a, b, max_val, checks = _as_float_images(a, b, max_val)
        mse = reduction_ops.reduce_mean(math_binary.squared_difference(a, b), [-3, -2, -1])
        value = math_binary.subtract(
            20.0 * math_unary.log(max_val) / np.float32(np.log(10.0)),
            np.float32(10.0 / np.log(10.0)) * math_unary.log(mse), name="psnr")
        with control_dependencies(checks):
            return structure.identity(value)


def _gaussian_kernel(size: int, sigma, channels):
    """A normalized size x size Gaussian window, one per channel: [size, size, C, 1]."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    from tensorweave.ops.nn import nn_softmax
    coords = np.arange(size, dtype=np.float32) - (size - 1) / 2.0
    sigma = math_ops.cast(sigma, _dt.float32)
    g = -(coords ** 2)[:, None] - (coords ** 2)[None, :]
    g = array_ops.reshape(nn_softmax.softmax(
        array_ops.reshape(convert_to_tensor(g) / (2.0 * sigma * sigma), [1, -1])),
        [size, size, 1, 1])
    return _tile_channels(g, channels)


def _check_window_fits(x, filter_size: int) -> None:
    """Raises TF's build-time error of the VALID window convolution when a static height
    or width is smaller than the window (unknown sizes are checked at run time)."""
    dims = x.shape.as_list() if x.shape.ndims is not None else []
    for dim in dims[-3:-1]:
        if dim is not None and dim < filter_size:
            depth = dims[-1] if dims[-1] is not None else "?"
            raise ValueError(
                "Negative dimension size caused by subtracting %d from %d for "
                "'SSIM/depthwise' (op: 'DepthwiseConv2dNative') with input shapes: %s, "
                "[%d,%d,%s,1]." % (filter_size, dim, x.shape, filter_size, filter_size, depth))


def _window_fits(x, y, filter_size: int):
    """`x` after run-time checks (TF's) that both images are at least filter_size high
    and wide."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.debug import debug_ops
    from tensorweave.ops.math import math_binary, reduction_ops
    checks = []
    for t in (x, y):
        shape = array_ops.shape(t)
        fits = reduction_ops.reduce_all(math_binary.greater_equal(shape[-3:-1], filter_size))
        checks.append(debug_ops.Assert(fits, [
            "The images must be at least filter_size (%d) high and wide: " % filter_size,
            shape]))
    with control_dependencies(checks):
        return structure.identity(x)


def _ssim_maps(x, y, max_val, filter_size, filter_sigma, k1, k2):
    """(luminance * contrast-structure map, contrast-structure map), per channel, each
    over the VALID positions of the Gaussian window. The batch dimensions of x and y
    broadcast."""
    from tensorweave.ops.array import array_join_ops, array_ops
    from tensorweave.ops.nn import depthwise_ops
    x = _window_fits(x, y, filter_size)
    kernel = _gaussian_kernel(filter_size, filter_sigma, array_ops.shape(x)[-1])

    def window_mean(t):
        shape = array_ops.shape(t)
        flat = array_ops.reshape(t, array_join_ops.concat([[-1], shape[-3:]], 0))
        out = depthwise_ops.depthwise_conv2d(flat, kernel, [1, 1, 1, 1], "VALID")
        return array_ops.reshape(out, array_join_ops.concat(
            [shape[:-3], array_ops.shape(out)[1:]], 0))
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean_x, mean_y = window_mean(x), window_mean(y)
    num0 = mean_x * mean_y * 2.0
    den0 = mean_x * mean_x + mean_y * mean_y
    luminance = (num0 + c1) / (den0 + c1)
    num1 = window_mean(x * y) * 2.0
    den1 = window_mean(x * x + y * y)
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance * cs, cs


@tf_export("image.ssim")
def ssim(img1, img2, max_val, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03, return_index_map: bool = False) -> Tensor:
    """Structural similarity (Wang et al. 2004) between two image batches.

    Args:
      img1, img2: images [..., height, width, depth] of the same type and shape; height
        and width must be at least `filter_size`.
      max_val: the dynamic range of the images.
      filter_size: the size of the Gaussian window.
      filter_sigma: its standard deviation.
      k1, k2: the SSIM stabilizing constants.
      return_index_map: return the SSIM map (averaged over channels) instead of its mean.

    Returns:
      A float32 Tensor of the batch shape (or the map [..., h', w']).

    Raises:
      ValueError: the shapes are incompatible.
      InvalidArgumentError: at run time, an image smaller than the window.
    """
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.math import reduction_ops
    with name_scope(None, "SSIM", [img1, img2]):
        x, y, max_val, checks = _as_float_images(img1, img2, max_val)
        _check_window_fits(x, filter_size)
        if checks:
            with control_dependencies(checks):
                x = structure.identity(x)
        index_map, _ = _ssim_maps(x, y, max_val, filter_size, filter_sigma, k1, k2)
        if return_index_map:
            return reduction_ops.reduce_mean(index_map, [-1])
        per_channel = reduction_ops.reduce_mean(index_map, [-3, -2])
        return reduction_ops.reduce_mean(per_channel, [-1])


@tf_export("image.sobel_edges")
def sobel_edges(image) -> Tensor:
    """Sobel edge maps of each channel: the vertical (dy) and horizontal (dx) responses,
    the image padded by reflection.

    Args:
      image: a float Tensor [batch, height, width, depth].

    Returns:
      A Tensor [batch, height, width, depth, 2]: [..., 0] is dy, [..., 1] is dx.
    """
    from tensorweave.ops.array import array_join_ops, array_ops, array_pad_ops
    from tensorweave.ops.nn import depthwise_ops
    with name_scope(None, "sobel_edges", [image]):
        image = convert_to_tensor(image, name="image")
        dy = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
        kernels = np.stack([dy, dy.T], axis=-1)[:, :, None, :]  # [3, 3, 1, 2]
        kernels = convert_to_tensor(kernels.astype(image.dtype.as_numpy_dtype))
        shape = array_ops.shape(image)
        kernels = _tile_channels(kernels, shape[-1])
        padded = array_pad_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
        out = depthwise_ops.depthwise_conv2d(padded, kernels, [1, 1, 1, 1], "VALID")
        return array_ops.reshape(out, array_join_ops.concat([shape, [2]], 0))


def _tile_channels(kernel, channels):
    from tensorweave.ops.array import array_join_ops
    return array_join_ops.tile(kernel, array_join_ops.stack([1, 1, channels, 1]))


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)  # Wang et al. 2003, as TF's


@tf_export("image.ssim_multiscale")
def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size: int = 11,
                    filter_sigma: float = 1.5, k1: float = 0.01, k2: float = 0.03) -> Tensor:
    """Multi-scale structural similarity (Wang, Simoncelli and Bovik 2003), as TF1's
    `tf.image.ssim_multiscale`: at each scale the images are halved (2x2 average, after
    repeating the last row or column of an odd size); the result is the product over
    scales of the mean contrast-structure term (the mean SSIM at the last scale), each
    clipped at 0 and raised to its power factor, averaged over channels.

    Args:
      img1, img2: images [..., height, width, depth] of the same type and shape, at least
        filter_size * 2**(len(power_factors) - 1) high and wide.
      max_val: the dynamic range of the images.
      power_factors: one exponent per scale.
      filter_size, filter_sigma, k1, k2: as for `ssim`.

    Returns:
      A float32 Tensor of the batch shape.

    Raises:
      ValueError: the shapes are incompatible.
    """
    from tensorweave.ops.array import array_join_ops, array_ops, array_pad_ops
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    from tensorweave.ops.nn import nn_ops, pooling_ops
    with name_scope(None, "MS-SSIM", [img1, img2]):
        x, y, max_val, checks = _as_float_images(img1, img2, max_val)
        with control_dependencies(checks):
            shapes = [array_ops.shape(x), array_ops.shape(y)]
        # each image keeps its own batch dimensions (they broadcast in the SSIM terms)
        heads = [shape[:-3] for shape in shapes]
        tails = [shape[-3:] for shape in shapes]
        imgs = [x, y]
        terms = []
        for k in range(len(power_factors)):
            with name_scope(None, "Scale%d" % k, imgs):
                if k > 0:
                    flat = [array_ops.reshape(t, array_join_ops.concat([[-1], tail], 0))
                            for t, tail in zip(imgs, tails)]
                    odd = math_binary.floormod(tails[0], [2, 2, 1])
                    pads = array_pad_ops.pad(array_ops.stack(
                        [array_ops.zeros_like(odd), odd], axis=-1), [[1, 0], [0, 0]])
                    halved = [pooling_ops.avg_pool(
                        array_pad_ops.pad(t, pads, mode="SYMMETRIC"), [1, 2, 2, 1],
                        [1, 2, 2, 1], "VALID") for t in flat]
                    tails = [array_ops.shape(t)[1:] for t in halved]
                    imgs = [array_ops.reshape(t, array_join_ops.concat([head, tail], 0))
                            for t, head, tail in zip(halved, heads, tails)]
                ssim_map, cs_map = _ssim_maps(imgs[0], imgs[1], max_val, filter_size,
                                              filter_sigma, k1, k2)
                terms.append(nn_ops.relu(reduction_ops.reduce_mean(cs_map, [-3, -2])))
        terms[-1] = nn_ops.relu(reduction_ops.reduce_mean(ssim_map, [-3, -2]))
        scales = array_ops.stack(terms, axis=-1)
        per_channel = reduction_ops.reduce_prod(
            math_binary.pow(scales, math_ops.cast(list(power_factors), scales.dtype)), [-1])
        result = reduction_ops.reduce_mean(per_channel, [-1])
        if x.shape.ndims is not None and y.shape.ndims is not None:
            result.set_shape(broadcast_shapes(x.shape[:-3], y.shape[:-3]))
        return result
