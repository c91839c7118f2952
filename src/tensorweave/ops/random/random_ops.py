"""Random ops with TF1's graph-level and op-level seeds.

Seeds follow TF1 exactly (`get_seed`): an op carries the attrs `seed` (graph seed) and
`seed2` (op seed); both 0 means "nondeterministic". Each random op keeps one generator
per (session, op) in `ctx.state`, keyed by (seed, seed2), so

  * the same program with the same seeds gives the same values in every new session
    and process,
  * successive `Session.run` calls continue the sequence (different values),
  * ops with different seeds draw different streams,
  * concurrent runs of the same op draw disjoint values (the generator is locked),
  * in the deterministic mode (runtime/determinism.py) an op with no seeds at all is
    seeded by its name instead of OS entropy.

An op with no seeds at all (outside the deterministic mode) has values TF's only in
distribution: TF seeds its stream at random. RandomUniform, RandomStandardNormal and
TruncatedNormal of float32 and float64 then draw from NumPy's PCG64 generator (uniform
floats on [0, 1), normals, normals redrawn until below 2 in magnitude), whose C loops
are 3-6 times faster than Philox in NumPy passes: an unseeded dropout mask of
[256, 512] takes 0.18 ms instead of 0.55-1.1.

With seeds, RandomUniform, RandomUniformInt, RandomStandardNormal, TruncatedNormal,
RandomShuffle and Multinomial give TF's CPU values bit for bit (philox.py,
tf_sampling.py): the stream is Philox4x32-10 keyed by `seed` with `seed2` in the
counter's high half, and each kernel call reserves the blocks TF's does (256 per value,
one word per step for RandomShuffle: TF's GuardedPhiloxRandom), so successive runs
continue exactly as TF's do. Multinomial's values also depend, as TF's, on the session's
intra-op thread count (tf_sampling.shards). Equal seed attrs give equal values, and the
op seeds derived from the graph seed alone are TF 2.x's (a count per graph,
`_next_derived_seed`; TF 1.x took the graph's op count instead), so `tf.set_random_seed`
alone gives TF's values too. The candidate samplers (range_samplers.py) and gamma,
Poisson, binomial and the parameterized truncated normal (tf_distributions.py) give TF's
values as well, and so do the pooling sequences of fractional pooling
(ops/nn/fractional_pool_ops.py).

Random ops are stateful, so the optimizer never folds or merges them.
"""
from __future__ import annotations

import contextlib
import math
import threading
import weakref
from typing import Callable, NamedTuple, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, get_default_graph, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import Dimension, TensorShape
from tensorweave.ops.random import philox, tf_sampling
from tensorweave.runtime import determinism as _determinism

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


# --- seeds ---------------------------------------------------------------------------
# graph -> the number of op seeds derived so far from its graph seed
_DERIVED_SEED_COUNTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_COUNTS_LOCK = threading.Lock()


def _truncate_seed(seed: int) -> int:
    return int(seed) % _MAXINT32


def _next_derived_seed(graph) -> int:
    """0, 1, 2, ... for the successive ops of `graph` that take their op seed from the
    graph seed: independent of the other ops of the graph, so adding a summary or an
    assertion to a program does not change its random streams."""
    with _COUNTS_LOCK:
        count = _DERIVED_SEED_COUNTS.get(graph, 0)
        _DERIVED_SEED_COUNTS[graph] = count + 1
    return count


@contextlib.contextmanager
def function_seed_count(graph):
    """A block that traces a function into `graph` (a tf.data function): the op seeds
    derived from the graph seed inside it count from 0 on their own and leave the
    graph's count as it was, as in TF, where such a function is a graph of its own
    (with the outer graph's seed)."""
    with _COUNTS_LOCK:
        outer = _DERIVED_SEED_COUNTS.pop(graph, None)
    try:
        yield
    finally:
        with _COUNTS_LOCK:
            if outer is None:
                _DERIVED_SEED_COUNTS.pop(graph, None)
            else:
                _DERIVED_SEED_COUNTS[graph] = outer


