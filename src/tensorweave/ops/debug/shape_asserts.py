"""tf.debugging.assert_shapes: the shapes of several tensors and the relations between
their dimensions, checked at build time where the shapes are known, else with the step.

A spec is a sequence of size entries, one per dimension: an int (that size), None or
"." (any size), any other hashable (a symbol: every dimension given the same symbol has
the same size). A first entry `...` or "*" stands for any number of outer dimensions,
and the rest apply to the innermost ones. A scalar and a spec of no entries both count
as one dimension of size one (TF's rule, so a scalar meets `("N",)` and `[1]` meets
`()`).
"""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor, control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.debug import check_ops


def _is_explicit(entry) -> bool:
    return isinstance(entry, int) and not isinstance(entry, bool)


def _padded_shape(x: Tensor, n: int):
    """The run-time sizes of the `n` innermost dimensions of `x`, a scalar counting as
    size one."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_join_ops import concat
    return concat([array_ops.ones([n], _dt.int32), array_ops.shape(x)], 0)[-n:]


@tf_export("debugging.assert_shapes")
def assert_shapes(shapes, data=None, summarize=None, message=None,
                  name: Optional[str] = None) -> Operation:
    """Asserts the shapes of tensors and the equality of the dimensions their specs
    name alike (see the module docstring).

    Args:
      shapes: a dict of Tensor -> spec, or a list of (Tensor, spec) pairs.
      data: tensors to print on failure (default: the requirement and the shape).
      summarize: how many entries of each tensor to print.
      message: prefix of the error message.
      name: name scope (default "assert_shapes").

    Returns:
      An Operation grouping the checks left for run time ("group_deps").

    Raises:
      ValueError: a rank or size known at build time breaks a spec.
    """
    from tensorweave.ops.control_flow.structure import group
    from tensorweave.ops.math.math_binary import equal
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    tensors = [x for x, _ in items]
    prefix = check_ops._message_prefix(message)
    with name_scope(name, "assert_shapes", tensors + list(data or [])):
        specs = []
        rank_checks: List[Operation] = []
        for x, spec in items:
            x = convert_to_tensor(x)
            spec = list(spec)
            outer = bool(spec) and (spec[0] is Ellipsis or spec[0] == "*")
            inner = spec[1:] if outer else spec
            n = len(inner)
            if outer:
                rank_checks.append(check_ops.assert_rank_at_least(x, n, message=message))
            elif n <= 1:
                rank_checks.append(check_ops.assert_rank_in(x, [0, 1], message=message))
            else:
                rank_checks.append(check_ops.assert_rank(x, n, message=message))
            specs.append((x, inner, outer))
        size_checks: List[Operation] = []
        known = {}  # symbol -> (where it was specified, its static size, dim tensor)
        with control_dependencies(rank_checks):
            for x, inner, outer in specs:
                n = len(inner)
                static = x.shape.as_list() if x.shape.ndims is not None else None
                if static is not None and not static:
                    static = [1]  # a scalar: one dimension of size one
                padded = None
                for i, entry in enumerate(inner):
                    if entry is None or entry == ".":
                        continue
                    dim = i - n if outer else i  # as TF numbers it in its messages
                    have = static[i - n] if static is not None and len(static) >= n \
                        else None
                    if _is_explicit(entry):
                        where, want, want_t = "Specified explicitly", int(entry), None
                    elif entry in known:
                        where, want, want_t = known[entry]
                    else:
                        if padded is None:
                            padded = _padded_shape(x, n)
                        known[entry] = ("Specified by tensor %s dimension %d" % (x.name, dim),
                                        have, padded[i])
                        continue
                    if have is not None and want is not None:
                        if have != want:
                            raise ValueError(
                                "%s%s.  Tensor %s dimension %d must have size %d.  Received "
                                "size %d, shape %s" % (prefix, where, x.name, dim, want, have,
                                                       x.shape))
                        continue
                    if padded is None:
                        padded = _padded_shape(x, n)
                    expected = want if want is not None else want_t
                    from tensorweave.ops.array import array_ops
                    from tensorweave.ops.debug.debug_ops import Assert
                    shown = data if data is not None else [
                        prefix, where, "Tensor %s dimension" % x.name, dim,
                        "must have size", expected, "Received shape: ", array_ops.shape(x)]
                    size_checks.append(Assert(equal(padded[i], expected), shown,
                                              summarize=summarize))
    return group(*(rank_checks + size_checks))  # outside the scope: TF's "group_deps"
