"""`tf.random.Generator`: a counter-based random number generator whose state is a
variable (TF's stateful_random_ops, in its graph-mode form).

The state is an int64 vector: for Philox `[counter_lo, counter_hi, key]`, for ThreeFry
`[counter, key]`. Each draw of n values runs RngReadAndSkip, which returns the state and
advances the variable's counter by 256 n (TF's skip, so `g.state` moves exactly as in TF),
then hands key and counter to a StatelessRandom*V2 op, whose values are a function of
(key, counter). For Philox (and AUTO_SELECT, Philox on CPU) the V2 ops give TF's values
bit for bit (philox.py), so a Generator's draws are TF's, run after run (when its draws
run one after another: the order of two draws in one step is unspecified, here as in
TF). TF's CPU kernels do not implement ThreeFry; here a ThreeFry state draws from
Philox keyed by its key with its one-word counter: deterministic, not ThreeFry's
values. StatefulRandomBinomial runs TF's binomial sampler (that of
StatelessRandomBinomial) on the state's key and counter, and moves the counter on by
TF's reservation (Philox only, as TF's kernel). TF's kernel loses that move when the
variable's buffer is shared (its first run after the initializer, or a run beside a read
of the state): here the state always moves, as it does in TF once the buffer is not
shared (after any other draw, or `g.skip(0)`).
"""
from __future__ import annotations

import enum
import threading
from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.random import philox, stateless_random_ops
from tensorweave.ops.random.random_ops import _FLOAT_TYPES, _INT_TYPES, \
    _check_scalar_input, _checked_int_bounds, _num_values, _shape_from, _shape_input_fn, \
    philox_values

_FULL_INT_TYPES = (_dt.int32, _dt.int64, _dt.uint32, _dt.uint64)
_BINOMIAL_TYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)
_WORD = 1 << 64
_SKIP_PER_VALUE = 256  # TF's RngReadAndSkip advances the counter by 256 per value


@tf_export("random.Algorithm", "random.experimental.Algorithm")
class Algorithm(enum.Enum):
    """The counter-based RNG algorithms of `tf.random.Generator`."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


_STATE_SIZE = {1: 3, 2: 2, 3: 3}    # AUTO_SELECT is Philox
_COUNTER_SIZE = {1: 2, 2: 1, 3: 2}


def _as_signed(word: int) -> int:
    """A 64-bit word as the int64 holding its bits."""
    word &= _WORD - 1
    return word - _WORD if word >= _WORD // 2 else word


def _state_from_seed(seed, alg: int):
    """TF's state of a seed: a Python int split into 64-bit words, low word first (a
    negative int sign-extends); a vector cut to the state size and zero-padded in front.
    Returns an int64 NumPy array, or a Tensor when `seed` is one."""
    size = _STATE_SIZE[alg]
    if isinstance(seed, Tensor):
        from tensorweave.ops.array import array_join_ops, array_ops
        from tensorweave.ops.array.array_fill_ops import zeros
        from tensorweave.ops.math import math_binary, math_ops
        words = array_ops.reshape(math_ops.cast(seed, _dt.int64), [-1])[:size]
        padding = zeros([math_binary.maximum(size - array_ops.size(words), 0)], _dt.int64)
        state = array_join_ops.concat([padding, words], 0)
        state.set_shape([size])
        return state
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        words = [(seed >> (64 * i)) & (_WORD - 1) for i in range(size)]
    else:
        words = [int(w) for w in np.reshape(seed, [-1])][:size]
    words = [0] * (size - len(words)) + words
    return np.array([_as_signed(w) for w in words], np.int64)


def _check_state_shape(shape: TensorShape, alg: int) -> None:
    shape.assert_is_compatible_with([_STATE_SIZE[alg]])


def _state_tensor(value) -> Tensor:
    """`value` (ints up to 2**64 - 1, taken as their bits) as an int64 Tensor."""
    if isinstance(value, Tensor):
        from tensorweave.ops.math import math_ops
        return math_ops.cast(value, _dt.int64)
    words = np.reshape(np.asarray(value, dtype=object), [-1])
    signed = np.array([_as_signed(int(w)) for w in words], np.int64)
    return convert_to_tensor(signed.reshape(np.shape(value)), dtype=_dt.int64)


# --- RngReadAndSkip -------------------------------------------------------------------------
register_op("RngReadAndSkip", inputs=["resource: resource", "alg: int32", "delta: uint64"],
            outputs=["value: int64"], shape=lambda op: TensorShape([3]), stateful=True)
not_differentiable("RngReadAndSkip")


def _advanced(state: np.ndarray, alg: int, steps: int) -> np.ndarray:
    """`state` with its counter (1 or 2 words, low first) moved on by `steps`."""
    n_words = _COUNTER_SIZE[alg]
    words = [int(w) & (_WORD - 1) for w in state[:n_words]]
    counter = sum(w << (64 * i) for i, w in enumerate(words)) + steps
    new = state.copy()
    for i in range(n_words):
        new[i] = _as_signed(counter >> (64 * i))
    return new


def _read_and_skip(ctx, handle, alg: int, steps: int) -> np.ndarray:
    """The generator state in the variable `handle`, as it was before its counter moved
    on by `steps` (atomically, under the variable's lock)."""
    from tensorweave.ops.state.resource_variable_ops import current_value, lookup_variable
    if alg not in _STATE_SIZE:
        raise errors.InvalidArgumentError(None, ctx.op, "Unsupported algorithm id: %d" % alg)
    var = lookup_variable(handle, ctx.op)
    with var.lock:
        state = current_value(var, handle, ctx.op)
        if state.dtype != np.int64 or state.ndim != 1 or state.size < _STATE_SIZE[alg]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "The RNG state must be an int64 vector of size at least %d; "
                "got %s of shape %s" % (_STATE_SIZE[alg], state.dtype, list(state.shape)))
        var.publish(_advanced(state, alg, steps))
    return state


