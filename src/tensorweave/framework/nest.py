"""Nested structures of values (TF's `nest`): lists, tuples, namedtuples and dicts.

Control-flow builders take and return nested structures (loop variables, cond outputs,
scan accumulators); these helpers flatten them to a list of leaves and rebuild them.
Dicts are walked in sorted key order, as TF does. A TensorArray or SparseTensor is a
leaf here; builders that carry them through a loop convert them themselves. These are
also TF1's `tf.nest`, where `expand_composites=True` walks into a SparseTensor (indices,
values, dense shape) or IndexedSlices (values, indices[, dense shape]) too.
"""
from __future__ import annotations

import collections

from typing import Any, Callable, List, Optional

from tensorweave.framework.api_export import tf_export


def is_sequence(x: Any) -> bool:
    """True for the containers nest walks into (list, tuple, namedtuple, dict)."""
    return isinstance(x, (list, tuple, dict))


@tf_export("nest.is_nested")
def is_nested(seq: Any) -> bool:
    """Whether `seq` is a list, tuple, namedtuple or dict (a SparseTensor is not)."""
    return is_sequence(seq)


def _components(x) -> Optional[list]:
    """The component tensors of a SparseTensor or IndexedSlices, else None."""
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.framework.sparse_tensor import SparseTensor
    if isinstance(x, SparseTensor):
        return [x.indices, x.values, x.dense_shape]
    if isinstance(x, IndexedSlices):
        return [x.values, x.indices] + ([] if x.dense_shape is None else [x.dense_shape])
    return None


def _from_components(template, parts: list):
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.framework.sparse_tensor import SparseTensor
    if isinstance(template, SparseTensor):
        return SparseTensor(*parts)
    return IndexedSlices(parts[0], parts[1], parts[2] if len(parts) > 2 else None)


def _expanded(x):
    """`x` with every composite replaced by the tuple of its components."""
    parts = _components(x)
    if parts is not None:
        return tuple(parts)
    if is_sequence(x):
        return _rebuild(x, [_expanded(c) for c in children(x)])
    return x


def children(x) -> list:
    """The direct children of a sequence (dict values in sorted key order)."""
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


@tf_export("nest.flatten")
def flatten(structure: Any, expand_composites: bool = False) -> List[Any]:
    """The leaves of `structure` in order (a non-sequence is its own single leaf; with
    `expand_composites`, a composite's leaves are its component tensors)."""
    if expand_composites:
        structure = _expanded(structure)
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
        # values come in sorted-key order; the rebuilt dict keeps the template's own
        # key order, as TF's nest does
        by_key = dict(zip(sorted(template), values))
        items = [(k, by_key[k]) for k in template]
        if isinstance(template, collections.defaultdict):
            rebuilt = type(template)(template.default_factory)
            rebuilt.update(items)
            return rebuilt
        return type(template)(items)
    if isinstance(template, tuple) and hasattr(template, "_fields"):  # namedtuple
        return type(template)(*values)
    if isinstance(template, tuple):
        return tuple(values)
    return list(values)


@tf_export("nest.pack_sequence_as")
def pack_sequence_as(structure: Any, flat_sequence, expand_composites: bool = False) -> Any:
    """`flat_sequence` rebuilt in the shape of `structure` (with `expand_composites`,
    a composite of `structure` is rebuilt from as many values as it has components).

    Raises:
      ValueError: the number of values does not match the number of leaves.
    """
    flat_sequence = list(flat_sequence)
    n = len(flatten(structure, expand_composites))
    if n != len(flat_sequence):
        raise ValueError("Could not pack sequence. Structure had %d elements, but "
                         "flat_sequence had %d elements.  Structure: %s, flat_sequence: %s."
                         % (n, len(flat_sequence), structure, flat_sequence))
    if not is_sequence(structure):
        return flat_sequence[0]
    pos = [0]

    def build(s):
        parts = _components(s) if expand_composites else None
        if parts is not None:
            return _from_components(s, [build(p) for p in parts])
        if not is_sequence(s):
            v = flat_sequence[pos[0]]
            pos[0] += 1
            return v
        return _rebuild(s, [build(c) for c in children(s)])
    return build(structure)


@tf_export("nest.assert_same_structure")
def assert_same_structure(a: Any, b: Any, check_types: bool = True,
                          expand_composites: bool = False) -> None:
    """Raises ValueError (TypeError for differing sequence types) unless `a` and `b`
    nest the same way."""
    if expand_composites:
        a, b = _expanded(a), _expanded(b)
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


@tf_export("nest.map_structure")
def map_structure(fn: Callable, *structures: Any, check_types: bool = True,
                  expand_composites: bool = False) -> Any:
    """`fn` applied leaf-wise to structures of the same nesting."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    for s in structures[1:]:
        assert_same_structure(structures[0], s, check_types, expand_composites)
    flats = [flatten(s, expand_composites) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)],
                            expand_composites)
