"""tf.data datasets in graph mode: each Dataset is an op whose (variant) value describes
the pipeline, built when an iterator is initialized, and read element by element by
IteratorGetNext (iterator_ops.py).

An element is a nested structure (a tensor, tuple or dict) of components; a dataset
carries the structure with the dtypes and static shapes of its components
(`output_types`, `output_shapes`, `output_classes`). The ops and what their values yield:

  TensorSliceDataset / TensorDataset  slices of the components along their first
                          dimension / the components once (evaluated when the iterator
                          is initialized: a placeholder is fed to the initializer, as in
                          TF1)
  RangeDataset            start, start + step, ... < stop (int64, or its output_type)
  TFRecordDataset / TextLineDataset  the records / lines (without line ends) of the
                          files, in order
  ZipDataset, ConcatenateDataset, RepeatDataset (count < 0: forever), TakeDataset,
  SkipDataset (the elements as they are), PrefetchDataset (read ahead by a thread,
                          prefetch.py)
  BatchDatasetV2          consecutive elements stacked (the last batch may be short
                          unless drop_remainder)
  ShuffleDataset          TF's buffer shuffle: fill a buffer, then yield a random buffer
                          element and put the next input element in its place; a new
                          order each epoch of an enclosing repeat when
                          reshuffle_each_iteration (unseeded: orders drawn from the
                          iterator pass's seed, see PipelineContext)
  MapDataset / FilterDataset  `map_func` / `predicate` applied to each element
  FlatMapDataset / InterleaveDataset  the elements of the datasets a function gives for
                          each element, one after another / `block_length` at a time
                          from `cycle_length` open ones in turn (TF's order)
  PaddedBatchDatasetV2, UnbatchDataset, CacheDataset (in memory: an enclosing repeat
                          replays the first complete pass; or in a file, file_cache.py)

A SparseTensor component (a parse_example of VarLenFeatures, say) travels as one variant
component holding its three arrays; its structure leaf is a SparseSpec (values dtype,
dense shape), and functions and get_next see a SparseTensor again. Batching stacks such
components (a new first dimension, as TF), unbatch and from_tensor_slices take their
rows; padded_batch of them is a TypeError, as in TF. `window` makes elements whose
components are datasets in the same way (a DatasetSpec leaf, a Dataset again in
functions).

A function (`map_func`, `predicate`) is traced once when the dataset is built, into ops
of the same graph that read placeholders for the element's components; the kernel runs
them per element with a nested `Session.run` of the session running the pipeline. So a
function may use what the graph holds (lookup tables, variables, constants). The tensors
it uses from outside (its captures: a placeholder, a variable's value, a random draw) are,
as TF's captured inputs, extra inputs of the dataset op: evaluated once when the iterator
is initialized (with that run's feeds) and fed to every per-element run.

An element a function fails on is that get_next's error and the pass goes on (TF's
iterators go on after an error): iterators read `elements_with_errors`, in which such an
element (or a batch that cannot be made, a generator's element of the wrong type) is an
ElementError that every transformation hands on in TF's way (a batch or window holding
one fails whole; zip fails that step; interleave, flat_map, concatenate, cache, scan,
grouping and the others pass it through and go on); ignore_errors drops those that
reach it. The few that do not (dense_to_sparse_batch, group_by_reducer,
sample_from_datasets) end the pass at the error.
"""
from __future__ import annotations

import abc
import itertools
import threading
from typing import Callable, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, TypeListAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.runtime.values import element
from tensorweave.data.padding import flat_padding_values, flatten_shapes, padded_shape, \
    padding_value


# --- the values: pipeline descriptions that yield elements (lists of arrays) -----------------
class PipelineContext:
    """What a pipeline's elements use of a kernel context: the op that started it (for
    errors) and the session (a weak proxy, for the nested runs of functions). Not the
    op's state, device or resources: an iterator's pass (and the threads of a prefetch)
    then refers back to nothing that holds the iterator, so a session dropped without
    close() is freed at once, which ends the pass.

    It is also the pass's own state, so that a pass is a function of its `seed`
    (iterator checkpoints replay one, iterator_checkpoint.py): a random transformation
    draws its randomness from `seed_for(key, ...)` (its op's name as `key`) and counts
    its passes over its input with `calls(key)`; a dataset a function makes for an
    element (flat_map, interleave) reads in a `child` context whose seed derives from
    this one, the transformation and the element's index; `state_of(node)` holds what a
    transformation keeps for the rest of the pass (cache's elements)."""

    __slots__ = ("op", "session", "seed", "_calls", "_state", "_lock")

    def __init__(self, ctx, seed: Optional[int] = None):
        self.op, self.session = ctx.op, ctx.session
        self.seed = fresh_seed() if seed is None else int(seed)
        self._calls, self._state, self._lock = {}, {}, threading.Lock()

    def child(self, *key) -> "PipelineContext":
        """The context of a dataset made inside this pass, `key` naming it (the same key
        in the same pass: the same randomness)."""
        return PipelineContext(self, mix_seed(self.seed, *key))

    def calls(self, key) -> int:
        """How many times `key` asked before in this context (0 the first time)."""
        with self._lock:
            n = self._calls.get(key, 0)
            self._calls[key] = n + 1
        return n

    def seed_for(self, *key) -> int:
        """A 63-bit seed, a function of this pass's seed and `key` only."""
        return mix_seed(self.seed, *key)

    def state_of(self, node) -> dict:
        """A dict `node` keeps for the rest of this pass."""
        with self._lock:
            entry = self._state.get(id(node))
            if entry is None:
                entry = self._state[id(node)] = (node, {})
        return entry[1]


def fresh_seed() -> int:
    """A 63-bit seed from the operating system's entropy."""
    import secrets
    return secrets.randbits(63)


def mix_seed(seed: int, *key) -> int:
    """A 63-bit seed, a function of `seed` and `key` (strings and ints) only, the same
    in every process (unlike Python's hash)."""
    import hashlib
    h = hashlib.blake2b(repr((int(seed),) + key).encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little") >> 1


def pass_context(ctx) -> PipelineContext:
    """`ctx` as a pass's context: itself, or a new one for a kernel's context (a
    transformation read by an op other than an iterator's, e.g. reduce)."""
    return ctx if isinstance(ctx, PipelineContext) else PipelineContext(ctx)


class DatasetValue(abc.ABC):
    """A dataset's run-time value. `elements(ctx)` iterates over its elements, each a list
    of arrays (the flattened components); a new call starts again from the start.

    `feed` holds the values its functions' runs are fed: the captured tensors' (evaluated
    when the dataset op ran) and, for a dataset built by a function (flat_map,
    interleave), the enclosing functions' arguments, which its own functions may read."""

    feed: Optional[dict] = None
    # with tf.data.experimental.ignore_errors: functions drop the elements they fail on
    skip_errors = False

    @abc.abstractmethod
    def elements(self, ctx):
        """A new iterator over the elements, each a list of component arrays."""

    def elements_after(self, ctx, n: int):
        """A new iterator over the elements after the first `n`, exactly as
        `elements(ctx)` read `n` times would go on (an iterator checkpoint's restore).
        This reads them; a transformation that can skip its work for them (a map of a
        pure function, a batch, a source that can seek) overrides it, calling on its
        inputs what `elements` would call, in the same order."""
        it = self.elements(ctx)
        try:
            for _ in range(n):
                next(it)
        except StopIteration:
            return iter(())
        return it

    def blocks(self, ctx):
        """The same elements in the same order as runs of consecutive rows (each a list
        of arrays with a leading dimension), so that batching slices instead of stacking
        rows one by one; None when this dataset has no such view."""
        return None

    def elements_with_errors(self, ctx):
        """`elements(ctx)`, except that an element a function fails on is an
        ElementError in its place and the pass goes on, as TF's iterators go on after
        an error: what an iterator reads. Transformations that pass an error through
        override this (most do, reading their inputs with `read`); elsewhere an error
        ends the pass."""
        return self.elements(ctx)


_END_OF_INPUT = object()


class ElementError:
    """An element a dataset function failed on: its error, raised by the iterator's
    get_next for that element (the next get_next goes on with the next element)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


def _bind(value: DatasetValue, feed: dict) -> DatasetValue:
    """`value` (a dataset a function gave) with `feed` added to its pipeline's feeds."""
    value.feed = {**feed, **(value.feed or {})}
    for child in [getattr(value, k, None) for k in ("source", "first", "second")] + \
            list(getattr(value, "inputs", ())):
        if isinstance(child, DatasetValue):
            _bind(child, feed)
    return value


def sub_dataset(ctx, node, fn: "DatasetFunction", element) -> DatasetValue:
    """The dataset `fn` gives for `element`, its functions able to read the argument."""
    return _bind(fn.run(ctx, element, node.feed)[0], fn.feed_of(element, node.feed))


def _rows(c) -> int:
    """The first dimension of a component (an array or a SparseComponent)."""
    return c.rows() if isinstance(c, SparseComponent) else np.shape(c)[0]


def _row(c, i: int):
    # element(): a row of a string vector is a 0-d object array, not NumPy's bare bytes
    return c.row(i) if isinstance(c, SparseComponent) else element(c[i])


class _Slices(DatasetValue):
    def __init__(self, components):
        self.components = components

    def elements(self, ctx):
        return self.elements_after(ctx, 0)

    def elements_after(self, ctx, n: int):
        for i in range(n, _rows(self.components[0])):
            yield [_row(c, i) for c in self.components]

    def blocks(self, ctx):
        if any(isinstance(c, SparseComponent) for c in self.components):
            return None
        return iter([[np.asarray(c) for c in self.components]])


class _Once(DatasetValue):
    def __init__(self, components):
        self.components = components

    def elements(self, ctx):
        yield list(self.components)


class _Range(DatasetValue):
    def __init__(self, start, stop, step, dtype=np.int64):
        self.args, self.scalar = (start, stop, step), np.dtype(dtype).type

    def elements(self, ctx):
        return self.elements_after(ctx, 0)

    def elements_after(self, ctx, n: int):
        for v in range(*self.args)[n:]:
            yield [self.scalar(v)]


class _Records(DatasetValue):
    def __init__(self, filenames, compression: str, lines: bool):
        self.filenames, self.compression, self.lines = filenames, compression, lines

    def elements(self, ctx):
        for name in self.filenames:
            for record in _read(ctx, name, self.compression, self.lines):
                yield [np.array(record, dtype=object)]


def _read(ctx, filename, compression: str, lines: bool):
    from tensorweave.ops.io import record_io
    path = filename.decode() if isinstance(filename, bytes) else str(filename)
    if not lines:
        yield from record_io.tf_record_iterator(path, compression or None)
        return
    try:
        with record_io.open_input(path, compression) as f:
            for line in f:
                yield line[:-2] if line.endswith(b"\r\n") else \
                    line[:-1] if line.endswith(b"\n") else line
    except OSError as e:
        raise record_io.file_error(e, path) from None


class _FixedLengthRecords(DatasetValue):
    def __init__(self, filenames, header: int, record: int, footer: int, compression: str):
        self.filenames, self.compression = filenames, compression
        self.header, self.record, self.footer = header, record, footer

    def elements(self, ctx):
        from tensorweave.ops.io import record_io
        for name in self.filenames:
            path = name.decode() if isinstance(name, bytes) else str(name)
            try:
                with record_io.open_input(path, self.compression) as f:
                    data = f.read()
            except OSError as e:
                raise record_io.file_error(e, path) from None
            body = data[self.header:len(data) - self.footer]
            length = len(data) - self.header - self.footer  # < 0: a file too short
            whole = len(body) - len(body) % self.record
            if (whole != len(body) or length < 0) and not self.compression:
                # as TF: an uncompressed file's size is checked before any record
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Excluding the header (%d bytes) and footer (%d bytes), "
                    "input file \"%s\" has body length %d bytes, which is not an exact "
                    "multiple of the record length (%d bytes)." % (
                        self.header, self.footer, path, length, self.record))
            for k in range(0, whole, self.record):
                yield [np.array(body[k:k + self.record], dtype=object)]
            if whole != len(body):
                # a compressed stream is read record by record: the complete ones
                # first, then TF's DataLossError for the truncated last one
                raise errors.DataLossError(
                    None, ctx.op, "Attempted to read %d bytes of the last record of \"%s\" "
                    "but only %d remained." % (self.record, path, len(body) - whole))


