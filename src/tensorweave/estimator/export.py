"""tf.estimator.export: what a serving_input_receiver_fn returns, what a model_fn exports
(`ExportOutput`s), and the helpers `Estimator.export_saved_model` builds signatures and
export directories with (TF's `export_utils`).

A receiver names the tensors a server feeds (`receiver_tensors`, usually one string
placeholder of serialized tf.Examples) and the features the model_fn gets from them. Each
`ExportOutput` of the model_fn becomes one SignatureDef over those inputs; one that
TensorFlow Serving could not serve for this receiver is left out with a logged reason.
"""
from __future__ import annotations

import abc
import collections
import logging
import os
import time
from typing import Callable, Dict, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.saved_model import names as _c
from tensorweave.saved_model import signatures as _sig

_log = logging.getLogger("tensorflow")

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
SINGLE_LABEL_DEFAULT_NAME = "label"
_SINGLE_TENSOR_DEFAULT_NAMES = {"feature": SINGLE_FEATURE_DEFAULT_NAME,
                                "receiver_tensor": SINGLE_RECEIVER_DEFAULT_NAME,
                                "receiver_tensors_alternative": SINGLE_RECEIVER_DEFAULT_NAME}
MAX_DIRECTORY_CREATION_ATTEMPTS = 10


# --- receivers ------------------------------------------------------------------------------
def _check_tensor(tensor, name, error_label: str = "feature") -> None:
    if not isinstance(tensor, (Tensor, SparseTensor)):
        # TF also names RaggedTensor, which tensorweave does not have: the message is TF's
        raise ValueError("{}{} must be a Tensor, SparseTensor, or RaggedTensor.".format(
            error_label, " {}".format(name) if name else ""))


def _check_tensor_key(name, error_label: str, allow_ints: bool) -> None:
    if isinstance(name, str):
        return
    if not allow_ints:
        raise ValueError("{} keys must be strings: {}.".format(error_label, name))
    if not isinstance(name, int) or isinstance(name, bool):
        raise ValueError("{} keys must be strings or ints: {}.".format(error_label, name))


def wrap_and_check_input_tensors(tensors, field_name: str, allow_int_keys: bool = False):
    """`tensors` as a dict of name -> Tensor/SparseTensor (a single tensor is put under
    the default name of `field_name`: 'feature' or 'input').

    Raises:
      ValueError: `tensors` is None, a key is not a string (or int, if allowed), or a
        value is not a Tensor or SparseTensor.
    """
    if tensors is None:
        raise ValueError("{}s must be defined.".format(field_name))
    if not isinstance(tensors, dict):
        tensors = {_SINGLE_TENSOR_DEFAULT_NAMES[field_name]: tensors}
    for name, tensor in tensors.items():
        _check_tensor_key(name, field_name, allow_int_keys)
        _check_tensor(tensor, name, field_name)
    return tensors


@tf_export("estimator.export.ServingInputReceiver")
class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """What a serving_input_receiver_fn returns.

    Args:
      features: a Tensor, SparseTensor, or dict of string or int to them: the features
        passed to the model_fn. A single tensor becomes {'feature': tensor} (use
        `TensorServingInputReceiver` to pass it as is).
      receiver_tensors: a Tensor, SparseTensor, or dict of string to them: the inputs
        a server feeds. A single tensor becomes {'input': tensor}.
      receiver_tensors_alternatives: dict of name -> further groups of receiver
        tensors (each a tensor or dict); each gives extra signatures named
        '<name>:<output key>', e.g. to feed the parsed features directly.

    Raises:
      ValueError: a field is missing, or has keys or values of the wrong type.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = wrap_and_check_input_tensors(features, "feature", allow_int_keys=True)
        receiver_tensors = wrap_and_check_input_tensors(receiver_tensors, "receiver_tensor")
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, dict):
                raise ValueError("receiver_tensors_alternatives must be a dict: {}.".format(
                    receiver_tensors_alternatives))
            # TF rewrites the caller's dict in place; so do we, so that callers holding
            # it see the same wrapped groups
            for name, group in receiver_tensors_alternatives.items():
                receiver_tensors_alternatives[name] = wrap_and_check_input_tensors(
                    group, "receiver_tensors_alternative")
        return super().__new__(cls, features=features, receiver_tensors=receiver_tensors,
                               receiver_tensors_alternatives=receiver_tensors_alternatives)


@tf_export("estimator.export.TensorServingInputReceiver")
class TensorServingInputReceiver(collections.namedtuple(
        "TensorServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """A serving receiver for a model_fn that takes one Tensor or SparseTensor as its
    features, not a dict: `features` is kept as is. The receiver tensors are wrapped
    into dicts as `ServingInputReceiver` does.

    Raises:
      ValueError: `features` is None or not a Tensor or SparseTensor, or the receiver
        tensors are invalid.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        _check_tensor(features, None)
        receiver = ServingInputReceiver(features, receiver_tensors,
                                        receiver_tensors_alternatives)
        return super().__new__(
            cls, features=receiver.features[SINGLE_FEATURE_DEFAULT_NAME],
            receiver_tensors=receiver.receiver_tensors,
            receiver_tensors_alternatives=receiver.receiver_tensors_alternatives)


