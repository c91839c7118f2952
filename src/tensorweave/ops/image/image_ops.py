"""Crops, pads, flips, transpositions and rotations of images (part of the image family).

All are compositions of array ops (slice, pad, reverse, transpose), so they need no
kernels or gradients of their own. As in TF1, an image is [height, width, channels] or a
batch [batch, height, width, channels]; checks on sizes known at build time raise
ValueError there, the others become run-time assertions (InvalidArgumentError).
"""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.array import array_ops
from tensorweave.ops.control_flow import structure
from tensorweave.ops.indexing import indexing_ops
from tensorweave.ops.math import math_binary


# --- shared checks -------------------------------------------------------------------------
def check_image(image: Tensor, require_static: bool = False) -> TensorShape:
    """The static shape of `image`, checked to be of rank >= 3 (TF1's messages)."""
    shape = image.shape
    if shape.ndims is None:
        if require_static:
            raise ValueError("'image' (shape %s) must be fully defined." % shape)
        return shape
    if shape.ndims < 3:
        raise ValueError("'image' (shape %s) must be at least three-dimensional." % shape)
    if require_static and not shape.is_fully_defined():
        raise ValueError("'image' (shape %s) must be fully defined." % shape)
    if any(d == 0 for d in shape.as_list()):
        raise ValueError("all dims of 'image.shape' must be > 0.")
    return shape


def static_value(x):
    """`x` as a Python int if known at build time, else None."""
    if isinstance(x, Tensor):
        v = tensor_util.constant_value(x)
        return None if v is None else int(v)
    return int(x)


def assert_that(condition, message: str, error=ValueError) -> List:
    """Raises `error(message)` now if `condition` is a Python value that is False; for a
    Tensor condition returns an Assert op (run it before the result). As TF's `_assert`,
    a Tensor is checked at run time even when its value is a constant."""
    if not isinstance(condition, Tensor):
        if not condition:
            raise error(message)
        return []
    from tensorweave.ops.debug.debug_ops import Assert
    return [Assert(condition, [message])]


def with_asserts(asserts: List, tensor: Tensor) -> Tensor:
    return structure.with_dependencies(asserts, tensor) if asserts else tensor


def image_dims(image: Tensor, rank: int) -> list:
    """Each dimension of `image`: a Python int if static, else a scalar int32 Tensor."""
    static = image.shape.with_rank(rank).as_list()
    dynamic = array_ops.shape(image)
    return [s if s is not None else dynamic[i] for i, s in enumerate(static)]


def _as_batch(image: Tensor):
    """`image` as a 4-D batch, and whether it was a single 3-D image.

    As in TF, an image of unknown rank (say, the output of decode_image) is taken to be a
    single 3-D image.
    """
    rank = image.shape.ndims
    if rank == 3 or rank is None:
        batch = array_ops.expand_dims(image, 0)
        if rank is None:
            batch.set_shape([None] * 4)
        return batch, True
    return image, False


def _unbatch(image: Tensor, single: bool) -> Tensor:
    return array_ops.squeeze(image, axis=[0]) if single else image


def _ge(a, b):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return math_binary.greater_equal(a, b)
    return a >= b


def _gt(a, b):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return math_binary.greater(a, b)
    return a > b