def read(value: DatasetValue, ctx, with_errors: bool):
    """`value`'s elements, each failed one an ElementError in its place when
    `with_errors` (an iterator's pass) and raised otherwise."""
    return value.elements_with_errors(ctx) if with_errors else value.elements(ctx)


class _Zip(DatasetValue):
    """An element of any input that failed is the zipped element's error (the others'
    elements of that step are used up, as TF's)."""

    def __init__(self, inputs):
        self.inputs = inputs

    def elements(self, ctx):
        return self._zipped(ctx, False)

    def elements_with_errors(self, ctx):
        return self._zipped(ctx, True)

    def _zipped(self, ctx, with_errors: bool):
        for parts in zip(*(read(d, ctx, with_errors) for d in self.inputs)):
            failed = [p for p in parts if isinstance(p, ElementError)]
            yield failed[0] if failed else [c for p in parts for c in p]

    def elements_after(self, ctx, n: int):
        for parts in zip(*(d.elements_after(ctx, n) for d in self.inputs)):
            yield [c for p in parts for c in p]


class _Concatenate(DatasetValue):
    def __init__(self, first, second):
        self.first, self.second = first, second

    def elements(self, ctx):
        yield from self.first.elements(ctx)
        yield from self.second.elements(ctx)

    def elements_with_errors(self, ctx):
        yield from self.first.elements_with_errors(ctx)
        yield from self.second.elements_with_errors(ctx)


class _Repeat(DatasetValue):
    def __init__(self, source, count: int):
        self.source, self.count = source, count

    def elements(self, ctx):
        return self._repeated(ctx, self.source.elements)

    def elements_with_errors(self, ctx):
        return self._repeated(ctx, self.source.elements_with_errors)

    def _repeated(self, ctx, inputs):
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
                empty = empty and _rows(block[0]) == 0
                yield block
            if empty:
                return


class _Take(DatasetValue):
    def __init__(self, source, count: int):
        self.source, self.count = source, count

    def elements(self, ctx):
        return self._taken(lambda: self.source.elements(ctx), self.count)

    def elements_with_errors(self, ctx):
        return self._taken(lambda: self.source.elements_with_errors(ctx), self.count)

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
                e = next(it, _END_OF_INPUT)
                if e is _END_OF_INPUT:
                    return
                taken += not isinstance(e, ElementError)
                yield e
        finally:
            close = getattr(it, "close", None)
            if close is not None:  # the input stops here: its cleanups (a partial
                close()            # cache file) run now


class _Skip(DatasetValue):
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


class _Batch(DatasetValue):
    """`whole`: a failed element fails the whole batch of `size` inputs it falls in
    (map_and_batch's), not only the elements read before it (batch's)."""

    def __init__(self, source, size: int, drop_remainder: bool, whole: bool = False):
        self.source, self.size, self.drop = source, size, drop_remainder
        self.whole = whole

    def elements(self, ctx):
        blocks = self.source.blocks(ctx)
        if blocks is not None:
            yield from _batches_of_blocks(blocks, self.size, self.drop)
            return
        for batch in _row_batches(self.source.elements(ctx), self.size, self.drop):
            yield stack(ctx, batch)

    def elements_with_errors(self, ctx):
        if self.source.blocks(ctx) is not None:  # no function below: no errors
            yield from self.elements(ctx)
            return
        for batch in _row_batches(self.source.elements_with_errors(ctx), self.size,
                                  self.drop, self.whole):
            yield _combined(batch, lambda b: stack(ctx, b))

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


def _combined(batch, combine):
    """`combine(batch)`, or an ElementError in its place: a batch that cannot be made
    (elements of different shapes) fails its get_next, and the pass goes on with the
    next batch, as TF's."""
    if isinstance(batch, ElementError):
        return batch
    try:
        return combine(batch)
    except errors.OpError as e:
        return ElementError(e)


def _blocks_after(blocks, n: int):
    """`blocks` without their first `n` rows."""
    for block in blocks:
        rows = _rows(block[0])
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
        n, start = _rows(block[0]), 0
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
        if isinstance(batch[0][j], SparseComponent):
            out.append(SparseComponent.stack([e[j] for e in batch]))
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


class _Shuffle(DatasetValue):
    """`seed` None: an unseeded shuffle, whose orders derive from the pass's seed (so a
    restored iterator goes on with the same ones); `key` names it in the pass."""

    def __init__(self, source, buffer_size: int, seed: Optional[int], reshuffle: bool,
                 key: str = "ShuffleDataset"):
        self.source, self.buffer_size, self.reshuffle = source, buffer_size, reshuffle
        self.seed, self.key = seed, key

    def elements(self, ctx):
        return self._shuffled(ctx, self.source.elements)

    def elements_with_errors(self, ctx):
        return self._shuffled(ctx, self.source.elements_with_errors)

    def _shuffled(self, ctx, inputs):
        ctx = pass_context(ctx)
        epoch = ctx.calls(self.key) if self.reshuffle else 0
        rs = np.random.RandomState(ctx.seed_for(self.key, epoch) % 2 ** 32
                                   if self.seed is None else
                                   (self.seed + 7919 * epoch) % 2 ** 32)
        # as TF's: an element is handed out as soon as the buffer is full, and the next
        # input element, read on the next call, fills the hole it left
        buffer, hole = [], None
        for e in inputs(ctx):
            if isinstance(e, ElementError):  # handed on when met, as TF's buffer fill
                yield e
                continue
            if hole is None:
                buffer.append(e)
            else:
                buffer[hole], hole = e, None
            if len(buffer) < self.buffer_size:
                continue
            hole = rs.randint(len(buffer))
            yield buffer[hole]
        if hole is not None:
            buffer.pop(hole)
        while buffer:
            yield buffer.pop(rs.randint(len(buffer)))


class _PaddedBatch(DatasetValue):
    def __init__(self, source, size: int, shapes, values, drop_remainder: bool):
        self.source, self.size, self.drop = source, size, drop_remainder
        self.shapes, self.values = shapes, values

    def elements(self, ctx):
        for batch in _row_batches(self.source.elements(ctx), self.size, self.drop):
            yield pad_batch(ctx, batch, self.shapes, self.values)

    def elements_with_errors(self, ctx):
        for batch in _row_batches(self.source.elements_with_errors(ctx), self.size,
                                  self.drop):
            yield _combined(batch, lambda b: pad_batch(ctx, b, self.shapes, self.values))

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


class _Elements(DatasetValue):
    """A window's values of one component, as the dataset a window element holds."""

    def __init__(self, values: list):
        self.values = values

    def elements(self, ctx):
        for v in self.values:
            yield [v]


class _Windows(DatasetValue):
    """TF's window: windows starting every `shift` elements, each the next `size`
    elements `stride` apart (fewer at the end, unless `drop`); each window element holds
    one dataset per component."""

    def __init__(self, source, size: int, shift: int, stride: int, drop: bool):
        self.source, self.size, self.shift, self.stride, self.drop = \
            source, size, shift, stride, drop

    def elements(self, ctx):
        return self._windows(ctx, False)

    def elements_with_errors(self, ctx):
        # a failed input element is kept in its place: a window holding one fails with
        # its error, and the next windows go on (TF keeps each element's status)
        return self._windows(ctx, True)

    def _windows(self, ctx, with_errors: bool):
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
                [_Elements([e[j] for e in have]) for j in range(len(have[0]))]
            start += self.shift
            drop_n = min(start - first, len(buffered))
            del buffered[:drop_n]
            first += drop_n
            if done and start >= first + len(buffered):
                return


