"""tf.errors: every TF1 OpError class with its code, and run-time errors naming ops."""
import pytest

import tensorweave as tf

CODES = {"CancelledError": 1, "UnknownError": 2, "InvalidArgumentError": 3,
         "DeadlineExceededError": 4, "NotFoundError": 5, "AlreadyExistsError": 6,
         "PermissionDeniedError": 7, "ResourceExhaustedError": 8,
         "FailedPreconditionError": 9, "AbortedError": 10, "OutOfRangeError": 11,
         "UnimplementedError": 12, "InternalError": 13, "UnavailableError": 14,
         "DataLossError": 15, "UnauthenticatedError": 16}


def test_every_op_error_class_and_code():
    for name, code in CODES.items():
        cls = getattr(tf.errors, name)
        assert issubclass(cls, tf.errors.OpError)
        err = cls(None, None, "msg")
        assert err.error_code == code and err.message == "msg"
        assert tf.errors.exception_type_from_error_code(code) is cls
    assert tf.errors.INVALID_ARGUMENT == 3 and tf.errors.OUT_OF_RANGE == 11


def test_missing_feed_names_placeholder_and_user_line(graph):
    p = tf.placeholder(tf.float32, [2], name="needs_feed")
    y = tf.identity(p)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
    err = info.value
    assert "needs_feed" in str(err) and err.op is not None and err.op.name == "needs_feed"
    assert "test_errors.py" in str(err)
