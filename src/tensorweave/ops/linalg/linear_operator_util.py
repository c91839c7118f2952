"""What the LinearOperator classes share: tensor conversion, batch broadcasting of matrix
arguments, a broadcasting dense solve, and the rules that combine two operators' hints
(TF's `linear_operator_util.py` and `property_hint_util.py`).

Operators are composite ops written over the public op builders (`ops()`), so they read
like the TF1 programs they stand in for and need no kernels or gradients of their own.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.shapes import TensorShape, broadcast_shapes


def ops():
    """The op builders the operators use: tensorweave's public namespace, imported on
    first use (this module loads while that namespace is being built)."""
    import tensorweave
    return tensorweave


def convert_nonref_to_tensor(value, dtype=None, name: Optional[str] = None):
    """`value` as a Tensor (None stays None), converted as `tf.convert_to_tensor` does
    (and raising what it raises for a `value` not of `dtype`)."""
    if value is None:
        return None
    # Variables are converted too: in graph mode the converted tensor reads the variable
    # on every run, which is what TF keeps them unconverted for.
    return ops().convert_to_tensor(value, dtype=dtype, name=name)


def check_dtype(arg, dtype) -> None:
    """Raises TypeError when `arg` (a Tensor) is not of `dtype`, as TF's operators do."""
    if arg.dtype.base_dtype != dtype:
        raise TypeError("Expected argument to have dtype %s. Found: %s in tensor %s."
                        % (dtype, arg.dtype, arg))


def static_value(x) -> Optional[np.ndarray]:
    """The value of `x` known at build time (a Python/NumPy value or a constant-foldable
    Tensor), else None."""
    if x is None:
        return None
    if isinstance(x, (int, float, np.integer, np.floating, np.ndarray, list, tuple)):
        return np.asarray(x)
    return ops().get_static_value(x)


def shape_tensor(shape, name: Optional[str] = None):
    """A shape as an int32 Tensor (an empty list too, which would otherwise be float)."""
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    dtype = _dt.int32 if isinstance(shape, (list, tuple)) else None
    return ops().convert_to_tensor(shape, dtype=dtype, name=name)


def adjoint_if(x, flag: bool):
    """x^H when `flag`, else x (the adjoint_arg of every operator method)."""
    return ops().linalg.adjoint(x) if flag else x


def to_complex(x):
    """`x` cast to the complex dtype of its precision (complex inputs unchanged)."""
    if x.dtype.is_complex:
        return x
    dtype = _dt.complex128 if x.dtype == _dt.float64 else _dt.complex64
    return ops().cast(x, dtype)


def with_dependencies(assertions: Sequence, x):
    """`x` computed only after `assertions` (x itself when there are none)."""
    if not assertions:
        return x
    with ops().control_dependencies(list(assertions)):
        return ops().identity(x)


def assert_no_entries_with_modulus_zero(x, message: Optional[str] = None):
    """An assertion that no entry of `x` has |x| == 0."""
    t = ops()
    x = t.convert_to_tensor(x, name="x")
    zero = t.constant(0, dtype=x.dtype.real_dtype)
    return t.debugging.assert_less(zero, t.abs(x), message=message)


def assert_zero_imag_part(x, message: Optional[str] = None):
    """An assertion that imag(x) == 0 (a no-op for real `x`)."""
    t = ops()
    x = t.convert_to_tensor(x, name="x")
    if not x.dtype.is_complex:
        return t.no_op()
    zero = t.constant(0, dtype=x.dtype.real_dtype)
    return t.debugging.assert_equal(zero, t.math.imag(x), message=message)


def assert_is_batch_matrix(tensor) -> None:
    """Raises ValueError when `tensor` statically has rank < 2."""
    if tensor.shape.ndims is not None and tensor.shape.ndims < 2:
        raise ValueError("Expected [batch] matrix to have at least two dimensions. "
                         "Found: %s." % tensor)


def broadcast_matrix_batch_dims(batch_matrices: Sequence, name: Optional[str] = None
                                ) -> List:
    """Broadcasts the batch dimensions (all but the last two) of matrices to one shape.

    Only the matrices whose batch shape differs are broadcast, so matching inputs pass
    through untouched (no copy).

    Args:
      batch_matrices: Tensors of shape [..., M_i, N_i].
      name: name scope.

    Returns:
      The list of Tensors with a common batch shape.

    Raises:
      ValueError: a matrix has rank < 2, or two batch shapes do not broadcast.
    """
    t = ops()
    with _graph.name_scope(name, "broadcast_matrix_batch_dims", list(batch_matrices)):
        mats = [t.convert_to_tensor(m) for m in batch_matrices]
        for m in mats:
            assert_is_batch_matrix(m)
        if len(mats) < 2:
            return mats
        batch = mats[0].shape[:-2]
        for m in mats[1:]:
            batch = broadcast_shapes(batch, m.shape[:-2])
        if batch.is_fully_defined():
            out = []
            for m in mats:
                if m.shape[:-2] != batch:
                    m = t.broadcast_to(m, t.concat([batch.as_list(), t.shape(m)[-2:]], 0))
                out.append(m)
            return out
        dyn = t.shape(mats[0])[:-2]
        for m in mats[1:]:
            dyn = t.broadcast_dynamic_shape(dyn, t.shape(m)[:-2])
        return [t.broadcast_to(m, t.concat([dyn, t.shape(m)[-2:]], 0)) for m in mats]


