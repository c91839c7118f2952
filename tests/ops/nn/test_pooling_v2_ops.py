"""Tests of MaxPoolV2, MaxPoolGradV2 and MaxPoolGradGradV2 (ops/nn/pooling_v2_ops.py):
values against direct NumPy loops and against the attr-based MaxPool ops, static shapes
and errors as TF 2.21 gives them, numeric gradients, and a GraphDef written by TF 2.21
(tests/fixtures/tf1/max_pool_v2.pbtxt, made by make_max_pool_v2_fixture.py).
"""
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

# every test runs on the installed kernels (oneDNN's where present) and on NumPy's
pytestmark = pytest.mark.usefixtures("conv_kernels")

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1")
RAW = tf.raw_ops


def _v2(x, ksize, strides, padding, data_format="NHWC"):
    return RAW.MaxPoolV2(input=x, ksize=ksize, strides=strides, padding=padding,
                         data_format=data_format)


# --- direct-loop references (NHWC, finite values) -----------------------------------------
def _window_starts(size, k, stride, padding):
    """(output size, first input position of each window) of one dimension."""
    if padding == "VALID":
        out = (size - k) // stride + 1
        return out, [o * stride for o in range(out)]
    out = -(-size // stride)
    before = max((out - 1) * stride + k - size, 0) // 2
    return out, [o * stride - before for o in range(out)]


def _cells(shape, k, s, padding):
    """Yields (i, j, [(r, c) of the window's real cells in row-major order])."""
    oh, rows = _window_starts(shape[1], k[0], s[0], padding)
    ow, cols = _window_starts(shape[2], k[1], s[1], padding)
    for i in range(oh):
        for j in range(ow):
            yield i, j, [(r, c) for r in range(rows[i], rows[i] + k[0])
                         for c in range(cols[j], cols[j] + k[1])
                         if 0 <= r < shape[1] and 0 <= c < shape[2]]


def ref_max_pool(x, k, s, padding):
    """(pooled, index of each window's first maximum in the flattened H*W plane)."""
    n, h, w, c = x.shape
    oh, ow = _window_starts(h, k[0], s[0], padding)[0], _window_starts(w, k[1], s[1],
                                                                       padding)[0]
    y, arg = np.zeros((n, oh, ow, c), x.dtype), np.zeros((n, oh, ow, c), np.int64)
    for i, j, cells in _cells(x.shape, k, s, padding):
        values = np.stack([x[:, r, cc] for r, cc in cells])  # [cells, n, c]
        first = values.argmax(0)
        y[:, i, j] = values.max(0)
        arg[:, i, j] = np.array([r * w + cc for r, cc in cells])[first]
    return y, arg


def ref_max_pool_grads(x, dy, ddx, k, s, padding):
    """(MaxPoolGrad, MaxPoolGradGrad): dy scattered to, ddx gathered from, the first
    maximum of each window."""
    n, h, w, c = x.shape
    _, arg = ref_max_pool(x, k, s, padding)
    dx = np.zeros((n, h * w, c), dy.dtype)
    flat_ddx = ddx.reshape(n, h * w, c)
    ddy = np.zeros(dy.shape, ddx.dtype)
    for b in range(n):
        for ch in range(c):
            picked = arg[b, :, :, ch].reshape(-1)
            np.add.at(dx[b, :, ch], picked, dy[b, :, :, ch].reshape(-1))
            ddy[b, :, :, ch] = flat_ddx[b, picked, ch].reshape(dy.shape[1:3])
    return dx.reshape(x.shape), ddy


def _distinct(shape, dtype=np.float64, seed=0):
    """Values with no ties, far enough apart for numeric differentiation."""
    values = np.random.RandomState(seed).permutation(int(np.prod(shape))) * 0.25
    return values.reshape(shape).astype(dtype)


# --- values ---------------------------------------------------------------------------------
CASES = [  # x shape (NHWC), ksize (H, W), strides (H, W), padding
    ((2, 6, 5, 3), (2, 2), (2, 2), "VALID"),
    ((1, 7, 6, 2), (3, 3), (2, 2), "SAME"),
    ((2, 5, 7, 1), (3, 2), (1, 2), "SAME"),
    ((1, 6, 6, 2), (1, 1), (1, 1), "VALID"),
    ((1, 5, 5, 2), (4, 3), (3, 1), "VALID"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape,k,s,padding", CASES)
def test_values_match_direct_loops_and_max_pool_ops(sess, shape, k, s, padding, dtype):
    x = _distinct(shape, dtype)
    ksize, strides = [1, *k, 1], [1, *s, 1]
    y_ref, _ = ref_max_pool(x, k, s, padding)
    dy = _distinct(y_ref.shape, dtype, seed=1)
    ddx = _distinct(shape, dtype, seed=2)
    dx_ref, ddy_ref = ref_max_pool_grads(x, dy, ddx, k, s, padding)
    window = {"ksize": ksize, "strides": strides, "padding": padding}
    xt, yt = tf.constant(x), tf.constant(y_ref)
    v2 = [_v2(xt, ksize, strides, padding),
          RAW.MaxPoolGradV2(orig_input=xt, orig_output=yt, grad=dy, **window),
          RAW.MaxPoolGradGradV2(orig_input=xt, orig_output=yt, grad=ddx, **window)]
    v1 = [RAW.MaxPool(input=xt, **window),
          RAW.MaxPoolGrad(orig_input=xt, orig_output=yt, grad=dy, **window),
          RAW.MaxPoolGradGrad(orig_input=xt, orig_output=yt, grad=ddx, **window)]
    got_v2, got_v1 = sess.run([v2, v1])
    for got, ref in zip(got_v2, (y_ref, dx_ref, ddy_ref)):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, ref)
    for a, b in zip(got_v2, got_v1):
        np.testing.assert_array_equal(a, b)
    assert [t.shape.as_list() for t in v2] == [list(y_ref.shape), list(shape),
                                               list(y_ref.shape)]


def test_nchw_equals_nhwc(sess):
    x = _distinct((2, 7, 6, 3), np.float32)
    nchw = tf.constant(x.transpose(0, 3, 1, 2))
    y = _v2(nchw, [1, 1, 3, 2], [1, 1, 2, 2], "SAME", data_format="NCHW")
    dx = tf.gradients(y, nchw, grad_ys=tf.ones_like(y))[0]
    assert dx.op.type == "MaxPoolGradV2"
    assert y.shape.as_list() == [2, 3, 4, 3]
    got, got_dx = sess.run([y, dx])
    y_ref, _ = ref_max_pool(x, (3, 2), (2, 2), "SAME")
    dx_ref, _ = ref_max_pool_grads(x, np.ones(y_ref.shape, np.float32), x, (3, 2), (2, 2),
                                   "SAME")
    np.testing.assert_array_equal(got, y_ref.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(got_dx, dx_ref.transpose(0, 3, 1, 2))


def test_window_fed_at_run_time(sess):
    x = tf.placeholder(tf.float64, [1, 6, 6, 2])
    ksize, strides = tf.placeholder(tf.int32, [4]), tf.placeholder(tf.int32, [4])
    y = _v2(x, ksize, strides, "SAME")
    dx = tf.gradients(y, x, grad_ys=tf.ones_like(y))[0]
    assert y.shape.ndims is None  # TF infers nothing without the window's values
    assert dx.shape.as_list() == [1, 6, 6, 2]
    x0 = _distinct((1, 6, 6, 2))
    for k, s in (((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (2, 3))):
        got, got_dx = sess.run([y, dx], {x: x0, ksize: [1, *k, 1], strides: [1, *s, 1]})
        y_ref, _ = ref_max_pool(x0, k, s, "SAME")
        np.testing.assert_array_equal(got, y_ref)
        np.testing.assert_array_equal(
            got_dx, ref_max_pool_grads(x0, np.ones(y_ref.shape), x0, k, s, "SAME")[0])


def test_window_of_any_shape_with_four_values_runs_flat(sess):
    # TF's kernels read the window tensors flat; only the shape function checks rank 1
    x0 = _distinct((1, 4, 4, 1))
    k = tf.placeholder(tf.int32)
    got = sess.run(_v2(x0, k, [1, 2, 2, 1], "VALID"), {k: [[1, 2], [2, 1]]})
    np.testing.assert_array_equal(got, ref_max_pool(x0, (2, 2), (2, 2), "VALID")[0])


def test_nan_and_ties_as_max_pool(sess):
    # the V2 ops run MaxPool's kernel bodies: same NaN, infinity and tie routing
    n, i = np.nan, np.inf
    x = np.array([[n, 1, 1, n], [3, n, 3, 2], [n, n, 5, 5], [-i, n, n, i]],
                 np.float32)[None, :, :, None]
    for k, s, padding in (((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"),
                          ((3, 3), (1, 1), "VALID")):
        window = {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": padding}
        y1 = RAW.MaxPool(input=x, **window)
        dy = tf.reshape(tf.range(1.0, 1.0 + tf.cast(tf.size(y1), tf.float32)), tf.shape(y1))
        ddx = np.arange(1, 17, dtype=np.float32).reshape(x.shape)
        v1 = [y1, RAW.MaxPoolGrad(orig_input=x, orig_output=y1, grad=dy, **window),
              RAW.MaxPoolGradGrad(orig_input=x, orig_output=y1, grad=ddx, **window)]
        v2 = [_v2(x, **window),
              RAW.MaxPoolGradV2(orig_input=x, orig_output=y1, grad=dy, **window),
              RAW.MaxPoolGradGradV2(orig_input=x, orig_output=y1, grad=ddx, **window)]
        got_v1, got_v2 = sess.run([v1, v2])
        for a, b in zip(got_v1, got_v2):
            np.testing.assert_array_equal(a, b)
    lowest = np.finfo(np.float32).min  # an all-NaN window gives the lowest finite value
    # 3x3/1 VALID windows: NaN ignored, the last window's maximum is +inf
    np.testing.assert_array_equal(got_v2[0][0, :, :, 0], [[5, 5], [5, i]])
    all_nan = sess.run(_v2(np.full((1, 2, 2, 1), np.nan, np.float32), [1, 2, 2, 1],
                           [1, 1, 1, 1], "VALID"))
    assert all_nan.reshape(-1).tolist() == [lowest]


def test_window_larger_than_input_by_less_than_a_stride_gives_empty_output(sess):
    # as TF at run time (the input's size unknown when building): an empty output
    x = tf.placeholder(tf.float32, [None, None, None, 3])
    x0 = np.arange(2 * 5 * 7 * 3, dtype=np.float32).reshape(2, 5, 7, 3)
    window = {"ksize": [1, 6, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    y1, y2 = RAW.MaxPool(input=x, **window), _v2(x, **window)
    dx = tf.gradients(y2, x)[0]
    avg = RAW.AvgPool(value=x, **window)
    got = sess.run([y1, y2, dx, avg], {x: x0})
    assert [a.shape for a in got] == [(2, 0, 3, 3), (2, 0, 3, 3), (2, 5, 7, 3),
                                      (2, 0, 3, 3)]
    assert not got[2].any()


# --- static shapes and errors (as TF 2.21 gives them) ---------------------------------------
def test_static_shapes_as_tensorflow(graph):
    x = tf.placeholder(tf.float32, [2, 5, 7, 3])
    unknown = tf.placeholder(tf.float32)
    k = tf.placeholder(tf.int32, [4])
    y = tf.placeholder(tf.float32, [2, 2, 3, 3])
    shapes = {
        "valid": (_v2(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [2, 2, 3, 3]),
        "same": (_v2(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"), [2, 3, 4, 3]),
        "nchw": (_v2(x, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", "NCHW"), [2, 5, 3, 1]),
        "depth": (_v2(x, [1, 2, 2, 3], [1, 2, 2, 3], "VALID"), [2, 2, 3, 1]),
        "batch kept": (_v2(x, [2, 2, 2, 1], [2, 2, 2, 1], "VALID"), [2, 2, 3, 3]),
        "batch kept v1": (RAW.MaxPool(input=x, ksize=[2, 2, 2, 1], strides=[2, 2, 2, 1],
                                      padding="VALID"), [2, 2, 3, 3]),
        "unknown dims": (_v2(tf.placeholder(tf.float32, [None, 5, None, 3]), [1, 2, 2, 1],
                             [1, 2, 2, 1], "VALID"), [None, 2, None, 3]),
        "unknown rank": (_v2(unknown, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [None] * 4),
        "fed ksize": (_v2(x, k, [1, 2, 2, 1], "VALID"), None),
        "fed strides": (_v2(x, [1, 2, 2, 1], k, "VALID"), None),
        "grad": (RAW.MaxPoolGradV2(orig_input=x, orig_output=unknown, grad=unknown, ksize=k,
                                   strides=k, padding="VALID"), [2, 5, 7, 3]),
        "grad unknown": (RAW.MaxPoolGradV2(orig_input=unknown, orig_output=y, grad=y,
                                           ksize=k, strides=k, padding="VALID"), [None] * 4),
        "gradgrad": (RAW.MaxPoolGradGradV2(orig_input=x, orig_output=unknown, grad=x,
                                           ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                           padding="VALID"), [2, 2, 3, 3]),
        "gradgrad fed": (RAW.MaxPoolGradGradV2(orig_input=x, orig_output=y, grad=x, ksize=k,
                                               strides=k, padding="VALID"), None),
        # TF checks orig_output against the pooled shape but does not infer from it
        "gradgrad unknown": (RAW.MaxPoolGradGradV2(orig_input=unknown, orig_output=y,
                                                   grad=unknown, ksize=[1, 2, 2, 1],
                                                   strides=[1, 2, 2, 1], padding="VALID"),
                             [None] * 4),
    }
    got = {name: t.shape.as_list() if t.shape.ndims is not None else None
           for name, (t, _) in shapes.items()}
    assert got == {name: want for name, (_, want) in shapes.items()}


def test_build_errors(graph):
    x = tf.placeholder(tf.float32, [2, 5, 7, 3])
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        _v2(tf.placeholder(tf.float32, [2, 5, 7]), tf.placeholder(tf.int32), [1] * 4,
            "VALID")
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        _v2(x, [1, 2, 2], [1, 2, 2, 1], "VALID")
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        _v2(x, [1, 2, 2, 1], tf.placeholder(tf.int32, [3]), "VALID")
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        _v2(x, [[1, 2], [2, 1]], [1, 2, 2, 1], "VALID")
    with pytest.raises(ValueError, match="Stride must be > 0, but got 0"):
        _v2(x, [1, 2, 2, 1], [1, 0, 2, 1], "VALID")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 6 "
                                         "from 5"):
        _v2(x, [1, 6, 2, 1], [1, 2, 2, 1], "VALID")
    with pytest.raises(ValueError, match="Attr 'padding' of 'MaxPoolV2' Op passed string "
                                         "'EXPLICIT' not in"):
        _v2(x, [1, 2, 2, 1], [1, 2, 2, 1], "EXPLICIT")
    with pytest.raises(ValueError, match="incompatible|not compatible"):
        RAW.MaxPoolGradGradV2(orig_input=x, orig_output=tf.placeholder(tf.float32,
                                                                       [2, 3, 3, 3]),
                              grad=x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                              padding="VALID")
    with pytest.raises(TypeError, match="Input 'ksize' of 'MaxPoolV2' Op has type int64"):
        _v2(x, tf.constant([1, 2, 2, 1], tf.int64), [1, 2, 2, 1], "VALID")
    with pytest.raises(TypeError, match="padding"):
        RAW.MaxPoolV2(input=x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1])
    # a nonpositive constant ksize builds (with an unknown shape) and fails at run time
    assert _v2(x, [1, 0, 2, 1], [1, 2, 2, 1], "VALID").shape.ndims is None


RUN_ERRORS = [  # ksize, strides, error class, TF's message
    ([1, 2, 2], [1, 2, 2, 1], tf.errors.InvalidArgumentError,
     "Sliding window ksize field must specify 4 dimensions"),
    ([1, 2, 2, 1], [1, 2, 2, 1, 1], tf.errors.InvalidArgumentError,
     "Sliding window strides field must specify 4 dimensions"),
    ([1, 0, 2, 1], [1, 2, 2, 1], tf.errors.InvalidArgumentError,
     "Sliding window ksize must be positive."),
    ([1, -2, 2, 1], [1, 2, 2, 1], tf.errors.InvalidArgumentError,
     "Sliding window ksize must be positive."),
    ([1, 2, 2, 1], [1, 0, 2, 1], tf.errors.InvalidArgumentError,
     "Stride must be > 0, but got 0"),
    ([2, 2, 2, 1], [1, 2, 2, 1], tf.errors.UnimplementedError,
     "Pooling is not yet supported on the batch dimension."),
]


@pytest.mark.parametrize("op_type", ["MaxPoolV2", "MaxPoolGradV2", "MaxPoolGradGradV2"])
@pytest.mark.parametrize("ksize,strides,error,message", RUN_ERRORS)
def test_run_time_errors(sess, op_type, ksize, strides, error, message):
    x = np.ones((2, 5, 7, 3), np.float32)
    y = np.ones((2, 2, 3, 3), np.float32)
    k, s = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    inputs = {"MaxPoolV2": {"input": x},
              "MaxPoolGradV2": {"orig_input": x, "orig_output": y, "grad": y},
              "MaxPoolGradGradV2": {"orig_input": x, "orig_output": y, "grad": x}}[op_type]
    op = getattr(RAW, op_type)(ksize=k, strides=s, padding="VALID", **inputs)
    with pytest.raises(error, match=message) as info:
        sess.run(op, {k: ksize, s: strides})
    assert info.value.op.type == op_type


def test_tf_nn_max_pool_rejects_a_tensor_window_as_tensorflow(graph):
    # TF 2.21's tf.nn.max_pool/max_pool_v2/max_pool2d never build MaxPoolV2: iterating a
    # graph Tensor window raises (OperatorNotAllowedInGraphError, a TypeError)
    x = tf.placeholder(tf.float32, [1, 4, 4, 1])
    for pool in (tf.nn.max_pool, tf.nn.max_pool_v2, tf.nn.max_pool2d):
        with pytest.raises(TypeError):
            pool(x, tf.constant([1, 2, 2, 1]), [1, 2, 2, 1], "VALID")


# --- gradients ------------------------------------------------------------------------------
def test_numeric_gradients(graph):
    x0 = _distinct((1, 5, 4, 2))
    x = tf.placeholder(tf.float64, [1, 5, 4, 2])
    ksize = tf.placeholder_with_default(tf.constant([1, 3, 2, 1]), [4])  # known at run time
    y = _v2(x, ksize, [1, 2, 1, 1], "SAME")
    err = compute_gradient_error(x, [1, 5, 4, 2], y, [1, 3, 4, 2], x_init_value=x0)
    assert err < 1e-6
    # MaxPoolGradV2 is linear in dy: its numeric Jacobian is checked against the one its
    # gradient, MaxPoolGradGradV2, gives (which has no gradient of its own to check)
    dy = tf.placeholder(tf.float64, [1, 3, 4, 2])
    dx = tf.gradients(y, x, grad_ys=dy)[0]
    assert dx.op.type == "MaxPoolGradV2"
    err = compute_gradient_error(dy, [1, 3, 4, 2], dx, [1, 5, 4, 2],
                                 extra_feed_dict={x: x0})
    assert err < 1e-6
    ddx = tf.placeholder(tf.float64, [1, 5, 4, 2])
    ddy = tf.gradients(dx, dy, grad_ys=ddx)[0]
    assert ddy.op.type == "MaxPoolGradGradV2"
    # each is the other's adjoint: <dx(dy), ddx> == <dy, ddy(ddx)>
    dy0, ddx0 = _distinct((1, 3, 4, 2), seed=3), _distinct((1, 5, 4, 2), seed=4)
    with tf.Session() as sess:
        got_dx, got_ddy = sess.run([dx, ddy], {x: x0, dy: dy0, ddx: ddx0})
    assert np.vdot(got_dx, ddx0) == pytest.approx(np.vdot(dy0, got_ddy), rel=1e-12)


def test_gradient_structure_as_tensorflow(graph):
    x = tf.placeholder(tf.float32, [1, 4, 4, 1])
    ksize, strides = tf.constant([1, 2, 2, 1]), tf.constant([1, 2, 2, 1])
    y = _v2(x, ksize, strides, "VALID")
    dx = tf.gradients(y, x)[0]
    assert [t.name for t in dx.op.inputs[3:]] == [ksize.name, strides.name]
    assert dx.op.get_attr("padding") == b"VALID"
    # the window inputs get no gradient; orig_input and orig_output of the gradient op
    # get zeros
    assert tf.gradients(y, [ksize, strides]) == [None, None]
    dy = tf.placeholder(tf.float32, [1, 2, 2, 1])
    g = tf.gradients(y, x, grad_ys=dy)[0]
    assert tf.gradients(g, ksize) == [None]
    with tf.Session() as sess:
        zero = sess.run(tf.gradients(g, x)[0], {x: np.ones((1, 4, 4, 1)),
                                               dy: np.ones((1, 2, 2, 1))})
    assert zero.shape == (1, 4, 4, 1) and not zero.any()


def test_grad_grad_v2_has_no_gradient_as_tensorflow(graph):
    # TF registers no gradient for MaxPoolGradGradV2: tf.gradients, and so the numeric
    # gradient check, raise LookupError
    x = tf.placeholder(tf.float64, [1, 4, 4, 1])
    ddx = tf.placeholder(tf.float64, [1, 4, 4, 1])
    y = RAW.MaxPoolGradGradV2(orig_input=x, orig_output=_v2(x, [1, 2, 2, 1], [1, 2, 2, 1],
                                                            "VALID"),
                              grad=ddx, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                              padding="VALID")
    message = r"No gradient defined for operation '.*' \(op type: MaxPoolGradGradV2\)"
    with pytest.raises(LookupError, match=message):
        tf.gradients(y, ddx)
    with pytest.raises(LookupError, match=message):
        compute_gradient_error(ddx, [1, 4, 4, 1], y, [1, 2, 2, 1],
                               extra_feed_dict={x: _distinct((1, 4, 4, 1))})


# --- a GraphDef written by TensorFlow 2.21 --------------------------------------------------
# TF's outputs for the fixture's inputs (make_max_pool_v2_fixture.py), channels first:
# window -> (pool, dx, ddy)
N = np.nan
TF_OUTPUTS = {
    (1, 3, 3, 1): (
        [[[34, 38, 36], [30, 24, 36]], [[37, 39, 39], [37, 35, 29]]],
        [[[1, 0, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 0, 16], [7, 9, 0, 0, 0]],
         [[0, 0, 0, 10, 0], [0, 0, 0, 0, 0], [10, 0, 0, 0, 0], [0, 0, 10, 12, 0]]],
        [[[3, 15, 29], [31, 33, 29]], [[22, 8, 8], [22, 36, 38]]]),
    (1, 2, 2, 1): (
        [[[34, 38, 26], [30, 18, 36]], [[27, 39, 33], [37, 35, 23]]],
        [[[1, 0, 0, 0, 0], [0, 0, 3, 0, 5], [0, 0, 0, 0, 11], [7, 0, 9, 0, 0]],
         [[0, 0, 0, 4, 6], [2, 0, 0, 0, 0], [8, 0, 0, 0, 0], [0, 0, 10, 0, 12]]],
        [[[3, 15, 19], [31, 35, 29]], [[12, 8, 10], [22, 36, 40]]]),
}


def _fixture_inputs():
    """The inputs the fixture script recorded TF's outputs for."""
    x = (np.arange(40) * 17 % 40).astype(np.float32).reshape(1, 4, 5, 2)
    x[0, 0, 0, 0] = np.nan  # a NaN first cell keeps its window's gradient
    x[0, 1, 2, 1] = x[0, 1, 1, 1]  # a tie: the first cell wins
    dy = np.arange(1, 13, dtype=np.float32).reshape(1, 2, 3, 2)
    ddx = np.arange(1, 41, dtype=np.float32).reshape(1, 4, 5, 2)
    return x, dy, ddx


def test_graph_def_from_tensorflow_imports_and_runs_as_tf():
    with open(os.path.join(FIXTURES, "max_pool_v2.pbtxt")) as f:
        proto = text_format.Parse(f.read(), graph_pb2.GraphDef())
    assert {"MaxPoolV2", "MaxPoolGradV2", "MaxPoolGradGradV2"} <= {n.op for n in proto.node}
    x, dy, ddx = _fixture_inputs()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(proto, name="")
        pool = g.get_tensor_by_name("pool:0")
        assert pool.op.type == "MaxPoolV2" and pool.shape.ndims is None
        assert g.get_tensor_by_name("dx:0").shape.as_list() == [None, 4, 5, 2]
        fetches = ["pool:0", "dx:0", "ddy:0"]
        with tf.Session() as sess:
            for window, want in TF_OUTPUTS.items():
                feed = {"x:0": x, "dy:0": dy, "ddx:0": ddx}
                if window != (1, 3, 3, 1):  # the default of the ksize placeholder
                    feed["ksize:0"] = list(window)
                got = sess.run(fetches, feed)
                for name, a, b in zip(fetches, got, want):
                    np.testing.assert_array_equal(a.transpose(0, 3, 1, 2)[0], b,
                                                  err_msg="%s %s" % (window, name))
