"""Dataset.random, sample_from_datasets and choose_from_datasets give TF's values and
orders: against TF 2.21 (`tensorflow.compat.v1`, graph mode, an initializable iterator
drained; the graph seed TF's default), recorded once and written here as literals."""
import pytest

import tensorweave as tf

X = tf.data.experimental
# TF's warning for rerandomize_each_iteration under TF1 behaviour (checked once below)
pytestmark = pytest.mark.filterwarnings("ignore:In TF 1, the `rerandomize_each_iteration")


def _three():
    return [tf.data.Dataset.range(0, 10), tf.data.Dataset.range(100, 110),
            tf.data.Dataset.range(200, 205)]


def _pair(second_end=110):
    return [tf.data.Dataset.range(0, 10), tf.data.Dataset.range(100, second_end)]


CASES = {
    "random": (lambda: tf.data.Dataset.random(seed=5).take(6),
               [3568415791, 2798973839, 2476249224, 2816106479, 2507884952, 3643392934]),
    "random_rerandomized": (
        lambda: tf.data.Dataset.random(seed=5, rerandomize_each_iteration=True).take(3)
        .repeat(2),
        [1388993965, 1469601551, 1131953315, 1720460324, 3622488375, 2748373011]),
    "sample_weighted": (
        lambda: X.sample_from_datasets(_three(), [0.5, 0.3, 0.2], seed=4),
        [0, 200, 1, 2, 100, 101, 102, 3, 103, 201, 4, 5, 6, 202, 7, 104, 105, 106, 107, 108,
         203, 8, 9, 109, 204]),
    "sample_uniform": (
        lambda: tf.data.Dataset.sample_from_datasets(_pair(), seed=9),
        [0, 100, 101, 102, 103, 1, 2, 104, 3, 4, 5, 6, 105, 106, 7, 8, 9, 107, 108, 109]),
    "sample_stop_on_empty": (
        lambda: tf.data.Dataset.sample_from_datasets(_pair(103), [0.2, 0.8], seed=9,
                                                     stop_on_empty_dataset=True),
        [0, 100, 101, 102]),
    "sample_weight_dataset": (
        lambda: X.sample_from_datasets(_pair(), tf.data.Dataset.from_tensor_slices(
            [[0.9, 0.1], [0.1, 0.9]]).repeat(), seed=2),
        [0, 100, 1, 101, 2, 102, 3, 103, 4, 104, 5, 105, 6, 106, 7, 107, 108, 109, 8, 9]),
    "choose": (
        lambda: X.choose_from_datasets(_pair(105)[:1] + [tf.data.Dataset.range(100, 105)],
                                       tf.data.Dataset.from_tensor_slices(
                                           tf.constant([1, 0, 1, 1, 0], tf.int64))),
        [100, 0, 101, 102, 1]),
}


def _drained(sess, nxt, limit: int = 60) -> list:
    """The values `nxt` gives until OutOfRangeError (at most `limit`)."""
    got = []
    for _ in range(limit):
        try:
            got.append(int(sess.run(nxt)))
        except tf.errors.OutOfRangeError:
            break
    return got


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_orders_are_tfs(case):
    make, expected = CASES[case]
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(make())
        nxt = it.get_next()
        with tf.Session() as sess:
            sess.run(it.initializer)
            got = _drained(sess, nxt, 40)
    assert got == expected


def test_zero_weights_drop_their_datasets_as_tfs():
    # TF drops a dataset of Python weight 0 before drawing: one left is returned as is
    with tf.Graph().as_default():
        only = X.sample_from_datasets(_pair(), [0.0, 1.0], seed=3)
        assert only.element_spec == tf.data.Dataset.range(1).element_spec
        it = tf.data.make_one_shot_iterator(only.take(3))
        with tf.Session() as sess:
            nxt = it.get_next()
            assert [int(sess.run(nxt)) for _ in range(3)] == [100, 101, 102]
    with pytest.raises(TypeError, match="`weights` type must be either"):
        X.sample_from_datasets(_pair(), tf.constant([1, 2]))


