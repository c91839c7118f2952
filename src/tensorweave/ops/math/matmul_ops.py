"""matmul (MatMul, BatchMatMulV2), matvec and tensordot. Einsum lives in einsum_ops.

Kernels accumulate half-precision inputs in float32 (as TF's GPU/CPU kernels do) and
keep integer products in their own dtype.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework import shapes as _shapes
from tensorweave.framework.shapes import Dimension, TensorShape, unknown_shape
from tensorweave.ops import onednn
from tensorweave.ops.math.blas import LARGE_PRODUCT_MACS, SPLIT_MACS, large_product

MATMUL_TYPES = (_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64,
                _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64, _dt.complex64, _dt.complex128)
LOW_PRECISION = (np.dtype(np.float16), np.dtype(_dt.bfloat16.as_numpy_dtype))
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _merge_dim(a: Dimension, b: Dimension) -> Dimension:
    if a.value is not None and b.value is not None and a.value != b.value:
        raise ValueError("Dimensions must be equal, but are %d and %d" % (a.value, b.value))
    return a if a.value is not None else b


def _as_float32(x):
    return x.astype(np.float32) if x.dtype in LOW_PRECISION else x


def _size_str(shape) -> str:
    return "[%s]" % ",".join(str(d) for d in shape)


# --- MatMul -------------------------------------------------------------------------------
def _with_rank(shape: TensorShape, rank: int, at_least: bool = False) -> TensorShape:
    return (_shapes.with_rank_at_least if at_least else _shapes.with_rank)(shape, rank)


def _matmul_shape(op) -> TensorShape:
    a = _with_rank(op.inputs[0].shape, 2)
    b = _with_rank(op.inputs[1].shape, 2)
    ta, tb = op._get_attr("transpose_a"), op._get_attr("transpose_b")
    m, ka = (a[1], a[0]) if ta else (a[0], a[1])
    kb, n = (b[1], b[0]) if tb else (b[0], b[1])
    _merge_dim(ka, kb)
    return TensorShape([m, n])


register_op("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
            attrs={"T": TypeAttr(MATMUL_TYPES), "transpose_a": False, "transpose_b": False},
            shape=_matmul_shape)


def _not_multipliable(ctx, a, b) -> errors.InvalidArgumentError:
    """TF's error for MatMul inputs of the wrong rank or sizes (TF 2.21's text: it says
    ">= 2" for a rank-3 input too)."""
    for k, v in enumerate((a, b)):
        if v.ndim != 2:
            return errors.InvalidArgumentError(None, ctx.op,
                                               "In[%d] ndims must be >= 2" % k)
    return errors.InvalidArgumentError(
        None, ctx.op, "Matrix size-incompatible: In[0]: %s, In[1]: %s"
        % (_size_str(a.shape), _size_str(b.shape)))


@kernel("MatMul", cheap=False, threaded=onednn.runs_float32)
def _matmul_kernel(ctx, a, b):
    attrs = ctx.attrs
    x = a.T if attrs["transpose_a"] else a
    y = b.T if attrs["transpose_b"] else b
    xs, ys = x.shape, y.shape
    if x.ndim != 2 or y.ndim != 2 or xs[1] != ys[0]:
        raise _not_multipliable(ctx, a, b)
    dt = a.dtype
    macs = xs[0] * xs[1] * ys[1]
    if (dt is _F32 or dt is _F64) and b.dtype is dt:
        # one BLAS call: less dispatch overhead than matmul; a product OpenBLAS runs on
        # one thread (the hot case of loops over small matrices) skips even the no-op
        # context. One it splits must not: under contention it must go to one thread
        # (a [64, 172] x [172, 64] gradient product took 1-12 ms split, 25 us not)
        if macs < SPLIT_MACS:
            return ctx.xp.dot(x, y)
        if dt is _F32 and ctx.xp is np:
            # None where oneDNN is missing (ops/onednn.py); below LARGE_PRODUCT_MACS,
            # also where its kernels do not outrun OpenBLAS's on one thread
            out = onednn.matmul(x, y) if macs >= LARGE_PRODUCT_MACS else \
                onednn.matmul_one_thread(x, y)
            if out is not None:
                return out
        with large_product(macs):
            return ctx.xp.dot(x, y)
    with large_product(macs):
        out = ctx.xp.matmul(_as_float32(x), _as_float32(y))
    return out.astype(dt, copy=False)


@gradient("MatMul")
def _matmul_grad(op, grad):
    from tensorweave.ops.math import math_unary
    a, b = op.inputs
    if a.dtype.is_complex:
        a, b = math_unary.conj(a), math_unary.conj(b)
    ta, tb = op._get_attr("transpose_a"), op._get_attr("transpose_b")
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True),
            matmul(grad, a, transpose_a=True, transpose_b=True)]


# --- BatchMatMulV2 ------------------------------------------------------------------------
def _broadcast_batch(a: TensorShape, b: TensorShape) -> TensorShape:
    la, lb = a.dims, b.dims
    n = max(len(la), len(lb))
    la = [Dimension(1)] * (n - len(la)) + list(la)
    lb = [Dimension(1)] * (n - len(lb)) + list(lb)
    out = []
    for x, y in zip(la, lb):
        if x.value == 1:
            out.append(y)
        elif y.value == 1:
            out.append(x)
        elif x.value is None or y.value is None:
            # an unknown dimension broadcasts against a known one > 1 (TF's rule)
            out.append(x if x.value is not None else y)
        else:
            out.append(_merge_dim(x, y))
    return TensorShape(out)


def _batch_matmul_shape(op) -> TensorShape:
    a = _with_rank(op.inputs[0].shape, 2, at_least=True)
    b = _with_rank(op.inputs[1].shape, 2, at_least=True)
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    adj_x, adj_y = op._get_attr("adj_x"), op._get_attr("adj_y")
    m, ka = (a[-1], a[-2]) if adj_x else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if adj_y else (b[-2], b[-1])
    _merge_dim(ka, kb)
    batch = _broadcast_batch(TensorShape(a.dims[:-2]), TensorShape(b.dims[:-2]))
    return batch.concatenate([m, n])


register_op("BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(MATMUL_TYPES), "adj_x": False, "adj_y": False},
            shape=_batch_matmul_shape)


def _adjoint(xp, x):
    x = xp.swapaxes(x, -1, -2)
    return xp.conj(x) if x.dtype.kind == "c" else x


@kernel("BatchMatMulV2", cheap=False, threaded=onednn.runs_float32)
def _batch_matmul_kernel(ctx, a, b):
    xp = ctx.xp
    if a.ndim < 2 or b.ndim < 2:
        raise errors.InvalidArgumentError(
            None, ctx.op, "In[%d] ndims must be >= 2: %d" % ((0, a.ndim) if a.ndim < 2
                                                              else (1, b.ndim)))
    x = _adjoint(xp, a) if ctx.attrs["adj_x"] else a
    y = _adjoint(xp, b) if ctx.attrs["adj_y"] else b
    if x.shape[-1] != y.shape[-2]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Matrix size-incompatible: In[0]: %s, In[1]: %s"
            % (_size_str(a.shape), _size_str(b.shape)))
    if x.dtype is _F32 and y.dtype is _F32 and xp is np and \
            x.size * y.shape[-1] >= LARGE_PRODUCT_MACS:
        out = onednn.matmul(x, y)  # None where oneDNN is missing (ops/onednn.py)
        if out is not None:
            return out
    try:
        out = xp.matmul(_as_float32(x), _as_float32(y))
    except ValueError:
        raise errors.InvalidArgumentError(
            None, ctx.op, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s"
            % (_size_str(a.shape), _size_str(b.shape))) from None
    return out.astype(a.dtype, copy=False)


@gradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    from tensorweave.ops.math import math_grad_util
    a, b = op.inputs
    adj_x, adj_y = op._get_attr("adj_x"), op._get_attr("adj_y")
    if not adj_x and not adj_y:
        ga, gb = matmul(grad, b, adjoint_b=True), matmul(a, grad, adjoint_a=True)
    elif not adj_x and adj_y:
        ga, gb = matmul(grad, b), matmul(grad, a, adjoint_a=True)
    elif adj_x and not adj_y:
        ga, gb = matmul(b, grad, adjoint_b=True), matmul(a, grad)
    else:
        ga = matmul(b, grad, adjoint_a=True, adjoint_b=True)
        gb = matmul(grad, a, adjoint_a=True, adjoint_b=True)
    # sum over the batch dimensions that were broadcast
    return [_unbroadcast_batch(math_grad_util, ga, a),
            _unbroadcast_batch(math_grad_util, gb, b)]


def _unbroadcast_batch(util, g: Tensor, x: Tensor):
    if g.shape.is_fully_defined() and x.shape.is_fully_defined() and \
            g.shape.as_list() == x.shape.as_list():
        return g
    return util.unbroadcast(g, x, g)[0]


# --- builders -----------------------------------------------------------------------------
@tf_export("sparse_matmul")
def sparse_matmul(a, b, transpose_a: bool = False, transpose_b: bool = False,
                  a_is_sparse: bool = False, b_is_sparse: bool = False,
                  name: Optional[str] = None) -> Tensor:
    """Multiplies matrix `a` by matrix `b` (TF1 `tf.sparse_matmul`, deprecated).

    TF1 kept a separate kernel for inputs with many zeros; the `*_is_sparse` flags are
    only hints, so this is `tf.matmul` (a MatMul op) with the same arguments.

    Args:
      a, b: rank-2 tensors of the same float type.
      transpose_a, transpose_b: transpose the matrices before multiplying.
      a_is_sparse, b_is_sparse: hints; they change nothing.
      name: op name.

    Returns:
      The product, a Tensor of the inputs' type.
    """
    return matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b,
                  a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse,
                  name=name or "SparseMatMul")


@tf_export("matmul", "linalg.matmul")
def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: Optional[str] = None) -> Tensor:
    """Multiplies matrix `a` by matrix `b` (TF1 `tf.matmul`).

    Rank-2 inputs build a MatMul op; inputs of rank > 2 (or of unknown rank) build a
    BatchMatMulV2 op, whose leading (batch) dimensions broadcast. `adjoint_*` is the
    conjugate transpose. `a_is_sparse`/`b_is_sparse` are hints and change nothing.

    Args:
      a: a tensor of type bfloat16, float16, float32, float64, int32, int64, uint8..64,
        complex64 or complex128, of rank >= 2.
      b: a tensor of the same type, of rank >= 2.
      transpose_a, transpose_b: transpose the matrices before multiplying.
      adjoint_a, adjoint_b: conjugate and transpose the matrices before multiplying.
      a_is_sparse, b_is_sparse: accepted for compatibility.
      name: a name for the operation.

    Returns:
      A tensor of the type of `a`: [..., M, N].

    Raises:
      ValueError: both transpose_x and adjoint_x, or incompatible static shapes.
      TypeError: mismatched or unsupported dtypes.
    """
    with name_scope(name, "MatMul", [a, b]) as scope:
        if transpose_a and adjoint_a:
            raise ValueError("Only one of `transpose_a` and `adjoint_a` can be True. Received "
                             "`transpose_a`=True, `adjoint_a`=True.")
        if transpose_b and adjoint_b:
            raise ValueError("Only one of `transpose_b` and `adjoint_b` can be True. Received "
                             "`transpose_b`=True, `adjoint_b`=True.")
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", preferred_dtype=a.dtype)
        ra, rb = a.shape.ndims, b.shape.ndims
        batched = ra is None or rb is None or ra > 2 or rb > 2
        # the op conjugates only for adj_x/adj_y (BatchMatMulV2); everything else is
        # expressed as a plain transpose of (possibly conjugated) operands.
        conj_a = a.dtype.is_complex and (transpose_a if batched else adjoint_a)
        conj_b = b.dtype.is_complex and (transpose_b if batched else adjoint_b)
        if conj_a or conj_b:
            from tensorweave.ops.math import math_unary
            a = math_unary.conj(a) if conj_a else a
            b = math_unary.conj(b) if conj_b else b
        flip_a = bool(transpose_a or adjoint_a)
        flip_b = bool(transpose_b or adjoint_b)
        if batched:
            return apply_op("BatchMatMulV2", [a, b], {"adj_x": flip_a, "adj_y": flip_b},
                            name=scope).outputs[0]
        return apply_op("MatMul", [a, b], {"transpose_a": flip_a, "transpose_b": flip_b},
                        name=scope).outputs[0]


@tf_export("linalg.matvec")
def matvec(a, b, transpose_a: bool = False, adjoint_a: bool = False,
           a_is_sparse: bool = False, b_is_sparse: bool = False,
           name: Optional[str] = None) -> Tensor:
    """Multiplies matrix `a` by vector `b` (TF `tf.linalg.matvec`): [..., M, N] x [..., N]
    -> [..., M]. Takes the arguments of `matmul` for `a`.
    """
    from tensorweave.ops.array import array_ops
    with name_scope(name, "MatVec", [a, b]):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", preferred_dtype=a.dtype)
        out = matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a,
                     adjoint_a=adjoint_a)
        return array_ops.squeeze(out, [-1])


# tensordot and einsum (split for size)
