"""`tf.keras.backend` tensor helpers: thin Keras-named wrappers over tensorweave's ops
with Keras' argument conventions (`sum(x, axis, keepdims)`, `clip(x, lo, hi)`, ...) and
the crossentropies the losses use. Exported into `tf.keras.backend` beside backend.py.
`sum`, `max`, `min`, `abs` and `pow` shadow the builtins in this module (Keras' names).
"""
from __future__ import annotations

import functools
from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import export, tf_export
from tensorweave.keras import backend

_K = "keras.backend."


def _export(fn):
    return tf_export(_K + fn.__name__)(fn)


# --- Keras names for tf ops, one table per argument convention -----------------------------
# A factory turns a tf op into the Keras function of that convention (Keras' argument
# names and defaults, no `name=`); `_export_table` names, documents and exports each row.
def _unary(op):
    def fn(x):
        return op(x)
    return fn


def _binary(op):
    def fn(x, y):
        return op(x, y)
    return fn


def _reduction(op, prepare=None):
    def fn(x, axis=None, keepdims: bool = False):
        return op(x if prepare is None else prepare(x), axis, keepdims)
    return fn


def _along_axis(op, default: int):
    def fn(x, axis: int = default):
        return op(x, axis=axis)
    return fn


def _as_is(fn):
    """The factory of a table whose rows are already the Keras functions (lambdas that
    rename or reorder arguments)."""
    return fn


def _bool_as_floatx(x):
    """`x`, cast to floatx() when it is bool (Keras' `mean`, `var`, `std`)."""
    if x.dtype.base_dtype == tf.bool:
        return tf.cast(x, backend.floatx())
    return x


def _export_table(namespace: dict, factory, table: dict, doc: str) -> None:
    """For each `name: op` row of `table`, `factory(op)` named `name`, documented by
    `doc` (formatted with `name` and `op`, the op's name), set in `namespace` (the
    calling module's globals) and exported as `tf.keras.backend.<name>`."""
    for name, op in table.items():
        fn = factory(op)
        fn.__name__ = fn.__qualname__ = name
        fn.__module__ = namespace["__name__"]
        fn.__doc__ = doc.format(name=name, op=op.__name__)
        namespace[name] = export(fn, _K + name)


_SAME_NAME_DOC = "Keras' `{name}`: tf's `{name}`, with Keras' argument names."
_ALONG_AXIS_DOC = "Keras' `{name}`: tf's `{op}(x, axis)`."


# --- reductions and elementwise math -------------------------------------------------------
# `sum`, `max`, `min`, `abs` and `pow` shadow the builtins in this module
_export_table(globals(), _reduction, {
    "sum": tf.reduce_sum, "max": tf.reduce_max, "min": tf.reduce_min,
    "prod": tf.reduce_prod,
}, "Keras' `{name}`: tf's `{op}(x, axis, keepdims)`.")
_export_table(globals(), functools.partial(_reduction, prepare=_bool_as_floatx), {
    "mean": tf.reduce_mean,
}, "Keras' `{name}`: tf's `{op}(x, axis, keepdims)`, a bool `x` cast to floatx() first.")
_export_table(globals(), functools.partial(_along_axis, default=-1), {
    "argmax": tf.argmax, "argmin": tf.argmin,
}, _ALONG_AXIS_DOC)
_export_table(globals(), _unary, {
    "square": tf.square, "abs": tf.abs, "exp": tf.exp, "log": tf.math.log,
    "tanh": tf.tanh, "softplus": tf.math.softplus, "softsign": tf.math.softsign,
}, "Keras' `{name}`: tf's `{op}(x)`.")
_export_table(globals(), _binary, {
    "maximum": tf.maximum, "minimum": tf.minimum, "equal": tf.equal,
    "not_equal": tf.not_equal, "greater": tf.greater, "less": tf.less,
}, "Keras' `{name}`: tf's `{op}(x, y)`.")
_export_table(globals(), _as_is, {
    "pow": lambda x, a: tf.pow(x, a),
}, _SAME_NAME_DOC)


@_export
def sqrt(x):
    """`sqrt(max(x, 0))`: negative values give 0, as Keras'."""
    x = tf.maximum(x, tf.constant(0.0, dtype=x.dtype.base_dtype))
    return tf.sqrt(x)


