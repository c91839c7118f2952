"""Stochastic dual coordinate ascent for linear models: SdcaOptimizer (and V2, which
names its attr `adaptive` instead of `adaptative`), SdcaFprint and SdcaShrinkL1, with TF's
op names, inputs, attrs, shapes and errors (`tf.train.sdca_optimizer`, `sdca_fprint`,
`sdca_shrink_l1`).

One call of the optimizer is one pass of dual coordinate ascent over the mini-batch.
Every example i has a dual variable a_i (column 0 of its row of `example_state_data`);
visiting it computes w.x_i with the weights as updated so far in this call (nominal +
num_loss_partitions * delta, each shrunk by l1 / l2), solves the loss's one-dimensional
dual problem for the new a_i, and adds (new a_i - a_i) * weight_i / l2 * x_i to the
deltas. The op returns the deltas and the new state rows [dual, primal loss (of the
nominal weights), dual loss (of the old dual), example weight].

Order. TF's kernel visits the examples in a random permutation (std::random_device,
so not reproducible), or with `adaptive` in an order sampled by the examples' duality
gaps, split over worker threads that share one counter into that order and race on the
deltas. Run on one thread, it is the sequential pass in that order, which is what this
kernel does: the order is drawn the same way from NumPy's generator. Examples that share
no feature give the same result in any order; otherwise one pass depends on the order, in
TF as here, and repeated passes converge to the same optimum. The visit itself is a
Python loop (each visit depends on the previous ones); everything that does not depend on
the order (the example norms, the nominal predictions, the losses) is computed for the
whole batch with NumPy.

TF's adaptive sampler, when it runs out of retries, leaves the remaining slots of its
order at example 0 (it writes the unseen examples into its counts, not its order), so
those examples are not visited and example 0 is visited again; this kernel does the same.
"""
from __future__ import annotations

import math
from typing import List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.runtime import determinism as _determinism

_LOSS_TYPES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss",
               "poisson_loss")
_NEWTON_STEPS = 10  # TF's: Newton converges quadratically


# --- the losses: TF's DualLossUpdater classes, one row each -------------------------------
# Scalar functions run once per visit (Python floats: faster than NumPy scalars); the
# `*_all` functions run on the whole batch (float64 arrays).

def _logistic_dual(nlp, y, w, dual, wx, norm):
    # Newton on x with new dual = (1 + tanh x) / (2 y) (TF's readme.md)
    c = nlp * norm * w
    x = 0.0
    for _ in range(_NEWTON_STEPS):
        t = math.tanh(x)
        num = -2 * y * x - wx - c * (0.5 * (1 + t) / y - dual)
        den = -2 * y - c * (1 - t * t) * 0.5 / y
        x -= num / den
    return 0.5 * (1 + math.tanh(x)) / y


def _squared_dual(nlp, y, w, dual, wx, norm):
    return dual + (y - dual - wx) / (1 + nlp * norm * w)


def _clip_dual(y, candidate):
    if y * candidate < 0:
        return 0.0
    if y * candidate > 1.0:
        return y
    return candidate


def _hinge_dual(nlp, y, w, dual, wx, norm):
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = np.float64(nlp * w) * norm  # 0 for an empty example: inf, as TF
        return _clip_dual(y, float(dual + np.float64(y - wx) / denominator))


def _smooth_hinge_dual(nlp, y, w, dual, wx, norm):
    gamma = 1.0
    return _clip_dual(y, dual + (y - wx - gamma * dual) / (nlp * w * norm + gamma))


def _exp(x):
    return math.exp(x) if x < 709.0 else math.inf


def _poisson_dual(nlp, y, w, dual, wx, norm):
    c = nlp * norm * w
    x = math.log(y - dual) if y - dual > 0 else 0.0
    for _ in range(_NEWTON_STEPS):
        e = _exp(x)
        x -= (x - wx - c * (y - dual - e)) / (1 + c * e)
    return y - _exp(x)


