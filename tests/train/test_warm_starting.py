"""init_from_checkpoint, warm_start and VocabInfo."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def ckpt(tmp_path):
    """A checkpoint with old/w (2x3), old/b (3,) and step (int64)."""
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("w", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
            tf.get_variable("b", initializer=np.array([7.0, 8.0, 9.0], np.float32))
        tf.Variable(np.int64(42), name="step")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, str(tmp_path / "model.ckpt"))


def test_scope_to_scope_and_single_names(graph, ckpt, tmp_path):
    with tf.variable_scope("new"):
        w = tf.get_variable("w", [2, 3])
        b = tf.get_variable("b", [3])
    other = tf.get_variable("other", [3])
    step = tf.Variable(np.int64(0), name="count")
    untouched = tf.get_variable("untouched", initializer=1.5)
    tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/", "old/b": other,
                                                  "step": step})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([w, b, other, step, untouched])
    np.testing.assert_array_equal(got[0], np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(got[1], [7.0, 8.0, 9.0])
    np.testing.assert_array_equal(got[2], [7.0, 8.0, 9.0])
    assert got[3] == 42 and got[3].dtype == np.int64 and got[4] == 1.5
    assert w.initial_value.shape.as_list() == [2, 3]


def test_root_scope_mapping(graph, ckpt):
    with tf.variable_scope("inner"):
        with tf.variable_scope("old"):
            w = tf.get_variable("w", [2, 3])
    tf.train.init_from_checkpoint(ckpt, {"/": "inner/"})
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))


def test_init_from_checkpoint_errors(graph, ckpt):
    w = tf.get_variable("w", [3, 2])
    with pytest.raises(ValueError, match="Tensor missing is not found in"):
        tf.train.init_from_checkpoint(ckpt, {"missing": "w"})
    with pytest.raises(ValueError, match=r"Shape of variable w:0 \(\(3, 2\)\) doesn't match"):
        tf.train.init_from_checkpoint(ckpt, {"old/w": w})
    with pytest.raises(ValueError, match="should map to scope only"):
        tf.train.init_from_checkpoint(ckpt, {"old/w": "nothing/"})


def test_warm_start_with_prev_names(graph, ckpt):
    with tf.variable_scope("old"):
        w = tf.get_variable("w", [2, 3])
    b2 = tf.get_variable("b2", [3])
    frozen = tf.get_variable("frozen", initializer=3.0, trainable=False)
    tf.train.warm_start(ckpt, vars_to_warm_start=".*",
                        var_name_to_prev_var_name={"b2": "old/b"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([w, b2, frozen])
    np.testing.assert_array_equal(got[0], np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(got[1], [7.0, 8.0, 9.0])
    assert got[2] == 3.0  # not trainable: not matched by the '.*' regex
    with pytest.raises(ValueError, match="var_name_to_prev_var_name that were not used"):
        tf.train.warm_start(ckpt, vars_to_warm_start=["old/"],
                            var_name_to_prev_var_name={"nope": "old/b"})
    with pytest.raises(ValueError, match="must be all `Variable` or all `str`"):
        tf.train.warm_start(ckpt, vars_to_warm_start=[w, "x"])


def test_vocab_info(graph, ckpt, tmp_path):
    vocab = str(tmp_path / "vocab.txt")
    with open(vocab, "w") as f:
        f.write("a\nb\n")
    info = tf.train.VocabInfo(vocab, 2, 0, vocab)
    assert info.old_vocab_size == -1 and info.axis == 0 and info.backup_initializer is None
    with pytest.raises(ValueError, match="The only supported values for the axis argument"):
        tf.train.VocabInfo("a", 2, 0, "b", axis=2)
    with tf.variable_scope("old"):
        w = tf.get_variable("w", [2, 3])
    tf.train.warm_start(ckpt, vars_to_warm_start=None, var_name_to_vocab_info={"old/w": info})
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))
    new_vocab = str(tmp_path / "new_vocab.txt")
    with open(new_vocab, "w") as f:
        f.write("b\na\n")
    changed = tf.train.VocabInfo(new_vocab, 2, 0, vocab)
    with pytest.raises(NotImplementedError, match="vocabulary remapping unsupported"):
        tf.train.warm_start(ckpt, var_name_to_vocab_info={"old/w": changed})


@pytest.mark.parametrize("select", [".*", ["s/v"]])
def test_a_partitioned_variable_is_warm_started_by_its_full_name(tmp_path, select):
    """Its shards are grouped under the name they are saved as (TF 2.15 gives these
    values for the same program); `w` is trainable, so only ".*" selects it."""
    part = tf.fixed_size_partitioner(2)
    with tf.Graph().as_default():
        with tf.variable_scope("s", partitioner=part):
            old = tf.get_variable("v", [4], initializer=tf.ones_initializer())
        tf.get_variable("w", [2], initializer=tf.ones_initializer())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([list(old)[0].assign([1., 2.]), list(old)[1].assign([3., 4.])])
            tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        with tf.variable_scope("s", partitioner=part):
            v = tf.get_variable("v", [4], initializer=tf.zeros_initializer())
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        tf.train.warm_start(str(tmp_path), vars_to_warm_start=select)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert [x.tolist() for x in sess.run(list(v))] == [[1., 2.], [3., 4.]]
            assert sess.run(w).tolist() == ([1., 1.] if select == ".*" else [0., 0.])
