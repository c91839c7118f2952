"""Matrix functions: the matrix exponential (op MatrixExponential, TF1's op name for it).

Kernel: scaling and squaring with the degree-13 Pade approximant (Higham 2005): A is
scaled by 2^-s so that its 1-norm is at most 5.37, the approximant is solved for, and
the result squared s times (s per matrix; the squarings run for the whole batch with a
mask). Gradient: the adjoint of the Frechet derivative, read from the exponential of a
block matrix: dA = expm([[A^H, G], [0, A^H]])[:n, n:].
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.ops.linalg import matrix_ops
from tensorweave.ops.linalg.linalg_ops import _LINALG_TYPES, _check_square, _square_shape, \
    _work

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152

register_op("MatrixExponential", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_LINALG_TYPES)}, shape=_square_shape)


def _expm(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    eye = np.eye(n, dtype=a.dtype)
    norm1 = np.abs(a).sum(axis=-2).max(axis=-1) if n else np.zeros(a.shape[:-2])
    with np.errstate(divide="ignore"):
        squarings = np.maximum(0, np.ceil(np.log2(norm1 / _THETA13))).astype(np.int64)
    squarings = np.where(np.isfinite(norm1), squarings, 0)
    a = a / (2.0 ** squarings)[..., None, None].astype(a.real.dtype)
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 +
             b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + \
        b[2] * a2 + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for step in range(int(squarings.max()) if squarings.size else 0):
        more = (squarings > step)[..., None, None]
        r = np.where(more, r @ r, r)
    return r


@kernel("MatrixExponential", cheap=False)
def _expm_kernel(ctx, x):
    _check_square(ctx, x)
    if x.size == 0:
        return x.copy()
    return _expm(_work(x)).astype(x.dtype, copy=False)


@gradient("MatrixExponential")
def _expm_grad(op, grad):
    from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
    a = op.inputs[0]
    a_h = matrix_ops.adjoint(a)
    top = array_join_ops.concat([a_h, grad], -1)
    bottom = array_join_ops.concat([array_fill_ops.zeros_like(a_h), a_h], -1)
    block = expm(array_join_ops.concat([top, bottom], -2))
    n = a.shape.as_list()[-1] if a.shape.ndims else None
    if n is None:
        n = array_ops.shape(a)[-1]
    return [block[..., :n, n:]]


@tf_export("linalg.expm")
def expm(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """Computes the matrix exponential of each square matrix (TF1 `tf.linalg.expm`).

    Args:
      input: a Tensor [..., M, M] of float16/32/64 or complex64/128.
      name: name scope (default "matrix_exponential").

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      ValueError: `input` is not a float or complex tensor.
    """
    with _graph.name_scope(name, "matrix_exponential", [input]):
        input = convert_to_tensor(input, name="input")
        if input.dtype not in _LINALG_TYPES:
            raise ValueError("tf.linalg.expm does not support matrices of type %s"
                             % input.dtype)
        return apply_op("MatrixExponential", [input], name="MatrixExponential").outputs[0]
