"""tf.py_func / tf.numpy_function (ops/control_flow/script_ops.py): calls with NumPy
arrays, output conversion and TF's errors, unknown static shapes, statefulness, no
gradient, the per-graph registry."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework import registry


def test_single_and_list_outputs(sess):
    x = tf.placeholder(tf.float32, [2])
    seen = []

    def double(a):
        seen.append((type(a), a.dtype))
        return a * 2
    y = tf.py_func(double, [x], tf.float32)
    assert isinstance(y, tf.Tensor) and y.dtype == tf.float32
    assert y.shape.ndims is None  # static shape unknown, as TF
    assert y.op.type == "PyFunc" and y.op.get_attr("token").startswith(b"pyfunc_")
    z = tf.py_func(lambda a: (a + 1, np.int64(len(a))), [x], [tf.float32, tf.int64],
                   stateful=False)
    assert isinstance(z, list) and len(z) == 2 and z[0].op.type == "PyFuncStateless"
    out = sess.run([y, z], {x: [1.0, 2.0]})
    np.testing.assert_array_equal(out[0], [2.0, 4.0])
    assert out[0].dtype == np.float32
    np.testing.assert_array_equal(out[1][0], [2.0, 3.0])
    assert out[1][1] == 2 and out[1][1].dtype == np.int64
    assert seen == [(np.ndarray, np.float32)]


def test_numpy_function_and_no_outputs(sess):
    x = tf.constant([1, 2, 3])
    calls = []
    y = tf.numpy_function(lambda a: a.sum(), [x], tf.int64)
    op = tf.py_func(lambda a: calls.append(a.tolist()), [x], [])
    assert isinstance(op, tf.Operation)
    assert sess.run(y) == 6
    assert sess.run(op) is None
    assert calls == [[1, 2, 3]]


def test_strings_in_and_out(sess):
    s = tf.constant([b"ab", b"c"])
    y = tf.py_func(lambda a: np.array([v.upper() for v in a]), [s], tf.string)
    u = tf.py_func(lambda a: "text", [s], tf.string)
    np.testing.assert_array_equal(sess.run(y), [b"AB", b"C"])
    assert sess.run(u) == b"text"


def test_string_returns_convert_as_tf(sess):
    """As TF's py_func: returned bytes keep their trailing NULs (not through an |S array),
    str elements of an object array are encoded, other elements an InternalError."""
    def run(value):
        return sess.run(tf.py_func(lambda: value, [], tf.string))
    assert run(b"a\x00") == b"a\x00"
    got = run(np.array(["\u00e9", "b"], dtype=object))
    assert got.dtype == object and got.tolist() == [b"\xc3\xa9", b"b"]
    with pytest.raises(tf.errors.InternalError, match="Unsupported object type int"):
        run(np.array([1, b"b"], dtype=object))
    nested = np.empty(2, dtype=object)
    nested[0], nested[1] = np.array(b"x", dtype=object), b"y"
    with pytest.raises(tf.errors.InternalError, match="Unsupported object type numpy.ndarray"):
        run(nested)


def test_stateful_runs_every_time_and_is_not_merged(sess):
    counter = []

    def tick():
        counter.append(1)
        return np.int64(len(counter))
    a = tf.py_func(tick, [], tf.int64)
    b = tf.py_func(tick, [], tf.int64)
    r1 = sess.run([a, b])
    r2 = sess.run(a)
    assert sorted(r1) == [1, 2] and r2 == 3


def test_input_arrays_are_copies(sess):
    x = tf.constant([1.0, 2.0])

    def clobber(a):
        a[:] = 0
        return a
    y = tf.py_func(clobber, [x], tf.float32)
    z = x + 1
    out_y, out_z = sess.run([y, z])
    np.testing.assert_array_equal(out_y, [0.0, 0.0])
    np.testing.assert_array_equal(out_z, [2.0, 3.0])


@pytest.mark.parametrize("exc, cls", [
    (ValueError("bad value"), tf.errors.InvalidArgumentError),
    (TypeError("bad type"), tf.errors.InvalidArgumentError),
    (StopIteration(), tf.errors.OutOfRangeError),
    (NotImplementedError("nope"), tf.errors.UnimplementedError),
    (KeyError("k"), tf.errors.UnknownError),
    (ZeroDivisionError("zero"), tf.errors.UnknownError),
    (tf.errors.NotFoundError(None, None, "missing"), tf.errors.NotFoundError),
])
def test_exceptions_become_tf_errors(sess, exc, cls):
    def boom(a):
        raise exc
    y = tf.py_func(boom, [tf.constant(1.0)], tf.float32)
    with pytest.raises(cls) as info:
        sess.run(y)
    assert type(exc).__name__ in info.value.message
    assert "Traceback (most recent call last)" in info.value.message
    assert "in boom" in info.value.message


def test_wrong_result_type_and_count(sess):
    x = tf.constant([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="0-th value returned by pyfunc_[0-9]+ is double, but expects "
                             "float"):
        sess.run(tf.py_func(lambda a: a.astype(np.float64), [x], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="is int64, but expects float"):
        sess.run(tf.py_func(lambda a: 3, [x], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="returns 2 values, but expects to see 1 values"):
        sess.run(tf.py_func(lambda a: (a, a), [x], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="returns 1 values, but expects to see 2 values"):
        sess.run(tf.py_func(lambda a: a, [x], [tf.float32, tf.float32]))


def test_not_differentiable_unless_overridden(graph, sess):
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(lambda a: a * 3, [x], tf.float32)
    assert tf.gradients(y, x) == [None]
    assert registry.get_gradient("PyFunc") == (True, None)

    @tf.RegisterGradient("ScriptOpsTestTimesThree")
    def _grad(op, g):
        return [g * 3.0]
    with graph.gradient_override_map({"PyFunc": "ScriptOpsTestTimesThree"}):
        y2 = tf.py_func(lambda a: a * 3, [x], tf.float32)
    (g,) = tf.gradients(y2, x)
    np.testing.assert_array_equal(sess.run(g), [3.0, 3.0])


def test_function_is_not_in_the_serialized_graph(graph):
    x = tf.constant([1.0])
    tf.py_func(lambda a: a, [x], tf.float32, name="f")
    gd = graph.as_graph_def()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        with tf.Session(graph=g2) as s2:
            with pytest.raises(tf.errors.NotFoundError, match="not registered"):
                s2.run(g2.get_tensor_by_name("f:0"))


def test_not_callable():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="callable"):
            tf.py_func(3, [], tf.float32)


def test_a_scalar_result_stays_a_scalar(sess):
    y = tf.py_func(lambda x: x * 2, [tf.constant(1.0)], tf.float32)
    got = sess.run(y)
    assert np.shape(got) == () and got == np.float32(2.0)  # TF: np.float32(2.0)


def test_scalar_arguments_arrive_as_numpy_scalars_and_bytes(sess):
    # as TF passes them: `path.decode()` inside a Dataset.map's py_func works
    seen = []

    def record(*args):
        seen.append([type(a) for a in args])
        return np.int32(0)
    sess.run(tf.py_func(record, [tf.constant(b"ab"), tf.constant(3), tf.constant(2.5),
                                 tf.constant([1, 2])], tf.int32))
    assert seen == [[bytes, np.int32, np.float32, np.ndarray]]
    ds = tf.data.Dataset.from_tensor_slices(["ab", "cd"]).map(
        lambda s: tf.py_func(lambda s: s.decode().upper().encode(), [s], tf.string))
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    assert [sess.run(nxt), sess.run(nxt)] == [b"AB", b"CD"]


def test_py_function_passes_values_that_answer_numpy(sess):
    def f(x, s):
        assert not isinstance(x.numpy(), type(x)) and s.numpy() == b"hi"
        return x.numpy() * 2 + 1, s.numpy() + b"!"

    x = tf.constant([1.0, 2.0])
    a, b = tf.py_function(f, [x, tf.constant("hi")], [tf.float32, tf.string])
    assert a.op.type == "EagerPyFunc" and a.shape.ndims is None
    c = tf.py_function(lambda v: v * 3, [x], tf.float32)  # arithmetic on the argument
    none = tf.py_function(lambda v: None, [x], [])
    assert isinstance(none, tf.Operation)
    got = sess.run([a, b, c, none])
    np.testing.assert_array_equal(got[0], [3.0, 5.0])
    assert got[1] == b"hi!"
    np.testing.assert_array_equal(got[2], [3.0, 6.0])
    assert got[2].dtype == np.float32 and type(got[2]) is np.ndarray


def test_py_function_in_a_dataset_map_and_its_gradient(sess):
    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3]).map(
        lambda v: tf.py_function(lambda t: t.numpy() ** 2, [v], tf.int32))
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    assert [sess.run(nxt) for _ in range(3)] == [1, 4, 9]
    x = tf.constant([1.0])
    y = tf.py_function(lambda v: v * 3, [x], tf.float32)
    with pytest.raises(LookupError, match="eager execution"):
        tf.gradients(y, x)
    # the way the error names: a gradient of the user's own, checked numerically
    @tf.RegisterGradient("TestPyFunctionTripleGrad")
    def _triple_grad(op, grad):
        return [grad * 3.0]

    x64 = tf.placeholder(tf.float64, [3])
    with tf.get_default_graph().gradient_override_map({"EagerPyFunc": "TestPyFunctionTripleGrad"}):
        y64 = tf.py_function(lambda v: v * 3, [x64], tf.float64)
    y64.set_shape([3])
    assert compute_gradient_error(x64, [3], y64, [3]) < 1e-6
