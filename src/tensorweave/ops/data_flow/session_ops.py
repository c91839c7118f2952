"""Persistent tensors (TF1's `tf.get_session_handle` and friends): a value kept in the
session between runs and named by a handle string.

GetSessionHandle stores its input in the session's tensor store and returns the handle;
`Session.run` hands it back as a TensorHandle. GetSessionTensor reads a stored value
back by its handle, fed as a string placeholder; DeleteSessionTensor frees one. The store
belongs to the Session (`Session.session_tensors`) and is emptied when the session
closes; a TensorHandle that is garbage-collected frees its value too, as TF's do.
"""
from __future__ import annotations

import itertools
import threading
from typing import Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Graph, Operation, Tensor, colocate_with
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape

register_op("GetSessionHandle", inputs=["value: T"], outputs=["handle: string"],
            attrs={"T": TypeAttr()}, shape=lambda op: TensorShape([]), stateful=True)
register_op("GetSessionTensor", inputs=["handle: string"], outputs=["value: dtype"],
            attrs={"dtype": TypeAttr()}, shape=lambda op: unknown_shape(), stateful=True)
register_op("DeleteSessionTensor", inputs=["handle: string"], outputs=[],
            shape=lambda op: [], stateful=True)
for _t in ("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor"):
    not_differentiable(_t)

_IDS = itertools.count()


def _store(ctx):
    session = ctx.session
    store = getattr(session, "session_tensors", None)
    if store is None:
        raise errors.UnimplementedError(None, ctx.op, "Persistent tensors need a Session "
                                        "with a tensor store")
    return store


def _handle_string(value) -> str:
    v = value.item() if isinstance(value, np.ndarray) else value
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


@kernel("GetSessionHandle")
def _get_session_handle_kernel(ctx, value):
    handle = "%s;%d;%s" % (ctx.node_name, next(_IDS), ctx.device.name)
    _store(ctx).put(handle, value)
    return np.array(handle.encode("utf-8"), dtype=object)


@kernel("GetSessionTensor")
def _get_session_tensor_kernel(ctx, handle):
    value = _store(ctx).get(_handle_string(handle), ctx.op)
    want = _dt.as_dtype(ctx.attrs["dtype"])
    if _dt.as_dtype(value.dtype) != want:
        raise errors.InvalidArgumentError(
            None, ctx.op, "The tensor with handle '%s' has type %s, not %s"
            % (_handle_string(handle), _dt.as_dtype(value.dtype).name, want.name))
    return value


@kernel("DeleteSessionTensor")
def _delete_session_tensor_kernel(ctx, handle):
    _store(ctx).delete(_handle_string(handle), ctx.op)
    return ()


class SessionTensorStore:
    """The persistent tensors of one session: handle string -> value."""

    def __init__(self):
        self._values = {}
        self._lock = threading.Lock()

    def put(self, handle: str, value) -> None:
        with self._lock:
            self._values[handle] = value

    def get(self, handle: str, op=None):
        with self._lock:
            value = self._values.get(handle)
        if value is None:
            raise errors.InvalidArgumentError(
                None, op, "The tensor with handle '%s' is not in the session store." % handle)
        return value

    def delete(self, handle: str, op=None) -> None:
        with self._lock:
            if self._values.pop(handle, None) is None:
                raise errors.InvalidArgumentError(
                    None, op, "The tensor with handle '%s' is not in the session store."
                    % handle)

    def discard(self, handle: str) -> None:
        with self._lock:
            self._values.pop(handle, None)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)


# per graph (kept on the graph as `_session_tensor_readers`, so it goes with the graph):
# dtype -> (holder, reader) built once for TensorHandle.eval
_READERS_LOCK = threading.Lock()


def _reader(graph: Graph, dtype: _dt.DType) -> Tuple[Tensor, Tensor]:
    with _READERS_LOCK:
        readers = graph.__dict__.get("_session_tensor_readers")
        if readers is None:
            readers = graph._session_tensor_readers = {}
        if dtype not in readers:
            with graph.as_default(), graph.control_dependencies(None), \
                    graph.name_scope(None):
                readers[dtype] = get_session_tensor(None, dtype)
        return readers[dtype]


