"""tf.estimator.tpu.TPUEstimator and TPUEstimatorSpec on the path TPU programs take
without a TPU: `TPUEstimator(use_tpu=False)` (tensorflow-estimator's tpu_estimator.py).

TPUEstimator is an Estimator whose model_fn is wrapped (as TF wraps it):

  * input_fn must take `params`; it gets `params["batch_size"]`, the global batch size
    of the mode (train_batch_size, eval_batch_size or predict_batch_size; absent when
    that one is None). model_fn must take `params` too; it gets the same batch size
    and `params["use_tpu"] = False`. For export_saved_model (model_fn called without an
    input_fn before it) there is no batch size, only `use_tpu`.
  * a returned TPUEstimatorSpec becomes an EstimatorSpec (`as_estimator_spec`):
    `eval_metrics = (metric_fn, tensors)` calls metric_fn with the tensors (positional
    for a list, by name for a dict), `scaffold_fn()` gives the Scaffold, `host_call`'s
    result is fetched on every train, eval and predict step by a hook.
  * the Estimator's loss logging and step counter are replaced by ExamplesPerSecondHook
    every ceil(log_step_count_steps / iterations_per_loop) steps (model_fn's `config`
    shows log_step_count_steps=None, as TF's does).

tensorweave has no TPU: use_tpu=True raises a RuntimeError naming the missing TPU where
TensorFlow fails to find TPU cores (when train, evaluate with eval_on_tpu, or predict
calls the input_fn); evaluation with eval_on_tpu=False and export run on CPU as in TF.
export_saved_model writes the CPU metagraph only (TF adds a ["serve", "tpu"] one that
needs TPU ops). EmbeddingConfigSpec (TPU embedding) is not provided.
"""
from __future__ import annotations

import collections
import copy
import enum
import inspect
import math
from typing import Optional

from tensorweave.estimator import estimator as _estimator
from tensorweave.estimator import model_fn as _model_fn_lib
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.tpu_config import InputPipelineConfig, RunConfig, \
    check_positive_integer, parse_iterations_per_loop
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import tf_logging as logging
from tensorweave.train.basic_session_run_hooks import StepCounterHook
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook

_BATCH_SIZE_KEY = "batch_size"
_CTX_KEY = "context"
_USE_TPU_KEY = "use_tpu"
# TF reserves only these two: models already read params["use_tpu"] themselves
_RESERVED_PARAMS_KEYS = [_BATCH_SIZE_KEY, _CTX_KEY]

_NO_TPU = (
    "TPUEstimator(use_tpu=True) cannot {what}: tensorweave has no TPU support, so there "
    "are no TPU cores to run on (TensorFlow raises 'Cannot find any TPU cores in the "
    "system' here). Construct the TPUEstimator with use_tpu=False to run the same "
    "model_fn on CPU/GPU{hint}.")
_WHAT = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate", ModeKeys.PREDICT: "predict"}


# --- TPUEstimatorSpec ------------------------------------------------------------------
def _validate_host_calls(host_calls: dict) -> None:
    """Checks `eval_metrics` and `host_call`: (fn, list/tuple/dict of tensors), a list
    as long as fn's arguments unless fn takes *args."""
    for name, host_call in host_calls.items():
        if not isinstance(host_call, (tuple, list)):
            raise ValueError("{} should be tuple or list".format(name))
        if len(host_call) != 2:
            raise ValueError("{} should have two elements.".format(name))
        fn, tensors = host_call
        if not callable(fn):
            raise TypeError("{}[0] should be callable.".format(name))
        if not isinstance(tensors, (tuple, list, dict)):
            raise ValueError("{}[1] should be tuple or list, or dict.".format(name))
        if isinstance(tensors, (tuple, list)):
            args = _model_fn_lib.fn_args(fn)
            if not _takes_varargs(fn) and len(tensors) != len(args):
                raise RuntimeError(
                    "In TPUEstimatorSpec.{}, length of tensors {} does not match method "
                    "args of the function, which takes {}.".format(name, len(tensors),
                                                                   len(args)))


def _takes_varargs(fn) -> bool:
    return any(p.kind == inspect.Parameter.VAR_POSITIONAL
               for p in inspect.signature(fn).parameters.values())


