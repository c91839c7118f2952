"""Optimizer: the base class of the training algorithms (OSDI §4.1)."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
