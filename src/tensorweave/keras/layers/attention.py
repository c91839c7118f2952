"""Keras attention layers as `tf.compat.v1.keras.layers` has them in TF 2.15: Attention
(Luong's dot-product, or 'concat' scores), AdditiveAttention (Bahdanau's) and
MultiHeadAttention (Vaswani et al. 2017).

Attention and AdditiveAttention take [query, value] or [query, value, key] ([batch, Tq,
dim], [batch, Tv, dim]) and masks [query_mask, value_mask]: scores [batch, Tq, Tv], a
softmax over Tv (masked value steps, and later steps with `use_causal_mask`, get -1e9
first), then the weighted sum of the values; masked query steps output zeros.

MultiHeadAttention projects query, key and value with EinsumDense sublayers ('query',
'key', 'value' kernels [dim, num_heads, key_dim]), attends over `attention_axes` per
head, and projects back ('attention_output' [num_heads, value_dim, *output_shape]). The
sublayers are made at its first call, from the inputs' ranks, as TF's; weights and their
order are TF's, so `get_weights`/`set_weights` exchange them.
"""
from __future__ import annotations

import collections.abc
import logging
import math
import string

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, constraints, initializers, regularizers
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.activation import Softmax
from tensorweave.keras.layers.core import Dropout
from tensorweave.keras.layers.einsum_dense import EinsumDense
from tensorweave.layers import base as layers_base

_LETTERS = string.ascii_lowercase


# --- Attention and AdditiveAttention -------------------------------------------------------
def _lower_triangular_mask(shape):
    """Booleans of `shape`: True where the row index (axis -2) is at least the column
    index (axis -1)."""
    row_index = tf.cumsum(tf.ones(shape=shape, dtype=tf.int32), axis=-2)
    col_index = tf.cumsum(tf.ones(shape=shape, dtype=tf.int32), axis=-1)
    return tf.greater_equal(row_index, col_index)


def _merge_masks(x, y):
    if x is None:
        return y
    if y is None:
        return x
    return tf.logical_and(x, y)


class _BaseDenseAttention(Layer):
    """What Attention and AdditiveAttention share: the call on [query, value, (key)]
    with masks, causal masking, the softmax with dropout. Subclasses compute the scores
    ([batch, Tq, Tv]) in `_calculate_scores(query, key)`.

    Args:
      dropout: the fraction of the attention weights dropped in training.
      **kwargs: the base Layer's; `causal` (deprecated in TF: use `use_causal_mask`).
    """

    def __init__(self, dropout: float = 0.0, **kwargs):
        if "causal" in kwargs:
            logging.warning("`causal` argument is deprecated. Please use `use_causal_mask` "
                            "in call() method to specify causal masking.")
        self.causal = kwargs.pop("causal", False)
        super().__init__(**kwargs)
        self.dropout = dropout
        self.supports_masking = True

    def _calculate_scores(self, query, key):
        raise NotImplementedError("%s does not define _calculate_scores"
                                  % type(self).__name__)

    def _apply_scores(self, scores, value, scores_mask=None, training=None):
        """(softmax(scores) @ value, softmax(scores)): scores where `scores_mask` is False
        get -1e9 (-65504 in float16) first; the weights are dropped out in training."""
        if scores_mask is not None:
            padding_mask = tf.logical_not(scores_mask)
            large = 65504.0 if scores.dtype == tf.float16 else 1.0e9
            scores -= large * tf.cast(padding_mask, dtype=scores.dtype)
        if training is None:
            training = backend.learning_phase()
        weights = tf.nn.softmax(scores)
        if self.dropout > 0:
            dropout_weights = weights
            weights = layers_base.smart_cond(
                training, lambda: tf.nn.dropout(dropout_weights, rate=self.dropout),
                lambda: tf.identity(dropout_weights))
        return tf.matmul(weights, value), weights

    def call(self, inputs, mask=None, training=None, return_attention_scores: bool = False,
             use_causal_mask: bool = False):
        self._validate_call_args(inputs=inputs, mask=mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        query_mask = mask[0] if mask else None
        value_mask = mask[1] if mask else None
        scores = self._calculate_scores(query=query, key=key)
        if value_mask is not None:
            value_mask = tf.expand_dims(value_mask, axis=-2)  # [batch, 1, Tv]
        causal_mask = None
        if self.causal or use_causal_mask:
            scores_shape = tf.shape(scores)
            causal_mask = _lower_triangular_mask(tf.concat(
                [tf.ones_like(scores_shape[:-2]), scores_shape[-2:]], axis=0))
        result, attention_scores = self._apply_scores(
            scores=scores, value=value, scores_mask=_merge_masks(value_mask, causal_mask),
            training=training)
        if query_mask is not None:
            result *= tf.cast(tf.expand_dims(query_mask, axis=-1), dtype=result.dtype)
        if return_attention_scores:
            return result, attention_scores
        return result

    def compute_mask(self, inputs, mask=None):
        self._validate_call_args(inputs=inputs, mask=mask)
        if mask and mask[0] is not None:
            return tf.convert_to_tensor(mask[0])
        return None

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape[0])

    def _validate_call_args(self, inputs, mask) -> None:
        class_name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError("%s layer must be called on a list of inputs, namely [query, "
                             "value] or [query, value, key]. Received: %s."
                             % (class_name, inputs))
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError("%s layer accepts inputs list of length 2 or 3, namely [query, "
                             "value] or [query, value, key]. Received length: %d."
                             % (class_name, len(inputs)))
        if mask:
            if not isinstance(mask, list):
                raise ValueError("%s layer mask must be a list, namely [query_mask, "
                                 "value_mask]. Received: %s." % (class_name, mask))
            if len(mask) < 2 or len(mask) > len(inputs):
                raise ValueError("%s layer mask must be a list of length 2, namely "
                                 "[query_mask, value_mask]. Received length: %d."
                                 % (class_name, len(mask)))

    def get_config(self) -> dict:
        config = super().get_config()
        config["dropout"] = self.dropout
        return config


