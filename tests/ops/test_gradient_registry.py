"""Every registered gradient, checked numerically over each floating dtype its op supports.

The test walks the gradient registry: each op type with a gradient function has a row in
TABLE (how to build it, the shapes of the inputs checked, a domain where the op is
smooth) or an entry in EXCLUDED naming the test that checks its gradient numerically
inside the structure it belongs to. `test_table_covers_the_gradient_registry` fails for
a new gradient that has neither, so no gradient goes unchecked.

float64/complex128 are checked tightly against central differences, float32/complex64
more loosely (`compute_gradient_error`; complex values count as pairs of reals, as in
TF1). float16/bfloat16 differences are too coarse to differentiate numerically, so the
analytic gradient computed in that dtype is compared with the float64 analytic gradient
of the same inputs (the float64 one being checked numerically by the float64 case).
"""
import os
import re
import zlib
from typing import Callable, NamedTuple, Optional, Sequence

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework import registry
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op
from tensorweave.ops.math import special_functions

FLOATING = (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.complex64, tf.complex128)
REAL = (tf.float16, tf.bfloat16, tf.float32, tf.float64)
LOW_PRECISION = {tf.float16: 1e-2, tf.bfloat16: 6e-2}  # relative tolerance vs float64
NUMERIC = {  # dtype: (delta, tolerance on the largest Jacobian difference)
    tf.float64: (1e-6, 1e-6), tf.complex128: (1e-6, 1e-6),
    tf.float32: (1e-3, 4e-3), tf.complex64: (1e-3, 4e-3),
}
_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- domains: (rng, shape) -> float64 values where the op is smooth ----------------------


def _any(rng, shape):
    return rng.uniform(-1.5, 1.5, shape)


def _pos(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def _unit(rng, shape):
    return rng.uniform(-0.8, 0.8, shape)


def _near_one(rng, shape):
    # divisors for floordiv-like ops: x / y stays as far from an integer as x (FRAC)
    return rng.uniform(0.97, 1.03, shape)


def _nonzero(rng, shape):
    """Away from the kink at 0 (Abs, Relu, Sign, Elu ...)."""
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 1.5, shape)


def _relu6(rng, shape):
    """Away from both kinks of Relu6 (0 and 6)."""
    return rng.choice([-1.0, 3.0, 6.8], shape) + rng.uniform(-0.5, 0.5, shape)


def _frac(rng, shape):
    """Away from integers and half-integers (Floor, Ceil, Round, FloorDiv ...)."""
    frac = rng.choice([0.2, 0.3, 0.7, 0.8], shape) + rng.uniform(-0.04, 0.04, shape)
    return rng.randint(-2, 2, shape) + frac


def _distribution(rng, shape):
    """Rows of probabilities (labels of a softmax cross entropy)."""
    p = rng.uniform(0.2, 1.0, shape)
    return p / p.sum(axis=-1, keepdims=True)


def _distinct(rng, shape):
    """Distinct values at least 0.1 apart, so a max/min/top-k is not tied."""
    n = int(np.prod(shape))
    return rng.permutation(np.linspace(-1.5, 1.5, n) if n > 1 else np.ones(1)).reshape(shape)


def _wellcond(rng, shape):
    """Matrices near 2 I: far from singular."""
    return rng.uniform(-0.5, 0.5, shape) + 2.0 * np.eye(shape[-1])


def _hermitian(a):
    """a a^H + 3 I: Hermitian positive definite, with gradients reaching both triangles."""
    return tf.matmul(a, a, adjoint_b=True) + 3.0 * tf.eye(a.shape.as_list()[-1],
                                                           dtype=a.dtype)


def _empty_stats():
    """The empty float32 statistics a fused batch norm takes in training."""
    return _c([], tf.float32)


def _fused_batch_norm_grad(grad_type: str, forward: str):
    """Builds `grad_type`(dy, x, scale) in training, fed the batch statistics `forward`
    computes from x (so that central differences follow them, as the gradient does)."""
    def build(dy, x, scale):
        offset = _c([0.0, 0.0], tf.float32)
        stats = _raw(forward, [x, scale, offset, _empty_stats(), _empty_stats()],
                     output=None)[3:]
        return _raw(grad_type, [dy, x, scale] + list(stats), output=None)[:3]
    return build


# --- the table ------------------------------------------------------------------------------


class Row(NamedTuple):
    """How to check one op type's gradient.

    build(*xs) returns the output (or a list of outputs, checked together); xs are
    the inputs checked, of `shapes`, drawn from `domain` (one per input, or one for all).
    dtypes default to the floating types registered for `type_attr`; `variable` makes xs
    resource variables (for reads of a variable, whose gradient flows to its handle).
    """
    build: Callable
    shapes: Sequence[tuple]
    domain: object = _any
    dtypes: Optional[Sequence[tf.DType]] = None
    type_attr: str = "T"
    variable: bool = False


def _raw(op_type, inputs, attrs=None, output=0):
    op = apply_op(op_type, inputs, attrs or {}, name=op_type)
    return op.outputs if output is None else op.outputs[output]


def _c(value, dtype):
    return tf.constant(value, dtype=dtype)


def _cast_target(dtype):
    # a Cast to another type of the same kind, without losing precision where it is checked
    return {tf.float16: tf.float64, tf.bfloat16: tf.float64, tf.float32: tf.float64,
            tf.float64: tf.complex128, tf.complex64: tf.complex128,
            tf.complex128: tf.float64}[dtype]


_POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
_POOL_INPUT = np.linspace(-1.5, 1.5, 16)[[5, 12, 0, 9, 14, 3, 7, 10, 1, 15, 8, 4, 11, 6, 2,
                                         13]].reshape(1, 4, 4, 1)


def _pool_window():
    """_POOL's ksize and strides as the int32 inputs of the V2 pooling ops."""
    return [_c(_POOL["ksize"], tf.int32), _c(_POOL["strides"], tf.int32)]


_POOL3D = {"ksize": [1, 2, 2, 2, 1], "strides": [1, 2, 2, 2, 1], "padding": "VALID"}
_POOL3D_INPUT = np.linspace(-1.5, 1.5, 32)[np.random.RandomState(3).permutation(32)].reshape(
    1, 2, 4, 4, 1)
_LABELS = [[0.25, 0.5, 0.25], [0.125, 0.125, 0.75]]
_BINARY = [(2, 3), (3,)]  # broadcasting, so the gradient's unbroadcast is checked too

