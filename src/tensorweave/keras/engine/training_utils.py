"""The data side of Keras' graph-mode training loop: NumPy inputs, targets and weights
checked and put in the order of the model's feeds, class weights turned into sample
weights, the validation split, and batches.

As TF's Keras (training_utils_v1): data may be an array, a list of arrays (in the order
of the model's inputs or outputs) or a dict by input or output name; a 1-D array becomes
a column (n, 1) unless the model expects rank 1; `validation_split` takes the last
fraction of the samples (before any shuffling).
"""
from __future__ import annotations

import collections.abc
import math
import numbers

import numpy as np

import tensorweave as tf


class DataSpec:
    """The static shape (a tuple, None dimensions unknown; None for an unknown rank) and
    dtype of one component of a dataset's elements: what a model without inputs is
    built from when its data is a dataset."""

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype


def check_numpy_data(data, argument: str) -> None:
    """Checks that `data` is NumPy data (arrays, lists, dicts of them, numbers).

    Raises:
      NotImplementedError: tensors, datasets, iterators or generators.
    """
    for value in tf.nest.flatten(data) if isinstance(data, (list, tuple, dict)) else [data]:
        if isinstance(value, (tf.Tensor, tf.Variable, tf.SparseTensor)):
            raise NotImplementedError(
                "tensorweave's Keras training loop takes NumPy data; `%s` holds the tensor "
                "%s (fitting on symbolic tensors is not supported: use target_tensors in "
                "compile, or run the graph with a tf.train optimizer)" % (argument, value))
        if hasattr(value, "make_initializable_iterator") or hasattr(value, "get_next") or \
                hasattr(value, "__next__"):
            raise NotImplementedError(
                "tensorweave's Keras takes NumPy data here; `%s` is of type %s (fit, "
                "evaluate and predict take tf.data datasets and iterators, generators "
                "and keras.utils.Sequence objects as `x` alone)"
                % (argument, type(value).__name__))
        if not _is_array_like(value):
            # np.asarray of an object that only has __getitem__ (a Sequence-like batch
            # source) indexes it until IndexError, which may never come
            raise ValueError("Failed to find data adapter that can handle input: %s (for "
                             "`%s`: tensorweave's Keras takes NumPy arrays, lists and dicts "
                             "of them, pandas objects, tf.data datasets, generators "
                             "and keras.utils.Sequence subclasses)"
                             % (type(value), argument))


def _is_array_like(value) -> bool:
    """Whether `value` converts to an array without iterating over it: arrays, numbers,
    strings, and objects that say how (__array__, as pandas' do) or have a shape."""
    return value is None or isinstance(value, (np.ndarray, np.generic, int, float, complex,
                                               str, bytes, range, numbers.Number)) or \
        hasattr(value, "__array__") or hasattr(value, "__array_interface__") or \
        hasattr(value, "shape")


def standardize_single_array(x, expected_shape=None):
    """`x` as an array; a 1-D array becomes a column unless `expected_shape` has rank 1.

    Raises:
      ValueError: an int.
    """
    if x is None:
        return None
    if isinstance(x, int) and not isinstance(x, bool):
        raise ValueError("Expected an array data type but received an integer: %s" % x)
    if not hasattr(x, "shape"):
        x = np.asarray(x)
    if len(x.shape) == 1 and (expected_shape is None or len(expected_shape) != 1):
        x = np.expand_dims(x, 1)
    return x


