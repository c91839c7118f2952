"""An element that fails (a map function's error, a batch of mismatched shapes, a
generator's element of the wrong type) is that get_next's error, and every
transformation hands it on and goes on, as TF's; ignore_errors drops the errors that
reach it. The expected sequences were recorded from TF 2.21 ("error": an
InvalidArgumentError from get_next)."""
import numpy as np
import pytest

import tensorweave as tf

X = tf.data.experimental


def _read(sess, dataset, limit=30):
    nxt = dataset.make_one_shot_iterator().get_next()
    out = []
    for _ in range(limit):
        try:
            value = sess.run(nxt)
        except tf.errors.OutOfRangeError:
            return out
        except tf.errors.InvalidArgumentError:
            out.append("error")
            continue
        out.append([np.asarray(v).tolist() for v in value] if isinstance(value, tuple)
                   else np.asarray(value).tolist())
    raise AssertionError("the pass did not end")


def _failing(values):
    """1 / v for each v, the element of a 0 failing (check_numerics)."""
    return tf.data.Dataset.from_tensor_slices(np.array(values, np.float32)).map(
        lambda v: tf.check_numerics(1.0 / v, "inf"))


def test_concatenate_flat_map_unbatch_and_cache_go_on(sess):
    assert _read(sess, _failing([1, 0, 2]).concatenate(tf.data.Dataset.from_tensors(9.0))) \
        == [1.0, "error", 0.5, 9.0]
    assert _read(sess, _failing([1, 0, 2]).flat_map(
        lambda v: tf.data.Dataset.from_tensors(v).repeat(2))) == \
        [1.0, 1.0, "error", 0.5, 0.5]
    assert _read(sess, _failing([1, 0, 2]).map(lambda v: tf.stack([v, v])).unbatch()) == \
        [1.0, 1.0, "error", 0.5, 0.5]
    # a failed element is not cached: the second epoch replays the others only
    assert _read(sess, _failing([1, 0, 2]).cache().repeat(2)) == \
        [1.0, "error", 0.5, 1.0, 0.5]


def test_interleave_opens_a_slot_when_its_turn_comes(sess):
    # slot 0 takes 1.0; slot 1's input fails (its turn's error), then takes 0.5
    assert _read(sess, _failing([1, 0, 2]).interleave(
        lambda v: tf.data.Dataset.from_tensors(v).repeat(2), cycle_length=2)) == \
        [1.0, "error", 0.5, 1.0, 0.5]
    # an error inside an open input is not one of its block
    assert _read(sess, tf.data.Dataset.range(3).interleave(
        lambda i: _failing([1, 0, 4]), cycle_length=2, block_length=2)) == \
        [1.0, "error", 0.25, 1.0, "error", 0.25, 1.0, "error", 0.25]


def test_window_with_a_failed_element_fails_and_the_next_goes_on(sess):
    assert _read(sess, _failing([1, 0, 2, 4]).window(2).flat_map(
        lambda w: w.batch(2))) == ["error", [0.5, 0.25]]


def test_zip_enumerate_shard_and_scan_go_on(sess):
    assert _read(sess, _failing([1, 0, 2]).enumerate()) == \
        [[0, 1.0], "error", [2, 0.5]]
    assert _read(sess, _failing([1, 0, 2, 4]).shard(2, 0)) == [1.0, "error", 0.25]
    assert _read(sess, _failing([1, 0, 2]).apply(
        X.scan(0.0, lambda s, v: (s + v, s)))) == [0.0, "error", 1.0]
    assert _read(sess, _failing([1, 0, 2]).apply(X.take_while(lambda v: v > 0))) == \
        [1.0, "error", 0.5]


def test_grouping_bucketing_and_choosing_go_on(sess):
    assert _read(sess, _failing([1, 0, 2, 4]).apply(X.group_by_window(
        lambda v: tf.constant(0, tf.int64), lambda k, d: d.batch(2), window_size=2))) == \
        ["error", [1.0, 0.5], [0.25]]
    assert _read(sess, _failing([1, 0, 2, 4]).map(lambda v: tf.stack([v])).apply(
        X.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [5], [2, 2]))) == \
        ["error", [[1.0], [0.5]], [[0.25]]]
    choices = tf.data.Dataset.from_tensor_slices(np.array([0, 0, 1, 0], np.int64))
    assert _read(sess, X.choose_from_datasets(
        [_failing([1, 0, 2]), tf.data.Dataset.from_tensors(9.0).repeat()], choices)) == \
        [1.0, "error", 9.0, 0.5]


def test_shuffle_hands_out_before_it_reads_the_next_element(sess):
    # a buffer of one: the order stays, and the error comes where it was read
    assert _read(sess, _failing([1, 0, 2]).shuffle(1)) == [1.0, "error", 0.5]


def test_map_and_batch_fails_the_whole_batch(sess):
    mapped = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0, 4.0]).apply(
        X.map_and_batch(lambda v: tf.check_numerics(1.0 / v, "inf"), 3))
    # [1, 0, 2] fails whole (plain batch would go on with [2, 4])
    assert _read(sess, mapped) == ["error", [0.25]]
    assert _read(sess, mapped.apply(X.ignore_errors())) == [[0.25]]


@pytest.mark.parametrize("make, want", [
    (lambda: _failing([1, 2, 0, 4, 5]).batch(3), [[0.25, 0.2]]),
    (lambda: _failing([1, 0, 2, 4, 5]).window(2).flat_map(lambda w: w.batch(2)),
     [[0.5, 0.25], [0.2]]),
    (lambda: tf.data.Dataset.zip((_failing([1, 0, 2]), tf.data.Dataset.range(3))),
     [[1.0, 0], [0.5, 2]]),
    (lambda: tf.data.Dataset.range(2).flat_map(lambda i: _failing([1, 0, 4])),
     [1.0, 0.25, 1.0, 0.25]),
    (lambda: _failing([1, 0]).concatenate(_failing([0, 3])), [1.0, 1.0 / 3]),
])
def test_ignore_errors_drops_what_reaches_it(sess, make, want):
    got = _read(sess, make().apply(X.ignore_errors()))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_generator_element_of_the_wrong_type_fails_alone(sess):
    def records():
        yield 1
        yield "bad"
        yield 3
    ds = tf.data.Dataset.from_generator(records, tf.int64)
    assert _read(sess, ds) == [1, "error", 3]
    assert _read(sess, ds.apply(X.ignore_errors())) == [1, 3]

    def pairs_as_lists():
        yield [1, 2]
    # a list is not the tuple the types declare (TF's flatten_up_to)
    assert _read(sess, tf.data.Dataset.from_generator(pairs_as_lists,
                                                      (tf.int64, tf.int64))) == ["error"]
