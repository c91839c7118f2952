"""Slicing (Slice, StridedSlice, Tensor.__getitem__), gathers/scatters, one_hot, where,
boolean_mask, sequence_mask, unique and top_k, each checked against NumPy, with the
static shapes TF1 infers (taken from TF 2.21's tf.compat.v1) and numeric gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

X = np.arange(3 * 4 * 5 * 6, dtype=np.float64).reshape(3, 4, 5, 6)


def _shape(t):
    s = t.shape
    return None if s.ndims is None else s.as_list()


# --- __getitem__ -------------------------------------------------------------------------
GETITEM_SPECS = [
    np.s_[0], np.s_[-1], np.s_[1:3], np.s_[::-1], np.s_[::2], np.s_[-2:], np.s_[:-1],
    np.s_[..., 0], np.s_[..., -1, :], np.s_[None], np.s_[:, None], np.s_[..., None],
    np.s_[None, ..., None], np.s_[1, ..., 2], np.s_[1, 2, 3, 4], np.s_[-3, -4, -5, -6],
    np.s_[2:0:-1], np.s_[::-2, 1::2, -1:0:-2], np.s_[10:], np.s_[-10:2], np.s_[:, :, 7:2:-1],
    np.s_[0, None, 1:, ..., None, ::-3], np.s_[...], np.s_[1:1], np.s_[3:1], np.s_[:, 0, ...],
    np.s_[np.int64(1), np.int32(-1)], np.s_[tf.newaxis, 0],
]


def test_getitem_matches_numpy_values_and_static_shapes(sess):
    x = tf.constant(X)
    outs = [x[spec] for spec in GETITEM_SPECS]
    values = sess.run(outs)
    for spec, t, v in zip(GETITEM_SPECS, outs, values):
        want = X[spec]
        assert _shape(t) == list(want.shape), spec
        np.testing.assert_array_equal(v, want, err_msg=str(spec))
        assert v.dtype == np.float64


def test_getitem_unknown_dims_match_tf_static_shapes(graph):
    p = tf.placeholder(tf.float32, [None, None, 3])
    q = tf.placeholder(tf.float32, [4, None, 3])
    u = tf.placeholder(tf.float32)
    assert _shape(p[0:2]) == [None, None, 3]
    assert _shape(p[:, 1:]) == [None, None, 3]
    assert _shape(p[..., 0]) == [None, None]
    assert _shape(q[1:3]) == [2, None, 3]
    assert _shape(q[::-1]) == [4, None, 3]
    assert _shape(q[None, ..., None]) == [1, 4, None, 3, 1]
    assert _shape(q[:, :5, 1]) == [4, None]
    assert u[0].shape.ndims is None
    assert u[0, ..., 1].shape.ndims is None


def test_getitem_unknown_dims_run(sess):
    p = tf.placeholder(tf.float64, [None, None, None, 6])
    specs = [np.s_[1:, ::-1, 0], np.s_[-1, ..., 2:4], np.s_[None, :, -2]]
    outs = sess.run([p[s] for s in specs], {p: X})
    for s, v in zip(specs, outs):
        np.testing.assert_array_equal(v, X[s])


def test_getitem_scalar_tensor_indices(sess):
    x = tf.constant(X)
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    a, b, c = x[i], x[i, -1, j], x[i:, :j]
    assert _shape(a) == [4, 5, 6]
    assert _shape(b) == [6]
    assert _shape(c) == [None, None, 5, 6]
    assert c.op.inputs[1].dtype == tf.int64
    va, vb, vc = sess.run([a, b, c], {i: 1, j: 2})
    np.testing.assert_array_equal(va, X[1])
    np.testing.assert_array_equal(vb, X[1, -1, 2])
    np.testing.assert_array_equal(vc, X[1:, :2])


def test_getitem_names_and_op_structure(graph):
    x = tf.constant(X)
    y = x[1:, 2]
    assert y.op.type == "StridedSlice"
    assert y.op.name == "strided_slice"
    assert [t.op.name for t in y.op.inputs[1:]] == [
        "strided_slice/stack", "strided_slice/stack_1", "strided_slice/stack_2"]
    assert y.op.get_attr("begin_mask") == 0 and y.op.get_attr("end_mask") == 1
    assert y.op.get_attr("shrink_axis_mask") == 2
    assert x[0].op.name == "strided_slice_1"


@pytest.mark.parametrize("bad", [1.0, "a", (1, [0]), [1, [0]]])
def test_getitem_rejects_unsupported_index_types(graph, bad):
    x = tf.constant(X)
    with pytest.raises(TypeError, match=r"Only integers, slices \(`:`\), ellipsis"):
        x[bad]


def test_getitem_rejects_float_and_vector_tensors(graph):
    x = tf.constant(X)
    with pytest.raises(TypeError, match="scalar tf.int32/tf.int64 tensors are valid"):
        x[tf.constant(1.0)]
    with pytest.raises(TypeError, match="scalar tf.int32/tf.int64 tensors are valid"):
        x[tf.constant([1, 2])]
    with pytest.raises(TypeError, match="are valid indices"):
        x[1:tf.constant(2.0)]


def test_getitem_build_time_errors(graph):
    q = tf.placeholder(tf.float32, [4, None, 3])
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):
        q[5]
    with pytest.raises(ValueError, match="slice index -1 of dimension 0 out of bounds"):
        q[-5]
    with pytest.raises(ValueError, match="slice index 3 of dimension 2 out of bounds"):
        q[:, :, 3]
    with pytest.raises(ValueError, match="Index out of range using input dim 3; input has "
                                         "only 3 dims"):
        q[1, 2, 3, 4]
    with pytest.raises(ValueError, match="Multiple ellipses in slice spec not allowed"):
        q[..., ...]
    with pytest.raises(ValueError, match=r"strides\[0\] must be non-zero"):
        q[::0]


def test_getitem_run_time_errors(sess):
    u = tf.placeholder(tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="slice index 5 of dimension 0 out of bounds"):
        sess.run(u[5], {u: X[:, 0, 0, :4]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="slice index -2 of dimension 0 out of bounds"):
        sess.run(u[-5], {u: X[:, 0, 0, :4]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Index out of range using input dim 2; input has only 2 dims"):
        sess.run(u[0, 0, 0], {u: X[:, 0, 0, :4]})


def test_getitem_bool_mask(sess):
    x = tf.constant(X[:, 0, 0, :])
    m = np.array([True, False, True])
    np.testing.assert_array_equal(sess.run(x[m]), X[:, 0, 0, :][m])
    np.testing.assert_array_equal(sess.run(x[tf.constant(m)]), X[:, 0, 0, :][m])


# --- strided_slice with explicit masks, fuzzed against NumPy -----------------------------
def _random_spec(rng, rank):
    """A random Python index tuple plus the strided_slice arguments that encode it."""
    items, begin, end, strides = [], [], [], []
    masks = dict(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                 shrink_axis_mask=0)
    have_ellipsis = False
    consumed = 0
    for pos in range(rng.integers(0, rank + 3)):
        bit = 1 << pos
        kind = rng.choice(["int", "slice", "slice", "ellipsis", "new"])
        if kind == "ellipsis" and have_ellipsis:
            kind = "new"
        if kind in ("int", "slice") and consumed >= rank:
            kind = "new"
        junk = int(rng.integers(-9, 9))  # values under a mask bit must be ignored
        if kind == "int":
            v = int(rng.integers(-3, 3))
            items.append(v)
            begin.append(v)
            end.append(junk if rng.random() < 0.5 else v + 1)
            strides.append(1 if rng.random() < 0.7 else int(rng.integers(1, 4)))
            masks["shrink_axis_mask"] |= bit
            if rng.random() < 0.3:  # masks are ignored for shrunk dimensions
                masks["end_mask"] |= bit
            consumed += 1
        elif kind == "slice":
            start = None if rng.random() < 0.3 else int(rng.integers(-8, 8))
            stop = None if rng.random() < 0.3 else int(rng.integers(-8, 8))
            step = int(rng.choice([1, 1, 2, 3, -1, -2]))
            items.append(slice(start, stop, step))
            begin.append(junk if start is None else start)
            end.append(junk if stop is None else stop)
            strides.append(step)
            masks["begin_mask"] |= bit if start is None else 0
            masks["end_mask"] |= bit if stop is None else 0
            consumed += 1
        elif kind == "ellipsis":
            items.append(Ellipsis)
            begin.append(junk)
            end.append(junk)
            strides.append(1)
            masks["ellipsis_mask"] |= bit
            if rng.random() < 0.3:  # an ellipsis bit wins over a new-axis bit
                masks["new_axis_mask"] |= bit
            have_ellipsis = True
        else:
            items.append(None)
            begin.append(junk)
            end.append(junk)
            strides.append(1)
            masks["new_axis_mask"] |= bit
            if rng.random() < 0.3:  # a new-axis bit wins over a shrink bit
                masks["shrink_axis_mask"] |= bit
    if not begin:
        begin, end, strides = [0], [0], [1]
        masks["ellipsis_mask"] = 1
        items = [Ellipsis]
    return tuple(items), begin, end, strides, masks


def test_strided_slice_masks_fuzzed_against_numpy(sess):
    rng = np.random.default_rng(7)
    p = tf.placeholder(tf.float64, [None, 4, None, 6])
    cases = []
    for _ in range(150):
        items, b, e, s, masks = _random_spec(rng, 4)
        static = tf.strided_slice(tf.constant(X), b, e, s, **masks)
        dynamic = tf.strided_slice(p, tf.placeholder_with_default(b, [None]),
                                   tf.placeholder_with_default(e, [None]),
                                   tf.placeholder_with_default(s, [None]), **masks)
        cases.append((items, static, dynamic))
    values = sess.run([(c[1], c[2]) for c in cases], {p: X})
    for (items, static, dynamic), (vs, vd) in zip(cases, values):
        want = X[items]
        assert _shape(static) == list(want.shape), items
        np.testing.assert_array_equal(vs, want, err_msg=str(items))
        np.testing.assert_array_equal(vd, want, err_msg=str(items))
        assert dynamic.shape.ndims is None  # strides not constant: unknown, as TF


def test_strided_slice_static_shapes_like_tf(graph):
    q = tf.placeholder(tf.float32, [4, None, 3])
    begin = tf.placeholder(tf.int32, [2])
    assert _shape(tf.strided_slice(q, begin, [0, 0], [1, 1], begin_mask=3, end_mask=3)) \
        == [4, None, 3]
    assert _shape(tf.strided_slice(q, begin, [0, 0], [1, 1])) == [None, None, 3]
    assert _shape(tf.strided_slice(q, begin, [0, 0], [1, 1], shrink_axis_mask=1)) \
        == [None, 3]
    assert tf.strided_slice(q, [0], [1], tf.placeholder(tf.int32, [1])).shape.ndims is None
    assert _shape(tf.strided_slice(q, [0], [1], [1], new_axis_mask=1,
                                   shrink_axis_mask=1)) == [1, 4, None, 3]
    assert _shape(tf.strided_slice(q, [0], [1], [1], new_axis_mask=1,
                                   ellipsis_mask=1)) == [4, None, 3]
    assert _shape(tf.strided_slice(q, [1], [2], [2], shrink_axis_mask=1)) == [None, 3]
    assert _shape(tf.strided_slice(q, [1], [3])) == [2, None, 3]
    with pytest.raises(ValueError, match="only stride 1 allowed on non-range indexing"):
        tf.strided_slice(q, [1], [2], [-1], shrink_axis_mask=1)
    with pytest.raises(ValueError, match="Multiple ellipses"):
        tf.strided_slice(q, [0, 0], [1, 1], [1, 1], ellipsis_mask=3)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.strided_slice(q, 0, 1, 1)


def test_strided_slice_run_time_errors(sess):
    u = tf.placeholder(tf.float64)
    feed = {u: X[0, 0]}
    dyn = tf.placeholder_with_default([0], [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"strides\[0\] must be non-zero"):
        sess.run(tf.strided_slice(u, [1], [2], dyn), feed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="only stride 1 allowed"):
        sess.run(tf.strided_slice(u, [1], [2], [-1], shrink_axis_mask=1), feed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Multiple ellipses"):
        sess.run(tf.strided_slice(u, [1, 1], [2, 2], tf.placeholder_with_default(
            [1, 1], [2]), ellipsis_mask=3), feed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="1D equal size tensors"):
        sess.run(tf.strided_slice(u, tf.placeholder_with_default([1, 1], [None]), [2],
                                  [1]), feed)


def test_strided_slice_shrink_ignores_masks_and_allows_positive_strides(sess):
    x = tf.constant(X[:, 0, 0, :4])
    a = tf.strided_slice(x, [1], [2], [1], shrink_axis_mask=1, begin_mask=1)
    b = tf.strided_slice(x, [1], [2], [2], shrink_axis_mask=1)
    np.testing.assert_array_equal(sess.run(a), X[1, 0, 0, :4])
    np.testing.assert_array_equal(sess.run(b), X[1, 0, 0, :4])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.int64, np.uint8,
                                   np.bool_, np.complex64])
def test_strided_slice_dtypes(sess, dtype):
    v = (np.arange(24) % 3).reshape(4, 6).astype(dtype)
    x = tf.constant(v)
    out = sess.run(x[::-1, 1::2])
    np.testing.assert_array_equal(out, v[::-1, 1::2])
    assert out.dtype == v.dtype


def test_strided_slice_strings(sess):
    v = np.array([b"a", b"b", b"c"], dtype=object)
    assert list(sess.run(tf.constant(v)[::-1])) == [b"c", b"b", b"a"]


def test_strided_slice_int64_index_type(sess):
    x = tf.constant(X)
    b = tf.constant([1, 0], tf.int64)
    y = tf.strided_slice(x, b, tf.constant([3, 2], tf.int64), tf.constant([1, 1], tf.int64))
    assert y.op.get_attr("Index") == tf.int64
    np.testing.assert_array_equal(sess.run(y), X[1:3, 0:2])


# --- slice -------------------------------------------------------------------------------
def test_slice_values(sess):
    x = tf.constant(X)
    cases = [([0, 0, 0, 0], [1, 2, 3, 4]), ([1, 2, 3, 4], [-1, -1, -1, -1]),
             ([2, 0, 4, 1], [1, -1, 1, 0])]
    outs = [tf.slice(x, b, s) for b, s in cases]
    for (b, s), t, v in zip(cases, outs, sess.run(outs)):
        want = X[tuple(slice(bi, None if si == -1 else bi + si) for bi, si in zip(b, s))]
        np.testing.assert_array_equal(v, want)
        assert _shape(t) == list(want.shape)


def test_slice_static_shapes_like_tf(graph):
    q = tf.placeholder(tf.float32, [4, None, 3])
    u = tf.placeholder(tf.float32)
    assert _shape(tf.slice(q, [1, 0, 0], [2, -1, -1])) == [2, None, 3]
    assert _shape(tf.slice(q, [1, 0, 0], [5, -1, -1])) == [5, None, 3]
    assert _shape(tf.slice(q, tf.placeholder(tf.int32, [3]), [2, -1, 1])) == [2, None, 1]
    assert _shape(tf.slice(q, [0, 0, 0], tf.placeholder(tf.int32, [3]))) == [None] * 3
    assert _shape(tf.slice(u, [0, 0], [1, -1])) == [1, None]
    assert tf.slice(q, [1, 0, 0], [1, 1, 1]).op.type == "Slice"
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 3"):
        tf.slice(q, [0, 0], [1, 1])
    with pytest.raises(ValueError, match="Invalid value in tensor used for shape: -2"):
        tf.slice(q, [0, 0, 0], [-2, 1, 1])


def test_slice_run_time_errors(sess):
    u = tf.placeholder(tf.float64)
    feed = {u: np.zeros((3, 4))}
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected size\[0\] in \[0, 2\], but got 5"):
        sess.run(tf.slice(u, [1, 1], [5, 1]), feed)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected begin\[0\] in \[0, 3\], but got 4"):
        sess.run(tf.slice(u, [4, 1], [-1, 1]), feed)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected begin\[0\] in \[0, 3\], but got -1"):
        sess.run(tf.slice(u, [-1, 1], [1, 1]), feed)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Expected begin and size arguments to be 1-D tensors of size 2"):
        sess.run(tf.slice(u, [0], [1]), feed)


# --- gradients of slicing ----------------------------------------------------------------
@pytest.mark.parametrize("spec", [np.s_[1:, ::-2], np.s_[0, ..., None, 1:3], np.s_[-1],
                                  np.s_[::2, 1, :0:-1]])
def test_strided_slice_gradient(graph, spec):
    v = np.random.rand(3, 4, 5)
    x = tf.placeholder(tf.float64, v.shape)
    y = x[spec]
    err = compute_gradient_error(x, list(v.shape), y, list(v[spec].shape), x_init_value=v)
    assert err < 1e-8
    assert tf.gradients(y, x)[0].op.type == "StridedSliceGrad"


def test_strided_slice_gradient_unknown_shape(sess):
    x = tf.placeholder(tf.float64, [None, 4])
    g = tf.gradients(tf.reduce_sum(x[1:, ::2] * 3.0), x)[0]
    out = sess.run(g, {x: np.ones((3, 4))})
    want = np.zeros((3, 4))
    want[1:, ::2] = 3.0
    np.testing.assert_array_equal(out, want)


def test_slice_gradient(graph):
    v = np.random.rand(3, 4)
    x = tf.placeholder(tf.float64, v.shape)
    y = tf.slice(x, [1, 1], [2, -1])
    assert compute_gradient_error(x, [3, 4], y, [2, 3], x_init_value=v) < 1e-8


def test_strided_slice_grad_op_and_its_gradient(sess):
    dy = tf.constant(np.arange(4.0).reshape(2, 2))
    from tensorweave.ops.indexing.indexing_ops import strided_slice_grad
    out = strided_slice_grad([3, 4], [1, 0], [3, 4], [1, 2], dy)
    assert _shape(out) == [3, 4]
    want = np.zeros((3, 4))
    want[1:3, 0:4:2] = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(sess.run(out), want)
    p = tf.placeholder(tf.float64, [2, 2])
    y = strided_slice_grad([3, 4], [1, 0], [3, 4], [1, 2], p)
    assert compute_gradient_error(p, [2, 2], y, [3, 4]) < 1e-8


# --- gather ------------------------------------------------------------------------------
P5 = np.arange(5 * 4 * 3, dtype=np.float32).reshape(5, 4, 3)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("indices", [[1, 0, 2, 2], [[0, 2], [1, 1]], 2])
def test_gather_matches_numpy_take(sess, axis, indices):
    t = tf.gather(tf.constant(P5), indices, axis=axis)
    want = np.take(P5, indices, axis=axis)
    assert _shape(t) == list(want.shape)
    v = sess.run(t)
    np.testing.assert_array_equal(v, want)
    assert v.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int32, np.int64, np.uint8,
                                   np.bool_, np.complex128])
def test_gather_dtypes_and_index_types(sess, dtype):
    v = (np.arange(12) % 5).reshape(4, 3).astype(dtype)
    for idx_dtype in (tf.int32, tf.int64, tf.int16):
        out = sess.run(tf.gather(v, tf.constant([3, 0, 3], idx_dtype)))
        np.testing.assert_array_equal(out, v[[3, 0, 3]])
        assert out.dtype == v.dtype


def test_gather_strings(sess):
    v = np.array([b"x", b"y", b"z"], dtype=object)
    assert list(sess.run(tf.gather(tf.constant(v), [2, 0]))) == [b"z", b"x"]


def test_gather_static_shapes_like_tf(graph):
    q = tf.placeholder(tf.float32, [4, None, 3])
    u = tf.placeholder(tf.float32)
    iv = tf.placeholder(tf.int32, [None])
    i2 = tf.placeholder(tf.int32, [2, None])
    iu = tf.placeholder(tf.int32)
    ax = tf.placeholder(tf.int32, [])
    assert _shape(tf.gather(q, iv)) == [None, None, 3]
    assert _shape(tf.gather(q, i2, axis=1)) == [4, 2, None, 3]
    assert _shape(tf.gather(q, iv, axis=-1)) == [4, None, None]
    assert _shape(tf.gather(q, i2, axis=ax)) == [None] * 4
    assert tf.gather(u, i2).shape.ndims is None
    assert tf.gather(q, iu).shape.ndims is None
    assert tf.gather(q, iv).op.type == "GatherV2"
    with pytest.raises(ValueError, match="Shape must be at least rank 4 but is rank 3"):
        tf.gather(q, iv, axis=3)
    with pytest.raises(ValueError, match="Shape must be at least rank 4 but is rank 3"):
        tf.gather(q, iv, axis=-4)
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.gather(tf.constant(1.0), [0])
    with pytest.raises(TypeError, match="DataType float32 not in list of allowed values"):
        tf.gather(q, [0.5])


def test_gather_run_time_errors(sess):
    p = tf.placeholder(tf.float64)
    i = tf.placeholder(tf.int32)
    g = tf.gather(p, i)
    cases = [([1, 7], "indices[1] = 7 is not in [0, 5)"),
             ([[1, 2], [7, 1]], "indices[1,0] = 7 is not in [0, 5)"),
             (7, "indices = 7 is not in [0, 5)"),
             ([-1], "indices[0] = -1 is not in [0, 5)")]
    for idx, msg in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(msg)):
            sess.run(g, {p: np.arange(5.0), i: idx})
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "indices[1] = 9 is not in [0, 4)")):
        sess.run(tf.gather(p, i, axis=1), {p: np.zeros((3, 4)), i: [0, 9]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least rank 3 but is rank 2"):
        sess.run(tf.gather(p, i, axis=2), {p: np.zeros((3, 4)), i: [0]})


def re_escape(s):
    import re
    return re.escape(s)


def test_gather_gradient_axis0_is_indexed_slices(sess):
    params = tf.placeholder(tf.float64, [5, 3])
    y = tf.gather(params, [4, 1, 4])
    g = tf.gradients(y, params)[0]
    assert isinstance(g, tf.IndexedSlices)
    v = sess.run(g.values, {params: np.ones((5, 3))})
    np.testing.assert_array_equal(v, np.ones((3, 3)))
    np.testing.assert_array_equal(sess.run(g.dense_shape), [5, 3])
    err = compute_gradient_error(params, [5, 3], y, [3, 3])
    assert err < 1e-8


def test_gather_gradient_axis0_matrix_indices(graph):
    params = tf.placeholder(tf.float64, [5, 3])
    y = tf.gather(params, [[4, 1], [0, 4]])
    assert compute_gradient_error(params, [5, 3], y, [2, 2, 3]) < 1e-8
    y2 = tf.gather(params, 2)
    assert compute_gradient_error(params, [5, 3], y2, [3]) < 1e-8


@pytest.mark.parametrize("axis", [1, 2, -1])
def test_gather_gradient_other_axes(graph, axis):
    params = tf.placeholder(tf.float64, [2, 4, 3])
    idx = [[0, 2], [2, 2]]
    y = tf.gather(params, idx, axis=axis)
    want = np.take(np.zeros((2, 4, 3)), idx, axis=axis).shape
    assert compute_gradient_error(params, [2, 4, 3], y, list(want)) < 1e-8


def test_gather_gradient_unknown_shape_densifies(sess):
    params = tf.placeholder(tf.float64, [None, 2])
    y = tf.gather(params, [1, 1, 0]) * 2.0
    g = tf.gradients(y, params)[0]
    with pytest.warns(UserWarning, match="unknown shape"):
        dense = tf.convert_to_tensor(g)
    out = sess.run(dense, {params: np.zeros((3, 2))})
    np.testing.assert_array_equal(out, [[2, 2], [4, 4], [0, 0]])


# --- gather_nd / scatter_nd --------------------------------------------------------------
@pytest.mark.parametrize("indices", [[[1, 2], [4, 0]], [[[0], [3]], [[2], [2]]],
                                     [[1, 2, 0], [0, 3, 2]], [0, 1, 1], np.zeros((2, 0), int)])
def test_gather_nd_matches_numpy(sess, indices):
    idx = np.asarray(indices)
    t = tf.gather_nd(tf.constant(P5), idx)
    want = P5[tuple(np.moveaxis(idx, -1, 0))] if idx.shape[-1] else \
        np.broadcast_to(P5, idx.shape[:-1] + P5.shape)
    assert _shape(t) == list(want.shape)
    np.testing.assert_array_equal(sess.run(t), want)


def test_gather_nd_shapes_and_errors(sess):
    q = tf.placeholder(tf.float32, [4, None, 3])
    assert _shape(tf.gather_nd(q, tf.placeholder(tf.int32, [5, 2]))) == [5, 3]
    assert tf.gather_nd(q, tf.placeholder(tf.int32, [5, None])).shape.ndims is None
    assert tf.gather_nd(tf.placeholder(tf.float32),
                        tf.placeholder(tf.int32, [5, 2])).shape.ndims is None
    with pytest.raises(ValueError, match=re_escape(
            "indices.shape[-1] must be <= params.rank, but saw indices shape: [5,4] and "
            "params shape: [4,?,3]")):
        tf.gather_nd(q, tf.placeholder(tf.int32, [5, 4]))
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.gather_nd(q, 1)
    p = tf.placeholder(tf.float64)
    i = tf.placeholder(tf.int32)
    g = tf.gather_nd(p, i)
    x = np.zeros((3, 4))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "indices[1] = [7, 0] does not index into param shape [3,4]")):
        sess.run(g, {p: x, i: [[0, 1], [7, 0]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "indices[1,0] = [-1, 0] does not index into param shape [3,4]")):
        sess.run(g, {p: x, i: [[[0, 1]], [[-1, 0]]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "index innermost dimension length must be <= params rank; saw: 3 vs. 2")):
        sess.run(g, {p: x, i: [[0, 1, 1]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be at least a vector"):
        sess.run(g, {p: x, i: 1})


def test_gather_nd_gradient(graph):
    params = tf.placeholder(tf.float64, [3, 4])
    y = tf.gather_nd(params, [[1, 2], [0, 0], [1, 2]])
    assert compute_gradient_error(params, [3, 4], y, [3]) < 1e-8
    y2 = tf.gather_nd(params, [[2], [2]])
    assert compute_gradient_error(params, [3, 4], y2, [2, 4]) < 1e-8


def test_scatter_nd_adds_duplicates(sess):
    out = tf.scatter_nd([[1], [3], [1]], [1.0, 2.0, 5.0], [5])
    assert _shape(out) == [5]
    np.testing.assert_array_equal(sess.run(out), [0, 6, 0, 2, 0])
    upd = np.arange(12, dtype=np.int32).reshape(2, 2, 3)
    out2 = tf.scatter_nd([[[0, 1], [2, 0]], [[0, 1], [1, 1]]], upd, [3, 2, 3])
    want = np.zeros((3, 2, 3), np.int32)
    np.add.at(want, ([0, 2, 0, 1], [1, 0, 1, 1]), upd.reshape(4, 3))
    v = sess.run(out2)
    np.testing.assert_array_equal(v, want)
    assert v.dtype == np.int32
    out3 = tf.scatter_nd(tf.constant([[1]], tf.int64), [[1.5, 2.5]], tf.constant([2, 2],
                                                                                 tf.int64))
    np.testing.assert_array_equal(sess.run(out3), [[0, 0], [1.5, 2.5]])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex64])
def test_scatter_nd_of_many_rows_adds_repeats_in_index_order(sess, dtype):
    # whole rows, many of them repeated: the sums are those of adding in index order
    rng = np.random.RandomState(5)
    rows = rng.randint(0, 300, size=(2000, 1))
    updates = (rng.randn(2000, 3, 4) * 10.0 ** rng.randint(-4, 4, (2000, 3, 4)))
    updates = updates.astype(dtype)
    want = np.zeros((300, 3, 4), dtype)
    for r, u in zip(rows[:, 0], updates):
        want[r] += u
    got = sess.run(tf.scatter_nd(rows, updates, [300, 3, 4]))
    np.testing.assert_array_equal(got, want)


def test_scatter_nd_of_bools_and_strings(sess):
    # TF's kernel "adds" bools with or and strings by concatenation, in index order
    b = sess.run(tf.scatter_nd([[0], [2], [0]], tf.constant([True, True, False]), [4]))
    np.testing.assert_array_equal(b, [True, False, True, False])
    s = sess.run(tf.scatter_nd([[0], [2], [0]], tf.constant(["a", "c", "b"]), [4]))
    assert s.tolist() == [b"ab", b"", b"c", b""]


def test_scatter_nd_shapes_and_errors(sess):
    P = tf.placeholder
    assert _shape(tf.scatter_nd(P(tf.int32, [5, 1]), P(tf.float32, [5, 3]), [7, 3])) == [7, 3]
    assert _shape(tf.scatter_nd(P(tf.int32, [5, 1]), P(tf.float32, [5, 3]),
                                P(tf.int32, [2]))) == [None, None]
    with pytest.raises(ValueError, match=re_escape(
            "Dimensions [0,1) of indices[shape=[5,1]] = [5] must match dimensions [0,1) of "
            "updates[shape=[4,3]] = [4]")):
        tf.scatter_nd(P(tf.int32, [5, 1]), P(tf.float32, [4, 3]), [7, 3])
    with pytest.raises(ValueError, match=re_escape(
            "Dimensions [1,2) of input[shape=[7,3]] = [3] must match dimensions [1,2) of "
            "updates[shape=[5,2]] = [2]")):
        tf.scatter_nd(P(tf.int32, [5, 1]), P(tf.float32, [5, 2]), [7, 3])
    i = P(tf.int32)
    u = P(tf.float64)
    s = tf.scatter_nd(i, u, [5])
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "indices[1] = [7] does not index into shape [5]")):
        sess.run(s, {i: [[1], [7]], u: [1.0, 2.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "indices[1] = [-1] does not index into shape [5]")):
        sess.run(s, {i: [[1], [-1]], u: [1.0, 2.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of "
            "updates[shape=[3]]")):
        sess.run(s, {i: [[1], [2]], u: [1.0, 2.0, 3.0]})


def test_scatter_nd_gradient(graph):
    upd = tf.placeholder(tf.float64, [3, 2])
    y = tf.scatter_nd([[2], [0], [2]], upd, [4, 2])
    assert compute_gradient_error(upd, [3, 2], y, [4, 2]) < 1e-8


# --- one_hot -----------------------------------------------------------------------------
def _np_one_hot(idx, depth, on, off, axis):
    idx = np.asarray(idx)
    out = np.where(idx[..., None] == np.arange(depth), on, off)
    return np.moveaxis(out, -1, axis) if axis != -1 else out


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_one_hot_matches_numpy(sess, axis):
    idx = np.array([[0, 3, -1], [2, 5, 1]])
    t = tf.one_hot(idx, 4, on_value=7, off_value=-2, axis=axis)
    want = _np_one_hot(idx, 4, 7, -2, axis)
    assert _shape(t) == list(want.shape)
    v = sess.run(t)
    np.testing.assert_array_equal(v, want)
    assert t.dtype == tf.int32 and v.dtype == np.int32


def test_one_hot_dtype_inference(sess):
    iv = tf.placeholder(tf.int32, [None])
    assert tf.one_hot(iv, 3).dtype == tf.float32
    assert tf.one_hot(iv, 3, on_value=5).dtype == tf.int32
    assert tf.one_hot(iv, 3, off_value=-1).dtype == tf.int32
    assert tf.one_hot(iv, 3, on_value=5, dtype=tf.float32).dtype == tf.float32
    assert tf.one_hot(iv, 3, dtype=tf.int64).dtype == tf.int64
    assert tf.one_hot(tf.constant([1], tf.uint8), 3).dtype == tf.float32
    assert tf.one_hot(iv, 3).op.type == "OneHot"
    with pytest.raises(TypeError, match="of on_value does not match dtype <dtype: 'float32'> "
                                        "of off_value"):
        tf.one_hot(iv, 3, on_value=5, off_value=0.0)
    with pytest.raises(TypeError, match="of on_value does not match dtype parameter"):
        tf.one_hot(iv, 3, on_value=tf.constant(5), dtype=tf.float32)
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.one_hot([1.0], 3)
    np.testing.assert_array_equal(sess.run(tf.one_hot([0, -1, 5, 2], 3, dtype=tf.float64)),
                                  _np_one_hot([0, -1, 5, 2], 3, 1.0, 0.0, -1))


def test_one_hot_shapes_and_errors(sess):
    i2 = tf.placeholder(tf.int32, [2, None])
    assert _shape(tf.one_hot(i2, 5, axis=0)) == [5, 2, None]
    assert _shape(tf.one_hot(i2, 5, axis=1)) == [2, 5, None]
    assert _shape(tf.one_hot(i2, tf.placeholder(tf.int32, []))) == [2, None, None]
    with pytest.raises(ValueError, match="axis must be >= -1"):
        tf.one_hot(i2, 5, axis=-2)
    with pytest.raises(ValueError, match="must be non-negative but is -1"):
        tf.one_hot([1], -1)
    depth = tf.placeholder_with_default(-1, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="depth must be non-negative, "
                                                            "got: -1"):
        sess.run(tf.one_hot([0], depth))


# --- where / select ----------------------------------------------------------------------
def test_where_coordinates(sess):
    c = np.array([[0.0, 1.0], [2.0, 0.0]])
    t = tf.where(c)
    assert t.dtype == tf.int64 and _shape(t) == [None, 2]
    np.testing.assert_array_equal(sess.run(t), np.argwhere(c))
    b = np.random.rand(3, 4, 2) > 0.5
    v = sess.run(tf.where(tf.constant(b)))
    np.testing.assert_array_equal(v, np.argwhere(b))
    assert v.dtype == np.int64
    assert _shape(tf.where(tf.placeholder(tf.bool))) == [None, None]
    assert _shape(tf.where_v2(tf.placeholder(tf.bool, [5, 1, 1]))) == [None, 3]


def test_where_select_tf1_semantics(sess):
    x = np.arange(6.0).reshape(3, 2)
    y = -x
    rows = np.array([True, False, True])
    np.testing.assert_array_equal(sess.run(tf.where(rows, x, y)),
                                  np.where(rows[:, None], x, y))
    full = x > 2
    np.testing.assert_array_equal(sess.run(tf.where(full, x, y)), np.where(full, x, y))
    np.testing.assert_array_equal(sess.run(tf.where(tf.constant(False), x, y)), y)
    t = tf.where([True, False], [1, 2], [3, 4])
    assert t.op.type == "Select" and t.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(t), [1, 4])


def test_select_static_shapes_and_errors(graph):
    P = tf.placeholder
    q = P(tf.float32, [4, None, 3])
    assert _shape(tf.where(P(tf.bool, [4]), q, q)) == [4, None, 3]
    assert _shape(tf.where(P(tf.bool, [4, 2, 3]), q, q)) == [4, 2, 3]
    assert _shape(tf.where(P(tf.bool, []), q, q)) == [4, None, 3]
    assert _shape(tf.where(P(tf.bool, [None, 5, 3]), q, P(tf.float32, [None, None, 3]))) \
        == [4, 5, 3]
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are "
                                         "5 and 4"):
        tf.where(P(tf.bool, [5]), q, q)
    with pytest.raises(ValueError, match="Dimension 2 in both shapes must be equal, but are "
                                         "3 and 2"):
        tf.where(P(tf.bool, [4, 2, 2]), q, q)
    with pytest.raises(ValueError, match="Shapes must be equal rank, but are 3 and 1"):
        tf.where(P(tf.bool, []), q, P(tf.float32, [3]))
    with pytest.raises(ValueError, match="x and y must both be non-None or both be None"):
        tf.where(P(tf.bool, [3]), x=q)
    with pytest.raises(TypeError):
        tf.where(P(tf.bool, [4]), [1, 2, 3, 4], [1.5, 2, 3, 4])


def test_select_run_time_errors(sess):
    d = tf.placeholder_with_default
    x = d(np.ones((2, 2)), [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Number of batches of 'then' "
                                                            "must match size of 'cond', but "
                                                            "saw: 2 vs. 3"):
        sess.run(tf.where(d([True, False, True], [None]), x, np.zeros((2, 2))))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "must have the same size and shape.  Input 0: [1,2] != input 1: [2,2]")):
        sess.run(tf.where(d([[True, False]], [None, None]), x, np.zeros((2, 2))))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "'then' and 'else' must have the same size.  but received: [2,2] vs. [2,3]")):
        sess.run(tf.where(d(True, None), x, np.zeros((2, 3))))


def test_where_v2_broadcasts(sess):
    c = np.array([[True], [False], [True]])
    x = np.arange(4.0)
    out = tf.where_v2(c, x, 0.0)
    assert out.op.type == "SelectV2" and _shape(out) == [3, 4]
    np.testing.assert_array_equal(sess.run(out), np.where(c, x, 0.0))
    q = tf.placeholder(tf.float32, [4, None, 3])
    assert _shape(tf.where_v2(tf.placeholder(tf.bool, [4, 1, 1]), q, 0.0)) == [4, None, 3]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 5 and 4"):
        tf.where_v2(tf.placeholder(tf.bool, [5, 1, 1]), q, 0.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re_escape(
            "condition [3], then [2,2], and else [] must be broadcastable")):
        sess.run(tf.where_v2(tf.placeholder_with_default([True, False, True], [None]),
                             tf.placeholder_with_default(np.ones((2, 2)), [None, None]), 0.0))


def test_select_gradients(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    y = tf.constant(np.random.rand(3, 2))
    out = tf.where([True, False, True], x, y)
    assert compute_gradient_error(x, [3, 2], out, [3, 2]) < 1e-8
    out2 = tf.where(np.random.rand(3, 2) > 0.5, y, x)
    assert compute_gradient_error(x, [3, 2], out2, [3, 2]) < 1e-8


def test_select_v2_gradients_unbroadcast(graph):
    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [3, 1])
    c = np.array([[[True, False]], [[False, True]]])  # [2, 1, 2]
    out = tf.where_v2(c, x, y)
    assert _shape(out) == [2, 3, 2]
    assert compute_gradient_error(x, [2], out, [2, 3, 2],
                                  extra_feed_dict={y: np.ones((3, 1))}) < 1e-8
    assert compute_gradient_error(y, [3, 1], out, [2, 3, 2],
                                  extra_feed_dict={x: np.ones(2)}) < 1e-8


# --- boolean_mask ------------------------------------------------------------------------
def test_boolean_mask_matches_numpy(sess):
    x = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    m1 = np.array([True, False])
    m2 = np.array([[True, False, True], [False, False, True]])
    m_ax1 = np.array([False, True, True])
    m_ax1_2d = np.random.rand(3, 4) > 0.5
    outs = sess.run([tf.boolean_mask(x, m1), tf.boolean_mask(x, m2),
                     tf.boolean_mask(x, m_ax1, axis=1), tf.boolean_mask(x, m_ax1_2d, axis=1)])
    np.testing.assert_array_equal(outs[0], x[m1])
    np.testing.assert_array_equal(outs[1], x[m2])
    np.testing.assert_array_equal(outs[2], x[:, m_ax1])
    np.testing.assert_array_equal(outs[3], x[:, m_ax1_2d])


def test_boolean_mask_static_shapes_and_errors(sess):
    P = tf.placeholder
    q = P(tf.float32, [4, None, 3])
    assert _shape(tf.boolean_mask(q, P(tf.bool, [4]))) == [None, None, 3]
    assert _shape(tf.boolean_mask(q, P(tf.bool, [4, None]))) == [None, 3]
    assert _shape(tf.boolean_mask(q, P(tf.bool, [None]), axis=1)) == [4, None, 3]
    assert _shape(tf.boolean_mask(tf.zeros([2, 3, 4, 5]), P(tf.bool, [3, 4]), axis=1)) \
        == [2, None, 5]
    assert tf.boolean_mask(P(tf.float32), P(tf.bool, [3])).shape.ndims is None
    assert tf.boolean_mask(q, P(tf.bool, [4])).name.startswith("boolean_mask")
    with pytest.raises(ValueError, match=re_escape("Shapes (4,) and (5,) are incompatible")):
        tf.boolean_mask(q, P(tf.bool, [5]))
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(q, P(tf.bool, []))
    with pytest.raises(ValueError, match="Number of mask dimensions must be specified"):
        tf.boolean_mask(q, P(tf.bool))
    x = P(tf.float64, [None, None])
    m = P(tf.bool, [None, None])
    v = np.arange(6.0).reshape(2, 3)
    mv = v % 2 == 0
    np.testing.assert_array_equal(sess.run(tf.boolean_mask(x, m), {x: v, m: mv}), v[mv])


def test_boolean_mask_gradient(graph):
    x = tf.placeholder(tf.float64, [4, 2])
    y = tf.boolean_mask(x, [True, False, True, True])
    assert compute_gradient_error(x, [4, 2], y, [3, 2]) < 1e-8


# --- sequence_mask -----------------------------------------------------------------------
def test_sequence_mask(sess):
    lengths = np.array([[1, 3], [0, 2]])
    t = tf.sequence_mask(lengths, 4, dtype=tf.float32)
    assert _shape(t) == [2, 2, 4] and t.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(t), np.arange(4) < lengths[..., None])
    t2 = tf.sequence_mask([1, 3, 2])
    assert _shape(t2) == [3, 3] and t2.dtype == tf.bool
    np.testing.assert_array_equal(sess.run(t2), np.arange(3) < np.array([1, 3, 2])[:, None])
    iv = tf.placeholder(tf.int32, [None])
    assert _shape(tf.sequence_mask(iv, 5)) == [None, 5]
    t3 = tf.sequence_mask(iv)
    assert _shape(t3) == [None, None]
    np.testing.assert_array_equal(sess.run(t3, {iv: [1, 0]}), [[True], [False]])
    np.testing.assert_array_equal(sess.run(tf.sequence_mask([-1, 2])),
                                  [[False, False], [True, True]])
    assert tf.sequence_mask(tf.constant([1, 2], tf.int64), 3).dtype == tf.bool
    with pytest.raises(ValueError, match="must be scalar for sequence_mask"):
        tf.sequence_mask(iv, [3])


# --- unique ------------------------------------------------------------------------------
def test_unique(sess):
    out = tf.unique([4, 1, 4, 2, 1])
    assert type(out).__name__ == "Unique"
    assert _shape(out.y) == [None] and _shape(out.idx) == [5]
    y, idx = sess.run(out)
    np.testing.assert_array_equal(y, [4, 1, 2])
    np.testing.assert_array_equal(idx, [0, 1, 0, 2, 1])
    assert idx.dtype == np.int32
    y, idx, count = sess.run(tf.unique_with_counts(np.array([2.5, -1.0, 2.5, 2.5]),
                                                   out_idx=tf.int64))
    np.testing.assert_array_equal(y, [2.5, -1.0])
    np.testing.assert_array_equal(idx, [0, 1, 0, 0])
    np.testing.assert_array_equal(count, [3, 1])
    assert idx.dtype == np.int64 and count.dtype == np.int64
    s = sess.run(tf.unique(tf.constant([b"b", b"a", b"b"])))
    assert list(s.y) == [b"b", b"a"]
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.unique(tf.placeholder(tf.int32, [2, None]))
    with pytest.raises(TypeError, match="not in list of allowed values: int32, int64"):
        tf.unique([1], out_idx=tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="unique expects a 1D vector"):
        sess.run(tf.unique(tf.placeholder_with_default([[1]], None)))


def test_unique_random_against_numpy(sess):
    v = np.random.randint(0, 20, size=200)
    y, idx = sess.run(tf.unique(v))
    np.testing.assert_array_equal(y[idx], v)
    _, first = np.unique(v, return_index=True)
    np.testing.assert_array_equal(y, v[np.sort(first)])


@pytest.mark.parametrize("low,high,dtype", [(0, 20, np.int32), (-300, 300, np.int64),
                                            (0, 10 ** 9, np.int64), (0, 256, np.uint8),
                                            (-100, 101, np.int8), (-20000, 20000, np.int16),
                                            (-2 ** 63, 2 ** 63 - 1, np.int64),
                                            (0, 2 ** 64 - 1, np.uint64)])
def test_unique_with_counts_of_long_integer_vectors(sess, low, high, dtype):
    # long vectors: one sort of (value, position) keys where they fit in 62 bits, else
    # np.unique (the full int64 and uint64 ranges; repeats drawn in on purpose)
    rs = np.random.RandomState(4)
    v = rs.randint(low, high, size=3000, dtype=np.int64 if dtype != np.uint64 else
                   np.uint64).astype(dtype)
    v[rs.randint(0, 3000, 1000)] = v[rs.randint(0, 3000, 1000)]
    y, idx, count = sess.run(tf.unique_with_counts(v, out_idx=tf.int64))
    first = {}
    for i, x in enumerate(v.tolist()):
        first.setdefault(x, i)
    want = np.array(sorted(first, key=first.get), dtype=dtype)
    np.testing.assert_array_equal(y, want)
    assert y.dtype == dtype and idx.dtype == np.int64
    np.testing.assert_array_equal(y[idx], v)
    np.testing.assert_array_equal(count, [np.sum(v == x) for x in want])

# --- top_k -------------------------------------------------------------------------------


def test_top_k_values_and_stable_ties(sess):
    out = tf.nn.top_k([1.0, 3, 3, 1, 3], 4)
    assert type(out).__name__ == "TopKV2"
    v, i = sess.run(out)
    np.testing.assert_array_equal(v, [3, 3, 3, 1])
    np.testing.assert_array_equal(i, [1, 2, 4, 0])
    assert i.dtype == np.int32 and v.dtype == np.float32
    v, i = sess.run(tf.math.top_k([1.0, np.nan, 3], 3))
    np.testing.assert_array_equal(i, [2, 0, 1])
    x = np.random.randint(-5, 5, size=(3, 4, 10)).astype(np.int64)
    v, i = sess.run(tf.nn.top_k(x, 6))
    want_i = np.argsort(-x, axis=-1, kind="stable")[..., :6]
    np.testing.assert_array_equal(i, want_i)
    np.testing.assert_array_equal(v, np.take_along_axis(x, want_i, -1))
    v, _ = sess.run(tf.nn.top_k(np.array([0, 255, 7], np.uint8), 2))
    np.testing.assert_array_equal(v, [255, 7])


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.uint8])
def test_top_k_of_few_from_long_rows_keeps_tfs_order(sess, dtype):
    # k << n takes the partition path: many ties at the k-th value, NaNs last
    rng = np.random.RandomState(3)
    x = rng.randint(0, 4, size=(5, 3, 90)).astype(dtype)
    if dtype == np.float32:
        x[0, 0, :40] = np.nan
    for k in (1, 4, 11):
        v, i = sess.run(tf.nn.top_k(x, k))
        key = np.where(np.isnan(x.astype(np.float64)), -np.inf, x.astype(np.float64))
        want_i = np.argsort(-key, axis=-1, kind="stable")[..., :k]
        np.testing.assert_array_equal(i, want_i)
        np.testing.assert_array_equal(v, np.take_along_axis(x, want_i, -1))


def test_top_k_shapes_and_errors(sess):
    q = tf.placeholder(tf.float32, [4, None, 3])
    assert [_shape(t) for t in tf.nn.top_k(q, 2)] == [[4, None, 2]] * 2
    assert _shape(tf.nn.top_k(q, tf.placeholder(tf.int32, [])).values) == [4, None, None]
    with pytest.raises(ValueError, match="input must have last dimension >= k = 4 but is 3"):
        tf.nn.top_k(q, 4)
    with pytest.raises(ValueError, match="must be non-negative but is -1"):
        tf.nn.top_k(q, -1)
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.nn.top_k(tf.constant(1.0), 1)
    with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
        tf.nn.top_k(tf.constant([True]), 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input must have at least k "
                                                            "columns. Had 2, needed 3"):
        sess.run(tf.nn.top_k(tf.placeholder_with_default([1.0, 2], [None]), 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need k >= 0, got -1"):
        sess.run(tf.nn.top_k([1.0, 2], tf.placeholder_with_default(-1, [])))


def test_top_k_gradient(graph):
    x = tf.placeholder(tf.float64, [3, 5])
    v = tf.nn.top_k(x, 2).values
    init = np.random.permutation(15).reshape(3, 5).astype(np.float64)
    assert compute_gradient_error(x, [3, 5], v, [3, 2], x_init_value=init) < 1e-8


def test_top_k_gradient_unknown_shape(sess):
    x = tf.placeholder(tf.float64, [None, None])
    v = tf.nn.top_k(x, 2).values
    g = tf.gradients(v, x, grad_ys=tf.constant(np.array([[1.0, 10.0], [2.0, 20.0]])))[0]
    out = sess.run(g, {x: [[1.0, 5.0, 3.0], [9.0, 8.0, 7.0]]})
    np.testing.assert_array_equal(out, [[0, 1, 10], [2, 20, 0]])


# --- exports -----------------------------------------------------------------------------
def test_exports():
    assert tf.newaxis is None
    assert tf.nn.top_k is tf.math.top_k
    assert tf.manip.gather_nd is tf.gather_nd and tf.manip.scatter_nd is tf.scatter_nd
    for name in ["slice", "strided_slice", "gather", "gather_nd", "scatter_nd", "one_hot",
                 "where", "where_v2", "boolean_mask", "sequence_mask", "unique",
                 "unique_with_counts"]:
        assert callable(getattr(tf, name)), name
    assert not hasattr(tf, "top_k")


def test_a_slice_of_a_known_value_is_known_at_build_time(graph):
    """`tf.shape(x)[0]` of a known shape is a constant (TF folds it), so shapes built from
    it are static, and a reshape to the wrong size fails at build time as in TF."""
    x = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    assert tf.zeros(tf.stack([tf.shape(x)[0], 3])).shape.as_list() == [1, 3]
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 4 elements to shape "
                                         r"\[1,2\] \(2 elements\)"):
        tf.reshape(x, tf.stack([tf.shape(x)[0], 2]))
    p = tf.placeholder(tf.float32, [None, 4])
    assert tf.reshape(p, tf.stack([tf.shape(p)[0], 2, 2])).shape.as_list() == [None, 2, 2]
    assert tf.get_static_value(tf.constant([5, 6, 7])[::-2]).tolist() == [7, 5]


def test_top_k_index_type_and_an_int64_k(sess):
    # TF 2.21's TopKV2: indices of `index_type` (int16/int32/int64), k of type Tk
    x = tf.constant([[3.0, 1.0, 2.0, 5.0]])
    for index_type in (tf.int16, tf.int32, tf.int64):
        v, i = tf.math.top_k(x, tf.constant(2, tf.int64), index_type=index_type)
        assert i.dtype == index_type and i.op.get_attr("Tk") == tf.int64
        values, indices = sess.run([v, i])
        assert values.tolist() == [[5.0, 3.0]] and indices.tolist() == [[3, 0]]
        assert indices.dtype == index_type.as_numpy_dtype
    # the gradient scatters through indices of any of those types
    v, _ = tf.nn.top_k(x, 2, index_type=tf.int64)
    (g,) = tf.gradients(tf.reduce_sum(v * [1.0, 10.0]), x)
    assert sess.run(g).tolist() == [[10.0, 0.0, 0.0, 1.0]]