class _Unbatch(DatasetValue):
    def __init__(self, source):
        self.source = source

    def elements(self, ctx):
        return self._rows_of(ctx, False)

    def elements_with_errors(self, ctx):
        return self._rows_of(ctx, True)

    def _rows_of(self, ctx, with_errors: bool):
        for e in read(self.source, ctx, with_errors):
            if isinstance(e, ElementError):
                yield e
                continue
            n = {_rows(c) for c in e}
            if len(n) != 1:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Input element must have the same batch size in each "
                    "component. Component 0 had size %d but component %d had size %d."
                    % (_rows(e[0]), 1, sorted(n)[-1]))
            for i in range(n.pop()):
                yield [_row(c, i) for c in e]


class _Cache(DatasetValue):
    """Elements kept in memory after the first complete pass (later passes, e.g. of an
    enclosing repeat, replay them)."""

    def __init__(self, source):
        self.source = source

    def elements(self, ctx):
        return self._cached(ctx, False)

    def elements_with_errors(self, ctx):
        return self._cached(ctx, True)

    def _cached(self, ctx, with_errors: bool):
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


class _FlatMap(DatasetValue):
    def __init__(self, source, fn: "DatasetFunction", key: str = "FlatMapDataset"):
        self.source, self.fn, self.key = source, fn, key

    def elements(self, ctx):
        return self._flattened(ctx, False)

    def elements_with_errors(self, ctx):
        return self._flattened(ctx, True)

    def _flattened(self, ctx, with_errors: bool):
        ctx = pass_context(ctx)
        call = ctx.calls(self.key)
        for k, e in enumerate(read(self.source, ctx, with_errors)):
            if isinstance(e, ElementError):
                yield e
                continue
            sub = ctx.child(self.key, call, k)  # its randomness: a function of the pass's
            yield from read(sub_dataset(sub, self, self.fn, e), sub, with_errors)


