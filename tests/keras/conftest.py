import pytest

import tensorweave as tf


@pytest.fixture
def keras_graph():
    """A fresh graph and Keras session for each test (of the modules that use it)."""
    with tf.Graph().as_default() as g:
        tf.keras.backend.set_session(None)
        yield g
    tf.keras.backend.set_session(None)
