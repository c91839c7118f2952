"""tf.raw_ops: registered ops called with keyword arguments, as TF's wrappers take them."""
import numpy as np
import pytest

import tensorweave as tf

r = tf.raw_ops


@pytest.fixture
def sess():
    with tf.Graph().as_default() as g, tf.Session(graph=g) as s:
        yield s


def test_inputs_and_attrs_by_keyword(sess):
    x = np.array([[1., 2.], [3., 4.]], np.float32)
    mm = r.MatMul(a=x, b=x, transpose_b=True)
    assert mm.op.type == "MatMul" and mm.name == "MatMul:0"
    np.testing.assert_allclose(sess.run(mm), x @ x.T)
    cast = r.Cast(x=x, DstT=tf.int32, name="to_int")
    assert cast.name == "to_int:0" and cast.dtype == tf.int32
    concat = r.ConcatV2(values=[x, 2 * x], axis=1)  # N and T inferred from the list
    np.testing.assert_array_equal(sess.run(concat), np.concatenate([x, 2 * x], 1))


def test_python_names_of_renamed_arguments(sess):
    # TF's Python API calls these inputs differently from their OpDef names
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(r.Sum(input=x, axis=[1], keep_dims=True)),
                                  x.sum(1, keepdims=True))
    np.testing.assert_array_equal(sess.run(r.Select(condition=[True, False], x=x, y=-x)),
                                  [x[0], -x[1]])
    assert r.ExpandDims(input=x, axis=0).shape.as_list() == [1, 2, 3]


def test_output_structures(sess):
    x = np.array([[3., 1.], [2., 5.]], np.float32)
    parts = r.Split(axis=0, value=x, num_split=2)  # a list output is a list
    assert isinstance(parts, list) and len(parts) == 2
    top = r.TopKV2(input=x, k=1)  # several outputs are a namedtuple of their names
    assert type(top).__name__ == "TopKV2"
    values, indices = sess.run([top.values, top.indices])
    np.testing.assert_array_equal(values, [[3.], [5.]])
    np.testing.assert_array_equal(indices, [[0], [1]])
    op = r.NoOp()  # no outputs: the Operation
    assert isinstance(op, tf.Operation) and op.type == "NoOp"


def test_argument_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="only takes keyword args"):
            r.Add(1.0, 2.0)
        with pytest.raises(TypeError, match="missing required arguments: y"):
            r.Add(x=1.0)
        with pytest.raises(TypeError, match="unexpected keyword arguments: z"):
            r.Add(x=1.0, y=2.0, z=3)
        with pytest.raises(TypeError, match="DstT"):
            r.Cast(x=1.0)
        with pytest.raises(ValueError, match="bad_indices_policy"):
            r.GatherNd(params=[1, 2], indices=[[0]], bad_indices_policy="IGNORE")
    with pytest.raises(AttributeError):
        r.NoSuchOp
    assert "MatMul" in dir(r) and not any(n.startswith("_") for n in dir(r))


def test_disable_copy_on_read_leaves_the_variable_as_it_is(sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    sess.run(tf.raw_ops.DisableCopyOnRead(resource=v.handle))
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
