"""tf.keras.preprocessing.text: Tokenizer, tokenizer_from_json, text_to_word_sequence,
one_hot and hashing_trick, with expected values worked out by hand (and matching TF
2.15's Keras)."""
import collections
import hashlib
import inspect
import json

import numpy as np
import pytest

import tensorweave as tf

T = tf.keras.preprocessing.text
TIES = ["b a c", "c b a", "d e", "e d f a"]


def test_exports():
    from tensorweave.keras.preprocessing import text
    assert T is text or T.Tokenizer is text.Tokenizer
    for name in ("Tokenizer", "tokenizer_from_json", "text_to_word_sequence", "one_hot",
                 "hashing_trick"):
        assert getattr(T, name) is getattr(text, name)
    assert str(inspect.signature(T.Tokenizer)) == (
        "(num_words=None, filters='!\"#$%&()*+,-./:;<=>?@[\\\\]^_`{|}~\\t\\n', lower=True, "
        "split=' ', char_level=False, oov_token=None, analyzer=None, **kwargs)")


def test_text_to_word_sequence():
    assert T.text_to_word_sequence("Hello, World! It's  a TEST.") == [
        "hello", "world", "it's", "a", "test"]
    assert T.text_to_word_sequence("") == []
    assert T.text_to_word_sequence("a--b") == ["a", "b"]
    assert T.text_to_word_sequence("ÀÉÎ ÕÜ") == ["àéî", "õü"]
    assert T.text_to_word_sequence("x\ty\nz") == ["x", "y", "z"]
    assert T.text_to_word_sequence("A-b\tC d", lower=False, filters="-", split="\t") == [
        "A", "b", "C d"]


def test_fit_on_texts_counts_and_index_order():
    t = T.Tokenizer()
    t.fit_on_texts(TIES)
    assert isinstance(t.word_counts, collections.OrderedDict)
    # first-seen order
    assert list(t.word_counts.items()) == [("b", 2), ("a", 3), ("c", 2), ("d", 2),
                                           ("e", 2), ("f", 1)]
    assert dict(t.word_docs) == {"a": 3, "b": 2, "c": 2, "d": 2, "e": 2, "f": 1}
    # by count, ties first-seen
    assert list(t.word_index.items()) == [("a", 1), ("b", 2), ("c", 3), ("d", 4),
                                          ("e", 5), ("f", 6)]
    assert t.index_word == {1: "a", 2: "b", 3: "c", 4: "d", 5: "e", 6: "f"}
    assert dict(t.index_docs) == {1: 3, 2: 2, 3: 2, 4: 2, 5: 2, 6: 1}
    assert t.document_count == 4
    seqs = t.texts_to_sequences(TIES + ["", "zzz a"])
    assert seqs == [[2, 1, 3], [3, 2, 1], [4, 5], [5, 4, 6, 1], [], [1]]
    assert list(t.texts_to_sequences_generator(["f f zzz"])) == [[6, 6]]
    assert t.sequences_to_texts([[2, 1, 3], [0, 1, 99, 6]]) == ["b a c", "a f"]
    # refitting adds counts and reindexes
    t.fit_on_texts(x for x in ["f f f f"])
    assert t.word_index["f"] == 1 and t.word_index["a"] == 2 and t.document_count == 5


def test_punctuation_uppercase_unicode():
    t = T.Tokenizer()
    t.fit_on_texts(["Café CAFÉ naïve", "Über über ÜBER straße", "日本 語 日本",
                    "émoji 😀 😀", "tab\there\nnew-line", ""])
    assert list(t.word_index.items()) == [
        ("über", 1), ("café", 2), ("日本", 3), ("😀", 4), ("naïve", 5), ("straße", 6),
        ("語", 7), ("émoji", 8), ("tab", 9), ("here", 10), ("new", 11), ("line", 12)]
    assert t.document_count == 6
    t = T.Tokenizer(lower=False)
    t.fit_on_texts(["The cat.", "the CAT, The"])
    assert list(t.word_index.items()) == [("The", 1), ("cat", 2), ("the", 3), ("CAT", 4)]
    t = T.Tokenizer(filters="")
    t.fit_on_texts(["Mat. mat"])
    assert list(t.word_index) == ["mat.", "mat"]


