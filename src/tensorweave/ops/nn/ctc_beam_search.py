"""CTC beam search decoding: CTCBeamSearchDecoder (part of the nn family).

The kernel follows TF's decoder with its default scorer (no language model). It grows a
tree of labellings, the beam entries, and each entry holds three log probabilities for
the prefix decoded so far: the prefix ending in a blank, the prefix ending in its last
label, and their total. One time step does this:

1. Take the beam (at most `beam_width` entries) in order of total, best first.
2. Move every entry on one step. The blank part comes from the old total times the
   blank's probability. The label part is the old label part plus what the parent passes
   on, times the probability of the entry's label. The parent passes on its blank part
   when the label repeats its own label, and its total otherwise.
3. Walk the beam again in the same order and offer each entry's children, one per
   non-blank class, unless the child is already in the beam. A child gets in when the
   beam has room or when it beats the lowest entry, and that entry is dropped.

Step 3 is sequential, and so is the outcome. The lowest entry changes as children come
in. An entry dropped early in the step and offered again later as a child comes back
with only its child probability; turned away, it also loses its own turn to offer
children. Equal scores are ordered by how TF's bounded top-n container (a vector over
libstdc++'s heap and sort algorithms) moves its elements. The kernel keeps that
container as TF does (`_TopN`), and its arithmetic runs in the input's dtype in TF's
order of operations, vectorized over the beam for step 2 and over the classes for step
3. TF computes its log-sum-exp correction log1p(exp(.)) in float32 for both dtypes, and
so does the kernel. The outputs then equal TF's, ties included, with one exception. TF
takes exp, log and log1p from the C library, which can round the last bit differently
from the correctly rounded values used here. Two labellings of mathematically equal
probability reached along different routes can then come out in another order, and the
search can go on differently from there.

merge_repeated is TF's output rule and does not change the search. It merges equal
consecutive labels of a beam's label sequence, so "a a" (two labels with a blank
between them) comes out as "a".
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.nn.ctc_ops import check_decoder_inputs
from tensorweave.ops.nn.nn_ops import merge_dims, with_rank

_NEG_INF = float("-inf")


# --- libstdc++'s heap and sort, over entry ids ordered by total[id] -------------------------
# TF orders the beam with std::greater on totals and keeps it in a vector that the heap and
# sort algorithms permute. Only the order of equal totals depends on how they move the
# elements, so they are written out here step for step. `greater` reads the totals at each
# comparison: TF lowers the total of an entry that it drops while the entry is still held.
def _sift_up(el: list, hole: int, top: int, value: int, total: list) -> None:
    """std::__push_heap: puts `value` at `hole` and moves it up toward `top`."""
    key = total[value]
    parent = (hole - 1) // 2
    while hole > top and total[el[parent]] > key:
        el[hole] = el[parent]
        hole = parent
        parent = (hole - 1) // 2
    el[hole] = value


def _adjust_heap(el: list, hole: int, length: int, value: int, total: list) -> None:
    """std::__adjust_heap: moves the hole at `hole` down to a leaf, then sifts `value` up."""
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if total[el[child]] > total[el[child - 1]]:
            child -= 1
        el[hole] = el[child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        el[hole] = el[child - 1]
        hole = child - 1
    _sift_up(el, hole, top, value, total)


def _make_heap(el: list, total: list) -> None:
    n = len(el)
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(el, parent, n, el[parent], total)


def _pop_heap(el: list, n: int, total: list) -> None:
    """std::pop_heap on el[:n]: the heap's top (the lowest total) goes to el[n - 1]."""
    if n > 1:
        value = el[n - 1]
        el[n - 1] = el[0]
        _adjust_heap(el, 0, n - 1, value, total)


def _sort_heap(el: list, total: list) -> None:
    for n in range(len(el), 1, -1):
        _pop_heap(el, n, total)


def _insertion_sort(el: list, first: int, last: int, total: list) -> None:
    """std::__insertion_sort, then std::__unguarded_insertion_sort from first + 16 on (the
    caller's split): equal totals keep their order."""
    for i in range(first + 1, last):
        value = el[i]
        key = total[value]
        if i < first + 16 and key > total[el[first]]:
            el[first + 1:i + 1] = el[first:i]
            el[first] = value
            continue
        j = i
        while key > total[el[j - 1]]:
            el[j] = el[j - 1]
            j -= 1
        el[j] = value


