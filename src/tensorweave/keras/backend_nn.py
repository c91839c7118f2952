"""`tf.keras.backend` neural-network helpers: convolutions, pooling, padding and resizing
with Keras' `data_format` ('channels_last' / 'channels_first') and padding names,
locally connected products, batch normalization, random tensors, the focal
crossentropies and CTC, each as TF 2.15's Keras defines it in graph mode.

channels_first inputs are transposed to channels-last around the op (what TF's Keras
does on a CPU); the values are the same as with NCHW kernels.
"""
from __future__ import annotations

import itertools
import warnings
from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_math, backend_ops


def _export(fn):
    return tf_export("keras.backend." + fn.__name__)(fn)


_TO_CHANNELS_LAST = {3: (0, 2, 1), 4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}
_TO_CHANNELS_FIRST = {3: (0, 2, 1), 4: (0, 3, 1, 2), 5: (0, 4, 1, 2, 3)}
_TF_FORMATS = {3: "NWC", 4: "NHWC", 5: "NDHWC"}


def _data_format(data_format: Optional[str]) -> str:
    data_format = data_format or backend.image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Unknown data_format: " + str(data_format))
    return data_format


def _padding(padding: str) -> str:
    if padding not in ("same", "valid"):
        raise ValueError("Invalid padding: " + str(padding))
    return padding.upper()


def _channels_last_op(x, data_format: Optional[str], op):
    """`op(x_channels_last)`, with `x` and the result in `data_format`."""
    rank = x.shape.ndims
    if _data_format(data_format) == "channels_first":
        return tf.transpose(op(tf.transpose(x, _TO_CHANNELS_LAST[rank])),
                            _TO_CHANNELS_FIRST[rank])
    return op(x)


# --- convolutions --------------------------------------------------------------------------
@_export
def conv1d(x, kernel, strides=1, padding: str = "valid", data_format=None,
           dilation_rate=1):
    """1-D convolution of `x` (batch, steps, channels) with `kernel` (width, in, out);
    `padding` 'valid', 'same' or 'causal' (left padding only).

    Raises:
      ValueError: an unknown data format or padding.
    """
    _data_format(data_format)
    if padding == "causal":
        left_pad = dilation_rate * (kernel.shape.as_list()[0] - 1)
        x = temporal_padding(x, (left_pad, 0)) if data_format != "channels_first" else \
            tf.pad(x, [[0, 0], [0, 0], [left_pad, 0]])
        padding = "valid"
    padding = _padding(padding)
    return _channels_last_op(x, data_format, lambda v: tf.nn.convolution(
        v, kernel, padding=padding, strides=strides, dilation_rate=dilation_rate,
        data_format="NWC"))


@_export
def conv2d(x, kernel, strides=(1, 1), padding: str = "valid", data_format=None,
           dilation_rate=(1, 1)):
    """2-D convolution of `x` with `kernel` (rows, cols, in, out)."""
    padding = _padding(padding)
    return _channels_last_op(x, data_format, lambda v: tf.nn.convolution(
        v, kernel, padding=padding, strides=strides, dilation_rate=dilation_rate,
        data_format="NHWC"))


@_export
def conv3d(x, kernel, strides=(1, 1, 1), padding: str = "valid", data_format=None,
           dilation_rate=(1, 1, 1)):
    """3-D convolution of `x` with `kernel` (depth, rows, cols, in, out)."""
    padding = _padding(padding)
    return _channels_last_op(x, data_format, lambda v: tf.nn.convolution(
        v, kernel, padding=padding, strides=strides, dilation_rate=dilation_rate,
        data_format="NDHWC"))


@_export
def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding: str = "valid",
                     data_format=None, dilation_rate=(1, 1)):
    """The transpose of `conv2d` (kernel (rows, cols, out, in)) producing `output_shape`
    (in `data_format`; a None batch size is taken from `x`).

    Raises:
      ValueError: an unknown data format or padding, or unequal dilation rates.
    """
    if _data_format(data_format) == "channels_first":
        output_shape = (output_shape[0], output_shape[2], output_shape[3], output_shape[1])
    padding = _padding(padding)
    strides = tuple(strides)
    dilation_rate = tuple(dilation_rate)

    def transpose_conv(v):
        shape = output_shape
        if shape[0] is None:
            shape = (tf.shape(v)[0],) + tuple(shape[1:])
        if isinstance(shape, (tuple, list)):
            shape = tf.stack(list(shape))
        if dilation_rate == (1, 1):
            return tf.nn.conv2d_transpose(v, kernel, shape, (1,) + strides + (1,),
                                          padding=padding, data_format="NHWC")
        if dilation_rate[0] != dilation_rate[1]:
            raise ValueError("Expected the 2 dimensions of the `dilation_rate` argument to "
                             "be equal to each other. Received: dilation_rate=%s"
                             % (dilation_rate,))
        return tf.nn.atrous_conv2d_transpose(v, kernel, shape, rate=dilation_rate[0],
                                             padding=padding)

    return _channels_last_op(x, data_format, transpose_conv)


