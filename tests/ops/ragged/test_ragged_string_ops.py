"""String ops with ragged results or inputs: tf.strings.split with
result_type="RaggedTensor", unicode decode/split/encode of ranked strings (values
recorded from TF 2.21 compat.v1 graph mode)."""
import tensorweave as tf

WORDS = [u"h\u00e9llo", u"", u"ab"]
POINTS = [[104, 233, 108, 108, 111], [], [97, 98]]


def test_unicode_decode_of_ranked_strings(sess):
    decoded = tf.strings.unicode_decode(WORDS, "UTF-8")
    assert decoded.ragged_rank == 1 and decoded.dtype == tf.int32
    assert sess.run(decoded).to_list() == POINTS
    matrix = tf.strings.unicode_decode([[u"ab", u"c"], [u"", u"\u00e9"]], "UTF-8")
    assert sess.run(matrix).to_list() == [[[97, 98], [99]], [[], [233]]]
    points, offsets = sess.run(tf.strings.unicode_decode_with_offsets(WORDS, "UTF-8"))
    assert points.to_list() == POINTS
    assert offsets.to_list() == [[0, 1, 3, 4, 5], [], [0, 1]]


def test_unicode_split_of_ranked_strings(sess):
    chars = [[b"h", b"\xc3\xa9", b"l", b"l", b"o"], [], [b"a", b"b"]]
    assert sess.run(tf.strings.unicode_split(WORDS, "UTF-8")).to_list() == chars
    split, offsets = sess.run(tf.strings.unicode_split_with_offsets(WORDS, "UTF-8"))
    assert split.to_list() == chars and offsets.to_list() == [[0, 1, 3, 4, 5], [], [0, 1]]


def test_unicode_encode_of_ragged_code_points(sess):
    rows = tf.ragged.constant([[104, 233], [], [97]])
    assert sess.run(tf.strings.unicode_encode(rows, "UTF-8")).tolist() == [
        b"h\xc3\xa9", b"", b"a"]
    nested = tf.ragged.constant([[[104, 233], []], [[97]]])
    assert sess.run(tf.strings.unicode_encode(nested, "UTF-8")).to_list() == [
        [b"h\xc3\xa9", b""], [b"a"]]


def _rows(sess, x):
    return sess.run(x).to_list()


def test_string_splits_to_ragged(sess):
    ragged = {"result_type": "RaggedTensor"}
    split = tf.strings.split
    assert _rows(sess, split(["a b", "c"], **ragged)) == [[b"a", b"b"], [b"c"]]
    assert _rows(sess, split([["a b", "c"], ["d", ""]], **ragged)) == [
        [[b"a", b"b"], [b"c"]], [[b"d"], []]]
    assert _rows(sess, split("a b", **ragged)) == [[b"a", b"b"]]
    assert _rows(sess, split(["a,b,,c"], sep=",", **ragged)) == [[b"a", b"b", b"", b"c"]]
    assert _rows(sess, split(["a b c"], maxsplit=1, **ragged)) == [[b"a", b"b c"]]
    assert _rows(sess, tf.string_split(["a b"], **ragged)) == [[b"a", b"b"]]


def test_ngrams_of_ragged_rows(sess):
    words = tf.ragged.constant([["a", "b", "c"], ["d"]])
    assert _rows(sess, tf.strings.ngrams(words, 2)) == [[b"a b", b"b c"], []]
    assert _rows(sess, tf.strings.ngrams(words, [1, 2], pad_values="#")) == [
        [b"a", b"b", b"c", b"# a", b"a b", b"b c", b"c #"], [b"d", b"# d", b"d #"]]
    assert _rows(sess, tf.strings.ngrams(words, 3, preserve_short_sequences=True)) == [
        [b"a b c"], [b"d"]]
    nested = tf.ragged.constant([[["a", "b"], ["c"]], []])
    assert _rows(sess, tf.strings.ngrams(nested, 2, separator="-")) == [[[b"a-b"], []], []]


def test_bytes_split_of_ranked_strings(sess):
    assert _rows(sess, tf.strings.bytes_split(["ab", "", "c"])) == [[b"a", b"b"], [],
                                                                    [b"c"]]
    assert _rows(sess, tf.strings.bytes_split([["ab", "c"]])) == [[[b"a", b"b"], [b"c"]]]