def test_oov_and_num_words():
    t = T.Tokenizer(num_words=4, oov_token="<OOV>")
    t.fit_on_texts(TIES)
    assert list(t.word_index.items()) == [("<OOV>", 1), ("a", 2), ("b", 3), ("c", 4),
                                          ("d", 5), ("e", 6), ("f", 7)]
    assert dict(t.index_docs) == {2: 3, 3: 2, 4: 2, 5: 2, 6: 2, 7: 1}
    assert "<OOV>" not in t.word_counts
    assert t.texts_to_sequences(["b a c", "d e", "zzz a"]) == [[3, 2, 1], [1, 1], [1, 2]]
    assert t.sequences_to_texts([[0, 1, 2, 99, 3]]) == ["<OOV> <OOV> a <OOV> b"]
    # num_words without oov drops the rarer words
    t = T.Tokenizer(num_words=3)
    t.fit_on_texts(TIES)
    assert t.texts_to_sequences(["b a c zzz"]) == [[2, 1]]
    assert t.sequences_to_texts([[2, 1, 3, 0]]) == ["b a"]
    # num_words=1: everything is oov
    t = T.Tokenizer(num_words=1, oov_token="X")
    t.fit_on_texts(TIES)
    assert t.texts_to_sequences(["a zzz"]) == [[1, 1]]
    # an oov_token that is also a word takes the word's index
    t = T.Tokenizer(oov_token="the")
    t.fit_on_texts(["the cat the", "dog"])
    assert list(t.word_index.items()) == [("the", 2), ("cat", 3), ("dog", 4)]
    assert t.texts_to_sequences(["the zzz dog"]) == [[2, 2, 4]]


def test_char_level_lists_and_analyzer():
    t = T.Tokenizer(char_level=True)
    t.fit_on_texts(["Aab.", "b"])
    assert list(t.word_index.items()) == [("a", 1), ("b", 2), (".", 3)]
    assert t.texts_to_sequences(["BA?"]) == [[2, 1]]
    t = T.Tokenizer()
    t.fit_on_texts([["Hello", "World"], ["hello"], "hello there"])
    assert list(t.word_index.items()) == [("hello", 1), ("world", 2), ("there", 3)]
    assert t.texts_to_sequences([["HELLO", "x"], "world"]) == [[1], [2]]
    t = T.Tokenizer(lower=False)
    t.fit_on_texts([["Hello", "World"]])
    assert list(t.word_index) == ["Hello", "World"]
    t = T.Tokenizer(analyzer=lambda s: s.split("-"))
    t.fit_on_texts(["A-b-A", "c"])
    assert list(t.word_index.items()) == [("A", 1), ("b", 2), ("c", 3)]


def test_matrices():
    t = T.Tokenizer()
    t.fit_on_texts(TIES)
    texts = ["b a c", "e d f a", "a a zzz", ""]
    np.testing.assert_array_equal(t.texts_to_matrix(texts), [
        [0, 1, 1, 1, 0, 0, 0], [0, 1, 0, 0, 1, 1, 1], [0, 1, 0, 0, 0, 0, 0],
        [0] * 7])
    count = t.texts_to_matrix(texts, mode="count")
    assert count.dtype == np.float64 and count.shape == (4, 7)
    assert count[2].tolist() == [0, 2, 0, 0, 0, 0, 0]
    freq = t.texts_to_matrix(texts, mode="freq")
    np.testing.assert_allclose(freq[1], [0, .25, 0, 0, .25, .25, .25])
    np.testing.assert_allclose(freq[2], [0, 1, 0, 0, 0, 0, 0])
    tfidf = t.texts_to_matrix(texts, mode="tfidf")
    # (1 + log count) * log(1 + document_count / (1 + docs of the word)); 4 documents
    idf = {1: np.log(1 + 4 / 4), 2: np.log(1 + 4 / 3), 6: np.log(1 + 4 / 2)}
    np.testing.assert_allclose(tfidf[0], [0, idf[1], idf[2], idf[2], 0, 0, 0])
    np.testing.assert_allclose(tfidf[1][6], idf[6])
    np.testing.assert_allclose(tfidf[2][1], (1 + np.log(2)) * idf[1])
    # freq counts indices >= num_words in the length; index 0 and unknown indices
    m = t.sequences_to_matrix([[1, 1, 2, 50], [], [3, 0]], mode="tfidf")
    np.testing.assert_allclose(m, [
        [0, (1 + np.log(2)) * idf[1], idf[2], 0, 0, 0, 0], [0] * 7,
        [np.log(1 + 4 / 1), 0, 0, idf[2], 0, 0, 0]])
    t3 = T.Tokenizer(num_words=3)
    t3.fit_on_texts(TIES)
    np.testing.assert_allclose(t3.sequences_to_matrix([[1, 2, 5, 5]], mode="freq"),
                               [[0, .25, .25]])
    with pytest.raises(ValueError, match="Unknown vectorization mode"):
        t.texts_to_matrix(texts, mode="bogus")
    assert t.texts_to_matrix([""], mode="bogus").tolist() == [[0.0] * 7]