@_export
def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1),
                     padding: str = "valid", data_format=None, dilation_rate=(1, 1)):
    """A depthwise convolution (kernel (rows, cols, in, multiplier)) followed by a 1x1
    pointwise one (kernel (1, 1, in * multiplier, out)).

    Raises:
      ValueError: `strides` not 2 integers, an unknown data format or padding.
    """
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    padding = _padding(padding)
    strides = (1,) + tuple(strides) + (1,)
    return _channels_last_op(x, data_format, lambda v: tf.nn.separable_conv2d(
        v, depthwise_kernel, pointwise_kernel, strides=strides, padding=padding,
        dilations=dilation_rate, data_format="NHWC"))


@_export
def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding: str = "valid",
                     data_format=None, dilation_rate=(1, 1)):
    """A depthwise 2-D convolution: each input channel convolved with its own
    `multiplier` filters (kernel (rows, cols, in, multiplier))."""
    padding = _padding(padding)
    strides = (1,) + tuple(strides) + (1,)
    return _channels_last_op(x, data_format, lambda v: tf.nn.depthwise_conv2d(
        v, depthwise_kernel, strides=strides, padding=padding, dilations=dilation_rate,
        data_format="NHWC"))


@_export
def pool2d(x, pool_size, strides=(1, 1), padding: str = "valid", data_format=None,
           pool_mode: str = "max"):
    """2-D max or average ('avg') pooling.

    Raises:
      ValueError: `pool_size` or `strides` not 2 integers, an unknown data format,
        padding or pooling mode.
    """
    if len(pool_size) != 2:
        raise ValueError("`pool_size` must be a tuple of 2 integers.")
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    return _pool(x, pool_size, strides, padding, data_format, pool_mode,
                 {"max": tf.nn.max_pool, "avg": tf.nn.avg_pool})


@_export
def pool3d(x, pool_size, strides=(1, 1, 1), padding: str = "valid", data_format=None,
           pool_mode: str = "max"):
    """3-D max or average ('avg') pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode,
                 {"max": tf.nn.max_pool3d, "avg": tf.nn.avg_pool3d})


def _pool(x, pool_size, strides, padding, data_format, pool_mode, pools):
    _data_format(data_format)
    padding = _padding(padding)
    if pool_mode not in pools:
        raise ValueError("Invalid pooling mode: " + str(pool_mode))
    ksize = (1,) + tuple(pool_size) + (1,)
    strides = (1,) + tuple(strides) + (1,)
    tf_format = _TF_FORMATS[x.shape.ndims]
    return _channels_last_op(x, data_format, lambda v: pools[pool_mode](
        v, ksize, strides, padding=padding, data_format=tf_format))


@_export
def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """A locally connected 1-D layer's product: `kernel` (output_length, kernel_size *
    input_dim, filters) holds one unshared filter bank per output step."""
    output_shape = (kernel.shape.as_list()[0],)
    return _local_conv(inputs, kernel, kernel_size, strides, output_shape, data_format)


@_export
def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """A locally connected 2-D layer's product: `kernel` (rows * cols, kernel_rows *
    kernel_cols * input_dim, filters), `output_shape` (rows, cols)."""
    return _local_conv(inputs, kernel, kernel_size, strides, tuple(output_shape),
                       data_format)


def _local_conv(inputs, kernel, kernel_size, strides, output_shape, data_format):
    """Every output position's input patch, flattened and stacked, times its own
    filters (`batch_dot`), as Keras' `local_conv`."""
    channels_first = _data_format(data_format) == "channels_first"
    kernel_shape = backend.int_shape(kernel)
    feature_dim, channels_out = kernel_shape[1], kernel_shape[-1]
    ndims = len(output_shape)
    patches = []
    for position in itertools.product(*[range(n) for n in output_shape]):
        slices = [slice(None)] * (2 if channels_first else 1)
        slices += [slice(position[d] * strides[d], position[d] * strides[d] + kernel_size[d])
                   for d in range(ndims)]
        if not channels_first:
            slices.append(slice(None))
        patches.append(tf.reshape(inputs[tuple(slices)], (1, -1, feature_dim)))
    output = backend_math.batch_dot(tf.concat(patches, axis=0), kernel)
    output = tf.reshape(output, output_shape + (-1, channels_out))
    spatial = list(range(ndims))
    if channels_first:
        return tf.transpose(output, [ndims, ndims + 1] + spatial)
    return tf.transpose(output, [ndims] + spatial + [ndims + 1])


