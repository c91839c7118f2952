"""TF1's module paths under `tensorflow.python` that programs import directly (e.g.
`from tensorflow.python.client import timeline`), each an alias of tensorweave's own
module. Imported on first access to `tf.python` (tensorweave.__getattr__)."""
from tensorweave.python import client  # noqa: F401
