"""`tf.keras.preprocessing.text`: the word-level text helpers of TF 2.15's Keras
(`Tokenizer`, `tokenizer_from_json`, `text_to_word_sequence`, `one_hot`,
`hashing_trick`).

Hashing: as in Keras 2.15, `hashing_trick(hash_function=None)` and `one_hot` use
Python's built-in `hash`, whose value for a `str` is salted per process (unless
`PYTHONHASHSEED` is set), so their indices are stable within one process only;
`hash_function='md5'` gives indices that are the same in every process.
"""
from __future__ import annotations

import collections
import hashlib
import json
import warnings

import numpy as np

from tensorweave.framework.api_export import tf_export

_DEFAULT_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


@tf_export("keras.preprocessing.text.text_to_word_sequence")
def text_to_word_sequence(input_text, filters=_DEFAULT_FILTERS, lower=True, split=" "):
    """Splits `input_text` into its words: lowercased when `lower`, every character of
    `filters` turned into a `split`, then split on `split` with empty pieces dropped."""
    if lower:
        input_text = input_text.lower()
    table = str.maketrans(dict.fromkeys(filters, split))
    return [w for w in input_text.translate(table).split(split) if w]


@tf_export("keras.preprocessing.text.hashing_trick")
def hashing_trick(text, n, hash_function=None, filters=_DEFAULT_FILTERS, lower=True,
                  split=" ", analyzer=None):
    """The words of `text` as indices in `[1, n - 1]`: `hash_function(word) % (n - 1) + 1`.

    `hash_function` None means Python's `hash` (salted per process for strings, as in
    Keras); 'md5' means the MD5 digest of the UTF-8 word read as an integer; otherwise
    any callable from a string to an int. `analyzer`, when given, splits the text in
    place of `text_to_word_sequence`.
    """
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word):
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    if analyzer is None:
        words = text_to_word_sequence(text, filters=filters, lower=lower, split=split)
    else:
        words = analyzer(text)
    return [hash_function(w) % (n - 1) + 1 for w in words]


@tf_export("keras.preprocessing.text.one_hot")
def one_hot(input_text, n, filters=_DEFAULT_FILTERS, lower=True, split=" ",
            analyzer=None):
    """`hashing_trick` with Python's `hash` (so stable within one process only)."""
    return hashing_trick(input_text, n, hash_function=hash, filters=filters,
                         lower=lower, split=split, analyzer=analyzer)


