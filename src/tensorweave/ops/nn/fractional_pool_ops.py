"""Fractional max and average pooling (Graham, 2015, arXiv:1412.6071): FractionalMaxPool,
FractionalAvgPool and their gradient ops FractionalMaxPoolGrad, FractionalAvgPoolGrad.

Pooling shrinks the NHWC input by a non-integer ratio along height and width. Along one
axis of length n pooled to m = floor(n / ratio) cells, a pooling sequence
0 = a[0] < a[1] < ... < a[m] = n cuts the axis into cells [a[i], a[i+1]) of length
k = n // m or k + 1; with `overlapping` a cell also takes its right boundary a[i+1]
(clipped to the input), so neighbouring cells share one row or column. The sequences
are drawn per run, one for the rows then one for the columns, as TF's kernel does:

  * random: the n % m cells of length k + 1 sit at random places (a shuffle);
  * pseudo-random: a[i] = ceil(alpha (i + u)) - 1 with alpha = n / m and one u drawn
    uniformly from [0, u_max), u_max keeping the first cell at most k + 1 long and the
    last at least k long (Graham's construction, shifted to start at 0).

The draws are TF's CPU kernel's, bit for bit: both sequences come from one Philox4x32-10
stream (ops/random/philox.py), the rows from its first blocks and the columns from the
blocks after those the rows reserved (one block for a pseudo-random sequence, whose u is
TF's RandDouble of the block's first two words; one word per cell for a random one,
whose cells are put in place by TF's Fisher-Yates, tf_sampling.shuffle_permutation).
Everything that follows from a pair of sequences (outputs, gradients) is TF's to the
bit too: the max is the plain maximum of a cell, the average sums a cell in row-major
order in the input's type and divides by the cell's size (truncating for integers), the
max gradient goes to the first maximum of a cell in row-major order and is added in the
input's type in output order, and the average gradient adds each output's share in
float64 in output order before one cast back, as TF's CPU kernels do.

Seeds: `deterministic=True` restarts the stream Philox(seed, seed2) at every run, as TF's
kernel does, so every run gives TF's sequences for those seeds; when both seeds are 0
they are drawn once per op and plan (TF draws them when it makes the kernel, once per
set of fetches and feeds for an op that is not stateful; the deterministic mode derives
them from the op's name). Otherwise both seeds must be 0 (TF's rule) and TF seeds every
run from fresh entropy, which no program can reproduce: here the op keeps one stream
per plan (fresh seeds, or its name's in the deterministic mode) and each run draws its
blocks from it. `tf.set_random_seed` does not
enter: TF1's `fractional_max_pool` passes its seed arguments as they are.

As in TF the ops are not stateful, so the plan's optimizer treats them as TF's Grappler
does: it folds a pool of a constant input when it builds a plan (a plan per set of
fetches and feeds, with a kernel state of its own), so a non-deterministic pool of a
constant repeats its sequences at every run of the same fetches, and it merges identical
pools of the same input (both draw the same sequences).
"""
from __future__ import annotations

import collections
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import (REQUIRED, TypeAttr, gradient, kernel,
                                            not_differentiable, register_op)
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.nn.conv_ops import rank4
from tensorweave.ops.random import philox, tf_sampling
from tensorweave.ops.random.random_ops import _philox_blocks
from tensorweave.runtime import determinism as _determinism

_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.int64)
_POOL_ATTRS = {"pooling_ratio": REQUIRED, "pseudo_random": False, "overlapping": False,
               "deterministic": False, "seed": 0, "seed2": 0, "T": TypeAttr(_TYPES)}
_POOL_OUTPUTS = ["output: T", "row_pooling_sequence: int64", "col_pooling_sequence: int64"]
_KINDS = {"FractionalMaxPool": "max", "FractionalAvgPool": "average"}


# --- geometry ------------------------------------------------------------------------------
def pooled_length(size: int, ratio: float) -> int:
    """The number of cells of an axis of `size` pooled by `ratio`. TF divides in float32
    (an int by a float attr), so 49 / 4.9 gives 10 cells where float64 would give 9."""
    return int(np.floor(np.float32(size) / np.float32(ratio)))


