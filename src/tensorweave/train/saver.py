"""tf.train.Saver and the checkpoint-state helpers."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