TABLE = {
    # math: unary
    "Abs": Row(tf.abs, [(2, 3)], _nonzero),
    "Ceil": Row(tf.math.ceil, [(2, 3)], _frac),
    "ComplexAbs": Row(tf.abs, [(2, 3)], _nonzero),
    "Conj": Row(tf.math.conj, [(2, 3)]),
    "Cos": Row(tf.cos, [(2, 3)]),
    "Erf": Row(tf.math.erf, [(2, 3)]),
    "Exp": Row(tf.exp, [(2, 3)]),
    "Expm1": Row(tf.math.expm1, [(2, 3)]),
    "Floor": Row(tf.floor, [(2, 3)], _frac),
    "Log": Row(tf.log, [(2, 3)], _pos),
    "Log1p": Row(tf.math.log1p, [(2, 3)], _pos),
    "Neg": Row(tf.negative, [(2, 3)]),
    "Reciprocal": Row(tf.math.reciprocal, [(2, 3)], _pos),
    "Round": Row(tf.round, [(2, 3)], _frac),
    "Rsqrt": Row(tf.math.rsqrt, [(2, 3)], _pos),
    "Sigmoid": Row(tf.sigmoid, [(2, 3)]),
    # TF's gradient of Sign is zero; for complex z, sign(z) = z / |z| is not constant
    "Sign": Row(tf.sign, [(2, 3)], _nonzero, dtypes=REAL),
    "Sin": Row(tf.sin, [(2, 3)]),
    "Sqrt": Row(tf.sqrt, [(2, 3)], _pos),
    "Square": Row(tf.square, [(2, 3)]),
    "Tan": Row(tf.tan, [(2, 3)], _unit),
    "Tanh": Row(tf.tanh, [(2, 3)]),
    "Cast": Row(lambda x: tf.cast(x, _cast_target(x.dtype)), [(2, 3)], type_attr="SrcT"),
    # the fused gradient ops of unary functions: (y, dy)
    "ReciprocalGrad": Row(lambda y, dy: _raw("ReciprocalGrad", [y, dy]),
                          [(2, 3), (2, 3)], _pos),
    "RsqrtGrad": Row(lambda y, dy: _raw("RsqrtGrad", [y, dy]), [(2, 3), (2, 3)], _pos),
    "SigmoidGrad": Row(lambda y, dy: _raw("SigmoidGrad", [y, dy]), [(2, 3), (2, 3)]),
    "SqrtGrad": Row(lambda y, dy: _raw("SqrtGrad", [y, dy]), [(2, 3), (2, 3)], _pos),
    "TanhGrad": Row(lambda y, dy: _raw("TanhGrad", [y, dy]), [(2, 3), (2, 3)]),
    # math: binary
    "Add": Row(lambda x, y: _raw("Add", [x, y]), _BINARY),
    "AddV2": Row(tf.add, _BINARY),
    "Sub": Row(tf.subtract, _BINARY),
    "Mul": Row(tf.multiply, _BINARY),
    "Div": Row(lambda x, y: _raw("Div", [x, y]), _BINARY, [_any, _pos]),
    "RealDiv": Row(tf.realdiv, _BINARY, [_any, _pos]),
    "DivNoNan": Row(tf.math.divide_no_nan, _BINARY, [_any, _pos]),
    "FloorDiv": Row(tf.floordiv, _BINARY, [_frac, _near_one]),
    "FloorMod": Row(tf.floormod, _BINARY, [_frac, _near_one]),
    "TruncateDiv": Row(tf.truncatediv, _BINARY, [_frac, _near_one]),
    "TruncateMod": Row(tf.truncatemod, _BINARY, [_frac, _near_one]),
    "Pow": Row(tf.pow, _BINARY, [_pos, _any]),
    "Maximum": Row(tf.maximum, _BINARY),
    "Minimum": Row(tf.minimum, _BINARY),
    "SquaredDifference": Row(tf.squared_difference, _BINARY),
    "AddN": Row(lambda a, b: tf.add_n([a, b, a]), [(2, 3), (2, 3)]),
    "MatMul": Row(lambda a, b: tf.matmul(a, b, transpose_b=True), [(2, 3), (2, 3)]),
    "BatchMatMulV2": Row(lambda a, b: tf.matmul(a, b, adjoint_b=True),
                         [(2, 2, 3), (1, 2, 3)]),
    "Einsum": Row(lambda a, b: tf.einsum("ij,jk->ki", a, b), [(2, 3), (3, 2)]),
    # reductions and scans
    "Sum": Row(lambda x: tf.reduce_sum(x, axis=1), [(2, 3)]),
    "Mean": Row(lambda x: tf.reduce_mean(x, axis=0), [(2, 3)]),
    "Prod": Row(lambda x: tf.reduce_prod(x, axis=1), [(2, 3)], _nonzero),
    "Max": Row(lambda x: tf.reduce_max(x, axis=1), [(2, 3)], _distinct),
    "Min": Row(lambda x: tf.reduce_min(x, axis=0), [(2, 3)], _distinct),
    "Cumsum": Row(lambda x: tf.cumsum(x, axis=1, exclusive=True, reverse=True),
                  [(2, 3)]),
    "Cumprod": Row(lambda x: tf.cumprod(x, axis=1, exclusive=True), [(2, 3)],
                   _nonzero),
    "L2Loss": Row(tf.nn.l2_loss, [(2, 3)]),
    # segments
    "SegmentSum": Row(lambda x: tf.math.segment_sum(x, [0, 0, 0, 2]), [(4, 2)]),
    "SegmentMean": Row(lambda x: tf.math.segment_mean(x, [0, 0, 0, 2]), [(4, 2)]),
    "SegmentMax": Row(lambda x: tf.math.segment_max(x, [0, 0, 1, 1]), [(4, 2)],
                      _distinct),
    "SegmentMin": Row(lambda x: tf.math.segment_min(x, [0, 0, 1, 1]), [(4, 2)],
                      _distinct),
    "UnsortedSegmentSum": Row(
        lambda x: tf.math.unsorted_segment_sum(x, [1, 0, 1, 3], 4), [(4, 2)]),
    "UnsortedSegmentMax": Row(
        lambda x: tf.math.unsorted_segment_max(x, [1, 0, 1, 2], 3), [(4, 2)], _distinct),
    "UnsortedSegmentMin": Row(
        lambda x: tf.math.unsorted_segment_min(x, [1, 0, 1, 2], 3), [(4, 2)], _distinct),
    "SegmentProd": Row(lambda x: tf.math.segment_prod(x, [0, 0, 0, 2]), [(4, 2)], _nonzero),
    "UnsortedSegmentProd": Row(
        lambda x: tf.math.unsorted_segment_prod(x, [1, 0, 1, -1], 3), [(4, 2)], _nonzero),
    "CumulativeLogsumexp": Row(  # the exclusive scan's first output is -inf: dropped
        lambda x: tf.math.cumulative_logsumexp(x, axis=1, exclusive=True)[:, 1:],
        [(2, 3)]),
    # math: trigonometric, hyperbolic and special functions (special_math_ops)
    "Asin": Row(tf.asin, [(2, 3)], _unit),
    "Acos": Row(tf.acos, [(2, 3)], _unit),
    "Atan": Row(tf.atan, [(2, 3)]),
    "Sinh": Row(tf.sinh, [(2, 3)]),
    "Cosh": Row(tf.cosh, [(2, 3)]),
    "Asinh": Row(tf.asinh, [(2, 3)]),
    "Acosh": Row(tf.acosh, [(2, 3)], lambda rng, shape: rng.uniform(1.3, 2.5, shape)),
    "Atanh": Row(tf.atanh, [(2, 3)], _unit),
    "Rint": Row(tf.math.rint, [(2, 3)], _frac),
    "Erfc": Row(tf.math.erfc, [(2, 3)]),
    "Lgamma": Row(tf.math.lgamma, [(2, 3)], _pos),
    "Digamma": Row(tf.math.digamma, [(2, 3)], _pos),
    "Erfinv": Row(tf.math.erfinv, [(2, 3)], _unit),
    "Ndtri": Row(tf.math.ndtri, [(2, 3)], lambda rng, shape: rng.uniform(0.2, 0.8, shape)),
    "Zeta": Row(lambda q: tf.math.zeta(_c(2.5, q.dtype), q), [(2, 3)], _pos),
    "Polygamma": Row(lambda x: tf.math.polygamma(_c(1.0, x.dtype), x), [(2, 3)], _pos),
    "Atan2": Row(tf.atan2, _BINARY, [_any, _pos]),
    "Xlogy": Row(tf.math.xlogy, _BINARY, [_nonzero, _pos]),
    "Xdivy": Row(tf.math.xdivy, _BINARY, [_nonzero, _pos]),
    "Xlog1py": Row(tf.math.xlog1py, _BINARY, [_nonzero, _pos]),
    "MulNoNan": Row(tf.math.multiply_no_nan, _BINARY, [_any, _nonzero]),
    "BesselI0e": Row(tf.math.bessel_i0e, [(2, 3)], _nonzero),
    "BesselI1e": Row(tf.math.bessel_i1e, [(2, 3)], _nonzero),
    "BesselI0": Row(tf.math.bessel_i0, [(2, 3)]),
    "BesselI1": Row(tf.math.bessel_i1, [(2, 3)], _nonzero),
    # tf.math.special on SciPy (ops/math/special_functions.py): skipped without SciPy
    "BesselJ0": Row(tf.math.special.bessel_j0, [(2, 3)]),
    "BesselJ1": Row(tf.math.special.bessel_j1, [(2, 3)], _nonzero),
    "BesselY0": Row(tf.math.special.bessel_y0, [(2, 3)], _pos),
    "BesselY1": Row(tf.math.special.bessel_y1, [(2, 3)], _pos),
    "BesselK0": Row(tf.math.special.bessel_k0, [(2, 3)], _pos),
    "BesselK0e": Row(tf.math.special.bessel_k0e, [(2, 3)], _pos),
    "BesselK1": Row(tf.math.special.bessel_k1, [(2, 3)], _pos),
    "BesselK1e": Row(tf.math.special.bessel_k1e, [(2, 3)], _pos),
    "Dawsn": Row(tf.math.special.dawsn, [(2, 3)]),
    "Expint": Row(tf.math.special.expint, [(2, 3)], _pos),
    "FresnelCos": Row(tf.math.special.fresnel_cos, [(2, 3)]),
    "FresnelSin": Row(tf.math.special.fresnel_sin, [(2, 3)]),
    "Spence": Row(tf.math.special.spence, [(2, 3)],  # both sides of 1, away from it
                  lambda rng, shape: rng.choice([0.4, 2.0], shape) + rng.uniform(-0.2, 0.2,
                                                                                shape)),
    "Igamma": Row(tf.math.igamma, _BINARY, _pos),
    "Igammac": Row(tf.math.igammac, _BINARY, _pos),
    "Betainc": Row(lambda x: tf.math.betainc(_c(np.full([2, 3], 1.5), x.dtype),
                                             _c(2.5, x.dtype), x), [(2, 3)],
                   lambda rng, shape: rng.uniform(0.1, 0.9, shape)),
    "Complex": Row(tf.complex, _BINARY),
    "Real": Row(tf.math.real, [(2, 3)]),
    "Imag": Row(tf.math.imag, [(2, 3)]),
    "Angle": Row(tf.math.angle, [(2, 3)], _nonzero),
    # FFTs (ops/math/spectral_fft_ops.py); the real ones crop or pad their input
    "FFT": Row(tf.signal.fft, [(2, 3)], type_attr="Tcomplex"),
    "IFFT": Row(tf.signal.ifft, [(2, 3)], type_attr="Tcomplex"),
    "FFT2D": Row(tf.signal.fft2d, [(2, 3, 2)], type_attr="Tcomplex"),
    "IFFT2D": Row(tf.signal.ifft2d, [(2, 3, 2)], type_attr="Tcomplex"),
    "FFT3D": Row(tf.signal.fft3d, [(2, 2, 3)], type_attr="Tcomplex"),
    "IFFT3D": Row(tf.signal.ifft3d, [(2, 2, 3)], type_attr="Tcomplex"),
    "RFFT": Row(lambda x: tf.signal.rfft(x, [4]), [(2, 5)], type_attr="Treal"),
    "IRFFT": Row(lambda x: tf.signal.irfft(x, [5]), [(2, 4)], type_attr="Tcomplex"),
    "RFFT2D": Row(lambda x: tf.signal.rfft2d(x, [3, 6]), [(2, 4)], type_attr="Treal"),
    "IRFFT2D": Row(lambda x: tf.signal.irfft2d(x, [2, 6]), [(3, 4)], type_attr="Tcomplex"),
    "RFFT3D": Row(tf.signal.rfft3d, [(2, 2, 3)], type_attr="Treal"),
    "IRFFT3D": Row(lambda x: tf.signal.irfft3d(x, [2, 2, 4]), [(2, 2, 3)],
                   type_attr="Tcomplex"),
    # linalg (ops/linalg): well-conditioned matrices; Hermitian inputs built as a a^H + 3I
    "MatrixInverse": Row(lambda a: tf.linalg.inv(a, adjoint=True), [(2, 3, 3)], _wellcond),
    "MatrixDeterminant": Row(tf.linalg.det, [(2, 3, 3)], _wellcond),
    "LogMatrixDeterminant": Row(lambda a: tf.linalg.slogdet(a).log_abs_determinant,
                                [(2, 3, 3)], _wellcond),
    "Cholesky": Row(lambda a: tf.linalg.cholesky(_hermitian(a)), [(2, 3, 3)]),
    "Qr": Row(lambda tall, wide: list(tf.linalg.qr(tall)) + list(tf.linalg.qr(wide)),
              [(4, 3), (2, 4)], dtypes=(tf.float32, tf.float64)),
    "Svd": Row(lambda tall, wide: [tf.linalg.svd(tall)[0]] +
               [tf.square(t) for t in tf.linalg.svd(wide)] +  # squares: sign-free
               [tf.linalg.svd(tall, compute_uv=False)], [(4, 3), (3, 4)],
               dtypes=(tf.float32, tf.float64)),
    "SelfAdjointEigV2": Row(lambda a: [tf.linalg.eigh(_hermitian(a))[0],
                                       tf.square(tf.linalg.eigh(_hermitian(a))[1]),
                                       tf.linalg.eigvalsh(_hermitian(a))], [(3, 3)],
                            dtypes=(tf.float32, tf.float64)),
    "MatrixTriangularSolve": Row(  # batch dimensions broadcast: (3, 3) against (2, 3, 2)
        lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
        [(3, 3), (2, 3, 2)], [_wellcond, _any]),
    "MatrixSolve": Row(lambda a, b: tf.linalg.solve(a, b, adjoint=True),
                       [(2, 3, 3), (2, 3, 2)], [_wellcond, _any]),
    "MatrixSolveLs": Row(  # over- and underdetermined
        lambda a, b, c, d: [_raw("MatrixSolveLs", [a, b, _c(0.1, tf.float64)]),
                            _raw("MatrixSolveLs", [c, d, _c(0.1, tf.float64)])],
        [(4, 3), (4, 2), (2, 3), (2, 2)]),
    "MatrixDiagV3": Row(lambda d: tf.linalg.diag(d, k=(-1, 1), align="LEFT_RIGHT"),
                        [(2, 3, 3)]),
    "MatrixDiagPartV3": Row(lambda x: tf.linalg.diag_part(x, k=(-1, 0)), [(2, 3, 4)]),
    "MatrixSetDiagV3": Row(lambda x, d: tf.linalg.set_diag(x, d, k=1),
                           [(2, 3, 4), (2, 3)]),
    "Diag": Row(tf.diag, [(2, 3)]),
    "DiagPart": Row(tf.diag_part, [(2, 3, 2, 3)]),
    "MatrixBandPart": Row(lambda x: tf.linalg.band_part(x, 1, 0), [(2, 3, 3)]),
    "Cross": Row(tf.linalg.cross, [(2, 3), (2, 3)]),
    "Lu": Row(lambda a: tf.linalg.lu(a).lu, [(2, 3, 3)], _wellcond),
    "MatrixExponential": Row(tf.linalg.expm, [(2, 3, 3)]),
    "MatrixSquareRoot": Row(tf.linalg.sqrtm, [(2, 3, 3)], _wellcond),
    "TridiagonalSolve": Row(tf.linalg.tridiagonal_solve, [(2, 3, 4), (2, 4, 2)],
                            lambda rng, shape: rng.uniform(-0.5, 0.5, shape) + (
                                np.array([0.0, 3.0, 0.0])[:, None] if shape[-2] == 3
                                else 0.0)),
    "TridiagonalMatMul": Row(lambda s, m, b, x: _raw("TridiagonalMatMul", [s, m, b, x]),
                             [(2, 1, 4), (2, 1, 4), (1, 1, 4), (2, 4, 2)]),
    # nn activations and their fused gradient ops: (gradients, features or outputs)
    "Relu": Row(tf.nn.relu, [(2, 3)], _nonzero),
    "Relu6": Row(tf.nn.relu6, [(2, 3)], _relu6),
    "Elu": Row(tf.nn.elu, [(2, 3)], _nonzero),
    "Selu": Row(tf.nn.selu, [(2, 3)], _nonzero),
    "LeakyRelu": Row(lambda x: tf.nn.leaky_relu(x, alpha=0.3), [(2, 3)], _nonzero),
    "Softplus": Row(tf.nn.softplus, [(2, 3)]),
    "Softsign": Row(tf.nn.softsign, [(2, 3)]),
    "ReluGrad": Row(lambda g, f: _raw("ReluGrad", [g, f]), [(2, 3), (2, 3)],
                    [_any, _nonzero]),
    "Relu6Grad": Row(lambda g, f: _raw("Relu6Grad", [g, f]), [(2, 3), (2, 3)],
                     [_any, _relu6]),
    "EluGrad": Row(lambda g, y: _raw("EluGrad", [g, y]), [(2, 3), (2, 3)],
                   [_any, _nonzero]),
    "SeluGrad": Row(lambda g, y: _raw("SeluGrad", [g, y]), [(2, 3), (2, 3)],
                    [_any, _nonzero]),
    "LeakyReluGrad": Row(lambda g, f: _raw("LeakyReluGrad", [g, f], {"alpha": 0.3}),
                         [(2, 3), (2, 3)], [_any, _nonzero]),
    "SoftplusGrad": Row(lambda g, f: _raw("SoftplusGrad", [g, f]), [(2, 3), (2, 3)]),
    "SoftsignGrad": Row(lambda g, f: _raw("SoftsignGrad", [g, f]), [(2, 3), (2, 3)]),
    # softmax and losses (both outputs of the fused losses: second-order terms too)
    "Softmax": Row(tf.nn.softmax, [(2, 3)]),
    "LogSoftmax": Row(tf.nn.log_softmax, [(2, 3)]),
    # as in TF, the gradient of the backprop output does not flow to the labels: that
    # output is checked (a second-order term) from an op with constant labels
    "SoftmaxCrossEntropyWithLogits": Row(
        lambda logits, labels: [
            _raw("SoftmaxCrossEntropyWithLogits", [logits, labels]),
            _raw("SoftmaxCrossEntropyWithLogits", [logits, _c(_LABELS, logits.dtype)],
                 output=1)],
        [(2, 3), (2, 3)], [_any, _distribution]),
    "SparseSoftmaxCrossEntropyWithLogits": Row(
        lambda logits: _raw("SparseSoftmaxCrossEntropyWithLogits",
                                [logits, _c([2, 0], tf.int32)], output=None),
        [(2, 3)]),
    "BiasAdd": Row(tf.nn.bias_add, [(2, 3), (3,)]),
    "BiasAddGrad": Row(lambda g: _raw("BiasAddGrad", [g]), [(2, 3)]),
    "BiasAddV1": Row(lambda v, b: _raw("BiasAddV1", [v, b]), [(2, 3), (3,)]),
    # convolution and pooling
    "Conv2D": Row(lambda x, f: tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID"),
                  [(1, 3, 3, 2), (2, 2, 2, 2)]),
    "_FusedConv2D": Row(lambda x, f, b: apply_op("_FusedConv2D", [x, f, [b]], {
        "strides": [1, 1, 1, 1], "padding": "SAME", "fused_ops": ["BiasAdd", "Relu"]},
        name="fused").outputs[0], [(1, 3, 3, 2), (2, 2, 2, 2), (2,)]),
    "_FusedConv3D": Row(lambda x, f, b: apply_op("_FusedConv3D", [x, f, [b]], {
        "strides": [1] * 5, "padding": "SAME", "fused_ops": ["BiasAdd", "Relu"]},
        name="fused").outputs[0], [(1, 2, 3, 2, 2), (2, 2, 1, 2, 2), (2,)],
        dtypes=(tf.float32,)),  # TF's types, no float64 to check the 16-bit ones against
    "Conv2DBackpropInput": Row(
        lambda f, dy: tf.nn.conv2d_backprop_input([1, 3, 3, 2], f, dy, [1, 1, 1, 1],
                                                      "VALID"),
        [(2, 2, 2, 2), (1, 2, 2, 2)]),
    "Conv2DBackpropFilter": Row(
        lambda x, dy: tf.nn.conv2d_backprop_filter(x, [2, 2, 2, 2], dy, [1, 1, 1, 1],
                                                       "VALID"),
        [(1, 3, 3, 2), (1, 2, 2, 2)]),
    "FractionalMaxPool": Row(
        lambda x: tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], overlapping=True,
                                            deterministic=True, seed=1, seed2=2).output,
        [(1, 5, 5, 2)], _distinct),
    "FractionalAvgPool": Row(
        lambda x: tf.nn.fractional_avg_pool(x, [1, 1.5, 1.5, 1], pseudo_random=True,
                                            overlapping=True, deterministic=True, seed=1,
                                            seed2=2).output,
        [(1, 5, 5, 2)]),
    "AvgPool": Row(lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
                   [(1, 3, 3, 1)]),
    "AvgPoolGrad": Row(lambda g: _raw("AvgPoolGrad", [_c([1, 4, 4, 1], tf.int32), g],
                                          _POOL), [(1, 2, 2, 1)]),
    "MaxPool": Row(lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                   [(1, 4, 4, 1)], _distinct),
    "MaxPoolGrad": Row(
        lambda g: _raw("MaxPoolGrad", [_c(_POOL_INPUT, g.dtype),
                                           tf.nn.max_pool(_c(_POOL_INPUT, g.dtype), **_POOL), g],
                           _POOL), [(1, 2, 2, 1)]),
    "MaxPoolGradGrad": Row(
        lambda g: _raw("MaxPoolGradGrad", [_c(_POOL_INPUT, g.dtype),
                                               tf.nn.max_pool(_c(_POOL_INPUT, g.dtype), **_POOL),
                                               g], _POOL), [(1, 4, 4, 1)]),
    # the V2 ops take the window as int32 inputs (ops/nn/pooling_v2_ops.py)
    "MaxPoolV2": Row(lambda x: _raw("MaxPoolV2", [x, *_pool_window()], {"padding": "VALID"}),
                     [(1, 4, 4, 1)], _distinct),
    "MaxPoolGradV2": Row(
        lambda g: _raw("MaxPoolGradV2", [_c(_POOL_INPUT, g.dtype),
                                         tf.nn.max_pool(_c(_POOL_INPUT, g.dtype), **_POOL), g,
                                         *_pool_window()], {"padding": "VALID"}),
        [(1, 2, 2, 1)]),
    "Dilation2D": Row(
        lambda x, k: tf.nn.dilation2d(x, k, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
        [(1, 3, 3, 2), (2, 2, 2)], _distinct),
    "MaxPoolWithArgmax": Row(
        lambda x: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")[0],
        [(1, 3, 3, 2)], _distinct),
    "MaxPoolGradWithArgmax": Row(
        lambda g: _raw("MaxPoolGradWithArgmax", [
            _c(_POOL_INPUT, g.dtype), g,
            tf.nn.max_pool_with_argmax(_c(_POOL_INPUT, g.dtype), **_POOL)[1]], _POOL),
        [(1, 2, 2, 1)]),
    "MaxPoolGradGradWithArgmax": Row(
        lambda g: _raw("MaxPoolGradGradWithArgmax", [
            _c(_POOL_INPUT, g.dtype), g,
            tf.nn.max_pool_with_argmax(_c(_POOL_INPUT, g.dtype), **_POOL)[1]], _POOL),
        [(1, 4, 4, 1)]),
    # N-d and depthwise convolution, 3-D pooling (ops/nn/conv_nd_ops, depthwise_ops,
    # pooling_nd_ops)
    "Conv3D": Row(lambda x, f: tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "VALID"),
                  [(1, 3, 2, 2, 2), (2, 2, 2, 2, 2)]),
    "Conv3DBackpropInputV2": Row(
        lambda f, dy: tf.nn.conv3d_transpose(dy, f, [1, 3, 2, 2, 2], [1, 1, 1, 1, 1],
                                             "VALID"),
        [(2, 2, 2, 2, 2), (1, 2, 1, 1, 2)]),
    "Conv3DBackpropFilterV2": Row(
        lambda x, dy: tf.nn.conv3d_backprop_filter_v2(x, [2, 2, 2, 2, 2], dy, [1] * 5,
                                                      "VALID"),
        [(1, 3, 2, 2, 2), (1, 2, 1, 1, 2)]),
    "DepthwiseConv2dNative": Row(
        lambda x, f: tf.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "SAME"),
        [(1, 3, 3, 2), (2, 2, 2, 2)]),
    "DepthwiseConv2dNativeBackpropInput": Row(
        lambda f, dy: tf.nn.depthwise_conv2d_native_backprop_input(
            [1, 3, 3, 2], f, dy, [1, 1, 1, 1], "VALID"),
        [(2, 2, 2, 2), (1, 2, 2, 4)]),
    "DepthwiseConv2dNativeBackpropFilter": Row(
        lambda x, dy: tf.nn.depthwise_conv2d_native_backprop_filter(
            x, [2, 2, 2, 2], dy, [1, 1, 1, 1], "VALID"),
        [(1, 3, 3, 2), (1, 2, 2, 4)]),
    "AvgPool3D": Row(lambda x: tf.nn.avg_pool3d(x, 2, 1, "SAME"), [(1, 2, 3, 2, 1)]),
    "AvgPool3DGrad": Row(lambda g: _raw("AvgPool3DGrad", [_c([1, 2, 4, 4, 1], tf.int32), g],
                                        _POOL3D), [(1, 1, 2, 2, 1)]),
    "MaxPool3D": Row(lambda x: tf.nn.max_pool3d(x, 2, 2, "VALID"), [(1, 2, 4, 4, 1)],
                     _distinct),
    "MaxPool3DGrad": Row(
        lambda g: _raw("MaxPool3DGrad", [_c(_POOL3D_INPUT, g.dtype),
                                         tf.nn.max_pool3d(_c(_POOL3D_INPUT, g.dtype),
                                                          **_POOL3D), g],
                       _POOL3D), [(1, 1, 2, 2, 1)]),
    "MaxPool3DGradGrad": Row(
        lambda g: _raw("MaxPool3DGradGrad", [_c(_POOL3D_INPUT, g.dtype),
                                             tf.nn.max_pool3d(_c(_POOL3D_INPUT, g.dtype),
                                                              **_POOL3D), g],
                       _POOL3D), [(1, 2, 4, 4, 1)]),
    # array: shapes, joins, pads
    "Identity": Row(tf.identity, [(2, 3)]),
    "IdentityN": Row(lambda a, b: tf.identity_n([a, b]), [(2, 3), (3,)]),
    "PlaceholderWithDefault": Row(lambda x: tf.placeholder_with_default(x, [2, 3]),
                                  [(2, 3)], type_attr="dtype"),
    "CheckNumerics": Row(lambda x: tf.debugging.check_numerics(x, "bad"), [(2, 3)]),
    "CheckNumericsV2": Row(lambda x: apply_op("CheckNumericsV2", [x], {"message": "bad"})
                           .outputs[0], [(2, 3)]),
    "Print": Row(lambda x: tf.Print(x, [x], first_n=1), [(2, 3)]),
    "Reshape": Row(lambda x: tf.reshape(x, [3, 2]), [(2, 3)]),
    "ExpandDims": Row(lambda x: tf.expand_dims(x, 1), [(2, 3)]),
    "Squeeze": Row(lambda x: tf.squeeze(x, [1]), [(2, 1, 3)]),
    "Transpose": Row(lambda x: tf.transpose(x, [2, 0, 1]), [(2, 3, 2)]),
    "ConjugateTranspose": Row(
        lambda x: _raw("ConjugateTranspose", [x, _c([1, 0], tf.int32)]), [(2, 3)]),
    "BroadcastTo": Row(lambda x: tf.broadcast_to(x, [2, 3]), [(1, 3)]),
    "Fill": Row(lambda x: tf.fill([2, 3], x), [()]),
    "Tile": Row(lambda x: tf.tile(x, [2, 1]), [(2, 3)]),
    "ConcatV2": Row(lambda a, b: tf.concat([a, b], axis=1), [(2, 3), (2, 1)]),
    "Pack": Row(lambda a, b: tf.stack([a, b], axis=1), [(2, 3), (2, 3)]),
    "Unpack": Row(lambda x: [tf.unstack(x)[i] for i in (0, 2)], [(3, 2)]),  # one unused
    "Split": Row(lambda x: tf.split(x, 2, axis=1), [(2, 4)]),
    "SplitV": Row(lambda x: tf.split(x, [2, 3], axis=1)[1], [(2, 5)]),
    "Pad": Row(lambda x: tf.pad(x, [[1, 0], [0, 2]]), [(2, 3)]),
    "PadV2": Row(lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=2), [(2, 3)]),
    "MirrorPad": Row(lambda x: tf.pad(x, [[1, 1], [1, 1]], mode="REFLECT"), [(2, 3)]),
    "MirrorPadGrad": Row(
        lambda x: _raw("MirrorPadGrad", [x, _c([[1, 1], [1, 1]], tf.int32)],
                           {"mode": "REFLECT"}), [(4, 5)]),
    "ReverseV2": Row(lambda x: tf.reverse(x, [1]), [(2, 3)]),
    "ReverseSequence": Row(
        lambda x: tf.reverse_sequence(x, [3, 2], seq_axis=1, batch_axis=0), [(2, 4)]),
    # indexing
    "Slice": Row(lambda x: tf.slice(x, [1, 1], [2, 2]), [(3, 4)]),
    "StridedSlice": Row(lambda x: x[1:3, ::-2], [(3, 4)]),
    "StridedSliceGrad": Row(
        lambda dy: _raw("StridedSliceGrad", [_c([3, 4], tf.int32), _c([1, 0], tf.int32),
                                                 _c([3, 4], tf.int32), _c([1, 2], tf.int32),
                                                 dy]), [(2, 2)]),
    "GatherV2": Row(lambda x: tf.gather(x, [2, 0, 2], axis=1), [(2, 3)],
                    type_attr="Tparams"),
    "GatherNd": Row(lambda x: tf.gather_nd(x, [[0, 1], [2, 0], [0, 1]]), [(3, 2)],
                    type_attr="Tparams"),
    "ScatterNd": Row(lambda u: tf.scatter_nd([[0], [2], [0]], u, [4, 2]), [(3, 2)]),
    "Select": Row(lambda t, e: tf.where([[True, False, True], [False, True, False]], t, e),
                  [(2, 3), (2, 3)]),
    "SelectV2": Row(lambda t, e: tf.where_v2([True, False, True], t, e),
                    [(2, 3), (3,)]),
    "TopKV2": Row(lambda x: tf.nn.top_k(x, 2).values, [(2, 4)], _distinct),
    "TopK": Row(lambda x: _raw("TopK", [x], {"k": 2}), [(2, 4)], _distinct),
    # normalization and CTC (ops/nn/norm_ops.py, ctc_ops.py): float32 only, as in TF
    "LRN": Row(lambda x: tf.nn.lrn(x, 2, 1.2, 0.4, 0.75), [(1, 2, 2, 6)],
               dtypes=(tf.float32,)),
    "FusedBatchNormV3": Row(lambda x, s, o: tf.nn.fused_batch_norm(x, s, o)[0],
                            [(3, 2, 2, 2), (2,), (2,)], _pos, dtypes=(tf.float32,)),
    "_FusedBatchNormEx": Row(lambda x, s, o: apply_op("_FusedBatchNormEx", [
        x, s, o, _empty_stats(), _empty_stats(), []], {"activation_mode": "Relu"},
        name="fused").outputs[0], [(3, 2, 2, 2), (2,), (2,)], _pos, dtypes=(tf.float32,)),
    # the TF 1.x forms (ops/nn/batch_norm_ops.py); the ...Grad ops' second derivatives
    # follow the batch statistics, so in training their reserve inputs come from x
    "FusedBatchNorm": Row(lambda x, s, o: _raw("FusedBatchNorm",
                                               [x, s, o, _empty_stats(), _empty_stats()]),
                          [(3, 2, 2, 2), (2,), (2,)], _pos, dtypes=(tf.float32,)),
    "FusedBatchNormV2": Row(
        lambda x, s, o: _raw("FusedBatchNormV2", [x, s, o, _c([0.1, -0.2], tf.float32),
                                                  _c([1.0, 0.5], tf.float32)],
                             {"is_training": False, "data_format": "NCHW"}),
        [(2, 2, 3, 2), (2,), (2,)], dtypes=(tf.float32,)),
    "FusedBatchNormGrad": Row(
        _fused_batch_norm_grad("FusedBatchNormGrad", "FusedBatchNorm"),
        [(3, 2, 2, 2), (3, 2, 2, 2), (2,)], [_unit, _any, _pos], dtypes=(tf.float32,)),
    "FusedBatchNormGradV2": Row(
        lambda dy, x, s: _raw("FusedBatchNormGradV2",
                              [dy, x, s, _c([0.1, -0.2], tf.float32),
                               _c([1.0, 0.5], tf.float32)],
                              {"is_training": False, "data_format": "NCHW"}, output=None)[:3],
        [(2, 2, 3, 2), (2, 2, 3, 2), (2,)], dtypes=(tf.float32,)),
    "FusedBatchNormGradV3": Row(
        _fused_batch_norm_grad("FusedBatchNormGradV3", "FusedBatchNormV3"),
        [(3, 2, 2, 2), (3, 2, 2, 2), (2,)], [_unit, _any, _pos], dtypes=(tf.float32,)),
    "BatchNormWithGlobalNormalization": Row(
        lambda t, m, v, b, g: _raw("BatchNormWithGlobalNormalization", [t, m, v, b, g],
                                   {"variance_epsilon": 0.001,
                                    "scale_after_normalization": True}),
        [(2, 1, 2, 3), (3,), (3,), (3,), (3,)], [_any, _any, _pos, _any, _any]),
    "CTCLoss": Row(lambda x: tf.nn.ctc_loss(
        tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 1, 0], [2, 2]), x, [4, 3]),
        [(4, 2, 3)]),
    # image resizing (ops/image/resize_ops.py): float32 results whatever the input type
    # (as TF), so no float64 check; the ...Grad ops are linear in grads
    "ResizeBilinear": Row(lambda x: tf.image.resize_bilinear(x, [3, 5]), [(1, 2, 3, 1)],
                          dtypes=(tf.float16, tf.bfloat16, tf.float32)),
    "ResizeBicubic": Row(lambda x: tf.image.resize_bicubic(x, [3, 5], half_pixel_centers=True),
                         [(1, 2, 3, 1)], dtypes=(tf.float32,)),
    "ResizeArea": Row(lambda x: tf.image.resize_area(x, [2, 2]), [(1, 3, 5, 1)],
                      dtypes=(tf.float16, tf.bfloat16, tf.float32)),
    "ResizeNearestNeighbor": Row(lambda x: tf.image.resize_nearest_neighbor(x, [3, 5]),
                                 [(1, 2, 3, 1)]),
    # crops and patches (ops/image/crop_patch_ops.py); the boxes' gradient of
    # CropAndResize is checked in tests/ops/image/test_crop_patch_ops.py
    "CropAndResize": Row(lambda x: tf.image.crop_and_resize(
        x, [[0.1, 0.2, 0.83, 0.71], [0.9, 0.05, 0.3, 0.66]], [0, 1], [3, 4]),
        [(2, 4, 5, 2)], dtypes=(tf.float32,)),
    "ExtractImagePatches": Row(lambda x: tf.image.extract_patches(
        x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME"), [(2, 4, 5, 2)]),
    "ExtractVolumePatches": Row(lambda x: tf.extract_volume_patches(
        x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"), [(1, 3, 3, 2, 2)]),
    "ResizeBilinearGrad": Row(lambda g: _raw("ResizeBilinearGrad", [
        tf.cast(g, tf.float32), tf.zeros([1, 2, 3, 1], g.dtype)]), [(1, 3, 5, 1)],
        dtypes=(tf.float32,)),
    "ResizeBicubicGrad": Row(lambda g: _raw("ResizeBicubicGrad", [
        tf.cast(g, tf.float32), tf.zeros([1, 2, 3, 1], g.dtype)]), [(1, 3, 5, 1)],
        dtypes=(tf.float32,)),
    "ResizeAreaGrad": Row(lambda g: _raw("ResizeAreaGrad", [
        tf.cast(g, tf.float32), tf.zeros([1, 3, 5, 1], g.dtype)]), [(1, 2, 2, 1)],
        dtypes=(tf.float32,)),
    "ResizeNearestNeighborGrad": Row(lambda g: _raw("ResizeNearestNeighborGrad", [
        g, _c([2, 3], tf.int32)]), [(1, 3, 5, 1)]),
    "DynamicPartition": Row(lambda x: tf.dynamic_partition(x, [0, 1, 0, 1], 2),
                            [(4, 2)]),
    "DynamicStitch": Row(lambda a, b: tf.dynamic_stitch([[0, 2], [1, 3]], [a, b]),
                         [(2, 2), (2, 2)]),
    "ParallelDynamicStitch": Row(lambda a, b: tf.raw_ops.ParallelDynamicStitch(
        indices=[[0, 2], [1, 3]], data=[a, b]), [(2, 2), (2, 2)]),
    # sparse
    "SparseReorder": Row(
        lambda v: tf.sparse_reorder(tf.SparseTensor([[1, 0], [0, 2], [0, 1]], v,
                                                        [2, 3])).values, [(3,)]),
    "SparseToDense": Row(
        lambda v, d: tf.sparse_to_dense([[0, 1], [1, 2]], [2, 3], v, d),
        [(2,), ()]),
    "RaggedTensorToTensor": Row(
        lambda v, d: tf.raw_ops.RaggedTensorToTensor(
            shape=_c([-1, 3, 2], tf.int64), values=v, default_value=d,
            row_partition_tensors=[_c([0, 1, 3], tf.int64)],
            row_partition_types=["ROW_SPLITS"]), [(3, 2), (2,)]),
    # rearranging, shapes, tensor scatters, sparse (helper H9)
    "Roll": Row(lambda x: tf.roll(x, [1, -1], [0, 1]), [(2, 3)]),
    "SpaceToDepth": Row(lambda x: tf.space_to_depth(x, 2), [(1, 2, 4, 1)]),
    "DepthToSpace": Row(lambda x: tf.depth_to_space(x, 2), [(1, 1, 2, 4)]),
    "SpaceToBatchND": Row(lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 0], [0, 0]]),
                          [(1, 3, 4, 1)]),
    "BatchToSpaceND": Row(lambda x: tf.batch_to_space_nd(x, [2, 2], [[1, 0], [0, 1]]),
                          [(4, 2, 2, 1)]),
    "EnsureShape": Row(lambda x: tf.ensure_shape(x, [2, None]), [(2, 3)]),
    "TensorScatterUpdate": Row(lambda t, u: tf.tensor_scatter_nd_update(t, [[2], [0]], u),
                               [(3, 2), (2, 2)]),
    "TensorScatterAdd": Row(lambda t, u: tf.tensor_scatter_nd_add(t, [[2], [0], [2]], u),
                            [(3, 2), (3, 2)]),
    "TensorScatterSub": Row(lambda t, u: tf.tensor_scatter_nd_sub(t, [[2], [0], [2]], u),
                            [(3, 2), (3, 2)]),
    "TensorScatterMax": Row(lambda t, u: tf.tensor_scatter_nd_max(t, [[2], [0]], u),
                            [(3, 2), (2, 2)],
                            [_distinct, lambda rng, shape: _distinct(rng, shape) + 0.05]),
    "TensorScatterMin": Row(lambda t, u: tf.tensor_scatter_nd_min(t, [[2], [0]], u),
                            [(3, 2), (2, 2)],
                            [_distinct, lambda rng, shape: _distinct(rng, shape) + 0.05]),
    "SparseAdd": Row(
        lambda a, b: tf.sparse.add(tf.SparseTensor([[0, 0], [0, 2], [1, 1]], a, [2, 3]),
                                   tf.SparseTensor([[0, 0], [1, 0], [1, 1]], b, [2, 3])).values,
        [(3,), (3,)]),
    "SparseTensorDenseAdd": Row(
        lambda v, d: tf.sparse.add(tf.SparseTensor([[0, 1], [1, 2]], v, [2, 3]), d),
        [(2,), (2, 3)]),
    "SparseReduceSum": Row(
        lambda v: tf.sparse.reduce_sum(
            tf.SparseTensor([[0, 0, 1], [1, 1, 0], [1, 1, 1]], v, [2, 2, 2]), [0, 2]), [(3,)]),
    "SparseDenseCwiseMul": Row(
        lambda v, d: (tf.SparseTensor([[0, 0], [0, 2], [1, 1]], v, [2, 3]) * d).values,
        [(3,), (2, 1)]),
    "SparseDenseCwiseDiv": Row(
        lambda v, d: (tf.SparseTensor([[0, 0], [0, 2], [1, 1]], v, [2, 3]) / d).values,
        [(3,), (3,)], [_distinct, lambda rng, shape: _distinct(rng, shape) + 2.0]),
    "SparseSoftmax": Row(
        lambda v: tf.sparse.softmax(
            tf.SparseTensor([[0, 0], [0, 2], [1, 1], [1, 2]], v, [2, 3])).values, [(4,)]),
    "SparseTensorDenseMatMul": Row(
        lambda v, b: tf.sparse.sparse_dense_matmul(
            tf.SparseTensor([[0, 0], [0, 2], [1, 1]], v, [2, 3]), b, adjoint_b=True),
        [(3,), (2, 3)]),
    "SparseSlice": Row(
        lambda v: tf.sparse.slice(tf.SparseTensor([[0, 0], [0, 2], [1, 1]], v, [2, 3]),
                                  [0, 1], [2, 2]).values, [(3,)]),
    "SparseConcat": Row(
        lambda a, b: tf.sparse.concat(1, [tf.SparseTensor([[0, 0], [1, 1]], a, [2, 2]),
                                          tf.SparseTensor([[0, 1], [1, 0]], b, [2, 2])]).values,
        [(2,), (2,)]),
    "SparseFillEmptyRows": Row(
        lambda v, d: tf.sparse.fill_empty_rows(
            tf.SparseTensor([[1, 0], [3, 2]], v, [4, 3]), d)[0].values, [(2,), ()]),
    "SparseSegmentSum": Row(lambda x: tf.sparse.segment_sum(x, [0, 2, 0], [0, 0, 1]),
                            [(3, 2)]),
    "SparseSegmentMean": Row(lambda x: tf.sparse.segment_mean(x, [0, 2, 0], [0, 0, 1]),
                             [(3, 2)]),
    "SparseSegmentSqrtN": Row(lambda x: tf.sparse.segment_sqrt_n(x, [0, 2, 0], [0, 0, 1]),
                              [(3, 2)]),
    "SparseSegmentSumWithNumSegments": Row(
        lambda x: tf.sparse.segment_sum(x, [0, 2, 0], [0, 0, 2], num_segments=4), [(3, 2)]),
    "SparseSegmentMeanWithNumSegments": Row(
        lambda x: tf.sparse.segment_mean(x, [0, 2, 0], [0, 0, 2], num_segments=4), [(3, 2)]),
    "SparseSegmentSqrtNWithNumSegments": Row(
        lambda x: tf.sparse.segment_sqrt_n(x, [0, 2, 0], [0, 0, 2], num_segments=4),
        [(3, 2)]),
    # reads of resource variables: the gradient flows to the variable
    "ReadVariableOp": Row(lambda v: v.read_value() * 2, [(2, 3)],
                          type_attr="dtype", variable=True),
    "ResourceGather": Row(lambda v: tf.gather(v, [2, 0, 2]), [(3, 2)],
                          type_attr="dtype", variable=True),
}

