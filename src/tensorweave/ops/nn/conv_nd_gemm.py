"""N-d convolution lowered to matrix products (the cores of the Conv3D kernels), and the
window helpers shared with depthwise_ops.py and pooling_nd_ops.py.

Arrays are channels last: inputs [batch, *spatial, channels], filters [*ks, ci, co].
As conv_ops.py does in 2-D, the forward and filter-gradient kernels multiply an
"im2col" matrix (one row per output position, one column per (tap, in_channel)) by the
filter or by the output gradient. Two things make that fast in NumPy:

* The matrix is built and consumed one block of output planes (whole images, or planes
  of the first spatial dimension of one image) at a time, into ONE buffer reused by every
  block: the block is still in cache when BLAS reads it, and no fresh multi-megabyte
  array is page-faulted in per call (a fresh 28 MB im2col matrix cost ~4 ms of page
  faults on top of a 6 ms product).
* With few input channels (at most _FEW_CHANNELS; RGB volumes) a row of the matrix is
  made of runs of ci values, and copying runs of 3 crawls (6 ms for the 10.6M values of
  a [8, 16, 32, 32, 3] x 27-tap matrix). With a unit stride in the last dimension the
  matrix is then built transposed, from a channels-first copy of the input, one tap at
  a time: runs of a whole output row (2.4 ms), and BLAS reads the transpose in place
  (its product 3.0 ms against 2.2 ms, on 2 threads). The input gradient takes the same
  layout: one product per block gives every tap's contribution, and each is added into
  a channels-first input gradient along whole rows. With more channels the rows are
  long enough and the input gradient multiplies each tap separately (no [rows, K]
  intermediate; faster once ci is a SIMD width or more).
"""
from __future__ import annotations

import itertools
from typing import List, NamedTuple, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.ops.math.blas import large_product
from tensorweave.ops import onednn
from tensorweave.ops.nn.conv_ops import _IM2COL_CHUNK_BYTES, Window

# inputs with at most this many channels use the channels-first (transposed) layout;
# measured on [4, 8, 16, 16, ci] x [3, 3, 3, ci, 16]: transposed is faster at ci = 3,
# slower from ci = 8
_FEW_CHANNELS = 4


# --- window helpers ------------------------------------------------------------------------
def pad_nd(x: np.ndarray, wins: Sequence[Window], value=0) -> np.ndarray:
    """x padded in every spatial dimension by its window's pads."""
    if not any(w.pad_before or w.pad_after for w in wins):
        return x
    out = np.full((x.shape[0],) + tuple(w.padded for w in wins) + (x.shape[-1],), value,
                  dtype=x.dtype)
    out[(slice(None),) + tuple(slice(w.pad_before, w.pad_before + w.size)
                               for w in wins)] = x
    return out


def unpad_nd(xp: np.ndarray, wins: Sequence[Window]) -> np.ndarray:
    """The inverse of pad_nd: the unpadded window of a padded [N, *spatial, C] array."""
    if not any(w.pad_before or w.pad_after for w in wins):
        return xp
    return np.ascontiguousarray(xp[(slice(None),) + tuple(
        slice(w.pad_before, w.pad_before + w.size) for w in wins)])


def patches(xp: np.ndarray, wins: Sequence[Window]) -> np.ndarray:
    """A read-only view [batch, *outs, *ks, channels] of every window of padded `xp`."""
    st = xp.strides
    shape = (xp.shape[0],) + tuple(w.out for w in wins) + tuple(w.k for w in wins) + \
        (xp.shape[-1],)
    strides = (st[0],) + tuple(st[i + 1] * w.stride for i, w in enumerate(wins)) + \
        tuple(st[i + 1] * w.dilation for i, w in enumerate(wins)) + (st[-1],)
    return as_strided(xp, shape, strides, writeable=False)


def taps(wins: Sequence[Window]):
    """(flat tap index, index tuple into a padded array) for every tap, row-major."""
    for flat, ks in enumerate(itertools.product(*(range(w.k) for w in wins))):
        yield flat, (slice(None),) + tuple(w.tap(k) for w, k in zip(wins, ks))


