"""`tf.keras.utils`: the NumPy helpers TF1-era input code uses (`to_categorical`,
`normalize`), the custom objects of deserialization (serialization.py), and `Sequence`,
the base class of batch sources for `fit` (training_generator.py); `load_img`,
`img_to_array`, `array_to_img` and `save_img` come from preprocessing/image_files.py,
`get_file` from data_utils.py. Plotting (plot_model, model_to_dot) is not provided."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework.api_export import export, tf_export
from tensorweave.keras import serialization
from tensorweave.keras.engine.functional import get_source_inputs

export(get_source_inputs, "keras.utils.get_source_inputs")
export(serialization.CustomObjectScope, "keras.utils.CustomObjectScope",
       "keras.utils.custom_object_scope")
for _name in ("get_custom_objects", "register_keras_serializable", "get_registered_name",
              "get_registered_object"):
    export(getattr(serialization, _name), "keras.utils." + _name)


def _class_vector(y, num_classes: Optional[int]):
    """(the classes of `y` flattened, the leading shape of the result, the class count):
    a trailing axis of size 1 of `y` is dropped, the count defaults to max(y) + 1."""
    y = np.array(y, dtype="int")
    input_shape = y.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    y = y.reshape(-1)
    return y, input_shape, int(num_classes) if num_classes else int(np.max(y)) + 1


@tf_export("keras.utils.to_categorical")
def to_categorical(y, num_classes: Optional[int] = None, dtype: str = "float32") -> np.ndarray:
    """One-hot rows of the integer class vector `y` (a trailing axis of size 1 is
    dropped); `num_classes` defaults to max(y) + 1."""
    y, input_shape, num_classes = _class_vector(y, num_classes)
    n = y.shape[0]
    categorical = np.zeros((n, num_classes), dtype=dtype)
    categorical[np.arange(n), y] = 1
    return np.reshape(categorical, input_shape + (num_classes,))


@tf_export("keras.utils.to_ordinal")
def to_ordinal(y, num_classes: Optional[int] = None, dtype: str = "float32") -> np.ndarray:
    """Ordinal rows of the integer class vector `y`: class c becomes c ones followed by
    zeros, `num_classes - 1` entries (a trailing axis of size 1 of `y` is dropped;
    `num_classes` defaults to max(y) + 1)."""
    y, input_shape, num_classes = _class_vector(y, num_classes)
    ordinal = (y[:, None] > np.arange(num_classes - 1)).astype(dtype)
    return np.reshape(ordinal, input_shape + (num_classes - 1,))


@tf_export("keras.utils.normalize")
def normalize(x, axis: int = -1, order: int = 2) -> np.ndarray:
    """`x` divided by its `order`-norm along `axis` (zero norms left as they are)."""
    norms = np.atleast_1d(np.linalg.norm(x, order, axis))
    norms[norms == 0] = 1
    return x / np.expand_dims(norms, axis)


@tf_export("keras.utils.Sequence")
class Sequence:
    """Base object for fitting to a sequence of data: a subclass implements
    `__getitem__` (the batch at an index: x, (x, y) or (x, y, sample_weight)) and
    `__len__` (the number of batches), and may implement `on_epoch_end`, which `fit`
    calls after each pass over the batches. `fit`, `evaluate` and `predict` take it as
    `x` (training_generator.py)."""

    def __getitem__(self, index):
        """The batch at position `index`."""
        raise NotImplementedError("%s must implement __getitem__ (the batch at an index), "
                                  "as every keras.utils.Sequence" % type(self).__name__)

    def __len__(self):
        """The number of batches in the Sequence."""
        raise NotImplementedError("%s must implement __len__ (the number of batches), as "
                                  "every keras.utils.Sequence" % type(self).__name__)

    def on_epoch_end(self):
        """Called at the end of every epoch (pass over the batches)."""

    def __iter__(self):
        """The batches, in order."""
        for item in (self[i] for i in range(len(self))):
            yield item