def _logistic_primal_all(wx, y, w):
    ywx = y * wx
    return np.where(ywx > 0, np.log1p(np.exp(-np.abs(ywx))),
                    np.log1p(np.exp(-np.abs(ywx))) - np.minimum(ywx, 0)) * w


def _logistic_dual_loss_all(a, y, w):
    ay = a * y
    log_ay = np.log(np.where(ay > 0, ay, 1.0))
    rest = 1 - ay
    log_rest = np.log(np.where(rest > 0, rest, 1.0))
    return (ay * log_ay + rest * log_rest) * w


def _logistic_derivative_all(wx, y):
    ywx = y * wx
    e = np.exp(-np.abs(ywx))
    inverse = np.where(ywx > 0, e / (1 + e), 1 / (1 + np.exp(np.minimum(ywx, 0))))
    return -inverse * y


_DBL_MAX = np.finfo(np.float64).max


def _hinge_dual_loss_all(a, y, w, gamma=None):
    ya = a * y
    value = -ya * w if gamma is None else (-ya + 0.5 * gamma * a * a) * w
    return np.where((ya < 0) | (ya > 1.0), _DBL_MAX, value)


def _smooth_hinge_primal_all(wx, y, w):
    ywx = y * wx
    return np.where(ywx >= 1, 0.0, np.where(ywx <= 0.0, (0.5 - ywx) * w,
                                              (1 - ywx) * (1 - ywx) * w * 0.5))


def _smooth_hinge_derivative_all(wx, y):
    ywx = y * wx
    return np.where(ywx >= 1, 0.0, np.where(ywx <= 0.0, -y, wx - y))


def _poisson_dual_loss_all(a, y, w):
    rest = y - a
    safe = np.where(rest > 0, rest, 1.0)
    return np.where(rest == 0, 0.0, np.where(rest < 0, _DBL_MAX,
                                             rest * (np.log(safe) - 1) * w))


class _Loss:
    """One loss: its dual update (scalar), primal loss, dual loss and derivative
    (arrays), smoothness constant, and whether labels are 0/1 classes (-> -1/1)."""

    def __init__(self, dual, primal, dual_loss, derivative, smoothness, binary):
        self.dual, self.primal, self.dual_loss = dual, primal, dual_loss
        self.derivative, self.smoothness, self.binary = derivative, smoothness, binary


_LOSSES = {
    "logistic_loss": _Loss(_logistic_dual, _logistic_primal_all, _logistic_dual_loss_all,
                           _logistic_derivative_all, 4.0, True),
    "squared_loss": _Loss(_squared_dual, lambda wx, y, w: (wx - y) ** 2 * w * 0.5,
                          lambda a, y, w: a * (0.5 * a - y) * w,
                          lambda wx, y: wx - y, 1.0, False),
    "hinge_loss": _Loss(_hinge_dual, lambda wx, y, w: np.maximum(0.0, 1 - y * wx) * w,
                        _hinge_dual_loss_all, lambda wx, y: np.where(y * wx < 1, -y, 0.0),
                        0.0, True),
    "smooth_hinge_loss": _Loss(_smooth_hinge_dual, _smooth_hinge_primal_all,
                               lambda a, y, w: _hinge_dual_loss_all(a, y, w, 1.0),
                               _smooth_hinge_derivative_all, 1.0, True),
    "poisson_loss": _Loss(_poisson_dual, lambda wx, y, w: (np.exp(wx) - wx * y) * w,
                          _poisson_dual_loss_all, lambda wx, y: np.exp(wx) - y, 1.0, False),
}


def _convert_labels(ctx, loss: _Loss, loss_type: str, labels: np.ndarray,
                    order: np.ndarray) -> np.ndarray:
    """TF's ConvertLabel on every label: 0/1 -> -1/1 for the classification losses,
    non-negative for Poisson; the first bad label (in visiting order) is the error."""
    if loss.binary:
        bad = (labels != 0.0) & (labels != 1.0)
        message = "Only labels of 0.0 or 1.0 are supported right now. " \
                  "Found example with label: %g"
    elif loss_type == "poisson_loss":
        bad = labels < 0.0
        message = "Only non-negative labels can be used with the Poisson log loss. " \
                  "Found example with label: %g"
    else:
        return labels
    if bad.any():
        first = order[np.argmax(bad[order])]
        raise errors.InvalidArgumentError(None, ctx.op, message % labels[first])
    return np.where(labels == 0.0, -1.0, labels) if loss.binary else labels


