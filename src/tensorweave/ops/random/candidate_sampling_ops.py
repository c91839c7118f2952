"""Candidate samplers (TF1 `tf.random.*_candidate_sampler`) and compute_accidental_hits.

Each sampler op draws `num_sampled` classes from [0, range_max) under its distribution
and returns `(sampled_candidates, true_expected_count, sampled_expected_count)`. The
expected counts follow TF's formulas: without `unique`, `p * num_sampled`; with
`unique` (sampling without replacement by rejecting repeats), `-expm1(num_tries *
log1p(-p))`, where `num_tries` is the number of draws it took to find `num_sampled`
distinct classes (or `p * num_sampled` when no draw was rejected).

Seeds follow TF1's graph/op seed rules (`random_ops.get_seed`) and the values are TF's
CPU kernels' bit for bit: each call reserves 512 blocks per sampled class of the op's
Philox4x32-10 stream (TF's GuardedPhiloxRandom, kept per session in `ctx.state` with,
for the learned unigram sampler, its class weights), and range_samplers.py draws from
their words as TF's RangeSamplers do, expected counts included.
"""
from __future__ import annotations

import collections
import threading
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.ops.random import range_samplers
from tensorweave.ops.random.random_ops import _INIT_LOCK, _philox_stream, _seed_attrs

CandidateSamplerResult = collections.namedtuple(
    "CandidateSamplerResult",
    ["sampled_candidates", "true_expected_count", "sampled_expected_count"])
AccidentalHitsResult = collections.namedtuple("AccidentalHitsResult",
                                              ["indices", "ids", "weights"])

_MAX_INT32 = 2 ** 31 - 1
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


def _check_true_classes(ctx, true_classes) -> None:
    num_true = ctx.attrs["num_true"]
    if true_classes.ndim != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "true_classes must be a matrix")
    if true_classes.shape[1] != num_true:
        raise errors.InvalidArgumentError(
            None, ctx.op, "true_classes must have num_true columns, expected: %d was: %d"
            % (true_classes.shape[1], num_true))


def _check_in_range(ctx, true_classes, range_max: int) -> None:
    """TF's check that every true class lies in [0, range_max); the first one outside,
    in row-major order, is named."""
    outside = np.flatnonzero((true_classes < 0) | (true_classes >= range_max))
    if outside.size:
        raise errors.InvalidArgumentError(
            None, ctx.op, "`true_candidate` out of range [0, %d), received %d"
            % (range_max, true_classes.flat[outside[0]]))


def _sample_batch(ctx, sampler, true_classes):
    """TF's BaseCandidateSamplerOp: checks, reserves 512 blocks of the op's stream per
    sampled class, and draws from their words (range_samplers)."""
    n, unique = ctx.attrs["num_sampled"], ctx.attrs["unique"]
    _check_true_classes(ctx, true_classes)
    if unique and n > sampler.range:
        raise errors.InvalidArgumentError(None, ctx.op, "Sampler's range is too small.")
    _check_in_range(ctx, true_classes, sampler.range)
    if unique and n > getattr(sampler, "positive", n):   # TF would draw forever
        raise errors.InvalidArgumentError(
            None, ctx.op, "Cannot sample %d unique candidates: only %d classes have a "
            "positive probability" % (n, sampler.positive))
    # the words a call reads first come from the stream, which computes the next calls'
    # along with them (a sampler's call reads the same stretch of its reservation)
    stream = _philox_stream(ctx)
    counter, first = stream.call_words(range_samplers.BLOCKS_PER_SAMPLE * n,
                                       range_samplers.WordReader.FIRST_BLOCKS)
    sampled, true_expected, sampled_expected = range_samplers.sample_batch(
        sampler, range_samplers.WordReader(stream.key, counter, first), n, unique,
        true_classes.ravel())
    return sampled, true_expected.reshape(true_classes.shape), sampled_expected


# --- the ops -----------------------------------------------------------------------------
for _op in ("UniformCandidateSampler", "LogUniformCandidateSampler",
            "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler",
            "AllCandidateSampler"):
    _declare(_op)
_declare("FixedUnigramCandidateSampler",
         {"vocab_file": "", "distortion": 1.0, "num_reserved_ids": 0, "num_shards": 1,
          "shard": 0, "unigrams": []})


