"""Iterator checkpoints (data/iterator_checkpoint.py): make_saveable_from_iterator puts an
iterator's position in a Saver's checkpoints; a restore, in the same session, a new
session, a new graph or a new process, goes on with exactly the elements the saved pass
would have given, random transformations (unseeded ones too) included."""
import json
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf

AUTOTUNE = tf.data.experimental.AUTOTUNE


# --- helpers -------------------------------------------------------------------------------
def _plain(x):
    """An element as nested lists and Python scalars (comparable with ==)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in sorted(x.items())}
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    if hasattr(x, "indices") and hasattr(x, "dense_shape"):  # a SparseTensorValue
        return [_plain(x.indices), _plain(x.values), _plain(x.dense_shape)]
    a = np.asarray(x)
    return a.tolist() if a.dtype != object else [
        v.decode() if isinstance(v, bytes) else v for v in a.reshape(-1).tolist()]


def _read(sess, nxt, limit=None):
    out = []
    try:
        while limit is None or len(out) < limit:
            out.append(_plain(sess.run(nxt)))
    except tf.errors.OutOfRangeError:
        pass
    return out


class _Pipeline:
    """A graph holding `make()`'s dataset read by an iterator, with a Saver of its
    position (and of a variable)."""

    def __init__(self, make, one_shot=False, policy=None, with_variable=True):
        self.graph = tf.Graph()
        with self.graph.as_default():
            ds = make()
            self.iterator = tf.data.make_one_shot_iterator(ds) if one_shot else \
                tf.data.make_initializable_iterator(ds)
            self.next = self.iterator.get_next()
            self.saveable = tf.data.experimental.make_saveable_from_iterator(
                self.iterator, policy)
            tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, self.saveable)
            if with_variable:
                self.var = tf.Variable(0, dtype=tf.int64, name="step")
                self.bump = self.var.assign_add(1)
            self.saver = tf.train.Saver()
        self.one_shot = one_shot

    def session(self, initialize=True):
        sess = tf.Session(graph=self.graph)
        if initialize:
            with self.graph.as_default():
                sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            if not self.one_shot:
                sess.run(self.iterator.initializer)
        return sess


def _check_round_trip(tmp_path, make, k, one_shot=False, limit=400):
    """Reads k elements, saves, reads the rest (at most `limit`); then a new session, a
    new graph and the same session after a rewind each restore and read the same rest.
    Returns (the first k, the rest)."""
    prefix = str(tmp_path / "ckpt")
    p = _Pipeline(make, one_shot)
    with p.session() as sess:
        first = _read(sess, p.next, k)
        assert len(first) == k
        path = p.saver.save(sess, prefix)
        rest = _read(sess, p.next, limit)
        # the same session: a restore rewinds to the saved position
        p.saver.restore(sess, path)
        assert _read(sess, p.next, limit) == rest
    with p.session() as sess:  # a new session of the same graph
        p.saver.restore(sess, path)
        assert _read(sess, p.next, limit) == rest
    q = _Pipeline(make, one_shot)  # the same program, built again
    with q.session() as sess:
        q.saver.restore(sess, path)
        assert _read(sess, q.next, limit) == rest
    return first, rest


# --- pipelines -----------------------------------------------------------------------------
def _write_files(tmp_path):
    records = []
    for f in range(3):
        path = str(tmp_path / ("data%d.tfrecord" % f))
        with tf.io.TFRecordWriter(path) as w:
            for i in range(7):
                w.write(b"rec-%d-%d" % (f, i))
        records.append(path)
    lines = []
    for f in range(3):
        path = str(tmp_path / ("text%d.txt" % f))
        with open(path, "w") as fh:
            fh.write("".join("line-%d-%d\n" % (f, i) for i in range(6)))
        lines.append(path)
    fixed = str(tmp_path / "fixed.bin")
    with open(fixed, "wb") as fh:
        fh.write(b"HDR" + b"".join(b"%04d" % i for i in range(15)) + b"FT")
    return records, lines, fixed, str(tmp_path / "cache")


def _features():
    return (np.arange(30, dtype=np.float32).reshape(15, 2), np.arange(15, dtype=np.int64))


PIPELINES = {
    "from_tensor_slices": (lambda f: tf.data.Dataset.from_tensor_slices(_features()), 6),
    "from_tensor_slices_dict": (lambda f: tf.data.Dataset.from_tensor_slices(
        {"a": np.arange(10), "b": np.arange(10) * 2.0}), 4),
    "from_tensors": (lambda f: tf.data.Dataset.from_tensors([1, 2, 3]).repeat(4), 2),
    "range": (lambda f: tf.data.Dataset.range(3, 40, 3), 5),
    "tfrecord": (lambda f: tf.data.TFRecordDataset(f[0]), 9),
    "tfrecord_parallel_reads": (lambda f: tf.data.TFRecordDataset(
        f[0], num_parallel_reads=2), 8),
    "text_line": (lambda f: tf.data.TextLineDataset(f[1]), 7),
    "fixed_length": (lambda f: tf.data.FixedLengthRecordDataset(
        f[2], 4, header_bytes=3, footer_bytes=2), 5),
    "list_files_seeded": (lambda f: tf.data.Dataset.list_files(
        f[1], seed=3).flat_map(tf.data.TextLineDataset), 8),
    "list_files_unseeded": (lambda f: tf.data.Dataset.list_files(f[1]).flat_map(
        tf.data.TextLineDataset).repeat(2), 8),
    "map": (lambda f: tf.data.Dataset.range(20).map(lambda x: x * x), 6),
    "map_parallel": (lambda f: tf.data.Dataset.range(30).map(
        lambda x: (x, tf.cast(x, tf.float32) / 2), num_parallel_calls=3), 10),
    "map_autotune": (lambda f: tf.data.Dataset.range(30).map(
        lambda x: x + 1, num_parallel_calls=AUTOTUNE).batch(4), 3),
    "filter": (lambda f: tf.data.Dataset.range(40).filter(lambda x: x % 3 > 0), 9),
    "batch": (lambda f: tf.data.Dataset.range(23).batch(4), 2),
    "batch_drop_remainder": (lambda f: tf.data.Dataset.range(23).batch(
        4, drop_remainder=True).repeat(2), 7),
    "batch_of_slices": (lambda f: tf.data.Dataset.from_tensor_slices(
        np.arange(50).reshape(25, 2)).repeat(3).batch(7), 4),
    "padded_batch": (lambda f: tf.data.Dataset.range(1, 12).map(
        lambda x: tf.range(x)).padded_batch(3, padded_shapes=[None]), 2),
    "repeat": (lambda f: tf.data.Dataset.range(5).repeat(3), 7),
    "take": (lambda f: tf.data.Dataset.range(100).take(13), 4),
    "skip": (lambda f: tf.data.Dataset.range(30).skip(11), 4),
    "shuffle_seeded": (lambda f: tf.data.Dataset.range(30).shuffle(10, seed=7).repeat(2), 25),
    "shuffle_no_reshuffle": (lambda f: tf.data.Dataset.range(20).shuffle(
        8, reshuffle_each_iteration=False).repeat(3), 27),
    "shuffle_and_repeat": (lambda f: tf.data.Dataset.range(12).apply(
        tf.data.experimental.shuffle_and_repeat(5, 3)), 17),
    "prefetch": (lambda f: tf.data.Dataset.range(30).map(lambda x: x * 2).prefetch(4), 11),
    "cache": (lambda f: tf.data.Dataset.range(10).shuffle(10).cache().repeat(3), 14),
    "cache_then_shuffle": (lambda f: tf.data.Dataset.range(10).cache().shuffle(5).repeat(2),
                           6),
    "zip": (lambda f: tf.data.Dataset.zip((tf.data.Dataset.range(10).shuffle(4),
                                           tf.data.Dataset.range(100, 120))), 6),
    "concatenate": (lambda f: tf.data.Dataset.range(5).concatenate(
        tf.data.Dataset.range(10, 20).shuffle(6)), 8),
    "interleave": (lambda f: tf.data.Dataset.range(5).interleave(
        lambda x: tf.data.Dataset.range(x * 10, x * 10 + 4), cycle_length=2, block_length=2),
        7),
    "interleave_parallel": (lambda f: tf.data.Dataset.range(6).interleave(
        lambda x: tf.data.Dataset.range(x * 10, x * 10 + 5).shuffle(5), cycle_length=3,
        num_parallel_calls=3), 11),
    "flat_map_unseeded_shuffle": (lambda f: tf.data.Dataset.range(5).flat_map(
        lambda x: tf.data.Dataset.range(x * 10, x * 10 + 6).shuffle(6)).repeat(2), 9),
    "unbatch": (lambda f: tf.data.Dataset.range(20).batch(6).unbatch(), 8),
    "enumerate": (lambda f: tf.data.Dataset.range(50, 60).shuffle(4).enumerate(), 4),
    "sample_from_datasets": (lambda f: tf.data.experimental.sample_from_datasets(
        [tf.data.Dataset.range(10), tf.data.Dataset.range(100, 110)]), 7),
    "random_dataset": (lambda f: tf.data.experimental.RandomDataset().take(20), 6),
    "rejection_resample": (lambda f: tf.data.Dataset.range(40).apply(
        tf.data.experimental.rejection_resample(lambda x: tf.cast(x % 2, tf.int32),
                                                [0.8, 0.2], [0.5, 0.5])), 5),
    "group_by_window": (lambda f: tf.data.Dataset.range(20).apply(
        tf.data.experimental.group_by_window(lambda x: x % 2, lambda k, w: w.batch(3), 3)), 3),
    "window": (lambda f: tf.data.Dataset.range(12).window(3, 2).flat_map(
        lambda w: w.batch(3)), 2),
    "shard": (lambda f: tf.data.Dataset.range(40).shard(3, 1).batch(2), 3),
    "file_cache": (lambda f: tf.data.Dataset.range(12).shuffle(12).cache(f[3]).repeat(3),
                   16),
    "training": (lambda f: tf.data.TFRecordDataset(f[0]).shuffle(8).repeat(2).map(
        lambda r: tf.strings.substr(r, 4, 3), num_parallel_calls=2).batch(5).prefetch(2),
        3),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_a_restore_goes_on_with_the_same_elements(tmp_path, name):
    make, k = PIPELINES[name]
    files = _write_files(tmp_path)
    first, rest = _check_round_trip(tmp_path, lambda: make(files), k)
    assert rest, "the position should be inside the dataset"


def test_one_shot_iterators_restore_without_initializer(tmp_path):
    first, rest = _check_round_trip(
        tmp_path, lambda: tf.data.Dataset.range(25).shuffle(25).map(lambda x: x + 1), 9,
        one_shot=True)
    assert sorted(v for v in first + rest) == list(range(1, 26))


def test_an_unseeded_shuffle_continues_its_permutation(tmp_path):
    first, rest = _check_round_trip(
        tmp_path, lambda: tf.data.Dataset.range(50).shuffle(20).repeat(3), 30)
    whole = first + rest
    assert len(whole) == 150
    for epoch in range(3):  # every epoch a permutation: nothing lost or repeated
        assert sorted(whole[epoch * 50:(epoch + 1) * 50]) == list(range(50))
    assert whole[:50] != whole[50:100] != whole[100:]


def test_a_restore_in_a_new_process_continues(tmp_path):
    script = textwrap.dedent("""
        import json, sys
        import tensorweave as tf
        ds = (tf.data.Dataset.range(40).shuffle(16).map(lambda x: x * 3,
              num_parallel_calls=2).batch(3).prefetch(2))
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(it)])
        out = []
        with tf.Session() as sess:
            sess.run(it.initializer)
            if sys.argv[1] == "save":
                out = [sess.run(nxt).tolist() for _ in range(4)]
                saver.save(sess, sys.argv[2])
            else:
                saver.restore(sess, sys.argv[2])
            try:
                while True:
                    out.append(sess.run(nxt).tolist())
            except tf.errors.OutOfRangeError:
                pass
        print(json.dumps(out))
    """)
    path = tmp_path / "prog.py"
    path.write_text(script)
    prefix = str(tmp_path / "ckpt")

    def run(*args):
        done = subprocess.run([sys.executable, str(path)] + list(args), check=True,
                              capture_output=True, text=True, timeout=120)
        return json.loads(done.stdout.strip().splitlines()[-1])
    saved = run("save", prefix)
    restored = run("restore", prefix)
    assert restored == saved[4:]
    assert sorted(v for batch in saved for v in batch) == [3 * i for i in range(40)]


def test_variables_and_the_iterator_are_saved_together(tmp_path):
    p = _Pipeline(lambda: tf.data.Dataset.range(10))
    with p.session() as sess:
        for _ in range(3):
            sess.run([p.next, p.bump])
        path = p.saver.save(sess, str(tmp_path / "m"), global_step=3)
    assert path.endswith("m-3")
    assert dict(tf.train.list_variables(path)) == {"IteratorV2:0_STATE": [], "step": []}
    with p.session() as sess:
        sess.run(p.bump)
        p.saver.restore(sess, path)
        assert sess.run(p.var) == 3
        assert sess.run(p.next) == 3


def test_checkpoint_keys_are_tfs(tmp_path):
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(10)
        its = [tf.data.make_initializable_iterator(ds),
               tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes)]
        with tf.name_scope("scope"):
            its.append(tf.data.make_one_shot_iterator(ds))
        saveables = [tf.data.experimental.make_saveable_from_iterator(it) for it in its]
        assert [s.name for s in saveables] == ["IteratorV2:0", "IteratorV2_1:0",
                                               "scope/OneShotIterator:0"]
        assert [s.specs[0].name for s in saveables] == [
            "IteratorV2:0_STATE", "IteratorV2_1:0_STATE", "scope/OneShotIterator:0_STATE"]
        # in a var_list, a list or a dict (whose keys do not rename it, as in TF)
        saver = tf.train.Saver({"ignored": saveables[0], "also": saveables[2]})
        with tf.Session() as sess:
            sess.run(its[0].initializer)
            path = saver.save(sess, str(tmp_path / "k"))
        assert dict(tf.train.list_variables(path)) == {
            "IteratorV2:0_STATE": [], "scope/OneShotIterator:0_STATE": []}
        with pytest.raises(TypeError):
            tf.train.Saver([its[0]])  # the iterator itself is not a saveable (TF neither)


def test_a_from_structure_iterator_restores_into_its_initialized_dataset(tmp_path):
    with tf.Graph().as_default():
        train = tf.data.Dataset.range(10).shuffle(10)
        valid = tf.data.Dataset.range(100, 104)
        it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
        init_train, init_valid = it.make_initializer(train), it.make_initializer(valid)
        nxt = it.get_next()
        saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(it)])
        with tf.Session() as sess:
            sess.run(init_train)
            sess.run(nxt)
            path = saver.save(sess, str(tmp_path / "s"))
            rest = _read(sess, nxt)
            sess.run(init_valid)
            assert sess.run(nxt) == 100
            with pytest.raises(tf.errors.NotFoundError, match="RangeDataset"):
                saver.restore(sess, path)  # another pipeline
            sess.run(init_train)
            saver.restore(sess, path)
            assert _read(sess, nxt) == rest


def test_a_pass_that_ended_restores_ended(tmp_path):
    p = _Pipeline(lambda: tf.data.Dataset.range(3))
    with p.session() as sess:
        assert _read(sess, p.next) == [0, 1, 2]
        path = p.saver.save(sess, str(tmp_path / "e"))
    with p.session() as sess:
        p.saver.restore(sess, path)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(p.next)
        sess.run(p.iterator.initializer)  # initializing starts a new pass as always
        assert sess.run(p.next) == 0


def test_a_saved_state_at_the_end_of_the_elements(tmp_path):
    p = _Pipeline(lambda: tf.data.Dataset.range(4).batch(2))
    with p.session() as sess:
        assert len(_read(sess, p.next, 2)) == 2
        path = p.saver.save(sess, str(tmp_path / "end"))
    with p.session() as sess:
        p.saver.restore(sess, path)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(p.next)


def test_an_element_error_after_the_position_comes_with_get_next(tmp_path):
    def make():
        return tf.data.Dataset.from_tensor_slices([1.0, 2.0, 0.0, 4.0]).map(
            lambda x: tf.debugging.check_numerics(1.0 / x, "inf"))
    p = _Pipeline(make)
    with p.session() as sess:
        assert _read(sess, p.next, 2) == [1.0, 0.5]
        path = p.saver.save(sess, str(tmp_path / "err"))
    with p.session() as sess:
        p.saver.restore(sess, path)  # the restore itself succeeds
        with pytest.raises(tf.errors.InvalidArgumentError, match="inf"):
            sess.run(p.next)


# --- errors --------------------------------------------------------------------------------
def test_a_restore_initializes_an_initializable_iterator(tmp_path):
    # TF1's behaviour (its checkpoints held the dataset's graph); TF 2.x raises instead
    p = _Pipeline(lambda: tf.data.Dataset.range(20).shuffle(20).map(lambda x: x + 1),
                  with_variable=False)
    with p.session() as sess:
        _read(sess, p.next, 6)
        path = p.saver.save(sess, str(tmp_path / "u"))
        rest = _read(sess, p.next)
    with p.session(initialize=False) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Save\\(\\) failed because the iterator has not been"):
            p.saver.save(sess, str(tmp_path / "u2"))
        p.saver.restore(sess, path)
        assert _read(sess, p.next) == rest


def test_restoring_an_iterator_without_a_known_dataset_fails_as_in_tf(tmp_path):
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(5)
        it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes)
        init = it.make_initializer(ds)
        nxt = it.get_next()
        names = tf.placeholder(tf.string, [None])
        fed = tf.data.make_initializable_iterator(tf.data.TextLineDataset(names))
        saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(it),
                                tf.data.experimental.make_saveable_from_iterator(fed)])
        text = tmp_path / "t.txt"
        text.write_text("a\nb\n")
        with tf.Session() as sess:
            sess.run([init, fed.initializer], {names: [str(text)]})
            sess.run(nxt)
            path = saver.save(sess, str(tmp_path / "n"))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match="has not been initialized"):
                saver.restore(sess, path)
            sess.run(init)
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match="with its feeds"):
                saver.restore(sess, path)  # the other one's initializer needs a feed
            sess.run(fed.initializer, {names: [str(text)]})
            saver.restore(sess, path)
            assert sess.run(nxt) == 1


def test_a_checkpoint_of_another_pipeline_is_refused(tmp_path):
    p = _Pipeline(lambda: tf.data.Dataset.range(10).map(lambda x: x * 2))
    with p.session() as sess:
        sess.run(p.next)
        path = p.saver.save(sess, str(tmp_path / "other"))
    for make in (lambda: tf.data.Dataset.range(10).batch(2),
                 lambda: tf.data.Dataset.range(10).map(lambda x: tf.cast(x, tf.float32))):
        q = _Pipeline(make)
        with q.session() as sess:
            with pytest.raises(tf.errors.NotFoundError,
                               match="dataset definition has not changed"):
                q.saver.restore(sess, path)
    # a checkpoint without the iterator's key: the Saver's NotFoundError
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="only")
        saver = tf.train.Saver([v])
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "vars"))
    q = _Pipeline(lambda: tf.data.Dataset.range(3), with_variable=False)
    with q.session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="IteratorV2:0_STATE"):
            q.saver.restore(sess, path)


def test_a_tensor_that_is_not_an_iterator_state_is_data_loss(tmp_path):
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(tf.data.Dataset.range(3))
        s = tf.data.experimental.make_saveable_from_iterator(it)
        restore = s.restore([tf.constant("not a state")], None)
        with tf.Session() as sess:
            sess.run(it.initializer)
            with pytest.raises(tf.errors.DataLossError, match="not a tensorweave iterator"):
                sess.run(restore)


def test_invalid_policies_are_value_errors():
    with tf.Graph().as_default():
        it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(3))
        for bad in ("bogus", 3, "WARN"):
            with pytest.raises(ValueError, match="Invalid `ExternalStatePolicy.`"):
                tf.data.experimental.make_saveable_from_iterator(it, bad)
        policy = tf.data.experimental.ExternalStatePolicy.IGNORE
        assert tf.data.experimental.make_saveable_from_iterator(it, policy).name == \
            "OneShotIterator:0"


# --- external state ------------------------------------------------------------------------
def _random_map():
    return tf.data.Dataset.range(20).map(
        lambda x: x + tf.cast(tf.random_uniform([], 0, 100, tf.int32), tf.int64))


def test_stateful_functions_fail_by_default_as_in_tf(tmp_path):
    p = _Pipeline(_random_map)
    with p.session() as sess:
        sess.run(p.next)
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="RandomUniformInt is stateful"):
            p.saver.save(sess, str(tmp_path / "f"))


@pytest.mark.parametrize("make,op", [
    (lambda: tf.data.Dataset.range(9).filter(lambda x: tf.random_uniform([]) < 0.5),
     "RandomUniform"),
    (lambda: tf.data.Dataset.range(9).map(lambda x: tf.py_func(lambda a: a, [x], tf.int64)),
     "PyFunc"),
    (lambda: tf.data.Dataset.from_generator(lambda: iter(range(5)), tf.int64), "PyFunc"),
    (lambda: tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.range(4).map(lambda y: y + tf.cast(
            tf.random_uniform([], 0, 9, tf.int32), tf.int64))), "RandomUniformInt"),
])
def test_external_states_found(tmp_path, make, op):
    p = _Pipeline(make)
    with p.session() as sess:
        sess.run(p.next)
        with pytest.raises(tf.errors.FailedPreconditionError, match=op + " is stateful"):
            p.saver.save(sess, str(tmp_path / "x"))


def test_warn_and_ignore_save_the_position(tmp_path, caplog):
    for policy, warned in (("warn", True), ("ignore", False),
                           (tf.data.experimental.ExternalStatePolicy.WARN, True)):
        p = _Pipeline(_random_map, policy=policy)
        with p.session() as sess:
            _read(sess, p.next, 5)
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="tensorflow"):
                path = p.saver.save(sess, str(tmp_path / "w"))
            assert any("external state" in r.getMessage() for r in caplog.records) == warned
            assert len(_read(sess, p.next)) == 15
        with p.session() as sess:
            p.saver.restore(sess, path)
            assert len(_read(sess, p.next)) == 15  # the position is restored


def test_state_tf_allows_in_functions(tmp_path):
    def make():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([1, 2], tf.int64), tf.constant([10, 20], tf.int64)), -1)
        ref = tf.Variable(5, dtype=tf.int64, name="ref")  # a TF1 reference variable
        return tf.data.Dataset.range(6).map(lambda x: table.lookup(x) + ref + tf.cast(
            tf.random.stateless_uniform([], seed=[1, 2], maxval=3, dtype=tf.int32),
            tf.int64))
    p = _Pipeline(make)
    with p.session() as sess:
        first = _read(sess, p.next, 2)
        path = p.saver.save(sess, str(tmp_path / "ok"))
        rest = _read(sess, p.next)
    assert len(first + rest) == 6
    with p.session() as sess:
        p.saver.restore(sess, path)
        assert _read(sess, p.next) == rest


def test_a_resource_variable_read_is_external_state(tmp_path):
    def make():
        v = tf.Variable(1, dtype=tf.int64, use_resource=True, name="res")
        return tf.data.Dataset.range(5).map(lambda x: x + v)
    p = _Pipeline(make)
    with p.session() as sess:
        sess.run(p.next)
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="ReadVariableOp is stateful"):
            p.saver.save(sess, str(tmp_path / "r"))


def test_the_replay_does_not_rerun_a_map_before_the_position(tmp_path):
    calls = []

    def note(x):
        calls.append(int(x))
        return x
    make = lambda: tf.data.Dataset.range(30).map(  # noqa: E731
        lambda x: tf.py_func(note, [x], tf.int64, stateful=False)).batch(4)
    p = _Pipeline(make)
    with p.session() as sess:
        _read(sess, p.next, 5)
        path = p.saver.save(sess, str(tmp_path / "fast"))
    del calls[:]
    with p.session() as sess:
        p.saver.restore(sess, path)
        assert min(calls) == 20  # the 20 elements of the 5 batches read: skipped
        assert _read(sess, p.next)[0] == [20, 21, 22, 23]


def test_the_pass_is_deterministic_in_the_deterministic_mode():
    config = tf.ConfigProto(experimental={"deterministic": True})
    orders = []
    for _ in range(2):
        with tf.Graph().as_default():
            nxt = tf.data.make_one_shot_iterator(
                tf.data.Dataset.range(20).shuffle(20)).get_next()
            with tf.Session(config=config) as sess:
                orders.append(_read(sess, nxt))
    assert orders[0] == orders[1] and orders[0] != list(range(20))


def test_the_checkpoint_is_json_not_pickle(tmp_path):
    p = _Pipeline(lambda: tf.data.Dataset.range(10).shuffle(5), with_variable=False)
    with p.session() as sess:
        _read(sess, p.next, 3)
        path = p.saver.save(sess, str(tmp_path / "j"))
    state = json.loads(tf.train.load_variable(path, "IteratorV2:0_STATE"))
    assert state["produced"] == 3 and state["ended"] is False
    assert state["pipeline"] == "ShuffleDataset(RangeDataset)"
    assert state["element"] == ["int64[]"]
    assert os.path.exists(path + ".index")


@pytest.mark.parametrize("kwargs", [{"sharded": True}, {"write_version": 2}])
def test_other_saver_forms(tmp_path, kwargs):
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(tf.data.Dataset.range(20).shuffle(20))
        nxt = it.get_next()
        saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(it)],
                               **kwargs)
        with tf.Session() as sess:
            sess.run(it.initializer)
            _read(sess, nxt, 5)
            path = saver.save(sess, str(tmp_path / "o"))
            rest = _read(sess, nxt)
        with tf.Session() as sess:
            sess.run(it.initializer)
            saver.restore(sess, path)
            assert _read(sess, nxt) == rest


def test_monitored_training_session_restores_the_position(tmp_path):
    def run(steps, checkpoint_dir):
        with tf.Graph().as_default():
            it = tf.data.make_one_shot_iterator(
                tf.data.Dataset.range(30).shuffle(30).batch(2))
            nxt = it.get_next()
            tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                                 tf.data.experimental.make_saveable_from_iterator(it))
            train = tf.assign_add(tf.train.get_or_create_global_step(), 1)
            with tf.train.MonitoredTrainingSession(
                    checkpoint_dir=checkpoint_dir, save_checkpoint_steps=100,
                    log_step_count_steps=None) as sess:  # saves when it ends
                return [_plain(sess.run([nxt, train])[0]) for _ in range(steps)]
    first = run(4, str(tmp_path))
    then = run(5, str(tmp_path))  # restores the iterator with the global step
    read = [v for pair in first + then for v in pair]
    assert len(read) == 18 and len(set(read)) == 18  # one epoch: nothing read twice
