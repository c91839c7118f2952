"""tf.train.Checkpoint (TF1's CheckpointV1) and tf.train.CheckpointManager in graph mode
(train/checkpoint.py, train/checkpoint_manager.py, train/object_checkpoint.py).

References: a checkpoint TF 2.21 wrote in graph mode for the program of
tests/fixtures/tf1/make_object_checkpoint_fixture.py (its object graph and values), and
keys, messages and manager outcomes recorded from TF 2.21 (TF 2.15 for the Keras model)
as literals.
"""
import importlib.util
import os
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import tensor_bundle
from tensorweave.train import object_checkpoint

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")
TF_CKPT = os.path.join(FIXTURES, "object_checkpoint", "ckpt-2")

# the keys (and shapes) TF 2.21 writes for the fixture's program
TF_KEYS = [
    ("_CHECKPOINTABLE_OBJECT_GRAPH", []),
    ("b/.ATTRIBUTES/VARIABLE_VALUE", [2]),
    ("b/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE", [2]),
    ("b/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE", [2]),
    ("emb/.ATTRIBUTES/VARIABLE_VALUE", [3, 2]),
    ("emb/.OPTIMIZER_SLOT/inner/mom/momentum/.ATTRIBUTES/VARIABLE_VALUE", [3, 2]),
    ("optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE", []),
    ("optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE", []),
    ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", []),
    ("step/.ATTRIBUTES/VARIABLE_VALUE", []),
    ("w/.ATTRIBUTES/VARIABLE_VALUE", [2, 2]),
    ("w/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE", [2, 2]),
    ("w/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE", [2, 2]),
]