def _range_max(ctx, unigram: bool = False) -> int:
    """The range_max attr, checked as TF's kernel construction does."""
    range_max = ctx.attrs["range_max"]
    if range_max <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "range_max must be positive")
    if unigram and range_max >= _MAX_INT32:
        raise errors.InvalidArgumentError(
            None, ctx.op, "range_max must be less than %d for unigram samplers, got %d"
            % (_MAX_INT32, range_max))
    return range_max


@kernel("UniformCandidateSampler")
def _uniform_kernel(ctx, true_classes):
    return _sample_batch(ctx, range_samplers.UniformSampler(_range_max(ctx)), true_classes)


@kernel("LogUniformCandidateSampler")
def _log_uniform_kernel(ctx, true_classes):
    return _sample_batch(ctx, range_samplers.LogUniformSampler(_range_max(ctx)),
                         true_classes)


def _learned_kernel(ctx, true_classes):
    """Unigram weights learned from the true classes seen so far in this session: every
    class starts at weight 1 and gains 1 per occurrence among `true_classes`, after the
    draw (TF's UnigramSampler)."""
    with _INIT_LOCK:
        if "weights" not in ctx.state:
            ctx.state["weights"] = np.ones(_range_max(ctx, unigram=True), np.int64)
            ctx.state["weights_lock"] = threading.Lock()
    weights, lock = ctx.state["weights"], ctx.state["weights_lock"]
    with lock:
        sampler = range_samplers.UnigramSampler(weights.copy())
    result = _sample_batch(ctx, sampler, true_classes)   # checks the classes' range
    with lock:
        range_samplers.learned_update(weights, true_classes)
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


def _fixed_unigram_sampler(ctx) -> range_samplers.FixedUnigramSampler:
    """TF's FixedUnigramSampler of the op's attrs: reserved ids (weight 0) then
    `unigrams ** distortion` of the ids of this shard (see
    `range_samplers.fixed_unigram_weights`)."""
    a = ctx.attrs
    if not a["vocab_file"] and not a["unigrams"]:
        raise errors.InvalidArgumentError(None, ctx.op,
                                          "Must provide either vocab_file or unigrams.")
    if a["vocab_file"] and a["unigrams"]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Must only provide one of vocab_file and unigrams.")
    counts = _read_vocab_counts(a["vocab_file"]) if a["vocab_file"] else a["unigrams"]
    weights = range_samplers.fixed_unigram_weights(
        counts, a["distortion"], a["num_reserved_ids"], a["num_shards"], a["shard"])
    if weights.size != a["range_max"]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "range is %d must be equal to weights size  %d"
            % (a["range_max"], weights.size))
    return range_samplers.FixedUnigramSampler(weights)


@kernel("FixedUnigramCandidateSampler")
def _fixed_unigram_kernel(ctx, true_classes):
    sampler = ctx.state.get("sampler")
    if sampler is None:
        with _INIT_LOCK:
            sampler = ctx.state.get("sampler")
            if sampler is None:
                sampler = ctx.state["sampler"] = _fixed_unigram_sampler(ctx)
    return _sample_batch(ctx, sampler, true_classes)


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
# the attrs with a minimum in TF's op definitions, in their order there
_ATTR_MINIMUMS = (("num_true", 1), ("num_sampled", 1), ("range_max", 1), ("num_shards", 1),
                  ("shard", 0))


def _check_minimums(op_type: str, attrs: dict) -> None:
    for attr, minimum in _ATTR_MINIMUMS:
        if attrs.get(attr, minimum) < minimum:
            raise ValueError("Attr '%s' of '%s' Op passed %d less than minimum %d."
                             % (attr, op_type, attrs[attr], minimum))


def _sampler(op_type: str, true_classes, attrs: dict, seed, name) -> CandidateSamplerResult:
    # apply_op converts Python values to int64 and, as TF, refuses a tensor of another
    # type with a TypeError
    _check_minimums(op_type, attrs)
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
      ValueError: an int argument below TF's minimum (1; `shard`: 0).
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
      ValueError: an int argument below TF's minimum (1; `shard`: 0).
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
      ValueError: an int argument below TF's minimum (1; `shard`: 0).
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
