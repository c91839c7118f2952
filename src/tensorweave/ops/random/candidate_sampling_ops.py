"""Candidate samplers (TF1 `tf.random.*_candidate_sampler`) and compute_accidental_hits.

Each sampler op draws `num_sampled` classes from [0, range_max) under its distribution
and returns `(sampled_candidates, true_expected_count, sampled_expected_count)`. The
expected counts follow TF's formulas: without `unique`, `p * num_sampled`; with
`unique` (sampling without replacement by rejecting repeats), `-expm1(num_tries *
log1p(-p))`, where `num_tries` is the number of draws it took to find `num_sampled`
distinct classes (or `p * num_sampled` when no draw was rejected).

Seeds follow TF1's graph/op seed rules (`random_ops.get_seed`); each op keeps its
generator (and, for the learned unigram sampler, its class counts) per session in
`ctx.state`. The random streams are NumPy's Philox, so values differ from TF's while the
distributions are the same.
"""
from __future__ import annotations

import collections
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.ops.random.random_ops import _INIT_LOCK, _generator, _seed_attrs

CandidateSamplerResult = collections.namedtuple(
    "CandidateSamplerResult",
    ["sampled_candidates", "true_expected_count", "sampled_expected_count"])
AccidentalHitsResult = collections.namedtuple("AccidentalHitsResult",
                                              ["indices", "ids", "weights"])

_SAMPLER_ATTRS = {"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED,
                  "range_max": REQUIRED, "seed": 0, "seed2": 0}


def _sampler_shape(op):
    batch = with_rank(op.inputs[0].shape, 2)[0]
    n = op._get_attr("num_sampled")
    return [TensorShape([n]), TensorShape([batch, op._get_attr("num_true")]),
            TensorShape([n])]


def _declare(op_type: str, extra_attrs: Optional[dict] = None) -> None:
    attrs = dict(_SAMPLER_ATTRS)
    if op_type == "AllCandidateSampler":
        del attrs["range_max"]
    attrs.update(extra_attrs or {})
    register_op(op_type, inputs=["true_classes: int64"],
                outputs=["sampled_candidates: int64", "true_expected_count: float",
                         "sampled_expected_count: float"],
                attrs=attrs, shape=_sampler_shape, stateful=True)
    not_differentiable(op_type)


# --- distributions: (probabilities of given classes, draws) -----------------------------
class _LogUniform:
    """P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)."""

    def __init__(self, range_max: int):
        self.range_max = range_max
        self.log_range = np.log1p(float(range_max))

    def prob(self, k: np.ndarray) -> np.ndarray:
        k = k.astype(np.float64)
        return (np.log(k + 2.0) - np.log(k + 1.0)) / self.log_range

    def sample(self, gen, n: int) -> np.ndarray:
        v = np.exp(gen.random(n) * self.log_range) - 1.0
        return v.astype(np.int64) % self.range_max


class _Uniform:
    def __init__(self, range_max: int):
        self.range_max = range_max

    def prob(self, k: np.ndarray) -> np.ndarray:
        return np.full(k.shape, 1.0 / self.range_max)

    def sample(self, gen, n: int) -> np.ndarray:
        return gen.integers(0, self.range_max, size=n, dtype=np.int64)


class _Weighted:
    """P(k) = weights[k] / sum(weights)."""

    def __init__(self, weights: np.ndarray):
        self.range_max = weights.size
        self.p = weights / weights.sum()
        self.cdf = np.cumsum(self.p)
        self.positive = int(np.count_nonzero(weights > 0))

    def prob(self, k: np.ndarray) -> np.ndarray:
        inside = (k >= 0) & (k < self.range_max)
        return np.where(inside, self.p[np.clip(k, 0, self.range_max - 1)], 0.0)

    def sample(self, gen, n: int) -> np.ndarray:
        idx = np.searchsorted(self.cdf, gen.random(n) * self.cdf[-1], side="right")
        return np.minimum(idx, self.range_max - 1).astype(np.int64)


