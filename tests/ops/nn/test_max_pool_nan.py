"""NaN, infinity, tie and padding semantics of the max-pooling ops (ops/nn/pooling_ops.py,
max_pool_tiles.py, pooling_argmax_ops.py, pooling_nd_ops.py), against outputs recorded
from TensorFlow 2.21's CPU kernels.

How the literals were recorded: TF 2.21 with TF_ENABLE_ONEDNN_OPTS=0 (oneDNN's fused
MaxPoolGrad routes NaN windows differently; the plain kernels are TF's reference) and
Grappler off, in compat.v1 graph mode. For each case and dtype, x (below) was pooled
with tf.nn.max_pool / tf.nn.max_pool3d; MaxPoolGrad / MaxPool3DGrad got that output and
dy = 1, 2, ... in NHWC order; MaxPoolGradGrad / MaxPool3DGradGrad got ddx = 1, 2, ... of
x's shape; MaxPoolWithArgmax was run on x and MaxPoolGradWithArgmax on its argmax and dy.
Each output is batch 0 with channels first ([C, H, W] or [C, D, H, W]); values were equal
for float16, bfloat16, float32 and float64 except where TF_3D_BFLOAT16 says. N is NaN, I
infinity, L the dtype's lowest finite value (float32: -3.4028235e38).

What they show: MaxPool ignores NaN and gives L for an all-NaN or all -inf window;
MaxPoolGrad and MaxPoolWithArgmax pick a window's first real cell unless a later cell is
strictly greater (a NaN first cell keeps the window); MaxPoolGradGrad reads the first
cell equal to the pooled value (none for L). MaxPool3D is an Eigen reduction whose
running maximum takes every cell not smaller than it, NaN included (so NaN placement
matters, and padding after a NaN gives L); MaxPool3DGrad feeds every cell within 1e-5
of the maximum (none for NaN or infinite maxima).
"""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.nn.conv_ops import make_window
from tensorweave.ops.nn.max_pool_tiles import max_pool_grad_tiled

# every test runs on the installed kernels (oneDNN's where present) and on NumPy's
pytestmark = pytest.mark.usefixtures("conv_kernels")

N, I = np.nan, np.inf
L = type("Lowest", (), {"__repr__": lambda self: "L"})()  # stands for the dtype's lowest

# x4: [1, 4, 4, 2]; window by window (2x2/2) its channel 0 is [N, 1; 3, N], [1, N; 3, 2],
# all NaN and [5, 5; N, 5]; its channel 1 all -inf, [2, N; I, N], [0, N; 0, 0], [7, 7; 7, N]
X4_C0 = [[N, 1, 1, N], [3, N, 3, 2], [N, N, 5, 5], [N, N, N, 5]]
X4_C1 = [[-I, -I, 2, N], [-I, -I, I, N], [0, N, 7, 7], [0, 0, 7, N]]
X3 = [[N, 2, N], [1, N, 4], [N, 6, N]]  # [1, 3, 3, 1]: SAME windows of one real cell
Y_C0 = [[4, N, 0, 9], [N, 2, 3, N], [6, 6, N, N], [1, N, 2, 2]]
Y_C1 = [[N, -I, N, 2], [5, -I, N, 1], [-I, N, N, 8], [3, 8, 8.000001, 9]]
INPUTS = {
    "x4": np.stack([X4_C0, X4_C1], -1)[None],
    "x3": np.array(X3)[None, :, :, None],
    "x5a": np.stack([X4_C0, X4_C1], -1)[None, None],  # [1, 1, 4, 4, 2]
    "x5b": np.stack([np.stack([X4_C0, X4_C1], -1), np.stack([Y_C0, Y_C1], -1)])[None],
}

