"""Warm-starting a matrix whose rows (or columns) follow a vocabulary that changed:
the value `tf.train.warm_start` assigns to a variable named in `var_name_to_vocab_info`.

Row i of the new matrix (axis 0) is the old checkpoint row of the old vocabulary's line
holding new vocabulary entry i; an entry the old vocabulary lacks is a "missing" row,
filled from the backup initializer, as are the appended OOV-bucket rows (TF1's
GenerateVocabRemapping + LoadAndRemapMatrix). With axis 1 the same holds for columns,
and the rows load unchanged. A shard of a partitioned variable (partitioned along rows)
takes the rows from its offset on.

The vocabulary files are read when the graph is built; the checkpoint tensor is read
when the initializer runs (a RestoreV2), like any checkpoint initializer. The missing
entries are filled in row-major order from one `initializer([count, 1])` call, then the
OOV rows and OOV columns each from one more call, in TF's order.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt


def _vocab_lines(path: str, offset: int = 0, count: Optional[int] = None) -> List[str]:
    """Lines [offset, offset + count) of the vocabulary file `path` (count None or < 0:
    to the end).

    Raises:
      ValueError: the file has fewer than offset + count lines.
    """
    from tensorweave.platform import gfile
    with gfile.GFile(path, "r") as f:
        lines = f.read().splitlines()
    if count is None or count < 0:
        return lines[offset:]
    if len(lines) < offset + count:
        raise ValueError("Number of new vocab entries found was %d, expected %d (vocab "
                         "file %s, from line %d)" % (max(len(lines) - offset, 0), count,
                                                      path, offset))
    return lines[offset:offset + count]


def vocab_remapping(new_vocab: str, old_vocab: str, offset: int, count: int,
                    old_vocab_size: int = -1) -> np.ndarray:
    """For new vocabulary lines [offset, offset + count), the line of the same entry in
    the first `old_vocab_size` lines (-1: all) of the old vocabulary, or -1 (int64)."""
    old_index: Dict[str, int] = {}
    for i, entry in enumerate(_vocab_lines(old_vocab, 0, old_vocab_size)):
        old_index.setdefault(entry, i)
    new = _vocab_lines(new_vocab, offset, count)
    return np.array([old_index.get(entry, -1) for entry in new], np.int64)


def _backup(initializer, shape, dtype):
    from tensorweave.framework.op_builder import convert_to_tensor
    return convert_to_tensor(initializer(shape, dtype=dtype))


def _remapped_block(old, row_map: np.ndarray, col_map: np.ndarray, initializer, dtype):
    """The [len(row_map), len(col_map)] matrix of old[row_map[i], col_map[j]], the
    missing entries (an index -1) taken in row-major order from one initializer call."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.array.constant_op import constant
    from tensorweave.ops.indexing.indexing_gather import gather
    rows, cols = len(row_map), len(col_map)
    present = (row_map >= 0)[:, None] & (col_map >= 0)[None, :]
    missing = int(rows * cols - present.sum())
    rows_in = gather(old, constant(np.maximum(row_map, 0)))
    block = gather(rows_in, constant(np.maximum(col_map, 0)), axis=1)
    if missing == 0:
        return block
    # one gather over [present values..., backup values...]: position k of the result
    # reads element k of the block, or the next backup value where k is missing
    take = np.arange(rows * cols, dtype=np.int64)
    take[~present.ravel()] = rows * cols + np.arange(missing)
    backup = _backup(initializer, [missing, 1], dtype)
    flat = concat([array_ops.reshape(block, [-1]), array_ops.reshape(backup, [-1])], 0)
    return array_ops.reshape(gather(flat, constant(take)), [rows, cols])


def remapped_value(ckpt_file: str, tensor_name: str, info, shape: List[int], offset: int,
                   total_rows: int, dtype, initializer=None):
    """The initial value of one (shard of a) variable of `shape` whose first row is row
    `offset` of the full matrix, warm-started from `tensor_name` in `ckpt_file` along
    the VocabInfo `info`; `total_rows` is the full variable's row count.

    Raises:
      TypeError: the backup initializer is not callable.
      ValueError: `dtype` is not float32 (as TF's remapping kernels), the variable is
        not a matrix, its shape does not fit the vocabulary sizes, or the new
        vocabulary file is too short.
    """
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.array.constant_op import constant
    from tensorweave.ops.io.io_ops import restore_v2
    from tensorweave.ops.state.init_ops import Zeros
    initializer = initializer if initializer is not None else Zeros()
    if not callable(initializer):
        raise TypeError("initializer must be callable, instead of being {} of type {}."
                        .format(initializer, type(initializer)))
    if dtype != _dt.float32:
        # TF's remapping builds a float32 value, which then fails to convert to the
        # variable's dtype (a ValueError)
        raise ValueError("Vocabulary remapping supports float32 variables only; got %s"
                         % dtype.name)
    if len(shape) != 2:
        raise ValueError("Expected 2-dim shape, but received: {}".format(shape))
    if info.axis == 0:
        new_rows, row_oov, new_cols, col_oov = (info.new_vocab_size, info.num_oov_buckets,
                                                shape[1], 0)
    else:
        new_rows, row_oov, new_cols, col_oov = (total_rows, 0, info.new_vocab_size,
                                                info.num_oov_buckets)
    if shape[1] != new_cols + col_oov:
        raise ValueError("Expected 2nd dim of shape to be new_col_vocab_size ({}) + "
                         "num_col_oov_buckets ({}) = {}, but received shape: {}"
                         .format(new_cols, col_oov, new_cols + col_oov, shape))
    if offset + shape[0] > new_rows + row_oov:
        raise ValueError("Trying to initialize {} additional rows after {} rows have "
                         "already been initialized, which would exceed expected total row "
                         "count of new_row_vocab_size ({}) + num_row_oov_buckets ({}) = {}."
                         .format(shape[0], offset, new_rows, row_oov, new_rows + row_oov))
    oov_rows = min(shape[0], max(0, offset + shape[0] - new_rows))
    load_rows = shape[0] - oov_rows
    if load_rows == 0:  # a shard of OOV rows only
        return _backup(initializer, shape, dtype)
    if info.axis == 0:
        row_map = vocab_remapping(info.new_vocab, info.old_vocab, offset, load_rows,
                                  info.old_vocab_size)
        col_map = np.arange(new_cols, dtype=np.int64)
    else:
        row_map = np.arange(offset, offset + load_rows, dtype=np.int64)
        col_map = vocab_remapping(info.new_vocab, info.old_vocab, 0, new_cols,
                                  info.old_vocab_size)
    old = restore_v2(constant(ckpt_file), constant([tensor_name]), constant([""]),
                     [dtype], name="checkpoint_initializer")[0]
    value = _remapped_block(old, row_map, col_map, initializer, dtype)
    if oov_rows:
        value = concat([value, _backup(initializer, [oov_rows, new_cols], dtype)], 0)
    if col_oov:
        value = concat([value, _backup(initializer, [shape[0], col_oov], dtype)], 1)
    return value