# --- SdcaOptimizer / SdcaOptimizerV2 ------------------------------------------------------
def _optimizer_shape(op):
    ns = op._get_attr("num_sparse_features")
    nsv = op._get_attr("num_sparse_features_with_values")
    nd = op._get_attr("num_dense_features")
    ins = op.inputs
    sparse_weights = ins[3 * ns + nsv + nd + 2: 4 * ns + nsv + nd + 2]
    dense_weights = ins[4 * ns + nsv + nd + 2: 4 * ns + nsv + 2 * nd + 2]
    return ([ins[-1].shape] + [t.shape for t in sparse_weights]
            + [t.shape for t in dense_weights])


_OPTIMIZER_INPUTS = [
    "sparse_example_indices: num_sparse_features * int64",
    "sparse_feature_indices: num_sparse_features * int64",
    "sparse_feature_values: num_sparse_features_with_values * float32",
    "dense_features: num_dense_features * float32",
    "example_weights: float32", "example_labels: float32",
    "sparse_indices: num_sparse_features * int64",
    "sparse_weights: num_sparse_features * float32",
    "dense_weights: num_dense_features * float32",
    "example_state_data: float32"]
_OPTIMIZER_OUTPUTS = ["out_example_state_data: float32",
                      "out_delta_sparse_weights: num_sparse_features * float32",
                      "out_delta_dense_weights: num_dense_features * float32"]

for _op_type, _adaptive_attr in (("SdcaOptimizer", "adaptative"),
                                 ("SdcaOptimizerV2", "adaptive")):
    register_op(_op_type, inputs=_OPTIMIZER_INPUTS, outputs=_OPTIMIZER_OUTPUTS,
                attrs={"loss_type": "logistic_loss", _adaptive_attr: False,
                       "num_sparse_features": 0, "num_sparse_features_with_values": 0,
                       "num_dense_features": 0, "l1": 0.0, "l2": 1.0,
                       "num_loss_partitions": 1, "num_inner_iterations": 1},
                shape=_optimizer_shape)
    not_differentiable(_op_type)


class _SparseGroup:
    """One sparse feature group of the batch: per example, the positions (into the
    group's `sparse_weights`) and values of its features."""

    def __init__(self, ctx, num_examples: int, example_indices, feature_indices, values,
                 weight_indices, nominals):
        if example_indices.size != feature_indices.size:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Found mismatched example_indices and feature_indices [%s] vs "
                "[%s]" % (" ".join(map(str, example_indices.reshape(-1).tolist())),
                          " ".join(map(str, feature_indices.reshape(-1).tolist()))))
        ex = example_indices.reshape(-1)
        # TF walks the examples in order, taking the run of entries equal to each: the
        # entries it reads are the prefix that is non-decreasing and within [0, N).
        ok = (ex >= 0) & (ex < num_examples)
        ok[1:] &= ex[1:] >= ex[:-1]
        used = ex.size if ok.all() else int(np.argmin(ok))
        ex = ex[:used]
        features = feature_indices.reshape(-1)[:used]
        position_of = {f: j for j, f in enumerate(weight_indices.reshape(-1).tolist())}
        positions = [position_of.get(f, -1) for f in features.tolist()]
        if -1 in positions:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Found sparse feature indices out of valid range: %d"
                % features[positions.index(-1)])
        if used and np.unique(np.stack([ex, features]), axis=1).shape[1] != used:
            raise errors.InvalidArgumentError(None, ctx.op,
                                              "Duplicate index in sparse vector.")
        self.positions = np.asarray(positions, np.int64)
        self.values = (np.ones(used) if values is None
                       else values.reshape(-1)[:used].astype(np.float64))
        self.starts = np.searchsorted(ex, np.arange(num_examples + 1))
        self.example_of = ex
        self.nominals = nominals.reshape(-1)
        self.deltas = np.zeros(self.nominals.size, np.float32)

    def squared_norms(self, n: int) -> np.ndarray:
        return np.bincount(self.example_of, self.values * self.values, minlength=n)

    def nominal_products(self, n: int, shrink) -> np.ndarray:
        w = shrink(self.nominals[self.positions].astype(np.float64))
        return np.bincount(self.example_of, self.values * w, minlength=n)


