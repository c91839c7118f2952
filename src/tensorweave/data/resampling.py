"""tf.data.experimental.rejection_resample: a dataset's elements resampled so that their
classes follow a target distribution.

Each element is kept with probability `r[c] / max(r)`, where `r = target / initial` is
the ratio of the target to the input's class distribution: rejection sampling, so the
kept elements' classes follow the target exactly when `initial_dist` is right. Without
`initial_dist` the input's distribution is estimated from the classes seen so far, as
TF does, and the ratio's maximum is taken over the classes seen. TF mixes in a second
pass over the input to keep more of it; the distribution of the output is the same, the
number of elements read per element kept differs.
"""
from __future__ import annotations

import typing
from typing import Callable

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.pipeline import DatasetValue

_kernels.dataset_op("RejectionResampleDataset",
               ["input_dataset: variant", "target_dist: float64", "initial_dist: float64",
                "seed: int64", "seed2: int64"], {"f": ""}, functions=True)


class _Resampled(DatasetValue):
    def __init__(self, source, class_fn, target, initial, seed, op):
        self.source, self.class_fn = source, class_fn
        self.target, self.initial, self.seed, self.op = target, initial, seed, op

    def elements(self, ctx):
        # unseeded: draws that derive from the pass's seed (iterator checkpoints)
        ctx = _pipe.pass_context(ctx)
        key = self.op.name
        call = ctx.calls(key)
        rs = np.random.RandomState(ctx.seed_for(key, call) % 2 ** 32
                                   if self.seed is None else self.seed)
        k = len(self.target)
        counts = np.zeros(k, np.float64)
        for e in self.source.elements(ctx):
            c = int(np.asarray(self.class_fn.run(ctx, e, self.feed)[0]))
            if not 0 <= c < k:
                raise errors.InvalidArgumentError(
                    None, self.op, "class_func gave class %d, outside the %d classes of "
                    "target_dist" % (c, k))
            if self.initial is None:
                counts[c] += 1
                initial = counts / counts.sum()
            else:
                initial = self.initial
            if initial[c] <= 0:  # an element of a class declared absent: never kept
                continue
            seen = initial > 0
            ratio = self.target[seen] / initial[seen]
            if rs.uniform() < (self.target[c] / initial[c]) / ratio.max():
                yield [np.asarray(c, self.class_fn.outputs[0].dtype.as_numpy_dtype)] + e


def _distribution(ctx, value, what: str) -> np.ndarray:
    p = np.asarray(value, np.float64).reshape(-1)
    if p.size == 0 or (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be a non-empty vector of "
                                          "non-negative numbers with a positive sum, got %s"
                                          % (what, p.tolist()))
    return p / p.sum()


@_kernels.function_kernel("RejectionResampleDataset")
def _rejection_resample_kernel(ctx, d, target, initial, seed, seed2):
    target = _distribution(ctx, target, "target_dist")
    initial = None if np.size(initial) == 0 else _distribution(ctx, initial, "initial_dist")
    if initial is not None and initial.size != target.size:
        raise errors.InvalidArgumentError(None, ctx.op, "initial_dist has %d classes but "
                                          "target_dist %d" % (initial.size, target.size))
    s1, s2 = int(np.asarray(seed)), int(np.asarray(seed2))
    return _Resampled(d, _kernels.function_of(ctx, ctx.attrs["f"]), target, initial,
                      None if s1 == 0 and s2 == 0 else (s1 * 1000003 + s2) % 2 ** 32,
                      ctx.op)


@tf_export("data.experimental.rejection_resample")
def rejection_resample(class_func: Callable, target_dist, initial_dist=None,
                       seed: typing.Optional[int] = None) -> Callable:
    """A transformation that resamples a dataset so that the classes of its elements
    follow `target_dist`: each element becomes `(class, element)`, kept or dropped at
    random (see the module docstring).

    Args:
      class_func: maps an element to its class, a scalar integer tensor in
        [0, num_classes).
      target_dist: the wanted class distribution, a vector of num_classes floats.
      initial_dist: the input's class distribution, if known; else estimated as the
        dataset is read.
      seed: the op seed of the draws.

    Returns:
      A function from a Dataset to the resampled Dataset, for `Dataset.apply`.

    Raises:
      ValueError: `class_func` does not give a scalar integer.
    """
    def apply(ds: Dataset) -> Dataset:
        fn = _ds.DatasetFunction(class_func, ds._structure, ds._types, ds._shapes,
                                 "class_func", unpack=True)
        out = fn.outputs[0] if len(fn.outputs) == 1 else None
        if out is None or not out.dtype.is_integer or \
                not out.get_shape().is_compatible_with([]):
            raise ValueError("class_func must return one scalar integer tensor, got %s"
                             % (fn.outputs,))
        from tensorweave.ops.random.random_ops import get_seed
        s1, s2 = get_seed(seed)
        from tensorweave.ops.math.math_ops import cast
        initial = np.zeros(0) if initial_dist is None else initial_dist
        return ds._derive("RejectionResampleDataset", [
            cast(convert_to_tensor(target_dist, name="target_dist"), _dt.float64),
            cast(convert_to_tensor(initial, name="initial_dist"), _dt.float64),
            convert_to_tensor(0 if s1 is None else s1, _dt.int64),
            convert_to_tensor(0 if s2 is None else s2, _dt.int64)],
            {"f": _kernels.register_function(fn)}, structure=(0, ds._structure),
            types=[out.dtype] + ds._types, shapes=[TensorShape([])] + ds._shapes)
    return apply
