"""tf.data.experimental's keyed grouping: group_by_window (windows of elements of one
key, each turned into a dataset by `reduce_func`) and group_by_reducer with Reducer (a
fold per key, finalized at the end of the input).

Groups left at the end of the input are emitted in ascending key order, as TF's ordered
map of groups gives them. `key_func` must give an int64 scalar.
"""
from __future__ import annotations

import itertools
from typing import Callable, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import Dataset, DatasetFunction
from tensorweave.data.pipeline import DatasetValue

_SCALAR = TensorShape([])


def _key_function(key_func: Callable, ds: Dataset) -> DatasetFunction:
    fn = DatasetFunction(key_func, ds._structure, ds._types, ds._shapes, "key_func",
                         unpack=True)
    if len(fn.outputs) != 1:
        raise ValueError("`key_func` must return a single tf.int64 scalar tensor, got %s"
                         % (fn.structure,))
    if fn.outputs[0].dtype != _dt.int64:
        raise ValueError("Tensor conversion requested dtype int64 for Tensor with dtype "
                         "%s: %s" % (fn.outputs[0].dtype.name, fn.outputs[0]))
    if not fn.outputs[0].shape.is_compatible_with(_SCALAR):
        raise ValueError("`key_func` must return a single tf.int64 scalar tensor, got shape "
                         "%s" % fn.outputs[0].shape)
    return fn


def _key_arg_function(fn: Callable, extra_types, extra_shapes, name: str
                      ) -> DatasetFunction:
    """A function of (key, *extra) traced with an int64 scalar key."""
    structure = tuple(range(1 + len(extra_types))) if extra_types else 0
    return DatasetFunction(fn, structure, [_dt.int64] + list(extra_types),
                           [_SCALAR] + list(extra_shapes), name, unpack=True)


@tf_export("data.experimental.group_by_window")
def group_by_window(key_func: Callable, reduce_func: Callable, window_size=None,
                    window_size_func: Optional[Callable] = None) -> Callable:
    """Groups elements by `key_func` into windows: when a key's window holds its size
    (`window_size`, or `window_size_func(key)`), `reduce_func(key, window)` turns the
    window (a Dataset of its elements, in arrival order) into the dataset whose elements
    are emitted; windows not full at the end go the same way, in ascending key order.

    Args:
      key_func: element -> int64 scalar.
      reduce_func: (int64 key, Dataset) -> Dataset, the same structure for every key.
      window_size: an int64 scalar; or
      window_size_func: int64 key -> int64 scalar.

    Returns:
      A function for `Dataset.apply`.

    Raises:
      ValueError: neither or both of `window_size` and `window_size_func`, or a key that
        is not an int64 scalar.
      TypeError: `reduce_func` does not return a Dataset.
    """
    if (window_size is None) == (window_size_func is None):
        raise ValueError("Either the `window_size` argument or the `window_size_func` "
                         "argument must be specified.")

    def apply(ds: Dataset) -> Dataset:
        key_fn = _key_function(key_func, ds)

        def reduce_window(key, variant):
            return reduce_func(key, Dataset(variant, ds._structure, ds._types, ds._shapes,
                                            names=ds._names))
        reduce_fn = _key_arg_function(reduce_window, [_dt.variant], [_SCALAR], "reduce_func")
        if reduce_fn.dataset is None:
            got = reduce_fn.outputs[0] if len(reduce_fn.outputs) == 1 else \
                reduce_fn.structure
            raise TypeError("Invalid `reduce_func`. `reduce_func` must return a single "
                            "`tf.data.Dataset` object but its return type is %s." % (got,))
        size_func = window_size_func
        if size_func is None:
            size = window_size

            def size_func(key):
                return size
        size_fn = _key_arg_function(size_func, [], [], "window_size_func")
        if len(size_fn.outputs) != 1:
            raise ValueError("`window_size_func` must return a single tf.int64 scalar")
        out = reduce_fn.dataset
        return ds._derive("GroupByWindowDataset", [], {
            "key_func": _kernels.register_function(key_fn),
            "reduce_func": _kernels.register_function(reduce_fn),
            "window_size_func": _kernels.register_function(size_fn)},
            structure=out._structure, types=out._types, shapes=out._shapes,
            names=out._names)
    return apply