def _check_true_classes(ctx, true_classes) -> None:
    num_true = ctx.attrs["num_true"]
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise errors.InvalidArgumentError(
            None, ctx.op, "true_classes must be a matrix of shape [batch_size, %d], got [%s]"
            % (num_true, ",".join(str(d) for d in true_classes.shape)))


def _check_in_range(ctx, true_classes, range_max: int) -> None:
    """TF's check that every true class lies in [0, range_max); the first one outside,
    in row-major order, is named."""
    outside = np.flatnonzero((true_classes < 0) | (true_classes >= range_max))
    if outside.size:
        raise errors.InvalidArgumentError(
            None, ctx.op, "`true_candidate` out of range [0, %d), received %d"
            % (range_max, true_classes.flat[outside[0]]))


def _sample_batch(ctx, dist, true_classes):
    """Draws the candidates and computes both expected counts (TF's RangeSampler)."""
    a = ctx.attrs
    n, unique = a["num_sampled"], a["unique"]
    _check_true_classes(ctx, true_classes)
    if unique and n > dist.range_max:
        raise errors.InvalidArgumentError(None, ctx.op, "Sampler's range is too small.")
    _check_in_range(ctx, true_classes, dist.range_max)
    if unique and n > getattr(dist, "positive", n):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Cannot sample %d unique candidates: only %d classes have a "
            "positive probability" % (n, dist.positive))
    gen, lock = _generator(ctx)
    with lock:
        if not unique:
            sampled, tries = dist.sample(gen, n), n
        else:
            draws = np.zeros(0, np.int64)
            while True:
                draws = np.concatenate([draws, dist.sample(gen, max(2 * n, 64))])
                _, first = np.unique(draws, return_index=True)
                if first.size >= n:
                    first = np.sort(first)[:n]
                    break
            sampled = draws[first]
            tries = int(first[-1]) + 1 if n else 0

    def expected(p):
        if tries == n:
            return (p * n).astype(np.float32)
        return (-np.expm1(tries * np.log1p(-p))).astype(np.float32)

    return (sampled, expected(dist.prob(true_classes.astype(np.int64))),
            expected(dist.prob(sampled)))


# --- the ops -----------------------------------------------------------------------------
for _op in ("UniformCandidateSampler", "LogUniformCandidateSampler",
            "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler",
            "AllCandidateSampler"):
    _declare(_op)
_declare("FixedUnigramCandidateSampler",
         {"vocab_file": "", "distortion": 1.0, "num_reserved_ids": 0, "num_shards": 1,
          "shard": 0, "unigrams": []})


@kernel("UniformCandidateSampler")
def _uniform_kernel(ctx, true_classes):
    return _sample_batch(ctx, _Uniform(ctx.attrs["range_max"]), true_classes)


@kernel("LogUniformCandidateSampler")
def _log_uniform_kernel(ctx, true_classes):
    return _sample_batch(ctx, _LogUniform(ctx.attrs["range_max"]), true_classes)


def _learned_kernel(ctx, true_classes):
    """Unigram counts learned from the true classes seen so far: every class starts at
    weight 1 and gains 1 per occurrence among `true_classes`, after the draw."""
    with _INIT_LOCK:
        counts = ctx.state.get("counts")
        if counts is None:
            counts = ctx.state["counts"] = np.ones(ctx.attrs["range_max"])
    result = _sample_batch(ctx, _Weighted(counts.copy()), true_classes)  # checks the range
    _, lock = _generator(ctx)
    with lock:
        np.add.at(counts, true_classes.ravel(), 1.0)
    return result


kernel("LearnedUnigramCandidateSampler")(_learned_kernel)
kernel("ThreadUnsafeUnigramCandidateSampler")(_learned_kernel)


def _read_vocab_counts(path: str) -> list:
    """The last comma-separated field of each line of a vocabulary file, as floats."""
    from tensorweave.platform import gfile
    counts = []
    with gfile.GFile(path, "r") as f:
        for line in f:
            line = line.strip()
            if line:
                counts.append(float(line.split(",")[-1]))
    return counts


