"""`tensorflow.python.client`: `timeline` is tensorweave.client.timeline."""
import sys as _sys

from tensorweave.client import timeline  # noqa: F401

# `import tensorweave.python.client.timeline` names the same module object
_sys.modules[__name__ + ".timeline"] = timeline