# --- blocks of output planes -----------------------------------------------------------------
class Block(NamedTuple):
    """Images [first, stop) and, in each, the output planes [lo, hi) of the first spatial
    dimension. Either the block holds whole images or a single one, so its output rows
    are contiguous."""

    first: int
    stop: int
    lo: int
    hi: int

    def planes(self) -> int:
        return (self.stop - self.first) * (self.hi - self.lo)

    def first_plane(self, out_planes: int) -> int:
        """The index of the block's first plane among all images' planes."""
        return self.first * out_planes + self.lo

    def tap(self, index: tuple) -> tuple:
        """A tap's index into a padded [n, *spatial, ...] array (taps()), narrowed to the
        block's images and output planes."""
        d = index[1]
        planes = slice(d.start + self.lo * d.step, d.start + (self.hi - 1) * d.step + 1,
                       d.step)
        return (slice(self.first, self.stop), planes) + index[2:]


def plane_blocks(n: int, out_planes: int, plane_bytes: int) -> List[Block]:
    """Blocks covering `n` images of `out_planes` output planes, each about
    _IM2COL_CHUNK_BYTES of im2col matrix (`plane_bytes` per plane; at least one plane)."""
    per_block = max(1, _IM2COL_CHUNK_BYTES // max(plane_bytes, 1))
    if out_planes == 0:
        return []
    if per_block >= out_planes:
        step = per_block // out_planes
        return [Block(a, min(n, a + step), 0, out_planes) for a in range(0, n, step)]
    return [Block(a, a + 1, lo, min(out_planes, lo + per_block))
            for a in range(n) for lo in range(0, out_planes, per_block)]


class BlockPlan:
    """The blocks of output planes of a convolution and one buffer that holds the
    [rows, k] matrix of the largest block (reused by every block)."""

    def __init__(self, n: int, wins: Sequence[Window], k: int, dtype: np.dtype):
        self.k = k
        self.out_planes = wins[0].out
        self.plane_shape = tuple(w.out for w in wins[1:])
        self.plane_rows = int(np.prod(self.plane_shape))
        self.blocks = plane_blocks(n, self.out_planes,
                                   self.plane_rows * k * np.dtype(dtype).itemsize)
        most = max((b.planes() for b in self.blocks), default=0)
        self.buffer = np.empty(most * self.plane_rows * k, dtype=dtype)

    def count(self, block: Block) -> int:
        """The number of output positions (rows) of `block`."""
        return block.planes() * self.plane_rows

    def rows(self, block: Block) -> slice:
        """The block's rows among all output positions (row-major [n, *outs])."""
        start = block.first_plane(self.out_planes) * self.plane_rows
        return slice(start, start + self.count(block))

    def matrix(self, block: Block) -> np.ndarray:
        """The start of the buffer as a flat array of the block's rows * k values."""
        return self.buffer[:self.count(block) * self.k]

    def by_tap(self, flat: np.ndarray, block: Block, n_taps: int,
               channels: int) -> np.ndarray:
        """A block's [k, rows] matrix `flat` as [taps, channels, images, *planes]."""
        return flat.reshape((n_taps, channels, block.stop - block.first,
                             block.hi - block.lo) + self.plane_shape)


class Columns:
    """The im2col matrix of a convolution's input, one block at a time, in one buffer.

    `columns(block)` is [block rows, K] with K = prod(ks) * ci ordered (tap, channel) as
    the filter reshaped to [K, co]: a C-contiguous matrix, or with few channels the
    transpose of a C-contiguous [K, rows] one (see the module docstring). It is
    overwritten by the next call.
    """

    def __init__(self, x: np.ndarray, wins: Sequence[Window]):
        self.wins = wins
        self.channels = x.shape[-1]
        self.tap_index = [index for _, index in taps(wins)]
        self.plan = BlockPlan(x.shape[0], wins, len(self.tap_index) * self.channels, x.dtype)
        # a strided last dimension makes the transposed copy gather every other value,
        # and its input transpose then costs as much as the (smaller) matrix saves
        self.transposed = self.channels <= _FEW_CHANNELS and wins[-1].stride == 1
        xp = pad_nd(x, wins)
        if self.transposed:  # [ci, n, *padded]: one tap's values form whole rows
            self.src = np.ascontiguousarray(np.moveaxis(xp, -1, 0))
        else:
            self.src = xp

    def __call__(self, block: Block) -> np.ndarray:
        flat = self.plan.matrix(block)
        if self.transposed:
            cols = self.plan.by_tap(flat, block, len(self.tap_index), self.channels)
            for t, index in enumerate(self.tap_index):
                cols[t] = self.src[(slice(None),) + block.tap(index)]
            return flat.reshape(self.plan.k, self.plan.count(block)).T
        view = patches(self.src[block.first:block.stop], self.wins)[:, block.lo:block.hi]
        np.copyto(flat.reshape(view.shape), view)
        return flat.reshape(self.plan.count(block), self.plan.k)


# --- convolution and its gradients -------------------------------------------------------------
def conv_nd(x: np.ndarray, w: np.ndarray, wins: Sequence[Window]) -> np.ndarray:
    """Channels-last convolution of x [n, *sp, ci] with w [*ks, ci, co]."""
    fast = onednn.conv(x, w, wins)
    if fast is not None:
        return fast
    co = w.shape[-1]
    cols = Columns(x, wins)
    plan = cols.plan
    w2 = w.reshape(plan.k, co)
    out = np.empty((x.shape[0] * plan.out_planes * plan.plane_rows, co),
                   dtype=np.result_type(x, w))
    with large_product(out.shape[0] * w2.size):
        for block in plan.blocks:
            np.matmul(cols(block), w2, out=out[plan.rows(block)])
    return out.reshape((x.shape[0],) + tuple(win.out for win in wins) + (co,))


def conv_nd_backprop_filter(x: np.ndarray, filter_shape, dy: np.ndarray,
                            wins: Sequence[Window]) -> np.ndarray:
    """The filter gradient of conv_nd: the im2col matrix's transpose times `dy`, summed
    over the blocks."""
    fast = onednn.conv_backprop_filter(x, filter_shape, dy, wins)
    if fast is not None:
        return fast
    co = filter_shape[-1]
    cols = Columns(x, wins)
    plan = cols.plan
    dy2 = dy.reshape(-1, co)
    dw = np.zeros((plan.k, co), dtype=np.result_type(x, dy))
    part = np.empty_like(dw)
    with large_product(dy2.size * plan.k):
        for block in plan.blocks:
            np.matmul(cols(block).T, dy2[plan.rows(block)], out=part)
            dw += part
    return dw.reshape(tuple(filter_shape))


def conv_nd_backprop_input(input_shape, w: np.ndarray, dy: np.ndarray,
                           wins: Sequence[Window]) -> np.ndarray:
    """The input gradient of conv_nd, of the channels-last shape `input_shape`."""
    fast = onednn.conv_backprop_input(input_shape, w, dy, wins)
    if fast is not None:
        return fast
    if w.shape[-2] <= _FEW_CHANNELS:
        return _backprop_input_few_channels(input_shape, w, dy, wins)
    return _backprop_input_by_tap(input_shape, w, dy, wins)


def _backprop_input_by_tap(input_shape, w: np.ndarray, dy: np.ndarray,
                           wins: Sequence[Window]) -> np.ndarray:
    """Each tap's `dy @ w[tap].T` added into a strided slice of the padded input
    gradient, then unpadded."""
    ci, co = w.shape[-2:]
    n = input_shape[0]
    dxp = np.zeros((n,) + tuple(win.padded for win in wins) + (ci,), dtype=dy.dtype)
    dy2 = dy.reshape(-1, co)
    w_taps = w.reshape(-1, ci, co)
    outs = (n,) + tuple(win.out for win in wins) + (ci,)
    buf = np.empty((dy2.shape[0], ci), dtype=dy.dtype)
    with large_product(dy2.size * w.size // co):
        for flat, index in taps(wins):
            np.matmul(dy2, w_taps[flat].T, out=buf)
            dxp[index] += buf.reshape(outs)
    return unpad_nd(dxp, wins)


def _backprop_input_few_channels(input_shape, w: np.ndarray, dy: np.ndarray,
                                 wins: Sequence[Window]) -> np.ndarray:
    """The input gradient with few input channels: per block of output planes, one
    product [K, co] x [co, rows] gives every (tap, channel)'s contribution as whole rows,
    added into a channels-first padded gradient; transposed back at the end."""
    ci, co = w.shape[-2:]
    n = input_shape[0]
    plan = BlockPlan(n, wins, w.size // co, dy.dtype)
    dxcf = np.zeros((ci, n) + tuple(win.padded for win in wins), dtype=dy.dtype)
    w2 = w.reshape(plan.k, co)
    dy2 = dy.reshape(-1, co)
    tap_index = [index for _, index in taps(wins)]
    with large_product(dy2.size * plan.k):
        for block in plan.blocks:
            flat = plan.matrix(block)
            np.matmul(w2, dy2[plan.rows(block)].T, out=flat.reshape(plan.k, plan.count(block)))
            part = plan.by_tap(flat, block, len(tap_index), ci)
            for t, index in enumerate(tap_index):
                dxcf[(slice(None),) + block.tap(index)] += part[t]
    return np.ascontiguousarray(unpad_nd(np.moveaxis(dxcf, 0, -1), wins))
