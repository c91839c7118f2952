"""What every summary builder and kernel shares: tag cleaning, the summary name scope
(`family`), collections, and the lazily imported `Summary` protocol buffer.

Tags follow TF1: a summary named "loss" built under the scope "train" gets the op name
and tag "train/loss"; with `family="fam"` the op is "fam/loss" and the tag
"fam/fam/loss", so TensorBoard shows it in the tab "fam". Characters other than
letters, digits, "_", "-", "/" and "." become "_" and leading slashes are dropped.
"""
from __future__ import annotations

import contextlib
import logging
import re
from typing import Iterator, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import GraphKeys, Tensor, name_scope

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")
_log = logging.getLogger("tensorflow")


def summary_pb2():
    """TensorBoard's `summary_pb2` module (imported on first use: it loads protobuf)."""
    from tensorboard.compat.proto import summary_pb2 as pb
    return pb


def clean_tag(name: Optional[str]) -> Optional[str]:
    """`name` with characters TensorBoard does not allow in tags replaced by "_" and
    leading slashes removed (logged at INFO when it changes)."""
    if name is None:
        return None
    new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if new_name != name:
        _log.info("Summary name %s is illegal; using %s instead.", name, new_name)
    return new_name


@contextlib.contextmanager
def summary_scope(name: str, family: Optional[str] = None, default_name: Optional[str] = None,
                  values: Optional[Sequence] = None) -> Iterator[Tuple[str, str]]:
    """Opens the name scope of one summary op and yields `(tag, scope)`: the op is named
    `scope` and its tag is the scope without its trailing slash, prefixed by `family`
    when one is given."""
    name = clean_tag(name)
    family = clean_tag(family)
    base = name if family is None else "%s/%s" % (family, name)
    with name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/")
        if family is not None:
            tag = "%s/%s" % (family, tag)
        yield tag, scope


def collect(value: Tensor, collections: Optional[Sequence[str]],
            default_collections: Sequence[str] = (GraphKeys.SUMMARIES,)) -> None:
    """Adds a summary tensor to `collections` (the default ones when None)."""
    if collections is None:
        collections = default_collections
    for key in collections:
        value.graph.add_to_collection(key, value)


def scalar_string(ctx, tensor: np.ndarray, message: str) -> str:
    """The text of a scalar string input of a summary kernel; `message` is TF's error
    for a non-scalar (the wording differs from op to op)."""
    if np.ndim(tensor) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, message)
    return as_text(np.asarray(tensor, dtype=object).item())


def as_text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def shape_str(shape) -> str:
    """A shape as TF's messages write it: "[2,3]"."""
    return "[%s]" % ",".join(str(d) for d in shape)


def serialized(summary) -> np.ndarray:
    """A Summary message as the scalar string tensor a summary op returns."""
    out = np.empty((), dtype=object)
    out[()] = summary.SerializeToString()
    return out