def _shrinkage(l1, l2) -> np.float32:
    """TF's l1 / l2, divided in float32 as its Regularizations does (inf or nan for l2 = 0)."""
    with np.errstate(all="ignore"):
        return np.float32(l1) / np.float32(l2)


def _shrinker(shrinkage: float):
    """TF's proximal step sign(w) * max(|w| - l1 / l2, 0), on float64 arrays (the
    identity without l1, skipped in the per-example loop)."""
    if shrinkage == 0:
        return lambda w: w

    def shrink(w):
        return np.sign(w) * np.maximum(np.abs(w) - shrinkage, 0.0)
    return shrink


def _shrink_f32(w: np.ndarray, shrinkage: np.float32) -> np.ndarray:
    """The float32 variant (TF's EigenShrinkVector)."""
    if shrinkage == 0:
        return w
    return np.sign(w) * np.maximum(np.abs(w) - shrinkage, np.float32(0))


def _order_generator(ctx) -> np.random.Generator:
    """The generator of this op's visiting orders in this session: OS entropy, as TF's
    std::random_device, except in the deterministic mode (runtime/determinism.py), where
    the op's name seeds it so a rerun repeats every pass."""
    gen = ctx.state.get("order_generator")
    if gen is None:
        if _determinism.of_session(ctx.session):
            seed, seed2 = _determinism.name_seed(ctx.op.name)
            gen = np.random.Generator(np.random.Philox(key=(seed << 64) | seed2))
        else:
            gen = np.random.default_rng()
        ctx.state["order_generator"] = gen
    return gen


def _sampled_order(rng, loss: _Loss, n: int, weights, labels, state, sq_norms, wx, l2):
    """TF's adaptive order: examples drawn by their weighted duality gaps, each kept with
    probability 0.1 ** (times drawn before), at most n draws plus n rejections; the slots
    left over stay at example 0 (see the module docstring)."""
    kappa = state[:, 0].astype(np.float64) + loss.derivative(wx, labels)
    probs = (weights * np.sqrt(sq_norms + l2 * loss.smoothness) * np.abs(kappa))
    probs = probs.astype(np.float32).astype(np.float64)
    total = probs.sum()
    order = np.zeros(n, np.int64)
    if not np.isfinite(total) or total <= 0:
        return order
    counts = np.zeros(n, np.int64)
    filled = retries = 0
    draws = rng.choice(n, size=2 * n, p=probs / total)
    coins = rng.random(2 * n)
    for picked, coin in zip(draws.tolist(), coins.tolist()):
        if filled >= n or retries >= n:
            break
        if coin > 0.1 ** counts[picked]:
            retries += 1
            continue
        counts[picked] += 1
        order[filled] = picked
        filled += 1
    return order


