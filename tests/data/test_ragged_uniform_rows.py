"""Uniform row lengths of RaggedTensor elements (data/ragged_elements.py): a ragged
dimension the element's static shape knows comes out of get_next and into functions as
a uniform one (its uniform_row_length that constant), as TensorFlow 2.21's compat.v1
graph mode gives it. Shapes, uniform row lengths, op names and values recorded from it."""
import tensorweave as tf

U1 = [[1, 2], [3, 4], [5, 6]]
NESTED = [[[1], [2, 3]], [[], [4, 5, 6, 7]]]
INNER = [[[1, 2]], [[3, 4], [5, 6], [7, 8]]]


def _uniform():
    """U1: shape [3, 2], ragged rank 1."""
    return tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4, 5, 6]), 2)


def _uniform_of_ragged():
    """NESTED: shape [2, 2, None], ragged rank 2."""
    inner = tf.RaggedTensor.from_row_splits(tf.constant([1, 2, 3, 4, 5, 6, 7]),
                                            [0, 1, 3, 3, 7])
    return tf.RaggedTensor.from_uniform_row_length(inner, 2)


def _ragged_of_uniform():
    """INNER: shape [2, None, 2], ragged rank 2."""
    inner = tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4, 5, 6, 7, 8]), 2)
    return tf.RaggedTensor.from_row_splits(inner, [0, 1, 4])


def _urls(rt):
    """(dtype name, constant value) of each ragged dimension's uniform_row_length,
    outermost first; None where the rows differ."""
    out = []
    while isinstance(rt, tf.RaggedTensor):
        length = rt.uniform_row_length
        out.append(None if length is None else
                   (length.dtype.name, int(tf.get_static_value(length))))
        rt = rt.values
    return out


def _next(ds):
    return tf.data.make_one_shot_iterator(ds).get_next()


def _spec(shape, ragged_rank, dtype=tf.int32, splits=tf.int64):
    return tf.RaggedTensorSpec(shape, dtype, ragged_rank, splits)


def _values(drain, ds):
    return [v.to_list() for v in drain(ds)]


def test_get_next_keeps_a_uniform_dimension(sess):
    ds = tf.data.Dataset.from_tensors(_uniform())
    assert ds.element_spec == _spec([3, 2], 1)
    got = _next(ds)
    assert got.shape.as_list() == [3, 2] and _urls(got) == [("int64", 2)]
    assert got.row_splits.shape.as_list() == [4] and got.values.shape.as_list() == [None]
    assert got.row_splits.op.name == "RaggedFromVariant/RaggedTensorFromVariant"
    assert sess.run(got).to_list() == U1
    assert sess.run(got.uniform_row_length) == 2
    # inner dense dimensions stay on the flat values
    cube = tf.RaggedTensor.from_uniform_row_length(tf.reshape(tf.range(12), [6, 2]), 2)
    got = _next(tf.data.Dataset.from_tensors(cube))
    assert got.shape.as_list() == [3, 2, 2] and _urls(got) == [("int64", 2)]
    assert got.values.shape.as_list() == [None, 2]
    assert sess.run(got).to_list() == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]]


def test_nested_uniform_dimensions_of_tensors_and_slices(sess, drain):
    whole = _next(tf.data.Dataset.from_tensors(_uniform_of_ragged()))
    assert whole.shape.as_list() == [2, 2, None] and _urls(whole) == [("int64", 2), None]
    assert whole.row_splits.shape.as_list() == [3]
    assert sess.run(whole).to_list() == NESTED
    rows = tf.data.Dataset.from_tensor_slices(_uniform_of_ragged())
    assert rows.element_spec == _spec([2, None], 1) and _urls(_next(rows)) == [None]
    assert _values(drain, rows) == NESTED
    inner = _next(tf.data.Dataset.from_tensors(_ragged_of_uniform()))
    assert inner.shape.as_list() == [2, None, 2] and _urls(inner) == [None, ("int64", 2)]
    assert sess.run(inner).to_list() == INNER
    inner_rows = tf.data.Dataset.from_tensor_slices(_ragged_of_uniform())
    got = _next(inner_rows)
    assert got.shape.as_list() == [None, 2] and _urls(got) == [("int64", 2)]
    assert _values(drain, inner_rows) == INNER


