"""Dataset.element_spec, Iterator.element_spec, tf.data.experimental.get_structure and
from_generator's output_signature: tf.TensorSpec / tf.SparseTensorSpec leaves whose reprs
below are TensorFlow 2.21's (compat.v1, graph mode) for the same programs."""
import collections

import numpy as np
import pytest

import tensorweave as tf

X = tf.data.experimental


def _slices():
    return tf.data.Dataset.from_tensor_slices(
        ({"a": np.zeros((4, 3), np.float32), "b": np.arange(4)}, np.zeros(4, np.int32)))


SLICES_SPEC = ("({'a': TensorSpec(shape=(3,), dtype=tf.float32, name=None), "
               "'b': TensorSpec(shape=(), dtype=tf.int64, name=None)}, "
               "TensorSpec(shape=(), dtype=tf.int32, name=None))")


def test_dense_components_are_tensor_specs(graph):
    ds = _slices()
    assert repr(ds.element_spec) == SLICES_SPEC
    assert repr(X.get_structure(ds)) == SLICES_SPEC
    assert ds.element_spec[1] == tf.TensorSpec([], tf.int32)
    shapes = tf.nest.map_structure(lambda s: s.shape, ds.element_spec)
    assert shapes[0]["a"].as_list() == [3] and shapes[1].as_list() == []
    assert repr(ds.batch(2).element_spec) == (
        "({'a': TensorSpec(shape=(None, 3), dtype=tf.float32, name=None), "
        "'b': TensorSpec(shape=(None,), dtype=tf.int64, name=None)}, "
        "TensorSpec(shape=(None,), dtype=tf.int32, name=None))")
    assert repr(ds.batch(2, drop_remainder=True).element_spec[1]) == \
        "TensorSpec(shape=(2,), dtype=tf.int32, name=None)"
    # the TF1 properties keep their forms
    assert ds.output_types[1] == tf.int32 and ds.output_shapes[0]["a"].as_list() == [3]
    assert tf.data.get_output_classes(ds)[1] is tf.Tensor


def test_sources_and_structures(graph):
    assert repr(tf.data.Dataset.range(5).element_spec) == \
        "TensorSpec(shape=(), dtype=tf.int64, name=None)"
    assert repr(tf.data.Dataset.from_tensors("a").element_spec) == \
        "TensorSpec(shape=(), dtype=tf.string, name=None)"
    assert repr(tf.data.Dataset.from_tensors(tf.placeholder(tf.float32)).element_spec) == \
        "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)"
    assert repr(tf.data.Dataset.from_tensors([tf.constant(1), tf.constant(2)]).element_spec) \
        == "TensorSpec(shape=(2,), dtype=tf.int32, name=None)"
    Pt = collections.namedtuple("Pt", "x y")
    spec = tf.data.Dataset.from_tensors(Pt(tf.constant(1.0), tf.constant([1, 2]))).element_spec
    assert repr(spec) == ("Pt(x=TensorSpec(shape=(), dtype=tf.float32, name=None), "
                          "y=TensorSpec(shape=(2,), dtype=tf.int32, name=None))")


def test_sparse_components_are_sparse_tensor_specs(graph):
    sp = tf.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0], [2, 3])
    assert repr(tf.data.Dataset.from_tensors(sp).element_spec) == \
        "SparseTensorSpec(TensorShape([2, 3]), tf.float32)"
    rows = tf.data.Dataset.from_tensor_slices(sp)
    assert repr(rows.element_spec) == "SparseTensorSpec(TensorShape([3]), tf.float32)"
    assert repr(rows.batch(2).element_spec) == \
        "SparseTensorSpec(TensorShape([None, 3]), tf.float32)"
    assert rows.output_types == tf.float32 and rows.output_shapes.as_list() == [3]
    assert rows.output_classes is tf.SparseTensor
    mixed = X.Optional.from_value((tf.constant(1), sp)).element_spec
    assert repr(mixed) == ("(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                           "SparseTensorSpec(TensorShape([2, 3]), tf.float32))")


def test_window_components_are_dataset_specs(graph):
    windows = tf.data.Dataset.range(3).window(2)
    text = "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))"
    assert repr(windows.element_spec) == text and repr(X.get_structure(windows)) == text
    assert windows.element_spec == tf.data.Dataset.range(3).window(2).element_spec
    keyed = tf.data.Dataset.from_tensors({"a": tf.constant([1.0])}).window(2)
    assert repr(keyed.element_spec) == ("{'a': DatasetSpec(TensorSpec(shape=(1,), "
                                        "dtype=tf.float32, name=None), TensorShape([]))}")


