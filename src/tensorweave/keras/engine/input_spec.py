"""`tf.keras.layers.InputSpec` and the check of a layer's inputs against it, with TF's
Keras messages (which differ from tf.layers': the layer name is quoted, shapes are
tuples)."""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.layers import base as layers_base


@tf_export("keras.layers.InputSpec")
class InputSpec(layers_base.InputSpec):
    """What a Keras layer accepts: dtype, rank bounds, sizes of given axes.

    Args:
      dtype: the expected dtype, or None.
      shape: the expected shape (None entries match anything), or None.
      ndim: the exact rank, or None.
      max_ndim, min_ndim: rank bounds, or None.
      axes: {axis: size} that must match, or None.
      allow_last_axis_squeeze: a trailing axis of size 1 may be absent (or extra).
      name: the input's name (for dict inputs).
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze: bool = False, name=None):
        super().__init__(dtype=dtype, shape=shape, ndim=ndim, max_ndim=max_ndim,
                         min_ndim=min_ndim, axes=axes)
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.name = name


def _display_shape(shape) -> str:
    return str(tuple(shape.as_list()))


def assert_input_compatibility(input_spec, inputs, layer_name: str) -> None:
    """Checks `inputs` (a tensor or a nested structure) against `input_spec` (a spec or
    a list of specs, None entries skipped).

    Raises:
      TypeError: an input without a shape (e.g. a Layer passed by mistake).
      ValueError: a count, rank, dtype, axis size or shape that does not match.
    """
    if not input_spec:
        return
    specs = tf.nest.flatten(input_spec)
    flat = tf.nest.flatten(inputs)
    for x in flat:
        if not hasattr(x, "shape"):
            raise TypeError("Inputs to a layer should be tensors. Got '%s' (of type %s) as "
                            "input for layer '%s'." % (x, type(x), layer_name))
    if len(flat) != len(specs):
        raise ValueError('Layer "%s" expects %d input(s), but it received %d input tensors. '
                         "Inputs received: %s" % (layer_name, len(specs), len(flat), flat))
    for index, (x, spec) in enumerate(zip(flat, specs)):
        if spec is None:
            continue
        shape = tf.TensorShape(x.shape)
        if shape.ndims is None:
            return
        who = 'Input %d of layer "%s" is incompatible with the layer: ' % (index, layer_name)
        squeeze = getattr(spec, "allow_last_axis_squeeze", False)
        ndim = shape.ndims
        if spec.ndim is not None and not squeeze and ndim != spec.ndim:
            raise ValueError(who + "expected ndim=%d, found ndim=%d. Full shape received: %s"
                             % (spec.ndim, ndim, tuple(shape)))
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise ValueError(who + "expected max_ndim=%d, found ndim=%d" % (spec.max_ndim, ndim))
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise ValueError(who + "expected min_ndim=%d, found ndim=%d. Full shape "
                             "received: %s" % (spec.min_ndim, ndim, tuple(shape)))
        if spec.dtype is not None and x.dtype.name != tf.as_dtype(spec.dtype).name:
            raise ValueError(who + "expected dtype=%s, found dtype=%s" % (spec.dtype, x.dtype))
        dims = shape.as_list()
        for axis, value in (spec.axes or {}).items():
            value = getattr(value, "value", value)
            if value is not None and dims[int(axis)] not in {value, None}:
                raise ValueError('Input %d of layer "%s" is incompatible with the layer: '
                                 "expected axis %s of input shape to have value %s, but "
                                 "received input with shape %s"
                                 % (index, layer_name, axis, value, _display_shape(shape)))
        if spec.shape is not None:
            spec_shape = list(spec.shape)
            if squeeze:
                if dims and dims[-1] == 1:
                    dims = dims[:-1]
                if spec_shape and spec_shape[-1] == 1:
                    spec_shape = spec_shape[:-1]
            for spec_dim, dim in zip(spec_shape, dims):
                if spec_dim is not None and dim is not None and spec_dim != dim:
                    raise ValueError('Input %d of layer "%s" is incompatible with the layer: '
                                     "expected shape=%s, found shape=%s"
                                     % (index, layer_name, spec.shape, _display_shape(shape)))
