"""Matrix structure ops (ops/linalg/matrix_ops): V3 diagonals against a loop reference,
Diag/DiagPart, band_part, cross, eye, matrix_transpose/adjoint, trace."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

ALIGNS = ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]


# --- an independent, loop-based reference of TF's packed-diagonal layout ------------------
def _diag_cells(rows, cols, d):
    """The cells (r, c) of diagonal d from the top left."""
    return [(r, r + d) for r in range(rows) if 0 <= r + d < cols]


def _offset(d, length, max_len, align):
    right = align.split("_")[0 if d >= 0 else 1] == "RIGHT"
    return max_len - length if right else 0


def _ref_diag_part(m, k, align, pad):
    lower, upper = (k, k) if np.isscalar(k) else k
    rows, cols = m.shape
    max_len = max(len(_diag_cells(rows, cols, d)) for d in range(lower, upper + 1))
    out = np.full((upper - lower + 1, max_len), pad, dtype=m.dtype)
    for i, d in enumerate(range(upper, lower - 1, -1)):
        cells = _diag_cells(rows, cols, d)
        off = _offset(d, len(cells), max_len, align)
        for j, (r, c) in enumerate(cells):
            out[i, off + j] = m[r, c]
    return out[0] if lower == upper else out


def _ref_set_diag(m, diag, k, align):
    lower, upper = (k, k) if np.isscalar(k) else k
    diag = diag[None] if lower == upper else diag
    out = m.copy()
    rows, cols = m.shape
    max_len = diag.shape[-1]
    for i, d in enumerate(range(upper, lower - 1, -1)):
        cells = _diag_cells(rows, cols, d)
        off = _offset(d, len(cells), max_len, align)
        for j, (r, c) in enumerate(cells):
            out[r, c] = diag[i, off + j]
    return out


@pytest.mark.parametrize("shape", [(4, 5), (5, 3), (3, 3)])
@pytest.mark.parametrize("k", [0, 1, -2, (-1, 1), (0, 2), (-2, -1), (1, 2)])
@pytest.mark.parametrize("align", ALIGNS)
def test_diag_part_diag_set_diag_match_the_reference(sess, shape, k, align):
    m = np.arange(1.0, shape[0] * shape[1] + 1).reshape(shape)
    part = tf.linalg.diag_part(m, k=k, align=align, padding_value=-1)
    expected = _ref_diag_part(m, k, align, -1)
    assert part.shape.as_list() == list(expected.shape)
    got = sess.run(part)
    np.testing.assert_array_equal(got, expected)
    rebuilt = tf.linalg.diag(got, k=k, num_rows=shape[0], num_cols=shape[1], align=align,
                             padding_value=-7)
    assert rebuilt.shape.as_list() == list(shape)
    np.testing.assert_array_equal(sess.run(rebuilt),
                                  _ref_set_diag(np.full(shape, -7.0), got, k, align))
    set_ = tf.linalg.set_diag(m, got * 10, k=k, align=align)
    np.testing.assert_array_equal(sess.run(set_), _ref_set_diag(m, got * 10, k, align))


def test_diag_ops_are_batched_and_typed(sess):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    part = tf.linalg.diag_part(x)
    assert part.op.type == "MatrixDiagPartV3" and part.op.name == "diag_part"
    assert part.dtype == tf.int32 and part.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(sess.run(part), np.diagonal(x, axis1=1, axis2=2))
    d = tf.linalg.diag(tf.constant([[1, 2], [3, 4]]))
    assert d.op.type == "MatrixDiagV3" and d.shape.as_list() == [2, 2, 2]
    np.testing.assert_array_equal(sess.run(d), [np.diag([1, 2]), np.diag([3, 4])])
    assert tf.matrix_diag is tf.linalg.diag and tf.matrix_diag_part is tf.linalg.diag_part
    assert tf.matrix_set_diag is tf.linalg.set_diag


def test_diag_static_shapes(graph):
    assert tf.linalg.diag(tf.placeholder(tf.float32, [4, 2, 3]),
                          k=(-1, 0)).shape.as_list() == [4, 3, 3]
    assert tf.linalg.diag(tf.placeholder(tf.float32, [4, 3]), k=1,
                          num_rows=5).shape.as_list() == [4, 5, 4]
    assert tf.linalg.diag_part(tf.placeholder(tf.float32, [4, 3, 5]),
                               k=(-1, 2)).shape.as_list() == [4, 4, 3]
    assert tf.linalg.diag_part(tf.placeholder(tf.float32, [None, 3, 4])).shape.as_list() \
        == [None, 3]
    assert tf.linalg.diag(tf.placeholder(tf.float32, [None, None])).shape.as_list() == \
        [None, None, None]
    assert tf.linalg.diag(tf.placeholder(tf.float32)).shape.ndims is None
    assert tf.linalg.set_diag(tf.placeholder(tf.float32, [None, 3, 4]),
                              tf.placeholder(tf.float32, [5, None])).shape.as_list() == \
        [5, 3, 4]
    assert tf.linalg.diag_part(tf.ones([3, 3]), k=tf.placeholder(tf.int32)).shape.ndims \
        is None


def test_diag_errors(sess):
    with pytest.raises(ValueError, match="num_rows is too small"):
        tf.linalg.diag(tf.ones([2, 2]), k=(0, 1), num_rows=1)
    with pytest.raises(ValueError, match="doesn't match the number of diagonals"):
        tf.linalg.diag(tf.ones([2, 3]), k=(0, 2))
    with pytest.raises(ValueError, match="lower_diag_index is greater"):
        tf.linalg.diag_part(tf.ones([3, 4]), k=(1, -1))
    with pytest.raises(ValueError, match="Attr 'align' of 'MatrixDiagV3'"):
        tf.linalg.diag(tf.ones([2]), align="FOO")
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.linalg.diag_part(tf.ones([3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="longests diagonal"):
        sess.run(tf.linalg.set_diag(tf.ones([2, 3]), tf.ones([3])))
    k = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must not be larger"):
        sess.run(tf.linalg.diag_part(tf.ones([3, 3]), k=k), {k: [1, 0]})


@pytest.mark.parametrize("build,shapes", [
    (lambda d: tf.linalg.diag(d, k=(-1, 1), align="LEFT_RIGHT"), [(2, 3, 3)]),
    (lambda x: tf.linalg.diag_part(x, k=(-1, 0)), [(2, 3, 4)]),
    (lambda x, d: tf.linalg.set_diag(x, d, k=1), [(2, 3, 4), (2, 3)]),
    (tf.diag, [(2, 3)]), (tf.diag_part, [(2, 3, 2, 3)]),
    (lambda x: tf.linalg.band_part(x, 1, 0), [(2, 3, 3)]),
    (tf.linalg.trace, [(2, 3, 4)]),
    (tf.linalg.cross, [(2, 3), (2, 3)]),
    (lambda x: tf.linalg.matrix_transpose(x), [(2, 3, 4)])])
def test_gradients(graph, build, shapes):
    values = [np.random.randn(*s) for s in shapes]
    xs = [tf.placeholder(tf.float64, s) for s in shapes]
    y = build(*xs)
    err = compute_gradient_error(xs if len(xs) > 1 else xs[0],
                                 [list(s) for s in shapes] if len(xs) > 1 else list(shapes[0]),
                                 y, y.shape.as_list(),
                                 x_init_value=values if len(xs) > 1 else values[0])
    assert err < 1e-6


def test_tensor_diag_and_diag_part(sess):
    d0 = np.arange(1.0, 7.0).reshape(2, 3)
    d = tf.diag(d0)
    assert d.op.type == "Diag" and d.shape.as_list() == [2, 3, 2, 3]
    out = sess.run(d)
    assert out[1, 2, 1, 2] == 6.0 and out[0, 1, 1, 1] == 0.0 and out.sum() == d0.sum()
    back = tf.diag_part(out)
    assert back.op.type == "DiagPart" and back.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(sess.run(back), d0)
    assert tf.linalg.tensor_diag is tf.diag and tf.linalg.tensor_diag_part is tf.diag_part
    with pytest.raises(ValueError, match="even rank"):
        tf.diag_part(tf.ones([2, 3, 2]))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.diag_part(tf.ones([2, 3]))


@pytest.mark.parametrize("lower,upper", [(0, 0), (1, 0), (0, -1), (-1, 1), (2, 3)])
def test_band_part(sess, lower, upper):
    x0 = np.random.randn(2, 3, 4).astype(np.float32)
    y = tf.linalg.band_part(x0, lower, upper)
    assert y.op.type == "MatrixBandPart" and y.dtype == tf.float32
    r, c = np.arange(3)[:, None], np.arange(4)[None, :]
    keep = ((lower < 0) | (r - c <= lower)) & ((upper < 0) | (c - r <= upper))
    np.testing.assert_array_equal(sess.run(y), np.where(keep, x0, 0))
    assert tf.matrix_band_part is tf.linalg.band_part


def test_band_part_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"num_lower must be negative or less or equal to number of "
                             r"rows \(2\) got: 3"):
        sess.run(tf.linalg.band_part(tf.ones([2, 2]), 3, 0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_upper"):
        sess.run(tf.linalg.band_part(tf.ones([2, 2]), 0, 3))
    with pytest.raises(ValueError, match="rank"):
        tf.linalg.band_part(tf.ones([2]), 0, 0)


def test_cross(sess):
    a0, b0 = np.random.randn(4, 3), np.random.randn(4, 3)
    y = tf.linalg.cross(a0, b0)
    assert y.op.type == "Cross" and tf.cross is tf.linalg.cross
    np.testing.assert_allclose(sess.run(y), np.cross(a0, b0))
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.linalg.cross(tf.ones([2]), tf.ones([2]))
    a = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.FailedPreconditionError, match="3-element vectors"):
        sess.run(tf.linalg.cross(a, a), {a: [1.0, 2.0]})


def test_eye(sess):
    e = tf.eye(3)
    assert e.op.name == "eye/diag" and e.dtype == tf.float32 and e.shape.as_list() == [3, 3]
    np.testing.assert_array_equal(sess.run(e), np.eye(3))
    e = tf.linalg.eye(2, 3, batch_shape=[4], dtype=tf.int32)
    assert e.shape.as_list() == [4, 2, 3] and e.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(e), np.broadcast_to(np.eye(2, 3), (4, 2, 3)))
    n = tf.placeholder(tf.int32, [])
    np.testing.assert_array_equal(sess.run(tf.eye(n, 2), {n: 3}), np.eye(3, 2))
    # a batch_shape list may hold a tensor (TF 2.21's static shape: [None, 3, 3])
    b = tf.eye(3, batch_shape=[n])
    assert b.shape.as_list() == [None, 3, 3]
    np.testing.assert_array_equal(sess.run(b, {n: 2}), np.broadcast_to(np.eye(3), (2, 3, 3)))


def test_matrix_transpose_and_adjoint(sess):
    x0 = (np.random.randn(2, 3, 4) + 1j * np.random.randn(2, 3, 4)).astype(np.complex64)
    t = tf.linalg.matrix_transpose(x0)
    assert t.op.name == "matrix_transpose/transpose" and t.shape.as_list() == [2, 4, 3]
    np.testing.assert_array_equal(sess.run(t), np.swapaxes(x0, 1, 2))
    adj = tf.linalg.adjoint(x0)
    assert adj.op.name == "adjoint/matrix_transpose/transpose"
    np.testing.assert_array_equal(sess.run(adj), np.conj(np.swapaxes(x0, 1, 2)))
    p = tf.placeholder(tf.float32)
    np.testing.assert_array_equal(sess.run(tf.linalg.transpose(p), {p: np.ones((1, 2, 3))}),
                                  np.ones((1, 3, 2)))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.linalg.matrix_transpose(tf.ones([3]))
    assert tf.matrix_transpose is tf.linalg.matrix_transpose


def test_trace(sess):
    x0 = np.random.randn(2, 3, 4)
    y = tf.linalg.trace(x0)
    assert y.op.name == "Trace" and y.op.type == "Sum" and y.shape.as_list() == [2]
    np.testing.assert_allclose(sess.run(y), np.trace(x0, axis1=1, axis2=2))
    assert tf.trace is tf.linalg.trace


def test_set_diag_of_unknown_rank_input_takes_batch_dims_from_the_diagonal(sess):
    # TF 2.21's static shapes: the diagonal's batch dims, then two unknown dims
    x = tf.placeholder(tf.float32)
    assert tf.matrix_set_diag(x, tf.ones([2, 3])).shape.as_list() == [2, None, None]
    assert tf.linalg.set_diag(x, tf.ones([2, 2, 3]), k=(0, 1)).shape.as_list() == \
        [2, None, None]
    got = sess.run(tf.matrix_set_diag(x, tf.ones([2, 3])), {x: np.zeros((2, 3, 4))})
    np.testing.assert_array_equal(got, np.broadcast_to(np.eye(3, 4), (2, 3, 4)))
