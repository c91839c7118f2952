"""tf.data.experimental's readers: CSV files (CsvDataset, make_csv_dataset with TF's
column type inference), Example records (make_batched_features_dataset) and SQLite
queries (SqlDataset, through Python's sqlite3).
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.registry import kernel
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import file_datasets as _files
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.experimental import ignore_errors as _ignore_errors


# --- CSV ---------------------------------------------------------------------------------
def _csv_defaults(record_defaults) -> list:
    """decode_csv's defaults: a DType is a required field (an empty default), anything
    else the default value."""
    from tensorweave.ops.array.constant_op import constant
    out = []
    for d in record_defaults:
        if isinstance(d, _dt.DType) or (isinstance(d, type) and issubclass(d, np.generic)):
            out.append(constant([], dtype=_dt.as_dtype(d)))
        else:
            out.append(d)
    return out


@tf_export("data.experimental.CsvDataset")
class CsvDataset(Dataset):
    """The records of CSV files as tuples of columns typed by `record_defaults` (a
    DType: a required column; a value: its default when empty), skipping each file's
    first line with `header`; the parsing is `tf.io.decode_csv`'s.

    Raises:
      ValueError: both `select_cols` and `exclude_cols`.
    """

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header: bool = False, field_delim: str = ",", use_quote_delim: bool = True,
                 na_value: str = "", select_cols=None, exclude_cols=None):
        from tensorweave.ops.string.string_decode_ops import decode_csv
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be set, not both.")
        defaults = _csv_defaults(record_defaults)
        if exclude_cols is not None:
            total = len(defaults) + len(exclude_cols)
            select_cols = [i for i in range(total) if i not in set(exclude_cols)]
        skip = 1 if header else 0
        from tensorweave.ops.array.array_ops import reshape
        names = reshape(convert_to_tensor(filenames, _dt.string), [-1])
        lines = Dataset.from_tensor_slices(names).flat_map(
            lambda f: _files.TextLineDataset(f, compression_type).skip(skip))
        rows = lines.map(lambda line: tuple(decode_csv(
            line, defaults, field_delim=field_delim, use_quote_delim=use_quote_delim,
            na_value=na_value, select_cols=select_cols)))
        Dataset.__init__(self, rows._variant, rows._structure, rows._types,
                         [TensorShape([])] * len(rows._types))


def _infer_column_type(values) -> _dt.DType:
    """TF's inference for make_csv_dataset: the narrowest of int32, int64, float32,
    float64 that every non-empty value parses as, else string."""
    def fits(convert, ok):
        try:
            return all(ok(convert(v)) for v in values)
        except ValueError:
            return False
    if fits(int, lambda x: -2 ** 31 <= x < 2 ** 31):
        return _dt.int32
    if fits(int, lambda x: -2 ** 63 <= x < 2 ** 63):
        return _dt.int64
    if fits(float, lambda x: abs(x) <= np.finfo(np.float32).max or not np.isfinite(x)):
        return _dt.float32
    if fits(float, lambda x: True):
        return _dt.float64
    return _dt.string


@tf_export("data.experimental.make_csv_dataset")
def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name: Optional[str] = None, select_columns=None,
                     field_delim: str = ",", use_quote_delim: bool = True,
                     na_value: str = "", header: bool = True, num_epochs=None,
                     shuffle: bool = True, shuffle_buffer_size: int = 10000,
                     shuffle_seed: Optional[int] = None, prefetch_buffer_size=None,
                     num_parallel_reads=None, sloppy: bool = False,
                     num_rows_for_inference: int = 100, compression_type=None,
                     ignore_errors: bool = False) -> Dataset:
    """Batches of (features, label) from CSV files: `features` an OrderedDict of column
    name -> batch, `label` the column `label_name` (or features only without one).
    Column names come from the header unless given; column types are inferred from the
    first `num_rows_for_inference` rows unless `column_defaults` are given (the files are
    read when the dataset is built, as TF does).

    Raises:
      ValueError: no file matches, no names without a header, or a label or selected
        column that is not a column.
    """
    import collections
    import csv
    from tensorweave.platform import file_io
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else \
        list(file_pattern)
    files = sorted(set(f for p in patterns for f in file_io.glob(file_io.fspath(p))))
    if not files:
        raise ValueError("No files match `file_pattern` %s." % (file_pattern,))
    delim = field_delim

    def rows(limit):
        out = []
        for path in files:
            with open(path, newline="") as f:
                reader = csv.reader(f, delimiter=delim, quoting=csv.QUOTE_MINIMAL if
                                    use_quote_delim else csv.QUOTE_NONE)
                for k, row in enumerate(reader):
                    if k == 0 and header:
                        continue
                    out.append(row)
                    if len(out) >= limit:
                        return out
        return out
    if column_names is None:
        if not header:
            raise ValueError("Cannot infer column names without a header line.")
        with open(files[0], newline="") as f:
            column_names = next(csv.reader(f, delimiter=delim))
    column_names = list(column_names)
    if select_columns is not None:
        index = [c if isinstance(c, int) else column_names.index(c) if c in column_names
                 else None for c in select_columns]
        if None in index:
            raise ValueError("select_columns %s are not all columns of %s"
                             % (select_columns, column_names))
        index = sorted(index)
    else:
        index = list(range(len(column_names)))
    names = [column_names[i] for i in index]
    if label_name is not None and label_name not in names:
        raise ValueError("`label_name` provided must be one of the columns: %s." % names)
    if column_defaults is None:
        sample = rows(num_rows_for_inference)
        column_defaults = []
        for i in index:
            values = [r[i] for r in sample if i < len(r) and r[i] != na_value and r[i] != ""]
            dtype = _infer_column_type(values)
            # a typed default (a list of a NumPy scalar would convert as int32)
            column_defaults.append(convert_to_tensor(["" if dtype == _dt.string else 0],
                                                     dtype=dtype))
    ds = CsvDataset(files, column_defaults, compression_type=compression_type, header=header,
                    field_delim=field_delim, use_quote_delim=use_quote_delim,
                    na_value=na_value, select_cols=index if select_columns is not None
                    else None)
    if ignore_errors:
        ds = ds.apply(_ignore_errors())
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    # endless input: every batch is full, and its static shape says so (TF's)
    ds = ds.repeat(num_epochs).batch(batch_size, drop_remainder=num_epochs is None)

    def to_features(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label
    return ds.map(to_features)


# --- Example records ---------------------------------------------------------------------
@tf_export("data.experimental.make_batched_features_dataset")
def make_batched_features_dataset(file_pattern, batch_size, features: dict,
                                  reader: Optional[Callable] = None,
                                  label_key: Optional[str] = None, reader_args=None,
                                  num_epochs=None, shuffle: bool = True,
                                  shuffle_buffer_size: int = 10000,
                                  shuffle_seed: Optional[int] = None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering: bool = False,
                                  drop_final_batch: bool = False) -> Dataset:
    """Batches of features parsed from files of serialized Examples: the files matching
    `file_pattern` (shuffled unless `shuffle=False`, else in sorted order) read by
    `reader` (default TFRecordDataset), `reader_num_threads` files at a time in turn,
    shuffled, repeated `num_epochs` times (None: forever), batched and parsed with
    `tf.io.parse_example(batch, features)`. With `label_key`, elements are (features,
    label) with the label taken out of the features.

    Args:
      file_pattern: a glob pattern or a list of file names.
      batch_size: examples per batch.
      features: a dict of FixedLenFeature, VarLenFeature, SparseFeature (the parse
        spec, e.g. from tf.feature_column.make_parse_example_spec).
      reader: a function of a file name (and `reader_args`) giving a dataset of records.
      label_key: a key of `features` to return apart.
      reader_args: more arguments for `reader`.
      num_epochs: how many times to read the files (None: forever).
      shuffle, shuffle_buffer_size, shuffle_seed: the shuffling of files and records.
      prefetch_buffer_size, parser_num_threads, sloppy_ordering: accepted; elements are
        made in order when asked for (see dataset_ops.py).
      reader_num_threads: files read in turn, one record from each (default 1).
      drop_final_batch: drop a last batch smaller than `batch_size` (always, as in TF,
        when `num_epochs` is None: the batches then have a static size).

    Returns:
      A Dataset of feature dicts, or of (features, label).

    Raises:
      ValueError: `label_key` not in `features`.
    """
    from tensorweave.ops.io.parsing_ops import parse_example
    if label_key is not None and label_key not in features:
        raise ValueError("The `label_key` provided (%s) must be one of the `features` "
                         "keys: %s." % (label_key, features.keys()))
    reader = reader or _files.TFRecordDataset
    extra = list(reader_args or [])
    files = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    records = files.interleave(lambda f: reader(f, *extra),
                               cycle_length=int(reader_num_threads or 1))
    if shuffle:
        records = records.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        records = records.repeat(num_epochs)
    batches = records.batch(batch_size,
                            drop_remainder=drop_final_batch or num_epochs is None)
    parsed = batches.map(lambda serialized: parse_example(serialized, features))
    if label_key is not None:
        def split_label(parsed_features):
            parsed_features = dict(parsed_features)
            return parsed_features, parsed_features.pop(label_key)
        parsed = parsed.map(split_label)
    return parsed


# --- SQL ---------------------------------------------------------------------------------
_kernels.dataset_op("SqlDataset", ["driver_name: string", "data_source_name: string",
                              "query: string"])


@tf_export("data.experimental.SqlDataset")
class SqlDataset(Dataset):
    """The rows of a SQL query on a SQLite database as tuples of `output_types`, read
    when an iterator reaches them (TF's SqlDataset: the query runs at each iterator
    initialization; integers narrower than 64 bits wrap as TF casts them).

    Args:
      driver_name: "sqlite", the only database TF supports.
      data_source_name: the database file.
      query: a SELECT whose columns match `output_types` one to one.
      output_types: a tuple of dtypes (string, integer, floating or bool columns).

    The run of get_next raises InvalidArgumentError for another driver or a column count
    that differs from `output_types`, UnknownError for a query SQLite rejects.
    """

    def __init__(self, driver_name, data_source_name, query, output_types):
        types = [_dt.as_dtype(t) for t in (output_types if isinstance(
            output_types, (tuple, list)) else (output_types,))]
        from tensorweave.framework.op_builder import apply_op
        op = apply_op("SqlDataset", [convert_to_tensor(v, _dt.string, name=n) for v, n in (
            (driver_name, "driver_name"), (data_source_name, "data_source_name"),
            (query, "query"))], _ds.spec_attrs(types, [TensorShape([])] * len(types)),
            name="SqlDataset")
        structure = tuple(range(len(types))) if isinstance(output_types, (tuple, list)) \
            else 0
        Dataset.__init__(self, op.outputs[0], structure, types,
                         [TensorShape([])] * len(types))


class _SqlRows(_pipe.DatasetValue):
    def __init__(self, op, driver: str, source: str, query: str, types):
        self.op, self.driver, self.source, self.query, self.types = \
            op, driver, source, query, types

    def elements(self, ctx):
        import sqlite3
        from tensorweave.framework import errors
        if self.driver != "sqlite":
            raise errors.InvalidArgumentError(None, self.op, (
                "The database type, %s, is not supported by SqlDataset. The set of "
                "supported databases is: {'sqlite'}." % self.driver))
        connection = sqlite3.connect(self.source)
        try:
            try:
                cursor = connection.execute(self.query)
            except sqlite3.Error as e:
                raise errors.UnknownError(None, self.op, "Prepare() failed: [1] %s: %s"
                                          % (e, self.query)) from None
            if len(cursor.description) != len(self.types):
                raise errors.InvalidArgumentError(None, self.op, (
                    "The number of columns in query (%d) must match the number of elements "
                    "in output_types (%d)." % (len(cursor.description), len(self.types))))
            for row in cursor:
                yield [_sql_value(v, t) for v, t in zip(row, self.types)]
        finally:
            connection.close()


def _sql_value(v, dtype: _dt.DType):
    if dtype == _dt.string:
        return np.array(v if isinstance(v, bytes) else str(v).encode(), dtype=object)
    if dtype == _dt.bool:
        return np.bool_(bool(v))
    if dtype.is_integer:  # read as a 64-bit integer, then narrowed as TF's cast does
        return np.array(int(v), np.int64).astype(dtype.as_numpy_dtype)
    return np.array(v, dtype.as_numpy_dtype)


@kernel("SqlDataset")
def _sql_kernel(ctx, driver, source, query):
    def text(x):
        x = np.asarray(x).reshape(()).item()
        return x.decode() if isinstance(x, bytes) else str(x)
    return _SqlRows(ctx.op, text(driver), text(source), text(query),
                    list(ctx.attrs["output_types"]))
