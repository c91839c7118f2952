"""tf.estimator.add_metrics: an Estimator like a given one whose evaluation also reports
the metrics of a `metric_fn` (TF's estimator/extenders.py).

The new Estimator shares the model directory, config and warm start of the given one
and calls its model_fn; only in EVAL mode is `metric_fn` called, and its metrics are
merged over the model_fn's `eval_metric_ops` (a name in both takes metric_fn's).
"""
from __future__ import annotations

from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import fn_args
from tensorweave.framework.api_export import tf_export

# the arguments metric_fn may take, each passed by name
_METRIC_FN_ARGS = ("features", "labels", "predictions", "config")


@tf_export("estimator.add_metrics")
def add_metrics(estimator: Estimator, metric_fn) -> Estimator:
    """A new `tf.estimator.Estimator` whose evaluation adds the metrics of `metric_fn`.

    Args:
      estimator: the `tf.estimator.Estimator` to extend.
      metric_fn: a function of any of `features`, `labels`, `predictions` (those of
        the estimator's model_fn) and `config` (the estimator's RunConfig), by name,
        returning a dict name -> `(metric_tensor, update_op)` (what `tf.metrics.*`
        return). These override the model_fn's metrics of the same names.

    Returns:
      An Estimator over the same model_dir, config and warm start settings.

    Raises:
      ValueError: metric_fn has an argument other than the four above.
    """
    unexpected = [a for a in fn_args(metric_fn) if a not in _METRIC_FN_ARGS]
    if unexpected:
        raise ValueError("metric_fn (%s) has following not expected args: %s"
                         % (metric_fn, unexpected))
    base_model_fn = estimator.model_fn

    def model_fn_with_metrics(features, labels, mode, config):
        spec = base_model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        metrics = dict(spec.eval_metric_ops or {})
        metrics.update(_call_metric_fn(metric_fn, features, labels, spec.predictions,
                                       config))
        return spec._replace(eval_metric_ops=metrics)

    return Estimator(model_fn=model_fn_with_metrics, model_dir=estimator.model_dir,
                     config=estimator.config,
                     warm_start_from=estimator._warm_start_settings)


def _call_metric_fn(metric_fn, features, labels, predictions, config) -> dict:
    """metric_fn called with those of the four values it names."""
    available = {"features": features, "labels": labels, "predictions": predictions,
                 "config": config}
    wanted = fn_args(metric_fn)
    return metric_fn(**{k: v for k, v in available.items() if k in wanted})