def test_iterators_and_optionals(graph):
    ds = _slices()
    assert repr(tf.data.make_initializable_iterator(ds).element_spec) == SLICES_SPEC
    assert repr(X.get_structure(tf.data.make_initializable_iterator(ds))) == SLICES_SPEC
    built = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes)
    assert repr(built.element_spec) == SLICES_SPEC
    assert repr(tf.data.Iterator.from_structure((tf.int64, tf.float32)).element_spec) == (
        "(TensorSpec(shape=<unknown>, dtype=tf.int64, name=None), "
        "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None))")
    sparse = tf.data.Iterator.from_structure(tf.float32, tf.TensorShape([None, 3]),
                                             output_classes=tf.SparseTensor)
    assert repr(sparse.element_spec) == "SparseTensorSpec(TensorShape([None, 3]), tf.float32)"
    one_shot = tf.data.make_one_shot_iterator(tf.data.Dataset.range(5))
    optional = X.get_next_as_optional(one_shot)
    for x in (one_shot, optional):
        assert repr(X.get_structure(x)) == "TensorSpec(shape=(), dtype=tf.int64, name=None)"


def test_get_structure_refuses_others(graph):
    for bad, kind in [(3, "int"), (tf.constant(1), "Tensor")]:
        with pytest.raises(TypeError, match="Invalid `dataset_or_iterator`. "
                                            "`dataset_or_iterator` must be a `tf.data.Dataset` "
                                            "or tf.data.Iterator object, but got <class "
                                            "'.*%s'>." % kind):
            X.get_structure(bad)


def test_tf_1_structure_constructors():
    assert repr(X.TensorStructure(tf.float32, [2])) == \
        "TensorSpec(shape=(2,), dtype=tf.float32, name=None)"
    assert repr(X.SparseTensorStructure(tf.float32, [2])) == \
        "SparseTensorSpec(TensorShape([2]), tf.float32)"
    assert repr(X.RaggedTensorStructure(tf.float32, [2, None], 1)) == \
        "RaggedTensorSpec(TensorShape([2, None]), tf.float32, 1, tf.int64)"


def test_from_generator_output_signature(sess):
    ds = tf.data.Dataset.from_generator(
        lambda: iter([(1, [1.0, 2.0])]),
        output_signature=(tf.TensorSpec([], tf.int64), tf.TensorSpec([None], tf.float32)))
    assert repr(ds.element_spec) == ("(TensorSpec(shape=(), dtype=tf.int64, name=None), "
                                     "TensorSpec(shape=(None,), dtype=tf.float32, name=None))")
    assert ds.output_types == (tf.int64, tf.float32)
    assert [s.as_list() for s in ds.output_shapes] == [[], [None]]
    first, second = sess.run(tf.data.make_one_shot_iterator(ds).get_next())
    assert first == 1 and first.dtype == np.int64
    assert second.tolist() == [1.0, 2.0] and second.dtype == np.float32
    keyed = tf.data.Dataset.from_generator(
        lambda: iter([]), output_signature={"a": tf.TensorSpec([], tf.int32)})
    assert repr(keyed.element_spec) == "{'a': TensorSpec(shape=(), dtype=tf.int32, name=None)}"
    wrong = tf.data.Dataset.from_generator(lambda: iter([[1, 2]]),
                                           output_signature=tf.TensorSpec([3], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"yielded an element of shape \(2,\) where an element of shape "
                             r"\(3,\) was expected."):
        sess.run(tf.data.make_one_shot_iterator(wrong).get_next())


@pytest.mark.parametrize("kwargs,match", [
    ({}, "To specify the output signature you need to provide either the "
         "`output_signature` argument or the `output_types` argument."),
    ({"output_types": tf.int32, "output_signature": tf.TensorSpec([], tf.int32)},
     "The `output_types` argument can not be used together with the `output_signature` "
     "argument."),
    ({"output_shapes": [], "output_signature": tf.TensorSpec([], tf.int32)},
     "The `output_shapes` argument can not be used together"),
    ({"output_signature": (tf.TensorShape([]), tf.int32)},
     "`output_signature` must contain objects that are subclass of `tf.TypeSpec` but found "
     "<class '.*TensorShape'> which is not."),
    ({"output_signature": 3}, "but found <class 'int'> which is not."),
    ({"output_signature": [tf.TensorSpec([], tf.int32)]}, "but found <class 'list'>"),
])
def test_from_generator_signature_errors(graph, kwargs, match):
    with pytest.raises(TypeError, match=match):
        tf.data.Dataset.from_generator(lambda: iter([1]), **kwargs)
