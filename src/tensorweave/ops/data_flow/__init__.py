"""Data-flow resources shared by steps: queues, TensorArrays, stacks, accumulators,
lookup tables, mutexes (tf.CriticalSection), TF 2.x's TensorLists, and the batching of
concurrent calls of a function (tf.nondifferentiable_batch_function).

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.data_flow import (  # noqa: F401
    queue_resources, queue_ops, queue_classes, tensor_array_ops, tensor_array_class,
    tensor_array_spec, tensor_array_grad, stack_ops, session_ops, accumulator_ops,
    lookup_ops, vocabulary_table, mutex_ops, critical_section, tensor_list, list_ops,
    list_ops_grad, batch_ops)