class TensorHandle:
    """A value kept in a session, returned by `Session.run` for a `get_session_handle`
    tensor. Feed it (or `.handle`) to the holder of `get_session_tensor`, or feed it in
    place of any tensor of its type."""

    def __init__(self, handle, dtype, session):
        self._handle = _handle_string(handle)
        self._dtype = _dt.as_dtype(dtype)
        self._session = session
        self._auto_gc_enabled = True

    @property
    def handle(self) -> str:
        """The handle string."""
        return self._handle

    def get_raw_handle(self) -> str:
        """The handle string (TF1's name for it)."""
        return self._handle

    def __str__(self) -> str:
        return self._handle

    def __repr__(self) -> str:
        return "<TensorHandle %s dtype=%s>" % (self._handle, self._dtype.name)

    def eval(self):
        """The stored value, read by running the session's reader for this dtype.

        Raises:
          TypeError: the handle was deleted.
        """
        if not self._auto_gc_enabled:
            raise TypeError("Persistent tensor %s may have already been deleted."
                            % self._handle)
        holder, reader = _reader(self._session.graph, self._dtype)
        return self._session.run(reader, feed_dict={holder: self._handle})

    def delete(self) -> None:
        """Frees the stored value.

        Raises:
          TypeError: the handle was already deleted.
        """
        if not self._auto_gc_enabled:
            raise TypeError("Persistent tensor %s may have already been deleted."
                            % self._handle)
        self._auto_gc_enabled = False
        self._session.session_tensors.discard(self._handle)

    def _tw_feed_value(self, dtype: _dt.DType):
        """What a feed of this handle means: the handle for a string tensor, the stored
        value for any other (the session's feed conversion calls this)."""
        if dtype == _dt.string:
            return self._handle.encode("utf-8")
        return self._session.session_tensors.get(self._handle)

    def __del__(self):
        if getattr(self, "_auto_gc_enabled", False):
            store = getattr(self._session, "session_tensors", None)
            if store is not None:
                store.discard(self._handle)


@tf_export("get_session_handle")
def get_session_handle(data, name: Optional[str] = None) -> Tensor:
    """Keeps the value of `data` in the session: running the result returns a
    TensorHandle.

    Args:
      data: a Tensor.
      name: op name.

    Returns:
      A scalar string Tensor; `Session.run` turns its value into a TensorHandle.

    Raises:
      TypeError: `data` is not a Tensor.
    """
    if not isinstance(data, Tensor):
        raise TypeError("`data` must be of type Tensor.")
    with colocate_with(data):
        return apply_op("GetSessionHandle", [data], name=name or "GetSessionHandle").outputs[0]


@tf_export("get_session_tensor")
def get_session_tensor(handle, dtype, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """A placeholder for a handle and the tensor it names.

    Args:
      handle: a handle string (only used to name where the value lives; may be None).
      dtype: the DType of the stored value.
      name: name of the GetSessionTensor op.

    Returns:
      (holder, tensor): feed the handle (or the TensorHandle) to `holder`; `tensor` is
      the stored value.
    """
    from tensorweave.ops.array import constant_op
    holder = constant_op.placeholder(_dt.string)
    tensor = apply_op("GetSessionTensor", [holder], {"dtype": _dt.as_dtype(dtype)},
                      name=name or "GetSessionTensor").outputs[0]
    return holder, tensor


@tf_export("delete_session_tensor")
def delete_session_tensor(handle, name: Optional[str] = None) -> Tuple[Tensor, Operation]:
    """A placeholder for a handle and the op freeing the value it names.

    Args:
      handle: a handle string (only used to name where the value lives; may be None).
      name: name of the DeleteSessionTensor op.

    Returns:
      (holder, deleter): run `deleter` feeding the handle to `holder`.
    """
    from tensorweave.ops.array import constant_op
    holder = constant_op.placeholder(_dt.string)
    deleter = apply_op("DeleteSessionTensor", [holder], name=name or "DeleteSessionTensor")
    return holder, deleter
