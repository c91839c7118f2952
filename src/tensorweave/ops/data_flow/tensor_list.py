"""The run-time value of a TensorList: the variant value TF 2.x's list ops pass around
(TF's `tensorflow::TensorList`), as TensorArrays inside functional control flow are
written.

A TensorList is immutable: every op that "changes" a list returns a new one sharing
the element arrays of its input (TF mutates a list only when it owns the only reference
to it, which is the same thing seen from outside). It holds:
  * `tensors`: a tuple with one array per element, or None for an element not set yet
    (TF's DT_INVALID tensor; Reserve and resizes make them). A read of such an element
    gives zeros of the element shape when that shape is known (list_ops.py). A list of
    variants holds the values themselves (TensorLists, optionals: scalars), not arrays.
  * `element_dtype`: the DType every element has.
  * `element_shape`: the partial shape every element must have: a tuple of ints and
    Nones, or None for an unknown rank.
  * `max_num_elements`: the most elements PushBack may make (-1: no limit).

Partial shapes travel as such tuples here (element_shapes.py, shared with TensorArrays).
"""
from __future__ import annotations

import numbers
from typing import Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.ops.data_flow.element_shapes import Dims, dims_str

__all__ = ["TensorList", "merge_dims", "shape_from_tensor", "get_list", "as_element",
           "element_dims"]


class TensorList:
    """One list of tensors (see the module docstring for the fields' invariants)."""

    __slots__ = ("tensors", "element_dtype", "element_shape", "max_num_elements")

    def __init__(self, tensors: Sequence, element_dtype: _dt.DType, element_shape: Dims,
                 max_num_elements: int = -1):
        self.tensors = tuple(tensors)
        self.element_dtype = element_dtype
        self.element_shape = element_shape
        self.max_num_elements = max_num_elements

    def __repr__(self):
        return "<TensorList of %d %s elements, element_shape %s>" % (
            len(self.tensors), self.element_dtype.name, dims_str(self.element_shape))

    def __len__(self):
        return len(self.tensors)

    def replace(self, tensors: Sequence) -> "TensorList":
        """A list like this one holding `tensors` instead."""
        return TensorList(tensors, self.element_dtype, self.element_shape,
                          self.max_num_elements)

    def zeros_like(self) -> "TensorList":
        """TF's ZerosLike of a list: zeros in place of every set element."""
        return self.replace(None if t is None else _zeros_like_element(t)
                            for t in self.tensors)

    def add(self, other: "TensorList", op) -> "TensorList":
        """TF's AddN of two lists (gradient aggregation): the element-wise sums, an
        element set in one list only taken as it is.

        Raises:
          InvalidArgumentError: the lists differ in dtype, element shape or length.
        """
        if not isinstance(other, TensorList):
            raise errors.InvalidArgumentError(None, op, "Trying to add a TensorList and "
                                              "%s" % type(other).__name__)
        if self.element_dtype is not other.element_dtype:
            raise errors.InvalidArgumentError(
                None, op, "Trying to add two lists of tensors of different dtypes. One is "
                "%s and the other is %s" % (_dt.type_string(self.element_dtype),
                                            _dt.type_string(other.element_dtype)))
        shape = merge_dims(self.element_shape, other.element_shape, op, prefix=(
            "Trying to add two lists of tensors with incompatible element shapes. One is "
            "%s and the other is %s" % (dims_str(self.element_shape),
                                        dims_str(other.element_shape))))
        if len(self) != len(other):
            raise errors.InvalidArgumentError(
                None, op, "Trying to add two lists of tensors with different lengths. One "
                "is %d and the other is %d" % (len(self), len(other)))
        sums = [_add_elements(a, b, op) for a, b in zip(self.tensors, other.tensors)]
        return TensorList(sums, self.element_dtype, shape, self.max_num_elements)


def _zeros_like_element(t):
    # a variant element (a TensorList) makes its own zeros, as for ZerosLike
    return np.zeros_like(t) if hasattr(t, "dtype") else t.zeros_like()


def _add_elements(a, b, op):
    if a is None:
        return b
    if b is None:
        return a
    if not hasattr(a, "dtype"):  # variants (TensorLists) add themselves, as for AddN
        return a.add(b, op)
    if a.shape != b.shape:
        raise errors.InvalidArgumentError(
            None, op, "Trying to add two tensors with incompatible element shapes. One is "
            "%s and the other is %s" % (dims_str(a.shape), dims_str(b.shape)))
    return a + b


def merge_dims(a: Dims, b: Dims, op, prefix: Optional[str] = None) -> Dims:
    """The merge of two partial shapes (TF's PartialTensorShape::MergeWith).

    Raises:
      InvalidArgumentError: they are incompatible; the message is `prefix` when given.
    """
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise errors.InvalidArgumentError(None, op, prefix or (
            "PartialTensorShape: Incompatible ranks during merge: %d vs. %d"
            % (len(a), len(b))))
    merged = []
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            raise errors.InvalidArgumentError(None, op, prefix or (
                "PartialTensorShape: Incompatible shapes during merge: %s vs. %s"
                % (dims_str(a), dims_str(b))))
        merged.append(y if x is None else x)
    return tuple(merged)


def shape_from_tensor(op, value) -> Dims:
    """The partial shape an `element_shape` input describes: -1 (a scalar) for an
    unknown rank, else a vector with -1 for each unknown dimension (TF's
    TensorShapeFromTensor).

    Raises:
      InvalidArgumentError: a scalar other than -1, or a tensor of rank above 1.
    """
    a = np.asarray(value)
    if a.ndim == 0:
        if int(a) == -1:
            return None
        raise errors.InvalidArgumentError(
            None, op, "The only valid scalar shape tensor is the fully unknown shape "
            "specified as -1.")
    if a.ndim != 1:
        raise errors.InvalidArgumentError(
            None, op, "Shape must be at most rank 1 but is rank %d" % a.ndim)
    dims = a.tolist()
    if any(d < -1 for d in dims):
        raise errors.InvalidArgumentError(
            None, op, "Dimension %d must be >= -1" % min(dims))
    return tuple(None if d == -1 else int(d) for d in dims)


def as_element(xp, value):
    """`value` as a list holds it: an array, or a variant value (a TensorList, an
    optional) as it is. TF's gradients keep variants in lists: a nested while loop's
    accumulators, the optionals of a cond's intermediates inside a loop."""
    if hasattr(value, "dtype") or isinstance(value, (numbers.Number, bytes, str, list, tuple)):
        return xp.asarray(value)
    return value


def element_dims(element) -> Tuple[int, ...]:
    """The shape of a list element (a variant element is a scalar)."""
    return tuple(element.shape) if hasattr(element, "shape") else ()


def get_list(op, value) -> TensorList:
    """The TensorList an input carries (TF's GetInputList).

    Raises:
      InvalidArgumentError: the input holds something else.
    """
    if type(value) is TensorList:
        return value
    if isinstance(value, np.ndarray) and value.ndim != 0:
        raise errors.InvalidArgumentError(None, op, "Input list must be a scalar saw: %s"
                                          % dims_str(value.shape))
    raise errors.InvalidArgumentError(None, op, "Input handle is not a list. Saw: '%s'"
                                      % (value,))