def _cells(seq: np.ndarray, size: int, overlapping: bool):
    """(first index, length) of each cell of the pooling sequence `seq` along an axis of
    `size`: [seq[i], seq[i+1]), or [seq[i], seq[i+1]] when overlapping, clipped to the
    axis."""
    start = seq[:-1]
    stop = np.minimum(seq[1:] + (1 if overlapping else 0), size)
    return start, stop - start


def _tap(start: np.ndarray, length: np.ndarray, t: int) -> np.ndarray:
    """Index of tap `t` of every cell; a cell shorter than t + 1 repeats its first
    element, which changes neither a maximum nor (as TF keeps the first) its argmax."""
    return np.where(t < length, start + t, start)


# --- pooling sequences ---------------------------------------------------------------------
def sequence_blocks(cells: int, pseudo_random: bool) -> int:
    """Philox blocks TF reserves for one sequence of `cells` cells: two words for the
    pseudo-random u, one word per cell for the shuffle (ReserveSamples32)."""
    return 1 if pseudo_random else -(-cells // 4)


def pooling_sequence(size: int, cells: int, key: philox.Key, counter: philox.Counter,
                     pseudo_random: bool) -> np.ndarray:
    """TF's pooling sequence of `cells + 1` int64 boundaries cutting an axis of `size`,
    drawn from the Philox stream (key, counter).

    Args:
      size: the input length n (>= cells).
      cells: the output length m (>= 1).
      key: the stream's key.
      counter: the counter of the first block reserved for this sequence.
      pseudo_random: Graham's pseudo-random construction instead of a shuffle.

    Returns:
      a[0] = 0 < a[1] < ... < a[m] = n, every step n // m or n // m + 1 (TF does not
      guard the pseudo-random u = 0, a 2**-52 chance, which with an integral n / m makes
      the first step n // m - 1: so neither does this).
    """
    k = size // cells
    if not pseudo_random:
        steps = np.full(cells, k, dtype=np.int64)
        steps[:size % cells] += 1
        if cells > 1:   # TF's Fisher-Yates of the steps, one word per swap
            steps = steps[tf_sampling.shuffle_permutation(key, counter, cells)]
        return np.concatenate([[0], np.cumsum(steps)]).astype(np.int64)
    alpha = size / cells
    # u_max1 keeps a[1] - a[0] <= k + 1, u_max2 keeps a[m] - a[m-1] >= k (TF's bounds)
    u_max = min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (cells - 1))
    u = float(philox.uniform(key, counter, 1, np.float64)[0]) * u_max
    seq = np.empty(cells + 1, dtype=np.int64)
    seq[0], seq[cells] = 0, size
    seq[1:cells] = np.ceil(alpha * (np.arange(1, cells) + u)).astype(np.int64) - 1
    return seq


def _deterministic_seeds(ctx) -> tuple:
    """The (seed, seed2) of a deterministic op: its attrs, or when both are 0 seeds
    drawn once per op and plan (`ctx.state`), as TF's kernel draws them when it is made
    (derived from the op's name in the deterministic mode)."""
    seed, seed2 = ctx.attrs["seed"], ctx.attrs["seed2"]
    if seed or seed2:
        return seed, seed2
    seeds = ctx.state.get("seeds")
    if seeds is None:
        if _determinism.of_session(ctx.session):
            seeds = _determinism.name_seed(ctx.op.name)
        else:
            entropy = np.random.SeedSequence().generate_state(2, np.uint64)
            seeds = tuple(int(s) for s in entropy)   # TF's two New64()
        seeds = ctx.state.setdefault("seeds", seeds)
    return seeds


def _sequences(ctx, height: int, width: int, rows: int, cols: int) -> tuple:
    """(row sequence, column sequence) of one run, the rows drawn first from the blocks
    at the start of the run's stream, the columns from the blocks after them.

    A deterministic op restarts Philox(seed, seed2) at every run, as TF's kernel does
    (a new generator per run), so every run draws the same sequences. Otherwise both
    seeds are 0 and TF seeds each run from fresh entropy; here the op keeps one stream
    per plan from fresh seeds (from its name in the deterministic mode) and each run
    reserves the blocks it uses, so runs differ, reproducibly in that mode."""
    pseudo = ctx.attrs["pseudo_random"]
    row_blocks = sequence_blocks(rows, pseudo)
    if ctx.attrs["deterministic"]:
        key, counter = philox.key_counter_of_seeds(*_deterministic_seeds(ctx))
    else:
        key, counter = _philox_blocks(ctx, row_blocks + sequence_blocks(cols, pseudo))
    return (pooling_sequence(height, rows, key, counter, pseudo),
            pooling_sequence(width, cols, key, philox.skip(counter, row_blocks), pseudo))