class _Interleave(DatasetValue):
    """TF's interleave: `cycle` slots, visited in turn, `block` elements from each; an
    empty slot takes the next input's dataset when its turn comes (so an input element
    that failed is that turn's error, and the slot takes the next one after it), and an
    exhausted one is emptied."""

    def __init__(self, source, fn: "DatasetFunction", cycle: int, block: int,
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

    def elements(self, ctx):
        return self._interleaved(ctx, False)

    def elements_with_errors(self, ctx):
        return self._interleaved(ctx, True)

    def _interleaved(self, ctx, with_errors: bool):
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
            e = _END_OF_INPUT if slots[k] is None else next(slots[k], _END_OF_INPUT)
            if e is not _END_OF_INPUT:
                yield e
                # a failed element of an open input is not one of its block (TF's)
                taken += not isinstance(e, ElementError)
                if taken < self.block:
                    continue
            else:
                slots[k] = None
            k, taken = (k + 1) % self.cycle, 0


class _Map(DatasetValue):
    def __init__(self, source, fn: "DatasetFunction"):
        self.source, self.fn = source, fn

    def elements(self, ctx):
        return self._mapped(ctx, self.source.elements)

    def elements_with_errors(self, ctx):
        return self._mapped(ctx, self.source.elements_with_errors, True)

    def elements_after(self, ctx, n: int):
        if self.skip_errors:  # the elements dropped decide which input elements to skip
            return DatasetValue.elements_after(self, ctx, n)
        # the function is not run for the skipped elements (a function with side effects
        # or randomness is external state, iterator_checkpoint.py)
        return self._mapped(ctx, lambda c: self.source.elements_after(c, n))

    def _mapped(self, ctx, inputs, errors_as_elements: bool = False):
        for item in _applied(self, ctx, inputs, errors_as_elements):
            yield item if isinstance(item, ElementError) else item[1]


class _Filter(DatasetValue):
    def __init__(self, source, fn: "DatasetFunction"):
        self.source, self.fn = source, fn

    def elements(self, ctx):
        return self._filtered(ctx, self.source.elements)

    def elements_with_errors(self, ctx):
        return self._filtered(ctx, self.source.elements_with_errors, True)

    def _filtered(self, ctx, inputs, errors_as_elements: bool = False):
        for item in _applied(self, ctx, inputs, errors_as_elements):
            if isinstance(item, ElementError):
                yield item
            elif bool(np.asarray(item[1][0])):
                yield item[0]


def _applied(node: DatasetValue, ctx, inputs, errors_as_elements: bool):
    """(element, node.fn's outputs) for each input element. An element the function
    fails on is dropped (ignore_errors), an ElementError (an iterator's pass), or the
    error raised; ElementErrors from the input pass on."""
    for e in inputs(ctx):
        if isinstance(e, ElementError):
            yield e
            continue
        try:
            out = node.fn.run(ctx, e, node.feed)
        except errors.OpError as err:
            if node.skip_errors:
                continue
            if errors_as_elements:
                yield ElementError(err)
                continue
            raise
        yield e, out


# --- functions traced into the graph ----------------------------------------------------------
class DatasetFunction:
    """A function of an element, traced once into ops of the dataset's graph: `inputs`
    are placeholders of the element's components, `outputs` the flat result tensors,
    `structure` its nesting."""

    def __init__(self, fn: Callable, in_structure, in_types, in_shapes, name: str,
                 unpack: bool):
        g = _graph.get_default_graph()
        first_op = len(g._ops)
        # summaries made in a function stay in it, as in TF's function graph (merge_all
        # must not fetch a per-element op)
        summaries = list(g.get_collection_ref(_graph.GraphKeys.SUMMARIES))
        with _graph.name_scope(name):
            self.inputs = [_placeholder(t, s, "arg%d" % k)
                           for k, (t, s) in enumerate(zip(in_types, in_shapes))]
            element = pack_element(in_structure, self.inputs)
            # a plain tuple is spread over the arguments; a namedtuple (like a dict)
            # is one argument, as TF's
            if unpack and type(element) is tuple:
                result = fn(*element)
            else:
                result = fn(element)
            result = _function_result(result)
            # a function giving a dataset (flat_map, interleave) gives its variant value
            self.dataset = result if isinstance(result, Dataset) else None
            self.structure, self.outputs = flatten_element(result)
        g.get_collection_ref(_graph.GraphKeys.SUMMARIES)[:] = summaries
        self.graph = g
        self.captures = _captures(g._ops[first_op:])
        # the state it reads from outside (a table's or a variable's handle, also in the
        # functions of datasets it makes): what a one-shot iterator cannot capture
        self.resources = _outside_inputs(g._ops[first_op:], (_dt.resource,))
        # a function that only rearranges its arguments (splitting a label off a dict,
        # say) needs no run: which argument each output is
        ids = {id(t): k for k, t in enumerate(self.inputs)}
        self.passthrough = [ids[id(t)] for t in self.outputs] \
            if all(id(t) in ids for t in self.outputs) else None

    def feed_of(self, components, outer: Optional[dict] = None) -> dict:
        """The feeds of a run for one element: its arguments, and those of the enclosing
        functions (`outer`)."""
        feed = dict(outer or {})
        feed.update(zip(self.inputs, components))
        return feed

    def run(self, ctx, components, outer: Optional[dict] = None) -> list:
        """The outputs for one element (a nested run of the pipeline's session)."""
        if self.passthrough is not None:
            return [components[k] for k in self.passthrough]
        # a fetch gives a string scalar as bytes (as TF's Session.run): back to the
        # run-time value, a 0-d object array, which batching stacks as strings
        return [element(v) for v in
                ctx.session.run(self.outputs, feed_dict=self.feed_of(components, outer))]


def trace_with_state(trace: Callable[[list], DatasetFunction], shapes) -> DatasetFunction:
    """`trace(state_shapes)`, a function whose first outputs are a new state (reduce's,
    scan's), traced for the initial state's `shapes` and, while a step changes them (a
    growing vector, say), again for the shapes both fit, as TF's."""
    while True:
        fn = trace(shapes)
        relaxed = [s.most_specific_compatible_shape(t.shape)
                   for s, t in zip(shapes, fn.outputs)]
        if [_dims(s) for s in relaxed] == [_dims(s) for s in shapes]:
            return fn
        shapes = relaxed


def _dims(shape):
    """A shape's dimensions as a comparable value (None: unknown rank)."""
    return None if shape.ndims is None else tuple(shape.as_list())


def _captures(ops) -> list:
    """The tensors from outside that the ops a function traced (`ops`) read, in order;
    their values are taken once, when the dataset op runs (TF's captured inputs: a
    placeholder fed to the initializer, say). Resources and variants (a variable's or
    table's handle, a dataset) are not: a variable read inside reads the variable as it
    is when each element is made, as TF's."""
    inside = set(ops)
    return _unique(t for op in ops for t in op.inputs if t.op not in inside and
                   t.dtype.base_dtype not in (_dt.resource, _dt.variant))


def _outside_inputs(ops, dtypes) -> list:
    """The tensors of these `dtypes` from outside that `ops` read, in order."""
    inside = set(ops)
    return _unique(t for op in ops for t in op.inputs if t.op not in inside and
                   t.dtype.base_dtype in dtypes)


def functions_of(op) -> list:
    """The traced functions of a dataset op (its function attrs)."""
    table = op.graph.__dict__.get(_FUNCTIONS, {})
    return [table[v] for v in op.attrs.values() if isinstance(v, str) and v in table]


def _unique(tensors) -> list:
    """`tensors` without repeats, in order (a graph's tensors compare by identity)."""
    return list(dict.fromkeys(tensors))


def _function_result(x):
    """A function's result as TF's tf.data takes it: a list at the top is a tuple (as
    decode_csv gives its columns); a list anywhere below is one tensor."""
    return _lists_as_tensors(tuple(x) if isinstance(x, list) else x)


def _placeholder(dtype, shape, name):
    from tensorweave.ops.array.constant_op import placeholder
    return placeholder(dtype, shape, name=name)


_FUNCTIONS = "_tw_dataset_functions"


class _FunctionKey(str):
    """A function attr's value (the key naming the function in its graph), carrying the
    function itself while its op is built (for its captured inputs)."""
    function: DatasetFunction


def register_function(fn: DatasetFunction) -> str:
    """A key naming `fn` in its graph (the op's `f` attr)."""
    table = fn.graph.__dict__.setdefault(_FUNCTIONS, {})
    key = _FunctionKey("%s_%d" % (fn.inputs[0].op.name.rsplit("/", 1)[0] if fn.inputs
                                  else "fn", len(table)))
    key.function = fn
    table[key] = fn
    return key


def captured_inputs(attrs: dict) -> list:
    """The captured tensors of the functions in `attrs` (an op's), each once: the op's
    `captured` input."""
    return _unique(t for v in attrs.values() if isinstance(v, _FunctionKey)
                   for t in v.function.captures)


def captured_feed(ctx, captured) -> dict:
    """The feed of the captured tensors (the last inputs of the kernel's op) with their
    `captured` values. A variable's value read outside is copied: later assignments
    must not reach a pipeline initialized before them (a read may share the variable's
    buffer)."""
    tensors = ctx.op.inputs[len(ctx.op.inputs) - len(captured):]
    return {t: (np.array(v) if t.op.type in ("ReadVariableOp", "Identity") else v)
            for t, v in zip(tensors, captured)}


def function_kernel(op_type: str):
    """`kernel` for a dataset op that runs functions: the kernel body gets the op's
    inputs less the captured ones, which feed the runs of the value it returns."""
    def deco(body):
        def run(ctx, *args):
            n = len(args) - len(ctx.attrs["Tcaptured"])
            value = body(ctx, *args[:n])
            if n < len(args):
                value.feed = {**(value.feed or {}), **captured_feed(ctx, args[n:])}
            return value
        kernel(op_type)(run)
        return body
    return deco


def function_of(ctx, key: str) -> DatasetFunction:
    fn = ctx.op.graph.__dict__.get(_FUNCTIONS, {}).get(key)
    if fn is None:
        raise errors.FailedPreconditionError(
            None, ctx.op, "The tf.data function %s is not in this graph: tensorweave traces "
            "dataset functions into the graph that builds the dataset, and a GraphDef does "
            "not carry them" % key)
    return fn


# --- the ops ------------------------------------------------------------------------------
def _scalar(op):
    return TensorShape([])


def dataset_op(name: str, inputs, attrs=None, functions: bool = False):
    """Registers dataset op `name`; `functions`: it runs traced functions, whose
    captured tensors are its last input (`captured`, see `function_kernel`)."""
    attrs = dict({"output_types": TypeListAttr(), "output_shapes": []}, **(attrs or {}))
    if functions:
        inputs = list(inputs) + ["captured: Tcaptured"]
        attrs["Tcaptured"] = TypeListAttr()
    register_op(name, inputs=inputs, outputs=["handle: variant"], attrs=attrs,
                shape=_scalar, stateful=True)
    not_differentiable(name)


register_op("SparseTensorToVariant", inputs=["indices: int64", "values: T",
                                             "dense_shape: int64"],
            outputs=["component: variant"], attrs={"T": TypeAttr()}, shape=_scalar)
register_op("VariantToSparseTensor", inputs=["component: variant"],
            outputs=["indices: int64", "values: dtype", "dense_shape: int64"],
            attrs={"dtype": TypeAttr(), "static_shape": []},
            shape=lambda op: [TensorShape([None, None]), TensorShape([None]),
                              TensorShape([None])])
not_differentiable("SparseTensorToVariant")
not_differentiable("VariantToSparseTensor")


@tensor_util.register_static_value("VariantToSparseTensor")
def _static_dense_shape(op, index):
    """The dense shape when the dataset's spec knows it whole (so a SparseTensor from
    get_next has the static shape TF gives it)."""
    shape = op._get_attr("static_shape")
    if index != 2 or not shape or min(shape) < 0:
        return None
    return np.array(shape[1:], np.int64)


@kernel("SparseTensorToVariant")
def _sparse_to_variant_kernel(ctx, indices, values, dense_shape):
    return SparseComponent(indices, values, dense_shape)


@kernel("VariantToSparseTensor")
def _variant_to_sparse_kernel(ctx, component):
    if not isinstance(component, SparseComponent):
        raise errors.InvalidArgumentError(None, ctx.op, "Expected a SparseTensor component, "
                                          "got %s" % type(component).__name__)
    return component.indices, component.values, component.dense_shape


dataset_op("TensorSliceDataset", ["components: Toutput_types"],
            {"Toutput_types": TypeListAttr()})
dataset_op("TensorDataset", ["components: Toutput_types"], {"Toutput_types": TypeListAttr()})
dataset_op("RangeDataset", ["start: int64", "stop: int64", "step: int64"])
dataset_op("TFRecordDataset", ["filenames: string", "compression_type: string",
                                "buffer_size: int64"])
dataset_op("TextLineDataset", ["filenames: string", "compression_type: string",
                                "buffer_size: int64"])
dataset_op("FixedLengthRecordDatasetV2", ["filenames: string", "header_bytes: int64",
                                           "record_bytes: int64", "footer_bytes: int64",
                                           "buffer_size: int64", "compression_type: string"])
dataset_op("ZipDataset", ["input_datasets: N * variant"], {"N": 1})
dataset_op("ConcatenateDataset", ["input_dataset: variant", "another_dataset: variant"])
dataset_op("RepeatDataset", ["input_dataset: variant", "count: int64"])
dataset_op("TakeDataset", ["input_dataset: variant", "count: int64"])
dataset_op("SkipDataset", ["input_dataset: variant", "count: int64"])
dataset_op("PrefetchDataset", ["input_dataset: variant", "buffer_size: int64"])
dataset_op("BatchDatasetV2", ["input_dataset: variant", "batch_size: int64",
                               "drop_remainder: bool"])
dataset_op("ShuffleDataset", ["input_dataset: variant", "buffer_size: int64", "seed: int64",
                               "seed2: int64"], {"reshuffle_each_iteration": True})
dataset_op("PaddedBatchDatasetV2", ["input_dataset: variant", "batch_size: int64",
                                     "padded_shapes: N * int64",
                                     "padding_values: Toutput_types",
                                     "drop_remainder: bool"],
            {"N": 1, "Toutput_types": TypeListAttr()})
dataset_op("UnbatchDataset", ["input_dataset: variant"])
dataset_op("WindowDataset", ["input_dataset: variant", "size: int64", "shift: int64",
                             "stride: int64", "drop_remainder: bool"])
dataset_op("CacheDataset", ["input_dataset: variant", "filename: string"])
dataset_op("FlatMapDataset", ["input_dataset: variant"], {"f": ""}, functions=True)
dataset_op("InterleaveDataset", ["input_dataset: variant", "cycle_length: int64",
                                  "block_length: int64"], {"f": "", "read_ahead": False},
           functions=True)
dataset_op("MapDataset", ["input_dataset: variant"], {"f": ""}, functions=True)
dataset_op("FilterDataset", ["input_dataset: variant"], {"predicate": ""}, functions=True)


def _int(x) -> int:
    return int(np.asarray(x))


def _components(ctx, components):
    return [c if isinstance(c, (np.ndarray, SparseComponent)) else np.asarray(c)
            for c in components]


@kernel("TensorSliceDataset")
def _slices_kernel(ctx, *components):
    comps = _components(ctx, components)
    for c in comps:
        if not isinstance(c, SparseComponent) and c.ndim == 0:
            raise errors.InvalidArgumentError(None, ctx.op, "Unbatching a tensor is only "
                                              "supported for rank >= 1")
        if _rows(c) != _rows(comps[0]):
            raise errors.InvalidArgumentError(
                None, ctx.op, "All components must have the same size in the 0th "
                "dimension: %d vs %d" % (_rows(comps[0]), _rows(c)))
    return _Slices(comps)


kernel("TensorDataset")(lambda ctx, *components: _Once(_components(ctx, components)))
kernel("RangeDataset")(lambda ctx, start, stop, step: _Range(
    _int(start), _int(stop), _nonzero(ctx, _int(step)),
    _dt.as_dtype(ctx.attrs["output_types"][0]).as_numpy_dtype))


def _nonzero(ctx, step: int) -> int:
    if step == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "step must be a non-zero integer.")
    return step


def _filenames(x) -> list:
    return [f for f in np.asarray(x, dtype=object).reshape(-1).tolist()]


def _compression(x) -> str:
    v = np.asarray(x, dtype=object).item()
    return v.decode() if isinstance(v, bytes) else str(v)


kernel("TFRecordDataset")(lambda ctx, f, c, b: _Records(_filenames(f), _compression(c),
                                                        False))
kernel("TextLineDataset")(lambda ctx, f, c, b: _Records(_filenames(f), _compression(c), True))
kernel("FixedLengthRecordDatasetV2")(
    lambda ctx, f, header, record, footer, b, c: _FixedLengthRecords(
        _filenames(f), _int(header), _positive(ctx, _int(record), "record_bytes"),
        _int(footer), _compression(c)))
kernel("ZipDataset")(lambda ctx, *inputs: _Zip(list(inputs)))


def cpu_cores() -> int:
    """The CPU cores this process may run on (TF's AUTOTUNE cycle length, parallelism)."""
    import os
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def _positive(ctx, v: int, what: str) -> int:
    if v <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be greater than zero."
                                          % what)
    return v
kernel("ConcatenateDataset")(lambda ctx, a, b: _Concatenate(a, b))
kernel("RepeatDataset")(lambda ctx, d, count: _Repeat(d, _int(count)))
kernel("TakeDataset")(lambda ctx, d, count: _Take(d, _int(count)))
kernel("SkipDataset")(lambda ctx, d, count: _Skip(d, _int(count)))


@kernel("BatchDatasetV2")
def _batch_kernel(ctx, d, size, drop):
    return _Batch(d, _positive(ctx, _int(size), "Batch size"), bool(np.asarray(drop)))


