"""`tf.compat`: `tf.compat.v1` is tensorweave itself; `dimension_value` helpers."""
import sys as _sys

from tensorweave.framework.shapes import dimension_value  # noqa: F401


def __getattr__(name):
    if name == "v1":
        return _sys.modules["tensorweave"]
    raise AttributeError(name)