# --- pooling given the sequences -----------------------------------------------------------
def max_pool(x: np.ndarray, row_seq: np.ndarray, col_seq: np.ndarray,
             overlapping: bool) -> np.ndarray:
    """Fractional max pooling of NHWC `x` over the cells of the two sequences."""
    _, height, width, _ = x.shape
    rs, rl = _cells(row_seq, height, overlapping)
    cs, cl = _cells(col_seq, width, overlapping)
    maximum = np.fmax if x.dtype.kind == "f" else np.maximum  # NaN never wins, as in TF
    # a maximum does not depend on the order: columns first, then rows (kw + kh passes)
    by_col = np.take(x, cs, axis=2)
    for t in range(1, int(cl.max())):
        maximum(by_col, np.take(x, _tap(cs, cl, t), axis=2), out=by_col)
    out = np.take(by_col, rs, axis=1)
    for t in range(1, int(rl.max())):
        maximum(out, np.take(by_col, _tap(rs, rl, t), axis=1), out=out)
    return out


def avg_pool(x: np.ndarray, row_seq: np.ndarray, col_seq: np.ndarray,
             overlapping: bool) -> np.ndarray:
    """Fractional average pooling of NHWC `x`: each cell summed in row-major order in
    x's type (TF's order, so float sums round as TF's do), then divided by its size."""
    n, height, width, c = x.shape
    rs, rl = _cells(row_seq, height, overlapping)
    cs, cl = _cells(col_seq, width, overlapping)
    total = np.zeros((n, len(rs), len(cs), c), dtype=x.dtype)
    for i in range(int(rl.max())):
        x_rows = np.take(x, _tap(rs, rl, i), axis=1)
        for j in range(int(cl.max())):
            tap = np.take(x_rows, _tap(cs, cl, j), axis=2)
            inside = (i < rl)[:, None] & (j < cl)[None, :]
            if inside.all():
                total += tap
            else:  # adding 0 for a tap past a cell's end leaves the running sum as it is
                total += np.where(inside[None, :, :, None], tap, 0).astype(x.dtype,
                                                                            copy=False)
    count = np.outer(rl, cl)[None, :, :, None].astype(x.dtype)
    if x.dtype.kind == "f":
        return total / count
    quotient = total // count  # C++ integer division truncates toward zero
    quotient += ((total % count != 0) & (total < 0)).astype(x.dtype)
    return quotient


def first_max_positions(x: np.ndarray, row_seq: np.ndarray, col_seq: np.ndarray,
                        overlapping: bool) -> np.ndarray:
    """[N, OH, OW, C] flat indices into `x` of the first maximum of every cell in
    row-major order (a later element wins only when strictly greater, as in TF)."""
    n, height, width, c = x.shape
    rs, rl = _cells(row_seq, height, overlapping)
    cs, cl = _cells(col_seq, width, overlapping)
    best = where = None
    for i in range(int(rl.max())):
        r_idx = _tap(rs, rl, i)
        x_rows = np.take(x, r_idx, axis=1)
        for j in range(int(cl.max())):
            c_idx = _tap(cs, cl, j)
            tap = np.take(x_rows, c_idx, axis=2)
            hw = (r_idx[:, None] * width + c_idx[None, :])[None, :, :, None]
            if best is None:
                best = tap.copy()
                where = np.broadcast_to(hw, tap.shape).copy()
                continue
            better = best < tap
            np.copyto(best, tap, where=better)
            np.copyto(where, np.broadcast_to(hw, tap.shape), where=better)
    batch = (np.arange(n, dtype=np.int64) * (height * width))[:, None, None, None]
    return (where + batch) * c + np.arange(c, dtype=np.int64)


