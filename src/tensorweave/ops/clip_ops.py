"""clip_by_norm, clip_by_global_norm, global_norm."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