def _optimizer_kernel(ctx, *inputs):
    attrs = ctx.attrs
    ns, nsv = attrs["num_sparse_features"], attrs["num_sparse_features_with_values"]
    nd = attrs["num_dense_features"]
    loss_type = attrs["loss_type"]
    loss = _LOSSES.get(loss_type)
    if loss is None:
        raise errors.InvalidArgumentError(None, ctx.op, "Unsupported loss type: %s"
                                          % loss_type)
    if ns + nd == 0:
        raise errors.InvalidArgumentError(None, ctx.op,
                                          "Requires at least one feature to train.")
    adaptive = attrs.get("adaptive", attrs.get("adaptative"))
    nlp = attrs["num_loss_partitions"]
    l1, l2 = np.float32(attrs["l1"]), np.float32(attrs["l2"])  # TF keeps them as float
    it = iter(inputs)
    ex_idx = [next(it) for _ in range(ns)]
    feat_idx = [next(it) for _ in range(ns)]
    feat_vals = [next(it) for _ in range(nsv)]
    dense = [next(it) for _ in range(nd)]
    weights = next(it).reshape(-1)
    labels = next(it).reshape(-1)
    sparse_idx = [next(it) for _ in range(ns)]
    sparse_w = [next(it) for _ in range(ns)]
    dense_w = [next(it) for _ in range(nd)]
    state_in = next(it)

    n = weights.size
    if labels.size != n:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected %d example labels but got "
                                          "%d" % (n, labels.size))
    for i, d in enumerate(dense):
        if d.ndim != 2:
            raise errors.InvalidArgumentError(None, ctx.op, "Dense features at index %d must "
                                              "be rank 2 but is rank %d" % (i, d.ndim))
    groups = [_SparseGroup(ctx, n, ex_idx[i], feat_idx[i],
                           feat_vals[i] if i < nsv else None, sparse_idx[i], sparse_w[i])
              for i in range(ns)]
    dense_nominals = [w.reshape(-1) for w in dense_w]
    for d, w in zip(dense, dense_nominals):
        if not 0 <= d.shape[1] - 1 < w.size:
            raise errors.InvalidArgumentError(None, ctx.op, "More dense features than we "
                                              "have parameters for: %d" % d.shape[1])
    if state_in.ndim != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "example_state_data must be rank 2 "
                                          "but is rank %d" % state_in.ndim)
    if state_in.shape != (n, 4):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected shape [%d,4] for example_state_data, got [%s]"
            % (n, ",".join(map(str, state_in.shape))))
    dense_nominals = [w[:d.shape[1]] for d, w in zip(dense, dense_nominals)]

    with np.errstate(all="ignore"):
        shrink32 = _shrinkage(l1, l2)
        shrink = _shrinker(float(shrink32))
        l2 = float(l2)
        sq_norms = sum((g.squared_norms(n) for g in groups), np.zeros(n))
        for d in dense:
            sq_norms = sq_norms + np.square(d).sum(axis=1, dtype=np.float32)
        prev_wx = sum((g.nominal_products(n, shrink) for g in groups), np.zeros(n))
        for d, w in zip(dense, dense_nominals):
            prev_wx = prev_wx + (d * _shrink_f32(w, shrink32)).sum(axis=1, dtype=np.float32)
        w64 = weights.astype(np.float64)
        raw_labels = labels.astype(np.float64)
        if adaptive:
            label_for_gap = np.where(raw_labels == 0.0, -1.0, raw_labels) \
                if loss.binary else raw_labels
            order = _sampled_order(_order_generator(ctx), loss, n, w64, label_for_gap,
                                   state_in, sq_norms, prev_wx, l2)
        else:
            order = _order_generator(ctx).permutation(n)
        y = _convert_labels(ctx, loss, loss_type, raw_labels, order)
        state = np.array(state_in, np.float32)
        duals = state[:, 0].astype(np.float64)
        old_duals = duals.copy()
        visited, dense_deltas = _visit(order, groups, dense, dense_nominals, loss, nlp, l2,
                                       shrink, shrink32, y, w64, duals, old_duals,
                                       sq_norms / l2)
        state[visited, 0] = duals[visited]
        state[visited, 1] = loss.primal(prev_wx, y, w64)[visited]
        state[visited, 2] = loss.dual_loss(old_duals, y, w64)[visited]
        state[visited, 3] = weights[visited]
    return ([state] + [g.deltas.reshape(w.shape) for g, w in zip(groups, sparse_w)]
            + [_dense_delta(d, w) for d, w in zip(dense_deltas, dense_w)])


def _dense_delta(delta: np.ndarray, like: np.ndarray) -> np.ndarray:
    out = np.zeros(like.size, np.float32)
    out[:delta.size] = delta
    return out.reshape(like.shape)


