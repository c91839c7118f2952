"""`tf.keras.metrics`: the confusion-matrix metrics as TF 2.15's Keras has them in graph
mode: the counts (TruePositives, ...), Precision and Recall, the metrics at a fixed
sensitivity, specificity, precision or recall, AUC, and the IoU metrics (IoU, BinaryIoU,
OneHotIoU, MeanIoU, OneHotMeanIoU).

Each keeps weighted confusion counts in variables with one entry per threshold
('true_positives', ... of shape [thresholds], or [thresholds, labels] for a multi-label
AUC). A prediction counts as positive at a threshold when it is strictly above it; labels
are positive where non-zero. When the thresholds are evenly spread over [0, 1] (AUC's
default ones), a batch is counted as Keras counts it then: predictions clipped to [0, 1],
one bucket per threshold, and a reversed cumulative sum. As in Keras 2.15, predictions
outside [0, 1] are not checked.
"""
from __future__ import annotations

import enum
from typing import Dict, Optional, Sequence, Union

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, metrics
from tensorweave.keras.metrics import Metric, squeeze_or_expand_dimensions
from tensorweave.layers.base import to_snake_case
from tensorweave.losses.weights_broadcast import broadcast_weights

NEG_INF = -1e10  # the threshold of top_k metrics: every kept prediction is above it

_VARIABLE_NAMES = {"tp": "true_positives", "tn": "true_negatives",  # Keras' order
                   "fp": "false_positives", "fn": "false_negatives"}
Thresholds = Union[None, float, Sequence[float]]


# --- counting -----------------------------------------------------------------------------
def _parse_thresholds(thresholds: Thresholds, default: float) -> list:
    """The thresholds as a list (`[default]` for None).

    Raises:
      ValueError: a threshold outside [0, 1].
    """
    if thresholds is None:
        return [default]
    thresholds = list(thresholds) if isinstance(thresholds, (list, tuple)) else [thresholds]
    invalid = [t for t in thresholds if t is None or t < 0 or t > 1]
    if invalid:
        raise ValueError("Threshold values must be in [0, 1]. Received: %s" % (invalid,))
    return thresholds


def _evenly_distributed(thresholds) -> bool:
    """Whether the thresholds are 0, 1/(n-1), ..., 1 for n >= 3 (to Keras' epsilon)."""
    n = len(thresholds)
    return n >= 3 and np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1),
                                  atol=backend.epsilon())


def _filter_top_k(x, k: int):
    """`x` with all but the `k` largest values of its last axis set to NEG_INF."""
    _, indices = tf.math.top_k(x, k, sorted=False)
    # (in x's dtype: Keras 2.15 makes a float32 mask, a TypeError for float64 metrics)
    mask = tf.reduce_sum(tf.one_hot(indices, tf.shape(x)[-1], axis=-1, dtype=x.dtype),
                         axis=-2)
    return x * mask + NEG_INF * (1 - mask)


def _threshold_counts(is_true, y_pred, weights, thresholds, keys) -> Dict[str, object]:
    """The [T, L] counts of `keys` by comparing every prediction with every threshold."""
    thresholds = tf.constant(np.reshape(thresholds, [-1, 1, 1]), y_pred.dtype)
    pred_pos = tf.expand_dims(y_pred, 0) > thresholds  # [T, M, L]
    label_pos = tf.expand_dims(tf.cast(is_true, tf.bool), 0)
    conditions = {"tp": (label_pos, pred_pos), "fp": (tf.logical_not(label_pos), pred_pos),
                  "fn": (label_pos, tf.logical_not(pred_pos)),
                  "tn": (tf.logical_not(label_pos), tf.logical_not(pred_pos))}
    counts = {}
    for key in keys:
        hits = tf.cast(tf.logical_and(*conditions[key]), y_pred.dtype)
        if weights is not None:
            hits = hits * weights
        counts[key] = tf.reduce_sum(hits, 1)
    return counts