@_export
def clip(x, min_value, max_value):
    """`tf.clip_by_value(x, min_value, max_value)`; None bounds are infinite and a
    `max_value` below `min_value` is raised to it."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)):
        if max_value < min_value:
            max_value = min_value
    if min_value is None:
        min_value = -np.inf
    if max_value is None:
        max_value = np.inf
    return tf.clip_by_value(x, min_value, max_value)


# --- shapes --------------------------------------------------------------------------------
_export_table(globals(), _as_is, {
    "cast": lambda x, dtype: tf.cast(x, dtype),
    "reshape": lambda x, shape: tf.reshape(x, shape),
}, _SAME_NAME_DOC)
_export_table(globals(), _unary, {
    "shape": tf.shape, "transpose": tf.transpose,
}, "Keras' `{name}`: tf's `{op}(x)` (`shape`: the dynamic shape).")
_export_table(globals(), functools.partial(_along_axis, default=-1), {
    "expand_dims": tf.expand_dims,
}, _ALONG_AXIS_DOC)
_export_table(globals(), functools.partial(_along_axis, default=0), {
    "stack": tf.stack,
}, _ALONG_AXIS_DOC)


@_export
def flatten(x):
    """`x` as a vector."""
    return tf.reshape(x, [-1])


@_export
def batch_flatten(x):
    """`x` as [batch, everything else]."""
    return tf.reshape(x, tf.stack([-1, tf.reduce_prod(tf.shape(x)[1:])]))


@_export
def squeeze(x, axis: int):
    """`tf.squeeze(x, [axis])`."""
    return tf.squeeze(x, [axis])


@_export
def concatenate(tensors, axis: int = -1):
    """`tf.concat(tensors, axis)`; a negative axis counts from the first tensor's rank."""
    if axis < 0:
        rank = tensors[0].shape.ndims
        axis = axis % rank if rank else 0
    return tf.concat(list(tensors), axis)


@_export
def permute_dimensions(x, pattern):
    """`tf.transpose(x, perm=pattern)`."""
    return tf.transpose(x, perm=pattern)


@_export
def one_hot(indices, num_classes: int):
    """`tf.one_hot(indices, num_classes)` on a new last axis."""
    return tf.one_hot(indices, depth=num_classes, axis=-1)


@_export
def zeros_like(x, dtype=None, name: Optional[str] = None):
    """`tf.zeros_like(x, dtype)`."""
    return tf.zeros_like(x, dtype=dtype, name=name)


@_export
def ones_like(x, dtype=None, name: Optional[str] = None):
    """`tf.ones_like(x, dtype)`."""
    return tf.ones_like(x, dtype=dtype, name=name)


@_export
def stop_gradient(variables):
    """`tf.stop_gradient` of a tensor (or, lazily, of each of a list)."""
    if isinstance(variables, (list, tuple)):
        return map(tf.stop_gradient, variables)
    return tf.stop_gradient(variables)


@_export
def gradients(loss, variables):
    """`tf.gradients(loss, variables, colocate_gradients_with_ops=True)`."""
    return tf.gradients(loss, variables, colocate_gradients_with_ops=True)


@_export
def l2_normalize(x, axis=None):
    """`tf.linalg.l2_normalize(x, axis)`."""
    return tf.linalg.l2_normalize(x, axis=axis)


@_export
def dot(x, y):
    """The matrix product of `x` and `y`; for rank > 2, `x`'s last axis against `y`'s
    second to last (as NumPy's `dot`)."""
    x_rank, y_rank = x.shape.ndims, y.shape.ndims
    if x_rank is not None and (x_rank > 2 or y_rank > 2):
        x_shape = _static_or_dynamic(x)
        y_shape = _static_or_dynamic(y)
        y_perm = list(range(y_rank))
        y_perm = [y_perm.pop(-2)] + y_perm
        xt = tf.reshape(x, [-1, x_shape[-1]])
        yt = tf.reshape(tf.transpose(y, perm=y_perm), [y_shape[-2], -1])
        return tf.reshape(tf.matmul(xt, yt), x_shape[:-1] + y_shape[:-2] + y_shape[-1:])
    return tf.matmul(x, y)


