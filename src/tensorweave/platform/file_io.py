"""File operations on local paths and on fsspec URLs, raising Python's own OSErrors.

The library's file I/O (checkpoints, checkpoint state files, TFRecord writers and readers)
goes through these functions, so any path a user can give `tf.gfile` works there too.
A local path (no ``scheme://``, or ``file://``) takes the fast path: builtin ``open`` and
``os``, exactly what the code did before. Any other URL (``memory://``, ``s3://``,
``gs://``, ...) is handed to fsspec, imported on first use; a scheme with no installed
fsspec filesystem raises UnimplementedError.

Errors stay Python's (FileNotFoundError, PermissionError, ...): fsspec raises the same
classes, so callers handle local and remote failures alike. `tf.gfile` (gfile.py)
translates them into tf.errors.
"""
from __future__ import annotations

import errno
import glob as _glob
import os
from typing import Iterator, List, Tuple

from tensorweave.framework import errors

_FILE_SCHEME = "file://"


def fspath(path) -> str:
    """`path` (str, bytes or os.PathLike) as a str."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode("utf-8")
    return path


def is_local(path: str) -> bool:
    """True for a plain local path or a ``file://`` URL."""
    return ("://" not in path and "::" not in path) or path.startswith(_FILE_SCHEME)


def _strip_scheme(path: str) -> str:
    return path[len(_FILE_SCHEME):] if path.startswith(_FILE_SCHEME) else path


def _local(path: str) -> str:
    """The OS path of a local path or file:// URL, cleaned lexically as TF cleans every
    local path it is given: "f/" is the file f, "x/../f" is f even when x does not
    exist, "a//b" is a/b."""
    path = _strip_scheme(path)
    return os.path.normpath(path) if path else path


# TF's own schemes that an fsspec filesystem serves under another name: TF's in-memory
# file system ("ram://") is fsspec's memory filesystem.
SCHEME_ALIASES = {"ram": "memory"}


def remote(path: str):
    """(fsspec filesystem, path inside it) for a URL.

    Raises:
      UnimplementedError: no fsspec filesystem is installed for the URL's scheme.
    """
    scheme = path.split("://", 1)[0]
    url = SCHEME_ALIASES[scheme] + path[len(scheme):] if scheme in SCHEME_ALIASES else path
    try:
        import fsspec
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError):
        raise errors.UnimplementedError(
            None, None, "File system scheme '%s' not implemented (file: '%s')"
            % (scheme, path)) from None


def isabs(path: str) -> bool:
    """A URL is absolute; a local path as os.path.isabs."""
    return os.path.isabs(path) if is_local(path) else True


def join(path: str, *paths: str) -> str:
    """`path` joined with `paths`, with "/" for remote (URL) paths."""
    if is_local(path):
        return os.path.join(path, *paths)
    out = path
    for p in paths:
        out = p if "://" in p else (out if out.endswith("/") else out + "/") + p
    return out


# --- files -------------------------------------------------------------------------------
def open_file(path: str, mode: str = "rb", buffering: int = -1):
    """A binary file object: builtin open for local paths, fs.open for URLs. `mode` is
    one of rb, wb, ab (plus "+" for local files)."""
    if is_local(path):
        return open(_local(path), mode, buffering=buffering)
    try:
        return _open_remote(path, mode)
    except OSError as e:
        raise _with_errno(e, path) from None


def _with_errno(e: OSError, path: str) -> OSError:
    """`e` with an errno (fsspec often raises FileNotFoundError(path) without one)."""
    if e.errno is not None:
        return e
    for cls, code in ((FileNotFoundError, errno.ENOENT), (PermissionError, errno.EACCES),
                      (FileExistsError, errno.EEXIST), (IsADirectoryError, errno.EISDIR),
                      (NotADirectoryError, errno.ENOTDIR)):
        if isinstance(e, cls):
            return cls(code, os.strerror(code), path)
    return e


def _open_remote(path: str, mode: str):
    if "+" in mode:
        raise errors.UnimplementedError(None, None, "Mode %r is not supported for %s: "
                                        "fsspec files are read-only or write-only"
                                        % (mode, path))
    fs, p = remote(path)
    if mode.startswith("a"):
        try:
            return fs.open(p, mode)
        except (NotImplementedError, ValueError):
            # The filesystem cannot append: rewrite the old contents, then append.
            old = fs.cat_file(p) if fs.isfile(p) else b""
            f = fs.open(p, "wb")
            f.write(old)
            return f
    return fs.open(p, mode)