# map_and_batch's batching: TF fuses map and batch into one op, whose batch fails whole
# when an element of it does; tensorweave maps with MapDataset (or its parallel form)
# and batches with this
dataset_op("MapAndBatchBatchDataset", ["input_dataset: variant", "batch_size: int64",
                                       "drop_remainder: bool"])
kernel("MapAndBatchBatchDataset")(lambda ctx, d, size, drop: _Batch(
    d, _positive(ctx, _int(size), "Batch size"), bool(np.asarray(drop)), whole=True))


@kernel("ShuffleDataset")
def _shuffle_kernel(ctx, d, buffer_size, seed, seed2):
    if _int(buffer_size) <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "buffer_size must be greater than "
                                          "zero.")
    s, s2 = _int(seed), _int(seed2)
    return _Shuffle(d, _int(buffer_size), None if s == 0 and s2 == 0 else
                    (s * 1000003 + s2) % 2 ** 32, ctx.attrs["reshuffle_each_iteration"],
                    ctx.op.name)


function_kernel("MapDataset")(lambda ctx, d: _Map(d, function_of(ctx, ctx.attrs["f"])))
function_kernel("FlatMapDataset")(lambda ctx, d: _FlatMap(d, function_of(ctx, ctx.attrs["f"]),
                                                  ctx.op.name))
kernel("UnbatchDataset")(lambda ctx, d: _Unbatch(d))


@kernel("WindowDataset")
def _window_kernel(ctx, d, size, shift, stride, drop_remainder):
    size, shift, stride = _int(size), _int(shift), _int(stride)
    for name, v in (("size", size), ("shift", shift), ("stride", stride)):
        if v <= 0:
            raise errors.InvalidArgumentError(None, ctx.op, "Window %s must be greater than "
                                              "zero, but got %d." % (name, v))
    return _Windows(d, size, shift, stride, bool(np.asarray(drop_remainder)))
@kernel("CacheDataset")
def _cache_kernel(ctx, d, filename):
    name = np.asarray(filename).reshape(()).item()
    name = name.decode() if isinstance(name, bytes) else str(name)
    if not name:
        return _Cache(d)
    from tensorweave.data.file_cache import FileCache
    return FileCache(d, name, ctx.op)


@function_kernel("InterleaveDataset")
def _interleave_kernel(ctx, d, cycle_length, block_length):
    cycle, block = _int(cycle_length), _int(block_length)
    return _Interleave(d, function_of(ctx, ctx.attrs["f"]),
                       _positive(ctx, cpu_cores() if cycle == AUTOTUNE else cycle,
                                 "cycle_length"), _positive(ctx, block, "block_length"),
                       ctx.attrs["read_ahead"], ctx.op.name)


@kernel("PaddedBatchDatasetV2")
def _padded_batch_kernel(ctx, d, size, *rest):
    n = len(ctx.attrs["Toutput_types"])
    shapes = [np.asarray(s).reshape(-1).tolist() for s in rest[:n]]
    values = [np.asarray(v) for v in rest[n:2 * n]]
    if _int(size) <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Batch size must be greater than "
                                          "zero.")
    return _PaddedBatch(d, _int(size), shapes, values, bool(np.asarray(rest[2 * n])))
function_kernel("FilterDataset")(lambda ctx, d: _Filter(d, function_of(ctx, ctx.attrs["predicate"])))


# --- the Dataset classes --------------------------------------------------------------------
AUTOTUNE = export(-1, "data.AUTOTUNE", "data.experimental.AUTOTUNE")
INFINITE_CARDINALITY = export(-1, "data.INFINITE_CARDINALITY",
                              "data.experimental.INFINITE_CARDINALITY")
UNKNOWN_CARDINALITY = export(-2, "data.UNKNOWN_CARDINALITY",
                             "data.experimental.UNKNOWN_CARDINALITY")


def spec_attrs(types, shapes) -> dict:
    return {"output_types": list(types), "output_shapes": list(shapes)}


class ElementSpec:
    """What an element is, for datasets and iterators: `_structure` (the nesting, leaves
    0), `_types` and `_shapes` (one per component)."""

    def _set_spec(self, structure, types, shapes) -> None:
        self._structure = structure
        self._types = list(types)
        self._shapes = [TensorShape(s) for s in shapes]

    def _leaves(self, dense, sparse) -> object:
        """The structure with each component's `dense(k)`, or `sparse(spec)` for a
        SparseTensor's."""
        leaves = nest.flatten(self._structure)
        return nest.pack_sequence_as(self._structure, [
            sparse(m) if isinstance(m, SparseSpec) else
            m if isinstance(m, DatasetSpec) else dense(k)  # as TF: the spec for all three
            for k, m in enumerate(leaves)])

    @property
    def output_types(self):
        return self._leaves(lambda k: self._types[k], lambda m: m.dtype)

    @property
    def output_shapes(self):
        return self._leaves(lambda k: self._shapes[k], lambda m: m.shape)

    @property
    def output_classes(self):
        from tensorweave.framework.sparse_tensor import SparseTensor
        return self._leaves(lambda k: _graph.Tensor, lambda m: SparseTensor)


