"""`tf.keras.preprocessing`: the data helpers TF1-era input code uses; `sequence` has
`pad_sequences` (also `tf.keras.utils.pad_sequences`); `text` has `Tokenizer`,
`tokenizer_from_json`, `text_to_word_sequence`, `one_hot` and `hashing_trick`; `image`
has `ImageDataGenerator`, its iterators, the augmentation functions and `load_img`,
`img_to_array`, `array_to_img`, `save_img` (also in `tf.keras.utils`)."""
from tensorweave.keras.preprocessing import image  # noqa: F401
from tensorweave.keras.preprocessing import sequence  # noqa: F401
from tensorweave.keras.preprocessing import text  # noqa: F401

__all__ = ["image", "sequence", "text"]
