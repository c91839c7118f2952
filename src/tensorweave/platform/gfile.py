"""`tf.gfile` and `tf.io.gfile`: TF1's file API over local files and fsspec URLs.

Local paths use builtin ``open`` and ``os`` (file_io.py); URLs such as ``memory://``,
``s3://`` or ``gs://`` go through whatever fsspec filesystem is installed for them.
Failures raise tf.errors as TensorFlow does: NotFoundError for a missing file,
PermissionDeniedError, AlreadyExistsError, FailedPreconditionError, UnimplementedError
for an unknown scheme.
"""
from __future__ import annotations

import os
from typing import Iterator, List, Tuple

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import file_io

_MODES = ("r", "w", "a", "r+", "w+", "a+")


def _errno_classes() -> dict:
    """errno -> tf.errors class, TF's mapping of POSIX errors to status codes."""
    import errno as e
    table = {
        errors.InvalidArgumentError: ("EINVAL", "ENAMETOOLONG", "E2BIG", "EDESTADDRREQ",
                                      "EDOM", "EFAULT", "EILSEQ", "ENOPROTOOPT", "ENOSTR",
                                      "ENOTSOCK", "ENOTTY", "EPROTOTYPE", "ESPIPE"),
        errors.DeadlineExceededError: ("ETIMEDOUT", "ETIME"),
        errors.NotFoundError: ("ENODEV", "ENOENT", "ENXIO", "ESRCH"),
        errors.AlreadyExistsError: ("EEXIST", "EADDRNOTAVAIL", "EALREADY"),
        errors.PermissionDeniedError: ("EPERM", "EACCES", "EROFS"),
        errors.FailedPreconditionError: ("ENOTEMPTY", "EPIPE", "EISDIR", "ENOTDIR", "EBADF",
                                         "EBUSY", "ECHILD", "EISCONN", "ENOTBLK",
                                         "ENOTCONN", "ESHUTDOWN", "ETXTBSY"),
        errors.ResourceExhaustedError: ("ENOSPC", "EMFILE", "EMLINK", "ENFILE", "ENOBUFS",
                                        "ENODATA", "ENOMEM", "ENOSR", "EUSERS", "EDQUOT"),
        errors.OutOfRangeError: ("EFBIG", "EOVERFLOW", "ERANGE"),
        errors.UnimplementedError: ("ENOSYS", "ENOTSUP", "EAFNOSUPPORT", "ENOEXEC",
                                    "EPFNOSUPPORT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT",
                                    "EXDEV"),
        errors.UnavailableError: ("EAGAIN", "ECONNREFUSED", "ECONNABORTED", "ECONNRESET",
                                  "EINTR", "EHOSTDOWN", "EHOSTUNREACH", "ENETDOWN",
                                  "ENETRESET", "ENETUNREACH", "ENOLCK", "ENOLINK", "ENONET"),
        errors.AbortedError: ("EDEADLK", "ESTALE"),
        errors.CancelledError: ("ECANCELED",),
    }
    return {getattr(e, name): cls for cls, names in table.items() for name in names
            if hasattr(e, name)}


_ERRNO_CLASSES = _errno_classes()
# for OSErrors that carry no errno (fsspec raises FileNotFoundError(path))
_OSERROR_CLASSES = ((FileNotFoundError, errors.NotFoundError),
                    (PermissionError, errors.PermissionDeniedError),
                    (FileExistsError, errors.AlreadyExistsError),
                    (NotADirectoryError, errors.FailedPreconditionError),
                    (IsADirectoryError, errors.FailedPreconditionError))