@tf_export("get_seed", "random.get_seed")
def get_seed(op_seed: Optional[int]) -> Tuple[Optional[int], Optional[int]]:
    """Returns the (graph seed, op seed) pair a random op should use.

    TF1 rules: with neither a graph seed (`tf.set_random_seed`) nor an op seed the op is
    nondeterministic and `(None, None)` is returned. With only a graph seed, the op seed
    is derived deterministically from the graph: the number of op seeds derived in it
    before (0, 1, 2, ...; the rule of TF 2's compat.v1, where TF 1.15 took the id of the
    last op created). With only an op seed, the graph seed is `DEFAULT_GRAPH_SEED`. Both
    are reduced modulo 2**31 - 1, and (0, 0) becomes (0, 2**31 - 1) since (0, 0) means
    "nondeterministic" to the kernels.

    Args:
      op_seed: the op-level seed, or None.

    Returns:
      A tuple `(graph_seed, op_seed)` of ints, or `(None, None)`.
    """
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = _next_derived_seed(graph)
        seeds = _truncate_seed(global_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        seeds = None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


@tf_export("set_random_seed", "random.set_random_seed")
def set_random_seed(seed: Optional[int]) -> None:
    """Sets the graph-level random seed of the default graph (TF1 `tf.set_random_seed`).

    Random ops created afterwards in this graph derive their seeds from it (see
    `get_seed`), so a program that sets it produces the same random values in every
    new session.

    Args:
      seed: an integer, or None to clear the graph seed.
    """
    get_default_graph().seed = seed


def _seed_attrs(seed: Optional[int]) -> dict:
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


# --- kernel helpers ----------------------------------------------------------------
_INIT_LOCK = threading.Lock()


def _op_seeds(ctx) -> Optional[Tuple[int, int]]:
    """The op's (seed, seed2) attrs; in the deterministic mode an op with neither is
    seeded by its name; None: nondeterministic (seeded from OS entropy)."""
    seed, seed2 = ctx.attrs["seed"], ctx.attrs["seed2"]
    if seed == 0 and seed2 == 0 and _determinism.of_session(ctx.session):
        seed, seed2 = _determinism.name_seed(ctx.op.name)
    if seed == 0 and seed2 == 0:
        return None
    return int(seed), int(seed2)


# A kernel drawing a few values per call with the same shape call after call (a scalar
# draw in a tf.map_fn or while_loop body: random_flip_left_right, random_crop's offsets)
# gets its next calls' values computed in one vectorized pass, at their own counters, so
# the values are those of call-by-call draws: a pass costs about what one call's Python
# rounds cost (8 us), and the calls ahead double from 8 to 256 while the shape holds.
# A candidate sampler's words (64 blocks a call, 20 us a pass) likewise, up to
# _AHEAD_MOST_WORD_BLOCKS blocks ahead (64 calls: 2 us a call).
_AHEAD_MAX_BLOCKS = 4
_AHEAD_FIRST, _AHEAD_MOST = 8, 256
_AHEAD_MOST_WORD_BLOCKS = 4096


class _Ahead(NamedTuple):
    """Values computed for the stream's next calls of one signature."""
    signature: tuple
    values: np.ndarray     # [calls, n]: call k's values, k from `start`
    start: philox.Counter  # the counter of call 0
    step: int              # blocks reserved per call
    taken: list            # [calls taken so far]


def _unchanged(words: np.ndarray) -> np.ndarray:
    return words


class _PhiloxStream:
    """One op's TF generator in one session (TF's GuardedPhiloxRandom): a key and the
    counter of the next free block; `reserve` hands out disjoint ranges under a lock."""

    def __init__(self, seeds: Optional[Tuple[int, int]]):
        # an unseeded op's float draws: NumPy's generator (see the module docstring)
        self.unseeded: Optional[np.random.Generator] = None
        if seeds is None:   # TF draws both seeds at random
            entropy = np.random.SeedSequence()
            seeds = tuple(int(w) for w in entropy.generate_state(2, np.uint64))
            self.unseeded = np.random.Generator(np.random.PCG64(entropy))
        self.key, self._counter = philox.key_counter_of_seeds(*seeds)
        self._lock = threading.Lock()
        self._ahead: Optional[_Ahead] = None
        self._last_signature: Optional[tuple] = None

    def reserve(self, n_blocks: int) -> philox.Counter:
        """The counter for a kernel call using `n_blocks` blocks; the next call starts
        that many blocks further on."""
        with self._lock:
            self._give_back_ahead()
            self._last_signature = None
            counter = self._counter
            self._counter = philox.skip(counter, n_blocks)
        return counter

    def draw(self, n_values: int, n_blocks: int, signature: tuple,
             of_words: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The values of a kernel call drawing `n_values` values (TF reserves 256 blocks
        each) from its first `n_blocks` blocks: `of_words(words [calls, 4 * n_blocks])`
        gives each call's values `[calls, n]`; `signature` says which values those are
        (the same signature, the same function of the words)."""
        most = _AHEAD_MOST if n_blocks <= _AHEAD_MAX_BLOCKS else 1
        return self._call(n_values * philox.SKIP_PER_OUTPUT, n_blocks, signature,
                          of_words, most)[2]

    def call_words(self, step: int, n_blocks: int) -> Tuple[philox.Counter, np.ndarray]:
        """(counter, words) of a kernel call reserving `step` blocks: its counter and
        the words of its first `n_blocks` blocks (uint32 [4 * n_blocks]), the next
        calls' computed ahead when the sizes repeat."""
        start, k, words = self._call(step, n_blocks, ("words", step, n_blocks), _unchanged,
                                     max(1, _AHEAD_MOST_WORD_BLOCKS // n_blocks))
        return philox.skip(start, k * step), words

    def _call(self, step: int, n_blocks: int, signature: tuple,
              of_words: Callable[[np.ndarray], np.ndarray], most: int):
        """(start, k, values) of a kernel call reserving `step` blocks whose values are
        `of_words` of its first `n_blocks` blocks' words, from the values computed
        ahead (up to `most` calls) where the signature repeats: the call is the k-th of
        those drawn from the counter `start`."""
        with self._lock:
            ahead = self._ahead
            if ahead is not None and ahead.signature == signature:
                k = ahead.taken[0]
                if k < len(ahead.values):
                    ahead.taken[0] = k + 1
                    return ahead.start, k, ahead.values[k]
                calls = min(2 * len(ahead.values), most)
                self._ahead = None
            else:
                self._give_back_ahead()
                calls = min(_AHEAD_FIRST, most) if signature == self._last_signature else 1
            self._last_signature = signature
            counter = self._counter
            self._counter = philox.skip(counter, calls * step)
            values = of_words(philox.call_words(self.key, counter, step, calls, n_blocks))
            if calls > 1:
                self._ahead = _Ahead(signature, values, counter, step, [1])
        # each row is handed out once: a consumer writing into it changes no other call's
        return counter, 0, values[0]

    def _give_back_ahead(self) -> None:
        """Drops the values computed ahead; the calls not taken get their counters back."""
        ahead = self._ahead
        if ahead is not None:
            self._counter = philox.skip(ahead.start, ahead.taken[0] * ahead.step)
            self._ahead = None


def _philox_stream(ctx) -> _PhiloxStream:
    stream = ctx.state.get("philox")
    if stream is None:
        with _INIT_LOCK:
            stream = ctx.state.get("philox")
            if stream is None:
                stream = ctx.state["philox"] = _PhiloxStream(_op_seeds(ctx))
    return stream


def _philox_blocks(ctx, n_blocks: int) -> Tuple[philox.Key, philox.Counter]:
    """(key, counter) of this op's Philox stream for a kernel call using `n_blocks`."""
    stream = _philox_stream(ctx)
    return stream.key, stream.reserve(n_blocks)


def _philox_draw(ctx, n_values: int) -> Tuple[philox.Key, philox.Counter]:
    """(key, counter) for a kernel call drawing `n_values` values: TF reserves 256
    blocks per value (GuardedPhiloxRandom::ReserveRandomOutputs)."""
    return _philox_blocks(ctx, n_values * philox.SKIP_PER_OUTPUT)


def _shape_from(shape) -> Tuple[int, ...]:
    shape = np.asarray(shape)
    if shape.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, "shape must be a vector of {int32,int64}, got shape [%s]"
            % ",".join(str(d) for d in shape.shape))
    dims = tuple(shape.tolist())   # Python ints
    if dims and min(dims) < 0:
        raise errors.InvalidArgumentError(None, None, "Dimension %d must be >= 0"
                                          % next(d for d in dims if d < 0))
    return dims


def _shape_input_fn(op, index: int = 0) -> TensorShape:
    """Output shape of ops whose input `index` (0 unless said) is a 1-D shape tensor."""
    s = op.inputs[index].shape
    if s.ndims is not None and s.ndims != 1:
        raise ValueError("Shape must be rank 1 but is rank %d" % s.ndims)
    return tensor_util.constant_value_as_shape(op.inputs[index])


def _check_scalar_input(op, index: int, what: str) -> None:
    s = op.inputs[index].shape
    if s.ndims is not None and s.ndims != 0:
        raise ValueError("%s must be a scalar; got a tensor of shape [%s]"
                         % (what, ",".join("?" if d is None else str(d) for d in s.as_list())))


_FLOAT_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_INT_TYPES = (_dt.int32, _dt.int64)


def _num_values(dims) -> int:
    return math.prod(dims)


def philox_values(sample: Callable, key, counter, dims, dtype: _dt.DType) -> np.ndarray:
    """TF's values of shape `dims` and `dtype` of the float distribution `sample`
    (`philox.uniform`, `normal` or `truncated_normal`) from the stream (key, counter)."""
    return sample(key, counter, _num_values(dims), dtype.as_numpy_dtype).reshape(dims)


def _declare_float_sampler(op_type: str) -> None:
    """Declares a not-differentiable random op of TF's schema `shape: T -> output: dtype`,
    floats of the shape given by the integer tensor `shape`."""
    register_op(op_type, inputs=["shape: T"], outputs=["output: dtype"],
                attrs={"seed": 0, "seed2": 0, "dtype": TypeAttr(_FLOAT_TYPES),
                       "T": TypeAttr(_INT_TYPES)},
                shape=_shape_input_fn, stateful=True)
    not_differentiable(op_type)


# --- RandomUniform -------------------------------------------------------------------
_declare_float_sampler("RandomUniform")


def _few_values(stream: _PhiloxStream, dims, n: int, kind: str, n_blocks: int,
                of_words: Callable, *params) -> Optional[np.ndarray]:
    """The `n` values (shaped `dims`) of a call drawing at most `_AHEAD_MAX_BLOCKS`
    blocks, through the stream's draws ahead (`_PhiloxStream.draw`); None for a larger
    draw."""
    if n_blocks > _AHEAD_MAX_BLOCKS:
        return None
    return stream.draw(
        n, n_blocks, (kind, n) + params,
        lambda w: of_words(w, n, *params)).reshape(dims)


_GENERATOR_DTYPES = (np.float32, np.float64)


def _unseeded_generator(stream: _PhiloxStream, dtype) -> Optional[np.random.Generator]:
    """The NumPy generator of an op with no seeds drawing float32 or float64 values,
    else None (the values are TF's, from Philox)."""
    return stream.unseeded if dtype in _GENERATOR_DTYPES else None


def _truncated_standard_normal(generator: np.random.Generator, dims, dtype) -> np.ndarray:
    """Standard normals with those of magnitude 2 or more drawn again (TF's truncation)."""
    out = generator.standard_normal(dims, dtype)
    flat = out.reshape(-1)
    redraw = np.flatnonzero(np.abs(flat) >= 2)
    while redraw.size:
        flat[redraw] = generator.standard_normal(redraw.size, dtype)
        redraw = redraw[np.abs(flat[redraw]) >= 2]
    return out


def _float_values(ctx, shape, unseeded: Callable, kind: str,
                  of_words: Optional[Callable], sample: Callable) -> np.ndarray:
    """The values of a float sampler's call (RandomUniform, RandomStandardNormal,
    TruncatedNormal), shaped by its `shape` input: `unseeded(generator, dims, dtype)` for
    an op with no seeds; else TF's, from the stream's draws ahead for a few values (where
    `of_words` gives them) or `sample(key, counter, n, dtype)`."""
    dims = _shape_from(shape)
    dtype = ctx.attrs["dtype"].as_numpy_dtype
    stream = _philox_stream(ctx)
    generator = _unseeded_generator(stream, dtype)
    if generator is not None:
        return unseeded(generator, dims, dtype)
    n = _num_values(dims)
    if of_words is not None:
        few = _few_values(stream, dims, n, kind, philox.value_blocks(n, dtype), of_words,
                          dtype)
        if few is not None:
            return few
    counter = stream.reserve(n * philox.SKIP_PER_OUTPUT)
    return philox_values(sample, stream.key, counter, dims, ctx.attrs["dtype"])


@kernel("RandomUniform")
def _random_uniform_kernel(ctx, shape):
    return _float_values(ctx, shape, np.random.Generator.random, "uniform",
                         philox.uniform_of_words, philox.uniform)


def _random_uniform_int_shape(op):
    _check_scalar_input(op, 1, "minval")
    _check_scalar_input(op, 2, "maxval")
    return _shape_input_fn(op)


register_op("RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"],
            outputs=["output: Tout"],
            attrs={"seed": 0, "seed2": 0, "Tout": TypeAttr(_INT_TYPES),
                   "T": TypeAttr(_INT_TYPES)},
            shape=_random_uniform_int_shape, stateful=True)


def _checked_int_bounds(dims, minval, maxval) -> Tuple[int, int, int]:
    """(minval, maxval, number of values) of a uniform integer draw, after TF's checks:
    scalar bounds, and minval < maxval unless nothing is drawn."""
    for what, v in (("minval", minval), ("maxval", maxval)):
        if v.ndim != 0:
            raise errors.InvalidArgumentError(
                None, None, "%s must be 0-D, got shape [%s]"
                % (what, ",".join(str(d) for d in np.shape(v))))
    lo, hi = int(minval), int(maxval)
    n = math.prod(dims)
    if n > 0 and lo >= hi:
        raise errors.InvalidArgumentError(None, None, "Need minval < maxval, got %d >= %d"
                                          % (lo, hi))
    return lo, hi, n


@kernel("RandomUniformInt")
def _random_uniform_int_kernel(ctx, shape, minval, maxval):
    dims = _shape_from(shape)
    lo, hi, n = _checked_int_bounds(dims, minval, maxval)
    dtype = ctx.attrs["Tout"].as_numpy_dtype
    few = _few_values(_philox_stream(ctx), dims, n, "uniform_int",
                      philox.uniform_int_blocks(n, dtype), philox.uniform_int_of_words,
                      lo, hi, dtype)
    if few is not None:
        return few
    key, counter = _philox_draw(ctx, n)
    return philox.uniform_int(key, counter, n, lo, hi, dtype).reshape(dims)


not_differentiable("RandomUniformInt")


# --- RandomStandardNormal, TruncatedNormal ------------------------------------------
_declare_float_sampler("RandomStandardNormal")
_declare_float_sampler("TruncatedNormal")


@kernel("RandomStandardNormal")
def _random_standard_normal_kernel(ctx, shape):
    return _float_values(ctx, shape, np.random.Generator.standard_normal, "normal",
                         philox.normal_of_words, philox.normal)


@kernel("TruncatedNormal")
def _truncated_normal_kernel(ctx, shape):
    return _float_values(ctx, shape, _truncated_standard_normal, "truncated_normal", None,
                         philox.truncated_normal)


# --- RandomShuffle -------------------------------------------------------------------
register_op("RandomShuffle", inputs=["value: T"], outputs=["output: T"],
            attrs={"seed": 0, "seed2": 0}, shape=lambda op: op.inputs[0].shape,
            stateful=True)


@kernel("RandomShuffle")
def _random_shuffle_kernel(ctx, value):
    if np.size(value) <= 1 or value.shape[0] <= 1:   # TF returns it, reserving nothing
        return value
    rows = value.shape[0]
    key, counter = _philox_blocks(ctx, tf_sampling.shuffle_blocks(rows))
    return value[tf_sampling.shuffle_permutation(key, counter, rows)]


not_differentiable("RandomShuffle")


# --- Multinomial ---------------------------------------------------------------------
def _multinomial_shape(op):
    logits, num = op.inputs[0].shape, op.inputs[1].shape
    if logits.ndims is not None and logits.ndims != 2:
        raise ValueError("Shape must be rank 2 but is rank %d" % logits.ndims)
    if num.ndims is not None and num.ndims != 0:
        raise ValueError("Shape must be rank 0 but is rank %d" % num.ndims)
    batch = logits[0].value if logits.ndims is not None else None
    n = tensor_util.constant_value(op.inputs[1])
    if n is not None:
        n = int(n)
        if n < 0:
            raise ValueError("Dimension size, given by scalar input 1, must be non-negative "
                             "but is %d" % n)
    return TensorShape([batch, n])


register_op("Multinomial", inputs=["logits: T", "num_samples: int32"],
            outputs=["output: output_dtype"],
            attrs={"seed": 0, "seed2": 0, "T": TypeAttr(_dt.REAL_NUMBERS),
                   "output_dtype": TypeAttr(_INT_TYPES, default=_dt.int64)},
            shape=_multinomial_shape, stateful=True)


@kernel("Multinomial")
def _multinomial_kernel(ctx, logits, num_samples):
    return _categorical_draws(ctx, logits, num_samples, lambda batch, n: _philox_draw(
        ctx, tf_sampling.multinomial_outputs(batch, n)))


def _categorical_draws(ctx, logits, num_samples, stream):
    """`[batch, num_samples]` class indices drawn from the rows of `logits` (the
    Multinomial kernels); `stream(batch, num_samples)` gives the (key, counter) to draw
    from, called only when something is drawn."""
    if logits.ndim != 2:
        raise errors.InvalidArgumentError(None, None, "logits should be a matrix, got shape [%s]"
                                          % ",".join(str(d) for d in logits.shape))
    if np.ndim(num_samples) != 0:
        raise errors.InvalidArgumentError(None, None, "num_samples should be a scalar.")
    n = int(num_samples)
    batch, classes = logits.shape
    if n < 0:
        raise errors.InvalidArgumentError(None, None, "num_samples should be nonnegative, "
                                          "got %d" % n)
    if batch > 0 and classes <= 0:
        raise errors.InvalidArgumentError(None, None, "num_classes should be positive, got %d"
                                          % classes)
    out_np = ctx.attrs["output_dtype"].as_numpy_dtype
    if batch == 0 or n == 0:
        return np.zeros((batch, n), dtype=out_np)
    key, counter = stream(batch, n)
    return tf_sampling.categorical(key, counter, logits, n,
                                   tf_sampling.intra_op_threads(ctx.session), out_np)


not_differentiable("Multinomial")


# --- builders --------------------------------------------------------------------------
def _shape_tensor(shape) -> Tensor:
    """A 1-D integer tensor "shape" from a shape-like value, as TF's `shape_tensor`: the
    dtype is inferred (int32, int64 for huge dims), so a float or None dimension is a
    TypeError of the op or of the conversion."""
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)):
        if not shape:
            return convert_to_tensor(shape, dtype=_dt.int32, name="shape")
        shape = tuple(d.value if isinstance(d, Dimension) else d for d in shape)
        if any(d is None for d in shape):  # TF: a TypeError, not the ValueError of None
            raise TypeError("Failed to convert elements of %s to Tensor. Consider casting "
                            "elements to a supported type." % (shape,))
    return convert_to_tensor(shape, name="shape")