def _static_or_dynamic(x) -> tuple:
    dynamic = tf.unstack(tf.shape(x))
    return tuple(d if d is not None else s for d, s in zip(x.shape.as_list(), dynamic))


@_export
def bias_add(x, bias, data_format: Optional[str] = None):
    """`x + bias` over the channel axis of `data_format` (default
    `image_data_format()`).

    Raises:
      ValueError: an unknown data_format, or a bias of neither rank 1 nor rank(x) - 1.
    """
    data_format = data_format or backend.image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Unknown data_format: " + str(data_format))
    bias_shape = tuple(bias.shape.as_list())
    if len(bias_shape) != 1 and len(bias_shape) != x.shape.ndims - 1:
        raise ValueError("Unexpected bias dimensions %d, expect to be 1 or %d dimensions"
                         % (len(bias_shape), x.shape.ndims - 1))
    if len(bias_shape) == 1:
        fmt = "NCHW" if data_format == "channels_first" else "NHWC"
        return tf.nn.bias_add(x, bias, data_format=fmt)
    if x.shape.ndims in (3, 4, 5):
        if data_format == "channels_first":
            return x + tf.reshape(bias, (1, bias_shape[-1]) + bias_shape[:-1])
        return x + tf.reshape(bias, (1,) + bias_shape)
    return tf.nn.bias_add(x, bias)


# --- activations ---------------------------------------------------------------------------
@_export
def relu(x, alpha: float = 0.0, max_value=None, threshold: float = 0.0):
    """`max(x, 0)` with a slope `alpha` below `threshold`, clipped at `max_value`."""
    dtype = getattr(x, "dtype", backend.floatx())
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return tf.nn.leaky_relu(x, alpha=alpha)
        negative_part = tf.nn.relu(-x + threshold) if threshold != 0 else tf.nn.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * tf.cast(tf.greater(x, threshold), dtype=dtype)
    elif max_value == 6:
        x = tf.nn.relu6(x)
        clip_max = False
    else:
        x = tf.nn.relu(x)
    if clip_max:
        base = x.dtype.base_dtype
        x = tf.clip_by_value(x, tf.constant(0, dtype=base), tf.constant(max_value, dtype=base))
    if alpha != 0.0:
        x -= tf.convert_to_tensor(alpha, dtype=x.dtype.base_dtype) * negative_part
    return x


@_export
def elu(x, alpha: float = 1.0):
    """`x` for x > 0, `alpha * (exp(x) - 1)` else."""
    res = tf.nn.elu(x)
    if alpha == 1:
        return res
    return tf.where(x > 0, res, alpha * res)


@_export
def hard_sigmoid(x):
    """`clip(0.2 * x + 0.5, 0, 1)`."""
    base = x.dtype.base_dtype
    x = tf.add(tf.multiply(x, tf.constant(0.2, dtype=base)), tf.constant(0.5, dtype=base))
    return tf.clip_by_value(x, 0.0, 1.0)


@_export
def softmax(x, axis: int = -1):
    """`tf.keras.activations.softmax(x, axis)`."""
    from tensorweave.keras import activations
    return activations.softmax(x, axis)


@_export
def sigmoid(x):
    """`tf.keras.activations.sigmoid(x)`."""
    from tensorweave.keras import activations
    return activations.sigmoid(x)


# --- learning-phase switches ---------------------------------------------------------------
@_export
def switch(condition, then_expression, else_expression):
    """`tf.cond` on a scalar `condition` (values or zero-argument callables as branches);
    `tf.where_v2` (broadcasting) on a tensor condition.

    Raises:
      ValueError: `condition` has a higher rank than the branches.
    """
    if condition.dtype != tf.bool:
        condition = tf.cast(condition, "bool")
    cond_ndim = condition.shape.ndims
    if not cond_ndim:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return tf.cond(condition, then_fn, else_fn)
    if callable(then_expression):
        then_expression = then_expression()
    if callable(else_expression):
        else_expression = else_expression()
    expr_ndim = then_expression.shape.ndims
    if cond_ndim > expr_ndim:
        raise ValueError("Rank of `condition` should be less than or equal to rank of "
                         "`then_expression` and `else_expression`. ndim(condition)=%d, "
                         "ndim(then_expression)=%d" % (cond_ndim, expr_ndim))
    if cond_ndim > 1:
        cond_shape = tf.concat([tf.shape(condition), [1] * (expr_ndim - cond_ndim)], axis=0)
        condition = tf.reshape(condition, cond_shape)
        expr_shape = tf.shape(then_expression)
        tile_shape = tf.where(expr_shape - cond_shape > 0, expr_shape,
                              tf.ones_like(expr_shape))
        condition = tf.tile(condition, tile_shape)
    # Keras' tf.where is TF 2's (where_v2): a vector condition broadcasts against the
    # last axis of the branches, not along the first as TF1's Select
    return tf.where_v2(condition, then_expression, else_expression)