def os_error_to_tf(e: OSError, path, op=None) -> errors.OpError:
    """The tf.errors exception TF raises for the OSError `e` on `path`: the class by
    errno (TF's table), the message "<path>; <strerror>".

    Args:
      e: the OSError (an OpError is returned as it is).
      path: the path the operation was given.
      op: the Operation whose kernel failed, if any.
    """
    if isinstance(e, errors.OpError):
        return e
    cls = _ERRNO_CLASSES.get(e.errno)
    if cls is None:
        cls = next((c for py, c in _OSERROR_CLASSES if isinstance(e, py)), errors.UnknownError)
    reason = e.strerror or (os.strerror(e.errno) if e.errno else str(e))
    if e.errno is None and isinstance(e, FileNotFoundError):
        reason = "No such file or directory"
    return cls(None, op, "%s; %s" % (path, reason))


_tf_error = os_error_to_tf  # the short name this module uses


def _path(name) -> str:
    return file_io.fspath(name)


@tf_export("gfile.GFile", "gfile.Open", "io.gfile.GFile")
class GFile:
    """A file on a local disk or on any fsspec filesystem, opened on first use.

    Args:
      name: the path or URL.
      mode: "r", "w", "a" (text: reads return str, writes accept str or bytes), or the
        same with "b" (reads return bytes); "+" variants work on local files.

    Raises:
      InvalidArgumentError: for an unknown mode.
      NotFoundError etc.: on first use, when the file cannot be opened.
    """

    def __init__(self, name, mode: str = "r"):
        self.__name = _path(name)
        self.__mode = mode
        base = mode.replace("b", "")
        if base not in _MODES:
            raise errors.InvalidArgumentError(
                None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self.__binary = "b" in mode
        self.__raw_mode = base[0] + "b" + base[1:]
        self.__readable = base[0] == "r" or "+" in base
        self.__writable = base[0] != "r" or "+" in base
        self.__f = None

    @property
    def name(self) -> str:
        return self.__name

    @property
    def mode(self) -> str:
        return self.__mode

    def _handle(self):
        if self.__f is None:
            try:
                self.__f = file_io.open_file(self.__name, self.__raw_mode)
            except OSError as e:
                raise _tf_error(e, self.__name) from None
        return self.__f

    def _reader(self):
        if not self.__readable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
        return self._handle()

    def _writer(self):
        if not self.__writable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
        return self._handle()

    def _value(self, data: bytes):
        return data if self.__binary else data.decode("utf-8")

    def size(self) -> int:
        """The file's length in bytes."""
        if self.__f is not None and self.__writable:
            self.__f.flush()
        return Stat(self.__name).length

    def write(self, file_content) -> None:
        """Writes str (UTF-8 encoded) or bytes."""
        if isinstance(file_content, str):
            file_content = file_content.encode("utf-8")
        elif not isinstance(file_content, (bytes, bytearray, memoryview)):
            raise TypeError("Expected binary or unicode string, got %r" % (file_content,))
        f = self._writer()
        try:
            f.write(file_content)
        except OSError as e:
            raise _tf_error(e, self.__name) from None

    def _check_not_past_end(self, f) -> None:
        """TF's error for reading from a position past the end (after a seek there)."""
        if f.tell() > file_io.size_of(f):
            raise errors.OutOfRangeError(None, None, "reached end of file")

    def read(self, n: int = -1):
        """Reads `n` bytes (all that is left for n=-1); str in text mode.

        Raises:
          InvalidArgumentError: `n` is below -1.
          OutOfRangeError: the position is past the end of the file.
        """
        n = -1 if n is None else n
        if n < -1:
            raise errors.InvalidArgumentError(
                None, None, "Can't read a negative number of bytes: %d" % n)
        f = self._reader()
        try:
            data = f.read(n)
            if not data and n != 0:
                self._check_not_past_end(f)
        except OSError as e:
            raise _tf_error(e, self.__name) from None
        return self._value(data)

    def readline(self):
        """The next line, with its newline; empty at the end of the file. As TF's
        line reader, it drops every carriage return ("\\r") of the line.

        Raises:
          OutOfRangeError: the position is past the end of the file.
        """
        f = self._reader()
        line = f.readline()
        if not line:
            self._check_not_past_end(f)
        return self._value(line.replace(b"\r", b""))

    def readlines(self) -> list:
        """All remaining lines (as `readline` gives them)."""
        return list(iter(self.readline, self._value(b"")))

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def seek(self, offset=None, whence: int = 0, position=None) -> int:
        """Moves to `offset` (`position` is TF's deprecated name for it), counted from
        the start (whence=0), the current position (1) or the end (2)."""
        if position is not None:
            if offset is not None:
                raise ValueError("The `offset` and `position` arguments are aliases; "
                                 "give only one")
            offset = position
        if whence not in (0, 1, 2):
            raise errors.InvalidArgumentError(
                None, None, "Invalid whence argument: %s. Valid values are 0, 1, or 2."
                % whence)
        f = self._handle()
        offset = offset or 0
        target = offset + (f.tell() if whence == 1 else
                           file_io.size_of(f) if whence == 2 else 0)
        if target < 0:
            raise errors.InvalidArgumentError(
                None, None, "Seeking to a negative position: %d" % target)
        try:
            return f.seek(target)
        except OSError as e:
            raise _tf_error(e, self.__name) from None

    def tell(self) -> int:
        return self._handle().tell()

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return self.__readable

    def writable(self) -> bool:
        return self.__writable

    def flush(self) -> None:
        """Pushes buffered writes to the file."""
        if self.__f is not None:
            try:
                self.__f.flush()
            except OSError as e:
                raise _tf_error(e, self.__name) from None

    def close(self) -> None:
        """Flushes and closes; the next read or write opens the file again."""
        f, self.__f = self.__f, None
        if f is not None:
            try:
                f.close()
            except OSError as e:
                raise _tf_error(e, self.__name) from None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self):
        return "<GFile %r mode=%r>" % (self.__name, self.__mode)