def _bucket_counts(is_true, y_pred, weights, thresholds) -> Dict[str, object]:
    """The [T, L] counts for evenly spread thresholds: each prediction falls in the bucket
    of the largest threshold below it (-1 below all), and a threshold's positives are
    those of its bucket and all above."""
    num_thresholds, num_labels = len(thresholds), is_true.shape.as_list()[1]
    is_true = tf.cast(tf.cast(is_true, tf.bool), y_pred.dtype)
    weights = 1.0 if weights is None else weights
    true_labels, false_labels = is_true * weights, (1.0 - is_true) * weights
    y_pred = tf.clip_by_value(y_pred, 0.0, 1.0)
    buckets = tf.math.ceil(y_pred * float(num_thresholds - 1)) - 1
    if thresholds[0] < 0 or thresholds[-1] > 1:  # endpoints with an epsilon: all are above
        buckets = tf.nn.relu(buckets)
    # one segment per (label, bucket + 1); segment 0 of a label (bucket -1) is dropped
    segments = tf.cast(buckets, tf.int32) + 1 + (num_thresholds + 1) * tf.range(num_labels)
    segments = tf.reshape(segments, [-1])

    def at_or_above(labels):
        sums = tf.math.unsorted_segment_sum(tf.reshape(labels, [-1]), segments,
                                            (num_thresholds + 1) * num_labels)
        sums = tf.reshape(sums, [num_labels, num_thresholds + 1])[:, 1:]
        return tf.transpose(tf.math.cumsum(sums, axis=1, reverse=True))

    tp, fp = at_or_above(true_labels), at_or_above(false_labels)
    return {"tp": tp, "fp": fp, "fn": tf.reduce_sum(true_labels, 0) - tp,
            "tn": tf.reduce_sum(false_labels, 0) - fp}


def update_confusion_matrix_variables(variables: dict, y_true, y_pred, thresholds,
                                      top_k: Optional[int] = None,
                                      class_id: Optional[int] = None, sample_weight=None,
                                      multi_label: bool = False, label_weights=None,
                                      thresholds_distributed_evenly: bool = False):
    """The op adding one batch's weighted confusion counts to `variables`.

    Args:
      variables: 'tp', 'fp', 'tn', 'fn' (some of them) -> a variable of shape [T] (or
        [T, labels] with `multi_label`).
      y_true: labels, positive where non-zero, of `y_pred`'s shape.
      y_pred: predictions, usually in [0, 1].
      thresholds: the T thresholds (a list of floats).
      top_k: only the top_k predictions of the last axis may be positive.
      class_id: counts only this index of the last axis.
      sample_weight: None, or weights broadcastable to the labels.
      multi_label: count each column of rank-2 data on its own.
      label_weights: a weight per column of flattened (not multi-label) data.
      thresholds_distributed_evenly: count by buckets (the thresholds are 0, ..., 1).

    Returns:
      The grouped assign_add ops.

    Raises:
      ValueError: labels and predictions of incompatible shapes.
    """
    dtype = next(iter(variables.values())).dtype.base_dtype
    y_true, y_pred = tf.cast(y_true, dtype), tf.cast(y_pred, dtype)
    if sample_weight is not None:
        sample_weight = tf.cast(sample_weight, dtype)
    y_pred, y_true, sample_weight = squeeze_or_expand_dimensions(y_pred, y_true,
                                                                 sample_weight)
    y_pred.shape.assert_is_compatible_with(y_true.shape)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:  # keep the axis, to match the sample weights
        y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
    weights = None if sample_weight is None else broadcast_weights(sample_weight, y_pred)
    if label_weights is not None:
        label_weights = broadcast_weights(
            tf.expand_dims(tf.cast(label_weights, dtype), 0), y_pred)
        weights = label_weights if weights is None else weights * label_weights
    num_labels = next(iter(variables.values())).shape.as_list()[1] if multi_label else 1
    y_true, y_pred = tf.reshape(y_true, [-1, num_labels]), tf.reshape(y_pred, [-1, num_labels])
    if weights is not None:
        weights = tf.reshape(weights, [-1, num_labels])
    if thresholds_distributed_evenly:
        counts = _bucket_counts(y_true, y_pred, weights, thresholds)
    else:
        counts = _threshold_counts(y_true, y_pred, weights, thresholds, list(variables))
    return tf.group([var.assign_add(tf.reshape(counts[key], var.shape))
                     for key, var in variables.items()])


def _ratio(numerator, other):
    return tf.math.divide_no_nan(numerator, numerator + other)