def test_matrix_errors_and_fit_on_sequences():
    with pytest.raises(ValueError, match="Specify a dimension"):
        T.Tokenizer().sequences_to_matrix([[1]])
    t = T.Tokenizer(num_words=5)
    with pytest.raises(ValueError, match="tfidf mode"):
        t.sequences_to_matrix([[1]], mode="tfidf")
    assert t.sequences_to_matrix([[1, 1, 7], []], mode="count").tolist() == [
        [0, 2, 0, 0, 0], [0, 0, 0, 0, 0]]
    t.fit_on_sequences([[1, 2, 2], [3], [1, 4]])
    assert t.document_count == 3
    assert dict(t.index_docs) == {1: 2, 2: 1, 3: 1, 4: 1}
    np.testing.assert_allclose(
        t.sequences_to_matrix([[1, 2, 2, 9], [4]], mode="tfidf"),
        [[0, np.log(1 + 3 / 3), (1 + np.log(2)) * np.log(1 + 3 / 2), 0, 0],
         [0, 0, 0, 0, np.log(1 + 3 / 2)]])


def test_constructor_kwargs():
    assert T.Tokenizer(document_count=7).document_count == 7
    with pytest.warns(UserWarning, match="nb_words"):
        assert T.Tokenizer(nb_words=3).num_words == 3
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        T.Tokenizer(foo=1)


def test_config_and_json_round_trip():
    t = T.Tokenizer(num_words=4, oov_token="<OOV>")
    t.fit_on_texts(TIES)
    cfg = t.get_config()
    assert sorted(cfg) == ["char_level", "document_count", "filters", "index_docs",
                           "index_word", "lower", "num_words", "oov_token", "split",
                           "word_counts", "word_docs", "word_index"]
    assert cfg["word_counts"] == '{"b": 2, "a": 3, "c": 2, "d": 2, "e": 2, "f": 1}'
    assert cfg["word_index"] == ('{"<OOV>": 1, "a": 2, "b": 3, "c": 4, "d": 5, "e": 6, '
                                 '"f": 7}')
    assert json.loads(cfg["index_word"])["1"] == "<OOV>"
    assert json.loads(cfg["index_docs"]) == {"2": 3, "3": 2, "4": 2, "5": 2, "6": 2,
                                             "7": 1}
    js = t.to_json()
    assert json.loads(js)["class_name"] == "Tokenizer"
    assert "\n" in t.to_json(indent=2)
    t2 = T.tokenizer_from_json(js)
    assert t2.num_words == 4 and t2.oov_token == "<OOV>" and t2.document_count == 4
    assert list(t2.word_counts.items()) == list(t.word_counts.items())
    assert t2.word_index == t.word_index and t2.index_word == t.index_word
    assert dict(t2.index_docs) == dict(t.index_docs)
    assert t2.texts_to_sequences(["b a c zzz"]) == [[3, 2, 1, 1]]
    np.testing.assert_allclose(t2.texts_to_matrix(TIES, mode="tfidf"),
                               t.texts_to_matrix(TIES, mode="tfidf"))
    assert json.loads(T.Tokenizer().to_json())["config"]["word_index"] == "{}"


def test_hashing_trick_and_one_hot():
    def md5(w):
        return int(hashlib.md5(w.encode()).hexdigest(), 16)
    text = "Hello, World! It's  a TEST."
    words = ["hello", "world", "it's", "a", "test"]
    assert T.hashing_trick(text, 10, hash_function="md5") == [8, 9, 2, 2, 8]
    assert T.hashing_trick(text, 10, hash_function="md5") == [md5(w) % 9 + 1 for w in words]
    assert T.hashing_trick(text, 7, hash_function=len) == [6, 6, 5, 2, 5]
    assert T.hashing_trick("ab c", 7, hash_function=len, analyzer=list) == [2, 2, 2, 2]
    assert T.hashing_trick("", 7, hash_function="md5") == []
    # None and one_hot use Python's hash (salted per process): stable within a process
    assert T.hashing_trick(text, 50) == [hash(w) % 49 + 1 for w in words]
    assert T.one_hot(text, 50) == [hash(w) % 49 + 1 for w in words]
    assert all(1 <= i <= 49 for i in T.one_hot(text, 50))