def _call_host_calls(host_calls: dict) -> dict:
    """name -> fn(*tensors) or fn(**tensors): the host calls run on the CPU, as TF
    does when use_tpu=False."""
    _validate_host_calls(host_calls)
    results = {}
    for name, (fn, tensors) in host_calls.items():
        if isinstance(tensors, (tuple, list)):
            results[name] = fn(*tensors)
            continue
        try:
            results[name] = fn(**tensors)
        except TypeError as e:
            logging.warning("Exception while calling %s: %s. It is likely the tensors "
                            "(%s[1]) do not match the function's arguments", name, e, name)
            raise
    return results


class _OutfeedHostCallHook(SessionRunHook):
    """Fetches what a host_call returned on every step (TF's hook for use_tpu=False).

    TF's hook also initializes and flushes the TF2 summary writers (`tf.summary`
    v2) a host_call uses; tensorweave has no such writers, so there is nothing to do.
    """

    def __init__(self, tensors):
        self._tensors = tensors

    def before_run(self, run_context):
        if self._tensors is None:
            return None
        return SessionRunArgs(self._tensors)


_SPEC_FIELDS = ["mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs",
                "scaffold_fn", "host_call", "training_hooks", "evaluation_hooks",
                "prediction_hooks"]


@tf_export("estimator.tpu.TPUEstimatorSpec")
class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _SPEC_FIELDS)):
    """Ops and objects returned from a `model_fn` and passed to `TPUEstimator`.

    See `tf.estimator.EstimatorSpec` for `mode`, `predictions`, `loss`, `train_op`,
    `export_outputs` and the hooks (checked the same way).

    Args:
      eval_metrics: `(metric_fn, tensors)`; `tensors` a list (passed positionally) or
        a dict (passed by name); metric_fn returns a dict of name -> (value, update_op).
      scaffold_fn: a function of no arguments returning a `tf.train.Scaffold` (or None);
        called when the spec becomes an EstimatorSpec, after model_fn's variables
        exist, so it may call `tf.train.init_from_checkpoint`.
      host_call: `(fn, tensors)` like eval_metrics; fn's result is run on every step.

    Raises:
      ValueError, TypeError, RuntimeError: malformed eval_metrics or host_call (TF's
        classes and messages), or what EstimatorSpec rejects.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        _validate_host_calls(_host_calls_of(eval_metrics, host_call))
        training_hooks = _model_fn_lib._check_hooks(training_hooks)
        evaluation_hooks = _model_fn_lib._check_hooks(evaluation_hooks)
        prediction_hooks = _model_fn_lib._check_hooks(prediction_hooks)
        train_op = _model_fn_lib._check_train_op(train_op, mode)
        loss = _model_fn_lib._check_loss(loss, mode)
        predictions = _model_fn_lib._check_predictions(predictions, mode)
        if mode == ModeKeys.PREDICT:
            from tensorweave.estimator.export import get_export_outputs
            export_outputs = get_export_outputs(export_outputs, predictions)
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metrics=eval_metrics, export_outputs=export_outputs,
            scaffold_fn=scaffold_fn, host_call=host_call, training_hooks=training_hooks,
            evaluation_hooks=evaluation_hooks, prediction_hooks=prediction_hooks)

    def as_estimator_spec(self) -> _model_fn_lib.EstimatorSpec:
        """The equivalent `tf.estimator.EstimatorSpec` for CPU/GPU: metric_fn's metrics
        as eval_metric_ops, scaffold_fn's Scaffold, and host_call's result fetched on
        every step by a hook added to all three hook lists.

        Returns:
          An EstimatorSpec.
        """
        results = _call_host_calls(_host_calls_of(self.eval_metrics, self.host_call))
        hooks = ()
        if self.host_call is not None:
            hooks = (_OutfeedHostCallHook(results["host_call"]),)
        scaffold = self.scaffold_fn() if self.scaffold_fn else None
        return _model_fn_lib.EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss,
            train_op=self.train_op, eval_metric_ops=results.get("eval_metrics"),
            export_outputs=self.export_outputs, scaffold=scaffold,
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks)


def _host_calls_of(eval_metrics, host_call) -> dict:
    # eval_metrics first: TF calls metric_fn before the host_call
    calls = {}
    if eval_metrics is not None:
        calls["eval_metrics"] = eval_metrics
    if host_call is not None:
        calls["host_call"] = host_call
    return calls


# --- hooks -------------------------------------------------------------------------------
class ExamplesPerSecondHook(StepCounterHook):
    """Logs and writes as summaries global_step/sec and examples/sec (the global step
    rate times the batch size) every N steps or seconds.

    Args:
      batch_size: the global batch size (None: global_step/sec only).
      every_n_steps, every_n_secs: the cadence (exactly one of them).
      output_dir: where the summaries go (None with no summary_writer: nowhere).
      summary_writer: a FileWriter to use instead of output_dir's.
    """

    def __init__(self, batch_size: Optional[int], every_n_steps: Optional[int] = 100,
                 every_n_secs: Optional[float] = None, output_dir: Optional[str] = None,
                 summary_writer=None):
        self._batch_size = batch_size
        super().__init__(every_n_steps=every_n_steps, every_n_secs=every_n_secs,
                         output_dir=output_dir, summary_writer=summary_writer)

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step) -> None:
        rates = {"global_step/sec": elapsed_steps / elapsed_time}
        # TF multiplies by a None batch size (train_batch_size=None, use_tpu=False) and
        # fails on the first log; without a batch size there is no examples rate
        if self._batch_size is not None:
            rates["examples/sec"] = self._batch_size * rates["global_step/sec"]
        if self._summary_writer is not None:
            from tensorboard.compat.proto import summary_pb2
            for tag, rate in rates.items():
                summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
                    tag=tag, simple_value=rate)])
                self._summary_writer.add_summary(summary, global_step)
        for tag, rate in rates.items():
            logging.info("%s: %g", tag, rate)


class ExportSavedModelApiVersion(enum.Enum):
    """How export_saved_model builds a TPU metagraph (only checked here: there is none)."""

    V1 = 1
    V2 = 2


def _add_item_to_params(params, key: str, value) -> None:
    """params[key] = value, for a dict or an HParams-like object."""
    if hasattr(params, "set_hparam"):
        if key in params:
            params.set_hparam(key, value)
        else:
            params.add_hparam(key, value)
    else:
        params[key] = value


# --- TPUEstimator ------------------------------------------------------------------------
@tf_export("estimator.tpu.TPUEstimator")
class TPUEstimator(_estimator.Estimator):
    """An Estimator for model_fns written for TPUs, run here on CPU/GPU (use_tpu=False).

    Args:
      model_fn: `model_fn(features, labels, mode, params[, config])` returning a
        `TPUEstimatorSpec` or an `EstimatorSpec`; it must take `params`.
      model_dir: as for Estimator.
      config: a `tf.estimator.tpu.RunConfig` (required).
      params: a dict of hyperparameters; "batch_size" and "context" are reserved.
      use_tpu: must be False to train, evaluate (unless eval_on_tpu=False) or predict:
        tensorweave has no TPU.
      train_batch_size, eval_batch_size, predict_batch_size: the global batch size of
        each mode, given to input_fn and model_fn as params["batch_size"].
      batch_axis: how a TPU shards the inputs; unused without a TPU.
      eval_on_tpu: False evaluates on CPU even with use_tpu=True.
      export_to_tpu: TF adds a ["serve", "tpu"] metagraph; tensorweave cannot build it
        and exports the CPU metagraph only (with a warning).
      export_to_cpu: must be True (the CPU metagraph is the one tensorweave exports).
      warm_start_from: as for Estimator.
      embedding_config_spec: TPU embedding; must be None (not supported).
      export_saved_model_api_version: 1, 2 or an `ExportSavedModelApiVersion`.

    Raises:
      ValueError: config not a tpu RunConfig, reserved params keys, an
        embedding_config_spec, a bad export_saved_model_api_version, or (use_tpu=True)
        a missing or non-positive train_batch_size.
      TypeError: model_fn is not callable, or (use_tpu=True) a batch size is not an
        int.
    """

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None,
                 use_tpu: bool = True, train_batch_size: Optional[int] = None,
                 eval_batch_size: Optional[int] = None,
                 predict_batch_size: Optional[int] = None, batch_axis=None,
                 eval_on_tpu: bool = True, export_to_tpu: bool = True,
                 export_to_cpu: bool = True, warm_start_from=None,
                 embedding_config_spec=None,
                 export_saved_model_api_version=ExportSavedModelApiVersion.V1):
        if config is None or not isinstance(config, RunConfig):
            raise ValueError("`config` must be provided with type `tpu_config.RunConfig`")
        if params is not None and any(k in params for k in _RESERVED_PARAMS_KEYS):
            raise ValueError("{} are reserved keys but existed in params {}.".format(
                _RESERVED_PARAMS_KEYS, params))
        if use_tpu:
            # TF checks these at construction; the missing TPU shows when a mode runs
            if train_batch_size is None:
                raise ValueError("`train_batch_size` cannot be `None`")
            check_positive_integer(train_batch_size, "train_batch_size")
            if eval_batch_size is not None:
                check_positive_integer(eval_batch_size, "eval_batch_size")
            if predict_batch_size is not None:
                check_positive_integer(predict_batch_size, "predict_batch_size")
        if embedding_config_spec is not None:
            raise ValueError(
                "TPUEstimator(embedding_config_spec=...) is not supported: tensorweave has "
                "no TPU embedding (tf.tpu.experimental.embedding_column). Use "
                "tf.feature_column.embedding_column or tf.nn.embedding_lookup in model_fn.")
        if not callable(model_fn):
            # TF fails reading the arguments of a non-callable: a TypeError
            raise TypeError("model_fn must be a callable, given: {}".format(model_fn))
        _estimator._verify_model_fn_args(model_fn, params)
        self._user_model_fn = model_fn
        # TPUEstimator logs with its own hook (ExamplesPerSecondHook): the Estimator's
        # loss logging and step counter are turned off, as TF turns them off
        self._log_every_n_steps = config.log_step_count_steps
        config = config.replace(log_step_count_steps=None)
        super().__init__(model_fn=self._augmented_model_fn, model_dir=model_dir,
                         config=config, params=params or {},
                         warm_start_from=warm_start_from)
        iterations = parse_iterations_per_loop(self._config.tpu_config.iterations_per_loop)
        self._iterations_per_training_loop = iterations
        self._log_every_n_secs = None
        if iterations.unit == "seconds":
            self._log_every_n_secs, self._log_every_n_steps = iterations.value, None
        elif self._log_every_n_steps is not None:
            # on a TPU one Session.run is iterations_per_loop steps, so TF logs every
            # ceil(N / iterations_per_loop) runs; it keeps that cadence without a TPU
            self._log_every_n_steps = int(math.ceil(
                float(self._log_every_n_steps) / iterations.value))
        if not use_tpu and eval_on_tpu:
            logging.warning("eval_on_tpu ignored because use_tpu is False.")
        if config.tpu_config.num_shards == 1 and config.tpu_config.num_cores_per_replica \
                is None:
            logging.warning("Setting TPUConfig.num_shards==1 is an unsupported behavior. "
                            "Please fix as soon as possible (leaving num_shards as None.)")
        self._use_tpu = use_tpu
        self._eval_on_tpu = eval_on_tpu
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size,
                             ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        self._export_to_cpu = export_to_cpu
        self._export_to_tpu = export_to_tpu
        if not (isinstance(export_saved_model_api_version, ExportSavedModelApiVersion)
                or export_saved_model_api_version in (1, 2)):
            raise ValueError("export_saved_model_api_version should be 1 or 2; got {}."
                             .format(export_saved_model_api_version))
        self._export_saved_model_api_version = export_saved_model_api_version
        # set when an input_fn is called: model_fn called without one is an export
        self._is_input_fn_invoked = None

    def _check_runs_on_cpu(self, mode, is_export_mode: bool = False) -> None:
        """Raises unless `mode` runs on CPU/GPU (where TF would look for TPU cores)."""
        if not self._use_tpu or is_export_mode:
            return
        if mode == ModeKeys.EVAL and not self._eval_on_tpu:
            logging.info("_is_running_on_cpu: eval_on_tpu disabled")
            return
        hint = ", or eval_on_tpu=False to evaluate on CPU" if mode == ModeKeys.EVAL else ""
        raise RuntimeError(_NO_TPU.format(what=_WHAT.get(mode, mode), hint=hint))

    # --- input_fn and model_fn -------------------------------------------------------
    def _call_input_fn(self, input_fn, mode):
        args = _model_fn_lib.fn_args(input_fn)
        if "params" not in args:
            raise ValueError("input_fn ({}) does not include params argument, required by "
                             "TPUEstimator to pass batch size as params[\"batch_size\"]"
                             .format(input_fn))
        kwargs = {"params": self.params}
        if "config" in args:
            kwargs["config"] = self.config
        if "mode" in args:
            kwargs["mode"] = mode
        if "input_context" in args:
            kwargs["input_context"] = None
        self._is_input_fn_invoked = True
        self._check_runs_on_cpu(mode)
        eval_input = self._config.tpu_config.eval_training_input_configuration
        if mode != ModeKeys.TRAIN and eval_input == InputPipelineConfig.SLICED:
            raise ValueError("Invalid TPUConfig `eval_training_input_configuration` value. "
                             "SLICED mode only works on use_tpu = True.")
        # the global batch size: without a TPU there are no shards to divide it among
        batch_size = self._batch_sizes.get(mode)
        if batch_size is not None:
            _add_item_to_params(kwargs["params"], _BATCH_SIZE_KEY, batch_size)
        with _estimator._device_scope("/device:CPU:0"):
            return input_fn(**kwargs)

    def _augmented_model_fn(self, features, labels, mode, config, params):
        """The model_fn the Estimator calls: the user's, with params["batch_size"] and
        params["use_tpu"], its TPUEstimatorSpec made an EstimatorSpec, and the
        examples/sec hook added."""
        is_export_mode = not self._is_input_fn_invoked
        self._is_input_fn_invoked = None
        self._check_runs_on_cpu(mode, is_export_mode)
        logging.info("Running %s on CPU/GPU", mode)
        spec = self._call_user_model_fn(features, labels, mode, config, params,
                                        is_export_mode)
        if self._log_every_n_steps is not None or self._log_every_n_secs is not None:
            examples_hook = ExamplesPerSecondHook(
                self._batch_sizes.get(mode),
                output_dir=self.model_dir if not config or config.save_summary_steps
                else None,
                every_n_steps=self._log_every_n_steps, every_n_secs=self._log_every_n_secs)
            spec = spec._replace(training_hooks=spec.training_hooks + (examples_hook,))
        return spec

    def _call_user_model_fn(self, features, labels, mode, config, params, is_export_mode):
        """The user's model_fn called with what it names, `params` holding the batch
        size of `mode` (not for an export) and use_tpu=False; a TPUEstimatorSpec it
        returns made an EstimatorSpec."""
        args = _model_fn_lib.fn_args(self._user_model_fn)
        # copies: a model_fn that changes its config or params changes nothing else
        config, params = copy.deepcopy(config), copy.deepcopy(params)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "config" in args:
            kwargs["config"] = config
        if "params" not in args:
            raise ValueError("model_fn ({}) does not include params argument, required by "
                             "TPUEstimator to pass batch size as params['batch_size']"
                             .format(self._user_model_fn))
        kwargs["params"] = params
        batch_size = None if is_export_mode else self._batch_sizes.get(mode)
        if batch_size is not None:
            _add_item_to_params(params, _BATCH_SIZE_KEY, batch_size)
        _add_item_to_params(params, _USE_TPU_KEY, False)
        spec = self._user_model_fn(features=features, **kwargs)
        if isinstance(spec, TPUEstimatorSpec):
            return spec.as_estimator_spec()
        return spec

    # --- export --------------------------------------------------------------------------
    def _export_all(self, export_dir_base, receiver_fn_map, assets_extra, as_text,
                    checkpoint_path, strip_default_attrs) -> bytes:
        if not self._export_to_cpu and not self._export_to_tpu:
            raise ValueError("One of export_to_cpu and export_to_tpu must be true.")
        if not self._export_to_cpu:
            raise ValueError(
                "TPUEstimator(export_to_cpu=False) exports only the TPU metagraph (tags "
                "['serve', 'tpu']), which tensorweave cannot build: it has no TPU. Pass "
                "export_to_cpu=True to export the CPU metagraph.")
        if self._export_to_tpu:
            logging.warning(
                "TPUEstimator exports only the CPU metagraph (tags ['serve']): the TPU "
                "metagraph (tags ['serve', 'tpu']) that TensorFlow adds for "
                "export_to_tpu=True needs TPU ops, which tensorweave does not have. Pass "
                "export_to_tpu=False to silence this warning.")
        return super()._export_all(export_dir_base, receiver_fn_map, assets_extra, as_text,
                                   checkpoint_path, strip_default_attrs)
