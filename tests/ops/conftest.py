import numpy as np
import pytest


def _swap_remove_order(seed, seed2, script):
    """The elements a RandomShuffleQueue seeded (seed, seed2) hands out for `script`
    (("enqueue", keys) / ("dequeue", k) steps): TF's draw-and-swap on a list, one
    double per draw: take rows[j] for j = int(u * size), move the last row into its
    place."""
    rng = np.random.default_rng([seed, seed2])
    rows, out = [], []
    for kind, arg in script:
        if kind == "enqueue":
            rows.extend(arg)
            continue
        for _ in range(arg):
            j = int(rng.random() * len(rows))
            out.append(rows[j])
            rows[j] = rows[-1]
            rows.pop()
    return out


@pytest.fixture
def swap_remove_order():
    """The reference draw order of a RandomShuffleQueue (see _swap_remove_order)."""
    return _swap_remove_order
