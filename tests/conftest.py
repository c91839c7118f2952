import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def graph():
    """A fresh graph installed as the default for the test."""
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.fixture
def sess(graph):
    with tf.Session(graph=graph) as s:
        yield s


@pytest.fixture(autouse=True)
def _seeded():
    np.random.seed(0)
