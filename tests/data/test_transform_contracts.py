"""tf.data transformations as TF 2.21 runs them: padded_batch's shapes and padding
values, batch sizes known statically, interleave's cycle, functions of namedtuple
elements, reduce and scan states that change shape, range dtypes, the experimental
combinators and the file readers. Expected values are TF's (recorded from it) or worked
out by hand."""

import collections
import gzip

import numpy as np
import pytest

import tensorweave as tf

X = tf.data.experimental
Point = collections.namedtuple("Point", ["x", "y"])


def _ragged(n):
    """1, 2, ..., n-1: element x is x copies of x."""
    return tf.data.Dataset.range(1, n).map(lambda x: tf.fill([x], x))


# --- padded_batch ---------------------------------------------------------------------------
def test_padded_batch_minus_one_is_the_longest(drain):
    ds = _ragged(6).padded_batch(2, padded_shapes=[-1])
    assert ds.output_shapes.as_list() == [None, None]
    assert [b.tolist() for b in drain(ds)] == [[[1, 0], [2, 2]], [[3, 3, 3, 0],
                                                                  [4, 4, 4, 4]],
                                                [[5, 5, 5, 5, 5]]]


def test_padded_batch_padding_values_must_be_scalars_of_the_component_dtype():
    with pytest.raises(TypeError, match="`padding_values` values type .*int32.* does "
                                        "not match type .*int64"):
        _ragged(4).padded_batch(2, [None], padding_values=-1)  # an int32 constant
    with pytest.raises(TypeError, match="does not match type"):
        _ragged(4).padded_batch(2, [None], padding_values=tf.constant(1.5))
    with pytest.raises(ValueError, match="values should be scalars, but got"):
        _ragged(4).padded_batch(2, [None], padding_values=tf.constant([1, 2], tf.int64))


def test_padded_batch_padded_shapes_nest_like_the_elements():
    pairs = _ragged(4).map(lambda v: (v, tf.as_string(v)))
    with pytest.raises(TypeError, match="input must also be a sequence"):
        pairs.padded_batch(2, [None])
    with pytest.raises(ValueError, match="don't have the same sequence length"):
        pairs.padded_batch(2, ([None],))
    with pytest.raises(TypeError, match="must be a `tf.int64` vector tensor"):
        _ragged(4).padded_batch(2, [1.5])


def test_padded_batch_default_padding_of_bools_and_some_values_given(drain):
    flags = tf.data.Dataset.range(1, 3).map(lambda x: tf.fill([x], True))
    assert [b.tolist() for b in drain(flags.padded_batch(2, [3]))] == \
        [[[True, False, False], [True, True, False]]]
    pairs = tf.data.Dataset.range(1, 3).map(lambda x: (tf.fill([x], x), tf.as_string(x)))
    got = drain(pairs.padded_batch(2, ([None], []), padding_values=(None, "x")))
    assert got[0][0].tolist() == [[1, 0], [2, 2]] and got[0][1].tolist() == [b"1", b"2"]


def test_padding_to_a_smaller_size_is_tfs_data_loss_error(sess):
    nxt = _ragged(4).padded_batch(2, padded_shapes=[2]).make_one_shot_iterator().get_next()
    assert sess.run(nxt).tolist() == [[1, 0], [2, 2]]
    with pytest.raises(tf.errors.DataLossError, match="pad to a smaller size"):
        sess.run(nxt)


def test_a_batch_of_mismatched_shapes_fails_alone_and_the_pass_goes_on(sess):
    nxt = _ragged(4).batch(2).make_one_shot_iterator().get_next()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors"):
        sess.run(nxt)
    assert sess.run(nxt).tolist() == [[3, 3, 3]]  # TF 2.21 goes on likewise
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(nxt)


# --- batch, interleave, prefetch, range -----------------------------------------------------
def test_batch_drop_remainder_as_a_tensor(sess):
    drop = tf.placeholder(tf.bool, [])
    ds = tf.data.Dataset.range(7).batch(3, drop_remainder=drop)
    assert ds.output_shapes.as_list() == [None]  # not known when the graph is built
    assert tf.data.Dataset.range(7).batch(
        3, drop_remainder=tf.constant(True)).output_shapes.as_list() == [3]
    it = ds.make_initializable_iterator()
    sess.run(it.initializer, {drop: True})
    assert [sess.run(it.get_next()).tolist() for _ in range(2)] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(it.get_next())