def _fixed_unigram_weights(ctx) -> np.ndarray:
    """TF's FixedUnigramSampler weights: reserved ids (weight 0) then `unigrams ** distortion`,
    keeping only the ids `id % num_shards == shard`. As in TF, the unigram ids are counted
    on from the number of reserved ids this shard keeps."""
    a = ctx.attrs
    shards, shard = a["num_shards"], a["shard"]
    if a["vocab_file"] and a["unigrams"]:
        raise errors.InvalidArgumentError(None, ctx.op, "Only one of vocab_file and unigrams "
                                          "may be specified")
    if a["vocab_file"]:
        unigrams = _read_vocab_counts(a["vocab_file"])
    elif a["unigrams"]:
        unigrams = list(a["unigrams"])
    else:
        raise errors.InvalidArgumentError(None, ctx.op, "Must specify either vocab_file or "
                                          "unigrams")
    reserved = np.arange(a["num_reserved_ids"])
    n_reserved = int(np.count_nonzero(reserved % shards == shard))
    ids = n_reserved + np.arange(len(unigrams))
    kept = np.asarray(unigrams, np.float64)[ids % shards == shard]
    weights = np.concatenate([np.zeros(n_reserved), kept ** a["distortion"]])
    if weights.size != a["range_max"]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "range_max %d does not match the number of classes of this shard "
            "(%d)" % (a["range_max"], weights.size))
    return weights


@kernel("FixedUnigramCandidateSampler")
def _fixed_unigram_kernel(ctx, true_classes):
    dist = ctx.state.get("dist")
    if dist is None:
        dist = ctx.state["dist"] = _Weighted(_fixed_unigram_weights(ctx))
    return _sample_batch(ctx, dist, true_classes)


@kernel("AllCandidateSampler")
def _all_kernel(ctx, true_classes):
    n = ctx.attrs["num_sampled"]
    _check_true_classes(ctx, true_classes)
    _check_in_range(ctx, true_classes, n)  # its range is [0, num_sampled)
    return (np.arange(n, dtype=np.int64), np.ones(true_classes.shape, np.float32),
            np.ones(n, np.float32))


# --- compute_accidental_hits -------------------------------------------------------------
def _accidental_hits_shape(op):
    """TF's shape function: a [batch, num_true] matrix and a vector in; three vectors of
    an unknown length (the number of hits) out."""
    true_classes = with_rank(op.inputs[0].shape, 2)
    num_true = op._get_attr("num_true")
    if true_classes[1] is not None and true_classes[1] != num_true:
        raise ValueError("Dimension must be %d but is %d" % (num_true, true_classes[1]))
    with_rank(op.inputs[1].shape, 1)
    return [TensorShape([None])] * 3


register_op("ComputeAccidentalHits", inputs=["true_classes: int64", "sampled_candidates: int64"],
            outputs=["indices: int32", "ids: int64", "weights: float"],
            attrs={"num_true": REQUIRED, "seed": 0, "seed2": 0},
            shape=_accidental_hits_shape)
not_differentiable("ComputeAccidentalHits")


@kernel("ComputeAccidentalHits")
def _accidental_hits_kernel(ctx, true_classes, sampled):
    if true_classes.ndim != 2 or true_classes.shape[1] != ctx.attrs["num_true"]:
        raise errors.InvalidArgumentError(None, ctx.op, "true_candidates must be a "
                                          "batch_size * num_true matrix")
    # as TF: a class sampled several times is matched at its last position only
    rev = sampled[::-1]
    _, first_in_rev = np.unique(rev, return_index=True)
    last_pos = sampled.size - 1 - first_in_rev
    keep = np.zeros(sampled.size, bool)
    keep[last_pos] = True
    hit = (true_classes[:, :, None] == sampled[None, None, :]) & keep
    rows, _, pos = np.nonzero(hit)
    weights = np.full(rows.size, -np.finfo(np.float32).max, np.float32)
    return rows.astype(np.int32), pos.astype(np.int64), weights


