"""The public heads of `tf.estimator` (TF's v2 heads, also in `tf.compat.v1.estimator`):
a model_fn computes logits and hands them to a head's `create_estimator_spec`.

  Head                    the interface: loss, predictions, metrics, update_metrics,
                          create_estimator_spec
  BinaryClassHead         sigmoid cross entropy, logits [D0, ..., DN, 1]
  MultiClassHead          sparse softmax cross entropy, logits [D0, ..., DN, n_classes]
  MultiLabelHead          one sigmoid cross entropy per class, logits [D0, ..., DN, n_classes]
  RegressionHead          mean squared error (or `loss_fn`), logits [D0, ..., DN, dim]
  LogisticRegressionHead  regression of labels in [0, 1] by sigmoid cross entropy
  PoissonRegressionHead   regression of counts by the log Poisson loss
  MultiHead               several named heads over one model's logits

  base.py            Head, SingleHead and the shared checks
  classification.py  the classification heads
  regression.py      the regression heads
  multi_head.py      MultiHead

They share the checks and prediction pieces of the v1 heads (canned/head.py) and differ
from them as TF's do: the loss is reduced with a Keras reduction (default
'sum_over_batch_size', so the loss of a batch is its mean), the eval metrics are Keras
`Metric` objects (which EstimatorSpec turns into (value, update_op) pairs), an
`optimizer` must be a Keras optimizer (a `tf.train` one goes through `train_op_fn`), and a
few error messages are worded differently.
"""

from tensorweave.estimator.canned.heads_v2 import base  # noqa: F401
from tensorweave.estimator.canned.heads_v2 import classification  # noqa: F401
from tensorweave.estimator.canned.heads_v2 import regression  # noqa: F401
from tensorweave.estimator.canned.heads_v2 import multi_head  # noqa: F401
