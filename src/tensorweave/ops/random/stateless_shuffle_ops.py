"""Stateless shuffles (TF 2's additions kept in tf.compat.v1): RandomIndexShuffle
(`tf.random.experimental.index_shuffle`) and StatelessShuffle
(`tf.random.experimental.stateless_shuffle`), with TF's values.

RandomIndexShuffle maps an index to its position in a permutation of [0, max_index]
fixed by a seed, without building the permutation (simon_shuffle.py). StatelessShuffle
is RandomShuffle's Fisher-Yates (tf_sampling.py) on the Philox stream (key, counter) of
the V2 stateless ops, which `stateless_shuffle` derives from a seed as TF does.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.math.quantize_ops import no_gradient
from tensorweave.ops.random import philox, simon_shuffle, tf_sampling
from tensorweave.ops.random.stateless_random_ops import AUTO_SELECT as _AUTO_SELECT, \
    PHILOX as _PHILOX, THREEFRY as _THREEFRY, alg_id

_INDEX_TYPES = (_dt.int32, _dt.uint32, _dt.int64, _dt.uint64)
_SEED_PAD = 498247692   # TF's first seed word of index_shuffle's three


# --- RandomIndexShuffle -------------------------------------------------------------------
def _rank_at_most(shape: TensorShape, rank: int) -> None:
    if shape.ndims is not None and shape.ndims > rank:
        raise ValueError("Shape must be at most rank %d but is rank %d" % (rank, shape.ndims))


def _dim(shape: TensorShape, i: int) -> int:
    """Dimension i, -1 when unknown (TF's InferenceContext::Value)."""
    value = shape[i].value
    return -1 if value is None else value


def _check_index_shuffle_seed(seed: TensorShape) -> None:
    if seed.ndims is None:
        return
    if seed.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    _rank_at_most(seed, 2)
    if _dim(seed, seed.ndims - 1) != 3:
        raise ValueError("Seed must have shape [3] or [n, 3] but got [%s]."
                         % ", ".join(str(_dim(seed, i)) for i in range(seed.ndims)))


def _index_shuffle_shape(op) -> TensorShape:
    """TF's: a scalar when all inputs are unbatched, else a vector whose length the
    batched inputs agree on (unknown when the ranks leave it open)."""
    index, seed, max_index = (t.shape for t in op.inputs)
    _rank_at_most(index, 1)
    _check_index_shuffle_seed(seed)
    _rank_at_most(max_index, 1)
    ranks = (index.ndims, seed.ndims, max_index.ndims)
    if ranks == (0, 1, 0):
        return TensorShape([])
    if not (ranks[0] == 1 or ranks[1] == 2 or ranks[2] == 1):
        return TensorShape(None)
    size = _dim(index, 0) if ranks[0] == 1 else -1
    if ranks[1] == 2:
        seeds = _dim(seed, 0)
        if size == -1:
            size = seeds
        elif size > 1 and seeds > 1 and seeds != size:
            raise ValueError("Seed has shape [%d, 3] but must have shape [%d, 3]. since "
                             "index had shape [%d]." % (seeds, size, size))
    if ranks[2] == 1:
        bounds = _dim(max_index, 0)
        if size == -1:
            size = bounds
        elif size > 1 and bounds > 1 and bounds != size:
            raise ValueError("Max index has shape [%d] but must have shape [%d]."
                             % (bounds, size))
    return TensorShape([None if size == -1 else size])


register_op("RandomIndexShuffle", inputs=["index: dtype", "seed: Tseed", "max_index: dtype"],
            outputs=["output: dtype"],
            attrs={"rounds": 4, "dtype": TypeAttr(_INDEX_TYPES),
                   "Tseed": TypeAttr(_INDEX_TYPES)},
            shape=_index_shuffle_shape)
not_differentiable("RandomIndexShuffle")


def _shape_string(a: np.ndarray) -> str:
    return "[%s]" % ",".join(str(d) for d in a.shape)


def _checked_batch(ctx, index, seed, max_index) -> int:
    """The number of outputs, after TF's checks of the three inputs' shapes."""
    n = max(index.size, max_index.size, seed.size // 3)
    if not (index.ndim == 0 or index.shape == (n,)):
        # TF's message, typo included
        raise errors.InvalidArgumentError(None, ctx.op, "Index bust be a scalar or vector.")
    if not (seed.shape == (3,) or seed.shape == (n, 3)):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Seed must be a vector of size [3] or a matrix of size [%d, 3] "
            "but got %s." % (n, _shape_string(seed)))
    if not (max_index.ndim == 0 or max_index.shape == (n,)):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Maxval must be a scalar or a vector of the same size as index "
            "but got %s" % _shape_string(max_index))
    return n