@tf_export("data.experimental.Reducer")
class Reducer:
    """The fold of group_by_reducer: `init_func(key)` gives a key's first state,
    `reduce_func(state, element)` the next, `finalize_func(state)` the output element
    (a tuple state is passed to `finalize_func` as separate arguments)."""

    def __init__(self, init_func: Callable, reduce_func: Callable, finalize_func: Callable):
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    @property
    def init_func(self) -> Callable:
        return self._init_func

    @property
    def reduce_func(self) -> Callable:
        return self._reduce_func

    @property
    def finalize_func(self) -> Callable:
        return self._finalize_func


@tf_export("data.experimental.group_by_reducer")
def group_by_reducer(key_func: Callable, reducer: Reducer) -> Callable:
    """One element per key: the reducer's fold over that key's elements, finalized at the
    end of the input, in ascending key order.

    Args:
      key_func: element -> int64 scalar.
      reducer: a Reducer.

    Returns:
      A function for `Dataset.apply`.

    Raises:
      ValueError: a key that is not an int64 scalar.
      TypeError: a reduce_func whose state differs in structure or dtypes from init_func's.
    """
    def apply(ds: Dataset) -> Dataset:
        key_fn = _key_function(key_func, ds)
        init_fn = _key_arg_function(reducer.init_func, [], [], "init_func")
        state_structure = init_fn.structure
        state_types = [t.dtype for t in init_fn.outputs]
        state_shapes = [t.shape for t in init_fn.outputs]
        reduce_fn = _reduce_function(reducer.reduce_func, ds, state_structure, state_types,
                                     state_shapes)
        state_shapes = [t.shape for t in reduce_fn.inputs[:len(state_types)]]
        finalize_fn = DatasetFunction(reducer.finalize_func, state_structure, state_types,
                                      state_shapes, "finalize_func", unpack=True)
        return ds._derive("GroupByReducerDataset", [], {
            "key_func": _kernels.register_function(key_fn),
            "init_func": _kernels.register_function(init_fn),
            "reduce_func": _kernels.register_function(reduce_fn),
            "finalize_func": _kernels.register_function(finalize_fn)},
            structure=finalize_fn.structure,
            types=[t.dtype for t in finalize_fn.outputs],
            shapes=[t.shape for t in finalize_fn.outputs])
    return apply


def _reduce_function(fn: Callable, ds: Dataset, structure, types, shapes) -> DatasetFunction:
    """reduce_func traced on (state, element); traced again with the state's shapes
    relaxed where its result's differ (a state that grows, say)."""
    for _ in range(2):
        traced = DatasetFunction(fn, (structure, ds._structure), list(types) +
                                 list(ds._types), list(shapes) + list(ds._shapes),
                                 "reduce_func", unpack=True)
        new_state = traced.outputs
        if nest.map_structure(lambda x: 0, traced.structure) != \
                nest.map_structure(lambda x: 0, structure) or \
                [t.dtype for t in new_state] != list(types):
            raise TypeError("The element types for the new state must match the initial "
                            "state. Expected %s; got %s." % (
                                list(types), [t.dtype for t in new_state]))
        relaxed = [s.most_specific_compatible_shape(t.shape)
                   for s, t in zip(shapes, new_state)]
        if all(r.as_list() == s.as_list() if s.ndims is not None and r.ndims is not None
               else r.ndims == s.ndims for r, s in zip(relaxed, shapes)):
            return traced
        shapes = relaxed
    return traced


_kernels.dataset_op("GroupByWindowDataset", ["input_dataset: variant"],
               {"key_func": "", "reduce_func": "", "window_size_func": ""}, functions=True)
