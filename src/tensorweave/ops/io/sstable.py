"""The LevelDB table (SSTable) format of a TF tensor bundle's `.index` file.

A table is a sorted map from byte keys to byte values, stored as::

    data block 0 | data block 1 | ... | metaindex block | index block | footer (48 bytes)

* A *block* is a run of entries, then its restart array, then a 5-byte trailer. Each
  entry is ``varint32 shared | varint32 non_shared | varint32 value_length |
  key[shared:] | value``: its key shares its first `shared` bytes with the previous
  key of the block. Every `restart_interval` entries the key is stored whole
  (``shared == 0``) and the entry's offset goes into the restart array, which follows
  the entries as little-endian uint32s and then their count (uint32).
* The trailer is the compression type (1 byte: 0 none, 1 snappy) and the masked CRC32C
  of the block contents followed by that type byte (uint32, little-endian).
* The index block maps, for each data block, a key >= every key of the block and < every
  key of the next block to the block's *handle*: ``varint64 offset | varint64 size``
  (the size excludes the trailer). The metaindex block is empty here (no filters).
* The footer is the metaindex handle and the index handle, zero-padded to 40 bytes, then
  the magic number 0xdb4775248b80fb57 (uint64, little-endian).

Masked CRC32C (LevelDB's crc32c::Mask) is ``rotate_right(crc, 15) + 0xa282ead8``: TF
stores checksums masked so that a checksum of data holding checksums stays strong.

Reading verifies the magic number and every block's checksum and raises DataLossError
(naming the file) on any damage. Only uncompressed blocks are read: TF writes bundle
indexes uncompressed; a snappy block raises UnimplementedError.
"""
from __future__ import annotations

import struct
from typing import Iterable, List, Tuple

from tensorweave.framework import errors

MAGIC = 0xdb4775248b80fb57
FOOTER_SIZE = 48
BLOCK_TRAILER_SIZE = 5
NO_COMPRESSION = 0
SNAPPY_COMPRESSION = 1
_MASK_DELTA = 0xa282ead8


