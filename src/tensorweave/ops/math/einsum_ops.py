"""tensordot (composite) and einsum (the Einsum op) (part of the matmul family)."""
from __future__ import annotations

import functools
from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import Dimension, TensorShape, unknown_shape
from tensorweave.ops.math.matmul_ops import MATMUL_TYPES, _as_float32, _broadcast_batch, \
    _merge_dim, matmul

_ELL = "..."


# --- equations ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def parse_equation(equation: str) -> Tuple[Tuple[Tuple[str, ...], ...], Tuple[str, ...]]:
    """(input subscripts, output subscripts), each a tuple of labels ("..." is one label).

    Raises:
      ValueError: a malformed equation.
    """
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError("Einsum equation %r has more than one '->'." % equation)
    lhs, arrow, rhs = eq.partition("->")
    ins = tuple(_labels(s, equation) for s in lhs.split(","))
    if arrow:
        out = _labels(rhs, equation)
    else:  # implicit mode: labels that appear once, in alphabetical order; as in TF the
        # ellipsis counts as a label (kept in front when only one operand has it)
        counts = {}
        for sub in ins:
            for lab in sub:
                counts[lab] = counts.get(lab, 0) + 1
        out = ((_ELL,) if counts.get(_ELL) == 1 else ()) + tuple(
            sorted(lab for lab, c in counts.items() if c == 1 and lab != _ELL))
    seen = {lab for sub in ins for lab in sub}
    for lab in out:
        if lab != _ELL and lab not in seen:
            raise ValueError("Output subscripts contain the label %s not present in the input "
                             "subscripts." % lab)
    if _ELL in out and _ELL not in seen:
        raise ValueError("Output subscripts of einsum equation %r contain an ellipsis but no "
                         "input does." % equation)
    if len(set(out)) != len(out):
        raise ValueError("Output subscripts of einsum equation %r contain a label more than "
                         "once." % equation)
    return ins, out


def _labels(sub: str, equation: str) -> Tuple[str, ...]:
    if sub.count(_ELL) > 1:
        raise ValueError("Einsum subscript %r of equation %r has more than one ellipsis."
                         % (sub, equation))
    head, ell, tail = sub.partition(_ELL)
    for c in head + tail:
        if not c.isalpha():
            raise ValueError("Invalid character %r in einsum equation %r." % (c, equation))
    return tuple(head) + ((_ELL,) if ell else ()) + tuple(tail)


def _format(subs) -> str:
    return "".join(subs)


def _split_dims(subs, dims, index: int):
    """(label -> [dims], ellipsis dims or None) for one operand of known rank."""
    n_labels = sum(1 for s in subs if s != _ELL)
    if (_ELL not in subs and len(dims) != n_labels) or len(dims) < n_labels:
        raise ValueError("Input %d of Einsum has rank %d but its subscripts %r name %d "
                         "dimensions" % (index, len(dims), _format(subs), n_labels))
    ell_rank = len(dims) - n_labels
    out, ell, pos = [], None, 0
    for s in subs:
        if s == _ELL:
            ell = dims[pos:pos + ell_rank]
            pos += ell_rank
        else:
            out.append((s, dims[pos]))
            pos += 1
    return out, ell


# --- the op -------------------------------------------------------------------------------
def _einsum_shape(op) -> TensorShape:
    ins, out = parse_equation(op._get_attr("equation"))
    if len(ins) != len(op.inputs):
        raise ValueError("Got %d inputs for equation \"%s\", expecting %d"
                         % (len(op.inputs), op._get_attr("equation"), len(ins)))
    sizes = {}
    ell_shape: Optional[TensorShape] = TensorShape([])
    for i, (subs, t) in enumerate(zip(ins, op.inputs)):
        shape = t.shape
        if shape.ndims is None:
            if _ELL in subs:
                ell_shape = None
            continue
        pairs, ell = _split_dims(subs, shape.dims, i)
        for lab, d in pairs:
            sizes[lab] = _merge_dim(sizes.get(lab, Dimension(None)), d)
        if ell is not None and ell_shape is not None:
            ell_shape = _broadcast_batch(ell_shape, TensorShape(ell))
    if _ELL in out and ell_shape is None:
        return unknown_shape()
    dims = []
    for lab in out:
        if lab == _ELL:
            dims.extend(ell_shape.dims)
        else:
            dims.append(sizes.get(lab, Dimension(None)))
    return TensorShape(dims)


