"""`tf.keras.utils.get_file`: a file from a URL, cached under the Keras directory, as TF
2.15's Keras has it (keras/utils/data_utils.py): the cache is `cache_dir` (default
`~/.keras`, which Keras' import creates), or `/tmp/.keras` when that directory is not
writable (or does not exist); the file lands in its `cache_subdir` ('datasets'); a
cached file is downloaded again only when a given hash does not match; a download is
checked against the hash (md5, or sha256 for a 64-digit hash); tar (gz, bz2) and zip
archives are extracted next to the file, tar members that would land outside it
skipped. Downloads go through urllib (http, https, ftp, file URLs).
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from typing import Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.keras.progbar import Progbar

_CHUNK_SIZE = 65535


def _resolve_hasher(algorithm: str, file_hash: Optional[str] = None):
    """A hashlib object: sha256 when asked for, or for 'auto' with a 64-digit hash;
    md5 otherwise (as Keras)."""
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm == "auto" and file_hash is not None and len(file_hash) == 64:
        return hashlib.sha256()
    return hashlib.md5()


def _hash_file(fpath: str, algorithm="sha256", chunk_size: int = _CHUNK_SIZE) -> str:
    """The hex digest of the file at `fpath` (`algorithm` a name or a hashlib object)."""
    hasher = _resolve_hasher(algorithm) if isinstance(algorithm, str) else algorithm
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath: str, file_hash: str, algorithm: str = "auto",
                  chunk_size: int = _CHUNK_SIZE) -> bool:
    """Whether the file at `fpath` has the md5 or sha256 hash `file_hash`.

    Args:
      fpath: the file.
      file_hash: the expected hex digest.
      algorithm: 'md5', 'sha256' or 'auto' (sha256 for a 64-digit hash, else md5).
      chunk_size: bytes read at a time.

    Returns:
      True when the digests are equal.
    """
    hasher = _resolve_hasher(algorithm, file_hash)
    return str(_hash_file(fpath, hasher, chunk_size)) == str(file_hash)


def _resolved(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _safe_tar_members(archive: tarfile.TarFile, base: str):
    """The members of `archive` that stay inside `base` once extracted (links too);
    the others are skipped with a warning, as Keras does."""
    def inside(path: str, directory: str) -> bool:
        return _resolved(os.path.join(directory, path)).startswith(base)

    for info in archive:
        if inside(info.name, base):
            yield info
        elif (info.issym() or info.islnk()) and inside(
                info.linkname, _resolved(os.path.join(base, os.path.dirname(info.name)))):
            yield info
        else:
            warnings.warn("Skipping invalid path during archive extraction: '%s'."
                          % info.name)


def _extract_archive(file_path: str, path: str = ".", archive_format="auto") -> bool:
    """Extracts a tar (also gz/bz2/xz) or zip archive into `path`.

    Args:
      file_path: the archive.
      path: the directory to extract into.
      archive_format: 'auto' (['tar', 'zip']), 'tar', 'zip', a list of those, or None
        (nothing matches).

    Returns:
      True when a format matched and the archive was extracted.

    Raises:
      ValueError: a format other than 'tar' and 'zip' (Keras fails there with an
        UnboundLocalError).
    """
    if archive_format is None:
        return False
    if archive_format == "auto":
        archive_format = ["tar", "zip"]
    if isinstance(archive_format, str):
        archive_format = [archive_format]
    file_path, path = os.fspath(file_path), os.fspath(path)
    for kind in archive_format:
        if kind == "tar":
            is_match, open_archive = tarfile.is_tarfile, tarfile.open
        elif kind == "zip":
            is_match, open_archive = zipfile.is_zipfile, zipfile.ZipFile
        else:
            raise ValueError("Unknown archive format %r: expected 'tar' or 'zip'" % (kind,))
        if not is_match(file_path):
            continue
        with open_archive(file_path) as archive:
            try:
                if zipfile.is_zipfile(file_path):
                    archive.extractall(path)
                else:
                    # Keras checks members against the working directory it resolves;
                    # the directory extracted into is the one that matters.
                    members = _safe_tar_members(archive, _resolved(path))
                    # Python >= 3.12 warns without an explicit filter; the members are
                    # already checked, as Keras (on older Pythons) extracts them.
                    extra = {"filter": "fully_trusted"} if hasattr(tarfile,
                                                                 "data_filter") else {}
                    archive.extractall(path, members=members, **extra)
            except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
                if os.path.exists(path):
                    if os.path.isfile(path):
                        os.remove(path)
                    else:
                        shutil.rmtree(path)
                raise
        return True
    return False


class _DownloadProgress:
    """The progress bar of a download (urlretrieve's report hook), in bytes."""

    def __init__(self):
        self.progbar = None
        self.finished = False

    def __call__(self, block_num: int, block_size: int, total_size: int) -> None:
        current = block_num * block_size
        if total_size is None or total_size <= 0:
            return
        if self.progbar is None:
            self.progbar = Progbar(total_size, 1, (), "step")
        if current < total_size:
            self.progbar.update(current, (), False)
        elif not self.finished:
            self.progbar.update(total_size, (), True)
            self.finished = True


def _default_cache_dir() -> str:
    """~/.keras, created when missing and KERAS_HOME is unset (Keras' import creates its
    directory, KERAS_HOME or ~/.keras, while get_file always reads ~/.keras)."""
    cache_dir = os.path.join(os.path.expanduser("~"), ".keras")
    if "KERAS_HOME" not in os.environ:
        try:
            os.makedirs(cache_dir, exist_ok=True)
        except OSError:
            pass
    return cache_dir


@tf_export("keras.utils.get_file")
def get_file(fname: Optional[str] = None, origin: Optional[str] = None, untar: bool = False,
             md5_hash: Optional[str] = None, file_hash: Optional[str] = None,
             cache_subdir: str = "datasets", hash_algorithm: str = "auto",
             extract: bool = False, archive_format="auto",
             cache_dir: Optional[str] = None) -> str:
    """Downloads a file from a URL if it is not already in the cache.

    The file at `origin` is stored as `cache_dir/cache_subdir/fname` (by default
    `~/.keras/datasets/fname`); an absolute `fname` or `cache_subdir` is used as it is.

    Args:
      fname: the file's name (None: the last part of the URL's path).
      origin: the URL.
      untar: deprecated for `extract`: the file is `fname + '.tar.gz'`, extracted into
        the cache directory, and the path returned is `fname` without that suffix.
      md5_hash: deprecated for `file_hash`: an md5 hex digest.
      file_hash: the expected hex digest of the file (md5 or sha256).
      cache_subdir: the subdirectory of the cache directory.
      hash_algorithm: 'md5', 'sha256' or 'auto' (by the length of `file_hash`).
      extract: whether to extract the file as a tar or zip archive.
      archive_format: 'auto', 'tar', 'zip', a list of those, or None.
      cache_dir: the cache directory (default `~/.keras`).

    Returns:
      The path of the downloaded (or cached) file.

    Raises:
      ValueError: no `origin`; no file name in the URL; a downloaded file whose hash
        does not match.
      Exception: 'URL fetch failure on ...' when the download fails.
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to '
                         'download).')
    if cache_dir is None:
        cache_dir = _default_cache_dir()
    if md5_hash is not None and file_hash is None:
        file_hash = md5_hash
        hash_algorithm = "md5"
    datadir_base = os.path.expanduser(cache_dir)
    if not os.access(datadir_base, os.W_OK):
        datadir_base = os.path.join("/tmp", ".keras")
    datadir = os.path.join(datadir_base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)

    fname = os.fspath(fname) if fname is not None else None
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError("Can't parse the file name from the origin provided: '%s'."
                             "Please specify the `fname` as the input param." % origin)
    if untar:
        if fname.endswith(".tar.gz"):
            fname = str(pathlib.Path(fname).with_suffix("").with_suffix(""))
        untar_fpath = os.path.join(datadir, fname)
        fpath = untar_fpath + ".tar.gz"
    else:
        fpath = os.path.join(datadir, fname)

    download = not os.path.exists(fpath)
    if not download and file_hash is not None and not validate_file(
            fpath, file_hash, algorithm=hash_algorithm):
        print("A local file was found, but it seems to be incomplete or outdated because "
              "the %s file hash does not match the original value of %s so we will "
              "re-download the data." % (hash_algorithm, file_hash))
        download = True
    if download:
        _download(origin, fpath)
        if os.path.exists(fpath) and file_hash is not None and not validate_file(
                fpath, file_hash, algorithm=hash_algorithm):
            raise ValueError("Incomplete or corrupted file detected. The %s file hash does "
                             "not match the provided value of %s." % (hash_algorithm,
                                                                     file_hash))
    if untar:
        if not os.path.exists(untar_fpath):
            _extract_archive(fpath, datadir, archive_format="tar")
        return untar_fpath
    if extract:
        _extract_archive(fpath, datadir, archive_format)
    return fpath


def _download(origin: str, fpath: str) -> None:
    """Fetches `origin` into `fpath`; a partial file is removed on failure."""
    print("Downloading data from %s" % origin)
    sys.stdout.flush()
    message = "URL fetch failure on {}: {} -- {}"
    try:
        try:
            urllib.request.urlretrieve(origin, fpath, _DownloadProgress())
        except urllib.error.HTTPError as e:
            raise Exception(message.format(origin, e.code, e.msg))
        except urllib.error.URLError as e:
            raise Exception(message.format(origin, e.errno, e.reason))
    except (Exception, KeyboardInterrupt):
        if os.path.exists(fpath):
            os.remove(fpath)
        raise
