"""The TFRecord file format and tf.python_io.

A TFRecord file is a sequence of records, each laid out as

    uint64 length            little-endian
    uint32 masked_crc32c(length bytes)
    byte   data[length]
    uint32 masked_crc32c(data)

where masked_crc(c) = ((c >> 15) | (c << 17)) + 0xa282ead8 (mod 2**32). A file may be
compressed as a whole with ZLIB (zlib stream) or GZIP; record offsets then count bytes
of the uncompressed stream. Files are byte-for-byte interchangeable with TensorFlow's.

`RecordReader` is shared with the TFRecordReader op (reader_ops.py): files are read
through a buffered stream (chunks), never re-opened per record. CRC32C comes from
google-crc32c, imported on first use so `import tensorweave` stays fast.
"""
from __future__ import annotations

import errno
import functools
import io
import os
import struct
import zlib
from typing import Iterator, List, Optional, Tuple, Union

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import file_io

_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF
_HEADER = struct.Struct("<QI")   # length, masked crc of length
_CRC = struct.Struct("<I")
_LEN = struct.Struct("<Q")
_HEADER_SIZE = _HEADER.size      # 12
_FOOTER_SIZE = _CRC.size         # 4
_BUFFER_SIZE = 256 * 1024        # read/write chunk


# --- CRC32C -------------------------------------------------------------------------------
def _crc32c_fn():
    global _crc32c_value
    import google_crc32c  # lazy: keeps `import tensorweave` fast
    _crc32c_value = google_crc32c.value
    return _crc32c_value


_crc32c_value = None


def crc32c(data) -> int:
    """The (unmasked) CRC32C of `data` (bytes-like)."""
    fn = _crc32c_value or _crc32c_fn()
    return fn(data if isinstance(data, bytes) else bytes(data))


def mask_crc(crc: int) -> int:
    """TFRecord's masked form of a CRC32C value."""
    return ((((crc >> 15) | (crc << 17)) & _U32) + _MASK_DELTA) & _U32


def unmask_crc(masked: int) -> int:
    """Inverse of `mask_crc`."""
    rot = (masked - _MASK_DELTA) & _U32
    return ((rot >> 17) | (rot << 15)) & _U32


def masked_crc32c(data) -> int:
    """The masked CRC32C of `data`, as stored in TFRecord files."""
    return mask_crc(crc32c(data))


