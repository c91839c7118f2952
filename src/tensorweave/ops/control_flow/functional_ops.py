"""Higher-order functions over the first dimension of tensors: map_fn, scan, foldl, foldr
(EuroSys 2018 Figure 2: built from while_loop and TensorArrays).

Each one unstacks its (possibly nested) `elems` into TensorArrays, runs a while_loop
whose body reads element i, applies `fn`, and (map_fn, scan) writes the result into an
output TensorArray carried as a loop variable; the outputs are stacked at the end. All
are differentiable through while_loop and TensorArray gradients.
"""
from __future__ import annotations

from typing import Callable, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import Dimension, TensorShape
from tensorweave.ops.data_flow.tensor_array_class import TensorArray


def _check_callable(fn) -> None:
    if not callable(fn):
        raise TypeError("fn must be callable.")


def _structure_fns(template):
    """(flatten, pack) for values nested like `template` (a bare value if not nested)."""
    is_seq = nest.is_sequence(template)

    def flatten(x):
        return nest.flatten(x) if is_seq else [x]

    def pack(x):
        return nest.pack_sequence_as(template, x) if is_seq else x[0]
    return flatten, pack


def _in_out_structure(elems, out_template):
    """(flatten, pack) of the elements and of the results (nested like `out_template`,
    or like `elems` when it is None)."""
    in_fns = _structure_fns(elems)
    return in_fns + (in_fns if out_template is None else _structure_fns(out_template))


def _leading_size(elems_flat):
    """The number of elements: the static first dimension, else a shape tensor."""
    from tensorweave.ops.array import array_ops
    first = elems_flat[0].shape
    n = first[0].value if first.ndims else None
    return n if n else array_ops.shape(elems_flat[0])[0]


def _static_leading_dim(elems_flat) -> Dimension:
    d = Dimension(elems_flat[0].shape.with_rank_at_least(1)[0].value)
    for e in elems_flat[1:]:
        d = d.merge_with(Dimension(e.shape.with_rank_at_least(1)[0].value))
    return d


def _unstacked(elems_flat, n, with_element_shape: bool):
    tas = [TensorArray(dtype=e.dtype, size=n, dynamic_size=False, infer_shape=True,
                       element_shape=e.shape[1:] if with_element_shape and e.shape.ndims
                       else None)
           for e in elems_flat]
    return [ta.unstack(e) for ta, e in zip(tas, elems_flat)]


def _set_leading(results_flat, n_static: Dimension) -> None:
    for r in results_flat:
        rest = r.shape[1:] if r.shape.ndims else r.shape
        if r.shape.ndims is not None:
            r.set_shape(TensorShape([n_static.value]).concatenate(rest))


@tf_export("map_fn")
def map_fn(fn: Callable, elems, dtype=None, parallel_iterations: Optional[int] = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
           name: Optional[str] = None, fn_output_signature=None):
    """Applies `fn` to each element of `elems` unstacked on dimension 0 (TF1
    `tf.map_fn`).

    Args:
      fn: callable taking one (nested) element, returning a (nested) value with the
        structure of `dtype` (or of `elems` when `dtype` is None).
      elems: a Tensor or (nested) sequence of Tensors, all with the same first dimension.
      dtype: the dtype (structure) of `fn`'s output when it differs from `elems`.
      parallel_iterations: iterations allowed to run in parallel (default 10).
      back_prop: whether gradients may flow through the loop.
      swap_memory: swap saved intermediates to host memory.
      infer_shape: whether the outputs must all have the same shape.
      name: name scope (default "map").
      fn_output_signature: TF 2's name of `dtype` (not both). A tf.RaggedTensorSpec
        in either says `fn` returns ragged rows; RaggedTensor elems are mapped row by
        row (ragged_map_ops).

    Returns:
      The stacked results, in the structure of `dtype` (or of `elems`).

    Raises:
      TypeError: `fn` is not callable, or `elems` is a SparseTensor.
      ValueError: `elems` are scalars or none, `fn`'s output does not match `dtype`, or
        both `dtype` and `fn_output_signature` are given.
    """
    if fn_output_signature is not None:
        if dtype is not None:
            raise ValueError("Cannot specify both `dtype` and `fn_output_signature`.")
        dtype = fn_output_signature
    _check_callable(fn)
    from tensorweave.framework.sparse_tensor import SparseTensor
    if isinstance(elems, SparseTensor):
        raise TypeError(
            "To perform a map on the values of a sparse tensor use either "
            "SparseTensor(input.indices, fn(input.values), input.dense_shape) or "
            "SparseTensor(input.indices, map_fn(fn, input.values), input.dense_shape)")
    if parallel_iterations is None:
        parallel_iterations = 10

    def run_loop(fn_flat, elems_flat, out_dtypes, row_shapes=None):
        return _map_loop(fn_flat, elems_flat, out_dtypes, row_shapes, parallel_iterations,
                         back_prop, swap_memory, infer_shape)
    from tensorweave.ops.ragged import ragged_map_ops
    if ragged_map_ops.involves_ragged(elems, dtype):
        return ragged_map_ops.map_fn(fn, elems, dtype, run_loop, name)
    in_flatten, in_pack, out_flatten, out_pack = _in_out_structure(elems, dtype)
    elems_flat = in_flatten(elems)
    if not elems_flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. "
                         "Got %s, which does not contain any Tensors." % (elems,))
    with _graph.name_scope(name, "map", elems_flat):
        elems_flat = [convert_to_tensor(e, name="elem") for e in elems_flat]
        dtype = dtype or in_pack([e.dtype for e in elems_flat])
        check_elements_rank(elems_flat)

        def fn_flat(element_flat):
            out = fn(in_pack(element_flat))
            nest.assert_same_structure(dtype, out)
            return out_flatten(out)
        results_flat = run_loop(fn_flat, elems_flat, out_flatten(dtype))
        _set_leading(results_flat, _static_leading_dim(elems_flat))
        return out_pack(results_flat)


