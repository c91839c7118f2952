"""Matrix structure ops: diagonals (MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3 and the
rank-doubling Diag/DiagPart), band parts, cross products; eye, matrix_transpose, adjoint
and trace written over them.

Diagonals follow TF's V3 layout: k = (lower, upper) selects diagonals d = col - row in
[lower, upper]; a band is stored as [..., upper - lower + 1, max_diag_len] with the
diagonal d in row upper - d, shorter diagonals padded on the side named by `align`
("RIGHT_LEFT": superdiagonals aligned right, subdiagonals left). One index map
(`_band_layout`) serves all three ops; kernels gather with it (no Python loops).
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, unknown_shape, \
    with_rank, with_rank_at_least

_ALIGNS = ("LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT")
_INDEX_TYPES = (_dt.int32, _dt.int64)


def _invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, message)


# --- the band layout ------------------------------------------------------------------------
def _max_diag_len(rows: int, cols: int, lower: int, upper: int) -> int:
    return min(rows + min(upper, 0), cols - max(lower, 0))


def _band_layout(rows: int, cols: int, lower: int, upper: int, align: str):
    """For each matrix cell (r, c): whether it lies in the band, and the (diagonal row,
    position) of its value in the packed [num_diags, max_diag_len] layout."""
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    d = c - r
    in_band = (d >= lower) & (d <= upper)
    max_len = _max_diag_len(rows, cols, lower, upper)
    diag_len = np.minimum(rows + np.minimum(d, 0), cols - np.maximum(d, 0))
    super_right = align in ("RIGHT_LEFT", "RIGHT_RIGHT")
    sub_right = align in ("LEFT_RIGHT", "RIGHT_RIGHT")
    right = np.where(d >= 0, super_right, sub_right)
    pos = np.minimum(r, c) + np.where(right, max_len - diag_len, 0)
    diag_row = upper - d
    return in_band, np.where(in_band, diag_row, 0), np.where(in_band, pos, 0)


def _k_pair(ctx, k: np.ndarray):
    k = np.asarray(k).reshape(-1)
    if k.size not in (1, 2):
        raise _invalid(ctx, "diag_index must be a scalar or vector with one or two "
                       "elements. Received diag_index of size %d" % k.size)
    lower, upper = int(k[0]), int(k[-1])
    if lower > upper:
        raise _invalid(ctx, "lower_diag_index must not be larger than upper_diag_index: "
                       "%d > %d" % (lower, upper))
    return lower, upper


def _packed(diagonal: np.ndarray, lower: int, upper: int) -> np.ndarray:
    """The diagonal input as [..., num_diags, max_diag_len]."""
    return diagonal[..., None, :] if lower == upper else diagonal


def _static_k(t: Tensor):
    v = tensor_util.constant_value(t)
    if v is None:
        return None
    v = np.asarray(v).reshape(-1)
    if v.size not in (1, 2):
        raise ValueError("diag_index must be a scalar or vector with one or two elements. "
                         "Received diag_index of size %d" % v.size)
    if int(v[0]) > int(v[-1]):
        raise ValueError("lower_diag_index is greater than upper_diag_index")
    return int(v[0]), int(v[-1])


def _static_int(t: Tensor) -> Optional[int]:
    v = tensor_util.constant_value(t)
    return None if v is None else int(np.asarray(v).reshape(-1)[0])


# --- MatrixDiagV3 ---------------------------------------------------------------------------
def _diag_matrix_size(rows: int, cols: int, max_len: int, lower: int,
                      upper: int) -> Tuple[int, int, Optional[str]]:
    """MatrixDiag's output [rows, cols] for diagonals lower..upper of length max_len
    (-1: the smallest size that holds them), and what is wrong with the sizes given:
    "rows" or "cols" (too small), "inconsistent", or None."""
    min_rows, min_cols = max_len - min(upper, 0), max_len + max(lower, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows:
        return rows, cols, "rows"
    if cols < min_cols:
        return rows, cols, "cols"
    if rows != min_rows and cols != min_cols:
        return rows, cols, "inconsistent"
    return rows, cols, None


def _matrix_diag_shape(op):
    diag = op.inputs[0].shape
    k = _static_k(op.inputs[1])
    if k is None or diag.ndims is None:
        return unknown_shape()
    lower, upper = k
    diag = with_rank_at_least(diag, 1 if lower == upper else 2)
    dims = diag.as_list()
    max_len = dims[-1]
    batch = dims[:-1] if lower == upper else dims[:-2]
    if lower != upper and dims[-2] is not None and dims[-2] != upper - lower + 1:
        raise ValueError("The number of rows of `diagonal` doesn't match the number of "
                         "diagonals implied from `d_lower` and `d_upper`.\nnum_diags = %d, "
                         "d_lower = %d, d_upper = %d" % (dims[-2], lower, upper))
    rows, cols = _static_int(op.inputs[2]), _static_int(op.inputs[3])
    if max_len is None or rows is None or cols is None:
        return TensorShape(batch + [None, None])
    rows, cols, problem = _diag_matrix_size(rows, cols, max_len, lower, upper)
    if problem is not None:
        raise ValueError({"rows": "num_rows is too small",
                          "cols": "num_cols is too small",
                          "inconsistent": "num_rows and num_cols are not consistent with "
                                          "d_lower, d_upper, and diagonal"}[problem])
    return TensorShape(batch + [rows, cols])


register_op("MatrixDiagV3", inputs=["diagonal: T", "k: int32", "num_rows: int32",
                                    "num_cols: int32", "padding_value: T"],
            outputs=["output: T"], attrs={"T": TypeAttr(), "align": "RIGHT_LEFT"},
            shape=_matrix_diag_shape)


@kernel("MatrixDiagV3")
def _matrix_diag_kernel(ctx, diagonal, k, num_rows, num_cols, padding_value):
    lower, upper = _k_pair(ctx, k)
    if np.ndim(padding_value) != 0:
        raise _invalid(ctx, "padding_value must be a scalar")
    min_dims = 1 if lower == upper else 2
    if diagonal.ndim < min_dims:
        raise _invalid(ctx, "diagonal must be at least %dD" % min_dims)
    packed = _packed(diagonal, lower, upper)
    if packed.shape[-2] != upper - lower + 1:
        raise _invalid(ctx, "The number of diagonals provided in the input does not match "
                       "the lower_diag_index and upper_diag_index range.")
    max_len = packed.shape[-1]
    rows, cols, problem = _diag_matrix_size(int(num_rows), int(num_cols), max_len, lower,
                                            upper)
    if problem is None and _max_diag_len(rows, cols, lower, upper) != max_len:
        problem = "inconsistent"
    if problem is not None:
        raise _invalid(ctx, {"rows": "The number of rows is too small.",
                             "cols": "The number of columns is too small.",
                             "inconsistent": "The number of rows or columns is not "
                                             "consistent with the specified d_lower, "
                                             "d_upper, and diagonal."}[problem])
    in_band, diag_row, pos = _band_layout(rows, cols, lower, upper, ctx.attrs["align"])
    values = packed[..., diag_row, pos]
    return np.where(in_band, values, padding_value).astype(diagonal.dtype, copy=False)


# --- MatrixDiagPartV3 -----------------------------------------------------------------------
def _matrix_diag_part_shape(op):
    inp = op.inputs[0].shape
    k = _static_k(op.inputs[1])
    if inp.ndims is None:
        return unknown_shape()
    inp = with_rank_at_least(inp, 2)
    dims = inp.as_list()
    rows, cols = dims[-2], dims[-1]
    if k is None:
        return unknown_shape()
    lower, upper = k
    if rows is None or cols is None:
        max_len = None
    else:
        if rows and not -rows < lower:
            raise ValueError("lower_diag_index is out of bound: %d. It must be between %d "
                             "and %d" % (lower, -rows, cols))
        if cols and not upper < cols:
            raise ValueError("upper_diag_index is out of bound: %d It must be between %d "
                             "and %d" % (upper, -rows, cols))
        max_len = _max_diag_len(rows, cols, lower, upper)
    if lower == upper:
        return TensorShape(dims[:-2] + [max_len])
    return TensorShape(dims[:-2] + [upper - lower + 1, max_len])


register_op("MatrixDiagPartV3", inputs=["input: T", "k: int32", "padding_value: T"],
            outputs=["diagonal: T"], attrs={"T": TypeAttr(), "align": "RIGHT_LEFT"},
            shape=_matrix_diag_part_shape)


def _check_band(ctx, rows: int, cols: int, lower: int, upper: int) -> None:
    if (rows or cols) and not (-rows < lower <= upper < cols) and \
            not (rows == 0 or cols == 0):
        raise _invalid(ctx, "diag_index is out of bound: [%d, %d]. It must be between %d "
                       "and %d" % (lower, upper, -rows, cols))


def _matrix_band(ctx, x, k) -> Tuple[int, int, int, int, int]:
    """Checks a matrix input and its diagonals `k` at run time; returns (lower, upper,
    rows, cols, the longest diagonal's length)."""
    if x.ndim < 2:
        raise _invalid(ctx, "input must be at least 2-dim, received shape: [%s]"
                       % ",".join(map(str, x.shape)))
    lower, upper = _k_pair(ctx, k)
    rows, cols = x.shape[-2:]
    _check_band(ctx, rows, cols, lower, upper)
    return lower, upper, rows, cols, max(_max_diag_len(rows, cols, lower, upper), 0)


@kernel("MatrixDiagPartV3")
def _matrix_diag_part_kernel(ctx, x, k, padding_value):
    lower, upper, rows, cols, max_len = _matrix_band(ctx, x, k)
    align = ctx.attrs["align"]
    d = upper - np.arange(upper - lower + 1)[:, None]  # [num_diags, 1]
    t = np.arange(max_len)[None, :]
    diag_len = np.minimum(rows + np.minimum(d, 0), cols - np.maximum(d, 0))
    right = np.where(d >= 0, align in ("RIGHT_LEFT", "RIGHT_RIGHT"),
                     align in ("LEFT_RIGHT", "RIGHT_RIGHT"))
    j = t - np.where(right, max_len - diag_len, 0)
    valid = (j >= 0) & (j < diag_len)
    r = np.where(valid, j - np.minimum(d, 0), 0)
    c = np.where(valid, j + np.maximum(d, 0), 0)
    if x.shape[-1] == 0 or x.shape[-2] == 0:
        out = np.full(x.shape[:-2] + valid.shape, padding_value, dtype=x.dtype)
    else:
        out = np.where(valid, x[..., r, c], padding_value).astype(x.dtype, copy=False)
    return out[..., 0, :] if lower == upper else out


# --- MatrixSetDiagV3 ------------------------------------------------------------------------
def _matrix_set_diag_shape(op):
    inp, diag = op.inputs[0].shape, op.inputs[1].shape
    k = _static_k(op.inputs[2])
    if inp.ndims is not None:
        inp = with_rank_at_least(inp, 2)
    if diag.ndims is None or k is None:
        return inp
    lower, upper = k
    if inp.ndims is None:  # the batch dims come from the diagonal
        batch = diag.as_list()[:-1 if lower == upper else -2]
        return TensorShape(batch + [None, None])
    diag = with_rank(diag, inp.ndims - (1 if lower == upper else 0))
    out = inp.as_list()
    batch_rank = inp.ndims - 2
    for i in range(batch_rank):
        out[i] = merge_dim(out[i], diag.as_list()[i])
    return TensorShape(out)


register_op("MatrixSetDiagV3", inputs=["input: T", "diagonal: T", "k: int32"],
            outputs=["output: T"], attrs={"T": TypeAttr(), "align": "RIGHT_LEFT"},
            shape=_matrix_set_diag_shape)


@kernel("MatrixSetDiagV3")
def _matrix_set_diag_kernel(ctx, x, diagonal, k):
    lower, upper, rows, cols, max_len = _matrix_band(ctx, x, k)
    expected = x.shape[:-2] + ((max_len,) if lower == upper
                               else (upper - lower + 1, max_len))
    if diagonal.shape != expected:
        raise _invalid(ctx, "Either first dimensions of diagonal don't match input.shape"
                       "[:-2], or diagonal.shape[:-1] is not equal to the longests diagonal "
                       "in range [lower_diag_index:upper_diag_index].\nInput shape: [%s]\n"
                       "Diagonal shape: [%s]\nExpected diagonal shape: [%s]"
                       % tuple(",".join(map(str, s))
                               for s in (x.shape, diagonal.shape, expected)))
    if x.size == 0:
        return x.copy()
    in_band, diag_row, pos = _band_layout(rows, cols, lower, upper, ctx.attrs["align"])
    values = _packed(diagonal, lower, upper)[..., diag_row, pos]
    return np.where(in_band, values, x)


@gradient("MatrixDiagV3")
def _matrix_diag_grad(op, grad):
    return [matrix_diag_part(grad, k=op.inputs[1], align=op._get_attr("align")),
            None, None, None, None]


@gradient("MatrixDiagPartV3")
def _matrix_diag_part_grad(op, grad):
    from tensorweave.ops.array import array_fill_ops
    zeros = array_fill_ops.zeros_like(op.inputs[0])
    return [matrix_set_diag(zeros, grad, k=op.inputs[1], align=op._get_attr("align")),
            None, None]


@gradient("MatrixSetDiagV3")
def _matrix_set_diag_grad(op, grad):
    from tensorweave.ops.array import array_fill_ops
    k, align = op.inputs[2], op._get_attr("align")
    zeros = array_fill_ops.zeros_like(op.inputs[1])
    return [matrix_set_diag(grad, zeros, k=k, align=align),
            matrix_diag_part(grad, k=k, align=align), None]


def _check_align(align: str, op_type: str) -> str:
    if align not in _ALIGNS:
        raise ValueError("Attr 'align' of '%s' Op passed string '%s' not in: %s." % (
            op_type, align, ", ".join('"%s"' % a for a in _ALIGNS)))
    return align


def _k_tensor(k) -> Tensor:
    if isinstance(k, Tensor):
        return k
    return convert_to_tensor(np.asarray(k, dtype=np.int32), name="k")


@tf_export("linalg.diag", "matrix_diag")
def matrix_diag(diagonal, name: str = "diag", k=0, num_rows=-1, num_cols=-1,
                padding_value=0, align: str = "RIGHT_LEFT") -> Tensor:
    """Returns a batched matrix with the given batched diagonals (TF1 `tf.linalg.diag`).

    Args:
      diagonal: a Tensor [..., max_diag_len] (one diagonal, k a scalar) or
        [..., num_diags, max_diag_len] (k = (lower, upper)).
      name: op name.
      k: the diagonal offset(s): a scalar or a pair (lower, upper); 0 is the main
        diagonal, positive above it.
      num_rows, num_cols: the size of the output matrices; -1 infers it.
      padding_value: the value outside the band.
      align: "RIGHT_LEFT" (default), "LEFT_RIGHT", "LEFT_LEFT" or "RIGHT_RIGHT": how
        diagonals shorter than max_diag_len are packed.

    Returns:
      A Tensor [..., num_rows, num_cols] of the dtype of `diagonal`.

    Raises:
      ValueError: inconsistent static shapes, k or align.
    """
    _check_align(align, "MatrixDiagV3")
    diagonal = convert_to_tensor(diagonal, name="diagonal")
    if diagonal.dtype == _dt.bool:  # as TF: the default 0 pads a bool diagonal as False
        padding_value = bool(padding_value)
    pad = convert_to_tensor(padding_value, dtype=diagonal.dtype, name="padding_value")
    return apply_op("MatrixDiagV3", [diagonal, _k_tensor(k),
                                     convert_to_tensor(num_rows, dtype=_dt.int32),
                                     convert_to_tensor(num_cols, dtype=_dt.int32), pad],
                    {"align": align}, name=name).outputs[0]


@tf_export("linalg.diag_part", "matrix_diag_part")
def matrix_diag_part(input, name: str = "diag_part", k=0,  # noqa: A002 - TF's name
                     padding_value=0, align: str = "RIGHT_LEFT") -> Tensor:
    """Returns the batched diagonal part(s) of a batched tensor (TF1
    `tf.linalg.diag_part`).

    Args:
      input: a Tensor of rank >= 2.
      name: op name.
      k: the diagonal offset(s): a scalar or a pair (lower, upper).
      padding_value: the value that pads diagonals shorter than the longest one.
      align: how shorter diagonals are packed (see `matrix_diag`).

    Returns:
      A Tensor [..., max_diag_len] (scalar k) or [..., num_diags, max_diag_len].

    Raises:
      ValueError: rank < 2, k out of bound, bad align.
    """
    _check_align(align, "MatrixDiagPartV3")
    input = convert_to_tensor(input, name="input")
    if input.dtype == _dt.bool:  # as TF: the default 0 pads a bool diagonal as False
        padding_value = bool(padding_value)
    pad = convert_to_tensor(padding_value, dtype=input.dtype, name="padding_value")
    return apply_op("MatrixDiagPartV3", [input, _k_tensor(k), pad], {"align": align},
                    name=name).outputs[0]


@tf_export("linalg.set_diag", "matrix_set_diag")
def matrix_set_diag(input, diagonal, name: str = "set_diag", k=0,  # noqa: A002
                    align: str = "RIGHT_LEFT") -> Tensor:
    """Returns `input` with its diagonal(s) k replaced by `diagonal` (TF1
    `tf.linalg.set_diag`).

    Args:
      input: a Tensor of rank >= 2.
      diagonal: the new diagonals, laid out as for `matrix_diag`.
      name: op name.
      k: the diagonal offset(s): a scalar or a pair (lower, upper).
      align: how shorter diagonals are packed (see `matrix_diag`).

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      ValueError: incompatible static shapes or bad align.
    """
    _check_align(align, "MatrixSetDiagV3")
    input = convert_to_tensor(input, name="input")
    diagonal = convert_to_tensor(diagonal, dtype=input.dtype, name="diagonal")
    return apply_op("MatrixSetDiagV3", [input, diagonal, _k_tensor(k)], {"align": align},
                    name=name).outputs[0]


# --- Diag / DiagPart: rank-doubling diagonals -----------------------------------------------
def _diag_shape(op):
    s = op.inputs[0].shape
    if s.ndims is None:
        return unknown_shape()
    with_rank_at_least(s, 1)
    return TensorShape(s.as_list() * 2)


def _diag_part_shape(op):
    s = op.inputs[0].shape
    if s.ndims is None:
        return unknown_shape()
    if s.ndims % 2 or s.ndims == 0:
        raise ValueError("Input must have even rank <= 6, input rank is %d" % s.ndims)
    half = s.ndims // 2
    dims = s.as_list()
    return TensorShape([merge_dim(dims[i], dims[i + half]) for i in range(half)])


_DIAG_TYPES = (_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64,
               _dt.complex64, _dt.complex128)
register_op("Diag", inputs=["diagonal: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_DIAG_TYPES)}, shape=_diag_shape)
register_op("DiagPart", inputs=["input: T"], outputs=["diagonal: T"],
            attrs={"T": TypeAttr(_DIAG_TYPES)}, shape=_diag_part_shape)


@kernel("Diag")
def _diag_kernel(ctx, diagonal):
    if diagonal.ndim < 1:
        raise _invalid(ctx, "Input must be at least rank 1, got 0")
    n = diagonal.size
    out = np.zeros(n * n, dtype=diagonal.dtype)
    out[::n + 1] = diagonal.reshape(-1)
    return out.reshape(diagonal.shape * 2)


@kernel("DiagPart")
def _diag_part_kernel(ctx, x):
    half = x.ndim // 2
    if x.ndim % 2 or x.ndim == 0 or x.shape[:half] != x.shape[half:]:
        raise _invalid(ctx, "Invalid shape [%s]: dimensions must be equal in pairs and "
                       "the rank even" % ",".join(map(str, x.shape)))
    n = int(np.prod(x.shape[:half], dtype=np.int64))
    return x.reshape(n, n).diagonal().reshape(x.shape[:half]).copy()


@gradient("Diag")
def _diag_grad(op, grad):
    return [tensor_diag_part(grad)]


@gradient("DiagPart")
def _diag_part_grad(op, grad):
    return [tensor_diag(grad)]


@tf_export("diag", "linalg.tensor_diag")
def tensor_diag(diagonal, name: Optional[str] = None) -> Tensor:
    """Returns a tensor with `diagonal` on its diagonal (TF1 `tf.diag`): for `diagonal`
    of shape D the output has shape D + D, output[i..., i...] = diagonal[i...].

    Args:
      diagonal: a Tensor of rank >= 1 (float, int32/int64 or complex).
      name: op name (default "Diag").

    Returns:
      A Tensor of the dtype of `diagonal`, of twice its rank.

    Raises:
      TypeError: unsupported dtype.
    """
    return apply_op("Diag", [diagonal], name=name or "Diag").outputs[0]


@tf_export("diag_part", "linalg.tensor_diag_part")
def tensor_diag_part(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Returns the diagonal of a tensor of shape D + D (TF1 `tf.diag_part`), the inverse
    of `tf.diag`.

    Args:
      input: a Tensor of even rank 2k whose shape is D + D.
      name: op name (default "DiagPart").

    Returns:
      A Tensor of shape D.

    Raises:
      ValueError: odd rank or unequal dimension pairs (statically known).
    """
    return apply_op("DiagPart", [input], name=name or "DiagPart").outputs[0]


# --- MatrixBandPart -------------------------------------------------------------------------
def _band_part_shape(op):
    with_rank(op.inputs[1].shape, 0)
    with_rank(op.inputs[2].shape, 0)
    s = op.inputs[0].shape
    return s if s.ndims is None else with_rank_at_least(s, 2)


register_op("MatrixBandPart", inputs=["input: T", "num_lower: Tindex",
                                      "num_upper: Tindex"],
            outputs=["band: T"],
            attrs={"T": TypeAttr(), "Tindex": TypeAttr(_INDEX_TYPES, default=_dt.int64)},
            shape=_band_part_shape)


@kernel("MatrixBandPart")
def _band_part_kernel(ctx, x, num_lower, num_upper):
    if x.dtype == object:  # TF has no string kernel (zeros would be ints among bytes)
        raise errors.InvalidArgumentError(
            None, ctx.op, "No OpKernel was registered to support Op 'MatrixBandPart' with "
            "these attrs: T=DT_STRING")
    if x.ndim < 2:
        raise _invalid(ctx, "input must be at least 2-dim, received shape: [%s]"
                       % ",".join(map(str, x.shape)))
    rows, cols = x.shape[-2:]
    lower, upper = int(num_lower), int(num_upper)
    if lower > rows:
        raise _invalid(ctx, "num_lower must be negative or less or equal to number of "
                       "rows (%d) got: %d" % (rows, lower))
    if upper > cols:
        raise _invalid(ctx, "num_upper must be negative or less or equal to number of "
                       "columns (%d) got: %d" % (cols, upper))
    d = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    keep = np.ones((rows, cols), dtype=bool)
    if lower >= 0:
        keep &= -d <= lower
    if upper >= 0:
        keep &= d <= upper
    return np.where(keep, x, np.zeros((), x.dtype))


@gradient("MatrixBandPart")
def _band_part_grad(op, grad):
    return [band_part(grad, op.inputs[1], op.inputs[2]), None, None]


@tf_export("linalg.band_part", "matrix_band_part")
def band_part(input, num_lower, num_upper, name: Optional[str] = None) -> Tensor:  # noqa
    """Keeps a central band of each innermost matrix and zeroes the rest (TF1
    `tf.linalg.band_part`): entry (m, n) is kept where (num_lower < 0 or m - n <=
    num_lower) and (num_upper < 0 or n - m <= num_upper).

    Args:
      input: a Tensor of rank >= 2.
      num_lower: a scalar int32/int64: subdiagonals kept (negative: all).
      num_upper: a scalar int32/int64: superdiagonals kept (negative: all).
      name: op name (default "MatrixBandPart").

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      InvalidArgumentError (at run time): num_lower > rows or num_upper > columns.
    """
    if not isinstance(num_lower, Tensor) and not isinstance(num_upper, Tensor):
        num_lower = np.int64(num_lower)
        num_upper = np.int64(num_upper)
    return apply_op("MatrixBandPart", [input, num_lower, num_upper],
                    name=name or "MatrixBandPart").outputs[0]


# --- Cross ----------------------------------------------------------------------------------
def _cross_shape(op):
    a, b = op.inputs[0].shape, op.inputs[1].shape
    if a.ndims is None:
        return b
    if b.ndims is None:
        return a
    if a.ndims != b.ndims:
        raise ValueError("Shapes must be equal rank, but are %d and %d" % (a.ndims, b.ndims))
    with_rank_at_least(a, 1)
    dims = [merge_dim(x, y) for x, y in zip(a.as_list(), b.as_list())]
    if dims[-1] is not None and dims[-1] != 3:
        raise ValueError("Dimension must be 3 but is %d" % dims[-1])
    return TensorShape(dims)


register_op("Cross", inputs=["a: T", "b: T"], outputs=["product: T"],
            attrs={"T": TypeAttr(_dt.REAL_NUMBERS)}, shape=_cross_shape)


@kernel("Cross")
def _cross_kernel(ctx, a, b):
    if a.shape != b.shape:
        raise _invalid(ctx, "a and b must be the same shape: [%s] vs [%s]"
                       % (",".join(map(str, a.shape)), ",".join(map(str, b.shape))))
    if a.ndim < 1 or a.shape[-1] != 3:
        raise errors.FailedPreconditionError(
            None, ctx.op, "Cross-products are only defined for 3-element vectors.")
    return np.cross(a, b).astype(a.dtype, copy=False)


@gradient("Cross")
def _cross_grad(op, grad):
    a, b = op.inputs
    return [cross(b, grad), cross(grad, a)]


@tf_export("cross", "linalg.cross")
def cross(a, b, name: Optional[str] = None) -> Tensor:
    """Computes the pairwise cross product of 3-element vectors (TF1 `tf.cross`).

    Args:
      a: a real Tensor [..., 3].
      b: a Tensor of the shape and dtype of `a`.
      name: op name (default "Cross").

    Returns:
      A Tensor of the shape and dtype of `a`.

    Raises:
      ValueError: static shapes differ or the last dimension is not 3.
      FailedPreconditionError (at run time): the last dimension is not 3.
    """
    return apply_op("Cross", [a, b], name=name or "Cross").outputs[0]


# --- compositions ---------------------------------------------------------------------------
@tf_export("linalg.matrix_transpose", "linalg.transpose", "matrix_transpose")
def matrix_transpose(a, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Transposes the last two dimensions of `a` (TF1 `tf.linalg.matrix_transpose`).

    Args:
      a: a Tensor of rank >= 2.
      name: name scope.
      conjugate: also conjugate (complex): the adjoint.

    Returns:
      A Tensor [..., N, M] for `a` [..., M, N].

    Raises:
      ValueError: `a` has a known rank < 2.
    """
    from tensorweave.ops.array import array_join_ops, array_ops
    from tensorweave.ops.math import math_binary, math_ops
    with _graph.name_scope(name, values=[a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError("Argument 'a' should be a (batch) matrix with rank >= 2.  "
                                 "Found: %s" % a.shape)
            perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        else:
            rank = array_ops.rank(a)
            two = convert_to_tensor(2, dtype=_dt.int32)
            perm = array_join_ops.concat(
                [math_ops.range(math_binary.subtract(rank, two)),
                 array_join_ops.stack([math_binary.subtract(rank, 1),
                                       math_binary.subtract(rank, two)])], 0)
        return array_ops.transpose(a, perm=perm, conjugate=conjugate)


@tf_export("linalg.adjoint")
def adjoint(matrix, name: Optional[str] = None) -> Tensor:
    """The conjugate transpose of the innermost matrices (TF1 `tf.linalg.adjoint`).

    Args:
      matrix: a Tensor of rank >= 2.
      name: name scope (default "adjoint").

    Returns:
      A Tensor [..., N, M] for `matrix` [..., M, N].
    """
    with _graph.name_scope(name, "adjoint", [matrix]):
        return matrix_transpose(matrix, conjugate=True)


@tf_export("trace", "linalg.trace")
def trace(x, name: Optional[str] = None) -> Tensor:
    """The sum of the main diagonal of each innermost matrix (TF1 `tf.linalg.trace`).

    Args:
      x: a Tensor of rank >= 2.
      name: name of the result (default "Trace").

    Returns:
      A Tensor x.shape[:-2] of the dtype of `x`.
    """
    from tensorweave.ops.math import reduction_ops
    with _graph.name_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return reduction_ops.reduce_sum(matrix_diag_part(x), [-1], name=scope)


@tf_export("eye", "linalg.eye")
def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dt.float32,
        name: Optional[str] = None) -> Tensor:
    """A (batch of) identity matrices (TF1 `tf.eye`).

    Args:
      num_rows: a non-negative int (or scalar int32 Tensor): rows of each matrix.
      num_columns: columns of each matrix (default: `num_rows`).
      batch_shape: a list of ints (or 1-D int32 Tensor): leading batch dimensions.
      dtype: the element type.
      name: name scope (default "eye").

    Returns:
      A Tensor batch_shape + [num_rows, num_columns].
    """
    from tensorweave.ops.array import array_fill_ops, array_join_ops
    from tensorweave.ops.math import math_binary
    dtype = _dt.as_dtype(dtype)
    with _graph.name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        is_square = num_columns is None
        # a batch_shape list may hold tensors too
        static = not any(array_fill_ops._contains_tensor(v)
                         for v in (num_rows, num_columns, batch_shape))
        if static:
            batch = [] if batch_shape is None else [int(v) for v in batch_shape]
            rows = int(num_rows)
            cols = rows if is_square else int(num_columns)
            diag_shape = batch + [min(rows, cols)]
            matrix_shape = batch + [rows, cols]
        else:
            rows = convert_to_tensor(num_rows, dtype=_dt.int32, name="num_rows")
            cols = rows if is_square else convert_to_tensor(num_columns, dtype=_dt.int32,
                                                            name="num_columns")
            batch = convert_to_tensor(
                np.zeros([0], np.int32) if batch_shape is None else batch_shape,
                dtype=_dt.int32, name="shape")
            size = rows if is_square else math_binary.minimum(rows, cols)
            diag_shape = array_join_ops.concat([batch, [size]], 0)
            matrix_shape = array_join_ops.concat([batch, [rows, cols]], 0)
        diag_ones = array_fill_ops.ones(diag_shape, dtype=dtype)
        if is_square:
            return matrix_diag(diag_ones)
        return matrix_set_diag(array_fill_ops.zeros(matrix_shape, dtype=dtype), diag_ones)