@kernel("RngReadAndSkip")
def _rng_read_and_skip_kernel(ctx, handle, alg, delta):
    alg = int(alg)
    state = _read_and_skip(ctx, handle, alg, int(delta) * _SKIP_PER_VALUE)
    out = np.zeros(3, np.int64)
    out[:_STATE_SIZE[alg]] = state[:_STATE_SIZE[alg]]
    return out


# --- StatelessRandom*V2: values from (key, counter) ------------------------------------------
def _key_counter_words(ctx, key, counter, alg):
    """The 64-bit key and the counter words of the algorithm (1 or 2, low first) of the
    op's inputs, checked."""
    alg = int(alg)
    if alg not in _COUNTER_SIZE:
        raise errors.InvalidArgumentError(None, ctx.op, "Unsupported algorithm id: %d" % alg)
    key, counter = np.asarray(key).ravel(), np.asarray(counter).ravel()
    if key.size != 1 or counter.size < _COUNTER_SIZE[alg]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "key must have 1 element and counter at least %d, got %d and %d"
            % (_COUNTER_SIZE[alg], key.size, counter.size))
    return int(key[0]), [int(c) for c in counter[:_COUNTER_SIZE[alg]]]


def _philox_stream(ctx, key, counter, alg):
    """TF's Philox (key, counter) of the op's inputs; a ThreeFry one-word counter is
    the low half (see the module docstring)."""
    key, counter = _key_counter_words(ctx, key, counter, alg)
    return philox.key_counter_of_words(key, (counter + [0])[:2])


def _key_counter_shape(op) -> TensorShape:
    for index, what in ((1, "key"), (2, "counter")):
        if op.inputs[index].shape.ndims not in (None, 1):
            raise ValueError("%s must be a vector; got shape %s"
                             % (what, op.inputs[index].shape))
    return _shape_input_fn(op)


def _uniform_int_v2_shape(op) -> TensorShape:
    _check_scalar_input(op, 4, "minval")
    _check_scalar_input(op, 5, "maxval")
    return _key_counter_shape(op)


