"""An element a dataset function fails on is that get_next's error, and the iterator
goes on with the next element, as TF's (a loop that catches the error and continues
loses only the bad records). Through batch the failing batch is the error; take does
not count it; zip, concatenate, flat_map, interleave, window, unbatch, cache and the
experimental transformations pass it on too (test_error_propagation.py)."""
import pytest

import tensorweave as tf


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
        out.append([v.tolist() for v in value] if isinstance(value, tuple)
                   else value.tolist())
    raise AssertionError("the pass did not end")


@pytest.fixture
def numbers():
    return tf.data.Dataset.from_tensor_slices(["1", "x", "3", "y", "5"]).map(
        tf.string_to_number)


def test_the_pass_goes_on_after_an_element_error(sess, numbers):
    assert _read(sess, numbers) == [1.0, "error", 3.0, "error", 5.0]
    assert _read(sess, numbers.prefetch(2)) == [1.0, "error", 3.0, "error", 5.0]
    assert _read(sess, tf.data.Dataset.from_tensor_slices(["1", "x", "3"]).map(
        tf.string_to_number, num_parallel_calls=2)) == [1.0, "error", 3.0]
    assert _read(sess, numbers.repeat(2)) == [1.0, "error", 3.0, "error", 5.0] * 2
    assert _read(sess, numbers.filter(lambda v: v > 2)) == ["error", 3.0, "error", 5.0]


def test_batch_fails_the_batch_with_the_error_and_take_does_not_count_it(sess, numbers):
    # batch: [1, error] fails (1 is dropped), [3, error] fails, [5]
    assert _read(sess, numbers.batch(2)) == ["error", "error", [5.0]]
    assert _read(sess, numbers.take(3)) == [1.0, "error", 3.0, "error", 5.0]
    got = _read(sess, numbers.shuffle(2, seed=1))
    assert got.count("error") == 2 and sorted(v for v in got if v != "error") == [1, 3, 5]


def test_an_error_through_zip_fails_that_element_and_the_pass_goes_on(sess, numbers):
    # as TF 2.21: the other inputs' elements of that step are used up
    assert _read(sess, tf.data.Dataset.zip((numbers, numbers))) == \
        [[1.0, 1.0], "error", [3.0, 3.0], "error", [5.0, 5.0]]
    assert _read(sess, tf.data.Dataset.zip((numbers, tf.data.Dataset.range(5)))) == \
        [[1.0, 0], "error", [3.0, 2], "error", [5.0, 4]]


def test_ignore_errors_still_drops_them(sess, numbers):
    assert _read(sess, numbers.apply(tf.data.experimental.ignore_errors())) == [1, 3, 5]