@tf_export("keras.preprocessing.text.Tokenizer")
class Tokenizer(object):
    """Builds a word index from texts and turns texts into index sequences or matrices.

    Index 0 is never given to a word. Words are indexed by count, most frequent first,
    ties in the order first seen; `oov_token`, when given, takes index 1 and stands for
    unknown words (and, with `num_words`, for the words beyond the `num_words - 1` most
    frequent). `num_words` limits only the conversions, never the index.

    Args:
      num_words: keep only the words of index below this in conversions.
      filters: characters removed (replaced by `split`) from texts.
      lower: lowercase texts (and list-of-token texts).
      split: the word separator.
      char_level: every character is a token (filters are then not applied).
      oov_token: the token for out-of-vocabulary words.
      analyzer: a callable splitting a text into tokens, in place of
        `text_to_word_sequence`.
      document_count: (keyword only) the starting document count.
    """

    def __init__(self, num_words=None, filters=_DEFAULT_FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, analyzer=None, **kwargs):
        if "nb_words" in kwargs:
            warnings.warn("The `nb_words` argument in `Tokenizer` has been renamed "
                          "`num_words`.")
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError("Unrecognized keyword arguments: " + str(kwargs))
        self.num_words = num_words
        self.filters = filters
        self.lower = lower
        self.split = split
        self.char_level = char_level
        self.oov_token = oov_token
        self.analyzer = analyzer
        self.document_count = document_count
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.index_docs = collections.defaultdict(int)
        self.word_index = {}
        self.index_word = {}

    def _tokens(self, text):
        """A text's tokens: a list text is already tokens; a char-level string is its
        characters (lowercased, unfiltered); otherwise the analyzer's or
        `text_to_word_sequence`'s words."""
        if isinstance(text, list):
            return [t.lower() for t in text] if self.lower else text
        if self.char_level:
            return text.lower() if self.lower else text
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, filters=self.filters, lower=self.lower,
                                     split=self.split)

    def fit_on_texts(self, texts):
        """Counts the words of `texts` (strings, or lists of tokens; any iterable) and
        rebuilds `word_index`, `index_word` and `index_docs`."""
        for text in texts:
            self.document_count += 1
            tokens = self._tokens(text)
            for w in tokens:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(tokens):
                self.word_docs[w] = self.word_docs.get(w, 0) + 1
        # stable sort: equal counts stay in first-seen order
        by_count = sorted(self.word_counts.items(), key=lambda kv: kv[1], reverse=True)
        vocab = [] if self.oov_token is None else [self.oov_token]
        vocab.extend(w for w, _ in by_count)
        self.word_index = {}
        for i, w in enumerate(vocab, 1):
            self.word_index[w] = i  # a word equal to oov_token takes its later index
        self.index_word = {i: w for w, i in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        """Counts, for each index, the sequences (documents) holding it."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] = self.index_docs.get(i, 0) + 1

    def texts_to_sequences(self, texts):
        """The index sequence of each text (see `texts_to_sequences_generator`)."""
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        """Yields each text's indices; unknown words, and words of index >= num_words,
        become the oov index, or are dropped when there is no oov_token."""
        limit = self.num_words
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            out = []
            for w in self._tokens(text):
                i = self.word_index.get(w)
                if i is not None and not (limit and i >= limit):
                    out.append(i)
                elif i is None and self.oov_token is not None:
                    out.append(oov)
                elif i is not None and oov is not None:
                    out.append(oov)
            yield out

    def sequences_to_texts(self, sequences):
        """Each sequence as its words joined by spaces."""
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        """Yields each sequence's words joined by spaces; unknown indices, and indices
        >= num_words, become the oov token, or are dropped when there is none."""
        limit = self.num_words
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            words = []
            for i in seq:
                w = self.index_word.get(i)
                if w is not None and not (limit and i >= limit):
                    words.append(w)
                elif w is None and self.oov_token is not None:
                    words.append(self.index_word[oov])
                elif w is not None and oov is not None:
                    words.append(self.index_word[oov])
            yield " ".join(words)

    def texts_to_matrix(self, texts, mode="binary"):
        """`sequences_to_matrix` of `texts_to_sequences(texts)`."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """A float64 array `(len(sequences), num_words)` (num_words defaulting to
        `len(word_index) + 1`); indices >= num_words are ignored.

        mode: 'binary' (1 where present), 'count', 'freq' (count / sequence length,
        ignored indices included in the length) or 'tfidf':
        `(1 + log(count)) * log(1 + document_count / (1 + index_docs[j]))`.
        """
        if self.num_words:
            width = self.num_words
        elif self.word_index:
            width = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on "
                             "some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), width))
        for row, seq in enumerate(sequences):
            if not seq:
                continue
            counts = collections.Counter(j for j in seq if j < width)
            for j, c in counts.items():
                if mode == "count":
                    x[row][j] = c
                elif mode == "freq":
                    x[row][j] = c / len(seq)
                elif mode == "binary":
                    x[row][j] = 1
                elif mode == "tfidf":
                    idf = np.log(1 + self.document_count
                                 / (1 + self.index_docs.get(j, 0)))
                    x[row][j] = (1 + np.log(c)) * idf
                else:
                    raise ValueError("Unknown vectorization mode:", mode)
        return x

    def get_config(self):
        """The configuration, with the count and index dictionaries as JSON strings."""
        return {
            "num_words": self.num_words,
            "filters": self.filters,
            "lower": self.lower,
            "split": self.split,
            "char_level": self.char_level,
            "oov_token": self.oov_token,
            "document_count": self.document_count,
            "word_counts": json.dumps(self.word_counts),
            "word_docs": json.dumps(self.word_docs),
            "index_docs": json.dumps(self.index_docs),
            "index_word": json.dumps(self.index_word),
            "word_index": json.dumps(self.word_index),
        }

    def to_json(self, **kwargs):
        """`{"class_name": "Tokenizer", "config": get_config()}` as a JSON string;
        `kwargs` go to `json.dumps`."""
        return json.dumps({"class_name": self.__class__.__name__,
                           "config": self.get_config()}, **kwargs)


@tf_export("keras.preprocessing.text.tokenizer_from_json")
def tokenizer_from_json(json_string):
    """The `Tokenizer` that `Tokenizer.to_json` describes (its analyzer is not kept)."""
    config = dict(json.loads(json_string).get("config"))
    tables = {k: json.loads(config.pop(k)) for k in
              ("word_counts", "word_docs", "index_docs", "index_word", "word_index")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = collections.OrderedDict(tables["word_counts"])
    tokenizer.word_docs = collections.defaultdict(int, tables["word_docs"])
    tokenizer.index_docs = collections.defaultdict(
        int, {int(k): v for k, v in tables["index_docs"].items()})
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    tokenizer.word_index = tables["word_index"]
    return tokenizer
