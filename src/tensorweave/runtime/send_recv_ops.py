"""The `_Send` and `_Recv` ops that partitioning puts on cross-device edges (OSDI §3.3).

They are never built by users: runtime/partition.py inserts them into the per-device
step graphs, with TF's attrs (tensor_type, tensor_name, send_device,
send_device_incarnation, recv_device, client_terminated). Both kernels are asynchronous
so that they receive the step's state: the partitioned plan runs its partitions with a
`TransferStepState`, whose `rendezvous` is the step's Rendezvous, and the node's
`TransferOp` carries the rendezvous key (computed once, when partitioning).

`_Send` hands its input to the rendezvous and finishes at once; `_Recv` finishes when
the value arrives, or with the rendezvous's error when the step is aborted. Between CPU
devices the value is passed by reference; a Recv on or from another device type copies
it through host memory (`TransferOp.copy`, the devices' copy_to_host/copy_from_host). A dead value
travels as `is_dead` (EuroSys §4.4), so a Recv on an untaken branch finishes dead.

Lossy transfer compression (white paper §5.5), off by default: with
`ConfigProto(experimental={'transfer_compression': 'bfloat16'})` (or 'float16'),
partitioning marks each cross-device pair carrying a float32 tensor with a
`_transfer_dtype` attr; that `_Send` narrows the value to the 16-bit type
(`TransferOp.narrow`) and the `_Recv` widens it back to float32 on arrival (composed into
`TransferOp.copy`). Other dtypes, dead values and control edges are untouched. bfloat16
keeps float32's range and 8 significant bits (relative error <= 2**-8); float16 keeps
11 bits (relative error <= 2**-11) within its normal range (6.1e-5 <= |x| <= 65504;
|x| >= 65520 becomes inf, |x| <= 2**-25 becomes 0). When off, the kernels pay one
attribute test.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.registry import REQUIRED, TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import unknown_shape
from tensorweave.runtime.executor import StepState
from tensorweave.runtime.values import DEAD

# The device types transfers run on; the value itself is passed by reference.
TRANSFER_DEVICE_TYPES = ("CPU", "GPU", "SIM")

# The value a control edge sends across devices (TF sends an empty dummy constant too).
CONTROL_VALUE = np.zeros((0,), dtype=np.float32)

# ConfigProto.experimental.transfer_compression values -> the type float32 travels as
COMPRESSION_TYPES = {"bfloat16": _dt.bfloat16, "float16": _dt.float16}

_ATTRS = {"tensor_name": REQUIRED, "send_device": REQUIRED,
          "send_device_incarnation": 0, "recv_device": REQUIRED, "client_terminated": False}

register_op("_Send", inputs=["tensor: T"], attrs=dict(_ATTRS, T=TypeAttr()), stateful=True)
register_op("_Recv", outputs=["tensor: tensor_type"],
            attrs=dict(_ATTRS, tensor_type=TypeAttr()), stateful=True,
            shape=lambda op: unknown_shape())
not_differentiable("_Send")
not_differentiable("_Recv")


def transfer_compression(config):
    """The 16-bit DType that cross-device float32 transfers travel as under the session
    ConfigProto `config` (`experimental.transfer_compression`), or None (off: the
    default, also for `config` None or the empty string).

    Raises:
      InvalidArgumentError: the field names no supported type.
    """
    experimental = getattr(config, "experimental", None)
    name = getattr(experimental, "transfer_compression", "") if experimental is not None \
        else ""
    if not name:
        return None
    dtype = COMPRESSION_TYPES.get(name) if isinstance(name, str) else None
    if dtype is None:
        raise errors.InvalidArgumentError(
            None, None, "ConfigProto.experimental.transfer_compression must be one of "
            "'', 'bfloat16' or 'float16', got %r" % (name,))
    return dtype


def narrowing(dtype: _dt.DType):
    """The function a compressing `_Send` applies to a float32 value: its rounding
    (to nearest, ties to even) to `dtype`."""
    np_type = dtype.as_numpy_dtype

    def narrow(value):
        return value.astype(np_type)
    return narrow


def widening(copy=None):
    """The function a compressing `_Recv` applies to an arriving value: `copy` (the
    copy between memory spaces, None for none), then the widening back to float32."""
    if copy is None:
        def widen(value):
            return value.astype(np.float32)
    else:
        def widen(value):
            return copy(value).astype(np.float32)
    return widen


class TransferStepState(StepState):
    """The StepState of a partitioned step: also carries the step's rendezvous."""

    __slots__ = ("rendezvous",)

    def __init__(self, rendezvous, deadline=None):
        StepState.__init__(self, deadline)
        self.rendezvous = rendezvous


class InFrameState:
    """What a `_Send`/`_Recv` inside a loop frame gets as its step state (tagged
    executor): the step's rendezvous and the tag of the frame instance and iteration it
    runs in, which its rendezvous key carries so that iterations never mix."""

    __slots__ = ("step", "rendezvous", "frame_id", "iter_id", "suffix")

    def __init__(self, step: StepState, frame_id: int, iter_id: int):
        self.step = step
        self.rendezvous = getattr(step, "rendezvous", None)
        self.frame_id, self.iter_id = frame_id, iter_id
        self.suffix = ";%d:%d" % (frame_id, iter_id)  # what frame_key puts after the prefix


def frame_key(key: str, frame_id: int, iter_id: int) -> str:
    """`key` (a rendezvous key made for the root frame, "...;0:0") for the frame
    instance `frame_id` and its iteration `iter_id`."""
    return "%s;%d:%d" % (key.rpartition(";")[0], frame_id, iter_id)


# rendezvous key -> the key without its ";frame:iter" (keys of a session's steps)
_PREFIXES: dict = {}


def _key_of(ctx, state) -> str:
    key = ctx.op.rendezvous_key
    if type(state) is InFrameState:
        prefix = _PREFIXES.get(key)
        if prefix is None:
            if len(_PREFIXES) > 100000:
                _PREFIXES.clear()
            prefix = _PREFIXES[key] = key.rpartition(";")[0]
        return prefix + state.suffix
    return key


def _rendezvous_of(ctx, state):
    rdv = getattr(state, "rendezvous", None)
    if rdv is None:
        raise errors.InternalError(None, ctx.op, "%s %s ran outside a partitioned step "
                                   "(no rendezvous)" % (ctx.op.type, ctx.op.name))
    return rdv


@kernel("_Send", devices=TRANSFER_DEVICE_TYPES, is_async=True)
def _send_kernel(ctx, state, done, value):
    narrow = ctx.op.narrow  # None unless the transfer is compressed
    if narrow is not None and value is not DEAD:
        value = narrow(value)
    _rendezvous_of(ctx, state).send(_key_of(ctx, state), value, value is DEAD)
    done()


@kernel("_Recv", devices=TRANSFER_DEVICE_TYPES, is_async=True)
def _recv_kernel(ctx, state, done):
    copy = ctx.op.copy  # None between devices sharing host memory, uncompressed

    def arrived(value, is_dead, error):
        if error is not None:
            done(exc=error)
        elif is_dead:
            done(DEAD)
        elif copy is None:
            done(value)
        else:
            try:
                done(copy(value))
            except Exception as e:  # noqa: BLE001 - e.g. the destination is out of memory
                done(exc=e)
    _rendezvous_of(ctx, state).recv_async(_key_of(ctx, state), arrived)
