"""Learning-rate schedules."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
