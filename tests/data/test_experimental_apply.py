"""More of tf.data.experimental's transformations: rejection_resample
(data/resampling.py), pad_to_cardinality (data/cardinality.py), parse_example_dataset,
map_and_batch_with_legacy_function, copy_to_device and prefetch_to_device
(data/experimental.py). Specs and errors are TensorFlow 2.21's unless a test says why
not."""
import numpy as np
import pytest

import tensorweave as tf

D, X = tf.data.Dataset, tf.data.experimental


# --- rejection_resample -------------------------------------------------------------------
def _skewed(n=20000):
    labels = np.random.RandomState(0).choice(3, size=n, p=[0.7, 0.2, 0.1]).astype(np.int64)
    return labels, D.from_tensor_slices((labels, np.arange(n)))


@pytest.mark.parametrize("initial", [None, [0.7, 0.2, 0.1]])
def test_rejection_resample_reaches_the_target(sess, initial):
    labels, ds = _skewed()
    target = [0.2, 0.3, 0.5]
    out = ds.apply(X.rejection_resample(lambda label, i: label, target, initial, seed=3))
    assert out.output_types == (tf.int64, (tf.int64, tf.int64))
    classes, (label, index) = sess.run(tf.data.make_one_shot_iterator(
        out.batch(10 ** 6)).get_next())
    assert (classes == label).all() and (labels[index] == label).all()
    assert (np.diff(index) > 0).all()  # a subsequence of the input, in order
    # rejection sampling keeps class c with probability (t_c/p_c) / max(t/p): here
    # 0.5/0.1 is the largest ratio, so class 2 is always kept and the output size is
    # about n * p_2 / t_2 = 20000 * 0.1 / 0.5 = 4000 (binomial spread ~ 60)
    assert abs(len(classes) - 4000) < 300
    counts = np.bincount(classes, minlength=3) / len(classes)
    np.testing.assert_allclose(counts, target, atol=0.025)


def test_rejection_resample_is_repeatable_with_a_seed(sess):
    def run():
        _, ds = _skewed(3000)
        out = ds.apply(X.rejection_resample(lambda label, i: label, [0.5, 0.25, 0.25],
                                            seed=5))
        return sess.run(tf.data.make_one_shot_iterator(out.batch(10 ** 6)).get_next())[0]
    assert run().tolist() == run().tolist()


def test_rejection_resample_errors(sess):
    ds = D.range(5)
    with pytest.raises(ValueError, match="one scalar integer tensor"):
        ds.apply(X.rejection_resample(lambda x: tf.cast(x, tf.float32), [0.5, 0.5]))
    bad_class = ds.apply(X.rejection_resample(lambda x: x, [0.5, 0.5]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="class 2, outside the 2 "
                                                             "classes"):
        sess.run(tf.data.make_one_shot_iterator(bad_class.batch(10)).get_next())
    negative = ds.apply(X.rejection_resample(lambda x: x % 2, [1.5, -0.5]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="target_dist must be"):
        sess.run(tf.data.make_one_shot_iterator(negative).get_next())


# --- pad_to_cardinality -------------------------------------------------------------------
def _dicts():
    return D.from_tensor_slices({"a": [1, 2, 3], "b": [[1.0, 2.0], [3, 4], [5, 6]],
                                 "z": ["x", "y", "w"]})


def test_pad_to_cardinality_pads_and_masks(sess, drain):
    padded = _dicts().apply(X.pad_to_cardinality(5))
    assert padded.output_types == {"a": tf.int32, "b": tf.float32, "valid": tf.bool,
                                   "z": tf.string}
    assert padded.output_shapes["valid"] == tf.TensorShape([])
    assert sess.run(X.cardinality(padded)) == 5
    got = drain(padded)
    assert [e["valid"] for e in got] == [True] * 3 + [False] * 2
    assert [e["a"] for e in got] == [1, 2, 3, 0, 0]
    assert got[4]["b"].tolist() == [0.0, 0.0] and got[4]["z"] == b""
    assert got[1]["b"].tolist() == [3.0, 4.0] and got[1]["z"] == b"y"


def test_pad_to_cardinality_of_unknown_cardinality_and_errors(sess, drain):
    # TF needs the cardinality known in advance; here the padding follows what was read
    filtered = _dicts().filter(lambda e: e["a"] > 1).apply(X.pad_to_cardinality(4, "m"))
    assert [e["m"] for e in drain(filtered)] == [True, True, False, False]
    too_many = tf.data.make_one_shot_iterator(_dicts().apply(X.pad_to_cardinality(2)))
    nxt = too_many.get_next()
    sess.run(nxt), sess.run(nxt)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot pad a dataset to "
                                                             "cardinality 2"):
        sess.run(nxt)
    with pytest.raises(ValueError, match="requires its input dataset to be a dictionary"):
        D.range(3).apply(X.pad_to_cardinality(5))
    with pytest.raises(ValueError, match="'a' is already a key"):
        _dicts().apply(X.pad_to_cardinality(5, mask_key="a"))
    with pytest.raises(ValueError, match="fully defined shapes"):
        D.from_tensors({"v": tf.placeholder_with_default([1], [None])}).apply(
            X.pad_to_cardinality(5))


# --- parse_example_dataset and the rest -----------------------------------------------------
def _example(x, s):
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
        "s": tf.train.Feature(int64_list=tf.train.Int64List(value=s))})).SerializeToString()


def test_parse_example_dataset(sess):
    ds = D.from_tensors([_example([1.0, 2.0], [3]), _example([4.0, 5.0], [6, 7])])
    parsed = ds.apply(X.parse_example_dataset({"x": tf.FixedLenFeature([2], tf.float32),
                                               "s": tf.VarLenFeature(tf.int64)}))
    assert parsed.output_types == {"s": tf.int64, "x": tf.float32}
    assert parsed.output_classes == {"s": tf.SparseTensor, "x": tf.Tensor}
    got = sess.run(tf.data.make_one_shot_iterator(parsed).get_next())
    assert got["x"].tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert got["s"].indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert got["s"].values.tolist() == [3, 6, 7]


@pytest.mark.parametrize("ds", [lambda: D.from_tensors(b"one"),
                                lambda: D.from_tensors([1, 2]),
                                lambda: D.from_tensors(([b"a"], [b"b"]))])
def test_parse_example_dataset_needs_vectors_of_strings(ds):
    with pytest.raises(TypeError, match="Input dataset should be a dataset of vectors of "
                                        "strings"):
        ds().apply(X.parse_example_dataset({"x": tf.FixedLenFeature([2], tf.float32)}))
    with pytest.raises(ValueError, match="Argument `features` is required"):
        X.parse_example_dataset(None)


def test_legacy_map_and_batch_and_device_transformations(drain):
    batches = D.range(5).apply(X.map_and_batch_with_legacy_function(lambda x: x * 2, 2))
    assert [b.tolist() for b in drain(batches)] == [[0, 2], [4, 6], [8]]
    on_device = D.range(4).apply(X.copy_to_device("/cpu:0")).apply(
        X.prefetch_to_device("/cpu:0", buffer_size=2))
    assert drain(on_device) == [0, 1, 2, 3]
