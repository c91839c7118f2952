"""tf.nn.pool with a dilation rate above 1 (TF's space_to_batch / pool / batch_to_space
composition) against a direct NumPy reference, with numeric gradients, TF's graph and
TF's build-time errors (messages recorded from TF 2.21's tf.compat.v1)."""
import itertools
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def ref_dilated_pool(x, window, rates, kind):
    """Channels-last VALID pooling whose window samples every rates[i]-th position:
    out[b, p, c] = REDUCE_z x[b, p + rates * z, c], by explicit loops."""
    n = x.ndim - 2
    outs = [x.shape[i + 1] - (window[i] - 1) * rates[i] for i in range(n)]
    out = np.zeros((x.shape[0],) + tuple(outs) + (x.shape[-1],), x.dtype)
    for pos in itertools.product(*(range(o) for o in outs)):
        taps = [x[(slice(None),) + tuple(pos[i] + rates[i] * z[i] for i in range(n))]
                for z in itertools.product(*(range(k) for k in window))]
        out[(slice(None),) + pos] = np.max(taps, 0) if kind == "MAX" else np.mean(taps, 0)
    return out


def _first(x):
    """channels-last -> channels-first."""
    return np.moveaxis(x, -1, 1)


# (channels-last input shape, window, rate, channels-last data_format)
CASES = [
    ([2, 8, 8, 3], [2, 2], [2, 2], None),
    ([2, 9, 7, 2], [3, 2], [2, 3], "NHWC"),
    ([2, 9, 7, 2], [3, 2], [1, 3], None),
    ([2, 10, 3], [3], [3], None),
    ([2, 10, 3], [2], [2], "NWC"),
    ([1, 7, 6, 5, 2], [2, 2, 2], [2, 1, 2], None),
    ([1, 7, 6, 5, 2], [2, 3, 2], [3, 2, 1], "NDHWC"),
]
_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


@pytest.mark.parametrize("pooling_type", ["MAX", "AVG"])
@pytest.mark.parametrize("shape,window,rate,fmt", CASES)
@pytest.mark.parametrize("channels_first", [False, True])
def test_dilated_pool_values(sess, shape, window, rate, fmt, pooling_type, channels_first):
    x = np.random.RandomState(1).randn(*shape)
    want = ref_dilated_pool(x, window, rate, pooling_type)
    if channels_first:
        # TF builds these too (its CPU kernels run only channels-last; ours run both)
        y = tf.nn.pool(_first(x), window, pooling_type, "VALID", dilation_rate=rate,
                       data_format=_FIRST[len(window)])
        assert y.shape.as_list() == list(_first(want).shape)
        np.testing.assert_allclose(sess.run(y), _first(want), rtol=1e-12, atol=1e-12)
    else:
        y = tf.nn.pool(x, window, pooling_type, "VALID", dilation_rate=rate,
                       data_format=fmt)
        assert y.shape.as_list() == list(want.shape)
        np.testing.assert_allclose(sess.run(y), want, rtol=1e-12, atol=1e-12)


