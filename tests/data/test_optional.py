"""tf.data.experimental.Optional and get_next_as_optional (data/optional_ops.py): the
runs and errors are TensorFlow 2.21's for the same programs."""
import numpy as np
import pytest

import tensorweave as tf

X = tf.data.experimental


def test_the_namespace_holds_tfs_optional_not_typing():
    # the module that is tf.data.experimental once imported typing.Optional under the name
    assert X.Optional.__module__ == "tensorweave.data.optional_ops"
    assert hasattr(X.Optional, "from_value") and hasattr(X.Optional, "empty")


def test_get_next_as_optional_has_no_value_at_the_end(sess):
    it = tf.data.make_initializable_iterator(tf.data.Dataset.range(2))
    opt = X.get_next_as_optional(it)
    has, value = opt.has_value(), opt.get_value()
    assert repr(opt.element_spec) == "TensorSpec(shape=(), dtype=tf.int64, name=None)"
    assert value.dtype == tf.int64 and has.dtype == tf.bool
    sess.run(it.initializer)
    # one run reads one element, shared by has_value and get_value
    assert sess.run([has, value]) == [True, 0]
    assert sess.run([has, value]) == [True, 1]
    assert not sess.run(has)
    assert not sess.run(has)  # and stays at the end
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="The given optional does not have a value."):
        sess.run(value)
    sess.run(it.initializer)  # a new pass
    assert sess.run([has, value]) == [True, 0]


def test_iterator_method_and_structures(sess):
    ds = tf.data.Dataset.from_tensor_slices({"a": [1.0, 2.0], "b": ([[1, 2], [3, 4]],)})
    it = tf.data.make_one_shot_iterator(ds)
    opt = it.get_next_as_optional()
    value = opt.get_value()
    assert sorted(value) == ["a", "b"] and value["b"][0].shape.as_list() == [2]
    got = sess.run(value)
    assert got["a"] == 1.0 and got["b"][0].tolist() == [1, 2]


def test_from_value_and_empty(sess):
    full = X.Optional.from_value({"a": tf.constant(1.0), "b": (tf.constant([1, 2]),)})
    empty = X.Optional.empty(full.element_spec)
    assert empty.element_spec == full.element_spec
    got = sess.run(full.get_value())
    assert got["a"] == 1.0 and got["b"][0].tolist() == [1, 2]
    assert sess.run([full.has_value(), empty.has_value()]) == [True, False]
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
        sess.run(empty.get_value())
    # TF 1.x's names
    assert X.Optional.none_from_structure is X.Optional.empty
    assert full.value_structure == full.element_spec


def test_empty_takes_tf_specs(sess):
    # TF 2.21: Optional.empty({...}).element_spec gives back these specs
    spec = {"x": tf.TensorSpec([3]), "y": tf.SparseTensorSpec([2, None], tf.int64),
            "z": tf.RaggedTensorSpec([2, None], tf.int32)}
    opt = X.Optional.empty(spec)
    assert opt.element_spec == spec
    value = opt.get_value()
    assert isinstance(value["y"], tf.SparseTensor) and value["y"].dtype == tf.int64
    assert isinstance(value["z"], tf.RaggedTensor) and value["x"].shape.as_list() == [3]
    assert not sess.run(opt.has_value())
    # tensorweave refuses what is not a spec when the optional is made (TF fails later)
    for not_specs in ([3], (tf.TensorShape([]), tf.int64)):
        with pytest.raises(TypeError, match="must nest tf.TensorSpec"):
            X.Optional.empty(not_specs)


def test_a_while_loop_reads_a_dataset_to_its_end(sess):
    # the use get_next_as_optional is for: the end of the data tested in the graph
    it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(1, 6))

    def body(total, _):
        opt = it.get_next_as_optional()
        more = opt.has_value()
        add = tf.cond(more, opt.get_value, lambda: tf.constant(0, tf.int64))
        return total + add, more

    total, _ = tf.while_loop(lambda t, more: more, body,
                             [tf.constant(0, tf.int64), tf.constant(True)])
    assert sess.run(total) == 15


def test_sparse_components(sess):
    ds = tf.data.Dataset.from_tensors(tf.SparseTensor([[0, 1]], [5.0], [2, 3]))
    opt = tf.data.make_one_shot_iterator(ds).get_next_as_optional()
    got = sess.run(opt.get_value())
    assert got.indices.tolist() == [[0, 1]] and got.values.tolist() == [5.0]
    assert np.asarray(got.dense_shape).tolist() == [2, 3]
