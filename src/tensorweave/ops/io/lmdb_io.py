"""LMDB databases for tf.LMDBReader, through the `lmdb` package (py-lmdb), an optional
dependency: `pip install 'tensorweave[lmdb]'`.

A work unit names a database: its data file, or a directory holding `data.mdb` (TF's
rule: a regular file is opened as the data file itself). Databases are opened read-only
without a lock file, so a database on a read-only path or in use by a writer can be
read (TF 1.x needed a writable path for its lock file). TF 1.x stopped the whole
process on a missing or unreadable database; here the read fails with NotFoundError
(no such file) or DataLossError (not an LMDB database, or damaged), naming the path.
"""
from __future__ import annotations

import os
import stat
from typing import List, Tuple

from tensorweave.framework import errors
from tensorweave.ops.io import record_io

INSTALL_HINT = ("tf.LMDBReader needs the `lmdb` package (py-lmdb), an optional dependency "
                "of tensorweave: pip install 'tensorweave[lmdb]'")


def lmdb_module():
    """The `lmdb` module.

    Raises:
      UnimplementedError: the package is not installed (naming the extra to install).
    """
    try:
        import lmdb
    except ImportError:
        raise errors.UnimplementedError(None, None, INSTALL_HINT) from None
    return lmdb


def _data_error(path: bytes, exc: Exception) -> errors.OpError:
    """DataLossError for an error of the lmdb package on `path` (its message names it)."""
    text = str(exc)
    name = os.fsdecode(path)
    return errors.DataLossError(None, None, text if name in text else
                                "%s; %s" % (name, text))


class Database:
    """One LMDB database open for reading: its records in key order, from the first.

    Args:
      path: the data file, or a directory holding data.mdb.

    Raises:
      NotFoundError (and the other errors of record_io.file_error): `path` is missing.
      DataLossError: it is not an LMDB database.
      UnimplementedError: the lmdb package is not installed.
    """

    def __init__(self, path: bytes):
        lmdb = lmdb_module()
        self._path = path
        try:
            is_file = stat.S_ISREG(os.stat(path).st_mode)
        except OSError as e:
            raise record_io.file_error(e, path) from None
        try:
            self._env = lmdb.open(os.fsdecode(path), subdir=not is_file, readonly=True,
                                  lock=False, max_dbs=0)
        except lmdb.Error as e:
            if not is_file and not os.path.exists(os.path.join(path, b"data.mdb")):
                raise errors.NotFoundError(None, None, "%s; No LMDB data.mdb in this "
                                           "directory" % os.fsdecode(path)) from None
            raise _data_error(path, e) from None
        self._txn = self._env.begin(buffers=False)
        self._cursor = self._txn.cursor()
        self._started = False  # whether the cursor has been placed on the first record

    def read(self, limit: int) -> Tuple[List[bytes], List[bytes], bool]:
        """The next `limit` records (fewer at the end) and whether the end is reached.

        Raises:
          DataLossError: the database is damaged.
        """
        lmdb = lmdb_module()
        keys, values = [], []
        try:
            for _ in range(limit):
                found = self._cursor.next() if self._started else self._cursor.first()
                self._started = True
                if not found:
                    return keys, values, True
                keys.append(self._cursor.key())
                values.append(self._cursor.value())
        except lmdb.Error as e:
            raise _data_error(self._path, e) from None
        return keys, values, False

    def close(self) -> None:
        self._cursor.close()
        self._txn.abort()
        self._env.close()
