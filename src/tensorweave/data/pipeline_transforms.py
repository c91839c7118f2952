"""The values of the element-wise dataset transformations: zip, concatenate, repeat,
take, skip, shuffle, cache, flat_map, interleave, map and filter (see dataset_ops.py's
overview for what each yields).
"""
from __future__ import annotations

import itertools
from typing import Optional, Tuple

import numpy as np

from tensorweave.data.pipeline import END_OF_INPUT, DatasetValue, ElementError, applied, \
    TracedFunction, component_rows, pass_context, read, reader, sub_dataset
from tensorweave.ops.random import philox


class Zip(DatasetValue):
    """An element of any input that failed is the zipped element's error (the others'
    elements of that step are used up, as TF's)."""

    def __init__(self, inputs):
        self.inputs = inputs

    def _elements(self, ctx, with_errors: bool):
        for parts in zip(*(read(d, ctx, with_errors) for d in self.inputs)):
            failed = [p for p in parts if isinstance(p, ElementError)]
            yield failed[0] if failed else [c for p in parts for c in p]

    def elements_after(self, ctx, n: int):
        for parts in zip(*(d.elements_after(ctx, n) for d in self.inputs)):
            yield [c for p in parts for c in p]


class Concatenate(DatasetValue):
    def __init__(self, first, second):
        self.first, self.second = first, second

    def _elements(self, ctx, with_errors: bool):
        yield from read(self.first, ctx, with_errors)
        yield from read(self.second, ctx, with_errors)


class Repeat(DatasetValue):
    def __init__(self, source, count: int):
        self.source, self.count = source, count

    def _elements(self, ctx, with_errors: bool):
        inputs = reader(self.source, with_errors)
        epochs = itertools.count() if self.count < 0 else range(self.count)
        for _ in epochs:
            empty = True
            for e in inputs(ctx):
                empty = False
                yield e
            if empty:  # an empty input repeated forever is empty, not a hang
                return

    def blocks(self, ctx):
        if self.source.blocks(ctx) is None:
            return None
        return self._blocks(ctx)

    def _blocks(self, ctx):
        epochs = itertools.count() if self.count < 0 else range(self.count)
        for _ in epochs:
            empty = True
            for block in self.source.blocks(ctx):
                empty = empty and component_rows(block[0]) == 0
                yield block
            if empty:
                return


class Take(DatasetValue):
    def __init__(self, source, count: int):
        self.source, self.count = source, count

    def _elements(self, ctx, with_errors: bool):
        return self._taken(lambda: read(self.source, ctx, with_errors), self.count)

    def elements_after(self, ctx, n: int):
        skipped = n if self.count < 0 else min(n, self.count)
        return self._taken(lambda: self.source.elements_after(ctx, skipped),
                           self.count if self.count < 0 else self.count - skipped)

    @staticmethod
    def _taken(inputs, count: int):
        it = inputs()
        try:
            if count < 0:
                yield from it
                return
            taken = 0
            while taken < count:  # an error element is not one of the `count`, as TF's
                e = next(it, END_OF_INPUT)
                if e is END_OF_INPUT:
                    return
                taken += not isinstance(e, ElementError)
                yield e
        finally:
            close = getattr(it, "close", None)
            if close is not None:  # the input stops here: its cleanups (a partial
                close()            # cache file) run now


class Skip(DatasetValue):
    def __init__(self, source, count: int):
        self.source, self.count = source, count

    def elements(self, ctx):
        it = self.source.elements(ctx)
        if self.count < 0:
            for _ in it:
                pass
            return
        yield from itertools.islice(it, self.count, None)

    def elements_with_errors(self, ctx):
        # an error met while skipping is handed on and not counted, as TF's
        skipped = 0
        for e in self.source.elements_with_errors(ctx):
            if isinstance(e, ElementError):
                yield e
            elif self.count >= 0 and skipped >= self.count:
                yield e
            else:
                skipped += 1

    def elements_after(self, ctx, n: int):
        if self.count < 0:
            return self.elements(ctx)
        return self.source.elements_after(ctx, self.count + n)


class Shuffle(DatasetValue):
    """TF's ShuffleDataset, its orders included: `seeds` (seed, seed2) give TF's; None,
    an unseeded shuffle, whose orders derive from the pass's seed (so a restored
    iterator goes on with the same ones); `key` names it in the pass.

    Each pass over the input draws from Philox(seed, seed2) of its own: with
    `reshuffle`, the two words 2k and 2k + 1 of Philox(seeds) for the k-th pass (TF's
    RandomSeedGenerator, made afresh with the dataset, so an iterator initialized again
    starts again at k = 0), else `seeds` themselves."""

    def __init__(self, source, buffer_size: int, seeds: Optional[Tuple[int, int]],
                 reshuffle: bool, key: str = "ShuffleDataset"):
        self.source, self.buffer_size, self.reshuffle = source, buffer_size, reshuffle
        self.seeds, self.key = seeds, key

    def _elements(self, ctx, with_errors: bool):
        return self._shuffled(ctx, reader(self.source, with_errors))

    def _pass_seeds(self, ctx) -> Tuple[int, int]:
        """The (seed, seed2) of this pass over the input."""
        epoch = ctx.calls(self.key) if self.reshuffle else 0
        if self.seeds is None:
            return ctx.seed_for(self.key, epoch), 0
        if not self.reshuffle:
            return self.seeds
        return philox.seed_generator_seeds(*self.seeds, epoch)

    def _shuffled(self, ctx, inputs):
        ctx = pass_context(ctx)
        draw = philox.WordStream(*philox.key_counter_of_seeds(*self._pass_seeds(ctx)))
        # TF's ring buffer: input elements [first, end) at index % size. An element is
        # handed out as soon as the buffer is full, chosen among them by the next word;
        # the first one takes its place, and the next input element, read on the next
        # call, the first one's
        size = self.buffer_size
        buffer, first, end = [None] * size, 0, 0
        for e in inputs(ctx):
            if isinstance(e, ElementError):  # handed on when met, as TF's buffer fill
                yield e
                continue
            buffer[end % size] = e
            end += 1
            if end - first == size:
                yield _take_one(buffer, first, end, draw)
                first += 1
        while first < end:
            yield _take_one(buffer, first, end, draw)
            first += 1


