"""Keras masks: the boolean tensor a Keras layer's output may carry (`tensor._keras_mask`)
to mark which timesteps of a sequence are padding.

TF's Keras sets `_keras_mask` as a plain attribute of its tensors. tensorweave's Tensor
has slots, so the masks live in a per-graph table and `Tensor._keras_mask` is a property
over it, installed by this module (imported with the Keras base layer). As in TF,
reading it on a tensor no layer gave a mask raises AttributeError, so
`getattr(t, "_keras_mask", None)` is the way to read it.

How masks flow (Layer.__call__, as TF 2.15's Keras in graph mode): the masks of a call's
inputs are passed to `call(..., mask=)` when `call` takes a mask and none was given;
the output mask is `layer.compute_mask(inputs, mask)` (by default the input mask when
`supports_masking`, else None) unless `call` set it itself.
"""
from __future__ import annotations

import tensorweave as tf

_TABLE = "_tensorweave_keras_masks"


def _get(tensor):
    table = tensor.graph.__dict__.get(_TABLE)
    if table is None or tensor not in table:
        raise AttributeError("'Tensor' object has no attribute '_keras_mask'")
    return table[tensor]


def _set(tensor, mask) -> None:
    tensor.graph.__dict__.setdefault(_TABLE, {})[tensor] = mask


def _delete(tensor) -> None:
    table = tensor.graph.__dict__.get(_TABLE)
    if table is None or tensor not in table:
        raise AttributeError("'Tensor' object has no attribute '_keras_mask'")
    del table[tensor]


tf.Tensor._override_operator("_keras_mask", property(_get, _set, _delete))


def get_mask(value):
    """The Keras mask of `value` (None when it has none or is not a tensor)."""
    return getattr(value, "_keras_mask", None)


def set_mask(value, mask) -> None:
    """Gives `value` the Keras mask `mask` (values that take no attributes are left)."""
    try:
        value._keras_mask = mask
    except AttributeError:
        pass


def input_masks(inputs):
    """The masks of the nested `inputs` (same structure), or None when none has one."""
    masks = tf.nest.map_structure(get_mask, inputs)
    if all(m is None for m in tf.nest.flatten(masks)):
        return None
    return masks


def set_output_masks(layer, inputs, outputs, previous_mask) -> None:
    """Sets the masks of a call's `outputs`: those `call` set itself (when the layer
    computes both jointly, or every output has one), else `compute_mask(inputs,
    previous_mask)` for layers that support masking or override `compute_mask`, else
    None."""
    flat_outputs = tf.nest.flatten(outputs)
    if getattr(layer, "_compute_output_and_mask_jointly", False) or \
            all(get_mask(x) is not None for x in flat_outputs):
        flat_masks = [get_mask(x) for x in flat_outputs]
    elif layer.supports_masking or not hasattr(layer.compute_mask, "_is_default"):
        masks = layer.compute_mask(inputs, previous_mask)
        flat_masks = [None] * len(flat_outputs) if masks is None else tf.nest.flatten(masks)
    else:
        flat_masks = [None] * len(flat_outputs)
    for output, mask in zip(flat_outputs, flat_masks):
        set_mask(output, mask)


def set_input_masks(inputs: list, masks) -> None:
    """Gives each of a functional model's call inputs its mask from `masks` (a list
    like `inputs`; None: no masks), as TF's Keras does before running the model's
    layers on them."""
    masks = [None] * len(inputs) if masks is None else masks
    for x, mask in zip(inputs, masks):
        set_mask(x, mask)
