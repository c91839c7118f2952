"""base64, unsorted_segment_join, ngrams and bytes_split; expected values were checked
against TensorFlow 2.21."""
import base64

import pytest

import tensorweave as tf


def test_base64_round_trip_and_web_safe_alphabet(sess):
    data = [b"\xfb\xff\x00", b"ab", b"", bytes(range(256))]
    enc = tf.io.encode_base64(data)
    assert enc.shape.as_list() == [4] and tf.encode_base64 is tf.io.encode_base64
    got = sess.run(enc).tolist()
    assert got[:3] == [b"-_8A", b"YWI", b""]
    assert got[3] == base64.urlsafe_b64encode(data[3]).rstrip(b"=")
    assert sess.run(tf.io.encode_base64(data, pad=True)).tolist()[1] == b"YWI="
    dec = tf.io.decode_base64([["-_8A", "YWI"], ["YWI=", ""]])
    assert dec.shape.as_list() == [2, 2]
    assert sess.run(dec).tolist() == [[b"\xfb\xff\x00", b"ab"], [b"ab", b""]]
    assert sess.run(tf.decode_base64(enc)).tolist() == data


def test_base64_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid character"):
        sess.run(tf.io.decode_base64(["a+b/"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot be 1 modulo 4"):
        sess.run(tf.io.decode_base64(["abcde"]))


def test_unsorted_segment_join(sess):
    y = tf.strings.unsorted_segment_join(["a", "b", "c", "d"], [1, 0, 1, 3], 4, separator=":")
    assert y.shape.as_list() == [4]
    assert sess.run(y).tolist() == [b"b", b"a:c", b"", b"d"]
    z = tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [1, 1], 2)
    assert z.shape.as_list() == [2, 2]
    assert sess.run(z).tolist() == [[b"", b""], [b"ac", b"bd"]]
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not allowed to exceed"):
        sess.run(tf.strings.unsorted_segment_join(["a", "b"], p, 2), {p: [1, 5]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative values"):
        sess.run(tf.strings.unsorted_segment_join(["a", "b"], p, 2), {p: [1, -1]})


def test_ngrams(sess):
    def run(*args, **kwargs):
        return sess.run(tf.strings.ngrams(*args, **kwargs)).tolist()
    assert run(["a", "b", "c", "d"], 2) == [b"a b", b"b c", b"c d"]
    assert run(["a", "b", "c"], 3, pad_values=("<s>", "</s>"), padding_width=1) == \
        [b"<s> a b", b"a b c", b"b c </s>"]
    assert run(["a", "b"], (1, 3), pad_values="P") == \
        [b"a", b"b", b"P P a", b"P a b", b"a b P", b"b P P"]
    assert run(["a", "b"], 3, preserve_short_sequences=True) == [b"a b"]
    assert run(["a", "b"], 3) == []
    assert run(["a", "b", "c"], 2, separator="+") == [b"a+b", b"b+c"]
    two = tf.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], 2)
    assert two.shape.as_list() == [2, None]
    assert sess.run(two).tolist() == [[b"a b", b"b c"], [b"d e", b"e f"]]
    with pytest.raises(ValueError, match="padding_width must be greater than 0"):
        tf.strings.ngrams(["a"], 2, pad_values="x", padding_width=0)
    with pytest.raises(ValueError, match="pad_values must be provided"):
        tf.strings.ngrams(["a"], 2, padding_width=1)
    with pytest.raises(ValueError, match="rank>0"):
        tf.strings.ngrams("a", 2)


def test_bytes_split(sess):
    y = tf.strings.bytes_split("abc")
    assert y.shape.as_list() == [None]
    assert sess.run(y).tolist() == [b"a", b"b", b"c"]
    assert sess.run(tf.strings.bytes_split("")).tolist() == []
    with pytest.raises(ValueError, match="statically-known rank"):
        tf.strings.bytes_split(tf.placeholder(tf.string))


def test_ngrams_of_no_strings_are_none_even_padded(sess):
    # TF's kernel gives no n-grams at all when the data has no strings
    for pad in (None, "#", ("<s>", "</s>")):
        out = sess.run(tf.strings.ngrams(tf.zeros([0], tf.string), 2, pad_values=pad))
        assert out.shape == (0,)
    out = sess.run(tf.strings.ngrams(tf.zeros([2, 0], tf.string), [1, 3], pad_values="#",
                                     preserve_short_sequences=True))
    assert out.shape == (2, 0)
    # a row with strings is padded as before
    assert sess.run(tf.strings.ngrams(["a"], 3, pad_values="#")).tolist() == \
        [b"# # a", b"# a #", b"a # #"]


def test_ngram_widths_must_be_positive():
    for width in (0, -1, [2, 0]):
        with pytest.raises(ValueError, match="All ngram_widths must be greater than 0"):
            tf.strings.ngrams(["a", "b"], width)
