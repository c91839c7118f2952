"""Server, placement and reset rules as TF's: a port in use cannot take a second server;
soft placement relaxes the device type and index, not the job or task; a reset target's
sessions fail with AbortedError (which MonitoredSession recovers from); an update of a
TF1 variable and a group of ops on one device are placed with them."""
import pytest

import tensorweave as tf


def test_a_second_server_on_a_port_in_use_fails(make_cluster):
    cluster = make_cluster({"worker": 1})  # a real task process holds the port
    with pytest.raises(tf.errors.UnknownError, match="Could not start gRPC server"):
        tf.train.Server(cluster.spec, "worker", 0)


def test_soft_placement_does_not_invent_a_task(graph):
    with tf.device("/job:localhost/task:3"):
        bad = tf.constant(2.0) + 1
    with tf.device("/device:GPU:7"):
        relaxed = tf.constant(2.0) + 2
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        assert sess.run(relaxed) == 4.0  # the type and index are relaxed
        with pytest.raises(tf.errors.InvalidArgumentError, match="explicitly assigned"):
            sess.run(bad)


def test_a_reset_target_aborts_its_sessions(graph):
    v = tf.Variable(3)
    target = "local://reset_rule_test"
    sess = tf.Session(target)
    sess.run(v.initializer)
    tf.Session.reset(target)
    with pytest.raises(tf.errors.AbortedError, match="is not found"):
        sess.run(v)
    sess.close()


def test_updates_and_single_device_groups_are_placed_with_their_variables(graph):
    with tf.device("/job:worker"):
        with tf.device("/job:ps/task:1"):
            a = tf.Variable(1.0, name="a")
            b = tf.Variable(2.0, name="b")
        update_a = tf.assign_add(a, 1.0)
        update_b = tf.assign_add(b, 1.0)
        both = tf.group(update_a, update_b)
        value = tf.constant(1.0)
    assert update_a.device == "/job:ps/task:1" and update_a.op.colocation_groups() == [
        b"loc:@a"]
    assert both.device == "/job:ps/task:1"
    assert value.device == "/job:worker"
    # the constant converted for the assign is not colocated (TF converts inputs first)
    assign_value = tf.get_default_graph().get_operation_by_name("AssignAdd/value")
    assert assign_value.device == "/job:worker"


def test_an_initializer_functions_ops_ignore_the_device_scopes(graph):
    # TF builds a variable's initial value from its initializer under device(None)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker")):
        v = tf.get_variable("v", [2], initializer=tf.zeros_initializer())
    assert v.device == "/job:ps/task:0"
    assert v.initializer.inputs[1].device == ""
