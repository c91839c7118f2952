"""Partitioned variables (OSDI 2016 §4.2): the partitioners (their lists as real TF 2.21's
tf.compat.v1 returns them), get_variable(partitioner=...) and PartitionedVariable, the
shards' placement by replica_device_setter, and checkpoints in TF's slice format (3
shards restore into 5 shards or one variable; a checkpoint written by real TF restores)."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.state.partitioned_variables import PartitionedVariable

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "fixtures", "tf1", "partitioned", "model.ckpt")
FIX_EMB = np.arange(14, dtype=np.float32).reshape(7, 2) / 4      # see the fixture's script
FIX_COLS = np.arange(15, dtype=np.float64).reshape(3, 5) - 7


# --- partitioners: the lists real TF returns ---------------------------------------------
PARTITIONERS = [
    lambda: tf.fixed_size_partitioner(3),
    lambda: tf.min_max_variable_partitioner(),
    lambda: tf.min_max_variable_partitioner(max_partitions=4),
    lambda: tf.min_max_variable_partitioner(max_partitions=8, axis=1, min_slice_size=1000),
    lambda: tf.variable_axis_size_partitioner(1000),
    lambda: tf.variable_axis_size_partitioner(4096, max_shards=3),
    lambda: tf.variable_axis_size_partitioner(100000, axis=1),
]
# shape, dtype -> one list per partitioner above (from TF 2.21, tf.compat.v1)
EXPECTED = [
    ([10, 3], tf.float32, [[3, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]]),
    ([1000, 64], tf.float32, [[3, 1], [1, 1], [1, 1], [1, 8], [334, 1], [3, 1], [1, 3]]),
    ([1000, 64], tf.float64, [[3, 1], [1, 1], [2, 1], [1, 8], [1000, 1], [3, 1], [1, 6]]),
    ([1000, 64], tf.string, [[3, 1], [1, 1], [4, 1], [1, 8], [1000, 1], [3, 1], [1, 11]]),
    ([1000, 64], tf.int8, [[3, 1], [1, 1], [1, 1], [1, 8], [67, 1], [3, 1], [1, 1]]),
    ([100000, 64], tf.float32, [[3, 1], [1, 1], [4, 1], [1, 8], [33334, 1], [3, 1], [1, 64]]),
    ([300000, 16], tf.float64, [[3, 1], [1, 1], [4, 1], [1, 8], [42858, 1], [3, 1], [1, 16]]),
    ([300000, 16], tf.int8, [[3, 1], [1, 1], [4, 1], [1, 8], [4839, 1], [3, 1], [1, 16]]),
    ([3, 5000], tf.float64, [[3, 1], [1, 1], [1, 1], [1, 8], [3, 1], [3, 1], [1, 2]]),
    ([1, 1], tf.float32, [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]]),
]


@pytest.mark.parametrize("shape,dtype,expected", EXPECTED)
def test_partitioners_match_tensorflow(shape, dtype, expected):
    got = [list(make()(shape=tf.TensorShape(shape), dtype=dtype)) for make in PARTITIONERS]
    assert got == expected


def test_partitioners_on_other_ranks():
    shape = tf.TensorShape([20, 30, 40])
    assert tf.fixed_size_partitioner(4, axis=1)(shape=shape, dtype=tf.float32) == [1, 4, 1]
    assert tf.min_max_variable_partitioner(4)(shape=shape, dtype=tf.string) == [2, 1, 1]
    assert tf.variable_axis_size_partitioner(100000, axis=2)(
        shape=shape, dtype=tf.string) == [1, 1, 4]
    assert tf.fixed_size_partitioner(3)(shape=tf.TensorShape([7]), dtype=tf.int8) == [3]
    # never more shards than rows
    assert tf.fixed_size_partitioner(5)(shape=tf.TensorShape([2, 3])) == [2, 1]


def test_partitioner_errors():
    with pytest.raises(ValueError, match="max_shard_bytes is -1"):
        tf.variable_axis_size_partitioner(-1)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        tf.variable_axis_size_partitioner(10, max_shards=-2)
    with pytest.raises(ValueError, match="shape is not fully defined"):
        tf.variable_axis_size_partitioner(10)(shape=tf.TensorShape([None, 4]),
                                              dtype=tf.float32)
    with pytest.raises(ValueError, match="shape is not a TensorShape"):
        tf.variable_axis_size_partitioner(10)(shape=[4, 4], dtype=tf.float32)
    with pytest.raises(ValueError, match="Cannot partition variable along axis 3 when "
                                         "shape is only"):
        tf.min_max_variable_partitioner(axis=3)(shape=tf.TensorShape([4, 4]),
                                                dtype=tf.float32)


# --- get_variable(partitioner=...) ---------------------------------------------------------
def test_get_variable_with_a_partitioner(sess):
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
        v = tf.get_variable("w", [10, 3], initializer=tf.random_normal_initializer())
    assert isinstance(v, PartitionedVariable)
    assert v.name == "emb/w" and v.dtype == tf.float32
    assert v.shape.as_list() == [10, 3] and v.get_shape().as_list() == [10, 3]
    assert len(v) == 3 and v._get_partitions() == [3, 1] == v.get_partitions()
    shards = list(v)
    assert shards == v._get_variable_list() == v.get_variable_list()
    assert all(isinstance(s, tf.Variable) for s in shards)
    assert [s.name for s in shards] == ["emb/w/part_0:0", "emb/w/part_1:0", "emb/w/part_2:0"]
    assert [s.shape.as_list() for s in shards] == [[4, 3], [3, 3], [3, 3]]
    infos = [s._get_save_slice_info() for s in shards]
    assert all(isinstance(i, tf.Variable.SaveSliceInfo) for i in infos)
    assert [(i.full_name, i.full_shape, i.var_offset, i.var_shape) for i in infos] == [
        ("emb/w", [10, 3], [0, 0], [4, 3]), ("emb/w", [10, 3], [4, 0], [3, 3]),
        ("emb/w", [10, 3], [7, 0], [3, 3])]
    assert [i.spec for i in infos] == ["10 3 0,4:0,3", "10 3 4,3:0,3", "10 3 7,3:0,3"]
    # the collections hold the shards, not the partitioned variable
    assert tf.global_variables() == shards == tf.trainable_variables()
    whole = v.as_tensor()
    assert whole.name == "emb/w:0" and whole.op.type == "Identity"
    assert whole.op.inputs[0].name == "emb/w/ConcatPartitions/concat:0"
    assert whole.shape.as_list() == [10, 3]
    product = tf.matmul(tf.ones([2, 10]), v)
    assert product.shape.as_list() == [2, 3]
    sess.run(tf.global_variables_initializer())
    parts = sess.run(shards)
    np.testing.assert_array_equal(sess.run(whole), np.concatenate(parts))
    np.testing.assert_allclose(sess.run(product), np.ones([2, 10]) @ np.concatenate(parts),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(v)), np.concatenate(parts))


def test_reuse_returns_the_same_partitioned_variable(graph):
    with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(3)):
        v = tf.get_variable("w", [10, 3])
    with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(3)):
        assert tf.get_variable("w", [10, 3]) is v
    with tf.variable_scope("s", reuse=True):          # no partitioner needed to reuse
        assert tf.get_variable("w", [10, 3]) is v
    with tf.variable_scope("s", reuse=tf.AUTO_REUSE, partitioner=tf.fixed_size_partitioner(3)):
        assert tf.get_variable("w", [10, 3]) is v
    assert len(tf.global_variables()) == 3


def test_reuse_errors(graph):
    p3 = tf.fixed_size_partitioner(3)
    with tf.variable_scope("s", partitioner=p3):
        tf.get_variable("w", [10, 3])
    with pytest.raises(ValueError, match="specified partitions \\[2, 1\\] and found "
                                         "partitions \\[3, 1\\]"):
        with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(2)):
            tf.get_variable("w", [10, 3])
    with pytest.raises(ValueError, match="Partitioned variable with name s/w already exists"):
        with tf.variable_scope("s", partitioner=p3):
            tf.get_variable("w", [10, 3])
    with pytest.raises(ValueError, match="but specified shape \\(10, 4\\)"):
        with tf.variable_scope("s", reuse=True, partitioner=p3):
            tf.get_variable("w", [10, 4])
    with pytest.raises(ValueError, match="PartitionedVariable s/u does not exist"):
        with tf.variable_scope("s", reuse=True, partitioner=p3):
            tf.get_variable("u", [10, 3])
    tf.get_variable("plain", [6, 2])
    with pytest.raises(ValueError, match="unpartitioned version of the variable was found: "
                                         "plain"):
        tf.get_variable("plain", [6, 2], partitioner=p3)


def test_bad_shapes_and_partitioner_results(graph):
    with pytest.raises(ValueError, match="must be fully defined, but instead was \\(\\?, 3\\)"):
        tf.get_variable("u", [None, 3], partitioner=tf.fixed_size_partitioner(3),
                        validate_shape=False)
    with pytest.raises(ValueError, match="Can only slice a variable along one dimension"):
        tf.get_variable("a", [4, 3], partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match="does not match the Variable's rank: \\[2\\]"):
        tf.get_variable("b", [4, 3], partitioner=lambda shape, dtype: [2])
    with pytest.raises(ValueError, match="zero partitions for some axes: \\[0, 1\\]"):
        tf.get_variable("c", [4, 3], partitioner=lambda shape, dtype: [0, 1])
    with pytest.raises(ValueError, match="Partitioner must be callable"):
        tf.get_variable("d", [4, 3], partitioner=3)
    # a scalar is never partitioned
    s = tf.get_variable("scalar", [], partitioner=tf.fixed_size_partitioner(3))
    assert isinstance(s, tf.Variable) and s.name == "scalar:0"


def test_uneven_shards_along_axis_1_and_initial_values(sess):
    full = np.arange(33, dtype=np.float64).reshape(3, 11)
    v = tf.get_variable("cols", initializer=tf.constant(full),
                        partitioner=tf.fixed_size_partitioner(4, axis=1))
    assert v.dtype == tf.float64 and v._partition_axes() == [1]
    assert [s.shape.as_list() for s in v] == [[3, 3], [3, 3], [3, 3], [3, 2]]
    assert [s._get_save_slice_info().spec for s in v] == [
        "3 11 0,3:0,3", "3 11 0,3:3,3", "3 11 0,3:6,3", "3 11 0,3:9,2"]
    b = tf.get_variable("b", [10], partitioner=tf.fixed_size_partitioner(4),
                        initializer=tf.ones_initializer())
    assert [s.shape.as_list() for s in b] == [[3], [3], [2], [2]]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(v.as_tensor()), full)
    np.testing.assert_array_equal(sess.run(list(v))[3], full[:, 9:])
    np.testing.assert_array_equal(sess.run(b.as_tensor()), np.ones(10, np.float32))


def test_initializers_are_told_the_full_shape(sess):
    seen = []

    def init(shape, dtype=None, partition_info=None):
        seen.append((list(shape), list(partition_info.full_shape),
                     list(partition_info.var_offset),
                     partition_info.single_offset(list(shape))))
        return tf.fill(shape, float(partition_info.var_offset[0]))

    v = tf.get_variable("w", [5, 2], initializer=init, partitioner=tf.fixed_size_partitioner(2))
    assert seen == [([3, 2], [5, 2], [0, 0], 0), ([2, 2], [5, 2], [3, 0], 3)]
    # glorot_uniform (the default) takes its fans from the full shape, as in TF1
    big = tf.get_variable("big", [600, 2], partitioner=tf.fixed_size_partitioner(3))
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(v.as_tensor())[:, 0], [0, 0, 0, 3, 3])
    limit = np.sqrt(6.0 / (600 + 2))
    values = sess.run(big.as_tensor())
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.8 * limit


def test_partitioned_variable_assign(sess):
    v = tf.get_variable("w", [5, 2], partitioner=tf.fixed_size_partitioner(2),
                        initializer=tf.zeros_initializer())
    full = np.arange(10, dtype=np.float32).reshape(5, 2)
    ops = v.assign(full)
    assert isinstance(ops, list) and len(ops) == 2
    sess.run(tf.global_variables_initializer())
    sess.run(ops)
    sess.run(v.assign_add(np.ones([5, 2], np.float32)))
    np.testing.assert_array_equal(sess.run(v.as_tensor()), full + 1)
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type "
                                         "'int32'"):
        tf.convert_to_tensor(v, dtype=tf.int32)


def test_create_partitioned_variables(sess):
    shards = tf.create_partitioned_variables([7, 2], [3, 1], tf.constant_initializer(2.0))
    assert [s.name for s in shards] == ["PartitionedVariable/part_0:0",
                                        "PartitionedVariable/part_1:0",
                                        "PartitionedVariable/part_2:0"]
    assert [s.shape.as_list() for s in shards] == [[3, 2], [2, 2], [2, 2]]
    with pytest.raises(ValueError, match="must have the length"):
        tf.create_partitioned_variables([7, 2], [3], tf.zeros_initializer())
    sess.run(tf.global_variables_initializer())
    assert float(sess.run(shards[2]).sum()) == 8.0


def test_shards_are_spread_over_ps_tasks_round_robin(graph):
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        v = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
        other = tf.get_variable("other", [4])
    assert [s.device for s in v] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2"]
    assert other.device == "/job:ps/task:0"
    assert [s.op.type for s in v] == ["VarHandleOp"] * 3


# --- checkpoints ---------------------------------------------------------------------------
FULL = np.arange(33, dtype=np.float32).reshape(11, 3)


def _save(directory, shards, write_version):
    with tf.Graph().as_default():
        part = tf.fixed_size_partitioner(shards) if shards else None
        tf.get_variable("emb", initializer=tf.constant(FULL), partitioner=part)
        saver = tf.train.Saver(write_version=write_version)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, os.path.join(directory, "model.ckpt"),
                              write_meta_graph=False)


def _restore(prefix, shards, name="emb", shape=(11, 3), dtype=tf.float32):
    with tf.Graph().as_default():
        part = tf.fixed_size_partitioner(shards) if shards else None
        v = tf.get_variable(name, list(shape), dtype=dtype, partitioner=part)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            return sess.run(tf.convert_to_tensor(v)), sess.run(list(v) if shards else [v])


@pytest.mark.parametrize("write_version", [None, tf.train.SaverDef.V2])
def test_checkpoint_of_shards_is_one_logical_variable(tmp_path, write_version):
    prefix = _save(str(tmp_path), 3, write_version)
    assert tf.train.list_variables(prefix) == [("emb", [11, 3])]
    reader = tf.train.load_checkpoint(prefix)
    assert reader.get_variable_to_shape_map() == {"emb": [11, 3]}
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "emb"), FULL)
    # 3 shards -> 5 shards, -> one variable
    whole, parts = _restore(prefix, 5)
    np.testing.assert_array_equal(whole, FULL)
    assert [p.shape[0] for p in parts] == [3, 2, 2, 2, 2]
    np.testing.assert_array_equal(parts[1], FULL[3:5])
    whole, _ = _restore(prefix, None)
    np.testing.assert_array_equal(whole, FULL)


def test_unpartitioned_checkpoint_restores_into_shards(tmp_path):
    prefix = _save(str(tmp_path), None, tf.train.SaverDef.V2)
    whole, parts = _restore(prefix, 4)
    np.testing.assert_array_equal(whole, FULL)
    np.testing.assert_array_equal(parts[3], FULL[9:])


def test_saver_var_list_forms(tmp_path):
    with tf.Graph().as_default():
        v = tf.get_variable("emb", initializer=tf.constant(FULL),
                            partitioner=tf.fixed_size_partitioner(3))
        by_object = tf.train.Saver([v])
        by_name = tf.train.Saver({"table": v})
        by_list = tf.train.Saver({"shards": list(v)})
        with pytest.raises(ValueError, match="Slices must all be from the same tensor"):
            tf.train.Saver({"x": [list(v)[0], tf.get_variable("plain", [2])]})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths = [s.save(sess, str(tmp_path / n), write_meta_graph=False)
                     for s, n in ((by_object, "a"), (by_name, "b"), (by_list, "c"))]
    assert [tf.train.list_variables(p) for p in paths] == [
        [("emb", [11, 3])], [("table", [11, 3])], [("shards", [11, 3])]]
    np.testing.assert_array_equal(_restore(paths[1], 2, name="table")[0], FULL)


def test_restore_checks_the_full_shape(tmp_path):
    prefix = _save(str(tmp_path), 3, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape in shape_and_slice spec "
                       "\\[12,3\\] does not match the shape stored in checkpoint: \\[11,3\\]"):
        _restore(prefix, 3, shape=(12, 3))


@pytest.mark.parametrize("emb_shards,cols_shards", [(3, 2), (2, 3), (4, 1), (None, None)])
def test_restores_a_checkpoint_written_by_tensorflow(emb_shards, cols_shards):
    assert tf.train.list_variables(FIXTURE) == [("emb", [7, 2]), ("scope/cols", [3, 5])]
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [7, 2], partitioner=tf.fixed_size_partitioner(emb_shards)
                              if emb_shards else None)
        with tf.variable_scope("scope"):
            cols = tf.get_variable("cols", [3, 5], dtype=tf.float64,
                                   partitioner=tf.fixed_size_partitioner(cols_shards, axis=1)
                                   if cols_shards else None)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, FIXTURE)
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), FIX_EMB)
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(cols)), FIX_COLS)


@pytest.mark.parametrize("mapping", [
    lambda emb: {"emb": "emb", "scope/": "scope/"}, lambda emb: {"emb": emb,
                                                                "scope/cols": "scope/cols"},
    lambda emb: {"emb": list(emb), "scope/": "scope/"}, lambda emb: {"/": "/"}])
def test_init_from_checkpoint_fills_shards_with_their_slices(mapping):
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [7, 2], partitioner=tf.fixed_size_partitioner(2))
        with tf.variable_scope("scope"):
            cols = tf.get_variable("cols", [3, 5], tf.float64,
                                   partitioner=tf.fixed_size_partitioner(3, axis=1))
        tf.train.init_from_checkpoint(FIXTURE, mapping(emb))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(emb.as_tensor()), FIX_EMB)
            np.testing.assert_array_equal(sess.run(cols.as_tensor()), FIX_COLS)


def test_init_from_checkpoint_checks_the_full_shape():
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [8, 2], partitioner=tf.fixed_size_partitioner(2))
        with pytest.raises(ValueError, match="Shape of variable emb \\(\\[8, 2\\]\\) "
                                             "doesn't match"):
            tf.train.init_from_checkpoint(FIXTURE, {"emb": emb})


@pytest.mark.parametrize("write_version", [None, tf.train.SaverDef.V2])
def test_sharded_saver_joins_the_slices_saved_on_each_device(tmp_path, write_version):
    placed = []

    def two_cpus(op):     # the shard variables alternate between CPU:0 and CPU:1
        if op.type != "VarHandleOp":
            return ""
        placed.append("/cpu:%d" % (len(placed) % 2))
        return placed[-1]

    with tf.Graph().as_default():
        with tf.device(two_cpus):
            v = tf.get_variable("emb", initializer=tf.constant(FULL),
                                partitioner=tf.fixed_size_partitioner(3))
        assert [s.device for s in v] == ["/cpu:0", "/cpu:1", "/cpu:0"]
        saver = tf.train.Saver(sharded=True, write_version=write_version)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    assert tf.train.list_variables(prefix) == [("emb", [11, 3])]
    assert os.path.exists(prefix + ".data-00001-of-00002")       # one data file per device
    whole, _ = _restore(prefix, 2)
    np.testing.assert_array_equal(whole, FULL)


def test_gradients_with_respect_to_a_partitioned_variable_raise_as_in_tf1(graph):
    pv = tf.get_variable("pv", [6, 2], partitioner=tf.fixed_size_partitioner(2))
    loss = tf.reduce_sum(pv.as_tensor())
    with pytest.raises(NotImplementedError, match="PartitionedVariable doesn't support "
                                                  "being used as a reference"):
        tf.gradients(loss, pv)
    grads = tf.gradients(loss, list(pv))  # its shards are what one differentiates
    assert len(grads) == 2 and all(g is not None for g in grads)