def _check_bounds(ctx, index: np.ndarray, max_index: np.ndarray) -> None:
    """TF's checks, element by element in order: index >= 0, max_index >= 0, and
    index <= max_index."""
    bad = (index < 0) | (max_index < 0) | (index > max_index)
    if not bad.any():
        return
    i = int(np.argmax(bad))
    if index[i] < 0:
        message = "index must be >= 0 but was %d" % index[i]
    elif max_index[i] < 0:
        message = "max_index must be >= 0 but was %d" % max_index[i]
    else:
        message = "max_index must be >= index, but %d < %d" % (max_index[i], index[i])
    raise errors.InvalidArgumentError(None, ctx.op, message)


@kernel("RandomIndexShuffle")
def _random_index_shuffle_kernel(ctx, index, seed, max_index):
    index, seed, max_index = np.asarray(index), np.asarray(seed), np.asarray(max_index)
    n = _checked_batch(ctx, index, seed, max_index)
    rounds = ctx.attrs["rounds"]
    if rounds < 4 or rounds % 2:
        # TF's cipher then reads round keys past the end of its schedule
        raise errors.InvalidArgumentError(
            None, ctx.op, "RandomIndexShuffle supports an even number of rounds of at "
            "least 4; got rounds=%d" % rounds)
    flat_index = np.broadcast_to(index.ravel() if index.ndim else index, (n,))
    flat_max = np.broadcast_to(max_index.ravel() if max_index.ndim else max_index, (n,))
    _check_bounds(ctx, flat_index, flat_max)
    keys = np.broadcast_to(seed.reshape(-1, 3), (n, 3)).astype(np.uint64) & \
        np.uint64(0xFFFFFFFF)   # each seed value cast to uint32, as TF's
    out = simon_shuffle.index_shuffle(flat_index.astype(np.uint64), keys,
                                      flat_max.astype(np.uint64), rounds)
    out = out.astype(index.dtype)
    all_scalar = index.ndim == 0 and seed.ndim == 1 and max_index.ndim == 0
    return out.reshape(()) if all_scalar else out


@tf_export("random_index_shuffle")
def random_index_shuffle(index, seed, max_index, rounds: int = 4,
                         name: Optional[str] = None) -> Tensor:
    """The RandomIndexShuffle op: the position of `index` in a permutation of
    [0, max_index] fixed by the three seed words.

    Args:
      index: int32, uint32, int64 or uint64 scalar or vector, in [0, max_index].
      seed: int32/uint32/int64/uint64 Tensor of shape [3] or [n, 3].
      max_index: scalar or vector of the dtype of `index`: the inclusive bound(s).
      rounds: rounds of the cipher: even, at least 4.
      name: op name.

    Returns:
      A scalar (all inputs unbatched) or vector of the dtype of `index`.

    Raises:
      ValueError: inputs of incompatible shapes.
      TypeError: inputs of unsupported dtypes.
    """
    return apply_op("RandomIndexShuffle", [index, seed, max_index], {"rounds": rounds},
                    name=name or "RandomIndexShuffle").outputs[0]


@tf_export("random.experimental.index_shuffle")
def index_shuffle(index, seed, max_index) -> Tensor:
    """Outputs the position of `index` in a permutation of [0, ..., max_index] that
    `seed` determines (TF's values: `index_shuffle(tf.range(4), [5, 9], 3)` is
    `[2, 0, 1, 3]`).

    Args:
      index: an integer scalar or vector with values in [0, max_index].
      seed: a Tensor of shape [2] of dtype int32, uint32, int64 or uint64 (TF prepends
        a fixed third word; a batch of seeds [n, 2] is padded along its first axis,
        as in TF, so only [n, 3] batches of seeds build).
      max_index: a non-negative Tensor of the shape and dtype of `index`: the
        inclusive upper bound.

    Returns:
      A Tensor of the dtype of `index`: a scalar when all inputs are unbatched, else a
      vector.

    Raises:
      ValueError: a seed of a shape other than [2] (or of unknown length).
      TypeError: inputs of unsupported dtypes.
    """
    from tensorweave.ops.array.array_pad_ops import pad
    seed = convert_to_tensor(seed)
    # TF pads the first axis whatever the rank (unknown: as a vector)
    paddings = [[1, 0]] + ((seed.shape.ndims or 1) - 1) * [[0, 0]]
    seed = pad(seed, paddings, constant_values=_SEED_PAD)
    return random_index_shuffle(index, seed=seed, max_index=max_index, rounds=4)


# --- StatelessShuffle -----------------------------------------------------------------------
register_op("StatelessShuffle", inputs=["value: T", "key: uint64", "counter: uint64",
                                        "alg: int32"],
            outputs=["output: T"], attrs={"T": TypeAttr()},
            shape=lambda op: op.inputs[0].shape)
