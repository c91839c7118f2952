"""`tf.metrics`: TF1's streaming metrics (value and update ops over local variables).

Imported on first access to `tf.metrics` (tensorweave.__getattr__)."""
import sys as _sys

from tensorweave.framework import api_export as _api
from tensorweave.metrics import metrics_at_k, metrics_confusion, metrics_means  # noqa

# Bind the package on its parent before installing: `install` looks `tf.metrics` up, and
# while this module is still importing that lookup would re-enter tensorweave.__getattr__.
setattr(_sys.modules["tensorweave"], "metrics", _sys.modules[__name__])
_api.install(_sys.modules["tensorweave"])
