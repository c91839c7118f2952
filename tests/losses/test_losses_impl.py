"""tf.losses against NumPy: every loss, every reduction, TF1's weight broadcasting,
the LOSSES collection, scope names, dtypes and errors."""
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

R = tf.losses.Reduction
RNG = np.random.RandomState(3)
LAB = RNG.rand(4, 3).astype(np.float32)
PRED = RNG.rand(4, 3).astype(np.float32)
BIN = (RNG.rand(4, 3) > 0.5).astype(np.float32)
W_COL = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)
W_ROW = np.array([[0.0, 1.0, 2.0]], np.float32)
W_FULL = RNG.rand(4, 3).astype(np.float32)


def np_reduce(losses, weights, reduction):
    """NumPy reference of compute_weighted_loss."""
    weights = np.asarray(weights, np.float64)
    weighted = losses.astype(np.float64) * weights
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    if reduction == R.SUM:
        return total
    if reduction == R.MEAN:
        denom = (np.ones_like(losses, np.float64) * weights).sum()
    elif reduction == R.SUM_OVER_BATCH_SIZE:
        denom = losses.size
    else:
        denom = np.count_nonzero(np.broadcast_to(weights, losses.shape))
    return 0.0 if denom == 0 else total / denom


def test_reduction_keys():
    assert R.all() == ("none", "weighted_sum", "weighted_mean",
                       "weighted_sum_over_batch_size", "weighted_sum_by_nonzero_weights",
                       "weighted_sum_by_nonzero_weights")
    assert R.SUM_OVER_NONZERO_WEIGHTS == R.SUM_BY_NONZERO_WEIGHTS
    R.validate(R.MEAN)
    with pytest.raises(ValueError, match="Invalid Reduction Key bad"):
        R.validate("bad")
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        tf.losses.mean_squared_error(LAB, PRED, reduction="bad")


def test_import_from_package():
    from tensorweave.losses import Reduction, log_loss
    assert log_loss is tf.losses.log_loss and Reduction is R
    assert not hasattr(tf, "log_loss") and not hasattr(tf, "get_total_loss")


def test_first_access_by_import_statement():
    """`from tensorweave.losses import ...` as the first access (no tf.losses before)."""
    code = ("from tensorweave.losses import log_loss\n"
            "from tensorweave.metrics import auc\n"
            "import tensorweave as tf\n"
            "assert tf.losses.log_loss is log_loss and tf.metrics.auc is auc\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("reduction", [R.NONE, R.SUM, R.MEAN, R.SUM_OVER_BATCH_SIZE,
                                       R.SUM_BY_NONZERO_WEIGHTS])
@pytest.mark.parametrize("weights", [1.0, 0.0, W_COL, W_ROW, W_FULL, 2],
                         ids=["one", "zero", "col", "row", "full", "int"])
def test_reductions_and_weight_broadcasting(graph, sess, reduction, weights):
    loss = tf.losses.mean_squared_error(LAB, PRED, weights, reduction=reduction)
    expected = np_reduce((PRED.astype(np.float64) - LAB) ** 2, weights, reduction)
    assert loss.dtype == tf.float32
    assert loss.shape.as_list() == ([4, 3] if reduction == R.NONE else [])
    np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-5, atol=1e-7)


def test_default_reduction_counts_nonzero_weights(graph, sess):
    w = np.array([[1.0], [0.0], [0.0], [3.0]], np.float32)
    loss = tf.losses.absolute_difference(LAB, PRED, w)
    expected = (np.abs(PRED - LAB) * w).sum() / 6.0
    np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-6)