@tf_export("estimator.export.build_parsing_serving_input_receiver_fn")
def build_parsing_serving_input_receiver_fn(
        feature_spec: Dict, default_batch_size: Optional[int] = None) -> Callable:
    """A serving_input_receiver_fn that parses fed serialized tf.Examples.

    The function makes a string placeholder 'input_example_tensor' of shape
    [default_batch_size] (the receiver tensor 'examples') and parses it with
    `tf.io.parse_example(serialized, feature_spec)` into the features.

    Args:
      feature_spec: dict of feature name -> FixedLenFeature / VarLenFeature / ....
      default_batch_size: the batch size the server feeds; None (recommended) for any.

    Returns:
      A function of no arguments returning a `ServingInputReceiver`.
    """
    def serving_input_receiver_fn():
        from tensorweave.ops.array.constant_op import placeholder
        from tensorweave.ops.io.parsing_ops import parse_example
        serialized = placeholder(_dt.string, shape=[default_batch_size],
                                 name="input_example_tensor")
        features = parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})
    return serving_input_receiver_fn


def _placeholder_from_tensor(t, default_batch_size: Optional[int]):
    """A placeholder of `t`'s dtype and shape, with the batch dimension replaced, named
    after `t`'s op (the graph makes the name unique)."""
    from tensorweave.ops.array.constant_op import placeholder
    shape = TensorShape([default_batch_size]).concatenate(t.get_shape()[1:])
    return placeholder(t.dtype, shape=shape, name=t.op.name)


@tf_export("estimator.export.build_raw_serving_input_receiver_fn")
def build_raw_serving_input_receiver_fn(
        features: Dict, default_batch_size: Optional[int] = None) -> Callable:
    """A serving_input_receiver_fn whose features are fed directly.

    Args:
      features: dict of string -> Tensor: each gives a placeholder of its dtype and
        shape (batch dimension: `default_batch_size`), named after its op.
      default_batch_size: the batch size the server feeds; None (recommended) for any.

    Returns:
      A function of no arguments returning a `ServingInputReceiver` whose features
      and receiver tensors are the same placeholders.
    """
    def serving_input_receiver_fn():
        receiver_tensors = {name: _placeholder_from_tensor(t, default_batch_size)
                            for name, t in features.items()}
        return ServingInputReceiver(receiver_tensors, receiver_tensors)
    return serving_input_receiver_fn


# --- export outputs -------------------------------------------------------------------------
def _single_string_input(receiver_tensors, kind: str):
    """The one string tensor a Classify or Regress signature takes as its input."""
    if isinstance(receiver_tensors, (Tensor, SparseTensor)):
        receiver_tensors = {SINGLE_RECEIVER_DEFAULT_NAME: receiver_tensors}
    examples = next(iter(receiver_tensors.values())) if len(receiver_tensors) == 1 else None
    if examples is None or examples.dtype.base_dtype != _dt.string:
        raise ValueError(
            "{} signatures can only accept a single tensor input of type tf.string. Please "
            "check to make sure that you have structured the serving_input_receiver_fn so "
            "that it creates a single string placeholder. If your model function expects "
            "multiple inputs, then use `tf.io.parse_example()` to parse the string into "
            "multiple tensors.\n Received: {}".format(kind, receiver_tensors))
    return examples