# --- padding and resizing ------------------------------------------------------------------
@_export
def temporal_padding(x, padding=(1, 1)):
    """Zeros added before and after axis 1 of a 3-D tensor."""
    if len(padding) != 2:
        raise ValueError("`padding` must be a tuple of 2 integers, got %s" % (padding,))
    return tf.pad(x, [[0, 0], list(padding), [0, 0]])


@_export
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Zeros added around the rows and columns of a 4-D tensor."""
    return _spatial_padding(x, padding, data_format, 2)


@_export
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Zeros added around the depth, rows and columns of a 5-D tensor."""
    return _spatial_padding(x, padding, data_format, 3)


def _spatial_padding(x, padding, data_format, spatial_rank: int):
    if len(padding) != spatial_rank or any(len(p) != 2 for p in padding):
        raise ValueError("`padding` must be %d pairs of integers, got %s"
                         % (spatial_rank, padding))
    pattern = [list(p) for p in padding]
    if _data_format(data_format) == "channels_first":
        return tf.pad(x, [[0, 0], [0, 0]] + pattern)
    return tf.pad(x, [[0, 0]] + pattern + [[0, 0]])


@_export
def resize_images(x, height_factor: int, width_factor: int, data_format,
                  interpolation: str = "nearest"):
    """A 4-D image batch resized by integer factors, with TF 2's `tf.image.resize`
    (half-pixel centers): 'nearest', 'bilinear', 'bicubic' or 'area'.

    Raises:
      ValueError: an unknown data format or interpolation.
      NotImplementedError: 'gaussian', 'lanczos3', 'lanczos5', 'mitchellcubic'.
    """
    if data_format == "channels_first":
        rows, cols = 2, 3
    elif data_format == "channels_last":
        rows, cols = 1, 2
    else:
        raise ValueError("Invalid `data_format` argument: %s" % (data_format,))
    resizers = {
        "nearest": lambda v, s: tf.image.resize_nearest_neighbor(v, s,
                                                                 half_pixel_centers=True),
        "bilinear": lambda v, s: tf.image.resize_bilinear(v, s, half_pixel_centers=True),
        "bicubic": lambda v, s: tf.image.resize_bicubic(v, s, half_pixel_centers=True),
        "area": tf.image.resize_area,
    }
    if interpolation in ("gaussian", "lanczos3", "lanczos5", "mitchellcubic"):
        raise NotImplementedError("resize_images(interpolation=%r) is not supported by "
                                  "tensorweave (no ScaleAndTranslate kernel)" % interpolation)
    if interpolation not in resizers:
        raise ValueError('`interpolation` argument should be one of: "area", "bicubic", '
                         '"bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", '
                         '"nearest". Received: "%s".' % interpolation)
    static = x.shape[rows:cols + 1]
    if static.is_fully_defined():
        new_shape = tf.constant(static.as_list(), dtype="int32")
    else:
        new_shape = tf.shape(x)[rows:cols + 1]
    new_shape *= tf.constant(np.array([height_factor, width_factor], dtype="int32"))
    return _channels_last_op(x, data_format,
                             lambda v: resizers[interpolation](v, new_shape))


@_export
def resize_volumes(x, depth_factor: int, height_factor: int, width_factor: int,
                   data_format):
    """A 5-D volume batch resized by repeating its elements along each spatial axis.

    Raises:
      ValueError: an unknown data format.
    """
    if data_format == "channels_first":
        first = 2
    elif data_format == "channels_last":
        first = 1
    else:
        raise ValueError("Invalid data_format: " + str(data_format))
    for offset, factor in enumerate((depth_factor, height_factor, width_factor)):
        x = backend_math.repeat_elements(x, factor, axis=first + offset)
    return x