# op type -> (why it is not in TABLE, tests that check its gradient numerically there)
EXCLUDED = {
    "EagerPyFunc": ("TF's gradient runs the Python function under a tape (eager only): "
                    "ours raises LookupError saying so",
                    ["ops/control_flow/test_script_ops.py::"
                     "test_py_function_in_a_dataset_map_and_its_gradient"]),
    "MatrixLogarithm": ("TF registers no gradient for it: its gradient raises LookupError",
                        ["ops/linalg/test_matrix_roots_ops.py::test_logm_has_no_gradient"]),
    "BatchFunction": ("TF registers no gradient for it: its gradient raises LookupError",
                      ["ops/data_flow/test_batch_ops.py::test_no_gradient_as_tensorflow"]),
    **{op: ("TF registers no gradient for it: its gradient raises LookupError",
            ["ops/sparse/test_sparse_math_ops.py::"
             "test_reductions_without_gradient_raise_lookup_error"])
       for op in ("SparseReduceMax", "SparseReduceMaxSparse", "SparseReduceSumSparse")},
    **{op: ("TF registers no gradient for it: its gradient raises LookupError",
            ["ops/io/test_audio_features.py::test_no_gradient_as_in_tf"])
       for op in ("AudioSpectrogram", "Mfcc")},
    **{op: ("TF registers no gradient for it: its gradient raises LookupError",
            ["ops/nn/test_legacy_nn_ops.py::test_gradient_ops_have_no_gradient_as_tensorflow"])
       for op in ("LRNGrad", "BatchNormWithGlobalNormalizationGrad", "Conv3DBackpropInput",
                  "Conv3DBackpropFilter")},
    "MaxPoolGradGradV2": ("TF registers no gradient for it: its gradient raises LookupError",
                          ["ops/nn/test_pooling_v2_ops.py::"
                           "test_grad_grad_v2_has_no_gradient_as_tensorflow"]),
    "RandomPoissonV2": ("TF registers no gradient for it: its gradient raises LookupError",
                        ["ops/random/test_random_gamma_ops.py::"
                         "test_random_poisson_has_no_gradient"]),
    "StatelessShuffle": ("TF registers no gradient for it: its gradient raises LookupError",
                         ["ops/random/test_stateless_shuffle_ops.py::"
                          "test_stateless_shuffle_has_no_gradient"]),
    "RandomGamma": ("each run draws new samples; its gradient (RandomGammaGrad) is checked "
                    "against central differences of the inverse CDF",
                    ["ops/random/test_random_gamma_ops.py::"
                     "test_random_gamma_grad_is_the_derivative_of_the_inverse_cdf"]),
    "Merge": ("differentiable only as the output of a tf.cond",
              ["ops/control_flow/test_control_flow_grad.py::test_grad_cond_both_branches",
               "ops/control_flow/test_control_flow_grad.py::test_grad_cond_in_while"]),
    "Switch": ("differentiable only as the input of a tf.cond",
               ["ops/control_flow/test_control_flow_grad.py::test_grad_cond_both_branches",
                "ops/control_flow/test_control_flow_grad.py::test_grad_cond_in_while"]),
    "Enter": ("a while loop is differentiated as a whole; alone, LookupError "
              "(test_loop_primitives_are_differentiated_with_their_loop)",
              ["ops/control_flow/test_control_flow_grad.py::test_grad_while_matmul_tanh",
               "ops/control_flow/test_control_flow_grad.py::test_grad_scan_map_foldl"]),
    "Exit": ("a while loop is differentiated as a whole; alone, LookupError",
             ["ops/control_flow/test_control_flow_grad.py::test_grad_while_matmul_tanh",
              "ops/control_flow/test_control_flow_grad.py::test_grad_scan_map_foldl"]),
    "NextIteration": ("a while loop is differentiated as a whole; alone, LookupError",
                      ["ops/control_flow/test_control_flow_grad.py::test_grad_while_matmul_tanh",
                       "ops/control_flow/test_control_flow_grad.py::test_grad_scan_map_foldl"]),
    "TensorArrayReadV3": ("needs a TensorArray and its gradient array",
                          ["ops/control_flow/test_control_flow_grad.py::"
                           "test_grad_tensor_array_loop"]),
    "TensorArrayWriteV3": ("needs a TensorArray and its gradient array",
                           ["ops/control_flow/test_control_flow_grad.py::"
                            "test_grad_tensor_array_loop",
                            "ops/data_flow/test_tensor_array_ops.py::"
                            "test_gradient_concat_of_writes"]),
    "TensorArrayGatherV3": ("needs a TensorArray and its gradient array (ta.stack())",
                            ["ops/control_flow/test_control_flow_grad.py::"
                             "test_grad_tensor_array_loop"]),
    "TensorArrayScatterV3": ("needs a TensorArray and its gradient array (ta.unstack())",
                             ["ops/control_flow/test_control_flow_grad.py::"
                              "test_grad_tensor_array_loop"]),
    "TensorArrayConcatV3": ("needs a TensorArray and its gradient array",
                            ["ops/data_flow/test_tensor_array_ops.py::"
                             "test_gradient_split_concat",
                             "ops/data_flow/test_tensor_array_ops.py::"
                             "test_gradient_concat_of_writes"]),
    "TensorArraySplitV3": ("needs a TensorArray and its gradient array",
                           ["ops/data_flow/test_tensor_array_ops.py::"
                            "test_gradient_split_concat"]),
    # TensorLists: a list op's gradient is a list op; checked on the dense function
    # of list ops around it
    **{op: ("needs the list ops around it (a list in, a list out)",
            ["ops/data_flow/test_list_ops.py::" + t for t in tests])
       for op, tests in {
           "TensorListStack": ["test_gradient_set_item_on_from_tensor"],
           "TensorListFromTensor": ["test_gradient_set_item_on_from_tensor"],
           "TensorListSetItem": ["test_gradient_set_item_on_from_tensor",
                                 "test_gradient_resize_and_set_item_with_resize"],
           "TensorListGetItem": ["test_gradient_get_item"],
           "TensorListPushBack": ["test_gradient_push_back_pop_back"],
           "TensorListPopBack": ["test_gradient_push_back_pop_back"],
           "TensorListGather": ["test_gradient_gather_scatter"],
           "TensorListScatter": ["test_gradient_gather_scatter"],
           "TensorListScatterV2": ["test_gradient_gather_scatter"],
           "TensorListScatterIntoExistingList": ["test_gradient_scatter_into_existing_list"],
           "TensorListSplit": ["test_gradient_split_concat"],
           "TensorListConcat": ["test_gradient_split_concat"],
           "TensorListConcatV2": ["test_gradient_split_concat"],
           "TensorListResize": ["test_gradient_resize_and_set_item_with_resize"],
       }.items()},
    "PreventGradient": ("its gradient fails by design: it guards the CTCLoss gradient "
                        "(test_ctc_ops.py::test_no_second_derivative checks the error)",
                        ["ops/nn/test_ctc_ops.py::test_gradient"]),
    # fake quantization: the op is piecewise constant; its straight-through gradient is the
    # derivative of the clamp to the nudged range, checked against that clamp numerically
    **{op: ("a straight-through gradient: the derivative of the clamp to the nudged range, "
            "not of the piecewise-constant op",
            ["ops/math/test_fake_quant_ops.py::test_%s_gradient_is_the_clamps_derivative"
             % name])
       for op, name in (("FakeQuantWithMinMaxArgs", "args"),
                        ("FakeQuantWithMinMaxVars", "vars"),
                        ("FakeQuantWithMinMaxVarsPerChannel", "per_channel"))},
    **{op: ("TF registers no gradient for it: its gradient raises LookupError",
            ["ops/math/test_fake_quant_ops.py::test_gradient_ops_have_no_gradient"])
       for op in ("FakeQuantWithMinMaxArgsGradient", "FakeQuantWithMinMaxVarsGradient",
                  "FakeQuantWithMinMaxVarsPerChannelGradient")},
    "QuantizeAndDequantizeV2": ("a straight-through gradient: the identity's, not the "
                                "piecewise-constant op's",
                                ["ops/math/test_quantize_dequantize_ops.py::"
                                 "test_quantize_and_dequantize_gradient_is_the_identitys"]),
    "QuantizeAndDequantizeV4": ("a straight-through gradient: the derivative of the clamp "
                                "to the range, not of the piecewise-constant op",
                                ["ops/math/test_quantize_dequantize_ops.py::"
                                 "test_quantize_and_dequantize_v2_gradient_is_the_clamps_"
                                 "derivative"]),
    "QuantizeAndDequantizeV4Grad": ("TF registers no gradient for it: its gradient raises "
                                    "LookupError",
                                    ["ops/math/test_quantize_dequantize_ops.py::"
                                     "test_v4_gradient_op_has_no_gradient"]),
    **{op: ("TF registers no gradient for it: its gradient raises LookupError",
            ["ops/math/test_quantize_ops.py::test_quantize_ops_have_no_gradient"])
       for op in ("QuantizeV2", "Dequantize", "QuantizedConcat")},
    **{op: ("TF registers no gradient for it: its gradient raises LookupError",
            ["ops/nn/test_quantized_nn_ops.py::test_quantized_nn_ops_have_no_gradient"])
       for op in ("QuantizedMaxPool", "QuantizedAvgPool", "QuantizedRelu", "QuantizedRelu6",
                  "QuantizedReluX", "QuantizedConv2D", "QuantizedBiasAdd")},
    **{op: ("TF registers no gradient for it: its gradient raises LookupError",
            ["ops/math/test_quantized_math_ops.py::test_quantized_math_ops_have_no_gradient"])
       for op in ("QuantizedMatMul", "Requantize", "RequantizationRange",
                  "QuantizeDownAndShrinkRange")},
}


