"""`tf.keras.layers.Embedding`: rows of an 'embeddings' [input_dim, output_dim] variable
looked up by integer index."""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, constraints, initializers, regularizers
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.layer_utils import layer_config


@tf_export("keras.layers.Embedding")
class Embedding(Layer):
    """Maps integer indices to dense vectors: output shape = input shape + (output_dim,).

    As TF's in v1, its dtype defaults to floatx() (not the integer input's) and it
    declares the input shape (input_length,), so a Sequential starting with it is built
    at once on a placeholder 'embedding_input'.

    Args:
      input_dim: the vocabulary size.
      output_dim: the embedding size.
      embeddings_initializer: default 'uniform' (in [-0.05, 0.05]).
      embeddings_regularizer, activity_regularizer: regularizers or names.
      embeddings_constraint: a constraint or its name.
      mask_zero: whether index 0 is padding: the output's mask is `inputs != 0`
        (index 0 still has an embedding row).
      input_length: the static length of the input sequences, or None.
      sparse: must be False.
      **kwargs: the base Layer's.

    Raises:
      ValueError: non-positive dimensions.
      NotImplementedError: sparse.
    """

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer="uniform",
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero: bool = False,
                 input_length: Optional[int] = None, sparse: bool = False, **kwargs):
        if "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,) if input_length else (None,)
        if input_dim <= 0 or output_dim <= 0:
            raise ValueError("Both `input_dim` and `output_dim` should be positive, Received "
                             "input_dim = %s and output_dim = %s" % (input_dim, output_dim))
        if sparse:
            raise NotImplementedError("Embedding(sparse=True) is not supported by tensorweave")
        kwargs.setdefault("dtype", backend.floatx())
        kwargs.pop("autocast", None)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self.input_length = input_length
        self.sparse = sparse

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim), initializer=self.embeddings_initializer,
            name="embeddings", regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint, experimental_autocast=False)
        self.built = True

    def call(self, inputs):
        if backend.dtype(inputs) not in ("int32", "int64"):
            inputs = tf.cast(inputs, "int32")
        return tf.nn.embedding_lookup(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        """`inputs != 0` with mask_zero, else None."""
        if not self.mask_zero:
            return None
        return tf.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        return tf.TensorShape(dims + [self.output_dim])

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer",
            "activity_regularizer", "embeddings_constraint", "mask_zero", "input_length"))