def test_each_loss_against_numpy(graph, sess):
    p64, l64, b64 = PRED.astype(np.float64), LAB.astype(np.float64), BIN.astype(np.float64)
    d = p64 - l64
    quad = np.minimum(np.abs(d), 0.7)
    logits = p64 * 4 - 2
    smoothed = b64 * 0.8 + 0.1
    sig_xent = np.maximum(logits, 0) - logits * smoothed + np.log1p(np.exp(-np.abs(logits)))
    soft_logits = p64 * 4
    soft_labels = b64 * 0.9 + 0.1 / 3
    log_sm = soft_logits - np.log(np.exp(soft_logits).sum(1, keepdims=True))
    cases = {
        "abs": (tf.losses.absolute_difference(LAB, PRED, W_COL),
                np_reduce(np.abs(d), W_COL, R.SUM_BY_NONZERO_WEIGHTS)),
        "cos": (tf.losses.cosine_distance(LAB, PRED, axis=1, weights=W_COL),
                np_reduce(1 - (p64 * l64).sum(1, keepdims=True), W_COL,
                          R.SUM_BY_NONZERO_WEIGHTS)),
        "cos_dim": (tf.losses.cosine_distance(LAB, PRED, dim=0),
                    np.mean(1 - (p64 * l64).sum(0))),
        "hinge": (tf.losses.hinge_loss(BIN, PRED * 2 - 1, W_ROW),
                  np_reduce(np.maximum(0, 1 - (2 * b64 - 1) * (p64 * 2 - 1)), W_ROW,
                            R.SUM_BY_NONZERO_WEIGHTS)),
        "huber": (tf.losses.huber_loss(LAB * 3, PRED, W_COL, delta=0.7),
                  np_reduce(0.5 * np.minimum(np.abs(p64 - 3 * l64), 0.7) ** 2
                            + 0.7 * (np.abs(p64 - 3 * l64)
                                     - np.minimum(np.abs(p64 - 3 * l64), 0.7)),
                            W_COL, R.SUM_BY_NONZERO_WEIGHTS)),
        "huber_small": (tf.losses.huber_loss(LAB, PRED, delta=0.7),
                        np.mean(0.5 * quad ** 2 + 0.7 * (np.abs(d) - quad))),
        "log": (tf.losses.log_loss(BIN, PRED, W_ROW, epsilon=1e-3),
                np_reduce(-b64 * np.log(p64 + 1e-3) - (1 - b64) * np.log(1 - p64 + 1e-3),
                          W_ROW, R.SUM_BY_NONZERO_WEIGHTS)),
        "sig": (tf.losses.sigmoid_cross_entropy(BIN, PRED * 4 - 2, W_COL,
                                                label_smoothing=0.2),
                np_reduce(sig_xent, W_COL, R.SUM_BY_NONZERO_WEIGHTS)),
        "soft": (tf.losses.softmax_cross_entropy(BIN, PRED * 4, W_COL[:, 0],
                                                 label_smoothing=0.1),
                 np_reduce(-(soft_labels * log_sm).sum(1), W_COL[:, 0],
                           R.SUM_BY_NONZERO_WEIGHTS)),
    }
    values = sess.run({k: v[0] for k, v in cases.items()})
    for key, (_, expected) in cases.items():
        np.testing.assert_allclose(values[key], expected, rtol=2e-5, err_msg=key)


def np_pairwise(labels, predictions, weights):
    """Mean over pairs (i != j) of ((d_i - d_j)^2), as TF1 defines it per batch entry."""
    total = 0.0
    for b in range(labels.shape[0]):
        d = (predictions[b] - labels[b]).astype(np.float64).ravel()
        n = d.size
        pairs = [(d[i] - d[j]) ** 2 for i in range(n) for j in range(n) if i != j]
        total += np.mean(pairs) * np.ravel(np.broadcast_to(weights, (labels.shape[0], 1)))[b]
    return total


def test_mean_pairwise_squared_error(graph, sess):
    loss = tf.losses.mean_pairwise_squared_error(LAB, PRED, W_COL)
    np.testing.assert_allclose(sess.run(loss), np_pairwise(LAB, PRED, W_COL), rtol=1e-5)
    lab3 = np.stack([LAB, PRED]); pred3 = np.stack([PRED, LAB * 2])
    loss3 = tf.losses.mean_pairwise_squared_error(lab3, pred3)
    np.testing.assert_allclose(sess.run(loss3), np_pairwise(lab3, pred3, 1.0), rtol=1e-5)
    assert loss.name == "mean_pairwise_squared_error/value_2:0"
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss, loss3]
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.losses.mean_pairwise_squared_error(LAB, PRED, W_COL[:, 0])


def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights(graph, sess):
    labels = np.array([[0], [2], [1], [1]])
    loss = tf.losses.sparse_softmax_cross_entropy(labels, PRED, W_COL)
    log_sm = PRED - np.log(np.exp(PRED.astype(np.float64)).sum(1, keepdims=True))
    per_row = -log_sm[np.arange(4), labels[:, 0]]
    np.testing.assert_allclose(sess.run(loss),
                               np_reduce(per_row, W_COL[:, 0], R.SUM_BY_NONZERO_WEIGHTS),
                               rtol=1e-5)
    assert loss.name == "sparse_softmax_cross_entropy_loss/value:0"