def check_elements_rank(elems_flat) -> None:
    """map_fn's check that the elements have a first dimension to unstack.

    Raises:
      ValueError: the first element is a scalar.
    """
    static_shape = elems_flat[0].shape
    if static_shape.ndims is not None and static_shape.ndims < 1:
        if len(elems_flat) == 1:
            raise ValueError("elems must be a 1+ dimensional Tensor, not a scalar")
        raise ValueError("elements in elems must be 1+ dimensional Tensors, not scalars")


def _map_loop(fn_flat: Callable, elems_flat, out_dtypes, row_shapes, parallel_iterations,
              back_prop, swap_memory, infer_shape):
    """The results of `fn_flat` (element i's tensors -> output tensors) over every
    element: output k stacked, or concatenated where `row_shapes[k]` is a TensorShape
    (outputs whose first dimension differs from element to element: ragged rows; the
    shape is that of every row, so that no rows concatenate too)."""
    from tensorweave.ops.control_flow import control_flow_ops
    row_shapes = row_shapes or [None] * len(out_dtypes)
    n = _leading_size(elems_flat)
    elems_ta = _unstacked(elems_flat, n, with_element_shape=False)
    accs_ta = [TensorArray(dtype=dt, size=n, dynamic_size=False,
                           infer_shape=infer_shape and rows is None, element_shape=rows)
               for dt, rows in zip(out_dtypes, row_shapes)]

    def compute(i, tas):
        flat = fn_flat([ta.read(i) for ta in elems_ta])
        return (i + 1, [ta.write(i, v) for ta, v in zip(tas, flat)])

    i0 = convert_to_tensor(0, name="Const")
    _, r_a = control_flow_ops.while_loop(
        lambda i, _: i < n, compute, (i0, accs_ta),
        parallel_iterations=parallel_iterations, back_prop=back_prop,
        swap_memory=swap_memory, maximum_iterations=n)
    return [r.stack() if rows is None else r.concat() for r, rows in zip(r_a, row_shapes)]


