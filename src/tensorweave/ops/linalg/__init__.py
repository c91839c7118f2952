"""Linear algebra ops (`tf.linalg`): matrix structure (diagonals, band parts, cross
products, eye, transposes, trace) in matrix_ops; inverses, determinants, Cholesky and
solves in linalg_ops; QR, SVD, eigh, least squares, norms, pinv and matrix_rank in
spectral_ops; LU decompositions and their solves in lu_ops; the matrix exponential,
square root and logarithm in matrix_function_ops; tridiagonal solves, products and
eigenvalues in tridiagonal_ops. The `tf.linalg.LinearOperator` classes, composites
over those ops, are in linear_operator (the base) and linear_operator_{matrix, identity,
structured, combine, block}.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.linalg import (  # noqa: F401
    matrix_ops, linalg_ops, spectral_ops, lu_ops, matrix_function_ops, tridiagonal_ops,
    linear_operator, linear_operator_matrix, linear_operator_identity,
    linear_operator_structured, linear_operator_combine, linear_operator_block,
    conjugate_gradient)

