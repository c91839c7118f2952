"""The batch iterators of `ImageDataGenerator` (TF 2.15's Keras,
keras/src/preprocessing/image.py): `Iterator`, the base, a `keras.utils.Sequence` and
a Python iterator at once; `NumpyArrayIterator` (`flow`), `DirectoryIterator`
(`flow_from_directory`) and `DataFrameIterator` (`flow_from_dataframe`).

Random draws (NumPy's global RNG) come in Keras' order, so a seeded run gives Keras'
batches: with a `seed`, the RNG is reseeded with `seed + total_batches_seen` before
each batch; a shuffled pass takes `np.random.permutation(n)` when it begins (as
`next()` reaches it, or in `on_epoch_end` for the Sequence interface); each sample then
takes its transformation's draws (`ImageDataGenerator.get_random_transform`), and
`save_to_dir` one `np.random.randint` per saved image after the batch.
"""
from __future__ import annotations

import os
import sys
import threading
import warnings

import numpy as np

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.preprocessing import image_files
from tensorweave.keras.utils import Sequence


def _print_msg(message: str) -> None:
    sys.stdout.write(message + "\n")
    sys.stdout.flush()


@tf_export("keras.preprocessing.image.Iterator")
class Iterator(Sequence):
    """Base class of the image batch iterators: a `keras.utils.Sequence` (`it[i]`,
    `len(it)`, `on_epoch_end`) that is also an endless Python iterator (`next(it)`).
    A subclass implements `_get_batches_of_transformed_samples(index_array)`.

    Args:
      n: the number of samples.
      batch_size: the batch size (the last batch of a pass may be smaller).
      shuffle: visit the samples in a new random order each pass.
      seed: reseed NumPy's RNG with `seed + total_batches_seen` before each batch.

    Invariants: `index_array` is the order of the current pass (None before the first
    batch); `batch_index` is the position of `next()`'s next batch in the pass (0: a
    new pass begins, and is shuffled); `total_batches_seen` counts batches served by
    either interface.
    """

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")

    def __init__(self, n: int, batch_size: int, shuffle: bool, seed):
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self) -> None:
        self.index_array = np.arange(self.n)
        if self.shuffle:
            self.index_array = np.random.permutation(self.n)

    def __getitem__(self, idx: int):
        """The batch at position `idx` of the current pass.

        Raises:
          ValueError: `idx` >= len(self).
        """
        if idx >= len(self):
            raise ValueError("Asked to retrieve element {idx}, but the Sequence has length "
                             "{length}".format(idx=idx, length=len(self)))
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        start = self.batch_size * idx
        return self._get_batches_of_transformed_samples(
            self.index_array[start:start + self.batch_size])

    def __len__(self) -> int:
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self) -> None:
        """Starts a new order of the samples (shuffled when `shuffle`)."""
        self._set_index_array()

    def reset(self) -> None:
        """Makes `next()` start a new pass."""
        self.batch_index = 0

    def _flow_index(self):
        """The index arrays of `next()`'s batches, pass after pass (a pass's last batch
        may be short)."""
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            start = (self.batch_index * self.batch_size) % self.n if self.n else 0
            if self.n > start + self.batch_size:
                self.batch_index += 1
            else:
                self.batch_index = 0
            self.total_batches_seen += 1
            yield self.index_array[start:start + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self, *args, **kwargs):
        return self.next(*args, **kwargs)

    def next(self):
        """The next batch (`next(iterator)`)."""
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def _get_batches_of_transformed_samples(self, index_array):
        """The batch of the samples at `index_array`, transformed."""
        raise NotImplementedError("%s must implement _get_batches_of_transformed_samples "
                                  "(the batch of the samples at an index array), as every "
                                  "keras.preprocessing.image.Iterator" % type(self).__name__)


def _save_batch(batch_x, index_array, data_format, save_to_dir, save_prefix, save_format,
                hash_range: int) -> None:
    """Writes the batch's images as `{prefix}_{index}_{random}.{format}`."""
    for i, j in enumerate(index_array):
        img = image_files.array_to_img(batch_x[i], data_format, scale=True)
        fname = "{prefix}_{index}_{hash}.{format}".format(
            prefix=save_prefix, index=j, hash=np.random.randint(hash_range),
            format=save_format)
        img.save(os.path.join(save_to_dir, fname))