# --- the metrics --------------------------------------------------------------------------
class _ConfusionMetric(Metric):
    """A metric of confusion counts at thresholds: makes a variable per key of
    `variable_names` ('tp' -> 'true_positives', ...) and updates them."""

    def __init__(self, variable_names: Dict[str, str], thresholds: list, evenly: bool,
                 name: Optional[str], dtype, shape=None, top_k=None, class_id=None):
        super().__init__(name=name or _unique_name(self), dtype=dtype)
        self.thresholds, self._evenly = thresholds, evenly
        self.top_k, self.class_id = top_k, class_id
        self._variable_names = variable_names
        if shape is not None:
            self._build_variables(shape)

    def _build_variables(self, shape) -> None:
        self._confusion = {key: self.add_weight(name, shape=shape)
                           for key, name in self._variable_names.items()}
        for key, variable in self._confusion.items():
            setattr(self, self._variable_names[key], variable)

    def update_state(self, y_true, y_pred, sample_weight=None, **kwargs):
        """The op adding a batch's weighted counts to the state.

        Args:
          y_true: the labels (positive where non-zero), of `y_pred`'s shape.
          y_pred: the predictions, in [0, 1].
          sample_weight: None, or weights broadcastable to the labels.
        """
        return update_confusion_matrix_variables(
            self._confusion, y_true, y_pred, self.thresholds, top_k=self.top_k,
            class_id=self.class_id, sample_weight=sample_weight,
            thresholds_distributed_evenly=self._evenly, **kwargs)

    def _per_threshold(self, value):
        """A scalar for one threshold, else the vector."""
        return value[0] if len(self.thresholds) == 1 else value


def _unique_name(metric) -> str:
    """The name Keras gives a metric made without one: 'auc', 'auc_1', ... per graph."""
    return backend.unique_object_name(to_snake_case(type(metric).__name__))


class _ConditionCount(_ConfusionMetric):
    """The weighted count of one condition of the confusion matrix ('accumulator')."""
    _condition = None  # 'tp', 'fp', 'tn' or 'fn'

    def __init__(self, thresholds: Thresholds = None, name: Optional[str] = None, dtype=None):
        self.init_thresholds = thresholds
        thresholds = _parse_thresholds(thresholds, 0.5)
        super().__init__({self._condition: "accumulator"}, thresholds,
                         _evenly_distributed(thresholds), name, dtype,
                         shape=(len(thresholds),))

    def result(self):
        return tf.identity(self._per_threshold(self.accumulator))

    def get_config(self) -> dict:
        return dict(super().get_config(), thresholds=self.init_thresholds)


def _counter(class_name: str, condition: str, what: str):
    """The _ConditionCount subclass counting `condition`, exported as `class_name`."""
    doc = """The weighted number of %s at each threshold.

    Args:
      thresholds: a float or a list of floats in [0, 1] (default 0.5); the result is a
        scalar for one threshold, else one count per threshold.
      name: default '%s'.
      dtype: default floatx().
    """ % (what, to_snake_case(class_name))
    cls = type(class_name, (_ConditionCount,), {"_condition": condition, "__doc__": doc})
    return tf_export("keras.metrics." + class_name)(cls)


TruePositives = _counter("TruePositives", "tp", "true positives")
FalsePositives = _counter("FalsePositives", "fp", "false positives")
TrueNegatives = _counter("TrueNegatives", "tn", "true negatives")
FalseNegatives = _counter("FalseNegatives", "fn", "false negatives")


class _PrecisionRecall(_ConfusionMetric):
    """tp / (tp + `_other`) at each threshold."""
    _other = None  # 'fp' (precision) or 'fn' (recall)

    def __init__(self, thresholds: Thresholds = None, top_k: Optional[int] = None,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype=None):
        self.init_thresholds = thresholds
        thresholds = _parse_thresholds(thresholds, 0.5 if top_k is None else NEG_INF)
        names = {key: _VARIABLE_NAMES[key] for key in ("tp", self._other)}
        super().__init__(names, thresholds, _evenly_distributed(thresholds), name, dtype,
                         shape=(len(thresholds),), top_k=top_k, class_id=class_id)

    def result(self):
        return self._per_threshold(_ratio(self._confusion["tp"],
                                          self._confusion[self._other]))

    def get_config(self) -> dict:
        return dict(super().get_config(), thresholds=self.init_thresholds, top_k=self.top_k,
                    class_id=self.class_id)


