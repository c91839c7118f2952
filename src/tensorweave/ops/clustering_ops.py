"""TF's clustering ops (tensorflow/core/ops/clustering_ops.cc): NearestNeighbors,
KmeansPlusPlusInitialization and KMC2ChainInitialization, with TF's op names, inputs,
static shapes and run-time errors. They back k-means (`estimator/canned/kmeans_graph.py`).

This module is not one of the eagerly loaded families: the k-means library imports it,
and `framework/registry.py` lists it in `_LAZY_OP_MODULES`, so a GraphDef holding these
ops imports before anything touched k-means.

Randomness. TF's kernels seed a Philox generator with the `seed` input on every run, so
one seed always gives one result; these kernels do the same with NumPy's Philox keyed by
the seed. The streams differ from TF's, so the samples differ, their distribution does
not.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape


def _rng(seed) -> np.random.Generator:
    return np.random.Generator(np.random.Philox(key=int(seed) & ((1 << 64) - 1)))


def _fail(ctx, message: str):
    raise errors.InvalidArgumentError(None, ctx.op, message)


def _half_squared_norms(x):
    return 0.5 * (x * x).sum(axis=1)


# --- NearestNeighbors ---------------------------------------------------------------------
register_op("NearestNeighbors", inputs=["points: float32", "centers: float32", "k: int64"],
            outputs=["nearest_center_indices: int64", "nearest_center_distances: float32"],
            shape=lambda op: [unknown_shape(), unknown_shape()])
not_differentiable("NearestNeighbors")


@kernel("NearestNeighbors", cheap=False)
def _nearest_neighbors_kernel(ctx, points, centers, k):
    xp = ctx.xp
    if points.ndim != 2:
        _fail(ctx, "Input points should be a matrix.")
    if centers.ndim != 2:
        _fail(ctx, "Input centers should be a matrix.")
    if k.ndim != 0:
        _fail(ctx, "Input k should be a scalar.")
    if points.shape[0] <= 0:
        _fail(ctx, "Expected points.rows() > 0.")
    if points.shape[1] != centers.shape[1]:
        _fail(ctx, "Expected point_dimensions == center_dimensions: %d vs %d."
              % (points.shape[1], centers.shape[1]))
    if int(k) < 0:
        _fail(ctx, "Expected k >= 0.")
    k = min(centers.shape[0], int(k))
    # TF's arithmetic, in float32: |p - c|^2 = 2 (|p|^2 / 2 + (|c|^2 / 2 - <p, c>))
    partial = _half_squared_norms(centers)[None, :] - points @ centers.T
    order = xp.argsort(partial, axis=1, kind="stable")[:, :k]  # ties: the lower index
    nearest = xp.take_along_axis(partial, order, axis=1)
    distances = (2.0 * (_half_squared_norms(points)[:, None] + nearest)).astype(xp.float32)
    return order.astype(xp.int64), distances


def nearest_neighbors(points, centers, k, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The `k` centers nearest to each point in squared Euclidean distance (TF's
    `gen_clustering_ops.nearest_neighbors`).

    Args:
      points: a float32 matrix [num_points, d].
      centers: a float32 matrix [num_centers, d].
      k: an int64 scalar; min(k, num_centers) neighbours are returned.
      name: op name.

    Returns:
      (indices, distances): int64 and float32 matrices [num_points, min(k, num_centers)],
      nearest first.
    """
    inputs = [convert_to_tensor(points, _dt.float32, name="points"),
              convert_to_tensor(centers, _dt.float32, name="centers"),
              convert_to_tensor(k, _dt.int64, name="k")]
    op = apply_op("NearestNeighbors", inputs, {}, name=name or "NearestNeighbors")
    return op.outputs[0], op.outputs[1]


# --- KmeansPlusPlusInitialization ---------------------------------------------------------
register_op("KmeansPlusPlusInitialization",
            inputs=["points: float32", "num_to_sample: int64", "seed: int64",
                    "num_retries_per_sample: int64"],
            outputs=["samples: float32"], shape=lambda op: unknown_shape())
not_differentiable("KmeansPlusPlusInitialization")