@tf_export("estimator.export.ExportOutput")
class ExportOutput(abc.ABC):
    """An output of a model that can be served (typically one head of it): it turns
    into one SignatureDef over given receiver tensors."""

    _SEPARATOR_CHAR = "/"

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors):
        """The SignatureDef of this output with `receiver_tensors` (a Tensor, or a dict
        of string to Tensor) as its inputs.

        Raises:
          ValueError: this output cannot be served with these inputs.
        """

    def _check_output_key(self, key, error_label: str) -> str:
        if isinstance(key, tuple):  # a multi-head model's (head, output) key
            key = self._SEPARATOR_CHAR.join(key)
        if not isinstance(key, str):
            raise ValueError("{} output key must be a string; got {}.".format(
                error_label, key))
        return key

    def _wrap_and_check_outputs(self, outputs, single_output_default_name: str,
                                error_label: Optional[str] = None) -> Dict[str, Tensor]:
        """`outputs` (a Tensor or a dict) as a new dict of string -> Tensor."""
        if not isinstance(outputs, dict):
            outputs = {single_output_default_name: outputs}
        label = error_label or single_output_default_name
        checked = {}
        for key, value in outputs.items():
            key = self._check_output_key(key, label)
            if not isinstance(value, Tensor):
                raise ValueError("{} output value must be a Tensor; got {}.".format(
                    label, value))
            checked[key] = value
        return checked


@tf_export("estimator.export.ClassificationOutput")
class ClassificationOutput(ExportOutput):
    """The output of a classification head, served by TensorFlow Serving's Classify API.

    Args:
      scores: a float Tensor of scores per class (None only if `classes` is set).
      classes: a string Tensor of class labels (None only if `scores` is set). Given
        both, they are zipped: each score belongs to the class at the same index.

    Raises:
      ValueError: neither is set, or one is not a Tensor of the right dtype.
    """

    def __init__(self, scores=None, classes=None):
        if scores is not None and not (isinstance(scores, Tensor)
                                       and scores.dtype.is_floating):
            raise ValueError("Classification scores must be a float32 Tensor; got {}"
                             .format(scores))
        if classes is not None and not (isinstance(classes, Tensor)
                                        and classes.dtype.base_dtype == _dt.string):
            raise ValueError("Classification classes must be a string Tensor; got {}"
                             .format(classes))
        if scores is None and classes is None:
            raise ValueError("Cannot create a ClassificationOutput with empty arguments. At "
                             "least one of `scores` and `classes` must be defined.")
        self._scores = scores
        self._classes = classes

    @property
    def scores(self):
        return self._scores

    @property
    def classes(self):
        return self._classes

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Classification")
        return _sig.classification_signature_def(examples, self._classes, self._scores)


@tf_export("estimator.export.RegressionOutput")
class RegressionOutput(ExportOutput):
    """The output of a regression head, served by TensorFlow Serving's Regress API.

    Args:
      value: a float Tensor of the predicted values.

    Raises:
      ValueError: `value` is not a float Tensor.
    """

    def __init__(self, value):
        if not (isinstance(value, Tensor) and value.dtype.is_floating):
            raise ValueError("Regression output value must be a float32 Tensor; got {}"
                             .format(value))
        self._value = value

    @property
    def value(self):
        return self._value

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Regression")
        return _sig.regression_signature_def(examples, self._value)


@tf_export("estimator.export.PredictOutput")
class PredictOutput(ExportOutput):
    """The output of a generic prediction head, served by the Predict API.

    Args:
      outputs: a Tensor (named 'output') or a dict of string (or tuple of strings,
        joined with '/') to Tensor.

    Raises:
      ValueError: a key is not a string or a value not a Tensor.
    """

    def __init__(self, outputs):
        self._outputs = self._wrap_and_check_outputs(outputs, "output",
                                                     error_label="Prediction")

    @property
    def outputs(self) -> Dict[str, Tensor]:
        return self._outputs

    def as_signature_def(self, receiver_tensors):
        if isinstance(receiver_tensors, (Tensor, SparseTensor)):
            receiver_tensors = {SINGLE_RECEIVER_DEFAULT_NAME: receiver_tensors}
        return _sig.predict_signature_def(receiver_tensors, self._outputs)


SUPERVISED_TRAIN_METHOD_NAME = "tensorflow/supervised/training"
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"