def _introsort_loop(el: list, first: int, last: int, depth: int, total: list) -> None:
    while last - first > 16:
        if depth == 0:  # std::__partial_sort over the whole range: a heap sort
            part = el[first:last]
            _make_heap(part, total)
            _sort_heap(part, total)
            el[first:last] = part
            return
        depth -= 1
        # std::__move_median_to_first(first, first + 1, mid, last - 1)
        a, b, c = first + 1, first + (last - first) // 2, last - 1
        ka, kb, kc = total[el[a]], total[el[b]], total[el[c]]
        if ka > kb:
            median = b if kb > kc else (c if ka > kc else a)
        else:
            median = a if ka > kc else (c if kb > kc else b)
        el[first], el[median] = el[median], el[first]
        # std::__unguarded_partition around the pivot at `first`
        pivot = total[el[first]]
        lo, hi = first + 1, last
        while True:
            while total[el[lo]] > pivot:
                lo += 1
            hi -= 1
            while pivot > total[el[hi]]:
                hi -= 1
            if lo >= hi:
                break
            el[lo], el[hi] = el[hi], el[lo]
            lo += 1
        _introsort_loop(el, lo, last, depth, total)
        last = lo


def _std_sort(el: list, total: list) -> None:
    """std::sort(el, greater): the highest total first."""
    n = len(el)
    if n <= 16 or len({total[i] for i in el}) == n:
        # std::sort is an insertion sort up to 16 elements (stable, as Python's sort), and
        # without equal totals any sort gives the one order
        el.sort(key=total.__getitem__, reverse=True)
        return
    _introsort_loop(el, 0, n, 2 * (n.bit_length() - 1), total)
    _insertion_sort(el, 0, n, total)


class _TopN:
    """TF's gtl::TopN of beam entry ids, highest `total[id]` first.

    Its element vector goes through three states: UNORDERED (elements in push order),
    BOTTOM_KNOWN (after peek_bottom, the lowest at position 0), and HEAP_SORTED (from
    limit + 1 pushes on, a heap of `limit` elements with the lowest at position 0)."""

    UNORDERED, BOTTOM_KNOWN, HEAP_SORTED = range(3)

    def __init__(self, limit: int, total: list, elements: Sequence[int] = ()) -> None:
        # `elements` stands for pushing them in order (at most `limit`: none is dropped)
        self.limit = limit
        self.total = total  # shared with the decoder, which changes totals in place
        self.elements = list(elements)
        self.state = self.UNORDERED

    def size(self) -> int:
        return len(self.elements)  # never above `limit`

    def push(self, entry: int) -> None:
        el, total = self.elements, self.total
        if self.state != self.HEAP_SORTED:
            el.append(entry)
            if len(el) == self.limit + 1:  # drop the lowest, from now on as a heap
                _make_heap(el, total)
                _pop_heap(el, len(el), total)
                el.pop()
                self.state = self.HEAP_SORTED
            elif self.state == self.BOTTOM_KNOWN and not total[entry] > total[el[0]]:
                el[0], el[-1] = el[-1], el[0]  # the new element is the new bottom
        elif total[entry] > total[el[0]]:
            _pop_heap(el, len(el), total)  # the lowest goes to the end, where
            el[-1] = entry  # the new element takes its place
            _sift_up(el, len(el) - 1, 0, entry, total)

    def peek_bottom(self) -> int:
        el = self.elements
        if self.state == self.UNORDERED:
            # the first of the lowest (min keeps the first of equal keys, as TF's scan)
            low = min(range(len(el)), key=lambda i: self.total[el[i]])
            el[0], el[low] = el[low], el[0]
            self.state = self.BOTTOM_KNOWN
        return el[0]

    def unsorted(self) -> List[int]:
        return list(self.elements)

    def extract(self) -> List[int]:
        """The elements, highest total first (TopN::Extract)."""
        el = self.elements
        if self.state != self.HEAP_SORTED:
            _std_sort(el, self.total)
        elif len({self.total[i] for i in el}) == len(el):
            el.sort(key=self.total.__getitem__, reverse=True)
        else:
            _sort_heap(el, self.total)
        return el