def _declare_v2(op_type: str, types, default, extra_inputs=(), shape=_key_counter_shape):
    """A not-differentiable op `(shape, key, counter, alg, *extra) -> output: dtype`."""
    register_op(op_type, inputs=["shape: Tshape", "key: uint64", "counter: uint64",
                                 "alg: int32"] + list(extra_inputs),
                outputs=["output: dtype"],
                attrs={"dtype": TypeAttr(types, default=default),
                       "Tshape": TypeAttr(_INT_TYPES, default=_dt.int32)},
                shape=shape)
    not_differentiable(op_type)


_declare_v2("StatelessRandomUniformV2", _FLOAT_TYPES, _dt.float32)
_declare_v2("StatelessRandomNormalV2", _FLOAT_TYPES, _dt.float32)
_declare_v2("StatelessTruncatedNormalV2", _FLOAT_TYPES, _dt.float32)
_declare_v2("StatelessRandomUniformIntV2", _FULL_INT_TYPES, None,
            ["minval: dtype", "maxval: dtype"], shape=_uniform_int_v2_shape)
_declare_v2("StatelessRandomUniformFullIntV2", _FULL_INT_TYPES, _dt.uint64)


def _float_v2(ctx, sample, shape, key, counter, alg) -> np.ndarray:
    return philox_values(sample, *_philox_stream(ctx, key, counter, alg), _shape_from(shape),
                         ctx.attrs["dtype"])


@kernel("StatelessRandomUniformV2")
def _uniform_v2_kernel(ctx, shape, key, counter, alg):
    return _float_v2(ctx, philox.uniform, shape, key, counter, alg)


@kernel("StatelessRandomNormalV2")
def _normal_v2_kernel(ctx, shape, key, counter, alg):
    return _float_v2(ctx, philox.normal, shape, key, counter, alg)


@kernel("StatelessTruncatedNormalV2")
def _truncated_normal_v2_kernel(ctx, shape, key, counter, alg):
    return _float_v2(ctx, philox.truncated_normal, shape, key, counter, alg)


@kernel("StatelessRandomUniformIntV2")
def _uniform_int_v2_kernel(ctx, shape, key, counter, alg, minval, maxval):
    dims = _shape_from(shape)
    lo, hi, n = _checked_int_bounds(dims, minval, maxval)
    values = philox.uniform_int(*_philox_stream(ctx, key, counter, alg), n, lo, hi,
                                ctx.attrs["dtype"].as_numpy_dtype)
    return values.reshape(dims)


@kernel("StatelessRandomUniformFullIntV2")
def _full_int_v2_kernel(ctx, shape, key, counter, alg):
    return stateless_random_ops.full_int_values(ctx, _shape_from(shape),
                                                *_philox_stream(ctx, key, counter, alg))


# --- seed -> (key, counter, alg): how TF 2's tf.random.stateless_* feed the V2 ops ---------
def _seed_shape(op):
    stateless_random_ops._check_seed_shape(op, 0)
    return [TensorShape([1]), TensorShape([2])]


register_op("StatelessRandomGetKeyCounter", inputs=["seed: Tseed"],
            outputs=["key: uint64", "counter: uint64"],
            attrs={"Tseed": TypeAttr((_dt.int32, _dt.int64), default=_dt.int64)},
            shape=_seed_shape)
register_op("StatelessRandomGetKeyCounterAlg", inputs=["seed: Tseed"],
            outputs=["key: uint64", "counter: uint64", "alg: int32"],
            attrs={"Tseed": TypeAttr((_dt.int32, _dt.int64), default=_dt.int64)},
            shape=lambda op: _seed_shape(op) + [TensorShape([])])
register_op("StatelessRandomGetAlg", outputs=["alg: int32"],
            shape=lambda op: TensorShape([]))
for _op_type in ("StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg",
                 "StatelessRandomGetAlg"):
    not_differentiable(_op_type)