def can_fsync(f) -> bool:
    """True when `f` is a local OS file (fsync applies)."""
    try:
        f.fileno()
        return True
    except (AttributeError, OSError, ValueError):
        return False


def size_of(f) -> int:
    """The length in bytes of the open binary file `f` (its position is kept)."""
    try:
        return os.fstat(f.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        pos = f.tell()
        end = f.seek(0, 2)
        f.seek(pos)
        return end


def read_bytes(path: str) -> bytes:
    """The whole content of the file `path`."""
    with open_file(path, "rb") as f:
        return f.read()


# --- queries -----------------------------------------------------------------------------
def _query(local, remote_method: str, doc: str):
    """A bool query of a path: `local(path)` on the local filesystem, the fsspec
    filesystem's `remote_method` on a remote one."""
    def query(path: str) -> bool:
        if is_local(path):
            return local(_local(path))
        fs, p = remote(path)
        return getattr(fs, remote_method)(p)
    query.__name__ = query.__qualname__ = remote_method
    query.__doc__ = doc
    return query


exists = _query(os.path.exists, "exists", "Whether `path` exists.")
isfile = _query(os.path.isfile, "isfile", "Whether `path` is a file.")
isdir = _query(os.path.isdir, "isdir", "Whether `path` is a directory.")


def parent_dir_usable(directory: str) -> bool:
    """Whether files can be created in `directory`: a local directory must exist; on a
    remote filesystem directories are mostly prefixes created with their first file, so
    only a file in the way makes it unusable."""
    if is_local(directory):
        return os.path.isdir(_local(directory) or ".")
    fs, p = remote(directory)
    return not fs.isfile(p)


def stat(path: str) -> Tuple[int, int, bool]:
    """(length in bytes, modification time in ns, is a directory). Raises
    FileNotFoundError when `path` does not exist."""
    if is_local(path):
        st = os.stat(_local(path))
        return st.st_size, st.st_mtime_ns, os.path.isdir(_local(path))
    fs, p = remote(path)
    info = fs.info(p)
    is_dir = info.get("type") == "directory"
    mtime_ns = 0
    if not is_dir:
        try:
            mtime_ns = int(fs.modified(p).timestamp() * 1e9)
        except (NotImplementedError, AttributeError, OSError, ValueError, TypeError):
            mtime_ns = 0
    return int(info.get("size") or 0), mtime_ns, is_dir


def listdir(path: str) -> List[str]:
    """Entry names in a directory (NotADirectoryError / FileNotFoundError otherwise)."""
    if is_local(path):
        return os.listdir(_local(path))
    fs, p = remote(path)
    if not fs.isdir(p):
        if fs.exists(p):
            raise NotADirectoryError(20, "Not a directory", path)
        raise FileNotFoundError(2, "No such file or directory", path)
    base = p.rstrip("/")
    names = []
    for entry in fs.ls(p, detail=False):
        entry = entry.rstrip("/")
        if entry != base:
            names.append(entry.rsplit("/", 1)[-1])
    return names


def glob(pattern: str) -> List[str]:
    """Paths matching `pattern` (``*``, ``?``, ``[...]``; hidden files included)."""
    if is_local(pattern):
        prefix = _FILE_SCHEME if pattern.startswith(_FILE_SCHEME) else ""
        local = _strip_scheme(pattern)   # matches keep the pattern's spelling, as in TF
        if not _has_wildcard(local):
            # TF looks the cleaned path up ("f/" is the file f) and answers as given
            return [pattern] if local and os.path.exists(_local(local)) else []
        if local.endswith("/") and not local.endswith("//"):
            # TF matches the last component without its slash: "d/*/" finds d's files
            # too, named without a trailing slash
            local = local[:-1]
        found = _glob.glob(local, include_hidden=True)
        if _matches_from_cwd(local):
            prefix += "./"
        return [prefix + f for f in found]
    fs, p = remote(pattern)
    found = fs.glob(p)
    if p and pattern.endswith(p):
        # Keep the caller's spelling of the URL ("memory://a/x", not "memory:///a/x").
        head = pattern[:len(pattern) - len(p)]
        return [head + f for f in found]
    return [fs.unstrip_protocol(f) for f in found]


def _has_wildcard(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _matches_from_cwd(pattern: str) -> bool:
    """Whether TF names the matches of a local `pattern` from "./": a relative pattern
    whose first component holds a wildcard (TF then searches from "." and joins it in
    front of every match)."""
    first_wildcard = min((i for i in map(pattern.find, "*?[") if i >= 0), default=-1)
    return first_wildcard >= 0 and os.path.dirname(pattern[:first_wildcard]) == ""


def walk(top: str, topdown: bool = True) -> Iterator[Tuple[str, List[str], List[str]]]:
    """(directory, subdirectory names, file names) for `top` and every directory below
    it; nothing when `top` is not a directory."""
    if is_local(top):
        yield from os.walk(_strip_scheme(top), topdown=topdown)  # top as given, as in TF
        return
    if not isdir(top):
        return
    subdirs, files = [], []
    for name in listdir(top):
        (subdirs if isdir(join(top, name)) else files).append(name)
    if topdown:
        yield top, subdirs, files
    for d in subdirs:
        yield from walk(join(top, d), topdown)
    if not topdown:
        yield top, subdirs, files


# --- changes -----------------------------------------------------------------------------
def makedirs(path: str) -> None:
    """Creates the directory `path` and its missing parents (no error if it exists)."""
    if is_local(path):
        os.makedirs(_local(path), exist_ok=True)
        return
    fs, p = remote(path)
    if fs.isfile(p):
        raise NotADirectoryError(20, "Not a directory", path)
    fs.makedirs(p, exist_ok=True)


def mkdir(path: str) -> None:
    """Creates one directory; its parent must exist; an existing directory is fine."""
    if is_local(path):
        try:
            os.mkdir(_local(path))
        except FileExistsError:
            if not os.path.isdir(_local(path)):
                raise
        return
    fs, p = remote(path)
    if fs.isdir(p):
        return
    parent = p.rstrip("/").rsplit("/", 1)[0]
    if parent and parent != p and not fs.isdir(parent) and fs.isfile(parent):
        raise NotADirectoryError(20, "Not a directory", path)
    fs.mkdir(p, create_parents=False)


def remove(path: str) -> None:
    """Deletes one file."""
    if is_local(path):
        os.remove(_local(path))
        return
    fs, p = remote(path)
    if not fs.isfile(p):
        if fs.isdir(p):
            raise IsADirectoryError(21, "Is a directory", path)
        raise FileNotFoundError(2, "No such file or directory", path)
    fs.rm_file(p)


def rmdir(path: str) -> None:
    """Deletes an empty directory."""
    if is_local(path):
        os.rmdir(_local(path) or ".")
        return
    fs, p = remote(path)
    fs.rmdir(p)


def rmtree(path: str) -> None:
    """Deletes a directory and everything below it (or one file)."""
    if is_local(path):
        path = _local(path)
        if os.path.isdir(path) and not os.path.islink(path):
            import shutil
            shutil.rmtree(path)
        else:
            os.remove(path)
        return
    fs, p = remote(path)
    if not fs.exists(p):
        raise FileNotFoundError(2, "No such file or directory", path)
    fs.rm(p, recursive=True)


def replace(src: str, dst: str) -> None:
    """Moves `src` to `dst`, replacing `dst` (atomic on a local filesystem)."""
    if is_local(src) and is_local(dst):
        os.replace(_local(src), _local(dst))
        return
    if is_local(src) != is_local(dst) or remote(src)[0] is not remote(dst)[0]:
        copy(src, dst)
        remove(src)
        return
    fs, p = remote(src)
    if not fs.exists(p):
        raise FileNotFoundError(2, "No such file or directory", src)
    fs.mv(p, remote(dst)[1], recursive=fs.isdir(p))


def copy(src: str, dst: str) -> None:
    """Copies the file `src` to `dst`, replacing it."""
    import shutil
    if is_local(src) and is_local(dst):
        shutil.copyfile(_local(src), _local(dst))
        return
    with open_file(src, "rb") as fin, open_file(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)
