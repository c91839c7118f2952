"""Dataset.from_generator, shard, enumerate and reduce (data/generators.py,
data/transforms.py): the same elements and errors as TensorFlow 2.21."""
import numpy as np
import pytest

import tensorweave as tf


def _pairs():
    for i in range(3):
        yield i, [i] * i


def test_generated_elements_with_their_structure(drain):
    ds = tf.data.Dataset.from_generator(_pairs, (tf.int64, tf.int32),
                                        (tf.TensorShape([]), tf.TensorShape([None])))
    assert [s.as_list() for s in ds.output_shapes] == [[], [None]]
    got = drain(ds)
    assert [(int(a), b.tolist()) for a, b in got] == [(0, []), (1, [1]), (2, [2, 2])]
    assert got[1][1].dtype == np.int32
    unknown = tf.data.Dataset.from_generator(_pairs, (tf.int64, tf.int32))
    assert unknown.output_shapes[1].ndims is None
    records = tf.data.Dataset.from_generator(lambda: iter([{"a": 1.5, "b": "x"}]),
                                             {"a": tf.float32, "b": tf.string})
    assert [(e["a"], e["b"]) for e in drain(records)] == [(1.5, b"x")]


def test_each_iterator_calls_the_generator_again_with_its_args(sess):
    calls = []

    def count(n, word):
        calls.append((int(n), word))
        return (word * k for k in range(n))
    n = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.from_generator(count, tf.string, args=(n, "ab"))
    it = tf.data.make_initializable_iterator(ds.repeat(2))
    nxt = it.get_next()
    sess.run(it.initializer, {n: 2})
    assert [sess.run(nxt) for _ in range(4)] == [b"", b"ab", b"", b"ab"]
    assert calls == [(2, b"ab"), (2, b"ab")]  # strings arrive as bytes, as in TF


@pytest.mark.parametrize("gen,dtype,shape,cls,message", [
    (lambda: iter([[1, 2, 3]]), tf.int32, [2], tf.errors.InvalidArgumentError,
     r"`generator` yielded an element of shape \(3,\) where an element of shape \(2,\) "
     r"was expected."),
    (lambda: iter(["x"]), tf.int32, None, tf.errors.InvalidArgumentError,
     r"`generator` yielded an element that did not match the expected structure. The "
     r"expected structure was TensorSpec\(shape=<unknown>, dtype=tf.int32, name=None\), "
     r"but the yielded element was x."),
    (lambda: iter([1.7]), tf.int32, None, tf.errors.InvalidArgumentError,
     "but the yielded element was 1.7"),
    (lambda: (1 / 0 for _ in range(2)), tf.float32, None, tf.errors.UnknownError,
     "ZeroDivisionError: division by zero"),
    # the generator's own exceptions take py_func's classes, as TF's
    (lambda: (int("x") for _ in range(2)), tf.int32, None, tf.errors.InvalidArgumentError,
     "ValueError: invalid literal"),
    (lambda: (len(3) for _ in range(2)), tf.int32, None, tf.errors.InvalidArgumentError,
     "TypeError"),
])
def test_generator_errors(sess, gen, dtype, shape, cls, message):
    ds = tf.data.Dataset.from_generator(gen, dtype, shape)
    with pytest.raises(cls, match=message):
        sess.run(ds.make_one_shot_iterator().get_next())
    with pytest.raises(TypeError, match="must be a Python callable"):
        tf.data.Dataset.from_generator(3, tf.int32)


def test_legacy_function_spellings(drain):
    ds = tf.data.Dataset.range(6).filter_with_legacy_function(lambda x: tf.equal(x % 2, 0))
    assert [int(v) for v in drain(ds.map_with_legacy_function(lambda x: x * 3))] == \
        [0, 6, 12]


def test_shard_and_enumerate(sess, drain):
    assert [int(v) for v in drain(tf.data.Dataset.range(10).shard(3, 1))] == [1, 4, 7]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Index must be between 0 and 2 \(currently index = 3\)."):
        sess.run(tf.data.Dataset.range(10).shard(3, 3).make_one_shot_iterator().get_next())
    assert [(int(i), int(v)) for i, v in drain(tf.data.Dataset.range(3).enumerate(5))] \
        == [(5, 0), (6, 1), (7, 2)]


def test_reduce_folds_the_whole_dataset(sess):
    total = tf.data.Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x)
    assert total.dtype == tf.int64 and sess.run(total) == 10
    both = tf.data.Dataset.range(5).reduce((np.int64(0), np.int64(1)),
                                           lambda s, x: (s[0] + x, s[1] * (x + 1)))
    assert tuple(int(v) for v in sess.run(both)) == (10, 120)
    with pytest.raises(TypeError, match="The element types for the new state must match"):
        tf.data.Dataset.range(3).reduce(np.int64(0), lambda s, x: tf.cast(s, tf.int32))
