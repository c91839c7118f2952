"""TensorArray ops and tf.TensorArray (outside loops), against NumPy."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework import errors
from tensorweave.ops.data_flow.tensor_array_ops import TensorArrayResource


def _run_error(sess, fetch, cls, fragment):
    with pytest.raises(cls) as e:
        sess.run(fetch)
    assert fragment in str(e.value)


# --- construction and static shapes -------------------------------------------------------
def test_creation_op_and_static_shapes(graph):
    ta = tf.TensorArray(tf.float32, size=3)
    assert ta.handle.op.type == "TensorArrayV3"
    assert ta.handle.dtype == tf.resource and ta.handle.shape.as_list() == [2]
    assert ta.flow.dtype == tf.float32 and ta.flow.shape.as_list() == []
    assert ta.handle.op.get_attr("identical_element_shapes") is True
    assert ta.handle.op.get_attr("clear_after_read") is True
    assert ta.dtype == tf.float32 and ta.dynamic_size is False
    assert ta.element_shape.ndims is None
    w = ta.write(0, [1.0, 2.0])
    assert w.handle is ta.handle and w.flow is not ta.flow
    assert w.element_shape.as_list() == [2]
    assert ta.element_shape.as_list() == [2]  # shared inference state
    assert w.read(1).shape.as_list() == [2]
    assert w.stack().shape.as_list() == [3, 2]
    assert w.gather([0, 1]).shape.as_list() == [None, 2]
    assert w.concat().shape.as_list() == [6]
    v, lengths = w.concat().op.outputs
    assert lengths.dtype == tf.int64 and lengths.shape.as_list() == [None]


def test_run_time_name_is_the_op_name_made_unique(sess):
    """TF names a run-time array after its creating op (or tensor_array_name), with a
    unique suffix; errors name it."""
    by_op = tf.TensorArray(tf.float32, size=1, name="arr")
    by_attr = tf.TensorArray(tf.float32, size=1, tensor_array_name="given")
    for ta, prefix in ((by_op, "arr"), (by_attr, "given")):
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"^TensorArray %s_\d+: Could not read from TensorArray "
                                 r"index 0" % prefix):
            sess.run(ta.read(0))

def test_gather_shape_leads_with_the_number_of_indices_for_a_declared_shape(graph):
    """TF's shape function: with the element shape given at creation, a gather's static
    shape is [number of indices] + that shape, also inside loops and conds; a shape
    inferred from writes gives [None] + it (test above). Values recorded from TF 2.21."""
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    assert ta.gather([0, 1, 1]).shape.as_list() == [3, 2]
    assert ta.gather(tf.placeholder(tf.int32)).shape.as_list() == [None, 2]
    in_loop = []

    def body(i, t):
        in_loop.append(t.gather([0, 2]).shape.as_list())
        return i + 1, t
    tf.while_loop(lambda i, t: i < 1, body, (0, ta))
    assert in_loop == [[2, 2]]
    g = tf.cond(tf.constant(True), lambda: ta.gather([0, 1, 2, 0]),
                lambda: ta.gather([1, 1, 1, 1]))
    assert g.shape.as_list() == [4, 2]


def test_names_follow_tf(graph):
    ta = tf.TensorArray(tf.float32, size=2, name="bar")
    assert ta.handle.name == "bar:0"
    assert ta.write(0, 1.0).flow.op.name == "TensorArrayWrite/TensorArrayWriteV3"
    assert ta.stack().op.name == "TensorArrayStack/TensorArrayGatherV3"
    assert ta.unstack([1.0, 2.0]).flow.op.name == \
        "TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3"
    g = ta.grad("gradients")
    assert g.handle.op.name == "TensorArrayGrad/TensorArrayGradV3"
    assert g.flow.op.name == "TensorArrayGrad/gradient_flow"
    assert g.handle.op.get_attr("source") == b"gradients"


def test_static_element_shape_inference_and_errors(graph):
    p = tf.placeholder(tf.float32, [None, 3])
    ta = tf.TensorArray(tf.float32, size=2).write(0, p)
    assert ta.element_shape.as_list() == [None, 3]
    ta2 = ta.write(1, tf.zeros([5, 3]))
    assert ta2.element_shape.as_list() == [5, 3]
    with pytest.raises(ValueError, match="Inconsistent shapes: saw"):
        ta2.write(1, tf.zeros([5, 4]))
    u = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        u.unstack(tf.zeros([3, 4]))
    free = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    assert free.write(0, [1.0]).read(0).shape.ndims is None
    assert free.write(1, [1.0, 2.0]).element_shape.ndims is None
    with pytest.raises(TypeError, match="dtype"):
        tf.TensorArray(tf.float32, size=2).write(0, tf.constant(1, tf.int32))


def test_split_and_empty_static_shapes(graph):
    sp = tf.TensorArray(tf.float32, size=2).split(tf.zeros([5, 4]), [2, 3])
    assert sp.element_shape.ndims is None
    eq = tf.TensorArray(tf.float32, size=2).split(tf.zeros([6, 4]), [3, 3])
    assert eq.element_shape.as_list() == [3, 4]
    assert eq.concat().shape.as_list() == [6, 4]
    dyn = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[2])
    assert dyn.stack().shape.as_list() == [None, 2]
    assert dyn.size().op.type == "TensorArraySizeV3"
    assert tf.TensorArray(tf.float32, size=3).size().op.type == "Const"


def test_constructor_errors(graph):
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(ValueError, match="Size must be provided"):
        tf.TensorArray(tf.float32)
    with pytest.raises(ValueError, match="both a handle and size"):
        tf.TensorArray(tf.float32, size=2, handle=ta.handle, flow=ta.flow)
    with pytest.raises(ValueError, match="flow must not be None"):
        tf.TensorArray(tf.float32, handle=ta.handle)
    with pytest.raises(TypeError, match="Handle must be a Tensor"):
        tf.TensorArray(tf.float32, handle=1, flow=ta.flow)
    wrapped = tf.TensorArray(tf.float32, handle=ta.handle, flow=ta.flow)
    assert wrapped.handle is ta.handle


# --- values against NumPy -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.float16, tf.int64])
def test_write_read_stack(sess, dtype):
    x = (np.arange(12).reshape(3, 4) % 7).astype(dtype.as_numpy_dtype)
    ta = tf.TensorArray(dtype, size=3)
    for i in range(3):
        ta = ta.write(i, x[i])
    s, = sess.run([ta.stack()])
    assert s.dtype == x.dtype
    np.testing.assert_array_equal(s, x)
    r = sess.run(ta.read(2))
    assert r.dtype == x.dtype
    np.testing.assert_array_equal(r, x[2])


def test_unstack_gather_concat_size(sess):
    x = np.random.randn(4, 3).astype(np.float32)
    ta = tf.TensorArray(tf.float32, size=4, clear_after_read=False).unstack(x)
    g, c, n = sess.run([ta.gather([3, 1, 3]), ta.concat(), ta.size()])
    np.testing.assert_array_equal(g, x[[3, 1, 3]])
    np.testing.assert_array_equal(c, x.reshape(-1))
    assert n == 4


def test_strings_unstacked_into_a_tensor_array_are_string_scalars(sess):
    # scatter used to store a string vector's rows as bare bytes, which failed the read
    v = tf.constant([b"1.5", b"x y\x00"])
    ta = tf.TensorArray(tf.string, size=2, clear_after_read=False).unstack(v)
    assert sess.run(tf.strings.upper(ta.read(1))) == b"X Y\x00"
    assert sess.run(ta.stack()).tolist() == [b"1.5", b"x y\x00"]
    got = sess.run(tf.map_fn(lambda s: tf.strings.join([s, "!"]), v))
    assert got.dtype == object and got.tolist() == [b"1.5!", b"x y\x00!"]


def test_scatter_split_concat_lengths(sess):
    x = np.random.randn(5, 2).astype(np.float32)
    ta = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(x, [2, 0, 3])
    value, lengths = ta.concat().op.outputs
    v, ln = sess.run([value, lengths])
    np.testing.assert_array_equal(v, x)
    np.testing.assert_array_equal(ln, [2, 0, 3])
    assert ln.dtype == np.int64
    ta2 = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(x, [2, 0, 3])
    r = sess.run(ta2.read(1))
    assert r.shape == (0, 2)
    sc = tf.TensorArray(tf.float32, size=4).scatter([3, 0], x[:2])
    out = sess.run([sc.read(0), sc.read(3)])
    np.testing.assert_array_equal(out[0], x[1])
    np.testing.assert_array_equal(out[1], x[0])


def test_dynamic_size_grows(sess):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    ta = ta.write(0, [1.0]).write(4, [5.0])
    assert sess.run(ta.size()) == 5
    ta2 = tf.TensorArray(tf.float32, size=1, dynamic_size=True).scatter([6], [[2.0]])
    assert sess.run(ta2.size()) == 7
    ta3 = tf.TensorArray(tf.float32, size=1, dynamic_size=True,
                         infer_shape=False).split([1., 2., 3.], [1, 2])
    assert sess.run(ta3.size()) == 2


def test_empty_stack_and_concat(sess):
    s = tf.TensorArray(tf.float32, size=0, element_shape=[2, 3]).stack()
    c = tf.TensorArray(tf.float32, size=0, element_shape=[2, 3]).concat()
    sv, cv = sess.run([s, c])
    assert sv.shape == (0, 2, 3) and sv.dtype == np.float32
    assert cv.shape == (0, 3)
    _run_error(sess, tf.TensorArray(tf.float32, size=0).stack(), errors.UnimplementedError,
               "TensorArray has size zero, but element shape <unknown> is not fully defined")
    _run_error(sess, tf.TensorArray(tf.float32, size=0).concat(), errors.UnimplementedError,
               "element_shape_except0 <unknown> is not fully defined")


def test_clear_after_read(sess):
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
    _run_error(sess, [ta.read(0), ta.read(0)], errors.InvalidArgumentError,
               "Could not read index 0 twice because it was cleared after a previous read")
    keep = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(0, 3.0)
    assert sess.run([keep.read(0), keep.read(0)]) == [3.0, 3.0]


def test_scatter_and_gather_of_many_elements_keep_each_elements_state(sess):
    # scatters of distinct unwritten indices and gathers of distinct written ones are
    # done at once: each element ends written / cleared / read as one by one
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    ta = tf.TensorArray(tf.float32, size=8).scatter([5, 0, 3, 1, 2, 4], x)
    g = ta.gather([4, 0, 5])
    np.testing.assert_array_equal(sess.run(g), x[[5, 1, 0]])
    _run_error(sess, ta.write(3, tf.zeros([4])).flow, errors.InvalidArgumentError,
               "Could not write to TensorArray index 3 because it has already been written")
    with tf.control_dependencies([g]):
        again = ta.read(0)
    _run_error(sess, again, errors.InvalidArgumentError,
               "Could not read index 0 twice because it was cleared after a previous read")
    with tf.control_dependencies([g]):
        other = ta.read(2)
    np.testing.assert_array_equal(sess.run(other), x[4])
    _run_error(sess, ta.gather([1, 1]), errors.InvalidArgumentError,
               "Could not read index 1 twice because it was cleared after a previous read")
    _run_error(sess, ta.scatter([7, 7], x[:2]).flow, errors.InvalidArgumentError,
               "Could not write to TensorArray index 7 because it has already been written")
    # an unwritten element of the known shape reads as zeros (TF 2.21)
    np.testing.assert_array_equal(sess.run(ta.gather([6, 0])), [np.zeros(4), x[1]])
    # the element shape the scatter inferred holds for later writes
    _run_error(sess, ta.write(7, tf.placeholder_with_default([1., 2.], [None])).flow,
               errors.InvalidArgumentError, "inferred element shape: [4]")
    keep = tf.TensorArray(tf.float32, size=6, clear_after_read=False).scatter(
        [5, 0, 3, 1, 2, 4], x)
    both = [keep.gather([2, 2, 0]), keep.gather([2, 0])]
    np.testing.assert_array_equal(sess.run(both[0]), x[[4, 4, 1]])
    with tf.control_dependencies([both[0]]):
        late = keep.write(2, tf.zeros([4])).flow
    _run_error(sess, late, errors.InvalidArgumentError,
               "Could not write to TensorArray index 2 because it has already been read.")


def test_write_after_read_raises(sess):
    ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(0, 1.0)
    r = ta.read(0)
    with tf.control_dependencies([r]):
        f = ta.write(0, 3.0).flow
    _run_error(sess, f, errors.InvalidArgumentError,
               "Could not write to TensorArray index 0 because it has already been read.")


@pytest.mark.parametrize("build,fragment", [
    (lambda: tf.TensorArray(tf.float32, size=2).write(0, 1.).write(0, 2.).flow,
     "Could not write to TensorArray index 0 because it has already been written to."),
    (lambda: tf.TensorArray(tf.float32, size=2).read(1),
     "Could not read from TensorArray index 1 because it has not yet been written to."),
    (lambda: tf.TensorArray(tf.float32, size=2).write(2, 1.).flow,
     "Tried to write to index 2 but array is not resizeable and size is: 2"),
    (lambda: tf.TensorArray(tf.float32, size=2).write(-1, 1.).flow,
     "Tried to write to index -1"),
    (lambda: tf.TensorArray(tf.float32, size=2).write(0, 1.).read(3),
     "Tried to read from index 3 but array size is: 2"),
    (lambda: tf.TensorArray(tf.float32, size=2, infer_shape=False)
     .write(0, [1.]).write(1, [1., 2.]).stack(),
     "TensorArray has inconsistent shapes.  Index 0 has shape: [1] but index 1 has shape: "
     "[2]"),
    (lambda: tf.TensorArray(tf.float32, size=2, element_shape=[3])
     .write(0, tf.placeholder_with_default([1., 2.], [None])).flow,
     "because the value shape is [2] which is incompatible with the TensorArray's inferred "
     "element shape: [3]"),
    (lambda: tf.TensorArray(tf.float32, size=2).write(0, tf.placeholder_with_default(
        [1., 2.], [None])).write(1, tf.placeholder_with_default([1.], [None])).flow,
     "incompatible with the TensorArray's inferred element shape: [2]"),
    (lambda: tf.TensorArray(tf.float32, size=2).unstack(
        tf.placeholder_with_default([1., 2., 3.], [None])).flow,
     "Max scatter index must be < array size (2 vs. 2)"),
    (lambda: tf.TensorArray(tf.float32, size=2).split([1., 2., 3.], [1, 1]).flow,
     "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is 2"),
    (lambda: tf.TensorArray(tf.float32, size=3).split([1., 2., 3.], [1, 2]).flow,
     "TensorArray's size is not equal to the size of lengths (3 vs. 2)"),
    (lambda: tf.TensorArray(tf.float32, size=2, infer_shape=False)
     .write(0, 1.).write(1, 2.).concat(),
     "Concat saw a scalar shape at index 0 but requires at least vectors"),
])
def test_runtime_errors(sess, build, fragment):
    _run_error(sess, build(), errors.InvalidArgumentError, fragment)


def test_closed_array_raises(sess):
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
    c = ta.close()
    assert c.type == "TensorArrayCloseV3"
    with tf.control_dependencies([c]):
        r = ta.read(0)
    _run_error(sess, r, errors.InvalidArgumentError, "has already been closed.")


def test_kernel_dtype_mismatch(sess):
    ta = tf.TensorArray(tf.float32, size=2)
    wrapped = tf.TensorArray(tf.int32, handle=ta.handle, flow=ta.flow)
    _run_error(sess, wrapped.write(0, 1).flow, errors.InvalidArgumentError,
               "TensorArray dtype is float but Op is trying to write dtype int32.")
    _run_error(sess, tf.TensorArray(tf.int32, handle=ta.handle, flow=ta.flow).read(0),
               errors.InvalidArgumentError, "TensorArray dtype is float but Op requested "
               "dtype int32.")


def test_each_run_creates_a_new_array(sess):
    ta = tf.TensorArray(tf.float32, size=1).write(0, 2.0)
    r = ta.read(0)
    assert sess.run(r) == 2.0
    assert sess.run(r) == 2.0  # a fresh array: no "written twice" / "cleared" error
    h1, h2 = sess.run(ta.handle), sess.run(ta.handle)
    assert isinstance(h1, TensorArrayResource) and h1 is not h2


def test_identity_and_with_flow(sess):
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[1]).write(0, [4.0])
    i = ta.identity()
    assert i.flow.op.type == "Identity" and i.handle is ta.handle
    f = tf.identity(ta.flow)
    w = ta._with_flow(f)
    assert w.flow is f and w.element_shape.as_list() == [1] and w.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(w.read(0)), [4.0])


# --- gradient arrays ----------------------------------------------------------------------
def test_grad_array_aggregates_and_zero_fills(sess):
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    g = ta.grad("gradients")
    w = g.write(0, [1., 2.]).write(0, [3., 4.])
    out = sess.run(w.stack())
    np.testing.assert_array_equal(out, [[4., 6.], [0., 0.], [0., 0.]])
    unknown = tf.TensorArray(tf.float32, size=2).grad("gradients")
    _run_error(sess, unknown.read(0), errors.InvalidArgumentError,
               "the element shape is not fully defined")
    bad = tf.TensorArray(tf.float32, size=2, infer_shape=False).grad("gradients")
    _run_error(sess, bad.write(0, [1., 2.]).write(0, [3.]).flow, errors.InvalidArgumentError,
               "Could not aggregate to TensorArray index 0")


def test_grad_array_idempotent_per_source(sess):
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[])
    g1 = ta.grad("gradients")
    g2 = ta.grad("gradients")
    g3 = ta.grad("gradients_1")
    h = sess.run([ta.handle, g1.handle, g2.handle, g3.handle])
    assert h[1] is h[2] and h[1] is not h[3]
    assert h[1] is h[0].grads["gradients"]
    # writes through two grad handles of one source land in one array
    w1 = g1.write(0, 1.0)
    with tf.control_dependencies([w1.flow]):
        w2 = g2.write(0, 2.0)
    assert sess.run(w2.read(0)) == 3.0


def test_resource_is_thread_safe():
    ta = TensorArrayResource("t", tf.float32, 0, True, True, (), True,
                             multiple_writes_aggregate=True)

    def work(k):
        for i in range(200):
            ta.write(None, i, np.float32(1.0))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ta.size() == 200
    assert all(ta.read(None, i) == 4.0 for i in range(200))


# --- gradients ----------------------------------------------------------------------------
def test_gradient_unstack_reads_arithmetic(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3).unstack(x)
    y = ta.read(0) * ta.read(2) + tf.sin(ta.read(1))
    assert compute_gradient_error(x, [3, 2], y, [2]) < 1e-6


def test_gradient_unread_index_is_zero(sess):
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3).unstack(x)
    y = ta.read(1) * 2.0
    g = tf.gradients(y, x)[0]
    out = sess.run(g, {x: np.ones((3, 2))})
    np.testing.assert_array_equal(out, [[0, 0], [2, 2], [0, 0]])


def test_gradient_unread_element_of_unknown_shape_is_zeros_of_its_written_shape(sess):
    # the gradient array takes the forward elements' shapes (TF's CopyShapesFrom)
    v = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    ta = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(v, [1, 2, 3])
    y = tf.reduce_sum(ta.read(1) * 3.0)
    np.testing.assert_array_equal(sess.run(tf.gradients(y, v)[0]), [0, 3, 3, 0, 0, 0])


def test_gradient_writes_stack(graph):
    x = tf.placeholder(tf.float64, [2])
    ta = tf.TensorArray(tf.float64, size=3)
    ta = ta.write(0, x * x).write(1, tf.sin(x)).write(2, x * 3.0)
    y = ta.stack()
    assert compute_gradient_error(x, [2], y, [3, 2]) < 1e-6


def test_gradient_gather_scatter(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=5, clear_after_read=False).scatter([4, 0, 2], x)
    y = ta.gather([2, 4, 2]) * 1.5
    assert compute_gradient_error(x, [3, 2], y, [3, 2]) < 1e-6


def test_gradient_split_concat(graph):
    x = tf.placeholder(tf.float64, [5, 2])
    ta = tf.TensorArray(tf.float64, size=2, infer_shape=False).split(x, [2, 3])
    y = tf.square(ta.concat())
    assert compute_gradient_error(x, [5, 2], y, [5, 2]) < 1e-6


def test_gradient_concat_of_writes(graph):
    x = tf.placeholder(tf.float64, [4])
    ta = tf.TensorArray(tf.float64, size=2).write(0, x[:2] * 2.0).write(1, x[2:] * x[:2])
    y = ta.concat()
    assert compute_gradient_error(x, [4], y, [4]) < 1e-6


def test_gradient_through_read_after_write_same_array(graph):
    x = tf.placeholder(tf.float64, [2])
    ta = tf.TensorArray(tf.float64, size=2).write(0, x).write(1, x * 2.0)
    y = ta.read(0) * ta.read(1)
    assert compute_gradient_error(x, [2], y, [2]) < 1e-6


def test_not_differentiable_registrations():
    from tensorweave.framework.registry import get_gradient
    for t in ("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3",
              "TensorArrayCloseV3"):
        assert get_gradient(t) == (True, None)
    for t in ("TensorArrayReadV3", "TensorArrayWriteV3", "TensorArrayGatherV3",
              "TensorArrayScatterV3", "TensorArrayConcatV3", "TensorArraySplitV3"):
        found, fn = get_gradient(t)
        assert found and fn is not None


def test_write_checks_partial_element_shapes(sess):
    # the write kernel's fast path (element shape equal to the value's) and its loop
    # (unknown dimensions) accept and reject the same shapes
    p = tf.placeholder(tf.float32, [None, None])
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[None, 2], infer_shape=False)
    ta = ta.write(0, p[:1]).write(1, p)
    np.testing.assert_array_equal(
        sess.run(ta.concat(), {p: np.arange(6, dtype=np.float32).reshape(3, 2)}),
        [[0, 1], [0, 1], [2, 3], [4, 5]])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"index 0 because the value shape is \[1,3\] which is "
                             r"incompatible with the TensorArray's inferred element shape: "
                             r"\[\?,2\]"):
        sess.run(ta.flow, {p: np.ones((3, 3), np.float32)})
    fixed = tf.TensorArray(tf.float32, size=2).write(0, p)  # the first write fixes it
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"value shape is \[2,2\] .* element shape: \[1,2\]"):
        sess.run(fixed.write(1, tf.ones([2, 2])).flow, {p: np.ones((1, 2), np.float32)})


def test_write_index_forms(sess):
    i = tf.placeholder(tf.int32)
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[2])
    w = ta.write(i, [1.0, 2.0])
    assert sess.run(w.size(), {i: 4}) == 5
    assert sess.run(w.size(), {i: np.int32(0)}) == 1
    with pytest.raises(errors.InvalidArgumentError, match=r"index must be a scalar, got "
                                                          r"shape \[1\]"):
        sess.run(w.flow, {i: [1]})
    with pytest.raises(errors.InvalidArgumentError, match="Tried to write to index -1"):
        sess.run(w.flow, {i: -1})
