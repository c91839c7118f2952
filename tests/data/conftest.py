import pytest

import tensorweave as tf


@pytest.fixture
def drain(sess):
    """drain(dataset): every element of `dataset`, read through a one-shot iterator in the
    test's session until OutOfRangeError (at most `limit` elements)."""
    def read(dataset, limit: int = 5000):
        nxt = dataset.make_one_shot_iterator().get_next()
        out = []
        with pytest.raises(tf.errors.OutOfRangeError):
            for _ in range(limit):
                out.append(sess.run(nxt))
        return out
    return read
