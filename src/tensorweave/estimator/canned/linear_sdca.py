"""SDCA for the linear canned estimators (tensorflow_estimator's canned/linear_optimizer):
`tf.estimator.experimental.LinearSDCA`, passed as the `optimizer` of LinearClassifier
(binary) or LinearRegressor (one label).

Each step runs the SdcaOptimizerV2 op (train/sdca_ops.py) over the batch and adds its
deltas to "unshrunk" copies of the weights; a chief hook then copies them into the
model's weights, shrunk by l1 / l2. The examples' dual state lives in a dense hash table
keyed by the fingerprints of their ids (`_SdcaStateTable`).
"""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.estimator.canned import head as head_lib
from tensorweave.feature_column.base import CategoricalColumn, DenseColumn
from tensorweave.feature_column.builder import _LazyBuilder
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.state.partitioned_variables import PartitionedVariable
from tensorweave.train import sdca_ops

@tf_export("estimator.experimental.LinearSDCA")
class LinearSDCA:
    """Stochastic dual coordinate ascent for `LinearClassifier` (binary, logistic loss)
    and `LinearRegressor` (one label, squared loss): pass it as their `optimizer`.

    Args:
      example_id_column: the feature key of the examples' unique string ids (a vector).
      num_loss_partitions: the number of workers training concurrently.
      num_table_shards: the number of shards of the examples' state table (default 1).
      symmetric_l1_regularization: >= 0.
      symmetric_l2_regularization: > 0; typically larger than 1.
      adaptive: visit the examples in an order sampled by their duality gaps.
    """

    def __init__(self, example_id_column: str, num_loss_partitions: int = 1,
                 num_table_shards: Optional[int] = None,
                 symmetric_l1_regularization: float = 0.0,
                 symmetric_l2_regularization: float = 1.0, adaptive: bool = False):
        self._example_id_column = example_id_column
        self._num_loss_partitions = num_loss_partitions
        self._num_table_shards = num_table_shards
        self._symmetric_l1_regularization = symmetric_l1_regularization
        self._symmetric_l2_regularization = symmetric_l2_regularization
        self._adaptive = adaptive

    @staticmethod
    def _prune_and_unique_sparse_ids(id_weight_pair):
        """(example ids, feature ids, values) of a categorical column's ids: negative
        (out-of-vocabulary) ids dropped, an id repeated within an example merged into
        one entry whose value is the sum of the repeats' weights."""
        id_tensor = id_weight_pair.id_tensor
        if id_weight_pair.weight_tensor is not None:
            weight_tensor = id_weight_pair.weight_tensor.values
        else:
            weight_tensor = tf.ones([tf.shape(id_tensor.indices)[0]], tf.float32)
        example_ids = tf.reshape(id_tensor.indices[:, 0], [-1])
        flat_ids = tf.cast(tf.reshape(id_tensor.values, [-1]), dtype=tf.int64)
        is_id_valid = tf.greater_equal(flat_ids, 0)
        flat_ids = tf.boolean_mask(flat_ids, is_id_valid)
        example_ids = tf.boolean_mask(example_ids, is_id_valid)
        weight_tensor = tf.boolean_mask(weight_tensor, is_id_valid)
        # one id per (example, feature): project both into one int64 and dedup
        projection_length = tf.reduce_max(flat_ids) + 1
        projected_ids = projection_length * example_ids + flat_ids
        ids, idx = tf.unique(projected_ids)
        example_ids_filtered = tf.math.unsorted_segment_min(example_ids, idx,
                                                            tf.shape(ids)[0])
        reprojected_ids = ids - projection_length * example_ids_filtered
        weights = tf.reshape(tf.math.unsorted_segment_sum(weight_tensor, idx,
                                                          tf.shape(ids)[0]), [-1])
        return _SparseFeatureColumn(example_ids_filtered, reprojected_ids, weights)

    def get_train_step(self, cols_to_vars, weight_column, loss_type: str, feature_columns,
                       features, targets, bias_var, global_step):
        """(the `_SDCAModel`, its train op) for a linear model whose variables are
        `cols_to_vars` (column -> partitions) and `bias_var` (partitions)."""
        batch_size = tf.shape(targets)[0]
        builder = _LazyBuilder(features)
        dense_features, dense_weights = [], []
        sparse_features, sparse_weights = [], []
        for column in sorted(feature_columns, key=lambda c: c.name):
            if isinstance(column, CategoricalColumn):
                id_weight_pair = column._get_sparse_tensors(builder)
                sparse_features.append(self._prune_and_unique_sparse_ids(id_weight_pair))
                sparse_weights.append(cols_to_vars[column])
            elif isinstance(column, DenseColumn):
                if column._variable_shape.ndims != 1:
                    raise ValueError("Column %s has rank %d, larger than 1."
                                     % (type(column).__name__,
                                        column._variable_shape.ndims))
                dense_features.append(column._get_dense_tensor(builder))
                dense_weights.append(cols_to_vars[column])
            else:
                raise ValueError("LinearSDCA does not support column type %s."
                                 % type(column).__name__)
        dense_features.append(tf.ones([batch_size, 1]))  # the bias
        dense_weights.append(bias_var)
        if weight_column is None:
            example_weights = tf.ones([batch_size])
        else:
            key = getattr(weight_column, "key", weight_column)
            example_weights = tf.reshape(features[key], shape=[-1])
        examples = dict(sparse_features=sparse_features, dense_features=dense_features,
                        example_labels=tf.to_float(tf.reshape(targets, shape=[-1])),
                        example_weights=example_weights,
                        example_ids=features[self._example_id_column])
        model = _SDCAModel(
            examples, dict(sparse_features_weights=sparse_weights,
                           dense_features_weights=dense_weights),
            dict(symmetric_l1_regularization=self._symmetric_l1_regularization,
                 symmetric_l2_regularization=self._symmetric_l2_regularization,
                 adaptive=self._adaptive, num_loss_partitions=self._num_loss_partitions,
                 num_table_shards=self._num_table_shards, loss_type=loss_type))
        return model, model.minimize(global_step=global_step)