register_op("Einsum", inputs=["inputs: N * T"], outputs=["output: T"],
            attrs={"T": TypeAttr(MATMUL_TYPES), "equation": "", "N": 1},
            shape=_einsum_shape)


@kernel("Einsum", cheap=False)
def _einsum_kernel(ctx, *xs):
    equation = ctx.attrs["equation"]
    ins, out = parse_equation(equation)
    sizes = {}
    for i, (subs, x) in enumerate(zip(ins, xs)):
        try:
            pairs, _ = _split_dims(subs, x.shape, i)
        except ValueError as e:
            raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None
        for axis, (lab, d) in enumerate(pairs):
            have = sizes.setdefault(lab, d)
            if have != d:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Expected dimension %d for label %s at input %d of Einsum "
                    "(shape [%s]) but got dimension %d"
                    % (have, lab, i, ",".join(str(s) for s in x.shape), d))
    dtype = xs[0].dtype
    args = [_as_float32(x) for x in xs]
    if any(_ELL in sub for sub in ins) and _ELL not in out:
        # NumPy cannot sum ellipsis dims away: keep them in front, then sum them
        eq = ",".join(_format(sub) for sub in ins) + "->..." + _format(out)
        result = np.einsum(eq, *args, optimize=len(xs) > 1)
        lead = tuple(range(result.ndim - len(out)))
        result = result.sum(axis=lead, dtype=result.dtype) if lead else result
    else:
        result = np.einsum(equation.replace(" ", ""), *args, optimize=len(xs) > 1)
    if len(xs) == 1 and np.may_share_memory(result, xs[0]):
        result = result.copy()  # a transpose or diagonal view: do not alias the input
    return ctx.xp.asarray(result).astype(dtype, copy=False)


@gradient("Einsum")
def _einsum_grad(op, grad):
    """The gradient of operand i is an einsum of `grad` with the other operands; labels
    found only in operand i are broadcast back, and broadcast ellipsis dims summed."""
    from tensorweave.ops.math import math_unary
    ins, out = parse_equation(op._get_attr("equation"))
    xs = list(op.inputs)
    if grad.dtype.is_complex:
        xs = [math_unary.conj(x) for x in xs]
    result = []
    for i, subs in enumerate(ins):
        x, unique = op.inputs[i], tuple(dict.fromkeys(subs))
        if unique != subs:  # a repeated label takes a diagonal: work on that diagonal
            x = _einsum(_format(subs) + "->" + _format(unique), [x], None, False)
        others = [j for j in range(len(ins)) if j != i]
        avail = set(out).union(*[set(ins[j]) for j in others]) if others else set(out)
        kept = [s for s in unique if s in avail]
        eq = ",".join([_format(out)] + [_format(ins[j]) for j in others]) + "->" + \
            _format(kept)
        g = _einsum(eq, [grad] + [xs[j] for j in others], None, check_broadcast=False) \
            if (others or kept != list(out)) else grad
        g = _restore_operand_shape(g, kept, unique, x, op)
        result.append(g if unique == subs else _embed_diagonal(g, x, unique, subs))
    return result


