"""tf.io.parse_sequence_example / parse_single_sequence_example and
FixedLenSequenceFeature (ops/io/sequence_parsing_ops.py); the expected values are TF's
(checked with the reference TensorFlow when written)."""
import numpy as np
import pytest

import tensorweave as tf


def _seq(ctx_len, toks, words=None):
    ex = tf.train.SequenceExample()
    ex.context.feature["len"].int64_list.value.append(ctx_len)
    fl = ex.feature_lists.feature_list["tok"]
    for t in toks:
        fl.feature.add().int64_list.value.extend(t)
    var = ex.feature_lists.feature_list["var"]
    for t in toks:
        var.feature.add().float_list.value.extend([float(v) for v in t[:ctx_len]])
    for w in words or []:
        ex.feature_lists.feature_list["w"].feature.add().bytes_list.value.append(w)
    return ex.SerializeToString()


_BATCH = [_seq(1, [[1, 2], [3, 4], [5, 6]], [b"a", b"b", b"c"]), _seq(2, [[7, 8]], [b"d"])]


def test_parse_sequence_example(sess):
    context, lists, lengths = tf.io.parse_sequence_example(
        _BATCH,
        context_features={"len": tf.io.FixedLenFeature([], tf.int64),
                          "cv": tf.io.VarLenFeature(tf.int64),
                          "dflt": tf.io.FixedLenFeature([2], tf.float32, [0.5, 1.5])},
        sequence_features={"tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
                           "var": tf.io.VarLenFeature(tf.float32),
                           "w": tf.FixedLenSequenceFeature([], tf.string),
                           "miss": tf.io.FixedLenSequenceFeature([], tf.float32,
                                                                 allow_missing=True)})
    assert lists["tok"].shape.as_list() == [2, None, 2]
    assert isinstance(lists["var"], tf.SparseTensor) and isinstance(context["cv"],
                                                                    tf.SparseTensor)
    assert context["dflt"].shape.as_list() == [2, 2]
    assert sorted(lengths) == ["miss", "tok", "w"]
    c, f, n = sess.run([context, lists, lengths])
    np.testing.assert_array_equal(c["len"], [1, 2])
    np.testing.assert_array_equal(c["dflt"], [[0.5, 1.5], [0.5, 1.5]])
    assert c["cv"].indices.shape == (0, 2) and c["cv"].dense_shape.tolist() == [2, 0]
    np.testing.assert_array_equal(f["tok"], [[[1, 2], [3, 4], [5, 6]],
                                             [[7, 8], [0, 0], [0, 0]]])
    assert f["w"].tolist() == [[b"a", b"b", b"c"], [b"d", b"", b""]]
    np.testing.assert_array_equal(f["var"].indices, [[0, 0, 0], [0, 1, 0], [0, 2, 0],
                                                     [1, 0, 0], [1, 0, 1]])
    np.testing.assert_array_equal(f["var"].values, [1, 3, 5, 7, 8])
    np.testing.assert_array_equal(f["var"].dense_shape, [2, 3, 2])
    assert f["miss"].shape == (2, 0)
    np.testing.assert_array_equal(n["tok"], [3, 1])
    np.testing.assert_array_equal(n["miss"], [0, 0])


