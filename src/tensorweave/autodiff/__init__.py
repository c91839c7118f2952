"""Automatic differentiation: tf.gradients, tf.hessians, custom gradients, checking."""
from tensorweave.autodiff.custom_gradient import RegisterGradient, custom_gradient  # noqa
from tensorweave.autodiff.gradients import (  # noqa: F401
    AggregationMethod, UnconnectedGradients, gradients, hessians)
