"""`tf.losses`: TF1's losses and the LOSSES collection helpers.

Imported on first access to `tf.losses` (tensorweave.__getattr__)."""
import sys as _sys

from tensorweave.framework import api_export as _api
from tensorweave.losses import losses_impl, util  # noqa: F401

# Bind the package on its parent before installing: `install` looks `tf.losses` up, and
# while this module is still importing that lookup would re-enter tensorweave.__getattr__.
setattr(_sys.modules["tensorweave"], "losses", _sys.modules[__name__])
_api.install(_sys.modules["tensorweave"])
