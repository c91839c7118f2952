"""`get_optimizer_instance`: the `optimizer` argument of the canned estimators (a name,
an Optimizer, or a callable returning one) as an Optimizer."""
from __future__ import annotations

from typing import Optional

from tensorweave.train.optimizer import Optimizer


def _optimizer_classes() -> dict:
    """Name -> class of the optimizers the canned estimators accept by name."""
    from tensorweave import train
    return {
        "Adagrad": train.AdagradOptimizer,
        "Adam": train.AdamOptimizer,
        "Ftrl": train.FtrlOptimizer,
        "RMSProp": train.RMSPropOptimizer,
        "SGD": train.GradientDescentOptimizer,
    }


def get_optimizer_instance(opt, learning_rate: Optional[float] = None) -> Optimizer:
    """The Optimizer that `opt` names or is.

    Args:
      opt: an `Optimizer`; one of the names 'Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'
        (made with `learning_rate`); or a callable returning an `Optimizer` (called here,
        inside the model function, so that its variables live in the model's graph).
      learning_rate: the learning rate of an optimizer given by name.

    Returns:
      An `Optimizer`.

    Raises:
      ValueError: an unknown name, a name without `learning_rate`, or anything that is
        not (and does not return) an `Optimizer`.
    """
    if isinstance(opt, str):
        classes = _optimizer_classes()
        if opt in classes:
            if not learning_rate:
                raise ValueError("learning_rate must be specified when opt is string.")
            return classes[opt](learning_rate=learning_rate)
        raise ValueError("Unsupported optimizer name: {}. Supported names are: {}"
                         .format(opt, tuple(sorted(classes))))
    if callable(opt):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError("The given object is not an Optimizer instance. Given: {}"
                         .format(opt))
    return opt
