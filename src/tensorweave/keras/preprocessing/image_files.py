"""Images as files, PIL images and NumPy arrays, as TF 2.15's Keras converts them
(keras/src/utils/image_utils.py): `load_img`, `img_to_array`, `array_to_img`,
`save_img` (also under `tf.keras.utils`), and `smart_resize`.

`smart_resize` is in TF 2.15's v2 API only (`tf.keras.preprocessing.image.smart_resize`;
`tf.compat.v1` leaves it out), so it is not exported to the TF1 namespace; it is defined
here for programs that reach it through this module. A tensor comes back as a tensor
of this graph; a NumPy array is resized in a graph of its own and comes back as an
array, as TF 2's eager function returns one.
"""
from __future__ import annotations

import io
import pathlib
import warnings
from typing import Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend

try:
    from PIL import Image as _pil_image
except ImportError:  # Pillow is a dependency; kept optional as Keras keeps it
    _pil_image = None

# Keras' names of the PIL resampling filters `load_img` resizes with
_PIL_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")

# the tf.image.resize (v2) methods of smart_resize; the rest have no kernel here
_SMART_RESIZE_METHODS = ("bilinear", "nearest", "bicubic", "area")
_SMART_RESIZE_UNSUPPORTED = ("lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _pil_resample(interpolation: str):
    resampling = getattr(_pil_image, "Resampling", _pil_image)
    return getattr(resampling, interpolation.upper())


def _check_data_format(data_format: str, message: str) -> None:
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("%s: %s" % (message, data_format))


@tf_export("keras.utils.array_to_img", "keras.preprocessing.image.array_to_img")
def array_to_img(x, data_format: Optional[str] = None, scale: bool = True,
                 dtype: Optional[str] = None):
    """Converts a 3D NumPy array to a PIL Image.

    Args:
      x: the image, in any form NumPy converts to an array of rank 3.
      data_format: 'channels_first' or 'channels_last'; None means
        `tf.keras.backend.image_data_format()`.
      scale: rescale the values so that their minimum and maximum become 0 and 255.
      dtype: the dtype `x` is read as; None means `tf.keras.backend.floatx()`.

    Returns:
      A PIL Image: 'RGBA', 'RGB' or 'L' for 4, 3 or 1 channels ('I', 32-bit integers,
      for one channel above 255). Values are truncated to integers.

    Raises:
      ImportError: Pillow is not installed.
      ValueError: `x` not of rank 3, an unknown `data_format`, a channel count other
        than 1, 3 or 4.
    """
    if data_format is None:
        data_format = backend.image_data_format()
    if dtype is None:
        dtype = backend.floatx()
    if _pil_image is None:
        raise ImportError("Could not import PIL.Image. The use of `array_to_img` requires "
                          "PIL.")
    x = np.asarray(x, dtype=dtype)
    if x.ndim != 3:
        raise ValueError("Expected image array to have rank 3 (single image). Got array "
                         "with shape: %s" % (x.shape,))
    _check_data_format(data_format, "Invalid data_format")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        x_max = np.max(x)
        if x_max != 0:
            x /= x_max
        x *= 255
    channels = x.shape[2]
    if channels == 4:
        return _pil_image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return _pil_image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:  # beyond 8 bits: a 32-bit integer image
            return _pil_image.fromarray(x[:, :, 0].astype("int32"), "I")
        return _pil_image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError("Unsupported channel number: %s" % (channels,))


@tf_export("keras.utils.img_to_array", "keras.preprocessing.image.img_to_array")
def img_to_array(img, data_format: Optional[str] = None,
                 dtype: Optional[str] = None) -> np.ndarray:
    """Converts a PIL Image (or anything NumPy reads as an image) to a 3D NumPy array.

    Args:
      img: the image.
      data_format: 'channels_first' or 'channels_last'; None means
        `tf.keras.backend.image_data_format()`.
      dtype: the array's dtype; None means `tf.keras.backend.floatx()`.

    Returns:
      An array of shape (height, width, channels), or (channels, height, width) for
      'channels_first'; a single-channel image gets a channel axis of size 1.

    Raises:
      ValueError: an unknown `data_format`, an image that is not of rank 2 or 3.
    """
    if data_format is None:
        data_format = backend.image_data_format()
    if dtype is None:
        dtype = backend.floatx()
    _check_data_format(data_format, "Unknown data_format")
    x = np.asarray(img, dtype=dtype)
    if x.ndim == 3:
        if data_format == "channels_first":
            x = x.transpose(2, 0, 1)
    elif x.ndim == 2:
        if data_format == "channels_first":
            x = x.reshape((1,) + x.shape)
        else:
            x = x.reshape(x.shape + (1,))
    else:
        raise ValueError("Unsupported image shape: %s" % (x.shape,))
    return x


@tf_export("keras.utils.save_img", "keras.preprocessing.image.save_img")
def save_img(path, x, data_format: Optional[str] = None, file_format: Optional[str] = None,
             scale: bool = True, **kwargs) -> None:
    """Saves an image given as a NumPy array to a path or a file object.

    Args:
      path: a path, or a file object (then give `file_format`).
      x: the image (see `array_to_img`).
      data_format: 'channels_first' or 'channels_last'; None means
        `tf.keras.backend.image_data_format()`.
      file_format: the format ('png', 'jpeg', ...); None means the path's extension.
      scale: rescale the values to [0, 255] (see `array_to_img`).
      **kwargs: passed on to `PIL.Image.Image.save`.

    An RGBA image saved as 'jpg' or 'jpeg' is converted to RGB first, with a warning.
    """
    if data_format is None:
        data_format = backend.image_data_format()
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format in ("jpg", "jpeg"):
        warnings.warn("The JPG format does not support RGBA images, converting to RGB.")
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


@tf_export("keras.utils.load_img", "keras.preprocessing.image.load_img")
def load_img(path, grayscale: bool = False, color_mode: str = "rgb",
             target_size: Optional[Tuple[int, int]] = None, interpolation: str = "nearest",
             keep_aspect_ratio: bool = False):
    """Loads an image file as a PIL Image.

    Args:
      path: a path (str, bytes or pathlib.Path) or an io.BytesIO.
      grayscale: deprecated; True means `color_mode='grayscale'`.
      color_mode: 'grayscale', 'rgb' or 'rgba': the mode the image is converted to
        (a grayscale image of 16 or 32 bits is kept as it is).
      target_size: None (the file's size) or (height, width).
      interpolation: the PIL filter of a resize: 'nearest', 'bilinear', 'bicubic',
        'hamming', 'box' or 'lanczos'.
      keep_aspect_ratio: resize the largest centered crop of the target's aspect ratio
        instead of the whole image.

    Returns:
      A PIL Image.

    Raises:
      ImportError: Pillow is not installed.
      TypeError: `path` of another type.
      ValueError: an unknown `color_mode`, or an unknown `interpolation` when the image
        is resized.
    """
    if grayscale:
        warnings.warn('grayscale is deprecated. Please use color_mode = "grayscale"')
        color_mode = "grayscale"
    if _pil_image is None:
        raise ImportError("Could not import PIL.Image. The use of `load_img` requires PIL.")
    if isinstance(path, io.BytesIO):
        img = _pil_image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as f:  # read whole, so that no file handle stays open
            img = _pil_image.open(io.BytesIO(f.read()))
    else:
        raise TypeError("path should be path-like or io.BytesIO, not %s" % (type(path),))
    wanted_modes = {"grayscale": ("L", "I;16", "I"), "rgba": ("RGBA",), "rgb": ("RGB",)}
    if color_mode not in wanted_modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode not in wanted_modes[color_mode]:
        img = img.convert(wanted_modes[color_mode][0])
    if target_size is None:
        return img
    width_height = (target_size[1], target_size[0])
    if img.size == width_height:
        return img
    if interpolation not in _PIL_INTERPOLATIONS:
        raise ValueError("Invalid interpolation method %s specified. Supported methods are "
                         "%s" % (interpolation, ", ".join(_PIL_INTERPOLATIONS)))
    resample = _pil_resample(interpolation)
    if not keep_aspect_ratio:
        return img.resize(width_height, resample)
    width, height = img.size
    target_width, target_height = width_height
    crop_height = min(height, (width * target_height) // target_width)
    crop_width = min(width, (height * target_width) // target_height)
    top = (height - crop_height) // 2
    left = (width - crop_width) // 2
    box = [left, top, left + crop_width, top + crop_height]
    return img.resize(width_height, resample, box=box)


def smart_resize(x, size: Sequence[int], interpolation: str = "bilinear"):
    """Resizes images to `size` without distorting their aspect ratio: the largest
    centered crop of the target's aspect ratio is resized (by `tf.image.resize` of TF 2:
    half-pixel centers, no antialiasing).

    Args:
      x: an image (height, width, channels) or a batch of them (batch, height, width,
        channels): a Tensor or a NumPy array.
      size: (height, width).
      interpolation: 'bilinear', 'nearest', 'bicubic' or 'area'.

    Returns:
      A Tensor for a Tensor `x`, a NumPy array for an array: float32, or `x`'s dtype
      for 'nearest'.

    Raises:
      ValueError: `size` not of length 2, `x` not of rank 3 or 4, an unknown
        `interpolation`.
      NotImplementedError: 'lanczos3', 'lanczos5', 'gaussian' or 'mitchellcubic'
        (TF's ScaleAndTranslate kernel, which tensorweave lacks).
    """
    import tensorweave as tf

    if len(size) != 2:
        raise ValueError("Expected `size` to be a tuple of 2 integers, but got: %s."
                         % (size,))
    if interpolation in _SMART_RESIZE_UNSUPPORTED:
        raise NotImplementedError("smart_resize(interpolation=%r) is not supported by "
                                  "tensorweave (no ScaleAndTranslate kernel)"
                                  % interpolation)
    if interpolation not in _SMART_RESIZE_METHODS:
        raise ValueError("Value not recognized for `interpolation`: %s. Supported values "
                         "are: %s" % (interpolation, _SMART_RESIZE_METHODS
                                      + _SMART_RESIZE_UNSUPPORTED))
    if isinstance(x, np.ndarray):
        with tf.Graph().as_default():
            resized = _smart_resize_graph(tf, tf.constant(x), size, interpolation)
            with tf.Session() as sess:
                return sess.run(resized)
    return _smart_resize_graph(tf, tf.convert_to_tensor(x), size, interpolation)


def _smart_resize_graph(tf, img, size, interpolation: str):
    """The ops of `smart_resize` on the tensor `img` (TF 2.15's computation: the crop
    size and start are float32 quotients truncated to int32)."""
    rank = img.shape.ndims
    if rank is not None and not 3 <= rank <= 4:
        raise ValueError("Expected an image array with shape `(height, width, channels)`, "
                         "or `(batch_size, height, width, channels)`, but got input with "
                         "incorrect rank, of shape %s." % (img.shape,))
    shape = tf.shape(img)
    height, width = shape[-3], shape[-2]
    target_height, target_width = size

    def ratio(a, b):
        return tf.cast(tf.cast(a, "float32") / b, "int32")

    crop_height = tf.minimum(height, ratio(width * target_height, target_width))
    crop_width = tf.minimum(width, ratio(height * target_width, target_height))
    top = ratio(height - crop_height, 2)
    left = ratio(width - crop_width, 2)
    if rank == 4:
        start, extent = tf.stack([0, top, left, 0]), tf.stack([-1, crop_height, crop_width, -1])
    else:
        start, extent = tf.stack([top, left, 0]), tf.stack([crop_height, crop_width, -1])
    return resize_v2(tf.slice(img, start, extent), size, interpolation)


def resize_v2(images, size: Sequence[int], interpolation: str):
    """TF 2's `tf.image.resize(images, size, method=interpolation)` for the methods of
    `_SMART_RESIZE_METHODS`: half-pixel centers, no antialiasing; float32 except for
    'nearest' (the images' dtype).

    Args:
      images: a Tensor of rank 3 (one image) or 4 (a batch), channels last.
      size: (height, width).
      interpolation: 'bilinear', 'nearest', 'bicubic' or 'area'.
    """
    import tensorweave as tf

    rank = images.shape.ndims
    batched = images if rank == 4 else images[None]
    new_size = tf.constant(list(size), dtype="int32")
    if interpolation == "nearest":
        out = tf.image.resize_nearest_neighbor(batched, new_size, half_pixel_centers=True)
    elif interpolation == "bilinear":
        out = tf.image.resize_bilinear(batched, new_size, half_pixel_centers=True)
    elif interpolation == "bicubic":
        out = tf.image.resize_bicubic(batched, new_size, half_pixel_centers=True)
    else:
        out = tf.image.resize_area(batched, new_size)
    return out if rank == 4 else out[0]
