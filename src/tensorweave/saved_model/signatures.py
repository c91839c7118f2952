"""Signatures of a SavedModel: which tensors a server feeds and fetches, as TF's
`TensorInfo` and `SignatureDef` protobuf messages (TF1 `tf.saved_model.utils` and
`tf.saved_model.signature_def_utils`). TensorFlow Serving's predict, classify and
regress APIs each accept only signatures of their own shape (`is_valid_signature`)."""
from __future__ import annotations

from typing import Dict, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import graph_def_proto as _gp
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.saved_model import names as _c


def _meta_graph_pb2():
    from tensorboard.compat.proto import meta_graph_pb2
    return meta_graph_pb2


@tf_export("saved_model.build_tensor_info", "saved_model.utils.build_tensor_info")
def build_tensor_info(tensor):
    """The `TensorInfo` message of a Tensor or SparseTensor: its name (the names of a
    SparseTensor's indices, values and dense shape), dtype and static shape.

    Args:
      tensor: a `tf.Tensor` or `tf.SparseTensor`.

    Returns:
      A `TensorInfo` protocol buffer.

    Raises:
      TypeError: `tensor` is neither.
    """
    info = _meta_graph_pb2().TensorInfo()
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        dtype, shape = tensor.dtype, tensor.get_shape()
    elif isinstance(tensor, _graph.Tensor) or hasattr(tensor, "read_value"):
        # a Variable is named by its tensor, as TF reads `name` of whatever it gets
        info.name = tensor.name
        dtype, shape = tensor.dtype, tensor.get_shape()
    else:
        raise TypeError("build_tensor_info expects a Tensor or SparseTensor, got %s"
                        % type(tensor).__name__)
    info.dtype = _dt.as_dtype(dtype).base_dtype.as_datatype_enum
    _gp.shape_to_proto(shape, info.tensor_shape)
    return info


@tf_export("saved_model.get_tensor_from_tensor_info",
           "saved_model.utils.get_tensor_from_tensor_info")
def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope: Optional[str] = None):
    """The Tensor or SparseTensor a `TensorInfo` names, in `graph` (default: the default
    graph), its names prefixed with `import_scope` if given.

    Raises:
      KeyError: the graph has no tensor of that name.
      ValueError: the TensorInfo names neither a tensor nor a SparseTensor.
    """
    graph = graph or _graph.get_default_graph()

    def tensor(name):
        return graph.get_tensor_by_name("%s/%s" % (import_scope, name) if import_scope
                                        else name)
    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        coo = tensor_info.coo_sparse
        return SparseTensor(tensor(coo.indices_tensor_name), tensor(coo.values_tensor_name),
                            tensor(coo.dense_shape_tensor_name))
    raise ValueError("Invalid TensorInfo.encoding: %s. Expected `coo_sparse` or `name` for "
                     "a dense tensor (composite tensors are TF2's)." % encoding)


@tf_export("saved_model.build_signature_def",
           "saved_model.signature_def_utils.build_signature_def")
def build_signature_def(inputs: Optional[Dict] = None, outputs: Optional[Dict] = None,
                        method_name: Optional[str] = None, defaults: Optional[Dict] = None):
    """A `SignatureDef` message of `TensorInfo` maps (see `build_tensor_info`).

    Args:
      inputs: key -> TensorInfo of what a caller feeds.
      outputs: key -> TensorInfo of what it fetches.
      method_name: e.g. tf.saved_model.PREDICT_METHOD_NAME.
      defaults: input key -> a constant Tensor whose value is the default of that input.

    Returns:
      A `SignatureDef` protocol buffer.

    Raises:
      ValueError: a default is not a constant.
    """
    sig = _meta_graph_pb2().SignatureDef()
    for key, info in (inputs or {}).items():
        sig.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        sig.outputs[key].CopyFrom(info)
    if method_name is not None:
        sig.method_name = method_name
    for key, default in (defaults or {}).items():
        if not isinstance(default, _graph.Tensor) or default.op.type != "Const":
            raise ValueError("Unable to convert object %s of type %s to TensorProto."
                             % (default, type(default)))
        from tensorweave.ops.array.array_shape_ops import make_tensor_proto
        from tensorweave.framework.tensor_util import constant_value
        sig.defaults[key].CopyFrom(make_tensor_proto(constant_value(default)))
    return sig


@tf_export("saved_model.predict_signature_def",
           "saved_model.signature_def_utils.predict_signature_def")
def predict_signature_def(inputs: Dict, outputs: Dict):
    """A signature for TensorFlow Serving's Predict API: any tensors in, any out.

    Args:
      inputs: dict of string to Tensor.
      outputs: dict of string to Tensor.

    Raises:
      ValueError: `inputs` or `outputs` is None or empty.
    """
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               _c.PREDICT_METHOD_NAME)


@tf_export("saved_model.classification_signature_def",
           "saved_model.signature_def_utils.classification_signature_def")
