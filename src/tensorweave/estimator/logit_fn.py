"""tf.estimator.experimental.call_logit_fn: calls a logit_fn (as the canned
estimators' `*_logit_fn_builder` return) with the arguments it names (TF keeps it in
estimator/model_fn.py)."""
from __future__ import annotations

from tensorweave.estimator.model_fn import fn_args
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor


@tf_export("estimator.experimental.call_logit_fn")
def call_logit_fn(logit_fn, features, mode, params, config):
    """Calls `logit_fn(features=features, ...)`, also passing `mode`, `params` and
    `config` where logit_fn takes an argument of that name.

    Args:
      logit_fn: a function of `features` and any of `mode`, `params`, `config`.
      features: the features dict.
      mode: a `tf.estimator.ModeKeys` value.
      params: the hyperparameter dict.
      config: a `tf.estimator.RunConfig`.

    Returns:
      What logit_fn returned: a Tensor of logits, or a dict string -> Tensor.

    Raises:
      ValueError: logit_fn returned something else.
    """
    wanted = fn_args(logit_fn)
    optional = {"mode": mode, "params": params, "config": config}
    logits = logit_fn(features=features,
                      **{k: v for k, v in optional.items() if k in wanted})
    is_tensor_dict = isinstance(logits, dict) and all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in logits.items())
    if not (is_tensor_dict or isinstance(logits, Tensor)):
        raise ValueError("logit_fn should return a Tensor or a dictionary mapping strings "
                         "to Tensors.  logit_fn returned: %s" % (logits,))
    return logits
