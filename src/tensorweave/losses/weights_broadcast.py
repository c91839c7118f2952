"""TF1's weight-broadcasting rules for losses and metrics (`weights_broadcast_ops`).

`weights` may be a scalar, or have the rank of `values` with every dimension either 1 or
equal to the matching dimension of `values`. The rule is checked statically when the
shapes are known (ValueError at build time) and otherwise by an Assert at run time.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array import array_fill_ops, array_ops
from tensorweave.ops.control_flow import control_flow_ops, structure
from tensorweave.ops.debug import debug_ops
from tensorweave.ops.math import math_binary, reduction_ops

_ERROR_PREFIX = "weights can not be broadcast to values."


def _valid_nonscalar_shape(weights_rank, weights_shape, values_rank, values_shape):
    """A bool Tensor: same rank, and each weights dim is 1 or the values dim."""
    def same_rank_dims_ok():
        ok = math_binary.logical_or(
            math_binary.equal(weights_shape, 1),
            math_binary.equal(weights_shape, values_shape))
        return reduction_ops.reduce_all(ok)

    return control_flow_ops.cond(
        math_binary.equal(weights_rank, values_rank), same_rank_dims_ok,
        lambda: array_fill_ops.zeros_like(math_binary.equal(weights_rank, values_rank)),
        name="has_valid_nonscalar_shape")


def _received(weights: Tensor, values: Tensor) -> str:
    """The end of TF's static error messages: both tensors, with names and shapes."""
    return "Received weights=%s, values=%s" % (weights, values)


def assert_broadcastable(weights, values) -> Operation:
    """An op asserting that `weights` can be broadcast to `values` (TF1's rules).

    Raises:
      ValueError: the static shapes are known and `weights` cannot be broadcast.
    """
    with _graph.name_scope(None, "assert_broadcastable", (weights, values)) as scope:
        with _graph.name_scope(None, "weights", (weights,)) as weights_scope:
            weights = convert_to_tensor(weights, name=weights_scope)
            weights_shape = array_ops.shape(weights, name="shape")
            weights_rank = array_ops.rank(weights, name="rank")
        with _graph.name_scope(None, "values", (values,)) as values_scope:
            values = convert_to_tensor(values, name=values_scope)
            values_shape = array_ops.shape(values, name="shape")
            values_rank = array_ops.rank(values, name="rank")
        w_rank = weights.shape.ndims
        v_rank = values.shape.ndims
        if w_rank is not None and v_rank is not None:
            if w_rank == 0:
                return structure.no_op(name="static_scalar_check_success")
            if w_rank != v_rank:
                raise ValueError(
                    "%s values.rank=%d. weights.rank=%d. values.shape=%s. weights.shape=%s. "
                    "%s" % (_ERROR_PREFIX, v_rank, w_rank, values.shape, weights.shape,
                            _received(weights, values)))
            if weights.shape.is_fully_defined() and values.shape.is_fully_defined():
                w_dims = np.array(weights.shape.as_list(), np.int32)
                v_dims = np.array(values.shape.as_list(), np.int32)
                for i, (w, v) in enumerate(zip(w_dims, v_dims)):
                    if w not in (1, v):
                        raise ValueError(
                            "%s Mismatch at dim %d. values.shape=%s, weights.shape=%s. %s"
                            % (_ERROR_PREFIX, i, v_dims, w_dims,
                               _received(weights, values)))
                return structure.no_op(name="static_dims_check_success")
        is_scalar = math_binary.equal(0, weights_rank, name="is_scalar")
        data = [_ERROR_PREFIX, "weights.shape=", weights.name, weights_shape,
                "values.shape=", values.name, values_shape, "is_scalar=", is_scalar]
        is_valid = control_flow_ops.cond(
            is_scalar, lambda: is_scalar,
            lambda: _valid_nonscalar_shape(weights_rank, weights_shape, values_rank,
                                           values_shape),
            name="is_valid_shape")
        return debug_ops.Assert(is_valid, data, name=scope)


def broadcast_weights(weights, values) -> Tensor:
    """`weights` broadcast to the shape of `values` (after `assert_broadcastable`)."""
    with _graph.name_scope(None, "broadcast_weights", (weights, values)) as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        if (weights.shape.is_fully_defined() and values.shape.is_fully_defined()
                and weights.shape.is_compatible_with(values.shape)):
            return weights
        with _graph.control_dependencies((assert_broadcastable(weights, values),)):
            return math_binary.multiply(weights, array_fill_ops.ones_like(values), name=scope)