@_export
def in_train_phase(x, alt, training=None):
    """`x` in training, `alt` else (values or zero-argument callables); `training`
    defaults to the enclosing layer call's, else the learning phase."""
    if training is None:
        from tensorweave.keras.engine.base_layer_utils import call_context
        training = call_context().training
    if training is None:
        training = backend.learning_phase()
    if not isinstance(training, (tf.Tensor, tf.Variable)):
        if training == 1 or training is True:
            return x() if callable(x) else x
        if training == 0 or training is False:
            return alt() if callable(alt) else alt
    return switch(training, x, alt)


@_export
def in_test_phase(x, alt, training=None):
    """`x` in inference, `alt` in training (the mirror of `in_train_phase`)."""
    return in_train_phase(alt, x, training=training)


@_export
def dropout(x, level: float, noise_shape=None, seed: Optional[int] = None):
    """`tf.nn.dropout(x, rate=level)` (a random seed when None, as Keras)."""
    if seed is None:
        seed = np.random.randint(10e6)
    return tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


# --- crossentropies ------------------------------------------------------------------------
def _get_logits(output, from_logits: bool, op_type: str):
    """(logits, True) when `output` is a softmax/sigmoid Keras made or an op of
    `op_type` (its input is then used as the logits, as TF's Keras does); else the
    arguments unchanged."""
    keras_logits = backend.graph_state(output.graph).logits.get(output)
    if keras_logits is not None:
        return keras_logits, True
    if output.op.type == op_type:
        return output.op.inputs[0], True
    return output, from_logits


@_export
def categorical_crossentropy(target, output, from_logits: bool = False, axis: int = -1):
    """The crossentropy of one-hot (or soft) `target` against `output` probabilities
    (logits with `from_logits`); probabilities are renormalized and clipped to
    [epsilon, 1 - epsilon].

    Raises:
      ValueError: incompatible shapes.
    """
    target = tf.convert_to_tensor(target)
    output = tf.convert_to_tensor(output)
    target.shape.assert_is_compatible_with(output.shape)
    output, from_logits = _get_logits(output, from_logits, "Softmax")
    if from_logits:
        return tf.nn.softmax_cross_entropy_with_logits_v2(labels=target, logits=output,
                                                          axis=axis)
    output = output / tf.reduce_sum(output, axis, True)
    eps = tf.constant(backend.epsilon(), dtype=output.dtype.base_dtype)
    output = tf.clip_by_value(output, eps, 1.0 - eps)
    return -tf.reduce_sum(target * tf.math.log(output), axis)


@_export
def sparse_categorical_crossentropy(target, output, from_logits: bool = False,
                                    axis: int = -1, ignore_class=None):
    """The crossentropy of integer class `target` against `output` probabilities
    (logits with `from_logits`) along `axis`.

    Raises:
      NotImplementedError: `ignore_class`.
      ValueError: a non-last axis on an output of unknown rank.
    """
    if ignore_class is not None:
        raise NotImplementedError("sparse_categorical_crossentropy(ignore_class=...) is not "
                                  "supported by tensorweave")
    target = tf.cast(tf.convert_to_tensor(target), "int64")
    output = tf.convert_to_tensor(output)
    output, from_logits = _get_logits(output, from_logits, "Softmax")
    if not from_logits:
        eps = tf.constant(backend.epsilon(), dtype=output.dtype.base_dtype)
        output = tf.math.log(tf.clip_by_value(output, eps, 1 - eps))
    output_rank = output.shape.ndims
    if output_rank is not None:
        axis %= output_rank
        if axis != output_rank - 1:
            perm = list(range(axis)) + list(range(axis + 1, output_rank)) + [axis]
            output = tf.transpose(output, perm=perm)
    elif axis != -1:
        raise ValueError("Cannot compute sparse categorical crossentropy with `axis=%s` on "
                         "an output tensor with unknown rank" % axis)
    output_shape = tf.shape(output)
    target_rank = target.shape.ndims
    update_shape = (target_rank is not None and output_rank is not None
                    and target_rank != output_rank - 1)
    if update_shape:
        target = flatten(target)
        output = tf.reshape(output, [-1, output_shape[-1]])
    res = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if update_shape and output_rank >= 3:
        res = tf.reshape(res, output_shape[:-1])
    return res


