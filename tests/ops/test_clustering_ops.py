"""NearestNeighbors, KmeansPlusPlusInitialization, KMC2ChainInitialization
(ops/clustering_ops.py): against NumPy and TF 2.15's recorded values."""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import registry
from tensorweave.ops import clustering_ops as ops

X = np.arange(12, dtype=np.float32).reshape(4, 3)
C = np.array([[0, 0, 0], [10, 10, 10], [5, 5, 5]], np.float32)


def test_every_op_is_complete():
    for name in ("NearestNeighbors", "KmeansPlusPlusInitialization", "KMC2ChainInitialization"):
        assert registry.has_kernel(name, "CPU") and registry.has_gradient_entry(name)


def test_nearest_neighbors_matches_tf_and_numpy():
    with tf.Graph().as_default(), tf.Session() as sess:
        idx, dist = sess.run(ops.nearest_neighbors(X, C, 2))
        idx5, dist5 = sess.run(ops.nearest_neighbors(X, C, 5))
    np.testing.assert_array_equal(idx, [[0, 2], [2, 0], [2, 1], [1, 2]])  # TF's
    np.testing.assert_array_equal(dist, [[5, 50], [5, 50], [14, 29], [2, 77]])
    full = ((X[:, None] - C[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(idx5, np.argsort(full, 1, kind="stable"))
    np.testing.assert_allclose(dist5, np.sort(full, 1))


@pytest.mark.parametrize("args,message", [
    ((np.zeros((0, 3), np.float32), C, 1), "Expected points.rows() > 0."),
    ((X, C[:, :2], 1), "Expected point_dimensions == center_dimensions: 3 vs 2."),
    ((X, C, -1), "Expected k >= 0.")])
def test_nearest_neighbors_errors(args, message):
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
            sess.run(ops.nearest_neighbors(*args))


def test_kmeans_plus_plus_draws_distinct_rows_deterministically():
    points = np.random.RandomState(1).randn(20, 3).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        a = sess.run(ops.kmeans_plus_plus_initialization(points, 5, 7, -1))
        b = sess.run(ops.kmeans_plus_plus_initialization(points, 5, 7, -1))
        c = sess.run(ops.kmeans_plus_plus_initialization(points, 20, 7, 0))
        with pytest.raises(tf.errors.InvalidArgumentError, match="20 vs 4"):
            sess.run(ops.kmeans_plus_plus_initialization(X, 20, 1, 2))
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_to_sample > 0"):
            sess.run(ops.kmeans_plus_plus_initialization(X, 0, 1, 2))
    np.testing.assert_array_equal(a, b)
    rows = [int(np.flatnonzero((points == r).all(1))[0]) for r in a]
    assert len(set(rows)) == 5
    assert sorted(map(tuple, c.tolist())) == sorted(map(tuple, points.tolist()))


def test_kmc2_chain():
    with tf.Graph().as_default(), tf.Session() as sess:
        index = ops.kmc2_chain_initialization([0.0, 0.0, 5.0, 0.0], 3)
        assert index.shape == tf.TensorShape([])
        assert sess.run(index) == 2  # zero-distance candidates are never accepted
        with pytest.raises(tf.errors.InvalidArgumentError, match="size\\(\\) > 0"):
            sess.run(ops.kmc2_chain_initialization(np.zeros([0], np.float32), 3))
