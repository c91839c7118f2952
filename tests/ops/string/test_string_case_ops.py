"""lower/upper/strip, regex_full_match and regex_replace (RE2 semantics on Python's re);
expected values were checked against TensorFlow 2.21."""
import pytest

import tensorweave as tf


def test_lower_upper(sess):
    x = tf.constant([["ÀBc", "XY"], ["", "ß"]])
    lo = tf.strings.lower(x)
    assert lo.shape.as_list() == [2, 2] and lo.dtype == tf.string and lo.op.type == "StringLower"
    assert sess.run(lo).tolist() == [["ÀBc".encode()[:2] + b"bc", b"xy"], [b"", "ß".encode()]]
    assert sess.run(tf.strings.lower(x, encoding="utf-8")).tolist() == \
        [["àbc".encode(), b"xy"], [b"", "ß".encode()]]
    assert sess.run(tf.strings.upper(["àbc ß"], encoding="utf-8")).tolist() == \
        ["ÀBC SS".encode()]
    assert sess.run(tf.strings.upper(["àbc"])).tolist() == ["àBC".encode()]
    # TF's kernel checks the encoding when it runs, and takes only "" and "utf-8"
    for encoding in ("latin-1", "UTF-8", "utf8"):
        bad = tf.strings.lower(x, encoding=encoding)
        with pytest.raises(tf.errors.InvalidArgumentError, match="only utf-8"):
            sess.run(bad)


def test_case_utf8_replaces_invalid_bytes(sess):
    # ICU (TF) reads each invalid UTF-8 sequence as U+FFFD
    x = tf.constant([b"ab\xffc\xe2\x82", b"\xc3\xa0\xc3"])
    fffd = "\ufffd".encode()
    assert sess.run(tf.strings.upper(x, encoding="utf-8")).tolist() == \
        [b"AB" + fffd + b"C" + fffd, "À".encode() + fffd]
    assert sess.run(tf.strings.lower(x, encoding="utf-8")).tolist() == \
        [b"ab" + fffd + b"c" + fffd, "à".encode() + fffd]
    # without an encoding the bytes are kept
    assert sess.run(tf.strings.upper(x)).tolist() == [b"AB\xffC\xe2\x82", b"\xc3\xa0\xc3"]


def test_strip(sess):
    y = tf.strings.strip([" \t a b \n", "\x0bx\x0c", ""])
    assert sess.run(y).tolist() == [b"a b", b"x", b""]
    assert tf.string_strip is tf.strings.strip


def test_regex_full_match(sess):
    s = tf.strings.regex_full_match(["abc", "ab", "ÀB"], "a.c|.B")
    assert s.op.type == "StaticRegexFullMatch" and s.dtype == tf.bool
    assert sess.run(s).tolist() == [True, False, True]  # "." is one UTF-8 character
    p = tf.placeholder(tf.string, [])
    d = tf.strings.regex_full_match([["abc"], ["abcd"]], p)
    assert d.op.type == "RegexFullMatch" and d.shape.as_list() == [2, 1]
    assert sess.run(d, {p: "a.c"}).tolist() == [[True], [False]]
    assert sess.run(d, {p: r"a\w+\z"}).tolist() == [[True], [True]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern: a\\(c"):
        sess.run(d, {p: "a(c"})
    with pytest.raises(tf.errors.InvalidArgumentError, match="invalid perl operator"):
        sess.run(d, {p: "a(?!b)"})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"does not support Unicode"):
        sess.run(d, {p: r"\pL+"})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"POSIX classes"):
        sess.run(d, {p: "[[:alpha:]]+"})
    with pytest.raises(ValueError, match="rank 0"):
        tf.strings.regex_full_match(["a"], tf.constant(["a", "b"]))


def test_regex_replace(sess):
    y = tf.strings.regex_replace(["aaa bab", "xyz"], "a(b?)", r"<\1\0>")
    assert y.op.type == "StaticRegexReplace" and y.shape.as_list() == [2]
    assert sess.run(y).tolist() == [b"<a><a><a> b<bab>", b"xyz"]
    assert sess.run(tf.regex_replace(["aaa bab"], "a", "X", replace_global=False)).tolist() \
        == [b"Xaa bab"]
    assert sess.run(tf.strings.regex_replace(["abc"], "x*", "-")).tolist() == [b"-a-b-c-"]
    p, r = tf.placeholder(tf.string, []), tf.placeholder(tf.string, [])
    d = tf.strings.regex_replace([["aaa"], ["bab"]], p, r)
    assert d.op.type == "RegexReplace" and d.shape.as_list() == [2, 1]
    assert sess.run(d, {p: "a", r: "\\\\"}).tolist() == [[b"\\\\\\"], [b"b\\b"]]
    assert sess.run(d, {p: "(a)(b)?", r: "[\\2\\1]"}).tolist() == [[b"[a][a][a]"], [b"b[ba]"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="only has 0 parenthesized"):
        sess.run(d, {p: "a", r: "\\2"})
    with pytest.raises(tf.errors.InvalidArgumentError, match="invalid rewrite pattern"):
        sess.run(d, {p: "a", r: "\\x"})
    # bytes that are not UTF-8 pass through untouched
    assert sess.run(tf.strings.regex_replace([b"\xffa"], "a", "b")).tolist() == [b"\xffb"]