# --- the checks -----------------------------------------------------------------------------


def _differentiable_ops():
    package = os.path.dirname(tf.__file__)
    return {name for name, op_def in registry.registered_ops().items()
            if op_def.where.startswith(package) and registry.get_gradient(name)[1] is not None}


def _dtypes(op_type: str, row: Row):
    if row.dtypes is not None:
        return list(row.dtypes)
    allowed = getattr(registry.get_op_def(op_type).attrs[row.type_attr], "allowed", None)
    return [d for d in FLOATING if allowed is None or d in allowed]


CASES = [(op_type, dtype) for op_type in sorted(TABLE)
         for dtype in _dtypes(op_type, TABLE[op_type])]


def _values(op_type: str, row: Row, dtype: tf.DType):
    """The inputs for one case, exactly representable in `dtype` (the same for every
    dtype of the op, up to rounding)."""
    rng = np.random.RandomState(zlib.crc32(op_type.encode()))
    domains = row.domain if isinstance(row.domain, (list, tuple)) else \
        [row.domain] * len(row.shapes)
    values = []
    for shape, domain in zip(row.shapes, domains):
        v = domain(rng, shape)
        if dtype.is_complex:
            v = v + 1j * domain(rng, shape)
        values.append(np.asarray(v).astype(dtype.as_numpy_dtype))
    return values