def _key_counter_of_seed(ctx, seed):
    """TF's key [1] and counter [2] (uint64) of the seed: the Philox stream of the
    stateless ops (philox.key_counter_of_stateless_seed) as 64-bit words."""
    (k0, k1), (c0, c1, c2, c3) = stateless_random_ops._philox_of_seed(ctx, seed)
    return (np.array([k0 | k1 << 32], np.uint64),
            np.array([c0 | c1 << 32, c2 | c3 << 32], np.uint64))


@kernel("StatelessRandomGetKeyCounter")
def _get_key_counter_kernel(ctx, seed):
    return _key_counter_of_seed(ctx, seed)


@kernel("StatelessRandomGetKeyCounterAlg")
def _get_key_counter_alg_kernel(ctx, seed):
    return _key_counter_of_seed(ctx, seed) + (np.int32(Algorithm.PHILOX.value),)


@kernel("StatelessRandomGetAlg")
def _get_alg_kernel(ctx):
    # the algorithm TF picks on CPU
    return np.int32(Algorithm.PHILOX.value)


# --- StatefulRandomBinomial -----------------------------------------------------------------
register_op("StatefulRandomBinomial",
            inputs=["resource: resource", "algorithm: int64", "shape: S", "counts: T",
                    "probs: T"],
            outputs=["output: dtype"],
            attrs={"S": TypeAttr(_INT_TYPES), "T": TypeAttr(_BINOMIAL_TYPES, default=_dt.float64),
                   "dtype": TypeAttr(_BINOMIAL_TYPES, default=_dt.int64)},
            shape=lambda op: _shape_input_fn(op, 2), stateful=True)
not_differentiable("StatefulRandomBinomial")


def _binomial_reserve(dims, param_rank: int) -> int:
    """The blocks TF's StatefulRandomBinomial moves the counter on by: 256 per value of
    its reservation `num_batches * 200 * (samples_per_batch + 3) / 4` (the batches the
    trailing `param_rank` dimensions, the samples per batch the leading ones), not the
    blocks it draws (256 per BTRS value, 42 per inversion value)."""
    split = len(dims) - param_rank
    samples_per_batch, num_batches = _num_values(dims[:split]), _num_values(dims[split:])
    return num_batches * 200 * (samples_per_batch + 3) // 4 * _SKIP_PER_VALUE


@kernel("StatefulRandomBinomial")
def _stateful_binomial_kernel(ctx, handle, algorithm, shape, counts, probs):
    counts, probs, dims = stateless_random_ops.binomial_params(ctx, shape, counts, probs)
    if np.ndim(algorithm) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "algorithm must be of shape [], not "
                                          "%s" % list(np.shape(algorithm)))
    alg = int(algorithm)
    if alg != Algorithm.PHILOX.value:   # TF's kernel takes Philox only
        raise errors.InvalidArgumentError(None, ctx.op, "Unsupported algorithm id: %d" % alg)
    state = _read_and_skip(ctx, handle, alg, _binomial_reserve(dims, counts.ndim))
    if _num_values(dims) == 0:
        return np.zeros(dims, ctx.attrs["dtype"].as_numpy_dtype)
    key, counter = philox.key_counter_of_words(int(state[2]), state[:2].tolist())
    return stateless_random_ops.binomial_values(ctx, dims, counts, probs, key, counter)


# --- NonDeterministicInts: the state of from_non_deterministic_state --------------------------
register_op("NonDeterministicInts", inputs=["shape: shape_dtype"], outputs=["output: dtype"],
            attrs={"dtype": TypeAttr(_FULL_INT_TYPES, default=_dt.int64),
                   "shape_dtype": TypeAttr(_INT_TYPES, default=_dt.int64)},
            shape=_shape_input_fn, stateful=True)
not_differentiable("NonDeterministicInts")


@kernel("NonDeterministicInts")
def _non_deterministic_ints_kernel(ctx, shape):
    bits = np.random.Philox().random_raw(_shape_from(shape))  # seeded from OS entropy
    return bits.astype(ctx.attrs["dtype"].as_numpy_dtype)


