"""RandomIndexShuffle (tf.random.experimental.index_shuffle, tf.random_index_shuffle) and
StatelessShuffle (tf.random.experimental.stateless_shuffle): TF's values, shapes and
errors.

Every expected value is a literal recorded from TF 2.21 (`tensorflow.compat.v1`, graph
mode, CPU) with the call written next to it.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.ops.random import simon_shuffle

U64 = np.uint64

# (build, TF 2.21's value): index_shuffle = tf.random.experimental.index_shuffle,
# raw = tf.raw_ops.RandomIndexShuffle
INDEX_SHUFFLE_CASES = {
    # index_shuffle(tf.range(4), [5, 9], 3): TF's docstring example
    "doc": (lambda: tf.random.experimental.index_shuffle(tf.range(4), [5, 9], 3),
            np.array([2, 0, 1, 3], np.int32)),
    # index_shuffle(tf.range(10, dtype=tf.int64), [5, 8], 9)
    "int64": (lambda: tf.random.experimental.index_shuffle(tf.range(10, dtype=tf.int64),
                                                           [5, 8], 9),
              np.array([3, 8, 0, 1, 2, 7, 6, 9, 4, 5], np.int64)),
    # index_shuffle(tf.range(0, 1000, 97), [7, 11], 999)
    "bound_999": (lambda: tf.random.experimental.index_shuffle(tf.range(0, 1000, 97),
                                                               [7, 11], 999),
                  np.array([728, 96, 473, 798, 494, 221, 801, 446, 304, 32, 868], np.int32)),
    # index_shuffle(int64 [0, 1, 2, 3, 2**20, 2**20 + 5], int64 [-3, 2**33 + 1], 2**20 + 5)
    "bound_2p20": (lambda: tf.random.experimental.index_shuffle(
        tf.constant([0, 1, 2, 3, 2**20, 2**20 + 5], tf.int64),
        tf.constant([-3, 2**33 + 1], tf.int64), tf.constant(2**20 + 5, tf.int64)),
        np.array([837644, 6559, 210958, 540563, 598317, 796706], np.int64)),
    # index_shuffle(int64 [0, 12345, 2**40], [1, 2], int64 2**40): 2**40 is 0 in 40 bits
    "bound_2p40": (lambda: tf.random.experimental.index_shuffle(
        tf.constant([0, 12345, 2**40], tf.int64), [1, 2], tf.constant(2**40, tf.int64)),
        np.array([560705115234, 481761742792, 560705115234], np.int64)),
    # index_shuffle(uint64 [0, 1, 2**63, 2**64 - 1], uint64 [3, 4], uint64 2**64 - 1)
    "uint64_full": (lambda: tf.random.experimental.index_shuffle(
        tf.constant(np.array([0, 1, 2**63, 2**64 - 1], U64)), tf.constant([3, 4], tf.uint64),
        tf.constant(2**64 - 1, tf.uint64)),
        np.array([9698546746336417246, 9698546334019572935, 475174743841379711,
                  7578812230267347781], U64)),
    # index_shuffle(uint32 [0, 5, 4e9], uint32 [9, 9], uint32 4e9)
    "uint32": (lambda: tf.random.experimental.index_shuffle(
        tf.constant([0, 5, 4000000000], tf.uint32), tf.constant([9, 9], tf.uint32),
        tf.constant(4000000000, tf.uint32)),
        np.array([686531951, 700179058, 1938577537], np.uint32)),
    # index_shuffle([0, 1, 2], [4, 2], [2, 70000, 3])
    "vector_bounds": (lambda: tf.random.experimental.index_shuffle([0, 1, 2], [4, 2],
                                                                   [2, 70000, 3]),
                      np.array([0, 40467, 1], np.int32)),
    # index_shuffle(3, [4, 2], [5, 6, 7])
    "scalar_index_vector_bounds": (
        lambda: tf.random.experimental.index_shuffle(3, [4, 2], [5, 6, 7]),
        np.array([3, 3, 3], np.int32)),
    # index_shuffle([0, 1], [1, 2], 1) and index_shuffle(0, [1, 2], 0)
    "bound_1": (lambda: tf.random.experimental.index_shuffle([0, 1], [1, 2], 1),
                np.array([1, 0], np.int32)),
    "bound_0": (lambda: tf.random.experimental.index_shuffle(0, [1, 2], 0), np.int32(0)),
    # index_shuffle([0, 1, 65535, 65536], [1, 2], 65536): 16-bit blocks, 65536 wraps to 0
    "bound_65536": (lambda: tf.random.experimental.index_shuffle([0, 1, 65535, 65536],
                                                                 [1, 2], 65536),
                    np.array([55891, 35483, 15003, 55891], np.int32)),
    # index_shuffle(2, [[5, 9, 1]], 3): TF pads the batch axis, so the seeds are
    # [[498247692] * 3, [5, 9, 1]]
    "seed_rows_padded": (lambda: tf.random.experimental.index_shuffle(2, [[5, 9, 1]], 3),
                         np.array([2, 0], np.int32)),
    # raw(index=tf.range(10), seed=[1, 2, 3], max_index=9, rounds=4 / 6 / 8)
    "raw_rounds_4": (lambda: tf.raw_ops.RandomIndexShuffle(
        index=tf.range(10), seed=[1, 2, 3], max_index=9),
        np.array([2, 0, 6, 4, 8, 1, 7, 9, 5, 3], np.int32)),
    "raw_rounds_6": (lambda: tf.random_index_shuffle(tf.range(10), [1, 2, 3], 9, rounds=6),
                     np.array([1, 6, 3, 7, 0, 5, 9, 2, 8, 4], np.int32)),
    "raw_rounds_8": (lambda: tf.raw_ops.RandomIndexShuffle(
        index=tf.range(10), seed=[1, 2, 3], max_index=9, rounds=8),
        np.array([6, 9, 4, 1, 3, 2, 0, 5, 7, 8], np.int32)),
    # raw(int64 [7, 100000, 2**31 - 1], int64 [-1, 2**40 + 3, 77], int64 2**31 - 1, rounds=8)
    "raw_wide_seed_words": (lambda: tf.raw_ops.RandomIndexShuffle(
        index=tf.constant([7, 100000, 2**31 - 1], tf.int64),
        seed=tf.constant([-1, 2**40 + 3, 77], tf.int64),
        max_index=tf.constant(2**31 - 1, tf.int64), rounds=8),
        np.array([865111124, 471501328, 2134857617], np.int64)),
    # raw(index=[1, 1, 1], seed=[[1, 2, 3], [4, 5, 6], [7, 8, 9]], max_index=100)
    "raw_seed_per_index": (lambda: tf.raw_ops.RandomIndexShuffle(
        index=tf.constant([1, 1, 1]), seed=[[1, 2, 3], [4, 5, 6], [7, 8, 9]], max_index=100),
        np.array([61, 45, 15], np.int32)),
    # raw(index=5, seed=[[1, 2, 3], [4, 5, 6]], max_index=[50, 60000])
    "raw_seed_and_bound_per_output": (lambda: tf.raw_ops.RandomIndexShuffle(
        index=tf.constant(5), seed=[[1, 2, 3], [4, 5, 6]], max_index=[50, 60000]),
        np.array([16, 5955], np.int32)),
}


@pytest.mark.parametrize("case", sorted(INDEX_SHUFFLE_CASES))
def test_index_shuffle_gives_tf_values(sess, case):
    build, expected = INDEX_SHUFFLE_CASES[case]
    out = build()
    assert out.op.type == "RandomIndexShuffle"
    assert out.dtype.as_numpy_dtype == expected.dtype
    assert out.shape.as_list() == list(np.shape(expected))
    value = sess.run(out)
    assert value.dtype == expected.dtype
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize("case", ["bound_999", "bound_1", "bound_65536", "raw_rounds_6",
                                  "raw_seed_and_bound_per_output"])
def test_cycle_walk_without_tables_gives_the_same_values(monkeypatch, sess, case):
    # 16-bit blocks are walked through a table of the cipher; walking them step by step
    # (the path of wider blocks) must end at the same positions
    monkeypatch.setattr(simon_shuffle, "_TABLE_WORD_BITS", 0)   # no block is tabled
    build, expected = INDEX_SHUFFLE_CASES[case]
    np.testing.assert_array_equal(sess.run(build()), expected)


@pytest.mark.parametrize("bound", [1, 9, 999, 65535, 65536 + 1000, 2**20 + 7])
def test_index_shuffle_permutes_the_whole_range(sess, bound):
    index = tf.range(bound + 1, dtype=tf.int64)
    out = sess.run(tf.random.experimental.index_shuffle(index, [11, -4],
                                                        tf.constant(bound, tf.int64)))
    np.testing.assert_array_equal(np.sort(out), np.arange(bound + 1))
    assert bound < 9 or not np.array_equal(out, np.arange(bound + 1))


def test_index_shuffle_graph_is_tf_composition(graph):
    out = tf.random.experimental.index_shuffle(1, [5, 9], 3)
    assert out.op.name == "RandomIndexShuffle" and out.op.get_attr("rounds") == 4
    assert out.op.inputs[1].op.type == "PadV2"
    assert out.op.inputs[1].shape.as_list() == [3]


def test_index_shuffle_static_shapes(graph):
    ri = tf.raw_ops.RandomIndexShuffle
    unknown = tf.placeholder(tf.int32)
    assert ri(index=unknown, seed=[1, 2, 3], max_index=4).shape.ndims is None
    assert ri(index=unknown, seed=[[1, 2, 3]] * 5, max_index=4).shape.as_list() == [5]
    vector = tf.placeholder(tf.int32, [None])
    assert ri(index=vector, seed=[1, 2, 3], max_index=[4, 5]).shape.as_list() == [2]
    assert ri(index=vector, seed=[1, 2, 3], max_index=4).shape.as_list() == [None]
    assert ri(index=[1, 2], seed=[[1, 2, 3]], max_index=[4]).shape.as_list() == [2]


# --- RandomIndexShuffle errors (TF 2.21's class and message) ----------------------------
@pytest.mark.parametrize("build,message", [
    # index_shuffle(2, [5, 9, 1], 3)
    (lambda: tf.random.experimental.index_shuffle(2, [5, 9, 1], 3),
     r"Seed must have shape \[3\] or \[n, 3\] but got \[4\]\."),
    # index_shuffle([1, 2], [[5, 9], [1, 2], [3, 4]], 3): an [n, 2] seed never builds
    (lambda: tf.random.experimental.index_shuffle([1, 2], [[5, 9], [1, 2], [3, 4]], 3),
     r"Seed must have shape \[3\] or \[n, 3\] but got \[4, 2\]\."),
    # index_shuffle(1, tf.placeholder(tf.int32), 3)
    (lambda: tf.random.experimental.index_shuffle(1, tf.placeholder(tf.int32), 3),
     r"Seed must have shape \[3\] or \[n, 3\] but got \[-1\]\."),
    # index_shuffle([1, 2], [5, 9], [3, 4, 5])
    (lambda: tf.random.experimental.index_shuffle([1, 2], [5, 9], [3, 4, 5]),
     r"Max index has shape \[3\] but must have shape \[2\]\."),
    # raw(index=[1, 2], seed=[[1, 2, 3]] * 3, max_index=[3, 9])
    (lambda: tf.raw_ops.RandomIndexShuffle(index=tf.constant([1, 2]), seed=[[1, 2, 3]] * 3,
                                           max_index=tf.constant([3, 9])),
     r"Seed has shape \[3, 3\] but must have shape \[2, 3\]\. since index had shape \[2\]\."),
    # index_shuffle([[1, 2]], [5, 9], 3)
    (lambda: tf.random.experimental.index_shuffle([[1, 2]], [5, 9], 3),
     r"Shape must be at most rank 1 but is rank 2"),
    # raw(index=1, seed=5, max_index=7)
    (lambda: tf.raw_ops.RandomIndexShuffle(index=1, seed=5, max_index=7),
     r"Shape must be at least rank 1 but is rank 0"),
])
def test_index_shuffle_shape_errors_at_build_time(graph, build, message):
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize("index,seed,message", [
    (1.0, [5, 9], "parameter 'index' has DataType float32 not in list of allowed values: "
                  "int32, uint32, int64, uint64"),
    (1, [5.0, 9.0], "parameter 'seed' has DataType float32 not in list"),
])
def test_index_shuffle_dtype_errors(graph, index, seed, message):
    with pytest.raises(TypeError, match=message):
        tf.random.experimental.index_shuffle(index, seed, 3)


@pytest.mark.parametrize("index,max_index,message", [
    (-1, 3, "index must be >= 0 but was -1"),
    (2, -3, "max_index must be >= 0 but was -3"),
    (12, 3, r"max_index must be >= index, but 3 < 12"),
    # element by element, in order: element 0's bound is checked before element 1's index
    ([0, -1], [-2, 5], "max_index must be >= 0 but was -2"),
    ([5, -1], [3, 9], r"max_index must be >= index, but 3 < 5"),
])
def test_index_shuffle_value_errors_at_run_time(sess, index, max_index, message):
    out = tf.raw_ops.RandomIndexShuffle(index=tf.constant(index), seed=[1, 2, 3],
                                        max_index=tf.constant(max_index))
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
        sess.run(out)
    assert "RandomIndexShuffle" in str(info.value)


@pytest.mark.parametrize("index,seed,max_index,message", [
    # TF's message, its typo included
    ([], [1, 2, 3], 5, r"Index bust be a scalar or vector\."),
    ([1], [1, 2, 3], [5, 6, 7], r"Index bust be a scalar or vector\."),
    ([1, 2, 3], [[1, 2, 3]], [5, 6, 7],
     r"Seed must be a vector of size \[3\] or a matrix of size \[3, 3\] but got \[1,3\]\."),
])
def test_index_shuffle_batch_errors_at_run_time(sess, index, seed, max_index, message):
    out = tf.raw_ops.RandomIndexShuffle(index=tf.constant(index, tf.int32), seed=seed,
                                        max_index=max_index)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(out)


@pytest.mark.parametrize("rounds", [0, 2, 3, 5])
def test_index_shuffle_rejects_rounds_tf_cannot_run(sess, rounds):
    # TF's cipher reads round keys past its schedule for these (undefined values)
    out = tf.random_index_shuffle(tf.range(10), [1, 2, 3], 9, rounds=rounds)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="an even number of rounds of at least 4; got rounds=%d" % rounds):
        sess.run(out)


# --- StatelessShuffle -------------------------------------------------------------------
SHUFFLE_CASES = {
    # stateless_shuffle(tf.range(10), seed=[1, 2]) (also int64 seeds, alg="philox")
    "range10": (lambda: tf.random.experimental.stateless_shuffle(tf.range(10), seed=[1, 2]),
                np.array([0, 3, 8, 1, 5, 4, 9, 7, 6, 2], np.int32)),
    "range10_int64_seed": (lambda: tf.random.experimental.stateless_shuffle(
        tf.range(10), seed=tf.constant([1, 2], tf.int64)),
        np.array([0, 3, 8, 1, 5, 4, 9, 7, 6, 2], np.int32)),
    "range10_philox": (lambda: tf.random.experimental.stateless_shuffle(
        tf.range(10), seed=[1, 2], alg="philox"),
        np.array([0, 3, 8, 1, 5, 4, 9, 7, 6, 2], np.int32)),
    # stateless_shuffle(tf.range(7, dtype=tf.int64), seed=[-5, 2**31 - 1])
    "negative_seed": (lambda: tf.random.experimental.stateless_shuffle(
        tf.range(7, dtype=tf.int64), seed=[-5, 2**31 - 1]),
        np.array([0, 6, 4, 5, 2, 3, 1], np.int64)),
    # stateless_shuffle(tf.reshape(tf.range(15, dtype=tf.float32), [5, 3]), seed=[8, 9])
    "rows": (lambda: tf.random.experimental.stateless_shuffle(
        tf.reshape(tf.range(15, dtype=tf.float32), [5, 3]), seed=[8, 9]),
        np.arange(15, dtype=np.float32).reshape(5, 3)[[1, 2, 0, 3, 4]]),
    # stateless_shuffle([[1, 2], [3, 4], [5, 6]], seed=[8, 9]): TF's docstring example
    "doc": (lambda: tf.random.experimental.stateless_shuffle([[1, 2], [3, 4], [5, 6]],
                                                             seed=[8, 9]),
            np.array([[5, 6], [1, 2], [3, 4]], np.int32)),
    # stateless_shuffle(tf.constant([b"a", ..., b"f"]), seed=[0, 0])
    "strings": (lambda: tf.random.experimental.stateless_shuffle(
        tf.constant([b"a", b"b", b"c", b"d", b"e", b"f"]), seed=[0, 0]),
        np.array([b"c", b"f", b"e", b"d", b"a", b"b"], object)),
    # stateless_shuffle(tf.range(1000), seed=[11, 12])[:20]
    "range1000_head": (lambda: tf.random.experimental.stateless_shuffle(
        tf.range(1000), seed=[11, 12])[:20],
        np.array([80, 847, 385, 783, 67, 359, 169, 29, 657, 417, 558, 675, 533, 593, 991,
                  336, 473, 972, 940, 387], np.int32)),
    # raw StatelessShuffle(tf.range(8), key=[2**63 + 5], counter=[7, 2**64 - 1], alg=3)
    "raw_auto_select": (lambda: tf.raw_ops.StatelessShuffle(
        value=tf.range(8), key=tf.constant(np.array([2**63 + 5], U64)),
        counter=tf.constant(np.array([7, 2**64 - 1], U64)), alg=3),
        np.array([4, 5, 2, 6, 1, 3, 0, 7], np.int32)),
    # raw StatelessShuffle(tf.range(8), key=[5], counter=[7, 8, 9], alg=1): 2 words used
    "raw_long_counter": (lambda: tf.raw_ops.StatelessShuffle(
        value=tf.range(8), key=tf.constant([5], tf.uint64),
        counter=tf.constant([7, 8, 9], tf.uint64), alg=1),
        np.array([0, 4, 6, 3, 7, 5, 2, 1], np.int32)),
    # nothing to shuffle: TF returns the input
    "one_row": (lambda: tf.random.experimental.stateless_shuffle(tf.constant([[1, 2, 3]]),
                                                                 seed=[1, 2]),
                np.array([[1, 2, 3]], np.int32)),
    "scalar": (lambda: tf.random.experimental.stateless_shuffle(tf.constant(5.0), seed=[1, 2]),
               np.float32(5.0)),
    "empty": (lambda: tf.random.experimental.stateless_shuffle(tf.zeros([0, 3]), seed=[1, 2]),
              np.zeros([0, 3], np.float32)),
}


@pytest.mark.parametrize("case", sorted(SHUFFLE_CASES))
def test_stateless_shuffle_gives_tf_values(sess, case):
    build, expected = SHUFFLE_CASES[case]
    out = build()
    assert out.shape.as_list() == list(np.shape(expected))
    value = sess.run(out)
    assert value.dtype == expected.dtype
    np.testing.assert_array_equal(value, expected)


def test_stateless_shuffle_moves_whole_slices(sess):
    # stateless_shuffle(bool [4, 3, 2], seed=[3, 1]) in TF: the rows keep their contents
    value = np.arange(24).reshape(4, 3, 2)
    out = sess.run(tf.random.experimental.stateless_shuffle(tf.constant(value), seed=[3, 1]))
    order = [int(row[0, 0]) // 6 for row in out]
    assert sorted(order) == [0, 1, 2, 3] and order != [0, 1, 2, 3]
    np.testing.assert_array_equal(out, value[order])


def test_stateless_shuffle_graph_is_tf_composition(graph):
    out = tf.random.experimental.stateless_shuffle(tf.range(5), seed=[1, 2])
    assert out.op.name == "stateless_shuffle/StatelessShuffle"
    key, counter, alg = out.op.inputs[1:]
    assert key.op.type == "StatelessRandomGetKeyCounter" and counter.dtype == tf.uint64
    assert alg.op.type == "Const"


def test_stateless_shuffle_has_no_gradient(graph):
    # TF registers no gradient for StatelessShuffle: tf.gradients, and so the numeric
    # gradient check, raise LookupError
    x = tf.placeholder(tf.float64, [3])
    y = tf.random.experimental.stateless_shuffle(x, seed=[1, 2])
    message = r"No gradient defined for operation 'stateless_shuffle/StatelessShuffle' " \
              r"\(op type: StatelessShuffle\)"
    with pytest.raises(LookupError, match=message):
        tf.gradients(y, x)
    with pytest.raises(LookupError, match=message):
        compute_gradient_error(x, [3], y, [3], x_init_value=np.arange(3.0))


@pytest.mark.parametrize("alg,error,message", [
    ("bad", ValueError, "Argument `alg` got unsupported value bad. Supported values are "
                        "philox for the Philox algorithm"),
    (7, ValueError, "Argument `alg` got unsupported value 7. Supported values are 1 for the "
                    "Philox algorithm, 2 for the ThreeFry algorithm, and 3 for auto-selection"),
    (1.5, TypeError, r"Can't convert argument `alg` \(of value 1.5 and type <class 'float'>\)"),
])
def test_stateless_shuffle_alg_errors(graph, alg, error, message):
    with pytest.raises(error, match=message):
        tf.random.experimental.stateless_shuffle(tf.range(5), seed=[1, 2], alg=alg)


def test_stateless_shuffle_seed_errors(graph):
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.random.experimental.stateless_shuffle(tf.range(5), seed=[1, 2, 3])
    with pytest.raises(TypeError, match="parameter 'seed' has DataType float32 not in list "
                                        "of allowed values: int32, int64"):
        tf.random.experimental.stateless_shuffle(tf.range(5), seed=[1.0, 2.0])


@pytest.mark.parametrize("build,message", [
    # stateless_shuffle(tf.range(5), seed=[1, 2], alg="threefry"): TF's CPU kernel
    # refuses the one-word counter
    (lambda: tf.random.experimental.stateless_shuffle(tf.range(5), seed=[1, 2],
                                                      alg="threefry"),
     r"counter must be a vector with length at least 2; got shape: \[1\]\. \(Note that "
     r"batched counters are not supported yet\.\)"),
    (lambda: tf.raw_ops.StatelessShuffle(value=tf.range(5), key=tf.constant([1], tf.uint64),
                                         counter=tf.constant([1, 2], tf.uint64), alg=2),
     "Unsupported algorithm id: 2"),
    (lambda: tf.raw_ops.StatelessShuffle(value=tf.range(5), key=tf.constant([1], tf.uint64),
                                         counter=tf.constant([1, 2], tf.uint64), alg=9),
     r"counter must be a vector with length at least 9; got shape: \[2\]"),
    (lambda: tf.raw_ops.StatelessShuffle(value=tf.range(5),
                                         key=tf.constant([1, 2], tf.uint64),
                                         counter=tf.constant([1, 2], tf.uint64), alg=1),
     r"key must have shape \[1\], not \[2\]\. \(Note that batched keys are not supported"),
    (lambda: tf.raw_ops.StatelessShuffle(value=tf.range(5), key=tf.constant(1, tf.uint64),
                                         counter=tf.constant([1, 2], tf.uint64), alg=1),
     r"key must have shape \[1\], not \[\]\."),
    (lambda: tf.raw_ops.StatelessShuffle(value=tf.range(5), key=tf.constant([1], tf.uint64),
                                         counter=tf.constant([1, 2], tf.uint64), alg=[1]),
     r"input 3 \(0-based\) must have shape \[\], not \[1\]"),
])
def test_stateless_shuffle_kernel_errors(sess, build, message):
    out = build()
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
        sess.run(out)
    assert "StatelessShuffle" in str(info.value)
