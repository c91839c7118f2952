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



# --- vocabulary remapping: the old embedding has rows for a, b, c, d; the new vocabulary
# is d, x, b, a, y. Expected values recorded from TF 2.21 (tf.compat.v1.train.warm_start).
OLD_EMB = np.arange(8, dtype=np.float32).reshape(4, 2)   # rows a, b, c, d


@pytest.fixture
def vocabs(tmp_path):
    """(old vocab path, new vocab path, checkpoint with emb = OLD_EMB)."""
    old, new = str(tmp_path / "old.txt"), str(tmp_path / "new.txt")
    with open(old, "w") as f:
        f.write("a\nb\nc\nd\n")
    with open(new, "w") as f:
        f.write("d\nx\nb\na\ny\n")
    with tf.Graph().as_default():
        tf.get_variable("emb", initializer=OLD_EMB)
        tf.get_variable("w", initializer=np.arange(12, dtype=np.float32).reshape(3, 4))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return old, new, saver.save(sess, str(tmp_path / "m"))


def _warm_started(ckpt, name, shape, info, parts=1, **kwargs):
    """The value of a new variable `name` of `shape` warm-started along `info`."""
    partitioner = tf.fixed_size_partitioner(parts) if parts > 1 else None
    v = tf.get_variable(name, shape=shape, initializer=tf.constant_initializer(-1.0),
                        partitioner=partitioner)
    tf.train.warm_start(ckpt, var_name_to_vocab_info={name: info}, **kwargs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(tf.concat(list(v), 0) if parts > 1 else v)


def test_vocab_rows_remapped_missing_rows_from_backup_default_zeros(graph, vocabs):
    old, new, ckpt = vocabs
    value = _warm_started(ckpt, "emb", [5, 2], tf.train.VocabInfo(new, 5, 0, old))
    np.testing.assert_array_equal(value, [[6, 7], [0, 0], [2, 3], [0, 1], [0, 0]])


def test_vocab_old_vocab_size_and_fewer_rows(graph, vocabs):
    old, new, ckpt = vocabs
    # only a, b of the old vocabulary count; only d, x, b, a of the new one
    value = _warm_started(ckpt, "emb", [4, 2], tf.train.VocabInfo(new, 5, 0, old, 2))
    np.testing.assert_array_equal(value, [[0, 0], [0, 0], [2, 3], [0, 1]])


@pytest.mark.parametrize("parts", [1, 3])
def test_vocab_oov_rows_and_partitions(graph, vocabs, parts):
    old, new, ckpt = vocabs
    info = tf.train.VocabInfo(new, 5, 2, old, backup_initializer=tf.ones_initializer())
    value = _warm_started(ckpt, "emb", [7, 2], info, parts=parts)
    np.testing.assert_array_equal(value, [[6, 7], [1, 1], [2, 3], [0, 1], [1, 1], [1, 1],
                                          [1, 1]])


def test_vocab_shard_of_oov_rows_only(graph, vocabs):
    old, new, ckpt = vocabs
    info = tf.train.VocabInfo(new, 5, 3, old, backup_initializer=tf.ones_initializer())
    value = _warm_started(ckpt, "emb", [8, 2], info, parts=4)
    np.testing.assert_array_equal(value, [[6, 7], [1, 1], [2, 3], [0, 1]] + [[1, 1]] * 4)


def test_vocab_columns_axis_1_with_oov_column(graph, vocabs):
    old, new, ckpt = vocabs
    info = tf.train.VocabInfo(new, 5, 1, old, backup_initializer=tf.ones_initializer(),
                              axis=1)
    value = _warm_started(ckpt, "w", [3, 6], info, parts=2)
    np.testing.assert_array_equal(value, [[3, 1, 1, 0, 1, 1], [7, 1, 5, 4, 1, 1],
                                          [11, 1, 9, 8, 1, 1]])


def test_vocab_with_prev_name_and_none_selector(graph, vocabs):
    old, new, ckpt = vocabs
    other = tf.get_variable("other", shape=[2], initializer=tf.constant_initializer(-1.0))
    value = _warm_started(ckpt, "new_emb", [5, 2], tf.train.VocabInfo(new, 5, 0, old),
                          vars_to_warm_start=None,
                          var_name_to_prev_var_name={"new_emb": "emb"})
    np.testing.assert_array_equal(value[0], [6, 7])
    with tf.Session() as sess:
        sess.run(other.initializer)
        np.testing.assert_array_equal(sess.run(other), [-1, -1])  # not selected


def test_vocab_unchanged_with_oov_bucket(graph, vocabs):
    old, _, ckpt = vocabs
    info = tf.train.VocabInfo(old, 4, 1, old, backup_initializer=tf.ones_initializer())
    value = _warm_started(ckpt, "emb", [5, 2], info)
    np.testing.assert_array_equal(value, np.concatenate([OLD_EMB, [[1, 1]]]))


def test_vocab_errors(graph, vocabs):
    old, new, ckpt = vocabs
    info = tf.train.VocabInfo(new, 5, 0, old)
    with pytest.raises(ValueError, match="exceed expected total row count"):
        tf.train.warm_start(ckpt, var_name_to_vocab_info={
            "a": info}, vars_to_warm_start=[tf.get_variable("a", [6, 2])])
    with pytest.raises(ValueError, match="Expected 2nd dim of shape"):
        tf.train.warm_start(ckpt, var_name_to_vocab_info={
            "b": tf.train.VocabInfo(new, 5, 0, old, axis=1)},
            vars_to_warm_start=[tf.get_variable("b", [2, 4])])
    with pytest.raises(ValueError, match="float32"):
        tf.train.warm_start(ckpt, var_name_to_vocab_info={"c": info}, vars_to_warm_start=[
            tf.get_variable("c", [5, 2], dtype=tf.float64)])
    with pytest.raises(ValueError, match="Invalid args"):
        tf.train.warm_start(ckpt, var_name_to_vocab_info={
            "d": tf.train.VocabInfo(new, 0, 0, old)},
            vars_to_warm_start=[tf.get_variable("d", [5, 2])])
    e = tf.get_variable("e", [5, 2])
    tf.train.warm_start(ckpt, var_name_to_vocab_info={"e": info}, vars_to_warm_start=[e],
                        var_name_to_prev_var_name={"e": "not_in_checkpoint"})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError):
            sess.run(e.initializer)


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