# --- checksums ---------------------------------------------------------------------------
def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC32C of `data`, continuing `crc` (google-crc32c, imported lazily)."""
    import google_crc32c
    return google_crc32c.extend(crc, bytes(data))


def mask_crc(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xffffffff


def unmask_crc(masked: int) -> int:
    rot = (masked - _MASK_DELTA) & 0xffffffff
    return ((rot >> 17) | (rot << 15)) & 0xffffffff


# --- varints -----------------------------------------------------------------------------
def put_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7f) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def get_varint(buf: bytes, pos: int, limit: int) -> Tuple[int, int]:
    """(value, position after it); ValueError if it runs past `limit`."""
    result = shift = 0
    while True:
        if pos >= limit or shift > 63:
            raise ValueError("bad varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7f) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


# --- reading -----------------------------------------------------------------------------
def _corrupt(path: str, what: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, "Corrupted table %s: %s" % (path, what))


def _handle(buf: bytes, pos: int, limit: int) -> Tuple[int, int, int]:
    offset, pos = get_varint(buf, pos, limit)
    size, pos = get_varint(buf, pos, limit)
    return offset, size, pos


def _block(data: bytes, offset: int, size: int, path: str) -> bytes:
    """The verified contents of the block at (offset, size)."""
    end = offset + size
    if end + BLOCK_TRAILER_SIZE > len(data):
        raise _corrupt(path, "block at offset %d runs past the end of the file" % offset)
    kind = data[end]
    stored = struct.unpack_from("<I", data, end + 1)[0]
    actual = crc32c(data[offset:end + 1])
    if unmask_crc(stored) != actual:
        raise errors.DataLossError(None, None, "Corrupted table %s: block checksum mismatch "
                                   "at offset %d" % (path, offset))
    if kind == SNAPPY_COMPRESSION:
        raise errors.UnimplementedError(None, None, "Table %s has a snappy-compressed block; "
                                        "tensorweave reads only uncompressed tables (TF "
                                        "writes checkpoint indexes uncompressed)" % path)
    if kind != NO_COMPRESSION:
        raise _corrupt(path, "unknown block compression type %d" % kind)
    return data[offset:end]


def _block_entries(block: bytes, path: str) -> List[Tuple[bytes, bytes]]:
    if len(block) < 4:
        raise _corrupt(path, "block too short")
    num_restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    limit = len(block) - 4 - 4 * num_restarts
    if limit < 0:
        raise _corrupt(path, "bad restart array")
    out, key, pos = [], b"", 0
    try:
        while pos < limit:
            shared, pos = get_varint(block, pos, limit)
            non_shared, pos = get_varint(block, pos, limit)
            value_len, pos = get_varint(block, pos, limit)
            if shared > len(key) or pos + non_shared + value_len > limit:
                raise ValueError("entry out of range")
            key = key[:shared] + block[pos:pos + non_shared]
            pos += non_shared
            out.append((key, block[pos:pos + value_len]))
            pos += value_len
    except ValueError as e:
        raise _corrupt(path, "bad block entry (%s)" % e) from None
    return out


def read_table(data: bytes, path: str) -> List[Tuple[bytes, bytes]]:
    """Every (key, value) of the table held in `data`, in key order.

    Raises:
      DataLossError: bad magic number, block checksum or structure, or unsorted keys.
      UnimplementedError: a compressed block.
    """
    if len(data) < FOOTER_SIZE:
        raise _corrupt(path, "file is too short (%d bytes) to be an sstable" % len(data))
    footer = len(data) - FOOTER_SIZE
    if struct.unpack_from("<Q", data, len(data) - 8)[0] != MAGIC:
        raise _corrupt(path, "not an sstable (bad magic number)")
    try:
        _, _, pos = _handle(data, footer, len(data) - 8)
        index_offset, index_size, _ = _handle(data, pos, len(data) - 8)
    except ValueError:
        raise _corrupt(path, "bad footer") from None
    out: List[Tuple[bytes, bytes]] = []
    for _, handle in _block_entries(_block(data, index_offset, index_size, path), path):
        try:
            offset, size, _ = _handle(handle, 0, len(handle))
        except ValueError:
            raise _corrupt(path, "bad block handle in the index block") from None
        out.extend(_block_entries(_block(data, offset, size, path), path))
    if any(a[0] >= b[0] for a, b in zip(out, out[1:])):
        raise _corrupt(path, "keys are not in increasing order")
    return out


# --- writing -----------------------------------------------------------------------------
class _BlockBuilder:
    def __init__(self, restart_interval: int):
        self.restart_interval = restart_interval
        self.buf = bytearray()
        self.restarts = [0]
        self.count = 0
        self.last_key = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.count % self.restart_interval == 0:
            if self.count:
                self.restarts.append(len(self.buf))
        else:
            limit = min(len(key), len(self.last_key))
            while shared < limit and key[shared] == self.last_key[shared]:
                shared += 1
        self.buf += put_varint(shared) + put_varint(len(key) - shared) + \
            put_varint(len(value)) + key[shared:] + value
        self.last_key = key
        self.count += 1

    def finish(self) -> bytes:
        return bytes(self.buf) + struct.pack("<%dI" % len(self.restarts), *self.restarts) + \
            struct.pack("<I", len(self.restarts))


def _separator(start: bytes, limit: bytes) -> bytes:
    """A short key k with start <= k < limit (LevelDB's bytewise FindShortestSeparator)."""
    n = 0
    while n < min(len(start), len(limit)) and start[n] == limit[n]:
        n += 1
    if n < min(len(start), len(limit)) and start[n] < 0xff and start[n] + 1 < limit[n]:
        return start[:n] + bytes([start[n] + 1])
    return start


def _successor(key: bytes) -> bytes:
    """A short key >= `key` (LevelDB's bytewise FindShortSuccessor)."""
    for i, b in enumerate(key):
        if b != 0xff:
            return key[:i] + bytes([b + 1])
    return key


def write_table(items: Iterable[Tuple[bytes, bytes]], block_size: int = 262144,
                restart_interval: int = 16) -> bytes:
    """The bytes of a table holding `items` (keys strictly increasing), uncompressed.

    Raises:
      ValueError: keys not strictly increasing.
    """
    out = bytearray()
    index = _BlockBuilder(1)

    def emit(contents: bytes) -> bytes:
        handle = put_varint(len(out)) + put_varint(len(contents))
        trailer = bytes([NO_COMPRESSION])
        out.extend(contents + trailer)
        out.extend(struct.pack("<I", mask_crc(crc32c(contents + trailer))))
        return handle

    block, last, pending = _BlockBuilder(restart_interval), None, None
    for key, value in items:
        if last is not None and key <= last:
            raise ValueError("Table keys must be strictly increasing: %r after %r"
                             % (key, last))
        if pending is not None:       # the index key of a full block waits for the next key
            index.add(_separator(last, key), pending)
            pending = None
        block.add(key, value)
        last = key
        if len(block.buf) >= block_size:
            pending = emit(block.finish())
            block = _BlockBuilder(restart_interval)
    if pending is not None:
        index.add(_successor(last), pending)
    if block.count or not index.count:
        index.add(_successor(last or b""), emit(block.finish()))
    meta_handle = emit(_BlockBuilder(1).finish())
    index_handle = emit(index.finish())
    footer = meta_handle + index_handle
    out.extend(footer + b"\0" * (FOOTER_SIZE - 8 - len(footer)))
    out.extend(struct.pack("<Q", MAGIC))
    return bytes(out)
