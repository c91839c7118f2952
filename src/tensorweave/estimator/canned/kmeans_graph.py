"""The k-means training graph (TF's `clustering_ops.KMeans`), used by the KMeans estimator.

`KMeans(inputs, ...).training_graph()` builds the variables `clusters` (the centers,
shape set by the initialization), `initialized`, and for mini-batch training the counts
(an unnamed `Variable`, as TF names it) and, with mini_batch_steps_per_iteration > 1,
`clusters_updated` and `update_in_steps`; an init op that chooses some initial centers
per run (run it until `initialized` is true), and a training op: one full Lloyd
iteration, or one mini-batch step.

Mini-batch with mini_batch_steps_per_iteration > 1 keeps two copies of the centers: the
steps assign with `clusters` and update `clusters_updated`; every that many steps the
updated copy is copied back and the counts are reset.

Cosine distance works on l2-normalized inputs; the centers are kept normalized except in
plain mini-batch training (steps per iteration 1), where they are normalized for use.
"""
from __future__ import annotations

import tensorweave as tf
from tensorweave.ops import clustering_ops as _ops
from tensorweave.ops.control_flow import cond_side_effects as _cond_side_effects

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"

RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"

CLUSTERS_VAR_NAME = "clusters"


class KMeans:
    """Creates the graph for k-means clustering (TF's `clustering_ops.KMeans`).

    Args:
      inputs: a float32 matrix [n, d], or a list of them (shards of the data).
      num_clusters: an int (or int Tensor); ignored when `initial_clusters` is a tensor
        or array.
      initial_clusters: "random", "kmeans_plus_plus", a tensor or array of the
        initial centers, or a callable `f(inputs, k)` returning up to k centers.
      distance_metric: "squared_euclidean" or "cosine".
      use_mini_batch: mini-batch k-means instead of full-batch Lloyd iterations.
      mini_batch_steps_per_iteration: steps after which the updated centers are synced
        back to the centers used for assignment.
      random_seed: the op seed; the graph-level seed of `tf.get_seed` is what is used.
      kmeans_plus_plus_num_retries: extra draws per k-means++ sample (negative: a
        heuristic O(log k)).
      kmc2_chain_length: candidates per k-MC2 chain ("kmc2" raises NotImplementedError).

    Raises:
      ValueError: an unknown initialization algorithm or distance metric.
    """

    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric: str = SQUARED_EUCLIDEAN_DISTANCE,
                 use_mini_batch: bool = False, mini_batch_steps_per_iteration: int = 1,
                 random_seed: int = 0, kmeans_plus_plus_num_retries: int = 2,
                 kmc2_chain_length: int = 200):
        algorithms = [RANDOM_INIT, KMEANS_PLUS_PLUS_INIT, KMC2_INIT]
        if isinstance(initial_clusters, str) and initial_clusters not in algorithms:
            raise ValueError("Unsupported initialization algorithm `%s`,must be one of `%s`."
                             % (initial_clusters, algorithms))
        metrics = [SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE]
        if distance_metric not in metrics:
            raise ValueError("Unsupported distance metric `%s`,must be one of `%s`."
                             % (distance_metric, metrics))
        if isinstance(initial_clusters, str) and initial_clusters == KMC2_INIT:
            raise NotImplementedError("initial_clusters='kmc2' is not supported by "
                                      "tensorweave's KMeans graph (TF's KMeans estimator "
                                      "does not accept it either); use 'kmeans_plus_plus' "
                                      "or 'random'")
        self._inputs = inputs if isinstance(inputs, list) else [inputs]
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._use_mini_batch = use_mini_batch
        self._mini_batch_steps_per_iteration = int(mini_batch_steps_per_iteration)
        self._seed = tf.get_seed(random_seed)[0]
        self._kmeans_plus_plus_num_retries = kmeans_plus_plus_num_retries
        self._kmc2_chain_length = kmc2_chain_length

    # --- distances ----------------------------------------------------------------------
    @classmethod
    def _distance_graph(cls, inputs, clusters, distance_metric):
        if distance_metric == SQUARED_EUCLIDEAN_DISTANCE:
            return cls._compute_euclidean_distance(inputs, clusters)
        return cls._compute_cosine_distance(inputs, clusters, inputs_normalized=True)

    @classmethod
    def _compute_euclidean_distance(cls, inputs, clusters):
        clusters_norm = tf.transpose(tf.reduce_sum(tf.square(clusters), 1, keepdims=True))
        return [tf.reduce_sum(tf.square(inp), 1, keepdims=True)
                - 2 * tf.matmul(inp, clusters, transpose_b=True) + clusters_norm
                for inp in inputs]

    @classmethod
    def _compute_cosine_distance(cls, inputs, clusters, inputs_normalized=True):
        if not inputs_normalized:
            clusters = tf.nn.l2_normalize(clusters, axis=1)
            inputs = [tf.nn.l2_normalize(inp, axis=1) for inp in inputs]
        return [1 - tf.matmul(inp, clusters, transpose_b=True) for inp in inputs]

    def _infer_graph(self, inputs, clusters):
        """(all distances, distance to the nearest center, its index), one list each."""
        all_scores = self._distance_graph(inputs, clusters, self._distance_metric)
        if self._distance_metric == COSINE_DISTANCE and not self._clusters_l2_normalized():
            clusters = tf.nn.l2_normalize(clusters, axis=1)
        scores, indices = [], []
        for inp in inputs:
            index, distance = _ops.nearest_neighbors(inp, clusters, 1)
            if self._distance_metric == COSINE_DISTANCE:
                distance *= 0.5  # |a - b|^2 / 2 = 1 - cos for unit vectors
            scores.append(tf.squeeze(distance, [-1]))
            indices.append(tf.squeeze(index, [-1]))
        return all_scores, scores, indices

    def _clusters_l2_normalized(self) -> bool:
        return (self._distance_metric == COSINE_DISTANCE
                and (not self._use_mini_batch or self._mini_batch_steps_per_iteration > 1))

    # --- variables ----------------------------------------------------------------------
    def _create_variables(self, num_clusters):
        init_value = tf.placeholder_with_default([], shape=None)
        centers = tf.Variable(init_value, name=CLUSTERS_VAR_NAME, validate_shape=False)
        initialized = tf.Variable(False, dtype=tf.bool, name="initialized")
        if self._use_mini_batch and self._mini_batch_steps_per_iteration > 1:
            centers_updated = tf.Variable(init_value, name="clusters_updated",
                                          validate_shape=False)
            update_in_steps = tf.Variable(self._mini_batch_steps_per_iteration,
                                          dtype=tf.int64, name="update_in_steps")
            counts = tf.Variable(tf.zeros([num_clusters], dtype=tf.int64))
        else:
            centers_updated, update_in_steps = centers, None
            counts = (tf.Variable(tf.ones([num_clusters], dtype=tf.int64))
                      if self._use_mini_batch else None)
        return centers, initialized, counts, centers_updated, update_in_steps

    def training_graph(self):
        """Builds the training graph.

        Returns:
          (all_scores, cluster_idx, scores, cluster_centers_initialized, init_op,
          training_op): lists (one entry per input) of the distances to every center,
          the nearest center's index and the distance to it; the `initialized`
          variable; the op choosing initial centers (run it until `initialized`); and
          the op running one training step.
        """
        # its conds read the batch whichever branch runs, as TF's builder does
        with _cond_side_effects.expected():
            return self._training_graph()

    def _training_graph(self):
        if isinstance(self._initial_clusters, str) or callable(self._initial_clusters):
            initial_clusters = self._initial_clusters
            num_clusters = tf.convert_to_tensor(self._num_clusters)
        else:
            initial_clusters = tf.convert_to_tensor(self._initial_clusters)
            num_clusters = tf.shape(initial_clusters)[0]
        inputs = self._inputs
        (centers_var, initialized, total_counts, centers_updated,
         update_in_steps) = self._create_variables(num_clusters)
        init_op = _InitializeClustersOpFactory(
            self._inputs, num_clusters, initial_clusters, self._distance_metric,
            self._seed, self._kmeans_plus_plus_num_retries, self._kmc2_chain_length,
            centers_var, centers_updated, initialized).op()
        centers = centers_var
        if self._distance_metric == COSINE_DISTANCE:
            inputs = [tf.nn.l2_normalize(inp, axis=1) for inp in inputs]
            if not self._clusters_l2_normalized():
                centers = tf.nn.l2_normalize(centers, axis=1)
        all_scores, scores, cluster_idx = self._infer_graph(inputs, centers)
        if self._use_mini_batch:
            sync_op = self._mini_batch_sync_updates_op(update_in_steps, centers_var,
                                                       centers_updated, total_counts)
            with tf.control_dependencies([sync_op]):
                train_idx = cluster_idx
                if update_in_steps is not None:
                    # TF's assignment reads the centers racing with the sync; here the
                    # step assigns with the centers as synced
                    _, _, train_idx = self._infer_graph(inputs, tf.identity(centers_var))
                training_op = self._mini_batch_training_op(inputs, train_idx,
                                                           centers_updated, total_counts)
        else:
            training_op = self._full_batch_training_op(inputs, num_clusters, cluster_idx,
                                                       centers_var)
        return all_scores, cluster_idx, scores, initialized, init_op, training_op

    # --- training -----------------------------------------------------------------------
    def _mini_batch_sync_updates_op(self, update_in_steps, centers_var, centers_updated,
                                    total_counts):
        if not (self._use_mini_batch and self._mini_batch_steps_per_iteration > 1):
            return tf.no_op()

        def sync():
            reset_steps = tf.assign(update_in_steps, self._mini_batch_steps_per_iteration - 1)
            with tf.control_dependencies([reset_steps]):
                updated = centers_updated
                if self._distance_metric == COSINE_DISTANCE:
                    updated = tf.nn.l2_normalize(centers_updated, axis=1)
                with tf.control_dependencies([tf.assign(centers_var, updated)]):
                    with tf.control_dependencies(
                            [tf.assign(total_counts, tf.zeros_like(total_counts))]):
                        return tf.identity(update_in_steps)

        return tf.cond(update_in_steps <= 0, sync,
                       lambda: tf.assign_sub(update_in_steps, 1))

    def _mini_batch_training_op(self, inputs, cluster_idx_list, centers, total_counts):
        """Moves each center hit by the batch towards the mean of its points, with the
        learning rate 1 / (points the center has absorbed so far)."""
        update_ops = []
        for inp, cluster_idx in zip(inputs, cluster_idx_list):
            cluster_idx = tf.reshape(cluster_idx, [-1])
            unique_ids, unique_idx = tf.unique(cluster_idx)
            num_unique = tf.size(unique_ids)
            old_counts = tf.gather(total_counts, unique_ids)
            old_centers = tf.gather(centers, unique_ids)
            count_updates = tf.unsorted_segment_sum(
                tf.ones_like(unique_idx, dtype=total_counts.dtype), unique_idx, num_unique)
            center_updates = tf.unsorted_segment_sum(inp, unique_idx, num_unique)
            broadcast_shape = tf.concat(
                [tf.reshape(num_unique, [1]),
                 tf.ones(tf.reshape(tf.rank(inp) - 1, [1]), dtype=tf.int32)], 0)
            center_updates -= tf.cast(tf.reshape(count_updates, broadcast_shape),
                                      inp.dtype) * old_centers
            learning_rate = tf.reciprocal(tf.cast(old_counts + count_updates, inp.dtype))
            center_updates *= tf.reshape(learning_rate, broadcast_shape)
            # TF leaves the read of old_counts racing with the update of the counts; it
            # is ordered here so the rate is the documented 1 / (old + new counts)
            with tf.control_dependencies([center_updates]):
                update_ops.append(tf.scatter_add(total_counts, unique_ids, count_updates))
            update_ops.append(tf.scatter_add(centers, unique_ids, center_updates))
        return tf.group(*update_ops)

    def _full_batch_training_op(self, inputs, num_clusters, cluster_idx_list, centers):
        """One Lloyd iteration: each center becomes the mean of its points (a center with
        no points becomes 0, as TF's 1e-6 in the denominator makes it)."""
        sums, counts = [], []
        epsilon = tf.constant(1e-6, dtype=inputs[0].dtype)
        for inp, cluster_idx in zip(inputs, cluster_idx_list):
            sums.append(tf.unsorted_segment_sum(inp, cluster_idx, num_clusters))
            ones = tf.reshape(tf.ones(tf.reshape(tf.shape(inp)[0], [-1])), [-1, 1])
            counts.append(tf.unsorted_segment_sum(ones, cluster_idx, num_clusters))
        new_centers = tf.add_n(sums) / (tf.cast(tf.add_n(counts), sums[0].dtype) + epsilon)
        if self._clusters_l2_normalized():
            new_centers = tf.nn.l2_normalize(new_centers, axis=1)
        return tf.assign(centers, new_centers)


