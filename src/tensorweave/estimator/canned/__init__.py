"""TF1's canned estimators (`tf.compat.v1.estimator.*`): ready-made models over feature
columns, each an Estimator whose model_fn joins a logits function with a head.

  head.py                 the v1 heads: binary logistic, multi-class softmax, regression
  heads_v2.py             tf.estimator.Head and its BinaryClass, MultiClass, Regression,
                          LogisticRegression and PoissonRegression heads
  optimizers.py           get_optimizer_instance: optimizer names -> instances
  linear.py               LinearClassifier, LinearRegressor, LinearEstimator
  linear_sdca.py          LinearSDCA: stochastic dual coordinate ascent for them
  dnn.py                  DNNClassifier, DNNRegressor, DNNEstimator
  dnn_linear_combined.py  DNNLinearCombined{Classifier,Regressor,Estimator} (wide & deep)
  baseline.py             BaselineClassifier, BaselineRegressor, BaselineEstimator
  parsing_utils.py        classifier_parse_example_spec, regressor_parse_example_spec
  kmeans.py               experimental.KMeans: k-means clustering (graph in kmeans_graph.py)

Importing this package fills the export table; the names appear in `tf.estimator` when
it is installed (tensorweave.estimator imports this package).
"""
from tensorweave.estimator.canned import baseline  # noqa: F401
from tensorweave.estimator.canned import dnn  # noqa: F401
from tensorweave.estimator.canned import dnn_linear_combined  # noqa: F401
from tensorweave.estimator.canned import head  # noqa: F401
from tensorweave.estimator.canned import heads_v2  # noqa: F401
from tensorweave.estimator.canned import kmeans  # noqa: F401
from tensorweave.estimator.canned import linear  # noqa: F401
from tensorweave.estimator.canned import optimizers  # noqa: F401
from tensorweave.estimator.canned import parsing_utils  # noqa: F401
