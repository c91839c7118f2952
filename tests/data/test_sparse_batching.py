"""tf.data.experimental.dense_to_sparse_batch (data/sparse_batching.py): scalar
elements, unknown row dimensions, the per-element checks and how the pass goes on after
them. The values, error classes and messages are TensorFlow 2.21's (compat.v1, graph
mode) for the same programs."""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset
E = tf.data.experimental.dense_to_sparse_batch


def _triple(v):
    """(indices, values, dense_shape) lists of a batch."""
    return v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()


def _ramps(lengths):
    return D.from_tensor_slices(np.array(lengths, np.int64)).map(lambda x: tf.fill([x], x))


def _maybe_scalar(lengths):
    """x = 0: a scalar, else a vector of x ones (of unknown rank statically)."""
    return D.from_tensor_slices(lengths).map(
        lambda x: tf.placeholder_with_default(tf.fill(tf.fill([x], 1), x), None))


def test_scalar_elements(outcomes):
    ds = D.range(5).apply(E(2, []))
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([None]), tf.int64)"
    assert outcomes(_triple, ds) == [([[0], [1]], [0, 1], [2]), ([[0], [1]], [2, 3], [2]),
                               ([[0]], [4], [1])]
    strings = D.from_tensor_slices(["a", "b", "c"]).apply(E(2, []))
    assert outcomes(_triple, strings) == [([[0], [1]], [b"a", b"b"], [2]), ([[0]], [b"c"], [1])]
    unknown = D.range(3).map(lambda x: tf.placeholder_with_default(
        tf.cast(x, tf.float32), None)).apply(E(2, []))
    assert outcomes(_triple, unknown) == [([[0], [1]], [0., 1.], [2]), ([[0]], [2.], [1])]


def test_unknown_row_dimensions_take_the_batch_largest(outcomes):
    ds = _ramps([0, 1, 2, 3]).apply(E(2, [None]))
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([None, None]), tf.int64)"
    assert outcomes(_triple, ds) == [([[1, 0]], [1], [2, 1]),
                               ([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]], [2, 2, 3, 3, 3],
                                [2, 3])]
    matrices = D.range(3).map(lambda x: tf.fill([2, x], x)).apply(E(2, (2, None)))
    assert outcomes(_triple, matrices) == [
        ([[1, 0, 0], [1, 1, 0]], [1, 1], [2, 2, 1]),
        ([[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]], [2, 2, 2, 2], [1, 2, 2])]
    empty = _ramps([0, 0, 0]).apply(E(2, [None]))
    assert outcomes(_triple, empty) == [([], [], [2, 0]), ([], [], [1, 0])]
    assert outcomes(_triple, _ramps([0, 1, 2, 3]).apply(E(3, tf.TensorShape([3])))) == [
        ([[1, 0], [2, 0], [2, 1]], [1, 2, 2], [3, 3]), ([[0, 0], [0, 1], [0, 2]], [3, 3, 3],
                                                        [1, 3])]


@pytest.mark.parametrize("make,values", [
    (lambda: _ramps([0, 3, 1, 1, 2]).apply(E(2, [2])), [
        (tf.errors.DataLossError,
         "Input element had shape ([3]) that is larger than the row shape ([2])."),
        ([[0, 0], [1, 0]], [1, 1], [2, 2]), ([[0, 0], [0, 1]], [2, 2], [1, 2])]),
    (lambda: _maybe_scalar([0, 1, 1, 1]).apply(E(2, [1])), [
        (tf.errors.InvalidArgumentError,
         "Input element had shape ([]) that is incompatible with the row shape ([1])."),
        ([[0, 0], [1, 0]], [1, 1], [2, 1]), ([[0, 0]], [1], [1, 1])]),
    (lambda: _maybe_scalar([1, 0, 1, 1]).apply(E(2, [1])), [
        (tf.errors.InvalidArgumentError,
         "Input element had shape ([]) that is incompatible with the row shape ([1])."),
        ([[0, 0], [1, 0]], [1, 1], [2, 1])]),
    (lambda: D.range(3).apply(E(2, [None])), [
        (tf.errors.InvalidArgumentError,
         "Input element had shape ([]) that is incompatible with the row shape ([?])."),
        (tf.errors.InvalidArgumentError,
         "Input element had shape ([]) that is incompatible with the row shape ([?])."),
        (tf.errors.InvalidArgumentError,
         "Input element had shape ([]) that is incompatible with the row shape ([?]).")]),
    (lambda: D.range(3).map(lambda x: tf.fill([2, x], x)).apply(E(2, [1, None])), [
        (tf.errors.DataLossError,
         "Input element had shape ([2,0]) that is larger than the row shape ([1,?])."),
        (tf.errors.DataLossError,
         "Input element had shape ([2,1]) that is larger than the row shape ([1,?])."),
        (tf.errors.DataLossError,
         "Input element had shape ([2,2]) that is larger than the row shape ([1,?]).")]),
])
def test_an_element_that_does_not_fit_fails_alone(outcomes, make, values):
    # the elements read for its batch are dropped; the next batch starts after it
    assert outcomes(_triple, make()) == values


def test_an_input_error_fails_one_get_next(outcomes):
    ds = D.range(6).map(lambda x: tf.debugging.check_numerics(
        1.0 / tf.cast(x - 2, tf.float32), "boom")).apply(E(2, []))
    values = outcomes(_triple, ds)
    assert values[0] == ([[0], [1]], [-0.5, -1.0], [2])
    assert values[1][0] is tf.errors.InvalidArgumentError and "boom" in values[1][1]
    assert values[2][:2] == ([[0], [1]], [1.0, 0.5])
    np.testing.assert_allclose(values[3][1], [1 / 3])
    assert len(values) == 4


@pytest.mark.parametrize("row_shape,error,message", [
    (None, ValueError, "Cannot convert a partially known TensorShape <unknown> to a Tensor."),
    (tf.TensorShape(None), ValueError,
     "Cannot convert a partially known TensorShape <unknown> to a Tensor."),
    ([-1], ValueError, "Dimension -1 must be >= 0"),
    ([1.5], TypeError, "Dimension value must be integer or None or have an __index__ "
                       "method, got value '1.5' with type '<class 'float'>'"),
])
def test_row_shape_errors(graph, row_shape, error, message):
    with pytest.raises(error) as info:
        D.range(3).apply(E(2, row_shape))
    assert str(info.value) == message


def test_sparse_batch_method_takes_the_same_row_shapes(outcomes):
    ds = _ramps([1, 2]).sparse_batch(2, [None])
    assert outcomes(_triple, ds) == [([[0, 0], [1, 0], [1, 1]], [1, 2, 2], [2, 2])]
