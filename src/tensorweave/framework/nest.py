"""Nested structures of values (TF's `nest`): lists, tuples, namedtuples and dicts.

As TF's nest, any `collections.abc.Mapping` counts as a dict (walked in sorted key
order) and any other `Sequence` but a string (a range, a deque) or a mapping view
(`d.values()`) as a list.

Control-flow builders take and return nested structures (loop variables, cond outputs,
scan accumulators); these helpers flatten them to a list of leaves and rebuild them.
Dicts are walked in sorted key order, as TF does. A TensorArray or SparseTensor is a
leaf here; builders that carry them through a loop convert them themselves. These are
also TF1's `tf.nest`, where `expand_composites=True` walks into a SparseTensor (indices,
values, dense shape) or IndexedSlices (values, indices[, dense shape]) too.
"""
from __future__ import annotations

import collections
from collections import abc

from typing import Any, Callable, Dict, List, Optional

from tensorweave.framework.api_export import tf_export


# type -> whether nest walks into its instances: the ABC checks cost ~0.5us a leaf, and
# nest runs over every fetch and loop variable (bounded: classes made on the fly)
_NESTED_TYPES: Dict[type, bool] = {}


def is_sequence(x: Any) -> bool:
    """True for the containers nest walks into: lists, tuples, namedtuples, mappings,
    mapping views and other sequences that are not strings (TF's rule)."""
    t = type(x)
    nested = _NESTED_TYPES.get(t)
    if nested is None:
        nested = issubclass(t, (list, tuple, dict, abc.Mapping, abc.MappingView,
                                abc.Sequence)) and not issubclass(t, (str, bytes))
        if len(_NESTED_TYPES) < 1024:
            _NESTED_TYPES[t] = nested
    return nested


_COMPOSITE_TYPES: tuple = ()  # (SparseTensor, IndexedSlices), once imported


def _composite_types() -> tuple:
    global _COMPOSITE_TYPES
    if not _COMPOSITE_TYPES:
        from tensorweave.framework.indexed_slices import IndexedSlices
        from tensorweave.framework.sparse_tensor import SparseTensor
        _COMPOSITE_TYPES = (SparseTensor, IndexedSlices)
    return _COMPOSITE_TYPES


def is_flat(structure: Any, expand_composites: bool = False) -> bool:
    """Whether `structure` is a list or tuple of leaves only (composites count as
    leaves unless `expand_composites`): flattening or packing it needs no walk. Loop
    variables and fetches mostly are (checked once per type of element, not per leaf)."""
    t = type(structure)
    if t is not list and t is not tuple:
        return False
    for leaf_type in {type(x) for x in structure}:
        nested = _NESTED_TYPES.get(leaf_type)
        if nested is None or nested:  # unknown types take the general walk once
            return False
        if expand_composites and issubclass(leaf_type, _composite_types()):
            return False
    return True


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


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
    """The direct children of a sequence (mapping values in sorted key order)."""
    if isinstance(x, abc.Mapping):
        return [x[k] for k in sorted(x)]
    return list(x)


@tf_export("nest.flatten")
def flatten(structure: Any, expand_composites: bool = False) -> List[Any]:
    """The leaves of `structure` in order (a non-sequence is its own single leaf; with
    `expand_composites`, a composite's leaves are its component tensors)."""
    if is_flat(structure, expand_composites):
        return list(structure)
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
    if isinstance(template, abc.Mapping):
        # values come in sorted-key order; the rebuilt mapping keeps the template's own
        # key order and type, as TF's nest does
        by_key = dict(zip(sorted(template), values))
        items = [(k, by_key[k]) for k in template]
        if isinstance(template, collections.defaultdict):
            rebuilt = type(template)(template.default_factory)
            rebuilt.update(items)
            return rebuilt
        if isinstance(template, abc.MutableMapping):
            rebuilt = type(template)()
            rebuilt.update(items)
            return rebuilt
        return type(template)(items)
    if _is_namedtuple(template):
        return type(template)(*values)
    if isinstance(template, tuple):
        return tuple(values)
    if isinstance(template, (list, range, abc.MappingView)):  # views and ranges: lists
        return list(values)
    return type(template)(values)  # another Sequence (a deque)


@tf_export("nest.pack_sequence_as")
def pack_sequence_as(structure: Any, flat_sequence, expand_composites: bool = False) -> Any:
    """`flat_sequence` rebuilt in the shape of `structure` (with `expand_composites`,
    a composite of `structure` is rebuilt from as many values as it has components).

    Raises:
      ValueError: the number of values does not match the number of leaves.
    """
    flat_sequence = list(flat_sequence)
    if is_flat(structure, expand_composites) and len(structure) == len(flat_sequence):
        return _rebuild(structure, flat_sequence)
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
    if check_types and type(a) is not type(b) and not _same_sequence_type(a, b):
        raise TypeError("The two structures don't have the same sequence type. First "
                        "structure has type %s, while second structure has type %s."
                        % (type(a), type(b)))
    if isinstance(a, abc.Mapping) and sorted(a) != sorted(b):
        raise ValueError("The two dictionaries don't have the same set of keys. First "
                         "structure has keys %s, while second structure has keys %s."
                         % (sorted(a), sorted(b)))
    ca, cb = children(a), children(b)
    if len(ca) != len(cb):
        raise ValueError("The two structures don't have the same number of elements.\n\n"
                         "First structure: %s\n\nSecond structure: %s" % (a, b))
    for x, y in zip(ca, cb):
        assert_same_structure(x, y, check_types)


def _same_sequence_type(a, b) -> bool:
    """Whether two containers of different Python types count as one sequence type:
    two lists, two mappings (dict, OrderedDict, defaultdict, ...), two plain tuples,
    or two namedtuples of the same name and fields (TF's rule)."""
    if _is_namedtuple(a) or _is_namedtuple(b):
        return (_is_namedtuple(a) and _is_namedtuple(b)
                and type(a).__name__ == type(b).__name__ and a._fields == b._fields)
    return ((isinstance(a, list) and isinstance(b, list))
            or (isinstance(a, abc.Mapping) and isinstance(b, abc.Mapping))
            or (isinstance(a, tuple) and isinstance(b, tuple)))


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
