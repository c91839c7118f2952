import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def evaluate(graph):
    """evaluate(fetches, feed_dict=None, before=()): the fetches' values in a new session
    of the test's graph, after running the variable and table initializers, then the
    ops `before` (say, assignments of chosen weights)."""
    def run(fetches, feed_dict=None, before=()):
        with tf.Session(graph=graph) as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            sess.run(list(before))
            return sess.run(fetches, feed_dict)
    return run


@pytest.fixture
def table():
    """An [8, 3] embedding table W[i, j] = (3 i + j) / 10, and its initializer."""
    values = np.arange(24, dtype=np.float32).reshape(8, 3) / 10.0
    return values, tf.constant_initializer(values)