def _validation_split(image_data_generator, subset):
    """The (start, stop) fractions of `subset` ('validation' first), None without."""
    if subset is None:
        return None
    fraction = image_data_generator._validation_split
    if subset == "validation":
        return (0, fraction)
    if subset == "training":
        return (fraction, 1)
    raise ValueError('Invalid subset name: %s; expected "training" or "validation"'
                     % (subset,))


@tf_export("keras.preprocessing.image.NumpyArrayIterator")
class NumpyArrayIterator(Iterator):
    """Batches of augmented images from a NumPy array (`ImageDataGenerator.flow`).

    Args:
      x: the images, of rank 4; or a tuple (images, extra) where extra is an array or
        a list of arrays passed through unchanged (the batch's x is then a list).
      y: the targets, or None (batches are then x alone).
      image_data_generator: the ImageDataGenerator that transforms and standardizes.
      batch_size, shuffle, seed: see `Iterator`.
      sample_weight: per-sample weights (batches become (x, y, weights)).
      data_format: 'channels_first' or 'channels_last' (None: the Keras default).
      save_to_dir, save_prefix, save_format: also write the batches' images there.
      subset: 'training' or 'validation': the part of the data after or before the
        generator's `validation_split` fraction.
      ignore_class_split: allow the two subsets different sets of classes.
      dtype: the dtype of the images (None: `tf.keras.backend.floatx()`).

    Raises:
      ValueError: lengths that differ, x not of rank 4, an unknown subset, subsets
        with different classes.
    """

    def __init__(self, x, y, image_data_generator, batch_size: int = 32,
                 shuffle: bool = False, sample_weight=None, seed=None, data_format=None,
                 save_to_dir=None, save_prefix: str = "", save_format: str = "png",
                 subset=None, ignore_class_split: bool = False, dtype=None):
        if data_format is None:
            data_format = backend.image_data_format()
        if dtype is None:
            dtype = backend.floatx()
        self.dtype = dtype
        x, x_misc = self._split_inputs(x)
        if y is not None and len(x) != len(y):
            raise ValueError("`x` (images tensor) and `y` (labels) should have the same "
                             "length. Found: x.shape = %s, y.shape = %s"
                             % (np.asarray(x).shape, np.asarray(y).shape))
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError("`x` (images tensor) and `sample_weight` should have the same "
                             "length. Found: x.shape = %s, sample_weight.shape = %s"
                             % (np.asarray(x).shape, np.asarray(sample_weight).shape))
        if subset is not None:
            if subset not in {"training", "validation"}:
                raise ValueError('Invalid subset name: %s; expected "training" or '
                                 '"validation".' % (subset,))
            cut = int(len(x) * image_data_generator._validation_split)
            if y is not None and not ignore_class_split and not np.array_equal(
                    np.unique(y[:cut]), np.unique(y[cut:])):
                raise ValueError("Training and validation subsets have different number of "
                                 "classes after the split. If your numpy arrays are sorted "
                                 "by the label, you might want to shuffle them.")
            part = slice(None, cut) if subset == "validation" else slice(cut, None)
            x = x[part]
            x_misc = [np.asarray(xx[part]) for xx in x_misc]
            y = None if y is None else y[part]
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError("Input data in `NumpyArrayIterator` should have rank 4. You "
                             "passed an array with shape %s" % (self.x.shape,))
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in {1, 3, 4}:
            warnings.warn(
                'NumpyArrayIterator is set to use the data format convention "%s" (channels '
                "on axis %d), i.e. expected either 1, 3, or 4 channels on axis %d. However, "
                "it was passed an array with shape %s (%d channels)."
                % (data_format, channels_axis, channels_axis, self.x.shape,
                   self.x.shape[channels_axis]))
        self.y = None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir = save_to_dir
        self.save_prefix = save_prefix
        self.save_format = save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    @staticmethod
    def _split_inputs(x):
        """(images, [extra arrays]) of a tuple or list input; (x, []) otherwise."""
        if not isinstance(x, (tuple, list)):
            return x, []
        extra = x[1] if isinstance(x[1], list) else [x[1]]
        x_misc = [np.asarray(xx) for xx in extra]
        images = x[0]
        for xx in x_misc:
            if len(images) != len(xx):
                raise ValueError("All of the arrays in `x` should have the same length. "
                                 "Found a pair with: len(x[0]) = %s, len(x[?]) = %s"
                                 % (len(images), len(xx)))
        return images, x_misc

    def _get_batches_of_transformed_samples(self, index_array):
        generator = self.image_data_generator
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        for i, j in enumerate(index_array):
            x = self.x[j]
            params = generator.get_random_transform(x.shape)
            x = generator.apply_transform(x.astype(self.dtype), params)
            batch_x[i] = generator.standardize(x)
        if self.save_to_dir:
            _save_batch(batch_x, index_array, self.data_format, self.save_to_dir,
                        self.save_prefix, self.save_format, 10 ** 4)
        inputs = [batch_x] + [xx[index_array] for xx in self.x_misc] if self.x_misc \
            else batch_x
        if self.y is None:
            return inputs
        if self.sample_weight is None:
            return inputs, self.y[index_array]
        return inputs, self.y[index_array], self.sample_weight[index_array]