def _check_float(dtype: _dt.DType, what: str) -> None:
    if dtype not in _FLOAT_TYPES:
        raise TypeError("Value passed to parameter 'dtype' of %s has DataType %s not in list "
                        "of allowed values: float16, bfloat16, float32, float64"
                        % (what, dtype.name))


def _is_python_int(v, value: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v == value


@tf_export("random_uniform", "random.uniform")
def random_uniform(shape, minval=0, maxval=None, dtype=_dt.float32, seed: Optional[int] = None,
                   name: Optional[str] = None) -> Tensor:
    """Outputs random values from a uniform distribution on [minval, maxval).

    Args:
      shape: a 1-D integer Tensor or Python list/tuple: the output shape.
      minval: lower bound (inclusive), a scalar of `dtype`.
      maxval: upper bound (exclusive); defaults to 1 for floats and is required for
        integer dtypes.
      dtype: float16, bfloat16, float32, float64, int32 or int64.
      seed: op-level seed (see `tf.set_random_seed` for how it combines).
      name: name scope of the ops.

    Returns:
      A Tensor of `shape` and `dtype`.

    Raises:
      ValueError: an integer dtype without `maxval`, or an unsupported dtype.
    """
    dtype = _dt.as_dtype(dtype)
    accepted = _FLOAT_TYPES + _INT_TYPES
    if dtype not in accepted:
        raise ValueError("Argument `dtype` got invalid value %s. Accepted dtypes are (%s)."
                         % (dtype, ", ".join(repr(d) for d in accepted)))
    if maxval is None:
        if dtype.is_integer:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        minval_is_zero = _is_python_int(minval, 0)
        maxval_is_one = _is_python_int(maxval, 1)
        if not minval_is_zero or not maxval_is_one or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        attrs = _seed_attrs(seed)
        if dtype.is_integer:
            return apply_op("RandomUniformInt", [shape_t, minval, maxval], attrs,
                            name=scope).outputs[0]
        attrs["dtype"] = dtype
        rnd = apply_op("RandomUniform", [shape_t], attrs, name="RandomUniform").outputs[0]
        if minval_is_zero:
            if maxval_is_one:
                return rnd
            return apply_op("Mul", [rnd, maxval], name="Mul").outputs[0]
        width = apply_op("Sub", [maxval, minval], name="sub").outputs[0]
        scaled = apply_op("Mul", [rnd, width], name="mul").outputs[0]
        return apply_op("AddV2", [scaled, minval], name=scope).outputs[0]


def _normal_like(op_type: str, default_name: str, shape, mean, stddev, dtype, seed,
                 name) -> Tensor:
    dtype = _dt.as_dtype(dtype)
    with name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        _check_float(dtype, op_type)
        attrs = _seed_attrs(seed)
        attrs["dtype"] = dtype
        rnd = apply_op(op_type, [shape_t], attrs, name=op_type).outputs[0]
        scaled = apply_op("Mul", [rnd, stddev_t], name="mul").outputs[0]
        return apply_op("AddV2", [scaled, mean_t], name=scope).outputs[0]


@tf_export("random_normal", "random.normal")
def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed: Optional[int] = None,
                  name: Optional[str] = None) -> Tensor:
    """Outputs random values from a normal distribution.

    Args:
      shape: a 1-D integer Tensor or Python list/tuple: the output shape.
      mean: the mean, a scalar (or broadcastable Tensor) of `dtype`.
      stddev: the standard deviation, a scalar (or broadcastable Tensor) of `dtype`.
      dtype: a floating dtype.
      seed: op-level seed (see `tf.set_random_seed`).
      name: name of the result (and scope of the ops).

    Returns:
      A Tensor of `shape`: `RandomStandardNormal * stddev + mean`.

    Raises:
      TypeError: `dtype` is not floating.
    """
    return _normal_like("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype,
                        seed, name)