@_export
def binary_crossentropy(target, output, from_logits: bool = False):
    """Elementwise binary crossentropy of `target` against `output` probabilities
    (logits with `from_logits`), probabilities clipped to [epsilon, 1 - epsilon]."""
    target = tf.convert_to_tensor(target)
    output = tf.convert_to_tensor(output)
    output, from_logits = _get_logits(output, from_logits, "Sigmoid")
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = tf.constant(backend.epsilon(), dtype=output.dtype.base_dtype)
    output = tf.clip_by_value(output, eps, 1.0 - eps)
    bce = target * tf.math.log(output + backend.epsilon())
    bce += (1 - target) * tf.math.log(1 - output + backend.epsilon())
    return -bce



# --- recurrence ----------------------------------------------------------------------------
def _swap_batch_timestep(x):
    axes = list(range(x.shape.ndims))
    axes[0], axes[1] = 1, 0
    return tf.transpose(x, axes)


def _expand_mask(mask_t, like, fixed_dim: int = 1):
    """`mask_t` (bool) tiled to the shape of `like`, whose first `fixed_dim` axes it
    already has: the mask of every element of a step's output or state."""
    if tf.nest.is_nested(mask_t) or tf.nest.is_nested(like):
        raise ValueError("mask_t and input_t are expected to be tensors, got %s and %s"
                         % (mask_t, like))
    for _ in range(like.shape.ndims - mask_t.shape.ndims):
        mask_t = tf.expand_dims(mask_t, -1)
    multiples = [1] * fixed_dim + like.shape.as_list()[fixed_dim:]
    return tf.tile(mask_t, multiples)


@_export
def rnn(step_function, inputs, initial_states, go_backwards: bool = False, mask=None,
        constants=None, unroll: bool = False, input_length=None, time_major: bool = False,
        zero_output_for_mask: bool = False, return_all_outputs: bool = True):
    """Iterates `step_function(input_t, states + constants) -> (output_t, new_states)`
    over the time axis of `inputs`, as TF 2.15's Keras does in graph mode: a
    `tf.while_loop` over TensorArrays, or a Python loop when `unroll`.

    Args:
      step_function: the step, called on one time step of `inputs` (the nest of them)
        and the tuple of states followed by `constants`.
      inputs: a tensor (or nest of tensors) of shape (batch, time, ...) (time first with
        `time_major`), rank 3 at least.
      initial_states: the states at the first step (a list of tensors).
      go_backwards: iterate from the last time step; the outputs are then in that order.
      mask: bool (batch, time) or (batch, time, 1): where it is False, the step's
        states are not updated and its output is the previous output (zeros with
        `zero_output_for_mask`).
      constants: tensors passed to every step after the states.
      unroll: build one copy of the step per time step (the time axis must be known).
      input_length: with no mask, a (batch,) tensor of lengths: later steps keep the
        states and output zeros.
      time_major: `inputs` and the outputs are (time, batch, ...).
      zero_output_for_mask: masked steps output zeros instead of the previous output.
      return_all_outputs: accepted; graph mode always returns every output (as TF's).

    Returns:
      (last_output, outputs, new_states): the last step's output, the outputs of all
      steps stacked on the time axis, and the final states (a list or tuple).

    Raises:
      ValueError: inputs of rank below 3, or `unroll` with an unknown number of steps.
    """
    del return_all_outputs  # TF 2.15 ignores it outside TF 2 behaviour
    if not time_major:
        inputs = tf.nest.map_structure(_swap_batch_timestep, inputs)
    flat_inputs = tf.nest.flatten(inputs)
    time_steps = flat_inputs[0].shape[0]
    time_steps = time_steps.value if hasattr(time_steps, "value") else time_steps
    batch = flat_inputs[0].shape[1]
    batch = batch.value if hasattr(batch, "value") else batch
    for x in flat_inputs:
        x.shape.with_rank_at_least(3)
    if mask is not None:
        if mask.dtype != tf.bool:
            mask = tf.cast(mask, tf.bool)
        if mask.shape.ndims == 2:
            mask = tf.expand_dims(mask, -1)
        if not time_major:
            mask = _swap_batch_timestep(mask)
    constants = tuple(constants or ())
    if unroll:
        if not time_steps:
            raise ValueError("Unrolling requires a fixed number of timesteps.")
        last_output, outputs, new_states = _rnn_unrolled(
            step_function, inputs, tuple(initial_states), go_backwards, mask, constants,
            time_steps, zero_output_for_mask)
    else:
        last_output, outputs, new_states = _rnn_loop(
            step_function, inputs, tuple(initial_states), go_backwards, mask, constants,
            input_length, zero_output_for_mask)

    def set_time_and_batch(x):
        if isinstance(x, tf.Tensor):
            shape = x.shape.as_list()
            shape[0], shape[1] = time_steps, batch
            x.set_shape(shape)
        return x

    outputs = tf.nest.map_structure(set_time_and_batch, outputs)
    if not time_major:
        outputs = tf.nest.map_structure(_swap_batch_timestep, outputs)
    return last_output, outputs, new_states


