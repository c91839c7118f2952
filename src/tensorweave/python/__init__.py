"""TF1's module paths under `tensorflow.python` that programs import directly (e.g.
`from tensorflow.python.client import timeline`), each an alias of tensorweave's own
module. Imported on first access to `tf.python` (tensorweave.__getattr__)."""
from tensorweave.python import client  # noqa: F401

import sys as _sys  # noqa: E402

from tensorweave.framework import api_export as _api  # noqa: E402

# the names are offered to `from tensorweave.python import ...` before `tf.python` is touched
_api.install_namespace(_sys.modules[__name__], "python")