@tf_export("scan")
def scan(fn: Callable, elems, initializer=None, parallel_iterations: int = 10,
         back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
         reverse: bool = False, name: Optional[str] = None):
    """Scans `fn` over `elems` unstacked on dimension 0 (TF1 `tf.scan`).

    Output i is `fn(output i-1, element i)`; with no `initializer` output 0 is element 0
    (element n-1 when `reverse`).

    Args:
      fn: callable `(accumulator, element) -> accumulator` (nested like the
        initializer, or like `elems` without one).
      elems: a Tensor or (nested) sequence of Tensors with the same first dimension.
      initializer: the initial accumulator (nested).
      parallel_iterations, back_prop, swap_memory: as in while_loop.
      infer_shape: whether all accumulators must have the same shape.
      reverse: scan from the last element to the first.
      name: name scope (default "scan").

    Returns:
      The stacked accumulators, nested like the initializer (or `elems`).

    Raises:
      TypeError: `fn` is not callable.
      ValueError: `elems` have no first dimension, or `fn`'s output is nested
        differently from the accumulator.
    """
    _check_callable(fn)
    from tensorweave.ops.control_flow import control_flow_ops
    in_flatten, in_pack, out_flatten, out_pack = _in_out_structure(elems, initializer)
    elems_flat = in_flatten(elems)
    with _graph.name_scope(name, "scan", elems_flat):
        elems_flat = [convert_to_tensor(e, name="elem") for e in elems_flat]
        for e in elems_flat:
            e.shape.with_rank_at_least(1)
        n = _leading_size(elems_flat)
        elems_ta = _unstacked(elems_flat, n, with_element_shape=True)
        if initializer is None:
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            start = 1
        else:
            a_flat = [convert_to_tensor(v) for v in out_flatten(initializer)]
            start = 0
        accs_ta = [TensorArray(dtype=a.dtype, size=n, dynamic_size=False,
                               element_shape=a.shape if infer_shape else None,
                               infer_shape=infer_shape) for a in a_flat]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]
        structure = elems if initializer is None else initializer

        def compute(i, a_flat, tas):
            packed_elems = in_pack([ta.read(i) for ta in elems_ta])
            a_out = fn(out_pack(a_flat), packed_elems)
            nest.assert_same_structure(structure, a_out)
            flat_out = out_flatten(a_out)
            tas = [ta.write(i, v) for ta, v in zip(tas, flat_out)]
            return (i - 1 if reverse else i + 1, flat_out, tas)

        if reverse:
            i0 = convert_to_tensor(n - 1 - start, name="Const") if isinstance(n, int) \
                else n - 1 - start

            def condition(i, _1, _2):
                return i >= 0
        else:
            i0 = convert_to_tensor(start, name="Const")

            def condition(i, _1, _2):
                return i < n
        _, _, r_a = control_flow_ops.while_loop(
            condition, compute, (i0, a_flat, accs_ta),
            parallel_iterations=parallel_iterations, back_prop=back_prop,
            swap_memory=swap_memory, maximum_iterations=n)
        results_flat = [r.stack() for r in r_a]
        _set_leading(results_flat, _static_leading_dim(elems_flat))
        return out_pack(results_flat)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
          default_name: str, from_right: bool):
    _check_callable(fn)
    from tensorweave.ops.control_flow import control_flow_ops
    with _graph.name_scope(name, default_name, [elems]):
        elems_flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
        for e in elems_flat:
            e.shape.with_rank_at_least(1)
        n = _leading_size(elems_flat)
        elems_ta = _unstacked(elems_flat, n, with_element_shape=False)

        def read_all(i):
            return nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
        if from_right:
            if initializer is None:
                i = n - 1
                a = read_all(i)
            else:
                i, a = n, initializer
            i = convert_to_tensor(i, name="Const") if isinstance(i, int) else i

            def compute(i, a):
                i -= 1
                return [i, fn(a, read_all(i))]

            def cond(i, a):
                return i > 0
        else:
            if initializer is None:
                a, i = read_all(0), 1
            else:
                a, i = initializer, 0
            i = convert_to_tensor(i, name="Const")

            def compute(i, a):
                return [i + 1, fn(a, read_all(i))]

            def cond(i, a):
                return i < n
        _, r_a = control_flow_ops.while_loop(
            cond, compute, [i, a], parallel_iterations=parallel_iterations,
            back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n)
        return r_a


@tf_export("foldl")
def foldl(fn: Callable, elems, initializer=None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: Optional[str] = None):
    """Folds `fn` over `elems` from the first element to the last (TF1 `tf.foldl`).

    Args:
      fn: callable `(accumulator, element) -> accumulator`.
      elems: a Tensor or (nested) sequence of Tensors unstacked on dimension 0.
      initializer: the initial accumulator; default: element 0 (then fn starts at 1).
      parallel_iterations, back_prop, swap_memory: as in while_loop.
      name: name scope (default "foldl").

    Returns:
      The final accumulator.

    Raises:
      TypeError: `fn` is not callable.
      ValueError: `elems` have no first dimension.
    """
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 "foldl", from_right=False)


@tf_export("foldr")
def foldr(fn: Callable, elems, initializer=None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: Optional[str] = None):
    """Folds `fn` over `elems` from the last element to the first (TF1 `tf.foldr`).

    Args: as `foldl`; without `initializer` the accumulator starts as element n-1.

    Returns:
      The final accumulator.

    Raises:
      TypeError: `fn` is not callable.
      ValueError: `elems` have no first dimension.
    """
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 "foldr", from_right=True)
