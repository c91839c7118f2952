"""`tf.estimator.experimental.KMeans` (tensorflow_estimator's canned/kmeans.py): k-means
clustering as an Estimator over the graph of `kmeans_graph.KMeans`.

Training first runs the init op from a hook until every center is chosen (the chief;
other workers wait), then each step runs one full-batch Lloyd iteration or one
mini-batch update. The loss is the sum over the batch of the distance of each point to
its nearest center; `score` is its mean over one evaluation batch. The centers live in
the variable `clusters` (`cluster_centers()`).
"""
from __future__ import annotations

import time
from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.estimator import model_fn as model_fn_lib
from tensorweave.estimator.canned import kmeans_graph
from tensorweave.estimator.estimator import Estimator
from tensorweave.framework.api_export import tf_export


class _LossRelativeChangeHook(tf.train.SessionRunHook):
    """Stops training when the loss changes by less than `tolerance` relative to
    1 + |previous loss| between two steps."""

    def __init__(self, loss_tensor, tolerance):
        self._loss_tensor = loss_tensor
        self._tolerance = tolerance
        self._prev_loss = None

    def before_run(self, run_context):
        del run_context
        return tf.train.SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        loss = run_values.results
        assert loss is not None
        if self._prev_loss:
            relative_change = abs(loss - self._prev_loss) / (1 + abs(self._prev_loss))
            if relative_change < self._tolerance:
                run_context.request_stop()
        self._prev_loss = loss


class _InitializeClustersHook(tf.train.SessionRunHook):
    """Chooses the initial centers when the session is created: the chief runs the init
    op until `initialized` is true (it may need several batches); the other workers
    poll once a second until it is."""

    def __init__(self, init_op, is_initialized_var, is_chief):
        self._init_op = init_op
        self._is_initialized_var = is_initialized_var
        self._is_chief = is_chief

    def after_create_session(self, session, coord):
        del coord
        assert self._init_op.graph is tf.get_default_graph()
        assert self._is_initialized_var.graph is self._init_op.graph
        while True:
            try:
                if session.run(self._is_initialized_var):
                    break
                elif self._is_chief:
                    session.run(self._init_op)
                else:
                    time.sleep(1)
            except RuntimeError as e:
                tf.logging.info(e)


def _parse_features_if_necessary(features, feature_columns):
    """The points as one matrix: a dict of features goes through `feature_columns`
    (`input_layer`) or, without them, its [n, 1] columns are concatenated in key
    order; anything else is returned as is."""
    if not isinstance(features, dict):
        return features
    if feature_columns:
        return tf.feature_column.input_layer(features, feature_columns)
    keys = sorted(features.keys())
    with tf.colocate_with(features[keys[0]]):
        return tf.concat([features[k] for k in keys], axis=1)


class _ModelFn:
    """The model_fn of KMeans (features only: labels are ignored)."""

    def __init__(self, num_clusters, initial_clusters, distance_metric, seed, use_mini_batch,
                 mini_batch_steps_per_iteration, kmeans_plus_plus_num_retries,
                 relative_tolerance, feature_columns):
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._seed = seed
        self._use_mini_batch = use_mini_batch
        self._mini_batch_steps_per_iteration = mini_batch_steps_per_iteration
        self._kmeans_plus_plus_num_retries = kmeans_plus_plus_num_retries
        self._relative_tolerance = relative_tolerance
        self._feature_columns = feature_columns

    def model_fn(self, features, mode, config):
        input_points = _parse_features_if_necessary(features, self._feature_columns)
        (all_distances, model_predictions, losses, is_initialized, init_op,
         training_op) = kmeans_graph.KMeans(
             inputs=input_points, num_clusters=self._num_clusters,
             initial_clusters=self._initial_clusters,
             distance_metric=self._distance_metric, use_mini_batch=self._use_mini_batch,
             mini_batch_steps_per_iteration=self._mini_batch_steps_per_iteration,
             random_seed=self._seed,
             kmeans_plus_plus_num_retries=self._kmeans_plus_plus_num_retries,
         ).training_graph()
        loss = tf.reduce_sum(losses)
        tf.summary.scalar("loss/raw", loss)
        incr_step = tf.assign_add(tf.train.get_global_step(), 1)
        training_op = tf.with_dependencies([training_op, incr_step], loss)
        training_hooks = [_InitializeClustersHook(init_op, is_initialized, config.is_chief)]
        if self._relative_tolerance is not None:
            training_hooks.append(_LossRelativeChangeHook(loss, self._relative_tolerance))
        predict_output = tf.estimator.export.PredictOutput
        export_outputs = {
            KMeansClustering.ALL_DISTANCES: predict_output(all_distances[0]),
            KMeansClustering.CLUSTER_INDEX: predict_output(model_predictions[0]),
            tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                predict_output(model_predictions[0]),
        }
        return model_fn_lib.EstimatorSpec(
            mode=mode,
            predictions={KMeansClustering.ALL_DISTANCES: all_distances[0],
                         KMeansClustering.CLUSTER_INDEX: model_predictions[0]},
            loss=loss, train_op=training_op,
            eval_metric_ops={KMeansClustering.SCORE: tf.metrics.mean(loss)},
            training_hooks=training_hooks, export_outputs=export_outputs)