# Dataset.sample_from_datasets(rerandomize_each_iteration=True): each pass of a repeat
# draws anew, an iterator initialized again starts again from the first pass's draws.
# Recorded from TF 2.21 (and the same from TF 2.15), `tensorflow.compat.v1` under
# disable_eager_execution() (also under disable_v2_behavior()): the program builds
# make() in a new graph (after tf.set_random_seed(graph_seed) if one is given), makes an
# initializable iterator, and in one session initializes it twice, each time draining it
# to OutOfRangeError; both give the orders below (one list for each pass of the repeat).
def _small_three():
    return [tf.data.Dataset.range(0, 4), tf.data.Dataset.range(100, 104),
            tf.data.Dataset.range(200, 203)]


def _small_pair():
    return [tf.data.Dataset.range(0, 5), tf.data.Dataset.range(100, 105)]


def _rerandomized(datasets, weights=None, seed=None, **kwargs):
    return tf.data.Dataset.sample_from_datasets(datasets, weights, seed,
                                                rerandomize_each_iteration=True, **kwargs)


RERANDOMIZED = {
    "weighted": (None, lambda: _rerandomized(_small_three(), [0.5, 0.3, 0.2], 4).repeat(3), [
        [0, 1, 2, 3, 200, 201, 202, 100, 101, 102, 103],
        [0, 200, 1, 2, 100, 3, 201, 202, 101, 102, 103],
        [100, 101, 0, 200, 102, 1, 103, 2, 201, 202, 3]]),
    "graph_seed_only": (7, lambda: _rerandomized(_small_pair()).repeat(2), [
        [100, 101, 0, 1, 2, 3, 102, 4, 103, 104],
        [0, 1, 100, 2, 101, 3, 4, 102, 103, 104]]),
    "graph_and_op_seed": (7, lambda: _rerandomized(_small_pair(), seed=4).repeat(2), [
        [100, 101, 0, 1, 2, 3, 4, 102, 103, 104],
        [100, 101, 102, 103, 104, 0, 1, 2, 3, 4]]),
    "weight_dataset": (None, lambda: _rerandomized(_small_pair(), tf.data.Dataset
                                                   .from_tensor_slices([[0.9, 0.1],
                                                                        [0.1, 0.9]])
                                                   .repeat(), 2).repeat(2), [
        [0, 100, 1, 2, 101, 102, 3, 103, 4, 104],
        [0, 1, 2, 100, 3, 101, 4, 102, 103, 104]]),
    "tensor_weights": (None, lambda: _rerandomized(_small_pair(), tf.constant(
        [0.5, 0.5], tf.float64), 3).repeat(2), [
        [0, 1, 2, 3, 100, 4, 101, 102, 103, 104],
        [100, 101, 0, 1, 102, 103, 104, 2, 3, 4]]),
    # a pass ends at the first draw of an exhausted dataset
    "stop_on_empty": (None, lambda: _rerandomized(_small_pair(), [0.3, 0.7], 9,
                                                  stop_on_empty_dataset=True).repeat(3), [
        [0, 1, 100, 2, 101, 102, 103, 104],
        [100, 101, 102, 103, 104],
        [100, 0, 101, 1, 102, 103, 2, 104]]),
    "take_then_repeat": (None, lambda: _rerandomized(_small_pair(), seed=4).take(4)
                         .repeat(3), [[0, 1, 2, 3], [0, 100, 1, 2], [100, 101, 0, 102]]),
    "no_repeat": (None, lambda: _rerandomized(_small_pair(), seed=4), [
        [0, 1, 2, 3, 4, 100, 101, 102, 103, 104]]),
    # False: the draws of sample_from_datasets without it, the same on every pass
    "not_rerandomized": (None, lambda: tf.data.Dataset.sample_from_datasets(
        _small_pair(), seed=4, rerandomize_each_iteration=False).repeat(2), [
        [0, 100, 1, 2, 101, 102, 103, 3, 104, 4]] * 2),
}