def _visit(order, groups, dense, dense_nominals, loss, nlp, l2, shrink, shrink32, y, w64,
           duals, old_duals, norms):
    """The sequential pass: visits the examples in `order`, updating `duals` and the
    sparse groups' deltas in place; `old_duals` gets each example's dual before its last
    visit (an adaptive order may visit one twice). Returns the mask of visited examples
    and the dense groups' deltas."""
    nlp32 = np.float32(nlp)
    dense_deltas = [np.zeros(w.size, np.float32) for w in dense_nominals]
    group_views = [(g.positions, g.values, g.starts, g.nominals, g.deltas) for g in groups]
    update = loss.dual
    visited = np.zeros(len(duals), bool)
    for e in order.tolist():
        wx = 0.0
        slices = []
        for positions, values, starts, nominals, deltas in group_views:
            lo, hi = starts[e], starts[e + 1]
            if lo == hi:
                slices.append(None)
                continue
            pos = positions[lo:hi]
            vals = values[lo:hi]
            current = nominals[pos] + deltas[pos] * nlp32
            wx += float(vals @ shrink(current.astype(np.float64)))
            slices.append((pos, vals, deltas))
        rows = [d[e] for d in dense]
        for row, nominal, delta in zip(rows, dense_nominals, dense_deltas):
            current = nominal + delta * nlp32
            wx += float((row * _shrink_f32(current, shrink32)).sum(dtype=np.float32))
        dual = duals[e]
        weight = w64[e]
        new_dual = update(nlp, y[e], weight, dual, wx, norms[e])
        step = (new_dual - dual) * weight / l2 if l2 else \
            float(np.float64(new_dual - dual) * weight / np.float64(l2))
        for s in slices:
            if s is not None:
                pos, vals, deltas = s
                deltas[pos] = deltas[pos] + vals * step
        step32 = np.float32(step)
        for row, delta in zip(rows, dense_deltas):
            delta += row * step32
        old_duals[e] = dual
        duals[e] = np.float32(new_dual)
        visited[e] = True
    return visited, dense_deltas


kernel("SdcaOptimizer", cheap=False)(_optimizer_kernel)
kernel("SdcaOptimizerV2", cheap=False)(_optimizer_kernel)


def _check_loss_and_partitions(op_type: str, loss_type: str, num_loss_partitions: int,
                               num_inner_iterations: int) -> None:
    if loss_type not in _LOSS_TYPES:
        raise ValueError("Attr 'loss_type' of '%s' Op passed string '%s' not in: %s."
                         % (op_type, loss_type, ", ".join('"%s"' % t for t in _LOSS_TYPES)))
    for attr, value in (("num_loss_partitions", num_loss_partitions),
                        ("num_inner_iterations", num_inner_iterations)):
        if int(value) < 1:
            raise ValueError("Attr '%s' of '%s' Op passed %d less than minimum 1."
                             % (attr, op_type, value))


def _build_optimizer(op_type, adaptive_attr, adaptive, sparse_example_indices,
                     sparse_feature_indices, sparse_feature_values, dense_features,
                     example_weights, example_labels, sparse_indices, sparse_weights,
                     dense_weights, example_state_data, loss_type, l1, l2,
                     num_loss_partitions, num_inner_iterations, name):
    _check_loss_and_partitions(op_type, loss_type, num_loss_partitions, num_inner_iterations)
    lists = [list(x) for x in (sparse_example_indices, sparse_feature_indices,
                               sparse_feature_values, dense_features)]
    ns = len(lists[0])
    for what, group in (("sparse_feature_indices", lists[1]),
                        ("sparse_indices", sparse_indices), ("sparse_weights", sparse_weights)):
        if len(group) != ns:
            raise ValueError("List argument '%s' to '%s' Op with length %d must match "
                             "length %d of argument 'sparse_example_indices'."
                             % (what, op_type, len(group), ns))
    if len(dense_weights) != len(lists[3]):
        raise ValueError("List argument 'dense_weights' to '%s' Op with length %d must match "
                         "length %d of argument 'dense_features'."
                         % (op_type, len(dense_weights), len(lists[3])))
    op = apply_op(op_type, lists + [example_weights, example_labels, list(sparse_indices),
                                    list(sparse_weights), list(dense_weights),
                                    example_state_data],
                  {"loss_type": loss_type, adaptive_attr: bool(adaptive),
                   "num_sparse_features": ns,
                   "num_sparse_features_with_values": len(lists[2]),
                   "num_dense_features": len(lists[3]), "l1": float(l1), "l2": float(l2),
                   "num_loss_partitions": int(num_loss_partitions),
                   "num_inner_iterations": int(num_inner_iterations)},
                  name=name or op_type)
    outs = op.outputs
    return outs[0], list(outs[1:1 + ns]), list(outs[1 + ns:])


