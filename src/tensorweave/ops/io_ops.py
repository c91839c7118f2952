"""SaveV2 / RestoreV2 / MergeV2Checkpoints: checkpoints as graph ops (OSDI §4.3)."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