def standardize_input_data(data, names, shapes=None, check_batch_axis: bool = True,
                           exception_prefix: str = "") -> list:
    """The arrays of `data` in the order of `names`, checked against `shapes` (rank and
    the known dimensions, the batch one only with `check_batch_axis`).

    Raises:
      ValueError: a missing name, a wrong number of arrays, or a shape mismatch.
      TypeError: data that are not arrays.
    """
    if not names:
        if data is not None and hasattr(data, "__len__") and len(data) and \
                not isinstance(data, dict):
            raise ValueError("Error when checking model %s: expected no data, but got: %s"
                             % (exception_prefix, data))
        return []
    if data is None:
        return [None for _ in names]
    if isinstance(data, dict):
        try:
            data = [data[name] for name in names]
        except KeyError as e:
            raise ValueError('No data provided for "%s". Need data for each key in: %s'
                             % (e.args[0], names)) from None
    elif isinstance(data, (list, tuple)):
        if isinstance(data[0], (list, tuple)):
            data = [np.asarray(d) for d in data]
        elif len(names) == 1 and isinstance(data[0], (float, int)):
            data = [np.asarray(data)]
        else:
            data = list(data)
    else:
        data = [data]
    if shapes is not None:
        data = [standardize_single_array(x, shape) for x, shape in zip(data, shapes)]
    else:
        data = [standardize_single_array(x) for x in data]
    if len(data) != len(names):
        if data and hasattr(data[0], "shape"):
            raise ValueError("Error when checking model %s: the list of Numpy arrays that you "
                             "are passing to your model is not the size the model expected. "
                             "Expected to see %d array(s), for inputs %s but instead got the "
                             "following list of %d arrays: %s..."
                             % (exception_prefix, len(names), names, len(data),
                                str(data)[:200]))
        if len(names) > 1:
            raise ValueError("Error when checking model %s: you are passing a list as input to "
                             "your model, but the model expects a list of %d Numpy arrays "
                             "instead. The list you passed was: %s"
                             % (exception_prefix, len(names), str(data)[:200]))
        raise TypeError("Error when checking model %s: data should be a Numpy array, or "
                        "list/dict of Numpy arrays. Found: %s..."
                        % (exception_prefix, str(data)[:200]))
    if shapes:
        for name, array, shape in zip(names, data, shapes):
            _check_shape(name, array, shape, check_batch_axis, exception_prefix)
    return data


def _check_shape(name, array, shape, check_batch_axis, exception_prefix) -> None:
    if shape is None:
        return
    data_shape = tuple(array.shape)
    if len(data_shape) != len(shape):
        raise ValueError("Error when checking %s: expected %s to have %d dimensions, but got "
                         "array with shape %s" % (exception_prefix, name, len(shape),
                                                  data_shape))
    expected = tuple(shape)
    if not check_batch_axis:
        data_shape, expected = data_shape[1:], expected[1:]
    for dim, ref in zip(data_shape, expected):
        if ref is not None and dim is not None and ref != dim:
            # Like Keras, the message shows the shapes that were compared (batch axis
            # dropped unless it is checked).
            raise ValueError("Error when checking %s: expected %s to have shape %s but got "
                             "array with shape %s" % (exception_prefix, name, expected,
                                                      data_shape))


def standardize_sample_or_class_weights(x_weight, output_names, weight_type: str) -> list:
    """One weight entry (or None) per output name.

    Raises:
      ValueError: a list of the wrong length, or a dict with unknown names.
      TypeError: another type for a multi-output model.
    """
    if x_weight is None or isinstance(x_weight, (list, tuple)) and not x_weight:
        return [None for _ in output_names]
    if len(output_names) == 1:
        if isinstance(x_weight, (list, tuple)) and len(x_weight) == 1:
            return list(x_weight)
        if isinstance(x_weight, dict) and output_names[0] in x_weight:
            return [x_weight[output_names[0]]]
        return [x_weight]
    if isinstance(x_weight, (list, tuple)):
        if len(x_weight) != len(output_names):
            raise ValueError("Provided `%s` was a list of %d elements, but the model has %d "
                             "outputs. You should provide one `%s`array per model output."
                             % (weight_type, len(x_weight), len(output_names), weight_type))
        return list(x_weight)
    if isinstance(x_weight, collections.abc.Mapping):
        check_for_unexpected_keys(weight_type, x_weight, output_names)
        return [x_weight.get(name) for name in output_names]
    raise TypeError("The model has multiple outputs, so `%s` should be either a list or a "
                    "dict. Provided `%s` type not understood: %s"
                    % (weight_type, weight_type, x_weight))


def check_for_unexpected_keys(name: str, input_dict, expected_values) -> None:
    """Raises ValueError naming the keys of `input_dict` not in `expected_values`."""
    unknown = set(input_dict.keys()).difference(expected_values)
    if unknown:
        raise ValueError("Unknown entries in %s dictionary: %s. Only expected following "
                         "keys: %s" % (name, sorted(unknown), list(expected_values)))


