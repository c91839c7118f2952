"""`tf.errors`: OpError and one subclass per TF error code.

Run-time errors carry the failing Operation; their message ends with the op's name and
the file:line of the user code that created it, so the user sees their own line.
"""
from __future__ import annotations

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while running an op.

    Args:
      node_def: the failing op's NodeDef; None: made from `op` when asked for.
      op: the failing Operation, or None.
      message: what went wrong.
      error_code: one of the codes in this module.
    """

    def __init__(self, node_def, op, message, error_code=UNKNOWN, *args):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self) -> str:
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        """The NodeDef of the failing op (TF's `OpError.node_def`), None without one."""
        if self._node_def is None and self._op is not None and \
                hasattr(self._op, "node_def"):
            self._node_def = self._op.node_def
        return self._node_def

    @property
    def error_code(self) -> int:
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (type(self), (None, None, self._message))


def _make(name: str, code: int):
    # node_def, op and message are required, as in TF (`AbortedError("x")` is a TypeError)
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)
    __init__.__qualname__ = name + ".__init__"  # named in TypeErrors, as TF's are
    cls = type(name, (OpError,), {"__init__": __init__, "__doc__": "TF error code %d." % code})
    return cls


CancelledError = _make("CancelledError", CANCELLED)
UnknownError = _make("UnknownError", UNKNOWN)
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT)
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED)
NotFoundError = _make("NotFoundError", NOT_FOUND)
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS)
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED)
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED)
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION)
AbortedError = _make("AbortedError", ABORTED)
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE)
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED)
InternalError = _make("InternalError", INTERNAL)
UnavailableError = _make("UnavailableError", UNAVAILABLE)
DataLossError = _make("DataLossError", DATA_LOSS)
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED)

_CODE_TO_CLASS = {
    CANCELLED: CancelledError, UNKNOWN: UnknownError, INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError, NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError, PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError, FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError, OUT_OF_RANGE: OutOfRangeError, UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError, UNAVAILABLE: UnavailableError, DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}


def exception_type_from_error_code(error_code: int):
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls) -> int:
    for code, c in _CODE_TO_CLASS.items():
        if c is cls:
            return code
    raise KeyError(cls)


def with_op(err: OpError, op) -> OpError:
    """A copy of `err` (same class) naming `op` and the user line that created it."""
    msg = err.message
    where = op_location(op)
    if where not in msg:
        msg = "%s\n\t [[node %s (defined at %s) ]]" % (msg, op.name, where)
    new = type(err)(None, op, msg)
    return new


def op_location(op) -> str:
    tb = op.traceback_location
    return "%s:%d" % tb if tb else "<unknown>"
