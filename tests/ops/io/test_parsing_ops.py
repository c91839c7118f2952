"""tf.train.Example protos and parse_example / parse_single_example: wire compatibility
with records written by TensorFlow (tests/ops/data/tf_example_*.pb, written by TF 2.21's
tf.train.Example.SerializeToString(deterministic=True)), values, static shapes and the
error messages TF1 gives."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf

DATA = os.path.join(os.path.dirname(__file__), "data")
IAE = tf.errors.InvalidArgumentError


def _read(name):
    with open(os.path.join(DATA, name), "rb") as f:
        return f.read()


FULL = _read("tf_example_full.pb")        # age=[29] scores=[1.5,-2.25] name=[alice] tags=[x,y,z]
PARTIAL = _read("tf_example_partial.pb")  # age=[-7] scores=[0.5,4.0] tags=[]

FEATURES = {
    "age": tf.FixedLenFeature([], tf.int64),
    "scores": tf.FixedLenFeature([2], tf.float32),
    "name": tf.FixedLenFeature([], tf.string, default_value="anon"),
    "tags": tf.VarLenFeature(tf.string),
}


def _example(**features):
    feats = {}
    for k, v in features.items():
        if isinstance(v[0], bytes):
            feats[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        elif isinstance(v[0], float):
            feats[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        else:
            feats[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(feature=feats))


# --- the protos ---------------------------------------------------------------------------
def test_tf_written_bytes_parse_with_our_protos():
    ex = tf.train.Example.FromString(FULL)
    assert isinstance(ex, tf.train.Example)
    fmap = ex.features.feature
    assert list(fmap["age"].int64_list.value) == [29]
    assert list(fmap["scores"].float_list.value) == [1.5, -2.25]
    assert list(fmap["name"].bytes_list.value) == [b"alice"]
    assert fmap["tags"].WhichOneof("kind") == "bytes_list"
    assert type(ex).DESCRIPTOR.full_name == "tensorflow.Example"
    # re-serialising deterministically gives TensorFlow's bytes back exactly
    assert ex.SerializeToString(deterministic=True) == FULL
    assert tf.train.Example.FromString(PARTIAL).SerializeToString(deterministic=True) == PARTIAL


def test_our_bytes_match_tensorflow_wire_format():
    ex = _example(age=[29], scores=[1.5, -2.25], name=[b"alice"], tags=[b"x", b"y", b"z"])
    assert ex.SerializeToString(deterministic=True) == FULL
    # field numbers and packed encodings from feature.proto, spelled out byte by byte
    f = tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))
    assert f.SerializeToString() == b"\x12\x06\n\x04\x00\x00\x80?"      # field 2, packed
    f = tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))
    assert f.SerializeToString() == b"\x1a\x04\n\x02\x01\x02"         # field 3, packed
    f = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"ab"]))
    assert f.SerializeToString() == b"\n\x04\n\x02ab"                 # field 1
    feats = tf.train.Features(feature={"k": f})
    assert feats.SerializeToString() == b"\n\x0b\n\x01k\x12\x06\n\x04\n\x02ab"


def test_proto_placeholders_behave_as_classes():
    assert tf.train.Example.__name__ == "Example"
    assert hasattr(tf.train.Example, "FromString")
    assert not isinstance(b"x", tf.train.Example)
    seq = tf.train.SequenceExample(
        context=tf.train.Features(feature={"c": tf.train.Feature(
            int64_list=tf.train.Int64List(value=[3]))}),
        feature_lists=tf.train.FeatureLists(feature_list={"f": tf.train.FeatureList(
            feature=[tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))])}))
    back = tf.train.SequenceExample.FromString(seq.SerializeToString())
    assert list(back.context.feature["c"].int64_list.value) == [3]
    assert list(back.feature_lists.feature_list["f"].feature[0].float_list.value) == [1.0]


def test_import_does_not_load_protobuf():
    code = "import sys, tensorweave; print('google.protobuf' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# --- parse_example ------------------------------------------------------------------------------
def test_parse_example_batch(sess):
    p = tf.parse_example([FULL, PARTIAL], FEATURES)
    assert sorted(p) == ["age", "name", "scores", "tags"]
    assert p["age"].shape.as_list() == [2] and p["age"].dtype == tf.int64
    assert p["scores"].shape.as_list() == [2, 2] and p["name"].dtype == tf.string
    assert isinstance(p["tags"], tf.SparseTensor)
    assert p["tags"].indices.shape.as_list() == [None, 2]
    assert p["tags"].dense_shape.shape.as_list() == [2]
    v = sess.run(p)
    np.testing.assert_array_equal(v["age"], np.array([29, -7], np.int64))
    assert v["age"].dtype == np.int64 and v["scores"].dtype == np.float32
    np.testing.assert_array_equal(v["scores"], [[1.5, -2.25], [0.5, 4.0]])
    np.testing.assert_array_equal(v["name"], np.array([b"alice", b"anon"], dtype=object))
    np.testing.assert_array_equal(v["tags"].indices, [[0, 0], [0, 1], [0, 2]])
    np.testing.assert_array_equal(v["tags"].values, np.array([b"x", b"y", b"z"], object))
    np.testing.assert_array_equal(v["tags"].dense_shape, [2, 3])


def test_parse_example_var_len_floats_and_defaults(sess):
    v = sess.run(tf.io.parse_example(
        [FULL, PARTIAL], {"scores": tf.VarLenFeature(tf.float32),
                          "missing": tf.FixedLenFeature([2], tf.float32, default_value=[1., 2.]),
                          "m2": tf.VarLenFeature(tf.int64)}))
    np.testing.assert_array_equal(v["scores"].indices, [[0, 0], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(v["scores"].values, [1.5, -2.25, 0.5, 4.0])
    np.testing.assert_array_equal(v["missing"], [[1, 2], [1, 2]])
    assert v["m2"].indices.shape == (0, 2) and v["m2"].values.dtype == np.int64
    np.testing.assert_array_equal(v["m2"].dense_shape, [2, 0])


def test_parse_example_multi_dim_and_empty_records(sess):
    p = tf.parse_example([FULL, b""], {
        "scores": tf.FixedLenFeature([2, 1], tf.float32, default_value=[[9.0], [8.0]]),
        "age": tf.FixedLenFeature([1], tf.int64, default_value=[3])})
    assert p["scores"].shape.as_list() == [2, 2, 1] and p["age"].shape.as_list() == [2, 1]
    v = sess.run(p)
    np.testing.assert_array_equal(v["scores"], [[[1.5], [-2.25]], [[9.0], [8.0]]])
    np.testing.assert_array_equal(v["age"], [[29], [3]])


def test_parse_example_unknown_batch_and_single_output(sess):
    s = tf.placeholder(tf.string, [None])
    p = tf.parse_example(s, FEATURES)
    assert p["age"].shape.as_list() == [None] and p["scores"].shape.as_list() == [None, 2]
    v = sess.run(tf.parse_example(s, {"age": tf.FixedLenFeature([], tf.int64)}),
                 {s: [PARTIAL, FULL, PARTIAL]})
    np.testing.assert_array_equal(v["age"], [-7, 29, -7])


def test_parse_example_feature_without_kind_is_missing(sess):
    ex = tf.train.Example(features=tf.train.Features(feature={
        "nokind": tf.train.Feature(),
        "empty": tf.train.Feature(float_list=tf.train.FloatList(value=[]))}))
    s = ex.SerializeToString()
    v = sess.run(tf.parse_example([s], {
        "nokind": tf.FixedLenFeature([2], tf.float32, default_value=[7.0, 8.0])}))
    np.testing.assert_array_equal(v["nokind"], [[7, 8]])
    with pytest.raises(IAE, match="Number of float values != expected.  Values size: 0 but "
                                  r"output shape: \[2\]"):
        sess.run(tf.parse_example([s], {"empty": tf.FixedLenFeature([2], tf.float32,
                                                                      default_value=[1., 2.])}))


@pytest.mark.parametrize("features,names,fragment", [
    ({"name": tf.FixedLenFeature([], tf.string)}, None,
     "Name: <unknown>, Feature: name (data type: string) is required but could not be found."),
    ({"scores": tf.FixedLenFeature([3], tf.float32)}, None,
     "Name: <unknown>, Key: scores, Index: 0.  Number of float values != expected.  "
     "Values size: 2 but output shape: [3]"),
    ({"scores": tf.FixedLenFeature([3], tf.float32)}, ["first", "second"],
     "Name: first, Key: scores, Index: 0.  Number of float values != expected."),
    ({"scores": tf.FixedLenFeature([2], tf.int64)}, None,
     "Name: <unknown>, Key: scores, Index: 0.  Data types don't match. Data type: float but "
     "expected type: int64"),
    ({"scores": tf.VarLenFeature(tf.int64)}, None,
     "Name: <unknown>, Key: scores, Index: 0.  Data types don't match. Expected type: int64, "
     "Actual type: float"),
    ({"age": tf.FixedLenFeature([2], tf.int64)}, None,
     "Key: age, Index: 0.  Number of int64 values != expected.  Values size: 1 but output "
     "shape: [2]"),
])
def test_parse_example_run_time_errors(sess, features, names, fragment):
    p = tf.parse_example([FULL, PARTIAL], features, example_names=names)
    with pytest.raises(IAE) as e:
        sess.run(p)
    assert fragment in str(e.value)


def test_parse_example_garbage(sess):
    with pytest.raises(IAE, match="Could not parse example input, value: 'garbage'"):
        sess.run(tf.parse_example([FULL, b"garbage"], {"scores": tf.VarLenFeature(tf.float32)}))


def test_parse_example_build_time_errors(graph):
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values: "
                                        "float32, int64, string"):
        tf.parse_example([FULL], {"a": tf.FixedLenFeature([], tf.int32)})
    with pytest.raises(TypeError, match="'sparse_types' has DataType int32"):
        tf.parse_example([FULL], {"a": tf.VarLenFeature(tf.int32)})
    with pytest.raises(ValueError, match="cannot be None or falsy"):
        tf.parse_example([FULL], {})
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 1 elements to shape "
                                         r"\[2\] \(2 elements\)"):
        tf.parse_example([FULL], {"a": tf.FixedLenFeature([2], tf.float32, default_value=[1.])})
    with pytest.raises(ValueError, match="First dimension of shape for feature age unknown"):
        tf.parse_example([FULL], {"age": tf.FixedLenFeature([None], tf.int64)})
    with pytest.raises(ValueError, match="Unsupported int 5 for key 'age'"):
        tf.parse_example([FULL], {"age": 5})


# --- parse_single_example ----------------------------------------------------------------------
def test_parse_single_example(sess):
    p = tf.parse_single_example(FULL, FEATURES)
    assert p["age"].shape.as_list() == [] and p["scores"].shape.as_list() == [2]
    assert p["tags"].indices.shape.as_list() == [None, 1]
    assert p["tags"].dense_shape.shape.as_list() == [1]
    v = sess.run(p)
    assert v["age"] == 29 and v["name"] == b"alice"
    np.testing.assert_array_equal(v["scores"], np.array([1.5, -2.25], np.float32))
    np.testing.assert_array_equal(v["tags"].indices, [[0], [1], [2]])
    np.testing.assert_array_equal(v["tags"].values, np.array([b"x", b"y", b"z"], object))
    np.testing.assert_array_equal(v["tags"].dense_shape, [3])
    v = sess.run(tf.io.parse_single_example(PARTIAL, FEATURES))
    assert v["name"] == b"anon" and v["tags"].values.shape == (0,)
    np.testing.assert_array_equal(v["tags"].dense_shape, [0])
    s = tf.placeholder(tf.string)
    q = tf.parse_single_example(s, FEATURES)
    assert q["scores"].shape.as_list() == [2]
    assert sess.run(q["age"], {s: PARTIAL}) == -7


def test_parse_single_example_errors(sess, graph):
    with pytest.raises(ValueError, match="Input serialized must be a scalar"):
        tf.parse_single_example([FULL], FEATURES)
    with pytest.raises(IAE, match=r"Feature: name \(data type: string\) is required but could "
                                  "not be found."):
        sess.run(tf.parse_single_example(PARTIAL, {"name": tf.FixedLenFeature([], tf.string)}))
    with pytest.raises(IAE, match="Key: scores.  Data types don't match. Data type: float but "
                                  "expected type: int64"):
        sess.run(tf.parse_single_example(FULL, {"scores": tf.FixedLenFeature([2], tf.int64)}))
    with pytest.raises(IAE, match="Could not parse example input, value: 'garbage'"):
        sess.run(tf.parse_single_example(b"garbage", {"a": tf.VarLenFeature(tf.int64)}))


def test_round_trip_through_our_serializer(sess):
    ex = _example(ids=[3, -1, 2 ** 40], w=[0.25], txt=[b"\x00\xff"])
    v = sess.run(tf.parse_single_example(ex.SerializeToString(), {
        "ids": tf.VarLenFeature(tf.int64), "w": tf.FixedLenFeature([1], tf.float32),
        "txt": tf.FixedLenFeature([], tf.string)}))
    np.testing.assert_array_equal(v["ids"].values, [3, -1, 2 ** 40])
    assert v["w"].tolist() == [0.25] and v["txt"] == b"\x00\xff"


def test_feature_descriptions():
    f = tf.io.FixedLenFeature([2], tf.float32)
    assert f.default_value is None and f._fields == ("shape", "dtype", "default_value")
    assert tf.FixedLenFeature is tf.io.FixedLenFeature
    assert tf.VarLenFeature(tf.int64).dtype == tf.int64


def test_sparse_feature_merges_its_index_and_value_features(sess):
    """The results of TensorFlow 2.21 for the same Examples (checked by hand): one
    SparseTensor of dense shape [batch, size], the index and value features gone unless
    asked for, unsorted indices sorted."""
    def example(ix, val):
        return tf.train.Example(features=tf.train.Features(feature={
            "ix": tf.train.Feature(int64_list=tf.train.Int64List(value=ix)),
            "val": tf.train.Feature(float_list=tf.train.FloatList(value=val))}
        )).SerializeToString()
    data = [example([3, 0], [1.5, 2.5]), example([], []), example([1], [7.0])]
    feats = {"sp": tf.io.SparseFeature("ix", "val", tf.float32, 5)}
    assert tf.SparseFeature is tf.io.SparseFeature
    assert tf.io.SparseFeature("a", "b", tf.int64, 3).already_sorted is False
    batch = tf.io.parse_example(data, feats)
    both = tf.io.parse_example(data, dict(feats, ix=tf.io.VarLenFeature(tf.int64)))
    single = tf.io.parse_single_example(data[0], feats)
    assert sorted(batch) == ["sp"] and sorted(both) == ["ix", "sp"]
    got = sess.run(batch["sp"])
    assert got.indices.tolist() == [[0, 0], [0, 3], [2, 1]]
    assert got.values.tolist() == [2.5, 1.5, 7.0] and got.dense_shape.tolist() == [3, 5]
    one = sess.run(single["sp"])
    assert one.indices.tolist() == [[0], [3]] and one.dense_shape.tolist() == [5]
    assert sess.run(both["ix"]).values.tolist() == [3, 0, 1]
    with pytest.raises(ValueError, match="Conflicting type <dtype: 'float32'> vs "
                                         "<dtype: 'int64'> for feature ix"):
        tf.io.parse_example(data, dict(feats, ix=tf.io.VarLenFeature(tf.float32)))
    # the dense shape's last entry is the constant size
    assert batch["sp"].shape.as_list() == [None, 5]
    assert single["sp"].shape.as_list() == [5]


def test_sparse_feature_with_several_index_keys(sess):
    """An index feature per sparse dimension: dense shape [batch] + size, the entries
    sorted row-major (TF 2.21's values, checked by hand)."""
    def example(**feats):
        return _example(**feats).SerializeToString()
    data = [example(i0=[1, 0], i1=[2, 1], val=[10.0, 20.0]),
            example(i0=[1], i1=[0], val=[5.0]), example()]
    feats = {"sp": tf.SparseFeature(["i0", "i1"], "val", tf.float32, [2, 3])}
    batch = tf.parse_example(data, feats)
    single = tf.parse_single_example(data[0], feats)
    assert sorted(batch) == ["sp"]
    assert batch["sp"].shape.as_list() == [None, 2, 3]
    assert single["sp"].shape.as_list() == [2, 3]
    got = sess.run(batch["sp"])
    assert got.indices.tolist() == [[0, 0, 1], [0, 1, 2], [1, 1, 0]]
    assert got.values.tolist() == [20.0, 10.0, 5.0] and got.dense_shape.tolist() == [3, 2, 3]
    one = sess.run(single["sp"])
    assert one.indices.tolist() == [[0, 1], [1, 2]] and one.dense_shape.tolist() == [2, 3]
    # already sorted: the entries stay in the order of the Examples
    unsorted = tf.parse_example(data, {"sp": tf.SparseFeature(
        ["i0", "i1"], "val", tf.float32, [2, 3], already_sorted=True)})
    assert sess.run(unsorted["sp"]).indices.tolist() == [[0, 1, 2], [0, 0, 1], [1, 1, 0]]
    with pytest.raises(TypeError, match="vocab_size has to be a list of Tensors or Python "
                                        "ints. Found <class 'int'>"):
        tf.parse_example(data, {"sp": tf.SparseFeature(["i0", "i1"], "val", tf.float32, 5)})
    with pytest.raises(ValueError, match="sp_ids and vocab_size have to have equal lengths"):
        tf.parse_example(data, {"sp": tf.SparseFeature(["i0", "i1"], "val", tf.float32, [5])})


def _int_examples(*rows):
    """Serialized Examples with int64 feature q holding each row's values (None: no q)."""
    return [(_example(q=row) if row is not None else tf.train.Example()).SerializeToString()
            for row in rows]


def test_fixed_len_sequence_feature_pads_to_the_longest(sess):
    """Each example's values as steps of the feature's shape, padded with the default
    value (0 unless given) to the longest example; a missing feature has no steps."""
    data = _int_examples([1, 2], [4, 5, 6], None)
    seq = tf.FixedLenSequenceFeature
    got = tf.parse_example(data, {"q": seq([], tf.int64, allow_missing=True)})["q"]
    assert got.shape.as_list() == [3, None]
    assert sess.run(got).tolist() == [[1, 2, 0], [4, 5, 6], [0, 0, 0]]
    got = tf.parse_example(data, {"q": seq([], tf.int64, allow_missing=True,
                                           default_value=-1)})["q"]
    assert sess.run(got).tolist() == [[1, 2, -1], [4, 5, 6], [-1, -1, -1]]
    data = _int_examples([1, 2], [1, 2, 3, 4], None)
    got = tf.parse_example(data, {"q": seq([2], tf.int64, allow_missing=True,
                                           default_value=-1)})["q"]
    assert got.shape.as_list() == [3, None, 2]
    assert sess.run(got).tolist() == [[[1, 2], [-1, -1]], [[1, 2], [3, 4]],
                                      [[-1, -1], [-1, -1]]]
    # mixed with the other kinds of feature, and no example with values
    got = sess.run(tf.parse_example(_int_examples([7], None), {
        "q": seq([], tf.int64, allow_missing=True),
        "r": tf.FixedLenFeature([], tf.int64, default_value=3)}))
    assert got["q"].tolist() == [[7], [0]] and got["r"].tolist() == [3, 3]
    got = tf.parse_example(_int_examples(None, None),
                           {"q": seq([2, 3], tf.float32, allow_missing=True)})["q"]
    assert got.shape.as_list() == [2, None, 2, 3]
    assert sess.run(got).shape == (2, 0, 2, 3)
    strings = [_example(s=[b"a"]).SerializeToString(), tf.train.Example().SerializeToString()]
    got = tf.parse_example(strings, {"s": seq([], tf.string, allow_missing=True)})["s"]
    assert sess.run(got).tolist() == [[b"a"], [b""]]


def test_fixed_len_sequence_feature_in_one_example(sess):
    seq = tf.FixedLenSequenceFeature
    data = _int_examples([4, 5, 6], None, [1, 2, 3, 4])
    got = tf.parse_single_example(data[0], {"q": seq([], tf.int64, allow_missing=True)})["q"]
    assert got.shape.as_list() == [None] and sess.run(got).tolist() == [4, 5, 6]
    got = tf.parse_single_example(data[1], {"q": seq([], tf.int64, allow_missing=True,
                                                     default_value=7)})["q"]
    assert sess.run(got).tolist() == []
    got = tf.parse_single_example(data[2], {"q": seq([2], tf.int64, allow_missing=True)})["q"]
    assert got.shape.as_list() == [None, 2] and sess.run(got).tolist() == [[1, 2], [3, 4]]


def test_fixed_len_sequence_feature_errors(sess, graph):
    seq = tf.FixedLenSequenceFeature
    data = _int_examples([1, 2], [4, 5, 6])
    with pytest.raises(IAE, match=r"Name: <unknown>, Key: q, Index: 1.  Number of int64 values "
                                  r"is not a multiple of stride length. Saw 3 values but output "
                                  r"shape is: \[\?,2\]"):
        sess.run(tf.parse_example(data, {"q": seq([2], tf.int64, allow_missing=True)}))
    with pytest.raises(IAE, match="Error while parsing feature with key q: number of elements "
                                  "should be divisible by 2, found 3 instead"):
        sess.run(tf.parse_single_example(data[1], {"q": seq([2], tf.int64,
                                                            allow_missing=True)}))
    with pytest.raises(IAE, match="Name: <unknown>, Key: q, Index: 0.  Data types don't match. "
                                  "Data type: int64 but expected type: float"):
        sess.run(tf.parse_example(data, {"q": seq([], tf.float32, allow_missing=True)}))
    with pytest.raises(ValueError, match="Unsupported: FixedLenSequenceFeature requires "
                                         "allow_missing to be True."):
        tf.parse_example(data, {"q": seq([], tf.int64)})
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 2 elements to shape"):
        tf.parse_example(data, {"q": seq([2], tf.int64, allow_missing=True,
                                         default_value=[1, 2])})
    with pytest.raises(ValueError, match="unknown inner dimensions"):
        tf.parse_example(data, {"q": seq([None], tf.int64, allow_missing=True)})
