"""`tf.estimator.classifier_parse_example_spec` and `regressor_parse_example_spec`: the
`tf.parse_example` spec of a canned estimator's features plus its label (and weight)."""
from __future__ import annotations

from typing import Dict, Iterable

import tensorweave as tf
from tensorweave.feature_column.numeric_columns import NumericColumn
from tensorweave.framework.api_export import tf_export


def _add_label_and_weight(parsing_spec: Dict, label_key: str, label_spec,
                          weight_column) -> Dict:
    if label_key in parsing_spec:
        raise ValueError("label should not be used as feature. label_key: {}, features: {}"
                         .format(label_key, parsing_spec.keys()))
    parsing_spec[label_key] = label_spec
    if weight_column is None:
        return parsing_spec
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(weight_column)
    if not isinstance(weight_column, NumericColumn):
        raise ValueError("weight_column should be an instance of "
                         "tf.feature_column.numeric_column. Given type: {} value: {}"
                         .format(type(weight_column), weight_column))
    if weight_column.key in parsing_spec:
        raise ValueError("weight_column should not be used as feature. weight_column: {}, "
                         "features: {}".format(weight_column.key, parsing_spec.keys()))
    parsing_spec.update(weight_column._parse_example_spec)
    return parsing_spec


@tf_export("estimator.classifier_parse_example_spec")
def classifier_parse_example_spec(feature_columns: Iterable, label_key: str,
                                  label_dtype=tf.int64, label_default=None,
                                  weight_column=None) -> Dict:
    """The parsing spec of a classifier's tf.Examples: the columns' features, the label
    (one value of `label_dtype` per example) and the weight column's feature.

    Args:
      feature_columns: the model's feature columns.
      label_key: the feature key of the label.
      label_dtype: the label's dtype (int64 class ids, or string with a vocabulary).
      label_default: the label used when an example has none (None: required).
      weight_column: a feature key or numeric column of per-example weights.

    Returns:
      A dict: feature key -> FixedLenFeature or VarLenFeature.

    Raises:
      ValueError: the label or weight key is also a feature, or `weight_column` is not
        a string or numeric column.
    """
    parsing_spec = tf.feature_column.make_parse_example_spec(feature_columns)
    label_spec = tf.io.FixedLenFeature((1,), label_dtype, label_default)
    return _add_label_and_weight(parsing_spec, label_key, label_spec, weight_column)


@tf_export("estimator.regressor_parse_example_spec")
def regressor_parse_example_spec(feature_columns: Iterable, label_key: str,
                                 label_dtype=tf.float32, label_default=None,
                                 label_dimension: int = 1, weight_column=None) -> Dict:
    """The parsing spec of a regressor's tf.Examples: the columns' features, the label
    (`label_dimension` values of `label_dtype` per example) and the weight feature.

    Args:
      feature_columns, label_key, label_default, weight_column: see
        `classifier_parse_example_spec`.
      label_dtype: the label's dtype (default float32).
      label_dimension: the number of label values per example.

    Returns:
      A dict: feature key -> FixedLenFeature or VarLenFeature.

    Raises:
      ValueError: see `classifier_parse_example_spec`.
    """
    parsing_spec = tf.feature_column.make_parse_example_spec(feature_columns)
    label_spec = tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default)
    return _add_label_and_weight(parsing_spec, label_key, label_spec, weight_column)
