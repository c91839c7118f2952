"""Nested structures of values (TF's `nest`): lists, tuples, namedtuples and dicts.

Control-flow builders take and return nested structures (loop variables, cond outputs,
scan accumulators); these helpers flatten them to a list of leaves and rebuild them.
Dicts are walked in sorted key order, as TF does. A TensorArray or SparseTensor is a
leaf here; builders that carry them through a loop convert them themselves.
"""
from __future__ import annotations

from typing import Any, Callable, List


def is_sequence(x: Any) -> bool:
    """True for the containers nest walks into (list, tuple, namedtuple, dict)."""
    return isinstance(x, (list, tuple, dict))


def children(x) -> list:
    """The direct children of a sequence (dict values in sorted key order)."""
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure: Any) -> List[Any]:
    """The leaves of `structure` in order (a non-sequence is its own single leaf)."""
    if not is_sequence(structure):
        return [structure]
    out: List[Any] = []
    stack = [structure]
    # iterative depth-first walk keeping leaf order
    while stack:
        x = stack.pop()
        if is_sequence(x):
            stack.extend(reversed(children(x)))
        else:
            out.append(x)
    return out


def _rebuild(template, values):
    if isinstance(template, dict):
        return type(template)((k, v) for k, v in zip(sorted(template), values))
    if isinstance(template, tuple) and hasattr(template, "_fields"):  # namedtuple
        return type(template)(*values)
    if isinstance(template, tuple):
        return tuple(values)
    return list(values)


def pack_sequence_as(structure: Any, flat_sequence) -> Any:
    """`flat_sequence` rebuilt in the shape of `structure`.

    Raises:
      ValueError: the number of values does not match the number of leaves.
    """
    flat_sequence = list(flat_sequence)
    n = len(flatten(structure))
    if n != len(flat_sequence):
        raise ValueError("Could not pack sequence. Structure had %d elements, but "
                         "flat_sequence had %d elements.  Structure: %s, flat_sequence: %s."
                         % (n, len(flat_sequence), structure, flat_sequence))
    if not is_sequence(structure):
        return flat_sequence[0]
    pos = [0]

    def build(s):
        if not is_sequence(s):
            v = flat_sequence[pos[0]]
            pos[0] += 1
            return v
        return _rebuild(s, [build(c) for c in children(s)])
    return build(structure)


def assert_same_structure(a: Any, b: Any, check_types: bool = True) -> None:
    """Raises ValueError (TypeError for differing sequence types) unless `a` and `b`
    nest the same way."""
    if is_sequence(a) != is_sequence(b):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         "First structure: %s\n\nSecond structure: %s" % (a, b))
    if not is_sequence(a):
        return
    if check_types and type(a) is not type(b) and not (
            isinstance(a, list) and isinstance(b, list)):
        if not (isinstance(a, tuple) and isinstance(b, tuple)
                and not hasattr(a, "_fields") and not hasattr(b, "_fields")):
            raise TypeError("The two structures don't have the same sequence type. First "
                            "structure has type %s, while second structure has type %s."
                            % (type(a), type(b)))
    if isinstance(a, dict) and sorted(a) != sorted(b):
        raise ValueError("The two dictionaries don't have the same set of keys. First "
                         "structure has keys %s, while second structure has keys %s."
                         % (sorted(a), sorted(b)))
    ca, cb = children(a), children(b)
    if len(ca) != len(cb):
        raise ValueError("The two structures don't have the same number of elements.\n\n"
                         "First structure: %s\n\nSecond structure: %s" % (a, b))
    for x, y in zip(ca, cb):
        assert_same_structure(x, y, check_types)


def map_structure(fn: Callable, *structures: Any, check_types: bool = True) -> Any:
    """`fn` applied leaf-wise to structures of the same nesting."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    for s in structures[1:]:
        assert_same_structure(structures[0], s, check_types)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])