def _fixture_program():
    spec = importlib.util.spec_from_file_location(
        "make_object_checkpoint_fixture",
        os.path.join(FIXTURES, "make_object_checkpoint_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build


def _keys(prefix):
    reader = tensor_bundle.open_checkpoint(prefix)
    return sorted((k, list(reader.shape(k))) for k in reader.tensor_names())


def _proto(prefix):
    reader = tensor_bundle.open_checkpoint(prefix)
    return object_checkpoint.parse_proto(
        bytes(reader.read(object_checkpoint.OBJECT_GRAPH_KEY).item()))


def _expected():
    with np.load(os.path.join(FIXTURES, "object_checkpoint", "expected.npz")) as data:
        return {k: data[k] for k in data.files}


def _values_by_name(sess):
    return {v.name.replace(":", "_"): sess.run(v) for v in tf.global_variables()}


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_save_writes_tf_keys_and_object_graph(graph, tmp_path):
    ckpt, train, _ = _fixture_program()(tf)
    train_op = train()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train_op)
        manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
        manager.save()
        path = manager.save()
        values = _values_by_name(sess)
    assert path == os.path.join(str(tmp_path), "ckpt-2")
    assert _keys(path) == TF_KEYS
    # the same object graph, node for node, as TF wrote for this program
    assert _proto(path) == _proto(TF_CKPT)
    # and the same training values as TF computed
    for name, value in _expected().items():
        np.testing.assert_allclose(values[name], value, rtol=1e-6, err_msg=name)


def test_restores_tf_checkpoint_with_deferred_slots(graph):
    ckpt, train, objs = _fixture_program()(tf)
    status = ckpt.restore(TF_CKPT)
    # the optimizers' variables do not exist yet: TF's message names the first one
    with pytest.raises(AssertionError, match=re.escape(
            "Unresolved object in checkpoint (root).optimizer.beta1_power: attributes {")):
        status.assert_consumed()
    status.assert_existing_objects_matched()
    status.assert_nontrivial_match()
    train_op = train()  # makes the slots and beta powers: restored when the ops run
    assert status.assert_consumed() is status
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        values = _values_by_name(sess)
        assert sess.run(ckpt.save_counter) == 2
        sess.run(train_op)  # trains on from the restored state
        assert sess.run(objs["step"]) == 4
    expected = _expected()
    assert sorted(values) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(values[name], value, err_msg=name)


def test_save_counter_state_file_and_write(graph, tmp_path):
    v = tf.Variable(1.5, name="v")
    ckpt = tf.train.Checkpoint(v=v)
    prefix = os.path.join(str(tmp_path), "sub", "ck")
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert ckpt.save(prefix) == prefix + "-1"  # the default session; dirs made
        assert ckpt.save(prefix, session=sess) == prefix + "-2"
        assert ckpt.write(os.path.join(str(tmp_path), "sub", "w")).endswith("sub/w")
        assert sess.run(ckpt.save_counter) == 2
    with open(os.path.join(str(tmp_path), "sub", "checkpoint")) as f:
        assert f.read() == ('model_checkpoint_path: "ck-2"\n'
                            'all_model_checkpoint_paths: "ck-2"\n')
    assert _keys(prefix + "-2") == [("_CHECKPOINTABLE_OBJECT_GRAPH", []),
                                    ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", []),
                                    ("v/.ATTRIBUTES/VARIABLE_VALUE", [])]
    counter = tf.train.load_variable(os.path.join(str(tmp_path), "sub", "w"),
                                     "save_counter/.ATTRIBUTES/VARIABLE_VALUE")
    assert counter == 2 and counter.dtype == np.int64
    assert ckpt.save_counter.name == "save_counter:0"
    assert not ckpt.save_counter.trainable


def test_dict_list_and_shared_dependencies_keys(graph, tmp_path):
    v = tf.Variable(1.0, name="v")
    u = tf.Variable([2.0], name="u")
    opt = tf.train.AdagradOptimizer(0.1)
    train_op = opt.minimize(v * v + tf.reduce_sum(u))
    ckpt = tf.train.Checkpoint(a=v, b=v, d={"x.y/z": u, "k": [v, u]}, o=opt, e=[])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        path = ckpt.save(os.path.join(str(tmp_path), "c"))
    # recorded from TF 2.21: a shared object keeps its first path; '.' and '/' escaped
    assert [k for k, _ in _keys(path)] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH",
        "a/.ATTRIBUTES/VARIABLE_VALUE",
        "a/.OPTIMIZER_SLOT/o/accumulator/.ATTRIBUTES/VARIABLE_VALUE",
        "d/x..y.Sz/.ATTRIBUTES/VARIABLE_VALUE",
        "d/x..y.Sz/.OPTIMIZER_SLOT/o/accumulator/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]


def test_attributes_set_later_are_dependencies(graph, tmp_path):
    ckpt = tf.train.Checkpoint()
    ckpt.extra = tf.Variable(7.0, name="extra")
    ckpt.n = 3  # not trackable: not saved
    with tf.Session() as sess:
        sess.run(ckpt.extra.initializer)
        path = ckpt.save(os.path.join(str(tmp_path), "attr"))
    assert [k for k, _ in _keys(path)] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "extra/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]


def test_restore_runs_in_finalized_graph(graph, tmp_path):
    v = tf.Variable([3.0, 4.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Checkpoint(v=v).save(os.path.join(str(tmp_path), "c"))
    with tf.Graph().as_default() as g:
        v = tf.Variable([0.0, 0.0], name="v")
        ckpt = tf.train.Checkpoint(v=v)
        status = ckpt.restore(path)
        g.finalize()  # as a MonitoredSession does: restoring adds no op
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            status.run_restore_ops(sess)
            assert sess.run(v).tolist() == [3.0, 4.0]
            assert sess.run(ckpt.save_counter) == 1


def test_status_checks_of_mismatched_programs(graph, tmp_path):
    w = tf.Variable([[1.0, 2.0]], name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = tf.train.Checkpoint(w=w).save(os.path.join(str(tmp_path), "c"))
    with tf.Graph().as_default():
        w = tf.Variable([[0.0, 0.0]], name="w")
        extra = tf.Variable(5.0, name="extra")
        status = tf.train.Checkpoint(w=w, extra=extra).restore(path)
        message = ("Found 1 Python objects that were not bound to checkpointed values, "
                   "likely due to changes in the Python program. Showing 1 of 1 unmatched "
                   "objects: [<tf.Variable 'extra:0' shape=() dtype=float32>]")
        for check in (status.assert_consumed, status.assert_existing_objects_matched):
            with pytest.raises(AssertionError) as e:
                check()
            assert str(e.value) == message
        assert status.assert_nontrivial_match() is status
        assert status.expect_partial() is status
        with tf.Session() as sess:
            status.initialize_or_restore(sess)  # restores w, initializes extra
            assert sess.run(w).tolist() == [[1.0, 2.0]]
            assert sess.run(extra) == 5.0
    with tf.Graph().as_default():
        other = tf.Variable([[0.0, 0.0]], name="w")
        status = tf.train.Checkpoint(zz=other).restore(path)
        status.assert_nontrivial_match()  # save_counter matched
        with tf.Session() as sess:
            sess.run(other.initializer)
            status.run_restore_ops()  # the default session
            assert sess.run(other).tolist() == [[0.0, 0.0]]


def test_restore_errors(graph, tmp_path):
    w = tf.Variable([[1.0, 2.0]], name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = tf.train.Checkpoint(w=w).save(os.path.join(str(tmp_path), "c"))
    with tf.Graph().as_default():
        status = tf.train.Checkpoint(w=tf.Variable([[1, 2]], name="w")).restore(path)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
                    "tensor_name = w/.ATTRIBUTES/VARIABLE_VALUE; expected dtype int32 does "
                    "not equal original dtype float")):
                status.run_restore_ops(sess)
    with tf.Graph().as_default():
        status = tf.train.Checkpoint(w=tf.Variable([[1.0, 2.0, 3.0]])).restore(path)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="lhs shape= \\[1,3\\]"):
                status.run_restore_ops(sess)
        with pytest.raises(RuntimeError, match="without a default session"):
            status.run_restore_ops()
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.Checkpoint().restore(os.path.join(str(tmp_path), "missing"))


def test_initialization_only_status(graph):
    v = tf.Variable(2.0, name="v")
    ckpt = tf.train.Checkpoint(v=v)
    status = ckpt.restore(None)
    nothing = "No checkpoint specified (save_path=None); nothing is being restored."
    for check in (status.assert_consumed, status.assert_existing_objects_matched,
                  status.assert_nontrivial_match):
        with pytest.raises(AssertionError, match=re.escape(nothing)):
            check()
    assert status.expect_partial() is status
    with tf.Session() as sess:
        with pytest.raises(AssertionError, match="no restore ops are available"):
            status.run_restore_ops(sess)
        status.initialize_or_restore(sess)
        assert sess.run([v, ckpt.save_counter]) == [2.0, 0]


def test_constructor_errors(graph):
    with pytest.raises(ValueError, match=re.escape(
            "`Checkpoint` was expecting a trackable object (an object derived from "
            "`Trackable`), got 1. If you believe")):
        tf.train.Checkpoint(a=1)
    with pytest.raises(ValueError, match="got Tensor"):
        tf.train.Checkpoint(a=tf.constant(1.0))
    with pytest.raises(TypeError):
        tf.train.Checkpoint(tf.Variable(1.0))
    with pytest.raises(AttributeError, match="save_counter"):
        tf.train.Checkpoint(save_counter=tf.Variable(1.0))
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    with pytest.raises(RuntimeError, match=re.escape(
            'Unable to save checkpoint to "/tmp/x" in graph mode without a default '
            "session. Please use `with tf.Session():` to create a session.")):
        ckpt.write("/tmp/x")


def test_keras_model_built_after_restore(graph, tmp_path):
    def program():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2), tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam(0.1)
        return tf.train.Checkpoint(model=model, optimizer=opt), model, opt

    x = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    ckpt, model, opt = program()
    y = model(x)
    train_op = opt.get_updates(tf.reduce_mean(y * y), model.trainable_weights)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        path = ckpt.save(os.path.join(str(tmp_path), "k"))
        want = sess.run(y)
    # the keys TF 2.15 writes for this program
    assert [k for k, _ in _keys(path)] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH"] + [
        "model/layer_with_weights-%d/%s/%s.ATTRIBUTES/VARIABLE_VALUE" % (i, w, slot)
        for i in (0, 1) for w in ("bias", "kernel")
        for slot in ("", ".OPTIMIZER_SLOT/optimizer/m/", ".OPTIMIZER_SLOT/optimizer/v/")] + [
        "optimizer/%s/.ATTRIBUTES/VARIABLE_VALUE" % n
        for n in ("beta_1", "beta_2", "decay", "iter", "learning_rate")] + [
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]
    with tf.Graph().as_default():
        ckpt, model, opt = program()
        status = ckpt.restore(path)
        status.assert_existing_objects_matched()
        y = model(tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2)))
        with pytest.raises(AssertionError, match=re.escape(
                "Unresolved object in checkpoint (root).optimizer.iter:")):
            status.assert_consumed()
        opt.get_updates(tf.reduce_mean(y * y), model.trainable_weights)
        status.assert_consumed()
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            np.testing.assert_array_equal(sess.run(y), want)
            assert sess.run(opt.iterations) == 1


