"""`tf.keras.preprocessing.sequence`: `pad_sequences`, as TF 2.15's Keras has it (the
same function as `tf.keras.utils.pad_sequences`)."""
from __future__ import annotations

import numpy as np

from tensorweave.framework.api_export import tf_export


@tf_export("keras.preprocessing.sequence.pad_sequences", "keras.utils.pad_sequences")
def pad_sequences(sequences, maxlen=None, dtype="int32", padding: str = "pre",
                  truncating: str = "pre", value=0.0) -> np.ndarray:
    """Pads (or truncates) a list of sequences to one length, as a NumPy array of shape
    `(len(sequences), maxlen) + sample_shape`.

    Args:
      sequences: the sequences (lists or arrays; their items may be arrays, all of the
        shape of the first non-empty sequence's items).
      maxlen: the length; the longest sequence's when None.
      dtype: the array's dtype (`object` for strings of any length).
      padding: 'pre' or 'post': where the `value`s go.
      truncating: 'pre' or 'post': which end of a longer sequence is dropped.
      value: the padding value.

    Raises:
      ValueError: `sequences` not iterable, or holding a non-iterable; a string `value`
        with a non-string dtype; a bad `padding` or `truncating`; items of a sequence
        whose shape differs from the first non-empty sequence's.
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths = [_length(seq) for seq in sequences]
    # every item must have the shape of the first non-empty sequence's items
    first = next((seq for seq, n in zip(sequences, lengths) if n), None)
    item_shape = np.asarray(first).shape[1:] if first is not None else ()
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    if isinstance(value, str) and dtype != object and not np.issubdtype(dtype, np.str_):
        raise ValueError("`dtype` %s is not compatible with `value`'s type: %s\nYou should "
                         "set `dtype=object` for variable length strings."
                         % (dtype, type(value)))
    out = np.full((len(sequences), maxlen) + item_shape, value, dtype=dtype)
    for row, (seq, n) in enumerate(zip(sequences, lengths)):
        if not n:
            continue  # all padding
        if truncating not in ("pre", "post"):  # (checked once there is something to cut)
            raise ValueError('Truncating type "%s" not understood' % truncating)
        kept = np.asarray(seq[-maxlen:] if truncating == "pre" else seq[:maxlen],
                          dtype=dtype)
        if kept.shape[1:] != item_shape:
            raise ValueError("Shape of sample %s of sequence at position %s is different "
                             "from expected shape %s" % (kept.shape[1:], row, item_shape))
        if padding == "post":
            out[row, :len(kept)] = kept
        elif padding == "pre":
            out[row, maxlen - len(kept):] = kept
        else:
            raise ValueError('Padding type "%s" not understood' % padding)
    return out


def _length(seq) -> int:
    try:
        return len(seq)
    except TypeError as e:
        raise ValueError("`sequences` must be a list of iterables. Found non-iterable: %s"
                         % str(seq)) from e
