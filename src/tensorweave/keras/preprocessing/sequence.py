"""`tf.keras.preprocessing.sequence`: `pad_sequences`, as TF 2.15's Keras has it (the
same function as `tf.keras.utils.pad_sequences`)."""
from __future__ import annotations

import numpy as np

from tensorweave.framework.api_export import tf_export
from tensorweave.keras.utils import Sequence


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


@tf_export("keras.preprocessing.sequence.make_sampling_table")
def make_sampling_table(size: int, sampling_factor: float = 1e-5) -> np.ndarray:
    """word2vec's keep probability of the word of each frequency rank (Keras'): with
    Zipf's law giving rank r the frequency 1 / (r (log r + gamma) + 1/2 - 1/(12 r)),
    `min(1, sqrt(f / sampling_factor) / (f / sampling_factor))`.

    Args:
      size: the vocabulary size (rank 0 is the padding word and counts as rank 1).
      sampling_factor: word2vec's sampling factor.

    Returns:
      A float64 array of `size` probabilities.
    """
    gamma = 0.577  # Keras' rounding of the Euler-Mascheroni constant
    rank = np.arange(size)
    rank[0] = 1
    inverse_frequency = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    scaled = sampling_factor * inverse_frequency
    return np.minimum(1.0, scaled / np.sqrt(scaled))


@tf_export("keras.preprocessing.sequence.skipgrams")
def skipgrams(sequence, vocabulary_size: int, window_size: int = 4,
              negative_samples: float = 1.0, shuffle: bool = True,
              categorical: bool = False, sampling_table=None, seed=None):
    """Skip-gram pairs of a sequence of word indices, as Keras makes them: each word
    (index 0, padding, skipped; kept with its `sampling_table` probability) with each
    word within `window_size` of it (label 1), then `negative_samples` times as many
    pairs of a word of those pairs with a random word of the vocabulary (label 0). The
    draws are Python's `random` module's, in Keras' order, so a program that seeds it
    gets Keras' pairs.

    Args:
      sequence: a list of word indices.
      vocabulary_size: the largest word index + 1.
      window_size: half the width of the window around each word.
      negative_samples: negative pairs per positive pair (0: none).
      shuffle: shuffle the pairs (and their labels alike).
      categorical: labels as [0, 1] / [1, 0] instead of 1 / 0.
      sampling_table: the keep probability of each word index, or None.
      seed: the seed of the shuffle (None: drawn from `random`).

    Returns:
      (couples, labels): lists of [word, context word] pairs and their labels.
    """
    import random
    couples, labels = [], []
    for i, word in enumerate(sequence):
        if not word:
            continue
        if sampling_table is not None and sampling_table[word] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([word, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        n_negative = int(len(labels) * negative_samples)
        words = [pair[0] for pair in couples]
        random.shuffle(words)
        couples += [[words[k % len(words)], random.randint(1, vocabulary_size - 1)]
                    for k in range(n_negative)]
        labels += [[1, 0] if categorical else 0] * n_negative
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


@tf_export("keras.preprocessing.sequence.TimeseriesGenerator")
class TimeseriesGenerator(Sequence):
    """Batches of windows of a time series and the target after each (Keras'): sample
    `row` is `data[row - length:row:sampling_rate]` with target `targets[row]`, for the
    rows from `start_index + length` to `end_index` every `stride`, `batch_size` rows a
    batch (or random rows with `shuffle`), windows reversed in time with `reverse`.

    Args:
      data: the series, indexable along its first axis.
      targets: the targets, as many as `data` has steps.
      length: the span of a window (in steps, before sampling).
      sampling_rate, stride: the step within a window, and between windows.
      start_index, end_index: the first and last step a window may end before / at.
      shuffle, reverse, batch_size: as described above.

    Raises:
      ValueError: `data` and `targets` of different lengths, or no window fits.
    """

    def __init__(self, data, targets, length: int, sampling_rate: int = 1, stride: int = 1,
                 start_index: int = 0, end_index=None, shuffle: bool = False,
                 reverse: bool = False, batch_size: int = 128):
        if len(data) != len(targets):
            raise ValueError("Data and targets have to be of same length. Data length is "
                             "%d while target length is %d" % (len(data), len(targets)))
        self.data, self.targets = data, targets
        self.length, self.sampling_rate, self.stride = length, sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError("`start_index+length=%i > end_index=%i` is disallowed, as no "
                             "part of the sequence would be left to be used as current step."
                             % (self.start_index, self.end_index))

    def __len__(self) -> int:
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def __getitem__(self, index: int):
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1,
                                     size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride,
                                        self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate]
                            for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...] if self.reverse else samples), targets

    def get_config(self) -> dict:
        """The generator's arguments, the series as JSON text (Keras')."""
        import json

        def listed(x):
            return json.dumps(x.tolist() if isinstance(x, np.ndarray) else x)
        return {"data": listed(self.data), "targets": listed(self.targets),
                "length": self.length, "sampling_rate": self.sampling_rate,
                "stride": self.stride, "start_index": self.start_index,
                "end_index": self.end_index, "shuffle": self.shuffle,
                "reverse": self.reverse, "batch_size": self.batch_size}

    def to_json(self, **kwargs) -> str:
        """`{"class_name": "TimeseriesGenerator", "config": get_config()}` as JSON."""
        import json
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()},
                          **kwargs)
