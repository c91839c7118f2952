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
"""
from __future__ import annotations

import numpy as np

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

_ATTRS = {"tensor_name": REQUIRED, "send_device": REQUIRED,
          "send_device_incarnation": 0, "recv_device": REQUIRED, "client_terminated": False}

register_op("_Send", inputs=["tensor: T"], attrs=dict(_ATTRS, T=TypeAttr()), stateful=True)
register_op("_Recv", outputs=["tensor: tensor_type"],
            attrs=dict(_ATTRS, tensor_type=TypeAttr()), stateful=True,
            shape=lambda op: unknown_shape())
not_differentiable("_Send")
not_differentiable("_Recv")


class TransferStepState(StepState):
    """The StepState of a partitioned step: also carries the step's rendezvous."""

    __slots__ = ("rendezvous",)

    def __init__(self, rendezvous, deadline=None):
        StepState.__init__(self, deadline)
        self.rendezvous = rendezvous


def _rendezvous_of(ctx, state):
    rdv = getattr(state, "rendezvous", None)
    if rdv is None:
        raise errors.InternalError(None, ctx.op, "%s %s ran outside a partitioned step "
                                   "(no rendezvous)" % (ctx.op.type, ctx.op.name))
    return rdv


@kernel("_Send", devices=TRANSFER_DEVICE_TYPES, is_async=True)
def _send_kernel(ctx, state, done, value):
    _rendezvous_of(ctx, state).send(ctx.op.rendezvous_key, value, value is DEAD)
    done()


@kernel("_Recv", devices=TRANSFER_DEVICE_TYPES, is_async=True)
def _recv_kernel(ctx, state, done):
    copy = ctx.op.copy  # None between devices sharing host memory

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
    _rendezvous_of(ctx, state).recv_async(ctx.op.rendezvous_key, arrived)