_CALL_DOC = """
    Call arguments:
      inputs: [query ([batch, Tq, dim]), value ([batch, Tv, dim]), optionally key
        ([batch, Tv, dim]; default: value)].
      mask: [query_mask ([batch, Tq]), value_mask ([batch, Tv])]: masked query steps
        output zeros, masked value steps get no weight.
      training: whether dropout applies (default: the learning phase).
      return_attention_scores: also return the weights ([batch, Tq, Tv], after the
        mask and softmax).
      use_causal_mask: step i of the query attends to the value steps j <= i only.

    Output: [batch, Tq, dim] (and the weights).

    Raises:
      ValueError: at call, inputs that are not a list of 2 or 3 tensors, or a mask that
        is not a list of 2 or 3.
"""


@tf_export("keras.layers.Attention")
class Attention(_BaseDenseAttention):
    __doc__ = """Dot-product (Luong-style) attention: scores `query @ key^T`, or with
    `score_mode='concat'` `sum(tanh(query + key))` over the features.

    Args:
      use_scale: multiply the scores by a learned scalar 'scale' (initially 1; with
        'concat', it multiplies `query + key` inside the tanh).
      score_mode: 'dot' or 'concat' ('concat' adds a learned scalar
        'concat_score_weight', initially 1, multiplying the scores).
      dropout: the fraction of the attention weights dropped in training.
      **kwargs: the base Layer's.

    Raises:
      ValueError: another score_mode.
    """ + _CALL_DOC

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", **kwargs):
        super().__init__(**kwargs)
        self.use_scale = use_scale
        self.score_mode = score_mode
        if score_mode not in ("dot", "concat"):
            raise ValueError('Received: score_mode=%s. Acceptable values are: ["dot", '
                             '"concat"]' % (score_mode,))

    def build(self, input_shape):
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones",
                                         dtype=self.dtype, trainable=True)
        self.concat_score_weight = None
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(
                name="concat_score_weight", shape=(), initializer="ones", dtype=self.dtype,
                trainable=True)
        self.built = True

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = tf.matmul(query, key, transpose_b=True)
            if self.scale is not None:
                scores *= self.scale
            return scores
        summed = tf.expand_dims(query, axis=-2) + tf.expand_dims(key, axis=-3)
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * tf.reduce_sum(tf.tanh(summed), axis=-1)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(use_scale=self.use_scale, score_mode=self.score_mode)
        return config


