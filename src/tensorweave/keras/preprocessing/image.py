"""`tf.keras.preprocessing.image`: real-time image augmentation on NumPy data, as TF 2.15's
Keras has it (keras/src/preprocessing/image.py): `ImageDataGenerator`, its iterators
(image_iterators.py: `Iterator`, `NumpyArrayIterator`, `DirectoryIterator`, and
`DataFrameIterator` for `flow_from_dataframe`), the transformations
(image_transforms.py: `apply_affine_transform`, `random_rotation`, ...) and the file
helpers (image_files.py: `load_img`, `img_to_array`, `array_to_img`, `save_img`, also
under `tf.keras.utils`; `smart_resize`).

The iterators are `keras.utils.Sequence`s, so `model.fit(datagen.flow(x, y))` trains on
them (engine/training_generator.py). Random parameters come from NumPy's global RNG in
Keras' order: after `np.random.seed(s)` (or with a `seed`) the batches are Keras'.
Affine transformations need SciPy (the `special` extra); `flow_from_dataframe` needs
pandas.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Optional

import numpy as np

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.preprocessing.image_files import (
    array_to_img, img_to_array, load_img, save_img, smart_resize)
from tensorweave.keras.preprocessing.image_iterators import (
    DataFrameIterator, DirectoryIterator, Iterator, NumpyArrayIterator, validate_filename)
from tensorweave.keras.preprocessing.image_transforms import (
    apply_affine_transform, apply_brightness_shift, apply_channel_shift, flip_axis,
    random_brightness, random_channel_shift, random_rotation, random_shear, random_shift,
    random_zoom)

__all__ = ["ImageDataGenerator", "Iterator", "NumpyArrayIterator", "DirectoryIterator",
           "DataFrameIterator", "apply_affine_transform", "apply_brightness_shift",
           "apply_channel_shift", "array_to_img", "flip_axis", "img_to_array", "load_img",
           "random_brightness", "random_channel_shift", "random_rotation", "random_shear",
           "random_shift", "random_zoom", "save_img", "smart_resize", "validate_filename"]

_NOT_FIT = ("This ImageDataGenerator specifies `%s`, but it hasn't been fit on any "
            "training data. Fit it first by calling `.fit(numpy_data)`.")


def _draw_shift(shift_range, size: int) -> float:
    """One shift of `get_random_transform` in pixels: a float range draws uniformly from
    [-range, range); an int n draws an integer in [0, n) and a sign; a list draws an
    element and a sign. Fractions (all values below 1) are of `size`."""
    # Keras tries np.random.choice and falls back to uniform when it refuses: for a
    # scalar that is not an integer (or a bool)
    if np.ndim(shift_range) == 0 and np.asarray(shift_range).dtype.kind not in "iub":
        shift = np.random.uniform(-shift_range, shift_range)
    else:
        if np.ndim(shift_range) > 1:
            raise ValueError("A shift range must be a number or a 1-D list of numbers. "
                             "Received: %s" % (shift_range,))
        shift = np.random.choice(shift_range)
        shift *= np.random.choice([-1, 1])
    if np.max(shift_range) < 1:
        shift *= size
    return shift


@tf_export("keras.preprocessing.image.ImageDataGenerator")
class ImageDataGenerator:
    """Generates batches of image data with real-time augmentation.

    Each image is transformed with parameters drawn per image (`get_random_transform`,
    `apply_transform`), then standardized (`standardize`): `preprocessing_function`,
    `rescale`, the samplewise, then the featurewise normalizations (their statistics
    from `fit`), then ZCA whitening.

    Args:
      featurewise_center: subtract the per-channel mean of the `fit` data.
      samplewise_center: subtract each image's mean.
      featurewise_std_normalization: divide by the per-channel std of the `fit` data
        (implies featurewise_center).
      samplewise_std_normalization: divide each image by its std (implies
        samplewise_center).
      zca_whitening: apply the ZCA whitening of the `fit` data (implies
        featurewise_center, overrides featurewise_std_normalization).
      zca_epsilon: the epsilon of ZCA whitening.
      rotation_range: rotations drawn in [-rotation_range, rotation_range) degrees.
      width_shift_range, height_shift_range: a float: a fraction of the width (height)
        if below 1, else pixels, drawn uniformly in [-r, r); an int n: whole pixels in
        (-n, n); a list: one of its values with a random sign. (As in TF 2.15's Keras,
        the height shift, scaled by the height, is applied as `tx`, which moves the
        image along its columns, and the width shift along its rows; see
        `apply_affine_transform`.)
      brightness_range: two floats: the range of the brightness factor.
      shear_range: shear angles drawn in [-shear_range, shear_range) degrees.
      zoom_range: a float z for [1 - z, 1 + z], or [lower, upper]: zoom factors drawn
        per axis.
      channel_shift_range: channel shifts drawn in [-range, range).
      fill_mode: 'constant', 'nearest', 'reflect' or 'wrap': the fill of points outside
        the input.
      cval: the fill value of 'constant'.
      horizontal_flip, vertical_flip: flip half of the images.
      rescale: a factor the data is multiplied by (None or 0: none).
      preprocessing_function: a function from an image (rank 3) to an image of the
        same shape, applied first in `standardize`.
      data_format: 'channels_first' or 'channels_last' (None: the Keras default).
      validation_split: the fraction of the data of the 'validation' subset.
      interpolation_order: the spline order of the affine resampling.
      dtype: the dtype of the generated arrays (None: `tf.keras.backend.floatx()`).

    Raises:
      ValueError: an unknown `data_format`; `validation_split` outside (0, 1); a bad
        `zoom_range` or `brightness_range`.
    """

    def __init__(self, featurewise_center: bool = False, samplewise_center: bool = False,
                 featurewise_std_normalization: bool = False,
                 samplewise_std_normalization: bool = False, zca_whitening: bool = False,
                 zca_epsilon: float = 1e-6, rotation_range=0, width_shift_range=0.0,
                 height_shift_range=0.0, brightness_range=None, shear_range=0.0,
                 zoom_range=0.0, channel_shift_range=0.0, fill_mode: str = "nearest",
                 cval=0.0, horizontal_flip: bool = False, vertical_flip: bool = False,
                 rescale=None, preprocessing_function=None, data_format=None,
                 validation_split=0.0, interpolation_order: int = 1, dtype=None):
        if data_format is None:
            data_format = backend.image_data_format()
        if dtype is None:
            dtype = backend.floatx()
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = zca_whitening
        self.zca_epsilon = zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.shear_range = shear_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode = fill_mode
        self.cval = cval
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.dtype = dtype
        self.interpolation_order = interpolation_order
        if data_format not in {"channels_last", "channels_first"}:
            raise ValueError('`data_format` should be `"channels_last"` (channel after row '
                             'and column) or `"channels_first"` (channel before row and '
                             "column). Received: %s" % (data_format,))
        self.data_format = data_format
        if data_format == "channels_first":
            self.channel_axis, self.row_axis, self.col_axis = 1, 2, 3
        else:
            self.channel_axis, self.row_axis, self.col_axis = 3, 1, 2
        if validation_split and not 0 < validation_split < 1:
            raise ValueError("`validation_split` must be strictly between 0 and 1.  "
                             "Received: %s" % (validation_split,))
        self._validation_split = validation_split
        self.mean = None
        self.std = None
        self.zca_whitening_matrix = None
        self.zoom_range = self._zoom_bounds(zoom_range)
        self._resolve_normalizations(featurewise_center, featurewise_std_normalization,
                                     zca_whitening, samplewise_center,
                                     samplewise_std_normalization)
        if brightness_range is not None and (
                not isinstance(brightness_range, (tuple, list)) or len(brightness_range) != 2):
            raise ValueError("`brightness_range should be tuple or list of two floats. "
                             "Received: %s" % (brightness_range,))
        self.brightness_range = brightness_range

    @staticmethod
    def _zoom_bounds(zoom_range):
        if isinstance(zoom_range, numbers.Real):
            return [1 - zoom_range, 1 + zoom_range]
        if isinstance(zoom_range, (tuple, list, np.ndarray)) and len(zoom_range) == 2 and \
                all(isinstance(v, numbers.Real) for v in zoom_range):
            return [zoom_range[0], zoom_range[1]]
        raise ValueError("`zoom_range` should be a float or a tuple or list of two floats. "
                         "Received: %s" % (zoom_range,))

    def _resolve_normalizations(self, featurewise_center: bool,
                                featurewise_std_normalization: bool, zca_whitening: bool,
                                samplewise_center: bool,
                                samplewise_std_normalization: bool) -> None:
        """The implied settings, with Keras' warnings (each judged on the arguments, as
        Keras does): ZCA centers and replaces the std normalization; a std normalization
        centers."""
        if zca_whitening:
            if not featurewise_center:
                self.featurewise_center = True
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, which "
                              "overrides setting of `featurewise_center`.")
            if featurewise_std_normalization:
                self.featurewise_std_normalization = False
                warnings.warn("This ImageDataGenerator specifies `zca_whitening` which "
                              "overrides setting of`featurewise_std_normalization`.")
        if featurewise_std_normalization and not featurewise_center:
            self.featurewise_center = True
            warnings.warn("This ImageDataGenerator specifies `featurewise_std_normalization`, "
                          "which overrides setting of `featurewise_center`.")
        if samplewise_std_normalization and not samplewise_center:
            self.samplewise_center = True
            warnings.warn("This ImageDataGenerator specifies `samplewise_std_normalization`, "
                          "which overrides setting of `samplewise_center`.")

    # --- batches ---------------------------------------------------------------------
    def flow(self, x, y=None, batch_size: int = 32, shuffle: bool = True,
             sample_weight=None, seed=None, save_to_dir=None, save_prefix: str = "",
             save_format: str = "png", ignore_class_split: bool = False,
             subset=None) -> NumpyArrayIterator:
        """Batches of augmented data from arrays.

        Args:
          x: the images (rank 4, 1, 3 or 4 channels), or a tuple (images, extra array
            or list of arrays) whose extra arrays are passed through.
          y: the targets (None: batches of x alone).
          batch_size: the batch size.
          shuffle: shuffle the samples each pass.
          sample_weight: per-sample weights (batches become (x, y, weights)).
          seed: the seed of the shuffling and the transformations.
          save_to_dir, save_prefix, save_format: also write the augmented images there.
          ignore_class_split: allow subsets with different classes.
          subset: 'training' or 'validation' (of `validation_split`).

        Returns:
          A NumpyArrayIterator of (x, y), (x, y, sample_weight) or x batches.
        """
        return NumpyArrayIterator(
            x, y, self, batch_size=batch_size, shuffle=shuffle, sample_weight=sample_weight,
            seed=seed, data_format=self.data_format, save_to_dir=save_to_dir,
            save_prefix=save_prefix, save_format=save_format,
            ignore_class_split=ignore_class_split, subset=subset, dtype=self.dtype)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode: str = "rgb",
                            classes=None, class_mode="categorical", batch_size: int = 32,
                            shuffle: bool = True, seed=None, save_to_dir=None,
                            save_prefix: str = "", save_format: str = "png",
                            follow_links: bool = False, subset=None,
                            interpolation: str = "nearest",
                            keep_aspect_ratio: bool = False) -> DirectoryIterator:
        """Batches of augmented images read from `directory`, one subdirectory per class
        (see `DirectoryIterator` for the arguments).

        Returns:
          A DirectoryIterator of (x, y) batches (x alone for class_mode None).
        """
        return DirectoryIterator(
            directory, self, target_size=target_size, color_mode=color_mode,
            keep_aspect_ratio=keep_aspect_ratio, classes=classes, class_mode=class_mode,
            data_format=self.data_format, batch_size=batch_size, shuffle=shuffle, seed=seed,
            save_to_dir=save_to_dir, save_prefix=save_prefix, save_format=save_format,
            follow_links=follow_links, subset=subset, interpolation=interpolation,
            dtype=self.dtype)

    def flow_from_dataframe(self, dataframe, directory=None, x_col: str = "filename",
                            y_col="class", weight_col=None, target_size=(256, 256),
                            color_mode: str = "rgb", classes=None, class_mode="categorical",
                            batch_size: int = 32, shuffle: bool = True, seed=None,
                            save_to_dir=None, save_prefix: str = "",
                            save_format: str = "png", subset=None,
                            interpolation: str = "nearest", validate_filenames: bool = True,
                            **kwargs) -> DataFrameIterator:
        """Batches of augmented images whose paths a pandas DataFrame lists (see
        `DataFrameIterator` for the arguments).

        `kwargs` takes Keras' legacy arguments `has_ext`, `sort` and `drop_duplicates`,
        which only warn (as Keras, other keywords are ignored); class_mode 'other' is
        the deprecated name of 'raw'.

        Returns:
          A DataFrameIterator.

        Raises:
          ImportError: pandas is not installed.
          TypeError: `dataframe` is not a pandas DataFrame.
        """
        try:
            import pandas
        except ImportError as e:
            raise ImportError("`flow_from_dataframe` requires pandas. Install pandas.") from e
        if not isinstance(dataframe, pandas.DataFrame):
            raise TypeError("`dataframe` must be a pandas DataFrame, got %s"
                            % type(dataframe).__name__)
        legacy = {
            "has_ext": "has_ext is deprecated, filenames in the dataframe have to match "
                       "the exact filenames in disk.",
            "sort": "sort is deprecated, batches will be created in thesame order than the "
                    "filenames provided if shuffleis set to False.",
            "drop_duplicates": "drop_duplicates is deprecated, you can drop duplicates by "
                               "using the pandas.DataFrame.drop_duplicates method.",
        }
        for name in ("has_ext", "sort"):
            if name in kwargs:
                warnings.warn(legacy[name], DeprecationWarning)
        if class_mode == "other":
            warnings.warn('`class_mode` "other" is deprecated, please use `class_mode` "raw".',
                          DeprecationWarning)
            class_mode = "raw"
        if "drop_duplicates" in kwargs:
            warnings.warn(legacy["drop_duplicates"], DeprecationWarning)
        return DataFrameIterator(
            dataframe, directory, self, x_col=x_col, y_col=y_col, weight_col=weight_col,
            target_size=target_size, color_mode=color_mode, classes=classes,
            class_mode=class_mode, data_format=self.data_format, batch_size=batch_size,
            shuffle=shuffle, seed=seed, save_to_dir=save_to_dir, save_prefix=save_prefix,
            save_format=save_format, subset=subset, interpolation=interpolation,
            validate_filenames=validate_filenames, dtype=self.dtype)

    # --- one image ---------------------------------------------------------------------
    def standardize(self, x):
        """Normalizes `x` (an image or a batch) in place where it can, and returns it:
        `preprocessing_function`, `rescale`, samplewise centering and std scaling (over
        all of `x`), featurewise mean and std (from `fit`; a warning if not fit), ZCA
        whitening. Standardize `np.copy(x)` to keep `x`."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        if self.featurewise_center:
            if self.mean is not None:
                x -= self.mean
            else:
                warnings.warn(_NOT_FIT % "featurewise_center")
        if self.featurewise_std_normalization:
            if self.std is not None:
                x /= self.std + 1e-6
            else:
                warnings.warn(_NOT_FIT % "featurewise_std_normalization")
        if self.zca_whitening:
            if self.zca_whitening_matrix is not None:
                flat_x = x.reshape(-1, np.prod(x.shape[-3:]))
                x = np.reshape(flat_x @ self.zca_whitening_matrix, x.shape)
            else:
                warnings.warn(_NOT_FIT % "zca_whitening")
        return x

    def get_random_transform(self, img_shape, seed: Optional[int] = None) -> dict:
        """Draws the parameters of one image's transformation.

        The draws, in order (each only when its range is set): rotation, height shift,
        width shift, shear, zoom (two values), then two flip draws (always), channel
        shift, brightness.

        Args:
          img_shape: the image's shape (rank 3).
          seed: reseed NumPy's RNG first.

        Returns:
          A dict of 'theta', 'tx', 'ty', 'shear', 'zx', 'zy', 'flip_horizontal',
          'flip_vertical', 'channel_shift_intensity' and 'brightness'.
        """
        row_axis, col_axis = self.row_axis - 1, self.col_axis - 1
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) \
            if self.rotation_range else 0
        tx = _draw_shift(self.height_shift_range, img_shape[row_axis]) \
            if self.height_shift_range else 0
        ty = _draw_shift(self.width_shift_range, img_shape[col_axis]) \
            if self.width_shift_range else 0
        shear = np.random.uniform(-self.shear_range, self.shear_range) \
            if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift_intensity = None
        if self.channel_shift_range != 0:
            channel_shift_intensity = np.random.uniform(-self.channel_shift_range,
                                                        self.channel_shift_range)
        brightness = None
        if self.brightness_range is not None:
            brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1])
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": flip_horizontal, "flip_vertical": flip_vertical,
                "channel_shift_intensity": channel_shift_intensity, "brightness": brightness}

    def apply_transform(self, x, transform_parameters: dict):
        """Transforms one image (rank 3) by `transform_parameters` (the keys of
        `get_random_transform`; missing ones are neutral): the affine map, the channel
        shift, the flips, then the brightness (in the image's range).

        Returns:
          The transformed image.
        """
        row_axis, col_axis = self.row_axis - 1, self.col_axis - 1
        channel_axis = self.channel_axis - 1
        params = transform_parameters
        x = apply_affine_transform(
            x, params.get("theta", 0), params.get("tx", 0), params.get("ty", 0),
            params.get("shear", 0), params.get("zx", 1), params.get("zy", 1),
            row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
            fill_mode=self.fill_mode, cval=self.cval, order=self.interpolation_order)
        if params.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, params["channel_shift_intensity"], channel_axis)
        if params.get("flip_horizontal", False):
            x = flip_axis(x, col_axis)
        if params.get("flip_vertical", False):
            x = flip_axis(x, row_axis)
        if params.get("brightness") is not None:
            x = apply_brightness_shift(x, params["brightness"], False)
        return x

    def random_transform(self, x, seed: Optional[int] = None):
        """`apply_transform(x, get_random_transform(x.shape, seed))`."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment: bool = False, rounds: int = 1, seed: Optional[int] = None):
        """Computes the featurewise statistics (mean, std, ZCA matrix) the settings need,
        from sample data (after `rescale`).

        Args:
          x: the sample images, of rank 4.
          augment: compute them over randomly transformed copies.
          rounds: the number of transformed copies of each image when `augment`.
          seed: reseed NumPy's RNG first.

        Raises:
          ValueError: `x` not of rank 4.
        """
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError("Input to `.fit()` should have rank 4. Got array with shape: "
                             + str(x.shape))
        if x.shape[self.channel_axis] not in {1, 3, 4}:
            warnings.warn(
                "Expected input to be images (as Numpy array) following the data format "
                'convention "%s" (channels on axis %d), i.e. expected either 1, 3 or 4 '
                "channels on axis %d. However, it was passed an array with shape %s (%d "
                "channels)." % (self.data_format, self.channel_axis, self.channel_axis,
                                x.shape, x.shape[self.channel_axis]))
        if seed is not None:
            np.random.seed(seed)
        x = np.copy(x)
        if self.rescale:
            x *= self.rescale
        if augment:
            augmented = np.zeros((rounds * x.shape[0],) + x.shape[1:], dtype=self.dtype)
            for r in range(rounds):
                for i in range(x.shape[0]):
                    augmented[i + r * x.shape[0]] = self.random_transform(x[i])
            x = augmented
        spatial = (0, self.row_axis, self.col_axis)
        stat_shape = [1, 1, 1]
        stat_shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=spatial), stat_shape)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=spatial), stat_shape)
            x /= self.std + 1e-6
        if self.zca_whitening:
            n = len(x)
            flat_x = np.reshape(x, (n, -1))
            u, s, _ = np.linalg.svd(flat_x.T, full_matrices=False)
            # sqrt(n) in s's dtype, as NumPy 1 (which Keras ran on) computed it
            s_inv = s.dtype.type(np.sqrt(n)) / (s + self.zca_epsilon)
            self.zca_whitening_matrix = (u * s_inv).dot(u.T)