def _output(outputs, dtype):
    """One tensor from the op's output(s): several are weighted differently and joined."""
    if not isinstance(outputs, (list, tuple)):
        return outputs
    return tf.concat([tf.reshape(o * _c(i + 1, dtype), [-1]) for i, o in enumerate(outputs)],
                     axis=0)


def _build(op_type: str, row: Row, dtype: tf.DType, values):
    """Inputs (placeholders or resource variables) and the output; checks that the
    output really goes through an op of `op_type`."""
    if row.variable:
        xs = [tf.Variable(v, dtype=dtype, use_resource=True) for v in values]
    else:
        xs = [tf.placeholder(dtype, shape) for shape in row.shapes]
    before = len(tf.get_default_graph().get_operations())
    y = _output(row.build(*xs), dtype)
    built = {op.type for op in tf.get_default_graph().get_operations()[before:]}
    assert op_type in built, "row %s builds %s" % (op_type, sorted(built))
    return xs, y


def _shape(y, xs, values):
    """y's shape: static, or (where TF infers none, e.g. segment ops) from a run."""
    if y.shape.is_fully_defined():
        return y.shape.as_list()
    with tf.Session(graph=y.graph) as sess:
        sess.run(tf.global_variables_initializer())
        feed = {} if isinstance(xs[0], tf.Variable) else dict(zip(xs, values))
        return list(sess.run(y, feed).shape)


