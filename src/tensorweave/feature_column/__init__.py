"""tf.feature_column: TF1's feature columns (graph mode), how a model describes its
inputs, parses them from tf.Example and turns them into tensors.

  base.py                 the column protocol (dense / categorical) and argument checks
  builder.py              the per-call cache of transformed features, dense -> sparse ids
  numeric_columns.py      numeric_column, bucketized_column
  categorical_columns.py  hash bucket, vocabulary list and file, identity, weighted
  crossed_columns.py      crossed_column (TF's hashed crosses)
  wrappers.py             indicator_column, embedding_column, shared_embedding_columns
  layers.py               input_layer, linear_model
  parse_spec.py           make_parse_example_spec
  sequence_columns.py     sequence_categorical_column_with_*, sequence_numeric_column

Imported on first access of `tf.feature_column` (tensorweave/__init__.py), so `import
tensorweave` does not pay for it. The public names are also bound here, so that
`from tensorweave.feature_column import numeric_column` works before that access.
"""
from tensorweave.feature_column.categorical_columns import (  # noqa: F401
    categorical_column_with_hash_bucket, categorical_column_with_identity,
    categorical_column_with_vocabulary_file, categorical_column_with_vocabulary_list,
    weighted_categorical_column)
from tensorweave.feature_column.crossed_columns import crossed_column  # noqa: F401
from tensorweave.feature_column.layers import input_layer, linear_model  # noqa: F401
from tensorweave.feature_column.numeric_columns import (  # noqa: F401
    bucketized_column, numeric_column)
from tensorweave.feature_column.parse_spec import make_parse_example_spec  # noqa: F401
from tensorweave.feature_column.sequence_columns import (  # noqa: F401
    sequence_categorical_column_with_hash_bucket, sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list, sequence_numeric_column)
from tensorweave.feature_column.wrappers import (  # noqa: F401
    embedding_column, indicator_column, shared_embedding_columns)

import sys as _sys  # noqa: E402

from tensorweave.framework import api_export as _api  # noqa: E402

# the names are offered to `from tensorweave.feature_column import ...` before `tf.feature_column` is touched
_api.install_namespace(_sys.modules[__name__], "feature_column")
