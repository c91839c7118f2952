"""tf.data's file datasets: TFRecordDataset, FixedLengthRecordDataset and TextLineDataset
(their reader ops and kernels are in dataset_kernels.py). Each reads its files one after
another, or `num_parallel_reads` at once, one record from each in turn (TF's order).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.data.dataset_kernels import AUTOTUNE, cpu_cores
from tensorweave.data.dataset_ops import Dataset, spec_attrs


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