def test_sparse_softmax_cross_entropy_dynamic_ranks(graph, sess):
    labels = tf.placeholder(tf.int32, None)
    weights = tf.placeholder(tf.float32, None)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, PRED, weights)
    log_sm = PRED - np.log(np.exp(PRED.astype(np.float64)).sum(1, keepdims=True))
    per_row = -log_sm[np.arange(4), [0, 2, 1, 1]]
    expected = np_reduce(per_row, W_COL[:, 0], R.SUM_BY_NONZERO_WEIGHTS)
    for lab, w in [([[0], [2], [1], [1]], W_COL), ([0, 2, 1, 1], W_COL[:, 0])]:
        np.testing.assert_allclose(sess.run(loss, {labels: lab, weights: w}), expected,
                                   rtol=1e-5)


def test_dtype_of_logits_is_kept(graph, sess):
    loss = tf.losses.softmax_cross_entropy(BIN, (PRED * 4).astype(np.float64))
    assert loss.dtype == tf.float64
    loss16 = tf.losses.sigmoid_cross_entropy(BIN, PRED.astype(np.float16))
    assert loss16.dtype == tf.float16
    assert tf.losses.compute_weighted_loss(tf.constant(PRED, tf.float64)).dtype == tf.float64


def test_scope_names_and_collections(graph):
    a = tf.losses.mean_squared_error(LAB, PRED)
    b = tf.losses.mean_squared_error(LAB, PRED)
    c = tf.losses.log_loss(BIN, PRED, scope="my_loss")
    d = tf.losses.absolute_difference(LAB, PRED, loss_collection=None)
    e = tf.losses.hinge_loss(BIN, PRED, loss_collection="extra", reduction=R.NONE)
    assert a.name == "mean_squared_error/value:0"
    assert b.name == "mean_squared_error_1/value:0"
    assert c.name == "my_loss/value:0"
    assert e.name == "hinge_loss/Mul_2:0" and e.shape.as_list() == [4, 3]
    assert tf.losses.get_losses() == [a, b, c]
    assert tf.losses.get_losses(scope="mean_squared_error_1") == [b]
    assert tf.losses.get_losses(loss_collection="extra") == [e]
    assert d not in tf.get_collection(tf.GraphKeys.LOSSES)


def test_regularization_and_total_loss(graph, sess):
    assert sess.run(tf.losses.get_regularization_loss()) == 0.0
    assert tf.losses.get_regularization_losses() == []
    with pytest.raises(ValueError):
        tf.losses.get_total_loss()
    r1 = tf.constant(0.5, name="reg_a")
    r2 = tf.constant(0.25, name="reg_b")
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, r1)
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, r2)
    loss = tf.losses.absolute_difference(LAB, PRED)
    reg = tf.losses.get_regularization_loss()
    assert reg.name == "total_regularization_loss:0"
    assert tf.losses.get_regularization_losses(scope="reg_b") == [r2]
    total = tf.losses.get_total_loss()
    no_reg = tf.losses.get_total_loss(add_regularization_losses=False, name="plain")
    assert total.name == "total_loss:0" and no_reg.name == "plain:0"
    mae = np.abs(PRED - LAB).mean()
    np.testing.assert_allclose(sess.run([reg, total, no_reg]),
                               [0.75, mae + 0.75, mae], rtol=1e-6)
    tf.losses.add_loss(tf.constant(1.0))
    tf.losses.add_loss(tf.constant(2.0), loss_collection=None)
    assert len(tf.losses.get_losses()) == 2 and tf.losses.get_losses()[0] is loss


def test_static_weight_errors(graph):
    with pytest.raises(ValueError, match=r"weights can not be broadcast to values\. "
                                         r"Mismatch at dim 1"):
        tf.losses.mean_squared_error(LAB, PRED, np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"values\.rank=2\. weights\.rank=1"):
        tf.losses.mean_squared_error(LAB, PRED, np.ones((4,)))
    with pytest.raises(ValueError, match="incompatible"):
        tf.losses.mean_squared_error(LAB, PRED[:, :2])


