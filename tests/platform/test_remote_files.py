"""Checkpoints, checkpoint state, meta graphs and TFRecord files on fsspec's memory://
filesystem: the library's file I/O goes through tf.gfile's file layer end to end."""
import uuid

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def url():
    root = "memory://remote-test-%s" % uuid.uuid4().hex
    tf.gfile.MakeDirs(root)
    yield root
    tf.gfile.DeleteRecursively(root)


def test_saver_saves_and_restores_on_memory(url):
    with tf.Graph().as_default():
        v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
        w = tf.Variable([b"a", b"bc"], name="w")
        inc = v.assign_add(tf.ones([2, 3]))
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths = []
            for step in (1, 2, 3):
                paths.append(saver.save(sess, url + "/model.ckpt", global_step=step))
                sess.run(inc)
            assert paths == [url + "/model.ckpt-%d" % s for s in (1, 2, 3)]
            assert sorted(tf.gfile.ListDirectory(url)) == ["checkpoint"] + sorted(
                "model.ckpt-%d.%s" % (s, ext) for s in (2, 3)
                for ext in ("data-00000-of-00001", "index", "meta"))
            assert not any(".tempstate" in n for n in tf.gfile.ListDirectory(url))
            assert tf.train.latest_checkpoint(url) == paths[2]
            state = tf.train.get_checkpoint_state(url)
            assert state.all_model_checkpoint_paths == paths[1:]
            assert tf.train.checkpoint_exists(paths[1])
            assert not tf.train.checkpoint_exists(paths[0])
            assert len(tf.train.get_checkpoint_mtimes(paths)) == 2
            sess.run([v.assign(tf.zeros([2, 3])), w.assign([b"", b""])])
            saver.restore(sess, paths[1])
            np.testing.assert_array_equal(sess.run(v), np.arange(6).reshape(2, 3) + 1)
            assert list(sess.run(w)) == [b"a", b"bc"]
    assert tf.train.load_variable(url, "v")[0, 0] == 2.0
    assert dict(tf.train.list_variables(paths[2])) == {"v": [2, 3], "w": [2]}
    with tf.Graph().as_default():
        restorer = tf.train.import_meta_graph(paths[2] + ".meta")
        restored = {x.op.name: x for x in tf.global_variables()}
        with tf.Session() as sess:
            restorer.restore(sess, paths[2])
            np.testing.assert_array_equal(sess.run(restored["v"]),
                                          np.arange(6).reshape(2, 3) + 2)


def test_restore_of_a_missing_checkpoint_on_memory(url):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                saver.restore(sess, url + "/nothing")
    assert tf.train.latest_checkpoint(url) is None


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tfrecord_write_and_read_on_memory(url, compression):
    path = url + "/data.tfrecord"
    records = [b"abc", b"", b"hello world", bytes(range(256))]
    options = tf.python_io.TFRecordOptions(compression) if compression else None
    with tf.python_io.TFRecordWriter(path, options) as w:
        for r in records:
            w.write(r)
    assert list(tf.python_io.tf_record_iterator(path, options)) == records
    if not compression:
        with tf.gfile.GFile(path, "rb") as f:
            assert len(f.read()) == sum(16 + len(r) for r in records)
    with tf.Graph().as_default():
        q = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
        reader = tf.TFRecordReader(options=options)
        key, value = reader.read(q)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = []
            try:
                while True:
                    got.append(sess.run([key, value]))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    assert [v for _, v in got] == records
    assert got[0][0] == (path + ":0").encode()


def test_missing_tfrecord_on_memory_is_not_found(url):
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.python_io.tf_record_iterator(url + "/missing.tfrecord"))


def test_read_write_and_matching_files_ops_on_memory(url, sess):
    write = tf.io.write_file(url + "/sub/a.txt", "hello")
    sess.run(write)
    sess.run(tf.io.write_file(url + "/sub/b.txt", b"\x00\x01"))
    assert sess.run(tf.io.read_file(url + "/sub/a.txt")) == b"hello"
    found = sess.run(tf.io.matching_files(url + "/sub/*.txt"))
    assert list(found) == [(url + "/sub/a.txt").encode(), (url + "/sub/b.txt").encode()]
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        sess.run(tf.io.read_file(url + "/sub/missing"))
