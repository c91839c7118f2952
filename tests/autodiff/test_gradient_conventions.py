"""Gradients where TF's kernels and gradient functions make a choice that programs see:
no gradient in means none out (the tf.where masking trick), sparse gradients stay
sparse through negation and subtraction (a sparse optimizer update), boolean_mask's is
dense, cumprod's is finite at zero, and segment max/min over infinities and NaN."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("fn, want", [
    (tf.sqrt, [0.0, 0.0, 0.25]),        # d sqrt(x) = 0.5 / sqrt(x) at 4
    (tf.rsqrt, [0.0, 0.0, -0.0625]),    # -0.5 x^-1.5 at 4
    (tf.reciprocal, [0.0, 0.0, -0.0625]),  # -1 / x^2 at 4
])
def test_masked_branch_with_infinite_local_gradient_gives_zero(sess, fn, want):
    x = tf.constant([-1.0, 0.0, 4.0])
    y = tf.where(x > 0, fn(x), tf.zeros_like(x))
    np.testing.assert_allclose(sess.run(tf.gradients(tf.reduce_sum(y), x)[0]), want)


def _momentum_two_steps(sess, loss_of, feeds):
    emb = tf.Variable(np.ones([3, 2], np.float32))
    ph = tf.placeholder(feeds[0].dtype, feeds[0].shape)
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss_of(emb, ph))
    sess.run(tf.global_variables_initializer())
    for f in feeds:
        sess.run(train, {ph: f})
    return sess.run(emb)[:, 0]


def test_negation_and_subtraction_keep_a_sparse_gradient_sparse(sess):
    emb = tf.Variable(np.ones([3, 2], np.float32))
    other = tf.Variable(np.ones([3, 2], np.float32))
    ids = tf.constant([0])
    for y in (-emb, emb - other):
        grads = tf.gradients(tf.reduce_sum(tf.gather(y, ids)), [emb, other])
        assert isinstance(grads[0], tf.IndexedSlices)
    assert isinstance(tf.gradients(tf.reduce_sum(tf.gather(emb - other, ids)), other)[0],
                      tf.IndexedSlices)
    neg = -tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([0]), tf.constant([4, 2]))
    assert isinstance(neg, tf.IndexedSlices)
    # a sparse momentum update leaves row 0 alone in the second step (ids [1]):
    # row 0 = 1 + 0.1, row 1 = 1 + 0.1; a dense one would move row 0 again by 0.09
    got = _momentum_two_steps(sess, lambda e, i: tf.reduce_sum(tf.gather(-e, i)),
                              [np.array([0], np.int32), np.array([1], np.int32)])
    np.testing.assert_allclose(got, [1.1, 1.1, 1.0], rtol=1e-6)


def test_boolean_mask_gradient_is_dense(sess):
    emb = tf.Variable(np.ones([3, 2], np.float32))
    g = tf.gradients(tf.reduce_sum(tf.boolean_mask(emb, tf.constant([True, False, True]))),
                     emb)[0]
    assert isinstance(g, tf.Tensor)
    # dense momentum: row 0's accumulator (1 after step one) moves it again by 0.09
    got = _momentum_two_steps(sess, lambda e, m: tf.reduce_sum(tf.boolean_mask(e, m)),
                              [np.array([True, False, False]), np.array([False, True, False])])
    np.testing.assert_allclose(got, [0.81, 0.9, 1.0], rtol=1e-6)


def test_cumprod_gradient_at_zero_is_finite(sess):
    # TF divides the product by x with div_no_nan: 0 where x is 0 (the true value at
    # x1 would be x0 + x0 * x2 = 8); elsewhere the exact gradient
    c = tf.constant([2.0, 0.0, 3.0])
    np.testing.assert_allclose(sess.run(tf.gradients(tf.cumprod(c), c)[0]), [1.0, 0.0, 0.0])
    c2 = tf.constant([2.0, 4.0, 3.0])
    np.testing.assert_allclose(sess.run(tf.gradients(tf.cumprod(c2), c2)[0]),
                               [1 + 4 + 12, 2 + 6, 8])


def test_segment_max_min_over_infinities_and_nan(sess):
    inf, nan = np.inf, np.nan
    got = sess.run([
        tf.segment_max(tf.constant([-inf, -inf]), [0, 0]),
        tf.segment_min(tf.constant([inf, inf]), [0, 0]),
        tf.segment_max(tf.constant([nan, 1.0, 2.0, nan]), [0, 0, 1, 1]),
        tf.unsorted_segment_max(tf.constant([nan, 1.0]), [0, 0], 2),
        tf.unsorted_segment_min(tf.constant([nan]), [0], 1)])
    np.testing.assert_array_equal(got[0], [-inf])
    np.testing.assert_array_equal(got[1], [inf])
    np.testing.assert_array_equal(got[2], [1.0, 2.0])  # NaN is skipped
    # unsorted: empty segments and NaN-only ones hold the dtype's extreme
    np.testing.assert_array_equal(got[3], [1.0, np.finfo(np.float32).min])
    np.testing.assert_array_equal(got[4], [np.finfo(np.float32).max])


def test_compute_gradient_of_a_list_feeds_each_x_alone(graph):
    # TF checks each x with only itself fed: d(a*b)/da at a=5,6 is b's graph value (3, 4)
    a = tf.constant([1.0, 2.0], tf.float64)
    b = tf.constant([3.0, 4.0], tf.float64)
    with tf.Session():
        (ta, na), (tb, nb) = tf.test.compute_gradient(
            [a, b], [[2], [2]], a * b, [2],
            x_init_value=[np.array([5.0, 6.0]), np.array([7.0, 8.0])])
    np.testing.assert_allclose(ta, np.diag([3.0, 4.0]))
    np.testing.assert_allclose(na, np.diag([3.0, 4.0]), rtol=1e-6)
    np.testing.assert_allclose(tb, np.diag([1.0, 2.0]))


def test_an_indexed_slices_can_be_fed(sess):
    slices = tf.IndexedSlices(tf.placeholder(tf.float32, [None, 2]),
                              tf.placeholder(tf.int32, [None]), tf.constant([4, 2]))
    dense = tf.convert_to_tensor(slices)
    want = np.zeros((4, 2), np.float32)
    want[2] = [1.0, 3.0]
    got = sess.run(dense, {slices: (np.array([[1.0, 3.0]], np.float32), np.array([2]))})
    np.testing.assert_array_equal(got, want)
    value = tf.IndexedSlicesValue(np.array([[1.0, 3.0]], np.float32), np.array([2]),
                                  np.array([4, 2]))
    np.testing.assert_array_equal(sess.run(dense, {slices: value}), want)


def test_gradient_override_is_an_attr_that_survives_a_graph_def(graph):
    @tf.RegisterGradient("NegatedForConventionTest")
    def _negated(op, grad):
        return -grad
    x = tf.constant([1.0, 2.0], name="x")
    with graph.gradient_override_map({"Identity": "NegatedForConventionTest"}):
        y = tf.identity(x, name="y")
    assert y.op.get_attr("_gradient_op_type") == b"NegatedForConventionTest"
    graph_def = graph.as_graph_def()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(graph_def, name="")
        grad = tf.gradients(g2.get_tensor_by_name("y:0"), g2.get_tensor_by_name("x:0"))[0]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(grad), [-1.0, -1.0])


def test_a_gradient_of_the_wrong_shape_is_a_value_error(graph):
    @tf.RegisterGradient("WrongShapeForConventionTest")
    def _wrong(op, grad):
        return tf.ones([7])
    x = tf.constant([1.0, 2.0])
    with graph.gradient_override_map({"Identity": "WrongShapeForConventionTest"}):
        y = tf.identity(x)
    with pytest.raises(ValueError, match="Incompatible shapes between op input"):
        tf.gradients(y, x)


def test_fetched_indexed_slices_unpack_and_composites_pass_through_identity(sess):
    """TF's IndexedSlicesValue is a namedtuple; tf.identity of a SparseTensor or of
    IndexedSlices is one of the same kind, each component through an Identity (the
    names TF 2.21 gives)."""
    w = tf.Variable([1.0, 2.0], name="w")
    grad = tf.gradients(tf.reduce_sum(tf.gather(w, [0, 1, 0])), w)[0]
    sess.run(w.initializer)
    values, indices, dense_shape = sess.run(grad)
    assert values.tolist() == [1.0, 1.0, 1.0] and indices.tolist() == [0, 1, 0]
    assert dense_shape.tolist() == [2]
    sp = tf.identity(tf.SparseTensor([[0, 0]], [1.0], [2, 2]), name="ignored")
    assert isinstance(sp, tf.SparseTensor)
    assert [sp.indices.name, sp.values.name, sp.dense_shape.name] == [
        "Identity:0", "Identity_1:0", "Identity_2:0"]
    slices = tf.identity(grad)
    assert isinstance(slices, tf.IndexedSlices)
    np.testing.assert_array_equal(sess.run(slices).values, values)