def max_pool_grad(x: np.ndarray, grad: np.ndarray, row_seq: np.ndarray, col_seq: np.ndarray,
                  overlapping: bool) -> np.ndarray:
    """Each output gradient added at its cell's first maximum, in x's type and output
    order (np.add.at adds one by one, so overlapping cells round as TF's loop does)."""
    positions = first_max_positions(x, row_seq, col_seq, overlapping)
    out = np.zeros(x.size, dtype=x.dtype)
    np.add.at(out, positions.reshape(-1), grad.reshape(-1).astype(x.dtype, copy=False))
    return out.reshape(x.shape)


def avg_pool_grad(shape: Sequence[int], grad: np.ndarray, row_seq: np.ndarray,
                  col_seq: np.ndarray, overlapping: bool) -> np.ndarray:
    """Each output gradient spread evenly over its cell: the shares are added in float64
    in output order (np.bincount adds in array order) and cast to grad's type once."""
    n, height, width, c = (int(d) for d in shape)
    rs, rl = _cells(row_seq, height, overlapping)
    cs, cl = _cells(col_seq, width, overlapping)
    share = grad.astype(np.float64) / np.outer(rl, cl)[None, :, :, None]
    # every (cell row, cell column, tap row, tap column) with its input position, in
    # TF's loop order; taps past a cell's end are dropped
    r_taps = rs[:, None] + np.arange(int(rl.max()))
    c_taps = cs[:, None] + np.arange(int(cl.max()))
    inside = ((r_taps < (rs + rl)[:, None])[:, None, :, None] &
              (c_taps < (cs + cl)[:, None])[None, :, None, :])
    hw = (r_taps[:, None, :, None] * width + c_taps[None, :, None, :])
    cell = np.arange(len(rs) * len(cs)).reshape(len(rs), len(cs))[:, :, None, None]
    hw, cell = hw[inside], np.broadcast_to(cell, inside.shape)[inside]
    batch = (np.arange(n, dtype=np.int64) * (height * width))[:, None, None]
    index = (batch + hw[None, :, None]) * c + np.arange(c, dtype=np.int64)
    weights = share.reshape(n, -1, c)[:, cell, :]
    out = np.bincount(index.reshape(-1), weights=weights.reshape(-1),
                      minlength=n * height * width * c)
    return out.astype(grad.dtype).reshape(n, height, width, c)


# --- FractionalMaxPool, FractionalAvgPool --------------------------------------------------
def _pooling_ratio(op) -> list:
    ratio = [float(r) for r in op._get_attr("pooling_ratio")]
    if len(ratio) < 4:
        raise ValueError("Attr 'pooling_ratio' of '%s' Op passed list of length %d less than "
                         "minimum 4." % (op.type, len(ratio)))
    if len(ratio) != 4:
        raise ValueError("pooling_ratio field must specify 4 dimensions")
    return ratio


def _fractional_pool_shape(op) -> list:
    ratio = _pooling_ratio(op)
    dims = rank4(op.inputs[0].shape)
    out = []
    for i, (d, r) in enumerate(zip(dims, ratio)):
        length = None if d is None else pooled_length(d, r)
        if length is not None and length < 0:
            raise ValueError("Size computed for dim %d is negative: %d" % (i, length))
        out.append(length)
    for r in ratio:
        if r < 1:
            raise ValueError("pooling_ratio cannot be smaller than 1, got: %g" % r)
    return [TensorShape(out),
            TensorShape([None if out[1] is None else out[1] + 1]),
            TensorShape([None if out[2] is None else out[2] + 1])]


for _op_type in _KINDS:
    register_op(_op_type, inputs=["value: T"], outputs=_POOL_OUTPUTS, attrs=_POOL_ATTRS,
                shape=_fractional_pool_shape)


