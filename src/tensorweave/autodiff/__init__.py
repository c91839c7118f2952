"""Automatic differentiation: tf.gradients, tf.hessians, custom gradients, checking."""
from tensorweave.autodiff.custom_gradient import (  # noqa: F401
    RegisterGradient, custom_gradient, grad_pass_through, recompute_grad)
from tensorweave.autodiff.gradients import (  # noqa: F401
    AggregationMethod, UnconnectedGradients, gradients, hessians)