TF_2D = {
    ('x4', 2, 2, 'VALID'): {
        'y': [[[3, 3], [L, 5]], [[L, I], [0, 7]]],
        'g': [[[1, 0, 0, 0], [0, 0, 3, 0], [5, 0, 7, 0], [0, 0, 0, 0]],
              [[2, 0, 0, 0], [0, 0, 4, 0], [6, 0, 8, 0], [0, 0, 0, 0]]],
        'gg': [[[9, 13], [0, 21]], [[0, 14], [18, 22]]],
        'ya': [[[N, 3], [N, 5]], [[-I, I], [0, 7]]],
        'am': [[[0, 12], [16, 20]], [[1, 13], [17, 21]]],
        'ga': [[[1, 0, 0, 0], [0, 0, 3, 0], [5, 0, 7, 0], [0, 0, 0, 0]],
               [[2, 0, 0, 0], [0, 0, 4, 0], [6, 0, 8, 0], [0, 0, 0, 0]]],
    },
    ('x4', 3, 1, 'VALID'): {
        'y': [[[5, 5], [5, 5]], [[I, I], [I, I]]],
        'g': [[[1, 0, 0, 0], [0, 7, 0, 0], [0, 0, 8, 0], [0, 0, 0, 0]],
              [[0, 0, 0, 0], [0, 0, 20, 0], [0, 0, 0, 0], [0, 0, 0, 0]]],
        'gg': [[[21, 21], [21, 21]], [[14, 14], [14, 14]]],
        'ya': [[[N, 5], [5, N]], [[I, I], [I, I]]],
        'am': [[[0, 20], [20, 10]], [[13, 13], [13, 13]]],
        'ga': [[[1, 0, 0, 0], [0, 7, 0, 0], [0, 0, 8, 0], [0, 0, 0, 0]],
               [[0, 0, 0, 0], [0, 0, 20, 0], [0, 0, 0, 0], [0, 0, 0, 0]]],
    },
    ('x4', 3, 2, 'SAME'): {
        'y': [[[5, 5], [5, 5]], [[I, I], [7, 7]]],
        'g': [[[1, 0, 0, 0], [0, 0, 0, 0], [5, 0, 10, 0], [0, 0, 0, 0]],
              [[0, 0, 0, 0], [0, 0, 6, 0], [0, 0, 14, 0], [0, 0, 0, 0]]],
        'gg': [[[21, 21], [21, 21]], [[14, 14], [22, 22]]],
        'ya': [[[N, 5], [N, 5]], [[I, I], [7, 7]]],
        'am': [[[0, 20], [16, 20]], [[13, 13], [21, 21]]],
        'ga': [[[1, 0, 0, 0], [0, 0, 0, 0], [5, 0, 10, 0], [0, 0, 0, 0]],
               [[0, 0, 0, 0], [0, 0, 6, 0], [0, 0, 14, 0], [0, 0, 0, 0]]],
    },
    ('x3', 2, 2, 'SAME'): {
        'y': [[[2, 4], [6, L]]],
        'g': [[[1, 0, 2], [0, 0, 0], [3, 0, 4]]],
        'gg': [[[2, 6], [8, 0]]],
        'ya': [[[N, N], [N, N]]],
        'am': [[[0, 2], [6, 8]]],
        'ga': [[[1, 0, 2], [0, 0, 0], [3, 0, 4]]],
    },
    ('x3', 2, 1, 'VALID'): {
        'y': [[[2, 4], [6, 6]]],
        'g': [[[1, 0, 0], [0, 4, 2], [0, 3, 0]]],
        'gg': [[[2, 6], [8, 8]]],
        'ya': [[[N, 4], [6, N]]],
        'am': [[[0, 5], [7, 4]]],
        'ga': [[[1, 0, 0], [0, 4, 2], [0, 3, 0]]],
    },
    ('x3', 3, 2, 'SAME'): {
        'y': [[[2, 4], [6, 6]]],
        'g': [[[1, 0, 0], [0, 4, 2], [0, 3, 0]]],
        'gg': [[[2, 6], [8, 8]]],
        'ya': [[[N, 4], [6, N]]],
        'am': [[[0, 5], [7, 4]]],
        'ga': [[[1, 0, 0], [0, 4, 2], [0, 3, 0]]],
    },
}