# --- the Generator ----------------------------------------------------------------------------
@tf_export("random.Generator", "random.experimental.Generator")
class Generator:
    """A random number generator whose state is a non-trainable int64 variable
    (`random_generator/StateVar`), so that its draws continue from run to run and
    the state is checkpointed with the other variables.

    Each sampling method builds ops that, when run, read the state and advance it (see
    the module docstring), so successive runs draw new values, and two generators made
    from the same seed draw the same values.
    """

    @classmethod
    def from_state(cls, state, alg) -> "Generator":
        """A generator starting from `state` (see `__init__`)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed, alg=None) -> "Generator":
        """A generator whose state is made from `seed` (an int of any size, or a vector of
        64-bit words); equal seeds give equal streams.

        Args:
          seed: the seed.
          alg: `tf.random.Algorithm`, "philox", "threefry" or their ids (default Philox).
        """
        alg = stateless_random_ops.alg_id(alg if alg is not None else Algorithm.PHILOX)
        return cls(state=_state_from_seed(seed, alg), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> "Generator":
        """A generator whose state is drawn from OS entropy when its variable is
        initialized."""
        alg = stateless_random_ops.alg_id(alg if alg is not None else Algorithm.PHILOX)
        state = apply_op("NonDeterministicInts", [np.array([_STATE_SIZE[alg]], np.int64)],
                         {"dtype": _dt.int64}).outputs[0]
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg) -> "Generator":
        """A generator with the given `key` (a scalar) and `counter` (a vector of the
        algorithm's counter size: 2 for Philox, 1 for ThreeFry).

        Raises:
          ValueError: `key` or `counter` of the wrong shape.
        """
        alg = stateless_random_ops.alg_id(alg)
        return cls(state=_key_counter_state(key, counter, alg), alg=alg)

    def __init__(self, copy_from: Optional["Generator"] = None, state=None, alg=None):
        """Creates a generator from another one, or from a state and an algorithm.

        Args:
          copy_from: a generator whose current state and algorithm to start from.
          state: the initial state (int64 vector; words up to 2**64 - 1 are taken as
            their bits), or a variable to use as the state itself.
          alg: the algorithm of `state`.

        Raises:
          ValueError: neither or both of `copy_from` and `state`, or a state of the
            wrong size for the algorithm.
        """
        from tensorweave.ops.state.variables import Variable
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("Give either `copy_from` or `state` and `alg`, not both.")
            self._alg = copy_from.algorithm
            self._state_var = self._create_variable(copy_from.state)
            return
        if state is None or alg is None:
            raise ValueError("`state` and `alg` must be given together.")
        self._alg = stateless_random_ops.alg_id(alg)
        if isinstance(state, Variable):
            _check_state_shape(state.shape, self._alg)
            self._state_var = state
        else:
            state = _state_tensor(state)
            _check_state_shape(state.shape, self._alg)
            self._state_var = self._create_variable(state)

    @staticmethod
    def _create_variable(initial_value):
        from tensorweave.ops.state.variables import Variable
        with name_scope("random_generator"):
            return Variable(initial_value, dtype=_dt.int64, trainable=False, name="StateVar")

    # --- state --------------------------------------------------------------------------------
    @property
    def state(self):
        """The state variable."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        """The algorithm id (1 Philox, 2 ThreeFry, 3 auto-select)."""
        return self._alg

    @property
    def key(self) -> Tensor:
        """The key part of the state (its last word), an int64 scalar."""
        return self._state_var[-1]

    def reset(self, state):
        """An op setting the state to `state`.

        Raises:
          ValueError: a state of the wrong size for the algorithm.
        """
        state = _state_tensor(state)
        _check_state_shape(state.shape, self._alg)
        return self._state_var.assign(state)

    def reset_from_seed(self, seed):
        """An op setting the state to that of `from_seed(seed)`."""
        return self._state_var.assign(_state_from_seed(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        """An op setting the state to that of `from_key_counter(key, counter)`."""
        return self._state_var.assign(_key_counter_state(key, counter, self._alg))

    def skip(self, delta) -> Tensor:
        """Advances the counter as drawing `delta` values would; returns the state
        before (an int64 [3] Tensor, zero-padded)."""
        from tensorweave.ops.math import math_ops
        return apply_op("RngReadAndSkip",
                        [self._state_var.handle, math_ops.cast(self._alg, _dt.int32),
                         math_ops.cast(delta, _dt.uint64)],
                        name="RngReadAndSkip").outputs[0]

    def _key_counter(self, shape: Tensor):
        """(key, counter) uint64 Tensors of a draw of `shape`, the state advanced past it."""
        from tensorweave.ops.array.array_view_ops import bitcast
        from tensorweave.ops.math.reduction_ops import reduce_prod
        state = self.skip(reduce_prod(shape))
        size = _COUNTER_SIZE[self._alg]
        return bitcast(state[size:size + 1], _dt.uint64), bitcast(state[:size], _dt.uint64)

    def _draw(self, op_type: str, shape: Tensor, dtype, extra=(), name=None) -> Tensor:
        key, counter = self._key_counter(shape)
        return apply_op(op_type, [shape, key, counter, self._alg] + list(extra),
                        {"dtype": _dt.as_dtype(dtype)}, name=name).outputs[0]

    # --- distributions ------------------------------------------------------------------------
    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32,
               name: Optional[str] = None) -> Tensor:
        """Normal values: `StatelessRandomNormalV2 * stddev + mean`.

        Args:
          shape: a 1-D integer Tensor or Python list: the output shape.
          mean, stddev: scalars (or broadcastable Tensors) of `dtype`.
          dtype: a floating dtype.
          name: name of the result (and scope of the ops).
        """
        return self._scaled("StatelessRandomNormalV2", "stateful_normal", shape, mean,
                            stddev, dtype, name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32,
                         name: Optional[str] = None) -> Tensor:
        """Normal values re-drawn beyond two standard deviations, as `normal`."""
        return self._scaled("StatelessTruncatedNormalV2", "truncated_normal", shape, mean,
                            stddev, dtype, name)

    def _scaled(self, op_type, default_name, shape, mean, stddev, dtype, name) -> Tensor:
        from tensorweave.ops.math import math_binary
        from tensorweave.ops.random.random_ops import _shape_tensor
        with name_scope(name, default_name, [shape, mean, stddev]) as scope:
            shape = _shape_tensor(shape)
            mean = convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._draw(op_type, shape, dtype)
            return math_binary.add(rnd * stddev, mean, name=scope)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dt.float32,
                name: Optional[str] = None) -> Tensor:
        """Uniform values in [minval, maxval).

        Args:
          shape: a 1-D integer Tensor or Python list: the output shape.
          minval, maxval: the bounds, of `dtype` (scalars for integers); maxval defaults to
            1 for floats. For integers, both None draws the whole range of `dtype`.
          dtype: a floating or integer dtype.
          name: name of the result (and scope of the ops).

        Raises:
          ValueError: an integer dtype with only one of minval and maxval None.
        """
        from tensorweave.ops.math import math_binary
        from tensorweave.ops.random.random_ops import _shape_tensor
        dtype = _dt.as_dtype(dtype)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError("For integer dtype %s, minval and maxval must be both `None` "
                                 "or both non-`None`; got minval=%s and maxval=%s"
                                 % (dtype, minval, maxval))
        elif maxval is None:
            maxval = 1
        with name_scope(name, "stateful_uniform", [shape, minval, maxval]) as scope:
            shape = _shape_tensor(shape)
            if dtype.is_integer and minval is None:
                return self._draw("StatelessRandomUniformFullIntV2", shape, dtype, name=scope)
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
            if dtype.is_integer:
                return self._draw("StatelessRandomUniformIntV2", shape, dtype,
                                  [minval, maxval], name=scope)
            rnd = self._draw("StatelessRandomUniformV2", shape, dtype)
            return math_binary.add(rnd * (maxval - minval), minval, name=scope)

    def uniform_full_int(self, shape, dtype=_dt.uint64, name: Optional[str] = None) -> Tensor:
        """Integers uniform over the whole range of `dtype` (int32, int64, uint32, uint64)."""
        from tensorweave.ops.random.random_ops import _shape_tensor
        with name_scope(name, "stateful_uniform_full_int", [shape]) as scope:
            return self._draw("StatelessRandomUniformFullIntV2", _shape_tensor(shape), dtype,
                              name=scope)

    def binomial(self, shape, counts, probs, dtype=_dt.int32,
                 name: Optional[str] = None) -> Tensor:
        """Binomial draws of `counts` trials with success probability `probs` (both
        broadcast to `shape`)."""
        from tensorweave.ops.random.random_ops import _shape_tensor
        with name_scope(name, "binomial", [shape, counts, probs]) as scope:
            counts = convert_to_tensor(counts, name="counts")
            probs = convert_to_tensor(probs, name="probs")
            return apply_op("StatefulRandomBinomial",
                            [self._state_var.handle, np.int64(self._alg),
                             _shape_tensor(shape), counts, probs],
                            {"dtype": _dt.as_dtype(dtype)}, name=scope).outputs[0]

    # --- seeds and new generators -------------------------------------------------------------
    def make_seeds(self, count: int = 1) -> Tensor:
        """An int64 `[2, count]` Tensor: `count` seeds for the stateless random ops."""
        from tensorweave.ops.array.array_fill_ops import zeros_like
        from tensorweave.ops.array.array_join_ops import stack
        keys = self.uniform_full_int([count], dtype=_dt.int64)
        return stack([keys, zeros_like(keys)])

    def split(self, count: int = 1) -> List["Generator"]:
        """`count` new generators, their keys drawn from this one."""
        keys = self.uniform_full_int([count], dtype=_dt.int64)
        return [Generator(state=_key_counter_state(keys[i], [0] * _COUNTER_SIZE[self._alg],
                                                   self._alg), alg=self._alg)
                for i in range(count)]


def _key_counter_state(key, counter, alg: int) -> Tensor:
    """The state `counter + [key]`, checked against the sizes of `alg`."""
    from tensorweave.ops.array import array_join_ops, array_ops
    counter, key = _state_tensor(counter), _state_tensor(key)
    counter.shape.assert_is_compatible_with([_COUNTER_SIZE[alg]])
    key.shape.assert_is_compatible_with([])
    return array_join_ops.concat([counter, array_ops.reshape(key, [1])], 0)


_GLOBAL = {"generator": None}
_GLOBAL_LOCK = threading.Lock()


@tf_export("random.get_global_generator", "random.experimental.get_global_generator")
def get_global_generator() -> Generator:
    """The global generator, made from a non-deterministic state on first use (its
    variable lives in the graph that was the default then)."""
    with _GLOBAL_LOCK:
        if _GLOBAL["generator"] is None:
            _GLOBAL["generator"] = Generator.from_non_deterministic_state()
        return _GLOBAL["generator"]


@tf_export("random.set_global_generator", "random.experimental.set_global_generator")
def set_global_generator(generator: Generator) -> None:
    """Makes `generator` the one `get_global_generator` returns."""
    _GLOBAL["generator"] = generator


@tf_export("random.create_rng_state", "random.experimental.create_rng_state")
def create_rng_state(seed, alg) -> np.ndarray:
    """The RNG state TF's generators start from for `seed` (as `Generator.from_seed`
    builds it): a Python int split into 64-bit words, low word first, a negative int
    sign-extended; a list of ints cut to the state size and zero-padded in front.

    Args:
      seed: a Python int, or a list of ints (64-bit words).
      alg: an `Algorithm`, its name ("philox", "threefry", "auto_select") or its id.

    Returns:
      A 1-D int64 NumPy array of the algorithm's state size (3 for Philox, 2 for
      ThreeFry).

    Raises:
      ValueError: an unknown algorithm.
    """
    return _state_from_seed(seed, stateless_random_ops.alg_id(alg))


# TF's other names of the seed helpers
export(stateless_random_ops.fold_in, "random.experimental.stateless_fold_in")
export(stateless_random_ops.split, "random.experimental.stateless_split")
