"""RaggedTensor and tf.ragged: tensors whose rows have different lengths.

Importing the package registers the class, its operators, tf.RaggedTensorSpec and the
tf.ragged exports (modules in dependency order), and routes the public elementwise ops,
reductions, concat, stack and the array ops of ragged_array_dispatch (gather, where,
shape, tile, ...) to their ragged versions (ragged_dispatch). tf.map_fn hands ragged
calls to ragged_map_ops. Every op is a composition of dense ops on the parts, but for
ragged_to_tensor_op: the kernel of TF's RaggedTensorToTensor, which imported TF 2 graphs
call.
"""
from tensorweave.ops.ragged import (  # noqa: F401
    row_partition, ragged_tensor, ragged_tensor_value, ragged_conversion_ops,
    ragged_array_ops, ragged_getitem, ragged_math_ops, ragged_factory_ops,
    ragged_group_ops, ragged_reduction_ops, ragged_tensor_spec, ragged_dispatch,
    ragged_to_tensor_op)