def _rnn_unrolled(step_function, inputs, states, go_backwards, mask, constants,
                  time_steps, zero_output_for_mask):
    """`rnn` as a Python loop over the (time-major) steps."""
    def steps_of(x):
        steps = tf.unstack(x)
        return steps[::-1] if go_backwards else steps

    per_input = [steps_of(x) for x in tf.nest.flatten(inputs)]
    mask_steps = steps_of(mask) if mask is not None else None
    outputs, last_states = [], states
    for i in range(time_steps):
        step_input = tf.nest.pack_sequence_as(inputs, [steps[i] for steps in per_input])
        output, new_states = step_function(step_input, tuple(states) + constants)
        if mask_steps is not None:
            mask_t = mask_steps[i]
            prev_output = outputs[-1] if outputs else tf.zeros_like(output)
            output = tf.where_v2(_expand_mask(mask_t, output), output, prev_output)
            flat_states = tf.nest.flatten(states)
            kept = tuple(tf.where_v2(_expand_mask(mask_t, s), new, s)
                         for s, new in zip(flat_states, tf.nest.flatten(new_states)))
            new_states = tf.nest.pack_sequence_as(states, kept)
        states = last_states = new_states
        outputs.append(output)
    last_output = outputs[-1]
    outputs = tf.stack(outputs)
    if mask_steps is not None and zero_output_for_mask:
        last_output = tf.where_v2(_expand_mask(mask_steps[-1], last_output), last_output,
                                  tf.zeros_like(last_output))
        outputs = tf.where_v2(_expand_mask(mask, outputs, fixed_dim=2), outputs,
                              tf.zeros_like(outputs))
    return last_output, outputs, last_states


