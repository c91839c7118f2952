"""Messages between a process and the input worker processes it started (input_processes.py
and input_worker.py): a JSON header and arrays, over a pair of pipes. Nothing is pickled.

A message: uint32 length of the UTF-8 JSON header, the header, then the data of each array
the header lists under "arrays" ({"dtype": wire code, "shape": [...]}, plus "nbytes" for
strings). A numeric array's data is its bytes in C order, read straight into a new array
(so the receiver owns it and no copy is made on the way to a queue). A string array's
data is a uint32 length per element, then the elements' bytes.
"""
from __future__ import annotations

import json
import struct
import threading
from typing import List, Optional, Tuple

import numpy as np

from tensorweave.distribute import wire

_U32 = struct.Struct("<I")


class ChannelClosed(EOFError):
    """The other end of the channel is gone."""


class Channel:
    """One end of a two-way message channel over binary file objects (unbuffered pipes).

    `send` may be called from several threads (it holds a lock for one message); `recv`
    from one thread at a time.
    """

    def __init__(self, reader, writer):
        self._reader, self._writer = reader, writer
        self._send_lock = threading.Lock()

    # --- sending ------------------------------------------------------------------------
    def send(self, meta: dict, arrays: Optional[List[np.ndarray]] = None) -> None:
        """Sends `meta` (a JSON object) and `arrays`.

        Raises:
          ChannelClosed: the receiving end is gone.
        """
        parts: list = []
        specs = []
        for a in arrays or ():
            a = np.asarray(a)
            spec = {"dtype": wire.dtype_code(a.dtype), "shape": list(a.shape)}
            if a.dtype.kind in "OSU":
                items = [s.encode() if isinstance(s, str) else bytes(s)
                         for s in a.reshape(-1)]
                parts.append(np.array([len(b) for b in items], dtype="<u4").tobytes())
                data = b"".join(items)
                spec["nbytes"] = len(data)
                parts.append(data)
            else:
                parts.append(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
            specs.append(spec)
        if specs:
            meta = dict(meta, arrays=specs)
        head = json.dumps(meta, separators=(",", ":")).encode()
        with self._send_lock:
            try:
                self._write(_U32.pack(len(head)) + head)
                for p in parts:
                    self._write(p)
            except (BrokenPipeError, ValueError, OSError) as e:
                raise ChannelClosed(str(e)) from None

    def _write(self, data) -> None:
        view = memoryview(data).cast("B")
        while view.nbytes:
            n = self._writer.write(view)
            view = view[n:]

    # --- receiving ----------------------------------------------------------------------
    def recv(self) -> Tuple[dict, List[np.ndarray]]:
        """The next message: (header, arrays); arrays are read-only and own their data.

        Raises:
          ChannelClosed: the sending end is gone.
        """
        (n,) = _U32.unpack(self._read(4))
        meta = json.loads(self._read(n))
        arrays = []
        for spec in meta.pop("arrays", ()):
            shape = tuple(spec["shape"])
            dtype = wire.code_dtype(spec["dtype"])
            count = int(np.prod(shape, dtype=np.int64))
            if dtype.kind == "O":
                lengths = np.frombuffer(self._read(4 * count), dtype="<u4")
                data = self._read(spec["nbytes"])
                out = np.empty(count, dtype=object)
                pos = 0
                for i, k in enumerate(lengths.tolist()):
                    out[i] = data[pos:pos + k]
                    pos += k
                out = out.reshape(shape)
            else:
                out = np.empty(shape, dtype=dtype)
                self._read_into(memoryview(out.reshape(-1).view(np.uint8)))
            out.setflags(write=False)
            arrays.append(out)
        return meta, arrays

    def _read(self, n: int) -> bytes:
        buf = bytearray(n)
        self._read_into(memoryview(buf))
        return bytes(buf)

    def _read_into(self, view: memoryview) -> None:
        while view.nbytes:
            try:
                k = self._reader.readinto(view)
            except (ValueError, OSError) as e:
                raise ChannelClosed(str(e)) from None
            if not k:
                raise ChannelClosed("the other process closed the channel")
            view = view[k:]

    def close(self) -> None:
        for f in (self._writer, self._reader):
            try:
                f.close()
            except OSError:
                pass