def _precision_recall(class_name: str, other: str):
    """The _PrecisionRecall subclass dividing tp by tp + `other`, exported as
    `class_name`."""
    what = class_name.lower()
    doc = """The %s, true_positives / (true_positives + %s), of the
    predictions above each threshold.

    Args:
      thresholds: a float or a list of floats in [0, 1] (default 0.5, or none with
        `top_k`); the result is a scalar for one threshold, else one per threshold.
      top_k: only the top_k predictions of each example count as positive.
      class_id: only this class (index of the last axis) is counted.
      name: default '%s'.
      dtype: default floatx().

    Raises:
      ValueError: a threshold outside [0, 1].
    """ % (what, _VARIABLE_NAMES[other], what)
    cls = type(class_name, (_PrecisionRecall,), {"_other": other, "__doc__": doc})
    return tf_export("keras.metrics." + class_name)(cls)


Precision = _precision_recall("Precision", "fp")
Recall = _precision_recall("Recall", "fn")


# name of a rate -> (the count it divides, the other count of its denominator)
_RATES = {"sensitivity": ("tp", "fn"), "recall": ("tp", "fn"),
          "specificity": ("tn", "fp"), "precision": ("tp", "fp")}


class _AtValue(_ConfusionMetric):
    """The largest `_dependent` rate over the thresholds where the `_constrained` rate is
    at least the given value (0 where none is), over `num_thresholds` thresholds evenly
    spread over [0, 1]."""
    _constrained = _dependent = None  # names of _RATES

    def __init_subclass__(cls, constrained: Optional[str] = None,
                          dependent: Optional[str] = None, **kwargs):
        """`class M(_AtValue, constrained=..., dependent=...)`: the rates of M (names of
        _RATES; the constrained one is the first argument of M's __init__, as Keras
        names it) and its docstring."""
        super().__init_subclass__(**kwargs)
        if constrained is not None:
            cls._constrained, cls._dependent = constrained, dependent
            cls.__doc__ = _at_value_doc(dependent, constrained)

    def __init__(self, value: float, num_thresholds: int, class_id: Optional[int],
                 name: Optional[str], dtype):
        if value < 0 or value > 1:
            raise ValueError("Argument `%s` must be in the range [0, 1]. Received: %s=%s"
                             % (self._constrained, self._constrained, value))
        if num_thresholds <= 0:
            raise ValueError("Argument `num_thresholds` must be an integer > 0. Received: "
                             "num_thresholds=%s" % (num_thresholds,))
        setattr(self, self._constrained, value)
        self.value, self.num_thresholds = value, num_thresholds
        if num_thresholds == 1:
            thresholds = [0.5]
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            thresholds = [0.0] + inner + [1.0]
        super().__init__(dict(_VARIABLE_NAMES), thresholds, num_thresholds > 1, name, dtype,
                         shape=(num_thresholds,), class_id=class_id)

    def _rate(self, which: str):
        numerator, other = _RATES[which]
        return _ratio(self._confusion[numerator], self._confusion[other])

    def result(self):
        dependent = self._rate(self._dependent)
        feasible = tf.where(self._rate(self._constrained) >= self.value)
        best = tf.reduce_max(tf.gather(dependent, feasible))
        return tf.where(tf.size(feasible) > 0, best, 0.0)

    def get_config(self) -> dict:
        return dict(super().get_config(), class_id=self.class_id,
                    num_thresholds=self.num_thresholds,
                    **{self._constrained: self.value})


def _at_value_doc(dependent: str, constrained: str) -> str:
    return """The best %s at a %s of at least the given value: the largest %s over the
    thresholds where the %s is >= `%s` (0 if there is none).

    Args:
      %s: the least %s, in [0, 1].
      num_thresholds: how many thresholds evenly spread over [0, 1] (default 200).
      class_id: only this class (index of the last axis) is counted.
      name: the metric's name (default: the snake-cased class name).
      dtype: default floatx().

    Raises:
      ValueError: `%s` outside [0, 1], or `num_thresholds` < 1.
    """ % ((dependent, constrained) * 2 + (constrained,) * 4)