@tf_export("estimator.experimental.KMeans")
class KMeansClustering(Estimator):
    """An Estimator for k-means clustering (TF1 `tf.estimator.experimental.KMeans`).

    Args:
      num_clusters: the number of clusters (ignored when `initial_clusters` is a tensor
        or array).
      model_dir: where checkpoints and summaries go.
      initial_clusters: an array or tensor of the initial centers, a callable
        `f(inputs, k)` choosing up to k centers from a batch (called on successive
        batches until all are chosen), `RANDOM_INIT` or `KMEANS_PLUS_PLUS_INIT` (from
        the first batch, which must hold at least `num_clusters` points).
      distance_metric: `SQUARED_EUCLIDEAN_DISTANCE` or `COSINE_DISTANCE`.
      seed: the op seed of the initialization.
      use_mini_batch: mini-batch k-means; otherwise every batch must be the whole data.
      mini_batch_steps_per_iteration: steps between syncs of the updated centers.
      kmeans_plus_plus_num_retries: extra draws per k-means++ sample.
      relative_tolerance: stop training when the loss changes by less than this.
      config: a RunConfig.
      feature_columns: the columns that make the points from a dict of features.

    Raises:
      ValueError: an unsupported `initial_clusters` or `distance_metric`.
    """

    SQUARED_EUCLIDEAN_DISTANCE = kmeans_graph.SQUARED_EUCLIDEAN_DISTANCE
    COSINE_DISTANCE = kmeans_graph.COSINE_DISTANCE
    RANDOM_INIT = kmeans_graph.RANDOM_INIT
    KMEANS_PLUS_PLUS_INIT = kmeans_graph.KMEANS_PLUS_PLUS_INIT

    SCORE = "score"
    CLUSTER_INDEX = "cluster_index"
    ALL_DISTANCES = "all_distances"

    CLUSTER_CENTERS_VAR_NAME = kmeans_graph.CLUSTERS_VAR_NAME

    def __init__(self, num_clusters, model_dir: Optional[str] = None,
                 initial_clusters=RANDOM_INIT,
                 distance_metric: str = SQUARED_EUCLIDEAN_DISTANCE,
                 seed: Optional[int] = None, use_mini_batch: bool = True,
                 mini_batch_steps_per_iteration: int = 1,
                 kmeans_plus_plus_num_retries: int = 2,
                 relative_tolerance: Optional[float] = None, config=None,
                 feature_columns=None):
        if isinstance(initial_clusters, str) and initial_clusters not in [
                KMeansClustering.RANDOM_INIT, KMeansClustering.KMEANS_PLUS_PLUS_INIT]:
            raise ValueError("Unsupported initialization algorithm '%s'" % initial_clusters)
        if distance_metric not in [KMeansClustering.SQUARED_EUCLIDEAN_DISTANCE,
                                   KMeansClustering.COSINE_DISTANCE]:
            raise ValueError("Unsupported distance metric '%s'" % distance_metric)
        self._distance_metric = distance_metric
        super().__init__(
            model_fn=_ModelFn(num_clusters, initial_clusters, distance_metric, seed,
                              use_mini_batch, mini_batch_steps_per_iteration,
                              kmeans_plus_plus_num_retries, relative_tolerance,
                              feature_columns).model_fn,
            model_dir=model_dir, config=config)

    def _predict_one_key(self, input_fn, predict_key):
        for result in self.predict(input_fn=input_fn, predict_keys=[predict_key]):
            yield result[predict_key]

    def predict_cluster_index(self, input_fn):
        """Yields the index of the nearest center of each input point."""
        for index in self._predict_one_key(input_fn, KMeansClustering.CLUSTER_INDEX):
            yield index

    def score(self, input_fn):
        """The sum of the distances of the points of the first batch of `input_fn` to
        their nearest centers (sklearn's score is its negative)."""
        return self.evaluate(input_fn=input_fn, steps=1)[KMeansClustering.SCORE]

    def transform(self, input_fn):
        """Yields each point's distances to all centers: Euclidean (the square root of
        the graph's squared distances) for `SQUARED_EUCLIDEAN_DISTANCE`, cosine
        distances otherwise."""
        for distances in self._predict_one_key(input_fn, KMeansClustering.ALL_DISTANCES):
            if self._distance_metric == KMeansClustering.SQUARED_EUCLIDEAN_DISTANCE:
                yield np.sqrt(distances)
            else:
                yield distances

    def cluster_centers(self):
        """The cluster centers, from the latest checkpoint."""
        return self.get_variable_value(KMeansClustering.CLUSTER_CENTERS_VAR_NAME)