@tf_export("data.Dataset")
class Dataset(ElementSpec):
    """A pipeline of elements (TF1 `tf.data.Dataset` in graph mode; see the module
    docstring). Built by the static constructors and transformations below; read through
    an iterator (`make_one_shot_iterator`, `make_initializable_iterator`)."""

    _options = None  # a tf.data.Options set by with_options, carried to derived datasets

    def __init__(self, variant: _graph.Tensor, structure, types, shapes, inputs=()):
        self._variant = variant
        self._set_spec(structure, types, shapes)
        for source in inputs:  # a dataset made from others has their options, merged
            if source._options is not None:
                self._options = source._options if self._options is None else \
                    self._options.merge(source._options)

    def options(self):
        """The options of this dataset (`tf.data.Options`): those set by `with_options`
        on it or on the datasets it is made from."""
        from tensorweave.data.options import Options
        return Options().merge(self._options) if self._options is not None else Options()

    def with_options(self, options) -> "Dataset":
        """This dataset with `options` set (over the options it has).

        Raises:
          TypeError: `options` is not a `tf.data.Options`.
        """
        out = Dataset(self._variant, self._structure, self._types, self._shapes)
        out._options = self.options().merge(options)
        return out

    @property
    def element_spec(self):
        """(shape, dtype) pairs in the element's structure."""
        return nest.pack_sequence_as(self._structure, list(zip(self._shapes, self._types)))

    def _derive(self, op_type: str, inputs, attrs=None, structure=None, types=None,
                shapes=None, others=()) -> "Dataset":
        """A dataset of op `op_type` on this one, `inputs` and attrs, of this one's
        element spec where not given; `others`: the other datasets it reads (their
        options carry over too)."""
        structure = self._structure if structure is None else structure
        types = self._types if types is None else types
        shapes = self._shapes if shapes is None else shapes
        inputs = [self._variant] + list(inputs)
        captured = captured_inputs(attrs or {})
        if captured or any(isinstance(v, _FunctionKey) for v in (attrs or {}).values()):
            inputs.append(captured)
        op = apply_op(op_type, inputs, dict(spec_attrs(types, shapes), **(attrs or {})),
                      name=op_type)
        return Dataset(op.outputs[0], structure, types, shapes, [self] + list(others))

    # -- sources --
    @staticmethod
    def from_tensor_slices(tensors) -> "Dataset":
        """The slices of `tensors` (a nested structure) along their first dimension.

        Raises:
          ValueError: components whose first dimensions differ statically, or a scalar.
        """
        structure, flat = structure_of(tensors)
        leaves = nest.flatten(structure)
        # a SparseTensor's dense shape stands for its component's
        full = [m.shape if isinstance(m, SparseSpec) else t.shape
                for m, t in zip(leaves, flat)]
        for s in full:
            if s.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        dims = {s.as_list()[0] for s in full if s.ndims and s.as_list()[0] is not None}
        if len(dims) > 1:
            raise ValueError("Dimensions %s in the components of from_tensor_slices must be "
                             "equal" % sorted(dims))
        shapes = [TensorShape([]) if isinstance(m, SparseSpec) else
                  s[1:] if s.ndims is not None else unknown_shape()
                  for m, s in zip(leaves, full)]
        structure = nest.map_structure(lambda m: SparseSpec(m.dtype, m.shape[1:] if
                                                            m.shape.ndims else m.shape)
                                       if isinstance(m, SparseSpec) else m, structure)
        return _source("TensorSliceDataset", flat, structure, [t.dtype for t in flat], shapes)

    @staticmethod
    def from_tensors(tensors) -> "Dataset":
        """One element: `tensors`."""
        structure, flat = structure_of(tensors)  # a SparseTensor is one variant component
        return _source("TensorDataset", flat, structure, [t.dtype for t in flat],
                       [t.shape for t in flat])

    @staticmethod
    def range(*args, output_type=_dt.int64, name: Optional[str] = None) -> "Dataset":
        """Elements like Python's range(stop), range(start, stop[, step]), of
        `output_type` (int64 by default; the arguments are int64 either way)."""
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise ValueError("Invalid arguments to range: %s" % (args,))
        inputs = [convert_to_tensor(v, dtype=_dt.int64) for v in (start, stop, step)]
        dtype = _dt.as_dtype(output_type)
        op = apply_op("RangeDataset", inputs, spec_attrs([dtype], [TensorShape([])]),
                      name=name or "RangeDataset")
        return Dataset(op.outputs[0], 0, [dtype], [TensorShape([])])

    @staticmethod
    def random(seed: Optional[int] = None, rerandomize_each_iteration: Optional[bool] = None,
               name: Optional[str] = None) -> "Dataset":
        """An endless dataset of random int64 values (see
        `tf.data.experimental.RandomDataset`)."""
        from tensorweave.data.sources import RandomDataset
        return RandomDataset(seed, rerandomize_each_iteration, name)

    @staticmethod
    def zip(datasets) -> "Dataset":
        """Elements of `datasets` (a nested structure of datasets: tuples and dicts, not
        lists) side by side.

        Raises:
          TypeError: a list, or a leaf that is not a Dataset.
        """
        if _has_list(datasets):  # tf.data's nest takes a list for a leaf, not a nesting
            raise TypeError("The argument to `Dataset.zip()` must be a (nested) structure "
                            "of `Dataset` objects. Python `list` is not supported, please "
                            "use a `tuple` instead.")
        flat = nest.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError("The argument to `Dataset.zip()` must be a (nested) "
                                "structure of `Dataset` objects, got %r." % (d,))
        structure = nest.pack_sequence_as(datasets, [d._structure for d in flat])
        types = [t for d in flat for t in d._types]
        shapes = [s for d in flat for s in d._shapes]
        op = apply_op("ZipDataset", [[d._variant for d in flat]], spec_attrs(types, shapes),
                      name="ZipDataset")
        return Dataset(op.outputs[0], structure, types, shapes, flat)

    # -- transformations --
    def concatenate(self, dataset: "Dataset") -> "Dataset":
        """This dataset's elements, then `dataset`'s (of the same structure and types).

        Raises:
          TypeError: the two have different element structures or types.
        """
        try:
            nest.assert_same_structure(self._structure, dataset._structure)
            same = self._types == dataset._types and nest.flatten(
                self._structure) == nest.flatten(dataset._structure)
        except (ValueError, TypeError):  # other nestings or dict keys
            same = False
        if not same:
            raise TypeError("Incompatible dataset elements:\n  %s vs.\n  %s" % (
                self.output_types, dataset.output_types))
        shapes = [a.most_specific_compatible_shape(b) if hasattr(
            a, "most_specific_compatible_shape") else (a if a == b else unknown_shape())
            for a, b in zip(self._shapes, dataset._shapes)]
        return self._derive("ConcatenateDataset", [dataset._variant], shapes=shapes,
                            others=[dataset])

    def repeat(self, count=None) -> "Dataset":
        """The elements `count` times (None or -1: forever)."""
        return self._derive("RepeatDataset", [_count(count)])

    def take(self, count) -> "Dataset":
        """At most the first `count` elements (-1: all)."""
        return self._derive("TakeDataset", [_count(count)])

    def skip(self, count) -> "Dataset":
        """All but the first `count` elements (-1: none)."""
        return self._derive("SkipDataset", [_count(count)])

    def prefetch(self, buffer_size) -> "Dataset":
        """The same elements, read ahead by a thread of their own into a buffer of
        `buffer_size` (AUTOTUNE: 2; 0: no thread), so that reading overlaps the consumer's
        work (data/prefetch.py)."""
        return self._derive("PrefetchDataset", [_count(buffer_size)])

    def batch(self, batch_size, drop_remainder: bool = False) -> "Dataset":
        """Consecutive elements stacked into batches of `batch_size` (the last one
        shorter unless `drop_remainder`)."""
        return batched(self, batch_size, drop_remainder, "BatchDatasetV2")

    def shuffle(self, buffer_size, seed: Optional[int] = None,
                reshuffle_each_iteration: Optional[bool] = None) -> "Dataset":
        """The elements in a random order drawn through a buffer of `buffer_size`."""
        from tensorweave.ops.random.random_ops import get_seed
        if isinstance(seed, _graph.Tensor):  # the op seed, of the graph's (or the default)
            s1, _ = get_seed(0)
            s2 = seed
        else:
            s1, s2 = get_seed(seed)
            s1, s2 = (0, 0) if s1 is None else (s1, s2)
        return self._derive("ShuffleDataset", [_count(buffer_size),
                                               convert_to_tensor(s1, _dt.int64),
                                               convert_to_tensor(s2, _dt.int64)],
                            {"reshuffle_each_iteration": True if
                             reshuffle_each_iteration is None else
                             bool(reshuffle_each_iteration)})

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder: bool = False) -> "Dataset":
        """Batches of `batch_size` whose components are padded to `padded_shapes` (a
        None dimension: the batch's longest) with `padding_values` (default zeros, or
        empty strings).

        Raises:
          ValueError: a padded shape of another rank than its component, or smaller
            than a static dimension.
        """
        if any(isinstance(m, SparseSpec) for m in nest.flatten(self._structure)):
            raise TypeError("`padded_batch` is only supported for datasets that produce "
                            "tensor elements but type spec of elements in the input dataset "
                            "is not a subclass of TensorSpec: a SparseTensor component")
        if padded_shapes is None:
            padded_shapes = self.output_shapes
        padded = [padded_shape(g) for g in flatten_shapes(self._structure, padded_shapes)]
        flat_shapes = [shape for shape, _ in padded]
        for want, have in zip(flat_shapes, self._shapes):
            if have.ndims is not None and want.ndims != have.ndims:
                raise ValueError("The padded shape %s is not compatible with the shape %s "
                                 "of the corresponding input component." % (want, have))
            for a, b in zip(want.as_list(), have.as_list() if have.ndims else []):
                if a is not None and b is not None and a < b:
                    raise ValueError("The padded shape %s is not compatible with the "
                                     "shape %s of the corresponding input component."
                                     % (want, have))
        flat_values = [padding_value(v, t) for v, t in zip(
            flat_padding_values(self._structure, padding_values), self._types)]
        shape_tensors = [tensor for _, tensor in padded]
        size = _count(batch_size)
        static = _batch_dim(size, drop_remainder)
        out_shapes = [TensorShape([static]).concatenate(s) for s in flat_shapes]
        return self._derive("PaddedBatchDatasetV2",
                            [size, shape_tensors, flat_values,
                             convert_to_tensor(drop_remainder, _dt.bool)],
                            {"Toutput_types": list(self._types)}, shapes=out_shapes)

    def window(self, size, shift=None, stride=1, drop_remainder: bool = False
               ) -> "Dataset":
        """Windows of the elements: one every `shift` (default `size`) elements, each of
        the next `size` elements `stride` apart (fewer at the end unless
        `drop_remainder`). An element of the result has the input's structure with a
        Dataset in place of each component (read it with flat_map, e.g.
        `ds.window(3).flat_map(lambda w: w.batch(3))`).

        Raises:
          TypeError: SparseTensor components.
        """
        if any(isinstance(m, SparseSpec) for m in nest.flatten(self._structure)):
            raise TypeError("Dataset.window of SparseTensor components is not supported "
                            "by tensorweave")
        leaves = [DatasetSpec(0, [t], [s]) for t, s in zip(self._types, self._shapes)]
        structure = nest.pack_sequence_as(self._structure, leaves)
        return self._derive("WindowDataset", [
            _count(size), _count(size if shift is None else shift), _count(stride),
            convert_to_tensor(drop_remainder, _dt.bool)], structure=structure,
            types=[_dt.variant] * len(leaves), shapes=[TensorShape([])] * len(leaves))

    def unbatch(self) -> "Dataset":
        """Each element split along its first dimension into elements.

        Raises:
          ValueError: a component is a scalar, or components whose first dimensions
            are known to differ.
        """
        for s, t in zip(self._shapes, self._types):
            if t != _dt.variant and s.ndims == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        firsts = sorted({s.as_list()[0] for s, t in zip(self._shapes, self._types)
                         if t != _dt.variant and s.ndims} - {None})
        if len(firsts) > 1:
            raise ValueError("`unbatch()` is only supported for datasets of elements whose "
                             "components have a matching leading dimension. Encountered "
                             "both %d and %d." % tuple(firsts[:2]))
        structure = nest.map_structure(lambda m: SparseSpec(m.dtype, m.shape[1:] if
                                                            m.shape.ndims else m.shape)
                                       if isinstance(m, SparseSpec) else m, self._structure)
        return self._derive("UnbatchDataset", [], structure=structure,
                            shapes=[s if t == _dt.variant else s[1:] if s.ndims else s
                                    for s, t in zip(self._shapes, self._types)])

    def cache(self, filename="") -> "Dataset":
        """The elements, kept after the first complete pass: in memory (an enclosing
        repeat replays them), or with a `filename` in a file that later passes,
        iterators, sessions and processes read instead of the input (data/file_cache.py;
        only a complete pass leaves one).

        Args:
          filename: "" (memory) or a path prefix (a string or a string tensor).
        """
        return self._derive("CacheDataset", [convert_to_tensor(filename, dtype=_dt.string,
                                                               name="filename")])

    def flat_map(self, map_func: Callable) -> "Dataset":
        """The elements of the datasets `map_func` gives for each element, in order."""
        fn = self._dataset_function(map_func, "flat_map_fn")
        return self._derive("FlatMapDataset", [], {"f": register_function(fn)},
                            structure=fn.dataset._structure, types=fn.dataset._types,
                            shapes=fn.dataset._shapes)

    def interleave(self, map_func: Callable, cycle_length=None, block_length=None,
                   num_parallel_calls=None) -> "Dataset":
        """The elements of the datasets `map_func` gives, `block_length` (default 1) at a
        time from each of `cycle_length` (default: the number of CPU cores) open ones in
        turn (TF's order). With `num_parallel_calls` each open dataset is read ahead on a
        thread of its own; the order stays the same."""
        fn = self._dataset_function(map_func, "interleave_fn")
        cycle = AUTOTUNE if cycle_length is None else cycle_length
        return self._derive("InterleaveDataset", [_count(cycle), _count(
            1 if block_length is None else block_length)], {
                "f": register_function(fn),
                "read_ahead": num_parallel_calls not in (None, 1)},
            structure=fn.dataset._structure, types=fn.dataset._types,
            shapes=fn.dataset._shapes)

    def _dataset_function(self, map_func: Callable, name: str) -> "DatasetFunction":
        fn = DatasetFunction(map_func, self._structure, self._types, self._shapes, name,
                             unpack=True)
        if fn.dataset is None:
            raise TypeError("`map_func` must return a `Dataset` object. Got %s."
                            % (fn.outputs,))
        return fn

    @staticmethod
    def list_files(file_pattern, shuffle: Optional[bool] = None,
                   seed: Optional[int] = None) -> "Dataset":
        """The files matching `file_pattern` (a pattern or a list of them), shuffled unless
        `shuffle=False`; initializing an iterator with no match raises
        InvalidArgumentError."""
        from tensorweave.ops.control_flow.structure import identity
        from tensorweave.ops.debug.debug_ops import Assert
        from tensorweave.ops.string.string_ops import matching_files
        from tensorweave.framework.graph import control_dependencies
        from tensorweave.ops.array import array_ops
        pattern = convert_to_tensor(file_pattern, dtype=_dt.string, name="file_pattern")
        files = matching_files(pattern)
        found = array_ops.size(files) > 0
        with control_dependencies([Assert(found, ["No files matched pattern: ", pattern],
                                          summarize=1)]):
            files = identity(files)
        ds = Dataset.from_tensor_slices(files)
        if shuffle is None or shuffle:
            from tensorweave.ops.math.math_ops import cast
            ds = ds.shuffle(cast(array_ops.size(files), _dt.int64), seed=seed)
        return ds

    def map(self, map_func: Callable, num_parallel_calls=None) -> "Dataset":
        """`map_func` applied to each element (a tuple element is passed as arguments).
        With `num_parallel_calls` (a count or AUTOTUNE: the number of cores), that many
        elements are mapped at once on threads (data/parallel_map.py) and handed out in
        input order; otherwise one at a time."""
        fn = DatasetFunction(map_func, self._structure, self._types, self._shapes,
                             "map_fn", unpack=True)
        spec = dict(structure=fn.structure, types=[t.dtype for t in fn.outputs],
                    shapes=[t.shape for t in fn.outputs])
        if num_parallel_calls is None or (isinstance(num_parallel_calls, int) and
                                          num_parallel_calls == 1):
            return self._derive("MapDataset", [], {"f": register_function(fn)}, **spec)
        return self._derive("ParallelMapDataset", [convert_to_tensor(
            num_parallel_calls, _dt.int64, name="num_parallel_calls")],
            {"f": register_function(fn)}, **spec)

    def filter(self, predicate: Callable) -> "Dataset":
        """The elements for which `predicate` gives True (a scalar bool tensor).

        Raises:
          ValueError: `predicate` does not return a scalar bool tensor.
        """
        fn = DatasetFunction(predicate, self._structure, self._types, self._shapes,
                             "filter_fn", unpack=True)
        if len(fn.outputs) != 1 or fn.outputs[0].dtype != _dt.bool or \
                fn.outputs[0].shape.ndims not in (None, 0):
            raise ValueError("`predicate` return type must be convertible to a scalar "
                             "boolean tensor. Was %s." % (fn.outputs,))
        return self._derive("FilterDataset", [], {"predicate": register_function(fn)})

    def map_with_legacy_function(self, map_func: Callable, num_parallel_calls=None
                                 ) -> "Dataset":
        """TF1's `map` through a legacy Defun: `map` here (functions are traced alike)."""
        return self.map(map_func, num_parallel_calls)

    def filter_with_legacy_function(self, predicate: Callable) -> "Dataset":
        """TF1's `filter` through a legacy Defun: `filter` here."""
        return self.filter(predicate)

    def apply(self, transformation_func: Callable) -> "Dataset":
        """transformation_func(self).

        Raises:
          TypeError: it does not give a Dataset.
        """
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError("`transformation_func` must return a `tf.data.Dataset` object. "
                            "Got %s." % type(dataset))
        return dataset

    @staticmethod
    def from_generator(generator: Callable, output_types, output_shapes=None,
                       args=None) -> "Dataset":
        """The elements `generator(*args)` yields, called again by each initialization of
        an iterator (data/generators.py).

        Args:
          generator: a callable returning an iterable.
          output_types: the elements' structure of dtypes.
          output_shapes: their static shapes (default unknown).
          args: tensors (or values) passed to `generator`, evaluated by the initializer.

        Returns:
          A Dataset. An element that does not convert to `output_types` or fit
          `output_shapes` fails its get_next with InvalidArgumentError; an exception in the
          generator with UnknownError.

        Raises:
          TypeError: `generator` is not callable.
        """
        from tensorweave.data import generators
        return generators.from_generator(generator, output_types, output_shapes, args)

    def shard(self, num_shards, index) -> "Dataset":
        """Every `num_shards`-th element, from element `index` on (the elements of one of
        `num_shards` workers); its run raises InvalidArgumentError unless
        0 <= index < num_shards."""
        from tensorweave.data import transforms
        return transforms.shard(self, num_shards, index)

    def enumerate(self, start=0) -> "Dataset":
        """(index, element) pairs, the int64 index counting from `start`."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def reduce(self, initial_state, reduce_func: Callable):
        """The fold of every element into a state: `reduce_func(state, element)` gives the
        next state (same structure and dtypes); the result is the last state, as tensors
        in `initial_state`'s structure.

        Raises:
          TypeError: a new state of other dtypes or structure.
        """
        from tensorweave.data import transforms
        return transforms.reduce(self, initial_state, reduce_func)

    # -- iterators (TF1) --
    def make_one_shot_iterator(self):
        """An iterator over this dataset that needs no initialization."""
        from tensorweave.data import iterator_ops
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: Optional[str] = None):
        """An iterator whose `initializer` (re)starts it on this dataset."""
        from tensorweave.data import iterator_ops
        return iterator_ops.make_initializable_iterator(self, shared_name)

    def __iter__(self):
        raise RuntimeError("__iter__() is only supported inside of tf.function or when "
                           "eager execution is enabled.")


def _lists_as_tensors(x):
    """`x` with every list a tensor (so mixed dtypes are a TypeError) and every
    SparseTensorValue a SparseTensor: in tf.data a list is one component, not a nesting
    (tuples, namedtuples and dicts are)."""
    from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
    if isinstance(x, list):
        return convert_to_tensor(x)
    if isinstance(x, SparseTensorValue):
        return SparseTensor.from_value(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_lists_as_tensors(v) for v in x])
    if isinstance(x, tuple):
        return tuple(_lists_as_tensors(v) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _lists_as_tensors(v)) for k, v in x.items())
    return x


def structure_of(tensors):
    """(structure, flat component tensors) of an element given as tensors (a SparseTensor
    one variant component).

    Raises:
      TypeError: a variant or resource component.
    """
    tensors = _lists_as_tensors(tensors)
    from tensorweave.framework.sparse_tensor import SparseTensor
    # each leaf is converted once: a NumPy array becomes one Const in the graph, as in TF
    tensors = nest.map_structure(
        lambda t: t if isinstance(t, SparseTensor) else convert_to_tensor(t), tensors)
    for t in nest.flatten(tensors):
        if isinstance(t, SparseTensor):
            continue
        if t.dtype == _dt.variant or t.dtype == _dt.resource:
            raise TypeError("tf.data components must be tensors of data, got %s" % t)
    return flatten_element(tensors)


# --- SparseTensor components -----------------------------------------------------------------
class SparseSpec:
    """The structure leaf of a SparseTensor component: its values' dtype and dense shape
    (the component itself is one variant tensor)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = _dt.as_dtype(dtype)
        self.shape = TensorShape(shape)

    def __eq__(self, other):  # structures agree on kind and dtype; shapes may differ
        return isinstance(other, SparseSpec) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("SparseSpec", self.dtype))

    def __repr__(self):
        return "SparseSpec(%s, %s)" % (self.dtype.name, self.shape)


