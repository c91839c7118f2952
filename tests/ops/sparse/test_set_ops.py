"""tf.sets: group-by-group set operations, against Python's sets (the cases below were
also run under TF 2.21, with the same indices, values and shapes)."""
import numpy as np
import pytest

import tensorweave as tf


def _groups(st):
    """{group index: sorted members} of a SparseTensorValue of sets."""
    out = {}
    for idx, v in zip(st.indices.tolist(), st.values.tolist()):
        out.setdefault(tuple(idx[:-1]), []).append(v)
    return out


def _reference(a_rows, b_rows, op):
    out = {}
    for g, (ra, rb) in enumerate(zip(a_rows, b_rows)):
        r = sorted({"intersection": set.__and__, "union": set.__or__,
                    "a-b": set.__sub__, "b-a": lambda x, y: y - x}[op](set(ra), set(rb)))
        if r:
            out[(g,)] = r
    return out


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_dense_sets_against_python_sets(sess, dtype):
    rs = np.random.RandomState(3)
    a = rs.randint(0, 6, size=(5, 4)).astype(dtype)
    b = rs.randint(0, 6, size=(5, 3)).astype(dtype)
    cases = [(tf.sets.intersection(a, b), "intersection"), (tf.sets.union(a, b), "union"),
             (tf.sets.difference(a, b), "a-b"),
             (tf.sets.difference(a, b, aminusb=False), "b-a")]
    for st, op in cases:
        got = sess.run(st)
        want = _reference(a.tolist(), b.tolist(), op)
        assert _groups(got) == want
        assert got.values.dtype == dtype
        width = max((len(r) for r in want.values()), default=0)
        assert got.dense_shape.tolist() == [5, width]


def test_sparse_sets_sizes_and_mixed_operands(sess):
    a = tf.constant([[1, 2, 3, 2], [4, 5, 4, 0]])
    sp = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [3, 1, 9], [2, 3])
    assert sess.run(tf.sets.size(sp)).tolist() == [2, 1]
    assert sess.run(tf.sets.set_size(tf.SparseTensor([[0, 0], [0, 1]], [7, 7], [1, 2]))
                    ).tolist() == [1]
    union = sess.run(tf.sets.union(a, sp))
    assert _groups(union) == {(0,): [1, 2, 3], (1,): [0, 4, 5, 9]}
    # a SparseTensor first is flipped, so "a - b" keeps its meaning
    diff = sess.run(tf.sets.difference(sp, a))
    assert _groups(diff) == {(1,): [9]} and diff.dense_shape.tolist() == [2, 1]
    inter = sess.run(tf.sets.set_intersection(
        sp, tf.SparseTensor([[0, 0], [1, 1]], [1, 9], [2, 2])))
    assert _groups(inter) == {(0,): [1], (1,): [9]}
    empty = sess.run(tf.sets.intersection([[1, 2]], [[3, 4]]))
    assert empty.indices.shape == (0, 2) and empty.dense_shape.tolist() == [1, 0]


def test_higher_rank_and_string_sets(sess):
    got = sess.run(tf.sets.intersection(tf.constant([[[1, 1], [2, 3]]]),
                                        tf.constant([[[1, 5], [3, 3]]])))
    assert got.indices.tolist() == [[0, 0, 0], [0, 1, 0]] and got.values.tolist() == [1, 3]
    assert got.dense_shape.tolist() == [1, 2, 1]
    words = sess.run(tf.sets.union(tf.constant([["a", "b", "a"]]),
                                   tf.constant([["c", "a", ""]])))
    assert words.values.tolist() == [b"", b"a", b"b", b"c"]


def test_set_errors(sess):
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.sets.union(tf.constant([1, 2]), tf.constant([1]))
    with pytest.raises(TypeError, match="'a' has invalid dtype"):
        tf.sets.union(tf.constant([[1.0, 2.0]]), tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are "
                       "1 and 2"):
        tf.sets.union(tf.constant([[1, 2]]), tf.constant([[1], [2]]))
    with pytest.raises(TypeError, match="Expected `SparseTensor`"):
        tf.sets.size(tf.constant([[1]]))
    unordered = tf.sets.size(tf.SparseTensor([[0, 1], [0, 0]], [3, 1], [1, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[0,0\] is "
                       "out of order"):
        sess.run(unordered)
    assert sess.run(tf.sets.size(tf.SparseTensor([[0, 1], [0, 0]], [3, 1], [1, 3]),
                                 validate_indices=False)).tolist() == [2]


def test_static_rank_checks_as_tf():
    """TF's shape functions: equal ranks for two dense sets, a sparse operand's rank equal
    to the other's, rank >= 2 for the first sparse operand of known rank."""
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 3"):
        tf.sets.union(tf.constant([[1, 2]]), tf.constant([[[1]]]))
    rank3 = tf.SparseTensor([[0, 0, 0]], [2], [2, 3, 1])
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.sets.union(tf.constant([[1, 2, 3], [3, 4, 5]]), rank3)
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.sets.union(tf.SparseTensor([[0, 0]], [1], [2, 3]), rank3)
    with pytest.raises(ValueError, match=r"Input 0, expected rank >= 2, got 1\."):
        tf.sets.union(tf.SparseTensor([[0]], [1], [3]), tf.SparseTensor([[0]], [1], [3]))
    placeholder = tf.placeholder(tf.int32)
    assert tf.sets.union(placeholder, rank3).indices.shape.as_list() == [None, 3]


def test_run_time_shape_errors_as_tf(sess):
    p, q = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Mismatched shapes \[1\] vs "
                       r"\[2\]"):
        sess.run(tf.sets.union(tf.constant([[1, 2]]), q), {q: [[1], [2]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape \[2\] has rank 1 < 2"):
        sess.run(tf.sets.union(p, q), {p: [1, 2], q: [1, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^Invalid rank 1\."):
        sess.run(tf.sets.size(tf.SparseTensor(tf.placeholder(tf.int64),
                                              tf.constant([1]), tf.constant([3], tf.int64))),
                 {"Placeholder_2:0": [[0]]})
    a, b = tf.SparseTensor([[0, 0]], [1], [2, 3]), tf.SparseTensor([[0, 0]], [1], [3, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Mismatched shapes \[2\] vs "
                       r"\[3\]"):
        sess.run(tf.sets.intersection(a, b))
