"""SparseTensor components of tf.data elements (data/dataset_ops.py): the same elements,
classes and static shapes as TensorFlow 2.21 for these pipelines."""
import numpy as np
import pytest

import tensorweave as tf


def _triple(v):
    return v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()


def test_a_map_giving_sparse_tensors_and_their_batches(drain):
    ds = tf.data.Dataset.range(3).map(
        lambda x: tf.SparseTensor([[0], [2]], tf.stack([x, x * 10]), [3]))
    assert tf.data.get_output_classes(ds) is tf.SparseTensor
    assert ds.output_shapes.as_list() == [3] and ds.output_types == tf.int64
    assert [_triple(v) for v in drain(ds)] == [
        ([[0], [2]], [0, 0], [3]), ([[0], [2]], [1, 10], [3]), ([[0], [2]], [2, 20], [3])]
    ragged = tf.data.Dataset.range(5).map(lambda x: tf.SparseTensor(
        tf.reshape(tf.range(x % 3), [-1, 1]), tf.range(x % 3) + x,
        tf.reshape(x % 3 + 1, [1]))).batch(2)
    assert ragged.output_shapes.as_list() == [None, None]
    # batching adds a first index; the dense shape is the largest of the batch's
    assert [_triple(v) for v in drain(ragged)] == [
        ([[1, 0]], [1], [2, 2]), ([[0, 0], [0, 1]], [2, 3], [2, 3]),
        ([[0, 0]], [4], [1, 2])]


def test_sparse_components_beside_dense_ones_and_as_function_arguments(drain):
    pair = tf.data.Dataset.from_tensors((tf.SparseTensor([[0, 1]], ["a"], [2, 2]),
                                         tf.constant(3)))
    assert pair.output_classes == (tf.SparseTensor, tf.Tensor)
    [(sp, n)] = drain(pair)
    assert _triple(sp) == ([[0, 1]], [b"a"], [2, 2]) and n == 3
    dense = tf.data.Dataset.from_tensors(tf.SparseTensor([[0, 1]], [5.0], [2, 2])).map(
        lambda sp: tf.sparse.to_dense(sp) * 2)
    assert dense.output_shapes.as_list() == [2, 2]  # the dense shape stays static
    np.testing.assert_array_equal(drain(dense)[0], [[0.0, 10.0], [0.0, 0.0]])


def test_parsed_var_len_features(drain):
    def example(values):
        return tf.train.Example(features=tf.train.Features(feature={"t": tf.train.Feature(
            int64_list=tf.train.Int64List(value=values))})).SerializeToString()
    ds = tf.data.Dataset.from_tensors(tf.constant([example([4, 5]), example([])])).map(
        lambda s: tf.io.parse_example(s, {"t": tf.io.VarLenFeature(tf.int64)}))
    assert ds.output_classes == {"t": tf.SparseTensor}
    [parsed] = drain(ds)
    assert _triple(parsed["t"]) == ([[0, 0], [0, 1]], [4, 5], [2, 2])


def test_initializable_iterators_over_sparse_elements(sess):
    n = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.range(n).map(lambda x: tf.SparseTensor([[0]], [x], [1]))
    it = tf.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    sess.run(it.initializer, {n: 2})
    assert [sess.run(nxt).values.tolist() for _ in range(2)] == [[0], [1]]


def test_rows_of_sparse_tensors(drain):
    slices = tf.data.Dataset.from_tensor_slices((
        tf.SparseTensor([[0, 0], [1, 1], [1, 2], [3, 0]], [1, 2, 3, 4], [4, 3]),
        tf.constant([10, 20, 30, 40])))
    assert slices.output_shapes[0].as_list() == [3]
    assert [(_triple(sp), int(n)) for sp, n in drain(slices)] == [
        (([[0]], [1], [3]), 10), (([[1], [2]], [2, 3], [3]), 20), (([], [], [3]), 30),
        (([[0]], [4], [3]), 40)]
    rows = tf.data.Dataset.range(2).map(lambda x: tf.SparseTensor(
        [[0, 0], [1, 1]], tf.stack([x, x + 5]), [2, 2])).unbatch()
    assert rows.output_shapes.as_list() == [2]
    assert [_triple(v) for v in drain(rows)] == [
        ([[0]], [0], [2]), ([[1]], [5], [2]), ([[0]], [1], [2]), ([[1]], [6], [2])]


def test_padded_batches_of_sparse_tensors_are_refused_as_in_tf(graph):
    sparse = tf.data.Dataset.range(2).map(lambda x: tf.SparseTensor([[0]], [x], [1]))
    with pytest.raises(TypeError, match="`padded_batch` is only supported for datasets "
                                        "that produce tensor elements"):
        sparse.padded_batch(2, padded_shapes=[None])
    with pytest.raises(ValueError, match=r"Dimensions \[2, 3\] in the components"):
        tf.data.Dataset.from_tensor_slices((tf.SparseTensor([[0, 0]], [1], [2, 3]),
                                            tf.constant([10, 20, 30])))


def test_dense_to_sparse_batch(sess, drain):
    X = tf.data.experimental
    ds = tf.data.Dataset.range(5).map(lambda x: tf.fill([x % 3], x))
    fixed = ds.apply(X.dense_to_sparse_batch(2, [4]))
    assert fixed.output_classes is tf.SparseTensor
    assert fixed.output_shapes.as_list() == [None, 4]
    assert [_triple(v) for v in drain(fixed)] == [  # TF 2.21's batches
        ([[1, 0]], [1], [2, 4]), ([[0, 0], [0, 1]], [2, 2], [2, 4]), ([[0, 0]], [4], [1, 4])]
    widest = ds.apply(X.dense_to_sparse_batch(2, [None]))
    assert [v.dense_shape.tolist() for v in drain(widest)] == [[2, 1], [2, 2], [1, 1]]
    over = tf.data.Dataset.range(5).map(lambda x: tf.fill([x], x)).apply(
        X.dense_to_sparse_batch(2, [2]))
    nxt = over.make_one_shot_iterator().get_next()
    sess.run(nxt)
    with pytest.raises(tf.errors.DataLossError, match=r"Input element had shape \(\[3\]\) "
                                                      r"that is larger than the row shape"):
        sess.run(nxt)


def test_windows_of_sparse_components(drain):
    # values recorded from TF 2.21
    ds = tf.data.Dataset.from_tensor_slices(
        tf.SparseTensor([[0, 0], [1, 1], [2, 0]], [1, 2, 3], [3, 2]))
    batches = ds.window(2).flat_map(lambda w: w.batch(2))
    assert tf.data.get_output_classes(batches) is tf.SparseTensor
    assert [_triple(v) for v in drain(batches)] == [
        ([[0, 0], [1, 1]], [1, 2], [2, 2]), ([[0, 0]], [3], [1, 2])]
