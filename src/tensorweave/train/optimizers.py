"""The optimizers, written from primitive ops and Variables."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
