"""Dataset.cache(filename): the elements written to a file during the first complete
pass, and read back from it by every later pass, later iterators and later sessions or
processes.

The file is `<filename>.tw-cache`, a TFRecord file with one record per element: its
components in the wire form of distribute/wire.py (dtype, shape, raw bytes; nothing
pickled), each record checksummed. A RaggedTensor component is its flat values followed
by its row splits; the record's JSON header then lists, per component, null (a dense
one) or [ragged rank, row_splits dtype] (a header without that list: all dense). It is
tensorweave's own format, not TensorFlow's tensor bundle, so the two do not share cache
files. A pass writes to a temporary file of its own and renames it into place only when
the input is exhausted, so a partial pass (a `take`, an error, a killed process) never
leaves a cache that later passes would trust; two concurrent first passes each write
their own and the last rename wins, with the same elements.
"""
from __future__ import annotations

import itertools
import os

import numpy as np

from tensorweave.framework import errors
from tensorweave.data.pipeline import COMPOSITES, DatasetValue
from tensorweave.data.ragged_elements import RaggedComponent

SUFFIX = ".tw-cache"
_TEMPORARIES = itertools.count()


def cache_path(filename: str) -> str:
    return filename + SUFFIX


class FileCache(DatasetValue):
    """The input, cached in the file `cache_path(filename)` (see the module docstring)."""

    def __init__(self, source, filename: str, op):
        self.source, self.filename, self.op = source, filename, op

    def elements(self, ctx):
        from tensorweave.platform import file_io
        path = cache_path(self.filename)
        if file_io.exists(path):
            yield from self._read(path)
            return
        yield from self._write_through(ctx, path)

    def _read(self, path: str):
        from tensorweave.distribute import wire
        from tensorweave.ops.io import record_io
        reader = record_io.RecordReader(path)
        try:
            while True:
                record = reader.read()
                if record is None:
                    return
                meta, tensors = wire.unpack(record)
                yield _decoded(meta, [np.array(wire.decode_tensor(t)[0]) for t in tensors])
        finally:
            reader.close()

    def _write_through(self, ctx, path: str):
        from tensorweave.ops.io import record_io
        from tensorweave.platform import file_io
        temporary = "%s.tmp-%d-%d" % (path, os.getpid(), next(_TEMPORARIES))
        try:
            writer = record_io.TFRecordWriter(temporary)
        except errors.OpError as e:
            raise type(e)(None, self.op, "Cannot write the cache file of Dataset.cache: "
                                         "%s" % e.message) from None
        done = False
        try:
            for element in self.source.elements(ctx):
                writer.write(self._record(element))
                yield element
            writer.close()
            file_io.replace(temporary, path)
            done = True
        finally:
            if not done:  # a partial pass: its file is not a cache
                writer.close()
                try:
                    file_io.remove(temporary)
                except OSError:
                    pass

    def _record(self, element) -> bytes:
        """One element as a record: its arrays, and the layout where one is ragged."""
        from tensorweave.distribute import wire
        layout, arrays = [], []
        for component in element:
            if isinstance(component, RaggedComponent):
                layout.append([component.ragged_rank, component.splits_dtype.name])
                arrays += [component.flat_values] + list(component.splits)
                continue
            if isinstance(component, COMPOSITES + (DatasetValue,)):
                kind = "SparseTensor" if isinstance(component, COMPOSITES) else "dataset"
                raise errors.UnimplementedError(
                    None, self.op, "Dataset.cache(filename) of %s components is not "
                    "supported by tensorweave (cache() in memory is)" % kind)
            layout.append(None)
            arrays.append(np.asarray(component))
        meta = {"layout": layout} if any(layout) else {}
        return wire.pack(meta, [wire.encode_tensor(a) for a in arrays])


def _decoded(meta: dict, arrays: list) -> list:
    """The components of a record: `arrays` regrouped by the record's layout."""
    layout = meta.get("layout") or [None] * len(arrays)
    components, at = [], 0
    for entry in layout:
        if entry is None:
            components.append(arrays[at])
            at += 1
            continue
        ragged_rank, splits_dtype = entry
        count = max(ragged_rank, 0)
        components.append(RaggedComponent(arrays[at], arrays[at + 1:at + 1 + count],
                                          np.dtype(splits_dtype), ragged_rank))
        at += 1 + count
    return components