@tf_export("train.sdca_optimizer")
def sdca_optimizer(sparse_example_indices: Sequence, sparse_feature_indices: Sequence,
                   sparse_feature_values: Sequence, dense_features: Sequence,
                   example_weights, example_labels, sparse_indices: Sequence,
                   sparse_weights: Sequence, dense_weights: Sequence, example_state_data,
                   loss_type: str, l1: float, l2: float, num_loss_partitions: int,
                   num_inner_iterations: int, adaptative: bool = True,
                   name: Optional[str] = None):
    """One pass of stochastic dual coordinate ascent over a mini-batch (TF1
    `tf.train.sdca_optimizer`, op SdcaOptimizer).

    Args:
      sparse_example_indices: per sparse feature group, int64 [nnz]: the example of
        each entry (sorted).
      sparse_feature_indices: per group, int64 [nnz]: the feature of each entry.
      sparse_feature_values: float32 [nnz] values, for the first groups (others: 1).
      dense_features: float32 matrices [batch, width].
      example_weights, example_labels: float32 [batch].
      sparse_indices: per group, int64: the features whose weights `sparse_weights`
        holds, in its order.
      sparse_weights: per group, float32: those weights.
      dense_weights: per dense group, float32 [width].
      example_state_data: float32 [batch, 4]: dual, primal loss, dual loss, weight.
      loss_type: "logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss" or
        "poisson_loss".
      l1, l2: the symmetric regularization strengths.
      num_loss_partitions: the number of partitions of the loss (workers).
      num_inner_iterations: kept as TF's attr (TF's kernel makes one pass).
      adaptative: visit the examples in an order sampled by their duality gaps.
      name: the op's name.

    Returns:
      (out_example_state_data, out_delta_sparse_weights, out_delta_dense_weights): the
      new state, and the deltas to add to `sparse_weights` and `dense_weights`.

    Raises:
      ValueError: an unknown loss_type, num_loss_partitions or num_inner_iterations below
        1, or lists of mismatched lengths. At run time InvalidArgumentError for bad
        labels, indices, shapes or no features.
    """
    return _build_optimizer("SdcaOptimizer", "adaptative", adaptative,
                            sparse_example_indices, sparse_feature_indices,
                            sparse_feature_values, dense_features, example_weights,
                            example_labels, sparse_indices, sparse_weights, dense_weights,
                            example_state_data, loss_type, l1, l2, num_loss_partitions,
                            num_inner_iterations, name)


def sdca_optimizer_v2(sparse_example_indices, sparse_feature_indices, sparse_feature_values,
                      dense_features, example_weights, example_labels, sparse_indices,
                      sparse_weights, dense_weights, example_state_data, loss_type: str,
                      l1: float, l2: float, num_loss_partitions: int,
                      num_inner_iterations: int, adaptive: bool = False,
                      name: Optional[str] = None):
    """`sdca_optimizer` as op SdcaOptimizerV2 (attr `adaptive`; TF's gen_sdca_ops
    .sdca_optimizer_v2, what the SDCA estimators build)."""
    return _build_optimizer("SdcaOptimizerV2", "adaptive", adaptive, sparse_example_indices,
                            sparse_feature_indices, sparse_feature_values, dense_features,
                            example_weights, example_labels, sparse_indices, sparse_weights,
                            dense_weights, example_state_data, loss_type, l1, l2,
                            num_loss_partitions, num_inner_iterations, name)


