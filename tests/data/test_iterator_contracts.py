"""TF1 iterators' contracts with the programs that use them, as TF 2.21 keeps them: what
a one-shot iterator may capture, what a reinitializable iterator accepts, and what a
feedable iterator checks of the iterator a handle names (the expected messages are
TF's)."""

import pytest

import tensorweave as tf


def test_one_shot_iterator_cannot_capture_a_variable_or_a_random_draw():
    v = tf.Variable(3, dtype=tf.int64)
    with pytest.raises(ValueError, match="Cannot capture a stateful node"):
        tf.data.Dataset.range(v).make_one_shot_iterator()
    draw = tf.random_uniform([])
    mapped = tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32) + draw)
    with pytest.raises(ValueError, match="type:RandomUniform"):
        mapped.make_one_shot_iterator()


def test_one_shot_iterator_cannot_capture_state_its_functions_read():
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), -1)
    looked_up = tf.data.Dataset.from_tensor_slices(["a", "c"]).map(table.lookup)
    with pytest.raises(ValueError, match="Cannot capture a stateful node"):
        looked_up.make_one_shot_iterator()
    v = tf.Variable(1.0)
    inner = tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.range(x).map(lambda y: tf.cast(y, tf.float32) + v))
    with pytest.raises(ValueError, match="Cannot capture a stateful node"):
        inner.make_one_shot_iterator()


def test_one_shot_iterator_may_draw_inside_its_functions(sess, drain):
    # a draw inside the map function is the function's own, not a captured value
    mapped = tf.data.Dataset.range(3).map(
        lambda x: x + tf.cast(tf.random_uniform([], 0, 1), tf.int64))
    assert drain(mapped) == [0, 1, 2]
    # and a variable is fine for an initializable iterator, read at initialization
    v = tf.Variable(2, dtype=tf.int64)
    it = tf.data.Dataset.range(v).make_initializable_iterator()
    sess.run(v.initializer)
    sess.run(it.initializer)
    assert [sess.run(it.get_next()) for _ in range(2)] == [0, 1]


def test_make_initializer_checks_structure_before_types():
    it = tf.data.Iterator.from_structure(tf.int32, tf.TensorShape([]))
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        it.make_initializer(tf.data.Dataset.from_tensors((1, 2)))
    with pytest.raises(TypeError, match="Expected output types"):
        it.make_initializer(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match="Expected output shapes compatible"):
        it.make_initializer(tf.data.Dataset.from_tensors([1, 2]))


def test_from_structure_shapes_must_nest_like_types():
    with pytest.raises(TypeError, match="input must also be a sequence"):
        tf.data.Iterator.from_structure((tf.int64, tf.int64), tf.TensorShape([]))
    it = tf.data.Iterator.from_structure((tf.int64, tf.string),
                                         (tf.TensorShape([None]), tf.TensorShape([])))
    assert [s.as_list() for s in it.output_shapes] == [[None], []]


def _feed_handle(sess, dataset, types, shapes):
    handle = tf.placeholder(tf.string, [])
    nxt = tf.data.Iterator.from_string_handle(handle, types, shapes).get_next()
    source = dataset.make_one_shot_iterator()
    return nxt, {handle: sess.run(source.string_handle())}


def test_feedable_iterator_checks_the_fed_iterators_shapes(sess):
    nxt, feed = _feed_handle(sess, tf.data.Dataset.from_tensors([1, 2, 3]), tf.int32,
                             tf.TensorShape([2]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Incompatible shapes at component 0: expected \[2\] but got "
                             r"\[3\]"):
        sess.run(nxt, feed)
    # a partly known shape that fits reads on
    nxt, feed = _feed_handle(sess, tf.data.Dataset.from_tensors([[1, 2, 3]]), tf.int32,
                             tf.TensorShape([None, 3]))
    assert sess.run(nxt, feed).tolist() == [[1, 2, 3]]
    assert nxt.shape.as_list() == [None, 3]


def test_feedable_iterator_checks_the_fed_iterators_types(sess):
    nxt, feed = _feed_handle(sess, tf.data.Dataset.range(3), tf.int32, tf.TensorShape([]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Data type mismatch at component 0: expected int32 but got "
                             "int64"):
        sess.run(nxt, feed)


def test_feedable_iterator_reads_a_reinitializable_iterator(sess):
    first, second = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)
    it = tf.data.Iterator.from_structure(first.output_types, first.output_shapes)
    handle = tf.placeholder(tf.string, [])
    nxt = tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([])).get_next()
    feed = {handle: sess.run(it.string_handle())}
    sess.run(it.make_initializer(first))
    assert sess.run(nxt, feed) == 0
    sess.run(it.make_initializer(second))
    assert [sess.run(nxt, feed) for _ in range(2)] == [10, 11]
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(nxt, feed)


def test_initializable_iterator_refed_restarts_with_new_values(sess):
    n = tf.placeholder(tf.int64, [])
    it = tf.data.Dataset.range(n).map(lambda x: x * 2).make_initializable_iterator()
    nxt = it.get_next()
    sess.run(it.initializer, {n: 4})
    assert sess.run(nxt) == 0
    sess.run(it.initializer, {n: 2})  # mid-pass: starts over on the new feed
    assert [sess.run(nxt) for _ in range(2)] == [0, 2]
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(nxt)
    with pytest.raises(tf.errors.OutOfRangeError):  # and stays at its end
        sess.run(nxt)
    assert isinstance(sess.run(it.string_handle()), bytes)


def test_every_iterator_is_in_the_iterators_collection():
    # as TF1's Iterator does (the names are TF 2.21's)
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(5)
        tf.data.make_one_shot_iterator(ds)
        initializable = tf.data.make_initializable_iterator(ds)
        tf.data.Iterator.from_structure(tf.int64, [])
        tf.data.Iterator.from_string_handle(tf.placeholder(tf.string, []), tf.int64, [])
        initializable.make_initializer(ds)  # (the same iterator: not added again)
        assert [t.name for t in tf.get_collection("iterators")] == [
            "OneShotIterator:0", "IteratorV2:0", "IteratorV2_1:0",
            "IteratorFromStringHandleV2:0"]
