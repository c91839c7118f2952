"""Keras 2.15's categorical preprocessing layers (also under
`tf.keras.layers.experimental.preprocessing`): Hashing (values to hash bins),
Discretization (values to the buckets of fixed boundaries) and CategoryEncoding (integer
ids to one-hot, multi-hot or count vectors), on dense inputs.

`adapt` (Discretization's bins from data) is TF 2 only: in TF1 graph mode Keras raises
RuntimeError, as PreprocessingLayer does here.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.layer_utils import layer_config

_ENCODINGS = ("int", "one_hot", "multi_hot", "count")


@tf_export("keras.layers.experimental.preprocessing.PreprocessingLayer")
class PreprocessingLayer(Layer):
    """The base of the preprocessing layers whose state `adapt` computes from data
    (Keras' `PreprocessingLayer`). In TF1 graph mode, as here, Keras supports no `adapt`;
    the state comes from the constructor's arguments or `set_weights`."""

    @property
    def is_adapted(self) -> bool:
        """Whether `adapt` has run: never, in graph mode."""
        return False

    def adapt(self, data, batch_size: Optional[int] = None, steps: Optional[int] = None):
        """Keras' adapt, which TF1 graph mode does not support.

        Raises:
          RuntimeError: always, as Keras 2.15 under `tf.compat.v1` graph mode.
        """
        raise RuntimeError("`adapt` is only supported in tensorflow v2.")


def _check_output_mode(output_mode: str, allowed, layer: str) -> None:
    if output_mode not in allowed:
        raise ValueError("Unkown value for `output_mode` argument of layer %s. Allowed "
                         "values are: or one of the following values: %s. Received: %s"
                         % (layer, tuple(allowed), output_mode))


def _output_dtype(kwargs: dict, output_mode: str) -> None:
    """Keras' dtype of an encoding layer: int64 for 'int' output (also replacing a
    non-integer dtype), else the given one or floatx."""
    dtype = kwargs.get("dtype")
    if dtype is None:
        kwargs["dtype"] = "int64" if output_mode == "int" else backend.floatx()
    elif output_mode == "int" and not tf.as_dtype(dtype).is_integer:
        kwargs["dtype"] = "int64"


def encode_categorical(ids, output_mode: str, depth: int, dtype, count_weights=None):
    """Keras' `encode_categorical_inputs` for dense ids: 'int' casts them to `dtype`;
    'one_hot' (each id, or each row of one id), 'multi_hot' and 'count' (each row of ids,
    or the whole of a 1-D input) give vectors of `depth`, ids outside [0, depth)
    counting nowhere.

    Raises:
      ValueError: an output of rank over 2.
    """
    if output_mode == "int":
        return tf.identity(tf.cast(ids, dtype))
    original_shape = ids.shape
    if ids.shape.ndims == 0:
        ids = tf.expand_dims(ids, -1)
    if output_mode == "one_hot" and ids.shape.as_list()[-1] != 1:
        ids = tf.expand_dims(ids, -1)
    if ids.shape.ndims > 2:
        raise ValueError("When output_mode is not `'int'`, maximum supported output rank "
                         "is 2. Received output_mode %s and input shape %s, which would "
                         "result in output rank %d."
                         % (output_mode, original_shape, ids.shape.ndims))
    hot = tf.one_hot(ids, depth, dtype=dtype)
    if count_weights is not None:
        hot = hot * tf.expand_dims(tf.cast(count_weights, dtype), -1)
    counts = tf.reduce_sum(hot, axis=-2)
    if output_mode != "count":
        counts = tf.minimum(counts, tf.ones([], dtype))
    return counts


def _check_sparse(sparse: bool, output_mode: str, quote: str) -> None:
    if sparse and output_mode == "int":
        raise ValueError("`sparse` may only be true if `output_mode` is {q}one_hot{q}, "
                         "{q}multi_hot{q}, or {q}count{q}. Received: sparse={s} and "
                         "output_mode={m}".format(q=quote, s=sparse, m=output_mode))
    if sparse:
        raise NotImplementedError("sparse outputs of the preprocessing layers are not "
                                  "supported by tensorweave")


@tf_export("keras.layers.Hashing", "keras.layers.experimental.preprocessing.Hashing")
class Hashing(Layer):
    """Hashes values (strings, or integers through their decimal strings) into
    `num_bins` bins: FarmHash fingerprint64 modulo the bins, or with a `salt` the keyed
    SipHash of `tf.strings.to_hash_bucket_strong`. With `mask_value`, bin 0 is kept for
    it and the others hash into bins 1 .. num_bins - 1.

    Args:
      num_bins: the number of bins (positive).
      mask_value: the value sent to bin 0, or None.
      salt: an int (used twice) or a pair of ints, the SipHash key; None: FarmHash.
      output_mode: 'int' (the bin ids), 'one_hot', 'multi_hot' or 'count' (vectors of
        num_bins).
      sparse: sparse outputs (not supported by tensorweave; Keras' check first).
      **kwargs: the base Layer's (dtype default: int64 for 'int', else floatx).

    Raises:
      ValueError: bad num_bins, salt, output_mode or sparse.
    """

    def __init__(self, num_bins: int, mask_value=None, salt=None, output_mode: str = "int",
                 sparse: bool = False, **kwargs):
        _output_dtype(kwargs, output_mode)
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError("The `num_bins` for `Hashing` cannot be `None` or non-positive "
                             "values. Received: num_bins=%s." % (num_bins,))
        _check_output_mode(output_mode, _ENCODINGS, "Hashing")
        _check_sparse(sparse, output_mode, '"')
        if salt is None:
            self.salt = None
        elif isinstance(salt, int):
            self.salt = [salt, salt]
        elif isinstance(salt, (tuple, list)) and len(salt) == 2:
            self.salt = salt
        else:
            raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size "
                             "2 integers, or a single integer. Received: salt=%s." % (salt,))
        self.num_bins = num_bins
        self.mask_value = mask_value
        self.output_mode = output_mode
        self.sparse = sparse

    def _bins(self, values):
        bins = self.num_bins
        mask = None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = tf.equal(values, self.mask_value)
        if values.dtype.is_integer:
            values = tf.as_string(values)
        if self.salt is not None:
            ids = tf.strings.to_hash_bucket_strong(values, bins, key=list(self.salt),
                                                   name="hash")
        else:
            ids = tf.strings.to_hash_bucket_fast(values, bins, name="hash")
        if mask is not None:
            ids = tf.where(mask, tf.zeros_like(ids), ids + 1)
        return ids

    def call(self, inputs):
        ids = self._bins(tf.convert_to_tensor(inputs))
        return encode_categorical(ids, self.output_mode, self.num_bins, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape  # as Keras', whatever the output mode

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "num_bins", "salt", "mask_value", "output_mode", "sparse"))