# --- crop and pad ------------------------------------------------------------------------------
@tf_export("image.crop_to_bounding_box")
def crop_to_bounding_box(image, offset_height, offset_width, target_height,
                         target_width) -> Tensor:
    """The [target_height, target_width] region of `image` whose top-left corner is at
    (offset_height, offset_width).

    Args:
      image: a 3-D or 4-D image Tensor.
      offset_height, offset_width: the corner (ints or scalar int32 Tensors, >= 0).
      target_height, target_width: the size (> 0).

    Returns:
      The cropped image(s), of the rank of `image`.

    Raises:
      ValueError: a bad rank, or a size known at build time that does not fit.
    """
    with _graph.name_scope(None, "crop_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        check_image(image)
        batch, single = _as_batch(image)
        _, height, width, depth = image_dims(batch, 4)
        asserts = assert_that(_ge(offset_width, 0), "offset_width must be >= 0.")
        asserts += assert_that(_ge(offset_height, 0), "offset_height must be >= 0.")
        asserts += assert_that(_gt(target_width, 0), "target_width must be > 0.")
        asserts += assert_that(_gt(target_height, 0), "target_height must be > 0.")
        asserts += assert_that(_ge(width, _add(target_width, offset_width)),
                               "width must be >= target + offset.")
        asserts += assert_that(_ge(height, _add(target_height, offset_height)),
                               "height must be >= target + offset.")
        batch = with_asserts(asserts, batch)
        cropped = indexing_ops.slice(
            batch, array_ops.stack([0, offset_height, offset_width, 0]),
            array_ops.stack([-1, target_height, target_width, -1]))
        cropped.set_shape([batch.shape[0].value, static_value(target_height),
                           static_value(target_width), batch.shape[3].value])
        return _unbatch(cropped, single)


def _add(a, b):
    return math_binary.add(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) else a + b


def _sub(a, b):
    return math_binary.subtract(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) \
        else a - b


@tf_export("image.pad_to_bounding_box")
def pad_to_bounding_box(image, offset_height, offset_width, target_height,
                        target_width) -> Tensor:
    """`image` padded with zeros to [target_height, target_width], its top-left corner at
    (offset_height, offset_width).

    Args:
      image: a 3-D or 4-D image Tensor.
      offset_height, offset_width: rows and columns of zeros above and to the left.
      target_height, target_width: the size of the result.

    Returns:
      The padded image(s), of the rank of `image`.

    Raises:
      ValueError: a bad rank, or a size known at build time that does not fit.
    """
    with _graph.name_scope(None, "pad_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        check_image(image)
        batch, single = _as_batch(image)
        _, height, width, depth = image_dims(batch, 4)
        after_width = _sub(_sub(target_width, offset_width), width)
        after_height = _sub(_sub(target_height, offset_height), height)
        asserts = assert_that(_ge(offset_height, 0), "offset_height must be >= 0")
        asserts += assert_that(_ge(offset_width, 0), "offset_width must be >= 0")
        asserts += assert_that(_ge(after_width, 0), "width must be <= target - offset")
        asserts += assert_that(_ge(after_height, 0), "height must be <= target - offset")
        batch = with_asserts(asserts, batch)
        paddings = array_ops.reshape(
            array_ops.stack([0, 0, offset_height, after_height, offset_width, after_width,
                             0, 0]), [4, 2])
        padded = array_ops.pad(batch, paddings)
        padded.set_shape([batch.shape[0].value, static_value(target_height),
                          static_value(target_width), batch.shape[3].value])
        return _unbatch(padded, single)


def _max(a, b):
    return math_binary.maximum(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) \
        else max(a, b)


def _min(a, b):
    return math_binary.minimum(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) \
        else min(a, b)


def _floordiv(a, b):
    return math_binary.floordiv(a, b) if isinstance(a, Tensor) else a // b


def _neg(a):
    return math_binary.multiply(a, -1) if isinstance(a, Tensor) else -a


@tf_export("image.resize_image_with_crop_or_pad")
def resize_image_with_crop_or_pad(image, target_height, target_width) -> Tensor:
    """Crops (centrally) or pads (evenly, with zeros) `image` to the target size.

    Args:
      image: a 3-D or 4-D image Tensor.
      target_height, target_width: the size of the result (> 0).

    Returns:
      The image(s) of size [target_height, target_width], of the rank of `image`.

    Raises:
      ValueError: a bad rank, or a target size known at build time that is not > 0.
    """
    with _graph.name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = convert_to_tensor(image, name="image")
        check_image(image)
        assert_that(_gt(target_width, 0), "target_width must be > 0.")
        assert_that(_gt(target_height, 0), "target_height must be > 0.")
        batch, single = _as_batch(image)
        _, height, width, _ = image_dims(batch, 4)
        width_diff = _sub(target_width, width)
        height_diff = _sub(target_height, height)
        crop_w = _max(_floordiv(_neg(width_diff), 2), 0)
        pad_w = _max(_floordiv(width_diff, 2), 0)
        crop_h = _max(_floordiv(_neg(height_diff), 2), 0)
        pad_h = _max(_floordiv(height_diff, 2), 0)
        cropped = crop_to_bounding_box(batch, crop_h, crop_w, _min(target_height, height),
                                       _min(target_width, width))
        resized = pad_to_bounding_box(cropped, pad_h, pad_w, target_height, target_width)
        resized.set_shape([batch.shape[0].value, static_value(target_height),
                           static_value(target_width), batch.shape[3].value])
        return _unbatch(resized, single)


@tf_export("image.central_crop")
def central_crop(image, central_fraction) -> Tensor:
    """The central part of `image`, `central_fraction` of its height and width.

    Args:
      image: a 3-D or 4-D image Tensor.
      central_fraction: a float in (0, 1], or a float scalar Tensor.

    Returns:
      The cropped image(s).

    Raises:
      ValueError: `central_fraction` known to be out of (0, 1], or a bad rank.
    """
    from tensorweave.ops.math import math_ops
    with _graph.name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        fraction = tensor_util.constant_value(central_fraction) \
            if isinstance(central_fraction, Tensor) else central_fraction
        if fraction is not None:
            fraction = float(fraction)
            if fraction <= 0.0 or fraction > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction == 1.0:
                return image
        else:
            in_range = math_binary.logical_and(math_binary.greater(central_fraction, 0.0),
                                               math_binary.less_equal(central_fraction, 1.0))
            image = with_asserts(assert_that(in_range, "central_fraction must be within "
                                             "(0, 1]"), image)
        check_image(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError("`image` should either be a Tensor with rank = 3 or rank = 4. "
                             "Had rank = %s." % rank)
        batch, single = _as_batch(image)
        _, height, width, depth = image_dims(batch, 4)
        starts, sizes, static_sizes = [], [], []
        for dim in (height, width):
            if isinstance(dim, Tensor) or fraction is None:
                # as TF: a Python fraction becomes a float32 tensor before the float64
                # arithmetic, so 0.6 is 0.6000000238 here (and not in the static case)
                as_float = math_ops.cast(dim, _dt.float64)
                scaled = as_float * math_ops.cast(convert_to_tensor(central_fraction),
                                                  _dt.float64)
                start = math_ops.cast((as_float - scaled) / 2, _dt.int32)
            else:
                start = int((float(dim) - float(dim) * fraction) / 2)
            size = _sub(dim, _add(start, start))
            starts.append(start)
            sizes.append(size)
            static_sizes.append(size if isinstance(size, int) else None)
        cropped = indexing_ops.slice(batch, array_ops.stack([0, starts[0], starts[1], 0]),
                                     array_ops.stack([-1, sizes[0], sizes[1], -1]))
        cropped.set_shape([batch.shape[0].value] + static_sizes + [batch.shape[3].value])
        return _unbatch(cropped, single)


# --- flips, transposes, rotations ----------------------------------------------------------
def _check_3d_or_4d(image: Tensor) -> Optional[int]:
    """The rank of `image`: 3, 4, or None if unknown at build time."""
    check_image(image)
    rank = image.shape.ndims
    if rank not in (3, 4, None):
        raise ValueError("'image' (shape %s) must have either 3 or 4 dimensions."
                         % image.shape)
    return rank


def _spatial_axis(image: Tensor, axis: int) -> int:
    """The index of spatial axis `axis` (0: height, 1: width) for a 3-D or 4-D image.

    An image of unknown rank is taken as a 4-D batch: TF's rot90 and transpose_image do
    the same in effect (a 3-D image of unknown static rank fails there at run time).
    """
    rank = _check_3d_or_4d(image)
    return axis + (rank or 4) - 3


def _by_rank(image: Tensor, rank3, rank4) -> Tensor:
    """`rank3()` for a 3-D image, `rank4()` for a batch; for an image of unknown rank, TF's
    flips choose between them at run time on the rank."""
    rank = _check_3d_or_4d(image)
    if rank == 3:
        return rank3()
    if rank == 4:
        return rank4()
    from tensorweave.ops.control_flow.control_flow_ops import cond
    return cond(math_binary.equal(array_ops.rank(image), 3), rank3, rank4)


def _flip(image, axis: int, scope: str) -> Tensor:
    with _graph.name_scope(None, scope, [image]):
        image = convert_to_tensor(image, name="image")
        return _by_rank(image, lambda: array_ops.reverse(image, [axis]),
                        lambda: array_ops.reverse(image, [axis + 1]))


@tf_export("image.flip_left_right")
def flip_left_right(image) -> Tensor:
    """`image` mirrored horizontally (the width axis reversed).

    Args:
      image: a 3-D or 4-D image Tensor.

    Returns:
      A Tensor of the shape and type of `image`.
    """
    return _flip(image, 1, "flip_left_right")


@tf_export("image.flip_up_down")
def flip_up_down(image) -> Tensor:
    """`image` mirrored vertically (the height axis reversed).

    Args:
      image: a 3-D or 4-D image Tensor.

    Returns:
      A Tensor of the shape and type of `image`.
    """
    return _flip(image, 0, "flip_up_down")


@tf_export("image.transpose_image", "image.transpose")
def transpose_image(image, name: Optional[str] = None) -> Tensor:
    """`image` with its height and width swapped.

    Args:
      image: a 3-D or 4-D image Tensor.
      name: name scope.

    Returns:
      The transposed image(s).
    """
    with _graph.name_scope(name, "transpose", [image]):
        image = convert_to_tensor(image, name="image")
        h = _spatial_axis(image, 0)
        perm = [1, 0, 2] if h == 0 else [0, 2, 1, 3]
        return array_ops.transpose(image, perm)


def _rot90_static(image: Tensor, k: int) -> Tensor:
    h = _spatial_axis(image, 0)
    perm = [1, 0, 2] if h == 0 else [0, 2, 1, 3]
    if k == 0:
        return image
    if k == 1:
        return array_ops.transpose(array_ops.reverse(image, [h + 1]), perm)
    if k == 2:
        return array_ops.reverse(image, [h, h + 1])
    return array_ops.reverse(array_ops.transpose(image, perm), [h + 1])


@tf_export("image.rot90")
def rot90(image, k=1, name: Optional[str] = None) -> Tensor:
    """`image` rotated counter-clockwise by k quarter turns.

    Args:
      image: a 3-D or 4-D image Tensor.
      k: an int or scalar int32 Tensor: the number of quarter turns.
      name: name scope.

    Returns:
      The rotated image(s).
    """
    with _graph.name_scope(name, "rot90", [image, k]):
        image = convert_to_tensor(image, name="image")
        _spatial_axis(image, 0)
        known = static_value(k)
        if known is not None:
            return _rot90_static(image, known % 4)
        from tensorweave.ops.control_flow.case_ops import case
        k = math_binary.floormod(convert_to_tensor(k, _dt.int32, name="k"), 4)
        branches = [(math_binary.equal(k, i), (lambda i=i: _rot90_static(image, i)))
                    for i in (1, 2, 3)]
        result = case(branches, default=lambda: image, exclusive=True)
        if image.shape.ndims is None:
            return result
        h = image.shape.ndims - 3
        dims = image.shape.as_list()
        spatial = dims[h:h + 2]
        if spatial[0] != spatial[1]:
            spatial = [None, None]
        result.set_shape(dims[:h] + spatial + dims[h + 2:])
        return result


# --- random flips and crops --------------------------------------------------------------------
def _random_flip(image, axis: int, seed, scope: str) -> Tensor:
    from tensorweave.ops.math import math_ops, math_unary
    from tensorweave.ops.random import random_ops
    with _graph.name_scope(None, scope, [image]):
        image = convert_to_tensor(image, name="image")

        def flip_one():
            from tensorweave.ops.control_flow.control_flow_ops import cond
            uniform = random_ops.random_uniform([], 0, 1.0, seed=seed)
            result = cond(math_binary.less(uniform, 0.5),
                          lambda: array_ops.reverse(image, [axis]), lambda: image)
            result.set_shape(image.shape)
            return result

        def flip_batch():
            batch = array_ops.shape(image)[0]
            uniform = random_ops.random_uniform(array_ops.stack([batch]), 0, 1.0, seed=seed)
            flips = math_ops.cast(math_unary.round(
                array_ops.reshape(uniform, array_ops.stack([batch, 1, 1, 1]))), image.dtype)
            flipped = array_ops.reverse(image, [axis + 1])
            return flips * flipped + (1 - flips) * image

        return _by_rank(image, flip_one, flip_batch)


@tf_export("image.random_flip_left_right")
def random_flip_left_right(image, seed: Optional[int] = None) -> Tensor:
    """`image` mirrored horizontally with probability 1/2 (each image of a batch drawn
    independently).

    Args:
      image: a 3-D or 4-D image Tensor.
      seed: the op seed (TF1's seed rules with the graph seed).

    Returns:
      A Tensor of the shape and type of `image`.
    """
    return _random_flip(image, 1, seed, "random_flip_left_right")


@tf_export("image.random_flip_up_down")
def random_flip_up_down(image, seed: Optional[int] = None) -> Tensor:
    """`image` mirrored vertically with probability 1/2 (each image of a batch drawn
    independently).

    Args:
      image: a 3-D or 4-D image Tensor.
      seed: the op seed (TF1's seed rules with the graph seed).

    Returns:
      A Tensor of the shape and type of `image`.
    """
    return _random_flip(image, 0, seed, "random_flip_up_down")


@tf_export("image.random_crop", "random_crop")
def random_crop(value, size, seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """A slice of `value` of shape `size` at a uniformly random offset.

    Args:
      value: the Tensor to crop.
      size: a 1-D int32 Tensor, the size of the slice (<= value's shape).
      seed: the op seed (TF1's seed rules with the graph seed).
      name: name scope.

    Returns:
      A Tensor of the type of `value` and shape `size`.

    Raises:
      InvalidArgumentError (at run time): `size` larger than the shape of `value`.
    """
    from tensorweave.ops.debug.debug_ops import Assert
    from tensorweave.ops.math import reduction_ops
    from tensorweave.ops.random import random_ops
    with _graph.name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=_dt.int32, name="size")
        shape = array_ops.shape(value)
        check = Assert(reduction_ops.reduce_all(math_binary.greater_equal(shape, size)),
                       ["Need value.shape >= size, got ", shape, size], summarize=1000)
        shape = structure.with_dependencies([check], shape)
        limit = shape - size + 1
        offset = math_binary.floormod(
            random_ops.random_uniform(array_ops.shape(shape), dtype=_dt.int32,
                                      maxval=_dt.int32.max, seed=seed), limit)
        return indexing_ops.slice(value, offset, size, name=scope)


@tf_export("image.resize_image_with_pad")
def resize_image_with_pad(image, target_height, target_width, method=0,
                          align_corners: bool = False) -> Tensor:
    """Resizes `image` to fit in [target_height, target_width] keeping its aspect ratio,
    then pads it with zeros (evenly) to exactly that size.

    Args:
      image: a 3-D or 4-D image Tensor.
      target_height, target_width: the size of the result (> 0).
      method: a tf.image.ResizeMethod.
      align_corners: see tf.image.resize_images.

    Returns:
      The resized and padded image(s); float32 unless `method` is NEAREST_NEIGHBOR.

    Raises:
      ValueError: a bad rank, or a target size known at build time that is not > 0.
    """
    from tensorweave.ops.image.resize_ops import resize_images
    from tensorweave.ops.math import math_ops, math_unary
    with _graph.name_scope(None, "resize_image_with_pad", [image]):
        image = convert_to_tensor(image, name="image")
        rank = image.shape.ndims
        single = rank != 4
        if rank == 3 or rank is None:
            image = array_ops.expand_dims(image, 0)
            if rank is None:
                image.set_shape([None] * 4)
        elif rank != 4:
            raise ValueError("'image' (shape %s) must have either 3 or 4 dimensions."
                             % image.shape)
        check_image(image)
        asserts = assert_that(_gt(target_width, 0), "target_width must be > 0.")
        asserts += assert_that(_gt(target_height, 0), "target_height must be > 0.")
        image = with_asserts(asserts, image)
        _, height, width, _ = image_dims(image, 4)

        def f32(v):
            return math_ops.cast(v, _dt.float32)
        f_height, f_width = f32(height), f32(width)
        f_target_h, f_target_w = f32(target_height), f32(target_width)
        ratio = math_binary.maximum(f_width / f_target_w, f_height / f_target_h)
        resized_h_float, resized_w_float = f_height / ratio, f_width / ratio
        resized_h = math_ops.cast(math_unary.floor(resized_h_float), _dt.int32)
        resized_w = math_ops.cast(math_unary.floor(resized_w_float), _dt.int32)
        pad_h = math_binary.maximum(0, math_ops.cast(
            math_unary.floor((f_target_h - resized_h_float) / 2), _dt.int32))
        pad_w = math_binary.maximum(0, math_ops.cast(
            math_unary.floor((f_target_w - resized_w_float) / 2), _dt.int32))
        resized = resize_images(image, array_ops.stack([resized_h, resized_w]), method,
                                align_corners=align_corners)
        padded = pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
        return _unbatch(padded, single)


@tf_export("image.total_variation")
def total_variation(images, name: Optional[str] = None) -> Tensor:
    """The total variation: the sum of the absolute differences of neighbouring pixels
    (vertically and horizontally), per image for a batch.

    Args:
      images: a 3-D image or a 4-D batch.
      name: name scope.

    Returns:
      A scalar (3-D input) or a [batch] Tensor of the type of `images`.

    Raises:
      ValueError: `images` is not 3-D or 4-D.
    """
    from tensorweave.ops.math import math_unary, reduction_ops
    with _graph.name_scope(name, "total_variation", [images]):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.ndims
        if rank == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif rank == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return reduction_ops.reduce_sum(math_unary.abs(dif1), axis=axis) + \
            reduction_ops.reduce_sum(math_unary.abs(dif2), axis=axis)


@tf_export("image.image_gradients")
def image_gradients(image):
    """The forward differences of a batch of images along height (dy) and width (dx),
    zero in the last row (dy) and column (dx).

    Args:
      image: a 4-D Tensor [batch, height, width, depth].

    Returns:
      A pair (dy, dx) of Tensors of the shape and type of `image`.

    Raises:
      ValueError: `image` is not 4-D.
    """
    image = convert_to_tensor(image)
    if image.shape.ndims != 4:
        raise ValueError("image_gradients expects a 4D tensor [batch_size, h, w, d], not %s."
                         % image.shape)
    shape = array_ops.shape(image)
    batch, height, width, depth = array_ops.unstack(shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_ops.concat([dy, array_ops.zeros(array_ops.stack([batch, 1, width, depth]),
                                               image.dtype)], 1)
    dx = array_ops.concat([dx, array_ops.zeros(array_ops.stack([batch, height, 1, depth]),
                                               image.dtype)], 2)
    return array_ops.reshape(dy, shape), array_ops.reshape(dx, shape)