def test_dilated_pool_graph_is_tfs(sess):
    """TF's graph: SpaceToBatchND -> MaxPool (named by the scope) -> BatchToSpaceND, with
    the paddings computed at build time, and the static shape (2, 6, 6, 3)."""
    x = tf.placeholder(tf.float32, [2, 8, 8, 3])
    y = tf.nn.pool(x, [2, 2], "MAX", padding="VALID", dilation_rate=[2, 2])
    assert y.shape.as_list() == [2, 6, 6, 3]
    assert y.name == "max_pool/BatchToSpaceND:0"
    ops = {op.name: op.type for op in tf.get_default_graph().get_operations()}
    assert ops == {
        "Placeholder": "Placeholder", "max_pool/dilation_rate": "Const",
        "max_pool/required_space_to_batch_paddings/input_shape": "Const",
        "max_pool/required_space_to_batch_paddings/base_paddings": "Const",
        "max_pool/required_space_to_batch_paddings/paddings": "Const",
        "max_pool/required_space_to_batch_paddings/crops": "Const",
        "max_pool/SpaceToBatchND/block_shape": "Const",
        "max_pool/SpaceToBatchND/paddings": "Const",
        "max_pool/SpaceToBatchND": "SpaceToBatchND", "max_pool": "MaxPool",
        "max_pool/BatchToSpaceND/block_shape": "Const",
        "max_pool/BatchToSpaceND/crops": "Const",
        "max_pool/BatchToSpaceND": "BatchToSpaceND"}
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("max_pool/SpaceToBatchND:0").shape.as_list() == [8, 4, 4, 3]
    assert g.get_tensor_by_name("max_pool:0").shape.as_list() == [8, 3, 3, 3]
    xv = np.random.RandomState(2).randn(2, 8, 8, 3).astype(np.float32)
    np.testing.assert_array_equal(sess.run(y, {x: xv}),
                                  ref_dilated_pool(xv, [2, 2], [2, 2], "MAX"))
    # the 1-D pool runs the 2-D op on [N, 1, W, C], as TF does
    z = tf.nn.pool(tf.zeros([2, 8, 3]), [2], "AVG", "VALID", dilation_rate=[3], name="p1")
    assert z.name == "p1/BatchToSpaceND:0" and z.shape.as_list() == [2, 5, 3]
    assert g.get_operation_by_name("p1").type == "AvgPool"
    assert g.get_operation_by_name("p1/ExpandDims").type == "ExpandDims"


def test_dilated_pool_unknown_sizes(sess):
    """Unknown spatial sizes: the paddings are computed at run time; TF's static shape."""
    x = tf.placeholder(tf.float64, [None, None, None, 3])
    y = tf.nn.pool(x, [2, 2], "MAX", padding="VALID", dilation_rate=[2, 3])
    assert y.shape.as_list() == [None, None, None, 3]
    for shape in ([2, 8, 9, 3], [1, 5, 4, 3]):
        xv = np.random.RandomState(3).randn(*shape)
        np.testing.assert_array_equal(sess.run(y, {x: xv}),
                                      ref_dilated_pool(xv, [2, 2], [2, 3], "MAX"))
    u = tf.nn.pool(tf.placeholder(tf.float32), [2, 2], "AVG", "VALID", dilation_rate=[2, 3])
    assert u.shape.ndims == 4 and u.shape.as_list() == [None] * 4


def test_rate_one_is_the_plain_pool(graph):
    y = tf.nn.pool(tf.zeros([1, 5, 5, 2]), [2, 2], "MAX", "SAME", dilation_rate=[1, 1],
                   strides=[2, 2])
    assert y.op.type == "MaxPool" and y.op.name == "max_pool"
    y = tf.nn.pool(tf.zeros([1, 5, 5, 2]), [2, 2], "AVG", "VALID", dilations=[2, 2])
    assert y.op.type == "BatchToSpaceND" and y.shape.as_list() == [1, 3, 3, 2]


@pytest.mark.parametrize("pooling_type", ["MAX", "AVG"])
@pytest.mark.parametrize("shape,window,rate,fmt", [
    ([2, 6, 5, 2], [2, 2], [2, 2], None),
    ([2, 2, 6, 5], [2, 2], [2, 1], "NCHW"),
    ([1, 7, 2], [2], [3], None),
    ([1, 2, 7], [3], [2], "NCW"),
    ([1, 5, 4, 4, 1], [2, 2, 2], [2, 1, 2], None),
    ([1, 1, 5, 4, 4], [2, 2, 2], [1, 2, 2], "NCDHW"),
])
def test_dilated_pool_gradient(graph, shape, window, rate, fmt, pooling_type):
    size = int(np.prod(shape))
    # distinct values spaced far above the delta, so max pooling has no near-ties
    x0 = np.random.RandomState(4).permutation(size).reshape(shape) * 0.1
    x = tf.constant(x0)
    y = tf.nn.pool(x, window, pooling_type, "VALID", dilation_rate=rate, data_format=fmt)
    with tf.Session():
        err = compute_gradient_error(x, shape, y, y.shape.as_list(), x_init_value=x0)
    assert err < 1e-6


