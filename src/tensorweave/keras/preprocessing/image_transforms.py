"""The NumPy image transformations of TF 2.15's Keras (keras/src/preprocessing/image.py):
`apply_affine_transform` (rotation, shift, shear, zoom: one affine map about the image
center, resampled per channel by `scipy.ndimage.affine_transform`), channel and
brightness shifts, and their `random_*` forms.

The random forms draw from NumPy's global RNG with the calls Keras makes, in its order,
so that after `np.random.seed(s)` they give Keras' results. SciPy is optional (the
`special` extra): the affine transforms raise ImportError without it.

Dtypes: Keras ran on NumPy 1, where a float64 scalar added to a float32 image is
computed in float32; the channel shift casts its intensity to the image's float dtype
so that NumPy 2 computes the same values.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.api_export import tf_export
from tensorweave.keras.preprocessing import image_files

try:
    from PIL import ImageEnhance as _image_enhance
except ImportError:  # Pillow is a dependency; kept optional as Keras keeps it
    _image_enhance = None

def _ndimage():
    try:
        from scipy import ndimage
    except ImportError as e:
        raise ImportError("Image transformations require SciPy. Install SciPy.") from e
    return ndimage


def flip_axis(x, axis: int) -> np.ndarray:
    """`x` reversed along `axis` (a view)."""
    return np.flip(np.asarray(x), axis)


def _offset_center(matrix: np.ndarray, x: float, y: float) -> np.ndarray:
    """`matrix` conjugated by the translation to the center of an x-by-y image, so that
    it acts about the center (pixel centers at integers)."""
    o_x = float(x) / 2 - 0.5
    o_y = float(y) / 2 - 0.5
    to_center = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]])
    from_center = np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    return to_center @ matrix @ from_center


def _affine_matrix(theta, tx, ty, shear, zx, zy):
    """The 3x3 map from output to input coordinates (x: along the columns, y: along the
    rows) of the parameters, composed rotation @ shift @ shear @ zoom; None for the
    identity."""
    parts = []
    if theta != 0:
        t = np.deg2rad(theta)
        parts.append(np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0],
                               [0, 0, 1]]))
    if tx != 0 or ty != 0:
        parts.append(np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]]))
    if shear != 0:
        s = np.deg2rad(shear)
        parts.append(np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]]))
    if zx != 1 or zy != 1:
        parts.append(np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]]))
    if not parts:
        return None
    matrix = parts[0]
    for part in parts[1:]:
        matrix = np.dot(matrix, part)
    return matrix


@tf_export("keras.preprocessing.image.apply_affine_transform")
def apply_affine_transform(x, theta: float = 0, tx: float = 0, ty: float = 0,
                           shear: float = 0, zx: float = 1, zy: float = 1,
                           row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                           fill_mode: str = "nearest", cval: float = 0.0,
                           order: int = 1) -> np.ndarray:
    """Applies an affine transformation to a 3D image (rows, columns and channels).

    The output pixel takes the input's value at the transformed point: rotation by
    `theta`, shift, shear, zoom, composed in that order about the image center. As in
    Keras, x is the column axis: a shift `tx` makes the output at column c take the
    input at column c + tx, `ty` likewise along the rows; `zx` scales the columns, `zy`
    the rows; 90 degrees turn the image as `np.rot90`. (Keras centers the map at
    (height / 2, width / 2) - 0.5 taken as (x, y), so the center is off for images that
    are not square; kept.)

    Args:
      x: the image, a NumPy array of rank 3.
      theta: rotation angle in degrees (counter-clockwise).
      tx: shift along the columns, in pixels.
      ty: shift along the rows, in pixels.
      shear: shear angle in degrees.
      zx: zoom factor of the columns (above 1 shows less of the image).
      zy: zoom factor of the rows.
      row_axis, col_axis, channel_axis: the axes of `x` (0, 1, 2 in some order; the
        channels first or last).
      fill_mode: how points outside the input are filled: 'constant' (`cval`),
        'nearest', 'reflect' or 'wrap'.
      cval: the fill value of 'constant'.
      order: the spline order of the interpolation (0 to 5).

    Returns:
      The transformed image (`x` itself when every parameter is neutral).

    Raises:
      ImportError: SciPy is not installed.
      ValueError: axes not distinct or not 0, 1, 2; `x` not of rank 3; the channels
        neither first nor last.
    """
    ndimage = _ndimage()
    axes = {row_axis, col_axis, channel_axis}
    if len(axes) != 3:
        raise ValueError("'row_axis', 'col_axis', and 'channel_axis' must be distinct")
    if axes != {0, 1, 2}:
        raise ValueError("Invalid axis' indices: %s" % (axes - {0, 1, 2},))
    if x.ndim != 3:
        raise ValueError("Input arrays must be multi-channel 2D images.")
    if channel_axis not in (0, 2):
        raise ValueError("Channels are allowed and the first and last dimensions.")
    matrix = _affine_matrix(theta, tx, ty, shear, zx, zy)
    if matrix is None:
        return x
    matrix = _offset_center(matrix, x.shape[row_axis], x.shape[col_axis])
    if col_axis > row_axis:
        # the map is written in (row, col) order of the image, which is the array's
        # order only when rows come first; otherwise swap both its axes
        matrix[:, [0, 1]] = matrix[:, [1, 0]]
        matrix[[0, 1]] = matrix[[1, 0]]
    channels = np.moveaxis(x, channel_axis, 0)
    resampled = [ndimage.affine_transform(channel, matrix[:2, :2], matrix[:2, 2],
                                          order=order, mode=fill_mode, cval=cval)
                 for channel in channels]
    return np.moveaxis(np.stack(resampled, axis=0), 0, channel_axis)


def _random_affine(x, row_axis, col_axis, channel_axis, fill_mode, cval,
                   interpolation_order, **params):
    return apply_affine_transform(x, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode,
                                  cval=cval, order=interpolation_order, **params)


@tf_export("keras.preprocessing.image.random_rotation")
def random_rotation(x, rg: float, row_axis: int = 1, col_axis: int = 2,
                    channel_axis: int = 0, fill_mode: str = "nearest", cval: float = 0.0,
                    interpolation_order: int = 1) -> np.ndarray:
    """Rotates a 3D image by an angle drawn uniformly from [-rg, rg) degrees (one
    `np.random.uniform` draw). The other arguments are `apply_affine_transform`'s."""
    theta = np.random.uniform(-rg, rg)
    return _random_affine(x, row_axis, col_axis, channel_axis, fill_mode, cval,
                          interpolation_order, theta=theta)