def _pool_geometry(ctx, x) -> tuple:
    """The checked (output rows, output columns) of a fractional pooling kernel."""
    ratio = [float(r) for r in ctx.attrs["pooling_ratio"]]
    if len(ratio) != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "pooling_ratio field must specify "
                                          "4 dimensions")
    if ratio[0] != 1 or ratio[3] != 1:
        raise errors.UnimplementedError(
            None, ctx.op, "Fractional %s pooling is not yet supported on the batch nor "
            "channel dimension." % _KINDS[ctx.op.type])
    if not ctx.attrs["deterministic"] and (ctx.attrs["seed"] or ctx.attrs["seed2"]):
        raise errors.InvalidArgumentError(None, ctx.op, "Both seed and seed2 should be 0 if "
                                          "deterministic is false.")
    if x.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "tensor_in must be 4-dimensional, "
                                          "got shape %s" % list(x.shape))
    for i, (d, r) in enumerate(zip(x.shape, ratio)):
        if np.float32(d) < np.float32(r):
            raise errors.InvalidArgumentError(
                None, ctx.op, "Pooling ratio is higher than input dimension size for "
                "dimension %d. Input dim size: %d pooling ratio: %g" % (i, d, r))
    return pooled_length(x.shape[1], ratio[1]), pooled_length(x.shape[2], ratio[2])


@kernel("FractionalMaxPool", cheap=False)
def _fractional_max_pool_kernel(ctx, x):
    rows, cols = _pool_geometry(ctx, x)
    row_seq, col_seq = _sequences(ctx, x.shape[1], x.shape[2], rows, cols)
    return max_pool(x, row_seq, col_seq, ctx.attrs["overlapping"]), row_seq, col_seq


@kernel("FractionalAvgPool", cheap=False)
def _fractional_avg_pool_kernel(ctx, x):
    rows, cols = _pool_geometry(ctx, x)
    row_seq, col_seq = _sequences(ctx, x.shape[1], x.shape[2], rows, cols)
    return avg_pool(x, row_seq, col_seq, ctx.attrs["overlapping"]), row_seq, col_seq


# --- the gradient ops ----------------------------------------------------------------------
register_op("FractionalMaxPoolGrad",
            inputs=["orig_input: T", "orig_output: T", "out_backprop: T",
                    "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
            outputs=["output: T"], attrs={"overlapping": False, "T": TypeAttr(_TYPES)},
            shape=lambda op: TensorShape(rank4(op.inputs[0].shape)))


def _avg_grad_shape(op) -> TensorShape:
    shape = tensor_util.constant_value_as_shape(op.inputs[0])
    return unknown_shape(4) if shape.ndims is None else shape


register_op("FractionalAvgPoolGrad",
            inputs=["orig_input_tensor_shape: int64", "out_backprop: T",
                    "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
            outputs=["output: T"], attrs={"overlapping": False, "T": TypeAttr(_TYPES)},
            shape=_avg_grad_shape)
# TF registers no gradient for the gradient ops either
not_differentiable("FractionalMaxPoolGrad")
not_differentiable("FractionalAvgPoolGrad")


def _checked_sequence(ctx, seq, what: str, cells: int, size: int) -> np.ndarray:
    """`seq` checked to cut an axis of `size` into `cells` non-empty cells that start
    inside it (TF reads out of bounds, or crashes, on sequences that do not)."""
    seq = np.asarray(seq, dtype=np.int64)
    if seq.shape != (cells + 1,):
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s_pooling_sequence must be a vector of %d elements (one more "
            "than the %d pooled %ss), got shape %s" % (what, cells + 1, cells, what,
                                                       list(seq.shape)))
    if seq[0] < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "%s sequence tensor values must not "
                                          "be negative, got %s" % (what.capitalize(),
                                                                   seq.tolist()))
    if np.any(np.diff(seq) <= 0) or seq[-2] >= size:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s_pooling_sequence must be strictly increasing with every cell "
            "starting inside the input's %d %ss, got %s" % (what, size, what, seq.tolist()))
    return seq


def _check_rank4(ctx, value, what: str) -> None:
    if value.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be 4-dimensional, got shape "
                                          "%s" % (what, list(value.shape)))
    if value.size == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must not be empty, got shape %s"
                                          % (what, list(value.shape)))


