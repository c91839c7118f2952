"""`tf.resource_loader`: paths of data files that sit beside a program's code.

TF resolves them in Bazel's runfiles tree when there is one; a Python program run from
a checkout or an installed package has none, and TF then uses the directory of the
calling file, as here.
"""
import os
import sys

from tensorweave.framework.api_export import tf_export


def _caller_dir(depth: int) -> str:
    return os.path.dirname(os.path.abspath(sys._getframe(depth + 1).f_code.co_filename))


@tf_export("resource_loader.get_data_files_path")
def get_data_files_path() -> str:
    """The directory of the file that calls this function."""
    return _caller_dir(1)


@tf_export("resource_loader.get_path_to_datafile")
def get_path_to_datafile(path: str) -> str:
    """`path` joined to the directory of the calling file.

    Args:
      path: a path relative to the caller's directory.

    Returns:
      The joined path (whether or not a file is there).
    """
    return os.path.join(_caller_dir(1), path)


@tf_export("resource_loader.load_resource")
def load_resource(path: str) -> bytes:
    """The bytes of the file at `path`, relative to the calling file's directory.

    Raises:
      IOError: the file is missing or cannot be read.
    """
    with open(os.path.join(_caller_dir(1), path), "rb") as f:
        return f.read()


@tf_export("resource_loader.get_root_dir_with_all_resources")
def get_root_dir_with_all_resources() -> str:
    """The directory just below a `.runfiles` directory above the caller (Bazel's
    layout), else the caller's own directory."""
    start = _caller_dir(1)
    below, current = None, start
    while True:
        if ".runfiles" in os.path.basename(current):
            return below or start
        parent = os.path.dirname(current)
        if parent == current:
            return start
        below, current = current, parent


@tf_export("resource_loader.readahead_file_path")
def readahead_file_path(path: str, readahead: str = "128M") -> str:
    """`path` itself: TF's readahead is not implemented there either."""
    return path
