"""Operators with a fast algebraic structure: (nested block) circulant operators, which
FFTs diagonalize, Toeplitz operators (products through a circulant embedding of twice
the size), Householder reflections, and permutations.

Circulant products and solves are O(N log N) per column: x is moved to the Fourier
basis, scaled (or divided) by the spectrum, and moved back. A circulant of block depth d
(1, 2 or 3) has a spectrum [..., n1, ..., nd] and acts on vectors of size N = n1 ... nd.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.linalg import linear_operator_util as util
from tensorweave.ops.linalg.linear_operator import LinearOperator
from tensorweave.ops.linalg.linear_operator_util import ops


def _fft(x, depth: int, inverse: bool = False):
    sig = ops().signal
    fns = ({1: sig.ifft, 2: sig.ifft2d, 3: sig.ifft3d} if inverse
           else {1: sig.fft, 2: sig.fft2d, 3: sig.fft3d})
    return fns[depth](x)


def _from_complex(x, dtype):
    """A complex result in the operator's dtype (its real part when that is real)."""
    t = ops()
    if dtype.is_complex:
        return t.cast(x, dtype)
    return t.cast(t.math.real(x), dtype)


class _BaseLinearOperatorCirculant(LinearOperator):
    """A circulant operator of block depth 1, 2 or 3 given by its spectrum (the DFT of
    its convolution kernel)."""

    _block_depth = 1

    def __init__(self, spectrum, input_output_dtype=_dt.complex64,
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: Optional[str] = None):
        """Initializes the operator from its spectrum.

        Args:
          spectrum: a Tensor [B1, ..., Bb, n1, ..., nd] (float or complex).
          input_output_dtype: the dtype of the operator and of its arguments.
          is_non_singular, is_self_adjoint, is_positive_definite, is_square: hints.
          name: the operator's name.

        Raises:
          ValueError: the spectrum has fewer than d dimensions, a real spectrum hinted
            not self-adjoint, or is_square False.
        """
        parameters = dict(spectrum=spectrum, input_output_dtype=input_output_dtype,
                          is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        name = name or type(self).__name__
        with ops().name_scope(name):
            self._spectrum = util.convert_nonref_to_tensor(spectrum, name="spectrum")
            depth = self._block_depth
            if self._spectrum.shape.ndims is not None and self._spectrum.shape.ndims < depth:
                raise ValueError("Argument `spectrum` must have at least %d dimensions. "
                                 "Received: %s." % (depth, self._spectrum))
            if not self._spectrum.dtype.is_complex:
                # A real spectrum means a real symmetric convolution kernel.
                if is_self_adjoint is False:
                    raise ValueError("A real spectrum always corresponds to a "
                                     "self-adjoint operator.")
                is_self_adjoint = True
            if is_square is False:
                raise ValueError("A [[nested] block] circulant operator is always square.")
            super().__init__(dtype=_dt.as_dtype(input_output_dtype),
                             is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             parameters=parameters, name=name)

    @property
    def spectrum(self):
        return self._spectrum

    @property
    def block_depth(self) -> int:
        return self._block_depth

    @property
    def block_shape(self) -> TensorShape:
        return self._spectrum.shape[-self._block_depth:]

    def block_shape_tensor(self):
        """The block shape [n1, ..., nd] as an int32 Tensor."""
        if self.block_shape.is_fully_defined():
            return util.shape_tensor(self.block_shape.as_list(), name="block_shape")
        return ops().shape(self._spectrum)[-self._block_depth:]

    def _block_axes(self):
        return [-(i + 1) for i in range(self._block_depth)]

    def _shape(self) -> TensorShape:
        s = self._spectrum.shape
        if s.ndims is None:
            return TensorShape(None)
        block = s[-self._block_depth:]
        n = block.num_elements() if block.is_fully_defined() else None
        return s[:-self._block_depth].concatenate([n, n])

    def _shape_tensor(self):
        t = ops()
        s = t.shape(self._spectrum)
        n = t.reduce_prod(s[-self._block_depth:])
        return t.concat([s[:-self._block_depth], t.stack([n, n])], 0)

    def convolution_kernel(self, name: str = "convolution_kernel"):
        """The convolution kernel, ifft(spectrum), in the operator's dtype."""
        with self._name_scope(name):
            h = _fft(util.to_complex(self._spectrum), self._block_depth, inverse=True)
            return _from_complex(h, self.dtype)

    def assert_hermitian_spectrum(self, name: str = "assert_hermitian_spectrum"):
        """An op that fails unless the spectrum is Hermitian (the kernel is real)."""
        t = ops()
        eps = float(np.finfo(self.dtype.real_dtype.as_numpy_dtype).eps)
        with self._name_scope(name):
            max_err = eps * t.cast(self.domain_dimension_tensor(), self.dtype.real_dtype)
            imag_kernel = t.math.imag(
                _fft(util.to_complex(self._spectrum), self._block_depth, inverse=True))
            return t.debugging.assert_less(t.abs(imag_kernel), t.cast(max_err,
                                                                      imag_kernel.dtype),
                                           message="Spectrum was not Hermitian")

    def _assert_non_singular(self):
        return util.assert_no_entries_with_modulus_zero(
            self._spectrum, message="Singular operator:  Spectrum contained zero values.")

    def _assert_positive_definite(self):
        t = ops()
        return t.debugging.assert_positive(
            t.math.real(self._spectrum),
            message="Not positive definite:  Real part of spectrum was not all positive.")

    def _assert_self_adjoint(self):
        return util.assert_zero_imag_part(
            self._spectrum, message="Not self-adjoint:  The spectrum contained non-zero "
                                    "imaginary part.")

    def _apply_spectrum(self, x, adjoint: bool, adjoint_arg: bool, divide: bool):
        """spectrum-scaling of x in the Fourier basis: A x (or A^-1 x when `divide`).

        x [..., N, R] is transposed to [..., R, N] and reshaped to [..., R, n1..nd] so
        the d-dimensional FFT runs over the block axes of every column; the spectrum
        gets an axis for R and broadcasts against x's batch dimensions.
        """
        t = ops()
        spectrum = util.to_complex(self._spectrum)
        if adjoint:
            spectrum = t.math.conj(spectrum)
        x = util.adjoint_if(x, adjoint_arg)
        cols = t.cast(t.linalg.matrix_transpose(x), spectrum.dtype)
        blocks = t.reshape(cols, t.concat([t.shape(cols)[:-1], self.block_shape_tensor()],
                                          0))
        spectrum = t.expand_dims(spectrum, -self._block_depth - 1)
        fx = _fft(blocks, self._block_depth)
        fy = fx / spectrum if divide else fx * spectrum
        y = _fft(fy, self._block_depth, inverse=True)
        y = t.reshape(y, t.concat([t.shape(y)[:-self._block_depth], [-1]], 0))
        return _from_complex(t.linalg.matrix_transpose(y), self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._apply_spectrum(x, adjoint, adjoint_arg, divide=False)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._apply_spectrum(rhs, adjoint, adjoint_arg, divide=True)

    def _determinant(self):
        t = ops()
        return _from_complex(t.reduce_prod(util.to_complex(self._spectrum),
                                           axis=self._block_axes()), self.dtype)

    def _log_abs_determinant(self):
        t = ops()
        lad = t.reduce_sum(t.log(t.abs(self._spectrum)), axis=self._block_axes())
        return t.cast(lad, self.dtype)

    def _trace(self):
        # The trace is the sum of the eigenvalues, i.e. of the spectrum.
        t = ops()
        total = t.reduce_sum(util.to_complex(self._spectrum), axis=self._block_axes())
        if self.dtype.is_complex and self.is_self_adjoint:
            total = t.complex(t.math.real(total), t.zeros_like(t.math.real(total)))
        return _from_complex(total, self.dtype)

    def _diag_part(self):
        # Every diagonal entry is the kernel's first entry, trace / N.
        t = ops()
        n = self.domain_dimension_tensor()
        value = self.trace() / t.cast(n, self.dtype)
        shape = t.concat([self.batch_shape_tensor(), [n]], 0)
        return value[..., None] * t.ones(shape, dtype=self.dtype)

    def _flat_spectrum(self):
        t = ops()
        s = self._spectrum
        return t.reshape(s, t.concat([t.shape(s)[:-self._block_depth], [-1]], 0))

    def _eigvals(self):
        return self._flat_spectrum()

    def _cond(self):
        t = ops()
        a = t.abs(self._flat_spectrum())
        return t.reduce_max(a, axis=-1) / t.reduce_min(a, axis=-1)

    # --- operators of the same structure -------------------------------------------------
    def _with_spectrum(self, spectrum, **hints) -> "_BaseLinearOperatorCirculant":
        return type(self)(spectrum, input_output_dtype=self.dtype, **hints)

    def _linop_adjoint(self):
        s = self._spectrum
        if s.dtype.is_complex:
            s = ops().math.conj(s)
        return self._with_spectrum(s, **self._same_hints())

    def _linop_inverse(self):
        return self._with_spectrum(1.0 / self._spectrum, **self._same_hints())

    def _linop_matmul(self, left, right):
        if type(right) is not type(left):
            return super()._linop_matmul(left, right)
        return self._with_spectrum(left.spectrum * right.spectrum,
                                   **util.commuting_product_hints(left, right))

    def _linop_solve(self, left, right):
        if type(right) is not type(left):
            return super()._linop_solve(left, right)
        return self._with_spectrum(right.spectrum / left.spectrum,
                                   **util.commuting_product_hints(left, right))


@tf_export("linalg.LinearOperatorCirculant")
class LinearOperatorCirculant(_BaseLinearOperatorCirculant):
    """`LinearOperator` acting like a [batch] circulant matrix, given its spectrum
    [..., N] (TF1 `tf.linalg.LinearOperatorCirculant`)."""

    _block_depth = 1

    def __init__(self, spectrum, input_output_dtype=_dt.complex64,
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: str = "LinearOperatorCirculant"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


@tf_export("linalg.LinearOperatorCirculant2D")
class LinearOperatorCirculant2D(_BaseLinearOperatorCirculant):
    """`LinearOperator` acting like a block circulant matrix with circulant blocks,
    given its spectrum [..., n1, n2]."""

    _block_depth = 2

    def __init__(self, spectrum, input_output_dtype=_dt.complex64,
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: str = "LinearOperatorCirculant2D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


@tf_export("linalg.LinearOperatorCirculant3D")
class LinearOperatorCirculant3D(_BaseLinearOperatorCirculant):
    """`LinearOperator` acting like a doubly nested block circulant matrix, given its
    spectrum [..., n1, n2, n3]."""

    _block_depth = 3

    def __init__(self, spectrum, input_output_dtype=_dt.complex64,
                 is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: str = "LinearOperatorCirculant3D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


@tf_export("linalg.LinearOperatorToeplitz")
class LinearOperatorToeplitz(LinearOperator):
    """`LinearOperator` acting like a [batch] square Toeplitz matrix with first column
    `col` and first row `row` (row[0] is ignored: the diagonal is col[0])."""

    def __init__(self, col, row, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorToeplitz"):
        """Initializes the operator from its first column and row [..., N].

        Raises:
          ValueError: row or col has rank < 1, their lengths differ, or is_square is
            False.
        """
        parameters = dict(col=col, row=row, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        with ops().name_scope(name):
            self._row = util.convert_nonref_to_tensor(row, name="row")
            self._col = util.convert_nonref_to_tensor(col, name="col")
            for arg_name, tensor in (("row", self._row), ("col", self._col)):
                if tensor.shape.ndims is not None and tensor.shape.ndims < 1:
                    raise ValueError("Argument {} must have at least 1 dimension.  "
                                     "Found: {}".format(arg_name, tensor))
            n_row, n_col = self._row.shape[-1].value, self._col.shape[-1].value
            if n_row is not None and n_col is not None and n_row != n_col:
                raise ValueError("Expected square matrix, got row and col with mismatched "
                                 "dimensions.")
            if is_square is False:
                raise ValueError("Only square Toeplitz operators currently supported.")
            super().__init__(dtype=self._row.dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             parameters=parameters, name=name)

    @property
    def col(self):
        return self._col

    @property
    def row(self):
        return self._row

    def _shape(self) -> TensorShape:
        v = util.broadcast_batch_shape([self._row.shape, self._col.shape])
        return v.concatenate(v[-1:])

    def _shape_tensor(self):
        t = ops()
        v = t.broadcast_dynamic_shape(t.shape(self._row), t.shape(self._col))
        return t.concat([v, v[-1:]], 0)

    def _assert_self_adjoint(self):
        return ops().debugging.assert_equal(
            self._row, self._col, message="row and col are not the same, and so this "
                                          "operator is not self-adjoint.")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        # T is the top-left N x N block of the 2N x 2N circulant whose first column is
        # [col, 0, reversed(row[1:])]; so T x is the first N rows of C [x; 0], and
        # likewise T^H x from C^H.
        t = ops()
        x = util.adjoint_if(x, adjoint_arg)
        padded = t.concat([x, t.zeros_like(x)], axis=-2)
        circulant_col = t.concat([self._col, t.zeros_like(self._col[..., :1]),
                                  t.reverse(self._row[..., 1:], axis=[-1])], axis=-1)
        circulant = LinearOperatorCirculant(t.signal.fft(util.to_complex(circulant_col)),
                                            input_output_dtype=self.dtype)
        y = circulant.matmul(padded, adjoint=adjoint)
        return y[..., :self._domain_dimension_tensor(), :]

    def _trace(self):
        t = ops()
        return t.cast(self.domain_dimension_tensor(), self.dtype) * self._col[..., 0]

    def _diag_part(self):
        t = ops()
        return self._col[..., :1] * t.ones(self.shape_tensor()[:-1], dtype=self.dtype)

    def _to_dense(self):
        # Entry (i, j) is col[i - j] below the diagonal and row[j - i] above: both are
        # read from [reversed(col), row[1:]] at index N - 1 - i + j.
        t = ops()
        shape = t.broadcast_dynamic_shape(t.shape(self._row), t.shape(self._col))
        row = t.broadcast_to(self._row, shape)
        col = t.broadcast_to(self._col, shape)
        n = shape[-1]
        elements = t.concat([t.reverse(col, axis=[-1]), row[..., 1:]], axis=-1)
        indices = t.range(n)[None, :] - t.range(n)[:, None] + (n - 1)
        return t.gather(elements, indices, axis=-1)


@tf_export("linalg.LinearOperatorHouseholder")
class LinearOperatorHouseholder(LinearOperator):
    """`LinearOperator` acting like the [batch] Householder reflection I - 2 v v^H about
    the hyperplane orthogonal to `reflection_axis` (v is that axis normalized)."""

    def __init__(self, reflection_axis, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None,
                 name: str = "LinearOperatorHouseholder"):
        """Initializes the reflection about `reflection_axis` [..., N].

        Raises:
          ValueError: rank < 1, or hints contradicting a reflection (self-adjoint,
            square, not positive definite).
        """
        parameters = dict(reflection_axis=reflection_axis, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        with ops().name_scope(name):
            self._reflection_axis = util.convert_nonref_to_tensor(reflection_axis,
                                                                  name="reflection_axis")
            ndims = self._reflection_axis.shape.ndims
            if ndims is not None and ndims < 1:
                raise ValueError("Argument reflection_axis must have at least 1 dimension. "
                                 " Found: %s" % self._reflection_axis)
            if is_self_adjoint is False:
                raise ValueError("A Householder operator is always self adjoint.")
            if is_positive_definite is True:
                raise ValueError("A Householder operator is always non-positive definite.")
            if is_square is False:
                raise ValueError("A Householder operator is always square.")
            super().__init__(dtype=self._reflection_axis.dtype,
                             is_non_singular=is_non_singular, is_self_adjoint=True,
                             is_positive_definite=False, is_square=True,
                             parameters=parameters, name=name)

    @property
    def reflection_axis(self):
        return self._reflection_axis

    def _shape(self) -> TensorShape:
        d = self._reflection_axis.shape
        return d.concatenate(d[-1:])

    def _shape_tensor(self):
        t = ops()
        d = t.shape(self._reflection_axis)
        return t.concat([d, d[-1:]], 0)

    def _unit_axis(self):
        t = ops()
        v = self._reflection_axis
        norm_sq = t.reduce_sum(t.math.real(v * t.math.conj(v)), axis=-1, keepdims=True)
        return v * t.cast(t.math.rsqrt(norm_sq), v.dtype)

    def _assert_non_singular(self):
        return ops().no_op("assert_non_singular")

    def _assert_positive_definite(self):
        raise errors.InvalidArgumentError(None, None, "Householder operators are always "
                                                      "non-positive definite.")

    def _assert_self_adjoint(self):
        return ops().no_op("assert_self_adjoint")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        # (I - 2 v v^H) x = x - 2 v (v^H x): O(N R) instead of a dense product.
        t = ops()
        x = util.adjoint_if(x, adjoint_arg)
        v = self._unit_axis()[..., None]
        return x - 2 * v * t.matmul(v, x, adjoint_a=True)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint, adjoint_arg)  # a reflection is its own inverse

    def _determinant(self):
        return -ops().ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return ops().zeros(self.batch_shape_tensor(), dtype=self.dtype)

    def _trace(self):
        t = ops()
        shape = self.shape_tensor()
        return t.cast(shape[-1] - 2, self.dtype) * t.ones(shape[:-2], dtype=self.dtype)

    def _to_dense(self):
        t = ops()
        v = self._unit_axis()[..., None]
        m = -2 * t.matmul(v, v, adjoint_b=True)
        return t.linalg.set_diag(m, 1 + t.linalg.diag_part(m))

    def _diag_part(self):
        t = ops()
        v = self._unit_axis()
        return 1 - 2 * v * t.math.conj(v)

    def _eigvals(self):
        t = ops()
        shape = t.shape(self._reflection_axis)
        ones = t.ones(t.concat([shape[:-1], shape[-1:] - 1], 0), dtype=self.dtype)
        minus_one = -t.ones(t.concat([shape[:-1], [1]], 0), dtype=self.dtype)
        return t.concat([minus_one, ones], axis=-1)

    def _cond(self):
        return ops().ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _linop_adjoint(self):
        return self

    def _linop_inverse(self):
        return self


@tf_export("linalg.LinearOperatorPermutation")
class LinearOperatorPermutation(LinearOperator):
    """`LinearOperator` acting like a [batch] permutation matrix P with P[i, perm[i]] = 1,
    so (P x)[i] = x[perm[i]]; products are gathers."""

    def __init__(self, perm, dtype=_dt.float32, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None,
                 name: str = "LinearOperatorPermutation"):
        """Initializes the operator from the integer vector `perm` [..., N].

        Raises:
          TypeError: `perm` is not of an integer dtype.
          ValueError: rank < 1, a static `perm` that is not a permutation of 0..N-1, or
            hints saying singular or not square.
        """
        parameters = dict(perm=perm, dtype=dtype, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          name=name)
        with ops().name_scope(name):
            self._perm = util.convert_nonref_to_tensor(perm, name="perm")
            self._check_perm(self._perm)
            if is_non_singular is False:
                raise ValueError("A Permutation operator is always non-singular. Expected "
                                 "argument `is_non_singular` to be True. Received: False.")
            if is_square is False:
                raise ValueError("A Permutation operator is always square. Expected "
                                 "argument `is_square` to be True. Received: False.")
            super().__init__(dtype=dtype, is_non_singular=is_non_singular,
                             is_self_adjoint=is_self_adjoint,
                             is_positive_definite=is_positive_definite, is_square=True,
                             parameters=parameters, name=name)

    @staticmethod
    def _check_perm(perm) -> None:
        if perm.shape.ndims is not None and perm.shape.ndims < 1:
            raise ValueError("Argument `perm` must have at least 1 dimension. "
                             "Received: %s." % perm)
        if not perm.dtype.is_integer:
            raise TypeError("Argument `perm` must be integer dtype. Received: %s." % perm)
        static = util.static_value(perm)
        if static is not None:
            if np.any(np.sort(static, axis=-1) != np.arange(static.shape[-1])):
                raise ValueError("Argument `perm` must be a vector of unique integers from "
                                 "0 to %d." % (static.shape[-1] - 1))

    @property
    def perm(self):
        return self._perm

    def _shape(self) -> TensorShape:
        d = self._perm.shape
        return d.concatenate(d[-1:])

    def _shape_tensor(self):
        t = ops()
        d = t.shape(self._perm)
        return t.concat([d, d[-1:]], 0)

    def _assert_non_singular(self):
        return ops().no_op("assert_non_singular")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        t = ops()
        perm = self._perm
        if adjoint and not self.is_self_adjoint:
            perm = t.argsort(perm, axis=-1)  # P^H = P^-1 gathers with the inverse perm
        x = util.adjoint_if(x, adjoint_arg)
        # Broadcast x and perm to one batch shape, then gather rows batch by batch.
        batch_rows = t.broadcast_dynamic_shape(t.shape(x)[:-1], t.shape(perm))
        k = t.shape(x)[-1]
        x_shape = t.concat([batch_rows, [k]], 0)
        x = t.broadcast_to(x, x_shape)
        perm = t.broadcast_to(perm, batch_rows)
        m = t.shape(x)[-2]
        y = t.gather(t.reshape(x, t.stack([-1, m, k])), t.reshape(perm, t.stack([-1, m])),
                     axis=-2, batch_dims=1)
        return t.reshape(y, x_shape)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _log_abs_determinant(self):
        return ops().zeros(self.batch_shape_tensor(), dtype=self.dtype)

    def _positions(self):
        """0 .. N-1 in the dtype of `perm` (int32 or int64)."""
        t = ops()
        return t.range(t.cast(t.shape(self._perm)[-1], self._perm.dtype))

    def _to_dense(self):
        t = ops()
        return t.cast(t.equal(self._positions(), self._perm[..., None]), self.dtype)

    def _diag_part(self):
        t = ops()
        return t.cast(t.equal(self._positions(), self._perm), self.dtype)

    def _cond(self):
        return ops().ones(self.batch_shape_tensor(), dtype=self.dtype)
