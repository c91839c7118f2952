"""What a dataset function uses from outside (its captures) is evaluated once, when the
iterator is initialized, with that run's feeds (TF's captured inputs): a placeholder fed
only to the initializer, a random draw fixed for the pass. A variable read inside the
function reads the variable as each element is made. Nested lists in a function's
result are one tensor, as TF's."""
import numpy as np
import pytest

import tensorweave as tf


def _drain(sess, nxt, limit=100):
    out = []
    with pytest.raises(tf.errors.OutOfRangeError):
        for _ in range(limit):
            out.append(sess.run(nxt))
    return out


def test_placeholder_fed_to_the_initializer_reaches_every_function(sess):
    p = tf.placeholder(tf.int64, [])
    ds = (tf.data.Dataset.range(6).map(lambda x: x * p)
          .filter(lambda x: x < 4 * p)
          .flat_map(lambda x: tf.data.Dataset.range(p).map(lambda y: x + y)))
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    for scale in (2, 3):
        sess.run(it.initializer, {p: scale})
        want = [x * scale + y for x in range(6) if x * scale < 4 * scale
                for y in range(scale)]
        assert _drain(sess, nxt) == want


def test_placeholder_in_scan_reduce_and_group_by_window(sess):
    p = tf.placeholder(tf.int64, [])
    scanned = tf.data.Dataset.range(4).apply(tf.data.experimental.scan(
        np.int64(0), lambda s, x: (s + x * p, s + x * p)))
    it = scanned.make_initializable_iterator()
    sess.run(it.initializer, {p: 10})
    assert _drain(sess, it.get_next()) == [0, 10, 30, 60]
    total = tf.data.Dataset.range(4).reduce(np.int64(0), lambda s, x: s + x * p)
    assert sess.run(total, {p: 3}) == 18
    grouped = tf.data.Dataset.range(6).apply(tf.data.experimental.group_by_window(
        lambda x: x % p, lambda k, w: w.batch(10), window_size=10))
    it = grouped.make_initializable_iterator()
    sess.run(it.initializer, {p: 2})
    assert sorted(a.tolist() for a in _drain(sess, it.get_next())) == [[0, 2, 4], [1, 3, 5]]


def test_a_captured_random_draw_is_fixed_for_the_pass(sess):
    r = tf.random_uniform([], maxval=1000, dtype=tf.int64)
    it = tf.data.Dataset.range(5).map(lambda x: x * 0 + r).make_initializable_iterator()
    nxt = it.get_next()
    passes = []
    for _ in range(3):
        sess.run(it.initializer)
        passes.append(_drain(sess, nxt))
    assert all(len(set(values)) == 1 for values in passes)  # one draw per pass
    assert len({values[0] for values in passes}) > 1  # drawn again each initialization


def test_a_variable_is_read_as_each_element_is_made(sess):
    v = tf.Variable(10, dtype=tf.int64)
    it = tf.data.Dataset.range(3).map(lambda x: x + v).make_initializable_iterator()
    nxt = it.get_next()
    sess.run(tf.global_variables_initializer())
    sess.run(it.initializer)
    first = sess.run(nxt)
    sess.run(tf.assign(v, 100))
    assert (first, sess.run(nxt)) == (10, 101)


def test_nested_lists_in_a_result_are_one_tensor(sess):
    def parse(line):
        cols = tf.decode_csv(line, record_defaults=[[0.0]] * 3 + [[0]])
        return cols[:-1], cols[-1]  # a list of three columns, the label
    ds = tf.data.Dataset.from_tensor_slices(["1,2,3,0", "4,5,6,1"]).map(parse).batch(2)
    assert [s.as_list() for s in ds.output_shapes] == [[None, 3], [None]]
    features, labels = sess.run(ds.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(features, [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(labels, [0, 1])
    assert tf.data.Dataset.range(2).map(lambda x: {"p": [x, x]}).output_shapes[
        "p"].as_list() == [2]
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor"):
        tf.data.Dataset.range(2).map(lambda x: ([x, tf.cast(x, tf.float32)],))


def test_mixed_dtype_lists_of_tensors_do_not_convert(graph):
    # TF's autopacking: the first tensor's dtype, no implicit cast
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor"):
        tf.convert_to_tensor([tf.constant(1, tf.int64), tf.constant(1.0)])
    with pytest.raises(TypeError, match="Expected int64"):
        tf.convert_to_tensor([tf.constant(1, tf.int64), 2.5])
    assert tf.convert_to_tensor([tf.constant(1.0), 2]).dtype == tf.float32


def test_summaries_in_a_function_stay_out_of_the_graphs_collection(sess):
    def f(x):
        y = tf.cast(x, tf.float32)
        tf.summary.scalar("in_map", y)
        return y * 2
    nxt = tf.data.Dataset.range(3).map(f).make_one_shot_iterator().get_next()
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == []
    tf.summary.scalar("loss", nxt)
    merged = tf.summary.merge_all()
    assert isinstance(sess.run(merged), bytes)


def test_sparse_tensor_values_are_sparse_components(sess):
    value = tf.SparseTensorValue([[0, 0], [1, 1]], [7, 8], [2, 3])
    ds = tf.data.Dataset.from_tensor_slices(value)
    assert ds.output_classes is tf.SparseTensor and ds.output_shapes.as_list() == [3]
    nxt = ds.make_one_shot_iterator().get_next()
    rows = [sess.run(nxt), sess.run(nxt)]
    assert [(r.indices.tolist(), r.values.tolist(), r.dense_shape.tolist()) for r in rows] \
        == [([[0]], [7], [3]), ([[1]], [8], [3])]