# --- builders ----------------------------------------------------------------------------
def _sampler(op_type: str, true_classes, attrs: dict, seed, name) -> CandidateSamplerResult:
    # apply_op converts Python values to int64 and, as TF, refuses a tensor of another
    # type with a TypeError
    attrs.update(_seed_attrs(seed))
    op = apply_op(op_type, [true_classes], attrs, name=name or op_type)
    return CandidateSamplerResult(*op.outputs)


def _common(num_true, num_sampled, unique, range_max=None) -> dict:
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled),
             "unique": bool(unique)}
    if range_max is not None:
        attrs["range_max"] = int(range_max)
    return attrs


_ARGS_DOC = """
    Args:
      true_classes: int64 Tensor `[batch_size, num_true]`: the target classes, each in
        [0, range_max) (InvalidArgumentError at run time otherwise).
      num_true: int, the number of target classes per example.
      num_sampled: int, the number of classes to sample.
      unique: bool; if True, sample without replacement (repeats are rejected).
      range_max: int, the number of possible classes.
      seed: op-level seed (see `tf.set_random_seed`).
      name: op name.

    Returns:
      `(sampled_candidates, true_expected_count, sampled_expected_count)`: int64
      `[num_sampled]`, float32 `[batch_size, num_true]`, float32 `[num_sampled]`.

    Raises:
      TypeError: `true_classes` is a Tensor of another type than int64.
"""


@tf_export("random.uniform_candidate_sampler", "nn.uniform_candidate_sampler")
def uniform_candidate_sampler(true_classes, num_true: int, num_sampled: int, unique: bool,
                              range_max: int, seed: Optional[int] = None,
                              name: Optional[str] = None) -> CandidateSamplerResult:
    """Samples classes uniformly from [0, range_max).
    """
    return _sampler("UniformCandidateSampler", true_classes,
                    _common(num_true, num_sampled, unique, range_max), seed, name)


@tf_export("random.log_uniform_candidate_sampler", "nn.log_uniform_candidate_sampler")
def log_uniform_candidate_sampler(true_classes, num_true: int, num_sampled: int, unique: bool,
                                  range_max: int, seed: Optional[int] = None,
                                  name: Optional[str] = None) -> CandidateSamplerResult:
    """Samples classes from the log-uniform (Zipfian) distribution:
    P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1).
    """
    return _sampler("LogUniformCandidateSampler", true_classes,
                    _common(num_true, num_sampled, unique, range_max), seed, name)


@tf_export("random.learned_unigram_candidate_sampler", "nn.learned_unigram_candidate_sampler")
def learned_unigram_candidate_sampler(true_classes, num_true: int, num_sampled: int,
                                      unique: bool, range_max: int,
                                      seed: Optional[int] = None,
                                      name: Optional[str] = None) -> CandidateSamplerResult:
    """Samples classes by their frequency among the true classes seen so far in this
    session: each class starts with count 1 and gains 1 each time it appears in
    `true_classes` (counted after each draw).
    """
    return _sampler("LearnedUnigramCandidateSampler", true_classes,
                    _common(num_true, num_sampled, unique, range_max), seed, name)


