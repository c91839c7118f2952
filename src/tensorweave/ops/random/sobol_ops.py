"""`tf.math.sobol_sample`: points of the Sobol low-discrepancy sequence (SobolSample).

TF's kernel generates the sequence in Gray-code order from the direction numbers of Joe
and Kuo (new-joe-kuo-6.21201), with the first dimension the van der Corput sequence, and
leaves out the sequence's first point (all zeros): row `r` of the result is point number
`skip + r + 1`. Each coordinate is an integer of `b` bits, b = bit_length(skip +
num_results), times 2**-b; a float32 result is that integer rounded to float32, times
2**-b.

SciPy's `scipy.stats.qmc.Sobol(d, scramble=False)` draws the same points in the same
order from the same table (its dimension j is TF's dimension j; 30 bits, or 31 for the
last points TF allows, hold every point TF's fewer bits give exactly, since a Sobol
point with more bits is the same binary fraction). The kernel takes the points from
SciPy, an optional dependency (the `special` extra) imported on first run; float32
results are SciPy's float64 values rounded to float32, which is TF's rounding of the
integer. tests/ops/random/test_sobol_ops.py checks the results against a fixture
generated with TensorFlow bit for bit.

One difference: TF's kernel sizes its integers for skip + num_results + 1, and from
2**30 on it shifts 1 << 31 into a 32-bit int and returns every coordinate negated;
tensorweave returns the points.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, with_rank

MAX_DIMENSION = 21200  # TF's limit (its table has one row per dimension after the first)
_MAX_INDEX = 2 ** 31 - 1


def _scalar_value(t: Tensor) -> Optional[int]:
    v = tensor_util.constant_value(t)
    return None if v is None else int(v)


def _sobol_shape(op) -> TensorShape:
    for t in op.inputs:
        with_rank(t.shape, 0)
    dim, num_results = (_scalar_value(t) for t in op.inputs[:2])
    return TensorShape([num_results, dim])


register_op("SobolSample", inputs=["dim: int32", "num_results: int32", "skip: int32"],
            outputs=["samples: dtype"],
            attrs={"dtype": TypeAttr((_dt.float32, _dt.float64), default=_dt.float32)},
            shape=_sobol_shape)
not_differentiable("SobolSample")


def _scipy_sobol():
    try:
        from scipy.stats import qmc
    except ImportError:
        raise errors.UnimplementedError(
            None, None, "SobolSample needs SciPy (scipy.stats.qmc), which is not "
            "installed: pip install 'tensorweave[special]'") from None
    return qmc.Sobol


def sobol_points(dim: int, num_results: int, skip: int) -> np.ndarray:
    """Points `skip + 1` to `skip + num_results` of the unscrambled Sobol sequence of
    dimension `dim` in Gray-code order, as a float64 [num_results, dim] array (exact
    binary fractions)."""
    sobol = _scipy_sobol()
    bits = 30 if skip + num_results < 2 ** 30 else 31
    engine = sobol(dim, scramble=False, bits=bits)
    directions = getattr(engine, "_sv", None)  # [dim, bits] direction numbers
    if not isinstance(directions, np.ndarray) or directions.shape != (dim, bits):
        engine.fast_forward(skip + 1)  # (a SciPy that keeps them elsewhere)
        return engine.random(num_results)
    # point p is the XOR of the direction numbers of the bits set in p's Gray code: no
    # walk from point 0 (SciPy's fast_forward steps through every point it skips, about
    # 10 s for a skip of 2**29)
    positions = np.arange(skip + 1, skip + 1 + num_results, dtype=np.int64)
    gray = positions ^ (positions >> 1)
    points = np.zeros((num_results, dim), dtype=np.uint64)
    for j in range(bits):
        on = ((gray >> j) & 1).astype(bool)
        if on.any():
            points[on] ^= directions[:, j].astype(np.uint64)
    return points * 2.0 ** -bits


@kernel("SobolSample", cheap=False)
def _sobol_kernel(ctx, dim, num_results, skip):
    op = ctx.op
    dim, num_results, skip = int(dim), int(num_results), int(skip)
    if dim < 1:
        raise errors.InvalidArgumentError(None, op, "dim must be at least one")
    if dim > MAX_DIMENSION:
        raise errors.InvalidArgumentError(None, op, "dim must be at most %d"
                                          % MAX_DIMENSION)
    if num_results < 1:
        raise errors.InvalidArgumentError(None, op, "num_results must be at least one")
    if skip < 0:
        raise errors.InvalidArgumentError(None, op, "skip must be non-negative")
    if num_results >= _MAX_INDEX - skip:
        raise errors.InvalidArgumentError(
            None, op, "num_results+skip must be less than %d" % _MAX_INDEX)
    points = sobol_points(dim, num_results, skip)
    return ctx.xp.asarray(points.astype(ctx.attrs["dtype"].as_numpy_dtype))


@tf_export("math.sobol_sample")
def sobol_sample(dim, num_results, skip=0, dtype=_dt.float32,
                 name: Optional[str] = None) -> Tensor:
    """Generates points from the Sobol sequence.

    Creates a Sobol sequence with `num_results` samples. Each sample has dimension
    `dim`. Skips the first `skip` samples.

    Args:
      dim: a positive scalar int32 `Tensor`, the dimension of each sample (at most
        21200).
      num_results: a positive scalar int32 `Tensor`, the number of samples.
      skip: a non-negative scalar int32 `Tensor`, the number of initial points to skip.
      dtype: `tf.float32` or `tf.float64`, the dtype of the samples.
      name: name scope of the operation (default "sobol").

    Returns:
      A `Tensor` of shape `[num_results, dim]` and type `dtype` with values in [0, 1).

    Raises:
      TypeError: `dtype` is neither float32 nor float64, or an argument is not int32.
      ValueError: an argument is not a scalar.
      InvalidArgumentError: at run time, for arguments out of their ranges.
    """
    with name_scope(name, "sobol", [dim, num_results, skip]):
        return apply_op("SobolSample", [dim, num_results, skip],
                        {"dtype": _dt.as_dtype(dtype)}, name="SobolSample").outputs[0]