@tf_export("gfile.FastGFile")
class FastGFile(GFile):
    """TF1's deprecated FastGFile: the same as GFile."""


class FileStatistics:
    """What Stat returns: `length` in bytes, `mtime_nsec`, `is_directory`."""

    def __init__(self, length: int = 0, mtime_nsec: int = 0, is_directory: bool = False):
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory

    def __repr__(self):
        return "FileStatistics(length=%d, mtime_nsec=%d, is_directory=%s)" % (
            self.length, self.mtime_nsec, self.is_directory)


@tf_export("gfile.Exists")
def Exists(filename) -> bool:
    """True when `filename` (a file or a directory) exists."""
    path = _path(filename)
    try:
        return file_io.exists(path)
    except OSError as e:
        raise _tf_error(e, path) from None


@tf_export("gfile.IsDirectory")
def IsDirectory(dirname) -> bool:
    """True when `dirname` is a directory (False when it does not exist)."""
    path = _path(dirname)
    try:
        return file_io.isdir(path)
    except OSError as e:
        raise _tf_error(e, path) from None


@tf_export("gfile.Glob")
def Glob(filename) -> List[str]:
    """The paths matching a pattern, or a list of patterns (``*``, ``?``, ``[...]``)."""
    patterns = [filename] if isinstance(filename, (str, bytes, os.PathLike)) else filename
    out: List[str] = []
    for pattern in patterns:
        path = _path(pattern)
        try:
            out.extend(file_io.glob(path))
        except OSError as e:
            raise _tf_error(e, path) from None
    return out


@tf_export("gfile.MakeDirs")
def MakeDirs(dirname) -> None:
    """Creates `dirname` and its missing parents; an existing directory is fine.

    Raises:
      FailedPreconditionError: a file is in the way.
    """
    path = _path(dirname)
    try:
        file_io.makedirs(path)
    except (FileExistsError, NotADirectoryError):
        raise errors.FailedPreconditionError(
            None, None, "%s is not a directory" % _file_in_the_way(path)) from None
    except OSError as e:
        raise _tf_error(e, path) from None