def matrix_solve_with_broadcast(matrix, rhs, adjoint: bool = False,
                                name: Optional[str] = None):
    """`tf.linalg.solve` with the batch dimensions of `matrix` and `rhs` broadcast (the
    MatrixSolve kernel itself wants equal batch shapes)."""
    t = ops()
    with _graph.name_scope(name, "MatrixSolveWithBroadcast", [matrix, rhs]):
        matrix = t.convert_to_tensor(matrix, name="matrix")
        rhs = t.convert_to_tensor(rhs, name="rhs", dtype=matrix.dtype)
        matrix, rhs = broadcast_matrix_batch_dims([matrix, rhs])
        return t.linalg.solve(matrix, rhs, adjoint=adjoint)


def broadcast_batch_shape(shapes: Sequence[TensorShape]) -> TensorShape:
    """The static broadcast of several batch shapes."""
    out = TensorShape([])
    for s in shapes:
        out = broadcast_shapes(out, s)
    return out


def broadcast_batch_shape_tensor(shapes: Sequence):
    """The dynamic broadcast of several batch shape Tensors."""
    t = ops()
    out = shapes[0]
    for s in shapes[1:]:
        out = t.broadcast_dynamic_shape(out, s)
    return out


# --- operators built from a list of operators --------------------------------------------
def operator_list(operators, empty_message: str) -> list:
    """`operators` as a list, which must be non-empty (ValueError with `empty_message`,
    formatted with the argument)."""
    operators = list(operators)
    if not operators:
        raise ValueError(empty_message % (operators,))
    return operators


def check_same_dtype(operators: Sequence) -> None:
    """Raises TypeError, as TF does, unless all `operators` share one dtype."""
    dtype = operators[0].dtype
    if any(o.dtype != dtype for o in operators):
        raise TypeError("Expected all operators to have the same dtype.  Found %s"
                        % "   ".join("%s: %s" % (o.name, o.dtype) for o in operators))


def all_hint(operators: Sequence, hint: str, provided, message: str):
    """`provided`, set to True when every operator has the hint (True); ValueError with
    `message` when it was given as False."""
    if all(getattr(o, hint) for o in operators):
        if provided is False:
            raise ValueError(message)
        return True
    return provided


# --- hints of an operator built from others ---------------------------------------------
def use_operator_or_provided_hint_unless_contradicting(operator, hint_attr_name: str,
                                                       provided_hint_value,
                                                       message: str):
    """The hint of an operator derived from `operator` (its adjoint, its inverse): the
    operator's hint or the one given, which must not contradict each other.

    Raises:
      ValueError: with `message`, when one is True and the other False.
    """
    op_hint = getattr(operator, hint_attr_name)
    if (op_hint is False and provided_hint_value) or (
            op_hint and provided_hint_value is False):
        raise ValueError(message)
    if op_hint or provided_hint_value:
        return True
    if op_hint is False or provided_hint_value is False:
        return False
    return None


def combined_non_singular_hint(a, b):
    """A product is non-singular when both factors are, singular when one is."""
    if a.is_non_singular is False or b.is_non_singular is False:
        return False
    return a.is_non_singular and b.is_non_singular


def combined_commuting_self_adjoint_hint(a, b):
    """The product of two commuting operators is self-adjoint when both are."""
    if a.is_self_adjoint and b.is_self_adjoint:
        return True
    if (a.is_self_adjoint is True and b.is_self_adjoint is False) or (
            a.is_self_adjoint is False and b.is_self_adjoint is True):
        return False
    return None


def combined_commuting_positive_definite_hint(a, b):
    """Two commuting self-adjoint positive-definite operators have a positive-definite
    product."""
    if (a.is_positive_definite is True and a.is_self_adjoint is True
            and b.is_positive_definite is True and b.is_self_adjoint is True):
        return True
    return None


def commuting_product_hints(left, right) -> dict:
    """Hints of the product of two commuting operators (diagonal, circulant, scaled
    identity)."""
    return dict(
        is_non_singular=combined_non_singular_hint(left, right),
        is_self_adjoint=combined_commuting_self_adjoint_hint(left, right),
        is_positive_definite=combined_commuting_positive_definite_hint(left, right),
        is_square=True)


def is_square_product(a, b):
    """Whether a @ b is square, from the hints and static shapes (None: unknown)."""
    if a.is_square and b.is_square:
        return True
    if a.is_square is False and b.is_square is False:
        m, n = a.range_dimension.value, b.domain_dimension.value
        if m is not None and n is not None:
            return m == n
    if (a.is_square is not None and b.is_square is not None
            and a.is_square != b.is_square):
        return False
    return None
