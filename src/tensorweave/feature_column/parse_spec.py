"""`make_parse_example_spec`: the `features` argument of `tf.parse_example` that gives
every feature a set of columns reads."""
from __future__ import annotations

from typing import Dict, Iterable

from tensorweave.feature_column.base import FeatureColumn
from tensorweave.framework.api_export import tf_export


@tf_export("feature_column.make_parse_example_spec")
def make_parse_example_spec(feature_columns: Iterable[FeatureColumn]) -> Dict:
    """The parsing spec of `feature_columns`, for `tf.parse_example(serialized,
    features=...)`: numeric columns read a FixedLenFeature of their shape, dtype and
    default; categorical columns a VarLenFeature (int64 for identity columns); a
    weighted column adds a VarLenFeature for its weights; wrapping columns read what
    the column they wrap reads.

    Args:
      feature_columns: an iterable of columns.

    Returns:
      A dict: feature key -> FixedLenFeature or VarLenFeature.

    Raises:
      ValueError: an item that is not a column, or two columns reading one key with
        different specs.
    """
    result = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError("All feature_columns must be _FeatureColumn instances. "
                             "Given: {}".format(column))
        for key, spec in column._parse_example_spec.items():
            if key in result and spec != result[key]:
                raise ValueError("feature_columns contain different parse_spec for key {}. "
                                 "Given {} and {}".format(key, spec, result[key]))
            result[key] = spec
    return result