class _SupervisedOutput(ExportOutput):
    """The output of supervised training or evaluation: loss, predictions and metrics,
    exported as one signature of the subclass's `_METHOD_NAME`.

    Each output key is prefixed with its group ("loss/", "predictions/", "metrics/")
    unless it already starts with the group's name; a metric becomes two outputs,
    "<key>/value" and "<key>/update_op".
    """

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"

    def __init__(self, loss=None, predictions=None, metrics=None):
        self._loss = self._prefixed_outputs(loss, self.LOSS_NAME)
        self._predictions = self._prefixed_outputs(predictions, self.PREDICTIONS_NAME)
        self._metrics = None if metrics is None else self._metric_outputs(metrics)

    @property
    def loss(self) -> Optional[Dict[str, Tensor]]:
        return self._loss

    @property
    def predictions(self) -> Optional[Dict[str, Tensor]]:
        return self._predictions

    @property
    def metrics(self) -> Optional[Dict[str, Tensor]]:
        return self._metrics

    def _prefix_key(self, key: str, group: str) -> str:
        # TF keeps a key that merely starts with the group's name ("lossy") as it is
        return key if key.startswith(group) else group + self._SEPARATOR_CHAR + key

    def _prefixed_outputs(self, outputs, group: str):
        if outputs is None:
            return None
        checked = self._wrap_and_check_outputs(outputs, group)
        return {self._prefix_key(key, group): value for key, value in checked.items()}

    def _metric_outputs(self, metrics) -> Dict[str, Tensor]:
        if not isinstance(metrics, dict):
            metrics = {self.METRICS_NAME: metrics}
        outputs = {}
        for key, metric in metrics.items():
            value, update = _metric_value_and_update(metric)
            key = self._prefix_key(self._check_output_key(key, self.METRICS_NAME),
                                   self.METRICS_NAME)
            if not isinstance(value, Tensor):
                raise ValueError("{} output value must be a Tensor; got {}.".format(
                    key, value))
            if not isinstance(update, (Tensor, Operation)):
                raise ValueError("{} update_op must be a Tensor or Operation; got {}."
                                 .format(key, update))
            outputs[key + self._SEPARATOR_CHAR + self.METRIC_VALUE_SUFFIX] = value
            outputs[key + self._SEPARATOR_CHAR + self.METRIC_UPDATE_SUFFIX] = \
                _update_as_tensor(update)
        return outputs

    def as_signature_def(self, receiver_tensors):
        if not receiver_tensors:
            raise ValueError("{} `inputs` cannot be None or empty."
                             .format(self._METHOD_NAME))
        outputs = {}
        for group in (self._loss, self._predictions, self._metrics):
            outputs.update(group or {})
        return _sig.build_signature_def(
            {key: _sig.build_tensor_info(t) for key, t in receiver_tensors.items()},
            {key: _sig.build_tensor_info(t) for key, t in outputs.items()},
            self._METHOD_NAME)


class TrainOutput(_SupervisedOutput):
    """The output of supervised training ('tensorflow/supervised/training' signature);
    see `EvalOutput` for the arguments."""

    _METHOD_NAME = SUPERVISED_TRAIN_METHOD_NAME


@tf_export("estimator.export.EvalOutput")
class EvalOutput(_SupervisedOutput):
    """The output of a supervised evaluation: loss, predictions and metrics, exported
    as one 'tensorflow/supervised/eval' signature.

    Args:
      loss: a Tensor or a dict of string to Tensor.
      predictions: a Tensor or a dict of string to Tensor.
      metrics: a (value, update_op) pair, a Keras `Metric`, or a dict of string to
        either.

    Raises:
      ValueError: a key is not a string, a value or metric value is not a Tensor, or
        an update_op is neither a Tensor nor an Operation.
    """

    _METHOD_NAME = SUPERVISED_EVAL_METHOD_NAME


# the signature key and the MetaGraphDef tags of the export of each mode
_SIGNATURE_KEY_OF_MODE = {"train": "train", "eval": "eval",
                          "infer": _c.DEFAULT_SERVING_SIGNATURE_DEF_KEY}
EXPORT_TAG_MAP = {"train": [_c.TRAINING], "eval": ["eval"], "infer": [_c.SERVING]}