class _FileBatches(Iterator):
    """The part the file iterators share: reading, transforming and labelling a batch
    of image files. A subclass sets the attributes of `_set_processing_attrs` and
    `filepaths`, `labels`, `sample_weight`, `classes`, `class_indices`, `class_mode`,
    `dtype`."""

    def _set_processing_attrs(self, image_data_generator, target_size, color_mode,
                              data_format, save_to_dir, save_prefix, save_format, subset,
                              interpolation, keep_aspect_ratio) -> None:
        self.image_data_generator = image_data_generator
        self.target_size = tuple(target_size)
        self.keep_aspect_ratio = keep_aspect_ratio
        channels = {"rgba": 4, "rgb": 3, "grayscale": 1}
        if color_mode not in channels:
            raise ValueError('Invalid color mode: %s; expected "rgb", "rgba", or '
                             '"grayscale".' % (color_mode,))
        self.color_mode = color_mode
        self.data_format = data_format
        if data_format == "channels_last":
            self.image_shape = self.target_size + (channels[color_mode],)
        else:
            self.image_shape = (channels[color_mode],) + self.target_size
        self.save_to_dir = save_to_dir
        self.save_prefix = save_prefix
        self.save_format = save_format
        self.interpolation = interpolation
        self.split = _validation_split(image_data_generator, subset)
        self.subset = subset

    def _get_batches_of_transformed_samples(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        filepaths = self.filepaths
        generator = self.image_data_generator
        for i, j in enumerate(index_array):
            img = image_files.load_img(filepaths[j], color_mode=self.color_mode,
                                       target_size=self.target_size,
                                       interpolation=self.interpolation,
                                       keep_aspect_ratio=self.keep_aspect_ratio)
            x = image_files.img_to_array(img, data_format=self.data_format)
            if hasattr(img, "close"):
                img.close()
            if generator:
                params = generator.get_random_transform(x.shape)
                x = generator.apply_transform(x, params)
                x = generator.standardize(x)
            batch_x[i] = x
        if self.save_to_dir:
            _save_batch(batch_x, index_array, self.data_format, self.save_to_dir,
                        self.save_prefix, self.save_format, 10 ** 7)
        batch_y = self._batch_labels(batch_x, index_array)
        if batch_y is None:
            return batch_x
        if self.sample_weight is None:
            return batch_x, batch_y
        return batch_x, batch_y, self.sample_weight[index_array]

    def _batch_labels(self, batch_x, index_array):
        """The targets of the batch in `class_mode`; None for class_mode None."""
        mode = self.class_mode
        if mode == "input":
            return batch_x.copy()
        if mode in {"binary", "sparse"}:
            batch_y = np.empty(len(batch_x), dtype=self.dtype)
            for i, n in enumerate(index_array):
                batch_y[i] = self.classes[n]
            return batch_y
        if mode == "categorical":
            batch_y = np.zeros((len(batch_x), len(self.class_indices)), dtype=self.dtype)
            for i, n in enumerate(index_array):
                batch_y[i, self.classes[n]] = 1.0  # a list of classes for multi-label
            return batch_y
        if mode == "multi_output":
            return [output[index_array] for output in self.labels]
        if mode == "raw":
            return self.labels[index_array]
        return None


def _valid_files(directory: str, follow_links: bool):
    """(root, filename) of the image files below `directory`, in sorted order."""
    walk = sorted(os.walk(directory, followlinks=follow_links), key=lambda entry: entry[0])
    for root, _, files in walk:
        for fname in sorted(files):
            lower = fname.lower()
            if lower.endswith(".tiff"):
                warnings.warn('Using ".tiff" files with multiple bands will cause '
                              "distortion. Please verify your output.")
            if lower.endswith(Iterator.white_list_formats):
                yield root, fname


def _class_files(directory: str, split, follow_links: bool):
    """The image files of one class directory, as paths relative to its parent (the
    part `split` selects)."""
    files = list(_valid_files(directory, follow_links))
    if split:
        files = files[int(split[0] * len(files)):int(split[1] * len(files))]
    dirname = os.path.basename(directory)
    return [os.path.join(dirname, os.path.relpath(os.path.join(root, fname), directory))
            for root, fname in files]


@tf_export("keras.preprocessing.image.DirectoryIterator")
class DirectoryIterator(_FileBatches):
    """Batches of augmented images read from a directory of class subdirectories
    (`ImageDataGenerator.flow_from_directory`).

    The files (png, jpg, jpeg, bmp, ppm, tif, tiff) below each class directory are
    taken in sorted order, class after class; `filenames` are relative to `directory`,
    `classes` the class index of each, `class_indices` the map from class name to
    index (classes sorted by name unless given).

    Args:
      directory: the directory.
      image_data_generator: the ImageDataGenerator that transforms and standardizes
        (None: the images as loaded).
      target_size: (height, width) the images are resized to.
      color_mode: 'grayscale', 'rgb' or 'rgba'.
      classes: the class subdirectories, in index order (None: all, sorted).
      class_mode: 'categorical' (one-hot), 'binary' or 'sparse' (class index, as
        floats), 'input' (the images), or None (no targets).
      batch_size, shuffle, seed: see `Iterator`.
      data_format: 'channels_first' or 'channels_last' (None: the Keras default).
      save_to_dir, save_prefix, save_format: also write the batches' images there.
      follow_links: follow symbolic links to subdirectories.
      subset: 'training' or 'validation': of each class's files, those after or before
        the generator's `validation_split` fraction.
      interpolation: the PIL filter of the resize (see `load_img`).
      keep_aspect_ratio: resize a centered crop of the target's aspect ratio.
      dtype: the dtype of the batches (None: `tf.keras.backend.floatx()`).

    Raises:
      ValueError: an unknown color mode, class mode or subset.
    """

    allowed_class_modes = {"categorical", "binary", "sparse", "input", None}

    def __init__(self, directory, image_data_generator, target_size=(256, 256),
                 color_mode: str = "rgb", classes=None, class_mode="categorical",
                 batch_size: int = 32, shuffle: bool = True, seed=None, data_format=None,
                 save_to_dir=None, save_prefix: str = "", save_format: str = "png",
                 follow_links: bool = False, subset=None, interpolation: str = "nearest",
                 keep_aspect_ratio: bool = False, dtype=None):
        if data_format is None:
            data_format = backend.image_data_format()
        if dtype is None:
            dtype = backend.floatx()
        self._set_processing_attrs(image_data_generator, target_size, color_mode,
                                   data_format, save_to_dir, save_prefix, save_format,
                                   subset, interpolation, keep_aspect_ratio)
        self.directory = directory
        self.classes = classes
        if class_mode not in self.allowed_class_modes:
            raise ValueError("Invalid class_mode: {}; expected one of: {}".format(
                class_mode, self.allowed_class_modes))
        self.class_mode = class_mode
        self.dtype = dtype
        if not classes:
            classes = [d for d in sorted(os.listdir(directory))
                       if os.path.isdir(os.path.join(directory, d))]
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        self.filenames = []
        labels = []
        for name in classes:
            found = _class_files(os.path.join(directory, name), self.split, follow_links)
            self.filenames += found
            labels += [self.class_indices[name]] * len(found)
        self.samples = len(self.filenames)
        self.classes = np.array(labels, dtype="int32")
        _print_msg("Found %d images belonging to %d classes." % (self.samples,
                                                                 self.num_classes))
        self._filepaths = [os.path.join(directory, fname) for fname in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self):
        """The paths of the image files."""
        return self._filepaths

    @property
    def labels(self):
        """The class index of each file."""
        return self.classes

    @property
    def sample_weight(self):
        """None: a directory gives no sample weights."""
        return None


def validate_filename(filename: str, white_list_formats) -> bool:
    """Whether `filename` has an image extension and is a file."""
    return filename.lower().endswith(white_list_formats) and os.path.isfile(filename)


class DataFrameIterator(_FileBatches):
    """Batches of augmented images whose files a pandas DataFrame lists
    (`ImageDataGenerator.flow_from_dataframe`).

    Args:
      dataframe: the DataFrame: a column of file paths (`x_col`, relative to
        `directory`, or absolute), and the targets as `class_mode` needs them.
      directory: the directory of the paths (None: absolute paths).
      image_data_generator: the ImageDataGenerator (None: the images as loaded).
      x_col: the column of paths.
      y_col: the target column ('categorical': class names, or lists of them for
        multi-label; 'binary', 'sparse': class names; 'raw': any values, one or more
        columns; 'multi_output': a list of columns).
      weight_col: a numeric column of sample weights.
      target_size, color_mode, batch_size, shuffle, seed, data_format, save_to_dir,
        save_prefix, save_format, subset, interpolation, keep_aspect_ratio, dtype: as
        for `DirectoryIterator`.
      classes: the classes to keep, in index order (None: all, sorted); rows without
        one are dropped.
      class_mode: 'categorical', 'binary', 'sparse', 'raw', 'multi_output', 'input'
        or None.
      validate_filenames: drop rows whose path is not an image file (with a warning).

    Raises:
      ValueError: an unknown class mode, color mode or subset; 'binary' without two
        classes.
      TypeError: paths that are not strings, labels of the wrong type for the class
        mode, `y_col` not a list for 'multi_output', a non-numeric weight column.
    """

    allowed_class_modes = {"binary", "categorical", "input", "multi_output", "raw",
                           "sparse", None}

    def __init__(self, dataframe, directory=None, image_data_generator=None,
                 x_col: str = "filename", y_col="class", weight_col=None,
                 target_size=(256, 256), color_mode: str = "rgb", classes=None,
                 class_mode="categorical", batch_size: int = 32, shuffle: bool = True,
                 seed=None, data_format: str = "channels_last", save_to_dir=None,
                 save_prefix: str = "", save_format: str = "png", subset=None,
                 interpolation: str = "nearest", keep_aspect_ratio: bool = False,
                 dtype: str = "float32", validate_filenames: bool = True):
        self._set_processing_attrs(image_data_generator, target_size, color_mode,
                                   data_format, save_to_dir, save_prefix, save_format,
                                   subset, interpolation, keep_aspect_ratio)
        df = dataframe.copy()
        self.directory = directory or ""
        self.class_mode = class_mode
        self.dtype = dtype
        self._check_params(df, x_col, y_col, weight_col, classes)
        if validate_filenames:
            df = self._filter_valid_filepaths(df, x_col)
        with_classes = class_mode not in ["input", "multi_output", "raw", None]
        if with_classes:
            df, classes = self._filter_classes(df, y_col, classes)
            self.class_indices = dict(zip(classes, range(len(classes))))
        if self.split:
            start, stop = (int(f * len(df)) for f in self.split)
            df = df.iloc[start:stop, :]
        if with_classes:
            self.classes = self.get_classes(df, y_col)
        self.filenames = df[x_col].tolist()
        self._sample_weight = df[weight_col].values if weight_col else None
        if class_mode == "multi_output":
            self._targets = [np.array(df[col].tolist()) for col in y_col]
        if class_mode == "raw":
            self._targets = df[y_col].values
        self.samples = len(self.filenames)
        validated = "validated" if validate_filenames else "non-validated"
        if with_classes:
            _print_msg("Found %d %s image filenames belonging to %d classes."
                       % (self.samples, validated, len(classes)))
        else:
            _print_msg("Found %d %s image filenames." % (self.samples, validated))
        self._filepaths = [os.path.join(self.directory, fname) for fname in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _check_params(self, df, x_col, y_col, weight_col, classes) -> None:
        mode = self.class_mode
        if mode not in self.allowed_class_modes:
            raise ValueError("Invalid class_mode: {}; expected one of: {}".format(
                mode, self.allowed_class_modes))
        if mode == "multi_output" and not isinstance(y_col, list):
            raise TypeError('If class_mode="{}", y_col must be a list. Received {}.'
                            .format(mode, type(y_col).__name__))
        if not all(isinstance(v, str) for v in df[x_col]):
            raise TypeError("All values in column x_col=%s must be strings." % (x_col,))
        if mode in {"binary", "sparse"} and not all(isinstance(v, str) for v in df[y_col]):
            raise TypeError('If class_mode="{}", y_col="{}" column values must be strings.'
                            .format(mode, y_col))
        if mode == "binary":
            if classes:
                if len(set(classes)) != 2:
                    raise ValueError('If class_mode="binary" there must be 2 classes. {} '
                                     "class/es were given.".format(len(set(classes))))
            elif df[y_col].nunique() != 2:
                raise ValueError('If class_mode="binary" there must be 2 classes. Found {} '
                                 "classes.".format(df[y_col].nunique()))
        if mode == "categorical" and not all(isinstance(v, (str, list, tuple))
                                             for v in df[y_col]):
            raise TypeError('If class_mode="{}", y_col="{}" column values must be type '
                            "string, list or tuple.".format(mode, y_col))
        if classes and mode in {"input", "multi_output", "raw", None}:
            warnings.warn('`classes` will be ignored given the class_mode="{}"'.format(mode))
        if weight_col and not issubclass(df[weight_col].dtype.type, np.number):
            raise TypeError("Column weight_col=%s must be numeric." % (weight_col,))

    def get_classes(self, df, y_col):
        """The class index (or list of indices) of each row."""
        labels = []
        for label in df[y_col]:
            if isinstance(label, (list, tuple)):
                labels.append([self.class_indices[name] for name in label])
            else:
                labels.append(self.class_indices[label])
        return labels

    @staticmethod
    def _filter_classes(df, y_col, classes):
        """(rows with a kept class, labels restricted to the kept classes; the classes
        in index order)."""
        df = df.copy()

        def kept(labels, wanted):
            if isinstance(labels, (list, tuple)):
                return [name for name in labels if name in wanted] or None
            if isinstance(labels, str):
                return labels if labels in wanted else None
            raise TypeError("Expect string, list or tuple but found {} in {} column "
                            .format(type(labels), y_col))

        if classes:
            classes = list(dict.fromkeys(classes))  # first occurrences, in order
            df[y_col] = df[y_col].apply(lambda labels: kept(labels, classes))
        else:
            found = set()
            for labels in df[y_col]:
                found.update(labels if isinstance(labels, (list, tuple)) else [labels])
            classes = sorted(found)
        return df.dropna(subset=[y_col]), classes

    def _filter_valid_filepaths(self, df, x_col):
        """The rows of `df` whose path is an image file (a warning counts the others)."""
        paths = df[x_col].map(lambda fname: os.path.join(self.directory, fname))
        mask = paths.apply(validate_filename, args=(self.white_list_formats,))
        n_invalid = int((~mask).sum())
        if n_invalid:
            warnings.warn('Found {} invalid image filename(s) in x_col="{}". These '
                          "filename(s) will be ignored.".format(n_invalid, x_col))
        return df[mask]

    @property
    def filepaths(self):
        """The paths of the image files."""
        return self._filepaths

    @property
    def labels(self):
        """The targets of 'raw' and 'multi_output'; else the class of each row."""
        if self.class_mode in {"multi_output", "raw"}:
            return self._targets
        return self.classes

    @property
    def sample_weight(self):
        """The weight column's values, or None."""
        return self._sample_weight