class _InitializeClustersOpFactory:
    """Builds the op that chooses initial centers. Per run:

      remaining = num_clusters - rows of the centers
      if remaining == 0: assert that `initialized` is true
      else: choose up to `remaining` centers (l2-normalized for cosine), append them
        (and copy to the updated centers), and set `initialized` once none remain.
    """

    def __init__(self, inputs, num_clusters, initial_clusters, distance_metric, random_seed,
                 kmeans_plus_plus_num_retries, kmc2_chain_length, cluster_centers,
                 cluster_centers_updated, cluster_centers_initialized):
        self._inputs = inputs
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._seed = random_seed
        self._kmeans_plus_plus_num_retries = kmeans_plus_plus_num_retries
        self._kmc2_chain_length = kmc2_chain_length
        self._cluster_centers = cluster_centers
        self._cluster_centers_updated = cluster_centers_updated
        self._cluster_centers_initialized = cluster_centers_initialized
        self._num_selected = tf.shape(cluster_centers)[0]
        self._num_remaining = num_clusters - self._num_selected
        self._num_data = tf.add_n([tf.shape(i)[0] for i in inputs])

    def _normalized(self, x):
        return tf.nn.l2_normalize(x, axis=1) if self._distance_metric == COSINE_DISTANCE \
            else x

    def _random(self):
        indices = tf.random_uniform(tf.reshape(self._num_remaining, [-1]), minval=0,
                                    maxval=tf.cast(self._num_data, tf.int64),
                                    seed=self._seed, dtype=tf.int64)
        return tf.nn.embedding_lookup(self._inputs, indices, partition_strategy="div")

    def _kmeans_plus_plus(self):
        inp = self._normalized(self._inputs[0])
        return _ops.kmeans_plus_plus_initialization(
            inp, tf.cast(self._num_remaining, tf.int64), self._seed,
            self._kmeans_plus_plus_num_retries)

    def _assign_centers(self, new_value):
        assigned = tf.assign(self._cluster_centers, new_value, validate_shape=False)
        if self._cluster_centers_updated is not self._cluster_centers:
            assigned = tf.assign(self._cluster_centers_updated, assigned,
                                 validate_shape=False)
        return assigned

    def _choose_initial_centers(self):
        if isinstance(self._initial_clusters, str):
            if self._initial_clusters == RANDOM_INIT:  # the whole batch if it is small
                return tf.cond(self._num_data <= self._num_remaining,
                               lambda: tf.concat(self._inputs, 0), self._random)
            with tf.control_dependencies(
                    [tf.assert_greater_equal(self._num_data, self._num_remaining)]):
                return self._kmeans_plus_plus()
        if callable(self._initial_clusters):
            return self._initial_clusters(self._inputs, self._num_remaining)
        with tf.control_dependencies([tf.assert_equal(
                self._num_remaining, tf.shape(self._initial_clusters)[0])]):
            return tf.identity(self._initial_clusters)

    def _add_new_centers(self):
        new_centers = self._normalized(self._choose_initial_centers())
        all_centers = tf.cond(tf.equal(self._num_selected, 0), lambda: new_centers,
                              lambda: tf.concat([self._cluster_centers, new_centers], 0))
        assigned = self._assign_centers(all_centers)
        return self._num_clusters - tf.shape(assigned)[0]

    def _initialize(self):
        with tf.control_dependencies([tf.assert_positive(self._num_remaining)]):
            num_now_remaining = self._add_new_centers()
            return tf.cond(tf.equal(num_now_remaining, 0),
                           lambda: tf.assign(self._cluster_centers_initialized, True),
                           _done_when(tf.no_op))

    def op(self):
        """The initialization op."""
        return tf.cond(
            tf.equal(self._num_remaining, 0),
            _done_when(lambda: tf.assert_equal(self._cluster_centers_initialized, True)),
            self._initialize)


def _done_when(make_op):
    """A cond branch running `make_op` and returning True after it: TF1's cond turns an
    Operation a branch returns into a tensor this way; ours wants tensors."""
    def branch():
        with tf.control_dependencies([make_op()]):
            return tf.constant(True)
    return branch