def _fetchable(grad):
    return [grad.values, grad.indices] if isinstance(grad, IndexedSlices) else grad


def _dense(value, shape):
    if isinstance(value, list):  # IndexedSlices values, indices
        out = np.zeros(shape, dtype=value[0].dtype)
        np.add.at(out, value[1], value[0])
        return out
    return np.asarray(value)


def _variable_gradient_error(sess, var, value, y, delta):
    """compute_gradient_error for a resource variable: the theoretical Jacobian from
    tf.gradients(y, var) seeded one output at a time, the numeric one by loading
    perturbed values into the variable (complex values as pairs of reals)."""
    real = var.dtype.real_dtype.as_numpy_dtype
    y_shape = _shape(y, [var], [value])
    dy = tf.placeholder(y.dtype, y_shape)
    grad = tf.gradients(y, var, grad_ys=dy)[0]
    seed = np.zeros(y_shape, dtype=y.dtype.as_numpy_dtype)
    seed_flat = seed.reshape(-1).view(y.dtype.real_dtype.as_numpy_dtype)
    var.load(value, sess)
    theoretical = []
    for col in range(seed_flat.size):
        seed_flat[:] = 0
        seed_flat[col] = 1
        g = _dense(sess.run(_fetchable(grad), {dy: seed}), value.shape)
        theoretical.append(np.ascontiguousarray(g).reshape(-1).view(real))
    work = value.copy()
    flat = work.reshape(-1).view(real)
    numeric = []
    for row in range(flat.size):
        orig = flat[row]
        flat[row] = orig + delta
        var.load(work, sess)
        y_pos = np.asarray(sess.run(y), dtype=np.complex128)
        flat[row] = orig - delta
        var.load(work, sess)
        y_neg = np.asarray(sess.run(y), dtype=np.complex128)
        flat[row] = orig
        diff = ((y_pos - y_neg) / (2 * delta)).reshape(-1)
        numeric.append(diff.view(np.float64) if y.dtype.is_complex else diff.real)
    return float(np.max(np.abs(np.array(theoretical).T - np.array(numeric))))