# Keras names each one's first argument after its constrained rate, so each keeps its own
# __init__ (keyword calls and from_config(get_config()) use that name).
@tf_export("keras.metrics.SensitivityAtSpecificity")
class SensitivityAtSpecificity(_AtValue, constrained="specificity", dependent="sensitivity"):
    def __init__(self, specificity: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)


@tf_export("keras.metrics.SpecificityAtSensitivity")
class SpecificityAtSensitivity(_AtValue, constrained="sensitivity", dependent="specificity"):
    def __init__(self, sensitivity: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)


@tf_export("keras.metrics.PrecisionAtRecall")
class PrecisionAtRecall(_AtValue, constrained="recall", dependent="precision"):
    def __init__(self, recall: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)


@tf_export("keras.metrics.RecallAtPrecision")
class RecallAtPrecision(_AtValue, constrained="precision", dependent="recall"):
    def __init__(self, precision: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)


class AUCCurve(enum.Enum):
    """The curve of an AUC: ROC (recall over false positive rate) or PR (precision over
    recall)."""
    ROC = "ROC"
    PR = "PR"


class AUCSummationMethod(enum.Enum):
    """How AUC sums its rectangles: the mean of the two heights ('interpolation'; for PR,
    Davis & Goadrich's interpolation of the counts), the smaller ('minoring') or the
    larger ('majoring')."""
    INTERPOLATION = "interpolation"
    MAJORING = "majoring"
    MINORING = "minoring"


def _enum_value(enum_class, key, spellings: dict, what: str):
    """`key` if it is a member of `enum_class`, else the member it spells.

    Raises:
      ValueError: an unknown spelling.
    """
    if isinstance(key, enum_class):
        return key
    if key not in spellings:
        expected = ", ".join('"%s"' % v for v in sorted(m.value for m in enum_class))
        raise ValueError('Invalid %s value: "%s". Expected values are [%s]'
                         % (what, key, expected))
    return spellings[key]


_CURVES = {"roc": AUCCurve.ROC, "ROC": AUCCurve.ROC, "pr": AUCCurve.PR, "PR": AUCCurve.PR}
_SUMMATIONS = {spelling: member for member in AUCSummationMethod
               for spelling in (member.value, member.value.capitalize())}


