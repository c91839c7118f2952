"""tf.estimator.EstimatorSpec: what a model_fn returns, checked as TF checks it; and
fn_args, the argument names TF reads off a model_fn, input_fn or device_fn."""
from __future__ import annotations

import collections
import functools
import inspect

from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.ops.state.variables import Variable

_NOT_DEFAULT_GRAPH = (
    '{0} with "{1}" must be from the default graph. Possible causes of this error '
    'include: \n\n1) {0} was created outside the context of the default graph.\n\n'
    '2) The object passed through to EstimatorSpec was not created in the most recent '
    'call to "model_fn".')

_FIELDS = ["mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
           "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
           "prediction_hooks"]


def fn_args(fn) -> tuple:
    """The names of the positional arguments of a function, method, callable object or
    functools.partial, as TF's function_utils.fn_args: without `self` of a bound method,
    the arguments a partial binds, keyword-only arguments, *args and **kwargs."""
    if isinstance(fn, functools.partial):
        bound = fn.keywords or {}
        return tuple(a for a in fn_args(fn.func)[len(fn.args):] if a not in bound)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(name for name, p in inspect.signature(fn).parameters.items()
                 if p.kind in positional)


def _as_tensor(value, what: str) -> Tensor:
    """`value` (a Tensor, or a variable: its value) or TF's TypeError."""
    if isinstance(value, Variable):
        value = value.value()
    if not isinstance(value, Tensor):
        raise TypeError("{} must be Tensor, given: {}".format(what, value))
    return value


def _in_default_graph(value, what: str, name: str) -> None:
    if value.graph is not get_default_graph():
        raise ValueError(_NOT_DEFAULT_GRAPH.format(what, name))


def _check_train_op(train_op, mode):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    if isinstance(train_op, Variable):
        train_op = train_op.op
    if not isinstance(train_op, (Tensor, Operation)):
        raise TypeError("train_op must be Operation or Tensor, given: {}".format(train_op))
    _in_default_graph(train_op, "train_op", train_op.name)
    return train_op


def _check_loss(loss, mode):
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    loss = _as_tensor(loss, "loss")
    shape = loss.shape
    if shape.num_elements() not in (None, 1):
        raise ValueError("Loss must be scalar, given: {}".format(loss))
    if not shape.is_compatible_with([]):
        from tensorweave.ops.array.array_ops import reshape
        loss = reshape(loss, [])
    _in_default_graph(loss, "loss", loss.name)
    return loss


def _check_predictions(predictions, mode):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        predictions = {k: _as_tensor(v, "predictions[{}]".format(k))
                       for k, v in predictions.items()}
        for k, v in predictions.items():
            _in_default_graph(v, "prediction values", "{0}: {1}".format(k, v.name))
        return predictions
    predictions = _as_tensor(predictions, "predictions")
    _in_default_graph(predictions, "prediction values", predictions.name)
    return predictions


def _check_metric_ops(eval_metric_ops) -> dict:
    """eval_metric_ops checked, with each Keras `Metric` as its (result, update op) pair
    and its variables put in LOCAL_VARIABLES and METRIC_VARIABLES (so that evaluation
    initializes them), as TF's EstimatorSpec does."""
    from tensorweave.keras.metrics import Metric
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError("eval_metric_ops must be a dict, given: {}".format(eval_metric_ops))
    for key, value in eval_metric_ops.items():
        if isinstance(value, Metric):
            if not value.updates:
                raise ValueError('Please call update_state(...) on the "{}" metric'
                                 .format(value.name))
        elif not isinstance(value, tuple) or len(value) != 2:
            raise TypeError("Values of eval_metric_ops must be (metric_value, update_op) "
                            "tuples, given: {} for key: {}".format(value, key))
    checked = {key: (value.result(), value.updates[0]) if isinstance(value, Metric) else value
               for key, value in eval_metric_ops.items()}
    for key, value in eval_metric_ops.items():
        parts = value.updates + [checked[key][0]] if isinstance(value, Metric) else value
        for part in parts:
            if part is not None and getattr(part, "graph", None) is not get_default_graph():
                raise ValueError(_NOT_DEFAULT_GRAPH.format(
                    "eval_metric_ops", "{0}: {1}".format(key, getattr(part, "name", part))))
    _add_metric_variables([v for value in eval_metric_ops.values()
                           if isinstance(value, Metric) for v in value.variables])
    return checked


def _add_metric_variables(variables: list) -> None:
    from tensorweave.framework.graph import GraphKeys, add_to_collection, get_collection
    for key in (GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES):
        present = set(map(id, get_collection(key)))
        for variable in variables:
            if id(variable) not in present:
                add_to_collection(key, variable)
                present.add(id(variable))


def _check_hooks(hooks) -> tuple:
    from tensorweave.train.session_run_hook import SessionRunHook
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError("All hooks must be SessionRunHook instances, given: {}"
                            .format(hook))
    return hooks


@tf_export("estimator.EstimatorSpec")
class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """Ops and objects returned from a `model_fn` and passed to an `Estimator`.

    Which fields are required depends on the mode: TRAIN needs `loss` and `train_op`,
    EVAL needs `loss`, PREDICT needs `predictions`. In PREDICT mode `export_outputs`
    defaults to a `PredictOutput` of the predictions under the default serving key.

    Args:
      mode: a `ModeKeys` value.
      predictions: a Tensor or dict of Tensors.
      loss: the scalar (or [1]) training loss.
      train_op: the training step (an Operation or Tensor).
      eval_metric_ops: dict of name -> (metric value, update op), e.g. from tf.metrics.
      export_outputs: dict of signature key -> `tf.estimator.export.ExportOutput`.
      training_chief_hooks, training_hooks, evaluation_hooks, prediction_hooks:
        iterables of `tf.train.SessionRunHook`.
      scaffold: a `tf.train.Scaffold`.

    Raises:
      ValueError: a field the mode needs is missing, the loss is not scalar, or a
        tensor is not in the default graph.
      TypeError: a field has the wrong type.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None,
                eval_metric_ops=None, export_outputs=None, training_chief_hooks=None,
                training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None):
        train_op = _check_train_op(train_op, mode)
        loss = _check_loss(loss, mode)
        predictions = _check_predictions(predictions, mode)
        if mode == ModeKeys.PREDICT:
            from tensorweave.estimator.export import get_export_outputs
            export_outputs = get_export_outputs(export_outputs, predictions)
        eval_metric_ops = _check_metric_ops(eval_metric_ops)
        from tensorweave.train.monitored_session import Scaffold
        scaffold = scaffold or Scaffold()
        if not isinstance(scaffold, Scaffold):
            raise TypeError("scaffold must be tf.train.Scaffold. Given: {}".format(scaffold))
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metric_ops=eval_metric_ops, export_outputs=export_outputs,
            training_chief_hooks=_check_hooks(training_chief_hooks),
            training_hooks=_check_hooks(training_hooks), scaffold=scaffold,
            evaluation_hooks=_check_hooks(evaluation_hooks),
            prediction_hooks=_check_hooks(prediction_hooks))

    def _replace(self, **kwds):
        if "mode" in kwds and kwds["mode"] != self.mode:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        return EstimatorSpec(*[kwds.pop(f, v) for f, v in zip(self._fields, self)])
