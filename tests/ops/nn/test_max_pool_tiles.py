"""The exactly-tiling fast path of MaxPoolGrad (ops/nn/max_pool_tiles.py) against a
direct-loop reference of TF's CPU kernel, and the cases it hands back to the general
path (NaN inputs, padding, overlapping windows)."""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.ops.nn import pooling_ops
from tensorweave.ops.nn.conv_ops import Window
from tensorweave.ops.nn.max_pool_tiles import max_pool_grad_tiled, tiles_exactly

# every test runs on the installed kernels (oneDNN's where present) and on NumPy's
pytestmark = pytest.mark.usefixtures("conv_kernels")


def ref_max_pool_grad(x, dy, k, s, padding):
    """TF's CPU MaxPoolGrad as direct loops (NHWC, NaN-free input): each window's
    gradient goes to its first maximum in row-major order among its real cells;
    overlapping windows accumulate."""
    n, h, w, c = x.shape
    kh, kw = k
    sh, sw = s
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph = max((oh - 1) * sh + kh - h, 0) // 2
        pw = max((ow - 1) * sw + kw - w, 0) // 2
    else:
        oh, ow, ph, pw = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
    dx = np.zeros(x.shape, np.float64)
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    cells = [(r, q) for r in range(i * sh - ph, i * sh - ph + kh)
                             for q in range(j * sw - pw, j * sw - pw + kw)
                             if 0 <= r < h and 0 <= q < w]
                    vals = [x[b, r, q, ch] for r, q in cells]
                    r, q = cells[int(np.argmax(vals))]  # argmax: the first maximum
                    dx[b, r, q, ch] += dy[b, i, j, ch]
    return dx


def _max_pool_grad(sess, x, dy, k, s, padding, data_format="NHWC"):
    """Runs the MaxPoolGrad op (orig_output from MaxPool) on NHWC arrays."""
    to_fmt = (lambda a: a.transpose(0, 3, 1, 2)) if data_format == "NCHW" else (lambda a: a)
    ksize, strides = [1, *k, 1], [1, *s, 1]
    if data_format == "NCHW":
        ksize, strides = [1, 1, *k], [1, 1, *s]
    xt = tf.constant(to_fmt(x))
    y = tf.raw_ops.MaxPool(input=xt, ksize=ksize, strides=strides, padding=padding,
                           data_format=data_format)
    g = tf.raw_ops.MaxPoolGrad(orig_input=xt, orig_output=y, grad=tf.constant(to_fmt(dy)),
                               ksize=ksize, strides=strides, padding=padding,
                               data_format=data_format)
    out = sess.run(g)
    return out.transpose(0, 2, 3, 1) if data_format == "NCHW" else out