def standardize_weights(y, sample_weight=None, class_weight=None, sample_weight_mode=None):
    """The per-sample (or per-timestep) weights of targets `y`: `sample_weight` times
    the weight `class_weight` gives each sample's class (argmax of a one-hot row, or
    the integer label); None when neither is given.

    Raises:
      ValueError: weights of the wrong rank or shape, an unknown mode, classes missing
        from class_weight.
    """
    if isinstance(sample_weight, tuple):
        sample_weight = sample_weight[0]
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight)
    if sample_weight_mode is not None and sample_weight_mode != "samplewise":
        if sample_weight_mode != "temporal":
            raise ValueError('"sample_weight_mode should be None or "temporal". Found: %s'
                             % sample_weight_mode)
        if len(y.shape) < 3:
            raise ValueError("Found a sample_weight array for an input with shape %s. "
                             "Timestep-wise sample weighting (use of sample_weight_mode="
                             '"temporal") is restricted to outputs that are at least 3D, i.e. '
                             "that have a time dimension." % (y.shape,))
        if sample_weight is not None and len(sample_weight.shape) != 2:
            raise ValueError("Found a sample_weight array with shape %s. In order to use "
                             "timestep-wise sample weighting, you should pass a 2D "
                             "sample_weight array." % (sample_weight.shape,))
    elif sample_weight is not None and len(sample_weight.shape) != 1:
        raise ValueError("Found a sample_weight array with shape %s. In order to use "
                         "timestep-wise sample weights, you should specify "
                         'sample_weight_mode="temporal" in compile(); found "%s" instead. If '
                         "you just mean to use sample-wise weights, make sure your "
                         "sample_weight array is 1D." % (sample_weight.shape,
                                                         sample_weight_mode))
    if sample_weight is not None:
        if len(sample_weight.shape) > len(y.shape):
            raise ValueError("Found a sample_weight with shape%s.Expected sample_weight with "
                             "rank less than or equal to %d" % (sample_weight.shape,
                                                                len(y.shape)))
        if y.shape[:sample_weight.ndim] != sample_weight.shape:
            raise ValueError("Found a sample_weight array with shape %s for an input with "
                             "shape %s. sample_weight cannot be broadcast."
                             % (sample_weight.shape, y.shape))
    class_sample_weight = None
    if isinstance(class_weight, dict):
        if len(y.shape) > 2:
            raise ValueError("`class_weight` not supported for 3+ dimensional targets.")
        y_classes = y
        if len(y.shape) == 2:
            if y.shape[1] > 1:
                y_classes = np.argmax(y, axis=1)
            elif y.shape[1] == 1:
                y_classes = np.reshape(y, y.shape[0])
        class_sample_weight = np.asarray([class_weight[c] for c in y_classes
                                          if c in class_weight])
        if len(class_sample_weight) != len(y_classes):
            missing = set(y_classes) - set(class_weight.keys())
            raise ValueError("`class_weight` must contain all classes in the data. The classes "
                             "%s exist in the data but not in `class_weight`." % missing)
    if class_sample_weight is not None and sample_weight is not None:
        return class_sample_weight * sample_weight
    if sample_weight is not None:
        return sample_weight
    return class_sample_weight


def fill_partial_sample_weights(targets, sample_weights, modes):
    """None when no output has weights; else one weight array per output, ones for the
    outputs without (per timestep for 'temporal' ones)."""
    if sample_weights is None or all(w is None for w in sample_weights):
        return None
    filled = []
    for y, weight, mode in zip(targets, sample_weights, modes):
        if weight is None:
            shape = (y.shape[0], y.shape[1]) if mode == "temporal" else (y.shape[0],)
            weight = np.ones(shape)
        filled.append(weight)
    return filled