def _file_in_the_way(path: str) -> str:
    """The deepest existing ancestor of `path` (or `path` itself): the file that keeps
    MakeDirs from creating it, which TF's message names."""
    probe = path.rstrip("/") or path
    while not file_io.exists(probe):
        parent = os.path.dirname(probe)
        if parent in ("", probe):
            return path
        probe = parent
    return probe


@tf_export("gfile.MkDir")
def MkDir(dirname) -> None:
    """Creates one directory, whose parent must exist.

    Raises:
      NotFoundError: the parent does not exist.
    """
    path = _path(dirname)
    try:
        file_io.mkdir(path)
    except OSError as e:
        raise _tf_error(e, path) from None


@tf_export("gfile.ListDirectory")
def ListDirectory(dirname) -> List[str]:
    """The names of the entries of a directory (not `.` and `..`), in no set order.

    Raises:
      NotFoundError: `dirname` is not a directory.
    """
    path = _path(dirname)
    try:
        return file_io.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        raise errors.NotFoundError(None, None, "Could not find directory %s" % path
                                   ) from None
    except OSError as e:
        raise _tf_error(e, path) from None


@tf_export("gfile.Walk")
def Walk(top, in_order: bool = True) -> Iterator[Tuple[str, List[str], List[str]]]:
    """Yields (directory, subdirectory names, file names) for `top` and every directory
    below it; parents before children when `in_order`, else children first. Yields
    nothing when `top` is not a directory."""
    path = _path(top)
    try:
        yield from file_io.walk(path, topdown=in_order)
    except OSError as e:
        raise _tf_error(e, path) from None


@tf_export("io.gfile.walk")
def walk(top, topdown: bool = True, onerror=None):
    """tf.io.gfile.walk: Walk with `topdown`; `onerror(error)` is called with a
    tf.errors.OpError instead of raising it, when given, and with the NotFoundError of
    listing a `top` that is no directory (TF documents this; TF's own code then fails
    with an UnboundLocalError)."""
    if onerror is not None and not IsDirectory(top):
        try:
            ListDirectory(top)
        except errors.NotFoundError as e:
            onerror(e)
            return
    try:
        yield from Walk(top, in_order=topdown)
    except errors.OpError as e:
        if onerror is None:
            raise
        onerror(e)


@tf_export("gfile.Remove")
def Remove(filename) -> None:
    """Deletes a file.

    Raises:
      NotFoundError: it does not exist.
    """
    path = _path(filename)
    try:
        file_io.remove(path)
    except OSError as e:
        raise _tf_error(e, path) from None


@tf_export("gfile.DeleteRecursively")
def DeleteRecursively(dirname) -> None:
    """Deletes a directory and everything below it.

    Raises:
      NotFoundError: it does not exist.
    """
    path = _path(dirname)
    try:
        file_io.rmtree(path)
    except (FileNotFoundError, NotADirectoryError):  # "f/x" under a file f: not found
        raise errors.NotFoundError(None, None, "%s not found" % path) from None
    except OSError as e:
        raise _tf_error(e, path) from None


def _transfer(move_or_copy, source, target, overwrite: bool) -> None:
    """`move_or_copy(source, target)` (file_io.replace or file_io.copy) with TF's errors:
    AlreadyExistsError for an existing target unless `overwrite`, NotFoundError for a
    missing source."""
    old, new = _path(source), _path(target)
    try:
        if not overwrite and file_io.exists(new):
            raise errors.AlreadyExistsError(None, None, "file already exists")
        move_or_copy(old, new)
    except OSError as e:
        raise _tf_error(e, _failed_path(e, old, new)) from None


def _failed_path(e: OSError, source: str, target: str) -> str:
    """The path TF's message names for a failed copy or move: the target when the
    OSError is about it (its directory is missing), else the source."""
    named = e.filename if isinstance(e.filename, str) else None
    if named is not None and os.path.normpath(named) == os.path.normpath(target):
        return target
    return source


