"""Neural-network ops (`tf.nn`): activations, softmax, losses, convolution, pooling,
embeddings, normalization (LRN, fused batch norm), CTC (loss, greedy and beam search
decoders), fractional pooling, the quantized inference ops (quantized_nn_ops) and the nn
composites.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.nn import (  # noqa: F401
    nn_ops, nn_softmax, nn_impl, nn_losses, conv_ops, pooling_ops, pooling_v2_ops,
    embedding_ops, conv_nd_ops, depthwise_ops, pooling_nd_ops, pooling_argmax_ops,
    morphology_ops, norm_ops, batch_norm_ops, ctc_ops, ctc_beam_search, nn_stats,
    sampled_loss_ops, fractional_pool_ops, quantized_nn_ops, stateless_dropout)
