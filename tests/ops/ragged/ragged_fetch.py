"""A plain module (not a conftest) the ragged tests import: `from ragged_fetch import
fetched`."""
import numpy as np


def fetched(sess, x):
    """`x` run in `sess`, as Python lists: a RaggedTensorValue's `to_list()`, an array's
    `tolist()`, anything else as it is."""
    value = sess.run(x)
    if hasattr(value, "to_list"):
        return value.to_list()
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value
