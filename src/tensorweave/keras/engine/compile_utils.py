"""What `Model.compile` builds, as TF 2.15's Keras does in graph mode (training_v1):
one training endpoint per model output (its loss function, loss weight, target
placeholder and sample-weight mode), the metrics of each output with their names, and
the total loss.

* a loss given as a name or function is wrapped in a LossFunctionWrapper with the
  'sum_over_batch_size' reduction: the per-example losses times the sample weights,
  summed, over their number; an output without a loss gets no target;
* an output with a Keras mask (`_keras_mask`) counts only its unmasked entries: the mask
  weights the loss (a mean is over the valid entries) and the metrics;
* the total loss is the sum of `loss_weight * output loss` plus the model's own losses
  (add_loss, regularizers); with several outputs each output's loss is also reported
  as '<output>_loss' (the mean over batches of the batch losses);
* 'accuracy'/'acc' and 'crossentropy'/'ce' resolve from the loss and the output shape
  to the binary (last dimension 1 or a binary crossentropy loss), sparse categorical
  (sparse categorical crossentropy loss) or categorical function, named 'acc' and 'ce'
  as v1 Keras names them; with several outputs metric names get the output name first.
"""
from __future__ import annotations

import collections
import inspect
import logging

import tensorweave as tf
from tensorweave.keras import backend, loss_classes, losses
from tensorweave.keras import metrics as metrics_module
from tensorweave.keras.engine import masking
from tensorweave.keras.engine.training_utils import check_for_unexpected_keys

_LOG = logging.getLogger("tensorweave")
_KEY_LOSS_FUNCTIONS = (losses.mean_squared_error, losses.binary_crossentropy,
                       losses.categorical_crossentropy)
_KEY_LOSS_CLASSES = (loss_classes.MeanSquaredError, loss_classes.BinaryCrossentropy,
                     loss_classes.CategoricalCrossentropy)


def _is_loss_fn(loss_fn, function, cls) -> bool:
    return isinstance(loss_fn, cls) or (
        isinstance(loss_fn, loss_classes.LossFunctionWrapper) and loss_fn.fn is function)


def is_sparse_categorical_crossentropy(loss_fn) -> bool:
    return _is_loss_fn(loss_fn, losses.sparse_categorical_crossentropy,
                       loss_classes.SparseCategoricalCrossentropy)


class Endpoint:
    """One model output in training.

    Fields:
      output, output_name: the output tensor and its name.
      loss_fn: a Loss, a callable without a name, or None (no loss: no target).
      loss_weight: the output loss's factor in the total loss.
      target: the target tensor (a placeholder '<output>_target' unless given).
      feedable: whether the target is fed (a placeholder).
      sample_weight_mode: the mode compile gave (None or 'temporal').
      output_loss_metric: the Mean reporting the output's loss (several outputs only).
      metrics, weighted_metrics: metric name -> Metric, in order.
    """

    def __init__(self, output, output_name: str, loss_fn):
        self.output = output
        self.output_name = output_name
        self.loss_fn = loss_fn
        self.loss_weight = 1.0
        self.target = None
        self.feedable = False
        self.sample_weight_mode = None
        self.output_loss_metric = None
        self.metrics = collections.OrderedDict()
        self.weighted_metrics = collections.OrderedDict()

    @property
    def skip(self) -> bool:
        return self.loss_fn is None

    def loss_name(self):
        return None if self.skip else self.output_name + "_loss"

    def create_target(self, target) -> None:
        if self.skip:
            return
        if target is not None and target.op.type not in ("Placeholder",
                                                         "PlaceholderWithDefault"):
            self.target, self.feedable = target, False
            return
        self.feedable = True
        if target is None:
            target = backend.placeholder(ndim=self.output.shape.ndims,
                                         name=self.output_name + "_target",
                                         dtype=self.output.dtype.base_dtype)
        self.target = target

    @property
    def feed_output_shape(self):
        """The shape targets must have (None when not checked)."""
        shape = backend.int_shape(self.output)
        if is_sparse_categorical_crossentropy(self.loss_fn):
            if backend.image_data_format() == "channels_first":
                return (shape[0], 1) + shape[2:]
            return shape[:-1] + (1,)
        if not isinstance(self.loss_fn, loss_classes.Loss) or (
                isinstance(self.loss_fn, loss_classes.LossFunctionWrapper) and
                getattr(losses, self.loss_fn.fn.__name__, None) is None):
            return None
        return shape