@tf_export("keras.layers.AdditiveAttention")
class AdditiveAttention(_BaseDenseAttention):
    __doc__ = """Additive (Bahdanau-style) attention: scores `sum(scale * tanh(query +
    key))` over the features.

    Args:
      use_scale: learn 'scale' ([dim], glorot_uniform) weighting the features (else 1).
      dropout: the fraction of the attention weights dropped in training.
      **kwargs: the base Layer's.
    """ + _CALL_DOC

    def __init__(self, use_scale: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = use_scale

    def build(self, input_shape):
        dim = tf.TensorShape(input_shape[1]).as_list()[-1]
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=[dim],
                                         initializer="glorot_uniform", dtype=self.dtype,
                                         trainable=True)
        self.built = True

    def _calculate_scores(self, query, key):
        scale = self.scale if self.use_scale else 1.0
        return tf.reduce_sum(scale * tf.tanh(tf.expand_dims(query, axis=-2) +
                                             tf.expand_dims(key, axis=-3)), axis=-1)

    def get_config(self) -> dict:
        config = super().get_config()
        config["use_scale"] = self.use_scale
        return config


# --- MultiHeadAttention --------------------------------------------------------------------
def build_attention_equation(rank: int, attn_axes: tuple):
    """(dot-product equation, combine equation, rank of the scores) for projected
    query/key/value of `rank` ([batch, *non-attention axes, *attention axes, heads,
    channels]) attending over `attn_axes`: scores are [batch dims, heads, query attention
    axes, key attention axes]."""
    target = _LETTERS[:rank]
    batch_dims = tuple(np.delete(range(rank), attn_axes + (rank - 1,)))
    offset = rank
    source = ""
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += _LETTERS[offset]
            offset += 1
    product = "".join([target[i] for i in batch_dims] + [target[i] for i in attn_axes] +
                      [source[i] for i in attn_axes])
    dot_product = "%s,%s->%s" % (source, target, product)
    combine = "%s,%s->%s" % (product, source, target)
    return dot_product, combine, len(product)


def build_projection_equation(free_dims: int, bound_dims: int, output_dims: int):
    """(equation, bias axes, output rank) of a projection keeping `free_dims` leading
    axes, contracting `bound_dims` and making `output_dims` new ones."""
    free = _LETTERS[:free_dims]
    bound = _LETTERS[free_dims:free_dims + bound_dims]
    out = _LETTERS[free_dims + bound_dims:free_dims + bound_dims + output_dims]
    return "%s,%s->%s" % (free + bound, bound + out, free + out), out, free_dims + output_dims


def _output_shape(output_rank: int, known_last_dims) -> list:
    return [None] * (output_rank - len(known_last_dims)) + list(known_last_dims)