@tf_export("truncated_normal", "random.truncated_normal")
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32,
                     seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Outputs random values from a truncated normal distribution.

    Values more than two standard deviations from the mean are dropped and re-drawn.

    Args:
      shape: a 1-D integer Tensor or Python list/tuple: the output shape.
      mean: the mean of the (untruncated) normal distribution.
      stddev: its standard deviation.
      dtype: a floating dtype.
      seed: op-level seed (see `tf.set_random_seed`).
      name: name of the result (and scope of the ops).

    Returns:
      A Tensor of `shape` with values in [mean - 2 stddev, mean + 2 stddev].

    Raises:
      TypeError: `dtype` is not floating.
    """
    return _normal_like("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype,
                        seed, name)


@tf_export("random_shuffle", "random.shuffle")
def random_shuffle(value, seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Randomly shuffles a tensor along its first dimension.

    Args:
      value: a Tensor (of any dtype) to shuffle.
      seed: op-level seed (see `tf.set_random_seed`).
      name: op name.

    Returns:
      A Tensor of the same shape and dtype, its slices along dimension 0 permuted.
    """
    value = convert_to_tensor(value, name="value")
    return apply_op("RandomShuffle", [value], _seed_attrs(seed),
                    name=name or "RandomShuffle").outputs[0]