TF_3D = {
    ('x5a', (1, 2, 2), (1, 2, 2), 'VALID'): {
        'y': [[[[N, 3], [N, 5]]], [[[-I, N], [0, N]]]],
        'g': [[[[0, 0, 0, 0], [0, 0, 3, 0], [0, 0, 7, 7], [0, 0, 0, 7]]],
              [[[0, 0, 0, 0], [0, 0, 0, 0], [6, 0, 0, 0], [6, 6, 0, 0]]]],
        'gg': [[[[0, 13], [0, 21]]], [[[2, 0], [18, 0]]]],
    },
    ('x5a', (1, 3, 3), (1, 2, 2), 'SAME'): {
        'y': [[[[5, 5], [L, 5]]], [[[7, 7], [7, L]]]],
        'g': [[[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 11, 10], [0, 0, 0, 7]]],
              [[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 12, 4], [0, 0, 6, 0]]]],
        'gg': [[[[21, 21], [0, 21]]], [[[22, 22], [22, 0]]]],
    },
    ('x5b', (2, 2, 2), (1, 2, 2), 'VALID'): {
        'y': [[[[2, N], [N, 2]]], [[[5, 1], [8, 9]]]],
        'g': [[[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
               [[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 7, 7]]],
              [[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
               [[0, 0, 0, 0], [2, 0, 0, 4], [0, 0, 0, 0], [0, 6, 0, 8]]]],
        'gg': [[[[43, 0], [0, 61]]], [[[42, 48], [60, 64]]]],
    },
    ('x5b', (2, 3, 3), (1, 2, 2), 'SAME'): {
        'y': [[[[N, L], [2, 2]], [[L, L], [2, 2]]],
              [[[N, 8], [8.000000953674316, 9]], [[L, 8], [8.000000953674316, 9]]]],
        'g': [[[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
               [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 40, 22]]],
              [[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
               [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 16], [0, 20, 20, 24]]]],
        'gg': [[[[0, 0], [61, 61]], [[0, 0], [61, 61]]],
               [[[0, 56], [62, 64]], [[0, 56], [62, 64]]]],
    },
    ('x5b', (3, 2, 2), (2, 1, 1), 'SAME'): {
        'y': [[[[2, 3, L, L], [6, L, L, L], [L, 2, 2, 2], [L, 2, 5, 5]]],
              [[[5, L, 1, 2], [L, L, 8, 8], [8, 8.000000953674316, 9, 9],
                [8, 8.000000953674316, 9, 9]]]],
        'g': [[[[0, 0, 0, 0], [0, 0, 3, 0], [0, 0, 0, 0], [0, 0, 0, 60]],
               [[0, 0, 0, 0], [0, 1, 3, 0], [9, 9, 0, 0], [0, 0, 67, 44]]],
              [[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
               [[0, 0, 0, 8], [2, 0, 0, 6], [0, 0, 0, 30], [0, 92, 48, 108]]]],
        'gg': [[[[43, 13, 0, 0], [49, 0, 0, 0], [0, 61, 61, 63], [0, 61, 31, 31]]],
               [[[42, 0, 48, 40], [0, 0, 56, 56], [60, 62, 64, 64], [60, 62, 64, 64]]]],
    },
}

TF_3D_BFLOAT16 = {
    ('x5b', (2, 3, 3), (1, 2, 2), 'SAME'): {
        'y': [[[[N, L], [2, 2]], [[L, L], [2, 2]]], [[[N, 8], [8, 9]], [[L, 8], [8, 9]]]],
        'gg': [[[[0, 0], [61, 61]], [[0, 0], [61, 61]]],
               [[[0, 56], [60, 64]], [[0, 56], [60, 64]]]],
    },
    ('x5b', (3, 2, 2), (2, 1, 1), 'SAME'): {
        'y': [[[[2, 3, L, L], [6, L, L, L], [L, 2, 2, 2], [L, 2, 5, 5]]],
              [[[5, L, 1, 2], [L, L, 8, 8], [8, 8, 9, 9], [8, 8, 9, 9]]]],
        'gg': [[[[43, 13, 0, 0], [49, 0, 0, 0], [0, 61, 61, 63], [0, 61, 31, 31]]],
               [[[42, 0, 48, 40], [0, 0, 56, 56], [60, 60, 64, 64], [60, 60, 64, 64]]]],
    },
}

DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
          "float64": np.float64}


def _expected(literal, dtype) -> np.ndarray:
    """The recorded batch-0 channels-first literal as a [1, ..., C] array of `dtype`."""
    lowest = float(tf.as_dtype(dtype).min)
    values = np.vectorize(lambda v: lowest if v is L else float(v), otypes=[np.float64])(
        np.array(literal, dtype=object))
    return np.moveaxis(values, 0, -1)[None]


def _counting(shape, dtype) -> np.ndarray:
    return np.arange(1, 1 + int(np.prod(shape))).reshape(shape).astype(dtype)


def _run(sess, fetches):
    out = sess.run(fetches)
    return {k: np.asarray(v).astype(np.float64) if v.dtype.kind != "i" else v
            for k, v in out.items()}


def _to_first(x, channels_first):
    return np.moveaxis(x, -1, 1) if channels_first else x


def _from_first(x, channels_first):
    return np.moveaxis(x, 1, -1) if channels_first else x


@pytest.mark.parametrize("case", list(TF_2D))
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_max_pool_and_its_gradients_match_tf(sess, case, dtype, data_format):
    name, k, s, padding = case
    np_dtype, nchw = DTYPES[dtype], data_format == "NCHW"
    x = INPUTS[name].astype(np_dtype)
    ksize, strides = ([1, 1, k, k], [1, 1, s, s]) if nchw else ([1, k, k, 1], [1, s, s, 1])
    attrs = dict(ksize=ksize, strides=strides, padding=padding, data_format=data_format)
    xt = tf.constant(_to_first(x, nchw))
    y = tf.nn.max_pool(xt, **attrs)
    dy = _to_first(_counting(_from_first(np.empty(y.shape.as_list()), nchw).shape, np_dtype),
                   nchw)
    ddx = _to_first(_counting(x.shape, np_dtype), nchw)
    got = _run(sess, {
        "y": y,
        "g": tf.raw_ops.MaxPoolGrad(orig_input=xt, orig_output=y, grad=dy, **attrs),
        "gg": tf.raw_ops.MaxPoolGradGrad(orig_input=xt, orig_output=y, grad=ddx, **attrs)})
    for key in ("y", "g", "gg"):
        np.testing.assert_array_equal(_from_first(got[key], nchw),
                                      _expected(TF_2D[case][key], np_dtype), err_msg=key)


@pytest.mark.parametrize("case", list(TF_2D))
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "float64"])
def test_max_pool_with_argmax_and_its_gradient_match_tf(sess, case, dtype):
    name, k, s, padding = case
    x = INPUTS[name].astype(DTYPES[dtype])
    attrs = dict(ksize=[1, k, k, 1], strides=[1, s, s, 1], padding=padding)
    ya, argmax = tf.nn.max_pool_with_argmax(tf.constant(x), **attrs)
    dy = _counting(ya.shape.as_list(), DTYPES[dtype])
    got = _run(sess, {"ya": ya, "am": argmax, "ga": tf.raw_ops.MaxPoolGradWithArgmax(
        input=tf.constant(x), grad=dy, argmax=argmax, **attrs)})
    for key in ("ya", "am", "ga"):
        np.testing.assert_array_equal(got[key], _expected(TF_2D[case][key], np.float64),
                                      err_msg=key)


