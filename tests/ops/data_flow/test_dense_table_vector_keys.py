"""Dense hash tables of vector keys (TF's key shape: the empty key's shape), the
checkpoint names of mutable tables and their MetaGraphDef form
(ops/data_flow/lookup_ops.py). Shapes, results and messages are TensorFlow 2.21's."""
import logging

import numpy as np
import pytest

import tensorweave as tf


def _table(**kw):
    return tf.lookup.experimental.DenseHashTable(
        tf.int64, tf.float32, default_value=kw.pop("default", [0.0, 0.0, 0.0]),
        empty_key=[0, 0], deleted_key=[-1, -1], **kw)


def test_lookup_insert_remove_export(sess):
    table = _table()
    keys = tf.constant([[1, 2], [3, 4]], tf.int64)
    sess.run(table.insert(keys, tf.constant([[1.0, 2, 3], [4, 5, 6]])))
    assert table.lookup(keys).shape.as_list() == [2, 3]
    assert table.lookup(tf.constant([[[1, 2]]], tf.int64)).shape.as_list() == [1, 1, 3]
    fed = tf.placeholder(tf.int64)
    assert table.lookup(fed).shape.ndims is None
    got = sess.run(table.lookup(fed), {fed: [[1, 2], [9, 9], [3, 4]]})
    assert got.tolist() == [[1, 2, 3], [0, 0, 0], [4, 5, 6]]
    assert sess.run(table.lookup(fed), {fed: [[[1, 2]], [[3, 4]]]}).shape == (2, 1, 3)
    exported = table.export()
    assert exported[0].shape.as_list() == [None, 2]
    k, v = sess.run(exported)
    assert sorted(map(tuple, k.tolist())) == [(1, 2), (3, 4)] and v.shape == (2, 3)
    sess.run(table.remove(tf.constant([[3, 4]], tf.int64)))
    assert sess.run(table.size()) == 1
    # a key is the whole vector: (1, 3) is not (1, 2)
    assert sess.run(table.lookup(tf.constant([[1, 3]], tf.int64))).tolist() == [[0, 0, 0]]


@pytest.mark.parametrize("keys,message", [
    ([1, 2, 3], "Input key shape \\[3\\] must end with the table's key shape \\[2\\]"),
    (5, "Input key shape \\[\\] must end with the table's key shape \\[2\\]"),
    ([[0, 0]], "Using the empty_key as a table key is not allowed"),
    ([[-1, -1]], "Using the deleted_key as a table key is not allowed"),
])
def test_lookup_errors(sess, keys, message):
    table = _table()
    fed = tf.placeholder(tf.int64)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(table.lookup(fed), {fed: keys})


def test_insert_errors_and_reserved_keys_at_creation(sess):
    table = _table()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected key shape \\[2, 2\\] "
                                                             "got \\[2\\]"):
        sess.run(table.insert(tf.constant([1, 2], tf.int64), tf.constant([1.0, 2, 3])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty_key as a table key"):
        sess.run(table.insert(tf.constant([[0, 0]], tf.int64), tf.constant([[1.0, 2, 3]])))
    for empty, deleted, message in (([0, 0], [0, 0], "Empty and deleted keys cannot be equal"),
                                    ([0, 0], [0], "must have same shape, got shapes: \\[2\\] "
                                                  "and \\[1\\]")):
        bad = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, 0.0, empty,
                                                    deleted)
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(bad.size())


def test_scalar_values_and_tf_bucket_arrays(sess):
    table = _table(default=0.0)
    keys = tf.constant([[1, 2], [3, 4]], tf.int64)
    sess.run(table.insert(keys, tf.constant([7.0, 8.0])))
    assert sess.run(table.lookup(keys)).tolist() == [7.0, 8.0]
    # TF saves a dense table as its bucket arrays, empty and deleted buckets holding the
    # reserved keys: a restore takes the entries only
    from tensorweave.framework.op_builder import apply_op
    buckets = np.array([[0, 0], [5, 6], [-1, -1], [0, 0]], np.int64)
    sess.run(apply_op("LookupTableImportV2", [table.resource_handle, tf.constant(buckets),
                                              tf.constant([0.0, 2.5, 0.0, 0.0])],
                      name="import"))
    assert sess.run(table.size()) == 1
    assert sess.run(table.lookup(tf.constant([[5, 6], [1, 2]], tf.int64))).tolist() == \
        [2.5, 0.0]


def test_checkpoint_keys_are_the_table_name_without_its_scope(tmp_path):
    # TF names a table's checkpoint entries after the name given to it, not its scope
    with tf.Graph().as_default():
        with tf.name_scope("outer"):
            dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, 0.0, 0, 1,
                                                          name="tbl")
            plain = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
        with tf.Session() as sess:
            sess.run([dense.insert(tf.constant([5], tf.int64), tf.constant([1.5])),
                      plain.insert(tf.constant(["a"]), tf.constant([3], tf.int64))])
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    names = sorted(tf.train.load_checkpoint(path).get_variable_to_shape_map())
    assert names == ["MutableHashTable-keys", "MutableHashTable-values", "tbl-keys",
                     "tbl-values"]


def test_meta_graph_holds_tables_saveables_by_op_name(tmp_path, caplog):
    with tf.Graph().as_default():
        with tf.name_scope("outer"):
            table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1,
                                                            name="vocab")
        with caplog.at_level(logging.WARNING):
            meta = tf.train.export_meta_graph()
        assert not [r for r in caplog.records if "saveable_objects" in r.getMessage()]
        # TF's form: the table op's name
        saveables = meta.collection_def["saveable_objects"]
        assert (saveables.kind, list(saveables.value)) == ("node_list", ["outer/vocab"])
        with tf.Session() as sess:
            sess.run(table.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64)))
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        # the saveable is made again (TF's own import fails on it), so a new Saver saves
        # and restores the table
        assert len(g.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)) == 1
        saver = tf.train.Saver()
        handle = g.get_operation_by_name("outer/vocab").outputs[0]
        from tensorweave.framework.op_builder import apply_op
        size = apply_op("LookupTableSizeV2", [handle], name="size").outputs[0]
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert sess.run(size) == 2
