"""tf.io.RaggedFeature in tf.io.parse_example / parse_single_example (values and errors
recorded from TF 2.21 compat.v1 graph mode)."""
import numpy as np
import pytest

import tensorweave as tf

RF = tf.io.RaggedFeature
# Examples serialized by TF. Example 0: v=[1..5], lens=[2,0,3], splits=[0,2,2,5],
# starts=[0,2,2], limits=[2,2,5], rowids=[0,0,2,2,2], outer=[1,2]. Example 1: v=[6,7],
# lens=[2], splits=[0,2], starts=[0], limits=[2], rowids=[0,0], outer=[1]. Example 2:
# v=[8], splits=[0], other features empty (its partitions do not fit its values).
EXAMPLES = [bytes.fromhex(h) for h in (
    "0a90010a110a0673746172747312071a050a030002020a110a066c696d69747312071a050a03020205"
    "0a1d0a0176121812160a140000803f0000004000004040000080400000a0400a120a0673706c697473"
    "12081a060a04000202050a0f0a056f7574657212061a040a0201020a0f0a046c656e7312071a050a03"
    "0200030a130a06726f7769647312091a070a050000020202",
    "0a780a0f0a0673746172747312051a030a01000a0f0a066c696d69747312051a030a01020a110a0176"
    "120c120a0a080000c0400000e0400a100a0673706c69747312061a040a0200020a0e0a056f75746572"
    "12051a030a01010a0d0a046c656e7312051a030a01020a100a06726f7769647312061a040a020000",
    "0a630a0c0a0673746172747312021a000a0c0a066c696d69747312021a000a0d0a0176120812060a04"
    "000000410a0f0a0673706c69747312051a030a01000a0b0a056f7574657212021a000a0a0a046c656e"
    "7312021a000a0c0a06726f7769647312021a00")]
ROWS = [[[1.0, 2.0], [], [3.0, 4.0, 5.0]], [[6.0, 7.0]]]


def _parse(sess, features, examples=EXAMPLES[:2]):
    parsed = tf.io.parse_example(tf.constant(examples), features)
    return parsed, {k: sess.run(v).to_list() for k, v in parsed.items()}


def test_values_only(sess):
    parsed, got = _parse(sess, {"v": RF(tf.float32), "x": RF(tf.float32, value_key="v"),
                                "lens": RF(tf.int64)})
    assert got == {"v": [[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0]],
                   "x": [[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0]], "lens": [[2, 0, 3], [2]]}
    assert parsed["v"].row_splits.dtype == tf.int32 and parsed["lens"].dtype == tf.int64
    assert parsed["v"].shape.as_list() == [2, None]
    _, missing = _parse(sess, {"nope": RF(tf.float32)})
    assert missing == {"nope": [[], []]}


@pytest.mark.parametrize("partition", [
    RF.RowLengths("lens"), RF.RowSplits("splits"), RF.RowStarts("starts"),
    RF.RowLimits("limits"), RF.ValueRowIds("rowids")])
def test_each_partition_kind(sess, partition):
    parsed, got = _parse(sess, {"v": RF(tf.float32, partitions=[partition])})
    assert got == {"v": ROWS}
    assert set(parsed) == {"v"}       # the partition feature is not a result


def test_nested_and_uniform_partitions(sess):
    _, got = _parse(sess, {"v": RF(tf.float32, partitions=[RF.RowLengths("outer"),
                                                           RF.RowLengths("lens")])})
    assert got == {"v": [[[[1.0, 2.0]], [[], [3.0, 4.0, 5.0]]], [[[6.0, 7.0]]]]}
    parsed, got = _parse(sess, {"v": RF(tf.float32, partitions=[RF.UniformRowLength(2)])},
                         EXAMPLES[1:2])
    assert got == {"v": [[[6.0, 7.0]]]} and parsed["v"].shape.as_list() == [1, None, 2]
    _, got = _parse(sess, {"v": RF(tf.float32, partitions=[RF.UniformRowLength(1),
                                                           RF.RowLengths("lens")])},
                    EXAMPLES[1:2])
    assert got == {"v": [[[[6.0, 7.0]]]]}
    _, got = _parse(sess, {"v": RF(tf.float32, partitions=[RF.RowLengths("lens"),
                                                           RF.UniformRowLength(1)])})
    assert got == {"v": [[[[1.0], [2.0]], [], [[3.0], [4.0], [5.0]]], [[[6.0], [7.0]]]]}
    parsed, got = _parse(sess, {"v": RF(tf.float32, partitions=[RF.RowLengths("lens")],
                                        row_splits_dtype=tf.int64)})
    assert got == {"v": ROWS} and parsed["v"].row_splits.dtype == tf.int64