# TF registers no gradient: tf.gradients through the op raises LookupError
gradient("StatelessShuffle")(no_gradient)


def _checked_philox(ctx, key, counter, alg) -> tuple:
    """TF's Philox (key, counter) of the op's inputs, after TF's checks in its order:
    alg a scalar, key of shape [1], counter long enough, the algorithm Philox."""
    alg = np.asarray(alg)
    if alg.ndim != 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input 3 (0-based) must have shape [], not %s" % _shape_string(alg))
    alg_id = _PHILOX if int(alg) == _AUTO_SELECT else int(alg)
    key, counter = np.asarray(key), np.asarray(counter)
    if key.shape != (1,):
        raise errors.InvalidArgumentError(
            None, ctx.op, "key must have shape [1], not %s. (Note that batched keys are not "
            "supported yet.)" % _shape_string(key))
    # TF's check asks for as many counter words as the algorithm's id; its Philox then
    # reads two, so here Philox asks for two
    needed = 2 if alg_id == _PHILOX else alg_id
    if counter.ndim != 1 or counter.size < needed:
        raise errors.InvalidArgumentError(
            None, ctx.op, "counter must be a vector with length at least %d; got shape: %s. "
            "(Note that batched counters are not supported yet.)"
            % (needed, _shape_string(counter)))
    if alg_id != _PHILOX:
        raise errors.InvalidArgumentError(None, ctx.op, "Unsupported algorithm id: %d"
                                          % alg_id)
    return philox.key_counter_of_words(int(key[0]), counter[:2].tolist())


@kernel("StatelessShuffle")
def _stateless_shuffle_kernel(ctx, value, key, counter, alg):
    key, counter = _checked_philox(ctx, key, counter, alg)
    value = np.asarray(value)
    if value.size <= 1 or value.shape[0] <= 1:   # TF returns the input as it is
        return value
    return value[tf_sampling.shuffle_permutation(key, counter, value.shape[0])]


def key_counter_alg(seed, alg) -> tuple:
    """TF's (key, counter, alg) Tensors of the V2 stateless ops for a seed of shape [2]:
    Philox's scrambled seed for "philox" and "auto_select" (the CPU's choice), and for
    "threefry" the seed's two words as the key and a one-word zero counter, which TF's
    CPU kernels reject.

    Raises:
      TypeError, ValueError: as `alg_id`, or a seed that is not int32/int64.
    """
    from tensorweave.ops.array.array_fill_ops import zeros
    from tensorweave.ops.array.array_ops import reshape
    from tensorweave.ops.math import bitwise_ops
    from tensorweave.ops.math.math_ops import cast
    from tensorweave.ops.random.stateless_random_ops import _seed_tensor
    alg_number = alg_id(alg)
    seed = _seed_tensor(seed)
    if alg_number == _THREEFRY:
        words = cast(cast(seed, _dt.uint32), _dt.uint64)
        high = bitwise_ops.left_shift(words[1], convert_to_tensor(32, dtype=_dt.uint64))
        key = reshape(bitwise_ops.bitwise_or(words[0], high), [1])
        counter = zeros([1], _dt.uint64)
    else:
        key, counter = apply_op("StatelessRandomGetKeyCounter", [seed],
                                name="StatelessRandomGetKeyCounter").outputs
    return key, counter, convert_to_tensor(alg_number, dtype=_dt.int32, name="alg")


@tf_export("random.experimental.stateless_shuffle")
def stateless_shuffle(value, seed, alg="auto_select", name: Optional[str] = None) -> Tensor:
    """Shuffles `value` along its first dimension, deterministically in `seed` (TF's
    values: TF's RandomShuffle on the seed's Philox stream).

    Args:
      value: a Tensor of any dtype.
      seed: an int32/int64 Tensor of shape [2].
      alg: "auto_select", "philox" (the same stream on CPU), "threefry" (rejected at
        run time, as by TF's CPU kernel), an `Algorithm` or its id.
      name: name scope of the ops.

    Returns:
      A Tensor of the shape and dtype of `value`, its slices along dimension 0 permuted.

    Raises:
      ValueError: an unknown `alg`, or a seed whose shape is not [2].
      TypeError: `alg` of an unsupported type, or a seed that is not int32/int64.
    """
    with name_scope(name, "stateless_shuffle", [value, seed]) as scope:
        key, counter, alg = key_counter_alg(seed, alg)
        value = convert_to_tensor(value, name="value")
        del scope   # the op is "<scope>/StatelessShuffle", as TF names it
        return apply_op("StatelessShuffle", [value, key, counter, alg],
                        name="StatelessShuffle").outputs[0]