class DatasetSpec:
    """The structure leaf of a component that is itself a dataset (a window's, or what a
    map function returns): that dataset's element structure, dtypes and shapes (the
    component is one variant tensor)."""

    __slots__ = ("structure", "types", "shapes")

    def __init__(self, structure, types, shapes):
        self.structure, self.types = structure, list(types)
        self.shapes = [TensorShape(x) for x in shapes]

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and other.types == self.types

    def __hash__(self):
        return hash(("DatasetSpec", tuple(t.name for t in self.types)))

    def __repr__(self):
        return "DatasetSpec(%s, %s)" % (
            nest.pack_sequence_as(self.structure, [t.name for t in self.types]),
            nest.pack_sequence_as(self.structure, [tuple(x.as_list()) if x.ndims is not
                                                   None else None for x in self.shapes]))


class SparseComponent:
    """A SparseTensor's arrays as one run-time component value."""

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices, values, dense_shape):
        self.indices = np.asarray(indices, np.int64).reshape(-1, np.size(dense_shape))
        self.values, self.dense_shape = values, np.asarray(dense_shape, np.int64)

    def rows(self) -> int:
        if not self.dense_shape.size:
            raise errors.InvalidArgumentError(None, None, "Unbatching a SparseTensor is "
                                              "only supported for rank >= 1")
        return int(self.dense_shape[0])

    def row(self, i: int) -> "SparseComponent":
        """Row `i` of the first dimension, a SparseTensor of one rank less."""
        keep = self.indices[:, 0] == i
        return SparseComponent(self.indices[keep, 1:], np.asarray(self.values)[keep],
                               self.dense_shape[1:])

    @staticmethod
    def stack(parts: List["SparseComponent"]) -> "SparseComponent":
        """The batch of `parts`: a new first index, the dense shape the largest of theirs
        in each dimension (as TF batches SparseTensors)."""
        rank = parts[0].dense_shape.size
        if any(p.dense_shape.size != rank for p in parts):
            raise errors.InvalidArgumentError(None, None, "Cannot batch SparseTensors of "
                                              "different ranks")
        indices = [np.concatenate([np.full((len(p.indices), 1), k, np.int64), p.indices],
                                  axis=1) for k, p in enumerate(parts)]
        shape = np.max([p.dense_shape for p in parts], axis=0) if rank else \
            np.zeros(0, np.int64)
        return SparseComponent(np.concatenate(indices).reshape(-1, rank + 1),
                               np.concatenate([np.asarray(p.values) for p in parts]),
                               np.concatenate([[len(parts)], shape]))


