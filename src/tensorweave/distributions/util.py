"""What TF1's distributions share for `validate_args` and for their `logits` / `probs`
parameters (TF's `ops/distributions/util.py`).

A check is embedded the TF way: `with_dependencies(assertions, x)` returns `x` behind the
assertions, so every op that reads the returned tensor runs them first. The assertions
are tf.debugging's: when their operands are known at build time a failing one raises
InvalidArgumentError right away, else when the graph runs. Wrong static shapes (too few
classes, a parameter without a class dimension) are ValueErrors at build time.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.distributions.distribution import ops


def with_dependencies(assertions: List, x):
    """`x` (an identity of it) computed only after `assertions`; `x` itself without any."""
    t = ops()
    if not assertions:
        return x
    with t.control_dependencies(assertions):
        return t.identity(x)


def _largest_integer(dtype) -> int:
    """The largest integer `dtype` holds exactly (floats: 2^(mantissa bits + 1))."""
    dtype = _dt.as_dtype(dtype).base_dtype
    if dtype.is_bool:
        return 1
    if dtype.is_floating:
        return int(2 ** (np.finfo(dtype.as_numpy_dtype).nmant + 1))
    if dtype.is_integer:
        return int(np.iinfo(dtype.as_numpy_dtype).max)
    raise TypeError("Unrecognized dtype: %s" % dtype.name)


def _is_integer_like(dtype) -> bool:
    dtype = _dt.as_dtype(dtype).base_dtype
    return dtype.is_integer or dtype.is_bool


def assert_integer_form(x, message: Optional[str] = None, int_dtype=None,
                        name: str = "assert_integer_form"):
    """An assertion that the float `x` holds integers: x == cast(cast(x, int_dtype)).

    Returns:
      The assertion op (a no-op for an integer `x`).
    """
    t = ops()
    with _graph.name_scope(name):
        x = t.convert_to_tensor(x, name="x")
        if x.dtype.is_integer:
            return t.no_op()
        if int_dtype is None:
            # the signed integer as wide as the float
            int_dtype = {_dt.float16: _dt.int16, _dt.float32: _dt.int32,
                         _dt.float64: _dt.int64}.get(x.dtype.base_dtype)
            if int_dtype is None:
                raise TypeError("Unrecognized type %s" % x.dtype.name)
        message = message or "%s has non-integer components" % x
        return t.assert_equal(x, t.cast(t.cast(x, int_dtype), x.dtype), message=message,
                              name=name)


def embed_check_nonnegative_integer_form(x, name: str = "embed_check_nonnegative_integer_form"):
    """`x` behind assertions that it is non-negative and (a float) holds integers."""
    t = ops()
    with _graph.name_scope(name):
        x = t.convert_to_tensor(x, name="x")
        assertions = [t.assert_non_negative(x, message="'%s' must be non-negative." % x)]
        if not x.dtype.is_integer:
            assertions.append(assert_integer_form(
                x, message="'%s' cannot contain fractional components." % x))
        return with_dependencies(assertions, x)


def embed_check_integer_casting_closed(x, target_dtype,
                                       name: str = "embed_check_casting_closed"):
    """`x` behind assertions that its values are non-negative integers that survive a cast
    to `target_dtype` and back (Bernoulli's events are 0 or 1, Categorical's int32).

    Raises:
      TypeError: neither `x` nor `target_dtype` is integer-like, or one is neither an
        integer nor a float type.
    """
    t = ops()
    target_dtype = _dt.as_dtype(target_dtype)
    with _graph.name_scope(name):
        x = t.convert_to_tensor(x, name="x")
        for dtype in (x.dtype, target_dtype):
            if not (_is_integer_like(dtype) or dtype.is_floating):
                raise TypeError("%s must be a floating- or integer-type." % dtype.name)
        if not (_is_integer_like(x.dtype) or _is_integer_like(target_dtype)):
            raise TypeError("At least one of %s.dtype (%s) and target_dtype (%s) must be "
                            "integer-type." % (x, x.dtype.name, target_dtype.name))
        assertions = [t.assert_non_negative(x, message="Elements must be non-negative.")]
        if x.dtype.is_floating:
            # integer form under target_dtype also bounds the magnitude
            assertions.append(assert_integer_form(
                x, int_dtype=target_dtype,
                message="Elements must be %s-equivalent." % target_dtype.name))
        elif _largest_integer(x.dtype) > _largest_integer(target_dtype):
            # TF passes the bound as a Python int (int32): an int64 `x` is a TypeError
            # there, and so here.
            bound = _largest_integer(target_dtype)
            assertions.append(t.assert_less_equal(
                x, bound, message="Elements cannot exceed %d." % bound))
        return with_dependencies(assertions, x)


def embed_check_categorical_event_shape(param, name: str = "embed_check_categorical_event_shape"):
    """`param` ([..., K], float) checked for 2 <= K <= the largest integer its dtype holds
    exactly (class indices are cast to and from it): statically when K is known, else
    behind run-time assertions.

    Raises:
      TypeError: `param` is not floating.
      ValueError: `param` is a scalar, or the known K is out of range.
    """
    t = ops()
    with _graph.name_scope(name):
        x = t.convert_to_tensor(param, name="categorical_param")
        if not x.dtype.is_floating:
            raise TypeError("Unable to validate size of unrecognized dtype (%s)."
                            % x.dtype.name)
        most = min(_largest_integer(x.dtype), _largest_integer(_dt.int32))
        shape = x.get_shape()
        if shape.ndims is not None and shape.ndims < 1:
            raise ValueError("A categorical-distribution parameter must have at least 1 "
                             "dimension.")
        if shape.ndims is not None and shape[-1].value is not None:
            size = shape[-1].value
            if size < 2:
                raise ValueError("A categorical-distribution parameter must have at least "
                                 "2 events.")
            if size > most:
                raise ValueError("Number of classes exceeds `dtype` precision, i.e., %s "
                                 "implies shape (%d) cannot exceed %d."
                                 % (x.dtype.name, size, most))
            return x
        size = t.shape(x)[-1]
        return with_dependencies([
            t.assert_rank_at_least(x, 1, message="A categorical-distribution parameter "
                                   "must have at least 1 dimension."),
            t.assert_greater_equal(size, 2, message="A categorical-distribution parameter "
                                   "must have at least 2 events."),
            t.assert_less_equal(size, most, message="Number of classes exceeds `dtype` "
                                "precision, i.e., %s dtype cannot exceed %d shape."
                                % (x.dtype.name, most))], x)


def get_logits_and_probs(logits=None, probs=None, multidimensional: bool = False,
                         validate_args: bool = False, dtype=None) -> Tuple:
    """(logits, probs) Tensors from exactly one of them: sigmoid / log-odds for one class
    (`multidimensional=False`), softmax / log over the last dimension otherwise. Given
    probabilities are used as they are (not normalized), as in TF.

    With `validate_args`, `probs` is checked to lie in [0, 1] (one class) or to be
    non-negative and sum to 1 over at least 2 classes; `logits` to have at least 2 classes
    (multidimensional).

    Raises:
      ValueError: both or neither of `logits` and `probs` given.
      TypeError: the given one is not floating.
    """
    t = ops()
    if (probs is None) == (logits is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if probs is None:
        logits = t.convert_to_tensor(logits, name="logits", dtype=dtype)
        if not logits.dtype.is_floating:
            raise TypeError("logits must having floating type.")
        if multidimensional:
            if validate_args:
                logits = embed_check_categorical_event_shape(logits)
            return logits, t.nn.softmax(logits, name="probs")
        return logits, t.sigmoid(logits, name="probs")

    probs = t.convert_to_tensor(probs, name="probs", dtype=dtype)
    if not probs.dtype.is_floating:
        raise TypeError("probs must having floating type.")
    if validate_args:
        with _graph.name_scope("validate_probs"):
            one = t.constant(1.0, probs.dtype)
            assertions = [t.assert_non_negative(probs)]
            if multidimensional:
                probs = embed_check_categorical_event_shape(probs)
                assertions.append(t.assert_near(t.reduce_sum(probs, -1), one,
                                                message="probs does not sum to 1."))
            else:
                assertions.append(t.assert_less_equal(
                    probs, one, message="probs has components greater than 1."))
            probs = with_dependencies(assertions, probs)
    with _graph.name_scope("logits"):
        if multidimensional:
            return t.log(probs), probs
        return t.log(probs) - t.log1p(-probs), probs