def get_loss_function(loss):
    """A Loss for `loss` (a name, function, config, or Loss); None stays None.

    Raises:
      ValueError: a Loss class not instantiated, or an unknown name.
    """
    if loss is None or isinstance(loss, loss_classes.Loss):
        return loss
    if inspect.isclass(loss) and issubclass(loss, loss_classes.Loss):
        raise ValueError("Received uninstantiated Loss class: %s\nPlease call loss classes "
                         "before passing them to Model.compile." % (loss,))
    if isinstance(loss, collections.abc.Mapping):
        loss = losses.get(loss)
    if callable(loss) and not hasattr(loss, "__name__"):
        return loss
    fn = losses.get(loss)
    return loss_classes.LossFunctionWrapper(fn, name=fn.__name__,
                                            reduction="sum_over_batch_size")


def prepare_loss_functions(loss, output_names) -> list:
    """One loss function (or None) per output.

    Raises:
      ValueError: a list of the wrong length, or a dict with unknown names.
    """
    if isinstance(loss, collections.abc.Mapping):
        check_for_unexpected_keys("loss", loss, output_names)
        functions = []
        for name in output_names:
            if name not in loss:
                _LOG.warning("Output %s missing from loss dictionary. We assume this was done "
                             "on purpose. The fit and evaluate APIs will not be expecting any "
                             "data to be passed to %s.", name, name)
            functions.append(get_loss_function(loss.get(name)))
        return functions
    if isinstance(loss, str) or not isinstance(loss, collections.abc.Sequence):
        return [get_loss_function(loss) for _ in output_names]
    if len(loss) != len(output_names):
        raise ValueError("When passing a list as loss, it should have one entry per model "
                         "outputs. The model has %d outputs, but you passed loss=%s"
                         % (len(output_names), loss))
    return [get_loss_function(x) for x in loss]


def prepare_loss_weights(endpoints, loss_weights=None) -> None:
    """Sets each endpoint's loss weight (default 1.0).

    Raises:
      ValueError: a list of the wrong length, a dict with unknown names.
      TypeError: another type.
    """
    if loss_weights is None:
        for e in endpoints:
            e.loss_weight = 1.0
    elif isinstance(loss_weights, collections.abc.Mapping):
        check_for_unexpected_keys("loss_weights", loss_weights,
                                  [e.output_name for e in endpoints])
        for e in endpoints:
            e.loss_weight = loss_weights.get(e.output_name, 1.0)
    elif isinstance(loss_weights, list):
        if len(loss_weights) != len(endpoints):
            raise ValueError("When passing a list as loss_weights, it should have one entry per "
                             "model output. The model has %d outputs, but you passed "
                             "loss_weights=%s" % (len(endpoints), loss_weights))
        for w, e in zip(loss_weights, endpoints):
            e.loss_weight = w
    else:
        raise TypeError("Could not interpret loss_weights argument: %s - expected a list of "
                        "dicts." % (loss_weights,))


def prepare_sample_weight_modes(endpoints, sample_weight_mode) -> None:
    """Sets each endpoint's sample-weight mode from compile's argument (one mode, a list,
    or a dict by output name).

    Raises:
      ValueError: a list of the wrong length, a dict missing an output or with unknown
        names.
    """
    if isinstance(sample_weight_mode, collections.abc.Mapping):
        check_for_unexpected_keys("sample_weight_mode", sample_weight_mode,
                                  [e.output_name for e in endpoints])
        for e in endpoints:
            if not e.skip:
                if e.output_name not in sample_weight_mode:
                    raise ValueError("Output %smissing from `_sample_weight_modes` dictionary"
                                     % e.output_name)
                e.sample_weight_mode = sample_weight_mode[e.output_name]
    elif isinstance(sample_weight_mode, (list, tuple)):
        if len(sample_weight_mode) != len(endpoints):
            raise ValueError("When passing a list as sample_weight_mode, it should have one "
                             "entry per model output. The model has %d outputs, but you "
                             "passed %d_sample_weight_modes." % (len(endpoints),
                                                                 len(sample_weight_mode)))
        for mode, e in zip(sample_weight_mode, endpoints):
            if not e.skip:
                e.sample_weight_mode = mode
    else:
        for e in endpoints:
            if not e.skip:
                e.sample_weight_mode = sample_weight_mode


def process_target_tensors(target_tensors, output_names) -> list:
    """One target tensor (or None) per output from compile's `target_tensors`.

    Raises:
      ValueError: a list of the wrong length, a dict with unknown names.
      TypeError: another type.
    """
    if target_tensors is None or isinstance(target_tensors, list) and not target_tensors:
        return [None for _ in output_names]
    if isinstance(target_tensors, list):
        if len(target_tensors) != len(output_names):
            raise ValueError("When passing a list as `target_tensors`, it should have one entry "
                             "per model output. The model has %d outputs, but you passed "
                             "target_tensors=%s" % (len(output_names), target_tensors))
        return list(target_tensors)
    if isinstance(target_tensors, dict):
        unknown = set(target_tensors).difference(output_names)
        if unknown:
            raise ValueError('Unknown entry in `target_tensors` dictionary: "%s". Only expected '
                             "the following keys: %s" % (unknown, output_names))
        return [target_tensors.get(name) for name in output_names]
    if isinstance(target_tensors, tf.Tensor):
        return [target_tensors]
    raise TypeError("Expected `target_tensors` to be a list or tuple or dict or a single "
                    "tensor, but got:", target_tensors)