@kernel("KmeansPlusPlusInitialization", cheap=False)
def _kmeans_plus_plus_kernel(ctx, points, num_to_sample, seed, num_retries_per_sample):
    xp = ctx.xp
    if points.ndim != 2:
        _fail(ctx, "Input points should be a matrix.")
    for value, what in ((num_to_sample, "num_to_sample"), (seed, "seed"),
                        (num_retries_per_sample, "num_retries_per_sample")):
        if value.ndim != 0:
            _fail(ctx, "Input %s should be a scalar." % what)
    num_points = points.shape[0]
    num_to_sample = int(num_to_sample)
    retries = int(num_retries_per_sample)
    if retries < 0:
        retries = 2 + int(math.log(num_to_sample)) if num_to_sample > 0 else 2
    if num_points <= 0:
        _fail(ctx, "Expected points.rows() > 0.")
    if num_to_sample <= 0:
        _fail(ctx, "Expected num_to_sample > 0.")
    if num_to_sample > num_points:
        _fail(ctx, "Expected num_to_sample <= points.rows(). %d vs %d."
              % (num_to_sample, num_points))
    rng = _rng(seed)
    half_norms = _half_squared_norms(points)
    min_distances = xp.full([num_points], xp.inf, dtype=xp.float32)
    chosen: list = []

    def draw():
        # the first point uniformly, then with probability proportional to the distance
        # to the nearest chosen point; a point already chosen is drawn again
        while True:
            cumsum = xp.cumsum(min_distances)
            total = float(cumsum[-1])
            if not chosen or not total > 0.0:
                index = int(rng.integers(num_points))
            else:
                u = np.float32(rng.random(dtype=np.float32)) * np.float32(total)
                index = min(int(xp.searchsorted(cumsum, u, side="right")), num_points - 1)
            if index not in chosen:
                return index

    def distances_with(index):
        to_point = half_norms - points @ points[index] + half_norms[index]
        return xp.minimum(min_distances, to_point.astype(xp.float32))

    for _ in range(num_to_sample):
        best_potential, best = math.inf, None
        for _ in range(1 + retries):
            index = draw()
            candidate = distances_with(index)
            potential = float(candidate.sum())
            if best is None or potential < best_potential:
                best_potential, best = potential, (index, candidate)
        chosen.append(best[0])
        min_distances = best[1]
    return points[xp.asarray(chosen, dtype=xp.int64)]


def kmeans_plus_plus_initialization(points, num_to_sample, seed, num_retries_per_sample,
                                    name: Optional[str] = None) -> Tensor:
    """Chooses `num_to_sample` rows of `points` by k-means++ (TF's
    `gen_clustering_ops.kmeans_plus_plus_initialization`).

    Args:
      points: a float32 matrix [num_points, d].
      num_to_sample: an int64 scalar, 0 < num_to_sample <= num_points.
      seed: an int64 scalar; one seed always gives the same rows.
      num_retries_per_sample: an int64 scalar: each sample is the best (lowest
        potential) of 1 + this many draws; negative: 2 + log(num_to_sample).
      name: op name.

    Returns:
      A float32 matrix [num_to_sample, d].
    """
    inputs = [convert_to_tensor(points, _dt.float32, name="points"),
              convert_to_tensor(num_to_sample, _dt.int64, name="num_to_sample"),
              convert_to_tensor(seed, _dt.int64, name="seed"),
              convert_to_tensor(num_retries_per_sample, _dt.int64,
                                name="num_retries_per_sample")]
    return apply_op("KmeansPlusPlusInitialization", inputs, {},
                    name=name or "KmeansPlusPlusInitialization").outputs[0]


# --- KMC2ChainInitialization --------------------------------------------------------------
register_op("KMC2ChainInitialization", inputs=["distances: float32", "seed: int64"],
            outputs=["index: int64"], shape=lambda op: TensorShape([]))
not_differentiable("KMC2ChainInitialization")


@kernel("KMC2ChainInitialization")
def _kmc2_chain_kernel(ctx, distances, seed):
    xp = ctx.xp
    if distances.ndim != 1:
        _fail(ctx, "Input distances should be a vector.")
    if seed.ndim != 0:
        _fail(ctx, "Input seed should be a scalar.")
    if distances.shape[0] <= 0:
        _fail(ctx, "Expected distances_tensor.size() > 0.")
    # one Markov chain over the candidates in order: move to candidate i with
    # probability min(1, d_i / d_current)
    uniforms = _rng(seed).random(distances.shape[0] - 1, dtype=np.float32)
    values = distances.tolist()
    selected = 0
    for i, u in enumerate(uniforms.tolist(), start=1):
        if values[i] > np.float32(u) * np.float32(values[selected]):
            selected = i
    return xp.asarray(selected, dtype=xp.int64)


def kmc2_chain_initialization(distances, seed, name: Optional[str] = None) -> Tensor:
    """Runs one k-MC2 Markov chain over the candidates and returns the index of its last
    state (TF's `gen_clustering_ops.kmc2_chain_initialization`).

    Args:
      distances: a float32 vector: each candidate's squared distance to its nearest
        center so far.
      seed: an int64 scalar.
      name: op name.

    Returns:
      An int64 scalar.
    """
    inputs = [convert_to_tensor(distances, _dt.float32, name="distances"),
              convert_to_tensor(seed, _dt.int64, name="seed")]
    return apply_op("KMC2ChainInitialization", inputs, {},
                    name=name or "KMC2ChainInitialization").outputs[0]
