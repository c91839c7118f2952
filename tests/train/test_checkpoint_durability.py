"""Checkpoints survive being moved or renamed, and overwriting one prefix again and
again is atomic across kill -9 (issue 18, "Nothing leaked, nothing lost")."""
import os
import random
import shutil
import signal
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import checkpoint_format as _fmt

FORMATS = {"tensorweave": {}, "tf_bundle": {"write_version": tf.train.SaverDef.V2}}
DATA = ".data-00000-of-00001"


def _model():
    """A graph with a float vector, an int64 matrix and a string variable, and a Saver."""
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.zeros(64, np.float32), name="v")
        w = tf.get_variable("scope/w", shape=[2, 3], dtype=tf.int64,
                            initializer=tf.zeros_initializer())
        step = tf.Variable(np.int64(0), name="step")
        s = tf.Variable(b"", name="s")
        k = tf.placeholder(tf.int64, [])
        assign = tf.group(v.assign(tf.fill([64], tf.cast(k, tf.float32))),
                          w.assign(tf.fill([2, 3], k)), step.assign(k),
                          s.assign(tf.strings.as_string(k)))
    return g, {"v": v, "w": w, "step": step, "s": s, "k": k, "assign": assign}


def _saved(tmp_path, fmt, name="model.ckpt", value=7):
    g, m = _model()
    with g.as_default():
        saver = tf.train.Saver(**FORMATS[fmt])
        with tf.Session(graph=g) as sess:
            sess.run(m["assign"], {m["k"]: value})
            prefix = saver.save(sess, str(tmp_path / name), write_meta_graph=False)
    return prefix


def _check_values(get, value):
    np.testing.assert_array_equal(get("v"), np.full(64, value, np.float32))
    np.testing.assert_array_equal(get("scope/w"), np.full([2, 3], value, np.int64))
    assert get("step") == value
    assert get("s") == str(value).encode()


def _restored(prefix):
    """The values Saver.restore puts into a fresh model's variables."""
    g, m = _model()
    with g.as_default():
        saver = tf.train.Saver()
        with tf.Session(graph=g) as sess:
            saver.restore(sess, prefix)
            vals = sess.run({"v": m["v"], "scope/w": m["w"], "step": m["step"], "s": m["s"]})
    return vals.__getitem__


def _move(prefix, new_prefix, copy=False):
    for path in [prefix + ".index", prefix + DATA]:
        (shutil.copy if copy else shutil.move)(path, new_prefix + path[len(prefix):])


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("how", ["other_directory", "other_prefix", "both", "copy"])
def test_a_moved_or_renamed_checkpoint_restores(tmp_path, fmt, how):
    prefix = _saved(tmp_path, fmt)
    (tmp_path / "elsewhere").mkdir()
    new = {"other_directory": str(tmp_path / "elsewhere" / "model.ckpt"),
           "other_prefix": str(tmp_path / "renamed-42"),
           "both": str(tmp_path / "elsewhere" / "renamed"),
           "copy": str(tmp_path / "elsewhere" / "copied.ckpt")}[how]
    _move(prefix, new, copy=how == "copy")
    _check_values(_restored(new), 7)
    reader = tf.train.load_checkpoint(new)
    _check_values(reader.get_tensor, 7)
    assert sorted(reader.get_variable_to_shape_map()) == ["s", "scope/w", "step", "v"]
    _check_values(tf.train.NewCheckpointReader(new).get_tensor, 7)
    if how == "copy":  # the original is untouched
        _check_values(tf.train.load_checkpoint(prefix).get_tensor, 7)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_missing_data_file_is_not_found(tmp_path, fmt):
    prefix = _saved(tmp_path, fmt)
    os.remove(prefix + DATA)
    reader = tf.train.load_checkpoint(prefix)  # the index alone opens, as in TF
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        reader.get_tensor("v")
    with pytest.raises(tf.errors.NotFoundError, match=r"model\.ckpt\.data-00000-of-00001"):
        _restored(prefix)


# --- atomic overwrite ---------------------------------------------------------------------
def _files(directory):
    return sorted(os.listdir(directory))


def _clean_listing(name="model.ckpt"):
    return sorted(["checkpoint", name + ".index", name + DATA])


def _consistent_step(prefix):
    """The step of the checkpoint at `prefix`, after checking that every variable holds
    the values of that one step (both readers)."""
    reader = tf.train.load_checkpoint(prefix)
    step = int(reader.get_tensor("step"))
    _check_values(reader.get_tensor, step)
    _check_values(_restored(prefix), step)
    return step