def _take_one(buffer: list, first: int, end: int, draw):
    """TF's choice from the ring buffer's elements [first, end): the element at
    `first + word % count`, whose slot then takes the first element."""
    size = len(buffer)
    index = (first + draw() % (end - first)) % size
    chosen = buffer[index]
    buffer[index], buffer[first % size] = buffer[first % size], None
    return chosen


class Cache(DatasetValue):
    """Elements kept in memory after the first complete pass (later passes, e.g. of an
    enclosing repeat, replay them)."""

    def __init__(self, source):
        self.source = source

    def _elements(self, ctx, with_errors: bool):
        ctx = pass_context(ctx)
        state = ctx.state_of(self)  # the pass's cache: a restored pass fills its own
        if "cached" in state:
            yield from state["cached"]
            return
        seen = []
        for e in read(self.source, ctx, with_errors):
            if not isinstance(e, ElementError):  # a failed element is not kept (TF's)
                seen.append(e)
            yield e
        state["cached"] = seen


class FlatMap(DatasetValue):
    def __init__(self, source, fn: TracedFunction, key: str = "FlatMapDataset"):
        self.source, self.fn, self.key = source, fn, key

    def _elements(self, ctx, with_errors: bool):
        ctx = pass_context(ctx)
        call = ctx.calls(self.key)
        for k, e in enumerate(read(self.source, ctx, with_errors)):
            if isinstance(e, ElementError):
                yield e
                continue
            sub = ctx.child(self.key, call, k)  # its randomness: a function of the pass's
            yield from read(sub_dataset(sub, self, self.fn, e), sub, with_errors)


class Interleave(DatasetValue):
    """TF's interleave: `cycle` slots, visited in turn, `block` elements from each; an
    empty slot takes the next input's dataset when its turn comes (so an input element
    that failed is that turn's error, and the slot takes the next one after it), and an
    exhausted one is emptied."""

    def __init__(self, source, fn: TracedFunction, cycle: int, block: int,
                 read_ahead: bool = False, key: str = "InterleaveDataset"):
        self.source, self.fn, self.cycle, self.block = source, fn, cycle, block
        self.read_ahead, self.key = read_ahead, key

    def _open(self, ctx, call: int, index: int, element, with_errors: bool):
        """The elements of input `index`; with `read_ahead` each open input is read on a
        thread of its own (prefetch.py), `block` elements ahead."""
        ctx = ctx.child(self.key, call, index)
        value = sub_dataset(ctx, self, self.fn, element)
        if self.read_ahead:
            from tensorweave.data.prefetch import Prefetch
            value = Prefetch(value, self.block)
        return read(value, ctx, with_errors)

    def _elements(self, ctx, with_errors: bool):
        ctx = pass_context(ctx)
        call = ctx.calls(self.key)
        inputs = enumerate(read(self.source, ctx, with_errors))
        slots = [None] * self.cycle
        k, taken, ended = 0, 0, False  # the slot in turn, its elements this turn

        def fill(j):
            """The next input into slot j (an input that failed: its error)."""
            nonlocal ended
            index, e = next(inputs, (None, None))
            if index is None:
                ended = True
            elif isinstance(e, ElementError):
                yield e
            else:
                slots[j] = self._open(ctx, call, index, e, with_errors)

        for j in range(self.cycle if self.read_ahead else 0):
            # read ahead: every slot is opened (and its thread starts) at once
            while slots[j] is None and not ended:
                yield from fill(j)
        while not ended or any(slot is not None for slot in slots):
            if slots[k] is None and not ended:
                yield from fill(k)
                continue
            e = END_OF_INPUT if slots[k] is None else next(slots[k], END_OF_INPUT)
            if e is not END_OF_INPUT:
                yield e
                # a failed element of an open input is not one of its block (TF's)
                taken += not isinstance(e, ElementError)
                if taken < self.block:
                    continue
            else:
                slots[k] = None
            k, taken = (k + 1) % self.cycle, 0


class Map(DatasetValue):
    def __init__(self, source, fn: TracedFunction):
        self.source, self.fn = source, fn

    def _elements(self, ctx, with_errors: bool):
        return self._mapped(ctx, reader(self.source, with_errors), with_errors)

    def elements_after(self, ctx, n: int):
        if self.skip_errors:  # the elements dropped decide which input elements to skip
            return DatasetValue.elements_after(self, ctx, n)
        # the function is not run for the skipped elements (a function with side effects
        # or randomness is external state, iterator_checkpoint.py)
        return self._mapped(ctx, lambda c: self.source.elements_after(c, n))

    def _mapped(self, ctx, inputs, errors_as_elements: bool = False):
        for item in applied(self, ctx, inputs, errors_as_elements):
            yield item if isinstance(item, ElementError) else item[1]


class Filter(DatasetValue):
    def __init__(self, source, fn: TracedFunction):
        self.source, self.fn = source, fn

    def _elements(self, ctx, with_errors: bool):
        for item in applied(self, ctx, reader(self.source, with_errors), with_errors):
            if isinstance(item, ElementError):
                yield item
            elif bool(np.asarray(item[1][0])):
                yield item[0]