@tf_export("keras.preprocessing.image.random_shift")
def random_shift(x, wrg: float, hrg: float, row_axis: int = 1, col_axis: int = 2,
                 channel_axis: int = 0, fill_mode: str = "nearest", cval: float = 0.0,
                 interpolation_order: int = 1) -> np.ndarray:
    """Shifts a 3D image by fractions of its height and width drawn uniformly from
    [-hrg, hrg) and [-wrg, wrg) (in that order). The other arguments are
    `apply_affine_transform`'s."""
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return _random_affine(x, row_axis, col_axis, channel_axis, fill_mode, cval,
                          interpolation_order, tx=tx, ty=ty)


@tf_export("keras.preprocessing.image.random_shear")
def random_shear(x, intensity: float, row_axis: int = 1, col_axis: int = 2,
                 channel_axis: int = 0, fill_mode: str = "nearest", cval: float = 0.0,
                 interpolation_order: int = 1) -> np.ndarray:
    """Shears a 3D image by an angle drawn uniformly from [-intensity, intensity)
    degrees. The other arguments are `apply_affine_transform`'s."""
    shear = np.random.uniform(-intensity, intensity)
    return _random_affine(x, row_axis, col_axis, channel_axis, fill_mode, cval,
                          interpolation_order, shear=shear)