@tf_export("gfile.Rename")
def Rename(oldname, newname, overwrite: bool = False) -> None:
    """Moves `oldname` to `newname`.

    Raises:
      AlreadyExistsError: `newname` exists and `overwrite` is False.
      NotFoundError: `oldname` does not exist.
    """
    _transfer(file_io.replace, oldname, newname, overwrite)


@tf_export("gfile.Copy")
def Copy(oldpath, newpath, overwrite: bool = False) -> None:
    """Copies the file `oldpath` to `newpath`.

    Raises:
      AlreadyExistsError: `newpath` exists and `overwrite` is False.
      NotFoundError: `oldpath` does not exist.
    """
    _transfer(file_io.copy, oldpath, newpath, overwrite)


@tf_export("gfile.Stat")
def Stat(filename) -> FileStatistics:
    """A FileStatistics (length, mtime_nsec, is_directory) for `filename`.

    Raises:
      NotFoundError: it does not exist.
    """
    path = _path(filename)
    try:
        length, mtime, is_dir = file_io.stat(path)
    except OSError as e:
        raise _tf_error(e, path) from None
    return FileStatistics(length=length, mtime_nsec=mtime, is_directory=is_dir)


@tf_export("io.gfile.join")
def join(path, *paths) -> str:
    """Joins path components; URLs are joined with "/"."""
    return file_io.join(_path(path), *[_path(p) for p in paths])


@tf_export("io.gfile.get_registered_schemes")
def get_registered_schemes() -> List[str]:
    """The URL schemes a path may use: "" and "file" (local), "ram" (TF's in-memory
    file system), plus every scheme fsspec knows an implementation for (usable once its
    package is installed)."""
    import fsspec
    schemes = set(fsspec.available_protocols()) | set(file_io.SCHEME_ALIASES)
    return ["", "file"] + sorted(schemes - {"file", "local"})



# --- tf.io.gfile: the same operations under TF2's lower-case names and argument names ----
@tf_export("io.gfile.exists")
def exists(path) -> bool:
    """True when `path` (a file or a directory) exists."""
    return Exists(path)


@tf_export("io.gfile.isdir")
def isdir(path) -> bool:
    """True when `path` is a directory."""
    return IsDirectory(path)


@tf_export("io.gfile.glob")
def glob(pattern) -> List[str]:
    """The paths matching a pattern or a list of patterns."""
    return Glob(pattern)


@tf_export("io.gfile.makedirs")
def makedirs(path) -> None:
    """Creates `path` and its missing parents."""
    MakeDirs(path)


@tf_export("io.gfile.mkdir")
def mkdir(path) -> None:
    """Creates one directory, whose parent must exist."""
    MkDir(path)


@tf_export("io.gfile.listdir")
def listdir(path) -> List[str]:
    """The names of the entries of a directory."""
    return ListDirectory(path)


@tf_export("io.gfile.remove")
def remove(path) -> None:
    """Deletes a file."""
    Remove(path)


@tf_export("io.gfile.rmtree")
def rmtree(path) -> None:
    """Deletes a directory and everything below it."""
    DeleteRecursively(path)


@tf_export("io.gfile.rename")
def rename(src, dst, overwrite: bool = False) -> None:
    """Moves `src` to `dst` (AlreadyExistsError if it exists and not `overwrite`)."""
    Rename(src, dst, overwrite)


@tf_export("io.gfile.copy")
def copy(src, dst, overwrite: bool = False) -> None:
    """Copies `src` to `dst` (AlreadyExistsError if it exists and not `overwrite`)."""
    Copy(src, dst, overwrite)


@tf_export("io.gfile.stat")
def stat(path) -> FileStatistics:
    """A FileStatistics (length, mtime_nsec, is_directory) for `path`."""
    return Stat(path)