def check_array_lengths(inputs, targets, weights=None) -> None:
    """Raises ValueError unless inputs, targets and weights all have one sample count."""
    def lengths(arrays):
        return set(a.shape[0] for a in arrays or [] if a is not None)
    set_x, set_y, set_w = lengths(inputs), lengths(targets), lengths(weights)
    if len(set_x) > 1:
        raise ValueError("All input arrays (x) should have the same number of samples. Got "
                         "array shapes: %s" % [x.shape for x in inputs])
    if len(set_y) > 1:
        raise ValueError("All target arrays (y) should have the same number of samples. Got "
                         "array shapes: %s" % [y.shape for y in targets])
    if set_x and set_y and set_x != set_y:
        raise ValueError("Input arrays should have the same number of samples as target "
                         "arrays. Found %d input samples and %d target samples."
                         % (list(set_x)[0], list(set_y)[0]))
    if len(set_w) > 1:
        raise ValueError("All sample_weight arrays should have the same number of samples. "
                         "Got array shapes: %s" % [w.shape for w in weights if w is not None])
    if set_y and set_w and set_y != set_w:
        raise ValueError("Sample_weight arrays should have the same number of samples as "
                         "target arrays. Got %d input samples and %d target samples."
                         % (list(set_y)[0], list(set_w)[0]))


def unpack_validation_data(validation_data):
    """(x, y, sample_weight) of `validation_data`, a 2- or 3-tuple of NumPy data.

    Raises:
      ValueError: another length.
      NotImplementedError: a generator or another object without a length.
    """
    if not hasattr(validation_data, "__len__"):
        raise NotImplementedError("validation_data must be a tuple (x_val, y_val) or (x_val, "
                                  "y_val, val_sample_weights) of NumPy data, or a tf.data "
                                  "dataset or iterator; got a %s"
                                  % type(validation_data).__name__)
    if len(validation_data) == 2:
        (val_x, val_y), val_sample_weight = validation_data, None
    elif len(validation_data) == 3:
        val_x, val_y, val_sample_weight = validation_data
    else:
        raise ValueError("When passing a `validation_data` argument, it must contain either 2 "
                         "items (x_val, y_val), or 3 items (x_val, y_val, val_sample_weights), "
                         "or alternatively it could be a dataset or a dataset or a dataset "
                         "iterator. However we received `validation_data=%s`"
                         % (validation_data,))
    return val_x, val_y, val_sample_weight


def slice_arrays(arrays, start=None, stop=None) -> list:
    """`arrays[start:stop]` each (or `arrays[start]` when start is an index array)."""
    if hasattr(start, "__len__"):
        return [None if a is None else a[start] for a in arrays]
    return [None if a is None else a[start:stop] for a in arrays]


def split_training_and_validation_data(x, y, sample_weights, validation_split: float):
    """(x, y, weights, val_x, val_y, val_weights): the last `validation_split` of the
    samples are the validation data."""
    split_at = int(x[0].shape[0] * (1.0 - validation_split))
    x, val_x = slice_arrays(x, 0, split_at), slice_arrays(x, split_at)
    y, val_y = slice_arrays(y, 0, split_at), slice_arrays(y, split_at)
    val_sample_weights = None
    if sample_weights:
        sample_weights, val_sample_weights = (slice_arrays(sample_weights, 0, split_at),
                                              slice_arrays(sample_weights, split_at))
    return x, y, sample_weights, val_x, val_y, val_sample_weights


def make_batches(size: int, batch_size: int) -> list:
    """[(start, end)] of the batches of `size` samples."""
    num_batches = int(math.ceil(size / float(batch_size)))
    return [(i * batch_size, min(size, (i + 1) * batch_size)) for i in range(num_batches)]


def batch_shuffle(index_array, batch_size: int):
    """`index_array` with its whole batches shuffled (the last partial batch stays last),
    as shuffle='batch' does."""
    batch_count = int(len(index_array) / batch_size)
    last_batch = index_array[batch_count * batch_size:]
    index_array = index_array[:batch_count * batch_size]
    index_array = index_array.reshape((batch_count, batch_size))
    np.random.shuffle(index_array)
    return np.append(index_array.flatten(), last_batch)


def should_run_validation(validation_freq, epoch: int) -> bool:
    """Whether to validate after `epoch` (0-based): every `validation_freq` epochs, or
    at the 1-based epochs a container lists.

    Raises:
      ValueError: a frequency below 1, or neither an int nor a container.
    """
    one_indexed = epoch + 1
    if isinstance(validation_freq, int):
        if validation_freq < 1:
            raise ValueError("`validation_freq` can not be less than 1.")
        return one_indexed % validation_freq == 0
    if not isinstance(validation_freq, collections.abc.Container):
        raise ValueError("`validation_freq` must be an Integer or `collections.abc.Container` "
                         "(e.g. list, tuple, etc.)")
    return one_indexed in validation_freq