def _check_numeric(op_type: str, row: Row, dtype: tf.DType):
    delta, tolerance = NUMERIC[dtype]
    values = _values(op_type, row, dtype)
    xs, y = _build(op_type, row, dtype, values)
    if row.variable:
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            err = max(_variable_gradient_error(sess, x, v, y, delta)
                      for x, v in zip(xs, values))
    else:
        err = compute_gradient_error(xs, [list(s) for s in row.shapes], y,
                                     _shape(y, xs, values), x_init_value=values, delta=delta)
    assert err < tolerance, "%s %s: Jacobian error %g" % (op_type, dtype.name, err)


def _analytic_gradients(op_type: str, row: Row, dtype: tf.DType, values, low: tf.DType):
    """The gradients of the op built in `dtype` at `values`, and the feeds: the inputs
    and a seed for the output's gradient, representable in `low`."""
    xs, y = _build(op_type, row, dtype, [v.astype(dtype.as_numpy_dtype) for v in values])
    y_shape = _shape(y, xs, values)
    dy = tf.placeholder(y.dtype, y_shape)
    grads = tf.gradients(y, xs, grad_ys=dy)
    for g in grads:
        if g is not None:
            assert g.dtype == dtype, (op_type, g.dtype, dtype)
    feed = {} if row.variable else dict(zip(xs, values))
    seed = np.random.RandomState(7).uniform(-1, 1, y_shape)
    feed[dy] = seed.astype(low.as_numpy_dtype).astype(y.dtype.as_numpy_dtype)
    return [None if g is None else _fetchable(g) for g in grads], feed