def _fork_saver(prefix, fmt, first_step, before_save=None):
    """Forks a child that saves steps first_step, first_step + 1, ... to `prefix` until
    killed (or, with `before_save`, calls it then saves once and exits)."""
    g, m = _model()
    with g.as_default():
        saver = tf.train.Saver(**FORMATS[fmt])
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the child: never returns into pytest
        with tf.Session(graph=g) as sess:
            step = first_step
            while True:
                sess.run(m["assign"], {m["k"]: step})
                if before_save is not None:
                    before_save()
                saver.save(sess, prefix, write_meta_graph=False)
                if before_save is not None:
                    code = 0
                    break
                step += 1
    finally:
        os._exit(code)


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _wait(pid, timeout=60.0):
    """The exit code of child `pid` (killed and failed if it runs past `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the saving child hung")
        time.sleep(0.005)


@needs_fork
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_save_killed_at_any_file_operation_keeps_a_checkpoint(tmp_path, fmt):
    """Kills (os._exit in the child) a save over an existing checkpoint before each of
    its file operations in turn: the prefix always restores the old or the new step,
    and the next save leaves exactly the checkpoint's files."""
    prefix = _saved(tmp_path, fmt, value=0)
    ops = ["link", "replace", "remove", "rename", "unlink"]
    step, n, outcomes = 0, 0, set()
    while True:
        def stop_at_nth_file_operation(n=n):
            count = [0]

            def wrap(fn):
                def op(*a, **k):
                    if count[0] == n:
                        os._exit(3)
                    count[0] += 1
                    return fn(*a, **k)
                return op
            for name in ops:
                setattr(os, name, wrap(getattr(os, name)))
        pid = _fork_saver(prefix, fmt, step + 1, stop_at_nth_file_operation)
        code = _wait(pid)
        assert code in (0, 3)
        got = _consistent_step(prefix)
        assert got in (step, step + 1)
        outcomes.add(got - step)
        if code == 0:  # the save ran to the end: every instant was tried
            assert got == step + 1
            break
        # the next save (here) removes what the killed one left, and keeps the values
        g, m = _model()
        with g.as_default():
            saver = tf.train.Saver(**FORMATS[fmt])
            with tf.Session(graph=g) as sess:
                sess.run(m["assign"], {m["k"]: got})
                saver.save(sess, prefix, write_meta_graph=False)
        assert _files(tmp_path) == _clean_listing()
        step, n = got, n + 1
    assert n >= 6 and outcomes == {0, 1}


@needs_fork
def test_saves_sigkilled_at_random_instants_keep_a_checkpoint(tmp_path):
    """A child saving to one prefix in a loop is SIGKILLed 40 times after a random
    0-300 ms: each time the prefix restores (the last step or an earlier one, all
    variables of one step), and the next save removes the killed saves' temporaries."""
    rng = random.Random(18)
    prefix = _saved(tmp_path, "tensorweave", value=0)
    step = 0
    for i in range(40):
        fmt = sorted(FORMATS)[i % 2]
        pid = _fork_saver(prefix, fmt, step + 1)
        time.sleep(rng.uniform(0, 0.3))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        got = _consistent_step(prefix)
        assert got >= step
        step = got
        if i % 2:  # every other time the next child saves over what this one left
            g, m = _model()
            with g.as_default():
                saver = tf.train.Saver(**FORMATS[fmt])
                with tf.Session(graph=g) as sess:
                    sess.run(m["assign"], {m["k"]: step})
                    saver.save(sess, prefix, write_meta_graph=False)
            assert _files(tmp_path) == _clean_listing()
    assert step > 40  # the children did save


def test_backup_of_an_interrupted_save_is_read_until_the_new_index_is_in(tmp_path):
    """The states between a save's renames, made by hand: the prefix reads the backup
    while its index is the backup's, the prefix itself once a new index replaced it."""
    prefix = _saved(tmp_path, "tensorweave", value=1)
    backup = _fmt.backup_prefix(prefix)
    os.link(prefix + DATA, backup + DATA)
    os.link(prefix + ".index", backup + ".index")
    other = _saved(tmp_path, "tensorweave", name="other", value=2)
    os.replace(other + DATA, prefix + DATA)  # the new data is in, the index is old
    assert _fmt.readable_prefix(prefix) == backup
    _check_values(tf.train.load_checkpoint(prefix).get_tensor, 1)
    _check_values(_restored(prefix), 1)
    os.replace(other + ".index", prefix + ".index")  # the new index is in
    assert _fmt.readable_prefix(prefix) == prefix
    _check_values(tf.train.load_checkpoint(prefix).get_tensor, 2)
    tf.train.remove_checkpoint(prefix)  # also drops the stale backup
    assert _files(tmp_path) == ["checkpoint"]
