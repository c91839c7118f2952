"""unicode_transcode, unicode_decode(_with_offsets), unicode_encode and
unicode_split(_with_offsets); expected values were checked against TensorFlow 2.21."""
import pytest

import tensorweave as tf


def test_transcode(sess):
    y = tf.strings.unicode_transcode(["héllo", "\x00ab"], "UTF-8", "UTF-16-BE")
    assert y.shape.as_list() == [2] and y.op.type == "UnicodeTranscode"
    assert sess.run(y).tolist() == ["héllo".encode("utf-16-be"), b"\x00\x00\x00a\x00b"]
    back = tf.strings.unicode_transcode([b"\x00h\x00\xe9"], "UTF-16-BE", "UTF-8")
    assert sess.run(back).tolist() == ["hé".encode()]
    bad = [b"a\xffb"]

    def run(**kw):
        return sess.run(tf.strings.unicode_transcode(bad, "UTF-8", "UTF-8", **kw)).tolist()
    assert run() == [b"a\xef\xbf\xbdb"]
    assert run(replacement_char=63) == [b"a?b"]
    assert run(errors="ignore") == [b"ab"]
    assert sess.run(tf.strings.unicode_transcode([b"a\x01b"], "UTF-8", "UTF-8",
                                                 replace_control_characters=True)).tolist() \
        == [b"a\xef\xbf\xbdb"]
    assert sess.run(tf.strings.unicode_transcode([b"\xe9"], "latin1", "UTF-32-BE")).tolist() \
        == ["é".encode("utf-32-be")]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid formatting"):
        run(errors="strict")
    with pytest.raises(ValueError, match="not in"):
        tf.strings.unicode_transcode(bad, "UTF-8", "latin1")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not create converter"):
        sess.run(tf.strings.unicode_transcode(bad, "no-such-codec", "UTF-8"))


def test_decode_and_offsets(sess):
    d = tf.strings.unicode_decode("héllo", "UTF-8")
    assert d.dtype == tf.int32 and d.shape.as_list() == [None]
    assert sess.run(d).tolist() == [104, 233, 108, 108, 111]
    assert sess.run(tf.strings.unicode_decode(b"a\xffb", "UTF-8")).tolist() == [97, 65533, 98]
    assert sess.run(tf.strings.unicode_decode(b"a\xffb", "UTF-8", errors="ignore")).tolist() \
        == [97, 98]
    cps, offs = sess.run(tf.strings.unicode_decode_with_offsets(b"h\xc3\xa9\xffl", "UTF-8"))
    assert cps.tolist() == [104, 233, 65533, 108] and offs.tolist() == [0, 1, 3, 4]
    cps16 = sess.run(tf.strings.unicode_decode("a\U0001F600".encode("utf-16-be"),
                                               "UTF-16-BE"))
    assert cps16.tolist() == [97, 0x1F600]
    with pytest.raises(ValueError, match="Rank of `input` must be statically known"):
        tf.strings.unicode_decode(tf.placeholder(tf.string), "UTF-8")


def test_encode(sess):
    assert sess.run(tf.strings.unicode_encode([104, 233, 108], "UTF-8")) == "hél".encode()
    assert sess.run(tf.strings.unicode_encode([104, 233, 0x1F600], "UTF-16-BE")) == \
        b"\x00h\x00\xe9\xd8=\xde\x00"
    assert sess.run(tf.strings.unicode_encode([104, -5, 0x110000], "UTF-8")) == \
        b"h\xef\xbf\xbd\xef\xbf\xbd"
    two = tf.strings.unicode_encode([[104, 233], [65, 66]], "UTF-8")
    assert two.shape.as_list() == [2]
    assert sess.run(two).tolist() == ["hé".encode(), b"AB"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid code point"):
        sess.run(tf.strings.unicode_encode([0xD800], "UTF-8", errors="strict"))
    with pytest.raises(ValueError, match="errors"):
        tf.strings.unicode_encode([1], "UTF-8", errors="bad")


def test_split(sess):
    assert sess.run(tf.strings.unicode_split("héllo", "UTF-8")).tolist() == \
        [b"h", "é".encode(), b"l", b"l", b"o"]
    chars, offsets = sess.run(tf.strings.unicode_split_with_offsets("héllo", "UTF-8"))
    assert chars.tolist()[1] == "é".encode() and offsets.tolist() == [0, 1, 3, 4, 5]
