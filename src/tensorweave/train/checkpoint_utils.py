"""Reading checkpoints from Python: `tf.train.load_checkpoint`, `NewCheckpointReader`,
`list_variables` and `load_variable` (TF1's checkpoint_utils and py_checkpoint_reader).

They read both checkpoint formats: tensorweave's own (ops/io/checkpoint_format.py) and
TensorFlow's V2 tensor bundles (ops/io/tensor_bundle.py), told apart by the contents of
`<prefix>.index`; a directory stands for its latest checkpoint (its `checkpoint` file).
"""
from __future__ import annotations

import os
from typing import Dict, List, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.io import tensor_bundle as _bundle
from tensorweave.platform import file_io
from tensorweave.train import checkpoint_management as _cm


class CheckpointReader:
    """TF's `tf.train.NewCheckpointReader` object: names, shapes, dtypes and values of
    the tensors of one checkpoint, in either format."""

    def __init__(self, filepattern: str):
        self._reader = _bundle.open_checkpoint(os.fspath(filepattern))

    def get_variable_to_shape_map(self) -> Dict[str, List[int]]:
        return self._reader.variable_to_shape_map()

    def get_variable_to_dtype_map(self) -> Dict[str, _dt.DType]:
        return self._reader.variable_to_dtype_map()

    def has_tensor(self, tensor_str: str) -> bool:
        return self._reader.has_tensor(tensor_str)

    def get_tensor(self, tensor_str: str) -> np.ndarray:
        """The value of tensor `tensor_str` (a NumPy scalar for a scalar).

        Raises:
          NotFoundError: no such tensor (close names are listed).
          DataLossError: its stored bytes fail their checksum.
        """
        value = self._reader.read(tensor_str)
        return value[()] if value.ndim == 0 else value

    def debug_string(self) -> bytes:
        """One line "<name> (<DT_ENUM>) [<dims>]" per stored tensor, as TF prints it."""
        if isinstance(self._reader, _bundle.BundleReader):
            return self._reader.debug_string()
        lines = ["%s (%s) [%s]\n" % (name, _enum_name(dtype),
                                     ",".join(str(d) for d in self._reader.shape(name)))
                 for name, dtype in sorted(self._reader.variable_to_dtype_map().items())]
        return "".join(lines).encode("utf-8")


def _enum_name(dtype: _dt.DType) -> str:
    from tensorboard.compat.proto import types_pb2
    return types_pb2.DataType.Name(dtype.as_datatype_enum)


@tf_export("train.NewCheckpointReader")
def NewCheckpointReader(filepattern: str) -> CheckpointReader:  # noqa: N802 - TF's name
    """A reader of the checkpoint `filepattern` (a prefix).

    Raises:
      NotFoundError: there is no checkpoint at `filepattern`.
      DataLossError: its index is damaged.
    """
    return CheckpointReader(filepattern)


def _checkpoint_prefix(ckpt_dir_or_file: str) -> str:
    ckpt_dir_or_file = os.fspath(ckpt_dir_or_file)
    if file_io.isdir(ckpt_dir_or_file):
        path = _cm.latest_checkpoint(ckpt_dir_or_file)
        if path is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given "
                             "directory %s" % ckpt_dir_or_file)
        return path
    return ckpt_dir_or_file


@tf_export("train.load_checkpoint")
def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader of the checkpoint `ckpt_dir_or_file` (a prefix, or a directory: its latest
    checkpoint).

    Raises:
      ValueError: a directory with no checkpoint.
      NotFoundError: no checkpoint at the prefix.
    """
    return CheckpointReader(_checkpoint_prefix(ckpt_dir_or_file))


@tf_export("train.load_variable")
def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The value of the variable `name` ("W" or "W:0") in the checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


@tf_export("train.list_variables")
def list_variables(ckpt_dir_or_file: str) -> List[Tuple[str, List[int]]]:
    """[(name, shape)] of the checkpoint's tensors, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(k, shapes[k]) for k in sorted(shapes)]