def _multinomial(logits, num_samples, output_dtype, seed) -> Tensor:
    logits = convert_to_tensor(logits, name="logits")
    attrs = _seed_attrs(seed)
    attrs["output_dtype"] = _dt.as_dtype(output_dtype) if output_dtype else _dt.int64
    # num_samples is converted by the op (a constant "Multinomial/num_samples"; an int64
    # Tensor is a TypeError, as in TF)
    return apply_op("Multinomial", [logits, num_samples], attrs,
                    name="Multinomial").outputs[0]


@tf_export("multinomial", "random.multinomial")
def multinomial(logits, num_samples, seed: Optional[int] = None, name: Optional[str] = None,
                output_dtype=None) -> Tensor:
    """Draws samples from a categorical distribution (deprecated alias of categorical).

    Args:
      logits: 2-D Tensor `[batch_size, num_classes]` of unnormalized log-probabilities.
      num_samples: 0-D int: number of samples per row.
      seed: op-level seed (see `tf.set_random_seed`).
      name: name scope.
      output_dtype: int32 or int64 (default int64).

    Returns:
      A `[batch_size, num_samples]` Tensor of class indices.
    """
    with name_scope(name, "multinomial", [logits]):
        return _multinomial(logits, num_samples, output_dtype, seed)


@tf_export("random.categorical")
def categorical(logits, num_samples, dtype=None, seed: Optional[int] = None,
                name: Optional[str] = None) -> Tensor:
    """Draws samples from a categorical distribution.

    Args:
      logits: 2-D Tensor `[batch_size, num_classes]` of unnormalized log-probabilities.
      num_samples: 0-D int: number of samples per row.
      dtype: int32 or int64 (default int64) for the result.
      seed: op-level seed (see `tf.set_random_seed`).
      name: name scope.

    Returns:
      A `[batch_size, num_samples]` Tensor of class indices.
    """
    if dtype is not None and _dt.as_dtype(dtype) not in _INT_TYPES:
        raise ValueError("Argument `dtype` got invalid value %s. Accepted dtypes are "
                         "(tf.int32, tf.int64)." % _dt.as_dtype(dtype))
    with name_scope(name, "categorical", [logits]):
        return _multinomial(logits, num_samples, dtype, seed)