def _check_low_precision(op_type: str, row: Row, dtype: tf.DType):
    """The gradient in float16/bfloat16 against the float64 gradient of the same inputs
    and the same output gradient (both exactly representable in `dtype`)."""
    values = [v.astype(np.float64) for v in _values(op_type, row, dtype)]
    low, low_feed = _analytic_gradients(op_type, row, dtype, values, dtype)
    high, high_feed = _analytic_gradients(op_type, row, tf.float64, values, dtype)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_low, got_high = sess.run([[g for g in low if g is not None],
                                      [g for g in high if g is not None]],
                                     {**low_feed, **high_feed})
    assert [g is None for g in low] == [g is None for g in high]
    shapes = [s for s, g in zip(row.shapes, low) if g is not None]
    for shape, a, b in zip(shapes, got_low, got_high):
        a, b = _dense(a, shape), _dense(b, shape).astype(np.float64)
        assert a.dtype == dtype.as_numpy_dtype, (op_type, a.dtype)
        scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
        err = float(np.max(np.abs(a.astype(np.float64) - b))) if b.size else 0.0
        assert err <= LOW_PRECISION[dtype] * scale, \
            "%s %s: gradient differs from float64 by %g" % (op_type, dtype.name, err)


@pytest.mark.parametrize("op_type,dtype", CASES, ids=["%s-%s" % (t, d.name) for t, d in CASES])
def test_gradient(op_type, dtype):
    if op_type in special_functions.SCIPY_OP_TYPES:
        pytest.importorskip("scipy")
    row = TABLE[op_type]
    with tf.Graph().as_default():
        if dtype in LOW_PRECISION:
            _check_low_precision(op_type, row, dtype)
        else:
            _check_numeric(op_type, row, dtype)


# --- the table covers the registry ------------------------------------------------------------


def test_table_covers_the_gradient_registry():
    differentiable = _differentiable_ops()
    missing = sorted(differentiable - set(TABLE) - set(EXCLUDED))
    assert not missing, "gradients without a numeric check in TABLE: %s" % missing
    stale = sorted((set(TABLE) | set(EXCLUDED)) - differentiable)
    assert not stale, "rows for ops without a registered gradient function: %s" % stale
    assert not set(TABLE) & set(EXCLUDED)
    for op_type, row in TABLE.items():
        assert _dtypes(op_type, row), "%s: no floating dtype to check" % op_type


@pytest.mark.parametrize("op_type", sorted(EXCLUDED))
def test_excluded_ops_name_tests_that_check_them_numerically(op_type):
    reason, tests = EXCLUDED[op_type]
    assert reason and tests
    for test in tests:
        path, name = test.split("::")
        with open(os.path.join(_TESTS, path)) as f:
            source = f.read()
        body = re.search(r"^def %s\(.*?(?=^\S)" % name, source + "\nend", re.S | re.M)
        assert body, "%s: no test %s" % (op_type, test)
        assert "compute_gradient_error" in body.group(0), "%s checks no gradient" % test


def test_loop_primitives_are_differentiated_with_their_loop(graph):
    # Enter/Exit/NextIteration have gradient functions only to say so
    x = tf.placeholder(tf.float64, [2])
    for op_type in ("Enter", "Exit", "NextIteration"):
        attrs = {"frame_name": "f"} if op_type == "Enter" else {}
        y = _raw(op_type, [x], attrs)
        with pytest.raises(LookupError, match="differentiated as part of its whole while loop"):
            tf.gradients(y, x)


def test_checker_sees_a_missing_conjugate(graph):
    # complex values count as pairs of reals, so a gradient missing its conj (the bugs
    # this table found in the fused ...Grad ops) fails the check
    x = tf.placeholder(tf.complex128, [2])
    value = np.array([0.5 + 0.3j, -1.2 + 0.8j])
    assert compute_gradient_error(x, [2], tf.math.conj(x), [2], x_init_value=value) < 1e-8
    with graph.gradient_override_map({"Conj": "Identity"}):
        wrong = tf.math.conj(x)
    assert compute_gradient_error(x, [2], wrong, [2], x_init_value=value) > 1.0