# --- options ------------------------------------------------------------------------------
@tf_export("io.TFRecordCompressionType", "python_io.TFRecordCompressionType")
class TFRecordCompressionType:
    """The type of compression for the record."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


@tf_export("io.TFRecordOptions", "python_io.TFRecordOptions")
class TFRecordOptions:
    """Options used for manipulating TFRecord files.

    Args:
      compression_type: "GZIP", "ZLIB", "" / None (no compression), or a
        `TFRecordCompressionType` value.
      flush_mode, input_buffer_size, output_buffer_size: zlib buffering knobs. They
        tune performance only; the bytes written do not depend on them here.
      window_bits: zlib window size log2 (8..15; default 15).
      compression_level: 0..9, or -1 for zlib's default.
      compression_method: only zlib.DEFLATED (8) exists.
      mem_level: zlib memory level 1..9 (default 9, as TensorFlow).
      compression_strategy: zlib strategy (default Z_DEFAULT_STRATEGY).

    Raises:
      ValueError: `compression_type` is not valid.
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        if compression_type is not None:
            _compression_string(compression_type)  # validates
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """The compression type string ("", "ZLIB" or "GZIP") of `options`, which may
        be a TFRecordOptions, a compression type value, a string or None."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        return _compression_string(options)


def _compression_string(value) -> str:
    if isinstance(value, int) and value in TFRecordOptions.compression_type_map:
        return TFRecordOptions.compression_type_map[value]
    if value in ("", "ZLIB", "GZIP"):
        return value
    raise ValueError('Not a valid compression_type: "%s"' % (value,))


def _options_of(options) -> TFRecordOptions:
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(TFRecordOptions.get_compression_type_string(options))


def _window_bits(compression: str, window_bits: Optional[int]) -> int:
    bits = zlib.MAX_WBITS if window_bits is None else int(window_bits)
    return bits + 16 if compression == "GZIP" else bits


# --- file errors --------------------------------------------------------------------------
def file_error(exc: OSError, path) -> errors.OpError:
    """The OpError TensorFlow raises for an OSError on `path` ("<path>; <reason>")."""
    if isinstance(path, bytes):
        path = path.decode("utf-8", "replace")
    cls = {errno.ENOENT: errors.NotFoundError, errno.EACCES: errors.PermissionDeniedError,
           errno.EPERM: errors.PermissionDeniedError, errno.EISDIR: errors.FailedPreconditionError,
           errno.ENOTDIR: errors.FailedPreconditionError,
           errno.ENOSPC: errors.ResourceExhaustedError}.get(exc.errno, errors.UnknownError)
    return cls(None, None, "%s; %s" % (path, exc.strerror or exc))


def _open(path, mode: str):
    """A binary file: builtin open for a local path, fsspec for a URL (tf.gfile's)."""
    try:
        name = os.fsdecode(path)
        if "://" not in name and "::" not in name:
            return open(path, mode, buffering=_BUFFER_SIZE)
        return file_io.open_file(name, mode, buffering=_BUFFER_SIZE)
    except OSError as e:
        raise file_error(e, path) from None


# --- reading ------------------------------------------------------------------------------
class _InflateStream(io.RawIOBase):
    """A raw stream of the decompressed bytes of a ZLIB or GZIP file (concatenated GZIP
    members included); wrap it in io.BufferedReader. Inflates at most one request's
    worth at a time, so memory stays bounded whatever the compression ratio.
    Corruption raises DataLossError."""

    def __init__(self, raw, wbits: int):
        self._raw = raw
        self._wbits = wbits
        self._z = zlib.decompressobj(wbits)
        self._input = b""     # compressed bytes not yet inflated
        self._done = False    # the compressed file is exhausted
        self._tail = b""      # inflated bytes left by the final flush

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        want = len(b)
        if self._tail:
            n = min(want, len(self._tail))
            b[:n] = self._tail[:n]
            self._tail = self._tail[n:]
            return n
        while want and not self._done:
            if self._z.eof:   # end of one stream: another gzip member may follow
                rest = self._z.unused_data or self._raw.read(_BUFFER_SIZE)
                if not rest:
                    self._done = True
                    break
                self._z = zlib.decompressobj(self._wbits)
                self._input = rest
            if not self._input:
                self._input = self._raw.read(_BUFFER_SIZE)
                if not self._input:   # cut short: what zlib holds is all there is
                    self._done = True
                    self._tail = self._call(self._z.flush)
                    return self.readinto(b) if self._tail else 0
            out = self._call(self._z.decompress, self._input, want)
            self._input = self._z.unconsumed_tail
            if out:
                b[:len(out)] = out
                return len(out)
        return 0

    @staticmethod
    def _call(fn, *args) -> bytes:
        try:
            return fn(*args)
        except zlib.error as e:
            raise errors.DataLossError(None, None, _inflate_message(e)) from None

    def close(self) -> None:
        self._raw.close()
        super().close()


def _inflate_message(e: zlib.error) -> str:
    # zlib says "Error -3 while decompressing data: incorrect header check"; TF says
    # "inflate() failed with error -3: incorrect header check".
    msg = str(e)
    if msg.startswith("Error ") and " while decompressing data: " in msg:
        code, _, reason = msg[len("Error "):].partition(" while decompressing data: ")
        return "inflate() failed with error %s: %s" % (code, reason)
    return "inflate() failed: %s" % msg


def open_input(path, compression: str = "", window_bits: Optional[int] = None):
    """A buffered binary stream of the (decompressed) contents of `path`.

    Raises:
      NotFoundError etc. (see `file_error`) if the file cannot be opened.
    """
    f = _open(path, "rb")
    if not compression:
        return f
    raw = _InflateStream(f, _window_bits(compression, window_bits))
    return io.BufferedReader(raw, buffer_size=_BUFFER_SIZE)


@functools.lru_cache(maxsize=64)
def _run_dtype(length: int):
    """One framed record of `length` data bytes as a packed NumPy record."""
    import numpy as np  # lazy: keeps `import tensorweave` fast
    fields = [("length", "<u8"), ("length_crc", "<u4")]
    if length:
        fields.append(("data", "V%d" % length))
    return np.dtype(fields + [("data_crc", "<u4")])


class RecordReader:
    """Reads the records of one TFRecord file in order; `offset` is the position (in
    the uncompressed stream) of the next record not framed yet.

    The file is read in chunks into `_buf` (unread bytes from `_pos`), and `read_many`
    frames whole runs of records with NumPy: a run of records of one length is a
    matrix of rows (length, length CRC, data, data CRC), so its lengths and stored CRCs
    are checked as columns and only the data CRCs are computed one record at a time
    (in C, through `map`). A run takes every record of one length the buffer holds,
    not only those a request asks for: the checked records it has not handed out wait
    in `_ahead` (so the NumPy work is paid once per chunk, not once per request). They
    are handed out first, by `read_many` and `read` alike, so records and errors come
    in file order as if read one by one. Anything irregular goes through `read`,
    record by record.
    """

    def __init__(self, path, compression: str = "", window_bits: Optional[int] = None):
        self._stream = open_input(path, compression, window_bits)
        self._buf = b""
        self._pos = 0
        self.offset = 0
        self._ahead: List[bytes] = []   # framed and checked records from _ahead_at on
        self._ahead_at = 0
        self._ahead_offset = 0          # the offset of _ahead[0]
        self._ahead_stride = 0          # all of them have one length

    def _fill(self, n: int) -> bool:
        """Makes `n` unread bytes available in `_buf` if the file has them."""
        have = len(self._buf) - self._pos
        if have >= n:
            return True
        parts = [memoryview(self._buf)[self._pos:]]  # copied once, by the join
        while have < n:
            chunk = self._stream.read(max(_BUFFER_SIZE, n - have))
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        self._buf = b"".join(parts)
        self._pos = 0
        return have >= n

    def _length(self) -> int:
        """The length in the header at `_pos` (12 bytes available), CRC-checked."""
        length, masked = _HEADER.unpack_from(self._buf, self._pos)
        crc = _crc32c_value or _crc32c_fn()
        if masked != mask_crc(crc(self._buf[self._pos:self._pos + 8])):
            offset = self.offset
            raise errors.DataLossError(None, None, "corrupted record at %d%s" % (
                offset, " (Is this even a TFRecord file?)" if offset == 0 else ""))
        return length

    def read(self) -> Optional[bytes]:
        """The next record, or None at the end of the file.

        Raises:
          DataLossError: a corrupted or truncated record (as TensorFlow: a header cut
            short at the end of the file is the end of the file; data cut short is not).
        """
        if self._ahead:
            record = self._ahead[self._ahead_at]
            self._hand_out(1, None, None)
            return record
        if not self._fill(_HEADER_SIZE):
            return None
        length = self._length()
        offset = self.offset
        if not self._fill(_HEADER_SIZE + length + _FOOTER_SIZE):
            raise errors.DataLossError(None, None, "truncated record at %d' failed with "
                                       "Read less bytes than requested" % offset)
        start = self._pos + _HEADER_SIZE
        data = self._buf[start:start + length]
        crc = _crc32c_value or _crc32c_fn()
        if _CRC.unpack_from(self._buf, start + length)[0] != mask_crc(crc(data)):
            raise errors.DataLossError(None, None, "corrupted record at %d"
                                       % (offset + _HEADER_SIZE))
        self._pos = start + length + _FOOTER_SIZE
        self.offset = offset + _HEADER_SIZE + length + _FOOTER_SIZE
        return data

    def read_many(self, limit: int) -> Tuple[List[int], List[bytes], bool]:
        """Up to `limit` records: (their offsets, the records, whether the file ended).

        Raises:
          DataLossError: as `read`, at the first bad record; the records before it are
            consumed (as reading them one by one would).
        """
        offsets: List[int] = []
        records: List[bytes] = []
        while len(records) < limit:
            if self._ahead:
                self._hand_out(limit - len(records), offsets, records)
                continue
            if not self._fill(_HEADER_SIZE):
                return offsets, records, True
            stride = self._length() + _HEADER_SIZE + _FOOTER_SIZE
            want = limit - len(records)
            self._fill(min(want, max(1, _BUFFER_SIZE // stride)) * stride)
            count = (len(self._buf) - self._pos) // stride
            if count > 1 and self._read_run(count, stride):
                continue
            record = self.read()  # one record, or the error of a bad one
            if record is None:
                return offsets, records, True
            offsets.append(self.offset - len(record) - _HEADER_SIZE - _FOOTER_SIZE)
            records.append(record)
        return offsets, records, False

    def _hand_out(self, n: int, offsets: Optional[list], records: Optional[list]) -> None:
        """Moves up to `n` records from `_ahead` to `records` and their offsets to
        `offsets` (None: drops them)."""
        at, stride = self._ahead_at, self._ahead_stride
        stop = min(at + n, len(self._ahead))
        if records is not None:
            records.extend(self._ahead[at:stop])
            first = self._ahead_offset + at * stride
            offsets.extend(range(first, first + (stop - at) * stride, stride))
        if stop == len(self._ahead):
            self._ahead, self._ahead_at = [], 0
        else:
            self._ahead_at = stop

    def _read_run(self, count: int, stride: int) -> int:
        """Frames the longest good prefix of `count` buffered records that share the
        first one's length into `_ahead` (empty before); returns how many (0: leave it
        to `read`)."""
        import numpy as np  # lazy: keeps `import tensorweave` fast
        pos = self._pos
        length = stride - _HEADER_SIZE - _FOOTER_SIZE
        rows = np.ndarray((count,), _run_dtype(length), self._buf, pos)  # a view
        good = np.flatnonzero(rows["length"] != length)
        count = int(good[0]) if len(good) else count
        header_crcs = rows["length_crc"][:count]
        good = np.flatnonzero(header_crcs != header_crcs[0])  # same length, same CRC
        count = int(good[0]) if len(good) else count
        # one bytes object per record, cut by NumPy in one call
        data = rows["data"][:count].tolist() if length else [b""] * count
        crcs = np.fromiter(map(_crc32c_value or _crc32c_fn(), data), np.uint32, count)
        masked = ((crcs >> np.uint32(15)) | (crcs << np.uint32(17))) + np.uint32(_MASK_DELTA)
        good = np.flatnonzero(masked != rows["data_crc"][:count])
        if len(good):
            count = int(good[0])
            del data[count:]
        self._ahead, self._ahead_at = data, 0
        self._ahead_offset, self._ahead_stride = self.offset, stride
        self._pos = pos + count * stride
        self.offset += count * stride
        return count

    def close(self) -> None:
        self._ahead, self._ahead_at = [], 0
        self._stream.close()


def _record_iterator(reader: RecordReader) -> Iterator[bytes]:
    try:
        while True:
            record = reader.read()
            if record is None:
                return
            yield record
    finally:
        reader.close()


@tf_export("io.tf_record_iterator", "python_io.tf_record_iterator")
def tf_record_iterator(path, options: Union[TFRecordOptions, str, int, None] = None
                       ) -> Iterator[bytes]:
    """An iterator that reads the records from a TFRecords file.

    Args:
      path: the path to the TFRecords file.
      options: (optional) a TFRecordOptions object or a compression type.

    Returns:
      An iterator of the serialized records (bytes).

    Raises:
      NotFoundError: `path` does not exist (raised at once).
      DataLossError: while iterating, a corrupted or truncated record.
    """
    opts = _options_of(options)
    compression = TFRecordOptions.get_compression_type_string(opts)
    return _record_iterator(RecordReader(path, compression, opts.window_bits))


# --- writing ------------------------------------------------------------------------------
def encode_record(data: bytes) -> bytes:
    """One record in TFRecord framing."""
    length = _LEN.pack(len(data))
    return b"".join((length, _CRC.pack(masked_crc32c(length)), data,
                     _CRC.pack(masked_crc32c(data))))


@tf_export("io.TFRecordWriter", "python_io.TFRecordWriter")
class TFRecordWriter:
    """A class to write records to a TFRecords file.

    Args:
      path: the path to the TFRecords file.
      options: (optional) a TFRecordOptions object or a compression type string.

    Raises:
      NotFoundError etc.: the file cannot be created.
      ValueError: `options` names an invalid compression type.
    """

    def __init__(self, path, options: Union[TFRecordOptions, str, int, None] = None):
        opts = _options_of(options)
        compression = TFRecordOptions.get_compression_type_string(opts)
        self._compressor = None
        if compression:
            level = -1 if opts.compression_level is None else opts.compression_level
            method = zlib.DEFLATED if opts.compression_method is None \
                else opts.compression_method
            mem = 9 if opts.mem_level is None else opts.mem_level
            strategy = zlib.Z_DEFAULT_STRATEGY if opts.compression_strategy is None \
                else opts.compression_strategy
            try:
                self._compressor = zlib.compressobj(
                    level, method, _window_bits(compression, opts.window_bits), mem, strategy)
            except (ValueError, zlib.error) as e:
                raise errors.InvalidArgumentError(
                    None, None, "Invalid zlib compression options: %s" % e) from None
        self._path = path
        self._file = _open(path, "wb")

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")

    def write(self, record: Union[bytes, str]) -> None:
        """Writes a serialized record (bytes; a str is written as UTF-8)."""
        self._check_open()
        if isinstance(record, str):
            record = record.encode("utf-8")
        data = encode_record(bytes(record))
        if self._compressor is not None:
            data = self._compressor.compress(data)
        self._write(data)

    def flush(self) -> None:
        """Flushes the file (compressed data up to a sync point, so readers see it)."""
        self._check_open()
        if self._compressor is not None:
            self._write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        try:
            self._file.flush()
        except OSError as e:
            raise file_error(e, self._path) from None

    def close(self) -> None:
        """Flushes and closes the file; closing twice is harmless."""
        if self._file is None:
            return
        f, compressor = self._file, self._compressor
        self._file = self._compressor = None
        try:
            if compressor is not None:
                data = compressor.flush(zlib.Z_FINISH)
                if data:
                    f.write(data)
            f.close()
        except OSError as e:
            f.close()
            raise file_error(e, self._path) from None

    def _write(self, data: bytes) -> None:
        if data:
            try:
                self._file.write(data)
            except OSError as e:
                raise file_error(e, self._path) from None
