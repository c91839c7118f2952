"""Random ops with TF1's graph-level and op-level seeds.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.random import (  # noqa: F401
    random_ops, random_gamma_ops, stateless_random_ops, stateful_random_ops,
    candidate_sampling_ops, sobol_ops, stateless_shuffle_ops)