def test_parse_single_example(sess):
    one = tf.constant(EXAMPLES[0])
    plain = tf.io.parse_single_example(one, {"v": RF(tf.float32)})["v"]
    assert isinstance(plain, tf.Tensor)
    np.testing.assert_array_equal(sess.run(plain), [1, 2, 3, 4, 5])
    for partitions in ([RF.RowLengths("lens")], [RF.ValueRowIds("rowids")]):
        rows = tf.io.parse_single_example(one, {"v": RF(tf.float32, partitions=partitions)})
        assert sess.run(rows["v"]).to_list() == ROWS[0]
    nested = tf.io.parse_single_example(one, {"v": RF(tf.float32, partitions=[
        RF.RowLengths("outer"), RF.RowSplits("splits")])})
    assert sess.run(nested["v"]).to_list() == [[[1.0, 2.0]], [[], [3.0, 4.0, 5.0]]]


def test_partitions_that_do_not_fit(sess):
    _, got = _parse(sess, {"v": RF(tf.float32, partitions=[RF.RowLengths("lens")])},
                    EXAMPLES)
    assert got == {"v": ROWS + [[]]}     # unchecked without validate, as TF
    checked = tf.io.parse_example(tf.constant(EXAMPLES), {"v": RF(
        tf.float32, partitions=[RF.RowLengths("lens")], validate=True)})
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(checked["v"])
    uneven = tf.io.parse_example(tf.constant(EXAMPLES[:2]), {"v": RF(
        tf.float32, partitions=[RF.UniformRowLength(2)])})
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(uneven["v"])
    wrong_type = tf.io.parse_example(tf.constant(EXAMPLES[:2]), {"v": RF(tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(wrong_type["v"])


def test_key_conflicts():
    serialized = tf.constant([b""])
    with pytest.raises(ValueError, match=r"Ragged and sparse keys must not intersect; "
                                         r"ragged_keys: \['v', 'lens'\], sparse_keys: "
                                         r"\['lens'\], intersection: \{'lens'\}"):
        tf.io.parse_example(serialized, {"v": RF(tf.float32, partitions=[
            RF.RowLengths("lens")]), "lens": tf.io.VarLenFeature(tf.int64)})
    with pytest.raises(ValueError, match=r"sparse_keys: \['idx', 'v'\]"):
        tf.io.parse_example(serialized, {"v": RF(tf.float32), "w": tf.io.SparseFeature(
            "idx", "v", tf.float32, 10)})
    with pytest.raises(ValueError, match="Dense and ragged keys must not intersect"):
        tf.io.parse_example(serialized, {"v": RF(tf.float32, partitions=[
            RF.RowLengths("lens")]), "lens": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(ValueError, match="Conflicting type"):
        tf.io.parse_example(serialized, {"v": RF(tf.float32),
                                         "w": RF(tf.int64, value_key="v")})


def test_constructor():
    feature = RF(tf.float32, partitions=[RF.RowLengths("lens"), RF.UniformRowLength(2)])
    assert repr(feature) == (
        "RaggedFeature(dtype=tf.float32, value_key=None, partitions=(RowLengths(key='lens'),"
        " UniformRowLength(length=2)), row_splits_dtype=tf.int32, validate=False)")
    assert RF._fields == ("dtype", "value_key", "partitions", "row_splits_dtype", "validate")
    assert RF(tf.float32) == RF(tf.float32)
    for bad, error, message in [
            (lambda: RF(tf.int32), ValueError, "must be int64, float32, or bytes"),
            (lambda: RF(tf.float32, row_splits_dtype=tf.float32), ValueError,
             "must be int32 or int64"),
            (lambda: RF(tf.float32, partitions=RF.RowLengths("x")), TypeError, "partitions"),
            (lambda: RF(tf.float32, partitions=["x"]), TypeError, "partitions"),
            (lambda: RF(tf.float32, value_key=3), ValueError, "must be a string; got 3"),
            (lambda: RF(tf.float32, value_key=""), ValueError, "must not be empty"),
            (lambda: RF(tf.float32, validate=1), TypeError, "must be a bool; got 1")]:
        with pytest.raises(error, match=message):
            bad()
