"""The values of the dataset transformations that regroup elements: batch, padded_batch,
window and unbatch, with the stacking and padding of a batch's components that
experimental.py's batching transformations share.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.data.pipeline import COMPOSITES, DatasetValue, ElementError, \
    component_row, component_rows, read


class Batch(DatasetValue):
    """`whole`: a failed element fails the whole batch of `size` inputs it falls in
    (map_and_batch's), not only the elements read before it (batch's)."""

    def __init__(self, source, size: int, drop_remainder: bool, whole: bool = False):
        self.source, self.size, self.drop = source, size, drop_remainder
        self.whole = whole

    def _elements(self, ctx, with_errors: bool):
        blocks = self.source.blocks(ctx)
        if blocks is not None:  # no function below: no errors
            yield from _batches_of_blocks(blocks, self.size, self.drop)
            return
        for batch in _row_batches(read(self.source, ctx, with_errors), self.size,
                                  self.drop, self.whole):
            yield _combined(batch, lambda b: stack(ctx, b), with_errors)

    def elements_after(self, ctx, n: int):
        # the batches after the first n are those of the input after its first n * size
        blocks = self.source.blocks(ctx)
        if blocks is not None:
            yield from _batches_of_blocks(_blocks_after(blocks, n * self.size), self.size,
                                          self.drop)
            return
        for batch in _row_batches(self.source.elements_after(ctx, n * self.size),
                                  self.size, self.drop):
            yield stack(ctx, batch)


def _combined(batch, combine, with_errors: bool):
    """`combine(batch)`; with errors, an ElementError in its place where it fails: a
    batch that cannot be made (elements of different shapes) fails its get_next, and
    the pass goes on with the next batch, as TF's."""
    if not with_errors:
        return combine(batch)
    if isinstance(batch, ElementError):
        return batch
    try:
        return combine(batch)
    except errors.OpError as e:
        return ElementError(e)


def _blocks_after(blocks, n: int):
    """`blocks` without their first `n` rows."""
    for block in blocks:
        rows = component_rows(block[0])
        if n >= rows:
            n -= rows
            continue
        yield [c[n:] for c in block] if n else block
        n = 0


def _row_batches(elements, size: int, drop_remainder: bool, whole: bool = False):
    """The elements in lists of `size` (the last one shorter unless dropped). An error
    element is handed on in place of the batch it falls in, whose elements read so far
    are dropped (TF's batch fails and starts the next batch after the error); with
    `whole`, the batch of `size` inputs it falls in is read to its end and dropped."""
    batch, failed, read = [], None, 0  # the batch's elements, error and inputs
    for e in elements:
        if isinstance(e, ElementError) and not whole:
            batch, read = [], 0
            yield e
            continue
        read += 1
        if isinstance(e, ElementError):
            failed = failed or e
        else:
            batch.append(e)
        if read == size:
            yield failed or batch
            batch, failed, read = [], None, 0
    if read and not drop_remainder:
        yield failed or batch


def _batches_of_blocks(blocks, size: int, drop_remainder: bool):
    """The batches of `size` rows that stacking the rows of `blocks` one by one gives,
    cut from the blocks instead (each batch its own arrays)."""
    parts, have = [], 0  # the pieces of the next batch, and their rows
    for block in blocks:
        n, start = component_rows(block[0]), 0
        while start < n:
            take = min(size - have, n - start)
            parts.append([c[start:start + take] for c in block])
            have, start = have + take, start + take
            if have == size:
                yield _joined(parts)
                parts, have = [], 0
    if parts and not drop_remainder:
        yield _joined(parts)


def _joined(parts):
    if len(parts) == 1:
        return [np.array(c) for c in parts[0]]  # a copy: the batch must not alias the data
    return [np.concatenate([p[j] for p in parts]) for j in range(len(parts[0]))]


def stack(ctx, batch):
    out = []
    for j in range(len(batch[0])):
        if isinstance(batch[0][j], COMPOSITES):
            out.append(type(batch[0][j]).stack([e[j] for e in batch]))
            continue
        parts = [np.asarray(e[j]) for e in batch]
        first = parts[0].shape
        for k, p in enumerate(parts[1:], 1):
            if p.shape != first:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Cannot batch tensors with different shapes in component "
                    "%d. First element had shape [%s] and element %d had shape [%s]."
                    % (j, ",".join(map(str, first)), k, ",".join(map(str, p.shape))))
        out.append(np.stack(parts))
    return out