@tf_export("keras.layers.MultiHeadAttention")
class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al. 2017): query, key and value projected to
    `num_heads` heads, scaled dot-product attention per head over `attention_axes`, the
    heads projected back.

    Args:
      num_heads: the number of heads.
      key_dim: the size of each head for query and key.
      value_dim: the size of each head for value (default key_dim).
      dropout: the fraction of the attention weights dropped in training.
      use_bias: whether the projections have biases.
      output_shape: the output's last axes (an int or a tuple; default: the query's
        last axis).
      attention_axes: the axes attention runs over (default: all but the batch and the
        last axis).
      kernel_initializer ('glorot_uniform'), bias_initializer ('zeros'),
        kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint: of
        the projections (each gets a fresh copy of the initializers).
      activity_regularizer: applied to the layer's output.
      **kwargs: the base Layer's.

    Call arguments:
      query: [batch, Tq, dim] (or more axes, attended over `attention_axes`).
      value: [batch, Tv, dim].
      key: [batch, Tv, key dim] (default: value).
      attention_mask: booleans [batch, Tq, Tv] (broadcastable): which value steps each
        query step attends to; combined with the inputs' Keras masks.
      return_attention_scores: also return the weights [batch, num_heads, Tq, Tv].
      training: whether dropout applies.
      use_causal_mask: query step i attends to value steps j <= i only.

    Weights: query/kernel, query/bias, key/kernel, key/bias, value/kernel, value/bias,
    attention_output/kernel, attention_output/bias (as TF's).
    """

    def __init__(self, num_heads: int, key_dim: int, value_dim=None, dropout: float = 0.0,
                 use_bias: bool = True, output_shape=None, attention_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self._num_heads = num_heads
        self._key_dim = key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout = dropout
        self._use_bias = use_bias
        self._output_shape = output_shape
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        if attention_axes is not None and not isinstance(attention_axes,
                                                         collections.abc.Sized):
            attention_axes = (attention_axes,)
        self._attention_axes = attention_axes
        self._built_from_signature = False
        self._query_shape = self._key_shape = self._value_shape = None

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            num_heads=self._num_heads, key_dim=self._key_dim, value_dim=self._value_dim,
            dropout=self._dropout, use_bias=self._use_bias, output_shape=self._output_shape,
            attention_axes=self._attention_axes,
            kernel_initializer=initializers.serialize(self._kernel_initializer),
            bias_initializer=initializers.serialize(self._bias_initializer),
            kernel_regularizer=regularizers.serialize(self._kernel_regularizer),
            bias_regularizer=regularizers.serialize(self._bias_regularizer),
            activity_regularizer=regularizers.serialize(self._activity_regularizer),
            kernel_constraint=constraints.serialize(self._kernel_constraint),
            bias_constraint=constraints.serialize(self._bias_constraint),
            query_shape=self._query_shape, key_shape=self._key_shape,
            value_shape=self._value_shape)
        return config

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        shapes = [config.pop(name) for name in ("query_shape", "key_shape", "value_shape")]
        layer = cls(**config)
        if None in shapes:
            logging.warning("One of dimensions of the input shape is missing. It should have "
                            "been memorized when the layer was serialized. %s is created "
                            "without weights.", cls)
        else:
            query_shape, key_shape, value_shape = shapes
            layer._build_from_signature(query_shape, value_shape, key_shape)
        return layer

    # --- the sublayers -------------------------------------------------------------------
    def _build_from_signature(self, query, value, key=None) -> None:
        """Makes the projections, softmax and dropout sublayers for inputs (or shapes)
        `query`, `value`, `key`, in TF's order (their weights come at their first
        call)."""
        def shape_of(x):
            return tf.TensorShape(x.shape if hasattr(x, "shape") else x)

        self._built_from_signature = True
        self._query_shape = shape_of(query)
        self._value_shape = shape_of(value)
        self._key_shape = self._value_shape if key is None else shape_of(key)
        free_dims = self._query_shape.ndims - 1
        self._query_dense = self._projection(free_dims, self._key_dim, "query")
        self._key_dense = self._projection(self._key_shape.ndims - 1, self._key_dim, "key")
        self._value_dense = self._projection(self._value_shape.ndims - 1, self._value_dim,
                                             "value")
        self._build_attention(self._value_shape.ndims + 1)
        if self._output_shape:
            output_shape = self._output_shape if isinstance(
                self._output_shape, collections.abc.Sized) else [self._output_shape]
        else:
            output_shape = [self._query_shape.as_list()[-1]]
        equation, bias_axes, output_rank = build_projection_equation(
            free_dims, bound_dims=2, output_dims=len(output_shape))
        self._output_dense = EinsumDense(
            equation, output_shape=_output_shape(output_rank - 1, output_shape),
            bias_axes=bias_axes if self._use_bias else None, name="attention_output",
            **self._sublayer_kwargs())

    def _projection(self, free_dims: int, head_dim: int, name: str) -> EinsumDense:
        equation, bias_axes, output_rank = build_projection_equation(
            free_dims, bound_dims=1, output_dims=2)
        return EinsumDense(equation,
                           output_shape=_output_shape(output_rank - 1,
                                                      [self._num_heads, head_dim]),
                           bias_axes=bias_axes if self._use_bias else None, name=name,
                           **self._sublayer_kwargs())

    def _sublayer_kwargs(self) -> dict:
        return dict(
            kernel_regularizer=self._kernel_regularizer,
            bias_regularizer=self._bias_regularizer,
            activity_regularizer=self._activity_regularizer,
            kernel_constraint=self._kernel_constraint,
            bias_constraint=self._bias_constraint, dtype=self.dtype,
            # fresh initializers per sublayer (a seeded one draws the same values)
            kernel_initializer=type(self._kernel_initializer).from_config(
                self._kernel_initializer.get_config()),
            bias_initializer=type(self._bias_initializer).from_config(
                self._bias_initializer.get_config()))

    def _build_attention(self, rank: int) -> None:
        if self._attention_axes is None:
            self._attention_axes = tuple(range(1, rank - 2))
        else:
            self._attention_axes = tuple(self._attention_axes)
        self._dot_product_equation, self._combine_equation, scores_rank = \
            build_attention_equation(rank, attn_axes=self._attention_axes)
        norm_axes = tuple(range(scores_rank - len(self._attention_axes), scores_rank))
        self._softmax = Softmax(axis=norm_axes, dtype=self.dtype)
        self._dropout_layer = Dropout(rate=self._dropout, dtype=self.dtype)

    # --- calling -------------------------------------------------------------------------
    def _masked_softmax(self, attention_scores, attention_mask=None):
        if attention_mask is not None:
            # the mask's axes are [batch, (T, S) per attention axis]: the heads' axis
            # (and any missing batch axes) inserted before them
            axis = -len(self._attention_axes) * 2 - 1
            for _ in range(attention_scores.shape.ndims - attention_mask.shape.ndims):
                attention_mask = tf.expand_dims(attention_mask, axis=axis)
        return self._softmax(attention_scores, attention_mask)

    def _compute_attention(self, query, key, value, attention_mask=None, training=None):
        query = tf.multiply(query, 1.0 / math.sqrt(float(self._key_dim)))
        attention_scores = tf.einsum(self._dot_product_equation, key, query)
        attention_scores = self._masked_softmax(attention_scores, attention_mask)
        dropped = self._dropout_layer(attention_scores, training=training)
        attention_output = tf.einsum(self._combine_equation, dropped, value)
        return attention_output, attention_scores

    def call(self, query, value, key=None, attention_mask=None,
             return_attention_scores: bool = False, training=None,
             use_causal_mask: bool = False):
        if not self._built_from_signature:
            self._build_from_signature(query=query, value=value, key=key)
        if key is None:
            key = value
        attention_mask = self._compute_attention_mask(
            query, value, key=key, attention_mask=attention_mask,
            use_causal_mask=use_causal_mask)
        query = self._query_dense(query)
        key = self._key_dense(key)
        value = self._value_dense(value)
        attention_output, attention_scores = self._compute_attention(
            query, key, value, attention_mask, training)
        attention_output = self._output_dense(attention_output)
        if return_attention_scores:
            return attention_output, attention_scores
        return attention_output

    def _compute_attention_mask(self, query, value, key=None, attention_mask=None,
                                use_causal_mask: bool = False):
        """`attention_mask` combined with the Keras masks of the inputs (query [B, T, 1],
        value and key [B, 1, S]) and the causal mask."""
        auto_mask = None
        for tensor, expand in ((query, -1), (value, 1), (key, 1)):
            mask = getattr(tensor, "_keras_mask", None)
            if mask is None:
                continue
            mask = tf.expand_dims(tf.cast(mask, tf.bool), expand)
            auto_mask = mask if auto_mask is None else auto_mask & mask
        if use_causal_mask:
            mask = self._compute_causal_mask(query, value)
            auto_mask = mask if auto_mask is None else auto_mask & mask
        if auto_mask is not None:
            attention_mask = auto_mask if attention_mask is None else \
                tf.cast(attention_mask, tf.bool) & auto_mask
        return attention_mask

    def _compute_causal_mask(self, query, value=None):
        """[1, T, S] booleans, True where the query step is at least the value step."""
        q_length = tf.shape(query)[1]
        v_length = q_length if value is None else tf.shape(value)[1]
        return tf.linalg.band_part(tf.ones((1, q_length, v_length), tf.bool), -1, 0)

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        """The output's shape for inputs of those shapes.

        Raises:
          ValueError: query and value of different last axes; key and value that differ
            in other than the last axis.
        """
        query_shape = tf.TensorShape(query_shape)
        value_shape = tf.TensorShape(value_shape)
        key_shape = value_shape if key_shape is None else tf.TensorShape(key_shape)
        if query_shape.as_list()[-1] != value_shape.as_list()[-1]:
            raise ValueError("The last dimension of `query_shape` and `value_shape` must be "
                             "equal, but are %s, %s. Received: query_shape={query_shape}, "
                             "value_shape={value_shape}"
                             % (query_shape.as_list()[-1], value_shape.as_list()[-1]))
        if value_shape.as_list()[1:-1] != key_shape.as_list()[1:-1]:
            raise ValueError("All dimensions of `value` and `key`, except the last one, must "
                             "be equal. Received %s and %s" % (value_shape, key_shape))
        if self._output_shape:
            return query_shape[:-1].concatenate(self._output_shape)
        return query_shape
