"""`tf.keras.Input` and `tf.keras.layers.InputLayer`: the placeholder (or an existing
tensor) a functional model starts from, with the input node that gives it a Keras
history."""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.engine import base_layer
from tensorweave.keras.engine import node as node_module


@tf_export("keras.layers.InputLayer")
class InputLayer(base_layer.Layer):
    """The entry point of a model: a placeholder named after the layer ('input_1', ...)
    of shape (batch_size,) + input_shape, or the given `input_tensor`.

    Args:
      input_shape: the shape without the batch dimension (an int for a vector).
      batch_size: the static batch size, or None.
      dtype: the dtype (default floatx(), or the input tensor's).
      input_tensor: an existing tensor to use instead of a new placeholder.
      sparse: a SparseTensor placeholder (`tf.sparse_placeholder`).
      ragged, type_spec: not supported (NotImplementedError when set).
      name: the layer's name ('input_<n>' when None).
      batch_input_shape: the shape with the batch dimension (instead of input_shape).

    Raises:
      ValueError: both input_shape and batch_input_shape, unknown keyword arguments, or
        an input tensor of another dtype than `dtype`.
      NotImplementedError: ragged or type_spec inputs.
    """

    def __init__(self, input_shape=None, batch_size: Optional[int] = None, dtype=None,
                 input_tensor=None, sparse=None, name: Optional[str] = None, ragged=None,
                 type_spec=None, **kwargs):
        if "batch_input_shape" in kwargs:
            batch_input_shape = kwargs.pop("batch_input_shape")
            if input_shape and batch_input_shape:
                raise ValueError("Only provide the input_shape OR batch_input_shape argument "
                                 "to InputLayer, not both at the same time.")
            if batch_input_shape:
                batch_size = batch_input_shape[0]
                input_shape = batch_input_shape[1:]
        if kwargs:
            raise ValueError("Unrecognized keyword arguments: %s" % list(kwargs.keys()))
        if ragged or type_spec is not None:
            raise NotImplementedError("tf.keras.Input: ragged and type_spec inputs are not "
                                      "supported by tensorweave")
        if not name:
            name = "input_" + str(backend.get_uid("input"))
        if not dtype:
            dtype = backend.floatx() if input_tensor is None else backend.dtype(input_tensor)
        elif input_tensor is not None and input_tensor.dtype != tf.as_dtype(dtype):
            raise ValueError("`input_tensor.dtype` differs from `dtype`. Received: "
                             "input_tensor.dtype=%s but expected dtype=%s"
                             % (input_tensor.dtype, dtype))
        super().__init__(dtype=dtype, name=name)
        self.built = True
        self.sparse = bool(sparse)
        self.ragged = False
        self.batch_size = batch_size
        self.supports_masking = True
        if isinstance(input_shape, tf.TensorShape):
            input_shape = tuple(input_shape.as_list())
        elif isinstance(input_shape, int):
            input_shape = (input_shape,)
        if input_tensor is None:
            batch_input_shape = None if input_shape is None else \
                (batch_size,) + tuple(input_shape)
            if sparse:
                input_tensor = tf.sparse_placeholder(dtype, shape=batch_input_shape,
                                                     name=self.name)
            else:
                input_tensor = backend.placeholder(shape=batch_input_shape, dtype=dtype,
                                                   name=self.name)
            self.is_placeholder = True
            self._batch_input_shape = batch_input_shape
        else:
            if not isinstance(input_tensor, tf.Tensor):
                raise ValueError("You should not pass a non-tensor to `Input` (got %r)"
                                 % (input_tensor,))
            self.is_placeholder = False
            shape = input_tensor.shape
            self._batch_input_shape = None if shape.ndims is None else \
                tuple(shape.as_list())
        input_tensor._keras_mask = None
        node_module.Node(self, outputs=input_tensor)

    def get_config(self) -> dict:
        return {"batch_input_shape": self._batch_input_shape, "dtype": self.dtype,
                "sparse": self.sparse, "ragged": self.ragged, "name": self.name}


@tf_export("keras.Input", "keras.layers.Input")
def Input(shape=None, batch_size: Optional[int] = None, name: Optional[str] = None,  # noqa: N802
          dtype=None, sparse=None, tensor=None, ragged=None, type_spec=None, **kwargs):
    """A Keras tensor to start a functional model from: a placeholder of shape
    (batch_size,) + shape (or `tensor` itself, given a Keras history).

    Args:
      shape: the shape without the batch dimension.
      batch_size: the static batch size, or None.
      name: the placeholder's name ('input_<n>' when None).
      dtype: the dtype (default floatx()).
      sparse: a SparseTensor placeholder (`tf.sparse_placeholder`).
      ragged, type_spec: not supported (NotImplementedError when set).
      tensor: an existing tensor to use.
      **kwargs: batch_shape / batch_input_shape (the shape with the batch dimension).

    Returns:
      The tensor.

    Raises:
      ValueError: no shape, tensor or type_spec; both shape and batch_shape; unknown
        keyword arguments.
    """
    if sparse and ragged:
        raise ValueError("Cannot set both `sparse` and `ragged` to `True` in a Keras `Input`.")
    config = {"name": name, "dtype": dtype, "sparse": sparse, "ragged": ragged,
              "input_tensor": tensor, "type_spec": type_spec}
    batch_input_shape = kwargs.pop("batch_input_shape", kwargs.pop("batch_shape", None))
    if shape is not None and batch_input_shape is not None:
        raise ValueError("Only provide the `shape` OR `batch_input_shape` argument to Input, "
                         "not both at the same time.")
    if batch_input_shape is None and shape is None and tensor is None and type_spec is None:
        raise ValueError("Please provide to Input a `shape` or a `tensor` or a `type_spec` "
                         "argument. Note that `shape` does not include the batch dimension.")
    if kwargs:
        raise ValueError("Unrecognized keyword arguments: %s" % list(kwargs.keys()))
    if batch_input_shape:
        config["batch_input_shape"] = batch_input_shape
    else:
        config.update(batch_size=batch_size, input_shape=shape)
    layer = InputLayer(**config)
    outputs = layer._inbound_nodes[0].outputs
    if isinstance(outputs, list) and len(outputs) == 1:
        return outputs[0]
    return outputs
