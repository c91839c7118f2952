"""tf.nest (framework/nest.py): dicts in sorted key order, None a leaf, composites walked
into with expand_composites (the same results as TF 2.21 for these cases)."""
import collections

import numpy as np
import pytest

import tensorweave as tf

Point = collections.namedtuple("Point", "x y")


def test_flatten_and_pack_round_trip():
    structure = {"b": [1, (2, None)], "a": Point(3, {"z": 4, "y": 5})}
    flat = tf.nest.flatten(structure)
    assert flat == [3, 5, 4, 1, 2, None]
    again = tf.nest.pack_sequence_as(structure, [10 * v if v else v for v in flat])
    assert again == {"b": [10, (20, None)], "a": Point(30, {"z": 40, "y": 50})}
    assert type(again["a"]) is Point
    assert tf.nest.flatten(7) == [7] and tf.nest.pack_sequence_as(7, [8]) == 8
    with pytest.raises(ValueError, match="Structure had 2 elements, but flat_sequence had 3"):
        tf.nest.pack_sequence_as([1, 2], [1, 2, 3])


def test_is_nested_and_assert_same_structure(graph):
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    assert tf.nest.is_nested([1]) and tf.nest.is_nested({}) and tf.nest.is_nested(Point(1, 2))
    assert not tf.nest.is_nested("ab") and not tf.nest.is_nested(sp)
    tf.nest.assert_same_structure({"a": [1, 2]}, {"a": [3, 4]})
    with pytest.raises(TypeError, match="same sequence type"):
        tf.nest.assert_same_structure([1], (1,))
    tf.nest.assert_same_structure([1], (1,), check_types=False)
    with pytest.raises(ValueError, match="same number of elements"):
        tf.nest.assert_same_structure([1, 2], [1])
    with pytest.raises(ValueError, match="same set of keys"):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})


def test_map_structure(graph):
    assert tf.nest.map_structure(lambda a, b: a + b, {"a": 1, "b": (2, 3)},
                                 {"a": 10, "b": (20, 30)}) == {"a": 11, "b": (22, 33)}
    assert tf.nest.map_structure(lambda a, b: a, [1], (1,), check_types=False) == [1]
    with pytest.raises(ValueError, match="at least one structure"):
        tf.nest.map_structure(lambda: 0)


def test_composites_are_walked_into_when_asked(sess):
    sp = tf.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0], [2, 2])
    slices = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]))
    structure = {"s": sp, "i": slices}
    assert tf.nest.flatten(structure) == [slices, sp]
    flat = tf.nest.flatten(structure, expand_composites=True)
    assert flat == [slices.values, slices.indices, sp.indices, sp.values, sp.dense_shape]
    doubled = tf.nest.map_structure(lambda t: t * 2 if t.dtype == tf.float32 else t,
                                    structure, expand_composites=True)
    assert isinstance(doubled["s"], tf.SparseTensor)
    assert isinstance(doubled["i"], tf.IndexedSlices) and doubled["i"].dense_shape is None
    got = sess.run(doubled["s"])
    np.testing.assert_array_equal(got.values, [2.0, 4.0])
    assert got.indices.tolist() == [[0, 0], [1, 1]]
    np.testing.assert_array_equal(sess.run(doubled["i"].values), [[2.0, 4.0]])


def test_pack_sequence_as_keeps_the_dicts_key_order():
    """Leaves are in sorted-key order; the rebuilt dict has the template's order (TF)."""
    packed = tf.nest.pack_sequence_as({"b": 1, "a": 2}, [10, 20])
    assert list(packed.items()) == [("b", 20), ("a", 10)]
    d = collections.defaultdict(list)
    d["z"], d["c"] = 1, 2
    rebuilt = tf.nest.pack_sequence_as(d, [5, 6])
    assert list(rebuilt.items()) == [("z", 6), ("c", 5)] and rebuilt.default_factory is list


def test_flat_lists_and_tuples_of_leaves(graph):
    """A list or tuple of leaves takes nest's shortcut (nest.is_flat): the same results
    as the general walk, composites walked into only when asked."""
    from tensorweave.framework import nest
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    t = tf.constant(1.0)
    assert nest.is_flat([t, 1, None]) and nest.is_flat((t,)) and nest.is_flat([])
    assert nest.is_flat([sp, t]) and not nest.is_flat([sp, t], expand_composites=True)
    assert not nest.is_flat([t, [t]]) and not nest.is_flat(Point(t, t))
    assert tf.nest.flatten([sp, t]) == [sp, t]
    assert tf.nest.flatten([sp, t], expand_composites=True) == [
        sp.indices, sp.values, sp.dense_shape, t]
    packed = tf.nest.pack_sequence_as((sp, t), [sp.indices, sp.values * 2, sp.dense_shape, t],
                                      expand_composites=True)
    assert type(packed) is tuple and isinstance(packed[0], tf.SparseTensor)
    assert tf.nest.pack_sequence_as((1, 2), [3, 4]) == (3, 4)
    assert tf.nest.pack_sequence_as([1, 2], (3, 4)) == [3, 4]
    with pytest.raises(ValueError, match="Structure had 2 elements, but flat_sequence had 1"):
        tf.nest.pack_sequence_as([1, 2], [3])

    class Leaf:  # a type nest has not seen yet: the general walk, then the shortcut
        pass
    leaves = [Leaf(), Leaf()]
    assert tf.nest.flatten(leaves) == leaves and nest.is_flat(leaves)