@pytest.mark.parametrize("case", list(TF_3D))
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])  # TF's CPU kernels' types
@pytest.mark.parametrize("data_format", ["NDHWC", "NCDHW"])
def test_max_pool3d_and_its_gradients_match_tf(sess, case, dtype, data_format):
    name, k, s, padding = case
    np_dtype, ncdhw = DTYPES[dtype], data_format == "NCDHW"
    x = INPUTS[name].astype(np_dtype)
    ksize = [1, 1, *k] if ncdhw else [1, *k, 1]
    strides = [1, 1, *s] if ncdhw else [1, *s, 1]
    attrs = dict(ksize=ksize, strides=strides, padding=padding, data_format=data_format)
    xt = tf.constant(_to_first(x, ncdhw))
    y = tf.nn.max_pool3d(xt, **attrs)
    dy = _to_first(_counting(_from_first(np.empty(y.shape.as_list()), ncdhw).shape,
                             np_dtype), ncdhw)
    ddx = _to_first(_counting(x.shape, np_dtype), ncdhw)
    got = _run(sess, {
        "y": y,
        "g": tf.raw_ops.MaxPool3DGrad(orig_input=xt, orig_output=y, grad=dy, **attrs),
        "gg": tf.raw_ops.MaxPool3DGradGrad(orig_input=xt, orig_output=y, grad=ddx, **attrs)})
    want = dict(TF_3D[case], **(TF_3D_BFLOAT16.get(case, {}) if dtype == "bfloat16" else {}))
    for key in ("y", "g", "gg"):
        np.testing.assert_array_equal(_from_first(got[key], ncdhw),
                                      _expected(want[key], np_dtype), err_msg=key)


def test_tf_gradients_of_max_pool_route_nan_windows_as_tf(sess):
    x = tf.constant(INPUTS["x4"].astype(np.float32))
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    dy = _counting([1, 2, 2, 2], np.float32)
    (dx,) = tf.gradients(y, x, grad_ys=dy)
    np.testing.assert_array_equal(sess.run(dx), _expected(TF_2D["x4", 2, 2, "VALID"]["g"],
                                                          np.float32))


def test_tiled_fast_path_hands_nan_inputs_to_the_general_path():
    x = INPUTS["x4"].astype(np.float32)
    wh = make_window(4, 2, 2, 1, "VALID")
    assert max_pool_grad_tiled(x, _counting([1, 2, 2, 2], np.float32), wh, wh) is None


def test_general_path_routes_infinite_gradients_exactly(sess):
    # a SAME 2x2/2 pool of a 3x3 input goes the general (padded) path; the cells that
    # lose a window must get exactly 0, not inf * 0 = NaN
    x = np.array([[1, 2, 0], [3, 0, 5], [0, 6, 0]], np.float32).reshape(1, 3, 3, 1)
    dy = np.array([[I, -I], [I, 2]], np.float32).reshape(1, 2, 2, 1)
    y = tf.nn.max_pool(tf.constant(x), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    dx = sess.run(tf.raw_ops.MaxPoolGrad(orig_input=tf.constant(x), orig_output=y,
                                         grad=tf.constant(dy), ksize=[1, 2, 2, 1],
                                         strides=[1, 2, 2, 1], padding="SAME"))
    np.testing.assert_array_equal(dx.reshape(3, 3), [[0, 0, 0], [I, 0, -I], [0, I, 2]])