def classification_signature_def(examples, classes, scores):
    """A signature for TensorFlow Serving's Classify API.

    Args:
      examples: a string Tensor of serialized tf.Examples.
      classes: a string Tensor of class labels, or None.
      scores: a float Tensor of scores, or None.

    Raises:
      ValueError: `examples` missing or not a string Tensor, both `classes` and `scores`
        None, or one of them of another dtype.
    """
    if examples is None:
        raise ValueError("Classification `examples` cannot be None.")
    if not isinstance(examples, _graph.Tensor):
        raise ValueError("Classification `examples` must be a string Tensor. Found "
                         "`examples` of type %s." % type(examples))
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    _require(examples, _dt.string, "Classification input tensors must be of type string.")
    outputs = {}
    if classes is not None:
        _require(classes, _dt.string, "Classification classes must be of type string "
                 "Tensor.")
        outputs[_c.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
    if scores is not None:
        _require(scores, _dt.float32, "Classification scores must be a float Tensor.")
        outputs[_c.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    return build_signature_def({_c.CLASSIFY_INPUTS: build_tensor_info(examples)}, outputs,
                               _c.CLASSIFY_METHOD_NAME)


@tf_export("saved_model.regression_signature_def",
           "saved_model.signature_def_utils.regression_signature_def")
def regression_signature_def(examples, predictions):
    """A signature for TensorFlow Serving's Regress API.

    Args:
      examples: a string Tensor of serialized tf.Examples.
      predictions: a float Tensor.

    Raises:
      ValueError: an argument missing or of another dtype.
    """
    if examples is None:
        raise ValueError("Regression `examples` cannot be None.")
    if not isinstance(examples, _graph.Tensor):
        raise ValueError("Expected regression `examples` to be of type Tensor. Found "
                         "`examples` of type %s." % type(examples))
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    _require(examples, _dt.string, "Regression input tensors must be of type string.",
             found="with")
    _require(predictions, _dt.float32, "Regression output tensors must be of type float.",
             found="with")
    return build_signature_def({_c.REGRESS_INPUTS: build_tensor_info(examples)},
                               {_c.REGRESS_OUTPUTS: build_tensor_info(predictions)},
                               _c.REGRESS_METHOD_NAME)


def _require(tensor, dtype, message: str, found: str = "of") -> None:
    """Raises ValueError(`message` and the dtype found) when `tensor` is not `dtype`;
    `found` is TF's wording, "of type" in the classification checks, "with type" in the
    regression ones."""
    if tensor.dtype.base_dtype != dtype:
        raise ValueError("%s Found tensors %s type %s." % (message, found, tensor.dtype.name))


@tf_export("saved_model.is_valid_signature",
           "saved_model.signature_def_utils.is_valid_signature")
def is_valid_signature(signature_def) -> bool:
    """Whether TensorFlow Serving can serve `signature_def`: a predict signature with
    inputs and outputs, or a classify or regress signature of the shape its API takes."""
    if signature_def is None:
        return False
    string, float32 = _dt.string.as_datatype_enum, _dt.float32.as_datatype_enum
    ins, outs, method = signature_def.inputs, signature_def.outputs, \
        signature_def.method_name
    if method == _c.PREDICT_METHOD_NAME:
        return bool(ins) and bool(outs)
    if method == _c.REGRESS_METHOD_NAME:
        return set(ins) == {_c.REGRESS_INPUTS} and ins[_c.REGRESS_INPUTS].dtype == string \
            and set(outs) == {_c.REGRESS_OUTPUTS} and \
            outs[_c.REGRESS_OUTPUTS].dtype == float32
    if method == _c.CLASSIFY_METHOD_NAME:
        allowed = {_c.CLASSIFY_OUTPUT_CLASSES: string, _c.CLASSIFY_OUTPUT_SCORES: float32}
        return set(ins) == {_c.CLASSIFY_INPUTS} and \
            ins[_c.CLASSIFY_INPUTS].dtype == string and bool(outs) and \
            all(k in allowed and outs[k].dtype == allowed[k] for k in outs)
    return False


def op_signature_def(op, key: str):
    """The signature TF2's builder writes for an init or train op: one output, named by
    the op (dtype invalid). `load_op_from_signature_def` reads it back."""
    info = _meta_graph_pb2().TensorInfo()
    info.name = op.name
    return build_signature_def(outputs={key: info})


def load_op_from_signature_def(signature_def, key: str, import_scope: Optional[str] = None):
    """The op or tensor output `key` of `signature_def` names, in the default graph.

    Raises:
      NotFoundError: the signature has no output `key`.
    """
    if key not in signature_def.outputs:
        raise errors.NotFoundError(None, None, "The key \"%s\" could not be found in the "
                                   "SignatureDef." % key)
    name = signature_def.outputs[key].name
    if import_scope:
        name = "%s/%s" % (import_scope, name)
    return _graph.get_default_graph().as_graph_element(name)