def test_static_weight_error_messages_are_tf_s(graph):
    # the whole messages, recorded from TF 2.21
    with pytest.raises(ValueError) as e:
        tf.losses.mean_squared_error(LAB, PRED, weights=np.ones((2, 3)))
    assert str(e.value) == (
        "weights can not be broadcast to values. Mismatch at dim 0. values.shape=[4 3], "
        "weights.shape=[2 3]. Received weights=Tensor(\"mean_squared_error/"
        "assert_broadcastable/weights:0\", shape=(2, 3), dtype=float64), values=Tensor("
        "\"mean_squared_error/SquaredDifference:0\", shape=(4, 3), dtype=float32)")
    with pytest.raises(ValueError) as e:
        tf.losses.mean_squared_error(LAB, PRED, weights=np.ones(4))
    assert str(e.value) == (
        "weights can not be broadcast to values. values.rank=2. weights.rank=1. "
        "values.shape=(4, 3). weights.shape=(4,). Received weights=Tensor(\""
        "mean_squared_error_1/assert_broadcastable/weights:0\", shape=(4,), dtype=float64), "
        "values=Tensor(\"mean_squared_error_1/SquaredDifference:0\", shape=(4, 3), "
        "dtype=float32)")


def test_dynamic_weight_errors(graph, sess):
    w = tf.placeholder(tf.float32, None)
    loss = tf.losses.mean_squared_error(LAB, PRED, w)
    np.testing.assert_allclose(sess.run(loss, {w: W_COL}),
                               np_reduce((PRED - LAB) ** 2, W_COL, R.SUM_BY_NONZERO_WEIGHTS),
                               rtol=1e-5)
    for bad in (np.ones((4, 2)), np.ones((4,)), np.ones((1, 4, 3))):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="weights can not be broadcast to values"):
            sess.run(loss, {w: bad})


def test_argument_errors(graph):
    with pytest.raises(ValueError, match="You must specify argument `axis`"):
        tf.losses.cosine_distance(LAB, PRED)
    with pytest.raises(ValueError, match="^Cannot specify both 'dim' and 'axis'.$"):
        tf.losses.cosine_distance(LAB, PRED, axis=1, dim=1)
    with pytest.raises(ValueError, match="Argument `labels` must not be None"):
        tf.losses.mean_pairwise_squared_error(None, PRED)
    with pytest.raises(ValueError, match="Argument `predictions` must not be None"):
        tf.losses.mean_pairwise_squared_error(LAB, None)
    with pytest.raises(ValueError, match="Argument `labels` must not be None"):
        tf.losses.log_loss(None, PRED)
    with pytest.raises(ValueError, match="Argument `logits` must not be None"):
        tf.losses.hinge_loss(BIN, None)
    with pytest.raises(ValueError, match="`multi_class_labels` must not be None"):
        tf.losses.sigmoid_cross_entropy(None, PRED)
    with pytest.raises(ValueError, match="`onehot_labels` must not be None"):
        tf.losses.softmax_cross_entropy(None, PRED)
    with pytest.raises(ValueError):
        tf.losses.softmax_cross_entropy(BIN, PRED[:, :2])


def test_label_smoothing_ops_are_named_as_tf_s(graph):
    tf.losses.softmax_cross_entropy(BIN, PRED, label_smoothing=0.1)
    tf.losses.sigmoid_cross_entropy(BIN, PRED, label_smoothing=0.1)
    names = {op.name for op in graph.get_operations()}
    assert {"softmax_cross_entropy_loss/mul", "softmax_cross_entropy_loss/truediv",
            "softmax_cross_entropy_loss/add", "sigmoid_cross_entropy_loss/mul",
            "sigmoid_cross_entropy_loss/add"} <= names


def test_softmax_gradient_ignores_labels(graph):
    # one-hot labels: the op's gradient (softmax - labels) assumes rows that sum to 1
    logits = tf.placeholder(tf.float64, [4, 3])
    labels = tf.placeholder(tf.float64, [4, 3])
    loss = tf.losses.softmax_cross_entropy(labels, logits, W_COL[:, 0].astype(np.float64),
                                           label_smoothing=0.1)
    assert tf.gradients(loss, labels) == [None]
    x0 = (PRED * 4).astype(np.float64)
    with tf.Session():
        err = compute_gradient_error(logits, [4, 3], loss, [], x_init_value=x0,
                                     extra_feed_dict={labels: np.eye(3)[[0, 2, 1, 1]]})
    # compute_weighted_loss reduces in float32 (as TF1 does), hence the tolerance
    assert err < 1e-3