def test_name_based_restore_of_saver_checkpoint(graph, tmp_path):
    v = tf.Variable(11.0, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = tf.train.Saver([v]).save(sess, os.path.join(str(tmp_path), "saver"))
    with tf.Graph().as_default():
        v = tf.Variable(2.0, name="v")
        u = tf.Variable(3.0, name="u")
        status = tf.train.Checkpoint(v=v).restore(path)
        with pytest.raises(AssertionError, match="Object not restored"):
            status.assert_consumed()
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            assert sess.run(v) == 11.0
            status.assert_consumed()
        status = tf.train.Checkpoint(v=v, u=u).restore(path)
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            assert sess.run([v, u]) == [11.0, 3.0]
            with pytest.raises(AssertionError, match="'u:0'"):
                status.assert_consumed()


# --- CheckpointManager ----------------------------------------------------------------------
def _names(paths):
    return [os.path.basename(p) for p in paths]


def _index_files(directory):
    return sorted(f for f in os.listdir(directory) if f.endswith(".index"))


def test_manager_keeps_max_to_keep_and_recovers(graph, tmp_path):
    d = str(tmp_path)
    step = tf.train.get_or_create_global_step()
    ckpt = tf.train.Checkpoint(step=step)
    manager = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.checkpoints == []
    status = ckpt.restore(manager.latest_checkpoint)
    assert type(status).__name__ == "InitializationOnlyStatus"
    with tf.Session() as sess:
        status.initialize_or_restore(sess)
        saved = [manager.save() for _ in range(3)]
    assert _names(saved) == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert _index_files(d) == ["ckpt-2.index", "ckpt-3.index"]
    assert _names(manager.checkpoints) == ["ckpt-2", "ckpt-3"]
    with open(os.path.join(d, "checkpoint")) as f:
        text = re.sub(r"[0-9]{10}\.[0-9]+", "T", f.read())
    assert text == ('model_checkpoint_path: "ckpt-3"\nall_model_checkpoint_paths: "ckpt-2"\n'
                    'all_model_checkpoint_paths: "ckpt-3"\n'
                    "all_model_checkpoint_timestamps: T\nall_model_checkpoint_timestamps: T\n"
                    "last_preserved_timestamp: T\n")
    # a new manager takes the listed checkpoints over and deletes past its own limit
    recovered = tf.train.CheckpointManager(ckpt, d, max_to_keep=1)
    assert _names([recovered.latest_checkpoint]) == ["ckpt-3"]
    assert _names(recovered.checkpoints) == ["ckpt-2", "ckpt-3"]
    assert recovered.directory == d
    with tf.Session() as sess:
        sess.run([step.initializer, ckpt.save_counter.initializer])
        assert _names([recovered.save()]) == ["ckpt-1"]  # a fresh save_counter
    assert _index_files(d) == ["ckpt-1.index"]


def test_manager_interval_numbers_and_init_fn(graph, tmp_path):
    d = str(tmp_path)
    step = tf.train.get_or_create_global_step()
    increment = tf.assign_add(step, 1)
    ckpt = tf.train.Checkpoint(step=step)
    manager = tf.train.CheckpointManager(ckpt, d, max_to_keep=3, step_counter=step,
                                         checkpoint_interval=2)
    assert manager.checkpoint_interval == 2
    got = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(6):
            saved = manager.save()
            got.append(saved and os.path.basename(saved))
            sess.run(increment)
        # recorded from TF: every second step, then a forced save, then none at the same step
        assert got == ["ckpt-1", None, "ckpt-2", None, "ckpt-3", None]
        assert _names([manager.save(check_interval=False)]) == ["ckpt-4"]
        assert manager.save(check_interval=False) is None
        named = tf.train.CheckpointManager(ckpt, d, 2, checkpoint_name="n")
        assert _names([named.save(checkpoint_number=step)]) == ["n-6"]
        assert _names([named.save(checkpoint_number=100)]) == ["n-100"]
    calls = []
    empty = tf.train.CheckpointManager(ckpt, os.path.join(d, "empty"), max_to_keep=None,
                                       init_fn=lambda: calls.append(1))
    assert empty.restore_or_initialize() is None and calls == [1]
    assert _names([named.restore_or_initialize()]) == ["n-100"]


def test_manager_keep_every_n_hours_and_errors(graph, tmp_path):
    d = str(tmp_path)
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    with pytest.raises(ValueError, match=re.escape(
            "Expected a positive integer or `None` for `max_to_keep`, got 0.")):
        tf.train.CheckpointManager(ckpt, d, max_to_keep=0)
    with pytest.raises(ValueError, match=re.escape(
            "`step_counter` should be passed if `checkpoint_interval` is not None.")):
        tf.train.CheckpointManager(ckpt, d, max_to_keep=2, checkpoint_interval=3)
    with pytest.raises(RuntimeError, match="default session"):
        tf.train.CheckpointManager(ckpt, d, 1).save()
    manager = tf.train.CheckpointManager(ckpt, d, max_to_keep=1,
                                         keep_checkpoint_every_n_hours=1e-9)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            manager.save()
    # older checkpoints past the hours are kept on disk but no longer listed
    assert _index_files(d) == ["ckpt-1.index", "ckpt-2.index", "ckpt-3.index"]
    assert _names(manager.checkpoints) == ["ckpt-3"]


def test_checkpoint_options():
    options = tf.train.CheckpointOptions(experimental_io_device="/job:localhost",
                                         enable_async=True)
    assert options.experimental_io_device == "/job:localhost"
    assert options.enable_async and options.experimental_enable_async_checkpoint
    assert not options.experimental_skip_slot_variables