def export_outputs_for_mode(mode: str, serving_export_outputs=None, predictions=None,
                            loss=None, metrics=None) -> dict:
    """The export outputs of a model_fn's spec in `mode`: its serving ones (PREDICT), or
    one TrainOutput (TRAIN) or EvalOutput (EVAL) of its loss, predictions and metrics.

    Raises:
      ValueError: an unknown mode.
    """
    if mode not in _SIGNATURE_KEY_OF_MODE:
        raise ValueError("Export output type not found for mode: {}. Expected one of: {}."
                         .format(mode, list(_SIGNATURE_KEY_OF_MODE)))
    if mode == "infer":
        return get_export_outputs(serving_export_outputs, predictions)
    output_class = TrainOutput if mode == "train" else EvalOutput
    return {_SIGNATURE_KEY_OF_MODE[mode]: output_class(loss=loss, predictions=predictions,
                                                       metrics=metrics)}


def _metric_value_and_update(metric):
    """(value, update_op) of a metric pair or of a Keras Metric (its one update)."""
    if isinstance(metric, tuple):
        value, update = metric
        return value, update
    updates = metric.updates
    if len(updates) != 1:
        raise ValueError("A Keras Metric exported in an EvalOutput must have exactly one "
                         "update op; {} has {}.".format(metric, len(updates)))
    return metric.result(), updates[0]


def _update_as_tensor(update):
    """A SignatureDef holds tensors only: an update Operation becomes an empty float
    constant that runs it (TF's 'metric_op_wrapper')."""
    if isinstance(update, Tensor):
        return update
    from tensorweave.framework.graph import control_dependencies
    from tensorweave.ops.array.constant_op import constant
    with control_dependencies([update]):
        return constant([], name="metric_op_wrapper")