# --- SdcaFprint ---------------------------------------------------------------------------
def _fprint_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims != 1:
        raise ValueError("Shape must be rank 1 but is rank %d" % shape.ndims)
    return TensorShape([shape.dims[0] if shape.ndims else None, 2])


register_op("SdcaFprint", inputs=["input: string"], outputs=["output: int64"],
            shape=_fprint_shape)
not_differentiable("SdcaFprint")

_MASK64 = (1 << 64) - 1


@kernel("SdcaFprint")
def _fprint_kernel(ctx, ids):
    if ids.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Input must be a vector, got shape "
                                          "[%s]" % ",".join(map(str, ids.shape)))
    from farmhash import Fingerprint128
    out = np.empty((ids.size, 2), np.uint64)
    for i, s in enumerate(ids.tolist()):
        s = s if isinstance(s, bytes) else str(s).encode("utf-8")
        value = Fingerprint128(s)  # the binding's int: low 64 bits high, high 64 bits low
        low, high = value >> 64, value & _MASK64
        # never 0 or 1 first: those are the empty and deleted keys of a dense hash table
        out[i] = (low if low >= 2 else (low - 2) & _MASK64, high)
    return out.view(np.int64)


@tf_export("train.sdca_fprint")
def sdca_fprint(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """A 128-bit fingerprint of each example id (TF1 `tf.train.sdca_fprint`): FarmHash's
    Fingerprint128, as two int64 (low, high); the low half is never 0 or 1.

    Args:
      input: a string vector.
      name: the op's name.

    Returns:
      An int64 Tensor [len(input), 2].

    Raises:
      ValueError: `input` of known rank other than 1.
    """
    x = convert_to_tensor(input, _dt.string, name="input")
    return apply_op("SdcaFprint", [x], {}, name=name or "SdcaFprint").outputs[0]


# --- SdcaShrinkL1 -------------------------------------------------------------------------
register_op("SdcaShrinkL1", inputs=["weights: num_features * resource"],
            attrs={"num_features": 0, "l1": 0.0, "l2": 1.0}, stateful=True)
not_differentiable("SdcaShrinkL1")


@kernel("SdcaShrinkL1")
def _shrink_l1_kernel(ctx, *handles):
    from tensorweave.ops.state import resource_variable_ops as rv
    shrinkage = _shrinkage(ctx.attrs["l1"], ctx.attrs["l2"])
    for handle in handles:
        r = rv.lookup_variable(handle, ctx.op)
        with r.lock:
            if r.value is None:
                rv.current_value(r, handle, ctx.op)  # raises FailedPrecondition
            if r.dtype is not _dt.float32:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Trying to update variable with wrong dtype. Expected "
                    "float got %s" % _dt.type_string(r.dtype))
            w = r.writable_value()
            try:
                w[...] = _shrink_f32(w, shrinkage)
            finally:
                r.publish(w)


@tf_export("train.sdca_shrink_l1")
def sdca_shrink_l1(weights: List, l1: float, l2: float,
                   name: Optional[str] = None) -> Operation:
    """Applies the L1 proximal step to each variable in place (TF1
    `tf.train.sdca_shrink_l1`): w = sign(w) * max(|w| - l1 / l2, 0).

    Args:
      weights: float32 variables.
      l1, l2: the symmetric regularization strengths.
      name: the op's name.

    Returns:
      The SdcaShrinkL1 Operation.

    Raises:
      TypeError: an entry of `weights` that is not a variable.
    """
    handles = []
    for w in weights:
        handle = getattr(w, "handle", None)
        if handle is None:
            raise TypeError("sdca_shrink_l1 updates variables in place; got %r" % (w,))
        handles.append(handle)
    return apply_op("SdcaShrinkL1", [handles], {"num_features": len(handles),
                                                "l1": float(l1), "l2": float(l2)},
                    name=name or "SdcaShrinkL1")