def test_batch_and_unbatch_keep_uniform_dimensions(drain):
    batches = tf.data.Dataset.from_tensors(_uniform()).repeat(3).batch(2)
    got = _next(batches)
    assert got.shape.as_list() == [None, 3, 2] and _urls(got) == [("int64", 3), ("int64", 2)]
    assert _values(drain, batches) == [[U1, U1], [U1]]
    again = batches.unbatch()
    assert again.element_spec == _spec([3, 2], 1) and _urls(_next(again)) == [("int64", 2)]
    assert _values(drain, again) == [U1] * 3
    exact = tf.data.Dataset.from_tensors(_uniform_of_ragged()).repeat(3).batch(2, True)
    got = _next(exact)
    assert got.shape.as_list() == [2, 2, 2, None]
    assert _urls(got) == [("int64", 2), ("int64", 2), None]
    assert _values(drain, exact) == [[NESTED, NESTED]]
    inner = tf.data.Dataset.from_tensors(_ragged_of_uniform()).repeat(3).batch(2)
    got = _next(inner)
    assert got.shape.as_list() == [None, 2, None, 2]
    assert _urls(got) == [("int64", 2), None, ("int64", 2)]
    assert _values(drain, inner) == [[INNER, INNER], [INNER]]
    rows = tf.data.Dataset.from_tensors(_ragged_of_uniform()).unbatch()
    got = _next(rows)
    assert got.shape.as_list() == [None, 2] and _urls(got) == [("int64", 2)]
    windows = tf.data.Dataset.from_tensors(_uniform()).repeat(3).window(2).flat_map(
        lambda w: w.batch(2))
    assert _urls(_next(windows)) == [("int64", 3), ("int64", 2)]
    assert _values(drain, windows) == [[U1, U1], [U1]]


def test_map_functions_see_and_return_uniform_dimensions(drain):
    source = tf.data.Dataset.from_tensors(_uniform_of_ragged())
    same = source.map(lambda x: x)
    assert same.element_spec == _spec([2, 2, None], 2)
    assert _values(drain, same) == [NESTED]
    lengths = source.map(lambda x: x.uniform_row_length)
    assert lengths.output_types == tf.int64 and lengths.output_shapes.as_list() == []
    assert [v.tolist() for v in drain(lengths)] == [2]
    shifted = source.map(lambda x: x + tf.constant([[[100]], [[200]]]))
    assert _values(drain, shifted) == [[[[101], [102, 103]], [[], [204, 205, 206, 207]]]]
    dense = tf.data.Dataset.from_tensors(_uniform()).map(lambda x: x.to_tensor())
    assert dense.output_shapes.as_list() == [3, 2]
    assert [v.tolist() for v in drain(dense)] == [U1]
    made = tf.data.Dataset.range(2).map(
        lambda i: tf.RaggedTensor.from_uniform_row_length(tf.range(4 + i * 0), 2))
    assert made.element_spec == _spec([None, 2], 1, tf.int64)
    assert _urls(_next(made)) == [("int64", 2)]
    assert _values(drain, made.batch(2)) == [[[[0, 1], [2, 3]], [[0, 1], [2, 3]]]]
    # a length known only at run time leaves the dimension ragged
    varying = tf.data.Dataset.range(1, 3).map(
        lambda i: tf.RaggedTensor.from_uniform_row_length(tf.range(4 * i), i))
    assert varying.element_spec == _spec([None, None], 1, tf.int64)
    assert _urls(_next(varying)) == [None]
    assert _values(drain, varying) == [[[0], [1], [2], [3]], [[0, 1], [2, 3], [4, 5], [6, 7]]]


def test_int32_row_splits_give_int32_uniform_row_lengths(drain):
    inner = tf.RaggedTensor.from_row_splits(tf.constant([1., 2., 3., 4., 5.]),
                                            tf.constant([0, 2, 2, 3, 5], tf.int32))
    ds = tf.data.Dataset.from_tensors(tf.RaggedTensor.from_uniform_row_length(inner, 2))
    assert ds.element_spec == _spec([2, 2, None], 2, tf.float32, tf.int32)
    assert _urls(_next(ds)) == [("int32", 2), None]
    batches = ds.repeat(2).batch(2)
    assert _urls(_next(batches)) == [("int32", 2), ("int32", 2), None]
    assert _values(drain, batches) == [[[[[1.0, 2.0], []], [[3.0], [4.0, 5.0]]]] * 2]


def test_iterator_from_structure_and_get_single_element(sess):
    ds = tf.data.Dataset.from_tensors(_uniform())
    it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes,
                                         output_classes=ds.output_classes)
    got = it.get_next()
    assert got.shape.as_list() == [3, 2] and _urls(got) == [("int64", 2)]
    sess.run(it.make_initializer(ds))
    assert sess.run(got).to_list() == U1
    single = tf.data.experimental.get_single_element(ds)
    assert _urls(single) == [("int64", 2)] and sess.run(single).to_list() == U1


def test_dense_to_ragged_batch_of_a_known_leading_dimension(drain):
    two = tf.constant(2, tf.int64)
    rows = tf.data.Dataset.range(1, 3).map(lambda i: tf.reshape(tf.range(two * i), [2, -1]))
    batches = rows.apply(tf.data.experimental.dense_to_ragged_batch(2))
    assert batches.element_spec == _spec([None, 2, None], 2, tf.int64)
    assert _urls(_next(batches)) == [("int64", 2), None]
    assert _values(drain, batches) == [[[[0], [1]], [[0, 1], [2, 3]]]]