@kernel("FractionalMaxPoolGrad", cheap=False)
def _fractional_max_pool_grad_kernel(ctx, x, y, grad, row_seq, col_seq):
    _check_rank4(ctx, x, "orig_input")
    _check_rank4(ctx, y, "orig_output")
    if grad.shape != y.shape or (y.shape[0], y.shape[3]) != (x.shape[0], x.shape[3]):
        raise errors.InvalidArgumentError(
            None, ctx.op, "out_backprop must have orig_output's shape, and orig_output "
            "orig_input's batch and depth; got orig_input %s, orig_output %s, out_backprop "
            "%s" % (list(x.shape), list(y.shape), list(grad.shape)))
    row_seq = _checked_sequence(ctx, row_seq, "row", y.shape[1], x.shape[1])
    col_seq = _checked_sequence(ctx, col_seq, "col", y.shape[2], x.shape[2])
    return max_pool_grad(x, grad, row_seq, col_seq, ctx.attrs["overlapping"])


@kernel("FractionalAvgPoolGrad", cheap=False)
def _fractional_avg_pool_grad_kernel(ctx, orig_shape, grad, row_seq, col_seq):
    orig_shape = np.asarray(orig_shape)
    if orig_shape.shape != (4,):
        raise errors.InvalidArgumentError(
            None, ctx.op, "original input tensor shape must be 1-dimensional and 4 "
            "elements, got shape %s" % list(orig_shape.shape))
    if grad.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "out_backprop must be 4-dimensional, "
                                          "got shape %s" % list(grad.shape))
    if grad.size == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "out_backprop must be positive for "
                                          "all dimension, got shape %s" % list(grad.shape))
    n, height, width, c = (int(d) for d in orig_shape)
    if (n, c) != (grad.shape[0], grad.shape[3]) or height <= 0 or width <= 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "orig_input_tensor_shape %s does not match out_backprop %s: the "
            "batch and depth must agree and the height and width be positive"
            % (orig_shape.tolist(), list(grad.shape)))
    row_seq = _checked_sequence(ctx, row_seq, "row", grad.shape[1], height)
    col_seq = _checked_sequence(ctx, col_seq, "col", grad.shape[2], width)
    return avg_pool_grad((n, height, width, c), grad, row_seq, col_seq,
                         ctx.attrs["overlapping"])


# --- gradients -----------------------------------------------------------------------------
@gradient("FractionalMaxPool")
def _fractional_max_pool_grad(op, grad, unused_row_grad, unused_col_grad):
    # the gradient flows to `value` only: the pooling sequences are integers
    return [apply_op("FractionalMaxPoolGrad",
                     [op.inputs[0], op.outputs[0], grad, op.outputs[1], op.outputs[2]],
                     {"overlapping": op._get_attr("overlapping")},
                     name="FractionalMaxPoolGrad").outputs[0]]


@gradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op, grad, unused_row_grad, unused_col_grad):
    from tensorweave.ops.array import array_ops
    shape = array_ops.shape(op.inputs[0], out_type=_dt.int64)
    return [apply_op("FractionalAvgPoolGrad", [shape, grad, op.outputs[1], op.outputs[2]],
                     {"overlapping": op._get_attr("overlapping")},
                     name="FractionalAvgPoolGrad").outputs[0]]


# --- builders ------------------------------------------------------------------------------
FractionalMaxPoolOutput = collections.namedtuple(
    "FractionalMaxPool", ["output", "row_pooling_sequence", "col_pooling_sequence"])
FractionalAvgPoolOutput = collections.namedtuple(
    "FractionalAvgPool", ["output", "row_pooling_sequence", "col_pooling_sequence"])


def _fractional_pool(op_type: str, fn_name: str, value, pooling_ratio, pseudo_random,
                     overlapping, deterministic, seed, seed2, name):
    if not isinstance(pooling_ratio, (list, tuple)):
        raise TypeError("Expected list for 'pooling_ratio' argument to '%s' Op, not %r."
                        % (fn_name, pooling_ratio))
    ratio = []
    for r in pooling_ratio:
        if isinstance(r, (bool, str)) or not isinstance(r, (int, float, np.number)):
            raise TypeError("Expected float for argument 'pooling_ratio' not %r." % (r,))
        ratio.append(float(r))
    # None means the attr's default, as in TF's generated wrappers
    attrs = {"pooling_ratio": ratio, "pseudo_random": bool(pseudo_random),
             "overlapping": bool(overlapping), "deterministic": bool(deterministic),
             "seed": int(seed or 0), "seed2": int(seed2 or 0)}
    return apply_op(op_type, [value], attrs, name=name).outputs