@tf_export("keras.metrics.AUC")
class AUC(_ConfusionMetric):
    """The area under the ROC or PR curve, summed over `num_thresholds - 1` intervals of
    the confusion counts at thresholds spread over [0, 1] (plus one just below 0 and one
    just above 1).

    Args:
      num_thresholds: how many thresholds (default 200), evenly spread.
      curve: 'ROC' (default) or 'PR'.
      summation_method: 'interpolation' (default), 'minoring' or 'majoring'.
      name: default 'auc'.
      dtype: default floatx().
      thresholds: the thresholds in (0, 1) to use instead of evenly spread ones.
      multi_label: with rank-2 data, the mean of the AUCs of the columns (each weighted by
        `label_weights`) instead of one AUC of the flattened data.
      num_labels: the number of columns with `multi_label` (else known at the first
        update).
      label_weights: non-negative weights of the columns.
      from_logits: the predictions are logits (a sigmoid is applied).

    Raises:
      ValueError: `num_thresholds` < 2, an unknown curve or summation method,
        `num_labels` without `multi_label`.
    """

    def __init__(self, num_thresholds: int = 200, curve: Union[str, AUCCurve] = "ROC",
                 summation_method: Union[str, AUCSummationMethod] = "interpolation",
                 name: Optional[str] = None, dtype=None,
                 thresholds: Optional[Sequence[float]] = None, multi_label: bool = False,
                 num_labels: Optional[int] = None, label_weights=None,
                 from_logits: bool = False):
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            thresholds = sorted(thresholds)
            evenly = _evenly_distributed(np.array([0.0] + thresholds + [1.0]))
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. "
                                 "Received: num_thresholds=%s" % (num_thresholds,))
            self.num_thresholds = num_thresholds
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1)
                          for i in range(num_thresholds - 2)]
            evenly = True
        epsilon = backend.epsilon()
        self.curve = _enum_value(AUCCurve, curve, _CURVES, "AUC curve")
        self.summation_method = _enum_value(AUCSummationMethod, summation_method,
                                            _SUMMATIONS, "AUC summation method")
        super().__init__(dict(_VARIABLE_NAMES),
                         list(np.array([0.0 - epsilon] + thresholds + [1.0 + epsilon])),
                         evenly, name, dtype)
        self.multi_label, self.num_labels = multi_label, num_labels
        self.label_weights = None if label_weights is None else \
            np.asarray(label_weights, tf.as_dtype(self.dtype).as_numpy_dtype)
        self._from_logits = from_logits
        self._built = False
        if multi_label and num_labels:
            self._build(tf.TensorShape([None, num_labels]))
        elif not multi_label:
            if num_labels:
                raise ValueError("`num_labels` is needed only when `multi_label` is True.")
            self._build(None)

    def _build(self, shape) -> None:
        """Makes the variables: [thresholds], or [thresholds, labels] with multi_label."""
        if self.multi_label:
            if shape.ndims != 2:
                raise ValueError("`y_pred` must have rank 2 when `multi_label=True`. Found "
                                 "rank %s. Full shape received for `y_pred`: %s"
                                 % (shape.ndims, shape))
            self._num_labels = shape.as_list()[1]
            self._build_variables((self.num_thresholds, self._num_labels))
        else:
            self._build_variables((self.num_thresholds,))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """The op adding a batch's weighted counts to the state.

        Args:
          y_true: the labels (positive where non-zero), of `y_pred`'s shape.
          y_pred: the predictions, in [0, 1] (logits with `from_logits`).
          sample_weight: None, or weights broadcastable to the labels.

        Raises:
          ValueError: (multi_label) predictions not of rank 2; the number of labels of
            `y_true`, the state and `label_weights` known to differ.
        """
        y_pred = tf.convert_to_tensor(y_pred)
        if not self._built:
            self._build(y_pred.shape)
        if self.label_weights is not None:  # checks the shapes known when building
            shapes = [(tf.convert_to_tensor(y_true), ("N", "L")),
                      (tf.constant(self.label_weights), ("L",))]
            if self.multi_label:
                shapes += [(v, ("T", "L")) for v in self._confusion.values()]
            tf.debugging.assert_shapes(shapes, message="Number of labels is not consistent.")
        if self._from_logits:
            y_pred = tf.sigmoid(y_pred)
        return super().update_state(
            y_true, y_pred, sample_weight, multi_label=self.multi_label,
            label_weights=None if self.multi_label else self.label_weights)

    def _label_mean(self, by_label):
        """The mean of per-label AUCs, weighted by `label_weights`."""
        if self.label_weights is None:
            return tf.reduce_mean(by_label)
        weights = tf.constant(self.label_weights)
        return tf.math.divide_no_nan(tf.reduce_sum(by_label * weights),
                                     tf.reduce_sum(weights))

    def interpolate_pr_auc(self):
        """The PR AUC by Davis & Goadrich's interpolation: between two thresholds the
        true positives grow linearly with the predicted positives p, so precision is
        slope + intercept / p, integrated in closed form over recall."""
        tp, fp, fn = (self._confusion[key] for key in ("tp", "fp", "fn"))
        n = self.num_thresholds
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = tf.math.divide_no_nan(dtp, tf.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        safe_p_ratio = tf.where(tf.logical_and(p[:n - 1] > 0, p[1:] > 0),
                                tf.math.divide_no_nan(p[:n - 1], tf.maximum(p[1:], 0)),
                                tf.ones_like(p[1:]))
        increments = tf.math.divide_no_nan(
            slope * (dtp + intercept * tf.math.log(safe_p_ratio)),
            tf.maximum(tp[1:] + fn[1:], 0))
        if self.multi_label:
            return self._label_mean(tf.reduce_sum(increments, axis=0))
        return tf.reduce_sum(increments)

    def result(self):
        if self.curve == AUCCurve.PR and \
                self.summation_method == AUCSummationMethod.INTERPOLATION:
            return self.interpolate_pr_auc()
        c = self._confusion
        recall = _ratio(c["tp"], c["fn"])
        if self.curve == AUCCurve.ROC:
            x, y = _ratio(c["fp"], c["tn"]), recall
        else:
            x, y = recall, _ratio(c["tp"], c["fp"])
        n = self.num_thresholds
        heights = {AUCSummationMethod.INTERPOLATION: lambda: (y[:n - 1] + y[1:]) / 2.0,
                   AUCSummationMethod.MINORING: lambda: tf.minimum(y[:n - 1], y[1:]),
                   AUCSummationMethod.MAJORING: lambda: tf.maximum(y[:n - 1], y[1:])}
        areas = (x[:n - 1] - x[1:]) * heights[self.summation_method]()
        if self.multi_label:
            return self._label_mean(tf.reduce_sum(areas, axis=0))
        return tf.reduce_sum(areas)

    def get_config(self) -> dict:
        config = dict(super().get_config(), num_thresholds=self.num_thresholds,
                      curve=self.curve.value, summation_method=self.summation_method.value,
                      multi_label=self.multi_label, num_labels=self.num_labels,
                      label_weights=self.label_weights, from_logits=self._from_logits)
        if self._init_from_thresholds:  # the inner ones, as given
            config["thresholds"] = self.thresholds[1:-1]
        return config


class _IoUBase(Metric):
    """A weighted confusion matrix of integer class predictions
    ('total_confusion_matrix', [num_classes, num_classes]: rows are labels, columns
    predictions), the state of the IoU metrics."""

    def __init__(self, num_classes: int, name: Optional[str] = None, dtype=None,
                 ignore_class: Optional[int] = None, sparse_y_true: bool = True,
                 sparse_y_pred: bool = True, axis: int = -1):
        super().__init__(name=name or _unique_name(self), dtype=dtype)
        self.num_classes, self.ignore_class, self.axis = num_classes, ignore_class, axis
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.total_cm = self.add_weight("total_confusion_matrix",
                                        shape=(num_classes, num_classes))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """The op adding a batch's (weighted) confusion matrix to the state.

        Args:
          y_true: the class ids (any shape), or scores with `sparse_y_true=False`.
          y_pred: the predicted class ids, or scores with `sparse_y_pred=False`.
          sample_weight: None, or one weight per class id.
        """
        if not self.sparse_y_true:
            y_true = tf.math.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = tf.math.argmax(y_pred, axis=self.axis)
        y_true = tf.reshape(tf.cast(y_true, self.dtype), [-1])
        y_pred = tf.reshape(tf.cast(y_pred, self.dtype), [-1])
        if sample_weight is not None:
            sample_weight = tf.cast(sample_weight, self.dtype)
            if sample_weight.shape.ndims > 1:
                sample_weight = tf.reshape(sample_weight, [-1])
        if self.ignore_class is not None:
            valid = tf.not_equal(y_true, tf.cast(self.ignore_class, y_true.dtype))
            y_true, y_pred = tf.boolean_mask(y_true, valid), tf.boolean_mask(y_pred, valid)
            if sample_weight is not None:
                sample_weight = tf.boolean_mask(sample_weight, valid)
        matrix = tf.math.confusion_matrix(y_true, y_pred, self.num_classes,
                                          weights=sample_weight, dtype=self.dtype)
        return self.total_cm.assign_add(matrix)


@tf_export("keras.metrics.IoU")
class IoU(_IoUBase):
    """The mean over `target_class_ids` of the intersection over union, tp / (tp + fp +
    fn), from the weighted confusion matrix of integer class predictions; classes that
    never occur in labels or predictions are left out of the mean.

    Args:
      num_classes: the number of classes.
      target_class_ids: the classes whose IoU is averaged.
      name: default 'io_u'.
      dtype: default floatx().
      ignore_class: a label whose examples are not counted.
      sparse_y_true: labels are class ids (else scores whose argmax along `axis` is).
      sparse_y_pred: predictions are class ids (else scores, as above).
      axis: the class axis of non-sparse labels or predictions.

    Raises:
      ValueError: a target class id >= num_classes.
    """

    def __init__(self, num_classes: int, target_class_ids: Sequence[int],
                 name: Optional[str] = None, dtype=None, ignore_class: Optional[int] = None,
                 sparse_y_true: bool = True, sparse_y_pred: bool = True, axis: int = -1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred,
                         axis=axis)
        if max(target_class_ids) >= num_classes:
            raise ValueError("Target class id %s is out of range, which is [0, %s)."
                             % (max(target_class_ids), num_classes))
        self.target_class_ids = list(target_class_ids)

    def result(self):
        true_positives = tf.linalg.tensor_diag_part(self.total_cm)
        union = tf.reduce_sum(self.total_cm, 0) + tf.reduce_sum(self.total_cm, 1) - \
            true_positives
        target_ids = tf.constant(self.target_class_ids, tf.int32)
        true_positives = tf.gather(true_positives, target_ids)
        union = tf.gather(union, target_ids)
        present = tf.reduce_sum(tf.cast(tf.greater(union, 1e-9), self.dtype))
        iou = tf.math.divide_no_nan(true_positives, union)
        return tf.math.divide_no_nan(tf.reduce_sum(iou), present)

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "num_classes": self.num_classes,
                "target_class_ids": self.target_class_ids,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


@tf_export("keras.metrics.BinaryIoU")
class BinaryIoU(IoU):
    """The IoU of binary predictions: a prediction above `threshold` is class 1.

    Args:
      target_class_ids: the classes averaged: (0,), (1,) or (0, 1).
      threshold: the decision threshold (default 0.5).
      name: default 'binary_io_u'.
      dtype: default floatx().
    """

    def __init__(self, target_class_ids: Sequence[int] = (0, 1), threshold: float = 0.5,
                 name: Optional[str] = None, dtype=None):
        super().__init__(2, target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        """The op adding the confusion matrix of `y_pred > threshold` against the labels
        (0/1) to the state."""
        y_pred = tf.cast(y_pred, self.dtype)
        y_pred = tf.cast(y_pred > self.threshold, y_pred.dtype)
        return super().update_state(y_true, y_pred, sample_weight)

    def get_config(self) -> dict:
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold,
                "name": self.name, "dtype": self.dtype}


@tf_export("keras.metrics.OneHotIoU")
class OneHotIoU(IoU):
    """IoU of one-hot labels against class scores (their argmax along `axis`).

    Args:
      num_classes, target_class_ids, ignore_class, axis: as IoU's.
      name: default 'one_hot_io_u'.
      dtype: default floatx().
      sparse_y_pred: predictions are class ids.
    """

    def __init__(self, num_classes: int, target_class_ids: Sequence[int],
                 name: Optional[str] = None, dtype=None, ignore_class: Optional[int] = None,
                 sparse_y_pred: bool = False, axis: int = -1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "name": self.name, "dtype": self.dtype, "ignore_class": self.ignore_class,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


@tf_export("keras.metrics.MeanIoU")
class MeanIoU(IoU):
    """The IoU averaged over all `num_classes` classes.

    Args:
      num_classes: the number of classes.
      name: default 'mean_io_u'.
      dtype: default floatx().
      ignore_class: a label whose examples are not counted.
      sparse_y_true: labels are class ids (else scores whose argmax along `axis` is).
      sparse_y_pred: predictions are class ids (else scores, as above).
      axis: the class axis of non-sparse labels or predictions.
    """

    def __init__(self, num_classes: int, name: Optional[str] = None, dtype=None,
                 ignore_class: Optional[int] = None, sparse_y_true: bool = True,
                 sparse_y_pred: bool = True, axis: int = -1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


@tf_export("keras.metrics.OneHotMeanIoU")
class OneHotMeanIoU(MeanIoU):
    """MeanIoU of one-hot labels against class scores (their argmax along `axis`).

    Args:
      num_classes, ignore_class, axis: as MeanIoU's.
      name: default 'one_hot_mean_io_u'.
      dtype: default floatx().
      sparse_y_pred: predictions are class ids.
    """

    def __init__(self, num_classes: int, name: Optional[str] = None, dtype=None,
                 ignore_class: Optional[int] = None, sparse_y_pred: bool = False,
                 axis: int = -1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


# tf.keras.metrics.get / deserialize find them by class name
metrics._ALL_OBJECTS.update({cls.__name__: cls for cls in (
    TruePositives, FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall,
    SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall,
    RecallAtPrecision, AUC, IoU, BinaryIoU, OneHotIoU, MeanIoU, OneHotMeanIoU)})