# --- metrics ------------------------------------------------------------------------------
def get_metric_name(metric, weighted: bool = False) -> str:
    """The v1 Keras name of a compile metric: 'acc', 'ce', or the function's or Metric's
    name, prefixed 'weighted_' for weighted metrics."""
    prefix = "weighted_" if weighted else ""
    if metric in ("accuracy", "acc"):
        return prefix + "acc"
    if metric in ("crossentropy", "ce"):
        return prefix + "ce"
    fn = metrics_module.get(metric)
    return prefix + (fn.name if hasattr(fn, "name") else fn.__name__)


def get_metric_function(metric, output_shape=None, loss_fn=None):
    """The metric function or Metric of a compile metric ('accuracy' and 'crossentropy'
    resolved from the output shape and loss)."""
    if metric not in ("accuracy", "acc", "crossentropy", "ce"):
        return metrics_module.get(metric)
    binary = (output_shape is not None and output_shape[-1] == 1) or _is_loss_fn(
        loss_fn, losses.binary_crossentropy, loss_classes.BinaryCrossentropy)
    sparse = is_sparse_categorical_crossentropy(loss_fn)
    if metric in ("accuracy", "acc"):
        if binary:
            return metrics_module.binary_accuracy
        if sparse:
            return metrics_module.sparse_categorical_accuracy
        return metrics_module.categorical_accuracy
    if binary:
        return losses.binary_crossentropy
    if sparse:
        return losses.sparse_categorical_crossentropy
    return losses.categorical_crossentropy


def _to_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def collect_per_output_metric_info(metrics, output_names, output_shapes, loss_fns,
                                   is_weighted: bool = False,
                                   from_serialized: bool = False) -> list:
    """For each output, an OrderedDict metric name -> Metric (functions wrapped in a
    MeanMetricWrapper of that name). With `from_serialized` (a model file's metrics),
    the Metric objects given are marked `_from_serialized`: their names already carry
    the output's name.

    Raises:
      ValueError: a list of lists of the wrong length, a dict with unknown names.
      TypeError: metrics that are neither a list nor a dict.
    """
    if not metrics:
        return [collections.OrderedDict() for _ in output_names]
    if isinstance(metrics, list):
        if any(isinstance(m, list) for m in metrics):
            if len(metrics) != len(output_names):
                raise ValueError("When passing a list of lists as `metrics`, it should have one "
                                 "entry per model output. The model has %d outputs, but you "
                                 "passed metrics=%s" % (len(output_names), metrics))
            nested = [_to_list(m) for m in metrics]
        elif len(output_names) > 1:
            nested = [[metrics_module.clone_metric(m) for m in metrics] for _ in output_names]
        else:
            nested = [metrics]
    elif isinstance(metrics, collections.abc.Mapping):
        check_for_unexpected_keys("metrics", metrics, output_names)
        nested = [_to_list(metrics.get(name, [])) for name in output_names]
    else:
        raise TypeError("Type of `metrics` argument not understood. Expected a list or "
                        "dictionary, found: %s" % (metrics,))
    per_output = []
    for i, output_metrics in enumerate(nested):
        named = collections.OrderedDict()
        for metric in output_metrics:
            name = get_metric_name(metric, is_weighted)
            fn = get_metric_function(metric, output_shapes[i], loss_fns[i])
            if not isinstance(fn, metrics_module.Metric):
                fn = metrics_module.MeanMetricWrapper(fn, name=name)
            else:
                fn._from_serialized = from_serialized
            named[name] = fn
        per_output.append(named)
    return per_output


# --- the loss -----------------------------------------------------------------------------
def _weighted_losses(per_sample, sample_weight):
    """The per-example losses times the weights (Keras' compute_weighted_loss with no
    reduction), in the losses' dtype."""
    per_sample = tf.convert_to_tensor(per_sample)
    input_dtype = per_sample.dtype
    if not per_sample.dtype.is_floating:
        per_sample = tf.cast(per_sample, "float32")
    if sample_weight is None:
        weighted = per_sample * tf.cast(1.0, per_sample.dtype)
    else:
        weight = tf.cast(sample_weight, per_sample.dtype)
        per_sample, _, weight = metrics_module.squeeze_or_expand_dimensions(
            per_sample, sample_weight=weight)
        weighted = tf.multiply(per_sample, weight)
    return tf.cast(weighted, input_dtype)


