"""`tf.distribute.ReduceOp`, `InputReplicationMode` and `InputContext`: the small value
types that strategies, optimizers and input pipelines share."""
from __future__ import annotations

import enum

from tensorweave.framework.api_export import tf_export


@tf_export("distribute.ReduceOp")
class ReduceOp(enum.Enum):
    """How values from the replicas are combined: SUM adds them, MEAN averages them."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation) -> "ReduceOp":
        """The ReduceOp of a `tf.VariableAggregation` (SUM or MEAN).

        Raises:
          ValueError: the aggregation has no ReduceOp (NONE, ONLY_FIRST_REPLICA).
        """
        from tensorweave.ops.state.variables import VariableAggregation
        mapping = {VariableAggregation.SUM: ReduceOp.SUM,
                   VariableAggregation.MEAN: ReduceOp.MEAN}
        if aggregation not in mapping:
            raise ValueError("Could not convert from `tf.VariableAggregation` %s to "
                             "`tf.distribute.ReduceOp` type" % aggregation)
        return mapping[aggregation]


def as_reduce_op(reduce_op) -> ReduceOp:
    """`reduce_op` as a ReduceOp; TF also accepts the strings "SUM"/"MEAN" (any case).

    Raises:
      ValueError: not a ReduceOp or one of those strings.
    """
    if isinstance(reduce_op, ReduceOp):
        return reduce_op
    if isinstance(reduce_op, str) and reduce_op.upper() in ("SUM", "MEAN"):
        return ReduceOp(reduce_op.upper())
    raise ValueError("reduce_op must be a tf.distribute.ReduceOp (SUM or MEAN), got %r"
                     % (reduce_op,))


@tf_export("distribute.InputReplicationMode")
class InputReplicationMode(enum.Enum):
    """How `input_fn`s are replicated: PER_WORKER calls it once per worker (the only
    mode TF1 strategies take)."""

    PER_WORKER = "PER_WORKER"


@tf_export("distribute.InputContext")
class InputContext:
    """What an `input_fn` is told about the input pipeline it builds.

    Args:
      num_input_pipelines: the number of input pipelines (workers).
      input_pipeline_id: this pipeline's index, in [0, num_input_pipelines).
      num_replicas_in_sync: the number of replicas that consume the pipelines.
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0,
                 num_replicas_in_sync: int = 1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """`global_batch_size / num_replicas_in_sync`.

        Raises:
          ValueError: the global batch does not divide evenly among the replicas.
        """
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError("The `global_batch_size` %r is not divisible by "
                             "`num_replicas_in_sync` %r " %
                             (global_batch_size, self._num_replicas_in_sync))
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self):
        return "tf.distribute.InputContext(input pipeline id {}, total: {})".format(
            self.input_pipeline_id, self.num_input_pipelines)
