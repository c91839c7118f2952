"""TF's behaviour switches: those asking for TF1 graph mode are accepted, those asking
for eager execution are refused, v2 control flow is accepted with a warning."""
import logging

import pytest

import tensorweave as tf


def test_tf1_switches_are_accepted(graph):
    for switch in (tf.disable_v2_behavior, tf.disable_eager_execution,
                   tf.disable_control_flow_v2, tf.compat.v1.disable_control_flow_v2):
        assert switch() is None
    assert tf.executing_eagerly() is False and tf.control_flow_v2_enabled() is False


def test_eager_execution_is_refused():
    for switch in (tf.enable_eager_execution, tf.enable_v2_behavior):
        with pytest.raises(NotImplementedError, match="graph mode only"):
            switch()


def test_control_flow_v2_is_accepted_with_a_warning(caplog):
    caplog.set_level(logging.WARNING, logger="tensorflow")
    tf.enable_control_flow_v2()
    assert "v1 control flow" in caplog.text
    assert tf.control_flow_v2_enabled() is False

