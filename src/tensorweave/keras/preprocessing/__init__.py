"""`tf.keras.preprocessing`: the data helpers TF1-era input code uses; `sequence` has
`pad_sequences` (also `tf.keras.utils.pad_sequences`); `text` has `Tokenizer`,
`tokenizer_from_json`, `text_to_word_sequence`, `one_hot` and `hashing_trick`. The image
helpers are not provided."""
from tensorweave.keras.preprocessing import sequence  # noqa: F401
from tensorweave.keras.preprocessing import text  # noqa: F401

__all__ = ["sequence", "text"]