class _SparseFeatureColumn:
    """One sparse feature group of a batch: int64 example indices, int64 feature
    indices and float32 values (None: all 1), each `[nnz]`."""

    def __init__(self, example_indices, feature_indices, feature_values):
        with tf.name_scope(None, "SparseFeatureColumn", [example_indices, feature_indices]):
            self.example_indices = tf.convert_to_tensor(example_indices, tf.int64,
                                                        name="example_indices")
            self.feature_indices = tf.convert_to_tensor(feature_indices, tf.int64,
                                                        name="feature_indices")
        self.feature_values = None
        if feature_values is not None:
            with tf.name_scope(None, "SparseFeatureColumn", [feature_values]):
                self.feature_values = tf.convert_to_tensor(feature_values, tf.float32,
                                                           name="feature_values")


def _as_list(var) -> list:
    """The partitions of `var` (a list, a PartitionedVariable or one variable)."""
    return list(var) if isinstance(var, (list, tuple, PartitionedVariable)) else [var]


def _concat(var):
    parts = _as_list(var)
    return tf.convert_to_tensor(parts[0]) if len(parts) == 1 else tf.concat(parts, axis=0)


class _SdcaStateTable:
    """The examples' SDCA state [dual, primal loss, dual loss, weight], in `num_shards`
    dense hash tables ("ShardedMutableHashTable-<i>-of-<n>", checkpointed under TF's
    keys), keyed by the example id's whole 128-bit fingerprint (two int64s, as TF), an
    example's shard being |first int64| mod num_shards.

    TF's checkpoints of these tables restore here (their bucket arrays are imported
    entry by entry); TF cannot import ours, since its dense table takes its own bucket
    layout, which depends on its hash function.
    """

    def __init__(self, num_shards: int, name: str = "ShardedMutableHashTable"):
        with tf.name_scope(name, "sharded_mutable_hash_table"):
            self._shards = [
                tf.lookup.experimental.DenseHashTable(
                    tf.int64, tf.float32, default_value=[0.0, 0.0, 0.0, 0.0],
                    empty_key=[0, 0], deleted_key=[1, 1],
                    name="%s-%d-of-%d" % (name, i + 1, num_shards))
                for i in range(num_shards)]

    def _shard_indices(self, keys):
        return tf.cast(tf.floormod(tf.abs(keys[:, 0]), len(self._shards)), tf.int32)

    def size(self):
        with tf.name_scope(None, "sharded_mutable_hash_table_size"):
            return tf.add_n([shard.size() for shard in self._shards])

    def lookup(self, keys):
        if len(self._shards) == 1:
            return self._shards[0].lookup(keys)
        shard = self._shard_indices(keys)
        keys_per_shard = tf.dynamic_partition(keys, shard, len(self._shards))
        values = [t.lookup(k) for t, k in zip(self._shards, keys_per_shard)]
        positions = tf.dynamic_partition(tf.range(tf.shape(keys)[0]), shard,
                                         len(self._shards))
        return tf.dynamic_stitch(positions, values)

    def insert(self, keys, values):
        if len(self._shards) == 1:
            return self._shards[0].insert(keys, values)
        shard = self._shard_indices(keys)
        keys_per_shard = tf.dynamic_partition(keys, shard, len(self._shards))
        values_per_shard = tf.dynamic_partition(values, shard, len(self._shards))
        return tf.group(*[t.insert(k, v) for t, k, v in
                          zip(self._shards, keys_per_shard, values_per_shard)])

    def export_values(self) -> list:
        return [shard.export()[1] for shard in self._shards]


