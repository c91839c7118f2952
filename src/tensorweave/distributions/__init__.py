"""tf.distributions: TF1's (deprecated in favour of TensorFlow Probability, still used by
TF1 programs) probability distributions, built on the ops.

  distribution.py  Distribution, reparameterization types, kl_divergence / RegisterKL
  continuous.py    Normal, Laplace, Uniform, Gamma, Exponential, Beta, StudentT
  discrete.py      Bernoulli, Categorical
  multivariate.py  Dirichlet, Multinomial, DirichletMultinomial
  special_math.py  ndtr, log_ndtr, log_cdf_laplace (accurate tails)
  util.py          validate_args checks, logits / probs conversion

Imported on first access of `tf.distributions` (tensorweave/__init__.py).
"""
from tensorweave.distributions import (  # noqa: F401
    continuous, discrete, distribution, multivariate)

import sys as _sys  # noqa: E402

from tensorweave.framework import api_export as _api  # noqa: E402

# the names are offered to `from tensorweave.distributions import ...` before `tf.distributions` is touched
_api.install_namespace(_sys.modules[__name__], "distributions")