# --- the decoder ---------------------------------------------------------------------------
def _log1p_exp(d: np.ndarray) -> np.ndarray:
    """log1pf(expf(d)) of TF's LogSumExp: float32 whatever the dtype of d. Each function
    is evaluated in float64 and rounded once to float32: the correctly rounded result,
    which a C library's float32 function gives but in rare last-bit cases."""
    e = np.exp(d.astype(np.float32).astype(np.float64)).astype(np.float32)
    return np.log1p(e.astype(np.float64)).astype(np.float32).astype(d.dtype)


def _log_sum_exp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TF's LogSumExp elementwise: the larger plus log1p(exp(smaller - larger)), where a
    -inf operand gives the other one unchanged."""
    a_larger = a > b
    big = np.where(a_larger, a, b)
    with np.errstate(invalid="ignore", over="ignore"):
        out = big + _log1p_exp(np.where(a_larger, b, a) - big)
    return np.where(a == _NEG_INF, b, np.where(b == _NEG_INF, a, out))


def _normalizers(inputs: np.ndarray) -> np.ndarray:
    """Per [time, batch], log(sum(exp(x))) computed as TF's Step does: max plus the log of
    the sum, added up in class order in the input's dtype, of exp(x - max)."""
    dtype = inputs.dtype
    top = inputs.max(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp((inputs - top).astype(np.float64)).astype(dtype)
        total = np.cumsum(e, axis=2, dtype=dtype)[..., -1]  # sequential, as TF's loop
        return top[..., 0] + np.log(total.astype(np.float64)).astype(dtype)


class _BeamSearch:
    """The beam of one batch entry. Entries are ids into the parallel lists below; the
    root is 0. An entry outside the beam has total -inf (TF's "not active")."""

    def __init__(self, beam_width: int, num_classes: int, dtype) -> None:
        self.width = beam_width
        self.num_classes = num_classes
        self.dtype = dtype
        self.parent = [-1]
        self.label = [-1]
        self.total = [0.0]  # log p(prefix)
        self.blank = [0.0]  # log p(prefix, ending in a blank)
        self.last = [_NEG_INF]  # log p(prefix, ending in its last label)
        self.children: Dict[Tuple[int, int], int] = {}
        self.leaves = _TopN(beam_width, self.total, [0])

    def step(self, x: np.ndarray, x_norm: np.ndarray, norm) -> None:
        """One time step: `x` the logits, `x_norm` = x - norm, `norm` their log-sum-exp."""
        dtype, total, blank, last = self.dtype, self.total, self.blank, self.last
        branches = self.leaves.extract()
        n = len(branches)
        parents = [self.parent[i] for i in branches]
        # TF walks the beam in order and reads each parent's probabilities as they stand
        # at that moment. `then[j]` is the last place before j where the parent of the
        # j-th entry was moved on (-1: not yet). An entry can be held twice (dropped
        # with a -inf total, then offered and taken back while still held), and TF
        # moves it on at each place, its label part growing from what the previous
        # place left: `again[j]` is that previous place and `turn[j]` counts them.
        then, again = np.full(n, -1), np.full(n, -1)
        turn = np.zeros(n, dtype=np.int64)
        place: Dict[int, int] = {}
        for j, (entry, up) in enumerate(zip(branches, parents)):
            then[j] = place.get(up, -1)
            if entry in place:
                again[j] = place[entry]
                turn[j] = turn[again[j]] + 1
            place[entry] = j
        old_total = np.array([total[i] for i in branches], dtype)
        old_blank = np.array([blank[i] for i in branches], dtype)
        old_last = np.array([last[i] for i in branches], dtype)
        labels = np.array([self.label[i] for i in branches], dtype=np.int64)
        is_root = np.array([up < 0 for up in parents])
        # the parents when the step began: a parent outside the beam has total -inf
        # and passes nothing on
        up_total = np.array([total[up] if up >= 0 else _NEG_INF for up in parents], dtype)
        up_blank = np.array([blank[up] if up >= 0 else _NEG_INF for up in parents], dtype)
        up_label = np.array([self.label[up] if up >= 0 else -2 for up in parents])
        passed_on = np.where(labels == up_label, up_blank, up_total)
        new_blank = (old_total + x[-1]) - norm
        emit = x_norm[np.where(is_root, 0, labels)]

        # The parent passes its part on only while its total is not -inf (TF's
        # "active"), judged when the entry's turn comes: after the parent was moved on
        # if that came first. Guess "not yet moved on" everywhere, then correct: each
        # round settles at least one more place of the walk, and the rounds stop when
        # nothing changes (at once unless a -inf logit made a total -inf).
        active = ~is_root & (up_total != _NEG_INF)
        while True:
            new_last = old_last.copy()
            for k in range(int(turn.max()) + 1 if n else 0):
                at = turn == k
                before = old_last[at] if k == 0 else new_last[again[at]]
                moved = np.where(active[at], _log_sum_exp(before, passed_on[at]), before)
                new_last[at] = np.where(is_root[at], before, moved + emit[at])
            new_total = _log_sum_exp(new_blank, new_last)
            now = ~is_root & (np.where(then >= 0, new_total[np.maximum(then, 0)], up_total)
                              != _NEG_INF)
            if (now == active).all():
                break
            active = now
        for i, t, b, l in zip(branches, new_total.tolist(), new_blank.tolist(),
                              new_last.tolist()):
            total[i], blank[i], last[i] = t, b, l  # an entry held twice: the last place
        self.leaves = _TopN(self.width, total, branches)

        # children: the label's probability times the parent's blank part (a repeated
        # label needs a blank in between) or its total
        classes = np.arange(self.num_classes - 1)
        child = x_norm[None, :-1] + np.where(classes[None, :] == labels[:, None],
                                             old_blank[:, None], old_total[:, None])
        # TF clears both the new and the old probabilities of a child it turns away. The
        # child can be an entry of this walk, dropped earlier in the step. If its turn
        # is still to come, its old total then reads -inf and its children are never
        # offered. So the walk's own entries are always offered as children.
        old_totals = dict(zip(branches, old_total.tolist()))
        in_walk: Dict[int, List[int]] = {}
        for entry in place:
            if self.parent[entry] in place:
                in_walk.setdefault(self.parent[entry], []).append(self.label[entry])
        for j, entry in enumerate(branches):
            self._offer_children(entry, child[j], in_walk.get(entry, ()), old_totals)

    def _offer_children(self, entry: int, scores: np.ndarray, in_walk: Sequence[int],
                        old_totals: Dict[int, float]) -> None:
        """Offers the children of `entry` in class order, as TF does. `scores` are their
        totals, `in_walk` the labels of those that are entries of this step's walk, and
        `old_totals` the walk's totals from before the step (TF's oldp)."""
        leaves, total, width = self.leaves, self.total, self.width
        entry_total = old_totals[entry]
        if not entry_total > _NEG_INF:
            return
        floor = _NEG_INF
        if leaves.size() >= width:
            floor = total[leaves.peek_bottom()]
            if not entry_total > floor:
                return  # its children score at most its total: none would get in
        # While the beam is full its lowest total only rises, so a child not above it
        # now is turned away whenever it comes. TF still computes and clears it, which
        # matters only for the walk's own entries (see `step`).
        offered = np.flatnonzero(scores > floor).tolist()
        if in_walk:
            offered = sorted(set(offered).union(in_walk))
        for k in offered:
            child = self.children.get((entry, k))
            if child is not None and total[child] != _NEG_INF:
                continue  # already in the beam: moved on in step 2
            if child is None:
                child = len(total)
                self.children[(entry, k)] = child
                self.parent.append(entry)
                self.label.append(k)
                total.append(_NEG_INF)
                self.blank.append(_NEG_INF)
                self.last.append(_NEG_INF)
            score = scores[k].item()
            total[child], self.blank[child], self.last[child] = score, _NEG_INF, score
            full = leaves.size() >= width
            if score > _NEG_INF and (not full or score > total[leaves.peek_bottom()]):
                if full:
                    bottom = leaves.peek_bottom()  # dropped: it leaves the beam
                    total[bottom] = self.blank[bottom] = self.last[bottom] = _NEG_INF
                leaves.push(child)
            else:
                total[child] = self.last[child] = _NEG_INF
                if child in old_totals:
                    old_totals[child] = _NEG_INF

    def top_paths(self, n: int, merge_repeated: bool) -> Tuple[List[List[int]], List[float]]:
        """The n best label sequences and their log probabilities (TF's TopPaths)."""
        if n > self.width:
            raise ValueError("requested more paths than the beam width.")
        if n > self.leaves.size():
            raise ValueError("Less leaves in the beam search than requested.")
        best = _TopN(n, self.total)
        for entry in self.leaves.unsorted():
            best.push(entry)
        entries = best.extract()[:n]
        return [self._labels(e, merge_repeated) for e in entries], \
            [self.total[e] for e in entries]

    def _labels(self, entry: int, merge_repeated: bool) -> List[int]:
        out, following = [], -1
        while self.parent[entry] >= 0:
            if not (merge_repeated and self.label[entry] == following):
                out.append(self.label[entry])
            following = self.label[entry]
            entry = self.parent[entry]
        return out[::-1]


def _beam_search_shape(op):
    inputs = with_rank(op.inputs[0].shape, 3)
    seq_len = with_rank(op.inputs[1].shape, 1)
    batch = merge_dims(inputs.as_list()[1], seq_len.as_list()[0])
    n = op._get_attr("top_paths")
    return [TensorShape([None, 2])] * n + [TensorShape([None])] * n + \
        [TensorShape([2])] * n + [TensorShape([batch, n])]


register_op("CTCBeamSearchDecoder", inputs=["inputs: T", "sequence_length: int32"],
            outputs=["decoded_indices: top_paths * int64",
                     "decoded_values: top_paths * int64",
                     "decoded_shape: top_paths * int64", "log_probability: T"],
            attrs={"beam_width": 100, "top_paths": 1, "merge_repeated": True,
                   "T": TypeAttr((_dt.float32, _dt.float64), default=_dt.float32)},
            shape=_beam_search_shape)


def _sparse_outputs(paths: List[List[int]], batch: int):
    """One decoded path per batch entry as SparseTensor components (rows [b, i])."""
    lengths = np.array([len(p) for p in paths], dtype=np.int64)
    rows = np.repeat(np.arange(batch, dtype=np.int64), lengths)
    position = np.arange(rows.shape[0], dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths)
    values = np.array([v for p in paths for v in p], dtype=np.int64)
    shape = np.array([batch, lengths.max() if batch else 0], dtype=np.int64)
    return np.stack([rows, position], axis=1), values, shape


@kernel("CTCBeamSearchDecoder", cheap=False)
def _beam_search_kernel(ctx, inputs, seq_len):
    inputs, seq_len = np.asarray(inputs), np.asarray(seq_len)
    check_decoder_inputs(ctx, inputs, seq_len)
    _, batch, classes = inputs.shape
    width, n = ctx.attrs["beam_width"], ctx.attrs["top_paths"]
    merge = ctx.attrs["merge_repeated"]
    norm = _normalizers(inputs)
    with np.errstate(invalid="ignore"):
        x_norm = inputs - norm[..., None]
    paths = [[] for _ in range(n)]
    log_probs = np.zeros((batch, n), dtype=inputs.dtype)
    for b in range(batch):
        beam = _BeamSearch(width, classes, inputs.dtype)
        with np.errstate(invalid="ignore"):
            for t in range(max(int(seq_len[b]), 0)):
                beam.step(inputs[t, b], x_norm[t, b], norm[t, b])
        try:
            best, scores = beam.top_paths(n, merge)
        except ValueError as e:
            raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None
        for p in range(n):
            paths[p].append(best[p])
        log_probs[b] = scores
    outputs = [_sparse_outputs(paths[p], batch) for p in range(n)]
    return [o[0] for o in outputs] + [o[1] for o in outputs] + [o[2] for o in outputs] + \
        [log_probs]


not_differentiable("CTCBeamSearchDecoder")


@tf_export("nn.ctc_beam_search_decoder")
def ctc_beam_search_decoder(inputs, sequence_length, beam_width: int = 100,
                            top_paths: int = 1, merge_repeated: bool = True
                            ) -> Tuple[List[SparseTensor], Tensor]:
    """Beam search decoding of CTC logits (TF1 `tf.nn.ctc_beam_search_decoder`).

    The last class is the blank. Each step keeps the `beam_width` most likely label
    prefixes, each scored by the probability (softmax over the classes of each step) of
    all the alignments that reduce to it. Unlike `ctc_greedy_decoder`, a blank is not
    an element of a path: it separates repeated labels.

    If `merge_repeated` is True, equal consecutive labels of a decoded sequence are
    merged in the output. A sequence decoded as `A B B * B * B` (`*` the blank) comes out
    as `A B`, and as `A B B B` when it is False. The search itself is the same, so two of
    the top paths may then be equal.

    At run time the op fails with InvalidArgumentError when `top_paths` > `beam_width`
    or when the beam of a batch entry holds fewer than `top_paths` prefixes (an empty
    sequence holds one), and with FailedPreconditionError when a sequence length
    exceeds max_time.

    Args:
      inputs: float32 or float64 logits [max_time, batch_size, num_classes].
      sequence_length: an int32 vector [batch_size] of sequence lengths (<= max_time; a
        negative length decodes nothing).
      beam_width: the number of prefixes kept at each step (>= 1).
      top_paths: the number of decoded paths returned (>= 1, <= beam_width).
      merge_repeated: merge equal consecutive labels of the output sequences.

    Returns:
      A tuple `(decoded, log_probabilities)`. `decoded` is a list of `top_paths` int64
      SparseTensors; `decoded[j]` holds the j-th best path of each batch entry, with
      indices [batch, position] and dense shape [batch_size, longest path j]. The
      `log_probabilities` Tensor is [batch_size, top_paths] of the inputs' dtype and holds
      the log probability of each path, best first (that of the labelling found, before
      `merge_repeated` merges it).

    Raises:
      ValueError: `beam_width` or `top_paths` below 1, or shapes of the wrong rank or
        different batch sizes.
    """
    beam_width, top_paths = int(beam_width), int(top_paths)
    for attr, value in (("beam_width", beam_width), ("top_paths", top_paths)):
        if value < 1:
            raise ValueError("Attr '%s' of 'CTCBeamSearchDecoder' Op passed %d less than "
                             "minimum 1." % (attr, value))
    op = apply_op("CTCBeamSearchDecoder", [inputs, sequence_length],
                  {"beam_width": beam_width, "top_paths": top_paths,
                   "merge_repeated": bool(merge_repeated)},
                  name="CTCBeamSearchDecoder")
    out = op.outputs
    decoded = [SparseTensor(out[j], out[top_paths + j], out[2 * top_paths + j])
               for j in range(top_paths)]
    return decoded, out[3 * top_paths]


@tf_export("nn.ctc_beam_search_decoder_v2")
def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width: int = 100,
                               top_paths: int = 1) -> Tuple[List[SparseTensor], Tensor]:
    """Beam search decoding of CTC logits, TF2's signature: `ctc_beam_search_decoder`
    with `merge_repeated=False` (merging repeated labels in the output can return less
    likely paths, so TF2 dropped it).

    Args:
      inputs: float32 or float64 logits [max_time, batch_size, num_classes].
      sequence_length: an int32 vector [batch_size] of sequence lengths.
      beam_width: the number of prefixes kept at each step (>= 1).
      top_paths: the number of decoded paths returned (>= 1, <= beam_width).

    Returns:
      `(decoded, log_probabilities)` as `ctc_beam_search_decoder` returns them.

    Raises:
      ValueError: as `ctc_beam_search_decoder`.
    """
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width=beam_width,
                                   top_paths=top_paths, merge_repeated=False)
