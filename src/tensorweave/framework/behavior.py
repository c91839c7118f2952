"""TF's behaviour switches (`tf.disable_v2_behavior()` and its kin).

tensorweave has one behaviour: TF1 graph mode with v1 control flow. The switches that
ask for it are accepted; those that ask for TF2's eager execution or v2 control flow say
what tensorweave does instead.
"""
from __future__ import annotations

from tensorweave.framework.api_export import tf_export


@tf_export("disable_v2_behavior")
def disable_v2_behavior() -> None:
    """Accepted: tensorweave always has TF1 graph-mode behaviour."""


@tf_export("disable_eager_execution")
def disable_eager_execution() -> None:
    """Accepted: tensorweave has no eager mode."""


@tf_export("executing_eagerly")
def executing_eagerly() -> bool:
    """False: tensorweave builds graphs and runs them in sessions."""
    return False


@tf_export("enable_eager_execution", "enable_v2_behavior")
def enable_eager_execution(*args, **kwargs) -> None:
    """Refused: tensorweave runs TF1 graph mode only.

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError("tensorweave runs TF1 graph mode only: eager execution and "
                              "TF2 behaviour are not available (build a graph and run it in "
                              "a tf.Session)")


@tf_export("disable_control_flow_v2")
def disable_control_flow_v2() -> None:
    """Accepted: tensorweave builds v1 control flow (Switch/Merge, Enter/Exit)."""


@tf_export("enable_control_flow_v2")
def enable_control_flow_v2() -> None:
    """Accepted with a warning: tensorweave builds v1 control flow (Switch/Merge,
    Enter/Exit), whose results are the same as v2's; graph structure and op names are
    v1's."""
    from tensorweave.platform import tf_logging
    tf_logging.warning("tensorweave builds v1 control flow; enable_control_flow_v2() "
                       "changes nothing (the results are the same).")


@tf_export("control_flow_v2_enabled")
def control_flow_v2_enabled() -> bool:
    """False: control flow is always v1 here."""
    return False