def _initializations(make, graph_seed=None, times: int = 2) -> list:
    """What an initializable iterator over make() gives, drained, on each of `times`
    initializations in one session."""
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        it = tf.data.make_initializable_iterator(make())
        nxt = it.get_next()
        with tf.Session() as sess:
            runs = []
            for _ in range(times):
                sess.run(it.initializer)
                runs.append(_drained(sess, nxt))
    return runs


@pytest.mark.parametrize("case", sorted(RERANDOMIZED))
def test_rerandomized_orders_are_tfs_on_every_pass_and_initialization(case):
    graph_seed, make, passes = RERANDOMIZED[case]
    expected = [v for one_pass in passes for v in one_pass]
    assert _initializations(make, graph_seed) == [expected, expected]


def test_rerandomized_unseeded_sample_draws_anew_on_each_pass():
    with pytest.warns(UserWarning, match="only supported for repeat-based epochs"):
        first, again = _initializations(lambda: _rerandomized(_pair()).repeat(2))
    for run in (first, again):
        one, two = run[:20], run[20:]
        assert sorted(one) == sorted(two) == list(range(10)) + list(range(100, 110))
        assert one != two   # equal with probability 1 / C(20, 10)


@pytest.mark.parametrize("seed", [4, None])
def test_rerandomized_sample_refuses_a_one_shot_iterator_as_tf(seed):
    # TF 2.21: ValueError when the iterator is made (its seed generator is stateful)
    with tf.Graph().as_default():
        ds = _rerandomized(_pair(), seed=seed)
        with pytest.raises(ValueError, match=r"^Cannot capture a stateful node \(name:"
                           r"DummySeedGenerator, type:DummySeedGenerator\) by value.: A "
                           r"likely cause .* Use `make_initializable_iterator\(\)` "
                           r"instead.$"):
            tf.data.make_one_shot_iterator(ds.repeat(2))


def test_rerandomized_sample_of_one_dataset_left_is_that_dataset():
    # TF returns the one dataset of weight > 0 as is, with no random source: a one-shot
    # iterator reads it (TF 2.21 gives 100, 101, 102)
    with tf.Graph().as_default():
        only = _rerandomized(_pair(), [0.0, 1.0], seed=4)
        it = tf.data.make_one_shot_iterator(only)
        with tf.Session() as sess:
            assert _drained(sess, it.get_next(), 3) == [100, 101, 102]


def test_rerandomized_sample_build_errors_are_tfs():
    with pytest.raises(TypeError, match="`weights` type must be either"):
        _rerandomized(_pair(), tf.constant([1, 2]), seed=4)
    with pytest.raises(ValueError, match=r"`len\(weights\)=1` vs. `len\(datasets\)=2`"):
        _rerandomized(_pair(), [1.0], seed=4)


def test_rerandomized_sample_restored_mid_pass_goes_on_as_tfs(tmp_path):
    # TF 2.21 (same program, an iterator saved by tf.train.Saver after 13 elements, the
    # 3rd of the second pass, and restored in a new session) gives the 17 that follow
    with tf.Graph().as_default():
        ds = _rerandomized(_small_pair(), seed=4).repeat(3)
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(it)])
        with tf.Session() as sess:
            sess.run(it.initializer)
            assert _drained(sess, nxt, 13) == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104, 0,
                                               100, 1]
            saver.save(sess, str(tmp_path / "it"))
        with tf.Session() as sess:
            sess.run(it.initializer)
            saver.restore(sess, str(tmp_path / "it"))
            assert _drained(sess, nxt) == [2, 101, 3, 4, 102, 103, 104, 100, 101, 0, 102,
                                           103, 1, 104, 2, 3, 4]