_kernels.dataset_op("GroupByReducerDataset", ["input_dataset: variant"],
               {"key_func": "", "init_func": "", "reduce_func": "", "finalize_func": ""},
               functions=True)


def _key_of(ctx, node: DatasetValue, fn: DatasetFunction, element) -> int:
    return int(np.asarray(fn.run(ctx, element, node.feed)[0]))


class _Window(DatasetValue):
    """The elements of one window, as the dataset reduce_func receives."""

    def __init__(self, elements: List[list]):
        self.items = elements

    def elements(self, ctx):
        yield from self.items


class _GroupByWindow(DatasetValue):
    def __init__(self, source, key_fn, reduce_fn, size_fn, name="GroupByWindowDataset"):
        self.source, self.key_fn, self.reduce_fn, self.size_fn = \
            source, key_fn, reduce_fn, size_fn
        self.name = name

    def _reduced(self, ctx, key: int, window: List[list], index, with_errors: bool):
        ctx = ctx.child(self.name, *index)
        args = [np.int64(key), _Window(window)]
        return _pipe.read(_pipe.sub_dataset(ctx, self, self.reduce_fn, args), ctx, with_errors)

    def _elements(self, ctx, with_errors: bool):
        ctx = _pipe.pass_context(ctx)
        # the windows' datasets read in contexts of their own, named by this pass over
        # the input and the window's number in it (their randomness, if any, replays)
        call = ctx.calls(self.name)
        windows, sizes = {}, {}
        emitted = itertools.count()
        for e in _pipe.read(self.source, ctx, with_errors):
            if isinstance(e, _pipe.ElementError):
                yield e
                continue
            key = _key_of(ctx, self, self.key_fn, e)
            if key not in windows:
                windows[key] = []
                sizes[key] = self._size(ctx, key)
            windows[key].append(e)
            if len(windows[key]) == sizes[key]:
                yield from self._reduced(ctx, key, windows.pop(key),
                                         (call, next(emitted)), with_errors)
        for key in sorted(windows):
            yield from self._reduced(ctx, key, windows[key], (call, next(emitted)),
                                     with_errors)

    def _size(self, ctx, key: int) -> int:
        size = int(np.asarray(self.size_fn.run(ctx, [np.int64(key)], self.feed)[0]))
        if size < 1:
            raise errors.InvalidArgumentError(None, None, "Window size must be greater "
                                              "than zero, but got %d." % size)
        return size


class _GroupByReducer(DatasetValue):
    def __init__(self, source, key_fn, init_fn, reduce_fn, finalize_fn):
        self.source, self.key_fn = source, key_fn
        self.init_fn, self.reduce_fn, self.finalize_fn = init_fn, reduce_fn, finalize_fn

    def elements(self, ctx):
        states = {}
        for e in self.source.elements(ctx):
            key = _key_of(ctx, self, self.key_fn, e)
            if key not in states:
                states[key] = self.init_fn.run(ctx, [np.int64(key)], self.feed)
            states[key] = self.reduce_fn.run(ctx, list(states[key]) + list(e), self.feed)
        for key in sorted(states):
            yield self.finalize_fn.run(ctx, list(states[key]), self.feed)


@_kernels.function_kernel("GroupByWindowDataset")
def _group_by_window_kernel(ctx, d):
    a = ctx.attrs
    return _GroupByWindow(d, _kernels.function_of(ctx, a["key_func"]),
                          _kernels.function_of(ctx, a["reduce_func"]),
                          _kernels.function_of(ctx, a["window_size_func"]), ctx.op.name)


@_kernels.function_kernel("GroupByReducerDataset")
def _group_by_reducer_kernel(ctx, d):
    a = ctx.attrs
    return _GroupByReducer(d, *(_kernels.function_of(ctx, a[k]) for k in (
        "key_func", "init_func", "reduce_func", "finalize_func")))