def _rnn_loop(step_function, inputs, initial_states, go_backwards, mask, constants,
              input_length, zero_output_for_mask):
    """`rnn` as a `tf.while_loop` reading the (time-major) steps from TensorArrays and
    writing the outputs to others."""
    flat_inputs = tf.nest.flatten(inputs)
    time_steps_t = tf.shape(flat_inputs[0])[0]
    input_ta = tuple(
        tf.TensorArray(dtype=x.dtype, size=time_steps_t, tensor_array_name="input_ta_%d" % i)
        .unstack(tf.reverse(x, [0]) if go_backwards else x)
        for i, x in enumerate(flat_inputs))
    # the first step, built outside the loop, gives the outputs' structure and dtypes
    input_time_zero = tf.nest.pack_sequence_as(inputs, [x[0] for x in flat_inputs])
    output_time_zero, _ = step_function(input_time_zero, initial_states + constants)
    flat_output_zero = tf.nest.flatten(output_time_zero)
    output_ta = tuple(
        tf.TensorArray(dtype=o.dtype, size=time_steps_t, element_shape=o.shape,
                       tensor_array_name="output_ta_%d" % i)
        for i, o in enumerate(flat_output_zero))
    time = tf.constant(0, dtype="int32", name="time")
    loop_kwargs = dict(cond=lambda time, *_: time < time_steps_t, parallel_iterations=32,
                       swap_memory=True)

    def read_step(time):
        return tf.nest.pack_sequence_as(inputs, [ta.read(time) for ta in input_ta])

    def call_step(time, states):
        output, new_states = step_function(read_step(time), tuple(states) + constants)
        flat_states = tf.nest.flatten(states)
        flat_new_states = tf.nest.flatten(new_states)
        for state, new_state in zip(flat_states, flat_new_states):
            if isinstance(new_state, tf.Tensor):
                new_state.set_shape(state.shape)
        return tf.nest.flatten(output), flat_states, flat_new_states, new_states

    masking_fn = _rnn_masking_fn(mask, input_length, go_backwards, time_steps_t)
    if masking_fn is None:
        def step(time, output_ta_t, *states):
            flat_output, _, flat_new_states, _ = call_step(time, states)
            output_ta_t = tuple(ta.write(time, o) for ta, o in zip(output_ta_t, flat_output))
            new_states = tf.nest.pack_sequence_as(initial_states, flat_new_states)
            return (time + 1, output_ta_t) + tuple(new_states)

        final = tf.while_loop(body=step, loop_vars=(time, output_ta) + initial_states,
                              **loop_kwargs)
        new_states = final[2:]
    else:
        zero_output = tuple(tf.zeros_like(o) for o in flat_output_zero)

        def masked(mask_t, flat_new, flat_old):
            if mask is not None:  # (batch, 1, ...) from the mask: tiled, broadcast
                return tuple(tf.where_v2(_expand_mask(mask_t, n, mask_t.shape.ndims), n, o)
                             for n, o in zip(flat_new, flat_old))
            # (batch,) from input_length: TF1's where picks whole rows
            return tuple(tf.where(mask_t, n, o) for n, o in zip(flat_new, flat_old))

        def step(time, output_ta_t, prev_output, *states):
            mask_t = masking_fn(time)
            flat_output, flat_states, flat_new_states, new_states = call_step(time, states)
            flat_output = masked(mask_t, flat_output,
                                 zero_output if zero_output_for_mask else prev_output)
            new_states = tf.nest.pack_sequence_as(
                new_states, masked(mask_t, flat_new_states, flat_states))
            output_ta_t = tuple(ta.write(time, o) for ta, o in zip(output_ta_t, flat_output))
            return (time + 1, output_ta_t, tuple(flat_output)) + tuple(new_states)

        final = tf.while_loop(body=step,
                              loop_vars=(time, output_ta, zero_output) + initial_states,
                              **loop_kwargs)
        new_states = final[3:]
    outputs = tuple(ta.stack() for ta in final[1])
    last_output = tuple(o[-1] for o in outputs)
    outputs = tf.nest.pack_sequence_as(output_time_zero, outputs)
    last_output = tf.nest.pack_sequence_as(output_time_zero, last_output)
    return last_output, outputs, new_states


def _rnn_masking_fn(mask, input_length, go_backwards, time_steps_t):
    """time -> the step's mask: read from the (time-major) `mask`, or computed from the
    `input_length` tensor; None when neither."""
    if mask is not None:
        if go_backwards:
            mask = tf.reverse(mask, [0])
        mask_ta = tf.TensorArray(dtype=tf.bool, size=time_steps_t,
                                 tensor_array_name="mask_ta").unstack(mask)
        return mask_ta.read
    if isinstance(input_length, tf.Tensor):
        if go_backwards:
            rev_input_length = tf.subtract(tf.reduce_max(input_length, axis=0) - 1,
                                           input_length)
            return lambda time: tf.less(rev_input_length, time)
        return lambda time: tf.greater(input_length, time)
    return None
