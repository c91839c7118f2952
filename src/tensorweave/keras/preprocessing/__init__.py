"""`tf.keras.preprocessing`: the data helpers TF1-era input code uses; `sequence` has
`pad_sequences` (also `tf.keras.utils.pad_sequences`). The image and text helpers are
not provided."""
from tensorweave.keras.preprocessing import sequence  # noqa: F401

__all__ = ["sequence"]
