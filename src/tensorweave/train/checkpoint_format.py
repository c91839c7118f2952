"""The checkpoint file format: documented, checksummed, atomic writes."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