class PaddedBatch(DatasetValue):
    def __init__(self, source, size: int, shapes, values, drop_remainder: bool):
        self.source, self.size, self.drop = source, size, drop_remainder
        self.shapes, self.values = shapes, values

    def _elements(self, ctx, with_errors: bool):
        for batch in _row_batches(read(self.source, ctx, with_errors), self.size,
                                  self.drop):
            yield _combined(batch, lambda b: pad_batch(ctx, b, self.shapes, self.values),
                            with_errors)

    def elements_after(self, ctx, n: int):
        for batch in _row_batches(self.source.elements_after(ctx, n * self.size),
                                  self.size, self.drop):
            yield pad_batch(ctx, batch, self.shapes, self.values)


def pad_batch(ctx, batch, shapes, values) -> list:
    """The components of the elements `batch` stacked, each padded with its value in
    `values` to its shape in `shapes` (a -1 dimension: the batch's longest)."""
    out = []
    for j, (target, value) in enumerate(zip(shapes, values)):
        parts = [np.asarray(e[j]) for e in batch]
        longest = np.max([p.shape for p in parts], axis=0) if parts[0].ndim else ()
        dims = [int(d) if d >= 0 else int(m) for d, m in zip(target, longest)]
        arr = np.full([len(parts)] + dims, value, dtype=parts[0].dtype)
        for k, p in enumerate(parts):
            if any(a > b for a, b in zip(p.shape, dims)):
                # TF's class for it
                raise errors.DataLossError(
                    None, ctx.op, "Attempted to pad to a smaller size than the input "
                    "element.")
            # the Ellipsis makes a scalar's slot a 0-d view, so a string is copied in as
            # bytes, not stored as the 0-d array holding it
            arr[(k,) + tuple(slice(0, n) for n in p.shape) + (Ellipsis,)] = p
        out.append(arr)
    return out


class Elements(DatasetValue):
    """A window's values of one component, as the dataset a window element holds."""

    def __init__(self, values: list):
        self.values = values

    def elements(self, ctx):
        for v in self.values:
            yield [v]


class Windows(DatasetValue):
    """TF's window: windows starting every `shift` elements, each the next `size`
    elements `stride` apart (fewer at the end, unless `drop`); each window element holds
    one dataset per component."""

    def __init__(self, source, size: int, shift: int, stride: int, drop: bool):
        self.source, self.size, self.shift, self.stride, self.drop = \
            source, size, shift, stride, drop

    def _elements(self, ctx, with_errors: bool):
        # with errors, a failed input element is kept in its place: a window holding one
        # fails with its error, and the next windows go on (TF keeps each element's status)
        span = (self.size - 1) * self.stride + 1  # input elements one window covers
        buffered, first = [], 0  # elements from input index `first` on
        inputs = read(self.source, ctx, with_errors)
        done = False
        start = 0
        while True:
            while not done and first + len(buffered) < start + span:
                nxt = next(inputs, None)
                if nxt is None:
                    done = True
                else:
                    buffered.append(nxt)
            have = buffered[start - first::self.stride][:self.size] \
                if start - first < len(buffered) else []
            if not have or (self.drop and len(have) < self.size):
                return
            failed = [e for e in have if isinstance(e, ElementError)]
            yield failed[0] if failed else \
                [Elements([e[j] for e in have]) for j in range(len(have[0]))]
            start += self.shift
            drop_n = min(start - first, len(buffered))
            del buffered[:drop_n]
            first += drop_n
            if done and start >= first + len(buffered):
                return


class Unbatch(DatasetValue):
    def __init__(self, source):
        self.source = source

    def _elements(self, ctx, with_errors: bool):
        for e in read(self.source, ctx, with_errors):
            if isinstance(e, ElementError):
                yield e
                continue
            n = {component_rows(c) for c in e}
            if len(n) != 1:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Input element must have the same batch size in each "
                    "component. Component 0 had size %d but component %d had size %d."
                    % (component_rows(e[0]), 1, sorted(n)[-1]))
            for i in range(n.pop()):
                yield [component_row(c, i) for c in e]
