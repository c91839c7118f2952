"""The summaries in tf_events/ and their inputs (shared by make_tf_events.py, which
wrote them with real TensorFlow, and the tests that rebuild them with tensorweave)."""
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


def build_summaries(tf):
    """Builds the summaries with `tf` (real TensorFlow's compat.v1 or tensorweave) in
    the default graph: placeholders named as inputs(), then scalar, histogram, image,
    audio and text summaries. Returns (placeholders by name, the merged summary)."""
    ph = {k: tf.placeholder(tf.as_dtype(v.dtype), np.shape(v), name=k)
          for k, v in inputs(0).items()}
    tf.summary.scalar("loss", ph["loss"])
    tf.summary.histogram("weights", ph["weights"], family="params")
    tf.summary.image("images", ph["images"], max_outputs=2)
    tf.summary.image("gray", ph["gray"], max_outputs=1)
    tf.summary.audio("audio", ph["audio"], 8000.0, max_outputs=1)
    tf.summary.text("note", tf.constant(["hello", "world"]))
    return ph, tf.summary.merge_all()
