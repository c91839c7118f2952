"""Graphs with variables are freed once the user drops them and their sessions (issue
18): no module-level map keyed by graph (or op) may hold values that reach their key."""
import gc
import tracemalloc
import weakref

import numpy as np

import tensorweave as tf


def _graph_with_variables(i):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.full(256, float(i), np.float32), name="v")
        w = tf.get_variable("w", shape=[256], initializer=tf.ones_initializer())
        with tf.variable_scope("layer"):
            u = tf.get_variable("u", shape=[256, 4], dtype=tf.float64)
        # an initial value that reads another variable (the handle-to-variable map)
        x = tf.Variable(v.initialized_value() * 2.0, name="x")
        y = tf.reduce_sum(v * w + x)
        z = tf.reduce_sum(u)
        with tf.variable_creator_scope(lambda next_creator, **kw: next_creator(**kw)):
            tf.Variable(1.0, name="created")
        py = tf.py_func(lambda a: a + 1, [y], tf.float32)
        if i % 3 == 0:
            with tf.Session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                assert np.ravel(sess.run(py)).tolist() == [768.0 * i + 1]
                assert np.isfinite(sess.run(z))
                handle = sess.run(tf.get_session_handle(y))  # the per-graph readers
                assert handle.eval() == 768.0 * i
                handle.delete()
        elif i % 3 == 1:  # a session left open and dropped
            sess = tf.Session(graph=g)
            sess.run(tf.global_variables_initializer())
            assert sess.run(y) == 768.0 * i
    return weakref.ref(g)


def test_dropped_graphs_with_variables_are_freed():
    refs = [_graph_with_variables(i) for i in range(200)]
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive == 0, "%d of 200 graphs are still alive" % alive


def test_building_and_dropping_graphs_does_not_grow_memory():
    for i in range(20):  # warm up caches (kernel tables, compiled code)
        _graph_with_variables(i)
    gc.collect()
    tracemalloc.start()
    try:
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        for i in range(100):
            _graph_with_variables(i)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    # one leaked graph of this size is >100 KB; 100 leaked would be >10 MB
    assert grown < 100_000, "memory grew by %d bytes over 100 dropped graphs" % grown
