"""The LOSSES collection helpers of `tf.losses` (TF1's `losses/util.py`)."""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor
from tensorweave.ops.array import constant_op
from tensorweave.ops.math import math_ops


@tf_export("losses.add_loss")
def add_loss(loss, loss_collection=GraphKeys.LOSSES) -> None:
    """Adds `loss` to the collection `loss_collection` (nothing when it is falsy).

    Args:
      loss: a loss Tensor.
      loss_collection: the collection name; None or "" adds it nowhere.
    """
    if loss_collection:
        _graph.add_to_collection(loss_collection, loss)


@tf_export("losses.get_losses")
def get_losses(scope: Optional[str] = None, loss_collection=GraphKeys.LOSSES) -> List[Tensor]:
    """The losses in `loss_collection` whose names match `scope` (a regex prefix).

    Returns:
      A list of loss Tensors.
    """
    return _graph.get_collection(loss_collection, scope)


@tf_export("losses.get_regularization_losses")
def get_regularization_losses(scope: Optional[str] = None) -> List[Tensor]:
    """The tensors of GraphKeys.REGULARIZATION_LOSSES matching `scope`.

    Returns:
      A list of regularization loss Tensors.
    """
    return _graph.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


@tf_export("losses.get_regularization_loss")
def get_regularization_loss(scope: Optional[str] = None,
                            name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses matching `scope` (a float32 0.0 if none).

    Returns:
      A scalar Tensor.
    """
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant_op.constant(0.0)


@tf_export("losses.get_total_loss")
def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: Optional[str] = None) -> Tensor:
    """The sum of the losses in GraphKeys.LOSSES (and of the regularization losses).

    Returns:
      A scalar Tensor.

    Raises:
      ValueError: there is no loss to add.
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)