def test_parse_single_sequence_example(sess):
    context, lists = tf.io.parse_single_sequence_example(
        _BATCH[0], context_features={"len": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={"tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
                           "var": tf.io.VarLenFeature(tf.float32)})
    assert tf.parse_single_sequence_example is tf.io.parse_single_sequence_example
    assert context["len"].shape.as_list() == [] and lists["tok"].shape.as_list() == [None, 2]
    c, f = sess.run([context, lists])
    assert c["len"] == 1
    np.testing.assert_array_equal(f["tok"], [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(f["var"].indices, [[0, 0], [1, 0], [2, 0]])
    np.testing.assert_array_equal(f["var"].dense_shape, [3, 1])


def test_errors(sess):
    s = _BATCH[0]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Feature list 'nope' is required but could not be found"):
        sess.run(tf.io.parse_single_sequence_example(
            s, sequence_features={"nope": tf.io.FixedLenSequenceFeature([], tf.int64)}))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Key: tok, Index: 0.  Number of values != expected.  values "
                             r"size: 2 but output shape: \[3\]"):
        sess.run(tf.io.parse_single_sequence_example(
            s, sequence_features={"tok": tf.io.FixedLenSequenceFeature([3], tf.int64)}))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="^Name: <unknown>, Feature list: tok, Index: 0.  Data types "
                             "don't match. Expected type: float\n"):
        sess.run(tf.io.parse_single_sequence_example(
            s, sequence_features={"tok": tf.io.FixedLenSequenceFeature([2], tf.float32)}))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Inconsistent max number of "
                       "elements for feature absent: expected 1, but found 0"):
        sess.run(tf.io.parse_single_sequence_example(
            s, context_features={"absent": tf.io.FixedLenFeature([], tf.int64)}))
    with pytest.raises(ValueError, match="must be None"):
        tf.io.parse_sequence_example(
            [s], sequence_features={"tok": tf.io.FixedLenSequenceFeature([2], tf.int64,
                                                                         default_value=0)})
    with pytest.raises(ValueError, match="Both context_features and sequence_features are "
                       "None, but at least one should have values"):
        tf.io.parse_sequence_example([s])
    with pytest.raises(ValueError, match="scalar"):
        tf.io.parse_single_sequence_example(
            [s], sequence_features={"tok": tf.io.FixedLenSequenceFeature([2], tf.int64)})


def test_feature_namedtuple():
    f = tf.io.FixedLenSequenceFeature([2], tf.int64)
    assert f.shape == [2] and f.allow_missing is False and f.default_value is None
    assert tf.FixedLenSequenceFeature is tf.io.FixedLenSequenceFeature


def _context_only(values):
    ex = tf.train.SequenceExample()
    ex.context.feature["len"].int64_list.value.extend(values)
    return ex.SerializeToString()


def test_context_errors_as_tf_fast_parser(sess):
    # TF 2.21's messages: the largest count in the batch is checked first, then each
    # example; a missing required feature names no example; type errors name the context
    names = ["a", "b"]
    required = {"len": tf.io.FixedLenFeature([], tf.int64)}
    with pytest.raises(tf.errors.InvalidArgumentError, match="^Feature: len \\(data type: "
                       "int64\\) is required but could not be found"):
        sess.run(tf.io.parse_sequence_example(
            [_BATCH[0], tf.train.SequenceExample().SerializeToString()], required, {}))
    pair = {"len": tf.io.FixedLenFeature([2], tf.int64)}
    with pytest.raises(tf.errors.InvalidArgumentError, match="^Unexpected number of "
                       "elements in example b\n"):  # 1 value where the batch's max is 2
        sess.run(tf.io.parse_sequence_example([_context_only([1, 2]), _context_only([1])],
                                              pair, {}, example_names=names))
    with pytest.raises(tf.errors.InvalidArgumentError, match="^Inconsistent max number of "
                       "elements for feature len: expected 2, but found 3"):
        sess.run(tf.io.parse_sequence_example([_context_only([1, 2, 3])], pair, {}))
    with pytest.raises(tf.errors.InvalidArgumentError, match="^Name: a, Context feature: "
                       "len.  Data types don't match. Expected type: float\n"):
        sess.run(tf.io.parse_sequence_example(
            _BATCH, {"len": tf.io.FixedLenFeature([], tf.float32)}, {}, example_names=names))
    with pytest.raises(tf.errors.InvalidArgumentError, match="^Invalid protocol message "
                       "input, example id: b\n"):
        sess.run(tf.io.parse_sequence_example([_BATCH[0], b"\xff\xff"], required, {},
                                              example_names=names))
    with pytest.raises(ValueError, match="Unsupported FixedLenFeature .* for key 'tok'$"):
        tf.io.parse_single_sequence_example(_BATCH[0], {}, {
            "tok": tf.io.FixedLenFeature([], tf.int64)})