class _SDCAModel:
    """SDCA for one linear model (tensorflow_estimator's `_SDCAModel`): `minimize` runs
    the optimizer op on a batch and adds its deltas to the unshrunk slot variables;
    `update_weights` copies the slots into the model's variables, shrunk by l1 / l2.

    examples: sparse_features (list of `_SparseFeatureColumn`), dense_features (list of
      `[batch, width]` tensors), example_labels, example_weights, example_ids.
    variables: sparse_features_weights, dense_features_weights (lists of variables or
      lists of partitions).
    options: loss_type, symmetric_l1_regularization, symmetric_l2_regularization,
      num_loss_partitions, num_table_shards, adaptive.
    """

    def __init__(self, examples, variables, options):
        if not examples or not variables or not options:
            raise ValueError("examples, variables and options must all be specified.")
        if options["loss_type"] not in ("logistic_loss", "squared_loss", "hinge_loss",
                                        "smooth_hinge_loss", "poisson_loss"):
            raise ValueError("Unsupported loss_type: ", options["loss_type"])
        if options["symmetric_l2_regularization"] <= 0.0:
            raise ValueError("symmetric_l2_regularization should be positive.")
        if options["symmetric_l2_regularization"] <= 1.0:
            tf.logging.warn("symmetric_l2_regularization for SDCA should typically be "
                            "larger than for online optimization methods. Recommended "
                            "value is of the order of the average L2 norm of the "
                            "training examples.")
        if options["symmetric_l1_regularization"] < 0.0:
            raise ValueError("symmetric_l1_regularization should be non-negative.")
        self._examples = examples
        self._variables = variables
        self._options = options
        self._l1 = options["symmetric_l1_regularization"]
        self._l2 = options["symmetric_l2_regularization"]
        self._slots = {}
        for name in ("sparse_features_weights", "dense_features_weights"):
            self._slots[name] = [
                [tf.Variable(tf.zeros(v.get_shape(), tf.float32),
                             name=v.op.name + "_unshrunk") for v in _as_list(var)]
                for var in variables[name]]
        self._table = _SdcaStateTable(options.get("num_table_shards") or 1)
        tf.summary.scalar("approximate_duality_gap", self.approximate_duality_gap())
        tf.summary.scalar("examples_seen", self._table.size())

    def _all_weights(self):
        for name in ("sparse_features_weights", "dense_features_weights"):
            for var in self._variables[name]:
                for v in _as_list(var):
                    yield v

    def _l1_loss(self):
        with tf.name_scope("sdca/l1_loss"):
            sums = [tf.reduce_sum(tf.abs(tf.cast(tf.convert_to_tensor(v), tf.float64)))
                    for v in self._all_weights()]
            return self._l1 * tf.add_n(sums)

    def _l2_loss(self):
        with tf.name_scope("sdca/l2_loss"):
            sums = [tf.reduce_sum(tf.square(tf.cast(tf.convert_to_tensor(v), tf.float64)))
                    for v in self._all_weights()]
            return self._l2 * tf.add_n(sums) / 2.0

    def _gather_sparse_weights(self, slot, sparse_idx):
        """The slot's weights at `sparse_idx`, and for a partitioned slot how the ids
        split over its partitions (TF's div partitioning: the first `extras` partitions
        hold one id more)."""
        if len(slot) == 1:
            return tf.gather(tf.convert_to_tensor(slot[0]), sparse_idx), None
        sizes = [int(v.get_shape()[0]) for v in slot]
        num_partitions = len(slot)
        total = tf.constant(sum(sizes), tf.int64)
        per_partition = total // num_partitions
        extras = total % num_partitions
        assignments = tf.maximum(sparse_idx // (per_partition + 1),
                                 (sparse_idx - extras) // per_partition)
        new_ids = tf.where(assignments < extras, sparse_idx % (per_partition + 1),
                           (sparse_idx - extras) % per_partition)
        assignments = tf.cast(assignments, tf.int32)
        gather_ids = tf.dynamic_partition(new_ids, assignments, num_partitions)
        gathered = [tf.gather(tf.convert_to_tensor(v), ids) for v, ids in
                    zip(slot, gather_ids)]
        positions = tf.dynamic_partition(tf.range(tf.shape(new_ids)[0]), assignments,
                                         num_partitions)
        return tf.dynamic_stitch(positions, gathered), (assignments, gather_ids)

    def minimize(self, global_step=None, name=None):
        """The train op: one SdcaOptimizerV2 pass over the batch, its deltas added to the
        slots and the new example state stored; then `global_step` += 1."""
        with tf.name_scope(name, "sdca/minimize"):
            sparse_features = self._examples["sparse_features"]
            example_ids_hashed = sdca_ops.sdca_fprint(
                tf.convert_to_tensor(self._examples["example_ids"]))
            table_keys = example_ids_hashed
            example_state_data = self._table.lookup(table_keys)
            sparse_indices, sparse_weights, partitions = [], [], []
            for slot, sf in zip(self._slots["sparse_features_weights"], sparse_features):
                sparse_idx = tf.cast(tf.unique(tf.cast(sf.feature_indices, tf.int32))[0],
                                     tf.int64)
                sparse_indices.append(sparse_idx)
                gathered, split = self._gather_sparse_weights(slot, sparse_idx)
                sparse_weights.append(gathered)
                partitions.append(split)
            state, sparse_deltas, dense_deltas = sdca_ops.sdca_optimizer_v2(
                [sf.example_indices for sf in sparse_features],
                [sf.feature_indices for sf in sparse_features],
                [sf.feature_values for sf in sparse_features
                 if sf.feature_values is not None],
                [tf.convert_to_tensor(d) for d in self._examples["dense_features"]],
                tf.convert_to_tensor(self._examples["example_weights"]),
                tf.convert_to_tensor(self._examples["example_labels"]),
                sparse_indices, sparse_weights,
                [_concat(slot) for slot in self._slots["dense_features_weights"]],
                example_state_data, loss_type=self._options["loss_type"], l1=self._l1,
                l2=self._l2, num_loss_partitions=self._options.get("num_loss_partitions", 1),
                num_inner_iterations=1, adaptive=self._options.get("adaptive", True))
            with tf.control_dependencies([state]):
                update_ops = [self._table.insert(table_keys, state)]
                for slot, idx, delta, split in zip(self._slots["sparse_features_weights"],
                                                   sparse_indices, sparse_deltas,
                                                   partitions):
                    if split is None:
                        update_ops.append(tf.scatter_add(slot[0], idx, delta))
                        continue
                    assignments, gather_ids = split
                    deltas = tf.dynamic_partition(delta, assignments, len(slot))
                    update_ops += [tf.scatter_add(v, ids, d)
                                   for v, ids, d in zip(slot, gather_ids, deltas)]
                for slot, delta in zip(self._slots["dense_features_weights"], dense_deltas):
                    if len(slot) == 1:
                        update_ops.append(tf.assign_add(slot[0], delta))
                        continue
                    pieces = tf.split(delta, [int(v.get_shape()[0]) for v in slot])
                    update_ops += [tf.assign_add(v, d) for v, d in zip(slot, pieces)]
            if global_step is None:
                return tf.group(*update_ops)
            with tf.control_dependencies(update_ops):
                return tf.assign_add(global_step, 1, name=name).op

    def update_weights(self, train_op):
        """After `train_op`: the model's weights = the slots, shrunk by l1 / l2."""
        with tf.control_dependencies([train_op]):
            update_ops = []
            for name in ("sparse_features_weights", "dense_features_weights"):
                for var, slot in zip(self._variables[name], self._slots[name]):
                    update_ops += [v.assign(sv) for v, sv in zip(_as_list(var), slot)]
        if self._l1 <= 0:
            return tf.group(*update_ops)
        shrinkage = self._l1 / self._l2
        with tf.control_dependencies(update_ops):
            shrunk = [v.assign(tf.sign(v) * tf.maximum(0.0, tf.abs(v) - shrinkage))
                      for v in self._all_weights()]
            return tf.group(*shrunk)

    def approximate_duality_gap(self):
        """(primal loss + dual loss + l1 + 2 * l2) / sum of weights, over the examples
        seen so far."""
        with tf.name_scope("sdca/approximate_duality_gap"):
            shard_sums = []
            for values in self._table.export_values():
                with tf.control_dependencies(shard_sums):
                    shard_sums.append(tf.reduce_sum(tf.cast(values, tf.float64), 0))
            summed = tf.add_n(shard_sums)
            return (summed[1] + summed[2] + self._l1_loss()
                    + 2.0 * self._l2_loss()) / summed[3]


class _SDCAUpdateWeightsHook(tf.train.SessionRunHook):
    """Runs `update_weights` with every training step (a chief hook)."""

    def __init__(self, sdca_model, train_op):
        self._sdca_model = sdca_model
        self._train_op = train_op
        self._update_op = None

    def begin(self):
        self._update_op = self._sdca_model.update_weights(self._train_op)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._update_op)


def sdca_model_fn(features, labels, mode, head, feature_columns, optimizer, linear_logits):
    """The model_fn of a linear estimator trained by SDCA (in the caller's "linear"
    variable scope), given `linear_logits`: (logits, cols_to_vars, bias) of the linear
    model of one logit; in TRAIN, the SDCA train op and the hook that writes the shrunk
    weights."""
    if isinstance(head, head_lib._BinaryLogisticHead):
        loss_type = "logistic_loss"
    elif isinstance(head, head_lib._RegressionHead):
        assert head.logits_dimension == 1
        loss_type = "squared_loss"
    else:
        raise ValueError("Unsupported head type: {}".format(head))
    logits, cols_to_vars, bias = linear_logits
    if mode != tf.estimator.ModeKeys.TRAIN:
        return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                          logits=logits)
    sdca_model, train_op = optimizer.get_train_step(
        cols_to_vars, head._weight_column, loss_type, feature_columns, features, labels,
        bias, tf.train.get_global_step())
    spec = head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      train_op_fn=lambda unused_loss: train_op,
                                      logits=logits)
    hook = _SDCAUpdateWeightsHook(sdca_model, train_op)
    return spec._replace(training_chief_hooks=tuple(spec.training_chief_hooks) + (hook,))