# --- batch normalization -------------------------------------------------------------------
@_export
def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon: float = 1e-3):
    """(normalized x, mean, variance) with the batch statistics over `reduction_axes`
    (gamma and beta may be None)."""
    mean, variance = tf.nn.moments(x, reduction_axes)
    rank = x.shape.ndims
    if sorted(reduction_axes) == list(range(rank))[:-1]:
        normed = tf.nn.batch_normalization(x, mean, variance, beta, gamma, epsilon)
        return normed, mean, variance
    # the statistics reshaped to broadcast against x (the kept axes in place)
    dims = tf.shape(x)
    target = tf.stack([1 if axis in reduction_axes else dims[axis] for axis in range(rank)])

    def broadcast(v):
        return None if v is None else tf.reshape(v, target)

    normed = tf.nn.batch_normalization(x, broadcast(mean), broadcast(variance),
                                       broadcast(beta), broadcast(gamma), epsilon)
    return normed, mean, variance


@_export
def batch_normalization(x, mean, var, beta, gamma, axis: int = -1, epsilon: float = 1e-3):
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta` (gamma and beta may be None);
    for 4-D channels-last `x`, with a fused batch norm on flattened statistics."""
    if x.shape.ndims == 4 and axis in (3, -1):
        def flat(v):
            return tf.reshape(v, [-1]) if v.shape.ndims > 1 else v
        mean, var = flat(mean), flat(var)
        beta = tf.zeros_like(mean) if beta is None else flat(beta)
        gamma = tf.ones_like(mean) if gamma is None else flat(gamma)
        y, _, _ = tf.nn.fused_batch_norm(x, gamma, beta, mean=mean, variance=var,
                                         epsilon=epsilon, data_format="NHWC",
                                         is_training=False)
        return y
    return tf.nn.batch_normalization(x, mean, var, beta, gamma, epsilon)


# --- random tensors ------------------------------------------------------------------------
def _seed(seed):
    return np.random.randint(10e6) if seed is None else seed


@_export
def random_normal(shape, mean: float = 0.0, stddev: float = 1.0, dtype=None, seed=None):
    """A tensor of samples of N(mean, stddev**2) (dtype default floatx())."""
    return tf.random.normal(shape, mean=mean, stddev=stddev,
                            dtype=dtype or backend.floatx(), seed=_seed(seed))


@_export
def random_uniform(shape, minval: float = 0.0, maxval: float = 1.0, dtype=None, seed=None):
    """A tensor of samples of U[minval, maxval)."""
    return tf.random.uniform(shape, minval=minval, maxval=maxval,
                             dtype=dtype or backend.floatx(), seed=_seed(seed))


@_export
def truncated_normal(shape, mean: float = 0.0, stddev: float = 1.0, dtype=None, seed=None):
    """A tensor of samples of N(mean, stddev**2) redrawn beyond two deviations."""
    return tf.random.truncated_normal(shape, mean, stddev, dtype=dtype or backend.floatx(),
                                      seed=_seed(seed))


@_export
def random_bernoulli(shape, p: float = 0.0, dtype=None, seed=None):
    """A tensor of ones with probability `p`, zeros else."""
    dtype = dtype or backend.floatx()
    return tf.where(tf.random.uniform(shape, dtype=dtype, seed=_seed(seed)) <= p,
                    tf.ones(shape, dtype=dtype), tf.zeros(shape, dtype=dtype))


@_export
def random_binomial(shape, p: float = 0.0, dtype=None, seed=None):
    """Deprecated name of `random_bernoulli` (warns, as TF 2.15)."""
    warnings.warn("`tf.keras.backend.random_binomial` is deprecated, and will be removed in "
                  "a future version.Please use `tf.keras.backend.random_bernoulli` instead.",
                  stacklevel=2)
    return random_bernoulli(shape, p, dtype, seed)


# --- focal crossentropies ------------------------------------------------------------------
@_export
def categorical_focal_crossentropy(target, output, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, axis: int = -1):
    """The categorical crossentropy weighted by `alpha * (1 - p)**gamma` per class."""
    target = tf.convert_to_tensor(target)
    output = tf.convert_to_tensor(output)
    target.shape.assert_is_compatible_with(output.shape)
    output, from_logits = backend_ops._get_logits(output, from_logits, "Softmax")
    if from_logits:
        output = tf.nn.softmax(output, axis=axis)
    output = output / tf.reduce_sum(output, axis=axis, keepdims=True)
    eps = tf.constant(backend.epsilon(), dtype=output.dtype.base_dtype)
    output = tf.clip_by_value(output, eps, 1.0 - eps)
    focal = tf.pow(1.0 - output, gamma) * alpha * (-target * tf.math.log(output))
    return tf.reduce_sum(focal, axis=axis)


@_export
def binary_focal_crossentropy(target, output, apply_class_balancing: bool = False,
                              alpha: float = 0.25, gamma: float = 2.0,
                              from_logits: bool = False):
    """The binary crossentropy weighted by `(1 - p_t)**gamma` (and by `alpha` for
    positives, `1 - alpha` for negatives with `apply_class_balancing`)."""
    probabilities = tf.sigmoid(output) if from_logits else output
    p_t = target * probabilities + (1 - target) * (1 - probabilities)
    focal = tf.pow(1.0 - p_t, gamma) * backend_ops.binary_crossentropy(
        target, output, from_logits=from_logits)
    if apply_class_balancing:
        focal = (target * alpha + (1 - target) * (1 - alpha)) * focal
    return focal


# --- CTC -----------------------------------------------------------------------------------
@_export
def ctc_label_dense_to_sparse(labels, label_lengths):
    """The dense (batch, max_length) `labels` as a SparseTensor holding the first
    `label_lengths[i]` labels of each row."""
    label_shape = tf.shape(labels)
    positions = tf.range(label_shape[1])
    dense_mask = tf.expand_dims(positions, 0) < tf.expand_dims(
        tf.cast(label_lengths, "int32"), 1)
    label_array = tf.tile(tf.expand_dims(positions, 0), tf.stack([label_shape[0], 1]))
    batch_array = tf.tile(tf.expand_dims(tf.range(label_shape[0]), 1),
                          tf.stack([1, label_shape[1]]))
    indices = tf.stack([tf.boolean_mask(batch_array, dense_mask),
                        tf.boolean_mask(label_array, dense_mask)], axis=1)
    values = tf.gather_nd(labels, indices)
    return tf.SparseTensor(tf.cast(indices, "int64"), values, tf.cast(label_shape, "int64"))


@_export
def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """The CTC loss of each sample, shape (batch, 1).

    Args:
      y_true: (batch, max_label_length) labels.
      y_pred: (batch, time, classes) softmax outputs (the blank is the last class).
      input_length: (batch, 1) lengths of `y_pred`'s sequences.
      label_length: (batch, 1) lengths of `y_true`'s labels.
    """
    label_length = tf.cast(tf.squeeze(label_length, axis=-1), "int32")
    input_length = tf.cast(tf.squeeze(input_length, axis=-1), "int32")
    sparse = ctc_label_dense_to_sparse(y_true, label_length)
    sparse = tf.SparseTensor(sparse.indices, tf.cast(sparse.values, "int32"),
                             sparse.dense_shape)
    y_pred = tf.math.log(tf.transpose(y_pred, perm=[1, 0, 2]) + backend.epsilon())
    return tf.expand_dims(tf.nn.ctc_loss(inputs=y_pred, labels=sparse,
                                         sequence_length=input_length), 1)


@_export
def ctc_decode(y_pred, input_length, greedy: bool = True, beam_width: int = 100,
               top_paths: int = 1):
    """Decodes softmax outputs (batch, time, classes): ([the `top_paths` decoded label
    sequences, each (batch, time) padded with -1], their log probabilities)."""
    input_shape = tf.shape(y_pred)
    num_samples, num_steps = input_shape[0], input_shape[1]
    y_pred = tf.math.log(tf.transpose(y_pred, perm=[1, 0, 2]) + backend.epsilon())
    input_length = tf.cast(input_length, "int32")
    if greedy:
        decoded, log_prob = tf.nn.ctc_greedy_decoder(inputs=y_pred,
                                                     sequence_length=input_length)
    else:
        decoded, log_prob = tf.nn.ctc_beam_search_decoder(
            inputs=y_pred, sequence_length=input_length, beam_width=beam_width,
            top_paths=top_paths)
    dense_shape = tf.cast(tf.stack([num_samples, num_steps]), "int64")
    decoded_dense = [tf.sparse.to_dense(tf.SparseTensor(st.indices, st.values, dense_shape),
                                        default_value=-1)
                     for st in decoded]
    return decoded_dense, log_prob
