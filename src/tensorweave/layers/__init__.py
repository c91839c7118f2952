"""`tf.layers`: TF1's layer functions and Layer classes, built from the ops.

Imported on first access to `tf.layers` (tensorweave.__getattr__). Importing it
registers the layers' exports and installs them, so `from tensorweave.layers import
dense` works too.
"""
import sys as _sys

from tensorweave.framework import api_export as _api
from tensorweave.layers import (  # noqa: F401
    base, core, convolutional, separable, pooling, normalization)

# Bind the package on its parent before installing: `install` looks `tf.layers` up, and
# while this module is still importing that lookup would re-enter tensorweave.__getattr__.
setattr(_sys.modules["tensorweave"], "layers", _sys.modules[__name__])
_api.install(_sys.modules["tensorweave"])