def test_interleave_cycle_length_must_be_positive(sess):
    for cycle in (0, -5):
        ds = tf.data.Dataset.range(3).interleave(tf.data.Dataset.range, cycle_length=cycle)
        it = ds.make_initializable_iterator()
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="cycle_length must be greater than zero"):
            sess.run(it.initializer)


def test_interleave_default_cycle_is_the_cores(drain):
    import os
    cores = len(os.sched_getaffinity(0))
    # n inputs of 2 copies each: with a cycle of c, the first c inputs alternate
    ds = tf.data.Dataset.range(4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2))
    first = min(cores, 4)
    assert drain(ds)[:2 * first] == list(range(first)) * 2


def test_prefetch_buffer_size_below_minus_one(sess):
    it = tf.data.Dataset.range(3).prefetch(-5).make_initializable_iterator()
    with pytest.raises(tf.errors.InvalidArgumentError, match="buffer_size must be >= 0"):
        sess.run(it.initializer)


@pytest.mark.parametrize("dtype", [tf.int32, tf.float32, tf.float64, tf.int16])
def test_range_output_type(drain, dtype):
    ds = tf.data.Dataset.range(0, 5, 2, output_type=dtype)
    assert ds.output_types == dtype
    got = drain(ds)
    assert [np.asarray(v).dtype for v in got] == [dtype.as_numpy_dtype] * 3
    assert [float(v) for v in got] == [0.0, 2.0, 4.0]


# --- functions of namedtuples; reduce and scan states ---------------------------------------
def test_a_namedtuple_element_is_one_argument(drain):
    ds = tf.data.Dataset.from_tensor_slices(Point([1, 2, 3], [3, 2, 1]))
    kept = ds.filter(lambda p: p.x >= p.y)
    assert type(kept.output_types) is Point
    assert [tuple(int(v) for v in p) for p in drain(kept)] == [(2, 2), (3, 1)]
    summed = ds.map(lambda p: p.x + p.y)
    assert drain(summed) == [4, 4, 4]
    flat = ds.flat_map(lambda p: tf.data.Dataset.from_tensors(p.x * 10).repeat(2))
    assert drain(flat) == [10, 10, 20, 20, 30, 30]


def test_reduce_state_that_grows_relaxes_its_shape(sess):
    ds = tf.data.Dataset.range(3)
    grown = ds.reduce(tf.zeros([0], tf.int64), lambda s, x: tf.concat([s, [x]], 0))
    assert grown.shape.as_list() == [None]
    assert sess.run(grown).tolist() == [0, 1, 2]
    total = ds.reduce(np.int64(0), lambda s, x: s + x)
    assert total.shape.as_list() == []


def test_scan_keeps_the_initial_state_shapes(drain):
    ds = tf.data.Dataset.range(5).apply(X.scan(np.int64(0), lambda s, x: (s + x, s * 10)))
    assert ds.output_shapes.as_list() == []
    assert drain(ds) == [0, 0, 10, 30, 60]
    grown = tf.data.Dataset.range(3).apply(X.scan(
        tf.zeros([0], tf.int64), lambda s, x: (tf.concat([s, [x]], 0), tf.size(s))))
    assert drain(grown) == [0, 1, 2]


# --- experimental ---------------------------------------------------------------------------
def test_map_and_batch_takes_one_kind_of_parallelism():
    with pytest.raises(ValueError, match="allows only one of `num_parallel_batches`"):
        X.map_and_batch(lambda x: x, 2, num_parallel_batches=2, num_parallel_calls=2)


def test_sample_from_datasets_weights(sess):
    pair = [tf.data.Dataset.range(3), tf.data.Dataset.range(100, 102)]
    with pytest.raises(ValueError, match=r"`len\(weights\)=3` vs. `len\(datasets\)=2`"):
        X.sample_from_datasets(pair, weights=[0.5, 0.3, 0.2])
    # a dataset of weight vectors: the first input always
    constant = [tf.data.Dataset.from_tensors(np.int64(i)).repeat() for i in range(2)]
    always = X.sample_from_datasets(constant, tf.data.Dataset.from_tensors([1.0, 0.0])
                                    .repeat(), seed=1).take(50)
    assert sess.run(always.batch(50).make_one_shot_iterator().get_next()).tolist() == \
        [0] * 50


