"""tf.train.Saver and the checkpoint helpers (OSDI §4.3)."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import checkpoint_format as fmt
from tensorweave.train import saver as saver_module

VALUES = {
    "f32": (np.array([[1.5, -2.0], [3.0, 4.25]], np.float32), tf.float32),
    "i64": (np.array([2 ** 40, -7], np.int64), tf.int64),
    "flag": (np.array([True, False, True]), tf.bool),
    "text": (np.array([b"hello", b"", b"\xff\x00"], dtype=object), tf.string),
    "half": (np.array([0.5, 65504.0], np.float16), tf.float16),
}


def _make(values, zero=False):
    out = {}
    for name, (arr, dt) in values.items():
        init = np.zeros_like(arr) if zero and dt is not tf.string else arr
        if zero and dt is tf.string:
            init = np.array([b"?"] * arr.size, dtype=object).reshape(arr.shape)
        out[name] = tf.Variable(tf.constant(init, dtype=dt), name=name)
    return out


def _save(tmp_path, values=VALUES, **kwargs):
    with tf.Graph().as_default():
        _make(values)
        saver = tf.train.Saver(**kwargs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, str(tmp_path / "model.ckpt"))


def _check_equal(got, want, dt):
    if dt is tf.string:
        assert list(np.asarray(got, dtype=object).reshape(-1)) == list(want.reshape(-1))
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_round_trip_dtypes_into_fresh_graph(tmp_path):
    path = _save(tmp_path)
    assert path == str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        variables = _make(VALUES, zero=True)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            for name, (arr, dt) in VALUES.items():
                _check_equal(sess.run(variables[name]), arr, dt)


def test_graph_structure_and_saver_def(graph):
    tf.Variable(1.0, name="W")
    saver = tf.train.Saver()
    sd = saver.as_saver_def()
    assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name) == (
        "save/Const:0", "save/control_dependency:0", "save/restore_all")
    assert sd.max_to_keep == 5 and sd.version == 2
    types = [op.type for op in graph.get_operations() if op.name.startswith("save/")]
    assert types.count("SaveV2") == 1 and types.count("RestoreV2") == 1
    saver2 = tf.train.Saver()
    assert saver2.as_saver_def().restore_op_name == "save_1/restore_all"


def test_var_list_dict_renames(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable([1.0, 2.0], name="a")
        saver = tf.train.Saver({"renamed/a": a})
        with tf.Session() as sess:
            sess.run(a.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("renamed/a", [2])]
    with tf.Graph().as_default():
        b = tf.Variable([0.0, 0.0], name="b")
        saver = tf.train.Saver({"renamed/a": b})
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(b), [1.0, 2.0])


def test_var_list_list_subset(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="b")
        saver = tf.train.Saver([a])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
    assert [n for n, _ in tf.train.list_variables(path)] == ["a"]


def test_var_list_errors(graph):
    a = tf.Variable(1.0, name="a")
    with pytest.raises(ValueError, match="restored with two names: y"):
        tf.train.Saver({"x": a, "y": a})
    with pytest.raises(ValueError, match="At least two variables have the same name: a"):
        tf.train.Saver([a, a])
    with pytest.raises(TypeError, match="keys must be strings"):
        tf.train.Saver({1: a})
    with pytest.raises(TypeError, match="not a Variable"):
        tf.train.Saver([tf.constant(1.0)])


def test_no_variables(graph):
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    saver = tf.train.Saver(allow_empty=True)
    with tf.Session() as sess:
        assert saver.save(sess, "/nonexistent-dir-xyz/m") is None
        saver.restore(sess, "/nonexistent-dir-xyz/m")  # nothing to restore: a no-op


def _restore_fails(tmp_path, make, error, match):
    """A failing restore raises `error` and leaves every variable unchanged."""
    path = _save(tmp_path, {"W": (np.array([1.0, 2.0], np.float32), tf.float32),
                            "b": (np.array([5.0], np.float32), tf.float32)})
    with tf.Graph().as_default():
        variables = make()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(variables)
            with pytest.raises(error, match=match):
                saver.restore(sess, path)
            after = sess.run(variables)
            for x, y in zip(before, after):
                np.testing.assert_array_equal(x, y)


def test_restore_missing_variable_suggests_close_match(tmp_path):
    _restore_fails(tmp_path, lambda: [tf.Variable([7.0, 7.0], name="Wx"),
                                      tf.Variable([9.0], name="b")],
                   tf.errors.NotFoundError, r"(?s)Key Wx not found in checkpoint.*'W'.*'Wx'")


def test_restore_shape_mismatch(tmp_path):
    _restore_fails(tmp_path, lambda: [tf.Variable([7.0, 7.0, 7.0], name="W"),
                                      tf.Variable([9.0], name="b")],
                   tf.errors.InvalidArgumentError,
                   r"variable 'W' of shape \[3\] from checkpoint tensor 'W' of shape \[2\]")


def test_restore_dtype_mismatch(tmp_path):
    _restore_fails(tmp_path, lambda: [tf.Variable([7, 7], name="W"),
                                      tf.Variable([9.0], name="b")],
                   tf.errors.InvalidArgumentError,
                   "expected dtype int32 does not equal original dtype float32")


def test_raw_restore_op_checks_before_assigning(tmp_path):
    path = _save(tmp_path, {"a": (np.array([1.0], np.float32), tf.float32)})
    with tf.Graph().as_default():
        a = tf.Variable([3.0], name="a")
        tf.Variable([4.0], name="bb")  # a variable without a value in the checkpoint
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sd = saver.as_saver_def()
            with pytest.raises(tf.errors.NotFoundError, match="Key bb not found"):
                sess.run(sd.restore_op_name, {sd.filename_tensor_name: path})
            assert sess.run(a)[0] == 3.0


def test_restore_bad_paths(graph, tmp_path):
    tf.Variable(1.0, name="a")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="Can't load save_path when it is None"):
            saver.restore(sess, None)
        with pytest.raises(ValueError, match="not a valid checkpoint: .*zzz"):
            saver.restore(sess, str(tmp_path / "zzz"))
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            saver.save(sess, str(tmp_path / "no" / "such" / "m"))


def test_max_to_keep_and_state_file(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        inc = v.assign_add(1.0)
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(v.initializer)
            paths = []
            for step in (10, 20, 30):
                sess.run(inc)
                paths.append(saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step))
    assert paths == [str(tmp_path / ("model.ckpt-%d" % s)) for s in (10, 20, 30)]
    assert saver.last_checkpoints == paths[1:]
    files = sorted(os.listdir(tmp_path))
    assert files == ["checkpoint"] + sorted(
        "model.ckpt-%d.%s" % (s, ext) for s in (20, 30)
        for ext in ("data-00000-of-00001", "index", "meta"))
    text = (tmp_path / "checkpoint").read_text()
    assert text == ('model_checkpoint_path: "%s"\nall_model_checkpoint_paths: "%s"\n'
                    'all_model_checkpoint_paths: "%s"\n' % (paths[2], paths[1], paths[2]))
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[2]
    assert state.all_model_checkpoint_paths == paths[1:]
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[2]
    assert tf.train.load_variable(str(tmp_path), "v") == 3.0
    assert tf.train.load_variable(paths[1], "v") == 2.0


def test_keep_checkpoint_every_n_hours(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(saver_module, "_now", lambda: clock[0])
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            for step, t in enumerate([1000.0, 2000.0, 4700.0, 4800.0, 4900.0]):
                clock[0] = t
                saver.save(sess, str(tmp_path / "m"), global_step=step)
    # next keep time starts at 1000 + 3600 = 4600: step 2 (t=4700) is kept forever.
    kept = sorted(f[:-len(".index")] for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert kept == ["m-2", "m-4"]


def test_global_step_variable_and_padding(tmp_path):
    with tf.Graph().as_default():
        gs = tf.Variable(123, dtype=tf.int64, name="global_step", trainable=False)
        saver = tf.train.Saver(pad_step_number=True)
        with tf.Session() as sess:
            sess.run(gs.initializer)
            path = saver.save(sess, str(tmp_path / "m"), global_step=gs)
    assert path == str(tmp_path / "m-00000123")
    assert tf.train.checkpoint_exists(path)
    assert tf.train.load_variable(path, "global_step") == 123


def test_save_relative_paths(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(save_relative_paths=True)
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"), global_step=1)
    assert 'model_checkpoint_path: "m-1"' in (tmp_path / "checkpoint").read_text()
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


def test_latest_checkpoint_missing(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    tf.train.update_checkpoint_state(str(tmp_path), str(tmp_path / "gone"))
    assert tf.train.get_checkpoint_state(str(tmp_path)).model_checkpoint_path == \
        str(tmp_path / "gone")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path))


def test_reader(tmp_path):
    path = _save(tmp_path)
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {k: list(v[0].shape)
                                                  for k, v in VALUES.items()}
    assert reader.get_variable_to_dtype_map()["i64"] is tf.int64
    assert reader.has_tensor("f32") and not reader.has_tensor("nope")
    np.testing.assert_array_equal(reader.get_tensor("i64"), VALUES["i64"][0])
    with pytest.raises(tf.errors.NotFoundError, match="Key f33 not found.*'f32'"):
        reader.get_tensor("f33")
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.NewCheckpointReader(str(tmp_path / "none"))
    assert tf.train.list_variables(path) == sorted((k, list(v[0].shape))
                                                   for k, v in VALUES.items())
    assert tf.train.load_checkpoint(str(tmp_path)).has_tensor("text")


def test_crash_mid_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            first = saver.save(sess, str(tmp_path / "m"), global_step=1)
            sess.run(v.assign([5.0, 6.0]))
            real_replace = os.replace

            def crash(src, dst):
                if dst.endswith(".index"):
                    raise OSError(28, "No space left on device (simulated)")
                real_replace(src, dst)
            monkeypatch.setattr(fmt.os, "replace", crash)
            with pytest.raises(tf.errors.ResourceExhaustedError, match="simulated"):
                saver.save(sess, str(tmp_path / "m"), global_step=2)
            monkeypatch.setattr(fmt.os, "replace", real_replace)
            assert tf.train.latest_checkpoint(str(tmp_path)) == first
            assert not tf.train.checkpoint_exists(str(tmp_path / "m-2"))
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_corrupted_checkpoint_data_loss(tmp_path):
    path = _save(tmp_path, {"W": (np.arange(4, dtype=np.float32), tf.float32)})
    data = tmp_path / "model.ckpt.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[3] ^= 0x10
    data.write_bytes(bytes(raw))
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros(4, np.float32), name="W")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(w.initializer)
            with pytest.raises(tf.errors.DataLossError, match="tensor 'W'"):
                saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), np.zeros(4))


def test_reshape(tmp_path):
    path = _save(tmp_path, {"W": (np.arange(6, dtype=np.float32).reshape(2, 3), tf.float32)})
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros((3, 2), np.float32), name="W")
        saver = tf.train.Saver(reshape=True)
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(3, 2))


def test_sharded_one_save_per_device(tmp_path):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            a = tf.Variable([1.0], name="a")
        with tf.device("/cpu:1"):
            b = tf.Variable([2, 3], name="b")
        saver = tf.train.Saver(sharded=True)
        assert [op.type for op in g.get_operations()].count("SaveV2") == 2
        # the SaverDef names TF writes for a sharded saver (recorded from TF)
        assert (saver.saver_def.filename_tensor_name, saver.saver_def.save_tensor_name,
                saver.saver_def.restore_op_name) == ("save/Const:0", "save/Identity:0",
                                                     "save/restore_all")
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"), global_step=5)
            sess.run([a.assign([0.0]), b.assign([0, 0])])
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(a), [1.0])
            np.testing.assert_array_equal(sess.run(b), [2, 3])
    files = sorted(f for f in os.listdir(tmp_path) if f.startswith("m-5"))
    assert files == ["m-5.data-00000-of-00002", "m-5.data-00001-of-00002", "m-5.index",
                     "m-5.meta"]


def test_saveable_objects_collection(tmp_path):
    class Spec:
        def __init__(self, tensor, name):
            self.tensor, self.name, self.slice_spec = tensor, name, ""

    class Saveable:
        def __init__(self, var):
            self.var = var
            self.name = "custom"
            self.specs = [Spec(lambda: var.read_value() * 2.0, "custom/doubled")]

        def restore(self, restored_tensors, restored_shapes):
            return self.var.assign(restored_tensors[0] / 2.0)

    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v", collections=[])
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, Saveable(v))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
            assert tf.train.load_variable(path, "custom/doubled") == 6.0
            sess.run(v.assign(0.0))
            saver.restore(sess, path)
            assert sess.run(v) == 3.0


def test_recover_last_checkpoints(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(v.initializer)
            paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(2)]
        saver2 = tf.train.Saver(max_to_keep=2)
        saver2.recover_last_checkpoints(paths + [str(tmp_path / "gone")])
        assert saver2.last_checkpoints == paths
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver2.save(sess, str(tmp_path / "m"), global_step=2)
        assert not tf.train.checkpoint_exists(paths[0])
        saver2.set_last_checkpoints_with_time([(paths[1], 1.0)])
        assert saver2.last_checkpoints == [paths[1]]


def test_recovered_checkpoints_beyond_max_to_keep_go_one_per_save(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=5)
        with tf.Session() as sess:
            sess.run(v.initializer)
            paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
            one = tf.train.Saver(max_to_keep=1)
            one.recover_last_checkpoints(paths)
            newest = one.save(sess, str(tmp_path / "m"), global_step=9)
        assert one.last_checkpoints == paths[1:] + [newest]  # TF drops one per save
        assert [tf.train.checkpoint_exists(p) for p in paths] == [False, True, True]


def test_unsupported_arguments(graph):
    tf.Variable(1.0)
    with pytest.raises(NotImplementedError, match="write_version"):
        tf.train.Saver(write_version=3)  # V1 (1) and V2 (2) only
    saver = tf.train.Saver(defer_build=True)
    with tf.Session() as sess:
        with pytest.raises(RuntimeError, match="build"):
            saver.save(sess, "m")


def test_save_makes_one_missing_directory_level(tmp_path):
    # TF's single-file save creates a fresh train_dir; two missing levels, or a sharded
    # save, raise
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = tf.train.Saver().save(sess, str(tmp_path / "new" / "model"), global_step=3)
            assert path == str(tmp_path / "new" / "model-3")
            assert tf.train.latest_checkpoint(str(tmp_path / "new")) == path
            with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
                tf.train.Saver().save(sess, str(tmp_path / "a" / "b" / "model"))
            with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
                tf.train.Saver(sharded=True).save(sess, str(tmp_path / "sh" / "model"))


def test_an_unparseable_checkpoint_state_file_is_ignored(tmp_path, caplog):
    (tmp_path / "checkpoint").write_text("garbage ::: text")
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert "Checkpoint ignored" in caplog.text
    (tmp_path / "checkpoint").write_text('all_model_checkpoint_paths: "m-1"\n')
    with pytest.raises(ValueError, match="Invalid checkpoint state"):  # parses, names none
        tf.train.get_checkpoint_state(str(tmp_path))
    tf.train.update_checkpoint_state(str(tmp_path), str(tmp_path / "m-1"))
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.last_preserved_timestamp == 0.0  # proto3's unset float
    assert "last_preserved_timestamp" not in str(state)


def test_save_into_a_file_as_directory_is_a_value_error(graph, tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    (tmp_path / "file").write_text("x")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="Parent directory of .*file/m doesn't exist, "
                                             "can't save"):
            saver.save(sess, str(tmp_path / "file" / "m"))


@pytest.mark.parametrize("as_dict", [False, True])
def test_var_list_may_name_a_variable_by_its_tensor(tmp_path, as_dict):
    # TF1: "v:0" is the reference variable's own tensor, accepted in a list or a dict
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v")
        handle = g.get_tensor_by_name("v:0")
        saver = tf.train.Saver({"x": handle} if as_dict else [handle])
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
            sess.run(v.assign([7.0, 7.0]))
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    assert tf.train.list_variables(path) == [("x" if as_dict else "v", [2])]


def test_var_list_dict_of_a_plain_tensor_is_a_type_error(graph):
    tf.Variable(1.0, name="v")
    with pytest.raises(TypeError, match="names_to_saveables must be a dict mapping string "
                                        "names to Tensors/Variables. Not a variable"):
        tf.train.Saver({"t": tf.constant([5.0])})


def test_restore_from_what_is_no_checkpoint(tmp_path):
    # TF 2.21: a directory or another file at save_path "exists" (TF's TF1-checkpoint
    # test), and opening it as a checkpoint table is a DataLossError; an index file is
    # a table without the variables, a NotFoundError led by TF's restore hint
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
            (tmp_path / "junk").write_text("xxxxxxxx")
            for bad in [str(tmp_path), str(tmp_path / "junk"),
                        path + ".data-00000-of-00001"]:
                assert tf.train.checkpoint_exists(bad)
                with pytest.raises(tf.errors.DataLossError,
                                   match="Unable to open table file .*perhaps your file is "
                                         "in a different file format"):
                    saver.restore(sess, bad)
            with pytest.raises(tf.errors.NotFoundError,
                               match="^Restoring from checkpoint failed. This is most likely "
                                     "due to a Variable name"):
                saver.restore(sess, path + ".index")
    with pytest.raises(tf.errors.DataLossError, match="Unable to open table file .*junk"):
        tf.train.list_variables(str(tmp_path / "junk"))