def flatten_element(element):
    """(structure, flat component tensors): SparseTensors and Datasets become one variant
    component each, with a SparseSpec or DatasetSpec leaf."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    leaves, flat = [], []
    for x in nest.flatten(element):
        if isinstance(x, Dataset):
            flat.append(x._variant)
            leaves.append(DatasetSpec(x._structure, x._types, x._shapes))
        elif isinstance(x, SparseTensor):
            flat.append(apply_op("SparseTensorToVariant", [x.indices, x.values,
                                                           x.dense_shape],
                                 name="SparseTensorToVariant").outputs[0])
            leaves.append(SparseSpec(x.dtype, x.get_shape()))
        else:
            flat.append(convert_to_tensor(x))
            leaves.append(0)
    return nest.pack_sequence_as(element, leaves), flat


def pack_element(structure, tensors):
    """The element of `structure` from its flat component tensors (a SparseTensor again
    for each SparseSpec leaf)."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    out = []
    for leaf, t in zip(nest.flatten(structure), tensors):
        if isinstance(leaf, SparseSpec):
            # static_shape: [rank, dims...] (-1 unknown), so that [0] is always there
            known = leaf.shape.as_list() if leaf.shape.ndims is not None else None
            static = [] if known is None else [len(known)] + [
                -1 if d is None else d for d in known]
            op = apply_op("VariantToSparseTensor", [t], {"dtype": leaf.dtype,
                                                          "static_shape": static},
                          name="VariantToSparseTensor")
            indices, values, dense_shape = op.outputs
            indices.set_shape([None, leaf.shape.ndims])
            dense_shape.set_shape([leaf.shape.ndims])
            t = SparseTensor(indices, values, dense_shape)
        elif isinstance(leaf, DatasetSpec):
            t = Dataset(t, leaf.structure, leaf.types, leaf.shapes)
        out.append(t)
    return nest.pack_sequence_as(structure, out)


def read_element(op_type: str, inputs, spec: "ElementSpec", name: str):
    """The element an op of `op_type` outputs as its components (IteratorGetNext and its
    kin), built on `inputs`, in `spec`'s structure with its static shapes."""
    op = apply_op(op_type, inputs, spec_attrs(spec._types, spec._shapes), name=name)
    outs = list(op.outputs)
    for t, s in zip(outs, spec._shapes):
        t.set_shape(s)
    return pack_element(spec._structure, outs)


def element_structure(output_types, output_shapes=None, output_classes=None):
    """(structure, flat types, flat shapes) of an iterator's declared elements; a leaf
    whose class is SparseTensor is one variant component."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    types = [_dt.as_dtype(t) for t in nest.flatten(output_types)]
    if output_shapes is None:
        shapes = [TensorShape(None)] * len(types)
    else:
        shapes = [TensorShape(s) for s in flatten_shapes(output_types, output_shapes)]
    classes = [None] * len(types) if output_classes is None else \
        nest.flatten(output_classes)
    leaves = [SparseSpec(t, s) if c is SparseTensor else 0
              for t, s, c in zip(types, shapes, classes)]
    flat_types = [_dt.variant if isinstance(m, SparseSpec) else t
                  for m, t in zip(leaves, types)]
    flat_shapes = [TensorShape([]) if isinstance(m, SparseSpec) else s
                   for m, s in zip(leaves, shapes)]
    return nest.pack_sequence_as(output_types, leaves), flat_types, flat_shapes


def _source(op_type, flat, structure, types, shapes) -> Dataset:
    op = apply_op(op_type, [flat], dict(spec_attrs(types, shapes),
                                        Toutput_types=list(types)), name=op_type)
    return Dataset(op.outputs[0], structure, types, shapes)


def _has_list(structure) -> bool:
    if isinstance(structure, list):
        return True
    if isinstance(structure, dict):
        return any(_has_list(v) for v in structure.values())
    if isinstance(structure, tuple):
        return any(_has_list(v) for v in structure)
    return False


def _count(value):
    if value is None:
        value = -1
    return convert_to_tensor(value, dtype=_dt.int64, name="count")


def _graph_static_int(t) -> Optional[int]:
    from tensorweave.framework.tensor_util import constant_value
    v = constant_value(t)
    return None if v is None else int(v)


def batched(ds: Dataset, batch_size, drop_remainder, op_type: str) -> Dataset:
    """`ds` batched by `op_type` (BatchDatasetV2, or map_and_batch's batching)."""
    size = _count(batch_size)
    if size.shape.ndims not in (None, 0):
        raise ValueError("Invalid `batch_size`: expected a scalar, got shape %s."
                         % size.shape)
    static = _batch_dim(size, drop_remainder)
    shapes = [s if t == _dt.variant else TensorShape([static]).concatenate(s)
              for s, t in zip(ds._shapes, ds._types)]
    structure = nest.map_structure(lambda m: SparseSpec(m.dtype, TensorShape(
        [static]).concatenate(m.shape)) if isinstance(m, SparseSpec) else m, ds._structure)
    return ds._derive(op_type, [size, convert_to_tensor(drop_remainder, _dt.bool)],
                      structure=structure, shapes=shapes)


def _batch_dim(size: _graph.Tensor, drop_remainder) -> Optional[int]:
    """The static first dimension of a batch: the batch size where it is known and
    the remainder is known to be dropped (a bool or a bool tensor), else None."""
    if isinstance(drop_remainder, _graph.Tensor):
        from tensorweave.framework.tensor_util import constant_value
        drop_remainder = constant_value(drop_remainder)
    return _graph_static_int(size) if drop_remainder is not None and \
        bool(drop_remainder) else None


def _file_dataset(op_type: str, filenames, compression_type) -> Dataset:
    names = convert_to_tensor(filenames, dtype=_dt.string, name="filenames")
    comp = convert_to_tensor("" if compression_type is None else compression_type,
                             dtype=_dt.string, name="compression_type")
    size = convert_to_tensor(0, dtype=_dt.int64, name="buffer_size")
    op = apply_op(op_type, [names, comp, size],
                  spec_attrs([_dt.string], [TensorShape([])]), name=op_type)
    return op.outputs[0]


def _init_reader(dataset: Dataset, filenames, num_parallel_reads, read_one) -> None:
    """Makes `dataset` the records of `filenames` (a string tensor, or a dataset of
    scalar strings): file by file, or with `num_parallel_reads` (AUTOTUNE: the number
    of cores) that many files at once, one record from each in turn, as TF interleaves
    them (each file read ahead on a thread). `read_one(file names tensor)` gives the
    variant of one reader dataset.

    Raises:
      TypeError: a dataset of filenames whose elements are not scalar strings.
    """
    parallel = num_parallel_reads not in (None, 1)
    if not parallel and not isinstance(filenames, Dataset):
        Dataset.__init__(dataset, read_one(filenames), 0, [_dt.string], [TensorShape([])])
        return
    files = _filenames_dataset(filenames)

    def records_of(name):
        return Dataset(read_one(name), 0, [_dt.string], [TensorShape([])])
    if parallel:
        cycle = cpu_cores() if num_parallel_reads == AUTOTUNE else num_parallel_reads
        records = files.interleave(records_of, cycle_length=cycle, block_length=1,
                                   num_parallel_calls=cycle)
    else:
        records = files.flat_map(records_of)
    Dataset.__init__(dataset, records._variant, 0, [_dt.string], [TensorShape([])])


def _filenames_dataset(filenames) -> Dataset:
    """`filenames` as a dataset of scalar strings (a tensor's elements, in order)."""
    if isinstance(filenames, Dataset):
        if filenames._types != [_dt.string] or \
                not filenames._shapes[0].is_compatible_with(TensorShape([])):
            raise TypeError("The `filenames` argument must contain `tf.string` elements. "
                            "Got a dataset of `%s` elements." % (filenames.output_types,))
        return filenames
    from tensorweave.ops.array.array_ops import reshape
    names = convert_to_tensor(filenames, dtype=_dt.string, name="filenames")
    return Dataset.from_tensor_slices(reshape(names, [-1]))


@tf_export("data.TFRecordDataset")
class TFRecordDataset(Dataset):
    """The records of TFRecord files (GZIP or ZLIB compressed with `compression_type`),
    file by file, or `num_parallel_reads` files at once, one record from each in turn
    (TF's order). `buffer_size` is accepted."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        _init_reader(self, filenames, num_parallel_reads,
                     lambda f: _file_dataset("TFRecordDataset", f, compression_type))


@tf_export("data.FixedLengthRecordDataset")
class FixedLengthRecordDataset(Dataset):
    """Records of `record_bytes` bytes from binary files, after `header_bytes` and
    before `footer_bytes` of each file; with `num_parallel_reads`, files interleaved
    as in TFRecordDataset."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None):
        def i64(v, name):
            return convert_to_tensor(0 if v is None else v, dtype=_dt.int64, name=name)

        def read_one(names):
            return apply_op("FixedLengthRecordDatasetV2", [
                convert_to_tensor(names, dtype=_dt.string, name="filenames"),
                i64(header_bytes, "header_bytes"), i64(record_bytes, "record_bytes"),
                i64(footer_bytes, "footer_bytes"), i64(buffer_size, "buffer_size"),
                convert_to_tensor("" if compression_type is None else compression_type,
                                  dtype=_dt.string, name="compression_type")],
                spec_attrs([_dt.string], [TensorShape([])]),
                name="FixedLengthRecordDataset").outputs[0]
        _init_reader(self, filenames, num_parallel_reads, read_one)


@tf_export("data.TextLineDataset")
class TextLineDataset(Dataset):
    """The lines of text files (without their line ends), file by file, or
    `num_parallel_reads` files at once, one line from each in turn (TF's order)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        _init_reader(self, filenames, num_parallel_reads,
                     lambda f: _file_dataset("TextLineDataset", f, compression_type))
