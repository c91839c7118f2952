"""tf.estimator: TF1's high-level training API (graph mode), built on MonitoredSession.

  mode_keys.py       ModeKeys
  model_fn.py        EstimatorSpec (what a model_fn returns, checked as TF checks it)
  run_config.py      RunConfig (with the cluster read from TF_CONFIG)
  estimator.py       Estimator: train, evaluate, predict, export_saved_model
  saved_model_export.py  how an Estimator writes the SavedModel of each mode
  training.py        TrainSpec, EvalSpec, train_and_evaluate
  export.py          tf.estimator.export: serving receivers, ExportOutputs, signature helpers;
                     experimental.build_raw_supervised_input_receiver_fn
  exporter.py        Exporter, LatestExporter, FinalExporter, BestExporter
  inputs.py          tf.estimator.inputs: numpy_input_fn, pandas_input_fn (queue-fed)
  evaluation.py      the evaluation loop: eval step, StopAfterNEvalsHook, eval summaries
  extenders.py       add_metrics: an Estimator whose evaluation adds a metric_fn's metrics
  early_stopping.py  experimental.stop_if_*_hook, make_early_stopping_hook: stop
                     training on the eval results in eval_dir()
  hooks.py           experimental.InMemoryEvaluatorHook, make_stop_at_checkpoint_step_hook
  logit_fn.py        experimental.call_logit_fn
  tpu_config.py      tpu.InputPipelineConfig, tpu.TPUConfig, tpu.RunConfig
  tpu_estimator.py   tpu.TPUEstimator, tpu.TPUEstimatorSpec: TPU programs run without a
                     TPU (use_tpu=False)
  canned/            the canned estimators: Linear, DNN, DNNLinearCombined, Baseline

Imported on first access of `tf.estimator` (tensorweave/__init__.py), so `import
tensorweave` does not pay for it. The public names are also bound here, so that
`from tensorweave.estimator import Estimator` works before that access.
"""
import sys as _sys

from tensorweave.estimator import mode_keys  # noqa: F401
from tensorweave.estimator import model_fn  # noqa: F401
from tensorweave.estimator import run_config  # noqa: F401
from tensorweave.estimator import estimator  # noqa: F401
from tensorweave.estimator import training  # noqa: F401
from tensorweave.estimator import export  # noqa: F401
from tensorweave.estimator import exporter  # noqa: F401
from tensorweave.estimator import inputs  # noqa: F401
from tensorweave.estimator import canned  # noqa: F401
from tensorweave.estimator import extenders  # noqa: F401
from tensorweave.estimator import early_stopping  # noqa: F401
from tensorweave.estimator import hooks  # noqa: F401
from tensorweave.estimator import logit_fn  # noqa: F401
from tensorweave.estimator import tpu_config  # noqa: F401
from tensorweave.estimator import tpu_estimator  # noqa: F401
from tensorweave.framework import api_export as _api

# the names are offered to `from tensorweave.estimator import ...` before `tf.estimator`
# is touched
_api.install_namespace(_sys.modules[__name__], "estimator")