def _embed_diagonal(g: Tensor, x_diag: Tensor, unique, subs) -> Tensor:
    """The gradient of an operand labelled `subs` (with repeated labels) from the gradient
    `g` of its diagonal `x_diag` (labelled `unique`): `g` on the diagonal, 0 elsewhere.
    Each repeat of a label becomes a fresh label tied to the first by an identity matrix."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.linalg import matrix_ops
    free = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                if c not in subs)
    seen, out_subs, eyes, eye_subs = set(), [], [], []
    for s in subs:
        if s == _ELL or s not in seen:
            seen.add(s)
            out_subs.append(s)
            continue
        fresh = next(free)
        out_subs.append(fresh)
        axis = _axis_of(unique, s, x_diag)
        size = x_diag.shape[axis].value
        if size is None:
            size = array_ops.shape(x_diag)[axis]
        eyes.append(matrix_ops.eye(size, dtype=g.dtype))
        eye_subs.append(s + fresh)
    eq = ",".join([_format(unique)] + eye_subs) + "->" + _format(out_subs)
    return _einsum(eq, [g] + eyes, None, check_broadcast=False)


def _axis_of(subs, label: str, x: Tensor) -> int:
    """The axis of `x` (labelled `subs`) that `label` names, counting from the end when
    an ellipsis comes before it."""
    k = subs.index(label)
    if _ELL in subs and subs.index(_ELL) < k:
        return k - len(subs)
    return k


def _restore_operand_shape(g, kept, subs, x: Tensor, op):
    """Brings `g` (labelled `kept`, with the output's ellipsis dims) to the shape of the
    operand `x` (labelled `subs`): inserts the labels summed only inside `x`, sums the
    ellipsis dims that broadcasting added and broadcasts back what was summed away."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math.reduction_ops import reduce_sum
    equation = op._get_attr("equation")
    if _ELL in subs and (x.shape.ndims is None or g.shape.ndims is None):
        raise ValueError("The gradient of einsum %r needs the ranks of its operands and "
                         "output at graph-build time" % equation)
    g_ell = g.shape.ndims - (len(kept) - 1) if _ELL in kept else 0
    x_ell = x.shape.ndims - (len(subs) - 1) if _ELL in subs else 0
    pos = 0
    for s in subs:  # insert the labels that only x has, as dims of length 1
        if s == _ELL:
            pos += g_ell
            continue
        if s not in kept:
            g = array_ops.expand_dims(g, pos)
        pos += 1
    needs_broadcast = len(kept) != len(subs)
    if _ELL in subs:
        start = subs.index(_ELL)
        lead = g_ell - x_ell
        if lead < 0:
            if start != 0:
                raise ValueError("The gradient of einsum %r is not supported: operand "
                                 "%s has a non-leading ellipsis that the output lacks"
                                 % (equation, _format(subs)))
            needs_broadcast = True
        else:
            keep_axes = []
            for k in range(x_ell):
                xd, gd = x.shape[start + k].value, g.shape[start + lead + k].value
                if xd == 1 and gd != 1:
                    keep_axes.append(start + lead + k)
                elif xd is None and gd != xd:
                    raise ValueError("The gradient of einsum %r needs static shapes for "
                                     "broadcast ellipsis dimensions" % equation)
            if keep_axes:
                g = reduce_sum(g, keep_axes, keepdims=True)
            if lead:
                g = reduce_sum(g, list(range(start, start + lead)))
    if needs_broadcast:
        shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
        g = array_ops.broadcast_to(g, shape)
    return g


# --- builders -----------------------------------------------------------------------------
@tf_export("einsum", "linalg.einsum")
def einsum(equation: str, *inputs, **kwargs) -> Tensor:
    """A generalized contraction between tensors, in Einstein summation notation (TF
    `tf.einsum`).

    `equation` names each dimension of each input with a letter ("ij,jk->ik" is a matrix
    product); labels missing from the output are summed; "..." stands for broadcast
    leading dimensions. Without "->", the output holds the labels that appear once, in
    alphabetical order.

    Args:
      equation: the equation string.
      *inputs: the operands, all of one numeric dtype.
      name: (keyword) a name for the operation.

    Returns:
      The contracted tensor.

    Raises:
      ValueError: a malformed equation, the wrong number of inputs, or incompatible
        static dimensions.
      TypeError: an unknown keyword argument or mismatched dtypes.
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError("Invalid keyword arguments for this function: %s"
                        % ", ".join(sorted(kwargs)))
    return _einsum(equation, inputs, name, check_broadcast=True)


def _einsum(equation: str, inputs, name: Optional[str], check_broadcast: bool) -> Tensor:
    """`einsum`; without `check_broadcast`, an output without "..." may sum broadcast
    ellipsis dims away (the kernel does), which the gradients rely on."""
    ins, out = parse_equation(equation)
    if len(ins) != len(inputs):
        raise ValueError("Got %d inputs for equation \"%s\", expecting %d"
                         % (len(inputs), equation, len(ins)))
    # the op gets the explicit equation, as TF writes it
    explicit = ",".join(_format(sub) for sub in ins) + "->" + _format(out)
    with name_scope(name, "einsum", list(inputs)):
        ts = [convert_to_tensor(x) for x in inputs]
        dts = [t.dtype for t in ts]
        if any(d is not dts[0] for d in dts):
            raise TypeError("Tensors in list passed to 'inputs' of 'Einsum' Op have types "
                            "[%s] that don't all match." % ", ".join(d.name for d in dts))
        if check_broadcast and _ELL not in out:
            _check_no_broadcast_dims(explicit, ins, ts)
        return apply_op("Einsum", [ts], {"equation": explicit}, name="Einsum").outputs[0]


def _check_no_broadcast_dims(equation: str, ins, ts) -> None:
    """TF's check that an output without "..." drops no broadcast dimension (the op
    itself sums them, which its gradients use)."""
    for subs, t in zip(ins, ts):
        if _ELL in subs and t.shape.ndims is not None:
            extra = t.shape.ndims - (len(subs) - 1)
            if extra > 0:
                raise ValueError(
                    "Shape must be at most rank 0 but is rank %d\n\t for einsum equation "
                    "'%s' without ellipsis (...) in the output subscripts where input(s) "
                    "have non-empty broadcasting shape" % (extra, equation))


def _tensordot_axes(a: Tensor, axes) -> Tuple[List[int], List[int]]:
    if isinstance(axes, (int, np.integer)):
        axes = int(axes)
        if axes < 0:
            raise ValueError("`axes` must be at least 0. Received: %d." % axes)
        rank = a.shape.ndims
        if rank is None:
            raise ValueError("tensordot with an integer `axes` needs the rank of `a` at "
                             "graph-build time")
        if axes > rank:
            raise ValueError("`axes` must not be larger than the number of dimensions of "
                             "tensor %s.  Received %d, vs tensor dimensions %d."
                             % (a, axes, rank))
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, Tensor):
        raise ValueError("tensordot needs `axes` as Python ints or lists at graph-build time")
    axes = list(axes)
    if len(axes) != 2:
        raise ValueError("`axes` must be an integer or have length 2. Received %s." % axes)
    a_axes, b_axes = axes
    a_axes = [int(a_axes)] if isinstance(a_axes, (int, np.integer)) else \
        [int(v) for v in a_axes]
    b_axes = [int(b_axes)] if isinstance(b_axes, (int, np.integer)) else \
        [int(v) for v in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError("Different number of contraction axes `a` and `b`, %d != %d."
                         % (len(a_axes), len(b_axes)))
    return a_axes, b_axes


def _tensordot_operand(t: Tensor, axes: List[int], flipped: bool):
    """t transposed and reshaped to a matrix: [free, contracted] (or the flip)."""
    from tensorweave.ops.array import array_ops
    dims = t.shape.as_list()
    rank = len(dims)
    axes = [a + rank if a < 0 else a for a in axes]
    free = [i for i in range(rank) if i not in axes]
    n_free = int(np.prod([dims[i] for i in free], dtype=np.int64))
    n_axes = int(np.prod([dims[i] for i in axes], dtype=np.int64))
    perm = axes + free if flipped else free + axes
    new_shape = [n_axes, n_free] if flipped else [n_free, n_axes]
    if perm != list(range(rank)):
        t = array_ops.transpose(t, perm)
    if t.shape.as_list() != new_shape:
        t = array_ops.reshape(t, new_shape)
    return t, [dims[i] for i in free]


def _tensordot_at_run_time(a: Tensor, b: Tensor, axes, scope: str) -> Tensor:
    """tensordot when a rank or the axes are known only at run time (TF's dynamic path):
    each operand transposed and reshaped to a matrix by shape ops, one matmul."""
    from tensorweave.framework import dtypes as _dt
    from tensorweave.ops.array import array_join_ops, array_ops
    from tensorweave.ops.math import math_ops
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError("`axes` must be at least 0. Received: %d." % axes)
        rank_a = array_ops.rank(a)
        a_axes, b_axes = math_ops.range(rank_a - int(axes), rank_a), math_ops.range(int(axes))
    elif isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError("`axes` must be an integer or have length 2. Received %s."
                             % (axes,))
        a_axes, b_axes = axes
    else:  # a Tensor [2] or [2, k]: the axes of a, then of b
        axes = convert_to_tensor(axes, dtype=_dt.int32, name="axes")
        a_axes, b_axes = axes[0], axes[1]
    a_mat, a_free = _tensordot_operand_at_run_time(a, a_axes, False)
    b_mat, b_free = _tensordot_operand_at_run_time(b, b_axes, True)
    return array_ops.reshape(matmul(a_mat, b_mat),
                             array_join_ops.concat([a_free, b_free], 0), name=scope)


def _tensordot_operand_at_run_time(t: Tensor, axes, flipped: bool):
    """`_tensordot_operand` with shape ops: (the matrix, the free dims as a Tensor)."""
    from tensorweave.framework import dtypes as _dt
    from tensorweave.ops.array import array_join_ops, array_ops, array_sort_ops
    from tensorweave.ops.indexing import indexing_gather, indexing_select
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    shape, rank = array_ops.shape(t), array_ops.rank(t)
    axes = array_ops.reshape(convert_to_tensor(axes, dtype=_dt.int32), [-1])
    axes = indexing_select.where(math_binary.greater_equal(axes, 0), axes,
                                 math_binary.add(axes, rank))
    free, _ = array_sort_ops.setdiff1d(math_ops.range(rank), axes)
    free_dims = indexing_gather.gather(shape, free)
    n_free = reduction_ops.reduce_prod(free_dims)
    n_axes = reduction_ops.reduce_prod(indexing_gather.gather(shape, axes))
    perm = array_join_ops.concat([axes, free] if flipped else [free, axes], 0)
    new_shape = array_join_ops.stack([n_axes, n_free] if flipped else [n_free, n_axes])
    return array_ops.reshape(array_ops.transpose(t, perm), new_shape), free_dims


@tf_export("tensordot", "linalg.tensordot")
def tensordot(a, b, axes, name: Optional[str] = None) -> Tensor:
    """Tensor contraction of `a` and `b` over the given axes (TF1 `tf.tensordot`).

    Args:
      a: a float or int tensor.
      b: a tensor of the same type.
      axes: an int N (contract the last N axes of `a` with the first N of `b`), or a
        pair of lists (or ints) of the axes of `a` and of `b` to contract.
      name: a name for the operation.

    Returns:
      A tensor with the free axes of `a` followed by the free axes of `b`.

    Raises:
      ValueError: bad `axes`, or contracted dimensions that differ.
    """
    from tensorweave.ops.array import array_ops
    with name_scope(name, "Tensordot", [a, b, axes]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", preferred_dtype=a.dtype)
        if isinstance(axes, Tensor):
            from tensorweave.framework.tensor_util import constant_value
            static = constant_value(axes)
            if static is not None and static.ndim in (1, 2) and len(static) == 2:
                axes = static.tolist()  # known axes: the static path, as TF
        if isinstance(axes, Tensor) or a.shape.ndims is None or b.shape.ndims is None:
            return _tensordot_at_run_time(a, b, axes, scope)
        a_axes, b_axes = _tensordot_axes(a, axes)
        if a.shape.is_fully_defined() and b.shape.is_fully_defined():
            a_mat, a_free = _tensordot_operand(a, a_axes, False)
            b_mat, b_free = _tensordot_operand(b, b_axes, True)
            product = matmul(a_mat, b_mat)
            return array_ops.reshape(product, a_free + b_free, name=scope)
        # unknown dimensions: the same contraction as an einsum over known ranks
        letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        ra, rb = a.shape.ndims, b.shape.ndims
        if ra + rb > len(letters):
            raise ValueError("tensordot supports at most %d dimensions in all" % len(letters))
        sa = list(letters[:ra])
        sb = list(letters[ra:ra + rb])
        for i, j in zip(a_axes, b_axes):
            sb[j + rb if j < 0 else j] = sa[i + ra if i < 0 else i]
        contracted = {sa[i + ra if i < 0 else i] for i in a_axes}
        out = [s for s in sa if s not in contracted] + [s for s in sb if s not in contracted]
        return apply_op("Einsum", [[a, b]], {"equation": "%s,%s->%s" % (
            "".join(sa), "".join(sb), "".join(out))}, name=scope).outputs[0]