def _reduce(weighted, reduction: str):
    if reduction == "none":
        return weighted
    total = tf.reduce_sum(weighted)
    if reduction == "sum":
        return total
    return tf.math.divide_no_nan(total, tf.cast(tf.size(weighted), total.dtype), name="value")


def _apply_valid_mask(losses, sample_weight, mask, reduction: str):
    """The weights of the per-example `losses` under the output's `mask`: zero where it
    is False, and for a mean scaled by total / valid entries, so that the mean is over
    the valid ones (Keras' `apply_valid_mask`)."""
    if mask is None:
        return sample_weight
    mask = tf.cast(mask, losses.dtype)
    if reduction in ("auto", "sum_over_batch_size"):
        mask *= tf.cast(tf.size(mask), losses.dtype) / tf.reduce_sum(mask)
    if sample_weight is None:
        return mask
    weight = tf.cast(sample_weight, mask.dtype)
    mask, _, weight = metrics_module.squeeze_or_expand_dimensions(mask, sample_weight=weight)
    return weight * mask


def _mask_and_weight(endpoint: Endpoint, sample_weight):
    """(the output's Keras mask as its dtype, or None; the sample weights, the mask when
    there are none)."""
    mask = masking.get_mask(endpoint.output)
    if mask is None:
        return None, sample_weight
    mask = tf.cast(mask, endpoint.output.dtype)
    if sample_weight is None:
        return mask, mask
    mask, _, sample_weight = metrics_module.squeeze_or_expand_dimensions(
        mask, sample_weight=sample_weight)
    return mask, sample_weight


def output_loss(endpoint: Endpoint, sample_weight):
    """The loss of one output (before its loss weight); a masked output's loss is over
    its unmasked entries, as TF's."""
    loss_fn, y_true, y_pred = endpoint.loss_fn, endpoint.target, endpoint.output
    mask, sample_weight = _mask_and_weight(endpoint, sample_weight)
    if isinstance(loss_fn, loss_classes.Loss):
        per_sample = loss_fn.call(y_true, y_pred)
        reduction = loss_fn.reduction
        reduction = "sum_over_batch_size" if reduction == "auto" else reduction
        sample_weight = _apply_valid_mask(tf.convert_to_tensor(per_sample), sample_weight,
                                          mask, reduction)
        return _reduce(_weighted_losses(per_sample, sample_weight), reduction)
    return loss_fn(y_true, y_pred, sample_weight=sample_weight)


def total_loss(model, endpoints, sample_weights) -> tuple:
    """(the total loss, [the output-loss metric results]) for one choice of sample
    weights (a tensor or None per endpoint).

    Raises:
      ValueError: no output has a loss and the model has no losses of its own.
    """
    loss_list, loss_metric_results = [], []
    with tf.name_scope("loss"):
        for endpoint, sample_weight in zip(endpoints, sample_weights):
            if endpoint.skip:
                continue
            with tf.name_scope(endpoint.loss_name()):
                loss = output_loss(endpoint, sample_weight)
            if endpoint.output_loss_metric is not None:
                loss_metric_results.append(endpoint.output_loss_metric(loss))
            loss_list.append(endpoint.loss_weight * loss)
        custom_losses = model.get_losses_for(None) + model.get_losses_for(model.inputs)
        if not loss_list and not custom_losses:
            raise ValueError("The model cannot be compiled because it has no loss to optimize.")
        if custom_losses:
            dtype = _common_dtype(custom_losses)
            loss_list.append(tf.add_n([tf.cast(x, dtype) for x in custom_losses]))
        dtype = _common_dtype(loss_list)
        total = tf.add_n([tf.cast(x, dtype) for x in loss_list])
    return total, loss_metric_results


def _common_dtype(tensors):
    dtypes = [tf.convert_to_tensor(t).dtype.base_dtype for t in tensors]
    floats = [d for d in dtypes if d.is_floating]
    if not floats:
        return backend.floatx()
    return max(floats, key=lambda d: d.size)


def metric_results(endpoints, sample_weights=None, weighted: bool = False) -> dict:
    """id(metric) -> the result of each endpoint metric (unweighted, or weighted by
    `sample_weights`) called on the endpoint's target and output."""
    results = {}
    with tf.name_scope("metrics"):
        for i, endpoint in enumerate(endpoints):
            if endpoint.skip:
                continue
            table = endpoint.weighted_metrics if weighted else endpoint.metrics
            weight = sample_weights[i] if weighted and sample_weights else None
            mask, weight = _mask_and_weight(endpoint, weight)
            if mask is not None and weight is not mask:
                weight = tf.cast(weight, mask.dtype) * mask  # the mask weights metrics too
            for name, metric in table.items():
                with tf.name_scope(name):
                    results[id(metric)] = metric(endpoint.target, endpoint.output,
                                                 sample_weight=weight)
    return results