# --- helpers for Estimator.export_saved_model --------------------------------------------
def get_export_outputs(export_outputs, predictions) -> dict:
    """`export_outputs` checked, or a PredictOutput of `predictions` by default; a
    single output is also put under the default serving key.

    Args:
      export_outputs: dict of signature key -> ExportOutput, or None.
      predictions: a Tensor or dict of Tensors (used when `export_outputs` is None).

    Returns:
      The dict of export outputs (the given dict, completed in place).

    Raises:
      TypeError: `export_outputs` is not a dict, or a value is not an ExportOutput.
      ValueError: several outputs, none under the default serving key.
    """
    default_key = _c.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    if export_outputs is None:
        export_outputs = {default_key: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError("`export_outputs` must be dict, received: {}.".format(export_outputs))
    if not all(isinstance(v, ExportOutput) for v in export_outputs.values()):
        raise TypeError("Values in `export_outputs` must be ExportOutput objects, "
                        "received: {}.".format(export_outputs))
    if len(export_outputs) == 1:
        export_outputs.setdefault(default_key, next(iter(export_outputs.values())))
    elif len(export_outputs) > 1 and default_key not in export_outputs:
        raise ValueError("Multiple `export_outputs` were provided, but none of them are "
                         "specified as the default. Use"
                         "`tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY` to specify a "
                         "default.")
    return export_outputs


def _flat_tensors(tensors) -> list:
    out = []
    for t in tensors:
        out.extend([t.indices, t.values, t.dense_shape] if isinstance(t, SparseTensor)
                   else [t])
    return out


def _path_to(start: Operation, outputs: list, sources: list) -> str:
    """One path from the outputs back to `start`, as TF's op_selector.show_path writes it:
    'out (Type) <- ... <- start (Type)', or '??'."""
    finals = [t.op for t in outputs]
    visited = {t.op for t in sources}
    successor = {}
    stack = list(finals)
    while stack:
        op = stack.pop()
        if op in visited:
            continue
        visited.add(op)
        if op is start:
            path = [op]
            while path[-1] not in finals:
                path.append(successor[path[-1]])
            return " <- ".join("%s (%s)" % (o.name, o.type) for o in reversed(path))
        for inp in [t.op for t in op.inputs] + list(op.control_inputs):
            if inp not in visited:
                successor[inp] = op
                stack.append(inp)
    return "??"


def _ensure_servable(input_tensors, output_infos) -> None:
    """Raises ValueError if a signature's outputs need a placeholder it does not feed.

    Walks back from the outputs (data inputs only), stopping at the given inputs.
    """
    inputs = _flat_tensors(input_tensors)
    if not inputs:
        return
    graph = inputs[0].graph
    outputs = _flat_tensors(_sig.get_tensor_from_tensor_info(info, graph=graph)
                            for info in output_infos.values())
    fed = set(inputs)
    # breadth first from the outputs, as TF's op_selector walks: the placeholder named is
    # then the one nearest the outputs
    seen, wave = set(), collections.deque(t.op for t in outputs)
    while wave:
        op = wave.popleft()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Placeholder" and not all(o in fed for o in op.outputs):
            raise ValueError(
                "The signature's input tensors {} are insufficient to compute its output "
                "keys {} (respectively, tensors {}) because of the dependency on `{}` which "
                "is not given as a signature input, as illustrated by the following "
                "dependency path: {}".format(
                    [t.name for t in inputs], list(output_infos.keys()),
                    [t.name for t in outputs], op.name, _path_to(op, outputs, inputs)))
        wave.extend(t.op for t in op.inputs if t not in fed)


_FRIENDLY_METHOD_NAMES = {_c.CLASSIFY_METHOD_NAME: "Classify",
                          _c.REGRESS_METHOD_NAME: "Regress",
                          _c.PREDICT_METHOD_NAME: "Predict",
                          "tensorflow/supervised/training": "Train",
                          "tensorflow/supervised/eval": "Eval"}


def _log_signature_report(signature_def_map: dict, excluded: dict) -> None:
    by_method = {method: [] for method in _FRIENDLY_METHOD_NAMES}
    for name, sig in signature_def_map.items():
        by_method.setdefault(sig.method_name, []).append(name)
    for method, names in by_method.items():
        _log.info("Signatures INCLUDED in export for %s: %s",
                  _FRIENDLY_METHOD_NAMES.get(method, method), names or "None")
    if excluded:
        _log.info("Signatures EXCLUDED from export because they cannot be be served via "
                  "TensorFlow Serving APIs:")
        for name, message in excluded.items():
            _log.info("'%s' : %s", name, message)
    if not signature_def_map:
        _log.warning("Export includes no signatures!")
    elif _c.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in signature_def_map:
        _log.warning("Export includes no default signature!")


def build_all_signature_defs(receiver_tensors, export_outputs,
                             receiver_tensors_alternatives=None,
                             serving_only: bool = True) -> dict:
    """One SignatureDef per export output and receiver (the alternatives' keys are
    '<alternative>:<output key>'). A signature that cannot be built for its receiver
    (e.g. Classify with a non-string input, or outputs needing an unfed placeholder) is
    left out and the reason logged.

    Args:
      receiver_tensors: a Tensor, or dict of string to Tensor, that a server feeds.
      export_outputs: dict of signature key -> ExportOutput.
      receiver_tensors_alternatives: dict of name -> further groups of receiver tensors.
      serving_only: keep only signatures TensorFlow Serving can serve
        (`tf.saved_model.is_valid_signature`).

    Returns:
      dict of signature key -> SignatureDef.

    Raises:
      ValueError: `export_outputs` is not a dict.
    """
    if not isinstance(export_outputs, dict):
        raise ValueError("`export_outputs` must be a dict. Received {} with type {}."
                         .format(export_outputs, type(export_outputs).__name__))
    # (prefix of the signature keys, receiver tensors); the default receiver has none
    receivers = [("", receiver_tensors)]
    receivers += [("{}:".format(name or "None"), tensors)
                  for name, tensors in (receiver_tensors_alternatives or {}).items()]
    signature_def_map, excluded = {}, {}
    for prefix, tensors in receivers:
        if not isinstance(tensors, dict):
            tensors = {SINGLE_RECEIVER_DEFAULT_NAME: tensors}
        for output_key, export_output in export_outputs.items():
            name = "{}{}".format(prefix, output_key or "None")
            try:
                signature = export_output.as_signature_def(tensors)
                _ensure_servable(tensors.values(), signature.outputs)
                signature_def_map[name] = signature
            except ValueError as e:
                excluded[name] = str(e)
    _log_signature_report(signature_def_map, excluded)
    if serving_only:
        signature_def_map = {k: v for k, v in signature_def_map.items()
                             if _sig.is_valid_signature(v)}
    return signature_def_map


def _as_bytes(path) -> bytes:
    return os.fsencode(path)


def get_timestamped_export_dir(export_dir_base) -> bytes:
    """export_dir_base/<seconds since the epoch>, a directory that does not exist yet
    (not created here). TensorFlow Serving takes the largest number as the newest model.

    Raises:
      RuntimeError: each of 10 tries, a second apart, found the directory existing.
    """
    for attempt in range(1, MAX_DIRECTORY_CREATION_ATTEMPTS + 1):
        result = os.path.join(_as_bytes(export_dir_base), b"%d" % int(time.time()))
        if not os.path.exists(result):
            return result
        time.sleep(1)
        _log.warning("Directory %s already exists; retrying (attempt %d/%d)",
                     os.fsdecode(result), attempt, MAX_DIRECTORY_CREATION_ATTEMPTS)
    raise RuntimeError("Failed to obtain a unique export directory name after {} attempts."
                       .format(MAX_DIRECTORY_CREATION_ATTEMPTS))


def get_temp_export_dir(timestamped_export_dir) -> bytes:
    """The sibling 'temp-<name>' of `timestamped_export_dir`, where an export is written
    before it is renamed into place (TensorFlow Serving ignores non-numeric names)."""
    dirname, basename = os.path.split(_as_bytes(timestamped_export_dir))
    return os.path.join(dirname, b"temp-" + basename)


# --- supervised receivers (tf.estimator.experimental) ---------------------------------------
# a single label tensor is checked under this name
_SINGLE_TENSOR_DEFAULT_NAMES["label"] = SINGLE_LABEL_DEFAULT_NAME


class SupervisedInputReceiver(collections.namedtuple(
        "SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])):
    """What a training or evaluation input receiver returns: features and labels (each a
    Tensor, SparseTensor or dict of string or int -> those) for the model_fn, and the
    receiver tensors fed (a dict string -> tensor; a single one goes under "input").

    Raises:
      ValueError: a field is None, a key is not a string (or int for features and
        labels), or a value is not a Tensor or SparseTensor.
    """

    def __new__(cls, features, labels, receiver_tensors):
        # features and labels are only checked: the model_fn gets them as given
        wrap_and_check_input_tensors(features, "feature", allow_int_keys=True)
        wrap_and_check_input_tensors(labels, "label", allow_int_keys=True)
        receiver_tensors = wrap_and_check_input_tensors(receiver_tensors,
                                                        "receiver_tensor")
        return super().__new__(cls, features=features, labels=labels,
                               receiver_tensors=receiver_tensors)


@tf_export("estimator.experimental.build_raw_supervised_input_receiver_fn")
def build_raw_supervised_input_receiver_fn(features, labels,
                                           default_batch_size: Optional[int] = None
                                           ) -> Callable:
    """A supervised input receiver fn whose features and labels are fed directly.

    Args:
      features: a Tensor or dict string -> Tensor: each gives a placeholder of its dtype
        and shape (batch dimension: `default_batch_size`), named after its op.
      labels: the same for the labels.
      default_batch_size: the batch size fed; None (recommended) for any.

    Returns:
      A function of no arguments returning a `SupervisedInputReceiver` whose features
      and labels are the placeholders (a dict where the argument was one), and whose
      receiver tensors are all of them (a single feature under "input", a single label
      under "label").

    Raises:
      ValueError: features and labels share a key.
    """
    feature_keys = features.keys() if isinstance(features, dict) \
        else [SINGLE_RECEIVER_DEFAULT_NAME]
    label_keys = labels.keys() if isinstance(labels, dict) else [SINGLE_LABEL_DEFAULT_NAME]
    overlap = set(feature_keys) & set(label_keys)
    if overlap:
        raise ValueError("Features and labels must have distinct keys. Found overlapping "
                         "keys: {}".format(overlap))

    def placeholders(tensors, single_name):
        """(what the model gets, the receiver tensors) for `tensors`."""
        if isinstance(tensors, dict):
            fed = {name: _placeholder_from_tensor(t, default_batch_size)
                   for name, t in tensors.items()}
            return fed, fed
        fed = _placeholder_from_tensor(tensors, default_batch_size)
        return fed, {single_name: fed}

    def supervised_input_receiver_fn():
        model_features, receiver_features = placeholders(features,
                                                         SINGLE_RECEIVER_DEFAULT_NAME)
        model_labels, receiver_labels = placeholders(labels, SINGLE_LABEL_DEFAULT_NAME)
        receiver_tensors = dict(receiver_features)
        receiver_tensors.update(receiver_labels)
        return SupervisedInputReceiver(model_features, model_labels, receiver_tensors)
    return supervised_input_receiver_fn
