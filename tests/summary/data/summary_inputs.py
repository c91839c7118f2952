"""The inputs of the summaries in tf_events/ (shared by make_tf_events.py, which wrote
them with real TensorFlow, and the tests that rebuild them with tensorweave)."""
import numpy as np


def inputs(step):
    rng = np.random.RandomState(step)
    return {
        "loss": np.float32(1.0 / (step + 1)),
        "weights": rng.randn(50).astype(np.float32) * (step + 1),
        "images": np.linspace(-1.0, 2.0, 2 * 3 * 4 * 3).reshape(2, 3, 4, 3).astype(
            np.float32) * (step + 1),
        "gray": (np.arange(2 * 3).reshape(1, 2, 3, 1) * 20 + step).astype(np.uint8),
        "audio": np.sin(np.linspace(0, 20, 2 * 40)).reshape(1, 40, 2).astype(
            np.float32) * 0.9,
    }