# TF 2.21's messages (tf.compat.v1.nn.pool on a [2, 8, 8, 3] float32 placeholder)
@pytest.mark.parametrize("kwargs,message", [
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="SAME", dilation_rate=[2, 2]),
     "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. Received: "
     "padding=SAME and dilation_rate=[2 2]"),
    (dict(window_shape=[2, 2], pooling_type="AVG", padding="SAME", dilation_rate=[2, 1]),
     "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. Received: "
     "padding=SAME and dilation_rate=[2 1]"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID", dilation_rate=[2, 2],
          strides=[2, 1]),
     "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
     "strides=[2 1] and dilation_rate=[2 2]"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="SAME", dilation_rate=[2, 2],
          strides=[2, 1]),
     "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
     "strides=[2 1] and dilation_rate=[2 2]"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID", strides=[3, 1]),
     "`strides` > `window_shape` not supported due to inconsistency between CPU and GPU "
     "implementations. Received: strides=[3 1] and window_shape=[2, 2]"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID", dilation_rate=[0, 1]),
     "all values of `dilation_rate` must be positive. Received: dilation_rate=[0 1]"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID", strides=[0, 1]),
     "all values of `strides` must be positive. Received: strides=[0 1]"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID", dilation_rate=[2]),
     "`len(dilation_rate)` should be 2. Received: dilation_rate=[2] of length 1"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID", strides=[2]),
     "`len(strides)` should be 2. Received: strides=[2] of length 1"),
    (dict(window_shape=[2, 2], pooling_type="MIN", padding="VALID"),
     "2-D MIN pooling is not supported."),
    (dict(window_shape=[2, 2], pooling_type="MIN", padding="VALID", dilation_rate=[2, 2]),
     "2-D MIN pooling is not supported."),
    (dict(window_shape=[2, 2, 2, 2], pooling_type="MAX", padding="VALID"),
     "`len(window_shape)` must be 1, 2, or 3. Received: window_shape=[2, 2, 2, 2] of "
     "length 4"),
    (dict(window_shape=[], pooling_type="MAX", padding="VALID"),
     "`len(window_shape)` must be 1, 2, or 3. Received: window_shape=[] of length 0"),
    (dict(window_shape=[2], pooling_type="MAX", padding="VALID"),
     "Shape (2, 8, 8, 3) must have rank 3"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="FOO", dilation_rate=[2, 2]),
     "`padding` must be one of 'SAME' or 'VALID'. Received: padding=FOO"),
    (dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID", dilations=[2, 2],
          dilation_rate=[2, 2]),
     "Cannot specify both 'dilation_rate' and 'dilations'."),
    (dict(window_shape=[4, 4], pooling_type="MAX", padding="VALID", dilation_rate=[3, 3]),
     "Negative dimension size caused by subtracting 4 from 3"),
])
def test_pool_errors_are_tfs(graph, kwargs, message):
    x = tf.placeholder(tf.float32, [2, 8, 8, 3])
    with pytest.raises(ValueError, match=re.escape(message)):
        tf.nn.pool(x, **kwargs)


def test_pool_1d_data_format_error_is_tfs(graph):
    with pytest.raises(ValueError, match=re.escape(
            "data_format must be either 'NWC' or 'NCW'. Received: data_format=NCHW")):
        tf.nn.pool(tf.placeholder(tf.float32, [2, 3, 8]), [2], "MAX", padding="VALID",
                   dilation_rate=[2], data_format="NCHW")