def _window(size, k, s, padding="VALID"):
    if padding == "SAME":
        out = -(-size // s)
        pad = max((out - 1) * s + k - size, 0)
        return Window(size, k, s, 1, out, pad // 2, pad - pad // 2)
    return Window(size, k, s, 1, (size - k) // s + 1, 0, 0)


def test_tiles_exactly_only_for_whole_non_overlapping_windows():
    assert tiles_exactly(_window(28, 2, 2), _window(28, 2, 2))
    assert tiles_exactly(_window(28, 2, 2, "SAME"), _window(14, 2, 2, "SAME"))
    assert tiles_exactly(_window(9, 3, 3), _window(4, 1, 1))
    assert not tiles_exactly(_window(5, 2, 2, "SAME"), _window(4, 2, 2))  # padding
    assert not tiles_exactly(_window(5, 2, 2), _window(4, 2, 2))  # a row left over
    assert not tiles_exactly(_window(7, 3, 2), _window(7, 3, 2))  # overlap
    assert not tiles_exactly(_window(4, 1, 1), _window(4, 1, 1))  # a single tap


TILED_CASES = [
    # x shape, window, strides, padding
    ((2, 4, 6, 3), (2, 2), (2, 2), "VALID"),
    ((3, 8, 8, 5), (2, 2), (2, 2), "SAME"),
    ((2, 6, 9, 2), (3, 3), (3, 3), "VALID"),
    ((2, 4, 6, 3), (1, 2), (1, 2), "VALID"),
    ((1, 6, 4, 2), (3, 1), (3, 1), "SAME"),
]


@pytest.mark.parametrize("xs,k,s,padding", TILED_CASES)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_tiled_grad_routes_ties_to_the_first_maximum(sess, xs, k, s, padding, data_format):
    rs = np.random.RandomState(sum(xs))
    x = rs.randint(-1, 2, xs).astype(np.float32)  # three values: ties in most windows
    x[0, :k[0], :k[1]] = 0  # one window of all-equal values
    n, h, w, c = xs
    dy = rs.randn(n, h // s[0], w // s[1], c).astype(np.float32)
    got = _max_pool_grad(sess, x, dy, k, s, padding, data_format)
    np.testing.assert_array_equal(got, ref_max_pool_grad(x, dy, k, s, padding))


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int32, np.uint8])
def test_tiled_grad_dtypes(sess, dtype):
    rs = np.random.RandomState(3)
    x = rs.randint(0, 4, (2, 6, 4, 3)).astype(dtype)
    dy = rs.randint(1, 9, (2, 3, 2, 3)).astype(dtype)
    got = _max_pool_grad(sess, x, dy, (2, 2), (2, 2), "VALID")
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, ref_max_pool_grad(x, dy, (2, 2), (2, 2), "VALID"))


def test_tiled_grad_of_cnn_train_shape(sess):
    # the 2x2/2 SAME pool of bench.py's cnn_train, post-relu input (many tied zeros)
    rs = np.random.RandomState(4)
    x = np.maximum(rs.randn(2, 28, 28, 32), 0).astype(np.float32)
    dy = rs.randn(2, 14, 14, 32).astype(np.float32)
    got = _max_pool_grad(sess, x, dy, (2, 2), (2, 2), "SAME")
    np.testing.assert_array_equal(got, ref_max_pool_grad(x, dy, (2, 2), (2, 2), "SAME"))


def test_tiled_grad_routes_infinite_gradients_exactly(sess):
    # from TF 2.21 (MaxPoolGrad, 2x2/2 VALID): the losing taps of a window with an
    # infinite gradient get exact zeros, not inf * 0 = NaN
    x = np.array([[0, 1, 2, 2], [3, 0, 0, 2], [0, 0, -1, -1], [0, 0, -1, -1]],
                 np.float32).reshape(1, 4, 4, 1)
    dy = np.array([[5, np.inf], [7, -np.inf]], np.float32).reshape(1, 2, 2, 1)
    got = _max_pool_grad(sess, x, dy, (2, 2), (2, 2), "VALID").reshape(4, 4)
    np.testing.assert_array_equal(got, [[0, 0, np.inf, 0], [5, 0, 0, 0],
                                        [7, 0, -np.inf, 0], [0, 0, 0, 0]])
    assert not np.signbit(got[got == 0]).any()


def test_nan_input_is_handed_back_to_the_general_path(sess):
    rs = np.random.RandomState(5)
    x = rs.randint(0, 3, (2, 4, 6, 3)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan  # tap 0 of a window
    x[1, 1, 3, 2] = np.nan  # the last tap of a window
    dy = rs.randn(2, 2, 3, 3).astype(np.float32)
    wh, ww = _window(4, 2, 2), _window(6, 2, 2)
    assert max_pool_grad_tiled(x, dy, wh, ww) is None
    got = _max_pool_grad(sess, x, dy, (2, 2), (2, 2), "VALID")
    np.testing.assert_array_equal(got, pooling_ops._max_pool_grad_nhwc(x, dy, wh, ww))


def test_nan_in_a_later_tap_never_wins(sess):
    # from TF 2.21 (MaxPoolGrad, 2x2/2 VALID): a NaN after the first cell of a window
    # never takes the gradient
    x = np.array([[1, np.nan, 2, 2], [3, 0, np.nan, np.nan], [0, np.nan, -1, -1],
                  [np.nan, 0, np.nan, -1]], np.float32).reshape(1, 4, 4, 1)
    dy = np.array([[5, 6], [7, 8]], np.float32).reshape(1, 2, 2, 1)
    got = _max_pool_grad(sess, x, dy, (2, 2), (2, 2), "VALID").reshape(4, 4)
    np.testing.assert_array_equal(got, [[0, 0, 6, 0], [5, 0, 0, 0], [7, 0, 8, 0],
                                        [0, 0, 0, 0]])


@pytest.mark.parametrize("xs,k,s,padding", [((2, 5, 5, 3), (2, 2), (2, 2), "SAME"),
                                            ((2, 7, 6, 2), (3, 3), (2, 2), "SAME"),
                                            ((1, 5, 4, 2), (2, 2), (2, 2), "VALID")])
def test_padded_overlapping_and_ragged_windows_use_the_general_path(sess, xs, k, s,
                                                                    padding):
    rs = np.random.RandomState(6)
    x = rs.randint(-1, 2, xs).astype(np.float64)
    y_shape = tf.nn.max_pool(tf.constant(x), [1, *k, 1], [1, *s, 1], padding).shape
    dy = rs.randn(*y_shape.as_list())
    got = _max_pool_grad(sess, x, dy, k, s, padding)
    np.testing.assert_allclose(got, ref_max_pool_grad(x, dy, k, s, padding), rtol=1e-12)


def test_bfloat16_uses_the_general_path(sess):
    x = np.array([1, 3, 3, 2], np.float32).reshape(1, 2, 2, 1).astype(ml_dtypes.bfloat16)
    dy = np.array([4], np.float32).reshape(1, 1, 1, 1).astype(ml_dtypes.bfloat16)
    got = _max_pool_grad(sess, x, dy, (2, 2), (2, 2), "VALID")
    np.testing.assert_array_equal(got.astype(np.float32).ravel(), [0, 4, 0, 0])


def test_max_pool_numeric_gradient_through_the_tiled_path(graph):
    x0 = np.random.RandomState(7).permutation(48).reshape(2, 4, 6, 1) * 0.1  # no ties
    with tf.Session(graph=graph):
        x = tf.placeholder(tf.float64, [2, 4, 6, 1])
        y = tf.nn.max_pool(x, 2, 2, "VALID")
        err = compute_gradient_error(x, [2, 4, 6, 1], y, [2, 2, 3, 1], x_init_value=x0)
    assert err < 1e-8, err