@tf_export("nn.fractional_max_pool")
def fractional_max_pool(value, pooling_ratio: Sequence[float], pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False,
                        seed: int = 0, seed2: int = 0,
                        name: Optional[str] = None) -> FractionalMaxPoolOutput:
    """Fractional max pooling (TF1 `tf.nn.fractional_max_pool`; Graham, 2015).

    The input's height and width are cut into cells by two pooling sequences drawn at
    every run (see the module docstring); each output is the maximum of its cell. A
    sequence a for an axis of n rows pooled to m = floor(n / ratio) has m + 1 elements,
    a[0] = 0, a[m] = n, and steps of floor(n / m) or floor(n / m) + 1.

    Args:
      value: a 4-D NHWC Tensor of float32, float64, int32 or int64.
      pooling_ratio: 4 floats >= 1, one per dimension of `value`; the first and last
        must be 1.0 (no pooling over the batch or the channels), e.g. [1.0, 1.44, 1.73,
        1.0].
      pseudo_random: draw the sequences pseudo-randomly instead of randomly.
      overlapping: cells also take their right/bottom boundary, shared with the next
        cell: with sequence [0, 2, 4] and values [20, 5, 16, 3, 7], the result is
        [20, 16].
      deterministic: use the same sequences at every run (from the seeds, or from
        seeds drawn once per op and set of fetches and feeds when both are 0).
      seed: the sequences' seed; must be 0 unless `deterministic`.
      seed2: a second seed, likewise.
      name: name of the op.

    Returns:
      A namedtuple (output, row_pooling_sequence, col_pooling_sequence): the pooled
      Tensor of `value`'s type and the two int64 sequences used.

    Raises:
      TypeError: `pooling_ratio` not a list of numbers, or an unsupported dtype.
      ValueError: `pooling_ratio` not of 4 values >= 1, or `value` not of rank 4.
      UnimplementedError (at run time): a ratio other than 1 for batch or channels.
      InvalidArgumentError (at run time): seeds without `deterministic`, or a dimension
        smaller than its ratio.
    """
    return FractionalMaxPoolOutput(*_fractional_pool(
        "FractionalMaxPool", "fractional_max_pool", value, pooling_ratio, pseudo_random,
        overlapping, deterministic, seed, seed2, name))


@tf_export("nn.fractional_avg_pool")
def fractional_avg_pool(value, pooling_ratio: Sequence[float], pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False,
                        seed: int = 0, seed2: int = 0,
                        name: Optional[str] = None) -> FractionalAvgPoolOutput:
    """Fractional average pooling (TF1 `tf.nn.fractional_avg_pool`; Graham, 2015).

    The cells are drawn as for `fractional_max_pool`; each output is the mean of its
    cell (for integer types, the sum divided by the cell's size, truncated toward 0).

    Args:
      value: a 4-D NHWC Tensor of float32, float64, int32 or int64.
      pooling_ratio: 4 floats >= 1, one per dimension of `value`; the first and last
        must be 1.0.
      pseudo_random: draw the sequences pseudo-randomly instead of randomly.
      overlapping: cells also take their right/bottom boundary, shared with the next
        cell: with sequence [0, 2, 4] and values [20, 5, 16, 3, 7], the result is
        [13.67, 8.67] (the means of [20, 5, 16] and [16, 3, 7]).
      deterministic: use the same sequences at every run.
      seed: the sequences' seed; must be 0 unless `deterministic`.
      seed2: a second seed, likewise.
      name: name of the op.

    Returns:
      A namedtuple (output, row_pooling_sequence, col_pooling_sequence): the pooled
      Tensor of `value`'s type and the two int64 sequences used.

    Raises:
      TypeError: `pooling_ratio` not a list of numbers, or an unsupported dtype.
      ValueError: `pooling_ratio` not of 4 values >= 1, or `value` not of rank 4.
      UnimplementedError (at run time): a ratio other than 1 for batch or channels.
      InvalidArgumentError (at run time): seeds without `deterministic`, or a dimension
        smaller than its ratio.
    """
    return FractionalAvgPoolOutput(*_fractional_pool(
        "FractionalAvgPool", "fractional_avg_pool", value, pooling_ratio, pseudo_random,
        overlapping, deterministic, seed, seed2, name))
