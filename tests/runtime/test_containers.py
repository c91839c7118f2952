"""Resource containers and sharing (white paper §4.7): on an in-process target
("local://NAME") sessions share variables and queues, which outlive a session until
Session.reset; a direct session ('') owns its resources."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def target():
    name = "local://test-containers"
    yield name
    tf.Session.reset(name)


def test_sessions_on_one_target_share_variables_and_queues(graph, target):
    v = tf.Variable([1.0, 2.0], name="shared_v")
    bump = v.assign_add([1.0, 1.0])
    q = tf.FIFOQueue(4, tf.int32, shapes=[[]], shared_name="shared_q")
    enq, deq = q.enqueue(7), q.dequeue()
    with tf.Session(target) as first:
        first.run(v.initializer)
        first.run(bump)
        first.run(enq)
    with tf.Session(target) as second:  # the first session is closed: state lives on
        np.testing.assert_array_equal(second.run(v), [2.0, 3.0])
        assert second.run(deq) == 7


def test_direct_sessions_do_not_share(graph):
    v = tf.Variable(1.0, name="private_v")
    with tf.Session() as first:
        first.run(v.initializer)
    with tf.Session() as second:
        with pytest.raises(tf.errors.FailedPreconditionError, match="private_v"):
            second.run(v)


def test_reset_clears_named_containers_and_closes_sessions(graph, target):
    with tf.container("experiment"):
        a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    assert a.handle.op.get_attr("container") == b"experiment"
    assert b.handle.op.get_attr("container") == b""
    sess = tf.Session(target)
    sess.run([a.initializer, b.initializer])
    tf.Session.reset(target, ["experiment"])
    with pytest.raises(tf.errors.AbortedError, match="is not found"):  # TF's class
        sess.run(b)
    with tf.Session(target) as fresh:
        assert fresh.run(b) == 2.0  # the default container was kept
        with pytest.raises(tf.errors.FailedPreconditionError, match="a"):
            fresh.run(a)
    tf.Session.reset(target)  # all containers
    with tf.Session(target) as fresh:
        with pytest.raises(tf.errors.FailedPreconditionError):
            fresh.run(b)


def test_unknown_targets_are_refused():
    with pytest.raises(tf.errors.NotFoundError, match="grpc://host:port"):
        tf.Session("tcp://localhost:2222")
    from tensorweave.distribute.server import free_port
    config = tf.ConfigProto(operation_timeout_in_ms=300)  # nothing listens there
    with pytest.raises(tf.errors.UnavailableError, match="did not answer"):
        tf.Session("grpc://localhost:%d" % free_port(), config=config)