@tf_export("random.fixed_unigram_candidate_sampler", "nn.fixed_unigram_candidate_sampler")
def fixed_unigram_candidate_sampler(true_classes, num_true: int, num_sampled: int,
                                    unique: bool, range_max: int, vocab_file: str = "",
                                    distortion: float = 1.0, num_reserved_ids: int = 0,
                                    num_shards: int = 1, shard: int = 0,
                                    unigrams: Sequence[float] = (), seed: Optional[int] = None,
                                    name: Optional[str] = None) -> CandidateSamplerResult:
    """Samples classes with probability proportional to `unigrams[k] ** distortion`.

    The counts come from `unigrams` or from `vocab_file` (one class a line, its count
    the last comma-separated field). The first `num_reserved_ids` ids have probability
    0. With `num_shards > 1` only the ids with `id % num_shards == shard` are kept and
    numbered 0, 1, ... in this shard; `range_max` must equal their number.

    Args:
      true_classes: int64 Tensor `[batch_size, num_true]`: the target classes, each in
        [0, range_max) (InvalidArgumentError at run time otherwise).
      num_true: int, the number of target classes per example.
      num_sampled: int, the number of classes to sample.
      unique: bool; if True, sample without replacement (repeats are rejected).
      range_max: int, the number of possible classes.
      vocab_file: path of a vocabulary file with counts, or "".
      distortion: the power the counts are raised to.
      num_reserved_ids: ids with probability 0 placed before the unigrams.
      num_shards: number of shards the class range is split into.
      shard: which shard this sampler draws from.
      unigrams: list of counts (use this or `vocab_file`).
      seed: op-level seed (see `tf.set_random_seed`).
      name: op name.

    Returns:
      `(sampled_candidates, true_expected_count, sampled_expected_count)`.

    Raises:
      TypeError: `true_classes` is a Tensor of another type than int64.
    """
    attrs = _common(num_true, num_sampled, unique, range_max)
    attrs.update(vocab_file=str(vocab_file), distortion=float(distortion),
                 num_reserved_ids=int(num_reserved_ids), num_shards=int(num_shards),
                 shard=int(shard), unigrams=[float(u) for u in unigrams])
    return _sampler("FixedUnigramCandidateSampler", true_classes, attrs, seed, name)


@tf_export("random.all_candidate_sampler", "nn.all_candidate_sampler")
def all_candidate_sampler(true_classes, num_true: int, num_sampled: int, unique: bool,
                          seed: Optional[int] = None,
                          name: Optional[str] = None) -> CandidateSamplerResult:
    """Returns all classes [0, num_sampled) with every expected count 1 (for tests).

    Args:
      true_classes: int64 Tensor `[batch_size, num_true]`, each in [0, num_sampled)
        (InvalidArgumentError at run time otherwise).
      num_true: int, the number of target classes per example.
      num_sampled: int, the number of classes (all of them are returned).
      unique: ignored (kept for TF's signature).
      seed: op-level seed.
      name: op name.

    Returns:
      `(sampled_candidates, true_expected_count, sampled_expected_count)`.

    Raises:
      TypeError: `true_classes` is a Tensor of another type than int64.
    """
    return _sampler("AllCandidateSampler", true_classes,
                    _common(num_true, num_sampled, unique), seed, name)


for _f in (uniform_candidate_sampler, log_uniform_candidate_sampler,
           learned_unigram_candidate_sampler):
    _f.__doc__ += _ARGS_DOC


@tf_export("nn.compute_accidental_hits")
def compute_accidental_hits(true_classes, sampled_candidates, num_true: int,
                            seed: Optional[int] = None,
                            name: Optional[str] = None) -> AccidentalHitsResult:
    """Finds the sampled candidates that equal one of an example's true classes.

    Args:
      true_classes: int64 Tensor `[batch_size, num_true]`.
      sampled_candidates: int64 Tensor `[num_sampled]` (a sampler's first output).
      num_true: int, the number of target classes per example.
      seed: op-level seed (unused by the computation; kept as TF has it).
      name: op name (default "ComputeAccidentalHits").

    Returns:
      `(indices, ids, weights)`: int32 example indices, int64 positions in
      `sampled_candidates`, and float32 weights of `-FLOAT_MAX` to add to those logits.

    Raises:
      TypeError: an input is a Tensor of another type than int64.
      ValueError: `true_classes` is not a matrix of `num_true` columns or
        `sampled_candidates` not a vector (static shapes).
    """
    attrs = {"num_true": int(num_true)}
    attrs.update(_seed_attrs(seed))
    op = apply_op("ComputeAccidentalHits", [true_classes, sampled_candidates], attrs,
                  name=name or "ComputeAccidentalHits")
    return AccidentalHitsResult(*op.outputs)
