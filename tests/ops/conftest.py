import pytest

from tensorweave.ops.random import philox


def _swap_remove_order(seed, seed2, script):
    """The elements a RandomShuffleQueue seeded (seed, seed2) hands out for `script`
    (("enqueue", keys) / ("dequeue", k) steps): TF's draw-and-swap on a list, one word
    of Philox(seed, seed2) per draw: take rows[j] for j = word % size, move the last
    row into its place."""
    draws = sum(arg for kind, arg in script if kind == "dequeue")
    words = iter(philox.words(*philox.key_counter_of_seeds(seed, seed2),
                              draws // 4 + 1).tolist())
    rows, out = [], []
    for kind, arg in script:
        if kind == "enqueue":
            rows.extend(arg)
            continue
        for _ in range(arg):
            j = next(words) % len(rows)
            out.append(rows[j])
            rows[j] = rows[-1]
            rows.pop()
    return out


@pytest.fixture
def swap_remove_order():
    """The reference draw order of a RandomShuffleQueue (see _swap_remove_order)."""
    return _swap_remove_order