@tf_export("keras.preprocessing.image.random_zoom")
def random_zoom(x, zoom_range, row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                fill_mode: str = "nearest", cval: float = 0.0,
                interpolation_order: int = 1) -> np.ndarray:
    """Zooms a 3D image by factors (rows, columns) drawn uniformly from
    [zoom_range[0], zoom_range[1]) (no draw when both are 1). The other arguments are
    `apply_affine_transform`'s.

    Raises:
      ValueError: `zoom_range` not of length 2.
    """
    if len(zoom_range) != 2:
        raise ValueError("`zoom_range` should be a tuple or list of two floats. Received: %s"
                         % (zoom_range,))
    if zoom_range[0] == 1 and zoom_range[1] == 1:
        zx, zy = 1, 1
    else:
        zx, zy = np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return _random_affine(x, row_axis, col_axis, channel_axis, fill_mode, cval,
                          interpolation_order, zx=zx, zy=zy)


@tf_export("keras.preprocessing.image.apply_channel_shift")
def apply_channel_shift(x, intensity: float, channel_axis: int = 0) -> np.ndarray:
    """Adds `intensity` to every channel of a 3D image, clipped to the image's overall
    minimum and maximum.

    Args:
      x: the image, a NumPy array of rank 3.
      intensity: the value added.
      channel_axis: the channel axis of `x`.

    Returns:
      The shifted image.
    """
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.floating):
        intensity = x.dtype.type(intensity)  # computed in x's dtype (NumPy 1 semantics)
    channels = np.moveaxis(x, channel_axis, 0)
    low, high = np.min(channels), np.max(channels)
    shifted = [np.clip(channel + intensity, low, high) for channel in channels]
    return np.moveaxis(np.stack(shifted, axis=0), 0, channel_axis)


@tf_export("keras.preprocessing.image.random_channel_shift")
def random_channel_shift(x, intensity_range: float, channel_axis: int = 0) -> np.ndarray:
    """`apply_channel_shift` by an intensity drawn uniformly from
    [-intensity_range, intensity_range)."""
    intensity = np.random.uniform(-intensity_range, intensity_range)
    return apply_channel_shift(x, intensity, channel_axis=channel_axis)


@tf_export("keras.preprocessing.image.apply_brightness_shift")
def apply_brightness_shift(x, brightness: float, scale: bool = True) -> np.ndarray:
    """Changes the brightness of a 3D image by PIL's `ImageEnhance.Brightness`.

    The image goes through an 8-bit PIL image (`array_to_img`, in the default data
    format): rescaled to [0, 255] when `scale` or when its values leave [0, 255], and
    mapped back to its own range afterwards when `scale` is False.

    Args:
      x: the image, a NumPy array of rank 3.
      brightness: the enhancement factor (1 keeps the image; 0 makes it black).
      scale: keep the result in [0, 255] rather than in `x`'s range.

    Returns:
      The image as a float array (of `tf.keras.backend.floatx()`).

    Raises:
      ImportError: Pillow is not installed.
    """
    if _image_enhance is None:
        raise ImportError("Using brightness shifts requires PIL. Install PIL or Pillow.")
    x_min, x_max = np.min(x), np.max(x)
    out_of_range = (x_min < 0) or (x_max > 255)
    img = image_files.array_to_img(x, scale=out_of_range or scale)
    img = _image_enhance.Brightness(img).enhance(brightness)
    x = image_files.img_to_array(img)
    if not scale and out_of_range:
        x = x / 255 * (x_max - x_min) + x_min
    return x


@tf_export("keras.preprocessing.image.random_brightness")
def random_brightness(x, brightness_range, scale: bool = True) -> np.ndarray:
    """`apply_brightness_shift` by a factor drawn uniformly from
    [brightness_range[0], brightness_range[1]).

    Raises:
      ValueError: `brightness_range` not of length 2.
    """
    if len(brightness_range) != 2:
        raise ValueError("`brightness_range should be tuple or list of two floats. "
                         "Received: %s" % (brightness_range,))
    factor = np.random.uniform(brightness_range[0], brightness_range[1])
    return apply_brightness_shift(x, factor, scale)
