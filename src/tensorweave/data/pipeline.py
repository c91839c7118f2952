"""The values of dataset ops: descriptions of a pipeline that yield its elements when an
iterator's pass reads them (dataset_ops.py has the overview).

An element is a list of component values (NumPy arrays, or a SparseComponent for a
SparseTensor, a RaggedComponent for a RaggedTensor); `read(value, ctx, with_errors)`
yields them in order. This module has what every value shares (the pass's context and
seeds, the DatasetValue base, ElementError and its rules) and the sources (slices,
ranges, records of files); the transformations are in pipeline_transforms.py and
pipeline_batching.py.
"""
from __future__ import annotations

import threading
from typing import List, Optional, Protocol

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime.values import element
from tensorweave.data.ragged_elements import RaggedComponent


class TracedFunction(Protocol):
    """What the pipeline values and the kernels use of a function traced for a dataset
    op (dataset_ops.DatasetFunction): its graph, argument placeholders and captured
    tensors, and a run per element."""

    graph: object
    inputs: list
    captures: list

    def feed_of(self, components, outer: Optional[dict] = None) -> dict: ...

    def run(self, ctx, components, outer: Optional[dict] = None) -> list: ...


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


class DatasetValue:
    """A dataset's run-time value. `elements(ctx)` iterates over its elements, each a list
    of arrays (the flattened components); a new call starts again from the start.

    `feed` holds the values its functions' runs are fed: the captured tensors' (evaluated
    when the dataset op ran) and, for a dataset built by a function (flat_map,
    interleave), the enclosing functions' arguments, which its own functions may read."""

    feed: Optional[dict] = None
    # with tf.data.experimental.ignore_errors: functions drop the elements they fail on
    skip_errors = False

    def elements(self, ctx):
        """A new iterator over the elements, each a list of component arrays."""
        return self._elements(ctx, False)

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
        an error: what an iterator reads."""
        return self._elements(ctx, True)

    def _elements(self, ctx, with_errors: bool):
        """`elements_with_errors(ctx)` when `with_errors`, else `elements(ctx)`: what a
        subclass defines, or else `elements` alone. Transformations that pass an error
        through define this (most do, reading their inputs with `read`); one that
        defines only `elements` (a source, an input read whole) ends its pass at an
        error, its elements_with_errors being its elements."""
        return self.elements(ctx)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # each of the two calls the other here: a subclass must define one
        if cls.elements is DatasetValue.elements and \
                cls._elements is DatasetValue._elements:
            raise TypeError("%s defines neither elements nor _elements" % cls.__name__)


END_OF_INPUT = object()


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


def sub_dataset(ctx, node, fn: TracedFunction, element) -> DatasetValue:
    """The dataset `fn` gives for `element`, its functions able to read the argument."""
    return _bind(fn.run(ctx, element, node.feed)[0], fn.feed_of(element, node.feed))


def component_rows(c) -> int:
    """The first dimension of a component (an array or a composite component)."""
    return c.rows() if isinstance(c, COMPOSITES) else np.shape(c)[0]


def component_row(c, i: int):
    # element(): a row of a string vector is a 0-d object array, not NumPy's bare bytes
    return c.row(i) if isinstance(c, COMPOSITES) else element(c[i])


class Slices(DatasetValue):
    def __init__(self, components):
        self.components = components

    def elements(self, ctx):
        return self.elements_after(ctx, 0)

    def elements_after(self, ctx, n: int):
        for i in range(n, component_rows(self.components[0])):
            yield [component_row(c, i) for c in self.components]

    def blocks(self, ctx):
        if any(isinstance(c, COMPOSITES) for c in self.components):
            return None
        return iter([[np.asarray(c) for c in self.components]])


class Once(DatasetValue):
    def __init__(self, components):
        self.components = components

    def elements(self, ctx):
        yield list(self.components)


class Range(DatasetValue):
    def __init__(self, start, stop, step, dtype=np.int64):
        self.args, self.scalar = (start, stop, step), np.dtype(dtype).type

    def elements(self, ctx):
        return self.elements_after(ctx, 0)

    def elements_after(self, ctx, n: int):
        for v in range(*self.args)[n:]:
            yield [self.scalar(v)]


class Records(DatasetValue):
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


class FixedLengthRecords(DatasetValue):
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
    return reader(value, with_errors)(ctx)


def reader(value: DatasetValue, with_errors: bool):
    """What `read` calls with the pass's context: `value.elements_with_errors` or
    `value.elements` (for a transformation that takes its input as a function)."""
    return value.elements_with_errors if with_errors else value.elements


def applied(node: DatasetValue, ctx, inputs, errors_as_elements: bool):
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


class SparseComponent:
    """A SparseTensor's arrays as one run-time component value."""

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices, values, dense_shape):
        rank, indices = np.size(dense_shape), np.asarray(indices, np.int64)
        # a scalar's indices are (values, 0): -1 cannot stand for their count
        self.indices = indices.reshape(-1, rank) if rank else \
            indices.reshape(np.size(values), 0)
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


# the run-time values of composite components: each has rows(), row(i) and stack(parts)
COMPOSITES = (SparseComponent, RaggedComponent)