@tf_export("keras.layers.Discretization",
           "keras.layers.experimental.preprocessing.Discretization")
class Discretization(PreprocessingLayer):
    """Buckets values by sorted `bin_boundaries`: value v goes to the number of
    boundaries <= v (so len(bin_boundaries) + 1 buckets), then is encoded.

    Args:
      bin_boundaries: the sorted boundaries (None: to be adapted, which graph mode does
        not support, so every value is in bucket 0).
      num_bins: the number of bins `adapt` would compute.
      epsilon: `adapt`'s error tolerance.
      output_mode: 'int', 'one_hot', 'multi_hot' or 'count'.
      sparse: sparse outputs (not supported by tensorweave; Keras' check first).
      **kwargs: the base Layer's (dtype default: int64 for 'int', else floatx).

    Raises:
      ValueError: bad num_bins, output_mode or sparse, or both num_bins and
        bin_boundaries.
    """

    def __init__(self, bin_boundaries=None, num_bins: Optional[int] = None,
                 epsilon: float = 0.01, output_mode: str = "int", sparse: bool = False,
                 **kwargs):
        _output_dtype(kwargs, output_mode)
        super().__init__(**kwargs)
        _check_output_mode(output_mode, _ENCODINGS, "Discretization")
        _check_sparse(sparse, output_mode, "'")
        if num_bins is not None and num_bins < 0:
            raise ValueError("`num_bins` must be greater than or equal to 0. You passed "
                             "`num_bins=%s`" % (num_bins,))
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. You "
                             "passed `num_bins=%s` and `bin_boundaries=%s`"
                             % (num_bins, bin_boundaries))
        if isinstance(bin_boundaries, np.ndarray):
            bin_boundaries = bin_boundaries.tolist()
        self.input_bin_boundaries = bin_boundaries
        self.bin_boundaries = bin_boundaries if bin_boundaries is not None else []
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse

    def call(self, inputs):
        inputs = tf.convert_to_tensor(inputs)
        ids = tf.raw_ops.Bucketize(input=inputs,
                                   boundaries=[float(b) for b in self.bin_boundaries])
        return encode_categorical(ids, self.output_mode, len(self.bin_boundaries) + 1,
                                  self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape  # as Keras', whatever the output mode

    def get_config(self) -> dict:
        config = Layer.get_config(self)
        config["bin_boundaries"] = self.input_bin_boundaries
        return layer_config(self, config, ("num_bins", "epsilon", "output_mode", "sparse"))


@tf_export("keras.layers.CategoryEncoding",
           "keras.layers.experimental.preprocessing.CategoryEncoding")
class CategoryEncoding(Layer):
    """Encodes integer ids in [0, num_tokens) as vectors of num_tokens: 'one_hot' (each
    id), 'multi_hot' (1 for each id of a row) or 'count' (the times each id occurs in a
    row, or the sum of the `count_weights` of its occurrences).

    Args:
      num_tokens: the number of ids (at least 1).
      output_mode: 'multi_hot' (default), 'one_hot' or 'count'.
      sparse: sparse outputs (not supported by tensorweave).
      **kwargs: the base Layer's (dtype default: floatx).

    Raises:
      ValueError: a missing or non-positive num_tokens, a bad output_mode.
      InvalidArgumentError (at run time): an id outside [0, num_tokens).
    """

    def __init__(self, num_tokens: Optional[int] = None, output_mode: str = "multi_hot",
                 sparse: bool = False, **kwargs):
        if "dtype" not in kwargs:  # floats, not TF1 graph mode's dtype of the inputs
            kwargs["dtype"] = backend.floatx()
        super().__init__(**kwargs)
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of "
                             "tokens is not known beforehand, use the IntegerLookup layer "
                             "instead.")
        if num_tokens < 1:
            raise ValueError("`num_tokens` must be >= 1. Received: num_tokens=%s."
                             % (num_tokens,))
        _check_output_mode(output_mode, ("count", "one_hot", "multi_hot"),
                           "CategoryEncoding")
        _check_sparse(sparse, output_mode, "'")
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = sparse

    def call(self, inputs, count_weights=None):
        inputs = tf.convert_to_tensor(inputs)
        in_range = tf.logical_and(
            tf.greater(tf.cast(self.num_tokens, inputs.dtype), tf.reduce_max(inputs)),
            tf.greater_equal(tf.reduce_min(inputs), tf.cast(0, inputs.dtype)))
        check = tf.Assert(in_range, ["Input values must be in the range 0 <= values < "
                                     "num_tokens with num_tokens=%s" % self.num_tokens])
        with tf.control_dependencies([check]):
            return encode_categorical(inputs, self.output_mode, self.num_tokens,
                                      self.compute_dtype, count_weights)

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        if not dims:
            return tf.TensorShape([self.num_tokens])
        if self.output_mode == "one_hot" and dims[-1] != 1:
            return tf.TensorShape(dims + [self.num_tokens])
        return tf.TensorShape(dims[:-1] + [self.num_tokens])

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self),
                            ("num_tokens", "output_mode", "sparse"))
