"""The fast path of MaxPoolGrad for windows that tile the input exactly.

When stride == window size and the input splits into whole windows (no padding, no
overlap, no remainder: a 2x2/2 pool of an even-sized input), every input element belongs
to one window, and the first maximum of each window in row-major order is found by one
scan over its taps. A transpose copy first makes each tap (one element of every window)
a contiguous row, so the scan and the routing run over contiguous memory (NumPy is ~4x
slower on the strided 2x2 views of the general path); a second transpose copy puts the
routed gradient back in NHWC order. On cnn_train's pools this is 10-35% faster than the
general path (noisy machine), at the cost of one more input-sized buffer.

Tap t wins over the taps before it only if it is strictly greater than their maximum,
so among equal maxima the first wins, as TF's CPU kernel. A NaN would break that scan;
the window maxima propagate NaN (np.maximum), so an input with any NaN is detected
cheaply and handed back to the general path, which follows TF's NaN rule (see
pooling_ops.winning_taps).
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.ops.nn.conv_ops import Window


def tiles_exactly(wh: Window, ww: Window) -> bool:
    """Whether the windows cover the input once each: no padding, overlap or remainder."""
    return wh.k * ww.k > 1 and all(w.stride == w.k and w.dilation == 1 and
                                   w.pad_before == 0 and w.out * w.k == w.size
                                   for w in (wh, ww))


def _first_max(taps: Sequence[np.ndarray]) -> Tuple[np.ndarray, List[np.ndarray]]:
    """(elementwise maximum of `taps`, one mask per tap marking where it is the first
    maximum). Needs at least two taps."""
    beats_earlier = [None, np.greater(taps[1], taps[0])]
    best = np.maximum(taps[0], taps[1])
    for tap in taps[2:]:
        beats_earlier.append(np.greater(tap, best))
        np.maximum(best, tap, out=best)
    # a tap wins where it beats the taps before it and no later tap beats it
    masks = [beats_earlier[-1]]
    beaten_later = beats_earlier[-1]
    for beats in reversed(beats_earlier[1:-1]):
        masks.insert(0, np.greater(beats, beaten_later))  # beats & ~beaten_later
        beaten_later = beaten_later | beats
    masks.insert(0, ~beaten_later)
    return best, masks


def route(dy: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """out = dy where mask else 0, exactly: AND with an all-ones/all-zeros mask (a
    multiply would turn an infinite gradient of a losing tap into NaN; np.where and
    copyto(where=) are ~15x slower on such irregular masks)."""
    bits = np.dtype("i%d" % dy.dtype.itemsize)  # signed: the int8 mask widens to it
    np.bitwise_and(dy.view(bits), -mask.view(np.int8), out=out.view(bits))


def max_pool_grad_tiled(x: np.ndarray, dy: np.ndarray, wh: Window,
                        ww: Window) -> Optional[np.ndarray]:
    """MaxPoolGrad of NHWC `x` for exactly tiling windows (see `tiles_exactly`).

    Args:
      x: the NHWC orig_input.
      dy: the NHWC gradient of the pooled output, of x's dtype.
      wh: the H window.
      ww: the W window.

    Returns:
      The NHWC gradient of `x`, or None when `x` holds a NaN (the general path handles
      those).
    """
    n, _, _, c = x.shape
    tiles = (n * wh.out, wh.k, ww.out, ww.k, c)
    # one transpose copy makes each tap a contiguous row: every later pass is contiguous
    # (np.array always copies: the copy is overwritten below)
    taps = np.array(x.reshape(tiles).transpose(1, 3, 0, 2, 4), order="C")
    taps = taps.reshape(wh.k * ww.k, -1)
    pooled, masks = _first_max(taps)
    if x.dtype.kind == "f" and np.isnan(pooled).any():
        return None
    flat_dy = np.ascontiguousarray(dy).reshape(-1)
    routed = taps  # the taps are no longer needed: route the gradient into their rows
    for t, mask in enumerate(masks):
        route(flat_dy, mask, routed[t])
    grid = routed.reshape(wh.k, ww.k, n * wh.out, ww.out, c).transpose(2, 0, 3, 1, 4)
    return np.ascontiguousarray(grid).reshape(x.shape)