def test_sample_from_datasets_weight_dataset_frequencies(sess):
    inputs = [tf.data.Dataset.from_tensors(np.int64(i)).repeat() for i in range(3)]
    weights = tf.data.Dataset.from_tensors([0.2, 0.3, 0.5]).repeat()
    drawn = X.sample_from_datasets(inputs, weights, seed=5).take(6000).batch(6000)
    got = np.bincount(sess.run(drawn.make_one_shot_iterator().get_next()), minlength=3)
    # binomial standard deviations are below 0.007 for 6000 draws
    np.testing.assert_allclose(got / 6000.0, [0.2, 0.3, 0.5], atol=0.03)


def test_get_single_element_of_a_non_dataset():
    with pytest.raises(TypeError, match="Expected a `tf.data.Dataset` object"):
        X.get_single_element([1, 2])


def test_bucket_by_sequence_length_checks_padding_values_as_padded_batch(drain):
    with pytest.raises(TypeError, match="does not match type"):
        _ragged(4).apply(X.bucket_by_sequence_length(
            lambda e: tf.cast(tf.shape(e)[0], tf.int32), [2], [2, 2], padding_values=1.5))
    ds = _ragged(5).apply(X.bucket_by_sequence_length(
        lambda e: tf.cast(tf.shape(e)[0], tf.int32), [3], [2, 2], padded_shapes=[-1]))
    assert [b.tolist() for b in drain(ds)] == [[[1, 0], [2, 2]],
                                               [[3, 3, 3, 0], [4, 4, 4, 4]]]


# --- readers --------------------------------------------------------------------------------
def test_make_csv_dataset_infers_int64_and_batches_endless_input_statically(tmp_path,
                                                                           drain):
    path = tmp_path / "a.csv"
    path.write_text("a,b,c,d\n1,2.5,x,12345678901\n2,3,y,1\n")
    ds = X.make_csv_dataset(str(path), batch_size=2, shuffle=False, num_epochs=1)
    assert ds.output_types == collections.OrderedDict(
        [("a", tf.int32), ("b", tf.float32), ("c", tf.string), ("d", tf.int64)])
    (batch,) = drain(ds)
    assert batch["d"].tolist() == [12345678901, 1]
    endless = X.make_csv_dataset(str(path), batch_size=3, shuffle=False)
    assert endless.output_shapes["a"].as_list() == [3]


def test_make_batched_features_dataset_endless_batches_are_full(tmp_path):
    path = str(tmp_path / "e.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        for i in range(3):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}))
                .SerializeToString())
    ds = X.make_batched_features_dataset(path, 2, {"a": tf.FixedLenFeature([], tf.int64)},
                                         shuffle=False)
    assert ds.output_shapes["a"].as_list() == [2]


def test_record_datasets_read_a_dataset_of_filenames(tmp_path, drain):
    names = []
    for k in range(2):
        names.append(str(tmp_path / ("f%d.txt.gz" % k)))
        with gzip.open(names[-1], "wt") as f:
            f.write("a%d\nb%d\n" % (k, k))
    files = tf.data.Dataset.from_tensor_slices(names)
    assert drain(tf.data.TextLineDataset(files, compression_type="GZIP")) == \
        [b"a0", b"b0", b"a1", b"b1"]
    assert drain(tf.data.TextLineDataset(files, compression_type="GZIP",
                                         num_parallel_reads=2)) == \
        [b"a0", b"a1", b"b0", b"b1"]
    with pytest.raises(TypeError, match="must contain `tf.string` elements"):
        tf.data.TFRecordDataset(tf.data.Dataset.range(2))


def test_fixed_length_file_shorter_than_header_and_footer(tmp_path, sess):
    path = tmp_path / "short.bin"
    path.write_bytes(b"ab")
    ds = tf.data.FixedLengthRecordDataset(str(path), 4, header_bytes=1, footer_bytes=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="has body length -1 bytes"):
        sess.run(ds.make_one_shot_iterator().get_next())


def test_unbatch_of_leading_dimensions_known_to_differ():
    with pytest.raises(ValueError, match="matching leading dimension. Encountered both 2 "
                                         "and 3"):
        tf.data.Dataset.from_tensors(([1, 2], [1, 2, 3])).unbatch()


def test_slices_of_components_fed_with_different_sizes(sess):
    fed = tf.placeholder(tf.int32, [None])
    it = tf.data.Dataset.from_tensor_slices((fed, [1, 2, 3])).make_initializable_iterator()
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="All components must have the same size in the 0th dimension"):
        sess.run(it.initializer, {fed: [1]})


def test_apply_must_give_a_dataset():
    with pytest.raises(TypeError, match="must return a `tf.data.Dataset` object. Got "
                                        "<class 'int'>"):
        tf.data.Dataset.range(2).apply(lambda d: 5)
